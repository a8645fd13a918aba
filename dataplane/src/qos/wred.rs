//! WRED as NX-OS defines it: an averaged queue depth, a linear marking curve
//! between two thresholds, and ECN marking instead of dropping.
//!
//! The average is kept in fixed point (16 fractional bits), updated on every
//! arrival as avg += (depth − avg) / 2^W; W = 0 makes it the instantaneous
//! depth. The decision compares one uniform 64-bit draw against the exact
//! rational probability `drop-probability × (avg − min) / (100 × (max − min))`
//! with 128-bit integer arithmetic: no floating point, no division per packet.

use crate::model::WredModel;
use crate::qos::rng::SplitMix64;

/// Fractional bits of the fixed-point average.
const FRAC_BITS: u32 = 16;
/// Largest depth or threshold the fixed point holds (2^40: a terabyte).
const MAX_DEPTH: u64 = 1 << 40;

/// `v` in fixed point, clamped so that no arithmetic here can overflow.
#[inline]
fn fixed(v: u64) -> u64 {
    v.min(MAX_DEPTH) << FRAC_BITS
}

/// What WRED decided for one arriving packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Not selected: enqueue unchanged.
    Pass,
    /// Selected, ECN-capable and the queue marks: enqueue with CE.
    Mark,
    /// Selected and not markable: drop.
    Drop,
}

/// One queue's WRED configuration and running average.
#[derive(Debug, Clone)]
pub struct Wred {
    cfg: WredModel,
    /// Average depth × 2^FRAC_BITS.
    avg_fp: u64,
    /// The thresholds in fixed point and the clamped weight, worked out
    /// once per configuration rather than for every packet.
    min_fp: u64,
    max_fp: u64,
    weight: u32,
}

impl Wred {
    /// WRED with an average of zero.
    pub fn new(cfg: WredModel) -> Self {
        let mut w = Wred {
            cfg,
            avg_fp: 0,
            min_fp: 0,
            max_fp: 0,
            weight: 0,
        };
        w.set_config(cfg);
        w
    }

    /// The configuration in force.
    pub fn config(&self) -> &WredModel {
        &self.cfg
    }

    /// Replaces the configuration, keeping the running average.
    pub fn set_config(&mut self, cfg: WredModel) {
        self.cfg = cfg;
        self.min_fp = fixed(cfg.min);
        self.max_fp = fixed(cfg.max);
        self.weight = u32::from(cfg.weight.min(31));
    }

    /// The average depth (whole units of the thresholds).
    pub fn average(&self) -> u64 {
        self.avg_fp >> FRAC_BITS
    }

    /// The average depth, exactly, in units of the thresholds.
    pub fn average_f64(&self) -> f64 {
        self.avg_fp as f64 / f64::from(1u32 << FRAC_BITS)
    }

    /// Folds one observed depth into the average: avg += (depth − avg) / 2^W.
    #[inline]
    pub fn update(&mut self, depth: u64) {
        let d = fixed(depth);
        let w = self.weight;
        if d >= self.avg_fp {
            self.avg_fp += (d - self.avg_fp) >> w;
        } else {
            self.avg_fp -= (self.avg_fp - d) >> w;
        }
    }

    /// Whether the current average selects a packet, drawing from `rng` only
    /// inside the linear band.
    #[inline]
    pub fn selects(&self, rng: &mut SplitMix64) -> bool {
        let (min, max) = (self.min_fp, self.max_fp);
        if self.avg_fp < min {
            return false;
        }
        if self.avg_fp >= max {
            return true;
        }
        // min <= avg < max, so max > min.
        let num =
            u128::from(self.cfg.drop_probability_percent.min(100)) * u128::from(self.avg_fp - min);
        let den = 100 * u128::from(max - min);
        // Selected when draw / 2^64 < num / den.
        u128::from(rng.next_u64()) * den < num << 64
    }

    /// Updates the average with `depth` (the depth the packet finds, in the
    /// thresholds' unit) and decides the packet's fate. `ecn_capable` is
    /// asked only of a selected packet (most pass unselected).
    #[inline]
    pub fn decide(
        &mut self,
        depth: u64,
        ecn_capable: impl FnOnce() -> bool,
        rng: &mut SplitMix64,
    ) -> Verdict {
        self.update(depth);
        if !self.selects(rng) {
            Verdict::Pass
        } else if self.cfg.ecn && ecn_capable() {
            Verdict::Mark
        } else {
            Verdict::Drop
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ThresholdUnit;

    fn cfg(min: u64, max: u64, p: u8, weight: u8, ecn: bool) -> WredModel {
        WredModel {
            min,
            max,
            unit: ThresholdUnit::Bytes,
            drop_probability_percent: p,
            weight,
            ecn,
        }
    }

    /// Fraction selected at a held depth, over `n` packets.
    fn fraction(w: &mut Wred, depth: u64, n: u32, rng: &mut SplitMix64) -> f64 {
        let mut hit = 0u32;
        for _ in 0..n {
            if w.decide(depth, || true, rng) == Verdict::Mark {
                hit += 1;
            }
        }
        f64::from(hit) / f64::from(n)
    }

    #[test]
    fn marked_fraction_follows_the_linear_curve() {
        let mut rng = SplitMix64::new(1);
        let mut w = Wred::new(cfg(100_000, 300_000, 40, 0, true));
        let n = 40_000;
        for (depth, expect) in [
            (0, 0.0),
            (99_999, 0.0),
            (100_000, 0.0),
            (150_000, 0.10),
            (200_000, 0.20),
            (250_000, 0.30),
            (299_000, 0.398),
            (300_000, 1.0),
            (5_000_000, 1.0),
        ] {
            let f = fraction(&mut w, depth, n, &mut rng);
            // Five standard deviations of a binomial proportion.
            let sd = (expect * (1.0 - expect) / f64::from(n)).sqrt();
            assert!(
                (f - expect).abs() <= 5.0 * sd + 1e-9,
                "depth {depth}: marked {f}, curve says {expect}"
            );
        }
    }

    #[test]
    fn non_ect_is_dropped_where_ect_would_be_marked() {
        let mut rng = SplitMix64::new(2);
        let mut w = Wred::new(cfg(10, 20, 7, 0, true));
        assert_eq!(w.decide(5, || false, &mut rng), Verdict::Pass);
        assert_eq!(w.decide(25, || false, &mut rng), Verdict::Drop);
        assert_eq!(w.decide(25, || true, &mut rng), Verdict::Mark);
        // Without `ecn`, ECT packets are dropped too.
        let mut w = Wred::new(cfg(10, 20, 7, 0, false));
        assert_eq!(w.decide(25, || true, &mut rng), Verdict::Drop);
    }

    #[test]
    fn zero_probability_marks_only_above_the_maximum() {
        let mut rng = SplitMix64::new(3);
        let mut w = Wred::new(cfg(10, 20, 0, 0, true));
        assert_eq!(fraction(&mut w, 19, 1000, &mut rng), 0.0);
        assert_eq!(fraction(&mut w, 20, 1000, &mut rng), 1.0);
    }

    #[test]
    fn weight_tracks_the_exponential_average() {
        for weight in [0u8, 1, 3, 9] {
            let mut w = Wred::new(cfg(1 << 40, 1 << 41, 7, weight, true));
            let mut reference = 0.0f64;
            let mut rng = SplitMix64::new(4);
            for i in 0..2000u64 {
                // A sawtooth with bursts, in bytes.
                let depth = (i * 7919) % 150_000 + if i % 100 < 10 { 400_000 } else { 0 };
                w.update(depth);
                reference += (depth as f64 - reference) / f64::from(1u32 << weight);
                let _ = rng.next_u64();
                assert!(
                    (w.average_f64() - reference).abs() <= 1.0,
                    "W={weight} step {i}: {} vs {reference}",
                    w.average_f64()
                );
            }
            if weight == 0 {
                assert_eq!(w.average(), (1999 * 7919) % 150_000);
            }
        }
    }

    #[test]
    fn a_large_weight_delays_marking_after_a_step() {
        let mut rng = SplitMix64::new(5);
        let mut w = Wred::new(cfg(1000, 2000, 100, 4, true));
        // A step from 0 to 3000 bytes: the average needs a few arrivals to
        // cross the minimum (3000·(1 − (15/16)^k) ≥ 1000 for k ≥ 7).
        let verdicts: Vec<Verdict> = (0..6).map(|_| w.decide(3000, || true, &mut rng)).collect();
        assert!(verdicts.iter().all(|v| *v == Verdict::Pass), "{verdicts:?}");
        assert!(w.average() < 1000);
        for _ in 0..100 {
            w.decide(3000, || true, &mut rng);
        }
        assert!(w.average() > 2000);
        assert_eq!(w.decide(3000, || true, &mut rng), Verdict::Mark);
    }
}
