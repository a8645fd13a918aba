//! The NX-OS routing model translated into an FRR configuration (`frr.conf`
//! for zebra, bgpd and bfdd).
//!
//! The translation keeps NX-OS's meaning where FRR's defaults differ, and
//! says so at each place:
//! * NX-OS sends and accepts eBGP routes without any policy; FRR (since
//!   7.4) does not, unless told `no bgp ebgp-requires-policy`.
//! * On NX-OS a neighbor exchanges a family only when it has that
//!   `address-family` block; FRR activates IPv4 unicast for every neighbor
//!   by default. So `no bgp default ipv4-unicast`, and `neighbor X activate`
//!   exactly where NX-OS has the block.
//! * NX-OS sends no communities unless told `send-community`; FRR sends all
//!   of them by default. So each kind not asked for is turned off.
//! * NX-OS peer templates are copied into each neighbor that inherits them,
//!   the neighbor's own settings winning; FRR peer-groups refuse some
//!   per-member differences (a member's remote AS against the group's) and
//!   share outbound policy. So templates are applied here and each neighbor
//!   is written out in full, with a comment naming its template.
//! * `redistribute direct` is FRR's `redistribute connected`.
//! * BFD intervals: NX-OS takes them from the interface the session runs
//!   over (its `bfd interval`, else the global one, else 50 ms × 3); FRR
//!   takes them from a profile. One profile per distinct interval set, and
//!   each neighbor with `bfd` names the profile of its interface.
//! * `no zebra nexthop kernel enable`: zebra installs routes with their
//!   next hops inline (`via … dev …`), not as references to kernel
//!   next-hop objects (`nhid N`), which is what railyard's FIB follows.
//! * `frr defaults traditional`: the profile whose timers (keepalive 60 s,
//!   hold 180 s) and best-path rules are NX-OS's; `datacenter` would change
//!   them behind the configuration's back.

use std::fmt::Write as _;
use std::net::IpAddr;

use railyard_config::{
    Afi, Asn, BfdInterval, Bgp, BgpAf, Config, InterfaceName, IpPrefix, PeerConfig, PrefixList,
    RouteMap, RouteMapSet,
};

/// The Linux name of a port's mirror interface: `Ethernet1/1` is `Eth1-1`,
/// `Ethernet1/49/4` is `Eth1-49-4`.
///
/// Linux names may not contain `/` and are at most 15 bytes; module, port
/// and lane are each at most three digits, so the longest is
/// `Eth255-255-255`, 14 bytes.
pub fn linux_name(name: &InterfaceName) -> String {
    match name.sub {
        Some(sub) => format!("Eth{}-{}-{sub}", name.module, name.port),
        None => format!("Eth{}-{}", name.module, name.port),
    }
}

/// A complete `frr.conf` for zebra, bgpd and bfdd saying what the NX-OS
/// configuration's routing sections say; `ifname` gives the Linux name of
/// a port (usually [`linux_name`]).
///
/// With no `router bgp` the file still names the host and carries the
/// prefix-lists and route-maps, so FRR starts with an empty BGP. The text
/// is deterministic: the same configuration gives the same file.
pub fn frr_config(config: &Config, ifname: impl Fn(&InterfaceName) -> String) -> String {
    let mut out = String::new();
    out.push_str("! frr.conf written by railyard from the NX-OS configuration\n");
    out.push_str("frr defaults traditional\n");
    if let Some(h) = &config.hostname {
        let _ = writeln!(out, "hostname {h}");
    }
    out.push_str("no zebra nexthop kernel enable\n");
    out.push_str("!\n");
    let combined = combined_lists(config);
    for list in config.prefix_lists.iter().chain(&combined) {
        prefix_list(&mut out, list);
    }
    for entry in &config.route_maps {
        route_map(&mut out, entry);
    }
    let profiles = bfd_profiles(config);
    if !profiles.is_empty() {
        out.push_str("bfd\n");
        for p in &profiles {
            let _ = writeln!(out, " profile {}", profile_name(p));
            let _ = writeln!(out, "  transmit-interval {}", p.tx_ms);
            let _ = writeln!(out, "  receive-interval {}", p.min_rx_ms);
            let _ = writeln!(out, "  detect-multiplier {}", p.multiplier);
            out.push_str(" exit\n");
        }
        out.push_str("exit\n!\n");
    }
    if let Some(bgp) = &config.bgp {
        router_bgp(&mut out, config, bgp, &ifname);
    }
    out
}

/// `ip prefix-list` / `ipv6 prefix-list`: FRR's syntax is NX-OS's.
fn prefix_list(out: &mut String, list: &PrefixList) {
    let family = family_word(list.afi);
    if let Some(d) = &list.description {
        // FRR keeps no description on a prefix-list; keep it as a comment.
        let _ = writeln!(out, "! {family} prefix-list {}: {d}", list.name);
    }
    for r in &list.rules {
        let _ = write!(
            out,
            "{family} prefix-list {} seq {} {} {}",
            list.name,
            r.seq,
            r.action.keyword(),
            r.prefix
        );
        if let Some(ge) = r.ge {
            let _ = write!(out, " ge {ge}");
        }
        if let Some(le) = r.le {
            let _ = write!(out, " le {le}");
        }
        out.push('\n');
    }
    out.push_str("!\n");
}

/// `ip` or `ipv6`.
fn family_word(afi: Afi) -> &'static str {
    match afi {
        Afi::Ipv4 => "ip",
        Afi::Ipv6 => "ipv6",
    }
}

/// The name of the list standing for a route-map entry's several
/// prefix-lists of one family.
fn combined_name(entry: &RouteMap, afi: Afi) -> String {
    format!("{}-{}-{}", entry.name, entry.seq, family_word(afi))
}

/// Lists for route-map entries that match several prefix-lists of one
/// family (`match ip address prefix-list A B`, any of which matches).
///
/// FRR's `match ip address prefix-list` takes one name, a second line
/// replacing the first; so the entry matches a list holding the rules of
/// all of them, in order. That is the same match when the lists permit
/// only (what a summarisation policy writes): a route any of them permits
/// is permitted by the concatenation.
fn combined_lists(config: &Config) -> Vec<PrefixList> {
    let mut out = Vec::new();
    for entry in &config.route_maps {
        for (afi, names) in [
            (Afi::Ipv4, &entry.match_ipv4),
            (Afi::Ipv6, &entry.match_ipv6),
        ] {
            if names.len() < 2 {
                continue;
            }
            let mut rules = Vec::new();
            for name in names {
                if let Some(list) = config.prefix_list(afi, name) {
                    rules.extend(list.rules.iter().cloned());
                }
            }
            for (i, r) in rules.iter_mut().enumerate() {
                r.seq = (i as u32 + 1) * 5;
            }
            out.push(PrefixList {
                afi,
                name: combined_name(entry, afi),
                description: Some(format!("any of {}", names.join(", "))),
                rules,
            });
        }
    }
    out
}

/// One route-map entry.
fn route_map(out: &mut String, entry: &RouteMap) {
    let _ = writeln!(
        out,
        "route-map {} {} {}",
        entry.name,
        entry.action.keyword(),
        entry.seq
    );
    if let Some(d) = &entry.description {
        let _ = writeln!(out, " description {d}");
    }
    for (afi, names) in [
        (Afi::Ipv4, &entry.match_ipv4),
        (Afi::Ipv6, &entry.match_ipv6),
    ] {
        let name = match names.as_slice() {
            [] => continue,
            [one] => one.clone(),
            _ => combined_name(entry, afi),
        };
        let _ = writeln!(
            out,
            " match {} address prefix-list {name}",
            family_word(afi)
        );
    }
    for set in &entry.sets {
        // Each modelled `set` is spelled the same in FRR.
        let line = match set {
            RouteMapSet::LocalPreference(n) => format!("set local-preference {n}"),
            RouteMapSet::Metric(n) => format!("set metric {n}"),
            RouteMapSet::Weight(n) => format!("set weight {n}"),
            RouteMapSet::AsPathPrepend(asns) => {
                let v: Vec<String> = asns.iter().map(Asn::to_string).collect();
                format!("set as-path prepend {}", v.join(" "))
            }
        };
        let _ = writeln!(out, " {line}");
    }
    out.push_str("exit\n!\n");
}

/// The BFD profile's name for a set of intervals.
fn profile_name(b: &BfdInterval) -> String {
    format!("tx{}-rx{}-x{}", b.tx_ms, b.min_rx_ms, b.multiplier)
}

/// The BFD intervals NX-OS would run a session to `addr` with: those of
/// the interface whose subnet holds the address, else the global ones,
/// else NX-OS's default.
fn bfd_for(config: &Config, addr: IpAddr) -> BfdInterval {
    let on_link = config.interfaces.iter().find(|i| {
        i.ipv4
            .iter()
            .map(|p| IpPrefix::V4(*p))
            .chain(i.ipv6.iter().map(|p| IpPrefix::V6(*p)))
            .any(|p| p.contains(addr))
    });
    on_link
        .and_then(|i| i.bfd_interval)
        .or(config.bfd_interval)
        .unwrap_or(BfdInterval::NXOS_DEFAULT)
}

/// The distinct profiles the neighbors with `bfd` use, in first-use order.
fn bfd_profiles(config: &Config) -> Vec<BfdInterval> {
    let mut out: Vec<BfdInterval> = Vec::new();
    let Some(bgp) = &config.bgp else {
        return out;
    };
    for n in &bgp.neighbors {
        if bgp.effective(n).bfd {
            let b = bfd_for(config, n.addr);
            if !out.contains(&b) {
                out.push(b);
            }
        }
    }
    out
}

/// The `router bgp` block.
fn router_bgp(
    out: &mut String,
    config: &Config,
    bgp: &Bgp,
    ifname: &impl Fn(&InterfaceName) -> String,
) {
    let _ = writeln!(out, "router bgp {}", bgp.asn);
    if let Some(id) = bgp.router_id {
        let _ = writeln!(out, " bgp router-id {id}");
    }
    if bgp.log_neighbor_changes {
        let _ = writeln!(out, " bgp log-neighbor-changes");
    }
    // NX-OS semantics (see the module documentation).
    out.push_str(" no bgp ebgp-requires-policy\n");
    out.push_str(" no bgp default ipv4-unicast\n");
    if bgp.multipath_relax {
        out.push_str(" bgp bestpath as-path multipath-relax\n");
    }
    let peers: Vec<(IpAddr, Option<&str>, PeerConfig)> = bgp
        .neighbors
        .iter()
        .map(|n| (n.addr, n.peer.inherit.as_deref(), bgp.effective(n)))
        // Validation rejects a neighbor without a remote AS; one built in
        // code without it cannot be expressed in FRR and is left out.
        .filter(|(_, _, p)| p.remote_as.is_some())
        .collect();
    for (addr, template, p) in &peers {
        if let Some(t) = template {
            let _ = writeln!(out, " ! neighbor {addr} inherits template peer {t}");
        }
        if let Some(asn) = p.remote_as {
            let _ = writeln!(out, " neighbor {addr} remote-as {asn}");
        }
        if let Some(d) = &p.description {
            let _ = writeln!(out, " neighbor {addr} description {d}");
        }
        // Only Ethernet ports have mirrors; validation warned about others.
        if let Some(src) = p
            .update_source
            .as_deref()
            .and_then(|s| s.parse::<InterfaceName>().ok())
        {
            let _ = writeln!(out, " neighbor {addr} update-source {}", ifname(&src));
        }
        if p.bfd {
            let _ = writeln!(out, " neighbor {addr} bfd");
            let profile = profile_name(&bfd_for(config, *addr));
            let _ = writeln!(out, " neighbor {addr} bfd profile {profile}");
        }
        if p.shutdown {
            let _ = writeln!(out, " neighbor {addr} shutdown");
        }
    }
    for afi in [Afi::Ipv4, Afi::Ipv6] {
        let af = match afi {
            Afi::Ipv4 => bgp.ipv4.as_ref(),
            Afi::Ipv6 => bgp.ipv6.as_ref(),
        };
        let active: Vec<_> = peers
            .iter()
            .filter_map(|(addr, _, p)| p.af(afi).map(|af| (addr, af)))
            .collect();
        if af.is_none() && active.is_empty() {
            continue;
        }
        out.push_str(" !\n");
        let _ = writeln!(out, " address-family {} unicast", afi.keyword());
        if let Some(af) = af {
            router_af(out, af);
        }
        for (addr, paf) in active {
            let _ = writeln!(out, "  neighbor {addr} activate");
            // FRR sends every kind by default; NX-OS only those asked for.
            if !paf.send_community {
                let _ = writeln!(out, "  no neighbor {addr} send-community standard");
            }
            if !paf.send_community_extended {
                let _ = writeln!(out, "  no neighbor {addr} send-community extended");
            }
            let _ = writeln!(out, "  no neighbor {addr} send-community large");
            if let Some(rm) = &paf.route_map_in {
                let _ = writeln!(out, "  neighbor {addr} route-map {rm} in");
            }
            if let Some(rm) = &paf.route_map_out {
                let _ = writeln!(out, "  neighbor {addr} route-map {rm} out");
            }
        }
        out.push_str(" exit-address-family\n");
    }
    out.push_str("exit\n!\n");
}

/// The router-level statements of one address family.
fn router_af(out: &mut String, af: &BgpAf) {
    for n in &af.networks {
        let _ = write!(out, "  network {}", n.prefix);
        if let Some(rm) = &n.route_map {
            let _ = write!(out, " route-map {rm}");
        }
        out.push('\n');
    }
    if let Some(rm) = &af.redistribute_direct {
        // NX-OS's `direct` routes are FRR's `connected` ones.
        let _ = writeln!(out, "  redistribute connected route-map {rm}");
    }
    for a in &af.aggregates {
        let _ = write!(out, "  aggregate-address {}", a.prefix);
        if a.as_set {
            out.push_str(" as-set");
        }
        if a.summary_only {
            out.push_str(" summary-only");
        }
        out.push('\n');
    }
    if let Some(n) = af.maximum_paths {
        let _ = writeln!(out, "  maximum-paths {n}");
    }
    if let Some(n) = af.maximum_paths_ibgp {
        let _ = writeln!(out, "  maximum-paths ibgp {n}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linux_names_fit_in_fifteen_bytes() {
        assert_eq!(linux_name(&InterfaceName::new(1, 1)), "Eth1-1");
        assert_eq!(linux_name(&InterfaceName::breakout(1, 49, 4)), "Eth1-49-4");
        let longest = linux_name(&InterfaceName::breakout(255, 255, 255));
        assert_eq!(longest, "Eth255-255-255");
        assert!(longest.len() <= 15);
    }
}
