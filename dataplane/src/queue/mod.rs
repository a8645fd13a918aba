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
        Self::with_sojourn(model, seed, u8::MAX)
    }

    /// [`new`](Self::new), with a sojourn histogram only for the queues in
    /// `measured` (one bit each): a switch measures the queues its
    /// classifiers can reach (see [`Sojourn::unused`]).
    pub fn with_sojourn(model: &InterfaceModel, seed: u64, measured: u8) -> Self {
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
            sojourn: std::array::from_fn(|q| {
                if measured & (1 << q) != 0 {
                    Sojourn::new()
                } else {
                    Sojourn::unused()
                }
            }),
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
            .map_err(|(reason, _)| reason)
    }

    /// As [`enqueue`](Self::enqueue); a `lossless` packet (whose ingress
    /// headroom the switch has already checked: that is its bound) is never
    /// dropped here, neither by WRED nor by the buffer limits, and is still
    /// ECN-marked. A dropped packet comes back with its reason, for a
    /// drop capture to see before it is freed.
    #[inline]
    pub fn offer(
        &mut self,
        q: usize,
        mut pkt: PacketBuf,
        now: Nanos,
        counters: &mut [QueueCounters; NUM_QUEUES],
        lossless: bool,
    ) -> Result<(), (DropReason, PacketBuf)> {
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
                    return Err((DropReason::Wred, pkt));
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
            return Err((DropReason::TailDrop, pkt));
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

    /// Adds a sojourn histogram to the queues in `measured` that had none
    /// (a reload made them reachable); histograms already kept stay.
    pub fn measure_sojourn(&mut self, measured: u8) {
        for (q, s) in self.sojourn.iter_mut().enumerate() {
            if measured & (1 << q) != 0 {
                s.measure();
            }
        }
    }

    /// Queue `q`'s sojourn-time distribution so far, for pictures of all
    /// of it (see [`Sojourn::cdf`]).
    pub fn sojourn(&self, q: usize) -> &Sojourn {
        &self.sojourn[q.min(NUM_QUEUES - 1)]
    }

    /// Mean sojourn of queue `q`'s packets so far, nanoseconds (see
    /// [`Sojourn::mean_ns`]).
    pub fn mean_sojourn_ns(&self, q: usize) -> f64 {
        self.sojourn[q.min(NUM_QUEUES - 1)].mean_ns()
    }

    /// The scheduler, for inspection (DWRR credit, quanta).
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }
}

#[cfg(test)]
mod tests;
