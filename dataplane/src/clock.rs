//! Time, injected.
//!
//! Everything time-driven reads a [`Clock`] so live ports can run on the
//! monotonic clock while pcap replay runs on a virtual clock advanced by packet
//! timestamps — the same code, deterministic under test.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Nanoseconds since an arbitrary epoch fixed per clock.
pub type Nanos = u64;

/// A source of the current time.
pub trait Clock: Send + Sync {
    /// The current time in nanoseconds.
    fn now(&self) -> Nanos;
}

/// Real time from the operating system's monotonic clock.
#[derive(Debug, Clone, Copy)]
pub struct MonotonicClock {
    start: Instant,
}

impl MonotonicClock {
    /// A clock whose epoch is the moment it was created.
    pub fn new() -> Self {
        MonotonicClock {
            start: Instant::now(),
        }
    }
}

impl Default for MonotonicClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for MonotonicClock {
    #[inline]
    fn now(&self) -> Nanos {
        self.start.elapsed().as_nanos() as Nanos
    }
}

/// Time that moves only when told to: by replayed packet timestamps or by a
/// simulation step. Clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct VirtualClock {
    now: Arc<AtomicU64>,
}

impl VirtualClock {
    /// A clock at `start`.
    pub fn new(start: Nanos) -> Self {
        VirtualClock {
            now: Arc::new(AtomicU64::new(start)),
        }
    }

    /// Moves time forward to `t`; a `t` in the past is ignored, so time never
    /// runs backwards even when a trace's timestamps do.
    pub fn advance_to(&self, t: Nanos) {
        self.now.fetch_max(t, Ordering::Relaxed);
    }

    /// Moves time forward by `d`.
    pub fn advance_by(&self, d: Nanos) {
        self.now.fetch_add(d, Ordering::Relaxed);
    }
}

impl Clock for VirtualClock {
    #[inline]
    fn now(&self) -> Nanos {
        self.now.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_time_never_runs_backwards() {
        let c = VirtualClock::new(100);
        let shared = c.clone();
        c.advance_to(50);
        assert_eq!(shared.now(), 100);
        c.advance_to(300);
        c.advance_by(5);
        assert_eq!(shared.now(), 305);
    }

    #[test]
    fn monotonic_time_moves_forward() {
        let c = MonotonicClock::new();
        let a = c.now();
        std::thread::sleep(std::time::Duration::from_millis(1));
        assert!(c.now() > a);
    }
}
