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

use crate::nic::NicConfig;
use crate::plan::JobPlan;

/// A host running its ranks' part of a job (see the module doc).
#[derive(Debug)]
pub struct Host {
    _private: (),
}

impl Host {
    /// Host `host` of `plan`, with one NIC per config (NIC n of the host;
    /// `memory_bytes` is set from the plan).
    ///
    /// # Errors
    ///
    /// When the NICs given do not match the plan's ranks on this host.
    pub fn new(_plan: &JobPlan, _host: usize, _nics: Vec<NicConfig>) -> Result<Host, String> {
        todo!()
    }

    /// Starts the job at `now` (fills buffers with the known pattern,
    /// posts the first writes).
    pub fn start(&mut self, _now: Nanos) {
        todo!()
    }

    /// A frame the switch sent NIC `nic`.
    pub fn receive(&mut self, _nic: usize, _now: Nanos, _frame: &[u8]) {
        todo!()
    }

    /// NIC `nic`'s next frame, if one may start at `now` (see
    /// `Nic::transmit`); also moves the job on (completions, GPU-to-GPU
    /// copies due by `now`).
    pub fn transmit(&mut self, _nic: usize, _now: Nanos, _buf: &mut [u8]) -> Option<usize> {
        todo!()
    }

    /// The earliest time any NIC or the GPU-to-GPU link has something to do.
    pub fn next_wakeup(&self) -> Option<Nanos> {
        todo!()
    }

    /// Every rank finished and every flow it sent was acknowledged.
    pub fn done(&self) -> bool {
        todo!()
    }

    /// What it did so far.
    pub fn outcome(&self) -> HostOutcome {
        todo!()
    }
}
