//! What priority flow control does on one interface, as plain data: the
//! lossless priorities, the ingress thresholds, the watchdog's timers and
//! the delays a pause takes on the link.
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
/// Cable length assumed when an interface gives none
/// (`priority-flow-control cable-length`), in metres.
pub const DEFAULT_CABLE_METRES: u64 = 100;
/// Propagation delay of a cable, ns per metre.
pub const CABLE_NS_PER_METRE: u64 = 5;
/// The peer's response time assumed when an interface gives none
/// (`priority-flow-control peer-response`), in bit times.
pub const PEER_RESPONSE_BITS: u64 = 3840;
/// Ethernet bytes around an IP MTU (header, tag, FCS, preamble, gap).
pub const FRAME_OVERHEAD_BYTES: u64 = 42;
/// Default xOFF is the port buffer divided by this.
pub const XOFF_BUFFER_DIVISOR: u64 = 8;
/// How long a worker on a host shared with other busy threads may go
/// without polling, which is the response time default headroom covers on a
/// software backend (AF_PACKET, AF_XDP, TAP, DPDK, rings) when the
/// interface gives none (`priority-flow-control software-response`). A port's frames
/// are admitted, and its pauses sent and refreshed, only while its worker
/// polls; everything a peer sends in a gap lands beyond xOFF. Measured on a
/// two-core host running four switches and their senders: gaps of 20 ms and
/// more several times a second when it is overloaded, well under a
/// millisecond when each worker has a core. `show queuing interface` reports
/// the gaps of the running switch.
pub const SOFTWARE_RESPONSE_NS: u64 = 10_000_000;

/// How long the peer takes to stop sending once a pause reaches it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerResponse {
    /// In bit times at the port's speed, as 802.1Qbb states the response of
    /// a MAC and PHY (so it shrinks in time as the link gets faster).
    Bits(u64),
    /// A fixed time in nanoseconds, as a host's software answers.
    Nanos(u64),
}

impl PeerResponse {
    /// The response in nanoseconds at `speed_mbps` (100 Gb/s when `None`).
    pub fn ns_at(self, speed_mbps: Option<u32>) -> u64 {
        match self {
            // ns = bits × 1000 / Mb/s.
            PeerResponse::Bits(b) => b
                .saturating_mul(1000)
                .div_ceil(speed_or_default(speed_mbps)),
            PeerResponse::Nanos(ns) => ns,
        }
    }

    /// What a sender at `speed_mbps` puts on the wire during the response.
    pub fn bytes_at(self, speed_mbps: Option<u32>) -> u64 {
        match self {
            PeerResponse::Bits(b) => b / 8,
            PeerResponse::Nanos(ns) => bytes_at(ns, speed_mbps),
        }
    }
}

/// The delays between a port deciding to pause and its peer's frames no
/// longer arriving, per link: what default headroom is derived from, what
/// replay's closed loop waits before a sender obeys, and what `check`
/// holds a configured headroom against. The `Default` is the standard
/// terms ([`DEFAULT_CABLE_METRES`], [`PEER_RESPONSE_BITS`],
/// [`SOFTWARE_RESPONSE_NS`]); an interface's
/// `priority-flow-control cable-length`, `peer-response` and
/// `software-response` lines replace them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PfcDelays {
    /// Cable to the peer in metres, at [`CABLE_NS_PER_METRE`]: the pause
    /// travels it one way and the frames already sent travel it back.
    pub cable_metres: u64,
    /// The peer's reaction once the pause arrives.
    pub peer_response: PeerResponse,
    /// How long the poll loop of a software backend may go without polling
    /// (ignored where no poll loop serves the port, as in replay).
    pub software_response_ns: u64,
}

impl Default for PfcDelays {
    fn default() -> Self {
        PfcDelays {
            cable_metres: DEFAULT_CABLE_METRES,
            peer_response: PeerResponse::Bits(PEER_RESPONSE_BITS),
            software_response_ns: SOFTWARE_RESPONSE_NS,
        }
    }
}

impl PfcDelays {
    /// The cable's round trip, in nanoseconds.
    pub fn cable_round_trip_ns(&self) -> u64 {
        self.cable_metres.saturating_mul(2 * CABLE_NS_PER_METRE)
    }

    /// The headroom a wire needs: a largest frame in flight at each end
    /// (the pause waits behind one the port is sending, and the peer
    /// finishes one it has begun), what the peer sends during the cable's
    /// round trip and during its response, at the port's speed.
    pub fn wire_headroom_bytes(&self, speed_mbps: Option<u32>, mtu: u16) -> u64 {
        let frame = u64::from(mtu) + FRAME_OVERHEAD_BYTES;
        (2 * frame)
            .saturating_add(bytes_at(self.cable_round_trip_ns(), speed_mbps))
            .saturating_add(self.peer_response.bytes_at(speed_mbps))
    }

    /// The headroom a software path needs: the wire's
    /// ([`wire_headroom_bytes`](Self::wire_headroom_bytes)) plus what the
    /// peer sends during [`software_response_ns`](Self::software_response_ns).
    pub fn software_headroom_bytes(&self, speed_mbps: Option<u32>, mtu: u16) -> u64 {
        self.wire_headroom_bytes(speed_mbps, mtu)
            .saturating_add(bytes_at(self.software_response_ns, speed_mbps))
    }

    /// How long after a port sends a pause its peer's frames stop arriving,
    /// on a wire: the terms of
    /// [`wire_headroom_bytes`](Self::wire_headroom_bytes) in time rather
    /// than bytes, so replay, which waits this long before a sender obeys,
    /// loses nothing with the headroom derived from the same terms and
    /// shows what a smaller headroom would lose.
    pub fn wire_response_ns(&self, speed_mbps: Option<u32>, mtu: u16) -> u64 {
        let speed = speed_or_default(speed_mbps);
        let (bits, ns) = match self.peer_response {
            PeerResponse::Bits(b) => (b, 0),
            PeerResponse::Nanos(ns) => (0, ns),
        };
        let bits = (2 * (u64::from(mtu) + FRAME_OVERHEAD_BYTES) * 8).saturating_add(bits);
        // ns = bits × 1000 / Mb/s.
        self.cable_round_trip_ns()
            .saturating_add(bits.saturating_mul(1000).div_ceil(speed))
            .saturating_add(ns)
    }
}

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
    /// MTU `mtu`, `buffer_bytes` of buffer and the link's `delays` (see the
    /// module documentation): the headroom is
    /// [`PfcDelays::wire_headroom_bytes`].
    pub fn default_for(
        speed_mbps: Option<u32>,
        mtu: u16,
        buffer_bytes: u64,
        delays: &PfcDelays,
    ) -> Self {
        let xoff = buffer_bytes / XOFF_BUFFER_DIVISOR;
        PgThresholds {
            xoff_bytes: xoff,
            xon_bytes: xoff / 2,
            headroom_bytes: delays.wire_headroom_bytes(speed_mbps, mtu),
        }
    }

    /// The defaults for a port a software poll loop serves: as
    /// [`default_for`](Self::default_for), with the headroom of
    /// [`PfcDelays::software_headroom_bytes`] but no more than the port
    /// buffer. The second value is the headroom the buffer cut, when it did.
    pub fn software_default_for(
        speed_mbps: Option<u32>,
        mtu: u16,
        buffer_bytes: u64,
        delays: &PfcDelays,
    ) -> (Self, Option<u64>) {
        let mut t = Self::default_for(speed_mbps, mtu, buffer_bytes, delays);
        let needed = delays.software_headroom_bytes(speed_mbps, mtu);
        t.headroom_bytes = needed.min(buffer_bytes);
        (t, (needed > buffer_bytes).then_some(needed))
    }
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
    /// The delays a pause takes on this link, which the default thresholds
    /// were derived from and replay's closed loop waits out.
    pub delays: PfcDelays,
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
            pg: [PgThresholds::default_for(None, 1500, DEFAULT_BUFFER_BYTES, &PfcDelays::default());
                PRIORITIES],
            quanta: DEFAULT_QUANTA,
            honor_pause_8023x: true,
            watchdog: None,
            delays: PfcDelays::default(),
        }
    }
}

/// A port's speed in Mb/s for PFC's timing and headroom: its own, or
/// [`DEFAULT_SPEED_MBPS`] when it has none (or 0).
#[inline]
pub fn speed_or_default(speed_mbps: Option<u32>) -> u64 {
    u64::from(speed_mbps.filter(|s| *s > 0).unwrap_or(DEFAULT_SPEED_MBPS))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 300 m of cable at 100 Gb/s: a round trip of 2 × 300 m × 5 ns/m =
    /// 3000 ns, in which a 100 Gb/s peer sends 3000 ns × 100 bit/ns =
    /// 300 000 bits = 37 500 bytes, where the standard 100 m (1000 ns) took
    /// 12 500: 25 000 bytes more headroom, and 2000 ns more response.
    #[test]
    fn a_longer_cable_adds_its_round_trip_at_the_ports_speed() {
        let standard = PfcDelays::default();
        let long = PfcDelays {
            cable_metres: 300,
            ..standard
        };
        assert_eq!(long.cable_round_trip_ns(), 3_000);
        let speed = Some(100_000);
        let base = PgThresholds::default_for(speed, 1500, 8 << 20, &standard);
        let t = PgThresholds::default_for(speed, 1500, 8 << 20, &long);
        // 2 × 1542 (frames) + 37 500 (cable) + 480 (3840 bits).
        assert_eq!(t.headroom_bytes, 3_084 + 37_500 + 480);
        assert_eq!(t.headroom_bytes - base.headroom_bytes, 25_000);
        assert_eq!(
            (t.xoff_bytes, t.xon_bytes),
            (base.xoff_bytes, base.xon_bytes)
        );
        assert_eq!(
            long.wire_response_ns(speed, 1500) - standard.wire_response_ns(speed, 1500),
            2_000
        );
        // No cable (a veth): only the frames and the peer are left.
        let none = PfcDelays {
            cable_metres: 0,
            ..standard
        };
        assert_eq!(none.wire_headroom_bytes(speed, 1500), 3_084 + 480);
    }

    /// A peer response in bit times is the same bytes at every speed; one
    /// in time is more bytes on a faster link.
    #[test]
    fn a_peer_response_in_bits_or_in_time() {
        let bits = PeerResponse::Bits(7_680);
        assert_eq!(bits.bytes_at(Some(1_000)), 960);
        assert_eq!(bits.bytes_at(Some(100_000)), 960);
        // 7680 bits at 1 Gb/s: 7680 ns; at 100 Gb/s: 76.8 ns, rounded up.
        assert_eq!(bits.ns_at(Some(1_000)), 7_680);
        assert_eq!(bits.ns_at(Some(100_000)), 77);
        let time = PeerResponse::Nanos(2_000);
        // 2 µs at 1 Gb/s is 2000 bits (250 bytes); at 100 Gb/s 25 000 bytes.
        assert_eq!(time.bytes_at(Some(1_000)), 250);
        assert_eq!(time.bytes_at(Some(100_000)), 25_000);
        assert_eq!(time.ns_at(None), 2_000);
        let d = PfcDelays {
            peer_response: time,
            ..PfcDelays::default()
        };
        // At 1 Gb/s: 2 × 1542 + 125 (1000 ns of cable) + 250.
        assert_eq!(d.wire_headroom_bytes(Some(1_000), 1500), 3_084 + 125 + 250);
        // 1000 ns of cable + 2 × 1542 × 8 bits at 1 Gb/s (24 672 ns) + 2000.
        assert_eq!(
            d.wire_response_ns(Some(1_000), 1500),
            1_000 + 24_672 + 2_000
        );
    }

    /// A software path's headroom adds its configured response: 500 µs at
    /// 1 Gb/s is 62 500 bytes where the standard 10 ms was 1 250 000, so a
    /// quiet host's default fits the buffer again at 10 Gb/s (625 000
    /// bytes), where 10 ms (12.5 MB) was cut to it.
    #[test]
    fn a_software_response_sets_the_software_headroom() {
        let standard = PfcDelays::default();
        let quiet = PfcDelays {
            software_response_ns: 500_000,
            ..standard
        };
        let wire = standard.wire_headroom_bytes(Some(1_000), 1500);
        assert_eq!(
            standard.software_headroom_bytes(Some(1_000), 1500),
            wire + 1_250_000
        );
        assert_eq!(
            quiet.software_headroom_bytes(Some(1_000), 1500),
            wire + 62_500
        );
        let (t, capped) =
            PgThresholds::software_default_for(Some(10_000), 1500, 8 << 20, &standard);
        assert_eq!((t.headroom_bytes, capped.is_some()), (8 << 20, true));
        let (t, capped) = PgThresholds::software_default_for(Some(10_000), 1500, 8 << 20, &quiet);
        let wire10 = quiet.wire_headroom_bytes(Some(10_000), 1500);
        assert_eq!((t.headroom_bytes, capped), (wire10 + 625_000, None));
    }

    /// Absurd configured terms saturate instead of overflowing.
    #[test]
    fn huge_terms_saturate() {
        let d = PfcDelays {
            cable_metres: u64::MAX,
            peer_response: PeerResponse::Nanos(u64::MAX),
            software_response_ns: u64::MAX,
        };
        assert_eq!(d.wire_response_ns(Some(800_000), 9216), u64::MAX);
        assert!(d.software_headroom_bytes(Some(800_000), 9216) > 0);
    }
}
