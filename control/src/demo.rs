//! `railyard demo`: the main job on an embedded rail switch and a synthetic
//! trace, in virtual time — no root, no files.
//!
//! Four GPU hosts hang off a rail switch with two spine uplinks, configured
//! with the book's RoCEv2 QoS policy. Hosts 1–3 send RoCEv2 (DSCP 24) to
//! host 4 at 33 Gb/s each — an incast that oversubscribes its 100 Gb/s port —
//! so queue 3 builds and WRED marks CE; host 4 answers with CNPs (DSCP 48) on
//! strict-priority queue 7, and best-effort TCP/UDP runs beside them, some of
//! it over the ECMP uplinks; a ping and an ARP request for the switch, a
//! frame with an expired TTL and a few malformed frames show the switch's own
//! handling and its drop counters.

use std::net::{IpAddr, Ipv4Addr};

use railyard_config::{parse_str, ParseOptions};
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::port::trace::TracePort;
use railyard_dataplane::port::upstream::PfcUpstream;
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::MacAddr;

use crate::compile::{compile, Compiled};
use crate::replay::{run_virtual, ReplayReport};
use crate::traffic::{build, FrameSpec, Transport, BTH_CNP, BTH_RC_WRITE_ONLY};

/// The embedded configuration: a rail switch in NX-OS syntax.
pub const DEMO_CONFIG: &str = include_str!("demo.conf");

/// MAC of GPU host `n` (1-based) as the demo configures it.
pub fn host_mac(n: u8) -> MacAddr {
    MacAddr([0x02, 0x00, 0x00, 0x00, 0x00, n])
}

/// IPv4 address of GPU host `n`.
pub fn host_ip(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, n, 2)
}

/// Compiles the embedded configuration.
///
/// # Errors
/// Never in a released build; the message says which line broke.
pub fn demo_switch() -> Result<Compiled, String> {
    let parsed = parse_str(DEMO_CONFIG, "demo.conf", &ParseOptions::default()).map_err(|d| {
        d.iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    })?;
    compile(&parsed.config).map_err(|d| crate::format_diagnostics(&d))
}

/// The synthetic trace, per host port (index = host number − 1); each entry
/// is (time in ns, frame).
pub fn demo_trace(sw: &Compiled, packets_per_sender: u64) -> Vec<Vec<(Nanos, Vec<u8>)>> {
    let port_mac = |i: usize| sw.model.interfaces[i].mac;
    let mut trace: Vec<Vec<(Nanos, Vec<u8>)>> = vec![Vec::new(); 4];
    // Each sender runs RoCEv2 at 33 Gb/s and a little TCP: together they
    // oversubscribe host 4's 100 Gb/s port by about 3 %, so queue 3 builds
    // into the WRED band.
    let gap: Nanos = 1086 * 8 * 1000 / 33_000;
    for n in 1..=3u8 {
        let i = usize::from(n - 1);
        let mut roce = FrameSpec::udp(
            host_mac(n),
            port_mac(i),
            IpAddr::V4(host_ip(n)),
            IpAddr::V4(host_ip(4)),
        );
        roce.dscp = 24;
        roce.ecn = 2;
        roce.frame_len = 1086;
        roce.src_port = 49152 + u16::from(n);
        for k in 0..packets_per_sender {
            roce.transport = Transport::Roce {
                opcode: BTH_RC_WRITE_ONLY,
                dest_qp: 0x100 + u32::from(n),
                psn: k as u32,
            };
            trace[i].push((k * gap + u64::from(n) * 7, build(&roce, k)));
        }
        // Best effort toward the spines (ECMP) and to host 4.
        let mut be = FrameSpec::udp(
            host_mac(n),
            port_mac(i),
            IpAddr::V4(host_ip(n)),
            IpAddr::V4(Ipv4Addr::new(10, 100, n, 10)),
        );
        be.frame_len = 512;
        for k in 0..packets_per_sender / 4 {
            be.src_port = 1024 + (k % 64) as u16;
            trace[i].push((k * gap * 4 + 50, build(&be, k)));
        }
        let mut tcp = FrameSpec::udp(
            host_mac(n),
            port_mac(i),
            IpAddr::V4(host_ip(n)),
            IpAddr::V4(host_ip(4)),
        );
        tcp.transport = Transport::Tcp;
        tcp.frame_len = 1500;
        tcp.dst_port = 5201;
        for k in 0..packets_per_sender / 32 {
            trace[i].push((k * gap * 32 + 30, build(&tcp, k)));
        }
    }
    // Host 4 answers each sender with CNPs (DSCP 48).
    for n in 1..=3u8 {
        let mut cnp = FrameSpec::udp(
            host_mac(4),
            port_mac(3),
            IpAddr::V4(host_ip(4)),
            IpAddr::V4(host_ip(n)),
        );
        cnp.dscp = 48;
        cnp.src_port = 49152 + u16::from(n);
        cnp.transport = Transport::Roce {
            opcode: BTH_CNP,
            dest_qp: 0x100 + u32::from(n),
            psn: 0,
        };
        for k in 0..packets_per_sender / 50 {
            trace[3].push((k * gap * 50 + 1_000 + u64::from(n), build(&cnp, k)));
        }
    }
    // The switch's own handling: ARP for its address, a ping, an expired TTL,
    // and malformed frames.
    trace[0].push((
        5,
        crate::traffic::arp_request(host_mac(1), host_ip(1), Ipv4Addr::new(10, 0, 1, 1)),
    ));
    let mut ping = FrameSpec::udp(
        host_mac(1),
        port_mac(0),
        IpAddr::V4(host_ip(1)),
        IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1)),
    );
    ping.ttl = 64;
    trace[0].push((10, crate::traffic::icmp_echo(&ping, 1, 1)));
    let mut expired = FrameSpec::udp(
        host_mac(2),
        port_mac(1),
        IpAddr::V4(host_ip(2)),
        IpAddr::V4(host_ip(4)),
    );
    expired.ttl = 1;
    trace[1].push((20, build(&expired, 0)));
    let good = build(
        &FrameSpec::udp(
            host_mac(3),
            port_mac(2),
            IpAddr::V4(host_ip(3)),
            IpAddr::V4(host_ip(4)),
        ),
        0,
    );
    trace[2].push((25, good[..30].to_vec()));
    let mut bad_checksum = good.clone();
    bad_checksum[24] ^= 0xff;
    trace[2].push((26, bad_checksum));
    trace
}

/// Runs the demo: the embedded switch over the synthetic trace.
///
/// # Errors
/// An I/O or configuration message.
pub fn run_demo(packets_per_sender: u64) -> Result<(Compiled, ReplayReport), String> {
    let sw = demo_switch()?;
    let trace = demo_trace(&sw, packets_per_sender);
    let mut trace = trace.into_iter();
    let backends: Vec<Option<Box<dyn Port>>> = sw
        .model
        .interfaces
        .iter()
        .map(|ifc| {
            let frames = trace.next().unwrap_or_default();
            let port =
                TracePort::new(&ifc.name, frames).closed_loop(PfcUpstream::for_interface(ifc));
            Some(Box::new(port) as Box<dyn Port>)
        })
        .collect();
    let report = run_virtual(&sw.model, backends, 0, |_, _| {}).map_err(|e| e.to_string())?;
    Ok((sw, report))
}

/// What the demo's counters say, in words: the incast's marks on queue 3
/// and the CNPs' waits on queue 7.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn explain(
    out: &mut dyn std::io::Write,
    stats: &railyard_dataplane::stats::SwitchStats,
) -> std::io::Result<()> {
    let Some(gpu4) = stats.interfaces.get("Ethernet1/4") else {
        return Ok(());
    };
    let q3 = &gpu4.queues[3];
    writeln!(
        out,
        "\nEthernet1/4 (GPU 4, 100 Gb/s) receives three 33 Gb/s RoCEv2 senders: queue 3 peaked at {} KB;\n\
         WRED/ECN (150-3000 KB, 7 %) marked {} of {} RoCEv2 packets CE, {} WRED and {} tail drops.",
        q3.max_depth_bytes / 1024,
        q3.ecn_marked,
        q3.tx_packets,
        q3.wred_drops,
        q3.tail_drops
    )?;
    let (cnps, worst) = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
        .iter()
        .filter_map(|n| stats.interfaces.get(*n))
        .map(|i| &i.queues[7])
        .fold((0, 0), |(n, w), q| {
            (n + q.tx_packets, w.max(q.latency_ns.max))
        });
    writeln!(
        out,
        "CNPs (DSCP 48) rode strict-priority queue 7 back to the senders: {cnps} sent, longest wait {}.",
        crate::show::duration(worst)
    )?;
    let senders: Vec<_> = ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
        .iter()
        .filter_map(|n| stats.interfaces.get(*n))
        .collect();
    let xoff: u64 = senders.iter().map(|i| i.pfc.tx_pause[3]).sum();
    let xon: u64 = senders.iter().map(|i| i.pfc.tx_resume[3]).sum();
    let overflow: u64 = senders
        .iter()
        .map(|i| i.drops.get("ingress_overflow").copied().unwrap_or(0))
        .sum();
    writeln!(
        out,
        "PFC priority 3 (lossless, `pause pfc-cos 3`): the sender ports sent {xoff} pause and {xon} resume frames\n\
         upstream. The senders honour PFC (closed-loop replay): they hold a paused priority back and\n\
         send it on resume, so {overflow} lossless packets overflowed the ingress headroom (`ingress_overflow`)."
    )
}
