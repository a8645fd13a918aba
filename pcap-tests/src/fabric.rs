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
//! Links have no propagation delay, so every leaf–spine–leaf path has the
//! same delay and any reordering a receiver sees comes from queueing on
//! different paths alone.
//!
//! Host ports are not `TracePort`s: a long run would hold every generated
//! and every captured frame in memory. A [`HostPort`] builds each frame when
//! it is due (with `railyard_control::traffic::build`) and keeps only a
//! small [`Arrival`] record of what it receives.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex};

use railyard_control::traffic::{build, FrameSpec, Transport, BTH_RC_WRITE_ONLY, ROCEV2_PORT};
use railyard_dataplane::balance::dlb::flowlet_tie_break;
use railyard_dataplane::balance::hash::ecmp_hash;
use railyard_dataplane::clock::{Clock, Nanos, VirtualClock};
use railyard_dataplane::fib::{Fib, RouteAction};
use railyard_dataplane::meta::Meta;
use railyard_dataplane::model::{
    DlbMode, DlbModel, EcmpHashModel, InterfaceModel, LoadBalanceModel, NextHopModel, PortId,
    RouteModel, SwitchModel, ThresholdUnit, WredModel, KBYTE,
};
use railyard_dataplane::nexthop::EcmpGroup;
use railyard_dataplane::parse::parse;
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::RingLink;
use railyard_dataplane::port::{IoCounters, Port};
use railyard_dataplane::qos::shaper::{serialisation_ps, wire_bytes};
use railyard_dataplane::stats::{GroupStats, SwitchStats};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Burst, Pool, BURST_SIZE};

/// Virtual time with no event and no progress after which the fabric counts
/// as wedged (pauses that never end, a queue that can never drain).
pub const WEDGE_NS: Nanos = 100_000_000;

/// Frames each direction of a switch-to-switch cable holds.
const RING_CAPACITY: usize = 8192;

/// The DSCP of RoCEv2 traffic in the book's policy.
pub const ROCE_DSCP: u8 = 24;
/// The qos-group (and egress queue) DSCP 24 maps to.
pub const ROCE_QUEUE: usize = 3;
/// ECN codepoint ECT(0).
pub const ECT0: u8 = 0b10;
/// ECN codepoint CE.
pub const CE: u8 = 0b11;

/// Which flow a frame belongs to and where it is in it, as carried in the
/// first 8 payload bytes (`traffic::build`'s sequence field: flow id in the
/// high 32 bits, sequence number in the low 32).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tag {
    /// The flow id.
    pub flow: u32,
    /// The packet's sequence number within its flow, from 0.
    pub seq: u32,
    /// The IP ECN bits as received.
    pub ecn: u8,
}

impl Tag {
    /// The 64-bit value `traffic::build` writes into the payload.
    pub fn payload(flow: u32, seq: u32) -> u64 {
        (u64::from(flow) << 32) | u64::from(seq)
    }

    /// Reads the tag of an IPv4 UDP frame built by `traffic::build` (plain
    /// UDP or RoCEv2, whose payload starts after the 12-byte BTH); `None`
    /// for anything else.
    pub fn decode(frame: &[u8]) -> Option<Tag> {
        if frame.get(12..14)? != [0x08, 0x00] {
            return None;
        }
        let ihl = usize::from(*frame.get(14)? & 0x0f) * 4;
        let ecn = *frame.get(15)? & 0b11;
        if *frame.get(23)? != 17 {
            return None;
        }
        let t = 14 + ihl;
        let dport = u16::from_be_bytes(frame.get(t + 2..t + 4)?.try_into().ok()?);
        let at = t + 8 + if dport == ROCEV2_PORT { 12 } else { 0 };
        let v = u64::from_be_bytes(frame.get(at..at + 8)?.try_into().ok()?);
        Some(Tag {
            flow: (v >> 32) as u32,
            seq: v as u32,
            ecn,
        })
    }
}

/// One frame a host sends: when, which of the host's frame templates, and
/// which flow and sequence number it carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HostTx {
    /// When the host puts it on the wire.
    pub time: Nanos,
    /// Index into the host's templates.
    pub template: u32,
    /// Flow id.
    pub flow: u32,
    /// Sequence number within the flow.
    pub seq: u32,
}

/// A frame a host received from its switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// When the switch transmitted it to the host.
    pub time: Nanos,
    /// Its tag (flow, sequence, ECN bits).
    pub tag: Tag,
    /// Frame length in bytes.
    pub len: u32,
}

/// A frame seen leaving through a tapped cable end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TapRecord {
    /// When the switch transmitted it.
    pub time: Nanos,
    /// Its tag.
    pub tag: Tag,
}

/// What a host received, shared with the port that records it.
pub type ArrivalLog = Arc<Mutex<Vec<Arrival>>>;
/// What left through a tapped cable end, shared with the tap.
pub type TapLog = Arc<Mutex<Vec<TapRecord>>>;

/// A host on a switch port: plays a schedule of generated frames and records
/// what it receives. Frames are built when due, so a long run holds only the
/// schedule.
pub struct HostPort {
    name: String,
    templates: Vec<FrameSpec>,
    schedule: Vec<HostTx>,
    next: usize,
    arrivals: ArrivalLog,
    counters: IoCounters,
}

impl HostPort {
    /// A host sending `schedule` (sorted here by time, stably) built from
    /// `templates`; with `nic_mbps`, frames are also spaced so that none
    /// starts before the previous one has left at that line rate, as a NIC
    /// would serialise several flows.
    pub fn new(
        name: &str,
        templates: Vec<FrameSpec>,
        mut schedule: Vec<HostTx>,
        nic_mbps: Option<u32>,
    ) -> Self {
        schedule.sort_by_key(|t| t.time);
        if let Some(mbps) = nic_mbps.filter(|m| *m > 0) {
            let rate = u64::from(mbps) * 1_000_000;
            let mut free_ps = 0u64;
            for tx in &mut schedule {
                let start_ps = (tx.time * 1000).max(free_ps);
                tx.time = start_ps.div_ceil(1000);
                let len = templates
                    .get(tx.template as usize)
                    .map_or(60, |s| s.frame_len);
                free_ps = start_ps + serialisation_ps(wire_bytes(len), rate);
            }
        }
        HostPort {
            name: name.to_string(),
            templates,
            schedule,
            next: 0,
            arrivals: ArrivalLog::default(),
            counters: IoCounters::default(),
        }
    }

    /// The shared list of received frames.
    pub fn arrivals(&self) -> ArrivalLog {
        Arc::clone(&self.arrivals)
    }

    /// The schedule after NIC spacing: the times frames really leave.
    pub fn schedule(&self) -> &[HostTx] {
        &self.schedule
    }

    fn frame(&self, tx: &HostTx) -> Vec<u8> {
        let mut spec = self
            .templates
            .get(tx.template as usize)
            .copied()
            .unwrap_or_else(|| self.templates[0]);
        if let Transport::Roce { psn, .. } = &mut spec.transport {
            *psn = tx.seq & 0x00ff_ffff;
        }
        build(&spec, Tag::payload(tx.flow, tx.seq))
    }
}

impl Port for HostPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            let Some(tx) = self.schedule.get(self.next).copied() else {
                break;
            };
            if tx.time > now {
                break;
            }
            self.next += 1;
            match pool.alloc_from(&self.frame(&tx)) {
                Some(mut p) => {
                    p.timestamp = tx.time;
                    burst.push(p);
                    n += 1;
                }
                None => self.counters.rx_dropped += 1,
            }
        }
        self.counters.rx_frames += n as u64;
        n
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> usize {
        let n = burst.len();
        if let Ok(mut log) = self.arrivals.lock() {
            for p in burst.iter() {
                if let Some(tag) = Tag::decode(p.data()) {
                    log.push(Arrival {
                        time: now,
                        tag,
                        len: p.len() as u32,
                    });
                }
            }
        }
        burst.clear();
        self.counters.tx_frames += n as u64;
        n
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("host {}", self.name)
    }

    fn exhausted(&self) -> bool {
        self.next >= self.schedule.len()
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        self.schedule.get(self.next).map(|t| t.time)
    }
}

/// A cable end that records the tag of every frame its switch sends
/// through it, to tell which path each packet took.
pub struct TapPort {
    inner: Box<dyn Port>,
    log: TapLog,
    scratch: Vec<Option<Tag>>,
}

impl TapPort {
    /// Taps `inner`; returns the port and its log.
    pub fn new(inner: Box<dyn Port>) -> (Self, TapLog) {
        let log = TapLog::default();
        (
            TapPort {
                inner,
                log: Arc::clone(&log),
                scratch: Vec::with_capacity(BURST_SIZE),
            },
            log,
        )
    }
}

impl Port for TapPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        self.inner.rx_burst(pool, burst, now)
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> usize {
        // Accepted packets leave the burst, so read their tags first.
        self.scratch.clear();
        self.scratch
            .extend(burst.iter().map(|p| Tag::decode(p.data())));
        let n = self.inner.tx_burst(burst, now);
        if let Ok(mut log) = self.log.lock() {
            log.extend(self.scratch[..n].iter().flatten().map(|tag| TapRecord {
                time: now,
                tag: *tag,
            }));
        }
        n
    }

    fn link_up(&self) -> bool {
        self.inner.link_up()
    }

    fn mac(&self) -> Option<MacAddr> {
        self.inner.mac()
    }

    fn io_counters(&self) -> IoCounters {
        self.inner.io_counters()
    }

    fn describe(&self) -> String {
        format!("tap {}", self.inner.describe())
    }

    fn exhausted(&self) -> bool {
        self.inner.exhausted()
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        self.inner.next_rx_time()
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Where a port is: switch number and port number.
pub type Attach = (usize, PortId);

/// Collects switches, cables and hosts, then builds a [`Fabric`].
pub struct FabricBuilder {
    models: Vec<SwitchModel>,
    ports: Vec<Vec<Option<Box<dyn Port>>>>,
    hosts: Vec<(Attach, ArrivalLog)>,
    taps: Vec<(Attach, TapLog)>,
    pool_buffers: usize,
}

impl FabricBuilder {
    /// An empty fabric whose switches share one pool of `pool_buffers`
    /// packet buffers (packets cross cables, so they cross pools too).
    pub fn new(pool_buffers: usize) -> Self {
        FabricBuilder {
            models: Vec::new(),
            ports: Vec::new(),
            hosts: Vec::new(),
            taps: Vec::new(),
            pool_buffers,
        }
    }

    /// Adds a switch; returns its number.
    pub fn switch(&mut self, model: SwitchModel) -> usize {
        self.ports
            .push((0..model.interfaces.len()).map(|_| None).collect());
        self.models.push(model);
        self.models.len() - 1
    }

    fn place(&mut self, at: Attach, port: Box<dyn Port>) {
        let slot = &mut self.ports[at.0][usize::from(at.1)];
        assert!(slot.is_none(), "port {at:?} is already connected");
        *slot = Some(port);
    }

    /// Joins two switch ports with a cable; with `tap`, what each end sends
    /// is recorded (logs in [`Fabric::taps`], `a`'s first).
    pub fn cable(&mut self, a: Attach, b: Attach, tap: bool) {
        let name = format!("{}:{}-{}:{}", a.0, a.1, b.0, b.1);
        let (ea, eb, _) = RingLink::pair(&name, RING_CAPACITY);
        for (at, end) in [(a, ea), (b, eb)] {
            if tap {
                let (t, log) = TapPort::new(Box::new(end));
                self.taps.push((at, log));
                self.place(at, Box::new(t));
            } else {
                self.place(at, Box::new(end));
            }
        }
    }

    /// Attaches a host; returns its number (its index in
    /// [`FabricRun::arrivals`]).
    pub fn host(&mut self, at: Attach, port: HostPort) -> usize {
        self.hosts.push((at, port.arrivals()));
        self.place(at, Box::new(port));
        self.hosts.len() - 1
    }

    /// Builds every switch.
    ///
    /// # Panics
    ///
    /// When a model has routes the switch cannot install: a fabric with a
    /// broken plan would measure nothing meaningful.
    pub fn build(self) -> Fabric {
        let pool = Pool::new(self.pool_buffers);
        let switches = self
            .models
            .iter()
            .zip(self.ports)
            .map(|(m, ports)| {
                let (sw, warnings) = Switch::new(m, ports, pool.clone());
                assert!(warnings.is_empty(), "{}: {warnings:?}", m.hostname);
                sw
            })
            .collect();
        Fabric {
            switches,
            clock: VirtualClock::new(0),
            hosts: self.hosts,
            taps: self.taps,
        }
    }
}

/// Empties a shared log (a poisoned one reads as empty).
fn take<T>(log: &Arc<Mutex<Vec<T>>>) -> Result<Vec<T>, ()> {
    log.lock()
        .map(|mut l| std::mem::take(&mut *l))
        .map_err(|_| ())
}

/// Switches wired together, ready to run.
pub struct Fabric {
    switches: Vec<Switch>,
    clock: VirtualClock,
    hosts: Vec<(Attach, ArrivalLog)>,
    taps: Vec<(Attach, TapLog)>,
}

/// What a fabric run produced.
#[derive(Debug, Clone)]
pub struct FabricRun {
    /// Each switch's counters, in the order they were added.
    pub stats: Vec<SwitchStats>,
    /// What each host received, in arrival order.
    pub arrivals: Vec<Vec<Arrival>>,
    /// Each tapped cable end and what left through it.
    pub taps: Vec<(Attach, Vec<TapRecord>)>,
    /// Virtual time when the last packet had left.
    pub end_ns: Nanos,
    /// Times the loop found queued packets but no next event and had to
    /// step time blindly (expected 0 without PFC).
    pub blind_steps: u64,
}

impl Fabric {
    /// Runs until every host has sent its schedule and every queue and
    /// cable is empty.
    ///
    /// # Panics
    ///
    /// When nothing moves and no event is due for [`WEDGE_NS`] of virtual
    /// time while packets are still queued.
    pub fn run(mut self) -> FabricRun {
        let mut stuck_since: Option<Nanos> = None;
        let mut blind_steps = 0;
        loop {
            let now = self.clock.now();
            let mut work = 0;
            for s in &mut self.switches {
                work += s.poll(now);
            }
            if work > 0 {
                stuck_since = None;
                continue;
            }
            let next = self
                .switches
                .iter()
                .flat_map(|s| [s.next_rx_time(), s.next_departure()])
                .flatten()
                .min();
            match next {
                Some(t) if t > now => {
                    stuck_since = None;
                    self.clock.advance_to(t);
                }
                None if self.switches.iter().all(Switch::idle) => break,
                _ => {
                    let since = *stuck_since.get_or_insert(now);
                    assert!(now - since < WEDGE_NS, "the fabric is wedged at {now} ns");
                    blind_steps += 1;
                    self.clock.advance_by(1_000);
                }
            }
        }
        for s in &mut self.switches {
            // In-memory backends have nothing to flush.
            let _ = s.finish();
        }
        FabricRun {
            stats: self.switches.iter().map(Switch::stats).collect(),
            arrivals: self
                .hosts
                .iter()
                .map(|(_, l)| take(l).unwrap_or_default())
                .collect(),
            taps: self
                .taps
                .iter()
                .map(|(at, l)| (*at, take(l).unwrap_or_default()))
                .collect(),
            end_ns: self.clock.now(),
            blind_steps,
        }
    }
}

// ----- the two-tier topology ---------------------------------------------

/// How the leaves spread traffic over their uplinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Balance {
    /// Static hash (resilient buckets).
    Ecmp,
    /// Flowlet DLB over the uplinks.
    Flowlet,
    /// Per-packet DLB over the uplinks.
    PerPacket,
}

impl Balance {
    /// Every mode, in the order a comparison prints them.
    pub const ALL: [Balance; 3] = [Balance::Ecmp, Balance::Flowlet, Balance::PerPacket];

    /// The name `GroupStats::mode` uses.
    pub fn name(self) -> &'static str {
        match self {
            Balance::Ecmp => "ecmp",
            Balance::Flowlet => "flowlet",
            Balance::PerPacket => "per-packet",
        }
    }
}

/// A host: leaf number and host number on that leaf, both from 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HostId {
    /// The leaf (rail switch) it hangs off.
    pub leaf: usize,
    /// Its port on that leaf.
    pub host: usize,
}

impl HostId {
    /// Host `host` of leaf `leaf`.
    pub fn new(leaf: usize, host: usize) -> Self {
        HostId { leaf, host }
    }
}

/// Elephant or mouse: only changes how results are summarised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowKind {
    /// A long, fast flow (bursts of a collective).
    Elephant,
    /// A short flow of a few packets.
    Mouse,
}

/// A RoCEv2-like flow between two hosts: bursts of back-to-back frames at a
/// rate, all with one UDP source port (the entropy ECMP hashes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flow {
    /// Sender.
    pub src: HostId,
    /// Receiver.
    pub dst: HostId,
    /// UDP source port: the flow's entropy.
    pub entropy: u16,
    /// Frame length without FCS.
    pub frame_len: usize,
    /// Sending rate within a burst, in Mb/s (wire bytes, as the shaper counts).
    pub rate_mbps: u32,
    /// Frames per burst.
    pub packets_per_burst: u32,
    /// When each burst starts.
    pub burst_starts: Vec<Nanos>,
    /// Elephant or mouse.
    pub kind: FlowKind,
}

impl Flow {
    /// An elephant: `bursts` bursts of `packets_per_burst` frames of
    /// `frame_len` bytes at `rate_mbps`, the first at `start`, each next one
    /// `gap_ns` after the previous one's last frame (gap 0: one long stream).
    #[allow(clippy::too_many_arguments)] // reason: a flow is all of these, named at the call
    pub fn elephant(
        src: HostId,
        dst: HostId,
        entropy: u16,
        frame_len: usize,
        rate_mbps: u32,
        start: Nanos,
        packets_per_burst: u32,
        bursts: u32,
        gap_ns: Nanos,
    ) -> Flow {
        let mut f = Flow {
            src,
            dst,
            entropy,
            frame_len,
            rate_mbps,
            packets_per_burst,
            burst_starts: Vec::new(),
            kind: FlowKind::Elephant,
        };
        let period = f.burst_ns() + gap_ns;
        f.burst_starts = (0..u64::from(bursts)).map(|b| start + b * period).collect();
        f
    }

    /// A mouse: `packets` frames of `frame_len` bytes at `rate_mbps` from `start`.
    pub fn mouse(
        src: HostId,
        dst: HostId,
        entropy: u16,
        frame_len: usize,
        rate_mbps: u32,
        start: Nanos,
        packets: u32,
    ) -> Flow {
        Flow {
            src,
            dst,
            entropy,
            frame_len,
            rate_mbps,
            packets_per_burst: packets,
            burst_starts: vec![start],
            kind: FlowKind::Mouse,
        }
    }

    /// Frames in the whole flow.
    pub fn packets(&self) -> u64 {
        u64::from(self.packets_per_burst) * self.burst_starts.len() as u64
    }

    fn spacing_ps(&self) -> u64 {
        serialisation_ps(
            wire_bytes(self.frame_len),
            u64::from(self.rate_mbps.max(1)) * 1_000_000,
        )
    }

    /// How long one burst takes to send, from its first frame's start to its
    /// last frame's end.
    pub fn burst_ns(&self) -> Nanos {
        (u64::from(self.packets_per_burst) * self.spacing_ps()).div_ceil(1000)
    }

    /// Intended send time of every frame, with its sequence number.
    fn sends(&self) -> impl Iterator<Item = (Nanos, u32)> + '_ {
        let spacing = self.spacing_ps();
        let n = self.packets_per_burst;
        self.burst_starts
            .iter()
            .enumerate()
            .flat_map(move |(b, s)| {
                (0..n).map(move |i| (s + (u64::from(i) * spacing) / 1000, b as u32 * n + i))
            })
    }
}

/// A rail/spine topology of railyard switches.
///
/// Leaf `l` has hosts on ports `0..hosts_per_leaf` (host `h` in
/// 10.{l+1}.{h+1}.0/24, the leaf .1, the host .2) and uplinks on the next
/// `spines` ports (uplink `s` in 172.{16+s}.{l}.0/24, leaf .1, spine .2).
/// Spine `s` has leaf `l` on port `l` and routes 10.{l+1}.0.0/16 there.
/// Leaves route every remote host's /24 through one ECMP group over all
/// uplinks. All neighbours are static ARP entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwoTier {
    /// Leaves (rail switches).
    pub leaves: usize,
    /// Spines.
    pub spines: usize,
    /// Hosts on each leaf.
    pub hosts_per_leaf: usize,
    /// Speed of host ports (and of the hosts' NICs).
    pub host_speed_mbps: u32,
    /// Speed of leaf–spine links.
    pub uplink_speed_mbps: u32,
    /// WRED with ECN on the RoCE queue (the book's 150–3000 KB, 7 %).
    pub ecn: bool,
    /// The leaves' balancing mode.
    pub balance: Balance,
    /// DLB settings for the flowlet and per-packet modes (ports and mode are
    /// filled in per leaf).
    pub dlb: DlbModel,
    /// The leaves' ECMP hash.
    pub hash: EcmpHashModel,
    /// Egress buffer of every port.
    pub buffer_bytes: u64,
    /// Packet buffers shared by the fabric.
    pub pool_buffers: usize,
}

impl TwoTier {
    /// `leaves` × `spines` with `hosts_per_leaf` hosts each, everything at
    /// 100 Gb/s, ECN on, plain ECMP, default DLB settings.
    ///
    /// # Panics
    ///
    /// Outside the addressing plan: more than 16 spines, 250 leaves or 250
    /// hosts per leaf.
    pub fn new(leaves: usize, spines: usize, hosts_per_leaf: usize) -> Self {
        assert!(spines <= 16 && leaves <= 250 && hosts_per_leaf <= 250);
        TwoTier {
            leaves,
            spines,
            hosts_per_leaf,
            host_speed_mbps: 100_000,
            uplink_speed_mbps: 100_000,
            ecn: true,
            balance: Balance::Ecmp,
            dlb: DlbModel::default(),
            hash: EcmpHashModel::default(),
            buffer_bytes: railyard_dataplane::model::DEFAULT_BUFFER_BYTES,
            pool_buffers: 16_384,
        }
    }

    /// The same topology in another balancing mode.
    pub fn with_balance(&self, balance: Balance) -> Self {
        TwoTier {
            balance,
            ..self.clone()
        }
    }

    /// A host's address.
    pub fn host_ip(&self, h: HostId) -> Ipv4Addr {
        Ipv4Addr::new(10, h.leaf as u8 + 1, h.host as u8 + 1, 2)
    }

    /// A host's MAC.
    pub fn host_mac(&self, h: HostId) -> MacAddr {
        MacAddr([2, 0, 0, h.leaf as u8 + 1, h.host as u8 + 1, 2])
    }

    /// The prefix key of the route (and ECMP group) towards a host, as in
    /// `SwitchStats::load_balancing`.
    pub fn host_prefix(&self, h: HostId) -> String {
        format!("10.{}.{}.0/24", h.leaf + 1, h.host + 1)
    }

    /// MAC of leaf `l`'s port `p`.
    pub fn leaf_mac(&self, l: usize, p: usize) -> MacAddr {
        MacAddr([2, 0xaa, 1, l as u8, 0, p as u8 + 1])
    }

    /// MAC of spine `s`'s port `p`.
    pub fn spine_mac(&self, s: usize, p: usize) -> MacAddr {
        MacAddr([2, 0xaa, 2, s as u8, 0, p as u8 + 1])
    }

    /// The leaf port of uplink `s` (towards spine `s`).
    pub fn uplink_port(&self, s: usize) -> PortId {
        (self.hosts_per_leaf + s) as PortId
    }

    /// The interface name of uplink `s` on every leaf.
    pub fn uplink_name(&self, s: usize) -> String {
        format!("Ethernet1/{}", self.hosts_per_leaf + s + 1)
    }

    fn link_ip(&self, l: usize, s: usize, end: u8) -> Ipv4Addr {
        Ipv4Addr::new(172, 16 + s as u8, l as u8, end)
    }

    /// A routed port with the book's RoCEv2 QoS: DSCP 24 → qos-group 3,
    /// queues 0 and 3 sharing what is left half and half, WRED with ECN on
    /// queue 3 when asked.
    fn port(&self, name: String, mac: MacAddr, ip: Ipv4Addr, speed: u32) -> InterfaceModel {
        let mut m = InterfaceModel::new(&name, mac);
        m.ipv4.push((ip, 24));
        m.speed_mbps = Some(speed);
        m.buffer_bytes = self.buffer_bytes;
        m.dscp_to_qos_group[usize::from(ROCE_DSCP)] = ROCE_QUEUE as u8;
        m.queues[0].bandwidth_remaining_percent = Some(50);
        m.queues[ROCE_QUEUE].bandwidth_remaining_percent = Some(50);
        if self.ecn {
            m.queues[ROCE_QUEUE].wred = Some(WredModel {
                min: 150 * KBYTE,
                max: 3000 * KBYTE,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 7,
                weight: 0,
                ecn: true,
            });
        }
        m
    }

    /// Leaf `l`'s model.
    pub fn leaf_model(&self, l: usize) -> SwitchModel {
        let mut interfaces = Vec::new();
        for h in 0..self.hosts_per_leaf {
            let host = HostId::new(l, h);
            let mut ip = self.host_ip(host).octets();
            ip[3] = 1;
            let mut m = self.port(
                format!("Ethernet1/{}", h + 1),
                self.leaf_mac(l, h),
                Ipv4Addr::from(ip),
                self.host_speed_mbps,
            );
            m.static_arp.push((self.host_ip(host), self.host_mac(host)));
            interfaces.push(m);
        }
        for s in 0..self.spines {
            let p = usize::from(self.uplink_port(s));
            let mut m = self.port(
                self.uplink_name(s),
                self.leaf_mac(l, p),
                self.link_ip(l, s, 1),
                self.uplink_speed_mbps,
            );
            m.static_arp
                .push((self.link_ip(l, s, 2), self.spine_mac(s, l)));
            interfaces.push(m);
        }
        let next_hops: Vec<NextHopModel> = (0..self.spines)
            .map(|s| NextHopModel::Gateway {
                addr: IpAddr::V4(self.link_ip(l, s, 2)),
                port: Some(self.uplink_port(s)),
            })
            .collect();
        let routes = (0..self.leaves)
            .filter(|r| *r != l)
            .flat_map(|r| (0..self.hosts_per_leaf).map(move |h| HostId::new(r, h)))
            .map(|h| {
                let mut net = self.host_ip(h).octets();
                net[3] = 0;
                RouteModel {
                    prefix: IpAddr::V4(Ipv4Addr::from(net)),
                    len: 24,
                    next_hops: next_hops.clone(),
                }
            })
            .collect();
        let dlb = match self.balance {
            Balance::Ecmp => None,
            Balance::Flowlet | Balance::PerPacket => Some(DlbModel {
                ports: (0..self.spines).map(|s| self.uplink_port(s)).collect(),
                mode: if self.balance == Balance::Flowlet {
                    DlbMode::Flowlet
                } else {
                    DlbMode::PerPacket
                },
                ..self.dlb.clone()
            }),
        };
        SwitchModel {
            hostname: format!("leaf{l}"),
            interfaces,
            routes,
            load_balance: LoadBalanceModel {
                hash: self.hash,
                dlb,
            },
            ..SwitchModel::default()
        }
    }

    /// Spine `s`'s model.
    pub fn spine_model(&self, s: usize) -> SwitchModel {
        let interfaces = (0..self.leaves)
            .map(|l| {
                let mut m = self.port(
                    format!("Ethernet1/{}", l + 1),
                    self.spine_mac(s, l),
                    self.link_ip(l, s, 2),
                    self.uplink_speed_mbps,
                );
                m.static_arp.push((
                    self.link_ip(l, s, 1),
                    self.leaf_mac(l, usize::from(self.uplink_port(s))),
                ));
                m
            })
            .collect();
        let routes = (0..self.leaves)
            .map(|l| RouteModel {
                prefix: IpAddr::V4(Ipv4Addr::new(10, l as u8 + 1, 0, 0)),
                len: 16,
                next_hops: vec![NextHopModel::Gateway {
                    addr: IpAddr::V4(self.link_ip(l, s, 1)),
                    port: Some(l as PortId),
                }],
            })
            .collect();
        SwitchModel {
            hostname: format!("spine{s}"),
            interfaces,
            routes,
            ..SwitchModel::default()
        }
    }

    /// The frame template of flow `id`: RoCEv2 RDMA WRITE from `src` to
    /// `dst` with DSCP 24, ECT(0), UDP source port = the entropy.
    pub fn template(&self, flow: &Flow, id: u32) -> FrameSpec {
        let mut s = FrameSpec::udp(
            self.host_mac(flow.src),
            self.leaf_mac(flow.src.leaf, flow.src.host),
            IpAddr::V4(self.host_ip(flow.src)),
            IpAddr::V4(self.host_ip(flow.dst)),
        );
        s.dscp = ROCE_DSCP;
        s.ecn = ECT0;
        s.src_port = flow.entropy;
        s.transport = Transport::Roce {
            opcode: BTH_RC_WRITE_ONLY,
            dest_qp: 0x100 + id,
            psn: 0,
        };
        s.frame_len = flow.frame_len;
        s
    }

    /// The first frame of `flow`, as it enters its leaf (for hashing it the
    /// way the leaf will).
    pub fn first_frame(&self, flow: &Flow) -> Vec<u8> {
        build(&self.template(flow, 0), Tag::payload(0, 0))
    }

    /// The uplink (0-based) plain ECMP gives `flow` on its source leaf.
    ///
    /// # Panics
    ///
    /// When the flow's frame does not parse or its destination is not
    /// behind an ECMP group (a flow inside one leaf).
    pub fn ecmp_uplink(&self, flow: &Flow) -> usize {
        let (group, hash) = self.group_and_hash(flow);
        usize::from(group.hops()[group.member(hash)].port) - self.hosts_per_leaf
    }

    /// The uplink (0-based) a flowlet of `flow` starts on under DLB when
    /// every uplink is equally good (an idle fabric).
    ///
    /// # Panics
    ///
    /// As [`ecmp_uplink`](Self::ecmp_uplink).
    pub fn idle_flowlet_uplink(&self, flow: &Flow) -> usize {
        let (group, hash) = self.group_and_hash(flow);
        let n = group.hops().len() as u32;
        let k = (flowlet_tie_break(hash) % n) as usize;
        usize::from(group.hops()[k].port) - self.hosts_per_leaf
    }

    /// The ECMP group a flow's source leaf routes it through, and its hash.
    fn group_and_hash(&self, flow: &Flow) -> (EcmpGroup, u32) {
        let model = self.leaf_model(flow.src.leaf);
        let (fib, _) = Fib::build(&model);
        let frame = self.first_frame(flow);
        let mut meta = Meta::default();
        assert!(
            parse(&frame, &mut meta).is_ok(),
            "flow frame does not parse"
        );
        let Some(RouteAction::Forward(group)) = fib.lookup(IpAddr::V4(self.host_ip(flow.dst)))
        else {
            panic!("{:?} is not behind an ECMP group", flow.dst);
        };
        let hash = ecmp_hash(&frame, &meta, &model.load_balance.hash);
        (group.clone(), hash)
    }

    /// Runs `flows` through the fabric and summarises what happened.
    ///
    /// # Panics
    ///
    /// When a flow names a host outside the topology, or stays inside one
    /// leaf (that traffic never meets the balancer), or the fabric wedges.
    pub fn run(&self, flows: &[Flow]) -> Outcome {
        let mut b = FabricBuilder::new(self.pool_buffers);
        let leaves: Vec<usize> = (0..self.leaves)
            .map(|l| b.switch(self.leaf_model(l)))
            .collect();
        let spines: Vec<usize> = (0..self.spines)
            .map(|s| b.switch(self.spine_model(s)))
            .collect();
        for (l, leaf) in leaves.iter().enumerate() {
            for (s, spine) in spines.iter().enumerate() {
                b.cable((*leaf, self.uplink_port(s)), (*spine, l as PortId), true);
            }
        }
        let mut per_host: BTreeMap<HostId, (Vec<FrameSpec>, Vec<HostTx>)> = BTreeMap::new();
        for (id, f) in flows.iter().enumerate() {
            for h in [f.src, f.dst] {
                assert!(
                    h.leaf < self.leaves && h.host < self.hosts_per_leaf,
                    "flow {id}: no host {h:?}"
                );
            }
            assert_ne!(f.src.leaf, f.dst.leaf, "flow {id} stays inside its leaf");
            let (templates, sched) = per_host.entry(f.src).or_default();
            let t = templates.len() as u32;
            templates.push(self.template(f, id as u32));
            sched.extend(f.sends().map(|(time, seq)| HostTx {
                time,
                template: t,
                flow: id as u32,
                seq,
            }));
        }
        let mut first_sends: Vec<Vec<Nanos>> = flows
            .iter()
            .map(|f| vec![Nanos::MAX; f.burst_starts.len()])
            .collect();
        for (l, leaf) in leaves.iter().enumerate() {
            for h in 0..self.hosts_per_leaf {
                let id = HostId::new(l, h);
                let (templates, sched) = per_host.remove(&id).unwrap_or_default();
                let port = HostPort::new(
                    &format!("{l}/{h}"),
                    templates,
                    sched,
                    Some(self.host_speed_mbps),
                );
                for tx in port.schedule() {
                    let f = &flows[tx.flow as usize];
                    let burst = (tx.seq / f.packets_per_burst.max(1)) as usize;
                    let first = &mut first_sends[tx.flow as usize][burst];
                    *first = (*first).min(tx.time);
                }
                b.host((*leaf, h as PortId), port);
            }
        }
        let run = b.build().run();
        let flow_results = summarise(flows, &first_sends, &run);
        let mut uplink_log = vec![vec![Vec::new(); self.spines]; self.leaves];
        for ((sw, port), log) in &run.taps {
            if let Some(l) = leaves.iter().position(|x| x == sw) {
                let s = usize::from(*port) - self.hosts_per_leaf;
                uplink_log[l][s] = log.clone();
            }
        }
        let mut stats = run.stats;
        let spine_stats = stats.split_off(self.leaves);
        Outcome {
            topology: self.clone(),
            leaves: stats,
            spines: spine_stats,
            flows: flow_results,
            uplink_log,
            end_ns: run.end_ns,
            blind_steps: run.blind_steps,
        }
    }
}

/// One flow's fate at its receiver.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlowResult {
    /// Frames sent.
    pub sent: u64,
    /// Frames received.
    pub received: u64,
    /// Frames that arrived with a sequence number below one already seen.
    pub reordered: u64,
    /// Frames received with CE set.
    pub ce: u64,
    /// When its first frame left the host.
    pub first_send: Nanos,
    /// When its last frame arrived, if any did.
    pub last_arrival: Option<Nanos>,
    /// Per burst: last arrival minus the burst's first send (`None` when
    /// none of the burst arrived).
    pub burst_completion: Vec<Option<Nanos>>,
}

impl FlowResult {
    /// First send to last arrival (over the frames that arrived).
    pub fn completion(&self) -> Option<Nanos> {
        self.last_arrival.map(|t| t - self.first_send)
    }
}

fn summarise(flows: &[Flow], first_sends: &[Vec<Nanos>], run: &FabricRun) -> Vec<FlowResult> {
    let mut out: Vec<FlowResult> = flows
        .iter()
        .zip(first_sends)
        .map(|(f, firsts)| FlowResult {
            sent: f.packets(),
            first_send: firsts.iter().copied().min().unwrap_or(0),
            burst_completion: vec![None; firsts.len()],
            ..FlowResult::default()
        })
        .collect();
    let mut max_seen: Vec<Option<u32>> = vec![None; flows.len()];
    let mut burst_last: Vec<Vec<Option<Nanos>>> = flows
        .iter()
        .map(|f| vec![None; f.burst_starts.len()])
        .collect();
    for arrivals in &run.arrivals {
        for a in arrivals {
            let id = a.tag.flow as usize;
            let (Some(f), Some(r)) = (flows.get(id), out.get_mut(id)) else {
                continue;
            };
            r.received += 1;
            if a.tag.ecn == CE {
                r.ce += 1;
            }
            match max_seen[id] {
                Some(m) if a.tag.seq < m => r.reordered += 1,
                _ => max_seen[id] = Some(a.tag.seq),
            }
            r.last_arrival = Some(r.last_arrival.map_or(a.time, |t| t.max(a.time)));
            let b = (a.tag.seq / f.packets_per_burst.max(1)) as usize;
            if let Some(slot) = burst_last[id].get_mut(b) {
                *slot = Some(slot.map_or(a.time, |t| t.max(a.time)));
            }
        }
    }
    for (id, r) in out.iter_mut().enumerate() {
        r.burst_completion = burst_last[id]
            .iter()
            .zip(&first_sends[id])
            .map(|(last, first)| last.map(|t| t.saturating_sub(*first)))
            .collect();
    }
    out
}

/// What a [`TwoTier`] run showed.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The topology it ran on.
    pub topology: TwoTier,
    /// Each leaf's counters.
    pub leaves: Vec<SwitchStats>,
    /// Each spine's counters.
    pub spines: Vec<SwitchStats>,
    /// Per flow, in the order given.
    pub flows: Vec<FlowResult>,
    /// `[leaf][spine]`: what the leaf sent up that uplink, in order.
    pub uplink_log: Vec<Vec<Vec<TapRecord>>>,
    /// Virtual time when everything had drained.
    pub end_ns: Nanos,
    /// See [`FabricRun::blind_steps`].
    pub blind_steps: u64,
}

impl Outcome {
    /// Bytes leaf `l` transmitted on each uplink (interface counters).
    pub fn uplink_bytes(&self, l: usize) -> Vec<u64> {
        (0..self.topology.spines)
            .map(|s| {
                self.leaves[l]
                    .interfaces
                    .get(&self.topology.uplink_name(s))
                    .map_or(0, |i| i.tx_bytes)
            })
            .collect()
    }

    /// (max − min) / mean of leaf `l`'s uplink bytes over the run (all
    /// uplinks have one speed, so bytes stand for utilisation); 0 when the
    /// leaf sent nothing up.
    pub fn imbalance(&self, l: usize) -> f64 {
        imbalance(&self.uplink_bytes(l))
    }

    /// The largest [`imbalance`](Self::imbalance) of any leaf that sent
    /// traffic up.
    pub fn worst_imbalance(&self) -> f64 {
        (0..self.topology.leaves)
            .map(|l| self.imbalance(l))
            .fold(0.0, f64::max)
    }

    /// Packets of flow `id` leaf `l` sent up each uplink (from the taps).
    pub fn flow_uplinks(&self, l: usize, id: u32) -> Vec<u64> {
        self.uplink_log[l]
            .iter()
            .map(|log| log.iter().filter(|r| r.tag.flow == id).count() as u64)
            .collect()
    }

    /// The uplink each packet of flow `id` took out of leaf `l`, by
    /// sequence number (`None`: not seen on any uplink).
    pub fn flow_path(&self, l: usize, id: u32) -> Vec<Option<usize>> {
        let mut path = Vec::new();
        for (s, log) in self.uplink_log[l].iter().enumerate() {
            for r in log.iter().filter(|r| r.tag.flow == id) {
                let i = r.tag.seq as usize;
                if path.len() <= i {
                    path.resize(i + 1, None);
                }
                path[i] = Some(s);
            }
        }
        path
    }

    /// Leaf `l`'s group towards host `dst`.
    pub fn group(&self, l: usize, dst: HostId) -> Option<&GroupStats> {
        self.leaves[l]
            .load_balancing
            .get(&self.topology.host_prefix(dst))
    }

    /// Every group of every leaf.
    pub fn groups(&self) -> impl Iterator<Item = &GroupStats> {
        self.leaves.iter().flat_map(|s| s.load_balancing.values())
    }

    /// Drops by reason over every switch (reasons with none left out).
    pub fn drops(&self) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for s in self.leaves.iter().chain(&self.spines) {
            for i in s.interfaces.values() {
                for (r, n) in &i.drops {
                    if *n > 0 {
                        *out.entry(r.clone()).or_insert(0) += n;
                    }
                }
            }
        }
        out
    }

    /// All drops over every switch.
    pub fn total_drops(&self) -> u64 {
        self.drops().values().sum()
    }

    /// Packets the queues of every switch marked CE.
    pub fn ecn_marked(&self) -> u64 {
        self.leaves
            .iter()
            .chain(&self.spines)
            .flat_map(|s| s.interfaces.values())
            .flat_map(|i| &i.queues)
            .map(|q| q.ecn_marked)
            .sum()
    }

    /// Frames receivers saw with CE set.
    pub fn ce_received(&self) -> u64 {
        self.flows.iter().map(|f| f.ce).sum()
    }

    /// Frames receivers saw out of order, over every flow.
    pub fn reordered(&self) -> u64 {
        self.flows.iter().map(|f| f.reordered).sum()
    }
}

/// (max − min) / mean of `v`; 0 for an empty or all-zero `v`.
pub fn imbalance(v: &[u64]) -> f64 {
    let (Some(max), Some(min)) = (v.iter().max(), v.iter().min()) else {
        return 0.0;
    };
    let sum: u64 = v.iter().sum();
    if sum == 0 {
        return 0.0;
    }
    let mean = sum as f64 / v.len() as f64;
    (max - min) as f64 / mean
}

/// A small deterministic generator (SplitMix64), so scenarios are the same
/// on every run without a dependency.
#[derive(Debug, Clone)]
pub struct SplitMix(u64);

impl SplitMix {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }
}

/// The value at quantile `q` (0..=1) of `v` (sorted here); `None` when empty.
pub fn percentile(v: &mut [Nanos], q: f64) -> Option<Nanos> {
    if v.is_empty() {
        return None;
    }
    v.sort_unstable();
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v.get(i.min(v.len() - 1)).copied()
}
