//! Whole-model checks run after parsing.

mod common;

use common::{errors, ok, one_error, summary, warnings};

#[test]
fn the_same_address_on_two_interfaces_is_an_error() {
    let d = one_error("interface e1/1\n  no switchport\n  ip address 10.0.0.1/24\ninterface e1/2\n  no switchport\n  ip address 10.0.0.1/30\n");
    assert_eq!(
        summary(&d),
        (
            6,
            14,
            "10.0.0.1 on Ethernet1/2 is already assigned to Ethernet1/1",
            Some("an address belongs to one interface (first configured on line 3)")
        )
    );
    let d = one_error("interface e1/1-2\n  no switchport\n  ipv6 address 2001:db8::1/64\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (
            3,
            16,
            "2001:db8::1 on Ethernet1/2 is already assigned to Ethernet1/1"
        )
    );
}

#[test]
fn an_address_on_a_range_collides_on_every_extra_member() {
    let es = errors("interface Ethernet1/1-3\n  no switchport\n  ip address 10.0.0.1/24\n");
    let got: Vec<&str> = es.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        got,
        [
            "10.0.0.1 on Ethernet1/2 is already assigned to Ethernet1/1",
            "10.0.0.1 on Ethernet1/3 is already assigned to Ethernet1/1"
        ]
    );
    assert!(es.iter().all(|d| (d.line, d.col) == (3, 14)));
}

#[test]
fn link_local_ipv6_may_repeat_across_interfaces() {
    let p = ok("interface e1/1-2\n  no switchport\n  ipv6 address fe80::1/64\n");
    assert!(p.warnings.is_empty());
}

#[test]
fn overlapping_subnets_on_different_interfaces_warn() {
    let p = ok("interface e1/1\n  no switchport\n  ip address 10.0.0.1/16\ninterface e1/2\n  no switchport\n  ip address 10.0.5.1/24\n  ipv6 address 2001:db8::1/64\ninterface e1/3\n  no switchport\n  ipv6 address 2001:db8::2/120\n");
    assert_eq!(
        warnings(&p),
        [
            (
                6,
                14,
                "10.0.5.0/24 on Ethernet1/2 overlaps 10.0.0.0/16 on Ethernet1/1".to_string()
            ),
            (
                10,
                16,
                "2001:db8::/120 on Ethernet1/3 overlaps 2001:db8::/64 on Ethernet1/2".to_string()
            ),
        ]
    );
}

#[test]
fn addresses_on_a_layer2_port_warn() {
    let p = ok(
        "interface e1/1\n  ip address 10.0.0.1/24\ninterface e1/2\n  ipv6 address 2001:db8::1/64\n",
    );
    assert_eq!(
        warnings(&p),
        [
            (
                2,
                14,
                "Ethernet1/1 has IP addresses but is a Layer 2 port (switchport)".to_string()
            ),
            (
                4,
                16,
                "Ethernet1/2 has IP addresses but is a Layer 2 port (switchport)".to_string()
            ),
        ]
    );
    assert_eq!(
        p.warnings[0].hint.as_deref(),
        Some("add `no switchport` to make it a routed port")
    );
}

#[test]
fn static_neighbours_outside_the_interface_subnets_warn() {
    let p = ok("interface e1/1\n  no switchport\n  ip address 10.0.0.1/24\n  ip arp 10.0.0.9 0011.2233.4455\n  ip arp 10.0.1.9 0011.2233.4455\n  ipv6 neighbor 2001:db8::9 0011.2233.4455\n  ipv6 neighbor fe80::9 0011.2233.4455\n");
    assert_eq!(
        warnings(&p),
        [
            (
                5,
                10,
                "static ARP entry 10.0.1.9 is outside every subnet of Ethernet1/1".to_string()
            ),
            (
                6,
                17,
                "static neighbour 2001:db8::9 is outside every subnet of Ethernet1/1".to_string()
            ),
        ]
    );
    assert_eq!(
        p.warnings[0].hint.as_deref(),
        Some("subnets of Ethernet1/1: 10.0.0.0/24")
    );
    assert_eq!(
        p.warnings[1].hint.as_deref(),
        Some("Ethernet1/1 has no IPv6 address")
    );
}

#[test]
fn unresolvable_next_hops_and_unconfigured_interfaces_warn() {
    let p = ok("interface e1/1\n  no switchport\n  ip address 10.0.0.1/31\nip route 0.0.0.0/0 10.0.0.0\nip route 10.1.0.0/16 10.9.9.9\nip route 10.2.0.0/16 Ethernet1/7 10.9.9.9\nip route 10.3.0.0/16 e1/8\nipv6 route ::/0 2001:db8::1\n");
    assert_eq!(
        warnings(&p),
        [
            (
                5,
                22,
                "next hop 10.9.9.9 of 10.1.0.0/16 is not in any connected subnet".to_string()
            ),
            (
                6,
                22,
                "route 10.2.0.0/16 goes through Ethernet1/7, which is not configured".to_string()
            ),
            (
                7,
                22,
                "route 10.3.0.0/16 goes through Ethernet1/8, which is not configured".to_string()
            ),
            (
                8,
                17,
                "next hop 2001:db8::1 of ::/0 is not in any connected subnet".to_string()
            ),
        ]
    );
    assert_eq!(
        p.warnings[0].hint.as_deref(),
        Some("the route is unresolvable until an interface address covers 10.9.9.9")
    );
    assert_eq!(
        p.warnings[1].hint.as_deref(),
        Some("add an `interface Ethernet1/7` section")
    );
    // All routes are kept.
    assert_eq!(p.config.routes.len(), 5);
}

#[test]
fn two_interfaces_on_one_backend_target_is_an_error() {
    let d = one_error(
        "interface e1/1\n  bind af-packet veth0\ninterface e1/2\n  bind af-packet veth0\n",
    );
    assert_eq!(
        summary(&d),
        (
            4,
            8,
            "cannot bind Ethernet1/2 to kernel interface veth0: already bound to Ethernet1/1",
            Some("a backend target feeds one interface (Ethernet1/1 bound it on line 2)")
        )
    );
    // af-packet, af-xdp and tap all claim the kernel interface name.
    let d = one_error("interface e1/1\n  bind tap v0\ninterface e1/2\n  bind af-xdp v0\n");
    assert_eq!(
        d.message,
        "cannot bind Ethernet1/2 to kernel interface v0: already bound to Ethernet1/1"
    );
    let d = one_error("interface e1/1\n  bind pcap in.pcap\ninterface e1/2\n  bind pcap in.pcap\n");
    assert_eq!(
        d.message,
        "cannot bind Ethernet1/2 to pcap file in.pcap: already bound to Ethernet1/1"
    );
    let es = errors("interface e1/1-3\n  bind ring r0\n");
    assert_eq!(es.len(), 2);
    assert_eq!(
        es[1].message,
        "cannot bind Ethernet1/3 to ring r0: already bound to Ethernet1/1"
    );
    // The same name in different namespaces is fine.
    let p = ok("interface e1/1\n  bind ring x0\ninterface e1/2\n  bind tap x0\ninterface e1/3\n  bind dpdk x0\ninterface e1/4\n  bind pcap x0\n");
    assert!(p.warnings.is_empty());
    // Rebinding an interface frees its old target.
    ok("interface e1/1\n  bind ring r0\n  bind ring r1\ninterface e1/2\n  bind ring r0\n");
}

#[test]
fn mtu_range_is_checked_after_parsing() {
    let d = one_error("interface e1/1\n  mtu 9000\n  mtu 9300\n");
    assert_eq!(
        summary(&d),
        (
            3,
            7,
            "MTU 9300 is out of range",
            Some("MTU must be 576-9216")
        )
    );
    // A later valid value fixes it.
    ok("interface e1/1\n  mtu 9300\n  mtu 9216\n");
    ok("interface e1/1\n  mtu 9300\n  no mtu\n");
}
