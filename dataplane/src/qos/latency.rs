//! Sojourn time per queue: how long packets waited, as an HDR histogram.
//!
//! The histogram's counts are allocated when the queue is built (1 ns to
//! [`MAX_SOJOURN_NS`], two significant digits, about 30 KB); recording is an
//! index computation and an increment, and saturates rather than growing.
//! A queue no class maps to is built without one ([`Sojourn::unused`]):
//! a fabric of 48 switches with 64 ports has 24,576 queues, and 30 KB each
//! is 700 MB of histograms, most of them for queues nothing can reach.
//! Packets that did not wait at all (they left in the poll that queued them,
//! the common case on an uncongested port) are only counted, and folded into
//! the percentiles when they are read.

use hdrhistogram::Histogram;

use crate::clock::Nanos;
use crate::stats::LatencyStats;

/// Longest sojourn told apart; longer ones are recorded as this.
pub const MAX_SOJOURN_NS: Nanos = 10_000_000_000;

/// One queue's sojourn-time distribution.
#[derive(Clone)]
pub struct Sojourn {
    hist: Option<Histogram<u64>>,
    /// Packets with a sojourn of 0, kept out of the histogram.
    zeros: u64,
}

impl std::fmt::Debug for Sojourn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The bucket array is thousands of counters; show the summary.
        f.debug_struct("Sojourn")
            .field("count", &self.count())
            .field("stats", &self.stats())
            .finish()
    }
}

impl Default for Sojourn {
    fn default() -> Self {
        Self::new()
    }
}

impl Sojourn {
    /// An empty, preallocated histogram.
    pub fn new() -> Self {
        // Fixed, valid bounds: creation cannot fail; if it ever did, the
        // queue would simply report no latency.
        Sojourn {
            hist: Histogram::new_with_bounds(1, MAX_SOJOURN_NS, 2).ok(),
            zeros: 0,
        }
    }

    /// No histogram: for a queue no packet can reach. A queue that
    /// becomes reachable (a reload) gets one from [`measure`](Self::measure).
    pub fn unused() -> Self {
        Sojourn {
            hist: None,
            zeros: 0,
        }
    }

    /// Gives an [`unused`](Self::unused) sojourn its histogram (outside the
    /// packet path: when the queue is built or reconfigured).
    pub fn measure(&mut self) {
        if self.hist.is_none() {
            self.hist = Sojourn::new().hist;
        }
    }

    /// Whether sojourns other than zero are recorded.
    pub fn measured(&self) -> bool {
        self.hist.is_some()
    }

    /// Records one packet's sojourn.
    #[inline]
    pub fn record(&mut self, ns: Nanos) {
        if ns == 0 {
            self.zeros += 1;
        } else if let Some(h) = self.hist.as_mut() {
            h.saturating_record(ns);
        } else {
            debug_assert!(false, "a packet waited in a queue no class maps to");
        }
    }

    /// Packets recorded.
    pub fn count(&self) -> u64 {
        self.zeros + self.hist.as_ref().map_or(0, |h| h.len())
    }

    /// Mean sojourn over every packet recorded, zeros included, in
    /// nanoseconds (0 when nothing was recorded): the W of Little's law
    /// (mean depth = departure rate × W). Each value counts as the middle
    /// of its histogram bucket, so the mean is within 0.4 % of the exact
    /// one (buckets are at most 1/128 of their value wide).
    pub fn mean_ns(&self) -> f64 {
        let count = self.count();
        match &self.hist {
            Some(h) if count > 0 => h.mean() * h.len() as f64 / count as f64,
            _ => 0.0,
        }
    }

    /// The sojourn at quantile `q` (0–1) over every packet recorded.
    fn quantile(&self, h: &Histogram<u64>, q: f64) -> u64 {
        let total = (self.zeros + h.len()) as f64;
        let above_zeros = q * total - self.zeros as f64;
        if above_zeros <= 0.0 || h.is_empty() {
            0
        } else {
            h.value_at_quantile((above_zeros / h.len() as f64).min(1.0))
        }
    }

    /// The whole distribution as a CDF: `(sojourn_ns, fraction of packets
    /// that waited at most that long)`, one point per occupied histogram
    /// bucket (the zeros first), ascending. For pictures of the
    /// distribution beyond the three percentiles of [`Sojourn::stats`].
    /// Empty when nothing was recorded.
    pub fn cdf(&self) -> Vec<(Nanos, f64)> {
        let total = self.count();
        if total == 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut below = self.zeros;
        if self.zeros > 0 {
            out.push((0, below as f64 / total as f64));
        }
        if let Some(h) = &self.hist {
            for v in h.iter_recorded() {
                below += v.count_at_value();
                out.push((
                    h.highest_equivalent(v.value_iterated_to()),
                    below as f64 / total as f64,
                ));
            }
        }
        out
    }

    /// p50, p99 and max, in nanoseconds (zeros when nothing was recorded).
    pub fn stats(&self) -> LatencyStats {
        match &self.hist {
            Some(h) => LatencyStats {
                p50: self.quantile(h, 0.5),
                p99: self.quantile(h, 0.99),
                max: if h.is_empty() { 0 } else { h.max() },
            },
            None => LatencyStats::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cdf_counts_zeros_first_and_ends_at_one() {
        let mut s = Sojourn::new();
        assert!(s.cdf().is_empty());
        s.record(0);
        s.record(1_000);
        s.record(1_000);
        s.record(5_000);
        let c = s.cdf();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0], (0, 0.25));
        assert!(c[1].0 >= 1_000 && c[1].0 < 1_010 && c[1].1 == 0.75, "{c:?}");
        assert!(c[2].0 >= 5_000 && c[2].0 < 5_050 && c[2].1 == 1.0, "{c:?}");
    }

    #[test]
    fn packets_that_never_waited_count_in_the_percentiles() {
        let mut s = Sojourn::new();
        for _ in 0..60 {
            s.record(0);
        }
        for v in 1..=40u64 {
            s.record(v * 1000);
        }
        let st = s.stats();
        assert_eq!(s.count(), 100);
        assert_eq!(st.p50, 0, "60 % never waited");
        assert!((39_000..=40_500).contains(&st.p99), "{st:?}");
        assert!((40_000..=40_500).contains(&st.max), "{st:?}");
        let mut z = Sojourn::new();
        z.record(0);
        assert_eq!(z.stats(), LatencyStats::default());
    }

    #[test]
    fn the_mean_counts_the_zeros_and_is_within_the_bucket_resolution() {
        let mut s = Sojourn::new();
        assert_eq!(s.mean_ns(), 0.0);
        for _ in 0..100 {
            s.record(0);
        }
        // 100 zeros and 100 values from 1 to 100 000 ns: the exact mean is
        // the sum over 200.
        let mut sum = 0u64;
        for v in 1..=100u64 {
            s.record(v * v * 10);
            sum += v * v * 10;
        }
        let exact = sum as f64 / 200.0;
        let mean = s.mean_ns();
        assert!(
            (mean - exact).abs() / exact < 0.004,
            "mean {mean} against {exact}"
        );
    }

    #[test]
    fn percentiles_within_two_digits() {
        let mut s = Sojourn::new();
        assert_eq!(s.stats(), LatencyStats::default());
        for v in 1..=10_000u64 {
            s.record(v * 100);
        }
        s.record(0);
        s.record(MAX_SOJOURN_NS * 3);
        let st = s.stats();
        assert_eq!(s.count(), 10_002);
        assert!(
            (st.p50 as f64 - 500_000.0).abs() / 500_000.0 < 0.01,
            "{st:?}"
        );
        assert!(
            (st.p99 as f64 - 990_000.0).abs() / 990_000.0 < 0.01,
            "{st:?}"
        );
        assert!(st.max >= MAX_SOJOURN_NS, "saturated at the top: {st:?}");
    }
}
