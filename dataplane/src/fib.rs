//! The forwarding information base: longest-prefix match for IPv4 and IPv6.
//!
//! Every table keeps one hash map per prefix length as the authoritative set of
//! prefixes: it makes insert, replace, remove and `len` trivial and is what a
//! rebuild reads.
//!
//! IPv4 lookups go through a direct-indexed DIR-16-8-8 table kept beside those
//! maps, because probing a hash map per prefix length in use (local /32s,
//! connected /24–/31s, statics, a default) costs too much of the per-packet
//! budget. The first level has one entry per /16; a 256-entry chunk for bits
//! 16–23 exists only under a /16 that holds a longer prefix, and likewise a
//! chunk for bits 24–31 only under a /24 that holds a longer prefix. Shorter
//! prefixes are pushed down into every entry they cover, so a lookup is at most
//! three dependent loads with no hashing and no loop over lengths. A lab FIB
//! costs the 320 KiB first level plus 1.25 KiB per chunk.
//!
//! The table is written here rather than taken from a crate: the maintained
//! Rust LPM crates (`prefix-trie`, `ip_network_table`, `routemap`) are tries or
//! tree bitmaps that walk several nodes per lookup, and nothing small offers a
//! rebuildable DIR-16-8-8 over plain `u32` values.
//!
//! IPv6 keeps the per-length probe: a direct table over 128-bit keys would need
//! many more levels, and IPv6 lab FIBs use few distinct lengths.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;

use crate::model::{NextHopModel, PortId, RouteSource, SwitchModel};
use crate::nexthop::{EcmpGroup, NextHop};

/// A longest-prefix-match table over `W`-bit keys (u32 for IPv4, u128 for IPv6).
#[derive(Debug, Clone)]
pub struct Lpm<K: LpmKey> {
    /// (prefix length, table of masked prefix → value), longest first. The
    /// authoritative set of prefixes.
    tables: Vec<(u8, FxHashMap<K, u32>)>,
    /// Lookup structure derived from `tables`.
    index: K::Index,
}

impl<K: LpmKey> Default for Lpm<K> {
    fn default() -> Self {
        Self::new()
    }
}

/// Key types usable in [`Lpm`].
pub trait LpmKey: Copy + Eq + std::hash::Hash + Sized {
    /// Width of the key in bits.
    const BITS: u8;
    /// Lookup structure kept beside the per-length maps, so each key width
    /// can use the lookup that suits it.
    type Index: Default + Clone + std::fmt::Debug;
    /// The key with all bits past `len` cleared.
    fn masked(self, len: u8) -> Self;
    /// Records `prefix/len → value` (already clamped and masked) in the index.
    fn index_insert(index: &mut Self::Index, prefix: Self, len: u8, value: u32);
    /// Makes the index match the table's prefixes again after a removal.
    fn index_rebuild(lpm: &mut Lpm<Self>);
    /// The value of the longest prefix covering `addr`.
    fn index_lookup(lpm: &Lpm<Self>, addr: Self) -> Option<u32>;
}

impl LpmKey for u32 {
    const BITS: u8 = 32;
    type Index = Dir16x8x8;
    #[inline]
    fn masked(self, len: u8) -> Self {
        if len == 0 {
            0
        } else {
            self & (u32::MAX << (32 - len as u32))
        }
    }
    fn index_insert(index: &mut Dir16x8x8, prefix: u32, len: u8, value: u32) {
        index.insert(prefix, len, value);
    }
    fn index_rebuild(lpm: &mut Lpm<u32>) {
        lpm.index.clear();
        // Shortest first, so chunks are created already holding the pushed-down
        // shorter prefixes; correctness does not depend on the order.
        for (len, table) in lpm.tables.iter().rev() {
            for (prefix, value) in table {
                lpm.index.insert(*prefix, *len, *value);
            }
        }
    }
    #[inline]
    fn index_lookup(lpm: &Lpm<u32>, addr: u32) -> Option<u32> {
        lpm.index.lookup(addr)
    }
}

impl LpmKey for u128 {
    const BITS: u8 = 128;
    type Index = ();
    #[inline]
    fn masked(self, len: u8) -> Self {
        if len == 0 {
            0
        } else {
            self & (u128::MAX << (128 - len as u32))
        }
    }
    fn index_insert(_: &mut (), _: u128, _: u8, _: u32) {}
    fn index_rebuild(_: &mut Lpm<u128>) {}
    #[inline]
    fn index_lookup(lpm: &Lpm<u128>, addr: u128) -> Option<u32> {
        for (len, table) in &lpm.tables {
            if let Some(v) = table.get(&addr.masked(*len)) {
                return Some(*v);
            }
        }
        None
    }
}

/// Marks an entry as a chunk index rather than a value; values must stay
/// below it.
const CHUNK: u32 = 1 << 31;
/// An entry no prefix covers (a chunk index that never exists).
const EMPTY: u32 = u32::MAX;

/// 256 entries for 8 more address bits, with the prefix length each entry's
/// value came from (needed only when updating, kept alongside for locality).
#[derive(Debug, Clone)]
struct Chunk {
    entries: [u32; 256],
    lens: [u8; 256],
}

/// The IPv4 direct-indexed table (DIR-16-8-8) behind [`Lpm<u32>`]; see the
/// module documentation for why and how it is laid out.
///
/// An entry is a value (below 2^31), `CHUNK | index` of a chunk one level
/// down, or `EMPTY`. Level one stays unallocated until the first prefix, so an
/// empty [`Fib`] costs nothing.
#[derive(Debug, Clone, Default)]
pub struct Dir16x8x8 {
    /// 65 536 entries indexed by the top 16 address bits, or none at all.
    l1: Vec<u32>,
    /// Prefix length behind each `l1` value.
    l1_lens: Vec<u8>,
    /// Chunks for address bits 16–23.
    l2: Vec<Chunk>,
    /// Chunks for address bits 24–31.
    l3: Vec<Chunk>,
}

/// The chunk an entry points to, if it points to one.
#[inline]
fn chunk_of(e: u32) -> Option<usize> {
    (e & CHUNK != 0 && e != EMPTY).then_some((e & !CHUNK) as usize)
}

/// Sets `entry` to `value` where no longer prefix already covers it.
#[inline]
fn push(entry: &mut u32, entry_len: &mut u8, len: u8, value: u32) {
    if *entry_len <= len {
        *entry = value;
        *entry_len = len;
    }
}

impl Dir16x8x8 {
    /// Forgets every prefix, keeping level one's allocation.
    fn clear(&mut self) {
        self.l1.fill(EMPTY);
        self.l1_lens.fill(0);
        self.l2.clear();
        self.l3.clear();
    }

    /// Adds `prefix/len → value`; `prefix` is already masked to `len <= 32`.
    fn insert(&mut self, prefix: u32, len: u8, value: u32) {
        assert!(
            value < CHUNK,
            "LPM values must be below 2^31 (route indices are)"
        );
        if self.l1.is_empty() {
            self.l1 = vec![EMPTY; 1 << 16];
            self.l1_lens = vec![0; 1 << 16];
        }
        let top = (prefix >> 16) as usize;
        if len <= 16 {
            for i in top..top + (1usize << (16 - len)) {
                match chunk_of(self.l1[i]) {
                    Some(c) => self.push_l2(c, 0, 256, len, value),
                    None => push(&mut self.l1[i], &mut self.l1_lens[i], len, value),
                }
            }
            return;
        }
        let c2 = self.l2_chunk(top);
        let mid = ((prefix >> 8) & 0xff) as usize;
        if len <= 24 {
            self.push_l2(c2, mid, 1usize << (24 - len), len, value);
            return;
        }
        let c3 = self.l3_chunk(c2, mid);
        let low = (prefix & 0xff) as usize;
        let chunk = &mut self.l3[c3];
        for k in low..low + (1usize << (32 - len)) {
            push(&mut chunk.entries[k], &mut chunk.lens[k], len, value);
        }
    }

    /// Pushes `value` into `count` entries of level-two chunk `c` from `start`,
    /// and into every level-three chunk below them.
    fn push_l2(&mut self, c: usize, start: usize, count: usize, len: u8, value: u32) {
        for j in start..start + count {
            let chunk = &mut self.l2[c];
            match chunk_of(chunk.entries[j]) {
                Some(c3) => {
                    let below = &mut self.l3[c3];
                    for k in 0..256 {
                        push(&mut below.entries[k], &mut below.lens[k], len, value);
                    }
                }
                None => push(&mut chunk.entries[j], &mut chunk.lens[j], len, value),
            }
        }
    }

    /// The level-two chunk under level-one entry `i`, split off from the
    /// entry's value if there is none yet.
    fn l2_chunk(&mut self, i: usize) -> usize {
        if let Some(c) = chunk_of(self.l1[i]) {
            return c;
        }
        let c = self.l2.len();
        self.l2.push(Chunk {
            entries: [self.l1[i]; 256],
            lens: [self.l1_lens[i]; 256],
        });
        self.l1[i] = CHUNK | c as u32;
        c
    }

    /// The level-three chunk under entry `j` of level-two chunk `c2`, split off
    /// from the entry's value if there is none yet.
    fn l3_chunk(&mut self, c2: usize, j: usize) -> usize {
        let parent = &self.l2[c2];
        if let Some(c) = chunk_of(parent.entries[j]) {
            return c;
        }
        let c = self.l3.len();
        let chunk = Chunk {
            entries: [parent.entries[j]; 256],
            lens: [parent.lens[j]; 256],
        };
        self.l3.push(chunk);
        self.l2[c2].entries[j] = CHUNK | c as u32;
        c
    }

    /// The value of the longest prefix covering `addr`: at most three
    /// dependent loads. Never panics: an index past the end (only `EMPTY`
    /// points there) reads as no route.
    #[inline]
    fn lookup(&self, addr: u32) -> Option<u32> {
        let e = *self.l1.get((addr >> 16) as usize)?;
        if e & CHUNK == 0 {
            return Some(e);
        }
        let e = self.l2.get((e & !CHUNK) as usize)?.entries[((addr >> 8) & 0xff) as usize];
        if e & CHUNK == 0 {
            return Some(e);
        }
        let e = self.l3.get((e & !CHUNK) as usize)?.entries[(addr & 0xff) as usize];
        (e & CHUNK == 0).then_some(e)
    }
}

impl<K: LpmKey> Lpm<K> {
    /// An empty table; allocates nothing until the first insert.
    pub fn new() -> Self {
        Lpm {
            tables: Vec::new(),
            index: K::Index::default(),
        }
    }

    /// Adds or replaces `prefix/len → value`; lengths past the key width are
    /// clamped and host bits past the length ignored.
    ///
    /// # Panics
    ///
    /// For IPv4, if `value` is 2^31 or more: the top bit tags chunk entries
    /// in the direct table. Route indices never get near it.
    pub fn insert(&mut self, prefix: K, len: u8, value: u32) {
        let len = len.min(K::BITS);
        let key = prefix.masked(len);
        K::index_insert(&mut self.index, key, len, value);
        let pos = match self.tables.iter().position(|(l, _)| *l <= len) {
            Some(i) if self.tables[i].0 == len => i,
            Some(i) => {
                self.tables.insert(i, (len, FxHashMap::default()));
                i
            }
            None => {
                self.tables.push((len, FxHashMap::default()));
                self.tables.len() - 1
            }
        };
        self.tables[pos].1.insert(key, value);
    }

    /// Removes `prefix/len`, returning its value. Rebuilds the lookup index,
    /// which is cheap at FIB sizes and only happens on configuration change.
    pub fn remove(&mut self, prefix: K, len: u8) -> Option<u32> {
        let len = len.min(K::BITS);
        let i = self.tables.iter().position(|(l, _)| *l == len)?;
        let v = self.tables[i].1.remove(&prefix.masked(len));
        if self.tables[i].1.is_empty() {
            self.tables.remove(i);
        }
        if v.is_some() {
            K::index_rebuild(self);
        }
        v
    }

    /// The value of the longest prefix covering `addr`. Never allocates; for
    /// IPv4 at most three dependent loads.
    #[inline]
    pub fn lookup(&self, addr: K) -> Option<u32> {
        K::index_lookup(self, addr)
    }

    /// Number of prefixes.
    pub fn len(&self) -> usize {
        self.tables.iter().map(|(_, t)| t.len()).sum()
    }

    /// True when the table holds no prefix.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

/// What a matched route does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteAction {
    /// Addressed to the switch itself (one of its interface addresses).
    Local(PortId),
    /// On-link: resolve the destination itself on this interface.
    Connected(PortId),
    /// Through one of a group of next hops (ECMP, or DLB when the group's
    /// members are all DLB interfaces).
    Forward(EcmpGroup),
    /// Dropped (Null0).
    Discard,
}

/// A route table entry with where it came from, for show output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Destination prefix.
    pub prefix: IpAddr,
    /// Prefix length.
    pub len: u8,
    /// What the route does.
    pub action: RouteAction,
    /// Who put it there (connected and local routes count as static).
    pub source: RouteSource,
}

/// A route that could not be installed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FibWarning {
    /// The route's prefix and length, as text.
    pub route: String,
    /// What is wrong.
    pub message: String,
}

/// IPv4 and IPv6 routing tables built from a [`SwitchModel`].
#[derive(Debug, Clone, Default)]
pub struct Fib {
    v4: Lpm<u32>,
    v6: Lpm<u128>,
    routes: Vec<Route>,
    /// Index into `routes` by exact (prefix, length), so adding and finding
    /// a route costs the same with a million routes as with ten.
    by_prefix: FxHashMap<(IpAddr, u8), u32>,
    /// ECMP groups numbered so far (ids are 0..groups).
    groups: u32,
}

impl Fib {
    /// Builds local, connected and static routes. Static next hops are
    /// resolved to an interface through the connected routes; a next hop no
    /// interface reaches is reported and left out of its group (a route left
    /// with no next hop is not installed).
    pub fn build(model: &SwitchModel) -> (Fib, Vec<FibWarning>) {
        Self::rebuild(model, None)
    }

    /// Builds like [`build`](Self::build), keeping each ECMP group's bucket
    /// table from `previous` where the route still exists, so a changed
    /// member set moves only the flows it must.
    pub fn rebuild(model: &SwitchModel, previous: Option<&Fib>) -> (Fib, Vec<FibWarning>) {
        let mut fib = Fib::default();
        let dlb_port = |p: PortId| {
            model
                .load_balance
                .dlb
                .as_ref()
                .is_some_and(|d| d.ports.contains(&p))
        };
        let mut warnings = Vec::new();
        for (i, ifc) in model.interfaces.iter().enumerate() {
            let port = i as PortId;
            for (a, len) in &ifc.ipv4 {
                fib.add(IpAddr::V4(*a), *len, RouteAction::Connected(port));
            }
            for (a, len) in &ifc.ipv6 {
                fib.add(IpAddr::V6(*a), *len, RouteAction::Connected(port));
            }
        }
        // Local addresses last so they win over a connected /32 or /128.
        for (i, ifc) in model.interfaces.iter().enumerate() {
            let port = i as PortId;
            for (a, _) in &ifc.ipv4 {
                fib.add(IpAddr::V4(*a), 32, RouteAction::Local(port));
            }
            for (a, _) in &ifc.ipv6 {
                fib.add(IpAddr::V6(*a), 128, RouteAction::Local(port));
            }
        }
        for r in &model.routes {
            let name = || format!("{}/{}", r.prefix, r.len);
            let mut hops = Vec::new();
            let mut discard = false;
            for nh in &r.next_hops {
                match *nh {
                    NextHopModel::Discard => discard = true,
                    NextHopModel::Interface(port) => hops.push(NextHop {
                        port,
                        gateway: None,
                    }),
                    NextHopModel::Gateway {
                        addr,
                        port: Some(port),
                    } => hops.push(NextHop {
                        port,
                        gateway: Some(addr),
                    }),
                    NextHopModel::Gateway { addr, port: None } => match fib.connected_port(addr) {
                        Some(port) => hops.push(NextHop {
                            port,
                            gateway: Some(addr),
                        }),
                        None => warnings.push(FibWarning {
                            route: name(),
                            message: format!(
                                "next hop {addr} is not in any interface's subnet; left out"
                            ),
                        }),
                    },
                }
            }
            if !hops.is_empty() {
                let id = fib.groups;
                fib.groups += 1;
                let dlb = hops.len() > 1 && hops.iter().all(|h| dlb_port(h.port));
                let group = match previous.and_then(|p| p.group_for(r.prefix, r.len)) {
                    Some(old) => EcmpGroup::rebuilt(old, hops, id, dlb),
                    None => EcmpGroup::new(hops, id, dlb),
                };
                fib.add_from(r.prefix, r.len, RouteAction::Forward(group), r.source);
            } else if discard {
                fib.add_from(r.prefix, r.len, RouteAction::Discard, r.source);
            } else {
                warnings.push(FibWarning {
                    route: name(),
                    message: "no usable next hop; route not installed".to_string(),
                });
            }
        }
        (fib, warnings)
    }

    fn connected_port(&self, addr: IpAddr) -> Option<PortId> {
        match self.lookup(addr)? {
            RouteAction::Connected(p) | RouteAction::Local(p) => Some(*p),
            _ => None,
        }
    }

    /// Adds a route; a later route for the same prefix replaces the earlier.
    pub fn add(&mut self, prefix: IpAddr, len: u8, action: RouteAction) {
        self.add_from(prefix, len, action, RouteSource::Static);
    }

    /// Adds a route from `source`, as [`add`](Self::add) does.
    pub fn add_from(&mut self, prefix: IpAddr, len: u8, action: RouteAction, source: RouteSource) {
        let next = self.routes.len() as u32;
        let idx = *self.by_prefix.entry((prefix, len)).or_insert(next);
        match self.routes.get_mut(idx as usize) {
            Some(r) => {
                r.action = action;
                r.source = source;
            }
            None => self.routes.push(Route {
                prefix,
                len,
                action,
                source,
            }),
        }
        match prefix {
            IpAddr::V4(a) => self.v4.insert(u32::from(a), len, idx),
            IpAddr::V6(a) => self.v6.insert(u128::from(a), len, idx),
        }
    }

    /// Longest-prefix match for an IPv4 destination.
    #[inline]
    pub fn lookup_v4(&self, dst: Ipv4Addr) -> Option<&RouteAction> {
        let i = self.v4.lookup(u32::from(dst))?;
        self.routes.get(i as usize).map(|r| &r.action)
    }

    /// Longest-prefix match for an IPv6 destination.
    #[inline]
    pub fn lookup_v6(&self, dst: Ipv6Addr) -> Option<&RouteAction> {
        let i = self.v6.lookup(u128::from(dst))?;
        self.routes.get(i as usize).map(|r| &r.action)
    }

    /// Longest-prefix match for either family.
    pub fn lookup(&self, dst: IpAddr) -> Option<&RouteAction> {
        match dst {
            IpAddr::V4(a) => self.lookup_v4(a),
            IpAddr::V6(a) => self.lookup_v6(a),
        }
    }

    /// Every installed route, for show output.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// Every ECMP group with its route.
    pub fn groups(&self) -> impl Iterator<Item = (&Route, &EcmpGroup)> {
        self.routes.iter().filter_map(|r| match &r.action {
            RouteAction::Forward(g) => Some((r, g)),
            _ => None,
        })
    }

    /// How many group ids are in use (ids run from 0 to this, exclusive).
    pub fn group_count(&self) -> usize {
        self.groups as usize
    }

    /// The group of the route for exactly `prefix/len`.
    pub fn group_for(&self, prefix: IpAddr, len: u8) -> Option<&EcmpGroup> {
        let i = *self.by_prefix.get(&(prefix, len))?;
        self.routes.get(i as usize).and_then(|r| match &r.action {
            RouteAction::Forward(g) => Some(g),
            _ => None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{InterfaceModel, RouteModel, RouteSource};
    use crate::wire::MacAddr;

    fn v4(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn longest_prefix_wins() {
        let mut t = Lpm::<u32>::new();
        t.insert(u32::from(v4("10.0.0.0")), 8, 1);
        t.insert(u32::from(v4("10.1.0.0")), 16, 2);
        t.insert(u32::from(v4("10.1.2.3")), 32, 3);
        t.insert(0, 0, 9);
        assert_eq!(t.lookup(u32::from(v4("10.1.2.3"))), Some(3));
        assert_eq!(t.lookup(u32::from(v4("10.1.2.4"))), Some(2));
        assert_eq!(t.lookup(u32::from(v4("10.2.0.1"))), Some(1));
        assert_eq!(t.lookup(u32::from(v4("192.168.0.1"))), Some(9));
        assert_eq!(t.remove(0, 0), Some(9));
        assert_eq!(t.lookup(u32::from(v4("192.168.0.1"))), None);
        assert_eq!(t.len(), 3);
        // Host bits in the inserted prefix are ignored.
        t.insert(u32::from(v4("172.16.5.5")), 12, 4);
        assert_eq!(t.lookup(u32::from(v4("172.31.0.1"))), Some(4));
        assert_eq!(t.lookup(u32::from(v4("172.32.0.1"))), None);
    }

    /// The seeded generator WRED uses, so failures reproduce.
    struct Rng(crate::qos::rng::SplitMix64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0.next_u64() % n
        }
        fn u32(&mut self) -> u32 {
            self.0.next_u64() as u32
        }
    }

    /// Longest match by scanning every prefix.
    fn naive(reference: &[(u32, u8, u32)], addr: u32) -> Option<u32> {
        reference
            .iter()
            .filter(|(p, l, _)| addr.masked(*l) == *p)
            .max_by_key(|(_, l, _)| *l)
            .map(|(_, _, v)| *v)
    }

    fn check_all(t: &Lpm<u32>, reference: &[(u32, u8, u32)], bases: &[u32], rng: &mut Rng) {
        assert_eq!(t.len(), reference.len());
        assert_eq!(t.is_empty(), reference.is_empty());
        let mut addrs = vec![0, 1, u32::MAX, u32::MAX - 1, 0x8000_0000, 0x7fff_ffff];
        for &(p, l, _) in reference {
            let last = p | (u32::MAX.checked_shr(u32::from(l)).unwrap_or(0));
            addrs.extend([p, last, p.wrapping_sub(1), last.wrapping_add(1)]);
        }
        for &b in bases {
            addrs.extend([b, b ^ 0xff, b ^ 0x100, b ^ 0xffff, b ^ 0x1_0000]);
        }
        for _ in 0..2000 {
            addrs.push(rng.u32());
            let b = bases[rng.below(bases.len() as u64) as usize];
            addrs.push(b ^ (rng.u32() >> rng.below(32)));
        }
        for a in addrs {
            assert_eq!(t.lookup(a), naive(reference, a), "address {a:#010x}");
        }
    }

    #[test]
    fn v4_matches_naive_longest_match() {
        for seed in 0..6u64 {
            let mut rng = Rng(crate::qos::rng::SplitMix64::new(seed));
            // Prefixes cluster around a few bases so they nest and overlap.
            let bases: Vec<u32> = (0..6).map(|_| rng.u32()).collect();
            let interesting = [0u8, 1, 8, 15, 16, 17, 23, 24, 25, 31, 32];
            let mut t = Lpm::<u32>::new();
            let mut reference: Vec<(u32, u8, u32)> = Vec::new();
            for step in 0..400 {
                if rng.below(5) == 0 && !reference.is_empty() {
                    // Remove an existing prefix, or try one that is absent.
                    let (p, l) = if rng.below(4) == 0 {
                        (rng.u32(), rng.below(33) as u8)
                    } else {
                        let (p, l, _) = reference[rng.below(reference.len() as u64) as usize];
                        // Host bits must be ignored on removal too.
                        (p | rng.u32().checked_shr(u32::from(l)).unwrap_or(0), l)
                    };
                    let expected = reference
                        .iter()
                        .position(|(rp, rl, _)| *rl == l && *rp == p.masked(l))
                        .map(|i| reference.swap_remove(i).2);
                    assert_eq!(t.remove(p, l), expected);
                } else {
                    let len = if rng.below(2) == 0 {
                        interesting[rng.below(interesting.len() as u64) as usize]
                    } else {
                        rng.below(33) as u8
                    };
                    let addr = if rng.below(4) == 0 {
                        rng.u32()
                    } else {
                        bases[rng.below(bases.len() as u64) as usize] ^ (rng.u32() >> 8)
                    };
                    let value = if rng.below(10) == 0 {
                        CHUNK - 1 - rng.below(3) as u32
                    } else {
                        rng.below(1000) as u32
                    };
                    t.insert(addr, len, value);
                    let p = addr.masked(len);
                    match reference
                        .iter_mut()
                        .find(|(rp, rl, _)| *rp == p && *rl == len)
                    {
                        Some(e) => e.2 = value,
                        None => reference.push((p, len, value)),
                    }
                }
                if step % 40 == 39 {
                    check_all(&t, &reference, &bases, &mut rng);
                }
            }
            check_all(&t, &reference, &bases, &mut rng);
            // Emptying the table leaves no stale entries behind.
            while let Some((p, l, v)) = reference.pop() {
                assert_eq!(t.remove(p, l), Some(v));
            }
            check_all(&t, &reference, &bases, &mut rng);
        }
    }

    #[test]
    fn v4_lookup_on_empty_table_and_lengths_past_32() {
        let mut t = Lpm::<u32>::new();
        assert_eq!(t.lookup(0), None);
        assert_eq!(t.lookup(u32::MAX), None);
        t.insert(u32::from(v4("10.0.0.1")), 40, 5);
        assert_eq!(t.lookup(u32::from(v4("10.0.0.1"))), Some(5));
        assert_eq!(t.lookup(u32::from(v4("10.0.0.2"))), None);
        assert_eq!(t.remove(u32::from(v4("10.0.0.1")), 33), Some(5));
        assert!(t.is_empty());
        assert_eq!(t.lookup(u32::from(v4("10.0.0.1"))), None);
    }

    #[test]
    fn ipv6_prefixes() {
        let mut t = Lpm::<u128>::new();
        let p = |s: &str| u128::from(s.parse::<Ipv6Addr>().unwrap());
        t.insert(p("2001:db8::"), 32, 1);
        t.insert(p("2001:db8:1::"), 48, 2);
        t.insert(p("2001:db8:1::1"), 128, 3);
        assert_eq!(t.lookup(p("2001:db8:1::1")), Some(3));
        assert_eq!(t.lookup(p("2001:db8:1::2")), Some(2));
        assert_eq!(t.lookup(p("2001:db8:ffff::2")), Some(1));
        assert_eq!(t.lookup(p("2001:db9::")), None);
    }

    #[test]
    fn build_resolves_static_next_hops_and_reports_unreachable_ones() {
        let mut e1 = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 0, 1]));
        e1.ipv4.push((v4("10.0.1.1"), 24));
        let mut e2 = InterfaceModel::new("Ethernet1/2", MacAddr([2, 0, 0, 0, 0, 2]));
        e2.ipv4.push((v4("10.0.2.1"), 24));
        let gw = |a: &str| NextHopModel::Gateway {
            addr: IpAddr::V4(v4(a)),
            port: None,
        };
        let model = SwitchModel {
            interfaces: vec![e1, e2],
            routes: vec![
                RouteModel {
                    source: RouteSource::Static,
                    prefix: IpAddr::V4(v4("192.168.0.0")),
                    len: 16,
                    next_hops: vec![gw("10.0.1.2"), gw("10.0.2.2"), gw("10.9.9.9")],
                },
                RouteModel {
                    source: RouteSource::Static,
                    prefix: IpAddr::V4(v4("172.16.0.0")),
                    len: 12,
                    next_hops: vec![NextHopModel::Discard],
                },
            ],
            ..SwitchModel::default()
        };
        let (fib, warnings) = Fib::build(&model);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("10.9.9.9"));
        assert_eq!(fib.lookup_v4(v4("10.0.1.1")), Some(&RouteAction::Local(0)));
        assert_eq!(
            fib.lookup_v4(v4("10.0.2.7")),
            Some(&RouteAction::Connected(1))
        );
        assert_eq!(fib.lookup_v4(v4("172.20.0.1")), Some(&RouteAction::Discard));
        match fib.lookup_v4(v4("192.168.3.4")) {
            Some(RouteAction::Forward(g)) => {
                let hops = g.hops();
                assert_eq!(hops.len(), 2);
                assert_eq!(hops[0].port, 0);
                assert_eq!(hops[1].port, 1);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(fib.lookup_v4(v4("8.8.8.8")), None);
    }
}
