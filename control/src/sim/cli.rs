//! `railyard sim`'s command line: arguments, running one load-balancing
//! mode or several side by side, and printing tables or JSON.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use railyard_roce::plan::{parse_size, JobOptions};

use std::io::IsTerminal;

use super::{
    csv, plot, read_dcqcn_params, report, simulate, Cc, DataMode, Lb, Progress, SimOptions,
    SimReport,
};
use crate::lab::cli::resolve_topology;

/// `railyard sim TOPOLOGY --workload SPEC`.
#[derive(Debug, Args)]
#[command(after_help = "\
WORKLOADS (SIZE: bytes, or with K, M, G for 2^10, 2^20, 2^30):
  allreduce:SIZE        ring AllReduce (reduce-scatter, then all-gather)
  allgather:SIZE        ring AllGather (SIZE: the gathered buffer)
  reducescatter:SIZE    ring ReduceScatter (SIZE: the input buffer)
  alltoall:SIZE         every rank sends SIZE/ranks to every other rank
  sendrecv:SIZE         rank r sends SIZE to rank r+1
  pipeline:SIZE         rank r sends SIZE to ranks r-1 and r+1 (no wrap)
  training:dp=D,ep=E,pp=P[,iters=N][,compute=DURATION][,grad=SIZE][,tokens=SIZE][,act=SIZE]
                        a training job: D x E x P must be the ranks, E a
                        multiple of the NICs per host. Ranks are numbered
                        stage*D*E + replica*E + expert: an expert group is
                        E/NICs servers (AllToAll of `tokens` per rank,
                        crossing rails), a pipeline and a data-parallel
                        group stay on one rail (each stage sends `act` to
                        its neighbours; AllReduce of `grad`). Each of
                        `iters` iterations (default 2) runs the three
                        phases in turn; on every rank a phase starts
                        `compute` (default 50us) after its previous one
                        ended there. Defaults: grad=16M, tokens=4M, act=1M;
                        a size of 0 leaves its phase out
  incast:SIZE:SRC1,SRC2,...:DST
                        each source sends SIZE to DST (host names mean the
                        host's eth0; `h1.eth1` names another NIC)
  permutation:SIZE[:SEED]
                        every rank sends SIZE to another (a random derangement)

Ranks are one per host NIC, hosts in the topology's order, NIC n on rail n;
rings are rail-aligned (network hops stay on one rail, hops inside a host
use the GPU-to-GPU link).

EXAMPLES:
  railyard sim rail-spine --workload allreduce:64M
  railyard sim single --workload incast:16M:h1,h2,h3:h4 --cc none
  railyard sim rail-spine --workload alltoall:32M --lb ecmp,flowlet,per-packet
  railyard sim rail-spine --workload training:dp=1,ep=4,pp=2,iters=2,compute=20us")]
pub struct SimArgs {
    /// Topology file, or the name of one in scripts/topologies.
    pub topology: String,
    /// What to run (see WORKLOADS below), `SPEC[@START]`; repeat it to run
    /// several workloads in one job (each reported on its own).
    #[arg(long, short, required = true)]
    pub workload: Vec<String>,
    /// Carry real data (written, reduced, checked: `#wrong`), or only the
    /// packets' lengths; `auto` drops data when every rank's buffers
    /// together exceed 2 GiB.
    #[arg(long, value_enum, default_value = "auto")]
    pub data: DataMode,
    /// Congestion control of the NICs.
    #[arg(long, value_enum, default_value = "dcqcn")]
    pub cc: Cc,
    /// DCQCN parameter overrides: `name value` lines, names as ConnectX's
    /// roce_np / roce_rp sysfs files.
    #[arg(long, value_name = "FILE")]
    pub dcqcn_params: Option<PathBuf>,
    /// Load balancing on the leaves (overrides the configuration); several,
    /// comma-separated, run one after another and print side by side.
    #[arg(long, value_enum, value_delimiter = ',')]
    pub lb: Vec<Lb>,
    /// `off` removes PFC from every switch port (to see what DCQCN and
    /// go-back-N do alone).
    #[arg(long, value_parser = ["on", "off"], default_value = "on")]
    pub pfc: String,
    /// Queue pairs per peer pair (NCCL channels).
    #[arg(long, default_value_t = JobOptions::default().channels)]
    pub channels: usize,
    /// Bytes per WRITE within a ring step, e.g. 128K.
    #[arg(long, value_parser = parse_size, default_value = "128K")]
    pub chunk: u64,
    /// NIC line rate in Mb/s (default: each NIC's link speed).
    #[arg(long)]
    pub nic_mbps: Option<u32>,
    /// Retransmission timeout of the queue pairs (go-back-N after this long
    /// without an ACK), e.g. 4ms; default InfiniBand's local ACK timeout 14,
    /// about 67 ms.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub rto: Option<std::time::Duration>,
    /// Virtual time after which the job is reported unfinished, e.g. 2s.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "10s")]
    pub time_limit: std::time::Duration,
    /// Stop at this virtual time, e.g. 1ms, and report what finished by
    /// then (not an error).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub until: Option<std::time::Duration>,
    /// Worker threads, 1 to 64 (default: one per core, fewer for a small
    /// fabric). The results are the same for any number; only the wall
    /// time changes.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub threads: Option<u16>,
    /// Sample an egress queue's depth over time, `SWITCH:INTERFACE:QUEUE`
    /// (repeatable), e.g. leaf1:Ethernet1/33:3.
    #[arg(long = "sample-queue", value_name = "QUEUE")]
    pub sample_queues: Vec<String>,
    /// A link fails at a virtual time and maybe comes back:
    /// `NODE:PORT@DOWN[-UP]`, e.g. rail1:Ethernet1/31@200us-600us
    /// (repeatable). Routes are static, as in the lab: ECMP stops using the
    /// dead port, but switches beyond it do not learn of the failure.
    #[arg(long, value_name = "LINK@TIME")]
    pub fail: Vec<String>,
    /// A link runs slower than the topology says: `NODE:PORT:MBPS`, e.g.
    /// rail1:Ethernet1/31:25000 (repeatable).
    #[arg(long, value_name = "LINK:MBPS")]
    pub degrade: Vec<String>,
    /// Interval of the queue samples, e.g. 1us.
    #[arg(long, value_parser = humantime::parse_duration, default_value = "1us")]
    pub sample_every: std::time::Duration,
    /// Report every egress queue that carried traffic in the JSON
    /// (`queue_stats`): departures per microsecond, mean depth over the
    /// run and mean sojourn, which Little's law ties together (depth =
    /// rate × sojourn). Slows a large run a little.
    #[arg(long)]
    pub queue_stats: bool,
    /// Capture what a switch port sends and receives, `SWITCH:INTERFACE`
    /// (repeatable), e.g. leaf1:Ethernet1/1, into --capture-out.
    #[arg(long, value_name = "SWITCH:INTERFACE", requires = "capture_out")]
    pub capture: Vec<String>,
    /// The pcapng the --capture ports are written to, an interface per
    /// port, stamped with virtual time; with several --lb, one file per
    /// mode (`-MODE` before the extension).
    #[arg(long, value_name = "FILE", requires = "capture")]
    pub capture_out: Option<PathBuf>,
    /// Most frames written per captured port; later ones are counted
    /// (`left_out`) but not written.
    #[arg(long, value_name = "FRAMES", default_value_t = 1_000_000)]
    pub capture_limit: u64,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write one row per flow (FCT, ideal FCT, slowdown) to this CSV file.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write SVG plots into this directory: fct-cdf.svg, uplinks.svg,
    /// pauses.svg and queue-*.svg per --sample-queue.
    #[arg(long, value_name = "DIR")]
    pub svg: Option<PathBuf>,
}

/// Runs `railyard sim`.
///
/// # Errors
///
/// A bad topology, configuration, parameter file or workload, or output
/// that cannot be written.
pub fn dispatch(args: SimArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let path = resolve_topology(&args.topology)?;
    let mut opts = SimOptions {
        workload: args.workload[0].clone(),
        more_workloads: args.workload[1..].to_vec(),
        data: args.data,
        cc: args.cc,
        pfc: args.pfc == "on",
        nic_mbps: args.nic_mbps,
        time_limit_ns: args.time_limit.as_nanos() as u64,
        until_ns: args.until.map(|d| d.as_nanos() as u64),
        sample_queues: args.sample_queues.clone(),
        threads: args.threads.map(usize::from),
        fail: args.fail.clone(),
        degrade: args.degrade.clone(),
        sample_ns: args.sample_every.as_nanos() as u64,
        queue_stats: args.queue_stats,
        capture: args.capture.clone(),
        capture_limit: args.capture_limit,
        rto_ns: args
            .rto
            .map_or(railyard_roce::nic::DEFAULT_RTO_NS, |d| d.as_nanos() as u64),
        job: JobOptions {
            channels: args.channels,
            chunk_bytes: args.chunk as usize,
            ..JobOptions::default()
        },
        ..SimOptions::default()
    };
    if let Some(p) = &args.dcqcn_params {
        opts.dcqcn = read_dcqcn_params(p)?;
    }
    let modes: Vec<Option<Lb>> = if args.lb.is_empty() {
        vec![None]
    } else {
        args.lb.iter().copied().map(Some).collect()
    };
    let mut reports: Vec<(Option<Lb>, SimReport)> = Vec::new();
    for lb in modes {
        opts.lb = lb;
        opts.capture_out = args
            .capture_out
            .as_ref()
            .map(|p| capture_path(p, lb.filter(|_| args.lb.len() > 1)));
        let mut progress = |p: Progress| print_progress(lb, &p);
        let report = simulate(&path, &opts, &mut progress)?;
        if std::io::stderr().is_terminal() {
            // The progress line ends here.
            eprintln!();
        }
        reports.push((lb, report));
    }
    write_files(&args, &reports)?;
    if args.json {
        let s = if reports.len() == 1 {
            serde_json::to_string_pretty(&reports[0].1)
        } else {
            let runs: Vec<serde_json::Value> = reports
                .iter()
                .map(|(lb, r)| {
                    let mut v = serde_json::to_value(r).unwrap_or_default();
                    if let Some(o) = v.as_object_mut() {
                        o.insert("lb".into(), lb.map(Lb::name).into());
                    }
                    v
                })
                .collect();
            serde_json::to_string_pretty(&serde_json::json!({ "runs": runs }))
        }
        .map_err(|e| e.to_string())?;
        return writeln!(out, "{s}").map_err(io);
    }
    for (lb, r) in &reports {
        writeln!(
            out,
            "# railyard sim {} --workload {} --cc {} --lb {} --pfc {}",
            args.topology,
            args.workload.join(" --workload "),
            args.cc.name(),
            lb.map_or("(configured)", Lb::name),
            args.pfc
        )
        .map_err(io)?;
        report::render(out, r).map_err(io)?;
        if let Some(p) = &args.capture_out {
            let file = capture_path(p, lb.filter(|_| args.lb.len() > 1));
            for c in &r.captures {
                writeln!(
                    out,
                    "Captured {}: {} frames to {}{}",
                    c.interface,
                    c.frames,
                    file.display(),
                    if c.left_out > 0 {
                        format!(" ({} more left out past --capture-limit)", c.left_out)
                    } else {
                        String::new()
                    }
                )
                .map_err(io)?;
            }
        }
        writeln!(out).map_err(io)?;
    }
    if reports.len() > 1 {
        side_by_side(out, &reports).map_err(io)?;
    }
    Ok(())
}

/// The capture file of a run: `--capture-out` as given, or with several
/// `--lb` modes the mode's name before the extension (`cap-ecmp.pcapng`).
fn capture_path(p: &std::path::Path, lb: Option<Lb>) -> PathBuf {
    let Some(lb) = lb else {
        return p.to_path_buf();
    };
    let stem = p
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let name = match p.extension() {
        Some(e) => format!("{stem}-{}.{}", lb.name(), e.to_string_lossy()),
        None => format!("{stem}-{}", lb.name()),
    };
    p.with_file_name(name)
}

/// The label of a run in tables, files and plots.
fn label(lb: Option<Lb>) -> &'static str {
    lb.map_or("configured", Lb::name)
}

/// Writes `--csv` and `--svg`.
fn write_files(args: &SimArgs, reports: &[(Option<Lb>, SimReport)]) -> Result<(), String> {
    if let Some(path) = &args.csv {
        let spec = args.workload.join(" ");
        let runs: Vec<csv::CsvRun<'_>> = reports
            .iter()
            .map(|(lb, r)| csv::CsvRun {
                workload: &spec,
                lb: label(*lb),
                report: r,
            })
            .collect();
        let mut text = Vec::new();
        csv::write(&mut text, &runs).map_err(|e| e.to_string())?;
        std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(dir) = &args.svg {
        let runs: Vec<plot::PlotRun<'_>> = reports
            .iter()
            .map(|(lb, r)| plot::PlotRun {
                label: label(*lb),
                report: r,
            })
            .collect();
        plot::write_all(dir, &runs)?;
    }
    Ok(())
}

/// The runs side by side: the collective (a training job's whole step,
/// whose phases have no one busbw), FCT slowdowns, how evenly the uplinks
/// were used, PFC and how deep it went, reordering and drops.
fn side_by_side(out: &mut dyn Write, reports: &[(Option<Lb>, SimReport)]) -> std::io::Result<()> {
    let opt = |v: Option<f64>| v.map_or("-".to_string(), |x| format!("{x:.2}"));
    writeln!(
        out,
        "{:<12} {:>11} {:>11} {:>8} {:>8} {:>9} {:>9} {:>10} {:>6} {:>10} {:>8}",
        "LB",
        "CCT(us)",
        "busbw(GB/s)",
        "FCT p50",
        "FCT p99",
        "Up max/mn",
        "ECN marks",
        "PFC pauses",
        "Tier",
        "Reordered",
        "Drops"
    )?;
    for (lb, r) in reports {
        let (cct, busbw) = match (r.training.first(), r.results.first()) {
            (Some(t), _) => (t.total_us, None),
            (None, Some(res)) => (res.time_us, Some(res.busbw_gbps)),
            (None, None) => (0.0, None),
        };
        let fct = r.fct.overall.as_ref().filter(|a| a.flows > 0);
        writeln!(
            out,
            "{:<12} {:>11.1} {:>11} {:>8} {:>8} {:>9} {:>9} {:>10} {:>6} {:>10} {:>8}",
            label(*lb),
            cct,
            opt(busbw),
            opt(fct.map(|a| a.p50)),
            opt(fct.map(|a| a.p99)),
            opt(r.uplink_imbalance),
            r.fabric.ecn_marked,
            r.fabric.pfc_pause_frames,
            r.deepest_pause_tier
                .map_or("-".to_string(), |t| t.to_string()),
            r.fabric.reordered,
            r.fabric.drops.values().sum::<u64>()
        )?;
    }
    Ok(())
}

/// One progress line on stderr: virtual time (of the target, with
/// `--until`), wall time, ETA, frames moved. On a terminal it rewrites
/// itself; otherwise each report is a line of its own.
fn print_progress(lb: Option<Lb>, p: &Progress) {
    use std::fmt::Write as _;
    let mut line = format!(
        "sim{}: ",
        lb.map_or(String::new(), |l| format!(" [{}]", l.name()))
    );
    let _ = write!(line, "{} virtual", crate::units::duration(p.virtual_ns));
    if let Some(t) = p.target_ns {
        let _ = write!(
            line,
            " of {} ({:.0}%)",
            crate::units::duration(t),
            100.0 * p.virtual_ns as f64 / t.max(1) as f64
        );
    }
    let _ = write!(line, ", wall {:.1} s", p.wall_s);
    if let Some(eta) = p.eta_s() {
        let _ = write!(line, ", ETA {eta:.0} s");
    }
    let _ = write!(line, ", {} frames moved", p.moved);
    if std::io::stderr().is_terminal() {
        eprint!("\r{line}\x1b[K");
    } else {
        eprintln!("{line}");
    }
}

/// `railyard dcqcn`: the DCQCN parameters with their values, or an
/// override file to start from.
#[derive(Debug, Args)]
pub struct DcqcnArgs {
    /// Show these overrides applied (a `--dcqcn-params` file).
    #[arg(long, value_name = "FILE")]
    pub params: Option<PathBuf>,
    /// Print an override file with every parameter, commented, instead.
    #[arg(long)]
    pub template: bool,
    /// Print the parameters as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `railyard dcqcn`.
///
/// # Errors
///
/// A bad parameter file, or output that cannot be written.
pub fn dcqcn(args: DcqcnArgs, out: &mut dyn Write) -> Result<(), String> {
    let io = |e: std::io::Error| e.to_string();
    let params = match &args.params {
        Some(p) => read_dcqcn_params(p)?,
        None => railyard_roce::dcqcn::DcqcnParams::default(),
    };
    if args.template {
        return write!(out, "{}", params.to_override_file()).map_err(io);
    }
    let entries = params.entries();
    if args.json {
        let s = serde_json::to_string_pretty(&entries).map_err(|e| e.to_string())?;
        return writeln!(out, "{s}").map_err(io);
    }
    writeln!(
        out,
        "{:<8} {:<30} {:>8} {:>8}  {:<9} Meaning",
        "Section", "Parameter", "Value", "Default", "Unit"
    )
    .map_err(io)?;
    for e in entries {
        writeln!(
            out,
            "{:<8} {:<30} {:>8} {:>8}  {:<9} {}",
            e.section.name(),
            e.name,
            e.value,
            e.default,
            e.unit,
            e.meaning
        )
        .map_err(io)?;
    }
    Ok(())
}
