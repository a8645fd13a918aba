//! A fabric of railyard switches in one process, in virtual time.
//!
//! Load balancing is only observable across switches: a flowlet that moves
//! to another uplink is reordered (or not) by what happens on the *other*
//! paths, and utilisation only means something against port speeds. This
//! module wires real [`Switch`]es together the way `pfc_fabric.rs` does —
//! in-memory [`RingLink`] cables between switches, one shared
//! [`VirtualClock`], a loop that polls every switch and jumps time to the
//! next receive or departure — so that the ECMP, flowlet and per-packet
//! modes can be compared on identical traffic, deterministically.
//!
//! Two layers:
//!
//! * [`FabricBuilder`] / [`Fabric`]: any switches, any cables, hosts that
//!   play a schedule of generated frames ([`HostTx`]) and record what the
//!   switch sends them ([`Arrival`]), optional taps on cables
//!   ([`TapRecord`]). Every frame carries a flow id and a sequence number in
//!   its payload ([`Tag`]), so receivers can see loss, reordering and
//!   completion without keeping the frames.
//! * [`TwoTier`]: a rail/spine topology (L leaves, S spines, H hosts per
//!   leaf) with the book's RoCEv2 classification, static routes and ARP,
//!   and a [`Balance`] mode on the leaves; [`Flow`] describes elephants and
//!   mice; [`Outcome`] turns a run into the numbers a comparison needs
//!   (per-uplink bytes, imbalance, drops, ECN, reordering, completion times).
//!
//! Every cable has the same one-way delay ([`CABLE_DELAY_NS`] unless a
//! builder or topology says otherwise), so every leaf–spine–leaf path has
//! the same delay and any reordering a receiver sees comes from queueing on
//! different paths alone. The delay is also what a pause takes to reach the
//! peer, so PFC here needs the headroom it needs on a cable.
//!
//! A switch may be given worker scheduling [`Gaps`]: stretches in which it
//! is not polled while its peers keep sending onto its cables, which is what
//! makes headroom on a software path so much larger than on a wire. A cable
//! ring that fills is counted ([`FabricRun::ring_full`]), never silent.
//!
//! Host ports are not `TracePort`s: a long run would hold every generated
//! and every captured frame in memory. A [`HostPort`] builds each frame when
//! it is due (with `railyard_control::traffic::build`) and keeps only a
//! small [`Arrival`] record of what it receives.
//!
//! The parts, one per file: the host and tap ports (`ports`), wiring a
//! fabric together (`builder`), running it in virtual time (`run`), flows
//! and balancing modes (`flow`), the two-tier topology (`two_tier`), what a
//! run showed (`outcome`), a seeded generator for scenarios (`rng`) and
//! worker scheduling gaps (`gaps`).
//!
//! [`Switch`]: railyard_dataplane::pipeline::Switch
//! [`RingLink`]: railyard_dataplane::port::ring::RingLink
//! [`VirtualClock`]: railyard_dataplane::clock::VirtualClock

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::pfc::{CABLE_NS_PER_METRE, DEFAULT_CABLE_METRES};

mod builder;
mod flow;
mod gaps;
mod outcome;
mod ports;
mod rng;
mod run;
mod two_tier;

pub use builder::{Attach, FabricBuilder};
pub use flow::{Balance, Flow, FlowKind, HostId};
pub use gaps::Gaps;
pub use outcome::{imbalance, percentile, FlowResult, Outcome};
pub use ports::{Arrival, ArrivalLog, HostPort, HostTx, Tag, TapLog, TapPort, TapRecord};
pub use rng::SplitMix;
pub use run::{Fabric, FabricRun};
pub use two_tier::{Lossless, TwoTier};

/// Virtual time with no event and no progress after which the fabric counts
/// as wedged (pauses that never end, a queue that can never drain).
pub const WEDGE_NS: Nanos = 100_000_000;

/// Frames each direction of a switch-to-switch cable holds by default.
pub const RING_CAPACITY: usize = 8192;

/// One-way delay of a cable by default: the cable length default headroom
/// assumes ([`DEFAULT_CABLE_METRES`] at [`CABLE_NS_PER_METRE`]), so a fabric
/// with default thresholds is as lossless as they promise and no more.
pub const CABLE_DELAY_NS: Nanos = DEFAULT_CABLE_METRES * CABLE_NS_PER_METRE;

/// The DSCP of RoCEv2 traffic in the book's policy.
pub const ROCE_DSCP: u8 = 24;
/// The qos-group (and egress queue) DSCP 24 maps to.
pub const ROCE_QUEUE: usize = 3;
/// ECN codepoint ECT(0).
pub const ECT0: u8 = 0b10;
/// ECN codepoint CE.
pub const CE: u8 = 0b11;
