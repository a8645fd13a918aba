//! Layer-2 shows in the NX-OS layout, from a running switch: `show mac
//! address-table` (its counter snapshot), `show port-channel summary` and
//! `show lacp neighbor` (its LACP agent's snapshot).

use std::fmt::Write;

use railyard_dataplane::counters::VlanCounters;
use railyard_dataplane::model::SwitchModel;
use railyard_dataplane::stats::{MacEntryStats, MacTableStats, SwitchStats};

use crate::lacp::LacpReply;

/// `XXXX.XXXX.XXXX`, the way NX-OS writes a MAC in tables.
pub fn dotted_mac(mac: &str) -> String {
    let hex: String = mac.chars().filter(char::is_ascii_hexdigit).collect();
    if hex.len() != 12 {
        return mac.to_string();
    }
    format!("{}.{}.{}", &hex[0..4], &hex[4..8], &hex[8..12])
}

/// NX-OS's short interface name: `Eth1/1`, `Po10`, `Vlan101`.
pub fn short_name(name: &str) -> String {
    if let Some(rest) = name.strip_prefix("Ethernet") {
        format!("Eth{rest}")
    } else if let Some(rest) = name.strip_prefix("port-channel") {
        format!("Po{rest}")
    } else {
        name.to_string()
    }
}

/// The entries of `table`, of one VLAN when `vlan` is given.
pub fn entries(table: &MacTableStats, vlan: Option<u16>) -> Vec<&MacEntryStats> {
    table
        .entries
        .iter()
        .filter(|e| vlan.is_none_or(|v| e.vlan == v))
        .collect()
}

/// `show mac address-table [vlan N]`: the SVIs' gateway MACs (`G`, as
/// NX-OS lists them) and the table's entries.
pub fn render_mac_table(stats: &SwitchStats, vlan: Option<u16>) -> String {
    let table = &stats.mac_table;
    let mut s = String::new();
    s.push_str(
        "Legend:\n        * - primary entry, G - Gateway MAC, (R) - Routed MAC\n        \
         age - seconds since last seen\n",
    );
    s.push_str("   VLAN     MAC Address      Type      age     Ports\n");
    s.push_str("---------+-----------------+--------+---------+------------------------------\n");
    for (name, i) in crate::show::in_port_order(stats) {
        let Some(v) = name
            .strip_prefix("Vlan")
            .and_then(|v| v.parse::<u16>().ok())
        else {
            continue;
        };
        if vlan.is_none_or(|f| f == v) {
            let _ = writeln!(
                s,
                "G{v:>6}     {:<16} {:<8} {:<9} sup-eth1(R)",
                dotted_mac(&i.mac),
                "static",
                "-"
            );
        }
    }
    for e in entries(table, vlan) {
        let age = if e.kind == "static" {
            "-".to_string()
        } else {
            e.age_secs.to_string()
        };
        let _ = writeln!(
            s,
            "*{:>6}     {:<16} {:<8} {:<9} {}",
            e.vlan,
            dotted_mac(&e.mac),
            e.kind,
            age,
            short_name(&e.port)
        );
    }
    let shown = entries(table, vlan).len();
    let _ = writeln!(
        s,
        "\nTotal MAC addresses: {shown}  (learned {}, moved {}, aged {}, flushed on link down {}, \
         not learned with the table full {})",
        table.learned, table.moves, table.aged, table.flushed, table.full
    );
    s
}

/// One VLAN as `show vlan brief` lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct VlanRow {
    /// VLAN ID.
    pub vlan: u16,
    /// Its name (`default` for VLAN 1, `VLAN0101` when unnamed).
    pub name: String,
    /// `active` (a VLAN railyard has is always active).
    pub status: String,
    /// The access ports in it (trunks are not listed, as on NX-OS).
    pub ports: Vec<String>,
    /// The trunks that carry it.
    pub trunks: Vec<String>,
}

/// The VLANs of `config` with the ports the switch puts in them (as it
/// compiled them: `model`).
pub fn vlan_rows(config: &railyard_config::Config, model: &SwitchModel) -> Vec<VlanRow> {
    config
        .vlans
        .iter()
        .map(|v| {
            let mut ports = Vec::new();
            let mut trunks = Vec::new();
            for m in &model.interfaces {
                let Some(l2) = &m.l2 else { continue };
                if l2.tagged.is_empty() && l2.untagged == Some(v.id) {
                    ports.push(short_name(&m.name));
                } else if !l2.tagged.is_empty() && l2.carries(v.id) {
                    trunks.push(short_name(&m.name));
                }
            }
            VlanRow {
                vlan: v.id,
                name: v.display_name(),
                status: "active".into(),
                ports,
                trunks,
            }
        })
        .collect()
}

/// `show vlan brief` (and, with `detail`, the trunks carrying each VLAN,
/// which `show vlan` adds).
pub fn render_vlans(rows: &[VlanRow], detail: bool) -> String {
    let mut s = String::from(
        "\nVLAN Name                             Status    Ports\n\
         ---- -------------------------------- --------- -------------------------------\n",
    );
    for r in rows {
        let mut ports = r.ports.chunks(4).map(|c| c.join(", "));
        let first = format!(
            "{:<4} {:<32} {:<9} {}",
            r.vlan,
            r.name,
            r.status,
            ports.next().unwrap_or_default()
        );
        let _ = writeln!(s, "{}", first.trim_end());
        for more in ports {
            let _ = writeln!(s, "{:<47}{more}", "");
        }
    }
    if detail {
        s.push_str("\nVLAN Trunks carrying it\n---- -------------------------------------------\n");
        for r in rows.iter().filter(|r| !r.trunks.is_empty()) {
            let _ = writeln!(s, "{:<4} {}", r.vlan, r.trunks.join(", "));
        }
    }
    s
}

/// The bridge's counters per VLAN (`show vlan` of a running switch):
/// what entered each VLAN, and where it went.
pub fn render_vlan_counters(vlans: &std::collections::BTreeMap<u16, VlanCounters>) -> String {
    let mut s = String::from(
        "\nVLAN     Received     Routed in  Flood copies      Switched        To SVI       Dropped\n\
         ---- ------------ ------------- ------------- ------------- ------------- -------------\n",
    );
    for (v, c) in vlans {
        let _ = writeln!(
            s,
            "{v:<4} {:>12} {:>13} {:>13} {:>13} {:>13} {:>13}",
            c.rx_packets, c.routed_in, c.flood_copies, c.switched, c.to_svi, c.dropped
        );
    }
    s
}

/// `show port-channel summary`, NX-OS's layout.
pub fn render_port_channel_summary(r: &LacpReply) -> String {
    let mut s = String::from(
        "Flags:  D - Down        P - Up in port-channel (members)\n        \
         I - Individual  s - Suspended\n        \
         S - Switched    R - Routed\n        \
         U - Up (port-channel)\n",
    );
    s.push_str(&"-".repeat(80));
    s.push_str("\nGroup Port-       Type     Protocol  Member Ports\n      Channel\n");
    s.push_str(&"-".repeat(80));
    s.push('\n');
    let Some(lacp) = &r.lacp else {
        return s;
    };
    for c in &lacp.channels {
        let layer = if r.routed.contains(&c.channel) {
            'R'
        } else {
            'S'
        };
        let state = if c.up { 'U' } else { 'D' };
        let members: Vec<String> = c
            .members
            .iter()
            .map(|m| {
                let flag = lacp
                    .ports
                    .iter()
                    .find(|p| p.port == *m)
                    .map_or('D', |p| p.flag);
                format!("{}({flag})", short_name(r.name(*m)))
            })
            .collect();
        let _ = writeln!(
            s,
            "{:<5} {:<11} {:<8} {:<9} {}",
            c.channel,
            format!("Po{}({layer}{state})", c.channel),
            "Eth",
            c.protocol,
            members.join("    ")
        );
    }
    s
}

/// `show lacp neighbor`, NX-OS's layout: per port-channel, each member's
/// partner.
pub fn render_lacp_neighbor(r: &LacpReply) -> String {
    let mut s = String::from(
        "Flags:  S - Device is sending Slow LACPDUs F - Device is sending Fast LACPDUs\n        \
         A - Device is in Active mode       P - Device is in Passive mode\n",
    );
    let Some(lacp) = &r.lacp else {
        return s;
    };
    for c in &lacp.channels {
        let _ = writeln!(s, "port-channel{} neighbors", c.channel);
        s.push_str("Partner's information\n");
        s.push_str("            Partner                Partner                     Partner\n");
        s.push_str("Port        System ID              Port Number     Age         Flags\n");
        for p in lacp.ports.iter().filter(|p| p.channel == c.channel) {
            let Some(partner) = &p.partner else {
                let _ = writeln!(s, "{:<11} (no partner)", short_name(r.name(p.port)));
                continue;
            };
            let _ = writeln!(
                s,
                "{:<11} {:<24} {:<13} {:<11} {}",
                short_name(r.name(p.port)),
                format!("{},{}", partner.system_priority, partner.system_mac),
                format!("0x{:x}", partner.port),
                p.age_s.map_or_else(|| "-".to_string(), |a| format!("{a}s")),
                p.partner_flags
            );
            let _ = writeln!(
                s,
                "\n            LACP Partner           Partner                     Partner\n            \
                 Port Priority          Oper Key                    Port State\n            \
                 {:<22} {:<27} 0x{:x}\n",
                partner.port_priority,
                format!("0x{:x}", partner.key),
                partner.state
            );
        }
    }
    s
}

/// `show mac address-table [vlan N]`'s arguments after `mac`: the VLAN
/// to list, if one is named.
pub fn mac_table_vlan(args: &[String]) -> Result<Option<u16>, String> {
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        ["address-table"] => Ok(None),
        ["address-table", "vlan", v] => v
            .parse::<u16>()
            .ok()
            .filter(|v| (1..=4094).contains(v))
            .map(Some)
            .ok_or_else(|| format!("`{v}` is not a VLAN ID (1-4094)")),
        _ => Err(format!(
            "unknown `show mac {}`: try `show mac address-table [vlan N]`",
            args.join(" ")
        )),
    }
}

/// `show mac address-table`, as text or (`json`) its entries.
pub fn mac_table_text(stats: &SwitchStats, vlan: Option<u16>, json: bool) -> String {
    if json {
        json_line(&serde_json::json!({ "entries": entries(&stats.mac_table, vlan) }))
    } else {
        render_mac_table(stats, vlan)
    }
}

/// `show port-channel summary` (`summary`) or `show lacp neighbor`, as
/// text or (`json`) the agent's snapshot.
pub fn lacp_text(reply: &LacpReply, summary: bool, json: bool) -> String {
    match (json, summary) {
        (true, _) => json_line(&serde_json::to_value(&reply.lacp).unwrap_or_default()),
        (false, true) => render_port_channel_summary(reply),
        (false, false) => render_lacp_neighbor(reply),
    }
}

/// `show vlan [brief]`: the VLANs of `config` compiled into `model`, with
/// the running switch's counters (`live`) unless `brief`.
pub fn vlan_text(
    config: &railyard_config::Config,
    model: &SwitchModel,
    live: Option<&SwitchStats>,
    detail: bool,
    json: bool,
) -> String {
    let rows = vlan_rows(config, model);
    if json {
        let counters = live.map(|s| &s.vlans);
        return json_line(&serde_json::json!({ "vlans": rows, "counters": counters }));
    }
    let mut s = render_vlans(&rows, detail);
    if let (Some(stats), true) = (live, detail) {
        s.push_str(&render_vlan_counters(&stats.vlans));
    }
    s
}

/// JSON in natural key order, with a newline, as every `--json` prints.
fn json_line(v: &serde_json::Value) -> String {
    format!("{}\n", crate::show::json_text(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(vlan: u16, mac: &str, kind: &str, age: u64, port: &str) -> MacEntryStats {
        MacEntryStats {
            vlan,
            mac: mac.into(),
            port: port.into(),
            kind: kind.into(),
            age_secs: age,
        }
    }

    #[test]
    fn the_table_lists_entries_like_nx_os_and_filters_by_vlan() {
        let t = MacTableStats {
            entries: vec![
                entry(101, "02:00:00:00:00:01", "dynamic", 12, "Ethernet1/1"),
                entry(102, "02:00:00:00:00:03", "static", 0, "port-channel10"),
            ],
            learned: 3,
            moves: 1,
            ..MacTableStats::default()
        };
        let mut stats = SwitchStats {
            mac_table: t,
            ..SwitchStats::default()
        };
        stats.interfaces.insert(
            "Vlan101".into(),
            railyard_dataplane::stats::InterfaceStats {
                mac: "02:aa:bb:cc:00:00".into(),
                ..Default::default()
            },
        );
        let all = render_mac_table(&stats, None);
        assert!(
            all.contains("G   101     02aa.bbcc.0000   static   -         sup-eth1(R)"),
            "{all}"
        );
        assert!(
            all.contains("*   101     0200.0000.0001   dynamic  12        Eth1/1"),
            "{all}"
        );
        assert!(
            all.contains("*   102     0200.0000.0003   static   -         Po10"),
            "{all}"
        );
        assert!(all.contains("Total MAC addresses: 2  (learned 3, moved 1"));
        let one = render_mac_table(&stats, Some(102));
        assert!(!one.contains("Eth1/1") && one.contains("Po10"), "{one}");
        assert!(!one.contains("G   101"), "{one}");
    }

    #[test]
    fn the_summary_shows_a_static_bundle_up_with_its_members() {
        use railyard_dataplane::wire::MacAddr;
        use railyard_lacp::wire::SystemId;
        use railyard_lacp::{Agent, Mode, PortConfig};
        let mac = MacAddr([2, 0, 0, 0, 0, 1]);
        let mut agent = Agent::new(SystemId {
            priority: 32768,
            mac,
        });
        for port in [0u16, 1] {
            let mut cfg = PortConfig::new(mac, 10, port + 1);
            cfg.mode = Mode::On;
            agent.add_port(port, cfg).unwrap();
            agent.set_link(port, port == 0, 0);
        }
        agent.poll(1, &mut |_, _| {});
        let reply = LacpReply {
            lacp: Some(agent.snapshot()),
            port_names: vec!["Ethernet1/5".into(), "Ethernet1/6".into()],
            routed: vec![10],
        };
        let s = render_port_channel_summary(&reply);
        let line = s.lines().find(|l| l.starts_with("10 ")).unwrap();
        assert!(line.contains("Po10(RU)"), "{s}");
        assert!(line.contains("NONE"), "mode on runs no protocol: {s}");
        assert!(
            line.contains("Eth1/5(P)") && line.contains("Eth1/6(D)"),
            "{s}"
        );
        let n = render_lacp_neighbor(&reply);
        assert!(
            n.contains("port-channel10 neighbors") && n.contains("(no partner)"),
            "{n}"
        );
    }

    #[test]
    fn show_vlan_lists_each_vlans_access_ports_and_the_trunks_carrying_it() {
        let text = "feature interface-vlan
vlan 101
  name RAIL-1
vlan 102
interface Ethernet1/1-5
  switchport access vlan 101
interface Ethernet1/6
  switchport access vlan 102
interface Ethernet1/9
  switchport mode trunk
  switchport trunk allowed vlan 102
interface Ethernet1/10
  no switchport
  ip address 10.9.0.0/31
";
        let config = railyard_config::parse_str(text, "v.conf", &Default::default())
            .unwrap()
            .config;
        let model = crate::compile::compile(&config).unwrap().model;
        let rows = vlan_rows(&config, &model);
        assert_eq!(rows.len(), 3);
        assert_eq!((rows[0].vlan, rows[0].name.as_str()), (1, "default"));
        assert_eq!(rows[1].ports.len(), 5);
        assert!(rows[1].trunks.is_empty());
        assert_eq!(rows[2].name, "VLAN0102");
        assert_eq!(rows[2].ports, ["Eth1/6"]);
        assert_eq!(rows[2].trunks, ["Eth1/9"]);
        let out = render_vlans(&rows, false);
        assert!(
            out.contains(
                "101  RAIL-1                           active    Eth1/1, Eth1/2, Eth1/3, Eth1/4\n"
            ),
            "{out}"
        );
        assert!(
            out.contains(&format!("{:47}Eth1/5\n", "")),
            "the fifth wraps: {out}"
        );
        assert!(out.lines().all(|l| l == l.trim_end()), "{out:?}");
        assert!(!out.contains("Trunks"));
        assert!(render_vlans(&rows, true).contains("102  Eth1/9"));
    }
}
