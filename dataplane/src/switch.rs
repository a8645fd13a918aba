//! One worker's switch: the packet path from `rx_burst` to `tx_burst`.
//!
//! ```text
//! rx_burst ─► parse ─► punt? ─► classify ─► route ─► enqueue(egress q) ─► schedule ─► tx_burst
//! ```
//!
//! Classification, admission (WRED/ECN, buffer limits) and scheduling with
//! line-rate shaping are [`crate::qos`]'s, applied through each port's
//! [`EgressQueues`]. Virtual-time drivers ask [`Switch::next_departure`] when
//! a shaped port can send next so that they can move the clock straight there.
//!
//! Priority flow control is [`crate::pfc`]'s: received PFC/PAUSE frames pause
//! egress queues for their quanta; lossless packets are counted against their
//! ingress port's priority group from admission until dequeue, and the
//! ingress port sends XOFF at xOFF (refreshed at half the pause time) and
//! XON below xON, through the control-frame path ahead of its queues.
//!
//! A [`Switch`] owns the ports it polls and the egress queues of those ports.
//! With several workers, each has its own `Switch` built from the same model;
//! a packet routed to a port owned by another worker crosses a bounded ring
//! ([`WorkerLinks`]), unless the port takes transmit lanes (see
//! [`crate::lanes`]): then the worker queues and sends it itself. Neighbour
//! answers learned by one worker are broadcast to the others, so every
//! worker's tables converge.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

use crate::balance::dlb::Dre;
use crate::balance::{Balancer, QualityBoard};
use crate::clock::Nanos;
use crate::counters::{DropReason, PortCounters};
use crate::fib::{Fib, FibWarning, RouteAction};
use crate::host;
use crate::lanes::{self, LaneBoard};
use crate::meta::{FrameKind, QOS_GROUP_CONTROL};
use crate::model::pfc::{WatchdogModel, PRIORITIES};
use crate::model::{DlbMode, InterfaceModel, PortId, SwitchModel};
use crate::neighbor::{NeighborTable, Park, TickOutput};
use crate::packet::{Burst, Packet, Pool, BURST_SIZE};
use crate::parse::parse;
use crate::pfc::{quanta_ns, IngressAccounting, IngressCharge, PfcPortState};
use crate::port::Port;
use crate::qos::classify::Classifier;
use crate::queue::{EgressQueues, NUM_QUEUES};
use crate::stats::{GroupStats, InterfaceStats, MemberStats, PoolStats, SwitchStats};
use crate::wire::mac_control::{self, MacControlRepr};
use crate::wire::MacAddr;
use crate::wire::{checksum, ipv4, ipv6};

/// How often timers (neighbour retries) run, at most.
const TICK_INTERVAL: Nanos = 10_000_000;
/// Most consecutive rounds a worker leaves its ports unread while a peer
/// catches up: PFC pause frames and neighbour answers arriving meanwhile
/// must not wait long, and a peer that stopped must not stop this worker.
pub const MAX_RX_HELD: u32 = 32;
/// Most transmit bursts per port per round.
const TX_BURSTS_PER_POLL: usize = 4;
/// Most hand-off bursts taken from each peer worker per round: as many as a
/// port may send, so a worker drains its peers as fast as it transmits.
const HANDOFF_BURSTS_PER_POLL: usize = TX_BURSTS_PER_POLL;

/// A neighbour learned by one worker, told to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeighborEvent {
    /// Interface the neighbour is on.
    pub port: PortId,
    /// Its address.
    pub addr: IpAddr,
    /// Its MAC.
    pub mac: MacAddr,
}

/// The rings joining one worker to the others.
pub struct WorkerLinks {
    /// This worker's number.
    pub id: usize,
    /// Which worker owns each port (index = port id).
    pub owners: Vec<usize>,
    /// Frames the control plane sends on this worker's ports.
    pub inbox: Arc<ArrayQueue<Packet>>,
    /// Every worker's control inbox, by worker number.
    pub inboxes: Vec<Arc<ArrayQueue<Packet>>>,
    /// Packets this worker routes to each other worker's ports, by worker
    /// number (`None` for itself). One single-producer ring per pair of
    /// workers lets a burst cross with one index update, not one atomic
    /// read-modify-write per packet.
    pub to_peers: Vec<Option<rtrb::Producer<Packet>>>,
    /// Packets the other workers routed to this worker's ports.
    pub from_peers: Vec<rtrb::Consumer<Packet>>,
    /// Neighbour events for this worker.
    pub events: Arc<ArrayQueue<NeighborEvent>>,
    /// Every worker's event ring, by worker number.
    pub all_events: Vec<Arc<ArrayQueue<NeighborEvent>>>,
    /// Lossless bytes buffered per ingress port, shared by every worker so
    /// that the ingress port's worker sees what other workers queued.
    pub ingress: Arc<IngressAccounting>,
    /// DLB port quality, published by each port's owner and read by all.
    pub quality: Arc<QualityBoard>,
    /// Pause, storm and queue state of ports sent on through lanes.
    pub lanes: Arc<LaneBoard>,
}

impl WorkerLinks {
    /// Links for `workers` workers with the given port ownership, each ring
    /// holding `capacity` packets.
    pub fn build(workers: usize, owners: &[usize], capacity: usize) -> Vec<WorkerLinks> {
        let inboxes: Vec<_> = (0..workers)
            .map(|_| Arc::new(ArrayQueue::new(capacity.max(1))))
            .collect();
        let events: Vec<_> = (0..workers)
            .map(|_| Arc::new(ArrayQueue::new(1024)))
            .collect();
        let ingress = Arc::new(IngressAccounting::new(owners.len(), workers));
        let quality = Arc::new(QualityBoard::new(owners.len()));
        let lanes = Arc::new(LaneBoard::new(owners.len(), workers));
        // rings[from][to]: the ring from worker `from` to worker `to`.
        let mut to_peers: Vec<Vec<Option<rtrb::Producer<Packet>>>> = Vec::new();
        let mut from_peers: Vec<Vec<rtrb::Consumer<Packet>>> =
            (0..workers).map(|_| Vec::new()).collect();
        for from in 0..workers {
            let mut row = Vec::new();
            for (to, inbound) in from_peers.iter_mut().enumerate() {
                if to == from {
                    row.push(None);
                } else {
                    let (tx, rx) = rtrb::RingBuffer::new(capacity.max(1));
                    row.push(Some(tx));
                    inbound.push(rx);
                }
            }
            to_peers.push(row);
        }
        to_peers
            .into_iter()
            .zip(from_peers)
            .enumerate()
            .map(|(id, (to_peers, from_peers))| WorkerLinks {
                id,
                owners: owners.to_vec(),
                inbox: Arc::clone(&inboxes[id]),
                inboxes: inboxes.clone(),
                to_peers,
                from_peers,
                events: Arc::clone(&events[id]),
                all_events: events.clone(),
                ingress: Arc::clone(&ingress),
                quality: Arc::clone(&quality),
                lanes: Arc::clone(&lanes),
            })
            .collect()
    }
}

/// One interface as the worker sees it.
struct PortSlot {
    model: InterfaceModel,
    backend: Option<Box<dyn Port>>,
    owned: bool,
    /// Another worker's port this one sends on through a lane (`backend`).
    lane: bool,
    /// Packets routed to the port are queued here: the port is this
    /// worker's, or a lane the model lets carry traffic (see
    /// [`lanes::eligible`]); otherwise they cross to the owner.
    tx_here: bool,
    /// The (paused, stormed) queues the [`LaneBoard`] holds for the port
    /// as this worker last saw it: told by the owner, applied by a lane.
    lane_pfc: (u8, u8),
    /// The non-empty queues a lane last told the board.
    lane_nonempty: u8,
    counters: PortCounters,
    /// Ingress classification of packets arriving on this port.
    classifier: Classifier,
    queues: EgressQueues,
    /// Frames the switch originated (answers, requests), sent before the queues.
    ctrl_tx: Burst,
    /// Frames the backend refused last time, retried first.
    tx_pending: Burst,
    /// Pause timers and XOFF state.
    pfc: PfcPortState,
    /// What other workers had released of this port's lossless groups when
    /// admission last looked (see [`IngressAccounting::admit`]).
    released_elsewhere: [u64; PRIORITIES],
}

impl PortSlot {
    fn up(&self) -> bool {
        self.model.admin_up && self.backend.as_ref().is_some_and(|b| b.link_up())
    }

    /// The port's counters, its queue depths as they are now.
    fn counters_now(&self) -> PortCounters {
        let mut c = self.counters;
        c.queues = self.queues.counters_now(&c.queues);
        c
    }
}

/// A switch worker: its ports, tables and queues.
pub struct Switch {
    hostname: String,
    ports: Vec<PortSlot>,
    fib: Fib,
    neighbors: NeighborTable,
    pool: Pool,
    links: Option<WorkerLinks>,
    /// Per worker: packets routed to its ports this poll, sent over in one
    /// go after the receive phase, or earlier when a burst fills (see
    /// [`WorkerLinks::to_peers`]).
    outbox: Vec<Burst>,
    /// Consecutive polls that skipped receiving because a peer was behind.
    rx_held: u32,
    punt: Option<Arc<ArrayQueue<Packet>>>,
    released: Vec<Packet>,
    tick_out: TickOutput,
    last_tick: Nanos,
    /// The time of the current poll, stamped on packets as they are queued.
    now: Nanos,
    /// Lossless bytes buffered per ingress port and priority group.
    ingress_acct: Arc<IngressAccounting>,
    /// This worker's number, under which it releases ingress bytes.
    worker: usize,
    /// Some port has a lossless priority (dequeues then settle the accounting).
    any_lossless: bool,
    /// Picks ECMP/DLB group members.
    balancer: Balancer,
    /// The board lanes and owners share (with several workers).
    lane_board: Option<Arc<LaneBoard>>,
    /// Rate estimator per port (sampled for owned ports when DLB is on).
    dre: Vec<Dre>,
    /// When port quality was last sampled.
    last_dre_sample: Nanos,
    /// Per port: can take routed traffic (admin up and, for this worker's
    /// ports, link up). Read once per poll, so forwarding and balancing do
    /// not ask the backend (a clock read or more) for every packet.
    port_up: Vec<bool>,
}

/// The WRED seed of port `i`: the model's seed, scrambled per port so ports
/// draw independent sequences.
fn port_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// A route a worker sent a packet toward: egress port and the address to resolve.
#[derive(Clone, Copy)]
struct Hop {
    port: PortId,
    addr: IpAddr,
}

impl Switch {
    /// Builds a switch owning every port. `backends[i]` serves
    /// `model.interfaces[i]` (`None`: the interface exists but has no link).
    /// Returns the routes that could not be installed as warnings.
    pub fn new(
        model: &SwitchModel,
        backends: Vec<Option<Box<dyn Port>>>,
        pool: Pool,
    ) -> (Switch, Vec<FibWarning>) {
        Self::build(model, backends, pool, None)
    }

    /// Builds one worker of several; `backends` holds only this worker's ports
    /// (others are `None`), ownership comes from `links`.
    pub fn new_worker(
        model: &SwitchModel,
        backends: Vec<Option<Box<dyn Port>>>,
        pool: Pool,
        links: WorkerLinks,
    ) -> (Switch, Vec<FibWarning>) {
        Self::build(model, backends, pool, Some(links))
    }

    fn build(
        model: &SwitchModel,
        backends: Vec<Option<Box<dyn Port>>>,
        pool: Pool,
        links: Option<WorkerLinks>,
    ) -> (Switch, Vec<FibWarning>) {
        let (fib, warnings) = Fib::build(model);
        let mut neighbors =
            NeighborTable::new(model.neighbor_queue_per_entry, model.neighbor_queue_total);
        let mut backends = backends.into_iter();
        let ports = model
            .interfaces
            .iter()
            .enumerate()
            .map(|(i, m)| {
                for (a, mac) in &m.static_arp {
                    neighbors.add_static(i as PortId, IpAddr::V4(*a), *mac);
                }
                for (a, mac) in &m.static_nd {
                    neighbors.add_static(i as PortId, IpAddr::V6(*a), *mac);
                }
                let owned = links
                    .as_ref()
                    .is_none_or(|l| l.owners.get(i) == Some(&l.id));
                let backend = backends.next().flatten();
                let lane = !owned && backend.is_some();
                PortSlot {
                    model: m.clone(),
                    backend,
                    owned,
                    lane,
                    tx_here: owned || (lane && lanes::eligible(model, i)),
                    lane_pfc: (0, 0),
                    lane_nonempty: 0,
                    counters: PortCounters::default(),
                    classifier: Classifier::new(m),
                    queues: EgressQueues::new(m, port_seed(model.random_seed, i)),
                    ctrl_tx: Burst::new(),
                    tx_pending: Burst::new(),
                    pfc: PfcPortState::default(),
                    released_elsewhere: [0; PRIORITIES],
                }
            })
            .collect();
        let ingress_acct = links.as_ref().map_or_else(
            || Arc::new(IngressAccounting::new(model.interfaces.len(), 1)),
            |l| Arc::clone(&l.ingress),
        );
        let worker = links.as_ref().map_or(0, |l| l.id);
        let quality = links.as_ref().map_or_else(
            || Arc::new(QualityBoard::new(model.interfaces.len())),
            |l| Arc::clone(&l.quality),
        );
        let balancer = Balancer::new(model, &fib, quality);
        let sw = Switch {
            lane_board: links.as_ref().map(|l| Arc::clone(&l.lanes)),
            ingress_acct,
            worker,
            any_lossless: model
                .interfaces
                .iter()
                .any(|m| m.pfc.enabled_priorities != 0),
            hostname: model.hostname.clone(),
            ports,
            fib,
            neighbors,
            pool,
            outbox: (0..links.as_ref().map_or(0, |l| l.to_peers.len()))
                .map(|_| Burst::new())
                .collect(),
            links,
            rx_held: 0,
            punt: None,
            released: Vec::with_capacity(64),
            tick_out: TickOutput::default(),
            last_tick: 0,
            now: 0,
            balancer,
            dre: vec![Dre::default(); model.interfaces.len()],
            last_dre_sample: 0,
            port_up: vec![false; model.interfaces.len()],
        };
        (sw, warnings)
    }

    /// Applies a new model between bursts, keeping queued packets, counters
    /// and learned neighbours that are still on-link. The model must have the
    /// same interfaces, in the same order (the runtime checks); returns the
    /// routes that could not be installed.
    pub fn apply(&mut self, model: &SwitchModel) -> Vec<FibWarning> {
        let (fib, warnings) = Fib::rebuild(model, Some(&self.fib));
        self.balancer.apply(model, Some(&self.fib), &fib);
        for (i, (slot, m)) in self.ports.iter_mut().zip(&model.interfaces).enumerate() {
            if slot.model != *m {
                slot.queues.configure(m);
                slot.classifier = Classifier::new(m);
            }
            slot.model = m.clone();
            // A lane the new model closes keeps draining what it holds.
            slot.tx_here = slot.owned || (slot.lane && lanes::eligible(model, i));
        }
        let statics: Vec<(PortId, IpAddr, MacAddr)> = model
            .interfaces
            .iter()
            .enumerate()
            .flat_map(|(i, m)| {
                let p = i as PortId;
                m.static_arp
                    .iter()
                    .map(move |(a, mac)| (p, IpAddr::V4(*a), *mac))
                    .chain(
                        m.static_nd
                            .iter()
                            .map(move |(a, mac)| (p, IpAddr::V6(*a), *mac)),
                    )
            })
            .collect();
        self.neighbors.reconcile(statics, |port, addr| {
            matches!(
                fib.lookup(addr),
                Some(RouteAction::Connected(p)) if *p == port
            ) || matches!(addr, IpAddr::V6(a) if a.segments()[0] & 0xffc0 == 0xfe80)
        });
        self.fib = fib;
        self.hostname = model.hostname.clone();
        // Packets already counted stay counted until they leave.
        self.any_lossless |= model
            .interfaces
            .iter()
            .any(|m| m.pfc.enabled_priorities != 0);
        warnings
    }

    /// Sends LLDP frames to `ring` for the control plane's agent instead of
    /// dropping them.
    pub fn set_punt_ring(&mut self, ring: Arc<ArrayQueue<Packet>>) {
        self.punt = Some(ring);
    }

    /// Runs one round: hand-offs in, one receive burst per port (skipped for
    /// up to [`MAX_RX_HELD`] rounds while a peer worker's ring is over half
    /// full), hand-offs out, timers, transmit bursts per port. Returns the
    /// number of packets moved, so a caller can back off when idle.
    pub fn poll(&mut self, now: Nanos) -> usize {
        self.now = now;
        for (up, slot) in self.port_up.iter_mut().zip(&self.ports) {
            *up = slot.model.admin_up && (!slot.owned || slot.up());
        }
        // Port quality first, so packets of this round see the latest sample.
        if let Some(dlb) = self.balancer.dlb_model() {
            let interval = dlb.sampling_interval_ns.max(1);
            let elapsed = now.saturating_sub(self.last_dre_sample);
            if elapsed >= interval {
                self.last_dre_sample = now - elapsed % interval;
                self.sample_quality(elapsed / interval);
            }
        }
        let mut work = self.drain_links(now);
        if self.handoff_congested() && self.rx_held < MAX_RX_HELD {
            self.rx_held += 1;
            // Waiting on a peer is not idleness: stay awake for it.
            work += 1;
        } else {
            self.rx_held = 0;
            for p in 0..self.ports.len() {
                if self.ports[p].owned {
                    work += self.rx_port(p, now);
                }
            }
        }
        if now.saturating_sub(self.last_tick) >= TICK_INTERVAL {
            self.last_tick = now;
            self.tick(now);
        }
        // What this round routed to other workers' ports leaves now, a burst
        // per ring, so they can start on it while this worker transmits.
        self.flush_handoffs();
        // Taken for the loop, not cloned: every worker cloning the same Arc
        // each round would bounce its count between their cores.
        let board = self.lane_board.take();
        for p in 0..self.ports.len() {
            if self.ports[p].owned {
                if self.ports[p].pfc.rx_paused != 0 {
                    self.pause_timers(p, now);
                }
                if let Some(wd) = self.ports[p].model.pfc.watchdog {
                    if self.ports[p].pfc.rx_paused | self.ports[p].pfc.stormed != 0 {
                        let lanes = board.as_ref().map_or(0, |b| b.lanes_nonempty(p));
                        self.watchdog(p, &wd, now, lanes);
                    }
                }
                if self.any_lossless && self.ports[p].pfc.tx_xoff != 0 {
                    work += self.pfc_release(p, now);
                }
                if let Some(board) = &board {
                    self.tell_lanes(p, board);
                }
                work += self.tx_port(p, now);
            } else if let (true, Some(board)) = (self.ports[p].lane, &board) {
                self.follow_owner(p, board);
                work += self.tx_port(p, now);
                self.tell_owner(p, board);
            }
        }
        self.lane_board = board;
        work
    }

    /// Publishes the pause and storm state of this worker's port `p` when
    /// it changed, for the workers sending on it through lanes.
    fn tell_lanes(&mut self, p: usize, board: &LaneBoard) {
        let slot = &mut self.ports[p];
        let state = (slot.queues.paused_mask(), slot.pfc.stormed);
        if state != slot.lane_pfc {
            slot.lane_pfc = state;
            board.set_owner_state(p, state.0, state.1);
        }
    }

    /// Publishes which of this worker's lane queues for port `p` hold
    /// packets when that changed, for the owner's watchdog.
    fn tell_owner(&mut self, p: usize, board: &LaneBoard) {
        let slot = &mut self.ports[p];
        let m = slot.queues.nonempty_mask();
        if m != slot.lane_nonempty {
            slot.lane_nonempty = m;
            board.set_nonempty(self.worker, p, m);
        }
    }

    /// Applies the owner's pause and storm state of port `p` to this
    /// worker's lane queues: pauses and resumes as the owner did, and
    /// flushes a queue the owner's watchdog declared stormed.
    fn follow_owner(&mut self, p: usize, board: &LaneBoard) {
        let (paused, stormed) = board.owner_state(p);
        let slot = &mut self.ports[p];
        if (paused, stormed) == slot.lane_pfc {
            return;
        }
        let newly_stormed = stormed & !slot.lane_pfc.1;
        slot.lane_pfc = (paused, stormed);
        slot.pfc.stormed = stormed;
        for q in 0..NUM_QUEUES {
            slot.queues.set_paused(q, paused & (1 << q) != 0);
        }
        let mut m = newly_stormed;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            self.flush_stormed(p, q);
        }
    }

    /// True when no packet waits in any queue, pending transmit or hand-off.
    pub fn idle(&self) -> bool {
        self.ports.iter().all(|p| {
            !(p.owned || p.lane)
                || (p.queues.is_empty() && p.ctrl_tx.is_empty() && p.tx_pending.is_empty())
        }) && self
            .links
            .as_ref()
            .is_none_or(|l| l.inbox.is_empty() && l.from_peers.iter().all(|c| c.is_empty()))
            && self.outbox.iter().all(|b| b.is_empty())
    }

    /// True when every owned port is a replay source that has delivered all
    /// its frames (ports without a backend count as finished).
    pub fn sources_exhausted(&self) -> bool {
        self.ports
            .iter()
            .filter(|p| p.owned)
            .all(|p| p.backend.as_ref().is_none_or(|b| b.exhausted()))
    }

    /// The earliest time a queued packet can leave one of this worker's ports
    /// (a shaped port's wire frees, a shaped queue gets its rate back, a
    /// peer's pause of a non-empty queue runs out), or a PFC timer fires (an
    /// XOFF this switch sent is due for refresh); `None`
    /// when no queued packet can leave without something else happening
    /// (nothing queued, or only paused queues). A virtual clock can jump to
    /// min(this, [`next_rx_time`](Self::next_rx_time)) without missing a departure.
    pub fn next_departure(&self) -> Option<Nanos> {
        // A plain loop rather than an iterator chain: a replay asks this
        // after nearly every poll, mostly with every queue empty.
        let mut next: Option<Nanos> = None;
        for p in self.ports.iter().filter(|p| p.lane) {
            // A lane's pauses and timers are its owner's.
            if let Some(t) = p.queues.next_departure() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        for p in self.ports.iter().filter(|p| p.owned && p.backend.is_some()) {
            let nonempty = p.queues.nonempty_mask();
            // Nothing queued, no XOFF sent, no storm: every candidate below
            // is `None` (queue departures and pause expiries need a queued
            // packet, refreshes an XOFF, watchdog restores a storm).
            if nonempty == 0 && p.pfc.tx_xoff == 0 && p.pfc.stormed == 0 {
                continue;
            }
            let candidates = [
                p.queues.next_departure(),
                p.pfc.next_expiry(nonempty),
                p.pfc.next_refresh(),
                p.model
                    .pfc
                    .watchdog
                    .and_then(|wd| p.pfc.next_watchdog(nonempty, &wd)),
            ];
            for t in candidates.into_iter().flatten() {
                next = Some(next.map_or(t, |n| n.min(t)));
            }
        }
        next
    }

    /// Pauses or resumes egress queue `queue` of `port` (PFC); a paused queue
    /// keeps its packets and DWRR credit. Returns false for an unknown port.
    pub fn set_queue_paused(&mut self, port: PortId, queue: usize, paused: bool) -> bool {
        match self.ports.get_mut(port as usize) {
            Some(slot) => {
                slot.queues.set_paused(queue, paused);
                true
            }
            None => false,
        }
    }

    /// The egress queues of one port, for inspection (depths, WRED averages,
    /// sojourn times).
    pub fn queues(&self, port: PortId) -> Option<&EgressQueues> {
        self.ports.get(port as usize).map(|p| &p.queues)
    }

    /// The earliest timestamp of a frame a replay source still holds.
    pub fn next_rx_time(&self) -> Option<Nanos> {
        self.ports
            .iter()
            .filter(|p| p.owned)
            .filter_map(|p| p.backend.as_ref().and_then(|b| b.next_rx_time()))
            .min()
    }

    /// Gives up on parked packets (counting them unresolved) and flushes every
    /// backend; called once at shutdown.
    pub fn finish(&mut self) -> std::io::Result<()> {
        let mut parked = Vec::new();
        self.neighbors.drain_parked(&mut parked);
        for pkt in parked {
            self.count_drop(pkt.in_port as usize, DropReason::NeighborUnresolved);
        }
        let mut result = Ok(());
        for p in self.ports.iter_mut().filter(|p| p.owned || p.lane) {
            if let Some(b) = p.backend.as_mut() {
                if let Err(e) = b.flush() {
                    result = Err(e);
                }
            }
        }
        result
    }

    /// A snapshot of the counters of the ports this worker owns, and of
    /// what it sent on other workers' ports through lanes (apart, in
    /// [`SwitchStats::lanes`]).
    pub fn stats(&self) -> SwitchStats {
        let mut interfaces = BTreeMap::new();
        let mut lanes = BTreeMap::new();
        let snapshots = self.ports.iter().filter(|p| p.owned || p.lane).map(|p| {
            let m = &p.model;
            let io = p
                .backend
                .as_ref()
                .map(|b| b.io_counters())
                .unwrap_or_default();
            let addresses = m
                .ipv4
                .iter()
                .map(|(a, l)| format!("{a}/{l}"))
                .chain(m.ipv6.iter().map(|(a, l)| format!("{a}/{l}")))
                .collect();
            let mut s = InterfaceStats {
                mac: m.mac.to_string(),
                admin_up: m.admin_up,
                link_up: p.backend.as_ref().is_some_and(|b| b.link_up()),
                backend: p
                    .backend
                    .as_ref()
                    .map_or_else(|| "none".to_string(), |b| b.describe()),
                mtu: m.mtu,
                speed_mbps: m.speed_mbps,
                addresses,
                backend_rx_dropped: io.rx_dropped,
                backend_tx_errors: io.tx_errors,
                ..InterfaceStats::default()
            }
            .with_counters(&p.counters_now())
            .with_latency(&std::array::from_fn::<_, NUM_QUEUES, _>(|q| {
                p.queues.latency(q)
            }));
            // The enable vector is configuration, not a counter.
            s.pfc.enabled = m.pfc.enabled_priorities;
            (p.owned, m.name.clone(), s)
        });
        for (owned, name, s) in snapshots {
            if owned { &mut interfaces } else { &mut lanes }.insert(name, s);
        }
        SwitchStats {
            lanes,
            hostname: self.hostname.clone(),
            interfaces,
            pool: PoolStats {
                capacity: self.pool.capacity(),
                available: self.pool.available(),
                exhausted: self.pool.exhausted(),
            },
            neighbor_parked: self.neighbors.parked(),
            load_balancing: self.group_stats(),
        }
    }

    /// Per-group counters with member port quality, keyed by prefix.
    fn group_stats(&self) -> BTreeMap<String, GroupStats> {
        let mode = |dlb: bool| match self.balancer.dlb_model() {
            Some(m) if dlb => match m.mode {
                DlbMode::Flowlet => "flowlet",
                DlbMode::PerPacket => "per-packet",
            },
            _ => "ecmp",
        };
        let board = self.balancer.quality();
        self.fib
            .groups()
            .filter_map(|(route, g)| {
                let c = self.balancer.counters(g.id())?;
                let buckets = g.bucket_counts();
                let members = g
                    .hops()
                    .iter()
                    .zip(&c.members)
                    .zip(buckets)
                    .map(|((h, m), buckets)| MemberStats {
                        interface: self
                            .ports
                            .get(usize::from(h.port))
                            .map_or_else(String::new, |p| p.model.name.clone()),
                        gateway: h.gateway.map(|a| a.to_string()),
                        packets: m.packets,
                        bytes: m.bytes,
                        buckets,
                        quality_band: board.band(h.port),
                        load_percent: board.load_percent(h.port),
                    })
                    .collect();
                let s = GroupStats {
                    mode: mode(g.is_dlb()).to_string(),
                    members,
                    flowlets_started: c.flowlets_started,
                    flowlet_moves: c.flowlet_moves,
                    per_packet_choices: c.per_packet_choices,
                    reorder_risk: c.reorder_risk,
                    rehashed: c.rehashed,
                };
                Some((format!("{}/{}", route.prefix, route.len), s))
            })
            .collect()
    }

    /// Samples the rate estimators of this worker's ports, `intervals`
    /// sampling intervals after the last sample, and publishes their quality.
    fn sample_quality(&mut self, intervals: u64) {
        let Some(dlb) = self.balancer.dlb_model() else {
            return;
        };
        let board = self.balancer.quality();
        for (i, (slot, dre)) in self.ports.iter().zip(self.dre.iter_mut()).enumerate() {
            if !slot.owned {
                continue;
            }
            let (load, band) = dre.sample(
                dlb,
                intervals,
                slot.counters.tx_bytes,
                slot.queues.total_bytes(),
                slot.model.speed_mbps,
            );
            board.publish(i, load, band);
        }
    }

    /// The routing table, for show output.
    pub fn fib(&self) -> &Fib {
        &self.fib
    }

    /// The neighbour table, for show output.
    pub fn neighbors(&self) -> &NeighborTable {
        &self.neighbors
    }

    /// Counters of one port, by index, with its queues' depths as they are
    /// now.
    pub fn counters(&self, port: PortId) -> Option<PortCounters> {
        self.ports.get(port as usize).map(PortSlot::counters_now)
    }

    // ----- receive side -------------------------------------------------

    fn rx_port(&mut self, p: usize, now: Nanos) -> usize {
        // A fresh ArrayVec costs nothing to make; moving a full one would
        // copy every packet handle, so the burst lives on this frame.
        let mut burst = Burst::new();
        let n = match self.ports[p].backend.as_mut() {
            Some(b) if b.link_up() => b.rx_burst(&self.pool, &mut burst, now),
            _ => 0,
        };
        for mut pkt in burst.drain(..) {
            pkt.in_port = p as u16;
            self.ingress(pkt, p, now);
        }
        n
    }

    fn ingress(&mut self, mut pkt: Packet, p: usize, now: Nanos) {
        let slot = &mut self.ports[p];
        slot.counters.rx_packets += 1;
        slot.counters.rx_bytes += pkt.len() as u64;
        if !slot.model.admin_up {
            slot.counters.drop(DropReason::InterfaceDown);
            return;
        }
        let (frame, meta) = pkt.data_and_meta_mut();
        if parse(frame, meta).is_err() {
            slot.counters.rx_malformed += 1;
            slot.counters.drop(DropReason::Malformed);
            return;
        }
        match pkt.meta.kind {
            FrameKind::Ipv4 | FrameKind::Ipv6 => self.route(pkt, p, now),
            FrameKind::Arp => self.local_arp(pkt, p, now),
            FrameKind::MacControl => self.mac_control(&pkt, p, now),
            FrameKind::Lldp => self.punt(pkt, p),
            FrameKind::Other(_) | FrameKind::Unparsed => {
                slot.counters.drop(DropReason::UnknownEthertype)
            }
        }
    }

    /// Acts on a received PFC or PAUSE frame: sets, reloads or ends the
    /// pause of the queues it names.
    fn mac_control(&mut self, pkt: &Packet, p: usize, now: Nanos) {
        let slot = &mut self.ports[p];
        let payload = pkt.data().get(pkt.meta.l3_offset as usize..).unwrap_or(&[]);
        let repr =
            mac_control::Packet::new_checked(payload).and_then(|v| MacControlRepr::parse(&v));
        let enabled = slot.model.pfc.enabled_priorities;
        let (mask, quanta) = match repr {
            Ok(MacControlRepr::Pfc { enable, quanta }) => {
                host::count_mac_control(pkt.data(), &mut slot.counters.pfc);
                (enable & enabled, quanta)
            }
            Ok(MacControlRepr::Pause { quanta }) => {
                let honored = enabled == 0 && slot.model.pfc.honor_pause_8023x;
                (if honored { 0xFF } else { 0 }, [quanta; PRIORITIES])
            }
            Ok(MacControlRepr::Unknown(_)) | Err(_) => {
                return slot.counters.drop(DropReason::BadMacControl);
            }
        };
        slot.counters.punted += 1;
        let speed = slot.model.speed_mbps;
        let mut m = mask;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            let bit = 1u8 << q;
            let st = &mut slot.pfc;
            if quanta[q] != 0 {
                st.last_rx_pause[q] = now;
            }
            if st.stormed & bit != 0 {
                // The watchdog holds this queue open until the pauses stop.
                continue;
            }
            if quanta[q] == 0 {
                if st.rx_paused & bit != 0 {
                    st.rx_paused &= !bit;
                    slot.counters.pfc.paused_ns[q] += now.saturating_sub(st.paused_since[q]);
                    slot.queues.set_paused(q, false);
                }
            } else {
                if st.rx_paused & bit == 0 {
                    st.rx_paused |= bit;
                    st.paused_since[q] = now;
                    slot.queues.set_paused(q, true);
                }
                st.paused_until[q] = now + quanta_ns(quanta[q], speed);
            }
        }
    }

    /// Ends the pauses of port `p` that have run out by `now`.
    fn pause_timers(&mut self, p: usize, now: Nanos) {
        let slot = &mut self.ports[p];
        let st = &mut slot.pfc;
        let mut m = st.rx_paused;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            if st.paused_until[q] <= now {
                st.rx_paused &= !(1 << q);
                slot.counters.pfc.paused_ns[q] += st.paused_until[q] - st.paused_since[q];
                slot.queues.set_paused(q, false);
            }
        }
    }

    /// Declares storms on queues of port `p` paused too long while holding
    /// packets, here or in other workers' lanes (`lanes`: the queues they
    /// hold packets in), and restores stormed queues whose pauses have
    /// stopped.
    fn watchdog(&mut self, p: usize, wd: &WatchdogModel, now: Nanos, lanes: u8) {
        let nonempty = self.ports[p].queues.nonempty_mask() | lanes;
        let st = self.ports[p].pfc;
        let mut m = st.rx_paused & nonempty & !st.stormed;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            if now.saturating_sub(st.paused_since[q]) >= wd.detect_ns() {
                self.storm(p, q, now);
            }
        }
        if let Some(restore) = wd.restore_ns() {
            let mut m = st.stormed;
            while m != 0 {
                let q = m.trailing_zeros() as usize;
                m &= m - 1;
                if now.saturating_sub(st.last_rx_pause[q]) >= restore {
                    let slot = &mut self.ports[p];
                    slot.pfc.stormed &= !(1 << q);
                    slot.counters.pfc.watchdog_restores[q] += 1;
                    tracing::info!(interface = %slot.model.name, priority = q, "PFC watchdog: queue restored");
                }
            }
        }
    }

    /// Puts queue `q` of port `p` in the stormed state: resumed, flushed,
    /// and no longer sending PFC for its priority.
    fn storm(&mut self, p: usize, q: usize, now: Nanos) {
        let slot = &mut self.ports[p];
        let bit = 1u8 << q;
        slot.pfc.stormed |= bit;
        slot.pfc.rx_paused &= !bit;
        slot.counters.pfc.paused_ns[q] += now.saturating_sub(slot.pfc.paused_since[q]);
        slot.queues.set_paused(q, false);
        slot.counters.pfc.watchdog_storms[q] += 1;
        let n = self.flush_stormed(p, q);
        let slot = &self.ports[p];
        tracing::warn!(interface = %slot.model.name, priority = q, flushed = n, "PFC watchdog: storm, queue flushed");
        if slot.pfc.tx_xoff & bit != 0 {
            self.send_pfc(p, q, false, now);
        }
    }

    /// Drops what queue `q` of port `p` holds, as the watchdog does with a
    /// stormed queue; returns how many packets.
    fn flush_stormed(&mut self, p: usize, q: usize) -> usize {
        let acct = Arc::clone(&self.ingress_acct);
        let worker = self.worker;
        let slot = &mut self.ports[p];
        let counters = &mut slot.counters;
        let n = slot.queues.flush(q, &mut counters.queues, |pkt| {
            acct.release(worker, IngressCharge::of(&pkt))
        });
        counters.drops[DropReason::PfcWatchdog as usize] += n as u64;
        n
    }

    fn punt(&mut self, pkt: Packet, p: usize) {
        let c = &mut self.ports[p].counters;
        match &self.punt {
            Some(ring) => match ring.push(pkt) {
                Ok(()) => c.punted += 1,
                Err(_) => c.drop(DropReason::PuntQueueFull),
            },
            None => c.drop(DropReason::LocalUnhandled),
        }
    }

    fn count_drop(&mut self, p: usize, reason: DropReason) {
        if let Some(slot) = self.ports.get_mut(p) {
            slot.counters.drop(reason);
        }
    }

    fn route(&mut self, mut pkt: Packet, p: usize, now: Nanos) {
        let dst_mac = MacAddr::from_bytes(pkt.data());
        let l3 = pkt.meta.l3_offset as usize;
        // IPv4 looks up its own table directly, without `IpAddr`'s dispatch;
        // the lookup changes nothing, so the drops below may follow it.
        let (dst, multicast, action) = if pkt.meta.kind == FrameKind::Ipv4 {
            let b = &pkt.data()[l3 + 16..l3 + 20];
            let a = Ipv4Addr::new(b[0], b[1], b[2], b[3]);
            let multicast = a.is_multicast() || a.is_broadcast();
            (IpAddr::V4(a), multicast, self.fib.lookup_v4(a))
        } else {
            let mut o = [0u8; 16];
            o.copy_from_slice(&pkt.data()[l3 + 24..l3 + 40]);
            let a = IpAddr::V6(Ipv6Addr::from(o));
            (a, a.is_multicast(), self.fib.lookup(a))
        };
        if multicast {
            // IPv6 multicast carries neighbour discovery for the switch.
            if pkt.meta.kind == FrameKind::Ipv6 {
                return self.local_ip(pkt, p, now);
            }
            return self.count_drop(p, DropReason::NotRoutable);
        }
        if dst_mac != self.ports[p].model.mac {
            return self.count_drop(p, DropReason::NotOurMac);
        }
        let hop = match action {
            None => return self.count_drop(p, DropReason::NoRoute),
            Some(RouteAction::Discard) => return self.count_drop(p, DropReason::NullRoute),
            Some(RouteAction::Local(_)) => return self.local_ip(pkt, p, now),
            Some(RouteAction::Connected(port)) => Hop {
                port: *port,
                addr: dst,
            },
            Some(RouteAction::Forward(group)) => {
                let hash = self.balancer.flow_hash(pkt.data(), &pkt.meta);
                pkt.meta.hash = hash;
                let up = &self.port_up;
                let usable = |port: PortId| up.get(usize::from(port)).copied().unwrap_or(false);
                let Some(choice) = self.balancer.choose(group, hash, pkt.len(), now, usable) else {
                    return self.count_drop(p, DropReason::InterfaceDown);
                };
                let h = group.hops()[choice.member];
                Hop {
                    port: h.port,
                    addr: h.gateway.unwrap_or(dst),
                }
            }
        };
        if pkt.meta.ttl <= 1 {
            return self.count_drop(p, DropReason::TtlExpired);
        }
        let out = hop.port as usize;
        let Some(egress) = self.ports.get(out) else {
            return self.count_drop(p, DropReason::NoRoute);
        };
        if u32::from(pkt.meta.l3_len) > u32::from(egress.model.mtu) {
            return self.count_drop(p, DropReason::MtuExceeded);
        }
        if !self.port_up[out] {
            return self.count_drop(p, DropReason::InterfaceDown);
        }
        pkt.meta.out_port = hop.port;
        let qg = self.ports[p].classifier.classify(&pkt);
        pkt.meta.qos_group = qg;
        // Tagged frames carry their PFC priority in the PCP; untagged routed
        // traffic is DSCP-based, so its priority is its qos-group.
        let prio = pkt.meta.pcp().unwrap_or(qg);
        pkt.meta.pfc_priority = prio;
        let lossless = self.ports[p].model.pfc.enabled_priorities & !self.ports[p].pfc.stormed;
        pkt.meta.lossless = usize::from(prio) < PRIORITIES && lossless & (1 << prio) != 0;
        match self.neighbors.lookup(hop.port, hop.addr) {
            Some(mac) => self.rewrite_and_enqueue(pkt, mac),
            None => self.park(pkt, hop, now),
        }
    }

    fn park(&mut self, pkt: Packet, hop: Hop, now: Nanos) {
        let in_port = pkt.in_port as usize;
        match self.neighbors.park(hop.port, hop.addr, pkt, now) {
            Park::SendRequest => self.send_resolution(hop.port, hop.addr),
            Park::Waiting => {}
            Park::Full(pkt) => match self.neighbors.lookup(hop.port, hop.addr) {
                Some(mac) => self.rewrite_and_enqueue(pkt, mac),
                None => self.count_drop(in_port, DropReason::NeighborQueueFull),
            },
        }
    }

    /// Turns a routed packet into the frame for its next hop: drops any
    /// 802.1Q tag (routed ports are untagged), rewrites the MACs, decrements
    /// TTL / hop limit with an incremental checksum update.
    fn rewrite_and_enqueue(&mut self, mut pkt: Packet, next_hop: MacAddr) {
        let out = pkt.meta.out_port as usize;
        let src = self.ports[out].model.mac;
        if pkt.meta.vlan_tci.is_some() {
            let d = pkt.data_mut();
            d.copy_within(0..12, 4);
            pkt.pull_front(4);
            pkt.meta.vlan_tci = None;
            pkt.meta.l3_offset -= 4;
            pkt.meta.l4_offset = pkt.meta.l4_offset.saturating_sub(4);
            pkt.meta.payload_offset = pkt.meta.payload_offset.saturating_sub(4);
        }
        let l3 = pkt.meta.l3_offset as usize;
        let is_v4 = pkt.meta.kind == FrameKind::Ipv4;
        // The parser saw the whole fixed header; taking it at once leaves
        // one length check for every write below.
        let end = l3
            + if is_v4 {
                ipv4::HEADER_LEN
            } else {
                ipv6::HEADER_LEN
            };
        let Some(d) = pkt.data_mut().get_mut(..end) else {
            return self.count_drop(pkt.in_port as usize, DropReason::Malformed);
        };
        d[0..6].copy_from_slice(&next_hop.0);
        d[6..12].copy_from_slice(&src.0);
        if is_v4 {
            // Routing dropped TTL 0 and 1, so the decrement cannot borrow.
            d[l3 + 8] -= 1;
            let csum = u16::from_be_bytes([d[l3 + 10], d[l3 + 11]]);
            d[l3 + 10..l3 + 12].copy_from_slice(&checksum::ttl_decremented(csum).to_be_bytes());
        } else {
            d[l3 + 7] -= 1;
        }
        pkt.meta.ttl -= 1;
        if pkt.meta.lossless && !self.admit_lossless(&pkt) {
            return;
        }
        self.enqueue(pkt);
    }

    /// Counts a lossless packet into its ingress priority group, sending
    /// XOFF when that crosses xOFF; false (and an `ingress_overflow` drop)
    /// when the group's headroom is used up. Runs on the ingress port's worker.
    fn admit_lossless(&mut self, pkt: &Packet) -> bool {
        let in_port = pkt.in_port as usize;
        let pg = usize::from(pkt.meta.pfc_priority);
        let len = pkt.len() as u64;
        let Some(slot) = self.ports.get_mut(in_port) else {
            return false;
        };
        // The ingress total has one writer: the port's own worker.
        debug_assert!(slot.owned, "admitting for a port of another worker");
        let th = slot.model.pfc.pg[pg];
        let Some(held) = self.ingress_acct.admit(
            self.worker,
            in_port,
            pg,
            len,
            &th,
            &mut slot.released_elsewhere,
        ) else {
            self.count_drop(in_port, DropReason::IngressOverflow);
            return false;
        };
        if held >= th.xoff_bytes && slot.pfc.tx_xoff & (1 << pg) == 0 {
            self.send_pfc(in_port, pg, true, self.now);
        }
        true
    }

    /// Sends XOFF (the port's quanta) or XON (quanta 0) for priority `pg`
    /// from port `p`, ahead of its queues, and updates the XOFF state.
    fn send_pfc(&mut self, p: usize, pg: usize, xoff: bool, now: Nanos) {
        let Some(mut pkt) = self.pool.alloc() else {
            return;
        };
        let slot = &mut self.ports[p];
        let quanta = if xoff { slot.model.pfc.quanta } else { 0 };
        let mut q = [0u16; PRIORITIES];
        q[pg] = quanta;
        let repr = MacControlRepr::Pfc {
            enable: 1 << pg,
            quanta: q,
        };
        let mut frame = [0u8; mac_control::FRAME_LEN];
        repr.emit_frame(slot.model.mac, &mut frame);
        pkt.reset();
        pkt.set_len(mac_control::FRAME_LEN);
        pkt.data_mut().copy_from_slice(&frame);
        if slot.ctrl_tx.try_push(pkt).is_err() {
            slot.counters.drop(DropReason::TxError);
            return;
        }
        let bit = 1u8 << pg;
        if xoff {
            slot.counters.pfc.tx_pause[pg] += 1;
            slot.pfc.tx_xoff |= bit;
            // Refresh at half the pause time, so the peer never resumes early.
            let half = (quanta_ns(quanta, slot.model.speed_mbps) / 2).max(1);
            slot.pfc.refresh_at[pg] = now + half;
        } else {
            slot.counters.pfc.tx_resume[pg] += 1;
            slot.pfc.tx_xoff &= !bit;
        }
    }

    /// For each priority port `p` has paused its peer on: XON once the
    /// group is below xON, else XOFF again when the refresh is due. Returns
    /// the frames sent.
    fn pfc_release(&mut self, p: usize, now: Nanos) -> usize {
        let mut sent = 0;
        let mut m = self.ports[p].pfc.tx_xoff;
        while m != 0 {
            let pg = m.trailing_zeros() as usize;
            m &= m - 1;
            let occ = self.ingress_acct.get(p, pg);
            let slot = &self.ports[p];
            if occ == 0 || occ < slot.model.pfc.pg[pg].xon_bytes {
                self.send_pfc(p, pg, false, now);
                sent += 1;
            } else if slot.pfc.refresh_at[pg] <= now {
                self.send_pfc(p, pg, true, now);
                sent += 1;
            }
        }
        sent
    }

    /// Queues a packet on its egress port, here or on the owning worker.
    fn enqueue(&mut self, pkt: Packet) {
        let out = pkt.meta.out_port as usize;
        if !self.ports[out].tx_here {
            let Some(links) = &self.links else { return };
            let owner = links.owners[out];
            if self.outbox[owner].is_full() {
                self.flush_handoff(owner);
            }
            self.outbox[owner].push(pkt);
            return;
        }
        let slot = &mut self.ports[out];
        if pkt.meta.qos_group == QOS_GROUP_CONTROL {
            if slot.ctrl_tx.try_push(pkt).is_err() {
                slot.counters.drop(DropReason::TxError);
            }
            return;
        }
        let q = pkt.meta.qos_group as usize;
        let charge = IngressCharge::of(&pkt);
        if slot.pfc.stormed & (1 << q.min(NUM_QUEUES - 1)) != 0 {
            self.ingress_acct.release(self.worker, charge);
            slot.counters.drop(DropReason::PfcWatchdog);
            return;
        }
        let lossless = charge.is_some();
        if let Err(reason) =
            slot.queues
                .offer(q, pkt, self.now, &mut slot.counters.queues, lossless)
        {
            self.ingress_acct.release(self.worker, charge);
            // The queue counted its own drop; the drop reason belongs to the egress port.
            slot.counters.drop(reason);
        }
    }

    // ----- the switch's own addresses -------------------------------------

    fn local_arp(&mut self, mut pkt: Packet, p: usize, now: Nanos) {
        let outcome = host::handle_arp(&mut pkt, &self.ports[p].model);
        if let Some((ip, mac)) = outcome.learned {
            self.learn(p as PortId, IpAddr::V4(ip), mac, now, true);
        }
        self.ports[p].counters.punted += 1;
        if outcome.reply {
            self.send_ctrl(p, pkt);
        }
    }

    fn local_ip(&mut self, mut pkt: Packet, p: usize, now: Nanos) {
        let outcome = host::handle_ip(&mut pkt, &self.ports[p].model);
        if let Some((ip, mac)) = outcome.learned {
            self.learn(p as PortId, ip, mac, now, true);
        }
        if outcome.reply {
            self.ports[p].counters.punted += 1;
            self.send_ctrl(p, pkt);
        } else if outcome.consumed {
            self.ports[p].counters.punted += 1;
        } else {
            self.count_drop(p, DropReason::LocalUnhandled);
        }
    }

    fn send_ctrl(&mut self, p: usize, pkt: Packet) {
        let slot = &mut self.ports[p];
        if slot.ctrl_tx.try_push(pkt).is_err() {
            slot.counters.drop(DropReason::TxError);
        }
    }

    fn send_resolution(&mut self, port: PortId, addr: IpAddr) {
        let Some(mut pkt) = self.pool.alloc() else {
            return;
        };
        let ifc = &self.ports[port as usize].model;
        if !host::build_resolution(&mut pkt, ifc, addr) {
            return;
        }
        pkt.meta.out_port = port;
        pkt.meta.qos_group = QOS_GROUP_CONTROL;
        self.enqueue(pkt);
    }

    fn learn(&mut self, port: PortId, addr: IpAddr, mac: MacAddr, now: Nanos, tell_others: bool) {
        let mut released = std::mem::take(&mut self.released);
        let changed = self.neighbors.learn(port, addr, mac, now, &mut released);
        for pkt in released.drain(..) {
            self.rewrite_and_enqueue(pkt, mac);
        }
        self.released = released;
        if changed && tell_others {
            if let Some(links) = &self.links {
                for (w, ring) in links.all_events.iter().enumerate() {
                    if w != links.id {
                        // A full event ring only delays convergence: the other
                        // worker resolves the address itself on its next miss.
                        let _ = ring.push(NeighborEvent { port, addr, mac });
                    }
                }
            }
        }
    }

    /// True while this worker's ring to another (live) worker is more than
    /// half full: that worker is behind, so this one leaves new frames in
    /// its ports' receive rings (where the backend counts any overflow, as a
    /// NIC does) rather than routing them only to drop them at the hand-off.
    fn handoff_congested(&self) -> bool {
        self.links.as_ref().is_some_and(|l| {
            l.to_peers
                .iter()
                .flatten()
                .any(|r| !r.is_abandoned() && r.slots() < r.buffer().capacity() / 2)
        })
    }

    /// Sends what this poll routed to worker `w`'s ports over its ring in
    /// one go; what does not fit is dropped as `handoff_full`.
    fn flush_handoff(&mut self, w: usize) {
        let Some(ring) = self
            .links
            .as_mut()
            .and_then(|l| l.to_peers.get_mut(w))
            .and_then(|r| r.as_mut())
        else {
            return;
        };
        let burst = &mut self.outbox[w];
        let fits = ring.slots().min(burst.len());
        if let Ok(chunk) = ring.write_chunk_uninit(fits) {
            chunk.fill_from_iter(burst.drain(..fits));
        }
        for pkt in burst.drain(..) {
            self.ingress_acct
                .release(self.worker, IngressCharge::of(&pkt));
            if let Some(slot) = self.ports.get_mut(usize::from(pkt.in_port)) {
                slot.counters.drop(DropReason::HandoffFull);
            }
        }
    }

    /// Flushes every worker's outbox (the end of a poll).
    fn flush_handoffs(&mut self) {
        for w in 0..self.outbox.len() {
            if !self.outbox[w].is_empty() {
                self.flush_handoff(w);
            }
        }
    }

    fn drain_links(&mut self, now: Nanos) -> usize {
        let Some(links) = &self.links else { return 0 };
        let events = Arc::clone(&links.events);
        let inbox = Arc::clone(&links.inbox);
        let peers = links.from_peers.len();
        while let Some(ev) = events.pop() {
            self.learn(ev.port, ev.addr, ev.mac, now, false);
        }
        let mut n = 0;
        while n < BURST_SIZE {
            let Some(pkt) = inbox.pop() else { break };
            self.enqueue(pkt);
            n += 1;
        }
        for r in 0..peers {
            for _ in 0..HANDOFF_BURSTS_PER_POLL {
                let mut burst = Burst::new();
                if let Some(ring) = self.links.as_mut().and_then(|l| l.from_peers.get_mut(r)) {
                    let take = ring.slots().min(BURST_SIZE);
                    if let Ok(chunk) = ring.read_chunk(take) {
                        burst.extend(chunk);
                    }
                }
                if burst.is_empty() {
                    break;
                }
                n += burst.len();
                // Another core wrote these packets' state last.
                for pkt in &burst {
                    pkt.prefetch_state();
                }
                for pkt in burst.drain(..) {
                    self.enqueue(pkt);
                }
            }
        }
        n
    }

    fn tick(&mut self, now: Nanos) {
        if !self.neighbors.resolving() {
            return;
        }
        let mut out = std::mem::take(&mut self.tick_out);
        self.neighbors.tick(now, &mut out);
        for (port, addr) in out.requests.drain(..) {
            self.send_resolution(port, addr);
        }
        for pkt in out.expired.drain(..) {
            self.count_drop(pkt.in_port as usize, DropReason::NeighborUnresolved);
        }
        self.tick_out = out;
    }

    // ----- transmit side --------------------------------------------------

    fn tx_port(&mut self, p: usize, now: Nanos) -> usize {
        let slot = &mut self.ports[p];
        let Some(backend) = slot.backend.as_mut() else {
            return 0;
        };
        if !slot.tx_pending.is_empty() {
            transmit(
                backend.as_mut(),
                &mut slot.tx_pending,
                &mut slot.counters,
                now,
            );
            if !slot.tx_pending.is_empty() {
                return 0;
            }
        }
        let mut sent = 0;
        if !slot.ctrl_tx.is_empty() {
            // Control frames go ahead of the queues, leaving now, but still
            // take wire time (those the backend accepted: it takes them
            // from the front).
            let mut lens = [0usize; BURST_SIZE];
            for (l, pkt) in lens.iter_mut().zip(slot.ctrl_tx.iter_mut()) {
                *l = pkt.len();
                pkt.timestamp = now;
            }
            let n = transmit(backend.as_mut(), &mut slot.ctrl_tx, &mut slot.counters, now);
            for l in &lens[..n.min(BURST_SIZE)] {
                slot.queues.charge_wire(now, *l);
            }
            sent += n;
        }
        // Up to a few bursts while the backend keeps taking them: a port fed
        // by several others at once must drain faster than one burst per
        // round or its queues would only ever grow.
        for _ in 0..TX_BURSTS_PER_POLL {
            if slot.queues.is_empty() || !slot.tx_pending.is_empty() {
                break;
            }
            let n = slot.queues.dequeue_burst(
                &mut slot.tx_pending,
                BURST_SIZE,
                now,
                &mut slot.counters.queues,
            );
            if n == 0 {
                // Shaped or paused: nothing may leave yet.
                break;
            }
            if self.any_lossless {
                let releaser = self.ingress_acct.releaser(self.worker);
                for pkt in slot.tx_pending.iter() {
                    releaser.release(IngressCharge::of(pkt));
                }
            }
            sent += transmit(
                backend.as_mut(),
                &mut slot.tx_pending,
                &mut slot.counters,
                now,
            );
        }
        sent
    }
}

/// Hands `burst` to the backend, counting what it accepted; what it refused
/// stays in `burst`.
fn transmit(backend: &mut dyn Port, burst: &mut Burst, c: &mut PortCounters, now: Nanos) -> usize {
    let bytes_before: u64 = burst.iter().map(|p| p.len() as u64).sum();
    let sent = backend.tx_burst(burst, now);
    let bytes_left: u64 = burst.iter().map(|p| p.len() as u64).sum();
    c.tx_packets += sent as u64;
    c.tx_bytes += bytes_before - bytes_left;
    sent
}
