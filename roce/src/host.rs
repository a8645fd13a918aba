//! A GPU server: its NICs, the GPU-to-GPU link inside it, and its ranks'
//! part of a job.
//!
//! CONTRACT (fixed signatures; bodies by the module's owner).

use serde::{Deserialize, Serialize};

use crate::nic::NicStats;
use crate::Nanos;

/// What one rank did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankOutcome {
    /// Rank number.
    pub rank: usize,
    /// When its part of the collective finished (None: it did not).
    pub end_ns: Option<Nanos>,
    /// Elements of its result that differ from the expected values.
    pub wrong: u64,
}

/// One point-to-point transfer of a flow workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowOutcome {
    /// Sending rank.
    pub src: usize,
    /// Receiving rank.
    pub dst: usize,
    /// Bytes.
    pub bytes: u64,
    /// When it was posted.
    pub start_ns: Nanos,
    /// When it was acknowledged in full (None: it was not).
    pub end_ns: Option<Nanos>,
    /// Bytes that arrived different from what was sent.
    pub wrong: u64,
}

/// What a host did: per rank, per flow it sent, per NIC.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostOutcome {
    /// Host index.
    pub host: usize,
    /// When the job started.
    pub start_ns: Nanos,
    /// Its ranks.
    pub ranks: Vec<RankOutcome>,
    /// Flows it sent.
    pub flows: Vec<FlowOutcome>,
    /// Its NICs' counters, NIC 0 first.
    pub nics: Vec<NicStats>,
}
