//! Closed-loop replay: a 3:1 lossless incast replayed from pcaps. Each trace
//! behaves as a PFC-honouring sender, so the switch's pauses hold the
//! senders back and the lossless class loses nothing; replayed open-loop,
//! the same traces overflow the ingress headroom.

use std::net::IpAddr;

use railyard_control::replay::ReplayOptions;
use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::model::{PfcDelays, PgThresholds, SwitchModel};
use railyard_pcap_tests::plan::{host_ip, host_mac, port_mac, routed_port};
use railyard_pcap_tests::{replay_model_with, ModelRun, Timed};

const SENDERS: usize = 3;
const EGRESS: usize = 3;
const PRIO: usize = 3;
const FRAME: usize = 1000;
const PER_SENDER: u64 = 400;
/// Gap between one sender's frames: line rate at 100 Gb/s.
const GAP: u64 = 80;

/// Four 100 Gb/s ports; DSCP 24 → qos-group 3, lossless everywhere, with
/// 20 kB of headroom.
fn model() -> SwitchModel {
    model_with_headroom(20_000)
}

/// As [`model`], with `headroom` bytes of headroom.
fn model_with_headroom(headroom: u64) -> SwitchModel {
    let interfaces = (0..=EGRESS)
        .map(|i| {
            let mut m = routed_port(i);
            m.speed_mbps = Some(100_000);
            m.dscp_to_qos_group[24] = PRIO as u8;
            m.pfc.enabled_priorities = 1 << PRIO;
            m.pfc.pg[PRIO] = PgThresholds {
                xoff_bytes: 40_000,
                xon_bytes: 20_000,
                headroom_bytes: headroom,
            };
            m
        })
        .collect();
    SwitchModel {
        hostname: "closed-loop".into(),
        interfaces,
        ..SwitchModel::default()
    }
}

fn data(sender: usize, seq: u64) -> Vec<u8> {
    let mut s = FrameSpec::udp(
        host_mac(sender),
        port_mac(sender),
        IpAddr::V4(host_ip(sender)),
        IpAddr::V4(host_ip(EGRESS)),
    );
    s.frame_len = FRAME;
    s.dscp = 24;
    s.src_port = 4000 + sender as u16;
    build(&s, seq)
}

fn replay(options: ReplayOptions) -> ModelRun {
    replay_on(&model(), options)
}

fn replay_on(model: &SwitchModel, options: ReplayOptions) -> ModelRun {
    let inputs: Vec<Vec<Timed>> = (0..SENDERS)
        .map(|i| {
            (0..PER_SENDER)
                .map(|k| (1_000 + k * GAP + i as u64, data(i, k)))
                .collect()
        })
        .collect();
    replay_model_with(model, &inputs, &options)
}

#[test]
fn a_closed_loop_lossless_incast_loses_nothing() {
    assert_lossless(&replay(ReplayOptions::default()));
}

/// Polling once a microsecond, the switch sees its ingress thresholds a
/// poll late (12.5 kB at 100 Gb/s) on top of the wire's response (16 kB);
/// a headroom that covers both holds, because the senders resume at line
/// rate. (Releasing their whole backlog at the instant of the XON overran
/// it: 41 drops on one sender.)
#[test]
fn polling_every_microsecond_the_incast_still_loses_nothing() {
    assert_lossless(&replay_on(
        &model_with_headroom(32_000),
        ReplayOptions {
            poll_interval: 1_000,
            ..ReplayOptions::default()
        },
    ));
}

fn assert_lossless(run: &ModelRun) {
    assert_lossless_within(run, 60_000);
}

/// As [`assert_lossless`], with the egress queue bounded by what the three
/// senders' groups may hold: `held` = xOFF + headroom each.
fn assert_lossless_within(run: &ModelRun, held: u64) {
    let s = &run.report.stats;
    let mut pauses = 0;
    for i in 0..SENDERS {
        let ifc = &s.interfaces[&format!("Ethernet1/{}", i + 1)];
        assert_eq!(ifc.drops["ingress_overflow"], 0, "sender {i}");
        assert_eq!(ifc.total_drops(), 0, "sender {i}: {:?}", ifc.drops);
        assert_eq!(ifc.rx_packets, PER_SENDER, "sender {i}");
        pauses += ifc.pfc.tx_pause[PRIO];
        assert!(ifc.pfc.tx_resume[PRIO] > 0, "sender {i}");
    }
    assert!(pauses > 0);
    let egress = &s.interfaces["Ethernet1/4"];
    assert_eq!(egress.total_drops(), 0, "{:?}", egress.drops);
    let sent: Vec<_> = run.out[EGRESS]
        .iter()
        .filter(|(_, f)| f.len() == FRAME)
        .collect();
    assert_eq!(sent.len() as u64, SENDERS as u64 * PER_SENDER);
    // The egress runs at line rate: 1200 frames take 96 µs however the
    // senders were held back, while the senders' traces lasted 32 µs.
    let last = sent.last().unwrap().0;
    assert!(last >= 1_000 + SENDERS as u64 * PER_SENDER * GAP, "{last}");
    // Held frames waited upstream, not in the switch: the queue stayed
    // within the senders' xOFF + headroom.
    let q = &egress.queues[PRIO];
    assert!(q.max_depth_bytes <= 3 * held, "{}", q.max_depth_bytes);
}

#[test]
fn the_same_incast_open_loop_overflows_the_headroom() {
    let run = replay(ReplayOptions {
        open_loop: true,
        ..ReplayOptions::default()
    });
    let s = &run.report.stats;
    let overflow: u64 = (0..SENDERS)
        .map(|i| s.interfaces[&format!("Ethernet1/{}", i + 1)].drops["ingress_overflow"])
        .sum();
    assert!(overflow > 0);
    let sent = run.out[EGRESS]
        .iter()
        .filter(|(_, f)| f.len() == FRAME)
        .count() as u64;
    assert_eq!(sent + overflow, SENDERS as u64 * PER_SENDER);
}

/// The senders keep sending for the wire's response time after each pause
/// (1 285 ns at 100 Gb/s with MTU 1500: the cable's round trip, a frame in
/// flight at each end, the peer's reaction), about 16 kB: a headroom of two
/// frames overflows, closed loop or not, where a sender that stopped the
/// instant the pause left the switch would have lost nothing.
#[test]
fn a_headroom_below_the_wires_response_overflows_even_closed_loop() {
    let run = replay_on(
        &model_with_headroom(2 * FRAME as u64),
        ReplayOptions::default(),
    );
    let s = &run.report.stats;
    let overflow: u64 = (0..SENDERS)
        .map(|i| s.interfaces[&format!("Ethernet1/{}", i + 1)].drops["ingress_overflow"])
        .sum();
    assert!(overflow > 0, "a 2 kB headroom held a 16 kB response");
    let sent = run.out[EGRESS]
        .iter()
        .filter(|(_, f)| f.len() == FRAME)
        .count() as u64;
    assert_eq!(sent + overflow, SENDERS as u64 * PER_SENDER);
}

/// Ingress overflow drops on the senders' ports of `run`, checking that
/// every frame was either forwarded or counted as one.
fn overflowed(run: &ModelRun) -> u64 {
    let s = &run.report.stats;
    let overflow: u64 = (0..SENDERS)
        .map(|i| s.interfaces[&format!("Ethernet1/{}", i + 1)].drops["ingress_overflow"])
        .sum();
    let sent = run.out[EGRESS]
        .iter()
        .filter(|(_, f)| f.len() == FRAME)
        .count() as u64;
    assert_eq!(sent + overflow, SENDERS as u64 * PER_SENDER);
    overflow
}

/// Replay waits out each port's configured delays. The 20 kB headroom
/// that holds the standard 100 m of cable (1 286 ns of response at
/// 100 Gb/s, about 16 kB) overflows when the ports say 500 m: a round trip
/// of 2 × 500 m × 5 ns/m = 5 000 ns, 5 286 ns of response in all, in which
/// a sender at 100 Gb/s puts 66 kB beyond xOFF. The default headroom
/// derived from the same 500 m (2 × 1542 + 62 500 + 480 = 66 064 bytes)
/// is lossless again.
#[test]
fn a_longer_configured_cable_overflows_a_headroom_its_derived_default_holds() {
    let long = PfcDelays {
        cable_metres: 500,
        ..PfcDelays::default()
    };
    let with_cable = |mut m: SwitchModel, headroom: Option<u64>| {
        for ifc in &mut m.interfaces {
            ifc.pfc.delays = long;
            if let Some(h) = headroom {
                ifc.pfc.pg[PRIO].headroom_bytes = h;
            }
        }
        m
    };
    assert_eq!(overflowed(&replay(ReplayOptions::default())), 0, "100 m");
    let run = replay_on(&with_cable(model(), None), ReplayOptions::default());
    let lost = overflowed(&run);
    assert!(lost > 0, "a 20 kB headroom held 500 m of cable");

    let derived = PgThresholds::default_for(Some(100_000), 1500, 8 << 20, &long).headroom_bytes;
    assert_eq!(derived, 2 * 1542 + 62_500 + 480);
    let run = replay_on(
        &with_cable(model(), Some(derived)),
        ReplayOptions::default(),
    );
    assert_lossless_within(&run, 40_000 + derived);
}
