//! A job planned over ranks: which rank talks to which, on which queue
//! pairs (QP numbers, UDP source ports), with which memory layout. The
//! simulator and every live host build the same plan from the same inputs,
//! so both ends of every queue pair agree without a handshake.
//!
//! CONTRACT (fixed signatures; bodies by the module's owner).

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::MacAddr;

/// One rank's NIC: rank r is NIC `nic` of host `host` (NIC n on rail n).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankAddr {
    /// Index of the host in the topology's host order.
    pub host: usize,
    /// Index of the NIC on its host (its rail).
    pub nic: usize,
    /// `host.ethN`, for reports.
    pub name: String,
    /// The NIC's address.
    pub ip: Ipv4Addr,
    /// The NIC's MAC.
    pub mac: MacAddr,
}

/// What a job does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Workload {
    /// Ring AllReduce (reduce-scatter then all-gather) of `bytes` per rank.
    AllReduce(u64),
    /// Ring AllGather; `bytes` is the output size per rank.
    AllGather(u64),
    /// Ring ReduceScatter; `bytes` is the input size per rank.
    ReduceScatter(u64),
    /// Every rank sends `bytes / ranks` to every other rank.
    AllToAll(u64),
    /// Rank r sends `bytes` to rank r+1.
    SendRecv(u64),
    /// Each source rank sends `bytes` to `dst`.
    Incast {
        /// Bytes per sender.
        bytes: u64,
        /// Sending ranks.
        srcs: Vec<usize>,
        /// Receiving rank.
        dst: usize,
    },
    /// Each rank sends `bytes` to another, a seeded random derangement.
    Permutation {
        /// Bytes per sender.
        bytes: u64,
        /// Seed of the derangement.
        seed: u64,
    },
}

/// Knobs of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobOptions {
    /// Queue pairs per peer pair (NCCL channels).
    pub channels: usize,
    /// Bytes per WRITE within a ring step (pipelining unit).
    pub chunk_bytes: usize,
    /// GPU-to-GPU bandwidth inside a host, bits per second.
    pub nvlink_bps: u64,
}

impl Workload {
    /// Reads a workload spec (`allreduce:SIZE`, `allgather:SIZE`,
    /// `reducescatter:SIZE`, `alltoall:SIZE`, `sendrecv:SIZE`,
    /// `incast:SIZE:SRC1,SRC2,...:DST`, `permutation:SIZE[:SEED]`; SIZE
    /// like `64M`, `512K`, `1G`, `4096`), resolving endpoint names with
    /// `rank_of`.
    ///
    /// # Errors
    ///
    /// A message naming the bad part and what would be accepted.
    pub fn parse(
        _spec: &str,
        _rank_of: &dyn Fn(&str) -> Result<usize, String>,
    ) -> Result<Workload, String> {
        todo!()
    }
}

/// A job planned over its ranks (see the module doc).
#[derive(Debug, Clone)]
pub struct JobPlan {
    _private: (),
}

impl JobPlan {
    /// Plans `workload` over `ranks` (rank r is `ranks[r]`).
    ///
    /// # Errors
    ///
    /// A workload that does not fit the ranks (a rank out of range, one
    /// rank, a size that does not divide into elements).
    pub fn new(
        _workload: Workload,
        _ranks: Vec<RankAddr>,
        _opts: JobOptions,
    ) -> Result<JobPlan, String> {
        todo!()
    }

    /// The ranks, rank 0 first.
    pub fn ranks(&self) -> &[RankAddr] {
        todo!()
    }

    /// The workload.
    pub fn workload(&self) -> &Workload {
        todo!()
    }

    /// Registered memory a rank's NIC needs.
    pub fn memory_bytes(&self, _rank: usize) -> usize {
        todo!()
    }
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            channels: 2,
            chunk_bytes: 128 << 10,
            nvlink_bps: 3_600_000_000_000,
        }
    }
}
