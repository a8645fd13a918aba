//! The egress queues' tests: admission, WRED/ECN, scheduling, shaping
//! and the byte limits, driven through [`EgressQueues`](super::EgressQueues).

use super::*;
use crate::meta::Meta;
use crate::model::{QueueLimit, WredModel};
use crate::packet::Pool;
use crate::parse::parse;
use crate::wire::{checksum, MacAddr};

/// A parsed Ethernet + IPv4 + UDP frame of `len` bytes with the given ECN,
/// its first payload byte `tag`.
fn ip(pool: &Pool, len: usize, ecn: u8, tag: u8) -> PacketBuf {
    let len = len.max(14 + 20 + 8 + 1);
    let mut f = vec![0u8; len];
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    {
        let h = &mut f[14..34];
        h[0] = 0x45;
        h[1] = (24 << 2) | ecn;
        h[2..4].copy_from_slice(&((len - 14) as u16).to_be_bytes());
        h[8] = 64;
        h[9] = 17;
        h[12..16].copy_from_slice(&[10, 0, 0, 1]);
        h[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let c = !checksum::data(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
    }
    f[36..38].copy_from_slice(&9u16.to_be_bytes());
    f[38..40].copy_from_slice(&((len - 34) as u16).to_be_bytes());
    f[42] = tag;
    let mut p = pool.alloc_from(&f).unwrap();
    let mut m = Meta::default();
    parse(p.data(), &mut m).unwrap();
    p.meta = m;
    p
}

fn port(speed_mbps: Option<u32>, f: impl Fn(usize, &mut QueueModel)) -> InterfaceModel {
    let mut m = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 0, 1]));
    m.mtu = 9216;
    m.speed_mbps = speed_mbps;
    for (i, q) in m.queues.iter_mut().enumerate() {
        f(i, q);
    }
    m
}

type Counters = [QueueCounters; NUM_QUEUES];

/// Every queue's counters account for every packet, and agree with the queues.
fn assert_conserved(q: &EgressQueues, c: &Counters) {
    for (i, qc) in q.counters_now(c).iter().enumerate() {
        assert!(qc.conserved(), "queue {i} does not conserve: {qc:?}");
        assert_eq!(qc.depth_packets, q.depth_packets(i) as u64, "queue {i}");
        assert_eq!(qc.depth_bytes, q.depth_bytes(i), "queue {i}");
    }
}

/// Per-queue frame sizes for the saturation runs: a mix from 64 to `max`.
fn size(rng: &mut SplitMix64, max: usize) -> usize {
    match rng.next_u64() % 4 {
        0 => 64,
        1 => 512,
        2 => 1500,
        _ => 64 + (rng.next_u64() as usize % (max - 63)),
    }
}

/// A port under test in virtual time.
struct Sim {
    q: EgressQueues,
    c: Counters,
    pool: Pool,
    rng: SplitMix64,
    now: Nanos,
    /// Departures as (time, queue, length).
    sent: Vec<(Nanos, usize, usize)>,
}

impl Sim {
    fn new(m: &InterfaceModel, seed: u64) -> Sim {
        Sim {
            q: EgressQueues::new(m, seed),
            c: Counters::default(),
            pool: Pool::new(8 * 1024),
            rng: SplitMix64::new(seed),
            now: 0,
            sent: Vec::new(),
        }
    }

    /// Tops `busy` queues up to `depth` packets of mixed sizes up to
    /// `max_len`, jumps to the next departure and lets the port send.
    fn step(&mut self, busy: &[usize], depth: usize, max_len: usize) {
        for &b in busy {
            while self.q.depth_packets(b) < depth {
                let p = ip(&self.pool, size(&mut self.rng, max_len), 2, b as u8);
                self.q.enqueue(b, p, self.now, &mut self.c).unwrap();
            }
        }
        self.now = self.now.max(self.q.next_departure().unwrap());
        let mut out = Burst::new();
        self.q
            .dequeue_burst(&mut out, BURST_SIZE, self.now, &mut self.c);
        for p in out.drain(..) {
            self.sent
                .push((p.timestamp, usize::from(p.data()[42]), p.len()));
        }
    }

    /// Keeps `busy` saturated for `duration` ns of virtual time.
    fn run(&mut self, busy: &[usize], depth: usize, max_len: usize, duration: Nanos) {
        let end = self.now + duration;
        while self.now < end {
            self.step(busy, depth, max_len);
        }
    }
}

#[test]
fn wred_marks_along_the_curve_at_held_depths() {
    let pool = Pool::new(2048);
    let m = port(None, |i, q| {
        if i == 3 {
            q.wred = Some(WredModel {
                min: 100_000,
                max: 300_000,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 50,
                weight: 0,
                ecn: true,
            });
        }
    });
    let mut q = EgressQueues::new(&m, 1);
    let mut c = Counters::default();
    let n = 20_000u64;
    let mut held = 0u64;
    for (depth, expect) in [
        (50_000u64, 0.0),
        (100_000, 0.0),
        (150_000, 0.125),
        (200_000, 0.25),
        (250_000, 0.375),
        (300_000, 1.0),
        (400_000, 1.0),
    ] {
        while held < depth {
            q.enqueue(3, ip(&pool, 1000, 2, 0), 0, &mut c).unwrap();
            held += 1000;
        }
        assert_eq!(q.depth_bytes(3), depth);
        let before = c[3].ecn_marked;
        for i in 0..n {
            // ECT(0) and ECT(1) alike.
            let ecn = 1 + (i % 2) as u8;
            q.enqueue(3, ip(&pool, 1000, ecn, 0), 0, &mut c).unwrap();
            let mut out = Burst::new();
            assert_eq!(q.dequeue_burst(&mut out, 1, 0, &mut c), 1);
            let f = out[0].data();
            assert_eq!(checksum::data(&f[14..34]), 0xffff);
            assert_eq!(q.depth_bytes(3), depth);
        }
        let f = (c[3].ecn_marked - before) as f64 / n as f64;
        let sd = (expect * (1.0 - expect) / n as f64).sqrt();
        assert!(
            (f - expect).abs() <= 5.0 * sd + 1e-9,
            "depth {depth}: {f} marked, curve {expect}"
        );
    }
    assert_eq!(c[3].wred_drops, 0, "ECT packets are marked, never dropped");
    // Non-ECT at a depth above the maximum: every one dropped by WRED.
    for _ in 0..100 {
        assert_eq!(
            q.enqueue(3, ip(&pool, 1000, 0, 0), 0, &mut c),
            Err(DropReason::Wred)
        );
    }
    assert_eq!((c[3].wred_drops, c[3].wred_drop_bytes), (100, 100_000));
    assert_conserved(&q, &c);
}

#[test]
fn wred_in_packets_and_nothing_below_the_minimum() {
    let pool = Pool::new(256);
    let m = port(None, |i, q| {
        if i == 1 {
            q.wred = Some(WredModel {
                min: 10,
                max: 20,
                unit: ThresholdUnit::Packets,
                drop_probability_percent: 100,
                weight: 0,
                ecn: true,
            });
        }
    });
    let mut q = EgressQueues::new(&m, 2);
    let mut c = Counters::default();
    for i in 0..40 {
        q.enqueue(1, ip(&pool, 100, 2, i), 0, &mut c).unwrap();
    }
    let mut out = Burst::new();
    let mut marks = Vec::new();
    while q.dequeue_burst(&mut out, BURST_SIZE, 0, &mut c) > 0 {
        for p in out.drain(..) {
            marks.push((p.data()[42], p.data()[15] & 3 == 3));
        }
    }
    // PacketBuf i found i packets queued: unmarked up to 10, all marked from 20.
    for (i, marked) in marks {
        if i <= 10 {
            assert!(!marked, "packet {i} marked below the minimum");
        }
        if i >= 20 {
            assert!(marked, "packet {i} not marked above the maximum");
        }
    }
    assert!(c[1].ecn_marked >= 20);
    assert_conserved(&q, &c);
}

#[test]
fn wred_average_follows_the_weight_in_the_queue() {
    let pool = Pool::new(256);
    let m = port(None, |i, q| {
        if i == 0 {
            q.wred = Some(WredModel {
                min: 1 << 30,
                max: 1 << 31,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 7,
                weight: 2,
                ecn: true,
            });
        }
    });
    let mut q = EgressQueues::new(&m, 3);
    let mut c = Counters::default();
    let mut avg = 0.0f64;
    for _ in 0..50 {
        let depth = q.depth_bytes(0) as f64;
        avg += (depth - avg) / 4.0;
        q.enqueue(0, ip(&pool, 1000, 2, 0), 0, &mut c).unwrap();
        assert!((q.wred_average(0).unwrap() as f64 - avg).abs() <= 1.0);
    }
    assert_conserved(&q, &c);
}

#[test]
fn the_deepest_a_queue_has_been_survives_its_draining() {
    let pool = Pool::new(64);
    let mut q = EgressQueues::new(&port(None, |_, _| {}), 1);
    let mut c = Counters::default();
    let mut out = Burst::new();
    let offer = |q: &mut EgressQueues, c: &mut Counters, n: usize| {
        for _ in 0..n {
            q.enqueue(2, ip(&pool, 100, 0, 0), 0, c).unwrap();
        }
    };
    offer(&mut q, &mut c, 5);
    assert_eq!(q.counters_now(&c)[2].max_depth_packets, 5, "deepest now");
    assert_eq!(q.dequeue_burst(&mut out, 3, 0, &mut c), 3);
    offer(&mut q, &mut c, 4);
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 0, &mut c), 6);
    offer(&mut q, &mut c, 1);
    let now = q.counters_now(&c)[2];
    assert_eq!((now.depth_packets, now.max_depth_packets), (1, 6));
    assert_eq!((now.depth_bytes, now.max_depth_bytes), (100, 600));
    // The watchdog's flush empties a queue as a departure does.
    offer(&mut q, &mut c, 7);
    assert_eq!(q.flush(2, &mut c, drop), 8);
    let now = q.counters_now(&c)[2];
    assert_eq!((now.depth_packets, now.max_depth_packets), (0, 8));
    assert_conserved(&q, &c);
}

#[test]
fn tail_drop_at_each_kind_of_limit_and_the_port_buffer() {
    let pool = Pool::new(256);
    let mut m = port(None, |i, q| {
        q.limit = match i {
            1 => QueueLimit::Bytes(250),
            2 => QueueLimit::Packets(3),
            3 => QueueLimit::Percent(10),
            _ => QueueLimit::Dynamic(7),
        }
    });
    m.buffer_bytes = 2000;
    let mut q = EgressQueues::new(&m, 4);
    let mut c = Counters::default();
    let offer = |q: &mut EgressQueues, c: &mut Counters, queue: usize, n: usize| {
        (0..n)
            .filter(|_| q.enqueue(queue, ip(&pool, 100, 0, 0), 0, c).is_ok())
            .count()
    };
    assert_eq!(
        offer(&mut q, &mut c, 1, 5),
        2,
        "250 bytes hold two 100-byte packets"
    );
    assert_eq!(offer(&mut q, &mut c, 2, 5), 3);
    assert_eq!(offer(&mut q, &mut c, 3, 5), 2, "10 % of 2000");
    // 700 bytes used: alpha 1 admits while q + 100 ≤ 2000 − 700 − q.
    assert_eq!(offer(&mut q, &mut c, 0, 20), 7);
    assert_eq!(q.total_bytes(), 1400);
    assert_eq!(c[1].tail_drops, 3);
    assert_eq!(c[1].tail_drop_bytes, 300);
    assert_eq!(q.counters_now(&c)[0].max_depth_bytes, 700);
    assert_conserved(&q, &c);
    // A static limit beyond the buffer still stops at the buffer.
    let mut m = port(None, |_, q| q.limit = QueueLimit::Bytes(1 << 40));
    m.buffer_bytes = 1000;
    let mut q = EgressQueues::new(&m, 4);
    let mut c = Counters::default();
    assert_eq!(offer(&mut q, &mut c, 5, 20), 10);
    assert_conserved(&q, &c);
}

/// Offers `len`-byte packets to queue `queue` until the first refusal
/// (or `max` offers); returns how many it took and the refusal.
fn fill(
    q: &mut EgressQueues,
    c: &mut Counters,
    pool: &Pool,
    queue: usize,
    len: usize,
    max: usize,
) -> (u64, Option<DropReason>) {
    let mut taken = 0;
    for _ in 0..max {
        match q.enqueue(queue, ip(pool, len, 0, 0), 0, c) {
            Ok(()) => taken += 1,
            Err(r) => return (taken, Some(r)),
        }
    }
    (taken, None)
}

#[test]
fn small_and_jumbo_queues_both_tail_drop_at_their_byte_limit() {
    // 1 MiB: 16 384 packets of 64 bytes, four times the 4 096 packets a
    // queue used to be capped at, and 116 of 9 000 bytes.
    const LIMIT: u64 = 1 << 20;
    let pool = Pool::new(17_000);
    for len in [64usize, 9000] {
        let m = port(None, |_, q| q.limit = QueueLimit::Bytes(LIMIT));
        let mut q = EgressQueues::new(&m, 1);
        let mut c = Counters::default();
        let fits = LIMIT / len as u64;
        let (taken, refused) = fill(&mut q, &mut c, &pool, 3, len, 20_000);
        assert_eq!(taken, fits, "{len}-byte packets");
        assert_eq!(refused, Some(DropReason::TailDrop));
        assert_eq!(q.depth_bytes(3), fits * len as u64);
        assert!(LIMIT - q.depth_bytes(3) < len as u64, "stopped short");
        // Every further offer is refused too, by the same limit.
        assert_eq!(
            fill(&mut q, &mut c, &pool, 3, len, 9),
            (0, Some(DropReason::TailDrop))
        );
        assert_eq!((c[3].tail_drops, c[3].tail_drop_bytes), (2, 2 * len as u64));
        let now = q.counters_now(&c)[3];
        assert_eq!(
            (now.max_depth_packets, now.max_depth_bytes),
            (fits, fits * len as u64)
        );
        assert_conserved(&q, &c);
        drop(q);
        assert_eq!(pool.available(), 17_000, "the queue's buffers went home");
    }
    assert_eq!(LIMIT / 64, 16_384);
}

#[test]
fn small_and_jumbo_queues_both_tail_drop_at_the_shared_buffer() {
    const BUFFER: u64 = 1 << 20;
    let pool = Pool::new(17_000);
    for len in [64usize, 9000] {
        let mut m = port(None, |_, q| q.limit = QueueLimit::Bytes(1 << 40));
        m.buffer_bytes = BUFFER;
        let mut q = EgressQueues::new(&m, 2);
        let mut c = Counters::default();
        let (taken, refused) = fill(&mut q, &mut c, &pool, 1, len, 20_000);
        assert_eq!(
            (taken, refused),
            (BUFFER / len as u64, Some(DropReason::TailDrop))
        );
        assert_eq!(q.total_bytes(), taken * len as u64);
        assert_conserved(&q, &c);
    }
    // Two queues share it: jumbo frames take what they take, 64-byte
    // packets fill the rest to the byte.
    let mut m = port(None, |_, q| q.limit = QueueLimit::Bytes(1 << 40));
    m.buffer_bytes = BUFFER;
    let mut q = EgressQueues::new(&m, 2);
    let mut c = Counters::default();
    assert_eq!(fill(&mut q, &mut c, &pool, 0, 9000, 58), (58, None));
    let left = BUFFER - 58 * 9000;
    let (taken, refused) = fill(&mut q, &mut c, &pool, 1, 64, 20_000);
    assert_eq!((taken, refused), (left / 64, Some(DropReason::TailDrop)));
    assert!(q.total_bytes() + 64 > BUFFER);
    assert_conserved(&q, &c);
}

#[test]
fn lossless_packets_are_never_dropped_by_the_queue() {
    // Their bound is the ingress group's headroom, checked before the
    // queue: past the queue limit, the port buffer and 4 096 packets,
    // the queue still takes them.
    let pool = Pool::new(6_000);
    let mut m = port(None, |_, q| q.limit = QueueLimit::Bytes(1000));
    m.buffer_bytes = 2000;
    let mut q = EgressQueues::new(&m, 3);
    let mut c = Counters::default();
    for _ in 0..5_000 {
        let p = ip(&pool, 64, 0, 0);
        assert!(q.offer(3, p, 0, &mut c, true).is_ok());
    }
    assert_eq!((q.depth_packets(3), q.depth_bytes(3)), (5_000, 320_000));
    // A lossy packet finds the same queue full.
    assert_eq!(
        q.enqueue(3, ip(&pool, 64, 0, 0), 0, &mut c),
        Err(DropReason::TailDrop)
    );
    assert_eq!(c[3].tail_drops, 1);
    assert_conserved(&q, &c);
}

#[test]
fn default_policy_serves_q7_first_and_q1_to_q6_only_with_leftovers() {
    let pool = Pool::new(256);
    // NX-OS's default-8q-out-policy, as the control plane compiles it.
    let m = port(None, |i, q| match i {
        7 => q.priority_level = Some(1),
        0 => q.bandwidth_remaining_percent = Some(100),
        _ => q.bandwidth_remaining_percent = Some(0),
    });
    let mut q = EgressQueues::new(&m, 5);
    let mut c = Counters::default();
    for round in 0..4u8 {
        for queue in [1usize, 0, 7, 4] {
            q.enqueue(queue, ip(&pool, 100, 0, queue as u8), 0, &mut c)
                .unwrap();
        }
        assert_eq!(q.len(), usize::from(round + 1) * 4);
    }
    let mut out = Burst::new();
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 0, &mut c), 16);
    let order: Vec<u8> = out.iter().map(|p| p.data()[42]).collect();
    assert_eq!(order[..8], [7, 7, 7, 7, 0, 0, 0, 0]);
    // q1 and q4 (both weight 0) share the leftovers round robin.
    assert_eq!(order[8..], [1, 4, 1, 4, 1, 4, 1, 4]);
    assert_conserved(&q, &c);
}

#[test]
fn priority_levels_order_and_a_paused_level_is_skipped() {
    let pool = Pool::new(256);
    let m = port(None, |i, q| match i {
        7 => q.priority_level = Some(1),
        5 => q.priority_level = Some(2),
        6 => q.priority_level = Some(3),
        _ => {}
    });
    let mut q = EgressQueues::new(&m, 6);
    let mut c = Counters::default();
    for queue in [0usize, 6, 5, 7, 0, 6, 5, 7] {
        q.enqueue(queue, ip(&pool, 100, 0, queue as u8), 0, &mut c)
            .unwrap();
    }
    q.set_paused(5, true);
    assert!(q.is_paused(5));
    let mut out = Burst::new();
    q.dequeue_burst(&mut out, BURST_SIZE, 0, &mut c);
    let order: Vec<u8> = out.iter().map(|p| p.data()[42]).collect();
    assert_eq!(order, vec![7, 7, 6, 6, 0, 0]);
    // Only paused packets left: nothing can leave, and nothing is lost.
    assert_eq!(q.next_departure(), None);
    assert_eq!(q.depth_packets(5), 2);
    q.set_paused(5, false);
    assert_eq!(q.next_departure(), Some(0));
    out.clear();
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 0, &mut c), 2);
    assert_conserved(&q, &c);
}

/// Queues 0, 1, … sent these shares of the bytes they sent together,
/// each within 2 % of itself.
fn assert_byte_shares(c: &Counters, want: &[f64]) {
    let total: u64 = c[..want.len()].iter().map(|q| q.tx_bytes).sum();
    for (i, &want) in want.iter().enumerate() {
        let share = c[i].tx_bytes as f64 / total as f64;
        assert!(
            (share - want).abs() <= 0.02 * want,
            "queue {i}: {share:.4} of the bytes, configured {want}"
        );
    }
}

#[test]
fn dwrr_byte_shares_match_remaining_percentages_at_line_rate() {
    let m = port(Some(100_000), |i, q| {
        q.bandwidth_remaining_percent = Some([10, 20, 30, 40, 0, 0, 0, 0][i]);
        if i == 7 {
            q.priority_level = Some(1);
        }
    });
    let mut sim = Sim::new(&m, 7);
    // 20 ms at 100 Gb/s with all four queues saturated with mixed sizes.
    sim.run(&[0, 1, 2, 3], 16, 9000, 20_000_000);
    let Sim { q, c, sent, .. } = sim;
    assert_byte_shares(&c, &[0.1, 0.2, 0.3, 0.4]);
    // Work-conserving at line rate: back to back, each frame exactly one
    // serialisation time after the previous one (to the nanosecond).
    let mut t_ps = sent[0].0 * PS_PER_NS;
    for w in sent.windows(2) {
        t_ps += shaper::serialisation_ps(shaper::wire_bytes(w[0].2), 100_000_000_000);
        assert_eq!(w[1].0, shaper::ps_to_ns_ceil(t_ps));
    }
    assert_conserved(&q, &c);
}

#[test]
fn dwrr_byte_shares_hold_on_a_port_without_a_line_rate() {
    // No speed: whole bursts leave at once, a weighted queue's packets
    // back to back while its credit lasts.
    let m = port(None, |i, q| {
        q.bandwidth_remaining_percent = Some([10, 20, 30, 40, 0, 0, 0, 0][i]);
    });
    let mut sim = Sim::new(&m, 11);
    for _ in 0..4000 {
        sim.step(&[0, 1, 2, 3], 64, 9000);
        sim.now += 1;
    }
    let Sim { q, c, .. } = sim;
    assert_byte_shares(&c, &[0.1, 0.2, 0.3, 0.4]);
    assert_conserved(&q, &c);
}

#[test]
fn strict_queue_sojourn_stays_within_two_max_frames_under_saturation() {
    let m = port(Some(10_000), |i, q| {
        q.bandwidth_remaining_percent = Some([25, 25, 25, 25, 0, 0, 0, 0][i]);
        if i == 7 {
            q.priority_level = Some(1);
        }
    });
    let pool = Pool::new(8 * 1024);
    let mut q = EgressQueues::new(&m, 8);
    let mut c = Counters::default();
    let mut rng = SplitMix64::new(5);
    let mut now: Nanos = 0;
    let mut next_cnp: Nanos = 0;
    // 64-byte CNPs every 2 µs (0.35 Gb/s) against four saturated
    // classes with frames up to 9000 bytes, for 20 ms.
    while now < 20_000_000 {
        for b in 0..4 {
            while q.depth_packets(b) < 8 {
                let p = ip(&pool, size(&mut rng, 9000), 2, b as u8);
                q.enqueue(b, p, now, &mut c).unwrap();
            }
        }
        if now >= next_cnp {
            q.enqueue(7, ip(&pool, 64, 2, 7), now, &mut c).unwrap();
            next_cnp += 2_000;
        }
        now = q.next_departure().unwrap().min(next_cnp).max(now);
        let mut out = Burst::new();
        q.dequeue_burst(&mut out, BURST_SIZE, now, &mut c);
    }
    let max_frame_ns =
        shaper::serialisation_ps(shaper::wire_bytes(9000), 10_000_000_000) / PS_PER_NS;
    let strict = q.latency(7);
    assert!(c[7].tx_packets > 9000);
    assert!(
        strict.max <= 2 * max_frame_ns,
        "strict sojourn {strict:?} vs max frame {max_frame_ns} ns"
    );
    assert!(q.latency(0).p50 > strict.max, "the DWRR classes do wait");
    assert_conserved(&q, &c);
}

#[test]
fn a_paused_queue_keeps_its_credit_and_the_rest_use_the_wire() {
    let m = port(Some(10_000), |i, q| {
        q.bandwidth_remaining_percent = Some([50, 50, 0, 0, 0, 0, 0, 0][i]);
    });
    let mut sim = Sim::new(&m, 9);
    sim.run(&[0, 1], 8, 1500, 1_000_000);
    // Pause queue 1 when it is mid-turn.
    let credit = loop {
        sim.step(&[0, 1], 8, 1500);
        let d = sim.q.scheduler().deficit(1);
        if sim.sent.last().is_some_and(|s| s.1 == 1) && d > 0 {
            break d;
        }
    };
    sim.q.set_paused(1, true);
    let before = (sim.c[0].tx_bytes, sim.c[1].tx_bytes);
    sim.run(&[0], 8, 1500, 1_000_000);
    assert_eq!(sim.c[1].tx_bytes, before.1, "a paused queue sends nothing");
    // 10 Gb/s for 1 ms is 1.25 MB on the wire.
    assert!(
        sim.c[0].tx_bytes - before.0 > 1_200_000,
        "queue 0 takes the whole wire"
    );
    assert_eq!(
        sim.q.scheduler().deficit(1),
        credit,
        "credit kept while paused"
    );
    sim.q.set_paused(1, false);
    let before = (sim.c[0].tx_bytes, sim.c[1].tx_bytes);
    sim.run(&[0, 1], 8, 1500, 2_000_000);
    let (a, b) = (sim.c[0].tx_bytes - before.0, sim.c[1].tx_bytes - before.1);
    assert!((a as f64 / b as f64 - 1.0).abs() < 0.05, "{a} vs {b}");
    assert_conserved(&sim.q, &sim.c);
}

#[test]
fn shape_caps_a_queue_and_the_others_take_the_rest() {
    let m = port(Some(10_000), |i, q| {
        q.bandwidth_remaining_percent = Some([50, 50, 0, 0, 0, 0, 0, 0][i]);
        if i == 1 {
            q.shape_max_bps = Some(1_000_000_000);
        }
    });
    let mut sim = Sim::new(&m, 10);
    sim.run(&[0, 1], 8, 1500, 10_000_000);
    let Sim { q, c, sent, .. } = sim;
    let wire = |queue: usize| -> u64 {
        sent.iter()
            .filter(|s| s.1 == queue)
            .map(|s| shaper::wire_bytes(s.2) * 8)
            .sum()
    };
    let span = sent.last().unwrap().0 - sent[0].0;
    let rate1 = wire(1) as f64 / span as f64; // Gb/s
    let rate0 = wire(0) as f64 / span as f64;
    assert!((rate1 - 1.0).abs() < 0.01, "shaped queue at {rate1} Gb/s");
    assert!(
        (rate0 + rate1 - 10.0).abs() < 0.02,
        "work-conserving: {rate0} + {rate1}"
    );
    assert_conserved(&q, &c);
}

#[test]
fn bandwidth_percent_guarantees_a_minimum() {
    let m = port(Some(10_000), |i, q| match i {
        0 => q.bandwidth_remaining_percent = Some(90),
        1 => {
            q.bandwidth_remaining_percent = Some(10);
            q.bandwidth_percent = Some(40);
        }
        _ => {}
    });
    let mut sim = Sim::new(&m, 11);
    sim.run(&[0, 1], 8, 1500, 10_000_000);
    let Sim { q, c, sent, .. } = sim;
    let wire = |queue: usize| -> u64 {
        sent.iter()
            .filter(|s| s.1 == queue)
            .map(|s| shaper::wire_bytes(s.2))
            .sum()
    };
    let share = wire(1) as f64 / (wire(0) + wire(1)) as f64;
    assert!(
        (0.39..0.42).contains(&share),
        "guaranteed 40 %, got {share}"
    );
    assert_conserved(&q, &c);
}

#[test]
fn unshaped_port_has_no_wire_time_and_next_departure_follows_the_wire() {
    let pool = Pool::new(64);
    let mut c = Counters::default();
    let mut q = EgressQueues::new(&port(None, |_, _| {}), 12);
    assert_eq!(q.next_departure(), None);
    for _ in 0..3 {
        q.enqueue(0, ip(&pool, 1000, 0, 0), 500, &mut c).unwrap();
    }
    let mut out = Burst::new();
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 700, &mut c), 3);
    assert!(out.iter().all(|p| p.timestamp == 700));
    assert_eq!(q.latency(0).max, 200);
    // 10 Gb/s: one 1000-byte frame every 819.2 ns.
    let mut q = EgressQueues::new(&port(Some(10_000), |_, _| {}), 12);
    for _ in 0..3 {
        q.enqueue(0, ip(&pool, 1000, 0, 0), 1_000, &mut c).unwrap();
    }
    out.clear();
    assert_eq!(q.next_departure(), Some(0));
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 1_000, &mut c), 1);
    assert_eq!(out[0].timestamp, 1_000);
    assert_eq!(q.next_departure(), Some(1_820));
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 1_819, &mut c), 0);
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 1_820, &mut c), 1);
    assert_eq!(q.next_departure(), Some(2_639), "2638.4 ns, rounded up");
    // A late poll of a backlog starts where the wire freed.
    assert_eq!(q.dequeue_burst(&mut out, BURST_SIZE, 2_700, &mut c), 1);
    assert_eq!(out[2].timestamp, 2_639);
    assert_eq!(q.next_departure(), None);
    assert_conserved(&q, &c);
}
