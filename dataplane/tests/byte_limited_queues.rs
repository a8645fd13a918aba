//! An egress queue is bounded by bytes, not by a packet count: a paused
//! lossless queue fed 64-byte packets fills until the ingress priority
//! group's xOFF + headroom, holding many times the 4 096 packets a queue
//! was once capped at, and the first drop is `ingress_overflow`, never a
//! tail drop. A queue's sojourn histogram is kept for the queues a class
//! maps to, and added when a reload maps one more.

use std::net::Ipv4Addr;

use railyard_dataplane::model::{InterfaceModel, PgThresholds, QueueLimit, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::null::NullPort;
use railyard_dataplane::port::Port;
use railyard_dataplane::stats::InterfaceStats;
use railyard_dataplane::wire::{checksum, MacAddr};
use railyard_dataplane::{Pool, BURST_SIZE};

const PRIO: usize = 3;
const LEN: usize = 64;
const XOFF: u64 = 1_000_000;
/// With xOFF, 20 000 packets of 64 bytes exactly.
const HEADROOM: u64 = 280_000;
const HOLDS: u64 = (XOFF + HEADROOM) / LEN as u64;

fn port_mac(i: u8) -> MacAddr {
    MacAddr([2, 0xaa, 0, 0, 0, i])
}

/// A 64-byte UDP frame from the host behind port 0 to the host behind
/// port 1, DSCP 24 (the lossless class), not ECN-capable.
fn frame() -> Vec<u8> {
    let mut f = vec![0u8; LEN];
    f[0..6].copy_from_slice(&port_mac(0).0);
    f[6..12].copy_from_slice(&[2, 0xbb, 0, 0, 0, 0]);
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let h = &mut f[14..34];
    h[0] = 0x45;
    h[1] = 24 << 2;
    h[2..4].copy_from_slice(&((LEN - 14) as u16).to_be_bytes());
    h[8] = 64;
    h[9] = 17;
    h[12..16].copy_from_slice(&[10, 0, 0, 2]);
    h[16..20].copy_from_slice(&[10, 0, 1, 2]);
    let c = !checksum::data(h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    f[34..36].copy_from_slice(&4791u16.to_be_bytes());
    f[36..38].copy_from_slice(&4791u16.to_be_bytes());
    f[38..40].copy_from_slice(&((LEN - 34) as u16).to_be_bytes());
    f
}

/// The counters of the ingress (Ethernet1/1) and egress (Ethernet1/2) ports.
fn ends(sw: &Switch) -> (InterfaceStats, InterfaceStats) {
    let mut stats = sw.stats();
    let mut take = |name: &str| stats.interfaces.remove(name).expect(name);
    (take("Ethernet1/1"), take("Ethernet1/2"))
}

fn model() -> SwitchModel {
    let interfaces = (0..2u8)
        .map(|i| {
            let mut m = InterfaceModel::new(&format!("Ethernet1/{}", i + 1), port_mac(i));
            m.ipv4.push((Ipv4Addr::new(10, 0, i, 1), 24));
            m.dscp_to_qos_group[24] = PRIO as u8;
            m.pfc.enabled_priorities = 1 << PRIO;
            m.pfc.pg[PRIO] = PgThresholds {
                xoff_bytes: XOFF,
                xon_bytes: XOFF / 2,
                headroom_bytes: HEADROOM,
            };
            // A queue limit far below what the queue will hold: lossless
            // traffic is bounded by its ingress group, not by this.
            m.queues[PRIO].limit = QueueLimit::Bytes(10_000);
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

#[test]
fn a_paused_queue_of_64_byte_lossless_packets_fills_to_the_ingress_headroom() {
    let backends: Vec<Option<Box<dyn Port>>> = vec![
        Some(Box::new(NullPort::new("src", vec![frame()]))),
        Some(Box::new(NullPort::new("sink", Vec::new()))),
    ];
    // Room for every packet the group may hold, and bursts besides.
    let (mut sw, warnings) = Switch::new(&model(), backends, Pool::new(HOLDS as usize + 4096));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(sw.set_queue_paused(1, PRIO, true));
    let polls = HOLDS as usize / BURST_SIZE;
    assert_eq!(
        polls * BURST_SIZE,
        HOLDS as usize,
        "whole bursts to the limit"
    );
    let mut now = 0;
    for _ in 0..polls {
        now += 1_000;
        sw.poll(now);
    }
    let (ingress, egress) = ends(&sw);
    assert_eq!(ingress.total_drops(), 0, "{:?}", ingress.drops);
    assert_eq!(egress.total_drops(), 0, "{:?}", egress.drops);
    let q = sw.queues(1).unwrap();
    assert_eq!(q.depth_packets(PRIO) as u64, HOLDS);
    assert_eq!(q.depth_bytes(PRIO), XOFF + HEADROOM);
    const { assert!(HOLDS > 4 * 4096) };
    assert!(ingress.pfc.tx_pause[PRIO] >= 1, "XOFF at xOFF");

    // One more burst: the group's headroom is used up, so every packet of
    // it is an ingress overflow, and the egress queue drops none.
    now += 1_000;
    sw.poll(now);
    let (ingress, egress) = ends(&sw);
    assert_eq!(ingress.drops["ingress_overflow"], BURST_SIZE as u64);
    assert_eq!(ingress.total_drops(), BURST_SIZE as u64);
    assert_eq!(egress.total_drops(), 0, "{:?}", egress.drops);
    let q3 = &egress.queues[PRIO];
    assert_eq!((q3.tail_drops, q3.wred_drops), (0, 0));
    assert_eq!((q3.depth_packets, q3.max_depth_packets), (HOLDS, HOLDS));
    assert_eq!(q3.max_depth_bytes, XOFF + HEADROOM);

    // Resumed, the queue drains every packet it held.
    sw.set_queue_paused(1, PRIO, false);
    for _ in 0..HOLDS as usize / BURST_SIZE + 10 {
        now += 1_000;
        sw.poll(now);
    }
    let stats = sw.stats();
    assert!(stats.interfaces["Ethernet1/2"].queues[PRIO].tx_packets >= HOLDS);
}

#[test]
fn a_pool_that_runs_dry_first_is_a_counted_no_buffer_drop() {
    let backends: Vec<Option<Box<dyn Port>>> = vec![
        Some(Box::new(NullPort::new("src", vec![frame()]))),
        Some(Box::new(NullPort::new("sink", Vec::new()))),
    ];
    // Fewer buffers than the ingress group may hold.
    const BUFFERS: usize = 6_000;
    let (mut sw, _) = Switch::new(&model(), backends, Pool::new(BUFFERS));
    assert!(sw.set_queue_paused(1, PRIO, true));
    let polls = 400;
    for k in 1..=polls {
        sw.poll(k * 1_000);
    }
    let (ingress, egress) = ends(&sw);
    let held = sw.queues(1).unwrap().depth_packets(PRIO) as u64;
    assert!(held > 4096 && held <= BUFFERS as u64, "{held}");
    assert!(sw.stats().pool.exhausted > 0);
    // Every frame the source offered is held or counted as no_buffer.
    let offered = polls * BURST_SIZE as u64;
    assert_eq!(ingress.drops["no_buffer"], offered - held);
    assert_eq!(ingress.drops["ingress_overflow"], 0);
    assert_eq!(ingress.total_drops(), offered - held);
    assert_eq!(egress.queues[PRIO].tail_drops, 0);
    assert_eq!(egress.total_drops(), 0, "{:?}", egress.drops);
}

#[test]
fn sojourn_is_measured_in_the_queues_a_class_reaches_and_a_reload_adds_one() {
    let backends: Vec<Option<Box<dyn Port>>> = vec![
        Some(Box::new(NullPort::new("src", vec![frame()]))),
        Some(Box::new(NullPort::new("sink", Vec::new()))),
    ];
    let mut m = model();
    let (mut sw, _) = Switch::new(&m, backends, Pool::new(8192));
    let measured = |sw: &Switch| -> Vec<usize> {
        let q = sw.queues(1).unwrap();
        (0..8).filter(|&i| q.sojourn(i).measured()).collect()
    };
    // DSCP 24 -> qos-group 3; every other DSCP -> 0.
    assert_eq!(measured(&sw), [0, PRIO]);
    // Packets that wait are recorded: paused for 50 µs, then sent.
    assert!(sw.set_queue_paused(1, PRIO, true));
    sw.poll(1_000);
    sw.set_queue_paused(1, PRIO, false);
    for k in 0..100 {
        sw.poll(50_000 + k * 1_000);
    }
    let waited = sw.queues(1).unwrap().sojourn(PRIO).stats();
    assert!(waited.max >= 49_000, "{waited:?}");
    let count = sw.queues(1).unwrap().sojourn(PRIO).count();

    for i in &mut m.interfaces {
        i.dscp_to_qos_group[10] = 5;
    }
    sw.apply(&m);
    assert_eq!(measured(&sw), [0, PRIO, 5]);
    assert!(
        sw.queues(1).unwrap().sojourn(PRIO).count() >= count,
        "a reload keeps the histograms it had"
    );
}
