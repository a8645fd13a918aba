//! A live switch that follows its kernel's routing table (`railyard run
//! --routing kernel`): routes added with `ip route` in the switch's
//! namespace forward, deleted ones stop forwarding, and 10,000 prefixes
//! added and withdrawn while traffic flows neither stall forwarding nor
//! leave a stale route behind.
//!
//! Each test builds its own uniquely named namespaces (removed on drop)
//! and stops what it started by PID.

use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{ok, wait_for, Lab, Switch};

const SWITCH: &str = "hostname sw
interface Ethernet1/1
  no switchport
  ip address 10.0.1.1/24
  bind af-packet s1
interface Ethernet1/2
  no switchport
  ip address 10.0.2.1/24
  bind af-packet s2
";

/// How many prefixes the churn adds and withdraws.
const CHURN: usize = 10_000;

/// A switch between two hosts: h1 (10.0.1.2) and h2 (10.0.2.2), which
/// answers for every address of 10.128.0.0/9 (an AnyIP route on `lo`), so a
/// prefix of that range routed to h2 is reachable.
struct Bench {
    // Fields drop in order: the switch stops before its namespaces go.
    sw: Switch,
    sw_ns: String,
    h1: String,
    lab: Lab,
}

fn bench() -> Bench {
    let mut lab = Lab::new();
    let (sw_ns, h1, h2) = (lab.ns("sw"), lab.ns("h1"), lab.ns("h2"));
    lab.veth(&sw_ns, "s1", &h1, "eth0");
    lab.veth(&sw_ns, "s2", &h2, "eth0");
    lab.host(
        &h1,
        "eth0",
        "10.0.1.2/24",
        "10.0.1.1",
        "2001:db8:1::2/64",
        "2001:db8:1::1",
    );
    lab.host(
        &h2,
        "eth0",
        "10.0.2.2/24",
        "10.0.2.1",
        "2001:db8:2::2/64",
        "2001:db8:2::1",
    );
    ok(&[
        "ip",
        "-n",
        &h2,
        "route",
        "add",
        "local",
        "10.128.0.0/9",
        "dev",
        "lo",
    ]);
    let config = lab.path("sw.conf");
    std::fs::write(&config, SWITCH).unwrap();
    let sw = Switch::start(
        &sw_ns,
        &config,
        &lab.path("sw.sock"),
        &lab.path("sw.log"),
        &["--routing", "kernel"],
    );
    Bench { lab, sw_ns, h1, sw }
}

fn routes(sw: &Switch) -> Value {
    let out = sw.cli(&["show", "ip", "route", "--json"]).unwrap();
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// The kernel routes the workers have acknowledged.
fn installed(sw: &Switch) -> u64 {
    routes(sw)["kernel_routes"]["routes"].as_u64().unwrap_or(0)
}

/// Waits until the workers have acknowledged `n` kernel routes.
fn wait_installed(sw: &Switch, n: u64, what: &str, secs: u64) {
    wait_for(what, Duration::from_secs(secs), || match installed(sw) {
        k if k == n => Ok(()),
        k => Err(format!("{k} kernel routes")),
    });
}

fn no_route_drops(sw: &Switch) -> u64 {
    let stats = sw.show().unwrap();
    stats["interfaces"]["Ethernet1/1"]["drops"]["no_route"]
        .as_u64()
        .unwrap_or(0)
}

/// `ping` from `ns`: (received, sent, max RTT in ms).
fn ping(ns: &str, dst: &str, args: &[&str]) -> (u64, u64, f64) {
    let out = std::process::Command::new("ip")
        .args(["netns", "exec", ns, "ping", "-n", "-q"])
        .args(args)
        .arg(dst)
        .output()
        .unwrap();
    ping_summary(&String::from_utf8_lossy(&out.stdout))
}

/// (received, sent, max RTT in ms) from ping's closing lines.
fn ping_summary(text: &str) -> (u64, u64, f64) {
    let field = |pat: &str| -> u64 {
        text.split(pat)
            .next()
            .and_then(|s| s.rsplit(|c: char| !c.is_ascii_digit()).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    };
    let sent = field(" packets transmitted");
    let received = field(" received");
    let max = text
        .split("= ")
        .nth(1)
        .and_then(|s| s.split('/').nth(2))
        .and_then(|m| m.parse().ok())
        .unwrap_or(0.0);
    (received, sent, max)
}

#[test]
#[ignore = "needs root and network namespaces (scripts/test.sh)"]
fn a_route_added_with_ip_route_forwards_and_its_deletion_stops_it() {
    let b = bench();
    assert_eq!(ping(&b.h1, "10.200.0.1", &["-c", "1", "-W", "1"]).0, 0);
    ok(&[
        "ip",
        "-n",
        &b.sw_ns,
        "route",
        "add",
        "10.200.0.0/16",
        "via",
        "10.0.2.2",
    ]);
    wait_installed(&b.sw, 1, "the route in the FIB", 5);
    let (got, sent, _) = ping(&b.h1, "10.200.0.1", &["-c", "3", "-i", "0.2", "-W", "1"]);
    assert_eq!((got, sent), (3, 3), "the kernel's route forwards");

    // The NX-OS view names the route's source and the kernel's protocol.
    let v = routes(&b.sw);
    let r = v["routes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["prefix"] == "10.200.0.0/16")
        .unwrap_or_else(|| panic!("{v}"));
    assert_eq!(
        (r["kind"].as_str(), r["protocol"].as_str()),
        (Some("kernel"), Some("boot"))
    );
    assert_eq!(r["next_hops"][0]["interface"], "Ethernet1/2");
    let text = b.sw.cli(&["show", "ip", "route"]).unwrap();
    assert!(
        text.contains("    *via 10.0.2.2, Eth1/2, [1/0], kernel, proto boot"),
        "{text}"
    );
    assert!(text.contains("Kernel routes: 1 in force"), "{text}");

    // A multipath route is an ECMP group over both ports.
    ok(&[
        "ip",
        "-n",
        &b.sw_ns,
        "route",
        "add",
        "10.201.0.0/16",
        "proto",
        "bgp",
        "nexthop",
        "via",
        "10.0.1.2",
        "nexthop",
        "via",
        "10.0.2.2",
    ]);
    let group = wait_for("the ECMP route", Duration::from_secs(5), || {
        let v = routes(&b.sw);
        v["routes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["prefix"] == "10.201.0.0/16")
            .cloned()
            .ok_or_else(|| v.to_string())
    });
    assert_eq!(group["kind"], "bgp");
    assert_eq!(group["next_hops"].as_array().unwrap().len(), 2, "{group}");

    ok(&["ip", "-n", &b.sw_ns, "route", "del", "10.200.0.0/16"]);
    wait_installed(&b.sw, 1, "the route gone", 5);
    let before = no_route_drops(&b.sw);
    assert_eq!(
        ping(&b.h1, "10.200.0.1", &["-c", "3", "-i", "0.2", "-W", "1"]).0,
        0
    );
    assert!(no_route_drops(&b.sw) >= before + 3, "counted as no route");
    drop(b.sw);
    drop(b.lab);
}

#[test]
#[ignore = "needs root and network namespaces (scripts/test.sh)"]
fn ten_thousand_prefixes_churn_while_traffic_flows_without_a_stall_or_a_stale_route() {
    let b = bench();
    let prefix = |i: usize| format!("10.{}.{}.0/24", 128 + i / 256, i % 256);
    let batch = |verb: &str| {
        let text: String = (0..CHURN)
            .map(|i| format!("route {verb} {} via 10.0.2.2\n", prefix(i)))
            .collect();
        let path = b.lab.path(&format!("{verb}.batch"));
        std::fs::write(&path, text).unwrap();
        path
    };
    let (adds, dels) = (batch("add"), batch("del"));

    // Traffic that no churned route touches, 200 packets a second for the
    // whole churn: any stall of the workers shows as loss or a long RTT.
    let mut steady = common::Daemon::start(
        &b.h1,
        &["ping", "-n", "-q", "-i", "0.005", "-W", "1", "10.0.2.2"],
        &b.lab.path("steady.out"),
    );
    std::thread::sleep(Duration::from_millis(300));

    let t0 = Instant::now();
    ok(&["ip", "-n", &b.sw_ns, "-batch", adds.to_str().unwrap()]);
    let kernel_done = t0.elapsed();
    wait_installed(&b.sw, CHURN as u64, "10,000 routes in the FIB", 60);
    let added = t0.elapsed();
    // The last prefix and one in the middle forward to h2.
    for dst in ["10.167.15.1", "10.148.7.9"] {
        let (got, sent, _) = ping(&b.h1, dst, &["-c", "2", "-i", "0.2", "-W", "1"]);
        assert_eq!((got, sent), (2, 2), "{dst} through its kernel route");
    }

    let t1 = Instant::now();
    ok(&["ip", "-n", &b.sw_ns, "-batch", dels.to_str().unwrap()]);
    wait_installed(&b.sw, 0, "every route withdrawn", 60);
    let withdrawn = t1.elapsed();
    // Acknowledged: not one packet for a withdrawn prefix is forwarded.
    let before = no_route_drops(&b.sw);
    let (got, sent, _) = ping(&b.h1, "10.167.15.1", &["-c", "20", "-i", "0.01", "-W", "1"]);
    assert_eq!((got, sent), (0, 20), "a withdrawn route still forwarded");
    assert!(no_route_drops(&b.sw) >= before + 20);

    // SIGINT: ping prints its summary and exits.
    steady.stop_with(libc::SIGINT);
    let (got, sent, max_rtt) = ping_summary(&steady.log());
    let v = routes(&b.sw);
    let k = &v["kernel_routes"];
    eprintln!(
        "churn: kernel took {} ms to add {CHURN} routes; in the FIB after {} ms; withdrawn after {} ms; \
         {} FIB updates, longest kernel-to-FIB {} us, {} resyncs; steady traffic {got}/{sent}, max RTT {max_rtt} ms",
        kernel_done.as_millis(),
        added.as_millis(),
        withdrawn.as_millis(),
        k["fib_updates"],
        k["max_update_us"],
        k["resyncs"],
    );
    assert!(k["adds"].as_u64() >= Some(CHURN as u64), "{k}");
    assert!(k["deletes"].as_u64() >= Some(CHURN as u64), "{k}");
    // Where a loss happened, for whoever reads a failure: the switch's
    // drops by port and reason (none means the hosts' stacks lost it).
    let drops: Vec<String> = b.sw.show().map_or_else(
        |e| vec![e],
        |v| {
            let mut d = Vec::new();
            for (port, i) in v["interfaces"].as_object().into_iter().flatten() {
                for (reason, n) in i["drops"].as_object().into_iter().flatten() {
                    if n.as_u64().unwrap_or(0) > 0 {
                        d.push(format!("{port} {reason} {n}"));
                    }
                }
                let backend = i["backend_rx_dropped"].as_u64().unwrap_or(0);
                if backend > 0 {
                    d.push(format!("{port} backend_rx_dropped {backend}"));
                }
            }
            d
        },
    );
    assert!(
        sent >= 200 && got == sent,
        "steady traffic lost {} of {sent}; switch drops: {drops:?}",
        sent - got
    );
    drop(b.sw);
    drop(b.lab);
}
