//! Show-command rendering: NX-OS-like text from counter snapshots.
//!
//! The management socket always answers with JSON; the text is rendered on
//! the client side from the same structures, so `--json` and text never
//! disagree.

use std::io::Write;

use railyard_config::InterfaceName;
use railyard_dataplane::stats::{InterfaceStats, SwitchStats};

/// Interfaces in port order (Ethernet1/2 before Ethernet1/10), as NX-OS lists them.
pub fn in_port_order(stats: &SwitchStats) -> Vec<(&String, &InterfaceStats)> {
    let mut v: Vec<_> = stats.interfaces.iter().collect();
    v.sort_by_cached_key(|(name, _)| (name.parse::<InterfaceName>().ok(), (*name).clone()));
    v
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
    writeln!(out, "{name} is {}", state(oper))?;
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

/// A duration in nanoseconds, in the unit that keeps it short.
pub fn duration(ns: u64) -> String {
    match ns {
        0..=9_999 => format!("{ns} ns"),
        10_000..=9_999_999 => format!("{:.1} us", ns as f64 / 1e3),
        _ => format!("{:.1} ms", ns as f64 / 1e6),
    }
}

/// A compact per-interface table, then the queues that carried traffic; used
/// at the end of `replay`, `demo` and `run`.
pub fn render_summary(out: &mut dyn Write, stats: &SwitchStats) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<14} {:>5} {:>10} {:>12} {:>10} {:>12} {:>9} {:>9}",
        "Interface", "State", "RX pkts", "RX bytes", "TX pkts", "TX bytes", "Malformed", "Drops"
    )?;
    for (name, i) in in_port_order(stats) {
        writeln!(
            out,
            "{:<14} {:>5} {:>10} {:>12} {:>10} {:>12} {:>9} {:>9}",
            name,
            state(i.admin_up && i.link_up),
            i.rx_packets,
            i.rx_bytes,
            i.tx_packets,
            i.tx_bytes,
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
