//! A reliable-connected queue pair: the requester that segments posted RDMA
//! WRITEs by path MTU and recovers losses by go-back-N, and the responder
//! that lands in-order data in memory, coalesces ACKs and NAKs the first gap.
//!
//! The queue pair knows nothing of frames or time sources: the NIC hands it
//! parsed packets and the time, and asks it what to send next
//! ([`QueuePair::next_data`], [`QueuePair::take_control`]).
//!
//! PSNs are 24 bits on the wire; inside they are kept unwrapped (`u64`), so
//! "older" and "newer" never depend on where the wrap falls. A wire PSN is
//! read as the unwrapped value nearest to a reference (half the space either
//! side), which is sound while fewer than 2^23 packets are outstanding —
//! [`MAX_OUTSTANDING`] keeps it so.

use std::collections::VecDeque;
use std::net::Ipv4Addr;

use crate::wire::{AethRepr, Opcode, RethRepr, Syndrome};
use crate::Nanos;

/// One queue pair's connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QpConfig {
    /// This side's QP number (24 bits, unique on the NIC).
    pub local_qpn: u32,
    /// The peer's IPv4 address.
    pub remote_ip: Ipv4Addr,
    /// The peer's QP number.
    pub remote_qpn: u32,
    /// UDP source port of every frame this QP sends: the flow's entropy.
    pub udp_sport: u16,
}

/// An RDMA WRITE to post on a queue pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteRequest {
    /// The caller's tag, returned in [`Completion::Sent`].
    pub wr_id: u64,
    /// Where in this NIC's memory the data is.
    pub local_offset: usize,
    /// Where in the peer's memory it lands.
    pub remote_offset: u64,
    /// Bytes (0 allowed: an immediate-only write).
    pub len: usize,
    /// Immediate data: the peer gets a [`Completion::Received`] for it.
    pub imm: Option<u32>,
}

/// What finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Completion {
    /// A posted WRITE was acknowledged in full.
    Sent {
        /// The QP it was posted on.
        qpn: u32,
        /// Its tag.
        wr_id: u64,
    },
    /// A WRITE with immediate landed in full in this NIC's memory.
    Received {
        /// The QP it arrived on.
        qpn: u32,
        /// Its immediate data.
        imm: u32,
        /// Where it landed.
        offset: u64,
        /// Its length.
        len: usize,
    },
}

/// Where a WRITE's payload goes on the responder.
#[derive(Debug)]
pub enum Landing<'a> {
    /// Copied into registered memory (its length bounds every WRITE).
    Memory(&'a mut [u8]),
    /// Nowhere: a data-free job's NIC has no memory, and its WRITEs are
    /// checked against this many bytes of virtual memory only.
    Discard(usize),
}

impl Landing<'_> {
    fn len(&self) -> usize {
        match self {
            Landing::Memory(m) => m.len(),
            Landing::Discard(n) => *n,
        }
    }
}

/// PSNs are 24 bits.
pub const PSN_MASK: u32 = 0x00ff_ffff;
const PSN_SPACE: u64 = 1 << 24;
const PSN_HALF: u64 = 1 << 23;
/// Most packets a requester has sent and not had acknowledged: well inside
/// half the PSN space, so a wire PSN always names one packet.
pub const MAX_OUTSTANDING: u64 = 1 << 22;
/// R_Key every WRITE carries (the whole memory is one region).
pub const R_KEY: u32 = 0x0000_1000;
/// Send queue entries a queue pair preallocates: none, because a fabric of
/// a thousand ranks holds millions of queue pairs (an AllToAll's), half of
/// them never posting (the responders); a queue grows at its first WRITEs
/// and keeps its room.
const SQ_PREALLOC: usize = 0;

/// One data packet the requester wants sent: everything the NIC needs to
/// build its frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataPacket {
    /// WRITE FIRST/MIDDLE/LAST/ONLY, with or without immediate.
    pub opcode: Opcode,
    /// PSN on the wire (24 bits).
    pub psn: u32,
    /// Ask the responder for an ACK (the last packet of a message).
    pub ack_req: bool,
    /// RETH on FIRST and ONLY.
    pub reth: Option<RethRepr>,
    /// Immediate data on LAST/ONLY with immediate.
    pub imm: Option<u32>,
    /// Where the payload starts in local memory.
    pub local_offset: usize,
    /// Payload bytes.
    pub len: usize,
    /// Sent before (go-back-N).
    pub retransmission: bool,
}

/// An acknowledgement the responder wants sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Control {
    /// The PSN the AETH refers to: the last in-order PSN for an ACK, the
    /// expected PSN for a NAK.
    pub psn: u32,
    /// ACK or NAK and the responder's message count.
    pub aeth: AethRepr,
}

/// What the responder did with a data packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxVerdict {
    /// In order, written to memory.
    Accepted,
    /// A PSN already received: not written, acknowledged again.
    Duplicate,
    /// A PSN past the expected one: dropped (NAKed once per gap).
    OutOfSequence,
    /// In order but inconsistent (opcode out of place, lengths that do not
    /// add up, a range outside memory): dropped.
    Malformed,
}

/// What an acknowledgement did to the requester.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckOutcome {
    /// It was a NAK (PSN sequence error) that rewound the requester.
    pub nak: bool,
    /// Messages it completed.
    pub completed: u32,
}

#[derive(Debug, Clone, Copy)]
struct Posted {
    wr: WriteRequest,
    first_psn: u64,
    packets: u64,
}

impl Posted {
    fn end_psn(&self) -> u64 {
        self.first_psn + self.packets
    }
}

#[derive(Debug, Clone, Copy)]
struct Inbound {
    va: u64,
    dma_len: u64,
    received: u64,
}

/// A reliable-connected queue pair (see the module doc).
#[derive(Debug)]
pub struct QueuePair {
    cfg: QpConfig,
    mtu: usize,
    ack_every: u32,
    rto_ns: Nanos,
    // Requester.
    sq: VecDeque<Posted>,
    cursor: usize,
    psn_end: u64,
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    last_progress: Nanos,
    // Responder.
    epsn: u64,
    nak_sent: bool,
    msn: u32,
    inbound: Option<Inbound>,
    since_ack: u32,
    control: Option<Control>,
}

/// Reads a 24-bit PSN as the unwrapped value nearest to `base`; `None` when
/// that would lie before the first PSN ever (below zero).
pub fn unwrap_psn(base: u64, psn: u32) -> Option<u64> {
    let d = (u64::from(psn & PSN_MASK) + PSN_SPACE - (base % PSN_SPACE)) % PSN_SPACE;
    if d < PSN_HALF {
        Some(base + d)
    } else {
        base.checked_sub(PSN_SPACE - d)
    }
}

fn wire_psn(psn: u64) -> u32 {
    (psn % PSN_SPACE) as u32
}

impl QueuePair {
    /// A queue pair whose first PSNs (sent and expected) are both
    /// `initial_psn` (the NIC uses 0; tests start near the wrap).
    pub fn new(
        cfg: QpConfig,
        path_mtu: usize,
        ack_every: u32,
        rto_ns: Nanos,
        initial_psn: u32,
    ) -> QueuePair {
        let p = u64::from(initial_psn & PSN_MASK);
        QueuePair {
            cfg,
            mtu: path_mtu.max(1),
            ack_every: ack_every.max(1),
            rto_ns,
            sq: VecDeque::with_capacity(SQ_PREALLOC),
            cursor: 0,
            psn_end: p,
            snd_una: p,
            snd_nxt: p,
            snd_max: p,
            last_progress: 0,
            epsn: p,
            nak_sent: false,
            msn: 0,
            inbound: None,
            since_ack: 0,
            control: None,
        }
    }

    /// Its connection.
    pub fn config(&self) -> &QpConfig {
        &self.cfg
    }

    /// Queues a WRITE (the caller has checked the local range).
    pub fn post(&mut self, wr: WriteRequest) {
        let packets = (wr.len.div_ceil(self.mtu)).max(1) as u64;
        self.sq.push_back(Posted {
            wr,
            first_psn: self.psn_end,
            packets,
        });
        self.psn_end += packets;
    }

    /// A data packet may be sent now (pacing and pauses aside).
    pub fn has_data(&self) -> bool {
        self.snd_nxt < self.psn_end && self.snd_nxt - self.snd_una < MAX_OUTSTANDING
    }

    /// Packets sent and not acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Nothing posted is unacknowledged and no acknowledgement is pending.
    pub fn idle(&self) -> bool {
        self.sq.is_empty() && self.control.is_none()
    }

    /// The next data packet, advancing the send pointer.
    pub fn next_data(&mut self, now: Nanos) -> Option<DataPacket> {
        if !self.has_data() {
            return None;
        }
        let psn = self.snd_nxt;
        let m = *self.locate(psn)?;
        let k = psn - m.first_psn;
        let offset = k as usize * self.mtu;
        let len = self.mtu.min(m.wr.len.saturating_sub(offset));
        let first = k == 0;
        let last = k + 1 == m.packets;
        let imm = m.wr.imm.filter(|_| last);
        let opcode = match (first, last, imm.is_some()) {
            (true, true, false) => Opcode::RcRdmaWriteOnly,
            (true, true, true) => Opcode::RcRdmaWriteOnlyImm,
            (true, false, _) => Opcode::RcRdmaWriteFirst,
            (false, false, _) => Opcode::RcRdmaWriteMiddle,
            (false, true, false) => Opcode::RcRdmaWriteLast,
            (false, true, true) => Opcode::RcRdmaWriteLastImm,
        };
        let reth = first.then_some(RethRepr {
            va: m.wr.remote_offset,
            r_key: R_KEY,
            dma_len: u32::try_from(m.wr.len).unwrap_or(u32::MAX),
        });
        if self.snd_una == self.snd_max {
            // Nothing was outstanding: the retransmission timer starts now.
            self.last_progress = now;
        }
        let retransmission = psn < self.snd_max;
        self.snd_nxt += 1;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        Some(DataPacket {
            opcode,
            psn: wire_psn(psn),
            ack_req: last,
            reth,
            imm,
            local_offset: m.wr.local_offset + offset,
            len,
            retransmission,
        })
    }

    /// The posted message holding `psn`, moving the cursor to it.
    fn locate(&mut self, psn: u64) -> Option<&Posted> {
        if self.sq.get(self.cursor).is_none_or(|m| m.first_psn > psn) {
            self.cursor = 0;
        }
        while let Some(m) = self.sq.get(self.cursor) {
            if psn < m.end_psn() {
                return Some(m);
            }
            self.cursor += 1;
        }
        None
    }

    /// When the retransmission timer fires, if it runs.
    pub fn rto_deadline(&self) -> Option<Nanos> {
        (self.snd_una < self.snd_max).then(|| self.last_progress.saturating_add(self.rto_ns))
    }

    /// Runs the retransmission timer: when nothing was acknowledged for
    /// `rto_ns`, goes back to the oldest unacknowledged PSN. Returns whether
    /// it fired.
    pub fn on_timer(&mut self, now: Nanos) -> bool {
        match self.rto_deadline() {
            Some(t) if now >= t => {
                self.snd_nxt = self.snd_una;
                self.last_progress = now;
                true
            }
            _ => false,
        }
    }

    /// Takes an ACK or NAK addressed to this QP; completed messages go to
    /// `completions` as [`Completion::Sent`].
    pub fn on_ack(
        &mut self,
        now: Nanos,
        psn: u32,
        aeth: AethRepr,
        completions: &mut VecDeque<Completion>,
    ) -> AckOutcome {
        let mut out = AckOutcome::default();
        match aeth.syndrome {
            Syndrome::Ack { .. } => {
                let upto = unwrap_psn(self.snd_una, psn);
                if let Some(upto) = upto.filter(|&u| u >= self.snd_una && u < self.snd_max) {
                    self.snd_una = upto + 1;
                    self.last_progress = now;
                }
            }
            Syndrome::NakPsnSequenceError => {
                let expected = unwrap_psn(self.snd_una, psn);
                if let Some(expected) = expected.filter(|&e| e >= self.snd_una && e < self.snd_max)
                {
                    self.snd_una = expected;
                    self.snd_nxt = expected;
                    self.last_progress = now;
                    out.nak = true;
                }
            }
            // Other NAKs are not produced by this crate's responder; the
            // timer recovers whatever they meant.
            _ => {}
        }
        self.snd_nxt = self.snd_nxt.max(self.snd_una);
        while let Some(m) = self.sq.front() {
            if m.end_psn() > self.snd_una {
                break;
            }
            completions.push_back(Completion::Sent {
                qpn: self.cfg.local_qpn,
                wr_id: m.wr.wr_id,
            });
            self.sq.pop_front();
            self.cursor = self.cursor.saturating_sub(1);
            out.completed += 1;
        }
        out
    }

    /// The acknowledgement to send, if any.
    pub fn control(&self) -> Option<Control> {
        self.control
    }

    /// Takes the acknowledgement to send.
    pub fn take_control(&mut self) -> Option<Control> {
        self.control.take()
    }

    fn ack(&self, psn: u64) -> Control {
        Control {
            psn: wire_psn(psn),
            aeth: AethRepr {
                syndrome: Syndrome::Ack {
                    credits: crate::wire::aeth::NO_CREDITS,
                },
                msn: self.msn & PSN_MASK,
            },
        }
    }

    /// Takes a WRITE packet addressed to this QP: in order it lands in
    /// `memory` at the RETH's address plus its offset in the message.
    #[allow(clippy::too_many_arguments)]
    pub fn on_data(
        &mut self,
        psn: u32,
        opcode: Opcode,
        ack_req: bool,
        reth: Option<RethRepr>,
        imm: Option<u32>,
        payload: &[u8],
        memory: &mut [u8],
        completions: &mut VecDeque<Completion>,
    ) -> RxVerdict {
        let landing = Landing::Memory(memory);
        self.on_data_into(
            psn,
            opcode,
            ack_req,
            reth,
            imm,
            payload,
            landing,
            completions,
        )
    }

    /// Takes a WRITE packet as [`on_data`](Self::on_data) does, its payload
    /// going where `landing` says (nowhere in a data-free job, with the same
    /// range checks against the virtual memory size).
    #[allow(clippy::too_many_arguments)]
    pub fn on_data_into(
        &mut self,
        psn: u32,
        opcode: Opcode,
        ack_req: bool,
        reth: Option<RethRepr>,
        imm: Option<u32>,
        payload: &[u8],
        landing: Landing<'_>,
        completions: &mut VecDeque<Completion>,
    ) -> RxVerdict {
        let d = (u64::from(psn & PSN_MASK) + PSN_SPACE - self.epsn % PSN_SPACE) % PSN_SPACE;
        if d != 0 {
            if d < PSN_HALF {
                if !self.nak_sent {
                    self.nak_sent = true;
                    let mut c = self.ack(self.epsn);
                    c.aeth.syndrome = Syndrome::NakPsnSequenceError;
                    self.control = Some(c);
                }
                return RxVerdict::OutOfSequence;
            }
            if !matches!(
                self.control,
                Some(Control {
                    aeth: AethRepr {
                        syndrome: Syndrome::NakPsnSequenceError,
                        ..
                    },
                    ..
                })
            ) {
                // The last in-order PSN: one before the expected one, modulo
                // 2^24 (before any data that is 0xffffff, which no requester
                // has outstanding).
                self.control = Some(self.ack(self.epsn.wrapping_sub(1)));
            }
            return RxVerdict::Duplicate;
        }
        let starts = crate::wire::starts_message(opcode);
        let ends = crate::wire::ends_message(opcode);
        let mut msg = match (self.inbound, starts, reth) {
            (None, true, Some(r)) => Inbound {
                va: r.va,
                dma_len: u64::from(r.dma_len),
                received: 0,
            },
            (Some(m), false, _) => m,
            _ => return RxVerdict::Malformed,
        };
        let len = payload.len() as u64;
        if msg.received + len > msg.dma_len || (!ends && payload.is_empty()) {
            return RxVerdict::Malformed;
        }
        let Some(start) = msg.va.checked_add(msg.received) else {
            return RxVerdict::Malformed;
        };
        let Some(range) = usize::try_from(start)
            .ok()
            .and_then(|s| Some(s..s.checked_add(payload.len())?))
            .filter(|r| r.end <= landing.len())
        else {
            return RxVerdict::Malformed;
        };
        if ends && msg.received + len != msg.dma_len {
            return RxVerdict::Malformed;
        }
        if let Landing::Memory(m) = landing {
            if let Some(dst) = m.get_mut(range) {
                dst.copy_from_slice(payload);
            }
        }
        msg.received += len;
        if ends {
            self.inbound = None;
            self.msn = (self.msn + 1) & PSN_MASK;
            if let Some(imm) = imm {
                completions.push_back(Completion::Received {
                    qpn: self.cfg.local_qpn,
                    imm,
                    offset: msg.va,
                    len: msg.received as usize,
                });
            }
        } else {
            self.inbound = Some(msg);
        }
        let this = self.epsn;
        self.epsn += 1;
        self.since_ack += 1;
        if matches!(self.control, Some(c) if c.aeth.syndrome == Syndrome::NakPsnSequenceError) {
            // The gap the unsent NAK reported is filled, but the packets
            // that showed it were dropped: ask for them from here on. (An
            // ACK or no answer instead would leave a sender whose last
            // packets those were waiting for its retransmission timer.)
            let mut c = self.ack(self.epsn);
            c.aeth.syndrome = Syndrome::NakPsnSequenceError;
            self.control = Some(c);
            self.since_ack = 0;
        } else {
            self.nak_sent = false;
            if ack_req || self.since_ack >= self.ack_every {
                self.since_ack = 0;
                self.control = Some(self.ack(this));
            }
        }
        RxVerdict::Accepted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    const MTU: usize = 1024;

    fn cfg(q: u32) -> QpConfig {
        QpConfig {
            local_qpn: q,
            remote_ip: Ipv4Addr::new(10, 0, 0, 2),
            remote_qpn: q + 1,
            udp_sport: 0xc000,
        }
    }

    struct Pair {
        req: QueuePair,
        resp: QueuePair,
        src: Vec<u8>,
        dst: Vec<u8>,
        sent: VecDeque<Completion>,
        recv: VecDeque<Completion>,
    }

    impl Pair {
        fn new(initial_psn: u32, ack_every: u32) -> Pair {
            Pair {
                req: QueuePair::new(cfg(1), MTU, ack_every, 100, initial_psn),
                resp: QueuePair::new(cfg(2), MTU, ack_every, 100, initial_psn),
                src: (0..16 * MTU).map(|i| (i % 251) as u8).collect(),
                dst: vec![0; 16 * MTU],
                sent: VecDeque::new(),
                recv: VecDeque::new(),
            }
        }

        fn deliver(&mut self, p: DataPacket) -> RxVerdict {
            let payload = self.src[p.local_offset..p.local_offset + p.len].to_vec();
            self.resp.on_data(
                p.psn,
                p.opcode,
                p.ack_req,
                p.reth,
                p.imm,
                &payload,
                &mut self.dst,
                &mut self.recv,
            )
        }

        fn ack_back(&mut self, now: Nanos) -> Option<AckOutcome> {
            let c = self.resp.take_control()?;
            Some(self.req.on_ack(now, c.psn, c.aeth, &mut self.sent))
        }
    }

    fn write(len: usize, imm: Option<u32>) -> WriteRequest {
        WriteRequest {
            wr_id: 7,
            local_offset: 0,
            remote_offset: 0,
            len,
            imm,
        }
    }

    #[test]
    fn segmentation_opcodes_and_ack_req() {
        let mut p = Pair::new(0, 100);
        p.req.post(write(3 * MTU + 10, Some(9)));
        p.req.post(write(0, Some(10)));
        p.req.post(write(5, None));
        let pkts: Vec<_> = std::iter::from_fn(|| p.req.next_data(0)).collect();
        let ops: Vec<_> = pkts.iter().map(|d| d.opcode).collect();
        assert_eq!(
            ops,
            [
                Opcode::RcRdmaWriteFirst,
                Opcode::RcRdmaWriteMiddle,
                Opcode::RcRdmaWriteMiddle,
                Opcode::RcRdmaWriteLastImm,
                Opcode::RcRdmaWriteOnlyImm,
                Opcode::RcRdmaWriteOnly,
            ]
        );
        let lens: Vec<_> = pkts.iter().map(|d| d.len).collect();
        assert_eq!(lens, [MTU, MTU, MTU, 10, 0, 5]);
        let reqs: Vec<_> = pkts.iter().map(|d| d.ack_req).collect();
        assert_eq!(reqs, [false, false, false, true, true, true]);
        assert_eq!(pkts[0].reth.unwrap().dma_len, 3 * MTU as u32 + 10);
        assert!(pkts[1].reth.is_none() && pkts[3].imm == Some(9));
        for d in pkts {
            assert_eq!(p.deliver(d), RxVerdict::Accepted);
            p.ack_back(1);
        }
        assert_eq!(p.sent.len(), 3);
        assert_eq!(&p.dst[..3 * MTU + 10], &p.src[..3 * MTU + 10]);
        assert_eq!(
            p.recv.iter().copied().collect::<Vec<_>>(),
            [
                Completion::Received {
                    qpn: 2,
                    imm: 9,
                    offset: 0,
                    len: 3 * MTU + 10
                },
                Completion::Received {
                    qpn: 2,
                    imm: 10,
                    offset: 0,
                    len: 0
                },
            ]
        );
        assert!(p.req.idle() && p.resp.idle());
    }

    #[test]
    fn coalesced_acks_every_n() {
        let mut p = Pair::new(0, 4);
        p.req.post(write(10 * MTU, None));
        let mut acks = vec![];
        while let Some(d) = p.req.next_data(0) {
            p.deliver(d);
            if let Some(c) = p.resp.take_control() {
                acks.push(c.psn);
                p.req.on_ack(0, c.psn, c.aeth, &mut p.sent);
            }
        }
        assert_eq!(acks, [3, 7, 9]);
        assert_eq!(p.sent.len(), 1);
    }

    #[test]
    fn loss_of_a_middle_packet_naks_once_and_goes_back() {
        let mut p = Pair::new(0, 100);
        p.req.post(write(8 * MTU, None));
        let mut verdicts = vec![];
        for i in 0..8 {
            let d = p.req.next_data(0).unwrap();
            if i == 3 {
                continue; // lost
            }
            verdicts.push(p.deliver(d));
        }
        assert_eq!(verdicts[..3], [RxVerdict::Accepted; 3]);
        assert_eq!(verdicts[3..], [RxVerdict::OutOfSequence; 4]);
        // One NAK for the whole gap, naming the expected PSN.
        let c = p.resp.take_control().unwrap();
        assert_eq!((c.psn, c.aeth.syndrome), (3, Syndrome::NakPsnSequenceError));
        assert!(p.resp.take_control().is_none());
        let out = p.req.on_ack(5, c.psn, c.aeth, &mut p.sent);
        assert!(out.nak);
        let again: Vec<_> = std::iter::from_fn(|| p.req.next_data(6)).collect();
        assert_eq!(
            again.iter().map(|d| d.psn).collect::<Vec<_>>(),
            [3, 4, 5, 6, 7]
        );
        assert!(again.iter().all(|d| d.retransmission));
        for d in again {
            assert_eq!(p.deliver(d), RxVerdict::Accepted);
        }
        p.ack_back(7);
        assert_eq!(p.sent.len(), 1);
        assert_eq!(p.dst[..8 * MTU], p.src[..8 * MTU]);
    }

    /// Reordering, not loss (per-packet spraying): the last packet overtakes
    /// the one before it and is dropped; when that one fills the gap before
    /// the NAK went out, the answer asks for the last packet again, so the
    /// message completes without waiting for the retransmission timer.
    #[test]
    fn a_reordered_last_packet_is_asked_for_again_at_once() {
        let mut p = Pair::new(0, 100);
        p.req.post(write(4 * MTU, None));
        let d: Vec<_> = std::iter::from_fn(|| p.req.next_data(0)).collect();
        let [d0, d1, d2, d3] = [d[0], d[1], d[2], d[3]];
        assert_eq!(p.deliver(d0), RxVerdict::Accepted);
        assert_eq!(p.deliver(d1), RxVerdict::Accepted);
        assert_eq!(p.deliver(d3), RxVerdict::OutOfSequence, "overtook 2");
        assert_eq!(p.deliver(d2), RxVerdict::Accepted);
        let c = p.resp.take_control().expect("an answer");
        assert_eq!((c.psn, c.aeth.syndrome), (3, Syndrome::NakPsnSequenceError));
        let out = p.req.on_ack(5, c.psn, c.aeth, &mut p.sent);
        assert!(out.nak);
        let again: Vec<_> = std::iter::from_fn(|| p.req.next_data(6)).collect();
        assert_eq!(again.iter().map(|d| d.psn).collect::<Vec<_>>(), [3]);
        assert_eq!(p.deliver(again[0]), RxVerdict::Accepted);
        p.ack_back(7);
        assert_eq!(p.sent.len(), 1, "the WRITE completed");
        assert_eq!(p.req.rto_deadline(), None, "no timer left running");
    }

    #[test]
    fn loss_of_the_last_packet_times_out() {
        let mut p = Pair::new(0, 100);
        p.req.post(write(3 * MTU, None));
        for i in 0..3 {
            let d = p.req.next_data(10).unwrap();
            if i < 2 {
                p.deliver(d);
            }
        }
        assert!(p.resp.take_control().is_none(), "no AckReq arrived");
        assert_eq!(p.req.rto_deadline(), Some(110));
        assert!(!p.req.on_timer(109));
        assert!(p.req.next_data(109).is_none());
        assert!(p.req.on_timer(110));
        // Go back to the oldest unacknowledged PSN: the whole message.
        let again: Vec<_> = std::iter::from_fn(|| p.req.next_data(110)).collect();
        assert_eq!(again.iter().map(|d| d.psn).collect::<Vec<_>>(), [0, 1, 2]);
        let v: Vec<_> = again.into_iter().map(|d| p.deliver(d)).collect();
        assert_eq!(
            v,
            [
                RxVerdict::Duplicate,
                RxVerdict::Duplicate,
                RxVerdict::Accepted
            ]
        );
        p.ack_back(111);
        assert_eq!(p.sent.len(), 1);
        assert_eq!(p.req.rto_deadline(), None);
    }

    #[test]
    fn lost_ack_gives_a_duplicate_and_a_fresh_ack() {
        let mut p = Pair::new(0, 100);
        p.req.post(write(MTU, Some(1)));
        let d = p.req.next_data(0).unwrap();
        assert_eq!(p.deliver(d), RxVerdict::Accepted);
        assert!(p.resp.take_control().is_some()); // lost on the way
        assert_eq!(p.recv.len(), 1);
        assert!(p.req.on_timer(100));
        let d = p.req.next_data(100).unwrap();
        assert!(d.retransmission);
        assert_eq!(p.deliver(d), RxVerdict::Duplicate);
        assert_eq!(p.recv.len(), 1, "a duplicate completes nothing");
        let c = p.resp.control().unwrap();
        assert_eq!(
            (c.psn, c.aeth.syndrome),
            (0, Syndrome::Ack { credits: 0x1f })
        );
        p.ack_back(101);
        assert_eq!(p.sent.len(), 1);
    }

    #[test]
    fn psn_wraps() {
        let start = PSN_MASK - 2;
        let mut p = Pair::new(start, 2);
        p.req.post(write(6 * MTU, None));
        let pkts: Vec<_> = std::iter::from_fn(|| p.req.next_data(0)).collect();
        let psns: Vec<_> = pkts.iter().map(|d| d.psn).collect();
        assert_eq!(psns, [start, start + 1, start + 2, 0, 1, 2]);
        for d in pkts {
            if d.psn != 1 {
                p.deliver(d);
            }
            p.ack_back(0);
        }
        // PSN 1 was lost: a NAK for 1 went back, across the wrap.
        let again: Vec<_> = std::iter::from_fn(|| p.req.next_data(1)).collect();
        assert_eq!(again.iter().map(|d| d.psn).collect::<Vec<_>>(), [1, 2]);
        for d in again {
            assert_eq!(p.deliver(d), RxVerdict::Accepted);
        }
        p.ack_back(2);
        assert_eq!(p.sent.len(), 1);
        assert_eq!(p.dst[..6 * MTU], p.src[..6 * MTU]);
    }

    #[test]
    fn unwrap_psn_near_the_wrap() {
        assert_eq!(unwrap_psn(PSN_SPACE - 1, 0), Some(PSN_SPACE));
        assert_eq!(unwrap_psn(PSN_SPACE, PSN_MASK), Some(PSN_SPACE - 1));
        assert_eq!(unwrap_psn(5, 3), Some(3));
        assert_eq!(unwrap_psn(0, PSN_MASK), None, "before the first PSN");
    }

    #[test]
    fn a_stale_psn_before_any_data_acknowledges_nothing() {
        let mut p = Pair::new(0, 100);
        p.req.post(write(MTU, None));
        let d = p.req.next_data(0).unwrap();
        let mut mem = vec![0u8; MTU];
        let mut c = VecDeque::new();
        let v = p.resp.on_data(
            PSN_MASK, d.opcode, true, d.reth, None, &[0; MTU], &mut mem, &mut c,
        );
        assert_eq!(v, RxVerdict::Duplicate);
        let ack = p.resp.take_control().unwrap();
        assert_eq!(ack.psn, PSN_MASK);
        p.req.on_ack(1, ack.psn, ack.aeth, &mut p.sent);
        assert!(p.sent.is_empty());
        assert_eq!(p.req.outstanding(), 1);
    }

    #[test]
    fn inconsistent_packets_are_malformed() {
        let mut p = Pair::new(0, 100);
        let mut mem = vec![0u8; 4 * MTU];
        let mut c = VecDeque::new();
        // MIDDLE with no message started.
        let v = p.resp.on_data(
            0,
            Opcode::RcRdmaWriteMiddle,
            false,
            None,
            None,
            &[0; MTU],
            &mut mem,
            &mut c,
        );
        assert_eq!(v, RxVerdict::Malformed);
        // A WRITE ONLY of `payload` to `va` claiming `dma_len` bytes.
        let mut only = |va: u64, dma_len: u32, payload: &[u8]| {
            let reth = Some(RethRepr {
                va,
                r_key: R_KEY,
                dma_len,
            });
            p.resp.on_data(
                0,
                Opcode::RcRdmaWriteOnly,
                true,
                reth,
                None,
                payload,
                &mut mem,
                &mut c,
            )
        };
        // Outside memory.
        assert_eq!(only(4 * MTU as u64 - 1, 2, &[1, 2]), RxVerdict::Malformed);
        // A payload that is not its DMA length.
        assert_eq!(only(0, 3, &[1, 2]), RxVerdict::Malformed);
        // An address that overflows; still expecting PSN 0.
        assert_eq!(only(u64::MAX, 2, &[1, 2]), RxVerdict::Malformed);
        assert_eq!(only(0, 2, &[1, 2]), RxVerdict::Accepted);
    }
}
