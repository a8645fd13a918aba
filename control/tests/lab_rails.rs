//! The book's chapter-13 rail designs live, from the shipped topologies:
//!
//! * `multi-rail`: two rails as VLANs on one switch. A host reaches
//!   another host's NIC in its rail bridged (the reply's TTL untouched,
//!   the peer's MAC in the switch's table on its access port and VLAN) and
//!   a NIC in the other rail routed from SVI to SVI (TTL one less).
//! * `single-rail`: one rail per switch, the spines route between them.
//! * `dual-rail`: each rail switch's two uplinks to the spine bundle into
//!   a LACP port-channel on both ends (every member `(P)`, the partner the
//!   spine), hosts reach the other rail switch's VLANs through both
//!   port-channels (three routed hops), and many flows spread over a
//!   port-channel's members.
//!
//! Each lab has its own uniquely named namespaces and state directory,
//! brought down on drop; the switches are stopped by PID. Figures go to
//! stderr (`--nocapture` shows them).

use std::time::Duration;

use serde_json::Value;

mod common;
use common::{run, shipped, wait_for, TopoLab};

/// `railyard ARGS --socket SOCKET-OF-SW` (with `--json` when `json`).
fn cli(lab: &TopoLab, sw: &str, args: &[&str], json: bool) -> Result<String, String> {
    let s = lab
        .state
        .switches
        .iter()
        .find(|s| s.name == sw)
        .ok_or_else(|| format!("no switch {sw}"))?;
    let mut argv = vec![env!("CARGO_BIN_EXE_railyard")];
    argv.extend_from_slice(args);
    if json {
        argv.push("--json");
    }
    argv.extend(["--socket", s.socket.to_str().unwrap_or_default()]);
    run(&argv)
}

fn cli_json(lab: &TopoLab, sw: &str, args: &[&str]) -> Result<Value, String> {
    let out = cli(lab, sw, args, true)?;
    serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))
}

/// What `ping` says of `count` echoes from `src` in `host` to `dst`: the
/// reply TTL and the average round trip in ms.
fn ping(lab: &TopoLab, host: &str, src: &str, dst: &str, count: u32) -> Result<(u32, f64), String> {
    let ns = lab.ns(host);
    let n = count.to_string();
    let out = run(&[
        "ip", "netns", "exec", &ns, "ping", "-n", "-c", &n, "-i", "0.2", "-W", "1", "-I", src, dst,
    ])?;
    let ttl = out
        .split("ttl=")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|t| t.parse().ok())
        .ok_or_else(|| format!("no reply TTL in {out}"))?;
    if !out.contains(&format!("{count} received")) {
        return Err(format!("lost echoes: {out}"));
    }
    let avg = out
        .lines()
        .find(|l| l.starts_with("rtt"))
        .and_then(|l| l.split('=').nth(1))
        .and_then(|v| v.trim().split('/').nth(1))
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("no round trip in {out}"))?;
    Ok((ttl, avg))
}

/// Waits until `src` in `host` reaches `dst` (one echo), then pings it
/// `count` times: the reply TTL and the average round trip in ms.
fn measure(lab: &TopoLab, host: &str, src: &str, dst: &str, count: u32) -> (u32, f64) {
    wait_for(
        &format!("{host} {src} → {dst}"),
        Duration::from_secs(10),
        || ping(lab, host, src, dst, 1),
    );
    ping(lab, host, src, dst, count).unwrap_or_else(|e| panic!("{host} {src} → {dst}: {e}"))
}

fn mac_of(lab: &TopoLab, host: &str, dev: &str) -> String {
    run(&[
        "ip",
        "netns",
        "exec",
        &lab.ns(host),
        "cat",
        &format!("/sys/class/net/{dev}/address"),
    ])
    .map(|m| m.trim().to_string())
    .unwrap_or_else(|e| panic!("{e}"))
}

/// A switch port's transmitted packets.
fn tx_packets(lab: &TopoLab, sw: &str, port: &str) -> u64 {
    let stats = railyard_control::mgmt::fetch_stats(
        &lab.state
            .switches
            .iter()
            .find(|s| s.name == sw)
            .unwrap_or_else(|| panic!("no switch {sw}"))
            .socket,
    )
    .unwrap_or_else(|e| panic!("{sw}: {e}"));
    stats.interfaces.get(port).map_or(0, |i| i.tx_packets)
}

#[test]
#[ignore = "needs root and network namespaces"]
fn multi_rail_bridges_within_a_rail_and_routes_across_rails_through_the_svis() {
    let lab = TopoLab::up("mr", "multi-rail", &shipped("multi-rail.topo"), &[]);
    // h1 eth0 (VLAN 101, 10.0.1.2) to h2 eth0 (10.0.1.3): bridged, so the
    // reply comes back with the TTL h2 sent it with.
    let (ttl, bridged_ms) = measure(&lab, "h1", "10.0.1.2", "10.0.1.3", 10);
    assert_eq!(ttl, 64, "bridged, not routed");
    let (ttl, rail2_ms) = measure(&lab, "h3", "10.0.2.4", "10.0.2.5", 10);
    assert_eq!(ttl, 64);
    // The switch learned h2's NIC on its access port in VLAN 101.
    let h2 = mac_of(&lab, "h2", "eth0");
    let table = cli_json(&lab, "leaf1", &["show", "mac", "address-table"]).expect("mac table");
    let entries = table["entries"].as_array().cloned().unwrap_or_default();
    assert!(
        entries
            .iter()
            .any(|e| e["vlan"] == 101 && e["mac"] == h2.as_str() && e["port"] == "Ethernet1/2"),
        "{table}"
    );
    // h1 eth0 to h2 eth1 (VLAN 102, 10.0.2.3), sourced from eth0: out by
    // eth0 to the SVI 10.0.1.1, routed into VLAN 102 (and back likewise),
    // so the reply lost one TTL.
    let (ttl, routed_ms) = measure(&lab, "h1", "10.0.1.2", "10.0.2.3", 10);
    assert_eq!(ttl, 63, "routed once, by the SVI");
    // The hosts' gateways answer.
    let (ttl, _) = measure(&lab, "h4", "10.0.2.5", "10.0.2.1", 2);
    assert_eq!(ttl, 64);
    eprintln!(
        "multi-rail: bridged rail 1 {bridged_ms:.3} ms, rail 2 {rail2_ms:.3} ms, routed across rails \
         {routed_ms:.3} ms (average round trips of 10 pings); {} MAC table entries",
        entries.len()
    );
}

#[test]
#[ignore = "needs root and network namespaces"]
fn dual_rail_bundles_its_uplinks_with_lacp_and_passes_traffic_between_the_rail_switches() {
    let lab = TopoLab::up("dr", "dual-rail", &shipped("dual-rail.topo"), &[]);
    // LACP bundles both members of each port-channel on both of its ends.
    let bundled = |sw: &str| {
        let v = cli_json(&lab, sw, &["show", "lacp", "neighbor"])?;
        let ports = v["ports"].as_array().cloned().unwrap_or_default();
        let n = ports.iter().filter(|p| p["distributing"] == true).count();
        let want = if sw == "spine1" { 4 } else { 2 };
        (n == want)
            .then_some(v.clone())
            .ok_or(format!("{sw}: {n} of {want} members distributing"))
    };
    let t0 = std::time::Instant::now();
    let lacp: Vec<Value> = ["rail1", "rail2", "spine1"]
        .into_iter()
        .map(|sw| wait_for("LACP bundles", Duration::from_secs(20), || bundled(sw)))
        .collect();
    let bundled_after = t0.elapsed();
    let spine_mac = lacp[2]["ports"][0]["actor"]["system_mac"].clone();
    assert!(spine_mac.is_string(), "{}", lacp[2]);
    for (sw, v) in ["rail1", "rail2"].iter().zip(&lacp) {
        for p in v["ports"].as_array().into_iter().flatten() {
            assert_eq!(
                p["partner"]["system_mac"], spine_mac,
                "{sw}'s partner is the spine: {v}"
            );
        }
    }
    for (sw, pcs) in [
        ("rail1", vec![("Po1", ["Eth1/31", "Eth1/32"])]),
        ("rail2", vec![("Po2", ["Eth1/31", "Eth1/32"])]),
        (
            "spine1",
            vec![("Po1", ["Eth1/1", "Eth1/2"]), ("Po2", ["Eth1/3", "Eth1/4"])],
        ),
    ] {
        let summary = cli(&lab, sw, &["show", "port-channel", "summary"], false).expect("summary");
        for (po, members) in pcs {
            assert!(summary.contains(&format!("{po}(RU)")), "{sw}: {summary}");
            for m in members {
                assert!(summary.contains(&format!("{m}(P)")), "{sw} {m}: {summary}");
            }
        }
        eprintln!("{sw}: show port-channel summary\n{summary}");
    }
    // Traffic between the rail switches: h1 rail 1 (VLAN 101 on rail1) to
    // h2 rail 3 (VLAN 103 on rail2) and back, routed by rail1's SVI, the
    // spine and rail2's SVI: three hops, over both port-channels.
    let (ttl, cross_ms) = measure(&lab, "h1", "10.0.1.2", "10.0.3.3", 10);
    assert_eq!(ttl, 61, "rail1, spine1, rail2 each routed it");
    let (ttl, back_ms) = measure(&lab, "h2", "10.0.4.3", "10.0.2.2", 10);
    assert_eq!(ttl, 61);
    let (ttl, local_ms) = measure(&lab, "h1", "10.0.1.2", "10.0.1.3", 10);
    assert_eq!(ttl, 64, "bridged on rail1");
    // A flow stays on one member; many flows (UDP from rail 1's address to
    // 64 ports of h2's rail-3 one) spread over both members of
    // port-channel1.
    let members = ["Ethernet1/31", "Ethernet1/32"];
    let before: Vec<u64> = members
        .iter()
        .map(|p| tx_packets(&lab, "rail1", p))
        .collect();
    run(&[
        "ip",
        "netns",
        "exec",
        &lab.ns("h1"),
        "python3",
        "-c",
        "import socket\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         s.bind(('10.0.1.2', 0))\n\
         for p in range(5000, 5064):\n    \
         for _ in range(4):\n        s.sendto(b'x', ('10.0.3.3', p))\n",
    ])
    .expect("UDP flows");
    let sent = wait_for(
        "the datagrams in rail1's counters",
        Duration::from_secs(5),
        || {
            let sent: Vec<u64> = members
                .iter()
                .zip(&before)
                .map(|(p, b)| tx_packets(&lab, "rail1", p) - b)
                .collect();
            (sent.iter().sum::<u64>() >= 256)
                .then_some(sent.clone())
                .ok_or(format!("{sent:?}"))
        },
    );
    assert!(
        sent.iter().all(|n| *n >= 32),
        "256 datagrams of 64 flows over both members: {sent:?}"
    );
    eprintln!(
        "dual-rail: bundled {:.1} s after up; across the spine {cross_ms:.3} ms and {back_ms:.3} ms, \
         within rail 1 {local_ms:.3} ms (average round trips of 10 pings); 64 UDP flows left rail1 \
         by Ethernet1/31 and 1/32 in {sent:?} frames",
        bundled_after.as_secs_f64()
    );
}

#[test]
#[ignore = "needs root and network namespaces"]
fn single_rail_routes_from_rail_to_rail_over_the_spines() {
    let lab = TopoLab::up("sr", "single-rail", &shipped("single-rail.topo"), &[]);
    // Within rail 1 (VLAN 101 on rail1): bridged.
    let (ttl, bridged_ms) = measure(&lab, "h1", "10.0.1.2", "10.0.1.5", 10);
    assert_eq!(ttl, 64, "bridged");
    // Rail 1 to rail 2: rail1's SVI, a spine and rail2's SVI route it.
    let (ttl, routed_ms) = measure(&lab, "h1", "10.0.1.2", "10.0.2.5", 10);
    assert_eq!(ttl, 61, "three routers");
    eprintln!(
        "single-rail: within rail 1 {bridged_ms:.3} ms, rail 1 to rail 2 over a spine \
         {routed_ms:.3} ms (average round trips of 10 pings)"
    );
}
