//! Sizing a Clos fabric: how many of a leaf's ports face hosts and how
//! many face spines, how many leaves, spines and super-spines there are,
//! and whether every switch has the ports its cables need.
//!
//! The rule at every tier: a switch of `radix` ports gives `down` ports to
//! the tier below and `up` ports to the tier above, with `up` the fewest
//! links whose capacity is at least `down / oversubscription` of the
//! downlink capacity, rounded up to a whole number of links to every
//! switch above (so each leaf reaches each spine over the same number of
//! parallel links). `down` is as large as the radix allows.
//!
//! A three-tier fabric is built of pods (leaves with their own spines,
//! spine tier 1:1) and spine planes: spine `s` of every pod connects to
//! the super-spines of plane `s` only, as in the usual three-stage Clos,
//! so that a super-spine's ports go to one spine per pod.

use super::GenerateError;

/// What the fabric must connect, in the sizing's terms.
#[derive(Debug, Clone, PartialEq)]
pub struct Demand {
    /// Planes of leaves: the rails of a rail-aligned design (NIC n of every
    /// host on plane n), 1 when NICs are spread over leaves plainly.
    pub planes: u32,
    /// Host NICs on each plane.
    pub endpoints: u32,
    /// Ports per switch.
    pub radix: u32,
    /// Host link speed, Mb/s.
    pub speed: u32,
    /// Switch–switch link speed, Mb/s.
    pub uplink_speed: u32,
    /// Leaf downlink:uplink capacity ratio (the spine tier of a three-tier
    /// fabric is 1:1).
    pub oversubscription: f64,
    /// Spines (per pod in a three-tier fabric); `None`: the fewest that fit.
    pub spines: Option<u32>,
    /// Super-spines in all (a multiple of the spines per pod); `Some`
    /// makes the fabric three-tier, `Some(None)` picks the fewest that fit.
    pub superspines: Option<Option<u32>>,
}

/// The sized fabric. Leaves of one plane are numbered 0..`leaves_per_plane`;
/// leaf group `g` holds endpoints `g * host_ports ..` of its plane and lies
/// in pod `g / groups_per_pod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// Planes of leaves (rails, or 1).
    pub planes: u32,
    /// Host NICs per plane.
    pub endpoints: u32,
    /// Ports per switch.
    pub radix: u32,
    /// Leaves per plane.
    pub leaves_per_plane: u32,
    /// Host ports on a full leaf (the last leaf of a plane may have fewer
    /// hosts).
    pub host_ports: u32,
    /// Uplinks of every leaf.
    pub leaf_uplinks: u32,
    /// Spines (per pod).
    pub spines: u32,
    /// Parallel links from a leaf to each spine of its pod.
    pub leaf_links_per_spine: u32,
    /// Pods (1 in a two-tier fabric).
    pub pods: u32,
    /// Leaves per plane in a full pod (all of them in a two-tier fabric).
    pub groups_per_pod: u32,
    /// Uplinks of every spine (0 in a two-tier fabric).
    pub spine_uplinks: u32,
    /// Super-spines in all (0 in a two-tier fabric): `spines` planes of
    /// `superspines_per_plane`.
    pub superspines: u32,
    /// Super-spines of each spine plane.
    pub superspines_per_plane: u32,
    /// Parallel links from a spine to each super-spine of its plane.
    pub spine_links_per_superspine: u32,
}

impl Plan {
    /// Whether the fabric has a super-spine tier.
    pub fn three_tier(&self) -> bool {
        self.superspines > 0
    }

    /// Leaves in all.
    pub fn leaves(&self) -> u32 {
        self.planes * self.leaves_per_plane
    }

    /// Spines in all.
    pub fn all_spines(&self) -> u32 {
        self.pods * self.spines
    }

    /// Ports a spine uses towards its leaves (leaves of a full pod).
    pub fn spine_down_ports(&self) -> u32 {
        self.planes * self.groups_per_pod * self.leaf_links_per_spine
    }

    /// Ports a super-spine uses: links from its plane's spine of every pod.
    pub fn superspine_ports(&self) -> u32 {
        self.pods * self.spine_links_per_superspine
    }

    /// Leaf groups (per plane) in pod `q`.
    pub fn groups_in_pod(&self, q: u32) -> u32 {
        let first = q * self.groups_per_pod;
        self.leaves_per_plane
            .saturating_sub(first)
            .min(self.groups_per_pod)
    }

    /// Endpoints of a plane on leaf group `g`.
    pub fn hosts_on_leaf(&self, g: u32) -> u32 {
        let first = g * self.host_ports;
        self.endpoints.saturating_sub(first).min(self.host_ports)
    }
}

/// `ceil(n / m) * m`.
fn round_up(n: u32, m: u32) -> u32 {
    n.div_ceil(m) * m
}

/// The uplinks a switch with `down` downlinks at `down_speed` needs at
/// `up_speed` for the ratio `ratio`, a multiple of `peers` (at least one
/// link to each switch above).
fn uplinks_for(down: u32, down_speed: u32, up_speed: u32, ratio: f64, peers: u32) -> u32 {
    let need = f64::from(down) * f64::from(down_speed) / (ratio * f64::from(up_speed));
    // A hair below the exact quotient so that 32 × 400G / 400G is 32, not 33.
    let links = (need - 1e-9).ceil().max(1.0);
    let links = if links > f64::from(u32::MAX / 2) {
        u32::MAX / 2
    } else {
        links as u32
    };
    round_up(links, peers.max(1))
}

/// The largest `down` in 1..=`max_down` such that `down` plus its uplinks
/// fit in `radix` ports, with those uplinks.
fn split(
    radix: u32,
    max_down: u32,
    down_speed: u32,
    up_speed: u32,
    ratio: f64,
    peers: u32,
) -> Option<(u32, u32)> {
    (1..=max_down.min(radix)).rev().find_map(|d| {
        let u = uplinks_for(d, down_speed, up_speed, ratio, peers);
        (d + u <= radix).then_some((d, u))
    })
}

/// Why a given number of spines and super-spines does not work.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Misfit {
    /// A leaf cannot hold a host port besides its uplinks.
    LeafFull { uplinks: u32 },
    /// A spine needs more ports than it has.
    SpinePorts { need: u32 },
    /// A three-tier spine cannot hold a leaf's links besides its uplinks.
    SpineFull,
    /// A super-spine needs more ports than it has.
    SuperspinePorts { need: u32 },
}

/// Sizes the fabric for `s` spines (per pod) and, in a three-tier fabric,
/// `n` super-spines per spine plane.
fn plan_with(d: &Demand, s: u32, n: Option<u32>) -> Result<Plan, Misfit> {
    let x = d.oversubscription;
    let (max_ports, _) =
        split(d.radix, d.endpoints, d.speed, d.uplink_speed, x, s).ok_or(Misfit::LeafFull {
            uplinks: uplinks_for(1, d.speed, d.uplink_speed, x, s),
        })?;
    // As many leaves as needed, the hosts spread evenly over them.
    let leaves_per_plane = d.endpoints.div_ceil(max_ports);
    let host_ports = d.endpoints.div_ceil(leaves_per_plane);
    let leaf_uplinks = uplinks_for(host_ports, d.speed, d.uplink_speed, x, s);
    let k = leaf_uplinks / s;
    let mut plan = Plan {
        planes: d.planes,
        endpoints: d.endpoints,
        radix: d.radix,
        leaves_per_plane,
        host_ports,
        leaf_uplinks,
        spines: s,
        leaf_links_per_spine: k,
        pods: 1,
        groups_per_pod: leaves_per_plane,
        spine_uplinks: 0,
        superspines: 0,
        superspines_per_plane: 0,
        spine_links_per_superspine: 0,
    };
    let Some(n) = n else {
        let need = plan.spine_down_ports();
        return if need <= d.radix {
            Ok(plan)
        } else {
            Err(Misfit::SpinePorts { need })
        };
    };
    // Three tiers: a pod holds as many leaf groups (one leaf per plane
    // each) as its spines' ports allow besides their 1:1 uplinks.
    let per_group = d.planes * k;
    let max_groups = (1..=leaves_per_plane).rev().find(|&g| {
        let down = g * per_group;
        down + uplinks_for(down, 1, 1, 1.0, n) <= d.radix
    });
    let Some(max_groups) = max_groups else {
        return Err(Misfit::SpineFull);
    };
    let pods = leaves_per_plane.div_ceil(max_groups);
    let groups_per_pod = leaves_per_plane.div_ceil(pods);
    let spine_uplinks = uplinks_for(groups_per_pod * per_group, 1, 1, 1.0, n);
    plan.pods = pods;
    plan.groups_per_pod = groups_per_pod;
    plan.spine_uplinks = spine_uplinks;
    plan.superspines = n * s;
    plan.superspines_per_plane = n;
    plan.spine_links_per_superspine = spine_uplinks / n;
    let need = plan.superspine_ports();
    if need <= d.radix {
        Ok(plan)
    } else {
        Err(Misfit::SuperspinePorts { need })
    }
}

/// The first plan, trying spine counts from 2 (then 1) and, for each, the
/// super-spines per plane from 1, where the user left them open. A total
/// of super-spines given only goes with spine counts that divide it.
fn search(d: &Demand) -> Option<Plan> {
    let spines: Vec<u32> = match d.spines {
        Some(c) => vec![c],
        None => (2..=d.radix).chain([1]).collect(),
    };
    for s in spines {
        let per_plane: Vec<u32> = match d.superspines {
            None => {
                if let Ok(p) = plan_with(d, s, None) {
                    return Some(p);
                }
                continue;
            }
            Some(Some(n)) if n % s == 0 => vec![n / s],
            Some(Some(_)) => continue,
            Some(None) => (1..=d.radix).collect(),
        };
        for m in per_plane {
            if let Ok(p) = plan_with(d, s, Some(m)) {
                return Some(p);
            }
        }
    }
    None
}

/// Sizes the fabric.
///
/// # Errors
/// No spine (and super-spine) count fits the radix, or the ones given do
/// not: the message says which switch runs out of ports and the hint what
/// would fit.
pub fn plan(d: &Demand) -> Result<Plan, GenerateError> {
    if let Some(p) = search(d) {
        return Ok(p);
    }
    let three = d.superspines.is_some();
    let all_given = d.spines.is_some() && !matches!(d.superspines, Some(None));
    let s = d.spines.unwrap_or(1);
    if let (Some(s), Some(Some(n))) = (d.spines, d.superspines) {
        if n % s != 0 {
            return Err(GenerateError::new(
                format!(
                    "--superspines {n} does not split into {s} spine planes: spine S of every \
                     pod connects to the super-spines of plane S, so each plane needs as many"
                ),
                format!("--superspines {}", n.div_ceil(s) * s),
            ));
        }
    }
    let n = d.superspines.map(|n| n.map_or(1, |n| n / s.max(1)).max(1));
    // Why: the counts given explained; with counts left open, only a leaf
    // without a host port even under one spine has a reason of its own.
    let misfit = match plan_with(d, s, n) {
        Err(m) if all_given || matches!(m, Misfit::LeafFull { .. }) => Some(m),
        _ => None,
    };
    let open = Demand {
        spines: None,
        superspines: d.superspines.map(|_| None),
        ..d.clone()
    };
    let alternative = search(&open).map(|p| {
        if three {
            format!(
                "--spines {} --superspines {} would fit",
                p.spines, p.superspines
            )
        } else {
            format!("--spines {} would fit", p.spines)
        }
    });
    let hint = match (&misfit, alternative) {
        (Some(Misfit::LeafFull { .. }), _) => {
            "raise --oversubscription or --radix, or lower --speed against --uplink-speed"
                .to_string()
        }
        (_, Some(a)) => a,
        (_, None) if three => "raise --radix or --oversubscription".to_string(),
        (_, None) => "raise --radix or --oversubscription, or generate `three-tier` \
                      (spines in pods under super-spines)"
            .to_string(),
    };
    let message = match misfit {
        Some(Misfit::LeafFull { uplinks }) => format!(
            "a leaf of {} ports has no port left for a host: at oversubscription {} \
             one {} Mb/s host port needs {uplinks} uplink(s) at {} Mb/s{}",
            d.radix,
            d.oversubscription,
            d.speed,
            d.uplink_speed,
            if s > 1 {
                format!(" (at least one to each of {s} spines)")
            } else {
                String::new()
            }
        ),
        Some(Misfit::SpinePorts { need }) => format!(
            "with {s} spines each spine needs {need} ports, more than the radix {}",
            d.radix
        ),
        Some(Misfit::SpineFull) => format!(
            "with {s} spines per pod a spine of {} ports cannot hold one leaf group's links \
             and its uplinks to the {} super-spine(s) of its plane",
            d.radix,
            n.unwrap_or(0)
        ),
        Some(Misfit::SuperspinePorts { need }) => format!(
            "with {s} spines per pod and {} super-spines each super-spine needs {need} ports, \
             more than the radix {}",
            n.unwrap_or(0) * s,
            d.radix
        ),
        None => format!(
            "no spine{} count fits {} host NICs per {} with {}-port switches",
            if three { " and super-spine" } else { "" },
            d.endpoints,
            if d.planes > 1 { "rail" } else { "fabric" },
            d.radix
        ),
    };
    Err(GenerateError::new(message, hint))
}
