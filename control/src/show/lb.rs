//! Load-balancing show commands: `show ip route`, `show ipv6 route`,
//! `show ip load-sharing` and `show hardware profile dlb`.
//!
//! Each command first builds a plain view from the compiled configuration
//! (the FIB as the switch builds it) and, for a running switch, its counter
//! snapshot. `--json` prints the view as it is and the text renderers only
//! lay it out, so the two never disagree.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::IpAddr;

use railyard_config::Config;
use railyard_dataplane::balance::dlb::REFERENCE_MBPS;
use railyard_dataplane::fib::{Fib, RouteAction};
use railyard_dataplane::model::{DlbMode, RouteModel, RouteSource, SwitchModel};
use railyard_dataplane::nexthop::EcmpGroup;
use railyard_dataplane::nexthop::BUCKETS;
use railyard_dataplane::stats::{GroupStats, MemberStats, SwitchStats};
use railyard_dataplane::wire::MacAddr;
use serde::Serialize;

use crate::compile;
use crate::routing::kernel_fib::{protocol_name, KernelFibView};

/// A configuration compiled the way the switch compiles it, with its FIB,
/// so the show commands describe what would be (or is) forwarding.
#[derive(Debug, Clone)]
pub struct LoadBalancing {
    model: SwitchModel,
    fib: Fib,
    seed_configured: bool,
}

impl LoadBalancing {
    /// Compiles `config` and builds its FIB.
    ///
    /// # Errors
    /// The compiler's diagnostics, rendered for a terminal.
    pub fn new(config: &Config) -> Result<Self, String> {
        let compiled = compile::compile(config).map_err(|d| crate::format_diagnostics(&d))?;
        let (fib, _) = Fib::build(&compiled.model);
        Ok(LoadBalancing {
            model: compiled.model,
            fib,
            seed_configured: config.load_sharing.universal_id.is_some(),
        })
    }

    /// The same with `routes` from the kernel ahead of the configured ones,
    /// as a switch that follows its kernel's table installs them.
    pub fn with_kernel_routes(mut self, routes: Vec<RouteModel>) -> Self {
        self.model.add_routes_beneath(routes);
        self.fib = Fib::build(&self.model).0;
        self
    }

    fn port_name(&self, port: u16) -> String {
        self.model
            .interfaces
            .get(usize::from(port))
            .map_or_else(|| format!("port{port}"), |i| i.name.clone())
    }

    /// `flowlet`/`per-packet` for a DLB group, `ecmp` otherwise: the same
    /// words as the stats' `mode`.
    fn group_mode(&self, g: &EcmpGroup) -> &'static str {
        match (&self.model.load_balance.dlb, g.is_dlb()) {
            (Some(d), true) => dlb_mode_name(d.mode),
            _ => "ecmp",
        }
    }
}

fn dlb_mode_name(m: DlbMode) -> &'static str {
    match m {
        DlbMode::Flowlet => "flowlet",
        DlbMode::PerPacket => "per-packet",
    }
}

/// The MAC in Cisco's dotted form (`00cc.cccc.cccc`), as NX-OS prints it.
fn dotted(mac: MacAddr) -> String {
    let m = mac.0;
    format!(
        "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
        m[0], m[1], m[2], m[3], m[4], m[5]
    )
}

/// `Ethernet1/3` as NX-OS abbreviates it in route tables: `Eth1/3`.
fn short(name: &str) -> String {
    match name.strip_prefix("Ethernet") {
        Some(rest) => format!("Eth{rest}"),
        None => name.to_string(),
    }
}

/// The network of `addr/len` (host bits cleared).
fn network(addr: IpAddr, len: u8) -> IpAddr {
    match addr {
        IpAddr::V4(a) => {
            let mask = u32::MAX
                .checked_shl(32 - u32::from(len.min(32)))
                .unwrap_or(0);
            IpAddr::V4((u32::from(a) & mask).into())
        }
        IpAddr::V6(a) => {
            let mask = u128::MAX
                .checked_shl(128 - u32::from(len.min(128)))
                .unwrap_or(0);
            IpAddr::V6((u128::from(a) & mask).into())
        }
    }
}

/// One next hop of a route, with its counters when read from a running switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NextHopView {
    /// Gateway address; for connected and local routes the interface's own
    /// address; `None` for an interface route or Null0.
    pub address: Option<String>,
    /// Egress interface, canonical name (`Null0` for a discard route).
    pub interface: String,
    /// Packets sent through this member (live only).
    pub packets: Option<u64>,
    /// Their bytes (live only).
    pub bytes: Option<u64>,
    /// Buckets of the group's resilient hash table naming this member
    /// (hashed groups only: DLB groups pick by port quality).
    pub buckets: Option<usize>,
    /// Port quality band 0 (idle) … 7 (loaded) (live DLB groups only).
    pub quality_band: Option<u8>,
    /// Port load in percent of its speed, queue included (live DLB groups only).
    pub load_percent: Option<u16>,
}

impl NextHopView {
    fn plain(address: Option<String>, interface: String) -> Self {
        NextHopView {
            address,
            interface,
            packets: None,
            bytes: None,
            buckets: None,
            quality_band: None,
            load_percent: None,
        }
    }
}

/// What a group did as a whole (live only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct GroupCountersView {
    /// Flowlets started (a flow's first packet, or one after an idle gap).
    pub flowlets_started: u64,
    /// Flowlets placed on another member than the flow's previous one.
    pub flowlet_moves: u64,
    /// Packets placed one by one (per-packet mode).
    pub per_packet_choices: u64,
    /// Packets sent on another member than their flow's previous packet
    /// within the flowlet aging: an upper bound on reordering.
    pub reorder_risk: u64,
    /// Packets whose member was down, re-hashed over the members up.
    pub rehashed: u64,
}

impl From<&GroupStats> for GroupCountersView {
    fn from(g: &GroupStats) -> Self {
        GroupCountersView {
            flowlets_started: g.flowlets_started,
            flowlet_moves: g.flowlet_moves,
            per_packet_choices: g.per_packet_choices,
            reorder_risk: g.reorder_risk,
            rehashed: g.rehashed,
        }
    }
}

/// One route of `show ip route` / `show ipv6 route`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RouteView {
    /// `10.0.9.0/24`: the network, host bits cleared.
    pub prefix: String,
    /// `local`, `direct`, `static` (Null0 is a static route to interface
    /// `Null0`), or for a route from the kernel the routing protocol that
    /// put it there (`bgp`, `ospf`, `isis`, `rip`, `static`) or `kernel`.
    pub kind: &'static str,
    /// For a route from the kernel: its protocol as `ip route` names it
    /// (`bgp`, `boot` for `ip route add`, `zebra`, `bird`, …).
    pub protocol: Option<&'static str>,
    /// The next hops, in configuration order.
    pub next_hops: Vec<NextHopView>,
    /// For static routes over next hops: `ecmp`, `flowlet` or `per-packet`.
    pub mode: Option<&'static str>,
    /// For DLB groups: the virtual next-hop MAC (`mac-address`), colon form.
    pub dlb_mac: Option<String>,
    /// Group counters (live only).
    pub counters: Option<GroupCountersView>,
}

/// The member of a live group's snapshot that is `interface` via `gateway`.
fn member<'a>(
    g: Option<&'a GroupStats>,
    interface: &str,
    gateway: Option<&str>,
) -> Option<&'a MemberStats> {
    g?.members
        .iter()
        .find(|m| m.interface == interface && m.gateway.as_deref() == gateway)
}

/// The `show ip route` word for where a route came from.
fn source_kind(source: RouteSource) -> &'static str {
    match source {
        RouteSource::Static => "static",
        RouteSource::Kernel { protocol } => match protocol_name(protocol) {
            k @ ("bgp" | "ospf" | "isis" | "rip" | "static") => k,
            _ => "kernel",
        },
    }
}

/// The kernel's name for a kernel route's protocol.
fn kernel_protocol(source: RouteSource) -> Option<&'static str> {
    match source {
        RouteSource::Static => None,
        RouteSource::Kernel { protocol } => Some(protocol_name(protocol)),
    }
}

/// NX-OS's `[preference/metric]` for a route of `kind`: the protocols'
/// default administrative distances (eBGP 20).
fn preference(kind: &str) -> &'static str {
    match kind {
        "local" | "direct" => "[0/0]",
        "bgp" => "[20/0]",
        "ospf" => "[110/0]",
        "isis" => "[115/0]",
        "rip" => "[120/0]",
        _ => "[1/0]",
    }
}

/// The routes of one family, sorted by prefix then length, with member
/// counters from `stats` when it comes from a running switch. A later route
/// for the same network replaces an earlier one, as in the FIB's lookup.
pub fn routes(lb: &LoadBalancing, v6: bool, stats: Option<&SwitchStats>) -> Vec<RouteView> {
    let mut table: BTreeMap<(IpAddr, u8), RouteView> = BTreeMap::new();
    for r in lb.fib.routes() {
        if r.prefix.is_ipv6() != v6 {
            continue;
        }
        let net = network(r.prefix, r.len);
        let view = match &r.action {
            RouteAction::Local(p) | RouteAction::Connected(p) => RouteView {
                prefix: format!("{net}/{}", r.len),
                kind: if matches!(r.action, RouteAction::Local(_)) {
                    "local"
                } else {
                    "direct"
                },
                protocol: None,
                next_hops: vec![NextHopView::plain(
                    Some(r.prefix.to_string()),
                    lb.port_name(*p),
                )],
                mode: None,
                dlb_mac: None,
                counters: None,
            },
            RouteAction::Discard => RouteView {
                prefix: format!("{net}/{}", r.len),
                kind: source_kind(r.source),
                protocol: kernel_protocol(r.source),
                next_hops: vec![NextHopView::plain(None, "Null0".into())],
                mode: None,
                dlb_mac: None,
                counters: None,
            },
            RouteAction::Forward(g) => {
                let live =
                    stats.and_then(|s| s.load_balancing.get(&format!("{}/{}", r.prefix, r.len)));
                let dlb = g.is_dlb();
                let buckets = g.bucket_counts();
                let next_hops = g
                    .hops()
                    .iter()
                    .zip(buckets)
                    .map(|(h, b)| {
                        let interface = lb.port_name(h.port);
                        let address = h.gateway.map(|a| a.to_string());
                        let m = member(live, &interface, address.as_deref());
                        NextHopView {
                            packets: m.map(|m| m.packets),
                            bytes: m.map(|m| m.bytes),
                            // DLB picks by port quality, not by the bucket table.
                            buckets: (!dlb).then(|| m.map_or(b, |m| m.buckets)),
                            quality_band: m.filter(|_| dlb).map(|m| m.quality_band),
                            load_percent: m.filter(|_| dlb).map(|m| m.load_percent),
                            address,
                            interface,
                        }
                    })
                    .collect();
                RouteView {
                    prefix: format!("{net}/{}", r.len),
                    kind: source_kind(r.source),
                    protocol: kernel_protocol(r.source),
                    next_hops,
                    mode: Some(lb.group_mode(g)),
                    dlb_mac: lb
                        .model
                        .load_balance
                        .dlb
                        .as_ref()
                        .filter(|_| dlb)
                        .map(|d| d.mac.to_string()),
                    counters: live.map(GroupCountersView::from),
                }
            }
        };
        table.insert((net, r.len), view);
    }
    table.into_values().collect()
}

/// `show ip route` / `show ipv6 route --json`: `{"vrf": "default", "routes": [...]}`.
pub fn routes_json(routes: &[RouteView]) -> serde_json::Value {
    serde_json::json!({ "vrf": "default", "routes": routes })
}

/// `show ip route` / `show ipv6 route` in the NX-OS layout; ECMP groups get
/// a `load-balancing:` line after their next hops, and live counters go on
/// a line under each next hop so the `*via` lines stay as NX-OS prints them.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_routes(out: &mut dyn Write, v6: bool, routes: &[RouteView]) -> std::io::Result<()> {
    if v6 {
        writeln!(out, "IPv6 Routing Table for VRF \"default\"")?;
    } else {
        writeln!(out, "IP Route Table for VRF \"default\"")?;
    }
    writeln!(out, "'*' denotes best ucast next-hop")?;
    writeln!(out, "'**' denotes best mcast next-hop")?;
    writeln!(out, "'[x/y]' denotes [preference/metric]")?;
    writeln!(out, "'%<string>' in via output denotes VRF <string>")?;
    writeln!(out)?;
    for r in routes {
        let attached = if matches!(r.kind, "local" | "direct") {
            ", attached"
        } else {
            ""
        };
        writeln!(
            out,
            "{}, ubest/mbest: {}/0{attached}",
            r.prefix,
            r.next_hops.len()
        )?;
        let pref = preference(r.kind);
        let source = match r.protocol {
            Some(p) if p != r.kind => format!("{}, proto {p}", r.kind),
            _ => r.kind.to_string(),
        };
        for h in &r.next_hops {
            let mut via = String::from("    *via ");
            if let Some(a) = &h.address {
                via += a;
                via += ", ";
            }
            via += &short(&h.interface);
            writeln!(out, "{via}, {pref}, {source}")?;
            if let (Some(p), Some(b)) = (h.packets, h.bytes) {
                let mut line = format!("         packets {p}, bytes {b}");
                if let Some(n) = h.buckets {
                    line += &format!(", buckets {n}");
                }
                if let (Some(q), Some(l)) = (h.quality_band, h.load_percent) {
                    line += &format!(", quality band {q} (load {l} %)");
                }
                writeln!(out, "{line}")?;
            }
        }
        match (r.mode, &r.dlb_mac) {
            (Some(mode), Some(mac)) => {
                let mac = mac.parse::<MacAddr>().map_or_else(|_| mac.clone(), dotted);
                writeln!(
                    out,
                    "    load-balancing: {mode} (DLB), virtual next-hop MAC {mac}"
                )?;
            }
            (Some(mode), None) if r.next_hops.len() > 1 => {
                writeln!(
                    out,
                    "    load-balancing: {mode} (hash, {BUCKETS} resilient buckets)"
                )?;
            }
            _ => {}
        }
        if let Some(c) = &r.counters {
            if r.dlb_mac.is_some() {
                writeln!(
                    out,
                    "    flowlets started {}, flowlet moves {}, per-packet choices {}, reorder risk {}, rehashed {}",
                    c.flowlets_started,
                    c.flowlet_moves,
                    c.per_packet_choices,
                    c.reorder_risk,
                    c.rehashed
                )?;
            } else if r.next_hops.len() > 1 {
                writeln!(out, "    rehashed {}", c.rehashed)?;
            }
        }
    }
    Ok(())
}

/// The closing lines of `show ip route` on a switch that follows its
/// kernel's routing table: how many routes it holds from there, the
/// notifications read and how long the last FIB update took.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_kernel_counters(out: &mut dyn Write, c: &KernelFibView) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "Kernel routes: {} in force; {} adds, {} deletes, {} ignored notifications; {} resyncs",
        c.routes, c.adds, c.deletes, c.ignored, c.resyncs
    )?;
    writeln!(
        out,
        "FIB updates: {} ({} failed); kernel change to FIB last {} us, longest {} us",
        c.fib_updates, c.fib_update_errors, c.last_update_us, c.max_update_us
    )
}

/// `show ip load-sharing`: the ECMP hash in force and a DLB summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LoadSharingView {
    /// The hash seed in force.
    pub universal_id: u32,
    /// False when the seed is derived from the hostname.
    pub universal_id_configured: bool,
    /// `address source-destination port source-destination`, as configured.
    pub load_share_mode: String,
    /// Hash the source address.
    pub src_addr: bool,
    /// Hash the destination address.
    pub dst_addr: bool,
    /// Hash the source port.
    pub src_port: bool,
    /// Hash the destination port.
    pub dst_port: bool,
    /// Fields hashed in order (direction-sensitive) rather than folded.
    pub concatenation: bool,
    /// Bits the hash is rotated by.
    pub rotate: u8,
    /// The RoCEv2 BTH destination QP is hashed too (railyard extension).
    pub rocev2_dest_qp: bool,
    /// Buckets in each group's resilient hash table.
    pub buckets_per_group: usize,
    /// Routes with more than one next hop.
    pub multipath_groups: usize,
    /// DLB summary, when `hardware profile dlb` is configured.
    pub dlb: Option<DlbSummary>,
}

/// The one-line DLB summary of `show ip load-sharing`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DlbSummary {
    /// `flowlet` or `per-packet`.
    pub mode: &'static str,
    /// The `dlb-interface`s that are configured.
    pub interfaces: Vec<String>,
    /// Multipath groups balanced dynamically (every member a dlb-interface).
    pub dlb_groups: usize,
}

/// `source`, `destination` or `source-destination`, as `ip load-sharing` words it.
fn sides(src: bool, dst: bool) -> &'static str {
    match (src, dst) {
        (true, false) => "source",
        (false, true) => "destination",
        _ => "source-destination",
    }
}

/// Builds the `show ip load-sharing` view.
pub fn load_sharing(lb: &LoadBalancing) -> LoadSharingView {
    let h = lb.model.load_balance.hash;
    let mut mode = format!("address {}", sides(h.src_addr, h.dst_addr));
    if h.src_port || h.dst_port {
        mode += &format!(" port {}", sides(h.src_port, h.dst_port));
    }
    let multipath: Vec<&EcmpGroup> = lb
        .fib
        .groups()
        .map(|(_, g)| g)
        .filter(|g| g.hops().len() > 1)
        .collect();
    LoadSharingView {
        universal_id: h.seed,
        universal_id_configured: lb.seed_configured,
        load_share_mode: mode,
        src_addr: h.src_addr,
        dst_addr: h.dst_addr,
        src_port: h.src_port,
        dst_port: h.dst_port,
        concatenation: h.concatenation,
        rotate: h.rotate,
        rocev2_dest_qp: h.rocev2_dest_qp,
        buckets_per_group: BUCKETS,
        multipath_groups: multipath.len(),
        dlb: lb.model.load_balance.dlb.as_ref().map(|d| DlbSummary {
            mode: dlb_mode_name(d.mode),
            interfaces: d.ports.iter().map(|p| lb.port_name(*p)).collect(),
            dlb_groups: multipath.iter().filter(|g| g.is_dlb()).count(),
        }),
    }
}

fn enabled(on: bool) -> &'static str {
    if on {
        "enabled"
    } else {
        "disabled"
    }
}

/// `show ip load-sharing` in the NX-OS layout, with railyard's additions
/// (RoCEv2 dest-QP, resilient buckets, DLB) after NX-OS's lines.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_load_sharing(out: &mut dyn Write, v: &LoadSharingView) -> std::io::Result<()> {
    writeln!(out, "IPv4/IPv6 ECMP load sharing:")?;
    let derived = if v.universal_id_configured {
        ""
    } else {
        " (derived from hostname)"
    };
    writeln!(
        out,
        "Universal-id (Random Seed): {}{derived}",
        v.universal_id
    )?;
    writeln!(out, "Load-share mode : {}", v.load_share_mode)?;
    let how = if v.concatenation {
        " (fields hashed in order: each direction of a flow hashes on its own)"
    } else {
        " (source and destination folded: both directions of a flow hash alike)"
    };
    writeln!(out, "Concatenation : {}{how}", enabled(v.concatenation))?;
    writeln!(out, "Rotate : {}", v.rotate)?;
    writeln!(
        out,
        "RoCEv2 dest-QP : {} (railyard extension)",
        enabled(v.rocev2_dest_qp)
    )?;
    writeln!(
        out,
        "Resilient hashing : {} buckets per group, {} multipath group{}",
        v.buckets_per_group,
        v.multipath_groups,
        if v.multipath_groups == 1 { "" } else { "s" }
    )?;
    match &v.dlb {
        None => writeln!(out, "DLB : not configured")?,
        Some(d) => {
            let ifs = if d.interfaces.is_empty() {
                "no dlb-interface".to_string()
            } else {
                d.interfaces.join(", ")
            };
            writeln!(
                out,
                "DLB : {} on {ifs}; {} of {} multipath groups dynamic",
                d.mode, d.dlb_groups, v.multipath_groups
            )?;
        }
    }
    Ok(())
}

/// A `dlb-interface` and the speed its load is measured against.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DlbInterfaceView {
    /// Canonical name.
    pub name: String,
    /// The configured `speed`, when set.
    pub speed_mbps: Option<u32>,
    /// The speed load percentages are relative to (the reference 100 Gb/s without `speed`).
    pub measured_against_mbps: u64,
}

/// One DLB group of `show hardware profile dlb`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DlbGroupView {
    /// The route's prefix.
    pub prefix: String,
    /// `flowlet` or `per-packet`.
    pub mode: &'static str,
    /// Members, with their live quality and counters.
    pub members: Vec<NextHopView>,
    /// Group counters (live only).
    pub counters: Option<GroupCountersView>,
}

/// A multipath route DLB does not balance, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HashedGroupView {
    /// The route's prefix.
    pub prefix: String,
    /// Its members that are not `dlb-interface`s.
    pub not_dlb_interfaces: Vec<String>,
}

/// `show hardware profile dlb`: the DLB settings in force and the groups.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DlbView {
    /// `flowlet` or `per-packet`.
    pub mode: &'static str,
    /// Idle gap that ends a flowlet, in microseconds.
    pub flowlet_aging_us: u64,
    /// Load percentages where quality bands 1…7 start.
    pub dre_thresholds: [u8; 7],
    /// The rate estimator keeps 1 − 2^−decay of its value each interval.
    pub decay_factor: u8,
    /// How often port quality is sampled, in nanoseconds.
    pub sampling_interval_ns: u64,
    /// Estimator time constant, sampling interval × 2^decay, in nanoseconds.
    pub time_constant_ns: u64,
    /// Members are weighed by their quality.
    pub load_awareness: bool,
    /// Entries in each worker's flowlet table.
    pub flowlet_table_size: usize,
    /// The virtual next-hop MAC of DLB groups, colon form.
    pub mac_address: String,
    /// The `dlb-interface`s.
    pub interfaces: Vec<DlbInterfaceView>,
    /// Multipath groups balanced dynamically.
    pub groups: Vec<DlbGroupView>,
    /// Multipath groups left to the hash because a member is not a dlb-interface.
    pub hashed_groups: Vec<HashedGroupView>,
    /// Whether counters come from a running switch.
    pub live: bool,
}

/// Builds the `show hardware profile dlb` view; `None` without `hardware
/// profile dlb`. Group counters come from `stats` when given.
pub fn dlb(lb: &LoadBalancing, stats: Option<&SwitchStats>) -> Option<DlbView> {
    let d = lb.model.load_balance.dlb.as_ref()?;
    let interfaces = d
        .ports
        .iter()
        .map(|p| {
            let speed = lb
                .model
                .interfaces
                .get(usize::from(*p))
                .and_then(|i| i.speed_mbps);
            DlbInterfaceView {
                name: lb.port_name(*p),
                speed_mbps: speed,
                measured_against_mbps: speed.map_or(REFERENCE_MBPS, u64::from),
            }
        })
        .collect();
    let all = routes(lb, false, stats)
        .into_iter()
        .chain(routes(lb, true, stats))
        .filter(|r| r.mode.is_some() && r.next_hops.len() > 1);
    let mut groups = Vec::new();
    let mut hashed_groups = Vec::new();
    for r in all {
        if r.dlb_mac.is_some() {
            groups.push(DlbGroupView {
                prefix: r.prefix,
                mode: r.mode.unwrap_or("ecmp"),
                members: r.next_hops,
                counters: r.counters,
            });
        } else {
            let names: Vec<String> = d.ports.iter().map(|p| lb.port_name(*p)).collect();
            let mut outside: Vec<String> = r
                .next_hops
                .iter()
                .map(|h| h.interface.clone())
                .filter(|n| !names.contains(n))
                .collect();
            outside.dedup();
            hashed_groups.push(HashedGroupView {
                prefix: r.prefix,
                not_dlb_interfaces: outside,
            });
        }
    }
    Some(DlbView {
        mode: dlb_mode_name(d.mode),
        flowlet_aging_us: d.flowlet_aging_ns / 1_000,
        dre_thresholds: d.levels,
        decay_factor: d.decay_factor,
        sampling_interval_ns: d.sampling_interval_ns,
        time_constant_ns: d.sampling_interval_ns.saturating_mul(
            1u64.checked_shl(u32::from(d.decay_factor))
                .unwrap_or(u64::MAX),
        ),
        load_awareness: d.load_awareness,
        flowlet_table_size: d.flowlet_table_size,
        mac_address: d.mac.to_string(),
        interfaces,
        groups,
        hashed_groups,
        live: stats.is_some(),
    })
}

/// `show hardware profile dlb --json`: the view with `"configured": true`,
/// or `{"configured": false}` without `hardware profile dlb`.
pub fn dlb_json(view: Option<&DlbView>) -> serde_json::Value {
    match view.map(serde_json::to_value) {
        Some(Ok(serde_json::Value::Object(mut o))) => {
            o.insert("configured".into(), true.into());
            serde_json::Value::Object(o)
        }
        _ => serde_json::json!({ "configured": false }),
    }
}

/// The one line `show hardware profile dlb` prints when DLB is not configured.
pub const DLB_NOT_CONFIGURED: &str =
    "DLB is not configured (no `hardware profile dlb`): multipath groups use the ECMP hash only.";

fn dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// `show hardware profile dlb`: the settings, the dlb-interfaces, then per
/// DLB group a member table (quality, load and counters when live) and the
/// group's counters.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_dlb(out: &mut dyn Write, view: Option<&DlbView>) -> std::io::Result<()> {
    let Some(v) = view else {
        return writeln!(out, "{DLB_NOT_CONFIGURED}");
    };
    writeln!(out, "Dynamic Load Balancing (hardware profile dlb)")?;
    writeln!(out, "  Mode                : {}", v.mode)?;
    writeln!(out, "  Flowlet aging       : {} us", v.flowlet_aging_us)?;
    let levels: Vec<String> = v
        .dre_thresholds
        .iter()
        .enumerate()
        .map(|(i, p)| format!("level-{} {p}%", i + 1))
        .collect();
    writeln!(out, "  DRE thresholds      : {}", levels.join(", "))?;
    // The levels are band widths: show where each band starts.
    let mut start = 0u32;
    let starts: Vec<String> = v
        .dre_thresholds
        .iter()
        .map(|w| {
            start += u32::from(*w);
            format!("{start}%")
        })
        .collect();
    writeln!(
        out,
        "  Quality bands 1-7   : start at {}",
        starts.join(", ")
    )?;
    writeln!(
        out,
        "  Decay factor        : {} (time constant {})",
        v.decay_factor,
        crate::show::duration(v.time_constant_ns)
    )?;
    writeln!(out, "  Sampling interval   : {} ns", v.sampling_interval_ns)?;
    writeln!(out, "  Load awareness      : {}", enabled(v.load_awareness))?;
    writeln!(
        out,
        "  Flowlet table size  : {} entries",
        v.flowlet_table_size
    )?;
    let mac = v
        .mac_address
        .parse::<MacAddr>()
        .map_or_else(|_| v.mac_address.clone(), dotted);
    writeln!(
        out,
        "  DLB MAC             : {mac} (virtual next-hop of DLB groups)"
    )?;
    if v.interfaces.is_empty() {
        writeln!(out, "  DLB interfaces      : none")?;
    } else {
        let ifs: Vec<String> = v
            .interfaces
            .iter()
            .map(|i| match i.speed_mbps {
                Some(s) => format!("{} ({} Gb/s)", i.name, f64::from(s) / 1000.0),
                None => format!(
                    "{} (no speed: {} Gb/s reference)",
                    i.name,
                    i.measured_against_mbps / 1000
                ),
            })
            .collect();
        writeln!(out, "  DLB interfaces      : {}", ifs.join(", "))?;
    }
    writeln!(out)?;
    if v.groups.is_empty() {
        writeln!(
            out,
            "No DLB groups: no multipath route has only dlb-interfaces as members."
        )?;
    }
    for g in &v.groups {
        writeln!(out, "DLB group {} ({})", g.prefix, g.mode)?;
        writeln!(
            out,
            "  {:<14} {:<24} {:>4} {:>6} {:>12} {:>14}",
            "Interface", "Next hop", "Band", "Load%", "Packets", "Bytes"
        )?;
        for m in &g.members {
            writeln!(
                out,
                "  {:<14} {:<24} {:>4} {:>6} {:>12} {:>14}",
                m.interface,
                m.address.as_deref().unwrap_or("(on-link)"),
                dash(m.quality_band),
                dash(m.load_percent),
                dash(m.packets),
                dash(m.bytes)
            )?;
        }
        match &g.counters {
            Some(c) => {
                writeln!(
                    out,
                    "  flowlets started {}, flowlet moves {}, per-packet choices {}",
                    c.flowlets_started, c.flowlet_moves, c.per_packet_choices
                )?;
                writeln!(
                    out,
                    "  reorder risk {}, rehashed {}",
                    c.reorder_risk, c.rehashed
                )?;
            }
            None => writeln!(
                out,
                "  (counters and port quality: ask a running switch with --socket)"
            )?,
        }
        writeln!(out)?;
    }
    for h in &v.hashed_groups {
        let (n, verb) = match h.not_dlb_interfaces.len() {
            1 => ("", "is"),
            _ => ("s", "are"),
        };
        writeln!(
            out,
            "Group {} is hashed (ECMP), not DLB: member{n} {} {verb} not dlb-interface{n}",
            h.prefix,
            h.not_dlb_interfaces.join(", ")
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "hostname leaf1
interface Ethernet1/1
  no switchport
  ip address 10.0.1.1/24
interface Ethernet1/2
  no switchport
  ip address 10.0.2.1/24
interface Ethernet1/3
  no switchport
  speed 400000
  ip address 10.0.100.1/30
interface Ethernet1/4
  no switchport
  ip address 10.0.101.1/30
  ipv6 address 2001:db8:101::1/64
ip route 10.0.9.0/24 10.0.100.2
ip route 10.0.9.0/24 10.0.101.2
ip route 10.0.8.0/24 10.0.1.2
ip route 10.0.8.0/24 10.0.100.2
ip route 172.16.0.0/12 Null0
ipv6 route 2001:db8:9::/48 2001:db8:101::2
hardware profile dlb
  dlb-interface Ethernet1/3, Ethernet1/4
ip load-sharing address source-destination port source-destination universal-id 4242 rotate 5
";

    fn lb() -> LoadBalancing {
        let parsed = railyard_config::parse_str(CONF, "t.conf", &Default::default()).unwrap();
        LoadBalancing::new(&parsed.config).unwrap()
    }

    /// A snapshot like a running switch's: the DLB group carried traffic.
    fn stats() -> SwitchStats {
        let mut s = SwitchStats {
            hostname: "leaf1".into(),
            ..SwitchStats::default()
        };
        let m = |ifc: &str, gw: &str, packets, band, load| MemberStats {
            interface: ifc.into(),
            gateway: Some(gw.into()),
            packets,
            bytes: packets * 1000,
            buckets: 256,
            quality_band: band,
            load_percent: load,
        };
        s.load_balancing.insert(
            "10.0.9.0/24".into(),
            GroupStats {
                mode: "flowlet".into(),
                members: vec![
                    m("Ethernet1/3", "10.0.100.2", 700, 3, 41),
                    m("Ethernet1/4", "10.0.101.2", 300, 1, 15),
                ],
                flowlets_started: 40,
                flowlet_moves: 9,
                per_packet_choices: 0,
                reorder_risk: 2,
                rehashed: 1,
                pinned: 0,
            },
        );
        s
    }

    fn text(f: impl FnOnce(&mut Vec<u8>) -> std::io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn route_table_in_nxos_layout_with_dlb_marked() {
        let lb = lb();
        let r = routes(&lb, false, None);
        let prefixes: Vec<&str> = r.iter().map(|r| r.prefix.as_str()).collect();
        assert_eq!(
            prefixes,
            [
                "10.0.1.0/24",
                "10.0.1.1/32",
                "10.0.2.0/24",
                "10.0.2.1/32",
                "10.0.8.0/24",
                "10.0.9.0/24",
                "10.0.100.0/30",
                "10.0.100.1/32",
                "10.0.101.0/30",
                "10.0.101.1/32",
                "172.16.0.0/12"
            ]
        );
        let s = text(|o| render_routes(o, false, &r));
        assert!(s.starts_with("IP Route Table for VRF \"default\"\n"), "{s}");
        for needle in [
            "10.0.1.0/24, ubest/mbest: 1/0, attached\n    *via 10.0.1.1, Eth1/1, [0/0], direct\n",
            "10.0.1.1/32, ubest/mbest: 1/0, attached\n    *via 10.0.1.1, Eth1/1, [0/0], local\n",
            "10.0.9.0/24, ubest/mbest: 2/0\n    *via 10.0.100.2, Eth1/3, [1/0], static\n    *via 10.0.101.2, Eth1/4, [1/0], static\n    load-balancing: flowlet (DLB), virtual next-hop MAC 00cc.cccc.cccc\n",
            "10.0.8.0/24, ubest/mbest: 2/0\n    *via 10.0.1.2, Eth1/1, [1/0], static\n    *via 10.0.100.2, Eth1/3, [1/0], static\n    load-balancing: ecmp (hash, 512 resilient buckets)\n",
            "172.16.0.0/12, ubest/mbest: 1/0\n    *via Null0, [1/0], static\n",
        ] {
            assert!(s.contains(needle), "lacks {needle:?}:\n{s}");
        }
        assert!(!s.contains("packets"), "no counters without a switch: {s}");
        let v6 = text(|o| render_routes(o, true, &routes(&lb, true, None)));
        assert!(v6.starts_with("IPv6 Routing Table for VRF \"default\""));
        assert!(
            v6.contains("2001:db8:9::/48, ubest/mbest: 1/0\n    *via 2001:db8:101::2, Eth1/4, [1/0], static\n"),
            "{v6}"
        );
        assert!(
            v6.contains("2001:db8:101::/64, ubest/mbest: 1/0, attached"),
            "{v6}"
        );
    }

    #[test]
    fn live_counters_join_the_route_table_by_member() {
        let lb = lb();
        let st = stats();
        let r = routes(&lb, false, Some(&st));
        let g = r.iter().find(|r| r.prefix == "10.0.9.0/24").unwrap();
        assert_eq!(g.next_hops[0].packets, Some(700));
        assert_eq!(g.next_hops[1].bytes, Some(300_000));
        assert_eq!(g.next_hops[0].quality_band, Some(3));
        assert_eq!(g.counters.unwrap().flowlet_moves, 9);
        let s = text(|o| render_routes(o, false, &r));
        assert!(
            s.contains("    *via 10.0.100.2, Eth1/3, [1/0], static\n         packets 700, bytes 700000, quality band 3 (load 41 %)\n"),
            "{s}"
        );
        assert!(
            s.contains("    flowlets started 40, flowlet moves 9, per-packet choices 0, reorder risk 2, rehashed 1\n"),
            "{s}"
        );
        let j = routes_json(&r);
        let g = j["routes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["prefix"] == "10.0.9.0/24")
            .unwrap();
        assert_eq!(g["mode"], "flowlet");
        assert_eq!(g["next_hops"][1]["interface"], "Ethernet1/4");
        assert_eq!(g["next_hops"][1]["packets"], 300);
        assert_eq!(g["counters"]["reorder_risk"], 2);
    }

    #[test]
    fn load_sharing_shows_the_seed_in_force() {
        let lb = lb();
        let v = load_sharing(&lb);
        assert_eq!((v.universal_id, v.rotate, v.multipath_groups), (4242, 5, 2));
        let s = text(|o| render_load_sharing(o, &v));
        assert!(s.contains("Universal-id (Random Seed): 4242\n"), "{s}");
        assert!(
            s.contains("Load-share mode : address source-destination port source-destination\n")
        );
        assert!(s.contains("Rotate : 5\n"), "{s}");
        assert!(
            s.contains(
                "DLB : flowlet on Ethernet1/3, Ethernet1/4; 1 of 2 multipath groups dynamic"
            ),
            "{s}"
        );
        let bare = "hostname leaf1\ninterface Ethernet1/1\n  no switchport\n";
        let parsed = railyard_config::parse_str(bare, "b.conf", &Default::default()).unwrap();
        let v = load_sharing(&LoadBalancing::new(&parsed.config).unwrap());
        assert_eq!(v.universal_id, compile::default_universal_id("leaf1"));
        let s = text(|o| render_load_sharing(o, &v));
        assert!(s.contains(" (derived from hostname)\n"), "{s}");
        assert!(s.contains("DLB : not configured\n"), "{s}");
    }

    #[test]
    fn dlb_profile_lists_settings_groups_and_live_counters() {
        let lb = lb();
        let v = dlb(&lb, None).unwrap();
        assert_eq!(v.time_constant_ns, 64_000);
        assert_eq!(v.interfaces[0].measured_against_mbps, 400_000);
        assert_eq!(v.interfaces[1].measured_against_mbps, REFERENCE_MBPS);
        assert_eq!(v.groups.len(), 1);
        assert_eq!(v.hashed_groups[0].not_dlb_interfaces, ["Ethernet1/1"]);
        let s = text(|o| render_dlb(o, Some(&v)));
        assert!(s.contains("level-1 12%, level-2 13%"), "{s}");
        assert!(
            s.contains("Quality bands 1-7   : start at 12%, 25%, 37%, 50%, 62%, 75%, 87%\n"),
            "{s}"
        );
        assert!(
            s.contains("Ethernet1/4 (no speed: 100 Gb/s reference)"),
            "{s}"
        );
        assert!(s.contains("ask a running switch"), "{s}");
        let st = stats();
        let v = dlb(&lb, Some(&st)).unwrap();
        let s = text(|o| render_dlb(o, Some(&v)));
        let row: Vec<&str> = s
            .lines()
            .find(|l| l.trim_start().starts_with("Ethernet1/3"))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(
            row,
            ["Ethernet1/3", "10.0.100.2", "3", "41", "700", "700000"]
        );
        assert!(s.contains("reorder risk 2, rehashed 1"), "{s}");
        let j = dlb_json(Some(&v));
        assert_eq!(j["configured"], true);
        assert_eq!(j["groups"][0]["counters"]["flowlets_started"], 40);
        assert_eq!(dlb_json(None), serde_json::json!({ "configured": false }));
    }
}
