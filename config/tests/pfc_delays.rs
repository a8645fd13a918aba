//! railyard's interface lines for the delays a pause takes on a link:
//! `priority-flow-control cable-length`, `peer-response` and
//! `software-response` — parsed, printed back, undone by their `no` forms,
//! and their errors.

mod common;

use common::{clean, one_error, parse_strict, summary};
use railyard_config::{PeerResponse, PfcDelays};

/// The delays of the one interface `body` configures.
fn delays(body: &str) -> PfcDelays {
    let p = clean(&format!("interface Ethernet1/1\n  no switchport\n{body}"));
    p.config.interfaces[0].pfc_delays
}

#[test]
fn unset_terms_are_none() {
    let d = delays("");
    assert_eq!(d, PfcDelays::default());
    assert!(d.is_default());
    assert_eq!(
        (d.cable_metres, d.peer_response, d.software_response_ns),
        (None, None, None)
    );
}

#[test]
fn each_term_parses_in_its_units() {
    let d = delays(
        "  priority-flow-control cable-length 300\n  \
         priority-flow-control peer-response 7680 bits\n  \
         priority-flow-control software-response 500 us\n",
    );
    assert_eq!(d.cable_metres, Some(300));
    assert_eq!(d.peer_response, Some(PeerResponse::Bits(7680)));
    assert_eq!(d.software_response_ns, Some(500_000));
    assert!(!d.is_default());
    for (line, want) in [
        ("peer-response 250 ns", PeerResponse::Nanos(250)),
        ("peer-response 3 us", PeerResponse::Nanos(3_000)),
        ("peer-response 2 ms", PeerResponse::Nanos(2_000_000)),
        ("peer-response 0 bits", PeerResponse::Bits(0)),
        // Units abbreviate to a unique prefix, as everywhere.
        ("peer-response 4 b", PeerResponse::Bits(4)),
    ] {
        let d = delays(&format!("  priority-flow-control {line}\n"));
        assert_eq!(d.peer_response, Some(want), "{line}");
    }
    for (line, ns) in [
        ("software-response 10 ms", 10_000_000),
        ("software-response 1500 ns", 1_500),
        ("software-response 0 us", 0),
        ("software-response 1000 ms", 1_000_000_000),
    ] {
        let d = delays(&format!("  priority-flow-control {line}\n"));
        assert_eq!(d.software_response_ns, Some(ns), "{line}");
    }
    assert_eq!(
        delays("  priority-flow-control cable-length 0\n").cable_metres,
        Some(0),
        "a veth has no cable"
    );
    assert_eq!(
        delays("  priority-flow-control cable-length 100000\n").cable_metres,
        Some(100_000)
    );
}

#[test]
fn a_later_line_replaces_an_earlier_and_no_restores_the_default() {
    let d = delays(
        "  priority-flow-control cable-length 300\n  \
         priority-flow-control cable-length 20\n",
    );
    assert_eq!(d.cable_metres, Some(20));
    let all = "  priority-flow-control cable-length 300\n  \
               priority-flow-control peer-response 7680 bits\n  \
               priority-flow-control software-response 500 us\n";
    let d = delays(&format!(
        "{all}  no priority-flow-control cable-length\n  \
         no priority-flow-control peer-response 7680 bits\n  \
         no priority-flow-control software-response\n"
    ));
    assert!(d.is_default(), "{d:?}");
    // Each `no` undoes its own term only.
    let d = delays(&format!("{all}  no priority-flow-control peer-response\n"));
    assert_eq!(
        (d.cable_metres, d.peer_response, d.software_response_ns),
        (Some(300), None, Some(500_000))
    );
}

#[test]
fn a_range_sets_every_member() {
    let p = clean("interface Ethernet1/1-3\n  priority-flow-control cable-length 50\n");
    assert_eq!(p.config.interfaces.len(), 3);
    assert!(p
        .config
        .interfaces
        .iter()
        .all(|i| i.pfc_delays.cable_metres == Some(50)));
}

#[test]
fn printing_round_trips_in_canonical_units() {
    let text = "interface Ethernet1/1\n  no switchport\n  \
                priority-flow-control mode on\n  \
                priority-flow-control cable-length 300\n  \
                priority-flow-control peer-response 2000 ns\n  \
                priority-flow-control software-response 500000 ns\n\
                interface Ethernet1/2\n  no switchport\n  \
                priority-flow-control peer-response 3840 bits\n  \
                priority-flow-control software-response 1500 us\n";
    let c = clean(text).config;
    let printed = c.to_string();
    assert_eq!(
        printed,
        "interface Ethernet1/1\n  no switchport\n  \
         priority-flow-control mode on\n  \
         priority-flow-control cable-length 300\n  \
         priority-flow-control peer-response 2 us\n  \
         priority-flow-control software-response 500 us\n  \
         no shutdown\n\n\
         interface Ethernet1/2\n  no switchport\n  \
         priority-flow-control peer-response 3840 bits\n  \
         priority-flow-control software-response 1500 us\n  \
         no shutdown\n"
    );
    let again = clean(&printed).config;
    assert_eq!(again, c);
    assert_eq!(again.to_string(), printed);
    // Terms at their default print nothing.
    let plain = clean("interface Ethernet1/1\n  no switchport\n").config;
    assert!(!plain.to_string().contains("cable-length"));
    // A delay that is no whole number of microseconds prints in ns.
    let odd = clean(
        "interface Ethernet1/1\n  no switchport\n  \
         priority-flow-control software-response 1001 ns\n",
    )
    .config;
    assert!(odd
        .to_string()
        .contains("priority-flow-control software-response 1001 ns\n"));
}

#[test]
fn modelled_so_strict_mode_accepts_them() {
    let p = parse_strict(
        "interface Ethernet1/1\n  priority-flow-control cable-length 10\n  \
         priority-flow-control peer-response 1 us\n  \
         priority-flow-control software-response 1 ms\n",
    )
    .unwrap();
    assert!(p.warnings.is_empty(), "{}", common::render(&p.warnings));
}

#[test]
fn bad_values_point_at_the_value_with_a_hint() {
    let s = "interface e1/1\n";
    let d = one_error(&format!("{s}  priority-flow-control cable-length 100001\n"));
    assert_eq!(
        summary(&d),
        (
            2,
            38,
            "cable length 100001 is out of range",
            Some("cable length is 0-100000")
        )
    );
    let d = one_error(&format!("{s}  priority-flow-control cable-length long\n"));
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (2, 38, "invalid cable length `long`")
    );
    let d = one_error(&format!("{s}  priority-flow-control cable-length\n"));
    assert_eq!(d.message, "missing cable length in metres");
    assert_eq!(
        d.hint.as_deref(),
        Some("usage: priority-flow-control cable-length 0-100000 (metres)")
    );
    let d = one_error(&format!("{s}  priority-flow-control cable-length 5 m\n"));
    assert_eq!((d.col, d.message.as_str()), (40, "unexpected `m`"));

    let d = one_error(&format!(
        "{s}  priority-flow-control peer-response 2 minutes\n"
    ));
    assert_eq!(
        summary(&d),
        (
            2,
            41,
            "unknown unit `minutes`",
            Some("expected bits, ns, us or ms")
        )
    );
    let d = one_error(&format!("{s}  priority-flow-control peer-response 20\n"));
    assert_eq!(d.message, "missing unit (bits, ns, us or ms)");
    assert_eq!(
        d.hint.as_deref(),
        Some("usage: priority-flow-control peer-response N bits | ns | us | ms")
    );
    let d = one_error(&format!(
        "{s}  priority-flow-control peer-response 1001 ms\n"
    ));
    assert_eq!(
        summary(&d),
        (
            2,
            39,
            "peer response 1001 ms is out of range",
            Some("peer response is at most 1000 ms")
        )
    );
    let d = one_error(&format!(
        "{s}  priority-flow-control peer-response 1000000001 bits\n"
    ));
    assert_eq!(
        (d.col, d.message.as_str()),
        (39, "peer response 1000000001 is out of range")
    );
    let d = one_error(&format!("{s}  priority-flow-control peer-response -5 ns\n"));
    assert_eq!(
        (d.col, d.message.as_str()),
        (39, "invalid peer response `-5`")
    );

    let d = one_error(&format!(
        "{s}  priority-flow-control software-response 10 bits\n"
    ));
    assert_eq!(
        summary(&d),
        (2, 46, "unknown unit `bits`", Some("expected ns, us or ms"))
    );
    let d = one_error(&format!(
        "{s}  priority-flow-control software-response 2000000 us\n"
    ));
    assert_eq!(
        summary(&d),
        (
            2,
            43,
            "software response 2000000 us is out of range",
            Some("software response is at most 1000 ms")
        )
    );
    // Overflow on scaling is an error, not a wrap.
    let d = one_error(&format!(
        "{s}  priority-flow-control software-response 99999999999999999 ms\n"
    ));
    assert!(d.message.ends_with("is too large"), "{}", d.message);
}
