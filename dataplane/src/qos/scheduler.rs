//! Which queue sends next: strict priority levels, then guaranteed minimums,
//! then deficit-weighted round robin, then leftover capacity.
//!
//! The scheduler sees queues only as bits: which may send now (`eligible`:
//! non-empty, not paused, within their shape rate) and which are below their
//! guaranteed minimum. Deficit round robin (Shreedhar and Varghese) gives
//! each weighted queue, on its turn, a quantum proportional to its weight and
//! lets it send while its deficit covers the head packet; quanta are at
//! least one maximum frame, so a turn always sends something and long-run
//! byte shares equal the weights whatever the packet sizes. A queue that is
//! skipped (paused, shaped) keeps its deficit; a queue that empties loses it.

use crate::model::QueueModel;

/// Queues per port.
const NUM: usize = 8;

/// The tier a queue was served from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// A strict-priority queue.
    Strict,
    /// A queue below its guaranteed minimum rate.
    Minimum,
    /// Deficit-weighted round robin.
    Weighted,
    /// Weight 0: capacity nobody else wanted.
    Leftover,
}

/// Picks the first queue in `mask` at or after `*next` (cyclically) and
/// moves `*next` past it.
#[inline]
fn round_robin(mask: u8, next: &mut u8) -> Option<usize> {
    if mask == 0 {
        return None;
    }
    let n = u32::from(*next) % NUM as u32;
    let q = (mask.rotate_right(n).trailing_zeros() + n) % NUM as u32;
    *next = ((q + 1) % NUM as u32) as u8;
    Some(q as usize)
}

/// The scheduling state of one port.
#[derive(Debug, Clone)]
pub struct Scheduler {
    /// Per strict level (index = level − 1): its queues.
    levels: [u8; NUM],
    strict: u8,
    weighted: u8,
    leftover: u8,
    quantum: [u64; NUM],
    deficit: [u64; NUM],
    /// The weighted queue whose turn it is.
    cursor: usize,
    /// The cursor's queue has not had its quantum for this turn yet.
    fresh: bool,
    rr_level: [u8; NUM],
    rr_min: u8,
    rr_leftover: u8,
}

impl Scheduler {
    /// A scheduler for `queues`; `unit` is the smallest quantum (at least the
    /// largest frame the port sends), given to the queue of smallest weight.
    pub fn new(queues: &[QueueModel; NUM], unit: u64) -> Self {
        let mut s = Scheduler {
            levels: [0; NUM],
            strict: 0,
            weighted: 0,
            leftover: 0,
            quantum: [0; NUM],
            deficit: [0; NUM],
            cursor: 0,
            fresh: true,
            rr_level: [0; NUM],
            rr_min: 0,
            rr_leftover: 0,
        };
        s.configure(queues, unit);
        s
    }

    /// The DWRR weight of a queue (0 for strict priority and leftover-only queues).
    pub fn weight(q: &QueueModel) -> u64 {
        if q.priority_level.is_some() {
            return 0;
        }
        u64::from(
            q.bandwidth_remaining_percent
                .or(q.bandwidth_percent)
                .unwrap_or(0),
        )
    }

    /// Applies new settings, keeping the deficits of queues that stay weighted.
    pub fn configure(&mut self, queues: &[QueueModel; NUM], unit: u64) {
        self.levels = [0; NUM];
        self.strict = 0;
        self.weighted = 0;
        self.leftover = 0;
        let min_weight = queues
            .iter()
            .map(Self::weight)
            .filter(|w| *w > 0)
            .min()
            .unwrap_or(1);
        for (i, q) in queues.iter().enumerate() {
            let bit = 1u8 << i;
            if let Some(level) = q.priority_level {
                let l = usize::from(level.clamp(1, NUM as u8)) - 1;
                self.levels[l] |= bit;
                self.strict |= bit;
                self.quantum[i] = 0;
            } else {
                let w = Self::weight(q);
                if w > 0 {
                    self.weighted |= bit;
                    self.quantum[i] = w * unit.max(1) / min_weight;
                } else {
                    self.leftover |= bit;
                    self.quantum[i] = 0;
                }
            }
            if self.weighted & bit == 0 {
                self.deficit[i] = 0;
            }
        }
    }

    /// Queues served by strict priority (bit n = queue n).
    pub fn strict_mask(&self) -> u8 {
        self.strict
    }

    /// The DWRR quantum of queue `q` in bytes (0 if not weighted).
    pub fn quantum(&self, q: usize) -> u64 {
        self.quantum[q % NUM]
    }

    /// The unspent DWRR credit of queue `q` in bytes.
    pub fn deficit(&self, q: usize) -> u64 {
        self.deficit[q % NUM]
    }

    /// Chooses the queue to send from. `eligible`: queues that may send now;
    /// `below_min`: queues under their guaranteed minimum; `head_len(q)`: the
    /// length of queue q's first packet (only asked for eligible queues).
    #[inline]
    pub fn pick(
        &mut self,
        eligible: u8,
        below_min: u8,
        head_len: impl Fn(usize) -> u64,
    ) -> Option<(usize, Tier)> {
        if eligible == 0 {
            return None;
        }
        if eligible & self.strict != 0 {
            for (level, next) in self.levels.iter().zip(self.rr_level.iter_mut()) {
                if let Some(q) = round_robin(eligible & level, next) {
                    return Some((q, Tier::Strict));
                }
            }
        }
        let others = eligible & !self.strict;
        if let Some(q) = round_robin(others & below_min, &mut self.rr_min) {
            return Some((q, Tier::Minimum));
        }
        if let Some(q) = self.weighted_pick(others & self.weighted, &head_len) {
            return Some((q, Tier::Weighted));
        }
        round_robin(others & self.leftover, &mut self.rr_leftover).map(|q| (q, Tier::Leftover))
    }

    #[inline]
    fn weighted_pick(&mut self, mask: u8, head_len: &impl Fn(usize) -> u64) -> Option<usize> {
        if mask == 0 {
            return None;
        }
        // Quanta cover a maximum frame, so two passes always find a packet;
        // the bound only guards against a frame larger than the quantum unit.
        for _ in 0..NUM * 64 {
            let q = self.cursor;
            if mask & (1 << q) != 0 {
                if self.fresh {
                    self.deficit[q] += self.quantum[q];
                    self.fresh = false;
                }
                let len = head_len(q);
                if self.deficit[q] >= len {
                    self.deficit[q] -= len;
                    return Some(q);
                }
            }
            // On to the next queue in `mask`, fresh: stepping one queue at a
            // time would only make each queue in between fresh in turn.
            let after = (q + 1) % NUM;
            let skip = mask.rotate_right(after as u32).trailing_zeros() as usize;
            self.cursor = (after + skip) % NUM;
            self.fresh = true;
        }
        let q = mask.trailing_zeros() as usize;
        self.deficit[q] = 0;
        Some(q)
    }

    /// Serves `q` again if it is what [`pick`](Self::pick) would choose next
    /// when nothing has changed since `pick` last chose `q` from the weighted
    /// tier (no strict or below-minimum queue became eligible): `q` is still
    /// at the cursor and its credit covers a head packet of `len` bytes.
    /// Leaves everything as it was when it says no. A burst from one class
    /// then pays for the full pick once, not per packet.
    #[inline]
    pub fn again(&mut self, q: usize, len: u64) -> bool {
        let q = q % NUM;
        if self.cursor == q && !self.fresh && len > 0 && self.deficit[q] >= len {
            self.deficit[q] -= len;
            true
        } else {
            false
        }
    }

    /// Queue `q` has become empty: its unspent credit is forgotten (DRR).
    #[inline]
    pub fn emptied(&mut self, q: usize) {
        self.deficit[q % NUM] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(f: impl Fn(usize, &mut QueueModel)) -> [QueueModel; NUM] {
        std::array::from_fn(|i| {
            let mut q = QueueModel::default();
            f(i, &mut q);
            q
        })
    }

    #[test]
    fn round_robin_wraps() {
        let mut next = 0;
        let order: Vec<_> = (0..5)
            .map(|_| round_robin(0b1010_0100, &mut next).unwrap())
            .collect();
        assert_eq!(order, vec![2, 5, 7, 2, 5]);
        assert_eq!(round_robin(0, &mut next), None);
    }

    #[test]
    fn strict_levels_in_order_then_the_rest() {
        let p = policy(|i, q| match i {
            7 => q.priority_level = Some(1),
            6 => q.priority_level = Some(2),
            5 => q.priority_level = Some(2),
            0 => q.bandwidth_remaining_percent = Some(100),
            _ => {}
        });
        let mut s = Scheduler::new(&p, 1500);
        let all = 0xff;
        assert_eq!(s.pick(all, 0, |_| 100), Some((7, Tier::Strict)));
        // Level 2 alternates between its two queues.
        assert_eq!(s.pick(all & !0x80, 0, |_| 100), Some((5, Tier::Strict)));
        assert_eq!(s.pick(all & !0x80, 0, |_| 100), Some((6, Tier::Strict)));
        assert_eq!(s.pick(all & !0x80, 0, |_| 100), Some((5, Tier::Strict)));
        // Below a minimum beats weights.
        assert_eq!(
            s.pick(0b0001_0001, 0b0001_0000, |_| 100),
            Some((4, Tier::Minimum))
        );
        assert_eq!(s.pick(0b0001_0001, 0, |_| 100), Some((0, Tier::Weighted)));
        assert_eq!(s.pick(0b0000_0110, 0, |_| 100), Some((1, Tier::Leftover)));
        assert_eq!(s.pick(0, 0xff, |_| 100), None);
    }

    /// Serves queues of packets (lengths per queue, front first) the way
    /// `EgressQueues::dequeue_burst` does, with or without `again`; returns
    /// the order and how many packets `again` let through.
    fn serve(s: &mut Scheduler, mut queues: Vec<Vec<u64>>, use_again: bool) -> (Vec<usize>, usize) {
        let mut order = Vec::new();
        let mut again = 0;
        let mut run = None;
        loop {
            let head = |qs: &Vec<Vec<u64>>, q: usize| qs[q].first().copied().unwrap_or(0);
            let q = match run {
                Some(q) if use_again && s.again(q, head(&queues, q)) => {
                    again += 1;
                    q
                }
                _ => {
                    let eligible = (0..NUM)
                        .filter(|&q| !queues[q].is_empty())
                        .fold(0u8, |m, q| m | 1 << q);
                    let Some((q, tier)) = s.pick(eligible, 0, |q| head(&queues, q)) else {
                        return (order, again);
                    };
                    run = (tier == Tier::Weighted).then_some(q);
                    q
                }
            };
            queues[q].remove(0);
            if queues[q].is_empty() {
                s.emptied(q);
            }
            order.push(q);
        }
    }

    #[test]
    fn serving_again_picks_what_a_full_pick_would() {
        let p = policy(|i, q| match i {
            7 => q.priority_level = Some(1),
            _ => q.bandwidth_remaining_percent = Some([10, 20, 30, 40, 0, 0, 0, 0][i]),
        });
        let mut rng = crate::qos::rng::SplitMix64::new(7);
        let mut served_again = 0;
        for _ in 0..50 {
            let queues: Vec<Vec<u64>> = (0..NUM)
                .map(|q| {
                    let n = if q == 7 || q < 4 {
                        rng.next_u64() % 40
                    } else {
                        0
                    };
                    (0..n).map(|_| 64 + rng.next_u64() % 1437).collect()
                })
                .collect();
            let mut a = Scheduler::new(&p, 1500);
            let mut b = Scheduler::new(&p, 1500);
            let (full, _) = serve(&mut a, queues.clone(), false);
            let (with_again, n) = serve(&mut b, queues, true);
            assert_eq!(with_again, full);
            served_again += n;
            assert_eq!(
                (a.cursor, a.fresh, a.deficit),
                (b.cursor, b.fresh, b.deficit)
            );
        }
        // Most weighted packets go out through `again`.
        assert!(served_again > 1000, "{served_again}");
    }

    #[test]
    fn quanta_follow_weights() {
        let p = policy(|i, q| match i {
            1 => q.bandwidth_remaining_percent = Some(20),
            2 => q.bandwidth_remaining_percent = Some(50),
            3 => q.bandwidth_percent = Some(30),
            7 => q.priority_level = Some(1),
            _ => {}
        });
        let s = Scheduler::new(&p, 9000);
        assert_eq!(
            (0..8).map(|q| s.quantum(q)).collect::<Vec<_>>(),
            vec![0, 9000, 22_500, 13_500, 0, 0, 0, 0]
        );
        assert_eq!(s.strict_mask(), 0x80);
    }

    #[test]
    fn byte_shares_match_weights_and_a_skipped_queue_keeps_credit() {
        let p = policy(|i, q| {
            q.bandwidth_remaining_percent = Some([10, 20, 30, 40, 0, 0, 0, 0][i]);
        });
        let mut s = Scheduler::new(&p, 1500);
        let len = |q: usize| [64u64, 1500, 700, 333][q % 4];
        let mut bytes = [0u64; 4];
        for _ in 0..200_000 {
            let (q, tier) = s.pick(0x0f, 0, len).unwrap();
            assert_eq!(tier, Tier::Weighted);
            bytes[q] += len(q);
        }
        let total: u64 = bytes.iter().sum();
        for (q, b) in bytes.iter().enumerate() {
            let share = *b as f64 / total as f64;
            let want = [0.1, 0.2, 0.3, 0.4][q];
            assert!((share - want).abs() < 0.005, "queue {q}: {share}");
        }
        // Queue 3 mid-turn, then skipped (paused): its credit stays.
        while s.pick(0x0f, 0, len).unwrap().0 != 3 {}
        let credit = s.deficit(3);
        assert!(credit > 0);
        for _ in 0..100 {
            assert_ne!(s.pick(0x07, 0, len).unwrap().0, 3);
        }
        assert_eq!(s.deficit(3), credit);
        s.emptied(3);
        assert_eq!(s.deficit(3), 0);
    }

    /// DWRR as written down: the cursor steps one queue at a time.
    struct Stepper {
        quantum: [u64; NUM],
        deficit: [u64; NUM],
        cursor: usize,
        fresh: bool,
    }

    impl Stepper {
        fn pick(&mut self, mask: u8, len: impl Fn(usize) -> u64) -> usize {
            loop {
                let q = self.cursor;
                if mask & (1 << q) != 0 {
                    if self.fresh {
                        self.deficit[q] += self.quantum[q];
                        self.fresh = false;
                    }
                    if self.deficit[q] >= len(q) {
                        self.deficit[q] -= len(q);
                        return q;
                    }
                }
                self.cursor = (q + 1) % NUM;
                self.fresh = true;
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn the_weighted_pick_serves_as_a_one_step_walk_would(
            weights in proptest::array::uniform8(1u8..=100),
            steps in proptest::collection::vec((1u8..=255, 0usize..NUM, 64u64..=1500), 1..300),
        ) {
            let p = policy(|i, q| q.bandwidth_remaining_percent = Some(weights[i]));
            let mut s = Scheduler::new(&p, 1500);
            let mut model = Stepper {
                quantum: s.quantum,
                deficit: [0; NUM],
                cursor: s.cursor,
                fresh: s.fresh,
            };
            for (mask, emptied, len) in steps {
                // Head lengths differ per queue and per step.
                let head = |q: usize| len + 97 * q as u64;
                let want = model.pick(mask, head);
                proptest::prop_assert_eq!(s.pick(mask, 0, head), Some((want, Tier::Weighted)));
                proptest::prop_assert_eq!((s.cursor, s.fresh, s.deficit), (model.cursor, model.fresh, model.deficit));
                if emptied == want {
                    s.emptied(want);
                    model.deficit[want] = 0;
                }
            }
        }
    }
}
