//! Top-level commands: `hostname`, `feature`, `version`, `interface`, static
//! routes, the headers of the QoS sections and the global commands, and the
//! known-but-unmodelled commands that are skipped with a warning.

use std::net::{IpAddr, Ipv4Addr};

use super::table::Spec;
use super::{bgp, global, l2, monitor, policy, qos, value, Args, Builder, Fail, FrameKind};
use crate::model::{
    parse_interface_spec, IfSpec, InterfaceName, IpPrefix, Ipv4Prefix, Ipv6Prefix, RouteTarget,
    StaticRoute,
};
use crate::validate::{At, IfKey};

/// Usage of `ip route`, shown in hints.
const IP_ROUTE: &str =
    "ip route PREFIX/LEN [INTERFACE] NEXT-HOP | INTERFACE | Null0 [vrf NAME] [track N] [name NAME] [tag N] [PREFERENCE]";
/// Usage of `ipv6 route`, shown in hints.
const IPV6_ROUTE: &str = "ipv6 route PREFIX/LEN [INTERFACE] NEXT-HOP | INTERFACE | Null0 [vrf NAME] [track N] [name NAME] [tag N] [PREFERENCE]";

/// The global `priority-flow-control` commands, shown in hints.
const PFC_GLOBAL: &str = "priority-flow-control watch-dog-interval on | off | watch-dog interval 100-1000 | watch-dog shutdown-multiplier 1-10 | auto-restore multiplier 0-100 | fixed-restore multiplier 0-100 | watch-dog ingress drop | forward | pause-quanta 1-65535";

/// Commands accepted at the top level.
pub(super) static TABLE: &[Spec] = &[
    Spec::run(&["hostname"], "hostname NAME", hostname),
    Spec::run(&["switchname"], "switchname NAME", hostname),
    Spec::run(&["no", "hostname"], "no hostname", no_hostname),
    Spec::run(&["no", "switchname"], "no switchname", no_hostname),
    Spec::run(&["feature"], "feature NAME", feature),
    Spec::run(&["no", "feature"], "no feature NAME", no_feature),
    Spec::accept(&["version"]),
    Spec::run(&["interface"], "interface NAME[, NAME ...]", interface),
    Spec::run(
        &["monitor", "session"],
        monitor::MONITOR_SESSION,
        monitor::monitor_session,
    ),
    Spec::run(
        &["no", "monitor", "session"],
        monitor::MONITOR_SESSION,
        monitor::no_monitor_session,
    ),
    Spec::run(&["ip", "route"], IP_ROUTE, ip_route),
    Spec::run(&["no", "ip", "route"], IP_ROUTE, no_ip_route),
    Spec::run(&["ipv6", "route"], IPV6_ROUTE, ipv6_route),
    Spec::run(&["no", "ipv6", "route"], IPV6_ROUTE, no_ipv6_route),
    Spec::run(&["class-map"], qos::CLASS_MAP_USAGE, qos::class_map),
    Spec::run(&["no", "class-map"], qos::CLASS_MAP_USAGE, qos::no_class_map),
    Spec::run(&["ip", "access-list"], "ip access-list NAME", qos::access_list),
    Spec::run(
        &["no", "ip", "access-list"],
        "no ip access-list NAME",
        qos::no_access_list,
    ),
    Spec::run(&["policy-map"], qos::POLICY_MAP_USAGE, qos::policy_map),
    Spec::run(&["no", "policy-map"], qos::POLICY_MAP_USAGE, qos::no_policy_map),
    Spec::run(&["system", "qos"], "system qos", qos::system_qos),
    Spec::run(&["no", "system", "qos"], "no system qos", qos::no_system_qos),
    Spec::run(
        &["priority-flow-control", "watch-dog-interval"],
        "priority-flow-control watch-dog-interval on | off",
        global::watchdog_interval,
    ),
    Spec::run(
        &["no", "priority-flow-control", "watch-dog-interval"],
        "no priority-flow-control watch-dog-interval",
        global::no_watchdog_interval,
    ),
    Spec::run(
        &["priority-flow-control", "watch-dog", "interval"],
        "priority-flow-control watch-dog interval 100-1000",
        global::watchdog_ms,
    ),
    Spec::run(
        &["no", "priority-flow-control", "watch-dog", "interval"],
        "no priority-flow-control watch-dog interval",
        global::no_timer,
    ),
    Spec::run(
        &["priority-flow-control", "watch-dog", "shutdown-multiplier"],
        "priority-flow-control watch-dog shutdown-multiplier 1-10",
        global::shutdown_multiplier,
    ),
    Spec::run(
        &["no", "priority-flow-control", "watch-dog", "shutdown-multiplier"],
        "no priority-flow-control watch-dog shutdown-multiplier",
        global::no_timer,
    ),
    Spec::run(
        &["priority-flow-control", "auto-restore", "multiplier"],
        "priority-flow-control auto-restore multiplier 0-100",
        global::auto_restore,
    ),
    Spec::run(
        &["no", "priority-flow-control", "auto-restore", "multiplier"],
        "no priority-flow-control auto-restore multiplier",
        global::no_timer,
    ),
    Spec::run(
        &["priority-flow-control", "fixed-restore", "multiplier"],
        "priority-flow-control fixed-restore multiplier 0-100",
        global::fixed_restore,
    ),
    Spec::run(
        &["no", "priority-flow-control", "fixed-restore", "multiplier"],
        "no priority-flow-control fixed-restore multiplier",
        global::no_timer,
    ),
    Spec::run(
        &["priority-flow-control", "watch-dog", "ingress"],
        "priority-flow-control watch-dog ingress drop|forward",
        global::watchdog_ingress,
    ),
    Spec::run(
        &["no", "priority-flow-control", "watch-dog", "ingress"],
        "no priority-flow-control watch-dog ingress",
        global::no_watchdog_ingress,
    ),
    Spec::run(
        &["priority-flow-control", "pause-quanta"],
        "priority-flow-control pause-quanta 1-65535",
        global::pause_quanta,
    ),
    Spec::run(
        &["no", "priority-flow-control", "pause-quanta"],
        "no priority-flow-control pause-quanta",
        global::no_pause_quanta,
    ),
    // The PFC family is modelled: a form NX-OS does not have is an error.
    Spec::run(&["priority-flow-control", "mode"], PFC_GLOBAL, global_pfc_mode),
    Spec::run(&["no", "priority-flow-control", "mode"], PFC_GLOBAL, global_pfc_mode),
    Spec::run(&["priority-flow-control", "receive"], PFC_GLOBAL, pfc_pause_direction),
    Spec::run(&["priority-flow-control", "send"], PFC_GLOBAL, pfc_pause_direction),
    Spec::run(&["priority-flow-control"], PFC_GLOBAL, global_pfc_other),
    Spec::run(&["no", "priority-flow-control"], PFC_GLOBAL, global_pfc_other),
    Spec::run(
        &["hardware", "profile", "dlb"],
        "hardware profile dlb",
        global::hardware_profile_dlb,
    ),
    Spec::run(
        &["no", "hardware", "profile", "dlb"],
        "no hardware profile dlb",
        global::no_hardware_profile_dlb,
    ),
    Spec::run(&["ip", "load-sharing"], global::LOAD_SHARING, global::load_sharing),
    Spec::run(
        &["no", "ip", "load-sharing"],
        "no ip load-sharing",
        global::no_load_sharing,
    ),
    Spec::run(&["lldp", "timer"], "lldp timer 5-254", global::lldp_timer),
    Spec::run(&["no", "lldp", "timer"], "no lldp timer", global::no_lldp_seconds),
    Spec::run(&["lldp", "holdtime"], "lldp holdtime 10-255", global::lldp_holdtime),
    Spec::run(
        &["no", "lldp", "holdtime"],
        "no lldp holdtime",
        global::no_lldp_seconds,
    ),
    Spec::run(&["lldp", "reinit"], "lldp reinit 1-10", global::lldp_reinit),
    Spec::run(&["no", "lldp", "reinit"], "no lldp reinit", global::no_lldp_seconds),
    Spec::run(
        &["lldp", "tlv-select"],
        "lldp tlv-select dcbxp | management-address | port-description | port-vlan | power-management | system-capabilities | system-description | system-name",
        global::lldp_tlv_select,
    ),
    Spec::run(
        &["no", "lldp", "tlv-select"],
        "no lldp tlv-select TLV",
        global::no_lldp_tlv_select,
    ),
    Spec::run(
        &["lldp", "tlv", "custom"],
        global::LLDP_TLV_CUSTOM,
        global::lldp_tlv_custom,
    ),
    Spec::run(
        &["no", "lldp", "tlv", "custom"],
        "no lldp tlv custom oui XX:XX:XX subtype 0-255",
        global::no_lldp_tlv_custom,
    ),
    Spec::run(
        &["buffer-size"],
        "buffer-size N bytes | kbytes | mbytes",
        global::buffer_size,
    ),
    Spec::run(&["no", "buffer-size"], "no buffer-size", global::no_buffer_size),
    Spec::run(&["dpdk", "eal-args"], global::DPDK_EAL_ARGS, global::dpdk_eal_args),
    Spec::run(
        &["no", "dpdk", "eal-args"],
        "no dpdk eal-args",
        global::no_dpdk_eal_args,
    ),
    Spec::run(&["router", "bgp"], bgp::ROUTER_BGP, bgp::router_bgp),
    Spec::run(&["no", "router", "bgp"], "no router bgp [ASN]", bgp::no_router_bgp),
    Spec::run(&["route-map"], policy::ROUTE_MAP, policy::route_map),
    Spec::run(&["no", "route-map"], "no route-map NAME [permit | deny SEQ]", policy::no_route_map),
    Spec::run(&["ip", "prefix-list"], policy::IP_PREFIX_LIST, policy::ip_prefix_list),
    Spec::run(
        &["no", "ip", "prefix-list"],
        "no ip prefix-list NAME [seq N]",
        policy::no_ip_prefix_list,
    ),
    Spec::run(&["ipv6", "prefix-list"], policy::IPV6_PREFIX_LIST, policy::ipv6_prefix_list),
    Spec::run(
        &["no", "ipv6", "prefix-list"],
        "no ipv6 prefix-list NAME [seq N]",
        policy::no_ipv6_prefix_list,
    ),
    Spec::run(&["vlan"], l2::VLAN_USAGE, l2::vlan),
    Spec::run(&["no", "vlan"], "no vlan 2-4094[,…]", l2::no_vlan),
    Spec::run(
        &["mac", "address-table", "aging-time"],
        "mac address-table aging-time 0 | 10-1000000",
        l2::mac_aging,
    ),
    Spec::run(
        &["no", "mac", "address-table", "aging-time"],
        "no mac address-table aging-time",
        l2::no_mac_aging,
    ),
    Spec::run(&["mac", "address-table", "static"], l2::STATIC_MAC, l2::static_mac),
    Spec::run(
        &["no", "mac", "address-table", "static"],
        "no mac address-table static XXXX.XXXX.XXXX vlan 1-4094 [interface …]",
        l2::no_static_mac,
    ),
    Spec::run(
        &["lacp", "system-priority"],
        "lacp system-priority 1-65535",
        l2::lacp_system_priority,
    ),
    Spec::run(
        &["no", "lacp", "system-priority"],
        "no lacp system-priority",
        l2::no_lacp_system_priority,
    ),
    Spec::run(&["bfd", "interval"], policy::BFD_INTERVAL, policy::global_bfd_interval),
    Spec::run(
        &["no", "bfd", "interval"],
        "no bfd interval",
        policy::no_global_bfd_interval,
    ),
    // Known NX-OS commands and sections that are not modelled (yet).
    Spec::skip(&["aaa"]),
    Spec::skip(&["banner"]),
    Spec::skip(&["bfd"]),
    Spec::skip(&["boot"]),
    Spec::skip(&["callhome"]),
    Spec::skip(&["cfs"]),
    Spec::skip(&["cli"]),
    Spec::skip(&["clock"]),
    Spec::skip(&["control-plane"]),
    Spec::skip(&["copp"]),
    Spec::skip(&["crypto"]),
    Spec::skip(&["errdisable"]),
    Spec::skip(&["evpn"]),
    Spec::skip(&["fabric"]),
    Spec::skip(&["feature-set"]),
    Spec::skip(&["hardware"]),
    Spec::skip(&["install"]),
    Spec::skip(&["ip", "as-path"]),
    Spec::skip(&["ip", "community-list"]),
    Spec::skip(&["ip", "dhcp"]),
    Spec::skip(&["ip", "domain-list"]),
    Spec::skip(&["ip", "domain-lookup"]),
    Spec::skip(&["ip", "domain-name"]),
    Spec::skip(&["ip", "host"]),
    Spec::skip(&["ip", "igmp"]),
    Spec::skip(&["ip", "name-server"]),
    Spec::skip(&["ip", "pim"]),
    Spec::skip(&["ip", "sla"]),
    Spec::skip(&["ipv6", "access-list"]),
    Spec::skip(&["key"]),
    Spec::skip(&["license"]),
    Spec::skip(&["line"]),
    Spec::skip(&["lldp"]),
    Spec::skip(&["logging"]),
    Spec::skip(&["mac", "address-table"]),
    Spec::skip(&["monitor"]),
    Spec::skip(&["ntp"]),
    Spec::skip(&["nv"]),
    Spec::skip(&["nxapi"]),
    Spec::skip(&["object-group"]),
    Spec::skip(&["password"]),
    Spec::skip(&["port-channel"]),
    Spec::skip(&["power"]),
    Spec::skip(&["ptp"]),
    Spec::skip(&["qos"]),
    Spec::skip(&["radius-server"]),
    Spec::skip(&["rmon"]),
    Spec::skip(&["role"]),
    Spec::skip(&["router", "eigrp"]),
    Spec::skip(&["router", "isis"]),
    Spec::skip(&["router", "ospf"]),
    Spec::skip(&["router", "ospfv3"]),
    Spec::skip(&["router"]),
    Spec::skip(&["service"]),
    Spec::skip(&["sflow"]),
    Spec::skip(&["snmp-server"]),
    Spec::skip(&["spanning-tree"]),
    Spec::skip(&["ssh"]),
    Spec::skip(&["system"]),
    Spec::skip(&["tacacs-server"]),
    Spec::skip(&["telnet"]),
    Spec::skip(&["track"]),
    Spec::skip(&["udld"]),
    Spec::skip(&["username"]),
    Spec::skip(&["vdc"]),
    Spec::skip(&["vlan", "access-map"]),
    Spec::skip(&["vlan", "configuration"]),
    Spec::skip(&["vlan", "dot1q"]),
    Spec::skip(&["vlan", "filter"]),
    Spec::skip(&["vpc"]),
    Spec::skip(&["vrf", "context"]),
    Spec::skip(&["vrf"]),
];

/// `hostname NAME` / `switchname NAME`.
fn hostname(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("host name")?;
    a.finish()?;
    value::hostname(tok.text).map_err(|e| Fail::value(tok, e))?;
    b.config.hostname = Some(tok.text.to_owned());
    Ok(())
}

/// `no hostname [NAME]`.
fn no_hostname(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.hostname = None;
    Ok(())
}

/// Features railyard models: the rest are kept (and printed back) but enable nothing.
const MODELLED_FEATURES: &[&str] = &["bfd", "bgp", "interface-vlan", "lacp", "lldp"];

/// Read a feature name: the rest of the line, one word or several
/// (`fabric forwarding`, `nv overlay`, `tacacs+`), recorded in lower case
/// with single spaces.
fn feature_name(a: &mut Args<'_>) -> Result<String, Fail> {
    a.peek().ok_or_else(|| a.missing("feature name"))?;
    let mut words = Vec::new();
    while let Some(tok) = a.next_token() {
        words.push(tok.text.to_ascii_lowercase());
    }
    Ok(words.join(" "))
}

/// `feature NAME`: recorded; a feature railyard does not model gets one
/// warning per name (an error when strict), never a rejected file.
fn feature(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.peek().map_or(0, |t| t.col);
    let name = feature_name(a)?;
    if !MODELLED_FEATURES.contains(&name.as_str()) {
        b.unmodelled_feature(&name, col);
    }
    b.config.features.insert(name);
    Ok(())
}

/// `no feature NAME`.
fn no_feature(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let name = feature_name(a)?;
    b.config.features.remove(&name);
    Ok(())
}

/// `interface NAME[, NAME ...]`: open an interface section for one or more ports.
///
/// A name may be any alias (`e1/1`), a range (`Ethernet1/1-4`, `e1/1 - 4`)
/// or a comma-separated list of both; `VlanN` and `port-channelN` (ranges
/// too) open an SVI or a port-channel section. Unmodelled interface types
/// open a section whose sub-commands are skipped.
fn interface(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((rest, col)) = a.rest() else {
        b.enter(FrameKind::SkipInterface);
        return Err(a.missing("interface name"));
    };
    let items = match interface_list(rest, col) {
        Ok(items) => items,
        Err(fail) => {
            b.enter(FrameKind::SkipInterface);
            return Err(fail);
        }
    };
    // Every item must be of one kind (as NX-OS requires of a range).
    let kind_of = |spec: &IfSpec| match spec {
        IfSpec::Other(_) => "other",
        other => other.kind(),
    };
    let first_kind = kind_of(&items[0].0);
    let mixed = items.iter().find(|(spec, _)| kind_of(spec) != first_kind);
    if let Some((spec, col)) = mixed {
        b.enter(FrameKind::SkipInterface);
        // Name Ethernet first, the kind that differs from it second.
        let (named, other) = if first_kind == "Ethernet" {
            ("Ethernet", spec.kind())
        } else if spec.kind() == "Ethernet" {
            let col = items[0].1;
            let first = items[0].0.kind();
            return Err(mixed_kinds("Ethernet", first, col));
        } else {
            (items[0].0.kind(), spec.kind())
        };
        return Err(mixed_kinds(named, other, *col));
    }
    match first_kind {
        "Ethernet" => {
            let mut members = Vec::new();
            for (spec, col) in items {
                let IfSpec::Ethernet(list) = spec else {
                    continue;
                };
                for name in list {
                    let index = b.interface_index(name);
                    b.mark_first(At::IfaceName(IfKey::Ethernet(index)), col);
                    if !members.contains(&index) {
                        members.push(index);
                    }
                }
            }
            b.enter(FrameKind::Interface(members));
        }
        "Vlan" => {
            let mut members = Vec::new();
            for (spec, col) in items {
                let IfSpec::Vlan(list) = spec else { continue };
                for vlan in list {
                    let index = b.svi_index(vlan);
                    b.mark_first(At::IfaceName(IfKey::Svi(index)), col);
                    if !members.contains(&index) {
                        members.push(index);
                    }
                }
            }
            b.enter(FrameKind::Svi(members));
        }
        "port-channel" => {
            let mut members = Vec::new();
            for (spec, col) in items {
                let IfSpec::PortChannel(list) = spec else {
                    continue;
                };
                for id in list {
                    let index = b.pc_index(id);
                    b.mark_first(At::IfaceName(IfKey::PortChannel(index)), col);
                    if !members.contains(&index) {
                        members.push(index);
                    }
                }
            }
            b.enter(FrameKind::PortChannel(members));
        }
        _ => {
            b.enter(FrameKind::SkipInterface);
            let mut seen: Vec<&'static str> = Vec::new();
            for (spec, col) in items {
                let kind = spec.kind();
                if !seen.contains(&kind) {
                    seen.push(kind);
                    b.skip("", format!("interface {kind}"), col, true);
                }
            }
        }
    }
    Ok(())
}

/// The error for an `interface` command naming interfaces of two kinds.
fn mixed_kinds(first: &str, other: &str, col: usize) -> Fail {
    Fail::new(
        col,
        format!("cannot configure {first} and {other} interfaces in one `interface` command"),
        Some(format!(
            "configure the {other} interface in its own section"
        )),
    )
}

/// Split an interface list into items, each with the column it starts at.
pub(super) fn interface_list(rest: &str, col: usize) -> Result<Vec<(IfSpec, usize)>, Fail> {
    let mut items = Vec::new();
    let mut offset = 0;
    for piece in rest.split(',') {
        let lead = piece.len() - piece.trim_start().len();
        let item_col = col + rest[..offset + lead].chars().count();
        offset += piece.len() + 1;
        let item = piece.trim();
        if item.is_empty() {
            return Err(Fail::new(
                item_col,
                "empty name in interface list",
                Some("separate names with single commas, e.g. Ethernet1/1-4, Ethernet1/8".into()),
            ));
        }
        let compact: String = item.chars().filter(|c| !c.is_whitespace()).collect();
        let spec = parse_interface_spec(&compact)
            .map_err(|e| Fail::new(item_col, e.message(), e.hint().map(str::to_owned)))?;
        items.push((spec, item_col));
    }
    Ok(items)
}

/// `ip route ...`.
fn ip_route(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    add_route(b, a, false)
}

/// `ipv6 route ...`.
fn ipv6_route(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    add_route(b, a, true)
}

/// `no ip route ...`.
fn no_ip_route(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    remove_route(b, a, false)
}

/// `no ipv6 route ...`.
fn no_ipv6_route(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    remove_route(b, a, true)
}

/// Add a static route; an exact duplicate is a warning and is not added again.
fn add_route(b: &mut Builder<'_>, a: &mut Args<'_>, v6: bool) -> Result<(), Fail> {
    let Some((prefix, target, col)) = route_args(b, a, v6)? else {
        return Ok(());
    };
    let family = if v6 { "ipv6" } else { "ip" };
    let existing = b
        .route_of
        .get(&(prefix, target.clone()))
        .and_then(|&i| b.config.routes.get(i));
    if let Some(first) = existing {
        let message = format!(
            "duplicate route `{family} route {prefix} {target}` (first on line {})",
            first.line
        );
        b.warn(col, message, Some("the repeated line is ignored".into()));
        return Ok(());
    }
    b.route_of
        .insert((prefix, target.clone()), b.config.routes.len());
    b.config.routes.push(StaticRoute {
        prefix,
        target,
        line: b.line,
        col,
    });
    Ok(())
}

/// Remove a static route; removing one that is not configured is a warning.
fn remove_route(b: &mut Builder<'_>, a: &mut Args<'_>, v6: bool) -> Result<(), Fail> {
    let Some((prefix, target, col)) = route_args(b, a, v6)? else {
        return Ok(());
    };
    // The route leaves `config.routes` when the parse ends, so a file that
    // removes many routes costs no more than one that adds them.
    match b.route_of.remove(&(prefix, target.clone())) {
        Some(_) => b.routes_removed = true,
        None => {
            let family = if v6 { "ipv6" } else { "ip" };
            b.warn(
                col,
                format!("no route `{family} route {prefix} {target}` to remove"),
                None,
            );
        }
    }
    Ok(())
}

/// Read a route's prefix, target and options.
///
/// Returns the column of the target token with them, or `None` when the
/// route goes through an unmodelled interface and was skipped.
fn route_args(
    b: &mut Builder<'_>,
    a: &mut Args<'_>,
    v6: bool,
) -> Result<Option<(IpPrefix, RouteTarget, usize)>, Fail> {
    let (family, other) = if v6 { ("IPv6", "ip") } else { ("IPv4", "ipv6") };
    let ptok = a.expect(&format!("{family} prefix"))?;
    let prefix = if v6 {
        if !ptok.text.contains(':') {
            return Err(Fail::new(
                ptok.col,
                format!("`{}` is not an IPv6 prefix", ptok.text),
                Some("IPv4 routes are configured with `ip route`".into()),
            ));
        }
        IpPrefix::V6(
            ptok.text
                .parse::<Ipv6Prefix>()
                .map_err(|e| Fail::value(ptok, e))?,
        )
    } else if ptok.text.contains(':') {
        return Err(Fail::new(
            ptok.col,
            format!("`{}` is not an IPv4 prefix", ptok.text),
            Some(format!("IPv6 routes are configured with `{other} route`")),
        ));
    } else {
        // `A.B.C.D M.M.M.M TARGET`: a mask is only read when a target follows it.
        let addr = ptok.text.parse::<Ipv4Addr>().ok();
        let mask_follows = a.peek().is_some_and(|t| t.text.parse::<Ipv4Addr>().is_ok())
            && a.line.tokens.len() > a.pos + 1;
        match addr {
            Some(addr) if mask_follows => {
                let mtok = a.expect("netmask")?;
                let len = value::netmask(mtok)?;
                IpPrefix::V4(Ipv4Prefix { addr, len })
            }
            _ => IpPrefix::V4(
                ptok.text
                    .parse::<Ipv4Prefix>()
                    .map_err(|e| Fail::value(ptok, e))?,
            ),
        }
    };
    if prefix.network() != prefix {
        return Err(Fail::new(
            ptok.col,
            format!("host bits set in prefix {prefix}"),
            Some(format!("the network address is {}", prefix.network())),
        ));
    }
    let ttok = a.expect("next hop, interface or Null0")?;
    let target = if ttok.text.eq_ignore_ascii_case("null0") {
        RouteTarget::Null0
    } else if let Ok(addr) = ttok.text.parse::<IpAddr>() {
        check_next_hop(prefix, addr, None, ttok.col)?;
        RouteTarget::NextHop {
            addr,
            interface: None,
        }
    } else if ttok.text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        let name = match parse_interface_spec(ttok.text).map_err(|e| Fail::value(ttok, e))? {
            IfSpec::Ethernet(names) if names.len() == 1 => names[0],
            IfSpec::Ethernet(_) => {
                return Err(Fail::new(
                    ttok.col,
                    format!(
                        "a route goes through one interface, not the range `{}`",
                        ttok.text
                    ),
                    Some("write one route per interface".into()),
                ))
            }
            other => {
                a.skip_rest();
                let kw = if v6 { "ipv6 route" } else { "ip route" };
                b.skip("", format!("{kw} via {}", other.kind()), ttok.col, true);
                return Ok(None);
            }
        };
        match a.peek().map(|t| (t, t.text.parse::<IpAddr>())) {
            Some((htok, Ok(addr))) => {
                a.next_token();
                check_next_hop(prefix, addr, Some(name), htok.col)?;
                RouteTarget::NextHop {
                    addr,
                    interface: Some(name),
                }
            }
            _ => RouteTarget::Interface(name),
        }
    } else {
        return Err(Fail::new(
            ttok.col,
            format!("invalid next hop `{}`", ttok.text),
            Some(format!(
                "expected an {family} address, an interface such as Ethernet1/1, or Null0"
            )),
        ));
    };
    let opts = route_options(a)?;
    let kw = if v6 { "ipv6 route" } else { "ip route" };
    if let Some((vrf, col)) = opts.vrf {
        if !vrf.eq_ignore_ascii_case("default") {
            b.warn(
                col,
                format!(
                    "`{kw} {prefix} {target} vrf {vrf}`: the next hop is in VRF {vrf}; railyard \
                     forwards in the default VRF only, so the route is left out"
                ),
                Some("routes that leak between VRFs are not modelled".into()),
            );
            return Ok(None);
        }
    }
    if let Some(col) = opts.track {
        b.warn(
            col,
            format!("`{kw} … track N`: object tracking is not modelled; the route is installed as if the tracked object were up"),
            None,
        );
    }
    Ok(Some((prefix, target, ttok.col)))
}

/// The route options railyard reads rather than discards.
#[derive(Default)]
struct RouteOptions {
    /// `vrf NAME` after the next hop (the VRF the next hop is resolved in)
    /// and its column.
    vrf: Option<(String, usize)>,
    /// Column of `track N`.
    track: Option<usize>,
}

/// Check a next-hop address against the route's family and for being a unicast host.
fn check_next_hop(
    prefix: IpPrefix,
    addr: IpAddr,
    interface: Option<InterfaceName>,
    col: usize,
) -> Result<(), Fail> {
    match (prefix, addr) {
        (IpPrefix::V4(_), IpAddr::V6(_)) | (IpPrefix::V6(_), IpAddr::V4(_)) => {
            let (nh, p) = if prefix.is_ipv4() {
                ("IPv6", "IPv4")
            } else {
                ("IPv4", "IPv6")
            };
            return Err(Fail::new(
                col,
                format!("next hop {addr} is {nh} but the prefix is {p}"),
                Some("a route's next hop must be of the prefix's address family".into()),
            ));
        }
        _ => {}
    }
    let unicast = match addr {
        IpAddr::V4(a) => {
            !(a.is_unspecified() || a.is_multicast() || a.is_broadcast() || a.is_loopback())
        }
        IpAddr::V6(a) => !(a.is_unspecified() || a.is_multicast() || a.is_loopback()),
    };
    if !unicast {
        return Err(Fail::new(
            col,
            format!("next hop {addr} is not a unicast address"),
            Some("a next hop is the address of a neighbouring router".into()),
        ));
    }
    if let IpAddr::V6(a) = addr {
        let link_local = a.segments()[0] & 0xffc0 == 0xfe80;
        if link_local && interface.is_none() {
            return Err(Fail::new(
                col,
                format!("link-local next hop {addr} needs an outgoing interface"),
                Some(format!(
                    "write it as `ipv6 route {prefix} Ethernet1/1 {addr}`"
                )),
            ));
        }
    }
    Ok(())
}

/// Read the options after a route's target, in any order: `vrf NAME` (the
/// next hop's VRF) and `track N` are returned; `name NAME`, `tag N` and a
/// numeric preference are checked and discarded.
fn route_options(a: &mut Args<'_>) -> Result<RouteOptions, Fail> {
    let mut opts = RouteOptions::default();
    while let Some(tok) = a.peek() {
        if a.eat("name").is_some() {
            a.expect("route name")?;
        } else if a.eat("tag").is_some() {
            let t = a.expect("tag value")?;
            let n = value::number(t, "tag", "a tag is a number 0-4294967295")?;
            if n > u64::from(u32::MAX) {
                return Err(Fail::new(
                    t.col,
                    format!("tag {n} is out of range"),
                    Some("a tag is a number 0-4294967295".into()),
                ));
            }
        } else if a.eat("vrf").is_some() {
            let v = a.expect("VRF name")?;
            opts.vrf = Some((v.text.to_owned(), tok.col));
        } else if a.eat("track").is_some() {
            let t = a.expect("track object number")?;
            let n = value::number(t, "track object", "a track object is a number 1-512")?;
            if !(1..=512).contains(&n) {
                return Err(Fail::new(
                    t.col,
                    format!("track object {n} is out of range"),
                    Some("a track object is a number 1-512".into()),
                ));
            }
            opts.track = Some(tok.col);
        } else if tok.text.bytes().all(|c| c.is_ascii_digit()) {
            a.next_token();
            let n = value::number(tok, "preference", "preference is 1-255")?;
            if !(1..=255).contains(&n) {
                return Err(Fail::new(
                    tok.col,
                    format!("route preference {n} is out of range"),
                    Some("preference (administrative distance) is 1-255".into()),
                ));
            }
        } else {
            a.finish()?;
            return Ok(opts);
        }
    }
    Ok(opts)
}

/// Global `priority-flow-control mode ...`: NX-OS sets the PFC mode per
/// interface only, so a global one is an error, not a skipped line.
fn global_pfc_mode(_: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    Err(Fail::new(
        col,
        "`priority-flow-control mode` is an interface command; NX-OS has no global PFC mode",
        Some(
            "write it under each interface: `interface Ethernet1/1` then `priority-flow-control mode on`"
                .into(),
        ),
    ))
}

/// `priority-flow-control receive|send ...`: not NX-OS syntax (PFC is
/// `priority-flow-control mode on`; link-level pause is `flowcontrol`).
pub(super) fn pfc_pause_direction(_: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.line.tokens[1];
    Err(Fail::new(
        tok.col,
        format!("NX-OS has no `priority-flow-control {}`", tok.text),
        Some(
            "PFC is enabled per interface with `priority-flow-control mode on`; link-level pause (802.3x) is `flowcontrol receive on` / `flowcontrol send on`"
                .into(),
        ),
    ))
}

/// Any other global `priority-flow-control ...`: the family is modelled, so
/// an unknown form is an error naming the forms there are.
fn global_pfc_other(_: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let at = a.pos;
    let col = a.line.tokens.get(at).map_or(a.line.end_col(), |t| t.col);
    let word = a.line.tokens.get(at).map_or("", |t| t.text);
    Err(Fail::new(
        col,
        if word.is_empty() {
            "incomplete `priority-flow-control` command".to_string()
        } else {
            format!("unknown `priority-flow-control` option `{word}`")
        },
        Some(format!("usage: {PFC_GLOBAL}")),
    ))
}
