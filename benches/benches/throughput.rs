//! Throughput of the forwarding path over in-memory ports.
//!
//! Four ring ports, a 64-byte RoCEv2/CNP mix entering every port toward the
//! others. Frames are written into pooled buffers and queued on the ports
//! outside the timed region; only `Switch::poll` is timed. A counting
//! allocator checks that the timed region allocates nothing.
//!
//! With `ecmp`, `flowlet` or `per-packet` the traffic goes to a remote
//! prefix routed over a four-way group of the ports instead, balanced that
//! way (the cost of hashing, of the flowlet table and of port quality).
//!
//! With `dpdk-null` (a build with `--features dpdk`), the four ports are
//! DPDK `net_null` ethdevs instead: each port's receive pool is filled with
//! the same mix once (net_null hands out its mbufs without writing them),
//! and transmit frees the mbufs. The timed region is then the whole
//! `Switch::poll`, DPDK's rx/tx and railyard's copies included.
//!
//! `cargo bench -p railyard-benches --bench throughput [-- SECONDS] [ecmp|flowlet|per-packet]`
//! `cargo bench -p railyard-benches --features dpdk --bench throughput -- 3 dpdk-null`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use railyard_benches::{balanced_model, model, roce_mix, roce_mix_remote};
use railyard_dataplane::model::DlbMode;
use railyard_dataplane::port::ring::{RingLink, RingPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::switch::Switch;
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
const RING: usize = 4096;

fn main() {
    let secs: f64 = std::env::args()
        .filter_map(|a| a.parse().ok())
        .next()
        .unwrap_or(3.0);
    let balance = std::env::args().find_map(|a| match a.as_str() {
        "ecmp" => Some(None),
        "flowlet" => Some(Some(DlbMode::Flowlet)),
        "per-packet" => Some(Some(DlbMode::PerPacket)),
        _ => None,
    });
    if std::env::args().any(|a| a == "dpdk-null") {
        dpdk_null(secs);
        return;
    }
    let pool = Pool::new(64 * 1024);
    let model = match balance {
        Some(dlb) => balanced_model(PORTS, dlb),
        None => model(PORTS),
    };
    let mut hosts: Vec<RingPort> = Vec::new();
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    for i in 0..PORTS {
        let (sw_end, host_end, _) = RingLink::pair(&format!("p{i}"), RING);
        backends.push(Some(Box::new(sw_end)));
        hosts.push(host_end);
    }
    let (mut sw, _) = Switch::new(&model, backends, pool.clone());
    let mixes: Vec<Vec<Vec<u8>>> = (0..PORTS)
        .map(|i| match balance {
            Some(_) => roce_mix_remote(i, 256),
            None => roce_mix(i, PORTS, 256),
        })
        .collect();
    let mut cursor = [0usize; PORTS];

    let mut timed = Duration::ZERO;
    let mut allocs_in_poll = 0u64;
    let mut now = 0u64;
    let wall = Instant::now();
    while wall.elapsed().as_secs_f64() < secs {
        // Refill each host's transmit direction; drain what the switch sent.
        for (i, h) in hosts.iter_mut().enumerate() {
            while h.recv().is_some() {}
            for _ in 0..RING / 2 {
                let mix = &mixes[i];
                let f = &mix[cursor[i] % mix.len()];
                cursor[i] += 1;
                let Some(p) = pool.alloc_from(f) else { break };
                if h.send(p).is_err() {
                    break;
                }
            }
        }
        let a0 = ALLOCS.load(Ordering::Relaxed);
        let t0 = Instant::now();
        for _ in 0..(RING / 2 / 32) {
            now += 1_000;
            sw.poll(now);
        }
        timed += t0.elapsed();
        allocs_in_poll += ALLOCS.load(Ordering::Relaxed) - a0;
    }
    let stats = sw.stats();
    let rx: u64 = stats.interfaces.values().map(|i| i.rx_packets).sum();
    let tx: u64 = stats.interfaces.values().map(|i| i.tx_packets).sum();
    let drops: u64 = stats.interfaces.values().map(|i| i.total_drops()).sum();
    let routing = match balance {
        None => "to the hosts of other ports".to_string(),
        Some(None) => format!("over a {PORTS}-way ECMP group"),
        Some(Some(m)) => format!("over a {PORTS}-way DLB group ({m:?})"),
    };
    println!("throughput: {PORTS} ring ports, 64-byte RoCEv2/CNP mix {routing}, 1 core");
    println!("  packets received  {rx}");
    println!("  packets forwarded {tx}   dropped {drops}");
    println!("  time in pipeline  {:.3} s", timed.as_secs_f64());
    println!(
        "  forwarding rate   {:.2} Mpps (rx+route+enqueue+dequeue+tx)",
        tx as f64 / timed.as_secs_f64() / 1e6
    );
    println!("  allocations in the timed region: {allocs_in_poll}");
    print_drops(&stats);
}

fn print_drops(stats: &railyard_dataplane::stats::SwitchStats) {
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

#[cfg(not(feature = "dpdk"))]
fn dpdk_null(_secs: f64) {
    eprintln!("dpdk-null needs a build with `--features dpdk`");
    std::process::exit(2);
}

/// The forwarding path over four DPDK `net_null` ports (see the module doc).
#[cfg(feature = "dpdk")]
fn dpdk_null(secs: f64) {
    use railyard_dataplane::port::dpdk::{DpdkOptions, DpdkPort, Eal};

    let eal = Eal::init(&[]).unwrap_or_else(|e| panic!("{e}"));
    let pool = Pool::new(64 * 1024);
    let model = model(PORTS);
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    for i in 0..PORTS {
        let mix = roce_mix(i, PORTS, 256);
        // net_null gives every frame this length; shorter frames of the mix
        // just carry Ethernet padding.
        let size = mix.iter().map(Vec::len).max().unwrap_or(64);
        let mut port = DpdkPort::open(
            eal,
            &format!("net_null{i},size={size}"),
            &DpdkOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let filled = port.fill_rx_pool(&mix);
        assert!(filled > 0, "no mbufs to fill");
        backends.push(Some(Box::new(port)));
    }
    let (mut sw, _) = Switch::new(&model, backends, pool);
    // Warm up (fault in buffers, fill the caches), then time.
    for i in 0..10_000 {
        sw.poll(i * 1_000);
    }
    let before = sw.stats();
    let sum = |s: &railyard_dataplane::stats::SwitchStats| -> (u64, u64) {
        (
            s.interfaces.values().map(|i| i.rx_packets).sum(),
            s.interfaces.values().map(|i| i.tx_packets).sum(),
        )
    };
    let (rx0, tx0) = sum(&before);
    let a0 = ALLOCS.load(Ordering::Relaxed);
    let mut now = 10_000_000u64;
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < secs {
        for _ in 0..1024 {
            now += 1_000;
            sw.poll(now);
        }
    }
    let timed = t0.elapsed();
    let allocs = ALLOCS.load(Ordering::Relaxed) - a0;
    let stats = sw.stats();
    let (rx1, tx1) = sum(&stats);
    let drops: u64 = stats.interfaces.values().map(|i| i.total_drops()).sum();
    println!("throughput: {PORTS} DPDK net_null ports, 64-byte RoCEv2/CNP mix (66-byte frames) to the hosts of other ports, 1 core");
    println!("  packets received  {}", rx1 - rx0);
    println!(
        "  packets forwarded {}   dropped {drops} (whole run)",
        tx1 - tx0
    );
    println!("  time              {:.3} s", timed.as_secs_f64());
    println!(
        "  forwarding rate   {:.2} Mpps (DPDK rx + copy + route + enqueue + dequeue + copy + DPDK tx)",
        (tx1 - tx0) as f64 / timed.as_secs_f64() / 1e6
    );
    println!("  allocations in the timed region: {allocs}");
    print_drops(&stats);
}
