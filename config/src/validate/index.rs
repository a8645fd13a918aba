//! Indexes over interface subnets, so the whole-model checks cost
//! n·log n in the number of addresses instead of comparing every address
//! with every other one (65 536 interfaces took 20 s that way).
//!
//! Every address carries a rank: what order the original pairwise scans
//! visited it in (interface index, then position in that interface's list).
//! A question like "which earlier interface first overlaps this subnet" is
//! answered as "the lowest rank among all overlapping subnets", which is
//! earlier exactly when that rank's interface index is smaller. So the
//! diagnostics stay what the pairwise scans reported, message for message.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use crate::model::IpPrefix;

/// Order of an address among all addresses: interface index in the high
/// half, position in that interface's list in the low half.
pub(super) type Rank = u64;

/// The rank of position `k` of interface `j`.
pub(super) fn rank(j: usize, k: usize) -> Rank {
    ((j as u64) << 32) | (k as u64 & 0xffff_ffff)
}

/// The interface index of a rank.
pub(super) fn rank_interface(r: Rank) -> usize {
    (r >> 32) as usize
}

/// The position within its interface of a rank.
pub(super) fn rank_position(r: Rank) -> usize {
    (r & 0xffff_ffff) as usize
}

/// An address family's addresses in one 128-bit space: IPv4 in the low 32
/// bits.
#[derive(Debug)]
struct Family {
    /// Address width (32 or 128).
    bits: u8,
    /// Per prefix length in use, the lowest rank of each subnet.
    by_len: BTreeMap<u8, HashMap<u128, Rank>>,
    /// Per exact address, the lowest rank.
    by_addr: HashMap<u128, Rank>,
    /// Addresses (host bits as configured), sorted.
    addrs: Vec<u128>,
    /// Range-minimum segment tree over the ranks of `addrs`: leaves at
    /// `addrs.len()..`, each inner node the smaller of its two children.
    tree: Vec<Rank>,
}

impl Family {
    /// An index over `(address, prefix length, rank)` of one family.
    fn new(bits: u8, entries: &[(u128, u8, Rank)]) -> Family {
        let mut by_len: BTreeMap<u8, HashMap<u128, Rank>> = BTreeMap::new();
        let mut by_addr: HashMap<u128, Rank> = HashMap::new();
        for &(addr, len, r) in entries {
            let len = len.min(bits);
            let net = addr & mask(bits, len);
            let slot = by_len.entry(len).or_default().entry(net).or_insert(r);
            *slot = (*slot).min(r);
            let slot = by_addr.entry(addr).or_insert(r);
            *slot = (*slot).min(r);
        }
        let mut sorted: Vec<(u128, Rank)> = entries.iter().map(|&(a, _, r)| (a, r)).collect();
        sorted.sort_unstable();
        let n = sorted.len();
        let mut tree = vec![Rank::MAX; 2 * n];
        for (i, &(_, r)) in sorted.iter().enumerate() {
            tree[n + i] = r;
        }
        for i in (1..n).rev() {
            tree[i] = tree[2 * i].min(tree[2 * i + 1]);
        }
        Family {
            bits,
            by_len,
            by_addr,
            addrs: sorted.into_iter().map(|(a, _)| a).collect(),
            tree,
        }
    }

    /// The lowest rank among the subnets that contain `addr`.
    fn covering(&self, addr: u128) -> Option<Rank> {
        self.by_len
            .iter()
            .filter_map(|(len, nets)| nets.get(&(addr & mask(self.bits, *len))).copied())
            .min()
    }

    /// The lowest rank among the addresses in `lo..=hi`.
    fn within(&self, lo: u128, hi: u128) -> Option<Rank> {
        let n = self.addrs.len();
        let (mut l, mut r) = (
            self.addrs.partition_point(|a| *a < lo) + n,
            self.addrs.partition_point(|a| *a <= hi) + n,
        );
        let mut best = Rank::MAX;
        while l < r {
            if l & 1 == 1 {
                best = best.min(self.tree[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = best.min(self.tree[r]);
            }
            l /= 2;
            r /= 2;
        }
        (best != Rank::MAX).then_some(best)
    }

    /// The lowest rank among the subnets sharing an address with
    /// `addr/len`: those containing `addr`, and those whose address lies in
    /// `addr/len`'s subnet (exactly [`IpPrefix::overlaps`]).
    fn overlapping(&self, addr: u128, len: u8) -> Option<Rank> {
        let m = mask(self.bits, len.min(self.bits));
        let width = if self.bits >= 128 {
            u128::MAX
        } else {
            (1u128 << self.bits) - 1
        };
        let (lo, hi) = (addr & m, (addr & m) | (!m & width));
        match (self.covering(addr), self.within(lo, hi)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

/// Mask of `len` leading one bits in a `bits`-wide address held in a u128.
fn mask(bits: u8, len: u8) -> u128 {
    if len == 0 {
        return 0;
    }
    (u128::MAX << (128 - u32::from(len))) >> (128 - u32::from(bits))
}

/// An address and length as (family is v4, address bits, length).
fn split(p: &IpPrefix) -> (bool, u128, u8) {
    match p {
        IpPrefix::V4(p) => (true, u128::from(u32::from(p.addr)), p.len),
        IpPrefix::V6(p) => (false, u128::from(p.addr), p.len),
    }
}

/// Interface subnets of both families, each with its rank.
#[derive(Debug)]
pub(super) struct Subnets {
    v4: Family,
    v6: Family,
}

impl Subnets {
    /// An index over `(subnet, rank)` pairs.
    pub(super) fn new<'a>(entries: impl IntoIterator<Item = (&'a IpPrefix, Rank)>) -> Subnets {
        let (mut v4, mut v6) = (Vec::new(), Vec::new());
        for (p, r) in entries {
            match split(p) {
                (true, a, l) => v4.push((a, l, r)),
                (false, a, l) => v6.push((a, l, r)),
            }
        }
        Subnets {
            v4: Family::new(32, &v4),
            v6: Family::new(128, &v6),
        }
    }

    fn family(&self, v4: bool) -> &Family {
        if v4 {
            &self.v4
        } else {
            &self.v6
        }
    }

    /// The lowest rank of the subnets configured with exactly `p`'s address.
    pub(super) fn same_address(&self, p: &IpPrefix) -> Option<Rank> {
        let (v4, a, _) = split(p);
        self.family(v4).by_addr.get(&a).copied()
    }

    /// The lowest rank of the subnets sharing an address with `p`'s.
    pub(super) fn overlapping(&self, p: &IpPrefix) -> Option<Rank> {
        let (v4, a, l) = split(p);
        self.family(v4).overlapping(a, l)
    }

    /// Whether some subnet contains `addr`.
    pub(super) fn covers(&self, addr: IpAddr) -> bool {
        match addr {
            IpAddr::V4(a) => self.v4.covering(u128::from(u32::from(a))).is_some(),
            IpAddr::V6(a) => self.v6.covering(u128::from(a)).is_some(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> IpPrefix {
        s.parse().unwrap()
    }

    /// The lowest rank by comparing with every subnet, as the checks did.
    fn naive(all: &[(IpPrefix, Rank)], f: impl Fn(&IpPrefix) -> bool) -> Option<Rank> {
        all.iter().filter(|(q, _)| f(q)).map(|(_, r)| *r).min()
    }

    fn overlaps(a: &IpPrefix, b: &IpPrefix) -> bool {
        match (a, b) {
            (IpPrefix::V4(a), IpPrefix::V4(b)) => a.overlaps(b),
            (IpPrefix::V6(a), IpPrefix::V6(b)) => a.overlaps(b),
            _ => false,
        }
    }

    #[test]
    fn agrees_with_pairwise_comparison() {
        // SplitMix64, seeded, so a failure reproduces.
        let mut state = 7u64;
        let mut rng = move || {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let mut all = Vec::new();
        for j in 0..300usize {
            for k in 0..(rng() % 3) as usize {
                let x = rng();
                let prefix = if x % 5 == 0 {
                    // IPv6, clustered so subnets nest.
                    let a = 0x2001_0db8u128 << 96 | u128::from(x as u16) << 64 | (x as u128 & 3);
                    let len = [0u8, 32, 48, 64, 126, 127, 128][(x >> 20) as usize % 7];
                    IpPrefix::V6(crate::prefix::Ipv6Prefix {
                        addr: a.into(),
                        len,
                    })
                } else {
                    let a = 0x0a00_0000u32 | ((x as u32) & 0x0003_0f0f);
                    let len = [0u8, 8, 14, 16, 20, 24, 28, 30, 31, 32][(x >> 24) as usize % 10];
                    IpPrefix::V4(crate::prefix::Ipv4Prefix {
                        addr: a.into(),
                        len,
                    })
                };
                all.push((prefix, rank(j, k)));
            }
        }
        let index = Subnets::new(all.iter().map(|(p, r)| (p, *r)));
        for (q, _) in &all {
            assert_eq!(index.overlapping(q), naive(&all, |o| overlaps(o, q)), "{q}");
            let addr = |x: &IpPrefix| match x {
                IpPrefix::V4(p) => IpAddr::V4(p.addr),
                IpPrefix::V6(p) => IpAddr::V6(p.addr),
            };
            assert_eq!(
                index.same_address(q),
                naive(&all, |o| addr(o) == addr(q)),
                "{q}"
            );
            assert_eq!(
                index.covers(addr(q)),
                naive(&all, |o| o.contains(addr(q))).is_some()
            );
        }
        for probe in ["10.0.0.0/8", "0.0.0.0/0", "10.3.15.15/32", "192.168.0.1/32"] {
            let q = p(probe);
            assert_eq!(index.overlapping(&q), naive(&all, |o| overlaps(o, &q)));
        }
    }

    #[test]
    fn ranks_order_interfaces_before_positions() {
        assert!(rank(1, 5) < rank(2, 0));
        assert_eq!(rank_interface(rank(65_535, 3)), 65_535);
        assert_eq!(rank_position(rank(65_535, 3)), 3);
        let index = Subnets::new([
            (&p("10.0.0.1/24"), rank(3, 0)),
            (&p("10.0.0.2/24"), rank(2, 1)),
        ]);
        assert_eq!(index.overlapping(&p("10.0.0.9/32")), Some(rank(2, 1)));
        assert_eq!(index.same_address(&p("10.0.0.1/32")), Some(rank(3, 0)));
        assert!(index.covers("10.0.0.200".parse().unwrap()));
        assert!(!index.covers("10.0.1.1".parse().unwrap()));
        assert!(!index.covers("::1".parse().unwrap()));
    }
}
