//! The FRR translation of the routing sections: golden files for the RFC
//! 7938 rail/spine samples, the NX-OS meanings FRR's defaults would change,
//! and FRR's own parser accepting what railyard writes.

use std::path::{Path, PathBuf};

use railyard_config::{parse_file, parse_str, Config, ParseOptions};
use railyard_control::routing::{frr_config, linux_name};

/// The sample configurations (kept with the parser's tests).
fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../config/tests/data")
        .join(name)
}

fn load(name: &str) -> Config {
    let parsed = parse_file(&sample(name), &ParseOptions::default())
        .unwrap_or_else(|es| panic!("{name}: {es:?}"));
    assert!(parsed.warnings.is_empty(), "{name}: {:?}", parsed.warnings);
    parsed.config
}

fn frr(text: &str) -> String {
    let config = parse_str(text, "lab.conf", &ParseOptions::default())
        .unwrap_or_else(|es| panic!("{es:?}"))
        .config;
    frr_config(&config, linux_name)
}

/// Compare with `tests/golden/NAME`; `RAILYARD_BLESS=1` rewrites it.
fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("RAILYARD_BLESS").is_some() {
        std::fs::write(&path, got).expect("write golden file");
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(got, want, "{} differs; got:\n{got}", path.display());
}

const SAMPLES: [&str; 2] = ["bgp-rail1.conf", "bgp-spine1.conf"];

#[test]
fn the_rail_translates_to_the_golden_file() {
    golden(
        "bgp-rail1.frr.conf",
        &frr_config(&load("bgp-rail1.conf"), linux_name),
    );
}

#[test]
fn the_spine_translates_to_the_golden_file() {
    golden(
        "bgp-spine1.frr.conf",
        &frr_config(&load("bgp-spine1.conf"), linux_name),
    );
}

/// A configuration exercising every translated statement at once.
const EVERYTHING: &str = "\
hostname leaf9
feature bgp
feature bfd
bfd interval 250 min_rx 250 multiplier 4
ip prefix-list A seq 5 permit 10.1.0.0/16 le 24
ip prefix-list B seq 10 permit 10.2.0.0/16 ge 24 le 28
ip prefix-list B description second
ipv6 prefix-list V6 seq 5 permit 2001:db8::/32 le 64
route-map ANY permit 10
  match ip address prefix-list A B
  set local-preference 200
  set metric 5
  set weight 7
  set as-path prepend 65009 65009
route-map ANY deny 20
route-map V6-OUT permit 10
  match ipv6 address prefix-list V6
interface Ethernet1/1
  no switchport
  ip address 10.0.0.1/31
  ipv6 address 2001:db8:ff::1/127
  bfd interval 100 min_rx 100 multiplier 3
interface Ethernet1/2
  no switchport
  ip address 10.0.0.3/31
interface Ethernet1/49/4
  no switchport
  ip address 10.255.9.9/32
router bgp 4200000009
  router-id 10.255.9.9
  address-family ipv4 unicast
    network 10.9.0.0/24 route-map ANY
    maximum-paths 8
    maximum-paths ibgp 2
    aggregate-address 10.9.0.0/16 as-set
  address-family ipv6 unicast
    network 2001:db8:9::/48
  template peer BASE
    remote-as 65000
    bfd
    address-family ipv4 unicast
      send-community both
      route-map ANY in
  template peer T
    inherit peer BASE
    description via T
  neighbor 10.0.0.0
    inherit peer T
    remote-as 65100
    update-source Ethernet1/49/4
    address-family ipv4 unicast
      route-map ANY out
  neighbor 10.0.0.2
    remote-as 1.10
    bfd
    shutdown
  neighbor 192.0.2.7
    remote-as 65007
    bfd
  neighbor 2001:db8:ff::
    remote-as 65100
    address-family ipv6 unicast
      route-map V6-OUT out
      send-community extended
";

#[test]
fn templates_are_applied_and_the_neighbor_wins() {
    let out = frr(EVERYTHING);
    // The neighbor's own remote-as beats BASE's; T's description and
    // BASE's bfd, communities and inbound policy come through the chain.
    assert!(out.contains(" ! neighbor 10.0.0.0 inherits template peer T\n"));
    assert!(
        out.contains(" neighbor 10.0.0.0 remote-as 65100\n"),
        "{out}"
    );
    assert!(!out.contains("neighbor 10.0.0.0 remote-as 65000"), "{out}");
    assert!(out.contains(" neighbor 10.0.0.0 description via T\n"));
    assert!(out.contains(" neighbor 10.0.0.0 bfd\n"));
    assert!(out.contains("  neighbor 10.0.0.0 route-map ANY in\n"));
    assert!(out.contains("  neighbor 10.0.0.0 route-map ANY out\n"));
    assert!(!out.contains("no neighbor 10.0.0.0 send-community standard"));
    assert!(!out.contains("no neighbor 10.0.0.0 send-community extended"));
    // Templates are not peer-groups.
    assert!(!out.contains("peer-group"));
}

#[test]
fn nxos_defaults_are_kept_where_frr_differs() {
    let out = frr(EVERYTHING);
    assert!(out.contains(" no bgp ebgp-requires-policy\n"));
    assert!(out.contains(" no bgp default ipv4-unicast\n"));
    assert!(out.contains("frr defaults traditional\n"));
    // A neighbor without address-family blocks is activated in none.
    assert!(!out.contains("neighbor 10.0.0.2 activate"), "{out}");
    // Communities: only what was asked for is sent.
    assert!(out.contains("  no neighbor 2001:db8:ff:: send-community standard\n"));
    assert!(!out.contains("no neighbor 2001:db8:ff:: send-community extended"));
    assert!(out.contains("  no neighbor 2001:db8:ff:: send-community large\n"));
    // asdot is read, plain is written.
    assert!(out.contains(" neighbor 10.0.0.2 remote-as 65546\n"));
    assert!(out.contains(" neighbor 10.0.0.2 shutdown\n"));
    assert!(out.contains("router bgp 4200000009\n"));
}

#[test]
fn bfd_intervals_come_from_the_interface_then_the_global_then_nxos() {
    let out = frr(EVERYTHING);
    // 10.0.0.0 is on Ethernet1/1 (100 ms), 10.0.0.2 on Ethernet1/2 (the
    // global 250 ms), 192.0.2.7 on no interface (the global too).
    assert!(
        out.contains(" neighbor 10.0.0.0 bfd profile tx100-rx100-x3\n"),
        "{out}"
    );
    assert!(out.contains(" neighbor 10.0.0.2 bfd profile tx250-rx250-x4\n"));
    assert!(out.contains(" neighbor 192.0.2.7 bfd profile tx250-rx250-x4\n"));
    assert!(out.contains(
        " profile tx100-rx100-x3\n  transmit-interval 100\n  receive-interval 100\n  detect-multiplier 3\n"
    ));
    assert_eq!(
        out.matches("\n profile tx").count(),
        2,
        "one profile per interval set"
    );
    // Without any `bfd interval`, NX-OS's 50 ms × 3.
    let out = frr(
        "feature bgp\nfeature bfd\nrouter bgp 1\n  neighbor 10.0.0.1\n    remote-as 2\n    bfd\n",
    );
    assert!(
        out.contains(" neighbor 10.0.0.1 bfd profile tx50-rx50-x3\n"),
        "{out}"
    );
    assert!(out.contains("  transmit-interval 50\n"));
}

#[test]
fn the_address_families_and_policies_translate() {
    let out = frr(EVERYTHING);
    let v4 = out.split(" address-family ipv4 unicast\n").nth(1).unwrap();
    let v4 = v4.split(" exit-address-family").next().unwrap();
    for line in [
        "  network 10.9.0.0/24 route-map ANY\n",
        "  aggregate-address 10.9.0.0/16 as-set\n",
        "  maximum-paths 8\n",
        "  maximum-paths ibgp 2\n",
        "  neighbor 10.0.0.0 activate\n",
    ] {
        assert!(v4.contains(line), "{line:?} missing from\n{v4}");
    }
    let v6 = out.split(" address-family ipv6 unicast\n").nth(1).unwrap();
    assert!(v6.contains("  network 2001:db8:9::/48\n"));
    assert!(v6.contains("  neighbor 2001:db8:ff:: activate\n"));
    assert!(v6.contains("  neighbor 2001:db8:ff:: route-map V6-OUT out\n"));
    assert!(out.contains("ipv6 prefix-list V6 seq 5 permit 2001:db8::/32 le 64\n"));
    assert!(out.contains("ip prefix-list B seq 10 permit 10.2.0.0/16 ge 24 le 28\n"));
    // Two lists in one match become one list holding both, in order.
    assert!(
        out.contains(" match ip address prefix-list ANY-10-ip\n"),
        "{out}"
    );
    assert!(out.contains(
        "ip prefix-list ANY-10-ip seq 5 permit 10.1.0.0/16 le 24\nip prefix-list ANY-10-ip seq 10 permit 10.2.0.0/16 ge 24 le 28\n"
    ));
    for line in [
        " set local-preference 200\n",
        " set metric 5\n",
        " set weight 7\n",
        " set as-path prepend 65009 65009\n",
        "route-map ANY deny 20\n",
    ] {
        assert!(out.contains(line), "{line:?} missing");
    }
}

#[test]
fn interface_names_go_through_the_given_mapping() {
    let out = frr(EVERYTHING);
    assert!(
        out.contains(" neighbor 10.0.0.0 update-source Eth1-49-4\n"),
        "{out}"
    );
    let config = parse_str(EVERYTHING, "lab.conf", &ParseOptions::default())
        .unwrap()
        .config;
    let custom = frr_config(&config, |n| format!("sw{}p{}", n.module, n.port));
    assert!(custom.contains(" neighbor 10.0.0.0 update-source sw1p49\n"));
}

#[test]
fn without_bgp_there_is_no_router_block() {
    let out = frr("hostname plain\ninterface e1/1\n  no switchport\n");
    assert!(out.contains("hostname plain\n"));
    assert!(!out.contains("router bgp"));
    assert!(!out.contains("\nbfd\n"));
}

/// FRR's own parser (vtysh, which knows every daemon's commands) accepts
/// every file railyard writes: the samples and the everything-at-once one.
#[test]
#[ignore = "needs FRR (scripts/test.sh installs it)"]
fn frr_accepts_the_generated_configuration() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut texts: Vec<(String, String)> = SAMPLES
        .iter()
        .map(|s| (s.to_string(), frr_config(&load(s), linux_name)))
        .collect();
    texts.push(("everything".into(), frr(EVERYTHING)));
    let dry_run = |name: &str, text: &str| {
        let path = dir.path().join(format!("{name}.frr.conf"));
        std::fs::write(&path, text).expect("write");
        let out = std::process::Command::new("vtysh")
            .arg("--dryrun")
            .arg("--inputfile")
            .arg(&path)
            .output()
            .expect("run vtysh (is FRR installed?)");
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success() && said.trim().is_empty(), said)
    };
    // The check can fail: a line FRR does not know is reported.
    let (clean, said) = dry_run(
        "bad",
        "router bgp 1\n neighbor 10.0.0.1 remote-as 2\n bogus statement\n",
    );
    assert!(
        !clean && said.contains("bogus"),
        "vtysh let a bad line through: {said}"
    );
    for (name, text) in texts {
        let (clean, said) = dry_run(&name, &text);
        assert!(clean, "{name}: vtysh rejected it:\n{said}\n{text}");
    }
}
