//! The `railyard` command line.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

mod show_words;
use railyard_control::live::{parse_cores, run, Routing, RunOptions};
use railyard_control::monitor::{self, MonitorReply};
use railyard_control::{demo, load_config, mgmt, replay, show, Loaded};
use railyard_dataplane::runtime::{PollMode, RuntimeOptions};
use show_words::{
    BfdWhat, BriefWhat, HardwareWhat, IpWhat, Ipv6What, NeighborWhat, ProfileWhat, SessionWhat,
    SummaryWhat,
};

/// A software switch for AI-fabric labs: RoCEv2 QoS, ECN, PFC and load
/// balancing configured in the NX-OS language.
#[derive(Parser)]
#[command(name = "railyard", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Poll {
    /// Spin on every worker core.
    Busy,
    /// Spin, then sleep while idle.
    Adaptive,
}

/// `railyard run --routing`.
#[derive(Clone, Copy, ValueEnum)]
enum RoutingArg {
    /// `frr` when the configuration has `router bgp`, else `off`.
    Auto,
    /// Configured routes only.
    Off,
    /// Mirror interfaces and the kernel's routing table, no FRR.
    Kernel,
    /// Mirrors, the kernel's routing table, and FRR started with the switch.
    Frr,
}

#[derive(Subcommand)]
enum Command {
    /// Run the live switch on the ports its configuration binds.
    Run {
        /// NX-OS style configuration file.
        #[arg(long, short)]
        config: PathBuf,
        /// Management socket for `railyard show`.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
        /// Cores to pin poll-mode workers to, e.g. `1` or `1,2` or `2-3`;
        /// one worker per core. Without it, one unpinned worker.
        #[arg(long)]
        cores: Option<String>,
        /// How workers wait when idle.
        #[arg(long, value_enum, default_value = "adaptive")]
        poll: Poll,
        /// Treat unsupported configuration sections as errors.
        #[arg(long)]
        strict: bool,
        /// Routing through the kernel: `frr` creates mirror interfaces,
        /// follows the kernel's routes and starts FRR with the `router bgp`
        /// section; `kernel` the same without FRR (`ip route`, BIRD);
        /// `auto` is `frr` when the configuration has `router bgp`.
        #[arg(long, value_enum, default_value = "auto")]
        routing: RoutingArg,
        /// Serve Prometheus metrics on `GET /metrics` at ADDR:PORT, e.g.
        /// `127.0.0.1:9417` (port 0 picks a free port, logged at startup).
        #[arg(long, value_name = "ADDR:PORT")]
        metrics: Option<std::net::SocketAddr>,
        /// Wait up to S seconds for the interfaces the configuration binds
        /// to appear before opening them (in a container, containerlab
        /// attaches `eth1`, `eth2`, … after the switch starts); without it
        /// a missing interface is an error at once.
        #[arg(long, value_name = "S")]
        wait_ports: Option<u64>,
        /// Let the members of group NAME use the management socket too
        /// (mode 0660); without it the socket is owner-only (0600).
        #[arg(long, value_name = "NAME")]
        socket_group: Option<String>,
        /// `reload FILE` through the management socket reads only files
        /// inside DIR (`..` and symlinks leading out are refused). Without
        /// it, `reload FILE` reads any file the switch's user may read.
        #[arg(long, value_name = "DIR")]
        config_dir: Option<PathBuf>,
    },
    /// Replay pcap traces through the switch in virtual time.
    Replay(railyard_control::replay::cli::ReplayArgs),
    /// Run a collective or flows over a lab topology in virtual time:
    /// railyard switches, RoCEv2 endpoints with DCQCN, cables with delay.
    Sim(railyard_control::sim::cli::SimArgs),
    /// The NICs' DCQCN parameters (ConnectX names and defaults), or an
    /// override file for `sim --dcqcn-params` to start from.
    Dcqcn(railyard_control::sim::cli::DcqcnArgs),
    /// Run the embedded rail-switch demo (no root, no files).
    Demo {
        /// RoCEv2 packets each of the three senders sends.
        #[arg(long, default_value_t = 20_000)]
        packets: u64,
        /// Print every counter, the summary and the narrative as JSON
        /// instead of tables (saved, `railyard show … --stats FILE` reads it).
        #[arg(long)]
        json: bool,
        /// Where the demo's plots go (as `replay --plot`). By default a
        /// `railyard-demo-plots` directory in the system's temporary
        /// directory, overwritten on every run, so the demo leaves nothing in
        /// the current directory.
        #[arg(long, value_name = "DIR")]
        plot: Option<PathBuf>,
        /// Write no plots.
        #[arg(long, conflicts_with = "plot")]
        no_plot: bool,
    },
    /// Check a configuration file and print what it compiles to.
    Check {
        /// NX-OS style configuration file.
        config: PathBuf,
        /// Treat unsupported configuration sections as errors.
        #[arg(long)]
        strict: bool,
        /// Print the diagnostics and the compiled model as JSON.
        #[arg(long, conflicts_with = "frr")]
        json: bool,
        /// Print the FRR configuration (zebra, bgpd, bfdd) that the routing
        /// sections (`router bgp`, `route-map`, prefix-lists, `bfd
        /// interval`) translate to, ports named as in Linux (`Eth1-1`).
        #[arg(long)]
        frr: bool,
    },
    /// Make a running switch re-read its configuration (as SIGHUP does), or
    /// load FILE instead. A configuration with errors is rejected and the
    /// running one stays.
    Reload {
        /// Configuration to load instead of the one the switch started with;
        /// the switch reads it (as its own user), and only from inside its
        /// `--config-dir` when it runs with one.
        file: Option<PathBuf>,
        /// Management socket of the switch.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// Send RoCEv2-like UDP datagrams (BTH payload, DSCP and ECN set)
    /// through the kernel stack, paced, e.g. from a lab host.
    Send(railyard_control::send::SendArgs),
    /// Lab topologies on network namespaces: build, inspect and remove
    /// fabrics of railyard switches and kernel hosts (needs root).
    Lab(railyard_control::lab::cli::LabArgs),
    /// One host of a live job (`lab collective`), run in its namespace;
    /// prints the host's outcome as JSON.
    #[command(hide = true)]
    Rank(railyard_control::rank::RankArgs),
    /// Show state of a running switch.
    Show {
        #[command(subcommand)]
        what: ShowWhat,
    },
}

/// Where show commands read the configuration and counters from: a running
/// switch, a configuration file, or the counters a replay or the demo
/// wrote.
#[derive(clap::Args)]
struct ConfigSource {
    /// Read this configuration file instead of asking a running switch.
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Read the counters (and, without --config, the configuration) from
    /// FILE instead of asking a running switch: what `railyard replay …
    /// --stats-json FILE` or `railyard demo --json` wrote.
    #[arg(long, value_name = "FILE")]
    stats: Option<PathBuf>,
    /// Management socket of the running switch to ask.
    #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
    socket: PathBuf,
}

impl ConfigSource {
    /// Counters, for the shows that are nothing without them.
    ///
    /// # Errors
    /// Reading only a configuration file, or the switch cannot be reached.
    fn counters(&self, what: &str) -> Result<railyard_dataplane::stats::SwitchStats, String> {
        self.live_stats()?.ok_or_else(|| {
            format!(
                "{what} shows counters, which a configuration file does not have: ask a running \
                 switch (--socket) or read a replay's (--stats FILE, written by `railyard replay … \
                 --stats-json FILE`)"
            )
        })
    }

    /// Counters of the running switch or of the `--stats` file; `None`
    /// when reading only a configuration file.
    fn live_stats(&self) -> Result<Option<railyard_dataplane::stats::SwitchStats>, String> {
        match (&self.stats, &self.config) {
            (Some(path), _) => replay::read_snapshot(path).map(|s| Some(s.stats)),
            (None, Some(_)) => Ok(None),
            (None, None) => mgmt::fetch_stats(&self.socket).map(Some),
        }
    }

    /// The routes a running switch follows from its kernel, with the
    /// follower's counters; `None` for a file, or a switch that follows none.
    fn kernel_routes(
        &self,
    ) -> Result<Option<railyard_control::routing::kernel_fib::KernelRoutesReply>, String> {
        if self.config.is_some() || self.stats.is_some() {
            return Ok(None);
        }
        let reply: railyard_control::routing::kernel_fib::KernelRoutesReply =
            mgmt::request(&self.socket, "kernel-routes")?;
        Ok((reply.counters.fib_updates > 0).then_some(reply))
    }

    /// The configuration, from the file, the `--stats` file or the running
    /// switch.
    fn load(&self) -> Result<railyard_config::Config, String> {
        let (text, origin) = match (&self.config, &self.stats) {
            (Some(path), _) => return Ok(load_config(path, false)?.config),
            (None, Some(path)) => {
                let text = replay::read_snapshot(path)?.running_config.ok_or_else(|| {
                    format!(
                        "{} has counters but no configuration: give the one it ran with (--config FILE)",
                        path.display()
                    )
                })?;
                (text, format!("{} (running-config)", path.display()))
            }
            (None, None) => (mgmt::fetch_config(&self.socket)?, "running-config".into()),
        };
        let parsed =
            railyard_config::parse_str(&text, &origin, &railyard_config::ParseOptions::default())
                .map_err(|d| railyard_control::format_diagnostics(&d))?;
        Ok(parsed.config)
    }
}

#[derive(Subcommand)]
enum ShowWhat {
    /// `show ip route`: the IPv4 routing table in the NX-OS layout, ECMP and
    /// DLB groups marked, per-member counters from a running switch; `show
    /// ip load-sharing`: the ECMP hash (IPv4 and IPv6) fields, seed and
    /// rotation in force, and a DLB summary.
    Ip {
        /// `route` or `load-sharing`.
        what: IpWhat,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        source: ConfigSource,
    },
    /// `show mac address-table [vlan N]`: the addresses the switchports
    /// learned (and static ones), with VLAN, type, age and port, from a
    /// running switch.
    Mac {
        /// `address-table`, optionally followed by `vlan N`.
        #[arg(num_args = 1..=3, required = true)]
        args: Vec<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Management socket of the running switch to ask.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// `show vlan [brief]`: each VLAN, its name and its access ports
    /// (`show vlan` also lists the trunks carrying each and, from a running
    /// switch, what entered each VLAN and where it went), from a running
    /// switch or a configuration file.
    Vlan {
        /// `brief` for the one table.
        what: Option<BriefWhat>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        source: ConfigSource,
    },
    /// `show port-channel summary`: each port-channel, routed or switched,
    /// up or down, its protocol and its members' state, from a running
    /// switch.
    PortChannel {
        /// `summary`.
        what: SummaryWhat,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Management socket of the running switch to ask.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// `show monitor session [N]`: the monitor (SPAN) sessions of a running
    /// switch: state, sources, destination, frames copied and dropped.
    Monitor {
        /// `session`.
        what: SessionWhat,
        /// One session (1-18); all when left out.
        id: Option<u8>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Management socket of the running switch to ask.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// `show lacp neighbor`: each port-channel member's LACP partner
    /// (system, port, age, fast/slow and active/passive, key and state).
    Lacp {
        /// `neighbor`.
        what: NeighborWhat,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Management socket of the running switch to ask.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// `show ipv6 route`: the IPv6 routing table, like `show ip route`.
    Ipv6 {
        /// `route`.
        what: Ipv6What,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        source: ConfigSource,
    },
    /// BGP from the switch's FRR: `show bgp summary`, `show bgp ipv4|ipv6
    /// unicast [summary] [PREFIX]`, in the NX-OS layout.
    Bgp {
        /// `summary`, or `ipv4 unicast` / `ipv6 unicast` [`summary` | PREFIX].
        #[arg(num_args = 1..=4, required = true)]
        args: Vec<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Management socket of the running switch to ask.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// `show bfd neighbors`: the BFD sessions of the switch's FRR.
    Bfd {
        /// `neighbors`.
        what: BfdWhat,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Management socket of the running switch to ask.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// `show hardware profile dlb`: the dynamic load balancing settings, the
    /// dlb-interfaces and, from a running switch, per DLB group the members'
    /// port quality, load and counters.
    Hardware {
        /// `profile`.
        #[arg(value_name = "PROFILE")]
        what: HardwareWhat,
        /// `dlb`.
        #[arg(value_name = "FEATURE")]
        profile: ProfileWhat,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        source: ConfigSource,
    },
    /// The canonical NX-OS text of what railyard understood; feeding it back
    /// in gives the same configuration.
    #[command(name = "running-config")]
    RunningConfig {
        #[command(flatten)]
        source: ConfigSource,
    },
    /// `show queuing interface NAME`: egress scheduling, ingress PFC
    /// thresholds and per-qos-group counters and wait times; `show queuing
    /// pfc-queue [interface NAME]`: the PFC watchdog per lossless queue.
    Queuing {
        /// `interface NAME`, or `pfc-queue [interface NAME]`.
        #[arg(num_args = 1..=3, required = true)]
        args: Vec<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// With `interface NAME`: draw the last minute of one of its queues,
        /// as a running switch sampled it, to this SVG (`--json`: print the
        /// samples too).
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        /// The queue --plot draws (default: the one with the most ECN marks
        /// and PFC frames, then the deepest).
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(0..8))]
        queue: Option<u8>,
        #[command(flatten)]
        source: ConfigSource,
    },
    /// Class-maps, in the NX-OS layout.
    #[command(name = "class-map")]
    ClassMap {
        /// Only this class-map.
        name: Option<String>,
        #[command(flatten)]
        source: ConfigSource,
    },
    /// Policy-maps (`show policy-map [NAME]`), or the policies in force on
    /// an interface with its queue counters (`show policy-map interface NAME`).
    #[command(name = "policy-map")]
    PolicyMap {
        /// `NAME`, or `interface NAME`.
        #[arg(num_args = 0..=2)]
        args: Vec<String>,
        #[command(flatten)]
        source: ConfigSource,
    },
    /// LLDP of a running switch: `show lldp neighbors [detail]` (the
    /// neighbour table, or a block per neighbour with its TLVs and DCBX),
    /// `show lldp dcbx interface NAME` (local, peer and operational
    /// ETS/PFC/APP) and `show lldp traffic` (frame and TLV counters).
    Lldp {
        /// `neighbors [detail]`, `dcbx interface NAME` or `traffic`.
        #[arg(num_args = 1..=3, required = true)]
        args: Vec<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        /// A replay's counters file: refused with the reason (a replay runs
        /// no LLDP agent, so it has no LLDP state to show).
        #[arg(long, value_name = "FILE")]
        stats: Option<PathBuf>,
        /// Management socket of the switch.
        #[arg(long, default_value = mgmt::DEFAULT_SOCKET)]
        socket: PathBuf,
    },
    /// Interfaces with their counters, drops and queues; `show interface
    /// priority-flow-control [detail]` for PFC per port.
    Interface {
        /// One interface, e.g. Ethernet1/1 (also eth1/1, e1/1), or
        /// `priority-flow-control`.
        name: Option<String>,
        /// With `priority-flow-control`: `detail` for per-priority counts.
        detail: Option<String>,
        /// JSON instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        source: ConfigSource,
    },
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        // Colour only on a terminal: logs in files (a lab's SWITCH.log) stay plain.
        .with_ansi(
            std::io::IsTerminal::is_terminal(&std::io::stderr())
                && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        )
        .init();
    let cli = Cli::parse();
    let mut out = Stdout {
        inner: std::io::stdout().lock(),
        closed: false,
    };
    let result =
        dispatch(cli.command, &mut out).and_then(|()| out.flush().map_err(|e| e.to_string()));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`railyard show … | head`): what it wanted
        // it has, so end quietly and successfully, as GNU tools do.
        Err(_) if out.closed => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{msg}");
            ExitCode::FAILURE
        }
    }
}

/// Standard output that notes when its reader has gone away, so a closed
/// pipe ends the command quietly instead of as an error.
struct Stdout {
    inner: std::io::StdoutLock<'static>,
    /// A write or flush failed with `BrokenPipe`.
    closed: bool,
}

impl Stdout {
    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                self.closed = true;
            }
        }
        r
    }
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.note(r)
    }
}

fn load(path: &Path, strict: bool) -> Result<Loaded, String> {
    let loaded = load_config(path, strict)?;
    for w in &loaded.warnings {
        eprintln!("{w}");
    }
    Ok(loaded)
}

fn print_json(out: &mut dyn Write, v: &serde_json::Value) -> Result<(), String> {
    writeln!(out, "{}", show::json_text(v)).map_err(|e| e.to_string())
}

/// `show ip route`, `show ipv6 route` (`v6`) and `show ip load-sharing`
/// (`load_sharing`), from a file or a running switch (with its counters).
fn show_routing(
    out: &mut dyn Write,
    load_sharing: bool,
    v6: bool,
    json: bool,
    source: &ConfigSource,
) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let config = source.load()?;
    let mut lb = show::lb::LoadBalancing::new(&config)?;
    let kernel = source.kernel_routes()?;
    if let Some(k) = &kernel {
        lb = lb.with_kernel_routes(k.routes.iter().map(|r| r.route()).collect());
    }
    if load_sharing {
        let v = show::lb::load_sharing(&lb);
        return if json {
            print_json(out, &serde_json::to_value(&v).map_err(|e| e.to_string())?)
        } else {
            show::lb::render_load_sharing(out, &v).map_err(io)
        };
    }
    let stats = source.live_stats()?;
    let routes = show::lb::routes(&lb, v6, stats.as_ref());
    let counters = kernel.map(|k| k.counters);
    if json {
        let mut v = show::lb::routes_json(&routes);
        if let Some(c) = &counters {
            v["kernel_routes"] = serde_json::to_value(c).map_err(|e| e.to_string())?;
        }
        print_json(out, &v)
    } else {
        show::lb::render_routes(out, v6, &routes).map_err(io)?;
        match &counters {
            Some(c) => show::lb::render_kernel_counters(out, c).map_err(io),
            None => Ok(()),
        }
    }
}

fn dispatch(cmd: Command, mut out: &mut Stdout) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    match cmd {
        Command::Lab(args) => railyard_control::lab::cli::dispatch(args, &mut out),
        Command::Sim(args) => railyard_control::sim::cli::dispatch(args, &mut out),
        Command::Dcqcn(args) => railyard_control::sim::cli::dcqcn(args, &mut out),
        Command::Rank(args) => {
            let outcome = railyard_control::rank::run(&args)?;
            let text = serde_json::to_string(&outcome).map_err(|e| e.to_string())?;
            writeln!(out, "{text}").map_err(io)
        }
        Command::Run {
            config,
            socket,
            cores,
            poll,
            strict,
            routing,
            metrics,
            wait_ports,
            socket_group,
            config_dir,
        } => {
            let socket_group = socket_group
                .as_deref()
                .map(mgmt::Group::lookup)
                .transpose()?;
            let config_dir = config_dir
                .map(|d| match d.canonicalize() {
                    Ok(c) if c.is_dir() => Ok(c),
                    Ok(_) => Err(format!("--config-dir {}: not a directory", d.display())),
                    Err(e) => Err(format!("--config-dir {}: {e}", d.display())),
                })
                .transpose()?;
            let loaded = load(&config, strict)?;
            if let Some(s) = wait_ports {
                railyard_control::live::wait_for_ports(
                    &loaded.compiled,
                    std::time::Duration::from_secs(s),
                )?;
            }
            let cores = cores
                .as_deref()
                .map(parse_cores)
                .transpose()?
                .unwrap_or_default();
            let opts = RunOptions {
                config: std::path::absolute(&config).unwrap_or(config),
                strict,
                socket,
                runtime: RuntimeOptions {
                    workers: cores.len().max(1),
                    cores,
                    poll: match poll {
                        Poll::Busy => PollMode::Busy,
                        Poll::Adaptive => PollMode::Adaptive,
                    },
                    mirrors: false,
                },
                routing: match routing {
                    RoutingArg::Auto => Routing::for_config(&loaded.config),
                    RoutingArg::Off => Routing::Off,
                    RoutingArg::Kernel => Routing::Kernel,
                    RoutingArg::Frr => Routing::Frr,
                },
                metrics,
                socket_group,
                config_dir,
            };
            let stats = run(loaded, &opts)?;
            writeln!(out, "final counters:").map_err(io)?;
            show::render_summary(&mut out, &stats).map_err(io)
        }
        Command::Replay(args) => replay::cli::dispatch(args, &mut out),
        Command::Demo {
            packets,
            json,
            plot,
            no_plot,
        } => {
            // Plots only with the tables: --json prints one document.
            let plot = (!json && !no_plot)
                .then(|| plot.unwrap_or_else(|| std::env::temp_dir().join("railyard-demo-plots")));
            if let Some(d) = &plot {
                railyard_control::replay_plot::prepare_dir(d)?;
            }
            let every = plot
                .as_ref()
                .map(|_| railyard_control::replay_plot::DEFAULT_PLOT_EVERY);
            let (sw, report) = demo::run_demo_sampled(packets, every)?;
            if json {
                // The counters, with the summary and the narrative, and
                // the configuration so `show … --stats FILE` reads it.
                let summary = replay::Summary::of(&report.stats, report.virtual_ns);
                let mut narrative = Vec::new();
                demo::explain(&mut narrative, &sw, &report.stats).map_err(io)?;
                let narrative = String::from_utf8_lossy(&narrative);
                let running_config = demo::demo_config()?.to_string();
                let s = serde_json::to_string_pretty(&replay::SnapshotJson {
                    stats: show::StatsJson(&report.stats),
                    summary: Some(&summary),
                    narrative: Some(narrative.trim()),
                    running_config: Some(&running_config),
                    lldp: None,
                })
                .map_err(|e| e.to_string())?;
                return writeln!(out, "{s}").map_err(io);
            }
            writeln!(
                out,
                "railyard demo: rail switch {} with {} interfaces, synthetic RoCEv2 incast (DSCP 24),\nCNPs (DSCP 48) and best-effort traffic, replayed in virtual time.\n",
                sw.model.hostname,
                sw.model.interfaces.len()
            )
            .map_err(io)?;
            replay::print_summary(&mut out, &report).map_err(io)?;
            demo::explain(&mut out, &sw, &report.stats).map_err(io)?;
            if let (Some(d), Some(data)) = (&plot, &report.plot) {
                let files = railyard_control::replay_plot::write_all(d, data)?;
                writeln!(out).map_err(io)?;
                railyard_control::replay_plot::print_written(&mut out, d, data, files.len())
                    .map_err(io)?;
            }
            Ok(())
        }
        Command::Check {
            config,
            strict,
            json: true,
            ..
        } => {
            let (ok, text) = railyard_control::check_json(&config, strict);
            writeln!(out, "{text}").map_err(io)?;
            if ok {
                Ok(())
            } else {
                Err(format!("{}: configuration has errors", config.display()))
            }
        }
        Command::Check {
            config,
            strict,
            frr: true,
            ..
        } => {
            let loaded = load(&config, strict)?;
            let text = railyard_control::routing::frr::frr_config(
                &loaded.config,
                railyard_control::routing::frr::linux_name,
            );
            write!(out, "{text}").map_err(io)
        }
        Command::Check { config, strict, .. } => {
            let compiled = load(&config, strict)?.compiled;
            let m = &compiled.model;
            writeln!(
                out,
                "{}: {} interfaces, {} static route groups",
                m.hostname,
                m.interfaces.len(),
                m.routes.len()
            )
            .map_err(io)?;
            let (fib, warnings) = railyard_dataplane::fib::Fib::build(m);
            for w in warnings {
                writeln!(out, "warning: route {}: {}", w.route, w.message).map_err(io)?;
            }
            for ifc in &m.interfaces {
                writeln!(
                    out,
                    "  {:<14} mac {} mtu {}{}",
                    ifc.name,
                    ifc.mac,
                    ifc.mtu,
                    if ifc.admin_up { "" } else { " (shutdown)" }
                )
                .map_err(io)?;
            }
            writeln!(out, "{} routes installed", fib.routes().len()).map_err(io)
        }
        Command::Send(args) => railyard_control::send::run(&args, &mut out).map(|_| ()),
        Command::Reload { file, socket } => {
            // A relative path means relative to where this command runs.
            let file = file.map(|f| std::path::absolute(&f).unwrap_or(f));
            let reply = mgmt::reload(&socket, file.as_deref())?;
            for m in &reply.messages {
                if reply.applied {
                    writeln!(out, "{m}").map_err(io)?;
                } else {
                    eprintln!("{m}");
                }
            }
            if reply.applied {
                Ok(())
            } else {
                Err("reload rejected".to_string())
            }
        }
        Command::Show {
            what: ShowWhat::RunningConfig { source },
        } => {
            let config = source.load()?;
            write!(out, "{config}").map_err(io)
        }
        Command::Show {
            what:
                ShowWhat::Queuing {
                    args,
                    json,
                    plot,
                    queue,
                    source,
                },
        } => {
            let config = source.load()?;
            if plot.is_some() && args.first().map(String::as_str) != Some("interface") {
                return Err(
                    "--plot draws an interface's queues: show queuing interface NAME --plot FILE"
                        .into(),
                );
            }
            match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
                ["interface", name] => {
                    let ifname = show::qos::find_interface(&config, name)?;
                    let eq = config.effective_qos(&ifname);
                    let live = source.live_stats()?;
                    let gaps = live
                        .as_ref()
                        .map(|s| s.poll_gaps.clone())
                        .unwrap_or_default();
                    let stats = live.and_then(|mut s| s.interfaces.remove(&ifname.to_string()));
                    let compiled = railyard_control::compile::compile(&config)
                        .map_err(|d| railyard_control::format_diagnostics(&d))?;
                    let model = compiled
                        .model
                        .interfaces
                        .iter()
                        .find(|i| i.name == ifname.to_string())
                        .cloned()
                        .map(|mut i| {
                            // The lossless groups as configured, `auto` included
                            // (off in the model until DCBX agrees): their
                            // thresholds are the ones in force once it does.
                            i.pfc.enabled_priorities =
                                railyard_control::compile::lossless_priorities(&eq);
                            i
                        });
                    if let Some(file) = &plot {
                        let ring = railyard_control::queue_ring::fetch(
                            &source.socket,
                            &ifname.to_string(),
                        )?;
                        let q = queue.map_or_else(
                            || railyard_control::queue_ring::busiest_queue(&ring, model.as_ref()),
                            usize::from,
                        );
                        railyard_control::queue_ring::write_plot(&ring, q, model.as_ref(), file)?;
                        if json {
                            let v = serde_json::to_value(&ring).map_err(|e| e.to_string())?;
                            return print_json(&mut out, &v);
                        }
                        let span = match (ring.samples.first(), ring.samples.last()) {
                            (Some(a), Some(b)) => (b.t_ms - a.t_ms) as f64 / 1e3,
                            _ => 0.0,
                        };
                        return writeln!(
                            out,
                            "wrote {}: queue {q} of {ifname}, {} samples over the last {span:.1} s",
                            file.display(),
                            ring.samples.len()
                        )
                        .map_err(io);
                    }
                    let pfc = model.as_ref().map(|i| i.pfc).unwrap_or_default();
                    let ifc = config.interface_by_name(&ifname);
                    let configured = ifc.map(|i| i.pfc_delays).unwrap_or_default();
                    let software =
                        railyard_control::compile::software_path(ifc.and_then(|i| i.bind.as_ref()));
                    let response = model.as_ref().and_then(|m| {
                        show::qos::response(m, &configured, software, stats.as_ref(), &gaps)
                    });
                    if json {
                        let mut v = show::qos::queuing_json(&eq, stats.as_ref());
                        v["ingress"] = serde_json::json!((0..8)
                            .filter(|q| pfc.enabled_priorities & (1 << q) != 0)
                            .map(|q| serde_json::json!({
                                "qos_group": q,
                                "xoff_bytes": pfc.pg[q].xoff_bytes,
                                "xon_bytes": pfc.pg[q].xon_bytes,
                                "headroom_bytes": pfc.pg[q].headroom_bytes,
                            }))
                            .collect::<Vec<_>>());
                        if let Some(r) = response {
                            v["response"] = serde_json::json!(r);
                        }
                        print_json(&mut out, &v)
                    } else {
                        show::qos::render_queuing(&mut out, &eq, stats.as_ref()).map_err(io)?;
                        show::qos::render_ingress(
                            &mut out,
                            &ifname.to_string(),
                            &pfc,
                            stats.as_ref(),
                        )
                        .map_err(io)?;
                        match response {
                            Some(r) => show::qos::render_response(&mut out, &r).map_err(io),
                            None => Ok(()),
                        }
                    }
                }
                ["pfc-queue", ref rest @ ..] => {
                    let only = match rest {
                        [] => None,
                        ["interface", name] => Some(show::qos::find_interface(&config, name)?),
                        _ => return Err("usage: show queuing pfc-queue [interface NAME]".into()),
                    };
                    let stats = source.live_stats()?.unwrap_or_default();
                    if json {
                        let v = show::qos::pfc_queue_json(&config, &stats, only.as_ref());
                        print_json(&mut out, &v)
                    } else {
                        show::qos::render_pfc_queue(&mut out, &config, &stats, only.as_ref())
                            .map_err(io)
                    }
                }
                _ => Err(
                    "usage: show queuing interface NAME | show queuing pfc-queue [interface NAME]"
                        .into(),
                ),
            }
        }
        Command::Show {
            what: ShowWhat::Ip { what, json, source },
        } => show_routing(&mut out, what == IpWhat::LoadSharing, false, json, &source),
        Command::Show {
            what: ShowWhat::Ipv6 { json, source, .. },
        } => show_routing(&mut out, false, true, json, &source),
        Command::Show {
            what: ShowWhat::Vlan { what, json, source },
        } => {
            let config = source.load()?;
            let compiled = railyard_control::compile::compile(&config)
                .map_err(|d| railyard_control::format_diagnostics(&d))?;
            let live = source.live_stats()?;
            let detail = what != Some(BriefWhat::Brief);
            let text = show::l2::vlan_text(&config, &compiled.model, live.as_ref(), detail, json);
            write!(out, "{text}").map_err(io)
        }
        Command::Show {
            what: ShowWhat::PortChannel { json, socket, .. },
        } => {
            let reply = mgmt::request(&socket, "lacp")?;
            write!(out, "{}", show::l2::lacp_text(&reply, true, json)).map_err(io)
        }
        Command::Show {
            what: ShowWhat::Monitor {
                id, json, socket, ..
            },
        } => {
            let mut reply: MonitorReply = mgmt::request(&socket, "monitor")?;
            if json {
                reply.sessions.retain(|s| id.is_none_or(|id| s.id == id));
                let v = serde_json::to_value(&reply).unwrap_or_default();
                writeln!(out, "{}", show::json_text(&v)).map_err(io)
            } else {
                write!(out, "{}", monitor::render(&reply, id)).map_err(io)
            }
        }
        Command::Show {
            what: ShowWhat::Lacp { json, socket, .. },
        } => {
            let reply = mgmt::request(&socket, "lacp")?;
            write!(out, "{}", show::l2::lacp_text(&reply, false, json)).map_err(io)
        }
        Command::Show {
            what: ShowWhat::Mac { args, json, socket },
        } => {
            let vlan = show::l2::mac_table_vlan(&args)?;
            let stats = mgmt::fetch_stats(&socket)?;
            write!(out, "{}", show::l2::mac_table_text(&stats, vlan, json)).map_err(io)
        }
        Command::Show {
            what: ShowWhat::Hardware { json, source, .. },
        } => {
            let config = source.load()?;
            let lb = show::lb::LoadBalancing::new(&config)?;
            // Without DLB there is nothing to show counters under.
            let stats = match config.dlb {
                Some(_) => source.live_stats()?,
                None => None,
            };
            let view = show::lb::dlb(&lb, stats.as_ref());
            if json {
                print_json(&mut out, &show::lb::dlb_json(view.as_ref()))
            } else {
                show::lb::render_dlb(&mut out, view.as_ref()).map_err(io)
            }
        }
        Command::Show {
            what: ShowWhat::ClassMap { name, source },
        } => {
            let config = source.load()?;
            if let Some(n) = &name {
                if config.class_map(n).is_none() {
                    return Err(format!("class-map {n} is not configured"));
                }
            }
            show::qos::render_class_maps(&mut out, &config, name.as_deref()).map_err(io)
        }
        Command::Show {
            what: ShowWhat::PolicyMap { args, source },
        } => {
            let config = source.load()?;
            match args.as_slice() {
                [kw, ifname] if kw == "interface" => {
                    let name = show::qos::find_interface(&config, ifname)?;
                    let eq = config.effective_qos(&name);
                    let stats = source
                        .live_stats()?
                        .and_then(|mut s| s.interfaces.remove(&name.to_string()));
                    show::qos::render_policy_map_interface(&mut out, &config, &eq, stats.as_ref())
                        .map_err(io)
                }
                [kw] if kw == "interface" => {
                    Err("show policy-map interface NAME: name the interface".into())
                }
                [name] => {
                    let known = config.qos_policy(name).is_some()
                        || config.queuing_policy(name).is_some()
                        || config.network_qos_policy(name).is_some();
                    if !known {
                        return Err(format!("policy-map {name} is not configured"));
                    }
                    show::qos::render_policy_maps(&mut out, &config, Some(name)).map_err(io)
                }
                [] => show::qos::render_policy_maps(&mut out, &config, None).map_err(io),
                _ => Err("usage: show policy-map [NAME | interface NAME]".into()),
            }
        }
        Command::Show {
            what:
                ShowWhat::Lldp {
                    args,
                    json,
                    stats,
                    socket,
                },
        } => show_lldp_cmd(&mut out, &args, json, || match &stats {
            Some(path) => replay::read_snapshot(path)?.lldp.ok_or_else(|| {
                format!(
                    "show lldp: {} holds no LLDP agent's view (the demo runs none; a replay \
                     writes one with --stats-json)",
                    path.display()
                )
            }),
            None => show::lldp::fetch_lldp(&socket),
        }),
        Command::Show {
            what: ShowWhat::Bgp { args, json, socket },
        } => show::bgp::show_bgp_cmd(&mut out, &args, json, &socket),
        Command::Show {
            what:
                ShowWhat::Bfd {
                    what: BfdWhat::Neighbors,
                    json,
                    socket,
                },
        } => show::bgp::show_bfd_cmd(&mut out, json, &socket),
        Command::Show {
            what:
                ShowWhat::Interface {
                    name,
                    detail,
                    json,
                    source,
                },
        } => {
            let stats = source.counters("show interface")?;
            if name.as_deref() == Some("priority-flow-control") {
                // The Mode column is the configured mode, which the
                // counters do not carry.
                let config = source.load()?;
                let modes: std::collections::BTreeMap<String, railyard_config::PfcMode> = config
                    .interfaces
                    .iter()
                    .map(|i| (i.name.to_string(), config.effective_qos(&i.name).pfc_mode))
                    .collect();
                if json {
                    let mut pfc = serde_json::Map::new();
                    for (n, i) in &stats.interfaces {
                        let mut v = serde_json::to_value(&i.pfc).map_err(|e| e.to_string())?;
                        // The configured mode and the state in force, apart:
                        // `auto` is off until a DCBX peer agrees.
                        if let Some(m) = modes.get(n) {
                            v["mode"] = m.keyword().into();
                        }
                        v["oper"] = if show::pfc_oper(i) { "on" } else { "off" }.into();
                        pfc.insert(n.clone(), v);
                    }
                    return print_json(&mut out, &serde_json::json!({ "interfaces": pfc }));
                }
                let detail = match detail.as_deref() {
                    None => false,
                    Some("detail") => true,
                    Some(other) => {
                        return Err(format!("unexpected {other:?}: did you mean `detail`?"))
                    }
                };
                return show::render_pfc(&mut out, &stats, &modes, detail).map_err(io);
            }
            if let Some(extra) = &detail {
                return Err(format!("unexpected {extra:?} after the interface name"));
            }
            let name = name
                .map(|n| {
                    n.parse::<railyard_config::InterfaceName>()
                        .map(|c| c.to_string())
                        .map_err(|e| format!("{n:?}: {e}"))
                })
                .transpose()?;
            if let Some(n) = &name {
                if !stats.interfaces.contains_key(n) {
                    return Err(format!(
                        "interface {n} does not exist on {}",
                        stats.hostname
                    ));
                }
            }
            if json {
                let mut s = stats.clone();
                if let Some(n) = &name {
                    s.interfaces.retain(|k, _| k == n);
                }
                let text = serde_json::to_string_pretty(&show::StatsJson(&s))
                    .map_err(|e| e.to_string())?;
                writeln!(out, "{text}").map_err(io)
            } else {
                show::render_interfaces(&mut out, &stats, name.as_deref()).map_err(io)
            }
        }
    }
}

/// `show lldp …`: fetches an agent's snapshot (a running switch's, or a
/// replay's) and renders the part asked for.
fn show_lldp_cmd(
    out: &mut dyn Write,
    args: &[String],
    json: bool,
    fetch: impl FnOnce() -> Result<railyard_control::lldp::LldpSnapshot, String>,
) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    // The snapshot, its ports in natural order.
    let fetch_lldp = || {
        fetch().map(|mut snap| {
            snap.ports
                .sort_by(|a, b| railyard_control::natural::cmp(&a.name, &b.name));
            snap
        })
    };
    let usage =
        "usage: show lldp neighbors [detail] | show lldp dcbx interface NAME | show lldp traffic";
    match words.as_slice() {
        ["neighbors" | "neighbor", rest @ ..] => {
            let detail = match rest {
                [] => false,
                ["detail"] => true,
                _ => return Err(usage.into()),
            };
            let snap = fetch_lldp()?;
            if json {
                print_json(out, &show::lldp::neighbors_json(&snap))
            } else if detail {
                show::lldp::render_neighbors_detail(out, &snap).map_err(io)
            } else {
                show::lldp::render_neighbors(out, &snap).map_err(io)
            }
        }
        ["dcbx", "interface", name] => {
            let snap = fetch_lldp()?;
            let port = show::lldp::find_port(&snap, name)?;
            if json {
                print_json(out, &show::lldp::dcbx_json(port))
            } else {
                show::lldp::render_dcbx(out, &snap, port).map_err(io)
            }
        }
        ["traffic"] => {
            let snap = fetch_lldp()?;
            if json {
                print_json(out, &show::lldp::traffic_json(&snap))
            } else {
                show::lldp::render_traffic(out, &snap).map_err(io)
            }
        }
        _ => Err(usage.into()),
    }
}
