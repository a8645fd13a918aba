//! Routing through a real routing suite: railyard forwards, FRR decides.
//!
//! The NX-OS `router bgp` section (with its route-maps, prefix-lists and
//! BFD intervals) is modelled by the configuration crate; [`frr`] turns
//! that model into the configuration FRR's zebra, bgpd and bfdd read.
//! Routes come back to railyard through the kernel's routing table
//! ([`kernel_fib`]), and the routing suite reaches the switch's peers
//! through the ports' [`mirror`] interfaces.

pub mod daemons;
pub mod frr;
pub mod kernel_fib;
pub mod mirror;
pub mod netlink;

pub use frr::{frr_config, linux_name};
