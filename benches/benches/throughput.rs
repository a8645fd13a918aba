//! Packets per second through the whole forwarding path on one core.
//!
//! Four null ports (`port::null`, railyard's `net_null,copy=1`): every poll
//! each port receives a burst of 64-byte RoCEv2 frames (DSCP 24) with one CNP
//! (DSCP 48) in eight, copied into pool buffers, toward the hosts of the
//! other ports; what the switch transmits is freed. The switch runs the
//! demo's RoCEv2 QoS, so every packet is parsed, classified into one of the
//! eight queues, routed (LPM, neighbour), WRED/ECN-checked, accounted against
//! the PFC thresholds, enqueued, scheduled (strict priority + DWRR) and sent.
//! This is what DPDK's testpmd times over `net_null` (allocate, copy,
//! forward, free), so `scripts/bench-pipeline.sh` can put the two side by
//! side. A counting allocator checks that the timed region allocates nothing.
//!
//! Modes (after `--`):
//! - `SECONDS` (default 3) or `packets=N` (a fixed amount of work, for
//!   callgrind, which counts instructions where `perf stat` has no counters);
//! - `ecmp`, `flowlet`, `per-packet`: toward a remote prefix over a four-way
//!   group of the ports instead, balanced that way;
//! - `scaling`: the pipeline in the runtime's pinned workers, one worker and
//!   then two (two ports each; the ports have no speed, so each worker
//!   sends on the other's ports through its own transmit lanes); with
//!   `local`, each port's traffic goes to a port of the same worker; with
//!   `shaped`, every port runs at 100 Gb/s (far above these rates), so
//!   packets for the other worker's ports cross to it instead. The
//!   two workers' cores are timed passing a cache line back and forth
//!   just before and just after the two-worker run: on a virtual machine
//!   that latency changes as the host moves its vCPUs, and with it what a
//!   packet crossing workers costs;
//! - `replay`: `railyard replay` end to end (read pcap, pipeline, write
//!   pcap) of a trace of `packets=N` frames (default 1 million) spread over
//!   the four ports, written to a temporary directory first; with
//!   `poll-interval=D` (e.g. `1us`), as `railyard replay --poll-interval`;
//! - `dpdk-null` (a build with `--features dpdk`): the four ports are DPDK
//!   `net_null` ethdevs, DPDK's rx/tx and railyard's copies included.
//!
//! Every run ends with `mpps=R` for scripts.
//!
//! `cargo bench -p railyard-benches --bench throughput [-- SECONDS|packets=N] [ecmp|flowlet|per-packet|scaling]`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use railyard_benches::{balanced_model, model, roce_mix, roce_mix_remote, roce_mix_worker_local};
use railyard_dataplane::clock::MonotonicClock;
use railyard_dataplane::model::{DlbMode, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::null::NullPort;
use railyard_dataplane::port::Port;
use railyard_dataplane::runtime::{PollMode, Runtime, RuntimeOptions};
use railyard_dataplane::stats::SwitchStats;
use railyard_dataplane::Pool;

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards to the system allocator unchanged; only counts calls.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const PORTS: usize = 4;

/// How long to run: wall time, or a fixed number of packets.
#[derive(Clone, Copy)]
enum Amount {
    Seconds(f64),
    Packets(u64),
}

fn main() {
    let mut amount = Amount::Seconds(3.0);
    let mut balance = None;
    let mut mode = "pipeline";
    let mut local = false;
    let mut shaped = false;
    let mut poll_interval = 0;
    for a in std::env::args().skip(1) {
        if let Ok(s) = a.parse::<f64>() {
            amount = Amount::Seconds(s);
        } else if let Some(n) = a.strip_prefix("packets=").and_then(|n| n.parse().ok()) {
            amount = Amount::Packets(n);
        } else if let Some(d) = a.strip_prefix("poll-interval=") {
            poll_interval = railyard_control::replay::parse_poll_interval(d)
                .unwrap_or_else(|e| panic!("poll-interval={d}: {e}"));
        } else {
            match a.as_str() {
                "ecmp" => balance = Some(None),
                "flowlet" => balance = Some(Some(DlbMode::Flowlet)),
                "per-packet" => balance = Some(Some(DlbMode::PerPacket)),
                "scaling" => mode = "scaling",
                "dpdk-null" => mode = "dpdk-null",
                "replay" => mode = "replay",
                "local" => local = true,
                "shaped" => shaped = true,
                _ => {} // cargo bench passes `--bench`
            }
        }
    }
    let (mut model, mixes) = setup(balance, local);
    let mut routing = match balance {
        None if local => "each to one port of the same worker".to_string(),
        None => "to the hosts of the other ports".to_string(),
        Some(None) => format!("over a {PORTS}-way ECMP group"),
        Some(Some(m)) => format!("over a {PORTS}-way DLB group ({m:?})"),
    };
    if shaped {
        for ifc in &mut model.interfaces {
            ifc.speed_mbps = Some(100_000);
        }
        routing += ", ports shaped to 100 Gb/s";
    }
    match mode {
        "scaling" => scaling(&model, &mixes, amount, &routing),
        "dpdk-null" => dpdk_null(&model, &mixes, amount),
        "replay" => replay(&model, &mixes, amount, poll_interval),
        _ => one_core(&model, &mixes, amount, &routing),
    }
}

fn setup(balance: Option<Option<DlbMode>>, local: bool) -> (SwitchModel, Vec<Vec<Vec<u8>>>) {
    let model = match balance {
        Some(dlb) => balanced_model(PORTS, dlb),
        None => model(PORTS),
    };
    let mixes = (0..PORTS)
        .map(|i| match balance {
            Some(_) => roce_mix_remote(i, 256),
            None if local => roce_mix_worker_local(i, PORTS, 256),
            None => roce_mix(i, PORTS, 256),
        })
        .collect();
    (model, mixes)
}

fn null_ports(mixes: &[Vec<Vec<u8>>]) -> Vec<Option<Box<dyn Port>>> {
    mixes
        .iter()
        .enumerate()
        .map(|(i, mix)| {
            Some(Box::new(NullPort::new(&format!("n{i}"), mix.clone())) as Box<dyn Port>)
        })
        .collect()
}

fn forwarded(stats: &SwitchStats) -> u64 {
    stats.interfaces.values().map(|i| i.tx_packets).sum()
}

/// [`forwarded`] read from the switch's live counters (no allocation).
fn sent(sw: &Switch) -> u64 {
    (0..PORTS as u16)
        .filter_map(|p| sw.counters(p))
        .map(|c| c.tx_packets)
        .sum()
}

/// Where a benchmark's virtual clock starts.
const CLOCK_START: u64 = 1_000_000_000;

/// Runs `poll` in rounds of 1024 until `amount` is reached, a microsecond
/// of virtual time per poll from `now` on; returns the packets forwarded and
/// the time taken. The clock carries over from the warm-up to the timed run:
/// started over, it would find every port's wire busy until the warm-up's
/// end, and the timed run would begin with nothing leaving and every buffer
/// queued.
fn run(sw: &mut Switch, now: &mut u64, amount: Amount) -> (u64, Duration) {
    let before = sent(sw);
    let t0 = Instant::now();
    loop {
        for _ in 0..1024 {
            *now += 1_000;
            sw.poll(*now);
        }
        let done = match amount {
            Amount::Seconds(s) => t0.elapsed().as_secs_f64() >= s,
            Amount::Packets(n) => sent(sw) - before >= n,
        };
        if done {
            return (sent(sw) - before, t0.elapsed());
        }
    }
}

fn one_core(model: &SwitchModel, mixes: &[Vec<Vec<u8>>], amount: Amount, routing: &str) {
    let pool = Pool::new(model.pool_buffers());
    let (mut sw, _) = Switch::new(model, null_ports(mixes), pool);
    // Warm up: fault in the buffers and queues, fill the caches.
    let mut now = CLOCK_START;
    run(&mut sw, &mut now, Amount::Packets(200_000));
    let a0 = ALLOCS.load(Ordering::Relaxed);
    let (packets, time) = run(&mut sw, &mut now, amount);
    let allocs = ALLOCS.load(Ordering::Relaxed) - a0;
    println!("throughput: {PORTS} null ports, 64-byte RoCEv2/CNP mix {routing}, demo QoS, 1 core");
    report(packets, time);
    println!("  allocations in the timed region: {allocs}");
    print_drops(&sw.stats());
    println!("mpps={:.3}", packets as f64 / time.as_secs_f64() / 1e6);
}

fn report(packets: u64, time: Duration) {
    let secs = time.as_secs_f64();
    println!("  packets forwarded {packets} in {secs:.3} s");
    println!(
        "  forwarding rate   {:.2} Mpps, {:.1} ns/packet (alloc+copy, rx, parse, classify, route, WRED, PFC, enqueue, schedule, tx, free)",
        packets as f64 / secs / 1e6,
        secs * 1e9 / packets.max(1) as f64
    );
}

/// Rate of the runtime with `workers` pinned busy-polling workers, measured
/// between two of the counter snapshots the workers publish.
fn runtime_rate(model: &SwitchModel, mixes: &[Vec<Vec<u8>>], workers: usize, secs: f64) -> f64 {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let opts = RuntimeOptions {
        workers,
        cores: cores.iter().take(workers).map(|c| c.id).collect(),
        poll: PollMode::Busy,
        mirrors: false,
    };
    let (rt, _) = Runtime::start(
        model,
        null_ports(mixes),
        Pool::new(model.pool_buffers()),
        Arc::new(MonotonicClock::new()),
        &opts,
    );
    // Snapshots are published every 100 ms: wait for one after the warm-up,
    // then for one `secs` later, and divide by the time between them.
    let snapshot = |after: u64| loop {
        let tx = forwarded(&rt.stats());
        if tx != after {
            return (tx, Instant::now());
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    std::thread::sleep(Duration::from_millis(500));
    let (tx0, t0) = snapshot(forwarded(&rt.stats()));
    std::thread::sleep(Duration::from_secs_f64(secs));
    let (tx1, t1) = snapshot(forwarded(&rt.stats()));
    let stats = rt.shutdown();
    print_drops(&stats);
    (tx1 - tx0) as f64 / (t1 - t0).as_secs_f64() / 1e6
}

fn scaling(model: &SwitchModel, mixes: &[Vec<Vec<u8>>], amount: Amount, routing: &str) {
    let secs = match amount {
        Amount::Seconds(s) => s,
        Amount::Packets(_) => 3.0,
    };
    let cores = core_affinity::get_core_ids().map_or(0, |c| c.len());
    println!("scaling: {PORTS} null ports, 64-byte RoCEv2/CNP mix {routing}, demo QoS, pinned busy-poll workers ({cores} cores online)");
    let one = runtime_rate(model, mixes, 1, secs);
    println!("  1 worker   {one:.2} Mpps");
    let before = core_to_core_ns();
    let two = runtime_rate(model, mixes, 2, secs);
    let after = core_to_core_ns();
    println!("  2 workers  {two:.2} Mpps  ({:.2}x)", two / one);
    if let (Some(b), Some(a)) = (before, after) {
        println!("  core to core, one way: {b:.0} ns before, {a:.0} ns after");
        println!("core_to_core_ns={a:.0}");
    }
    println!("scaling_2_over_1={:.3}", two / one);
    println!("mpps={two:.3}");
}

/// One-way latency of a cache line between the first two cores, in ns:
/// threads pinned to them take turns writing a counter the other waits
/// for. `None` with fewer than two cores.
fn core_to_core_ns() -> Option<f64> {
    /// The counter alone on its cache line.
    #[repr(align(64))]
    struct Line(AtomicU64);
    const ROUND_TRIPS: u64 = 100_000;
    let cores = core_affinity::get_core_ids()?;
    let &[a, b, ..] = cores.as_slice() else {
        return None;
    };
    let line = Arc::new(Line(AtomicU64::new(0)));
    let echo = {
        let line = Arc::clone(&line);
        std::thread::spawn(move || {
            core_affinity::set_for_current(b);
            for i in 0..ROUND_TRIPS {
                while line.0.load(Ordering::Acquire) != 2 * i + 1 {
                    std::hint::spin_loop();
                }
                line.0.store(2 * i + 2, Ordering::Release);
            }
        })
    };
    let time = std::thread::spawn(move || {
        core_affinity::set_for_current(a);
        let t0 = Instant::now();
        for i in 0..ROUND_TRIPS {
            line.0.store(2 * i + 1, Ordering::Release);
            while line.0.load(Ordering::Acquire) != 2 * i + 2 {
                std::hint::spin_loop();
            }
        }
        t0.elapsed()
    });
    let elapsed = time.join().ok()?;
    echo.join().ok()?;
    Some(elapsed.as_secs_f64() * 1e9 / (2 * ROUND_TRIPS) as f64)
}

fn print_drops(stats: &SwitchStats) {
    let mut reasons = std::collections::BTreeMap::new();
    for i in stats.interfaces.values() {
        for (r, n) in i.drops.iter().filter(|(_, n)| **n > 0) {
            *reasons.entry(r.clone()).or_insert(0u64) += n;
        }
        for q in &i.queues {
            *reasons.entry("tail_drop".to_string()).or_insert(0) += q.tail_drops;
            *reasons.entry("wred_drop".to_string()).or_insert(0) += q.wred_drops;
        }
    }
    reasons.retain(|_, n| *n > 0);
    if !reasons.is_empty() {
        println!("  drops by reason: {reasons:?}");
    }
}

/// Writes `packets` frames of the mixes as one trace per port (frames 10 ns
/// apart on each), replays them, and reports the end-to-end rate.
fn replay(model: &SwitchModel, mixes: &[Vec<Vec<u8>>], amount: Amount, poll_interval: u64) {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::TsResolution;

    let packets = match amount {
        Amount::Packets(n) => n,
        Amount::Seconds(_) => 1_000_000,
    };
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut inputs = Vec::new();
    for (i, mix) in mixes.iter().enumerate() {
        let path = dir.path().join(format!("in{i}.pcap"));
        let header = PcapHeader {
            ts_resolution: TsResolution::NanoSecond,
            ..PcapHeader::default()
        };
        let file = std::io::BufWriter::new(std::fs::File::create(&path).expect("trace file"));
        let mut w = PcapWriter::with_header(file, header).expect("pcap header");
        let share = packets / PORTS as u64 + u64::from((i as u64) < packets % PORTS as u64);
        for k in 0..share {
            let f = &mix[k as usize % mix.len()];
            let ts = Duration::from_nanos(1_000 + k * 10);
            w.write_packet(&PcapPacket::new(ts, f.len() as u32, f))
                .expect("pcap write");
        }
        drop(w);
        inputs.push((i, path));
    }
    let bytes: u64 = inputs
        .iter()
        .filter_map(|(_, p)| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let out = dir.path().join("out");
    let options = railyard_control::replay::ReplayOptions {
        poll_interval,
        ..Default::default()
    };
    let report = railyard_control::replay::replay_pcaps(model, &inputs, &out, &options, |_, _| {})
        .expect("replay");
    let rx: u64 = report.stats.interfaces.values().map(|i| i.rx_packets).sum();
    let tx = forwarded(&report.stats);
    let written: u64 = std::fs::read_dir(&out)
        .map(|d| {
            d.filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    println!(
        "replay: {packets} frames in {PORTS} pcap traces ({:.1} MB) through the demo QoS to {PORTS} output traces ({:.1} MB)",
        bytes as f64 / 1e6,
        written as f64 / 1e6
    );
    let polling = match poll_interval {
        0 => "a poll per event".to_string(),
        ns => format!("polling every {ns} ns of virtual time"),
    };
    println!(
        "  received {rx}, forwarded {tx}, wall {:.3} s, {} polls ({polling})",
        report.wall.as_secs_f64(),
        report.polls
    );
    println!(
        "  end-to-end rate   {:.2} Mpps (read pcap, pipeline, write pcap)",
        rx as f64 / report.wall.as_secs_f64() / 1e6
    );
    print_drops(&report.stats);
    println!("mpps={:.3}", rx as f64 / report.wall.as_secs_f64() / 1e6);
}

#[cfg(not(feature = "dpdk"))]
fn dpdk_null(_: &SwitchModel, _: &[Vec<Vec<u8>>], _: Amount) {
    eprintln!("dpdk-null needs a build with `--features dpdk`");
    std::process::exit(2);
}

/// The forwarding path over four DPDK `net_null` ports (see the module doc).
#[cfg(feature = "dpdk")]
fn dpdk_null(model: &SwitchModel, mixes: &[Vec<Vec<u8>>], amount: Amount) {
    use railyard_dataplane::port::dpdk::{DpdkOptions, DpdkPort, Eal};

    let eal = Eal::init(&[]).unwrap_or_else(|e| panic!("{e}"));
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    for (i, mix) in mixes.iter().enumerate() {
        // net_null gives every frame this length; shorter frames of the mix
        // just carry Ethernet padding.
        let size = mix.iter().map(Vec::len).max().unwrap_or(64);
        let mut port = DpdkPort::open(
            eal,
            &format!("net_null{i},size={size}"),
            &DpdkOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let filled = port.fill_rx_pool(mix);
        assert!(filled > 0, "no mbufs to fill");
        backends.push(Some(Box::new(port)));
    }
    let (mut sw, _) = Switch::new(model, backends, Pool::new(model.pool_buffers()));
    let mut now = CLOCK_START;
    run(&mut sw, &mut now, Amount::Packets(200_000));
    let a0 = ALLOCS.load(Ordering::Relaxed);
    let (packets, time) = run(&mut sw, &mut now, amount);
    let allocs = ALLOCS.load(Ordering::Relaxed) - a0;
    println!("throughput: {PORTS} DPDK net_null ports, 64-byte RoCEv2/CNP mix to the hosts of the other ports, demo QoS, 1 core");
    report(packets, time);
    println!("  allocations in the timed region: {allocs}");
    print_drops(&sw.stats());
    println!("mpps={:.3}", packets as f64 / time.as_secs_f64() / 1e6);
}
