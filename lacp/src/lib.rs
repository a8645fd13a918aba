//! LACP (IEEE 802.1AX link aggregation) for railyard, as a protocol crate
//! without I/O: the wire view of LACPDUs ([`wire`]) and an agent
//! ([`Agent`]) that runs the Receive, Periodic Transmission, Selection and
//! Mux machines of every port-channel member of a switch, with frames in
//! and out as byte slices and the time as an argument.
//!
//! The agent knows nothing of sockets, threads or the switch it runs in:
//! the daemon feeds it the Slow Protocols frames its ports punt and their
//! link changes, calls [`Agent::poll`] at [`Agent::next_deadline`], sends
//! what comes out, and asks [`Agent::members`] which ports the dataplane
//! may hash a port-channel's traffic over. The same code runs under
//! virtual time in tests.

#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Tests state their expectations with unwrap and panic.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

// `enum_with_unknown!` for the wire views.
#[macro_use]
extern crate railyard_wire_core;

mod agent;
pub mod snapshot;
pub mod wire;

pub use agent::*;
pub use snapshot::{
    ChannelSnapshot, InfoSnapshot, LacpCounters, LacpSnapshot, MemberStatus, PortSnapshot,
};

/// Nanoseconds since an arbitrary epoch chosen by the caller; every entry
/// point of the agent takes the time in these.
pub type Nanos = u64;
