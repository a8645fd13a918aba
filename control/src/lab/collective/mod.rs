//! `railyard lab collective` and `railyard lab incast`: a job of RoCEv2
//! endpoints (the `railyard-roce` model) run live, one rank per host NIC,
//! over the lab's railyard switches; and the fabric summary that the live
//! driver and `railyard sim` both print after the nccl-tests table.
//!
//! The lab command plans the job (ranks: hosts in topology order, each
//! host's NICs in `ethN` order, so NIC n of every host is rank-aligned on
//! rail n), writes it to `STATE_DIR/NAME/job.json`, starts one
//! `railyard rank` per host in the host's namespace (see [`crate::rank`]),
//! collects each host's outcome, snapshots the switches' counters before
//! and after, and prints the results.

mod ranks;
mod summary;

pub use ranks::{path_mtu, rank_of, rank_specs, Cc, LiveJob, NicSettings, RankSpec};
pub use summary::{
    tally_since, tally_switch, FabricSummary, JsonReport, LinkPfc, PortTally, SwitchTally,
};

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use railyard_roce::host::HostOutcome;
use railyard_roce::plan::{parse_size, JobOptions, Workload};
use railyard_roce::report::{self};

use super::run::LabState;

/// The line a rank (`railyard rank`) prints on stdout when its part of the
/// job is done; the driver stops every rank once all have printed it.
pub const DONE_LINE: &str = "done";

// ------------------------------------------------------------------ CLI

/// Options of `lab collective` and `lab incast`.
#[derive(Debug, Clone, clap::Args)]
pub struct LiveArgs {
    /// Congestion control of the NICs.
    #[arg(long, value_enum, default_value = "dcqcn")]
    pub cc: Cc,
    /// DCQCN parameters (ConnectX `roce_np`/`roce_rp` names, one `name
    /// value` per line); default ConnectX's defaults.
    #[arg(long, value_name = "FILE")]
    pub dcqcn_params: Option<PathBuf>,
    /// NIC line rate in Mb/s. Live veth cannot carry the topology's
    /// 100 Gb/s; the switches' configured port speeds still shape.
    #[arg(long, default_value_t = 2000, value_name = "MBPS")]
    pub nic_mbps: u64,
    /// Seconds a rank runs before it reports what it has.
    #[arg(long, default_value_t = 60, value_name = "S")]
    pub timeout: u64,
    /// Retransmission timeout in microseconds: go-back-N after this long
    /// without an acknowledgement (default InfiniBand's local ACK timeout
    /// 14, about 67 ms). Live ranks share the cores with the switches, so
    /// round trips of milliseconds happen; much less invites spurious
    /// retransmissions.
    #[arg(long, default_value_t = railyard_roce::nic::DEFAULT_RTO_NS / 1000, value_name = "US")]
    pub rto_us: u64,
    /// Queue pairs per peer pair (NCCL channels).
    #[arg(long, default_value_t = 2)]
    pub channels: usize,
    /// Bytes per WRITE within a ring step (`128K`, `1M`, ...).
    #[arg(long, default_value = "128K", value_name = "SIZE")]
    pub chunk: String,
    /// JSON instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// The workload spec of `lab collective OP SIZE` (`allreduce:16M`).
pub fn collective_spec(op: &str, size: &str) -> String {
    format!("{}:{size}", op.to_ascii_lowercase())
}

/// The workload spec of `lab incast SIZE SRC... DST`.
///
/// # Errors
/// Fewer than two endpoints.
pub fn incast_spec(size: &str, endpoints: &[String]) -> Result<String, String> {
    match endpoints.split_last() {
        Some((dst, srcs)) if !srcs.is_empty() => {
            Ok(format!("incast:{size}:{}:{dst}", srcs.join(",")))
        }
        _ => Err("an incast needs at least one sender and a receiver: SRC... DST".into()),
    }
}

/// Plans a live job on a lab: ranks, workload, NIC settings; MACs are read
/// with `mac_of(namespace, ifname)`.
///
/// # Errors
/// A bad workload spec, options, or a MAC that cannot be read.
pub fn plan_live(
    state: &LabState,
    spec: &str,
    args: &LiveArgs,
    mac_of: &dyn Fn(&str, &str) -> Result<String, String>,
) -> Result<LiveJob, String> {
    let mut ranks = rank_specs(&state.topology)?;
    let workload = Workload::parse(spec, &|n| rank_of(&ranks, n))?;
    for r in &mut ranks {
        r.mac = mac_of(&state.namespace_of(&r.host_name), &r.ifname)?;
    }
    if args.nic_mbps == 0 {
        return Err("--nic-mbps must be at least 1".into());
    }
    let chunk = parse_size(&args.chunk)?;
    if chunk == 0 || args.channels == 0 {
        return Err("--chunk and --channels must be at least 1".into());
    }
    let dcqcn_params = match &args.dcqcn_params {
        Some(p) => Some((
            std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?,
            p.display().to_string(),
        )),
        None => None,
    };
    let nic = NicSettings {
        line_rate_bps: args.nic_mbps.saturating_mul(1_000_000),
        dscp: 24,
        priority: 3,
        ack_every: 16,
        rto_ns: args.rto_us.saturating_mul(1000),
        cc: args.cc,
        dcqcn_params,
    };
    // Fail here, once, rather than in every rank.
    nic.congestion_control()?;
    let job = LiveJob {
        ranks,
        workload,
        options: JobOptions {
            channels: args.channels,
            chunk_bytes: usize::try_from(chunk).map_err(|_| "--chunk too large".to_string())?,
            ..JobOptions::default()
        },
        nic,
        start_unix_ns: 0,
        timeout_ns: args.timeout.saturating_mul(1_000_000_000),
        arp_timeout_ns: 2_000_000_000,
    };
    job.plan()?;
    Ok(job)
}

/// The MAC of `ifname` in namespace `ns`, as `ip` reports it.
///
/// # Errors
/// When `ip` fails or prints no address.
pub fn read_mac(ns: &str, ifname: &str) -> Result<String, String> {
    let out = Command::new("ip")
        .args(["-n", ns, "-j", "link", "show", "dev", ifname])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("ip -n {ns} link show {ifname}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "ip -n {ns} link show {ifname}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("ip -n {ns} link show {ifname}: {e}"))?;
    v[0]["address"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{ns} {ifname}: no MAC address"))
}

fn now_unix_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The rank processes of a job, stopped by PID (SIGTERM, then SIGKILL)
/// when dropped before they finish: on an error or Ctrl-C.
struct Ranks {
    children: Vec<(usize, Child)>,
    readers: Vec<std::thread::JoinHandle<String>>,
}

impl Ranks {
    /// SIGTERM to every rank still running: it prints its outcome and exits.
    fn terminate(&mut self) {
        for (_, c) in &mut self.children {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = Command::new("kill")
                    .args(["-s", "TERM", &c.id().to_string()])
                    .status();
            }
        }
    }

    fn stop(&mut self) {
        self.terminate();
        let deadline = Instant::now() + Duration::from_secs(3);
        for (_, c) in &mut self.children {
            while matches!(c.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(c.try_wait(), Ok(None)) {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

impl Drop for Ranks {
    fn drop(&mut self) {
        self.stop();
    }
}

fn snapshot(state: &LabState) -> BTreeMap<String, SwitchTally> {
    state
        .switches
        .iter()
        .filter_map(|sw| {
            crate::mgmt::fetch_stats(&sw.socket)
                .ok()
                .map(|s| (sw.name.clone(), tally_switch(&s)))
        })
        .collect()
}

/// Runs a live job on lab `state`: `spec` is a workload spec
/// (`allreduce:16M`, `incast:4M:h1,h2:h3`). Prints the nccl-tests table and
/// the fabric summary (or JSON with `args.json`).
///
/// # Errors
/// What failed: planning, a rank's error (its stderr), an interrupt, or a
/// job that did not complete in time (after printing what it did).
pub fn run_live(
    state: &LabState,
    spec: &str,
    args: &LiveArgs,
    out: &mut dyn Write,
) -> Result<(), String> {
    let mut job = plan_live(state, spec, args, &read_mac)?;
    let plan = job.plan()?;
    let exe = std::env::current_exe().map_err(|e| format!("locating railyard: {e}"))?;
    let interrupted = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, Arc::clone(&interrupted)).map_err(|e| e.to_string())?;
    }
    // A second to start every rank and open its ports, then its ARP time.
    job.start_unix_ns = now_unix_ns() + 1_000_000_000 + job.arp_timeout_ns;
    let job_path = state.dir.join("job.json");
    let text = serde_json::to_string_pretty(&job).map_err(|e| e.to_string())?;
    std::fs::write(&job_path, text).map_err(|e| format!("{}: {e}", job_path.display()))?;
    let result = run_ranks(state, &job, &job_path, &exe, &interrupted);
    let _ = std::fs::remove_file(&job_path);
    let (outcomes, before) = result?;
    // Switches publish counters every 100 ms.
    std::thread::sleep(Duration::from_millis(300));
    let after = snapshot(state);
    let mut fabric = FabricSummary::default();
    fabric.add_nics(outcomes.iter().flat_map(|o| o.nics.iter()));
    let mut links = Vec::new();
    for (name, a) in &after {
        let empty = SwitchTally::new();
        links.extend(fabric.add_switch(name, &tally_since(a, before.get(name).unwrap_or(&empty))));
    }
    let result = report::summarise(&plan, &outcomes);
    let results = [result];
    let io = |e: std::io::Error| e.to_string();
    if args.json {
        let text = serde_json::to_string_pretty(&JsonReport::new(&results, &fabric, &links))
            .map_err(|e| e.to_string())?;
        writeln!(out, "{text}").map_err(io)?;
    } else {
        report::render_table(out, &results).map_err(io)?;
        fabric.render(out, &links).map_err(io)?;
    }
    if results.iter().all(|r| r.completed) {
        Ok(())
    } else {
        Err(format!(
            "the job did not complete within --timeout {} s",
            args.timeout
        ))
    }
}

/// Starts one rank process per host, waits until every rank has said it
/// is done (or the timeout), then stops them all with SIGTERM and returns
/// their outcomes (host order) and the switches' counters at the start.
/// A rank stays until then because a peer may still need its ACKs.
fn run_ranks(
    state: &LabState,
    job: &LiveJob,
    job_path: &Path,
    exe: &Path,
    interrupted: &AtomicBool,
) -> Result<(Vec<HostOutcome>, BTreeMap<String, SwitchTally>), String> {
    let mut ranks = Ranks {
        children: Vec::new(),
        readers: Vec::new(),
    };
    let mut logs = Vec::new();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<usize>();
    for (i, h) in job.hosts().into_iter().enumerate() {
        let host = &job
            .ranks
            .iter()
            .find(|r| r.host == h)
            .map(|r| r.host_name.clone())
            .unwrap_or_default();
        let ns = state.namespace_of(host);
        let log = state.dir.join(format!("rank-{host}.log"));
        let err = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        let mut child = {
            use std::os::unix::process::CommandExt;
            Command::new("ip")
                .args(["netns", "exec", &ns])
                .arg(exe)
                .arg("rank")
                .arg("--job")
                .arg(job_path)
                .arg("--host")
                .arg(h.to_string())
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::from(err))
                // Not in the terminal's process group: a Ctrl-C reaches only
                // this process, which stops the ranks by PID.
                .process_group(0)
                .spawn()
                .map_err(|e| format!("starting rank of {host} in {ns}: {e}"))?
        };
        let stdout = child.stdout.take();
        let done_tx = done_tx.clone();
        ranks.readers.push(std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(o) = stdout {
                let mut r = std::io::BufReader::new(o);
                let mut line = String::new();
                while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                    if line.trim_end() == DONE_LINE {
                        let _ = done_tx.send(i);
                    } else {
                        s.push_str(&line);
                    }
                    line.clear();
                }
            }
            s
        }));
        ranks.children.push((h, child));
        logs.push((host.clone(), log));
    }
    let before = snapshot(state);
    let deadline = Instant::now()
        + Duration::from_nanos(
            job.start_unix_ns.saturating_sub(now_unix_ns()) + job.timeout_ns + 15_000_000_000,
        );
    let mut done = vec![false; ranks.children.len()];
    let mut terminated = false;
    loop {
        while let Ok(i) = done_rx.try_recv() {
            done[i] = true;
        }
        if !terminated && done.iter().all(|d| *d) {
            ranks.terminate();
            terminated = true;
        }
        if interrupted.load(Ordering::Relaxed) {
            ranks.stop();
            return Err("interrupted: the ranks were stopped".into());
        }
        let mut running = 0;
        for (i, (_, c)) in ranks.children.iter_mut().enumerate() {
            match c.try_wait() {
                Ok(None) => running += 1,
                Ok(Some(st)) if !st.success() => {
                    let (host, log) = &logs[i];
                    let text = std::fs::read_to_string(log).unwrap_or_default();
                    return Err(format!("rank of {host} failed ({st}): {}", text.trim_end()));
                }
                _ => {}
            }
        }
        if running == 0 {
            break;
        }
        if Instant::now() > deadline {
            return Err("the ranks did not exit in time; they were stopped".into());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut outcomes = Vec::new();
    for (i, reader) in ranks.readers.drain(..).enumerate() {
        let text = reader.join().unwrap_or_default();
        let (host, log) = &logs[i];
        // Kept beside the log: the per-NIC counters the summary adds up.
        let _ = std::fs::write(log.with_extension("json"), &text);
        let o: HostOutcome = serde_json::from_str(&text).map_err(|e| {
            format!(
                "rank of {host} printed no outcome ({e}); its log {}:\n{}",
                log.display(),
                std::fs::read_to_string(log).unwrap_or_default().trim_end()
            )
        })?;
        outcomes.push(o);
    }
    Ok((outcomes, before))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests;
