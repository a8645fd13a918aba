//! From the parsed configuration to the dataplane's plain-data model.
//!
//! This is where names become indices, addresses become MACs, and per-line
//! routes become ECMP groups. The dataplane never sees configuration text.

use std::collections::BTreeMap;
use std::net::IpAddr;

use railyard_config::{Bind, Config, InterfaceName, IpPrefix, RouteTarget};
use railyard_dataplane::model::{InterfaceModel, NextHopModel, RouteModel, SwitchModel};
use railyard_dataplane::wire::MacAddr;

/// A compiled switch: the model plus where each interface's frames come from.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The dataplane model.
    pub model: SwitchModel,
    /// `binds[i]` is the backend of `model.interfaces[i]`, if configured.
    pub binds: Vec<Option<Bind>>,
    /// Things worth telling the user that do not stop the switch.
    pub warnings: Vec<String>,
}

/// The switch base MAC: a locally administered address derived from the
/// hostname, so every lab switch gets stable, distinct MACs without config.
pub fn base_mac(hostname: &str) -> MacAddr {
    // FNV-1a: tiny, stable across releases and platforms.
    let mut h: u32 = 0x811c_9dc5;
    for b in hostname.bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    let b = h.to_be_bytes();
    MacAddr([0x02, b[0], b[1], b[2], 0, 0])
}

/// The MAC an interface gets when `mac-address` does not set one: the base
/// MAC with the module and port in the last two bytes (breakout sub-ports
/// folded into the fourth).
pub fn interface_mac(base: MacAddr, name: &InterfaceName) -> MacAddr {
    let mut m = base.0;
    m[3] ^= name.sub.unwrap_or(0);
    m[4] = name.module;
    m[5] = name.port;
    MacAddr(m)
}

/// Reorders a compiled switch's interfaces to `order` (the running switch's),
/// renumbering route next hops to match; `None` when the interface sets differ.
pub fn reorder(mut c: Compiled, order: &[String]) -> Option<Compiled> {
    if c.model.interfaces.len() != order.len() {
        return None;
    }
    let from: Vec<usize> = order
        .iter()
        .map(|n| c.model.interfaces.iter().position(|i| &i.name == n))
        .collect::<Option<_>>()?;
    let mut new_index = vec![0u16; from.len()];
    for (new, old) in from.iter().enumerate() {
        new_index[*old] = new as u16;
    }
    let mut interfaces: Vec<Option<InterfaceModel>> =
        c.model.interfaces.drain(..).map(Some).collect();
    let mut binds: Vec<Option<Option<Bind>>> = c.binds.drain(..).map(Some).collect();
    for old in &from {
        c.model.interfaces.push(interfaces[*old].take()?);
        c.binds.push(binds[*old].take()?);
    }
    for r in &mut c.model.routes {
        for nh in &mut r.next_hops {
            match nh {
                NextHopModel::Interface(p) | NextHopModel::Gateway { port: Some(p), .. } => {
                    *p = new_index[usize::from(*p)];
                }
                _ => {}
            }
        }
    }
    Some(c)
}

/// Compiles a parsed configuration.
///
/// # Errors
/// Messages for routes that name an interface the configuration lacks.
pub fn compile(cfg: &Config) -> Result<Compiled, Vec<String>> {
    let hostname = cfg
        .hostname
        .clone()
        .unwrap_or_else(|| "railyard".to_string());
    let base = base_mac(&hostname);
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    let mut interfaces = Vec::new();
    let mut binds = Vec::new();
    for ifc in &cfg.interfaces {
        if !ifc.routed {
            warnings.push(format!(
                "{} has no `no switchport`: railyard routes every port, treating it as routed",
                ifc.name
            ));
        }
        let mac = ifc
            .mac
            .map(MacAddr)
            .unwrap_or_else(|| interface_mac(base, &ifc.name));
        let mut m = InterfaceModel::new(&ifc.name.to_string(), mac);
        m.ipv4 = ifc.ipv4.iter().map(|p| (p.addr, p.len)).collect();
        m.ipv6 = ifc.ipv6.iter().map(|p| (p.addr, p.len)).collect();
        m.mtu = ifc.mtu;
        m.admin_up = !ifc.shutdown;
        m.speed_mbps = ifc.speed_mbps;
        m.static_arp = ifc.arp.iter().map(|(a, mac)| (*a, MacAddr(*mac))).collect();
        m.static_nd = ifc.nd.iter().map(|(a, mac)| (*a, MacAddr(*mac))).collect();
        interfaces.push(m);
        binds.push(ifc.bind.clone());
    }
    let index = |name: &InterfaceName| {
        cfg.interfaces
            .iter()
            .position(|i| &i.name == name)
            .map(|i| i as u16)
    };
    // Routes for the same prefix form one ECMP group, in configuration order.
    let mut groups: BTreeMap<(IpAddr, u8), Vec<NextHopModel>> = BTreeMap::new();
    let mut order = Vec::new();
    for r in &cfg.routes {
        let (prefix, len) = match &r.prefix {
            IpPrefix::V4(p) => (IpAddr::V4(p.network().addr), p.len),
            IpPrefix::V6(p) => (IpAddr::V6(p.network().addr), p.len),
        };
        let hop = match &r.target {
            RouteTarget::Null0 => NextHopModel::Discard,
            RouteTarget::Interface(name) => match index(name) {
                Some(i) => NextHopModel::Interface(i),
                None => {
                    errors.push(format!(
                        "line {}: route via {name}, which is not configured",
                        r.line
                    ));
                    continue;
                }
            },
            RouteTarget::NextHop { addr, interface } => {
                let port = match interface {
                    Some(name) => match index(name) {
                        Some(i) => Some(i),
                        None => {
                            errors.push(format!(
                                "line {}: route via {name}, which is not configured",
                                r.line
                            ));
                            continue;
                        }
                    },
                    None => None,
                };
                NextHopModel::Gateway { addr: *addr, port }
            }
        };
        let key = (prefix, len);
        if !groups.contains_key(&key) {
            order.push(key);
        }
        let g = groups.entry(key).or_default();
        if !g.contains(&hop) {
            g.push(hop);
        }
    }
    let routes = order
        .into_iter()
        .filter_map(|k| {
            groups.remove(&k).map(|next_hops| RouteModel {
                prefix: k.0,
                len: k.1,
                next_hops,
            })
        })
        .collect();
    if !errors.is_empty() {
        return Err(errors);
    }
    Ok(Compiled {
        model: SwitchModel {
            hostname,
            interfaces,
            routes,
            ..SwitchModel::default()
        },
        binds,
        warnings,
    })
}
