//! The Internet checksum (RFC 1071) and its incremental update (RFC 1624).
//!
//! Sums here are ones-complement sums folded to 16 bits and *not* inverted;
//! a header's checksum field holds the inverted sum. A header verifies when
//! the sum over it (checksum field included) is `0xffff`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Folds a wide accumulator into a 16-bit ones-complement sum, carrying the
/// overflow back in so no bit is lost.
///
/// A fixed four steps rather than a loop until no carry is left: how often
/// that loop turns depends on the packet's bytes, a branch the CPU cannot
/// predict on the fast path.
#[inline]
pub const fn fold(sum: u64) -> u16 {
    let s = (sum & 0xffff_ffff) + (sum >> 32); // below 2^33
    let s = (s & 0xffff) + (s >> 16); // below 2^18
    let s = (s & 0xffff) + (s >> 16); // at most 0x1_0002
    let s = (s & 0xffff) + (s >> 16); // at most 0xffff
    s as u16
}

/// Adds `bytes` as big-endian 16-bit words to a wide accumulator; an odd last
/// byte is padded with a zero byte on the right, as RFC 1071 specifies.
///
/// Whole 32-bit words are added at once: folding a sum of 32-bit words gives
/// the same 16-bit ones-complement sum as adding 16-bit words.
#[inline]
pub fn accumulate(mut acc: u64, bytes: &[u8]) -> u64 {
    let mut words = bytes.chunks_exact(4);
    for w in &mut words {
        acc += u64::from(u32::from_be_bytes([w[0], w[1], w[2], w[3]]));
    }
    let rest = words.remainder();
    let mut i = 0;
    while i + 1 < rest.len() {
        acc += u64::from(u16::from_be_bytes([rest[i], rest[i + 1]]));
        i += 2;
    }
    if i < rest.len() {
        acc += u64::from(rest[i]) << 8;
    }
    acc
}

/// The folded ones-complement sum of `bytes`, the building block of every
/// checksum on the wire.
#[inline]
pub fn data(bytes: &[u8]) -> u16 {
    fold(accumulate(0, bytes))
}

/// True when the ones-complement sum of a 20-byte header (an IPv4 header
/// without options) is `0xffff`, so its checksum field is right.
///
/// The words are summed in the machine's own byte order, five plain loads:
/// a ones-complement sum of byte-swapped words is the byte-swapped sum
/// (RFC 1071 §2(B)), and `0xffff` reads the same either way round. No fold
/// either: folding keeps a sum's value modulo `0xffff` and turns no
/// nonzero sum into zero, so the folded sum is `0xffff` exactly when the
/// plain sum is a nonzero multiple of `0xffff` (a multiply, not four
/// dependent steps).
#[inline]
pub fn verifies_20(header: &[u8; 20]) -> bool {
    // Five whole words: nothing is left over.
    let (words, _) = header.as_chunks::<4>();
    let sum: u64 = words
        .iter()
        .map(|w| u64::from(u32::from_ne_bytes(*w)))
        .sum();
    sum != 0 && sum.is_multiple_of(0xffff)
}

/// Ones-complement addition of partial sums, to join a pseudo-header sum with
/// a data sum.
#[inline]
pub fn combine(sums: &[u16]) -> u16 {
    fold(sums.iter().map(|&s| u64::from(s)).sum())
}

/// Sum of the IPv4 pseudo-header (RFC 768/793) that UDP and TCP checksums cover.
#[inline]
pub fn pseudo_header_v4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, length: u16) -> u16 {
    let mut acc = accumulate(0, &src.octets());
    acc = accumulate(acc, &dst.octets());
    fold(acc + u64::from(protocol) + u64::from(length))
}

/// Sum of the IPv6 pseudo-header (RFC 8200 §8.1) that UDP, TCP and ICMPv6
/// checksums cover.
#[inline]
pub fn pseudo_header_v6(src: &Ipv6Addr, dst: &Ipv6Addr, next_header: u8, length: u32) -> u16 {
    let mut acc = accumulate(0, &src.octets());
    acc = accumulate(acc, &dst.octets());
    fold(acc + u64::from(next_header) + u64::from(length >> 16) + u64::from(length & 0xffff))
}

/// Pseudo-header sum for either family, so transport views need one method.
///
/// Both addresses should be of the same family; mixed families are summed
/// byte for byte without panicking (the result is then meaningless).
#[inline]
pub fn pseudo_header(src: &IpAddr, dst: &IpAddr, protocol: u8, length: u32) -> u16 {
    let mut acc = match src {
        IpAddr::V4(a) => accumulate(0, &a.octets()),
        IpAddr::V6(a) => accumulate(0, &a.octets()),
    };
    acc = match dst {
        IpAddr::V4(a) => accumulate(acc, &a.octets()),
        IpAddr::V6(a) => accumulate(acc, &a.octets()),
    };
    fold(acc + u64::from(protocol) + u64::from(length >> 16) + u64::from(length & 0xffff))
}

/// RFC 1624 eqn. 3 incremental update: the new checksum after one 16-bit word
/// of the covered data changes from `old_word` to `new_word`, so a TTL
/// decrement or an ECN rewrite does not re-sum the header.
///
/// Exact for any header whose covered words are not all zero (RFC 1624 §3).
#[inline]
pub const fn update16(old_checksum: u16, old_word: u16, new_word: u16) -> u16 {
    // HC' = ~(~HC + ~m + m')
    let sum = (!old_checksum) as u64 + (!old_word) as u64 + new_word as u64;
    !fold(sum)
}

/// The checksum after the TTL, the high byte of its 16-bit word, drops by
/// one: [`update16`] with m' = m − 0x0100, where ~m + m' is 0xfeff whatever
/// the word holds, so neither the word nor a wide fold is needed.
///
/// Only for a TTL of at least one (a zero TTL would borrow from nothing).
#[inline]
pub const fn ttl_decremented(old_checksum: u16) -> u16 {
    let s = (!old_checksum) as u32 + 0xfeff; // below 2^17
    !(((s & 0xffff) + (s >> 16)) as u16)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The textbook fold: add the carries back in until there are none.
    fn fold_by_loop(mut sum: u64) -> u16 {
        while sum >> 16 != 0 {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum as u16
    }

    #[test]
    fn fold_matches_the_loop_at_the_edges() {
        for s in [
            0,
            1,
            0xffff,
            0x1_0000,
            0x1_fffe,
            0xffff_ffff,
            1 << 32,
            u64::MAX,
        ] {
            assert_eq!(fold(s), fold_by_loop(s), "{s:#x}");
        }
    }

    proptest! {
        #[test]
        fn fold_matches_the_loop(s in any::<u64>(), small in 0u64..0x40_0000) {
            prop_assert_eq!(fold(s), fold_by_loop(s));
            prop_assert_eq!(fold(small), fold_by_loop(small));
        }
    }

    /// The RFC 1071 §3 example: 00 01 f2 03 f4 f5 f6 f7 sums to 0xddf2.
    #[test]
    fn rfc1071_example() {
        assert_eq!(
            data(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            0xddf2
        );
    }

    #[test]
    fn odd_length_pads_on_the_right() {
        assert_eq!(data(&[0x12]), 0x1200);
        assert_eq!(data(&[0x12, 0x34, 0x56]), 0x1234 + 0x5600);
        assert_eq!(data(&[]), 0);
    }

    #[test]
    fn fold_carries_around() {
        assert_eq!(fold(0x1_ffff), 0x0001);
        assert_eq!(fold(0xffff_ffff), 0xffff);
        assert_eq!(combine(&[0xffff, 0x0001]), 0x0001);
    }

    /// A textbook IPv4 header (checksum 0xb861).
    const IPV4_HEADER: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    proptest! {
        #[test]
        fn native_order_verification_agrees_with_the_sum(
            mut h in any::<[u8; 20]>(),
            fix in any::<bool>(),
        ) {
            if fix {
                h[10] = 0;
                h[11] = 0;
                let c = !data(&h);
                h[10..12].copy_from_slice(&c.to_be_bytes());
            }
            prop_assert_eq!(verifies_20(&h), data(&h) == 0xffff);
        }
    }

    #[test]
    fn header_verifies_and_update_matches_recompute() {
        assert!(verifies_20(&IPV4_HEADER));
        let mut bad = IPV4_HEADER;
        bad[11] ^= 1;
        assert!(!verifies_20(&bad));
        assert_eq!(data(&IPV4_HEADER), 0xffff);
        let mut h = IPV4_HEADER;
        // Decrement TTL 0x40 -> 0x3f: the word at 8..10 is TTL|protocol.
        let old = u16::from_be_bytes([h[8], h[9]]);
        h[8] -= 1;
        let new = u16::from_be_bytes([h[8], h[9]]);
        let inc = update16(0xb861, old, new);
        h[10] = 0;
        h[11] = 0;
        assert_eq!(inc, !data(&h));
        assert_eq!(inc, 0xb961);
    }

    #[test]
    fn pseudo_headers_agree() {
        let s4 = Ipv4Addr::new(10, 0, 0, 1);
        let d4 = Ipv4Addr::new(10, 0, 0, 2);
        assert_eq!(
            pseudo_header_v4(s4, d4, 17, 100),
            pseudo_header(&s4.into(), &d4.into(), 17, 100)
        );
        let s6: Ipv6Addr = "fe80::1".parse().unwrap();
        let d6: Ipv6Addr = "ff02::1:ff00:2".parse().unwrap();
        assert_eq!(
            pseudo_header_v6(&s6, &d6, 58, 70_000),
            pseudo_header(&s6.into(), &d6.into(), 58, 70_000)
        );
    }

    proptest! {
        #[test]
        fn incremental_update_equals_full_recompute(
            mut bytes in proptest::collection::vec(any::<u8>(), 4..64usize),
            at in 0usize..30,
            new_word in any::<u16>(),
        ) {
            if bytes.len() % 2 == 1 { bytes.pop(); }
            // Bytes 0..2 hold the checksum; pick another aligned word to change.
            let words = bytes.len() / 2;
            let idx = 1 + at % (words - 1);
            bytes[0] = 0;
            bytes[1] = 0;
            let ck = !data(&bytes);
            bytes[..2].copy_from_slice(&ck.to_be_bytes());
            prop_assert_eq!(data(&bytes), 0xffff);
            let old_word = u16::from_be_bytes([bytes[2 * idx], bytes[2 * idx + 1]]);
            bytes[2 * idx..2 * idx + 2].copy_from_slice(&new_word.to_be_bytes());
            // RFC 1624 §3: data that becomes all zero yields 0x0000, not 0xffff.
            prop_assume!(bytes[2..].iter().any(|&b| b != 0));
            let inc = update16(ck, old_word, new_word);
            bytes[..2].copy_from_slice(&inc.to_be_bytes());
            prop_assert_eq!(data(&bytes), 0xffff);
        }

        #[test]
        fn ttl_decrement_agrees_with_the_general_update(
            mut h in any::<[u8; 20]>(),
            ttl in 1u8..=255,
        ) {
            h[8] = ttl;
            h[10] = 0;
            h[11] = 0;
            let ck = !data(&h);
            let old = u16::from_be_bytes([h[8], h[9]]);
            h[8] -= 1;
            let new = u16::from_be_bytes([h[8], h[9]]);
            prop_assert_eq!(ttl_decremented(ck), update16(ck, old, new));
            h[10..12].copy_from_slice(&ttl_decremented(ck).to_be_bytes());
            prop_assert!(verifies_20(&h));
        }

        #[test]
        fn wide_sum_equals_word_sum(bytes in proptest::collection::vec(any::<u8>(), 0..200usize)) {
            let mut acc: u64 = 0;
            for pair in bytes.chunks(2) {
                let hi = u64::from(pair[0]) << 8;
                let lo = pair.get(1).map_or(0, |&b| u64::from(b));
                acc += hi | lo;
            }
            prop_assert_eq!(data(&bytes), fold(acc));
        }
    }
}
