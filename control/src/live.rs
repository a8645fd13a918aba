//! `railyard run`: the live switch on real ports.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use railyard_config::{Bind, Interface, RxHandover};
use railyard_dataplane::clock::{Clock, MonotonicClock};
use railyard_dataplane::model::RouteModel;
use railyard_dataplane::port::afpacket::{AfPacketOptions, AfPacketPort, Receive};
use railyard_dataplane::port::afxdp::{AfXdpOptions, AfXdpPort};
use railyard_dataplane::port::tap::TapPort;
use railyard_dataplane::port::Port;
use railyard_dataplane::runtime::{Runtime, RuntimeOptions};
use railyard_dataplane::stats::SwitchStats;
use railyard_dataplane::Pool;

use crate::compile::reorder;
use crate::lacp::LacpReply;
use crate::lldp::runner::{LldpRunner, LldpShared};
use crate::metrics::{self, MetricsServer, Scrape};
use crate::mgmt::{self, ReloadReply};
use crate::monitor::Monitor;
use crate::queue_ring::QueueRing;
use crate::routing::daemons::{state_dir, FrrDaemons};
use crate::routing::kernel_fib::{
    KernelFib, KernelFibCounters, KernelFibView, KernelRouteView, KernelRoutesReply,
};
use crate::routing::mirror::{MirrorRunner, MirrorStats, Mirrors};
use crate::routing::{frr_config, linux_name};
use crate::{load_config, Loaded};

/// Opens the backend a `bind` line names, for a live switch.
///
/// # Errors
/// Why the port could not be opened, naming the interface and the target.
/// `configured` is the interface's configuration, for the binding's options.
pub fn open_backend(
    interface: &str,
    bind: &Bind,
    configured: Option<&Interface>,
) -> Result<Box<dyn Port>, String> {
    let fail = |what: &str, e: std::io::Error| {
        let hint = match e.kind() {
            std::io::ErrorKind::PermissionDenied => " (needs root or CAP_NET_RAW/CAP_NET_ADMIN)",
            std::io::ErrorKind::NotFound => " (does the interface exist in this namespace?)",
            _ => "",
        };
        format!("{interface}: cannot open {what}: {e}{hint}")
    };
    match bind {
        Bind::AfPacket(ifname) => {
            let mut opts = AfPacketOptions::default();
            if let Some(mib) = configured.and_then(|i| i.rx_ring_mib) {
                opts = opts.with_ring_mib(mib);
            }
            opts.receive = match configured.and_then(|i| i.rx_handover) {
                Some(RxHandover::Blocks) => Receive::Blocks,
                Some(RxHandover::Frames) | None => Receive::Frames,
            };
            AfPacketPort::open(ifname, opts)
                .map(|p| Box::new(p) as Box<dyn Port>)
                .map_err(|e| fail(&format!("af-packet {ifname}"), e))
        }
        Bind::Tap(ifname) => TapPort::open(ifname)
            .map(|p| Box::new(p) as Box<dyn Port>)
            .map_err(|e| fail(&format!("tap {ifname}"), e)),
        Bind::Pcap(path) => Err(format!(
            "{interface}: `bind pcap {}` is an input for `railyard replay`, not for a live switch",
            path.display()
        )),
        Bind::Ring(name) => Err(format!(
            "{interface}: `bind ring {name}` joins switches inside one process (tests, benchmarks); a live switch needs af-packet or tap"
        )),
        Bind::Dpdk(port) => open_dpdk(interface, port),
        Bind::AfXdp(ifname) => {
            let mut opts = AfXdpOptions::default();
            if let Some(mib) = configured.and_then(|i| i.rx_ring_mib) {
                opts = opts.with_ring_mib(mib);
            }
            AfXdpPort::open(ifname, opts)
            .map(|p| Box::new(p) as Box<dyn Port>)
            .map_err(|e| match e.kind() {
                // AF_XDP needs more than a packet socket: loading and
                // attaching the XDP program is CAP_BPF + CAP_NET_ADMIN.
                std::io::ErrorKind::PermissionDenied => format!(
                    "{interface}: cannot open af-xdp {ifname}: {e} (needs root or CAP_NET_ADMIN+CAP_BPF)"
                ),
                std::io::ErrorKind::Unsupported => format!(
                    "{interface}: cannot open af-xdp {ifname}: {e} (bind af-packet {ifname} works on any kernel)"
                ),
                _ => fail(&format!("af-xdp {ifname}"), e),
            })
        }
    }
}

/// Initialises DPDK's EAL with the configuration's `dpdk eal-args` when an
/// interface is bound to `dpdk` (a no-op otherwise, and in builds without
/// the `dpdk` feature, where opening such a port fails instead).
///
/// # Errors
/// Why EAL could not be initialised.
pub fn init_dpdk(config: &railyard_config::Config) -> Result<(), String> {
    #[cfg(feature = "dpdk")]
    if config
        .interfaces
        .iter()
        .any(|i| matches!(i.bind, Some(Bind::Dpdk(_))))
    {
        railyard_dataplane::port::dpdk::Eal::init(&config.dpdk_eal_args)
            .map_err(|e| format!("DPDK: {e}"))?;
    }
    #[cfg(not(feature = "dpdk"))]
    let _ = config;
    Ok(())
}

#[cfg(feature = "dpdk")]
fn open_dpdk(interface: &str, port: &str) -> Result<Box<dyn Port>, String> {
    use railyard_dataplane::port::dpdk::{DpdkOptions, DpdkPort, Eal};
    let eal = match Eal::get() {
        Some(eal) => eal,
        None => Eal::init(&[]).map_err(|e| format!("{interface}: DPDK: {e}"))?,
    };
    DpdkPort::open(eal, port, &DpdkOptions::default())
        .map(|p| Box::new(p) as Box<dyn Port>)
        .map_err(|e| format!("{interface}: cannot open dpdk {port}: {e}"))
}

#[cfg(not(feature = "dpdk"))]
fn open_dpdk(interface: &str, port: &str) -> Result<Box<dyn Port>, String> {
    Err(format!(
        "{interface}: `bind dpdk {port}` needs a build with `--features dpdk`"
    ))
}

/// Options of `railyard run`.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The configuration file (re-read on reload).
    pub config: PathBuf,
    /// Treat unsupported configuration sections as errors.
    pub strict: bool,
    /// Management socket path.
    pub socket: PathBuf,
    /// Worker layout and idle behaviour.
    pub runtime: RuntimeOptions,
    /// Whether the kernel takes part in routing (see [`Routing`]).
    pub routing: Routing,
    /// Where to serve Prometheus metrics (`GET /metrics`), if anywhere.
    pub metrics: Option<SocketAddr>,
    /// The group that may use the management socket too (mode 0660);
    /// without one it is owner-only (0600).
    pub socket_group: Option<mgmt::Group>,
    /// The canonical directory `reload FILE` through the socket may read
    /// from; without one it reads any file the switch's user may read.
    pub config_dir: Option<PathBuf>,
}

/// How a live switch learns its routes beyond its configured ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Routing {
    /// Configured static and connected routes only; frames for the
    /// switch's addresses that it does not answer itself are dropped.
    #[default]
    Off,
    /// Mirror interfaces for the ports, and the kernel's routing table
    /// followed into the FIB: whatever programs the kernel (`ip route`,
    /// BIRD, an FRR started by hand) programs the switch.
    Kernel,
    /// As `Kernel`, and FRR's zebra, bgpd and bfdd started in the switch's
    /// namespace with the configuration's `router bgp` translated.
    Frr,
}

impl Routing {
    /// The default for a configuration: FRR when it has a `router bgp`,
    /// otherwise off.
    pub fn for_config(config: &railyard_config::Config) -> Routing {
        if config.bgp.is_some() {
            Routing::Frr
        } else {
            Routing::Off
        }
    }
}

/// Re-reads a configuration and applies it to the running workers, or
/// explains why not; the old configuration keeps running on any error.
fn reload(
    runtime: &Runtime,
    running: &Mutex<Loaded>,
    lldp: &LldpShared,
    monitor: &Monitor,
    path: &Path,
    strict: bool,
) -> ReloadReply {
    let reject = |messages: Vec<String>| ReloadReply {
        applied: false,
        messages,
    };
    let loaded = match load_config(path, strict) {
        Ok(l) => l,
        Err(diagnostics) => {
            return reject(vec![
                diagnostics,
                "configuration rejected; the running configuration is unchanged".into(),
            ])
        }
    };
    let Ok(mut current) = running.lock() else {
        return reject(vec!["internal error: configuration lock poisoned".into()]);
    };
    let order: Vec<String> = current
        .compiled
        .model
        .interfaces
        .iter()
        .map(|i| i.name.clone())
        .collect();
    let Some(new) = reorder(loaded.compiled, &order) else {
        return reject(vec![format!(
            "{}: interfaces were added or removed; restart railyard to apply that (running configuration unchanged)",
            path.display()
        )]);
    };
    if let Some((name, _)) = order
        .iter()
        .zip(new.binds.iter().zip(&current.compiled.binds))
        .find(|(_, (a, b))| a != b)
    {
        return reject(vec![format!(
            "{}: the `bind` of {name} changed; restart railyard to move a port (running configuration unchanged)",
            path.display()
        )]);
    }
    match lldp.apply(runtime, &new.model) {
        Ok(route_warnings) => {
            let mut messages = loaded.warnings.clone();
            messages.extend(
                route_warnings
                    .into_iter()
                    .map(|w| format!("warning: route {}: {}", w.route, w.message)),
            );
            if let Err(e) = monitor.apply(&loaded.config.monitor_sessions, &new.model) {
                messages.push(format!("warning: {e}"));
            }
            messages.push(format!("{}: applied", path.display()));
            *current = Loaded {
                config: loaded.config,
                compiled: new,
                warnings: Vec::new(),
            };
            lldp.generation.fetch_add(1, Ordering::Release);
            ReloadReply {
                applied: true,
                messages,
            }
        }
        Err(e) => reject(vec![e]),
    }
}

/// Waits until every kernel interface the configuration binds (`bind
/// af-packet`, `af-xdp`; a `tap` is created by the switch itself) exists,
/// polling `/sys/class/net` every 100 ms, for at most `timeout`.
///
/// In a container the switch starts before its links are attached:
/// containerlab adds `eth1`, `eth2`, … after the entry point runs, so
/// `railyard run --wait-ports` holds the ports back until they are there
/// instead of failing on the first missing one.
///
/// # Errors
/// The interfaces still missing when `timeout` passed.
pub fn wait_for_ports(
    compiled: &crate::compile::Compiled,
    timeout: Duration,
) -> Result<(), String> {
    let names: Vec<&str> = compiled
        .binds
        .iter()
        .flatten()
        .filter_map(|b| match b {
            Bind::AfPacket(name) | Bind::AfXdp(name) => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !std::path::Path::new("/sys/class/net").join(n).exists())
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            return Err(format!(
                "interfaces still missing after {} s: {}",
                timeout.as_secs(),
                missing.join(", ")
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Runs the switch until SIGINT or SIGTERM, then returns the final counters.
/// SIGHUP or a `reload` request re-reads the configuration.
///
/// # Errors
/// A message when a port, the management socket or the metrics address
/// cannot be opened.
pub fn run(loaded: Loaded, opts: &RunOptions) -> Result<SwitchStats, String> {
    let compiled = &loaded.compiled;
    // Bound before any port opens, so a bad address stops nothing running.
    let metrics_listener = opts.metrics.map(metrics::listen).transpose()?;
    init_dpdk(&loaded.config)?;
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    for (ifc, bind) in compiled.model.interfaces.iter().zip(&compiled.binds) {
        match bind {
            Some(b) => {
                let configured = loaded
                    .config
                    .interfaces
                    .iter()
                    .find(|i| i.name.to_string() == ifc.name);
                backends.push(Some(open_backend(&ifc.name, b, configured)?));
            }
            // SVIs and port-channels have no link of their own.
            None if ifc.logical.is_some() => backends.push(None),
            None => {
                tracing::warn!("{} has no `bind`: it stays down", ifc.name);
                backends.push(None);
            }
        }
    }
    let mirrors = match opts.routing {
        Routing::Off => None,
        Routing::Kernel | Routing::Frr => {
            let port_interfaces = compiled.binds.iter().flatten().filter_map(|b| match b {
                Bind::AfPacket(name) | Bind::AfXdp(name) | Bind::Tap(name) => Some(name.as_str()),
                _ => None,
            });
            Some(Mirrors::create(&compiled.model, port_interfaces)?)
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&stop)).map_err(|e| e.to_string())?;
    }
    let hangup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hangup))
        .map_err(|e| e.to_string())?;
    let clock = Arc::new(MonotonicClock::new());
    // Where the workers' clock starts in wall-clock time, for the
    // timestamps of monitor sessions' files.
    let (wall_ns, clock_now) = (wall_clock_ns(), clock.now());
    let runtime_opts = RuntimeOptions {
        mirrors: mirrors.is_some(),
        ..opts.runtime.clone()
    };
    let (runtime, warnings) = Runtime::start(
        &compiled.model,
        backends,
        Pool::new(compiled.model.pool_buffers()),
        clock,
        &runtime_opts,
    );
    for w in warnings {
        tracing::warn!("route {}: {}", w.route, w.message);
    }
    let hostname = compiled.model.hostname.clone();
    let interface_names: Vec<String> = compiled
        .model
        .interfaces
        .iter()
        .map(|i| i.name.clone())
        .collect();
    let interfaces = compiled.model.interfaces.len();
    let runtime = Arc::new(runtime);
    let monitor = Arc::new(Monitor::start(
        Arc::clone(&runtime),
        &loaded.config.monitor_sessions,
        &compiled.model,
        wall_ns,
        clock_now,
    )?);
    let running = Arc::new(Mutex::new(loaded));
    let lldp = LldpShared::default();
    let mirror_ports = mirrors.as_ref().map(Mirrors::indexes);
    let mirrors = match mirrors {
        Some(m) => {
            let names = m.names();
            let cfg = Arc::clone(&running);
            let model = move || match cfg.lock() {
                Ok(l) => l.compiled.model.clone(),
                Err(p) => p.into_inner().compiled.model.clone(),
            };
            let runner = m
                .start(Arc::clone(&runtime), model, Arc::clone(&lldp.generation))
                .map_err(|e| format!("cannot start the mirror thread: {e}"))?;
            tracing::info!(
                "mirror interfaces: {}",
                names
                    .iter()
                    .map(|(_, n)| n.as_str())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
            Some(runner)
        }
        None => None,
    };
    let kernel_fib = mirror_ports
        .map(|ports| follow_kernel_routes(ports, &runtime, &running, &lldp))
        .transpose()?;
    let counters = Counters {
        runtime: Arc::clone(&runtime),
        mirrors: mirrors.as_ref().map(MirrorRunner::stats),
        kernel: kernel_fib.as_ref().map(KernelFib::counters),
        monitor: Arc::clone(&monitor),
    };
    let kernel_counters = counters.kernel.clone();
    let kernel_routes = Arc::clone(&lldp.kernel_routes);
    let frr = match opts.routing {
        Routing::Frr => {
            let text = match running.lock() {
                Ok(l) => frr_config(&l.config, linux_name),
                Err(p) => frr_config(&p.into_inner().config, linux_name),
            };
            let daemons = FrrDaemons::start(&state_dir(&opts.socket), &text)?;
            tracing::info!(
                "FRR running: zebra, bgpd, bfdd in {}",
                daemons.dir().display()
            );
            Some(Arc::new(daemons))
        }
        Routing::Off | Routing::Kernel => None,
    };
    let frr_show = frr.clone();
    let stats_source = counters.clone();
    // The last minute of every queue, sampled below from what the workers
    // publish; the management socket answers `queue-ring NAME` from it.
    let ring = Arc::new(Mutex::new(QueueRing::new(interface_names, Instant::now())));
    let ring_source = counters.clone();
    let ring_reply = Arc::clone(&ring);
    let (rt, cfg, path, strict, shared, span) = (
        Arc::clone(&runtime),
        Arc::clone(&running),
        opts.config.clone(),
        opts.strict,
        lldp.clone(),
        Arc::clone(&monitor),
    );
    let socket_options = mgmt::Options {
        group: opts.socket_group.clone(),
        ..mgmt::Options::default()
    };
    let socket_counters = Arc::clone(&socket_options.counters);
    let scrape_socket = Arc::clone(&socket_options.counters);
    let config_dir = opts.config_dir.clone();
    let server = mgmt::Server::start_with(&opts.socket, socket_options, move |req| {
        let (verb, arg) = req.split_once(' ').unwrap_or((req, ""));
        match verb {
            "stats" => {
                let mut v = serde_json::to_value(stats_source.stats()).unwrap_or_default();
                if let Some(k) = stats_source.kernel_view() {
                    v["kernel_routes"] = serde_json::to_value(k).unwrap_or_default();
                }
                v["control_socket"] =
                    serde_json::to_value(socket_counters.snapshot()).unwrap_or_default();
                v.to_string()
            }
            "kernel-routes" => kernel_routes_reply(&kernel_routes, kernel_counters.as_deref()),
            "queue-ring" => {
                let reply = match ring_reply.lock() {
                    Ok(r) => r.reply(arg.trim()),
                    Err(p) => p.into_inner().reply(arg.trim()),
                };
                match reply {
                    Some(r) => serde_json::to_string(&r).unwrap_or_default(),
                    None => serde_json::json!({
                        "error": format!("no interface {:?} on this switch", arg.trim())
                    })
                    .to_string(),
                }
            }
            "config" => match cfg.lock() {
                Ok(l) => serde_json::json!({ "text": l.config.to_string() }).to_string(),
                Err(_) => mgmt::unknown_request(req),
            },
            "reload" => {
                let file = match (arg.trim(), &config_dir) {
                    ("", _) => Ok(path.clone()),
                    (f, Some(dir)) => mgmt::confine(dir, Path::new(f)),
                    (f, None) => Ok(PathBuf::from(f)),
                };
                let reply = match file {
                    Ok(file) => reload(&rt, &cfg, &shared, &span, &file, strict),
                    Err(refused) => ReloadReply {
                        applied: false,
                        messages: vec![refused],
                    },
                };
                log_reload(&reply);
                serde_json::to_string(&reply).unwrap_or_default()
            }
            "frr" => match &frr_show {
                Some(daemons) => frr_request(daemons, arg),
                None => serde_json::json!({
                    "error": "this switch runs no FRR (it starts FRR when its configuration has \
                              `router bgp`, or with `railyard run --routing frr`)"
                })
                .to_string(),
            },
            "lldp" => match shared.snapshot.lock() {
                Ok(s) => serde_json::to_string(&*s).unwrap_or_default(),
                Err(_) => mgmt::unknown_request(req),
            },
            "lacp" => {
                let snapshot = match shared.lacp.lock() {
                    Ok(s) => s.clone(),
                    Err(p) => p.into_inner().clone(),
                };
                let model = match cfg.lock() {
                    Ok(l) => l.compiled.model.clone(),
                    Err(p) => p.into_inner().compiled.model.clone(),
                };
                serde_json::to_string(&LacpReply::new(snapshot, &model)).unwrap_or_default()
            }
            "monitor" => {
                let model = match cfg.lock() {
                    Ok(l) => l.compiled.model.clone(),
                    Err(p) => p.into_inner().compiled.model.clone(),
                };
                serde_json::to_string(&span.reply(&model)).unwrap_or_default()
            }
            _ => mgmt::unknown_request(req),
        }
    })
    .map_err(|e| format!("management socket {}: {e}", opts.socket.display()))?;
    let metrics_server = match metrics_listener {
        Some(listener) => {
            let snapshot = Arc::clone(&lldp.snapshot);
            let server = MetricsServer::start(listener, move || {
                // The LLDP agent's lock, never a worker's, held here just
                // long enough to copy; rendering happens after.
                let lldp = match snapshot.lock() {
                    Ok(s) => s.clone(),
                    Err(p) => p.into_inner().clone(),
                };
                let kernel = counters.kernel_view();
                metrics::render(&Scrape {
                    stats: &counters.stats(),
                    lldp: Some(&lldp),
                    kernel_routes: kernel.as_ref(),
                    control_socket: Some(&scrape_socket.snapshot()),
                })
            })?;
            tracing::info!("Prometheus metrics at http://{}/metrics", server.addr());
            Some(server)
        }
        None => {
            // Its hold on the runtime must go before shutdown unwraps it.
            drop(counters);
            None
        }
    };
    let agent = LldpRunner::start(Arc::clone(&runtime), Arc::clone(&running), lldp.clone())
        .map_err(|e| format!("cannot start the LLDP agent: {e}"))?;
    tracing::info!(
        "{hostname} running: {interfaces} interfaces, {} workers, socket {}",
        opts.runtime.workers.max(1),
        opts.socket.display()
    );
    let mut dead = None;
    while !stop.load(Ordering::Relaxed) {
        dead = runtime.dead_worker();
        if dead.is_some() {
            break;
        }
        let now = Instant::now();
        if lock_ring(&ring).due(now) {
            // Counters merged outside the ring's lock, which a `queue-ring`
            // request takes.
            let stats = ring_source.stats();
            lock_ring(&ring).record(&stats, now);
        }
        if hangup.swap(false, Ordering::Relaxed) {
            log_reload(&reload(
                &runtime,
                &running,
                &lldp,
                &monitor,
                &opts.config,
                opts.strict,
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    // Its hold on the runtime must go before shutdown unwraps it.
    drop(ring_source);
    // Shutdown LLDPDUs go out before the workers stop.
    agent.stop();
    drop(metrics_server);
    drop(server);
    // Its files end with every frame copied so far; its hold on the
    // runtime goes before shutdown unwraps it.
    if let Ok(m) = Arc::try_unwrap(monitor) {
        m.stop();
    }
    drop(frr);
    drop(kernel_fib);
    drop(mirrors);
    let runtime = Arc::try_unwrap(runtime)
        .map_err(|_| "management thread still holds the runtime".to_string())?;
    let stats = runtime.shutdown();
    match dead {
        Some(w) => Err(format!(
            "worker {w} stopped (it panicked; see above): its ports no longer forwarded, \
             so the switch stopped too"
        )),
        None => Ok(stats),
    }
}

/// Nanoseconds since 1970 now (0 for a clock set before then).
fn wall_clock_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

/// The queue ring, even if a holder panicked (its samples stay whole).
fn lock_ring(ring: &Mutex<QueueRing>) -> std::sync::MutexGuard<'_, QueueRing> {
    ring.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The counters the management socket's `stats` request answers with and
/// a metrics scrape renders: the snapshots the workers have published
/// (never their live counters) and what the mirror and kernel-route
/// threads count in atomics.
#[derive(Clone)]
struct Counters {
    runtime: Arc<Runtime>,
    mirrors: Option<MirrorStats>,
    kernel: Option<Arc<KernelFibCounters>>,
    monitor: Arc<Monitor>,
}

impl Counters {
    /// Every worker's latest snapshot, merged, with the mirror and monitor
    /// session counters.
    fn stats(&self) -> SwitchStats {
        let mut stats = self.runtime.stats();
        if let Some(m) = &self.mirrors {
            with_mirror_counters(&mut stats, m, &self.runtime);
        }
        stats.monitor_sessions = self.monitor.counters();
        stats
    }

    /// The kernel route follower's counters, when it runs.
    fn kernel_view(&self) -> Option<KernelFibView> {
        self.kernel.as_deref().map(KernelFibCounters::view)
    }
}

/// Answers a management `frr` request: a read-only vtysh `show` command
/// whose output is returned as `{"output": TEXT}` (or `{"error": …}`).
fn frr_request(daemons: &FrrDaemons, command: &str) -> String {
    let command = command.trim();
    if !command.starts_with("show ") {
        return serde_json::json!({ "error": format!("only `show` commands go to FRR, not {command:?}") })
            .to_string();
    }
    match daemons.vtysh(command) {
        Ok(output) => serde_json::json!({ "output": output }).to_string(),
        Err(e) => serde_json::json!({ "error": e }).to_string(),
    }
}

/// Starts following the kernel's routing table: every batch of changes
/// becomes the routes [`LldpShared::apply`] adds to the running model.
fn follow_kernel_routes(
    ports: Vec<(u32, u16)>,
    runtime: &Arc<Runtime>,
    running: &Arc<Mutex<Loaded>>,
    shared: &LldpShared,
) -> Result<KernelFib, String> {
    let (rt, cfg, shared) = (Arc::clone(runtime), Arc::clone(running), shared.clone());
    let install = move |routes: Vec<RouteModel>| {
        match shared.kernel_routes.lock() {
            Ok(mut k) => *k = Arc::new(routes),
            Err(p) => *p.into_inner() = Arc::new(routes),
        }
        let model = match cfg.lock() {
            Ok(l) => l.compiled.model.clone(),
            Err(p) => p.into_inner().compiled.model.clone(),
        };
        shared.apply(&rt, &model).map(|_| ())
    };
    let follower = KernelFib::start(ports, install)?;
    tracing::info!("following the kernel's routing table");
    Ok(follower)
}

/// The management socket's answer to `kernel-routes`.
fn kernel_routes_reply(
    routes: &Mutex<Arc<Vec<RouteModel>>>,
    counters: Option<&KernelFibCounters>,
) -> String {
    let routes = match routes.lock() {
        Ok(k) => Arc::clone(&k),
        Err(p) => Arc::clone(&p.into_inner()),
    };
    let reply = KernelRoutesReply {
        counters: counters.map(KernelFibCounters::view).unwrap_or_default(),
        routes: routes.iter().map(KernelRouteView::of).collect(),
    };
    serde_json::to_string(&reply).unwrap_or_default()
}

/// Adds what went through each port's mirror to its interface counters.
fn with_mirror_counters(stats: &mut SwitchStats, mirrors: &MirrorStats, runtime: &Runtime) {
    for (name, port) in runtime.interface_names().iter().zip(mirrors.iter()) {
        if let Some(i) = stats.interfaces.get_mut(name) {
            i.from_kernel = port.from_kernel.load(Ordering::Relaxed);
            i.from_kernel_dropped = port.from_kernel_dropped.load(Ordering::Relaxed);
            i.to_kernel_dropped = port.to_kernel_dropped.load(Ordering::Relaxed);
        }
    }
}

fn log_reload(reply: &ReloadReply) {
    for m in &reply.messages {
        if reply.applied {
            tracing::info!("reload: {m}");
        } else {
            tracing::error!("reload: {m}");
        }
    }
}

/// Parses `--cores 0,1` or `--cores 2-3` into a core list.
///
/// # Errors
/// A message naming the part that is not a number or range.
pub fn parse_cores(s: &str) -> Result<Vec<usize>, String> {
    let mut cores = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || format!("invalid core list {s:?}: expected e.g. 1,2 or 2-3");
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (usize, usize) = (
                    a.trim().parse().map_err(|_| bad())?,
                    b.trim().parse().map_err(|_| bad())?,
                );
                if a > b {
                    return Err(bad());
                }
                cores.extend(a..=b);
            }
            None => cores.push(part.parse().map_err(|_| bad())?),
        }
    }
    Ok(cores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_lists() {
        assert_eq!(parse_cores("0,1").unwrap(), vec![0, 1]);
        assert_eq!(parse_cores("2-4").unwrap(), vec![2, 3, 4]);
        assert!(parse_cores("a").is_err());
        assert!(parse_cores("3-1").is_err());
    }

    #[test]
    fn af_xdp_on_a_missing_interface_says_so() {
        let Err(e) = open_backend("Ethernet1/1", &Bind::AfXdp("ry-no-such0".into()), None) else {
            panic!("opened a missing interface");
        };
        assert!(e.contains("af-xdp ry-no-such0"), "{e}");
        assert!(e.contains("does the interface exist"), "{e}");
    }
}
