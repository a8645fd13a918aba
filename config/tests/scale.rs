//! Large configurations load through indexes rather than list scans; these
//! check that the indexes report exactly what the scans did: the same
//! duplicates, the first occurrence, whatever spelling names an interface.

mod common;

use std::fmt::Write as _;

use common::{errors, ok, render, warnings};
use railyard_config::{InterfaceName, RouteTarget};

#[test]
fn every_spelling_of_an_interface_is_one_interface() {
    let p = ok("interface Ethernet1/1\n  no switchport\n  mtu 9000\n\
                interface eth1/2\n  no switchport\n\
                interface e1/1\n  description again\n\
                interface ETHERNET 1/1\n  ip address 10.0.0.1/24\n\
                interface Eth1/2\n  ip address 10.0.1.1/24\n");
    let c = &p.config;
    let names: Vec<String> = c.interfaces.iter().map(|i| i.name.to_string()).collect();
    assert_eq!(names, ["Ethernet1/1", "Ethernet1/2"]);
    let e11 = &c.interfaces[0];
    assert_eq!(e11.line, 1, "the first mention is the interface's line");
    assert_eq!(e11.mtu, 9000);
    assert_eq!(e11.description.as_deref(), Some("again"));
    assert_eq!(e11.ipv4.len(), 1);
    assert_eq!(c.interfaces[1].ipv4.len(), 1);
}

#[test]
fn a_duplicate_address_names_the_first_interface_whatever_its_spelling() {
    let es = errors(
        "interface e1/3\n  no switchport\n  ip address 10.0.0.1/24\n\
         interface Ethernet1/1\n  no switchport\n  ip address 10.0.0.1/24\n\
         interface eth1/2\n  no switchport\n  ip address 10.0.0.1/28\n\
         interface ETH1/3\n  description the first again\n",
    );
    let got: Vec<(usize, &str, Option<&str>)> = es
        .iter()
        .map(|d| (d.line, d.message.as_str(), d.hint.as_deref()))
        .collect();
    let hint = Some("an address belongs to one interface (first configured on line 3)");
    assert_eq!(
        got,
        [
            (
                6,
                "10.0.0.1 on Ethernet1/1 is already assigned to Ethernet1/3",
                hint
            ),
            (
                9,
                "10.0.0.1 on Ethernet1/2 is already assigned to Ethernet1/3",
                hint
            ),
        ],
        "{}",
        render(&es)
    );
}

#[test]
fn an_overlap_names_the_first_interface_in_configuration_order() {
    // Ethernet1/2's /8 overlaps both earlier subnets; the scan reported the
    // interface configured first (Ethernet1/9), not the lowest-numbered.
    let p = ok("interface e1/9\n  no switchport\n  ip address 10.1.0.1/16\n\
                interface e1/1\n  no switchport\n  ip address 10.1.2.1/24\n  ip address 10.2.0.1/16 secondary\n\
                interface e1/2\n  no switchport\n  ip address 10.200.0.1/8\n");
    assert_eq!(
        warnings(&p),
        [
            (
                6,
                14,
                "10.1.2.0/24 on Ethernet1/1 overlaps 10.1.0.0/16 on Ethernet1/9".to_string()
            ),
            (
                10,
                14,
                "10.0.0.0/8 on Ethernet1/2 overlaps 10.1.0.0/16 on Ethernet1/9".to_string()
            ),
        ]
    );
    // Within the first overlapping interface, its first overlapping subnet.
    let p = ok("interface e1/1\n  no switchport\n  ip address 10.1.2.1/24\n  ip address 10.2.0.1/16 secondary\n\
                interface e1/2\n  no switchport\n  ip address 10.0.0.1/8\n");
    assert_eq!(
        warnings(&p),
        [(
            7,
            14,
            "10.0.0.0/8 on Ethernet1/2 overlaps 10.1.2.0/24 on Ethernet1/1".to_string()
        )]
    );
}

#[test]
fn duplicate_routes_are_found_across_interface_spellings() {
    let p = ok(
        "interface Ethernet1/1\n  no switchport\n  ip address 10.1.1.1/24\n\
                ip route 10.0.0.0/8 Ethernet1/1 10.1.1.2\n\
                ip route 10.0.0.0/8 eth1/1 10.1.1.2\n\
                ip route 10.0.0.0/8 E1/1 10.1.1.2\n\
                ip route 10.0.0.0/8 10.1.1.2\n",
    );
    let w = warnings(&p);
    let first = "duplicate route `ip route 10.0.0.0/8 Ethernet1/1 10.1.1.2` (first on line 4)";
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, 5);
    assert!(w[0].2.starts_with(first), "{}", w[0].2);
    assert!(w[0].2.contains("2 times"), "{}", w[0].2);
    let targets: Vec<&RouteTarget> = p.config.routes.iter().map(|r| &r.target).collect();
    assert_eq!(
        targets,
        [
            &RouteTarget::NextHop {
                addr: "10.1.1.2".parse().unwrap(),
                interface: Some(InterfaceName::new(1, 1)),
            },
            &RouteTarget::NextHop {
                addr: "10.1.1.2".parse().unwrap(),
                interface: None,
            },
        ]
    );
}

#[test]
fn a_removed_route_can_come_back_and_order_follows_the_file() {
    let p = ok("ip route 10.0.0.0/8 Null0\n\
                ip route 10.1.0.0/16 Null0\n\
                ip route 10.2.0.0/16 Null0\n\
                no ip route 10.1.0.0/16 Null0\n\
                no ip route 10.1.0.0/16 Null0\n\
                ip route 10.1.0.0/16 Null0\n\
                ip route 10.1.0.0/16 Null0\n\
                no ip route 10.0.0.0/8 Null0\n");
    let routes: Vec<(String, usize)> = p
        .config
        .routes
        .iter()
        .map(|r| (r.prefix.to_string(), r.line))
        .collect();
    assert_eq!(
        routes,
        [
            ("10.2.0.0/16".to_string(), 3),
            ("10.1.0.0/16".to_string(), 6)
        ]
    );
    let w = warnings(&p);
    let msgs: Vec<(usize, &str)> = w.iter().map(|(l, _, m)| (*l, m.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (5, "no route `ip route 10.1.0.0/16 Null0` to remove"),
            (
                7,
                "duplicate route `ip route 10.1.0.0/16 Null0` (first on line 6)"
            ),
        ]
    );
}

#[test]
fn a_port_and_its_lanes_are_one_error_at_the_first_lane() {
    let es = errors(
        "interface e1/1/2\n  no switchport\ninterface Ethernet1/2/1\n  no switchport\n\
                     interface eth1/1/1\n  no switchport\ninterface e1/1\n  no switchport\n\
                     interface e1/2\n  no switchport\n",
    );
    let got: Vec<(usize, &str)> = es.iter().map(|d| (d.line, d.message.as_str())).collect();
    assert_eq!(
        got,
        [
            (
                1,
                "Ethernet1/1 is configured both as one port and as breakout lanes"
            ),
            (
                3,
                "Ethernet1/2 is configured both as one port and as breakout lanes"
            ),
        ],
        "{}",
        render(&es)
    );
}

#[test]
fn route_targets_are_checked_against_every_spelling_and_subnet() {
    let p = ok(
        "interface eth1/1\n  no switchport\n  ip address 10.1.1.1/24\n  ipv6 address fe80::1/64\n\
                ip route 10.0.0.0/8 Ethernet1/1\n\
                ip route 10.2.0.0/16 e1/2\n\
                ip route 10.3.0.0/16 10.1.1.200\n\
                ip route 10.4.0.0/16 10.1.2.1\n",
    );
    let msgs: Vec<(usize, String)> = warnings(&p).into_iter().map(|(l, _, m)| (l, m)).collect();
    assert_eq!(
        msgs,
        [
            (
                6,
                "route 10.2.0.0/16 goes through Ethernet1/2, which is not configured".to_string()
            ),
            (
                8,
                "next hop 10.1.2.1 of 10.4.0.0/16 is not in any connected subnet".to_string()
            ),
        ]
    );
}

/// Thousands of interfaces and routes: the last items still find the first.
#[test]
fn duplicates_are_found_among_thousands() {
    let mut text = String::new();
    for i in 0..5000usize {
        let (m, p) = (i / 250 + 1, i % 250 + 1);
        let _ = write!(
            text,
            "interface Ethernet{m}/{p}\n  no switchport\n  ip address 10.{m}.{p}.1/24\n"
        );
    }
    for i in 0..5000usize {
        let _ = writeln!(text, "ip route 20.{}.{}.0/24 10.1.1.2", i / 256, i % 256);
    }
    let base = 5000 * 3;
    let _ = writeln!(text, "ip route 20.0.7.0/24 10.1.1.2");
    let _ = write!(text, "interface eth 20/250\n  ip address 10.1.1.1/24\n");
    let es = errors(&text);
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(es[0].line, base + 5000 + 3);
    assert_eq!(
        es[0].message,
        "10.1.1.1 on Ethernet20/250 is already assigned to Ethernet1/1"
    );
    let _ = text.split_off(text.rfind("interface eth 20/250").unwrap());
    let p = ok(&text);
    assert_eq!(p.config.interfaces.len(), 5000);
    assert_eq!(p.config.routes.len(), 5000);
    let w = warnings(&p);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, base + 5001);
    assert_eq!(
        w[0].2,
        format!(
            "duplicate route `ip route 20.0.7.0/24 10.1.1.2` (first on line {})",
            base + 8
        )
    );
}
