//! Faults at the egress port while traffic flows: frames the backend fails
//! to send are `tx_error` drops, never transmitted; a port whose link goes
//! down sends nothing, drops what waits for it as `link_down` and what is
//! routed to it as `interface_down`, and forwards again when it comes back.
//! In every case the switch's counters account for every frame received.

use std::net::Ipv4Addr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::packet::{free_front, Burst};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::null::NullPort;
use railyard_dataplane::port::ring::RingLink;
use railyard_dataplane::port::{IoCounters, Port, TxDone};
use railyard_dataplane::stats::SwitchStats;
use railyard_dataplane::wire::{checksum, MacAddr};
use railyard_dataplane::Pool;

const LEN: usize = 100;

fn port_mac(i: u8) -> MacAddr {
    MacAddr([2, 0xaa, 0, 0, 0, i])
}

/// A UDP frame from the host behind port 0 to the host behind port 1.
fn frame() -> Vec<u8> {
    let mut f = vec![0u8; LEN];
    f[0..6].copy_from_slice(&port_mac(0).0);
    f[6..12].copy_from_slice(&[2, 0xbb, 0, 0, 0, 0]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let h = &mut f[14..34];
    h[0] = 0x45;
    h[2..4].copy_from_slice(&((LEN - 14) as u16).to_be_bytes());
    h[8] = 64;
    h[9] = 17;
    h[12..16].copy_from_slice(&[10, 0, 0, 2]);
    h[16..20].copy_from_slice(&[10, 0, 1, 2]);
    let c = !checksum::data(h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    f[34..36].copy_from_slice(&5000u16.to_be_bytes());
    f[36..38].copy_from_slice(&5001u16.to_be_bytes());
    f[38..40].copy_from_slice(&((LEN - 34) as u16).to_be_bytes());
    f
}

/// Two routed ports, the host behind Ethernet1/2 known by a static entry.
fn model() -> SwitchModel {
    let interfaces = (0..2u8)
        .map(|i| {
            let mut m = InterfaceModel::new(&format!("Ethernet1/{}", i + 1), port_mac(i));
            m.ipv4.push((Ipv4Addr::new(10, 0, i, 1), 24));
            m
        })
        .collect::<Vec<_>>();
    let mut model = SwitchModel {
        interfaces,
        ..SwitchModel::default()
    };
    model.interfaces[1]
        .static_arp
        .push((Ipv4Addr::new(10, 0, 1, 2), MacAddr([2, 0xbb, 0, 0, 0, 1])));
    model
}

/// A backend that sends the first frame of every burst and fails the rest,
/// as a link vanishing under a `sendmmsg` does; it tells how many of each.
struct Refusing {
    sent: Arc<AtomicUsize>,
    failed: Arc<AtomicUsize>,
}

impl Port for Refusing {
    fn rx_burst(&mut self, _pool: &Pool, _burst: &mut Burst, _now: Nanos) -> usize {
        0
    }

    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> TxDone {
        let n = burst.len();
        let sent = n.min(1);
        let failed_bytes = burst[sent..].iter().map(|p| p.len() as u64).sum();
        free_front(burst, n);
        self.sent.fetch_add(sent, Ordering::Relaxed);
        self.failed.fetch_add(n - sent, Ordering::Relaxed);
        TxDone {
            sent,
            failed: n - sent,
            failed_bytes,
        }
    }

    fn io_counters(&self) -> IoCounters {
        IoCounters::default()
    }

    fn describe(&self) -> String {
        "refusing".to_string()
    }
}

/// Every frame received is sent, dropped for a reason, or still queued.
fn assert_conserved(stats: &SwitchStats) {
    let mut rx = 0;
    let mut out = 0;
    for i in stats.interfaces.values() {
        rx += i.rx_packets;
        out += i.tx_packets + i.total_drops() + i.punted;
        out += i.queues.iter().map(|q| q.depth_packets).sum::<u64>();
    }
    assert_eq!(rx, out, "{stats:#?}");
}

#[test]
fn frames_the_backend_fails_to_send_are_tx_error_drops_not_transmitted() {
    let sent = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicUsize::new(0));
    let backends: Vec<Option<Box<dyn Port>>> = vec![
        Some(Box::new(NullPort::new("src", vec![frame()]))),
        Some(Box::new(Refusing {
            sent: Arc::clone(&sent),
            failed: Arc::clone(&failed),
        })),
    ];
    let (mut sw, warnings) = Switch::new(&model(), backends, Pool::new(4096));
    assert!(warnings.is_empty(), "{warnings:?}");
    for t in 1..=50 {
        sw.poll(t * 1_000);
    }
    let stats = sw.stats();
    let egress = &stats.interfaces["Ethernet1/2"];
    let (sent, failed) = (
        sent.load(Ordering::Relaxed) as u64,
        failed.load(Ordering::Relaxed) as u64,
    );
    assert!(sent > 0 && failed > sent, "sent {sent}, failed {failed}");
    assert_eq!(egress.tx_packets, sent);
    assert_eq!(egress.tx_bytes, sent * LEN as u64);
    assert_eq!(egress.drops["tx_error"], failed);
    assert_eq!(egress.total_drops(), failed, "{:?}", egress.drops);
    assert_conserved(&stats);
}

#[test]
fn a_port_whose_link_goes_down_drops_what_waits_for_it_and_forwards_again_when_up() {
    // A short cable nobody reads: the egress queue fills behind it.
    let (egress_end, mut far_end, link) = RingLink::pair("out", 64);
    let backends: Vec<Option<Box<dyn Port>>> = vec![
        Some(Box::new(NullPort::new("src", vec![frame()]))),
        Some(Box::new(egress_end)),
    ];
    let (mut sw, _) = Switch::new(&model(), backends, Pool::new(16_384));
    let mut now = 0;
    let mut run = |sw: &mut Switch, polls: u64| {
        for _ in 0..polls {
            now += 1_000;
            sw.poll(now);
        }
    };
    run(&mut sw, 20);
    let before = sw.stats();
    let queued: u64 = before.interfaces["Ethernet1/2"]
        .queues
        .iter()
        .map(|q| q.depth_packets)
        .sum();
    assert!(
        queued > 0,
        "the queue holds frames before the link goes down"
    );
    assert_eq!(before.interfaces["Ethernet1/2"].tx_packets, 64);

    link.set_up(false);
    run(&mut sw, 200);
    let down = sw.stats();
    let egress = &down.interfaces["Ethernet1/2"];
    assert!(!egress.link_up);
    assert_eq!(egress.tx_packets, 64, "nothing is sent on a down link");
    // What waited (the queues and the burst the full ring refused) is
    // dropped as link_down, nothing else there.
    assert!(egress.drops["link_down"] >= queued, "{:?}", egress.drops);
    assert_eq!(egress.total_drops(), egress.drops["link_down"]);
    assert_eq!(
        egress.queues.iter().map(|q| q.depth_packets).sum::<u64>(),
        0,
        "the queues are empty"
    );
    // New traffic toward it is refused where it comes in.
    let ingress = &down.interfaces["Ethernet1/1"];
    assert!(ingress.drops["interface_down"] > 0, "{:?}", ingress.drops);
    assert_conserved(&down);

    // Up again, the far end reading: traffic flows once more.
    while far_end.recv().is_some() {}
    link.set_up(true);
    let link_down_drops = egress.drops["link_down"];
    for _ in 0..50 {
        run(&mut sw, 1);
        while far_end.recv().is_some() {}
    }
    let up = sw.stats();
    let egress = &up.interfaces["Ethernet1/2"];
    assert!(egress.link_up);
    assert!(egress.tx_packets > 64 + 1_000, "{}", egress.tx_packets);
    assert_eq!(egress.drops["link_down"], link_down_drops);
    assert_conserved(&up);
}
