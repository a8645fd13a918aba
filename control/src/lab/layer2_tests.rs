//! Unit tests of Layer-2 topologies: the `vlan` statement and the `vlan`,
//! `trunk` and `channel` link options, their diagnostics, host addressing,
//! routes, and rendered configurations that compile into switchports,
//! SVIs and port-channels.

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use railyard_dataplane::model::{Logical, PortL2, SwitchModel};

use super::render::{render_all, render_switch};
use super::routes::{host_commands, host_nics, switch_routes};
use super::topology::{parse_str, Ipv4Net, Topology};

fn shipped(name: &str) -> Topology {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/topologies")
        .join(format!("{name}.topo"));
    let text = std::fs::read_to_string(&path).expect("read topology");
    parse_str(&text, &path).unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)))
}

fn parse(text: &str) -> Topology {
    parse_str(text, Path::new("t.topo"))
        .unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)))
}

fn net(s: &str) -> Ipv4Net {
    s.parse().expect("prefix")
}

fn ip(s: &str) -> Ipv4Addr {
    s.parse().expect("address")
}

/// Every switch's configuration rendered, and each compiled: (switch,
/// text, model, warnings).
fn rendered(t: &Topology) -> Vec<(String, String, SwitchModel, Vec<String>)> {
    render_all(t)
        .unwrap_or_else(|e| panic!("{}: {e}", t.name))
        .into_iter()
        .map(|r| {
            let parsed = railyard_config::parse_str(&r.config, &r.switch, &Default::default())
                .unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)));
            let c = crate::compile::compile(&parsed.config)
                .unwrap_or_else(|d| panic!("{}", crate::format_diagnostics(&d)));
            assert!(!r.config.contains("{{"), "{}", r.config);
            (r.switch, r.config, c.model, c.warnings)
        })
        .collect()
}

fn port<'a>(m: &'a SwitchModel, name: &str) -> &'a railyard_dataplane::model::InterfaceModel {
    m.interfaces
        .iter()
        .find(|i| i.name == name)
        .unwrap_or_else(|| panic!("{} has no {name}", m.hostname))
}

/// Two leaves; VLAN 101's SVI on leaf1, carried to leaf2 by a LACP
/// port-channel trunk of two links; VLAN 102 on leaf1 only; leaf1 routes
/// to the spine over a routed link.
const TRUNKED: &str = "\
switch leaf1 role rail
switch leaf2 role rail
switch spine1 role spine
host h1
host h2
host h3
vlan 101 on leaf1 subnet 10.0.1.0/29 name RAIL-1
vlan 102 on leaf1 subnet 10.0.2.0/29
link h1:eth0 leaf1:Ethernet1/1 vlan 101
link h2:eth0 leaf2:Ethernet1/1 vlan 101 mtu 9216
link h1:eth1 leaf1:Ethernet1/2 vlan 102
link h3:eth0 spine1:Ethernet1/9 subnet 10.9.0.0/24
link leaf1:Ethernet1/31 leaf2:Ethernet1/31 trunk 101 channel 5 mtu 9216
link leaf2:Ethernet1/32 leaf1:Ethernet1/32 trunk 101 channel 5 mtu 9216
link leaf1:Ethernet1/49 spine1:Ethernet1/1 subnet 10.255.0.0/31
";

#[test]
fn multi_rail_puts_each_nic_in_its_rails_vlan_with_the_svi_as_gateway() {
    let t = shipped("multi-rail");
    assert_eq!((t.switches.len(), t.hosts.len(), t.links.len()), (1, 4, 8));
    assert_eq!(t.vlans.len(), 2);
    let v = &t.vlans[0];
    assert_eq!(
        (v.id, v.switch.as_str(), v.subnet, v.name.as_deref()),
        (101, "leaf1", net("10.0.1.0/28"), Some("RAIL-1"))
    );
    assert_eq!(v.gateway(), ip("10.0.1.1"));
    assert_eq!(v.switches, vec!["leaf1".to_string()]);
    // Hosts take .2, .3, … in file order; the switch end is the SVI.
    let l = &t.links[3];
    assert_eq!(
        (l.vlan, l.subnet, l.host_address),
        (Some(101), None, Some(ip("10.0.1.5")))
    );
    assert_eq!(t.addresses(l), Some((ip("10.0.1.5"), ip("10.0.1.1"))));
    let nics = host_nics(&t, "h2");
    assert_eq!(nics.len(), 2);
    assert_eq!(
        (nics[0].address, nics[0].subnet, nics[0].gateway),
        (ip("10.0.1.3"), net("10.0.1.0/28"), ip("10.0.1.1"))
    );
    assert_eq!(
        (nics[1].address, nics[1].gateway, nics[1].table),
        (ip("10.0.2.3"), ip("10.0.2.1"), 101)
    );
    assert!(
        nics.iter().all(|n| n.rail_routes.is_empty()),
        "both rails' subnets are connected: {nics:?}"
    );
    let cmds: Vec<String> = host_commands(&nics).iter().map(|c| c.join(" ")).collect();
    for want in [
        "addr add 10.0.1.3/28 dev eth0",
        "addr add 10.0.2.3/28 dev eth1",
        "route add default via 10.0.1.1 dev eth0 table 100",
        "route add default via 10.0.2.1 dev eth1 table 101",
        "rule add from 10.0.2.3 lookup 101",
    ] {
        assert!(cmds.contains(&want.to_string()), "{want}: {cmds:?}");
    }
    assert!(
        switch_routes(&t, "leaf1").is_empty(),
        "both VLANs are connected"
    );
}

#[test]
fn multi_rail_renders_access_ports_vlans_and_svis_that_compile() {
    let t = shipped("multi-rail");
    let all = rendered(&t);
    let (_, text, m, warnings) = &all[0];
    assert!(
        text.contains("lldp holdtime 20\nfeature interface-vlan\n!\nvlan 101\n  name RAIL-1\nvlan 102\n  name RAIL-2\n"),
        "{text}"
    );
    assert!(!text.contains("feature lacp"), "{text}");
    // The rail role's per-port block, QoS and all, on an access port: the
    // switchport lines instead of `no switchport`, no address.
    assert!(
        text.contains(
            "interface Ethernet1/5\n  description to h1 eth1\n  switchport\n  switchport mode access\n  \
             switchport access vlan 102\n  mtu 1500\n  speed 100000\n  priority-flow-control mode on\n  \
             service-policy type qos input QOS_CLASSIFICATION\n  bind af-packet e1-5\n  no shutdown\n"
        ),
        "{text}"
    );
    assert!(
        text.contains(
            "interface Vlan101\n  description gateway of VLAN 101\n  mtu 1500\n  ip address 10.0.1.1/28\n  no shutdown\n"
        ),
        "{text}"
    );
    assert!(!text.contains("ip route"), "{text}");
    for (n, vlan) in [
        ("Ethernet1/1", 101),
        ("Ethernet1/4", 101),
        ("Ethernet1/5", 102),
    ] {
        let p = port(m, n);
        assert_eq!(p.l2, Some(PortL2::access(vlan)), "{n}");
        assert!(p.ipv4.is_empty(), "{n}");
        assert_ne!(
            p.pfc.enabled_priorities, 0,
            "{n}: PFC applies to switchports"
        );
    }
    let svi = port(m, "Vlan102");
    assert_eq!(svi.logical, Some(Logical::Svi { vlan: 102 }));
    assert_eq!(svi.ipv4, vec![(ip("10.0.2.1"), 28)]);
    assert!(
        !warnings.iter().any(|w| w.contains("treating")),
        "{warnings:?}"
    );
}

#[test]
fn dual_rail_bundles_each_uplink_pair_into_a_routed_port_channel() {
    let t = shipped("dual-rail");
    assert_eq!((t.switches.len(), t.hosts.len(), t.links.len()), (3, 2, 12));
    let pcs = t.port_channels("spine1");
    assert_eq!(pcs.len(), 2);
    assert_eq!(
        (pcs[0].id, pcs[0].peer, pcs[0].name()),
        (1, "rail1", "port-channel1".into())
    );
    let members: Vec<&str> = pcs[1]
        .members
        .iter()
        .map(|(_, l, _)| l.port.as_str())
        .collect();
    assert_eq!(members, vec!["Ethernet1/3", "Ethernet1/4"]);
    // Every member has the port-channel's /31: the rail, written first,
    // takes the lower address.
    for l in t.links.iter().filter(|l| l.channel == Some(1)) {
        assert_eq!(t.addresses(l), Some((ip("10.255.1.0"), ip("10.255.1.1"))));
    }
    // One next hop per port-channel: rail1 reaches rail2's VLANs via the
    // spine's end of port-channel1, the spine each rail via its own.
    let rail1 = switch_routes(&t, "rail1");
    let prefixes: Vec<Ipv4Net> = rail1.iter().map(|r| r.prefix).collect();
    assert_eq!(prefixes, vec![net("10.0.3.0/28"), net("10.0.4.0/28")]);
    assert!(rail1.iter().all(|r| r.next_hops == vec![ip("10.255.1.1")]));
    let spine = switch_routes(&t, "spine1");
    assert_eq!(spine.len(), 4);
    assert_eq!(spine[1].prefix, net("10.0.2.0/28"));
    assert_eq!(spine[1].next_hops, vec![ip("10.255.1.0")]);
    assert_eq!(spine[2].next_hops, vec![ip("10.255.2.0")]);
    let nics = host_nics(&t, "h2");
    assert_eq!(
        nics.iter().map(|n| n.address).collect::<Vec<_>>(),
        vec![
            ip("10.0.1.3"),
            ip("10.0.2.3"),
            ip("10.0.3.3"),
            ip("10.0.4.3")
        ]
    );
}

#[test]
fn dual_rail_renders_lacp_members_and_port_channels_that_compile() {
    let t = shipped("dual-rail");
    let all = rendered(&t);
    let (_, rail1, m, _) = &all[0];
    assert!(
        rail1.contains("feature interface-vlan\nfeature lacp\n"),
        "{rail1}"
    );
    assert!(
        rail1.contains(
            "interface Ethernet1/31\n  description to spine1 Ethernet1/1\n  no switchport\n  \
             channel-group 1 mode active\n  lacp rate fast\n  mtu 1500\n"
        ),
        "{rail1}"
    );
    assert!(
        rail1.contains(
            "interface port-channel1\n  description to spine1 port-channel1\n  no switchport\n  \
             mtu 1500\n  ip address 10.255.1.0/31\n  no shutdown\n"
        ),
        "{rail1}"
    );
    assert!(
        rail1.contains("ip route 10.0.3.0/28 10.255.1.1\nip route 10.0.4.0/28 10.255.1.1\n"),
        "{rail1}"
    );
    // Members have no address of their own; the port-channel has the /31.
    assert!(
        !rail1.contains("ip address 10.255.1.0/31\n  bind"),
        "{rail1}"
    );
    let pc = m
        .interfaces
        .iter()
        .position(|i| i.name == "port-channel1")
        .expect("port-channel1");
    assert_eq!(port(m, "Ethernet1/32").member_of, Some(pc as u16));
    assert_eq!(m.interfaces[pc].ipv4, vec![(ip("10.255.1.0"), 31)]);
    assert_eq!(m.interfaces[pc].l2, None, "routed");
    let (name, spine, sm, _) = &all[2];
    assert_eq!(name, "spine1");
    assert!(
        spine.contains("feature lacp\n") && !spine.contains("interface-vlan"),
        "{spine}"
    );
    assert!(
        !spine.contains("\nvlan "),
        "the spine carries no VLAN: {spine}"
    );
    assert!(
        spine.contains("ip route 10.0.1.0/28 10.255.1.0\n")
            && spine.contains("ip route 10.0.4.0/28 10.255.2.0\n"),
        "{spine}"
    );
    assert_eq!(port(sm, "port-channel2").ipv4, vec![(ip("10.255.2.1"), 31)]);
}

#[test]
fn single_rail_routes_each_rails_vlan_over_both_spines() {
    let t = shipped("single-rail");
    let rail1 = switch_routes(&t, "rail1");
    assert_eq!(rail1.len(), 1);
    assert_eq!(rail1[0].prefix, net("10.0.2.0/28"));
    assert_eq!(rail1[0].next_hops, vec![ip("10.255.1.1"), ip("10.255.1.3")]);
    let spine2 = switch_routes(&t, "spine2");
    assert_eq!(
        spine2
            .iter()
            .map(|r| (r.prefix, r.next_hops.clone()))
            .collect::<Vec<_>>(),
        vec![
            (net("10.0.1.0/28"), vec![ip("10.255.1.2")]),
            (net("10.0.2.0/28"), vec![ip("10.255.2.2")]),
        ]
    );
    let all = rendered(&t);
    let (_, text, m, _) = &all[0];
    assert!(text.contains("interface Vlan101\n"), "{text}");
    assert!(
        !text.contains("Vlan102"),
        "rail2's SVI is not rail1's: {text}"
    );
    assert_eq!(port(m, "Ethernet1/3").l2, Some(PortL2::access(101)));
    assert_eq!(
        port(m, "Ethernet1/31").ipv4,
        vec![(ip("10.255.1.0"), 31)],
        "uplinks stay routed"
    );
    assert!(
        text.contains("!   dlb-interface Ethernet1/31, Ethernet1/32"),
        "{text}"
    );
    let nics = host_nics(&t, "h4");
    assert_eq!(
        (nics[1].address, nics[1].gateway, nics[1].switch.as_str()),
        (ip("10.0.2.5"), ip("10.0.2.1"), "rail2")
    );
}

#[test]
fn a_trunk_carries_a_vlan_to_a_switch_without_its_svi() {
    let t = parse(TRUNKED);
    let v101 = &t.vlans[0];
    assert_eq!(
        v101.switches,
        vec!["leaf1".to_string(), "leaf2".to_string()]
    );
    assert_eq!(t.vlans[1].switches, vec!["leaf1".to_string()]);
    // h2 hangs off leaf2 but is in leaf1's VLAN 101, after h1.
    let nics = host_nics(&t, "h2");
    assert_eq!(
        (nics[0].address, nics[0].gateway, nics[0].switch.as_str()),
        (ip("10.0.1.3"), ip("10.0.1.1"), "leaf2")
    );
    assert_eq!(
        nics[0].rail_routes,
        vec![net("10.0.2.0/29")],
        "the other subnet leaf1's SVIs route"
    );
    assert!(t.addresses(&t.links[4]).is_none(), "a trunk has no address");
    // Trunks route nothing: leaf2 has no route to the spine's hosts.
    assert!(switch_routes(&t, "leaf2").is_empty());
    let spine = switch_routes(&t, "spine1");
    assert_eq!(
        spine.iter().map(|r| r.prefix).collect::<Vec<_>>(),
        vec![net("10.0.1.0/29"), net("10.0.2.0/29")]
    );
    assert_eq!(t.vlan_mtu(v101), 9216, "h2's link and the trunk");

    let all = rendered(&t);
    let (_, leaf1, m1, _) = &all[0];
    assert!(
        leaf1.contains(
            "interface Ethernet1/32\n  description to leaf2 Ethernet1/32\n  switchport\n  switchport mode trunk\n  \
             switchport trunk allowed vlan 101\n  channel-group 5 mode active\n  lacp rate fast\n  mtu 9216\n"
        ),
        "{leaf1}"
    );
    assert!(
        leaf1.contains(
            "interface port-channel5\n  description to leaf2 port-channel5\n  switchport\n  switchport mode trunk\n  \
             switchport trunk allowed vlan 101\n  mtu 9216\n  no shutdown\n"
        ),
        "{leaf1}"
    );
    assert!(
        leaf1.contains("interface Vlan101\n  description gateway of VLAN 101\n  mtu 9216\n"),
        "{leaf1}"
    );
    let pc = port(m1, "port-channel5");
    let l2 = pc.l2.clone().expect("a switched port-channel");
    assert!(
        l2.tagged.contains(101) && !l2.tagged.contains(102),
        "{l2:?}"
    );
    let (_, leaf2, m2, _) = &all[1];
    assert!(
        leaf2.contains("feature lacp\n!\nvlan 101\n  name RAIL-1\nclass-map"),
        "VLAN 101 but no SVI, no VLAN 102: {leaf2}"
    );
    assert!(
        !leaf2.contains("interface-vlan") && !leaf2.contains("interface Vlan"),
        "{leaf2}"
    );
    assert_eq!(port(m2, "Ethernet1/1").l2, Some(PortL2::access(101)));
    assert!(port(m2, "Ethernet1/31").member_of.is_some());
}

/// The first error of parsing `text`, as (line, col, message, hint).
fn error(text: &str) -> (usize, usize, String, String) {
    let d = parse_str(text, Path::new("t.topo")).expect_err("should fail");
    let d = &d[0];
    (
        d.line,
        d.col,
        d.message.clone(),
        d.hint.clone().unwrap_or_default(),
    )
}

#[test]
fn every_layer_2_error_names_its_position() {
    const HEAD: &str = "switch s1 role rail\nswitch s2 role rail\nhost h1\nhost h2\n";
    let cases: &[(&str, usize, usize, &str, &str)] = &[
        // The `vlan` statement.
        ("vlan\n", 5, 5, "`vlan` needs a number", "vlan 101 on"),
        ("vlan 1 on s1 subnet 10.0.1.0/28\n", 5, 6, "`1` is not a VLAN", "2-4094"),
        ("vlan 4095 on s1 subnet 10.0.1.0/28\n", 5, 6, "`4095` is not a VLAN", ""),
        ("vlan 101 at s1\n", 5, 10, "expected `on SWITCH`, not `at`", "SVI"),
        ("vlan 101\n", 5, 9, "VLAN 101 needs `on SWITCH`", ""),
        ("vlan 101 on\n", 5, 12, "`on` needs a switch", ""),
        ("vlan 101 on s3 subnet 10.0.1.0/28\n", 5, 13, "no switch named `s3`", "did you mean `s1`?"),
        ("vlan 101 on h1 subnet 10.0.1.0/28\n", 5, 13, "no switch named `h1`", "is a host"),
        ("vlan 101 on s1\n", 5, 15, "VLAN 101 needs a `subnet`", "first address"),
        ("vlan 101 on s1 subnet 10.0.1.0/31\n", 5, 23, "/31 is too small for a VLAN", "/30"),
        ("vlan 101 on s1 subnet 10.0.1.1/28\n", 5, 23, "host bits set", ""),
        ("vlan 101 on s1 subnet 10.0.1.0/28 nmae X\n", 5, 35, "unknown VLAN option `nmae`", "did you mean `name`?"),
        ("vlan 101 on s1 subnet 10.0.1.0/28 name\n", 5, 35, "`name` needs a value", ""),
        ("vlan 101 on s1 subnet 10.0.1.0/28 name a+b\n", 5, 40, "`a+b` is not a VLAN name", "RAIL-1"),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nvlan 101 on s1 subnet 10.0.2.0/28\n",
            6, 6, "VLAN 101 is already on s1 (line 5)", "",
        ),
        (
            "vlan 101 on s1 subnet 10.0.0.0/16\nvlan 102 on s2 subnet 10.0.1.0/28\n",
            6, 23, "10.0.1.0/28 overlaps 10.0.0.0/16 of VLAN 101 on line 5", "",
        ),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nlink h1:eth0 s1:e1/1 subnet 10.0.1.0/30\n",
            6, 29, "overlaps 10.0.1.0/28 of VLAN 101 on line 5", "",
        ),
        ("vlen 101\n", 5, 1, "unknown statement `vlen`", "did you mean `vlan`?"),
        // Access ports.
        ("link h1:eth0 s1:e1/1 vlan x\n", 5, 27, "`x` is not a VLAN", "2-4094"),
        ("link h1:eth0 s1:e1/1\n", 5, 21, "link needs a `subnet` or a `vlan`", "vlan 101"),
        ("link s1:e1/1 s2:e1/1\n", 5, 21, "link needs a `subnet` or a `trunk`", "trunk 101-102"),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nlink h1:eth0 s1:e1/1 subnet 10.0.2.0/24 vlan 101\n",
            6, 41, "`vlan` and `subnet` exclude each other", "access port",
        ),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nlink s1:e1/1 s2:e1/1 vlan 101\n",
            6, 22, "`vlan` makes a host's switch port an access port", "trunk LIST",
        ),
        ("link h1:eth0 s1:e1/1 vlan 101\n", 5, 27, "VLAN 101 is not on s1", "vlan 101 on s1 subnet"),
        (
            "vlan 101 on s2 subnet 10.0.1.0/28\nlink h1:eth0 s1:e1/1 vlan 101\n",
            6, 27, "VLAN 101 is not on s1", "VLAN 101 is on s2: carry it to s1 with `trunk 101`",
        ),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nlink h1:eth0 s1:e1/1 vlan 101\nlink h1:eth1 s1:e1/2 vlan 101\n",
            7, 27, "h1 has another NIC in VLAN 101 (line 6)", "one NIC per VLAN",
        ),
        (
            "vlan 101 on s1 subnet 10.0.1.0/30\nlink h1:eth0 s1:e1/1 vlan 101\nlink h2:eth0 s1:e1/2 vlan 101\n",
            7, 27, "VLAN 101's subnet 10.0.1.0/30 has no address left for h2:eth0", ".2 to .2",
        ),
        // Trunks.
        ("link s1:e1/1 s2:e1/1 trunk 101-x\n", 5, 28, "`x` is not a VLAN", "101-102,105"),
        ("link s1:e1/1 s2:e1/1 trunk 101,,102\n", 5, 32, "empty item in VLAN list", ""),
        ("link s1:e1/1 s2:e1/1 trunk 102-101\n", 5, 28, "ends before it starts", "`101-102`"),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nlink s1:e1/1 s2:e1/1 trunk 101,105\n",
            6, 32, "VLAN 105 is on neither s1 nor s2 nor behind them", "vlan 105 on SWITCH",
        ),
        (
            "link s1:e1/1 s2:e1/1 subnet 10.255.0.0/31 trunk 101\n",
            5, 43, "`trunk` and `subnet` exclude each other", "",
        ),
        ("link h1:eth0 s1:e1/1 trunk 101\n", 5, 22, "`trunk` is for links between switches", "vlan N"),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nvlan 101 on s2 subnet 10.0.2.0/28\nlink s1:e1/1 s2:e1/1 trunk 101\n",
            6, 6, "VLAN 101 on s2 is the VLAN 101 of s1 (line 5)", "a VLAN has one SVI",
        ),
        // Port-channels.
        ("link s1:e1/1 s2:e1/1 channel 0 subnet 10.255.0.0/31\n", 5, 30, "`0` is not a port-channel number", "1-4096"),
        ("link h1:eth0 s1:e1/1 channel 1 subnet 10.0.0.0/24\n", 5, 22, "`channel` bundles links between two switches", ""),
        (
            "switch s3 role spine\nlink s1:e1/1 s2:e1/1 channel 1 subnet 10.255.0.0/31\nlink s1:e1/2 s3:e1/1 channel 1 subnet 10.255.0.2/31\n",
            7, 30, "port-channel1 of s1 already goes to s2 (line 6)", "another number",
        ),
        (
            "link s1:e1/1 s2:e1/1 channel 1 subnet 10.255.0.0/31\nlink s1:e1/2 s2:e1/2 channel 1 subnet 10.255.0.2/31\n",
            6, 39, "port-channel1 has `subnet 10.255.0.0/31` on line 5", "one /31 for the bundle",
        ),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nlink s1:e1/1 s2:e1/1 channel 1 subnet 10.255.0.0/31\nlink s1:e1/2 s2:e1/2 channel 1 trunk 101\n",
            7, 30, "port-channel1 has `subnet 10.255.0.0/31` on line 6", "",
        ),
        (
            "vlan 101 on s1 subnet 10.0.1.0/28\nvlan 102 on s1 subnet 10.0.2.0/28\nlink s1:e1/1 s2:e1/1 channel 1 trunk 101\nlink s1:e1/2 s2:e1/2 channel 1 trunk 101-102\n",
            8, 38, "port-channel1 carries `trunk 101` on line 7", "the same VLANs",
        ),
        (
            "link s1:e1/1 s2:e1/1 channel 1 subnet 10.255.0.0/31\nlink s1:e1/2 s2:e1/2 channel 1 subnet 10.255.0.0/31 mtu 9216\n",
            6, 30, "port-channel1 has `mtu 1500` on line 5", "one MTU",
        ),
        (
            "link s1:e1/1 s2:e1/1 speed 100000 channel 1 subnet 10.255.0.0/31\nlink s1:e1/2 s2:e1/2 channel 1 subnet 10.255.0.0/31\n",
            6, 30, "port-channel1 has `speed 100000` on line 5", "one speed",
        ),
        (
            "routing bgp\nvlan 101 on s1 subnet 10.0.1.0/28\nlink h1:eth0 s1:e1/1 vlan 101\n",
            5, 9, "`routing bgp` cannot route this topology: VLAN 101 (line 6) has its SVI on s1", "routing static",
        ),
    ];
    for (text, line, col, msg, hint) in cases {
        // Every host needs a link: give those of the case that have none one.
        let mut full = format!("{HEAD}{text}");
        for h in ["h1", "h2"] {
            if !text.contains(&format!("{h}:eth0")) {
                let n = &h[1..];
                full.push_str(&format!("link {h}:eth9 s1:e1/4{n} subnet 10.9.{n}.0/24\n"));
            }
        }
        let (l, c, m, h) = error(&full);
        assert!(
            (l, c) == (*line, *col) && m.contains(msg) && h.contains(hint),
            "{text:?}: got {l}:{c} {m:?} hint {h:?}, want {line}:{col} {msg:?} hint {hint:?}"
        );
    }
}

#[test]
fn a_port_channel_written_either_way_round_keeps_its_first_members_addresses() {
    let t = parse(
        "switch a role rail\nswitch b role spine\nhost h\nlink h:eth0 a:e1/1 subnet 10.1.0.0/24\n\
         link b:e1/1 a:e1/31 channel 7 subnet 10.255.0.0/31\nlink a:e1/32 b:e1/2 channel 7 subnet 10.255.0.0/31\n",
    );
    // b was written first on the first member: b takes .0 on both.
    for l in &t.links[1..] {
        let (a_end, b_end) = if l.a.node == "a" {
            (&l.a, &l.b)
        } else {
            (&l.b, &l.a)
        };
        assert_eq!(t.address_of(l, a_end), Some(ip("10.255.0.1")));
        assert_eq!(t.address_of(l, b_end), Some(ip("10.255.0.0")));
    }
    assert_eq!(switch_routes(&t, "b")[0].next_hops, vec![ip("10.255.0.1")]);
}

#[test]
fn a_topology_with_layer_2_survives_the_state_file() {
    let t = parse(TRUNKED);
    let json = serde_json::to_string(&t).expect("serializes");
    let back: Topology = serde_json::from_str(&json).expect("reads back");
    assert_eq!(back, t);
    // A routed topology's state file reads as before: no Layer-2 keys.
    let routed = shipped("single");
    let json = serde_json::to_string(&routed).expect("serializes");
    assert!(
        !json.contains("vlan") && !json.contains("trunk") && !json.contains("channel"),
        "{json}"
    );
}

#[test]
fn templates_say_what_a_layer_2_switch_needs() {
    let t = shipped("dual-rail");
    let rail = super::render::BUILTIN_TEMPLATES[0].1;
    // A template written before Layer 2: `no switchport` on every port.
    let old = rail.replace("  {{switchport}}\n  {{channel}}\n", "  no switchport\n");
    let d = render_switch(&t, "rail1", &old, "old.conf").expect_err("literal no switchport");
    let at = old
        .lines()
        .position(|l| l == "  no switchport")
        .expect("line")
        + 1;
    assert_eq!((d[0].line, d[0].col), (at, 3));
    assert!(
        d[0].message.contains(
            "`no switchport` on every port, but Ethernet1/1 of rail1 is an access port in VLAN 101"
        ),
        "{}",
        d[0].message
    );
    assert!(d[0]
        .hint
        .as_deref()
        .unwrap_or("")
        .contains("{{switchport}}"));
    // The spine has only routed members: the literal is right there, but
    // `{{channel}}` is missing.
    let d = render_switch(&t, "spine1", &old, "old.conf").expect_err("no channel");
    assert!(
        d.iter().any(|d| d.message.contains(
            "has no `{{channel}}`, but Ethernet1/1 of spine1 is a member of port-channel1"
        )),
        "{d:?}"
    );
    for (cut, want) in [
        ("{{#vlan}}\nvlan {{vlan}}\n  name {{vlan_name}}\n{{/vlan}}\n", "no `{{#vlan}}` block, but rail1 carries VLAN 101"),
        ("{{features}}\n", "no `{{features}}`"),
        (
            "{{#svi}}\ninterface {{name}}\n  description {{description}}\n  mtu {{mtu}}\n  ip address {{address}}\n  no shutdown\n{{/svi}}\n",
            "no `{{#svi}}` block, but rail1 has the SVI of VLAN 101",
        ),
    ] {
        assert!(rail.contains(cut), "{cut}");
        let d = render_switch(&t, "rail1", &rail.replace(cut, ""), "cut.conf").expect_err(want);
        assert!(d.iter().any(|d| d.message.contains(want)), "{want}: {d:?}");
    }
    let i = rail.find("{{#port-channel}}").expect("block");
    let j = rail.find("{{/port-channel}}\n").expect("end") + "{{/port-channel}}\n".len();
    let cut = format!("{}{}", &rail[..i], &rail[j..]);
    let d = render_switch(&t, "rail1", &cut, "cut.conf").expect_err("no port-channel block");
    assert!(
        d.iter().any(|d| d
            .message
            .contains("no `{{#port-channel}}` block, but rail1 has port-channel1 to spine1")),
        "{d:?}"
    );
    // Block placeholders are checked, with the block's in the hint.
    let bad = "{{#svi}}\ninterface {{name}}\n  ip address {{adress}}\n{{/svi}}\n";
    let d = render_switch(&t, "rail1", bad, "bad.conf").expect_err("unknown");
    assert_eq!((d[0].line, d[0].col), (3, 14));
    assert!(d[0].message.contains("unknown placeholder `{{adress}}`"));
    assert!(
        d[0].hint.as_deref().unwrap_or("").contains(
            "inside {{#svi}}…{{/svi}} (every SVI of the switch, by VLAN) also name, vlan"
        ),
        "{:?}",
        d[0].hint
    );
    let d =
        render_switch(&t, "rail1", "{{#vlan}}\nvlan {{vlan}}\n", "open.conf").expect_err("open");
    assert!(
        d[0].message.contains("`{{#vlan}}` without `{{/vlan}}`"),
        "{}",
        d[0].message
    );
    let d = render_switch(&t, "rail1", "!\n{{/port-channel}}\n", "close.conf").expect_err("close");
    assert_eq!(d[0].line, 2);
    assert!(d[0]
        .message
        .contains("`{{/port-channel}}` without `{{#port-channel}}`"));
    // A routed topology needs none of it: a template without the new
    // pieces still renders it.
    let routed = shipped("rail-spine");
    let plain = "hostname {{hostname}}\n{{#interface}}\ninterface {{name}}\n  no switchport\n  ip address {{address}}\n{{/interface}}\n";
    assert!(render_switch(&routed, "rail1", plain, "plain.conf").is_ok());
}
