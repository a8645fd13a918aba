//! `railyard lab export --format containerlab`: a topology as a
//! containerlab topology file (`NAME.clab.yml`) and the switch
//! configurations it mounts, so that the same `.topo` runs as namespaces
//! (`lab up`), in virtual time (`sim`), or under containerlab on one host,
//! across hosts or on Kubernetes (clabernetes).
//!
//! Every node is a `kind: linux` container. containerlab gives a
//! container its data interfaces as `eth1`, `eth2`, … (`eth0` is its
//! management interface), so each node's ports, in natural order, become
//! `eth1`, `eth2`, … ([`interface_map`]): a switch's configuration binds
//! `Ethernet1/1` to the `ethN` it got (`bind af-packet ethN`), rendered by
//! the same templates as `lab up`'s; a host's addresses, routes and rules
//! are `lab up`'s `ip` commands ([`host_commands`]) on its `ethN`, in the
//! node's `exec` list, which containerlab runs once the links are there.
//!
//! The switch image's entry point is `railyard run --config`
//! [`CONFIG_PATH`] `--wait-ports …` with the management socket at
//! [`mgmt::DEFAULT_SOCKET`](crate::mgmt::DEFAULT_SOCKET), so `docker exec
//! NODE railyard show interface` needs no flags; the export mounts each
//! switch's configuration there and checks its health with `railyard show
//! interface`.
//!
//! A `routing bgp` topology's switches run the FRR image instead
//! ([`default_frr_image`], `scripts/image.sh --frr`): the switch image plus
//! FRR's zebra, bgpd, bfdd and vtysh. The entry point is the same; the
//! rendered configuration has `router bgp`, so `railyard run` starts FRR
//! beside the switch (`--routing auto`), as `lab up` does.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::render::render_all_with;
use super::routes::{host_commands, host_nics};
use super::topology::{Endpoint, LabRouting, Topology};

/// Where the switch image reads its configuration (the export binds each
/// switch's `SWITCH.conf` here).
pub const CONFIG_PATH: &str = "/etc/railyard/railyard.conf";

/// The image tag of this version's switch image, as `scripts/image.sh`
/// builds it.
pub fn default_image() -> String {
    format!("railyard:{}", env!("CARGO_PKG_VERSION"))
}

/// The image tag of this version's host image (busybox's `ip` and `ping`
/// and the railyard binary), as `scripts/image.sh` builds it.
pub fn default_host_image() -> String {
    format!("railyard-host:{}", env!("CARGO_PKG_VERSION"))
}

/// The image tag of this version's FRR image (the switch image with FRR,
/// for `routing bgp`), as `scripts/image.sh --frr` builds it.
pub fn default_frr_image() -> String {
    format!("railyard-frr:{}", env!("CARGO_PKG_VERSION"))
}

/// What to export.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// The switches' image when the topology routes statically.
    pub image: String,
    /// The switches' image when the topology has `routing bgp`: it needs
    /// FRR's daemons in `/usr/lib/frr`, `vtysh` and the `frr` user.
    pub frr_image: String,
    /// The hosts' image: it needs `ip` (with `ip rule`) and a command that
    /// keeps the container running.
    pub host_image: String,
}

impl Default for ExportOptions {
    fn default() -> Self {
        ExportOptions {
            image: default_image(),
            frr_image: default_frr_image(),
            host_image: default_host_image(),
        }
    }
}

/// The container interface (`eth1`, `eth2`, …) of every `(node, port)`:
/// each node's ports in natural order (`Ethernet1/2` before
/// `Ethernet1/10`, `eth0` before `eth1`), numbered from 1.
pub fn interface_map(t: &Topology) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    let nodes = t
        .switches
        .iter()
        .map(|s| &s.name)
        .chain(t.hosts.iter().map(|h| &h.name));
    for node in nodes {
        let mut ports: Vec<&str> = t.links_of(node).map(|(_, l, _)| l.port.as_str()).collect();
        ports.sort_by(|a, b| crate::natural::cmp(a, b));
        ports.dedup();
        for (i, port) in ports.into_iter().enumerate() {
            out.insert((node.clone(), port.to_string()), format!("eth{}", i + 1));
        }
    }
    out
}

/// A YAML value, written in the order it was built (containerlab files
/// read top-down: name, nodes, links).
#[derive(Debug, Clone)]
enum Yaml {
    Str(String),
    Int(u64),
    List(Vec<Yaml>),
    /// A short list of strings on one line: `[a, b]`.
    Flow(Vec<String>),
    Map(Vec<(String, Yaml)>),
}

fn s(v: impl Into<String>) -> Yaml {
    Yaml::Str(v.into())
}

/// A scalar as YAML: plain when it cannot be read as anything but this
/// string, else double-quoted (JSON's escapes are YAML's).
fn scalar(v: &str) -> String {
    let plain = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:@+= ".contains(c))
        && v.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && !v.ends_with([' ', ':'])
        && !v.contains(": ")
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "null" | "y" | "n"
        );
    if plain {
        v.to_string()
    } else {
        serde_json::to_string(v).unwrap_or_default()
    }
}

fn emit(out: &mut String, v: &Yaml, indent: usize) {
    let pad = " ".repeat(indent);
    match v {
        Yaml::Map(entries) => {
            for (k, v) in entries {
                match v {
                    Yaml::Map(_) | Yaml::List(_) => {
                        let _ = writeln!(out, "{pad}{}:", scalar(k));
                        emit(out, v, indent + 2);
                    }
                    Yaml::Str(x) => {
                        let _ = writeln!(out, "{pad}{}: {}", scalar(k), scalar(x));
                    }
                    Yaml::Int(n) => {
                        let _ = writeln!(out, "{pad}{}: {n}", scalar(k));
                    }
                    Yaml::Flow(items) => {
                        let _ = writeln!(out, "{pad}{}: {}", scalar(k), flow(items));
                    }
                }
            }
        }
        Yaml::List(items) => {
            for item in items {
                match item {
                    Yaml::Str(x) => {
                        let _ = writeln!(out, "{pad}- {}", scalar(x));
                    }
                    Yaml::Int(n) => {
                        let _ = writeln!(out, "{pad}- {n}");
                    }
                    Yaml::Flow(items) => {
                        let _ = writeln!(out, "{pad}- {}", flow(items));
                    }
                    Yaml::Map(_) => {
                        // `- key: value` then the rest indented under it.
                        let mut inner = String::new();
                        emit(&mut inner, item, indent + 2);
                        let trimmed = inner.trim_start_matches(' ');
                        let _ = write!(out, "{pad}- {trimmed}");
                    }
                    Yaml::List(_) => {
                        let _ = writeln!(out, "{pad}-");
                        emit(out, item, indent + 2);
                    }
                }
            }
        }
        Yaml::Str(x) => {
            let _ = writeln!(out, "{pad}{}", scalar(x));
        }
        Yaml::Int(n) => {
            let _ = writeln!(out, "{pad}{n}");
        }
        Yaml::Flow(items) => {
            let _ = writeln!(out, "{pad}{}", flow(items));
        }
    }
}

/// `["a", "b"]`: quoted, as containerlab's own examples write endpoints.
fn flow(items: &[String]) -> String {
    let words: Vec<String> = items
        .iter()
        .map(|i| serde_json::to_string(i).unwrap_or_default())
        .collect();
    format!("[{}]", words.join(", "))
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct Exported {
    /// `DIR/TOPOLOGY.clab.yml`.
    pub topology_file: PathBuf,
    /// `DIR/SWITCH.conf`, in topology order.
    pub configs: Vec<PathBuf>,
}

/// The containerlab topology file and the switch configurations of `t`,
/// as text: `(file name, contents)`, the topology file first.
///
/// # Errors
/// A switch whose configuration does not render or compile (as `lab
/// render`), or a topology name containerlab would refuse.
pub fn export_files(t: &Topology, opts: &ExportOptions) -> Result<Vec<(String, String)>, String> {
    let name_ok = t.name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && t.name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
    if !name_ok {
        return Err(format!(
            "topology name {:?}: containerlab takes letters, digits, `-`, `.` and `_`, \
             starting with a letter or digit (rename the file)",
            t.name
        ));
    }
    let image = match t.routing {
        LabRouting::Bgp => &opts.frr_image,
        LabRouting::Static => &opts.image,
    };
    let map = interface_map(t);
    let eth = |node: &str, port: &str| -> String {
        map.get(&(node.to_string(), port.to_string()))
            .cloned()
            .unwrap_or_else(|| port.to_string())
    };
    let rendered = render_all_with(t, &|e: &Endpoint| eth(&e.node, &e.port))?;
    let mut nodes = Vec::new();
    for r in &rendered {
        let ports = t.links_of(&r.switch).count() as u64;
        nodes.push((
            r.switch.clone(),
            Yaml::Map(vec![
                ("kind".into(), s("linux")),
                ("image".into(), s(image)),
                (
                    "binds".into(),
                    Yaml::List(vec![s(format!("{}.conf:{CONFIG_PATH}:ro", r.switch))]),
                ),
                (
                    "healthcheck".into(),
                    Yaml::Map(vec![
                        (
                            "test".into(),
                            Yaml::Flow(
                                ["CMD", "railyard", "show", "interface"]
                                    .map(String::from)
                                    .to_vec(),
                            ),
                        ),
                        ("start-period".into(), Yaml::Int(5 + ports)),
                        ("interval".into(), Yaml::Int(10)),
                        ("timeout".into(), Yaml::Int(5)),
                        ("retries".into(), Yaml::Int(3)),
                    ]),
                ),
            ]),
        ));
    }
    for h in &t.hosts {
        let mut nics = host_nics(t, &h.name);
        for n in &mut nics {
            n.ifname = eth(&h.name, &n.ifname);
        }
        let exec: Vec<Yaml> = host_commands(&nics)
            .into_iter()
            .map(|c| s(format!("ip {}", c.join(" "))))
            .collect();
        let mut node = vec![
            ("kind".into(), s("linux")),
            ("image".into(), s(&opts.host_image)),
        ];
        if !exec.is_empty() {
            node.push(("exec".into(), Yaml::List(exec)));
        }
        nodes.push((h.name.clone(), Yaml::Map(node)));
    }
    let links: Vec<Yaml> = t
        .links
        .iter()
        .map(|l| {
            Yaml::Map(vec![
                (
                    "endpoints".into(),
                    Yaml::Flow(vec![
                        format!("{}:{}", l.a.node, eth(&l.a.node, &l.a.port)),
                        format!("{}:{}", l.b.node, eth(&l.b.node, &l.b.port)),
                    ]),
                ),
                ("mtu".into(), Yaml::Int(u64::from(l.mtu))),
            ])
        })
        .collect();
    let doc = Yaml::Map(vec![
        ("name".into(), s(&t.name)),
        (
            "topology".into(),
            Yaml::Map(vec![
                ("nodes".into(), Yaml::Map(nodes)),
                ("links".into(), Yaml::List(links)),
            ]),
        ),
    ]);
    let mut text = format!(
        "# containerlab topology of railyard lab `{}`, written by `railyard lab export \
         --format containerlab`.\n\
         # Switch ports as containerlab names them (eth0 is the management interface):\n",
        t.name
    );
    for sw in &t.switches {
        let mut ports: Vec<(&String, &String)> = map
            .iter()
            .filter(|((node, _), _)| *node == sw.name)
            .map(|((_, port), e)| (e, port))
            .collect();
        ports.sort_by(|a, b| crate::natural::cmp(a.0, b.0));
        let ports: Vec<String> = ports.iter().map(|(e, p)| format!("{e}={p}")).collect();
        let _ = writeln!(text, "#   {}: {}", sw.name, ports.join(" "));
    }
    emit(&mut text, &doc, 0);
    let mut files = vec![(format!("{}.clab.yml", t.name), text)];
    files.extend(
        rendered
            .into_iter()
            .map(|r| (format!("{}.conf", r.switch), r.config)),
    );
    Ok(files)
}

/// Writes [`export_files`] into `out` (created if missing).
///
/// # Errors
/// As [`export_files`], or a file that cannot be written.
pub fn export(t: &Topology, opts: &ExportOptions, out: &Path) -> Result<Exported, String> {
    let files = export_files(t, opts)?;
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let mut paths = Vec::new();
    for (name, text) in files {
        let p = out.join(name);
        std::fs::write(&p, text).map_err(|e| format!("writing {}: {e}", p.display()))?;
        paths.push(p);
    }
    let topology_file = paths.remove(0);
    Ok(Exported {
        topology_file,
        configs: paths,
    })
}

#[cfg(test)]
#[path = "containerlab_tests.rs"]
mod tests;
