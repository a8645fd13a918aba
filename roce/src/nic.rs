//! A RoCEv2 NIC: reliable-connected queue pairs behind one Ethernet port,
//! each paced at its DCQCN rate, all serialised at line rate, and paused per
//! priority by PFC from the switch. Frames in, frames out, time injected.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::net::Ipv4Addr;

use railyard_dataplane::qos::shaper::{ps_to_ns_ceil, serialisation_ps, wire_bytes, PS_PER_NS};
use railyard_dataplane::wire::{mac_control, ArpOperation, MacControlRepr};
use serde::{Deserialize, Serialize};

pub use crate::qp::{Completion, QpConfig, WriteRequest};

use crate::dcqcn::{DcqcnParams, NotificationPoint, ReactionPoint};
use crate::qp::{Control, Landing, QueuePair, RxVerdict, PSN_MASK};
use crate::wire::{
    bth, bth_repr, emit_arp_reply, is_write, reth, Opcode, RoceRepr, RxError, RxFrame, Syndrome,
    CNP_RESERVED_LEN, ECN_CE, ECN_ECT0, ICRC_LEN, IMMDT_LEN, OUTER_LEN, TPID, TTL,
};
use crate::{MacAddr, Nanos};

/// The retransmission timeout unless one is given: InfiniBand's local ACK
/// timeout 14, 4.096 µs × 2^14 ≈ 67 ms, a common setting of RDMA
/// applications. Long against a fabric's round trip, so that a pause or a
/// deep queue does not set off go-back-N; a lost last packet costs that
/// long, as it does a real NIC.
pub const DEFAULT_RTO_NS: Nanos = 4_096 << 14;

/// Which congestion control a NIC runs.
#[derive(Debug, Clone, PartialEq)]
pub enum CongestionControl {
    /// Line rate always; only PFC slows the sender.
    None,
    /// DCQCN with these parameters.
    Dcqcn(DcqcnParams),
}

/// How a NIC is set up.
#[derive(Debug, Clone)]
pub struct NicConfig {
    /// The port's MAC address.
    pub mac: MacAddr,
    /// The port's IPv4 address.
    pub ip: Ipv4Addr,
    /// Every frame's destination MAC: the switch port's (routed fabric).
    pub gateway_mac: MacAddr,
    /// Line rate in bits per second (serialisation, plus 20 bytes of
    /// preamble and inter-frame gap per frame).
    pub line_rate_bps: u64,
    /// RoCE path MTU: payload bytes per packet (256, 512, 1024, 2048, 4096).
    pub path_mtu: usize,
    /// DSCP of data and ACKs (24 in the book's policy); sent ECT(0).
    pub dscp: u8,
    /// 802.1p priority of data and ACKs, for PFC (3 in the book's policy).
    pub priority: u8,
    /// Congestion control (CNP DSCP and priority come from its parameters).
    /// With `None` there is no congestion control at all: the NIC neither
    /// sends CNPs on CE nor reacts to CNPs it receives (it counts them).
    pub cc: CongestionControl,
    /// The responder ACKs after this many packets, and always on a packet
    /// that asks for an ACK (the last of a message).
    pub ack_every: u32,
    /// Retransmission timeout: go back to the oldest unacknowledged PSN when
    /// nothing was acknowledged for this long.
    pub rto_ns: Nanos,
    /// Bytes of registered memory every WRITE reads from and lands in.
    pub memory_bytes: usize,
    /// Answer ARP requests for `ip` (simulation; a live host's kernel
    /// answers for itself).
    pub answer_arp: bool,
    /// How late a transmission may still be made up: a NIC's pacer is
    /// hardware and loses no time, but a live rank's OS wakes it late, and
    /// without catching up every late wake-up would cost line rate (at
    /// 100 Mb/s a frame every 86 µs against wake-ups tens of µs late). A
    /// frame due less than this long ago is accounted as sent when it was
    /// due, so the frames owed go out back to back. 0 in virtual time,
    /// where every wake-up is exact.
    pub catch_up_ns: Nanos,
}

/// Why a posted request was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NicError {
    /// No QP with this number.
    UnknownQp(u32),
    /// The QP number is taken.
    DuplicateQp(u32),
    /// The local range lies outside registered memory.
    OutOfMemoryRange,
}

/// A NIC's counters, for the fabric summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NicStats {
    /// Frames sent.
    pub tx_frames: u64,
    /// Bytes sent (frames, without preamble).
    pub tx_bytes: u64,
    /// Frames received.
    pub rx_frames: u64,
    /// Data packets sent, first transmissions and retransmissions.
    pub data_packets: u64,
    /// Data packets sent again (go-back-N).
    pub retransmitted: u64,
    /// Retransmission timeouts that fired.
    pub timeouts: u64,
    /// NAKs (sequence error) sent by this NIC as responder.
    pub naks_sent: u64,
    /// NAKs received as requester.
    pub naks_received: u64,
    /// ACKs sent.
    pub acks_sent: u64,
    /// Data packets received with CE.
    pub ce_received: u64,
    /// CNPs sent (notification point).
    pub cnp_sent: u64,
    /// CNPs received (reaction point).
    pub cnp_received: u64,
    /// Rate cuts DCQCN made.
    pub rate_cuts: u64,
    /// The lowest rate any QP was set to, bits per second (line rate if
    /// never cut).
    pub min_rate_bps: u64,
    /// PFC frames received that paused a priority (quanta > 0).
    pub pfc_pause_frames: u64,
    /// Time the data priority was paused, nanoseconds.
    pub paused_ns: u64,
    /// Frames dropped on receive, by reason.
    pub rx_dropped: RxDrops,
}

/// Frames a NIC dropped on receive, one counter per reason.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RxDrops {
    /// Too short or inconsistent headers.
    pub malformed: u64,
    /// ICRC did not verify.
    pub icrc: u64,
    /// No QP with the BTH's destination QP number.
    pub unknown_qp: u64,
    /// Data with a PSN past the expected one (answered with a NAK).
    pub out_of_sequence: u64,
    /// Data with a PSN already received (acknowledged again, not written).
    pub duplicate: u64,
    /// Not addressed to this NIC or not RoCEv2/ARP/PFC.
    pub not_for_us: u64,
}

/// Smallest buffer [`Nic::transmit`] writes into: a jumbo frame.
pub const TX_BUFFER_LEN: usize = 9216;
/// Largest RoCE path MTU; larger configured values are clamped to it.
pub const MAX_PATH_MTU: usize = 4096;
/// ARP replies that may wait for the wire; a request arriving when all are
/// taken replaces the oldest (the asker retries).
const ARP_SLOTS: usize = 8;
/// Completions preallocated; the queue grows only if the caller stops
/// polling.
const COMPLETION_PREALLOC: usize = 256;
/// Queue pairs preallocated.
const QP_PREALLOC: usize = 64;
/// QPNs that differ only below this bit share an entry of the dense index
/// (a job plan numbers its QPs `peer << 8 | role << 7 | channel`).
const DENSE_SHIFT: u32 = 7;
/// The dense index covers QPNs below this (at most 32 KB per NIC).
const DENSE_QPNS: u32 = 1 << 20;
/// A frame that becomes ready within this much of the wire freeing follows
/// back to back, so rounding a wakeup up to the nanosecond never loses line
/// rate.
const BACK_TO_BACK_PS: u64 = PS_PER_NS;
/// Bits in one PFC/PAUSE quantum.
const QUANTUM_BITS: u64 = 512;

struct Slot {
    qp: QueuePair,
    np: Option<NotificationPoint>,
    /// The rate limiter, made at the QP's first CNP: until then it would
    /// sit at line rate with no timers, and a thousand-rank AllToAll has
    /// millions of QPs, most never notified.
    rp: Option<Box<ReactionPoint>>,
    /// Start of this QP's last data packet, ps.
    last_start_ps: u64,
    /// Wire bytes of that packet (0 before the first).
    last_wire: u64,
    cnp_pending: bool,
    /// In the NIC's control queue (an ACK, NAK or CNP to send).
    in_ctl: bool,
    /// In the NIC's data heap; its live entry carries this key.
    in_data: bool,
    data_key: u64,
    /// The deadline of its live timer-heap entry (`Nanos::MAX`: none).
    timer_at: Nanos,
}

/// Bytes of a RoCEv2 frame after its BTH, counted from the frame's length
/// as a switch's parser counts them (Ethernet, one optional VLAN tag, the
/// IPv4 header with its options, UDP, BTH).
fn bytes_after_bth(frame: &[u8]) -> Option<u32> {
    let l3 = if frame.get(12..14)? == TPID.to_be_bytes() {
        18
    } else {
        14
    };
    let ihl = usize::from(frame.get(l3)? & 0x0f) * 4;
    let after = l3 + ihl + 8 + bth::HEADER_LEN;
    u32::try_from(frame.len().checked_sub(after)?).ok()
}

impl Slot {
    /// Earliest start of this QP's next data packet, ps: the last one's
    /// start plus its length at the rate in force *now*, as a hardware rate
    /// limiter reprogrammed by DCQCN spaces packets (a rate raised after a
    /// send takes effect at once, not one slow packet later).
    fn next_send_ps(&self, line_rate_bps: u64) -> u64 {
        if self.last_wire == 0 {
            return 0;
        }
        let rate = self
            .rp
            .as_deref()
            .map_or(line_rate_bps, ReactionPoint::rate_bps);
        self.last_start_ps + serialisation_ps(self.last_wire, rate.max(1))
    }
}

// By hand: DCQCN's state machines need not be `Debug`.
impl std::fmt::Debug for Slot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slot")
            .field("qp", &self.qp)
            .field("rate_bps", &self.rp.as_deref().map(ReactionPoint::rate_bps))
            .field("last_start_ps", &self.last_start_ps)
            .field("cnp_pending", &self.cnp_pending)
            .finish_non_exhaustive()
    }
}

/// What `next_frame` wrote.
struct Built {
    len: usize,
    /// When the frame could have started at the earliest, ps.
    ready_ps: u64,
    /// The QP whose data it was (for pacing).
    data_slot: Option<usize>,
}

/// A NIC (see the module doc).
///
/// With thousands of queue pairs (an AllToAll of a thousand ranks) a NIC
/// must not look at every QP for every frame: QPs with an ACK, NAK or CNP
/// to send wait in a queue, QPs with data in a heap ordered by when their
/// rate limiter lets them send (then by arrival, so equals take turns), and
/// retransmission and DCQCN timers in a heap of deadlines. Entries are
/// invalidated lazily: a QP's live entry is the one its slot names.
#[derive(Debug)]
pub struct Nic {
    cfg: NicConfig,
    memory: Vec<u8>,
    /// Whether WRITEs carry real bytes (see [`Nic::with_data`]).
    carry_data: bool,
    slots: Vec<Slot>,
    /// QPN → slot. Fx, not SipHash: looked up for every frame received,
    /// and QPNs are no attacker's input.
    index: rustc_hash::FxHashMap<u32, usize>,
    /// QPN >> [`DENSE_SHIFT`] → the first slot connected with it
    /// (`u32::MAX`: none), for QPNs below [`DENSE_QPNS`]: one load where
    /// the hash takes two cache misses (its control bytes, then its
    /// bucket) on a frame's arrival. A QPN it does not hold (a second QP in
    /// the same group, or a large QPN) is looked up in `index`.
    dense: Vec<u32>,
    completions: VecDeque<Completion>,
    arp: [Option<(MacAddr, Ipv4Addr)>; ARP_SLOTS],
    arp_next: usize,
    line_free_ps: u64,
    pfc_until: [Nanos; 8],
    pause_until: Nanos,
    paused_counted_until: Nanos,
    paused_acc: u64,
    ctl: VecDeque<usize>,
    data: BinaryHeap<Reverse<(u64, u64, usize)>>,
    data_seq: u64,
    timers: BinaryHeap<Reverse<(Nanos, usize)>>,
    now: Nanos,
    stats: NicStats,
}

impl Nic {
    /// A NIC with no queue pairs and zeroed memory.
    pub fn new(cfg: NicConfig) -> Nic {
        Nic::with_data(cfg, true)
    }

    /// A NIC with no queue pairs that carries data (`carry_data`: zeroed
    /// memory of `memory_bytes`, payloads read from and landed in it, ICRCs
    /// computed and verified) or not: then it allocates no memory, WRITEs
    /// are range-checked against `memory_bytes` of virtual memory, frames
    /// go out at their true length with whatever payload bytes the transmit
    /// buffer holds and ICRC 0, and received ICRCs are not verified — a
    /// cluster-scale simulation's NICs, whose timing is all that matters.
    pub fn with_data(mut cfg: NicConfig, carry_data: bool) -> Nic {
        cfg.path_mtu = cfg.path_mtu.clamp(1, MAX_PATH_MTU);
        cfg.line_rate_bps = cfg.line_rate_bps.max(1);
        let stats = NicStats {
            min_rate_bps: cfg.line_rate_bps,
            ..NicStats::default()
        };
        Nic {
            memory: if carry_data {
                vec![0; cfg.memory_bytes]
            } else {
                Vec::new()
            },
            carry_data,
            slots: Vec::with_capacity(QP_PREALLOC),
            index: rustc_hash::FxHashMap::with_capacity_and_hasher(QP_PREALLOC, Default::default()),
            dense: Vec::new(),
            completions: VecDeque::with_capacity(COMPLETION_PREALLOC),
            arp: [None; ARP_SLOTS],
            arp_next: 0,
            line_free_ps: 0,
            pfc_until: [0; 8],
            pause_until: 0,
            paused_counted_until: 0,
            paused_acc: 0,
            ctl: VecDeque::new(),
            data: BinaryHeap::new(),
            data_seq: 0,
            timers: BinaryHeap::new(),
            now: 0,
            stats,
            cfg,
        }
    }

    /// The slot of the QP numbered `qpn`.
    #[inline]
    fn slot_of(&self, qpn: u32) -> Option<usize> {
        if let Some(&i) = self.dense.get((qpn >> DENSE_SHIFT) as usize) {
            if let Some(s) = self.slots.get(i as usize) {
                if s.qp.config().local_qpn == qpn {
                    return Some(i as usize);
                }
            }
        }
        self.index.get(&qpn).copied()
    }

    /// Adds a queue pair.
    ///
    /// # Errors
    ///
    /// [`NicError::DuplicateQp`] when `local_qpn` is taken.
    pub fn connect(&mut self, qp: QpConfig) -> Result<(), NicError> {
        let qpn = qp.local_qpn & PSN_MASK;
        if self.index.contains_key(&qpn) {
            return Err(NicError::DuplicateQp(qp.local_qpn));
        }
        let qp = QpConfig {
            local_qpn: qpn,
            remote_qpn: qp.remote_qpn & PSN_MASK,
            ..qp
        };
        let np = match &self.cfg.cc {
            CongestionControl::None => None,
            CongestionControl::Dcqcn(_) => Some(NotificationPoint::new()),
        };
        if qpn < DENSE_QPNS {
            let k = (qpn >> DENSE_SHIFT) as usize;
            if self.dense.len() <= k {
                self.dense.resize(k + 1, u32::MAX);
            }
            if self.dense[k] == u32::MAX {
                self.dense[k] = u32::try_from(self.slots.len()).unwrap_or(u32::MAX);
            }
        }
        self.index.insert(qpn, self.slots.len());
        self.slots.push(Slot {
            qp: QueuePair::new(
                qp,
                self.cfg.path_mtu,
                self.cfg.ack_every,
                self.cfg.rto_ns,
                0,
            ),
            np,
            rp: None,
            last_start_ps: 0,
            last_wire: 0,
            cnp_pending: false,
            in_ctl: false,
            in_data: false,
            data_key: 0,
            timer_at: Nanos::MAX,
        });
        Ok(())
    }

    /// Posts an RDMA WRITE; WRITEs on one QP go out in order.
    ///
    /// # Errors
    ///
    /// An unknown QP or a range outside memory.
    pub fn post_write(&mut self, qpn: u32, wr: WriteRequest) -> Result<(), NicError> {
        let i = self.slot_of(qpn).ok_or(NicError::UnknownQp(qpn))?;
        let fits = wr
            .local_offset
            .checked_add(wr.len)
            .is_some_and(|end| end <= self.memory_len());
        if !fits || u32::try_from(wr.len).is_err() {
            return Err(NicError::OutOfMemoryRange);
        }
        self.slots[i].qp.post(wr);
        self.touch(i, self.now);
        Ok(())
    }

    /// Files slot `i` where it now belongs: the control queue when it has
    /// an ACK, NAK or CNP to send, the data heap when it has data (keyed by
    /// its pacing slot), the timer heap at its earliest deadline (the
    /// retransmission timer; DCQCN's timers while they pace data). Brings
    /// its rate limiter up to `now` first.
    fn touch(&mut self, i: usize, now: Nanos) {
        let line = self.cfg.line_rate_bps;
        let s = &mut self.slots[i];
        if let Some(rp) = &mut s.rp {
            rp.on_time(now);
        }
        if (s.cnp_pending || s.qp.control().is_some()) && !s.in_ctl {
            s.in_ctl = true;
            self.ctl.push_back(i);
        }
        let has_data = s.qp.has_data();
        if has_data && !s.in_data {
            s.in_data = true;
            self.data_seq += 1;
            s.data_key = self.data_seq;
            self.data
                .push(Reverse((s.next_send_ps(line), self.data_seq, i)));
        }
        let pacing =
            s.rp.as_deref()
                .filter(|rp| has_data && rp.rate_bps() < line)
                .and_then(ReactionPoint::next_timer);
        let deadline = match (s.qp.rto_deadline(), pacing) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        if let Some(d) = deadline.filter(|&d| d < s.timer_at) {
            s.timer_at = d;
            self.timers.push(Reverse((d, i)));
        }
    }

    /// Takes a frame the switch sent this NIC.
    pub fn receive(&mut self, now: Nanos, frame: &[u8]) {
        self.receive_noting(now, frame);
    }

    /// Takes a frame as [`receive`](Self::receive) does and, when it is a
    /// RoCEv2 WRITE (whoever it is for), returns its IPv4 source and the
    /// bytes after its BTH (extension headers, payload, pad and ICRC): a
    /// simulator's per-flow delivery record, without parsing the frame a
    /// second time.
    pub fn receive_noting(&mut self, now: Nanos, frame: &[u8]) -> Option<(Ipv4Addr, u32)> {
        self.now = self.now.max(now);
        self.stats.rx_frames += 1;
        match RxFrame::parse_with(frame, self.carry_data) {
            Err(RxError::Malformed) => self.stats.rx_dropped.malformed += 1,
            Err(RxError::Icrc) => self.stats.rx_dropped.icrc += 1,
            Ok(RxFrame::Other) => self.stats.rx_dropped.not_for_us += 1,
            Ok(RxFrame::Roce(r)) => {
                let seen = is_write(r.bth.opcode)
                    .then(|| Some((r.src_ip, bytes_after_bth(frame)?)))
                    .flatten();
                self.on_roce(now, &r);
                return seen;
            }
            Ok(RxFrame::Arp {
                src_mac: _,
                dst_mac,
                arp,
            }) => {
                let for_us = self.cfg.answer_arp
                    && arp.operation == ArpOperation::Request
                    && arp.target_ip == self.cfg.ip
                    && (dst_mac == self.cfg.mac || dst_mac.is_broadcast());
                if for_us {
                    self.queue_arp_reply(arp.source_hw, arp.source_ip);
                } else {
                    self.stats.rx_dropped.not_for_us += 1;
                }
            }
            Ok(RxFrame::MacControl { dst_mac, ctl }) => {
                if dst_mac != mac_control::PAUSE_DST && dst_mac != self.cfg.mac {
                    self.stats.rx_dropped.not_for_us += 1;
                } else {
                    self.on_mac_control(now, ctl);
                }
            }
        }
        None
    }

    fn queue_arp_reply(&mut self, mac: MacAddr, ip: Ipv4Addr) {
        if self.arp.iter().flatten().any(|&(_, i)| i == ip) {
            return;
        }
        let free = self.arp.iter().position(Option::is_none);
        let at = free.unwrap_or(self.arp_next);
        self.arp[at] = Some((mac, ip));
        self.arp_next = (at + 1) % ARP_SLOTS;
    }

    fn quanta_ns(&self, quanta: u16) -> Nanos {
        let bits = u64::from(quanta) * QUANTUM_BITS;
        ps_to_ns_ceil(serialisation_ps(bits / 8, self.cfg.line_rate_bps))
    }

    fn on_mac_control(&mut self, now: Nanos, ctl: MacControlRepr) {
        match ctl {
            MacControlRepr::Pfc { enable, quanta } => {
                let mut paused = false;
                for (p, q) in quanta.iter().enumerate() {
                    if enable & (1 << p) != 0 {
                        self.pfc_until[p] = now + self.quanta_ns(*q);
                        paused |= *q > 0;
                    }
                }
                if paused {
                    self.stats.pfc_pause_frames += 1;
                }
            }
            MacControlRepr::Pause { quanta } => {
                self.pause_until = now + self.quanta_ns(quanta);
                if quanta > 0 {
                    self.stats.pfc_pause_frames += 1;
                }
            }
            MacControlRepr::Unknown(_) => {
                self.stats.rx_dropped.not_for_us += 1;
                return;
            }
        }
        let end = self.pause_end(self.cfg.priority);
        self.account_pause(now, end);
    }

    /// Keeps `paused_acc` the length of the union of the data priority's
    /// pauses, counted ahead to `paused_counted_until`.
    fn account_pause(&mut self, now: Nanos, end: Nanos) {
        let counted = self.paused_counted_until;
        let from = counted.max(now);
        if end > from {
            self.paused_acc += end - from;
            self.paused_counted_until = end;
        } else if end < counted && counted > now {
            let to = end.max(now);
            self.paused_acc -= counted - to;
            self.paused_counted_until = to;
        }
    }

    fn on_roce(&mut self, now: Nanos, r: &RoceRepr<'_>) {
        if r.dst_mac != self.cfg.mac || r.dst_ip != self.cfg.ip {
            self.stats.rx_dropped.not_for_us += 1;
            return;
        }
        let Some(i) = self.slot_of(r.bth.dest_qp) else {
            self.stats.rx_dropped.unknown_qp += 1;
            return;
        };
        let slot = &mut self.slots[i];
        if r.src_ip != slot.qp.config().remote_ip {
            self.stats.rx_dropped.not_for_us += 1;
            return;
        }
        let op = r.bth.opcode;
        if is_write(op) {
            if r.ecn == ECN_CE {
                self.stats.ce_received += 1;
                if let (Some(np), CongestionControl::Dcqcn(p)) = (&mut slot.np, &self.cfg.cc) {
                    if np.on_ce(now, p) {
                        slot.cnp_pending = true;
                    }
                }
            }
            let landing = if self.carry_data {
                Landing::Memory(&mut self.memory)
            } else {
                Landing::Discard(self.cfg.memory_bytes)
            };
            let v = slot.qp.on_data_into(
                r.bth.psn,
                op,
                r.bth.ack_req,
                r.reth,
                r.imm,
                r.payload,
                landing,
                &mut self.completions,
            );
            let d = &mut self.stats.rx_dropped;
            match v {
                RxVerdict::Accepted => {}
                RxVerdict::Duplicate => d.duplicate += 1,
                RxVerdict::OutOfSequence => d.out_of_sequence += 1,
                RxVerdict::Malformed => d.malformed += 1,
            }
        } else if op == Opcode::RcAcknowledge {
            let Some(aeth) = r.aeth else {
                self.stats.rx_dropped.malformed += 1;
                return;
            };
            let out = slot.qp.on_ack(now, r.bth.psn, aeth, &mut self.completions);
            if out.nak {
                self.stats.naks_received += 1;
            }
        } else if op == Opcode::Cnp {
            self.stats.cnp_received += 1;
            if let CongestionControl::Dcqcn(p) = &self.cfg.cc {
                let line = self.cfg.line_rate_bps;
                slot.rp
                    .get_or_insert_with(|| Box::new(ReactionPoint::new(p, line)))
                    .on_cnp(now);
            }
        } else {
            self.stats.rx_dropped.not_for_us += 1;
            return;
        }
        self.touch(i, now);
    }

    /// The 802.1p priority CNPs go out on, if this NIC sends any.
    fn cnp_priority(&self) -> u8 {
        match &self.cfg.cc {
            CongestionControl::Dcqcn(p) => p.cnp_priority(),
            CongestionControl::None => self.cfg.priority,
        }
    }

    /// When priority `p` may send again (in the past when it may now).
    fn pause_end(&self, p: u8) -> Nanos {
        self.pfc_until[usize::from(p & 7)].max(self.pause_until)
    }

    fn paused(&self, p: u8, now: Nanos) -> bool {
        now < self.pause_end(p)
    }

    fn max_frame_len(&self) -> usize {
        OUTER_LEN
            + bth::HEADER_LEN
            + reth::HEADER_LEN
            + IMMDT_LEN
            + self.cfg.path_mtu
            + 3
            + ICRC_LEN
    }

    /// Runs the timers due by `now`: a retransmission timeout goes back
    /// (go-back-N), a DCQCN timer may raise a rate (the QP's data entry is
    /// then re-keyed to its earlier slot).
    fn run_timers(&mut self, now: Nanos) {
        while let Some(&Reverse((t, i))) = self.timers.peek() {
            if t > now {
                break;
            }
            self.timers.pop();
            let s = &mut self.slots[i];
            if t != s.timer_at {
                continue;
            }
            s.timer_at = Nanos::MAX;
            if s.qp.on_timer(now) {
                self.stats.timeouts += 1;
            }
            let before = s.rp.as_deref().map(ReactionPoint::rate_bps);
            self.touch(i, now);
            let s = &mut self.slots[i];
            if s.in_data && s.rp.as_deref().map(ReactionPoint::rate_bps) != before {
                self.data_seq += 1;
                s.data_key = self.data_seq;
                let ready = s.next_send_ps(self.cfg.line_rate_bps);
                self.data.push(Reverse((ready, self.data_seq, i)));
            }
        }
    }

    /// Writes the next frame into `buf` (at least 9,216 bytes) if one may
    /// start at `now`, running the timers due by `now` first; returns its
    /// length.
    pub fn transmit(&mut self, now: Nanos, buf: &mut [u8]) -> Option<usize> {
        self.now = self.now.max(now);
        self.run_timers(now);
        if buf.len() < self.max_frame_len() {
            return None;
        }
        let now_ps = now.saturating_mul(PS_PER_NS);
        if self.line_free_ps > now_ps {
            return None;
        }
        let built = self.next_frame(now, now_ps, buf)?;
        let mut start = self.line_free_ps.max(built.ready_ps);
        let catch_up_ps = self.cfg.catch_up_ns.saturating_mul(PS_PER_NS);
        if catch_up_ps > 0 {
            // Nothing is owed for the time a pause held the line.
            let pause_end = self.pause_end(self.cfg.priority);
            start = start.max(pause_end.saturating_mul(PS_PER_NS).min(now_ps));
        }
        if now_ps - start >= BACK_TO_BACK_PS.max(catch_up_ps) {
            start = now_ps;
        }
        let wire = wire_bytes(built.len);
        self.line_free_ps = start + serialisation_ps(wire, self.cfg.line_rate_bps);
        if let Some(i) = built.data_slot {
            let s = &mut self.slots[i];
            s.last_start_ps = start;
            s.last_wire = wire;
            if let Some(rp) = &mut s.rp {
                rp.on_sent(now, built.len as u64);
            }
            self.touch(i, now);
        }
        self.stats.tx_frames += 1;
        self.stats.tx_bytes += built.len as u64;
        Some(built.len)
    }

    fn next_frame(&mut self, now: Nanos, now_ps: u64, buf: &mut [u8]) -> Option<Built> {
        if now >= self.pause_until {
            if let Some(at) = self.arp.iter().position(Option::is_some) {
                if let Some((mac, ip)) = self.arp[at].take() {
                    let len = emit_arp_reply(self.cfg.mac, self.cfg.ip, mac, ip, buf).ok()?;
                    return Some(Built {
                        len,
                        ready_ps: 0,
                        data_slot: None,
                    });
                }
            }
        }
        let cnp_paused = self.paused(self.cnp_priority(), now);
        let data_paused = self.paused(self.cfg.priority, now);
        // The control queue: the first QP with something it may send now.
        let mut k = 0;
        while k < self.ctl.len() {
            let i = self.ctl[k];
            let s = &mut self.slots[i];
            let built = if s.cnp_pending && !cnp_paused {
                s.cnp_pending = false;
                self.stats.cnp_sent += 1;
                Some(self.emit_cnp(i, buf))
            } else if !data_paused {
                s.qp.take_control().map(|c| {
                    if c.aeth.syndrome == Syndrome::NakPsnSequenceError {
                        self.stats.naks_sent += 1;
                    } else {
                        self.stats.acks_sent += 1;
                    }
                    self.emit_control(i, c, buf)
                })
            } else {
                None
            };
            let s = &mut self.slots[i];
            if !s.cnp_pending && s.qp.control().is_none() {
                s.in_ctl = false;
                self.ctl.remove(k);
            } else if built.is_some() {
                // Served: to the back of the queue, so QPs take turns.
                self.ctl.remove(k);
                self.ctl.push_back(i);
            } else {
                // Held by a pause: the next one may go.
                k += 1;
            }
            if let Some(len) = built {
                return Some(Built {
                    len: len?,
                    ready_ps: 0,
                    data_slot: None,
                });
            }
        }
        if data_paused {
            return None;
        }
        let line = self.cfg.line_rate_bps;
        while let Some(&Reverse((ready, key, i))) = self.data.peek() {
            let s = &mut self.slots[i];
            if key != s.data_key || !s.in_data {
                self.data.pop();
                continue;
            }
            if !s.qp.has_data() {
                self.data.pop();
                s.in_data = false;
                continue;
            }
            let actual = s.next_send_ps(line);
            if actual != ready {
                // The rate changed since it was filed: file it again.
                self.data.pop();
                self.data_seq += 1;
                s.data_key = self.data_seq;
                self.data.push(Reverse((actual, self.data_seq, i)));
                continue;
            }
            if ready > now_ps {
                return None;
            }
            self.data.pop();
            s.in_data = false;
            // `transmit` files it again once its pacing state is updated.
            let len = self.emit_data(now, i, buf);
            return Some(Built {
                len: len?,
                ready_ps: ready,
                data_slot: Some(i),
            });
        }
        None
    }

    fn repr_for<'a>(&self, i: usize, payload: &'a [u8]) -> RoceRepr<'a> {
        let qp = self.slots[i].qp.config();
        RoceRepr {
            src_mac: self.cfg.mac,
            dst_mac: self.cfg.gateway_mac,
            src_ip: self.cfg.ip,
            dst_ip: qp.remote_ip,
            dscp: self.cfg.dscp,
            ecn: ECN_ECT0,
            ttl: TTL,
            src_port: qp.udp_sport,
            bth: bth_repr(Opcode::RcAcknowledge, qp.remote_qpn, 0, false),
            reth: None,
            aeth: None,
            imm: None,
            payload,
        }
    }

    fn emit_cnp(&self, i: usize, buf: &mut [u8]) -> Option<usize> {
        let mut r = self.repr_for(i, &[0; CNP_RESERVED_LEN]);
        if let CongestionControl::Dcqcn(p) = &self.cfg.cc {
            r.dscp = p.cnp_dscp();
        }
        r.ecn = 0;
        r.bth.opcode = Opcode::Cnp;
        r.bth.becn = true;
        r.emit(buf).ok()
    }

    fn emit_control(&self, i: usize, c: Control, buf: &mut [u8]) -> Option<usize> {
        let mut r = self.repr_for(i, &[]);
        r.bth.psn = c.psn;
        r.aeth = Some(c.aeth);
        r.emit(buf).ok()
    }

    fn emit_data(&mut self, now: Nanos, i: usize, buf: &mut [u8]) -> Option<usize> {
        let d = self.slots[i].qp.next_data(now)?;
        self.stats.data_packets += 1;
        if d.retransmission {
            self.stats.retransmitted += 1;
        }
        let end = d.local_offset.checked_add(d.len)?;
        if !self.carry_data {
            if end > self.cfg.memory_bytes {
                return None;
            }
            let mut r = self.repr_for(i, &[]);
            r.bth = bth_repr(d.opcode, r.bth.dest_qp, d.psn, d.ack_req);
            r.reth = d.reth;
            r.imm = d.imm;
            return r.emit_data_free(d.len, buf).ok();
        }
        let payload = self.memory.get(d.local_offset..end)?;
        let mut r = self.repr_for(i, payload);
        r.bth = bth_repr(d.opcode, r.bth.dest_qp, d.psn, d.ack_req);
        r.reth = d.reth;
        r.imm = d.imm;
        r.emit(buf).ok()
    }

    /// The earliest time [`transmit`](Self::transmit) may have something to
    /// do (a frame's turn, a pacing slot, a pause ending, a timer).
    pub fn next_wakeup(&self) -> Option<Nanos> {
        fn earliest(best: &mut Option<Nanos>, t: Nanos) {
            *best = Some(best.map_or(t, |b| b.min(t)));
        }
        let line = ps_to_ns_ceil(self.line_free_ps);
        let mut best = None;
        if self.arp.iter().any(Option::is_some) {
            earliest(&mut best, line.max(self.pause_until));
        }
        let cnp_end = self.pause_end(self.cnp_priority());
        let data_end = self.pause_end(self.cfg.priority);
        for &i in &self.ctl {
            let s = &self.slots[i];
            if s.cnp_pending {
                earliest(&mut best, line.max(cnp_end));
            }
            if s.qp.control().is_some() {
                earliest(&mut best, line.max(data_end));
            }
        }
        // A stale entry on top only wakes the NIC early.
        if let Some(Reverse((ready, _, _))) = self.data.peek() {
            earliest(&mut best, line.max(data_end).max(ps_to_ns_ceil(*ready)));
        }
        if let Some(Reverse((t, _))) = self.timers.peek() {
            earliest(&mut best, *t);
        }
        best
    }

    /// The next completion, oldest first.
    pub fn poll_completion(&mut self) -> Option<Completion> {
        self.completions.pop_front()
    }

    /// Whether a completion waits, without taking it: a host skips its
    /// bookkeeping while none does.
    pub fn has_completion(&self) -> bool {
        !self.completions.is_empty()
    }

    /// Bytes of registered memory WRITEs are checked against: the
    /// configured size, allocated or (data-free) virtual.
    pub fn memory_len(&self) -> usize {
        if self.carry_data {
            self.memory.len()
        } else {
            self.cfg.memory_bytes
        }
    }

    /// Whether WRITEs carry real bytes (see [`Nic::with_data`]).
    pub fn carries_data(&self) -> bool {
        self.carry_data
    }

    /// Registered memory (empty on a data-free NIC).
    pub fn memory(&self) -> &[u8] {
        &self.memory
    }

    /// Registered memory, to fill or reduce into.
    pub fn memory_mut(&mut self) -> &mut [u8] {
        &mut self.memory
    }

    /// Nothing to send, nothing unacknowledged.
    pub fn idle(&self) -> bool {
        self.arp.iter().all(Option::is_none)
            && self.slots.iter().all(|s| s.qp.idle() && !s.cnp_pending)
    }

    /// Counters.
    pub fn stats(&self) -> NicStats {
        let mut s = self.stats.clone();
        // The reaction points count their own cuts, those a monitor period
        // deferred included, and the lowest rate they set.
        for rp in self.slots.iter().filter_map(|x| x.rp.as_ref()) {
            let r = rp.stats();
            s.rate_cuts += r.cuts;
            s.min_rate_bps = s.min_rate_bps.min(r.min_rate_bps);
        }
        s.paused_ns = self.paused_acc - self.paused_counted_until.saturating_sub(self.now);
        s
    }

    /// The current rate of a queue pair's pacing, bits per second (line rate
    /// without DCQCN); `None` for an unknown QP.
    pub fn qp_rate_bps(&self, qpn: u32) -> Option<u64> {
        let s = &self.slots[self.slot_of(qpn)?];
        Some(
            s.rp.as_ref()
                .map_or(self.cfg.line_rate_bps, |rp| rp.rate_bps()),
        )
    }

    /// The NIC's configuration (path MTU as clamped).
    pub fn config(&self) -> &NicConfig {
        &self.cfg
    }
}
