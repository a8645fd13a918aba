//! Egress queues: eight FIFOs per port, one per qos-group, with the QoS
//! machinery that decides what enters them and when it leaves.
//!
//! On enqueue: WRED/ECN, then buffer admission (queue limit, shared port
//! buffer), then CE marking ([`crate::qos`] has the rules). On dequeue: the
//! scheduler (strict levels, minimums, DWRR, leftover) picks a queue among
//! those not empty, not paused and within their shape rate, and the port
//! shaper releases frames at line rate when the interface has a speed.
//!
//! A queue has no packet capacity: its depth is bounded in bytes, by its
//! `queue-limit` and the port's shared buffer for lossy traffic and by the
//! ingress priority group's xOFF + headroom for lossless traffic (checked
//! before the packet gets here), and in the end by the pool's buffers. The
//! packets are linked through their own buffers ([`PacketFifo`]), and the
//! rest of the state (histograms, the scheduler's arrays) is reserved up
//! front, so enqueue and dequeue never allocate.

use crate::clock::Nanos;
use crate::counters::{DropReason, QueueCounters};
use crate::fifo::PacketFifo;
use crate::model::{InterfaceModel, QueueModel, ThresholdUnit};
use crate::packet::{Burst, PacketBuf, BURST_SIZE, MAX_FRAME};
use crate::qos::ecn;
use crate::qos::latency::Sojourn;
use crate::qos::limit::{self, Occupancy};
use crate::qos::rng::SplitMix64;
use crate::qos::scheduler::{Scheduler, Tier};
use crate::qos::shaper::{self, PortShaper, RateLimiter, PS_PER_NS};
use crate::qos::wred::{Verdict, Wred};
use crate::stats::LatencyStats;

/// Queues per port (qos-groups 0–7).
pub const NUM_QUEUES: usize = 8;
/// Bytes a `shape` or minimum-rate limiter lets an idle queue send back to
/// back: two maximum frames.
const LIMITER_BURST_BYTES: u64 = 2 * (MAX_FRAME as u64 + shaper::WIRE_OVERHEAD_BYTES);

/// The egress queues of one port.
#[derive(Debug)]
pub struct EgressQueues {
    queues: [PacketFifo; NUM_QUEUES],
    bytes: [u64; NUM_QUEUES],
    /// Bit q: queue q holds packets.
    nonempty: u8,
    /// Bit q: queue q is paused (PFC).
    paused: u8,
    total_packets: usize,
    total_bytes: u64,
    cfg: [QueueModel; NUM_QUEUES],
    buffer_bytes: u64,
    wred: [Option<Wred>; NUM_QUEUES],
    scheduler: Scheduler,
    shaper: PortShaper,
    /// `shape` maxima; bit q of `shaped` says queue q has one.
    shape: [Option<RateLimiter>; NUM_QUEUES],
    shaped: u8,
    /// Guaranteed minimums; bit q of `guaranteed` says queue q has one.
    min_rate: [Option<RateLimiter>; NUM_QUEUES],
    guaranteed: u8,
    rng: SplitMix64,
    sojourn: [Sojourn; NUM_QUEUES],
}

impl EgressQueues {
    /// Empty queues configured from the interface's model; `seed` fixes the
    /// WRED draws.
    pub fn new(model: &InterfaceModel, seed: u64) -> Self {
        let mut q = EgressQueues {
            queues: std::array::from_fn(|_| PacketFifo::new()),
            bytes: [0; NUM_QUEUES],
            nonempty: 0,
            paused: 0,
            total_packets: 0,
            total_bytes: 0,
            cfg: model.queues,
            buffer_bytes: model.buffer_bytes,
            wred: std::array::from_fn(|_| None),
            scheduler: Scheduler::new(&model.queues, Self::quantum_unit(model)),
            shaper: PortShaper::new(model.speed_mbps),
            shape: std::array::from_fn(|_| None),
            shaped: 0,
            min_rate: std::array::from_fn(|_| None),
            guaranteed: 0,
            rng: SplitMix64::new(seed),
            sojourn: std::array::from_fn(|_| Sojourn::new()),
        };
        q.configure(model);
        q
    }

    /// The smallest DWRR quantum: the port's largest frame.
    fn quantum_unit(model: &InterfaceModel) -> u64 {
        u64::from(model.mtu) + 18
    }

    /// Applies a new model between bursts: queued packets, counters, WRED
    /// averages, DWRR credit and the wire's timing are kept.
    pub fn configure(&mut self, model: &InterfaceModel) {
        self.cfg = model.queues;
        self.buffer_bytes = model.buffer_bytes;
        self.scheduler
            .configure(&model.queues, Self::quantum_unit(model));
        self.shaper.set_speed(model.speed_mbps);
        let line_bps = model
            .speed_mbps
            .filter(|s| *s > 0)
            .map(|s| u64::from(s) * 1_000_000);
        self.shaped = 0;
        self.guaranteed = 0;
        for (i, qm) in model.queues.iter().enumerate() {
            self.wred[i] = match (qm.wred, self.wred[i].take()) {
                (Some(cfg), Some(mut w)) => {
                    w.set_config(cfg);
                    Some(w)
                }
                (Some(cfg), None) => Some(Wred::new(cfg)),
                (None, _) => None,
            };
            self.shape[i] = Self::limiter(qm.shape_max_bps, self.shape[i].take());
            if self.shape[i].is_some() {
                self.shaped |= 1 << i;
            }
            let from_percent = match (qm.priority_level, qm.bandwidth_percent, line_bps) {
                (None, Some(p), Some(line)) => Some(line / 100 * u64::from(p.min(100))),
                _ => None,
            };
            let min = match (qm.priority_level, from_percent, qm.min_bps) {
                (Some(_), _, _) => None,
                (None, a, b) => a.max(b).filter(|r| *r > 0),
            };
            self.min_rate[i] = Self::limiter(min, self.min_rate[i].take());
            if self.min_rate[i].is_some() {
                self.guaranteed |= 1 << i;
            }
        }
    }

    /// A limiter at `rate`, keeping `old`'s timing when the rate is unchanged.
    fn limiter(rate: Option<u64>, old: Option<RateLimiter>) -> Option<RateLimiter> {
        let rate = rate.filter(|r| *r > 0)?;
        match old {
            Some(l) if l.rate_bps() == rate => Some(l),
            _ => Some(RateLimiter::new(rate, LIMITER_BURST_BYTES)),
        }
    }

    /// Offers `pkt` to queue `q` (0–7; higher values use queue 7) at `now`.
    /// WRED may mark it CE or drop it, the buffer may refuse it; a refused
    /// packet is dropped here and the reason returned for the port's counters
    /// (the queue's own counters are already updated).
    #[inline]
    pub fn enqueue(
        &mut self,
        q: usize,
        pkt: PacketBuf,
        now: Nanos,
        counters: &mut [QueueCounters; NUM_QUEUES],
    ) -> Result<(), DropReason> {
        self.offer(q, pkt, now, counters, false)
    }

    /// As [`enqueue`](Self::enqueue); a `lossless` packet (whose ingress
    /// headroom the switch has already checked: that is its bound) is never
    /// dropped here, neither by WRED nor by the buffer limits, and is still
    /// ECN-marked.
    #[inline]
    pub fn offer(
        &mut self,
        q: usize,
        mut pkt: PacketBuf,
        now: Nanos,
        counters: &mut [QueueCounters; NUM_QUEUES],
        lossless: bool,
    ) -> Result<(), DropReason> {
        let q = q.min(NUM_QUEUES - 1);
        let len = pkt.len() as u64;
        let c = &mut counters[q];
        c.offered_packets += 1;
        c.offered_bytes += len;
        let mut mark = false;
        if let Some(w) = self.wred[q].as_mut() {
            let depth = match w.config().unit {
                ThresholdUnit::Bytes => self.bytes[q],
                ThresholdUnit::Packets => self.queues[q].len() as u64,
            };
            match w.decide(depth, || ecn::ecn_capable(&pkt), &mut self.rng) {
                Verdict::Pass => {}
                Verdict::Mark => mark = true,
                Verdict::Drop if lossless => {}
                Verdict::Drop => {
                    c.wred_drops += 1;
                    c.wred_drop_bytes += len;
                    return Err(DropReason::Wred);
                }
            }
        }
        let occ = Occupancy {
            queue_bytes: self.bytes[q],
            queue_packets: self.queues[q].len() as u64,
            port_bytes: self.total_bytes,
            buffer_bytes: self.buffer_bytes,
        };
        if !lossless && !limit::admits(self.cfg[q].limit, occ, len) {
            c.tail_drops += 1;
            c.tail_drop_bytes += len;
            return Err(DropReason::TailDrop);
        }
        if mark && ecn::mark_ce(&mut pkt) {
            c.ecn_marked += 1;
        }
        // From here until departure the timestamp is the enqueue time.
        pkt.timestamp = now;
        self.queues[q].push_back(pkt);
        self.bytes[q] += len;
        self.total_bytes += len;
        self.total_packets += 1;
        self.nonempty |= 1 << q;
        // Depths are booked when packets leave and when counters are read
        // (see `settle_sent` and `counters_now`), not here.
        Ok(())
    }

    /// `counters` with each queue's depth as it is now, and its maximum
    /// depth including now. The fast path books depths only as packets
    /// leave: depth rises only on enqueue and falls only on dequeue, so the
    /// deepest a queue has been is its depth just before some departure, or
    /// its depth now.
    pub fn counters_now(
        &self,
        counters: &[QueueCounters; NUM_QUEUES],
    ) -> [QueueCounters; NUM_QUEUES] {
        let mut now = *counters;
        for (q, c) in now.iter_mut().enumerate() {
            c.depth_bytes = self.bytes[q];
            c.depth_packets = self.queues[q].len() as u64;
            c.max_depth_bytes = c.max_depth_bytes.max(c.depth_bytes);
            c.max_depth_packets = c.max_depth_packets.max(c.depth_packets);
        }
        now
    }

    /// Queues that may send a frame starting at `t_ps`: not empty, not
    /// paused, within their shape rate.
    #[inline]
    fn eligible(&self, t_ps: u64) -> u8 {
        let mut mask = self.nonempty & !self.paused;
        let mut shaped = mask & self.shaped;
        while shaped != 0 {
            let q = shaped.trailing_zeros() as usize;
            shaped &= shaped - 1;
            if self.shape[q].as_ref().is_some_and(|l| !l.ready(t_ps)) {
                mask &= !(1 << q);
            }
        }
        mask
    }

    /// Queues below their guaranteed minimum at `t_ps`.
    #[inline]
    fn below_min(&self, mask: u8, t_ps: u64) -> u8 {
        let mut out = 0;
        let mut g = mask & self.guaranteed;
        while g != 0 {
            let q = g.trailing_zeros() as usize;
            g &= g - 1;
            if self.min_rate[q].as_ref().is_some_and(|l| l.ready(t_ps)) {
                out |= 1 << q;
            }
        }
        out
    }

    /// Moves up to `max` packets (and no more than fit in `out`) into `out`
    /// in scheduling order, as far as the port's line rate allows by `now`,
    /// counting them as transmitted. Each packet's `timestamp` becomes its
    /// departure time.
    pub fn dequeue_burst(
        &mut self,
        out: &mut Burst,
        max: usize,
        now: Nanos,
        counters: &mut [QueueCounters; NUM_QUEUES],
    ) -> usize {
        let room = max.min(BURST_SIZE - out.len());
        if self.total_packets == 0 || room == 0 {
            return 0;
        }
        let now_ps = now.saturating_mul(PS_PER_NS);
        let line_rate = self.shaper.rate_bps().is_some();
        let mut t = self.shaper.start_ps(now_ps);
        let mut n = 0;
        let mut waiting = false;
        // A weighted pick that `again` may repeat while its credit lasts.
        let mut run: Option<usize> = None;
        let mut sent_packets = [0u64; NUM_QUEUES];
        let mut sent_bytes = [0u64; NUM_QUEUES];
        let mut sent_from = 0u8;
        while n < room {
            if t > now_ps {
                waiting = self.eligible(t) != 0;
                break;
            }
            let queues = &self.queues;
            let head_len = |q: usize| queues[q].front().map_or(0, |p| p.len() as u64);
            let q = match run {
                Some(q) if self.scheduler.again(q, head_len(q)) => q,
                _ => {
                    let eligible = self.eligible(t);
                    let below_min = self.below_min(eligible, t);
                    let Some((q, tier)) = self.scheduler.pick(eligible, below_min, head_len) else {
                        break;
                    };
                    // Nothing is enqueued or paused during a burst, so once
                    // no queue with a shape rate or a guarantee holds a
                    // packet, what is eligible changes only as queues empty,
                    // and a weighted pick stands while its credit lasts.
                    let timed = (self.shaped | self.guaranteed) & self.nonempty;
                    run = (tier == Tier::Weighted && timed == 0).then_some(q);
                    q
                }
            };
            let Some(mut pkt) = self.queues[q].pop_front() else {
                // A picked queue is never empty; forget the stale bit.
                self.nonempty &= !(1 << q);
                continue;
            };
            let start = t;
            let len = pkt.len() as u64;
            let departure = if line_rate || (self.shaped | self.guaranteed) & (1 << q) != 0 {
                let wire = shaper::wire_bytes(pkt.len());
                t = self.shaper.send(t, wire);
                if let Some(l) = self.shape[q].as_mut() {
                    l.charge(start, wire);
                }
                if let Some(l) = self.min_rate[q].as_mut() {
                    l.charge(start, wire);
                }
                shaper::ps_to_ns_ceil(start).max(pkt.timestamp)
            } else {
                now.max(pkt.timestamp)
            };
            self.sojourn[q].record(departure - pkt.timestamp);
            pkt.timestamp = departure;
            sent_bytes[q] += len;
            sent_packets[q] += 1;
            sent_from |= 1 << q;
            if self.queues[q].is_empty() {
                self.nonempty &= !(1 << q);
                self.scheduler.emptied(q);
            }
            out.push(pkt);
            n += 1;
            if !line_rate {
                t = now_ps;
                if run == Some(q) {
                    let (p, b) = (&mut sent_packets[q], &mut sent_bytes[q]);
                    n += self.drain_run(q, now, room - n, out, p, b);
                }
            }
            if n == room {
                waiting = self.eligible(t) != 0;
            }
        }
        self.shaper.set_backlogged(waiting);
        self.settle_sent(sent_from, &sent_packets, &sent_bytes, counters);
        n
    }

    /// The rest of a weighted run on a port without a line rate, where no
    /// queue holding packets is timed: every packet leaves at `now`, so
    /// they go back to back from queue `q` while its credit covers them, up
    /// to `max`, with none of the general step's timing. Returns how many.
    #[inline]
    fn drain_run(
        &mut self,
        q: usize,
        now: Nanos,
        max: usize,
        out: &mut Burst,
        packets: &mut u64,
        bytes: &mut u64,
    ) -> usize {
        // Already below NUM_QUEUES; saying so drops the bounds checks.
        let q = q % NUM_QUEUES;
        let mut n = 0;
        while n < max {
            let Some(len) = self.queues[q].front().map(|p| p.len() as u64) else {
                break;
            };
            if !self.scheduler.again(q, len) {
                break;
            }
            let Some(mut pkt) = self.queues[q].pop_front() else {
                break;
            };
            let departure = now.max(pkt.timestamp);
            self.sojourn[q].record(departure - pkt.timestamp);
            pkt.timestamp = departure;
            *packets += 1;
            *bytes += len;
            out.push(pkt);
            n += 1;
        }
        if self.queues[q].is_empty() {
            self.nonempty &= !(1 << q);
            self.scheduler.emptied(q);
        }
        n
    }

    /// Books what a burst took from the queues in `from`: depths, peaks and
    /// counters once per queue rather than once per packet (nothing in the
    /// burst reads them), and no work at all for the queues it left alone.
    #[inline]
    fn settle_sent(
        &mut self,
        from: u8,
        packets: &[u64; NUM_QUEUES],
        bytes: &[u64; NUM_QUEUES],
        counters: &mut [QueueCounters; NUM_QUEUES],
    ) {
        let mut m = from;
        while m != 0 {
            let q = m.trailing_zeros() as usize % NUM_QUEUES;
            m &= m - 1;
            let c = &mut counters[q];
            // The depth before this burst took its packets.
            c.max_depth_bytes = c.max_depth_bytes.max(self.bytes[q]);
            c.max_depth_packets = c
                .max_depth_packets
                .max(self.queues[q].len() as u64 + packets[q]);
            self.bytes[q] -= bytes[q];
            self.total_bytes -= bytes[q];
            self.total_packets -= packets[q] as usize;
            c.tx_packets += packets[q];
            c.tx_bytes += bytes[q];
            c.depth_bytes = self.bytes[q];
            c.depth_packets = self.queues[q].len() as u64;
        }
    }

    /// The earliest time a queued packet may leave: when the wire frees
    /// and some queue that is neither paused nor over its shape rate has a
    /// packet. `None` when nothing can leave until something else happens
    /// (empty, or every queued packet is paused).
    pub fn next_departure(&self) -> Option<Nanos> {
        let cand = self.nonempty & !self.paused;
        if cand == 0 {
            return None;
        }
        let mut ready = u64::MAX;
        let mut m = cand;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            let r = self.shape[q].as_ref().map_or(0, RateLimiter::ready_ps);
            ready = ready.min(r);
        }
        let wire = if self.shaper.rate_bps().is_some() {
            self.shaper.wire_free_ps()
        } else {
            0
        };
        Some(shaper::ps_to_ns_ceil(ready.max(wire)))
    }

    /// Accounts a frame sent around the queues (a control frame) on the wire,
    /// so the frames after it leave at line rate behind it.
    pub fn charge_wire(&mut self, now: Nanos, len: usize) {
        let t = self.shaper.start_ps(now.saturating_mul(PS_PER_NS));
        self.shaper.send(t, shaper::wire_bytes(len));
    }

    /// Pauses or resumes queue `q` (PFC): a paused queue keeps its packets
    /// and its DWRR credit and is skipped by the scheduler.
    pub fn set_paused(&mut self, q: usize, paused: bool) {
        let bit = 1u8 << (q.min(NUM_QUEUES - 1));
        if paused {
            self.paused |= bit;
        } else {
            self.paused &= !bit;
        }
    }

    /// Empties queue `q` (the PFC watchdog's flush), counting its packets as
    /// watchdog drops and handing each to `dropped`; returns how many.
    pub fn flush(
        &mut self,
        q: usize,
        counters: &mut [QueueCounters; NUM_QUEUES],
        mut dropped: impl FnMut(PacketBuf),
    ) -> usize {
        let q = q.min(NUM_QUEUES - 1);
        let n = self.queues[q].len();
        let c = &mut counters[q];
        c.max_depth_bytes = c.max_depth_bytes.max(self.bytes[q]);
        c.max_depth_packets = c.max_depth_packets.max(n as u64);
        while let Some(pkt) = self.queues[q].pop_front() {
            let len = pkt.len() as u64;
            self.bytes[q] -= len;
            self.total_bytes -= len;
            self.total_packets -= 1;
            c.watchdog_drops += 1;
            c.watchdog_drop_bytes += len;
            dropped(pkt);
        }
        if n > 0 {
            self.nonempty &= !(1 << q);
            self.scheduler.emptied(q);
        }
        c.depth_bytes = 0;
        c.depth_packets = 0;
        n
    }

    /// Bit q: queue q holds packets.
    pub fn nonempty_mask(&self) -> u8 {
        self.nonempty
    }

    /// Bit q: queue q is paused.
    pub fn paused_mask(&self) -> u8 {
        self.paused
    }

    /// Whether queue `q` is paused.
    pub fn is_paused(&self, q: usize) -> bool {
        self.paused & (1 << q.min(NUM_QUEUES - 1)) != 0
    }

    /// Packets queued across all eight queues.
    pub fn len(&self) -> usize {
        self.total_packets
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.total_packets == 0
    }

    /// Bytes queued in queue `q`.
    pub fn depth_bytes(&self, q: usize) -> u64 {
        self.bytes[q.min(NUM_QUEUES - 1)]
    }

    /// Packets queued in queue `q`.
    pub fn depth_packets(&self, q: usize) -> usize {
        self.queues[q.min(NUM_QUEUES - 1)].len()
    }

    /// Bytes queued across the port (what the shared buffer holds).
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Queue `q`'s WRED average, in its thresholds' unit, when it has WRED.
    pub fn wred_average(&self, q: usize) -> Option<u64> {
        self.wred[q.min(NUM_QUEUES - 1)].as_ref().map(Wred::average)
    }

    /// Sojourn-time percentiles of queue `q`.
    pub fn latency(&self, q: usize) -> LatencyStats {
        self.sojourn[q.min(NUM_QUEUES - 1)].stats()
    }

    /// The scheduler, for inspection (DWRR credit, quanta).
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }
}

#[cfg(test)]
mod tests {
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
            assert_eq!(q.offer(3, p, 0, &mut c, true), Ok(()));
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
}
