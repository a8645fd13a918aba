//! Worker scheduling gaps: stretches of virtual time in which a switch is
//! not polled, as a software switch's worker is not while the host runs
//! something else.
//!
//! On a software backend a port's frames are admitted, and its pauses sent
//! and refreshed, only while its worker polls. In a gap the peer keeps
//! sending into the kernel's ring (here: the cable's [`RingLink`]), and
//! everything it sent lands at once when the worker comes back — beyond
//! xOFF, in the headroom. A fabric that polls every switch at every event
//! never shows that; one with gaps does.
//!
//! [`RingLink`]: railyard_dataplane::port::ring::RingLink

use railyard_dataplane::clock::Nanos;

use super::SplitMix;

/// How often and how long a switch goes unpolled: one gap in every window
/// of `period_ns`, its length drawn from `min_ns..=max_ns` and its start
/// anywhere in the window that leaves it whole, from a seeded generator (so
/// gaps never overlap and a run is the same every time).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gaps {
    /// The window each gap falls in: 1 s / gaps per second.
    pub period_ns: Nanos,
    /// The shortest gap.
    pub min_ns: Nanos,
    /// The longest gap (at most `period_ns`).
    pub max_ns: Nanos,
    /// Seeds the generator; switches given the same `Gaps` through
    /// [`TwoTier`](super::TwoTier) get this plus their number.
    pub seed: u64,
}

impl Gaps {
    /// `per_second` gaps a second of `min_ns..=max_ns` each.
    pub fn per_second(per_second: u64, min_ns: Nanos, max_ns: Nanos, seed: u64) -> Self {
        Gaps {
            period_ns: 1_000_000_000 / per_second.max(1),
            min_ns,
            max_ns,
            seed,
        }
    }

    /// The same gaps with another seed.
    pub fn seeded(self, seed: u64) -> Self {
        Gaps { seed, ..self }
    }
}

/// Where a switch is in its gap schedule.
#[derive(Debug, Clone)]
pub(super) struct GapClock {
    gaps: Gaps,
    rng: SplitMix,
    window: u64,
    start: Nanos,
    end: Nanos,
    /// Gaps that deferred at least one poll.
    pub(super) hit: u64,
    /// Whether the current gap is already in `hit`.
    counted: bool,
}

impl GapClock {
    pub(super) fn new(gaps: Gaps) -> Self {
        let mut g = GapClock {
            gaps,
            rng: SplitMix::new(gaps.seed),
            window: 0,
            start: 0,
            end: 0,
            hit: 0,
            counted: false,
        };
        g.draw();
        g
    }

    /// Places the gap of the current window.
    fn draw(&mut self) {
        let period = self.gaps.period_ns.max(1);
        let max = self.gaps.max_ns.min(period);
        let min = self.gaps.min_ns.min(max);
        let len = min + self.rng.below(max - min + 1);
        let at = self.rng.below(period - len + 1);
        self.start = self.window * period + at;
        self.end = self.start + len;
        self.counted = false;
    }

    /// Whether the switch is off the CPU at `now` (and so must not be
    /// polled); moves past gaps that ended before `now`.
    pub(super) fn off_cpu(&mut self, now: Nanos) -> bool {
        while now >= self.end {
            self.window += 1;
            self.draw();
        }
        let off = now >= self.start;
        if off && !self.counted {
            self.counted = true;
            self.hit += 1;
        }
        off
    }

    /// Whether `now` is inside the current gap (without moving on: ask
    /// [`off_cpu`](Self::off_cpu) first).
    pub(super) fn off(&self, now: Nanos) -> bool {
        (self.start..self.end).contains(&now)
    }

    /// When the current gap ends: the switch's next event while it is off
    /// the CPU.
    pub(super) fn end(&self) -> Nanos {
        self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_gap_per_window_within_its_bounds() {
        let gaps = Gaps::per_second(4, 20_000_000, 50_000_000, 7);
        assert_eq!(gaps.period_ns, 250_000_000);
        let mut g = GapClock::new(gaps);
        let mut seen = Vec::new();
        let step = 1_000_000;
        let mut t = 0;
        while t < 10_000_000_000 {
            if g.off_cpu(t) && seen.last() != Some(&(g.start, g.end)) {
                seen.push((g.start, g.end));
            }
            t += step;
        }
        assert_eq!(seen.len(), 40);
        for (k, (s, e)) in seen.iter().enumerate() {
            let len = e - s;
            assert!((20_000_000..=50_000_000).contains(&len), "gap {k}: {len}");
            assert_eq!(s / gaps.period_ns, k as u64, "gap {k} left its window");
            assert!((e - 1) / gaps.period_ns == k as u64);
        }
        assert_eq!(g.hit, 40);
        // Not all the same: the draw is random.
        assert!(seen.windows(2).any(|w| w[0].1 - w[0].0 != w[1].1 - w[1].0));
    }

    #[test]
    fn a_clock_that_jumps_over_a_gap_does_not_count_it() {
        let mut g = GapClock::new(Gaps::per_second(1, 10, 10, 1));
        let (s, e) = (g.start, g.end);
        assert!(s > 0 && !g.off_cpu(s - 1));
        assert!(g.off_cpu(s));
        assert_eq!(g.end(), e);
        assert!(!g.off_cpu(e));
        assert_eq!(g.hit, 1);
        // Four windows later: the three gaps jumped over are not counted.
        let off = g.off_cpu(5_000_000_000 - 1);
        assert_eq!(g.hit, 1 + u64::from(off));
        assert!(g.start >= 4_000_000_000);
    }
}
