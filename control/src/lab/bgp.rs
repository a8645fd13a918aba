//! eBGP for a lab topology, as RFC 7938 plans a data-centre fabric.
//!
//! Every switch–switch link is an eBGP session over its /31, with BFD. AS
//! numbers follow the tiers of the fabric, counted from the hosts:
//!
//! - a switch with hosts (a rail or leaf) has an AS of its own, 65001 on,
//!   in the order the topology names them;
//! - the switches one hop above share an AS per group that serves the same
//!   leaves (RFC 7938's "Tier-2 devices in a cluster share an ASN"): 65000,
//!   then 64999 and down for further groups;
//! - the switches above those (super-spines) share 64900.
//!
//! Sharing an AS among spines keeps a path from climbing back up through
//! another spine (the AS path would repeat). Each switch advertises its
//! host subnets with `network`, and `maximum-paths` with `bestpath as-path
//! multipath-relax` spreads traffic over every spine, as the computed
//! static routes did.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::fmt::Write as _;

use super::topology::Topology;

/// BFD timers of the lab's sessions: 300 ms × 3, so a lost link is
/// noticed within a second.
pub const BFD_INTERVAL_MS: u32 = 300;
/// BFD detection multiplier.
pub const BFD_MULTIPLIER: u32 = 3;
/// ECMP paths a lab switch installs.
const MAXIMUM_PATHS: u32 = 64;

/// The AS number of every switch of `t` (see the module doc).
pub fn as_numbers(t: &Topology) -> BTreeMap<String, u32> {
    let switches: BTreeSet<&str> = t.switches.iter().map(|s| s.name.as_str()).collect();
    let mut neighbours: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut leaves: BTreeSet<&str> = BTreeSet::new();
    for l in &t.links {
        let (a, b) = (l.a.node.as_str(), l.b.node.as_str());
        match (switches.contains(a), switches.contains(b)) {
            (true, true) => {
                neighbours.entry(a).or_default().insert(b);
                neighbours.entry(b).or_default().insert(a);
            }
            (true, false) => {
                leaves.insert(a);
            }
            (false, true) => {
                leaves.insert(b);
            }
            (false, false) => {}
        }
    }
    // Tier: switch hops to the nearest leaf.
    let mut tier: BTreeMap<&str, usize> = leaves.iter().map(|l| (*l, 0)).collect();
    let mut queue: VecDeque<&str> = leaves.iter().copied().collect();
    while let Some(s) = queue.pop_front() {
        let d = tier[s];
        for &n in neighbours.get(s).into_iter().flatten() {
            if !tier.contains_key(n) {
                tier.insert(n, d + 1);
                queue.push_back(n);
            }
        }
    }
    let mut asn = BTreeMap::new();
    let mut next_leaf = 65001;
    let mut groups: BTreeMap<BTreeSet<&str>, u32> = BTreeMap::new();
    for s in &t.switches {
        let name = s.name.as_str();
        let n = match tier.get(name) {
            Some(0) => {
                next_leaf += 1;
                next_leaf - 1
            }
            Some(1) => {
                let served: BTreeSet<&str> = neighbours
                    .get(name)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|n| tier.get(n) == Some(&0))
                    .collect();
                let next = 65000 - groups.len() as u32;
                *groups.entry(served).or_insert(next)
            }
            _ => 64900,
        };
        asn.insert(s.name.clone(), n);
    }
    asn
}

/// The BGP part of switch `sw`'s configuration (features, BFD timers and
/// the `router bgp` section), given every switch's AS number.
pub fn bgp_section(t: &Topology, sw: &str, asn: &BTreeMap<String, u32>) -> String {
    let mut ports: Vec<_> = t.links_of(sw).collect();
    ports.sort_by(|(_, a, _), (_, b, _)| crate::natural::cmp(&a.port, &b.port));
    let router_id = ports
        .iter()
        .find_map(|(l, me, _)| t.address_of(l, me))
        .map_or_else(|| "0.0.0.1".into(), |a| a.to_string());
    let mut out = String::new();
    let _ = writeln!(out, "feature bgp");
    let _ = writeln!(out, "feature bfd");
    let _ = writeln!(
        out,
        "bfd interval {BFD_INTERVAL_MS} min_rx {BFD_INTERVAL_MS} multiplier {BFD_MULTIPLIER}"
    );
    let _ = writeln!(out, "router bgp {}", asn.get(sw).copied().unwrap_or(65001));
    let _ = writeln!(out, "  router-id {router_id}");
    let _ = writeln!(out, "  bestpath as-path multipath-relax");
    let _ = writeln!(out, "  address-family ipv4 unicast");
    let _ = writeln!(out, "    maximum-paths {MAXIMUM_PATHS}");
    for (l, _, remote) in &ports {
        if let (false, Some(subnet)) = (t.is_switch(&remote.node), l.subnet) {
            let _ = writeln!(out, "    network {subnet}");
        }
    }
    for (l, _, remote) in &ports {
        if !t.is_switch(&remote.node) {
            continue;
        }
        let Some(peer) = t.address_of(l, remote) else {
            continue;
        };
        let _ = writeln!(out, "  neighbor {peer}");
        let _ = writeln!(
            out,
            "    remote-as {}",
            asn.get(&remote.node).copied().unwrap_or(65000)
        );
        let _ = writeln!(out, "    description {} {}", remote.node, remote.port);
        let _ = writeln!(out, "    bfd");
        let _ = writeln!(out, "    address-family ipv4 unicast");
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::topology::parse_str;

    fn rail_spine() -> Topology {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../scripts/topologies/rail-spine.topo"),
        )
        .unwrap();
        parse_str(&text, std::path::Path::new("rail-spine.topo")).unwrap()
    }

    #[test]
    fn rails_get_an_as_each_and_spines_share_one() {
        let asn = as_numbers(&rail_spine());
        assert_eq!(asn["rail1"], 65001);
        assert_eq!(asn["rail2"], 65002);
        assert_eq!(asn["spine1"], 65000);
        assert_eq!(asn["spine2"], 65000);
    }

    #[test]
    fn a_rail_peers_with_each_spine_over_its_uplink_and_advertises_its_hosts() {
        let t = rail_spine();
        let s = bgp_section(&t, "rail1", &as_numbers(&t));
        assert!(
            s.starts_with("feature bgp\nfeature bfd\nbfd interval 300 min_rx 300 multiplier 3\n"),
            "{s}"
        );
        assert!(
            s.contains("router bgp 65001\n  router-id 10.1.1.1\n"),
            "{s}"
        );
        assert!(s.contains("    network 10.1.4.0/24\n"), "{s}");
        assert!(s.contains("  neighbor 10.255.1.1\n    remote-as 65000\n    description spine1 Ethernet1/1\n    bfd\n"), "{s}");
        assert!(
            s.contains("  neighbor 10.255.1.3\n    remote-as 65000\n"),
            "{s}"
        );
        let spine = bgp_section(&t, "spine1", &as_numbers(&t));
        assert!(!spine.contains("network"), "{spine}");
        assert!(
            spine.contains("  neighbor 10.255.2.0\n    remote-as 65002\n"),
            "{spine}"
        );
    }

    #[test]
    fn three_tiers_give_super_spines_one_as_and_each_pod_its_own() {
        let text = "switch l1 role rail\nswitch l2 role rail\nswitch l3 role rail\nswitch l4 role rail\n\
            switch s1 role spine\nswitch s2 role spine\nswitch s3 role spine\nswitch s4 role spine\n\
            switch ss1 role spine\nhost h1\nhost h2\nhost h3\nhost h4\n\
            link h1:eth0 l1:Ethernet1/1 subnet 10.1.0.0/24\nlink h2:eth0 l2:Ethernet1/1 subnet 10.2.0.0/24\n\
            link h3:eth0 l3:Ethernet1/1 subnet 10.3.0.0/24\nlink h4:eth0 l4:Ethernet1/1 subnet 10.4.0.0/24\n\
            link l1:Ethernet1/31 s1:Ethernet1/1 subnet 10.255.0.0/31\nlink l2:Ethernet1/31 s1:Ethernet1/2 subnet 10.255.0.2/31\n\
            link l1:Ethernet1/32 s2:Ethernet1/1 subnet 10.255.0.4/31\nlink l2:Ethernet1/32 s2:Ethernet1/2 subnet 10.255.0.6/31\n\
            link l3:Ethernet1/31 s3:Ethernet1/1 subnet 10.255.0.8/31\nlink l4:Ethernet1/31 s3:Ethernet1/2 subnet 10.255.0.10/31\n\
            link l3:Ethernet1/32 s4:Ethernet1/1 subnet 10.255.0.12/31\nlink l4:Ethernet1/32 s4:Ethernet1/2 subnet 10.255.0.14/31\n\
            link s1:Ethernet1/31 ss1:Ethernet1/1 subnet 10.255.1.0/31\nlink s3:Ethernet1/31 ss1:Ethernet1/2 subnet 10.255.1.2/31\n";
        let t = parse_str(text, std::path::Path::new("three.topo")).unwrap();
        let asn = as_numbers(&t);
        assert_eq!((asn["l1"], asn["l4"]), (65001, 65004));
        assert_eq!(asn["s1"], asn["s2"], "one pod's spines share an AS");
        assert_eq!(asn["s3"], asn["s4"]);
        assert_ne!(asn["s1"], asn["s3"], "pods differ");
        assert_eq!(asn["ss1"], 64900);
    }
}
