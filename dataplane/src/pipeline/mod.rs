//! One worker's switch: the packet path from `rx_burst` to `tx_burst`, one
//! file per stage.
//!
//! ```text
//! poll(now):
//!   handoff   packets other workers routed to our ports, neighbour news
//!   ingress   rx_burst per port; per packet: count, parse, dispatch by kind
//!     ├─ LLDP ─────────────────────────────► punt ring (control plane)
//!     ├─ PFC / PAUSE ──────────────────────► pfc_rx: pause / resume queues
//!     ├─ ARP, IP to the switch ────────────► local: answer, learn
//!     └─ IP ─► route: LPM, ECMP/DLB member, TTL, MTU, egress link
//!              ─► classify: qos-group, PFC priority, lossless?
//!              ─► neighbour: known? else park and resolve (local)
//!              ─► rewrite: MACs, TTL/hop limit, tag stripped
//!              ─► admit: ingress PG bytes (XOFF at xOFF, headroom)
//!              ─► handoff: the owner's ring, or here:
//!                 admit: storm, WRED/ECN, queue and port limits ─► egress queue
//!   local     neighbour retries (timer)
//!   handoff   this round's packets for other workers leave, a burst per ring
//!   per port: pfc_rx timers and watchdog, pfc_tx XON/XOFF refresh,
//!             lane_sync, egress: control frames, scheduler, shaper, tx_burst
//!             (dequeue releases ingress bytes)
//! ```
//!
//! Stages that work per packet say so; egress, PFC timers and the
//! hand-off work per port and burst. Scheduling, WRED/ECN and shaping are
//! [`crate::qos`]'s, applied through each port's [`EgressQueues`]; the PFC
//! state and accounting are [`crate::pfc`]'s. Virtual-time drivers ask
//! [`Switch::next_departure`] when a shaped port can send next so that they
//! can move the clock straight there.
//!
//! A [`Switch`] owns the ports it polls and the egress queues of those ports.
//! With several workers, each has its own `Switch` built from the same model;
//! a packet routed to a port owned by another worker crosses a bounded ring
//! ([`WorkerLinks`]), unless the port takes transmit lanes (see
//! [`crate::lanes`]): then the worker queues and sends it itself. Neighbour
//! answers learned by one worker are broadcast to the others, so every
//! worker's tables converge.

mod admit;
mod bridge;
mod busy;
mod classify;
mod egress;
mod handoff;
mod ingress;
mod lane_sync;
mod local;
mod pfc_rx;
mod pfc_tx;
pub mod poll_gap;
mod quality;
mod rewrite;
mod route;
mod span;
mod stats;

use std::net::IpAddr;
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

use local::TICK_INTERVAL;

use crate::balance::dlb::Dre;
use crate::balance::{Balancer, QualityBoard};
use crate::capture::CaptureRing;
use crate::clock::Nanos;
use crate::counters::{DropReason, PortCounters, VlanCounters};
use crate::fib::{Fib, FibWarning, RouteAction};
use crate::lanes::{self, LaneBoard};
use crate::mac_table::MacTable;
use crate::model::pfc::PRIORITIES;
use crate::model::{InterfaceModel, Logical, PortId, SwitchModel};
use crate::neighbor::{NeighborTable, TickOutput};
use crate::packet::{Burst, PacketBuf, Pool};
use crate::pfc::{IngressAccounting, PfcPortState};
use crate::port::Port;
use crate::qos::classify::Classifier;
use crate::queue::EgressQueues;
use crate::span::SpanSet;
use crate::wire::MacAddr;

pub use handoff::{MacEvent, NeighborEvent, WorkerLinks};

/// Most consecutive rounds a worker leaves its ports unread while a peer
/// catches up: PFC pause frames and neighbour answers arriving meanwhile
/// must not wait long, and a peer that stopped must not stop this worker.
pub const MAX_RX_HELD: u32 = 32;

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
    /// How many frames at the front of `ctrl_tx` monitor sessions have
    /// already copied (the backend refused them; a retry is no new frame).
    ctrl_mirrored: usize,
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
    /// Switchports' addresses, per VLAN.
    macs: MacTable,
    /// Which ports carry which VLAN, and the VLANs' SVIs.
    l2: bridge::L2Tables,
    /// What the bridge did per VLAN (index = VLAN ID).
    vlans: Box<[VlanCounters]>,
    pool: Pool,
    links: Option<WorkerLinks>,
    /// Per worker: packets routed to its ports this poll, sent over in one
    /// go after the receive phase, or earlier when a burst fills (see
    /// [`WorkerLinks::to_peers`]).
    outbox: Vec<Burst>,
    /// Consecutive polls that skipped receiving because a peer was behind.
    rx_held: u32,
    punt: Option<Arc<ArrayQueue<PacketBuf>>>,
    /// Where frames for the kernel behind the ports' mirror interfaces go,
    /// when the switch has them.
    mirror: Option<Arc<ArrayQueue<PacketBuf>>>,
    released: Vec<PacketBuf>,
    tick_out: TickOutput,
    last_tick: Nanos,
    /// The time of the current poll, stamped on packets as they are queued.
    now: Nanos,
    /// How long this worker goes between polls.
    poll_gaps: poll_gap::PollGaps,
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
    /// Receive hints (see [`Switch::use_rx_hints`]): on, and the ports
    /// hinted since the last poll (each once, flagged in `rx_hinted`).
    rx_hints_on: bool,
    rx_hints: Vec<u16>,
    rx_hinted: Vec<bool>,
    /// With hints on, link states are read again only after
    /// [`Switch::links_changed`].
    links_changed: bool,
    /// The owned ports a round visits, and when (see [`busy`]).
    busy: busy::Busy,
    /// Some port is another worker's that this one sends on.
    any_lane: bool,
    /// Where copies of dropped frames go while a drop capture is armed
    /// (see [`Switch::capture_drops`]).
    drop_tap: Option<Arc<CaptureRing>>,
    /// The enabled monitor sessions (see [`Switch::set_span`]).
    span: Option<Arc<SpanSet>>,
}

/// The egress queues a packet can reach: the qos-groups any interface's
/// classification gives. Only these keep a sojourn histogram.
fn reachable_queues(model: &SwitchModel) -> u8 {
    model
        .interfaces
        .iter()
        .fold(0, |all, m| all | crate::qos::classify::qos_groups(m))
}

/// The WRED seed of port `i`: the model's seed, scrambled per port so ports
/// draw independent sequences.
fn port_seed(seed: u64, i: usize) -> u64 {
    seed ^ (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
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
        let reachable = reachable_queues(model);
        let ports = model
            .interfaces
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let classifier = Classifier::new(m);
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
                    queues: EgressQueues::with_sojourn(
                        m,
                        port_seed(model.random_seed, i),
                        reachable,
                    ),
                    classifier,
                    ctrl_tx: Burst::new(),
                    tx_pending: Burst::new(),
                    ctrl_mirrored: 0,
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
            macs: MacTable::new(&model.mac_table),
            l2: bridge::L2Tables::build(model),
            vlans: vec![VlanCounters::default(); 4096].into_boxed_slice(),
            pool,
            outbox: (0..links.as_ref().map_or(0, |l| l.to_peers.len()))
                .map(|_| Burst::new())
                .collect(),
            links,
            rx_held: 0,
            punt: None,
            mirror: None,
            released: Vec::with_capacity(64),
            tick_out: TickOutput::default(),
            last_tick: 0,
            now: 0,
            poll_gaps: poll_gap::PollGaps::default(),
            balancer,
            dre: vec![Dre::default(); model.interfaces.len()],
            last_dre_sample: 0,
            port_up: vec![false; model.interfaces.len()],
            rx_hints_on: false,
            rx_hints: Vec::with_capacity(model.interfaces.len()),
            rx_hinted: vec![false; model.interfaces.len()],
            links_changed: true,
            busy: busy::Busy::new(model.interfaces.len()),
            any_lane: false,
            drop_tap: None,
            span: None,
        };
        let sw = Switch {
            any_lane: sw.ports.iter().any(|p| p.lane),
            ..sw
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
        let reachable = reachable_queues(model);
        for (i, (slot, m)) in self.ports.iter_mut().zip(&model.interfaces).enumerate() {
            if slot.model != *m {
                slot.queues.configure(m);
                slot.classifier = Classifier::new(m);
            }
            slot.queues.measure_sojourn(reachable);
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
        self.macs.configure(&model.mac_table);
        self.l2 = bridge::L2Tables::build(model);
        self.hostname = model.hostname.clone();
        self.busy = busy::Busy::new(self.ports.len());
        // Packets already counted stay counted until they leave.
        self.any_lossless |= model
            .interfaces
            .iter()
            .any(|m| m.pfc.enabled_priorities != 0);
        warnings
    }

    /// Sends LLDP frames to `ring` for the control plane's agent instead of
    /// dropping them.
    pub fn set_punt_ring(&mut self, ring: Arc<ArrayQueue<PacketBuf>>) {
        self.punt = Some(ring);
    }

    /// Sends what the switch does not answer itself among the frames for its
    /// own addresses (BGP, BFD, SSH, neighbour answers the kernel asked for)
    /// to `ring`, for the kernel behind the ports' mirror interfaces, instead
    /// of dropping them as `local_unhandled`.
    pub fn set_mirror_ring(&mut self, ring: Arc<ArrayQueue<PacketBuf>>) {
        self.mirror = Some(ring);
    }

    /// Copies every frame the pipeline drops, with its reason and the port
    /// that counted it, into `ring` (`None` disarms). Frames the ports
    /// discard before the pipeline has a buffer for them (`no_buffer` on
    /// receive, `oversize`, `capture_damaged`) have no copy to give.
    pub fn capture_drops(&mut self, ring: Option<Arc<CaptureRing>>) {
        self.drop_tap = ring;
    }

    /// Runs one round: hand-offs in, one receive burst per port (skipped for
    /// up to [`MAX_RX_HELD`] rounds while a peer worker's ring is over half
    /// full), hand-offs out, timers, transmit bursts per port. Returns the
    /// number of packets moved, so a caller can back off when idle.
    pub fn poll(&mut self, now: Nanos) -> usize {
        self.poll_gaps.record(now);
        self.now = now;
        if !self.rx_hints_on || self.links_changed {
            self.links_changed = false;
            self.read_links();
        }
        // Port quality first, so packets of this round see the latest sample.
        self.sample_quality_if_due(now);
        let mut work = self.drain_links(now);
        work += self.rx_ports(now);
        if now.saturating_sub(self.last_tick) >= TICK_INTERVAL {
            self.last_tick = now;
            self.tick(now);
        }
        // What this round routed to other workers' ports leaves now, a burst
        // per ring, so they can start on it while this worker transmits.
        self.flush_handoffs();
        if self.span.is_some() {
            work += self.span_out(now);
        }
        // Taken for the loop, not cloned: every worker cloning the same Arc
        // each round would bounce its count between their cores.
        let board = self.lane_board.take();
        if let Some(board) = &board {
            // Owners tell lanes their state every round, busy or not.
            for p in 0..self.ports.len() {
                if self.ports[p].owned {
                    work += self.port_timers(p, now, Some(board));
                    self.tell_lanes(p, board);
                    work += self.tx_port(p, now);
                } else if self.ports[p].lane {
                    self.follow_owner(p, board);
                    work += self.tx_port(p, now);
                    self.tell_owner(p, board);
                }
            }
        } else {
            for w in 0..self.busy.words() {
                let mut bits = self.busy.busy_word(w);
                while bits != 0 {
                    let p = w * 64 + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if !self.ports[p].owned {
                        self.busy.idle(p);
                    } else if self.busy.visit(p, now) {
                        work += self.port_timers(p, now, None);
                        work += self.tx_port(p, now);
                        self.settle_port(p);
                    }
                }
            }
        }
        self.lane_board = board;
        self.check_busy();
        work
    }

    /// One round's PFC timers and ingress releases for owned port `p`.
    fn port_timers(&mut self, p: usize, now: Nanos, board: Option<&LaneBoard>) -> usize {
        self.pfc_timers(p, now, board);
        if self.any_lossless && self.ports[p].pfc.tx_xoff != 0 {
            self.pfc_release(p, now)
        } else {
            0
        }
    }

    /// Reads which ports can take traffic: a physical port when it is up
    /// (admin and link, for this worker's ports), an SVI when it is not
    /// shut, a port-channel while a member is up. A switchport that went
    /// down forgets the addresses it learned.
    fn read_links(&mut self) {
        for p in 0..self.ports.len() {
            let slot = &self.ports[p];
            if slot.model.logical.is_some() {
                continue;
            }
            let up = slot.model.admin_up && (!slot.owned || slot.up());
            // A member's addresses are its port-channel's: they stay while
            // another member is up.
            if self.port_up[p] && !up && slot.model.l2.is_some() && slot.model.member_of.is_none() {
                self.flush_macs(p as PortId);
            }
            self.port_up[p] = up;
        }
        if !self.l2.logical {
            return;
        }
        for p in 0..self.ports.len() {
            let m = &self.ports[p].model;
            let up = match &m.logical {
                None => continue,
                Some(Logical::Svi { .. }) => m.admin_up,
                Some(Logical::PortChannel { members, .. }) => {
                    m.admin_up && members.iter().any(|i| self.port_up[usize::from(*i)])
                }
            };
            if self.port_up[p] && !up && m.l2.is_some() {
                self.flush_macs(p as PortId);
            }
            self.port_up[p] = up;
        }
    }

    /// Polls receive only from ports hinted with [`hint_rx`](Self::hint_rx)
    /// (all their due frames), instead of asking every port, and read link
    /// states only after [`links_changed`](Self::links_changed). For a
    /// caller that knows when frames arrive and links change (a simulator
    /// whose cables announce them): a 64-port switch then costs what its
    /// busy ports cost.
    pub fn use_rx_hints(&mut self, on: bool) {
        self.rx_hints_on = on;
        self.links_changed = true;
    }

    /// A link went down or up: the next poll reads every port's state
    /// (with [`use_rx_hints`](Self::use_rx_hints) on; otherwise every poll
    /// does).
    pub fn links_changed(&mut self) {
        self.links_changed = true;
    }

    /// Frames are due on `port`: the next poll receives from it (with
    /// [`use_rx_hints`](Self::use_rx_hints) on; otherwise every poll does).
    pub fn hint_rx(&mut self, port: PortId) {
        if let Some(h) = self.rx_hinted.get_mut(usize::from(port)) {
            if !*h {
                *h = true;
                self.rx_hints.push(port);
            }
        }
    }

    /// The pool this switch's packets come from, for housekeeping such as
    /// [`Pool::trim_cache`] between polls.
    pub fn pool(&self) -> &Pool {
        &self.pool
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

    /// The descriptors that turn readable when any port this worker
    /// receives on has frames, so an idle worker can sleep in `poll(2)`
    /// until the next frame; `None` when some port cannot wake a sleeper.
    pub fn wake_fds(&self) -> Option<Vec<std::os::fd::RawFd>> {
        let mut fds = Vec::new();
        for p in self.ports.iter().filter(|p| p.owned) {
            let Some(backend) = &p.backend else { continue };
            let port_fds = backend.wake_fds();
            if port_fds.is_empty() {
                return None;
            }
            fds.extend(port_fds);
        }
        Some(fds)
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
        if self.any_lane {
            for p in self.ports.iter().filter(|p| p.lane) {
                // A lane's pauses and timers are its owner's.
                if let Some(t) = p.queues.next_departure() {
                    next = Some(next.map_or(t, |n| n.min(t)));
                }
            }
        }
        // Ports outside the busy set have nothing queued and no PFC state;
        // a settled port's time is kept.
        for p in self.busy.ports() {
            let slot = &self.ports[p];
            if !slot.owned || slot.backend.is_none() {
                continue;
            }
            let due = match self.busy.due_at(p) {
                Some(t) => (t != Nanos::MAX).then_some(t),
                None => self.port_due(p),
            };
            if let Some(t) = due {
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
                self.busy.mark(port as usize);
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
            let p = pkt.in_port as usize;
            self.drop_packet(pkt, p, DropReason::NeighborUnresolved);
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

    /// The routing table, for show output.
    pub fn fib(&self) -> &Fib {
        &self.fib
    }

    /// The neighbour table, for show output.
    pub fn neighbors(&self) -> &NeighborTable {
        &self.neighbors
    }
}
