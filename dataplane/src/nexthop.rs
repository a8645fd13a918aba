//! Next hops and ECMP groups with resilient bucket tables: what a route
//! points at, shared by the routing table ([`crate::fib`]) and the member
//! choice ([`crate::balance`]).
//!
//! A group's flow hash indexes a table of [`BUCKETS`] buckets, each naming a
//! member. Buckets are spread evenly (counts differ by at most one). When the
//! member set changes, a bucket keeps its member whenever it can: a removed
//! member's buckets go to the members with the fewest, a new member takes
//! buckets from those with the most, so only the flows that must move do.
//! A member whose port is down keeps its buckets (it may come back); its
//! flows are re-hashed over the members still up, and no other flow moves.

use std::net::IpAddr;

use crate::model::PortId;

/// One way out of the switch for a routed packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextHop {
    /// Egress interface.
    pub port: PortId,
    /// Address to resolve to a MAC; `None` means the packet's own destination
    /// (on-link).
    pub gateway: Option<IpAddr>,
}

/// Buckets per group: 512 keeps 2 … 64 members within 1/512 of even.
pub const BUCKETS: usize = 512;

/// Most members a group may have (NX-OS supports 64-way ECMP).
pub const MAX_MEMBERS: usize = 64;

/// The next hops of one ECMP route and the bucket table over them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EcmpGroup {
    hops: Vec<NextHop>,
    /// Bucket → member; `None` when every bucket names member 0 (a group of
    /// one), so the single-hop routes of a large FIB cost no table each.
    buckets: Option<Box<[u8; BUCKETS]>>,
    dlb: bool,
    id: u32,
}

impl EcmpGroup {
    /// A group over `hops` (at most [`MAX_MEMBERS`]; more are left out),
    /// numbered `id`, balanced dynamically when `dlb`.
    pub fn new(mut hops: Vec<NextHop>, id: u32, dlb: bool) -> Self {
        hops.truncate(MAX_MEMBERS);
        let buckets = (hops.len() > 1).then(|| {
            // Bucket i names member i mod n, counted up rather than divided.
            let mut table = Box::new([0u8; BUCKETS]);
            let mut m = 0u8;
            for b in table.iter_mut() {
                *b = m;
                m += 1;
                if usize::from(m) >= hops.len() {
                    m = 0;
                }
            }
            table
        });
        EcmpGroup {
            hops,
            buckets,
            dlb,
            id,
        }
    }

    /// The group over `hops` that `previous` becomes, moving as few buckets
    /// as keeping them even allows.
    pub fn rebuilt(previous: &EcmpGroup, mut hops: Vec<NextHop>, id: u32, dlb: bool) -> Self {
        hops.truncate(MAX_MEMBERS);
        if hops == previous.hops {
            // Unchanged members keep their table as it is: most routes of a
            // rebuilt FIB (a reload, a batch of kernel routes) are these.
            return EcmpGroup {
                hops,
                buckets: previous.buckets.clone(),
                dlb,
                id,
            };
        }
        let n = hops.len();
        if n == 0 {
            return EcmpGroup::new(hops, id, dlb);
        }
        const FREE: u8 = u8::MAX;
        let remap: Vec<u8> = previous
            .hops
            .iter()
            .map(|h| hops.iter().position(|x| x == h).map_or(FREE, |i| i as u8))
            .collect();
        let mut buckets = Box::new([FREE; BUCKETS]);
        let mut count = vec![0usize; n];
        for (i, b) in buckets.iter_mut().enumerate() {
            if let Some(&m) = remap.get(usize::from(previous.bucket(i))) {
                if m != FREE {
                    *b = m;
                    count[usize::from(m)] += 1;
                }
            }
        }
        // No member may keep more than its even share rounded up.
        let ceil = BUCKETS.div_ceil(n);
        for b in buckets.iter_mut().rev() {
            if *b != FREE && count[usize::from(*b)] > ceil {
                count[usize::from(*b)] -= 1;
                *b = FREE;
            }
        }
        // Freed buckets go to the members with the fewest.
        for b in buckets.iter_mut().filter(|b| **b == FREE) {
            let m = fewest(&count);
            *b = m as u8;
            count[m] += 1;
        }
        // Only ceil-sized members may exist BUCKETS % n times; level the rest.
        loop {
            let (lo, hi) = (fewest(&count), most(&count));
            if count[hi] - count[lo] <= 1 {
                break;
            }
            if let Some(b) = buckets.iter_mut().rev().find(|b| usize::from(**b) == hi) {
                *b = lo as u8;
                count[hi] -= 1;
                count[lo] += 1;
            }
        }
        EcmpGroup {
            hops,
            buckets: buckets.iter().any(|b| *b != 0).then_some(buckets),
            dlb,
            id,
        }
    }

    /// The members, in configuration order.
    #[inline]
    pub fn hops(&self) -> &[NextHop] {
        &self.hops
    }

    /// The group's number, which indexes per-group state in each worker.
    #[inline]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Balanced by DLB (every member is a `dlb-interface`).
    #[inline]
    pub fn is_dlb(&self) -> bool {
        self.dlb
    }

    /// The member the bucket of `hash` names.
    #[inline]
    pub fn member(&self, hash: u32) -> usize {
        usize::from(self.bucket(hash as usize % BUCKETS))
    }

    /// The member bucket `i` (below [`BUCKETS`]) names.
    #[inline]
    fn bucket(&self, i: usize) -> u8 {
        self.buckets.as_ref().map_or(0, |t| t[i])
    }

    /// A member among those whose port is usable, picked by the hash bits
    /// the bucket index did not use; `None` when none is.
    pub fn member_among_usable(&self, hash: u32, usable: impl Fn(PortId) -> bool) -> Option<usize> {
        let up = self.hops.iter().filter(|h| usable(h.port)).count();
        if up == 0 {
            return None;
        }
        let k = (hash as usize / BUCKETS) % up;
        self.hops
            .iter()
            .enumerate()
            .filter(|(_, h)| usable(h.port))
            .nth(k)
            .map(|(i, _)| i)
    }

    /// Buckets per member, in member order.
    pub fn bucket_counts(&self) -> Vec<usize> {
        let mut c = vec![0; self.hops.len()];
        for b in (0..BUCKETS).map(|i| self.bucket(i)) {
            if let Some(x) = c.get_mut(usize::from(b)) {
                *x += 1;
            }
        }
        c
    }
}

fn fewest(count: &[usize]) -> usize {
    (0..count.len()).min_by_key(|&i| count[i]).unwrap_or(0)
}

fn most(count: &[usize]) -> usize {
    (0..count.len())
        .max_by_key(|&i| (count[i], usize::MAX - i))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

    fn hop(i: u8) -> NextHop {
        NextHop {
            port: u16::from(i),
            gateway: Some(IpAddr::V4(Ipv4Addr::new(10, 0, i, 2))),
        }
    }

    fn hops(ids: &[u8]) -> Vec<NextHop> {
        ids.iter().map(|i| hop(*i)).collect()
    }

    /// Flow hashes spread like real ones (a multiplicative sequence).
    fn flows(n: u32) -> impl Iterator<Item = u32> {
        (0..n).map(|i| i.wrapping_mul(0x9e37_79b9).rotate_left(7) ^ 0x5bd1_e995)
    }

    fn even(g: &EcmpGroup) {
        let c = g.bucket_counts();
        let (lo, hi) = (c.iter().min().unwrap(), c.iter().max().unwrap());
        assert!(hi - lo <= 1, "{c:?}");
        assert_eq!(c.iter().sum::<usize>(), BUCKETS);
    }

    #[test]
    fn removing_a_member_moves_only_its_flows() {
        let g = EcmpGroup::new(hops(&[1, 2, 3, 4]), 0, false);
        let r = EcmpGroup::rebuilt(&g, hops(&[1, 2, 4]), 0, false);
        even(&r);
        let mut moved = 0;
        for h in flows(10_000) {
            let before = g.hops()[g.member(h)];
            let after = r.hops()[r.member(h)];
            if before != hop(3) {
                assert_eq!(before, after, "a flow of a remaining member moved");
            } else {
                moved += 1;
            }
        }
        assert!((2_300..=2_700).contains(&moved), "{moved}");
    }

    #[test]
    fn adding_a_member_moves_only_what_it_takes() {
        let g = EcmpGroup::new(hops(&[1, 2, 3]), 0, false);
        let r = EcmpGroup::rebuilt(&g, hops(&[1, 2, 3, 4]), 0, false);
        even(&r);
        for h in flows(10_000) {
            let after = r.hops()[r.member(h)];
            if after != hop(4) {
                assert_eq!(g.hops()[g.member(h)], after);
            }
        }
        // Back to three: the same buckets as before return.
        let back = EcmpGroup::rebuilt(&r, hops(&[1, 2, 3]), 0, false);
        even(&back);
    }

    #[test]
    fn reordered_or_unchanged_members_keep_every_flow() {
        let g = EcmpGroup::new(hops(&[1, 2, 3, 4]), 0, false);
        let r = EcmpGroup::rebuilt(&g, hops(&[4, 3, 2, 1]), 7, true);
        assert_eq!(r.id(), 7);
        assert!(r.is_dlb());
        for h in flows(2_000) {
            assert_eq!(g.hops()[g.member(h)], r.hops()[r.member(h)]);
        }
    }

    #[test]
    fn down_members_flows_rehash_over_the_rest() {
        let g = EcmpGroup::new(hops(&[1, 2, 3, 4]), 0, false);
        let usable = |p: PortId| p != 2;
        let mut got = [0usize; 4];
        for h in flows(8_000) {
            let m = g.member(h);
            if g.hops()[m].port == 2 {
                let alt = g.member_among_usable(h, usable).unwrap();
                assert_ne!(g.hops()[alt].port, 2);
                got[alt] += 1;
            }
        }
        assert_eq!(got[1], 0);
        for m in [0, 2, 3] {
            assert!((500..=850).contains(&got[m]), "{got:?}");
        }
        assert_eq!(g.member_among_usable(1, |_| false), None);
    }

    #[test]
    fn every_size_is_even() {
        let mut g = EcmpGroup::new(hops(&[1]), 0, false);
        for n in 2..=MAX_MEMBERS as u8 {
            let ids: Vec<u8> = (1..=n).collect();
            g = EcmpGroup::rebuilt(&g, hops(&ids), 0, false);
            even(&g);
        }
        let g = EcmpGroup::new(hops(&(0..70).collect::<Vec<_>>()), 0, false);
        assert_eq!(g.hops().len(), MAX_MEMBERS);
        even(&g);
    }
}
