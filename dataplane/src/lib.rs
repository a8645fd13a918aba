//! railyard's packet path.
//!
//! Everything a packet touches between `rx_burst` and `tx_burst`: typed views
//! over the wire formats, the per-packet metadata the parser fills, the
//! forwarding tables, the pipeline stages, the port backends and the clocks
//! that drive time-based behaviour. The dataplane never parses configuration
//! text; it receives a compiled, plain-data [`model::SwitchModel`].

#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Tests state their expectations with unwrap and panic.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

// `enum_with_unknown!` for the wire views, in every module as it was when
// the macro was defined here.
#[macro_use]
extern crate railyard_wire_core;

pub mod balance;
pub mod capture;
pub mod clock;
pub mod counters;
pub mod fib;
pub mod host;
pub mod lanes;
pub mod mac_table;
pub mod meta;
pub mod model;
pub mod neighbor;
pub mod nexthop;
pub mod packet;
pub mod parse;
pub mod pfc;
pub mod pipeline;
pub mod port;
pub mod qos;
pub mod queue;
pub mod runtime;
pub mod span;
pub mod stats;
pub mod wire;

pub use clock::{Clock, MonotonicClock, Nanos, VirtualClock};
pub use packet::fifo;
pub use packet::{Burst, PacketBuf, PacketHint, Pool, BURST_SIZE};
