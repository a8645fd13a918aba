//! The schedules of a job as a transport-free engine, one per rank: it
//! fills the rank's buffer with a known pattern, says which WRITEs to post
//! ([`Post`]), reacts to WRITEs that landed ([`Delivery`]) and to WRITEs the
//! peer acknowledged ([`RankEngine::on_sent`]), and checks the result
//! element by element. The host turns posts into NIC WRITEs or NVLink
//! copies; a test turns them into instant copies.
//!
//! Ring collectives (AllReduce = reduce-scatter then all-gather, 2(n−1)
//! steps; AllGather and ReduceScatter, n−1 steps) split the data over
//! `channels` independent rings, each with its own connections, and each
//! step's share into `chunk_bytes` WRITEs whose immediate data names
//! `step << 22 | chunk`. Receiving (and reducing) chunk c of step s lets
//! the rank send chunk c of step s+1 at once — NCCL's pipelining — since
//! step s+1 forwards exactly the segment step s delivered.
//!
//! Segments: the data's float32 elements are split into n near-equal
//! regions, region k belonging to rank k (ReduceScatter's output, AllGather's
//! input); the ring position p reduces region `ring[(p − s − 2) mod n]` in
//! reduce-scatter step s, so it ends holding its own rank's region, and
//! sends region `ring[(p − s) mod n]` in all-gather step s. Each region is
//! split over the channels, each channel's share into chunks.
//!
//! AllToAll posts every block at once (block j of rank r's data goes to
//! block r of rank j's receive buffer); SendRecv sends rank r's data to rank
//! r+1's receive buffer; Pipeline sends it to rank r+1's first receive slot
//! and rank r−1's second (no wrap); flows (incast, permutation) post one WRITE of the
//! whole size whose bytes follow [`flow_byte`].
//!
//! Data is real float32, little-endian; rank q's input element i is
//! [`pattern`]`(q, i)`, a small integer, so every sum is exact.

use serde::{Deserialize, Serialize};

use crate::plan::{split, JobPlan, Layout, Workload, IMM_CHUNK_BITS};
use crate::Nanos;

/// What one rank did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankOutcome {
    /// Rank number.
    pub rank: usize,
    /// When its part of the collective finished (None: it did not).
    pub end_ns: Option<Nanos>,
    /// Elements of its result that differ from the expected values (0 when
    /// not `checked`).
    pub wrong: u64,
    /// Whether its data was checked: false in a data-free job
    /// ([`JobOptions::carry_data`](crate::plan::JobOptions::carry_data)),
    /// whose buffers hold nothing to check. Outcomes without it were
    /// checked.
    #[serde(default = "checked_default")]
    pub checked: bool,
    /// Which of the job's workloads this is (0 for the first or only one;
    /// see [`JobPlan::with_workloads`]).
    #[serde(default)]
    pub workload: usize,
    /// When its part of the workload started (None: it did not); what a
    /// part that starts after another is timed from.
    #[serde(default)]
    pub start_ns: Option<Nanos>,
}

fn checked_default() -> bool {
    true
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
    /// Which of the job's workloads it belongs to (0 for the first or only
    /// one).
    #[serde(default)]
    pub workload: usize,
}

/// A WRITE the rank wants posted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Post {
    /// Receiving rank.
    pub peer: usize,
    /// Channel (its connection to `peer`).
    pub channel: usize,
    /// Tag to hand back to [`RankEngine::on_sent`].
    pub wr_id: u64,
    /// Where the data is in this rank's memory.
    pub local_offset: usize,
    /// Where it lands in the peer's memory.
    pub remote_offset: u64,
    /// Bytes.
    pub len: usize,
    /// Immediate data.
    pub imm: u32,
}

/// A WRITE with immediate that landed in this rank's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Delivery {
    /// Sending rank.
    pub peer: usize,
    /// Channel it came on.
    pub channel: usize,
    /// Its immediate data.
    pub imm: u32,
    /// Where it landed.
    pub offset: u64,
    /// Bytes.
    pub len: usize,
}

/// Rank `q`'s input element `i`: an integer in 0..61, so sums over up to
/// 2^18 ranks are exact in float32; scrambled in `i` so that a misplaced
/// block is seen.
pub fn pattern(q: usize, i: usize) -> f32 {
    let h = (i as u64).wrapping_mul(2_654_435_761) >> 7;
    ((h + q as u64 * 37) % 61) as f32
}

/// Byte `i` of every flow's data: never zero (landing memory starts
/// zeroed), scrambled in `i`.
pub fn flow_byte(i: usize) -> u8 {
    (((i as u64).wrapping_mul(0x9e37_79b1) >> 16) as u8) | 1
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    AllReduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    SendRecv,
    Pipeline,
    Flows,
}

/// One flow this rank sends.
#[derive(Debug, Clone)]
struct SentFlow {
    index: usize,
    dst: usize,
    bytes: u64,
    landing: u64,
    /// Arrival after the rank's start.
    at: Nanos,
    start: Option<Nanos>,
    end: Option<Nanos>,
}

/// One flow this rank receives.
#[derive(Debug, Clone, Copy)]
struct RecvFlow {
    index: usize,
    src: usize,
    bytes: u64,
}

/// One rank's part of a job (see the module doc).
#[derive(Debug, Clone)]
pub struct RankEngine {
    rank: usize,
    n: usize,
    pos: usize,
    kind: Kind,
    ring: Vec<usize>,
    layout: Layout,
    channels: usize,
    chunk_elems: usize,
    elems: usize,
    steps: usize,
    expected_recv: u64,
    received: u64,
    expected_sent: u64,
    sent: u64,
    next_wr: u64,
    /// Sorted by arrival (then index); `flows_posted` of them are posted.
    flows_out: Vec<SentFlow>,
    flows_posted: usize,
    /// Sorted by index.
    flows_in: Vec<RecvFlow>,
    flow_channel: usize,
    start_ns: Option<Nanos>,
    end_ns: Option<Nanos>,
    wrong: u64,
    protocol_errors: u64,
    /// Whether buffers hold real data (fill, reduce, check).
    carry_data: bool,
}

fn read_f32(mem: &[u8], off: usize) -> f32 {
    let mut b = [0u8; 4];
    if let Some(s) = mem.get(off..off + 4) {
        b.copy_from_slice(s);
    }
    f32::from_le_bytes(b)
}

fn write_f32(mem: &mut [u8], off: usize, v: f32) {
    if let Some(s) = mem.get_mut(off..off + 4) {
        s.copy_from_slice(&v.to_le_bytes());
    }
}

impl RankEngine {
    /// Rank `rank`'s part of `plan`.
    pub fn new(plan: &JobPlan, rank: usize) -> RankEngine {
        let n = plan.ranks().len();
        let opts = plan.options();
        let bytes = plan.workload().bytes() as usize;
        let kind = match plan.workload() {
            Workload::AllReduce(_) => Kind::AllReduce,
            Workload::AllGather(_) => Kind::AllGather,
            Workload::ReduceScatter(_) => Kind::ReduceScatter,
            Workload::AllToAll(_) => Kind::AllToAll,
            Workload::SendRecv(_) => Kind::SendRecv,
            Workload::Pipeline(_) => Kind::Pipeline,
            // A training job's engines are its parts' (JobPlan::parts); as
            // a whole it is a set of no flows, done at once.
            Workload::Incast { .. }
            | Workload::Permutation { .. }
            | Workload::Flows(_)
            | Workload::Training(_) => Kind::Flows,
        };
        let steps = match kind {
            Kind::AllReduce => 2 * (n - 1),
            Kind::AllGather | Kind::ReduceScatter => n - 1,
            _ => 1,
        };
        let specs = plan.flow_specs();
        let mut flows_out: Vec<SentFlow> = specs
            .iter()
            .enumerate()
            .filter(|(_, f)| f.src == rank)
            .map(|(index, f)| SentFlow {
                index,
                dst: f.dst,
                bytes: f.bytes,
                landing: plan.layout(f.dst).recv as u64,
                at: f.at,
                start: None,
                end: None,
            })
            .collect();
        flows_out.sort_by_key(|f| (f.at, f.index));
        let mut e = RankEngine {
            rank,
            n,
            pos: plan.position(rank),
            kind,
            ring: plan.ring().to_vec(),
            layout: plan.layout(rank),
            channels: opts.channels,
            chunk_elems: (opts.chunk_bytes / 4).max(1),
            elems: bytes / 4,
            steps,
            expected_recv: 0,
            received: 0,
            expected_sent: 0,
            sent: 0,
            next_wr: 0,
            flows_out,
            flows_posted: 0,
            flows_in: specs
                .iter()
                .enumerate()
                .filter(|(_, f)| f.dst == rank)
                .map(|(index, f)| RecvFlow {
                    index,
                    src: f.src,
                    bytes: f.bytes,
                })
                .collect(),
            flow_channel: plan.flow_channel(),
            start_ns: None,
            end_ns: None,
            wrong: 0,
            protocol_errors: 0,
            carry_data: opts.carry_data,
        };
        let (er, es) = e.expected();
        e.expected_recv = er;
        e.expected_sent = es;
        e
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    fn expected(&self) -> (u64, u64) {
        match self.kind {
            Kind::AllReduce | Kind::AllGather | Kind::ReduceScatter => {
                let mut r = 0;
                let mut s = 0;
                for t in 0..self.steps {
                    for ch in 0..self.channels {
                        r += self.chunks(self.recv_region(t), ch) as u64;
                        s += self.chunks(self.send_region(t), ch) as u64;
                    }
                }
                (r, s)
            }
            Kind::AllToAll => {
                let per_peer = self.block_chunks(self.elems / self.n);
                let others = (self.n - 1) as u64;
                (per_peer * others, per_peer * others)
            }
            Kind::SendRecv => {
                let per = self.block_chunks(self.elems);
                (per, per)
            }
            Kind::Pipeline => {
                let per = self.block_chunks(self.elems) * self.neighbours().len() as u64;
                (per, per)
            }
            Kind::Flows => (self.flows_in.len() as u64, self.flows_out.len() as u64),
        }
    }

    /// A pipeline rank's neighbours: the previous and the next rank, where
    /// they exist.
    fn neighbours(&self) -> Vec<usize> {
        let r = self.rank;
        [r.checked_sub(1), Some(r + 1).filter(|&x| x < self.n)]
            .into_iter()
            .flatten()
            .collect()
    }

    /// Where a pipeline rank's data lands at `peer`: after the peer's
    /// receive buffer start when it comes from its previous rank, one data
    /// size further when from its next one.
    fn pipeline_landing(&self, peer: usize) -> usize {
        if peer > self.rank {
            self.layout.recv
        } else {
            self.layout.recv + self.elems * 4
        }
    }

    fn part_chunks(&self, len: usize) -> usize {
        len.div_ceil(self.chunk_elems)
    }

    /// Region (a rank number) position `p` sends in step `t`.
    fn region_sent(&self, p: usize, t: usize) -> usize {
        let n = self.n;
        let k = match self.kind {
            Kind::AllGather => (p + n - t % n) % n,
            _ if t < n - 1 => (p + 2 * n - t - 1) % n,
            _ => (p + n - (t - (n - 1)) % n) % n,
        };
        self.ring[k]
    }

    fn send_region(&self, t: usize) -> usize {
        self.region_sent(self.pos, t)
    }

    fn recv_region(&self, t: usize) -> usize {
        self.region_sent((self.pos + self.n - 1) % self.n, t)
    }

    /// Whether step `t`'s data is added into the receiver's own (it lands
    /// in a staging slot) rather than copied into place.
    fn reduces(&self, t: usize) -> bool {
        matches!(self.kind, Kind::AllReduce | Kind::ReduceScatter) && t < self.n - 1
    }

    /// Channel `ch`'s share of region `k`: (first element, elements).
    fn part(&self, k: usize, ch: usize) -> (usize, usize) {
        let (rs, rl) = split(self.elems, self.n, k);
        let (ps, pl) = split(rl, self.channels, ch);
        (rs + ps, pl)
    }

    fn chunks(&self, k: usize, ch: usize) -> usize {
        self.part_chunks(self.part(k, ch).1)
    }

    /// Chunk `c` of a part: (first element, elements).
    fn chunk(&self, part: (usize, usize), c: usize) -> (usize, usize) {
        let s = c * self.chunk_elems;
        (part.0 + s, self.chunk_elems.min(part.1.saturating_sub(s)))
    }

    /// Where step `t`'s chunk `c` on channel `ch` lands at the receiver.
    fn landing(&self, t: usize, ch: usize, c: usize, first_elem: usize) -> usize {
        if self.reduces(t) {
            self.layout.recv
                + ((t % 2) * self.channels + ch) * self.layout.slot_bytes
                + c * self.chunk_elems * 4
        } else {
            self.layout.data + first_elem * 4
        }
    }

    fn imm(t: usize, c: usize) -> u32 {
        ((t as u32) << IMM_CHUNK_BITS) | c as u32
    }

    /// WRITEs a direct block of `elems` elements takes over every channel.
    fn block_chunks(&self, elems: usize) -> u64 {
        (0..self.channels)
            .map(|ch| self.part_chunks(split(elems, self.channels, ch).1) as u64)
            .sum()
    }

    /// Posts a direct block of `elems` elements to `peer`, from `local` in
    /// this rank's memory to `remote` in the peer's, split over every
    /// channel and chunked.
    fn post_block(
        &mut self,
        peer: usize,
        elems: usize,
        local: usize,
        remote: usize,
        out: &mut Vec<Post>,
    ) {
        for ch in 0..self.channels {
            let part = split(elems, self.channels, ch);
            for c in 0..self.part_chunks(part.1) {
                let (first, len) = self.chunk(part, c);
                let wr_id = self.next_wr_id();
                out.push(Post {
                    peer,
                    channel: ch,
                    wr_id,
                    local_offset: local + first * 4,
                    remote_offset: (remote + first * 4) as u64,
                    len: len * 4,
                    imm: Self::imm(0, c),
                });
            }
        }
    }

    fn next_wr_id(&mut self) -> u64 {
        let w = self.next_wr;
        self.next_wr += 1;
        w
    }

    fn post_ring(&mut self, t: usize, ch: usize, c: usize, out: &mut Vec<Post>) {
        let k = self.send_region(t);
        let (first, len) = self.chunk(self.part(k, ch), c);
        let wr_id = self.next_wr_id();
        out.push(Post {
            peer: self.ring[(self.pos + 1) % self.n],
            channel: ch,
            wr_id,
            local_offset: self.layout.data + first * 4,
            remote_offset: self.landing(t, ch, c, first) as u64,
            len: len * 4,
            imm: Self::imm(t, c),
        });
    }

    /// Starts the rank at `now`: fills `mem` (its NIC's memory, zeroed)
    /// with its input and pushes the first WRITEs onto `out`.
    pub fn start(&mut self, now: Nanos, mem: &mut [u8], out: &mut Vec<Post>) {
        self.start_ns = Some(now);
        let d = self.layout.data;
        match self.kind {
            _ if !self.carry_data => {}
            Kind::AllReduce
            | Kind::ReduceScatter
            | Kind::AllToAll
            | Kind::SendRecv
            | Kind::Pipeline => {
                for i in 0..self.elems {
                    write_f32(mem, d + 4 * i, pattern(self.rank, i));
                }
            }
            Kind::AllGather => {
                let (s, l) = split(self.elems, self.n, self.rank);
                for i in s..s + l {
                    write_f32(mem, d + 4 * i, pattern(self.rank, i));
                }
            }
            Kind::Flows => {
                for (i, b) in mem
                    .iter_mut()
                    .skip(d)
                    .take(self.layout.data_bytes)
                    .enumerate()
                {
                    *b = flow_byte(i);
                }
            }
        }
        self.post_flows(now, out);
        match self.kind {
            Kind::AllReduce | Kind::AllGather | Kind::ReduceScatter => {
                for ch in 0..self.channels {
                    for c in 0..self.chunks(self.send_region(0), ch) {
                        self.post_ring(0, ch, c, out);
                    }
                }
            }
            Kind::AllToAll => {
                let blk = self.elems / self.n;
                let r = self.rank;
                // Own block: a local copy.
                let (src, dst) = (d + r * blk * 4, self.layout.recv + r * blk * 4);
                if self.carry_data && src + blk * 4 <= mem.len() && dst + blk * 4 <= mem.len() {
                    mem.copy_within(src..src + blk * 4, dst);
                }
                for k in 1..self.n {
                    let j = (r + k) % self.n;
                    let remote = self.layout.recv + r * blk * 4;
                    self.post_block(j, blk, d + j * blk * 4, remote, out);
                }
            }
            Kind::SendRecv => {
                let j = (self.rank + 1) % self.n;
                let (elems, remote) = (self.elems, self.layout.recv);
                self.post_block(j, elems, d, remote, out);
            }
            Kind::Pipeline => {
                for j in self.neighbours() {
                    let (elems, remote) = (self.elems, self.pipeline_landing(j));
                    self.post_block(j, elems, d, remote, out);
                }
            }
            Kind::Flows => {}
        }
        self.maybe_finish(now, mem);
    }

    /// Posts the flows that have arrived by `now`.
    fn post_flows(&mut self, now: Nanos, out: &mut Vec<Post>) {
        let Some(start) = self.start_ns else { return };
        while let Some(f) = self.flows_out.get_mut(self.flows_posted) {
            let due = start.saturating_add(f.at);
            if due > now {
                break;
            }
            f.start = Some(due);
            out.push(Post {
                peer: f.dst,
                channel: self.flow_channel,
                wr_id: f.index as u64,
                local_offset: self.layout.data,
                remote_offset: f.landing,
                len: f.bytes as usize,
                imm: f.index as u32,
            });
            self.flows_posted += 1;
        }
    }

    /// When the rank next has something to post on its own (a background
    /// flow arriving), if it has started.
    pub fn next_wakeup(&self) -> Option<Nanos> {
        let start = self.start_ns?;
        let f = self.flows_out.get(self.flows_posted)?;
        Some(start.saturating_add(f.at))
    }

    /// Moves the rank on to `now`: posts what has become due (flows that
    /// arrived) onto `out`.
    pub fn on_time(&mut self, now: Nanos, out: &mut Vec<Post>) {
        self.post_flows(now, out);
    }

    /// A WRITE landed in this rank's memory `mem` at `now`; pushes the
    /// WRITEs it allows onto `out`. A delivery that fits no step of the
    /// schedule is counted as wrong (its elements) and otherwise ignored.
    pub fn on_delivery(&mut self, now: Nanos, mem: &mut [u8], d: Delivery, out: &mut Vec<Post>) {
        match self.kind {
            Kind::AllReduce | Kind::AllGather | Kind::ReduceScatter => {
                let t = (d.imm >> IMM_CHUNK_BITS) as usize;
                let c = (d.imm & ((1 << IMM_CHUNK_BITS) - 1)) as usize;
                let prev = self.ring[(self.pos + self.n - 1) % self.n];
                if d.peer != prev || t >= self.steps || d.channel >= self.channels {
                    return self.reject(d);
                }
                let part = self.part(self.recv_region(t), d.channel);
                if c >= self.part_chunks(part.1) {
                    return self.reject(d);
                }
                let (first, len) = self.chunk(part, c);
                let at = self.landing(t, d.channel, c, first);
                if d.offset != at as u64 || d.len != len * 4 {
                    return self.reject(d);
                }
                if self.reduces(t) && self.carry_data {
                    for e in 0..len {
                        let o = self.layout.data + (first + e) * 4;
                        let v = read_f32(mem, o) + read_f32(mem, at + e * 4);
                        write_f32(mem, o, v);
                    }
                }
                self.received += 1;
                if t + 1 < self.steps {
                    self.post_ring(t + 1, d.channel, c, out);
                }
            }
            Kind::AllToAll | Kind::SendRecv => {
                if d.peer >= self.n || d.peer == self.rank || d.channel >= self.channels {
                    return self.reject(d);
                }
                if self.kind == Kind::SendRecv && (d.peer + 1) % self.n != self.rank {
                    return self.reject(d);
                }
                self.received += 1;
            }
            Kind::Pipeline => {
                // From the previous rank into the first slot, from the
                // next into the second.
                let slot = if d.peer + 1 == self.rank {
                    self.layout.recv
                } else {
                    self.layout.recv + self.elems * 4
                };
                let inside = d.offset >= slot as u64
                    && d.offset + d.len as u64 <= (slot + self.elems * 4) as u64;
                if !self.neighbours().contains(&d.peer) || d.channel >= self.channels || !inside {
                    return self.reject(d);
                }
                self.received += 1;
            }
            Kind::Flows => {
                let idx = d.imm as usize;
                let flow = self
                    .flows_in
                    .binary_search_by_key(&idx, |f| f.index)
                    .ok()
                    .map(|i| self.flows_in[i]);
                let fits = flow.is_some_and(|f| {
                    f.src == d.peer
                        && d.channel == self.flow_channel
                        && d.offset == self.layout.recv as u64
                        && d.len as u64 == f.bytes
                });
                if !fits {
                    return self.reject(d);
                }
                let base = self.layout.recv;
                let checked = if self.carry_data { d.len } else { 0 };
                self.wrong += mem
                    .iter()
                    .skip(base)
                    .take(checked)
                    .enumerate()
                    .filter(|(i, b)| **b != flow_byte(*i))
                    .count() as u64;
                self.received += 1;
            }
        }
        self.maybe_finish(now, mem);
    }

    fn reject(&mut self, d: Delivery) {
        self.protocol_errors += 1;
        self.wrong += (d.len as u64).div_ceil(4).max(1);
    }

    /// The peer acknowledged the WRITE tagged `wr_id` in full at `now`.
    pub fn on_sent(&mut self, now: Nanos, mem: &[u8], wr_id: u64) {
        if self.kind == Kind::Flows {
            // Sorted by arrival, and a sender's flows are numbered in
            // arrival order: sorted by index too.
            let at = self
                .flows_out
                .binary_search_by_key(&wr_id, |f| f.index as u64)
                .ok();
            if let Some(f) = at.map(|i| &mut self.flows_out[i]) {
                if f.end.is_none() {
                    f.end = Some(now);
                    self.sent += 1;
                }
            }
        } else {
            self.sent += 1;
        }
        self.maybe_finish(now, mem);
    }

    fn maybe_finish(&mut self, now: Nanos, mem: &[u8]) {
        if self.end_ns.is_none()
            && self.received >= self.expected_recv
            && self.sent >= self.expected_sent
        {
            self.end_ns = Some(now);
            if self.kind != Kind::Flows && self.carry_data {
                self.wrong += self.check(mem);
            }
        }
    }

    /// Every expected WRITE landed and every posted one was acknowledged.
    pub fn done(&self) -> bool {
        self.end_ns.is_some()
    }

    /// Deliveries that fit no step of the schedule.
    pub fn protocol_errors(&self) -> u64 {
        self.protocol_errors
    }

    /// Elements of the result in `mem` that differ from the expected
    /// values (for flows, 0: their bytes are checked as they land).
    pub fn check(&self, mem: &[u8]) -> u64 {
        let n = self.n;
        let e = self.elems;
        let d = self.layout.data;
        let differs = |off: usize, want: f32| u64::from(read_f32(mem, off) != want);
        let sum = |i: usize| (0..n).map(|q| pattern(q, i)).sum::<f32>();
        match self.kind {
            Kind::AllReduce => (0..e).map(|i| differs(d + 4 * i, sum(i))).sum(),
            Kind::ReduceScatter => {
                let (s, l) = split(e, n, self.rank);
                (s..s + l).map(|i| differs(d + 4 * i, sum(i))).sum()
            }
            Kind::AllGather => (0..n)
                .map(|k| {
                    let (s, l) = split(e, n, k);
                    (s..s + l)
                        .map(|i| differs(d + 4 * i, pattern(k, i)))
                        .sum::<u64>()
                })
                .sum(),
            Kind::AllToAll => {
                let blk = e / n;
                let r = self.rank;
                (0..n)
                    .map(|i| {
                        (0..blk)
                            .map(|x| {
                                differs(
                                    self.layout.recv + (i * blk + x) * 4,
                                    pattern(i, r * blk + x),
                                )
                            })
                            .sum::<u64>()
                    })
                    .sum()
            }
            Kind::SendRecv => {
                let from = (self.rank + n - 1) % n;
                (0..e)
                    .map(|i| differs(self.layout.recv + 4 * i, pattern(from, i)))
                    .sum()
            }
            Kind::Pipeline => self
                .neighbours()
                .into_iter()
                .map(|from| {
                    // What `from` sent lands where its own landing says.
                    let at = if from < self.rank {
                        self.layout.recv
                    } else {
                        self.layout.recv + e * 4
                    };
                    (0..e)
                        .map(|i| differs(at + 4 * i, pattern(from, i)))
                        .sum::<u64>()
                })
                .sum(),
            Kind::Flows => 0,
        }
    }

    /// What the rank did.
    pub fn outcome(&self) -> RankOutcome {
        RankOutcome {
            rank: self.rank,
            end_ns: self.end_ns,
            wrong: self.wrong,
            checked: self.carry_data,
            workload: 0,
            start_ns: self.start_ns,
        }
    }

    /// The flows it sent (flow workloads), with `wrong` 0: the receiving
    /// rank counts wrong bytes in its own outcome.
    pub fn flow_outcomes(&self) -> Vec<FlowOutcome> {
        self.flows_out
            .iter()
            .map(|f| FlowOutcome {
                src: self.rank,
                dst: f.dst,
                bytes: f.bytes,
                start_ns: f.start.unwrap_or(0),
                end_ns: f.end,
                wrong: 0,
                workload: 0,
            })
            .collect()
    }

    /// When it started.
    pub fn start_ns(&self) -> Option<Nanos> {
        self.start_ns
    }

    /// When it finished (None: not yet).
    pub fn end_ns(&self) -> Option<Nanos> {
        self.end_ns
    }
}
