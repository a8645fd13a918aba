//! Layer 2: `vlan`, switchport settings, port-channels and LACP, VLAN
//! interfaces, the MAC address table; their `no` forms, their errors and
//! warnings with positions, and their printed form.

mod common;

use common::{clean, errors, ok, one_error, parse_strict, render, summary, warnings};
use railyard_config::{
    ChannelGroup, ChannelMode, L2Port, LacpRate, Switchport, SwitchportMode, VlanSet,
    DEFAULT_MAC_AGING_SECS,
};

/// The book's multi-rail leaf: two rails as access VLANs with their SVIs, a
/// trunk uplink and a routed LACP port-channel of two members.
const MULTI_RAIL: &str = "\
hostname rail-leaf1
feature interface-vlan
feature lacp
vlan 101
  name RAIL-1
vlan 102
  name RAIL-2
interface Ethernet1/1-4
  switchport
  switchport mode access
  switchport access vlan 101
interface Ethernet1/5-8
  switchport
  switchport mode access
  switchport access vlan 102
interface Vlan101
  no shutdown
  ip address 10.0.1.1/28
interface Vlan102
  ip address 10.0.2.1/28
interface Ethernet1/31
  switchport
  switchport mode trunk
  switchport trunk allowed vlan 101-102
interface Ethernet1/49-50
  no switchport
  channel-group 10 mode active
interface port-channel10
  no switchport
  ip address 10.255.0.0/31
";

fn vlans(s: &str) -> VlanSet {
    s.parse().unwrap()
}

/// Parse `body` under `interface Ethernet1/1` (Layer 2, with VLAN 10 and 20 created).
fn port(body: &str) -> railyard_config::Interface {
    let p = clean(&format!("vlan 10,20\ninterface Ethernet1/1\n{body}"));
    p.config.interfaces[0].clone()
}

#[test]
fn the_multi_rail_example_loads_cleanly() {
    let p = clean(MULTI_RAIL);
    let c = &p.config;
    let ids: Vec<(u16, Option<&str>)> = c.vlans.iter().map(|v| (v.id, v.name.as_deref())).collect();
    assert_eq!(
        ids,
        [(1, None), (101, Some("RAIL-1")), (102, Some("RAIL-2"))]
    );
    for (name, vlan) in [("e1/1", 101), ("e1/4", 101), ("e1/5", 102), ("e1/8", 102)] {
        let i = c.interface(name).unwrap();
        assert!(!i.routed, "{name}");
        assert_eq!(i.switchport.mode, SwitchportMode::Access);
        assert_eq!(i.switchport.access_vlan, vlan, "{name}");
    }
    let svis: Vec<(String, bool, String)> = c
        .svis
        .iter()
        .map(|s| (s.name(), s.shutdown, s.ipv4[0].to_string()))
        .collect();
    assert_eq!(
        svis,
        [
            ("Vlan101".to_string(), false, "10.0.1.1/28".to_string()),
            ("Vlan102".to_string(), false, "10.0.2.1/28".to_string()),
        ]
    );
    let up = c.interface("Ethernet1/31").unwrap();
    assert_eq!(up.switchport.mode, SwitchportMode::Trunk);
    assert_eq!(up.switchport.trunk_allowed, vlans("101-102"));
    assert!(up.switchport.carries(102) && !up.switchport.carries(1));
    let pc = c.port_channel(10).unwrap();
    assert!(pc.routed);
    assert_eq!(pc.ipv4[0].to_string(), "10.255.0.0/31");
    assert_eq!(pc.line, 28);
    let members: Vec<String> = c
        .port_channel_members(10)
        .iter()
        .map(|i| i.name.to_string())
        .collect();
    assert_eq!(members, ["Ethernet1/49", "Ethernet1/50"]);
    assert_eq!(
        c.interface("e1/50").unwrap().channel_group,
        Some(ChannelGroup {
            id: 10,
            mode: ChannelMode::Active
        })
    );
    let printed = c.to_string();
    let again = clean(&printed).config;
    assert_eq!(&again, c, "printed:\n{printed}");
    assert_eq!(again.to_string(), printed);
    assert!(parse_strict(MULTI_RAIL).is_ok());
}

#[test]
fn vlan_one_always_exists_and_lists_create_vlans() {
    let c = ok("hostname a\n").config;
    assert_eq!(c.vlans.len(), 1);
    assert_eq!(c.vlan(1).unwrap().display_name(), "default");
    let c = clean("vlan 101-102,200\nvlan 1\n").config;
    assert_eq!(c.vlans.ids(), vlans("1,101-102,200"));
    assert_eq!(c.vlan(200).unwrap().line, 1);
    assert_eq!(c.vlan(102).unwrap().display_name(), "VLAN0102");
    let c = clean("vlan 10 , 20-21\nno vlan 20,21\nno vlan 30\n").config;
    assert_eq!(c.vlans.ids(), vlans("1,10"));
}

#[test]
fn vlan_names_and_their_no_form() {
    let c = clean("vlan 10\n  name GPU-RAIL_1.a\nvlan 20\n  name x\n  no name\n").config;
    assert_eq!(c.vlan(10).unwrap().name.as_deref(), Some("GPU-RAIL_1.a"));
    assert_eq!(c.vlan(20).unwrap().name, None);
    // Naming VLAN 1 is allowed; a re-opened VLAN keeps its name.
    let c = clean("vlan 1\n  name default-1\nvlan 1,5\n").config;
    assert_eq!(c.vlan(1).unwrap().name.as_deref(), Some("default-1"));
}

#[test]
fn vlan_errors_point_at_the_item() {
    let d = one_error("vlan 10,5000\n");
    assert_eq!(
        summary(&d),
        (
            1,
            9,
            "VLAN 5000 is out of range",
            Some("a VLAN is a number 1-4094; lists are written like 10,20-30")
        )
    );
    let d = one_error("vlan 30-20\n");
    assert_eq!(
        summary(&d),
        (
            1,
            6,
            "VLAN range `30-20` ends (20) before it starts (30)",
            Some("write the lower number first, e.g. 20-30")
        )
    );
    let d = one_error("vlan\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (1, 6, "missing VLAN ID")
    );
    let d = one_error("vlan 10,,20\n");
    assert_eq!((d.col, d.message.as_str()), (9, "empty item in VLAN list"));
    let d = one_error("vlan 10\nno vlan 1-5\n");
    assert_eq!(
        summary(&d),
        (
            2,
            9,
            "VLAN 1 is the default VLAN and cannot be deleted",
            Some("leave VLAN 1 out of the list, e.g. `no vlan 2-4094`")
        )
    );
    let d = one_error("vlan 10-11\n  name RAIL\n");
    assert_eq!(
        summary(&d),
        (
            2,
            8,
            "`name` names one VLAN, but this section configures 2 (10-11)",
            Some("name each VLAN in its own section, e.g. `vlan 10` then `name RAIL-1`")
        )
    );
    let d = one_error("vlan 10\n  name 123456789012345678901234567890123\n");
    assert_eq!(
        summary(&d),
        (
            2,
            8,
            "VLAN name is 33 characters long",
            Some("NX-OS allows at most 32")
        )
    );
    let d = one_error("vlan 10\n  nam RAIL-1 x\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (2, 14, "unexpected `x`")
    );
    let d = one_error("vlan 10\n  frobnicate\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (2, 3, "unknown vlan command `frobnicate`")
    );
    // A broken header still checks its body, and changes nothing.
    let es = errors("vlan 0\n  name 123456789012345678901234567890123\n");
    assert_eq!(es.len(), 2, "{}", render(&es));
}

#[test]
fn unmodelled_vlan_commands_are_skipped() {
    let p = ok("vlan 10\n  vn-segment 10010\n  state active\nvlan configuration 10\n  ip igmp snooping\nvlan dot1Q tag native\n");
    assert_eq!(
        warnings(&p),
        [
            (2, 3, "vlan command `vn-segment` is not modelled; skipped".to_string()),
            (3, 3, "vlan command `state` is not modelled; skipped".to_string()),
            (
                4,
                1,
                "`vlan configuration` is not modelled; skipped with the line indented under it (line 5)"
                    .to_string()
            ),
            (6, 1, "`vlan dot1q` is not modelled; skipped".to_string()),
        ]
    );
    assert_eq!(p.config.vlans.ids(), vlans("1,10"));
}

#[test]
fn features_are_modelled_without_warnings() {
    let p = clean("feature interface-vlan\nfeature lacp\n");
    let f: Vec<&str> = p.config.features.iter().map(String::as_str).collect();
    assert_eq!(f, ["interface-vlan", "lacp"]);
}

#[test]
fn switchport_modes_and_vlans() {
    let i = port("  switchport mode trunk\n  switchport trunk native vlan 10\n  switchport trunk allowed vlan 10,20\n");
    assert_eq!(
        i.switchport,
        Switchport {
            mode: SwitchportMode::Trunk,
            access_vlan: 1,
            trunk_allowed: vlans("10,20"),
            native_vlan: 10,
        }
    );
    let i = port("  switchport access vlan 20\n  switchport mode access\n");
    assert_eq!(i.switchport.access_vlan, 20);
    assert!(i.switchport.carries(20) && !i.switchport.carries(10));
    // Abbreviated, as NX-OS accepts.
    let i = port("  switch mode tr\n  sw tr al vl 10\n");
    assert_eq!(i.switchport.mode, SwitchportMode::Trunk);
    assert_eq!(i.switchport.trunk_allowed, vlans("10"));
}

#[test]
fn trunk_allowed_lists_add_remove_except_all_none() {
    let allowed = |body: &str| {
        port(&format!("  switchport mode trunk\n{body}"))
            .switchport
            .trunk_allowed
            .to_string()
    };
    assert_eq!(allowed(""), "1-4094");
    assert_eq!(
        allowed("  switchport trunk allowed vlan 10-12, 20\n"),
        "10-12,20"
    );
    assert_eq!(
        allowed("  switchport trunk allowed vlan 10\n  switchport trunk allowed vlan add 20-21\n"),
        "10,20-21"
    );
    assert_eq!(
        allowed("  switchport trunk allowed vlan remove 2-4094\n"),
        "1"
    );
    assert_eq!(
        allowed("  switchport trunk allowed vlan except 1-9\n"),
        "10-4094"
    );
    assert_eq!(allowed("  switchport trunk allowed vlan none\n"), "none");
    assert_eq!(
        allowed("  switchport trunk allowed vlan none\n  switchport trunk allowed vlan all\n"),
        "1-4094"
    );
    assert_eq!(
        allowed("  switchport trunk allowed vlan 10\n  no switchport trunk allowed vlan\n"),
        "1-4094"
    );
}

#[test]
fn switchport_no_forms_restore_the_defaults() {
    let i = port(
        "  switchport mode trunk\n  switchport access vlan 10\n  switchport trunk native vlan 20\n  \
         switchport trunk allowed vlan 10\n  no switchport mode\n  no switchport access vlan\n  \
         no switchport trunk native vlan 20\n  no switchport trunk allowed vlan\n",
    );
    assert!(i.switchport.is_default());
}

#[test]
fn no_switchport_clears_the_vlan_settings_and_switchport_settings_need_layer_2() {
    let p = clean("vlan 10\ninterface e1/1\n  switchport access vlan 10\n  no switchport\n");
    let i = &p.config.interfaces[0];
    assert!(i.routed && i.switchport.is_default());
    let d = one_error("vlan 10\ninterface e1/1\n  no switchport\n  switchport access vlan 10\n");
    assert_eq!(
        summary(&d),
        (
            4,
            3,
            "Ethernet1/1 is a routed port (`no switchport`); switchport settings need a Layer 2 port",
            Some("write `switchport` before this line to make the port Layer 2")
        )
    );
    for body in [
        "switchport mode trunk",
        "switchport trunk allowed vlan 10",
        "switchport trunk native vlan 10",
    ] {
        let d = one_error(&format!("interface e1/1\n  no switchport\n  {body}\n"));
        assert_eq!((d.line, d.col), (3, 3), "{body}");
    }
    // `switchport` first makes it Layer 2 again.
    let i = port("  no switchport\n  switchport\n  switchport access vlan 10\n");
    assert!(!i.routed && i.switchport.access_vlan == 10);
    // Port-channels refuse them the same way.
    let d = one_error("interface po5\n  no switchport\n  switchport mode trunk\n");
    assert!(
        d.message.starts_with("port-channel5 is a routed port"),
        "{}",
        d.message
    );
}

#[test]
fn switchport_value_errors() {
    let d = one_error("interface e1/1\n  switchport mode dot1q-tunnel\n");
    assert_eq!(
        summary(&d),
        (
            2,
            19,
            "`switchport mode dot1q-tunnel` is not modelled",
            Some("railyard models access and trunk ports")
        )
    );
    let d = one_error("interface e1/1\n  switchport mode hybrid\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (19, "unknown switchport mode `hybrid`")
    );
    let d = one_error("interface e1/1\n  switchport access vlan 4095\n");
    assert_eq!(
        summary(&d),
        (
            2,
            26,
            "VLAN 4095 is out of range",
            Some("a VLAN is a number 1-4094; lists are written like 10,20-30")
        )
    );
    let d = one_error("interface e1/1\n  switchport trunk native vlan\n");
    assert_eq!((d.col, d.message.as_str()), (32, "missing VLAN"));
    let d = one_error("interface e1/1\n  switchport trunk allowed vlan add 10,x\n");
    assert_eq!((d.col, d.message.as_str()), (40, "invalid VLAN `x`"));
    let d = one_error("interface e1/1\n  switchport trunk allowed vlan plus 10\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (33, "unknown allowed-VLAN keyword `plus`")
    );
    let d = one_error("interface e1/1\n  switchport trunk allowed vlan all 10\n");
    assert_eq!((d.col, d.message.as_str()), (37, "unexpected `10`"));
    let d = one_error("interface e1/1\n  switchport access 10\n");
    assert_eq!((d.col, d.message.as_str()), (14, "unexpected `access`"));
}

#[test]
fn channel_groups_and_lacp_port_settings() {
    let i = port("  channel-group 7\n");
    assert_eq!(
        i.channel_group,
        Some(ChannelGroup {
            id: 7,
            mode: ChannelMode::On
        })
    );
    let p = clean("feature lacp\ninterface e1/1\n  channel-group 7 force mode passive\n  lacp rate fast\n  lacp port-priority 100\n");
    let i = &p.config.interfaces[0];
    assert_eq!(i.channel_group.map(|g| g.mode), Some(ChannelMode::Passive));
    assert_eq!(
        (i.lacp_rate, i.lacp_port_priority),
        (LacpRate::Fast, Some(100))
    );
    let p = clean("feature lacp\ninterface e1/1\n  channel-group 7 mode active\n  lacp rate fast\n  lacp port-priority 100\n  no lacp rate\n  no lacp port-priority\n  no channel-group 7\n");
    let i = &p.config.interfaces[0];
    assert_eq!(
        (i.channel_group, i.lacp_rate, i.lacp_port_priority),
        (None, LacpRate::Normal, None)
    );
    // No member left: the port-channel it created goes with it.
    assert!(p.config.port_channels.is_empty());
}

#[test]
fn channel_group_errors() {
    let d = one_error("interface e1/1\n  channel-group 4097\n");
    assert_eq!(
        summary(&d),
        (
            2,
            17,
            "port-channel number 4097 is out of range",
            Some("port-channel number is 1-4096")
        )
    );
    let d = one_error("interface e1/1\n  channel-group 1 mode desirable\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (24, "unknown channel mode `desirable`")
    );
    let d = one_error("interface e1/1\n  channel-group 1 active\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (19, "unknown channel-group option `active`")
    );
    let d = one_error("interface e1/1\n  lacp rate slow\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (13, "unknown LACP rate `slow`")
    );
    let d = one_error("interface e1/1\n  lacp port-priority 0\n");
    assert_eq!(
        summary(&d),
        (
            2,
            22,
            "LACP priority 0 is out of range",
            Some("LACP priority is 1-65535")
        )
    );
    // Port-channels and SVIs have no `channel-group`.
    let d = one_error("interface po1\n  channel-group 2\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (
            2,
            3,
            "unknown interface port-channel command `channel-group`"
        )
    );
}

#[test]
fn a_channel_group_creates_its_port_channel_with_the_members_settings() {
    let p = clean("vlan 10\ninterface e1/2\n  switchport mode trunk\n  switchport trunk allowed vlan 10\n  channel-group 3\ninterface e1/1\n  switchport mode trunk\n  switchport trunk allowed vlan 10\n  channel-group 3\n");
    let c = &p.config;
    assert_eq!(c.port_channels.len(), 1);
    let pc = c.port_channel(3).unwrap();
    assert!(!pc.routed);
    assert_eq!(pc.line, 5);
    assert_eq!(pc.switchport.mode, SwitchportMode::Trunk);
    assert_eq!(pc.switchport.trunk_allowed, vlans("10"));
    let members: Vec<String> = c
        .port_channel_members(3)
        .iter()
        .map(|i| i.name.to_string())
        .collect();
    assert_eq!(members, ["Ethernet1/1", "Ethernet1/2"]);
    // Routed members make a routed port-channel, printed explicitly.
    let p = clean("interface e1/1\n  no switchport\n  channel-group 4\n");
    let pc = p.config.port_channel(4).unwrap();
    assert!(pc.routed);
    assert!(p
        .config
        .to_string()
        .contains("interface port-channel4\n  no switchport\n"));
}

#[test]
fn vlan_interfaces() {
    let p = clean(
        "feature interface-vlan\nvlan 10,20-21\ninterface Vlan20\n  description rail 2\n  mtu 9216\n  \
         mac-address 0200.0000.0020\n  ip address 10.0.20.1/24\n  ip address 10.0.21.1/24 secondary\n  \
         ipv6 address 2001:db8:20::1/64\n  vrf member default\n  shutdown\ninterface vlan 10\n  no shutdown\n\
         interface Vlan 21\n",
    );
    let c = &p.config;
    let names: Vec<String> = c.svis.iter().map(|s| s.name()).collect();
    assert_eq!(names, ["Vlan10", "Vlan20", "Vlan21"], "sorted by VLAN");
    let s = c.svi(20).unwrap();
    assert_eq!(s.line, 3);
    assert_eq!(s.description.as_deref(), Some("rail 2"));
    assert_eq!((s.mtu, s.shutdown), (9216, true));
    assert_eq!(s.mac, Some([2, 0, 0, 0, 0, 0x20]));
    assert_eq!(s.ipv4.len(), 2);
    assert_eq!(s.ipv6[0].to_string(), "2001:db8:20::1/64");
    assert!(!c.svi(10).unwrap().shutdown);
    let p = clean("feature interface-vlan\nvlan 10-12\ninterface vlan10-12\n  mtu 9000\n  no mtu\n  description x\n  no description\n  ip address 10.0.0.1/24\n  no ip address\n  mac-address 0200.0000.0001\n  no mac-address\n");
    assert_eq!(p.config.svis.len(), 3);
    assert!(p
        .config
        .svis
        .iter()
        .all(|s| s.mtu == 1500 && s.description.is_none() && s.ipv4.is_empty() && s.mac.is_none()));
}

#[test]
fn vlan_interface_errors() {
    let d = one_error("interface Vlan4095\n");
    assert_eq!(
        summary(&d),
        (
            1,
            11,
            "invalid interface `Vlan4095`: 4095 is out of range",
            Some("Vlan interfaces are numbered 1-4094, e.g. Vlan10")
        )
    );
    let d = one_error("feature interface-vlan\ninterface Vlan1\n  switchport mode access\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (3, 3, "unknown interface Vlan command `switchport`")
    );
    assert!(d
        .hint
        .as_deref()
        .unwrap()
        .starts_with("interface Vlan commands are: shutdown, description, ip address"));
    let d = one_error("feature interface-vlan\ninterface Vlan1\n  ip address 10.0.0.1/24\ninterface Vlan1\n  ip address 10.0.0.2/24 secondary\n  ip address 10.0.0.2/24\n");
    assert_eq!(
        (d.line, d.message.as_str()),
        (6, "10.0.0.2 is already the secondary address of Vlan1")
    );
    let d = one_error("interface e1/1, Vlan10\n");
    assert_eq!(
        summary(&d),
        (
            1,
            17,
            "cannot configure Ethernet and Vlan interfaces in one `interface` command",
            Some("configure the Vlan interface in its own section")
        )
    );
    let d = one_error("interface po1, Vlan10\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (
            16,
            "cannot configure port-channel and Vlan interfaces in one `interface` command"
        )
    );
}

#[test]
fn vlan_interfaces_without_the_feature_are_read_with_a_warning() {
    let p = ok("vlan 10,20\ninterface Vlan20\ninterface Vlan10\n");
    assert_eq!(
        warnings(&p),
        [(
            2,
            11,
            "`interface Vlan20` without `feature interface-vlan`; read as if it were enabled"
                .to_string()
        )]
    );
    assert_eq!(
        p.warnings[0].hint.as_deref(),
        Some("add `feature interface-vlan`: NX-OS has no Vlan interfaces until the feature is enabled")
    );
    assert_eq!(p.config.svis.len(), 2);
}

#[test]
fn port_channels() {
    let p = clean(
        "feature lacp\npolicy-map type qos CLASSIFY\n  class class-default\n    set qos-group 0\n\
         interface port-channel20\n  description to spine\n  no switchport\n  mtu 9216\n  \
         ip address 10.1.0.1/31\n  ipv6 address 2001:db8:1::1/127\n  \
         service-policy type qos input CLASSIFY\n  lacp min-links 2\n  shutdown\n\
         interface po3\n  switchport mode trunk\n  switchport trunk allowed vlan 1\n",
    );
    let c = &p.config;
    let ids: Vec<u16> = c.port_channels.iter().map(|p| p.id).collect();
    assert_eq!(ids, [3, 20], "sorted by number");
    let pc = c.port_channel(20).unwrap();
    assert!(pc.routed && pc.shutdown);
    assert_eq!(pc.description.as_deref(), Some("to spine"));
    assert_eq!((pc.mtu, pc.min_links), (9216, Some(2)));
    assert_eq!(pc.service_policy_qos_input.as_deref(), Some("CLASSIFY"));
    assert_eq!(pc.ipv6[0].to_string(), "2001:db8:1::1/127");
    let po3 = c.port_channel(3).unwrap();
    assert!(!po3.routed);
    assert_eq!(po3.switchport.trunk_allowed, vlans("1"));
    assert_eq!(po3.name(), "port-channel3");
    let p = clean(
        "feature lacp\ninterface port-channel 1-2\n  lacp min-links 4\n  no lacp min-links\n",
    );
    assert!(p.config.port_channels.iter().all(|p| p.min_links.is_none()));
    // A service policy must exist, as on an Ethernet port.
    let d = one_error("interface po1\n  service-policy type qos input NOPE\n");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (2, 33, "no policy-map type qos named `NOPE`")
    );
    let d = one_error("feature lacp\ninterface po1\n  lacp min-links 33\n");
    assert_eq!(
        summary(&d),
        (
            3,
            18,
            "minimum links 33 is out of range",
            Some("minimum links is 1-32")
        )
    );
    let d = one_error("interface po0\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (11, "invalid interface `po0`: 0 is out of range")
    );
}

#[test]
fn unmodelled_port_channel_and_svi_commands_are_skipped() {
    let p = ok("feature interface-vlan\ninterface po1\n  vpc 1\n  spanning-tree port type network\ninterface Vlan1\n  ip ospf passive-interface\n  hsrp 1\n");
    assert_eq!(
        warnings(&p),
        [
            (
                3,
                3,
                "interface port-channel command `vpc` is not modelled; skipped".to_string()
            ),
            (
                4,
                3,
                "interface port-channel command `spanning-tree` is not modelled; skipped"
                    .to_string()
            ),
            (
                6,
                3,
                "interface Vlan command `ip ospf` is not modelled; skipped".to_string()
            ),
            (
                7,
                3,
                "interface Vlan command `hsrp` is not modelled; skipped".to_string()
            ),
        ]
    );
}

#[test]
fn lacp_system_priority_and_its_feature() {
    let c = clean("feature lacp\nlacp system-priority 100\n").config;
    assert_eq!(c.lacp_system_priority, Some(100));
    let c = clean("feature lacp\nlacp system-priority 100\nno lacp system-priority\n").config;
    assert_eq!(c.lacp_system_priority, None);
    let p = ok("lacp system-priority 100\n");
    assert_eq!(
        warnings(&p),
        [(
            1,
            1,
            "LACP is configured but `feature lacp` is not enabled".to_string()
        )]
    );
    let d = one_error("lacp system-priority 65536\n");
    assert_eq!(
        (d.col, d.message.as_str()),
        (22, "LACP priority 65536 is out of range")
    );
}

#[test]
fn lacp_modes_need_the_feature() {
    let es = errors("interface e1/1-2\n  no switchport\n  channel-group 10 mode active\n");
    assert_eq!(
        es.len(),
        1,
        "one error for the whole range:\n{}",
        render(&es)
    );
    assert_eq!(
        summary(&es[0]),
        (
            3,
            25,
            "`channel-group 10 mode active` needs `feature lacp`",
            Some("add `feature lacp`, or use `mode on` for a static port-channel")
        )
    );
    // Static port-channels need no feature.
    clean("interface e1/1-2\n  channel-group 10\n");
}

#[test]
fn members_configure_nothing_of_their_own() {
    let d =
        one_error("interface e1/1\n  no switchport\n  ip address 10.0.0.1/31\n  channel-group 1\n");
    assert_eq!(
        summary(&d),
        (
            3,
            14,
            "Ethernet1/1 is a member of port-channel1: configure addresses and switchport settings on port-channel1",
            Some("move `ip address 10.0.0.1/31` to `interface port-channel1`")
        )
    );
    let d =
        one_error("interface port-channel1\n  no switchport\ninterface e1/2\n  channel-group 1\n");
    assert_eq!(
        summary(&d),
        (
            4,
            17,
            "Ethernet1/2 is a Layer 2 port but port-channel1 is a routed port",
            Some("a member takes its port-channel's layer: give Ethernet1/2 and port-channel1 both `no switchport`, or neither")
        )
    );
    let d = one_error("vlan 10\ninterface port-channel1\n  switchport access vlan 10\ninterface e1/2\n  channel-group 1\n");
    assert_eq!(
        summary(&d),
        (
            5,
            17,
            "Ethernet1/2 is a member of port-channel1: configure addresses and switchport settings on port-channel1",
            Some("Ethernet1/2 has `switchport access vlan 1` but port-channel1 has `switchport access vlan 10`")
        )
    );
    // Members that agree with their port-channel are fine, whatever the order.
    clean("vlan 10\ninterface e1/2\n  switchport access vlan 10\n  channel-group 1\ninterface port-channel1\n  switchport access vlan 10\n");
}

#[test]
fn static_and_lacp_members_do_not_mix() {
    let d = one_error("feature lacp\ninterface e1/1\n  channel-group 1 mode active\ninterface e1/2\n  channel-group 1 mode passive\ninterface e1/3\n  channel-group 1\n");
    assert_eq!(
        summary(&d),
        (
            7,
            17,
            "port-channel1 mixes static and LACP members: Ethernet1/3 is `mode on` but Ethernet1/1 is `mode active`",
            Some("give every member of port-channel1 `mode on` (static), or every one `mode active` or `passive` (LACP)")
        )
    );
}

#[test]
fn lacp_port_settings_without_lacp_warn() {
    let p = ok("feature lacp\ninterface e1/1-2\n  lacp rate fast\ninterface e1/3\n  channel-group 2\n  lacp port-priority 1\n");
    assert_eq!(
        warnings(&p),
        [(
            3,
            3,
            "LACP settings have no effect on a port that runs no LACP (2 times: lines 3, 6)"
                .to_string()
        )]
    );
    assert_eq!(
        p.warnings[0].hint.as_deref(),
        Some("they apply to members of `channel-group N mode active|passive`")
    );
}

#[test]
fn vlans_that_are_not_created_warn() {
    let p = ok("feature interface-vlan\ninterface e1/1-2\n  switchport access vlan 10\ninterface e1/3\n  switchport mode trunk\n  switchport trunk native vlan 30\ninterface e1/4\n  switchport mode trunk\n  switchport access vlan 40\ninterface Vlan50\n");
    assert_eq!(
        warnings(&p),
        [
            (3, 26, "VLAN 10 is not created".to_string()),
            (6, 32, "VLAN 30 is not created".to_string()),
            (10, 11, "VLAN 50 is not created".to_string()),
        ]
    );
    let hints: Vec<&str> = p
        .warnings
        .iter()
        .filter_map(|d| d.hint.as_deref())
        .collect();
    assert_eq!(
        hints,
        [
            "add `vlan 10`: until then the port forwards nothing",
            "add `vlan 30`: until then the trunk forwards no untagged frames",
            "add `vlan 50`: until then Vlan50 stays down",
        ]
    );
    // Removing a VLAN brings the warning back.
    let p = ok("vlan 10\ninterface e1/1\n  switchport access vlan 10\nno vlan 10\n");
    assert_eq!(
        warnings(&p),
        [(3, 26, "VLAN 10 is not created".to_string())]
    );
}

#[test]
fn the_mac_address_table() {
    let c = clean("vlan 10\ninterface e1/1\n  switchport access vlan 10\ninterface po2\n  switchport mode trunk\n\
         mac address-table aging-time 0\nmac address-table static 0200.0000.0001 vlan 10 interface Ethernet 1/1\n\
         mac address-table static 02:00:00:00:00:02 vlan 10 interface port-channel2\n\
         mac address-table static 0200.0000.0001 vlan 10 interface e1/1\n")
        .config;
    assert_eq!(c.mac_table.aging_secs, 0);
    let statics: Vec<(String, u16, L2Port, usize)> = c
        .mac_table
        .statics
        .iter()
        .map(|m| (format!("{:02x?}", m.mac), m.vlan, m.target, m.line))
        .collect();
    assert_eq!(
        statics,
        [
            (
                "[02, 00, 00, 00, 00, 01]".to_string(),
                10,
                L2Port::Ethernet("e1/1".parse().unwrap()),
                9
            ),
            (
                "[02, 00, 00, 00, 00, 02]".to_string(),
                10,
                L2Port::PortChannel(2),
                8
            ),
        ]
    );
    let c = clean("vlan 10\ninterface e1/1\n  switchport access vlan 10\nmac address-table aging-time 10\nno mac address-table aging-time\nmac address-table static 0200.0000.0001 vlan 10 interface e1/1\nno mac address-table static 0200.0000.0001 vlan 10\n").config;
    assert_eq!(c.mac_table.aging_secs, DEFAULT_MAC_AGING_SECS);
    assert!(c.mac_table.statics.is_empty());
    let c = clean("mac address-table aging-time 1000000\n").config;
    assert_eq!(c.mac_table.aging_secs, 1_000_000);
}

#[test]
fn mac_address_table_errors() {
    for (text, col, message) in [
        (
            "mac address-table aging-time 5\n",
            30,
            "aging time 5 is out of range",
        ),
        (
            "mac address-table aging-time 1000001\n",
            30,
            "aging time 1000001 is out of range",
        ),
        (
            "mac address-table static 0100.5e00.0001 vlan 1 interface e1/1\n",
            26,
            "a static MAC entry must be a unicast address",
        ),
        (
            "mac address-table static 0200.0000.0001 vlan 0 interface e1/1\n",
            46,
            "VLAN 0 is out of range",
        ),
        (
            "mac address-table static 0200.0000.0001 vlan 1 interface e1/1-2\n",
            58,
            "a static MAC entry points at one port, not the range `e1/1-2`",
        ),
        (
            "mac address-table static 0200.0000.0001 vlan 1 interface Vlan1\n",
            58,
            "a static MAC entry points at an Ethernet port or a port-channel, not a Vlan interface",
        ),
        (
            "mac address-table static 0200.0000.0001 vlan 1\n",
            48,
            "missing `interface` or `drop`",
        ),
        (
            "mac address-table static 0200.0000.0001 vlan 1 port e1/1\n",
            48,
            "unknown keyword `port`",
        ),
    ] {
        let d = one_error(text);
        assert_eq!(
            (d.line, d.col, d.message.as_str()),
            (1, col, message),
            "{text}"
        );
    }
    assert_eq!(
        one_error("mac address-table aging-time 5\n")
            .hint
            .as_deref(),
        Some("the aging time is 0 (no aging) or 10-1000000 seconds")
    );
    let p = ok("mac address-table static 0200.0000.0001 vlan 1 drop\nmac address-table aging-time 300 vlan 10\n");
    assert_eq!(
        warnings(&p),
        [
            (
                1,
                48,
                "`mac address-table static … drop` is not modelled; skipped".to_string()
            ),
            (
                2,
                34,
                "`mac address-table aging-time … vlan` is not modelled; skipped".to_string()
            ),
        ]
    );
    assert!(p.config.mac_table.statics.is_empty());
    assert_eq!(p.config.mac_table.aging_secs, DEFAULT_MAC_AGING_SECS);
}

#[test]
fn static_macs_must_point_at_a_layer_2_port_of_their_vlan() {
    let head = "vlan 10,20\ninterface e1/1\n  switchport access vlan 10\ninterface e1/2\n  no switchport\n\
                interface e1/3\n  switchport mode trunk\n  switchport trunk allowed vlan 20\n\
                interface e1/4\n  switchport access vlan 10\n  channel-group 4\n";
    let cases = [
        (
            "interface e1/2",
            "static MAC 0200.0000.0001 points at Ethernet1/2, a routed port",
            "a static MAC entry needs a Layer 2 port in VLAN 10",
        ),
        (
            "interface e1/3",
            "static MAC 0200.0000.0001 in VLAN 10 points at Ethernet1/3, which is not in VLAN 10",
            "Ethernet1/3 trunks VLANs 20",
        ),
        (
            "interface e1/4",
            "static MAC 0200.0000.0001 points at Ethernet1/4, a member of port-channel4",
            "point it at the port-channel: `interface port-channel4`",
        ),
        (
            "interface port-channel9",
            "static MAC 0200.0000.0001 points at port-channel9, which does not exist",
            "create it with `interface port-channel9` or with `channel-group 9` on its members",
        ),
    ];
    for (target, message, hint) in cases {
        let text = format!("{head}mac address-table static 0200.0000.0001 vlan 10 {target}\n");
        let d = one_error(&text);
        assert_eq!(summary(&d), (12, 59, message, Some(hint)), "{target}");
    }
    let d = one_error(&format!(
        "{head}mac address-table static 0200.0000.0001 vlan 20 interface e1/1\n"
    ));
    assert_eq!(
        d.hint.as_deref(),
        Some("Ethernet1/1 is an access port of VLAN 10")
    );
    // A VLAN that is not created, and a port that is not configured, warn.
    let p = ok("mac address-table static 0200.0000.0001 vlan 30 interface e1/9\n");
    assert_eq!(
        warnings(&p),
        [
            (1, 46, "VLAN 30 is not created".to_string()),
            (
                1,
                59,
                "static MAC 0200.0000.0001 points at Ethernet1/9, which is not configured"
                    .to_string()
            ),
        ]
    );
}

#[test]
fn addresses_are_checked_across_ethernet_port_channels_and_svis() {
    let d = one_error("feature interface-vlan\ninterface Vlan1\n  ip address 10.0.0.1/24\ninterface po1\n  no switchport\n  ip address 10.0.0.1/31\n");
    assert_eq!(
        summary(&d),
        (
            6,
            14,
            "10.0.0.1 on port-channel1 is already assigned to Vlan1",
            Some("an address belongs to one interface (first configured on line 3)")
        )
    );
    let p = ok("feature interface-vlan\ninterface e1/1\n  no switchport\n  ip address 10.0.0.1/16\ninterface Vlan1\n  ip address 10.0.5.1/24\n");
    assert_eq!(
        warnings(&p),
        [(
            6,
            14,
            "10.0.5.0/24 on Vlan1 overlaps 10.0.0.0/16 on Ethernet1/1".to_string()
        )]
    );
    // An SVI's subnet makes a next hop connected.
    clean("feature interface-vlan\ninterface Vlan1\n  ip address 10.0.0.1/24\nip route 0.0.0.0/0 10.0.0.254\n");
    // MTU limits hold for every kind.
    let d = one_error("feature interface-vlan\ninterface Vlan1\n  mtu 9217\n");
    assert_eq!(
        summary(&d),
        (
            3,
            7,
            "MTU 9217 is out of range",
            Some("MTU must be 576-9216")
        )
    );
    let d = one_error("interface po1\n  mtu 100\n");
    assert_eq!((d.line, d.col), (2, 7));
    // A Layer 2 port-channel with an address draws the Ethernet warning.
    let p = ok("interface po1\n  ip address 10.0.0.1/24\n");
    assert_eq!(
        warnings(&p),
        [(
            2,
            14,
            "port-channel1 has IP addresses but is a Layer 2 port (switchport)".to_string()
        )]
    );
}

#[test]
fn existing_layer_2_ports_with_addresses_keep_loading() {
    // Addresses on a port without `no switchport` stay a warning, as before.
    let p = ok("interface e1/1\n  ip address 10.0.0.1/24\n");
    assert_eq!(
        warnings(&p),
        [(
            2,
            14,
            "Ethernet1/1 has IP addresses but is a Layer 2 port (switchport)".to_string()
        )]
    );
}

#[test]
fn canonical_layer_2_text() {
    let text = "\
interface e1/2
  channel-group 10 mode active
  lacp rate fast
  lacp port-priority 10
  switchport trunk allowed vlan 200,101-102
  switchport trunk native vlan 101
  switchport mode trunk
feature lacp
feature interface-vlan
lacp system-priority 4096
interface Vlan101
  ip address 10.0.1.1/28
mac address-table static 0200.0000.0001 vlan 101 interface po10
vlan 200,101
vlan 102
  name RAIL-2
interface po10
  switchport mode trunk
  switchport trunk native vlan 101
  switchport trunk allowed vlan 101-102,200
mac address-table aging-time 600
";
    let p = clean(text);
    let want = "\
feature interface-vlan
feature lacp

vlan 1,101-102,200
vlan 102
  name RAIL-2

mac address-table aging-time 600
mac address-table static 0200.0000.0001 vlan 101 interface port-channel10
lacp system-priority 4096

interface Vlan101
  ip address 10.0.1.1/28
  no shutdown

interface port-channel10
  switchport mode trunk
  switchport trunk native vlan 101
  switchport trunk allowed vlan 101-102,200
  no shutdown

interface Ethernet1/2
  switchport mode trunk
  switchport trunk native vlan 101
  switchport trunk allowed vlan 101-102,200
  lacp port-priority 10
  lacp rate fast
  channel-group 10 mode active
  no shutdown
";
    assert_eq!(p.config.to_string(), want);
    assert_eq!(clean(want).config, p.config);
}

#[test]
fn the_model_serializes() {
    let c = clean(MULTI_RAIL).config;
    let json = serde_json::to_value(&c).unwrap();
    assert_eq!(json["vlans"][1]["name"], "RAIL-1");
    assert_eq!(
        json["interfaces"][8]["switchport"]["trunk_allowed"],
        "101-102"
    );
    assert_eq!(json["interfaces"][9]["channel_group"]["mode"], "active");
    assert_eq!(json["port_channels"][0]["id"], 10);
    assert_eq!(json["svis"][1]["vlan"], 102);
}
