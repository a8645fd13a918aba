//! `railyard rank`: one host of a live job (`railyard lab collective`),
//! run inside the host's network namespace.
//!
//! It opens an AF_PACKET port per NIC, so the RoCEv2 frames bypass the
//! kernel's stack as they would with an RDMA NIC; binds UDP port 4791 (and
//! never reads it) so the kernel does not answer RoCEv2 frames with ICMP
//! port-unreachable; resolves each NIC's gateway with an ARP request on the
//! port; waits for the job's common start time; then drives a
//! [`railyard_roce::host::Host`] with a live clock (nanoseconds since the
//! start): every received frame in, every frame the NICs may send out, and
//! a short `poll(2)` on the sockets when nothing is due for a while, so the
//! ranks share the cores with the switches.
//!
//! When its part is done it prints [`DONE_LINE`] on stdout and goes on
//! answering (ACKs for its peers' retransmissions, frames still paced out):
//! only the driver knows when every peer is done too, and tells it with
//! SIGTERM. A rank that left on its own after a quiet spell would strand a
//! peer whose last ACK it still owed whenever the host descheduled it for
//! longer than that spell (seen on loaded 2-core machines). On SIGTERM,
//! SIGINT or `--timeout` it prints the host's outcome as JSON on stdout.

use std::io::Write;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use railyard_dataplane::packet::{free_burst, Burst, Pool, BURST_SIZE};
use railyard_dataplane::port::afpacket::{AfPacketOptions, AfPacketPort, Receive};
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::arp::{self, ArpRepr, Operation};
use railyard_roce::host::{Host, HostOutcome};
use railyard_roce::{MacAddr, Nanos};

use crate::lab::collective::{LiveJob, DONE_LINE};

/// `railyard rank`: the arguments the lab command passes.
#[derive(Debug, Clone, clap::Args)]
pub struct RankArgs {
    /// The job (`STATE_DIR/NAME/job.json`, written by `lab collective`).
    #[arg(long)]
    pub job: PathBuf,
    /// Which host of the job this is (index in topology order).
    #[arg(long)]
    pub host: usize,
}

/// The RoCEv2 UDP port.
const ROCEV2_PORT: u16 = 4791;
/// Nothing due sooner than this: block in poll(2) rather than spin.
const SPIN_NS: Nanos = 50_000;
/// The longest a rank blocks at once (frames may arrive meanwhile).
const MAX_BLOCK_NS: Nanos = 1_000_000;
/// How often an unanswered ARP request is sent again.
const ARP_RETRY: Duration = Duration::from_millis(200);
/// Largest frame a NIC writes.
const FRAME_BUF: usize = 9216 + 64;

/// An ARP request from `mac`/`ip` for `target`, as a minimum-size
/// Ethernet frame (broadcast).
pub fn arp_request(mac: MacAddr, ip: Ipv4Addr, target: Ipv4Addr) -> [u8; 60] {
    let mut f = [0u8; 60];
    f[0..6].copy_from_slice(&MacAddr::BROADCAST.octets());
    f[6..12].copy_from_slice(&mac.octets());
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    let repr = ArpRepr {
        operation: Operation::Request,
        source_hw: mac,
        source_ip: ip,
        target_hw: MacAddr::ZERO,
        target_ip: target,
    };
    repr.emit(&mut arp::Packet::new_unchecked(
        &mut f[14..14 + arp::PACKET_LEN],
    ));
    f
}

/// The MAC `gateway` announces in `frame`, if `frame` is an ARP reply (or
/// request) from it; anything else is `None`.
pub fn arp_answer(frame: &[u8], gateway: Ipv4Addr) -> Option<MacAddr> {
    let ethertype = u16::from_be_bytes([*frame.get(12)?, *frame.get(13)?]);
    if ethertype != 0x0806 {
        return None;
    }
    let pkt = arp::Packet::new_checked(frame.get(14..)?).ok()?;
    let repr = ArpRepr::parse(&pkt).ok()?;
    (repr.source_ip == gateway
        && matches!(repr.operation, Operation::Reply | Operation::Request)
        && !repr.source_hw.is_multicast()
        && repr.source_hw != MacAddr::ZERO)
        .then_some(repr.source_hw)
}

fn open_port(ifname: &str) -> Result<AfPacketPort, String> {
    AfPacketPort::open(
        ifname,
        AfPacketOptions {
            // Each frame as soon as it lands, waking the rank's poll(2):
            // a block ring would add up to its 1 ms retire timeout per
            // frame at the rates a rank sees.
            receive: Receive::Frames,
            promiscuous: false,
            ..AfPacketOptions::default()
        },
    )
    .map_err(|e| format!("opening AF_PACKET on {ifname}: {e}"))
}

/// Resolves `gateway` on `port`: an ARP request every 200 ms until the
/// answer or `timeout`.
fn resolve_gateway(
    port: &mut AfPacketPort,
    pool: &Pool,
    mac: MacAddr,
    ip: Ipv4Addr,
    gateway: Ipv4Addr,
    timeout: Duration,
) -> Result<MacAddr, String> {
    let request = arp_request(mac, ip, gateway);
    let start = Instant::now();
    let mut sent_at: Option<Instant> = None;
    let mut burst = Burst::new();
    while start.elapsed() < timeout {
        if !matches!(sent_at, Some(t) if t.elapsed() < ARP_RETRY) {
            let mut tx = Burst::new();
            if let Some(p) = pool.alloc_from(&request) {
                tx.push(p);
                port.tx_burst(&mut tx, 0);
                free_burst(&mut tx);
            }
            sent_at = Some(Instant::now());
        }
        port.rx_burst(pool, &mut burst, 0);
        let found = burst.iter().find_map(|p| arp_answer(p.data(), gateway));
        free_burst(&mut burst);
        if let Some(m) = found {
            return Ok(m);
        }
        let _ = crate::wait::block_on(&[port.as_fd()], 10_000_000);
    }
    Err(format!(
        "{}: no ARP reply from the gateway {gateway} within {:.1} s (is the lab's switch running?)",
        port.ifname(),
        timeout.as_secs_f64()
    ))
}

/// Runs host `args.host` of the job; returns its outcome (also when the
/// timeout or SIGTERM cut it short).
///
/// # Errors
/// A job file that does not read, a port that does not open, a gateway
/// that does not answer.
pub fn run(args: &RankArgs) -> Result<HostOutcome, String> {
    let text =
        std::fs::read_to_string(&args.job).map_err(|e| format!("{}: {e}", args.job.display()))?;
    let job: LiveJob =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", args.job.display()))?;
    let plan = job.plan()?;
    let mine = job.host_ranks(args.host);
    if mine.is_empty() {
        return Err(format!("the job has no host {}", args.host));
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(|e| e.to_string())?;
    }
    // Held to the end: the kernel then queues RoCEv2 datagrams here
    // (dropping them when full) instead of answering port-unreachable.
    let _udp = UdpSocket::bind((Ipv4Addr::UNSPECIFIED, ROCEV2_PORT))
        .map_err(|e| format!("binding UDP port {ROCEV2_PORT}: {e}"))?;
    let pool = Pool::new(2048);
    let mut ports = Vec::new();
    let mut configs = Vec::new();
    let arp_timeout = Duration::from_nanos(job.arp_timeout_ns);
    for r in &mine {
        let mut port = open_port(&r.ifname)?;
        let mac: MacAddr = r
            .mac
            .parse()
            .map_err(|_| format!("{}: bad MAC {:?} in the job", r.ifname, r.mac))?;
        let gw = resolve_gateway(&mut port, &pool, mac, r.ip, r.gateway, arp_timeout)?;
        configs.push(job.nic.nic_config(r, gw)?);
        ports.push(port);
    }
    let mut host = Host::new(&plan, args.host, configs)?;
    // The common start: every rank's clock counts from it.
    let now_unix = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0);
    std::thread::sleep(Duration::from_nanos(
        job.start_unix_ns.saturating_sub(now_unix),
    ));
    let t0 = Instant::now();
    let clock = || t0.elapsed().as_nanos() as Nanos;
    host.start(clock());
    let mut rx = Burst::new();
    let mut pending: Vec<Burst> = ports.iter().map(|_| Burst::new()).collect();
    let mut buf = vec![0u8; FRAME_BUF];
    let mut tx_no_buffer = 0u64;
    let mut said_done = false;
    loop {
        let now = clock();
        for (i, port) in ports.iter_mut().enumerate() {
            loop {
                let n = port.rx_burst(&pool, &mut rx, now);
                for p in rx.iter() {
                    host.receive(i, now, p.data());
                }
                free_burst(&mut rx);
                if n < BURST_SIZE {
                    break;
                }
            }
        }
        let now = clock();
        for (i, port) in ports.iter_mut().enumerate() {
            let q = &mut pending[i];
            loop {
                while q.len() < BURST_SIZE {
                    let Some(len) = host.transmit(i, now, &mut buf) else {
                        break;
                    };
                    match pool.alloc_from(&buf[..len]) {
                        Some(p) => q.push(p),
                        // The frame is lost as on a full wire; go-back-N
                        // recovers it.
                        None => tx_no_buffer += 1,
                    }
                }
                let had = q.len();
                if had == 0 {
                    break;
                }
                port.tx_burst(q, now);
                // The device pushes back: keep the rest for the next turn.
                if !q.is_empty() || had < BURST_SIZE {
                    break;
                }
            }
        }
        let now = clock();
        if !said_done && host.done() {
            said_done = true;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{DONE_LINE}").and_then(|()| out.flush());
        }
        if now >= job.timeout_ns || stop.load(Ordering::Relaxed) {
            break;
        }
        let busy = pending.iter().any(|q| !q.is_empty());
        let wait = match host.next_wakeup() {
            _ if busy => 0,
            Some(t) => t.saturating_sub(now),
            None => MAX_BLOCK_NS,
        };
        if wait > SPIN_NS {
            let fds: Vec<_> = ports.iter().map(|p| p.as_fd()).collect();
            let _ = crate::wait::block_on(&fds, wait.min(MAX_BLOCK_NS));
        } else if wait > 0 {
            std::thread::yield_now();
        }
    }
    for q in &mut pending {
        free_burst(q);
    }
    if !host.done() {
        eprintln!(
            "host {}: stopped before the job was done ({:.3} s); reporting what it did",
            args.host,
            clock() as f64 / 1e9
        );
    }
    if tx_no_buffer > 0 {
        eprintln!(
            "host {}: {tx_no_buffer} frame(s) not sent: no buffer",
            args.host
        );
    }
    for p in &ports {
        let drops = p.kernel_drops();
        if drops > 0 {
            eprintln!(
                "{}: the kernel dropped {drops} received frame(s) (ring full)",
                p.ifname()
            );
        }
    }
    Ok(host.outcome())
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x10]);
    const GW_MAC: MacAddr = MacAddr([0x02, 0, 0, 0, 0, 0x01]);

    fn reply(from_ip: Ipv4Addr, from: MacAddr, op: Operation) -> Vec<u8> {
        let mut f = vec![0u8; 60];
        f[0..6].copy_from_slice(&MAC.octets());
        f[6..12].copy_from_slice(&from.octets());
        f[12..14].copy_from_slice(&[0x08, 0x06]);
        ArpRepr {
            operation: op,
            source_hw: from,
            source_ip: from_ip,
            target_hw: MAC,
            target_ip: Ipv4Addr::new(10, 1, 1, 2),
        }
        .emit(&mut arp::Packet::new_unchecked(&mut f[14..42]));
        f
    }

    #[test]
    fn arp_request_asks_for_the_gateway_from_the_nic() {
        let f = arp_request(MAC, Ipv4Addr::new(10, 1, 1, 2), Ipv4Addr::new(10, 1, 1, 1));
        assert_eq!(&f[0..6], &[0xff; 6]);
        assert_eq!(&f[6..12], &MAC.octets());
        assert_eq!(&f[12..14], &[0x08, 0x06]);
        let repr = ArpRepr::parse(&arp::Packet::new_checked(&f[14..]).unwrap()).unwrap();
        assert_eq!(repr.operation, Operation::Request);
        assert_eq!(repr.source_hw, MAC);
        assert_eq!(repr.source_ip, Ipv4Addr::new(10, 1, 1, 2));
        assert_eq!(repr.target_ip, Ipv4Addr::new(10, 1, 1, 1));
        assert!(f[42..].iter().all(|b| *b == 0), "padding");
    }

    #[test]
    fn arp_answer_takes_the_gateways_mac_and_nothing_else() {
        let gw = Ipv4Addr::new(10, 1, 1, 1);
        assert_eq!(
            arp_answer(&reply(gw, GW_MAC, Operation::Reply), gw),
            Some(GW_MAC)
        );
        // A request from the gateway announces its MAC too.
        assert_eq!(
            arp_answer(&reply(gw, GW_MAC, Operation::Request), gw),
            Some(GW_MAC)
        );
        // Another address, a broadcast sender, another ethertype, truncated.
        assert_eq!(
            arp_answer(
                &reply(Ipv4Addr::new(10, 1, 1, 9), GW_MAC, Operation::Reply),
                gw
            ),
            None
        );
        assert_eq!(
            arp_answer(&reply(gw, MacAddr::BROADCAST, Operation::Reply), gw),
            None
        );
        let mut ip = reply(gw, GW_MAC, Operation::Reply);
        ip[12..14].copy_from_slice(&[0x08, 0x00]);
        assert_eq!(arp_answer(&ip, gw), None);
        assert_eq!(
            arp_answer(&reply(gw, GW_MAC, Operation::Reply)[..30], gw),
            None
        );
        assert_eq!(arp_answer(&[], gw), None);
        // The frame arp_request builds is no answer: it comes from the NIC.
        assert_eq!(
            arp_answer(&arp_request(MAC, Ipv4Addr::new(10, 1, 1, 2), gw), gw),
            None
        );
    }
}
