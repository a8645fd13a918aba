//! Port backends: the only code that moves frames in and out of railyard.
//!
//! A backend moves bursts and reports link state, MAC and its own counters;
//! everything else (parsing, queues, counters per reason) is the pipeline's.

use crate::clock::Nanos;
use crate::packet::{Burst, Pool};
use crate::wire::MacAddr;

pub mod afpacket;
pub mod afxdp;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod null;
pub mod pcap;
pub mod record_file;
pub mod refresh;
pub mod ring;
pub mod spool;
mod sys;
pub mod tap;
pub mod trace;
pub mod upstream;

/// Counters a backend keeps about its own I/O (not the pipeline's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoCounters {
    /// Frames delivered by `rx_burst`.
    pub rx_frames: u64,
    /// Frames the backend had to discard on receive (kernel ring drops,
    /// oversize frames, pool exhausted).
    pub rx_dropped: u64,
    /// Frames accepted by `tx_burst`.
    pub tx_frames: u64,
    /// Frames `tx_burst` could not send (and dropped).
    pub tx_errors: u64,
    /// Frames discarded on receive because the pool had no free buffer
    /// (also in `rx_dropped`); the switch reports them as `no_buffer`
    /// drops. Backends that leave such frames in their ring (AF_PACKET,
    /// AF_XDP) count none: what overflows there is the kernel's drop.
    pub rx_no_buffer: u64,
    /// Frames discarded on receive for being longer than the largest packet
    /// buffer (also in `rx_dropped`); the switch reports them as
    /// `oversize` drops.
    pub rx_oversize: u64,
    /// Damaged capture records a replay was told to stop at (also in
    /// `rx_dropped`); the switch reports them as `capture_damaged` drops.
    pub rx_damaged: u64,
    /// The longest a frame waited in the kernel's receive ring before the
    /// switch read it, in ns: frames there are invisible to ingress
    /// accounting, so a wait longer than the lossless headroom covers is a
    /// loss PFC could not prevent. Zero where the backend cannot tell (only
    /// AF_PACKET's rings stamp their frames).
    pub rx_wait_max_ns: u64,
}

/// What one [`Port::tx_burst`] did with the frames it took from the front
/// of its burst: sent them, or failed to and discarded them. The pipeline
/// counts the first as `tx_packets` and the second as `tx_error` drops, so
/// a frame lost in the backend is never counted as transmitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxDone {
    /// Frames handed to the link.
    pub sent: usize,
    /// Frames the backend could not send and discarded (also in its
    /// [`IoCounters::tx_errors`]).
    pub failed: usize,
    /// The bytes of the failed frames, so that `tx_bytes` counts only what
    /// was sent.
    pub failed_bytes: u64,
}

impl TxDone {
    /// `n` frames sent, none failed.
    pub const fn sent(n: usize) -> Self {
        TxDone {
            sent: n,
            failed: 0,
            failed_bytes: 0,
        }
    }

    /// How many frames left the burst (sent or failed).
    pub const fn taken(&self) -> usize {
        self.sent + self.failed
    }
}

/// A source and sink of frames for one interface.
///
/// Implementations never block and never panic on bad input: a frame that
/// cannot be delivered is counted in [`IoCounters`] and discarded.
pub trait Port: Send {
    /// Appends up to `BURST_SIZE - burst.len()` received frames to `burst`,
    /// taking buffers from `pool`, stamping `timestamp` with the arrival time
    /// (`now` for live ports, the trace's time for replay). Returns how many
    /// were appended.
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize;

    /// Transmits packets from the front of `burst`, removing those it sent
    /// and those it could not send and discarded (link gone, frame refused);
    /// packets it cannot take now (ring full) stay in `burst` for a retry.
    /// Says how many of each left, so that the pipeline counts a discarded
    /// frame as a drop rather than as transmitted.
    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> TxDone;

    /// Whether the link is up; a down port neither receives nor transmits.
    fn link_up(&self) -> bool {
        true
    }

    /// The hardware MAC address, when the backend has one of its own.
    fn mac(&self) -> Option<MacAddr> {
        None
    }

    /// The backend's own counters.
    fn io_counters(&self) -> IoCounters;

    /// A short description for show output, e.g. `af-packet veth1`.
    fn describe(&self) -> String;

    /// Whether a replay source has no more frames to deliver (live ports: never).
    fn exhausted(&self) -> bool {
        false
    }

    /// The timestamp of the next frame a replay source would deliver.
    fn next_rx_time(&self) -> Option<Nanos> {
        None
    }

    /// Writes out anything buffered (pcap sinks); called at shutdown.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }

    /// Descriptors that turn readable when frames arrive, so an idle
    /// worker can sleep in `poll(2)` and wake for the next frame instead of
    /// after a fixed step; empty when the backend cannot wake a sleeper.
    fn wake_fds(&self) -> Vec<std::os::fd::RawFd> {
        Vec::new()
    }

    /// A second handle that transmits on the same link and receives
    /// nothing, for another worker to send through (see [`crate::lanes`]);
    /// `None` when the backend cannot share its link that way.
    fn tx_lane(&mut self) -> Option<Box<dyn Port>> {
        None
    }
}
