//! What the results need of the topology: each switch's tier (its
//! distance from the hosts), the cables between switches, where each rank
//! is attached, and the path a flow takes across an idle fabric — for the
//! ideal flow completion time a slowdown is measured against.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};

use railyard_roce::plan::RankAddr;

use crate::lab::topology::Topology;

/// A port's speed when the topology gives none (what the NICs assume too).
pub(super) const DEFAULT_MBPS: u32 = 100_000;

/// One direction of a cable: its rate and its propagation delay.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Hop {
    /// Bits per second.
    pub rate_bps: u64,
    /// Nanoseconds.
    pub delay_ns: u64,
}

/// Where a rank's NIC is cabled.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Attach {
    /// The switch (index in the topology's order).
    pub switch: usize,
    /// The switch's interface.
    pub port: String,
    /// The cable's speed, Mb/s, and delay.
    pub mbps: u32,
    pub delay_ns: u64,
}

/// A cable between two switches, as `(switch, interface)` at each end.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Trunk {
    pub a: (usize, String),
    pub b: (usize, String),
    pub mbps: u32,
    pub delay_ns: u64,
}

/// The topology as the results read it.
#[derive(Debug, Clone, Default)]
pub(super) struct FabricMap {
    /// Switch names, topology order.
    pub switches: Vec<String>,
    /// Per switch, its distance from the hosts: 1 for a switch cabled to a
    /// host (leaf, rail switch), 2 for one cabled to those (spine), 3
    /// above (super-spine); 0 for a switch no host reaches.
    pub tiers: Vec<u8>,
    /// Cables between switches.
    pub trunks: Vec<Trunk>,
    /// Per rank, its cable (None: the topology has none for it).
    pub attach: Vec<Option<Attach>>,
    /// Per switch and interface, the node and port at the other end.
    pub peers: BTreeMap<(usize, String), (String, String)>,
}

impl FabricMap {
    /// Reads `t` for the ranks `ranks` (their names are `host.port`).
    pub(super) fn new(t: &Topology, ranks: &[RankAddr]) -> FabricMap {
        let index: HashMap<&str, usize> = t
            .switches
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let mut m = FabricMap {
            switches: t.switches.iter().map(|s| s.name.clone()).collect(),
            tiers: vec![0; t.switches.len()],
            ..FabricMap::default()
        };
        let mut at_host: HashMap<(&str, &str), Attach> = HashMap::new();
        for l in &t.links {
            let mbps = l.speed.unwrap_or(DEFAULT_MBPS);
            let (sa, sb) = (index.get(l.a.node.as_str()), index.get(l.b.node.as_str()));
            for (me, far, sw) in [(&l.a, &l.b, sa), (&l.b, &l.a, sb)] {
                if let Some(&s) = sw {
                    m.peers
                        .insert((s, me.port.clone()), (far.node.clone(), far.port.clone()));
                }
            }
            match (sa, sb) {
                (Some(&a), Some(&b)) => m.trunks.push(Trunk {
                    a: (a, l.a.port.clone()),
                    b: (b, l.b.port.clone()),
                    mbps,
                    delay_ns: l.delay_ns,
                }),
                (Some(&s), None) | (None, Some(&s)) => {
                    let (host, sw_end) = if sa.is_some() {
                        (&l.b, &l.a)
                    } else {
                        (&l.a, &l.b)
                    };
                    m.tiers[s] = 1;
                    at_host.insert(
                        (host.node.as_str(), host.port.as_str()),
                        Attach {
                            switch: s,
                            port: sw_end.port.clone(),
                            mbps,
                            delay_ns: l.delay_ns,
                        },
                    );
                }
                (None, None) => {}
            }
        }
        // Breadth first from the leaves.
        let mut frontier: Vec<usize> = (0..m.tiers.len()).filter(|&s| m.tiers[s] == 1).collect();
        let mut tier = 1u8;
        while !frontier.is_empty() {
            tier = tier.saturating_add(1);
            let mut next = Vec::new();
            for &s in &frontier {
                let near: Vec<usize> = m.neighbours(s).map(|(n, _)| n).collect();
                for n in near {
                    if m.tiers[n] == 0 {
                        m.tiers[n] = tier;
                        next.push(n);
                    }
                }
            }
            frontier = next;
        }
        m.attach = ranks
            .iter()
            .map(|r| {
                let host = t.hosts.get(r.host)?;
                let port = r.name.strip_prefix(&format!("{}.", host.name))?;
                at_host.get(&(host.name.as_str(), port)).cloned()
            })
            .collect();
        m
    }

    /// The switches cabled to `s`, with the cable's speed and delay as a
    /// hop out of `s`.
    fn neighbours(&self, s: usize) -> impl Iterator<Item = (usize, Hop)> + '_ {
        self.trunks.iter().filter_map(move |t| {
            let hop = Hop {
                rate_bps: u64::from(t.mbps) * 1_000_000,
                delay_ns: t.delay_ns,
            };
            if t.a.0 == s {
                Some((t.b.0, hop))
            } else if t.b.0 == s {
                Some((t.a.0, hop))
            } else {
                None
            }
        })
    }

    /// The cables between switch `from` and switch `to` on a shortest path
    /// (fewest hops, then least delay and store-and-forward of `frame`
    /// bytes: the routing protocols' choice, and of the equal-cost ones the
    /// fastest); `None` when no path joins them.
    pub(super) fn switch_path(&self, from: usize, to: usize, frame: u64) -> Option<Vec<Hop>> {
        let n = self.switches.len();
        if from >= n || to >= n {
            return None;
        }
        let mut best: Vec<Option<(u32, u64)>> = vec![None; n];
        let mut prev: Vec<Option<(usize, Hop)>> = vec![None; n];
        let mut heap = BinaryHeap::new();
        best[from] = Some((0, 0));
        heap.push(Reverse(((0u32, 0u64), from)));
        while let Some(Reverse((cost, s))) = heap.pop() {
            if best[s] != Some(cost) {
                continue;
            }
            if s == to {
                break;
            }
            for (nb, hop) in self.neighbours(s) {
                let c = (
                    cost.0 + 1,
                    cost.1 + hop.delay_ns + serialise_ns(frame, hop.rate_bps),
                );
                if best[nb].is_none_or(|b| c < b) {
                    best[nb] = Some(c);
                    prev[nb] = Some((s, hop));
                    heap.push(Reverse((c, nb)));
                }
            }
        }
        best[to]?;
        let mut hops = Vec::new();
        let mut at = to;
        while at != from {
            let (p, hop) = prev[at]?;
            hops.push(hop);
            at = p;
        }
        hops.reverse();
        Some(hops)
    }
}

/// Nanoseconds to send `bytes` at `rate_bps` (0 at rate 0).
pub(super) fn serialise_ns(bytes: u64, rate_bps: u64) -> u64 {
    if rate_bps == 0 {
        return 0;
    }
    let ns = (u128::from(bytes) * 8_000_000_000).div_ceil(u128::from(rate_bps));
    u64::try_from(ns).unwrap_or(u64::MAX)
}
