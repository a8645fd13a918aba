//! The QoS fast path allocates nothing: classification through access-list
//! rules, WRED marking, buffer admission, strict/DWRR scheduling, shaping and
//! sojourn-time recording, counted with a counting global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU64, Ordering};

use railyard_dataplane::counters::QueueCounters;
use railyard_dataplane::meta::Meta;
use railyard_dataplane::model::{
    AclEntryModel, AclRuleModel, InterfaceModel, RuleTermModel, ThresholdUnit, WredModel,
};
use railyard_dataplane::parse::parse;
use railyard_dataplane::qos::classify::Classifier;
use railyard_dataplane::queue::{EgressQueues, NUM_QUEUES};
use railyard_dataplane::wire::{checksum, MacAddr};
use railyard_dataplane::{Burst, Pool, BURST_SIZE};

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

/// Ethernet + IPv4 + UDP, `len` bytes, DSCP `dscp`, ECT(0).
fn frame(len: usize, dscp: u8) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    let h = &mut f[14..34];
    h[0] = 0x45;
    h[1] = (dscp << 2) | 2;
    h[2..4].copy_from_slice(&((len - 14) as u16).to_be_bytes());
    h[8] = 64;
    h[9] = 17;
    h[12..16].copy_from_slice(&[10, 0, 0, 1]);
    h[16..20].copy_from_slice(&[10, 0, 0, 2]);
    let c = !checksum::data(h);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    f[34..36].copy_from_slice(&1000u16.to_be_bytes());
    f[36..38].copy_from_slice(&2000u16.to_be_bytes());
    f[38..40].copy_from_slice(&((len - 34) as u16).to_be_bytes());
    f
}

#[test]
fn classify_enqueue_wred_schedule_dequeue_allocate_nothing() {
    let mut m = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 0, 1]));
    m.speed_mbps = Some(100_000);
    m.dscp_to_qos_group[24] = 3;
    m.dscp_to_qos_group[48] = 7;
    m.queues[3].bandwidth_remaining_percent = Some(50);
    m.queues[3].shape_max_bps = Some(80_000_000_000);
    m.queues[3].wred = Some(WredModel {
        min: 10_000,
        max: 200_000,
        unit: ThresholdUnit::Bytes,
        drop_probability_percent: 50,
        weight: 1,
        ecn: true,
    });
    m.queues[1].bandwidth_percent = Some(10);
    m.acl_rules = vec![AclRuleModel {
        terms: vec![RuleTermModel::Access(vec![AclEntryModel {
            permit: true,
            protocol: Some(17),
            src: Some((IpAddr::V4(Ipv4Addr::new(10, 0, 0, 0)), 8)),
            dst: None,
            src_port: None,
            dst_port: None,
            dscp: Some(10),
        }])],
        qos_group: 1,
    }];
    let classifier = Classifier::new(&m);
    let mut queues = EgressQueues::new(&m, 7);
    let mut counters = [QueueCounters::default(); NUM_QUEUES];
    let pool = Pool::new(4096);
    let mut burst = Burst::new();
    for i in 0..BURST_SIZE {
        let dscp = [24, 24, 24, 48, 10][i % 5];
        let mut p = pool.alloc_from(&frame(64 + i * 40, dscp)).unwrap();
        let mut meta = Meta::default();
        parse(p.data(), &mut meta).unwrap();
        p.meta = meta;
        burst.push(p);
    }
    let mut out = Burst::new();
    let mut now = 0;
    let mut run = |rounds: usize, burst: &mut Burst| {
        for _ in 0..rounds {
            for pkt in burst.drain(..) {
                let q = classifier.classify(&pkt);
                let _ = queues.enqueue(usize::from(q), pkt, now, &mut counters);
            }
            // About as fast as arrivals: each burst lands in WRED's band
            // and drains again, so the packets keep circulating.
            for _ in 0..40 {
                now += 50;
                queues.dequeue_burst(&mut out, 1, now, &mut counters);
            }
            let _ = queues.next_departure();
            burst.extend(out.drain(..));
            if burst.is_empty() {
                break;
            }
        }
    };
    // Warm up thread-local caches outside the counted region.
    run(10, &mut burst);
    let before = ALLOCS.load(Ordering::Relaxed);
    run(2000, &mut burst);
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(allocs, 0, "the QoS path allocated {allocs} times");
    assert_eq!(burst.len(), BURST_SIZE, "nothing was lost on the way");
    assert!(counters[3].tx_packets > 2000 * 15);
    assert!(counters[3].ecn_marked > 0, "WRED marked: {:?}", counters[3]);
    assert!(counters[1].tx_packets > 0 && counters[7].tx_packets > 0);
    assert!(queues.latency(3).max > 0);
    for (q, c) in queues.counters_now(&counters).iter().enumerate() {
        assert!(c.conserved(), "queue {q}: {c:?}");
        assert_eq!(c.depth_packets, queues.depth_packets(q) as u64);
    }
}
