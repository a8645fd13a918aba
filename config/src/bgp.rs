//! The routing model: `router bgp`, `route-map`, `ip prefix-list` and BFD
//! intervals, as an NX-OS running-config writes them.
//!
//! railyard does not speak BGP itself: the control crate translates this
//! model into a routing suite's configuration. So the model keeps what the
//! file says, in NX-OS terms (a template is a template, not an FRR peer
//! group), and leaves the mapping to the translation.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

use serde::Serialize;

use crate::prefix::IpPrefix;

/// Largest `maximum-paths` NX-OS accepts.
pub const MAX_BGP_PATHS: u8 = 64;

/// A BGP autonomous system number, 1-4294967295.
///
/// NX-OS reads both the plain form (`4200000001`) and asdot (`64086.59905`);
/// railyard prints the plain form, the NX-OS default `as-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct Asn(pub u32);

impl fmt::Display for Asn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The `router bgp ASN` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Bgp {
    /// The local AS.
    pub asn: Asn,
    /// `router-id A.B.C.D`; `None` lets the routing suite choose.
    pub router_id: Option<Ipv4Addr>,
    /// `bestpath as-path multipath-relax`: paths through different
    /// neighbouring ASes of equal length are multipath candidates (an RFC
    /// 7938 leaf sees each spine's copy of a prefix through a different AS
    /// path only when the spines have different ASNs).
    pub multipath_relax: bool,
    /// `log-neighbor-changes`.
    pub log_neighbor_changes: bool,
    /// `address-family ipv4 unicast`, when written.
    pub ipv4: Option<BgpAf>,
    /// `address-family ipv6 unicast`, when written.
    pub ipv6: Option<BgpAf>,
    /// `template peer NAME` sections, in order of first appearance.
    pub templates: Vec<PeerTemplate>,
    /// `neighbor ADDR` sections, in order of first appearance.
    pub neighbors: Vec<Neighbor>,
}

impl Bgp {
    /// An empty `router bgp ASN`.
    pub fn new(asn: Asn) -> Self {
        Bgp {
            asn,
            router_id: None,
            multipath_relax: false,
            log_neighbor_changes: false,
            ipv4: None,
            ipv6: None,
            templates: Vec::new(),
            neighbors: Vec::new(),
        }
    }

    /// The template named `name`.
    pub fn template(&self, name: &str) -> Option<&PeerTemplate> {
        self.templates.iter().find(|t| t.name == name)
    }

    /// A neighbor's settings with its templates applied: what NX-OS runs.
    ///
    /// NX-OS copies a template's settings into each neighbor that inherits
    /// it, and the neighbor's own settings win; a template may inherit
    /// another. A missing template or a cycle ends the chain (validation
    /// reports both).
    pub fn effective(&self, n: &Neighbor) -> PeerConfig {
        let mut out = n.peer.clone();
        let mut next = n.peer.inherit.clone();
        let mut seen: Vec<String> = Vec::new();
        while let Some(name) = next {
            if seen.contains(&name) {
                break;
            }
            let Some(t) = self.template(&name) else { break };
            out.fill_from(&t.peer);
            seen.push(name);
            next = t.peer.inherit.clone();
        }
        out
    }
}

/// Which address family a block configures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Afi {
    /// `ipv4 unicast`.
    Ipv4,
    /// `ipv6 unicast`.
    Ipv6,
}

impl Afi {
    /// The keyword after `address-family`.
    pub fn keyword(self) -> &'static str {
        match self {
            Afi::Ipv4 => "ipv4",
            Afi::Ipv6 => "ipv6",
        }
    }
}

/// The router-level `address-family ipv4|ipv6 unicast` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct BgpAf {
    /// `maximum-paths N` (eBGP multipath); `None` is 1.
    pub maximum_paths: Option<u8>,
    /// `maximum-paths ibgp N`; `None` is 1.
    pub maximum_paths_ibgp: Option<u8>,
    /// `network PREFIX [route-map NAME]`, in order.
    pub networks: Vec<Network>,
    /// `redistribute direct route-map NAME`: the route-map (NX-OS requires one).
    pub redistribute_direct: Option<String>,
    /// `aggregate-address PREFIX [summary-only]`, in order.
    pub aggregates: Vec<Aggregate>,
}

/// One `network PREFIX [route-map NAME]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Network {
    /// The prefix advertised (when it is in the routing table).
    pub prefix: IpPrefix,
    /// Applied to the route as it is originated.
    pub route_map: Option<String>,
}

/// One `aggregate-address PREFIX [as-set] [summary-only]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Aggregate {
    /// The summary.
    pub prefix: IpPrefix,
    /// `as-set`: the summary carries the AS paths it covers.
    pub as_set: bool,
    /// `summary-only`: the more specific routes are not advertised.
    pub summary_only: bool,
}

/// `template peer NAME`: settings neighbors copy with `inherit peer NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeerTemplate {
    /// The template's name.
    pub name: String,
    /// What it sets.
    pub peer: PeerConfig,
}

/// `neighbor ADDR`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Neighbor {
    /// The peer's address.
    pub addr: IpAddr,
    /// What is set on it directly (templates not applied: see [`Bgp::effective`]).
    pub peer: PeerConfig,
}

/// The statements a neighbor and a peer template share.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PeerConfig {
    /// `remote-as ASN`.
    pub remote_as: Option<Asn>,
    /// `description TEXT`.
    pub description: Option<String>,
    /// `bfd`: the session follows a BFD session to the peer.
    pub bfd: bool,
    /// `update-source IFNAME`, canonical for Ethernet (`Ethernet1/1`), as
    /// written otherwise (`loopback0`).
    pub update_source: Option<String>,
    /// `inherit peer NAME`.
    pub inherit: Option<String>,
    /// `shutdown`: configured but administratively down.
    pub shutdown: bool,
    /// `address-family ipv4 unicast` under the neighbor: on NX-OS this
    /// block is what activates the family for the peer.
    pub ipv4: Option<PeerAf>,
    /// `address-family ipv6 unicast` under the neighbor.
    pub ipv6: Option<PeerAf>,
}

impl PeerConfig {
    /// Fill what `self` leaves unset from `t` (a template it inherits).
    fn fill_from(&mut self, t: &PeerConfig) {
        self.remote_as = self.remote_as.or(t.remote_as);
        if self.description.is_none() {
            self.description.clone_from(&t.description);
        }
        self.bfd |= t.bfd;
        if self.update_source.is_none() {
            self.update_source.clone_from(&t.update_source);
        }
        self.shutdown |= t.shutdown;
        for (mine, theirs) in [(&mut self.ipv4, &t.ipv4), (&mut self.ipv6, &t.ipv6)] {
            match (mine.as_mut(), theirs) {
                (Some(m), Some(t)) => m.fill_from(t),
                (None, Some(t)) => *mine = Some(t.clone()),
                _ => {}
            }
        }
    }

    /// The block of one family.
    pub fn af(&self, afi: Afi) -> Option<&PeerAf> {
        match afi {
            Afi::Ipv4 => self.ipv4.as_ref(),
            Afi::Ipv6 => self.ipv6.as_ref(),
        }
    }
}

/// A neighbor's (or template's) `address-family ipv4|ipv6 unicast` block.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PeerAf {
    /// `send-community` (standard communities).
    pub send_community: bool,
    /// `send-community extended`.
    pub send_community_extended: bool,
    /// `route-map NAME in`.
    pub route_map_in: Option<String>,
    /// `route-map NAME out`.
    pub route_map_out: Option<String>,
}

impl PeerAf {
    /// Fill what `self` leaves unset from a template's block.
    fn fill_from(&mut self, t: &PeerAf) {
        self.send_community |= t.send_community;
        self.send_community_extended |= t.send_community_extended;
        if self.route_map_in.is_none() {
            self.route_map_in.clone_from(&t.route_map_in);
        }
        if self.route_map_out.is_none() {
            self.route_map_out.clone_from(&t.route_map_out);
        }
    }
}

/// Permit or deny, for route-map entries and prefix-list rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// `permit`.
    Permit,
    /// `deny`.
    Deny,
}

impl Action {
    /// The keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Action::Permit => "permit",
            Action::Deny => "deny",
        }
    }
}

/// One `route-map NAME permit|deny SEQ` entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteMap {
    /// The route-map's name (several entries share it).
    pub name: String,
    /// What a matching route gets.
    pub action: Action,
    /// The entry's sequence number, 0-65535.
    pub seq: u16,
    /// `description TEXT`.
    pub description: Option<String>,
    /// `match ip address prefix-list NAME…`: IPv4 prefix-lists, any of which matches.
    pub match_ipv4: Vec<String>,
    /// `match ipv6 address prefix-list NAME…`.
    pub match_ipv6: Vec<String>,
    /// The `set` statements railyard translates.
    pub sets: Vec<RouteMapSet>,
}

/// A `set` statement of a route-map entry that maps one to one onto FRR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RouteMapSet {
    /// `set local-preference N`.
    LocalPreference(u32),
    /// `set metric N` (the MED).
    Metric(u32),
    /// `set weight N`.
    Weight(u16),
    /// `set as-path prepend ASN…`.
    AsPathPrepend(Vec<Asn>),
}

impl fmt::Display for RouteMapSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteMapSet::LocalPreference(n) => write!(f, "set local-preference {n}"),
            RouteMapSet::Metric(n) => write!(f, "set metric {n}"),
            RouteMapSet::Weight(n) => write!(f, "set weight {n}"),
            RouteMapSet::AsPathPrepend(asns) => {
                f.write_str("set as-path prepend")?;
                for a in asns {
                    write!(f, " {a}")?;
                }
                Ok(())
            }
        }
    }
}

/// An `ip prefix-list NAME` or `ipv6 prefix-list NAME`: rules by sequence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrefixList {
    /// The family of its prefixes.
    pub afi: Afi,
    /// The list's name.
    pub name: String,
    /// `description TEXT`.
    pub description: Option<String>,
    /// Rules in sequence order.
    pub rules: Vec<PrefixRule>,
}

/// `seq N permit|deny PREFIX [ge N] [le N]`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PrefixRule {
    /// Sequence number (NX-OS numbers unnumbered rules in steps of 5).
    pub seq: u32,
    /// Permit or deny.
    pub action: Action,
    /// The prefix.
    pub prefix: IpPrefix,
    /// `ge N`: match lengths from N.
    pub ge: Option<u8>,
    /// `le N`: match lengths up to N.
    pub le: Option<u8>,
}

/// `bfd interval MS min_rx MS multiplier N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct BfdInterval {
    /// Desired transmit interval, ms (50-999 on NX-OS).
    pub tx_ms: u16,
    /// Required minimum receive interval, ms (50-999).
    pub min_rx_ms: u16,
    /// Detection multiplier (1-50).
    pub multiplier: u8,
}

impl BfdInterval {
    /// NX-OS's default: 50 ms both ways, multiplier 3.
    pub const NXOS_DEFAULT: BfdInterval = BfdInterval {
        tx_ms: 50,
        min_rx_ms: 50,
        multiplier: 3,
    };
}

impl fmt::Display for BfdInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bfd interval {} min_rx {} multiplier {}",
            self.tx_ms, self.min_rx_ms, self.multiplier
        )
    }
}
