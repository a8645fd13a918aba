//! splitmix64's finaliser: a small, well-mixed, portable hash, so that
//! every host derives the same ports, permutations and flow arrivals from
//! a seed (and a script can reproduce them).

/// Mixes `z` into a well-spread 64-bit value.
pub(crate) fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
