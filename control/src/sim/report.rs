//! What a simulation showed: the job's result as nccl-tests prints it, the
//! fabric's counters summed the way an engineer reads them (ECN first, PFC
//! as the backstop), and per receiver how evenly and how fully its senders
//! shared its link.

use std::collections::BTreeMap;
use std::io::{self, Write};

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::stats::SwitchStats;
use railyard_roce::host::HostOutcome;
use railyard_roce::report::{render_table, FlowResult, JobResult};
use serde::Serialize;

use super::build::Fabric;

/// Bytes each sender delivered to each receiver, in time bins.
pub(super) struct Delivery {
    bin_ns: Nanos,
    /// (sender rank, receiver rank) → payload bytes per bin.
    bins: BTreeMap<(usize, usize), Vec<u64>>,
    /// Frames a host could not send because the packet pool was dry.
    pub pool_dry: u64,
}

impl Delivery {
    pub(super) fn new(bin_ns: Nanos) -> Self {
        Delivery {
            bin_ns: bin_ns.max(1),
            bins: BTreeMap::new(),
            pool_dry: 0,
        }
    }

    /// Counts `bytes` of payload from `src` arriving at `dst` at `now`.
    pub(super) fn record(&mut self, src: usize, dst: usize, now: Nanos, bytes: u32) {
        let bin = (now / self.bin_ns) as usize;
        let v = self.bins.entry((src, dst)).or_default();
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

/// The fabric's counters, summed over switches and NICs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FabricSummary {
    /// Packets the switches marked CE.
    pub ecn_marked: u64,
    /// CNPs the NICs sent (notification points).
    pub cnp_sent: u64,
    /// CNPs the NICs received (reaction points).
    pub cnp_received: u64,
    /// DCQCN rate cuts.
    pub rate_cuts: u64,
    /// The lowest rate any queue pair was cut to, Gb/s.
    pub min_rate_gbps: f64,
    /// PFC frames that paused a priority, sent by switches and NICs... by
    /// the switches (pause frames with quanta > 0).
    pub pfc_pause_frames: u64,
    /// PFC pause frames the NICs received.
    pub nic_pfc_pause_frames: u64,
    /// Time the NICs' data priority was paused, microseconds, summed.
    pub nic_paused_us: f64,
    /// Switch drops by reason.
    pub drops: BTreeMap<String, u64>,
    /// Drops of lossless (PFC-enabled) traffic: what must be 0.
    pub lossless_drops: u64,
    /// Data packets the NICs sent again (go-back-N).
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// NAKs (sequence error) the receivers sent.
    pub naks: u64,
}

/// One switch port's PFC, where anything happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkPfc {
    /// Switch.
    pub switch: String,
    /// Interface.
    pub interface: String,
    /// Pause frames it sent (quanta > 0), all priorities.
    pub pause_tx: u64,
    /// Pause frames it received.
    pub pause_rx: u64,
    /// Time its egress was paused, microseconds, all priorities.
    pub paused_us: f64,
    /// Peak depth of its deepest queue, bytes.
    pub max_queue_bytes: u64,
}

/// Facts of the run itself.
pub(super) struct RunInfo {
    pub end_ns: Nanos,
    pub timed_out: bool,
    pub wall_ms: u64,
    pub ring_full: u64,
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
    /// Frames a cable or the packet pool refused (0 in a sound run).
    pub refused_frames: u64,
}

fn lossless_drops(s: &SwitchStats) -> u64 {
    s.interfaces
        .values()
        .map(|i| {
            let queues: u64 = i
                .queues
                .iter()
                .filter(|q| i.pfc.enabled & (1 << q.queue) != 0)
                .map(|q| q.tail_drops + q.wred_drops + q.watchdog_drops)
                .sum();
            let ingress = ["ingress_overflow", "pfc_watchdog_ingress"]
                .iter()
                .map(|r| i.drops.get(*r).copied().unwrap_or(0))
                .sum::<u64>();
            queues + ingress
        })
        .sum()
}

/// Builds the report of a finished run.
pub(super) fn build(
    f: &Fabric,
    result: JobResult,
    outcomes: &[HostOutcome],
    delivery: Delivery,
    info: RunInfo,
) -> SimReport {
    let stats: Vec<SwitchStats> = f.switches.iter().map(|s| s.stats()).collect();
    let mut fabric = FabricSummary {
        min_rate_gbps: f.nic_rate_bps.iter().copied().max().unwrap_or(0) as f64 / 1e9,
        ..FabricSummary::default()
    };
    let mut links = Vec::new();
    for (s, name) in stats.iter().zip(&f.switch_names) {
        fabric.lossless_drops += lossless_drops(s);
        for (ifname, i) in &s.interfaces {
            fabric.ecn_marked += i.queues.iter().map(|q| q.ecn_marked).sum::<u64>();
            for (r, n) in &i.drops {
                if *n > 0 {
                    *fabric.drops.entry(r.clone()).or_default() += n;
                }
            }
            let pause_tx: u64 = i.pfc.tx_pause.iter().sum();
            let pause_rx: u64 = i.pfc.rx_pause.iter().sum();
            fabric.pfc_pause_frames += pause_tx;
            if pause_tx + pause_rx > 0 {
                links.push(LinkPfc {
                    switch: name.clone(),
                    interface: ifname.clone(),
                    pause_tx,
                    pause_rx,
                    paused_us: i.pfc.paused_ns.iter().sum::<u64>() as f64 / 1e3,
                    max_queue_bytes: i
                        .queues
                        .iter()
                        .map(|q| q.max_depth_bytes)
                        .max()
                        .unwrap_or(0),
                });
            }
        }
    }
    for n in outcomes.iter().flat_map(|o| &o.nics) {
        fabric.cnp_sent += n.cnp_sent;
        fabric.cnp_received += n.cnp_received;
        fabric.rate_cuts += n.rate_cuts;
        fabric.min_rate_gbps = fabric.min_rate_gbps.min(n.min_rate_bps as f64 / 1e9);
        fabric.nic_pfc_pause_frames += n.pfc_pause_frames;
        fabric.nic_paused_us += n.paused_ns as f64 / 1e3;
        fabric.retransmissions += n.retransmitted;
        fabric.timeouts += n.timeouts;
        fabric.naks += n.naks_sent;
    }
    let receivers = receiver_rates(f, &delivery);
    SimReport {
        flows: result.flows.clone(),
        results: vec![result],
        fabric,
        receivers,
        links,
        virtual_us: info.end_ns as f64 / 1e3,
        wall_ms: info.wall_ms,
        timed_out: info.timed_out,
        refused_frames: info.ring_full + delivery.pool_dry,
    }
}

/// Per receiver with at least one sender: the middle 80 % of what it
/// received, and how the senders shared it.
fn receiver_rates(f: &Fabric, d: &Delivery) -> Vec<FlowRate> {
    let ranks = f.plan.ranks();
    let mut by_dst: BTreeMap<usize, Vec<&Vec<u64>>> = BTreeMap::new();
    for ((_, dst), bins) in &d.bins {
        by_dst.entry(*dst).or_default().push(bins);
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
    let f = &r.fabric;
    writeln!(out)?;
    writeln!(
        out,
        "Fabric (virtual {:.1} us, wall {} ms)",
        r.virtual_us, r.wall_ms
    )?;
    writeln!(out, "  ECN CE marks              {:>12}", f.ecn_marked)?;
    writeln!(
        out,
        "  CNPs sent / received      {:>12} / {}",
        f.cnp_sent, f.cnp_received
    )?;
    writeln!(out, "  DCQCN rate cuts           {:>12}", f.rate_cuts)?;
    writeln!(
        out,
        "  Lowest rate reached       {:>12.2} Gb/s",
        f.min_rate_gbps
    )?;
    writeln!(
        out,
        "  PFC pause frames (switch) {:>12}",
        f.pfc_pause_frames
    )?;
    writeln!(
        out,
        "  PFC at the NICs           {:>12} frames, {:.1} us paused",
        f.nic_pfc_pause_frames, f.nic_paused_us
    )?;
    writeln!(
        out,
        "  Retransmissions           {:>12} ({} timeouts, {} NAKs)",
        f.retransmissions, f.timeouts, f.naks
    )?;
    writeln!(out, "  Lossless drops            {:>12}", f.lossless_drops)?;
    if f.drops.is_empty() {
        writeln!(out, "  Drops                     {:>12}", 0)?;
    }
    for (reason, n) in &f.drops {
        writeln!(out, "  Drops: {reason:<18} {n:>12}")?;
    }
    if !r.links.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "{:<10} {:<14} {:>9} {:>9} {:>12} {:>12}",
            "Switch", "Interface", "PauseTx", "PauseRx", "Paused(us)", "MaxQueue(B)"
        )?;
        for l in &r.links {
            writeln!(
                out,
                "{:<10} {:<14} {:>9} {:>9} {:>12.1} {:>12}",
                l.switch, l.interface, l.pause_tx, l.pause_rx, l.paused_us, l.max_queue_bytes
            )?;
        }
    }
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
    if r.timed_out {
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
