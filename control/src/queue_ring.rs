//! A live switch's recent past per queue: a bounded ring of samples per
//! interface (depth, ECN marks and PFC frames of each of its queues) that
//! `railyard show queuing interface NAME --plot FILE` draws as `replay
//! --plot` draws a replay's queues.
//!
//! The control thread samples the counters the workers publish (every
//! [`PUBLISH_INTERVAL`](railyard_dataplane::runtime::PUBLISH_INTERVAL)),
//! never the workers' own state: the fast path does nothing more for it.
//! The ring is allocated whole when the switch starts ([`RING_SAMPLES`] per
//! interface, about 270 KB each) and never grows; the oldest sample is
//! overwritten by the newest.

use std::path::Path;
use std::time::{Duration, Instant};

use railyard_dataplane::model::InterfaceModel;
use railyard_dataplane::queue::NUM_QUEUES;
use railyard_dataplane::stats::SwitchStats;
use serde::{Deserialize, Serialize};

use crate::replay_plot::{queue_depth_svg, QueuePoint, Thresholds, TimeAxis};

/// Asks the switch at `path` for the recent samples of `interface`'s
/// queues.
///
/// # Errors
/// A message when the switch cannot be reached, answered badly or has no
/// such interface.
pub fn fetch(path: &Path, interface: &str) -> Result<RingReply, String> {
    crate::mgmt::request(path, &format!("queue-ring {interface}"))
}

/// Time between two samples: the workers' publishing interval.
pub const RING_PERIOD: Duration = Duration::from_millis(100);
/// Samples kept per interface: the last minute at [`RING_PERIOD`].
pub const RING_SAMPLES: usize = 600;

/// One sample of one interface.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingSample {
    /// Milliseconds since the switch started.
    pub t_ms: u64,
    /// Each queue (qos-group) then: depth, ECN marks and PFC frames of its
    /// priority so far (pauses sent, resumes sent, pauses received,
    /// resumes received).
    pub queues: [QueuePoint; NUM_QUEUES],
}

/// The answer to the management request `queue-ring NAME`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RingReply {
    /// The interface.
    pub interface: String,
    /// Milliseconds between samples.
    pub period_ms: u64,
    /// Most samples the ring holds.
    pub capacity: usize,
    /// The samples, oldest first.
    pub samples: Vec<RingSample>,
}

/// One interface's ring.
#[derive(Debug)]
struct Ring {
    samples: Vec<RingSample>,
    /// Where the next sample goes.
    head: usize,
    len: usize,
}

/// Every interface's ring, sampled by the control thread.
#[derive(Debug)]
pub struct QueueRing {
    names: Vec<String>,
    rings: Vec<Ring>,
    start: Instant,
    next: Instant,
}

impl QueueRing {
    /// Rings of [`RING_SAMPLES`] for the interfaces `names`, allocated now.
    pub fn new(names: Vec<String>, start: Instant) -> QueueRing {
        Self::with_capacity(names, start, RING_SAMPLES)
    }

    /// Rings of `capacity` samples (at least one).
    pub fn with_capacity(names: Vec<String>, start: Instant, capacity: usize) -> QueueRing {
        let capacity = capacity.max(1);
        let rings = names
            .iter()
            .map(|_| Ring {
                samples: vec![RingSample::default(); capacity],
                head: 0,
                len: 0,
            })
            .collect();
        QueueRing {
            names,
            rings,
            start,
            next: start,
        }
    }

    /// Whether a sample is due at `now`.
    pub fn due(&self, now: Instant) -> bool {
        now >= self.next
    }

    /// Records `stats` as the sample at `now`.
    pub fn record(&mut self, stats: &SwitchStats, now: Instant) {
        // On the period's grid while the caller keeps up; after a stall,
        // a period from now.
        self.next += RING_PERIOD;
        if self.next <= now {
            self.next = now + RING_PERIOD;
        }
        let t_ms = now.saturating_duration_since(self.start).as_millis() as u64;
        for (name, ring) in self.names.iter().zip(&mut self.rings) {
            let mut s = RingSample {
                t_ms,
                ..RingSample::default()
            };
            if let Some(i) = stats.interfaces.get(name) {
                for q in &i.queues {
                    let Some(p) = s.queues.get_mut(usize::from(q.queue)) else {
                        continue;
                    };
                    p.depth_bytes = q.depth_bytes;
                    p.depth_packets = q.depth_packets;
                    p.ecn_marked = q.ecn_marked;
                }
                for (q, p) in s.queues.iter_mut().enumerate() {
                    p.pfc = [
                        i.pfc.tx_pause[q],
                        i.pfc.tx_resume[q],
                        i.pfc.rx_pause[q],
                        i.pfc.rx_resume[q],
                    ];
                }
            }
            let cap = ring.samples.len();
            ring.samples[ring.head] = s;
            ring.head = (ring.head + 1) % cap;
            ring.len = (ring.len + 1).min(cap);
        }
    }

    /// The ring of `interface`, oldest sample first.
    pub fn reply(&self, interface: &str) -> Option<RingReply> {
        let i = self.names.iter().position(|n| n == interface)?;
        let r = &self.rings[i];
        let cap = r.samples.len();
        let first = (r.head + cap - r.len) % cap;
        Some(RingReply {
            interface: interface.to_string(),
            period_ms: RING_PERIOD.as_millis() as u64,
            capacity: cap,
            samples: (0..r.len).map(|k| r.samples[(first + k) % cap]).collect(),
        })
    }
}

/// The queue a plot shows when none is asked for: the one with the most
/// ECN marks and PFC frames over the samples, then the deepest, then the
/// first lossless one, then 0.
pub fn busiest_queue(reply: &RingReply, model: Option<&InterfaceModel>) -> usize {
    let (Some(first), Some(last)) = (reply.samples.first(), reply.samples.last()) else {
        return 0;
    };
    let events = |q: usize| {
        let (a, b) = (&first.queues[q], &last.queues[q]);
        b.ecn_marked - a.ecn_marked.min(b.ecn_marked)
            + (0..4)
                .map(|k| b.pfc[k].saturating_sub(a.pfc[k]))
                .sum::<u64>()
    };
    let deepest = |q: usize| {
        reply
            .samples
            .iter()
            .map(|s| s.queues[q].depth_bytes)
            .max()
            .unwrap_or(0)
    };
    let best = (0..NUM_QUEUES)
        .max_by_key(|&q| (events(q), deepest(q), std::cmp::Reverse(q)))
        .unwrap_or(0);
    if events(best) > 0 || deepest(best) > 0 {
        return best;
    }
    model
        .and_then(|m| (0..NUM_QUEUES).find(|q| m.pfc.enabled_priorities >> q & 1 == 1))
        .unwrap_or(0)
}

/// Draws queue `queue` of the ring to `file` as SVG, with the thresholds
/// `model` gives it (none without a model), time in seconds from the
/// first sample.
///
/// # Errors
/// An empty ring, or the file cannot be written.
pub fn write_plot(
    reply: &RingReply,
    queue: usize,
    model: Option<&InterfaceModel>,
    file: &Path,
) -> Result<(), String> {
    let first = reply
        .samples
        .first()
        .ok_or_else(|| format!("{}: no samples yet", reply.interface))?
        .t_ms;
    let pts: Vec<_> = reply
        .samples
        .iter()
        .map(|s| ((s.t_ms - first) * 1_000_000, s.queues[queue]))
        .collect();
    let thresholds = model.map_or(
        Thresholds {
            wred: None,
            pfc: None,
        },
        |m| Thresholds::of(m, queue),
    );
    let svg = queue_depth_svg(
        &reply.interface,
        queue,
        &thresholds,
        &pts,
        TimeAxis::SECONDS,
    )?;
    std::fs::write(file, svg).map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests;
