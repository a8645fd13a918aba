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

impl DcqcnParams {
    /// Placeholder until this module lands.
    pub fn parse(_text: &str, _origin: &str) -> Result<DcqcnParams, String> {
        Ok(DcqcnParams {})
    }
}
