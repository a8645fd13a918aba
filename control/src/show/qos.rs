//! `show class-map`, `show policy-map`, `show policy-map interface` and
//! `show queuing interface` in the NX-OS layout.
//!
//! The configuration blocks are the configuration crate's own canonical
//! text, indented as NX-OS indents them, so what `show` prints is exactly
//! what `show running-config` would and what railyard understood.

use std::io::Write;

use railyard_config::{
    Bandwidth, ClassMap, Config, Direction, EffectiveQos, InterfaceName, MatchMode, PfcDelays,
    QueueLimit, QueuingClass, QueuingPolicy, Threshold, CLASS_DEFAULT,
};
use railyard_dataplane::model::{pfc, InterfaceModel, PfcModel};
use railyard_dataplane::stats::{InterfaceStats, PollGapStats};

fn indented(out: &mut dyn Write, text: &str, by: usize) -> std::io::Result<()> {
    for line in text.lines() {
        writeln!(out, "{:by$}{line}", "")?;
    }
    Ok(())
}

fn banner(out: &mut dyn Write, title: &str) -> std::io::Result<()> {
    writeln!(out, "\n  {title}\n  {}\n", "=".repeat(title.len()))
}

/// `show class-map [NAME]`.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_class_maps(
    out: &mut dyn Write,
    cfg: &Config,
    only: Option<&str>,
) -> std::io::Result<()> {
    banner(out, "Type qos class-maps")?;
    for cm in cfg
        .class_maps
        .iter()
        .filter(|c| only.is_none_or(|n| n == c.name))
    {
        indented(out, &cm.to_string(), 4)?;
        writeln!(out)?;
    }
    Ok(())
}

/// `show policy-map [NAME]`: qos, queuing and network-qos policies.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_policy_maps(
    out: &mut dyn Write,
    cfg: &Config,
    only: Option<&str>,
) -> std::io::Result<()> {
    let wanted = |n: &str| only.is_none_or(|o| o == n);
    banner(out, "Type qos policy-maps")?;
    for p in cfg.qos_policies.iter().filter(|p| wanted(&p.name)) {
        indented(out, &p.to_string(), 2)?;
        writeln!(out)?;
    }
    banner(out, "Type queuing policy-maps")?;
    for p in cfg.queuing_policies.iter().filter(|p| wanted(&p.name)) {
        indented(out, &p.to_string(), 2)?;
        writeln!(out)?;
    }
    banner(out, "Type network-qos policy-maps")?;
    for p in cfg.network_qos_policies.iter().filter(|p| wanted(&p.name)) {
        indented(out, &p.to_string(), 2)?;
        writeln!(out)?;
    }
    Ok(())
}

/// The body lines of one queuing class (its settings, without the `class` line).
fn class_settings(direction: Direction, class: QueuingClass) -> Vec<String> {
    let policy = QueuingPolicy {
        name: String::new(),
        direction,
        classes: vec![class],
    };
    policy
        .to_string()
        .lines()
        .skip(2)
        .map(|l| l.trim().to_string())
        .collect()
}

fn match_lines(cm: &ClassMap) -> Vec<String> {
    cm.to_string()
        .lines()
        .skip(1)
        .map(|l| format!("Match: {}", l.trim().trim_start_matches("match ")))
        .collect()
}

/// `show policy-map interface NAME`: the policies in force on the
/// interface, with the queue counters of a running switch when `stats` is
/// given.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_policy_map_interface(
    out: &mut dyn Write,
    cfg: &Config,
    eq: &EffectiveQos,
    stats: Option<&InterfaceStats>,
) -> std::io::Result<()> {
    writeln!(
        out,
        "\nGlobal statistics status :   {}\n",
        if stats.is_some() {
            "enabled"
        } else {
            "disabled (from a file)"
        }
    )?;
    writeln!(out, "{}\n", eq.interface)?;
    if let Some(name) = &eq.policies.qos_input {
        writeln!(out, "  Service-policy (qos) input:   {name}\n")?;
        if let Some(p) = cfg.qos_policy(name) {
            for c in &p.classes {
                let (mode, matches) = match cfg.class_map(&c.class) {
                    Some(cm) => (cm.match_mode, match_lines(cm)),
                    None => (MatchMode::Any, Vec::new()),
                };
                let mode = if c.class == CLASS_DEFAULT {
                    "match-any"
                } else {
                    mode.keyword()
                };
                writeln!(out, "    Class-map (qos):   {} ({mode})\n", c.class)?;
                for m in matches {
                    writeln!(out, "      {m}")?;
                }
                if let Some(g) = c.set_qos_group {
                    writeln!(out, "      set qos-group {g}")?;
                }
                writeln!(out)?;
            }
        }
    }
    let out_name = eq
        .policies
        .queuing_output
        .clone()
        .unwrap_or_else(|| "default-8q-out-policy".to_string());
    writeln!(out, "  Service-policy (queuing) output:   {out_name}\n")?;
    for q in (1..8u8).rev().chain(std::iter::once(0)) {
        let c = &eq.egress[usize::from(q)];
        let class = QueuingClass {
            queue: q,
            priority_level: c.priority_level,
            bandwidth: c.bandwidth,
            wred: c.wred,
            queue_limit: c.queue_limit,
            shape: c.shape,
            pause: None,
            class: None,
        };
        writeln!(
            out,
            "    Class-map (queuing):   {} (match-any)",
            Direction::Egress.class_name(q)
        )?;
        for line in class_settings(Direction::Egress, class) {
            writeln!(out, "      {line}")?;
        }
        if let Some(s) = stats.and_then(|s| s.queues.get(usize::from(q))) {
            writeln!(
                out,
                "      queue dropped pkts : {}\n      queue transmit pkts: {}      queue transmit bytes: {}\n      ECN marked pkts : {}      queue depth bytes : {}",
                s.tail_drops + s.wred_drops,
                s.tx_packets,
                s.tx_bytes,
                s.ecn_marked,
                s.depth_bytes
            )?;
        }
        writeln!(out)?;
    }
    if let Some(name) = &eq.policies.queuing_input {
        writeln!(out, "  Service-policy (queuing) input:   {name}\n")?;
        if let Some(p) = cfg.queuing_policy(name) {
            for c in &p.classes {
                writeln!(
                    out,
                    "    Class-map (queuing):   {} (match-any)",
                    p.direction.class_name(c.queue)
                )?;
                for line in class_settings(p.direction, c.clone()) {
                    writeln!(out, "      {line}")?;
                }
                writeln!(out)?;
            }
        }
    }
    Ok(())
}

/// Resolves `name` against the configuration, for the interface-scoped shows.
///
/// # Errors
/// A message when the name is malformed or not configured.
pub fn find_interface(cfg: &Config, name: &str) -> Result<InterfaceName, String> {
    let n: InterfaceName = name.parse().map_err(|e| format!("{name:?}: {e}"))?;
    if cfg.interface_by_name(&n).is_none() {
        return Err(format!("interface {n} is not configured"));
    }
    Ok(n)
}

fn bandwidth_cell(b: Option<Bandwidth>) -> String {
    match b {
        Some(Bandwidth::RemainingPercent(p)) | Some(Bandwidth::Percent(p)) => p.to_string(),
        Some(Bandwidth::Rate(bps)) => format!("{}M", bps / 1_000_000),
        None => "-".into(),
    }
}

fn threshold(t: Threshold) -> String {
    match t {
        Threshold::Bytes(b) => format!("{b} bytes"),
        Threshold::Packets(p) => format!("{p} packets"),
    }
}

fn limit_cell(l: Option<QueueLimit>) -> String {
    match l {
        Some(QueueLimit::Bytes(b)) => format!("{b}B"),
        Some(QueueLimit::Packets(p)) => format!("{p}P"),
        Some(QueueLimit::Percent(p)) => format!("{p}%"),
        Some(QueueLimit::Dynamic(a)) => format!("{a}(D)"),
        None => format!("{}(D)", railyard_dataplane::model::DEFAULT_DYNAMIC_LIMIT),
    }
}

/// `show queuing interface NAME`: the egress scheduling table, then the
/// counters and wait-time percentiles of every qos-group when asked of a
/// running switch.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_queuing(
    out: &mut dyn Write,
    eq: &EffectiveQos,
    stats: Option<&InterfaceStats>,
) -> std::io::Result<()> {
    let rule = "-".repeat(78);
    let source = if eq.policies.queuing_output.is_some() {
        "Policy"
    } else {
        "System"
    };
    writeln!(out, "\nEgress Queuing for {} [{source}]", eq.interface)?;
    writeln!(out, "{rule}")?;
    writeln!(
        out,
        "QoS-Group# Bandwidth% PrioLevel                Shape                   QLimit"
    )?;
    writeln!(
        out,
        "                                   Min          Max        Units"
    )?;
    writeln!(out, "{rule}")?;
    for q in (0..8usize).rev() {
        let c = &eq.egress[q];
        let (min, max, units) = match c.shape {
            Some(s) => (
                (s.min_bps / 1_000_000).to_string(),
                (s.max_bps / 1_000_000).to_string(),
                "mbps",
            ),
            None => ("-".into(), "-".into(), "-"),
        };
        writeln!(
            out,
            "{:>7} {:>13} {:>9} {:>11} {:>12} {:>5} {:>15}",
            q,
            if c.priority_level.is_some() {
                "-".into()
            } else {
                bandwidth_cell(c.bandwidth)
            },
            c.priority_level.map_or("-".into(), |l| l.to_string()),
            min,
            max,
            units,
            limit_cell(c.queue_limit),
        )?;
    }
    writeln!(out, "{rule}")?;
    for q in 0..8usize {
        let c = &eq.egress[q];
        if let Some(w) = &c.wred {
            writeln!(
                out,
                "  QoS-Group {q}: WRED min {} max {} drop-probability {}% weight {}{}",
                threshold(w.min),
                threshold(w.max),
                w.drop_probability,
                w.weight,
                if w.ecn { ", ECN" } else { "" }
            )?;
        }
    }
    let Some(stats) = stats else {
        return writeln!(
            out,
            "\n(counters: ask a running switch with --socket, or read a replay's with --stats FILE)"
        );
    };
    for s in &stats.queues {
        let wait = crate::show::duration;
        let rows = [
            ("Tx Pkts", s.tx_packets.to_string()),
            ("Tx Byts", s.tx_bytes.to_string()),
            ("WRED Drop Pkts", s.wred_drops.to_string()),
            ("WRED Drop Byts", s.wred_drop_bytes.to_string()),
            ("Tail Drop Pkts", s.tail_drops.to_string()),
            ("Tail Drop Byts", s.tail_drop_bytes.to_string()),
            ("ECN Marked Pkts", s.ecn_marked.to_string()),
            ("Q Depth Byts", s.depth_bytes.to_string()),
            ("Max Q Depth Byts", s.max_depth_bytes.to_string()),
            ("Wait p50", wait(s.latency_ns.p50)),
            ("Wait p99", wait(s.latency_ns.p99)),
            ("Wait max", wait(s.latency_ns.max)),
        ];
        writeln!(out)?;
        render_box(out, &format!("QOS GROUP {}", s.queue), &rows)?;
    }
    Ok(())
}

/// A box with a centred title over `label | value` rows, NX-OS's layout
/// for per-queue counters; as wide as its widest value needs (at least
/// the 60 columns NX-OS uses), so no row spills out of it.
///
/// # Errors
/// Only I/O errors of `out`.
fn render_box(out: &mut dyn Write, title: &str, rows: &[(&str, String)]) -> std::io::Result<()> {
    const LABEL: usize = 38;
    let value = rows
        .iter()
        .map(|(_, v)| v.chars().count())
        .max()
        .unwrap_or(0)
        .max(17);
    let label = rows
        .iter()
        .map(|(l, _)| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(LABEL);
    let inner = label + 3 + value;
    let bar = format!("+{}+", "-".repeat(inner));
    writeln!(out, "{bar}\n|{title:^inner$}|\n{bar}")?;
    for (l, v) in rows {
        writeln!(out, "|{l:>label$} | {v:>value$}|")?;
    }
    writeln!(out, "{bar}")
}

/// `show queuing interface NAME --json`: the resolved egress configuration
/// and, from a running switch, the queue counters.
pub fn queuing_json(eq: &EffectiveQos, stats: Option<&InterfaceStats>) -> serde_json::Value {
    serde_json::json!({
        "interface": eq.interface.to_string(),
        "policy": eq.policies.queuing_output,
        "egress": eq.egress,
        "queues": stats.map(|s| &s.queues),
    })
}

/// The ingress (PFC) half of `show queuing interface`: per lossless
/// qos-group the headroom buffer, pause and resume thresholds the switch
/// uses (configured or computed), then the PFC frame counts.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_ingress(
    out: &mut dyn Write,
    name: &str,
    pfc: &PfcModel,
    stats: Option<&InterfaceStats>,
) -> std::io::Result<()> {
    let head = [
        "QoS-Group#                 Pause".to_string(),
        "           Buff Size       Pause Th      Resume Th".to_string(),
    ];
    let mut rows = Vec::new();
    if pfc.enabled_priorities == 0 {
        rows.push("  (no lossless qos-group on this interface)".to_string());
    }
    for q in (0..8usize).rev() {
        if pfc.enabled_priorities & (1 << q) == 0 {
            continue;
        }
        let t = &pfc.pg[q];
        rows.push(format!(
            "{q:>7} {:>13} {:>14} {:>14}",
            t.xoff_bytes + t.headroom_bytes,
            t.xoff_bytes,
            t.xon_bytes
        ));
    }
    writeln!(out, "\nIngress Queuing for {name}")?;
    ruled_table(out, &[&head, &rows])?;
    let Some(s) = stats else { return Ok(()) };
    let p = &s.pfc;
    let rx: u64 = p.rx_pause.iter().chain(&p.rx_resume).sum();
    let tx: u64 = p.tx_pause.iter().chain(&p.tx_resume).sum();
    let total = [format!("TxPPP: {tx:>20}, RxPPP: {rx:>20}")];
    let mut rows =
        vec!["PFC_COS QOS_Group    TxPause  TxCount    RxPause  RxCount     Paused".to_string()];
    rows.extend((0..8usize).map(|q| {
        // Active only while a pause is in force: an XOFF held toward the
        // peer (Tx) or a pause the peer put on the queue (Rx). Frame counts
        // cannot say so, since refreshes count as pauses.
        let state = |held: u8| {
            if held & (1 << q) != 0 {
                "Active"
            } else {
                "Inactive"
            }
        };
        format!(
            "{q:>7} {q:>9} {:>10} {:>8} {:>10} {:>8} {:>10}",
            state(p.tx_xoff),
            p.tx_pause[q] + p.tx_resume[q],
            state(p.rx_paused),
            p.rx_pause[q] + p.rx_resume[q],
            crate::show::duration(p.paused_ns[q])
        )
    }));
    writeln!(out, "\nPFC Statistics")?;
    ruled_table(out, &[&total, &rows])
}

/// Where a delay term in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Origin {
    /// The interface's `priority-flow-control …` line sets it.
    Configured,
    /// The standard term ([`PfcDelays::default`](railyard_dataplane::model::PfcDelays)).
    Default,
}

impl Origin {
    fn of(set: bool) -> Self {
        if set {
            Origin::Configured
        } else {
            Origin::Default
        }
    }

    fn word(self) -> &'static str {
        match self {
            Origin::Configured => "configured",
            Origin::Default => "default",
        }
    }
}

/// The delays a pause takes on the port's link, as in force, and where
/// each came from: what the headroom need is computed from.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ResponseTerms {
    /// A largest frame (MTU plus Ethernet overhead): one is in flight at each end.
    pub frame_bytes: u64,
    /// The cable to the peer.
    pub cable_metres: u64,
    /// Its round trip (5 ns per metre each way).
    pub cable_round_trip_ns: u64,
    /// Where the cable length came from.
    pub cable_source: Origin,
    /// The peer's response in bit times, when given so.
    pub peer_response_bits: Option<u64>,
    /// The peer's response in time at the port's speed.
    pub peer_response_ns: u64,
    /// Where the peer's response came from.
    pub peer_response_source: Origin,
    /// How long the port's poll loop may go without polling; `None` where
    /// no poll loop serves the port (replay, `bind pcap`).
    pub software_response_ns: Option<u64>,
    /// Where the software response came from (with it).
    pub software_response_source: Option<Origin>,
}

/// What the response of the port's path asks of the headroom (see
/// [`response`]); its JSON is `show queuing interface --json`'s `response`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Response {
    /// The port's speed, which the need is computed at.
    pub speed_mbps: u64,
    /// The delays in force.
    pub terms: ResponseTerms,
    /// The longest gap between polls of any worker, last 10 to 20 s (a
    /// running switch only).
    pub poll_gap_recent_max_ns: Option<u64>,
    /// The longest since the switch started (a running switch only).
    pub poll_gap_max_ns: Option<u64>,
    /// Per lossless qos-group.
    pub groups: Vec<GroupResponse>,
}

/// One lossless qos-group's headroom against the need.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct GroupResponse {
    /// The qos-group (= PFC priority).
    pub qos_group: usize,
    /// The headroom in force.
    pub headroom_bytes: u64,
    /// What a peer at the port's speed sends before the pause stops it,
    /// by the terms in force (what `check` holds a configured headroom to).
    pub needed_bytes: u64,
    /// The same with the recent longest gap between polls in place of the
    /// software response (a running switch only).
    pub measured_needed_bytes: Option<u64>,
    /// The most the ingress group has held.
    pub peak_bytes: u64,
    /// How much of the headroom that took.
    pub peak_beyond_xoff_bytes: u64,
    /// The headroom is below either need.
    pub short: bool,
}

/// What the response of a port's path asks of the headroom: the delays in
/// force (`m.pfc.delays`; `configured` says which the interface sets, and
/// `software` whether a poll loop serves the port, adding its response)
/// and, per lossless qos-group, the bytes a peer at the port's speed sends
/// beyond xOFF before it stops, beside the headroom in force and the most
/// the group has held. From a running switch, also the need with the
/// longest recent gap between the workers' polls as the software
/// response. `None` for a port without lossless groups.
pub fn response(
    m: &InterfaceModel,
    configured: &PfcDelays,
    software: bool,
    stats: Option<&InterfaceStats>,
    gaps: &[PollGapStats],
) -> Option<Response> {
    if m.pfc.enabled_priorities == 0 {
        return None;
    }
    let d = &m.pfc.delays;
    let recent = gaps.iter().map(|g| g.recent_max_ns).max();
    let ever = gaps.iter().map(|g| g.max_ns).max();
    let wire = d.wire_headroom_bytes(m.speed_mbps, m.mtu);
    let needed = if software {
        d.software_headroom_bytes(m.speed_mbps, m.mtu)
    } else {
        wire
    };
    let measured = recent.map(|gap| wire.saturating_add(pfc::bytes_at(gap, m.speed_mbps)));
    let groups = (0..8usize)
        .filter(|q| m.pfc.enabled_priorities & (1 << q) != 0)
        .map(|q| {
            let t = &m.pfc.pg[q];
            let peak = stats.map_or(0, |s| s.pfc.ingress_peak_bytes[q]);
            GroupResponse {
                qos_group: q,
                headroom_bytes: t.headroom_bytes,
                needed_bytes: needed,
                measured_needed_bytes: measured,
                peak_bytes: peak,
                peak_beyond_xoff_bytes: peak.saturating_sub(t.xoff_bytes),
                short: t.headroom_bytes < needed.max(measured.unwrap_or(0)),
            }
        })
        .collect();
    let terms = ResponseTerms {
        frame_bytes: u64::from(m.mtu) + pfc::FRAME_OVERHEAD_BYTES,
        cable_metres: d.cable_metres,
        cable_round_trip_ns: d.cable_round_trip_ns(),
        cable_source: Origin::of(configured.cable_metres.is_some()),
        peer_response_bits: match d.peer_response {
            pfc::PeerResponse::Bits(b) => Some(b),
            pfc::PeerResponse::Nanos(_) => None,
        },
        peer_response_ns: d.peer_response.ns_at(m.speed_mbps),
        peer_response_source: Origin::of(configured.peer_response.is_some()),
        software_response_ns: software.then_some(d.software_response_ns),
        software_response_source: software
            .then(|| Origin::of(configured.software_response_ns.is_some())),
    };
    Some(Response {
        speed_mbps: pfc::speed_or_default(m.speed_mbps),
        terms,
        poll_gap_recent_max_ns: recent,
        poll_gap_max_ns: ever,
        groups,
    })
}

/// The text form of [`response`], after the ingress tables of `show
/// queuing interface`.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_response(out: &mut dyn Write, r: &Response) -> std::io::Result<()> {
    let t = &r.terms;
    let dur = crate::show::duration;
    let peer = match t.peer_response_bits {
        Some(b) => format!(
            "{b} bit times ({}), {} at {} Mb/s",
            t.peer_response_source.word(),
            dur(t.peer_response_ns),
            r.speed_mbps
        ),
        None => format!(
            "{} ({})",
            dur(t.peer_response_ns),
            t.peer_response_source.word()
        ),
    };
    let software = match (t.software_response_ns, t.software_response_source) {
        (Some(ns), Some(o)) => format!("{} ({})", dur(ns), o.word()),
        _ => "none (no poll loop serves this port)".to_string(),
    };
    let mut head = vec![
        format!(
            "Cable: {} m ({}), round trip {}",
            t.cable_metres,
            t.cable_source.word(),
            dur(t.cable_round_trip_ns)
        ),
        format!("Peer response: {peer}"),
        format!("Software response: {software}"),
        format!(
            "Frames in flight: one of {} bytes at each end",
            t.frame_bytes
        ),
    ];
    if let (Some(recent), Some(ever)) = (r.poll_gap_recent_max_ns, r.poll_gap_max_ns) {
        head.push(format!(
            "Longest gap between polls, last 10-20 s: {} (since start: {})",
            dur(recent),
            dur(ever)
        ));
    }
    head.push(format!(
        "Needed: what a peer at {} Mb/s sends before it stops, by the terms above",
        r.speed_mbps
    ));
    if r.poll_gap_recent_max_ns.is_some() {
        head.push("Measured: the same with that gap as the software response".to_string());
    }
    let mut rows = vec![
        "QoS-Group      Headroom        Needed      Measured     Peak held  Beyond xOFF"
            .to_string(),
    ];
    rows.extend(r.groups.iter().map(|g| {
        format!(
            "{:>9} {:>13} {:>13} {:>13} {:>13} {:>12}{}",
            g.qos_group,
            g.headroom_bytes,
            g.needed_bytes,
            g.measured_needed_bytes
                .map_or_else(|| "-".to_string(), |b| b.to_string()),
            g.peak_bytes,
            g.peak_beyond_xoff_bytes,
            if g.short { "  short" } else { "" }
        )
    }));
    writeln!(out, "\nPFC Response on This Path")?;
    ruled_table(out, &[&head, &rows])
}

/// A table of `blocks` with a rule of `-` above, between and below them,
/// as wide as its widest line (62 columns at least, as NX-OS draws them),
/// so no row spills past the rules.
///
/// # Errors
/// Only I/O errors of `out`.
fn ruled_table(out: &mut dyn Write, blocks: &[&[String]]) -> std::io::Result<()> {
    let width = blocks
        .iter()
        .flat_map(|b| b.iter())
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0)
        .max(62);
    let rule = "-".repeat(width);
    writeln!(out, "{rule}")?;
    for block in blocks {
        for l in *block {
            writeln!(out, "{l}")?;
        }
        writeln!(out, "{rule}")?;
    }
    Ok(())
}

/// `show queuing pfc-queue [interface NAME]`: the PFC watchdog per lossless
/// queue — whether it is armed, its state, storms, restores and drops.
///
/// # Errors
/// Only I/O errors of `out`.
pub fn render_pfc_queue(
    out: &mut dyn Write,
    cfg: &Config,
    stats: &railyard_dataplane::stats::SwitchStats,
    only: Option<&InterfaceName>,
) -> std::io::Result<()> {
    let t = &cfg.pfc_watchdog;
    let timers = format!(
        "Watchdog interval {} ms, shutdown multiplier {}, restore multiplier {}, \
         fixed restore multiplier {}, ingress {}",
        t.interval_ms,
        t.shutdown_multiplier,
        t.auto_restore_multiplier,
        t.fixed_restore_multiplier,
        ingress_action(cfg)
    );
    let rule = format!("+{}+", "-".repeat(timers.chars().count() + 2));
    writeln!(out, "{rule}\n| {timers} |\n{rule}")?;
    let mut ifcs: Vec<_> = cfg
        .interfaces
        .iter()
        .filter(|i| only.is_none_or(|n| *n == i.name))
        .collect();
    ifcs.sort_by(|a, b| crate::natural::cmp(&a.name.to_string(), &b.name.to_string()));
    for ifc in ifcs {
        let name = ifc.name.to_string();
        let eq = cfg.effective_qos(&ifc.name);
        let s = stats.interfaces.get(&name);
        writeln!(
            out,
            "{name}  watchdog {}",
            if eq.watchdog.enabled {
                "enabled"
            } else {
                "disabled"
            }
        )?;
        writeln!(
            out,
            "  QOS Group  State      Storms  Restores   Drops pkts   Drops bytes"
        )?;
        for q in 0..8usize {
            if eq.lossless & (1 << q) == 0 {
                continue;
            }
            let (storms, restores) = s.map_or((0, 0), |s| {
                (s.pfc.watchdog_storms[q], s.pfc.watchdog_restores[q])
            });
            let (drops, bytes) = s
                .and_then(|s| s.queues.get(q))
                .map_or((0, 0), |qs| (qs.watchdog_drops, qs.watchdog_drop_bytes));
            let state = if storms > restores { "Stormed" } else { "Ok" };
            writeln!(
                out,
                "  {q:>9}  {state:<9} {storms:>7} {restores:>9} {drops:>12} {bytes:>13}"
            )?;
        }
    }
    Ok(())
}

/// What happens to lossless traffic arriving for a queue the watchdog shut.
fn ingress_action(cfg: &Config) -> &'static str {
    if cfg.pfc_watchdog_ingress_forward {
        "forward"
    } else {
        "drop"
    }
}

/// `show queuing pfc-queue --json`.
pub fn pfc_queue_json(
    cfg: &Config,
    stats: &railyard_dataplane::stats::SwitchStats,
    only: Option<&InterfaceName>,
) -> serde_json::Value {
    let interfaces: serde_json::Map<String, serde_json::Value> = cfg
        .interfaces
        .iter()
        .filter(|i| only.is_none_or(|n| *n == i.name))
        .map(|ifc| {
            let eq = cfg.effective_qos(&ifc.name);
            let name = ifc.name.to_string();
            let s = stats.interfaces.get(&name);
            let queues: Vec<serde_json::Value> = (0..8usize)
                .filter(|q| eq.lossless & (1 << q) != 0)
                .map(|q| {
                    let storms = s.map_or(0, |s| s.pfc.watchdog_storms[q]);
                    let restores = s.map_or(0, |s| s.pfc.watchdog_restores[q]);
                    let qs = s.and_then(|s| s.queues.get(q));
                    serde_json::json!({
                        "qos_group": q,
                        "state": if storms > restores { "stormed" } else { "ok" },
                        "storms": storms,
                        "restores": restores,
                        "drops": qs.map_or(0, |q| q.watchdog_drops),
                        "drop_bytes": qs.map_or(0, |q| q.watchdog_drop_bytes),
                        "ingress_forwarded": s.map_or(0, |s| s.pfc.watchdog_ingress_forwarded[q]),
                    })
                })
                .collect();
            (
                name,
                serde_json::json!({ "watchdog": eq.watchdog.enabled, "queues": queues }),
            )
        })
        .collect();
    serde_json::json!({
        "interval_ms": cfg.pfc_watchdog.interval_ms,
        "shutdown_multiplier": cfg.pfc_watchdog.shutdown_multiplier,
        "restore_multiplier": cfg.pfc_watchdog.auto_restore_multiplier,
        "fixed_restore_multiplier": cfg.pfc_watchdog.fixed_restore_multiplier,
        "ingress": ingress_action(cfg),
        "interfaces": interfaces,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> Config {
        railyard_config::parse_str(crate::demo::DEMO_CONFIG, "demo.conf", &Default::default())
            .unwrap()
            .config
    }

    /// The response section sets each lossless group's headroom against
    /// what a peer at the port's speed sends by the terms in force and, on
    /// a running switch, in the worst recent gap of any worker, and marks
    /// the short ones; no lossless group: no section.
    #[test]
    fn response_sets_headroom_against_the_terms_and_the_worst_recent_gap() {
        let mut m = InterfaceModel::new("Ethernet1/1", railyard_dataplane::wire::MacAddr([2; 6]));
        m.speed_mbps = Some(1000);
        m.mtu = 1500;
        m.pfc.enabled_priorities = 1 << 3;
        m.pfc.pg[3].xoff_bytes = 1_000_000;
        m.pfc.pg[3].headroom_bytes = 1_000_000;
        let gap = |recent, max| PollGapStats {
            recent_max_ns: recent,
            max_ns: max,
            buckets: vec![],
        };
        let mut stats = InterfaceStats::default();
        stats.pfc.ingress_peak_bytes[3] = 1_400_000;
        let gaps = [gap(2_000_000, 40_000_000), gap(12_000_000, 12_000_000)];
        let standard = PfcDelays::default();
        let v = response(&m, &standard, true, Some(&stats), &gaps).expect("a lossless group");
        let g = &v.groups[0];
        // The wire at 1 Gb/s: a 1542-byte frame at each end, 100 m of cable
        // (1000 ns: 125 bytes), 3840 bits (480 bytes): 3689 bytes. The
        // software response, 10 ms, is 1 250 000 more; the worst recent
        // gap, 12 ms, 1 500 000.
        assert_eq!(g.needed_bytes, 3_689 + 1_250_000);
        assert_eq!(g.measured_needed_bytes, Some(3_689 + 1_500_000));
        assert_eq!((g.peak_beyond_xoff_bytes, g.short), (400_000, true));
        assert_eq!(v.poll_gap_max_ns, Some(40_000_000));
        assert_eq!(
            v.terms,
            ResponseTerms {
                frame_bytes: 1542,
                cable_metres: 100,
                cable_round_trip_ns: 1_000,
                cable_source: Origin::Default,
                peer_response_bits: Some(3840),
                peer_response_ns: 3_840,
                peer_response_source: Origin::Default,
                software_response_ns: Some(10_000_000),
                software_response_source: Some(Origin::Default),
            }
        );
        let mut out = Vec::new();
        render_response(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        for line in [
            "Cable: 100 m (default), round trip 1000 ns",
            "Peer response: 3840 bit times (default), 3840 ns at 1000 Mb/s",
            "Software response: 10.0 ms (default)",
            "Frames in flight: one of 1542 bytes at each end",
            "last 10-20 s: 12.0 ms (since start: 40.0 ms)",
        ] {
            assert!(text.contains(line), "{line}:\n{text}");
        }
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == ["3", "1000000", "1253689", "1503689", "1400000", "400000", "short"]),
            "{text}"
        );
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["terms"]["cable_source"], "default");
        assert_eq!(json["groups"][0]["measured_needed_bytes"], 1_503_689);

        // Configured terms are in force and say so; 400 µs of software
        // response (50 000 bytes) and no cable: 1 000 000 bytes of headroom
        // are enough by the terms, not for the 12 ms gap.
        let configured = PfcDelays {
            cable_metres: Some(0),
            peer_response: Some(railyard_config::PeerResponse::Nanos(2_000)),
            software_response_ns: Some(400_000),
        };
        m.pfc.delays = crate::compile::pfc_delays(&configured);
        let v = response(&m, &configured, true, None, &gaps).unwrap();
        let g = &v.groups[0];
        // 3084 (frames) + 0 (cable) + 250 (2 µs at 1 Gb/s) + 50 000.
        assert_eq!(g.needed_bytes, 3_084 + 250 + 50_000);
        assert_eq!(g.measured_needed_bytes, Some(3_084 + 250 + 1_500_000));
        assert!(g.short, "the measured gap needs more");
        let mut out = Vec::new();
        render_response(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        for line in [
            "Cable: 0 m (configured), round trip 0 ns",
            "Peer response: 2000 ns (configured)",
            "Software response: 400.0 us (configured)",
        ] {
            assert!(text.contains(line), "{line}:\n{text}");
        }

        // From a file (no gaps) on a port no poll loop serves: the wire's
        // terms alone, no gap line, no measured need.
        let v = response(&m, &PfcDelays::default(), false, None, &[]).unwrap();
        assert_eq!(v.groups[0].needed_bytes, 3_084 + 250);
        assert_eq!(v.groups[0].measured_needed_bytes, None);
        assert_eq!(v.terms.software_response_ns, None);
        let mut out = Vec::new();
        render_response(&mut out, &v).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Software response: none"), "{text}");
        assert!(!text.contains("Longest gap"), "{text}");
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>()
                    == ["3", "1000000", "3334", "-", "0", "0"]),
            "{text}"
        );
        m.pfc.enabled_priorities = 0;
        assert!(response(&m, &standard, true, Some(&stats), &gaps).is_none());
    }

    #[test]
    fn class_maps_in_nxos_layout() {
        let mut out = Vec::new();
        render_class_maps(&mut out, &cfg(), Some("CNP")).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(
            s.contains("Type qos class-maps\n  ==================="),
            "{s}"
        );
        assert!(
            s.contains("    class-map type qos match-any CNP\n      match dscp 48"),
            "{s}"
        );
        assert!(!s.contains("ROCEv2"), "{s}");
    }

    #[test]
    fn policy_map_interface_shows_classification_and_every_queue() {
        let c = cfg();
        let name = find_interface(&c, "e1/1").unwrap();
        let eq = c.effective_qos(&name);
        let mut stats = InterfaceStats::default();
        stats.queues = (0..8)
            .map(|q| railyard_dataplane::stats::QueueStats {
                queue: q,
                tx_packets: u64::from(q) * 10,
                ..Default::default()
            })
            .collect();
        let mut out = Vec::new();
        render_policy_map_interface(&mut out, &c, &eq, Some(&stats)).unwrap();
        let s = String::from_utf8(out).unwrap();
        assert!(
            s.contains("Service-policy (qos) input:   QOS_CLASSIFICATION"),
            "{s}"
        );
        assert!(s.contains("Class-map (qos):   ROCEv2 (match-any)\n\n      Match: dscp 24\n      set qos-group 3"), "{s}");
        assert!(
            s.contains("Service-policy (queuing) output:   QOS_EGRESS_PORT"),
            "{s}"
        );
        assert!(s.contains("c-out-8q-q3 (match-any)\n      bandwidth remaining percent 50\n      random-detect minimum-threshold 150 kbytes"), "{s}");
        assert!(
            s.contains("c-out-8q-q7 (match-any)\n      priority level 1"),
            "{s}"
        );
        assert!(s.contains("queue transmit pkts: 30"), "{s}");
        assert!(find_interface(&c, "e1/9").is_err());
    }

    /// The Tx and Rx pause states of `q`'s row in `render_ingress`'s PFC table.
    fn pause_states(stats: &InterfaceStats, q: usize) -> (String, String) {
        let mut out = Vec::new();
        render_ingress(&mut out, "Ethernet1/4", &PfcModel::default(), Some(stats)).unwrap();
        let s = String::from_utf8(out).unwrap();
        let q = q.to_string();
        let w: Vec<&str> = s
            .lines()
            .skip_while(|l| !l.starts_with("PFC_COS"))
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.first() == Some(&q.as_str()))
            .unwrap_or_else(|| panic!("no row {q}:\n{s}"));
        (w[2].to_string(), w[4].to_string())
    }

    #[test]
    fn a_pause_is_active_only_while_in_force() {
        let mut stats = InterfaceStats::default();
        stats.pfc.enabled = 0x08;
        // Many refreshes, one resume: more pauses than resumes, yet nothing
        // held now.
        stats.pfc.tx_pause[3] = 3941;
        stats.pfc.tx_resume[3] = 1;
        stats.pfc.rx_pause[3] = 17;
        assert_eq!(
            pause_states(&stats, 3),
            ("Inactive".into(), "Inactive".into())
        );
        stats.pfc.tx_xoff = 0x08;
        assert_eq!(
            pause_states(&stats, 3),
            ("Active".into(), "Inactive".into())
        );
        stats.pfc.tx_xoff = 0;
        stats.pfc.rx_paused = 0x08;
        assert_eq!(
            pause_states(&stats, 3),
            ("Inactive".into(), "Active".into())
        );
        assert_eq!(
            pause_states(&stats, 4),
            ("Inactive".into(), "Inactive".into())
        );
    }

    #[test]
    fn queuing_tables_keep_their_rows_inside_the_box() {
        let c = cfg();
        let name = find_interface(&c, "e1/4").unwrap();
        let eq = c.effective_qos(&name);
        let mut stats = InterfaceStats::default();
        stats.queues = (0..8)
            .map(|q| railyard_dataplane::stats::QueueStats {
                queue: q,
                tx_packets: u64::MAX / 16,
                max_depth_bytes: 3_147_228,
                latency_ns: railyard_dataplane::stats::LatencyStats {
                    p50: 266_200,
                    p99: 270_300,
                    max: 12_345_678_900,
                },
                ..Default::default()
            })
            .collect();
        stats.pfc.enabled = 0x08;
        stats.pfc.tx_pause = [u64::MAX / 16; 8];
        stats.pfc.tx_resume = [u64::MAX / 16; 8];
        stats.pfc.paused_ns = [987_654_321_000; 8];
        let pfc = crate::compile::compile(&c)
            .unwrap()
            .model
            .interfaces
            .iter()
            .find(|i| i.name == "Ethernet1/4")
            .unwrap()
            .pfc;
        let mut out = Vec::new();
        render_queuing(&mut out, &eq, Some(&stats)).unwrap();
        render_ingress(&mut out, "Ethernet1/4", &pfc, Some(&stats)).unwrap();
        let mut sw = railyard_dataplane::stats::SwitchStats::default();
        sw.interfaces.insert("Ethernet1/4".into(), stats);
        render_pfc_queue(&mut out, &c, &sw, None).unwrap();
        let s = String::from_utf8(out).unwrap();
        crate::show::testing::assert_fits(&s);
        assert!(
            s.contains("|                              Wait max |"),
            "{s}"
        );
        assert!(s.contains("| Watchdog interval 100 ms"), "{s}");
    }
}
