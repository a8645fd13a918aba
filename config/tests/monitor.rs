//! `monitor session N` (local SPAN): parsing, defaults, errors with their
//! positions and hints, and the printed form.

mod common;

use std::path::PathBuf;

use common::{clean, errors, one_error, summary};
use railyard_config::{InterfaceName, MonitorDestination, SpanDirection};

const PORTS: &str = "\
interface Ethernet1/1-4
  no switchport
";

fn with_ports(body: &str) -> String {
    format!("{PORTS}{body}")
}

#[test]
fn a_session_reads_its_sources_destination_and_state() {
    let p = clean(&with_ports(
        "monitor session 1
  description lab span
  source interface Ethernet1/1 both
  source interface eth1/2 rx
  source interface e1/3
  destination interface Ethernet1/4
  no shut
monitor session 2
  source interface Ethernet1/1 tx
  destination file /tmp/span 2.pcapng
",
    ));
    let s = &p.config.monitor_sessions;
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].id, 1);
    assert_eq!(s[0].description.as_deref(), Some("lab span"));
    assert_eq!(
        s[0].sources,
        [
            (InterfaceName::new(1, 1), SpanDirection::Both),
            (InterfaceName::new(1, 2), SpanDirection::Rx),
            (InterfaceName::new(1, 3), SpanDirection::Both),
        ]
    );
    assert_eq!(
        s[0].destination,
        Some(MonitorDestination::Interface(InterfaceName::new(1, 4)))
    );
    assert!(!s[0].shutdown);
    assert!(
        s[1].shutdown,
        "sessions are shut until `no shut`, as on NX-OS"
    );
    assert_eq!(
        s[1].destination,
        Some(MonitorDestination::File(PathBuf::from(
            "/tmp/span 2.pcapng"
        )))
    );
}

#[test]
fn printing_round_trips_and_no_forms_undo() {
    let text = with_ports(
        "monitor session 3
  description x
  source interface Ethernet1/1-2 rx
  destination file /tmp/a.pcapng
  no shut
monitor session 1
  source interface Ethernet1/3 tx
  destination interface Ethernet1/4
",
    );
    let p = clean(&text);
    let printed = p.config.to_string();
    assert!(
        printed.contains(
            "monitor session 1\n  source interface Ethernet1/3 tx\n  destination interface Ethernet1/4\n  shut\n\nmonitor session 3\n  description x\n  source interface Ethernet1/1 rx\n  source interface Ethernet1/2 rx\n  destination file /tmp/a.pcapng\n  no shut\n"
        ),
        "{printed}"
    );
    assert_eq!(clean(&printed).config, p.config);
    let undone = clean(&format!(
        "{text}monitor session 3\n  no description\n  no source interface e1/1\n  no destination\n  shut\nno monitor session 1\n"
    ));
    let s = &undone.config.monitor_sessions;
    assert_eq!(s.len(), 1);
    assert_eq!(
        s[0].sources,
        [(InterfaceName::new(1, 2), SpanDirection::Rx)]
    );
    assert_eq!(
        (
            s[0].description.as_ref(),
            s[0].destination.as_ref(),
            s[0].shutdown
        ),
        (None, None, true)
    );
}

#[test]
fn errors_point_at_the_token_with_a_hint() {
    let d = one_error(&with_ports("monitor session 19\n"));
    assert_eq!(summary(&d).0, 3);
    assert_eq!(summary(&d).1, 17);
    assert!(d.message.contains("monitor session"), "{d}");

    let d = one_error(&with_ports(
        "monitor session 1\n  source interface Ethernet1/9 rx\n",
    ));
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (4, 20, "monitor session 1: unknown interface Ethernet1/9")
    );
    assert!(d.hint.as_deref().unwrap().contains("interface Ethernet1/9"));

    let d = one_error(&with_ports(
        "monitor session 1\n  destination interface Ethernet1/7\n",
    ));
    assert_eq!((d.line, d.col), (4, 25));
    assert!(d.message.contains("unknown interface Ethernet1/7"), "{d}");

    let d = one_error(&with_ports(
        "monitor session 1\n  source interface e1/1\n  destination interface e1/1\n",
    ));
    assert_eq!((d.line, d.col), (5, 25));
    assert_eq!(
        d.message,
        "Ethernet1/1 is both a source and the destination of this session"
    );
    assert!(d.hint.is_some());

    let d = one_error(&with_ports(
        "monitor session 1\n  destination interface e1/4\n  source interface e1/4 rx\n",
    ));
    assert_eq!((d.line, d.col), (5, 20));

    let d = one_error(&with_ports(
        "monitor session 1\n  destination interface e1/4\n  destination file /tmp/x.pcapng\n",
    ));
    assert_eq!((d.line, d.col), (5, 15));
    assert_eq!(
        d.message,
        "monitor session 1 already has a destination (interface Ethernet1/4)"
    );

    let d = one_error(&with_ports(
        "monitor session 1\n  source interface e1/1 both2\n",
    ));
    assert_eq!((d.line, d.col), (4, 25));
    assert!(d.hint.as_deref().unwrap().contains("both"), "{d}");

    let d = one_error(&with_ports(
        "monitor session 1\n  source interface Vlan10\n",
    ));
    assert!(d.message.contains("Vlan"), "{d}");

    let d = one_error(&with_ports("monitor session 1\n  sorce interface e1/1\n"));
    assert!(d.hint.as_deref().unwrap().contains("source"), "{d}");
    assert_eq!(
        errors(&with_ports("monitor session 0\n  no shut\n")).len(),
        1
    );
}
