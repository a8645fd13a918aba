//! LLDP (802.1AB) and DCBX (IEEE 802.1Qaz and CEE) for railyard, as a
//! protocol crate without I/O: the wire views of LLDPDUs and DCBX TLVs
//! ([`wire`]), the DCBX resolution rules ([`dcbx`]) and an agent ([`Agent`])
//! that takes a plain [`AgentConfig`], frames in and out, and the time as an
//! argument.
//!
//! The agent knows nothing of sockets, threads or the switch it runs in; the
//! daemon (railyard's control plane) builds the configuration from its own
//! model, feeds received frames, calls [`Agent::poll`] at
//! [`Agent::next_deadline`] and sends what comes out. The same code runs
//! under virtual time in tests.

#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Tests state their expectations with unwrap and panic.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

// `enum_with_unknown!` for the wire views, in every module as it was when
// the macro was defined here.
#[macro_use]
extern crate railyard_wire_core;

mod agent;
pub mod dcbx;
#[cfg(any(test, feature = "fixture"))]
pub mod fixture;
pub mod snapshot;
pub mod wire;

pub use agent::*;
pub use snapshot::{
    DcbxSnapshot, LldpCounters, LldpSnapshot, NeighborSnapshot, PortSnapshot, RawOrgTlv, RawTlv,
};

/// Nanoseconds since an arbitrary epoch chosen by the caller; every entry
/// point of the agent takes the time in these.
pub type Nanos = u64;
