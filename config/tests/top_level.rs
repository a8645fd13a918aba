//! Top-level commands: hostname, feature, version, static routes.

mod common;

use std::net::IpAddr;

use common::{clean, errors, ok, one_error, parse_strict, summary, warnings};
use railyard_config::{InterfaceName, IpPrefix, RouteTarget};

fn nh(addr: &str) -> RouteTarget {
    RouteTarget::NextHop {
        addr: addr.parse().unwrap(),
        interface: None,
    }
}

fn prefix(s: &str) -> IpPrefix {
    s.parse().unwrap()
}

#[test]
fn hostname_and_switchname() {
    assert_eq!(
        clean("hostname leaf-1\n").config.hostname.as_deref(),
        Some("leaf-1")
    );
    assert_eq!(
        clean("switchname spine1\n").config.hostname.as_deref(),
        Some("spine1")
    );
    assert_eq!(
        clean("hostname a\nhostname b\n").config.hostname.as_deref(),
        Some("b")
    );
    assert_eq!(clean("hostname a\nno hostname\n").config.hostname, None);
    assert_eq!(ok("").config.hostname, None);
}

#[test]
fn hostname_errors() {
    let d = one_error("hostname\n");
    assert_eq!(
        summary(&d),
        (1, 10, "missing host name", Some("usage: hostname NAME"))
    );
    let d = one_error("hostname leaf 1\n");
    assert_eq!(
        summary(&d),
        (1, 15, "unexpected `1`", Some("usage: hostname NAME"))
    );
    let d = one_error("hostname -leaf\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (1, 10, "invalid host name `-leaf`")
    );
}

#[test]
fn features_are_a_set_and_version_is_silent() {
    let p = ok("version 10.3(4a) Bios:version 05.47\nfeature lldp\nfeature bgp\nfeature LLDP\nfeature interface-vlan\nno feature bgp\n");
    let features: Vec<&str> = p.config.features.iter().map(String::as_str).collect();
    assert_eq!(features, ["interface-vlan", "lldp"]);
    let d = one_error("feature\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (1, 9, "missing feature name")
    );
    clean("version 10.3(4a)\nfeature lldp\n");
}

#[test]
fn every_feature_loads_with_one_warning_per_name() {
    let text = "feature fabric forwarding\nfeature nv overlay\nfeature tacacs+\nfeature sla responder\nfeature mpls l3vpn\nfeature mpls segment-routing\nfeature  NV   Overlay\nfeature lldp\nfeature lldp bgp\nfeature-set mpls\nfeature-set fcoe\nfeature fabric forwarding\n";
    let p = ok(text);
    let features: Vec<&str> = p.config.features.iter().map(String::as_str).collect();
    assert_eq!(
        features,
        [
            "fabric forwarding",
            "lldp",
            "lldp bgp",
            "mpls l3vpn",
            "mpls segment-routing",
            "nv overlay",
            "sla responder",
            "tacacs+"
        ]
    );
    let kept = |name: &str| {
        format!("`feature {name}` is not modelled; kept in the configuration, it enables nothing")
    };
    assert_eq!(
        warnings(&p),
        [
            (1, 9, kept("fabric forwarding")),
            (2, 9, kept("nv overlay")),
            (3, 9, kept("tacacs+")),
            (4, 9, kept("sla responder")),
            (5, 9, kept("mpls l3vpn")),
            (6, 9, kept("mpls segment-routing")),
            (9, 9, kept("lldp bgp")),
            (10, 1, "`feature-set` is not modelled; skipped".to_string()),
        ]
    );
    // They print back as written (normalised) and read back the same.
    let printed = p.config.to_string();
    assert!(
        printed.contains("feature nv overlay\nfeature sla responder\nfeature tacacs+\n"),
        "{printed}"
    );
    assert_eq!(ok(&printed).config, p.config);
    // `no feature` takes several words too.
    let p = ok("feature nv overlay\nno feature nv overlay\n");
    assert!(p.config.features.is_empty());
    // Strict mode rejects each unmodelled feature line, not `feature lldp`.
    let es = parse_strict("feature lldp\nfeature nv overlay\nfeature nv overlay\n").unwrap_err();
    assert_eq!(
        es.iter()
            .map(|d| (d.line, d.message.as_str()))
            .collect::<Vec<_>>(),
        [
            (2, "`feature nv overlay` is not supported"),
            (3, "`feature nv overlay` is not supported")
        ]
    );
}

#[test]
fn route_forms() {
    let p = clean(
        "interface e1/1\n  no switchport\n  ip address 10.0.0.1/24\n\
         ip route 192.168.0.0/16 10.0.0.2\n\
         ip route 172.16.0.0/12 Ethernet1/1 10.0.0.3\n\
         ip route 10.9.0.0/16 e1/1\n\
         ip route 10.10.0.0/16 Null0\n\
         ip route 10.11.0.0/16 null0 name blackhole\n\
         ip route 10.12.0.0 255.255.0.0 10.0.0.2\n",
    );
    let routes = &p.config.routes;
    assert_eq!(routes.len(), 6);
    assert_eq!(routes[0].prefix, prefix("192.168.0.0/16"));
    assert_eq!(routes[0].target, nh("10.0.0.2"));
    assert_eq!(routes[0].line, 4);
    assert_eq!(
        routes[1].target,
        RouteTarget::NextHop {
            addr: "10.0.0.3".parse().unwrap(),
            interface: Some(InterfaceName::new(1, 1)),
        }
    );
    assert_eq!(
        routes[2].target,
        RouteTarget::Interface(InterfaceName::new(1, 1))
    );
    assert_eq!(routes[3].target, RouteTarget::Null0);
    assert_eq!(routes[4].target, RouteTarget::Null0);
    assert_eq!(routes[5].prefix, prefix("10.12.0.0/16"));
}

#[test]
fn route_options_are_accepted_in_any_order_and_ignored() {
    let base = "interface e1/1\n  no switchport\n  ip address 10.0.0.1/24\n";
    for opts in [
        "name up",
        "tag 100",
        "5",
        "name up tag 7 250",
        "250 tag 7",
        "n up t 4294967295",
    ] {
        let p = clean(&format!("{base}ip route 0.0.0.0/0 10.0.0.2 {opts}\n"));
        assert_eq!(p.config.routes.len(), 1, "{opts}");
        assert_eq!(p.config.routes[0].target, nh("10.0.0.2"), "{opts}");
    }
}

#[test]
fn route_option_errors() {
    let base = "ip route 0.0.0.0/0 Null0 ";
    let d = one_error(&format!("{base}0\n"));
    assert_eq!(
        summary(&d),
        (
            1,
            26,
            "route preference 0 is out of range",
            Some("preference (administrative distance) is 1-255")
        )
    );
    let d = one_error(&format!("{base}256\n"));
    assert_eq!(
        (d.col, d.message.as_str()),
        (26, "route preference 256 is out of range")
    );
    let d = one_error(&format!("{base}tag\n"));
    assert_eq!((d.col, d.message.as_str()), (30, "missing tag value"));
    let d = one_error(&format!("{base}tag x\n"));
    assert_eq!((d.col, d.message.as_str()), (30, "invalid tag `x`"));
    let d = one_error(&format!("{base}tag 4294967296\n"));
    assert_eq!(
        (d.col, d.message.as_str()),
        (30, "tag 4294967296 is out of range")
    );
    let d = one_error(&format!("{base}name\n"));
    assert_eq!((d.col, d.message.as_str()), (31, "missing route name"));
    // `vrf NAME` is a next hop's VRF now (tests/static_routes.rs); an
    // unknown option is still an error with the usage.
    let d = one_error(&format!("{base}color blue\n"));
    assert_eq!((d.col, d.message.as_str()), (26, "unexpected `color`"));
    assert!(d
        .hint
        .as_deref()
        .unwrap()
        .starts_with("usage: ip route PREFIX/LEN"));
}

#[test]
fn ecmp_routes_keep_every_next_hop_in_order() {
    let p = clean(
        "interface e1/1-2\n  no switchport\ninterface e1/1\n  ip address 10.0.1.1/31\ninterface e1/2\n  ip address 10.0.2.1/31\n\
         ip route 0.0.0.0/0 10.0.2.0\nip route 0.0.0.0/0 10.0.1.0\nip route 10.0.0.0/8 Null0\n",
    );
    let group: Vec<&RouteTarget> = p
        .config
        .routes_for(&prefix("0.0.0.0/0"))
        .map(|r| &r.target)
        .collect();
    assert_eq!(group, [&nh("10.0.2.0"), &nh("10.0.1.0")]);
}

#[test]
fn an_exact_duplicate_route_is_a_warning() {
    let p = ok("ip route 10.0.0.0/8 Null0\nip route 10.0.0.0/8 Null0 name again\n");
    assert_eq!(p.config.routes.len(), 1);
    assert_eq!(p.config.routes[0].line, 1);
    let w = &p.warnings[0];
    assert_eq!(
        summary(w),
        (
            2,
            21,
            "duplicate route `ip route 10.0.0.0/8 Null0` (first on line 1)",
            Some("the repeated line is ignored")
        )
    );
    assert_eq!(p.warnings.len(), 1);
}

#[test]
fn host_bits_in_a_route_prefix_are_an_error_with_the_network_as_hint() {
    let d = one_error("ip route 10.1.2.3/8 Null0\n");
    assert_eq!(
        summary(&d),
        (
            1,
            10,
            "host bits set in prefix 10.1.2.3/8",
            Some("the network address is 10.0.0.0/8")
        )
    );
    let d = one_error("ipv6 route 2001:db8::1/32 Null0\n");
    assert_eq!(
        summary(&d),
        (
            1,
            12,
            "host bits set in prefix 2001:db8::1/32",
            Some("the network address is 2001:db8::/32")
        )
    );
}

#[test]
fn route_prefix_and_next_hop_errors() {
    let d = one_error("ip route 10.0.0.0/33 Null0\n");
    assert_eq!(
        summary(&d),
        (
            1,
            10,
            "invalid IPv4 prefix length 33",
            Some("prefix length must be 0-32")
        )
    );
    let d = one_error("ip route 10.0.0.0 10.1.1.1\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (10, "`10.0.0.0` has no prefix length")
    );
    let d = one_error("ip route 10.0.0.0 255.0.255.0 10.1.1.1\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (19, "invalid netmask `255.0.255.0`")
    );
    let d = one_error("ip route 10.0.0.0/8\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (21, "missing next hop, interface or Null0")
    );
    let d = one_error("ip route 10.0.0.0/8 10.1.1.300\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (21, "invalid next hop `10.1.1.300`")
    );
    let d = one_error("ip route 10.0.0.0/8 2001:db8::1\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (21, "next hop 2001:db8::1 is IPv6 but the prefix is IPv4")
    );
    let d = one_error("ip route 10.0.0.0/8 224.0.0.1\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (21, "next hop 224.0.0.1 is not a unicast address")
    );
    let d = one_error("ip route 2001:db8::/32 Null0\n");
    assert_eq!(
        summary(&d),
        (
            1,
            10,
            "`2001:db8::/32` is not an IPv4 prefix",
            Some("IPv6 routes are configured with `ipv6 route`")
        )
    );
    let d = one_error("ipv6 route 10.0.0.0/8 Null0\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (12, "`10.0.0.0/8` is not an IPv6 prefix")
    );
    let d = one_error("ip route 10.0.0.0/8 Ethernet1/1-2 10.1.1.1\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (
            21,
            "a route goes through one interface, not the range `Ethernet1/1-2`"
        )
    );
    let d = one_error("ip route 10.0.0.0/8 Ethernet1/0 10.1.1.1\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (21, "invalid interface `Ethernet1/0`: numbers start at 1")
    );
    let d = one_error("ip route 10.0.0.0/8 Ethernet1/1 10.1.1.1 2001:db8::1\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (42, "unexpected `2001:db8::1`")
    );
}

#[test]
fn all_route_errors_in_a_file_are_reported() {
    let es = errors("ip route 10.0.0.1/8 Null0\nhostname ok\nip route 10.0.0.0/99 Null0\nipv6 route ::/0 fe80::1\n");
    let at: Vec<(usize, usize)> = es.iter().map(|d| (d.line, d.col)).collect();
    assert_eq!(at, [(1, 10), (3, 10), (4, 17)]);
    assert_eq!(
        es[2].message,
        "link-local next hop fe80::1 needs an outgoing interface"
    );
    assert_eq!(
        es[2].hint.as_deref(),
        Some("write it as `ipv6 route ::/0 Ethernet1/1 fe80::1`")
    );
}

#[test]
fn ipv6_routes() {
    let p = clean(
        "interface e1/1\n  no switchport\n  ipv6 address 2001:db8:1::1/64\n\
         ipv6 route ::/0 2001:db8:1::2\nipv6 route 2001:db8:99::/48 Ethernet1/1 fe80::2\nipv6 route 2001:db8:98::/48 Null0\n",
    );
    let r = &p.config.routes;
    assert_eq!(r.len(), 3);
    assert_eq!(r[0].prefix, prefix("::/0"));
    assert!(r[0].prefix.is_default());
    assert_eq!(r[0].target, nh("2001:db8:1::2"));
    assert_eq!(
        r[1].target,
        RouteTarget::NextHop {
            addr: "fe80::2".parse::<IpAddr>().unwrap(),
            interface: Some(InterfaceName::new(1, 1)),
        }
    );
    assert_eq!(r[2].target, RouteTarget::Null0);
}

#[test]
fn no_ip_route_removes_one_next_hop() {
    let p = clean(
        "ip route 10.0.0.0/8 Null0\nip route 0.0.0.0/0 Null0\nip route 10.0.0.0/8 Ethernet1/1\ninterface e1/1\n  no switchport\n\
         no ip route 10.0.0.0/8 Null0\n",
    );
    let r = &p.config.routes;
    assert_eq!(r.len(), 2);
    assert_eq!(r[0].target, RouteTarget::Null0);
    assert_eq!(r[0].prefix, prefix("0.0.0.0/0"));
    assert_eq!(
        r[1].target,
        RouteTarget::Interface(InterfaceName::new(1, 1))
    );

    let p = ok("no ipv6 route ::/0 Null0\n");
    assert_eq!(
        warnings(&p),
        [(
            1,
            20,
            "no route `ipv6 route ::/0 Null0` to remove".to_string()
        )]
    );
}

#[test]
fn routes_through_unmodelled_interfaces_are_skipped_with_a_warning() {
    let p = ok("ip route 0.0.0.0/0 mgmt0 192.168.1.1\nip route 10.0.0.0/8 Vlan10 10.1.1.1\nip route 10.0.0.0/8 mgmt0 10.1.1.1\n");
    assert!(p.config.routes.is_empty());
    assert_eq!(
        warnings(&p),
        [
            (
                1,
                20,
                "`ip route via mgmt` is not modelled; skipped".to_string()
            ),
            (
                2,
                21,
                "`ip route via Vlan` is not modelled; skipped".to_string()
            ),
        ]
    );
    assert_eq!(
        common::skip_summary(&p),
        Some("skipped 3 unmodelled commands: ip route via mgmt (2), ip route via Vlan (1)")
    );
}
