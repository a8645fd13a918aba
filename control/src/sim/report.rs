//! What a simulation showed: the job's result as nccl-tests prints it, the
//! fabric's counters summed the way an engineer reads them (ECN first, PFC
//! as the backstop), and per receiver how evenly and how fully its senders
//! shared its link.

use std::collections::BTreeMap;
use std::io::{self, Write};

use railyard_dataplane::clock::Nanos;
use railyard_roce::host::HostOutcome;
use railyard_roce::report::{render_table, render_training, FlowResult, JobResult, TrainingResult};
use serde::Serialize;

use super::build::Fabric;
use super::fct::{self, FctSummary, FlowFct};
use super::load::{self, LinkLoad, UplinkBalance};
use super::occupancy::QueueOccupancy;
use crate::lab::collective::{tally_switch, FabricSummary, LinkPfc};

/// Bytes each sender delivered to each receiver, in time bins.
pub(super) struct Delivery {
    bin_ns: Nanos,
    ranks: usize,
    /// Per (sender rank, receiver rank), at `sender * ranks + receiver`:
    /// payload bytes per bin. Indexed, not hashed: a thousand-rank
    /// AllToAll records a million pairs, one lookup per delivered frame.
    bins: Vec<Vec<u64>>,
    /// Frames a host could not send because the packet pool was dry.
    pub pool_dry: u64,
}

impl Delivery {
    /// Nothing delivered yet among `ranks` ranks, in bins of `bin_ns`.
    pub(super) fn new(bin_ns: Nanos, ranks: usize) -> Self {
        Delivery {
            bin_ns: bin_ns.max(1),
            ranks,
            bins: (0..ranks * ranks).map(|_| Vec::new()).collect(),
            pool_dry: 0,
        }
    }

    /// Adds what `other` recorded (another worker's share of the fabric).
    pub(super) fn merge(&mut self, other: Delivery) {
        for (v, bins) in self.bins.iter_mut().zip(other.bins) {
            if v.len() < bins.len() {
                v.resize(bins.len(), 0);
            }
            for (a, b) in v.iter_mut().zip(bins) {
                *a += b;
            }
        }
        self.pool_dry += other.pool_dry;
    }

    /// Counts `bytes` of payload from `src` arriving at `dst` at `now`.
    pub(super) fn record(&mut self, src: usize, dst: usize, now: Nanos, bytes: u32) {
        let bin = (now / self.bin_ns) as usize;
        let Some(v) = self.bins.get_mut(src * self.ranks + dst) else {
            return;
        };
        if v.len() <= bin {
            v.resize(bin + 1, 0);
        }
        v[bin] += u64::from(bytes);
    }
}

/// How the senders into one receiver shared its link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowRate {
    /// The receiver (`host.ethN`).
    pub dst: String,
    /// Ranks sending to it.
    pub senders: usize,
    /// The middle 80 % of its transfer (by bytes), microseconds.
    pub window_us: [f64; 2],
    /// Jain's fairness index of the senders' bytes in the window (1: all
    /// equal; 1/n: one sender took everything).
    pub jain: f64,
    /// Payload rate in the window, Gb/s.
    pub goodput_gbps: f64,
    /// The payload rate the receiver's line rate allows at the path MTU,
    /// Gb/s.
    pub max_goodput_gbps: f64,
    /// goodput / max goodput.
    pub utilisation: f64,
}

/// Jain's index of `x`: (Σx)² / (n·Σx²).
pub fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    if q == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * q)
}

/// Facts of the run itself.
pub(super) struct RunInfo {
    pub end_ns: Nanos,
    pub timed_out: bool,
    /// The run stopped at `--until` (unfinished work is expected).
    pub until_ns: Option<Nanos>,
    pub wall_s: f64,
    pub ring_full: u64,
    /// Nodes the scheduler ran.
    pub events: u64,
    /// Every busy queue's occupancy (`--queue-stats`; empty otherwise).
    pub queue_stats: Vec<QueueOccupancy>,
}

/// How fast the simulator went: what a benchmark compares.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EngineStats {
    /// Node runs: a switch polled, or a host's NICs served, at one instant.
    pub events: u64,
    /// Frames received off a cable, by switches and NICs: every hop of
    /// every packet.
    pub packet_hops: u64,
    /// Wall time of the run, seconds.
    pub wall_s: f64,
    /// packet_hops / wall_s.
    pub hops_per_wall_s: f64,
    /// events / wall_s.
    pub events_per_wall_s: f64,
}

/// One egress queue's depth over virtual time (`--sample-queue`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueSeries {
    /// `SWITCH:INTERFACE:QUEUE`, as asked for.
    pub name: String,
    /// Sample times, microseconds.
    pub t_us: Vec<f64>,
    /// Bytes queued at each sample.
    pub bytes: Vec<u64>,
}

/// Everything a simulation reports (`--json` prints it as is).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimReport {
    /// The job's result, nccl-tests' columns.
    pub results: Vec<JobResult>,
    /// Point-to-point transfers and their completion times.
    pub flows: Vec<FlowResult>,
    /// The fabric's counters.
    pub fabric: FabricSummary,
    /// Per receiver with senders, how they shared its link.
    pub receivers: Vec<FlowRate>,
    /// Switch ports that paused or were paused.
    pub links: Vec<LinkPfc>,
    /// Virtual time at the end, microseconds.
    pub virtual_us: f64,
    /// Wall time the run took, milliseconds.
    pub wall_ms: u64,
    /// Whether the job hit the time limit unfinished.
    pub timed_out: bool,
    /// The virtual time `--until` stopped the run at, microseconds (what
    /// finished by then is reported; the rest is not an error).
    pub until_us: Option<f64>,
    /// The simulator's own speed.
    pub engine: EngineStats,
    /// Depth over time of the queues asked for.
    pub queues: Vec<QueueSeries>,
    /// Every egress queue that carried traffic: departures, time-averaged
    /// depth and mean sojourn, when asked for (`--queue-stats`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queue_stats: Vec<QueueOccupancy>,
    /// Every switch's full counters at the end, by switch, when asked for
    /// (`SimOptions::keep_switch_stats`): what conservation checks read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub switch_stats: Option<Vec<railyard_dataplane::stats::SwitchStats>>,
    /// Frames a cable or the packet pool refused (0 in a sound run).
    pub refused_frames: u64,
    /// Per flow, its completion time next to the ideal on an idle fabric
    /// (flow workloads; start order).
    pub flow_fct: Vec<FlowFct>,
    /// FCT slowdown by flow size.
    pub fct: FctSummary,
    /// Every switch port's bytes sent and utilisation over the run.
    pub link_load: Vec<LinkLoad>,
    /// Per switch with several uplinks, how evenly it used them.
    pub uplinks: Vec<UplinkBalance>,
    /// The worst leaf's busiest uplink over its mean (None: nothing went
    /// up).
    pub uplink_imbalance: Option<f64>,
    /// The highest tier of a switch that sent or received a PFC pause (1:
    /// pauses stayed at the leaves; None: no pause).
    pub deepest_pause_tier: Option<u8>,
    /// Per training workload, its phases and iterations (absent when the
    /// job has none; each phase is also a row of `results`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub training: Vec<TrainingResult>,
    /// Per `--capture`d port, the frames written to the pcapng and those
    /// left out past `--capture-limit`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub captures: Vec<super::CaptureSummary>,
}

/// Builds the report of a finished run.
pub(super) fn build(
    f: &Fabric,
    results: Vec<JobResult>,
    outcomes: &[HostOutcome],
    delivery: Delivery,
    info: RunInfo,
    queues: Vec<QueueSeries>,
    keep_switch_stats: bool,
) -> SimReport {
    let mut fabric = FabricSummary::default();
    fabric.add_nics(outcomes.iter().flat_map(|o| o.nics.iter()));
    let mut links = Vec::new();
    let mut switch_stats = Vec::new();
    let mut packet_hops: u64 = outcomes
        .iter()
        .flat_map(|o| o.nics.iter())
        .map(|n| n.rx_frames)
        .sum();
    for (s, name) in f.switches.iter().zip(&f.switch_names) {
        let stats = s.stats();
        packet_hops += stats.interfaces.values().map(|i| i.rx_packets).sum::<u64>();
        links.extend(fabric.add_switch(name, &tally_switch(&stats)));
        switch_stats.push(stats);
    }
    let deepest_pause_tier = load::pause_tiers(&f.map, &mut links);
    let link_load = load::link_loads(&f.map, &switch_stats, info.end_ns);
    let uplinks = load::uplink_balance(&link_load);
    let names: Vec<String> = f.plan.ranks().iter().map(|r| r.name.clone()).collect();
    let flow_fct = fct::flow_fcts(
        &f.map,
        &names,
        &f.nic_rate_bps,
        &f.path_mtu,
        outcomes.iter().flat_map(|o| o.flows.iter()),
    );
    let wall_s = info.wall_s;
    let per_s = |n: u64| if wall_s > 0.0 { n as f64 / wall_s } else { 0.0 };
    let receivers = receiver_rates(f, &delivery);
    SimReport {
        flows: results
            .iter()
            .flat_map(|r| r.flows.iter().cloned())
            .collect(),
        results,
        fabric,
        receivers,
        links,
        virtual_us: info.end_ns as f64 / 1e3,
        wall_ms: (info.wall_s * 1e3) as u64,
        timed_out: info.timed_out,
        until_us: info.until_ns.map(|t| t as f64 / 1e3),
        engine: EngineStats {
            events: info.events,
            packet_hops,
            wall_s,
            hops_per_wall_s: per_s(packet_hops),
            events_per_wall_s: per_s(info.events),
        },
        queues,
        queue_stats: info.queue_stats,
        switch_stats: keep_switch_stats.then_some(switch_stats),
        refused_frames: info.ring_full + delivery.pool_dry,
        fct: fct::summarise(&flow_fct),
        flow_fct,
        uplink_imbalance: load::worst_leaf_imbalance(&uplinks),
        link_load,
        uplinks,
        deepest_pause_tier,
        training: Vec::new(),
        captures: Vec::new(),
    }
}

/// Per receiver with at least one sender: the middle 80 % of what it
/// received, and how the senders shared it.
fn receiver_rates(f: &Fabric, d: &Delivery) -> Vec<FlowRate> {
    let ranks = f.plan.ranks();
    // Receivers in rank order, each one's senders in rank order, so that
    // sums come out the same however the bins were recorded.
    let mut by_dst: BTreeMap<usize, Vec<&Vec<u64>>> = BTreeMap::new();
    for dst in 0..d.ranks {
        for src in 0..d.ranks {
            let bins = &d.bins[src * d.ranks + dst];
            if !bins.is_empty() {
                by_dst.entry(dst).or_default().push(bins);
            }
        }
    }
    let mut out = Vec::new();
    for (dst, senders) in by_dst {
        let len = senders.iter().map(|b| b.len()).max().unwrap_or(0);
        let total: Vec<u64> = (0..len)
            .map(|i| senders.iter().map(|b| b.get(i).copied().unwrap_or(0)).sum())
            .collect();
        let all: u64 = total.iter().sum();
        if all == 0 {
            continue;
        }
        // The bins holding the 10th and the 90th percentile byte.
        let mut acc = 0;
        let (mut lo, mut hi) = (0, len - 1);
        let mut found_lo = false;
        for (i, b) in total.iter().enumerate() {
            acc += b;
            if !found_lo && acc * 10 >= all {
                lo = i;
                found_lo = true;
            }
            if acc * 10 >= all * 9 {
                hi = i;
                break;
            }
        }
        let per_sender: Vec<f64> = senders
            .iter()
            .map(|b| b.iter().take(hi + 1).skip(lo).sum::<u64>() as f64)
            .collect();
        let window_ns = ((hi + 1 - lo) as u64 * d.bin_ns) as f64;
        let bytes: f64 = per_sender.iter().sum();
        let goodput = bytes * 8.0 / window_ns;
        let mtu = f.path_mtu[dst] as f64;
        // Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4, preamble and
        // gap 20 around every MTU of payload.
        let max = f.nic_rate_bps[dst] as f64 / 1e9 * mtu / (mtu + 82.0);
        out.push(FlowRate {
            dst: ranks[dst].name.clone(),
            senders: senders.len(),
            window_us: [
                (lo as u64 * d.bin_ns) as f64 / 1e3,
                ((hi + 1) as u64 * d.bin_ns) as f64 / 1e3,
            ],
            jain: jain(&per_sender),
            goodput_gbps: goodput,
            max_goodput_gbps: max,
            utilisation: if max > 0.0 { goodput / max } else { 0.0 },
        });
    }
    out
}

/// Prints the report for people: the nccl-tests table, then the fabric.
///
/// # Errors
///
/// Errors of `out`.
pub fn render(out: &mut dyn Write, r: &SimReport) -> io::Result<()> {
    render_table(out, &r.results)?;
    if !r.training.is_empty() {
        writeln!(out)?;
        render_training(out, &r.training)?;
    }
    writeln!(out)?;
    r.fabric.render(out, &r.links)?;
    writeln!(
        out,
        "# virtual time {:.1} us, wall time {} ms: {} packet-hops ({:.0}/s), {} events ({:.0}/s)",
        r.virtual_us,
        r.wall_ms,
        r.engine.packet_hops,
        r.engine.hops_per_wall_s,
        r.engine.events,
        r.engine.events_per_wall_s
    )?;
    render_results(out, r)?;
    let shared: Vec<&FlowRate> = r.receivers.iter().filter(|x| x.senders > 1).collect();
    if !shared.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{:<12} {:>7} {:>7} {:>13} {:>12}",
            "Receiver", "Senders", "Jain", "Goodput(Gb/s)", "Utilisation"
        )?;
        for x in shared {
            writeln!(
                out,
                "{:<12} {:>7} {:>7.3} {:>13.2} {:>11.1}%",
                x.dst,
                x.senders,
                x.jain,
                x.goodput_gbps,
                x.utilisation * 100.0
            )?;
        }
    }
    if let Some(t) = r.until_us {
        writeln!(out)?;
        writeln!(
            out,
            "Stopped at --until {:.1} us; the table shows what had finished by then.",
            t
        )?;
    } else if r.timed_out {
        writeln!(out)?;
        writeln!(out, "The job did not finish within the time limit.")?;
    }
    if r.refused_frames > 0 {
        writeln!(
            out,
            "Warning: {} frames refused by full cables or a dry pool.",
            r.refused_frames
        )?;
    }
    Ok(())
}

/// Prints the FCT slowdowns, the uplinks' balance and how deep pauses
/// went.
fn render_results(out: &mut dyn Write, r: &SimReport) -> io::Result<()> {
    if let Some(all) = &r.fct.overall {
        writeln!(out)?;
        writeln!(
            out,
            "{:<10} {:>6} {:>10} {:>8} {:>8} {:>8}",
            "Flow size", "Flows", "Unfinished", "Mean", "p50", "p99"
        )?;
        for b in r.fct.buckets.iter().chain(std::iter::once(all)) {
            writeln!(
                out,
                "{:<10} {:>6} {:>10} {:>8.2} {:>8.2} {:>8.2}",
                b.bucket, b.flows, b.unfinished, b.mean, b.p50, b.p99
            )?;
        }
        writeln!(
            out,
            "# FCT slowdown: completion time over the ideal alone on the idle fabric"
        )?;
    }
    if !r.uplinks.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{:<12} {:>4} {:>7} {:>14} {:>9} {:>9} {:>6}",
            "Switch", "Tier", "Uplinks", "Up bytes", "Mean use", "Max/mean", "CV"
        )?;
        for u in &r.uplinks {
            let used: Vec<f64> = r
                .link_load
                .iter()
                .filter(|l| l.switch == u.switch && l.peer_tier > l.tier)
                .map(|l| l.utilisation)
                .collect();
            let mean = used.iter().sum::<f64>() / used.len().max(1) as f64;
            writeln!(
                out,
                "{:<12} {:>4} {:>7} {:>14} {:>8.1}% {:>9.2} {:>6.2}",
                u.switch,
                u.tier,
                u.uplinks,
                u.tx_bytes,
                mean * 100.0,
                u.max_over_mean,
                u.cv
            )?;
        }
    }
    match r.deepest_pause_tier {
        Some(t) => writeln!(out, "# PFC pauses reached tier {t} ({})", tier_name(t))?,
        None if r.fabric.pfc_pause_frames + r.fabric.nic_pfc_pause_frames > 0 => {}
        None => writeln!(out, "# PFC: no pauses")?,
    }
    Ok(())
}

/// What a tier is called in a leaf-spine fabric.
pub fn tier_name(t: u8) -> &'static str {
    match t {
        0 => "hosts",
        1 => "leaves",
        2 => "spines",
        3 => "super-spines",
        _ => "above the super-spines",
    }
}
