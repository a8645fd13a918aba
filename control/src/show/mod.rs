//! Show-command rendering: NX-OS-like text from counter snapshots.
//!
//! The management socket always answers with JSON; the text is rendered on
//! the client side from the same structures, so `--json` and text never
//! disagree. This module renders the interfaces, their PFC and the
//! replay summaries, and writes JSON in port order; [`qos`] the class-,
//! policy-map and queuing shows, [`lb`] routes, load-sharing and DLB,
//! [`lldp`] the LLDP neighbours, DCBX and counters, and [`l2`] the MAC
//! address table.

pub mod bgp;
pub mod l2;
pub mod lb;
pub mod lldp;
pub mod qos;

use std::collections::BTreeMap;
use std::io::Write;

use railyard_config::PfcMode;
use railyard_dataplane::stats::{InterfaceStats, SwitchStats};
use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::natural;

/// Interfaces in port order (Ethernet1/2 before Ethernet1/10), as NX-OS lists them.
pub fn in_port_order(stats: &SwitchStats) -> Vec<(&String, &InterfaceStats)> {
    by_name(&stats.interfaces)
}

/// A map's entries with the keys in natural order ([`natural::cmp`]).
fn by_name<V>(map: &BTreeMap<String, V>) -> Vec<(&String, &V)> {
    let mut v: Vec<_> = map.iter().collect();
    v.sort_by(|a, b| natural::cmp(a.0, b.0));
    v
}

/// Serializes a map keyed by names with the keys in natural order, where
/// `BTreeMap` would put `Ethernet1/32` before `Ethernet1/4`.
struct NaturalMap<'a, V>(&'a BTreeMap<String, V>);

impl<V: Serialize> Serialize for NaturalMap<'_, V> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let mut m = ser.serialize_map(Some(self.0.len()))?;
        for (k, v) in by_name(self.0) {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// [`SwitchStats`] as JSON with its fields in their usual order and the
/// interfaces and groups in natural order, so listings read like `show`.
pub struct StatsJson<'a>(pub &'a SwitchStats);

impl Serialize for StatsJson<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        let s = self.0;
        let mut st = ser.serialize_struct("SwitchStats", 9)?;
        st.serialize_field("hostname", &s.hostname)?;
        st.serialize_field("interfaces", &NaturalMap(&s.interfaces))?;
        st.serialize_field("pool", &s.pool)?;
        st.serialize_field("neighbor_parked", &s.neighbor_parked)?;
        st.serialize_field("load_balancing", &NaturalMap(&s.load_balancing))?;
        st.serialize_field("poll_gaps", &s.poll_gaps)?;
        st.serialize_field("mac_table", &s.mac_table)?;
        st.serialize_field("vlans", &s.vlans)?;
        st.serialize_field("monitor_sessions", &s.monitor_sessions)?;
        st.end()
    }
}

/// A JSON value whose objects serialize with their keys in natural order
/// (`serde_json`'s map keeps them in text order).
pub struct NaturalJson<'a>(pub &'a serde_json::Value);

impl Serialize for NaturalJson<'_> {
    fn serialize<S: Serializer>(&self, ser: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            serde_json::Value::Object(map) => {
                let mut entries: Vec<_> = map.iter().collect();
                entries.sort_by(|a, b| natural::cmp(a.0, b.0));
                let mut m = ser.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    m.serialize_entry(k, &NaturalJson(v))?;
                }
                m.end()
            }
            serde_json::Value::Array(items) => ser.collect_seq(items.iter().map(NaturalJson)),
            other => other.serialize(ser),
        }
    }
}

/// Pretty JSON text of `v`, objects' keys in natural order.
pub fn json_text(v: &serde_json::Value) -> String {
    serde_json::to_string_pretty(&NaturalJson(v)).unwrap_or_default()
}

/// `show interface [NAME]`: one NX-OS-style block per interface.
pub fn render_interfaces(
    out: &mut dyn Write,
    stats: &SwitchStats,
    only: Option<&str>,
) -> std::io::Result<()> {
    for (name, i) in in_port_order(stats) {
        if only.is_some_and(|o| o != name) {
            continue;
        }
        render_interface(out, name, i)?;
    }
    Ok(())
}

fn state(up: bool) -> &'static str {
    if up {
        "up"
    } else {
        "down"
    }
}

/// The MAC in Cisco's dotted form, as NX-OS prints it.
fn cisco_mac(mac: &str) -> String {
    let hex: String = mac.chars().filter(|c| *c != ':').collect();
    if hex.len() != 12 {
        return mac.to_string();
    }
    format!("{}.{}.{}", &hex[0..4], &hex[4..8], &hex[8..12])
}

fn render_interface(out: &mut dyn Write, name: &str, i: &InterfaceStats) -> std::io::Result<()> {
    let oper = i.admin_up && i.link_up;
    let why = if i.admin_up && !i.link_up {
        " (link down)"
    } else {
        ""
    };
    writeln!(out, "{name} is {}{why}", state(oper))?;
    writeln!(
        out,
        "admin state is {}, Dedicated Interface",
        state(i.admin_up)
    )?;
    writeln!(
        out,
        "  Hardware: {}, address: {} (bia {})",
        i.backend,
        cisco_mac(&i.mac),
        cisco_mac(&i.mac)
    )?;
    for a in &i.addresses {
        writeln!(out, "  Internet Address is {a}")?;
    }
    match i.speed_mbps {
        Some(s) => writeln!(
            out,
            "  MTU {} bytes, BW {} Kbit",
            i.mtu,
            u64::from(s) * 1000
        )?,
        None => writeln!(
            out,
            "  MTU {} bytes, BW unlimited (no speed configured)",
            i.mtu
        )?,
    }
    writeln!(out, "  RX")?;
    writeln!(
        out,
        "    {} input packets  {} bytes",
        i.rx_packets, i.rx_bytes
    )?;
    writeln!(
        out,
        "    {} malformed  {} punted to control plane",
        i.rx_malformed, i.punted
    )?;
    if i.mirrored + i.from_kernel > 0 {
        writeln!(
            out,
            "    {} up the kernel mirror ({} it could not take)  {} from the kernel ({} not sent)",
            i.mirrored, i.to_kernel_dropped, i.from_kernel, i.from_kernel_dropped
        )?;
    }
    if i.backend_rx_dropped > 0 {
        writeln!(
            out,
            "    {} dropped by the port backend before the pipeline",
            i.backend_rx_dropped
        )?;
    }
    writeln!(out, "  TX")?;
    writeln!(
        out,
        "    {} output packets  {} bytes",
        i.tx_packets, i.tx_bytes
    )?;
    if i.backend_tx_errors > 0 {
        writeln!(
            out,
            "    {} send errors in the port backend",
            i.backend_tx_errors
        )?;
    }
    let drops: Vec<_> = i.drops.iter().filter(|(_, n)| **n > 0).collect();
    if drops.is_empty() {
        writeln!(out, "  Drops: none")?;
    } else {
        writeln!(out, "  Drops:")?;
        for (reason, n) in drops {
            writeln!(out, "    {n:>12}  {reason}")?;
        }
    }
    render_queues(out, i, "  ")?;
    let pfc = &i.pfc;
    let any_pfc = pfc
        .tx_pause
        .iter()
        .chain(&pfc.tx_resume)
        .chain(&pfc.rx_pause)
        .chain(&pfc.rx_resume)
        .any(|n| *n > 0);
    if any_pfc {
        writeln!(
            out,
            "  PFC    prio   tx_pause  tx_resume   rx_pause  rx_resume"
        )?;
        for p in 0..8 {
            writeln!(
                out,
                "         {p:>4} {:>10} {:>10} {:>10} {:>10}",
                pfc.tx_pause[p], pfc.tx_resume[p], pfc.rx_pause[p], pfc.rx_resume[p]
            )?;
        }
    }
    writeln!(out)
}

fn render_queues(out: &mut dyn Write, i: &InterfaceStats, indent: &str) -> std::io::Result<()> {
    writeln!(
        out,
        "{indent}Queue  {:>12} {:>14} {:>10} {:>10} {:>10} {:>11} {:>11} {:>10} {:>10} {:>10}",
        "tx_packets",
        "tx_bytes",
        "ecn_marked",
        "wred_drops",
        "tail_drops",
        "depth_B",
        "max_depth_B",
        "p50 wait",
        "p99 wait",
        "max wait"
    )?;
    for q in &i.queues {
        writeln!(
            out,
            "{indent}{:>5}  {:>12} {:>14} {:>10} {:>10} {:>10} {:>11} {:>11} {:>10} {:>10} {:>10}",
            q.queue,
            q.tx_packets,
            q.tx_bytes,
            q.ecn_marked,
            q.wred_drops,
            q.tail_drops,
            q.depth_bytes,
            q.max_depth_bytes,
            duration(q.latency_ns.p50),
            duration(q.latency_ns.p99),
            duration(q.latency_ns.max)
        )?;
    }
    Ok(())
}

pub use crate::units::duration;

/// A compact per-interface table, then the queues that carried traffic; used
/// at the end of `replay`, `demo` and `run`.
pub fn render_summary(out: &mut dyn Write, stats: &SwitchStats) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<14} {:>5} {:>10} {:>12} {:>10} {:>12} {:>8} {:>9} {:>9}",
        "Interface",
        "State",
        "RX pkts",
        "RX bytes",
        "TX pkts",
        "TX bytes",
        "Punted",
        "Malformed",
        "Drops"
    )?;
    for (name, i) in in_port_order(stats) {
        writeln!(
            out,
            "{:<14} {:>5} {:>10} {:>12} {:>10} {:>12} {:>8} {:>9} {:>9}",
            name,
            state(i.admin_up && i.link_up),
            i.rx_packets,
            i.rx_bytes,
            i.tx_packets,
            i.tx_bytes,
            i.punted,
            i.rx_malformed,
            i.total_drops()
        )?;
    }
    let with_drops: Vec<_> = in_port_order(stats)
        .into_iter()
        .flat_map(|(n, i)| {
            i.drops
                .iter()
                .filter(|(_, c)| **c > 0)
                .map(move |(r, c)| (n.clone(), r.clone(), *c))
        })
        .collect();
    if !with_drops.is_empty() {
        writeln!(out, "\nDrops by reason:")?;
        for (n, r, c) in with_drops {
            writeln!(out, "  {n:<14} {r:<22} {c:>10}")?;
        }
    }
    writeln!(out, "\nEgress queues that carried traffic:")?;
    writeln!(
        out,
        "  {:<14} {:>5} {:>10} {:>12} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10}",
        "Interface",
        "Queue",
        "TX pkts",
        "TX bytes",
        "ECN marks",
        "WRED drop",
        "Tail drop",
        "Max depth B",
        "p99 wait",
        "max wait"
    )?;
    for (name, i) in in_port_order(stats) {
        for q in &i.queues {
            if q.tx_packets + q.tail_drops + q.wred_drops + q.depth_bytes == 0 {
                continue;
            }
            writeln!(
                out,
                "  {:<14} {:>5} {:>10} {:>12} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10}",
                name,
                q.queue,
                q.tx_packets,
                q.tx_bytes,
                q.ecn_marked,
                q.wred_drops,
                q.tail_drops,
                q.max_depth_bytes,
                duration(q.latency_ns.p99),
                duration(q.latency_ns.max)
            )?;
        }
    }
    Ok(())
}

/// The configured `priority-flow-control mode` in the Mode column of
/// `show interface priority-flow-control`, spelt as NX-OS prints it.
pub fn pfc_mode_name(mode: PfcMode) -> &'static str {
    match mode {
        PfcMode::Auto => "Auto",
        PfcMode::On => "On",
        PfcMode::Off => "Off",
    }
}

/// Whether PFC is operational on an interface: priorities in force in the
/// dataplane and the link up; the Oper column of `show interface
/// priority-flow-control` and its JSON `oper`.
pub fn pfc_oper(i: &InterfaceStats) -> bool {
    i.pfc.enabled != 0 && i.admin_up && i.link_up
}

/// `show interface priority-flow-control [detail]`: per port the PFC mode
/// as configured (`modes`, by interface; `-` where unknown), the
/// operational state with the lossless priorities (the VL bitmap) and pause
/// frames received and sent; `detail` adds the per-priority counts and
/// paused time.
///
/// The operational column is what the dataplane does: a port in `auto`
/// mode is `Off` until DCBX negotiation with a peer succeeds (as on NX-OS),
/// then `On` with the negotiated priorities; replay and pcap runs have no
/// peer, so `auto` is `Off` there.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_pfc(
    out: &mut dyn Write,
    stats: &SwitchStats,
    modes: &BTreeMap<String, PfcMode>,
    detail: bool,
) -> std::io::Result<()> {
    let header = format!(
        "{:<18} {:<5} {:<14} {:>10} {:>10}",
        "Port", "Mode", "Oper(VL bmap)", "RxPPP", "TxPPP"
    );
    let mut lines = Vec::new();
    for (name, i) in in_port_order(stats) {
        let p = &i.pfc;
        let rx: u64 = p.rx_pause.iter().chain(&p.rx_resume).sum();
        let tx: u64 = p.tx_pause.iter().chain(&p.tx_resume).sum();
        let oper = if pfc_oper(i) {
            format!("On  ({:x})", p.enabled)
        } else {
            "Off".to_string()
        };
        lines.push(format!(
            "{:<18} {:<5} {:<14} {:>10} {:>10}",
            name,
            modes.get(name).map_or("-", |m| pfc_mode_name(*m)),
            oper,
            rx,
            tx
        ));
        if detail {
            lines.push(
                "    prio   rx_pause  rx_resume   tx_pause  tx_resume    paused  wd_storms wd_restores"
                    .to_string(),
            );
            for q in 0..8 {
                lines.push(format!(
                    "    {q:>4} {:>10} {:>10} {:>10} {:>10} {:>9} {:>10} {:>11}",
                    p.rx_pause[q],
                    p.rx_resume[q],
                    p.tx_pause[q],
                    p.tx_resume[q],
                    duration(p.paused_ns[q]),
                    p.watchdog_storms[q],
                    p.watchdog_restores[q]
                ));
            }
            lines.push(String::new());
        }
    }
    // The rules as wide as the widest line, so no row spills past them.
    let width = std::iter::once(&header)
        .chain(&lines)
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    let rule = "=".repeat(width);
    writeln!(out, "\n{rule}\n{header}\n{rule}\n")?;
    for l in lines {
        writeln!(out, "{l}")?;
    }
    Ok(())
}

/// Checks on rendered tables, for the show modules' tests.
#[cfg(test)]
pub(crate) mod testing {
    /// Whether `line` is a rule: `----`, `====` or a box's `+----+`.
    fn is_rule(line: &str) -> bool {
        line.len() >= 4 && line.chars().all(|c| matches!(c, '-' | '=' | '+'))
    }

    /// Asserts that every table in `text` keeps inside its box: each
    /// `|…|` row exactly as wide as the `+---+` bar above it, and each line
    /// between two rules (with no blank line between) no wider than they are.
    pub fn assert_fits(text: &str) {
        let lines: Vec<&str> = text.lines().collect();
        let width = |l: &str| l.chars().count();
        let mut bar = None;
        for (n, l) in lines.iter().enumerate() {
            if is_rule(l) {
                bar = Some(width(l));
                // The lines up to the next rule, if one follows before a
                // blank line ends the table.
                let next = lines[n + 1..]
                    .iter()
                    .position(|m| is_rule(m) || m.is_empty());
                if let Some(end) = next.filter(|&e| is_rule(lines[n + 1 + e])) {
                    for m in &lines[n + 1..n + 1 + end] {
                        assert!(width(m) <= width(l), "{m:?} spills past {l:?}:\n{text}");
                    }
                }
            } else if l.starts_with('|') {
                assert_eq!(Some(width(l)), bar, "{l:?} leaves its box:\n{text}");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_listings_are_in_port_order_and_keep_every_field() {
        let mut stats = SwitchStats {
            hostname: "sw".into(),
            neighbor_parked: 3,
            ..SwitchStats::default()
        };
        for n in ["Ethernet1/32", "Ethernet1/4", "Ethernet1/31", "Ethernet1/1"] {
            stats.interfaces.insert(n.into(), InterfaceStats::default());
        }
        stats
            .load_balancing
            .insert("10.0.10.0/24".into(), Default::default());
        stats
            .load_balancing
            .insert("10.0.9.0/24".into(), Default::default());
        let text = serde_json::to_string_pretty(&StatsJson(&stats)).unwrap();
        let at = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(at("Ethernet1/1") < at("Ethernet1/4"), "{text}");
        assert!(at("Ethernet1/4") < at("Ethernet1/31"), "{text}");
        assert!(at("Ethernet1/31") < at("Ethernet1/32"), "{text}");
        assert!(at("10.0.9.0/24") < at("10.0.10.0/24"), "{text}");
        // The same document as the derived serialization, field for field.
        let ours: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(ours, serde_json::to_value(&stats).unwrap());

        let v = serde_json::json!({"interfaces": {"Ethernet1/32": 1, "Ethernet1/4": [{"b": 1, "a": 2}]}});
        let text = json_text(&v);
        assert!(
            text.find("Ethernet1/4") < text.find("Ethernet1/32"),
            "{text}"
        );
        assert!(text.find("\"a\"") < text.find("\"b\""), "{text}");
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }

    #[test]
    fn pfc_table_shows_mode_bitmap_and_frame_counts() {
        let mut stats = SwitchStats::default();
        let mut e1 = InterfaceStats {
            admin_up: true,
            link_up: true,
            ..InterfaceStats::default()
        };
        e1.pfc.enabled = 0x08;
        e1.pfc.tx_pause[3] = 5;
        e1.pfc.tx_resume[3] = 1;
        e1.pfc.rx_pause[3] = 2;
        stats
            .interfaces
            .insert("Ethernet1/10".into(), InterfaceStats::default());
        stats.interfaces.insert("Ethernet1/2".into(), e1);
        let modes = BTreeMap::from([
            ("Ethernet1/2".to_string(), PfcMode::On),
            ("Ethernet1/10".to_string(), PfcMode::Off),
        ]);
        let mut out = Vec::new();
        render_pfc(&mut out, &stats, &modes, true).unwrap();
        let s = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = s.lines().filter(|l| l.starts_with("Ethernet")).collect();
        assert_eq!(rows.len(), 2);
        assert!(rows[0].starts_with("Ethernet1/2"), "port order: {s}");
        assert_eq!(
            rows[0].split_whitespace().collect::<Vec<_>>(),
            ["Ethernet1/2", "On", "On", "(8)", "2", "6"]
        );
        assert_eq!(
            rows[1].split_whitespace().collect::<Vec<_>>(),
            ["Ethernet1/10", "Off", "Off", "0", "0"]
        );
        assert!(
            s.contains("       3          2          0          5          1"),
            "{s}"
        );
    }

    #[test]
    fn pfc_mode_auto_is_shown_as_configured() {
        let mut stats = SwitchStats::default();
        // 1/1: DCBX agreed; 1/2: agreed but down; 1/4: no agreeing peer.
        for (n, enabled, up) in [
            ("Ethernet1/1", 0x08, true),
            ("Ethernet1/2", 0x08, false),
            ("Ethernet1/4", 0, true),
        ] {
            let mut i = InterfaceStats {
                admin_up: up,
                link_up: up,
                ..InterfaceStats::default()
            };
            i.pfc.enabled = enabled;
            stats.interfaces.insert(n.into(), i);
        }
        stats
            .interfaces
            .insert("Ethernet1/3".into(), InterfaceStats::default());
        let modes = BTreeMap::from([
            ("Ethernet1/1".to_string(), PfcMode::Auto),
            ("Ethernet1/2".to_string(), PfcMode::Auto),
            ("Ethernet1/4".to_string(), PfcMode::Auto),
        ]);
        let mut out = Vec::new();
        render_pfc(&mut out, &stats, &modes, false).unwrap();
        let s = String::from_utf8(out).unwrap();
        let rows: Vec<Vec<&str>> = s
            .lines()
            .filter(|l| l.starts_with("Ethernet"))
            .map(|l| l.split_whitespace().collect())
            .collect();
        assert_eq!(
            rows[0],
            ["Ethernet1/1", "Auto", "On", "(8)", "0", "0"],
            "{s}"
        );
        assert_eq!(rows[1], ["Ethernet1/2", "Auto", "Off", "0", "0"], "{s}");
        assert_eq!(rows[2], ["Ethernet1/3", "-", "Off", "0", "0"], "{s}");
        assert_eq!(rows[3], ["Ethernet1/4", "Auto", "Off", "0", "0"], "{s}");
    }

    #[test]
    fn pfc_table_rows_fit_under_the_rules() {
        let mut stats = SwitchStats::default();
        let mut i = InterfaceStats::default();
        i.pfc.enabled = 0xff;
        i.pfc.tx_pause = [u64::MAX / 16; 8];
        i.pfc.rx_pause = [u64::MAX / 16; 8];
        i.pfc.paused_ns = [123_456_789_000; 8];
        stats.interfaces.insert("Ethernet1/1".into(), i);
        for detail in [false, true] {
            let mut out = Vec::new();
            render_pfc(&mut out, &stats, &BTreeMap::new(), detail).unwrap();
            let s = String::from_utf8(out).unwrap();
            let rule = s.lines().nth(1).unwrap().chars().count();
            for l in s.lines() {
                assert!(
                    l.chars().count() <= rule,
                    "{l:?} is wider than the rule:\n{s}"
                );
            }
            testing::assert_fits(&s);
        }
    }
}
