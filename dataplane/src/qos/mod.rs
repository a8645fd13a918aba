//! Quality of service: ingress classification and the egress machinery of a
//! RoCEv2 switch — buffer admission, WRED/ECN, strict priority + DWRR
//! scheduling, per-queue and port shaping, sojourn-time histograms.
//!
//! The model side (plain data) lives in [`crate::model`]; these modules turn
//! it into per-port state that the fast path uses without allocating,
//! locking or making system calls. [`crate::queue::EgressQueues`] ties them
//! together for one port.
//!
//! # Classification ([`classify`])
//!
//! Ordered rules first (when any), then the CoS table (when set; untagged
//! frames are priority 0), then the DSCP table. qos-group N → egress queue N.
//!
//! # Admission ([`limit`], [`wred`])
//!
//! On arrival at queue N, in this order:
//!
//! 1. **WRED** (when configured): the average depth (bytes or packets, as the
//!    thresholds are written) is updated as avg += (depth − avg) / 2^W, with
//!    the depth the packet finds (not counting itself). Below `min` nothing
//!    happens; from `min` to `max` the packet is selected with a probability
//!    rising linearly from 0 to `drop-probability` %; at or above `max` every
//!    packet is selected. A selected packet is marked CE when the queue has
//!    `ecn` and the packet is ECN-capable (ECT(0), ECT(1), or already CE),
//!    and dropped (`wred`) otherwise.
//! 2. **Tail drop** (`tail_drop`) when the packet would exceed the queue's
//!    `queue-limit` or the port buffer. A queue has no packet capacity of
//!    its own ([`crate::fifo`]): a queue of 64-byte frames and one of
//!    jumbo frames both stop at their byte limit. Lossless packets skip
//!    WRED drops and this step; their bound is the ingress priority
//!    group's xOFF + headroom (`ingress_overflow`).
//! 3. A packet selected for marking that was admitted gets CE (IPv4 with an
//!    incremental checksum update, IPv6 in the traffic class).
//!
//! Queue limits: `Bytes`/`Packets` are static; `Percent(P)` is P % of the port
//! buffer; `Dynamic(A)` allows alpha × (free port buffer) with alpha =
//! 2^(A − 7) (A = 0..10 gives 1/128 … 8, the Broadcom/SONiC encoding). The
//! default is `Dynamic(7)` (alpha 1: a lone congested queue may hold half the
//! buffer).
//!
//! **Port buffer**: [`crate::model::InterfaceModel::buffer_bytes`], default
//! [`crate::model::DEFAULT_BUFFER_BYTES`] (8 MiB, whatever the speed), shared
//! by the port's eight queues; a railyard extension, as NX-OS sizes buffers
//! per platform.
//!
//! **WRED presets** (`random-detect threshold …`), KB = 1024 bytes, weight 0:
//!
//! | preset | min | max | drop-probability |
//! |---|---|---|---|
//! | `burst-optimized` | 950 KB | 3000 KB | 7 % |
//! | `mesh-optimized` | 150 KB | 1536 KB | 7 % |
//!
//! The random draws come from a seeded SplitMix64 per port ([`rng`]), so a
//! replay marks the same packets every time.
//!
//! # Scheduling ([`scheduler`], [`shaper`])
//!
//! Each time the wire is free, the next packet comes from, in order:
//!
//! 1. strict-priority queues, `priority level 1` first (round robin within a level);
//! 2. non-priority queues still below their guaranteed minimum
//!    (`bandwidth percent` of the port speed, or `min_bps`), round robin;
//! 3. DWRR among non-priority queues with a positive weight (`bandwidth
//!    remaining percent`, else `bandwidth percent`), quanta proportional to
//!    the weights, charged in frame bytes;
//! 4. queues of weight 0, round robin: they only get capacity the others leave.
//!
//! A queue is skipped while it is empty, paused (PFC, [`crate::queue::EgressQueues::set_paused`])
//! or above its `shape` rate; a paused or shaped queue keeps its DWRR credit.
//! The scheduler is work-conserving: the wire idles only when no queue may send.
//!
//! **Port speed**: with `speed` set, the port shaper releases a frame of L
//! bytes every (max(L, 60) + 24) × 8 bits at line rate (FCS, preamble, start
//! delimiter and inter-frame gap are not in railyard's buffers but are on the
//! wire). Frame departure times are exact to the picosecond internally and
//! rounded up to the nanosecond; in virtual-time replay the clock jumps to
//! each departure ([`crate::pipeline::Switch::next_departure`]), so output
//! pcap timestamps are those departure times. Live, a worker that polls late
//! catches up by at most [`shaper::MAX_CATCH_UP_NS`]. With no speed the port
//! is unshaped (as fast as the backend takes frames); `bandwidth percent`
//! guarantees then have no rate to refer to and are ignored, while DWRR
//! weights, priorities and `shape` rates still apply.
//!
//! # Sojourn time ([`latency`])
//!
//! Every packet is stamped when it joins its queue and its sojourn (departure
//! minus enqueue) recorded at dequeue into a preallocated HDR histogram per
//! queue (1 ns to 10 s, 2 significant digits); stats report p50, p99 and max.

pub mod classify;
pub mod ecn;
pub mod latency;
pub mod limit;
pub mod rng;
pub mod scheduler;
pub mod shaper;
pub mod wred;
