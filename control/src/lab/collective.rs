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

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use railyard_dataplane::stats::SwitchStats;
use railyard_roce::dcqcn::DcqcnParams;
use railyard_roce::host::HostOutcome;
use railyard_roce::nic::{CongestionControl, NicConfig, NicStats};
use railyard_roce::plan::{JobOptions, JobPlan, RankAddr, Workload};
use railyard_roce::report::{self, FlowResult, JobResult};
use railyard_roce::{MacAddr, Nanos};
use serde::{Deserialize, Serialize};

use super::routes::host_nics;
use super::run::LabState;
use super::topology::Topology;

// ------------------------------------------------------------------ fabric

/// Counters of the whole fabric over one job: what the switches did (CE
/// marks, pauses sent, drops) and what the NICs did (DCQCN, go-back-N, PFC
/// honoured). `--json` prints it as `fabric`; the names the issue fixed
/// (`ecn_marked` … `retransmissions`) never change. The same fields as
/// `railyard sim` reports, so a live and a simulated run compare directly.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FabricSummary {
    /// Packets the switches marked CE.
    pub ecn_marked: u64,
    /// CNPs the NICs sent (notification points).
    pub cnp_sent: u64,
    /// CNPs the NICs received (reaction points).
    pub cnp_received: u64,
    /// DCQCN rate cuts.
    pub rate_cuts: u64,
    /// The lowest rate any queue pair was set to, Gb/s (the line rate when
    /// none was cut; 0 without NICs).
    pub min_rate_gbps: f64,
    /// PFC frames the switches sent that paused a priority (quanta > 0).
    pub pfc_pause_frames: u64,
    /// PFC pause frames the NICs received.
    pub nic_pfc_pause_frames: u64,
    /// Time the NICs' data priority was paused, microseconds, summed.
    pub nic_paused_us: f64,
    /// Switch drops by reason (only reasons that happened).
    pub drops: BTreeMap<String, u64>,
    /// Drops of lossless (PFC-enabled) traffic: tail, WRED and watchdog
    /// drops in a PFC-enabled queue, ingress headroom overflow and
    /// watchdog ingress drops. What must be 0.
    pub lossless_drops: u64,
    /// Data packets the NICs sent again (go-back-N).
    pub retransmissions: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// NAKs (sequence error) the receivers sent.
    pub naks: u64,
    /// Frames the NICs dropped on receive (any reason).
    pub nic_rx_drops: u64,
}

/// One switch port's share of the fabric summary, where anything happened.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkPfc {
    /// Switch.
    pub switch: String,
    /// Interface.
    pub interface: String,
    /// Pause frames it sent (quanta > 0), all priorities.
    pub pause_tx: u64,
    /// Pause frames it received.
    pub pause_rx: u64,
    /// Time its egress was paused, microseconds, all priorities.
    pub paused_us: f64,
    /// Peak depth of its deepest queue, bytes (since the switch started).
    pub max_queue_bytes: u64,
    /// Packets it marked CE.
    pub ecn_marked: u64,
    /// Its drops, every reason.
    pub drops: u64,
}

/// What one switch interface counted, in the terms of the summary; the
/// difference of two snapshots ([`tally_since`]) is what happened between.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PortTally {
    /// CE marks over its queues.
    pub ecn_marked: u64,
    /// Pause frames sent.
    pub pause_tx: u64,
    /// Pause frames received.
    pub pause_rx: u64,
    /// Paused time, ns.
    pub paused_ns: u64,
    /// Drops by reason.
    pub drops: BTreeMap<String, u64>,
    /// Lossless drops (see [`FabricSummary::lossless_drops`]).
    pub lossless_drops: u64,
    /// Peak queue depth, bytes (a peak: not differenced).
    pub max_queue_bytes: u64,
}

/// Every interface of one switch, by name.
pub type SwitchTally = BTreeMap<String, PortTally>;

/// Reads a switch's counters (`railyard show`'s snapshot) into tallies.
pub fn tally_switch(stats: &SwitchStats) -> SwitchTally {
    stats
        .interfaces
        .iter()
        .map(|(name, i)| {
            let queues: u64 = i
                .queues
                .iter()
                .filter(|q| q.queue < 8 && i.pfc.enabled & (1 << q.queue) != 0)
                .map(|q| q.tail_drops + q.wred_drops + q.watchdog_drops)
                .sum();
            let ingress: u64 = ["ingress_overflow", "pfc_watchdog_ingress"]
                .iter()
                .map(|r| i.drops.get(*r).copied().unwrap_or(0))
                .sum();
            let t = PortTally {
                ecn_marked: i.queues.iter().map(|q| q.ecn_marked).sum(),
                pause_tx: i.pfc.tx_pause.iter().sum(),
                pause_rx: i.pfc.rx_pause.iter().sum(),
                paused_ns: i.pfc.paused_ns.iter().sum(),
                drops: i.drops.clone(),
                lossless_drops: queues + ingress,
                max_queue_bytes: i
                    .queues
                    .iter()
                    .map(|q| q.max_depth_bytes)
                    .max()
                    .unwrap_or(0),
            };
            (name.clone(), t)
        })
        .collect()
}

/// What happened on a switch between two tallies (`before` may lack
/// interfaces; a counter that went back, as after a restart, counts from 0).
pub fn tally_since(after: &SwitchTally, before: &SwitchTally) -> SwitchTally {
    let zero = PortTally::default();
    let d = |x: u64, y: u64| if x >= y { x - y } else { x };
    after
        .iter()
        .map(|(name, a)| {
            let b = before.get(name).unwrap_or(&zero);
            let drops = a
                .drops
                .iter()
                .map(|(r, n)| (r.clone(), d(*n, b.drops.get(r).copied().unwrap_or(0))))
                .collect();
            let t = PortTally {
                ecn_marked: d(a.ecn_marked, b.ecn_marked),
                pause_tx: d(a.pause_tx, b.pause_tx),
                pause_rx: d(a.pause_rx, b.pause_rx),
                paused_ns: d(a.paused_ns, b.paused_ns),
                drops,
                lossless_drops: d(a.lossless_drops, b.lossless_drops),
                max_queue_bytes: a.max_queue_bytes,
            };
            (name.clone(), t)
        })
        .collect()
}

impl FabricSummary {
    /// Adds the counters of the NICs.
    pub fn add_nics<'a>(&mut self, nics: impl IntoIterator<Item = &'a NicStats>) {
        for n in nics {
            let first = self.min_rate_gbps == 0.0;
            let rate = n.min_rate_bps as f64 / 1e9;
            if first || rate < self.min_rate_gbps {
                self.min_rate_gbps = rate;
            }
            self.cnp_sent += n.cnp_sent;
            self.cnp_received += n.cnp_received;
            self.rate_cuts += n.rate_cuts;
            self.nic_pfc_pause_frames += n.pfc_pause_frames;
            self.nic_paused_us += n.paused_ns as f64 / 1e3;
            self.retransmissions += n.retransmitted;
            self.timeouts += n.timeouts;
            self.naks += n.naks_sent;
            let d = &n.rx_dropped;
            self.nic_rx_drops += d.malformed
                + d.icrc
                + d.unknown_qp
                + d.out_of_sequence
                + d.duplicate
                + d.not_for_us;
        }
    }

    /// Adds what switch `name` counted (a whole run's tally, or the
    /// difference of two snapshots from [`tally_since`]); returns its ports
    /// where anything happened (pauses, CE marks, drops).
    pub fn add_switch(&mut self, name: &str, tally: &SwitchTally) -> Vec<LinkPfc> {
        let mut links = Vec::new();
        for (port, t) in tally {
            self.ecn_marked += t.ecn_marked;
            self.pfc_pause_frames += t.pause_tx;
            self.lossless_drops += t.lossless_drops;
            for (reason, n) in &t.drops {
                if *n > 0 {
                    *self.drops.entry(reason.clone()).or_insert(0) += n;
                }
            }
            let drops: u64 = t.drops.values().sum();
            if t.ecn_marked + t.pause_tx + t.pause_rx + drops > 0 {
                links.push(LinkPfc {
                    switch: name.to_string(),
                    interface: port.clone(),
                    pause_tx: t.pause_tx,
                    pause_rx: t.pause_rx,
                    paused_us: t.paused_ns as f64 / 1e3,
                    max_queue_bytes: t.max_queue_bytes,
                    ecn_marked: t.ecn_marked,
                    drops,
                });
            }
        }
        links
    }

    /// Prints the summary for people, after the nccl-tests table, then the
    /// ports where anything happened.
    ///
    /// # Errors
    /// Errors of `out`.
    pub fn render(&self, out: &mut dyn Write, links: &[LinkPfc]) -> std::io::Result<()> {
        writeln!(out, "# fabric")?;
        writeln!(
            out,
            "#   switches: CE marked {}, PFC pause frames sent {}, lossless drops {}",
            self.ecn_marked, self.pfc_pause_frames, self.lossless_drops
        )?;
        writeln!(
            out,
            "#   NICs: CNPs sent {}, CNPs received {}, rate cuts {}, minimum rate {:.3} Gb/s",
            self.cnp_sent, self.cnp_received, self.rate_cuts, self.min_rate_gbps
        )?;
        writeln!(
            out,
            "#   NICs: PFC pause frames received {}, paused {:.1} us, retransmissions {}, \
             timeouts {}, NAKs {}, receive drops {}",
            self.nic_pfc_pause_frames,
            self.nic_paused_us,
            self.retransmissions,
            self.timeouts,
            self.naks,
            self.nic_rx_drops
        )?;
        if self.drops.is_empty() {
            writeln!(out, "#   drops: none")?;
        } else {
            let list: Vec<String> = self.drops.iter().map(|(r, n)| format!("{r} {n}")).collect();
            writeln!(out, "#   drops: {}", list.join(", "))?;
        }
        if !links.is_empty() {
            writeln!(
                out,
                "#   {:<20} {:>9} {:>9} {:>9} {:>11} {:>11} {:>7}",
                "port", "CE", "pause tx", "pause rx", "paused us", "peak bytes", "drops"
            )?;
            for l in links {
                writeln!(
                    out,
                    "#   {:<20} {:>9} {:>9} {:>9} {:>11.1} {:>11} {:>7}",
                    format!("{}:{}", l.switch, l.interface),
                    l.ecn_marked,
                    l.pause_tx,
                    l.pause_rx,
                    l.paused_us,
                    l.max_queue_bytes,
                    l.drops
                )?;
            }
        }
        Ok(())
    }
}

/// What `--json` prints: `{"results": [...], "flows": [...], "fabric":
/// {...}, "links": [...]}` (each result also keeps its own flows; `flows`
/// lists every result's).
#[derive(Debug, Clone, Serialize)]
pub struct JsonReport<'a> {
    /// One row per job, as in the table.
    pub results: &'a [JobResult],
    /// Every point-to-point transfer of the flow workloads.
    pub flows: Vec<&'a FlowResult>,
    /// The fabric summary.
    pub fabric: &'a FabricSummary,
    /// Switch ports where anything happened.
    pub links: &'a [LinkPfc],
}

impl<'a> JsonReport<'a> {
    /// The report of `results`, `fabric` and `links`.
    pub fn new(
        results: &'a [JobResult],
        fabric: &'a FabricSummary,
        links: &'a [LinkPfc],
    ) -> JsonReport<'a> {
        JsonReport {
            results,
            flows: results.iter().flat_map(|r| r.flows.iter()).collect(),
            fabric,
            links,
        }
    }
}

// ------------------------------------------------------------------ ranks

/// One rank of a live job: a host NIC and where it is cabled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankSpec {
    /// Host index in topology order.
    pub host: usize,
    /// Host name.
    pub host_name: String,
    /// NIC index on the host (its rail): position in `ethN` order.
    pub nic: usize,
    /// Linux interface name in the host's namespace.
    pub ifname: String,
    /// The NIC's address.
    pub ip: Ipv4Addr,
    /// The switch's address on the link (the gateway to resolve).
    pub gateway: Ipv4Addr,
    /// The link's MTU.
    pub mtu: u16,
    /// The MAC of the interface (filled in from the namespace).
    pub mac: String,
}

impl RankSpec {
    /// `host.ethN`, the rank's name in reports.
    pub fn name(&self) -> String {
        format!("{}.{}", self.host_name, self.ifname)
    }
}

/// The number at the end of an interface name (`eth10` → 10), to order
/// NICs as `ethN` numbers them rather than as text.
fn if_number(ifname: &str) -> Option<u64> {
    let digits: String = ifname
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    digits.parse().ok()
}

/// The ranks of a topology: hosts in file order, each host's NICs in `ethN`
/// order (rank r of host h's NIC n is the `n`th NIC after every NIC of the
/// earlier hosts). MACs are left empty for the caller to read.
///
/// # Errors
/// A topology without at least two host NICs.
pub fn rank_specs(t: &Topology) -> Result<Vec<RankSpec>, String> {
    let mut out = Vec::new();
    for (h, host) in t.hosts.iter().enumerate() {
        let mut nics = host_nics(t, &host.name);
        nics.sort_by(|a, b| {
            (if_number(&a.ifname), &a.ifname).cmp(&(if_number(&b.ifname), &b.ifname))
        });
        for (n, nic) in nics.into_iter().enumerate() {
            out.push(RankSpec {
                host: h,
                host_name: host.name.clone(),
                nic: n,
                ifname: nic.ifname,
                ip: nic.address,
                gateway: nic.gateway,
                mtu: nic.mtu,
                mac: String::new(),
            });
        }
    }
    if out.len() < 2 {
        return Err(format!(
            "topology {} has {} host NIC(s); a job needs at least two",
            t.name,
            out.len()
        ));
    }
    Ok(out)
}

/// The rank an endpoint name means: `HOST` (its NIC 0) or `HOST.IFNAME`.
///
/// # Errors
/// A name that is no host or NIC, with the names that would do.
pub fn rank_of(ranks: &[RankSpec], name: &str) -> Result<usize, String> {
    let found = match name.split_once('.') {
        Some((host, ifname)) => ranks
            .iter()
            .position(|r| r.host_name == host && r.ifname == ifname),
        None => ranks.iter().position(|r| r.host_name == name && r.nic == 0),
    };
    found.ok_or_else(|| {
        let names: Vec<String> = ranks.iter().map(RankSpec::name).collect();
        format!(
            "{name:?} is no host or host NIC of the lab (HOST for its first NIC, or one of {})",
            names.join(", ")
        )
    })
}

/// The largest RoCE path MTU (256, 512, 1024, 2048, 4096 payload bytes)
/// whose packets fit a link of IP MTU `link_mtu`: IPv4 20 + UDP 8 + BTH 12
/// + RETH 16 + ICRC 4 bytes of headers around the payload.
pub fn path_mtu(link_mtu: u16) -> usize {
    const OVERHEAD: usize = 20 + 8 + 12 + 16 + 4;
    [4096, 2048, 1024, 512, 256]
        .into_iter()
        .find(|p| p + OVERHEAD <= usize::from(link_mtu))
        .unwrap_or(256)
}

/// The congestion control a live or simulated job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cc {
    /// DCQCN (ConnectX defaults, or `--dcqcn-params FILE`).
    Dcqcn,
    /// None: line rate, only PFC slows a sender.
    None,
}

/// Everything a rank needs to set up its NICs, the same on every host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NicSettings {
    /// Line rate, bits per second.
    pub line_rate_bps: u64,
    /// DSCP of data and ACKs.
    pub dscp: u8,
    /// 802.1p priority of data and ACKs.
    pub priority: u8,
    /// ACK coalescing.
    pub ack_every: u32,
    /// Retransmission timeout, ns.
    pub rto_ns: Nanos,
    /// Congestion control.
    pub cc: Cc,
    /// DCQCN parameters file text and its name, when given.
    pub dcqcn_params: Option<(String, String)>,
}

impl NicSettings {
    /// The congestion control these settings ask for.
    ///
    /// # Errors
    /// A DCQCN parameters file that does not parse.
    pub fn congestion_control(&self) -> Result<CongestionControl, String> {
        Ok(match self.cc {
            Cc::None => CongestionControl::None,
            Cc::Dcqcn => CongestionControl::Dcqcn(match &self.dcqcn_params {
                Some((text, origin)) => DcqcnParams::parse(text, origin)?,
                None => DcqcnParams::default(),
            }),
        })
    }

    /// The configuration of `rank`'s NIC, sending to `gateway_mac`.
    ///
    /// # Errors
    /// A bad MAC in the job, or DCQCN parameters that do not parse.
    pub fn nic_config(&self, rank: &RankSpec, gateway_mac: MacAddr) -> Result<NicConfig, String> {
        Ok(NicConfig {
            mac: parse_mac(&rank.mac)?,
            ip: rank.ip,
            gateway_mac,
            line_rate_bps: self.line_rate_bps,
            path_mtu: path_mtu(rank.mtu),
            dscp: self.dscp,
            priority: self.priority,
            cc: self.congestion_control()?,
            ack_every: self.ack_every,
            rto_ns: self.rto_ns,
            memory_bytes: 0,
            answer_arp: false,
        })
    }
}

fn parse_mac(s: &str) -> Result<MacAddr, String> {
    s.parse()
        .map_err(|_| format!("{s:?} is not a MAC address (xx:xx:xx:xx:xx:xx)"))
}

/// A live job as the lab command hands it to every rank process
/// (`STATE_DIR/NAME/job.json`): both build the same [`JobPlan`] from it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LiveJob {
    /// Every rank, rank 0 first.
    pub ranks: Vec<RankSpec>,
    /// The workload.
    pub workload: Workload,
    /// Channels, chunking, GPU-to-GPU bandwidth.
    pub options: JobOptions,
    /// NIC settings.
    pub nic: NicSettings,
    /// When every rank starts: wall clock, ns since the Unix epoch.
    pub start_unix_ns: u64,
    /// How long a rank runs before it reports what it has, ns.
    pub timeout_ns: Nanos,
    /// How long a rank waits for its gateway's ARP reply, ns.
    pub arp_timeout_ns: Nanos,
}

impl LiveJob {
    /// The plan every rank and the lab command share.
    ///
    /// # Errors
    /// A bad MAC, or a workload that does not fit the ranks.
    pub fn plan(&self) -> Result<JobPlan, String> {
        let ranks = self
            .ranks
            .iter()
            .map(|r| {
                Ok(RankAddr {
                    host: r.host,
                    nic: r.nic,
                    name: r.name(),
                    ip: r.ip,
                    mac: parse_mac(&r.mac)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        JobPlan::new(self.workload.clone(), ranks, self.options.clone())
    }

    /// The ranks of host `host`, NIC 0 first.
    pub fn host_ranks(&self, host: usize) -> Vec<&RankSpec> {
        self.ranks.iter().filter(|r| r.host == host).collect()
    }

    /// Host indices with at least one rank, in order.
    pub fn hosts(&self) -> Vec<usize> {
        let mut h: Vec<usize> = self.ranks.iter().map(|r| r.host).collect();
        h.dedup();
        h
    }
}

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
    /// without an acknowledgement. Live ranks share the cores with the
    /// switches, so round trips of milliseconds happen.
    #[arg(long, default_value_t = 4000, value_name = "US")]
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

/// Reads a size such as `4096`, `512K`, `16M`, `1G` (powers of 1024).
///
/// # Errors
/// Anything else.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("{s:?}: a size is a number with K, M or G")),
            };
            (&t[..i], m)
        }
        _ => (t, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("{s:?}: a size is a number with K, M or G (e.g. 16M)"))
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
    fn stop(&mut self) {
        for (_, c) in &mut self.children {
            if matches!(c.try_wait(), Ok(None)) {
                let _ = Command::new("kill")
                    .args(["-s", "TERM", &c.id().to_string()])
                    .status();
            }
        }
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

/// Starts one rank process per host, waits for them, returns their
/// outcomes (host order) and the switches' counters at the start.
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
    for h in job.hosts() {
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
        ranks.readers.push(std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(o) = stdout {
                let mut r = std::io::BufReader::new(o);
                let mut line = String::new();
                while r.read_line(&mut line).map(|n| n > 0).unwrap_or(false) {
                    s.push_str(&line);
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
    loop {
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
mod tests {
    use std::path::Path;

    use clap::Parser;
    use railyard_dataplane::stats::{InterfaceStats, QueueStats};

    use super::super::cli::{LabArgs, LabCommand};
    use super::super::topology::parse_str;
    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        lab: LabArgs,
    }

    fn lab(args: &[&str]) -> Result<LabCommand, String> {
        Cli::try_parse_from(std::iter::once("lab").chain(args.iter().copied()))
            .map(|c| c.lab.command)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn collective_arguments_have_the_documented_defaults() {
        let LabCommand::Collective {
            name,
            op,
            size,
            live,
        } = lab(&["collective", "rs-1", "allreduce", "16M"]).unwrap()
        else {
            panic!("not a collective")
        };
        assert_eq!(
            (name.as_str(), op.as_str(), size.as_str()),
            ("rs-1", "allreduce", "16M")
        );
        assert_eq!(live.cc, Cc::Dcqcn);
        assert_eq!(live.nic_mbps, 2000);
        assert_eq!(live.timeout, 60);
        assert_eq!(live.channels, 2);
        assert_eq!(parse_size(&live.chunk), Ok(128 * 1024));
        assert!(!live.json && live.dcqcn_params.is_none());
        assert_eq!(collective_spec(&op, &size), "allreduce:16M");
        assert_eq!(collective_spec("AllGather", "1M"), "allgather:1M");
    }

    #[test]
    fn collective_and_incast_options_parse_and_bad_ones_fail() {
        let LabCommand::Collective { live, .. } = lab(&[
            "collective",
            "x",
            "alltoall",
            "1M",
            "--cc",
            "none",
            "--nic-mbps",
            "500",
            "--json",
            "--timeout",
            "20",
            "--dcqcn-params",
            "p.txt",
        ])
        .unwrap() else {
            panic!("not a collective")
        };
        assert_eq!(live.cc, Cc::None);
        assert_eq!((live.nic_mbps, live.timeout, live.json), (500, 20, true));
        assert_eq!(live.dcqcn_params.as_deref(), Some(Path::new("p.txt")));
        assert!(lab(&["collective", "x", "allreduce", "1M", "--cc", "hpcc"]).is_err());
        assert!(lab(&["collective", "x", "allreduce"]).is_err());

        let LabCommand::Incast {
            size, endpoints, ..
        } = lab(&["incast", "x", "4M", "h1", "h2.eth1", "h3"]).unwrap()
        else {
            panic!("not an incast")
        };
        assert_eq!(
            incast_spec(&size, &endpoints).unwrap(),
            "incast:4M:h1,h2.eth1:h3"
        );
        // A receiver alone is no incast.
        assert!(lab(&["incast", "x", "4M", "h1"]).is_err());
        assert!(incast_spec("4M", &["h1".to_string()]).is_err());
        assert!(incast_spec("4M", &[]).is_err());
    }

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("512K"), Ok(512 << 10));
        assert_eq!(parse_size("16m"), Ok(16 << 20));
        assert_eq!(parse_size("1G"), Ok(1 << 30));
        for bad in ["", "M", "12X", "1.5M", "-1", "99999999999999999999G"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    fn rail_spine() -> Topology {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/topologies/rail-spine.topo");
        parse_str(&std::fs::read_to_string(&path).unwrap(), &path).unwrap()
    }

    #[test]
    fn ranks_are_hosts_in_order_then_nics_in_ethn_order() {
        let ranks = rank_specs(&rail_spine()).unwrap();
        let names: Vec<String> = ranks.iter().map(RankSpec::name).collect();
        assert_eq!(
            names,
            [
                "h1.eth0", "h1.eth1", "h2.eth0", "h2.eth1", "h3.eth0", "h3.eth1", "h4.eth0",
                "h4.eth1"
            ]
        );
        let r3 = &ranks[3];
        assert_eq!((r3.host, r3.nic), (1, 1));
        assert_eq!(r3.ip, Ipv4Addr::new(10, 2, 2, 2));
        assert_eq!(r3.gateway, Ipv4Addr::new(10, 2, 2, 1));
        assert_eq!(r3.mtu, 1500);
        assert_eq!(rank_of(&ranks, "h2"), Ok(2));
        assert_eq!(rank_of(&ranks, "h2.eth1"), Ok(3));
        assert_eq!(rank_of(&ranks, "h4.eth0"), Ok(6));
        let e = rank_of(&ranks, "h9").unwrap_err();
        assert!(e.contains("h1.eth0") && e.contains("h9"), "{e}");
        assert!(rank_of(&ranks, "h1.eth7").is_err());
    }

    #[test]
    fn nics_are_ordered_by_number_not_as_written_or_as_text() {
        let text = "\
switch s1 role rail
host a
host b
link a:eth10 s1:Ethernet1/1 subnet 10.0.1.0/24
link a:eth2 s1:Ethernet1/2 subnet 10.0.2.0/24
link b:eth0 s1:Ethernet1/3 subnet 10.0.3.0/24 mtu 9000
";
        let t = parse_str(text, Path::new("t.topo")).unwrap();
        let ranks = rank_specs(&t).unwrap();
        let names: Vec<String> = ranks.iter().map(RankSpec::name).collect();
        assert_eq!(names, ["a.eth2", "a.eth10", "b.eth0"]);
        assert_eq!((ranks[1].nic, ranks[1].ip), (1, Ipv4Addr::new(10, 0, 1, 2)));
        assert_eq!(path_mtu(ranks[2].mtu), 4096);
        let one = parse_str(
            "switch s1 role rail\nhost a\nlink a:eth0 s1:Ethernet1/1 subnet 10.0.1.0/24\n",
            Path::new("t.topo"),
        )
        .unwrap();
        assert!(rank_specs(&one).is_err());
    }

    #[test]
    fn path_mtu_is_the_largest_roce_mtu_that_fits_the_link() {
        assert_eq!(path_mtu(1500), 1024);
        assert_eq!(path_mtu(9000), 4096);
        assert_eq!(path_mtu(4096 + 60), 4096);
        assert_eq!(path_mtu(4096 + 59), 2048);
        assert_eq!(path_mtu(1084), 1024);
        assert_eq!(path_mtu(1083), 512);
        assert_eq!(path_mtu(100), 256);
    }

    #[test]
    fn nic_settings_make_the_nic_the_issue_asks_for() {
        let mut r = rank_specs(&rail_spine()).unwrap().remove(0);
        r.mac = "02:00:00:00:01:02".into();
        let s = NicSettings {
            line_rate_bps: 2_000_000_000,
            dscp: 24,
            priority: 3,
            ack_every: 16,
            rto_ns: 4_000_000,
            cc: Cc::None,
            dcqcn_params: None,
        };
        let gw = MacAddr([2, 0, 0, 0, 0, 1]);
        let c = s.nic_config(&r, gw).unwrap();
        assert_eq!(c.mac, MacAddr([2, 0, 0, 0, 1, 2]));
        assert_eq!(c.gateway_mac, gw);
        assert_eq!(c.ip, Ipv4Addr::new(10, 1, 1, 2));
        assert_eq!(
            (c.path_mtu, c.dscp, c.priority, c.ack_every),
            (1024, 24, 3, 16)
        );
        assert_eq!((c.rto_ns, c.line_rate_bps), (4_000_000, 2_000_000_000));
        assert!(!c.answer_arp);
        assert_eq!(c.cc, CongestionControl::None);
        let dcqcn = NicSettings {
            cc: Cc::Dcqcn,
            ..s.clone()
        };
        assert_eq!(
            dcqcn.nic_config(&r, gw).unwrap().cc,
            CongestionControl::Dcqcn(DcqcnParams::default())
        );
        r.mac = "nonsense".into();
        assert!(s.nic_config(&r, gw).is_err());
    }

    fn iface(ce: u64, pause: u64, tail3: u64, overflow: u64) -> InterfaceStats {
        let mut i = InterfaceStats::default();
        i.pfc.enabled = 1 << 3;
        i.pfc.tx_pause[3] = pause;
        i.pfc.paused_ns[3] = 5_000;
        i.queues = (0..8)
            .map(|q| QueueStats {
                queue: q,
                ecn_marked: if q == 3 { ce } else { 0 },
                tail_drops: if q == 3 { tail3 } else { 1 },
                max_depth_bytes: 1000 * u64::from(q),
                ..QueueStats::default()
            })
            .collect();
        i.drops.insert("ingress_overflow".into(), overflow);
        i.drops.insert("tail_drop".into(), tail3 + 7);
        i.drops.insert("no_route".into(), 0);
        i
    }

    #[test]
    fn switch_counters_over_a_run_are_the_difference_of_two_snapshots() {
        let mut before = SwitchStats::default();
        before
            .interfaces
            .insert("Ethernet1/1".into(), iface(10, 2, 1, 0));
        let mut after = SwitchStats::default();
        after
            .interfaces
            .insert("Ethernet1/1".into(), iface(25, 6, 4, 2));
        after
            .interfaces
            .insert("Ethernet1/2".into(), InterfaceStats::default());
        let t = tally_since(&tally_switch(&after), &tally_switch(&before));
        let p = &t["Ethernet1/1"];
        assert_eq!((p.ecn_marked, p.pause_tx, p.paused_ns), (15, 4, 0));
        // Lossless: queue 3's tail drops (3 more) and the ingress overflow
        // (2); queue 0's tail drops are not lossless.
        assert_eq!(p.lossless_drops, 5);
        assert_eq!(p.drops["tail_drop"], 3);
        assert_eq!(p.max_queue_bytes, 7000);
        let mut f = FabricSummary::default();
        let links = f.add_switch("rail1", &t);
        assert_eq!(
            (f.ecn_marked, f.pfc_pause_frames, f.lossless_drops),
            (15, 4, 5)
        );
        assert_eq!(
            f.drops.len(),
            2,
            "only reasons that happened: {:?}",
            f.drops
        );
        assert_eq!(f.drops["ingress_overflow"], 2);
        assert_eq!(links.len(), 1, "the quiet port is left out");
        assert_eq!(
            (links[0].interface.as_str(), links[0].drops),
            ("Ethernet1/1", 5)
        );
    }

    #[test]
    fn nic_counters_add_up_and_the_minimum_rate_is_the_lowest() {
        let a = NicStats {
            cnp_sent: 3,
            rate_cuts: 2,
            min_rate_bps: 500_000_000,
            retransmitted: 7,
            paused_ns: 2_500,
            ..NicStats::default()
        };
        let b = NicStats {
            cnp_received: 4,
            min_rate_bps: 2_000_000_000,
            pfc_pause_frames: 1,
            ..NicStats::default()
        };
        let mut f = FabricSummary::default();
        f.add_nics([&b, &a]);
        assert_eq!((f.cnp_sent, f.cnp_received, f.rate_cuts), (3, 4, 2));
        assert_eq!((f.retransmissions, f.nic_pfc_pause_frames), (7, 1));
        assert_eq!(f.min_rate_gbps, 0.5);
        assert_eq!(f.nic_paused_us, 2.5);
    }

    #[test]
    fn json_report_has_the_names_the_issue_fixed() {
        let flow = FlowResult {
            src: "h1.eth0".into(),
            dst: "h4.eth0".into(),
            bytes: 4 << 20,
            fct_us: Some(1234.5),
        };
        let results = [JobResult {
            op: "incast".into(),
            bytes: 4 << 20,
            count: 1 << 20,
            time_us: 1300.0,
            algbw_gbps: 3.2,
            busbw_gbps: 3.2,
            wrong: 0,
            completed: true,
            flows: vec![flow],
        }];
        let mut fabric = FabricSummary::default();
        fabric.drops.insert("wred".into(), 3);
        let links = [LinkPfc::default()];
        let v = serde_json::to_value(JsonReport::new(&results, &fabric, &links)).unwrap();
        for k in [
            "op",
            "bytes",
            "time_us",
            "algbw_gbps",
            "busbw_gbps",
            "wrong",
        ] {
            assert!(v["results"][0].get(k).is_some(), "results[0].{k}: {v}");
        }
        for k in ["src", "dst", "bytes", "fct_us"] {
            assert!(v["flows"][0].get(k).is_some(), "flows[0].{k}: {v}");
        }
        assert_eq!(v["flows"][0]["fct_us"], 1234.5);
        for k in [
            "ecn_marked",
            "cnp_sent",
            "cnp_received",
            "rate_cuts",
            "pfc_pause_frames",
            "drops",
            "lossless_drops",
            "retransmissions",
        ] {
            assert!(v["fabric"].get(k).is_some(), "fabric.{k}: {v}");
        }
        assert_eq!(v["fabric"]["drops"]["wred"], 3);
        assert!(v["links"].is_array());
    }

    #[test]
    fn fabric_summary_renders_every_counter_and_the_busy_ports() {
        let f = FabricSummary {
            ecn_marked: 11,
            cnp_sent: 12,
            rate_cuts: 13,
            min_rate_gbps: 0.25,
            drops: BTreeMap::from([("wred".to_string(), 14)]),
            ..FabricSummary::default()
        };
        let links = [LinkPfc {
            switch: "rail1".into(),
            interface: "Ethernet1/4".into(),
            pause_tx: 15,
            ..LinkPfc::default()
        }];
        let mut out = Vec::new();
        f.render(&mut out, &links).unwrap();
        let text = String::from_utf8(out).unwrap();
        for want in [
            "CE marked 11",
            "CNPs sent 12",
            "rate cuts 13",
            "0.250 Gb/s",
            "wred 14",
            "rail1:Ethernet1/4",
        ] {
            assert!(text.contains(want), "{want}: {text}");
        }
        let mut out = Vec::new();
        FabricSummary::default().render(&mut out, &[]).unwrap();
        assert!(String::from_utf8(out).unwrap().contains("drops: none"));
    }

    #[test]
    fn the_job_file_round_trips() {
        let mut ranks = rank_specs(&rail_spine()).unwrap();
        for r in &mut ranks {
            r.mac = "02:00:00:00:00:01".into();
        }
        let job = LiveJob {
            ranks,
            workload: Workload::Incast {
                bytes: 4096,
                srcs: vec![0, 2],
                dst: 4,
            },
            options: JobOptions::default(),
            nic: NicSettings {
                line_rate_bps: 1,
                dscp: 24,
                priority: 3,
                ack_every: 16,
                rto_ns: 4_000_000,
                cc: Cc::Dcqcn,
                dcqcn_params: Some(("rpg_min_rate 10".into(), "p.txt".into())),
            },
            start_unix_ns: 5,
            timeout_ns: 6,
            arp_timeout_ns: 7,
        };
        let back: LiveJob = serde_json::from_str(&serde_json::to_string(&job).unwrap()).unwrap();
        assert_eq!(back, job);
        assert_eq!(job.hosts(), [0, 1, 2, 3]);
        let h2: Vec<String> = job.host_ranks(1).iter().map(|r| r.name()).collect();
        assert_eq!(h2, ["h2.eth0", "h2.eth1"]);
    }
}
