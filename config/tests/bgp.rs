//! The routing sections: `router bgp` (address families, neighbors, peer
//! templates), `route-map`, `ip|ipv6 prefix-list` and `bfd interval` —
//! each statement, each diagnostic at its position, the printed form.

mod common;

use std::net::{IpAddr, Ipv4Addr};

use common::{clean, errors, ok, one_error, parse_strict, render, summary, warnings};
use railyard_config::{
    Action, Afi, Aggregate, Asn, BfdInterval, Config, InterfaceName, Network, PeerAf, RouteMapSet,
};

const HEAD: &str = "feature bgp\nfeature bfd\n";

/// A prefix-list rule: sequence, action, prefix, ge, le.
type Rule = (u32, Action, String, Option<u8>, Option<u8>);

fn addr(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn round_trip(config: &Config) {
    let printed = config.to_string();
    let again = ok(&printed).config;
    assert_eq!(&again, config, "printed:\n{printed}");
    assert_eq!(again.to_string(), printed, "printing is not stable");
}

#[test]
fn the_router_statements() {
    let c = clean(&format!(
        "{HEAD}router bgp 65001\n  router-id 10.255.0.1\n  bestpath as-path multipath-relax\n  \
         log-neighbor-changes\n"
    ))
    .config;
    let bgp = c.bgp.as_ref().unwrap();
    assert_eq!(bgp.asn, Asn(65001));
    assert_eq!(bgp.router_id, Some(Ipv4Addr::new(10, 255, 0, 1)));
    assert!(bgp.multipath_relax && bgp.log_neighbor_changes);
    round_trip(&c);
    let c = clean(&format!(
        "{HEAD}router bgp 65001\n  router-id 1.1.1.1\n  no router-id\n  log-n\n  no log-neighbor-changes\n"
    ))
    .config;
    let bgp = c.bgp.unwrap();
    assert_eq!(bgp.router_id, None);
    assert!(!bgp.log_neighbor_changes);
}

#[test]
fn as_numbers_plain_four_byte_and_asdot() {
    for (text, want) in [
        ("1", 1),
        ("65535", 65535),
        ("4200000001", 4_200_000_001),
        ("4294967295", u32::MAX),
        ("1.10", 65546),
        ("65535.65535", u32::MAX),
    ] {
        let c = clean(&format!("{HEAD}router bgp {text}\n")).config;
        assert_eq!(c.bgp.unwrap().asn, Asn(want), "{text}");
    }
    for bad in [
        "0",
        "4294967296",
        "0.0",
        "65536.1",
        "1.65536",
        "x",
        "1.2.3",
        "-5",
    ] {
        let d = one_error(&format!("{HEAD}router bgp {bad}\n"));
        assert_eq!(
            summary(&d),
            (
                3,
                12,
                format!("invalid AS number `{bad}`").as_str(),
                Some("an AS number is 1-4294967295, or in asdot 1-65535.0-65535")
            ),
            "{bad}"
        );
    }
}

#[test]
fn address_families() {
    let c = clean(&format!(
        "{HEAD}route-map RM permit 10\nrouter bgp 1\n  address-family ipv4 unicast\n    \
         maximum-paths 64\n    maximum-paths ibgp 2\n    network 10.1.0.0/24\n    \
         network 10.2.0.0/24 route-map RM\n    redistribute direct route-map RM\n    \
         aggregate-address 10.0.0.0/8 summary-only\n    aggregate-address 11.0.0.0/8 as-set\n    \
         aggregate-address 12.0.0.0/8\n  address-family ipv6 unicast\n    network 2001:db8::/32\n"
    ))
    .config;
    let bgp = c.bgp.as_ref().unwrap();
    let v4 = bgp.ipv4.as_ref().unwrap();
    assert_eq!(v4.maximum_paths, Some(64));
    assert_eq!(v4.maximum_paths_ibgp, Some(2));
    assert_eq!(
        v4.networks,
        [
            Network {
                prefix: "10.1.0.0/24".parse().unwrap(),
                route_map: None
            },
            Network {
                prefix: "10.2.0.0/24".parse().unwrap(),
                route_map: Some("RM".into())
            },
        ]
    );
    assert_eq!(v4.redistribute_direct.as_deref(), Some("RM"));
    assert_eq!(
        v4.aggregates[0],
        Aggregate {
            prefix: "10.0.0.0/8".parse().unwrap(),
            as_set: false,
            summary_only: true
        }
    );
    assert!(v4.aggregates[1].as_set && !v4.aggregates[1].summary_only);
    let v6 = bgp.ipv6.as_ref().unwrap();
    assert_eq!(v6.networks.len(), 1);
    round_trip(&c);
    // `no` forms undo.
    let c = clean(&format!(
        "{HEAD}route-map RM permit 10\nrouter bgp 1\n  address-family ipv4 unicast\n    maximum-paths 4\n    \
         network 10.1.0.0/24\n    redistribute direct route-map RM\n    aggregate-address 10.0.0.0/8\n    \
         no maximum-paths\n    no network 10.1.0.0/24\n    no redistribute direct\n    \
         no aggregate-address 10.0.0.0/8\n"
    ))
    .config;
    assert_eq!(c.bgp.unwrap().ipv4.unwrap(), Default::default());
}

#[test]
fn address_family_errors_point_at_the_value() {
    let at = |body: &str| {
        let d = one_error(&format!(
            "{HEAD}router bgp 1\n  address-family ipv4 unicast\n    {body}\n"
        ));
        (d.line, d.col, d.message, d.hint)
    };
    assert_eq!(
        at("maximum-paths 65"),
        (
            5,
            19,
            "maximum-paths 65 is out of range".into(),
            Some("maximum-paths is 1-64".into())
        )
    );
    assert_eq!(
        at("network 10.1.1.1/24"),
        (
            5,
            13,
            "`10.1.1.1/24` has host bits set".into(),
            Some("write the network: 10.1.1.0/24".into())
        )
    );
    assert_eq!(
        at("network 2001:db8::/32"),
        (
            5,
            13,
            "`2001:db8::/32` is not an ipv4 prefix".into(),
            Some("write it under `address-family ipv6 unicast`".into())
        )
    );
    let (line, col, message, hint) = at("redistribute direct");
    assert_eq!((line, col, message.as_str()), (5, 25, "missing route-map"));
    assert!(hint.unwrap().contains("only through a route-map"));
    assert_eq!(
        at("aggregate-address 10.0.0.0/8 advertise-map X").1,
        34,
        "unexpected words point at themselves"
    );
}

#[test]
fn neighbors_and_their_statements() {
    let c = clean(&format!(
        "{HEAD}route-map IN permit 10\nroute-map OUT permit 10\ninterface e1/1\n  no switchport\n  \
         ip address 10.0.0.1/31\nrouter bgp 65001\n  neighbor 10.0.0.0\n    remote-as 65100\n    \
         description spine one, port 3\n    bfd\n    update-source e1/1\n    shutdown\n    \
         address-family ipv4 unicast\n      activate\n      send-community\n      send-community extended\n      \
         route-map IN in\n      route-map OUT out\n  neighbor 2001:db8::1 remote-as 4200000000\n    \
         address-family ipv6 unicast\n      send-community both\n"
    ))
    .config;
    let bgp = c.bgp.as_ref().unwrap();
    let n = &bgp.neighbors[0];
    assert_eq!(n.addr, addr("10.0.0.0"));
    assert_eq!(n.peer.remote_as, Some(Asn(65100)));
    assert_eq!(n.peer.description.as_deref(), Some("spine one, port 3"));
    assert!(n.peer.bfd && n.peer.shutdown);
    assert_eq!(n.peer.update_source.as_deref(), Some("Ethernet1/1"));
    assert_eq!(
        n.peer.ipv4,
        Some(PeerAf {
            send_community: true,
            send_community_extended: true,
            route_map_in: Some("IN".into()),
            route_map_out: Some("OUT".into()),
        })
    );
    assert_eq!(n.peer.ipv6, None);
    let v6 = &bgp.neighbors[1];
    assert_eq!(v6.addr, addr("2001:db8::1"));
    assert_eq!(v6.peer.remote_as, Some(Asn(4_200_000_000)));
    let af = v6.peer.ipv6.as_ref().unwrap();
    assert!(af.send_community && af.send_community_extended);
    round_trip(&c);
    // `no` forms.
    let c = clean(&format!(
        "{HEAD}router bgp 1\n  neighbor 10.0.0.0\n    remote-as 2\n    description x\n    bfd\n    \
         shutdown\n    no description\n    no bfd\n    no shutdown\n    address-family ipv4 unicast\n      \
         send-community both\n      no send-community standard\n  neighbor 10.0.0.2\n    remote-as 3\n  \
         no neighbor 10.0.0.2\n"
    ))
    .config;
    let bgp = c.bgp.unwrap();
    assert_eq!(bgp.neighbors.len(), 1);
    let p = &bgp.neighbors[0].peer;
    assert!(p.description.is_none() && !p.bfd && !p.shutdown);
    let af = p.ipv4.as_ref().unwrap();
    assert!(!af.send_community && af.send_community_extended);
}

#[test]
fn a_router_level_family_after_a_neighbor_belongs_to_the_router() {
    let c = clean(&format!(
        "{HEAD}router bgp 1\n  neighbor 10.0.0.0\n    remote-as 2\n    address-family ipv4 unicast\n  \
         address-family ipv4 unicast\n    maximum-paths 2\n"
    ))
    .config;
    let bgp = c.bgp.unwrap();
    assert_eq!(bgp.ipv4.unwrap().maximum_paths, Some(2));
    assert_eq!(bgp.neighbors[0].peer.ipv4, Some(PeerAf::default()));
}

#[test]
fn templates_are_inherited_and_the_neighbor_wins() {
    let c = clean(&format!(
        "{HEAD}router bgp 65001\n  template peer BASE\n    remote-as 65100\n    bfd\n    \
         address-family ipv4 unicast\n      send-community\n  template peer SPINE\n    inherit peer BASE\n    \
         description spine\n  neighbor 10.0.0.0\n    inherit peer SPINE\n  neighbor 10.0.0.2\n    \
         inherit peer SPINE\n    remote-as 65200\n    description mine\n"
    ))
    .config;
    let bgp = c.bgp.as_ref().unwrap();
    assert_eq!(bgp.templates.len(), 2);
    let first = bgp.effective(&bgp.neighbors[0]);
    assert_eq!(first.remote_as, Some(Asn(65100)));
    assert_eq!(first.description.as_deref(), Some("spine"));
    assert!(first.bfd);
    assert!(first.ipv4.as_ref().unwrap().send_community);
    let second = bgp.effective(&bgp.neighbors[1]);
    assert_eq!(second.remote_as, Some(Asn(65200)));
    assert_eq!(second.description.as_deref(), Some("mine"));
    // The neighbor's own settings stay its own in the model.
    assert_eq!(bgp.neighbors[0].peer.remote_as, None);
    round_trip(&c);
}

#[test]
fn an_unknown_template_is_an_error_at_its_name() {
    let es = errors(&format!(
        "{HEAD}router bgp 1\n  template peer SPINE\n    remote-as 2\n  neighbor 10.0.0.0\n    \
         inherit peer SPNIE\n"
    ));
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(
        summary(&es[0]),
        (
            7,
            18,
            "template peer `SPNIE` is not defined",
            Some("did you mean `SPINE`?")
        )
    );
    assert_eq!(es[0].source_line, "    inherit peer SPNIE");
}

#[test]
fn templates_inheriting_in_a_circle_are_an_error() {
    let es = errors(&format!(
        "{HEAD}router bgp 1\n  template peer A\n    inherit peer B\n    remote-as 2\n  template peer B\n    \
         inherit peer A\n"
    ));
    let got: Vec<_> = es.iter().map(summary).map(|s| (s.0, s.1, s.2)).collect();
    assert_eq!(
        got,
        [
            (5, 18, "template peer `A` inherits itself"),
            (8, 18, "template peer `B` inherits itself"),
        ]
    );
}

#[test]
fn a_neighbor_without_remote_as_is_an_error_at_its_address() {
    let es = errors(&format!(
        "{HEAD}router bgp 1\n  template peer T\n    bfd\n  neighbor 10.0.0.9\n    inherit peer T\n"
    ));
    assert_eq!(es.len(), 1, "{}", render(&es));
    assert_eq!(
        summary(&es[0]),
        (
            6,
            12,
            "neighbor 10.0.0.9 has no remote-as",
            Some("add `remote-as ASN` under the neighbor or its template `T`")
        )
    );
}

#[test]
fn neighbor_errors() {
    let d = one_error(&format!("{HEAD}router bgp 1\n  neighbor 10.0.0.300\n"));
    assert_eq!((d.line, d.col), (4, 12));
    assert_eq!(d.message, "invalid neighbor address `10.0.0.300`");
    let d = one_error(&format!(
        "{HEAD}router bgp 1\n  neighbor 10.0.0.1\n    remote-as 2\n    address-family ipv4 unicast\n      \
         route-map X sideways\n"
    ));
    assert_eq!((d.line, d.col), (7, 19));
    assert_eq!(d.message, "unknown direction `sideways`");
    let d = one_error(&format!(
        "{HEAD}router bgp 1\n  neighbor 10.0.0.1\n    remote-as 2\n    update-source Ethernet1/1-2\n"
    ));
    assert_eq!((d.line, d.col), (6, 19));
    let d = one_error(&format!("{HEAD}router bgp 1\nrouter bgp 2\n"));
    assert_eq!(
        summary(&d),
        (
            4,
            12,
            "BGP is already configured with AS 1",
            Some("a switch runs one BGP instance; remove the other `router bgp` first")
        )
    );
    // A typo of a modelled command is an error, not a skip.
    let d = one_error(&format!(
        "{HEAD}router bgp 1\n  neighbor 10.0.0.1 remote-as 2\n    remote-az 2\n"
    ));
    assert_eq!(
        summary(&d),
        (
            5,
            5,
            "unknown neighbor command `remote-az`",
            Some("did you mean `remote-as`?")
        )
    );
}

#[test]
fn unmodelled_bgp_statements_are_warnings_with_positions() {
    let p = ok(&format!(
        "{HEAD}router bgp 1\n  timers bgp 3 9\n  address-family l2vpn evpn\n    retain route-target all\n  \
         vrf tenant\n    address-family ipv4 unicast\n      network 10.99.0.0/24\n  \
         template peer-session S\n    password 3 x\n  neighbor 10.0.0.1\n    remote-as 2\n    \
         ebgp-multihop 2\n    address-family ipv4 unicast\n      allowas-in 3\n      \
         next-hop-self\n  address-family ipv4 unicast\n    redistribute static route-map X\n    \
         network 10.1.0.0/24\n"
    ));
    assert_eq!(
        warnings(&p),
        [
            (
                4,
                3,
                "router bgp command `timers` is not modelled; skipped".into()
            ),
            (
                5,
                3,
                "router bgp command `address-family l2vpn evpn` is not modelled; skipped".into()
            ),
            (
                7,
                3,
                "router bgp command `vrf` is not modelled; skipped".into()
            ),
            (
                10,
                3,
                "router bgp command `template peer-session` is not modelled; skipped".into()
            ),
            (
                14,
                5,
                "neighbor command `ebgp-multihop` is not modelled; skipped".into()
            ),
            (
                16,
                7,
                "neighbor address-family command `allowas-in` is not modelled; skipped".into()
            ),
            (
                17,
                7,
                "neighbor address-family command `next-hop-self` is not modelled; skipped".into()
            ),
            (
                19,
                5,
                "router bgp address-family command `redistribute static` is not modelled; skipped"
                    .into()
            ),
        ]
    );
    // The VRF's network went with the VRF; the default VRF's did not.
    let bgp = p.config.bgp.unwrap();
    let v4 = bgp.ipv4.unwrap();
    assert_eq!(v4.networks.len(), 1);
    assert_eq!(v4.networks[0].prefix, "10.1.0.0/24".parse().unwrap());
    assert!(bgp.neighbors[0].peer.ipv4.is_some());
    // Strict mode rejects them.
    let es = parse_strict(&format!("{HEAD}router bgp 1\n  timers bgp 3 9\n")).unwrap_err();
    assert_eq!(
        summary(&es[0]).2,
        "router bgp command `timers` is not supported"
    );
}

#[test]
fn route_maps() {
    let c = clean(
        "ip prefix-list A seq 5 permit 10.0.0.0/8\nip prefix-list B seq 5 permit 11.0.0.0/8\n\
         ipv6 prefix-list C seq 5 permit 2001:db8::/32\n\
         route-map RM deny 20\n  match ip address prefix-list A\nroute-map RM permit 10\n  \
         description first\n  match ip address prefix-list A B\n  match ipv6 address prefix-list C\n  \
         set local-preference 200\n  set metric 7\n  set weight 9\n  set as-path prepend 65001 1.1\n\
         route-map PLAIN\n",
    )
    .config;
    let rm: Vec<(&str, Action, u16)> = c
        .route_maps
        .iter()
        .map(|r| (r.name.as_str(), r.action, r.seq))
        .collect();
    assert_eq!(
        rm,
        [
            ("RM", Action::Permit, 10),
            ("RM", Action::Deny, 20),
            ("PLAIN", Action::Permit, 10)
        ],
        "entries of one map stay together in sequence order; the default is permit 10"
    );
    let e = &c.route_maps[0];
    assert_eq!(e.description.as_deref(), Some("first"));
    assert_eq!(e.match_ipv4, ["A", "B"]);
    assert_eq!(e.match_ipv6, ["C"]);
    assert_eq!(
        e.sets,
        [
            RouteMapSet::LocalPreference(200),
            RouteMapSet::Metric(7),
            RouteMapSet::Weight(9),
            RouteMapSet::AsPathPrepend(vec![Asn(65001), Asn(65537)]),
        ]
    );
    round_trip(&c);
    // An unmodelled `set` or `match` is a warning at its line.
    let p = ok("route-map RM permit 10\n  set community 65000:1\n  match tag 5\n");
    assert_eq!(
        warnings(&p),
        [
            (
                2,
                3,
                "route-map command `set` is not modelled; skipped".into()
            ),
            (
                3,
                3,
                "route-map command `match` is not modelled; skipped".into()
            ),
        ]
    );
    // `no` forms.
    let c = clean(
        "route-map RM permit 10\n  set metric 1\n  no set metric\nroute-map RM permit 20\nno route-map RM permit 20\n",
    )
    .config;
    assert_eq!(c.route_maps.len(), 1);
    assert!(c.route_maps[0].sets.is_empty());
}

#[test]
fn undefined_route_maps_and_prefix_lists_are_warnings_where_named() {
    let p = ok(&format!(
        "{HEAD}route-map RM permit 10\n  match ip address prefix-list NOPE\n\
         router bgp 1\n  address-family ipv4 unicast\n    network 10.0.0.0/8 route-map GONE\n    \
         redistribute direct route-map MISSING\n  neighbor 10.0.0.1\n    remote-as 2\n    \
         address-family ipv4 unicast\n      route-map NOIN in\n"
    ));
    let got: Vec<(usize, usize, String)> = warnings(&p);
    assert_eq!(
        got,
        [
            (4, 32, "ip prefix-list `NOPE` is not defined".into()),
            (7, 34, "route-map `GONE` is not defined".into()),
            (8, 35, "route-map `MISSING` is not defined".into()),
            (12, 17, "route-map `NOIN` is not defined".into()),
        ]
    );
    assert!(p.warnings[3]
        .hint
        .as_deref()
        .unwrap()
        .contains("every route from the peer is refused"));
    // Several lists of which one denies: FRR cannot say it exactly.
    let p = ok(
        "ip prefix-list A seq 5 deny 10.0.0.0/8\nip prefix-list B seq 5 permit 10.0.0.0/8\n\
                route-map RM permit 10\n  match ip address prefix-list B A\n",
    );
    assert_eq!(
        warnings(&p),
        [(
            4,
            34,
            "prefix-list `A` denies, and this entry matches several lists".into()
        )]
    );
    clean("ip prefix-list A seq 5 deny 10.0.0.0/8\nroute-map RM permit 10\n  match ip address prefix-list A\n");
    // The families are separate namespaces.
    let p = ok("ipv6 prefix-list A seq 5 permit 2001:db8::/32\nroute-map RM permit 10\n  match ip address prefix-list A\n");
    assert_eq!(warnings(&p).len(), 1);
}

#[test]
fn prefix_lists() {
    let c = clean(
        "ip prefix-list L description the hosts\nip prefix-list L seq 10 permit 10.1.0.0/16 le 24\n\
         ip prefix-list L seq 5 deny 10.1.99.0/24\nip prefix-list L permit 10.2.0.0/16 ge 24 le 28\n\
         ipv6 prefix-list L seq 5 permit 2001:db8::/32 ge 48\n",
    )
    .config;
    let v4 = c.prefix_list(Afi::Ipv4, "L").unwrap();
    assert_eq!(v4.description.as_deref(), Some("the hosts"));
    let rules: Vec<Rule> = v4
        .rules
        .iter()
        .map(|r| (r.seq, r.action, r.prefix.to_string(), r.ge, r.le))
        .collect();
    assert_eq!(
        rules,
        [
            (5, Action::Deny, "10.1.99.0/24".into(), None, None),
            (10, Action::Permit, "10.1.0.0/16".into(), None, Some(24)),
            (15, Action::Permit, "10.2.0.0/16".into(), Some(24), Some(28)),
        ],
        "in sequence order; an unnumbered rule is 5 past the highest"
    );
    let v6 = c.prefix_list(Afi::Ipv6, "L").unwrap();
    assert_eq!(v6.rules[0].ge, Some(48));
    round_trip(&c);
    let c = clean(
        "ip prefix-list L seq 5 permit 10.0.0.0/8\nip prefix-list L seq 10 permit 11.0.0.0/8\n\
         no ip prefix-list L seq 5\nip prefix-list M seq 5 permit 12.0.0.0/8\nno ip prefix-list M\n",
    )
    .config;
    assert_eq!(c.prefix_lists.len(), 1);
    assert_eq!(c.prefix_lists[0].rules.len(), 1);
}

#[test]
fn prefix_list_errors_point_at_the_value() {
    let d = one_error("ip prefix-list L seq 5 permit 10.0.0.0/16 ge 8\n");
    assert_eq!(
        summary(&d),
        (
            1,
            46,
            "`ge 8` does not exceed the prefix length 16",
            Some("`ge` and `le` must be greater than the prefix length and at most 32; to match the prefix exactly leave them out")
        )
    );
    let d = one_error("ip prefix-list L seq 5 permit 10.0.0.0/8 ge 24 le 16\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (1, 51, "`le 16` is less than `ge 24`")
    );
    let d = one_error("ip prefix-list L seq 5 permit 10.0.0.0/8 le 33\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (45, "`le` length 33 is out of range")
    );
    let d = one_error("ip prefix-list L seq 5 permit 2001:db8::/32\n");
    assert_eq!(
        summary(&d),
        (
            1,
            31,
            "`2001:db8::/32` is not an ipv4 prefix",
            Some("IPv6 prefixes go in an `ipv6 prefix-list` list")
        )
    );
    let d = one_error("ip prefix-list L seq 5 allow 10.0.0.0/8\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (24, "unknown prefix-list action `allow`")
    );
}

#[test]
fn bfd_intervals_global_and_per_interface() {
    let c = clean(&format!(
        "{HEAD}bfd interval 300 min_rx 250 multiplier 3\ninterface e1/1\n  no switchport\n  \
         bfd interval 100 min_rx 100 multiplier 5\n"
    ))
    .config;
    assert_eq!(
        c.bfd_interval,
        Some(BfdInterval {
            tx_ms: 300,
            min_rx_ms: 250,
            multiplier: 3
        })
    );
    let e = c.interface_by_name(&InterfaceName::new(1, 1)).unwrap();
    assert_eq!(e.bfd_interval.unwrap().multiplier, 5);
    round_trip(&c);
    let d = one_error(&format!("{HEAD}bfd interval 30 min_rx 50 multiplier 3\n"));
    assert_eq!(
        summary(&d),
        (
            3,
            14,
            "BFD interval 30 is out of range",
            Some("BFD interval is 50-999")
        )
    );
    let d = one_error(&format!("{HEAD}bfd interval 300 min_tx 50 multiplier 3\n"));
    assert_eq!(
        (d.col, d.message.as_str()),
        (18, "expected `min_rx`, found `min_tx`")
    );
    let d = one_error(&format!(
        "{HEAD}interface e1/1\n  bfd interval 300 min_rx 300 multiplier 51\n"
    ));
    assert_eq!((d.line, d.col), (4, 42));
}

#[test]
fn missing_features_are_warnings_at_the_first_use() {
    let p = ok("router bgp 1\n  neighbor 10.0.0.1\n    remote-as 2\n    bfd\n");
    let got: Vec<(usize, usize, String)> = warnings(&p);
    assert_eq!(
        got,
        [
            (
                1,
                1,
                "`router bgp` without `feature bgp`; read as if it were enabled".into()
            ),
            (
                4,
                5,
                "BFD is configured without `feature bfd`; read as if it were enabled".into()
            ),
        ]
    );
    let p = ok("interface e1/1\n  bfd interval 300 min_rx 300 multiplier 3\n");
    assert_eq!(warnings(&p)[0].0, 2);
    clean(&format!(
        "{HEAD}router bgp 1\n  neighbor 10.0.0.1\n    remote-as 2\n    bfd\n"
    ));
}

#[test]
fn update_source_that_railyard_cannot_translate_is_a_warning() {
    let p = ok(&format!(
        "{HEAD}router bgp 1\n  neighbor 10.0.0.1\n    remote-as 2\n    update-source loopback0\n  \
         neighbor 10.0.0.3\n    remote-as 2\n    update-source Ethernet1/9\n"
    ));
    assert_eq!(
        warnings(&p),
        [
            (
                6,
                19,
                "update-source `loopback0` is not an Ethernet interface; railyard leaves it out"
                    .into()
            ),
            (
                9,
                19,
                "update-source Ethernet1/9 is not a configured interface".into()
            ),
        ]
    );
    assert_eq!(
        p.config.bgp.unwrap().neighbors[0]
            .peer
            .update_source
            .as_deref(),
        Some("loopback0")
    );
}

#[test]
fn the_samples_load_cleanly_and_round_trip() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for name in ["bgp-rail1.conf", "bgp-spine1.conf"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let c = clean(&text).config;
        assert!(c.bgp.is_some(), "{name}");
        round_trip(&c);
    }
}

#[test]
fn the_model_serialises() {
    let c = clean(&format!(
        "{HEAD}router bgp 65001\n  neighbor 10.0.0.0\n    remote-as 65100\n"
    ))
    .config;
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["bgp"]["asn"], 65001);
    assert_eq!(json["bgp"]["neighbors"][0]["addr"], "10.0.0.0");
    assert_eq!(json["bgp"]["neighbors"][0]["peer"]["remote_as"], 65100);
}
