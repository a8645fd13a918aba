//! The fabric summary a job prints after the nccl-tests table, live or
//! simulated: the switches' counters (CE marks, pauses, drops, lossless
//! drops) and the NICs' (DCQCN, go-back-N, PFC honoured), and the JSON
//! shape `--json` prints.

use std::collections::BTreeMap;
use std::io::Write;

use railyard_dataplane::stats::SwitchStats;
use railyard_roce::nic::NicStats;
use railyard_roce::report::{FlowResult, JobResult};
use serde::{Deserialize, Serialize};

/// Counters of the whole fabric over one job: what the switches did (CE
/// marks, pauses sent, drops) and what the NICs did (DCQCN, go-back-N, PFC
/// honoured). `--json` prints it as `fabric`; the names the issue fixed
/// (`ecn_marked` … `retransmissions`) never change. The same fields as
/// `railyard sim` reports, so a live and a simulated run compare directly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FabricSummary {
    /// Packets the switches marked CE.
    pub ecn_marked: u64,
    /// CNPs the NICs sent (notification points).
    pub cnp_sent: u64,
    /// CNPs the NICs received (reaction points).
    pub cnp_received: u64,
    /// DCQCN rate cuts.
    pub rate_cuts: u64,
    /// The lowest rate any queue pair was set to, Gb/s (the line rate when
    /// none was cut; 0 without NICs).
    pub min_rate_gbps: f64,
    /// PFC frames the switches sent that paused a priority (quanta > 0).
    pub pfc_pause_frames: u64,
    /// PFC pause frames the NICs received.
    pub nic_pfc_pause_frames: u64,
    /// Time the NICs' data priority was paused, microseconds, summed.
    pub nic_paused_us: f64,
    /// Switch drops by reason (only reasons that happened).
    pub drops: BTreeMap<String, u64>,
    /// Drops of lossless (PFC-enabled) traffic: tail, WRED and watchdog
    /// drops in a PFC-enabled queue, ingress headroom overflow and
    /// watchdog ingress drops. What must be 0.
    pub lossless_drops: u64,
    /// Data packets the NICs sent again (go-back-N).
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// NAKs (sequence error) the receivers sent.
    pub naks: u64,
    /// Frames the NICs dropped on receive (any reason).
    pub nic_rx_drops: u64,
    /// Data packets that reached a NIC out of sequence (reordered by the
    /// fabric, or after a loss): a share of `nic_rx_drops`, what per-packet
    /// spraying costs.
    #[serde(default)]
    pub reordered: u64,
}

/// One switch port's share of the fabric summary, where anything happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
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
    /// Peak depth of its deepest queue, bytes (since the switch started).
    pub max_queue_bytes: u64,
    /// Packets it marked CE.
    pub ecn_marked: u64,
    /// Its drops, every reason.
    pub drops: u64,
    /// The switch's tier, where known (`railyard sim`: 1 leaf, 2 spine, 3
    /// super-spine), to see how far from the hosts pauses spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<u8>,
}

/// What one switch interface counted, in the terms of the summary; the
/// difference of two snapshots ([`tally_since`]) is what happened between.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortTally {
    /// CE marks over its queues.
    pub ecn_marked: u64,
    /// Pause frames sent.
    pub pause_tx: u64,
    /// Pause frames received.
    pub pause_rx: u64,
    /// Paused time, ns.
    pub paused_ns: u64,
    /// Drops by reason.
    pub drops: BTreeMap<String, u64>,
    /// Lossless drops (see [`FabricSummary::lossless_drops`]).
    pub lossless_drops: u64,
    /// Peak queue depth, bytes (a peak: not differenced).
    pub max_queue_bytes: u64,
}

/// Every interface of one switch, by name.
pub type SwitchTally = BTreeMap<String, PortTally>;

/// Reads a switch's counters (`railyard show`'s snapshot) into tallies.
pub fn tally_switch(stats: &SwitchStats) -> SwitchTally {
    stats
        .interfaces
        .iter()
        .map(|(name, i)| {
            let queues: u64 = i
                .queues
                .iter()
                .filter(|q| q.queue < 8 && i.pfc.enabled & (1 << q.queue) != 0)
                .map(|q| q.tail_drops + q.wred_drops + q.watchdog_drops)
                .sum();
            let ingress: u64 = ["ingress_overflow", "pfc_watchdog_ingress"]
                .iter()
                .map(|r| i.drops.get(*r).copied().unwrap_or(0))
                .sum();
            let t = PortTally {
                ecn_marked: i.queues.iter().map(|q| q.ecn_marked).sum(),
                pause_tx: i.pfc.tx_pause.iter().sum(),
                pause_rx: i.pfc.rx_pause.iter().sum(),
                paused_ns: i.pfc.paused_ns.iter().sum(),
                drops: i.drops.clone(),
                lossless_drops: queues + ingress,
                max_queue_bytes: i
                    .queues
                    .iter()
                    .map(|q| q.max_depth_bytes)
                    .max()
                    .unwrap_or(0),
            };
            (name.clone(), t)
        })
        .collect()
}

/// What happened on a switch between two tallies (`before` may lack
/// interfaces; a counter that went back, as after a restart, counts from 0).
pub fn tally_since(after: &SwitchTally, before: &SwitchTally) -> SwitchTally {
    let zero = PortTally::default();
    let d = |x: u64, y: u64| if x >= y { x - y } else { x };
    after
        .iter()
        .map(|(name, a)| {
            let b = before.get(name).unwrap_or(&zero);
            let drops = a
                .drops
                .iter()
                .map(|(r, n)| (r.clone(), d(*n, b.drops.get(r).copied().unwrap_or(0))))
                .collect();
            let t = PortTally {
                ecn_marked: d(a.ecn_marked, b.ecn_marked),
                pause_tx: d(a.pause_tx, b.pause_tx),
                pause_rx: d(a.pause_rx, b.pause_rx),
                paused_ns: d(a.paused_ns, b.paused_ns),
                drops,
                lossless_drops: d(a.lossless_drops, b.lossless_drops),
                max_queue_bytes: a.max_queue_bytes,
            };
            (name.clone(), t)
        })
        .collect()
}

impl FabricSummary {
    /// Adds the counters of the NICs.
    pub fn add_nics<'a>(&mut self, nics: impl IntoIterator<Item = &'a NicStats>) {
        for n in nics {
            let first = self.min_rate_gbps == 0.0;
            let rate = n.min_rate_bps as f64 / 1e9;
            if first || rate < self.min_rate_gbps {
                self.min_rate_gbps = rate;
            }
            self.cnp_sent += n.cnp_sent;
            self.cnp_received += n.cnp_received;
            self.rate_cuts += n.rate_cuts;
            self.nic_pfc_pause_frames += n.pfc_pause_frames;
            self.nic_paused_us += n.paused_ns as f64 / 1e3;
            self.retransmissions += n.retransmitted;
            self.timeouts += n.timeouts;
            self.naks += n.naks_sent;
            let d = &n.rx_dropped;
            self.nic_rx_drops += d.malformed
                + d.icrc
                + d.unknown_qp
                + d.out_of_sequence
                + d.duplicate
                + d.not_for_us;
            self.reordered += d.out_of_sequence;
        }
    }

    /// Adds what switch `name` counted (a whole run's tally, or the
    /// difference of two snapshots from [`tally_since`]); returns its ports
    /// where anything happened (pauses, CE marks, drops).
    pub fn add_switch(&mut self, name: &str, tally: &SwitchTally) -> Vec<LinkPfc> {
        let mut links = Vec::new();
        for (port, t) in tally {
            self.ecn_marked += t.ecn_marked;
            self.pfc_pause_frames += t.pause_tx;
            self.lossless_drops += t.lossless_drops;
            for (reason, n) in &t.drops {
                if *n > 0 {
                    *self.drops.entry(reason.clone()).or_insert(0) += n;
                }
            }
            let drops: u64 = t.drops.values().sum();
            if t.ecn_marked + t.pause_tx + t.pause_rx + drops > 0 {
                links.push(LinkPfc {
                    switch: name.to_string(),
                    interface: port.clone(),
                    pause_tx: t.pause_tx,
                    pause_rx: t.pause_rx,
                    paused_us: t.paused_ns as f64 / 1e3,
                    max_queue_bytes: t.max_queue_bytes,
                    ecn_marked: t.ecn_marked,
                    drops,
                    tier: None,
                });
            }
        }
        links
    }

    /// Prints the summary for people, after the nccl-tests table, then the
    /// ports where anything happened.
    ///
    /// # Errors
    /// Errors of `out`.
    pub fn render(&self, out: &mut dyn Write, links: &[LinkPfc]) -> std::io::Result<()> {
        writeln!(out, "# fabric")?;
        writeln!(
            out,
            "#   switches: CE marked {}, PFC pause frames sent {}, lossless drops {}",
            self.ecn_marked, self.pfc_pause_frames, self.lossless_drops
        )?;
        writeln!(
            out,
            "#   NICs: CNPs sent {}, CNPs received {}, rate cuts {}, minimum rate {:.3} Gb/s",
            self.cnp_sent, self.cnp_received, self.rate_cuts, self.min_rate_gbps
        )?;
        writeln!(
            out,
            "#   NICs: PFC pause frames received {}, paused {:.1} us, retransmissions {}, \
             timeouts {}, NAKs {}, receive drops {}",
            self.nic_pfc_pause_frames,
            self.nic_paused_us,
            self.retransmissions,
            self.timeouts,
            self.naks,
            self.nic_rx_drops
        )?;
        if self.drops.is_empty() {
            writeln!(out, "#   drops: none")?;
        } else {
            let list: Vec<String> = self.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
            writeln!(out, "#   drops: {}", list.join(", "))?;
        }
        writeln!(
            out,
            "#   reordered: {} data packets reached a NIC out of sequence",
            self.reordered
        )?;
        if !links.is_empty() {
            writeln!(
                out,
                "#   {:<20} {:>9} {:>9} {:>9} {:>11} {:>11} {:>7}",
                "port", "CE", "pause tx", "pause rx", "paused us", "peak bytes", "drops"
            )?;
            for l in links {
                writeln!(
                    out,
                    "#   {:<20} {:>9} {:>9} {:>9} {:>11.1} {:>11} {:>7}",
                    format!("{}:{}", l.switch, l.interface),
                    l.ecn_marked,
                    l.pause_tx,
                    l.pause_rx,
                    l.paused_us,
                    l.max_queue_bytes,
                    l.drops
                )?;
            }
        }
        Ok(())
    }
}

/// What `--json` prints: `{"results": [...], "flows": [...], "fabric":
/// {...}, "links": [...]}` (each result also keeps its own flows; `flows`
/// lists every result's).
#[derive(Debug, Clone, Serialize)]
pub struct JsonReport<'a> {
    /// One row per job, as in the table.
    pub results: &'a [JobResult],
    /// Every point-to-point transfer of the flow workloads.
    pub flows: Vec<&'a FlowResult>,
    /// The fabric summary.
    pub fabric: &'a FabricSummary,
    /// Switch ports where anything happened.
    pub links: &'a [LinkPfc],
}

impl<'a> JsonReport<'a> {
    /// The report of `results`, `fabric` and `links`.
    pub fn new(
        results: &'a [JobResult],
        fabric: &'a FabricSummary,
        links: &'a [LinkPfc],
    ) -> JsonReport<'a> {
        JsonReport {
            results,
            flows: results.iter().flat_map(|r| r.flows.iter()).collect(),
            fabric,
            links,
        }
    }
}
