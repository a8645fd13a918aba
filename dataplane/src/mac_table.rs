//! The MAC address table of the switchports: (VLAN, MAC) → port, learned
//! from source addresses, aged out, bounded.
//!
//! Open addressing with linear probing over a slot array sized once, at
//! twice the capacity, so learning and lookup never allocate and a probe
//! stays within a cache line or two. Removal shifts the following entries
//! back (no tombstones), so a table that churns never degrades. Aging is
//! lazy on lookup (an expired entry is a miss) and a bounded sweep per
//! timer tick reclaims the slots.
//!
//! Each worker keeps its own table and tells the others what it learned,
//! as it does for neighbours: one writer per table.

use crate::clock::Nanos;
use crate::model::{MacTableModel, PortId};
use crate::wire::MacAddr;

/// What learning a source address did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Learned {
    /// Known on this port already (its age refreshed).
    Known,
    /// A new entry.
    New,
    /// The address moved here from another port.
    Moved {
        /// Where it was.
        from: PortId,
    },
    /// The table is full: not learned.
    Full,
    /// A static entry has the address: not learned over.
    Static,
}

/// One entry, as `show mac address-table` lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacEntry {
    /// Its VLAN.
    pub vlan: u16,
    /// The address.
    pub mac: MacAddr,
    /// The port (a switchport, or a port-channel's port number).
    pub port: PortId,
    /// From the configuration.
    pub is_static: bool,
    /// When a frame from it was last seen (learned entries).
    pub last_seen: Nanos,
}

/// What the table did, for `show mac address-table count` and the stats.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MacTableCounters {
    /// Entries learned.
    pub learned: u64,
    /// Addresses that moved between ports.
    pub moves: u64,
    /// Sources not learned because the table was full.
    pub full: u64,
    /// Entries removed by aging.
    pub aged: u64,
    /// Entries removed because their port went down.
    pub flushed: u64,
}

#[derive(Clone, Copy, Default)]
struct Slot {
    /// VLAN << 48 | MAC; 0 is an empty slot (VLAN 0 is never stored).
    key: u64,
    port: PortId,
    is_static: bool,
    last_seen: Nanos,
}

/// The table (see the module docs).
pub struct MacTable {
    slots: Box<[Slot]>,
    mask: usize,
    len: usize,
    capacity: usize,
    aging_ns: Nanos,
    /// Where the incremental sweep goes on.
    sweep_at: usize,
    counters: MacTableCounters,
}

fn key(vlan: u16, mac: MacAddr) -> u64 {
    let m = mac.octets();
    u64::from(vlan) << 48 | u64::from_be_bytes([0, 0, m[0], m[1], m[2], m[3], m[4], m[5]])
}

fn unkey(k: u64) -> (u16, MacAddr) {
    let b = k.to_be_bytes();
    (
        (k >> 48) as u16,
        MacAddr([b[2], b[3], b[4], b[5], b[6], b[7]]),
    )
}

/// Slots visited per sweep step: a tick's worth of work, bounded.
const SWEEP_SLOTS: usize = 4096;

impl MacTable {
    /// A table for `model`: its capacity, aging and static entries.
    pub fn new(model: &MacTableModel) -> Self {
        let capacity = model.capacity.max(1);
        let slots = (capacity * 2).next_power_of_two();
        let mut t = MacTable {
            slots: vec![Slot::default(); slots].into_boxed_slice(),
            mask: slots - 1,
            len: 0,
            capacity,
            aging_ns: model.aging_ns,
            sweep_at: 0,
            counters: MacTableCounters::default(),
        };
        for s in &model.statics {
            t.insert_static(s.vlan, s.mac, s.port);
        }
        t
    }

    /// Takes a new model's aging and static entries, keeping what was
    /// learned (a capacity change takes effect on restart).
    pub fn configure(&mut self, model: &MacTableModel) {
        self.aging_ns = model.aging_ns;
        for i in 0..self.slots.len() {
            if self.slots[i].is_static {
                self.slots[i].is_static = false;
                self.slots[i].last_seen = 0;
            }
        }
        for s in &model.statics {
            self.insert_static(s.vlan, s.mac, s.port);
        }
        // Former static entries age out as learned ones that were never seen.
        if self.aging_ns == 0 {
            self.retain(|s| s.last_seen != 0);
        }
    }

    fn insert_static(&mut self, vlan: u16, mac: MacAddr, port: PortId) {
        let k = key(vlan, mac);
        let i = match self.find(k) {
            Ok(i) => i,
            Err(i) => {
                self.len += 1;
                i
            }
        };
        self.slots[i] = Slot {
            key: k,
            port,
            is_static: true,
            last_seen: 0,
        };
    }

    fn hash(&self, k: u64) -> usize {
        (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as usize & self.mask
    }

    /// The slot holding `k`, or the empty slot where it would go.
    fn find(&self, k: u64) -> Result<usize, usize> {
        let mut i = self.hash(k);
        loop {
            let s = &self.slots[i];
            if s.key == k {
                return Ok(i);
            }
            if s.key == 0 {
                return Err(i);
            }
            i = (i + 1) & self.mask;
        }
    }

    fn expired(&self, s: &Slot, now: Nanos) -> bool {
        !s.is_static && self.aging_ns != 0 && now.saturating_sub(s.last_seen) >= self.aging_ns
    }

    /// Where frames for `mac` in `vlan` go, if the table knows.
    #[inline]
    pub fn lookup(&self, vlan: u16, mac: MacAddr, now: Nanos) -> Option<PortId> {
        match self.find(key(vlan, mac)) {
            Ok(i) if !self.expired(&self.slots[i], now) => Some(self.slots[i].port),
            _ => None,
        }
    }

    /// Learns that `mac` in `vlan` was seen on `port` at `now`.
    #[inline]
    pub fn learn(&mut self, vlan: u16, mac: MacAddr, port: PortId, now: Nanos) -> Learned {
        let k = key(vlan, mac);
        match self.find(k) {
            Ok(i) => {
                let expired = self.expired(&self.slots[i], now);
                let s = &mut self.slots[i];
                if s.is_static {
                    return Learned::Static;
                }
                s.last_seen = now;
                if s.port == port {
                    return if expired {
                        self.counters.learned += 1;
                        Learned::New
                    } else {
                        Learned::Known
                    };
                }
                let from = s.port;
                s.port = port;
                if expired {
                    self.counters.learned += 1;
                    return Learned::New;
                }
                self.counters.moves += 1;
                Learned::Moved { from }
            }
            Err(i) => {
                if self.len >= self.capacity {
                    self.counters.full += 1;
                    return Learned::Full;
                }
                self.slots[i] = Slot {
                    key: k,
                    port,
                    is_static: false,
                    last_seen: now,
                };
                self.len += 1;
                self.counters.learned += 1;
                Learned::New
            }
        }
    }

    /// Removes slot `i`, shifting back the entries of its probe run.
    fn remove_at(&mut self, mut i: usize) {
        self.slots[i] = Slot::default();
        self.len -= 1;
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let k = self.slots[j].key;
            if k == 0 {
                return;
            }
            let home = self.hash(k);
            // Move j back to i when its home is not in (i, j] cyclically.
            let between = if i <= j {
                i < home && home <= j
            } else {
                i < home || home <= j
            };
            if !between {
                self.slots[i] = self.slots[j];
                self.slots[j] = Slot::default();
                i = j;
            }
        }
    }

    fn retain(&mut self, keep: impl Fn(&Slot) -> bool) -> u64 {
        let mut removed = 0;
        let mut i = 0;
        while i < self.slots.len() {
            let s = self.slots[i];
            if s.key != 0 && !keep(&s) {
                self.remove_at(i);
                removed += 1;
                // The shift may have moved another entry into slot i.
                continue;
            }
            i += 1;
        }
        removed
    }

    /// Removes what `port` learned (its link went down): frames for those
    /// addresses flood until they are heard again, wherever they went.
    pub fn flush_port(&mut self, port: PortId) {
        let n = self.retain(|s| s.is_static || s.port != port);
        self.counters.flushed += n;
    }

    /// Reclaims up to a bounded number of slots' aged entries; call it
    /// from a timer. Returns how many went.
    pub fn sweep(&mut self, now: Nanos) -> usize {
        if self.aging_ns == 0 || self.len == 0 {
            return 0;
        }
        let mut removed = 0;
        let mut visited = 0;
        while visited < SWEEP_SLOTS.min(self.slots.len()) {
            let i = self.sweep_at;
            let s = self.slots[i];
            if s.key != 0 && self.expired(&s, now) {
                // Slot i may hold a shifted entry now: look at it again
                // (removals are bounded by the entries held).
                self.remove_at(i);
                removed += 1;
                continue;
            }
            self.sweep_at = (i + 1) & self.mask;
            visited += 1;
        }
        self.counters.aged += removed as u64;
        removed
    }

    /// Entries in force at `now`, in VLAN then MAC order.
    pub fn entries(&self, now: Nanos) -> Vec<MacEntry> {
        let mut v: Vec<MacEntry> = self
            .slots
            .iter()
            .filter(|s| s.key != 0 && !self.expired(s, now))
            .map(|s| {
                let (vlan, mac) = unkey(s.key);
                MacEntry {
                    vlan,
                    mac,
                    port: s.port,
                    is_static: s.is_static,
                    last_seen: s.last_seen,
                }
            })
            .collect();
        v.sort_by_key(|e| (e.vlan, e.mac.octets()));
        v
    }

    /// Entries held (aged ones not yet swept included).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table holds nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The table's counters.
    pub fn counters(&self) -> MacTableCounters {
        self.counters
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::StaticMac;

    fn mac(n: u32) -> MacAddr {
        let b = n.to_be_bytes();
        MacAddr([2, 0, b[0], b[1], b[2], b[3]])
    }

    fn table(capacity: usize, aging_ns: Nanos) -> MacTable {
        MacTable::new(&MacTableModel {
            aging_ns,
            capacity,
            statics: Vec::new(),
        })
    }

    #[test]
    fn learns_looks_up_and_keeps_vlans_apart() {
        let mut t = table(16, 0);
        assert_eq!(t.learn(101, mac(1), 3, 10), Learned::New);
        assert_eq!(t.learn(101, mac(1), 3, 20), Learned::Known);
        assert_eq!(t.lookup(101, mac(1), 30), Some(3));
        assert_eq!(t.lookup(102, mac(1), 30), None, "another VLAN");
        assert_eq!(t.learn(102, mac(1), 4, 30), Learned::New);
        assert_eq!(t.lookup(102, mac(1), 30), Some(4));
        assert_eq!(t.len(), 2);
    }

    #[test]
    fn a_move_is_counted_and_followed() {
        let mut t = table(16, 0);
        t.learn(1, mac(7), 1, 0);
        assert_eq!(t.learn(1, mac(7), 2, 5), Learned::Moved { from: 1 });
        assert_eq!(t.lookup(1, mac(7), 6), Some(2));
        assert_eq!(t.counters().moves, 1);
    }

    #[test]
    fn a_full_table_counts_what_it_could_not_learn() {
        let mut t = table(4, 0);
        for n in 0..4 {
            assert_eq!(t.learn(1, mac(n), 1, 0), Learned::New);
        }
        assert_eq!(t.learn(1, mac(99), 1, 0), Learned::Full);
        assert_eq!(t.counters().full, 1);
        assert_eq!(t.lookup(1, mac(99), 0), None);
        // A known address still refreshes when the table is full.
        assert_eq!(t.learn(1, mac(2), 1, 1), Learned::Known);
    }

    #[test]
    fn entries_age_out_on_lookup_and_the_sweep_reclaims_them() {
        let mut t = table(8, 100);
        t.learn(1, mac(1), 1, 0);
        t.learn(1, mac(2), 1, 50);
        assert_eq!(t.lookup(1, mac(1), 99), Some(1));
        assert_eq!(t.lookup(1, mac(1), 100), None, "aged at 100");
        assert_eq!(t.lookup(1, mac(2), 100), Some(1));
        assert_eq!(t.sweep(100), 1);
        assert_eq!(t.len(), 1);
        assert_eq!(t.counters().aged, 1);
        // An aged address heard again is learned anew.
        assert_eq!(t.learn(1, mac(2), 3, 500), Learned::New);
        assert_eq!(t.lookup(1, mac(2), 500), Some(3));
    }

    #[test]
    fn a_static_entry_is_never_learned_over_nor_aged() {
        let t0 = MacTableModel {
            aging_ns: 10,
            capacity: 8,
            statics: vec![StaticMac {
                vlan: 5,
                mac: mac(1),
                port: 9,
            }],
        };
        let mut t = MacTable::new(&t0);
        assert_eq!(t.learn(5, mac(1), 2, 1_000), Learned::Static);
        assert_eq!(t.lookup(5, mac(1), 1_000_000), Some(9));
        assert_eq!(t.sweep(1_000_000), 0);
        let e = t.entries(0);
        assert!(e[0].is_static && e[0].port == 9);
        // Reconfigured without it, it becomes an ordinary (long unseen) entry.
        t.configure(&MacTableModel {
            statics: Vec::new(),
            ..t0
        });
        assert_eq!(t.lookup(5, mac(1), 1_000_000), None);
    }

    #[test]
    fn flushing_a_port_keeps_every_other_entry_findable() {
        let mut t = table(512, 0);
        for n in 0..400 {
            t.learn(1 + (n % 3) as u16, mac(n), (n % 5) as PortId, 0);
        }
        t.flush_port(2);
        assert_eq!(t.counters().flushed, 80);
        for n in 0..400 {
            let want = (n % 5 != 2).then_some((n % 5) as PortId);
            assert_eq!(t.lookup(1 + (n % 3) as u16, mac(n), 0), want, "{n}");
        }
        assert_eq!(t.len(), 320);
    }

    #[test]
    fn churn_through_a_small_table_never_loses_a_live_entry() {
        // Learn, age and sweep many times over: with backward-shift removal
        // every entry still in force stays reachable by its probe.
        let mut t = table(64, 1_000);
        let mut now = 0;
        for round in 0..200u32 {
            for n in 0..32 {
                t.learn(1, mac(round * 32 + n), 1, now);
            }
            now += 600;
            t.sweep(now);
            for n in 0..32 {
                assert_eq!(t.lookup(1, mac(round * 32 + n), now), Some(1));
            }
        }
        assert!(t.len() <= 64);
    }
}
