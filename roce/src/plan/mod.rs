//! A job planned over ranks: which rank talks to which, on which queue
//! pairs (QP numbers, UDP source ports), with which memory layout. The
//! simulator and every live host build the same plan from the same inputs,
//! so both ends of every queue pair agree without a handshake.
//!
//! Conventions:
//!
//! * **Ranks** are one per NIC, numbered as the caller lists them; NIC n of
//!   a host is on rail n.
//! * **Ring order** is rail-aligned, as NCCL builds rings on rail-optimised
//!   fabrics: hosts in index order, snaking through each host's NICs —
//!   `h0 n0 → … → h0 n(N−1)` over NVLink, `→ h1 n(N−1)` over rail N−1,
//!   `→ … → h1 n0`, `→ h2 n0` over rail 0, and so on — so every network hop
//!   stays on one rail. With an even host count the closing hop
//!   (`h(H−1) n0 → h0 n0`) is on rail 0 too; with an odd count it runs from
//!   `h(H−1) n(N−1)` to `h0 n0` and crosses rails (through the spines). One
//!   NIC per host gives a plain ring over the network.
//! * **Connections**: one per (sender, receiver, channel) that carries
//!   data — the ring's hops for AllReduce, AllGather and ReduceScatter,
//!   every ordered pair for AllToAll, `r → r+1` for SendRecv, each flow
//!   (one channel) for incast and permutation. Ranks on one host use
//!   NVLink; ranks on different hosts a queue pair on each end.
//! * **QP numbers** say what they are: `(peer + 1) << 8 | role << 7 |
//!   channel` with role 0 on the sending end and 1 on the receiving end.
//! * **UDP source ports** (flow entropy) are a hash of (sender, receiver,
//!   channel, end) into 49152–65535, probed so that every QP of the job has
//!   its own port while the job has at most 16,384 QPs.
//! * **Memory** (see [`Layout`]): the rank's data at 0; after it the
//!   receive buffer (AllToAll, SendRecv, flows) or, for AllReduce and
//!   ReduceScatter, two staging slots per channel (alternate steps) that
//!   reduce-scatter WRITEs land in before being added into the data.
//!   AllGather lands directly in the data (in place).

use std::net::Ipv4Addr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::flows::{Background, FlowSizes, FlowSpec};
use crate::splitmix::mix;
use crate::{MacAddr, Nanos};

mod training;
mod workload;

pub use training::{
    Phase, Training, MAX_TRAINING_ITERS, TRAINING_ACT, TRAINING_COMPUTE_NS, TRAINING_GRAD,
    TRAINING_ITERS, TRAINING_TOKENS,
};

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
    /// Background traffic: Poisson flow arrivals on every NIC at a load,
    /// sizes from a published distribution (see [`crate::flows`]).
    Flows(Background),
    /// Rank r sends `bytes` to rank r−1 and to rank r+1, without wrapping:
    /// the pipeline-parallel exchange of a training step (activations
    /// forward, their gradients back, as in 1F1B's steady state).
    Pipeline(u64),
    /// A training job's steps (see [`Training`]): expands into one part per
    /// communication phase and iteration, each over groups of ranks.
    Training(Training),
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
    /// Line rate of every rank's NIC, bits per second: background flows
    /// arrive at their load times this. Job files without it say 100 Gb/s.
    #[serde(default = "nic_bps_default")]
    pub nic_bps: u64,
    /// Whether WRITEs carry real data (filled, copied, reduced and checked)
    /// or only their lengths: false for cluster-scale runs, where a
    /// 1,024-rank AllToAll of 64 MB would need 128 GB of buffers. Timing,
    /// packet counts and range checks are the same either way. Job files
    /// without it carry data.
    #[serde(default = "carry_data_default")]
    pub carry_data: bool,
}

fn carry_data_default() -> bool {
    true
}

fn nic_bps_default() -> u64 {
    100_000_000_000
}

impl Default for JobOptions {
    /// Two channels, 128 KiB chunks, 3.6 Tb/s inside a host (one
    /// direction of NVLink 4: 450 GB/s), 100 Gb/s NICs, carrying data.
    fn default() -> JobOptions {
        JobOptions {
            channels: 2,
            chunk_bytes: 128 * 1024,
            nvlink_bps: 3_600_000_000_000,
            nic_bps: nic_bps_default(),
            carry_data: true,
        }
    }
}

/// The most channels a job may have: the channel is the low 7 bits of a
/// QP number (see [`qpn`]); the upper half is left to background flows.
pub const MAX_CHANNELS: usize = 64;

/// The channel background flows ([`Workload::Flows`]) use, above every
/// collective's, so that a flow never queues behind a collective's WRITEs
/// on one queue pair.
pub const FLOW_CHANNEL: usize = MAX_CHANNELS;

/// The most background flows a job may have (their index is the
/// immediate data).
pub const MAX_FLOWS: usize = 1 << 24;

/// The most ranks a job may have: the peer rank plus one is the high 16 bits
/// of a 24-bit QP number (see [`qpn`]).
pub const MAX_RANKS: usize = 65_534;

/// The most ranks a ring collective may have: its 2(n−1) steps fit the
/// 10 bits of immediate data that name the step.
pub const MAX_RING_RANKS: usize = 512;

/// Bits of immediate data naming the chunk within a step (the step takes
/// the 10 bits above them).
pub const IMM_CHUNK_BITS: u32 = 22;

/// First UDP source port used for flow entropy (the dynamic range).
pub const SPORT_BASE: u16 = 49_152;
/// Number of UDP source ports in the dynamic range.
pub const SPORT_COUNT: u32 = 16_384;

/// Reads a size: decimal digits, optionally followed by `K`, `M` or `G`
/// (2^10, 2^20, 2^30; any case, optionally followed by `B` or `iB`), or by
/// a bare `B`.
///
/// # Errors
///
/// A message naming the text and the accepted forms.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let bad = || {
        format!("bad size {text:?}: expected bytes like 4096, or a number with K, M or G (2^10, 2^20, 2^30), like 512K or 64M")
    };
    let t = text.trim();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(bad());
    }
    let (num, unit) = t.split_at(digits);
    let n: u64 = num.parse().map_err(|_| bad())?;
    let unit = unit.to_ascii_lowercase();
    let shift = match unit.as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        _ => return Err(bad()),
    };
    n.checked_mul(1u64 << shift).ok_or_else(bad)
}

/// How a connection's data travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// Both ranks are on one host: over the GPU-to-GPU link.
    NvLink,
    /// Different hosts: RDMA WRITEs over a queue pair through the fabric.
    Network,
}

/// One direction of data between two ranks on one channel: the sender
/// posts WRITEs on `src_qpn`, the receiver's QP is `dst_qpn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Connection {
    /// Sending rank.
    pub src: usize,
    /// Receiving rank.
    pub dst: usize,
    /// Channel (0 for flows).
    pub channel: usize,
    /// NVLink or the network.
    pub via: Via,
    /// The sender's QP number (meaningful for [`Via::Network`]).
    pub src_qpn: u32,
    /// The receiver's QP number.
    pub dst_qpn: u32,
    /// UDP source port of the sender's data frames.
    pub src_sport: u16,
    /// UDP source port of the receiver's ACKs and CNPs.
    pub dst_sport: u16,
}

/// Which end of a connection a QP is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Posts WRITEs.
    Sender,
    /// Receives them.
    Receiver,
}

/// A QP number that says what it is for: `(peer + 1) << 8 | role << 7 |
/// channel`, role 0 on the sending end and 1 on the receiving end. Unique
/// on a NIC (a NIC has one connection per peer, direction and channel) and
/// readable in a capture.
pub fn qpn(peer: usize, role: Role, channel: usize) -> u32 {
    let r = match role {
        Role::Sender => 0,
        Role::Receiver => 1,
    };
    (((peer as u32) + 1) << 8) | (r << 7) | (channel as u32 & 0x7f)
}

/// The peer rank, role and channel a QP number made by [`qpn`] names.
pub fn decode_qpn(qpn: u32) -> Option<(usize, Role, usize)> {
    let peer = (qpn >> 8) as usize;
    if peer == 0 || qpn > 0x00ff_ffff {
        return None;
    }
    let role = if qpn & 0x80 == 0 {
        Role::Sender
    } else {
        Role::Receiver
    };
    Some((peer - 1, role, (qpn & 0x7f) as usize))
}

/// Where a rank's buffers lie in its NIC's registered memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Start of the rank's input (and, for in-place collectives, output).
    pub data: usize,
    /// Bytes of it.
    pub data_bytes: usize,
    /// Start of the receive buffer (AllToAll, SendRecv, flows), or of the
    /// reduction staging slots (AllReduce, ReduceScatter).
    pub recv: usize,
    /// Bytes of a staging slot: one channel's share of the largest segment
    /// (0 when there is no staging).
    pub slot_bytes: usize,
    /// Total registered memory.
    pub total: usize,
}

/// A job planned over its ranks (see the module doc).
#[derive(Debug, Clone)]
pub struct JobPlan {
    workload: Workload,
    ranks: Vec<RankAddr>,
    opts: JobOptions,
    ring: Vec<usize>,
    position: Vec<usize>,
    /// Shared, not copied: every host holds the plan, and a thousand-rank
    /// AllToAll has millions of connections.
    conns: Arc<Vec<Connection>>,
    /// Per rank, the indices of the connections it is an end of, so that
    /// [`JobPlan::qp_configs`] need not scan them all for every rank.
    conn_index: Arc<Vec<Vec<u32>>>,
    flows: Vec<(usize, usize)>,
    flow_specs: Vec<FlowSpec>,
    layouts: Vec<Layout>,
    /// Every workload of a multi-workload job; empty for one workload.
    /// Shared, not copied: every host holds the plan.
    parts: Arc<Vec<Part>>,
}

/// Per rank, the indices (in `conns`) of the connections it is an end of,
/// in connection order.
fn index_by_rank(conns: &[Connection], ranks: usize) -> Vec<Vec<u32>> {
    let mut index = vec![Vec::new(); ranks];
    for (i, c) in conns.iter().enumerate() {
        for r in [c.src, c.dst] {
            if let Some(v) = index.get_mut(r) {
                if v.last() != Some(&(i as u32)) {
                    v.push(i as u32);
                }
            }
        }
    }
    index
}

/// Balanced split of `total` items into `parts`: part `k` is
/// `[k*total/parts, (k+1)*total/parts)`, so sizes differ by at most one.
pub(crate) fn split(total: usize, parts: usize, k: usize) -> (usize, usize) {
    let t = total as u128;
    let p = parts as u128;
    let a = (k as u128 * t / p) as usize;
    let b = ((k as u128 + 1) * t / p) as usize;
    (a, b - a)
}

impl JobPlan {
    /// Plans `workload` over `ranks` (rank r is `ranks[r]`).
    ///
    /// # Errors
    ///
    /// A workload that does not fit the ranks (a rank out of range, one
    /// rank, a size that does not divide into elements).
    pub fn new(
        workload: Workload,
        ranks: Vec<RankAddr>,
        opts: JobOptions,
    ) -> Result<JobPlan, String> {
        if let Workload::Training(_) = workload {
            return JobPlan::with_workloads(vec![(0, workload)], ranks, opts);
        }
        let n = ranks.len();
        if n < 2 {
            return Err(format!("a job needs at least 2 ranks (NICs), not {n}"));
        }
        if n > MAX_RANKS {
            return Err(format!("a job has at most {MAX_RANKS} ranks, not {n}"));
        }
        for (i, a) in ranks.iter().enumerate() {
            if let Some(j) = ranks[..i]
                .iter()
                .position(|b| b.host == a.host && b.nic == a.nic)
            {
                return Err(format!(
                    "ranks {j} and {i} are both NIC {} of host {}",
                    a.nic, a.host
                ));
            }
        }
        if opts.channels == 0 || opts.channels > MAX_CHANNELS {
            return Err(format!(
                "channels must be 1 to {MAX_CHANNELS}, not {}",
                opts.channels
            ));
        }
        if opts.chunk_bytes < 4 {
            return Err(format!(
                "chunk_bytes must be at least one float32 (4 bytes), not {}",
                opts.chunk_bytes
            ));
        }
        if opts.nvlink_bps == 0 {
            return Err("nvlink_bps must be more than 0".to_string());
        }
        if opts.nic_bps == 0 {
            return Err("nic_bps must be more than 0".to_string());
        }
        let bytes = workload.bytes();
        if bytes == 0 {
            return Err("the size must be more than 0 bytes".to_string());
        }
        if bytes > (1u64 << 40) || usize::try_from(bytes).is_err() {
            return Err(format!("size {bytes} is too large (at most 1 TiB)"));
        }
        let per_rank_multiple = |what: &str| -> Result<(), String> {
            let unit = 4 * n as u64;
            if !bytes.is_multiple_of(unit) {
                let lo = bytes / unit * unit;
                return Err(format!(
                    "{what}:{bytes} does not split into {n} equal float32 blocks: the size must be a multiple of {unit} bytes (4 × {n} ranks), like {} or {}",
                    lo.max(unit),
                    lo + unit
                ));
            }
            Ok(())
        };
        match &workload {
            Workload::AllReduce(b) | Workload::SendRecv(b) | Workload::Pipeline(b) => {
                if !b.is_multiple_of(4) {
                    return Err(format!(
                        "{}:{b} is not a whole number of float32 elements: the size must be a multiple of 4 bytes",
                        workload.name()
                    ));
                }
            }
            Workload::AllGather(_) => per_rank_multiple("allgather")?,
            Workload::ReduceScatter(_) => per_rank_multiple("reducescatter")?,
            Workload::AllToAll(_) => per_rank_multiple("alltoall")?,
            Workload::Incast { srcs, dst, .. } => {
                if srcs.is_empty() {
                    return Err("incast needs at least one source".to_string());
                }
                for &r in srcs.iter().chain(std::iter::once(dst)) {
                    if r >= n {
                        return Err(format!(
                            "incast names rank {r}, but the job has {n} ranks (0 to {})",
                            n - 1
                        ));
                    }
                }
                if srcs.contains(dst) {
                    return Err(format!("incast destination rank {dst} is also a source"));
                }
                let mut seen = srcs.clone();
                seen.sort_unstable();
                seen.dedup();
                if seen.len() != srcs.len() {
                    return Err("incast lists a source twice".to_string());
                }
            }
            Workload::Permutation { .. } | Workload::Training(_) => {}
            Workload::Flows(b) => {
                if b.load_ppm == 0 || b.load_ppm > 1_000_000 || b.duration_ns == 0 {
                    return Err(
                        "background flows need a load above 0 and at most 1, and a duration"
                            .to_string(),
                    );
                }
                if let FlowSizes::Fixed(0) = b.sizes {
                    return Err("background flows of 0 bytes".to_string());
                }
            }
        }

        let ring_op = matches!(
            workload,
            Workload::AllReduce(_) | Workload::AllGather(_) | Workload::ReduceScatter(_)
        );
        if ring_op && n > MAX_RING_RANKS {
            return Err(format!(
                "a ring collective has at most {MAX_RING_RANKS} ranks (its step is 10 bits of the immediate data), not {n}"
            ));
        }
        if !workload.is_flows() {
            let chunk_elems = (opts.chunk_bytes / 4) as u64;
            if (bytes / 4).div_ceil(chunk_elems) >= 1 << IMM_CHUNK_BITS {
                return Err(format!(
                    "chunk_bytes {} is too small for {bytes} bytes: a channel's share of a step must be fewer than 2^{IMM_CHUNK_BITS} chunks",
                    opts.chunk_bytes
                ));
            }
        }
        let ring = ring_order(&ranks);
        let mut position = vec![0; n];
        for (p, &r) in ring.iter().enumerate() {
            position[r] = p;
        }
        let flow_specs: Vec<FlowSpec> = match &workload {
            Workload::Incast { srcs, dst, bytes } => srcs
                .iter()
                .map(|&s| FlowSpec {
                    src: s,
                    dst: *dst,
                    bytes: *bytes,
                    at: 0,
                })
                .collect(),
            Workload::Permutation { seed, bytes } => {
                let p = derangement(n, *seed);
                (0..n)
                    .map(|s| FlowSpec {
                        src: s,
                        dst: p[s],
                        bytes: *bytes,
                        at: 0,
                    })
                    .collect()
            }
            Workload::Flows(b) => {
                let hosts: Vec<usize> = ranks.iter().map(|a| a.host).collect();
                b.generate(&hosts, opts.nic_bps)
            }
            _ => Vec::new(),
        };
        if flow_specs.len() > MAX_FLOWS {
            return Err(format!(
                "{} flows are too many (at most {MAX_FLOWS}): lower the load or the duration",
                flow_specs.len()
            ));
        }
        if flow_specs.iter().any(|f| f.bytes > (1 << 32) - 1) {
            return Err("a flow is larger than one WRITE (4 GiB)".to_string());
        }
        let flows: Vec<(usize, usize)> = flow_specs.iter().map(|f| (f.src, f.dst)).collect();
        let c = opts.channels;
        let mut pairs: Vec<(usize, usize, usize)> = Vec::new();
        match &workload {
            Workload::AllReduce(_) | Workload::AllGather(_) | Workload::ReduceScatter(_) => {
                for p in 0..n {
                    for ch in 0..c {
                        pairs.push((ring[p], ring[(p + 1) % n], ch));
                    }
                }
            }
            Workload::AllToAll(_) => {
                for s in 0..n {
                    for d in 0..n {
                        if s != d {
                            for ch in 0..c {
                                pairs.push((s, d, ch));
                            }
                        }
                    }
                }
            }
            Workload::SendRecv(_) => {
                for s in 0..n {
                    for ch in 0..c {
                        pairs.push((s, (s + 1) % n, ch));
                    }
                }
            }
            Workload::Pipeline(_) => {
                for s in 0..n {
                    for ch in 0..c {
                        if s + 1 < n {
                            pairs.push((s, s + 1, ch));
                        }
                        if s > 0 {
                            pairs.push((s, s - 1, ch));
                        }
                    }
                }
            }
            // Planned by with_workloads, part by part.
            Workload::Training(_) => {}
            Workload::Incast { .. } | Workload::Permutation { .. } => {
                for &(s, d) in &flows {
                    pairs.push((s, d, 0));
                }
            }
            Workload::Flows(_) => {
                for &(s, d) in &flows {
                    pairs.push((s, d, FLOW_CHANNEL));
                }
            }
        }
        let conns = connections_of(pairs, &ranks);
        let conn_index = index_by_rank(&conns, n);
        let layouts = if workload.is_flows() {
            flow_layouts(n, &flow_specs)
        } else {
            (0..n).map(|_| layout(&workload, n, c)).collect()
        };
        Ok(JobPlan {
            workload,
            ranks,
            opts,
            ring,
            position,
            conns: Arc::new(conns),
            conn_index: Arc::new(conn_index),
            flows,
            flow_specs,
            layouts,
            parts: Arc::new(Vec::new()),
        })
    }

    /// Plans several workloads on the same ranks, each starting `start`
    /// after the job does: each has its own region of every rank's memory
    /// (in the order given) and its own engines, and workloads between the
    /// same pair of ranks on the same channel share that connection's queue
    /// pairs. The plan's own [`workload`](Self::workload),
    /// [`layout`](Self::layout), [`flows`](Self::flows) and friends are the
    /// first workload's; [`parts`](Self::parts) lists them all.
    ///
    /// A [`Workload::Training`] becomes one part per iteration and phase,
    /// each a collective in every group of the phase ([`PartRef::groups`]):
    /// the first starts `compute_ns` after `start`, each next one on each
    /// rank `compute_ns` after the previous one finished on that rank
    /// ([`Start::After`]). When the first workload is a training job, the
    /// plan's own workload is it, with no flows and layouts that only give
    /// each rank's total memory.
    ///
    /// # Errors
    ///
    /// No workload, or one that [`new`](Self::new) refuses (named by its
    /// position), a training job whose layout does not fit the ranks
    /// ([`Training::check`]), or more than [`MAX_PARTS`] parts.
    pub fn with_workloads(
        workloads: Vec<(Nanos, Workload)>,
        ranks: Vec<RankAddr>,
        opts: JobOptions,
    ) -> Result<JobPlan, String> {
        if workloads.is_empty() {
            return Err("a job needs at least one workload".to_string());
        }
        if workloads.len() > MAX_PARTS {
            return Err(format!(
                "a job has at most {MAX_PARTS} workloads, not {}",
                workloads.len()
            ));
        }
        let n = ranks.len();
        let first_workload = workloads[0].1.clone();
        let mut parts: Vec<Part> = Vec::with_capacity(workloads.len());
        let mut base = vec![0usize; n];
        let mut pairs: Vec<(usize, usize, usize)> = Vec::new();
        let too_many = || {
            format!("a job has at most {MAX_PARTS} parts (workloads, and a training job's iterations × phases)")
        };
        for (k, (start_ns, w)) in workloads.into_iter().enumerate() {
            let name = w.name();
            let Workload::Training(t) = w else {
                let plan = JobPlan::new(w, ranks.clone(), opts.clone())
                    .map_err(|e| format!("workload {} ({name}): {e}", k + 1))?;
                pairs.extend(plan.conns.iter().map(|c| (c.src, c.dst, c.channel)));
                let here = base.clone();
                for (r, b) in base.iter_mut().enumerate() {
                    *b += plan.memory_bytes(r);
                }
                if parts.len() >= MAX_PARTS {
                    return Err(too_many());
                }
                parts.push(Part {
                    start: Start::At(start_ns),
                    plans: Arc::new(vec![plan]),
                    groups: Arc::new(Vec::new()),
                    member_of: Arc::new(Vec::new()),
                    base: here,
                    phase: None,
                });
                continue;
            };
            let bad = |e: String| format!("workload {} (training): {e}", k + 1);
            t.check(&ranks).map_err(bad)?;
            let phases = t.phases();
            if parts.len() + t.iters * phases.len() > MAX_PARTS {
                return Err(too_many());
            }
            let mut planned = Vec::with_capacity(phases.len());
            for &ph in &phases {
                let groups = t.groups(ph, n).map_err(bad)?;
                let w = t.workload(ph);
                let plans = groups
                    .iter()
                    .map(|g| {
                        let addrs = g.iter().map(|&r| ranks[r].clone()).collect();
                        JobPlan::new(w.clone(), addrs, opts.clone())
                            .map_err(|e| bad(format!("{}: {e}", ph.name())))
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let mut member_of = vec![(u32::MAX, u32::MAX); n];
                for (g, (plan, members)) in plans.iter().zip(&groups).enumerate() {
                    for (l, &r) in members.iter().enumerate() {
                        member_of[r] = (g as u32, l as u32);
                    }
                    pairs.extend(
                        plan.conns
                            .iter()
                            .map(|c| (members[c.src], members[c.dst], c.channel)),
                    );
                }
                planned.push((ph, Arc::new(plans), Arc::new(groups), Arc::new(member_of)));
            }
            let first = parts.len();
            for iteration in 0..t.iters {
                for (ph, plans, groups, member_of) in &planned {
                    let start = if parts.len() == first {
                        Start::At(start_ns.saturating_add(t.compute_ns))
                    } else {
                        Start::After {
                            part: parts.len() - 1,
                            gap_ns: t.compute_ns,
                        }
                    };
                    let here = base.clone();
                    for (r, b) in base.iter_mut().enumerate() {
                        let (g, l) = member_of[r];
                        *b += plans
                            .get(g as usize)
                            .map_or(0, |p| p.memory_bytes(l as usize));
                    }
                    parts.push(Part {
                        start,
                        plans: Arc::clone(plans),
                        groups: Arc::clone(groups),
                        member_of: Arc::clone(member_of),
                        base: here,
                        phase: Some(PhaseTag {
                            workload: k,
                            iteration,
                            phase: *ph,
                            training: t,
                            start_ns,
                        }),
                    });
                }
            }
        }
        pairs.sort_unstable();
        pairs.dedup();
        let conns = connections_of(pairs, &ranks);
        let conn_index = Arc::new(index_by_rank(&conns, n));
        let conns = Arc::new(conns);
        let total = |r: usize| base[r];
        let mut top = if parts[0].groups.is_empty() {
            parts[0].plans[0].clone()
        } else {
            let ring = ring_order(&ranks);
            let mut position = vec![0; n];
            for (p, &r) in ring.iter().enumerate() {
                position[r] = p;
            }
            JobPlan {
                workload: first_workload,
                ranks,
                opts,
                ring,
                position,
                conns: Arc::clone(&conns),
                conn_index: Arc::clone(&conn_index),
                flows: Vec::new(),
                flow_specs: Vec::new(),
                layouts: Vec::new(),
                parts: Arc::new(Vec::new()),
            }
        };
        top.conn_index = conn_index;
        top.conns = conns;
        top.layouts = (0..n)
            .map(|r| Layout {
                total: total(r),
                ..top.layouts.get(r).copied().unwrap_or(Layout {
                    data: 0,
                    data_bytes: 0,
                    recv: 0,
                    slot_bytes: 0,
                    total: 0,
                })
            })
            .collect();
        top.parts = Arc::new(parts);
        Ok(top)
    }

    /// Every workload of the job with its start and memory regions, the
    /// first first; a plan made by [`new`](Self::new) has one, itself.
    pub fn parts(&self) -> Vec<PartRef<'_>> {
        (0..self.part_count())
            .filter_map(|p| self.part(p))
            .collect()
    }

    /// How many parts [`parts`](Self::parts) lists.
    pub fn part_count(&self) -> usize {
        self.parts.len().max(1)
    }

    /// Part `p` of [`parts`](Self::parts), without listing them all.
    pub fn part(&self, p: usize) -> Option<PartRef<'_>> {
        if self.parts.is_empty() {
            return (p == 0).then(|| PartRef {
                start_ns: 0,
                start: Start::At(0),
                plan: self,
                phase: None,
                base: &[],
                plans: std::slice::from_ref(self),
                groups: &[],
                member_of: &[],
            });
        }
        self.parts.get(p).map(|x| PartRef {
            start_ns: match x.start {
                Start::At(t) => t,
                Start::After { .. } => 0,
            },
            start: x.start,
            plan: &x.plans[0],
            phase: x.phase,
            base: &x.base,
            plans: &x.plans,
            groups: &x.groups,
            member_of: &x.member_of,
        })
    }
}

/// The most workloads one job may have (a WRITE's tag names its workload in
/// its top 16 bits).
pub const MAX_PARTS: usize = 1 << 15;

/// When a part of a job starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// This long after the job starts, on every rank at once.
    At(Nanos),
    /// On each rank, `gap_ns` after that rank finished part `part` (an
    /// earlier part of the job): a training step's compute between phases.
    After {
        /// The part it follows.
        part: usize,
        /// Virtual time between that part's end and this one's start.
        gap_ns: Nanos,
    },
}

/// Where a part of a training job belongs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseTag {
    /// Which of the workloads given to [`JobPlan::with_workloads`] it
    /// belongs to (0 for the first).
    pub workload: usize,
    /// The iteration, from 0.
    pub iteration: usize,
    /// The phase.
    pub phase: Phase,
    /// The training job it belongs to.
    pub training: Training,
    /// When that job starts, after the job as a whole does (its
    /// `@START`): its first compute gap begins then.
    pub start_ns: Nanos,
}

/// One workload of a multi-workload job (see [`JobPlan::with_workloads`]).
#[derive(Debug, Clone)]
struct Part {
    start: Start,
    /// The plan over every rank, or one per group (shared by a training
    /// job's iterations).
    plans: Arc<Vec<JobPlan>>,
    /// Per group, its ranks (job numbering) in the group's own order; empty
    /// when the one plan is over every rank.
    groups: Arc<Vec<Vec<usize>>>,
    /// Per rank of the job, its (group, rank within the group).
    member_of: Arc<Vec<(u32, u32)>>,
    /// Where its region starts in each rank's memory.
    base: Vec<usize>,
    phase: Option<PhaseTag>,
}

/// One workload of a job as [`JobPlan::parts`] lists it.
#[derive(Debug, Clone, Copy)]
pub struct PartRef<'a> {
    /// When it starts, after the job does ([`Start::At`]; 0 for a part
    /// that starts after another).
    pub start_ns: Nanos,
    /// When it starts.
    pub start: Start,
    /// Its own plan (its connections, layouts from 0); for a part over
    /// groups, the first group's (every group runs the same collective).
    pub plan: &'a JobPlan,
    /// Its place in a training job, if it is a phase of one.
    pub phase: Option<PhaseTag>,
    base: &'a [usize],
    plans: &'a [JobPlan],
    groups: &'a [Vec<usize>],
    member_of: &'a [(u32, u32)],
}

impl<'a> PartRef<'a> {
    /// Where its region starts in rank `rank`'s memory.
    pub fn base(&self, rank: usize) -> usize {
        self.base.get(rank).copied().unwrap_or(0)
    }

    /// Its groups, each a list of the job's ranks in the group's order;
    /// empty when it runs over every rank (its plan's ranks are the job's).
    pub fn groups(&self) -> &'a [Vec<usize>] {
        self.groups
    }

    /// The plan rank `rank` (job numbering) runs in this part, and its rank
    /// in that plan; None when it has no place in it.
    pub fn plan_of(&self, rank: usize) -> Option<(&'a JobPlan, usize)> {
        if self.groups.is_empty() {
            return (rank < self.plans[0].ranks.len()).then_some((&self.plans[0], rank));
        }
        let &(g, l) = self.member_of.get(rank)?;
        Some((self.plans.get(g as usize)?, l as usize))
    }

    /// The job's rank of rank `local` of `rank`'s group (as its plan
    /// numbers it).
    pub fn to_job(&self, rank: usize, local: usize) -> Option<usize> {
        if self.groups.is_empty() {
            return Some(local);
        }
        let &(g, _) = self.member_of.get(rank)?;
        self.groups.get(g as usize)?.get(local).copied()
    }

    /// Rank `peer` (job numbering) as `rank`'s group numbers it; None when
    /// they are not in one group.
    pub fn to_group(&self, rank: usize, peer: usize) -> Option<usize> {
        if self.groups.is_empty() {
            return Some(peer);
        }
        let (g, _) = *self.member_of.get(rank)?;
        let (h, l) = *self.member_of.get(peer)?;
        (g == h && g != u32::MAX).then_some(l as usize)
    }
}

/// The connections of `pairs` (sender, receiver, channel), with QP numbers
/// and UDP source ports as the module doc says.
fn connections_of(mut pairs: Vec<(usize, usize, usize)>, ranks: &[RankAddr]) -> Vec<Connection> {
    {
        pairs.sort_unstable();
        pairs.dedup();
        let mut used = vec![false; SPORT_COUNT as usize];
        let mut in_use = 0u32;
        let mut sport = |key: u64| -> u16 {
            let mut i = (mix(key) % u64::from(SPORT_COUNT)) as usize;
            if in_use < SPORT_COUNT {
                while used[i] {
                    i = (i + 1) % SPORT_COUNT as usize;
                }
                used[i] = true;
                in_use += 1;
            }
            SPORT_BASE + i as u16
        };
        pairs
            .into_iter()
            .map(|(src, dst, channel)| {
                let via = if ranks[src].host == ranks[dst].host {
                    Via::NvLink
                } else {
                    Via::Network
                };
                let key = ((src as u64) << 40) | ((dst as u64) << 16) | ((channel as u64) << 1);
                Connection {
                    src,
                    dst,
                    channel,
                    via,
                    src_qpn: qpn(dst, Role::Sender, channel),
                    dst_qpn: qpn(src, Role::Receiver, channel),
                    src_sport: sport(key),
                    dst_sport: sport(key | 1),
                }
            })
            .collect()
    }
}

impl JobPlan {
    /// The ranks, rank 0 first.
    pub fn ranks(&self) -> &[RankAddr] {
        &self.ranks
    }

    /// The workload.
    pub fn workload(&self) -> &Workload {
        &self.workload
    }

    /// Registered memory a rank's NIC needs.
    pub fn memory_bytes(&self, rank: usize) -> usize {
        self.layouts.get(rank).map_or(0, |l| l.total)
    }

    /// The job's knobs.
    pub fn options(&self) -> &JobOptions {
        &self.opts
    }

    /// The ring: ranks in ring order, each sending to the next (see the
    /// module doc for the rail-aligned order).
    pub fn ring(&self) -> &[usize] {
        &self.ring
    }

    /// A rank's place in the ring.
    pub fn position(&self, rank: usize) -> usize {
        self.position.get(rank).copied().unwrap_or(0)
    }

    /// Every connection, sorted by (src, dst, channel).
    pub fn connections(&self) -> &[Connection] {
        &self.conns
    }

    /// The connection from `src` to `dst` on `channel`, if the job has one.
    pub fn connection(&self, src: usize, dst: usize, channel: usize) -> Option<&Connection> {
        self.conns
            .binary_search_by(|c| (c.src, c.dst, c.channel).cmp(&(src, dst, channel)))
            .ok()
            .map(|i| &self.conns[i])
    }

    /// Point-to-point flows (sender, receiver) of a flow workload, in
    /// sender order for permutations and source order for incasts.
    pub fn flows(&self) -> &[(usize, usize)] {
        &self.flows
    }

    /// The flows of a flow workload with their sizes and arrival times
    /// (from the job's start), in the order of [`flows`](Self::flows):
    /// background flows by (sender, arrival). Flow k's WRITE carries
    /// immediate data k.
    pub fn flow_specs(&self) -> &[FlowSpec] {
        &self.flow_specs
    }

    /// The channel a flow workload's flows use (0, or [`FLOW_CHANNEL`] for
    /// background flows).
    pub fn flow_channel(&self) -> usize {
        match self.workload {
            Workload::Flows(_) => FLOW_CHANNEL,
            _ => 0,
        }
    }

    /// Where rank `rank`'s buffers lie in its memory.
    pub fn layout(&self, rank: usize) -> Layout {
        self.layouts.get(rank).copied().unwrap_or(Layout {
            data: 0,
            data_bytes: 0,
            recv: 0,
            slot_bytes: 0,
            total: 0,
        })
    }

    /// The queue pairs rank `rank`'s NIC must connect: one per network
    /// connection it sends or receives on.
    pub fn qp_configs(&self, rank: usize) -> Vec<crate::nic::QpConfig> {
        let mut out = Vec::new();
        let mine = self.conn_index.get(rank).map_or(&[][..], Vec::as_slice);
        for c in mine.iter().map(|&i| &self.conns[i as usize]) {
            if c.via != Via::Network {
                continue;
            }
            if c.src == rank {
                out.push(crate::nic::QpConfig {
                    local_qpn: c.src_qpn,
                    remote_ip: self.ranks[c.dst].ip,
                    remote_qpn: c.dst_qpn,
                    udp_sport: c.src_sport,
                });
            }
            if c.dst == rank {
                out.push(crate::nic::QpConfig {
                    local_qpn: c.dst_qpn,
                    remote_ip: self.ranks[c.src].ip,
                    remote_qpn: c.src_qpn,
                    udp_sport: c.dst_sport,
                });
            }
        }
        out
    }
}

/// The rail-aligned ring: hosts in index order, each host's NICs ascending
/// on even-numbered hosts (in that order) and descending on odd ones, so
/// the hop between hosts joins NICs of the same rail.
fn ring_order(ranks: &[RankAddr]) -> Vec<usize> {
    let mut by_host: Vec<usize> = ranks.iter().map(|r| r.host).collect();
    by_host.sort_unstable();
    by_host.dedup();
    let mut ring = Vec::with_capacity(ranks.len());
    for (k, &h) in by_host.iter().enumerate() {
        let mut nics: Vec<(usize, usize)> = ranks
            .iter()
            .enumerate()
            .filter(|(_, a)| a.host == h)
            .map(|(r, a)| (a.nic, r))
            .collect();
        nics.sort_unstable();
        if k % 2 == 1 {
            nics.reverse();
        }
        ring.extend(nics.into_iter().map(|(_, r)| r));
    }
    ring
}

/// A seeded random derangement of `0..n` (Sattolo's algorithm: one cycle,
/// so no rank sends to itself).
fn derangement(n: usize, seed: u64) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    let mut state = seed;
    for i in (1..n).rev() {
        state = mix(state);
        let j = (state % i as u64) as usize;
        p.swap(i, j);
    }
    p
}

/// Flow workloads: a sender's data region holds its largest flow (every
/// flow reads from its start), a receiver's landing region its largest
/// incoming one (every flow lands at its start: their bytes are alike).
fn flow_layouts(n: usize, flows: &[FlowSpec]) -> Vec<Layout> {
    let mut out = vec![0usize; n];
    let mut inc = vec![0usize; n];
    for f in flows {
        out[f.src] = out[f.src].max(f.bytes as usize);
        inc[f.dst] = inc[f.dst].max(f.bytes as usize);
    }
    (0..n)
        .map(|r| Layout {
            data: 0,
            data_bytes: out[r],
            recv: out[r],
            slot_bytes: 0,
            total: out[r] + inc[r],
        })
        .collect()
}

fn layout(workload: &Workload, n: usize, channels: usize) -> Layout {
    let bytes = workload.bytes() as usize;
    match workload {
        Workload::AllReduce(_) | Workload::ReduceScatter(_) => {
            let elems = bytes / 4;
            // The largest segment's largest channel share.
            let seg = elems.div_ceil(n);
            let slot = seg.div_ceil(channels) * 4;
            Layout {
                data: 0,
                data_bytes: bytes,
                recv: bytes,
                slot_bytes: slot,
                total: bytes + 2 * channels * slot,
            }
        }
        Workload::AllGather(_) => Layout {
            data: 0,
            data_bytes: bytes,
            recv: 0,
            slot_bytes: 0,
            total: bytes,
        },
        Workload::AllToAll(_) | Workload::SendRecv(_) => Layout {
            data: 0,
            data_bytes: bytes,
            recv: bytes,
            slot_bytes: 0,
            total: 2 * bytes,
        },
        // From the previous rank at `recv`, from the next one after it.
        Workload::Pipeline(_) => Layout {
            data: 0,
            data_bytes: bytes,
            recv: bytes,
            slot_bytes: 0,
            total: 3 * bytes,
        },
        // Flow workloads are laid out by flow_layouts.
        _ => Layout {
            data: 0,
            data_bytes: 0,
            recv: 0,
            slot_bytes: 0,
            total: 0,
        },
    }
}
