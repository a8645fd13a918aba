//! Checks that need the whole model: conflicts between interfaces, values out
//! of range, neighbours and next hops that no connected subnet covers.
//!
//! Errors: the same address on two interfaces, an MTU outside 576-9216, two
//! interfaces bound to one backend target, `dpdk eal-args` that DPDK refuses
//! (`--in-memory` with `--no-huge`). Warnings: overlapping subnets on
//! different interfaces, addresses on a Layer 2 port, static neighbours
//! outside the interface's subnets, next hops no interface subnet covers,
//! routes through interfaces that are not configured, `dpdk eal-args` with
//! no interface bound to dpdk.

mod bgp;
mod index;
mod l2;
mod monitor;
mod qos;

pub(crate) use bgp::{BgpAt, PeerKey};

use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub(crate) use crate::diag::Pos;
use crate::diag::{Diagnostic, Severity, Sources};
use crate::model::{
    Bind, Config, Interface, InterfaceName, IpPrefix, RouteTarget, MAX_MTU, MIN_MTU,
};

/// An interface of any modelled kind, by its index in its list of the model.
///
/// SVIs and port-channels are numbered in the order the parser created
/// them; the lists are sorted only after validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum IfKey {
    /// `Config::interfaces[i]`.
    Ethernet(usize),
    /// `Config::svis[i]`.
    Svi(usize),
    /// `Config::port_channels[i]`.
    PortChannel(usize),
}

/// Where the parser saw each item, so validation can point at the right token.
///
/// Ethernet interfaces are keyed by their index in [`Config::interfaces`],
/// interfaces of every kind by [`IfKey`].
#[derive(Debug, Default)]
pub(crate) struct SourceMap {
    /// `ip address` tokens.
    pub ipv4: HashMap<(IfKey, Ipv4Addr), Pos>,
    /// `ipv6 address` tokens.
    pub ipv6: HashMap<(IfKey, Ipv6Addr), Pos>,
    /// `ip arp` address tokens.
    pub arp: HashMap<(usize, Ipv4Addr), Pos>,
    /// `ipv6 neighbor` address tokens.
    pub nd: HashMap<(usize, Ipv6Addr), Pos>,
    /// `mtu` value tokens.
    pub mtu: HashMap<IfKey, Pos>,
    /// `bind` kind tokens.
    pub bind: HashMap<usize, Pos>,
    /// Positions of QoS and global items.
    pub at: HashMap<At, Pos>,
}

/// The items whose positions [`SourceMap::at`] records: what validation
/// may point at that the model does not carry a position for. Typed, so
/// the parser and the checks cannot disagree on a spelling.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum At {
    /// A class-map's name in its header.
    ClassMap(String),
    /// The access list a class-map's `match access-group name` names.
    AclRef {
        /// The class-map.
        class_map: String,
        /// The access list.
        acl: String,
    },
    /// An access list's name in its header.
    Acl(String),
    /// The first entry of an access list that was skipped as unmodelled.
    AclSkipped(String),
    /// A policy-map's name in its header.
    Policy(PolicyType, String),
    /// A class name under a qos policy.
    QosClass {
        /// The policy.
        policy: String,
        /// The class.
        class: String,
    },
    /// A command under a queuing policy's class.
    Queuing {
        /// The policy.
        policy: String,
        /// The class's queue.
        queue: u8,
        /// Which command.
        item: QueuingItem,
    },
    /// A command under a network-qos class.
    Nq {
        /// The policy.
        policy: String,
        /// The class's qos-group.
        group: u8,
        /// Which command.
        item: NqItem,
    },
    /// The policy name of an interface's `service-policy` (interface, slot).
    IfacePolicy(IfKey, PolicySlot),
    /// The interface's name where it was first configured.
    IfaceName(IfKey),
    /// The port-channel number of an Ethernet port's `channel-group` (interface index).
    ChannelGroup(usize),
    /// The `mode` keyword of an Ethernet port's `channel-group`, or its
    /// number when no mode is written (interface index).
    ChannelMode(usize),
    /// The VLAN of `switchport access vlan`.
    AccessVlan(IfKey),
    /// The VLAN of `switchport trunk native vlan`.
    NativeVlan(IfKey),
    /// An Ethernet port's `lacp rate` or `lacp port-priority` line (interface index).
    LacpPort(usize),
    /// The VLAN of a `mac address-table static` entry (its MAC and VLAN).
    StaticMacVlan([u8; 6], u16),
    /// The port of a `mac address-table static` entry (its MAC and VLAN).
    StaticMacPort([u8; 6], u16),
    /// The interface's `priority-flow-control` line (interface index).
    IfacePfc(usize),
    /// The policy name of a `service-policy` under `system qos`.
    SystemPolicy(PolicySlot),
    /// A global command.
    Global(GlobalItem),
    /// A `static-pinning` line under `hardware profile dlb` (its source port).
    DlbPin(crate::model::InterfaceName),
    /// An item of the routing sections.
    Bgp(BgpAt),
    /// An item of `monitor session N` (the session number).
    Monitor(u8, MonitorAt),
}

/// Items of a `monitor session` whose position is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum MonitorAt {
    /// The interface of a `source interface` line.
    Source(InterfaceName),
    /// The target of the `destination` line.
    Destination,
}

/// The `type` of a `policy-map`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PolicyType {
    /// `type qos`.
    Qos,
    /// `type queuing`.
    Queuing,
    /// `type network-qos`.
    NetworkQos,
}

/// Which policy a `service-policy` line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum PolicySlot {
    /// `type network-qos`.
    NetworkQos,
    /// `type queuing output`.
    QueuingOutput,
    /// `type queuing input`.
    QueuingInput,
    /// `type qos input`.
    QosInput,
}

/// Commands of a queuing class whose position is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum QueuingItem {
    /// `bandwidth …`.
    Bandwidth,
    /// `pause …`.
    Pause,
    /// `priority …`.
    Priority,
    /// `queue-limit …`.
    QueueLimit,
    /// `random-detect …`.
    RandomDetect,
    /// `shape …`.
    Shape,
}

/// Commands of a network-qos class whose position is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum NqItem {
    /// `mtu N`.
    Mtu,
    /// `pause pfc-cos …`.
    Pause,
}

/// Global commands whose position is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum GlobalItem {
    /// The first LLDP command (global or under an interface).
    Lldp,
    /// `lldp timer`.
    LldpTimer,
    /// `lldp holdtime`.
    LldpHoldtime,
    /// `lldp reinit`.
    LldpReinit,
    /// `priority-flow-control watch-dog …`.
    Watchdog,
    /// `dre-thresholds` under `hardware profile dlb`.
    DlbDre,
    /// `mode policy-driven …` under `hardware profile dlb`.
    DlbMode,
    /// `dpdk eal-args`.
    DpdkEalArgs,
    /// The first LACP setting (global or under an interface) that needs `feature lacp`.
    Lacp,
}

/// An interface of any kind that can have addresses, for the checks that
/// treat Ethernet ports, port-channels and SVIs alike.
struct L3<'a> {
    key: IfKey,
    name: String,
    line: usize,
    ipv4: &'a [crate::model::Ipv4Prefix],
    ipv6: &'a [crate::model::Ipv6Prefix],
    mtu: u16,
}

/// Everything validation needs to report.
struct Checker<'a> {
    config: &'a Config,
    map: &'a SourceMap,
    sources: &'a Sources<'a>,
    out: Vec<Diagnostic>,
}

impl<'a> Checker<'a> {
    /// Record a diagnostic.
    fn report(&mut self, severity: Severity, pos: Pos, message: String, hint: Option<String>) {
        self.out
            .push(self.sources.diag(severity, pos, message, hint));
    }

    /// `pos`, or the interface's header line when the parser recorded none.
    fn or_header(&self, pos: Option<&Pos>, index: usize) -> Pos {
        pos.copied()
            .unwrap_or_else(|| Pos::new(self.config.interfaces[index].line, 0))
    }

    /// `pos`, or the header line of an interface of any kind when the parser recorded none.
    fn or_header_of(&self, pos: Option<&Pos>, key: IfKey) -> Pos {
        pos.copied()
            .unwrap_or_else(|| Pos::new(self.line_of(key), 0))
    }

    /// The line an interface of any kind was first configured on.
    fn line_of(&self, key: IfKey) -> usize {
        let c = self.config;
        match key {
            IfKey::Ethernet(i) => c.interfaces[i].line,
            IfKey::Svi(i) => c.svis[i].line,
            IfKey::PortChannel(i) => c.port_channels[i].line,
        }
    }

    /// Every interface that can have addresses, in order of first
    /// configuration (Ethernet ports before the others on one line).
    fn l3_interfaces(&self) -> Vec<L3<'a>> {
        let c = self.config;
        let eth = c.interfaces.iter().enumerate().map(|(i, x)| L3 {
            key: IfKey::Ethernet(i),
            name: x.name.to_string(),
            line: x.line,
            ipv4: &x.ipv4,
            ipv6: &x.ipv6,
            mtu: x.mtu,
        });
        let pcs = c.port_channels.iter().enumerate().map(|(i, x)| L3 {
            key: IfKey::PortChannel(i),
            name: x.name(),
            line: x.line,
            ipv4: &x.ipv4,
            ipv6: &x.ipv6,
            mtu: x.mtu,
        });
        let svis = c.svis.iter().enumerate().map(|(i, x)| L3 {
            key: IfKey::Svi(i),
            name: x.name(),
            line: x.line,
            ipv4: &x.ipv4,
            ipv6: &x.ipv6,
            mtu: x.mtu,
        });
        let mut all: Vec<L3<'a>> = eth.chain(pcs).chain(svis).collect();
        all.sort_by_key(|x| x.line);
        all
    }

    /// MTU within 576-9216.
    fn mtu(&mut self) {
        for x in self.l3_interfaces() {
            if !(MIN_MTU..=MAX_MTU).contains(&x.mtu) {
                let pos = self.or_header_of(self.map.mtu.get(&x.key), x.key);
                self.report(
                    Severity::Error,
                    pos,
                    format!("MTU {} is out of range", x.mtu),
                    Some(format!("MTU must be {MIN_MTU}-{MAX_MTU}")),
                );
            }
        }
    }

    /// No address on two interfaces; overlapping subnets are suspicious.
    /// Link-local IPv6 addresses are left out: every interface may repeat them.
    /// Ethernet ports, port-channels and SVIs are checked together.
    fn addresses(&mut self) {
        let ifaces = self.l3_interfaces();
        // Each interface's addresses of both families with where they were configured.
        let this = &*self;
        let all: Vec<Vec<(IpPrefix, Pos)>> = ifaces
            .iter()
            .map(|x| {
                let key = x.key;
                let v4 = x.ipv4.iter().map(move |p| {
                    let pos = this.or_header_of(this.map.ipv4.get(&(key, p.addr)), key);
                    (IpPrefix::V4(*p), pos)
                });
                let v6 = x
                    .ipv6
                    .iter()
                    .filter(|p| !is_link_local(p.addr))
                    .map(move |p| {
                        let pos = this.or_header_of(this.map.ipv6.get(&(key, p.addr)), key);
                        (IpPrefix::V6(*p), pos)
                    });
                v4.chain(v6).collect()
            })
            .collect();
        // The first earlier interface with the same address, or else with an
        // overlapping subnet: the lowest-ranked match, when it belongs to an
        // earlier interface (see `index`).
        let subnets = index::Subnets::new(all.iter().enumerate().flat_map(|(j, mine)| {
            mine.iter()
                .enumerate()
                .map(move |(k, (p, _))| (p, index::rank(j, k)))
        }));
        let entry = |r: index::Rank| {
            let j = index::rank_interface(r);
            (&ifaces[j], all[j][index::rank_position(r)])
        };
        for (j, (iface, mine)) in ifaces.iter().zip(&all).enumerate() {
            let earlier = |r: &index::Rank| index::rank_interface(*r) < j;
            for (p, pos) in mine {
                if let Some((other, (_, first))) =
                    subnets.same_address(p).filter(earlier).map(entry)
                {
                    self.report(
                        Severity::Error,
                        *pos,
                        format!(
                            "{} on {} is already assigned to {}",
                            address(p),
                            iface.name,
                            other.name
                        ),
                        Some(format!(
                            "an address belongs to one interface (first configured on line {})",
                            first.line
                        )),
                    );
                    continue;
                }
                if let Some((other, (q, _))) = subnets.overlapping(p).filter(earlier).map(entry) {
                    self.report(
                        Severity::Warning,
                        *pos,
                        format!(
                            "{} on {} overlaps {} on {}",
                            p.network(),
                            iface.name,
                            q.network(),
                            other.name
                        ),
                        Some("traffic to the overlap may leave through either interface".into()),
                    );
                }
            }
        }
    }

    /// Addresses on a Layer 2 port are almost certainly a missing `no switchport`.
    /// (A port-channel member's own addresses are an error of their own, see `l2`.)
    fn switchport(&mut self) {
        let c = self.config;
        let eth = c
            .interfaces
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.routed && i.channel_group.is_none())
            .map(|(i, x)| (IfKey::Ethernet(i), x.name.to_string(), &x.ipv4, &x.ipv6));
        let pcs = c
            .port_channels
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.routed)
            .map(|(i, x)| (IfKey::PortChannel(i), x.name(), &x.ipv4, &x.ipv6));
        for (key, name, ipv4, ipv6) in eth.chain(pcs) {
            let pos = if let Some(p) = ipv4.first() {
                self.map.ipv4.get(&(key, p.addr))
            } else if let Some(p) = ipv6.first() {
                self.map.ipv6.get(&(key, p.addr))
            } else {
                continue;
            };
            let pos = self.or_header_of(pos, key);
            self.report(
                Severity::Warning,
                pos,
                format!("{name} has IP addresses but is a Layer 2 port (switchport)"),
                Some("add `no switchport` to make it a routed port".into()),
            );
        }
    }

    /// Static neighbours should be on one of the interface's subnets.
    fn neighbours(&mut self) {
        for (i, iface) in self.config.interfaces.iter().enumerate() {
            for (addr, _) in &iface.arp {
                if iface.ipv4.iter().any(|p| p.contains(*addr)) {
                    continue;
                }
                let pos = self.or_header(self.map.arp.get(&(i, *addr)), i);
                self.report(
                    Severity::Warning,
                    pos,
                    format!(
                        "static ARP entry {addr} is outside every subnet of {}",
                        iface.name
                    ),
                    Some(subnets_hint(iface, true)),
                );
            }
            for (addr, _) in &iface.nd {
                if is_link_local(*addr) || iface.ipv6.iter().any(|p| p.contains(*addr)) {
                    continue;
                }
                let pos = self.or_header(self.map.nd.get(&(i, *addr)), i);
                self.report(
                    Severity::Warning,
                    pos,
                    format!(
                        "static neighbour {addr} is outside every subnet of {}",
                        iface.name
                    ),
                    Some(subnets_hint(iface, false)),
                );
            }
        }
    }

    /// Next hops should be reachable, and named interfaces configured.
    fn routes(&mut self) {
        // Every subnet, link-local ones too: any of them makes a next hop
        // connected.
        let all: Vec<IpPrefix> = self
            .l3_interfaces()
            .iter()
            .flat_map(|i| {
                let v4 = i.ipv4.iter().map(|p| IpPrefix::V4(*p));
                v4.chain(i.ipv6.iter().map(|p| IpPrefix::V6(*p)))
            })
            .collect();
        let subnets = index::Subnets::new(all.iter().map(|p| (p, 0)));
        let names: HashSet<InterfaceName> = self.config.interfaces.iter().map(|i| i.name).collect();
        for r in &self.config.routes {
            let pos = Pos::new(r.line, r.col);
            match &r.target {
                RouteTarget::NextHop {
                    addr,
                    interface: None,
                } => {
                    if !subnets.covers(*addr) {
                        self.report(
                            Severity::Warning,
                            pos,
                            format!("next hop {addr} of {} is not in any connected subnet", r.prefix),
                            Some(format!("the route is unresolvable until an interface address covers {addr}")),
                        );
                    }
                }
                RouteTarget::NextHop {
                    interface: Some(name),
                    ..
                }
                | RouteTarget::Interface(name) => {
                    if !names.contains(name) {
                        self.report(
                            Severity::Warning,
                            pos,
                            format!(
                                "route {} goes through {name}, which is not configured",
                                r.prefix
                            ),
                            Some(format!("add an `interface {name}` section")),
                        );
                    }
                }
                RouteTarget::Null0 => {}
            }
        }
    }

    /// One backend target feeds one interface.
    fn binds(&mut self) {
        let mut owners: HashMap<(&'static str, String), usize> = HashMap::new();
        for (i, iface) in self.config.interfaces.iter().enumerate() {
            let Some(bind) = &iface.bind else { continue };
            let key = bind.resource();
            match owners.get(&key) {
                Some(&first) => {
                    let owner = &self.config.interfaces[first];
                    let first_pos = self.or_header(self.map.bind.get(&first), first);
                    let pos = self.or_header(self.map.bind.get(&i), i);
                    self.report(
                        Severity::Error,
                        pos,
                        format!(
                            "cannot bind {} to {} {}: already bound to {}",
                            iface.name, key.0, key.1, owner.name
                        ),
                        Some(format!(
                            "a backend target feeds one interface ({} bound it on line {})",
                            owner.name, first_pos.line
                        )),
                    );
                }
                None => {
                    owners.insert(key, i);
                }
            }
        }
    }
}

impl Checker<'_> {
    /// `dpdk eal-args`: combinations DPDK 22.11 refuses, and arguments no
    /// port will use.
    fn dpdk(&mut self) {
        let args = &self.config.dpdk_eal_args;
        if args.is_empty() {
            return;
        }
        let pos = self
            .map
            .at
            .get(&At::Global(GlobalItem::DpdkEalArgs))
            .copied()
            .unwrap_or_default();
        let has = |flag: &str| args.iter().any(|a| a == flag);
        if has("--in-memory") && has("--no-huge") {
            self.report(
                Severity::Error,
                pos,
                "DPDK refuses `--in-memory` together with `--no-huge`".into(),
                Some("use `--no-huge --no-shconf` for a run without hugepages".into()),
            );
        }
        let bound = self
            .config
            .interfaces
            .iter()
            .any(|i| matches!(i.bind, Some(Bind::Dpdk(_))));
        if !bound {
            self.report(
                Severity::Warning,
                pos,
                "`dpdk eal-args` is set but no interface is bound to dpdk".into(),
                Some("the arguments are used only with `bind dpdk PORT`".into()),
            );
        }
    }

    /// A port is either broken out into lanes or used whole, not both.
    fn breakouts(&mut self) {
        let ifaces = &self.config.interfaces;
        let whole_ports: HashSet<InterfaceName> = ifaces
            .iter()
            .filter(|i| i.name.sub.is_none())
            .map(|i| i.name)
            .collect();
        let mut lanes_seen: HashSet<InterfaceName> = HashSet::new();
        for (i, iface) in ifaces.iter().enumerate() {
            if iface.name.sub.is_none() {
                continue;
            }
            let whole = InterfaceName::new(iface.name.module, iface.name.port);
            // Reported once, at the port's first lane.
            if !lanes_seen.insert(whole) || !whole_ports.contains(&whole) {
                continue;
            }
            let pos = self.or_header(self.map.at.get(&At::IfaceName(IfKey::Ethernet(i))), i);
            self.report(
                Severity::Error,
                pos,
                format!("{whole} is configured both as one port and as breakout lanes"),
                Some(format!(
                    "configure either {whole} or its breakout lanes such as {}, not both",
                    iface.name
                )),
            );
        }
    }
}

/// The interface address an address prefix was configured with.
fn address(p: &IpPrefix) -> IpAddr {
    match p {
        IpPrefix::V4(p) => IpAddr::V4(p.addr),
        IpPrefix::V6(p) => IpAddr::V6(p.addr),
    }
}

/// Whether an IPv6 address is link-local (fe80::/10).
fn is_link_local(addr: Ipv6Addr) -> bool {
    addr.segments()[0] & 0xffc0 == 0xfe80
}

/// "connected subnets: ..." for a neighbour warning.
fn subnets_hint(iface: &Interface, v4: bool) -> String {
    let subnets: Vec<String> = if v4 {
        iface.ipv4.iter().map(|p| p.network().to_string()).collect()
    } else {
        iface.ipv6.iter().map(|p| p.network().to_string()).collect()
    };
    if subnets.is_empty() {
        let family = if v4 { "IPv4" } else { "IPv6" };
        format!("{} has no {family} address", iface.name)
    } else {
        format!("subnets of {}: {}", iface.name, subnets.join(", "))
    }
}

/// Check a parsed model; returns errors and warnings in no particular order.
pub(crate) fn validate(config: &Config, map: &SourceMap, sources: &Sources<'_>) -> Vec<Diagnostic> {
    let mut c = Checker {
        config,
        map,
        sources,
        out: Vec::new(),
    };
    c.mtu();
    c.addresses();
    c.switchport();
    c.neighbours();
    c.routes();
    c.binds();
    c.breakouts();
    c.dpdk();
    l2::check(config, map, sources, &mut c.out);
    qos::check(config, map, sources, &mut c.out);
    bgp::check(config, map, sources, &mut c.out);
    monitor::check(config, map, sources, &mut c.out);
    c.out
}
