//! The lab topology language: a line-based description of switches, hosts
//! and the links between them, parsed with `file:line:col` diagnostics.
//!
//! ```text
//! # comment
//! switch rail1 role rail
//! host h1
//! link h1:eth0 rail1:Ethernet1/1 speed 100000 subnet 10.1.1.0/24 [mtu 1500] [delay 1us]
//! vlan 101 on rail1 subnet 10.0.1.0/28 [name RAIL-1]
//! link h2:eth0 rail1:Ethernet1/2 vlan 101
//! link rail1:Ethernet1/31 spine1:Ethernet1/1 channel 1 subnet 10.255.0.0/31
//! link rail1:Ethernet1/9 rail2:Ethernet1/9 trunk 101-102
//! ```
//!
//! The Layer-2 part (VLANs, access ports, trunks, port-channels) is
//! resolved in [`super::layer2`].
//!
//! The format is described for users in `scripts/topologies/README.md`.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use railyard_config::{Diagnostic, InterfaceName, Severity};
use serde::{Deserialize, Serialize};

pub use super::layer2::VlanDef;
use super::layer2::{self, L2Marks};

/// An IPv4 prefix such as `10.1.1.0/24`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Ipv4Net {
    /// The network address (host bits zero).
    pub addr: Ipv4Addr,
    /// Prefix length, 0–32.
    pub len: u8,
}

impl Ipv4Net {
    /// The netmask as a number.
    fn mask(self) -> u32 {
        if self.len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.len))
        }
    }

    /// Whether `a` lies inside the prefix.
    pub fn contains(self, a: Ipv4Addr) -> bool {
        u32::from(a) & self.mask() == u32::from(self.addr)
    }

    /// Whether two prefixes share any address.
    pub fn overlaps(self, o: Ipv4Net) -> bool {
        self.contains(o.addr) || o.contains(self.addr)
    }

    /// The `n`th address of the prefix (0 is the network address).
    pub fn nth(self, n: u32) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr).wrapping_add(n))
    }
}

impl std::fmt::Display for Ipv4Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl std::str::FromStr for Ipv4Net {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, l) = s
            .split_once('/')
            .ok_or_else(|| format!("`{s}` is not a prefix (ADDRESS/LENGTH)"))?;
        let addr: Ipv4Addr = a
            .parse()
            .map_err(|_| format!("`{a}` is not an IPv4 address"))?;
        let len: u8 = l
            .parse()
            .ok()
            .filter(|l| *l <= 32)
            .ok_or_else(|| format!("`{l}` is not a prefix length (0-32)"))?;
        let net = Ipv4Net { addr, len };
        if u32::from(addr) & !net.mask() != 0 {
            return Err(format!(
                "`{s}` has host bits set; the network is {}/{len}",
                Ipv4Addr::from(u32::from(addr) & net.mask())
            ));
        }
        Ok(net)
    }
}

/// A switch of the topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchDef {
    /// Name: the switch's hostname and namespace suffix.
    pub name: String,
    /// Role: picks the template `templates/ROLE.conf` (beside the topology,
    /// else the built-in one of a shipped role).
    pub role: String,
    /// Line of the `switch` statement.
    pub line: usize,
}

/// A host of the topology (a network namespace with kernel networking).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostDef {
    /// Name: the namespace suffix.
    pub name: String,
    /// Line of the `host` statement.
    pub line: usize,
}

/// One end of a link.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Endpoint {
    /// Switch or host name.
    pub node: String,
    /// A switch's canonical interface name (`Ethernet1/1`) or a host's
    /// Linux interface name (`eth0`).
    pub port: String,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.node, self.port)
    }
}

/// A cable: a veth pair between two endpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkDef {
    /// First endpoint as written.
    pub a: Endpoint,
    /// Second endpoint as written.
    pub b: Endpoint,
    /// Port speed in Mb/s (the switch ports' `speed`), if given.
    pub speed: Option<u32>,
    /// The link's subnet on a routed link (a port-channel's members all
    /// give the port-channel's); `None` on an access port (`vlan`) or a
    /// trunk.
    pub subnet: Option<Ipv4Net>,
    /// MTU of both veth ends and of the switch interfaces.
    pub mtu: u16,
    /// One-way propagation delay of the cable in nanoseconds: what
    /// `railyard sim` puts on it (a live veth has its own, near zero).
    #[serde(default = "default_delay_ns")]
    pub delay_ns: u64,
    /// Line of the `link` statement.
    pub line: usize,
    /// On a host link, the VLAN the switch port is an access port of
    /// (`vlan N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vlan: Option<u16>,
    /// On a switch–switch link, the VLANs it carries as a trunk (`trunk
    /// LIST`), ascending; empty on other links.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub trunk: Vec<u16>,
    /// The port-channel the link is a member of, on both of its switches
    /// (`channel N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel: Option<u16>,
    /// On an access link, the host's address: the next free one of its
    /// VLAN's subnet, in file order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_address: Option<Ipv4Addr>,
}

/// A cable's delay unless its `link` says otherwise: 1 µs, about 200 m of
/// fibre, a typical rail-to-spine run.
pub const DEFAULT_LINK_DELAY_NS: u64 = 1_000;

fn default_delay_ns() -> u64 {
    DEFAULT_LINK_DELAY_NS
}

/// A parsed topology file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    /// The topology's name: the file name without `.topo`.
    pub name: String,
    /// Where it was read from (templates are looked up beside it first).
    pub path: PathBuf,
    /// Switches in file order.
    pub switches: Vec<SwitchDef>,
    /// Hosts in file order.
    pub hosts: Vec<HostDef>,
    /// Links in file order.
    pub links: Vec<LinkDef>,
    /// How the switches learn the routes to other switches' hosts.
    #[serde(default)]
    pub routing: LabRouting,
    /// VLANs with their SVIs (`vlan N on SWITCH subnet PREFIX`), in file
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vlans: Vec<VlanDef>,
}

/// The `routing` statement of a topology.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LabRouting {
    /// Static routes computed from the topology (`ip route` lines).
    #[default]
    Static,
    /// eBGP between the switches as RFC 7938 plans it, run by FRR beside
    /// each switch (see [`super::bgp`]).
    Bgp,
}

/// The Linux name of a switch port's veth end: `Ethernet1/2` → `e1-2`.
pub fn switch_ifname(port: &str) -> String {
    match port.parse::<InterfaceName>() {
        Ok(n) => match n.sub {
            Some(s) => format!("e{}-{}-{}", n.module, n.port, s),
            None => format!("e{}-{}", n.module, n.port),
        },
        Err(_) => port.replace('/', "-"),
    }
}

impl Topology {
    /// Whether `name` is a switch of the topology.
    pub fn is_switch(&self, name: &str) -> bool {
        self.switches.iter().any(|s| s.name == name)
    }

    /// The address each end of a link gets, `(a, b)`. On a host link the
    /// switch gets the first usable address (`.1`) and the host the second
    /// (`.2`); on a switch–switch link the first endpoint written gets the
    /// lower address (a /31 uses both of its addresses), on a
    /// port-channel's member the one written first on its first member.
    /// On an access link (`vlan`) the switch end is the VLAN's SVI (the
    /// host's gateway) and the host has its allocated address. A trunk
    /// has none.
    pub fn addresses(&self, l: &LinkDef) -> Option<(Ipv4Addr, Ipv4Addr)> {
        if l.vlan.is_some() {
            let gateway = self.link_vlan(l)?.gateway();
            let host = l.host_address?;
            return Some(if self.is_switch(&l.a.node) {
                (gateway, host)
            } else {
                (host, gateway)
            });
        }
        let subnet = l.subnet?;
        let (lo, hi) = if subnet.len == 31 {
            (subnet.nth(0), subnet.nth(1))
        } else {
            (subnet.nth(1), subnet.nth(2))
        };
        let lo_node = if !self.is_switch(&l.a.node) {
            &l.b.node
        } else if !self.is_switch(&l.b.node) {
            &l.a.node
        } else {
            &self.channel_first(l).unwrap_or(l).a.node
        };
        Some(if l.a.node == *lo_node {
            (lo, hi)
        } else {
            (hi, lo)
        })
    }

    /// The Linux interface name of an endpoint's veth end.
    pub fn ifname(&self, e: &Endpoint) -> String {
        if self.is_switch(&e.node) {
            switch_ifname(&e.port)
        } else {
            e.port.clone()
        }
    }

    /// Links that touch `node`, as (link, local end, remote end).
    pub fn links_of<'a>(
        &'a self,
        node: &'a str,
    ) -> impl Iterator<Item = (&'a LinkDef, &'a Endpoint, &'a Endpoint)> + 'a {
        self.links.iter().filter_map(move |l| {
            if l.a.node == node {
                Some((l, &l.a, &l.b))
            } else if l.b.node == node {
                Some((l, &l.b, &l.a))
            } else {
                None
            }
        })
    }

    /// The address of `end` on link `l` (see [`Topology::addresses`]).
    pub fn address_of(&self, l: &LinkDef, end: &Endpoint) -> Option<Ipv4Addr> {
        let (a, b) = self.addresses(l)?;
        Some(if *end == l.a { a } else { b })
    }

    /// Whether the link joins a host to a switch.
    pub fn is_host_link(&self, l: &LinkDef) -> bool {
        !self.is_switch(&l.a.node) || !self.is_switch(&l.b.node)
    }
}

/// Reads and parses a topology file.
///
/// # Errors
/// Every problem found, rendered like configuration diagnostics.
pub fn parse_file(path: &Path) -> Result<Topology, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read topology: {e}", path.display()))?;
    parse_str(&text, path).map_err(|d| crate::format_diagnostics(&d))
}

/// A word of a line with its 1-based character column.
#[derive(Clone, Copy)]
pub(super) struct Word<'a> {
    /// The word.
    pub(super) text: &'a str,
    /// Its 1-based character column.
    pub(super) col: usize,
}

fn words(line: &str) -> Vec<Word<'_>> {
    let code = line.split('#').next().unwrap_or("");
    let mut out = Vec::new();
    let mut start = None;
    for (ci, (bi, ch)) in code.char_indices().enumerate() {
        match (ch.is_whitespace(), start) {
            (false, None) => start = Some((bi, ci)),
            (true, Some((sb, sc))) => {
                out.push(Word {
                    text: &code[sb..bi],
                    col: sc + 1,
                });
                start = None;
            }
            _ => {}
        }
    }
    if let Some((sb, sc)) = start {
        out.push(Word {
            text: &code[sb..],
            col: sc + 1,
        });
    }
    out
}

/// The closest of `options` to `s`, when close enough to suggest.
pub(crate) fn did_you_mean<'a>(
    s: &str,
    options: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    fn lev(a: &str, b: &str) -> usize {
        let b: Vec<char> = b.chars().collect();
        let mut prev: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.chars().enumerate() {
            let mut cur = vec![i + 1];
            for (j, cb) in b.iter().enumerate() {
                let sub = prev[j] + usize::from(ca != *cb);
                cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
            }
            prev = cur;
        }
        prev[b.len()]
    }
    options
        .into_iter()
        .map(|o| (lev(s, o), o))
        .filter(|(d, o)| *d <= 2.max(o.len() / 3))
        .min()
        .map(|(_, o)| format!("did you mean `{o}`?"))
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 32
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && s.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
}

/// An error at `line:col` of `file`, quoting the line `src`.
fn error_at(
    file: &str,
    line: usize,
    src: &str,
    col: usize,
    message: String,
    hint: Option<String>,
) -> Diagnostic {
    Diagnostic {
        severity: Severity::Error,
        file: file.to_string(),
        line,
        col,
        source_line: src.to_string(),
        message,
        hint,
    }
}

/// Parses topology text; `path` names it in diagnostics and locates templates.
///
/// # Errors
/// Every problem found, each with its position and, where useful, a hint.
pub fn parse_str(text: &str, path: &Path) -> Result<Topology, Vec<Diagnostic>> {
    let file = path.display().to_string();
    let mut diags = Vec::new();
    let mut topo = Topology {
        name: path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "lab".into()),
        path: path.to_path_buf(),
        switches: Vec::new(),
        hosts: Vec::new(),
        links: Vec::new(),
        routing: LabRouting::Static,
        vlans: Vec::new(),
    };
    // Line and column of the `routing` statement's value.
    let mut routing_line: Option<(usize, usize)> = None;
    // `vlan` statements are read once every node is known.
    let mut pending_vlans: Vec<(usize, &str, Vec<Word<'_>>)> = Vec::new();
    // Link statements are checked once every node is known.
    let mut pending: Vec<(usize, &str, Vec<Word<'_>>)> = Vec::new();
    let mut node_lines: BTreeMap<String, usize> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let lno = i + 1;
        let mut err = |col: usize, msg: String, hint: Option<String>| {
            diags.push(Diagnostic {
                severity: Severity::Error,
                file: file.clone(),
                line: lno,
                col,
                source_line: line.to_string(),
                message: msg,
                hint,
            })
        };
        let w = words(line);
        let Some(first) = w.first() else { continue };
        match first.text {
            "switch" | "host" => {
                let kind = first.text;
                let Some(name) = w.get(1) else {
                    err(
                        first.col,
                        format!("`{kind}` needs a name"),
                        Some(if kind == "switch" {
                            "e.g. `switch rail1 role rail`".into()
                        } else {
                            "e.g. `host h1`".into()
                        }),
                    );
                    continue;
                };
                if !valid_name(name.text) {
                    err(
                        name.col,
                        format!("`{}` is not a valid node name", name.text),
                        Some("a letter, then letters, digits, `-` or `_`; at most 32".into()),
                    );
                    continue;
                }
                if let Some(prev) = node_lines.get(name.text) {
                    err(
                        name.col,
                        format!("`{}` is already defined on line {prev}", name.text),
                        Some("every switch and host needs its own name".into()),
                    );
                    continue;
                }
                if kind == "host" {
                    if let Some(extra) = w.get(2) {
                        err(
                            extra.col,
                            format!("unexpected `{}` after the host name", extra.text),
                            None,
                        );
                        continue;
                    }
                    topo.hosts.push(HostDef {
                        name: name.text.into(),
                        line: lno,
                    });
                } else {
                    match (w.get(2), w.get(3), w.get(4)) {
                        (Some(kw), Some(role), None) if kw.text == "role" => {
                            if !valid_name(role.text) {
                                err(
                                    role.col,
                                    format!("`{}` is not a valid role", role.text),
                                    None,
                                );
                                continue;
                            }
                            topo.switches.push(SwitchDef {
                                name: name.text.into(),
                                role: role.text.into(),
                                line: lno,
                            });
                        }
                        (Some(kw), None, _) if kw.text == "role" => {
                            err(
                                kw.col,
                                "`role` needs a value".into(),
                                Some("e.g. `role rail` uses templates/rail.conf".into()),
                            );
                            continue;
                        }
                        (None, _, _) => {
                            err(
                                name.col + name.text.chars().count(),
                                format!("switch `{}` needs a role", name.text),
                                Some(format!("e.g. `switch {} role rail`: the role names the template templates/ROLE.conf", name.text)),
                            );
                            continue;
                        }
                        (Some(kw), _, extra) => {
                            let bad = if kw.text == "role" {
                                *extra.unwrap_or(kw)
                            } else {
                                *kw
                            };
                            err(
                                bad.col,
                                format!("unexpected `{}`", bad.text),
                                Some("expected `switch NAME role ROLE`".into()),
                            );
                            continue;
                        }
                    }
                }
                node_lines.insert(name.text.into(), lno);
            }
            "link" => pending.push((lno, line, w)),
            "vlan" => pending_vlans.push((lno, line, w)),
            "routing" => {
                let value = match (w.get(1), w.get(2)) {
                    (Some(v), None) if v.text == "static" => LabRouting::Static,
                    (Some(v), None) if v.text == "bgp" => LabRouting::Bgp,
                    (Some(v), None) => {
                        err(
                            v.col,
                            format!("unknown routing `{}`", v.text),
                            Some("`routing static` (the default) or `routing bgp`".into()),
                        );
                        continue;
                    }
                    (None, _) => {
                        err(
                            first.col + first.text.len(),
                            "`routing` needs a value".into(),
                            Some("`routing static` (the default) or `routing bgp`".into()),
                        );
                        continue;
                    }
                    (Some(_), Some(extra)) => {
                        err(extra.col, format!("unexpected `{}`", extra.text), None);
                        continue;
                    }
                };
                if let Some((prev, _)) = routing_line {
                    err(
                        first.col,
                        format!("`routing` is already given on line {prev}"),
                        Some("a topology routes one way".into()),
                    );
                    continue;
                }
                routing_line = Some((lno, w[1].col));
                topo.routing = value;
            }
            other => err(
                first.col,
                format!("unknown statement `{other}`"),
                Some(
                    did_you_mean(other, ["switch", "host", "link", "vlan", "routing"])
                        .unwrap_or_else(|| {
                            "statements are `switch`, `host`, `link`, `vlan` and `routing`".into()
                        }),
                ),
            ),
        }
    }
    let names: Vec<String> = node_lines.keys().cloned().collect();
    let mut used_ports: BTreeMap<Endpoint, usize> = BTreeMap::new();
    // Every subnet given so far, with its line and what it belongs to.
    let mut subnets: Vec<(Ipv4Net, usize, String)> = Vec::new();
    let mut marks = L2Marks::default();
    for (lno, line, w) in pending_vlans {
        let mut err = |col: usize, msg: String, hint: Option<String>| {
            diags.push(error_at(&file, lno, line, col, msg, hint));
        };
        if let Some((vlan, id_col)) =
            layer2::parse_vlan_statement(&topo, &w, lno, &subnets, &mut err)
        {
            subnets.push((vlan.subnet, lno, format!("VLAN {}", vlan.id)));
            marks.vlan_cols.push(id_col);
            topo.vlans.push(vlan);
        }
    }
    // Port-channels seen so far: (switch, number) -> (peer switch, index
    // of the first member in `topo.links`).
    let mut channels: BTreeMap<(String, u16), (String, usize)> = BTreeMap::new();
    let link_diags = std::cell::RefCell::new(Vec::new());
    for (lno, line, w) in pending {
        let before = link_diags.borrow().len();
        let err = |col: usize, msg: String, hint: Option<String>| {
            link_diags.borrow_mut().push(Diagnostic {
                severity: Severity::Error,
                file: file.clone(),
                line: lno,
                col,
                source_line: line.to_string(),
                message: msg,
                hint,
            })
        };
        let mut ends = Vec::new();
        for k in [1, 2] {
            let Some(word) = w.get(k) else {
                err(
                    w[k - 1].col + w[k - 1].text.chars().count(),
                    "`link` needs two endpoints".into(),
                    Some(
                        "e.g. `link h1:eth0 rail1:Ethernet1/1 speed 100000 subnet 10.1.1.0/24`"
                            .into(),
                    ),
                );
                break;
            };
            let Some((node, port)) = word.text.split_once(':') else {
                err(
                    word.col,
                    format!("`{}` is not an endpoint", word.text),
                    Some("write NODE:PORT, e.g. `rail1:Ethernet1/1` or `h1:eth0`".into()),
                );
                continue;
            };
            let port_col = word.col + node.chars().count() + 1;
            if !node_lines.contains_key(node) {
                err(
                    word.col,
                    format!("no switch or host named `{node}`"),
                    Some(
                        did_you_mean(node, names.iter().map(String::as_str)).unwrap_or_else(|| {
                            "define it with `switch` or `host` first (anywhere in the file)".into()
                        }),
                    ),
                );
                continue;
            }
            let port = if topo.is_switch(node) {
                match port.parse::<InterfaceName>() {
                    Ok(n) => n.to_string(),
                    Err(e) => {
                        err(port_col, format!("`{port}` is not a switch interface: {e}"), Some("switch ports are Ethernet interfaces: `Ethernet1/1`, `eth1/1` or `e1/1`".into()));
                        continue;
                    }
                }
            } else {
                let ok = !port.is_empty()
                    && port.len() <= 15
                    && port
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
                if !ok {
                    err(
                        port_col,
                        format!("`{port}` is not a Linux interface name"),
                        Some("at most 15 letters, digits, `-`, `_` or `.`, e.g. `eth0`".into()),
                    );
                    continue;
                }
                port.to_string()
            };
            let e = Endpoint {
                node: node.into(),
                port,
            };
            if let Some(prev) = used_ports.get(&e) {
                err(
                    word.col,
                    format!("{e} is already cabled on line {prev}"),
                    Some("a port takes one cable".into()),
                );
                continue;
            }
            ends.push(e);
        }
        let mut speed = None;
        // Each option's value with the columns of its value and keyword.
        let mut subnet: Option<(Ipv4Net, usize, usize)> = None;
        let mut vlan: Option<(u16, usize, usize)> = None;
        let mut trunk: Option<(layer2::VlanItems, usize, usize)> = None;
        let mut channel: Option<(u16, usize, usize)> = None;
        let mut mtu = 1500u16;
        let mut delay_ns = DEFAULT_LINK_DELAY_NS;
        let mut k = 3;
        while k < w.len() {
            let kw = w[k];
            let Some(val) = w.get(k + 1) else {
                err(kw.col, format!("`{}` needs a value", kw.text), None);
                break;
            };
            match kw.text {
                "speed" => match val.text.parse::<u32>() {
                    Ok(s) if s > 0 => speed = Some(s),
                    _ => err(
                        val.col,
                        format!("`{}` is not a speed", val.text),
                        Some("Mb/s as NX-OS writes it, e.g. `speed 100000` for 100 Gb/s".into()),
                    ),
                },
                "subnet" => match val.text.parse::<Ipv4Net>() {
                    Ok(n) => subnet = Some((n, val.col, kw.col)),
                    Err(e) => err(val.col, e, Some("e.g. `subnet 10.1.1.0/24`".into())),
                },
                "vlan" => match layer2::parse_vlan_id(val.text) {
                    Ok(v) => vlan = Some((v, val.col, kw.col)),
                    Err((m, h)) => err(val.col, m, Some(h)),
                },
                "trunk" => match layer2::parse_vlan_list(val.text, val.col) {
                    Ok(list) => trunk = Some((list, val.col, kw.col)),
                    Err((col, m, h)) => err(col, m, Some(h)),
                },
                "channel" => match val.text.parse::<u16>() {
                    Ok(n) if (1..=railyard_config::MAX_PORT_CHANNEL).contains(&n) => {
                        channel = Some((n, val.col, kw.col))
                    }
                    _ => err(
                        val.col,
                        format!("`{}` is not a port-channel number", val.text),
                        Some(format!(
                            "1-{}: `channel 1` bundles the link into port-channel1 on both switches",
                            railyard_config::MAX_PORT_CHANNEL
                        )),
                    ),
                },
                "mtu" => match val.text.parse::<u16>() {
                    Ok(m) if (576..=9216).contains(&m) => mtu = m,
                    _ => err(
                        val.col,
                        format!("`{}` is not an MTU", val.text),
                        Some("576-9216 bytes".into()),
                    ),
                },
                "delay" => match humantime::parse_duration(val.text) {
                    Ok(d) if d.as_nanos() <= 1_000_000_000 => delay_ns = d.as_nanos() as u64,
                    _ => err(
                        val.col,
                        format!("`{}` is not a cable delay", val.text),
                        Some("a duration up to 1s, e.g. `delay 1us` or `delay 500ns`".into()),
                    ),
                },
                other => err(
                    kw.col,
                    format!("unknown link option `{other}`"),
                    Some(
                        did_you_mean(
                            other,
                            ["speed", "subnet", "vlan", "trunk", "channel", "mtu", "delay"],
                        )
                        .unwrap_or_else(|| {
                            "options are `speed MBPS`, `subnet PREFIX`, `vlan N`, `trunk LIST`, \
                             `channel N`, `mtu BYTES` and `delay DURATION`"
                                .into()
                        }),
                    ),
                ),
            }
            k += 2;
        }
        if link_diags.borrow().len() > before || ends.len() != 2 {
            continue;
        }
        let (a_sw, b_sw) = (topo.is_switch(&ends[0].node), topo.is_switch(&ends[1].node));
        // An access port, a trunk and a routed link exclude each other:
        // the one written second is at fault.
        let kinds = [
            subnet.map(|(_, _, c)| ("subnet", c)),
            vlan.map(|(_, _, c)| ("vlan", c)),
            trunk.as_ref().map(|(_, _, c)| ("trunk", *c)),
        ];
        let mut given: Vec<(&str, usize)> = kinds.into_iter().flatten().collect();
        given.sort_by_key(|(_, c)| *c);
        if let [(first, _), (second, col), ..] = given[..] {
            err(
                col,
                format!("`{second}` and `{first}` exclude each other"),
                Some(
                    "a link is routed (`subnet`), an access port of a host (`vlan N`) \
                     or a trunk between switches (`trunk LIST`)"
                        .into(),
                ),
            );
            continue;
        }
        if given.is_empty() {
            let end = w[2].col + w[2].text.chars().count();
            if a_sw && b_sw {
                err(end, "link needs a `subnet` or a `trunk`".into(), Some("e.g. `subnet 10.255.0.0/31` (routed, the first endpoint takes .0) or `trunk 101-102` (carries those VLANs)".into()));
            } else {
                err(end, "link needs a `subnet` or a `vlan`".into(), Some("e.g. `subnet 10.1.1.0/24` (switch .1, host .2) or `vlan 101` (an access port in VLAN 101)".into()));
            }
            continue;
        }
        if !a_sw && !b_sw {
            err(
                w[1].col,
                "a link between two hosts".into(),
                Some("hosts connect to switches".into()),
            );
            continue;
        }
        if ends[0].node == ends[1].node {
            err(
                w[2].col,
                format!("`{}` is cabled to itself", ends[0].node),
                None,
            );
            continue;
        }
        if let (Some((_, _, col)), true) = (vlan, a_sw && b_sw) {
            err(
                col,
                "`vlan` makes a host's switch port an access port".into(),
                Some("between switches carry VLANs with `trunk LIST`, e.g. `trunk 101-102`".into()),
            );
            continue;
        }
        if let (Some((_, _, col)), false) = (&trunk, a_sw && b_sw) {
            err(
                *col,
                "`trunk` is for links between switches".into(),
                Some("a host's switch port is an access port: `vlan N`".into()),
            );
            continue;
        }
        if let (Some((_, _, col)), false) = (channel, a_sw && b_sw) {
            err(
                col,
                "`channel` bundles links between two switches".into(),
                Some("a host link is routed (`subnet`) or an access port (`vlan N`)".into()),
            );
            continue;
        }
        if let Some((subnet, scol, _)) = subnet {
            let need = if a_sw && b_sw { 31 } else { 30 };
            if subnet.len > need {
                err(scol, format!("/{} is too small for this link", subnet.len), Some(format!("use /{need} or shorter: the switch takes the first address and the other end the second")));
                continue;
            }
        }
        // A port-channel joins the same two switches on every member, and
        // its members agree on what the port-channel is.
        let mut same_channel_subnet = false;
        if let Some((id, ccol, _)) = channel {
            let (a, b) = (&ends[0].node, &ends[1].node);
            let clash = [(a, b), (b, a)].into_iter().find_map(|(me, peer)| {
                let (other, first) = channels.get(&(me.clone(), id))?;
                (other != peer).then(|| (me, other, topo.links[*first].line))
            });
            if let Some((me, other, l)) = clash {
                err(
                    ccol,
                    format!("port-channel{id} of {me} already goes to {other} (line {l})"),
                    Some(format!(
                        "a port-channel bundles links between two switches: give this bundle \
                         another number on {me}"
                    )),
                );
                continue;
            }
            if let Some((_, first)) = channels.get(&(a.clone(), id)) {
                let f = &topo.links[*first];
                let fl = f.line;
                let this_trunk: Vec<u16> = trunk
                    .as_ref()
                    .map(|(t, _, _)| t.iter().map(|(v, _)| *v).collect())
                    .unwrap_or_default();
                let this_subnet = subnet.map(|(n, _, _)| n);
                let problem = if f.subnet != this_subnet {
                    let col = subnet.map_or(ccol, |(_, c, _)| c);
                    let theirs = f.subnet.map_or_else(
                        || format!("`trunk {}`", layer2::vlan_list(&f.trunk)),
                        |n| format!("`subnet {n}`"),
                    );
                    Some((col, format!("port-channel{id} has {theirs} on line {fl}"), "every member of a routed port-channel gives its subnet (one /31 for the bundle); a switched one's members give `trunk LIST`"))
                } else if f.trunk != this_trunk {
                    let col = trunk.as_ref().map_or(ccol, |(_, c, _)| *c);
                    Some((
                        col,
                        format!(
                            "port-channel{id} carries `trunk {}` on line {fl}",
                            layer2::vlan_list(&f.trunk)
                        ),
                        "the members of a port-channel carry the same VLANs",
                    ))
                } else if f.mtu != mtu {
                    Some((
                        ccol,
                        format!("port-channel{id} has `mtu {}` on line {fl}", f.mtu),
                        "the members of a port-channel have one MTU",
                    ))
                } else if f.speed != speed {
                    let theirs = f
                        .speed
                        .map_or("no `speed`".to_string(), |s| format!("`speed {s}`"));
                    Some((
                        ccol,
                        format!("port-channel{id} has {theirs} on line {fl}"),
                        "LACP bundles ports of one speed",
                    ))
                } else {
                    None
                };
                if let Some((col, message, hint)) = problem {
                    err(col, message, Some(hint.into()));
                    continue;
                }
                same_channel_subnet = true;
            }
        }
        if let (Some((subnet, scol, _)), false) = (subnet, same_channel_subnet) {
            if let Some((other, l, what)) = subnets.iter().find(|(n, _, _)| n.overlaps(subnet)) {
                err(
                    scol,
                    format!("{subnet} overlaps {other} of {what} on line {l}"),
                    Some("every link and VLAN needs a subnet of its own".into()),
                );
                continue;
            }
            subnets.push((subnet, lno, "the link".into()));
        }
        for e in &ends {
            used_ports.insert(e.clone(), lno);
        }
        let index = topo.links.len();
        if let Some((id, _, _)) = channel {
            let (a, b) = (&ends[0].node, &ends[1].node);
            channels
                .entry((a.clone(), id))
                .or_insert_with(|| (b.clone(), index));
            channels
                .entry((b.clone(), id))
                .or_insert_with(|| (a.clone(), index));
        }
        if let Some((_, col, _)) = vlan {
            marks.access.push((index, col));
        }
        if let Some((list, _, _)) = &trunk {
            marks.trunks.push((index, list.clone()));
        }
        let mut it = ends.into_iter();
        let (Some(a), Some(b)) = (it.next(), it.next()) else {
            continue;
        };
        topo.links.push(LinkDef {
            a,
            b,
            speed,
            subnet: subnet.map(|(n, _, _)| n),
            mtu,
            delay_ns,
            line: lno,
            vlan: vlan.map(|(v, _, _)| v),
            trunk: trunk
                .map(|(t, _, _)| {
                    let mut v: Vec<u16> = t.into_iter().map(|(v, _)| v).collect();
                    v.sort_unstable();
                    v.dedup();
                    v
                })
                .unwrap_or_default(),
            channel: channel.map(|(c, _, _)| c),
            host_address: None,
        });
    }
    diags.extend(link_diags.into_inner());
    if diags.is_empty() {
        // VLANs span the trunks that carry them; hosts take their addresses.
        let lines: Vec<&str> = text.lines().collect();
        let mut err = |lno: usize, col: usize, msg: String, hint: Option<String>| {
            let src = lines.get(lno - 1).copied().unwrap_or("");
            diags.push(error_at(&file, lno, src, col, msg, hint));
        };
        layer2::resolve(&mut topo, &marks, &mut err);
        if let (Some((lno, col)), LabRouting::Bgp) = (routing_line, topo.routing) {
            if let Some(why) = layer2::why_not_bgp(&topo) {
                err(
                    lno,
                    col,
                    format!("`routing bgp` cannot route this topology: {why}"),
                    Some("FRR beside railyard sees its Ethernet ports only, not SVIs or port-channels: use `routing static` (the default)".into()),
                );
            }
        }
    }
    for h in &topo.hosts {
        if topo.links_of(&h.name).next().is_none() {
            let line = text.lines().nth(h.line - 1).unwrap_or("");
            diags.push(Diagnostic {
                severity: Severity::Error,
                file: file.clone(),
                line: h.line,
                col: line
                    .find(&h.name)
                    .map_or(1, |b| line[..b].chars().count() + 1),
                source_line: line.into(),
                message: format!("host `{}` has no link", h.name),
                hint: Some(format!(
                    "cable it with `link {}:eth0 SWITCH:Ethernet1/N …`",
                    h.name
                )),
            });
        }
    }
    if topo.switches.is_empty() && diags.is_empty() {
        diags.push(Diagnostic::whole_file(
            Severity::Error,
            &file,
            "the topology has no switch",
        ));
    }
    if diags.is_empty() {
        Ok(topo)
    } else {
        Err(diags)
    }
}
