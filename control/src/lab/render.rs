//! Switch configurations generated from role templates.
//!
//! A role's template is `templates/ROLE.conf` beside the topology file, or,
//! when there is none, the shipped template of that name, built into the
//! binary ([`BUILTIN_TEMPLATES`]) so that a topology anywhere can use the
//! shipped roles. A template is NX-OS configuration text with placeholders:
//!
//! - anywhere: `{{hostname}}`, `{{role}}`, `{{uplinks}}` (the switch–switch
//!   ports, `Ethernet1/31, Ethernet1/32`), `{{routes}}` (the computed
//!   `ip route` lines, or with `routing bgp` the switch's eBGP section,
//!   see [`super::bgp`]; alone on its line);
//! - between `{{#interface}}` and `{{/interface}}` (each on a line of its
//!   own), repeated for every cabled port in port order: `{{name}}`
//!   (`Ethernet1/1`), `{{ifname}}` (the veth, `e1-1`), `{{address}}`
//!   (`10.1.1.1/24`), `{{speed}}`, `{{mtu}}`, `{{peer}}` (`h1:eth0`),
//!   `{{description}}` (`to h1 eth0`).
//!
//! A line whose placeholder has no value (`{{speed}}` on a link without a
//! speed, `{{uplinks}}` on a switch without uplinks) is left out.

use std::path::{Path, PathBuf};

use railyard_config::{Diagnostic, Severity};

use super::bgp::{as_numbers, bgp_section};
use super::routes::switch_routes;
use super::topology::{LabRouting, Topology};

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

const GLOBAL: [&str; 4] = ["hostname", "role", "uplinks", "routes"];
const PORT: [&str; 7] = [
    "name",
    "ifname",
    "address",
    "speed",
    "mtu",
    "peer",
    "description",
];

/// Fills one line's placeholders; `None` when one of them has no value.
/// Unknown placeholders are reported with their column.
fn fill(
    line: &str,
    lookup: &dyn Fn(&str) -> Option<Option<String>>,
) -> Result<Option<String>, (usize, String)> {
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
            Some(Some(v)) => out.push_str(&v),
        }
        offset += start + len + 2;
        rest = &rest[start + len + 2..];
    }
    out.push_str(rest);
    Ok(Some(out))
}

/// Renders the configuration of switch `sw` from `template` (the text of
/// the template file named `template_name` in diagnostics).
///
/// # Errors
/// Diagnostics for unknown placeholders and unbalanced sections.
pub fn render_switch(
    t: &Topology,
    sw: &str,
    template: &str,
    template_name: &str,
) -> Result<String, Vec<Diagnostic>> {
    let role = t
        .switches
        .iter()
        .find(|s| s.name == sw)
        .map(|s| s.role.clone())
        .unwrap_or_default();
    let mut ports: Vec<_> = t.links_of(sw).collect();
    ports.sort_by(|(_, a, _), (_, b, _)| crate::natural::cmp(&a.port, &b.port));
    let uplinks: Vec<String> = ports
        .iter()
        .filter(|(_, _, r)| t.is_switch(&r.node))
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
    let global = |k: &str| -> Option<Option<String>> {
        match k {
            "hostname" => Some(Some(sw.to_string())),
            "role" => Some(Some(role.clone())),
            "uplinks" => Some((!uplinks.is_empty()).then(|| uplinks.join(", "))),
            "routes" => Some((!routes.is_empty()).then(|| routes.join("\n"))),
            _ => None,
        }
    };
    let mut diags = Vec::new();
    let diag = |line: usize, col: usize, src: &str, message: String| Diagnostic {
        severity: Severity::Error,
        file: template_name.to_string(),
        line,
        col,
        source_line: src.to_string(),
        message,
        hint: Some(format!(
            "placeholders: {}; inside {{{{#interface}}}}…{{{{/interface}}}} also {}",
            GLOBAL.join(", "),
            PORT.join(", ")
        )),
    };
    let lines: Vec<&str> = template.lines().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim() == "{{#interface}}" {
            let Some(end) = (i + 1..lines.len()).find(|&j| lines[j].trim() == "{{/interface}}")
            else {
                diags.push(diag(
                    i + 1,
                    1,
                    line,
                    "`{{#interface}}` without `{{/interface}}`".into(),
                ));
                break;
            };
            for (link, local, remote) in &ports {
                let addr = t.address_of(link, local);
                let port = |k: &str| -> Option<Option<String>> {
                    Some(match k {
                        "name" => Some(local.port.clone()),
                        "ifname" => Some(t.ifname(local)),
                        "address" => Some(format!("{addr}/{}", link.subnet.len)),
                        "speed" => link.speed.map(|s| s.to_string()),
                        "mtu" => Some(link.mtu.to_string()),
                        "peer" => Some(remote.to_string()),
                        "description" => Some(format!("to {} {}", remote.node, remote.port)),
                        other => return global(other),
                    })
                };
                for (j, body) in lines.iter().enumerate().take(end).skip(i + 1) {
                    match fill(body, &port) {
                        Ok(Some(s)) => {
                            out.push_str(&s);
                            out.push('\n');
                        }
                        Ok(None) => {}
                        Err((col, m)) => diags.push(diag(j + 1, col, body, m)),
                    }
                }
                if !diags.is_empty() {
                    break;
                }
            }
            i = end + 1;
            continue;
        }
        if line.trim() == "{{/interface}}" {
            diags.push(diag(
                i + 1,
                1,
                line,
                "`{{/interface}}` without `{{#interface}}`".into(),
            ));
        } else {
            match fill(line, &global) {
                Ok(Some(s)) => {
                    out.push_str(&s);
                    out.push('\n');
                }
                Ok(None) => {}
                Err((col, m)) => diags.push(diag(i + 1, col, line, m)),
            }
        }
        i += 1;
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

/// Renders every switch of the topology and checks that each configuration
/// parses and compiles.
///
/// # Errors
/// A missing template, template diagnostics, or the configuration's own
/// diagnostics (naming the switch).
pub fn render_all(t: &Topology) -> Result<Vec<Rendered>, String> {
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
        let config = render_switch(t, &s.name, &text, &source.to_string())
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
