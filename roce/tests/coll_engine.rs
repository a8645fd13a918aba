//! The collective engine over an instant in-test transport: every post is
//! copied into the peer's memory when delivered, connections deliver in
//! order, and the next connection to deliver is picked at random (seeded),
//! so the engine is exercised under many interleavings without a NIC.

use std::collections::{BTreeMap, VecDeque};

use railyard_roce::collective::{Delivery, Post, RankEngine};
use railyard_roce::plan::{JobOptions, JobPlan, Workload};

mod common;
use common::ranks;

struct Run {
    wrong: u64,
    done: bool,
    deliveries: u64,
    protocol_errors: u64,
}

/// Runs `plan` to completion; `corrupt(k, bytes)` may alter the k-th
/// delivery's landed bytes.
fn run(plan: &JobPlan, seed: u64, corrupt: &mut dyn FnMut(u64, &mut [u8])) -> Run {
    let n = plan.ranks().len();
    let mut mem: Vec<Vec<u8>> = (0..n).map(|r| vec![0; plan.memory_bytes(r)]).collect();
    let mut eng: Vec<RankEngine> = (0..n).map(|r| RankEngine::new(plan, r)).collect();
    let mut queues: BTreeMap<(usize, usize, usize), VecDeque<Post>> = BTreeMap::new();
    let mut out = Vec::new();
    let enqueue = |src: usize, out: &mut Vec<Post>, q: &mut BTreeMap<_, VecDeque<Post>>| {
        for p in out.drain(..) {
            assert!(
                plan.connection(src, p.peer, p.channel).is_some(),
                "post on a connection the plan lacks: {src}->{} ch {}",
                p.peer,
                p.channel
            );
            q.entry((src, p.peer, p.channel)).or_default().push_back(p);
        }
    };
    for r in 0..n {
        eng[r].start(0, &mut mem[r], &mut out);
        enqueue(r, &mut out, &mut queues);
    }
    let mut state = seed | 1;
    let mut k = 0u64;
    let mut now = 0;
    loop {
        let live: Vec<_> = queues
            .iter()
            .filter(|(_, q)| !q.is_empty())
            .map(|(key, _)| *key)
            .collect();
        if live.is_empty() {
            break;
        }
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let key = live[(state % live.len() as u64) as usize];
        let p = queues.get_mut(&key).unwrap().pop_front().unwrap();
        let (src, dst, ch) = key;
        let data = mem[src][p.local_offset..p.local_offset + p.len].to_vec();
        let at = p.remote_offset as usize;
        mem[dst][at..at + p.len].copy_from_slice(&data);
        corrupt(k, &mut mem[dst][at..at + p.len]);
        k += 1;
        now += 10;
        let d = Delivery {
            peer: src,
            channel: ch,
            imm: p.imm,
            offset: p.remote_offset,
            len: p.len,
        };
        eng[dst].on_delivery(now, &mut mem[dst], d, &mut out);
        enqueue(dst, &mut out, &mut queues);
        eng[src].on_sent(now, &mem[src], p.wr_id);
    }
    Run {
        wrong: eng.iter().map(|e| e.outcome().wrong).sum(),
        done: eng.iter().all(|e| e.done()),
        deliveries: k,
        protocol_errors: eng.iter().map(|e| e.protocol_errors()).sum(),
    }
}

fn opts(channels: usize, chunk_bytes: usize) -> JobOptions {
    JobOptions {
        channels,
        chunk_bytes,
        ..JobOptions::default()
    }
}

fn check_clean(w: Workload, hosts: usize, nics: usize, channels: usize, chunk: usize) -> Run {
    let plan = JobPlan::new(w.clone(), ranks(hosts, nics), opts(channels, chunk)).unwrap();
    let r = run(&plan, 0x1234_5678 + channels as u64, &mut |_, _| {});
    assert!(
        r.done,
        "{w:?} {hosts}x{nics} ch {channels} chunk {chunk}: not done"
    );
    assert_eq!(
        r.wrong, 0,
        "{w:?} {hosts}x{nics} ch {channels} chunk {chunk}"
    );
    assert_eq!(r.protocol_errors, 0);
    r
}

/// Sizes that split unevenly into ranks, channels and chunks.
const ODD_ELEMS: [u64; 3] = [1, 1237, 5003];

#[test]
fn coll_allreduce_every_rank_count_channels_and_uneven_size() {
    for &(h, nn) in &[(2, 1), (3, 1), (2, 2), (1, 4), (4, 2), (2, 4), (8, 1)] {
        for ch in 1..=4 {
            for &e in &ODD_ELEMS {
                check_clean(Workload::AllReduce(e * 4), h, nn, ch, 64);
            }
        }
    }
}

#[test]
fn coll_allreduce_pipelines_chunks_and_counts_deliveries() {
    // 4 ranks, 2 channels, 4000 elements, 100-element chunks: each of 6
    // steps moves a 1000-element segment, 500 per channel, 5 chunks.
    let r = check_clean(Workload::AllReduce(16_000), 4, 1, 2, 400);
    assert_eq!(r.deliveries, 4 * 6 * 2 * 5);
}

#[test]
fn coll_reducescatter_and_allgather() {
    for &(h, nn) in &[(2, 1), (3, 1), (2, 2), (8, 1)] {
        let n = (h * nn) as u64;
        for ch in 1..=4 {
            for &e in &[n, n * 311, n * 1000] {
                check_clean(Workload::ReduceScatter(e * 4), h, nn, ch, 60);
                check_clean(Workload::AllGather(e * 4), h, nn, ch, 60);
            }
        }
    }
}

#[test]
fn coll_alltoall_and_sendrecv() {
    for &(h, nn) in &[(2, 1), (3, 1), (2, 2), (8, 1)] {
        let n = (h * nn) as u64;
        for ch in 1..=4 {
            check_clean(Workload::AllToAll(n * 777 * 4), h, nn, ch, 100);
            check_clean(Workload::SendRecv(1237 * 4), h, nn, ch, 100);
        }
    }
}

#[test]
fn coll_flows_incast_and_permutation() {
    let plan = JobPlan::new(
        Workload::Incast {
            bytes: 10_001,
            srcs: vec![0, 1, 3],
            dst: 2,
        },
        ranks(4, 1),
        JobOptions::default(),
    )
    .unwrap();
    let r = run(&plan, 7, &mut |_, _| {});
    assert!(r.done);
    assert_eq!((r.wrong, r.deliveries), (0, 3));
    for n in [2, 3, 8] {
        let plan = JobPlan::new(
            Workload::Permutation {
                bytes: 999,
                seed: 5,
            },
            ranks(n, 1),
            JobOptions::default(),
        )
        .unwrap();
        let r = run(&plan, 9, &mut |_, _| {});
        assert!(r.done);
        assert_eq!((r.wrong, r.deliveries), (0, n as u64));
    }
}

#[test]
fn coll_corrupted_delivery_shows_in_wrong() {
    for w in [
        Workload::AllReduce(8 * 1000 * 4),
        Workload::AllGather(8 * 1000 * 4),
        Workload::ReduceScatter(8 * 1000 * 4),
        Workload::AllToAll(8 * 1000 * 4),
        Workload::SendRecv(1000 * 4),
    ] {
        let plan = JobPlan::new(w.clone(), ranks(4, 2), opts(2, 256)).unwrap();
        // Flip one byte of the 5th delivery's first element's exponent.
        let r = run(&plan, 3, &mut |k, b| {
            if k == 5 {
                b[3] ^= 0x40;
            }
        });
        assert!(r.done, "{w:?}");
        assert!(r.wrong >= 1, "{w:?}: a corrupted element went unseen");
    }
    let plan = JobPlan::new(
        Workload::Incast {
            bytes: 4096,
            srcs: vec![0, 1],
            dst: 2,
        },
        ranks(3, 1),
        JobOptions::default(),
    )
    .unwrap();
    let r = run(&plan, 3, &mut |k, b| {
        if k == 1 {
            b[100] ^= 0xff;
            b[200] ^= 0xff;
        }
    });
    assert_eq!(r.wrong, 2);
}

#[test]
fn coll_engine_rejects_a_delivery_outside_the_schedule() {
    let plan = JobPlan::new(Workload::AllReduce(4000), ranks(2, 1), opts(1, 400)).unwrap();
    let mut e = RankEngine::new(&plan, 1);
    let mut mem = vec![0; plan.memory_bytes(1)];
    let mut out = Vec::new();
    e.start(0, &mut mem, &mut out);
    let before = out.len();
    // A step beyond the schedule.
    e.on_delivery(
        1,
        &mut mem,
        Delivery {
            peer: 0,
            channel: 0,
            imm: 9 << 22,
            offset: 0,
            len: 400,
        },
        &mut out,
    );
    assert_eq!(out.len(), before);
    assert_eq!(e.protocol_errors(), 1);
    assert_eq!(e.outcome().wrong, 100);
    assert!(!e.done());
}
