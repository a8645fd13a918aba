//! Load balancing over the next hops of an ECMP group.
//!
//! Three ways to pick a member, from the NX-OS configuration:
//!
//! * **ECMP** (always available): a flow hash over the fields `ip
//!   load-sharing` selects ([`hash`]), seeded per switch (`universal-id`) and
//!   rotated (`rotate`) so switches in series do not polarise, indexes a
//!   resilient bucket table ([`crate::nexthop`]): removing a member moves only its
//!   flows, adding one moves only what it takes over.
//! * **Flowlet DLB** (`hardware profile dlb`, `mode flowlet`), for groups whose
//!   members are all `dlb-interface`s: a packet arriving after an idle gap
//!   longer than `flowlet-aging` starts a new flowlet on the member of best
//!   quality ([`dlb`]); within a flowlet the member is kept, so a flow is
//!   never reordered as long as the gap exceeds the path-delay difference.
//! * **Per-packet DLB** (`mode per-packet`): every packet goes to a member of
//!   best quality, round-robin among equals (spraying, for receivers that
//!   accept reordering).
//!
//! Port quality is a band 0 (idle) … 7 (loaded) per egress port from a
//! discounting rate estimator of transmitted bytes plus the bytes queued,
//! published by the port's owning worker and read lock-free by every worker.
//!
//! Each worker owns a [`Balancer`] (flowlet table, round-robin state,
//! counters); groups themselves live in the FIB and are rebuilt resiliently
//! when the model changes.

pub mod dlb;
pub mod hash;

use std::sync::Arc;

use crate::clock::Nanos;
use crate::fib::Fib;
use crate::model::{DlbModel, EcmpHashModel, PortId, SwitchModel};
use crate::nexthop::EcmpGroup;

pub use dlb::QualityBoard;

/// Packets and bytes one group member carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemberCounters {
    /// Packets sent to this member.
    pub packets: u64,
    /// Their bytes (frames as received).
    pub bytes: u64,
}

/// What one ECMP group did, kept per worker and merged for show.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GroupCounters {
    /// Per member, in the group's order.
    pub members: Vec<MemberCounters>,
    /// Flowlets started (a packet after an idle gap, or a flow's first).
    pub flowlets_started: u64,
    /// Flowlets that started on another member than the flow's previous one.
    pub flowlet_moves: u64,
    /// Packets placed by per-packet choice.
    pub per_packet_choices: u64,
    /// Packets that left on another member than their flow's previous packet
    /// less than the flowlet aging earlier: each may overtake or be overtaken
    /// (an upper bound on reordering the switch can cause).
    pub reorder_risk: u64,
    /// Packets whose bucket's member was down and that were re-hashed over
    /// the members still up.
    pub rehashed: u64,
    /// Packets sent to their ingress port's `static-pinning` destination.
    pub pinned: u64,
}

/// Picks group members for one worker's packets.
pub struct Balancer {
    hash: EcmpHashModel,
    dlb: Option<dlb::DlbState>,
    quality: Arc<QualityBoard>,
    /// Per group id (the FIB's numbering).
    counters: Vec<GroupCounters>,
}

/// The member a packet goes to, and how it was picked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Choice {
    /// Index into the group's next hops.
    pub member: usize,
}

impl Balancer {
    /// A balancer for `fib`'s groups, reading port quality from `quality`.
    pub fn new(model: &SwitchModel, fib: &Fib, quality: Arc<QualityBoard>) -> Self {
        let mut b = Balancer {
            hash: model.load_balance.hash,
            dlb: None,
            quality,
            counters: Vec::new(),
        };
        b.apply(model, None, fib);
        b
    }

    /// Takes a new model and FIB; counters of groups and members that remain
    /// (same prefix, same next hop) are kept, flowlet state restarts when the
    /// DLB settings change.
    pub fn apply(&mut self, model: &SwitchModel, old: Option<&Fib>, fib: &Fib) {
        self.hash = model.load_balance.hash;
        let speeds: Vec<Option<u32>> = model.interfaces.iter().map(|i| i.speed_mbps).collect();
        let dlb = model.load_balance.dlb.as_ref();
        let keep_dlb = matches!((&self.dlb, dlb), (Some(s), Some(m)) if s.fits(m, &speeds));
        if !keep_dlb {
            self.dlb = dlb.map(|m| dlb::DlbState::new(m, &speeds));
        }
        let mut counters: Vec<GroupCounters> = fib
            .groups()
            .map(|(_, g)| GroupCounters {
                members: vec![MemberCounters::default(); g.hops().len()],
                ..GroupCounters::default()
            })
            .collect();
        if let Some(old) = old {
            for (route, g) in fib.groups() {
                let Some(og) = old.group_for(route.prefix, route.len) else {
                    continue;
                };
                let Some(prev) = self.counters.get(og.id() as usize) else {
                    continue;
                };
                let c = &mut counters[g.id() as usize];
                c.flowlets_started = prev.flowlets_started;
                c.flowlet_moves = prev.flowlet_moves;
                c.per_packet_choices = prev.per_packet_choices;
                c.reorder_risk = prev.reorder_risk;
                c.rehashed = prev.rehashed;
                c.pinned = prev.pinned;
                for (i, hop) in g.hops().iter().enumerate() {
                    if let Some(j) = og.hops().iter().position(|h| h == hop) {
                        if let Some(m) = prev.members.get(j) {
                            c.members[i] = *m;
                        }
                    }
                }
            }
        }
        self.counters = counters;
    }

    /// The ECMP hash of a parsed IP packet under this switch's settings.
    #[inline]
    pub fn flow_hash(&self, frame: &[u8], meta: &crate::meta::Meta) -> u32 {
        hash::ecmp_hash(frame, meta, &self.hash)
    }

    /// Picks the member of `group` for a packet of `bytes` with flow hash
    /// `hash` that arrived on `in_port` at `now`; `usable(port)` says whether
    /// an egress port can take traffic (a member whose port is down is never
    /// chosen while another is up). Returns `None` when every member is down.
    #[inline]
    pub fn choose(
        &mut self,
        group: &EcmpGroup,
        hash: u32,
        in_port: PortId,
        bytes: usize,
        now: Nanos,
        usable: impl Fn(PortId) -> bool,
    ) -> Option<Choice> {
        let id = group.id() as usize;
        let counters = self.counters.get_mut(id)?;
        let member = match (&mut self.dlb, group.is_dlb()) {
            (Some(state), true) => state.choose(
                group,
                hash,
                in_port,
                bytes,
                now,
                &self.quality,
                &usable,
                counters,
            )?,
            _ => {
                let m = group.member(hash);
                if usable(group.hops()[m].port) {
                    m
                } else {
                    counters.rehashed += 1;
                    group.member_among_usable(hash, &usable)?
                }
            }
        };
        let c = &mut counters.members[member];
        c.packets += 1;
        c.bytes += bytes as u64;
        Some(Choice { member })
    }

    /// Counters of group `id`.
    pub fn counters(&self, id: u32) -> Option<&GroupCounters> {
        self.counters.get(id as usize)
    }

    /// The DLB settings, when DLB is configured.
    pub fn dlb_model(&self) -> Option<&DlbModel> {
        self.dlb.as_ref().map(dlb::DlbState::model)
    }

    /// The board of port qualities this balancer reads.
    pub fn quality(&self) -> &Arc<QualityBoard> {
        &self.quality
    }
}
