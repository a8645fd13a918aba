//! From the parsed configuration to the dataplane's plain-data model.
//!
//! This is where names become indices, addresses become MACs, and per-line
//! routes become ECMP groups. The dataplane never sees configuration text.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use railyard_config as cfg;
use railyard_config::{Bind, Config, Diagnostic, InterfaceName, IpPrefix, RouteTarget, Severity};
use railyard_dataplane::model::{
    self as dp, AclEntryModel, AclRuleModel, InterfaceModel, Logical, NextHopModel, QueueModel,
    RouteModel, RouteSource, RuleTermModel, SwitchModel, ThresholdUnit, WredModel,
};
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

/// The delays a pause takes on an interface's link, in the dataplane's
/// terms: each one the interface configures
/// (`priority-flow-control cable-length`, `peer-response`,
/// `software-response`), else the standard term of [`dp::PfcDelays::default`].
pub fn pfc_delays(c: &cfg::PfcDelays) -> dp::PfcDelays {
    let d = dp::PfcDelays::default();
    dp::PfcDelays {
        cable_metres: c.cable_metres.map_or(d.cable_metres, u64::from),
        peer_response: match c.peer_response {
            Some(cfg::PeerResponse::Bits(b)) => dp::PeerResponse::Bits(b),
            Some(cfg::PeerResponse::Nanos(ns)) => dp::PeerResponse::Nanos(ns),
            None => d.peer_response,
        },
        software_response_ns: c.software_response_ns.unwrap_or(d.software_response_ns),
    }
}

/// Whether a software poll loop serves a port bound to `bind` (AF_PACKET,
/// AF_XDP, TAP, DPDK, ring): its frames are admitted, and its pauses sent,
/// only while the loop polls, so its headroom must also cover the
/// software response. Replay (`pcap`, or no bind) models the wire alone.
pub fn software_path(bind: Option<&Bind>) -> bool {
    matches!(
        bind,
        Some(Bind::AfPacket(_) | Bind::AfXdp(_) | Bind::Tap(_) | Bind::Dpdk(_) | Bind::Ring(_))
    )
}

/// The terms a port's headroom need is made of, in words, each saying
/// whether the configuration sets it: for warnings that must name them.
fn describe_terms(
    c: &cfg::PfcDelays,
    d: &dp::PfcDelays,
    software: bool,
    speed_mbps: Option<u32>,
    mtu: u16,
) -> String {
    let origin = |set: bool| if set { "configured" } else { "default" };
    let frame = u64::from(mtu) + dp::pfc::FRAME_OVERHEAD_BYTES;
    let peer = match d.peer_response {
        dp::PeerResponse::Bits(b) => format!("{b} bit times"),
        dp::PeerResponse::Nanos(ns) => crate::units::duration(ns),
    };
    let mut s = format!(
        "a {frame}-byte frame in flight at each end, {} m of cable ({}; {} round trip), \
         peer response {peer} ({}; {} bytes)",
        d.cable_metres,
        origin(c.cable_metres.is_some()),
        crate::units::duration(d.cable_round_trip_ns()),
        origin(c.peer_response.is_some()),
        d.peer_response.bytes_at(speed_mbps),
    );
    if software {
        s.push_str(&format!(
            ", software response {} ({})",
            crate::units::duration(d.software_response_ns),
            origin(c.software_response_ns.is_some())
        ));
    }
    s
}

/// A lossless group whose headroom cannot cover its link's response: the
/// wire's terms, and on a software path the software response too
/// ([`dp::PfcDelays`], as configured or standard, at the port's speed).
#[derive(Debug, Clone, PartialEq, Eq)]
struct ShortHeadroom {
    interface: String,
    group: usize,
    speed_mbps: u64,
    headroom: u64,
    needed: u64,
    /// The default, cut to the port buffer (else a configured `pause` line).
    capped: bool,
    /// A software poll loop serves the port.
    software: bool,
    /// The terms of the need, in words ([`describe_terms`]).
    terms: String,
}

/// One warning per kind of shortfall, naming every interface it touches
/// (a lab at 100 Gb/s would otherwise repeat it for every port).
fn headroom_warnings(short: &[ShortHeadroom]) -> Vec<String> {
    type Kind = (bool, bool, u64, u64, u64, String);
    let mut kinds: BTreeMap<Kind, Vec<String>> = BTreeMap::new();
    for s in short {
        kinds
            .entry((
                s.capped,
                s.software,
                s.speed_mbps,
                s.headroom,
                s.needed,
                s.terms.clone(),
            ))
            .or_default()
            .push(format!("{} qos-group {}", s.interface, s.group));
    }
    kinds
        .into_iter()
        .map(|((capped, software, speed, headroom, needed, terms), at)| {
            let at = at.join(", ");
            let gaps = if software {
                "; `show queuing interface` measures the real gaps"
            } else {
                ""
            };
            if capped {
                format!(
                    "{at}: at {speed} Mb/s a software path needs {needed} bytes of headroom \
                     ({terms}); the port buffer caps it at {headroom}. Give switch-switch links \
                     a speed the host carries, a larger buffer-size, or, where each worker has \
                     a core of its own, a shorter `priority-flow-control software-response`{gaps}"
                )
            } else {
                format!(
                    "{at}: headroom {headroom} bytes (buffer-size - pause-threshold) is less \
                     than the {needed} bytes a peer sends at {speed} Mb/s before a pause stops \
                     it ({terms}); lossless traffic may overflow. If these are not the link's, \
                     say so with `priority-flow-control cable-length`, `peer-response` or \
                     `software-response` on the interface{gaps}"
                )
            }
        })
        .collect()
}

/// The PFC model of an interface: qos-group n is priority n; PFC is on for
/// the lossless groups when the interface says `priority-flow-control mode
/// on`. `mode auto` (the default) compiles to off, as on NX-OS: PFC comes on
/// only once DCBX negotiation with a peer succeeds, which the live switch's
/// LLDP agent applies over this model (`lldp::runner`); replay and pcap runs
/// have no such peer. Thresholds come from the ingress `pause` lines, else
/// the defaults derived from the link's delays (`configured`, see
/// [`pfc_delays`]): [`dp::PgThresholds::software_default_for`] on a backend
/// a software poll loop serves (`software`),
/// [`dp::PgThresholds::default_for`] otherwise (replay, where the wire's
/// timing is modelled). Lossless groups (in `on` or `auto`) whose headroom
/// cannot cover the link's response (with the software response where a
/// poll loop serves the port) go to `short`.
fn pfc(
    eq: &cfg::EffectiveQos,
    m: &InterfaceModel,
    configured: &cfg::PfcDelays,
    software: bool,
    short: &mut Vec<ShortHeadroom>,
) -> dp::PfcModel {
    let enabled = if eq.pfc_mode == cfg::PfcMode::On {
        eq.lossless
    } else {
        0
    };
    let delays = pfc_delays(configured);
    let (default, capped) = if software {
        dp::PgThresholds::software_default_for(m.speed_mbps, m.mtu, m.buffer_bytes, &delays)
    } else {
        (
            dp::PgThresholds::default_for(m.speed_mbps, m.mtu, m.buffer_bytes, &delays),
            None,
        )
    };
    let needed = if software {
        delays.software_headroom_bytes(m.speed_mbps, m.mtu)
    } else {
        delays.wire_headroom_bytes(m.speed_mbps, m.mtu)
    };
    let may_pause = if eq.pfc_mode == cfg::PfcMode::Off {
        0
    } else {
        eq.lossless
    };
    for group in (0..8).filter(|g| may_pause & (1 << g) != 0) {
        let (headroom, capped) = match eq.ingress[group].pause {
            None if capped.is_some() => (default.headroom_bytes, true),
            Some(p) => (p.buffer_size.saturating_sub(p.xoff), false),
            None => continue,
        };
        if headroom < needed {
            short.push(ShortHeadroom {
                interface: m.name.clone(),
                group,
                speed_mbps: dp::pfc::speed_or_default(m.speed_mbps),
                headroom,
                needed,
                capped,
                software,
                terms: describe_terms(configured, &delays, software, m.speed_mbps, m.mtu),
            });
        }
    }
    dp::PfcModel {
        enabled_priorities: enabled,
        pg: std::array::from_fn(|g| match eq.ingress[g].pause {
            Some(p) => dp::PgThresholds {
                xoff_bytes: p.xoff,
                xon_bytes: p.xon,
                headroom_bytes: p.buffer_size.saturating_sub(p.xoff),
            },
            None => default,
        }),
        watchdog: eq.watchdog.enabled.then(|| {
            let t = eq.watchdog.timers;
            dp::WatchdogModel {
                interval_ns: u64::from(t.interval_ms) * 1_000_000,
                shutdown_multiplier: u32::from(t.shutdown_multiplier),
                restore_multiplier: u32::from(t.auto_restore_multiplier),
                fixed_restore_multiplier: u32::from(t.fixed_restore_multiplier),
                forward_ingress: false,
            }
        }),
        delays,
        ..dp::PfcModel::default()
    }
}

/// The note `check` (and every load) gives for an interface that carries
/// lossless qos-groups in `priority-flow-control mode auto`: PFC is off
/// there until a DCBX peer agrees, which replay and pcap runs never have.
fn auto_pfc_warning(name: &str, eq: &cfg::EffectiveQos) -> Option<String> {
    let carried = eq.classifier.groups() & eq.lossless;
    if eq.pfc_mode != cfg::PfcMode::Auto || carried == 0 {
        return None;
    }
    let groups: Vec<String> = (0..8u8)
        .filter(|g| carried & (1 << g) != 0)
        .map(|g| g.to_string())
        .collect();
    let plural = if groups.len() == 1 { "" } else { "s" };
    Some(format!(
        "{name}: lossless qos-group{plural} {} in priority-flow-control mode auto: PFC is off \
         until a DCBX peer agrees (LLDP with DCBX, NX-OS behaviour; replay and pcap runs have \
         no peer); say `priority-flow-control mode on` for PFC regardless",
        groups.join(", ")
    ))
}

/// One lossless class whose thresholds in force break xON < WRED min <
/// WRED max < xOFF: qos-group, xON, WRED min and max (bytes), xOFF, and
/// whether any of them is a default or counted from packets.
type Breach = (usize, u64, u64, u64, u64, bool, bool);

/// `check`'s view of xON < WRED min < WRED max < xOFF on every lossless
/// class of every interface, with the thresholds the dataplane runs:
/// the compiled [`dp::PgThresholds`] (defaults from
/// [`dp::PgThresholds::default_for`] where no `pause` line sets them) and
/// the queue's WRED. ECN must slow senders before PFC pauses the link.
/// Interfaces with the same breach share one warning.
#[derive(Default)]
struct ThresholdOrder {
    breaches: Vec<(Breach, Vec<String>)>,
}

impl ThresholdOrder {
    /// Checks interface `m` (compiled from `eq`). Explicit `pause` lines
    /// against a WRED in bytes are left to the configuration's own check,
    /// which points at the line.
    fn check(&mut self, m: &InterfaceModel, eq: &cfg::EffectiveQos) {
        let lossless = lossless_priorities(eq);
        for g in (0..8usize).filter(|g| lossless & (1 << g) != 0) {
            let Some(w) = m.queues[g].wred else { continue };
            let explicit = eq.ingress[g].pause.is_some();
            let packets = w.unit == ThresholdUnit::Packets;
            if explicit && !packets {
                continue;
            }
            // Packets counted as MTU-sized frames (MTU plus the Ethernet header).
            let per = if packets { u64::from(m.mtu) + 14 } else { 1 };
            let (min, max) = (w.min.saturating_mul(per), w.max.saturating_mul(per));
            let t = m.pfc.pg[g];
            if t.xon_bytes < min && min < max && max < t.xoff_bytes {
                continue;
            }
            let b = (g, t.xon_bytes, min, max, t.xoff_bytes, !explicit, packets);
            match self.breaches.iter_mut().find(|(k, _)| *k == b) {
                Some((_, names)) => names.push(m.name.clone()),
                None => self.breaches.push((b, vec![m.name.clone()])),
            }
        }
    }

    /// One warning per distinct breach, naming its interfaces.
    fn warnings(&self) -> Vec<String> {
        self.breaches
            .iter()
            .map(|((g, xon, min, max, xoff, default, packets), names)| {
                let source = if *default {
                    " (xON and xOFF are the defaults: no `pause` line sets them)"
                } else {
                    ""
                };
                let unit = if *packets {
                    " (WRED in packets, counted as MTU-sized frames)"
                } else {
                    ""
                };
                format!(
                    "qos-group {g} on {}: thresholds in force break xON < WRED min < WRED max < \
                     xOFF (xON {xon}, WRED {min}-{max}, xOFF {xoff} bytes){source}{unit}; ECN \
                     should slow senders before PFC pauses the link: give an input queuing \
                     policy `pause buffer-size … pause-threshold … resume-threshold …` with the \
                     resume threshold below WRED min and the pause threshold above WRED max",
                    names.join(", ")
                )
            })
            .collect()
    }
}

/// The lossless priorities `eq` would pause on: the lossless qos-groups
/// unless `priority-flow-control mode off`. In `auto` these are what DCBX
/// offers the peer and what is in force once it agrees (what the LLDP agent
/// advertises, and what `check` and `show queuing` describe).
pub fn lossless_priorities(eq: &cfg::EffectiveQos) -> u8 {
    if eq.pfc_mode == cfg::PfcMode::Off {
        0
    } else {
        eq.lossless
    }
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
    let position: HashMap<&str, usize> = c
        .model
        .interfaces
        .iter()
        .enumerate()
        .map(|(i, ifc)| (ifc.name.as_str(), i))
        .collect();
    let from: Vec<usize> = order
        .iter()
        .map(|n| position.get(n.as_str()).copied())
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
    for ifc in &mut c.model.interfaces {
        if let Some(p) = ifc.member_of.as_mut() {
            *p = new_index[usize::from(*p)];
        }
        if let Some(Logical::PortChannel { members, .. }) = ifc.logical.as_mut() {
            for p in members {
                *p = new_index[usize::from(*p)];
            }
        }
    }
    for s in &mut c.model.mac_table.statics {
        s.port = new_index[usize::from(s.port)];
    }
    if let Some(d) = c.model.load_balance.dlb.as_mut() {
        for p in &mut d.ports {
            *p = new_index[usize::from(*p)];
        }
        d.ports.sort_unstable();
        for (src, dst) in &mut d.pins {
            *src = new_index[usize::from(*src)];
            *dst = new_index[usize::from(*dst)];
        }
    }
    Some(c)
}

/// The hash seed when `ip load-sharing universal-id` is not set: derived from
/// the hostname like the base MAC, so two switches of a lab differ (and do
/// not polarise) while each is the same on every run.
pub fn default_universal_id(hostname: &str) -> u32 {
    let b = base_mac(hostname).0;
    u32::from_be_bytes([0, b[1], b[2], b[3]])
}

/// ECMP hash settings and DLB from `ip load-sharing` and `hardware profile dlb`.
fn load_balance(
    cfg: &Config,
    hostname: &str,
    index: impl Fn(&InterfaceName) -> Option<u16>,
) -> dp::LoadBalanceModel {
    let ls = &cfg.load_sharing;
    let hash = dp::EcmpHashModel {
        src_addr: ls.src_addr,
        dst_addr: ls.dst_addr,
        src_port: ls.src_port,
        dst_port: ls.dst_port,
        concatenation: ls.concatenation,
        rocev2_dest_qp: ls.rocev2_dest_qp,
        rotate: ls.rotate.unwrap_or(0),
        seed: ls
            .universal_id
            .unwrap_or_else(|| default_universal_id(hostname)),
    };
    let dlb = cfg.dlb.as_ref().map(|d| {
        let mut ports: Vec<u16> = match &d.interfaces {
            cfg::DlbInterfaces::All => (0..cfg.interfaces.len() as u16).collect(),
            cfg::DlbInterfaces::List(names) => names.iter().filter_map(&index).collect(),
        };
        ports.sort_unstable();
        dp::DlbModel {
            ports,
            mode: match d.mode {
                cfg::DlbMode::Flowlet => dp::DlbMode::Flowlet,
                cfg::DlbMode::PerPacket => dp::DlbMode::PerPacket,
            },
            mac: MacAddr(d.mac_address),
            flowlet_aging_ns: u64::from(d.flowlet_aging_us) * 1_000,
            levels: d.dre_thresholds_or_default(),
            decay_factor: d.decay_factor_or_default(),
            sampling_interval_ns: u64::from(d.sampling_interval_ns_or_default()),
            load_awareness: d.load_awareness,
            flowlet_table_size: d.flowlet_table_size as usize,
            pins: d
                .static_pinning
                .iter()
                .filter_map(|p| Some((index(&p.source)?, index(&p.destination)?)))
                .collect(),
        }
    });
    dp::LoadBalanceModel { hash, dlb }
}

fn prefix(p: &IpPrefix) -> (IpAddr, u8) {
    match p.network() {
        IpPrefix::V4(n) => (IpAddr::V4(n.addr), n.len),
        IpPrefix::V6(n) => (IpAddr::V6(n.addr), n.len),
    }
}

fn port_match(m: cfg::PortMatch) -> dp::PortMatch {
    match m {
        cfg::PortMatch::Eq(p) => dp::PortMatch::Eq(p.number),
        cfg::PortMatch::Neq(p) => dp::PortMatch::Neq(p.number),
        cfg::PortMatch::Lt(p) => dp::PortMatch::Lt(p.number),
        cfg::PortMatch::Gt(p) => dp::PortMatch::Gt(p.number),
        cfg::PortMatch::Range(a, b) => dp::PortMatch::Range(a.number, b.number),
    }
}

fn acl_rule(r: &cfg::AclRule) -> AclRuleModel {
    let terms = r
        .terms
        .iter()
        .map(|t| match t {
            cfg::RuleTerm::Dscp(set) => RuleTermModel::Dscp(*set),
            cfg::RuleTerm::Cos(set) => RuleTermModel::Cos(*set),
            cfg::RuleTerm::Access(acl) => RuleTermModel::Access(
                acl.entries
                    .iter()
                    .map(|e| AclEntryModel {
                        permit: e.permit,
                        protocol: e.protocol,
                        src: e.src.as_ref().map(prefix),
                        dst: e.dst.as_ref().map(prefix),
                        src_port: e.src_port.map(port_match),
                        dst_port: e.dst_port.map(port_match),
                        dscp: e.dscp,
                    })
                    .collect(),
            ),
        })
        .collect();
    AclRuleModel {
        terms,
        qos_group: r.qos_group,
    }
}

/// One egress queue's settings, in the dataplane's terms.
///
/// `q` is already resolved by the config crate (the default output policy
/// filled in, WRED presets expanded to their thresholds), so this only
/// changes representation; what the configuration leaves unset keeps
/// [`QueueModel::default`].
fn queue(q: &cfg::QueueConfig) -> QueueModel {
    let mut m = QueueModel {
        priority_level: q.priority_level,
        ..QueueModel::default()
    };
    match q.bandwidth {
        Some(cfg::Bandwidth::RemainingPercent(p)) => m.bandwidth_remaining_percent = Some(p),
        Some(cfg::Bandwidth::Percent(p)) => m.bandwidth_percent = Some(p),
        Some(cfg::Bandwidth::Rate(bps)) => m.min_bps = Some(bps),
        None => {}
    }
    if let Some(s) = q.shape {
        if s.min_bps > 0 && m.min_bps.is_none() {
            m.min_bps = Some(s.min_bps);
        }
        m.shape_max_bps = Some(s.max_bps);
    }
    if let Some(l) = q.queue_limit {
        m.limit = match l {
            cfg::QueueLimit::Bytes(n) => dp::QueueLimit::Bytes(n),
            cfg::QueueLimit::Packets(n) => dp::QueueLimit::Packets(n),
            cfg::QueueLimit::Percent(p) => dp::QueueLimit::Percent(p),
            cfg::QueueLimit::Dynamic(a) => dp::QueueLimit::Dynamic(a),
        };
    }
    m.wred = q.wred.map(|w| WredModel {
        min: w.min.value(),
        max: w.max.value(),
        // The parser rejects thresholds in two units, so `min` names both.
        unit: match w.min {
            cfg::Threshold::Packets(_) => ThresholdUnit::Packets,
            cfg::Threshold::Bytes(_) => ThresholdUnit::Bytes,
        },
        drop_probability_percent: w.drop_probability,
        weight: w.weight,
        ecn: w.ecn,
    });
    m
}

/// The error for a route through an interface the configuration lacks: the
/// parser only warns (the file is well formed), but there is no port to
/// send through. Rendered like a parse error, at the route's target.
fn unconfigured(cfg: &Config, r: &cfg::StaticRoute, name: &InterfaceName) -> Diagnostic {
    cfg.source.diagnostic(
        Severity::Error,
        r.line,
        r.col,
        format!(
            "route {} goes through {name}, which is not configured",
            r.prefix
        ),
        Some(format!(
            "add an `interface {name}` section, or route through a configured interface"
        )),
    )
}

/// Compiles a parsed configuration.
///
/// # Errors
/// A diagnostic (quoting the file the configuration was parsed from) for
/// each route that names an interface the configuration lacks.
pub fn compile(cfg: &Config) -> Result<Compiled, Vec<Diagnostic>> {
    let hostname = cfg
        .hostname
        .clone()
        .unwrap_or_else(|| "railyard".to_string());
    let base = base_mac(&hostname);
    let mut warnings = Vec::new();
    let mut errors = Vec::new();
    let mut interfaces = Vec::new();
    let mut binds = Vec::new();
    let mut short_headroom = Vec::new();
    let mut thresholds = ThresholdOrder::default();
    let mut in_vrfs: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let uses_l2 = l2::uses_l2(cfg);
    let switched: Vec<String> = cfg
        .interfaces
        .iter()
        .filter(|i| !i.routed && !l2::is_switchport(i, uses_l2) && i.channel_group.is_none())
        .map(|i| i.name.to_string())
        .collect();
    // One warning for all of them: a plain running-config has a hundred.
    match switched.len() {
        0 => {}
        1 => warnings.push(format!(
            "{} has no `no switchport`: railyard routes every port, treating it as routed",
            switched[0]
        )),
        n => warnings.push(format!(
            "{n} interfaces have no `no switchport` ({}): railyard routes every port, treating them as routed",
            switched.join(", ")
        )),
    }
    for ifc in &cfg.interfaces {
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
        m.l2 = l2::is_switchport(ifc, uses_l2).then(|| l2::port_l2(cfg, &ifc.switchport));
        let eq = match l2::with_channel_policies(cfg, ifc) {
            Some(member) => cfg.effective_qos_of(&member),
            None => cfg.effective_qos_of(ifc),
        };
        m.dscp_to_qos_group = eq.classifier.dscp_table;
        m.cos_to_qos_group = eq.classifier.cos_table;
        m.acl_rules = eq.classifier.acl_rules.iter().map(acl_rule).collect();
        m.queues = std::array::from_fn(|q| queue(&eq.egress[q]));
        if let Some(b) = cfg.buffer_bytes {
            m.buffer_bytes = b;
        }
        let software = software_path(ifc.bind.as_ref());
        m.pfc = pfc(&eq, &m, &ifc.pfc_delays, software, &mut short_headroom);
        if let Some(w) = m.pfc.watchdog.as_mut() {
            w.forward_ingress = cfg.pfc_watchdog_ingress_forward;
        }
        thresholds.check(&m, &eq);
        warnings.extend(auto_pfc_warning(&ifc.name.to_string(), &eq));
        if let Some(q) = cfg.pfc_pause_quanta {
            m.pfc.quanta = q;
        }
        if let Some(vrf) = &ifc.vrf {
            // Forwarding is the default VRF's alone: a tenant port's subnet
            // must not become reachable from the underlay, nor the
            // underlay from it.
            m.admin_up = false;
            m.ipv4.clear();
            m.ipv6.clear();
            in_vrfs.entry(vrf).or_default().push(ifc.name.to_string());
        }
        interfaces.push(m);
        binds.push(ifc.bind.clone());
    }
    for (vrf, names) in &in_vrfs {
        warnings.push(format!(
            "{}: `vrf member {vrf}`: railyard forwards in the default VRF only, so {} left out \
             of forwarding (shut, addresses not installed)",
            names.join(", "),
            if names.len() == 1 {
                "it is"
            } else {
                "they are"
            }
        ));
    }
    warnings.extend(headroom_warnings(&short_headroom));
    let ports: HashMap<InterfaceName, u16> = cfg
        .interfaces
        .iter()
        .enumerate()
        .map(|(i, ifc)| (ifc.name, i as u16))
        .collect();
    let mac_table = l2::add_logical(cfg, base, &mut interfaces, &mut binds, &ports);
    let index = |name: &InterfaceName| ports.get(name).copied();
    // Routes for the same prefix form one ECMP group, in configuration order.
    let mut group_of: HashMap<(IpAddr, u8), usize> = HashMap::new();
    let mut routes: Vec<RouteModel> = Vec::new();
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
                    errors.push(unconfigured(cfg, r, name));
                    continue;
                }
            },
            RouteTarget::NextHop { addr, interface } => {
                let port = match interface {
                    Some(name) => match index(name) {
                        Some(i) => Some(i),
                        None => {
                            errors.push(unconfigured(cfg, r, name));
                            continue;
                        }
                    },
                    None => None,
                };
                NextHopModel::Gateway { addr: *addr, port }
            }
        };
        let g = *group_of.entry((prefix, len)).or_insert_with(|| {
            routes.push(RouteModel {
                source: RouteSource::Static,
                prefix,
                len,
                next_hops: Vec::new(),
            });
            routes.len() - 1
        });
        let g = &mut routes[g].next_hops;
        if !g.contains(&hop) {
            g.push(hop);
        }
    }
    warnings.extend(thresholds.warnings());
    if let Some(cfg::DlbInterfaces::List(names)) = cfg.dlb.as_ref().map(|d| &d.interfaces) {
        for n in names.iter().filter(|n| index(n).is_none()) {
            warnings.push(format!(
                "hardware profile dlb: dlb-interface {n} is not configured; ignored"
            ));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let load_balance = load_balance(cfg, &hostname, index);
    Ok(Compiled {
        model: SwitchModel {
            hostname,
            interfaces,
            routes,
            load_balance,
            mac_table,
            ..SwitchModel::default()
        },
        binds,
        warnings,
    })
}

mod l2;
#[cfg(test)]
mod tests;
