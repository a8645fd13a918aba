//! The compiled switch model: plain data the dataplane runs on.
//!
//! The control plane turns configuration text into this form; the dataplane
//! never sees text. Every field has a usable default so tests can build a
//! model by hand.
//!
//! # QoS
//!
//! Each interface carries its ingress classifier and its eight egress queues:
//!
//! * **Classification** (ingress, per interface), first answer wins:
//!   1. [`InterfaceModel::acl_rules`], in order: the first rule whose every
//!      term holds gives the qos-group (a short scan over a list built at
//!      configuration time; empty in the common case);
//!   2. [`InterfaceModel::cos_to_qos_group`], when set, indexed by the frame's
//!      802.1p priority (an untagged frame has priority 0, as NX-OS treats it);
//!   3. [`InterfaceModel::dscp_to_qos_group`], indexed by the DSCP.
//!
//!   With no rules and no CoS table this is one table lookup; unclassified
//!   traffic lands in qos-group 0 (the tables default to 0).
//! * **Egress**: qos-group N is served by queue N ([`InterfaceModel::queues`]).
//!   The queues share
//!   [`InterfaceModel::buffer_bytes`] (default [`DEFAULT_BUFFER_BYTES`]).
//!
//! The semantics of every QoS field (limits, WRED, scheduling, shaping) are
//! described in [`crate::qos`].

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub mod balance;
pub mod l2;
pub mod pfc;

use crate::wire::MacAddr;
pub use balance::{DlbMode, DlbModel, EcmpHashModel, LoadBalanceModel};
pub use l2::{Logical, MacTableModel, PortL2, StaticMac, VlanSet};
pub use pfc::{PeerResponse, PfcDelays, PfcModel, PgThresholds, WatchdogModel};

/// Index of an interface in [`SwitchModel::interfaces`].
pub type PortId = u16;

/// One interface: a physical port (routed, or a switchport when `l2` is
/// set), or a logical one (`logical`: an SVI or a port-channel).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceModel {
    /// Canonical name, e.g. `Ethernet1/1`.
    pub name: String,
    /// The interface's MAC: source of routed frames and ARP/ND answers.
    pub mac: MacAddr,
    /// IPv4 addresses with prefix lengths (each gives a connected route).
    pub ipv4: Vec<(Ipv4Addr, u8)>,
    /// IPv6 addresses with prefix lengths (each gives a connected route).
    pub ipv6: Vec<(Ipv6Addr, u8)>,
    /// IP MTU; larger packets are dropped with `mtu_exceeded`.
    pub mtu: u16,
    /// False when the interface is `shutdown`.
    pub admin_up: bool,
    /// Configured speed, enforced by the egress shaper when set.
    pub speed_mbps: Option<u32>,
    /// Static ARP entries (`ip arp`).
    pub static_arp: Vec<(Ipv4Addr, MacAddr)>,
    /// Static IPv6 neighbours (`ipv6 neighbor`).
    pub static_nd: Vec<(Ipv6Addr, MacAddr)>,
    /// DSCP → qos-group, the ingress classification table (all 0 until a
    /// `service-policy type qos input` says otherwise).
    pub dscp_to_qos_group: [u8; 64],
    /// 802.1p priority → qos-group, for a policy that classifies by CoS; when
    /// set it decides instead of the DSCP table (untagged frames count as
    /// priority 0).
    pub cos_to_qos_group: Option<[u8; 8]>,
    /// Ordered classification rules for what the tables cannot say (access
    /// groups, DSCP together with CoS, class order across kinds); evaluated
    /// before the tables, first match wins.
    pub acl_rules: Vec<AclRuleModel>,
    /// The eight egress queues; index = queue = qos-group.
    pub queues: [QueueModel; 8],
    /// Bytes of packet buffer the eight egress queues share (a railyard
    /// extension; NX-OS sizes buffers per platform).
    pub buffer_bytes: u64,
    /// Priority flow control: lossless priorities, ingress thresholds,
    /// PAUSE handling ([`crate::pfc`] describes the semantics and defaults).
    pub pfc: PfcModel,
    /// A switchport's VLANs (also a switched port-channel's); `None`: routed.
    pub l2: Option<PortL2>,
    /// An SVI or port-channel: no backend of its own (see [`l2`]).
    pub logical: Option<Logical>,
    /// The port-channel (its port number) this physical port is a member
    /// of: frames it receives count as the port-channel's.
    pub member_of: Option<PortId>,
}

impl InterfaceModel {
    /// An up interface with the given name and MAC, no addresses, MTU 1500.
    pub fn new(name: &str, mac: MacAddr) -> Self {
        InterfaceModel {
            name: name.to_string(),
            mac,
            ipv4: Vec::new(),
            ipv6: Vec::new(),
            mtu: 1500,
            admin_up: true,
            speed_mbps: None,
            static_arp: Vec::new(),
            static_nd: Vec::new(),
            dscp_to_qos_group: [0; 64],
            cos_to_qos_group: None,
            acl_rules: Vec::new(),
            queues: [QueueModel::default(); 8],
            buffer_bytes: DEFAULT_BUFFER_BYTES,
            pfc: PfcModel::default(),
            l2: None,
            logical: None,
            member_of: None,
        }
    }
}

/// Default egress buffer of one port, shared by its eight queues: 8 MiB, so
/// that one congested queue (which the default dynamic limit lets use half
/// of it) can reach the 3000 KB WRED maximum of the book's RoCEv2 policy
/// (about 650 µs of queueing at 100 Gb/s).
pub const DEFAULT_BUFFER_BYTES: u64 = 8 << 20;

/// The smallest frame a queue holds, in the unit queues count (the frame
/// without its FCS): 64 bytes on the wire.
pub const MIN_FRAME_BYTES: u64 = 60;

/// Pool buffers a switch keeps beyond one port buffer full of minimum-size
/// frames (see [`SwitchModel::pool_buffers`]): for receive bursts, hand-off
/// and transmit rings, threads' caches and the other ports' queues. The
/// whole pool was this size before egress queues were bounded by bytes.
pub const POOL_SPARE_BUFFERS: usize = 16 * 1024;

/// Default `queue-limit dynamic` value: alpha 1 (see [`QueueLimit::Dynamic`]),
/// so a lone congested queue can hold half the port buffer.
pub const DEFAULT_DYNAMIC_LIMIT: u8 = 7;

/// Bytes in one `kbytes` unit of a threshold (buffer sizes are binary).
pub const KBYTE: u64 = 1024;

/// A queue's tail-drop limit (`queue-limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many bytes queued.
    Bytes(u64),
    /// At most this many packets queued.
    Packets(u64),
    /// At most this percent of the port buffer.
    Percent(u8),
    /// Dynamic threshold: the queue may hold alpha × (free port buffer), with
    /// alpha = 2^(A − 7) for A = 0..=10 (1/128 … 8), the encoding Broadcom
    /// and SONiC use; A = 7 is alpha 1.
    Dynamic(u8),
}

/// The unit WRED thresholds are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdUnit {
    /// Queue depth in bytes.
    Bytes,
    /// Queue depth in packets.
    Packets,
}

/// Weighted random early detection, with or without ECN marking, on one queue.
///
/// The mark (or drop) probability is 0 below `min`, rises linearly to
/// `drop_probability_percent` at `max`, and is 100 % at or above `max`; it is
/// applied to the average depth, updated on every arrival as
/// avg += (depth − avg) / 2^`weight` (weight 0: the instantaneous depth).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WredModel {
    /// Average depth where marking starts.
    pub min: u64,
    /// Average depth where the probability reaches `drop_probability_percent`.
    pub max: u64,
    /// Unit of `min` and `max`.
    pub unit: ThresholdUnit,
    /// Percent marked (or dropped) at `max`, 0–100.
    pub drop_probability_percent: u8,
    /// Averaging weight W, 0–15.
    pub weight: u8,
    /// Mark ECN-capable packets CE instead of dropping them.
    pub ecn: bool,
}

/// How one egress queue is scheduled, limited and marked (one `class type
/// queuing c-out-8q-qN`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueModel {
    /// `priority level N`: strict priority, level 1 served first (1–8).
    pub priority_level: Option<u8>,
    /// `bandwidth remaining percent P`: the queue's DWRR weight among the
    /// non-priority queues (weights are relative; 0 means leftover capacity only).
    pub bandwidth_remaining_percent: Option<u8>,
    /// `bandwidth percent P`: a guaranteed minimum of P % of the port speed
    /// (ignored on a port without a speed); also the DWRR weight when
    /// `bandwidth_remaining_percent` is absent.
    pub bandwidth_percent: Option<u8>,
    /// A guaranteed minimum rate in bits per second (`bandwidth V unit`,
    /// `shape min`).
    pub min_bps: Option<u64>,
    /// `shape max`: the queue never sends faster than this, in bits per second.
    pub shape_max_bps: Option<u64>,
    /// Tail-drop limit.
    pub limit: QueueLimit,
    /// WRED / ECN.
    pub wred: Option<WredModel>,
}

impl Default for QueueModel {
    /// A plain DWRR queue of weight 0 with the default dynamic limit.
    fn default() -> Self {
        QueueModel {
            priority_level: None,
            bandwidth_remaining_percent: None,
            bandwidth_percent: None,
            min_bps: None,
            shape_max_bps: None,
            limit: QueueLimit::Dynamic(DEFAULT_DYNAMIC_LIMIT),
            wred: None,
        }
    }
}

/// A transport port condition of an access-list entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PortMatch {
    /// `eq N`.
    Eq(u16),
    /// `neq N`.
    Neq(u16),
    /// `lt N`: strictly below.
    Lt(u16),
    /// `gt N`: strictly above.
    Gt(u16),
    /// `range A B`, inclusive.
    Range(u16, u16),
}

impl PortMatch {
    /// Whether `port` satisfies the condition.
    #[inline]
    pub fn matches(self, port: u16) -> bool {
        match self {
            PortMatch::Eq(p) => port == p,
            PortMatch::Neq(p) => port != p,
            PortMatch::Lt(p) => port < p,
            PortMatch::Gt(p) => port > p,
            PortMatch::Range(a, b) => a <= port && port <= b,
        }
    }
}

/// One `permit` / `deny` line of an access list used for classification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AclEntryModel {
    /// `permit` (true) or `deny`.
    pub permit: bool,
    /// IP protocol number; `None` matches any.
    pub protocol: Option<u8>,
    /// Source prefix (address, length); `None` matches any.
    pub src: Option<(IpAddr, u8)>,
    /// Destination prefix (address, length); `None` matches any.
    pub dst: Option<(IpAddr, u8)>,
    /// Source port condition; only TCP and UDP packets with ports can match it.
    pub src_port: Option<PortMatch>,
    /// Destination port condition; only TCP and UDP packets with ports can match it.
    pub dst_port: Option<PortMatch>,
    /// Only packets with this DSCP.
    pub dscp: Option<u8>,
}

/// One condition of an [`AclRuleModel`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleTermModel {
    /// The DSCP is in the set (bit n = DSCP n).
    Dscp(u64),
    /// The 802.1p priority (0 when untagged) is in the set (bit n = priority n).
    Cos(u8),
    /// The access list permits the packet: its first matching entry decides,
    /// no match denies.
    Access(Vec<AclEntryModel>),
}

/// An ordered classification rule: when every term holds, the packet goes
/// to `qos_group`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclRuleModel {
    /// Conditions that must all hold (none: every packet matches).
    pub terms: Vec<RuleTermModel>,
    /// The qos-group of matching packets (0–7).
    pub qos_group: u8,
}

/// Where a static route sends traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NextHopModel {
    /// Through a gateway, optionally pinned to an interface.
    Gateway {
        /// The gateway's address.
        addr: IpAddr,
        /// The interface, when the route names one.
        port: Option<PortId>,
    },
    /// Directly out of an interface (the destination is on-link).
    Interface(PortId),
    /// Dropped (`Null0`).
    Discard,
}

/// A route; several next hops form an ECMP group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteModel {
    /// Destination prefix (host bits zero).
    pub prefix: IpAddr,
    /// Prefix length.
    pub len: u8,
    /// Next hops, in configuration order.
    pub next_hops: Vec<NextHopModel>,
    /// Where the route came from.
    pub source: RouteSource,
}

/// Where a route came from. The dataplane forwards every route alike; the
/// source is kept so `show ip route` can say who put a route there.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RouteSource {
    /// An `ip route` line of the configuration.
    #[default]
    Static,
    /// The kernel's routing table (see the control plane's `kernel_fib`),
    /// installed there by `protocol`: rtnetlink's `RTPROT_*` number, 186
    /// for BGP, 3 for `ip route` without `proto`.
    Kernel {
        /// The route's `RTPROT_*` number.
        protocol: u8,
    },
}

/// Everything the dataplane needs to forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchModel {
    /// The switch's name.
    pub hostname: String,
    /// Interfaces; a packet's port number is its index here.
    pub interfaces: Vec<InterfaceModel>,
    /// Static routes, and with kernel routing those the kernel has.
    pub routes: Vec<RouteModel>,
    /// Packets that may wait for one unresolved next hop.
    pub neighbor_queue_per_entry: usize,
    /// Packets that may wait for resolution across the whole switch.
    pub neighbor_queue_total: usize,
    /// Seed of the switch's pseudo-random choices (WRED), so a replay gives
    /// the same marks every time.
    pub random_seed: u64,
    /// How ECMP groups spread traffic: hash fields and seed, and DLB.
    pub load_balance: LoadBalanceModel,
    /// The MAC table of the switchports: size, aging, static entries.
    pub mac_table: MacTableModel,
}

/// The default [`SwitchModel::random_seed`].
pub const DEFAULT_RANDOM_SEED: u64 = 0x5241_494c_5941_5244;

impl SwitchModel {
    /// Puts `routes` ahead of the model's own, so that a route of the
    /// model for the same prefix (a configured `ip route`) wins: the FIB
    /// keeps the later of two routes for one prefix.
    pub fn add_routes_beneath(&mut self, routes: impl IntoIterator<Item = RouteModel>) {
        let own = std::mem::take(&mut self.routes);
        self.routes = routes.into_iter().chain(own).collect();
    }

    /// Buffers the packet pool of a switch built from this model needs so
    /// that its largest port buffer can fill with minimum-size frames and
    /// the rest of the switch still has [`POOL_SPARE_BUFFERS`]: an egress
    /// queue has no packet cap, so without them a queue of small packets
    /// would find the pool empty long before its byte limit. 156 195
    /// buffers for the default 8 MiB; a buffer is 9 472 bytes of address
    /// space, but the system provides pages only as buffers are first used
    /// (about 4 KiB each for a small frame), so a switch pays for the
    /// depth it has reached, not for the pool's size. At most the pool's
    /// own limit ([`crate::packet::MAX_BUFFERS`]).
    pub fn pool_buffers(&self) -> usize {
        let largest = self
            .interfaces
            .iter()
            .map(|i| i.buffer_bytes)
            .max()
            .unwrap_or(DEFAULT_BUFFER_BYTES);
        let full = largest.div_ceil(MIN_FRAME_BYTES);
        usize::try_from(full)
            .unwrap_or(usize::MAX)
            .saturating_add(POOL_SPARE_BUFFERS)
            .min(crate::packet::MAX_BUFFERS)
    }
}

impl Default for SwitchModel {
    fn default() -> Self {
        SwitchModel {
            hostname: "railyard".to_string(),
            interfaces: Vec::new(),
            routes: Vec::new(),
            neighbor_queue_per_entry: 16,
            neighbor_queue_total: 1024,
            random_seed: DEFAULT_RANDOM_SEED,
            load_balance: LoadBalanceModel::default(),
            mac_table: MacTableModel::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_holds_the_largest_port_buffer_of_minimum_size_frames() {
        let port = |bytes: u64| {
            let mut m = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 0, 1]));
            m.buffer_bytes = bytes;
            m
        };
        let mut model = SwitchModel::default();
        let default = model.pool_buffers();
        assert_eq!(default, 139_811 + POOL_SPARE_BUFFERS);
        model.interfaces = vec![port(DEFAULT_BUFFER_BYTES), port(DEFAULT_BUFFER_BYTES)];
        assert_eq!(
            model.pool_buffers(),
            default,
            "one port's buffer, not the sum"
        );
        // Every one of those frames has a buffer, with the spare left over.
        assert!(
            (model.pool_buffers() - POOL_SPARE_BUFFERS) as u64 * MIN_FRAME_BYTES
                >= DEFAULT_BUFFER_BYTES
        );
        model.interfaces.push(port(32 << 20));
        assert_eq!(model.pool_buffers(), 559_241 + POOL_SPARE_BUFFERS);
        model.interfaces.push(port(u64::MAX));
        assert_eq!(model.pool_buffers(), crate::packet::MAX_BUFFERS);
    }
}
