//! ECMP, flowlet and per-packet balancing across real switches: leaves and
//! spines of railyard on in-memory cables in virtual time
//! (`railyard_pcap_tests::fabric`), every path the same delay, so whatever
//! a receiver sees out of order was reordered by queueing on different
//! uplinks.
//!
//! * Two elephants that ECMP hashes onto one uplink are split by flowlet DLB
//!   when they send in bursts separated by more than the flowlet aging.
//! * Within a flowlet a flow keeps its member even when that member becomes
//!   the worse one; after a gap longer than the aging it moves.
//! * Flowlet: zero reordering at the receivers; per-packet in the same
//!   setup reorders.
//! * Per-packet spreads four line-rate elephants over four uplinks within 5 %.

use railyard_dataplane::clock::Nanos;
use railyard_pcap_tests::fabric::{Balance, Flow, HostId, Outcome, TwoTier};

const FRAME: usize = 1000;
const LINE: u32 = 100_000;
const US: Nanos = 1_000;

/// A fabric of `leaves` × `spines` with `hosts` hosts per leaf, at 100 Gb/s,
/// default DLB settings (500 µs aging), in `mode`.
fn fabric(leaves: usize, spines: usize, hosts: usize, mode: Balance) -> TwoTier {
    let mut t = TwoTier::new(leaves, spines, hosts);
    t.pool_buffers = 8_192;
    t.with_balance(mode)
}

/// A line-rate elephant with `packets` per burst, bursts starting at `starts`.
fn elephant(src: HostId, dst: HostId, entropy: u16, packets: u32, starts: Vec<Nanos>) -> Flow {
    let mut f = Flow::elephant(src, dst, entropy, FRAME, LINE, 0, packets, 1, 0);
    f.burst_starts = starts;
    f
}

/// The first entropy from `from` up whose flow plain ECMP puts on `uplink`.
fn entropy_on(t: &TwoTier, flow: Flow, uplink: usize, from: u16) -> u16 {
    entropy_where(flow, from, |f| t.ecmp_uplink(f) == uplink)
}

/// The first entropy from `from` up for which `pick` holds.
fn entropy_where(mut flow: Flow, from: u16, pick: impl Fn(&Flow) -> bool) -> u16 {
    (from..=u16::MAX)
        .find(|e| {
            flow.entropy = *e;
            pick(&flow)
        })
        .expect("some entropy hashes onto every uplink")
}

/// Every flow arrived complete.
fn assert_lossless(out: &Outcome) {
    assert_eq!(out.total_drops(), 0, "{:?}", out.drops());
    for (i, f) in out.flows.iter().enumerate() {
        assert_eq!(f.received, f.sent, "flow {i}");
    }
    assert_eq!(out.blind_steps, 0);
}

#[test]
fn flowlets_split_two_elephants_that_ecmp_puts_on_one_uplink() {
    let (a_src, a_dst) = (HostId::new(0, 0), HostId::new(1, 0));
    let (b_src, b_dst) = (HostId::new(0, 1), HostId::new(1, 1));
    // Six bursts of 1200 frames (98 µs at 100 Gb/s) every 800 µs: the idle
    // gap (over 660 µs) is longer than the 500 µs aging. The flows take
    // turns at starting first, 40 µs apart: the port-quality estimator
    // publishes every 16 µs and needs a full interval of traffic to rate an
    // uplink above band 0, and the second flow must see that.
    const BURST: usize = 1200;
    let period = 800 * US;
    let starts = |first: bool| -> Vec<Nanos> {
        (0..6u64)
            .map(|k| k * period + if (k % 2 == 0) == first { 0 } else { 40 * US })
            .collect()
    };
    let ecmp = fabric(2, 2, 2, Balance::Ecmp);
    let a = elephant(a_src, a_dst, 49_152, BURST as u32, starts(true));
    let shared = ecmp.ecmp_uplink(&a);
    let b_entropy = entropy_on(
        &ecmp,
        elephant(b_src, b_dst, 0, BURST as u32, starts(false)),
        shared,
        50_000,
    );
    let b = elephant(b_src, b_dst, b_entropy, BURST as u32, starts(false));
    let flows = [a, b];
    let total: u64 = flows.iter().map(|f| f.packets()).sum::<u64>() * FRAME as u64;

    // ECMP: both on one uplink, which is offered 200 Gb/s while they overlap.
    let out = ecmp.run(&flows);
    assert_lossless(&out);
    let bytes = out.uplink_bytes(0);
    assert_eq!(bytes[shared], total, "{bytes:?}");
    assert_eq!(bytes[1 - shared], 0, "{bytes:?}");
    let ecmp_worst = out
        .flows
        .iter()
        .flat_map(|f| f.burst_completion.clone())
        .max();

    // Flowlet: whichever flow starts a burst first gets the hash's uplink,
    // the other sees it loaded and takes the idle one.
    let out = ecmp.with_balance(Balance::Flowlet).run(&flows);
    assert_lossless(&out);
    let bytes = out.uplink_bytes(0);
    assert_eq!(bytes.iter().sum::<u64>(), total);
    for (s, b) in bytes.iter().enumerate() {
        assert!(
            (total * 2 / 5..=total * 3 / 5).contains(b),
            "uplink {s}: {bytes:?}"
        );
    }
    // In every burst the two flows are on different uplinks, each on one.
    let (pa, pb) = (out.flow_path(0, 0), out.flow_path(0, 1));
    for k in 0..6 {
        let burst = |p: &[Option<usize>]| {
            let mut s: Vec<usize> = p[k * BURST..(k + 1) * BURST]
                .iter()
                .flatten()
                .copied()
                .collect();
            assert_eq!(s.len(), BURST);
            s.dedup();
            assert_eq!(s.len(), 1, "burst {k} changed uplink within the flowlet");
            s[0]
        };
        assert_ne!(burst(&pa), burst(&pb), "burst {k} shares an uplink");
    }
    let moves: u64 = out.groups().map(|g| g.flowlet_moves).sum();
    assert!(moves > 0, "no flowlet moved");
    for g in out.groups() {
        assert_eq!(g.mode, "flowlet");
        assert_eq!(g.reorder_risk, 0);
    }
    assert_eq!(out.reordered(), 0);
    // Not sharing an uplink, every burst completes faster than the worst
    // burst under ECMP.
    let flowlet_worst = out
        .flows
        .iter()
        .flat_map(|f| f.burst_completion.clone())
        .max();
    assert!(
        flowlet_worst < ecmp_worst,
        "{flowlet_worst:?} vs {ecmp_worst:?}"
    );
}

#[test]
fn a_flowlet_keeps_its_member_while_it_gets_worse_and_moves_after_the_aging() {
    let t = fabric(2, 2, 2, Balance::Flowlet);
    let (f_src, f_dst) = (HostId::new(0, 0), HostId::new(1, 0));
    let (g_src, g_dst) = (HostId::new(0, 1), HostId::new(1, 1));
    // F: one frame every 20 µs (well inside the 500 µs aging) for 600 µs,
    // then 700 µs of silence, then 200 µs more.
    let phase1: Vec<Nanos> = (0..=30).map(|i| i * 20 * US).collect();
    let phase2: Vec<Nanos> = (0..=10).map(|i| 1_300 * US + i * 20 * US).collect();
    let mut f = Flow::elephant(f_src, f_dst, 49_152, FRAME, LINE, 0, 1, 1, 0);
    f.burst_starts = phase1.iter().chain(&phase2).copied().collect();
    let x = t.idle_flowlet_uplink(&f);
    // G: 30 Gb/s from 30 µs to 1.6 ms on the same uplink as F (F starts
    // first on an idle fabric, where DLB breaks the tie by the hash; so does
    // G, 30 µs later, when F's trickle still leaves the uplink in band 0).
    let mut g = Flow::elephant(g_src, g_dst, 0, FRAME, 30_000, 30 * US, 5_700, 1, 0);
    g.entropy = entropy_where(g.clone(), 50_000, |g| t.idle_flowlet_uplink(g) == x);
    let out = t.run(&[f, g]);
    assert_lossless(&out);
    let path = out.flow_path(0, 0);
    assert_eq!(path.len(), phase1.len() + phase2.len());
    // Within the first flowlet F never left X, although G made X the loaded
    // member (band > 0) and the other uplink stayed idle.
    for (i, p) in path[..phase1.len()].iter().enumerate() {
        assert_eq!(*p, Some(x), "packet {i} left the flowlet's member");
    }
    assert_eq!(out.flow_uplinks(0, 1)[1 - x], 0, "G moved");
    // After a gap longer than the aging F's next flowlet avoids X: proof
    // that X was the worse member all along.
    for (i, p) in path[phase1.len()..].iter().enumerate() {
        assert_eq!(
            *p,
            Some(1 - x),
            "packet {} of the second flowlet",
            phase1.len() + i
        );
    }
    let gf = out.group(0, f_dst).expect("F's group");
    assert_eq!((gf.flowlets_started, gf.flowlet_moves), (2, 1), "{gf:?}");
    for g in out.groups() {
        assert_eq!(g.reorder_risk, 0, "{g:?}");
    }
    assert_eq!(out.reordered(), 0);
}

/// Three line-rate elephants from leaf 0 to leaf 1 over two uplinks (1.5:1
/// while all three send), of 1000-, 700- and 400-byte frames, in four bursts
/// of 1200 frames with idle gaps of over 600 µs, their starts 20 µs apart in
/// an order that changes every burst.
fn three_bursty_elephants() -> Vec<Flow> {
    (0..3u64)
        .map(|i| {
            let starts = (0..4u64)
                .map(|k| k * 800 * US + ((i + k) % 3) * 20 * US)
                .collect();
            let mut f = elephant(
                HostId::new(0, i as usize),
                HostId::new(1, i as usize),
                49_152 + i as u16 * 7,
                1_200,
                starts,
            );
            // Mixed sizes, as RDMA messages end in a short packet: spraying
            // then leaves the uplinks' queues unequal.
            f.frame_len = FRAME - 300 * i as usize;
            f
        })
        .collect()
}

#[test]
fn flowlets_never_reorder_with_gaps_over_the_aging_but_per_packet_does() {
    let flows = three_bursty_elephants();
    let t = fabric(2, 2, 3, Balance::Flowlet);
    let out = t.run(&flows);
    assert_lossless(&out);
    assert_eq!(out.reordered(), 0, "{:?}", out.flows);
    for g in out.groups() {
        assert_eq!(g.reorder_risk, 0);
    }
    // Flows did change uplinks between bursts, so there was something to reorder.
    let moves: u64 = out.groups().map(|g| g.flowlet_moves).sum();
    assert!(moves > 0);
    assert!(
        (0..3).any(|i| out.flow_uplinks(0, i).iter().all(|n| *n > 0)),
        "no flow used both uplinks"
    );

    let out = t.with_balance(Balance::PerPacket).run(&flows);
    assert_eq!(out.total_drops(), 0, "{:?}", out.drops());
    assert!(out.reordered() > 0, "per-packet spraying reordered nothing");
    assert!(out.groups().map(|g| g.reorder_risk).sum::<u64>() >= out.reordered());
}

/// Four line-rate elephants from leaf 0 to leaf 1 over four uplinks (100 %
/// of their capacity), starting `stagger` apart, `packets` frames each; ECMP
/// would put flows 0 and 1 on uplink 0.
fn four_elephants(t: &TwoTier, stagger: Nanos, packets: u32) -> Vec<Flow> {
    let mut flows: Vec<Flow> = (0..4)
        .map(|i| {
            elephant(
                HostId::new(0, i),
                HostId::new(1, i),
                49_152 + i as u16,
                packets,
                vec![i as Nanos * stagger],
            )
        })
        .collect();
    for (i, f) in flows.iter_mut().enumerate().take(2) {
        f.entropy = entropy_on(t, f.clone(), 0, 49_152 + 1_000 * i as u16);
    }
    flows
}

#[test]
fn per_packet_spreads_four_line_rate_elephants_within_five_percent() {
    let t = fabric(2, 4, 4, Balance::PerPacket);
    // Starts 20 µs apart, more than one 16 µs quality interval; starting
    // together is `per_packet_balances_elephants_that_start_together`.
    let flows = four_elephants(&t, 20 * US, 2_000);
    let out = t.run(&flows);
    assert_lossless(&out);
    let bytes = out.uplink_bytes(0);
    assert!(bytes.iter().all(|b| *b > 0), "{bytes:?}");
    assert!(out.imbalance(0) <= 0.05, "{bytes:?}: {}", out.imbalance(0));
    let chosen: u64 = out.groups().map(|g| g.per_packet_choices).sum();
    assert_eq!(chosen, 4 * 2_000);
    // Each flow itself was sprayed over all four.
    for i in 0..4 {
        assert!(out.flow_uplinks(0, i).iter().all(|n| *n > 0));
    }

    let ecmp = t.with_balance(Balance::Ecmp).run(&flows);
    assert!(ecmp.imbalance(0) > 0.5, "{:?}", ecmp.uplink_bytes(0));
}

/// Elephants that start within one quality interval of each other (a
/// collective's step): every choice in that interval sees the same
/// published quality, so only the bytes each choice adds (counted until the
/// next sample) keep them from herding onto one uplink.
#[test]
fn per_packet_balances_elephants_that_start_together() {
    let t = fabric(2, 4, 4, Balance::PerPacket);
    let out = t.run(&four_elephants(&t, 100, 4_000));
    assert!(
        out.imbalance(0) <= 0.05,
        "{:?}: {}",
        out.uplink_bytes(0),
        out.imbalance(0)
    );
}
