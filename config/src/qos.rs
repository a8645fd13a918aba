//! The QoS, PFC and load-balancing part of the model: class-maps, access
//! lists, the three kinds of policy-map, `system qos`, the PFC watchdog,
//! `hardware profile dlb`, `ip load-sharing` and the per-interface DCBX
//! version (the LLDP globals are in [`crate::lldp`]).
//!
//! Everything here is plain data as written in the configuration, with
//! units normalised: thresholds and buffer sizes in bytes (or packets), rates
//! in bits per second. The NX-OS defaults that apply when a policy is absent
//! are not filled in here; [`Config::effective_qos`](crate::Config::effective_qos)
//! resolves them per interface.
//!
//! # Units
//!
//! | written | stored as | multiplier |
//! |---|---|---|
//! | `bytes` | [`Threshold::Bytes`] | 1 |
//! | `kbytes` | [`Threshold::Bytes`] | 1024 ([`KBYTE`]) |
//! | `mbytes` | [`Threshold::Bytes`] | 1024 × 1024 ([`MBYTE`]) |
//! | `packets` | [`Threshold::Packets`] | 1 |
//! | `bps`, `kbps`, `mbps`, `gbps` | bits per second | 1, 10³, 10⁶, 10⁹ |
//!
//! Buffer quantities are binary (a kbyte is 1024 bytes, as switch buffer
//! sizes are counted); link rates are decimal, as Ethernet rates are.

use std::fmt;
use std::net::IpAddr;

use serde::Serialize;

use crate::name::InterfaceName;
use crate::prefix::IpPrefix;

/// Bytes in one `kbytes` unit.
pub const KBYTE: u64 = 1024;
/// Bytes in one `mbytes` unit.
pub const MBYTE: u64 = 1024 * 1024;
/// The class every policy-map has implicitly: traffic no other class matched.
pub const CLASS_DEFAULT: &str = "class-default";
/// Number of qos-groups, egress queues and ingress priority groups.
pub const QOS_GROUPS: usize = 8;

/// What a class-map classifies for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum ClassMapKind {
    /// `class-map type qos`: ingress classification (the only kind users define on a Nexus 9000).
    #[default]
    Qos,
}

/// A `class-map type queuing NAME` or `class-map type network-qos NAME`: a
/// user name for one qos-group, as the older Nexus 3000/5000 MQC dialect
/// writes it (`match qos-group N`), so a policy's `class type queuing NAME`
/// configures that group's queue and `class type network-qos NAME` its MTU
/// and losslessness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GroupClassMap {
    /// Its name (case-sensitive); the same name may also be a class-map of another type.
    pub name: String,
    /// `match qos-group N`; `None` while the class-map matches nothing.
    pub qos_group: Option<u8>,
}

/// How a class-map combines its `match` lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum MatchMode {
    /// `match-any`: a packet is in the class if any line matches it.
    Any,
    /// `match-all` (the NX-OS default): every line must match.
    #[default]
    All,
}

impl MatchMode {
    /// The keyword, `match-any` or `match-all`.
    pub fn keyword(self) -> &'static str {
        match self {
            MatchMode::Any => "match-any",
            MatchMode::All => "match-all",
        }
    }
}

/// One `match` line of a class-map.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Match {
    /// `match dscp LIST`: bit `n` set for DSCP `n` (0-63); serialized as the list of values.
    Dscp(#[serde(serialize_with = "crate::bits::set64")] u64),
    /// `match cos LIST`: bit `n` set for 802.1p priority `n` (0-7); serialized as the list.
    Cos(#[serde(serialize_with = "crate::bits::set8")] u8),
    /// `match precedence LIST`: bit `n` set for IP precedence `n` (the top three DSCP bits);
    /// serialized as the list.
    Precedence(#[serde(serialize_with = "crate::bits::set8")] u8),
    /// `match access-group name ACL`: packets the access list permits.
    AccessGroup(String),
}

impl Match {
    /// The DSCP values a DSCP or precedence match admits (0 for the other kinds).
    pub fn dscp_set(&self) -> u64 {
        match self {
            Match::Dscp(set) => *set,
            Match::Precedence(set) => (0..8)
                .filter(|p| set & (1 << p) != 0)
                .fold(0, |acc, p| acc | (0xffu64 << (8 * p))),
            Match::Cos(_) | Match::AccessGroup(_) => 0,
        }
    }
}

/// A `class-map type qos` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ClassMap {
    /// Its name (case-sensitive, as on NX-OS).
    pub name: String,
    /// What it classifies for.
    pub kind: ClassMapKind,
    /// How its lines combine.
    pub match_mode: MatchMode,
    /// Its `match` lines in order (identical lines are kept once).
    pub matches: Vec<Match>,
}

/// A port of an access-list condition: its number and, when the file named
/// it (`eq www`), the NX-OS keyword, so the printer writes it back as written.
///
/// The keyword is spelling, not meaning: two ports are equal (and hash
/// alike) when their numbers are, so `no permit udp any any eq domain`
/// removes `permit udp any any eq 53`. It serializes as the number.
#[derive(Debug, Clone, Copy)]
pub struct Port {
    /// The port number.
    pub number: u16,
    /// The keyword it was written as, if any.
    pub name: Option<&'static str>,
}

impl Port {
    /// A port written as a number.
    pub const fn new(number: u16) -> Self {
        Port { number, name: None }
    }
}

impl From<u16> for Port {
    fn from(number: u16) -> Self {
        Port::new(number)
    }
}

impl PartialEq for Port {
    fn eq(&self, other: &Self) -> bool {
        self.number == other.number
    }
}

impl Eq for Port {}

impl std::hash::Hash for Port {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.number.hash(state);
    }
}

impl Serialize for Port {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(self.number)
    }
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            Some(name) => f.write_str(name),
            None => write!(f, "{}", self.number),
        }
    }
}

/// A layer-4 port condition of an access-list entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PortMatch {
    /// `eq N`.
    Eq(Port),
    /// `neq N`.
    Neq(Port),
    /// `lt N`: strictly below.
    Lt(Port),
    /// `gt N`: strictly above.
    Gt(Port),
    /// `range A B`, inclusive.
    Range(Port, Port),
}

impl PortMatch {
    /// Whether `port` satisfies the condition.
    pub fn matches(&self, port: u16) -> bool {
        match *self {
            PortMatch::Eq(p) => port == p.number,
            PortMatch::Neq(p) => port != p.number,
            PortMatch::Lt(p) => port < p.number,
            PortMatch::Gt(p) => port > p.number,
            PortMatch::Range(a, b) => (a.number..=b.number).contains(&port),
        }
    }
}

impl fmt::Display for PortMatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PortMatch::Eq(p) => write!(f, "eq {p}"),
            PortMatch::Neq(p) => write!(f, "neq {p}"),
            PortMatch::Lt(p) => write!(f, "lt {p}"),
            PortMatch::Gt(p) => write!(f, "gt {p}"),
            PortMatch::Range(a, b) => write!(f, "range {a} {b}"),
        }
    }
}

/// The fields of a packet an access list looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlowKey {
    /// IP protocol number (6 TCP, 17 UDP, ...).
    pub protocol: u8,
    /// Source address.
    pub src: IpAddr,
    /// Destination address.
    pub dst: IpAddr,
    /// Source port, for TCP and UDP.
    pub src_port: Option<u16>,
    /// Destination port, for TCP and UDP.
    pub dst_port: Option<u16>,
    /// DSCP (0-63).
    pub dscp: u8,
}

/// One `permit` / `deny` line of an access list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AclEntry {
    /// Sequence number (NX-OS numbers unnumbered lines 10 past the last).
    pub seq: u32,
    /// `permit` (true) or `deny`.
    pub permit: bool,
    /// IP protocol number; `None` for `ip` (any protocol).
    pub protocol: Option<u8>,
    /// Source prefix; `None` for `any`.
    pub src: Option<IpPrefix>,
    /// Destination prefix; `None` for `any`.
    pub dst: Option<IpPrefix>,
    /// Source port condition (TCP and UDP only).
    pub src_port: Option<PortMatch>,
    /// Destination port condition (TCP and UDP only).
    pub dst_port: Option<PortMatch>,
    /// `dscp N`: only packets with this DSCP.
    pub dscp: Option<u8>,
    /// Conditions railyard reads but does not evaluate (see [`Unevaluated`]);
    /// `None` when every condition is one of the fields above.
    pub unevaluated: Option<Unevaluated>,
}

/// The part of an access-list entry railyard cannot evaluate: an option such
/// as `fragments`, an ICMP type, TCP flags, `precedence`, or an
/// `addrgroup`/`portgroup` object-group reference.
///
/// Why the entry is kept rather than dropped: dropping a `deny` widens the
/// list, dropping a `permit` narrows it, and either shifts the sequence
/// numbers NX-OS gives the unnumbered lines after it. Kept, the list keeps
/// NX-OS's numbering and prints back as written. Evaluating it on the other
/// fields alone would still classify differently from the switch (a `deny …
/// fragments` would deny every packet, not only fragments), and QoS
/// classification has no safe direction to err in: traffic put in the wrong
/// class is mis-queued either way. So an access list with such an entry is
/// loaded with a warning naming the option, and a class-map that matches it
/// (`match access-group name`) is an error: railyard will not classify by a
/// list it cannot evaluate. Railyard filters no traffic by access list
/// (`ip access-group` on an interface is skipped), so a list no class-map
/// uses changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unevaluated {
    /// What is not evaluated, one name per kind, in line order (`fragments`,
    /// `ICMP message type`, `addrgroup`, ...).
    pub options: Vec<String>,
    /// The entry's conditions as written (from the protocol on, tokens
    /// joined by one space), which is what railyard prints back.
    pub text: String,
}

impl Unevaluated {
    /// An option's name as messages write it: keywords quoted
    /// (`` `fragments` ``), descriptions (`ICMP message type`) as they are.
    pub fn describe(kind: &str) -> String {
        if kind.bytes().any(|c| c.is_ascii_uppercase()) {
            kind.to_string()
        } else {
            format!("`{kind}`")
        }
    }
}

impl AclEntry {
    /// Whether a packet satisfies every condition of the entry (ignoring
    /// permit/deny). For an entry with [`Self::unevaluated`] conditions this
    /// looks only at the evaluated fields; validation rejects a class-map
    /// that would rely on such an entry, so no classifier is built from one.
    pub fn matches(&self, key: &FlowKey) -> bool {
        let port_ok = |cond: Option<PortMatch>, port: Option<u16>| match (cond, port) {
            (None, _) => true,
            (Some(c), Some(p)) => c.matches(p),
            (Some(_), None) => false,
        };
        let prefix_ok = |p: Option<IpPrefix>, addr: IpAddr| match p {
            Some(p) => p.contains(addr),
            None => true,
        };
        (self.protocol.is_none() || self.protocol == Some(key.protocol))
            && prefix_ok(self.src, key.src)
            && prefix_ok(self.dst, key.dst)
            && port_ok(self.src_port, key.src_port)
            && port_ok(self.dst_port, key.dst_port)
            && (self.dscp.is_none() || self.dscp == Some(key.dscp))
    }
}

/// An `ip access-list` as used by `match access-group name`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AccessList {
    /// Its name.
    pub name: String,
    /// Its entries, in sequence-number order.
    pub entries: Vec<AclEntry>,
}

impl AccessList {
    /// Whether the list permits a packet: the first matching entry decides; no match denies.
    pub fn permits(&self, key: &FlowKey) -> bool {
        self.entries
            .iter()
            .find(|e| e.matches(key))
            .is_some_and(|e| e.permit)
    }
}

/// One `class` of a `policy-map type qos`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QosPolicyClass {
    /// The class-map it applies to, or [`CLASS_DEFAULT`].
    pub class: String,
    /// `set qos-group N` (0-7); `None` leaves matching traffic in qos-group 0.
    pub set_qos_group: Option<u8>,
}

/// A `policy-map type qos`: ingress classification into qos-groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QosPolicy {
    /// Its name.
    pub name: String,
    /// Its classes in order; the first class that matches a packet decides.
    pub classes: Vec<QosPolicyClass>,
}

/// Which side of the switch a queuing policy applies to, from its class names.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum Direction {
    /// `c-out-8q-q…` classes: egress queues (the default for a policy with no class).
    #[default]
    Egress,
    /// `c-in-q…` classes: ingress priority groups.
    Ingress,
}

impl Direction {
    /// `output` or `input`, as written in `service-policy type queuing`.
    pub fn keyword(self) -> &'static str {
        match self {
            Direction::Egress => "output",
            Direction::Ingress => "input",
        }
    }

    /// The system-defined class name of queue `queue` (0 is the default queue).
    pub fn class_name(self, queue: u8) -> String {
        match (self, queue) {
            (Direction::Egress, 0) => "c-out-8q-q-default".into(),
            (Direction::Egress, q) => format!("c-out-8q-q{q}"),
            (Direction::Ingress, 0) => "c-in-q-default".into(),
            (Direction::Ingress, q) => format!("c-in-q{q}"),
        }
    }
}

/// A bandwidth guarantee for a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Bandwidth {
    /// `bandwidth percent P`: a share of the link rate.
    Percent(u8),
    /// `bandwidth remaining percent P`: a share of what strict-priority queues leave.
    RemainingPercent(u8),
    /// `bandwidth V UNIT`: a rate in bits per second.
    Rate(u64),
}

/// A queue depth, in bytes or packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Threshold {
    /// A depth in bytes (`bytes`, `kbytes` and `mbytes` are converted).
    Bytes(u64),
    /// A depth in packets.
    Packets(u64),
}

impl Threshold {
    /// The number, whatever its unit.
    pub fn value(self) -> u64 {
        match self {
            Threshold::Bytes(n) | Threshold::Packets(n) => n,
        }
    }

    /// The threshold as a human reads it: `153600 bytes`, `100 packets`.
    pub(crate) fn show(self) -> String {
        match self {
            Threshold::Bytes(n) => format!("{n} bytes"),
            Threshold::Packets(n) => format!("{n} packets"),
        }
    }

    /// Whether both are counted in the same unit.
    pub fn same_unit(self, other: Threshold) -> bool {
        matches!(
            (self, other),
            (Threshold::Bytes(_), Threshold::Bytes(_))
                | (Threshold::Packets(_), Threshold::Packets(_))
        )
    }
}

/// The platform's named WRED threshold sets (`random-detect threshold NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum WredPreset {
    /// `burst-optimized`: tolerant of bursts (railyard uses 950 KB–3000 KB, 7 %).
    BurstOptimized,
    /// `mesh-optimized`: early marking for many-to-many traffic (railyard uses 150 KB–1536 KB, 7 %).
    MeshOptimized,
}

impl WredPreset {
    /// The keyword, e.g. `burst-optimized`.
    pub fn keyword(self) -> &'static str {
        match self {
            WredPreset::BurstOptimized => "burst-optimized",
            WredPreset::MeshOptimized => "mesh-optimized",
        }
    }

    /// The WRED settings railyard uses for the preset.
    ///
    /// NX-OS does not publish the platform's values; these come from
    /// published AI-fabric templates (Cisco's 950 KB–3000 KB at 7 %, NVIDIA's
    /// RoCE default 150 KB–1.5 MB), with weight 0.
    pub fn wred(self, ecn: bool) -> Wred {
        let (min, max) = match self {
            WredPreset::BurstOptimized => (950 * KBYTE, 3000 * KBYTE),
            WredPreset::MeshOptimized => (150 * KBYTE, 1536 * KBYTE),
        };
        Wred {
            min: Threshold::Bytes(min),
            max: Threshold::Bytes(max),
            drop_probability: 7,
            weight: 0,
            ecn,
            preset: Some(self),
        }
    }
}

/// Default `drop-probability` when a `random-detect` line omits it.
pub const DEFAULT_DROP_PROBABILITY: u8 = 10;

/// Weighted random early detection (and ECN marking) on a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Wred {
    /// Average depth where marking (or dropping) starts; in the same unit
    /// as `max` (the parser rejects thresholds that mix packets and bytes).
    pub min: Threshold,
    /// Average depth where the probability reaches `drop_probability`; above it every packet is marked.
    pub max: Threshold,
    /// Percent marked (or dropped) at the maximum threshold, 0-100.
    pub drop_probability: u8,
    /// Averaging weight W: avg += (q − avg) / 2^W; 0 is instantaneous. 0-15.
    pub weight: u8,
    /// `ecn`: mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
    /// Set when written as `random-detect threshold PRESET`; the thresholds are then the preset's.
    pub preset: Option<WredPreset>,
}

/// A queue's tail-drop limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum QueueLimit {
    /// `queue-limit N bytes|kbytes|mbytes`, in bytes.
    Bytes(u64),
    /// `queue-limit N packets`.
    Packets(u64),
    /// `queue-limit percent P`: of the shared buffer.
    Percent(u8),
    /// `queue-limit dynamic A`: the dynamic-threshold alpha (0-10).
    Dynamic(u8),
}

impl QueueLimit {
    /// The limit as a [`Threshold`], when it is a fixed depth.
    pub fn threshold(self) -> Option<Threshold> {
        match self {
            QueueLimit::Bytes(n) => Some(Threshold::Bytes(n)),
            QueueLimit::Packets(n) => Some(Threshold::Packets(n)),
            QueueLimit::Percent(_) | QueueLimit::Dynamic(_) => None,
        }
    }
}

/// `shape min V max V`: a queue's guaranteed and maximum rate, in bits per second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Shape {
    /// Guaranteed rate.
    pub min_bps: u64,
    /// Maximum rate.
    pub max_bps: u64,
}

/// `pause buffer-size B pause-threshold XOFF resume-threshold XON`, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct PauseThresholds {
    /// Buffer reserved for the priority group.
    pub buffer_size: u64,
    /// Occupancy at which PFC XOFF is sent.
    pub xoff: u64,
    /// Occupancy below which XON (quanta 0) is sent.
    pub xon: u64,
}

/// One `class type queuing` of a queuing policy: the settings of one queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueuingClass {
    /// Queue number: 1-7 for `…q1`..`…q7`, 0 for `…q-default`.
    pub queue: u8,
    /// The name the class was written with when it is not a system class
    /// name (`class-default`, or a `class-map type queuing` whose qos-group
    /// is [`Self::queue`]), so it prints back as written.
    pub class: Option<String>,
    /// `priority [level N]`: strict priority, level 1 highest (1-8).
    pub priority_level: Option<u8>,
    /// `bandwidth …`.
    pub bandwidth: Option<Bandwidth>,
    /// `random-detect …`.
    pub wred: Option<Wred>,
    /// `queue-limit …`.
    pub queue_limit: Option<QueueLimit>,
    /// `shape min … max …`.
    pub shape: Option<Shape>,
    /// `pause buffer-size …` (ingress classes only).
    pub pause: Option<PauseThresholds>,
}

impl QueuingClass {
    /// An empty class for `queue`.
    pub fn new(queue: u8) -> Self {
        QueuingClass {
            queue,
            ..QueuingClass::default()
        }
    }
}

/// A `policy-map type queuing`: scheduling per egress queue, or ingress buffering per priority group.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueuingPolicy {
    /// Its name.
    pub name: String,
    /// Egress or ingress, from its class names.
    pub direction: Direction,
    /// Its classes in order of first appearance.
    pub classes: Vec<QueuingClass>,
}

impl QueuingPolicy {
    /// The class for `queue`, if the policy lists it.
    pub fn class(&self, queue: u8) -> Option<&QueuingClass> {
        self.classes.iter().find(|c| c.queue == queue)
    }
}

/// One `class type network-qos c-8q-nqN` (or user-named class) of a network-qos policy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NqClass {
    /// The qos-group it configures (0 for `c-8q-nq-default` and `class-default`).
    pub qos_group: u8,
    /// The name the class was written with when it is not a system class
    /// name (`class-default`, or a `class-map type network-qos` whose
    /// qos-group is [`Self::qos_group`]), so it prints back as written.
    pub class: Option<String>,
    /// `pause no-drop` (the older Nexus 3000/5000 dialect): the class is
    /// lossless; without `pfc-cos` PFC pauses it on the 802.1p priorities
    /// the ingress classification maps into its qos-group.
    pub no_drop: bool,
    /// `mtu N`: largest frame the class carries.
    pub mtu: Option<u16>,
    /// `pause pfc-cos N[,N…]`: the class is lossless, paused by PFC on these priorities (sorted).
    pub pause_pfc_cos: Vec<u8>,
}

/// A `policy-map type network-qos`: per-qos-group MTU and losslessness.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NetworkQosPolicy {
    /// Its name.
    pub name: String,
    /// Its classes in order of first appearance.
    pub classes: Vec<NqClass>,
}

/// The `system qos` section: policies applied to every interface that does not override them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SystemQos {
    /// `service-policy type network-qos NAME`.
    pub network_qos: Option<String>,
    /// `service-policy type queuing output NAME`.
    pub queuing_output: Option<String>,
    /// `service-policy type queuing input NAME`.
    pub queuing_input: Option<String>,
    /// `service-policy type qos input NAME`.
    pub qos_input: Option<String>,
}

impl SystemQos {
    /// Whether nothing is set (the section is then not printed).
    pub fn is_empty(&self) -> bool {
        *self == SystemQos::default()
    }
}

/// `priority-flow-control mode` of an interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum PfcMode {
    /// `auto` (default): PFC as negotiated by DCBX.
    #[default]
    Auto,
    /// `on`: PFC regardless of the peer.
    On,
    /// `off`: no PFC.
    Off,
}

impl PfcMode {
    /// The keyword, `auto`, `on` or `off`.
    pub fn keyword(self) -> &'static str {
        match self {
            PfcMode::Auto => "auto",
            PfcMode::On => "on",
            PfcMode::Off => "off",
        }
    }
}

/// `lldp dcbx version` of an interface (railyard extension): which DCBX
/// flavour the port's LLDP agent speaks, because some RoCE NICs and older
/// switches understand only the pre-standard CEE TLVs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum DcbxVersion {
    /// `auto` (default): follow the peer, IEEE preferred (send IEEE until a
    /// CEE-only peer is heard).
    #[default]
    Auto,
    /// `ieee`: the IEEE 802.1Qaz TLVs only.
    Ieee,
    /// `cee`: the legacy CEE TLVs (OUI 00-1B-21) only.
    Cee,
}

impl DcbxVersion {
    /// Every keyword `lldp dcbx version` accepts.
    pub const KEYWORDS: [&'static str; 3] = ["auto", "ieee", "cee"];

    /// The keyword, `auto`, `ieee` or `cee`.
    pub fn keyword(self) -> &'static str {
        match self {
            DcbxVersion::Auto => "auto",
            DcbxVersion::Ieee => "ieee",
            DcbxVersion::Cee => "cee",
        }
    }

    /// The version a keyword of [`Self::KEYWORDS`] names.
    pub fn from_keyword(keyword: &str) -> Option<DcbxVersion> {
        Some(match keyword {
            "auto" => DcbxVersion::Auto,
            "ieee" => DcbxVersion::Ieee,
            "cee" => DcbxVersion::Cee,
            _ => return None,
        })
    }
}

/// Longest cable `priority-flow-control cable-length` accepts, in metres
/// (100 km: beyond any data-centre link PFC is used on).
pub const MAX_CABLE_METRES: u32 = 100_000;
/// Longest response `priority-flow-control peer-response` and
/// `software-response` accept, in nanoseconds (1 s: a pause of 65535 quanta
/// lasts 336 µs at 100 Gb/s and 3.4 s at 10 Mb/s, so a longer response
/// cannot be met by any headroom worth configuring).
pub const MAX_RESPONSE_NS: u64 = 1_000_000_000;
/// Largest `priority-flow-control peer-response N bits`.
pub const MAX_RESPONSE_BITS: u64 = 1_000_000_000;

/// How long the peer on an interface takes to stop sending once a pause
/// reaches it (railyard's `priority-flow-control peer-response`): in bit
/// times, as 802.1Qbb states the response of a MAC and PHY (so it scales
/// with the port's speed), or as a fixed time, as a host's software answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PeerResponse {
    /// `N bits`: bit times at the port's speed.
    Bits(u64),
    /// `N ns|us|ms`: a time, stored in nanoseconds.
    Nanos(u64),
}

/// railyard's interface lines that say how long a pause takes to act on
/// the link, from which the default headroom is derived and against which
/// `check` measures a configured one. `None`: the standard term (the
/// dataplane's `PfcDelays::default`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub struct PfcDelays {
    /// `priority-flow-control cable-length METRES` (0–[`MAX_CABLE_METRES`]):
    /// the cable to the peer, whose round trip a pause and the frames
    /// already on it take.
    pub cable_metres: Option<u32>,
    /// `priority-flow-control peer-response N bits|ns|us|ms`.
    pub peer_response: Option<PeerResponse>,
    /// `priority-flow-control software-response N ns|us|ms`: how long the
    /// poll loop serving a software backend (AF_PACKET, AF_XDP, TAP, DPDK,
    /// ring) may go without polling, in nanoseconds; ignored on other ports.
    pub software_response_ns: Option<u64>,
}

impl PfcDelays {
    /// Whether no line sets any term.
    pub fn is_default(&self) -> bool {
        *self == PfcDelays::default()
    }
}

/// Default PFC watchdog polling interval, in milliseconds.
pub const DEFAULT_WATCHDOG_INTERVAL_MS: u16 = 100;
/// Default PFC watchdog shutdown multiplier.
pub const DEFAULT_WATCHDOG_SHUTDOWN_MULTIPLIER: u8 = 1;
/// Default PFC watchdog auto-restore multiplier.
pub const DEFAULT_WATCHDOG_AUTO_RESTORE_MULTIPLIER: u8 = 10;

/// The global PFC watchdog timers.
///
/// A queue paused with traffic pending and nothing transmitted for
/// `interval_ms × shutdown_multiplier` is declared stuck and its traffic
/// dropped; it is restored once pause frames have stopped for
/// `interval_ms × auto_restore_multiplier` (or after
/// `interval_ms × fixed_restore_multiplier` when that is non-zero).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct PfcWatchdogTimers {
    /// `priority-flow-control watch-dog interval MS` (100-1000, default 100).
    pub interval_ms: u16,
    /// `priority-flow-control watch-dog shutdown-multiplier N` (1-10, default 1).
    pub shutdown_multiplier: u8,
    /// `priority-flow-control auto-restore multiplier N` (0-100, default 10).
    pub auto_restore_multiplier: u8,
    /// `priority-flow-control fixed-restore multiplier N` (0-100, default 0: off).
    pub fixed_restore_multiplier: u8,
}

impl Default for PfcWatchdogTimers {
    fn default() -> Self {
        PfcWatchdogTimers {
            interval_ms: DEFAULT_WATCHDOG_INTERVAL_MS,
            shutdown_multiplier: DEFAULT_WATCHDOG_SHUTDOWN_MULTIPLIER,
            auto_restore_multiplier: DEFAULT_WATCHDOG_AUTO_RESTORE_MULTIPLIER,
            fixed_restore_multiplier: 0,
        }
    }
}

/// Which ports dynamic load balancing applies to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum DlbInterfaces {
    /// `dlb-interface all`.
    All,
    /// `dlb-interface NAME, NAME…` (sorted, without repeats; empty when not configured).
    List(Vec<InterfaceName>),
}

impl Default for DlbInterfaces {
    fn default() -> Self {
        DlbInterfaces::List(Vec::new())
    }
}

/// How DLB picks a member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
pub enum DlbMode {
    /// `mode flowlet` (default): re-pick at an idle gap longer than the flowlet aging.
    #[default]
    Flowlet,
    /// `mode per-packet`: every packet goes to the best member.
    PerPacket,
}

/// `source IF destination IF` under `static-pinning`: traffic that arrives
/// on `source` and would be balanced over a DLB group that has `destination`
/// among its members always leaves on `destination`, so an operator can
/// keep chosen traffic (a storage host, a test port) on a known link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DlbPin {
    /// The ingress port whose traffic is pinned.
    pub source: InterfaceName,
    /// The DLB member it is pinned to.
    pub destination: InterfaceName,
}

/// The DLB source MAC when none is configured, 00:CC:CC:CC:CC:CC.
pub const DEFAULT_DLB_MAC: [u8; 6] = [0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc];
/// Default flowlet aging in microseconds (Cloud Scale).
pub const DEFAULT_FLOWLET_AGING_US: u32 = 500;
/// Default DRE levels: the widths, in percent of link load, of quality
/// bands 0…6 (see [`Dlb::dre_thresholds`]), so band n starts at 12, 25, 37,
/// 50, 62, 75, 87 % for n = 1…7: eight bands of equal width, no load range
/// favoured.
pub const DEFAULT_DRE_THRESHOLDS: [u8; 7] = [12, 13, 12, 13, 12, 13, 12];
/// Default DRE decay factor: with [`DEFAULT_SAMPLING_INTERVAL_NS`] it gives
/// the rate estimator a time constant of 2² × 16 µs = 64 µs, well under the
/// flowlet aging, so a member's quality reflects the last few flowlets.
pub const DEFAULT_DECAY_FACTOR: u8 = 2;
/// Default DRE sampling interval in nanoseconds (16 µs): fine enough that
/// the estimator follows load within a flowlet gap (see [`DEFAULT_DECAY_FACTOR`]).
pub const DEFAULT_SAMPLING_INTERVAL_NS: u32 = 16_000;
/// Default number of flowlet table entries: enough that distinct flows
/// rarely share an entry at lab scale while the table stays small; a power
/// of two so a flow hash indexes it by masking.
pub const DEFAULT_FLOWLET_TABLE_SIZE: u32 = 4096;
/// Smallest `flowlet-table-size` accepted.
pub(crate) const MIN_FLOWLET_TABLE_SIZE: u32 = 256;
/// Largest `flowlet-table-size` accepted (2²⁰ entries, bounding the memory a table takes).
pub(crate) const MAX_FLOWLET_TABLE_SIZE: u32 = 1 << 20;

/// `hardware profile dlb`: dynamic (flowlet) load balancing over ECMP members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Dlb {
    /// `dlb-interface …`.
    pub interfaces: DlbInterfaces,
    /// `mode [policy-driven] flowlet|per-packet`.
    pub mode: DlbMode,
    /// `mode policy-driven …`: on NX-OS a QoS policy selects which traffic
    /// DLB balances; railyard does not model that selection, so the mode
    /// applies to all traffic over DLB groups (and the validator says so).
    pub policy_driven: bool,
    /// `mac-address`: the MAC DLB rewrites with (default [`DEFAULT_DLB_MAC`]).
    pub mac_address: [u8; 6],
    /// `flowlet-aging USEC` (default [`DEFAULT_FLOWLET_AGING_US`]).
    pub flowlet_aging_us: u32,
    /// `dre-thresholds level-1 P … level-7 P`: level-n is the *width*, in
    /// percent of link load, of quality band n−1, so band n starts at
    /// level-1 + … + level-n and the levels normally add up to 100.
    ///
    /// Cisco's own examples read only this way: the Nexus 9000 CloudScale
    /// example (genielibs `test_dlb_complete_cloudscale_config`, "from the
    /// guide") uses 15 20 30 15 10 5 5, and APIC's DLB policy defaults
    /// (developer.cisco.com, "Configuring Port Channel Dynamic Load
    /// Balancing") are 5 5 10 15 15 25 25; both sum to 100 and neither could
    /// be a rising list of absolute thresholds.
    pub dre_thresholds: Option<[u8; 7]>,
    /// `decay-factor N` (0-15) of the discounted rate estimator.
    pub decay_factor: Option<u8>,
    /// `sampling-interval NS nsecs` (at least 1).
    pub sampling_interval_ns: Option<u32>,
    /// `[no] load-awareness`: weigh members by their load (default on,
    /// since balancing by load is the point of DLB; railyard's choice).
    pub load_awareness: bool,
    /// `flowlet-table-size N` (railyard extension): entries in the flowlet
    /// table, a power of two from 256 to 1048576 (default
    /// [`DEFAULT_FLOWLET_TABLE_SIZE`]).
    pub flowlet_table_size: u32,
    /// `static-pinning` / `source IF destination IF`, one per source, in
    /// the order configured.
    pub static_pinning: Vec<DlbPin>,
}

impl Default for Dlb {
    fn default() -> Self {
        Dlb {
            interfaces: DlbInterfaces::default(),
            mode: DlbMode::default(),
            mac_address: DEFAULT_DLB_MAC,
            flowlet_aging_us: DEFAULT_FLOWLET_AGING_US,
            dre_thresholds: None,
            decay_factor: None,
            sampling_interval_ns: None,
            load_awareness: true,
            flowlet_table_size: DEFAULT_FLOWLET_TABLE_SIZE,
            policy_driven: false,
            static_pinning: Vec::new(),
        }
    }
}

impl Dlb {
    /// The DRE thresholds in force: as configured, else [`DEFAULT_DRE_THRESHOLDS`].
    pub fn dre_thresholds_or_default(&self) -> [u8; 7] {
        self.dre_thresholds.unwrap_or(DEFAULT_DRE_THRESHOLDS)
    }

    /// Where quality bands 1…7 start, in percent of link load: the running
    /// sums of the levels in force (see [`Dlb::dre_thresholds`]).
    pub fn dre_band_starts(&self) -> [u16; 7] {
        let mut sum = 0u16;
        self.dre_thresholds_or_default().map(|w| {
            sum += u16::from(w);
            sum
        })
    }

    /// The decay factor in force: as configured, else [`DEFAULT_DECAY_FACTOR`].
    pub fn decay_factor_or_default(&self) -> u8 {
        self.decay_factor.unwrap_or(DEFAULT_DECAY_FACTOR)
    }

    /// The sampling interval in force, in nanoseconds: as configured, else
    /// [`DEFAULT_SAMPLING_INTERVAL_NS`].
    pub fn sampling_interval_ns_or_default(&self) -> u32 {
        self.sampling_interval_ns
            .unwrap_or(DEFAULT_SAMPLING_INTERVAL_NS)
    }
}

/// `ip load-sharing`: the ECMP hash inputs.
///
/// The default (no `ip load-sharing` line) hashes source and destination
/// addresses and ports, as NX-OS does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct LoadSharing {
    /// Hash the source address.
    pub src_addr: bool,
    /// Hash the destination address.
    pub dst_addr: bool,
    /// Hash the source port.
    pub src_port: bool,
    /// Hash the destination port.
    pub dst_port: bool,
    /// `concatenation`: hash the fields concatenated rather than folded.
    pub concatenation: bool,
    /// `rocev2-dest-qp` (railyard extension): also hash the RoCEv2 BTH
    /// destination QP, so RDMA connections between the same two hosts spread
    /// over members.
    pub rocev2_dest_qp: bool,
    /// `rotate N` (0-63): bits the hash is rotated by; `None` leaves the platform's choice.
    pub rotate: Option<u8>,
    /// `universal-id N`: the hash seed; `None` leaves the platform's choice.
    pub universal_id: Option<u32>,
}

impl Default for LoadSharing {
    fn default() -> Self {
        LoadSharing {
            src_addr: true,
            dst_addr: true,
            src_port: true,
            dst_port: true,
            concatenation: false,
            rocev2_dest_qp: false,
            rotate: None,
            universal_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_expands_to_eight_dscp_values() {
        assert_eq!(Match::Precedence(1 << 3).dscp_set(), 0xff << 24);
        assert_eq!(Match::Precedence(0x81).dscp_set(), 0xff | (0xff << 56));
        assert_eq!(Match::Cos(8).dscp_set(), 0);
    }

    #[test]
    fn acl_first_match_decides_and_no_match_denies() {
        let key = FlowKey {
            protocol: 17,
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.1.1".parse().unwrap(),
            src_port: Some(50000),
            dst_port: Some(4791),
            dscp: 24,
        };
        let entry = |seq, permit, dst_port| AclEntry {
            seq,
            permit,
            protocol: Some(17),
            src: None,
            dst: Some("10.0.1.0/24".parse().unwrap()),
            src_port: None,
            dst_port,
            dscp: None,
            unevaluated: None,
        };
        let acl = AccessList {
            name: "ROCE".into(),
            entries: vec![
                entry(10, false, Some(PortMatch::Eq(53.into()))),
                entry(20, true, Some(PortMatch::Range(4791.into(), 4791.into()))),
            ],
        };
        assert!(acl.permits(&key));
        let deny_first = AccessList {
            name: "X".into(),
            entries: vec![entry(10, false, None), entry(20, true, None)],
        };
        assert!(!deny_first.permits(&key));
        assert!(!AccessList {
            name: "E".into(),
            entries: vec![]
        }
        .permits(&key));
        assert!(PortMatch::Gt(1023.into()).matches(1024) && !PortMatch::Lt(10.into()).matches(10));
        assert!(PortMatch::Neq(1.into()).matches(2));
        assert_eq!(
            PortMatch::Range(1.into(), 2.into()).to_string(),
            "range 1 2"
        );
    }

    #[test]
    fn class_names_and_presets() {
        assert_eq!(Direction::Egress.class_name(0), "c-out-8q-q-default");
        assert_eq!(Direction::Egress.class_name(3), "c-out-8q-q3");
        assert_eq!(Direction::Ingress.class_name(0), "c-in-q-default");
        assert_eq!(Direction::Ingress.class_name(7), "c-in-q7");
        let w = WredPreset::MeshOptimized.wred(true);
        assert_eq!(w.min, Threshold::Bytes(150 * 1024));
        assert!(w.ecn && w.preset == Some(WredPreset::MeshOptimized));
        // The documented values, the only place railyard defines them.
        let b = WredPreset::BurstOptimized.wred(false);
        assert_eq!(
            (b.min, b.max),
            (
                Threshold::Bytes(950 * KBYTE),
                Threshold::Bytes(3000 * KBYTE)
            )
        );
        assert_eq!(w.max, Threshold::Bytes(1536 * KBYTE));
        for (w, ecn) in [(b, false), (w, true)] {
            assert_eq!((w.drop_probability, w.weight, w.ecn), (7, 0, ecn));
        }
        assert!(Threshold::Bytes(1).same_unit(Threshold::Bytes(9)));
        assert!(!Threshold::Bytes(1).same_unit(Threshold::Packets(1)));
    }

    #[test]
    fn dlb_defaults_in_force() {
        let mut d = Dlb::default();
        assert!(d.load_awareness);
        assert_eq!(d.flowlet_table_size, DEFAULT_FLOWLET_TABLE_SIZE);
        assert!(DEFAULT_FLOWLET_TABLE_SIZE.is_power_of_two());
        assert_eq!(d.dre_thresholds_or_default(), DEFAULT_DRE_THRESHOLDS);
        // The default levels are widths whose band starts are the former
        // absolute edges: eight equal bands.
        assert_eq!(d.dre_band_starts(), [12, 25, 37, 50, 62, 75, 87]);
        assert_eq!(d.decay_factor_or_default(), DEFAULT_DECAY_FACTOR);
        assert_eq!(
            d.sampling_interval_ns_or_default(),
            DEFAULT_SAMPLING_INTERVAL_NS
        );
        // The time constant the defaults give is well under the flowlet aging.
        let tau_ns = (1u32 << DEFAULT_DECAY_FACTOR) * DEFAULT_SAMPLING_INTERVAL_NS;
        assert_eq!(tau_ns, 64_000);
        assert!(tau_ns < DEFAULT_FLOWLET_AGING_US * 1000);
        d.dre_thresholds = Some([1, 2, 3, 4, 5, 6, 7]);
        d.decay_factor = Some(9);
        d.sampling_interval_ns = Some(256);
        assert_eq!(d.dre_thresholds_or_default(), [1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(d.dre_band_starts(), [1, 3, 6, 10, 15, 21, 28]);
        assert_eq!(d.decay_factor_or_default(), 9);
        assert_eq!(d.sampling_interval_ns_or_default(), 256);
    }
}
