//! Commands under `interface`: addressing, MTU, state, MAC, speed, static
//! neighbours, railyard's `bind`, QoS service policies, PFC, LLDP, their `no`
//! forms, and the known-but-unmodelled interface commands that are skipped
//! with a warning.
//!
//! A section may configure several interfaces at once (`interface
//! Ethernet1/1-4`); every command applies to each of them.

use std::net::{Ipv4Addr, Ipv6Addr};

use super::table::Spec;
use super::value::keyword;
use super::{l2, policy, qos, value, Args, Builder, Fail};
use crate::l2::Switchport;
use crate::model::{
    Bind, Config, Interface, Ipv4Prefix, Ipv6Prefix, RxHandover, DEFAULT_MTU, MAX_MTU, MIN_MTU,
};
use crate::qos::{
    DcbxVersion, PeerResponse, PfcMode, MAX_CABLE_METRES, MAX_RESPONSE_BITS, MAX_RESPONSE_NS,
};
use crate::validate::{At, GlobalItem, IfKey};

mod logical;
pub(super) use logical::{PORT_CHANNEL_TABLE, SVI_TABLE};

/// Speeds (Mb/s) `speed` accepts.
const SPEEDS: &[u32] = &[
    10, 100, 1000, 2500, 5000, 10000, 25000, 40000, 50000, 100000, 200000, 400000, 800000,
];

/// NX-OS's limit on description length.
const MAX_DESCRIPTION: usize = 254;

/// Usage of `priority-flow-control cable-length`.
const CABLE_LENGTH: &str = "priority-flow-control cable-length 0-100000 (metres)";
/// Usage of `priority-flow-control peer-response`.
const PEER_RESPONSE: &str = "priority-flow-control peer-response N bits | ns | us | ms";
/// Usage of `priority-flow-control software-response`.
const SOFTWARE_RESPONSE: &str = "priority-flow-control software-response N ns | us | ms";

/// Commands accepted under `interface`.
pub(super) static TABLE: &[Spec] = &[
    Spec::run(&["switchport"], "switchport", switchport),
    Spec::run(&["no", "switchport"], "no switchport", no_switchport),
    Spec::run(&["shutdown"], "shutdown", shutdown),
    Spec::run(&["no", "shutdown"], "no shutdown", no_shutdown),
    Spec::run(&["description"], "description TEXT", description),
    Spec::run(&["no", "description"], "no description", no_description),
    Spec::run(
        &["ip", "address"],
        "ip address A.B.C.D/LEN | A.B.C.D M.M.M.M [secondary]",
        ip_address,
    ),
    Spec::run(
        &["no", "ip", "address"],
        "no ip address [A.B.C.D/LEN | A.B.C.D M.M.M.M [secondary]]",
        no_ip_address,
    ),
    Spec::run(
        &["ipv6", "address"],
        "ipv6 address X:X::X/LEN",
        ipv6_address,
    ),
    Spec::run(
        &["no", "ipv6", "address"],
        "no ipv6 address [X:X::X/LEN]",
        no_ipv6_address,
    ),
    Spec::run(&["mtu"], "mtu 576-9216", mtu),
    Spec::run(&["no", "mtu"], "no mtu", no_mtu),
    Spec::run(&["mac-address"], "mac-address XXXX.XXXX.XXXX", mac_address),
    Spec::run(&["no", "mac-address"], "no mac-address", no_mac_address),
    Spec::run(&["speed"], "speed MBPS | auto", speed),
    Spec::run(&["no", "speed"], "no speed", no_speed),
    Spec::run(&["ip", "arp"], "ip arp A.B.C.D XXXX.XXXX.XXXX", ip_arp),
    Spec::run(
        &["no", "ip", "arp"],
        "no ip arp A.B.C.D [XXXX.XXXX.XXXX]",
        no_ip_arp,
    ),
    Spec::run(
        &["ipv6", "neighbor"],
        "ipv6 neighbor X:X::X XXXX.XXXX.XXXX",
        ipv6_neighbor,
    ),
    Spec::run(
        &["no", "ipv6", "neighbor"],
        "no ipv6 neighbor X:X::X [XXXX.XXXX.XXXX]",
        no_ipv6_neighbor,
    ),
    Spec::run(
        &["bind"],
        "bind af-packet IFNAME [ring MIB] [receive frames|blocks] | tap IFNAME | pcap FILE | ring NAME | dpdk PORT | af-xdp IFNAME [ring MIB]",
        bind,
    ),
    Spec::run(&["no", "bind"], "no bind", no_bind),
    Spec::run(
        &["service-policy"],
        qos::IFACE_SERVICE_POLICY,
        qos::iface_service_policy,
    ),
    Spec::run(
        &["no", "service-policy"],
        qos::IFACE_SERVICE_POLICY,
        qos::no_iface_service_policy,
    ),
    Spec::run(
        &["priority-flow-control", "mode"],
        "priority-flow-control mode auto | on | off [send-tlv]",
        pfc_mode,
    ),
    Spec::run(
        &["no", "priority-flow-control", "mode"],
        "no priority-flow-control mode",
        no_pfc_mode,
    ),
    Spec::run(
        &["priority-flow-control", "watch-dog-interval"],
        "priority-flow-control watch-dog-interval on | off",
        pfc_watchdog,
    ),
    Spec::run(
        &["no", "priority-flow-control", "watch-dog-interval"],
        "no priority-flow-control watch-dog-interval",
        no_pfc_watchdog,
    ),
    Spec::run(
        &["priority-flow-control", "watch-dog"],
        "priority-flow-control watch-dog",
        pfc_watchdog_on,
    ),
    Spec::run(
        &["no", "priority-flow-control", "watch-dog"],
        "no priority-flow-control watch-dog",
        no_pfc_watchdog,
    ),
    Spec::run(
        &["priority-flow-control", "cable-length"],
        CABLE_LENGTH,
        pfc_cable_length,
    ),
    Spec::run(
        &["no", "priority-flow-control", "cable-length"],
        "no priority-flow-control cable-length",
        no_pfc_cable_length,
    ),
    Spec::run(
        &["priority-flow-control", "peer-response"],
        PEER_RESPONSE,
        pfc_peer_response,
    ),
    Spec::run(
        &["no", "priority-flow-control", "peer-response"],
        "no priority-flow-control peer-response",
        no_pfc_peer_response,
    ),
    Spec::run(
        &["priority-flow-control", "software-response"],
        SOFTWARE_RESPONSE,
        pfc_software_response,
    ),
    Spec::run(
        &["no", "priority-flow-control", "software-response"],
        "no priority-flow-control software-response",
        no_pfc_software_response,
    ),
    Spec::run(
        &["priority-flow-control", "receive"],
        PFC_IFACE,
        super::top::pfc_pause_direction,
    ),
    Spec::run(
        &["priority-flow-control", "send"],
        PFC_IFACE,
        super::top::pfc_pause_direction,
    ),
    Spec::run(&["priority-flow-control"], PFC_IFACE, pfc_other),
    Spec::run(&["no", "priority-flow-control"], PFC_IFACE, pfc_other),
    Spec::run(&["lldp", "transmit"], "lldp transmit", lldp_transmit),
    Spec::run(
        &["no", "lldp", "transmit"],
        "no lldp transmit",
        no_lldp_transmit,
    ),
    Spec::run(&["lldp", "receive"], "lldp receive", lldp_receive),
    Spec::run(
        &["no", "lldp", "receive"],
        "no lldp receive",
        no_lldp_receive,
    ),
    Spec::run(
        &["lldp", "dcbx", "version"],
        "lldp dcbx version auto | ieee | cee",
        lldp_dcbx_version,
    ),
    Spec::run(
        &["no", "lldp", "dcbx", "version"],
        "no lldp dcbx version",
        no_lldp_dcbx_version,
    ),
    Spec::run(&["vrf", "member"], "vrf member NAME", vrf_member),
    Spec::run(
        &["no", "vrf", "member"],
        "no vrf member [NAME]",
        no_vrf_member,
    ),
    Spec::run(&["bfd", "interval"], policy::BFD_INTERVAL, policy::interface_bfd_interval),
    Spec::run(
        &["no", "bfd", "interval"],
        "no bfd interval",
        policy::no_interface_bfd_interval,
    ),
    Spec::run(&["switchport", "mode"], l2::SWITCHPORT_MODE, l2::switchport_mode),
    Spec::run(
        &["no", "switchport", "mode"],
        "no switchport mode",
        l2::no_switchport_mode,
    ),
    Spec::run(&["switchport", "access", "vlan"], l2::ACCESS_VLAN, l2::access_vlan),
    Spec::run(
        &["no", "switchport", "access", "vlan"],
        "no switchport access vlan",
        l2::no_access_vlan,
    ),
    Spec::run(
        &["switchport", "trunk", "allowed", "vlan"],
        l2::TRUNK_ALLOWED,
        l2::trunk_allowed,
    ),
    Spec::run(
        &["no", "switchport", "trunk", "allowed", "vlan"],
        "no switchport trunk allowed vlan",
        l2::no_trunk_allowed,
    ),
    Spec::run(
        &["switchport", "trunk", "native", "vlan"],
        l2::NATIVE_VLAN,
        l2::native_vlan,
    ),
    Spec::run(
        &["no", "switchport", "trunk", "native", "vlan"],
        "no switchport trunk native vlan",
        l2::no_native_vlan,
    ),
    Spec::run(&["channel-group"], l2::CHANNEL_GROUP, l2::channel_group),
    Spec::run(
        &["no", "channel-group"],
        "no channel-group [1-4096]",
        l2::no_channel_group,
    ),
    Spec::run(&["lacp", "rate"], "lacp rate fast | normal", l2::lacp_rate),
    Spec::run(&["no", "lacp", "rate"], "no lacp rate", l2::no_lacp_rate),
    Spec::run(
        &["lacp", "port-priority"],
        "lacp port-priority 1-65535",
        l2::lacp_port_priority,
    ),
    Spec::run(
        &["no", "lacp", "port-priority"],
        "no lacp port-priority",
        l2::no_lacp_port_priority,
    ),
    // Known NX-OS interface commands that are not modelled (yet).
    Spec::skip(&["bandwidth"]),
    Spec::skip(&["beacon"]),
    Spec::skip(&["bfd"]),
    Spec::skip(&["carrier-delay"]),
    Spec::skip(&["cdp"]),
    Spec::skip(&["delay"]),
    Spec::skip(&["duplex"]),
    Spec::skip(&["encapsulation"]),
    Spec::skip(&["evpn"]),
    Spec::skip(&["fec"]),
    Spec::skip(&["flowcontrol"]),
    Spec::skip(&["hardware"]),
    Spec::skip(&["inherit"]),
    Spec::skip(&["ip", "access-group"]),
    Spec::skip(&["ip", "dhcp"]),
    Spec::skip(&["ip", "directed-broadcast"]),
    Spec::skip(&["ip", "flow"]),
    Spec::skip(&["ip", "igmp"]),
    Spec::skip(&["ip", "local-proxy-arp"]),
    Spec::skip(&["ip", "ospf"]),
    Spec::skip(&["ip", "pim"]),
    Spec::skip(&["ip", "policy"]),
    Spec::skip(&["ip", "port"]),
    Spec::skip(&["ip", "proxy-arp"]),
    Spec::skip(&["ip", "redirects"]),
    Spec::skip(&["ip", "router"]),
    Spec::skip(&["ip", "unreachables"]),
    Spec::skip(&["ip", "verify"]),
    Spec::skip(&["ipv6", "dhcp"]),
    Spec::skip(&["ipv6", "link-local"]),
    Spec::skip(&["ipv6", "nd"]),
    Spec::skip(&["ipv6", "policy"]),
    Spec::skip(&["ipv6", "redirects"]),
    Spec::skip(&["ipv6", "router"]),
    Spec::skip(&["ipv6", "traffic-filter"]),
    Spec::skip(&["lacp"]),
    Spec::skip(&["link"]),
    Spec::skip(&["lldp"]),
    Spec::skip(&["load-interval"]),
    Spec::skip(&["logging"]),
    Spec::skip(&["mdix"]),
    Spec::skip(&["medium"]),
    Spec::skip(&["mpls"]),
    Spec::skip(&["negotiate"]),
    Spec::skip(&["priority-flow-control"]),
    Spec::skip(&["ptp"]),
    Spec::skip(&["rate-mode"]),
    Spec::skip(&["snmp"]),
    Spec::skip(&["spanning-tree"]),
    Spec::skip(&["storm-control"]),
    Spec::skip(&["switchport", "autostate"]),
    Spec::skip(&["switchport", "host"]),
    Spec::skip(&["switchport", "monitor"]),
    Spec::skip(&["switchport", "trunk"]),
    Spec::skip(&["udld"]),
    Spec::skip(&["vpc"]),
];

/// Usage of `ip address`.
const IP_ADDRESS: &str = "ip address A.B.C.D/LEN | A.B.C.D M.M.M.M [secondary]";
/// Usage of `no ip address`.
const NO_IP_ADDRESS: &str = "no ip address [A.B.C.D/LEN | A.B.C.D M.M.M.M [secondary]]";

/// Apply an infallible change to every Ethernet interface of the current section.
fn set(b: &mut Builder<'_>, mut f: impl FnMut(&mut Interface)) {
    for index in b.members() {
        f(&mut b.config.interfaces[index]);
    }
}

/// The settings every modelled kind of interface has, borrowed from one of them.
pub(super) struct Common<'c> {
    /// The interface's name, for messages.
    pub name: String,
    pub shutdown: &'c mut bool,
    pub description: &'c mut Option<String>,
    pub vrf: &'c mut Option<String>,
    pub ipv4: &'c mut Vec<Ipv4Prefix>,
    pub ipv6: &'c mut Vec<Ipv6Prefix>,
    pub mtu: &'c mut u16,
    /// `mac-address` (Ethernet ports and SVIs).
    pub mac: Option<&'c mut Option<[u8; 6]>>,
    /// Layer and VLAN settings (Ethernet ports and port-channels).
    pub layer2: Option<(&'c mut bool, &'c mut Switchport)>,
}

/// The common settings of interface `key`.
pub(super) fn common(config: &mut Config, key: IfKey) -> Common<'_> {
    match key {
        IfKey::Ethernet(i) => {
            let x = &mut config.interfaces[i];
            Common {
                name: x.name.to_string(),
                shutdown: &mut x.shutdown,
                description: &mut x.description,
                vrf: &mut x.vrf,
                ipv4: &mut x.ipv4,
                ipv6: &mut x.ipv6,
                mtu: &mut x.mtu,
                mac: Some(&mut x.mac),
                layer2: Some((&mut x.routed, &mut x.switchport)),
            }
        }
        IfKey::Svi(i) => {
            let x = &mut config.svis[i];
            Common {
                name: x.name(),
                shutdown: &mut x.shutdown,
                description: &mut x.description,
                vrf: &mut x.vrf,
                ipv4: &mut x.ipv4,
                ipv6: &mut x.ipv6,
                mtu: &mut x.mtu,
                mac: Some(&mut x.mac),
                layer2: None,
            }
        }
        IfKey::PortChannel(i) => {
            let x = &mut config.port_channels[i];
            Common {
                name: x.name(),
                shutdown: &mut x.shutdown,
                description: &mut x.description,
                vrf: &mut x.vrf,
                ipv4: &mut x.ipv4,
                ipv6: &mut x.ipv6,
                mtu: &mut x.mtu,
                mac: None,
                layer2: Some((&mut x.routed, &mut x.switchport)),
            }
        }
    }
}

/// Apply an infallible change to every interface, of any kind, of the current section.
pub(super) fn each(b: &mut Builder<'_>, mut f: impl FnMut(Common<'_>)) {
    for key in b.ports() {
        f(common(&mut b.config, key));
    }
}

/// `switchport`: make the port Layer 2.
fn switchport(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    each(b, |c| {
        if let Some((routed, _)) = c.layer2 {
            *routed = false;
        }
    });
    Ok(())
}

/// `no switchport`: make the port routed. As on NX-OS, its VLAN settings
/// are lost.
fn no_switchport(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    each(b, |c| {
        if let Some((routed, sp)) = c.layer2 {
            *routed = true;
            *sp = Switchport::default();
        }
    });
    Ok(())
}

/// `shutdown`.
fn shutdown(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    each(b, |c| *c.shutdown = true);
    Ok(())
}

/// `no shutdown`.
fn no_shutdown(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    each(b, |c| *c.shutdown = false);
    Ok(())
}

/// `description TEXT...`: the rest of the line, verbatim.
fn description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((text, col)) = a.rest() else {
        return Err(a.missing("description text"));
    };
    let len = text.chars().count();
    if len > MAX_DESCRIPTION {
        return Err(Fail::new(
            col,
            format!("description is {len} characters long"),
            Some(format!("NX-OS allows at most {MAX_DESCRIPTION}")),
        ));
    }
    each(b, |c| *c.description = Some(text.to_owned()));
    Ok(())
}

/// `no description [TEXT]`.
fn no_description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    each(b, |c| *c.description = None);
    Ok(())
}

/// Longest VRF name NX-OS accepts.
const MAX_VRF_NAME: usize = 32;

/// `vrf member NAME` (`default` is the default VRF).
fn vrf_member(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let name = value::name_up_to(a.expect("VRF name")?, "VRF", MAX_VRF_NAME)?;
    a.finish()?;
    let vrf = (name != "default").then_some(name);
    each(b, |c| *c.vrf = vrf.clone());
    Ok(())
}

/// `no vrf member [NAME]`: back to the default VRF.
fn no_vrf_member(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    each(b, |c| *c.vrf = None);
    Ok(())
}

/// Read `A.B.C.D/LEN` or `A.B.C.D M.M.M.M`.
fn ipv4_prefix_arg(a: &mut Args<'_>) -> Result<(Ipv4Prefix, usize), Fail> {
    let tok = a.expect("IPv4 address")?;
    let at = tok.col;
    if !tok.text.contains('/') {
        if let Ok(addr) = tok.text.parse::<Ipv4Addr>() {
            let mask = a.peek().filter(|m| m.text.parse::<Ipv4Addr>().is_ok());
            return match mask {
                Some(m) => {
                    a.next_token();
                    let len = value::netmask(m)?;
                    Ok((Ipv4Prefix { addr, len }, at))
                }
                None => Err(Fail::new(
                    tok.col,
                    format!("`{}` has no prefix length", tok.text),
                    Some(format!(
                        "write {0}/LEN or {0} M.M.M.M, e.g. {0}/24",
                        tok.text
                    )),
                )),
            };
        }
    }
    let prefix = tok
        .text
        .parse::<Ipv4Prefix>()
        .map_err(|e| Fail::value(tok, e))?;
    Ok((prefix, at))
}

/// Reject interface IPv4 addresses that cannot identify this host on its subnet.
fn check_ipv4_host(p: Ipv4Prefix, col: usize) -> Result<(), Fail> {
    let a = p.addr;
    if p.len == 0 {
        return Err(Fail::new(
            col,
            format!("prefix length 0 is not valid for an interface address ({p})"),
            Some("use a length of 1-32".into()),
        ));
    }
    if a.is_unspecified() || a.is_multicast() || a.is_broadcast() || a.is_loopback() {
        return Err(Fail::new(
            col,
            format!("{a} is not a unicast host address"),
            Some("an interface address must be a unicast address".into()),
        ));
    }
    if p.len <= 30 {
        let network = p.network().addr;
        let first_host = Ipv4Addr::from(u32::from(network) + 1);
        let hint = Some(format!("use a host address such as {first_host}/{}", p.len));
        if a == network {
            return Err(Fail::new(
                col,
                format!("{p} is the network address of its subnet"),
                hint,
            ));
        }
        if a == p.broadcast() {
            return Err(Fail::new(
                col,
                format!("{p} is the broadcast address of its subnet"),
                hint,
            ));
        }
    }
    Ok(())
}

/// `ip address A.B.C.D/LEN [secondary]`: set the primary address or add a secondary.
fn ip_address(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (prefix, at) = ipv4_prefix_arg(a)?;
    let secondary = a.eat("secondary");
    a.finish()?;
    check_ipv4_host(prefix, at)?;
    let pos = b.pos(at);
    for key in b.ports() {
        let iface = common(&mut b.config, key);
        let existing = iface.ipv4.iter().position(|p| p.addr == prefix.addr);
        match (secondary, existing) {
            (Some(tok), _) if iface.ipv4.is_empty() => {
                return Err(Fail::new(
                    tok.col,
                    format!(
                        "{} has no primary address to add a secondary to",
                        iface.name
                    ),
                    Some(format!(
                        "configure `ip address {prefix}` without `secondary` first"
                    )),
                ))
            }
            (Some(_), Some(0)) | (None, Some(1..)) => {
                let role = if secondary.is_some() {
                    "primary"
                } else {
                    "secondary"
                };
                return Err(Fail::new(
                    at,
                    format!(
                        "{} is already the {role} address of {}",
                        prefix.addr, iface.name
                    ),
                    Some(format!(
                        "remove it first with `no ip address {}`",
                        iface.ipv4[existing.unwrap_or(0)]
                    )),
                ));
            }
            (Some(_), Some(i)) => iface.ipv4[i] = prefix,
            (Some(_), None) => iface.ipv4.push(prefix),
            (None, _) if iface.ipv4.is_empty() => iface.ipv4.push(prefix),
            (None, _) => iface.ipv4[0] = prefix,
        }
        b.map.ipv4.insert((key, prefix.addr), pos);
    }
    Ok(())
}

/// `no ip address [A.B.C.D/LEN [secondary]]`: remove one address or all of them.
fn no_ip_address(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    if a.peek().is_none() {
        each(b, |c| c.ipv4.clear());
        return Ok(());
    }
    let (prefix, _) = ipv4_prefix_arg(a)?;
    a.eat("secondary");
    a.finish()?;
    each(b, |c| c.ipv4.retain(|p| p.addr != prefix.addr));
    Ok(())
}

/// `ipv6 address X:X::X/LEN`: add an address (replacing the length of one already there).
fn ipv6_address(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("IPv6 address")?;
    a.finish()?;
    let prefix = tok
        .text
        .parse::<Ipv6Prefix>()
        .map_err(|e| Fail::value(tok, e))?;
    if prefix.len == 0 {
        return Err(Fail::new(
            tok.col,
            format!("prefix length 0 is not valid for an interface address ({prefix})"),
            Some("use a length of 1-128".into()),
        ));
    }
    let addr = prefix.addr;
    if addr.is_unspecified() || addr.is_multicast() || addr.is_loopback() {
        return Err(Fail::new(
            tok.col,
            format!("{addr} is not a unicast host address"),
            Some("an interface address must be a unicast address".into()),
        ));
    }
    let pos = b.pos(tok.col);
    for key in b.ports() {
        let iface = common(&mut b.config, key);
        match iface.ipv6.iter().position(|p| p.addr == addr) {
            Some(i) => iface.ipv6[i] = prefix,
            None => iface.ipv6.push(prefix),
        }
        b.map.ipv6.insert((key, addr), pos);
    }
    Ok(())
}

/// `no ipv6 address [X:X::X/LEN]`.
fn no_ipv6_address(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some(tok) = a.next_token() else {
        each(b, |c| c.ipv6.clear());
        return Ok(());
    };
    a.finish()?;
    let prefix = tok
        .text
        .parse::<Ipv6Prefix>()
        .map_err(|e| Fail::value(tok, e))?;
    each(b, |c| c.ipv6.retain(|p| p.addr != prefix.addr));
    Ok(())
}

/// `mtu N`. The 576-9216 range is checked by validation.
fn mtu(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("MTU")?;
    a.finish()?;
    let hint = format!("MTU must be {MIN_MTU}-{MAX_MTU}");
    let n = value::number(tok, "MTU", &hint)?;
    let mtu = u16::try_from(n)
        .map_err(|_| Fail::new(tok.col, format!("MTU {n} is out of range"), Some(hint)))?;
    let pos = b.pos(tok.col);
    for key in b.ports() {
        *common(&mut b.config, key).mtu = mtu;
        b.map.mtu.insert(key, pos);
    }
    Ok(())
}

/// `no mtu [N]`.
fn no_mtu(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    each(b, |c| *c.mtu = DEFAULT_MTU);
    Ok(())
}

/// Read a MAC argument.
pub(super) fn mac_arg(a: &mut Args<'_>) -> Result<([u8; 6], usize), Fail> {
    let tok = a.expect("MAC address")?;
    let mac = value::mac(tok.text).map_err(|e| Fail::value(tok, e))?;
    if mac == [0; 6] || mac == [0xff; 6] {
        return Err(Fail::new(
            tok.col,
            format!("{} is not a usable MAC address", tok.text),
            Some("a MAC address must not be all zeros or broadcast".into()),
        ));
    }
    Ok((mac, tok.col))
}

/// `mac-address MAC`.
fn mac_address(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (mac, col) = mac_arg(a)?;
    a.finish()?;
    if mac[0] & 1 == 1 {
        return Err(Fail::new(
            col,
            "an interface MAC address must be unicast",
            Some("the least significant bit of the first octet must be 0".into()),
        ));
    }
    each(b, |c| {
        if let Some(m) = c.mac {
            *m = Some(mac);
        }
    });
    Ok(())
}

/// `no mac-address [MAC]`.
fn no_mac_address(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    each(b, |c| {
        if let Some(m) = c.mac {
            *m = None;
        }
    });
    Ok(())
}

/// `speed MBPS | auto`.
fn speed(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("speed")?;
    a.finish()?;
    let list: Vec<String> = SPEEDS.iter().map(u32::to_string).collect();
    let hint = format!("speed in Mb/s: {}, or auto", list.join(", "));
    let speed = if tok.text.eq_ignore_ascii_case("auto") {
        None
    } else {
        let n = value::number(tok, "speed", &hint)?;
        match SPEEDS.iter().find(|s| u64::from(**s) == n) {
            Some(s) => Some(*s),
            None => {
                return Err(Fail::new(
                    tok.col,
                    format!("unsupported speed {n}"),
                    Some(hint),
                ))
            }
        }
    };
    set(b, |i| i.speed_mbps = speed);
    Ok(())
}

/// `no speed [MBPS]`.
fn no_speed(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| i.speed_mbps = None);
    Ok(())
}

/// Read a neighbour's IPv4 address.
fn arp_addr(a: &mut Args<'_>) -> Result<(Ipv4Addr, usize), Fail> {
    let tok = a.expect("IPv4 address")?;
    let addr = tok.text.parse::<Ipv4Addr>().map_err(|_| {
        Fail::new(
            tok.col,
            format!("invalid IPv4 address `{}`", tok.text),
            Some("expected a dotted quad such as 10.0.0.2".into()),
        )
    })?;
    if addr.is_unspecified() || addr.is_multicast() || addr.is_broadcast() {
        return Err(Fail::new(
            tok.col,
            format!("{addr} cannot be a neighbour's address"),
            Some("a static ARP entry maps a unicast address".into()),
        ));
    }
    Ok((addr, tok.col))
}

/// `ip arp A.B.C.D MAC`: a static ARP entry (replaces one for the same address).
fn ip_arp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (addr, at) = arp_addr(a)?;
    let (mac, _) = mac_arg(a)?;
    a.finish()?;
    let pos = b.pos(at);
    for index in b.members() {
        let iface = &mut b.config.interfaces[index];
        match iface.arp.iter().position(|(ip, _)| *ip == addr) {
            Some(i) => iface.arp[i].1 = mac,
            None => iface.arp.push((addr, mac)),
        }
        b.map.arp.insert((index, addr), pos);
    }
    Ok(())
}

/// `no ip arp A.B.C.D [MAC]`.
fn no_ip_arp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (addr, _) = arp_addr(a)?;
    if a.peek().is_some() {
        mac_arg(a)?;
    }
    a.finish()?;
    set(b, |i| i.arp.retain(|(ip, _)| *ip != addr));
    Ok(())
}

/// Read a neighbour's IPv6 address.
fn nd_addr(a: &mut Args<'_>) -> Result<(Ipv6Addr, usize), Fail> {
    let tok = a.expect("IPv6 address")?;
    let addr = tok.text.parse::<Ipv6Addr>().map_err(|_| {
        Fail::new(
            tok.col,
            format!("invalid IPv6 address `{}`", tok.text),
            Some("expected an address such as 2001:db8::2".into()),
        )
    })?;
    if addr.is_unspecified() || addr.is_multicast() {
        return Err(Fail::new(
            tok.col,
            format!("{addr} cannot be a neighbour's address"),
            Some("a static neighbour entry maps a unicast address".into()),
        ));
    }
    Ok((addr, tok.col))
}

/// `ipv6 neighbor X:X::X MAC`: a static neighbour entry (replaces one for the same address).
fn ipv6_neighbor(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (addr, at) = nd_addr(a)?;
    let (mac, _) = mac_arg(a)?;
    a.finish()?;
    let pos = b.pos(at);
    for index in b.members() {
        let iface = &mut b.config.interfaces[index];
        match iface.nd.iter().position(|(ip, _)| *ip == addr) {
            Some(i) => iface.nd[i].1 = mac,
            None => iface.nd.push((addr, mac)),
        }
        b.map.nd.insert((index, addr), pos);
    }
    Ok(())
}

/// `no ipv6 neighbor X:X::X [MAC]`.
fn no_ipv6_neighbor(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (addr, _) = nd_addr(a)?;
    if a.peek().is_some() {
        mac_arg(a)?;
    }
    a.finish()?;
    set(b, |i| i.nd.retain(|(ip, _)| *ip != addr));
    Ok(())
}

/// `bind KIND TARGET`: attach the port to a backend.
fn bind(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let kind = a.expect("bind kind")?;
    let hint = format!("bind kinds are {}", Bind::KINDS.join(", "));
    let Some(probe) = Bind::from_parts(kind.text, "") else {
        return Err(Fail::new(
            kind.col,
            format!("unknown bind kind `{}`", kind.text),
            Some(hint),
        ));
    };
    let target = a.expect(match probe {
        Bind::Pcap(_) => "pcap file",
        Bind::Ring(_) => "ring name",
        Bind::Dpdk(_) => "DPDK port id or vdev",
        _ => "Linux interface name",
    })?;
    let (mut ring, mut handover) = (None, None);
    let options: &[&str] = match probe {
        Bind::AfPacket(_) => &["ring", "receive"],
        Bind::AfXdp(_) => &["ring"],
        _ => &[],
    };
    while let Some(t) = a.next_token() {
        if options.is_empty() {
            return Err(Fail::new(
                t.col,
                format!("unexpected `{}`", t.text),
                Some(format!(
                    "only `bind af-packet IFNAME [ring MIB] [receive frames|blocks]` and \
                     `bind af-xdp IFNAME [ring MIB]` take options; `bind {} {}` takes none",
                    kind.text, target.text
                )),
            ));
        }
        match keyword(t, options, &format!("{} option", kind.text))? {
            "ring" if ring.is_none() => ring = Some(ring_mib(a)?),
            "receive" if handover.is_none() => {
                let h = a.expect("`frames` or `blocks`")?;
                handover = Some(
                    match keyword(h, &["frames", "blocks"], "receive hand-over")? {
                        "frames" => RxHandover::Frames,
                        _ => RxHandover::Blocks,
                    },
                );
            }
            option => {
                return Err(Fail::new(
                    t.col,
                    format!("`{option}` given twice"),
                    Some(format!("give each {} option once", kind.text)),
                ))
            }
        }
    }
    a.finish()?;
    let bind = Bind::from_parts(kind.text, target.text)
        .ok_or_else(|| Fail::new(kind.col, format!("unknown bind kind `{}`", kind.text), None))?;
    if matches!(bind, Bind::AfPacket(_) | Bind::AfXdp(_) | Bind::Tap(_)) {
        value::linux_ifname(target.text).map_err(|e| Fail::value(target, e))?;
    }
    let pos = b.pos(kind.col);
    for index in b.members() {
        b.config.interfaces[index].bind = Some(bind.clone());
        b.config.interfaces[index].rx_ring_mib = ring;
        b.config.interfaces[index].rx_handover = handover;
        b.map.bind.insert(index, pos);
    }
    Ok(())
}

/// The size after `ring`, in MiB, within the range the kernel is asked for.
fn ring_mib(a: &mut Args<'_>) -> Result<u32, Fail> {
    let n = a.expect("receive ring size in MiB")?;
    let hint = format!("the receive ring is {MIN_RING_MIB} to {MAX_RING_MIB} MiB");
    let mib = value::number(n, "receive ring size", &hint)?;
    if !(u64::from(MIN_RING_MIB)..=u64::from(MAX_RING_MIB)).contains(&mib) {
        return Err(Fail::new(
            n.col,
            format!("receive ring size {mib} MiB is out of range"),
            Some(hint),
        ));
    }
    Ok(mib as u32)
}

/// Smallest receive ring `bind af-packet|af-xdp IF ring MIB` takes.
pub const MIN_RING_MIB: u32 = 1;
/// Largest: the kernel pins the ring's memory for the port's lifetime.
pub const MAX_RING_MIB: u32 = 1024;

/// `no bind [KIND TARGET]`.
fn no_bind(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| {
        i.bind = None;
        i.rx_ring_mib = None;
        i.rx_handover = None;
    });
    Ok(())
}

/// `priority-flow-control mode auto|on|off [send-tlv]`.
fn pfc_mode(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("`auto`, `on` or `off`")?;
    let mode = match keyword(t, &["auto", "on", "off"], "PFC mode")? {
        "auto" => PfcMode::Auto,
        "on" => PfcMode::On,
        _ => PfcMode::Off,
    };
    let send_tlv = match a.next_token() {
        Some(s) => {
            keyword(s, &["send-tlv"], "PFC mode option")?;
            true
        }
        None => false,
    };
    a.finish()?;
    let col = a.line.tokens[0].col;
    for index in b.members() {
        b.mark(At::IfacePfc(index), col);
        let i = &mut b.config.interfaces[index];
        i.pfc_mode = mode;
        i.pfc_send_tlv = send_tlv;
    }
    Ok(())
}

/// `no priority-flow-control mode [...]`.
fn no_pfc_mode(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| {
        i.pfc_mode = PfcMode::Auto;
        i.pfc_send_tlv = false;
    });
    Ok(())
}

/// `priority-flow-control watch-dog-interval on|off`.
fn pfc_watchdog(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("`on` or `off`")?;
    a.finish()?;
    let on = keyword(t, &["on", "off"], "setting")? == "on";
    set(b, |i| i.pfc_watchdog = Some(on));
    Ok(())
}

/// `priority-flow-control watch-dog`: the short form some configurations use for `watch-dog-interval on`.
fn pfc_watchdog_on(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    set(b, |i| i.pfc_watchdog = Some(true));
    Ok(())
}

/// `no priority-flow-control watch-dog[-interval] [...]`.
fn no_pfc_watchdog(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| i.pfc_watchdog = None);
    Ok(())
}

/// `lldp transmit`.
fn lldp_transmit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    set(b, |i| i.lldp_transmit = true);
    Ok(())
}

/// `no lldp transmit`.
fn no_lldp_transmit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    let col = a.line.tokens[0].col;
    b.mark_first(At::Global(GlobalItem::Lldp), col);
    set(b, |i| i.lldp_transmit = false);
    Ok(())
}

/// `lldp receive`.
fn lldp_receive(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    set(b, |i| i.lldp_receive = true);
    Ok(())
}

/// `no lldp receive`.
fn no_lldp_receive(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    let col = a.line.tokens[0].col;
    b.mark_first(At::Global(GlobalItem::Lldp), col);
    set(b, |i| i.lldp_receive = false);
    Ok(())
}

/// `lldp dcbx version auto|ieee|cee` (railyard extension).
fn lldp_dcbx_version(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let t = a.expect("`auto`, `ieee` or `cee`")?;
    a.finish()?;
    let k = keyword(t, &DcbxVersion::KEYWORDS, "DCBX version")?;
    let version = DcbxVersion::from_keyword(k).unwrap_or_default();
    if version != DcbxVersion::Auto {
        let col = a.line.tokens[0].col;
        b.mark_first(At::Global(GlobalItem::Lldp), col);
    }
    set(b, |i| i.dcbx_version = version);
    Ok(())
}

/// `no lldp dcbx version [...]`: back to auto.
fn no_lldp_dcbx_version(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| i.dcbx_version = DcbxVersion::Auto);
    Ok(())
}

/// `priority-flow-control cable-length METRES` (railyard extension): the
/// cable to the peer, whose round trip the default headroom covers.
fn pfc_cable_length(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("cable length in metres")?;
    a.finish()?;
    let n = value::ranged(tok, "cable length", 0, u64::from(MAX_CABLE_METRES))?;
    let metres = u32::try_from(n).unwrap_or(MAX_CABLE_METRES);
    set(b, |i| i.pfc_delays.cable_metres = Some(metres));
    Ok(())
}

/// `no priority-flow-control cable-length [...]`: back to the standard 100 m.
fn no_pfc_cable_length(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| i.pfc_delays.cable_metres = None);
    Ok(())
}

/// `priority-flow-control peer-response N bits|ns|us|ms` (railyard
/// extension): how long the peer takes to stop once a pause reaches it.
fn pfc_peer_response(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let n = a.expect("peer response")?;
    let unit = a.expect("unit (bits, ns, us or ms)")?;
    a.finish()?;
    const UNITS: &[&str] = &["bits", "ns", "us", "ms"];
    let response = match keyword(unit, UNITS, "unit")? {
        "bits" => PeerResponse::Bits(value::ranged(n, "peer response", 0, MAX_RESPONSE_BITS)?),
        _ => PeerResponse::Nanos(value::delay_ns(n, unit, "peer response", MAX_RESPONSE_NS)?),
    };
    set(b, |i| i.pfc_delays.peer_response = Some(response));
    Ok(())
}

/// `no priority-flow-control peer-response [...]`: back to the standard 3840 bit times.
fn no_pfc_peer_response(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| i.pfc_delays.peer_response = None);
    Ok(())
}

/// `priority-flow-control software-response N ns|us|ms` (railyard
/// extension): how long the poll loop of a software backend may go without
/// polling, which its default headroom covers.
fn pfc_software_response(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let n = a.expect("software response")?;
    let unit = a.expect("unit (ns, us or ms)")?;
    a.finish()?;
    let ns = value::delay_ns(n, unit, "software response", MAX_RESPONSE_NS)?;
    set(b, |i| i.pfc_delays.software_response_ns = Some(ns));
    Ok(())
}

/// `no priority-flow-control software-response [...]`: back to the standard 10 ms.
fn no_pfc_software_response(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    set(b, |i| i.pfc_delays.software_response_ns = None);
    Ok(())
}

/// The interface `priority-flow-control` commands, shown in hints.
const PFC_IFACE: &str = "priority-flow-control mode auto | on | off | watch-dog-interval on | off \
     | cable-length METRES | peer-response N bits|ns|us|ms | software-response N ns|us|ms";

/// Any other interface `priority-flow-control ...`: an error naming the forms there are.
fn pfc_other(_: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.peek();
    Err(Fail::new(
        tok.map_or(a.line.end_col(), |t| t.col),
        match tok {
            Some(t) => format!("unknown `priority-flow-control` option `{}`", t.text),
            None => "incomplete `priority-flow-control` command".to_string(),
        },
        Some(format!("usage: {PFC_IFACE}")),
    ))
}
