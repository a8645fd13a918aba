//! How long a PFC frame takes from one port's transmit to the peer port's
//! receive on a software backend: the largest term of the response time a
//! lossless class's headroom must cover. Needs root; run inside a network
//! namespace holding a veth pair A–B (scripts/bench-pfc-response.sh makes one).
//!
//!   pfc_response A B [SAMPLES]
//!
//! Sends one PFC frame from A every 0.5–3 ms (so B's receive direction is
//! idle, as the pause direction of a one-way incast is) and busy-polls B
//! until it arrives; prints the one-way latency's percentiles.

use std::time::{Duration, Instant};

use railyard_dataplane::port::afpacket::{AfPacketOptions, AfPacketPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::mac_control::{self, MacControlRepr};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Burst, Pool};

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let (Some(a), Some(b)) = (args.first(), args.get(1)) else {
        eprintln!("usage: pfc_response IF_A IF_B [SAMPLES]");
        std::process::exit(2);
    };
    let samples: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(300);
    let mut tx = AfPacketPort::open(a, AfPacketOptions::default()).expect("open A");
    let mut rx = AfPacketPort::open(b, AfPacketOptions::default()).expect("open B");
    let pool = Pool::new(4096);
    let mut frame = [0u8; mac_control::FRAME_LEN];
    let mut quanta = [0u16; 8];
    quanta[3] = 0xffff;
    MacControlRepr::Pfc {
        enable: 1 << 3,
        quanta,
    }
    .emit_frame(MacAddr([2, 0, 0, 0, 0, 1]), &mut frame);
    let mut lat = Vec::with_capacity(samples);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut burst = Burst::new();
    // Drain whatever the links brought up (IPv6 router solicitations…).
    std::thread::sleep(Duration::from_millis(50));
    while rx.rx_burst(&pool, &mut burst, 0) > 0 {
        burst.clear();
    }
    for _ in 0..samples {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        std::thread::sleep(Duration::from_micros(500 + seed % 2500));
        let mut out = Burst::new();
        out.push(pool.alloc_from(&frame).expect("buffer"));
        let t0 = Instant::now();
        assert_eq!(tx.tx_burst(&mut out, 0).sent, 1, "send");
        loop {
            if rx.rx_burst(&pool, &mut burst, 0) > 0 {
                let ours = burst
                    .iter()
                    .any(|p| p.data().get(12..14) == Some(&[0x88, 0x08]));
                burst.clear();
                if ours {
                    break;
                }
            }
            assert!(t0.elapsed() < Duration::from_secs(1), "frame lost");
        }
        lat.push(t0.elapsed().as_nanos() as u64);
    }
    lat.sort_unstable();
    let p = |q: f64| lat[((lat.len() - 1) as f64 * q) as usize] as f64 / 1000.0;
    println!(
        "af-packet one-way PFC frame latency, idle direction, {} samples: p50 {:.1} us, p90 {:.1} us, p99 {:.1} us, max {:.1} us",
        lat.len(),
        p(0.5),
        p(0.9),
        p(0.99),
        p(1.0)
    );
}
