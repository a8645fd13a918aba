//! ECMP vs flowlet vs per-packet on one two-tier fabric, in virtual time.
//!
//! Builds L leaves and S spines of railyard switches on in-memory ports,
//! runs the same elephants (bursts of a collective, with idle gaps between
//! them) and mice through each balancing mode, and prints one line per mode:
//! uplink imbalance, drops, ECN marks, reordered packets and completion
//! times. Deterministic: the same options give the same table.
//!
//! ```text
//! cargo run --release -p railyard-pcap-tests --example lb_eval -- [options]
//! ```
//!
//! Run with `--help` for the options.

use std::process::ExitCode;
use std::time::Instant;

use railyard_dataplane::clock::Nanos;
use railyard_pcap_tests::fabric::{percentile, Balance, Flow, FlowKind, HostId, SplitMix, TwoTier};

/// Everything the scenario can be told.
#[derive(Debug, Clone)]
struct Options {
    leaves: usize,
    spines: usize,
    hosts: usize,
    elephants: usize,
    mice: usize,
    mouse_packets: u32,
    host_mbps: u32,
    uplink_mbps: u32,
    frame: usize,
    aging_us: u64,
    burst_us: u64,
    gap_us: u64,
    jitter_us: u64,
    duration_us: u64,
    ecn: bool,
    seed: u64,
    verbose: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            leaves: 4,
            spines: 4,
            hosts: 8,
            elephants: 16,
            mice: 200,
            mouse_packets: 16,
            host_mbps: 100_000,
            uplink_mbps: 100_000,
            frame: 1000,
            aging_us: 500,
            burst_us: 200,
            gap_us: 600,
            jitter_us: 300,
            duration_us: 4_000,
            ecn: true,
            seed: 1,
            verbose: false,
        }
    }
}

const HELP: &str = "\
lb_eval: ECMP vs flowlet vs per-packet load balancing on a two-tier fabric

options (defaults in brackets):
  --leaves N          leaf (rail) switches [4]
  --spines N          spine switches = uplinks per leaf [4]
  --hosts N           hosts per leaf [8]
  --elephants N       elephant flows, at most leaves x hosts [16]
  --mice N            mouse flows [200]
  --mouse-packets N   packets per mouse [16]
  --host-speed MBPS   host port speed [100000]
  --uplink-speed MBPS leaf-spine speed [100000]
  --frame BYTES       frame length [1000]
  --aging-us US       flowlet aging [500]
  --burst-us US       elephant burst length [200]
  --gap-us US         idle gap between an elephant's bursts [600]
  --jitter-us US      random delay of each burst's start [300]
  --duration-us US    how long elephants keep sending [4000]
  --no-ecn            no WRED/ECN on the RoCE queue
  --seed N            traffic seed [1]
  --verbose           also print each leaf's uplink bytes and DLB counters
";

fn parse(args: &[String]) -> Result<Option<Options>, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--help" || a == "-h" {
            return Ok(None);
        }
        if a == "--verbose" {
            o.verbose = true;
            continue;
        }
        if a == "--no-ecn" {
            o.ecn = false;
            continue;
        }
        let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
        let n: u64 = v.parse().map_err(|_| format!("{a}: not a number: {v}"))?;
        let small = |n: u64| usize::try_from(n).map_err(|_| format!("{a}: too large"));
        let mbps = |n: u64| u32::try_from(n).map_err(|_| format!("{a}: too large"));
        match a.as_str() {
            "--leaves" => o.leaves = small(n)?,
            "--spines" => o.spines = small(n)?,
            "--hosts" => o.hosts = small(n)?,
            "--elephants" => o.elephants = small(n)?,
            "--mice" => o.mice = small(n)?,
            "--mouse-packets" => o.mouse_packets = mbps(n)?,
            "--host-speed" => o.host_mbps = mbps(n)?,
            "--uplink-speed" => o.uplink_mbps = mbps(n)?,
            "--frame" => o.frame = small(n)?,
            "--aging-us" => o.aging_us = n,
            "--burst-us" => o.burst_us = n,
            "--gap-us" => o.gap_us = n,
            "--jitter-us" => o.jitter_us = n,
            "--duration-us" => o.duration_us = n,
            "--seed" => o.seed = n,
            _ => return Err(format!("unknown option {a} (try --help)")),
        }
    }
    if o.leaves < 2 || o.spines < 1 || o.hosts < 1 {
        return Err("need at least 2 leaves, 1 spine and 1 host per leaf".into());
    }
    if o.leaves > 250 || o.hosts > 250 || o.spines > 16 {
        return Err("at most 250 leaves, 250 hosts per leaf and 16 spines".into());
    }
    if o.elephants > o.leaves * o.hosts {
        return Err("at most one elephant per host (--elephants <= leaves x hosts)".into());
    }
    if !(60..=9000).contains(&o.frame) || o.host_mbps == 0 || o.uplink_mbps == 0 {
        return Err("frame must be 60-9000 bytes and speeds positive".into());
    }
    Ok(Some(o))
}

/// The traffic: elephant `i` goes from host i / L of leaf i % L to a host on
/// another leaf, no two to the same host (so no receiver is an incast and
/// every queue is the balancer's doing); mice go between random hosts of
/// different leaves at random times.
fn traffic(o: &Options) -> Vec<Flow> {
    let mut rng = SplitMix::new(o.seed);
    let us = 1_000;
    let mut flows = Vec::new();
    let probe = Flow::elephant(
        HostId::new(0, 0),
        HostId::new(1, 0),
        0,
        o.frame,
        o.host_mbps,
        0,
        1,
        1,
        0,
    );
    let per_packet = probe.burst_ns().max(1);
    let ppb = ((o.burst_us * us) / per_packet).max(1) as u32;
    let period = o.burst_us * us + o.gap_us * us + o.jitter_us * us;
    let bursts = (o.duration_us * us).div_ceil(period).max(1) as u32;
    for i in 0..o.elephants {
        let (l, j) = (i % o.leaves, i / o.leaves);
        let src = HostId::new(l, j);
        let dst = HostId::new((l + 1 + j % (o.leaves - 1)) % o.leaves, o.hosts - 1 - j);
        let mut f = Flow::elephant(
            src,
            dst,
            49_152 + rng.below(16_384) as u16,
            o.frame,
            o.host_mbps,
            0,
            ppb,
            bursts,
            0,
        );
        f.burst_starts = (0..u64::from(bursts))
            .map(|b| b * period + rng.below(o.jitter_us * us + 1))
            .collect();
        flows.push(f);
    }
    for _ in 0..o.mice {
        let sl = rng.below(o.leaves as u64) as usize;
        let dl = (sl + 1 + rng.below(o.leaves as u64 - 1) as usize) % o.leaves;
        let src = HostId::new(sl, rng.below(o.hosts as u64) as usize);
        let dst = HostId::new(dl, rng.below(o.hosts as u64) as usize);
        flows.push(Flow::mouse(
            src,
            dst,
            49_152 + rng.below(16_384) as u16,
            o.frame,
            o.host_mbps,
            rng.below(o.duration_us * us),
            o.mouse_packets,
        ));
    }
    flows
}

fn us(ns: Option<Nanos>) -> String {
    ns.map_or_else(|| "-".to_string(), |v| format!("{:.1}", v as f64 / 1000.0))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let o = match parse(&args) {
        Ok(Some(o)) => o,
        Ok(None) => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("lb_eval: {e}");
            return ExitCode::from(2);
        }
    };
    let mut topo = TwoTier::new(o.leaves, o.spines, o.hosts);
    topo.host_speed_mbps = o.host_mbps;
    topo.uplink_speed_mbps = o.uplink_mbps;
    topo.ecn = o.ecn;
    topo.dlb.flowlet_aging_ns = o.aging_us * 1_000;
    topo.pool_buffers = 65_536;
    let flows = traffic(&o);
    let elephant_pkts: u64 = flows
        .iter()
        .filter(|f| f.kind == FlowKind::Elephant)
        .map(Flow::packets)
        .sum();
    println!(
        "{} leaves x {} spines, {} hosts/leaf, hosts {} Gb/s, uplinks {} Gb/s, {}-byte frames; \
         {} elephants at line rate in {} us bursts, idle gaps >= {} us, starts jittered by up to {} us, for {} us \
         ({} packets), {} mice of {} packets; flowlet aging {} us; ECN {}",
        o.leaves,
        o.spines,
        o.hosts,
        o.host_mbps / 1000,
        o.uplink_mbps / 1000,
        o.frame,
        o.elephants,
        o.burst_us,
        o.gap_us,
        o.jitter_us,
        o.duration_us,
        elephant_pkts,
        o.mice,
        o.mouse_packets,
        o.aging_us,
        if o.ecn { "on" } else { "off" },
    );
    println!(
        "imbalance = (max-min)/mean of a leaf's uplink bytes, mean over leaves (worst leaf); \
         FCT = first send to last arrival, elephants per burst (message)\n"
    );
    println!(
        "{:<11} | {:>15} | {:>7} | {:>9} | {:>9} | {:>22} | {:>23} | {:>6}",
        "mode",
        "imbalance",
        "drops",
        "ECN marks",
        "reordered",
        "mouse FCT p50/p99 us",
        "elephant FCT p50/max us",
        "wall s"
    );
    println!("{}", "-".repeat(124));
    for mode in Balance::ALL {
        let t0 = Instant::now();
        let out = topo.with_balance(mode).run(&flows);
        let wall = t0.elapsed().as_secs_f64();
        let mean_imbalance = (0..o.leaves).map(|l| out.imbalance(l)).sum::<f64>() / o.leaves as f64;
        let mut mice: Vec<Nanos> = Vec::new();
        let mut eleph: Vec<Nanos> = Vec::new();
        for (f, r) in flows.iter().zip(&out.flows) {
            match f.kind {
                FlowKind::Mouse => mice.extend(r.completion()),
                FlowKind::Elephant => eleph.extend(r.burst_completion.iter().flatten()),
            }
        }
        println!(
            "{:<11} | {:>15} | {:>7} | {:>9} | {:>9} | {:>22} | {:>23} | {:>6.1}",
            mode.name(),
            format!(
                "{:.1}% ({:.1}%)",
                100.0 * mean_imbalance,
                100.0 * out.worst_imbalance()
            ),
            out.total_drops(),
            out.ecn_marked(),
            out.reordered(),
            format!(
                "{} / {}",
                us(percentile(&mut mice, 0.5)),
                us(percentile(&mut mice, 0.99))
            ),
            format!(
                "{} / {}",
                us(percentile(&mut eleph, 0.5)),
                us(percentile(&mut eleph, 1.0))
            ),
            wall,
        );
        if o.verbose {
            for l in 0..o.leaves {
                let (mut started, mut moves, mut risk) = (0, 0, 0);
                for g in out.leaves[l].load_balancing.values() {
                    started += g.flowlets_started;
                    moves += g.flowlet_moves;
                    risk += g.reorder_risk;
                }
                println!(
                    "    leaf{l}: uplink bytes {:?} imbalance {:.1}% flowlets {started} moves {moves} reorder-risk {risk}",
                    out.uplink_bytes(l),
                    100.0 * out.imbalance(l)
                );
            }
        }
    }
    ExitCode::SUCCESS
}
