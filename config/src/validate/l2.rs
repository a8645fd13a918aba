//! Checks of the Layer 2 model: VLANs, port-channels and their members,
//! LACP, SVIs and static MAC entries.
//!
//! Errors: `channel-group … mode active|passive` without `feature lacp`; a
//! port-channel member with addresses of its own, of the other layer than
//! its port-channel, or with other switchport settings; static (`mode on`)
//! and LACP members in one port-channel; a static MAC entry on a routed
//! port, on a port outside its VLAN, on a port-channel member, or on a
//! port-channel that does not exist.
//!
//! Warnings (NX-OS accepts these, but the result forwards nothing, or they
//! are read as if a feature were on): an access or native VLAN, an SVI's
//! VLAN or a static entry's VLAN that is not created; SVIs without `feature
//! interface-vlan`; other LACP settings without `feature lacp`; `lacp rate`
//! or `lacp port-priority` on a port that runs no LACP; a static entry on
//! an Ethernet port that is not configured.

use std::collections::{BTreeMap, HashSet};

use crate::diag::{Diagnostic, Severity, Sources};
use crate::l2::{Switchport, SwitchportMode};
use crate::mac::Mac;
use crate::model::{Config, Interface};
use crate::{L2Port, StaticMac};

use super::{At, GlobalItem, IfKey, Pos, SourceMap};

/// State of the Layer 2 checks.
struct Checker<'a> {
    config: &'a Config,
    map: &'a SourceMap,
    sources: &'a Sources<'a>,
    out: &'a mut Vec<Diagnostic>,
    /// (position, VLAN) pairs already reported as not created, so a range
    /// of ports configured on one line draws one warning.
    missing_reported: HashSet<(usize, usize, u16)>,
}

impl Checker<'_> {
    /// Record a diagnostic.
    fn report(&mut self, severity: Severity, pos: Pos, message: String, hint: Option<String>) {
        self.out
            .push(self.sources.diag(severity, pos, message, hint));
    }

    /// Where `key` was written, or else the line of the interface `fallback`.
    fn at_or(&self, key: &At, fallback: IfKey) -> Pos {
        self.map.at.get(key).copied().unwrap_or_else(|| {
            let c = self.config;
            let line = match fallback {
                IfKey::Ethernet(i) => c.interfaces[i].line,
                IfKey::Svi(i) => c.svis[i].line,
                IfKey::PortChannel(i) => c.port_channels[i].line,
            };
            Pos::new(line, 0)
        })
    }

    /// Index of port-channel `id` in the model.
    fn pc_index(&self, id: u16) -> Option<usize> {
        self.config.port_channels.iter().position(|p| p.id == id)
    }

    /// SVIs need `feature interface-vlan`, LACP modes `feature lacp`.
    fn features(&mut self) {
        let c = self.config;
        if !c.features.contains("interface-vlan") {
            let first = c.svis.iter().enumerate().min_by_key(|(_, s)| s.line);
            if let Some((i, svi)) = first {
                let pos = self.at_or(&At::IfaceName(IfKey::Svi(i)), IfKey::Svi(i));
                self.report(
                    Severity::Warning,
                    pos,
                    format!(
                        "`interface {}` without `feature interface-vlan`; read as if it were enabled",
                        svi.name()
                    ),
                    Some(
                        "add `feature interface-vlan`: NX-OS has no Vlan interfaces until the feature is enabled"
                            .into(),
                    ),
                );
            }
        }
        if c.features.contains("lacp") {
            return;
        }
        let mut lacp_modes = false;
        for (i, iface) in c.interfaces.iter().enumerate() {
            let Some(g) = iface.channel_group.filter(|g| g.mode.is_lacp()) else {
                continue;
            };
            lacp_modes = true;
            let pos = self.at_or(&At::ChannelMode(i), IfKey::Ethernet(i));
            self.report(
                Severity::Error,
                pos,
                format!(
                    "`channel-group {} mode {}` needs `feature lacp`",
                    g.id,
                    g.mode.keyword()
                ),
                Some("add `feature lacp`, or use `mode on` for a static port-channel".into()),
            );
        }
        if let Some(pos) = self.map.at.get(&At::Global(GlobalItem::Lacp)).copied() {
            if !lacp_modes {
                self.report(
                    Severity::Warning,
                    pos,
                    "LACP is configured but `feature lacp` is not enabled".into(),
                    Some("add `feature lacp`, or the settings have no effect".into()),
                );
            }
        }
    }

    /// Members agree with their port-channel; a port-channel's members are
    /// all static or all LACP.
    fn members(&mut self) {
        let c = self.config;
        let mut groups: BTreeMap<u16, Vec<usize>> = BTreeMap::new();
        for (i, iface) in c.interfaces.iter().enumerate() {
            let Some(g) = iface.channel_group else {
                continue;
            };
            groups.entry(g.id).or_default().push(i);
            let Some(pc) = self.pc_index(g.id).map(|p| &c.port_channels[p]) else {
                continue;
            };
            let pc_name = pc.name();
            let key = IfKey::Ethernet(i);
            let own = if let Some(p) = iface.ipv4.first() {
                Some((self.map.ipv4.get(&(key, p.addr)), format!("ip address {p}")))
            } else {
                iface.ipv6.first().map(|p| {
                    (
                        self.map.ipv6.get(&(key, p.addr)),
                        format!("ipv6 address {p}"),
                    )
                })
            };
            if let Some((pos, line)) = own {
                let pos = pos.copied().unwrap_or_else(|| Pos::new(iface.line, 0));
                self.report(
                    Severity::Error,
                    pos,
                    member_message(iface, &pc_name),
                    Some(format!("move `{line}` to `interface {pc_name}`")),
                );
                continue;
            }
            let pos = self.at_or(&At::ChannelGroup(i), key);
            if iface.routed != pc.routed {
                let layer = |routed| if routed { "routed" } else { "Layer 2" };
                self.report(
                    Severity::Error,
                    pos,
                    format!(
                        "{} is a {} port but {pc_name} is a {} port",
                        iface.name,
                        layer(iface.routed),
                        layer(pc.routed)
                    ),
                    Some(format!(
                        "a member takes its port-channel's layer: give {} and {pc_name} both `no switchport`, or neither",
                        iface.name
                    )),
                );
                continue;
            }
            if !iface.routed && iface.switchport != pc.switchport {
                let (mine, theirs) = first_difference(&iface.switchport, &pc.switchport);
                self.report(
                    Severity::Error,
                    pos,
                    member_message(iface, &pc_name),
                    Some(format!(
                        "{} has `{mine}` but {pc_name} has `{theirs}`",
                        iface.name
                    )),
                );
            }
        }
        for (id, members) in groups {
            let first = &c.interfaces[members[0]];
            let Some(first_mode) = first.channel_group.map(|g| g.mode) else {
                continue;
            };
            for &i in &members[1..] {
                let iface = &c.interfaces[i];
                let Some(mode) = iface.channel_group.map(|g| g.mode) else {
                    continue;
                };
                if mode.is_lacp() == first_mode.is_lacp() {
                    continue;
                }
                let pos = self.at_or(&At::ChannelMode(i), IfKey::Ethernet(i));
                self.report(
                    Severity::Error,
                    pos,
                    format!(
                        "port-channel{id} mixes static and LACP members: {} is `mode {}` but {} is `mode {}`",
                        iface.name,
                        mode.keyword(),
                        first.name,
                        first_mode.keyword()
                    ),
                    Some(format!(
                        "give every member of port-channel{id} `mode on` (static), or every one `mode active` or `passive` (LACP)"
                    )),
                );
            }
        }
    }

    /// A VLAN a port, SVI or static entry uses should exist.
    fn missing_vlan(&mut self, vlan: u16, pos: Pos, consequence: String) {
        if self.config.vlans.contains(vlan)
            || !self.missing_reported.insert((pos.line, pos.col, vlan))
        {
            return;
        }
        self.report(
            Severity::Warning,
            pos,
            format!("VLAN {vlan} is not created"),
            Some(format!("add `vlan {vlan}`: until then {consequence}")),
        );
    }

    /// The VLAN of every access port, the native VLAN of every trunk, the
    /// VLAN of every SVI.
    fn vlans(&mut self) {
        let c = self.config;
        let eth = c
            .interfaces
            .iter()
            .enumerate()
            .filter(|(_, i)| !i.routed && i.channel_group.is_none())
            .map(|(i, x)| (IfKey::Ethernet(i), &x.switchport));
        let pcs = c
            .port_channels
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.routed)
            .map(|(i, x)| (IfKey::PortChannel(i), &x.switchport));
        let ports: Vec<(IfKey, &Switchport)> = eth.chain(pcs).collect();
        for (key, sp) in ports {
            match sp.mode {
                SwitchportMode::Access => {
                    let pos = self.at_or(&At::AccessVlan(key), key);
                    self.missing_vlan(sp.access_vlan, pos, "the port forwards nothing".into());
                }
                SwitchportMode::Trunk => {
                    let pos = self.at_or(&At::NativeVlan(key), key);
                    self.missing_vlan(
                        sp.native_vlan,
                        pos,
                        "the trunk forwards no untagged frames".into(),
                    );
                }
            }
        }
        for (i, svi) in c.svis.iter().enumerate() {
            let pos = self.at_or(&At::IfaceName(IfKey::Svi(i)), IfKey::Svi(i));
            self.missing_vlan(svi.vlan, pos, format!("{} stays down", svi.name()));
        }
    }

    /// Static MAC entries point at Layer 2 ports of their VLAN.
    fn static_macs(&mut self) {
        let c = self.config;
        for m in &c.mac_table.statics {
            let vlan_pos = self
                .map
                .at
                .get(&At::StaticMacVlan(m.mac, m.vlan))
                .copied()
                .unwrap_or_else(|| Pos::new(m.line, 0));
            self.missing_vlan(m.vlan, vlan_pos, "the entry forwards nothing".into());
            let pos = self
                .map
                .at
                .get(&At::StaticMacPort(m.mac, m.vlan))
                .copied()
                .unwrap_or_else(|| Pos::new(m.line, 0));
            let (routed, switchport) = match m.target {
                L2Port::Ethernet(name) => {
                    let Some(iface) = c.interface_by_name(&name) else {
                        self.report(
                            Severity::Warning,
                            pos,
                            format!(
                                "static MAC {} points at {name}, which is not configured",
                                Mac(&m.mac)
                            ),
                            Some(format!("add an `interface {name}` section")),
                        );
                        continue;
                    };
                    if let Some(g) = iface.channel_group {
                        self.report(
                            Severity::Error,
                            pos,
                            format!(
                                "static MAC {} points at {name}, a member of port-channel{}",
                                Mac(&m.mac),
                                g.id
                            ),
                            Some(format!(
                                "point it at the port-channel: `interface port-channel{}`",
                                g.id
                            )),
                        );
                        continue;
                    }
                    (iface.routed, iface.switchport)
                }
                L2Port::PortChannel(id) => {
                    let Some(pc) = c.port_channel(id) else {
                        self.report(
                            Severity::Error,
                            pos,
                            format!(
                                "static MAC {} points at port-channel{id}, which does not exist",
                                Mac(&m.mac)
                            ),
                            Some(format!(
                                "create it with `interface port-channel{id}` or with `channel-group {id}` on its members"
                            )),
                        );
                        continue;
                    };
                    (pc.routed, pc.switchport)
                }
            };
            self.static_target(m, pos, routed, &switchport);
        }
    }

    /// The port of a static entry is Layer 2 and carries its VLAN.
    fn static_target(&mut self, m: &StaticMac, pos: Pos, routed: bool, sp: &Switchport) {
        let target = m.target;
        if routed {
            self.report(
                Severity::Error,
                pos,
                format!(
                    "static MAC {} points at {target}, a routed port",
                    Mac(&m.mac)
                ),
                Some(format!(
                    "a static MAC entry needs a Layer 2 port in VLAN {}",
                    m.vlan
                )),
            );
        } else if !sp.carries(m.vlan) {
            let carries = match sp.mode {
                SwitchportMode::Access => {
                    format!("{target} is an access port of VLAN {}", sp.access_vlan)
                }
                SwitchportMode::Trunk => {
                    format!("{target} trunks VLANs {}", sp.trunk_allowed)
                }
            };
            self.report(
                Severity::Error,
                pos,
                format!(
                    "static MAC {} in VLAN {} points at {target}, which is not in VLAN {}",
                    Mac(&m.mac),
                    m.vlan,
                    m.vlan
                ),
                Some(carries),
            );
        }
    }

    /// `lacp rate` and `lacp port-priority` apply to LACP members only.
    fn lacp_ports(&mut self) {
        let mut seen: HashSet<Pos> = HashSet::new();
        for (i, iface) in self.config.interfaces.iter().enumerate() {
            let set = iface.lacp_rate != crate::l2::LacpRate::Normal
                || iface.lacp_port_priority.is_some();
            let lacp = iface.channel_group.is_some_and(|g| g.mode.is_lacp());
            if !set || lacp {
                continue;
            }
            let pos = self.at_or(&At::LacpPort(i), IfKey::Ethernet(i));
            if !seen.insert(pos) {
                continue;
            }
            self.report(
                Severity::Warning,
                pos,
                "LACP settings have no effect on a port that runs no LACP".into(),
                Some("they apply to members of `channel-group N mode active|passive`".into()),
            );
        }
    }
}

/// The error about a member that has settings of its own.
fn member_message(iface: &Interface, pc: &str) -> String {
    format!(
        "{} is a member of {pc}: configure addresses and switchport settings on {pc}",
        iface.name
    )
}

/// The first setting in which two switchports differ, as each would write it.
fn first_difference(a: &Switchport, b: &Switchport) -> (String, String) {
    if a.mode != b.mode {
        let m = |s: &Switchport| format!("switchport mode {}", s.mode.keyword());
        return (m(a), m(b));
    }
    if a.access_vlan != b.access_vlan {
        let m = |s: &Switchport| format!("switchport access vlan {}", s.access_vlan);
        return (m(a), m(b));
    }
    if a.native_vlan != b.native_vlan {
        let m = |s: &Switchport| format!("switchport trunk native vlan {}", s.native_vlan);
        return (m(a), m(b));
    }
    let m = |s: &Switchport| format!("switchport trunk allowed vlan {}", s.trunk_allowed);
    (m(a), m(b))
}

/// Check the Layer 2 model; appends errors and warnings to `out`.
pub(super) fn check(
    config: &Config,
    map: &SourceMap,
    sources: &Sources<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let mut c = Checker {
        config,
        map,
        sources,
        out,
        missing_reported: HashSet::new(),
    };
    c.features();
    c.members();
    c.vlans();
    c.static_macs();
    c.lacp_ports();
}
