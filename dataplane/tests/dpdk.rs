//! The DPDK backend through the real pipeline (`--features dpdk`).
//!
//! EAL can be initialised once per process, so every DPDK test lives in
//! this one binary and shares one [`eal`] (no hugepages, no PCI, no shared
//! state: it runs on any machine with DPDK's libraries). The tests also
//! take a lock, since ethdevs are created and destroyed through
//! process-global tables.
//!
//! - In process: a switch over two `net_ring` ethdevs whose rings the test
//!   feeds and drains; and `net_null`, a sink and an endless source.
//! - In a network namespace (ignored under plain `cargo test`): the same
//!   traffic over a veth pair, once through railyard's AF_PACKET backend and
//!   once through DPDK's `net_af_packet`, with the same counters expected.

#![cfg(feature = "dpdk")]

use std::fs::File;
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::afpacket::{AfPacketOptions, AfPacketPort};
use railyard_dataplane::port::dpdk::{DpdkOptions, DpdkPort, Eal, RingDevice};
use railyard_dataplane::port::Port;
use railyard_dataplane::stats::SwitchStats;
use railyard_dataplane::wire::{checksum, MacAddr};
use railyard_dataplane::{Burst, Pool};

static SERIAL: Mutex<()> = Mutex::new(());

/// The process's EAL (default arguments) and the lock every test holds.
fn eal() -> (&'static Eal, MutexGuard<'static, ()>) {
    let guard = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    (Eal::init(&[]).expect("EAL init"), guard)
}

fn port_mac(i: usize) -> MacAddr {
    MacAddr([2, 0xbb, 0, 0, 0, i as u8])
}

fn host_mac(i: usize) -> MacAddr {
    MacAddr([2, 0xcc, 0, 0, 0, i as u8])
}

fn host_ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, i as u8, 2)
}

/// `ports` routed ports, 10.0.i.1/24, a static ARP entry for 10.0.i.2.
fn model(ports: usize) -> SwitchModel {
    let interfaces = (0..ports)
        .map(|i| {
            let mut m = InterfaceModel::new(&format!("Ethernet1/{}", i + 1), port_mac(i));
            m.ipv4.push((Ipv4Addr::new(10, 0, i as u8, 1), 24));
            m.static_arp.push((host_ip(i), host_mac(i)));
            m
        })
        .collect();
    SwitchModel {
        hostname: "dpdk-test".into(),
        interfaces,
        ..SwitchModel::default()
    }
}

/// IPv4/UDP from the host of port `from` to the host of port `to`, `len`
/// bytes, with `seq` in the payload.
fn frame(from: usize, to: usize, len: usize, seq: u32) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[..6].copy_from_slice(&port_mac(from).0);
    f[6..12].copy_from_slice(&host_mac(from).0);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    {
        let h = &mut f[14..34];
        h[0] = 0x45;
        h[2..4].copy_from_slice(&((len - 14) as u16).to_be_bytes());
        h[8] = 64;
        h[9] = 17;
        h[12..16].copy_from_slice(&host_ip(from).octets());
        h[16..20].copy_from_slice(&host_ip(to).octets());
        let c = !checksum::data(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }
    f[34..36].copy_from_slice(&1000u16.to_be_bytes());
    f[36..38].copy_from_slice(&2000u16.to_be_bytes());
    f[38..40].copy_from_slice(&((len - 34) as u16).to_be_bytes());
    f[42..46].copy_from_slice(&seq.to_be_bytes());
    f
}

fn seq_of(f: &[u8]) -> Option<u32> {
    (f.len() >= 46 && f[12..14] == [0x08, 0x00] && f[23] == 17)
        .then(|| u32::from_be_bytes([f[42], f[43], f[44], f[45]]))
}

/// The frame size for sequence number `seq`: 64 to 1500 bytes.
fn size_of_seq(seq: u32) -> usize {
    64 + (seq as usize * 37) % 1437
}

fn iface(stats: &SwitchStats, i: usize) -> &railyard_dataplane::stats::InterfaceStats {
    &stats.interfaces[&format!("Ethernet1/{}", i + 1)]
}

#[test]
fn eal_starts_without_hugepages_or_nics() {
    let (eal, _g) = eal();
    let args = eal.args();
    for want in ["--no-huge", "--no-shconf", "--iova-mode=va", "--no-pci"] {
        assert!(args.iter().any(|a| a == want), "{want} not in {args:?}");
    }
    // A second init is the same environment, whatever it asks for.
    let again = Eal::init(&["--bogus".to_string()]).unwrap();
    assert!(std::ptr::eq(eal, again));
}

#[test]
fn a_switch_forwards_between_two_net_ring_ports() {
    const N: u32 = 2000;
    let (eal, _g) = eal();
    let mut devs = [
        RingDevice::create(eal, "ry_ring_a", 1024).unwrap(),
        RingDevice::create(eal, "ry_ring_b", 1024).unwrap(),
    ];
    let backends: Vec<Option<Box<dyn Port>>> = devs
        .iter()
        .map(|d| {
            let p = DpdkPort::open(eal, d.name(), &DpdkOptions::default()).unwrap();
            assert_eq!(p.port_id(), d.port_id());
            assert!(p.link_up(), "net_ring links are always up");
            assert!(
                p.describe().starts_with("dpdk net_ring_ry_ring_"),
                "{}",
                p.describe()
            );
            Some(Box::new(p) as Box<dyn Port>)
        })
        .collect();
    let pool = Pool::new(4096);
    let (mut sw, warnings) = Switch::new(&model(2), backends, pool.clone());
    assert!(warnings.is_empty(), "{warnings:?}");

    let mut got = vec![false; N as usize];
    let mut received = 0;
    let mut bytes = 0u64;
    let (mut next, mut now) = (0u32, 0u64);
    let deadline = Instant::now() + Duration::from_secs(20);
    while received < N && Instant::now() < deadline {
        while next < N && devs[0].pending() < 512 {
            let f = frame(0, 1, size_of_seq(next), next);
            bytes += f.len() as u64;
            assert!(devs[0].inject(&f));
            next += 1;
        }
        now += 10_000;
        sw.poll(now);
        for f in devs[1].drain() {
            let seq = seq_of(&f).expect("a test frame");
            let want = size_of_seq(seq);
            assert_eq!(f.len(), want, "frame {seq} has the wrong length");
            assert_eq!(&f[..6], &host_mac(1).0, "routed to host 1's MAC");
            assert_eq!(&f[6..12], &port_mac(1).0, "from port 1's MAC");
            assert_eq!(f[22], 63, "TTL decremented");
            assert_eq!(checksum::data(&f[14..34]), 0xffff, "IPv4 checksum updated");
            assert!(!got[seq as usize], "frame {seq} twice");
            got[seq as usize] = true;
            received += 1;
        }
    }
    assert_eq!(received, N);
    assert!(
        devs[0].drain().is_empty(),
        "nothing goes back out of port 0"
    );

    let stats = sw.stats();
    let (a, b) = (iface(&stats, 0), iface(&stats, 1));
    assert_eq!(a.rx_packets, u64::from(N));
    assert_eq!(a.rx_bytes, bytes);
    assert_eq!(b.tx_packets, u64::from(N));
    assert_eq!(b.tx_bytes, bytes);
    assert_eq!(a.total_drops() + b.total_drops(), 0, "{a:?}");
    assert_eq!(a.backend_rx_dropped + b.backend_tx_errors, 0);
    assert!(a.link_up && b.link_up);
    assert!(
        a.backend.starts_with("dpdk net_ring_ry_ring_a"),
        "{}",
        a.backend
    );
    drop(sw);
    assert_eq!(pool.available(), pool.capacity(), "every buffer came back");
}

#[test]
fn net_null_is_a_sink_and_a_source_with_counters() {
    const N: u32 = 500;
    let (eal, _g) = eal();
    let mut ring = RingDevice::create(eal, "ry_ring_n", 1024).unwrap();
    let backends: Vec<Option<Box<dyn Port>>> = vec![
        Some(Box::new(
            DpdkPort::open(eal, ring.name(), &DpdkOptions::default()).unwrap(),
        )),
        // no-rx: the sink half only, so the counters below are exact.
        Some(Box::new(
            DpdkPort::open(eal, "net_null_sink0,no-rx=1", &DpdkOptions::default()).unwrap(),
        )),
    ];
    let (mut sw, _) = Switch::new(&model(2), backends, Pool::new(2048));
    for seq in 0..N {
        assert!(
            ring.inject(&frame(0, 1, 128, seq)) || {
                sw.poll(u64::from(seq) * 1000);
                ring.inject(&frame(0, 1, 128, seq))
            }
        );
    }
    let mut now = 1_000_000_000;
    let deadline = Instant::now() + Duration::from_secs(10);
    while iface(&sw.stats(), 1).tx_packets < u64::from(N) && Instant::now() < deadline {
        now += 10_000;
        sw.poll(now);
    }
    let stats = sw.stats();
    assert_eq!(iface(&stats, 0).rx_packets, u64::from(N));
    assert_eq!(iface(&stats, 1).tx_packets, u64::from(N));
    assert_eq!(iface(&stats, 1).rx_packets, 0);
    assert!(iface(&stats, 1).backend.starts_with("dpdk net_null_sink0"));
    drop(sw);

    // As a source, net_null makes 64-byte frames out of whatever its mbufs
    // hold; the pipeline sees them, and they all are accounted for.
    let mut src = DpdkPort::open(eal, "net_null_src0", &DpdkOptions::default()).unwrap();
    let pool = Pool::new(256);
    let mut burst = Burst::new();
    let mut total = 0;
    for _ in 0..10 {
        total += src.rx_burst(&pool, &mut burst, 0);
        assert!(burst.iter().all(|p| p.len() == 64));
        burst.clear();
    }
    assert_eq!(total, 320, "full bursts every time");
    let io = src.io_counters();
    assert_eq!(io.rx_frames, 320);
    assert_eq!(io.rx_dropped, 0);
    let xstats = src.xstats();
    let rx_good = xstats
        .iter()
        .find(|(n, _)| n == "rx_good_packets")
        .map(|(_, v)| *v);
    assert_eq!(rx_good, Some(320), "{xstats:?}");
}

#[test]
fn an_unknown_port_is_a_clear_error() {
    let (eal, _g) = eal();
    let e = DpdkPort::open(eal, "31", &DpdkOptions::default()).unwrap_err();
    assert!(e.to_string().contains("no such ethdev"), "{e}");
    let e = DpdkPort::open(eal, "net_nosuchdriver0", &DpdkOptions::default()).unwrap_err();
    assert!(e.to_string().contains("net_nosuchdriver0"), "{e}");
}

// ---- in a network namespace -------------------------------------------

struct Netns {
    name: String,
}

impl Netns {
    fn new(tag: &str) -> Netns {
        let name = format!("ry-dpdk-{tag}-{}", std::process::id());
        run(&["ip", "netns", "add", &name]);
        let ns = Netns { name };
        // No IPv6 chatter (router solicitations, MLD) on the test links:
        // the counters below must be exact.
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.default.disable_ipv6=1"]);
        ns.exec(&["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"]);
        ns
    }

    fn exec(&self, cmd: &[&str]) {
        let mut all = vec!["ip", "netns", "exec", self.name.as_str()];
        all.extend_from_slice(cmd);
        run(&all);
    }

    /// A veth pair `a`/`b`, both up, offloads off (so frames arrive as sent).
    fn veth(&self, a: &str, b: &str) {
        run(&[
            "ip", "-n", &self.name, "link", "add", a, "type", "veth", "peer", "name", b,
        ]);
        for d in [a, b] {
            self.exec(&[
                "ethtool", "-K", d, "tso", "off", "gso", "off", "gro", "off", "tx", "off",
            ]);
            run(&["ip", "-n", &self.name, "link", "set", d, "up"]);
        }
    }

    fn run<T: Send + 'static>(&self, f: impl FnOnce() -> T + Send + 'static) -> T {
        let path = format!("/var/run/netns/{}", self.name);
        let worker = thread::spawn(move || {
            let ns = File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            // SAFETY: `ns` is an open namespace file for the duration of the
            // call; setns only changes this thread's network namespace.
            let r = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(r, 0, "setns {path}: {}", io::Error::last_os_error());
            f()
        });
        match worker.join() {
            Ok(v) => v,
            Err(p) => std::panic::resume_unwind(p),
        }
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

fn run(cmd: &[&str]) {
    let out = Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// What one run of the veth traffic left in the counters.
#[derive(Debug, PartialEq, Eq)]
struct Outcome {
    delivered: u32,
    rx_packets: u64,
    rx_bytes: u64,
    tx_packets: u64,
    tx_bytes: u64,
    drops: u64,
    backend_rx_dropped: u64,
    backend_tx_errors: u64,
}

/// Sends `n` frames from host 0 (on `h0`) to host 1 (on `h1`) through a
/// switch whose ports are `ports`, and reads the counters.
fn veth_traffic(ports: Vec<Option<Box<dyn Port>>>, h0: &str, h1: &str, n: u32) -> Outcome {
    let opts = AfPacketOptions::default();
    let mut host0 = AfPacketPort::open(h0, opts.clone()).unwrap();
    let mut host1 = AfPacketPort::open(h1, opts).unwrap();
    let pool = Pool::new(4096);
    let (mut sw, _) = Switch::new(&model(2), ports, pool.clone());
    let clock = Instant::now();
    let now = || clock.elapsed().as_nanos() as u64;
    // Let both switch ports see carrier before sending.
    let up = Instant::now() + Duration::from_secs(3);
    while !(iface(&sw.stats(), 0).link_up && iface(&sw.stats(), 1).link_up) && Instant::now() < up {
        sw.poll(now());
        thread::sleep(Duration::from_millis(10));
    }
    let (mut next, mut delivered) = (0u32, 0u32);
    let mut seen = vec![false; n as usize];
    let mut tx = Burst::new();
    let mut rx = Burst::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut quiet_since = Instant::now();
    while Instant::now() < deadline {
        // A little at a time: the comparison is about counting, not load.
        if next < n && next.saturating_sub(delivered) < 64 {
            while tx.len() < 16 && next < n {
                let f = frame(0, 1, size_of_seq(next), next);
                tx.push(pool.alloc_from(&f).unwrap());
                next += 1;
            }
            host0.tx_burst(&mut tx, now());
        }
        sw.poll(now());
        host1.rx_burst(&pool, &mut rx, now());
        for p in rx.drain(..) {
            if let Some(seq) = seq_of(p.data()) {
                assert_eq!(p.len(), size_of_seq(seq));
                assert!(!seen[seq as usize], "frame {seq} twice");
                seen[seq as usize] = true;
                delivered += 1;
                quiet_since = Instant::now();
            }
        }
        if delivered == n && quiet_since.elapsed() > Duration::from_millis(200) {
            break;
        }
    }
    let stats = sw.stats();
    let (a, b) = (iface(&stats, 0), iface(&stats, 1));
    Outcome {
        delivered,
        rx_packets: a.rx_packets + b.rx_packets,
        rx_bytes: a.rx_bytes + b.rx_bytes,
        tx_packets: a.tx_packets + b.tx_packets,
        tx_bytes: a.tx_bytes + b.tx_bytes,
        drops: a.total_drops() + b.total_drops(),
        backend_rx_dropped: a.backend_rx_dropped + b.backend_rx_dropped,
        backend_tx_errors: a.backend_tx_errors + b.backend_tx_errors,
    }
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn net_af_packet_on_veth_counts_like_the_af_packet_backend() {
    const N: u32 = 3000;
    let (eal, _g) = eal();
    let ns = Netns::new("veth");
    ns.veth("ryh0", "rys0");
    ns.veth("ryh1", "rys1");
    let (afp, dpdk) = ns.run(move || {
        let afp = veth_traffic(
            ["rys0", "rys1"]
                .iter()
                .map(|d| {
                    Some(
                        Box::new(AfPacketPort::open(d, AfPacketOptions::default()).unwrap())
                            as Box<dyn Port>,
                    )
                })
                .collect(),
            "ryh0",
            "ryh1",
            N,
        );
        // The same links through DPDK's af_packet driver (hot-plugged in
        // this namespace, so its sockets are opened here).
        let ports: Vec<Option<Box<dyn Port>>> = ["rys0", "rys1"]
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let p = DpdkPort::open(
                    eal,
                    &format!("net_af_packet_t{i},iface={d}"),
                    &DpdkOptions::default(),
                )
                .unwrap();
                assert!(
                    p.describe().contains(&format!("iface={d}")),
                    "{}",
                    p.describe()
                );
                Some(Box::new(p) as Box<dyn Port>)
            })
            .collect();
        let dpdk = veth_traffic(ports, "ryh0", "ryh1", N);
        (afp, dpdk)
    });
    println!("af-packet backend: {afp:?}\ndpdk net_af_packet: {dpdk:?}");
    assert_eq!(afp.delivered, N, "the AF_PACKET backend lost frames");
    assert_eq!(afp.tx_packets, u64::from(N));
    assert_eq!(
        dpdk, afp,
        "DPDK's counters differ from the AF_PACKET backend's"
    );
}

#[test]
fn net_pcap_records_what_the_switch_forwards() {
    const N: u32 = 100;
    let (eal, _g) = eal();
    let dir = tempfile::tempdir().unwrap();
    // An empty capture to receive from (pcap global header only).
    let empty = dir.path().join("empty.pcap");
    let mut header = Vec::new();
    header.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    header.extend_from_slice(&2u16.to_le_bytes());
    header.extend_from_slice(&4u16.to_le_bytes());
    header.extend_from_slice(&[0; 8]);
    header.extend_from_slice(&65535u32.to_le_bytes());
    header.extend_from_slice(&1u32.to_le_bytes());
    std::fs::write(&empty, header).unwrap();
    let out = dir.path().join("out.pcap");
    let mut ring = RingDevice::create(eal, "ry_ring_p", 1024).unwrap();
    let spec = format!(
        "net_pcap_t0,rx_pcap={},tx_pcap={}",
        empty.display(),
        out.display()
    );
    let backends: Vec<Option<Box<dyn Port>>> = vec![
        Some(Box::new(
            DpdkPort::open(eal, ring.name(), &DpdkOptions::default()).unwrap(),
        )),
        Some(Box::new(
            DpdkPort::open(eal, &spec, &DpdkOptions::default()).unwrap(),
        )),
    ];
    let (mut sw, _) = Switch::new(&model(2), backends, Pool::new(1024));
    for seq in 0..N {
        assert!(ring.inject(&frame(0, 1, size_of_seq(seq), seq)));
    }
    let mut now = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while iface(&sw.stats(), 1).tx_packets < u64::from(N) && Instant::now() < deadline {
        now += 10_000;
        sw.poll(now);
    }
    assert_eq!(iface(&sw.stats(), 1).tx_packets, u64::from(N));
    drop(sw); // closes the device, which flushes the capture
    let mut reader = pcap_file::pcap::PcapReader::new(std::fs::File::open(&out).unwrap()).unwrap();
    let mut seqs = Vec::new();
    while let Some(p) = reader.next_packet() {
        let p = p.unwrap();
        assert_eq!(p.data.len(), size_of_seq(seq_of(&p.data).unwrap()));
        seqs.push(seq_of(&p.data).unwrap());
    }
    assert_eq!(seqs, (0..N).collect::<Vec<_>>());
}
