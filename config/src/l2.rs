//! The Layer 2 part of the model: VLANs, switchport settings, port-channels
//! and LACP, VLAN interfaces (SVIs) and the MAC address table, as plain data
//! as written in the configuration.
//!
//! As in the rest of the model, `line` fields are provenance: equality
//! ignores them, so a configuration re-parsed from its printed form compares
//! equal to the original.

use std::fmt;
use std::ops::RangeInclusive;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::diag::ValueError;
use crate::mtu::DEFAULT_MTU;
use crate::name::InterfaceName;
use crate::prefix::{Ipv4Prefix, Ipv6Prefix};

/// The VLAN every switch has and no configuration can remove.
pub const DEFAULT_VLAN: u16 = 1;
/// Highest VLAN a configuration may name (4095 is reserved by 802.1Q).
pub const MAX_VLAN: u16 = 4094;
/// Longest VLAN name NX-OS accepts.
pub const MAX_VLAN_NAME: usize = 32;
/// MAC address-table aging time with no `mac address-table aging-time`, in seconds.
pub const DEFAULT_MAC_AGING_SECS: u32 = 1800;
/// Shortest aging time other than 0 (no aging), in seconds.
pub const MIN_MAC_AGING_SECS: u32 = 10;
/// Longest aging time, in seconds.
pub const MAX_MAC_AGING_SECS: u32 = 1_000_000;
/// LACP system and port priority with no `lacp system-priority` / `lacp port-priority`.
pub const DEFAULT_LACP_PRIORITY: u16 = 32768;
/// Highest port-channel number.
pub const MAX_PORT_CHANNEL: u16 = 4096;
/// Most members `lacp min-links` may ask for.
pub const MAX_MIN_LINKS: u8 = 32;

/// Words in a [`VlanSet`]: one bit for each of 0-4095.
const WORDS: usize = 64;

/// A set of VLAN IDs (1-4094): a trunk's allowed list, or a `vlan` command's list.
///
/// Printed (`Display`) in NX-OS range form, ascending, runs of two or more
/// as ranges: `1-4094`, `101-102,200`; the empty set prints as `none`.
/// Parsed (`FromStr`) from the same form, from `all` and from `none`.
/// IDs outside 1-4094 are never members.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct VlanSet {
    bits: [u64; WORDS],
}

impl VlanSet {
    /// The empty set (`none`).
    pub const fn new() -> Self {
        VlanSet { bits: [0; WORDS] }
    }

    /// Every VLAN, 1-4094 (`all`): a trunk's allowed list by default.
    pub fn all() -> Self {
        let mut s = VlanSet {
            bits: [u64::MAX; WORDS],
        };
        s.bits[0] &= !1;
        s.bits[WORDS - 1] &= !(1 << 63);
        s
    }

    /// The VLANs of `range` that are valid IDs.
    pub fn range(range: RangeInclusive<u16>) -> Self {
        let mut s = VlanSet::new();
        for id in range {
            s.insert(id);
        }
        s
    }

    /// Whether `id` is in the set.
    pub fn contains(&self, id: u16) -> bool {
        valid(id) && self.bits[usize::from(id / 64)] & (1 << (id % 64)) != 0
    }

    /// Add `id`; returns whether it was added (false when already there or not 1-4094).
    pub fn insert(&mut self, id: u16) -> bool {
        if !valid(id) || self.contains(id) {
            return false;
        }
        self.bits[usize::from(id / 64)] |= 1 << (id % 64);
        true
    }

    /// Remove `id`; returns whether it was there.
    pub fn remove(&mut self, id: u16) -> bool {
        if !self.contains(id) {
            return false;
        }
        self.bits[usize::from(id / 64)] &= !(1 << (id % 64));
        true
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|w| *w == 0)
    }

    /// Number of VLANs in the set.
    pub fn len(&self) -> usize {
        self.bits.iter().map(|w| w.count_ones() as usize).sum()
    }

    /// The VLANs in either set.
    pub fn union(&self, other: &VlanSet) -> VlanSet {
        VlanSet {
            bits: std::array::from_fn(|i| self.bits[i] | other.bits[i]),
        }
    }

    /// The VLANs of this set that are not in `other`.
    pub fn difference(&self, other: &VlanSet) -> VlanSet {
        VlanSet {
            bits: std::array::from_fn(|i| self.bits[i] & !other.bits[i]),
        }
    }

    /// The VLANs, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (1..=MAX_VLAN).filter(move |id| self.contains(*id))
    }

    /// The set as maximal runs of consecutive VLANs, ascending.
    pub fn ranges(&self) -> impl Iterator<Item = RangeInclusive<u16>> + '_ {
        let mut next = 1u16;
        std::iter::from_fn(move || {
            let start = (next..=MAX_VLAN).find(|id| self.contains(*id))?;
            let mut end = start;
            while end < MAX_VLAN && self.contains(end + 1) {
                end += 1;
            }
            next = end + 1;
            Some(start..=end)
        })
    }

    /// Parse a list (`10,20-30`); on failure, the character offset into
    /// `text` of the item at fault with the error.
    pub(crate) fn parse_at(text: &str) -> Result<VlanSet, (usize, ValueError)> {
        let mut set = VlanSet::new();
        let mut offset = 0;
        for piece in text.split(',') {
            let lead = piece.chars().count() - piece.trim_start().chars().count();
            let at = offset + lead;
            offset += piece.chars().count() + 1;
            let item = piece.trim();
            if item.is_empty() {
                return Err((
                    at,
                    ValueError::new(
                        "empty item in VLAN list",
                        Some("separate VLANs with single commas, e.g. 10,20-30".into()),
                    ),
                ));
            }
            let (first, last) = match item.split_once('-') {
                Some((a, b)) => (a.trim(), Some(b.trim())),
                None => (item, None),
            };
            let start = parse_vlan_id(first).map_err(|e| (at, e))?;
            let end = match last {
                Some(l) => parse_vlan_id(l).map_err(|e| (at, e))?,
                None => start,
            };
            if end < start {
                return Err((
                    at,
                    ValueError::new(
                        format!("VLAN range `{item}` ends ({end}) before it starts ({start})"),
                        Some(format!("write the lower number first, e.g. {end}-{start}")),
                    ),
                ));
            }
            for id in start..=end {
                set.insert(id);
            }
        }
        Ok(set)
    }
}

impl Default for VlanSet {
    /// The empty set.
    fn default() -> Self {
        VlanSet::new()
    }
}

/// Whether `id` names a VLAN a configuration may use.
fn valid(id: u16) -> bool {
    (DEFAULT_VLAN..=MAX_VLAN).contains(&id)
}

/// The hint for a malformed or out-of-range VLAN.
const VLAN_HINT: &str = "a VLAN is a number 1-4094; lists are written like 10,20-30";

/// Parse one VLAN ID, 1-4094.
pub(crate) fn parse_vlan_id(text: &str) -> Result<u16, ValueError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::new(
            format!("invalid VLAN `{text}`"),
            Some(VLAN_HINT.into()),
        ));
    }
    match text.parse::<u16>() {
        Ok(id) if valid(id) => Ok(id),
        _ => Err(ValueError::new(
            format!("VLAN {text} is out of range"),
            Some(VLAN_HINT.into()),
        )),
    }
}

impl fmt::Display for VlanSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut first = true;
        for r in self.ranges() {
            if !first {
                f.write_str(",")?;
            }
            first = false;
            if r.start() == r.end() {
                write!(f, "{}", r.start())?;
            } else {
                write!(f, "{}-{}", r.start(), r.end())?;
            }
        }
        if first {
            f.write_str("none")?;
        }
        Ok(())
    }
}

impl fmt::Debug for VlanSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "VlanSet({self})")
    }
}

impl FromStr for VlanSet {
    type Err = ValueError;

    /// `10,20-30`, `all` or `none`; blanks around items are allowed.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        if trimmed.eq_ignore_ascii_case("all") {
            return Ok(VlanSet::all());
        }
        if trimmed.eq_ignore_ascii_case("none") {
            return Ok(VlanSet::new());
        }
        VlanSet::parse_at(s).map_err(|(_, e)| e)
    }
}

/// Serialized in its printed form, e.g. `"101-102,200"`.
impl Serialize for VlanSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// One VLAN: `vlan N` and its `name`.
#[derive(Debug, Clone, Serialize)]
pub struct Vlan {
    /// The VLAN ID, 1-4094.
    pub id: u16,
    /// `name TEXT`; `None` is NX-OS's default name (`VLAN0010`).
    pub name: Option<String>,
    /// Line of the first `vlan` command naming it (0 if built in code or VLAN 1).
    pub line: usize,
}

impl Vlan {
    /// A VLAN with the default name, first configured on `line`.
    pub fn new(id: u16, line: usize) -> Self {
        Vlan {
            id,
            name: None,
            line,
        }
    }

    /// The name `show vlan` gives it: the configured one, or `VLAN0010` (`default` for VLAN 1).
    pub fn display_name(&self) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None if self.id == DEFAULT_VLAN => "default".to_string(),
            None => format!("VLAN{:04}", self.id),
        }
    }
}

/// Equality of configuration, ignoring `line` (provenance).
impl PartialEq for Vlan {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id && self.name == other.name
    }
}

impl Eq for Vlan {}

/// The switch's VLANs, sorted by ID; VLAN 1 is always there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Vlans(Vec<Vlan>);

impl Default for Vlans {
    /// VLAN 1 alone, as on a switch with no `vlan` command.
    fn default() -> Self {
        Vlans(vec![Vlan::new(DEFAULT_VLAN, 0)])
    }
}

impl Vlans {
    /// The VLAN with ID `id`, if it exists.
    pub fn get(&self, id: u16) -> Option<&Vlan> {
        self.0
            .binary_search_by_key(&id, |v| v.id)
            .ok()
            .map(|i| &self.0[i])
    }

    /// Whether VLAN `id` exists.
    pub fn contains(&self, id: u16) -> bool {
        self.get(id).is_some()
    }

    /// The VLAN with ID `id`, created (first configured on `line`) when missing.
    ///
    /// Returns `None` for an ID outside 1-4094.
    pub fn get_or_insert(&mut self, id: u16, line: usize) -> Option<&mut Vlan> {
        if !valid(id) {
            return None;
        }
        let i = match self.0.binary_search_by_key(&id, |v| v.id) {
            Ok(i) => i,
            Err(i) => {
                self.0.insert(i, Vlan::new(id, line));
                i
            }
        };
        self.0.get_mut(i)
    }

    /// Remove VLAN `id`; returns whether it was removed. VLAN 1 is never removed.
    pub fn remove(&mut self, id: u16) -> bool {
        if id == DEFAULT_VLAN {
            return false;
        }
        match self.0.binary_search_by_key(&id, |v| v.id) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// The VLANs, ascending by ID.
    pub fn iter(&self) -> std::slice::Iter<'_, Vlan> {
        self.0.iter()
    }

    /// Number of VLANs (at least 1).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: VLAN 1 is always there (for symmetry with [`Vlans::len`]).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The IDs of every VLAN.
    pub fn ids(&self) -> VlanSet {
        let mut s = VlanSet::new();
        for v in &self.0 {
            s.insert(v.id);
        }
        s
    }
}

impl<'a> IntoIterator for &'a Vlans {
    type Item = &'a Vlan;
    type IntoIter = std::slice::Iter<'a, Vlan>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

/// `switchport mode`: how a Layer 2 port carries VLANs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SwitchportMode {
    /// One VLAN, untagged (the default).
    #[default]
    Access,
    /// The allowed VLANs, 802.1Q-tagged but for the native one.
    Trunk,
}

impl SwitchportMode {
    /// The keyword after `switchport mode`.
    pub fn keyword(self) -> &'static str {
        match self {
            SwitchportMode::Access => "access",
            SwitchportMode::Trunk => "trunk",
        }
    }
}

/// The VLAN settings of a Layer 2 port (Ethernet or port-channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Switchport {
    /// `switchport mode access|trunk` (default access).
    pub mode: SwitchportMode,
    /// `switchport access vlan N` (default 1): the VLAN of an access port.
    pub access_vlan: u16,
    /// `switchport trunk allowed vlan …` (default 1-4094): the VLANs a trunk carries.
    pub trunk_allowed: VlanSet,
    /// `switchport trunk native vlan N` (default 1): the trunk's untagged VLAN.
    pub native_vlan: u16,
}

impl Default for Switchport {
    fn default() -> Self {
        Switchport {
            mode: SwitchportMode::Access,
            access_vlan: DEFAULT_VLAN,
            trunk_allowed: VlanSet::all(),
            native_vlan: DEFAULT_VLAN,
        }
    }
}

impl Switchport {
    /// The VLANs the port forwards in its mode: the access VLAN, or the trunk's allowed list.
    pub fn vlans(&self) -> VlanSet {
        match self.mode {
            SwitchportMode::Access => VlanSet::range(self.access_vlan..=self.access_vlan),
            SwitchportMode::Trunk => self.trunk_allowed,
        }
    }

    /// Whether the port forwards frames of VLAN `id`.
    pub fn carries(&self, id: u16) -> bool {
        self.vlans().contains(id)
    }

    /// Whether every setting is at its default (nothing to print).
    pub fn is_default(&self) -> bool {
        *self == Switchport::default()
    }
}

/// `channel-group N mode …`: how a member port joins its port-channel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChannelMode {
    /// Static bundling, no LACP (the default).
    #[default]
    On,
    /// LACP, sending LACPDUs.
    Active,
    /// LACP, answering a partner's LACPDUs only.
    Passive,
}

impl ChannelMode {
    /// Every keyword `mode` accepts.
    pub const KEYWORDS: [&'static str; 3] = ["active", "passive", "on"];

    /// The keyword after `mode`.
    pub fn keyword(self) -> &'static str {
        match self {
            ChannelMode::On => "on",
            ChannelMode::Active => "active",
            ChannelMode::Passive => "passive",
        }
    }

    /// The mode a keyword of [`Self::KEYWORDS`] names.
    pub fn from_keyword(k: &str) -> Option<Self> {
        match k {
            "on" => Some(ChannelMode::On),
            "active" => Some(ChannelMode::Active),
            "passive" => Some(ChannelMode::Passive),
            _ => None,
        }
    }

    /// Whether the mode runs LACP (`active` or `passive`).
    pub fn is_lacp(self) -> bool {
        self != ChannelMode::On
    }
}

/// `channel-group N [mode …]` on a member port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ChannelGroup {
    /// The port-channel's number, 1-4096.
    pub id: u16,
    /// How the port joins it.
    pub mode: ChannelMode,
}

/// `lacp rate`: how often the partner is asked to send LACPDUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LacpRate {
    /// Every 30 s (the default).
    #[default]
    Normal,
    /// Every second.
    Fast,
}

impl LacpRate {
    /// The keyword after `lacp rate`.
    pub fn keyword(self) -> &'static str {
        match self {
            LacpRate::Normal => "normal",
            LacpRate::Fast => "fast",
        }
    }
}

/// A VLAN interface (`interface Vlan10`): the routed interface of a VLAN.
#[derive(Debug, Clone, Serialize)]
pub struct Svi {
    /// The VLAN it routes for, 1-4094.
    pub vlan: u16,
    /// `shutdown`. Defaults to `false` (up), like Ethernet ports and unlike
    /// NX-OS, where a new SVI starts shut.
    pub shutdown: bool,
    /// `description TEXT`.
    pub description: Option<String>,
    /// `vrf member NAME`; `None` is the default VRF.
    pub vrf: Option<String>,
    /// IPv4 addresses; the first is the primary, the rest are `secondary`.
    pub ipv4: Vec<Ipv4Prefix>,
    /// IPv6 addresses.
    pub ipv6: Vec<Ipv6Prefix>,
    /// Layer 3 MTU in bytes ([`DEFAULT_MTU`] unless set).
    pub mtu: u16,
    /// `mac-address`: overrides the SVI's MAC.
    pub mac: Option<[u8; 6]>,
    /// Line of the first `interface` command naming it (0 if built in code).
    pub line: usize,
}

impl Svi {
    /// The SVI of `vlan` with every setting at its default, first seen on `line`.
    pub fn new(vlan: u16, line: usize) -> Self {
        Svi {
            vlan,
            shutdown: false,
            description: None,
            vrf: None,
            ipv4: Vec::new(),
            ipv6: Vec::new(),
            mtu: DEFAULT_MTU,
            mac: None,
            line,
        }
    }

    /// The interface's name, `Vlan10`.
    pub fn name(&self) -> String {
        format!("Vlan{}", self.vlan)
    }
}

/// Equality of configuration, ignoring `line` (provenance).
impl PartialEq for Svi {
    fn eq(&self, other: &Self) -> bool {
        self.vlan == other.vlan
            && self.shutdown == other.shutdown
            && self.description == other.description
            && self.vrf == other.vrf
            && self.ipv4 == other.ipv4
            && self.ipv6 == other.ipv6
            && self.mtu == other.mtu
            && self.mac == other.mac
    }
}

impl Eq for Svi {}

/// A port-channel (`interface port-channel10`): the logical port its
/// members (`channel-group 10` on Ethernet ports) bundle into.
#[derive(Debug, Clone, Serialize)]
pub struct PortChannel {
    /// Its number, 1-4096.
    pub id: u16,
    /// `no switchport`: a Layer 3 (routed) port-channel. `false` is Layer 2.
    pub routed: bool,
    /// `shutdown` (default `false`, up).
    pub shutdown: bool,
    /// `description TEXT`.
    pub description: Option<String>,
    /// `vrf member NAME`; `None` is the default VRF.
    pub vrf: Option<String>,
    /// IPv4 addresses; the first is the primary, the rest are `secondary`.
    pub ipv4: Vec<Ipv4Prefix>,
    /// IPv6 addresses.
    pub ipv6: Vec<Ipv6Prefix>,
    /// Layer 3 MTU in bytes ([`DEFAULT_MTU`] unless set).
    pub mtu: u16,
    /// The VLAN settings of a Layer 2 port-channel (defaults when routed).
    pub switchport: Switchport,
    /// `service-policy type qos input NAME`.
    pub service_policy_qos_input: Option<String>,
    /// `service-policy type queuing output NAME`.
    pub service_policy_queuing_output: Option<String>,
    /// `service-policy type queuing input NAME`.
    pub service_policy_queuing_input: Option<String>,
    /// `lacp min-links N`: members that must be up for the port-channel to be up (default 1).
    pub min_links: Option<u8>,
    /// Line of the first `interface` command naming it, or of the first
    /// member's `channel-group` when no `interface` command does (0 if built in code).
    pub line: usize,
}

impl PortChannel {
    /// A Layer 2 port-channel with every setting at its default, first seen on `line`.
    pub fn new(id: u16, line: usize) -> Self {
        PortChannel {
            id,
            routed: false,
            shutdown: false,
            description: None,
            vrf: None,
            ipv4: Vec::new(),
            ipv6: Vec::new(),
            mtu: DEFAULT_MTU,
            switchport: Switchport::default(),
            service_policy_qos_input: None,
            service_policy_queuing_output: None,
            service_policy_queuing_input: None,
            min_links: None,
            line,
        }
    }

    /// The interface's name, `port-channel10`.
    pub fn name(&self) -> String {
        format!("port-channel{}", self.id)
    }
}

/// Equality of configuration, ignoring `line` (provenance).
impl PartialEq for PortChannel {
    fn eq(&self, other: &Self) -> bool {
        self.id == other.id
            && self.routed == other.routed
            && self.shutdown == other.shutdown
            && self.description == other.description
            && self.vrf == other.vrf
            && self.ipv4 == other.ipv4
            && self.ipv6 == other.ipv6
            && self.mtu == other.mtu
            && self.switchport == other.switchport
            && self.service_policy_qos_input == other.service_policy_qos_input
            && self.service_policy_queuing_output == other.service_policy_queuing_output
            && self.service_policy_queuing_input == other.service_policy_queuing_input
            && self.min_links == other.min_links
    }
}

impl Eq for PortChannel {}

/// A port a MAC address can be learned or pinned on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum L2Port {
    /// A front-panel port.
    Ethernet(InterfaceName),
    /// A port-channel, by number.
    PortChannel(u16),
}

impl fmt::Display for L2Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            L2Port::Ethernet(n) => n.fmt(f),
            L2Port::PortChannel(id) => write!(f, "port-channel{id}"),
        }
    }
}

/// Serialized as the port's name, e.g. `"port-channel10"`.
impl Serialize for L2Port {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// `mac address-table static MAC vlan N interface PORT`.
#[derive(Debug, Clone, Serialize)]
pub struct StaticMac {
    /// The unicast MAC address.
    pub mac: [u8; 6],
    /// The VLAN it is pinned in.
    pub vlan: u16,
    /// Where frames to it go.
    pub target: L2Port,
    /// Line it was configured on (0 if built in code).
    pub line: usize,
}

/// Equality of configuration, ignoring `line` (provenance).
impl PartialEq for StaticMac {
    fn eq(&self, other: &Self) -> bool {
        self.mac == other.mac && self.vlan == other.vlan && self.target == other.target
    }
}

impl Eq for StaticMac {}

/// The global `mac address-table` settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MacTable {
    /// `mac address-table aging-time SECONDS` ([`DEFAULT_MAC_AGING_SECS`]
    /// unless set); 0 turns aging off.
    pub aging_secs: u32,
    /// Static entries in order of configuration; one per (MAC, VLAN).
    pub statics: Vec<StaticMac>,
}

impl Default for MacTable {
    fn default() -> Self {
        MacTable {
            aging_secs: DEFAULT_MAC_AGING_SECS,
            statics: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(s: &str) -> VlanSet {
        s.parse().unwrap()
    }

    #[test]
    fn vlan_sets_print_in_nx_os_range_form() {
        assert_eq!(VlanSet::all().to_string(), "1-4094");
        assert_eq!(VlanSet::new().to_string(), "none");
        assert_eq!(set("200, 101-102").to_string(), "101-102,200");
        assert_eq!(set("1,3,4,5,4094").to_string(), "1,3-5,4094");
        assert_eq!(set("all"), VlanSet::all());
        assert_eq!(set("NONE"), VlanSet::new());
        assert_eq!(set("7-7").len(), 1);
        assert_eq!(VlanSet::all().len(), 4094);
        assert!(!VlanSet::all().contains(0) && !VlanSet::all().contains(4095));
        assert_eq!(format!("{:?}", set("10")), "VlanSet(10)");
    }

    #[test]
    fn vlan_set_operations() {
        let mut s = set("10-20");
        assert!(s.insert(30) && !s.insert(30) && !s.insert(0) && !s.insert(4095));
        assert!(s.remove(15) && !s.remove(15) && !s.remove(9999));
        assert_eq!(s.to_string(), "10-14,16-20,30");
        assert_eq!(s.union(&set("21")).to_string(), "10-14,16-21,30");
        assert_eq!(VlanSet::all().difference(&set("2-4094")).to_string(), "1");
        assert_eq!(s.iter().take(2).collect::<Vec<_>>(), [10, 11]);
        assert!(VlanSet::new().is_empty() && !s.is_empty());
    }

    #[test]
    fn vlan_list_errors_say_which_item() {
        let err = |s: &str| VlanSet::parse_at(s).unwrap_err();
        let (at, e) = err("10,x");
        assert_eq!((at, e.message()), (3, "invalid VLAN `x`"));
        let (at, e) = err("10, 5000");
        assert_eq!((at, e.message()), (4, "VLAN 5000 is out of range"));
        let (at, e) = err("30-20");
        assert_eq!(at, 0);
        assert_eq!(
            e.message(),
            "VLAN range `30-20` ends (20) before it starts (30)"
        );
        assert_eq!(e.hint(), Some("write the lower number first, e.g. 20-30"));
        let (at, e) = err("1,,2");
        assert_eq!((at, e.message()), (2, "empty item in VLAN list"));
        assert!(err("0").1.message().contains("out of range"));
    }

    #[test]
    fn vlan_one_is_always_there() {
        let mut v = Vlans::default();
        assert!(v.contains(1) && v.len() == 1 && !v.is_empty());
        assert!(!v.remove(1));
        v.get_or_insert(20, 3);
        v.get_or_insert(10, 4).unwrap().name = Some("ten".into());
        assert!(v.get_or_insert(4095, 5).is_none());
        let ids: Vec<u16> = v.iter().map(|x| x.id).collect();
        assert_eq!(ids, [1, 10, 20]);
        assert_eq!(v.ids().to_string(), "1,10,20");
        assert_eq!(v.get(10).unwrap().display_name(), "ten");
        assert_eq!(v.get(20).unwrap().display_name(), "VLAN0020");
        assert_eq!(v.get(1).unwrap().display_name(), "default");
        assert!(v.remove(20) && !v.remove(20));
    }

    #[test]
    fn switchports_carry_their_vlans() {
        let mut s = Switchport::default();
        assert!(s.is_default() && s.carries(1) && !s.carries(2));
        s.mode = SwitchportMode::Trunk;
        assert!(s.carries(4094));
        s.trunk_allowed = set("10,20");
        assert!(s.carries(20) && !s.carries(1));
    }

    #[test]
    fn equality_ignores_provenance() {
        assert_eq!(Svi::new(10, 1), Svi::new(10, 9));
        assert_eq!(PortChannel::new(1, 1), PortChannel::new(1, 9));
        assert_eq!(Vlan::new(5, 1), Vlan::new(5, 2));
        let m = |line| StaticMac {
            mac: [2, 0, 0, 0, 0, 1],
            vlan: 10,
            target: L2Port::PortChannel(1),
            line,
        };
        assert_eq!(m(1), m(2));
        assert_eq!(m(1).target.to_string(), "port-channel1");
    }
}
