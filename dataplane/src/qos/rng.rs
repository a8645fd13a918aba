//! The pseudo-random numbers behind WRED's decisions.
//!
//! SplitMix64 (Steele, Lea and Flood, 2014): one word of state, an add and
//! three multiply-xorshift steps per number, and good statistical quality
//! (it passes BigCrush). WRED needs one uniform draw per packet in its
//! marking band, never anything cryptographic; a dozen lines here are
//! cheaper to keep than a dependency, and the seed comes from the model so
//! a replay makes the same choices every time.

/// A seeded, fast, non-cryptographic generator of uniform 64-bit numbers.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose sequence is fixed by `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next uniform 64-bit number.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_sequence_and_roughly_uniform() {
        let (mut a, mut b) = (SplitMix64::new(7), SplitMix64::new(7));
        let mut ones = 0u64;
        for _ in 0..10_000 {
            let x = a.next_u64();
            assert_eq!(x, b.next_u64());
            ones += u64::from(x.count_ones());
        }
        let mean = ones as f64 / 10_000.0;
        assert!((mean - 32.0).abs() < 0.3, "mean popcount {mean}");
        assert_ne!(SplitMix64::new(8).next_u64(), SplitMix64::new(7).next_u64());
    }

    #[test]
    fn reference_values() {
        // First outputs for seed 0 of the reference implementation.
        let mut r = SplitMix64::new(0);
        assert_eq!(r.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }
}
