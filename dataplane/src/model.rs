//! The compiled switch model: plain data the dataplane runs on.
//!
//! The control plane turns configuration text into this form; the dataplane
//! never sees text. Every field has a usable default so tests can build a
//! model by hand.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::wire::MacAddr;

/// Index of an interface in [`SwitchModel::interfaces`].
pub type PortId = u16;

/// One routed interface.
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
    /// Per-queue limit in bytes (tail drop above it).
    pub queue_limit_bytes: u32,
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
            queue_limit_bytes: DEFAULT_QUEUE_LIMIT_BYTES,
        }
    }
}

/// Default per-queue byte limit until the QoS model sets one.
pub const DEFAULT_QUEUE_LIMIT_BYTES: u32 = 1 << 20;

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

/// A static route; several next hops form an ECMP group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteModel {
    /// Destination prefix (host bits zero).
    pub prefix: IpAddr,
    /// Prefix length.
    pub len: u8,
    /// Next hops, in configuration order.
    pub next_hops: Vec<NextHopModel>,
}

/// Everything the dataplane needs to forward.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchModel {
    /// The switch's name.
    pub hostname: String,
    /// Interfaces; a packet's port number is its index here.
    pub interfaces: Vec<InterfaceModel>,
    /// Static routes.
    pub routes: Vec<RouteModel>,
    /// Packets that may wait for one unresolved next hop.
    pub neighbor_queue_per_entry: usize,
    /// Packets that may wait for resolution across the whole switch.
    pub neighbor_queue_total: usize,
}

impl Default for SwitchModel {
    fn default() -> Self {
        SwitchModel {
            hostname: "railyard".to_string(),
            interfaces: Vec::new(),
            routes: Vec::new(),
            neighbor_queue_per_entry: 16,
            neighbor_queue_total: 1024,
        }
    }
}
