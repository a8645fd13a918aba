//! PFC across two switches in one process, in virtual time: hosts 1 and 2
//! send lossless traffic through switch A to switch B, where it meets host
//! 3's lossless traffic and host 4's lossy traffic on one 100 Gb/s port (a
//! 3:1 incast). B pauses A's uplink and host 3; A's uplink queue builds and
//! A pauses hosts 1 and 2 (all closed-loop senders). Nothing is lost in the
//! lossless class end to end, while the lossy class drops; both switches
//! conserve their counters.

use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::clock::{Clock, Nanos, VirtualClock};
use railyard_dataplane::model::{
    InterfaceModel, NextHopModel, PgThresholds, QueueLimit, RouteModel, RouteSource, SwitchModel,
};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::RingLink;
use railyard_dataplane::port::trace::TracePort;
use railyard_dataplane::port::upstream::PfcUpstream;
use railyard_dataplane::port::Port;
use railyard_dataplane::stats::{InterfaceStats, SwitchStats};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::Pool;

const PRIO: usize = 3;
const FRAME: usize = 1000;
const PER_SENDER: u64 = 300;
/// 1000-byte frames every 80 ns: 100 Gb/s.
const LINE: Nanos = 80;

fn mac(sw: u8, i: usize) -> MacAddr {
    MacAddr([2, 0xaa, sw, 0, 0, i as u8 + 1])
}

fn host_mac(n: u8) -> MacAddr {
    MacAddr([2, 0, 0, 0, 0, n])
}

fn host_ip(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, n, 2)
}

const RECEIVER: u8 = 9;
/// The A–B link: A is .1, B is .2.
fn link_ip(end: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, 100, end)
}

/// A 100 Gb/s port, DSCP 24 → lossless qos-group 3, queues 0 and 3 sharing
/// the port half and half, the lossy queue limited to 20 KB.
fn port(sw: u8, i: usize, ip: Ipv4Addr, peer: (Ipv4Addr, MacAddr)) -> InterfaceModel {
    let mut m = InterfaceModel::new(&format!("Ethernet1/{}", i + 1), mac(sw, i));
    m.ipv4.push((ip, 24));
    m.static_arp.push(peer);
    m.speed_mbps = Some(100_000);
    m.dscp_to_qos_group[24] = PRIO as u8;
    m.pfc.enabled_priorities = 1 << PRIO;
    m.pfc.pg[PRIO] = PgThresholds {
        xoff_bytes: 40_000,
        xon_bytes: 20_000,
        headroom_bytes: 30_000,
    };
    m.queues[0].bandwidth_remaining_percent = Some(50);
    m.queues[0].limit = QueueLimit::Bytes(20_000);
    m.queues[PRIO].bandwidth_remaining_percent = Some(50);
    m
}

fn on_link(n: u8) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, n, 1)
}

/// A: hosts 1 and 2, uplink to B; routes the receiver's subnet to B.
fn switch_a() -> SwitchModel {
    let interfaces = vec![
        port(1, 0, on_link(1), (host_ip(1), host_mac(1))),
        port(1, 1, on_link(2), (host_ip(2), host_mac(2))),
        port(1, 2, link_ip(1), (link_ip(2), mac(2, 0))),
    ];
    SwitchModel {
        hostname: "a".into(),
        interfaces,
        routes: vec![RouteModel {
            source: RouteSource::Static,
            prefix: IpAddr::V4(Ipv4Addr::new(10, 0, RECEIVER, 0)),
            len: 24,
            next_hops: vec![NextHopModel::Gateway {
                addr: IpAddr::V4(link_ip(2)),
                port: None,
            }],
        }],
        ..SwitchModel::default()
    }
}

/// B: downlink from A, hosts 3 and 4, and the receiver.
fn switch_b() -> SwitchModel {
    let interfaces = vec![
        port(2, 0, link_ip(2), (link_ip(1), mac(1, 2))),
        port(2, 1, on_link(3), (host_ip(3), host_mac(3))),
        port(2, 2, on_link(4), (host_ip(4), host_mac(4))),
        port(
            2,
            3,
            on_link(RECEIVER),
            (host_ip(RECEIVER), host_mac(RECEIVER)),
        ),
    ];
    SwitchModel {
        hostname: "b".into(),
        interfaces,
        ..SwitchModel::default()
    }
}

/// Host `n`'s frames to the receiver at `gap` ns apart, into `port_mac`.
fn sender(n: u8, port_mac: MacAddr, dscp: u8, gap: Nanos) -> Vec<(Nanos, Vec<u8>)> {
    let mut s = FrameSpec::udp(
        host_mac(n),
        port_mac,
        IpAddr::V4(host_ip(n)),
        IpAddr::V4(host_ip(RECEIVER)),
    );
    s.frame_len = FRAME;
    s.dscp = dscp;
    s.src_port = 4000 + u16::from(n);
    (0..PER_SENDER)
        .map(|k| (1_000 + k * gap + u64::from(n), build(&s, k)))
        .collect()
}

fn closed(m: &SwitchModel, i: usize, frames: Vec<(Nanos, Vec<u8>)>) -> Option<Box<dyn Port>> {
    let ifc = &m.interfaces[i];
    let p = TracePort::new(&ifc.name, frames).closed_loop(PfcUpstream::for_interface(ifc));
    Some(Box::new(p))
}

fn run() -> (SwitchStats, SwitchStats) {
    let (ma, mb) = (switch_a(), switch_b());
    let (up, down, _) = RingLink::pair("a-b", 4096);
    // Hosts 1 and 2 at 50 Gb/s each fill A's uplink exactly; B's egress
    // gets 100 Gb/s from A, 100 from host 3 and 100 (lossy) from host 4.
    let a_ports = vec![
        closed(&ma, 0, sender(1, mac(1, 0), 24, 2 * LINE)),
        closed(&ma, 1, sender(2, mac(1, 1), 24, 2 * LINE)),
        Some(Box::new(up) as Box<dyn Port>),
    ];
    let b_ports = vec![
        Some(Box::new(down) as Box<dyn Port>),
        closed(&mb, 1, sender(3, mac(2, 1), 24, LINE)),
        closed(&mb, 2, sender(4, mac(2, 2), 0, LINE)),
        closed(&mb, 3, Vec::new()),
    ];
    let (mut a, wa) = Switch::new(&ma, a_ports, Pool::new(8192));
    let (mut b, wb) = Switch::new(&mb, b_ports, Pool::new(8192));
    assert!(wa.is_empty() && wb.is_empty(), "{wa:?} {wb:?}");
    let clock = Arc::new(VirtualClock::new(0));
    let mut stuck_since: Option<Nanos> = None;
    loop {
        let now = clock.now();
        if a.poll(now) + b.poll(now) > 0 {
            stuck_since = None;
            continue;
        }
        let next = [
            a.next_rx_time(),
            a.next_departure(),
            b.next_rx_time(),
            b.next_departure(),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some(t) if t > now => {
                stuck_since = None;
                clock.advance_to(t);
            }
            None if a.idle() && b.idle() => break,
            _ => {
                // Paused queues wait for their timers: step time forward.
                let since = *stuck_since.get_or_insert(now);
                assert!(now - since < 100_000_000, "the fabric is wedged");
                clock.advance_by(1_000);
            }
        }
    }
    a.finish().unwrap();
    b.finish().unwrap();
    (a.stats(), b.stats())
}

fn pfc_frames(i: &InterfaceStats) -> (u64, u64) {
    let rx = i.pfc.rx_pause.iter().sum::<u64>() + i.pfc.rx_resume.iter().sum::<u64>();
    let tx = i.pfc.tx_pause.iter().sum::<u64>() + i.pfc.tx_resume.iter().sum::<u64>();
    (rx, tx)
}

/// received = sent + dropped + queued per queue and switch-wide, PFC frames
/// (consumed on receive, generated on send) set apart.
fn assert_conserved(name: &str, s: &SwitchStats) {
    let (mut rx, mut tx, mut drops, mut queued) = (0, 0, 0, 0);
    for (ifname, i) in &s.interfaces {
        let (prx, ptx) = pfc_frames(i);
        rx += i.rx_packets - prx;
        tx += i.tx_packets - ptx;
        drops += i.total_drops();
        for q in &i.queues {
            assert_eq!(
                q.offered_packets,
                q.tx_packets + q.wred_drops + q.tail_drops + q.depth_packets,
                "{name} {ifname} queue {}",
                q.queue
            );
            queued += q.depth_packets;
        }
    }
    assert_eq!(rx, tx + drops + queued, "{name}: switch-wide conservation");
}

#[test]
fn pauses_cascade_back_through_a_switch_and_nothing_lossless_is_lost() {
    let (a, b) = run();
    assert_conserved("A", &a);
    assert_conserved("B", &b);
    let b_down = &b.interfaces["Ethernet1/1"];
    let a_up = &a.interfaces["Ethernet1/3"];
    // B paused A, and A honoured it: its uplink's lossless queue built.
    assert!(b_down.pfc.tx_pause[PRIO] > 0, "B never paused A");
    assert!(a_up.pfc.rx_pause[PRIO] > 0);
    assert!(a_up.pfc.paused_ns[PRIO] > 0);
    assert!(a_up.queues[PRIO].max_depth_bytes > 40_000);
    // A in turn paused its senders.
    for h in ["Ethernet1/1", "Ethernet1/2"] {
        assert!(a.interfaces[h].pfc.tx_pause[PRIO] > 0, "A never paused {h}");
    }
    assert!(b.interfaces["Ethernet1/2"].pfc.tx_pause[PRIO] > 0);
    // Lossless: every frame of hosts 1-3 reached the receiver.
    for s in [&a, &b] {
        for (n, i) in &s.interfaces {
            assert_eq!(i.drops["ingress_overflow"], 0, "{n}");
            assert_eq!(
                i.queues[PRIO].tail_drops + i.queues[PRIO].wred_drops,
                0,
                "{n}"
            );
        }
    }
    let egress = &b.interfaces["Ethernet1/4"];
    assert_eq!(egress.queues[PRIO].tx_packets, 3 * PER_SENDER);
    // Lossy: host 4 is not paused and its queue overflows.
    assert!(egress.queues[0].tail_drops > 0, "{:?}", egress.queues[0]);
    assert_eq!(
        egress.queues[0].tx_packets + egress.queues[0].tail_drops,
        PER_SENDER
    );
}
