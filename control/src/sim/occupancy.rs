//! Every egress queue's depth integrated over virtual time
//! (`--queue-stats`), for the time-averaged depth Little's law relates to
//! the departure rate and the mean sojourn.
//!
//! A switch's queues change only while it runs (a poll, a link change),
//! so between two runs each depth is constant: adding depth × elapsed time
//! for every non-empty queue just before a switch runs gives the exact
//! integral, with no sampling error and nothing added to the dataplane's
//! per-packet path. It costs a look at each port of a switch per run, so
//! it is off unless asked for.

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::PortId;
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::queue::NUM_QUEUES;
use serde::Serialize;

/// One egress queue's occupancy over a run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct QueueOccupancy {
    /// `SWITCH:INTERFACE:QUEUE`, as `--sample-queue` names it.
    pub name: String,
    /// Packets the queue sent.
    pub tx_packets: u64,
    /// Bytes the queue sent.
    pub tx_bytes: u64,
    /// Departures per microsecond over the run (λ).
    pub departures_per_us: f64,
    /// Mean sojourn of the packets sent, from the queue's sojourn
    /// histogram, nanoseconds (W).
    pub mean_sojourn_ns: f64,
    /// Packets queued, averaged over the run's virtual time (L).
    pub mean_depth_packets: f64,
    /// Bytes queued, averaged over the run's virtual time.
    pub mean_depth_bytes: f64,
}

/// Depth × time of every queue of every switch, accumulated as the run
/// goes.
pub(super) struct DepthTime {
    /// Per switch, the virtual time its integral reaches.
    last: Vec<Nanos>,
    /// Per switch, per port: packet-nanoseconds and byte-nanoseconds of
    /// each queue.
    area: Vec<Vec<[(u128, u128); NUM_QUEUES]>>,
}

impl DepthTime {
    /// Zero integrals for switches with `ports[s]` ports each.
    pub(super) fn new(ports: impl Iterator<Item = usize>) -> DepthTime {
        let area: Vec<_> = ports.map(|n| vec![[(0, 0); NUM_QUEUES]; n]).collect();
        DepthTime {
            last: vec![0; area.len()],
            area,
        }
    }

    /// Brings switch `s`'s integrals up to `now`: call it before the switch
    /// runs (its depths have held since its last run).
    pub(super) fn advance(&mut self, s: usize, sw: &Switch, now: Nanos) {
        let (Some(last), Some(area)) = (self.last.get_mut(s), self.area.get_mut(s)) else {
            return;
        };
        let dt = u128::from(now.saturating_sub(*last));
        *last = (*last).max(now);
        if dt == 0 {
            return;
        }
        for (p, a) in area.iter_mut().enumerate() {
            let Some(qs) = sw.queues(p as PortId).filter(|qs| !qs.is_empty()) else {
                continue;
            };
            let mut m = qs.nonempty_mask();
            while m != 0 {
                let q = m.trailing_zeros() as usize % NUM_QUEUES;
                m &= m - 1;
                a[q].0 += qs.depth_packets(q) as u128 * dt;
                a[q].1 += u128::from(qs.depth_bytes(q)) * dt;
            }
        }
    }

    /// Adds what `other` integrated (another worker's switches; each
    /// switch is integrated by one worker only).
    pub(super) fn merge(&mut self, other: DepthTime) {
        for (l, o) in self.last.iter_mut().zip(other.last) {
            *l = (*l).max(o);
        }
        for (ports, other) in self.area.iter_mut().zip(other.area) {
            for (a, o) in ports.iter_mut().zip(other) {
                for (q, oq) in a.iter_mut().zip(o) {
                    q.0 += oq.0;
                    q.1 += oq.1;
                }
            }
        }
    }

    /// Every queue that sent or holds anything, over a run that ended at
    /// `end` (every switch's integral is brought up to it first).
    pub(super) fn finish(
        mut self,
        switches: &[Switch],
        switch_names: &[String],
        port_names: &[Vec<String>],
        end: Nanos,
    ) -> Vec<QueueOccupancy> {
        for (s, sw) in switches.iter().enumerate() {
            self.advance(s, sw, end);
        }
        let span = end.max(1) as f64;
        let mut out = Vec::new();
        for (s, sw) in switches.iter().enumerate() {
            let stats = sw.stats();
            for (p, area) in self.area[s].iter().enumerate() {
                let Some(qs) = sw.queues(p as PortId) else {
                    continue;
                };
                let port = port_names[s].get(p).map_or("?", String::as_str);
                let counters = stats.interfaces.get(port);
                for (q, &(pkt_ns, byte_ns)) in area.iter().enumerate() {
                    let c = counters.and_then(|i| i.queues.get(q));
                    let (tx_packets, tx_bytes) = c.map_or((0, 0), |c| (c.tx_packets, c.tx_bytes));
                    if tx_packets == 0 && qs.depth_packets(q) == 0 {
                        continue;
                    }
                    out.push(QueueOccupancy {
                        name: format!("{}:{port}:{q}", switch_names[s]),
                        tx_packets,
                        tx_bytes,
                        departures_per_us: tx_packets as f64 * 1e3 / span,
                        mean_sojourn_ns: qs.mean_sojourn_ns(q),
                        mean_depth_packets: pkt_ns as f64 / span,
                        mean_depth_bytes: byte_ns as f64 / span,
                    });
                }
            }
        }
        out
    }
}
