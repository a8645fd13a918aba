//! RoCEv2 endpoints as a protocol crate without I/O, so that one model of a
//! GPU server's NICs drives both a virtual-time fabric (`railyard sim`) and
//! a live lab (`railyard lab collective`), and their results can agree.
//!
//! The layers, bottom up:
//!
//! * [`wire`]: the InfiniBand transport headers RoCEv2 carries after UDP
//!   (RETH, AETH, immediate data), the ICRC, and whole frames built and
//!   read in one place.
//! * [`dcqcn`]: DCQCN's notification point (CNP pacing) and reaction point
//!   (rate cuts, α, fast recovery, additive and hyper increase), with the
//!   parameters named as NVIDIA ConnectX exposes them.
//! * [`qp`]: a reliable-connected queue pair: RDMA WRITE segmented by path
//!   MTU, coalesced ACKs, go-back-N on NAK and on timeout.
//! * [`nic`]: a NIC: queue pairs behind one port, paced per QP at the DCQCN
//!   rate and serialised at line rate, honouring PFC from its switch.
//! * [`plan`], [`collective`], [`host`]: a job (a collective or a set of
//!   flows) planned over ranks, one rank per NIC (NIC n of a host on rail
//!   n), and a host that runs its ranks' part of it, with the GPU-to-GPU
//!   link inside the server.
//! * [`flows`]: background traffic: published flow-size distributions and
//!   seeded Poisson arrivals.
//! * [`report`]: results as nccl-tests prints them.
//!
//! Every entry point takes the time as an argument ([`Nanos`]); nothing
//! here sleeps, spawns or touches a socket.

#![deny(missing_docs)]
#![deny(unsafe_code)]
#![warn(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
// Tests state their expectations with unwrap and panic.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::expect_used, clippy::panic))]

pub mod collective;
pub mod dcqcn;
pub mod flows;
pub mod host;
pub mod nic;
pub mod plan;
pub mod qp;
pub mod report;
mod splitmix;
pub mod wire;

pub use railyard_dataplane::clock::Nanos;
pub use railyard_wire_core::MacAddr;
