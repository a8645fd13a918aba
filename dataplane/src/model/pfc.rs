//! What priority flow control does on one interface, as plain data: the
//! lossless priorities, the ingress thresholds and the watchdog's timers.
//! The behaviour these drive (and how the defaults are derived) is
//! described in [`crate::pfc`].

use super::DEFAULT_BUFFER_BYTES;
use crate::clock::Nanos;

/// Number of 802.1p priorities (and priority groups).
pub const PRIORITIES: usize = 8;
/// Pause quanta sent in an XOFF when the configuration gives none: the maximum.
pub const DEFAULT_QUANTA: u16 = 0xFFFF;
/// Speed assumed for pause timing on a port without one, in Mb/s.
pub const DEFAULT_SPEED_MBPS: u32 = 100_000;
/// Cable length assumed for default headroom, in metres.
pub const DEFAULT_CABLE_METRES: u64 = 100;
/// Propagation delay of a cable, ns per metre.
pub const CABLE_NS_PER_METRE: u64 = 5;
/// The peer's response time for default headroom, in bit times.
pub const PEER_RESPONSE_BITS: u64 = 3840;
/// Ethernet bytes around an IP MTU (header, tag, FCS, preamble, gap).
pub const FRAME_OVERHEAD_BYTES: u64 = 42;
/// Default xOFF is the port buffer divided by this.
pub const XOFF_BUFFER_DIVISOR: u64 = 8;
/// How long a worker on a host shared with other busy threads may go
/// without polling, which is the response time default headroom covers on a
/// software backend (AF_PACKET, AF_XDP, TAP, DPDK, rings). A port's frames
/// are admitted, and its pauses sent and refreshed, only while its worker
/// polls; everything a peer sends in a gap lands beyond xOFF. Measured on a
/// two-core host running four switches and their senders: gaps of 20 ms and
/// more several times a second when it is overloaded, well under a
/// millisecond when each worker has a core. `show queuing interface` reports
/// the gaps of the running switch.
pub const SOFTWARE_RESPONSE_NS: u64 = 10_000_000;

/// Thresholds of one ingress priority group, in bytes buffered (the
/// `Default` is all zeros: every lossless byte overflows).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgThresholds {
    /// At or above this occupancy the port sends XOFF.
    pub xoff_bytes: u64,
    /// Below this occupancy (or when empty) the port sends XON (quanta 0).
    pub xon_bytes: u64,
    /// Bytes admitted beyond xOFF while the peer reacts; beyond it, `ingress_overflow`.
    pub headroom_bytes: u64,
}

impl PgThresholds {
    /// The defaults for a port of `speed_mbps` (100 Gb/s when `None`) with IP
    /// MTU `mtu` and `buffer_bytes` of buffer (see the module documentation).
    pub fn default_for(speed_mbps: Option<u32>, mtu: u16, buffer_bytes: u64) -> Self {
        let speed = speed_or_default(speed_mbps);
        let frame = u64::from(mtu) + FRAME_OVERHEAD_BYTES;
        // bits = ns × Mb/s / 1000; bytes = bits / 8.
        let cable_bytes = 2 * DEFAULT_CABLE_METRES * CABLE_NS_PER_METRE * speed / 8000;
        let response_bytes = PEER_RESPONSE_BITS / 8;
        let xoff = buffer_bytes / XOFF_BUFFER_DIVISOR;
        PgThresholds {
            xoff_bytes: xoff,
            xon_bytes: xoff / 2,
            headroom_bytes: 2 * frame + cable_bytes + response_bytes,
        }
    }

    /// The defaults for a port a software poll loop serves: as
    /// [`default_for`](Self::default_for), with the headroom of
    /// [`software_headroom_bytes`](Self::software_headroom_bytes) but no
    /// more than the port buffer. The second value is the headroom the
    /// buffer cut, when it did.
    pub fn software_default_for(
        speed_mbps: Option<u32>,
        mtu: u16,
        buffer_bytes: u64,
    ) -> (Self, Option<u64>) {
        let mut t = Self::default_for(speed_mbps, mtu, buffer_bytes);
        let needed = Self::software_headroom_bytes(speed_mbps, mtu);
        t.headroom_bytes = needed.min(buffer_bytes);
        (t, (needed > buffer_bytes).then_some(needed))
    }

    /// The headroom a software path needs: the wire's terms of
    /// [`default_for`](Self::default_for) plus [`SOFTWARE_RESPONSE_NS`] at
    /// the port's speed.
    pub fn software_headroom_bytes(speed_mbps: Option<u32>, mtu: u16) -> u64 {
        Self::default_for(speed_mbps, mtu, 0).headroom_bytes
            + bytes_at(SOFTWARE_RESPONSE_NS, speed_mbps)
    }
}

/// How long after a port sends a pause its peer's frames stop arriving, on
/// a wire: the cable's round trip ([`DEFAULT_CABLE_METRES`]), a largest
/// frame the port may be sending when it decides (the pause waits for it)
/// and one the peer may be sending when the pause arrives, and the peer's
/// response ([`PEER_RESPONSE_BITS`]). The same terms as
/// [`PgThresholds::default_for`]'s headroom, in time rather than bytes, so
/// replay, which models them, loses nothing with that default and shows
/// what a smaller headroom would lose.
pub fn wire_response_ns(speed_mbps: Option<u32>, mtu: u16) -> u64 {
    let speed = speed_or_default(speed_mbps);
    let bits = 2 * (u64::from(mtu) + FRAME_OVERHEAD_BYTES) * 8 + PEER_RESPONSE_BITS;
    // ns = bits × 1000 / Mb/s.
    2 * DEFAULT_CABLE_METRES * CABLE_NS_PER_METRE + (bits * 1000).div_ceil(speed)
}

/// Bytes a sender at `speed_mbps` (100 Gb/s when `None`) puts on the wire
/// in `ns` nanoseconds.
pub fn bytes_at(ns: u64, speed_mbps: Option<u32>) -> u64 {
    // bits = ns × Mb/s / 1000; bytes = bits / 8.
    ns.saturating_mul(speed_or_default(speed_mbps)) / 8000
}

/// PFC on one interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcModel {
    /// Lossless priorities (bit n = priority n); 0 when PFC is off.
    pub enabled_priorities: u8,
    /// Ingress thresholds per priority group.
    pub pg: [PgThresholds; PRIORITIES],
    /// Quanta sent in XOFF frames.
    pub quanta: u16,
    /// Act on 802.3x PAUSE (only when no priority is lossless).
    pub honor_pause_8023x: bool,
    /// The PFC watchdog; `None` when off.
    pub watchdog: Option<WatchdogModel>,
}

/// PFC watchdog timers, so a peer that never stops pausing cannot wedge a queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchdogModel {
    /// Polling interval (NX-OS `watch-dog interval`, default 100 ms).
    pub interval_ns: Nanos,
    /// Intervals a non-empty queue must stay paused to be declared stormed.
    pub shutdown_multiplier: u32,
    /// Intervals without pause frames before a stormed queue is restored; 0: never.
    pub restore_multiplier: u32,
    /// Intervals after the storm before a stormed queue is restored whether
    /// or not pause frames still arrive (NX-OS `fixed-restore multiplier`,
    /// for a peer that never stops pausing); 0: off.
    pub fixed_restore_multiplier: u32,
    /// Lossless traffic arriving on the port while the watchdog has shut its
    /// queue for that priority is forwarded as lossy (railyard's
    /// `priority-flow-control watch-dog ingress forward`) instead of dropped
    /// as NX-OS does (`pfc_watchdog_ingress`).
    pub forward_ingress: bool,
}

impl WatchdogModel {
    /// How long a queue must stay paused to be declared stormed.
    pub fn detect_ns(&self) -> Nanos {
        self.interval_ns * u64::from(self.shutdown_multiplier.max(1))
    }

    /// How long without pause frames restores a stormed queue; `None`: never.
    pub fn restore_ns(&self) -> Option<Nanos> {
        (self.restore_multiplier > 0).then(|| self.interval_ns * u64::from(self.restore_multiplier))
    }

    /// How long after a storm a stormed queue is restored regardless of
    /// pause frames; `None`: no fixed restore.
    pub fn fixed_restore_ns(&self) -> Option<Nanos> {
        (self.fixed_restore_multiplier > 0)
            .then(|| self.interval_ns * u64::from(self.fixed_restore_multiplier))
    }
}

impl Default for PfcModel {
    fn default() -> Self {
        PfcModel {
            enabled_priorities: 0,
            // A hand-built model that only sets `enabled_priorities` gets
            // usable thresholds: those of a 100G port, MTU 1500, default buffer.
            pg: [PgThresholds::default_for(None, 1500, DEFAULT_BUFFER_BYTES); PRIORITIES],
            quanta: DEFAULT_QUANTA,
            honor_pause_8023x: true,
            watchdog: None,
        }
    }
}

/// A port's speed in Mb/s for PFC's timing and headroom: its own, or
/// [`DEFAULT_SPEED_MBPS`] when it has none (or 0).
#[inline]
pub fn speed_or_default(speed_mbps: Option<u32>) -> u64 {
    u64::from(speed_mbps.filter(|s| *s > 0).unwrap_or(DEFAULT_SPEED_MBPS))
}
