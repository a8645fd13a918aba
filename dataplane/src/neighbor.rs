//! Neighbour resolution: IP → MAC per interface, static and learned, with a
//! bounded queue of packets waiting for an answer.
//!
//! The fast path only calls [`NeighborTable::lookup`]. A miss parks the packet
//! (bounded per entry and in total, with a counter when full) and asks the
//! caller to send an ARP request or neighbour solicitation; the answer, fed to
//! [`NeighborTable::learn`], releases the parked packets.

use std::collections::VecDeque;
use std::hash::{Hash, Hasher};
use std::net::{IpAddr, Ipv4Addr};

use rustc_hash::FxHashMap;

use crate::clock::Nanos;
use crate::model::PortId;
use crate::packet::PacketBuf;
use crate::wire::MacAddr;

/// Time between resolution requests for one address.
pub const RETRY_INTERVAL: Nanos = 1_000_000_000;
/// Requests sent before parked packets are dropped as unresolved.
pub const MAX_TRIES: u8 = 3;

/// What is known about one neighbour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NeighborState {
    /// Configured (`ip arp`, `ipv6 neighbor`); never replaced by learning.
    Static(MacAddr),
    /// Learned from an ARP or ND answer.
    Learned {
        /// The neighbour's MAC.
        mac: MacAddr,
        /// When it was last confirmed.
        at: Nanos,
    },
    /// Being resolved.
    Incomplete {
        /// When the last request went out.
        last_request: Nanos,
        /// Requests sent so far.
        tries: u8,
        /// Packets parked for this address.
        waiting: u16,
    },
}

impl NeighborState {
    /// The MAC, when resolved.
    pub fn mac(&self) -> Option<MacAddr> {
        match *self {
            NeighborState::Static(m) | NeighborState::Learned { mac: m, .. } => Some(m),
            NeighborState::Incomplete { .. } => None,
        }
    }
}

/// Outcome of parking a packet on an unresolved address.
#[derive(Debug)]
pub enum Park {
    /// Parked; send a resolution request now (first miss).
    SendRequest,
    /// Parked behind an earlier request.
    Waiting,
    /// Not parked: the per-entry or total limit is reached.
    Full(PacketBuf),
}

/// Requests and expiries produced by [`NeighborTable::tick`].
#[derive(Debug, Default)]
pub struct TickOutput {
    /// (interface, address) to send a new request for.
    pub requests: Vec<(PortId, IpAddr)>,
    /// Packets whose neighbour never answered.
    pub expired: Vec<PacketBuf>,
}

/// An entry's interface and address. It hashes as one word for IPv4, the
/// cache's tag (the derived hash feeds the hasher field by field, byte by
/// byte for the address).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Key(PortId, IpAddr);

impl Hash for Key {
    #[inline]
    fn hash<H: Hasher>(&self, h: &mut H) {
        match self.1 {
            IpAddr::V4(a) => h.write_u64(v4_tag(self.0, a)),
            IpAddr::V6(a) => {
                h.write_u16(self.0);
                h.write_u128(a.to_bits());
            }
        }
    }
}

/// Slots in [`NeighborTable`]'s IPv4 cache (a power of two).
const V4_CACHE_SLOTS: usize = 256;

/// A resolved IPv4 neighbour in the cache; `tag` 0 marks an empty slot.
#[derive(Debug, Clone, Copy, Default)]
struct CachedMac {
    tag: u64,
    mac: MacAddr,
}

/// The cache tag of an IPv4 entry: port and address, with a bit no empty
/// slot has.
#[inline]
fn v4_tag(port: PortId, addr: Ipv4Addr) -> u64 {
    1 << 48 | u64::from(port) << 32 | u64::from(addr.to_bits())
}

/// The cache slot of a tag (multiplicative hashing: the top bits of the
/// product depend on every bit of the tag).
#[inline]
fn v4_slot(tag: u64) -> usize {
    (tag.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - V4_CACHE_SLOTS.trailing_zeros())) as usize
}

/// Puts a resolved entry in `cache` when it is IPv4.
fn put_cached(cache: &mut [CachedMac; V4_CACHE_SLOTS], port: PortId, addr: IpAddr, mac: MacAddr) {
    if let IpAddr::V4(a) = addr {
        let tag = v4_tag(port, a);
        cache[v4_slot(tag)] = CachedMac { tag, mac };
    }
}

/// The neighbour table of one worker.
///
/// Every routed IPv4 packet looks its next hop up, so resolved IPv4 entries
/// are also kept in a small direct-mapped cache in front of the hash map:
/// one multiply, one load and one compare when it hits. A slot holds the
/// last entry written to it; any other entry that maps there is still found
/// in the map. The cache holds only resolved entries, and every change to
/// one (learning, a new static, a reconcile) rewrites or rebuilds it.
#[derive(Debug)]
pub struct NeighborTable {
    entries: FxHashMap<Key, NeighborState>,
    v4_cache: Box<[CachedMac; V4_CACHE_SLOTS]>,
    parked: VecDeque<(PortId, IpAddr, PacketBuf)>,
    per_entry: usize,
    total: usize,
}

impl NeighborTable {
    /// An empty table parking at most `per_entry` packets per address and
    /// `total` in all.
    pub fn new(per_entry: usize, total: usize) -> Self {
        NeighborTable {
            entries: FxHashMap::default(),
            v4_cache: Box::new([CachedMac::default(); V4_CACHE_SLOTS]),
            parked: VecDeque::with_capacity(total),
            per_entry,
            total,
        }
    }

    /// Adds a configured entry.
    pub fn add_static(&mut self, port: PortId, addr: IpAddr, mac: MacAddr) {
        self.entries
            .insert(Key(port, addr), NeighborState::Static(mac));
        self.cache(port, addr, mac);
    }

    /// The MAC of `addr` on `port`, if resolved. The cache hit stays in
    /// the caller's loop; the map is out of line, so that the hash lookup
    /// does not decide whether the hit is inlined.
    #[inline]
    pub fn lookup(&self, port: PortId, addr: IpAddr) -> Option<MacAddr> {
        if let IpAddr::V4(a) = addr {
            let tag = v4_tag(port, a);
            let slot = &self.v4_cache[v4_slot(tag)];
            if slot.tag == tag {
                return Some(slot.mac);
            }
        }
        self.lookup_entry(port, addr)
    }

    #[inline(never)]
    fn lookup_entry(&self, port: PortId, addr: IpAddr) -> Option<MacAddr> {
        self.entries.get(&Key(port, addr)).and_then(|s| s.mac())
    }

    /// Puts a resolved IPv4 entry in its cache slot, in place of whatever
    /// was there.
    fn cache(&mut self, port: PortId, addr: IpAddr, mac: MacAddr) {
        put_cached(&mut self.v4_cache, port, addr, mac);
    }

    /// Refills the cache from the map, after changes to many entries.
    fn rebuild_cache(&mut self) {
        self.v4_cache.fill(CachedMac::default());
        for (&Key(port, addr), state) in &self.entries {
            if let Some(mac) = state.mac() {
                put_cached(&mut self.v4_cache, port, addr, mac);
            }
        }
    }

    /// Parks `pkt` until `addr` on `port` resolves.
    pub fn park(&mut self, port: PortId, addr: IpAddr, pkt: PacketBuf, now: Nanos) -> Park {
        if self.parked.len() >= self.total {
            return Park::Full(pkt);
        }
        let state = self
            .entries
            .entry(Key(port, addr))
            .or_insert(NeighborState::Incomplete {
                last_request: now,
                tries: 0,
                waiting: 0,
            });
        match state {
            NeighborState::Incomplete {
                tries,
                waiting,
                last_request,
            } => {
                if *waiting as usize >= self.per_entry {
                    return Park::Full(pkt);
                }
                *waiting += 1;
                self.parked.push_back((port, addr, pkt));
                if *tries == 0 {
                    *tries = 1;
                    *last_request = now;
                    Park::SendRequest
                } else {
                    Park::Waiting
                }
            }
            // Resolved between lookup and park: the caller retries the lookup.
            _ => Park::Full(pkt),
        }
    }

    /// Records that `addr` on `port` is at `mac`, moving parked packets for it
    /// into `released` (in arrival order). Static entries are kept. Returns
    /// true when the table changed.
    pub fn learn(
        &mut self,
        port: PortId,
        addr: IpAddr,
        mac: MacAddr,
        now: Nanos,
        released: &mut Vec<PacketBuf>,
    ) -> bool {
        let key = Key(port, addr);
        let changed = match self.entries.get(&key) {
            Some(NeighborState::Static(_)) => return false,
            Some(NeighborState::Learned { mac: m, .. }) => *m != mac,
            _ => true,
        };
        let was_incomplete = matches!(
            self.entries.get(&key),
            Some(NeighborState::Incomplete { .. })
        );
        self.entries
            .insert(key, NeighborState::Learned { mac, at: now });
        self.cache(port, addr, mac);
        if was_incomplete {
            let mut i = 0;
            while i < self.parked.len() {
                if self.parked[i].0 == port && self.parked[i].1 == addr {
                    if let Some((_, _, p)) = self.parked.remove(i) {
                        released.push(p);
                    }
                } else {
                    i += 1;
                }
            }
        }
        changed
    }

    /// Retries unanswered requests every [`RETRY_INTERVAL`] and, after
    /// [`MAX_TRIES`], forgets the address and hands back its parked packets.
    pub fn tick(&mut self, now: Nanos, out: &mut TickOutput) {
        let mut gave_up: Vec<Key> = Vec::new();
        for (key, state) in self.entries.iter_mut() {
            if let NeighborState::Incomplete {
                last_request,
                tries,
                ..
            } = state
            {
                if now.saturating_sub(*last_request) >= RETRY_INTERVAL {
                    if *tries >= MAX_TRIES {
                        gave_up.push(*key);
                    } else {
                        *tries += 1;
                        *last_request = now;
                        out.requests.push((key.0, key.1));
                    }
                }
            }
        }
        for key in gave_up {
            self.entries.remove(&key);
            let mut i = 0;
            while i < self.parked.len() {
                if Key(self.parked[i].0, self.parked[i].1) == key {
                    if let Some((_, _, p)) = self.parked.remove(i) {
                        out.expired.push(p);
                    }
                } else {
                    i += 1;
                }
            }
        }
    }

    /// Brings the table in line with a new configuration: static entries are
    /// replaced by `statics`, learned entries survive only where `keep`
    /// says their address is still on-link. Parked packets stay parked.
    pub fn reconcile(
        &mut self,
        statics: impl IntoIterator<Item = (PortId, IpAddr, MacAddr)>,
        keep: impl Fn(PortId, IpAddr) -> bool,
    ) {
        self.entries.retain(|&Key(port, addr), state| match state {
            NeighborState::Static(_) => false,
            NeighborState::Learned { .. } => keep(port, addr),
            NeighborState::Incomplete { .. } => true,
        });
        self.rebuild_cache();
        for (port, addr, mac) in statics {
            self.add_static(port, addr, mac);
        }
    }

    /// True when some address is being resolved (so `tick` has work).
    pub fn resolving(&self) -> bool {
        !self.parked.is_empty()
            || self
                .entries
                .values()
                .any(|s| matches!(s, NeighborState::Incomplete { .. }))
    }

    /// Packets parked now.
    pub fn parked(&self) -> usize {
        self.parked.len()
    }

    /// Drops every parked packet into `out` (at shutdown, so they are counted).
    pub fn drain_parked(&mut self, out: &mut Vec<PacketBuf>) {
        out.extend(self.parked.drain(..).map(|(_, _, p)| p));
    }

    /// Every entry, for show output.
    pub fn entries(&self) -> impl Iterator<Item = (PortId, IpAddr, NeighborState)> + '_ {
        self.entries.iter().map(|(&Key(p, a), &s)| (p, a, s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Pool;
    use proptest::prelude::*;

    /// What the table holds for `port`/`addr`, read from the map alone.
    fn in_map(t: &NeighborTable, port: PortId, addr: IpAddr) -> Option<MacAddr> {
        t.entries.get(&Key(port, addr)).and_then(|s| s.mac())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Whatever the order of statics, answers, parked misses and
        /// reconciles, the cached lookup answers as the map does. 700 hosts
        /// on three ports share 256 slots, so entries evict each other.
        #[test]
        fn cached_lookup_agrees_with_the_map(
            ops in proptest::collection::vec((0u8..4, 0u16..3, 0u32..700, any::<u8>()), 1..200),
        ) {
            let pool = Pool::new(64);
            let mut t = NeighborTable::new(4, 64);
            let mut released = Vec::new();
            let mut seen = Vec::new();
            for (op, port, host, m) in ops {
                let addr = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + host));
                let mac = MacAddr([2, 0, 0, 0, port as u8, m]);
                match op {
                    0 => t.add_static(port, addr, mac),
                    1 => {
                        t.learn(port, addr, mac, 0, &mut released);
                    }
                    2 => t.reconcile(
                        [(port, addr, mac)],
                        |p, a| match a {
                            IpAddr::V4(v) => (v.to_bits() ^ u32::from(p) ^ u32::from(m)) & 1 == 0,
                            IpAddr::V6(_) => true,
                        },
                    ),
                    _ => {
                        if let Some(pkt) = pool.alloc() {
                            // A miss: parks (or refuses) without resolving.
                            let _ = t.park(port, addr, pkt, 0);
                        }
                    }
                }
                released.clear();
                seen.push((port, addr));
                for &(p, a) in &seen {
                    prop_assert_eq!(t.lookup(p, a), in_map(&t, p, a), "{} on {}", a, p);
                }
            }
        }
    }

    const MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 9]);

    fn addr(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn parked_packets_are_released_in_order_on_answer() {
        let pool = Pool::new(8);
        let mut t = NeighborTable::new(2, 3);
        let a = addr("10.0.0.2");
        assert!(matches!(
            t.park(1, a, pool.alloc_from(&[1]).unwrap(), 0),
            Park::SendRequest
        ));
        assert!(matches!(
            t.park(1, a, pool.alloc_from(&[2]).unwrap(), 0),
            Park::Waiting
        ));
        assert!(matches!(
            t.park(1, a, pool.alloc_from(&[3]).unwrap(), 0),
            Park::Full(_)
        ));
        assert_eq!(t.lookup(1, a), None);
        let mut released = Vec::new();
        assert!(t.learn(1, a, MAC, 5, &mut released));
        assert_eq!(
            released.iter().map(|p| p.data()[0]).collect::<Vec<_>>(),
            vec![1, 2]
        );
        assert_eq!(t.lookup(1, a), Some(MAC));
        assert_eq!(t.lookup(2, a), None);
        assert_eq!(t.parked(), 0);
    }

    #[test]
    fn total_limit_and_give_up_after_retries() {
        let pool = Pool::new(8);
        let mut t = NeighborTable::new(4, 1);
        let a = addr("10.0.0.2");
        assert!(matches!(
            t.park(0, a, pool.alloc().unwrap(), 0),
            Park::SendRequest
        ));
        assert!(matches!(
            t.park(0, addr("10.0.0.3"), pool.alloc().unwrap(), 0),
            Park::Full(_)
        ));
        let mut out = TickOutput::default();
        for i in 1..=MAX_TRIES as u64 {
            t.tick(i * RETRY_INTERVAL, &mut out);
        }
        assert_eq!(out.requests.len(), (MAX_TRIES - 1) as usize);
        assert_eq!(out.expired.len(), 1);
        assert!(!t.resolving());
    }

    #[test]
    fn static_entries_are_not_overridden() {
        let mut t = NeighborTable::new(4, 4);
        let a = addr("fe80::1");
        t.add_static(0, a, MAC);
        let mut released = Vec::new();
        assert!(!t.learn(0, a, MacAddr([2; 6]), 0, &mut released));
        assert_eq!(t.lookup(0, a), Some(MAC));
    }
}
