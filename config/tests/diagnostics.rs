//! How diagnostics are reported: all at once, warnings with errors, repeats
//! collapsed, a cap on errors, and the modelled PFC family's invalid forms.

mod common;

use common::{one_error, summary};
use railyard_config::{check_str, ParseOptions, Severity};

fn check(text: &str) -> railyard_config::Report {
    check_str(text, "lab.conf", &ParseOptions::default())
}

#[test]
fn warnings_are_reported_alongside_errors() {
    let r = check(
        "router ospf 1\n  router-id 10.0.0.2\ninterface e1/1\n  mtu 99999\nfeature nv overlay\n",
    );
    assert!(r.has_errors());
    assert!(r.config.is_none());
    let got: Vec<(Severity, usize, &str)> = r
        .diagnostics
        .iter()
        .map(|d| (d.severity, d.line, d.message.as_str()))
        .collect();
    assert_eq!(
        got[0],
        (
            Severity::Warning,
            1,
            "`router ospf` is not modelled; skipped with the line indented under it (line 2)"
        )
    );
    assert_eq!(got[1].0, Severity::Error);
    assert_eq!(got[1].1, 4);
    assert_eq!(
        got[2],
        (
            Severity::Warning,
            5,
            "`feature nv overlay` is not modelled; kept in the configuration, it enables nothing"
        )
    );
    assert_eq!(got[3].1, 0, "the skip summary comes last");
    // The error-only view is the errors of the report.
    let es = r.clone().into_result().unwrap_err();
    assert_eq!(es.len(), 1);
    assert_eq!(es[0], r.diagnostics[1]);
}

#[test]
fn after_100_errors_the_rest_are_counted() {
    let text = "interface e1/1\n  mtu 99999\n".repeat(250);
    let r = check(&text);
    let errors: Vec<_> = r.diagnostics.iter().filter(|d| d.is_error()).collect();
    assert_eq!(errors.len(), 101);
    assert!(errors[..100].iter().all(|d| d.line > 0));
    assert_eq!(
        errors[100].message,
        "150 more errors not shown (the first 100 are); fix these and check again"
    );
    assert_eq!(errors[100].line, 0);
}

#[test]
fn an_empty_file_says_so() {
    for text in ["", "\n\n", "! only a comment\n# and another\n"] {
        let r = check(text);
        assert!(!r.has_errors());
        assert_eq!(
            r.diagnostics.iter().map(|d| d.message.as_str()).collect::<Vec<_>>(),
            ["the file has no commands (it is empty or only comments); the switch has no interfaces"]
        );
    }
    // A file of one banner has a command.
    let r = check("banner motd #hi#\n");
    assert!(r
        .diagnostics
        .iter()
        .all(|d| !d.message.contains("no commands")));
}

#[test]
fn invalid_pfc_forms_are_errors_with_a_hint() {
    let d = one_error("interface e1/1\n  priority-flow-control receive on\n");
    assert_eq!(
        summary(&d),
        (
            2,
            25,
            "NX-OS has no `priority-flow-control receive`",
            Some("PFC is enabled per interface with `priority-flow-control mode on`; link-level pause (802.3x) is `flowcontrol receive on` / `flowcontrol send on`")
        )
    );
    let d = one_error("priority-flow-control mode on\n");
    assert_eq!(
        summary(&d),
        (
            1,
            1,
            "`priority-flow-control mode` is an interface command; NX-OS has no global PFC mode",
            Some("write it under each interface: `interface Ethernet1/1` then `priority-flow-control mode on`")
        )
    );
    // After an indented interface body, a flush-left one is global.
    let d = one_error("interface e1/1\n  mtu 9216\npriority-flow-control mode on\n");
    assert_eq!(d.line, 3);
    assert!(d.message.contains("no global PFC mode"));
    let d = one_error("priority-flow-control frobnicate\n");
    assert_eq!(
        d.message,
        "unknown `priority-flow-control` option `frobnicate`"
    );
    let d = one_error("interface e1/1\n  priority-flow-control frobnicate\n");
    assert_eq!(
        d.message,
        "unknown `priority-flow-control` option `frobnicate`"
    );
    assert!(d
        .hint
        .unwrap()
        .starts_with("usage: priority-flow-control mode"));
    // The valid forms still load.
    common::ok("interface e1/1\n  priority-flow-control mode on\npriority-flow-control watch-dog-interval on\n");
}

#[test]
fn a_skipped_section_names_the_lines_that_went_with_it() {
    let r = check(
        "router ospf 1\n  neighbor 10.0.0.1 remote-as 65001\n    address-family ipv4 unicast\n  \
         router-id 1.1.1.1\nsnmp-server community x\nrouter ospf 2\n  neighbor 10.0.0.9\n\
         interface e1/1\n  no switchport\n",
    );
    let got: Vec<&str> = r.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        got[..2],
        [
            "`router ospf` is not modelled; skipped with the 3 lines indented under it (lines 2-4)",
            "`snmp-server` is not modelled; skipped",
        ],
        "{got:?}"
    );
    // The second `router ospf` draws no warning of its own, and the body
    // of the first one stops where the file returns to the top level.
    assert!(
        !got.iter()
            .any(|m| m.contains("lines 2-7") || m.contains("line 7)")),
        "{got:?}"
    );
}

#[test]
fn an_access_list_whose_header_failed_still_has_its_entries_checked() {
    let r = check(
        "ip access-list bad/name\n  10 permit tcp any any eq 99999\n  deny udp any any eq nosuchport\n  \
         no 10\nip access-list GOOD\n  permit tcp any any eq 80\n",
    );
    let errors: Vec<(usize, &str)> = r
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| (d.line, d.message.as_str()))
        .collect();
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_eq!(errors[0].0, 1);
    assert_eq!(errors[1].0, 2);
    assert_eq!(errors[2].0, 3);
}
