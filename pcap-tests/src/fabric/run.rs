//! Running a fabric in virtual time: poll every switch that is not in a
//! scheduling gap, jump the shared clock to the next receive, departure or
//! gap end, stop when everything drained.

use std::sync::{Arc, Mutex};

use railyard_dataplane::clock::{Clock, Nanos, VirtualClock};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::LinkControl;
use railyard_dataplane::stats::SwitchStats;

use super::gaps::GapClock;
use super::{Arrival, ArrivalLog, Attach, TapLog, TapRecord, WEDGE_NS};

/// Empties a shared log (a poisoned one reads as empty).
fn take<T>(log: &Arc<Mutex<Vec<T>>>) -> Result<Vec<T>, ()> {
    log.lock()
        .map(|mut l| std::mem::take(&mut *l))
        .map_err(|_| ())
}

/// Switches wired together, ready to run.
pub struct Fabric {
    pub(super) switches: Vec<Switch>,
    pub(super) clock: VirtualClock,
    pub(super) hosts: Vec<(Attach, ArrivalLog)>,
    pub(super) taps: Vec<(Attach, TapLog)>,
    pub(super) links: Vec<LinkControl>,
    pub(super) gaps: Vec<Option<GapClock>>,
}

/// What a fabric run produced.
#[derive(Debug, Clone)]
pub struct FabricRun {
    /// Each switch's counters, in the order they were added.
    pub stats: Vec<SwitchStats>,
    /// What each host received, in arrival order.
    pub arrivals: Vec<Vec<Arrival>>,
    /// Each tapped cable end and what left through it.
    pub taps: Vec<(Attach, Vec<TapRecord>)>,
    /// Virtual time when the last packet had left.
    pub end_ns: Nanos,
    /// Times the loop found queued packets but no next event and had to
    /// step time blindly (expected 0 without PFC).
    pub blind_steps: u64,
    /// Frames switch–switch cables refused because their ring was full
    /// (each retry again): 0 unless a ring is too small for a gap, in which
    /// case the run models backpressure a kernel ring would not give.
    pub ring_full: u64,
    /// Per switch, the scheduling gaps that deferred a poll.
    pub gaps: Vec<u64>,
}

impl Fabric {
    /// Runs until every host has sent its schedule and every queue and
    /// cable is empty.
    ///
    /// # Panics
    ///
    /// When nothing moves and no event is due for [`WEDGE_NS`] of virtual
    /// time while packets are still queued.
    pub fn run(mut self) -> FabricRun {
        let mut stuck_since: Option<Nanos> = None;
        let mut blind_steps = 0;
        loop {
            let now = self.clock.now();
            let mut work = 0;
            for (s, g) in self.switches.iter_mut().zip(&mut self.gaps) {
                if !g.as_mut().is_some_and(|g| g.off_cpu(now)) {
                    work += s.poll(now);
                }
            }
            if work > 0 {
                stuck_since = None;
                continue;
            }
            // A switch off the CPU has one event: the end of its gap, when
            // it takes everything its cables and hosts delivered meanwhile.
            let next = self
                .switches
                .iter()
                .zip(&self.gaps)
                .flat_map(|(s, g)| match g.as_ref().filter(|g| g.off(now)) {
                    Some(g) => [Some(g.end()), None],
                    None => [s.next_rx_time(), s.next_departure()],
                })
                .flatten()
                .min();
            match next {
                Some(t) if t > now => {
                    stuck_since = None;
                    self.clock.advance_to(t);
                }
                None if self.switches.iter().all(Switch::idle) => break,
                _ => {
                    let since = *stuck_since.get_or_insert(now);
                    assert!(now - since < WEDGE_NS, "the fabric is wedged at {now} ns");
                    blind_steps += 1;
                    self.clock.advance_by(1_000);
                }
            }
        }
        for s in &mut self.switches {
            // In-memory backends have nothing to flush.
            let _ = s.finish();
        }
        FabricRun {
            stats: self.switches.iter().map(Switch::stats).collect(),
            arrivals: self
                .hosts
                .iter()
                .map(|(_, l)| take(l).unwrap_or_default())
                .collect(),
            taps: self
                .taps
                .iter()
                .map(|(at, l)| (*at, take(l).unwrap_or_default()))
                .collect(),
            end_ns: self.clock.now(),
            blind_steps,
            ring_full: self.links.iter().map(LinkControl::ring_full).sum(),
            gaps: self
                .gaps
                .iter()
                .map(|g| g.as_ref().map_or(0, |g| g.hit))
                .collect(),
        }
    }
}
