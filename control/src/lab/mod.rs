//! Lab topologies on network namespaces: `railyard lab up|down|status|cabling|conservation|render|list`,
//! and fabrics generated as topology files ([`generate`]).
//!
//! A topology file (see [`topology`] and `scripts/topologies/README.md`)
//! names switches with a role, hosts, and the links between them with a
//! subnet and a speed, or at Layer 2 ([`layer2`]) VLANs with their SVIs,
//! hosts on access ports, trunks and LACP port-channels. [`render`] turns
//! each switch's role template into its configuration with computed
//! static routes ([`routes`]); [`run`] builds the lab — a namespace per node, a veth pair per link, one
//! `railyard run` per switch — and records it in a state file so that
//! `down` removes exactly that; [`report`] asks the switches for their
//! interfaces and LLDP neighbours and checks the cabling; [`conservation`]
//! checks that their counters add up; [`collective`]
//! runs RoCEv2 jobs (collectives, incasts) live over the lab's switches.

pub mod bgp;
pub mod cli;
pub mod collective;
pub mod conservation;
pub mod containerlab;
pub mod generate;
pub mod layer2;
pub mod render;
pub mod report;
pub mod routes;
pub mod run;
pub mod topology;

#[cfg(test)]
mod layer2_tests;
#[cfg(test)]
mod tests;
