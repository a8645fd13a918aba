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
                start_ns: Some(1_000),
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

mod training {
    use railyard_roce::plan::{JobOptions, JobPlan, Phase, Start, Training, Workload};

    use super::common::ranks;
    use super::names;

    fn parse(spec: &str) -> Training {
        match names(spec) {
            Ok(Workload::Training(t)) => t,
            other => panic!("{spec}: {other:?}"),
        }
    }

    #[test]
    fn training_spec_reads_every_field_and_defaults_the_rest() {
        assert_eq!(
            parse("training:dp=4,ep=2,pp=2,iters=3,compute=20us,grad=1M,tokens=64K,act=8K"),
            Training {
                dp: 4,
                ep: 2,
                pp: 2,
                iters: 3,
                compute_ns: 20_000,
                grad: 1 << 20,
                tokens: 64 << 10,
                act: 8 << 10,
            }
        );
        let t = parse("training: PP=1 , dp=8,ep=1");
        assert_eq!((t.dp, t.ep, t.pp), (8, 1, 1));
        assert_eq!(t.iters, 2);
        assert_eq!(t.compute_ns, 50_000);
        assert_eq!((t.grad, t.tokens, t.act), (16 << 20, 4 << 20, 1 << 20));
        assert_eq!(t.phases(), [Phase::DpAllReduce]);
        let t = parse("training:dp=2,ep=2,pp=2,tokens=0");
        assert_eq!(t.phases(), [Phase::PpSendRecv, Phase::DpAllReduce]);
    }

    #[test]
    fn training_spec_errors_name_the_field_and_what_fits() {
        for (spec, want) in [
            ("training", "expected training:dp=D,ep=E,pp=P"),
            ("training:", "expected training:dp=D,ep=E,pp=P"),
            ("training:dp=2,ep=2", "pp= is missing"),
            (
                "training:dp=2,ep=2,pp=2,lr=3",
                "unknown field \"lr\"; expected dp, ep, pp",
            ),
            (
                "training:dp=x,ep=2,pp=2",
                "bad dp=\"x\": expected a whole number of ranks",
            ),
            ("training:dp=0,ep=2,pp=2", "bad dp=\"0\""),
            ("training:dp=2,ep=2,pp=2,dp=4", "dp is given twice"),
            ("training:dp=2,ep,pp=2", "field \"ep\" is not key=value"),
            (
                "training:dp=2,ep=2,pp=2,grad=lots",
                "grad: bad size \"lots\"",
            ),
            (
                "training:dp=2,ep=2,pp=2,compute=soon",
                "compute: bad duration \"soon\"",
            ),
            (
                "training:dp=2,ep=2,pp=2,iters=0",
                "bad iters=\"0\": expected a whole number from 1",
            ),
        ] {
            let e = names(spec).unwrap_err();
            assert!(e.contains(want), "{spec}: {e}");
        }
    }

    fn plan(spec: &str, hosts: usize, nics: usize) -> Result<JobPlan, String> {
        let w = names(spec)?;
        JobPlan::new(w, ranks(hosts, nics), JobOptions::default())
    }

    #[test]
    fn training_layouts_that_do_not_fit_the_ranks_are_refused() {
        for (spec, want) in [
            (
                "training:dp=2,ep=2,pp=1",
                "dp × ep × pp = 2 × 2 × 1 must be the job's 8 ranks (4 hosts × 2 NICs)",
            ),
            (
                "training:dp=4,ep=1,pp=2",
                "ep=1 must be a multiple of the 2 NICs per host",
            ),
            (
                "training:dp=4,ep=2,pp=1,grad=0,tokens=0",
                "no phase has two ranks and bytes to move",
            ),
            (
                "training:dp=2,ep=4,pp=1,tokens=100",
                "ep-alltoall: alltoall:100",
            ),
            (
                "training:dp=2,ep=2,pp=2,grad=6",
                "dp-allreduce: allreduce:6",
            ),
        ] {
            let e = plan(spec, 4, 2).unwrap_err();
            assert!(e.contains("workload 1 (training)"), "{spec}: {e}");
            assert!(e.contains(want), "{spec}: {e}");
        }
        // Hosts with different NIC counts.
        let mut r = ranks(2, 2);
        r.pop();
        let w = names("training:dp=1,ep=3,pp=1").unwrap();
        let e = JobPlan::new(w, r, JobOptions::default()).unwrap_err();
        assert!(e.contains("same number of NICs"), "{e}");
    }

    /// The groups of each phase of a plan's first iteration.
    fn groups(p: &JobPlan) -> Vec<(Phase, Vec<Vec<usize>>)> {
        p.parts()
            .iter()
            .filter(|x| x.phase.unwrap().iteration == 0)
            .map(|x| (x.phase.unwrap().phase, x.groups().to_vec()))
            .collect()
    }

    #[test]
    fn training_groups_on_four_hosts_of_two_rails() {
        let p = plan("training:dp=2,ep=2,pp=2,grad=64K,tokens=64K,act=64K", 4, 2).unwrap();
        assert_eq!(
            groups(&p),
            [
                // A server's two GPUs.
                (
                    Phase::EpAllToAll,
                    vec![vec![0, 1], vec![2, 3], vec![4, 5], vec![6, 7]]
                ),
                // Hosts 0-1 are stage 0, hosts 2-3 stage 1; one rail each.
                (
                    Phase::PpSendRecv,
                    vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
                ),
                (
                    Phase::DpAllReduce,
                    vec![vec![0, 2], vec![1, 3], vec![4, 6], vec![5, 7]]
                ),
            ]
        );
        let p = plan("training:dp=1,ep=4,pp=2,grad=64K,tokens=64K,act=64K", 4, 2).unwrap();
        assert_eq!(
            groups(&p),
            [
                (Phase::EpAllToAll, vec![vec![0, 1, 2, 3], vec![4, 5, 6, 7]]),
                (
                    Phase::PpSendRecv,
                    vec![vec![0, 4], vec![1, 5], vec![2, 6], vec![3, 7]]
                ),
            ]
        );
        // Rank 6 (h3.eth0) in the pipeline phase: group [2, 6], second.
        let part = p.part(1).unwrap();
        let (sub, local) = part.plan_of(6).unwrap();
        assert_eq!(local, 1);
        assert_eq!(sub.ranks()[0].name, "h1.eth0");
        assert_eq!(part.to_job(6, 0), Some(2));
        assert_eq!(part.to_group(6, 2), Some(0));
        assert_eq!(part.to_group(6, 3), None);
    }

    #[test]
    fn training_groups_on_sixteen_hosts_of_eight_rails() {
        let p = plan(
            "training:dp=4,ep=16,pp=2,grad=64K,tokens=64K,act=64K",
            16,
            8,
        )
        .unwrap();
        let addrs = p.ranks();
        let g = groups(&p);
        assert_eq!(
            g.iter()
                .map(|(ph, v)| (*ph, v.len(), v[0].len()))
                .collect::<Vec<_>>(),
            [
                (Phase::EpAllToAll, 8, 16),
                (Phase::PpSendRecv, 64, 2),
                (Phase::DpAllReduce, 32, 4)
            ]
        );
        for (ph, v) in &g {
            // Every rank in exactly one group.
            let mut all: Vec<usize> = v.iter().flatten().copied().collect();
            all.sort_unstable();
            assert_eq!(all, (0..128).collect::<Vec<_>>(), "{ph:?}");
            for members in v {
                let rails: Vec<usize> = members.iter().map(|&r| addrs[r].nic).collect();
                let mut hosts: Vec<usize> = members.iter().map(|&r| addrs[r].host).collect();
                hosts.sort_unstable();
                hosts.dedup();
                match ph {
                    // Two servers, every rail.
                    Phase::EpAllToAll => {
                        assert_eq!(hosts.len(), 2, "{members:?}");
                        assert_eq!(rails, [0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7]);
                    }
                    // One rail, a server per member.
                    _ => {
                        assert!(rails.iter().all(|&x| x == rails[0]), "{ph:?} {members:?}");
                        assert_eq!(hosts.len(), members.len(), "{ph:?} {members:?}");
                    }
                }
            }
        }
        // Stage 0 is hosts 0-7, stage 1 hosts 8-15: h3.eth5 (rank 29)
        // sends activations to h11.eth5 (rank 93); its replicas are hosts
        // 1, 3, 5 and 7 on rail 5.
        assert_eq!(
            g[1].1.iter().find(|m| m.contains(&29)).unwrap(),
            &vec![29, 93]
        );
        assert_eq!(
            g[2].1.iter().find(|m| m.contains(&29)).unwrap(),
            &vec![13, 29, 45, 61]
        );
        // Only network connections cross rails in the expert phase.
        for c in p.connections() {
            let (a, b) = (&addrs[c.src], &addrs[c.dst]);
            if a.nic != b.nic {
                assert!(a.host / 2 == b.host / 2, "{c:?}");
            }
        }
    }

    #[test]
    fn training_phases_follow_each_other_and_share_plans_across_iterations() {
        let one = plan(
            "training:dp=2,ep=2,pp=2,iters=1,compute=5us,grad=64K,tokens=64K,act=64K",
            4,
            2,
        )
        .unwrap();
        let three = JobPlan::with_workloads(
            vec![(
                100_000,
                names("training:dp=2,ep=2,pp=2,iters=3,compute=5us,grad=64K,tokens=64K,act=64K")
                    .unwrap(),
            )],
            ranks(4, 2),
            JobOptions::default(),
        )
        .unwrap();
        let parts = three.parts();
        assert_eq!(parts.len(), 9);
        assert_eq!(parts[0].start, Start::At(105_000));
        for (k, x) in parts.iter().enumerate().skip(1) {
            assert_eq!(
                x.start,
                Start::After {
                    part: k - 1,
                    gap_ns: 5_000
                }
            );
            let tag = x.phase.unwrap();
            assert_eq!(
                (tag.iteration, tag.workload, tag.start_ns),
                (k / 3, 0, 100_000)
            );
        }
        // Each iteration has its own memory, the same queue pairs.
        assert_eq!(one.connections(), three.connections());
        for r in 0..8 {
            assert_eq!(three.memory_bytes(r), 3 * one.memory_bytes(r));
            assert_eq!(parts[3].base(r), one.memory_bytes(r));
        }
        assert!(matches!(three.workload(), Workload::Training(_)));
    }
}
