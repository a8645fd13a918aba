//! Counters, and the reasons a packet can be dropped.
//!
//! A drop is a fate, not an error: the stage that drops sets a [`DropReason`],
//! which indexes a plain counter array. Every drop in railyard has one.

use serde::{Deserialize, Serialize};

macro_rules! drop_reasons {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal ),+ $(,)?) => {
        /// Why a packet was dropped; each reason has its own counter.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u8)]
        pub enum DropReason {
            $( $(#[$doc])* $variant ),+
        }

        impl DropReason {
            /// Every reason, in counter order.
            pub const ALL: &'static [DropReason] = &[$(DropReason::$variant),+];
            /// Number of reasons (the length of a counter array).
            pub const COUNT: usize = [$($name),+].len();

            /// The stable name used in show output and stats JSON.
            pub const fn name(self) -> &'static str {
                match self { $(DropReason::$variant => $name),+ }
            }
        }
    };
}

drop_reasons! {
    /// Truncated or inconsistent headers (also counted in `rx_malformed`).
    Malformed = "malformed",
    /// An EtherType a routed port does not handle.
    UnknownEthertype = "unknown_ethertype",
    /// A unicast frame for a MAC address that is not the port's.
    NotOurMac = "not_our_mac",
    /// The ingress or egress interface is shut down or its link is down.
    InterfaceDown = "interface_down",
    /// No route matches the destination.
    NoRoute = "no_route",
    /// The route points to Null0.
    NullRoute = "null_route",
    /// TTL or hop limit would reach zero.
    TtlExpired = "ttl_expired",
    /// The packet is larger than the egress interface's MTU.
    MtuExceeded = "mtu_exceeded",
    /// The next hop's MAC is unknown and its wait queue is full.
    NeighborQueueFull = "neighbor_queue_full",
    /// The next hop did not answer resolution in time.
    NeighborUnresolved = "neighbor_unresolved",
    /// Addressed to the switch, but nothing on the switch handles it.
    LocalUnhandled = "local_unhandled",
    /// IPv4 broadcast/multicast or IPv6 multicast that the switch does not route.
    NotRoutable = "not_routable",
    /// The egress queue is at its limit.
    TailDrop = "tail_drop",
    /// WRED decided to drop (non-ECT traffic, or ECN disabled).
    Wred = "wred",
    /// Lossless headroom exhausted (PFC did not stop the sender in time).
    IngressOverflow = "ingress_overflow",
    /// Dropped by the PFC watchdog on a stuck queue.
    PfcWatchdog = "pfc_watchdog",
    /// Lossless traffic arriving on a port whose queue for its priority the
    /// PFC watchdog has shut (NX-OS drops it; see
    /// [`WatchdogModel::forward_ingress`](crate::model::WatchdogModel::forward_ingress)).
    PfcWatchdogIngress = "pfc_watchdog_ingress",
    /// The cross-worker hand-off ring toward the egress worker was full.
    HandoffFull = "handoff_full",
    /// The backend failed to send the frame and discarded it (the link went
    /// away under it, or the kernel or driver refused the frame), or the
    /// switch's own frames waiting for the port filled their burst. A frame
    /// that waits for room in a full transmit ring is not dropped.
    TxError = "tx_error",
    /// Queued for a port whose link went down (or whose interface
    /// vanished): dropped as its queues let it out instead of being sent.
    LinkDown = "link_down",
    /// Punted control traffic whose agent queue was full or absent.
    PuntQueueFull = "punt_queue_full",
    /// A MAC control frame too short for its opcode, or with an unknown opcode.
    BadMacControl = "bad_mac_control",
    /// The packet pool had no free buffer: for a frame the port received
    /// (where its backend discards it rather than leaving it in its ring)
    /// or for one the switch meant to send (a pause, a resolution). Queues
    /// have no packet cap, so a pool too small for the buffers in use shows
    /// here rather than as tail drops.
    NoBuffer = "no_buffer",
    /// A received frame longer than the largest packet buffer (a capture of
    /// GRO/TSO super-frames, say), discarded by the port before the pipeline.
    Oversize = "oversize",
    /// A frame on a switchport in a VLAN the port does not carry (or
    /// untagged on a trunk without a native VLAN).
    VlanNotAllowed = "vlan_not_allowed",
    /// A bridged frame whose only destination is the port it came in on
    /// (its address was learned there, or its VLAN has no other port).
    L2Filtered = "l2_filtered",
    /// A damaged capture record at which a replay stopped because it was
    /// told to (`replay --truncated ok`); the rest of that trace is not read.
    CaptureDamaged = "capture_damaged",
}

impl DropReason {
    /// Whether the drop happens at the egress port (its queues or its
    /// transmit), where the egress port counts it; every other reason is
    /// counted at the port the frame came in on. A captured drop goes on
    /// that port, outbound or inbound.
    pub const fn on_egress(self) -> bool {
        matches!(
            self,
            DropReason::TailDrop
                | DropReason::Wred
                | DropReason::PfcWatchdog
                | DropReason::TxError
                | DropReason::LinkDown
        )
    }
}

/// What the bridge did in one VLAN. They conserve: `rx_packets +
/// routed_in + flood_copies = switched + to_svi + dropped`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VlanCounters {
    /// Frames that entered the VLAN on a switchport.
    pub rx_packets: u64,
    /// Their bytes.
    pub rx_bytes: u64,
    /// Packets routed into the VLAN through its SVI.
    pub routed_in: u64,
    /// Copies made to flood frames in the VLAN.
    pub flood_copies: u64,
    /// Frames handed to a port's egress in the VLAN.
    pub switched: u64,
    /// Frames handed to the VLAN's SVI (routed or answered there).
    pub to_svi: u64,
    /// Frames dropped in the VLAN (each also a drop with a reason on the
    /// port it came in on).
    pub dropped: u64,
}

impl VlanCounters {
    /// Whether every frame that entered the VLAN is accounted for.
    pub fn conserved(&self) -> bool {
        self.rx_packets + self.routed_in + self.flood_copies
            == self.switched + self.to_svi + self.dropped
    }

    /// Whether nothing happened in the VLAN.
    pub fn is_zero(&self) -> bool {
        *self == VlanCounters::default()
    }

    /// Adds another worker's share.
    pub fn add(&mut self, o: &VlanCounters) {
        self.rx_packets += o.rx_packets;
        self.rx_bytes += o.rx_bytes;
        self.routed_in += o.routed_in;
        self.flood_copies += o.flood_copies;
        self.switched += o.switched;
        self.to_svi += o.to_svi;
        self.dropped += o.dropped;
    }
}

/// Counters of one egress queue (qos-group).
///
/// They conserve: `offered_packets = tx_packets + wred_drops + tail_drops +
/// watchdog_drops + depth_packets` (and the same in bytes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct QueueCounters {
    /// Packets dequeued and handed to the port.
    pub tx_packets: u64,
    /// Bytes dequeued and handed to the port.
    pub tx_bytes: u64,
    /// Packets marked CE by WRED/ECN.
    pub ecn_marked: u64,
    /// Packets dropped by WRED.
    pub wred_drops: u64,
    /// Packets dropped at the queue limit.
    pub tail_drops: u64,
    /// Bytes queued now. The worker books depths as packets leave, so read
    /// them through a snapshot (`Switch::counters`, `Switch::stats`) or
    /// `EgressQueues::counters_now`, which fill in the present.
    pub depth_bytes: u64,
    /// Most bytes ever queued (booked as `depth_bytes` is).
    pub max_depth_bytes: u64,
    /// Packets that arrived at the queue (admitted or not).
    pub offered_packets: u64,
    /// Bytes that arrived at the queue (admitted or not).
    pub offered_bytes: u64,
    /// Bytes dropped by WRED.
    pub wred_drop_bytes: u64,
    /// Bytes dropped at the queue limit.
    pub tail_drop_bytes: u64,
    /// Packets flushed by the PFC watchdog.
    pub watchdog_drops: u64,
    /// Bytes flushed by the PFC watchdog.
    pub watchdog_drop_bytes: u64,
    /// Packets queued now (booked as `depth_bytes` is).
    pub depth_packets: u64,
    /// Most packets ever queued (booked as `depth_bytes` is).
    pub max_depth_packets: u64,
}

impl QueueCounters {
    /// Whether the counters account for every packet and byte that arrived.
    pub fn conserved(&self) -> bool {
        self.offered_packets
            == self.tx_packets
                + self.wred_drops
                + self.tail_drops
                + self.watchdog_drops
                + self.depth_packets
            && self.offered_bytes
                == self.tx_bytes
                    + self.wred_drop_bytes
                    + self.tail_drop_bytes
                    + self.watchdog_drop_bytes
                    + self.depth_bytes
    }
}

/// PFC frame counters, per priority.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PfcCounters {
    /// Pause frames sent with the priority's quanta non-zero.
    pub tx_pause: [u64; 8],
    /// Pause frames sent with quanta 0 (resume).
    pub tx_resume: [u64; 8],
    /// Pause frames received with the priority's quanta non-zero.
    pub rx_pause: [u64; 8],
    /// Pause frames received with quanta 0.
    pub rx_resume: [u64; 8],
    /// Storms the watchdog declared, per priority.
    pub watchdog_storms: [u64; 8],
    /// Stormed queues the watchdog restored, per priority.
    pub watchdog_restores: [u64; 8],
    /// Packets of a lossless priority that arrived while the watchdog had
    /// shut the port's queue for it and were forwarded as lossy (with
    /// `forward_ingress`; otherwise they count as `pfc_watchdog_ingress`
    /// drops), per priority.
    pub watchdog_ingress_forwarded: [u64; 8],
    /// Nanoseconds each egress queue spent paused by the peer (counted when
    /// a pause ends).
    pub paused_ns: [u64; 8],
    /// The most bytes each ingress priority group has held: how much of
    /// xOFF and the headroom beyond it the peer's response really took.
    pub ingress_peak_bytes: [u64; 8],
}

/// Counters of one interface, written only by the worker that owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortCounters {
    /// Frames received from the backend.
    pub rx_packets: u64,
    /// Bytes received from the backend.
    pub rx_bytes: u64,
    /// Frames handed to the backend.
    pub tx_packets: u64,
    /// Bytes handed to the backend.
    pub tx_bytes: u64,
    /// Frames whose headers did not parse.
    pub rx_malformed: u64,
    /// Frames punted to the control plane (LLDP, ARP, ICMP for the switch).
    pub punted: u64,
    /// Of the punted frames, those sent up the port's kernel mirror.
    pub mirrored: u64,
    /// Copies made of frames this port received, to flood them in their
    /// VLAN: each frame sent beyond the one received (so `rx_packets +
    /// flood_copies` = what left + drops + what is queued).
    pub flood_copies: u64,
    /// Drops by reason, indexed by `DropReason as usize`.
    pub drops: [u64; DropReason::COUNT],
    /// Per-queue counters, queue N = qos-group N.
    pub queues: [QueueCounters; 8],
    /// PFC counters.
    pub pfc: PfcCounters,
}

impl Default for PortCounters {
    fn default() -> Self {
        PortCounters {
            rx_packets: 0,
            rx_bytes: 0,
            tx_packets: 0,
            tx_bytes: 0,
            rx_malformed: 0,
            punted: 0,
            mirrored: 0,
            flood_copies: 0,
            drops: [0; DropReason::COUNT],
            queues: [QueueCounters::default(); 8],
            pfc: PfcCounters::default(),
        }
    }
}

impl PortCounters {
    /// Counts one dropped packet.
    #[inline]
    pub fn drop(&mut self, reason: DropReason) {
        self.drops[reason as usize] += 1;
    }

    /// Drops counted for `reason`.
    pub fn drops_for(&self, reason: DropReason) -> u64 {
        self.drops[reason as usize]
    }

    /// All drops, whatever the reason.
    pub fn total_drops(&self) -> u64 {
        self.drops.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_have_unique_names_and_dense_indices() {
        let mut names: Vec<_> = DropReason::ALL.iter().map(|r| r.name()).collect();
        for (i, r) in DropReason::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        names.sort();
        names.dedup();
        assert_eq!(names.len(), DropReason::COUNT);
    }

    #[test]
    fn drops_are_counted_by_reason() {
        let mut c = PortCounters::default();
        c.drop(DropReason::NoRoute);
        c.drop(DropReason::NoRoute);
        c.drop(DropReason::TtlExpired);
        assert_eq!(c.drops_for(DropReason::NoRoute), 2);
        assert_eq!(c.total_drops(), 3);
    }
}
