//! When a backend re-reads what its kernel or driver knows: link state and
//! drop counters.
//!
//! A worker asks a backend for its link state several times per poll, and
//! each ask read the monotonic clock to see whether the cached state was
//! stale. In a virtual machine that read costs about 28 ns, as much as a
//! good part of forwarding a frame; the coarse monotonic clock (the
//! kernel's time at its last tick, without reading the TSC) costs about 7.
//! A period of 100 ms has no use for more than the tick's few milliseconds.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How long a backend's cached link state and drop counters stay fresh.
pub const REFRESH: Duration = Duration::from_millis(100);

/// A repeating period on the coarse monotonic clock.
#[derive(Debug)]
pub struct RefreshTimer {
    period: Duration,
    last: Cell<Duration>,
}

impl RefreshTimer {
    /// A [`REFRESH`] period that starts now.
    pub fn new() -> Self {
        Self::every(REFRESH)
    }

    /// A period of `period` that starts now.
    pub fn every(period: Duration) -> Self {
        RefreshTimer {
            period,
            last: Cell::new(coarse_now()),
        }
    }

    /// True when a period has passed since the last time it said so (or
    /// since it started), and the next period starts.
    #[inline]
    pub fn due(&self) -> bool {
        let now = coarse_now();
        if now.saturating_sub(self.last.get()) < self.period {
            return false;
        }
        self.last.set(now);
        true
    }

    /// Starts the next period now (the state was just read for another
    /// reason).
    pub fn restart(&self) {
        self.last.set(coarse_now());
    }
}

impl Default for RefreshTimer {
    fn default() -> Self {
        Self::new()
    }
}

/// Time on the coarse monotonic clock. Should the clock be missing (it has
/// been in Linux since 2.6.32), the precise one stands in, for good.
#[inline]
fn coarse_now() -> Duration {
    static PRECISE_SINCE: OnceLock<Instant> = OnceLock::new();
    if PRECISE_SINCE.get().is_none() {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid place for the result.
        if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) } == 0 {
            return Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32);
        }
    }
    PRECISE_SINCE.get_or_init(Instant::now).elapsed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_period_is_due_once_it_has_passed_and_then_starts_again() {
        let timer = RefreshTimer::every(Duration::from_millis(30));
        assert!(!timer.due(), "a fresh period is not due");
        // The coarse clock moves a tick (at most 10 ms) at a time.
        std::thread::sleep(Duration::from_millis(45));
        assert!(timer.due());
        assert!(!timer.due(), "the next period has started");
        std::thread::sleep(Duration::from_millis(45));
        timer.restart();
        assert!(!timer.due(), "restarted");
    }

    #[test]
    fn the_coarse_clock_follows_the_precise_one() {
        let (c0, p0) = (coarse_now(), Instant::now());
        std::thread::sleep(Duration::from_millis(50));
        let (dc, dp) = (coarse_now() - c0, p0.elapsed());
        let diff = dc.abs_diff(dp);
        assert!(
            diff < Duration::from_millis(25),
            "coarse {dc:?}, precise {dp:?}"
        );
    }
}
