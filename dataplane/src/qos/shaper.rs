//! Rates in time: the port's line-rate shaper and per-queue rate limiters.
//!
//! Both are kept as *virtual finish times* in picoseconds rather than token
//! counts: a frame may start when its limiter's time has come, and sending it
//! moves that time on by the frame's serialisation time at the rate. Integer
//! picoseconds keep a long run exact (no drift from rounding every frame to a
//! nanosecond); departure times are rounded up to the nanosecond only when
//! reported.

use crate::clock::Nanos;

/// Bytes a frame occupies on the wire beyond what railyard buffers: FCS (4),
/// preamble and start delimiter (8), inter-frame gap (12).
pub const WIRE_OVERHEAD_BYTES: u64 = 24;
/// Shortest Ethernet frame without FCS; shorter frames are padded on the wire.
pub const MIN_FRAME_BYTES: u64 = 60;
/// Picoseconds per nanosecond.
pub const PS_PER_NS: u64 = 1000;
/// How far behind a live worker that polled late may send back to back to
/// catch up with line rate; bounds the burst after a stall.
pub const MAX_CATCH_UP_NS: Nanos = 50_000;

/// Bytes a frame of `len` bytes (no FCS) takes on the wire.
#[inline]
pub fn wire_bytes(len: usize) -> u64 {
    (len as u64).max(MIN_FRAME_BYTES) + WIRE_OVERHEAD_BYTES
}

/// Picoseconds to send `bytes` at `rate_bps` bits per second (`rate_bps` > 0).
#[inline]
pub fn serialisation_ps(bytes: u64, rate_bps: u64) -> u64 {
    let bits = u128::from(bytes) * 8;
    (bits * 1_000_000_000_000 / u128::from(rate_bps.max(1))) as u64
}

/// Nanoseconds at or after a picosecond time.
#[inline]
pub fn ps_to_ns_ceil(ps: u64) -> Nanos {
    ps.div_ceil(PS_PER_NS)
}

/// The port's wire: when it is next free, at the interface speed.
#[derive(Debug, Clone)]
pub struct PortShaper {
    rate_bps: Option<u64>,
    wire_free_ps: u64,
    /// The last dequeue stopped with a packet ready to go and the wire busy,
    /// so the next frame starts exactly when the wire frees, however late
    /// the next poll is (within [`MAX_CATCH_UP_NS`]).
    backlogged: bool,
}

impl PortShaper {
    /// A wire at `speed_mbps` (`None`: unshaped, frames leave when polled).
    pub fn new(speed_mbps: Option<u32>) -> Self {
        PortShaper {
            rate_bps: Self::rate(speed_mbps),
            wire_free_ps: 0,
            backlogged: false,
        }
    }

    fn rate(speed_mbps: Option<u32>) -> Option<u64> {
        speed_mbps
            .filter(|s| *s > 0)
            .map(|s| u64::from(s) * 1_000_000)
    }

    /// Changes the speed; a frame on the wire finishes at the old one.
    pub fn set_speed(&mut self, speed_mbps: Option<u32>) {
        self.rate_bps = Self::rate(speed_mbps);
    }

    /// The line rate in bits per second, when the port is shaped.
    pub fn rate_bps(&self) -> Option<u64> {
        self.rate_bps
    }

    /// When the wire is next free, in picoseconds.
    pub fn wire_free_ps(&self) -> u64 {
        self.wire_free_ps
    }

    /// When the first frame of a dequeue at `now_ps` may start.
    #[inline]
    pub fn start_ps(&self, now_ps: u64) -> u64 {
        match self.rate_bps {
            None => now_ps,
            Some(_) if self.backlogged => self
                .wire_free_ps
                .max(now_ps.saturating_sub(MAX_CATCH_UP_NS * PS_PER_NS)),
            Some(_) => self.wire_free_ps.max(now_ps),
        }
    }

    /// Puts a frame of `wire_bytes` on the wire at `start_ps`; returns when the
    /// next frame may start.
    #[inline]
    pub fn send(&mut self, start_ps: u64, wire_bytes: u64) -> u64 {
        if let Some(rate) = self.rate_bps {
            self.wire_free_ps =
                start_ps.max(self.wire_free_ps) + serialisation_ps(wire_bytes, rate);
        }
        self.wire_free_ps
    }

    /// Records whether the dequeue that just ended left a frame waiting only
    /// for the wire.
    #[inline]
    pub fn set_backlogged(&mut self, backlogged: bool) {
        self.backlogged = backlogged && self.rate_bps.is_some();
    }
}

/// A rate limit on one queue: `shape` maximum, or the guaranteed minimum the
/// queue is below while it may still send.
#[derive(Debug, Clone)]
pub struct RateLimiter {
    rate_bps: u64,
    ready_ps: u64,
    /// Credit an idle queue may save up, as time: a bucket depth.
    burst_ps: u64,
}

impl RateLimiter {
    /// A limiter at `rate_bps` that lets an idle queue send `burst_bytes`
    /// back to back.
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        let rate_bps = rate_bps.max(1);
        RateLimiter {
            rate_bps,
            ready_ps: 0,
            burst_ps: serialisation_ps(burst_bytes, rate_bps),
        }
    }

    /// The rate in bits per second.
    pub fn rate_bps(&self) -> u64 {
        self.rate_bps
    }

    /// Whether a frame may start at `t_ps` (the bucket is not in debt).
    #[inline]
    pub fn ready(&self, t_ps: u64) -> bool {
        self.ready_ps <= t_ps
    }

    /// When a frame may start next.
    #[inline]
    pub fn ready_ps(&self) -> u64 {
        self.ready_ps
    }

    /// Charges a frame of `wire_bytes` sent at `t_ps`.
    #[inline]
    pub fn charge(&mut self, t_ps: u64, wire_bytes: u64) {
        self.ready_ps = self.ready_ps.max(t_ps.saturating_sub(self.burst_ps))
            + serialisation_ps(wire_bytes, self.rate_bps);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialisation_at_line_rate() {
        // A 1500-byte frame at 100 Gb/s: 1524 × 8 bits = 121.92 ns.
        assert_eq!(wire_bytes(1500), 1524);
        assert_eq!(serialisation_ps(1524, 100_000_000_000), 121_920);
        // A 42-byte ARP is padded to 60 on the wire.
        assert_eq!(wire_bytes(42), 84);
        assert_eq!(serialisation_ps(84, 10_000_000_000), 67_200);
        assert_eq!(ps_to_ns_ceil(67_200), 68);
        assert_eq!(ps_to_ns_ceil(67_000), 67);
    }

    #[test]
    fn back_to_back_frames_keep_exact_spacing() {
        let mut s = PortShaper::new(Some(25_000));
        let mut t = s.start_ps(1_000 * PS_PER_NS);
        assert_eq!(t, 1_000_000);
        for _ in 0..1000 {
            t = s.send(t, wire_bytes(1000));
        }
        // 1000 frames of 1024 wire bytes at 25 Gb/s: 327.68 µs, no drift.
        assert_eq!(t - 1_000_000, 1000 * 327_680);
    }

    #[test]
    fn an_idle_wire_starts_at_now_and_a_backlog_catches_up_a_little() {
        let mut s = PortShaper::new(Some(10_000));
        s.send(0, wire_bytes(1500)); // busy until 1.2192 µs
        assert_eq!(s.start_ps(500_000), 1_219_200);
        // Idle since: the next frame starts when polled.
        assert_eq!(s.start_ps(9_000_000), 9_000_000);
        // Backlogged: a late poll starts where the wire freed, within the bound.
        s.set_backlogged(true);
        assert_eq!(s.start_ps(9_000_000), 1_219_200);
        assert_eq!(
            s.start_ps(1_000_000_000),
            1_000_000_000 - MAX_CATCH_UP_NS * PS_PER_NS
        );
        // Unshaped: always now.
        let u = PortShaper::new(None);
        assert_eq!(u.start_ps(42), 42);
    }

    #[test]
    fn limiter_allows_a_burst_then_the_rate() {
        // 1 Gb/s with a 2000-byte bucket: 1 byte = 8 ns.
        let mut r = RateLimiter::new(1_000_000_000, 2000);
        let t0 = 1_000_000_000; // 1 ms: long idle
        assert!(r.ready(t0));
        r.charge(t0, 1000);
        assert!(r.ready(t0), "within the burst");
        r.charge(t0, 1000);
        assert!(r.ready(t0));
        r.charge(t0, 1000);
        assert!(!r.ready(t0), "burst spent");
        assert_eq!(r.ready_ps(), t0 + 8_000_000);
    }
}
