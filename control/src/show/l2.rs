//! Layer-2 shows in the NX-OS layout: `show mac address-table`, from a
//! running switch's counter snapshot.

use std::fmt::Write;

use railyard_dataplane::stats::{MacEntryStats, MacTableStats};

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

/// `show mac address-table [vlan N]`.
pub fn render_mac_table(table: &MacTableStats, vlan: Option<u16>) -> String {
    let mut s = String::new();
    s.push_str(
        "Legend:\n        * - primary entry, G - Gateway MAC, (R) - Routed MAC\n        \
         age - seconds since last seen\n",
    );
    s.push_str("   VLAN     MAC Address      Type      age     Ports\n");
    s.push_str("---------+-----------------+--------+---------+------------------------------\n");
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
        let all = render_mac_table(&t, None);
        assert!(
            all.contains("*   101     0200.0000.0001   dynamic  12        Eth1/1"),
            "{all}"
        );
        assert!(
            all.contains("*   102     0200.0000.0003   static   -         Po10"),
            "{all}"
        );
        assert!(all.contains("Total MAC addresses: 2  (learned 3, moved 1"));
        let one = render_mac_table(&t, Some(102));
        assert!(!one.contains("Eth1/1") && one.contains("Po10"), "{one}");
    }
}
