//! Results as nccl-tests prints them, from every host's outcome.
//!
//! CONTRACT (fixed signatures; bodies by the module's owner).

use std::io::{self, Write};

use serde::Serialize;

use crate::host::HostOutcome;
use crate::plan::JobPlan;

/// One row of the nccl-tests table (or of a flow workload's summary).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobResult {
    /// `allreduce`, `allgather`, `reducescatter`, `alltoall`, `sendrecv`,
    /// `incast`, `permutation`.
    pub op: String,
    /// Size in bytes, as nccl-tests' `size` column.
    pub bytes: u64,
    /// Elements (float32).
    pub count: u64,
    /// Time from start to the last rank finishing, microseconds.
    pub time_us: f64,
    /// bytes / time, GB/s (10^9 bytes per second), as nccl-tests.
    pub algbw_gbps: f64,
    /// algbw times the op's bus factor (nccl-tests PERFORMANCE.md).
    pub busbw_gbps: f64,
    /// Wrong elements over all ranks (bytes for flow workloads).
    pub wrong: u64,
    /// Whether every rank finished.
    pub completed: bool,
    /// Point-to-point transfers (flow workloads; empty for collectives).
    pub flows: Vec<FlowResult>,
}

/// One transfer's completion time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FlowResult {
    /// Sender (`host.ethN`).
    pub src: String,
    /// Receiver.
    pub dst: String,
    /// Bytes.
    pub bytes: u64,
    /// Flow completion time, microseconds (None: did not complete).
    pub fct_us: Option<f64>,
}

/// Combines every host's outcome into the job's result.
pub fn summarise(_plan: &JobPlan, _outcomes: &[HostOutcome]) -> JobResult {
    todo!()
}

/// Prints results as nccl-tests does (`size count type redop time algbw
/// busbw #wrong`), then, for flow workloads, each flow's FCT.
///
/// # Errors
///
/// Errors of `out`.
pub fn render_table(_out: &mut dyn Write, _results: &[JobResult]) -> io::Result<()> {
    todo!()
}
