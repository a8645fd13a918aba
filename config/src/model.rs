//! The semantic model: what a configuration means, independent of how it was written.
//!
//! The dataplane and the control binary consume these types. Values are
//! canonical (interface names resolved from their aliases, MACs as bytes,
//! prefixes as address plus length). `line` fields record where an item was
//! first configured; they are provenance, not configuration, so equality of
//! [`Interface`] and [`StaticRoute`] ignores them: a configuration re-parsed
//! from its printed form compares equal to the original.

use std::collections::BTreeSet;
use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use serde::Serialize;

use crate::bgp::{Afi, BfdInterval, Bgp, PrefixList, RouteMap};
use crate::diag::Source;
use crate::l2::{ChannelGroup, LacpRate, MacTable, PortChannel, Svi, Switchport, Vlan, Vlans};
use crate::lldp::Lldp;
use crate::monitor::MonitorSession;
pub use crate::name::InterfaceName;
pub(crate) use crate::name::{parse_interface_spec, IfSpec};
pub use crate::prefix::{IpPrefix, Ipv4Prefix, Ipv6Prefix};
use crate::qos::{
    AccessList, ClassMap, DcbxVersion, Dlb, GroupClassMap, LoadSharing, NetworkQosPolicy,
    PfcDelays, PfcMode, PfcWatchdogTimers, QosPolicy, QueuingPolicy, SystemQos,
};

pub use crate::mtu::{DEFAULT_MTU, MAX_MTU, MIN_MTU};

/// A whole switch configuration: what the dataplane is built from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Config {
    /// `hostname` / `switchname`, if given.
    pub hostname: Option<String>,
    /// Names from `feature NAME` lines (e.g. `lldp`), for later stages to consult.
    pub features: BTreeSet<String>,
    /// Ethernet interfaces in order of first appearance.
    pub interfaces: Vec<Interface>,
    /// `vlan N` with their names, sorted by ID; VLAN 1 is always there.
    pub vlans: Vlans,
    /// VLAN interfaces (`interface Vlan10`), sorted by VLAN.
    pub svis: Vec<Svi>,
    /// Port-channels, sorted by number: those written as `interface
    /// port-channelN` and those a member's `channel-group N` created.
    pub port_channels: Vec<PortChannel>,
    /// `mac address-table aging-time` and static entries.
    pub mac_table: MacTable,
    /// `lacp system-priority N`; `None`: the default, 32768.
    pub lacp_system_priority: Option<u16>,
    /// Static routes in file order; several with one prefix form an ECMP group.
    pub routes: Vec<StaticRoute>,
    /// `ip access-list` sections, in order of first appearance.
    pub access_lists: Vec<AccessList>,
    /// `class-map type qos` sections, in order of first appearance.
    pub class_maps: Vec<ClassMap>,
    /// `class-map type queuing NAME` sections (older Nexus 3000/5000 dialect), in order.
    pub queuing_class_maps: Vec<GroupClassMap>,
    /// `class-map type network-qos NAME` sections (older Nexus 3000/5000 dialect), in order.
    pub network_qos_class_maps: Vec<GroupClassMap>,
    /// `policy-map type qos` sections, in order of first appearance.
    pub qos_policies: Vec<QosPolicy>,
    /// `policy-map type queuing` sections, in order of first appearance.
    pub queuing_policies: Vec<QueuingPolicy>,
    /// `policy-map type network-qos` sections, in order of first appearance.
    pub network_qos_policies: Vec<NetworkQosPolicy>,
    /// The `system qos` section.
    pub system_qos: SystemQos,
    /// Global `priority-flow-control watch-dog-interval on|off`; `None` when not written (off).
    pub pfc_watchdog_interval: Option<bool>,
    /// Global PFC watchdog timers (`priority-flow-control watch-dog interval …` and multipliers).
    pub pfc_watchdog: PfcWatchdogTimers,
    /// `hardware profile dlb`, when present.
    pub dlb: Option<Dlb>,
    /// `ip load-sharing …` (the NX-OS default when absent).
    pub load_sharing: LoadSharing,
    /// `lldp timer|holdtime|reinit|tlv-select|tlv custom` and whether `feature lldp` is on.
    pub lldp: Lldp,
    /// railyard's `buffer-size N UNIT` extension: the shared packet buffer, in bytes.
    pub buffer_bytes: Option<u64>,
    /// railyard's `priority-flow-control pause-quanta N` extension: the quanta
    /// of the PFC pause frames the switch sends (default 65535).
    pub pfc_pause_quanta: Option<u16>,
    /// railyard's `priority-flow-control watch-dog ingress forward`
    /// extension: traffic of a lossless priority arriving on a port whose
    /// queue for it the watchdog has shut is forwarded as lossy instead of
    /// dropped (NX-OS drops it, the default).
    pub pfc_watchdog_ingress_forward: bool,
    /// railyard's `dpdk eal-args ARG…` extension: the arguments DPDK's EAL
    /// is initialised with when an interface is bound to `dpdk` (empty:
    /// railyard's defaults). Only a build with the `dpdk` feature uses them.
    pub dpdk_eal_args: Vec<String>,
    /// `router bgp ASN`, when present.
    pub bgp: Option<Bgp>,
    /// `route-map NAME permit|deny SEQ` entries, in order of first appearance.
    pub route_maps: Vec<RouteMap>,
    /// `ip prefix-list` and `ipv6 prefix-list`, in order of first appearance.
    pub prefix_lists: Vec<PrefixList>,
    /// The global `bfd interval … min_rx … multiplier …`; `None`: NX-OS's default.
    pub bfd_interval: Option<BfdInterval>,
    /// `monitor session N` (local SPAN), sorted by session number.
    pub monitor_sessions: Vec<MonitorSession>,
    /// The file this was parsed from, for diagnostics of later stages
    /// (provenance: ignored by equality, not serialized).
    #[serde(skip)]
    pub source: Source,
}

impl Config {
    /// Find an interface by any accepted spelling (`Ethernet1/1`, `eth1/1`, `e1/1`, ...).
    pub fn interface(&self, name: &str) -> Option<&Interface> {
        let name: InterfaceName = name.parse().ok()?;
        self.interface_by_name(&name)
    }

    /// Find an interface by its parsed name.
    pub fn interface_by_name(&self, name: &InterfaceName) -> Option<&Interface> {
        self.interfaces.iter().find(|i| i.name == *name)
    }

    /// The class-map named `name`.
    pub fn class_map(&self, name: &str) -> Option<&ClassMap> {
        self.class_maps.iter().find(|c| c.name == name)
    }

    /// The access list named `name`.
    pub fn access_list(&self, name: &str) -> Option<&AccessList> {
        self.access_lists.iter().find(|a| a.name == name)
    }

    /// The `policy-map type qos` named `name`.
    pub fn qos_policy(&self, name: &str) -> Option<&QosPolicy> {
        self.qos_policies.iter().find(|p| p.name == name)
    }

    /// The `policy-map type queuing` named `name`.
    pub fn queuing_policy(&self, name: &str) -> Option<&QueuingPolicy> {
        self.queuing_policies.iter().find(|p| p.name == name)
    }

    /// The `policy-map type network-qos` named `name`.
    pub fn network_qos_policy(&self, name: &str) -> Option<&NetworkQosPolicy> {
        self.network_qos_policies.iter().find(|p| p.name == name)
    }

    /// The prefix-list of family `afi` named `name` (the two families are
    /// separate namespaces, as on NX-OS).
    pub fn prefix_list(&self, afi: Afi, name: &str) -> Option<&PrefixList> {
        self.prefix_lists
            .iter()
            .find(|p| p.afi == afi && p.name == name)
    }

    /// Whether any `route-map NAME …` entry exists.
    pub fn has_route_map(&self, name: &str) -> bool {
        self.route_maps.iter().any(|r| r.name == name)
    }

    /// Routes for one prefix, in file order: the members of its ECMP group.
    pub fn routes_for(&self, prefix: &IpPrefix) -> impl Iterator<Item = &StaticRoute> + '_ {
        let prefix = *prefix;
        self.routes.iter().filter(move |r| r.prefix == prefix)
    }
}

/// One Ethernet interface and everything configured under it.
#[derive(Debug, Clone, Serialize)]
pub struct Interface {
    /// Canonical name.
    pub name: InterfaceName,
    /// `no switchport`: a Layer 3 (routed) port. `false` is a Layer 2 switchport.
    pub routed: bool,
    /// `shutdown`. Defaults to `false` (up), unlike real NX-OS where
    /// front-panel ports start shut: lab users expect a configured port to pass traffic.
    pub shutdown: bool,
    /// `description TEXT`.
    pub description: Option<String>,
    /// `vrf member NAME`: the VRF the port routes in; `None` is the default
    /// VRF (as is `vrf member default`). railyard forwards in the default
    /// VRF only, so a port in another one is left out of forwarding rather
    /// than leaking a tenant subnet into the underlay.
    pub vrf: Option<String>,
    /// IPv4 addresses; the first is the primary, the rest are `secondary`.
    pub ipv4: Vec<Ipv4Prefix>,
    /// IPv6 addresses.
    pub ipv6: Vec<Ipv6Prefix>,
    /// Layer 3 MTU in bytes ([`DEFAULT_MTU`] unless set).
    pub mtu: u16,
    /// `mac-address`: overrides the port's own MAC.
    pub mac: Option<[u8; 6]>,
    /// `speed` in Mb/s; `None` is `speed auto`.
    pub speed_mbps: Option<u32>,
    /// Where the port's frames come from and go to (railyard's `bind` extension).
    pub bind: Option<Bind>,
    /// Receive ring of an `af-packet` or `af-xdp` binding in MiB (`bind
    /// af-packet|af-xdp IF ring MIB`); `None`: the backend's default. How
    /// long the port may go unread (a descheduled worker) before the kernel
    /// drops.
    pub rx_ring_mib: Option<u32>,
    /// How an `af-packet` binding's ring hands frames over (`bind af-packet
    /// IF receive frames|blocks`); `None`: the backend's default (frames).
    pub rx_handover: Option<RxHandover>,
    /// Static ARP entries (`ip arp A.B.C.D MAC`), in order of configuration.
    pub arp: Vec<(Ipv4Addr, [u8; 6])>,
    /// Static IPv6 neighbours (`ipv6 neighbor ADDR MAC`), in order of configuration.
    pub nd: Vec<(Ipv6Addr, [u8; 6])>,
    /// `service-policy type qos input NAME`: overrides the `system qos` classifier.
    pub service_policy_qos_input: Option<String>,
    /// `service-policy type queuing output NAME`: overrides the `system qos` egress policy.
    pub service_policy_queuing_output: Option<String>,
    /// `service-policy type queuing input NAME`: overrides the `system qos` ingress policy.
    pub service_policy_queuing_input: Option<String>,
    /// `priority-flow-control mode auto|on|off` (default auto).
    pub pfc_mode: PfcMode,
    /// `send-tlv` after the PFC mode: advertise the PFC TLV even when the mode is forced.
    pub pfc_send_tlv: bool,
    /// `priority-flow-control watch-dog-interval on|off`; `None` follows the global setting.
    pub pfc_watchdog: Option<bool>,
    /// railyard's `priority-flow-control cable-length`, `peer-response` and
    /// `software-response`: the delays a pause takes on this link, which the
    /// default headroom covers (unset terms take the standard values).
    pub pfc_delays: PfcDelays,
    /// `[no] lldp transmit` (default true).
    pub lldp_transmit: bool,
    /// `[no] lldp receive` (default true).
    pub lldp_receive: bool,
    /// `lldp dcbx version ieee|cee|auto` (railyard extension, default auto):
    /// the DCBX flavour the port speaks, so a CEE-only peer can be served.
    pub dcbx_version: DcbxVersion,
    /// `bfd interval … min_rx … multiplier …` on the interface; `None`
    /// follows the global setting.
    pub bfd_interval: Option<BfdInterval>,
    /// The VLAN settings of a Layer 2 port (defaults when routed).
    pub switchport: Switchport,
    /// `channel-group N [mode …]`: the port-channel the port is a member of.
    pub channel_group: Option<ChannelGroup>,
    /// `lacp rate fast|normal` (default normal).
    pub lacp_rate: LacpRate,
    /// `lacp port-priority N`; `None`: the default, 32768.
    pub lacp_port_priority: Option<u16>,
    /// Line of the first `interface` command naming this interface (0 if built in code).
    pub line: usize,
}

impl Interface {
    /// An interface with every setting at its default, first seen on `line`.
    pub fn new(name: InterfaceName, line: usize) -> Self {
        Interface {
            name,
            routed: false,
            shutdown: false,
            description: None,
            vrf: None,
            ipv4: Vec::new(),
            ipv6: Vec::new(),
            mtu: DEFAULT_MTU,
            mac: None,
            speed_mbps: None,
            bind: None,
            rx_ring_mib: None,
            rx_handover: None,
            arp: Vec::new(),
            nd: Vec::new(),
            service_policy_qos_input: None,
            service_policy_queuing_output: None,
            service_policy_queuing_input: None,
            pfc_mode: PfcMode::Auto,
            pfc_send_tlv: false,
            pfc_watchdog: None,
            pfc_delays: PfcDelays::default(),
            lldp_transmit: true,
            lldp_receive: true,
            dcbx_version: DcbxVersion::Auto,
            bfd_interval: None,
            switchport: Switchport::default(),
            channel_group: None,
            lacp_rate: LacpRate::Normal,
            lacp_port_priority: None,
            line,
        }
    }

    /// The primary IPv4 address, if any.
    pub fn primary_ipv4(&self) -> Option<&Ipv4Prefix> {
        self.ipv4.first()
    }
}

/// Equality of configuration, ignoring `line` (provenance).
impl PartialEq for Interface {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.routed == other.routed
            && self.shutdown == other.shutdown
            && self.description == other.description
            && self.ipv4 == other.ipv4
            && self.ipv6 == other.ipv6
            && self.mtu == other.mtu
            && self.mac == other.mac
            && self.speed_mbps == other.speed_mbps
            && self.bind == other.bind
            && self.rx_ring_mib == other.rx_ring_mib
            && self.rx_handover == other.rx_handover
            && self.arp == other.arp
            && self.nd == other.nd
            && self.service_policy_qos_input == other.service_policy_qos_input
            && self.service_policy_queuing_output == other.service_policy_queuing_output
            && self.service_policy_queuing_input == other.service_policy_queuing_input
            && self.pfc_mode == other.pfc_mode
            && self.pfc_send_tlv == other.pfc_send_tlv
            && self.pfc_watchdog == other.pfc_watchdog
            && self.pfc_delays == other.pfc_delays
            && self.lldp_transmit == other.lldp_transmit
            && self.lldp_receive == other.lldp_receive
            && self.dcbx_version == other.dcbx_version
            && self.bfd_interval == other.bfd_interval
            && self.switchport == other.switchport
            && self.channel_group == other.channel_group
            && self.lacp_rate == other.lacp_rate
            && self.lacp_port_priority == other.lacp_port_priority
    }
}

impl Eq for Interface {}

/// How an AF_PACKET receive ring hands frames to the switch: one at a
/// time, at once (low latency, what a lab wants), or a block at a time
/// (fewer handshakes at high rates, up to a millisecond of delay at low ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RxHandover {
    /// Each frame as soon as the kernel has written it.
    Frames,
    /// Blocks of frames, when full or after 1 ms.
    Blocks,
}

impl RxHandover {
    /// The keyword after `receive`.
    pub fn keyword(self) -> &'static str {
        match self {
            RxHandover::Frames => "frames",
            RxHandover::Blocks => "blocks",
        }
    }
}

/// Which backend carries an interface's frames (`bind KIND TARGET`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum Bind {
    /// `bind af-packet IFNAME`: a Linux interface through a packet socket.
    AfPacket(String),
    /// `bind tap IFNAME`: a TAP device railyard creates or opens.
    Tap(String),
    /// `bind pcap FILE`: replay a capture file as the port's input.
    Pcap(PathBuf),
    /// `bind ring NAME`: an in-process ring, for tests and benchmarks.
    Ring(String),
    /// `bind dpdk PORT`: a DPDK port id or vdev string.
    Dpdk(String),
    /// `bind af-xdp IFNAME`: a Linux interface through an AF_XDP socket.
    AfXdp(String),
}

impl Bind {
    /// Every keyword `bind` accepts, in the order they are documented.
    pub const KINDS: [&'static str; 6] = ["af-packet", "tap", "pcap", "ring", "dpdk", "af-xdp"];

    /// The keyword that selects this backend.
    pub fn kind(&self) -> &'static str {
        match self {
            Bind::AfPacket(_) => "af-packet",
            Bind::Tap(_) => "tap",
            Bind::Pcap(_) => "pcap",
            Bind::Ring(_) => "ring",
            Bind::Dpdk(_) => "dpdk",
            Bind::AfXdp(_) => "af-xdp",
        }
    }

    /// The backend's target as written (interface name, file, ring or port).
    pub fn target(&self) -> String {
        match self {
            Bind::AfPacket(s) | Bind::Tap(s) | Bind::Ring(s) | Bind::Dpdk(s) | Bind::AfXdp(s) => {
                s.clone()
            }
            Bind::Pcap(p) => p.display().to_string(),
        }
    }

    /// Build a binding from its keyword and target; `None` for an unknown keyword.
    pub fn from_parts(kind: &str, target: &str) -> Option<Bind> {
        let t = target.to_owned();
        Some(match kind.to_ascii_lowercase().as_str() {
            "af-packet" => Bind::AfPacket(t),
            "tap" => Bind::Tap(t),
            "pcap" => Bind::Pcap(PathBuf::from(t)),
            "ring" => Bind::Ring(t),
            "dpdk" => Bind::Dpdk(t),
            "af-xdp" => Bind::AfXdp(t),
            _ => return None,
        })
    }

    /// The resource two bindings must not share: (what it is, its name).
    ///
    /// `af-packet`, `af-xdp` and `tap` all claim a kernel interface name.
    pub fn resource(&self) -> (&'static str, String) {
        let what = match self {
            Bind::AfPacket(_) | Bind::AfXdp(_) | Bind::Tap(_) => "kernel interface",
            Bind::Pcap(_) => "pcap file",
            Bind::Ring(_) => "ring",
            Bind::Dpdk(_) => "DPDK port",
        };
        (what, self.target())
    }
}

impl fmt::Display for Bind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind(), self.target())
    }
}

/// Where a static route sends matching packets.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub enum RouteTarget {
    /// Forward to a next-hop router, optionally pinned to an outgoing interface.
    NextHop {
        /// The next hop's address (same family as the prefix).
        addr: IpAddr,
        /// `ip route P IFNAME NEXTHOP`: the interface to reach it through.
        interface: Option<InterfaceName>,
    },
    /// `ip route P IFNAME`: the destination is directly on this interface.
    Interface(InterfaceName),
    /// `ip route P Null0`: discard.
    Null0,
}

impl fmt::Display for RouteTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteTarget::NextHop {
                addr,
                interface: None,
            } => write!(f, "{addr}"),
            RouteTarget::NextHop {
                addr,
                interface: Some(i),
            } => write!(f, "{i} {addr}"),
            RouteTarget::Interface(i) => write!(f, "{i}"),
            RouteTarget::Null0 => f.write_str("Null0"),
        }
    }
}

/// One `ip route` / `ipv6 route` line.
#[derive(Debug, Clone, Serialize)]
pub struct StaticRoute {
    /// Destination, host bits clear.
    pub prefix: IpPrefix,
    /// Where matching packets go.
    pub target: RouteTarget,
    /// Line the route was configured on (0 if built in code).
    pub line: usize,
    /// Column of the target token on that line (0 if built in code), for
    /// diagnostics about the target.
    pub col: usize,
}

/// Equality of configuration, ignoring `line` (provenance).
impl PartialEq for StaticRoute {
    fn eq(&self, other: &Self) -> bool {
        self.prefix == other.prefix && self.target == other.target
    }
}

impl Eq for StaticRoute {}

/// The Layer-2 parts of a configuration, by number.
impl Config {
    /// The VLAN with ID `id`, if it exists (VLAN 1 always does).
    pub fn vlan(&self, id: u16) -> Option<&Vlan> {
        self.vlans.get(id)
    }

    /// The VLAN interface of VLAN `vlan`, if configured.
    pub fn svi(&self, vlan: u16) -> Option<&Svi> {
        self.svis.iter().find(|s| s.vlan == vlan)
    }

    /// Port-channel `id`, if it exists (written, or created by a member's `channel-group`).
    pub fn port_channel(&self, id: u16) -> Option<&PortChannel> {
        self.port_channels.iter().find(|p| p.id == id)
    }

    /// The members of port-channel `id` (the Ethernet ports with
    /// `channel-group id`), ordered by name.
    pub fn port_channel_members(&self, id: u16) -> Vec<&Interface> {
        let mut members: Vec<&Interface> = self
            .interfaces
            .iter()
            .filter(|i| i.channel_group.is_some_and(|g| g.id == id))
            .collect();
        members.sort_by_key(|i| i.name);
        members
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::ValueError;

    fn name(s: &str) -> Result<InterfaceName, ValueError> {
        s.parse()
    }

    #[test]
    fn interface_aliases_resolve_to_one_name() {
        let want = InterfaceName::new(1, 1);
        for s in [
            "Ethernet1/1",
            "ethernet1/1",
            "eth1/1",
            "e1/1",
            "Eth1/1",
            "ETHERNET 1/1",
            "Ether1/1",
        ] {
            assert_eq!(name(s), Ok(want), "{s}");
        }
        assert_eq!(name("Ethernet1/1/3"), Ok(InterfaceName::breakout(1, 1, 3)));
        assert_eq!(want.to_string(), "Ethernet1/1");
        assert_eq!(
            InterfaceName::breakout(2, 49, 4).to_string(),
            "Ethernet2/49/4"
        );
    }

    #[test]
    fn interface_names_order_by_numbers() {
        let mut v = [
            InterfaceName::new(1, 10),
            InterfaceName::breakout(1, 2, 1),
            InterfaceName::new(2, 1),
            InterfaceName::new(1, 2),
            InterfaceName::new(1, 9),
        ];
        v.sort();
        let s: Vec<String> = v.iter().map(|n| n.to_string()).collect();
        assert_eq!(
            s,
            [
                "Ethernet1/2",
                "Ethernet1/2/1",
                "Ethernet1/9",
                "Ethernet1/10",
                "Ethernet2/1"
            ]
        );
    }

    #[test]
    fn interface_name_errors() {
        assert!(name("Ethernet1/1-4")
            .unwrap_err()
            .message()
            .contains("range"));
        assert!(name("loopback0")
            .unwrap_err()
            .message()
            .contains("loopback"));
        assert!(name("Ethernet1/0")
            .unwrap_err()
            .message()
            .contains("start at 1"));
        assert!(name("Ethernet1/300")
            .unwrap_err()
            .message()
            .contains("out of range"));
        assert!(name("Ethernet1").is_err());
        assert!(name("Ethernet1/1/1/1").is_err());
        assert!(name("Ethernet")
            .unwrap_err()
            .message()
            .contains("missing module/port"));
        assert!(name("foo1/1")
            .unwrap_err()
            .message()
            .contains("unknown interface type `foo`"));
        assert!(name("1/1")
            .unwrap_err()
            .message()
            .contains("missing interface type"));
    }

    #[test]
    fn interface_specs_expand_ranges_and_recognise_other_types() {
        let names = |s| match parse_interface_spec(s) {
            Ok(IfSpec::Ethernet(v)) => v.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            names("e1/1-3"),
            ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"]
        );
        assert_eq!(
            names("Ethernet1/49/1-2"),
            ["Ethernet1/49/1", "Ethernet1/49/2"]
        );
        assert_eq!(names("e1/5-5"), ["Ethernet1/5"]);
        assert!(parse_interface_spec("e1/4-2")
            .unwrap_err()
            .message()
            .contains("ends (2) before it starts (4)"));
        for (s, kind) in [
            ("loopback0", "loopback"),
            ("lo0", "loopback"),
            ("mgmt0", "mgmt"),
            ("nve1", "nve"),
            ("Ethernet1/1.100", "Ethernet subinterface"),
            ("po10.100", "port-channel subinterface"),
        ] {
            assert_eq!(parse_interface_spec(s), Ok(IfSpec::Other(kind)), "{s}");
        }
        assert!(parse_interface_spec("loopback").is_err());
        assert_eq!(parse_interface_spec("Vlan10"), Ok(IfSpec::Vlan(vec![10])));
        assert_eq!(
            parse_interface_spec("vlan10-12"),
            Ok(IfSpec::Vlan(vec![10, 11, 12]))
        );
        assert_eq!(
            parse_interface_spec("po10"),
            Ok(IfSpec::PortChannel(vec![10]))
        );
        assert_eq!(
            parse_interface_spec("port-channel4096"),
            Ok(IfSpec::PortChannel(vec![4096]))
        );
        for (s, message) in [
            ("Vlan0", "invalid interface `Vlan0`: 0 is out of range"),
            (
                "Vlan4095",
                "invalid interface `Vlan4095`: 4095 is out of range",
            ),
            ("po4097", "invalid interface `po4097`: 4097 is out of range"),
            ("Vlan1x", "invalid interface `Vlan1x`"),
            ("po3-1", "range `po3-1` ends (1) before it starts (3)"),
        ] {
            let e = parse_interface_spec(s).unwrap_err();
            assert_eq!(e.message(), message, "{s}");
        }
        assert_eq!(
            parse_interface_spec("Vlan0").unwrap_err().hint(),
            Some("Vlan interfaces are numbered 1-4094, e.g. Vlan10")
        );
    }

    #[test]
    fn config_finds_interfaces_by_any_alias() {
        let mut c = Config::default();
        c.interfaces
            .push(Interface::new(InterfaceName::new(1, 2), 3));
        assert!(c.interface("e1/2").is_some());
        assert!(c.interface("Ethernet1/2").is_some());
        assert!(c.interface("e1/3").is_none());
        assert!(c.interface("bogus").is_none());
    }

    #[test]
    fn ipv4_prefix_arithmetic() {
        let p: Ipv4Prefix = "10.1.2.3/24".parse().unwrap();
        assert_eq!(p.network().to_string(), "10.1.2.0/24");
        assert_eq!(p.netmask(), Ipv4Addr::new(255, 255, 255, 0));
        assert_eq!(p.broadcast(), Ipv4Addr::new(10, 1, 2, 255));
        assert!(p.contains(Ipv4Addr::new(10, 1, 2, 200)));
        assert!(!p.contains(Ipv4Addr::new(10, 1, 3, 1)));
        let all: Ipv4Prefix = "0.0.0.0/0".parse().unwrap();
        assert!(all.contains(Ipv4Addr::new(192, 0, 2, 1)));
        assert_eq!(all.netmask(), Ipv4Addr::UNSPECIFIED);
        let host: Ipv4Prefix = "10.0.0.1/32".parse().unwrap();
        assert!(host.contains(Ipv4Addr::new(10, 0, 0, 1)));
        assert!(!host.contains(Ipv4Addr::new(10, 0, 0, 2)));
        assert!(p.overlaps(&"10.0.0.0/8".parse().unwrap()));
        assert!(!p.overlaps(&"10.1.3.0/24".parse().unwrap()));
        // Out-of-range lengths built by hand saturate instead of panicking.
        let wild = Ipv4Prefix {
            addr: Ipv4Addr::new(10, 0, 0, 1),
            len: 99,
        };
        assert!(wild.contains(Ipv4Addr::new(10, 0, 0, 1)));
        assert_eq!(Ipv4Prefix::new(Ipv4Addr::LOCALHOST, 33), None);
    }

    #[test]
    fn ipv6_prefix_arithmetic() {
        let p: Ipv6Prefix = "2001:db8:0:1::5/64".parse().unwrap();
        assert_eq!(p.network().to_string(), "2001:db8:0:1::/64");
        assert!(p.contains("2001:db8:0:1::99".parse().unwrap()));
        assert!(!p.contains("2001:db8:0:2::1".parse().unwrap()));
        assert!("::/0"
            .parse::<Ipv6Prefix>()
            .unwrap()
            .contains(Ipv6Addr::LOCALHOST));
        assert_eq!(Ipv6Prefix::new(Ipv6Addr::LOCALHOST, 129), None);
    }

    #[test]
    fn prefix_errors_explain_themselves() {
        let e = "10.0.0.1/33".parse::<Ipv4Prefix>().unwrap_err();
        assert_eq!(e.message(), "invalid IPv4 prefix length 33");
        assert_eq!(e.hint(), Some("prefix length must be 0-32"));
        let e = "10.0.0.1".parse::<Ipv4Prefix>().unwrap_err();
        assert_eq!(e.message(), "`10.0.0.1` has no prefix length");
        let e = "10.0.0/8".parse::<Ipv4Prefix>().unwrap_err();
        assert_eq!(e.message(), "invalid IPv4 address `10.0.0`");
        let e = "10.0.0.0/x".parse::<Ipv4Prefix>().unwrap_err();
        assert_eq!(e.message(), "invalid IPv4 prefix length `x`");
        let e = "10.0.0.0/99999999999".parse::<Ipv4Prefix>().unwrap_err();
        assert_eq!(e.message(), "invalid IPv4 prefix length 99999999999");
        let e = "2001:db8::/129".parse::<Ipv6Prefix>().unwrap_err();
        assert_eq!(e.hint(), Some("prefix length must be 0-128"));
        assert!(
            "2001:db8::/64".parse::<IpPrefix>().unwrap()
                != "10.0.0.0/8".parse::<IpPrefix>().unwrap()
        );
    }

    #[test]
    fn equality_ignores_provenance() {
        let a = Interface::new(InterfaceName::new(1, 1), 3);
        let mut b = Interface::new(InterfaceName::new(1, 1), 30);
        assert_eq!(a, b);
        b.mtu = 9216;
        assert_ne!(a, b);
        let r = |line| StaticRoute {
            prefix: "0.0.0.0/0".parse().unwrap(),
            target: RouteTarget::Null0,
            line,
            col: line + 10,
        };
        assert_eq!(r(1), r(2));
    }

    #[test]
    fn bind_parts_round_trip() {
        for kind in Bind::KINDS {
            let b = Bind::from_parts(kind, "x0").unwrap();
            assert_eq!(b.kind(), kind);
            assert_eq!(b.to_string(), format!("{kind} x0"));
        }
        assert_eq!(
            Bind::from_parts("AF-PACKET", "eth0"),
            Some(Bind::AfPacket("eth0".into()))
        );
        assert_eq!(Bind::from_parts("serial", "x"), None);
        assert_eq!(
            Bind::Tap("v0".into()).resource(),
            Bind::AfXdp("v0".into()).resource()
        );
        assert_ne!(
            Bind::Ring("v0".into()).resource(),
            Bind::Tap("v0".into()).resource()
        );
    }
}
