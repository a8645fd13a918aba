//! DCQCN (Zhu et al., SIGCOMM 2015): the notification point that answers CE
//! marks with CNPs and the reaction point that sets a queue pair's rate.
//!
//! API contract (implemented by this module; `nic` depends on exactly it):
//!
//! ```ignore
//! pub struct DcqcnParams { /* roce_np and roce_rp names, ConnectX defaults */ }
//! impl Default for DcqcnParams
//! impl DcqcnParams {
//!     pub fn parse(text: &str, origin: &str) -> Result<DcqcnParams, String>; // file:line:col errors
//!     pub fn cnp_dscp(&self) -> u8;  pub fn cnp_priority(&self) -> u8;
//!     pub fn min_time_between_cnps_ns(&self) -> Nanos;
//! }
//! pub struct NotificationPoint;  // per QP
//! impl NotificationPoint { pub fn new() -> Self; pub fn on_ce(&mut self, now: Nanos, p: &DcqcnParams) -> bool }
//! pub struct ReactionPoint;      // per QP
//! impl ReactionPoint {
//!     pub fn new(p: &DcqcnParams, line_rate_bps: u64) -> Self;
//!     pub fn rate_bps(&self) -> u64;
//!     pub fn on_cnp(&mut self, now: Nanos);
//!     pub fn on_sent(&mut self, now: Nanos, bytes: u64);
//!     pub fn on_time(&mut self, now: Nanos);          // runs the timers due by `now`
//!     pub fn next_timer(&self) -> Option<Nanos>;
//!     pub fn stats(&self) -> RpStats;                 // cuts, min rate reached, ...
//! }
//! ```

/// DCQCN's parameters (placeholder until this module lands).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DcqcnParams {}

// STAND-IN: a minimal implementation of the contract above so that `nic`
// compiles and its tests run; the real module replaces this file wholesale.
// Rate halves on every CNP (not below 1/64 of line rate) and recovers by 5 %
// of line rate every 55 µs; the NP allows one CNP per 4 µs per QP.

use crate::Nanos;

impl DcqcnParams {
    /// DSCP of CNPs.
    pub fn cnp_dscp(&self) -> u8 {
        48
    }
    /// 802.1p priority of CNPs.
    pub fn cnp_priority(&self) -> u8 {
        6
    }
    /// Minimum time between two CNPs of one QP.
    pub fn min_time_between_cnps_ns(&self) -> Nanos {
        4_000
    }
}

/// Notification point (stand-in).
#[derive(Debug, Clone, Default)]
pub struct NotificationPoint {
    last: Option<Nanos>,
}

impl NotificationPoint {
    /// A notification point that has sent no CNP.
    pub fn new() -> Self {
        NotificationPoint { last: None }
    }
    /// A CE-marked packet arrived: whether to send a CNP now.
    pub fn on_ce(&mut self, now: Nanos, p: &DcqcnParams) -> bool {
        match self.last {
            Some(t) if now < t + p.min_time_between_cnps_ns() => false,
            _ => {
                self.last = Some(now);
                true
            }
        }
    }
}

/// Reaction point statistics (stand-in).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RpStats {
    /// Rate cuts.
    pub cuts: u64,
    /// Lowest rate reached.
    pub min_rate_bps: u64,
}

/// Reaction point (stand-in).
#[derive(Debug, Clone)]
pub struct ReactionPoint {
    line: u64,
    rate: u64,
    next: Option<Nanos>,
    stats: RpStats,
}

const RECOVER_NS: Nanos = 55_000;

impl ReactionPoint {
    /// A reaction point at line rate.
    pub fn new(_p: &DcqcnParams, line_rate_bps: u64) -> Self {
        ReactionPoint {
            line: line_rate_bps,
            rate: line_rate_bps,
            next: None,
            stats: RpStats {
                cuts: 0,
                min_rate_bps: line_rate_bps,
            },
        }
    }
    /// Current rate.
    pub fn rate_bps(&self) -> u64 {
        self.rate
    }
    /// A CNP arrived.
    pub fn on_cnp(&mut self, now: Nanos) {
        self.rate = (self.rate / 2).max(self.line / 64);
        self.stats.cuts += 1;
        self.stats.min_rate_bps = self.stats.min_rate_bps.min(self.rate);
        self.next = Some(now + RECOVER_NS);
    }
    /// Bytes were sent.
    pub fn on_sent(&mut self, _now: Nanos, _bytes: u64) {}
    /// Runs the timers due by `now`.
    pub fn on_time(&mut self, now: Nanos) {
        while let Some(t) = self.next {
            if t > now {
                break;
            }
            self.rate = (self.rate + self.line / 20).min(self.line);
            self.next = (self.rate < self.line).then_some(t + RECOVER_NS);
        }
    }
    /// When the next timer is due.
    pub fn next_timer(&self) -> Option<Nanos> {
        self.next
    }
    /// Statistics.
    pub fn stats(&self) -> RpStats {
        self.stats.clone()
    }
}
