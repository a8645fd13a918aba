//! The Layer-2 part of a lab topology: VLANs with their SVIs, hosts on
//! access ports, trunks between switches and LACP port-channels.
//!
//! ```text
//! vlan 101 on leaf1 subnet 10.0.1.0/28 name RAIL-1   # VLAN 101, SVI 10.0.1.1 on leaf1
//! link h1:eth0 leaf1:Ethernet1/1 vlan 101            # access port; h1 gets 10.0.1.2
//! link leaf1:Ethernet1/9 leaf2:Ethernet1/9 trunk 101 # leaf2 carries VLAN 101 too
//! link leaf1:Ethernet1/31 spine1:Ethernet1/1 channel 1 subnet 10.255.0.0/31
//! link leaf1:Ethernet1/32 spine1:Ethernet1/2 channel 1 subnet 10.255.0.0/31
//! ```
//!
//! A VLAN spans the switch of its SVI and every switch that trunks carrying
//! it reach from there; a host's `vlan N` names the VLAN N that spans its
//! switch. Hosts take the VLAN's addresses from the second on (`.2`, `.3`,
//! … in file order); the SVI, the first, is their gateway. `channel N`
//! makes port-channel N of both switches out of every link that names it;
//! they run LACP (`mode active`, `lacp rate fast`).

use std::collections::{BTreeMap, VecDeque};
use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use super::topology::{did_you_mean, Endpoint, Ipv4Net, LabRouting, LinkDef, Topology, Word};

/// A VLAN of the topology and its SVI (`vlan N on SWITCH subnet PREFIX`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VlanDef {
    /// The VLAN number, 2-4094.
    pub id: u16,
    /// The switch with the VLAN's SVI.
    pub switch: String,
    /// The VLAN's subnet: the SVI takes the first address, hosts the next.
    pub subnet: Ipv4Net,
    /// The VLAN's `name`, if given.
    pub name: Option<String>,
    /// Line of the `vlan` statement.
    pub line: usize,
    /// Every switch the VLAN spans: the SVI's, then those that trunks
    /// carrying it reach, in the order found.
    pub switches: Vec<String>,
}

impl VlanDef {
    /// The SVI's address, the first of the subnet: the hosts' gateway.
    pub fn gateway(&self) -> Ipv4Addr {
        self.subnet.nth(1)
    }

    /// The SVI's interface name, `Vlan101`.
    pub fn svi_name(&self) -> String {
        format!("Vlan{}", self.id)
    }
}

/// Where the parser saw the Layer-2 values it leaves to [`resolve`]: the
/// column of each `vlan` statement's number (in `Topology::vlans` order),
/// each access link's `vlan` value, each trunk's VLANs.
#[derive(Debug, Default)]
pub(super) struct L2Marks {
    /// Column of the VLAN number of each `vlan` statement.
    pub(super) vlan_cols: Vec<usize>,
    /// (link index, column of its `vlan` value).
    pub(super) access: Vec<(usize, usize)>,
    /// (link index, its VLANs each with the column of its list item).
    pub(super) trunks: Vec<(usize, VlanItems)>,
}

/// A VLAN list as written: each VLAN with the column of its list item.
pub(super) type VlanItems = Vec<(u16, usize)>;

/// The range of VLANs a lab uses: VLAN 1 is every port's default and a
/// trunk's untagged native VLAN.
const VLAN_HINT: &str = "a VLAN is a number 2-4094 (VLAN 1 is every port's default)";

/// Reads a VLAN number, 2-4094.
///
/// # Errors
/// The message and hint.
pub(super) fn parse_vlan_id(text: &str) -> Result<u16, (String, String)> {
    match text.parse::<u16>() {
        Ok(v) if (2..=railyard_config::MAX_VLAN).contains(&v) => Ok(v),
        _ => Err((format!("`{text}` is not a VLAN"), VLAN_HINT.into())),
    }
}

/// Reads a VLAN list (`101-102,105`) that starts at column `col`.
///
/// # Errors
/// The column of the item at fault, the message and the hint.
pub(super) fn parse_vlan_list(
    text: &str,
    col: usize,
) -> Result<VlanItems, (usize, String, String)> {
    let mut out = Vec::new();
    let mut at = col;
    for item in text.split(',') {
        if item.is_empty() {
            return Err((
                at,
                "empty item in VLAN list".into(),
                "separate VLANs with single commas, e.g. `101-102,105`".into(),
            ));
        }
        let parsed = match item.split_once('-') {
            Some((a, b)) => parse_vlan_id(a).and_then(|a| {
                let b = parse_vlan_id(b)?;
                if b < a {
                    Err((
                        format!("VLAN range `{item}` ends before it starts"),
                        format!("write the lower number first: `{b}-{a}`"),
                    ))
                } else {
                    Ok(a..=b)
                }
            }),
            None => parse_vlan_id(item).map(|v| v..=v),
        };
        match parsed {
            Ok(r) => out.extend(r.map(|v| (v, at))),
            Err((m, h)) => {
                return Err((at, m, format!("{h}; lists are written like `101-102,105`")))
            }
        }
        at += item.chars().count() + 1;
    }
    Ok(out)
}

/// A VLAN list in NX-OS form, runs as ranges: `101-102,105`.
pub fn vlan_list(vlans: &[u16]) -> String {
    let mut set = railyard_config::VlanSet::new();
    for v in vlans {
        set.insert(*v);
    }
    set.to_string()
}

/// Reads `vlan N on SWITCH subnet PREFIX [name NAME]` (words `w` of line
/// `lno`), given the subnets taken so far (prefix, line, whose). Returns
/// the VLAN and the column of its number, or reports the first problem
/// through `err` (column, message, hint).
pub(super) fn parse_vlan_statement(
    topo: &Topology,
    w: &[Word<'_>],
    lno: usize,
    subnets: &[(Ipv4Net, usize, String)],
    err: &mut dyn FnMut(usize, String, Option<String>),
) -> Option<(VlanDef, usize)> {
    const EXAMPLE: &str = "e.g. `vlan 101 on rail1 subnet 10.0.1.0/28 name RAIL-1`";
    let end = |word: &Word<'_>| word.col + word.text.chars().count();
    let kw = w.first()?;
    let Some(idw) = w.get(1) else {
        err(
            end(kw),
            "`vlan` needs a number".into(),
            Some(EXAMPLE.into()),
        );
        return None;
    };
    let id = match parse_vlan_id(idw.text) {
        Ok(id) => id,
        Err((m, h)) => {
            err(idw.col, m, Some(h));
            return None;
        }
    };
    match w.get(2) {
        Some(on) if on.text == "on" => {}
        Some(other) => {
            err(
                other.col,
                format!("expected `on SWITCH`, not `{}`", other.text),
                Some(format!("the switch with the SVI: {EXAMPLE}")),
            );
            return None;
        }
        None => {
            err(
                end(idw),
                format!("VLAN {id} needs `on SWITCH`"),
                Some(format!("the switch with the SVI: {EXAMPLE}")),
            );
            return None;
        }
    }
    let Some(sw) = w.get(3) else {
        err(
            end(&w[2]),
            "`on` needs a switch".into(),
            Some(EXAMPLE.into()),
        );
        return None;
    };
    if !topo.is_switch(sw.text) {
        let hint = if topo.hosts.iter().any(|h| h.name == sw.text) {
            format!(
                "`{}` is a host: a VLAN's SVI is on a switch, and hosts join it with `vlan {id}` on their link",
                sw.text
            )
        } else {
            did_you_mean(sw.text, topo.switches.iter().map(|s| s.name.as_str())).unwrap_or_else(
                || "define it with `switch NAME role ROLE` (anywhere in the file)".into(),
            )
        };
        err(sw.col, format!("no switch named `{}`", sw.text), Some(hint));
        return None;
    }
    if let Some(prev) = topo
        .vlans
        .iter()
        .find(|v| v.id == id && v.switch == sw.text)
    {
        err(
            idw.col,
            format!("VLAN {id} is already on {} (line {})", sw.text, prev.line),
            Some("one `vlan` statement per VLAN and switch".into()),
        );
        return None;
    }
    let mut subnet = None;
    let mut name = None;
    let mut k = 4;
    while k < w.len() {
        let opt = w[k];
        let Some(val) = w.get(k + 1) else {
            err(opt.col, format!("`{}` needs a value", opt.text), None);
            return None;
        };
        match opt.text {
            "subnet" => {
                let n = match val.text.parse::<Ipv4Net>() {
                    Ok(n) => n,
                    Err(e) => {
                        err(val.col, e, Some("e.g. `subnet 10.0.1.0/28`".into()));
                        return None;
                    }
                };
                if n.len > 30 {
                    err(
                        val.col,
                        format!("/{} is too small for a VLAN", n.len),
                        Some("the SVI takes the first address and the hosts the next ones: use /30 or shorter (/28 holds 13 hosts)".into()),
                    );
                    return None;
                }
                if let Some((other, l, what)) = subnets.iter().find(|(o, _, _)| o.overlaps(n)) {
                    err(
                        val.col,
                        format!("{n} overlaps {other} of {what} on line {l}"),
                        Some("every link and VLAN needs a subnet of its own".into()),
                    );
                    return None;
                }
                subnet = Some(n);
            }
            "name" => {
                let ok = val.text.len() <= railyard_config::MAX_VLAN_NAME
                    && val
                        .text
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
                if !ok {
                    err(
                        val.col,
                        format!("`{}` is not a VLAN name", val.text),
                        Some(format!(
                            "at most {} letters, digits, `-`, `_` or `.`, e.g. `RAIL-1`",
                            railyard_config::MAX_VLAN_NAME
                        )),
                    );
                    return None;
                }
                name = Some(val.text.to_string());
            }
            other => {
                err(
                    opt.col,
                    format!("unknown VLAN option `{other}`"),
                    Some(did_you_mean(other, ["subnet", "name"]).unwrap_or_else(|| {
                        "options are `subnet PREFIX` (required) and `name NAME`".into()
                    })),
                );
                return None;
            }
        }
        k += 2;
    }
    let Some(subnet) = subnet else {
        err(
            end(&w[w.len() - 1]),
            format!("VLAN {id} needs a `subnet`"),
            Some("its SVI takes the first address and its hosts the next ones, e.g. `subnet 10.0.1.0/28`".into()),
        );
        return None;
    };
    Some((
        VlanDef {
            id,
            switch: sw.text.to_string(),
            subnet,
            name,
            line: lno,
            switches: vec![sw.text.to_string()],
        },
        idw.col,
    ))
}

/// Resolves what the links' Layer-2 values mean once every link is read:
/// the switches each VLAN spans, that every trunked VLAN and every host's
/// VLAN is one of them, and the hosts' addresses. Problems go to `err`
/// (line, column, message, hint).
pub(super) fn resolve(
    topo: &mut Topology,
    marks: &L2Marks,
    err: &mut dyn FnMut(usize, usize, String, Option<String>),
) {
    // Each VLAN spans the trunks that carry it, from its SVI's switch.
    for i in 0..topo.vlans.len() {
        let (id, home) = (topo.vlans[i].id, topo.vlans[i].switch.clone());
        let mut seen: Vec<String> = vec![home.clone()];
        let mut queue = VecDeque::from([home]);
        while let Some(s) = queue.pop_front() {
            for l in topo.links.iter().filter(|l| l.trunk.contains(&id)) {
                let far = if l.a.node == s {
                    &l.b.node
                } else if l.b.node == s {
                    &l.a.node
                } else {
                    continue;
                };
                if !seen.contains(far) {
                    seen.push(far.clone());
                    queue.push_back(far.clone());
                }
            }
        }
        let v = &topo.vlans[i];
        if let Some(other) = topo.vlans[..i]
            .iter()
            .find(|o| o.id == id && seen.contains(&o.switch))
        {
            err(
                v.line,
                marks.vlan_cols.get(i).copied().unwrap_or(1),
                format!(
                    "VLAN {id} on {} is the VLAN {id} of {} (line {}): trunks carry it between them",
                    v.switch, other.switch, other.line
                ),
                Some(format!(
                    "a VLAN has one SVI: number one of them differently, or leave {id} out of the trunks between {} and {}",
                    other.switch, v.switch
                )),
            );
        }
        topo.vlans[i].switches = seen;
    }
    for (li, items) in &marks.trunks {
        let l = &topo.links[*li];
        for (v, col) in items {
            if topo.vlan_at(*v, &l.a.node).is_none() {
                err(
                    l.line,
                    *col,
                    format!(
                        "VLAN {v} is on neither {} nor {} nor behind them",
                        l.a.node, l.b.node
                    ),
                    Some(format!(
                        "create it with `vlan {v} on SWITCH subnet PREFIX`, or leave it out of the trunk"
                    )),
                );
            }
        }
    }
    // Hosts take the VLAN's addresses in file order, from the second on.
    let mut next: Vec<u32> = vec![2; topo.vlans.len()];
    let mut nic_in: BTreeMap<(String, usize), usize> = BTreeMap::new();
    for (li, col) in &marks.access {
        let l = &topo.links[*li];
        let Some(id) = l.vlan else { continue };
        let (host, sw) = if topo.is_switch(&l.a.node) {
            (&l.b, &l.a)
        } else {
            (&l.a, &l.b)
        };
        let Some(vi) = topo
            .vlans
            .iter()
            .position(|v| v.id == id && v.switches.contains(&sw.node))
        else {
            let hint = match topo.vlans.iter().find(|v| v.id == id) {
                Some(v) => format!(
                    "VLAN {id} is on {}: carry it to {} with `trunk {id}` on a link toward {}, or create one with `vlan {id} on {} subnet PREFIX`",
                    v.switches.join(", "),
                    sw.node,
                    v.switch,
                    sw.node
                ),
                None => format!(
                    "create it with `vlan {id} on {} subnet PREFIX` (anywhere in the file)",
                    sw.node
                ),
            };
            err(
                l.line,
                *col,
                format!("VLAN {id} is not on {}", sw.node),
                Some(hint),
            );
            continue;
        };
        if let Some(prev) = nic_in.insert((host.node.clone(), vi), l.line) {
            err(
                l.line,
                *col,
                format!("{} has another NIC in VLAN {id} (line {prev})", host.node),
                Some("a host has one NIC per VLAN: NIC n of every host goes to rail n".into()),
            );
            continue;
        }
        let v = &topo.vlans[vi];
        let size = 1u64 << (32 - u32::from(v.subnet.len));
        let n = next[vi];
        if u64::from(n) + 1 >= size {
            err(
                l.line,
                *col,
                format!(
                    "VLAN {id}'s subnet {} has no address left for {host}",
                    v.subnet
                ),
                Some(format!(
                    "its hosts take .2 to .{}: give VLAN {id} (line {}) a shorter prefix",
                    size - 2,
                    v.line
                )),
            );
            continue;
        }
        next[vi] += 1;
        let address = v.subnet.nth(n);
        topo.links[*li].host_address = Some(address);
    }
}

/// Why `routing bgp` cannot route the topology, if it cannot: FRR beside
/// a lab switch sees its Ethernet ports, not its SVIs or port-channels.
pub(super) fn why_not_bgp(topo: &Topology) -> Option<String> {
    debug_assert_eq!(topo.routing, LabRouting::Bgp);
    if let Some(v) = topo.vlans.first() {
        return Some(format!(
            "VLAN {} (line {}) has its SVI on {}",
            v.id, v.line, v.switch
        ));
    }
    topo.links.iter().find(|l| l.channel.is_some()).map(|l| {
        format!(
            "line {} bundles links into port-channel{}",
            l.line,
            l.channel.unwrap_or_default()
        )
    })
}

/// A port-channel of one switch: its number, the switch at the other end
/// and its member links, in port order, as (link, local end, remote end).
#[derive(Debug, Clone)]
pub struct PortChannel<'a> {
    /// The port-channel's number, on both switches.
    pub id: u16,
    /// The switch at the other end.
    pub peer: &'a str,
    /// Its members, as (link, local end, remote end), in port order.
    pub members: Vec<(&'a LinkDef, &'a Endpoint, &'a Endpoint)>,
}

impl PortChannel<'_> {
    /// Its interface name, `port-channel1`.
    pub fn name(&self) -> String {
        format!("port-channel{}", self.id)
    }
}

impl Topology {
    /// Whether the topology uses Layer 2 at all: a VLAN, a trunk or a
    /// port-channel.
    pub fn uses_layer2(&self) -> bool {
        !self.vlans.is_empty()
            || self
                .links
                .iter()
                .any(|l| !l.trunk.is_empty() || l.channel.is_some())
    }

    /// The first member written of the port-channel link `l` belongs to
    /// (`l` itself if it is the first); `None` when `l` is no member.
    pub fn channel_first(&self, l: &LinkDef) -> Option<&LinkDef> {
        let id = l.channel?;
        fn pair(x: &LinkDef) -> [&str; 2] {
            let mut p = [x.a.node.as_str(), x.b.node.as_str()];
            p.sort_unstable();
            p
        }
        self.links
            .iter()
            .find(|f| f.channel == Some(id) && pair(f) == pair(l))
    }

    /// The VLAN `id` that spans switch `sw`, if any.
    pub fn vlan_at(&self, id: u16, sw: &str) -> Option<&VlanDef> {
        self.vlans
            .iter()
            .find(|v| v.id == id && v.switches.iter().any(|s| s == sw))
    }

    /// The VLAN of an access link (a host link with `vlan N`).
    pub fn link_vlan(&self, l: &LinkDef) -> Option<&VlanDef> {
        let id = l.vlan?;
        let sw = if self.is_switch(&l.a.node) {
            &l.a.node
        } else {
            &l.b.node
        };
        self.vlan_at(id, sw)
    }

    /// The subnet a host link puts the host on: the link's own, or its
    /// VLAN's.
    pub fn host_subnet(&self, l: &LinkDef) -> Option<Ipv4Net> {
        l.subnet.or_else(|| self.link_vlan(l).map(|v| v.subnet))
    }

    /// The switch that routes a host link's subnet: the link's switch, or
    /// the switch with its VLAN's SVI.
    pub fn gateway_switch<'a>(&'a self, l: &'a LinkDef) -> Option<&'a str> {
        if l.vlan.is_some() {
            return self.link_vlan(l).map(|v| v.switch.as_str());
        }
        [&l.a, &l.b]
            .into_iter()
            .find(|e| self.is_switch(&e.node))
            .map(|e| e.node.as_str())
    }

    /// The subnets hosts are on, with the switch that routes each: every
    /// routed host link's, in link order, then every VLAN's, in file
    /// order.
    pub fn host_subnets(&self) -> Vec<(Ipv4Net, &str)> {
        let links = self.links.iter().filter_map(|l| {
            let sw = match (self.is_switch(&l.a.node), self.is_switch(&l.b.node)) {
                (true, false) => &l.a.node,
                (false, true) => &l.b.node,
                _ => return None,
            };
            Some((l.subnet?, sw.as_str()))
        });
        links
            .chain(self.vlans.iter().map(|v| (v.subnet, v.switch.as_str())))
            .collect()
    }

    /// The port-channels of switch `sw`, by number.
    pub fn port_channels<'a>(&'a self, sw: &'a str) -> Vec<PortChannel<'a>> {
        let mut by_id: BTreeMap<u16, PortChannel<'a>> = BTreeMap::new();
        for (l, me, far) in self.links_of(sw) {
            let Some(id) = l.channel else { continue };
            by_id
                .entry(id)
                .or_insert_with(|| PortChannel {
                    id,
                    peer: &far.node,
                    members: Vec::new(),
                })
                .members
                .push((l, me, far));
        }
        let mut out: Vec<PortChannel<'a>> = by_id.into_values().collect();
        for pc in &mut out {
            pc.members
                .sort_by(|(_, a, _), (_, b, _)| crate::natural::cmp(&a.port, &b.port));
        }
        out
    }

    /// The VLANs switch `sw` carries (those whose span includes it), by
    /// number.
    pub fn vlans_on(&self, sw: &str) -> Vec<&VlanDef> {
        let mut v: Vec<&VlanDef> = self
            .vlans
            .iter()
            .filter(|v| v.switches.iter().any(|s| s == sw))
            .collect();
        v.sort_by_key(|v| v.id);
        v
    }

    /// The SVIs of switch `sw`, by VLAN.
    pub fn svis_on(&self, sw: &str) -> Vec<&VlanDef> {
        let mut v: Vec<&VlanDef> = self.vlans.iter().filter(|v| v.switch == sw).collect();
        v.sort_by_key(|v| v.id);
        v
    }

    /// The MTU of VLAN `v`'s SVI: the largest of the VLAN's links (its
    /// hosts' and the trunks carrying it), 1500 without any.
    pub fn vlan_mtu(&self, v: &VlanDef) -> u16 {
        self.links
            .iter()
            .filter(|l| {
                let trunked = l.trunk.contains(&v.id) && v.switches.contains(&l.a.node);
                trunked || self.link_vlan(l).is_some_and(|x| std::ptr::eq(x, v))
            })
            .map(|l| l.mtu)
            .max()
            .unwrap_or(1500)
    }
}
