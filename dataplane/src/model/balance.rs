//! How routed traffic is spread over next-hop groups, as plain data: the
//! ECMP hash fields and seed, and dynamic load balancing. The behaviour is
//! [`crate::balance`]'s.

use serde::{Deserialize, Serialize};

use super::PortId;
use crate::clock::Nanos;
use crate::wire::MacAddr;

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
    /// `dre-thresholds level-1 … level-7`: level-n is the width, in percent
    /// of link load, of quality band n−1, so band n starts at the sum of
    /// levels 1…n (Cisco's examples add up to 100; see
    /// [`crate::balance::dlb`]).
    pub levels: [u8; 7],
    /// The rate estimator keeps 1 − 2^−decay of its value each sampling interval.
    pub decay_factor: u8,
    /// How often each port's rate estimate is decayed and its band published.
    pub sampling_interval_ns: Nanos,
    /// Weigh members by their quality; without it every member ties (flowlets
    /// then spread by hash, packets round-robin).
    pub load_awareness: bool,
    /// Entries in each worker's flowlet table (a power of two).
    pub flowlet_table_size: usize,
    /// `static-pinning`: (source, destination) ports; traffic arriving on
    /// the source that is balanced over a DLB group containing the
    /// destination leaves on the destination while it is up.
    pub pins: Vec<(PortId, PortId)>,
}

impl Default for DlbModel {
    fn default() -> Self {
        DlbModel {
            ports: Vec::new(),
            mode: DlbMode::Flowlet,
            mac: MacAddr([0x00, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc]),
            flowlet_aging_ns: 500_000,
            levels: [12, 13, 12, 13, 12, 13, 12],
            decay_factor: 2,
            sampling_interval_ns: 16_000,
            load_awareness: true,
            flowlet_table_size: 4096,
            pins: Vec::new(),
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
