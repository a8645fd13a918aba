//! Switch configurations generated from role templates.
//!
//! A template (`templates/ROLE.conf` beside the topology file) is NX-OS
//! configuration text with placeholders:
//!
//! - anywhere: `{{hostname}}`, `{{role}}`, `{{uplinks}}` (the switch–switch
//!   ports, `Ethernet1/31, Ethernet1/32`), `{{routes}}` (the computed
//!   `ip route` lines; alone on its line);
//! - between `{{#interface}}` and `{{/interface}}` (each on a line of its
//!   own), repeated for every cabled port in port order: `{{name}}`
//!   (`Ethernet1/1`), `{{ifname}}` (the veth, `e1-1`), `{{address}}`
//!   (`10.1.1.1/24`), `{{speed}}`, `{{mtu}}`, `{{peer}}` (`h1:eth0`),
//!   `{{description}}` (`to h1 eth0`).
//!
//! A line whose placeholder has no value (`{{speed}}` on a link without a
//! speed, `{{uplinks}}` on a switch without uplinks) is left out.

use std::path::{Path, PathBuf};

use railyard_config::{Diagnostic, InterfaceName, Severity};

use super::routes::switch_routes;
use super::topology::Topology;

/// A generated switch configuration.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// Switch name.
    pub switch: String,
    /// The template it came from.
    pub template: PathBuf,
    /// NX-OS configuration text.
    pub config: String,
}

/// Where the template of `role` lives for topology `t`.
pub fn template_path(t: &Topology, role: &str) -> PathBuf {
    t.path
        .parent()
        .unwrap_or(Path::new("."))
        .join("templates")
        .join(format!("{role}.conf"))
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
    ports.sort_by_key(|(_, local, _)| local.port.parse::<InterfaceName>().ok());
    let uplinks: Vec<String> = ports
        .iter()
        .filter(|(_, _, r)| t.is_switch(&r.node))
        .map(|(_, l, _)| l.port.clone())
        .collect();
    let routes: Vec<String> = switch_routes(t, sw)
        .iter()
        .flat_map(|r| {
            r.next_hops
                .iter()
                .map(move |h| format!("ip route {} {h}", r.prefix))
        })
        .collect();
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
        let path = template_path(t, &s.role);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}:{}: switch {} has role `{}`, but its template {} cannot be read: {e}",
                t.path.display(),
                s.line,
                s.name,
                s.role,
                path.display()
            )
        })?;
        let config = render_switch(t, &s.name, &text, &path.display().to_string())
            .map_err(|d| crate::format_diagnostics(&d))?;
        let label = format!(
            "{} (generated for {} from {})",
            s.name,
            s.name,
            path.display()
        );
        let parsed = railyard_config::parse_str(&config, &label, &Default::default())
            .map_err(|d| crate::format_diagnostics(&d))?;
        crate::compile::compile(&parsed.config).map_err(|d| crate::format_diagnostics(&d))?;
        out.push(Rendered {
            switch: s.name.clone(),
            template: path,
            config,
        });
    }
    Ok(out)
}
