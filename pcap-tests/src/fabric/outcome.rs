//! What a two-tier run showed: per-flow results at the receivers and the
//! per-uplink, drop and ECN numbers a comparison of balancing modes needs.

use std::collections::BTreeMap;

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::stats::{GroupStats, SwitchStats};

use super::{FabricRun, Flow, HostId, TapRecord, TwoTier, CE};

/// One flow's fate at its receiver.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowResult {
    /// Frames sent.
    pub sent: u64,
    /// Frames received.
    pub received: u64,
    /// Frames that arrived with a sequence number below one already seen.
    pub reordered: u64,
    /// Frames received with CE set.
    pub ce: u64,
    /// When its first frame left the host.
    pub first_send: Nanos,
    /// When its last frame arrived, if any did.
    pub last_arrival: Option<Nanos>,
    /// Per burst: last arrival minus the burst's first send (`None` when
    /// none of the burst arrived).
    pub burst_completion: Vec<Option<Nanos>>,
}

impl FlowResult {
    /// First send to last arrival (over the frames that arrived).
    pub fn completion(&self) -> Option<Nanos> {
        self.last_arrival.map(|t| t - self.first_send)
    }
}

pub(super) fn summarise(
    flows: &[Flow],
    first_sends: &[Vec<Nanos>],
    run: &FabricRun,
) -> Vec<FlowResult> {
    let mut out: Vec<FlowResult> = flows
        .iter()
        .zip(first_sends)
        .map(|(f, firsts)| FlowResult {
            sent: f.packets(),
            first_send: firsts.iter().copied().min().unwrap_or(0),
            burst_completion: vec![None; firsts.len()],
            ..FlowResult::default()
        })
        .collect();
    let mut max_seen: Vec<Option<u32>> = vec![None; flows.len()];
    let mut burst_last: Vec<Vec<Option<Nanos>>> = flows
        .iter()
        .map(|f| vec![None; f.burst_starts.len()])
        .collect();
    for arrivals in &run.arrivals {
        for a in arrivals {
            let id = a.tag.flow as usize;
            let (Some(f), Some(r)) = (flows.get(id), out.get_mut(id)) else {
                continue;
            };
            r.received += 1;
            if a.tag.ecn == CE {
                r.ce += 1;
            }
            match max_seen[id] {
                Some(m) if a.tag.seq < m => r.reordered += 1,
                _ => max_seen[id] = Some(a.tag.seq),
            }
            r.last_arrival = Some(r.last_arrival.map_or(a.time, |t| t.max(a.time)));
            let b = (a.tag.seq / f.packets_per_burst.max(1)) as usize;
            if let Some(slot) = burst_last[id].get_mut(b) {
                *slot = Some(slot.map_or(a.time, |t| t.max(a.time)));
            }
        }
    }
    for (id, r) in out.iter_mut().enumerate() {
        r.burst_completion = burst_last[id]
            .iter()
            .zip(&first_sends[id])
            .map(|(last, first)| last.map(|t| t.saturating_sub(*first)))
            .collect();
    }
    out
}

/// What a [`TwoTier`] run showed.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The topology it ran on.
    pub topology: TwoTier,
    /// Each leaf's counters.
    pub leaves: Vec<SwitchStats>,
    /// Each spine's counters.
    pub spines: Vec<SwitchStats>,
    /// Per flow, in the order given.
    pub flows: Vec<FlowResult>,
    /// `[leaf][spine]`: what the leaf sent up that uplink, in order.
    pub uplink_log: Vec<Vec<Vec<TapRecord>>>,
    /// Virtual time when everything had drained.
    pub end_ns: Nanos,
    /// See [`FabricRun::blind_steps`].
    pub blind_steps: u64,
    /// See [`FabricRun::ring_full`].
    pub ring_full: u64,
    /// See [`FabricRun::gaps`] (leaves first, then spines).
    pub gaps: Vec<u64>,
}

impl Outcome {
    /// Bytes leaf `l` transmitted on each uplink (interface counters).
    pub fn uplink_bytes(&self, l: usize) -> Vec<u64> {
        (0..self.topology.spines)
            .map(|s| {
                self.leaves[l]
                    .interfaces
                    .get(&self.topology.uplink_name(s))
                    .map_or(0, |i| i.tx_bytes)
            })
            .collect()
    }

    /// (max − min) / mean of leaf `l`'s uplink bytes over the run (all
    /// uplinks have one speed, so bytes stand for utilisation); 0 when the
    /// leaf sent nothing up.
    pub fn imbalance(&self, l: usize) -> f64 {
        imbalance(&self.uplink_bytes(l))
    }

    /// The largest [`imbalance`](Self::imbalance) of any leaf that sent
    /// traffic up.
    pub fn worst_imbalance(&self) -> f64 {
        (0..self.topology.leaves)
            .map(|l| self.imbalance(l))
            .fold(0.0, f64::max)
    }

    /// Packets of flow `id` leaf `l` sent up each uplink (from the taps).
    pub fn flow_uplinks(&self, l: usize, id: u32) -> Vec<u64> {
        self.uplink_log[l]
            .iter()
            .map(|log| log.iter().filter(|r| r.tag.flow == id).count() as u64)
            .collect()
    }

    /// The uplink each packet of flow `id` took out of leaf `l`, by
    /// sequence number (`None`: not seen on any uplink).
    pub fn flow_path(&self, l: usize, id: u32) -> Vec<Option<usize>> {
        let mut path = Vec::new();
        for (s, log) in self.uplink_log[l].iter().enumerate() {
            for r in log.iter().filter(|r| r.tag.flow == id) {
                let i = r.tag.seq as usize;
                if path.len() <= i {
                    path.resize(i + 1, None);
                }
                path[i] = Some(s);
            }
        }
        path
    }

    /// Leaf `l`'s group towards host `dst`.
    pub fn group(&self, l: usize, dst: HostId) -> Option<&GroupStats> {
        self.leaves[l]
            .load_balancing
            .get(&self.topology.host_prefix(dst))
    }

    /// Every group of every leaf.
    pub fn groups(&self) -> impl Iterator<Item = &GroupStats> {
        self.leaves.iter().flat_map(|s| s.load_balancing.values())
    }

    /// Drops by reason over every switch (reasons with none left out).
    pub fn drops(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for s in self.leaves.iter().chain(&self.spines) {
            for i in s.interfaces.values() {
                for (r, n) in &i.drops {
                    if *n > 0 {
                        *out.entry(r.clone()).or_insert(0) += n;
                    }
                }
            }
        }
        out
    }

    /// All drops over every switch.
    pub fn total_drops(&self) -> u64 {
        self.drops().values().sum()
    }

    /// Packets the queues of every switch marked CE.
    pub fn ecn_marked(&self) -> u64 {
        self.leaves
            .iter()
            .chain(&self.spines)
            .flat_map(|s| s.interfaces.values())
            .flat_map(|i| &i.queues)
            .map(|q| q.ecn_marked)
            .sum()
    }

    /// Frames receivers saw with CE set.
    pub fn ce_received(&self) -> u64 {
        self.flows.iter().map(|f| f.ce).sum()
    }

    /// Frames receivers saw out of order, over every flow.
    pub fn reordered(&self) -> u64 {
        self.flows.iter().map(|f| f.reordered).sum()
    }
}

/// (max − min) / mean of `v`; 0 for an empty or all-zero `v`.
pub fn imbalance(v: &[u64]) -> f64 {
    let (Some(max), Some(min)) = (v.iter().max(), v.iter().min()) else {
        return 0.0;
    };
    let sum: u64 = v.iter().sum();
    if sum == 0 {
        return 0.0;
    }
    let mean = sum as f64 / v.len() as f64;
    (max - min) as f64 / mean
}

/// The value at quantile `q` (0..=1) of `v` (sorted here); `None` when empty.
pub fn percentile(v: &mut [Nanos], q: f64) -> Option<Nanos> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v.get(i.min(v.len() - 1)).copied()
}
