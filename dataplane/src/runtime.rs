//! Poll-mode workers: threads pinned to cores, each running its own
//! [`Switch`] over a shard of the ports.
//!
//! Ports are dealt to workers round-robin; a packet routed to another
//! worker's port crosses a bounded ring, or, on a port without a line rate
//! whose backend can share its link, leaves through the routing worker's
//! own transmit lane (see [`crate::lanes`]). Workers publish a counter snapshot
//! every [`PUBLISH_INTERVAL`] (off the fast path) so the control plane can
//! answer `show` without touching worker state.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;

use crate::clock::{Clock, Nanos};
use crate::fib::FibWarning;
use crate::meta::QOS_GROUP_CONTROL;
use crate::model::{PortId, SwitchModel};
use crate::packet::{PacketBuf, Pool};
use crate::pipeline::{Switch, WorkerLinks};
use crate::port::Port;
use crate::span::{SpanBoard, SpanSet};
use crate::stats::SwitchStats;

/// How often workers publish counters.
pub const PUBLISH_INTERVAL: Nanos = 100_000_000;
/// Packets each cross-worker ring holds.
pub const HANDOFF_RING: usize = 4096;
/// Control frames (LLDP) waiting for the control plane.
pub const PUNT_RING: usize = 1024;
/// Frames waiting to go up the kernel mirrors: a BGP update burst or a
/// full TCP window from a peer fits.
pub const MIRROR_RING: usize = 4096;

/// How a worker waits when there is nothing to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PollMode {
    /// Spin forever: lowest latency, one full core per worker.
    Busy,
    /// Spin briefly, then sleep in growing steps up to 1 ms, so an idle lab
    /// does not burn every core. Where every port can wake a sleeper
    /// (AF_PACKET, AF_XDP, TAP), the sleep is a `poll(2)` on the ports that
    /// ends when a frame arrives.
    #[default]
    Adaptive,
}

/// How to run the workers.
#[derive(Debug, Clone, Default)]
pub struct RuntimeOptions {
    /// Number of workers (at least 1).
    pub workers: usize,
    /// Cores to pin workers to, in order; empty means no pinning.
    pub cores: Vec<usize>,
    /// Idle behaviour.
    pub poll: PollMode,
    /// Send frames for the switch's addresses that it does not answer itself
    /// to [`ControlPath::recv_mirror`], for the kernel mirror interfaces,
    /// instead of dropping them.
    pub mirrors: bool,
}

/// A model waiting to be applied by a worker, with its generation number.
type Pending = (u64, Arc<SwitchModel>);

/// Running workers.
pub struct Runtime {
    handles: Vec<JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    snapshots: Arc<Vec<Mutex<SwitchStats>>>,
    /// Per worker: models to apply between bursts.
    commands: Vec<Arc<ArrayQueue<Pending>>>,
    /// Per worker: the generation it has applied.
    applied: Arc<Vec<AtomicU64>>,
    generation: AtomicU64,
    interfaces: Vec<String>,
    control: ControlPath,
    /// The monitor sessions the workers copy frames for.
    span: Arc<SpanBoard>,
}

/// The control plane's door into the running dataplane: frames the workers
/// punt (LLDP) come out here, and frames the control plane originates go in
/// here to leave a port ahead of its queues. Both directions are lock-free
/// rings, so the workers never wait on the control plane.
#[derive(Clone)]
pub struct ControlPath {
    punt: Arc<ArrayQueue<PacketBuf>>,
    mirror: Option<Arc<ArrayQueue<PacketBuf>>>,
    inboxes: Vec<Arc<ArrayQueue<PacketBuf>>>,
    owners: Vec<usize>,
    pool: Pool,
}

/// Why a control frame could not be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendError {
    /// No such port.
    NoPort,
    /// No free buffer, or the frame is larger than one.
    NoBuffer,
    /// The owning worker's inbox is full; try again later.
    Busy,
}

impl ControlPath {
    /// Gives the calling thread's spare cached buffers back to the pool (see
    /// [`Pool::trim_cache`]); a control thread calls it once a loop.
    pub fn trim_cache(&self) {
        self.pool.trim_cache(Pool::TRIM_KEEP);
    }

    /// The next punted frame, if any; its `in_port` is the receiving port.
    pub fn recv(&self) -> Option<PacketBuf> {
        self.punt.pop()
    }

    /// The next frame for a kernel mirror (when the runtime was started with
    /// [`RuntimeOptions::mirrors`]); its `in_port` is the receiving port.
    pub fn recv_mirror(&self) -> Option<PacketBuf> {
        self.mirror.as_ref()?.pop()
    }

    /// Queues `frame` for transmission on `port`, ahead of the port's egress
    /// queues (it still takes wire time on a shaped port).
    ///
    /// # Errors
    /// See [`SendError`].
    pub fn send(&self, port: PortId, frame: &[u8]) -> Result<(), SendError> {
        let owner = *self
            .owners
            .get(usize::from(port))
            .ok_or(SendError::NoPort)?;
        let mut pkt = self.pool.alloc_from(frame).ok_or(SendError::NoBuffer)?;
        pkt.in_port = port;
        pkt.meta.out_port = port;
        pkt.meta.qos_group = QOS_GROUP_CONTROL;
        self.inboxes
            .get(owner)
            .ok_or(SendError::NoPort)?
            .push(pkt)
            .map_err(|_| SendError::Busy)
    }
}

/// Which worker owns port `i` of `ports` when there are `workers` workers.
pub fn shard(ports: usize, workers: usize) -> Vec<usize> {
    (0..ports).map(|i| i % workers.max(1)).collect()
}

impl Runtime {
    /// Starts the workers. `backends[i]` serves interface `i`. Returns the
    /// runtime and the routes that could not be installed.
    pub fn start(
        model: &SwitchModel,
        backends: Vec<Option<Box<dyn Port>>>,
        pool: Pool,
        clock: Arc<dyn Clock>,
        opts: &RuntimeOptions,
    ) -> (Runtime, Vec<FibWarning>) {
        let workers = opts.workers.max(1);
        let owners = shard(model.interfaces.len(), workers);
        let links = WorkerLinks::build(workers, &owners, HANDOFF_RING);
        let punt = Arc::new(ArrayQueue::new(PUNT_RING));
        let mirror = opts.mirrors.then(|| Arc::new(ArrayQueue::new(MIRROR_RING)));
        let control = ControlPath {
            punt: Arc::clone(&punt),
            mirror: mirror.clone(),
            inboxes: links.first().map(|l| l.inboxes.clone()).unwrap_or_default(),
            owners: owners.clone(),
            pool: pool.clone(),
        };
        let mut per_worker: Vec<Vec<Option<Box<dyn Port>>>> = (0..workers)
            .map(|_| (0..model.interfaces.len()).map(|_| None).collect())
            .collect();
        for (i, b) in backends.into_iter().enumerate().take(owners.len()) {
            let Some(mut b) = b else { continue };
            // Every other worker gets a lane where the backend has them;
            // whether a lane carries traffic is the model's to say.
            for (w, ports) in per_worker.iter_mut().enumerate() {
                if w != owners[i] {
                    ports[i] = b.tx_lane();
                }
            }
            per_worker[owners[i]][i] = Some(b);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let snapshots: Arc<Vec<Mutex<SwitchStats>>> = Arc::new(
            (0..workers)
                .map(|_| Mutex::new(SwitchStats::default()))
                .collect(),
        );
        let mut warnings = Vec::new();
        let mut handles = Vec::new();
        let commands: Vec<Arc<ArrayQueue<Pending>>> =
            (0..workers).map(|_| Arc::new(ArrayQueue::new(4))).collect();
        let applied: Arc<Vec<AtomicU64>> =
            Arc::new((0..workers).map(|_| AtomicU64::new(0)).collect());
        let span = Arc::new(SpanBoard::default());
        for ((w, ports), link) in per_worker.into_iter().enumerate().zip(links) {
            let (mut sw, warn) = Switch::new_worker(model, ports, pool.clone(), link);
            sw.set_punt_ring(Arc::clone(&punt));
            if let Some(m) = &mirror {
                sw.set_mirror_ring(Arc::clone(m));
            }
            if w == 0 {
                warnings = warn;
            }
            let stop = Arc::clone(&stop);
            let snaps = Arc::clone(&snapshots);
            let clock = Arc::clone(&clock);
            let core = opts.cores.get(w).copied();
            let poll = opts.poll;
            let inbox = Arc::clone(&commands[w]);
            let applied = Arc::clone(&applied);
            let span = Arc::clone(&span);
            let handle = std::thread::Builder::new()
                .name(format!("railyard-w{w}"))
                .spawn(move || {
                    if let Some(c) = core {
                        if !core_affinity::set_for_current(core_affinity::CoreId { id: c }) {
                            tracing::warn!(core = c, "could not pin worker {w} to core {c}");
                        }
                    }
                    let control = WorkerControl {
                        stop: &stop,
                        slot: &snaps[w],
                        commands: &inbox,
                        applied: &applied[w],
                        span: &span,
                    };
                    worker_loop(&mut sw, &*clock, &control, poll);
                });
            match handle {
                Ok(h) => handles.push(h),
                Err(e) => tracing::error!("could not start worker {w}: {e}"),
            }
        }
        (
            Runtime {
                handles,
                stop,
                snapshots,
                commands,
                applied,
                generation: AtomicU64::new(0),
                interfaces: model.interfaces.iter().map(|i| i.name.clone()).collect(),
                control,
                span,
            },
            warnings,
        )
    }

    /// The interfaces' names, by port number.
    pub fn interface_names(&self) -> &[String] {
        &self.interfaces
    }

    /// The control plane's path to and from the workers.
    pub fn control_path(&self) -> ControlPath {
        self.control.clone()
    }

    /// The latest published counters of every worker, merged.
    pub fn stats(&self) -> SwitchStats {
        let mut all = SwitchStats::default();
        for s in self.snapshots.iter() {
            let s = match s.lock() {
                Ok(g) => g.clone(),
                Err(poisoned) => poisoned.into_inner().clone(),
            };
            all.merge(s);
        }
        all
    }

    /// Hands a new model to every worker, which applies it between bursts
    /// (queued packets, counters and still-valid neighbours are kept), and
    /// waits until all have. Returns the routes that could not be installed.
    ///
    /// # Errors
    /// When the model's interfaces differ from the running ones (adding or
    /// removing ports needs a restart), or a worker does not answer.
    pub fn apply(&self, model: SwitchModel) -> Result<Vec<FibWarning>, String> {
        let names: Vec<&str> = model.interfaces.iter().map(|i| i.name.as_str()).collect();
        if names
            != self
                .interfaces
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
        {
            return Err(
                "the set of interfaces changed; adding or removing interfaces needs a restart"
                    .to_string(),
            );
        }
        let (_, warnings) = crate::fib::Fib::build(&model);
        let gen = self.generation.fetch_add(1, Ordering::Relaxed) + 1;
        let model = Arc::new(model);
        for q in &self.commands {
            let mut item = (gen, Arc::clone(&model));
            // Replace anything not yet applied: only the newest model matters.
            while let Err(back) = q.push(item) {
                item = back;
                let _ = q.pop();
            }
        }
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while self.applied.iter().any(|a| a.load(Ordering::Acquire) < gen) {
            if std::time::Instant::now() > deadline || self.handles.iter().any(|h| h.is_finished())
            {
                return Err("a worker did not apply the new configuration in time".to_string());
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(warnings)
    }

    /// Has every worker copy frames for the monitor sessions of `set`
    /// (`None`: stop copying), from its next round on.
    pub fn set_span(&self, set: Option<Arc<SpanSet>>) {
        self.span.publish(set);
    }

    /// The first worker whose thread has ended although no stop was asked
    /// for: it panicked, and its ports no longer move packets. A switch with
    /// a dead worker must not go on answering as if it forwarded.
    pub fn dead_worker(&self) -> Option<usize> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        self.handles.iter().position(|h| h.is_finished())
    }

    /// Asks every worker to stop, waits for them, and returns the final counters.
    pub fn shutdown(mut self) -> SwitchStats {
        self.stop.store(true, Ordering::Relaxed);
        for h in std::mem::take(&mut self.handles) {
            if h.join().is_err() {
                tracing::error!("a worker panicked");
            }
        }
        self.stats()
    }
}

fn publish(sw: &Switch, slot: &Mutex<SwitchStats>) {
    let s = sw.stats();
    match slot.lock() {
        Ok(mut g) => *g = s,
        Err(poisoned) => *poisoned.into_inner() = s,
    }
}

/// What a worker shares with the runtime.
struct WorkerControl<'a> {
    stop: &'a AtomicBool,
    slot: &'a Mutex<SwitchStats>,
    commands: &'a ArrayQueue<Pending>,
    applied: &'a AtomicU64,
    span: &'a SpanBoard,
}

/// Idle polls an adaptive worker spins through before it sleeps.
const SPIN_ROUNDS: u32 = 1000;
/// The same for a worker whose ports wake it when a frame arrives.
const WAKEABLE_SPIN_ROUNDS: u32 = 50;

/// The descriptors an idle worker sleeps on (see [`Switch::wake_fds`]).
struct WakeSet(Option<Vec<libc::pollfd>>);

impl WakeSet {
    /// Whether a frame ends this worker's sleep.
    fn can_wake(&self) -> bool {
        self.0.is_some()
    }

    fn of(sw: &Switch) -> WakeSet {
        WakeSet(sw.wake_fds().map(|fds| {
            fds.into_iter()
                .map(|fd| libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                })
                .collect()
        }))
    }

    /// Sleeps until a port has a frame or `step` has passed; false when the
    /// ports cannot wake a sleeper (or the wait failed), so the caller
    /// sleeps instead.
    fn sleep(&mut self, step: Duration) -> bool {
        let Some(fds) = self.0.as_mut() else {
            return false;
        };
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: step.subsec_nanos().into(),
        };
        // SAFETY: `fds` is a live array of initialised pollfds whose length
        // we pass; `ts` lives for the call; no signal mask is changed.
        #[allow(unsafe_code)]
        let r = unsafe {
            libc::ppoll(
                fds.as_mut_ptr(),
                fds.len() as libc::nfds_t,
                &ts,
                std::ptr::null(),
            )
        };
        r >= 0
    }
}

fn worker_loop(sw: &mut Switch, clock: &dyn Clock, ctl: &WorkerControl<'_>, poll: PollMode) {
    let slot = ctl.slot;
    let mut last_publish = 0;
    let mut idle_rounds: u32 = 0;
    let mut wake = WakeSet::of(sw);
    let mut span_seen = 0;
    publish(sw, slot);
    while !ctl.stop.load(Ordering::Relaxed) {
        let span = ctl.span.generation();
        if span != span_seen {
            span_seen = span;
            sw.set_span(ctl.span.current());
        }
        if let Some((gen, model)) = ctl.commands.pop() {
            sw.apply(&model);
            wake = WakeSet::of(sw);
            publish(sw, slot);
            ctl.applied.store(gen, Ordering::Release);
        }
        let now = clock.now();
        let work = sw.poll(now);
        if now.saturating_sub(last_publish) >= PUBLISH_INTERVAL {
            last_publish = now;
            publish(sw, slot);
            sw.pool().trim_cache(Pool::TRIM_KEEP);
        }
        // A port shaped to its speed with frames waiting for the wire is not
        // idle: sleeping would hold its frames past their departure times.
        if work > 0 || sw.next_departure().is_some() {
            idle_rounds = 0;
            continue;
        }
        idle_rounds = idle_rounds.saturating_add(1);
        // A worker a frame can wake spins only briefly: on a machine with
        // fewer cores than workers its spinning would hold off the very
        // worker the frame it just sent is waiting for.
        let spin = if wake.can_wake() {
            WAKEABLE_SPIN_ROUNDS
        } else {
            SPIN_ROUNDS
        };
        match poll {
            PollMode::Busy => std::hint::spin_loop(),
            PollMode::Adaptive if idle_rounds < spin => std::hint::spin_loop(),
            PollMode::Adaptive => {
                // 1 µs doubling to 1 ms while idle, cut short by a frame
                // where the ports can say one came.
                let shift = ((idle_rounds - spin) / 64).min(10);
                let step = Duration::from_micros(1 << shift);
                if !wake.sleep(step) {
                    std::thread::sleep(step);
                }
            }
        }
    }
    // Let queued frames go out before stopping.
    for _ in 0..1000 {
        if sw.idle() {
            break;
        }
        sw.poll(clock.now());
    }
    if let Err(e) = sw.finish() {
        tracing::warn!("flushing ports at shutdown: {e}");
    }
    publish(sw, slot);
}
