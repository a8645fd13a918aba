//! Counter snapshots with stable names, for `--stats-json`, `show … --json`
//! and the text renderers.
//!
//! The JSON shape is an interface: names here are only ever added to, never
//! renamed.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::counters::{DropReason, PfcCounters, PortCounters, QueueCounters, VlanCounters};

/// One egress queue in a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueStats {
    /// Queue number, equal to its qos-group.
    pub queue: u8,
    /// Packets transmitted from the queue.
    pub tx_packets: u64,
    /// Bytes transmitted from the queue.
    pub tx_bytes: u64,
    /// Packets marked CE.
    pub ecn_marked: u64,
    /// WRED drops.
    pub wred_drops: u64,
    /// Tail drops.
    pub tail_drops: u64,
    /// Bytes queued at snapshot time.
    pub depth_bytes: u64,
    /// Most bytes ever queued.
    pub max_depth_bytes: u64,
    /// Sojourn time of the packets sent so far.
    #[serde(default)]
    pub latency_ns: LatencyStats,
    /// Bytes dropped by WRED.
    #[serde(default)]
    pub wred_drop_bytes: u64,
    /// Bytes tail-dropped.
    #[serde(default)]
    pub tail_drop_bytes: u64,
    /// Packets flushed by the PFC watchdog.
    #[serde(default)]
    pub watchdog_drops: u64,
    /// Bytes flushed by the PFC watchdog.
    #[serde(default)]
    pub watchdog_drop_bytes: u64,
    /// Packets that arrived at the queue (sent + dropped + queued).
    #[serde(default)]
    pub offered_packets: u64,
    /// Bytes that arrived at the queue.
    #[serde(default)]
    pub offered_bytes: u64,
    /// Packets queued at snapshot time.
    #[serde(default)]
    pub depth_packets: u64,
    /// Most packets ever queued.
    #[serde(default)]
    pub max_depth_packets: u64,
}

/// Percentiles of a queue's sojourn time (enqueue to departure), in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LatencyStats {
    /// Median.
    pub p50: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Longest.
    pub max: u64,
}

impl QueueStats {
    /// Adds another worker's share of the same queue (see
    /// [`InterfaceStats::add_lane`]).
    fn add(&mut self, o: &QueueStats) {
        self.tx_packets += o.tx_packets;
        self.tx_bytes += o.tx_bytes;
        self.ecn_marked += o.ecn_marked;
        self.wred_drops += o.wred_drops;
        self.tail_drops += o.tail_drops;
        self.depth_bytes += o.depth_bytes;
        self.max_depth_bytes += o.max_depth_bytes;
        self.latency_ns = LatencyStats {
            p50: self.latency_ns.p50.max(o.latency_ns.p50),
            p99: self.latency_ns.p99.max(o.latency_ns.p99),
            max: self.latency_ns.max.max(o.latency_ns.max),
        };
        self.wred_drop_bytes += o.wred_drop_bytes;
        self.tail_drop_bytes += o.tail_drop_bytes;
        self.watchdog_drops += o.watchdog_drops;
        self.watchdog_drop_bytes += o.watchdog_drop_bytes;
        self.offered_packets += o.offered_packets;
        self.offered_bytes += o.offered_bytes;
        self.depth_packets += o.depth_packets;
        self.max_depth_packets += o.max_depth_packets;
    }

    fn from_counters(queue: u8, c: &QueueCounters) -> Self {
        QueueStats {
            queue,
            tx_packets: c.tx_packets,
            tx_bytes: c.tx_bytes,
            ecn_marked: c.ecn_marked,
            wred_drops: c.wred_drops,
            tail_drops: c.tail_drops,
            depth_bytes: c.depth_bytes,
            max_depth_bytes: c.max_depth_bytes,
            latency_ns: LatencyStats::default(),
            wred_drop_bytes: c.wred_drop_bytes,
            tail_drop_bytes: c.tail_drop_bytes,
            watchdog_drops: c.watchdog_drops,
            watchdog_drop_bytes: c.watchdog_drop_bytes,
            offered_packets: c.offered_packets,
            offered_bytes: c.offered_bytes,
            depth_packets: c.depth_packets,
            max_depth_packets: c.max_depth_packets,
        }
    }
}

/// PFC frame counts per priority.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PfcStats {
    /// Priorities that are lossless on this port (bit n = priority n): the
    /// PFC enable vector it sends and honours.
    #[serde(default)]
    pub enabled: u8,
    /// Queues paused by the peer at the snapshot (bit n = queue n): a pause
    /// in force now, unlike `rx_pause`, which also counts refreshes.
    #[serde(default)]
    pub rx_paused: u8,
    /// Priorities this port holds XOFF on at the snapshot (bit n =
    /// priority n): sent and not yet released by an XON.
    #[serde(default)]
    pub tx_xoff: u8,
    /// Pause frames sent, per priority.
    pub tx_pause: [u64; 8],
    /// Resume (quanta 0) frames sent, per priority.
    pub tx_resume: [u64; 8],
    /// Pause frames received, per priority.
    pub rx_pause: [u64; 8],
    /// Resume frames received, per priority.
    pub rx_resume: [u64; 8],
    /// Nanoseconds each queue spent paused by the peer, per priority.
    #[serde(default)]
    pub paused_ns: [u64; 8],
    /// Storms the PFC watchdog declared, per priority.
    #[serde(default)]
    pub watchdog_storms: [u64; 8],
    /// Stormed queues the PFC watchdog restored, per priority.
    #[serde(default)]
    pub watchdog_restores: [u64; 8],
    /// The most bytes each ingress priority group has held (compare with
    /// xOFF and xOFF + headroom), per priority.
    #[serde(default)]
    pub ingress_peak_bytes: [u64; 8],
    /// Lossless packets that arrived while the watchdog had shut the port's
    /// queue for their priority and were forwarded as lossy, per priority
    /// (`priority-flow-control watch-dog ingress forward`).
    #[serde(default)]
    pub watchdog_ingress_forwarded: [u64; 8],
}

impl From<&PfcCounters> for PfcStats {
    fn from(c: &PfcCounters) -> Self {
        PfcStats {
            enabled: 0,
            rx_paused: 0,
            tx_xoff: 0,
            tx_pause: c.tx_pause,
            tx_resume: c.tx_resume,
            rx_pause: c.rx_pause,
            rx_resume: c.rx_resume,
            paused_ns: c.paused_ns,
            watchdog_storms: c.watchdog_storms,
            watchdog_restores: c.watchdog_restores,
            ingress_peak_bytes: c.ingress_peak_bytes,
            watchdog_ingress_forwarded: c.watchdog_ingress_forwarded,
        }
    }
}

/// One interface in a snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InterfaceStats {
    /// Interface MAC address.
    pub mac: String,
    /// False when configured `shutdown`.
    pub admin_up: bool,
    /// Link state reported by the backend.
    pub link_up: bool,
    /// The backend, e.g. `af-packet veth1`, or `none`.
    pub backend: String,
    /// IP MTU.
    pub mtu: u16,
    /// Configured speed in Mb/s, when set.
    pub speed_mbps: Option<u32>,
    /// Configured addresses with prefix lengths.
    pub addresses: Vec<String>,
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Frames that failed to parse.
    pub rx_malformed: u64,
    /// Frames handed to the switch's own protocol handlers.
    pub punted: u64,
    /// Of the punted frames, those sent up the port's kernel mirror.
    #[serde(default)]
    pub mirrored: u64,
    /// Copies made of frames received here to flood them in their VLAN.
    #[serde(default)]
    pub flood_copies: u64,
    /// Of the mirrored frames, those the kernel mirror could not take.
    #[serde(default)]
    pub to_kernel_dropped: u64,
    /// Frames the kernel sent through the port's mirror that left the port.
    #[serde(default)]
    pub from_kernel: u64,
    /// Frames the kernel sent through the port's mirror that the port
    /// could not take (its control inbox full).
    #[serde(default)]
    pub from_kernel_dropped: u64,
    /// Frames the backend itself could not deliver (kernel ring overflow,
    /// oversize frames, buffer pool empty), before the pipeline saw them.
    #[serde(default)]
    pub backend_rx_dropped: u64,
    /// The longest a frame waited in the backend's kernel ring before the
    /// switch read it, in ns (AF_PACKET only; 0 elsewhere): time the lossless headroom must cover on a software
    /// path, since frames still in the ring are not yet accounted.
    #[serde(default)]
    pub backend_rx_wait_max_ns: u64,
    /// Frames the backend failed to send.
    #[serde(default)]
    pub backend_tx_errors: u64,
    /// Drops by reason (every reason listed, zero or not).
    pub drops: BTreeMap<String, u64>,
    /// Egress queues 0–7.
    pub queues: Vec<QueueStats>,
    /// PFC frame counters.
    pub pfc: PfcStats,
}

impl InterfaceStats {
    /// Fills the counter fields from a port's counters.
    pub fn with_counters(mut self, c: &PortCounters) -> Self {
        self.rx_packets = c.rx_packets;
        self.rx_bytes = c.rx_bytes;
        self.tx_packets = c.tx_packets;
        self.tx_bytes = c.tx_bytes;
        self.rx_malformed = c.rx_malformed;
        self.punted = c.punted;
        self.mirrored = c.mirrored;
        self.flood_copies = c.flood_copies;
        self.drops = DropReason::ALL
            .iter()
            .map(|r| (r.name().to_string(), c.drops[*r as usize]))
            .collect();
        self.queues = c
            .queues
            .iter()
            .enumerate()
            .map(|(i, q)| QueueStats::from_counters(i as u8, q))
            .collect();
        self.pfc = PfcStats::from(&c.pfc);
        self
    }

    /// Fills each queue's sojourn-time percentiles.
    pub fn with_latency(mut self, latency: &[LatencyStats; 8]) -> Self {
        for q in &mut self.queues {
            if let Some(l) = latency.get(usize::from(q.queue)) {
                q.latency_ns = *l;
            }
        }
        self
    }

    /// Adds what another worker sent on this interface through a lane: its
    /// transmit and drop counters and its queues. Depths add up; a queue's
    /// peak depth becomes the sum of the workers' peaks and its sojourn
    /// percentiles the larger of theirs, bounds on the port's own.
    pub fn add_lane(&mut self, lane: &InterfaceStats) {
        self.tx_packets += lane.tx_packets;
        self.tx_bytes += lane.tx_bytes;
        self.backend_tx_errors += lane.backend_tx_errors;
        for (reason, n) in &lane.drops {
            *self.drops.entry(reason.clone()).or_insert(0) += n;
        }
        for l in &lane.queues {
            match self.queues.iter_mut().find(|q| q.queue == l.queue) {
                Some(q) => q.add(l),
                None => self.queues.push(l.clone()),
            }
        }
    }

    /// All drops of the interface, whatever the reason.
    pub fn total_drops(&self) -> u64 {
        self.drops.values().sum()
    }
}

/// Buffer pool state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolStats {
    /// Buffers in the pool.
    pub capacity: usize,
    /// Buffers free at snapshot time.
    pub available: usize,
    /// Allocations that found the pool empty.
    pub exhausted: u64,
    /// Buffers ever lent: the pool's resident memory is about this many
    /// times `buffer_bytes`, since the system provides a buffer's pages only
    /// when it is first used. It stops growing once traffic has found its
    /// peak (see the "Running for a long time" page).
    #[serde(default)]
    pub touched: usize,
    /// Bytes one buffer takes in the pool's slab.
    #[serde(default)]
    pub buffer_bytes: usize,
}

/// How long each worker went between two polls (see
/// [`crate::pipeline::poll_gap`]): the software path's response term.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PollGapStats {
    /// The longest gap in the last 10 to 20 s.
    pub recent_max_ns: u64,
    /// The longest gap since the switch started.
    pub max_ns: u64,
    /// Gaps counted by length: under 10 µs, 100 µs, 1 ms, 5 ms, 20 ms,
    /// 100 ms, and longer.
    pub buckets: Vec<u64>,
}

/// A snapshot of the whole switch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchStats {
    /// The switch's hostname.
    pub hostname: String,
    /// Per interface, keyed by canonical name.
    pub interfaces: BTreeMap<String, InterfaceStats>,
    /// Packet buffer pool.
    pub pool: PoolStats,
    /// Packets waiting on neighbour resolution.
    pub neighbor_parked: usize,
    /// ECMP and DLB groups (routes with more than one next hop), keyed by
    /// prefix (`10.0.2.0/24`).
    #[serde(default)]
    pub load_balancing: BTreeMap<String, GroupStats>,
    /// What a worker sent on other workers' ports through transmit lanes
    /// (see [`crate::lanes`]), by interface, until [`merge`](Self::merge)
    /// adds it to the owner's entry.
    #[serde(skip)]
    pub lanes: BTreeMap<String, InterfaceStats>,
    /// Per worker, in worker order: the gaps between its polls.
    #[serde(default)]
    pub poll_gaps: Vec<PollGapStats>,
    /// The switchports' MAC address table (empty without switchports).
    #[serde(default)]
    pub mac_table: MacTableStats,
    /// What the bridge did per VLAN, for the VLANs that saw traffic.
    #[serde(default)]
    pub vlans: BTreeMap<u16, VlanCounters>,
    /// Each enabled monitor session's copies, by session number (filled by
    /// the control plane, which owns the sessions).
    #[serde(default)]
    pub monitor_sessions: BTreeMap<u8, crate::span::SpanCounters>,
}

/// The MAC address table: its entries and what it did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacTableStats {
    /// Entries in VLAN, then MAC order.
    pub entries: Vec<MacEntryStats>,
    /// Entries learned (every worker's learning summed).
    pub learned: u64,
    /// Addresses that moved between ports.
    pub moves: u64,
    /// Sources not learned because the table was full.
    pub full: u64,
    /// Entries removed by aging.
    pub aged: u64,
    /// Entries removed because their port went down.
    pub flushed: u64,
}

/// One MAC table entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MacEntryStats {
    /// VLAN ID.
    pub vlan: u16,
    /// The address, `02:00:00:00:00:01`.
    pub mac: String,
    /// The switchport or port-channel.
    pub port: String,
    /// `static` or `dynamic`.
    #[serde(rename = "type")]
    pub kind: String,
    /// Seconds since a frame from it was seen (0 for static entries).
    pub age_secs: u64,
}

impl SwitchStats {
    /// Adds another worker's snapshot: its interfaces (each worker reports
    /// only the ports it owns) and its share of every group's counters.
    pub fn merge(&mut self, other: SwitchStats) {
        if self.hostname.is_empty() {
            self.hostname = other.hostname;
        }
        self.interfaces.extend(other.interfaces);
        self.poll_gaps.extend(other.poll_gaps);
        for (name, lane) in other.lanes {
            match self.lanes.get_mut(&name) {
                Some(mine) => mine.add_lane(&lane),
                None => {
                    self.lanes.insert(name, lane);
                }
            }
        }
        // Lanes of interfaces whose owner is merged by now join its entry;
        // the others wait for it.
        let pending = std::mem::take(&mut self.lanes);
        for (name, lane) in pending {
            match self.interfaces.get_mut(&name) {
                Some(owner) => owner.add_lane(&lane),
                None => {
                    self.lanes.insert(name, lane);
                }
            }
        }
        self.pool = other.pool;
        self.neighbor_parked += other.neighbor_parked;
        for (v, c) in &other.vlans {
            self.vlans.entry(*v).or_default().add(c);
        }
        let m = &mut self.mac_table;
        let o = other.mac_table;
        m.learned += o.learned;
        m.moves += o.moves;
        m.full += o.full;
        m.aged += o.aged;
        m.flushed += o.flushed;
        // Workers tell each other what they learn, so their tables agree
        // but for the latest news: the most recently seen entry wins.
        for e in o.entries {
            match m
                .entries
                .binary_search_by(|x| (x.vlan, &x.mac).cmp(&(e.vlan, &e.mac)))
            {
                Ok(i) if m.entries[i].age_secs > e.age_secs => m.entries[i] = e,
                Ok(_) => {}
                Err(i) => m.entries.insert(i, e),
            }
        }
        for (prefix, g) in other.load_balancing {
            match self.load_balancing.get_mut(&prefix) {
                Some(mine) => mine.add(&g),
                None => {
                    self.load_balancing.insert(prefix, g);
                }
            }
        }
    }
}

/// One member of an ECMP group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberStats {
    /// Egress interface.
    pub interface: String,
    /// Next-hop address (none for an interface route).
    pub gateway: Option<String>,
    /// Packets sent through this member.
    pub packets: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Buckets of the resilient hash table naming this member.
    pub buckets: usize,
    /// Port quality band 0 (idle) … 7 (loaded), for DLB groups.
    pub quality_band: u8,
    /// Port load in percent of its speed, queue included, for DLB groups.
    pub load_percent: u16,
}

/// One ECMP group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupStats {
    /// `ecmp`, `flowlet` or `per-packet`.
    pub mode: String,
    /// Members in configuration order.
    pub members: Vec<MemberStats>,
    /// Flowlets started.
    pub flowlets_started: u64,
    /// Flowlets placed on another member than the flow's previous one.
    pub flowlet_moves: u64,
    /// Packets placed one by one (per-packet mode).
    pub per_packet_choices: u64,
    /// Packets sent on another member than their flow's previous packet
    /// within the flowlet aging: an upper bound on reordering.
    pub reorder_risk: u64,
    /// Packets whose member was down, re-hashed over the members up.
    pub rehashed: u64,
    /// Packets sent to their ingress port's `static-pinning` destination.
    #[serde(default)]
    pub pinned: u64,
}

impl GroupStats {
    fn add(&mut self, o: &GroupStats) {
        for (m, x) in self.members.iter_mut().zip(&o.members) {
            m.packets += x.packets;
            m.bytes += x.bytes;
            m.quality_band = m.quality_band.max(x.quality_band);
            m.load_percent = m.load_percent.max(x.load_percent);
        }
        self.flowlets_started += o.flowlets_started;
        self.flowlet_moves += o.flowlet_moves;
        self.per_packet_choices += o.per_packet_choices;
        self.reorder_risk += o.reorder_risk;
        self.rehashed += o.rehashed;
        self.pinned += o.pinned;
    }
}
