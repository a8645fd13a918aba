//! Virtual-time replay: traces in, a switch in the middle, pcaps and counters out.
//!
//! Time jumps from one input timestamp to the next, so a trace of an hour
//! replays as fast as the pipeline can go and gives the same result every
//! time. At the end every queue is drained before the summary is taken.
//!
//! By default every event (a frame's arrival, a departure) gets a poll of
//! its own at its exact time. With a poll interval the switch polls as a
//! live worker does: at least that much virtual time apart, receiving
//! whatever arrived since as one burst and sending what the emulated wire
//! allows by then. On a dense trace that means far fewer, fuller polls,
//! and a frame leaves at most about one interval later than in the exact
//! replay.

pub mod cli;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crossbeam_queue::ArrayQueue;
use railyard_dataplane::capture::{drop_comment, CaptureRing, Direction};
use railyard_dataplane::clock::{Clock, Nanos, VirtualClock};
use railyard_dataplane::fib::FibWarning;
use railyard_dataplane::model::SwitchModel;
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::pcap::ng::{FLAGS_INBOUND, FLAGS_OUTBOUND};
use railyard_dataplane::port::pcap::{
    CaptureInterface, NgCapture, PcapPort, PcapSink, PcapSource, TraceOptions,
};
use railyard_dataplane::port::upstream::PfcUpstream;
use railyard_dataplane::port::Port;
use railyard_dataplane::stats::SwitchStats;
use railyard_dataplane::{PacketBuf, Pool};
use serde::{Deserialize, Serialize};

use crate::lldp::runner::{pfc_overrides, with_pfc_overrides};
use crate::lldp::{Agent, AgentConfig, LldpSnapshot};
use crate::replay_plot::{PlotData, PlotSampler};

/// Virtual time allowed for queues that cannot drain on their own (a
/// paused queue, a backend refusing frames) once no input frame or
/// departure is due.
pub const DRAIN_LIMIT: Nanos = 10_000_000_000;
/// LLDP frames one poll may hand the replay's agent; more are
/// `punt_queue_full` drops.
const LLDP_PUNT_RING: usize = 1024;
/// Step by which virtual time moves while queues are stuck and nothing is due.
const DRAIN_STEP: Nanos = 1_000;
/// Polls between two looks at the wall clock for `progress`: a poll often
/// carries a single frame, and reading the clock every time costs as much as
/// a good part of the frame's own processing.
const PROGRESS_CHECK_POLLS: u32 = 1024;

/// What a replay did.
#[derive(Debug, Clone)]
pub struct ReplayReport {
    /// Counters at the end.
    pub stats: SwitchStats,
    /// Virtual time from the first input frame to the end of the drain.
    pub virtual_ns: Nanos,
    /// Wall-clock time the replay took.
    pub wall: std::time::Duration,
    /// Polls of the switch: with one frame per poll, per-poll costs set
    /// the replay's speed (see [`ReplayOptions::poll_interval`]).
    pub polls: u64,
    /// Routes that could not be installed.
    pub warnings: Vec<FibWarning>,
    /// What the LLDP agent made of the LLDPDUs in the traces (neighbours,
    /// DCBX, counters), when the replay ran one.
    pub lldp: Option<LldpSnapshot>,
    /// The samples for `--plot`, when [`ReplayOptions::plot_every`] asked
    /// for them.
    pub plot: Option<PlotData>,
    /// What the drop capture wrote, when [`ReplayOptions::capture_drops`]
    /// asked for one.
    pub drop_capture: Option<DropCaptureCounts>,
}

/// What a replay's drop capture did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DropCaptureCounts {
    /// Dropped frames written to the pcapng.
    pub written: u64,
    /// Dropped frames that found the capture ring full (more than
    /// [`DROP_RING`] in one poll) and are only counted.
    pub overflow: u64,
}

/// Dropped frames one poll of a replay may capture; the ring is emptied
/// into the pcapng after every poll.
pub const DROP_RING: usize = 8192;

/// Writes what the switch's drop capture took into the replay's pcapng:
/// each frame on the interface of the port that counted the drop, inbound
/// or outbound, with the comment `dropped: REASON`.
struct DropWriter {
    ring: Arc<CaptureRing>,
    cap: NgCapture,
    epoch: u64,
    written: u64,
}

impl DropWriter {
    fn drain(&mut self) {
        while let Some(c) = self.ring.pop() {
            let flags = match c.dir {
                Direction::Rx => FLAGS_INBOUND,
                Direction::Tx => FLAGS_OUTBOUND,
            };
            let comment = c.reason.map(drop_comment);
            let ts = self.epoch.saturating_add(c.at);
            let data = &c.data;
            if self
                .cap
                .write(u32::from(c.port), ts, data, flags, comment.as_deref())
            {
                self.written += 1;
            }
            self.ring.recycle(c);
        }
    }

    fn counts(&self) -> DropCaptureCounts {
        DropCaptureCounts {
            written: self.written,
            overflow: self.ring.overflow(),
        }
    }
}

/// How a replay runs.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    /// Replay the traces unchanged instead of holding back the priorities
    /// the switch pauses (see [`PfcUpstream`]).
    pub open_loop: bool,
    /// Least virtual time between two polls; 0 polls at every event's
    /// exact time. See the module documentation.
    pub poll_interval: Nanos,
    /// A damaged or truncated record ends its trace there, counted as a
    /// `capture_damaged` drop, instead of failing the replay.
    pub stop_at_damage: bool,
    /// Run the LLDP agent of this configuration on the replay's clock (see
    /// [`ReplayLldp`]); `None` drops LLDP frames as `local_unhandled`.
    pub lldp: Option<AgentConfig>,
    /// How the transmitted frames are written.
    pub out_format: OutFormat,
    /// Sample the queues and groups every this many virtual nanoseconds
    /// for pictures (see [`crate::replay_plot`]); `None` samples nothing.
    pub plot_every: Option<Nanos>,
    /// With [`OutFormat::Pcapng`]: write every frame the switch dropped
    /// into the pcapng too, with its reason as the packet's comment.
    pub capture_drops: bool,
}

/// How a replay writes what the switch transmits.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutFormat {
    /// One classic pcap per transmitting interface ([`output_path`]).
    #[default]
    #[value(help = "One classic pcap per transmitting interface")]
    Pcap,
    /// One pcapng file, [`PCAPNG_FILE`] in the output directory, with an
    /// interface per configured port named as railyard names it, so
    /// Wireshark shows every port (a silent one too) under its own name
    /// and in the configuration's order.
    #[value(help = "One pcapng file with an interface per configured port")]
    Pcapng,
}

/// The file a [`OutFormat::Pcapng`] replay writes in its output directory.
pub const PCAPNG_FILE: &str = "railyard.pcapng";

/// The LLDP agent of a replay. It hears the LLDPDUs in the traces at their
/// times on the virtual clock, so neighbours, their ageing and DCBX
/// (including a `priority-flow-control mode auto` port coming on once its
/// peer agrees) are what a live switch would make of the same frames. It
/// sends nothing: a recorded peer cannot answer, and its own LLDPDUs would
/// only add frames to the output captures.
pub struct ReplayLldp {
    agent: Agent,
    punt: Arc<ArrayQueue<PacketBuf>>,
    model: SwitchModel,
    applied: Vec<Option<u8>>,
}

impl ReplayLldp {
    /// An agent for `model` (with `cfg`, transmit off on every port) that
    /// `sw` punts its LLDP frames to from now on.
    pub fn attach(mut cfg: AgentConfig, model: &SwitchModel, sw: &mut Switch, now: Nanos) -> Self {
        for p in &mut cfg.ports {
            p.transmit = false;
        }
        let punt = Arc::new(ArrayQueue::new(LLDP_PUNT_RING));
        sw.set_punt_ring(Arc::clone(&punt));
        ReplayLldp {
            agent: Agent::new(cfg, now),
            punt,
            model: model.clone(),
            applied: vec![None; model.interfaces.len()],
        }
    }

    /// Hands the agent what the switch punted, runs its timers, and puts
    /// the PFC set DCBX chose in force on the switch when it changed.
    pub fn step(&mut self, sw: &mut Switch, now: Nanos) {
        while let Some(pkt) = self.punt.pop() {
            self.agent
                .receive(usize::from(pkt.in_port), pkt.data(), now);
        }
        self.agent.poll(now, &mut |_, _| {});
        let oper = pfc_overrides(&self.agent, &self.model);
        if oper != self.applied {
            sw.apply(&with_pfc_overrides(&self.model, &oper));
            self.applied = oper;
        }
    }

    /// When the agent next has something to do (a neighbour ages out).
    pub fn next_deadline(&self) -> Option<Nanos> {
        self.agent.next_deadline()
    }

    /// Neighbours, DCBX and counters as the agent saw them.
    pub fn snapshot(&self) -> LldpSnapshot {
        self.agent.snapshot()
    }
}

/// One input of a replay: a capture received on an interface of the switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trace {
    /// Index of the switch interface (in the model) the frames arrive on.
    pub port: usize,
    /// The pcap or pcapng file.
    pub path: PathBuf,
    /// Which interface of a multi-interface pcapng capture to replay.
    pub interface: CaptureInterface,
}

impl Trace {
    /// Reads the `FILE[@N|@NAME]` of `--pcap INTERFACE=FILE`: a suffix
    /// `@N` or `@NAME` picks an interface of a pcapng capture, unless the
    /// whole text names an existing file.
    pub fn parse_file(port: usize, text: &str) -> Result<Trace, String> {
        let whole = Trace {
            port,
            path: PathBuf::from(text),
            interface: CaptureInterface::Only,
        };
        if whole.path.exists() {
            return Ok(whole);
        }
        match text.rsplit_once('@') {
            Some((file, pick)) if !file.is_empty() && !pick.contains('/') => Ok(Trace {
                port,
                path: PathBuf::from(file),
                interface: pick.parse()?,
            }),
            _ => Ok(whole),
        }
    }
}

/// Snaplen of the interfaces of a pcapng output: larger than any frame
/// railyard sends.
const SINK_SNAPLEN: u32 = 65_535;

/// Longest poll interval a replay accepts: beyond it, whole flowlet gaps
/// and PFC pauses (at most 335 µs at 100 Gb/s) would fit inside one poll.
pub const MAX_POLL_INTERVAL: Nanos = 100_000;

/// Reads a poll interval such as `0`, `500ns`, `1us` or `100us`.
///
/// # Errors
/// Text that is not a duration, or one above [`MAX_POLL_INTERVAL`].
pub fn parse_poll_interval(text: &str) -> Result<Nanos, String> {
    let d = if text.trim() == "0" {
        std::time::Duration::ZERO
    } else {
        humantime::parse_duration(text)
            .map_err(|e| format!("{e}; expected a duration such as 500ns, 1us or 0"))?
    };
    match Nanos::try_from(d.as_nanos()) {
        Ok(ns) if ns <= MAX_POLL_INTERVAL => Ok(ns),
        _ => Err(format!(
            "{text} is longer than the {}us a replay allows",
            MAX_POLL_INTERVAL / 1_000
        )),
    }
}

/// Runs `backends` (index = interface) through a switch built from `model`
/// on a virtual clock starting at 0, until every source is exhausted and
/// every queue is empty. The clock jumps to the next input frame or the next
/// departure of a port shaped to its speed, whichever comes first, so frames
/// leave exactly at their line-rate departure times; with a `poll_interval`
/// it jumps at least that far (see the module documentation). `progress`
/// is called about once a second of wall time with the packets received so
/// far.
pub fn run_virtual(
    model: &SwitchModel,
    backends: Vec<Option<Box<dyn Port>>>,
    poll_interval: Nanos,
    lldp: Option<AgentConfig>,
    progress: impl FnMut(u64, Nanos),
) -> std::io::Result<ReplayReport> {
    run_virtual_sampled(model, backends, poll_interval, lldp, None, progress)
}

/// [`run_virtual`], sampling the switch every `plot_every` ns of virtual
/// time for pictures (the samples are in [`ReplayReport::plot`]). Sampling
/// reads the switch between polls and changes nothing it forwards.
pub fn run_virtual_sampled(
    model: &SwitchModel,
    backends: Vec<Option<Box<dyn Port>>>,
    poll_interval: Nanos,
    lldp: Option<AgentConfig>,
    plot_every: Option<Nanos>,
    progress: impl FnMut(u64, Nanos),
) -> std::io::Result<ReplayReport> {
    let run = VirtualRun {
        poll_interval,
        lldp,
        plot_every,
        drops: None,
    };
    run_virtual_with(model, backends, run, progress)
}

/// How [`run_virtual_with`] runs.
struct VirtualRun {
    poll_interval: Nanos,
    lldp: Option<AgentConfig>,
    plot_every: Option<Nanos>,
    drops: Option<DropWriter>,
}

/// [`run_virtual_sampled`], and with `run.drops` the dropped frames
/// written out after every poll.
fn run_virtual_with(
    model: &SwitchModel,
    backends: Vec<Option<Box<dyn Port>>>,
    run: VirtualRun,
    mut progress: impl FnMut(u64, Nanos),
) -> std::io::Result<ReplayReport> {
    let VirtualRun {
        poll_interval,
        lldp,
        plot_every,
        mut drops,
    } = run;
    let started = Instant::now();
    let clock = Arc::new(VirtualClock::new(0));
    let (mut sw, warnings) = Switch::new(model, backends, Pool::new(model.pool_buffers()));
    if let Some(d) = &drops {
        sw.capture_drops(Some(Arc::clone(&d.ring)));
    }
    if let Some(t) = sw.next_rx_time() {
        clock.advance_to(t);
    }
    let first = clock.now();
    let mut agent = lldp.map(|cfg| ReplayLldp::attach(cfg, model, &mut sw, first));
    let mut sampler = plot_every.map(|every| PlotSampler::new(model, first, every));
    let mut last_report = Instant::now();
    // Once nothing but timers or stuck queues remain, the replay goes on
    // for at most DRAIN_LIMIT of virtual time.
    let mut drain_until: Option<Nanos> = None;
    let mut past_drain_limit = |now: Nanos| now >= *drain_until.get_or_insert(now + DRAIN_LIMIT);
    let mut polls_to_check = PROGRESS_CHECK_POLLS;
    let mut polls = 0u64;
    loop {
        let now = clock.now();
        if let Some(s) = sampler.as_mut() {
            s.observe(&sw, now);
        }
        let work = sw.poll(now);
        if let Some(a) = agent.as_mut() {
            a.step(&mut sw, now);
        }
        if let Some(d) = drops.as_mut() {
            d.drain();
        }
        polls += 1;
        polls_to_check -= 1;
        if polls_to_check == 0 {
            polls_to_check = PROGRESS_CHECK_POLLS;
            if last_report.elapsed().as_secs() >= 1 {
                last_report = Instant::now();
                let rx: u64 = sw.stats().interfaces.values().map(|i| i.rx_packets).sum();
                progress(rx, now - first);
            }
        }
        // Something moved and something is still queued: serve it at this
        // same instant. (An idle switch goes straight to the next event.)
        if poll_interval == 0 && work > 0 && !sw.idle() {
            continue;
        }
        // Jump straight to whatever happens next: a frame arrives, or a
        // shaped port's wire frees for a queued frame. Departures therefore
        // happen exactly at their times, however long the gaps.
        let next_rx = sw.next_rx_time();
        // Every frame is in and out: timers alone (an XOFF refreshed for
        // bytes that never drain) must not keep a replay going for ever.
        if next_rx.is_none() && sw.idle() && sw.sources_exhausted() && past_drain_limit(now) {
            break;
        }
        // The agent's timers (a neighbour ageing out) count while traces
        // still run; past their end they would keep the replay going.
        let agent_due = agent
            .as_ref()
            .filter(|_| !sw.sources_exhausted())
            .and_then(ReplayLldp::next_deadline);
        let next = next_rx
            .into_iter()
            .chain(sw.next_departure())
            .chain(agent_due)
            .min();
        match next {
            Some(t) if t > now => clock.advance_to(t.max(now + poll_interval)),
            // More than a burst arrived, or (polling at an interval) frames
            // are still free to leave now: take them at this same instant,
            // as a live worker polls again at once after a full burst.
            Some(_) if next_rx.is_some_and(|t| t <= now) || (poll_interval > 0 && work > 0) => {}
            None if sw.idle() => break,
            _ => {
                // Queued frames that nothing will release by itself.
                if past_drain_limit(now) {
                    break;
                }
                clock.advance_by(DRAIN_STEP);
            }
        }
    }
    sw.finish()?;
    let drop_capture = drops.as_mut().map(|d| {
        // Packets still parked for a neighbour are dropped at the finish.
        d.drain();
        d.counts()
    });
    if let Some(d) = &drops {
        d.cap.flush()?;
    }
    let plot = sampler.map(|s| s.finish(&sw, clock.now()));
    let mut stats = sw.stats();
    // Gaps between polls in virtual time say nothing of a live path's
    // response; leave them out so no show command reads them as one.
    stats.poll_gaps.clear();
    Ok(ReplayReport {
        stats,
        virtual_ns: clock.now() - first,
        wall: started.elapsed(),
        polls,
        warnings,
        lldp: agent.as_ref().map(ReplayLldp::snapshot),
        plot,
        drop_capture,
    })
}

/// The file an interface's transmitted frames go to: its name with `/`
/// replaced by `_`, e.g. `Ethernet1_1.pcap`.
pub fn output_path(dir: &Path, interface: &str) -> PathBuf {
    dir.join(format!("{}.pcap", interface.replace('/', "_")))
}

/// Replays pcap files: `inputs` maps interface index to a trace. Every
/// interface writes what it transmits to `output_path(out_dir, name)`, with
/// timestamps on the inputs' own time line. Each trace is a PFC-honouring
/// sender (paused priorities are held back and released on resume, see
/// [`PfcUpstream`]) unless `options.open_loop`, which replays the traces
/// unchanged.
pub fn replay_pcaps(
    model: &SwitchModel,
    inputs: &[(usize, PathBuf)],
    out_dir: &Path,
    options: &ReplayOptions,
    progress: impl FnMut(u64, Nanos),
) -> std::io::Result<ReplayReport> {
    let traces: Vec<_> = inputs
        .iter()
        .map(|(port, path)| Trace {
            port: *port,
            path: path.clone(),
            interface: CaptureInterface::Only,
        })
        .collect();
    replay_traces(model, &traces, out_dir, options, progress)
}

/// [`replay_pcaps`] with a choice of interface per capture.
///
/// # Errors
/// A trace cannot be opened, its interfaces are ambiguous or not
/// Ethernet, an output cannot be written, or (without
/// [`ReplayOptions::stop_at_damage`]) a trace broke off at a damaged record:
/// the error names the file, the record number and its byte offset.
pub fn replay_traces(
    model: &SwitchModel,
    inputs: &[Trace],
    out_dir: &Path,
    options: &ReplayOptions,
    progress: impl FnMut(u64, Nanos),
) -> std::io::Result<ReplayReport> {
    std::fs::create_dir_all(out_dir)?;
    let mut epoch = u64::MAX;
    for t in inputs {
        if let Some(first) = PcapSource::first_timestamp_of(&t.path, &t.interface)? {
            epoch = epoch.min(first);
        }
    }
    if epoch == u64::MAX {
        epoch = 0;
    }
    let ng = match options.out_format {
        OutFormat::Pcap => None,
        OutFormat::Pcapng => {
            let names: Vec<&str> = model.interfaces.iter().map(|i| i.name.as_str()).collect();
            let path = out_dir.join(PCAPNG_FILE);
            let cap = NgCapture::create(&path, &names, SINK_SNAPLEN)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            Some(cap)
        }
    };
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    for (i, ifc) in model.interfaces.iter().enumerate() {
        let source = match inputs.iter().find(|t| t.port == i) {
            Some(t) => {
                let trace = TraceOptions {
                    interface: t.interface.clone(),
                    stop_at_damage: options.stop_at_damage,
                };
                let src = PcapSource::open_aligned_with(&t.path, epoch, &trace)?;
                Some(if options.open_loop {
                    src
                } else {
                    src.closed_loop(PfcUpstream::for_interface(ifc))
                })
            }
            None => None,
        };
        let sink = match &ng {
            // Interface numbers fit: a model has far fewer than 2^32 ports.
            Some(cap) => PcapSink::pcapng(cap.clone(), i as u32, epoch),
            None => PcapSink::create(output_path(out_dir, &ifc.name), epoch),
        };
        backends.push(Some(Box::new(PcapPort::new(source, Some(sink)))));
    }
    let drops = match (&ng, options.capture_drops) {
        (Some(cap), true) => Some(DropWriter {
            ring: Arc::new(CaptureRing::new(DROP_RING, SINK_SNAPLEN as usize)),
            cap: cap.clone(),
            epoch,
            written: 0,
        }),
        (None, true) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "dropped frames are captured only into a pcapng output (--out-format pcapng)",
            ))
        }
        _ => None,
    };
    let run = VirtualRun {
        poll_interval: options.poll_interval,
        lldp: options.lldp.clone(),
        plot_every: options.plot_every,
        drops,
    };
    run_virtual_with(model, backends, run, progress)
}

/// One priority of one port where PFC did something, for the summaries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PfcLine {
    /// Interface name.
    pub interface: String,
    /// Priority (qos-group).
    pub priority: u8,
    /// Pause frames the switch sent upstream on this port.
    pub tx_pause: u64,
    /// Resume frames it sent.
    pub tx_resume: u64,
    /// Pause frames it received from the peer.
    pub rx_pause: u64,
    /// Resume frames it received.
    pub rx_resume: u64,
    /// Time the port's egress queue of this priority spent paused by the peer.
    pub paused_ns: u64,
    /// Storms the PFC watchdog declared.
    pub watchdog_storms: u64,
    /// Stormed queues the watchdog restored.
    pub watchdog_restores: u64,
}

/// What a replay did, in a few numbers: where the frames it received went,
/// what the switch sent and why, and PFC. `replay` and `demo` print it and
/// put it in their JSON, so a reader need not add the counters up.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Frames received on every port: those the pipeline saw and those the
    /// port itself discarded (`backend_rx_dropped`: too long for a buffer,
    /// no free buffer, a damaged capture record), so that `received =
    /// forwarded + punted + dropped` once the queues have drained.
    pub received: u64,
    /// Frames that left through the egress queues (routed).
    pub forwarded: u64,
    /// Frames handed to the switch itself (ARP, ND, ICMP echo, LLDP).
    pub punted: u64,
    /// Frames dropped, for any reason (`drops` by interface says which).
    pub dropped: u64,
    /// Of `dropped`, frames the ports discarded before the pipeline saw
    /// them (`oversize`, `no_buffer` on receive, `capture_damaged`).
    #[serde(default)]
    pub dropped_by_port: u64,
    /// Frames sent on every port: the forwarded ones and the switch's own.
    pub sent: u64,
    /// The switch's own frames sent: PFC, and answers and requests of its
    /// own (ARP/ND replies and requests, ICMP echo replies, LLDP).
    pub originated: u64,
    /// PFC pause and resume frames sent (part of `originated`).
    pub pfc_sent: u64,
    /// PFC pause and resume frames received.
    pub pfc_received: u64,
    /// Virtual time from the first input frame to the end of the drain.
    pub virtual_ns: Nanos,
    /// Per port and priority, wherever PFC frames moved, a queue was
    /// paused or the watchdog acted.
    pub pfc: Vec<PfcLine>,
}

impl Summary {
    /// Adds up `stats` (of a run that took `virtual_ns`).
    pub fn of(stats: &SwitchStats, virtual_ns: Nanos) -> Summary {
        let mut s = Summary {
            virtual_ns,
            ..Summary::default()
        };
        for (name, i) in crate::show::in_port_order(stats) {
            s.received = s
                .received
                .saturating_add(i.rx_packets.saturating_add(i.backend_rx_dropped));
            s.dropped_by_port = s.dropped_by_port.saturating_add(i.backend_rx_dropped);
            s.sent = s.sent.saturating_add(i.tx_packets);
            s.punted = s.punted.saturating_add(i.punted);
            s.dropped = s
                .dropped
                .saturating_add(i.drops.values().fold(0, |a, n| a.saturating_add(*n)));
            for q in &i.queues {
                s.forwarded = s.forwarded.saturating_add(q.tx_packets);
            }
            let p = &i.pfc;
            for q in 0..8 {
                let line = PfcLine {
                    interface: name.clone(),
                    priority: q as u8,
                    tx_pause: p.tx_pause[q],
                    tx_resume: p.tx_resume[q],
                    rx_pause: p.rx_pause[q],
                    rx_resume: p.rx_resume[q],
                    paused_ns: p.paused_ns[q],
                    watchdog_storms: p.watchdog_storms[q],
                    watchdog_restores: p.watchdog_restores[q],
                };
                s.pfc_sent = s
                    .pfc_sent
                    .saturating_add(line.tx_pause.saturating_add(line.tx_resume));
                s.pfc_received = s
                    .pfc_received
                    .saturating_add(line.rx_pause.saturating_add(line.rx_resume));
                let idle = PfcLine {
                    interface: name.clone(),
                    priority: q as u8,
                    ..PfcLine::default()
                };
                if line != idle {
                    s.pfc.push(line);
                }
            }
        }
        s.originated = s.sent.saturating_sub(s.forwarded);
        s
    }
}

/// Prints the replay summary: where the frames went, per interface, per
/// queue that carried traffic, and PFC.
pub fn print_summary(out: &mut dyn Write, report: &ReplayReport) -> std::io::Result<()> {
    let s = Summary::of(&report.stats, report.virtual_ns);
    writeln!(
        out,
        "replayed {} frames in {:.3} ms of virtual time ({:.3} s wall, {:.2} Mpps, {} polls):",
        s.received,
        report.virtual_ns as f64 / 1e6,
        report.wall.as_secs_f64(),
        s.received as f64 / report.wall.as_secs_f64().max(1e-9) / 1e6,
        report.polls,
    )?;
    render_summary_lines(out, &s)?;
    crate::show::render_summary(out, &report.stats)?;
    render_pfc_lines(out, &s)
}

/// The lines under "replayed …": where the received frames went and what
/// the frames sent were.
fn render_summary_lines(out: &mut dyn Write, s: &Summary) -> std::io::Result<()> {
    if s.dropped_by_port > 0 {
        writeln!(
            out,
            "  {} forwarded, {} punted to the switch, {} dropped ({} by the ports before the \
             pipeline: see oversize, no_buffer, capture_damaged);",
            s.forwarded, s.punted, s.dropped, s.dropped_by_port
        )?;
    } else {
        writeln!(
            out,
            "  {} forwarded, {} punted to the switch, {} dropped;",
            s.forwarded, s.punted, s.dropped
        )?;
    }
    writeln!(
        out,
        "  {} sent: {} forwarded and {} the switch's own ({} PFC pause/resume, {} ARP/ND, ICMP or LLDP)\n",
        s.sent,
        s.forwarded,
        s.originated,
        s.pfc_sent,
        s.originated.saturating_sub(s.pfc_sent)
    )
}

/// The PFC lines of the summary: per port and priority that saw any.
fn render_pfc_lines(out: &mut dyn Write, s: &Summary) -> std::io::Result<()> {
    if s.pfc.is_empty() {
        return writeln!(
            out,
            "\nPFC: no pause frames sent or received, no queue paused."
        );
    }
    writeln!(
        out,
        "\nPFC: {} pause/resume frames sent, {} received; per port and priority (Paused: time the\nport's queue was held by the peer's pauses; Storms/Restores: the PFC watchdog):",
        s.pfc_sent, s.pfc_received
    )?;
    writeln!(
        out,
        "  {:<14} {:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
        "Interface",
        "Prio",
        "TX pause",
        "TX resume",
        "RX pause",
        "RX resume",
        "Paused",
        "Storms",
        "Restores"
    )?;
    for l in &s.pfc {
        writeln!(
            out,
            "  {:<14} {:>4} {:>10} {:>10} {:>10} {:>10} {:>10} {:>8} {:>8}",
            l.interface,
            l.priority,
            l.tx_pause,
            l.tx_resume,
            l.rx_pause,
            l.rx_resume,
            crate::show::duration(l.paused_ns),
            l.watchdog_storms,
            l.watchdog_restores
        )?;
    }
    Ok(())
}

/// What `replay --stats-json` writes and `show … --stats FILE` reads: every
/// counter (the management socket's `stats` document, so existing readers
/// of it keep working), the summary and the configuration that ran, so
/// the shows need nothing else.
#[derive(Serialize)]
pub struct SnapshotJson<'a> {
    /// Every counter, at the top level.
    #[serde(flatten)]
    pub stats: crate::show::StatsJson<'a>,
    /// The summary of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<&'a Summary>,
    /// What the numbers mean, in words (the demo's narrative).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub narrative: Option<&'a str>,
    /// The configuration as canonical text (`show running-config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_config: Option<&'a str>,
    /// What the LLDP agent saw (`show lldp …`), when one ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lldp: Option<&'a LldpSnapshot>,
}

/// A snapshot read back: the counters and, when it carries it, the
/// configuration text.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// Every counter.
    pub stats: SwitchStats,
    /// The configuration the run used, as canonical text.
    pub running_config: Option<String>,
    /// What the replay's LLDP agent saw, when the file carries it.
    pub lldp: Option<LldpSnapshot>,
}

/// Reads what `replay --stats-json` or `demo --json` wrote (or any
/// `show interface --json` document).
///
/// # Errors
/// The file cannot be read or does not hold switch counters.
pub fn read_snapshot(path: &Path) -> Result<Snapshot, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let bad = |e: serde_json::Error| {
        format!(
            "{}: not a replay's counters ({e}); write them with `railyard replay … --stats-json FILE`",
            path.display()
        )
    };
    let v: serde_json::Value = serde_json::from_str(&text).map_err(bad)?;
    let running_config = v
        .get("running_config")
        .and_then(|c| c.as_str())
        .map(str::to_string);
    let lldp = match v.get("lldp") {
        Some(l) => Some(serde_json::from_value(l.clone()).map_err(bad)?),
        None => None,
    };
    let stats = serde_json::from_value(v).map_err(bad)?;
    Ok(Snapshot {
        stats,
        running_config,
        lldp,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poll_intervals_read_as_nanoseconds() {
        assert_eq!(parse_poll_interval("0"), Ok(0));
        assert_eq!(parse_poll_interval("500ns"), Ok(500));
        assert_eq!(parse_poll_interval("1us"), Ok(1_000));
        assert_eq!(parse_poll_interval("2.5us"), Ok(2_500));
        assert_eq!(parse_poll_interval("100us"), Ok(100_000));
    }

    #[test]
    fn a_poll_interval_that_is_not_a_duration_or_too_long_is_refused() {
        let e = parse_poll_interval("fast").unwrap_err();
        assert!(e.contains("expected a duration"), "{e}");
        let e = parse_poll_interval("1").unwrap_err();
        assert!(e.contains("expected a duration"), "{e}");
        let e = parse_poll_interval("1ms").unwrap_err();
        assert!(e.contains("longer than the 100us"), "{e}");
    }
}
