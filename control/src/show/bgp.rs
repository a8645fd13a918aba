//! `show bgp summary`, `show bgp ipv4|ipv6 unicast [PREFIX]` and `show bfd
//! neighbors`: FRR's JSON (asked for through the switch's management
//! socket) in NX-OS's layout, or as railyard's own JSON with `--json`, so a
//! script does not depend on FRR's field names.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

/// Asks the running switch's FRR for `command` (a vtysh `show`).
///
/// # Errors
/// The switch cannot be reached, runs no FRR, or FRR refused the command.
pub fn fetch(socket: &Path, command: &str) -> Result<Value, String> {
    let reply: Value = crate::mgmt::request(socket, &format!("frr {command}"))?;
    if let Some(e) = reply.get("error").and_then(Value::as_str) {
        return Err(e.to_string());
    }
    let text = reply.get("output").and_then(Value::as_str).unwrap_or("");
    serde_json::from_str(text)
        .map_err(|e| format!("FRR's answer to {command:?} is not JSON ({e}): {text}"))
}

fn text(v: &Value, key: &str) -> String {
    match v.get(key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

fn num(v: &Value, key: &str) -> u64 {
    v.get(key).and_then(Value::as_u64).unwrap_or(0)
}

/// One BGP neighbour in a family's summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeerSummary {
    /// The neighbour's address.
    pub neighbor: String,
    /// Its AS number.
    pub remote_as: u64,
    /// Messages received and sent.
    pub msg_rcvd: u64,
    /// Messages sent.
    pub msg_sent: u64,
    /// Input and output queue lengths.
    pub inq: u64,
    /// Output queue length.
    pub outq: u64,
    /// Time in the current state (`never` when never established).
    pub up_down: String,
    /// The session's state (`Established`, `Active`, `Idle`, …).
    pub state: String,
    /// Prefixes received, once established.
    pub prefixes_received: Option<u64>,
}

/// One address family's BGP summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FamilySummary {
    /// `IPv4 Unicast` or `IPv6 Unicast`.
    pub family: String,
    /// The router identifier.
    pub router_id: String,
    /// The local AS number.
    pub local_as: u64,
    /// The BGP table's version.
    pub table_version: u64,
    /// Prefixes in the table.
    pub rib_entries: u64,
    /// The family's neighbours, in address order.
    pub peers: Vec<PeerSummary>,
}

fn family_name(key: &str) -> String {
    match key {
        "ipv4Unicast" => "IPv4 Unicast".into(),
        "ipv6Unicast" => "IPv6 Unicast".into(),
        other => other.to_string(),
    }
}

/// Reads FRR's `show bgp summary json`.
pub fn summary(frr: &Value) -> Vec<FamilySummary> {
    let Some(families) = frr.as_object() else {
        return Vec::new();
    };
    families
        .iter()
        .filter(|(_, f)| f.get("peers").is_some())
        .map(|(key, f)| {
            let mut peers: Vec<PeerSummary> = f["peers"]
                .as_object()
                .map(|p| {
                    p.iter()
                        .map(|(addr, p)| {
                            let state = text(p, "state");
                            PeerSummary {
                                neighbor: addr.clone(),
                                remote_as: num(p, "remoteAs"),
                                msg_rcvd: num(p, "msgRcvd"),
                                msg_sent: num(p, "msgSent"),
                                inq: num(p, "inq"),
                                outq: num(p, "outq"),
                                up_down: text(p, "peerUptime"),
                                prefixes_received: (state == "Established")
                                    .then(|| num(p, "pfxRcd")),
                                state,
                            }
                        })
                        .collect()
                })
                .unwrap_or_default();
            peers.sort_by_key(|p| p.neighbor.parse::<std::net::IpAddr>().ok());
            FamilySummary {
                family: family_name(key),
                router_id: text(f, "routerId"),
                local_as: num(f, "as"),
                table_version: num(f, "tableVersion"),
                rib_entries: num(f, "ribCount"),
                peers,
            }
        })
        .collect()
}

/// `show bgp summary` in NX-OS's layout.
///
/// # Errors
/// Writing fails.
pub fn render_summary(out: &mut dyn Write, families: &[FamilySummary]) -> std::io::Result<()> {
    if families.is_empty() {
        return writeln!(
            out,
            "BGP is not running (no `router bgp`, or no address family)"
        );
    }
    for (i, f) in families.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        let capable = f.peers.iter().filter(|p| p.state == "Established").count();
        writeln!(
            out,
            "BGP summary information for VRF default, address family {}",
            f.family
        )?;
        writeln!(
            out,
            "BGP router identifier {}, local AS number {}",
            f.router_id, f.local_as
        )?;
        writeln!(
            out,
            "BGP table version is {}, {} config peers {}, capable peers {capable}",
            f.table_version,
            f.family,
            f.peers.len()
        )?;
        writeln!(out, "{} network entries", f.rib_entries)?;
        writeln!(out)?;
        writeln!(
            out,
            "Neighbor        V    AS    MsgRcvd    MsgSent   TblVer  InQ OutQ Up/Down  State/PfxRcd"
        )?;
        for p in &f.peers {
            let state = p
                .prefixes_received
                .map_or_else(|| p.state.clone(), |n| n.to_string());
            writeln!(
                out,
                "{:<15} 4 {:>5} {:>10} {:>10} {:>8} {:>4} {:>4} {:<8} {state}",
                p.neighbor,
                p.remote_as,
                p.msg_rcvd,
                p.msg_sent,
                f.table_version,
                p.inq,
                p.outq,
                p.up_down
            )?;
        }
    }
    Ok(())
}

/// One path to a prefix in the BGP table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpPath {
    /// Usable.
    pub valid: bool,
    /// The best path.
    pub best: bool,
    /// Installed as one of several equal paths.
    pub multipath: bool,
    /// `external`, `internal` or `local` (originated here).
    pub kind: String,
    /// The next hop the path uses.
    pub next_hop: String,
    /// MED.
    pub metric: u64,
    /// Local preference, when set.
    pub local_pref: Option<u64>,
    /// Weight.
    pub weight: u64,
    /// The AS path (empty when local).
    pub as_path: String,
    /// `i`, `e` or `?`.
    pub origin: String,
}

/// A prefix and its paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpRoute {
    /// The prefix.
    pub prefix: String,
    /// Its paths, best first.
    pub paths: Vec<BgpPath>,
}

/// A family's BGP table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpTable {
    /// `IPv4 Unicast` or `IPv6 Unicast`.
    pub family: String,
    /// The router identifier.
    pub router_id: String,
    /// The table's version.
    pub table_version: u64,
    /// The prefixes, in address order.
    pub routes: Vec<BgpRoute>,
}

fn origin_code(origin: &str) -> String {
    match origin {
        "IGP" => "i",
        "EGP" => "e",
        _ => "?",
    }
    .into()
}

fn path(p: &Value) -> BgpPath {
    let hops = p.get("nexthops").and_then(Value::as_array);
    let used = hops.and_then(|h| {
        h.iter()
            .find(|n| n.get("used").and_then(Value::as_bool) == Some(true))
            .or_else(|| h.first())
    });
    let next_hop = used.map(|n| text(n, "ip")).unwrap_or_default();
    let local = p.get("peerId").and_then(Value::as_str) == Some("(unspec)")
        || p.get("local").and_then(Value::as_bool) == Some(true);
    let as_path = match p.get("path").or_else(|| p.get("aspath")) {
        Some(Value::String(s)) => s.clone(),
        Some(v) => text(v, "string"),
        None => String::new(),
    };
    BgpPath {
        valid: p.get("valid").and_then(Value::as_bool).unwrap_or(false),
        best: match p.get("bestpath") {
            Some(Value::Bool(b)) => *b,
            Some(Value::Object(o)) => o.get("overall").and_then(Value::as_bool).unwrap_or(false),
            _ => false,
        },
        multipath: p.get("multipath").and_then(Value::as_bool).unwrap_or(false),
        kind: if local {
            "local".into()
        } else {
            p.get("pathFrom")
                .or_else(|| p.get("peer").and_then(|x| x.get("type")))
                .and_then(Value::as_str)
                .unwrap_or("external")
                .to_string()
        },
        next_hop,
        metric: num(p, "metric"),
        local_pref: p.get("locPrf").and_then(Value::as_u64),
        weight: num(p, "weight"),
        as_path: if as_path == "Local" {
            String::new()
        } else {
            as_path
        },
        origin: origin_code(&text(p, "origin")),
    }
}

fn sort_paths(paths: &mut [BgpPath]) {
    paths.sort_by_key(|p| (!p.best, !p.multipath, !p.valid));
}

/// Reads FRR's `show bgp ipv4|ipv6 unicast json`.
pub fn table(frr: &Value, family: &str) -> BgpTable {
    let mut routes: Vec<BgpRoute> = frr
        .get("routes")
        .and_then(Value::as_object)
        .map(|r| {
            r.iter()
                .map(|(prefix, paths)| {
                    let mut paths: Vec<BgpPath> = paths
                        .as_array()
                        .map(|a| a.iter().map(path).collect())
                        .unwrap_or_default();
                    sort_paths(&mut paths);
                    BgpRoute {
                        prefix: prefix.clone(),
                        paths,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    routes.sort_by_key(|r| r.prefix.parse::<railyard_config::IpPrefix>().ok());
    BgpTable {
        family: family.to_string(),
        router_id: text(frr, "routerId"),
        table_version: num(frr, "tableVersion"),
        routes,
    }
}

/// Reads FRR's `show bgp ipv4|ipv6 unicast PREFIX json`: the one prefix
/// (empty when FRR has no such prefix).
pub fn prefix_table(frr: &Value, family: &str) -> BgpTable {
    let mut paths: Vec<BgpPath> = frr
        .get("paths")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(path).collect())
        .unwrap_or_default();
    sort_paths(&mut paths);
    BgpTable {
        family: family.to_string(),
        router_id: String::new(),
        table_version: num(frr, "version"),
        routes: frr
            .get("prefix")
            .and_then(Value::as_str)
            .map(|p| {
                vec![BgpRoute {
                    prefix: p.to_string(),
                    paths,
                }]
            })
            .unwrap_or_default(),
    }
}

/// `show bgp ipv4|ipv6 unicast` in NX-OS's layout.
///
/// # Errors
/// Writing fails.
pub fn render_table(out: &mut dyn Write, t: &BgpTable) -> std::io::Result<()> {
    writeln!(
        out,
        "BGP routing table information for VRF default, address family {}",
        t.family
    )?;
    if t.router_id.is_empty() {
        writeln!(out, "BGP table version is {}", t.table_version)?;
    } else {
        writeln!(
            out,
            "BGP table version is {}, Local Router ID is {}",
            t.table_version, t.router_id
        )?;
    }
    writeln!(
        out,
        "Status: s-suppressed, x-deleted, S-stale, d-dampened, h-history, *-valid, >-best"
    )?;
    writeln!(
        out,
        "Path type: i-internal, e-external, c-confed, l-local, a-aggregate, r-redist, I-injected"
    )?;
    writeln!(
        out,
        "Origin codes: i - IGP, e - EGP, ? - incomplete, | - multipath, & - backup"
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "   Network            Next Hop            Metric     LocPrf     Weight Path"
    )?;
    if t.routes.is_empty() {
        writeln!(out, "   (no prefixes)")?;
    }
    for r in &t.routes {
        for (i, p) in r.paths.iter().enumerate() {
            let status = if !p.valid { ' ' } else { '*' };
            let best = if p.best {
                '>'
            } else if p.multipath {
                '|'
            } else {
                ' '
            };
            let kind = match p.kind.as_str() {
                "internal" => 'i',
                "local" => 'l',
                _ => 'e',
            };
            let network = if i == 0 { r.prefix.as_str() } else { "" };
            let path = if p.as_path.is_empty() {
                p.origin.clone()
            } else {
                format!("{} {}", p.as_path, p.origin)
            };
            writeln!(
                out,
                "{status}{best}{kind}{network:<18} {:<18} {:>7} {:>10} {:>10} {path}",
                p.next_hop,
                p.metric,
                p.local_pref.map(|l| l.to_string()).unwrap_or_default(),
                p.weight
            )?;
        }
    }
    Ok(())
}

/// One BFD session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BfdNeighbor {
    /// The switch's address in the session.
    pub our_addr: String,
    /// The neighbour's address.
    pub neigh_addr: String,
    /// Local and remote discriminators.
    pub local_discriminator: u64,
    /// The remote discriminator.
    pub remote_discriminator: u64,
    /// `Up`, `Down`, `Init`, `AdminDown`.
    pub state: String,
    /// Detection time the neighbour asked for: its multiplier.
    pub multiplier: u64,
    /// Transmit and receive intervals in force, in milliseconds.
    pub tx_ms: u64,
    /// Receive interval in milliseconds.
    pub rx_ms: u64,
    /// The interface in NX-OS form (`Eth1/1`), when the session is single-hop.
    pub interface: String,
    /// Seconds up (or down).
    pub uptime_s: u64,
    /// The last diagnostic (`ok`, `control detection time expired`, …).
    pub diagnostic: String,
}

/// `Eth1-1` (a mirror's Linux name) as NX-OS's short `Eth1/1`.
fn nxos_short(linux: &str) -> String {
    match linux.strip_prefix("Eth") {
        Some(rest) => format!("Eth{}", rest.replace('-', "/")),
        None => linux.to_string(),
    }
}

fn capitalised(s: &str) -> String {
    match s {
        "up" => "Up".into(),
        "down" => "Down".into(),
        "init" => "Init".into(),
        "shutdown" | "admin-down" => "AdminDown".into(),
        other => other.to_string(),
    }
}

/// Reads FRR's `show bfd peers json`.
pub fn bfd_neighbors(frr: &Value) -> Vec<BfdNeighbor> {
    let mut v: Vec<BfdNeighbor> = frr
        .as_array()
        .map(|a| {
            a.iter()
                .map(|p| BfdNeighbor {
                    our_addr: text(p, "local"),
                    neigh_addr: text(p, "peer"),
                    local_discriminator: num(p, "id"),
                    remote_discriminator: num(p, "remote-id"),
                    state: capitalised(&text(p, "status")),
                    multiplier: num(p, "remote-detect-multiplier"),
                    tx_ms: num(p, "transmit-interval"),
                    rx_ms: num(p, "receive-interval"),
                    interface: nxos_short(&text(p, "interface")),
                    uptime_s: num(p, "uptime").max(num(p, "downtime")),
                    diagnostic: text(p, "diagnostic"),
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort_by(|a, b| a.neigh_addr.cmp(&b.neigh_addr));
    v
}

/// `show bfd neighbors` in NX-OS's layout.
///
/// # Errors
/// Writing fails.
pub fn render_bfd(out: &mut dyn Write, neighbors: &[BfdNeighbor]) -> std::io::Result<()> {
    writeln!(
        out,
        "OurAddr         NeighAddr       LD/RD                 RH/RS   Holdown(mult)  State   Int       Vrf"
    )?;
    for n in neighbors {
        writeln!(
            out,
            "{:<15} {:<15} {:<21} {:<7} {:<14} {:<7} {:<9} default",
            n.our_addr,
            n.neigh_addr,
            format!("{}/{}", n.local_discriminator, n.remote_discriminator),
            n.state,
            format!("{}({})", n.rx_ms * n.multiplier, n.multiplier),
            n.state,
            n.interface
        )?;
    }
    Ok(())
}

/// `railyard show bgp ARGS`: `summary`, or `ipv4|ipv6 unicast [summary]
/// [PREFIX]`, from the switch at `socket`.
///
/// # Errors
/// Arguments that are none of those, or the switch's FRR cannot be asked.
pub fn show_bgp_cmd(
    out: &mut dyn Write,
    args: &[String],
    json: bool,
    socket: &Path,
) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (afi, rest) = match args[..] {
        ["summary"] => (None, &args[..]),
        ["ipv4", "unicast", ref rest @ ..] => (Some(("ipv4", "IPv4 Unicast")), rest),
        ["ipv6", "unicast", ref rest @ ..] => (Some(("ipv6", "IPv6 Unicast")), rest),
        _ => return Err(
            "show bgp: expected `summary`, or `ipv4 unicast` / `ipv6 unicast` with an optional \
                 `summary` or PREFIX"
                .into(),
        ),
    };
    match (afi, rest) {
        (None, _) | (Some(_), ["summary"]) => {
            let mut families = summary(&fetch(socket, "show bgp summary json")?);
            if let Some((_, name)) = afi {
                families.retain(|f| f.family == name);
            }
            if json {
                writeln!(
                    out,
                    "{}",
                    crate::show::json_text(&serde_json::json!({ "families": families }))
                )
                .map_err(io)
            } else {
                render_summary(out, &families).map_err(io)
            }
        }
        (Some((afi, name)), []) => {
            let t = table(
                &fetch(socket, &format!("show bgp {afi} unicast json"))?,
                name,
            );
            emit_table(out, &t, json)
        }
        (Some((afi, name)), [prefix]) => {
            let prefix: railyard_config::IpPrefix = prefix
                .parse()
                .map_err(|_| format!("show bgp: {prefix:?} is not a prefix (e.g. 10.1.0.0/24)"))?;
            let t = prefix_table(
                &fetch(socket, &format!("show bgp {afi} unicast {prefix} json"))?,
                name,
            );
            emit_table(out, &t, json)
        }
        _ => Err("show bgp: too many arguments".into()),
    }
}

fn emit_table(out: &mut dyn Write, t: &BgpTable, json: bool) -> Result<(), String> {
    let r = if json {
        writeln!(
            out,
            "{}",
            crate::show::json_text(&serde_json::to_value(t).unwrap_or_default())
        )
    } else {
        render_table(out, t)
    };
    r.map_err(|e| e.to_string())
}

/// `railyard show bfd neighbors` from the switch at `socket`.
///
/// # Errors
/// The switch's FRR cannot be asked.
pub fn show_bfd_cmd(out: &mut dyn Write, json: bool, socket: &Path) -> Result<(), String> {
    let n = bfd_neighbors(&fetch(socket, "show bfd peers json")?);
    let r = if json {
        writeln!(
            out,
            "{}",
            crate::show::json_text(&serde_json::json!({ "neighbors": n }))
        )
    } else {
        render_bfd(out, &n)
    };
    r.map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(name: &str) -> Value {
        let text = match name {
            "summary" => include_str!("frr-json/bgp-summary.json"),
            "ipv4" => include_str!("frr-json/bgp-ipv4.json"),
            "ipv4-local" => include_str!("frr-json/bgp-ipv4-local.json"),
            "ipv6" => include_str!("frr-json/bgp-ipv6.json"),
            "prefix" => include_str!("frr-json/bgp-ipv4-prefix.json"),
            _ => include_str!("frr-json/bfd-peers.json"),
        };
        serde_json::from_str(text).unwrap()
    }

    fn render(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_summary_gives_each_family_its_established_peers_and_prefix_counts() {
        let s = summary(&sample("summary"));
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].family, "IPv4 Unicast");
        assert_eq!(
            (s[0].router_id.as_str(), s[0].local_as),
            ("10.0.0.1", 65001)
        );
        let p = &s[0].peers[0];
        assert_eq!((p.neighbor.as_str(), p.remote_as), ("10.0.0.0", 65100));
        assert_eq!(
            (p.state.as_str(), p.prefixes_received),
            ("Established", Some(1))
        );
        assert_eq!(s[1].peers[0].neighbor, "2001:db8::");
        let text = render(|o| render_summary(o, &s));
        assert!(
            text.contains("BGP router identifier 10.0.0.1, local AS number 65001"),
            "{text}"
        );
        assert!(text.contains("capable peers 1"), "{text}");
        let row = text.lines().find(|l| l.starts_with("10.0.0.0")).unwrap();
        assert!(row.contains("65100") && row.ends_with(" 1"), "{row}");
        crate::show::testing::assert_fits(&text);
    }

    #[test]
    fn a_peer_not_established_shows_its_state_instead_of_a_count() {
        let mut v = sample("summary");
        v["ipv4Unicast"]["peers"]["10.0.0.0"]["state"] = "Active".into();
        let s = summary(&v);
        assert_eq!(s[0].peers[0].prefixes_received, None);
        let text = render(|o| render_summary(o, &s));
        assert!(
            text.lines()
                .any(|l| l.starts_with("10.0.0.0") && l.ends_with("Active")),
            "{text}"
        );
    }

    #[test]
    fn the_table_marks_best_external_and_local_paths_as_nxos_does() {
        let t = table(&sample("ipv4"), "IPv4 Unicast");
        assert_eq!(t.routes.len(), 1);
        let p = &t.routes[0].paths[0];
        assert!(p.valid && p.best);
        assert_eq!(
            (p.kind.as_str(), p.next_hop.as_str()),
            ("external", "10.0.0.0")
        );
        assert_eq!((p.as_path.as_str(), p.origin.as_str()), ("65100", "i"));
        let text = render(|o| render_table(o, &t));
        assert!(text.contains("*>e192.0.2.0/24"), "{text}");
        assert!(
            text.lines()
                .any(|l| l.starts_with("*>e") && l.ends_with("65100 i")),
            "{text}"
        );
        let local = table(&sample("ipv4-local"), "IPv4 Unicast");
        let p = &local.routes[0].paths[0];
        assert_eq!(
            (p.kind.as_str(), p.weight, p.as_path.as_str()),
            ("local", 32768, "")
        );
        assert!(render(|o| render_table(o, &local)).contains("*>l192.0.2.0/24"));
        crate::show::testing::assert_fits(&text);
    }

    #[test]
    fn an_ipv6_route_uses_the_next_hop_frr_installed() {
        let t = table(&sample("ipv6"), "IPv6 Unicast");
        assert_eq!(t.routes[0].prefix, "2001:db8:99::/64");
        assert_eq!(t.routes[0].paths[0].next_hop, "fe80::9c3d:64ff:fe30:cfb2");
    }

    #[test]
    fn one_prefix_reads_the_detailed_answer() {
        let t = prefix_table(&sample("prefix"), "IPv4 Unicast");
        assert_eq!(t.routes.len(), 1);
        assert_eq!(t.routes[0].prefix, "192.0.2.0/24");
        let p = &t.routes[0].paths[0];
        assert!(p.best);
        assert_eq!(
            (p.as_path.as_str(), p.next_hop.as_str()),
            ("65100", "10.0.0.0")
        );
        assert!(prefix_table(&serde_json::json!({}), "IPv4 Unicast")
            .routes
            .is_empty());
    }

    #[test]
    fn bfd_neighbors_show_state_discriminators_and_the_nxos_interface() {
        let n = bfd_neighbors(&sample("bfd"));
        assert_eq!(n.len(), 1);
        assert_eq!(
            (n[0].neigh_addr.as_str(), n[0].state.as_str()),
            ("10.0.0.0", "Up")
        );
        assert_eq!(n[0].interface, "Eth1/1");
        assert_eq!((n[0].tx_ms, n[0].rx_ms, n[0].multiplier), (50, 50, 3));
        let text = render(|o| render_bfd(o, &n));
        let row = text.lines().nth(1).unwrap();
        assert!(row.starts_with("10.0.0.1        10.0.0.0"), "{row}");
        assert!(
            row.contains("1443930019/2643496418") && row.contains("Eth1/1"),
            "{row}"
        );
        crate::show::testing::assert_fits(&text);
    }
}
