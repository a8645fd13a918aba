//! Switch configurations generated from role templates.
//!
//! A role's template is `templates/ROLE.conf` beside the topology file, or,
//! when there is none, the shipped template of that name, built into the
//! binary ([`BUILTIN_TEMPLATES`]) so that a topology anywhere can use the
//! shipped roles. A template is NX-OS configuration text with placeholders:
//!
//! - anywhere: `{{hostname}}`, `{{role}}`, `{{uplinks}}` (the routed
//!   switch–switch ports, `Ethernet1/31, Ethernet1/32`), `{{routes}}` (the
//!   computed `ip route` lines, or with `routing bgp` the switch's eBGP
//!   section, see [`super::bgp`]; alone on its line), `{{features}}`
//!   (`feature interface-vlan` with SVIs, `feature lacp` with
//!   port-channels);
//! - between `{{#interface}}` and `{{/interface}}` (each on a line of its
//!   own), repeated for every cabled port in port order: `{{name}}`
//!   (`Ethernet1/1`), `{{ifname}}` (the veth, `e1-1`), `{{address}}`
//!   (`10.1.1.1/24`, routed ports only), `{{speed}}`, `{{mtu}}`,
//!   `{{peer}}` (`h1:eth0`), `{{description}}` (`to h1 eth0`),
//!   `{{switchport}}` (`no switchport`, or an access port's or trunk's
//!   switchport lines), `{{channel}}` (a member's `channel-group N mode
//!   active` and `lacp rate fast`);
//! - between `{{#port-channel}}` and `{{/port-channel}}`, per port-channel:
//!   `{{name}}` (`port-channel1`), `{{address}}` (routed ones), `{{mtu}}`,
//!   `{{peer}}`, `{{description}}`, `{{switchport}}`, `{{members}}`;
//! - between `{{#vlan}}` and `{{/vlan}}`, per VLAN the switch carries:
//!   `{{vlan}}`, `{{vlan_name}}`;
//! - between `{{#svi}}` and `{{/svi}}`, per SVI: `{{name}}` (`Vlan101`),
//!   `{{vlan}}`, `{{vlan_name}}`, `{{address}}` (`10.0.1.1/28`), `{{mtu}}`
//!   (the largest of the VLAN's links), `{{description}}`.
//!
//! A line whose placeholder has no value (`{{speed}}` on a link without a
//! speed, `{{uplinks}}` on a switch without uplinks) is left out. A value
//! of several lines (`{{switchport}}` of a trunk) continues on lines
//! indented like the placeholder's.

use std::path::{Path, PathBuf};

use railyard_config::{Diagnostic, Severity};

use super::bgp::{as_numbers, bgp_section};
use super::layer2::vlan_list;
use super::routes::switch_routes;
use super::topology::{Endpoint, LabRouting, LinkDef, Topology};

/// A generated switch configuration.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Switch name.
    pub switch: String,
    /// The template it came from.
    pub template: TemplateSource,
    /// NX-OS configuration text.
    pub config: String,
}

/// The shipped role templates (`scripts/topologies/templates/ROLE.conf`),
/// compiled in so that an installed binary, or a topology file kept outside
/// `scripts/topologies/`, still finds them.
pub const BUILTIN_TEMPLATES: [(&str, &str); 4] = [
    (
        "rail",
        include_str!("../../../scripts/topologies/templates/rail.conf"),
    ),
    (
        "rail-dlb",
        include_str!("../../../scripts/topologies/templates/rail-dlb.conf"),
    ),
    (
        "rail-lossless",
        include_str!("../../../scripts/topologies/templates/rail-lossless.conf"),
    ),
    (
        "spine",
        include_str!("../../../scripts/topologies/templates/spine.conf"),
    ),
];

/// Where a role's template was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateSource {
    /// `templates/ROLE.conf` beside the topology file.
    File(PathBuf),
    /// The shipped template of that role, built into the binary.
    Builtin(&'static str),
}

impl std::fmt::Display for TemplateSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TemplateSource::File(p) => write!(f, "{}", p.display()),
            TemplateSource::Builtin(role) => write!(f, "built-in templates/{role}.conf"),
        }
    }
}

/// Where the template of `role` lives for topology `t` when it is a file:
/// `templates/ROLE.conf` beside the topology.
pub fn template_path(t: &Topology, role: &str) -> PathBuf {
    t.path
        .parent()
        .unwrap_or(Path::new("."))
        .join("templates")
        .join(format!("{role}.conf"))
}

/// Finds the template of `role` for topology `t`: the file beside the
/// topology, else the built-in one of that name. Returns where it was
/// found and its text.
///
/// # Errors
/// Neither exists (naming both places and the built-in roles), or the file
/// exists but cannot be read.
pub fn find_template(t: &Topology, role: &str) -> Result<(TemplateSource, String), String> {
    let path = template_path(t, role);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok((TemplateSource::File(path), text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => BUILTIN_TEMPLATES
            .iter()
            .find(|(r, _)| *r == role)
            .map(|(r, text)| (TemplateSource::Builtin(r), (*text).to_string()))
            .ok_or_else(|| {
                format!(
                    "no template for role `{role}`: {} does not exist and no role of that \
                     name is built in (built-in roles: {})",
                    path.display(),
                    BUILTIN_TEMPLATES
                        .iter()
                        .map(|(r, _)| *r)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }),
        Err(e) => Err(format!("template {} cannot be read: {e}", path.display())),
    }
}

/// Every role of the topology, in order of first use, with where its
/// template is found (or why it is not), so `lab up` and `lab render` can
/// say which file a role came from.
pub fn role_sources(t: &Topology) -> Vec<(String, Result<TemplateSource, String>)> {
    let mut out: Vec<(String, Result<TemplateSource, String>)> = Vec::new();
    for s in &t.switches {
        if !out.iter().any(|(r, _)| *r == s.role) {
            out.push((
                s.role.clone(),
                find_template(t, &s.role).map(|(src, _)| src),
            ));
        }
    }
    out
}

const GLOBAL: [&str; 5] = ["hostname", "role", "uplinks", "routes", "features"];

/// The repeated sections of a template, `{{#KIND}}` … `{{/KIND}}` (each
/// marker alone on its line): the kind, what it repeats over, and the
/// placeholders it adds to the global ones.
const BLOCKS: [(&str, &str, &[&str]); 4] = [
    (
        "interface",
        "every cabled port, in port order",
        &[
            "name",
            "ifname",
            "address",
            "speed",
            "mtu",
            "peer",
            "description",
            "switchport",
            "channel",
        ],
    ),
    (
        "port-channel",
        "every port-channel, by number",
        &[
            "name",
            "address",
            "mtu",
            "peer",
            "description",
            "switchport",
            "members",
        ],
    ),
    (
        "vlan",
        "every VLAN the switch carries, by number",
        &["vlan", "vlan_name"],
    ),
    (
        "svi",
        "every SVI of the switch, by VLAN",
        &["name", "vlan", "vlan_name", "address", "mtu", "description"],
    ),
];

/// One repetition of a block: its placeholders' values (`None`: no value,
/// the line is left out).
type Item = Vec<(&'static str, Option<String>)>;

/// Fills one line's placeholders; `None` when one of them has no value.
/// A value of several lines continues on lines indented as this one.
/// Unknown placeholders are reported with their column.
fn fill(
    line: &str,
    lookup: &dyn Fn(&str) -> Option<Option<String>>,
) -> Result<Option<String>, (usize, String)> {
    let indent = &line[..line.len() - line.trim_start().len()];
    let mut out = String::new();
    let mut rest = line;
    let mut offset = 0;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start..].find("}}") else {
            let col = line[..offset + start].chars().count() + 1;
            return Err((col, "`{{` without `}}`".into()));
        };
        let key = rest[start + 2..start + len].trim();
        out.push_str(&rest[..start]);
        match lookup(key) {
            None => {
                let col = line[..offset + start].chars().count() + 1;
                return Err((col, format!("unknown placeholder `{{{{{key}}}}}`")));
            }
            Some(None) => return Ok(None),
            Some(Some(v)) => out.push_str(&v.replace('\n', &format!("\n{indent}"))),
        }
        offset += start + len + 2;
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    Ok(Some(out))
}

/// What `{{switchport}}` writes for a port or port-channel: `no switchport`
/// when routed, else the switchport lines of its access VLAN or trunk.
fn switchport_lines(l: &LinkDef) -> String {
    if let Some(v) = l.vlan {
        format!("switchport\nswitchport mode access\nswitchport access vlan {v}")
    } else if !l.trunk.is_empty() {
        format!(
            "switchport\nswitchport mode trunk\nswitchport trunk allowed vlan {}",
            vlan_list(&l.trunk)
        )
    } else {
        "no switchport".into()
    }
}

/// The items of each block for switch `sw`; `ifname` names a port's Linux
/// interface (`{{ifname}}`).
fn block_items(t: &Topology, sw: &str, kind: &str, ifname: Ifname<'_>) -> Vec<Item> {
    let with_len = |a: Option<std::net::Ipv4Addr>, n: Option<super::topology::Ipv4Net>| {
        a.zip(n).map(|(a, n)| format!("{a}/{}", n.len))
    };
    match kind {
        "interface" => {
            let mut ports: Vec<_> = t.links_of(sw).collect();
            ports.sort_by(|(_, a, _), (_, b, _)| crate::natural::cmp(&a.port, &b.port));
            ports
                .into_iter()
                .map(|(link, local, remote)| {
                    // A port-channel's member has its port-channel's address,
                    // an access port its VLAN's SVI's.
                    let routed = link.channel.is_none() && link.subnet.is_some();
                    vec![
                        ("name", Some(local.port.clone())),
                        ("ifname", Some(ifname(local))),
                        (
                            "address",
                            with_len(t.address_of(link, local), link.subnet).filter(|_| routed),
                        ),
                        ("speed", link.speed.map(|s| s.to_string())),
                        ("mtu", Some(link.mtu.to_string())),
                        ("peer", Some(remote.to_string())),
                        (
                            "description",
                            Some(format!("to {} {}", remote.node, remote.port)),
                        ),
                        ("switchport", Some(switchport_lines(link))),
                        (
                            "channel",
                            link.channel
                                .map(|c| format!("channel-group {c} mode active\nlacp rate fast")),
                        ),
                    ]
                })
                .collect()
        }
        "port-channel" => t
            .port_channels(sw)
            .iter()
            .filter_map(|pc| {
                let (first, local, _) = pc.members.first()?;
                let members: Vec<&str> =
                    pc.members.iter().map(|(_, l, _)| l.port.as_str()).collect();
                Some(vec![
                    ("name", Some(pc.name())),
                    (
                        "address",
                        with_len(t.address_of(first, local), first.subnet),
                    ),
                    ("mtu", Some(first.mtu.to_string())),
                    ("peer", Some(format!("{}:{}", pc.peer, pc.name()))),
                    ("description", Some(format!("to {} {}", pc.peer, pc.name()))),
                    ("switchport", Some(switchport_lines(first))),
                    ("members", Some(members.join(", "))),
                ])
            })
            .collect(),
        "vlan" => t
            .vlans_on(sw)
            .into_iter()
            .map(|v| {
                vec![
                    ("vlan", Some(v.id.to_string())),
                    ("vlan_name", v.name.clone()),
                ]
            })
            .collect(),
        "svi" => t
            .svis_on(sw)
            .into_iter()
            .map(|v| {
                vec![
                    ("name", Some(v.svi_name())),
                    ("vlan", Some(v.id.to_string())),
                    ("vlan_name", v.name.clone()),
                    ("address", Some(format!("{}/{}", v.gateway(), v.subnet.len))),
                    ("mtu", Some(t.vlan_mtu(v).to_string())),
                    ("description", Some(format!("gateway of VLAN {}", v.id))),
                ]
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// The hint of a template diagnostic inside block `kind` (or outside any).
fn placeholder_hint(kind: Option<&str>) -> String {
    match kind.and_then(|k| BLOCKS.iter().find(|b| b.0 == k)) {
        Some((k, what, keys)) => format!(
            "placeholders: {}; inside {{{{#{k}}}}}…{{{{/{k}}}}} ({what}) also {}",
            GLOBAL.join(", "),
            keys.join(", ")
        ),
        None => format!(
            "placeholders: {}; blocks {}",
            GLOBAL.join(", "),
            BLOCKS
                .iter()
                .map(|(k, _, _)| format!("{{{{#{k}}}}}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Renders the configuration of switch `sw` from `template` (the text of
/// the template file named `template_name` in diagnostics).
///
/// # Errors
/// Diagnostics for unknown placeholders and unbalanced sections, and for a
/// template that cannot say what the switch needs: a `{{#vlan}}`,
/// `{{#svi}}` or `{{#port-channel}}` block, `{{features}}`, or in
/// `{{#interface}}` the `{{switchport}}` and `{{channel}}` placeholders of
/// switchports and port-channel members (a literal `no switchport` there
/// is wrong for them).
pub fn render_switch(
    t: &Topology,
    sw: &str,
    template: &str,
    template_name: &str,
) -> Result<String, Vec<Diagnostic>> {
    render_switch_with(t, sw, template, template_name, &|e| t.ifname(e))
}

/// How a switch port's Linux interface is named in a rendered
/// configuration (`bind af-packet NAME`): [`Topology::ifname`] for
/// `lab up`'s veths (`e1-1`), the container's `ethN` for an export
/// ([`super::containerlab`]).
pub type Ifname<'a> = &'a dyn Fn(&Endpoint) -> String;

/// [`render_switch`] with the ports' Linux interfaces named by `ifname`.
///
/// # Errors
/// As [`render_switch`].
pub fn render_switch_with(
    t: &Topology,
    sw: &str,
    template: &str,
    template_name: &str,
    ifname: Ifname<'_>,
) -> Result<String, Vec<Diagnostic>> {
    let role = t
        .switches
        .iter()
        .find(|s| s.name == sw)
        .map(|s| s.role.clone())
        .unwrap_or_default();
    let mut ports: Vec<_> = t.links_of(sw).collect();
    ports.sort_by(|(_, a, _), (_, b, _)| crate::natural::cmp(&a.port, &b.port));
    // The routed switch–switch ports: what ECMP and DLB spread over.
    let uplinks: Vec<String> = ports
        .iter()
        .filter(|(l, _, r)| t.is_switch(&r.node) && l.subnet.is_some() && l.channel.is_none())
        .map(|(_, l, _)| l.port.clone())
        .collect();
    let routes: Vec<String> = match t.routing {
        LabRouting::Static => switch_routes(t, sw)
            .iter()
            .flat_map(|r| {
                r.next_hops
                    .iter()
                    .map(move |h| format!("ip route {} {h}", r.prefix))
            })
            .collect(),
        LabRouting::Bgp => vec![bgp_section(t, sw, &as_numbers(t))],
    };
    let svis = t.svis_on(sw);
    let channels = t.port_channels(sw);
    let mut features = Vec::new();
    if !svis.is_empty() {
        features.push("feature interface-vlan");
    }
    if !channels.is_empty() {
        features.push("feature lacp");
    }
    let global = |k: &str| -> Option<Option<String>> {
        match k {
            "hostname" => Some(Some(sw.to_string())),
            "role" => Some(Some(role.clone())),
            "uplinks" => Some((!uplinks.is_empty()).then(|| uplinks.join(", "))),
            "routes" => Some((!routes.is_empty()).then(|| routes.join("\n"))),
            "features" => Some((!features.is_empty()).then(|| features.join("\n"))),
            _ => None,
        }
    };
    let mut diags = Vec::new();
    let diag =
        |line: usize, col: usize, src: &str, message: String, kind: Option<&str>| Diagnostic {
            severity: Severity::Error,
            file: template_name.to_string(),
            line,
            col,
            source_line: src.to_string(),
            message,
            hint: Some(placeholder_hint(kind)),
        };
    let lines: Vec<&str> = template.lines().collect();
    // Where each block is: kind -> (opening line index, closing line index).
    let mut blocks: Vec<(&str, usize, usize)> = Vec::new();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        let opened = trimmed
            .strip_prefix("{{#")
            .and_then(|r| r.strip_suffix("}}"))
            .map(str::trim)
            .and_then(|k| BLOCKS.iter().find(|b| b.0 == k));
        if let Some(&(kind, _, keys)) = opened {
            let close = format!("{{{{/{kind}}}}}");
            let Some(end) = (i + 1..lines.len()).find(|&j| lines[j].trim() == close) else {
                diags.push(diag(
                    i + 1,
                    1,
                    line,
                    format!("`{{{{#{kind}}}}}` without `{close}`"),
                    Some(kind),
                ));
                break;
            };
            blocks.push((kind, i, end));
            for item in block_items(t, sw, kind, ifname) {
                let lookup = |k: &str| -> Option<Option<String>> {
                    match item.iter().find(|(key, _)| *key == k) {
                        Some((_, v)) => Some(v.clone()),
                        None if keys.contains(&k) => Some(None),
                        None => global(k),
                    }
                };
                for (j, body) in lines.iter().enumerate().take(end).skip(i + 1) {
                    match fill(body, &lookup) {
                        Ok(Some(s)) => {
                            out.push_str(&s);
                            out.push('\n');
                        }
                        Ok(None) => {}
                        Err((col, m)) => diags.push(diag(j + 1, col, body, m, Some(kind))),
                    }
                }
                if !diags.is_empty() {
                    break;
                }
            }
            i = end + 1;
            continue;
        }
        let closed = trimmed
            .strip_prefix("{{/")
            .and_then(|r| r.strip_suffix("}}"))
            .map(str::trim)
            .filter(|k| BLOCKS.iter().any(|b| b.0 == *k));
        if let Some(kind) = closed {
            diags.push(diag(
                i + 1,
                1,
                line,
                format!("`{{{{/{kind}}}}}` without `{{{{#{kind}}}}}`"),
                Some(kind),
            ));
        } else {
            match fill(line, &global) {
                Ok(Some(s)) => {
                    out.push_str(&s);
                    out.push('\n');
                }
                Ok(None) => {}
                Err((col, m)) => diags.push(diag(i + 1, col, line, m, None)),
            }
        }
        i += 1;
    }
    if diags.is_empty() {
        diags.extend(missing_pieces(t, sw, &lines, &blocks, template_name));
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// What a template lacks to configure the Layer 2 of switch `sw` (see
/// [`render_switch`]), given its lines and where its blocks are.
fn missing_pieces(
    t: &Topology,
    sw: &str,
    lines: &[&str],
    blocks: &[(&str, usize, usize)],
    template_name: &str,
) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let whole = |message: String, hint: String| {
        let mut d = Diagnostic::whole_file(Severity::Error, template_name, message);
        d.hint = Some(hint);
        d
    };
    let has_block = |k: &str| blocks.iter().any(|b| b.0 == k);
    let in_block = |k: &str, needle: &str| {
        blocks
            .iter()
            .filter(|b| b.0 == k)
            .any(|&(_, i, end)| lines[i + 1..end].iter().any(|l| l.contains(needle)))
    };
    let shipped = "see the shipped templates/rail.conf, or scripts/topologies/README.md";
    let ports: Vec<_> = t.links_of(sw).collect();
    // A switchport: an access port, a trunk, a trunk port-channel's member.
    let switched = ports
        .iter()
        .find(|(l, _, _)| l.vlan.is_some() || !l.trunk.is_empty());
    let member = ports.iter().find(|(l, _, _)| l.channel.is_some());
    if let Some((l, local, _)) = switched.filter(|_| has_block("interface")) {
        let what = match l.vlan {
            Some(v) => format!("an access port in VLAN {v}"),
            None => format!("a trunk of VLAN {}", vlan_list(&l.trunk)),
        };
        let literal = blocks
            .iter()
            .filter(|b| b.0 == "interface")
            .flat_map(|&(_, i, end)| (i + 1..end).map(move |j| (j, lines[j])))
            .find(|(_, line)| line.trim() == "no switchport");
        if let Some((j, line)) = literal {
            let col = line.len() - line.trim_start().len() + 1;
            out.push(Diagnostic {
                severity: Severity::Error,
                file: template_name.to_string(),
                line: j + 1,
                col,
                source_line: line.to_string(),
                message: format!(
                    "`no switchport` on every port, but {} of {sw} is {what}",
                    local.port
                ),
                hint: Some(
                    "write `{{switchport}}`: `no switchport` on routed ports, the switchport lines on the others"
                        .into(),
                ),
            });
        } else if !in_block("interface", "{{switchport}}") {
            out.push(whole(
                format!(
                    "the `{{{{#interface}}}}` block has no `{{{{switchport}}}}`, but {} of {sw} is {what}",
                    local.port
                ),
                format!("add a line `  {{{{switchport}}}}` to the block; {shipped}"),
            ));
        }
    }
    if let Some((l, local, _)) = member.filter(|_| has_block("interface")) {
        if !in_block("interface", "{{channel}}") {
            out.push(whole(
                format!(
                    "the `{{{{#interface}}}}` block has no `{{{{channel}}}}`, but {} of {sw} is a member of port-channel{}",
                    local.port,
                    l.channel.unwrap_or_default()
                ),
                format!("add a line `  {{{{channel}}}}` to the block; {shipped}"),
            ));
        }
    }
    let needs: [(&str, Option<String>); 3] = [
        (
            "vlan",
            t.vlans_on(sw)
                .first()
                .map(|v| format!("{sw} carries VLAN {}", v.id)),
        ),
        (
            "svi",
            t.svis_on(sw)
                .first()
                .map(|v| format!("{sw} has the SVI of VLAN {}", v.id)),
        ),
        (
            "port-channel",
            t.port_channels(sw)
                .first()
                .map(|pc| format!("{sw} has {} to {}", pc.name(), pc.peer)),
        ),
    ];
    for (kind, need) in needs {
        if let (Some(why), false) = (need, has_block(kind)) {
            out.push(whole(
                format!("the template has no `{{{{#{kind}}}}}` block, but {why}"),
                format!("add `{{{{#{kind}}}}}` … `{{{{/{kind}}}}}`; {shipped}"),
            ));
        }
    }
    let needs_features = !t.svis_on(sw).is_empty() || !t.port_channels(sw).is_empty();
    if needs_features && !lines.iter().any(|l| l.contains("{{features}}")) {
        out.push(whole(
            format!("the template has no `{{{{features}}}}`, but {sw} needs `feature interface-vlan` or `feature lacp`"),
            format!("add a line `{{{{features}}}}` near the top; {shipped}"),
        ));
    }
    out
}

/// Renders every switch of the topology and checks that each configuration
/// parses and compiles.
///
/// # Errors
/// A missing template, template diagnostics, or the configuration's own
/// diagnostics (naming the switch).
pub fn render_all(t: &Topology) -> Result<Vec<Rendered>, String> {
    render_all_with(t, &|e| t.ifname(e))
}

/// [`render_all`] with the ports' Linux interfaces named by `ifname`.
///
/// # Errors
/// As [`render_all`].
pub fn render_all_with(t: &Topology, ifname: Ifname<'_>) -> Result<Vec<Rendered>, String> {
    let mut out = Vec::new();
    for s in &t.switches {
        let (source, text) = find_template(t, &s.role).map_err(|e| {
            format!(
                "{}:{}: switch {} has role `{}`, but {e}",
                t.path.display(),
                s.line,
                s.name,
                s.role,
            )
        })?;
        let config = render_switch_with(t, &s.name, &text, &source.to_string(), ifname)
            .map_err(|d| crate::format_diagnostics(&d))?;
        let label = format!("{} (generated for {} from {source})", s.name, s.name);
        let parsed = railyard_config::parse_str(&config, &label, &Default::default())
            .map_err(|d| crate::format_diagnostics(&d))?;
        crate::compile::compile(&parsed.config).map_err(|d| crate::format_diagnostics(&d))?;
        out.push(Rendered {
            switch: s.name.clone(),
            template: source,
            config,
        });
    }
    Ok(out)
}
