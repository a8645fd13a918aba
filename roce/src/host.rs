//! A GPU server: its NICs, the GPU-to-GPU link inside it, and its ranks'
//! part of a job.
//!
//! The host owns one [`Nic`] per rank it holds (NIC n is rank on rail n),
//! connects the plan's queue pairs, and runs a [`RankEngine`] per rank:
//! posts on a network connection become [`Nic::post_write`]s, the NIC's
//! completions become the engine's deliveries and acknowledgements. Posts
//! between two ranks of the host go over NVLink, modelled as a serial link
//! per (source, destination) NIC pair at `nvlink_bps` plus
//! [`NVLINK_LATENCY_NS`]: the bytes are copied from one NIC's memory into
//! the other's when the copy is due, and both engines hear of it then.

use serde::{Deserialize, Serialize};

pub use crate::collective::{FlowOutcome, RankOutcome};

use crate::nic::NicStats;
use crate::Nanos;

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

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::Ipv4Addr;

use crate::collective::{Delivery, Post, RankEngine};
use crate::nic::{Completion, Nic, NicConfig, NicError, QpConfig, WriteRequest};
use crate::plan::{decode_qpn, JobPlan, Role, Start, Via};

/// Latency of a GPU-to-GPU copy inside a host, on top of its
/// serialisation at `nvlink_bps`.
pub const NVLINK_LATENCY_NS: Nanos = 1_000;

/// What the host needs of a NIC; [`Nic`] is the one real implementation,
/// tests use a stand-in.
pub(crate) trait Port {
    fn connect(&mut self, qp: QpConfig) -> Result<(), NicError>;
    fn post_write(&mut self, qpn: u32, wr: WriteRequest) -> Result<(), NicError>;
    /// Takes a frame; a RoCEv2 WRITE's source and bytes after its BTH.
    fn receive(&mut self, now: Nanos, frame: &[u8]) -> Option<(Ipv4Addr, u32)>;
    fn transmit(&mut self, now: Nanos, buf: &mut [u8]) -> Option<usize>;
    fn next_wakeup(&self) -> Option<Nanos>;
    fn poll_completion(&mut self) -> Option<Completion>;
    /// Whether [`Port::poll_completion`] would return one.
    fn has_completion(&self) -> bool;
    fn memory(&self) -> &[u8];
    fn memory_mut(&mut self) -> &mut [u8];
    fn stats(&self) -> NicStats;
}

impl Port for Nic {
    fn connect(&mut self, qp: QpConfig) -> Result<(), NicError> {
        Nic::connect(self, qp)
    }
    fn post_write(&mut self, qpn: u32, wr: WriteRequest) -> Result<(), NicError> {
        Nic::post_write(self, qpn, wr)
    }
    fn receive(&mut self, now: Nanos, frame: &[u8]) -> Option<(Ipv4Addr, u32)> {
        Nic::receive_noting(self, now, frame)
    }
    fn transmit(&mut self, now: Nanos, buf: &mut [u8]) -> Option<usize> {
        Nic::transmit(self, now, buf)
    }
    fn next_wakeup(&self) -> Option<Nanos> {
        Nic::next_wakeup(self)
    }
    fn poll_completion(&mut self) -> Option<Completion> {
        Nic::poll_completion(self)
    }
    fn has_completion(&self) -> bool {
        Nic::has_completion(self)
    }
    fn memory(&self) -> &[u8] {
        Nic::memory(self)
    }
    fn memory_mut(&mut self) -> &mut [u8] {
        Nic::memory_mut(self)
    }
    fn stats(&self) -> NicStats {
        Nic::stats(self)
    }
}

/// A copy on the GPU-to-GPU link, due at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct NvCopy {
    due: Nanos,
    seq: u64,
    src: usize,
    dst: usize,
    channel: usize,
    wr_id: u64,
    local_offset: usize,
    remote_offset: u64,
    len: usize,
    imm: u32,
}

/// One workload's place on this host.
#[derive(Debug)]
struct PartSlot {
    start: Start,
    /// Per local NIC: whether its engine of the workload started.
    started: Vec<bool>,
    /// Per local NIC: (region start, region bytes).
    region: Vec<(usize, usize)>,
}

/// A WRITE's tag names its workload in the top 16 bits.
const PART_SHIFT: u32 = 48;

/// The host over any [`Port`]: everything but the choice of NIC.
#[derive(Debug)]
pub(crate) struct HostCore<P> {
    host: usize,
    plan: JobPlan,
    /// Rank of each local NIC, NIC 0 first.
    ranks: Vec<usize>,
    ports: Vec<P>,
    /// `engines[i][p]`: local NIC i's engine of workload p.
    engines: Vec<Vec<RankEngine>>,
    /// Per workload: when it starts after the job, and per local NIC where
    /// its region starts and how long it is.
    parts: Vec<PartSlot>,
    /// Deliveries to a workload not started yet, replayed when it starts.
    early: Vec<(usize, usize, Delivery)>,
    /// When each (src, dst) NVLink is free again, `src * nics + dst`.
    nv_free: Vec<Nanos>,
    nv_queue: BinaryHeap<Reverse<NvCopy>>,
    nv_seq: u64,
    start_ns: Nanos,
    /// Posts the NIC refused (a plan/NIC mismatch); the rank cannot finish.
    post_errors: u64,
    /// Completions that named no connection of the plan.
    stray_completions: u64,
    posts: Vec<Post>,
    /// The earliest time the engines, the GPU-to-GPU link or a workload
    /// not started yet have something to do (`Nanos::MAX`: nothing).
    /// Only a pump changes them, so it is worked out at the end of each;
    /// until then a pump finding no NIC completion has nothing to do
    /// and is skipped (a frame costs up to three pumps otherwise, each a
    /// scan of every engine and NIC). 0: pump regardless.
    inner_next: Nanos,
}

impl<P: Port> HostCore<P> {
    pub(crate) fn new(
        plan: &JobPlan,
        host: usize,
        nics: Vec<NicConfig>,
        make: &mut dyn FnMut(NicConfig) -> P,
    ) -> Result<HostCore<P>, String> {
        let mut mine: Vec<(usize, usize)> = plan
            .ranks()
            .iter()
            .enumerate()
            .filter(|(_, a)| a.host == host)
            .map(|(r, a)| (a.nic, r))
            .collect();
        mine.sort_unstable();
        if mine.is_empty() {
            return Err(format!("host {host} holds no rank of the job"));
        }
        if mine.len() != nics.len() || mine.iter().enumerate().any(|(i, m)| m.0 != i) {
            return Err(format!(
                "host {host} has ranks on NICs {:?} in the plan, but {} NIC configurations were given (NIC 0 first)",
                mine.iter().map(|m| m.0).collect::<Vec<_>>(),
                nics.len()
            ));
        }
        let ranks: Vec<usize> = mine.iter().map(|m| m.1).collect();
        let mut ports = Vec::with_capacity(nics.len());
        for (i, mut cfg) in nics.into_iter().enumerate() {
            let r = ranks[i];
            let a = &plan.ranks()[r];
            if cfg.ip != a.ip || cfg.mac != a.mac {
                return Err(format!(
                    "NIC {i} of host {host} is {} {}, but the plan has rank {r} ({}) at {} {}",
                    cfg.ip, cfg.mac, a.name, a.ip, a.mac
                ));
            }
            cfg.memory_bytes = plan.memory_bytes(r);
            let mut port = make(cfg);
            for qp in plan.qp_configs(r) {
                port.connect(qp).map_err(|e| {
                    format!(
                        "rank {r} ({}): connecting QP {:#x}: {e:?}",
                        a.name, qp.local_qpn
                    )
                })?;
            }
            ports.push(port);
        }
        let n = ports.len();
        let mut engines: Vec<Vec<RankEngine>> = ranks.iter().map(|_| Vec::new()).collect();
        let mut parts = Vec::with_capacity(plan.part_count());
        for (p, part) in plan.parts().iter().enumerate() {
            let mut region = Vec::with_capacity(ranks.len());
            for (i, &r) in ranks.iter().enumerate() {
                let (sub, local) = part.plan_of(r).ok_or_else(|| {
                    format!("rank {r} has no place in workload {} of the plan", p + 1)
                })?;
                engines[i].push(RankEngine::new(sub, local));
                region.push((part.base(r), sub.memory_bytes(local)));
            }
            parts.push(PartSlot {
                start: part.start,
                started: vec![false; ranks.len()],
                region,
            });
        }
        Ok(HostCore {
            host,
            plan: plan.clone(),
            engines,
            parts,
            early: Vec::new(),
            ranks,
            ports,
            nv_free: vec![0; n * n],
            nv_queue: BinaryHeap::new(),
            nv_seq: 0,
            start_ns: 0,
            post_errors: 0,
            stray_completions: 0,
            posts: Vec::new(),
            // Every pump runs until the first one works it out.
            inner_next: 0,
        })
    }

    fn local(&self, rank: usize) -> Option<usize> {
        self.ranks.iter().position(|&r| r == rank)
    }

    pub(crate) fn start(&mut self, now: Nanos) {
        self.start_ns = now;
        self.pump(now);
    }

    /// Local NIC i's memory region of workload p (empty when data-free).
    fn region_mut<'a>(ports: &'a mut [P], parts: &[PartSlot], i: usize, p: usize) -> &'a mut [u8] {
        let (b, l) = parts[p].region[i];
        ports[i].memory_mut().get_mut(b..b + l).unwrap_or(&mut [])
    }

    /// When local NIC i's engine of workload p is due to start: at its
    /// time, or once the workload it follows finished on that NIC and the
    /// gap passed (None: not known yet).
    fn due(&self, p: usize, i: usize) -> Option<Nanos> {
        match self.parts[p].start {
            Start::At(t) => Some(self.start_ns.saturating_add(t)),
            Start::After { part, gap_ns } => self
                .engines
                .get(i)?
                .get(part)?
                .end_ns()
                .map(|e| e.saturating_add(gap_ns)),
        }
    }

    /// Whether an engine not started yet is due by `now`.
    fn any_due(&self, now: Nanos) -> bool {
        (0..self.parts.len()).any(|p| {
            (0..self.engines.len())
                .any(|i| !self.parts[p].started[i] && self.due(p, i).is_some_and(|d| d <= now))
        })
    }

    /// Starts the workloads due by `now`, replaying deliveries that came
    /// before.
    fn start_due(&mut self, now: Nanos, posts: &mut Vec<Post>) {
        for p in 0..self.parts.len() {
            let mut any = false;
            for i in 0..self.engines.len() {
                if self.parts[p].started[i] {
                    continue;
                }
                let Some(due) = self.due(p, i).filter(|&d| d <= now) else {
                    continue;
                };
                self.parts[p].started[i] = true;
                any = true;
                let mem = Self::region_mut(&mut self.ports, &self.parts, i, p);
                self.engines[i][p].start(due, mem, posts);
                self.dispatch(i, p, due, posts);
            }
            if !any {
                continue;
            }
            let started = &self.parts[p].started;
            let early: Vec<_> = self
                .early
                .iter()
                .filter(|e| e.1 == p && started[e.0])
                .copied()
                .collect();
            self.early.retain(|e| e.1 != p || !started[e.0]);
            for (i, p, d) in early {
                let mem = Self::region_mut(&mut self.ports, &self.parts, i, p);
                self.engines[i][p].on_delivery(now, mem, d, posts);
                self.dispatch(i, p, now, posts);
            }
        }
    }

    /// The workload whose region of local NIC i holds `offset`, and the
    /// offset within it.
    fn part_at(&self, i: usize, offset: u64) -> Option<(usize, u64)> {
        self.parts.iter().enumerate().find_map(|(p, s)| {
            let (b, l) = s.region[i];
            let o = offset.checked_sub(b as u64)?;
            (o < l as u64).then_some((p, o))
        })
    }

    /// Hands a delivery to local NIC i's engine of the workload it landed
    /// in (held until that workload starts).
    fn deliver(&mut self, i: usize, now: Nanos, mut d: Delivery, posts: &mut Vec<Post>) {
        let Some((p, o)) = self.part_at(i, d.offset) else {
            // Lands in no workload's region (a zero-length WRITE at the
            // end is the only way): the first workload judges it.
            let mem = Self::region_mut(&mut self.ports, &self.parts, i, 0);
            self.engines[i][0].on_delivery(now, mem, d, posts);
            self.dispatch(i, 0, now, posts);
            return;
        };
        d.offset = o;
        // The sender as the workload's plan numbers it (no rank, and so
        // refused, when it is not in this rank's group).
        d.peer = self
            .plan
            .part(p)
            .and_then(|x| x.to_group(self.ranks[i], d.peer))
            .unwrap_or(usize::MAX);
        if !self.parts[p].started[i] {
            self.early.push((i, p, d));
            return;
        }
        let mem = Self::region_mut(&mut self.ports, &self.parts, i, p);
        self.engines[i][p].on_delivery(now, mem, d, posts);
        self.dispatch(i, p, now, posts);
    }

    /// Tells local NIC i's engine that the WRITE tagged `wr_id` (workload
    /// in the top bits) was acknowledged.
    fn sent(&mut self, i: usize, now: Nanos, wr_id: u64) {
        let p = (wr_id >> PART_SHIFT) as usize;
        let id = wr_id & ((1 << PART_SHIFT) - 1);
        if p >= self.parts.len() {
            self.stray_completions += 1;
            return;
        }
        let (b, l) = self.parts[p].region[i];
        let mem = self.ports[i].memory().get(b..b + l).unwrap_or(&[]);
        self.engines[i][p].on_sent(now, mem, id);
    }

    /// Hands local NIC `i`'s posts for workload `part` to its NIC or to
    /// NVLink, placing them in the workload's regions.
    fn dispatch(&mut self, i: usize, part: usize, now: Nanos, posts: &mut Vec<Post>) {
        let rank = self.ranks[i];
        let Some(pr) = self.plan.part(part) else {
            self.post_errors += posts.len() as u64;
            posts.clear();
            return;
        };
        for mut p in posts.drain(..) {
            // The peer as the job numbers it.
            let Some(peer) = pr.to_job(rank, p.peer) else {
                self.post_errors += 1;
                continue;
            };
            p.peer = peer;
            p.wr_id |= (part as u64) << PART_SHIFT;
            p.local_offset += self.parts[part].region[i].0;
            p.remote_offset += pr.base(peer) as u64;
            let Some(conn) = self.plan.connection(rank, p.peer, p.channel).copied() else {
                self.post_errors += 1;
                continue;
            };
            match conn.via {
                Via::Network => {
                    let wr = WriteRequest {
                        wr_id: p.wr_id,
                        local_offset: p.local_offset,
                        remote_offset: p.remote_offset,
                        len: p.len,
                        imm: Some(p.imm),
                    };
                    if self.ports[i].post_write(conn.src_qpn, wr).is_err() {
                        self.post_errors += 1;
                    }
                }
                Via::NvLink => {
                    let Some(j) = self.local(p.peer) else {
                        self.post_errors += 1;
                        continue;
                    };
                    let n = self.ports.len();
                    let bps = u128::from(self.plan.options().nvlink_bps.max(1));
                    let ser = (p.len as u128 * 8 * 1_000_000_000).div_ceil(bps) as Nanos;
                    let free = &mut self.nv_free[i * n + j];
                    let begin = (*free).max(now);
                    *free = begin + ser;
                    self.nv_seq += 1;
                    self.nv_queue.push(Reverse(NvCopy {
                        due: begin + ser + NVLINK_LATENCY_NS,
                        seq: self.nv_seq,
                        src: i,
                        dst: j,
                        channel: p.channel,
                        wr_id: p.wr_id,
                        local_offset: p.local_offset,
                        remote_offset: p.remote_offset,
                        len: p.len,
                        imm: p.imm,
                    }));
                }
            }
        }
    }

    /// [`pump`](Self::pump) unless it would do nothing: nothing is due by
    /// `now` and NIC `touched` (the only one used since the last pump,
    /// which left every NIC without completions) has no completion.
    fn pump_after(&mut self, now: Nanos, touched: Option<usize>) {
        let pending = touched
            .and_then(|i| self.ports.get(i))
            .is_some_and(P::has_completion);
        if now >= self.inner_next || pending {
            self.pump(now);
        }
    }

    /// Moves the job on to `now`: NVLink copies due and NIC completions.
    fn pump(&mut self, now: Nanos) {
        let mut posts = std::mem::take(&mut self.posts);
        loop {
            self.pump_once(now, &mut posts);
            // A workload that follows one that just finished may be due
            // at once (no gap).
            if !self.any_due(now) {
                break;
            }
        }
        self.posts = posts;
        self.inner_next = self.inner_wakeup().unwrap_or(Nanos::MAX);
    }

    fn pump_once(&mut self, now: Nanos, posts: &mut Vec<Post>) {
        self.start_due(now, posts);
        for i in 0..self.engines.len() {
            for p in 0..self.parts.len() {
                if self.engines[i][p].next_wakeup().is_some_and(|t| t <= now) {
                    self.engines[i][p].on_time(now, posts);
                    self.dispatch(i, p, now, posts);
                }
            }
        }
        loop {
            let mut progressed = false;
            while let Some(Reverse(c)) = self.nv_queue.peek().copied() {
                if c.due > now {
                    break;
                }
                self.nv_queue.pop();
                progressed = true;
                self.nv_deliver(c, posts);
            }
            for i in 0..self.ports.len() {
                while let Some(comp) = self.ports[i].poll_completion() {
                    progressed = true;
                    self.complete(i, now, comp, posts);
                }
            }
            if !progressed {
                break;
            }
        }
    }

    fn nv_deliver(&mut self, c: NvCopy, posts: &mut Vec<Post>) {
        let (src, dst) = (c.src, c.dst);
        let from = c.local_offset..c.local_offset + c.len;
        let to = c.remote_offset as usize..c.remote_offset as usize + c.len;
        let ok = {
            let (a, b) = if src < dst {
                let (l, r) = self.ports.split_at_mut(dst);
                (&l[src], &mut r[0])
            } else {
                let (l, r) = self.ports.split_at_mut(src);
                (&r[0], &mut l[dst])
            };
            if self.plan.options().carry_data {
                match (a.memory().get(from), b.memory_mut().get_mut(to)) {
                    (Some(s), Some(d)) => {
                        d.copy_from_slice(s);
                        true
                    }
                    _ => false,
                }
            } else {
                // Data-free: no memory, the same range checks against the
                // plan's sizes.
                from.end <= self.plan.memory_bytes(self.ranks[src])
                    && to.end <= self.plan.memory_bytes(self.ranks[dst])
            }
        };
        if !ok {
            self.post_errors += 1;
            return;
        }
        let d = Delivery {
            peer: self.ranks[src],
            channel: c.channel,
            imm: c.imm,
            offset: c.remote_offset,
            len: c.len,
        };
        self.deliver(dst, c.due, d, posts);
        self.sent(src, c.due, c.wr_id);
    }

    fn complete(&mut self, i: usize, now: Nanos, comp: Completion, posts: &mut Vec<Post>) {
        match comp {
            Completion::Sent { qpn, wr_id } => match decode_qpn(qpn) {
                Some((_, Role::Sender, _)) => {
                    self.sent(i, now, wr_id);
                }
                _ => self.stray_completions += 1,
            },
            Completion::Received {
                qpn,
                imm,
                offset,
                len,
            } => match decode_qpn(qpn) {
                Some((peer, Role::Receiver, channel)) => {
                    let d = Delivery {
                        peer,
                        channel,
                        imm,
                        offset,
                        len,
                    };
                    self.deliver(i, now, d, posts);
                }
                _ => self.stray_completions += 1,
            },
        }
    }

    pub(crate) fn receive(
        &mut self,
        nic: usize,
        now: Nanos,
        frame: &[u8],
    ) -> Option<(Ipv4Addr, u32)> {
        let seen = self.ports.get_mut(nic).and_then(|p| p.receive(now, frame));
        self.pump_after(now, Some(nic));
        seen
    }

    pub(crate) fn transmit(&mut self, nic: usize, now: Nanos, buf: &mut [u8]) -> Option<usize> {
        self.pump_after(now, None);
        let n = self.ports.get_mut(nic)?.transmit(now, buf);
        // Transmitting may have run timers that completed something.
        self.pump_after(now, Some(nic));
        n
    }

    pub(crate) fn next_wakeup(&self) -> Option<Nanos> {
        // Before the first pump the engines' times are not worked out.
        let inner = if self.inner_next == 0 {
            self.inner_wakeup()
        } else {
            (self.inner_next != Nanos::MAX).then_some(self.inner_next)
        };
        self.ports
            .iter()
            .filter_map(Port::next_wakeup)
            .chain(inner)
            .min()
    }

    /// The earliest time the engines, the GPU-to-GPU link or a workload
    /// not started yet have something to do.
    fn inner_wakeup(&self) -> Option<Nanos> {
        let nv = self.nv_queue.peek().map(|Reverse(c)| c.due);
        nv.into_iter()
            .chain(
                self.engines
                    .iter()
                    .flatten()
                    .filter_map(RankEngine::next_wakeup),
            )
            .chain((0..self.parts.len()).flat_map(|p| {
                (0..self.engines.len())
                    .filter(move |&i| !self.parts[p].started[i])
                    .filter_map(move |i| self.due(p, i))
            }))
            .min()
    }

    pub(crate) fn done(&self) -> bool {
        self.engines.iter().flatten().all(RankEngine::done)
    }

    pub(crate) fn outcome(&self) -> HostOutcome {
        let ranks: Vec<RankOutcome> = (0..self.parts.len())
            .flat_map(|p| {
                self.engines
                    .iter()
                    .zip(&self.ranks)
                    .map(move |(e, &rank)| RankOutcome {
                        workload: p,
                        rank,
                        ..e[p].outcome()
                    })
            })
            .collect();
        HostOutcome {
            host: self.host,
            start_ns: self.start_ns,
            ranks,
            flows: (0..self.parts.len())
                .flat_map(|p| {
                    self.engines.iter().flat_map(move |e| {
                        e[p].flow_outcomes()
                            .into_iter()
                            .map(move |f| FlowOutcome { workload: p, ..f })
                    })
                })
                .collect(),
            nics: self.ports.iter().map(Port::stats).collect(),
        }
    }

    /// Posts refused by a NIC or by the plan, and completions on no
    /// connection of the plan: both mean the host and its NICs disagree.
    pub(crate) fn errors(&self) -> (u64, u64) {
        (self.post_errors, self.stray_completions)
    }

    #[cfg(test)]
    pub(crate) fn ports_mut(&mut self) -> &mut [P] {
        // What the caller does to the NICs is not known: pump next time.
        self.inner_next = 0;
        &mut self.ports
    }
}

/// A host running its ranks' part of a job (see the module doc).
#[derive(Debug)]
pub struct Host {
    core: HostCore<Nic>,
}

impl Host {
    /// Host `host` of `plan`, with one NIC per config (NIC n of the host;
    /// `memory_bytes` is set from the plan; the NICs carry data as the
    /// plan's [`JobOptions::carry_data`](crate::plan::JobOptions::carry_data)
    /// says).
    ///
    /// # Errors
    ///
    /// When the NICs given do not match the plan's ranks on this host.
    pub fn new(plan: &JobPlan, host: usize, nics: Vec<NicConfig>) -> Result<Host, String> {
        let carry = plan.options().carry_data;
        Ok(Host {
            core: HostCore::new(plan, host, nics, &mut |c| Nic::with_data(c, carry))?,
        })
    }

    /// Starts the job at `now` (fills buffers with the known pattern,
    /// posts the first writes).
    pub fn start(&mut self, now: Nanos) {
        self.core.start(now)
    }

    /// A frame the switch sent NIC `nic`.
    pub fn receive(&mut self, nic: usize, now: Nanos, frame: &[u8]) {
        self.core.receive(nic, now, frame);
    }

    /// As [`receive`](Self::receive), returning a RoCEv2 WRITE's IPv4
    /// source and the bytes after its BTH (see `Nic::receive_noting`): a
    /// simulator's delivery record from the NIC's own parse.
    pub fn receive_noting(
        &mut self,
        nic: usize,
        now: Nanos,
        frame: &[u8],
    ) -> Option<(Ipv4Addr, u32)> {
        self.core.receive(nic, now, frame)
    }

    /// NIC `nic`'s next frame, if one may start at `now` (see
    /// `Nic::transmit`); also moves the job on (completions, GPU-to-GPU
    /// copies due by `now`).
    pub fn transmit(&mut self, nic: usize, now: Nanos, buf: &mut [u8]) -> Option<usize> {
        self.core.transmit(nic, now, buf)
    }

    /// The earliest time any NIC or the GPU-to-GPU link has something to do.
    pub fn next_wakeup(&self) -> Option<Nanos> {
        self.core.next_wakeup()
    }

    /// Every rank finished and every flow it sent was acknowledged.
    pub fn done(&self) -> bool {
        self.core.done()
    }

    /// What it did so far.
    pub fn outcome(&self) -> HostOutcome {
        self.core.outcome()
    }

    /// Posts its NICs refused and completions that named no connection of
    /// the plan (both 0 unless the host and its NICs disagree).
    pub fn errors(&self) -> (u64, u64) {
        self.core.errors()
    }

    /// Its NIC `nic` (NIC n of the host), for inspection.
    pub fn nic(&self, nic: usize) -> Option<&Nic> {
        self.core.ports.get(nic)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::net::Ipv4Addr;

    use super::*;
    use crate::nic::CongestionControl;
    use crate::plan::{JobOptions, RankAddr, Workload};
    use crate::MacAddr;

    /// A NIC stand-in: memory, the QPs connected, WRITEs posted (taken by
    /// the test's network) and completions (pushed by it).
    #[derive(Debug)]
    struct FakePort {
        mem: Vec<u8>,
        qps: Vec<QpConfig>,
        posted: VecDeque<(u32, WriteRequest)>,
        completions: VecDeque<Completion>,
    }

    impl Port for FakePort {
        fn connect(&mut self, qp: QpConfig) -> Result<(), NicError> {
            if self.qps.iter().any(|q| q.local_qpn == qp.local_qpn) {
                return Err(NicError::DuplicateQp(qp.local_qpn));
            }
            self.qps.push(qp);
            Ok(())
        }
        fn post_write(&mut self, qpn: u32, wr: WriteRequest) -> Result<(), NicError> {
            if !self.qps.iter().any(|q| q.local_qpn == qpn) {
                return Err(NicError::UnknownQp(qpn));
            }
            if wr.local_offset + wr.len > self.mem.len() {
                return Err(NicError::OutOfMemoryRange);
            }
            self.posted.push_back((qpn, wr));
            Ok(())
        }
        fn receive(&mut self, _now: Nanos, _frame: &[u8]) -> Option<(Ipv4Addr, u32)> {
            None
        }
        fn transmit(&mut self, _now: Nanos, _buf: &mut [u8]) -> Option<usize> {
            None
        }
        fn next_wakeup(&self) -> Option<Nanos> {
            None
        }
        fn poll_completion(&mut self) -> Option<Completion> {
            self.completions.pop_front()
        }
        fn has_completion(&self) -> bool {
            !self.completions.is_empty()
        }
        fn memory(&self) -> &[u8] {
            &self.mem
        }
        fn memory_mut(&mut self) -> &mut [u8] {
            &mut self.mem
        }
        fn stats(&self) -> NicStats {
            NicStats::default()
        }
    }

    fn addr(h: usize, n: usize) -> RankAddr {
        RankAddr {
            host: h,
            nic: n,
            name: format!("h{h}.eth{n}"),
            ip: Ipv4Addr::new(10, n as u8, h as u8, 2),
            mac: MacAddr([2, 0, 0, 0, h as u8, n as u8]),
        }
    }

    fn cfg(a: &RankAddr) -> NicConfig {
        NicConfig {
            mac: a.mac,
            ip: a.ip,
            gateway_mac: MacAddr([2, 0, 0, 0, 0xff, 0xff]),
            line_rate_bps: 100_000_000_000,
            path_mtu: 4096,
            dscp: 24,
            priority: 3,
            cc: CongestionControl::None,
            ack_every: 16,
            rto_ns: 1_000_000,
            memory_bytes: 0,
            answer_arp: true,
            catch_up_ns: 0,
        }
    }

    fn hosts(plan: &JobPlan, h: usize) -> Vec<HostCore<FakePort>> {
        (0..h)
            .map(|host| {
                let cfgs = plan
                    .ranks()
                    .iter()
                    .filter(|a| a.host == host)
                    .map(cfg)
                    .collect();
                HostCore::new(plan, host, cfgs, &mut |c: NicConfig| FakePort {
                    mem: vec![0; c.memory_bytes],
                    qps: Vec::new(),
                    posted: VecDeque::new(),
                    completions: VecDeque::new(),
                })
                .unwrap()
            })
            .collect()
    }

    /// Runs the hosts with a fake network that lands every WRITE
    /// `net_ns` after it was posted; returns the time the last host
    /// finished.
    fn run(plan: &JobPlan, hs: &mut [HostCore<FakePort>], net_ns: Nanos) -> Nanos {
        for h in hs.iter_mut() {
            h.start(0);
        }
        let mut inflight: Vec<(Nanos, usize, usize, u32, WriteRequest)> = Vec::new();
        let mut now = 0;
        let mut buf = vec![0u8; 9216];
        for _ in 0..1_000_000 {
            for (hi, h) in hs.iter_mut().enumerate() {
                for (pi, p) in h.ports_mut().iter_mut().enumerate() {
                    while let Some((qpn, wr)) = p.posted.pop_front() {
                        inflight.push((now + net_ns, hi, pi, qpn, wr));
                    }
                }
            }
            if hs.iter().all(|h| h.done()) {
                return now;
            }
            let next = inflight
                .iter()
                .map(|f| f.0)
                .chain(hs.iter().filter_map(|h| h.next_wakeup()))
                .min()
                .expect("stuck: nothing to do and not done");
            now = next.max(now);
            let (due, rest): (Vec<_>, Vec<_>) = inflight.drain(..).partition(|f| f.0 <= now);
            inflight = rest;
            for (_, hi, pi, qpn, wr) in due {
                let Some((peer, Role::Sender, ch)) = decode_qpn(qpn) else {
                    panic!("posted on a non-sender QP {qpn:#x}");
                };
                let conn = *plan.connection(hs[hi].ranks[pi], peer, ch).unwrap();
                let a = &plan.ranks()[peer];
                let data = hs[hi].ports[pi].mem[wr.local_offset..wr.local_offset + wr.len].to_vec();
                let dst = &mut hs[a.host].ports[a.nic];
                let at = wr.remote_offset as usize;
                dst.mem[at..at + wr.len].copy_from_slice(&data);
                dst.completions.push_back(Completion::Received {
                    qpn: conn.dst_qpn,
                    imm: wr.imm.unwrap(),
                    offset: wr.remote_offset,
                    len: wr.len,
                });
                hs[hi].ports[pi].completions.push_back(Completion::Sent {
                    qpn,
                    wr_id: wr.wr_id,
                });
            }
            for h in hs.iter_mut() {
                for nic in 0..h.ports.len() {
                    assert_eq!(h.transmit(nic, now, &mut buf), None);
                }
            }
        }
        panic!("did not finish");
    }

    fn plan(w: Workload, h: usize, n: usize, opts: JobOptions) -> JobPlan {
        let ranks = (0..h)
            .flat_map(|h| (0..n).map(move |n| addr(h, n)))
            .collect();
        JobPlan::new(w, ranks, opts).unwrap()
    }

    #[test]
    fn coll_host_nvlink_only_allreduce_takes_the_modelled_time() {
        let opts = JobOptions::default();
        let bytes = 4u64 << 20;
        let p = plan(Workload::AllReduce(bytes), 1, 4, opts.clone());
        let mut hs = hosts(&p, 1);
        let end = run(&p, &mut hs, 0);
        let o = hs[0].outcome();
        assert!(
            o.ranks.iter().all(|r| r.end_ns.is_some() && r.wrong == 0),
            "{o:?}"
        );
        assert_eq!(hs[0].errors(), (0, 0));
        // Each NVLink carries 2(n-1)/n of the data; chunks pipeline, so the
        // time is that serialisation plus a few latencies.
        let wire = (bytes as f64 * 1.5 * 8.0 / opts.nvlink_bps as f64 * 1e9) as u64;
        assert!(end >= wire, "{end} < {wire}");
        assert!(end < wire * 2 + 20 * NVLINK_LATENCY_NS, "{end} vs {wire}");
    }

    #[test]
    fn coll_host_two_hosts_allreduce_over_queue_pairs() {
        let p = plan(
            Workload::AllReduce(3 * 1000 * 4 + 8),
            2,
            2,
            JobOptions {
                channels: 3,
                chunk_bytes: 1000,
                ..JobOptions::default()
            },
        );
        let mut hs = hosts(&p, 2);
        // Ring h0n0 -> h0n1 -> h1n1 -> h1n0 -> h0n0: each NIC sends or
        // receives over the network on 3 channels.
        for h in &hs {
            for port in &h.ports {
                assert_eq!(port.qps.len(), 3);
                assert_eq!(port.mem.len(), p.memory_bytes(0));
            }
        }
        run(&p, &mut hs, 2_000);
        for h in &hs {
            let o = h.outcome();
            assert_eq!(o.ranks.len(), 2);
            assert!(
                o.ranks.iter().all(|r| r.end_ns.is_some() && r.wrong == 0),
                "{o:?}"
            );
            assert_eq!(h.errors(), (0, 0));
        }
    }

    #[test]
    fn coll_host_incast_flows_report_fct() {
        let p = plan(
            Workload::Incast {
                bytes: 100_000,
                srcs: vec![0, 1, 2],
                dst: 3,
            },
            2,
            2,
            JobOptions::default(),
        );
        let mut hs = hosts(&p, 2);
        run(&p, &mut hs, 5_000);
        let flows: Vec<FlowOutcome> = hs.iter().flat_map(|h| h.outcome().flows).collect();
        assert_eq!(flows.len(), 3);
        // Rank 2 is on host 1 with the receiver: NVLink; 0 and 1 cross.
        for f in &flows {
            let fct = f.end_ns.unwrap() - f.start_ns;
            if f.src == 2 {
                assert!(fct < 5_000, "{f:?}");
            } else {
                assert_eq!(fct, 5_000, "{f:?}");
            }
        }
        assert!(hs
            .iter()
            .all(|h| h.outcome().ranks.iter().all(|r| r.wrong == 0)));
    }

    #[test]
    fn coll_host_refuses_nics_that_do_not_match_the_plan() {
        let p = plan(Workload::AllReduce(4096), 2, 2, JobOptions::default());
        let mk = &mut |c: NicConfig| FakePort {
            mem: vec![0; c.memory_bytes],
            qps: Vec::new(),
            posted: VecDeque::new(),
            completions: VecDeque::new(),
        };
        let one = vec![cfg(&addr(0, 0))];
        assert!(HostCore::new(&p, 0, one, mk).unwrap_err().contains("NIC"));
        let swapped = vec![cfg(&addr(0, 1)), cfg(&addr(0, 0))];
        assert!(HostCore::new(&p, 0, swapped, mk).is_err());
        assert!(HostCore::new(&p, 5, vec![], mk).is_err());
    }
}
