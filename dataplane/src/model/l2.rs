//! Layer 2 in the compiled model: which VLANs a switchport carries, the
//! logical interfaces (SVIs and port-channels) that have a port number of
//! their own, and the MAC table's size, aging and static entries.
//!
//! Logical interfaces are entries of [`SwitchModel::interfaces`] with no
//! backend, so the FIB, the neighbour table and the ARP/ND answers work on
//! them as on a routed port; the pipeline turns a packet for one into a
//! frame on a physical port (a MAC table lookup in the SVI's VLAN, a
//! member of the port-channel by flow hash) just before egress.
//!
//! [`SwitchModel::interfaces`]: super::SwitchModel::interfaces

use super::PortId;
use crate::clock::Nanos;
use crate::wire::MacAddr;

/// Highest VLAN ID a frame may carry (4095 is reserved).
pub const MAX_VLAN: u16 = 4094;

/// A set of VLAN IDs (1–4094), one bit each: the membership test on the
/// packet path is one load and a mask.
#[derive(Clone, PartialEq, Eq)]
pub struct VlanSet([u64; 64]);

impl VlanSet {
    /// No VLANs.
    pub const fn empty() -> Self {
        VlanSet([0; 64])
    }

    /// Every VLAN from 1 to 4094.
    pub fn all() -> Self {
        let mut s = VlanSet::empty();
        for v in 1..=MAX_VLAN {
            s.insert(v);
        }
        s
    }

    /// Adds `vlan` (IDs outside 1–4094 are ignored).
    pub fn insert(&mut self, vlan: u16) {
        if (1..=MAX_VLAN).contains(&vlan) {
            self.0[usize::from(vlan >> 6)] |= 1 << (vlan & 63);
        }
    }

    /// Removes `vlan`.
    pub fn remove(&mut self, vlan: u16) {
        if let Some(w) = self.0.get_mut(usize::from(vlan >> 6)) {
            *w &= !(1 << (vlan & 63));
        }
    }

    /// Whether `vlan` is in the set.
    #[inline]
    pub fn contains(&self, vlan: u16) -> bool {
        self.0
            .get(usize::from(vlan >> 6))
            .is_some_and(|w| w & (1 << (vlan & 63)) != 0)
    }

    /// The VLANs in ascending order.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (1..=MAX_VLAN).filter(|v| self.contains(*v))
    }

    /// Whether the set has no VLAN.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|w| *w == 0)
    }
}

impl Default for VlanSet {
    fn default() -> Self {
        VlanSet::empty()
    }
}

/// Ranges, as NX-OS prints them (`1,101-102`).
impl std::fmt::Debug for VlanSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut first = true;
        let mut run: Option<(u16, u16)> = None;
        let mut flush = |f: &mut std::fmt::Formatter<'_>, (a, b): (u16, u16)| {
            let sep = if std::mem::take(&mut first) { "" } else { "," };
            if a == b {
                write!(f, "{sep}{a}")
            } else {
                write!(f, "{sep}{a}-{b}")
            }
        };
        for v in self.iter() {
            run = match run {
                Some((a, b)) if b + 1 == v => Some((a, v)),
                Some(r) => {
                    flush(f, r)?;
                    Some((v, v))
                }
                None => Some((v, v)),
            };
        }
        match run {
            Some(r) => flush(f, r),
            None => write!(f, "none"),
        }
    }
}

/// A switchport's VLAN membership: an access port carries one VLAN
/// untagged; a trunk carries its allowed VLANs tagged, except the native
/// VLAN, which it carries untagged (when allowed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortL2 {
    /// The VLAN of untagged (and priority-tagged, VID 0) frames: the access
    /// VLAN, or a trunk's native VLAN. `None`: untagged frames are dropped.
    pub untagged: Option<u16>,
    /// VLANs carried with a tag (a trunk's allowed VLANs but the native).
    pub tagged: VlanSet,
}

impl PortL2 {
    /// An access port in `vlan`.
    pub fn access(vlan: u16) -> Self {
        PortL2 {
            untagged: Some(vlan),
            tagged: VlanSet::empty(),
        }
    }

    /// A trunk carrying `allowed`, `native` untagged.
    pub fn trunk(allowed: &VlanSet, native: u16) -> Self {
        let mut tagged = allowed.clone();
        tagged.remove(native);
        PortL2 {
            untagged: allowed.contains(native).then_some(native),
            tagged,
        }
    }

    /// Whether the port carries `vlan`, tagged or not.
    #[inline]
    pub fn carries(&self, vlan: u16) -> bool {
        self.untagged == Some(vlan) || self.tagged.contains(vlan)
    }
}

/// What a logical interface stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logical {
    /// `interface VlanN`: the switch's Layer-3 interface in a VLAN.
    Svi {
        /// The VLAN it routes for.
        vlan: u16,
    },
    /// `interface port-channelN`: several physical links as one interface,
    /// routed (its own addresses) or switched (its own [`PortL2`]).
    PortChannel {
        /// The port-channel number.
        number: u16,
        /// Member ports, in configuration order.
        members: Vec<PortId>,
    },
}

/// A `mac address-table static` entry: never learned over, never aged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StaticMac {
    /// The VLAN the entry is in.
    pub vlan: u16,
    /// The address.
    pub mac: MacAddr,
    /// Where frames for it go: a switchport or a switched port-channel.
    pub port: PortId,
}

/// The MAC table's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacTableModel {
    /// How long a learned entry lives without a frame from its address
    /// (`mac address-table aging-time`; NX-OS's default 1800 s). 0: never.
    pub aging_ns: Nanos,
    /// Most entries the table holds; a source learned past it is counted
    /// (`mac_table_full`) and its frames still forwarded (flooded back).
    pub capacity: usize,
    /// Entries from the configuration.
    pub statics: Vec<StaticMac>,
}

/// NX-OS's default aging time, 1800 s.
pub const DEFAULT_MAC_AGING_NS: Nanos = 1_800_000_000_000;

/// Default MAC table size: far beyond a lab's hosts, small enough that
/// every worker's copy stays in the cache hierarchy (a few hundred KiB).
pub const DEFAULT_MAC_TABLE_CAPACITY: usize = 16 * 1024;

impl Default for MacTableModel {
    fn default() -> Self {
        MacTableModel {
            aging_ns: DEFAULT_MAC_AGING_NS,
            capacity: DEFAULT_MAC_TABLE_CAPACITY,
            statics: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vlan_set_holds_1_to_4094_and_prints_ranges() {
        let mut s = VlanSet::empty();
        for v in [1, 101, 102, 103, 200, 4094, 0, 4095] {
            s.insert(v);
        }
        assert!(s.contains(101) && s.contains(4094) && !s.contains(0) && !s.contains(4095));
        assert_eq!(format!("{s:?}"), "1,101-103,200,4094");
        s.remove(102);
        assert_eq!(format!("{s:?}"), "1,101,103,200,4094");
        assert_eq!(format!("{:?}", VlanSet::all()), "1-4094");
        assert_eq!(format!("{:?}", VlanSet::empty()), "none");
        assert!(!VlanSet::empty().contains(60000));
    }

    #[test]
    fn a_trunk_carries_its_native_vlan_untagged_only_when_allowed() {
        let mut allowed = VlanSet::empty();
        allowed.insert(1);
        allowed.insert(101);
        let t = PortL2::trunk(&allowed, 1);
        assert_eq!(t.untagged, Some(1));
        assert!(t.tagged.contains(101) && !t.tagged.contains(1));
        assert!(t.carries(1) && t.carries(101) && !t.carries(102));
        let t = PortL2::trunk(&allowed, 99);
        assert_eq!(t.untagged, None);
        let a = PortL2::access(101);
        assert!(a.carries(101) && !a.carries(1));
    }
}
