//! Layer 2 commands: `vlan` and its `name`, the global `mac address-table`
//! and `lacp system-priority`, and the interface commands `switchport
//! mode|access|trunk`, `channel-group`, `lacp rate|port-priority|min-links`,
//! with their `no` forms.

use super::interface::common;
use super::table::Spec;
use super::value::{self, keyword};
use super::{Args, Builder, Fail, FrameKind, Section};
use crate::l2::{
    parse_vlan_id, ChannelGroup, ChannelMode, L2Port, LacpRate, StaticMac, Switchport,
    SwitchportMode, VlanSet, DEFAULT_MAC_AGING_SECS, DEFAULT_VLAN, MAX_MAC_AGING_SECS,
    MAX_MIN_LINKS, MAX_PORT_CHANNEL, MAX_VLAN_NAME, MIN_MAC_AGING_SECS,
};
use crate::lexer::Token;
use crate::model::{parse_interface_spec, IfSpec};
use crate::validate::{At, GlobalItem, IfKey};

/// Usage of `vlan`.
pub(super) const VLAN_USAGE: &str = "vlan 1-4094[,…]  (e.g. vlan 101-102,200)";
/// Usage of `mac address-table static`.
pub(super) const STATIC_MAC: &str =
    "mac address-table static XXXX.XXXX.XXXX vlan 1-4094 interface Ethernet1/1 | port-channel1";
/// Usage of `switchport mode`.
pub(super) const SWITCHPORT_MODE: &str = "switchport mode access | trunk";
/// Usage of `switchport access vlan`.
pub(super) const ACCESS_VLAN: &str = "switchport access vlan 1-4094";
/// Usage of `switchport trunk allowed vlan`.
pub(super) const TRUNK_ALLOWED: &str =
    "switchport trunk allowed vlan LIST | add LIST | remove LIST | except LIST | all | none";
/// Usage of `switchport trunk native vlan`.
pub(super) const NATIVE_VLAN: &str = "switchport trunk native vlan 1-4094";
/// Usage of `channel-group`.
pub(super) const CHANNEL_GROUP: &str = "channel-group 1-4096 [force] [mode active | passive | on]";

/// Commands accepted under `vlan N`.
pub(super) static VLAN: &[Spec] = &[
    Spec::run(&["name"], "name TEXT", name),
    Spec::run(&["no", "name"], "no name", no_name),
    // Known NX-OS VLAN commands that are not modelled (yet).
    Spec::skip(&["media"]),
    Spec::skip(&["mode"]),
    Spec::skip(&["private-vlan"]),
    Spec::skip(&["shutdown"]),
    Spec::skip(&["state"]),
    Spec::skip(&["vn-segment"]),
];

/// Read a VLAN list from the rest of the line (`10`, `101-102,200`); a
/// failure points at the item at fault.
fn vlan_list(a: &mut Args<'_>, what: &str) -> Result<VlanSet, Fail> {
    let Some((text, col)) = a.rest() else {
        return Err(a.missing(what));
    };
    VlanSet::parse_at(text)
        .map_err(|(offset, e)| Fail::new(col + offset, e.message(), e.hint().map(str::to_owned)))
}

/// Read one VLAN ID.
fn vlan_id(tok: Token<'_>) -> Result<u16, Fail> {
    parse_vlan_id(tok.text).map_err(|e| Fail::value(tok, e))
}

/// `vlan LIST`: create the VLANs and open their section.
pub(super) fn vlan(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = match vlan_list(a, "VLAN ID") {
        Ok(set) => set,
        Err(fail) => {
            b.enter(FrameKind::Broken(Section::Vlan));
            return Err(fail);
        }
    };
    let line = b.line;
    b.open_vlans.clear();
    for id in set.iter() {
        b.config.vlans.get_or_insert(id, line);
        b.open_vlans.push(id);
    }
    b.enter(FrameKind::Section(Section::Vlan, 0, 0));
    Ok(())
}

/// `no vlan LIST`: delete the VLANs (never VLAN 1).
pub(super) fn no_vlan(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.peek().map_or(0, |t| t.col);
    let set = vlan_list(a, "VLAN ID")?;
    if set.contains(DEFAULT_VLAN) {
        return Err(Fail::new(
            col,
            "VLAN 1 is the default VLAN and cannot be deleted",
            Some("leave VLAN 1 out of the list, e.g. `no vlan 2-4094`".into()),
        ));
    }
    for id in set.iter() {
        b.config.vlans.remove(id);
    }
    Ok(())
}

/// `name TEXT` under `vlan N`: one word of up to 32 characters.
fn name(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("VLAN name")?;
    a.finish()?;
    let len = tok.text.chars().count();
    if len > MAX_VLAN_NAME {
        return Err(Fail::new(
            tok.col,
            format!("VLAN name is {len} characters long"),
            Some(format!("NX-OS allows at most {MAX_VLAN_NAME}")),
        ));
    }
    if b.section(Section::Vlan).is_none() {
        return Ok(());
    }
    if let [id] = b.open_vlans[..] {
        if let Some(v) = b.config.vlans.get_or_insert(id, b.line) {
            v.name = Some(tok.text.to_owned());
        }
        return Ok(());
    }
    let mut set = VlanSet::new();
    for id in &b.open_vlans {
        set.insert(*id);
    }
    Err(Fail::new(
        tok.col,
        format!(
            "`name` names one VLAN, but this section configures {} ({set})",
            b.open_vlans.len()
        ),
        Some("name each VLAN in its own section, e.g. `vlan 10` then `name RAIL-1`".into()),
    ))
}

/// `no name [TEXT]`: back to the default name.
fn no_name(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if b.section(Section::Vlan).is_none() {
        return Ok(());
    }
    for id in b.open_vlans.clone() {
        if let Some(v) = b.config.vlans.get_or_insert(id, b.line) {
            v.name = None;
        }
    }
    Ok(())
}

/// The hint for an aging time out of range.
const AGING_HINT: &str = "the aging time is 0 (no aging) or 10-1000000 seconds";

/// `mac address-table aging-time SECONDS`.
pub(super) fn mac_aging(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("aging time in seconds")?;
    let n = value::number(tok, "aging time", AGING_HINT)?;
    if let Some(v) = a.peek().filter(|t| t.text.eq_ignore_ascii_case("vlan")) {
        a.skip_rest();
        b.skip(
            "",
            "mac address-table aging-time … vlan".into(),
            v.col,
            true,
        );
        return Ok(());
    }
    a.finish()?;
    let ok = n == 0 || (u64::from(MIN_MAC_AGING_SECS)..=u64::from(MAX_MAC_AGING_SECS)).contains(&n);
    if !ok {
        return Err(Fail::new(
            tok.col,
            format!("aging time {n} is out of range"),
            Some(AGING_HINT.into()),
        ));
    }
    b.config.mac_table.aging_secs = u32::try_from(n).unwrap_or(DEFAULT_MAC_AGING_SECS);
    Ok(())
}

/// `no mac address-table aging-time [SECONDS]`.
pub(super) fn no_mac_aging(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.mac_table.aging_secs = DEFAULT_MAC_AGING_SECS;
    Ok(())
}

/// Read `MAC vlan N`, the key of a static entry, with the VLAN's column.
fn static_key(a: &mut Args<'_>) -> Result<([u8; 6], u16, usize), Fail> {
    let (mac, col) = super::interface::mac_arg(a)?;
    if mac[0] & 1 == 1 {
        return Err(Fail::new(
            col,
            "a static MAC entry must be a unicast address",
            Some("the least significant bit of the first octet must be 0".into()),
        ));
    }
    let v = a.expect("`vlan`")?;
    keyword(v, &["vlan"], "keyword")?;
    let tok = a.expect("VLAN")?;
    Ok((mac, vlan_id(tok)?, tok.col))
}

/// `mac address-table static MAC vlan N interface PORT`: pin a MAC to a
/// port (replacing an entry for the same MAC and VLAN).
pub(super) fn static_mac(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (mac, vlan, vlan_col) = static_key(a)?;
    let t = a.expect("`interface` or `drop`")?;
    if keyword(t, &["interface", "drop"], "keyword")? == "drop" {
        a.skip_rest();
        b.skip("", "mac address-table static … drop".into(), t.col, true);
        return Ok(());
    }
    let first = a.expect("interface")?;
    let mut text = first.text.to_owned();
    if !first.text.bytes().any(|c| c.is_ascii_digit()) {
        text.push_str(a.expect("interface number")?.text);
    }
    a.eat("auto-learn");
    a.finish()?;
    let target = match parse_interface_spec(&text).map_err(|e| Fail::value(first, e))? {
        IfSpec::Ethernet(names) if names.len() == 1 => L2Port::Ethernet(names[0]),
        IfSpec::PortChannel(ids) if ids.len() == 1 => L2Port::PortChannel(ids[0]),
        IfSpec::Ethernet(_) | IfSpec::PortChannel(_) => {
            return Err(Fail::new(
                first.col,
                format!("a static MAC entry points at one port, not the range `{text}`"),
                Some(format!("usage: {STATIC_MAC}")),
            ))
        }
        other => {
            return Err(Fail::new(
                first.col,
                format!(
                    "a static MAC entry points at an Ethernet port or a port-channel, not a {} interface",
                    other.kind()
                ),
                Some(format!("usage: {STATIC_MAC}")),
            ))
        }
    };
    let entry = StaticMac {
        mac,
        vlan,
        target,
        line: b.line,
    };
    let statics = &mut b.config.mac_table.statics;
    match statics.iter().position(|m| m.mac == mac && m.vlan == vlan) {
        Some(i) => statics[i] = entry,
        None => statics.push(entry),
    }
    b.mark(At::StaticMacVlan(mac, vlan), vlan_col);
    b.mark(At::StaticMacPort(mac, vlan), first.col);
    Ok(())
}

/// `no mac address-table static MAC vlan N [interface PORT]`.
pub(super) fn no_static_mac(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (mac, vlan, _) = static_key(a)?;
    a.skip_rest();
    b.config
        .mac_table
        .statics
        .retain(|m| !(m.mac == mac && m.vlan == vlan));
    Ok(())
}

/// Read an LACP priority, 1-65535.
fn priority(a: &mut Args<'_>) -> Result<u16, Fail> {
    let tok = a.expect("priority")?;
    a.finish()?;
    let n = value::ranged(tok, "LACP priority", 1, u64::from(u16::MAX))?;
    Ok(u16::try_from(n).unwrap_or(u16::MAX))
}

/// Record where the first LACP setting was, for the `feature lacp` check.
fn mark_lacp(b: &mut Builder<'_>, a: &Args<'_>) {
    let col = a.line.tokens[0].col;
    b.mark_first(At::Global(GlobalItem::Lacp), col);
}

/// `lacp system-priority N`.
pub(super) fn lacp_system_priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let p = priority(a)?;
    mark_lacp(b, a);
    b.config.lacp_system_priority = Some(p);
    Ok(())
}

/// `no lacp system-priority [N]`.
pub(super) fn no_lacp_system_priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.lacp_system_priority = None;
    Ok(())
}

/// The ports of the section, checked to be Layer 2: NX-OS refuses
/// switchport settings on a routed port.
fn layer2_ports(b: &mut Builder<'_>, a: &Args<'_>) -> Result<Vec<IfKey>, Fail> {
    let keys = b.ports();
    for &key in &keys {
        let c = common(&mut b.config, key);
        if c.layer2.as_ref().is_some_and(|(routed, _)| **routed) {
            return Err(Fail::new(
                a.line.tokens[0].col,
                format!(
                    "{} is a routed port (`no switchport`); switchport settings need a Layer 2 port",
                    c.name
                ),
                Some("write `switchport` before this line to make the port Layer 2".into()),
            ));
        }
    }
    Ok(keys)
}

/// Change the switchport settings of every port of the section.
fn each_switchport(b: &mut Builder<'_>, keys: &[IfKey], mut f: impl FnMut(&mut Switchport)) {
    for &key in keys {
        if let Some((_, sp)) = common(&mut b.config, key).layer2 {
            f(sp);
        }
    }
}

/// `switchport mode` values NX-OS has that railyard does not model.
const OTHER_MODES: &[&str] = &["dot1q-tunnel", "fabricpath", "fex-fabric", "private-vlan"];

/// `switchport mode access|trunk`.
pub(super) fn switchport_mode(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("`access` or `trunk`")?;
    if let Some(m) = OTHER_MODES
        .iter()
        .find(|m| tok.text.len() >= 2 && m.starts_with(&tok.text.to_ascii_lowercase()))
    {
        return Err(Fail::new(
            tok.col,
            format!("`switchport mode {m}` is not modelled"),
            Some("railyard models access and trunk ports".into()),
        ));
    }
    let mode = match keyword(tok, &["access", "trunk"], "switchport mode")? {
        "trunk" => SwitchportMode::Trunk,
        _ => SwitchportMode::Access,
    };
    a.finish()?;
    let keys = layer2_ports(b, a)?;
    each_switchport(b, &keys, |sp| sp.mode = mode);
    Ok(())
}

/// `no switchport mode [...]`: back to access.
pub(super) fn no_switchport_mode(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    let keys = b.ports();
    each_switchport(b, &keys, |sp| sp.mode = SwitchportMode::Access);
    Ok(())
}

/// `switchport access vlan N`.
pub(super) fn access_vlan(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("VLAN")?;
    a.finish()?;
    let id = vlan_id(tok)?;
    let keys = layer2_ports(b, a)?;
    each_switchport(b, &keys, |sp| sp.access_vlan = id);
    for key in keys {
        b.mark(At::AccessVlan(key), tok.col);
    }
    Ok(())
}

/// `no switchport access vlan [N]`: back to VLAN 1.
pub(super) fn no_access_vlan(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    let keys = b.ports();
    each_switchport(b, &keys, |sp| sp.access_vlan = DEFAULT_VLAN);
    Ok(())
}

/// `switchport trunk native vlan N`.
pub(super) fn native_vlan(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("VLAN")?;
    a.finish()?;
    let id = vlan_id(tok)?;
    let keys = layer2_ports(b, a)?;
    each_switchport(b, &keys, |sp| sp.native_vlan = id);
    for key in keys {
        b.mark(At::NativeVlan(key), tok.col);
    }
    Ok(())
}

/// `no switchport trunk native vlan [N]`: back to VLAN 1.
pub(super) fn no_native_vlan(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    let keys = b.ports();
    each_switchport(b, &keys, |sp| sp.native_vlan = DEFAULT_VLAN);
    Ok(())
}

/// What `switchport trunk allowed vlan` does to the allowed list.
#[derive(Clone, Copy)]
enum Allowed {
    Set,
    Add,
    Remove,
    Except,
}

/// `switchport trunk allowed vlan LIST | add LIST | remove LIST | except LIST | all | none`.
pub(super) fn trunk_allowed(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.peek().ok_or_else(|| a.missing("VLAN list"))?;
    let (op, list) = if tok.text.starts_with(|c: char| c.is_ascii_alphabetic()) {
        a.next_token();
        const OPS: &[&str] = &["add", "remove", "except", "all", "none"];
        match keyword(tok, OPS, "allowed-VLAN keyword")? {
            "all" => {
                a.finish()?;
                (Allowed::Set, VlanSet::all())
            }
            "none" => {
                a.finish()?;
                (Allowed::Set, VlanSet::new())
            }
            k => {
                let list = vlan_list(a, "VLAN list")?;
                let op = match k {
                    "add" => Allowed::Add,
                    "remove" => Allowed::Remove,
                    _ => Allowed::Except,
                };
                (op, list)
            }
        }
    } else {
        (Allowed::Set, vlan_list(a, "VLAN list")?)
    };
    let keys = layer2_ports(b, a)?;
    each_switchport(b, &keys, |sp| {
        sp.trunk_allowed = match op {
            Allowed::Set => list,
            Allowed::Add => sp.trunk_allowed.union(&list),
            Allowed::Remove => sp.trunk_allowed.difference(&list),
            Allowed::Except => VlanSet::all().difference(&list),
        };
    });
    Ok(())
}

/// `no switchport trunk allowed vlan [...]`: back to all VLANs.
pub(super) fn no_trunk_allowed(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    let keys = b.ports();
    each_switchport(b, &keys, |sp| sp.trunk_allowed = VlanSet::all());
    Ok(())
}

/// `channel-group N [force] [mode active|passive|on]`: join port-channel N.
pub(super) fn channel_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let n = a.expect("port-channel number")?;
    let id = value::ranged(n, "port-channel number", 1, u64::from(MAX_PORT_CHANNEL))?;
    let id = u16::try_from(id).unwrap_or(MAX_PORT_CHANNEL);
    a.eat("force");
    let (mut mode, mut mode_col) = (ChannelMode::On, n.col);
    if let Some(m) = a.next_token() {
        keyword(m, &["mode"], "channel-group option")?;
        let k = a.expect("`active`, `passive` or `on`")?;
        let word = keyword(k, &ChannelMode::KEYWORDS, "channel mode")?;
        mode = ChannelMode::from_keyword(word).unwrap_or_default();
        mode_col = k.col;
    }
    a.finish()?;
    for i in b.members() {
        b.config.interfaces[i].channel_group = Some(ChannelGroup { id, mode });
        b.mark(At::ChannelGroup(i), n.col);
        b.mark(At::ChannelMode(i), mode_col);
    }
    Ok(())
}

/// `no channel-group [N]`: leave the port-channel.
pub(super) fn no_channel_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    for i in b.members() {
        b.config.interfaces[i].channel_group = None;
    }
    Ok(())
}

/// `lacp rate fast|normal`.
pub(super) fn lacp_rate(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("`fast` or `normal`")?;
    a.finish()?;
    let rate = match keyword(tok, &["fast", "normal"], "LACP rate")? {
        "fast" => LacpRate::Fast,
        _ => LacpRate::Normal,
    };
    if rate == LacpRate::Fast {
        mark_lacp(b, a);
    }
    let col = a.line.tokens[0].col;
    for i in b.members() {
        b.config.interfaces[i].lacp_rate = rate;
        b.mark(At::LacpPort(i), col);
    }
    Ok(())
}

/// `no lacp rate [...]`: back to normal.
pub(super) fn no_lacp_rate(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    for i in b.members() {
        b.config.interfaces[i].lacp_rate = LacpRate::Normal;
    }
    Ok(())
}

/// `lacp port-priority N`.
pub(super) fn lacp_port_priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let p = priority(a)?;
    mark_lacp(b, a);
    let col = a.line.tokens[0].col;
    for i in b.members() {
        b.config.interfaces[i].lacp_port_priority = Some(p);
        b.mark(At::LacpPort(i), col);
    }
    Ok(())
}

/// `no lacp port-priority [N]`.
pub(super) fn no_lacp_port_priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    for i in b.members() {
        b.config.interfaces[i].lacp_port_priority = None;
    }
    Ok(())
}

/// `lacp min-links N` under a port-channel.
pub(super) fn lacp_min_links(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("number of links")?;
    a.finish()?;
    let n = value::ranged(tok, "minimum links", 1, u64::from(MAX_MIN_LINKS))?;
    let n = u8::try_from(n).unwrap_or(MAX_MIN_LINKS);
    mark_lacp(b, a);
    for key in b.ports() {
        if let IfKey::PortChannel(i) = key {
            b.config.port_channels[i].min_links = Some(n);
        }
    }
    Ok(())
}

/// `no lacp min-links [N]`.
pub(super) fn no_lacp_min_links(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    for key in b.ports() {
        if let IfKey::PortChannel(i) = key {
            b.config.port_channels[i].min_links = None;
        }
    }
    Ok(())
}
