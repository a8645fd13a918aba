//! Whole jobs over real NICs and hosts through a small output-queued
//! switch in virtual time: every NIC's frames reach the destination NIC's
//! switch port after a cable delay, wait there behind earlier frames, and
//! are serialised at line rate onto the destination's cable. No loss, no
//! PFC: the schedules and the NICs are what is under test.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::Ipv4Addr;

use railyard_roce::host::{Host, HostOutcome};
use railyard_roce::nic::{CongestionControl, NicConfig, TX_BUFFER_LEN};
use railyard_roce::plan::{JobOptions, JobPlan, RankAddr, Workload};
use railyard_roce::{MacAddr, Nanos};

mod common;
use common::ranks;

const GBPS_100: u64 = 100_000_000_000;
const CABLE_NS: Nanos = 500;

fn nic_config(a: &RankAddr) -> NicConfig {
    NicConfig {
        mac: a.mac,
        ip: a.ip,
        gateway_mac: MacAddr([2, 0, 0, 0, 0xff, 0xff]),
        line_rate_bps: GBPS_100,
        path_mtu: 4096,
        dscp: 24,
        priority: 3,
        cc: CongestionControl::None,
        ack_every: 16,
        rto_ns: 1_000_000,
        memory_bytes: 0,
        answer_arp: true,
        catch_up_ns: 0,
    }
}

fn ser_ns(len: usize) -> Nanos {
    ((len as u64 + 24) * 8 * 1_000_000_000).div_ceil(GBPS_100)
}

/// A frame on its way: (arrival, sequence, host, NIC, bytes).
type InFlight = (Nanos, u64, usize, usize, Vec<u8>);

/// What a run did.
struct Ran {
    hosts: Vec<Host>,
    outcomes: Vec<HostOutcome>,
    frames: u64,
    bytes: u64,
    end: Nanos,
}

/// Runs `plan` on one host per host index until every host is done (or
/// `limit` ns pass).
fn run(plan: &JobPlan, limit: Nanos) -> Ran {
    let nhosts = plan.ranks().iter().map(|a| a.host + 1).max().unwrap();
    let mut hosts: Vec<Host> = (0..nhosts)
        .map(|h| {
            let mut mine: Vec<&RankAddr> = plan.ranks().iter().filter(|a| a.host == h).collect();
            mine.sort_by_key(|a| a.nic);
            Host::new(plan, h, mine.into_iter().map(nic_config).collect()).unwrap()
        })
        .collect();
    let by_ip: HashMap<Ipv4Addr, (usize, usize, MacAddr)> = plan
        .ranks()
        .iter()
        .map(|a| (a.ip, (a.host, a.nic, a.mac)))
        .collect();
    let nics: Vec<usize> = (0..nhosts)
        .map(|h| plan.ranks().iter().filter(|a| a.host == h).count())
        .collect();
    let mut port_free: HashMap<(usize, usize), Nanos> = HashMap::new();
    let mut heap: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut seq = 0u64;
    let (mut frames, mut bytes) = (0u64, 0u64);
    let mut buf = vec![0u8; TX_BUFFER_LEN];
    for h in &mut hosts {
        h.start(0);
    }
    let mut now = 0;
    loop {
        for (hi, h) in hosts.iter_mut().enumerate() {
            for n in 0..nics[hi] {
                while let Some(len) = h.transmit(n, now, &mut buf) {
                    let dst = Ipv4Addr::new(buf[30], buf[31], buf[32], buf[33]);
                    let &(dh, dn, mac) = by_ip.get(&dst).expect("frame to a known NIC");
                    // Routed: the switch rewrites the destination MAC.
                    buf[..6].copy_from_slice(&mac.0);
                    let at_switch = now + ser_ns(len) + CABLE_NS;
                    let free = port_free.entry((dh, dn)).or_insert(0);
                    let out = (*free).max(at_switch) + ser_ns(len);
                    *free = out;
                    seq += 1;
                    frames += 1;
                    bytes += len as u64;
                    heap.push(Reverse((out + CABLE_NS, seq, dh, dn, buf[..len].to_vec())));
                }
            }
        }
        if hosts.iter().all(Host::done) && heap.is_empty() {
            break;
        }
        let next = heap
            .peek()
            .map(|Reverse(e)| e.0)
            .into_iter()
            .chain(hosts.iter().filter_map(Host::next_wakeup))
            .min();
        let Some(next) = next else { break };
        if next > limit {
            break;
        }
        now = now.max(next);
        while heap.peek().is_some_and(|Reverse(e)| e.0 <= now) {
            let Reverse((_, _, dh, dn, f)) = heap.pop().unwrap();
            hosts[dh].receive(dn, now, &f);
        }
    }
    let outcomes = hosts.iter().map(Host::outcome).collect();
    Ran {
        hosts,
        outcomes,
        frames,
        bytes,
        end: now,
    }
}

fn plan(w: Workload, hosts: usize, nics: usize, carry_data: bool) -> JobPlan {
    let opts = JobOptions {
        carry_data,
        chunk_bytes: 16 * 1024,
        ..JobOptions::default()
    };
    JobPlan::new(w, ranks(hosts, nics), opts).unwrap()
}

/// Every rank's end and every flow's end, in host order.
fn times(r: &Ran) -> Vec<Option<Nanos>> {
    r.outcomes
        .iter()
        .flat_map(|o| {
            o.ranks
                .iter()
                .map(|x| x.end_ns)
                .chain(o.flows.iter().map(|f| f.end_ns))
        })
        .collect()
}

#[test]
fn data_free_runs_take_the_same_time_and_packets_as_carrying_data() {
    let workloads = [
        Workload::AllReduce(256 * 1024),
        Workload::AllToAll(6 * 40_000),
        Workload::SendRecv(100 * 1024),
        Workload::Incast {
            bytes: 200_000,
            srcs: vec![0, 1, 2, 5],
            dst: 3,
        },
    ];
    for w in workloads {
        let full = run(&plan(w.clone(), 3, 2, true), 100_000_000);
        let free_plan = plan(w.clone(), 3, 2, false);
        let free = run(&free_plan, 100_000_000);
        let ends = times(&full);
        assert!(ends.iter().all(Option::is_some), "{w:?}: {ends:?}");
        assert_eq!(ends, times(&free), "{w:?}");
        assert_eq!(
            (full.frames, full.bytes),
            (free.frames, free.bytes),
            "{w:?}"
        );
        assert!(full.frames > 100, "{w:?}: {} frames", full.frames);
        assert_eq!(full.end, free.end);
        for o in &full.outcomes {
            assert!(o.ranks.iter().all(|r| r.checked && r.wrong == 0), "{o:?}");
        }
        for (hi, (o, h)) in free.outcomes.iter().zip(&free.hosts).enumerate() {
            assert!(o.ranks.iter().all(|r| !r.checked && r.wrong == 0), "{o:?}");
            assert_eq!(h.errors(), (0, 0));
            let mut n = 0;
            while let Some(nic) = h.nic(n) {
                assert!(nic.memory().is_empty(), "data-free NIC allocated memory");
                assert_eq!(nic.memory_len(), free_plan.memory_bytes(hi * 2 + n));
                assert_eq!(nic.stats().rx_dropped.icrc, 0);
                assert_eq!(nic.stats().rx_dropped.malformed, 0);
                n += 1;
            }
        }
        for h in &full.hosts {
            let nic = h.nic(0).unwrap();
            assert_eq!(nic.memory().len(), nic.memory_len());
        }
        assert!(full.hosts[0].nic(0).unwrap().memory_len() > 0);
    }
}

#[test]
fn data_free_is_the_default_for_nothing_and_old_job_files_carry_data() {
    assert!(JobOptions::default().carry_data);
    let old = r#"{"channels":2,"chunk_bytes":131072,"nvlink_bps":3600000000000}"#;
    let o: JobOptions = serde_json::from_str(old).unwrap();
    assert!(o.carry_data);
    let old_rank = r#"{"rank":3,"end_ns":10,"wrong":0}"#;
    let r: railyard_roce::collective::RankOutcome = serde_json::from_str(old_rank).unwrap();
    assert!(r.checked);
}

fn no_names(name: &str) -> Result<usize, String> {
    Err(format!("no {name}"))
}

#[test]
fn flows_workloads_parse() {
    use railyard_roce::flows::{Background, FlowSizes};
    assert_eq!(
        Workload::parse("flows:websearch:0.3:7:2ms", &no_names),
        Ok(Workload::Flows(Background {
            sizes: FlowSizes::WebSearch,
            load_ppm: 300_000,
            seed: 7,
            duration_ns: 2_000_000,
        }))
    );
    assert_eq!(
        Workload::parse("flows:fixed:64K:0.5", &no_names),
        Ok(Workload::Flows(Background {
            sizes: FlowSizes::Fixed(65_536),
            load_ppm: 500_000,
            seed: 1,
            duration_ns: 1_000_000,
        }))
    );
    assert!(matches!(
        Workload::parse("flows:hadoop:0.1:3", &no_names),
        Ok(Workload::Flows(Background {
            sizes: FlowSizes::Hadoop,
            seed: 3,
            ..
        }))
    ));
    for bad in [
        "flows",
        "flows:websearch",
        "flows:websearch:0",
        "flows:websearch:1.5",
        "flows:websearch:x",
        "flows:cache:0.3",
        "flows:fixed:0.3",
        "flows:storage:0.3:1:2ms:9",
        "flows:storage:0.3:1:0ms",
        "flows:storage:0.3:seed",
    ] {
        assert!(Workload::parse(bad, &no_names).is_err(), "{bad}");
    }
}

#[test]
fn background_flows_complete_with_their_arrival_times_in_both_modes() {
    let w = Workload::parse("flows:fixed:20K:0.3:5:100us", &no_names).unwrap();
    let full_plan = plan(w.clone(), 3, 2, true);
    let specs = full_plan.flow_specs().to_vec();
    // 0.3 × 100 Gb/s ÷ 160 kbit ≈ 187,500/s: about 19 per NIC in 100 µs.
    assert!(
        specs.len() > 60 && specs.len() < 180,
        "{} flows",
        specs.len()
    );
    assert!(specs.iter().any(|f| f.at > 50_000));
    let full = run(&full_plan, 100_000_000);
    let free = run(&plan(w, 3, 2, false), 100_000_000);
    assert_eq!(times(&full), times(&free));
    assert_eq!((full.frames, full.bytes), (free.frames, free.bytes));
    let mut flows: Vec<_> = full.outcomes.iter().flat_map(|o| o.flows.clone()).collect();
    assert_eq!(flows.len(), specs.len());
    flows.sort_by_key(|f| (f.src, f.start_ns));
    for (f, s) in flows.iter().zip(&specs) {
        assert_eq!(
            (f.src, f.dst, f.bytes, f.start_ns),
            (s.src, s.dst, s.bytes, s.at)
        );
        let end = f.end_ns.expect("every flow completes");
        // At least its serialisation at 100 Gb/s plus two cables.
        assert!(end - f.start_ns > 1_600 + 2 * CABLE_NS, "{f:?}");
    }
    for o in &full.outcomes {
        assert!(o
            .ranks
            .iter()
            .all(|r| r.wrong == 0 && r.checked && r.end_ns.is_some()));
        let data: u64 = o.nics.iter().map(|n| n.data_packets).sum();
        let sent: u64 = flows
            .iter()
            .filter(|f| full_plan.ranks()[f.src].host == o.host)
            .map(|f| f.bytes.div_ceil(4096))
            .sum();
        assert_eq!(
            data, sent,
            "host {}: one packet per 4 KiB of its flows",
            o.host
        );
    }
    // Every flow on the background channel: QPs above the collectives'.
    for c in full_plan.connections() {
        assert_eq!(c.channel, railyard_roce::plan::FLOW_CHANNEL);
    }
}

#[test]
fn websearch_background_runs_data_free_and_deterministically() {
    let w = Workload::parse("flows:websearch:0.5:11:200us", &no_names).unwrap();
    let p = plan(w.clone(), 4, 2, false);
    assert_eq!(p.flow_specs(), plan(w, 4, 2, false).flow_specs());
    let a = run(&p, 1_000_000_000);
    let b = run(&p, 1_000_000_000);
    assert_eq!(times(&a), times(&b));
    assert_eq!((a.frames, a.bytes), (b.frames, b.bytes));
    let flows: Vec<_> = a.outcomes.iter().flat_map(|o| o.flows.clone()).collect();
    assert_eq!(flows.len(), p.flow_specs().len());
    assert!(flows.iter().all(|f| f.end_ns.is_some()));
    assert!(a
        .hosts
        .iter()
        .all(|h| h.nic(0).unwrap().memory().is_empty()));
}

fn multi(ws: Vec<(Nanos, Workload)>, carry_data: bool) -> JobPlan {
    let opts = JobOptions {
        carry_data,
        chunk_bytes: 16 * 1024,
        ..JobOptions::default()
    };
    JobPlan::with_workloads(ws, ranks(3, 2), opts).unwrap()
}

#[test]
fn several_workloads_share_a_job_each_with_its_own_memory_and_result() {
    use railyard_roce::report::{summarise, summarise_workloads};
    let ws = vec![
        (0, Workload::AllReduce(96 * 1024)),
        (0, Workload::AllToAll(6 * 8_000)),
        (
            20_000,
            Workload::parse("flows:fixed:8K:0.2:3:50us", &no_names).unwrap(),
        ),
    ];
    let p = multi(ws.clone(), true);
    let parts = p.parts();
    assert_eq!(parts.len(), 3);
    assert_eq!(parts[2].start_ns, 20_000);
    for r in 0..6 {
        let sum: usize = parts.iter().map(|x| x.plan.memory_bytes(r)).sum();
        assert_eq!(p.memory_bytes(r), sum);
        assert_eq!(parts[1].base(r), parts[0].plan.memory_bytes(r));
    }
    // The AllReduce's ring hops are AllToAll pairs too: shared QPs.
    let each: usize = parts.iter().map(|x| x.plan.connections().len()).sum();
    assert!(p.connections().len() < each);
    let full = run(&p, 100_000_000);
    let free = run(&multi(ws, false), 100_000_000);
    assert_eq!(times(&full), times(&free));
    assert_eq!((full.frames, full.bytes), (free.frames, free.bytes));
    for h in &full.hosts {
        assert_eq!(h.errors(), (0, 0));
    }
    let results = summarise_workloads(&p, &full.outcomes);
    assert_eq!(
        results.iter().map(|r| r.op.as_str()).collect::<Vec<_>>(),
        ["allreduce", "alltoall", "flows"]
    );
    for r in &results {
        assert!(r.completed && r.wrong == 0, "{r:?}");
        assert!(r.time_us > 0.0 && r.busbw_gbps > 0.0, "{r:?}");
    }
    assert_eq!(summarise(&p, &full.outcomes), results[0]);
    let flows: Vec<_> = full.outcomes.iter().flat_map(|o| o.flows.clone()).collect();
    assert_eq!(flows.len(), parts[2].plan.flow_specs().len());
    for f in &flows {
        assert_eq!(f.workload, 2);
        assert!(f.start_ns >= 20_000, "{f:?}");
    }
    let per: Vec<usize> = (0..3)
        .map(|k| {
            full.outcomes
                .iter()
                .flat_map(|o| &o.ranks)
                .filter(|r| r.workload == k)
                .count()
        })
        .collect();
    assert_eq!(per, [6, 6, 6]);
}

#[test]
fn a_later_workload_starts_on_time_and_alone_takes_what_it_takes_alone() {
    use railyard_roce::report::summarise_workloads;
    let w = Workload::AllReduce(64 * 1024);
    let alone = plan(w.clone(), 3, 2, true);
    let alone_ran = run(&alone, 100_000_000);
    let t_alone = railyard_roce::report::summarise(&alone, &alone_ran.outcomes).time_us;
    let p = multi(vec![(0, w.clone()), (2_000_000, w)], true);
    let ran = run(&p, 100_000_000);
    let r = summarise_workloads(&p, &ran.outcomes);
    assert!(r[0].completed && r[1].completed);
    assert_eq!(r[0].time_us, t_alone);
    assert_eq!(r[1].time_us, t_alone);
    let ends = |k: usize| -> Vec<Nanos> {
        ran.outcomes
            .iter()
            .flat_map(|o| &o.ranks)
            .filter(|x| x.workload == k)
            .map(|x| x.end_ns.unwrap())
            .collect()
    };
    assert!(ends(0).iter().all(|&e| e < 2_000_000));
    assert!(ends(1).iter().all(|&e| e > 2_000_000));
}

#[test]
fn a_job_needs_a_workload_and_names_the_bad_one() {
    assert!(JobPlan::with_workloads(vec![], ranks(2, 1), JobOptions::default()).is_err());
    let e = JobPlan::with_workloads(
        vec![
            (0, Workload::AllReduce(4096)),
            (5, Workload::AllToAll(4095)),
        ],
        ranks(2, 1),
        JobOptions::default(),
    )
    .unwrap_err();
    assert!(e.contains("workload 2"), "{e}");
}

fn training(spec: &str, hosts: usize, nics: usize, carry_data: bool) -> JobPlan {
    let w = Workload::parse(spec, &no_names).unwrap();
    plan(w, hosts, nics, carry_data)
}

#[test]
fn a_training_job_runs_its_phases_in_order_on_every_rank() {
    use railyard_roce::plan::{Phase, Start};
    use railyard_roce::report::{summarise_training, summarise_workloads};
    let spec = "training:dp=2,ep=2,pp=2,iters=2,compute=7us,grad=64K,tokens=32K,act=16K";
    let p = training(spec, 4, 2, true);
    let parts = p.parts();
    // Two iterations of three phases.
    assert_eq!(parts.len(), 6);
    let phases: Vec<Phase> = parts.iter().map(|x| x.phase.unwrap().phase).collect();
    assert_eq!(
        phases,
        [
            Phase::EpAllToAll,
            Phase::PpSendRecv,
            Phase::DpAllReduce,
            Phase::EpAllToAll,
            Phase::PpSendRecv,
            Phase::DpAllReduce
        ]
    );
    assert_eq!(parts[0].start, Start::At(7_000));
    for (k, x) in parts.iter().enumerate().skip(1) {
        assert_eq!(
            x.start,
            Start::After {
                part: k - 1,
                gap_ns: 7_000
            }
        );
    }
    let ran = run(&p, 100_000_000);
    for h in &ran.hosts {
        assert_eq!(h.errors(), (0, 0));
    }
    // Per rank: each phase starts exactly the gap after its previous one
    // ended there, and after it started.
    let mut at: Vec<Vec<(Nanos, Nanos)>> = vec![vec![(0, 0); 8]; 6];
    for r in ran.outcomes.iter().flat_map(|o| &o.ranks) {
        assert_eq!(r.wrong, 0, "{r:?}");
        assert!(r.checked);
        at[r.workload][r.rank] = (r.start_ns.unwrap(), r.end_ns.unwrap());
    }
    for (rank, first) in at[0].iter().enumerate() {
        assert_eq!(first.0, 7_000);
        for k in 1..6 {
            assert_eq!(
                at[k][rank].0,
                at[k - 1][rank].1 + 7_000,
                "rank {rank} part {k}"
            );
            assert!(at[k][rank].1 > at[k][rank].0);
        }
    }
    let results = summarise_workloads(&p, &ran.outcomes);
    assert!(
        results.iter().all(|r| r.completed && r.wrong == 0),
        "{results:?}"
    );
    let t = summarise_training(&p, &ran.outcomes, &results);
    assert_eq!(t.len(), 1);
    let t = &t[0];
    assert!(t.completed);
    assert_eq!(t.iterations.len(), 2);
    let last_end = at[5].iter().map(|x| x.1).max().unwrap();
    assert_eq!(t.total_us, last_end as f64 / 1e3);
    let sum: f64 = t.iterations.iter().map(|i| i.time_us).sum();
    assert!((sum - t.total_us).abs() < 1e-6, "{sum} vs {}", t.total_us);
    for ph in &t.phases {
        assert_eq!(ph.min_gap_us, Some(7.0), "{ph:?}");
    }
    // Data-free: the same times.
    let free = run(&training(spec, 4, 2, false), 100_000_000);
    assert_eq!(times(&ran), times(&free));
}

#[test]
fn a_pipeline_sends_to_both_neighbours_and_not_around() {
    let p = plan(Workload::Pipeline(40_000), 3, 1, true);
    let pairs: Vec<(usize, usize)> = p.connections().iter().map(|c| (c.src, c.dst)).collect();
    assert!(pairs.contains(&(0, 1)) && pairs.contains(&(1, 0)));
    assert!(pairs.contains(&(1, 2)) && pairs.contains(&(2, 1)));
    assert!(!pairs.contains(&(2, 0)) && !pairs.contains(&(0, 2)));
    let ran = run(&p, 100_000_000);
    for r in ran.outcomes.iter().flat_map(|o| &o.ranks) {
        assert!(r.end_ns.is_some() && r.wrong == 0, "{r:?}");
    }
    // The middle rank sends twice as much as the ends.
    let tx: Vec<u64> = ran.outcomes.iter().map(|o| o.nics[0].tx_bytes).collect();
    assert!(tx[1] > tx[0] * 3 / 2 && tx[1] > tx[2] * 3 / 2, "{tx:?}");
}
