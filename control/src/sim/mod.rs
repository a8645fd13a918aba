//! `railyard sim`: a lab topology in virtual time. Its switches are
//! railyard dataplanes with exactly the configurations `lab render`
//! produces; its hosts are RoCEv2 endpoint models (`railyard_roce`) running
//! a job (a collective or a set of flows); its cables are in-memory with the
//! topology's propagation delay. One clock jumps from event to event, so a
//! 64 MB incast at 100 Gb/s takes seconds of wall time, not a lab.
//!
//! The parts: building the fabric from a topology (`build`), running it
//! (`run`), and what a run showed (`report`).

mod build;
mod capture;
pub mod cli;
mod csv;
mod engine;
mod fct;
mod load;
mod map;
mod occupancy;
mod plot;
mod report;
mod run;
pub mod scenario;
#[cfg(test)]
mod tests;

use std::path::Path;

use railyard_dataplane::clock::Nanos;
use railyard_roce::dcqcn::DcqcnParams;
use railyard_roce::plan::JobOptions;

pub use crate::lab::collective::Cc;
pub use capture::{CaptureSummary, EPOCH_NS as CAPTURE_EPOCH_NS};
pub use fct::{FctSummary, FlowFct, SlowdownStats};
pub use load::{LinkLoad, UplinkBalance};
pub use occupancy::QueueOccupancy;
pub use report::{EngineStats, FlowRate, QueueSeries, SimReport};

/// How the leaves balance traffic over their uplinks, overriding the
/// configuration's own choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Lb {
    /// Static ECMP hashing of the 5-tuple.
    Ecmp,
    /// Dynamic load balancing of flowlets over the uplinks.
    Flowlet,
    /// Dynamic load balancing of every packet.
    PerPacket,
}

impl Lb {
    /// The name the command line uses.
    pub fn name(self) -> &'static str {
        match self {
            Lb::Ecmp => "ecmp",
            Lb::Flowlet => "flowlet",
            Lb::PerPacket => "per-packet",
        }
    }
}

/// Whether a run carries data: real bytes are written, reduced and
/// checked (`#wrong`), or only the packets' lengths are (fabric-scale
/// runs, whose buffers would not fit in memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DataMode {
    /// Carry data unless every rank's buffers together exceed 2 GiB.
    Auto,
    /// Always carry and check data.
    On,
    /// Never: packets have their lengths, not their bytes.
    Off,
}

/// What a simulation runs and how.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// The workload spec (`allreduce:64M`, `incast:64M:h1,h2:h3`, ...),
    /// optionally with a start time (`SPEC@100us`).
    pub workload: String,
    /// Further workloads running in the same job, each `SPEC[@START]`.
    pub more_workloads: Vec<String>,
    /// Whether WRITEs carry (and checks see) real data.
    pub data: DataMode,
    /// Congestion control.
    pub cc: Cc,
    /// DCQCN parameters (defaults, or read from `--dcqcn-params`).
    pub dcqcn: DcqcnParams,
    /// Load balancing override; `None` keeps the configurations'.
    pub lb: Option<Lb>,
    /// PFC as configured (true) or removed from every port (false).
    pub pfc: bool,
    /// Channels, chunking, NVLink.
    pub job: JobOptions,
    /// NIC line rate in Mb/s; `None`: each NIC's link speed.
    pub nic_mbps: Option<u32>,
    /// The responder ACKs after this many packets.
    pub ack_every: u32,
    /// Retransmission timeout.
    pub rto_ns: Nanos,
    /// Virtual time after which an unfinished job is reported as such.
    pub time_limit_ns: Nanos,
    /// Virtual time to stop at and report what finished (`--until`).
    pub until_ns: Option<Nanos>,
    /// Egress queues whose depth is sampled over time, as
    /// `SWITCH:INTERFACE:QUEUE` (`leaf1:Ethernet1/33:3`).
    pub sample_queues: Vec<String>,
    /// Interval of those samples, virtual time.
    pub sample_ns: Nanos,
    /// Links that fail during the run (`NODE:PORT@DOWN[-UP]`).
    pub fail: Vec<String>,
    /// Links slower than the topology says (`NODE:PORT:MBPS`).
    pub degrade: Vec<String>,
    /// Keep every switch's full counters in the report.
    pub keep_switch_stats: bool,
    /// Report every egress queue's departures, time-averaged depth and
    /// mean sojourn (`--queue-stats`); costs a look at every port of a
    /// switch each time it runs.
    pub queue_stats: bool,
    /// Width of the bins per-flow delivery is recorded in (fairness).
    pub bin_ns: Nanos,
    /// Worker threads (`--threads`); `None`: one per core, for a fabric
    /// big enough to share. Results are the same for any number.
    pub threads: Option<usize>,
    /// Switch ports whose frames are written to `capture_out`
    /// (`--capture NODE:PORT`).
    pub capture: Vec<String>,
    /// The pcapng the captured ports' frames go to.
    pub capture_out: Option<std::path::PathBuf>,
    /// Most frames written per captured port; the rest are counted.
    pub capture_limit: u64,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            workload: String::new(),
            more_workloads: Vec::new(),
            data: DataMode::Auto,
            cc: Cc::Dcqcn,
            dcqcn: DcqcnParams::default(),
            lb: None,
            pfc: true,
            job: JobOptions::default(),
            nic_mbps: None,
            ack_every: 16,
            rto_ns: railyard_roce::nic::DEFAULT_RTO_NS,
            time_limit_ns: 10_000_000_000,
            until_ns: None,
            sample_queues: Vec::new(),
            sample_ns: 1_000,
            fail: Vec::new(),
            degrade: Vec::new(),
            keep_switch_stats: false,
            queue_stats: false,
            bin_ns: 10_000,
            threads: None,
            capture: Vec::new(),
            capture_out: None,
            capture_limit: u64::MAX,
        }
    }
}

/// Where a run is, for a progress line: reported about once a second of
/// wall time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Virtual time reached.
    pub virtual_ns: Nanos,
    /// Virtual time the run stops at, when known (`--until`).
    pub target_ns: Option<Nanos>,
    /// Wall time so far, seconds.
    pub wall_s: f64,
    /// Frames moved so far (received or sent by a switch or a NIC).
    pub moved: u64,
}

impl Progress {
    /// Wall seconds still to go at the pace so far, when the end is known.
    pub fn eta_s(&self) -> Option<f64> {
        let target = self.target_ns?;
        (self.virtual_ns > 0).then(|| {
            self.wall_s * target.saturating_sub(self.virtual_ns) as f64 / self.virtual_ns as f64
        })
    }
}

/// Runs `workload` on the topology at `topology` (a file, or a shipped
/// name).
///
/// # Errors
///
/// The topology, a template, a configuration or the workload is wrong (the
/// message says where and why).
pub fn simulate(
    topology: &std::path::Path,
    opts: &SimOptions,
    progress: &mut dyn FnMut(Progress),
) -> Result<SimReport, String> {
    let mut topo = crate::lab::topology::parse_file(topology)?;
    for d in &opts.degrade {
        scenario::apply_degrade(&mut topo, d)?;
    }
    let failures = opts
        .fail
        .iter()
        .map(|f| scenario::parse_failure(&topo, f))
        .collect::<Result<Vec<_>, _>>()?;
    let fabric = build::build(&topo, opts)?;
    run::run(fabric, opts, &failures, progress)
}

/// Reads a `--dcqcn-params` file.
///
/// # Errors
///
/// The file cannot be read or a line is wrong (`file:line:col`, the line,
/// a hint).
pub fn read_dcqcn_params(path: &Path) -> Result<DcqcnParams, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read DCQCN parameters: {e}", path.display()))?;
    DcqcnParams::parse(&text, &path.display().to_string())
}
