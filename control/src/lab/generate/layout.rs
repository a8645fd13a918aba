//! From a sized fabric to named switches, hosts and cables: which port of
//! which switch every host NIC and every uplink takes.
//!
//! - Hosts are `h1`, `h2`, …; NIC n is `ethN`.
//! - Rail-aligned leaves (NIC n of every host on rail n+1) are `railR` when
//!   a rail has one leaf, else `railR-1`, `railR-2`, … (hosts in blocks:
//!   `railR-1` has the first hosts); plain leaves are `leaf1`, `leaf2`, …,
//!   taking NICs in host order (h1 eth0, h1 eth1, …, h2 eth0, …).
//! - Spines are `spine1`, … ; in a three-tier fabric `spineP-S` (spine S
//!   of pod P), and spine S of every pod goes to the super-spines of plane
//!   S, `superspineS-1`, `superspineS-2`, ….
//! - A leaf's host ports are `Ethernet1/1` upwards, its uplinks the top
//!   ports (up to `Ethernet1/RADIX`), uplink j to spine `j % spines`;
//!   a spine's ports go to its pod's leaves in order (leaf i takes ports
//!   `i*k + 1 ..= i*k + k` for k links per spine), its uplinks again the
//!   top ports, uplink j to super-spine `j % per-plane` of its plane; a
//!   super-spine's ports go to its plane's spines, pod by pod.

use super::address::Addressing;
use super::plan::Plan;
use crate::lab::topology::Ipv4Net;

/// A switch of the generated fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Switch {
    /// Its name.
    pub name: String,
    /// Its role (template).
    pub role: String,
}

/// One end of a cable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct End {
    /// Switch or host name.
    pub node: String,
    /// Port: `Ethernet1/N` or `ethN`.
    pub port: String,
}

/// The tier a cable joins, for grouping the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tier {
    /// Host NIC to leaf.
    Host,
    /// Leaf to spine.
    Leaf,
    /// Spine to super-spine.
    Spine,
}

/// A cable; the lower end (host, or the switch nearer the hosts) first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cable {
    /// Lower end.
    pub a: End,
    /// Upper end.
    pub b: End,
    /// Speed, Mb/s.
    pub speed: u32,
    /// Subnet.
    pub subnet: Ipv4Net,
    /// What it joins.
    pub tier: Tier,
}

/// The whole generated fabric.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Leaves, then spines, then super-spines.
    pub switches: Vec<Switch>,
    /// Host names in order.
    pub hosts: Vec<String>,
    /// Host cables (by NIC, then host), then leaf uplinks, then spine uplinks.
    pub cables: Vec<Cable>,
}

/// Names and roles, and the speeds of both kinds of link.
#[derive(Debug, Clone)]
pub struct Style {
    /// Whether NIC n of every host goes to a leaf of plane n (rails).
    pub rail_aligned: bool,
    /// NICs per host.
    pub nics: u32,
    /// Hosts.
    pub hosts: u32,
    /// Leaf role.
    pub leaf_role: String,
    /// Spine and super-spine role.
    pub spine_role: String,
    /// Host link speed.
    pub speed: u32,
    /// Switch–switch link speed.
    pub uplink_speed: u32,
}

fn eth(port: u32) -> String {
    format!("Ethernet1/{port}")
}

/// The leaf of plane `p`, group `g` (both 0-based).
pub fn leaf_name(plan: &Plan, style: &Style, p: u32, g: u32) -> String {
    if !style.rail_aligned {
        format!("leaf{}", g + 1)
    } else if plan.leaves_per_plane == 1 {
        format!("rail{}", p + 1)
    } else {
        format!("rail{}-{}", p + 1, g + 1)
    }
}

/// Spine `s` of pod `q` (both 0-based).
pub fn spine_name(plan: &Plan, q: u32, s: u32) -> String {
    if plan.three_tier() {
        format!("spine{}-{}", q + 1, s + 1)
    } else {
        format!("spine{}", s + 1)
    }
}

/// Super-spine `m` of plane `s` (both 0-based).
pub fn superspine_name(s: u32, m: u32) -> String {
    format!("superspine{}-{}", s + 1, m + 1)
}

/// Lays out the fabric `plan` describes.
pub fn layout(plan: &Plan, style: &Style, addr: &Addressing) -> Layout {
    let mut switches = Vec::new();
    for p in 0..plan.planes {
        for g in 0..plan.leaves_per_plane {
            switches.push(Switch {
                name: leaf_name(plan, style, p, g),
                role: style.leaf_role.clone(),
            });
        }
    }
    for q in 0..plan.pods {
        for s in 0..plan.spines {
            switches.push(Switch {
                name: spine_name(plan, q, s),
                role: style.spine_role.clone(),
            });
        }
    }
    for s in 0..plan.spines {
        for m in 0..plan.superspines_per_plane {
            switches.push(Switch {
                name: superspine_name(s, m),
                role: style.spine_role.clone(),
            });
        }
    }
    let hosts: Vec<String> = (1..=style.hosts).map(|h| format!("h{h}")).collect();
    let mut cables = Vec::new();
    // Host links, NIC by NIC: endpoint e of plane p is the e-th NIC of the
    // plane (a host on a rail; a (host, NIC) pair in host order otherwise).
    let mut host_cables: Vec<((u32, u32), Cable)> = Vec::new();
    for p in 0..plan.planes {
        for e in 0..plan.endpoints {
            let (host, nic) = if style.rail_aligned {
                (e + 1, p)
            } else {
                (e / style.nics + 1, e % style.nics)
            };
            let g = e / plan.host_ports;
            host_cables.push((
                (nic, host),
                Cable {
                    a: End {
                        node: format!("h{host}"),
                        port: format!("eth{nic}"),
                    },
                    b: End {
                        node: leaf_name(plan, style, p, g),
                        port: eth(e % plan.host_ports + 1),
                    },
                    speed: style.speed,
                    subnet: addr.host_link(host, nic),
                    tier: Tier::Host,
                },
            ));
        }
    }
    host_cables.sort_by_key(|(k, _)| *k);
    cables.extend(host_cables.into_iter().map(|(_, c)| c));
    // Leaf uplinks; `lower` numbers the lower switch of each /31 range.
    let mut lower = 0;
    let k = plan.leaf_links_per_spine;
    for p in 0..plan.planes {
        for g in 0..plan.leaves_per_plane {
            lower += 1;
            let q = g / plan.groups_per_pod;
            // The leaf's place among its pod's leaves.
            let i = p * plan.groups_per_pod + (g - q * plan.groups_per_pod);
            for j in 0..plan.leaf_uplinks {
                let (s, par) = (j % plan.spines, j / plan.spines);
                cables.push(Cable {
                    a: End {
                        node: leaf_name(plan, style, p, g),
                        port: eth(plan.radix - plan.leaf_uplinks + 1 + j),
                    },
                    b: End {
                        node: spine_name(plan, q, s),
                        port: eth(i * k + par + 1),
                    },
                    speed: style.uplink_speed,
                    subnet: addr.fabric_link(lower, j),
                    tier: Tier::Leaf,
                });
            }
        }
    }
    let k2 = plan.spine_links_per_superspine;
    for q in 0..plan.pods {
        for s in 0..plan.spines {
            if plan.spine_uplinks == 0 {
                break;
            }
            lower += 1;
            for j in 0..plan.spine_uplinks {
                let m = plan.superspines_per_plane;
                let (n, par) = (j % m, j / m);
                cables.push(Cable {
                    a: End {
                        node: spine_name(plan, q, s),
                        port: eth(plan.radix - plan.spine_uplinks + 1 + j),
                    },
                    b: End {
                        node: superspine_name(s, n),
                        port: eth(q * k2 + par + 1),
                    },
                    speed: style.uplink_speed,
                    subnet: addr.fabric_link(lower, j),
                    tier: Tier::Spine,
                });
            }
        }
    }
    Layout {
        switches,
        hosts,
        cables,
    }
}
