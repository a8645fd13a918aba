//! The ECMP flow hash.
//!
//! The selected fields are packed into 64-bit words, each folded in with an
//! FxHash-style step (rotate, xor, multiply by 2^64/φ) from a state seeded by
//! the switch's `universal-id`, then finished with the MurmurHash3 `fmix64`
//! avalanche so every input bit (seed included) reaches every output bit:
//! two switches with different seeds pick members independently for the same
//! flows. Not keyed for secrecy: not meant to resist chosen flows.

use crate::meta::{FrameKind, Meta};
use crate::model::EcmpHashModel;

const HASH_INIT: u64 = 0x243f_6a88_85a3_08d3;
const HASH_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

#[inline(always)]
fn step(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(HASH_MUL)
}

#[inline(always)]
fn finish(mut h: u64) -> u32 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    (h ^ (h >> 32)) as u32
}

/// Reads `N` bytes at `at`, zeros when the frame is too short (the parser has
/// already checked the headers, so that only happens for non-IP frames).
#[inline(always)]
fn bytes<const N: usize>(frame: &[u8], at: usize) -> [u8; N] {
    frame
        .get(at..at + N)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0; N])
}

/// The source and destination addresses of a parsed IP packet, as 128-bit
/// numbers (IPv4 in the low 32 bits).
#[inline(always)]
fn addresses(frame: &[u8], meta: &Meta) -> (u128, u128) {
    let l3 = usize::from(meta.l3_offset);
    match meta.kind {
        FrameKind::Ipv4 => (
            u128::from(u32::from_be_bytes(bytes(frame, l3 + 12))),
            u128::from(u32::from_be_bytes(bytes(frame, l3 + 16))),
        ),
        FrameKind::Ipv6 => (
            u128::from_be_bytes(bytes(frame, l3 + 8)),
            u128::from_be_bytes(bytes(frame, l3 + 24)),
        ),
        _ => (0, 0),
    }
}

/// The ECMP hash of a parsed packet under `model`: the same flow always hashes
/// the same on every worker and run of one switch.
#[inline]
pub fn ecmp_hash(frame: &[u8], meta: &Meta, model: &EcmpHashModel) -> u32 {
    let (mut src, mut dst) = addresses(frame, meta);
    let mut sport = meta.src_port;
    let mut dport = meta.dst_port;
    if !model.src_addr {
        src = 0;
    }
    if !model.dst_addr {
        dst = 0;
    }
    if !model.src_port {
        sport = 0;
    }
    if !model.dst_port {
        dport = 0;
    }
    let mut h = step(HASH_INIT, u64::from(model.seed) | (1 << 32));
    if model.concatenation {
        h = step(h, (src >> 64) as u64);
        h = step(h, src as u64);
        h = step(h, (dst >> 64) as u64);
        h = step(h, dst as u64);
        h = step(h, (u64::from(sport) << 16) | u64::from(dport));
    } else {
        let a = src ^ dst;
        h = step(h, (a >> 64) as u64);
        h = step(h, a as u64);
        h = step(h, u64::from(sport ^ dport));
    }
    let mut last = u64::from(meta.ip_proto) << 32;
    if model.rocev2_dest_qp {
        if let Some(r) = meta.roce {
            last |= u64::from(r.dest_qp) | (1 << 40);
        }
    }
    finish(step(h, last)).rotate_right(u32::from(model.rotate))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::Roce;
    use std::net::Ipv4Addr;

    /// The bytes and metadata the hash reads of a parsed IPv4/UDP packet.
    fn packet(src: Ipv4Addr, dst: Ipv4Addr, sport: u16, dport: u16, qp: u32) -> (Vec<u8>, Meta) {
        let mut frame = vec![0u8; 60];
        frame[26..30].copy_from_slice(&src.octets());
        frame[30..34].copy_from_slice(&dst.octets());
        let meta = Meta {
            kind: FrameKind::Ipv4,
            l3_offset: 14,
            ip_proto: 17,
            src_port: sport,
            dst_port: dport,
            roce: Some(Roce {
                opcode: 0x0a,
                dest_qp: qp,
                psn: 1,
            }),
            ..Meta::default()
        };
        (frame, meta)
    }

    fn hash_of(p: &(Vec<u8>, Meta), m: &EcmpHashModel) -> u32 {
        ecmp_hash(&p.0, &p.1, m)
    }

    const A: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);
    const B: Ipv4Addr = Ipv4Addr::new(10, 0, 2, 2);

    #[test]
    fn selected_fields_only() {
        let all = EcmpHashModel::default();
        let f1 = packet(A, B, 49152, 4791, 7);
        let f2 = packet(A, B, 49153, 4791, 7);
        assert_ne!(hash_of(&f1, &all), hash_of(&f2, &all));
        let addresses_only = EcmpHashModel {
            src_port: false,
            dst_port: false,
            ..all
        };
        assert_eq!(hash_of(&f1, &addresses_only), hash_of(&f2, &addresses_only));
        let other_host = packet(A, Ipv4Addr::new(10, 0, 3, 2), 49152, 4791, 7);
        assert_ne!(
            hash_of(&f1, &addresses_only),
            hash_of(&other_host, &addresses_only)
        );
        // The destination QP counts only when asked for.
        let q2 = packet(A, B, 49152, 4791, 8);
        assert_eq!(hash_of(&f1, &all), hash_of(&q2, &all));
        let qp = EcmpHashModel {
            rocev2_dest_qp: true,
            ..all
        };
        assert_ne!(hash_of(&f1, &qp), hash_of(&q2, &qp));
    }

    #[test]
    fn folded_hash_is_symmetric_concatenated_is_not() {
        let there = packet(A, B, 49152, 4791, 7);
        let back = packet(B, A, 4791, 49152, 7);
        let folded = EcmpHashModel::default();
        assert_eq!(hash_of(&there, &folded), hash_of(&back, &folded));
        let concat = EcmpHashModel {
            concatenation: true,
            ..folded
        };
        assert_ne!(hash_of(&there, &concat), hash_of(&back, &concat));
    }

    #[test]
    fn seed_and_rotate_change_the_hash() {
        let f = packet(A, B, 49152, 4791, 7);
        let base = EcmpHashModel::default();
        let h = hash_of(&f, &base);
        let seeded = EcmpHashModel { seed: 1, ..base };
        assert_ne!(h, hash_of(&f, &seeded));
        let rotated = EcmpHashModel { rotate: 9, ..base };
        assert_eq!(hash_of(&f, &rotated), h.rotate_right(9));
    }

    #[test]
    fn fixed_values_and_spread() {
        // The hash must not change between runs or builds: lab results
        // (which flow took which spine) must be reproducible.
        let m = EcmpHashModel::default();
        assert_eq!(hash_of(&packet(A, B, 49152, 4791, 7), &m), GOLDEN);
        // Source ports of one RoCE host pair over 16 members.
        let mut buckets = [0u32; 16];
        for sport in 0..16384u16 {
            let h = hash_of(&packet(A, B, 49152 + sport, 4791, 7), &m);
            buckets[(h % 16) as usize] += 1;
        }
        for n in buckets {
            assert!((900..1150).contains(&n), "{buckets:?}");
        }
    }

    /// From an independent implementation of the construction in the module docs.
    const GOLDEN: u32 = 0x588d_8427;

    #[test]
    fn short_frames_hash_as_zero_addresses() {
        let short = Meta {
            kind: FrameKind::Ipv6,
            l3_offset: 14,
            ..Meta::default()
        };
        let non_ip = Meta {
            kind: FrameKind::Arp,
            ..Meta::default()
        };
        let m = EcmpHashModel::default();
        assert_eq!(
            ecmp_hash(&[0u8; 20], &short, &m),
            ecmp_hash(&[], &non_ip, &m)
        );
    }
}
