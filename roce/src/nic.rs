//! A RoCEv2 NIC: reliable-connected queue pairs behind one Ethernet port,
//! each paced at its DCQCN rate, all serialised at line rate, and paused per
//! priority by PFC from the switch. Frames in, frames out, time injected.
//!
//! CONTRACT (the signatures below are fixed; `host`, `railyard sim` and the
//! live driver are written against them).

use std::net::Ipv4Addr;

use serde::{Deserialize, Serialize};

use crate::dcqcn::DcqcnParams;
use crate::{MacAddr, Nanos};

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
    /// Congestion control (CNP DSCP and priority come from its parameters;
    /// with `None` the NIC still answers CE with CNPs at DSCP 48, priority 6).
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
}

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

/// A NIC (see the module doc).
#[derive(Debug)]
pub struct Nic {
    _private: (),
}

impl Nic {
    /// A NIC with no queue pairs and zeroed memory.
    pub fn new(_cfg: NicConfig) -> Nic {
        todo!()
    }

    /// Adds a queue pair.
    ///
    /// # Errors
    ///
    /// [`NicError::DuplicateQp`] when `local_qpn` is taken.
    pub fn connect(&mut self, _qp: QpConfig) -> Result<(), NicError> {
        todo!()
    }

    /// Posts an RDMA WRITE; WRITEs on one QP go out in order.
    ///
    /// # Errors
    ///
    /// An unknown QP or a range outside memory.
    pub fn post_write(&mut self, _qpn: u32, _wr: WriteRequest) -> Result<(), NicError> {
        todo!()
    }

    /// Takes a frame the switch sent this NIC.
    pub fn receive(&mut self, _now: Nanos, _frame: &[u8]) {
        todo!()
    }

    /// Writes the next frame into `buf` (at least 9,216 bytes) if one may
    /// start at `now`, running the timers due by `now` first; returns its
    /// length.
    pub fn transmit(&mut self, _now: Nanos, _buf: &mut [u8]) -> Option<usize> {
        todo!()
    }

    /// The earliest time [`transmit`](Self::transmit) may have something to
    /// do (a frame's turn, a pacing slot, a pause ending, a timer).
    pub fn next_wakeup(&self) -> Option<Nanos> {
        todo!()
    }

    /// The next completion, oldest first.
    pub fn poll_completion(&mut self) -> Option<Completion> {
        todo!()
    }

    /// Registered memory.
    pub fn memory(&self) -> &[u8] {
        todo!()
    }

    /// Registered memory, to fill or reduce into.
    pub fn memory_mut(&mut self) -> &mut [u8] {
        todo!()
    }

    /// Nothing to send, nothing unacknowledged.
    pub fn idle(&self) -> bool {
        todo!()
    }

    /// Counters.
    pub fn stats(&self) -> NicStats {
        todo!()
    }
}
