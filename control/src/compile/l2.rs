//! Layer 2 in the compiled model: which ports are switchports and what
//! VLANs they carry, the port-channels and SVIs as logical interfaces
//! after the physical ones, members pointing at their port-channel, and
//! the MAC table's aging and static entries.

use std::collections::HashMap;

use railyard_config::{self as cfg, Config, InterfaceName, L2Port, SwitchportMode};
use railyard_dataplane::model::{
    self as dp, InterfaceModel, Logical, MacTableModel, PortId, PortL2, StaticMac,
};
use railyard_dataplane::wire::MacAddr;

/// Whether the configuration uses Layer 2 at all: a VLAN besides 1, an
/// SVI, or a port with switchport settings. Only then is a port without
/// addresses and without `no switchport` the switchport NX-OS makes it;
/// otherwise it stays routed, as configurations written before railyard
/// switched expect.
pub fn uses_l2(cfg: &Config) -> bool {
    cfg.vlans.len() > 1
        || !cfg.svis.is_empty()
        || cfg
            .interfaces
            .iter()
            .any(|i| !i.routed && !i.switchport.is_default())
        || cfg
            .port_channels
            .iter()
            .any(|p| !p.routed && !p.switchport.is_default())
}

/// Whether `ifc` switches: not `no switchport`, no addresses, and Layer 2
/// in use (see [`uses_l2`]). A port-channel member is neither: its
/// port-channel is.
pub fn is_switchport(ifc: &cfg::Interface, l2: bool) -> bool {
    l2 && !ifc.routed && ifc.ipv4.is_empty() && ifc.ipv6.is_empty() && ifc.channel_group.is_none()
}

/// Whether port-channel `pc` switches (as [`is_switchport`]).
pub fn pc_switches(pc: &cfg::PortChannel, l2: bool) -> bool {
    l2 && !pc.routed && pc.ipv4.is_empty() && pc.ipv6.is_empty()
}

/// The VLANs a switchport carries, those that exist only (NX-OS keeps a
/// port in a VLAN that was never created inactive in it).
pub fn port_l2(cfg: &Config, sp: &cfg::Switchport) -> PortL2 {
    let exists = |v: u16| cfg.vlans.contains(v);
    match sp.mode {
        SwitchportMode::Access => PortL2 {
            untagged: exists(sp.access_vlan).then_some(sp.access_vlan),
            tagged: dp::VlanSet::empty(),
        },
        SwitchportMode::Trunk => {
            let mut allowed = dp::VlanSet::empty();
            for v in sp.trunk_allowed.iter().filter(|v| exists(*v)) {
                allowed.insert(v);
            }
            PortL2::trunk(&allowed, sp.native_vlan)
        }
    }
}

/// A port-channel's MAC when the switch gives it one: the base MAC with
/// the number where an Ethernet port has module and port (module 0 is
/// none of them).
fn port_channel_mac(base: MacAddr, id: u16) -> MacAddr {
    let mut m = base.0;
    m[4] = 0;
    m[5] = (id & 0xff) as u8;
    m[3] ^= 0x80 | (id >> 8) as u8;
    MacAddr(m)
}

/// Appends the port-channels, then the SVIs, to `interfaces` (and `None`
/// to `binds` for each: they have no backend), points each member at its
/// port-channel, and returns the MAC table's model. `index` maps the
/// Ethernet interfaces to their ports.
pub fn add_logical(
    cfg: &Config,
    base: MacAddr,
    interfaces: &mut Vec<InterfaceModel>,
    binds: &mut Vec<Option<cfg::Bind>>,
    index: &HashMap<InterfaceName, PortId>,
) -> MacTableModel {
    let l2 = uses_l2(cfg);
    let mut pc_port: HashMap<u16, PortId> = HashMap::new();
    for pc in &cfg.port_channels {
        let at = interfaces.len() as PortId;
        let members: Vec<PortId> = cfg
            .interfaces
            .iter()
            .filter(|i| i.channel_group.is_some_and(|g| g.id == pc.id))
            .filter_map(|i| index.get(&i.name).copied())
            .collect();
        for m in &members {
            interfaces[usize::from(*m)].member_of = Some(at);
        }
        let mut m = InterfaceModel::new(&pc.name(), port_channel_mac(base, pc.id));
        m.admin_up = !pc.shutdown && pc.vrf.is_none();
        m.mtu = pc.mtu;
        if pc.vrf.is_none() {
            m.ipv4 = pc.ipv4.iter().map(|p| (p.addr, p.len)).collect();
            m.ipv6 = pc.ipv6.iter().map(|p| (p.addr, p.len)).collect();
        }
        m.l2 = pc_switches(pc, l2).then(|| port_l2(cfg, &pc.switchport));
        m.logical = Some(Logical::PortChannel {
            number: pc.id,
            members,
        });
        // Its speed is its members' (for show; the members shape).
        m.speed_mbps = None;
        pc_port.insert(pc.id, at);
        interfaces.push(m);
        binds.push(None);
    }
    for svi in &cfg.svis {
        let mac = svi.mac.map(MacAddr).unwrap_or(base);
        let mut m = InterfaceModel::new(&svi.name(), mac);
        m.admin_up = !svi.shutdown && svi.vrf.is_none();
        m.mtu = svi.mtu;
        if svi.vrf.is_none() {
            m.ipv4 = svi.ipv4.iter().map(|p| (p.addr, p.len)).collect();
            m.ipv6 = svi.ipv6.iter().map(|p| (p.addr, p.len)).collect();
        }
        m.logical = Some(Logical::Svi { vlan: svi.vlan });
        interfaces.push(m);
        binds.push(None);
    }
    let statics = cfg
        .mac_table
        .statics
        .iter()
        .filter_map(|s| {
            let port = match s.target {
                L2Port::Ethernet(n) => index.get(&n).copied(),
                L2Port::PortChannel(id) => pc_port.get(&id).copied(),
            }?;
            Some(StaticMac {
                vlan: s.vlan,
                mac: MacAddr(s.mac),
                port,
            })
        })
        .collect();
    MacTableModel {
        aging_ns: u64::from(cfg.mac_table.aging_secs) * 1_000_000_000,
        statics,
        ..MacTableModel::default()
    }
}

/// The port-channel a member takes its QoS policies from: NX-OS applies a
/// port-channel's `service-policy` to every member, so a member without
/// its own takes the port-channel's.
pub fn with_channel_policies(cfg: &Config, ifc: &cfg::Interface) -> Option<cfg::Interface> {
    let g = ifc.channel_group?;
    let pc = cfg.port_channels.iter().find(|p| p.id == g.id)?;
    let mut i = ifc.clone();
    let fill = |own: &mut Option<String>, pc: &Option<String>| {
        if own.is_none() {
            own.clone_from(pc);
        }
    };
    fill(
        &mut i.service_policy_qos_input,
        &pc.service_policy_qos_input,
    );
    fill(
        &mut i.service_policy_queuing_output,
        &pc.service_policy_queuing_output,
    );
    fill(
        &mut i.service_policy_queuing_input,
        &pc.service_policy_queuing_input,
    );
    Some(i)
}
