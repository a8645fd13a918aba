//! The live lab's sustained incast (control/tests/lab_fabric.rs,
//! `sustained_incast_on_a_two_switch_chain_loses_nothing_between_them` and
//! `sustained_incast_on_rail_spine_loses_nothing_between_switches`) in
//! virtual time, with what makes a software path slow to respond modelled:
//! every cable has the default cable's delay, and every switch has worker
//! scheduling gaps — 20 to 50 ms unpolled, four times a second — as
//! measured on a two-core host running four switches.
//!
//! The lab's numbers: switch–switch links at 1 Gb/s, the incast target
//! (h4 on rail 2 / sw2, Ethernet1/4) at 100 Mb/s, the other host ports at
//! 100 Gb/s; N senders (h1..hN on rail 1 / sw1) each send 8 RoCEv2 flows of
//! 1066-byte frames (`railyard send`'s default 1024-byte payload) in the
//! lossless class at 100 Mb/s in all (13 Mb/s on the wire per flow); the
//! lossless class has `pause buffer-size 9000000 pause-threshold 1000000
//! resume-threshold 500000` (xOFF 1 MB, xON 500 KB, 8 MB of headroom) and
//! no watchdog. The hosts, like the lab's kernel stacks, ignore PFC, so
//! rail 1's host ports overflow; nothing may be lost between switches.
//!
//! Settings, so the model can be seen not to flatter:
//! (a) the lab's policy under the measured gaps: no loss on any
//!     switch–switch port, 2:1 and 3:1; and the software default headroom
//!     under gaps no longer than the response time it is sized for
//!     ([`SOFTWARE_RESPONSE_NS`]): no loss either;
//! (b) the measured gaps with a wire's headroom (`pause buffer-size` = xOFF
//!     + what a 100 m cable and the peer's hardware need at 1 Gb/s): the
//!     switch–switch ports overflow, and count it; and the software
//!     default headroom, when the measured gaps outlast what it covers;
//! (c) PFC off: the congestion point drops, and counts it.
//!
//! Each run prints the counters the lab test prints, under the lab's names
//! (rail1/sw1 is leaf 0, its uplinks Ethernet1/31 and 1/32), to be read
//! beside it. Virtual time is the lab's 10 s of sending, then the drain; a
//! run takes one to two seconds of wall time in a debug build.

use std::fmt::Write;

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::pfc::{bytes_at, SOFTWARE_RESPONSE_NS};
use railyard_dataplane::model::{PfcDelays, PgThresholds};
use railyard_dataplane::stats::{InterfaceStats, SwitchStats};
use railyard_pcap_tests::fabric::{
    Flow, Gaps, HostId, Lossless, Outcome, TwoTier, CABLE_DELAY_NS, ROCE_QUEUE,
};

/// Seconds of virtual time each sender sends for.
const SECS: u64 = 10;
/// The lab's frame: 1024-byte UDP payload, UDP, IPv4 and Ethernet headers.
const FRAME: usize = 1066;
/// Flows per sender, as `railyard send --flows 8`.
const FLOWS: u16 = 8;
/// Wire rate of each flow: 8 × 13 Mb/s of 1090-byte wire frames carries a
/// little more than the lab's 100 Mb/s of 1066-byte frames.
const FLOW_MBPS: u32 = 13;
/// `railyard send`'s first source port.
const SPORT: u16 = 49152;
const UPLINK_MBPS: u32 = 1000;
const TARGET_MBPS: u32 = 100;
/// The incast target: h4's port on rail 2 (sw2).
const TARGET: HostId = HostId { leaf: 1, host: 3 };

/// The lab's explicit policy on the lossless class.
const LAB_POLICY: PgThresholds = PgThresholds {
    xoff_bytes: 1_000_000,
    xon_bytes: 500_000,
    headroom_bytes: 9_000_000 - 1_000_000,
};

/// The gaps measured on a two-core host running four switches: 20 to
/// 50 ms without a poll, several times a second.
fn measured_gaps() -> Gaps {
    Gaps::per_second(4, 20_000_000, 50_000_000, 0x5eed)
}

/// The lab's policy with the headroom a wire needs at 1 Gb/s (two largest
/// frames, the cable's round trip, the peer's hardware response) instead of
/// 8 MB: enough where a peer stops within microseconds.
fn wire_headroom_policy() -> PgThresholds {
    PgThresholds {
        headroom_bytes: PgThresholds::default_for(
            Some(UPLINK_MBPS),
            1500,
            0,
            &PfcDelays::default(),
        )
        .headroom_bytes,
        ..LAB_POLICY
    }
}

/// The lab's topology: the chain (sw1, sw2) or rail-spine (rail1, rail2,
/// spine1, spine2), at the lab's speeds, with `lossless`.
fn lab(chain: bool, lossless: Lossless) -> TwoTier {
    let mut t = if chain {
        TwoTier::chain(4)
    } else {
        TwoTier::new(2, 2, 4)
    };
    t.uplink_speed_mbps = UPLINK_MBPS;
    t.host_port_speeds = vec![(TARGET, TARGET_MBPS)];
    t.lossless = lossless;
    t.cable_delay_ns = CABLE_DELAY_NS;
    t.pool_buffers = 1 << 17;
    t
}

/// Hosts h1..=`senders` of rail 1 each send [`FLOWS`] interleaved flows to
/// h4 on rail 2 for [`SECS`] seconds.
fn incast(senders: usize) -> Vec<Flow> {
    let spacing = probe().burst_ns().max(1);
    let per_flow = (SECS * 1_000_000_000 / spacing) as u32;
    (0..senders)
        .flat_map(|h| {
            (0..FLOWS).map(move |f| {
                Flow::elephant(
                    HostId::new(0, h),
                    TARGET,
                    SPORT + f,
                    FRAME,
                    FLOW_MBPS,
                    spacing * u64::from(f) / u64::from(FLOWS) + h as Nanos * 1_000,
                    per_flow,
                    1,
                    0,
                )
            })
        })
        .collect()
}

/// One frame of one flow, to read the spacing from.
fn probe() -> Flow {
    Flow::elephant(
        HostId::new(0, 0),
        TARGET,
        SPORT,
        FRAME,
        FLOW_MBPS,
        0,
        1,
        1,
        0,
    )
}

/// The lab's name of leaf `l`.
fn leaf_name(t: &TwoTier, l: usize) -> String {
    if t.chain {
        format!("sw{}", l + 1)
    } else {
        format!("rail{}", l + 1)
    }
}

/// The ports of a run that face another switch, under the lab's names:
/// (switch, port, counters).
fn switch_ports(t: &TwoTier, out: &Outcome) -> Vec<(String, String, InterfaceStats)> {
    let mut v = Vec::new();
    for (l, s) in out.leaves.iter().enumerate() {
        for up in 0..t.spines {
            let i = s.interfaces[&t.uplink_name(up)].clone();
            v.push((leaf_name(t, l), format!("Ethernet1/{}", 31 + up), i));
        }
    }
    for (sp, s) in out.spines.iter().enumerate() {
        for (name, i) in &s.interfaces {
            v.push((format!("spine{}", sp + 1), name.clone(), i.clone()));
        }
    }
    v
}

/// The drop reasons of a port that counted any.
fn nonzero(i: &InterfaceStats) -> Vec<(&str, u64)> {
    i.drops
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(r, n)| (r.as_str(), *n))
        .collect()
}

fn drop(i: &InterfaceStats, reason: &str) -> u64 {
    i.drops.get(reason).copied().unwrap_or(0)
}

/// What a lossless run's switch–switch ports lost, summed: (ingress
/// overflow, lossless-queue tail and WRED drops, other lossless-relevant
/// drops), and the XOFF frames they sent. Prints each port as the lab does.
fn report(label: &str, t: &TwoTier, out: &Outcome) -> (u64, u64, u64, u64) {
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{label}: {} virtual ms, gaps that deferred a poll per switch {:?}, ring refusals {}, \
         blind steps {}",
        out.end_ns / 1_000_000,
        out.gaps,
        out.ring_full,
        out.blind_steps
    );
    let (mut overflow, mut queue, mut other, mut xoff) = (0, 0, 0, 0);
    for (sw, port, i) in switch_ports(t, out) {
        let q = &i.queues[ROCE_QUEUE];
        let _ = writeln!(
            text,
            "  {sw} {port}: rx {} tx {}, XOFF sent {} received {}, ingress peak {} B, \
             queue 3 max {} B, drops {:?}",
            i.rx_packets,
            i.tx_packets,
            i.pfc.tx_pause[ROCE_QUEUE],
            i.pfc.rx_pause[ROCE_QUEUE],
            i.pfc.ingress_peak_bytes[ROCE_QUEUE],
            q.max_depth_bytes,
            nonzero(&i)
        );
        overflow += drop(&i, "ingress_overflow");
        queue += q.tail_drops + q.wred_drops;
        other += drop(&i, "no_buffer") + i.backend_rx_dropped;
        xoff += i.pfc.tx_pause[ROCE_QUEUE];
    }
    let target = target_port(out);
    let tq = &target.queues[ROCE_QUEUE];
    let _ = writeln!(
        text,
        "  {} Ethernet1/4 (the incast target): tx {}, queue 3 max {} B, tail drops {}, \
         WRED drops {}, ECN marked {}",
        leaf_name(t, TARGET.leaf),
        target.tx_packets,
        tq.max_depth_bytes,
        tq.tail_drops,
        tq.wred_drops,
        tq.ecn_marked
    );
    let _ = writeln!(
        text,
        "  {} host ports dropped {} (PFC-deaf senders); all drops {:?}",
        leaf_name(t, 0),
        host_drops(out),
        out.drops()
    );
    // One write, so runs in parallel tests do not interleave.
    eprint!("{text}");
    (overflow, queue, other, xoff)
}

fn target_port(out: &Outcome) -> InterfaceStats {
    out.leaves[TARGET.leaf].interfaces[&format!("Ethernet1/{}", TARGET.host + 1)].clone()
}

/// Lossless drops at rail 1's host ports (the senders ignore PFC).
fn host_drops(out: &Outcome) -> u64 {
    let s: &SwitchStats = &out.leaves[0];
    (0..4)
        .map(|h| {
            let i = &s.interfaces[&format!("Ethernet1/{}", h + 1)];
            drop(i, "ingress_overflow") + i.backend_rx_dropped
        })
        .sum()
}

fn run(chain: bool, lossless: Lossless, gaps: Gaps, senders: usize) -> (TwoTier, Outcome) {
    let mut t = lab(chain, lossless);
    t.gaps = Some(gaps);
    let out = t.run(&incast(senders));
    (t, out)
}

fn name(chain: bool) -> &'static str {
    if chain {
        "chain"
    } else {
        "rail-spine"
    }
}

/// Gaps no longer than the response the software default is sized for.
fn gaps_within_the_default() -> Gaps {
    Gaps::per_second(4, SOFTWARE_RESPONSE_NS / 2, SOFTWARE_RESPONSE_NS, 0x5eed)
}

/// Asserts nothing was lost between switches and a pause was exercised.
fn assert_lossless(label: &str, t: &TwoTier, out: &Outcome) {
    let (overflow, queue, other, xoff) = report(label, t, out);
    assert_eq!(out.ring_full, 0, "{label}: a cable ring filled");
    assert!(out.gaps.iter().all(|g| *g > 0), "{label}: {:?}", out.gaps);
    assert_eq!(overflow, 0, "{label}: ingress overflow between switches");
    assert_eq!(queue, 0, "{label}: lossless queue drops between switches");
    assert_eq!(other, 0, "{label}: buffer or ring drops between switches");
    assert!(xoff > 0, "{label}: no switch paused another");
    assert!(host_drops(out) > 0, "{label}: rail 1 never congested");
}

/// (a): with the lab's policy nothing is lost between switches, though
/// every switch sits out gaps of up to 50 ms and the senders' ports drop;
/// the software default headroom holds under gaps it is sized for.
fn lossless(chain: bool) {
    for senders in [2, 3] {
        let lab_policy = Lossless::Thresholds(LAB_POLICY);
        let (t, out) = run(chain, lab_policy, measured_gaps(), senders);
        let label = format!("{} {senders}:1, lab policy, gaps 20-50 ms", name(chain));
        assert_lossless(&label, &t, &out);
    }
    let (t, out) = run(
        chain,
        Lossless::SoftwareDefault,
        gaps_within_the_default(),
        3,
    );
    let label = format!(
        "{} 3:1, software default headroom, gaps {}-{} ms",
        name(chain),
        SOFTWARE_RESPONSE_NS / 2_000_000,
        SOFTWARE_RESPONSE_NS / 1_000_000
    );
    assert_lossless(&label, &t, &out);
}

/// (b) and (c): headroom short of the gaps overflows between switches, and
/// without PFC the congestion point drops; both counted.
fn not_flattered(chain: bool) {
    let (t, out) = run(
        chain,
        Lossless::Thresholds(wire_headroom_policy()),
        measured_gaps(),
        3,
    );
    let label = format!("{} 3:1, wire headroom, gaps 20-50 ms", name(chain));
    let (overflow, _, _, xoff) = report(&label, &t, &out);
    assert_eq!(out.ring_full, 0, "{label}: a cable ring filled");
    assert!(xoff > 0, "{label}: no switch paused another");
    assert!(overflow > 0, "{label}: a wire's headroom covered the gaps");

    // The software default covers SOFTWARE_RESPONSE_NS; the measured gaps,
    // while they outlast it by more than the default's headroom, overflow.
    let (t, out) = run(chain, Lossless::SoftwareDefault, measured_gaps(), 3);
    let label = format!(
        "{} 3:1, software default headroom, gaps 20-50 ms",
        name(chain)
    );
    let (overflow, _, _, _) = report(&label, &t, &out);
    let headroom = PfcDelays::default().software_headroom_bytes(Some(UPLINK_MBPS), 1500);
    let shortest = bytes_at(measured_gaps().min_ns, Some(UPLINK_MBPS));
    eprintln!("  software default headroom {headroom} B; a 20 ms gap at 1 Gb/s is {shortest} B");
    if headroom < shortest {
        assert!(overflow > 0, "{label}: a headroom short of every gap held");
    }

    let (t, out) = run(chain, Lossless::Off, measured_gaps(), 2);
    let label = format!("{} 2:1, PFC off, gaps 20-50 ms", name(chain));
    let (_, _, _, xoff) = report(&label, &t, &out);
    let q = &target_port(&out).queues[ROCE_QUEUE];
    assert_eq!(xoff, 0);
    assert!(
        q.tail_drops + q.wred_drops > 0,
        "{label}: no drops at the congestion point"
    );
}

#[test]
fn sustained_incast_on_a_two_switch_chain_loses_nothing_between_them_in_virtual_time() {
    lossless(true);
}

#[test]
fn sustained_incast_on_a_two_switch_chain_overflows_short_headroom_in_virtual_time() {
    not_flattered(true);
}

#[test]
fn sustained_incast_on_rail_spine_loses_nothing_between_switches_in_virtual_time() {
    lossless(false);
}

#[test]
fn sustained_incast_on_rail_spine_overflows_short_headroom_in_virtual_time() {
    not_flattered(false);
}
