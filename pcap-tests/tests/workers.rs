//! Several poll-mode workers: cross-worker hand-off and neighbour learning
//! shared between workers, over in-memory ports on the real clock.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use railyard_control::traffic::{arp_request, build, FrameSpec};
use railyard_dataplane::clock::MonotonicClock;
use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::port::ring::{RingLink, RingPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::runtime::{PollMode, Runtime, RuntimeOptions};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::Pool;
use railyard_pcap_tests::two_ring_workers;

fn port_mac(i: u8) -> MacAddr {
    MacAddr([2, 0xaa, 0, 0, 0, i])
}

fn host_mac(i: u8) -> MacAddr {
    MacAddr([2, 0xbb, 0, 0, 0, i])
}

fn model() -> SwitchModel {
    let interfaces = (0..4u8)
        .map(|i| {
            let mut m = InterfaceModel::new(&format!("Ethernet1/{}", i + 1), port_mac(i));
            m.ipv4.push((Ipv4Addr::new(10, 0, i, 1), 24));
            m
        })
        .collect();
    SwitchModel {
        interfaces,
        ..SwitchModel::default()
    }
}

/// Waits until `port` has received `n` frames (or a few seconds pass).
fn receive(port: &mut RingPort, n: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while got.len() < n && Instant::now() < deadline {
        match port.recv() {
            Some(p) => got.push(p.data().to_vec()),
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    got
}

/// Two workers on `model`'s ports, each a ring cable of `ring` frames to a
/// host end returned in port order.
fn start(model: &SwitchModel, buffers: usize, ring: usize) -> (Runtime, Pool, Vec<RingPort>) {
    let pool = Pool::new(buffers);
    let mut hosts = Vec::new();
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    for i in 0..model.interfaces.len() {
        let (sw, host, _) = RingLink::pair(&format!("p{i}"), ring);
        backends.push(Some(Box::new(sw)));
        hosts.push(host);
    }
    let opts = RuntimeOptions {
        workers: 2,
        cores: Vec::new(),
        poll: PollMode::Adaptive,
        mirrors: false,
    };
    let (rt, warnings) = Runtime::start(
        model,
        backends,
        pool.clone(),
        Arc::new(MonotonicClock::new()),
        &opts,
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    (rt, pool, hosts)
}

#[test]
fn two_workers_hand_off_packets_and_share_what_they_learn() {
    let (rt, pool, mut hosts) = start(&model(), 4096, 1024);

    // Port 0 belongs to worker 0, port 1 to worker 1: host 0 → host 1 crosses
    // workers. Nobody knows host 1's MAC yet, so worker 0 parks the packets
    // and asks through worker 1's port.
    let h1_ip = Ipv4Addr::new(10, 0, 1, 2);
    let spec = FrameSpec::udp(
        host_mac(0),
        port_mac(0),
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        IpAddr::V4(h1_ip),
    );
    for k in 0..10 {
        hosts[0]
            .send(pool.alloc_from(&build(&spec, k)).unwrap())
            .unwrap();
    }
    let req = receive(&mut hosts[1], 1);
    assert_eq!(req.len(), 1, "an ARP request for host 1");
    assert_eq!(&req[0][12..14], &[0x08, 0x06]);
    assert_eq!(&req[0][38..42], &h1_ip.octets());

    // Host 1 answers on port 1 (worker 1 learns it and tells worker 0).
    let mut reply = arp_request(host_mac(1), h1_ip, Ipv4Addr::new(10, 0, 1, 1));
    reply[0..6].copy_from_slice(&port_mac(1).0);
    reply[21] = 2;
    reply[32..38].copy_from_slice(&port_mac(1).0);
    hosts[1].send(pool.alloc_from(&reply).unwrap()).unwrap();
    let released = receive(&mut hosts[1], 10);
    assert_eq!(released.len(), 10, "parked packets released across workers");
    for (k, f) in released.iter().enumerate() {
        assert_eq!(&f[0..6], &host_mac(1).0);
        assert_eq!(&f[6..12], &port_mac(1).0);
        assert_eq!(
            u64::from_be_bytes(f[42..50].try_into().unwrap()),
            k as u64,
            "order kept"
        );
    }

    // Now learned everywhere: more traffic flows without another request.
    for k in 10..1010 {
        while hosts[0]
            .send(pool.alloc_from(&build(&spec, k)).unwrap())
            .is_err()
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    let more = receive(&mut hosts[1], 1000);
    assert_eq!(more.len(), 1000);
    assert!(more.iter().all(|f| f[12..14] == [0x08, 0x00]));

    let stats = rt.shutdown();
    assert_eq!(stats.interfaces.len(), 4, "every worker's ports reported");
    assert_eq!(stats.interfaces["Ethernet1/1"].rx_packets, 1010);
    assert_eq!(stats.interfaces["Ethernet1/2"].tx_packets, 1011);
    assert_eq!(stats.interfaces["Ethernet1/1"].total_drops(), 0);
}

#[test]
fn a_new_model_applies_live_and_keeps_counters() {
    let mut m = model();
    m.interfaces.truncate(2);
    m.interfaces[1]
        .static_arp
        .push((Ipv4Addr::new(10, 0, 1, 2), host_mac(1)));
    let (rt, pool, mut hosts) = start(&m, 1024, 256);
    let (h0, h1) = hosts.split_at_mut(1);
    let (h0, h1) = (&mut h0[0], &mut h1[0]);
    let spec = FrameSpec::udp(
        host_mac(0),
        port_mac(0),
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        IpAddr::V4(Ipv4Addr::new(10, 0, 1, 2)),
    );
    h0.send(pool.alloc_from(&build(&spec, 0)).unwrap()).unwrap();
    assert_eq!(&receive(h1, 1)[0][0..6], &host_mac(1).0);

    // The host behind Ethernet1/2 moved to a new MAC, and Ethernet1/1 got a new one.
    let mut next = m.clone();
    next.interfaces[1].static_arp = vec![(Ipv4Addr::new(10, 0, 1, 2), host_mac(9))];
    next.interfaces[1].mac = port_mac(7);
    assert!(rt.apply(next.clone()).is_ok());
    h0.send(pool.alloc_from(&build(&spec, 1)).unwrap()).unwrap();
    let f = &receive(h1, 1)[0];
    assert_eq!(&f[0..6], &host_mac(9).0, "new static neighbour used");
    assert_eq!(&f[6..12], &port_mac(7).0, "new interface MAC used");

    // Removing an interface is refused and the running model stays.
    let mut fewer = next.clone();
    fewer.interfaces.pop();
    assert!(rt.apply(fewer).unwrap_err().contains("restart"));
    h0.send(pool.alloc_from(&build(&spec, 2)).unwrap()).unwrap();
    assert_eq!(receive(h1, 1).len(), 1);

    // Wait for a counter snapshot, then check nothing was reset.
    std::thread::sleep(Duration::from_millis(250));
    let stats = rt.shutdown();
    assert_eq!(stats.interfaces["Ethernet1/1"].rx_packets, 3);
    assert_eq!(stats.interfaces["Ethernet1/2"].tx_packets, 3);
}

#[test]
fn control_path_punts_lldp_from_every_worker_and_sends_on_any_port() {
    let (rt, pool, mut hosts) = start(&model(), 1024, 64);
    let control = rt.control_path();
    // An LLDP frame on ports 1 (worker 1) and 2 (worker 0).
    let mut lldp = vec![0u8; 60];
    lldp[..6].copy_from_slice(&[0x01, 0x80, 0xc2, 0, 0, 0x0e]);
    lldp[6..12].copy_from_slice(&host_mac(9).0);
    lldp[12..14].copy_from_slice(&[0x88, 0xcc]);
    for p in [1, 2] {
        lldp[14] = p as u8;
        assert!(hosts[p].send(pool.alloc_from(&lldp).unwrap()).is_ok());
    }
    let mut punted = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(5);
    while punted.len() < 2 && Instant::now() < deadline {
        match control.recv() {
            Some(p) => punted.push((p.in_port, p.data()[14])),
            None => std::thread::sleep(Duration::from_millis(1)),
        }
    }
    punted.sort_unstable();
    assert_eq!(punted, vec![(1, 1), (2, 2)]);
    // Frames the control plane sends leave on the port asked for, whichever
    // worker owns it, unchanged.
    for p in [0u16, 3] {
        lldp[14] = 0x40 + p as u8;
        control.send(p, &lldp).unwrap();
    }
    for p in [0usize, 3] {
        let got = receive(&mut hosts[p], 1);
        assert_eq!(got.len(), 1, "port {p}");
        assert_eq!(got[0][14], 0x40 + p as u8);
        assert_eq!(got[0].len(), 60);
    }
    assert_eq!(
        control.send(9, &lldp),
        Err(railyard_dataplane::runtime::SendError::NoPort)
    );
    let stats = rt.shutdown();
    assert_eq!(stats.interfaces["Ethernet1/2"].punted, 1);
    assert_eq!(stats.interfaces["Ethernet1/4"].tx_packets, 1);
}

/// A worker that falls behind holds back the others: they stop taking new
/// frames from their ports while their ring to it is over half full, so
/// nothing is routed only to be dropped at the hand-off, and everything
/// arrives once it catches up. A worker that stays stopped holds them back
/// only for a while.
#[test]
fn a_worker_behind_holds_back_its_peers_instead_of_dropping_their_packets() {
    use railyard_dataplane::counters::DropReason;
    use railyard_dataplane::pipeline::MAX_RX_HELD;

    const HANDOFF: usize = 64;
    const FRAMES: u64 = 300;
    let m = model();
    let pool = Pool::new(1024);
    let (mut w0, mut w1, [mut h0, mut h1]) = two_ring_workers(&m, &pool, HANDOFF, 512, false);
    // Host 1's MAC is known on both workers (worker 1 learns it and tells
    // worker 0), so frames from port 0 cross straight to worker 1.
    let h1_ip = Ipv4Addr::new(10, 0, 1, 2);
    let mut reply = arp_request(host_mac(1), h1_ip, Ipv4Addr::new(10, 0, 1, 1));
    reply[0..6].copy_from_slice(&port_mac(1).0);
    reply[21] = 2;
    reply[32..38].copy_from_slice(&port_mac(1).0);
    h1.send(pool.alloc_from(&reply).unwrap()).unwrap();
    w1.poll(1_000);
    w0.poll(2_000);
    let spec = FrameSpec::udp(
        host_mac(0),
        port_mac(0),
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        IpAddr::V4(h1_ip),
    );
    for k in 0..FRAMES {
        h0.send(pool.alloc_from(&build(&spec, k)).unwrap()).unwrap();
    }
    // Worker 1 is stalled: worker 0 fills its ring past half, then waits.
    for t in 0..20 {
        w0.poll(3_000 + t);
    }
    let taken = w0.counters(0).unwrap().rx_packets;
    assert!(
        (HANDOFF as u64 / 2..=HANDOFF as u64 / 2 + 32).contains(&taken),
        "worker 0 took {taken} frames for a {HANDOFF}-packet inbox"
    );
    assert_eq!(w0.counters(0).unwrap().total_drops(), 0);
    // Worker 1 catches up: every frame arrives, in order, none dropped.
    let mut got = Vec::new();
    for t in 0..1_000 {
        w1.poll(10_000 + 2 * t);
        w0.poll(10_001 + 2 * t);
        while let Some(p) = h1.recv() {
            got.push(u64::from_be_bytes(p.data()[42..50].try_into().unwrap()));
        }
        if got.len() == FRAMES as usize {
            break;
        }
    }
    assert_eq!(got, (0..FRAMES).collect::<Vec<_>>());
    assert_eq!(w0.counters(0).unwrap().total_drops(), 0);

    // Worker 1 stops for good: worker 0 goes on receiving after a while,
    // and what no longer fits the ring is counted, not lost silently.
    for k in 0..FRAMES {
        h0.send(pool.alloc_from(&build(&spec, FRAMES + k)).unwrap())
            .unwrap();
    }
    for t in 0..4 * MAX_RX_HELD as u64 {
        w0.poll(100_000 + t);
    }
    let c = w0.counters(0).unwrap();
    let taken = c.rx_packets - FRAMES;
    assert!(taken > HANDOFF as u64, "took {taken} frames");
    assert_eq!(
        c.drops[DropReason::HandoffFull as usize],
        taken - HANDOFF as u64
    );
}

/// A packet for another worker's port leaves through the routing worker's
/// own lane while the port has no line rate (the owner is never involved),
/// and crosses to the owner once the port gets a speed to shape to. The
/// lane's counters join the owner's in the merged snapshot.
#[test]
fn unshaped_ports_take_lanes_and_shaped_ports_hand_off() {
    use railyard_dataplane::stats::SwitchStats;

    let mut m = model();
    m.interfaces.truncate(2);
    let h1_ip = Ipv4Addr::new(10, 0, 1, 2);
    m.interfaces[1].static_arp.push((h1_ip, host_mac(1)));
    let pool = Pool::new(1024);
    let (mut w0, mut w1, [mut h0, mut h1]) = two_ring_workers(&m, &pool, 256, 256, true);
    let spec = FrameSpec::udp(
        host_mac(0),
        port_mac(0),
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
        IpAddr::V4(h1_ip),
    );
    let arrived = |h: &mut RingPort| {
        let mut seqs = Vec::new();
        while let Some(p) = h.recv() {
            seqs.push(u64::from_be_bytes(p.data()[42..50].try_into().unwrap()));
        }
        seqs
    };
    for k in 0..5 {
        h0.send(pool.alloc_from(&build(&spec, k)).unwrap()).unwrap();
    }
    w0.poll(1_000);
    assert_eq!(arrived(&mut h1), vec![0, 1, 2, 3, 4], "sent by worker 0");

    // Worker 0 reports the lane apart; merged, in either order, the
    // interface shows what both workers sent on it.
    let lanes = w0.stats();
    assert!(!lanes.interfaces.contains_key("Ethernet1/2"));
    assert_eq!(lanes.lanes["Ethernet1/2"].tx_packets, 5);
    assert_eq!(lanes.lanes["Ethernet1/2"].queues[0].tx_packets, 5);
    for order in [[0, 1], [1, 0]] {
        let snaps = [w0.stats(), w1.stats()];
        let mut all = SwitchStats::default();
        for i in order {
            all.merge(snaps[i].clone());
        }
        assert!(all.lanes.is_empty());
        let e = &all.interfaces["Ethernet1/2"];
        assert_eq!((e.tx_packets, e.queues[0].tx_packets), (5, 5));
        let ingress = &all.interfaces["Ethernet1/1"];
        assert_eq!((ingress.rx_packets, ingress.rx_bytes), (5, e.tx_bytes));
    }

    // With a line rate the port's single scheduler counts: packets cross.
    let mut shaped = m.clone();
    shaped.interfaces[1].speed_mbps = Some(10_000);
    w0.apply(&shaped);
    w1.apply(&shaped);
    for k in 5..10 {
        h0.send(pool.alloc_from(&build(&spec, k)).unwrap()).unwrap();
    }
    w0.poll(2_000);
    assert_eq!(arrived(&mut h1), Vec::<u64>::new(), "handed to worker 1");
    w1.poll(3_000);
    w1.poll(100_000); // shaped: one frame every 67 ns of wire time
    assert_eq!(arrived(&mut h1), vec![5, 6, 7, 8, 9]);
    assert_eq!(w1.counters(1).unwrap().tx_packets, 5);
    assert_eq!(
        w0.counters(1).unwrap().tx_packets,
        5,
        "the lane sent no more"
    );
}
