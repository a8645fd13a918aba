//! `show lldp neighbors [detail]`, `show lldp dcbx interface NAME` and
//! `show lldp traffic`: NX-OS-like text rendered from an [`LldpSnapshot`],
//! which the running switch sends as JSON (`lldp` on the management socket),
//! so `--json` and text never disagree.

use std::io::Write;
use std::path::Path;

use crate::lldp::dcbx::{prio_list, App, DcbxDialect, DcbxMode, Ets, Pfc, Source};
use crate::lldp::{LldpCounters, LldpSnapshot, NeighborSnapshot, PortSnapshot};

/// Asks the switch listening on `path` for its LLDP state.
///
/// # Errors
/// A message when the switch cannot be reached or answered badly.
pub fn fetch_lldp(path: &Path) -> Result<LldpSnapshot, String> {
    crate::mgmt::request(path, "lldp")
}

/// NX-OS's short interface name: `Ethernet1/1` → `Eth1/1`.
fn short_name(name: &str) -> String {
    match name.strip_prefix("Ethernet") {
        Some(rest) => format!("Eth{rest}"),
        None => name.to_string(),
    }
}

/// A MAC in Cisco's dotted form (`0200.0000.0001`); other text unchanged.
fn cisco_mac(s: &str) -> String {
    let hex: String = s.chars().filter(|c| *c != ':').collect();
    if s.len() == 17 && hex.len() == 12 && hex.chars().all(|c| c.is_ascii_hexdigit()) {
        format!("{}.{}.{}", &hex[0..4], &hex[4..8], &hex[8..12])
    } else {
        s.to_string()
    }
}

/// Capability letters as NX-OS prints them, e.g. `BR`.
fn cap_codes(bits: u16) -> String {
    const CODES: [(u16, char); 8] = [
        (0x01, 'O'),
        (0x02, 'P'),
        (0x04, 'B'),
        (0x08, 'W'),
        (0x10, 'R'),
        (0x20, 'T'),
        (0x40, 'C'),
        (0x80, 'S'),
    ];
    CODES
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, c)| *c)
        .collect()
}

fn cap_list(bits: u16) -> String {
    let v: Vec<String> = cap_codes(bits).chars().map(|c| c.to_string()).collect();
    if v.is_empty() {
        "not advertised".into()
    } else {
        v.join(", ")
    }
}

/// Neighbours in port order, with their port.
fn neighbors(s: &LldpSnapshot) -> impl Iterator<Item = (&PortSnapshot, &NeighborSnapshot)> {
    s.ports
        .iter()
        .flat_map(|p| p.neighbors.iter().map(move |n| (p, n)))
}

fn total_entries(s: &LldpSnapshot) -> usize {
    s.ports.iter().map(|p| p.neighbors.len()).sum()
}

/// The capability codes NX-OS prints above its neighbour tables.
fn legend(out: &mut dyn Write) -> std::io::Result<()> {
    writeln!(out, "Capability codes:")?;
    writeln!(
        out,
        "  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device"
    )?;
    writeln!(
        out,
        "  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other"
    )?;
    Ok(())
}

/// `show lldp neighbors`: the NX-OS table and legend.
pub fn render_neighbors(out: &mut dyn Write, s: &LldpSnapshot) -> std::io::Result<()> {
    legend(out)?;
    writeln!(
        out,
        "{:<20} {:<15} {:<10} {:<11} Port ID",
        "Device ID", "Local Intf", "Hold-time", "Capability"
    )?;
    for (p, n) in neighbors(s) {
        let mut dev = n.device_id().to_string();
        if dev.chars().count() > 20 {
            // NX-OS puts a long Device ID on a line of its own.
            writeln!(out, "{dev}")?;
            dev.clear();
        }
        writeln!(
            out,
            "{:<20} {:<15} {:<10} {:<11} {}",
            dev,
            short_name(&p.name),
            n.ttl,
            cap_codes(n.capabilities_enabled.unwrap_or(0)),
            n.port_id
        )?;
    }
    writeln!(out, "Total entries displayed: {}", total_entries(s))
}

/// `show lldp neighbors detail`: one NX-OS key/value block per neighbour,
/// with the decoded DCBX TLVs and any TLVs kept raw.
pub fn render_neighbors_detail(out: &mut dyn Write, s: &LldpSnapshot) -> std::io::Result<()> {
    legend(out)?;
    writeln!(
        out,
        "Device ID            Local Intf      Hold-time  Capability  Port ID"
    )?;
    writeln!(out)?;
    let na = |v: &Option<String>| v.clone().unwrap_or_else(|| "not advertised".into());
    for (p, n) in neighbors(s) {
        writeln!(out, "Chassis id: {}", cisco_mac(&n.chassis_id))?;
        writeln!(out, "Port id: {}", n.port_id)?;
        writeln!(out, "Local Port id: {}", short_name(&p.name))?;
        writeln!(out, "Port Description: {}", na(&n.port_description))?;
        writeln!(out, "System Name: {}", na(&n.system_name))?;
        writeln!(out, "System Description: {}", na(&n.system_description))?;
        writeln!(out, "Time remaining: {} seconds", n.time_remaining_s)?;
        match (n.capabilities_supported, n.capabilities_enabled) {
            (Some(sup), Some(en)) => {
                writeln!(out, "System Capabilities: {}", cap_list(sup))?;
                writeln!(out, "Enabled Capabilities: {}", cap_list(en))?;
            }
            _ => {
                writeln!(out, "System Capabilities: not advertised")?;
                writeln!(out, "Enabled Capabilities: not advertised")?;
            }
        }
        if n.management_addresses.is_empty() {
            writeln!(out, "Management Address: not advertised")?;
        }
        for a in &n.management_addresses {
            writeln!(out, "Management Address: {a}")?;
        }
        match n.max_frame_size {
            Some(m) => writeln!(out, "Max Frame Size: {m}")?,
            None => writeln!(out, "Max Frame Size: not advertised")?,
        }
        for d in [&n.dcbx_ieee, &n.dcbx_cee].into_iter().flatten() {
            let tag = match d.dialect {
                DcbxDialect::Ieee => "IEEE DCBX",
                DcbxDialect::Cee => "CEE DCBX",
            };
            if let Some(c) = d.cee {
                writeln!(out, "{tag} Control: seq {} ack {}", c.seq_no, c.ack_no)?;
            }
            if let Some(e) = &d.ets {
                writeln!(out, "{tag} ETS Configuration: {}", ets_text(e, true))?;
            }
            if let Some(e) = &d.ets_recommendation {
                writeln!(out, "{tag} ETS Recommendation: {}", ets_text(e, false))?;
            }
            if let Some(pf) = &d.pfc {
                writeln!(out, "{tag} PFC: {}", pfc_text(pf))?;
            }
            if !d.app.is_empty() {
                writeln!(out, "{tag} APP: {}", app_text(&d.app))?;
            }
        }
        for o in &n.org_tlvs {
            writeln!(
                out,
                "Org TLV: OUI {} subtype {} info {}",
                o.oui,
                o.subtype,
                if o.info_hex.is_empty() {
                    "(empty)"
                } else {
                    &o.info_hex
                }
            )?;
        }
        for u in &n.unknown_tlvs {
            writeln!(
                out,
                "Unknown TLV: type {} value {}",
                u.tlv_type, u.value_hex
            )?;
        }
        writeln!(out)?;
    }
    writeln!(out, "Total entries displayed: {}", total_entries(s))
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

fn digits(v: &[u8; 8]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(" ")
}

fn tsa_name(t: u8) -> String {
    match t {
        0 => "strict".into(),
        1 => "cbs".into(),
        2 => "ets".into(),
        255 => "vendor".into(),
        n => format!("tsa{n}"),
    }
}

fn ets_text(e: &Ets, willing: bool) -> String {
    let tsa: Vec<String> = e.tsa.iter().map(|&t| tsa_name(t)).collect();
    let w = if willing {
        format!("willing {}, ", yes_no(e.willing))
    } else {
        String::new()
    };
    format!(
        "{w}prio->TC [{}], TC bandwidth % [{}], TSA [{}]",
        digits(&e.prio_tc),
        digits(&e.tc_bandwidth),
        tsa.join(" ")
    )
}

fn pfc_text(p: &Pfc) -> String {
    format!(
        "willing {}, MBC {}, cap {}, enabled priorities {}",
        yes_no(p.willing),
        yes_no(p.mbc),
        p.cap,
        prio_list(p.enable)
    )
}

fn selector_name(s: u8) -> String {
    match s {
        1 => "ethertype".into(),
        2 => "tcp".into(),
        3 => "udp".into(),
        4 => "tcp/udp".into(),
        5 => "dscp".into(),
        n => format!("sel{n}"),
    }
}

fn app_text(a: &[App]) -> String {
    a.iter()
        .map(|e| {
            let proto = if e.selector == 1 {
                format!("0x{:04x}", e.protocol)
            } else {
                e.protocol.to_string()
            };
            format!(
                "{} {} -> prio {}",
                selector_name(e.selector),
                proto,
                e.priority
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn source_name(s: Source) -> &'static str {
    match s {
        Source::Local => "local configuration",
        Source::Peer => "adopted from peer",
    }
}

/// Finds a port by name (`Ethernet1/1`, `eth1/1`, `e1/1`, or exactly as shown).
///
/// # Errors
/// A message naming the interface when the snapshot has no such port.
pub fn find_port<'a>(s: &'a LldpSnapshot, name: &str) -> Result<&'a PortSnapshot, String> {
    let canon = name
        .parse::<railyard_config::InterfaceName>()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| name.to_string());
    s.ports
        .iter()
        .find(|p| p.name == canon || p.name == name)
        .ok_or_else(|| format!("interface {name} does not exist on {}", s.hostname))
}

/// `show lldp dcbx interface NAME`: local, peer and operational ETS, PFC and
/// APP, the willing bits, the DCBX version in use and any mismatch.
pub fn render_dcbx(out: &mut dyn Write, s: &LldpSnapshot, p: &PortSnapshot) -> std::io::Result<()> {
    let d = &p.dcbx;
    writeln!(out, "Interface {}", p.name)?;
    let mode = match d.mode {
        DcbxMode::Auto => "auto",
        DcbxMode::Ieee => "ieee",
        DcbxMode::Cee => "cee",
    };
    let in_use = match d.in_use {
        Some(DcbxDialect::Ieee) => "IEEE",
        Some(DcbxDialect::Cee) => "CEE",
        None => "none (no DCBX TLVs sent)",
    };
    writeln!(out, "  DCBX version: {in_use} (configured {mode})")?;
    if !s.enabled {
        writeln!(out, "  LLDP: feature lldp is not enabled")?;
    }
    match &d.peer_chassis_id {
        Some(c) => writeln!(out, "  Peer chassis id: {}", cisco_mac(c))?,
        None => writeln!(out, "  Peer: none")?,
    }
    if let Some(c) = d.cee_local {
        writeln!(out, "  CEE control sent: seq {} ack {}", c.seq_no, c.ack_no)?;
    }
    if let Some(c) = d.peer.as_ref().and_then(|p| p.cee) {
        writeln!(
            out,
            "  CEE control heard: seq {} ack {}",
            c.seq_no, c.ack_no
        )?;
    }
    let op = &d.operational;
    if op.mismatches.is_empty() {
        writeln!(out, "  Mismatch: none")?;
    } else {
        for m in &op.mismatches {
            writeln!(out, "  Mismatch: {m}")?;
        }
    }
    writeln!(out)?;
    writeln!(out, "  PFC")?;
    match &d.local {
        Some(l) => writeln!(out, "    Local:       {}", pfc_text(&l.pfc))?,
        None => writeln!(
            out,
            "    Local:       not advertised (configured priorities {})",
            prio_list(d.configured_pfc)
        )?,
    }
    match d.peer.as_ref().and_then(|p| p.pfc.as_ref()) {
        Some(pf) => writeln!(out, "    Peer:        {}", pfc_text(pf))?,
        None => writeln!(out, "    Peer:        not advertised")?,
    }
    writeln!(
        out,
        "    Operational: enabled priorities {} ({})",
        prio_list(op.pfc),
        source_name(op.pfc_source)
    )?;
    if d.pfc_auto && op.pfc == 0 && op.pfc_advertised != 0 {
        writeln!(
            out,
            "                 mode auto: off until the peer agrees on priorities {}",
            prio_list(op.pfc_advertised)
        )?;
    }
    writeln!(out)?;
    writeln!(out, "  ETS")?;
    match &d.local {
        Some(l) => {
            writeln!(out, "    Local configuration:  {}", ets_text(&l.ets, true))?;
            writeln!(out, "    Local recommendation: {}", ets_text(&l.ets, false))?;
        }
        None => writeln!(out, "    Local:                not advertised")?,
    }
    let peer = d.peer.as_ref();
    match peer.and_then(|p| p.ets.as_ref()) {
        Some(e) => writeln!(out, "    Peer configuration:   {}", ets_text(e, true))?,
        None => writeln!(out, "    Peer configuration:   not advertised")?,
    }
    if let Some(e) = peer.and_then(|p| p.ets_recommendation.as_ref()) {
        writeln!(out, "    Peer recommendation:  {}", ets_text(e, false))?;
    }
    match &op.ets {
        Some(e) => writeln!(
            out,
            "    Operational:          {} ({}; egress queues keep the configured scheduling)",
            ets_text(e, false),
            source_name(op.ets_source)
        )?,
        None => writeln!(out, "    Operational:          none")?,
    }
    writeln!(out)?;
    writeln!(out, "  APP")?;
    let none_if_empty = |a: &[App]| {
        if a.is_empty() {
            "none".to_string()
        } else {
            app_text(a)
        }
    };
    match &d.local {
        Some(l) => writeln!(out, "    Local:       {}", none_if_empty(&l.app))?,
        None => writeln!(out, "    Local:       not advertised")?,
    }
    match peer {
        Some(p) => writeln!(out, "    Peer:        {}", none_if_empty(&p.app))?,
        None => writeln!(out, "    Peer:        not advertised")?,
    }
    writeln!(out, "    Operational: {}", none_if_empty(&op.app))
}

fn render_counters(out: &mut dyn Write, c: &LldpCounters, indent: &str) -> std::io::Result<()> {
    writeln!(out, "{indent}Total frames transmitted: {}", c.frames_out)?;
    writeln!(out, "{indent}Total entries aged: {}", c.ageouts)?;
    writeln!(out, "{indent}Total frames received: {}", c.frames_in)?;
    writeln!(
        out,
        "{indent}Total frames received in error: {}",
        c.frames_in_error
    )?;
    writeln!(
        out,
        "{indent}Total frames discarded: {}",
        c.frames_discarded
    )?;
    writeln!(
        out,
        "{indent}Total unrecognized TLVs: {}",
        c.tlvs_unrecognized
    )?;
    writeln!(out, "{indent}Total TLVs discarded: {}", c.tlvs_discarded)?;
    writeln!(
        out,
        "{indent}Total frames dropped (too many neighbors): {}",
        c.too_many_neighbors
    )
}

/// `show lldp traffic`: the NX-OS totals, then the same per interface.
pub fn render_traffic(out: &mut dyn Write, s: &LldpSnapshot) -> std::io::Result<()> {
    writeln!(out, "LLDP traffic statistics:")?;
    writeln!(out)?;
    render_counters(out, &s.totals, "    ")?;
    for p in &s.ports {
        writeln!(out)?;
        writeln!(out, "LLDP interface traffic statistics for {}:", p.name)?;
        render_counters(out, &p.counters, "    ")?;
    }
    Ok(())
}

/// `show lldp neighbors --json`: each port's neighbours, keyed by interface.
pub fn neighbors_json(s: &LldpSnapshot) -> serde_json::Value {
    let ports: serde_json::Map<String, serde_json::Value> = s
        .ports
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                serde_json::to_value(&p.neighbors).unwrap_or_default(),
            )
        })
        .collect();
    serde_json::json!({
        "hostname": s.hostname,
        "total_entries": total_entries(s),
        "neighbors": ports,
    })
}

/// `show lldp traffic --json`: the totals and each port's counters.
pub fn traffic_json(s: &LldpSnapshot) -> serde_json::Value {
    let ports: serde_json::Map<String, serde_json::Value> = s
        .ports
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                serde_json::to_value(p.counters).unwrap_or_default(),
            )
        })
        .collect();
    serde_json::json!({ "totals": s.totals, "interfaces": ports })
}

/// `show lldp dcbx interface NAME --json`: the port's DCBX state.
pub fn dcbx_json(p: &PortSnapshot) -> serde_json::Value {
    serde_json::json!({ "interface": p.name, "dcbx": p.dcbx })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::lldp::config_tests::{book_pair_snapshot, traffic_snapshot};

    fn render(f: impl Fn(&mut Vec<u8>) -> std::io::Result<()>) -> String {
        let mut v = Vec::new();
        f(&mut v).unwrap();
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn neighbors_table_has_nxos_columns() {
        let s = book_pair_snapshot();
        let text = render(|o| render_neighbors(o, &s));
        let expected = "\
Capability codes:
  (R) Router, (B) Bridge, (T) Telephone, (C) DOCSIS Cable Device
  (W) WLAN Access Point, (P) Repeater, (S) Station, (O) Other
Device ID            Local Intf      Hold-time  Capability  Port ID
leaf2                Eth1/1          120        R           Ethernet1/1
Total entries displayed: 1
";
        let trimmed: String = text
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
            + "\n";
        assert_eq!(trimmed, expected);
    }

    #[test]
    fn neighbors_detail_shows_tlvs_and_dcbx() {
        let s = book_pair_snapshot();
        let text = render(|o| render_neighbors_detail(o, &s));
        for want in [
            "Chassis id: ",
            "Port id: Ethernet1/1\n",
            "Local Port id: Eth1/1\n",
            "Port Description: uplink to leaf1\n",
            "System Name: leaf2\n",
            "System Description: railyard ",
            "Time remaining: 110 seconds\n",
            "System Capabilities: B, R\n",
            "Enabled Capabilities: R\n",
            "Management Address: 10.0.0.2\n",
            "Max Frame Size: 9234\n",
            "IEEE DCBX PFC: willing yes, MBC no, cap 8, enabled priorities 3\n",
            "IEEE DCBX APP: udp 4791 -> prio 3; dscp 24 -> prio 3; dscp 48 -> prio 7\n",
            "TSA [ets ets ets ets ets ets ets strict]",
            "Org TLV: OUI 00-11-22 subtype 1 info 0102\n",
            "Total entries displayed: 1\n",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
    }

    #[test]
    fn dcbx_show_reports_local_peer_and_operational() {
        let s = book_pair_snapshot();
        let p = find_port(&s, "eth1/1").unwrap();
        let text = render(|o| render_dcbx(o, &s, p));
        for want in [
            "Interface Ethernet1/1\n",
            "  DCBX version: IEEE (configured auto)\n",
            "  Mismatch: none\n",
            "    Local:       willing yes, MBC no, cap 8, enabled priorities 3\n",
            "    Operational: enabled priorities 3 (",
            "egress queues keep the configured scheduling",
        ] {
            assert!(text.contains(want), "missing {want:?} in\n{text}");
        }
        assert!(find_port(&s, "Ethernet9/9").is_err());
        let j = dcbx_json(p);
        assert_eq!(j["dcbx"]["mode"], "auto");
        assert_eq!(j["dcbx"]["in_use"], "ieee");
        assert_eq!(j["dcbx"]["operational"]["pfc"], 8);
    }

    #[test]
    fn traffic_has_nxos_shape_and_json() {
        let s = traffic_snapshot();
        let text = render(|o| render_traffic(o, &s));
        assert!(text.starts_with(
            "LLDP traffic statistics:\n\n    Total frames transmitted: 1\n    Total entries aged: 1\n    Total frames received: 3\n    Total frames received in error: 1\n    Total frames discarded: 1\n    Total unrecognized TLVs: 0\n"
        ), "{text}");
        let j = traffic_json(&s);
        assert_eq!(j["totals"]["frames_in"], 3);
        assert_eq!(j["interfaces"]["Ethernet1/1"]["ageouts"], 1);
    }

    #[test]
    fn snapshot_json_round_trips_and_neighbors_json() {
        let s = book_pair_snapshot();
        let text = serde_json::to_string(&s).unwrap();
        let back: LldpSnapshot = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s);
        let j = neighbors_json(&s);
        assert_eq!(j["total_entries"], 1);
        assert_eq!(j["neighbors"]["Ethernet1/1"][0]["system_name"], "leaf2");
    }

    #[test]
    fn fetch_lldp_decodes_the_socket_answer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let s = book_pair_snapshot();
        let body = serde_json::to_string(&s).unwrap();
        let _server = crate::mgmt::Server::start(&path, move |req| match req {
            "lldp" => body.clone(),
            other => crate::mgmt::unknown_request(other),
        })
        .unwrap();
        assert_eq!(fetch_lldp(&path).unwrap(), s);
    }
}
