//! Static routes computed from a topology.
//!
//! **Switches**: for every host subnet (a routed link with a host on it,
//! or a VLAN) that is not connected to the switch, one `ip route` per next
//! hop on a shortest path to the switch the subnet hangs off (the link's,
//! or the one with the VLAN's SVI), counted in switch–switch hops
//! (breadth-first search over the routed switch–switch links; a
//! port-channel is one next hop, a trunk none). Several next hops form an
//! ECMP group. Switch–switch link subnets are not routed.
//!
//! **Hosts**: NIC n (in the order the host's links are written) gets
//! routing table 100+n holding its connected subnet and a default route via
//! its switch, selected by `ip rule from ADDRESS` — traffic sourced from a
//! NIC leaves by that NIC, as RDMA traffic does. In the main table every
//! NIC routes the other host subnets of its own switch (its rail; for a NIC
//! in a VLAN, the switch of the VLAN's SVI) via that switch, except those
//! the host is on itself, and the default route goes via the first NIC's
//! switch.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::topology::{Ipv4Net, Topology};

/// A static route of a switch: a prefix and its next hops (ECMP if several).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchRoute {
    /// Destination.
    pub prefix: Ipv4Net,
    /// Next-hop addresses, sorted.
    pub next_hops: Vec<Ipv4Addr>,
}

/// Each switch's switch neighbours, one entry per switch–switch link.
type Adjacency<'a> = BTreeMap<&'a str, Vec<&'a str>>;

/// Hop counts from `target` to every switch, over switch–switch links.
fn distances<'a>(adj: &Adjacency<'a>, target: &'a str) -> BTreeMap<&'a str, usize> {
    let mut dist = BTreeMap::new();
    dist.insert(target, 0usize);
    let mut queue = VecDeque::from([target]);
    while let Some(s) = queue.pop_front() {
        let d = dist[s];
        for &remote in adj.get(s).into_iter().flatten() {
            if !dist.contains_key(remote) {
                dist.insert(remote, d + 1);
                queue.push_back(remote);
            }
        }
    }
    dist
}

/// The static routes of switch `sw`, in the order of
/// [`Topology::host_subnets`]: routed host links' subnets in link order,
/// then VLANs' in file order.
pub fn switch_routes(t: &Topology, sw: &str) -> Vec<SwitchRoute> {
    let mut out = Vec::new();
    // The routed switch–switch links and this switch's, gathered once: a
    // generated 1,024-NIC fabric has 3,000 links and 1,024 host subnets,
    // and scanning every link by name per subnet took seconds. A trunk
    // carries VLANs but routes nothing; a port-channel's members are one
    // next hop.
    let switches: BTreeSet<&str> = t.switches.iter().map(|s| s.name.as_str()).collect();
    let mut adj: Adjacency<'_> = BTreeMap::new();
    for l in t.links.iter().filter(|l| l.subnet.is_some()) {
        let (a, b) = (l.a.node.as_str(), l.b.node.as_str());
        if switches.contains(a) && switches.contains(b) {
            adj.entry(a).or_default().push(b);
            adj.entry(b).or_default().push(a);
        }
    }
    let mine: Vec<_> = t
        .links_of(sw)
        .filter(|(l, _, r)| l.subnet.is_some() && switches.contains(r.node.as_str()))
        .collect();
    // One search per switch that has hosts, not per host subnet: a
    // generated 1,024-NIC fabric has 32 leaves but 1,024 host subnets.
    let mut searched: BTreeMap<&str, BTreeMap<&str, usize>> = BTreeMap::new();
    for (prefix, home) in t.host_subnets() {
        if home == sw {
            continue;
        }
        let dist = searched
            .entry(home)
            .or_insert_with(|| distances(&adj, home));
        let Some(&here) = dist.get(sw) else { continue };
        let mut hops: Vec<Ipv4Addr> = mine
            .iter()
            .filter(|(_, _, r)| dist.get(r.node.as_str()).is_some_and(|d| d + 1 == here))
            .filter_map(|(link, _, r)| t.address_of(link, r))
            .collect();
        hops.sort();
        hops.dedup();
        if !hops.is_empty() {
            out.push(SwitchRoute {
                prefix,
                next_hops: hops,
            });
        }
    }
    out
}

/// One NIC of a host, with everything `ip` needs to set it up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostNic {
    /// Linux interface name.
    pub ifname: String,
    /// The host's address on it.
    pub address: Ipv4Addr,
    /// The subnet the NIC is on: its link's, or its VLAN's.
    pub subnet: Ipv4Net,
    /// The switch's address on the link (its SVI's in a VLAN).
    pub gateway: Ipv4Addr,
    /// The switch and port at the other end.
    pub switch: String,
    /// The switch port.
    pub switch_port: String,
    /// MTU of the link.
    pub mtu: u16,
    /// Source-routing table of this NIC (100 + its index).
    pub table: u32,
    /// Main-table routes via this NIC: the other host subnets of its switch.
    pub rail_routes: Vec<Ipv4Net>,
}

/// A host's NICs in the order its links are written; the first carries the
/// default route. A NIC in a VLAN has the VLAN's subnet and its SVI as the
/// gateway; its rail routes are the other host subnets the SVI's switch
/// routes. Subnets the host is on itself are never rail routes.
pub fn host_nics(t: &Topology, host: &str) -> Vec<HostNic> {
    let own: Vec<Ipv4Net> = t
        .links_of(host)
        .filter_map(|(l, _, _)| t.host_subnet(l))
        .collect();
    let subnets = t.host_subnets();
    t.links_of(host)
        .enumerate()
        .filter_map(|(i, (l, local, remote))| {
            let gateway_switch = t.gateway_switch(l)?;
            Some(HostNic {
                ifname: local.port.clone(),
                address: t.address_of(l, local)?,
                subnet: t.host_subnet(l)?,
                gateway: t.address_of(l, remote)?,
                switch: remote.node.clone(),
                switch_port: remote.port.clone(),
                mtu: l.mtu,
                table: 100 + i as u32,
                rail_routes: subnets
                    .iter()
                    .filter(|(n, home)| *home == gateway_switch && !own.contains(n))
                    .map(|(n, _)| *n)
                    .collect(),
            })
        })
        .collect()
}

/// The `ip` commands (arguments after `ip -n NS`) that give a host its
/// addresses and routes, in order.
pub fn host_commands(nics: &[HostNic]) -> Vec<Vec<String>> {
    let mut cmds: Vec<Vec<String>> = Vec::new();
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for n in nics {
        let addr = format!("{}/{}", n.address, n.subnet.len);
        cmds.push(s(&["addr", "add", &addr, "dev", &n.ifname]));
    }
    for n in nics {
        let table = n.table.to_string();
        let (gw, net) = (n.gateway.to_string(), n.subnet.to_string());
        for r in &n.rail_routes {
            cmds.push(s(&[
                "route",
                "add",
                &r.to_string(),
                "via",
                &gw,
                "dev",
                &n.ifname,
            ]));
        }
        cmds.push(s(&[
            "route", "add", &net, "dev", &n.ifname, "table", &table,
        ]));
        cmds.push(s(&[
            "route", "add", "default", "via", &gw, "dev", &n.ifname, "table", &table,
        ]));
        cmds.push(s(&[
            "rule",
            "add",
            "from",
            &n.address.to_string(),
            "lookup",
            &table,
        ]));
    }
    if let Some(first) = nics.first() {
        cmds.push(s(&[
            "route",
            "add",
            "default",
            "via",
            &first.gateway.to_string(),
            "dev",
            &first.ifname,
        ]));
    }
    cmds
}
