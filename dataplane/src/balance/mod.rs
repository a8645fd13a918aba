//! Load balancing over the next hops of an ECMP group.
//!
//! Three ways to pick a member, from the NX-OS configuration:
//!
//! * **ECMP** (always available): a flow hash over the fields `ip
//!   load-sharing` selects ([`hash`]), seeded per switch (`universal-id`) and
//!   rotated (`rotate`) so switches in series do not polarise, indexes a
//!   resilient bucket table ([`group`]): removing a member moves only its
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
pub mod group;
pub mod hash;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::clock::Nanos;
use crate::fib::Fib;
use crate::model::{PortId, SwitchModel};
use crate::wire::MacAddr;

pub use dlb::QualityBoard;
pub use group::EcmpGroup;

/// Which packet fields feed the ECMP hash, and how it is seeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EcmpHashModel {
    /// Hash the source address.
    pub src_addr: bool,
    /// Hash the destination address.
    pub dst_addr: bool,
    /// Hash the transport source port (the RoCEv2 entropy field).
    pub src_port: bool,
    /// Hash the transport destination port.
    pub dst_port: bool,
    /// Hash source and destination in order (direction-sensitive); without
    /// it they are folded together, so both directions of a flow hash alike.
    pub concatenation: bool,
    /// Also hash the RoCEv2 BTH destination QP, which tells apart streams
    /// between the same two hosts and ports.
    pub rocev2_dest_qp: bool,
    /// Bits the final hash is rotated right by (0–63, taken modulo 32).
    pub rotate: u8,
    /// The switch's hash seed (`universal-id`): different seeds give
    /// uncorrelated member choices for the same flow.
    pub seed: u32,
}

impl Default for EcmpHashModel {
    fn default() -> Self {
        EcmpHashModel {
            src_addr: true,
            dst_addr: true,
            src_port: true,
            dst_port: true,
            concatenation: false,
            rocev2_dest_qp: false,
            rotate: 0,
            seed: 0,
        }
    }
}

/// How DLB picks a member.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DlbMode {
    /// Re-pick the best member at an idle gap longer than the flowlet aging.
    #[default]
    Flowlet,
    /// Every packet goes to the best member.
    PerPacket,
}

/// Dynamic load balancing (`hardware profile dlb`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DlbModel {
    /// The `dlb-interface`s; a group is balanced dynamically only when all
    /// its members are here.
    pub ports: Vec<PortId>,
    /// Flowlet or per-packet.
    pub mode: DlbMode,
    /// The virtual next-hop MAC of DLB groups (`mac-address`), shown as the
    /// groups' adjacency as on Nexus; frames still carry the real neighbour's
    /// MAC.
    pub mac: MacAddr,
    /// Idle gap that ends a flowlet.
    pub flowlet_aging_ns: Nanos,
    /// Load percentages where quality bands 1…7 start.
    pub thresholds: [u8; 7],
    /// The rate estimator keeps 1 − 2^−decay of its value each sampling interval.
    pub decay_factor: u8,
    /// How often each port's rate estimate is decayed and its band published.
    pub sampling_interval_ns: Nanos,
    /// Weigh members by their quality; without it every member ties (flowlets
    /// then spread by hash, packets round-robin).
    pub load_awareness: bool,
    /// Entries in each worker's flowlet table (a power of two).
    pub flowlet_table_size: usize,
}

impl Default for DlbModel {
    fn default() -> Self {
        DlbModel {
            ports: Vec::new(),
            mode: DlbMode::Flowlet,
            mac: MacAddr([0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc]),
            flowlet_aging_ns: 500_000,
            thresholds: [12, 25, 37, 50, 62, 75, 87],
            decay_factor: 2,
            sampling_interval_ns: 16_000,
            load_awareness: true,
            flowlet_table_size: 4096,
        }
    }
}

/// Everything the switch needs to spread routed traffic.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadBalanceModel {
    /// The ECMP hash.
    pub hash: EcmpHashModel,
    /// Dynamic load balancing, when `hardware profile dlb` is configured.
    pub dlb: Option<DlbModel>,
}

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
    /// `hash` at `now`; `usable(port)` says whether an egress port can take
    /// traffic (a member whose port is down is never chosen while another is
    /// up). Returns `None` when every member is down.
    #[inline]
    pub fn choose(
        &mut self,
        group: &EcmpGroup,
        hash: u32,
        bytes: usize,
        now: Nanos,
        usable: impl Fn(PortId) -> bool,
    ) -> Option<Choice> {
        let id = group.id() as usize;
        let counters = self.counters.get_mut(id)?;
        let member = match (&mut self.dlb, group.is_dlb()) {
            (Some(state), true) => {
                state.choose(group, hash, bytes, now, &self.quality, &usable, counters)?
            }
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
