//! Routing through FRR on a live switch: the mirror interfaces carry BGP
//! and BFD between the switch's FRR and a peer's, and the routes FRR
//! learns reach the switch's kernel.
//!
//! Each test builds its own uniquely named namespaces (removed on drop)
//! and stops what it started by PID. The peer is FRR too (zebra, bgpd and
//! bfdd, started in the host's namespace through railyard's own launcher).

use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{in_netns, run, wait_for, Lab, Switch};

use railyard_control::routing::daemons::FrrDaemons;

const SWITCH: &str = "hostname sw1
feature bgp
feature bfd
interface Ethernet1/1
  no switchport
  ip address 10.0.0.1/31
  ipv6 address 2001:db8::1/127
  bind af-packet s0
router bgp 65001
  router-id 10.0.0.1
  address-family ipv4 unicast
    maximum-paths 4
  address-family ipv6 unicast
    maximum-paths 4
  neighbor 10.0.0.0
    remote-as 65100
    bfd
    address-family ipv4 unicast
  neighbor 2001:db8::
    remote-as 65100
    address-family ipv6 unicast
";

/// The peer: advertises the networks of its second interface.
const PEER: &str = "frr defaults traditional
hostname peer
no zebra nexthop kernel enable
router bgp 65100
 bgp router-id 192.0.2.1
 no bgp ebgp-requires-policy
 no bgp default ipv4-unicast
 neighbor 10.0.0.1 remote-as 65001
 neighbor 10.0.0.1 bfd
 neighbor 10.0.0.1 timers connect 5
 neighbor 2001:db8::1 remote-as 65001
 neighbor 2001:db8::1 timers connect 5
 address-family ipv4 unicast
  neighbor 10.0.0.1 activate
  network 192.0.2.0/24
 exit-address-family
 address-family ipv6 unicast
  neighbor 2001:db8::1 activate
  network 2001:db8:99::/64
 exit-address-family
";

fn json(sw: &Switch, args: &[&str]) -> Result<Value, String> {
    let out = sw.cli(args)?;
    serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))
}

/// The prefixes received from `neighbor`, once its session is Established
/// and has brought some.
fn received(sw: &Switch, neighbor: &str) -> Result<u64, String> {
    let v = json(sw, &["show", "bgp", "summary", "--json"])?;
    v["families"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["peers"].as_array().into_iter().flatten())
        .find(|p| p["neighbor"] == neighbor)
        .and_then(|p| p["prefixes_received"].as_u64())
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("nothing from {neighbor} yet: {v}"))
}

#[test]
#[ignore = "needs root, network namespaces and FRR (scripts/test.sh)"]
fn bgp_and_bfd_to_a_peer_come_up_through_the_mirror_and_routes_reach_the_kernel() {
    let mut lab = Lab::new();
    // FRR's daemons run as user `frr`: the lab's directory must let them in.
    std::fs::set_permissions(lab.path(""), std::fs::Permissions::from_mode(0o755)).unwrap();
    let (sw_ns, peer_ns) = (lab.ns("sw"), lab.ns("peer"));
    lab.veth(&sw_ns, "s0", &peer_ns, "p0");
    for cmd in [
        vec!["addr", "add", "10.0.0.0/31", "dev", "p0"],
        vec!["-6", "addr", "add", "2001:db8::/127", "dev", "p0", "nodad"],
        // The peer's own networks, on a second link of its own.
        vec!["link", "add", "n0", "type", "veth", "peer", "name", "n1"],
        vec!["link", "set", "n0", "up"],
        vec!["link", "set", "n1", "up"],
        vec!["addr", "add", "192.0.2.1/24", "dev", "n0"],
        vec![
            "-6",
            "addr",
            "add",
            "2001:db8:99::1/64",
            "dev",
            "n0",
            "nodad",
        ],
    ] {
        let mut argv = vec!["ip", "-n", &peer_ns];
        argv.extend(cmd);
        run(&argv).unwrap();
    }
    let config = lab.path("sw.conf");
    std::fs::write(&config, SWITCH).unwrap();
    let started = Instant::now();
    let sw = Switch::start(
        &sw_ns,
        &config,
        &lab.path("sw.sock"),
        &lab.path("sw.log"),
        &[],
    );
    let peer_dir = lab.path("peer-frr");
    let peer = in_netns(&peer_ns, move || FrrDaemons::start(&peer_dir, PEER))
        .join()
        .unwrap()
        .unwrap_or_else(|e| panic!("peer FRR: {e}"));

    // Both sessions establish and each brings its one prefix.
    let v4 = wait_for("the IPv4 session", Duration::from_secs(60), || {
        received(&sw, "10.0.0.0")
    });
    let up_after = started.elapsed();
    let v6 = wait_for("the IPv6 session", Duration::from_secs(150), || {
        received(&sw, "2001:db8::")
    });
    assert_eq!((v4, v6), (1, 1));
    eprintln!(
        "IPv4 session established {} ms after start",
        up_after.as_millis()
    );

    // FRR's zebra put them into the switch's kernel, through the mirror.
    let routes = run(&["ip", "-n", &sw_ns, "route", "show", "192.0.2.0/24"]).unwrap();
    assert!(
        routes.contains("via 10.0.0.0 dev Eth1-1 proto bgp"),
        "{routes}"
    );
    let routes6 = run(&[
        "ip",
        "-n",
        &sw_ns,
        "-6",
        "route",
        "show",
        "2001:db8:99::/64",
    ])
    .unwrap();
    assert!(routes6.contains("dev Eth1-1 proto bgp"), "{routes6}");

    // railyard followed them from the kernel into its FIB, as BGP routes.
    for (family, prefix) in [("ip", "192.0.2.0/24"), ("ipv6", "2001:db8:99::/64")] {
        let r = wait_for(
            "the route in railyard's FIB",
            Duration::from_secs(10),
            || {
                let v = json(&sw, &["show", family, "route", "--json"])?;
                v["routes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|r| r["prefix"] == prefix)
                    .cloned()
                    .ok_or_else(|| v.to_string())
            },
        );
        assert_eq!(
            (r["kind"].as_str(), r["protocol"].as_str()),
            (Some("bgp"), Some("bgp")),
            "{r}"
        );
        assert_eq!(r["next_hops"][0]["interface"], "Ethernet1/1", "{r}");
    }

    // The NX-OS views of the table and of BFD.
    let table = sw.cli(&["show", "bgp", "ipv4", "unicast"]).unwrap();
    assert!(table.contains("*>e192.0.2.0/24"), "{table}");
    let bfd = wait_for("the BFD session", Duration::from_secs(20), || {
        let v = json(&sw, &["show", "bfd", "neighbors", "--json"])?;
        match v["neighbors"][0]["state"].as_str() {
            Some("Up") => Ok(v),
            _ => Err(v.to_string()),
        }
    });
    assert_eq!(bfd["neighbors"][0]["interface"], "Eth1/1");

    // The mirror's counters saw both directions.
    let stats = sw.show().unwrap();
    let port = &stats["interfaces"]["Ethernet1/1"];
    assert!(port["mirrored"].as_u64().unwrap() > 0, "{port}");
    assert!(port["from_kernel"].as_u64().unwrap() > 0, "{port}");
    assert_eq!(port["to_kernel_dropped"], 0, "{port}");

    // Stopping the switch stops its FRR and removes its mirror.
    let pid: u32 = std::fs::read_to_string(lab.path("sw.sock.frr/bgpd.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    drop(peer);
    sw.stop();
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "bgpd {pid} outlived its switch"
    );
    let links = run(&["ip", "-n", &sw_ns, "link", "show"]).unwrap();
    assert!(!links.contains("Eth1-1"), "{links}");
}

#[test]
#[ignore = "needs root and network namespaces (scripts/test.sh)"]
fn a_mirror_that_cannot_be_created_stops_the_start_with_its_name() {
    let mut lab = Lab::new();
    let ns = lab.ns("sw");
    lab.veth(&ns, "s0", &ns, "x0");
    // A veth already holds the mirror's name: it cannot become a TAP.
    run(&[
        "ip", "-n", &ns, "link", "add", "Eth1-1", "type", "veth", "peer", "name", "x1",
    ])
    .unwrap();
    let config = lab.path("sw.conf");
    std::fs::write(&config, SWITCH).unwrap();
    let out = std::process::Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns,
            env!("CARGO_BIN_EXE_railyard"),
            "run",
            "--routing",
            "kernel",
            "--config",
        ])
        .arg(&config)
        .arg("--socket")
        .arg(lab.path("sw.sock"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("Ethernet1/1: cannot create mirror Eth1-1"),
        "{err}"
    );
}
