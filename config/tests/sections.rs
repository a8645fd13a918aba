//! Section handling: comments, `exit`/`end`, indentation, skipped commands and strict mode.

mod common;

use common::{clean, errors, ok, one_error, parse_strict, render, skip_summary, summary, warnings};
use railyard_config::Severity;

#[test]
fn comments_and_blank_lines_are_ignored() {
    let p = clean("!Command: show running-config\n!Time: Mon Jan  1 00:00:00 2024\n\n# lab notes\ninterface e1/1\n  ! a comment inside\n\n  # another\n  mtu 9216\n");
    assert_eq!(p.config.interfaces[0].mtu, 9216);
}

#[test]
fn membership_comes_from_context_not_indentation() {
    // Flat body.
    let p = clean("interface e1/1\nno switchport\nmtu 9216\nhostname leaf\n");
    let i = &p.config.interfaces[0];
    assert!(i.routed);
    assert_eq!(i.mtu, 9216);
    assert_eq!(p.config.hostname.as_deref(), Some("leaf"));
    // Odd indentation: sub-commands flush left, a top-level command indented.
    let p = clean(
        "    interface e1/1\nmtu 9000\n      hostname leaf\n  interface e1/2\n    mtu 1600\n",
    );
    assert_eq!(p.config.interfaces[0].mtu, 9000);
    assert_eq!(p.config.interfaces[1].mtu, 1600);
    assert_eq!(p.config.hostname.as_deref(), Some("leaf"));
    // A top-level command ends the section: `ip route` is not the interface's `ip router`.
    let p = ok("interface e1/1\n  no switchport\n  ip address 10.0.0.1/24\n  ip route 0.0.0.0/0 10.0.0.2\n  mtu 9000\n");
    assert_eq!(p.config.routes.len(), 1);
    // ... and `mtu` after it is then unknown at top level.
    assert_eq!(p.config.interfaces[0].mtu, 1500);
    assert_eq!(
        warnings(&p),
        [(5, 3, "unknown command `mtu`; skipped".to_string())]
    );
}

#[test]
fn exit_leaves_the_section_and_end_returns_to_top() {
    let p = ok("interface e1/1\n  mtu 9000\n  exit\nmtu 9216\n");
    assert_eq!(p.config.interfaces[0].mtu, 9000);
    assert_eq!(
        warnings(&p),
        [(4, 1, "unknown command `mtu`; skipped".to_string())]
    );
    let p = ok("interface e1/1\n  mtu 9000\nend\n  mtu 9216\n");
    assert_eq!(p.config.interfaces[0].mtu, 9000);
    assert_eq!(
        warnings(&p),
        [(4, 3, "unknown command `mtu`; skipped".to_string())]
    );
    // Extra `exit`s and `end`s at top level are harmless.
    clean("exit\nend\nexit\nhostname a\n");
}

#[test]
fn keywords_abbreviate_as_on_nxos() {
    let p = clean("int e1/1\n  no sw\n  ip add 10.0.0.1/24\n  desc uplink\n  shut\n  mac 0011.2233.4455\nhost leaf\nfeature lldp\n");
    let i = &p.config.interfaces[0];
    assert!(i.routed && i.shutdown);
    assert_eq!(i.ipv4.len(), 1);
    assert_eq!(i.description.as_deref(), Some("uplink"));
    assert!(i.mac.is_some());
    assert_eq!(p.config.hostname.as_deref(), Some("leaf"));
    assert!(p.config.features.contains("lldp"));
    // An abbreviation of two keywords is an error naming both.
    let d = one_error("feat lldp\n");
    assert_eq!(
        summary(&d),
        (
            1,
            1,
            "ambiguous command word `feat`",
            Some("it could mean feature, feature-set")
        )
    );
}

#[test]
fn unmodelled_sections_are_skipped_with_one_warning_per_kind() {
    let text = "\
vrf context management
  ip route 0.0.0.0/0 192.168.1.1
  exit
router ospf 1
  router-id 10.0.0.1
  area 0.0.0.0 range 10.0.0.0/8
    not-advertise
  log-adjacency-changes
router ospf 2
username admin password 5 $5$abc role network-admin
username oper password 5 $5$def role network-operator
class-map type control-plane match-any copp-bgp
  match access-group name copp-acl-bgp
hostname leaf1
";
    let p = ok(text);
    assert!(
        p.config.routes.is_empty(),
        "a VRF's route must not reach the default table"
    );
    assert_eq!(p.config.hostname.as_deref(), Some("leaf1"));
    assert_eq!(
        warnings(&p),
        [
            (1, 1, "`vrf context` is not modelled; skipped with the 2 lines indented under it (lines 2-3)".to_string()),
            (4, 1, "`router ospf` is not modelled; skipped with the 4 lines indented under it (lines 5-8)".to_string()),
            (10, 1, "`username` is not modelled; skipped".to_string()),
            (
                12,
                1,
                "`class-map type control-plane` is not modelled; skipped".to_string()
            ),
        ]
    );
    assert_eq!(
        p.warnings[0].hint.as_deref(),
        Some("later `vrf context` lines are skipped without another warning")
    );
    assert_eq!(
        skip_summary(&p),
        Some("skipped 6 unmodelled commands: vrf context (1), router ospf (2), username (2), class-map type control-plane (1)")
    );
    assert_eq!(p.warnings.last().map(|d| d.line), Some(0));
}

#[test]
fn unknown_top_level_commands_are_skipped_with_a_warning() {
    let p = ok("frobnicate now\nfrobnicate later\n  with a body\nno frobnicate\nhostname a\n");
    assert_eq!(
        warnings(&p),
        [
            (1, 1, "unknown command `frobnicate`; skipped".to_string()),
            (4, 1, "unknown command `no frobnicate`; skipped".to_string()),
        ]
    );
    assert_eq!(
        skip_summary(&p),
        Some("skipped 3 unmodelled commands: frobnicate (2), no frobnicate (1)")
    );
    assert_eq!(p.config.hostname.as_deref(), Some("a"));
}

#[test]
fn unmodelled_interface_types_are_skipped_with_their_bodies() {
    let text = "\
interface loopback0
  ip address 10.255.0.1/32
  ip router ospf 1 area 0
interface mgmt0
  vrf member management
  ip address 192.168.1.10/24
interface lo1
interface tunnel5
interface e1/1
  mtu 9216
";
    let p = ok(text);
    assert_eq!(p.config.interfaces.len(), 1);
    assert_eq!(p.config.interfaces[0].mtu, 9216);
    assert_eq!(
        warnings(&p),
        [
            (
                1,
                11,
                "`interface loopback` is not modelled; skipped".to_string()
            ),
            (
                4,
                11,
                "`interface mgmt` is not modelled; skipped".to_string()
            ),
            (
                8,
                11,
                "`interface tunnel` is not modelled; skipped".to_string()
            ),
        ]
    );
    // Their sub-commands are swallowed even when flush left.
    let p = ok("interface loopback0\nip address 10.255.0.1/32\nshutdown\nhostname a\n");
    assert!(p.config.interfaces.is_empty());
    assert_eq!(warnings(&p).len(), 1);
    assert_eq!(p.config.hostname.as_deref(), Some("a"));
    // Subinterfaces too.
    let p = ok("interface Ethernet1/1.100\n  encapsulation dot1q 100\n");
    assert_eq!(
        warnings(&p),
        [(
            1,
            11,
            "`interface Ethernet subinterface` is not modelled; skipped".to_string()
        )]
    );
}

#[test]
fn unmodelled_interface_commands_are_skipped_with_a_warning() {
    let text = "\
interface e1/1-2
  storm-control broadcast level 1
  flowcontrol receive on
  no cdp enable
  lldp tlv-set management-address 10.0.0.1
  no lldp tlv-set system-name
  switchport autostate exclude
  mtu 9216
";
    let p = ok(text);
    assert!(p.config.interfaces.iter().all(|i| i.mtu == 9216));
    assert_eq!(
        warnings(&p),
        [
            (
                2,
                3,
                "interface command `storm-control` is not modelled; skipped".to_string()
            ),
            (
                3,
                3,
                "interface command `flowcontrol` is not modelled; skipped".to_string()
            ),
            (
                4,
                3,
                "interface command `cdp` is not modelled; skipped".to_string()
            ),
            (
                5,
                3,
                "interface command `lldp` is not modelled; skipped".to_string()
            ),
            (
                7,
                3,
                "interface command `switchport autostate` is not modelled; skipped".to_string()
            ),
        ]
    );
    assert_eq!(
        skip_summary(&p),
        Some("skipped 6 unmodelled commands: interface: storm-control (1), interface: flowcontrol (1), interface: cdp (1), interface: lldp (2), interface: switchport autostate (1)")
    );
}

#[test]
fn strict_mode_turns_every_skip_into_an_error() {
    let text = "router ospf 1\n  router-id 10.0.0.2\nrouter ospf 2\nfrobnicate\ninterface loopback0\ninterface e1/1\n  lldp tlv-set x\nfeature lldp\nversion 10.3\n";
    let es = parse_strict(text).unwrap_err();
    let got: Vec<(usize, usize, &str)> = es
        .iter()
        .map(|d| (d.line, d.col, d.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (1, 1, "`router ospf` is not supported"),
            (3, 1, "`router ospf` is not supported"),
            (4, 1, "unknown command `frobnicate`"),
            (5, 11, "`interface loopback` is not supported"),
            (7, 3, "interface command `lldp` is not supported"),
        ]
    );
    assert!(es.iter().all(|d| d.severity == Severity::Error));
    assert_eq!(
        es[0].hint.as_deref(),
        Some("remove it, or parse without strict mode to skip it with a warning")
    );
    // A fully modelled file passes strict mode, with no warnings.
    let p = parse_strict("hostname a\nfeature lldp\nversion 10.3\ninterface e1/1\n  mtu 9216\n")
        .unwrap();
    assert!(p.warnings.is_empty(), "{}", render(&p.warnings));
}

#[test]
fn unknown_lines_under_a_modelled_section() {
    // Indented deeper than the header: a typo in the section.
    let d = one_error("interface e1/1\n  no switchport\n  frobnicate\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (3, 3, "unknown interface command `frobnicate`")
    );
    // Flush left after an indented body: an unknown top-level command.
    let p = ok("interface e1/1\n  no switchport\nip frobnicate on\n");
    assert_eq!(
        warnings(&p),
        [(3, 1, "unknown command `ip`; skipped".to_string())]
    );
    // Flat body: a line starting like an interface command is a typo in it ...
    let d = one_error("interface e1/1\nno switchport\nip adress 10.0.0.1/24\n");
    assert_eq!(
        summary(&d),
        (
            3,
            4,
            "unknown interface command `ip adress`",
            Some("did you mean `ip address`?")
        )
    );
    // ... and anything else is an unknown top-level command.
    let p = ok("interface e1/1\nno switchport\nfrobnicate\n");
    assert_eq!(
        warnings(&p),
        [(3, 1, "unknown command `frobnicate`; skipped".to_string())]
    );
}

#[test]
fn errors_are_collected_across_the_file_and_warnings_dropped() {
    let es = errors("frobnicate\ninterface e1/1\n  mtu 70000\nhostname\ninterface e1/0\n  mtu 9216\nip route 1.2.3.4/8 Null0\n");
    let at: Vec<(usize, usize)> = es.iter().map(|d| (d.line, d.col)).collect();
    assert_eq!(at, [(3, 7), (4, 10), (5, 11), (7, 10)]);
}
