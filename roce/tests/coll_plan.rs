//! The job plan: the workload grammar, the rail-aligned ring, QP numbers,
//! source ports and memory, and the results table.

use std::collections::HashSet;

use railyard_roce::host::{FlowOutcome, HostOutcome, RankOutcome};
use railyard_roce::plan::{decode_qpn, parse_size, qpn, JobOptions, JobPlan, Role, Via, Workload};
use railyard_roce::report::{render_table, summarise};

mod common;
use common::ranks;

fn names(spec: &str) -> Result<Workload, String> {
    Workload::parse(spec, &|n: &str| match n {
        "h0" => Ok(0),
        "h1" => Ok(2),
        "h1.eth1" => Ok(3),
        "h2" => Ok(4),
        _ => Err(format!("no host {n:?}")),
    })
}

#[test]
fn coll_sizes() {
    assert_eq!(parse_size("4096"), Ok(4096));
    assert_eq!(parse_size("512K"), Ok(512 << 10));
    assert_eq!(parse_size("64M"), Ok(64 << 20));
    assert_eq!(parse_size("1G"), Ok(1 << 30));
    assert_eq!(parse_size("2mb"), Ok(2 << 20));
    for bad in ["", "M", "12X", "1.5M", "-4", "99999999999999999999G"] {
        let e = parse_size(bad).unwrap_err();
        assert!(e.contains("like 512K"), "{bad}: {e}");
    }
}

#[test]
fn coll_workload_grammar() {
    assert_eq!(names("allreduce:64M"), Ok(Workload::AllReduce(64 << 20)));
    assert_eq!(names("AllGather:1M"), Ok(Workload::AllGather(1 << 20)));
    assert_eq!(
        names("reducescatter:4096"),
        Ok(Workload::ReduceScatter(4096))
    );
    assert_eq!(names("alltoall:8K"), Ok(Workload::AllToAll(8192)));
    assert_eq!(names("sendrecv:8K"), Ok(Workload::SendRecv(8192)));
    assert_eq!(
        names("incast:1M:h0,h1.eth1:h2"),
        Ok(Workload::Incast {
            bytes: 1 << 20,
            srcs: vec![0, 3],
            dst: 4
        })
    );
    assert_eq!(
        names("permutation:1M"),
        Ok(Workload::Permutation {
            bytes: 1 << 20,
            seed: 1
        })
    );
    assert_eq!(
        names("permutation:1M:42"),
        Ok(Workload::Permutation {
            bytes: 1 << 20,
            seed: 42
        })
    );
    for (spec, hint) in [
        ("broadcast:1M", "unknown operation"),
        ("allreduce", "expected allreduce:SIZE"),
        ("allreduce:1Q", "bad size"),
        ("allreduce:0", "more than 0"),
        ("allreduce:1M:3", "expected allreduce:SIZE"),
        ("incast:1M:h0", "incast:SIZE:SRC1,SRC2,...:DST"),
        ("incast:1M:h0,hx:h2", "source \"hx\": no host"),
        ("incast:1M:h0,,h1:h2", "empty source"),
        ("incast:1M:h0,h0:h2", "twice"),
        ("incast:1M:h0:h0", "also a source"),
        ("incast:1M:h0:zz", "destination \"zz\""),
        ("permutation:1M:x", "bad SEED"),
    ] {
        let e = names(spec).unwrap_err();
        assert!(e.contains(hint), "{spec}: {e}");
    }
}

#[test]
fn coll_plan_refuses_what_does_not_fit() {
    let o = JobOptions::default();
    assert!(JobPlan::new(Workload::AllReduce(4096), ranks(1, 1), o.clone()).is_err());
    let e = JobPlan::new(Workload::AllReduce(4097), ranks(2, 1), o.clone()).unwrap_err();
    assert!(e.contains("multiple of 4"), "{e}");
    let e = JobPlan::new(Workload::AllGather(4100), ranks(3, 1), o.clone()).unwrap_err();
    assert!(e.contains("multiple of 12"), "{e}");
    let inc = Workload::Incast {
        bytes: 10,
        srcs: vec![0, 7],
        dst: 1,
    };
    assert!(JobPlan::new(inc, ranks(2, 1), o.clone())
        .unwrap_err()
        .contains("rank 7"));
    let mut dup = ranks(2, 1);
    dup[1].host = 0;
    assert!(JobPlan::new(Workload::AllReduce(4096), dup, o.clone()).is_err());
    let zero = JobOptions {
        channels: 0,
        ..o.clone()
    };
    assert!(JobPlan::new(Workload::AllReduce(4096), ranks(2, 1), zero).is_err());
    let tiny = JobOptions {
        chunk_bytes: 4,
        ..o
    };
    assert!(JobPlan::new(Workload::AllReduce(64 << 20), ranks(2, 1), tiny).is_err());
}

#[test]
fn coll_ring_is_rail_aligned() {
    let p = JobPlan::new(
        Workload::AllReduce(1 << 20),
        ranks(4, 4),
        JobOptions::default(),
    )
    .unwrap();
    let order: Vec<String> = p
        .ring()
        .iter()
        .map(|&r| p.ranks()[r].name.clone())
        .collect();
    assert_eq!(
        order.join(" "),
        "h0.eth0 h0.eth1 h0.eth2 h0.eth3 h1.eth3 h1.eth2 h1.eth1 h1.eth0 \
         h2.eth0 h2.eth1 h2.eth2 h2.eth3 h3.eth3 h3.eth2 h3.eth1 h3.eth0"
    );
    // Every network hop, the closing one included, stays on one rail.
    let n = p.ring().len();
    for i in 0..n {
        let (a, b) = (&p.ranks()[p.ring()[i]], &p.ranks()[p.ring()[(i + 1) % n]]);
        if a.host != b.host {
            assert_eq!(a.nic, b.nic, "{} -> {}", a.name, b.name);
        }
        let c = p.connection(p.ring()[i], p.ring()[(i + 1) % n], 1).unwrap();
        assert_eq!(c.via == Via::NvLink, a.host == b.host);
    }
    // Odd host count: only the closing hop crosses rails.
    let p = JobPlan::new(
        Workload::AllReduce(1 << 20),
        ranks(3, 2),
        JobOptions::default(),
    )
    .unwrap();
    let r = p.ring();
    let cross = (0..r.len())
        .filter(|&i| {
            let (a, b) = (&p.ranks()[r[i]], &p.ranks()[r[(i + 1) % r.len()]]);
            a.host != b.host && a.nic != b.nic
        })
        .collect::<Vec<_>>();
    assert_eq!(cross, vec![r.len() - 1]);
    // One NIC per host: a plain ring over the network.
    let p = JobPlan::new(
        Workload::AllReduce(1 << 20),
        ranks(5, 1),
        JobOptions::default(),
    )
    .unwrap();
    assert_eq!(p.ring(), &[0, 1, 2, 3, 4]);
    assert!(p.connections().iter().all(|c| c.via == Via::Network));
}

#[test]
fn coll_qpns_and_ports_are_unique_and_deterministic() {
    assert_eq!(
        decode_qpn(qpn(5, Role::Receiver, 3)),
        Some((5, Role::Receiver, 3))
    );
    assert_eq!(qpn(0, Role::Sender, 0), 0x100);
    assert_eq!(decode_qpn(0x7f), None);
    let mk = || {
        JobPlan::new(
            Workload::AllToAll(64 << 10),
            ranks(4, 2),
            JobOptions::default(),
        )
        .unwrap()
    };
    let (a, b) = (mk(), mk());
    assert_eq!(a.connections(), b.connections());
    let mut ports = HashSet::new();
    for r in 0..8 {
        let qps = a.qp_configs(r);
        // 6 network peers (other hosts) × 2 directions × 2 channels.
        assert_eq!(qps.len(), 6 * 2 * 2);
        let mut local: Vec<u32> = qps.iter().map(|q| q.local_qpn).collect();
        local.sort_unstable();
        local.dedup();
        assert_eq!(local.len(), qps.len(), "QP numbers repeat on rank {r}");
        for q in &qps {
            assert!(q.udp_sport >= 49152);
            assert!(ports.insert(q.udp_sport), "port {} twice", q.udp_sport);
            // The peer's end names us back.
            let (peer, _, _) = decode_qpn(q.local_qpn).unwrap();
            assert_eq!(q.remote_ip, a.ranks()[peer].ip);
            assert!(a
                .qp_configs(peer)
                .iter()
                .any(|p| p.local_qpn == q.remote_qpn && p.remote_qpn == q.local_qpn));
        }
    }
}

#[test]
fn coll_memory_layout() {
    let o = JobOptions {
        channels: 2,
        ..JobOptions::default()
    };
    let p = JobPlan::new(Workload::AllReduce(4000), ranks(2, 2), o.clone()).unwrap();
    // 1000 elements, 4 segments of 250, 125 per channel: 2 slots × 2 channels.
    assert_eq!(p.memory_bytes(0), 4000 + 4 * 500);
    let p = JobPlan::new(Workload::AllGather(4000), ranks(2, 2), o.clone()).unwrap();
    assert_eq!(p.memory_bytes(3), 4000);
    let p = JobPlan::new(Workload::AllToAll(4000), ranks(2, 2), o.clone()).unwrap();
    assert_eq!(p.memory_bytes(1), 8000);
    let inc = Workload::Incast {
        bytes: 1000,
        srcs: vec![0, 1],
        dst: 3,
    };
    let p = JobPlan::new(inc, ranks(2, 2), o).unwrap();
    assert_eq!(
        (p.memory_bytes(0), p.memory_bytes(2), p.memory_bytes(3)),
        (1000, 0, 1000)
    );
    assert_eq!(p.layout(3).recv, 0);
}

#[test]
fn coll_permutation_is_a_seeded_derangement() {
    let mk = |seed| {
        JobPlan::new(
            Workload::Permutation { bytes: 100, seed },
            ranks(8, 1),
            JobOptions::default(),
        )
        .unwrap()
        .flows()
        .to_vec()
    };
    let f = mk(3);
    assert_eq!(f, mk(3));
    assert_ne!(f, mk(4));
    let mut dsts: Vec<usize> = f.iter().map(|x| x.1).collect();
    assert!(f.iter().all(|x| x.0 != x.1));
    dsts.sort_unstable();
    assert_eq!(dsts, (0..8).collect::<Vec<_>>());
}

fn host(h: usize, ranks: Vec<(usize, u64, u64)>, flows: Vec<FlowOutcome>) -> HostOutcome {
    HostOutcome {
        host: h,
        start_ns: 1_000,
        ranks: ranks
            .into_iter()
            .map(|(rank, end, wrong)| RankOutcome {
                rank,
                end_ns: Some(end),
                wrong,
                checked: true,
                workload: 0,
            })
            .collect(),
        flows,
        nics: Vec::new(),
    }
}

#[test]
fn coll_summary_and_table() {
    let p = JobPlan::new(
        Workload::AllReduce(16 << 20),
        ranks(2, 2),
        JobOptions::default(),
    )
    .unwrap();
    let outs = [
        host(0, vec![(0, 401_000, 0), (1, 300_000, 0)], vec![]),
        host(1, vec![(2, 350_000, 2), (3, 201_000, 0)], vec![]),
    ];
    let r = summarise(&p, &outs);
    assert_eq!(
        (r.bytes, r.count, r.wrong, r.completed),
        (16 << 20, 4 << 20, 2, true)
    );
    assert!((r.time_us - 400.0).abs() < 1e-9);
    let alg = (16u64 << 20) as f64 / 400e-6 / 1e9;
    assert!((r.algbw_gbps - alg).abs() < 1e-9);
    assert!((r.busbw_gbps - alg * 1.5).abs() < 1e-9);
    let ag = JobPlan::new(
        Workload::AllGather(16 << 20),
        ranks(2, 2),
        JobOptions::default(),
    )
    .unwrap();
    let g = summarise(&ag, &outs);
    assert!((g.busbw_gbps - alg * 0.75).abs() < 1e-9);
    // A rank that did not finish.
    let mut late = outs.clone();
    late[1].ranks[0].end_ns = None;
    assert!(!summarise(&p, &late).completed);

    let inc = Workload::Incast {
        bytes: 1 << 20,
        srcs: vec![0, 1],
        dst: 3,
    };
    let ip = JobPlan::new(inc, ranks(2, 2), JobOptions::default()).unwrap();
    let flow = |src, end| FlowOutcome {
        src,
        dst: 3,
        bytes: 1 << 20,
        start_ns: 1_000,
        end_ns: Some(end),
        wrong: 0,
        workload: 0,
    };
    let fo = [
        host(
            0,
            vec![(0, 101_000, 0), (1, 201_000, 0)],
            vec![flow(0, 101_000), flow(1, 201_000)],
        ),
        host(1, vec![(2, 1_000, 0), (3, 201_000, 0)], vec![]),
    ];
    let f = summarise(&ip, &fo);
    assert_eq!(f.bytes, 2 << 20);
    assert!((f.time_us - 200.0).abs() < 1e-9);
    assert_eq!(f.busbw_gbps, f.algbw_gbps);
    assert_eq!(f.flows.len(), 2);
    assert_eq!(f.flows[0].src, "h0.eth0");
    assert_eq!(f.flows[1].fct_us, Some(200.0));

    let mut out = Vec::new();
    render_table(&mut out, &[r, f]).unwrap();
    let text = String::from_utf8(out).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let head: Vec<&str> = lines[0]
        .trim_start_matches('#')
        .split_whitespace()
        .collect();
    assert_eq!(
        head,
        ["size", "count", "type", "redop", "time", "algbw", "busbw", "#wrong"]
    );
    assert!(lines[1].starts_with('#'));
    let row: Vec<&str> = lines[2].split_whitespace().collect();
    assert_eq!(
        row,
        ["16777216", "4194304", "float", "sum", "400.00", "41.94", "62.91", "2"]
    );
    let row: Vec<&str> = lines[3].split_whitespace().collect();
    assert_eq!(row[..4], ["2097152", "524288", "float", "none"]);
    // Columns line up with the header's right edges.
    assert_eq!(lines[2].len(), lines[0].len());
    assert!(text.contains("# Out of bounds values : 2 FAILED"));
    assert!(text.contains("h0.eth1         h1.eth1"));
    for l in &lines {
        assert!(l.starts_with('#') || l.starts_with(' '), "{l:?}");
    }
}
