//! `interface` sections: names, ranges, every sub-command and its `no` form, and their errors.

mod common;

use std::net::{Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use common::{clean, errors, ok, one_error, summary, warnings};
use railyard_config::{Bind, Interface, InterfaceName, Ipv4Prefix, RxHandover, DEFAULT_MTU};

fn names(p: &railyard_config::Parsed) -> Vec<String> {
    p.config
        .interfaces
        .iter()
        .map(|i| i.name.to_string())
        .collect()
}

/// Parse one routed interface section with `body` and return it.
fn iface(body: &str) -> Interface {
    let p = clean(&format!("interface Ethernet1/1\n  no switchport\n{body}"));
    p.config.interfaces[0].clone()
}

fn v4(s: &str) -> Ipv4Prefix {
    s.parse().unwrap()
}

#[test]
fn every_alias_names_the_same_interface() {
    let p = clean("interface Ethernet1/1\ninterface ethernet1/1\ninterface eth1/1\ninterface e1/1\ninterface Eth1/1\ninterface ethernet 1/1\nint e1/1\n");
    assert_eq!(names(&p), ["Ethernet1/1"]);
    assert_eq!(p.config.interfaces[0].line, 1);
    for alias in ["Ethernet1/1", "eth1/1", "e1/1"] {
        assert!(p.config.interface(alias).is_some(), "{alias}");
    }
}

#[test]
fn ranges_lists_and_breakouts() {
    let p = clean("interface Ethernet1/1-4, Ethernet1/8\n  mtu 9216\n");
    assert_eq!(
        names(&p),
        [
            "Ethernet1/1",
            "Ethernet1/2",
            "Ethernet1/3",
            "Ethernet1/4",
            "Ethernet1/8"
        ]
    );
    assert!(p
        .config
        .interfaces
        .iter()
        .all(|i| i.mtu == 9216 && i.line == 1));

    assert_eq!(
        names(&clean("interface e1/1 - 4\n")),
        ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3", "Ethernet1/4"]
    );
    assert_eq!(
        names(&clean("interface e1/2,e1/1,e1/2\n")),
        ["Ethernet1/2", "Ethernet1/1"]
    );
    let p = clean("interface Ethernet1/49/1-2\n  speed 100000\n");
    assert_eq!(names(&p), ["Ethernet1/49/1", "Ethernet1/49/2"]);
    assert_eq!(
        p.config.interfaces[1].name,
        InterfaceName::breakout(1, 49, 2)
    );
}

#[test]
fn interfaces_keep_the_order_of_first_appearance_and_merge_when_reopened() {
    let p = clean(
        "interface e1/2\n  mtu 9000\ninterface e1/1\ninterface Ethernet1/2\n  description uplink\n",
    );
    assert_eq!(names(&p), ["Ethernet1/2", "Ethernet1/1"]);
    let e12 = &p.config.interfaces[0];
    assert_eq!(
        (e12.mtu, e12.description.as_deref(), e12.line),
        (9000, Some("uplink"), 1)
    );
    assert_eq!(p.config.interfaces[1].line, 3);
}

#[test]
fn defaults() {
    let i = &clean("interface e1/1\n").config.interfaces[0];
    assert!(!i.routed);
    assert!(!i.shutdown, "lab ports default to up");
    assert_eq!(i.mtu, DEFAULT_MTU);
    assert_eq!(i.mtu, 1500);
    assert_eq!(
        (&i.description, &i.mac, &i.speed_mbps, &i.bind),
        (&None, &None, &None, &None)
    );
    assert!(i.ipv4.is_empty() && i.ipv6.is_empty() && i.arp.is_empty() && i.nd.is_empty());
}

#[test]
fn switchport_and_shutdown() {
    assert!(iface("").routed);
    assert!(!iface("  switchport\n").routed);
    assert!(iface("  shutdown\n").shutdown);
    assert!(!iface("  shutdown\n  no shutdown\n").shutdown);
    assert!(iface("  no shut\n  shut\n").shutdown);
    let d = one_error("interface e1/1\n  shutdown now\n");
    assert_eq!(
        summary(&d),
        (2, 12, "unexpected `now`", Some("usage: shutdown"))
    );
    let d = one_error("interface e1/1\n  no switchport 1\n");
    assert_eq!((d.line, d.col), (2, 17));
}

#[test]
fn description_keeps_the_rest_of_the_line() {
    let i = iface("  description  to spine-1  Eth1/49 !important   \n");
    assert_eq!(
        i.description.as_deref(),
        Some("to spine-1  Eth1/49 !important")
    );
    assert_eq!(
        iface("  description x\n  no description\n").description,
        None
    );
    let d = one_error("interface e1/1\n  description\n");
    assert_eq!(
        summary(&d),
        (
            2,
            15,
            "missing description text",
            Some("usage: description TEXT")
        )
    );
    let long = "x".repeat(255);
    let d = one_error(&format!("interface e1/1\n  description {long}\n"));
    assert_eq!(
        summary(&d),
        (
            2,
            15,
            "description is 255 characters long",
            Some("NX-OS allows at most 254")
        )
    );
}

#[test]
fn ipv4_addresses() {
    assert_eq!(
        iface("  ip address 10.0.0.1/24\n").ipv4,
        [v4("10.0.0.1/24")]
    );
    assert_eq!(
        iface("  ip address 10.0.0.1 255.255.255.0\n").ipv4,
        [v4("10.0.0.1/24")]
    );
    assert_eq!(
        iface("  ip address 10.0.0.0/31\n").ipv4,
        [v4("10.0.0.0/31")]
    );
    assert_eq!(
        iface("  ip address 10.0.0.1/32\n").ipv4,
        [v4("10.0.0.1/32")]
    );
    let i = iface("  ip address 10.0.0.1/24\n  ip address 10.0.1.1/24 secondary\n  ip address 10.0.2.1 255.255.255.0 secondary\n");
    assert_eq!(
        i.ipv4,
        [v4("10.0.0.1/24"), v4("10.0.1.1/24"), v4("10.0.2.1/24")]
    );
    assert_eq!(i.primary_ipv4(), Some(&v4("10.0.0.1/24")));
    // A second address without `secondary` replaces the primary.
    let i = iface(
        "  ip address 10.0.0.1/24\n  ip address 10.0.1.1/24 secondary\n  ip address 10.0.9.1/24\n",
    );
    assert_eq!(i.ipv4, [v4("10.0.9.1/24"), v4("10.0.1.1/24")]);
    // Re-configuring the same address changes its length.
    assert_eq!(
        iface("  ip address 10.0.0.1/24\n  ip address 10.0.0.1/16\n").ipv4,
        [v4("10.0.0.1/16")]
    );
}

#[test]
fn no_ip_address() {
    let body = "  ip address 10.0.0.1/24\n  ip address 10.0.1.1/24 secondary\n  ip address 10.0.2.1/24 secondary\n";
    assert!(iface(&format!("{body}  no ip address\n")).ipv4.is_empty());
    assert_eq!(
        iface(&format!("{body}  no ip address 10.0.1.1/24 secondary\n")).ipv4,
        [v4("10.0.0.1/24"), v4("10.0.2.1/24")]
    );
    assert_eq!(
        iface(&format!("{body}  no ip address 10.0.0.1 255.255.255.0\n")).ipv4,
        [v4("10.0.1.1/24"), v4("10.0.2.1/24")]
    );
}

#[test]
fn ipv4_address_errors() {
    let at = |body: &str| {
        let d = one_error(&format!("interface e1/1\n  no switchport\n{body}\n"));
        (d.line, d.col, d.message, d.hint)
    };
    assert_eq!(
        at("  ip address 10.0.0.1/33"),
        (
            3,
            14,
            "invalid IPv4 prefix length 33".into(),
            Some("prefix length must be 0-32".into())
        )
    );
    assert_eq!(
        at("  ip address 10.0.0.1"),
        (
            3,
            14,
            "`10.0.0.1` has no prefix length".into(),
            Some("write 10.0.0.1/LEN or 10.0.0.1 M.M.M.M, e.g. 10.0.0.1/24".into())
        )
    );
    assert_eq!(
        at("  ip address 10.0.0.256/24").2,
        "invalid IPv4 address `10.0.0.256`"
    );
    assert_eq!(
        at("  ip address 10.0.0.1 255.0.255.0"),
        (
            3,
            23,
            "invalid netmask `255.0.255.0`".into(),
            Some("a netmask's one bits must be contiguous, e.g. 255.255.255.0".into())
        )
    );
    assert_eq!(
        at("  ip address 10.0.0.0/24"),
        (
            3,
            14,
            "10.0.0.0/24 is the network address of its subnet".into(),
            Some("use a host address such as 10.0.0.1/24".into())
        )
    );
    assert_eq!(
        at("  ip address 10.0.0.255/24").2,
        "10.0.0.255/24 is the broadcast address of its subnet"
    );
    assert_eq!(
        at("  ip address 10.0.0.1/0").2,
        "prefix length 0 is not valid for an interface address (10.0.0.1/0)"
    );
    assert_eq!(
        at("  ip address 224.0.0.5/24").2,
        "224.0.0.5 is not a unicast host address"
    );
    assert_eq!(
        at("  ip address 127.0.0.1/8").2,
        "127.0.0.1 is not a unicast host address"
    );
    assert_eq!(
        at("  ip address 10.0.1.1/24 secondary"),
        (
            3,
            26,
            "Ethernet1/1 has no primary address to add a secondary to".into(),
            Some("configure `ip address 10.0.1.1/24` without `secondary` first".into())
        )
    );
    assert_eq!(
        at("  ip address 10.0.0.1/24 primary"),
        (
            3,
            26,
            "unexpected `primary`".into(),
            Some("usage: ip address A.B.C.D/LEN | A.B.C.D M.M.M.M [secondary]".into())
        )
    );
    assert_eq!(at("  ip address").1, 14);
    let d = one_error("interface e1/1\n  ip address 10.0.0.1/24\n  ip address 10.0.0.2/24 secondary\n  ip address 10.0.0.2/24\n");
    assert_eq!(
        summary(&d),
        (
            4,
            14,
            "10.0.0.2 is already the secondary address of Ethernet1/1",
            Some("remove it first with `no ip address 10.0.0.2/24`")
        )
    );
    let d =
        one_error("interface e1/1\n  ip address 10.0.0.1/24\n  ip address 10.0.0.1/24 secondary\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (
            3,
            14,
            "10.0.0.1 is already the primary address of Ethernet1/1"
        )
    );
}

#[test]
fn the_documented_error_renders_exactly() {
    let text = format!(
        "{}interface Ethernet1/1\n  ip address 10.0.0.1/33\n",
        "!\n".repeat(10)
    );
    let d = one_error(&text);
    assert_eq!(
        d.to_string(),
        "lab.conf:12:14: error: invalid IPv4 prefix length 33\n\
         \x20  12 |   ip address 10.0.0.1/33\n\
         \x20     |              ^^^^^^^^^^^\n\
         \x20  = hint: prefix length must be 0-32"
    );
}

#[test]
fn ipv6_addresses() {
    let i = iface("  ipv6 address 2001:db8::1/64\n  ipv6 address 2001:db8:1::1/64\n  ipv6 address fe80::1/64\n");
    let got: Vec<String> = i.ipv6.iter().map(|p| p.to_string()).collect();
    assert_eq!(got, ["2001:db8::1/64", "2001:db8:1::1/64", "fe80::1/64"]);
    let i = iface("  ipv6 address 2001:db8::1/64\n  ipv6 address 2001:db8::1/127\n");
    assert_eq!(i.ipv6.len(), 1);
    assert_eq!(i.ipv6[0].len, 127);
    let i = iface("  ipv6 address 2001:db8::1/64\n  ipv6 address 2001:db8:1::1/64\n  no ipv6 address 2001:db8::1/64\n");
    assert_eq!(i.ipv6[0].addr, "2001:db8:1::1".parse::<Ipv6Addr>().unwrap());
    assert!(iface("  ipv6 address 2001:db8::1/64\n  no ipv6 address\n")
        .ipv6
        .is_empty());

    let at = |body: &str| {
        let d = one_error(&format!("interface e1/1\n{body}\n"));
        (d.line, d.col, d.message, d.hint)
    };
    assert_eq!(
        at("  ipv6 address 2001:db8::1/129"),
        (
            2,
            16,
            "invalid IPv6 prefix length 129".into(),
            Some("prefix length must be 0-128".into())
        )
    );
    assert_eq!(
        at("  ipv6 address 2001:db8::1").2,
        "`2001:db8::1` has no prefix length"
    );
    assert_eq!(
        at("  ipv6 address 2001:db8:::1/64").2,
        "invalid IPv6 address `2001:db8:::1`"
    );
    assert_eq!(
        at("  ipv6 address ff02::1/64").2,
        "ff02::1 is not a unicast host address"
    );
    assert_eq!(
        at("  ipv6 address 2001:db8::1/0").2,
        "prefix length 0 is not valid for an interface address (2001:db8::1/0)"
    );
}

#[test]
fn mtu() {
    assert_eq!(iface("  mtu 9216\n").mtu, 9216);
    assert_eq!(iface("  mtu 576\n").mtu, 576);
    assert_eq!(iface("  mtu 9216\n  no mtu\n").mtu, 1500);
    let at = |body: &str| {
        let d = one_error(&format!("interface e1/1\n{body}\n"));
        (d.line, d.col, d.message, d.hint)
    };
    let range = Some("MTU must be 576-9216".to_string());
    assert_eq!(
        at("  mtu 9217"),
        (2, 7, "MTU 9217 is out of range".into(), range.clone())
    );
    assert_eq!(
        at("  mtu 575"),
        (2, 7, "MTU 575 is out of range".into(), range.clone())
    );
    assert_eq!(
        at("  mtu 100000"),
        (2, 7, "MTU 100000 is out of range".into(), range.clone())
    );
    assert_eq!(
        at("  mtu jumbo"),
        (2, 7, "invalid MTU `jumbo`".into(), range)
    );
    assert_eq!(at("  mtu").2, "missing MTU");
}

#[test]
fn mac_address() {
    let want = Some([0x00, 0x11, 0x22, 0x33, 0x44, 0x55]);
    assert_eq!(iface("  mac-address 00:11:22:33:44:55\n").mac, want);
    assert_eq!(iface("  mac-address 0011.2233.4455\n").mac, want);
    assert_eq!(
        iface("  mac-address 0011.2233.4455\n  no mac-address\n").mac,
        None
    );
    let d = one_error("interface e1/1\n  mac-address 0011.2233\n");
    assert_eq!(
        summary(&d),
        (
            2,
            15,
            "invalid MAC address `0011.2233`",
            Some("write a MAC as 0011.2233.4455 or 00:11:22:33:44:55")
        )
    );
    let d = one_error("interface e1/1\n  mac-address 0100.5e00.0001\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (15, "an interface MAC address must be unicast")
    );
    let d = one_error("interface e1/1\n  mac-address 0000.0000.0000\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (15, "0000.0000.0000 is not a usable MAC address")
    );
}

#[test]
fn speed() {
    for s in [1000, 10000, 25000, 40000, 100000, 400000] {
        assert_eq!(iface(&format!("  speed {s}\n")).speed_mbps, Some(s));
    }
    assert_eq!(iface("  speed 100000\n  speed auto\n").speed_mbps, None);
    assert_eq!(iface("  speed 100000\n  no speed\n").speed_mbps, None);
    let d = one_error("interface e1/1\n  speed 12345\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (2, 9, "unsupported speed 12345")
    );
    assert!(d
        .hint
        .unwrap()
        .starts_with("speed in Mb/s: 10, 100, 1000, 2500"));
    let d = one_error("interface e1/1\n  speed fast\n");
    assert_eq!((d.col, d.message.as_str()), (9, "invalid speed `fast`"));
}

#[test]
fn static_arp_and_neighbours() {
    let i = iface(
        "  ip address 10.0.0.1/24\n  ip arp 10.0.0.2 0011.2233.4455\n  ip arp 10.0.0.3 00:11:22:33:44:66\n  ip arp 10.0.0.2 0011.2233.4477\n",
    );
    assert_eq!(
        i.arp,
        [
            (
                Ipv4Addr::new(10, 0, 0, 2),
                [0, 0x11, 0x22, 0x33, 0x44, 0x77]
            ),
            (
                Ipv4Addr::new(10, 0, 0, 3),
                [0, 0x11, 0x22, 0x33, 0x44, 0x66]
            ),
        ]
    );
    let i = iface("  ip address 10.0.0.1/24\n  ip arp 10.0.0.2 0011.2233.4455\n  ip arp 10.0.0.3 0011.2233.4466\n  no ip arp 10.0.0.2\n  no ip arp 10.0.0.3 0011.2233.4466\n");
    assert!(i.arp.is_empty());

    let i = iface("  ipv6 address 2001:db8::1/64\n  ipv6 neighbor 2001:db8::2 0011.2233.4455\n  ipv6 neighbor fe80::2 0011.2233.4466\n");
    assert_eq!(i.nd.len(), 2);
    assert_eq!(
        i.nd[0],
        (
            "2001:db8::2".parse().unwrap(),
            [0, 0x11, 0x22, 0x33, 0x44, 0x55]
        )
    );
    let i = iface("  ipv6 address 2001:db8::1/64\n  ipv6 neighbor 2001:db8::2 0011.2233.4455\n  no ipv6 neighbor 2001:db8::2\n");
    assert!(i.nd.is_empty());

    let at = |body: &str| {
        let d = one_error(&format!("interface e1/1\n{body}\n"));
        (d.line, d.col, d.message)
    };
    assert_eq!(
        at("  ip arp 10.0.0.300 0011.2233.4455"),
        (2, 10, "invalid IPv4 address `10.0.0.300`".into())
    );
    assert_eq!(
        at("  ip arp 10.0.0.2"),
        (2, 19, "missing MAC address".into())
    );
    assert_eq!(
        at("  ip arp 10.0.0.2 0011.2233"),
        (2, 19, "invalid MAC address `0011.2233`".into())
    );
    assert_eq!(
        at("  ip arp 10.0.0.2 ffff.ffff.ffff"),
        (2, 19, "ffff.ffff.ffff is not a usable MAC address".into())
    );
    assert_eq!(
        at("  ip arp 255.255.255.255 0011.2233.4455"),
        (
            2,
            10,
            "255.255.255.255 cannot be a neighbour's address".into()
        )
    );
    assert_eq!(
        at("  ip arp 10.0.0.2 0011.2233.4455 extra"),
        (2, 34, "unexpected `extra`".into())
    );
    assert_eq!(
        at("  ipv6 neighbor 2001:db8::zz 0011.2233.4455"),
        (2, 17, "invalid IPv6 address `2001:db8::zz`".into())
    );
    assert_eq!(
        at("  ipv6 neighbor ff02::1 0011.2233.4455"),
        (2, 17, "ff02::1 cannot be a neighbour's address".into())
    );
}

#[test]
fn bind_every_kind() {
    let cases = [
        ("af-packet veth0", Bind::AfPacket("veth0".into())),
        ("tap rl-tap0", Bind::Tap("rl-tap0".into())),
        (
            "pcap /tmp/in.pcap",
            Bind::Pcap(PathBuf::from("/tmp/in.pcap")),
        ),
        ("ring r0", Bind::Ring("r0".into())),
        ("dpdk 0", Bind::Dpdk("0".into())),
        ("dpdk net_ring0", Bind::Dpdk("net_ring0".into())),
        ("af-xdp ens1f0", Bind::AfXdp("ens1f0".into())),
        ("AF-PACKET veth0", Bind::AfPacket("veth0".into())),
    ];
    for (args, want) in cases {
        assert_eq!(
            iface(&format!("  bind {args}\n")).bind,
            Some(want),
            "{args}"
        );
    }
    assert_eq!(iface("  bind ring r0\n  no bind\n").bind, None);
    assert_eq!(
        iface("  bind ring r0\n  bind tap t0\n").bind,
        Some(Bind::Tap("t0".into()))
    );
}

#[test]
fn bind_errors() {
    let at = |body: &str| {
        let d = one_error(&format!("interface e1/1\n{body}\n"));
        (d.line, d.col, d.message, d.hint)
    };
    assert_eq!(
        at("  bind serial ttyS0"),
        (
            2,
            8,
            "unknown bind kind `serial`".into(),
            Some("bind kinds are af-packet, tap, pcap, ring, dpdk, af-xdp".into())
        )
    );
    let (line, col, message, hint) = at("  bind af-packet");
    assert_eq!(
        (line, col, message.as_str()),
        (2, 18, "missing Linux interface name")
    );
    assert!(hint.unwrap().starts_with(
        "usage: bind af-packet IFNAME [ring MIB] [receive frames|blocks] | tap IFNAME"
    ));
    assert_eq!(at("  bind pcap").2, "missing pcap file");
    assert_eq!(at("  bind").2, "missing bind kind");
    assert_eq!(
        at("  bind tap a-very-long-name0"),
        (
            2,
            12,
            "Linux interface name `a-very-long-name0` is 17 bytes long".into(),
            Some("Linux interface names are at most 15 bytes".into())
        )
    );
    assert_eq!(at("  bind ring r0 r1").1, 16);
    let (line, col, message, hint) = at("  bind tap t0 ring 64");
    assert_eq!((line, col, message.as_str()), (2, 15, "unexpected `ring`"));
    assert!(hint
        .unwrap()
        .contains("only `bind af-packet IFNAME [ring MIB] [receive frames|blocks]`"));
    assert_eq!(
        at("  bind af-packet veth0 ring 0"),
        (
            2,
            29,
            "receive ring size 0 MiB is out of range".into(),
            Some("the receive ring is 1 to 1024 MiB".into())
        )
    );
    assert_eq!(
        at("  bind af-packet veth0 ring 2048").2,
        "receive ring size 2048 MiB is out of range"
    );
    assert_eq!(
        at("  bind af-packet veth0 ring 64M").2,
        "invalid receive ring size `64M`"
    );
    assert_eq!(
        at("  bind af-packet veth0 ring").2,
        "missing receive ring size in MiB"
    );
    assert_eq!(at("  bind af-packet veth0 rings 64").1, 24);
    let (_, col, message, hint) = at("  bind af-packet veth0 receive packets");
    assert_eq!(
        (col, message.as_str()),
        (32, "unknown receive hand-over `packets`")
    );
    assert!(hint.unwrap().contains("frames"));
    let (_, col, message, _) = at("  bind af-packet veth0 ring 8 ring 16");
    assert_eq!((col, message.as_str()), (31, "`ring` given twice"));
}

#[test]
fn an_af_packet_binding_takes_a_receive_hand_over_that_round_trips() {
    let i = iface("  bind af-packet veth0 receive blocks ring 64\n");
    assert_eq!(i.rx_handover, Some(RxHandover::Blocks));
    assert_eq!(i.rx_ring_mib, Some(64));
    assert_eq!(
        iface("  bind af-packet veth0 receive frames\n").rx_handover,
        Some(RxHandover::Frames)
    );
    assert_eq!(iface("  bind af-packet veth0\n").rx_handover, None);
    assert_eq!(
        iface("  bind af-packet veth0 receive blocks\n  no bind\n").rx_handover,
        None
    );
    let text = "interface Ethernet1/1\n  no switchport\n  bind af-packet veth0 receive blocks\n";
    let printed = clean(text).config.to_string();
    assert!(
        printed.contains("  bind af-packet veth0 receive blocks\n"),
        "{printed}"
    );
    assert_eq!(clean(&printed).config, clean(text).config);
}

#[test]
fn an_af_xdp_binding_takes_a_ring_size_and_nothing_else() {
    let i = iface("  bind af-xdp veth0 ring 64\n");
    assert_eq!(i.bind, Some(Bind::AfXdp("veth0".into())));
    assert_eq!(i.rx_ring_mib, Some(64));
    let text = "interface Ethernet1/1\n  no switchport\n  bind af-xdp veth0 ring 64\n";
    let printed = clean(text).config.to_string();
    assert!(
        printed.contains("  bind af-xdp veth0 ring 64\n"),
        "{printed}"
    );
    assert_eq!(clean(&printed).config, clean(text).config);
    let d = one_error("interface e1/1\n  bind af-xdp veth0 receive frames\n");
    let (col, message, hint) = (d.col, d.message, d.hint);
    assert_eq!(
        (col, message.as_str()),
        (21, "unknown af-xdp option `receive`")
    );
    assert!(hint.unwrap().contains("ring"));
}

#[test]
fn an_af_packet_binding_takes_a_receive_ring_size_that_round_trips() {
    let i = iface("  bind af-packet veth0 ring 128\n");
    assert_eq!(i.bind, Some(Bind::AfPacket("veth0".into())));
    assert_eq!(i.rx_ring_mib, Some(128));
    assert_eq!(iface("  bind af-packet veth0\n").rx_ring_mib, None);
    // A later bind line replaces the whole binding, ring included.
    assert_eq!(
        iface("  bind af-packet veth0 ring 128\n  bind af-packet veth1\n").rx_ring_mib,
        None
    );
    assert_eq!(
        iface("  bind af-packet veth0 ring 128\n  no bind\n").rx_ring_mib,
        None
    );
    let text = "interface Ethernet1/1\n  no switchport\n  bind af-packet veth0 ring 128\n";
    let printed = clean(text).config.to_string();
    assert!(
        printed.contains("  bind af-packet veth0 ring 128\n"),
        "{printed}"
    );
    assert_eq!(clean(&printed).config, clean(text).config);
}

#[test]
fn unknown_and_ambiguous_interface_commands_are_errors() {
    let d = one_error("interface e1/1\n  ip adress 10.0.0.1/24\n");
    assert_eq!(
        summary(&d),
        (
            2,
            6,
            "unknown interface command `ip adress`",
            Some("did you mean `ip address`?")
        )
    );
    let d = one_error("interface e1/1\n  mtuu 9216\n");
    assert_eq!(
        summary(&d),
        (
            2,
            3,
            "unknown interface command `mtuu`",
            Some("did you mean `mtu`?")
        )
    );
    let d = one_error("interface e1/1\n  frobnicate\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (2, 3, "unknown interface command `frobnicate`")
    );
    assert!(d
        .hint
        .unwrap()
        .starts_with("interface commands are: switchport, shutdown, description, ip address"));
    let d = one_error("interface e1/1\n  ip a 10.0.0.1/24\n");
    assert_eq!(
        summary(&d),
        (
            2,
            6,
            "ambiguous command word `a`",
            Some("it could mean access-group, address, arp")
        )
    );
}

#[test]
fn interface_name_errors() {
    let at = |line: &str| {
        let d = one_error(&format!("{line}\n  mtu 9216\n"));
        (d.line, d.col, d.message)
    };
    assert_eq!(
        at("interface Ethernet1/0"),
        (
            1,
            11,
            "invalid interface `Ethernet1/0`: numbers start at 1".into()
        )
    );
    assert_eq!(
        at("interface Ethernet1/4-2"),
        (
            1,
            11,
            "range `Ethernet1/4-2` ends (2) before it starts (4)".into()
        )
    );
    assert_eq!(
        at("interface e1/1, e1/x"),
        (1, 17, "invalid interface `e1/x`".into())
    );
    assert_eq!(
        at("interface e1/1,,e1/2"),
        (1, 16, "empty name in interface list".into())
    );
    assert_eq!(
        at("interface fabric1/1"),
        (1, 11, "unknown interface type `fabric`".into())
    );
    assert_eq!(at("interface"), (1, 11, "missing interface name".into()));
    assert_eq!(
        at("interface e1/1, loopback0"),
        (
            1,
            17,
            "cannot configure Ethernet and loopback interfaces in one `interface` command".into()
        )
    );
}

#[test]
fn a_range_applies_every_command_to_every_member() {
    let p = ok("interface e1/1-3\n  no switchport\n  mtu 9216\n  shutdown\n  speed 100000\n");
    for i in &p.config.interfaces {
        assert!(i.routed && i.shutdown);
        assert_eq!((i.mtu, i.speed_mbps), (9216, Some(100000)));
    }
    assert_eq!(p.config.interfaces.len(), 3);
    assert!(warnings(&p).is_empty());
}

#[test]
fn several_errors_in_one_section_are_all_reported() {
    let es =
        errors("interface e1/1\n  mtu 1\n  speed 7\n  ip address 1.2.3.4/40\n  description ok\n");
    let at: Vec<(usize, usize)> = es.iter().map(|d| (d.line, d.col)).collect();
    assert_eq!(at, [(2, 7), (3, 9), (4, 14)]);
}

#[test]
fn vrf_member_is_kept_printed_and_checked() {
    let i = iface("  vrf member TENANT-1\n  ip address 10.9.0.1/24\n");
    assert_eq!(i.vrf.as_deref(), Some("TENANT-1"));
    assert!(i.to_string().contains("\n  vrf member TENANT-1\n"));
    // Printed, it reads back the same.
    let again = iface(&i.to_string().replacen("interface Ethernet1/1\n", "", 1));
    assert_eq!(again.vrf, i.vrf);
    // `default` is the default VRF; `no vrf member` returns to it.
    assert_eq!(iface("  vrf member default\n").vrf, None);
    assert_eq!(iface("  vrf member A\n  no vrf member A\n").vrf, None);
    let d = one_error("interface e1/1\n  vrf member bad/name\n");
    assert_eq!(
        summary(&d),
        (
            2,
            14,
            "invalid VRF name `bad/name`",
            Some("names are up to 32 letters, digits, `-`, `_`, `.` or `:`")
        )
    );
    assert_eq!(
        summary(&one_error("interface e1/1\n  vrf member\n")).2,
        "missing VRF name"
    );
}
