//! Unit tests: the ring's bound and order, the queue a plot picks.

use super::*;
use railyard_dataplane::stats::{InterfaceStats, QueueStats};

fn stats(depth: u64, marks: u64, pauses: u64) -> SwitchStats {
    let mut i = InterfaceStats::default();
    i.queues.push(QueueStats {
        queue: 3,
        depth_bytes: depth,
        ecn_marked: marks,
        ..QueueStats::default()
    });
    i.pfc.tx_pause[3] = pauses;
    let mut s = SwitchStats::default();
    s.interfaces.insert("Ethernet1/2".into(), i);
    s
}

#[test]
fn the_ring_keeps_the_newest_samples_oldest_first_and_never_grows() {
    let start = Instant::now();
    let mut r =
        QueueRing::with_capacity(vec!["Ethernet1/1".into(), "Ethernet1/2".into()], start, 4);
    assert!(r.due(start));
    for k in 0..10u64 {
        let now = start + RING_PERIOD * k as u32;
        r.record(&stats(k * 1000, k, k / 2), now);
        assert!(!r.due(now), "the next sample waits a period");
    }
    let reply = r.reply("Ethernet1/2").unwrap();
    assert_eq!(reply.capacity, 4);
    assert_eq!(reply.period_ms, 100);
    let t: Vec<u64> = reply.samples.iter().map(|s| s.t_ms).collect();
    assert_eq!(t, [600, 700, 800, 900]);
    let depth: Vec<u64> = reply
        .samples
        .iter()
        .map(|s| s.queues[3].depth_bytes)
        .collect();
    assert_eq!(depth, [6000, 7000, 8000, 9000]);
    assert_eq!(reply.samples[3].queues[3].ecn_marked, 9);
    assert_eq!(reply.samples[3].queues[3].pfc, [4, 0, 0, 0]);
    // An interface without counters samples as idle; an unknown one has no ring.
    assert!(r
        .reply("Ethernet1/1")
        .unwrap()
        .samples
        .iter()
        .all(|s| s.queues == [QueuePoint::default(); NUM_QUEUES]));
    assert!(r.reply("Ethernet1/9").is_none());
}

#[test]
fn a_plot_shows_the_busiest_queue_and_draws_its_series() {
    let start = Instant::now();
    let mut r = QueueRing::with_capacity(vec!["Ethernet1/2".into()], start, 8);
    for k in 0..5u32 {
        r.record(
            &stats(u64::from(k) * 20_000, u64::from(k), 0),
            start + RING_PERIOD * k,
        );
    }
    let reply = r.reply("Ethernet1/2").unwrap();
    assert_eq!(busiest_queue(&reply, None), 3);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("q.svg");
    write_plot(&reply, 3, None, &file).unwrap();
    let svg = std::fs::read_to_string(&file).unwrap();
    for text in [
        "queue depth: Ethernet1/2 queue 3",
        "time (s)",
        "ECN marked",
        "depth of queue 3",
    ] {
        assert!(svg.contains(text), "{text} in the SVG");
    }
    let empty = QueueRing::with_capacity(vec!["Ethernet1/2".into()], start, 8);
    let e = write_plot(&empty.reply("Ethernet1/2").unwrap(), 3, None, &file).unwrap_err();
    assert!(e.contains("no samples yet"), "{e}");
}
