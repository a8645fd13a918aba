//! `railyard lab status` and `railyard lab cabling`: every switch's
//! interfaces and LLDP neighbours, and the neighbours checked against the
//! topology's cables.

use std::io::Write;

use serde::Serialize;

use super::run::{switch_alive, LabState};
use crate::lldp::LldpSnapshot;
use crate::natural;

/// One switch as `status` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct SwitchStatus {
    /// Switch name.
    pub name: String,
    /// Namespace.
    pub namespace: String,
    /// PID of its `railyard run`.
    pub pid: u32,
    /// Whether that process is running.
    pub running: bool,
    /// Management socket.
    pub socket: String,
    /// Why the switch could not be asked, if it could not.
    pub error: Option<String>,
    /// Interfaces in port order.
    pub interfaces: Vec<InterfaceRow>,
    /// LLDP neighbours.
    pub neighbors: Vec<NeighborRow>,
}

/// An interface line of `status`.
#[derive(Debug, Clone, Serialize)]
pub struct InterfaceRow {
    /// `Ethernet1/1`.
    pub name: String,
    /// Link up.
    pub link_up: bool,
    /// Configured addresses.
    pub addresses: Vec<String>,
    /// Speed in Mb/s.
    pub speed_mbps: Option<u32>,
    /// Frames received.
    pub rx_packets: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// What the topology cables to it (`h1:eth0`).
    pub peer: String,
}

/// An LLDP neighbour of a switch.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct NeighborRow {
    /// Local port.
    pub local_port: String,
    /// Neighbour's system name (or chassis ID).
    pub system_name: String,
    /// Neighbour's port ID.
    pub port_id: String,
    /// TTL advertised.
    pub ttl: u16,
}

/// The neighbours of every port, ports in natural order (`Ethernet1/4`
/// before `Ethernet1/32`), each port's in the order first heard.
fn neighbor_rows(s: &LldpSnapshot) -> Vec<NeighborRow> {
    let mut rows: Vec<NeighborRow> = s
        .ports
        .iter()
        .flat_map(|p| {
            p.neighbors.iter().map(move |n| NeighborRow {
                local_port: p.name.clone(),
                system_name: n.device_id().to_string(),
                port_id: n.port_id.clone(),
                ttl: n.ttl,
            })
        })
        .collect();
    rows.sort_by(|a, b| natural::cmp(&a.local_port, &b.local_port));
    rows
}

/// Asks every switch of the lab for its interfaces and LLDP neighbours.
pub fn status(state: &LabState) -> Vec<SwitchStatus> {
    state
        .switches
        .iter()
        .map(|sw| {
            let mut st = SwitchStatus {
                name: sw.name.clone(),
                namespace: sw.namespace.clone(),
                pid: sw.pid,
                running: switch_alive(sw),
                socket: sw.socket.display().to_string(),
                error: None,
                interfaces: Vec::new(),
                neighbors: Vec::new(),
            };
            let peers: std::collections::BTreeMap<String, String> = state
                .topology
                .links_of(&sw.name)
                .map(|(_, l, r)| (l.port.clone(), r.to_string()))
                .collect();
            match crate::mgmt::fetch_stats(&sw.socket) {
                Ok(stats) => {
                    let mut rows: Vec<InterfaceRow> = stats
                        .interfaces
                        .iter()
                        .map(|(name, i)| InterfaceRow {
                            name: name.clone(),
                            link_up: i.link_up,
                            addresses: i.addresses.clone(),
                            speed_mbps: i.speed_mbps,
                            rx_packets: i.rx_packets,
                            tx_packets: i.tx_packets,
                            peer: peers.get(name).cloned().unwrap_or_default(),
                        })
                        .collect();
                    rows.sort_by(|a, b| natural::cmp(&a.name, &b.name));
                    st.interfaces = rows;
                }
                Err(e) => st.error = Some(e),
            }
            match crate::show::lldp::fetch_lldp(&sw.socket) {
                Ok(snap) => st.neighbors = neighbor_rows(&snap),
                Err(e) => {
                    st.error.get_or_insert(e);
                }
            }
            st
        })
        .collect()
}

fn speed_text(mbps: Option<u32>) -> String {
    match mbps {
        None => "auto".into(),
        Some(m) if m % 1000 == 0 => format!("{}G", m / 1000),
        Some(m) => format!("{m}M"),
    }
}

/// Renders `status` as text.
///
/// # Errors
/// Write errors.
pub fn render_status(
    out: &mut dyn Write,
    state: &LabState,
    switches: &[SwitchStatus],
) -> std::io::Result<()> {
    writeln!(
        out,
        "lab {} (topology {}, {} switches, {} hosts; state {})",
        state.name,
        state.topology_name,
        state.switches.len(),
        state.hosts.len(),
        state.dir.display()
    )?;
    for s in switches {
        writeln!(out)?;
        writeln!(
            out,
            "{}  namespace {}  pid {} ({})  socket {}",
            s.name,
            s.namespace,
            s.pid,
            if s.running { "running" } else { "NOT RUNNING" },
            s.socket
        )?;
        if let Some(e) = &s.error {
            writeln!(out, "  cannot ask the switch: {e}")?;
            continue;
        }
        writeln!(
            out,
            "  {:<13} {:<5} {:<18} {:>6} {:>10} {:>10}  Cabled to",
            "Interface", "Link", "Address", "Speed", "RX pkts", "TX pkts"
        )?;
        for i in &s.interfaces {
            writeln!(
                out,
                "  {:<13} {:<5} {:<18} {:>6} {:>10} {:>10}  {}",
                i.name,
                if i.link_up { "up" } else { "down" },
                i.addresses.first().map(String::as_str).unwrap_or("-"),
                speed_text(i.speed_mbps),
                i.rx_packets,
                i.tx_packets,
                i.peer
            )?;
        }
        if s.neighbors.is_empty() {
            writeln!(out, "  LLDP neighbours: none")?;
        } else {
            writeln!(out, "  LLDP neighbours:")?;
            writeln!(
                out,
                "    {:<13} {:<20} {:<14} TTL",
                "Local Intf", "Device ID", "Port ID"
            )?;
            for n in &s.neighbors {
                writeln!(
                    out,
                    "    {:<13} {:<20} {:<14} {}",
                    n.local_port, n.system_name, n.port_id, n.ttl
                )?;
            }
        }
    }
    writeln!(out)?;
    writeln!(out, "hosts:")?;
    for h in &state.hosts {
        let addrs: Vec<String> = h
            .addresses
            .iter()
            .map(|(i, a)| format!("{i} {a}"))
            .collect();
        writeln!(
            out,
            "  {:<8} namespace {:<24} {}",
            h.name,
            h.namespace,
            addrs.join(", ")
        )?;
    }
    Ok(())
}

/// Verdict on one cabled switch port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CableStatus {
    /// The expected neighbour is seen on the expected port.
    Ok,
    /// No LLDP neighbour is seen on the port.
    Missing,
    /// Another neighbour (or port) is seen than the topology says.
    Mismatch,
    /// A host port: hosts run no LLDP by default, so nothing is expected.
    Host,
    /// The switch could not be asked.
    Unknown,
}

/// One line of the cabling table.
#[derive(Debug, Clone, Serialize)]
pub struct CableRow {
    /// Local switch.
    pub switch: String,
    /// Local port.
    pub port: String,
    /// Expected peer `NODE PORT`.
    pub expected: String,
    /// Neighbours seen, `NAME PORT`, comma-separated; `-` for none.
    pub seen: String,
    /// Verdict.
    pub status: CableStatus,
}

impl CableRow {
    /// Whether the row fails the check.
    pub fn is_bad(&self) -> bool {
        matches!(
            self.status,
            CableStatus::Missing | CableStatus::Mismatch | CableStatus::Unknown
        )
    }
}

fn same_port(a: &str, b: &str) -> bool {
    match (
        a.parse::<railyard_config::InterfaceName>(),
        b.parse::<railyard_config::InterfaceName>(),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Compares every switch's LLDP neighbours with the topology's cables.
pub fn cabling(state: &LabState) -> Vec<CableRow> {
    let t = &state.topology;
    let mut rows = Vec::new();
    for sw in &state.switches {
        let snap = crate::show::lldp::fetch_lldp(&sw.socket);
        let mut ports: Vec<_> = t.links_of(&sw.name).collect();
        ports.sort_by(|(_, a, _), (_, b, _)| natural::cmp(&a.port, &b.port));
        for (_, local, remote) in ports {
            let seen: Vec<NeighborRow> = match &snap {
                Ok(s) => neighbor_rows(s)
                    .into_iter()
                    .filter(|n| same_port(&n.local_port, &local.port))
                    .collect(),
                Err(_) => Vec::new(),
            };
            let seen_text = if seen.is_empty() {
                "-".to_string()
            } else {
                seen.iter()
                    .map(|n| format!("{} {}", n.system_name, n.port_id))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let is_host = !t.is_switch(&remote.node);
            let status = if snap.is_err() {
                CableStatus::Unknown
            } else if is_host {
                CableStatus::Host
            } else if seen.is_empty() {
                CableStatus::Missing
            } else if seen.len() == 1
                && seen[0].system_name == remote.node
                && same_port(&seen[0].port_id, &remote.port)
            {
                CableStatus::Ok
            } else {
                CableStatus::Mismatch
            };
            rows.push(CableRow {
                switch: sw.name.clone(),
                port: local.port.clone(),
                expected: if is_host {
                    format!("{} {} (host, no LLDP)", remote.node, remote.port)
                } else {
                    format!("{} {}", remote.node, remote.port)
                },
                seen: match (&snap, status) {
                    (Err(_), _) => "switch unreachable".into(),
                    _ => seen_text,
                },
                status,
            });
        }
    }
    rows
}

/// What keeps a lab from being ready, one line per problem: a switch that
/// does not answer, a cabled switch port whose link is down, a
/// switch–switch port whose LLDP neighbour is not (yet) the topology's
/// peer. Empty when every switch port is up and every switch–switch cable
/// is seen by LLDP on both of its ends, so `cabling` passes.
pub fn not_ready(state: &LabState) -> Vec<String> {
    let mut missing = Vec::new();
    for sw in &state.switches {
        match crate::mgmt::fetch_stats(&sw.socket) {
            Ok(stats) => {
                let mut ports: Vec<_> = state.topology.links_of(&sw.name).collect();
                ports.sort_by(|(_, a, _), (_, b, _)| natural::cmp(&a.port, &b.port));
                for (_, local, _) in ports {
                    match stats.interfaces.get(&local.port) {
                        Some(i) if i.link_up => {}
                        Some(_) => missing.push(format!("{} {}: link down", sw.name, local.port)),
                        None => missing.push(format!(
                            "{} {}: not in the switch's interfaces",
                            sw.name, local.port
                        )),
                    }
                }
            }
            Err(e) => missing.push(format!("{}: cannot ask the switch: {e}", sw.name)),
        }
    }
    for r in cabling(state) {
        let what = match r.status {
            CableStatus::Ok | CableStatus::Host | CableStatus::Unknown => continue,
            CableStatus::Missing => format!("no LLDP neighbour yet (expected {})", r.expected),
            CableStatus::Mismatch => format!("LLDP sees {}, expected {}", r.seen, r.expected),
        };
        missing.push(format!("{} {}: {what}", r.switch, r.port));
    }
    missing
}

/// How a lab became ready, for `up` to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ready {
    /// Cabled switch ports (all of them up).
    pub ports: usize,
    /// Switch–switch cables (each seen by LLDP on both ends).
    pub cables: usize,
    /// How long it took.
    pub after: std::time::Duration,
}

/// Waits until [`not_ready`] is empty, polling every 200 ms for at most
/// `timeout`.
///
/// # Errors
/// On timeout, what is still missing.
pub fn wait_ready(state: &LabState, timeout: std::time::Duration) -> Result<Ready, Vec<String>> {
    let t0 = std::time::Instant::now();
    let t = &state.topology;
    let ports = t
        .links
        .iter()
        .flat_map(|l| [&l.a, &l.b])
        .filter(|e| t.is_switch(&e.node))
        .count();
    let cables = t.links.iter().filter(|l| !t.is_host_link(l)).count();
    loop {
        let missing = not_ready(state);
        if missing.is_empty() {
            return Ok(Ready {
                ports,
                cables,
                after: t0.elapsed(),
            });
        }
        if t0.elapsed() >= timeout {
            return Err(missing);
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Renders the cabling table; `color` highlights failing rows in red,
/// otherwise they are marked `!!`.
///
/// # Errors
/// Write errors.
pub fn render_cabling(out: &mut dyn Write, rows: &[CableRow], color: bool) -> std::io::Result<()> {
    let w = |f: fn(&CableRow) -> usize, min: usize| rows.iter().map(f).max().unwrap_or(0).max(min);
    let (ws, wp, we, wn) = (
        w(|r| r.switch.len(), 6),
        w(|r| r.port.len(), 4),
        w(|r| r.expected.len(), 8),
        w(|r| r.seen.len(), 4),
    );
    writeln!(
        out,
        "   {:<ws$}  {:<wp$}  {:<we$}  {:<wn$}  Status",
        "Switch", "Port", "Expected", "Seen"
    )?;
    for r in rows {
        let status = match r.status {
            CableStatus::Ok => "OK",
            CableStatus::Missing => "MISSING",
            CableStatus::Mismatch => "MISMATCH",
            CableStatus::Host => "host",
            CableStatus::Unknown => "UNKNOWN",
        };
        let line = format!(
            "{:<ws$}  {:<wp$}  {:<we$}  {:<wn$}  {status}",
            r.switch, r.port, r.expected, r.seen
        );
        match (r.is_bad(), color) {
            (true, true) => writeln!(out, "!! \x1b[1;31m{line}\x1b[0m")?,
            (true, false) => writeln!(out, "!! {line}")?,
            (false, _) => writeln!(out, "   {line}")?,
        }
    }
    let count = |s: CableStatus| rows.iter().filter(|r| r.status == s).count();
    writeln!(
        out,
        "{} switch-switch ports OK, {} missing, {} mismatched, {} unknown; {} host ports",
        count(CableStatus::Ok),
        count(CableStatus::Missing),
        count(CableStatus::Mismatch),
        count(CableStatus::Unknown),
        count(CableStatus::Host)
    )
}
