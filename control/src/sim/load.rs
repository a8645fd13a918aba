//! How the fabric's cables were used: each switch port's bytes sent over
//! what its speed allowed in the run, how evenly each switch spread its
//! traffic over its uplinks (the number load balancing is judged by), and
//! how far from the hosts PFC pauses reached.

use std::collections::BTreeMap;

use railyard_dataplane::qos::shaper::WIRE_OVERHEAD_BYTES;
use railyard_dataplane::stats::SwitchStats;
use serde::Serialize;

use super::map::{FabricMap, DEFAULT_MBPS};
use crate::lab::collective::LinkPfc;

/// One direction of a cable: what a switch port sent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkLoad {
    /// Switch.
    pub switch: String,
    /// Its interface.
    pub interface: String,
    /// The switch's tier (1 leaf, 2 spine, 3 super-spine).
    pub tier: u8,
    /// The other end, `node:port`.
    pub peer: String,
    /// The other end's tier (0: a host).
    pub peer_tier: u8,
    /// The port's speed, Mb/s.
    pub speed_mbps: u32,
    /// Frame bytes it sent.
    pub tx_bytes: u64,
    /// Frames it sent.
    pub tx_frames: u64,
    /// Wire time used over the run's time: frames with FCS, preamble and
    /// inter-frame gap at the port's speed (0..=1).
    pub utilisation: f64,
}

/// How one switch spread what it sent up over its uplinks.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UplinkBalance {
    /// Switch.
    pub switch: String,
    /// Its tier.
    pub tier: u8,
    /// Uplinks (ports toward a higher tier).
    pub uplinks: usize,
    /// Bytes sent up, all uplinks.
    pub tx_bytes: u64,
    /// Busiest uplink's bytes over the mean (1: perfectly even; the
    /// number of uplinks: one took everything).
    pub max_over_mean: f64,
    /// Coefficient of variation of the uplinks' bytes (standard deviation
    /// over mean; 0: even).
    pub cv: f64,
}

/// Every switch port's load over `run_ns` of virtual time, from the
/// switches' counters (`stats`, topology order) and the port speeds they
/// were configured with (the topology's where a port has none).
pub(super) fn link_loads(map: &FabricMap, stats: &[SwitchStats], run_ns: u64) -> Vec<LinkLoad> {
    let mut out = Vec::new();
    for (s, st) in stats.iter().enumerate() {
        let tier = map.tiers.get(s).copied().unwrap_or(0);
        for (name, i) in &st.interfaces {
            let Some((node, port)) = map.peers.get(&(s, name.clone())) else {
                continue;
            };
            let peer_tier = map
                .switches
                .iter()
                .position(|n| n == node)
                .and_then(|p| map.tiers.get(p).copied())
                .unwrap_or(0);
            let speed_mbps = i
                .speed_mbps
                .or_else(|| topology_speed(map, s, name))
                .unwrap_or(DEFAULT_MBPS);
            let wire_bits = (i.tx_bytes + i.tx_packets * WIRE_OVERHEAD_BYTES) as f64 * 8.0;
            let capacity = f64::from(speed_mbps) * 1e6 * run_ns as f64 / 1e9;
            out.push(LinkLoad {
                switch: map.switches.get(s).cloned().unwrap_or_default(),
                interface: name.clone(),
                tier,
                peer: format!("{node}:{port}"),
                peer_tier,
                speed_mbps,
                tx_bytes: i.tx_bytes,
                tx_frames: i.tx_packets,
                utilisation: if capacity > 0.0 {
                    wire_bits / capacity
                } else {
                    0.0
                },
            });
        }
    }
    out
}

/// The topology's speed for switch `s`'s port `port`.
fn topology_speed(map: &FabricMap, s: usize, port: &str) -> Option<u32> {
    if let Some(a) = map
        .attach
        .iter()
        .flatten()
        .find(|a| a.switch == s && a.port == port)
    {
        return Some(a.mbps);
    }
    map.trunks
        .iter()
        .find(|t| (t.a.0 == s && t.a.1 == port) || (t.b.0 == s && t.b.1 == port))
        .map(|t| t.mbps)
}

/// Per switch with two or more uplinks that sent anything up, how evenly.
pub fn uplink_balance(loads: &[LinkLoad]) -> Vec<UplinkBalance> {
    let mut by: BTreeMap<(u8, &str), Vec<u64>> = BTreeMap::new();
    for l in loads.iter().filter(|l| l.peer_tier > l.tier) {
        by.entry((l.tier, l.switch.as_str()))
            .or_default()
            .push(l.tx_bytes);
    }
    by.into_iter()
        .filter(|(_, v)| v.len() >= 2 && v.iter().any(|b| *b > 0))
        .map(|((tier, switch), v)| {
            let n = v.len() as f64;
            let total: u64 = v.iter().sum();
            let mean = total as f64 / n;
            let max = v.iter().copied().max().unwrap_or(0) as f64;
            let var = v.iter().map(|b| (*b as f64 - mean).powi(2)).sum::<f64>() / n;
            UplinkBalance {
                switch: switch.to_string(),
                tier,
                uplinks: v.len(),
                tx_bytes: total,
                max_over_mean: max / mean,
                cv: var.sqrt() / mean,
            }
        })
        .collect()
}

/// The worst leaf's (tier 1) busiest uplink over its mean: the one number
/// a side-by-side table shows (None: no leaf sent anything up).
pub fn worst_leaf_imbalance(b: &[UplinkBalance]) -> Option<f64> {
    b.iter()
        .filter(|u| u.tier == 1)
        .map(|u| u.max_over_mean)
        .max_by(f64::total_cmp)
}

/// Sets each port's tier from `map` and returns the highest tier of a
/// switch that sent or received a pause (None: no pause anywhere).
pub(super) fn pause_tiers(map: &FabricMap, links: &mut [LinkPfc]) -> Option<u8> {
    let mut deepest = None;
    for l in links.iter_mut() {
        let tier = map
            .switches
            .iter()
            .position(|n| *n == l.switch)
            .and_then(|s| map.tiers.get(s).copied());
        l.tier = tier;
        if l.pause_tx + l.pause_rx > 0 {
            deepest = deepest.max(tier);
        }
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(switch: &str, tier: u8, peer_tier: u8, tx_bytes: u64) -> LinkLoad {
        LinkLoad {
            switch: switch.into(),
            interface: format!("Ethernet{tx_bytes}"),
            tier,
            peer: "x:y".into(),
            peer_tier,
            speed_mbps: 100_000,
            tx_bytes,
            tx_frames: 1,
            utilisation: 0.0,
        }
    }

    #[test]
    fn imbalance_is_one_when_even_and_the_uplink_count_when_one_takes_all() {
        let loads = [
            load("leaf1", 1, 2, 100),
            load("leaf1", 1, 2, 100),
            load("leaf1", 1, 0, 999_999), // a host port: not an uplink
            load("leaf2", 1, 2, 400),
            load("leaf2", 1, 2, 0),
            load("leaf2", 1, 2, 0),
            load("leaf2", 1, 2, 0),
            load("spine1", 2, 1, 5), // down: not an uplink
        ];
        let b = uplink_balance(&loads);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].switch, "leaf1");
        assert!((b[0].max_over_mean - 1.0).abs() < 1e-12);
        assert!(b[0].cv.abs() < 1e-12);
        assert!((b[1].max_over_mean - 4.0).abs() < 1e-12);
        assert!((b[1].cv - 3f64.sqrt()).abs() < 1e-12, "{}", b[1].cv);
        assert_eq!(worst_leaf_imbalance(&b), Some(4.0));
        assert_eq!(worst_leaf_imbalance(&[]), None);
    }

    #[test]
    fn the_deepest_pause_is_the_highest_tier_that_paused_or_was_paused() {
        let map = FabricMap {
            switches: vec!["leaf1".into(), "spine1".into(), "super1".into()],
            tiers: vec![1, 2, 3],
            ..FabricMap::default()
        };
        let pfc = |switch: &str, tx, rx| LinkPfc {
            switch: switch.into(),
            pause_tx: tx,
            pause_rx: rx,
            ..LinkPfc::default()
        };
        let mut links = vec![pfc("leaf1", 3, 0), pfc("spine1", 0, 2), pfc("super1", 0, 0)];
        assert_eq!(pause_tiers(&map, &mut links), Some(2));
        assert_eq!(links[2].tier, Some(3));
        let mut quiet = vec![pfc("super1", 0, 0)];
        assert_eq!(pause_tiers(&map, &mut quiet), None);
    }
}
