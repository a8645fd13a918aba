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
//! `cargo bench -p railyard-benches --bench throughput [-- SECONDS] [ecmp|flowlet|per-packet]`

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
