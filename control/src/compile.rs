//! From the parsed configuration to the dataplane's plain-data model.
//!
//! This is where names become indices, addresses become MACs, and per-line
//! routes become ECMP groups. The dataplane never sees configuration text.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use railyard_config as cfg;
use railyard_config::{Bind, Config, Diagnostic, InterfaceName, IpPrefix, RouteTarget, Severity};
use railyard_dataplane::model::{
    self as dp, AclEntryModel, AclRuleModel, InterfaceModel, NextHopModel, QueueModel, RouteModel,
    RuleTermModel, SwitchModel, ThresholdUnit, WredModel,
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
    let switched: Vec<String> = cfg
        .interfaces
        .iter()
        .filter(|i| !i.routed)
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
        let eq = cfg.effective_qos_of(ifc);
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
            ..SwitchModel::default()
        },
        binds,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOOK: &str = "hostname rail1
class-map type qos match-any ROCEv2
  match dscp 24
class-map type qos match-all CNP_ON_3
  match dscp 48
  match cos 3
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
  class CNP_ON_3
    set qos-group 7
policy-map type queuing QOS_EGRESS_PORT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
    queue-limit 4 mbytes
  class type queuing c-out-8q-q7
    priority level 1
    shape min 0 gbps max 10 gbps
  class type queuing c-out-8q-q2
    random-detect threshold burst-optimized ecn
system qos
  service-policy type queuing output QOS_EGRESS_PORT
buffer-size 16 mbytes
interface Ethernet1/1
  no switchport
  service-policy type qos input QOS_CLASSIFICATION
interface Ethernet1/2
  no switchport
";

    #[test]
    fn qos_compiles_into_tables_and_queues() {
        let parsed = railyard_config::parse_str(BOOK, "book.conf", &Default::default()).unwrap();
        let c = compile(&parsed.config).unwrap();
        let e1 = &c.model.interfaces[0];
        // A match-all on DSCP and CoS needs rules; the classes stay in order.
        assert_eq!(e1.acl_rules.len(), 2);
        assert_eq!(e1.acl_rules[0].terms, vec![RuleTermModel::Dscp(1 << 24)]);
        assert_eq!(e1.acl_rules[0].qos_group, 3);
        assert_eq!(
            e1.acl_rules[1].terms,
            vec![RuleTermModel::Dscp(1 << 48), RuleTermModel::Cos(1 << 3)]
        );
        assert_eq!(e1.acl_rules[1].qos_group, 7);
        assert!(
            e1.dscp_to_qos_group.iter().all(|g| *g == 0),
            "tables hold class-default"
        );
        let q3 = e1.queues[3];
        assert_eq!(q3.bandwidth_remaining_percent, Some(50));
        assert_eq!(q3.limit, dp::QueueLimit::Bytes(4 << 20));
        assert_eq!(
            q3.wred,
            Some(WredModel {
                min: 150 * 1024,
                max: 3000 * 1024,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 7,
                weight: 0,
                ecn: true,
            })
        );
        assert_eq!(e1.queues[7].priority_level, Some(1));
        assert_eq!(e1.queues[7].shape_max_bps, Some(10_000_000_000));
        assert_eq!(
            e1.queues[2].wred,
            Some(WredModel {
                min: 950 * 1024,
                max: 3000 * 1024,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 7,
                weight: 0,
                ecn: true,
            })
        );
        assert_eq!(
            e1.queues[0].bandwidth_remaining_percent,
            Some(100),
            "default policy for q-default"
        );
        assert_eq!(e1.buffer_bytes, 16 << 20);
        // No input policy on Ethernet1/2: everything in qos-group 0.
        let e2 = &c.model.interfaces[1];
        assert!(e2.dscp_to_qos_group.iter().all(|g| *g == 0) && e2.acl_rules.is_empty());
        // A DSCP-only policy compiles to the table alone.
        let dscp_only = BOOK.replace("class CNP_ON_3\n    set qos-group 7\n", "");
        let parsed = railyard_config::parse_str(&dscp_only, "b.conf", &Default::default()).unwrap();
        let e1 = &compile(&parsed.config).unwrap().model.interfaces[0];
        assert!(e1.acl_rules.is_empty());
        assert_eq!(e1.dscp_to_qos_group[24], 3);
        assert_eq!(e1.dscp_to_qos_group[25], 0);
        assert_eq!(e1.pfc.enabled_priorities, 0, "no pause pfc-cos: no PFC");
    }

    /// The older Nexus 3000/5000 dialect of the RDMA guides: user-named
    /// queuing and network-qos classes by qos-group, `pause no-drop`.
    #[test]
    fn the_older_mqc_dialect_compiles_pfc_onto_the_named_qos_group() {
        const TOR: &str = "class-map type qos match-all ROCE
  match cos 3
class-map type queuing ROCE
  match qos-group 3
class-map type network-qos ROCE
  match qos-group 3
policy-map type qos MARK
  class ROCE
    set qos-group 3
  class class-default
policy-map type queuing OUT
  class type queuing ROCE
    bandwidth percent 50
  class type queuing class-default
    bandwidth percent 50
policy-map type queuing IN
  class type queuing ROCE
    pause buffer-size 101920 pause-threshold 46800 resume-threshold 34320
  class type queuing class-default
policy-map type network-qos NQ
  class type network-qos ROCE
    mtu 2240
    pause no-drop
  class type network-qos class-default
    mtu 9216
system qos
  service-policy type qos input MARK
  service-policy type queuing output OUT
  service-policy type network-qos NQ
interface Ethernet1/1
  no switchport
  priority-flow-control mode on
  service-policy type queuing input IN
interface Ethernet1/2
  no switchport
";
        let c = compiled(TOR);
        let e1 = &c.model.interfaces[0];
        assert_eq!(e1.pfc.enabled_priorities, 1 << 3, "PFC on priority 3 only");
        assert_eq!(e1.pfc.pg[3].xoff_bytes, 46800);
        assert_eq!(e1.pfc.pg[3].xon_bytes, 34320);
        assert_eq!(e1.queues[3].bandwidth_percent, Some(50));
        assert_eq!(e1.queues[0].bandwidth_percent, Some(50));
        // Ethernet1/2 leaves PFC in its default mode (auto): off until DCBX agrees.
        let e2 = &c.model.interfaces[1];
        assert_eq!(e2.pfc.enabled_priorities, 0);
        assert_eq!(e2.queues[3].bandwidth_percent, Some(50));
        // Without `pause no-drop` the class stays lossy.
        let c = compiled(&TOR.replace("    pause no-drop\n", ""));
        assert_eq!(c.model.interfaces[0].pfc.enabled_priorities, 0);
    }

    /// Access lists as NX-OS writes them classify: `nos` and `pcp` by
    /// protocol number, named ports by their number. A list with an entry
    /// railyard cannot evaluate (`fragments`) never reaches the dataplane:
    /// the class-map using it is rejected before compiling.
    #[test]
    fn nxos_access_list_keywords_compile_into_the_classifier() {
        let text = "ip access-list ODD
  deny pcp any any
  permit nos any any
  permit udp any any eq rip
class-map type qos match-any ODD
  match access-group name ODD
policy-map type qos P
  class ODD
    set qos-group 2
interface Ethernet1/1
  no switchport
  service-policy type qos input P
";
        let c = compiled(text);
        let rules = &c.model.interfaces[0].acl_rules;
        assert_eq!(rules.len(), 1);
        assert_eq!(rules[0].qos_group, 2);
        let RuleTermModel::Access(entries) = &rules[0].terms[0] else {
            panic!("expected an access-list term: {:?}", rules[0].terms);
        };
        let got: Vec<_> = entries
            .iter()
            .map(|e| (e.permit, e.protocol, e.dst_port))
            .collect();
        assert_eq!(
            got,
            [
                (false, Some(108), None),
                (true, Some(94), None),
                (true, Some(17), Some(dp::PortMatch::Eq(520))),
            ]
        );
        let with_fragments = text.replace("deny pcp any any", "deny pcp any any fragments");
        let es = railyard_config::parse_str(&with_fragments, "acl.conf", &Default::default())
            .expect_err("a class-map over an unevaluated entry must not load");
        assert!(
            es.iter()
                .any(|d| d.message.contains("entry 10 matches on `fragments`")),
            "{es:?}"
        );
    }

    fn demo_switch_model() -> SwitchModel {
        crate::demo::demo_switch().unwrap().model
    }

    /// Default headroom covers a software path's response on ports a poll
    /// loop serves, and the wire's terms alone where replay models the
    /// timing; a configured headroom too small for it is named once.
    #[test]
    fn software_ports_get_headroom_for_their_response_and_short_ones_are_named() {
        let text = include_str!("../../config/fuzz/seeds/ingress.conf");
        let base = text.split("\ninterface ").next().unwrap();
        const PAUSE: &str =
            "    pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes";
        assert!(base.contains(PAUSE));
        let conf = format!(
            "{base}\ninterface Ethernet1/1\n  no switchport\n  speed 1000\n  \
             priority-flow-control mode on\n  service-policy type queuing input IN\n  \
             bind af-packet veth1\n\
             interface Ethernet1/2\n  no switchport\n  speed 1000\n  \
             priority-flow-control mode on\n  service-policy type queuing input IN\n\
             interface Ethernet1/3\n  no switchport\n  speed 1000\n  \
             priority-flow-control mode on\n  service-policy type queuing input IN\n  \
             bind af-packet veth3\n"
        )
        .replace(PAUSE, "    queue-limit dynamic 5");
        let parsed = railyard_config::parse_str(&conf, "sw.conf", &Default::default()).unwrap();
        let c = compile(&parsed.config).unwrap();
        let [e1, e2, e3] = &c.model.interfaces[..] else {
            panic!("three interfaces: {:?}", c.model.interfaces.len());
        };
        let wire = dp::PgThresholds::default_for(
            Some(1000),
            e1.mtu,
            e1.buffer_bytes,
            &dp::PfcDelays::default(),
        );
        assert_eq!(e2.pfc.pg[3], wire, "no backend: the wire's terms");
        assert_eq!(e1.pfc.pg[3].headroom_bytes, wire.headroom_bytes + 1_250_000);
        assert_eq!(e3.pfc.pg[3], e1.pfc.pg[3]);
        assert_eq!(e1.pfc.enabled_priorities, 1 << 3);
        assert!(
            !c.warnings.iter().any(|w| w.contains("headroom")),
            "{:?}",
            c.warnings
        );

        // A configured 100 KB of headroom is short on both software ports:
        // one warning names them; the unbound port is not named.
        let short = conf.replace(
            "class type queuing c-in-q3\n    queue-limit dynamic 5",
            "class type queuing c-in-q3\n    \
             pause buffer-size 1100000 pause-threshold 1000000 resume-threshold 500000",
        );
        assert_ne!(short, conf);
        let parsed = railyard_config::parse_str(&short, "sw.conf", &Default::default()).unwrap();
        let c = compile(&parsed.config).unwrap();
        let named: Vec<_> = c
            .warnings
            .iter()
            .filter(|w| w.contains("headroom"))
            .collect();
        assert_eq!(named.len(), 1, "{:?}", c.warnings);
        assert!(
            named[0].starts_with(
                "Ethernet1/1 qos-group 3, Ethernet1/3 qos-group 3: headroom 100000 bytes"
            ),
            "{}",
            named[0]
        );
        assert!(named[0].contains(&format!("{} bytes", wire.headroom_bytes + 1_250_000)));
    }

    /// The warnings about headroom in `c`.
    fn headroom_warnings_of(c: &Compiled) -> Vec<&String> {
        c.warnings
            .iter()
            .filter(|w| w.contains("headroom"))
            .collect()
    }

    /// A configured headroom is held against the delays the interface
    /// configures: 20 000 bytes cover the standard wire at 100 Gb/s
    /// (2 × 1542 + 12 500 for 100 m + 480 for 3840 bits = 16 064) but not
    /// 300 m of cable (37 500 bytes of round trip: 41 064), and the warning
    /// names the terms and where each came from; the default derived from
    /// the same 300 m covers it, and replay waits out its 3 µs.
    #[test]
    fn a_port_in_a_tenant_vrf_is_left_out_of_the_default_table() {
        let c = compiled(
            "interface Ethernet1/1\n  no switchport\n  ip address 10.0.0.1/24\n\
             interface Ethernet1/2\n  no switchport\n  vrf member TENANT\n  \
             ip address 10.9.0.1/24\n\
             interface Ethernet1/3\n  no switchport\n  vrf member TENANT\n\
             interface Ethernet1/4\n  no switchport\n  vrf member default\n  \
             ip address 10.4.0.1/24\n",
        );
        let (fib, _) = railyard_dataplane::fib::Fib::build(&c.model);
        let routed = |a: [u8; 4]| fib.lookup(std::net::IpAddr::from(a)).is_some();
        assert!(routed([10, 0, 0, 7]));
        assert!(
            routed([10, 4, 0, 7]),
            "`vrf member default` is the default VRF"
        );
        assert!(
            !routed([10, 9, 0, 7]),
            "the tenant subnet leaked into the default table"
        );
        let [e1, e2, e3, e4] = &c.model.interfaces[..] else {
            panic!("four interfaces")
        };
        assert!(e1.admin_up && e4.admin_up);
        assert!(!e2.admin_up && !e3.admin_up);
        let w: Vec<_> = c
            .warnings
            .iter()
            .filter(|w| w.contains("vrf member"))
            .collect();
        assert_eq!(
            w,
            [
                "Ethernet1/2, Ethernet1/3: `vrf member TENANT`: railyard forwards in the default \
                 VRF only, so they are left out of forwarding (shut, addresses not installed)"
            ]
        );
    }

    #[test]
    fn a_configured_headroom_short_of_the_configured_delays_warns() {
        let text = include_str!("../../config/fuzz/seeds/ingress.conf");
        let base = text.split("\ninterface ").next().unwrap();
        let small = base.replace(
            "pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes",
            "pause buffer-size 1020000 pause-threshold 1000000 resume-threshold 500000",
        );
        assert_ne!(small, base);
        let port = |n: u8, extra: &str| {
            format!(
                "interface Ethernet1/{n}\n  no switchport\n  speed 100000\n  \
                 priority-flow-control mode on\n  service-policy type queuing input IN\n{extra}"
            )
        };
        let standard = compiled(&format!("{small}\n{}", port(1, "")));
        assert_eq!(
            headroom_warnings_of(&standard),
            Vec::<&String>::new(),
            "16 064 needed, 20 000 configured"
        );
        let long = "  priority-flow-control cable-length 300\n";
        let c = compiled(&format!("{small}\n{}{}", port(1, ""), port(2, long)));
        let w = headroom_warnings_of(&c);
        assert_eq!(w.len(), 1, "{:?}", c.warnings);
        assert!(
            w[0].starts_with(
                "Ethernet1/2 qos-group 3: headroom 20000 bytes (buffer-size - pause-threshold) \
                 is less than the 41064 bytes a peer sends at 100000 Mb/s"
            ),
            "{}",
            w[0]
        );
        for term in [
            "a 1542-byte frame in flight at each end",
            "300 m of cable (configured; 3000 ns round trip)",
            "peer response 3840 bit times (default; 480 bytes)",
            "`priority-flow-control cable-length`",
        ] {
            assert!(w[0].contains(term), "{term}: {}", w[0]);
        }
        assert!(!w[0].contains("software response"), "{}", w[0]);
        let e2 = &c.model.interfaces[1];
        assert_eq!(e2.pfc.delays.cable_metres, 300);
        assert_eq!(c.model.interfaces[0].pfc.delays, dp::PfcDelays::default());

        // Without the pause line, the default comes from the same terms.
        let c = compiled(&format!("{base}\n{}", port(1, long)).replace(
            "pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes",
            "queue-limit dynamic 5",
        ));
        assert_eq!(c.model.interfaces[0].pfc.pg[3].headroom_bytes, 41_064);
        assert_eq!(headroom_warnings_of(&c), Vec::<&String>::new());

        // A peer answering in 2 µs (25 000 bytes at 100 Gb/s) is named in time.
        let c = compiled(&format!(
            "{small}\n{}",
            port(1, "  priority-flow-control peer-response 2 us\n")
        ));
        let w = headroom_warnings_of(&c);
        assert_eq!(w.len(), 1, "{:?}", c.warnings);
        assert!(
            w[0].contains("peer response 2000 ns (configured; 25000 bytes)"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("the 40584 bytes"), "{}", w[0]);
    }

    /// On a software path the configured software response replaces the
    /// standard 10 ms: at 10 Gb/s 10 ms is 12.5 MB, cut to the 8 MiB buffer
    /// (warned); 500 µs is 625 000 bytes, which fits.
    #[test]
    fn a_shorter_software_response_takes_a_software_paths_headroom_down() {
        let text = include_str!("../../config/fuzz/seeds/ingress.conf");
        let base = text.split("\ninterface ").next().unwrap().replace(
            "pause buffer-size 4194304 pause-threshold 3200 kbytes resume-threshold 100 kbytes",
            "queue-limit dynamic 5",
        );
        let conf = |extra: &str| {
            format!(
                "{base}\ninterface Ethernet1/1\n  no switchport\n  speed 10000\n  \
                 priority-flow-control mode on\n  service-policy type queuing input IN\n  \
                 bind af-packet veth1\n{extra}"
            )
        };
        let c = compiled(&conf(""));
        let w = headroom_warnings_of(&c);
        assert_eq!(w.len(), 1, "{:?}", c.warnings);
        assert!(w[0].contains("the port buffer caps it"), "{}", w[0]);
        assert!(
            w[0].contains("software response 10.0 ms (default)"),
            "{}",
            w[0]
        );
        let c = compiled(&conf("  priority-flow-control software-response 500 us\n"));
        assert_eq!(headroom_warnings_of(&c), Vec::<&String>::new());
        let e1 = &c.model.interfaces[0];
        // 2 × 1542 + 1250 (100 m at 10 Gb/s) + 480 + 625 000.
        assert_eq!(e1.pfc.pg[3].headroom_bytes, 3_084 + 1_250 + 480 + 625_000);
        assert_eq!(e1.pfc.delays.software_response_ns, 500_000);
        // A configured headroom below that need names the configured term.
        let short = conf("  priority-flow-control software-response 500 us\n").replace(
            "queue-limit dynamic 5",
            "pause buffer-size 1100000 pause-threshold 1000000 resume-threshold 500000",
        );
        let c = compiled(&short);
        let w = headroom_warnings_of(&c);
        assert_eq!(w.len(), 1, "{:?}", c.warnings);
        assert!(
            w[0].contains("software response 500.0 us (configured)"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("measures the real gaps"), "{}", w[0]);
    }

    #[test]
    fn pfc_compiles_from_network_qos_and_ingress_policy() {
        let text = include_str!("../../config/fuzz/seeds/ingress.conf");
        let parsed = railyard_config::parse_str(text, "ingress.conf", &Default::default()).unwrap();
        let c = compile(&parsed.config).unwrap();
        let e1 = &c.model.interfaces[0];
        assert_eq!(e1.pfc.enabled_priorities, 1 << 3);
        assert_eq!(
            e1.pfc.pg[3],
            dp::PgThresholds {
                xoff_bytes: 3200 * 1024,
                xon_bytes: 100 * 1024,
                headroom_bytes: 4_194_304 - 3200 * 1024,
            }
        );
        assert_eq!(
            e1.pfc.pg[0],
            dp::PgThresholds::default_for(
                e1.speed_mbps,
                e1.mtu,
                e1.buffer_bytes,
                &dp::PfcDelays::default()
            )
        );
        assert_eq!(e1.pfc.quanta, 0xFFFF);
        assert_eq!(e1.pfc.watchdog, None, "no watch-dog-interval");
        let quanta = format!("{text}\npriority-flow-control pause-quanta 4096\n");
        let parsed = railyard_config::parse_str(&quanta, "q.conf", &Default::default()).unwrap();
        assert_eq!(parsed.config.pfc_pause_quanta, Some(4096));
        assert!(parsed
            .config
            .to_string()
            .contains("priority-flow-control pause-quanta 4096"));
        assert_eq!(
            compile(&parsed.config).unwrap().model.interfaces[0]
                .pfc
                .quanta,
            4096
        );
        let bad = format!("{text}\npriority-flow-control pause-quanta 0\n");
        assert!(railyard_config::parse_str(&bad, "q.conf", &Default::default()).is_err());
        let demo = demo_switch_model();
        let wd = demo.interfaces[0].pfc.watchdog.unwrap();
        assert_eq!(
            (
                wd.interval_ns,
                wd.shutdown_multiplier,
                wd.restore_multiplier
            ),
            (100_000_000, 1, 10)
        );
        assert_eq!(
            wd.fixed_restore_multiplier, 0,
            "fixed restore off by default"
        );
        let demo_fixed = format!(
            "{}\npriority-flow-control fixed-restore multiplier 3\n",
            crate::demo::DEMO_CONFIG
        );
        let wd = compiled(&demo_fixed).model.interfaces[0]
            .pfc
            .watchdog
            .unwrap();
        assert_eq!(wd.fixed_restore_multiplier, 3);
        assert_eq!(wd.fixed_restore_ns(), Some(300_000_000));
        assert!(!wd.forward_ingress, "NX-OS drops by default");
        let fwd = format!("{demo_fixed}priority-flow-control watch-dog ingress forward\n");
        let wd = compiled(&fwd).model.interfaces[0].pfc.watchdog.unwrap();
        assert!(wd.forward_ingress);
        let off = text.replace(
            "priority-flow-control mode on send-tlv",
            "priority-flow-control mode off",
        );
        let parsed = railyard_config::parse_str(&off, "off.conf", &Default::default()).unwrap();
        let c = compile(&parsed.config).unwrap();
        assert_eq!(c.model.interfaces[0].pfc.enabled_priorities, 0);
        // `mode auto`: off until DCBX agrees, which a compiled model has no
        // peer for; the lossless set is still what DCBX would offer.
        let auto = text.replace(
            "priority-flow-control mode on send-tlv",
            "priority-flow-control mode auto",
        );
        let parsed = railyard_config::parse_str(&auto, "auto.conf", &Default::default()).unwrap();
        let c = compile(&parsed.config).unwrap();
        let e1 = &c.model.interfaces[0];
        assert_eq!(e1.pfc.enabled_priorities, 0);
        assert_eq!(e1.pfc.pg[3].xoff_bytes, 3200 * 1024, "thresholds kept");
        let eq = parsed
            .config
            .effective_qos(&railyard_config::InterfaceName::new(1, 1));
        assert_eq!(lossless_priorities(&eq), 1 << 3);
        let note = |c: &Compiled| {
            c.warnings
                .iter()
                .filter(|w| w.contains("mode auto: PFC is off until a DCBX peer agrees"))
                .count()
        };
        assert_eq!(note(&c), 2, "Ethernet1/1-2: {:?}", c.warnings);
        assert!(
            c.warnings
                .iter()
                .any(|w| w.starts_with("Ethernet1/1: lossless qos-group 3 ")),
            "{:?}",
            c.warnings
        );
        let on = railyard_config::parse_str(text, "on.conf", &Default::default()).unwrap();
        assert_eq!(note(&compile(&on.config).unwrap()), 0, "mode on: no note");
    }

    /// The warnings about xON < WRED min < WRED max < xOFF in `c`.
    fn order_warnings(c: &Compiled) -> Vec<&String> {
        c.warnings
            .iter()
            .filter(|w| w.contains("break xON < WRED min < WRED max < xOFF"))
            .collect()
    }

    #[test]
    fn check_sees_default_thresholds_out_of_order() {
        // The demo: WRED 150-3000 KB on queue 3 and no `pause` line, so the
        // defaults (xON 512 KB, xOFF 1 MB at the default buffer) are in force.
        let c = compiled(crate::demo::DEMO_CONFIG);
        let w = order_warnings(&c);
        assert_eq!(w.len(), 1, "one warning for the six like ports: {w:?}");
        let t = c.model.interfaces[0].pfc.pg[3];
        assert!(
            w[0].starts_with("qos-group 3 on Ethernet1/1, Ethernet1/2,"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("Ethernet1/32"), "{}", w[0]);
        assert!(
            w[0].contains(&format!(
                "(xON {}, WRED 153600-3072000, xOFF {} bytes)",
                t.xon_bytes, t.xoff_bytes
            )),
            "{}",
            w[0]
        );
        assert!(w[0].contains("the defaults"), "{}", w[0]);
        // The shipped lab templates write no `pause` line either.
        let topo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../scripts/topologies/rail-spine.topo");
        let text = std::fs::read_to_string(&topo).unwrap();
        let t = crate::lab::topology::parse_str(&text, &topo).unwrap();
        for r in crate::lab::render::render_all(&t).unwrap() {
            let c = compiled(&r.config);
            assert!(
                order_warnings(&c)
                    .iter()
                    .any(|w| w.starts_with("qos-group 3 on ")),
                "{}: {:?}",
                r.switch,
                c.warnings
            );
        }
    }

    #[test]
    fn check_is_quiet_when_the_thresholds_in_force_are_in_order() {
        // The book's ingress policy: resume 100 KB < WRED 150 KB < 3000 KB < pause 3200 KB.
        let text = crate::demo::DEMO_CONFIG
            .replace(
                "policy-map type network-qos qos_network",
                "policy-map type queuing IN\n  class type queuing c-in-q3\n    pause buffer-size 4194304 pause-threshold 3276800 resume-threshold 102400\npolicy-map type network-qos qos_network",
            )
            .replace("system qos\n", "system qos\n  service-policy type queuing input IN\n");
        let parsed = railyard_config::parse_str(&text, "t.conf", &Default::default()).unwrap();
        assert!(
            parsed.warnings.iter().all(|d| !d.message.contains("xON")),
            "{:?}",
            parsed.warnings
        );
        let c = compile(&parsed.config).unwrap();
        assert_eq!(order_warnings(&c), Vec::<&String>::new());
        // WRED in packets counts MTU-sized frames (9216 + 14 B): 20 and 300
        // packets sit between xON and xOFF; 400 packets (3,692,000 B) pass
        // xOFF 3200 KB.
        let packets = |max: u32| {
            compiled(&text.replace(
                "minimum-threshold 150 kbytes maximum-threshold 3000 kbytes",
                &format!("minimum-threshold 20 packets maximum-threshold {max} packets"),
            ))
        };
        assert_eq!(order_warnings(&packets(300)), Vec::<&String>::new());
        let c = packets(400);
        let w = order_warnings(&c);
        assert_eq!(w.len(), 1, "{:?}", c.warnings);
        assert!(w[0].contains("WRED 184600-3692000"), "{}", w[0]);
        assert!(w[0].contains("WRED in packets"), "{}", w[0]);
    }

    fn compiled(text: &str) -> Compiled {
        let parsed = railyard_config::parse_str(text, "lb.conf", &Default::default()).unwrap();
        compile(&parsed.config).unwrap()
    }

    const FABRIC: &str = "interface Ethernet1/1
  no switchport
interface Ethernet1/2
  no switchport
interface Ethernet1/3
  no switchport
";

    #[test]
    fn load_sharing_and_dlb_compile_into_the_balance_model() {
        let text = format!(
            "hostname rail1
ip load-sharing address source-destination port source rocev2-dest-qp rotate 8 universal-id 99
hardware profile dlb
  dlb-interface Ethernet1/3, Ethernet1/2
  mode per-packet
  flowlet-aging 200
  decay-factor 4
  no load-awareness
{FABRIC}"
        );
        let lb = compiled(&text).model.load_balance;
        assert_eq!(
            lb.hash,
            dp::EcmpHashModel {
                src_addr: true,
                dst_addr: true,
                src_port: true,
                dst_port: false,
                concatenation: false,
                rocev2_dest_qp: true,
                rotate: 8,
                seed: 99,
            }
        );
        let dlb = lb.dlb.unwrap();
        assert_eq!(dlb.ports, vec![1, 2]);
        assert_eq!(dlb.mode, dp::DlbMode::PerPacket);
        assert_eq!(dlb.flowlet_aging_ns, 200_000);
        assert_eq!(dlb.decay_factor, 4);
        assert!(!dlb.load_awareness);
        assert_eq!(dlb.levels, cfg::DEFAULT_DRE_THRESHOLDS);
        assert_eq!(dlb.mac, MacAddr(cfg::DEFAULT_DLB_MAC));
        // Interfaces renumbered to a running switch's order keep their DLB role.
        let order: Vec<String> = ["Ethernet1/3", "Ethernet1/1", "Ethernet1/2"]
            .map(String::from)
            .to_vec();
        let r = reorder(compiled(&text), &order).unwrap();
        assert_eq!(r.model.load_balance.dlb.unwrap().ports, vec![0, 2]);
    }

    #[test]
    fn default_hash_seed_differs_per_switch_and_dlb_all_takes_every_port() {
        let a = compiled(&format!("hostname rail1\n{FABRIC}")).model;
        let b = compiled(&format!("hostname spine1\n{FABRIC}")).model;
        assert_eq!(a.load_balance.hash.seed, default_universal_id("rail1"));
        assert_ne!(a.load_balance.hash.seed, b.load_balance.hash.seed);
        assert!(a.load_balance.dlb.is_none());
        let all = compiled(&format!(
            "hardware profile dlb\n  dlb-interface all\n{FABRIC}"
        ));
        let dlb = all.model.load_balance.dlb.unwrap();
        assert_eq!(dlb.ports, vec![0, 1, 2]);
        assert_eq!(dlb.mode, dp::DlbMode::Flowlet);
        assert!(dlb.load_awareness);
        let unknown = compiled(&format!(
            "hardware profile dlb\n  dlb-interface Ethernet1/9\n{FABRIC}"
        ));
        assert!(unknown.warnings.iter().any(|w| w.contains("Ethernet1/9")));
    }
}
