//! Cost per packet of the egress QoS path: classify, enqueue (WRED with ECN
//! marking in its random band, buffer admission), schedule and dequeue.
//!
//! Packets are parsed once and recycled: each iteration classifies and
//! enqueues a burst of 32 RoCEv2/CNP packets into a queue held inside its
//! WRED band, then dequeues 32, so the queue's depth (and the work WRED and
//! DWRR do) stays the same from one iteration to the next.
//!
//! `cargo bench -p railyard-benches --bench qos`

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use railyard_benches::{model, roce_mix};
use railyard_dataplane::counters::QueueCounters;
use railyard_dataplane::meta::Meta;
use railyard_dataplane::model::{
    AclEntryModel, AclRuleModel, InterfaceModel, PortMatch, RuleTermModel, ThresholdUnit,
    WredModel, KBYTE,
};
use railyard_dataplane::parse::parse;
use railyard_dataplane::qos::classify::Classifier;
use railyard_dataplane::queue::{EgressQueues, NUM_QUEUES};
use railyard_dataplane::{Burst, PacketBuf, Pool, BURST_SIZE};

/// The book's policy on one port: DSCP 24 → q3 with WRED 150–3000 KB ecn,
/// DSCP 48 → q7 strict; `rules` adds three access-list rules ahead of the
/// tables (none of which match), `speed` shapes the port.
fn port(rules: bool, speed: Option<u32>) -> InterfaceModel {
    let mut m = model(1).interfaces.remove(0);
    m.dscp_to_qos_group[24] = 3;
    m.dscp_to_qos_group[48] = 7;
    m.queues[3].bandwidth_remaining_percent = Some(50);
    m.queues[3].wred = Some(WredModel {
        min: 150 * KBYTE,
        max: 3000 * KBYTE,
        unit: ThresholdUnit::Bytes,
        drop_probability_percent: 7,
        weight: 0,
        ecn: true,
    });
    m.speed_mbps = speed;
    if rules {
        let entry = AclEntryModel {
            permit: true,
            protocol: Some(6),
            src: Some((IpAddr::V4(Ipv4Addr::new(192, 168, 0, 0)), 16)),
            dst: None,
            src_port: None,
            dst_port: Some(PortMatch::Range(5000, 5100)),
            dscp: None,
        };
        m.acl_rules = (0..3)
            .map(|g| AclRuleModel {
                terms: vec![RuleTermModel::Access(vec![entry])],
                qos_group: g,
            })
            .collect();
    }
    m
}

/// Parsed packets of the benchmark mix.
fn packets(pool: &Pool, n: usize) -> Vec<PacketBuf> {
    let mix = roce_mix(0, 4, 256);
    (0..n)
        .map(|i| {
            let mut p = pool.alloc_from(&mix[i % mix.len()]).expect("pool");
            let mut m = Meta::default();
            parse(p.data(), &mut m).expect("parses");
            p.meta = m;
            p
        })
        .collect()
}

fn bench_path(c: &mut Criterion, name: &str, m: &InterfaceModel) {
    let pool = Pool::new(16 * 1024);
    let classifier = Classifier::new(m);
    let mut queues = EgressQueues::new(m, 1);
    let mut counters = [QueueCounters::default(); NUM_QUEUES];
    // Hold queue 3 at 3000 packets of 64 bytes, 192 KB: in the WRED band.
    let mut now = 0;
    for p in packets(&pool, 3000) {
        let _ = queues.enqueue(3, p, now, &mut counters);
    }
    let mut burst: Burst = packets(&pool, BURST_SIZE).into_iter().collect();
    let mut out = Burst::new();
    let mut group = c.benchmark_group("qos");
    group.throughput(Throughput::Elements(BURST_SIZE as u64));
    group.bench_function(name, |b| {
        b.iter(|| {
            now += 1_000_000;
            for pkt in burst.drain(..) {
                let q = classifier.classify(black_box(&pkt));
                let _ = queues.enqueue(usize::from(q), pkt, now, &mut counters);
            }
            while out.len() < BURST_SIZE {
                if queues.dequeue_burst(&mut out, BURST_SIZE, now, &mut counters) == 0 {
                    break;
                }
                // Shaped: let the wire free for the next frame.
                now += 10_000;
            }
            // Recycle: what left becomes the next burst to classify.
            burst.extend(out.drain(..));
            black_box(&counters);
        })
    });
    group.finish();
}

fn qos(c: &mut Criterion) {
    bench_path(
        c,
        "classify+enqueue+wred+dequeue (tables, unshaped)",
        &port(false, None),
    );
    bench_path(
        c,
        "classify+enqueue+wred+dequeue (3 acl rules, unshaped)",
        &port(true, None),
    );
    bench_path(
        c,
        "classify+enqueue+wred+dequeue (tables, 100G shaped)",
        &port(false, Some(100_000)),
    );
}

criterion_group!(benches, qos);
criterion_main!(benches);
