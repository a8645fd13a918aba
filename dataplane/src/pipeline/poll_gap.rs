//! How long a worker goes between two polls: on a software path the
//! largest term of PFC's response time.
//!
//! A port's frames are admitted, and its pauses sent and refreshed, only
//! while its worker polls. When the worker is descheduled (a host with more
//! busy threads than cores) or sleeps while idle, a peer that is not paused
//! keeps sending into the receive ring and a pause it holds can run out, so
//! everything the peer sends in the gap lands beyond xOFF: the headroom a
//! lossless class needs is its speed times the worst gap. Measured here for
//! every poll (one subtraction and compare) and reported with the queuing
//! show commands, rather than assumed.

use crate::clock::Nanos;
use crate::stats::PollGapStats;

/// A window over which the recent worst gap is kept, so the report follows
/// the host's load now rather than a hiccup at start-up.
const WINDOW_NS: Nanos = 10_000_000_000;

/// Upper bounds of the histogram's buckets, in ns; the last is open.
pub const BUCKET_BOUNDS_NS: [Nanos; 6] = [
    10_000,
    100_000,
    1_000_000,
    5_000_000,
    20_000_000,
    100_000_000,
];

/// The gaps of one worker.
#[derive(Debug, Clone, Default)]
pub struct PollGaps {
    last: Nanos,
    window_start: Nanos,
    max_window: Nanos,
    max_prev_window: Nanos,
    max_ever: Nanos,
    buckets: [u64; BUCKET_BOUNDS_NS.len() + 1],
}

impl PollGaps {
    /// Counts the gap since the previous poll, which ran at `self.last`.
    #[inline]
    pub fn record(&mut self, now: Nanos) {
        if self.last != 0 {
            let gap = now.saturating_sub(self.last);
            if now.saturating_sub(self.window_start) >= WINDOW_NS {
                self.window_start = now;
                self.max_prev_window = self.max_window;
                self.max_window = 0;
            }
            self.max_window = self.max_window.max(gap);
            self.max_ever = self.max_ever.max(gap);
            let b = BUCKET_BOUNDS_NS.iter().take_while(|&&b| gap >= b).count();
            self.buckets[b] += 1;
        } else {
            self.window_start = now;
        }
        self.last = now;
    }

    /// The snapshot for show commands.
    pub fn stats(&self) -> PollGapStats {
        PollGapStats {
            recent_max_ns: self.max_window.max(self.max_prev_window),
            max_ns: self.max_ever,
            buckets: self.buckets.to_vec(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_fill_buckets_and_the_recent_maximum_ages_out() {
        let mut g = PollGaps::default();
        let mut t = 1;
        g.record(t);
        for gap in [5_000, 50_000, 2_000_000, 30_000_000, 200_000_000] {
            t += gap;
            g.record(t);
        }
        let s = g.stats();
        assert_eq!(s.buckets, vec![1, 1, 0, 1, 0, 1, 1]);
        assert_eq!((s.max_ns, s.recent_max_ns), (200_000_000, 200_000_000));
        // Two windows of short gaps later, the 200 ms gap is history.
        for _ in 0..2 * (WINDOW_NS / 1_000_000) + 2 {
            t += 1_000_000;
            g.record(t);
        }
        let s = g.stats();
        assert_eq!((s.max_ns, s.recent_max_ns), (200_000_000, 1_000_000));
        assert_eq!(s.buckets.iter().sum::<u64>(), 5 + 2 * 10_000 + 2);
    }
}
