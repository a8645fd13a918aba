//! Checks of the routing model: `router bgp`, route-maps, prefix-lists, BFD.
//!
//! Errors, as NX-OS refuses them: `inherit peer` naming a template that is
//! not there (or templates inheriting in a circle), a neighbor with no
//! `remote-as` of its own or from its templates (no session can start).
//!
//! Warnings: `router bgp` without `feature bgp` and BFD settings without
//! `feature bfd` (NX-OS would refuse the commands, but a configuration
//! fragment often leaves the feature lines out and its intent is plain, so
//! railyard reads it as if they were there); and, as NX-OS accepts them but
//! they likely are not what was meant,
//! a route-map or prefix-list named but not defined (NX-OS and FRR then
//! match nothing, so a neighbor's policy denies every route and a
//! `redistribute` advertises none), an `update-source` railyard cannot
//! translate (not an Ethernet interface, or one not configured), a
//! route-map entry matching several prefix-lists one of which denies (FRR
//! takes one list per entry; railyard joins them, which changes the
//! meaning of a `deny`).

use std::collections::HashMap;
use std::net::IpAddr;

use crate::bgp::{Afi, Bgp, PeerConfig};
use crate::diag::{Diagnostic, Severity, Sources};
use crate::model::{Config, InterfaceName, IpPrefix};

use super::{At, Pos, SourceMap};

/// Which peer an item belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum PeerKey {
    /// `neighbor ADDR`.
    Neighbor(IpAddr),
    /// `template peer NAME`.
    Template(String),
}

/// Items of the routing sections whose position the parser records.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum BgpAt {
    /// The first `router bgp` line.
    Router,
    /// A neighbor's address or a template's name in its header.
    Peer(PeerKey),
    /// A peer's `remote-as` value.
    RemoteAs(PeerKey),
    /// A peer's `inherit peer` name.
    Inherit(PeerKey),
    /// A peer's `bfd`.
    Bfd(PeerKey),
    /// A peer's `update-source` interface.
    UpdateSource(PeerKey),
    /// The route-map of a peer's `route-map NAME in|out` (true: in).
    PeerRouteMap(PeerKey, Afi, bool),
    /// The route-map of `network PREFIX route-map NAME`.
    NetworkRouteMap(Afi, IpPrefix),
    /// The route-map of `redistribute direct route-map NAME`.
    Redistribute(Afi),
    /// A route-map entry's header name.
    RouteMap(String, u16),
    /// A prefix-list named by a route-map entry's `match`.
    MatchPrefixList {
        /// The route-map.
        map: String,
        /// The entry.
        seq: u16,
        /// Which `match` (ip or ipv6).
        afi: Afi,
        /// The prefix-list.
        list: String,
    },
    /// `bfd interval`: global (`None`) or of an interface (its index).
    BfdInterval(Option<usize>),
}

/// Every template and neighbor with its key for source positions.
fn peers(bgp: &Bgp) -> impl Iterator<Item = (PeerKey, &PeerConfig)> {
    bgp.templates
        .iter()
        .map(|t| (PeerKey::Template(t.name.clone()), &t.peer))
        .chain(
            bgp.neighbors
                .iter()
                .map(|n| (PeerKey::Neighbor(n.addr), &n.peer)),
        )
}

/// The checks, with what they report into.
struct Checker<'a> {
    config: &'a Config,
    map: &'a SourceMap,
    sources: &'a Sources<'a>,
    out: &'a mut Vec<Diagnostic>,
}

impl Checker<'_> {
    /// Where `item` was written (line 0 when built in code).
    fn at(&self, item: BgpAt) -> Pos {
        self.map.at.get(&At::Bgp(item)).copied().unwrap_or_default()
    }

    /// Record a diagnostic.
    fn report(&mut self, severity: Severity, pos: Pos, message: String, hint: Option<String>) {
        self.out
            .push(self.sources.diag(severity, pos, message, hint));
    }

    /// `router bgp` and BFD need their features.
    fn features(&mut self) {
        let Some(bgp) = &self.config.bgp else {
            return self.bfd_feature(None);
        };
        if !self.config.features.contains("bgp") {
            let pos = self.at(BgpAt::Router);
            self.report(
                Severity::Warning,
                pos,
                "`router bgp` without `feature bgp`; read as if it were enabled".into(),
                Some(
                    "add `feature bgp`: NX-OS has no `router bgp` until the feature is enabled"
                        .into(),
                ),
            );
        }
        let first_bfd = peers(bgp)
            .filter(|(_, p)| p.bfd)
            .map(|(k, _)| self.at(BgpAt::Bfd(k)))
            .min_by_key(|p| (p.line, p.col));
        self.bfd_feature(first_bfd);
    }

    /// BFD settings need `feature bfd`: one warning at the first of them.
    fn bfd_feature(&mut self, peer_bfd: Option<Pos>) {
        if self.config.features.contains("bfd") {
            return;
        }
        let global = self
            .config
            .bfd_interval
            .map(|_| self.at(BgpAt::BfdInterval(None)));
        let iface = self
            .config
            .interfaces
            .iter()
            .enumerate()
            .filter(|(_, i)| i.bfd_interval.is_some())
            .map(|(j, _)| self.at(BgpAt::BfdInterval(Some(j))));
        let first = peer_bfd
            .into_iter()
            .chain(global)
            .chain(iface)
            .min_by_key(|p| (p.line, p.col));
        if let Some(pos) = first {
            self.report(
                Severity::Warning,
                pos,
                "BFD is configured without `feature bfd`; read as if it were enabled".into(),
                Some(
                    "add `feature bfd`: NX-OS has no BFD commands until the feature is enabled"
                        .into(),
                ),
            );
        }
    }

    /// Templates exist and do not inherit in a circle; every neighbor has a remote AS.
    fn peers(&mut self) {
        let Some(bgp) = &self.config.bgp else { return };
        let mut found = Vec::new();
        for (key, peer) in peers(bgp) {
            let Some(name) = &peer.inherit else { continue };
            if bgp.template(name).is_none() {
                let known: Vec<&str> = bgp.templates.iter().map(|t| t.name.as_str()).collect();
                let hint = match crate::spelling::closest(name, known.iter().copied()) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None if known.is_empty() => {
                        "define it under `router bgp` with `template peer NAME`".into()
                    }
                    None => format!("templates are: {}", known.join(", ")),
                };
                found.push((
                    self.at(BgpAt::Inherit(key)),
                    format!("template peer `{name}` is not defined"),
                    hint,
                ));
            } else if let PeerKey::Template(me) = &key {
                if cycles(bgp, me) {
                    found.push((
                        self.at(BgpAt::Inherit(key.clone())),
                        format!("template peer `{me}` inherits itself"),
                        "templates may inherit each other only in a chain, not a circle".into(),
                    ));
                }
            }
        }
        for n in &bgp.neighbors {
            let eff: PeerConfig = bgp.effective(n);
            // A broken chain is reported where it breaks, not again here.
            if eff.remote_as.is_none() && chain_complete(bgp, n.peer.inherit.as_deref()) {
                let hint = match &n.peer.inherit {
                    Some(t) => format!("add `remote-as ASN` under the neighbor or its template `{t}`"),
                    None => "add `remote-as ASN` under the neighbor (or `inherit peer` a template that has one)".into(),
                };
                found.push((
                    self.at(BgpAt::Peer(PeerKey::Neighbor(n.addr))),
                    format!("neighbor {} has no remote-as", n.addr),
                    hint,
                ));
            }
        }
        for (pos, message, hint) in found {
            self.report(Severity::Error, pos, message, Some(hint));
        }
    }

    /// Named route-maps and prefix-lists exist.
    fn references(&mut self) {
        let mut found: Vec<(Pos, String, String)> = Vec::new();
        let route_map = |c: &Self, name: &str, item: BgpAt, effect: &str, out: &mut Vec<_>| {
            if !c.config.has_route_map(name) {
                out.push((
                    c.at(item),
                    format!("route-map `{name}` is not defined"),
                    format!("an undefined route-map matches nothing, so {effect}; define `route-map {name} permit 10`"),
                ));
            }
        };
        if let Some(bgp) = &self.config.bgp {
            for (afi, af) in [(Afi::Ipv4, &bgp.ipv4), (Afi::Ipv6, &bgp.ipv6)] {
                let Some(af) = af else { continue };
                for n in &af.networks {
                    if let Some(rm) = &n.route_map {
                        let effect = format!("{} is not advertised", n.prefix);
                        route_map(
                            self,
                            rm,
                            BgpAt::NetworkRouteMap(afi, n.prefix),
                            &effect,
                            &mut found,
                        );
                    }
                }
                if let Some(rm) = &af.redistribute_direct {
                    route_map(
                        self,
                        rm,
                        BgpAt::Redistribute(afi),
                        "no direct route is redistributed",
                        &mut found,
                    );
                }
            }
            for (key, peer) in peers(bgp) {
                for afi in [Afi::Ipv4, Afi::Ipv6] {
                    let Some(af) = peer.af(afi) else { continue };
                    for (rm, inbound) in [(&af.route_map_in, true), (&af.route_map_out, false)] {
                        let Some(rm) = rm else { continue };
                        let effect = if inbound {
                            "every route from the peer is refused"
                        } else {
                            "no route is advertised to the peer"
                        };
                        route_map(
                            self,
                            rm,
                            BgpAt::PeerRouteMap(key.clone(), afi, inbound),
                            effect,
                            &mut found,
                        );
                    }
                }
            }
        }
        for e in &self.config.route_maps {
            for (afi, lists) in [(Afi::Ipv4, &e.match_ipv4), (Afi::Ipv6, &e.match_ipv6)] {
                // FRR matches one prefix-list per entry: several become one
                // list holding all their rules, which is the same match only
                // while none of them denies.
                let deny = lists.iter().find(|l| {
                    lists.len() > 1
                        && self.config.prefix_list(afi, l).is_some_and(|p| {
                            p.rules.iter().any(|r| r.action == crate::bgp::Action::Deny)
                        })
                });
                if let Some(list) = deny {
                    found.push((
                        self.at(BgpAt::MatchPrefixList {
                            map: e.name.clone(),
                            seq: e.seq,
                            afi,
                            list: list.clone(),
                        }),
                        format!("prefix-list `{list}` denies, and this entry matches several lists"),
                        "FRR matches one list per entry, so railyard joins them in order; a route a `deny` here stops is not looked up in the lists after it. Use one list, or one entry per list".into(),
                    ));
                }
                for list in lists {
                    if self.config.prefix_list(afi, list).is_none() {
                        let family = if afi == Afi::Ipv4 { "ip" } else { "ipv6" };
                        found.push((
                            self.at(BgpAt::MatchPrefixList {
                                map: e.name.clone(),
                                seq: e.seq,
                                afi,
                                list: list.clone(),
                            }),
                            format!("{family} prefix-list `{list}` is not defined"),
                            format!("an undefined prefix-list matches no route, so route-map `{}` entry {} never matches; define `{family} prefix-list {list} ...`", e.name, e.seq),
                        ));
                    }
                }
            }
        }
        for (pos, message, hint) in found {
            self.report(Severity::Warning, pos, message, Some(hint));
        }
    }

    /// `update-source` names a configured Ethernet interface.
    fn update_sources(&mut self) {
        let Some(bgp) = &self.config.bgp else { return };
        let mut found = Vec::new();
        for (key, peer) in peers(bgp) {
            let Some(src) = &peer.update_source else {
                continue;
            };
            let pos = self.at(BgpAt::UpdateSource(key));
            match src.parse::<InterfaceName>() {
                Ok(name) if self.config.interface_by_name(&name).is_none() => found.push((
                    pos,
                    format!("update-source {name} is not a configured interface"),
                    format!("configure `interface {name}` with an address, or remove the update-source"),
                )),
                Ok(_) => {}
                Err(_) => found.push((
                    pos,
                    format!("update-source `{src}` is not an Ethernet interface; railyard leaves it out"),
                    "railyard models Ethernet interfaces only: the session uses the outgoing interface's address".into(),
                )),
            }
        }
        for (pos, message, hint) in found {
            self.report(Severity::Warning, pos, message, Some(hint));
        }
    }
}

/// Whether every template the chain from `first` names exists (and it
/// does not loop).
fn chain_complete(bgp: &crate::bgp::Bgp, first: Option<&str>) -> bool {
    let mut next = first;
    let mut steps = 0;
    while let Some(name) = next {
        let Some(t) = bgp.template(name) else {
            return false;
        };
        steps += 1;
        if steps > bgp.templates.len() {
            return false;
        }
        next = t.peer.inherit.as_deref();
    }
    true
}

/// Whether following `inherit peer` from template `start` comes back to it.
fn cycles(bgp: &crate::bgp::Bgp, start: &str) -> bool {
    let mut seen: HashMap<&str, ()> = HashMap::new();
    let mut next = bgp.template(start).and_then(|t| t.peer.inherit.as_deref());
    while let Some(name) = next {
        if name == start {
            return true;
        }
        if seen.insert(name, ()).is_some() {
            return false;
        }
        next = bgp.template(name).and_then(|t| t.peer.inherit.as_deref());
    }
    false
}

/// Check the routing model, appending to `out`.
pub(super) fn check(
    config: &Config,
    map: &SourceMap,
    sources: &Sources<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let mut c = Checker {
        config,
        map,
        sources,
        out,
    };
    c.features();
    c.peers();
    c.references();
    c.update_sources();
}
