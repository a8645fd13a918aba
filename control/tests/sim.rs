//! `railyard sim` against the promises of the book's chapter 11, in
//! virtual time: one switch at 100 Gb/s with the book's policy (WRED/ECN
//! 150–3000 KB on DSCP 24, PFC on priority 3), and the rail-spine fabric.

use std::path::Path;

use railyard_control::sim::{simulate, Cc, Lb, SimOptions, SimReport};

mod common;
use common::{assert_conserved, sim, sim_json, topology};

/// Every rank finished with the right data.
fn assert_complete(r: &SimReport) {
    let res = &r.results[0];
    assert!(
        res.completed && !r.timed_out,
        "{} did not finish: {r:#?}",
        res.op
    );
    assert_eq!(res.wrong, 0, "{} delivered wrong data", res.op);
    assert_eq!(r.refused_frames, 0, "the model refused frames");
}

const SENDERS: &str = "h1,h2,h3,h4,h5,h6,h7,h8";

#[test]
fn one_flow_reaches_the_line_rate_goodput() {
    let r = sim("incast", "incast:64M:h1:h9", |_| {});
    assert_complete(&r);
    let rx = &r.receivers[0];
    assert!(
        rx.utilisation >= 0.95,
        "one flow reached {:.2} of {:.2} Gb/s",
        rx.goodput_gbps,
        rx.max_goodput_gbps
    );
    assert_eq!(r.fabric.pfc_pause_frames, 0);
    assert_eq!(r.fabric.retransmissions, 0);
}

/// The shipped DCQCN profile for incasts (see its comments).
fn incast_profile() -> railyard_roce::dcqcn::DcqcnParams {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/dcqcn/incast.conf");
    railyard_control::sim::read_dcqcn_params(&path).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn dcqcn_shares_an_incast_fairly_and_pfc_stays_the_backstop() {
    let workload = format!("incast:64M:{SENDERS}:h9");
    let dcqcn = sim("incast", &workload, |o| o.dcqcn = incast_profile());
    let none = sim("incast", &workload, |o| o.cc = Cc::None);
    for r in [&dcqcn, &none] {
        assert_complete(r);
        assert_eq!(r.fabric.lossless_drops, 0, "{:?}", r.fabric);
    }
    let rx = &dcqcn.receivers[0];
    assert_eq!(rx.senders, 8);
    assert!(
        rx.jain >= 0.95,
        "Jain {:.3} over {:?} us",
        rx.jain,
        rx.window_us
    );
    assert!(
        rx.utilisation >= 0.90,
        "bottleneck at {:.1} %",
        rx.utilisation * 100.0
    );
    // ECN first: the switch marked, receivers answered, senders cut.
    assert!(dcqcn.fabric.ecn_marked > 0);
    assert!(dcqcn.fabric.cnp_sent > 0 && dcqcn.fabric.cnp_received > 0);
    assert!(dcqcn.fabric.rate_cuts > 0);
    assert_eq!(none.fabric.cnp_sent, 0, "--cc none sends no CNPs");
    // PFC as the backstop: far fewer pauses with DCQCN than without.
    assert!(none.fabric.pfc_pause_frames > 0, "{:?}", none.fabric);
    assert!(
        dcqcn.fabric.pfc_pause_frames * 10 <= none.fabric.pfc_pause_frames,
        "pauses: dcqcn {} vs none {}",
        dcqcn.fabric.pfc_pause_frames,
        none.fabric.pfc_pause_frames
    );
}

#[test]
fn without_pfc_or_dcqcn_tail_drops_happen_and_go_back_n_recovers() {
    let r = sim("incast", "incast:8M:h1,h2,h3,h4:h9", |o| {
        o.cc = Cc::None;
        o.pfc = false;
    });
    assert_complete(&r);
    let dropped: u64 = r.fabric.drops.values().sum();
    assert!(dropped > 0, "{:?}", r.fabric.drops);
    assert!(r.fabric.retransmissions > 0);
    assert_eq!(r.fabric.pfc_pause_frames, 0);
    assert_eq!(r.flows.len(), 4);
    assert!(r.flows.iter().all(|f| f.fct_us.is_some()));
}

#[test]
fn a_rail_aligned_allreduce_runs_near_the_nic_line_rate() {
    let r = sim("rail-spine", "allreduce:64M", |_| {});
    assert_complete(&r);
    let busbw = r.results[0].busbw_gbps;
    // 100 Gb/s is 12.5 GB/s.
    assert!(busbw >= 0.9 * 12.5, "busbw {busbw:.2} GB/s");
}

#[test]
fn layer_2_rails_run_through_their_svis_and_port_channels() {
    // multi-rail: two rails as VLANs on one switch, the SVIs the NICs'
    // gateways; nothing floods (every host's MAC is known on its port).
    let r = sim("multi-rail", "allreduce:1M", |_| {});
    assert_complete(&r);
    assert_eq!(
        (r.fabric.retransmissions, r.fabric.nic_rx_drops),
        (0, 0),
        "{:?}",
        r.fabric
    );
    // dual-rail: an AllToAll crosses from rail switch to rail switch over
    // the spine's port-channels, spread over both members of each.
    let r = sim("dual-rail", "alltoall:1M", |_| {});
    assert_complete(&r);
    assert_eq!(r.fabric.nic_rx_drops, 0, "{:?}", r.fabric);
    for sw in ["rail1", "rail2", "spine1"] {
        let members: Vec<u64> = r
            .link_load
            .iter()
            .filter(|l| l.switch == sw && l.peer_tier > 0)
            .map(|l| l.tx_bytes)
            .collect();
        assert_eq!(members.len(), if sw == "spine1" { 4 } else { 2 }, "{sw}");
        assert!(
            members.iter().all(|b| *b > 0),
            "{sw}: every member carries traffic: {members:?}"
        );
    }
}

/// The AllToAll's time under each balancing mode, all complete and
/// lossless; `degrade` slows one uplink.
fn alltoall_times(degrade: &[&str]) -> [f64; 3] {
    [Lb::Ecmp, Lb::Flowlet, Lb::PerPacket].map(|lb| {
        let r = sim("rail-spine", "alltoall:8M", |o| {
            o.lb = Some(lb);
            o.degrade = degrade.iter().map(|d| d.to_string()).collect();
        });
        assert_complete(&r);
        assert_eq!(r.fabric.lossless_drops, 0, "{lb:?}: {:?}", r.fabric);
        r.results[0].time_us
    })
}

/// The literature's shapes: in a symmetric Clos, spraying packets or
/// flowlets over the uplinks beats ECMP's hash collisions; with one uplink
/// at a tenth of its speed, per-packet spraying keeps feeding the slow
/// link its share (and reorders) while flowlets steer around it, so
/// flowlet's advantage over per-packet grows.
#[test]
fn spraying_beats_ecmp_and_flowlets_win_when_an_uplink_is_slow() {
    let [ecmp, flowlet, per_packet] = alltoall_times(&[]);
    assert!(
        flowlet < 0.9 * ecmp && per_packet < 0.9 * ecmp,
        "{ecmp} {flowlet} {per_packet}"
    );
    let [_, slow_flowlet, slow_per_packet] = alltoall_times(&["rail1:Ethernet1/31:10000"]);
    assert!(
        slow_flowlet < slow_per_packet,
        "{slow_flowlet} {slow_per_packet}"
    );
    assert!(
        slow_per_packet / slow_flowlet > 1.5 * (per_packet / flowlet),
        "symmetric {flowlet}/{per_packet}, degraded {slow_flowlet}/{slow_per_packet}"
    );
}

/// A spine uplink fails mid-run and comes back: ECMP moves the rail's
/// flows to the other spine, what the dead cable held is lost (counted as
/// interface_down or recovered by go-back-N), and the job still completes,
/// later than without the failure.
#[test]
fn a_failed_uplink_costs_time_and_the_job_still_completes() {
    let base = sim("rail-spine", "alltoall:8M", |o| o.lb = Some(Lb::Ecmp));
    assert_complete(&base);
    let r = sim("rail-spine", "alltoall:8M", |o| {
        o.lb = Some(Lb::Ecmp);
        o.fail = vec!["rail1:Ethernet1/31@100us-300us".into()];
    });
    assert!(r.results[0].completed, "{:?}", r.results[0]);
    assert!(r.results[0].time_us > base.results[0].time_us);
    assert!(
        r.fabric.drops.get("interface_down").copied().unwrap_or(0) > 0,
        "{:?}",
        r.fabric.drops
    );
    let e = simulate(
        &topology("rail-spine"),
        &SimOptions {
            workload: "alltoall:1M".into(),
            fail: vec!["rail1:Ethernet1/99@1us".into()],
            ..SimOptions::default()
        },
        &mut |_| {},
    )
    .expect_err("no such port");
    assert!(e.contains("no link"), "{e}");
}

/// A report as JSON without what depends on the wall clock.
fn virtual_facts(r: &SimReport) -> serde_json::Value {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                for k in ["wall_s", "wall_ms", "hops_per_wall_s", "events_per_wall_s"] {
                    m.remove(k);
                }
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(r).expect("a report serialises");
    strip(&mut v);
    v
}

#[test]
fn one_thread_or_several_run_the_same_fabric_event_for_event() {
    // Sprayed packets reordered over a failing, slower uplink, pauses and
    // queue samples: everything that would show an order a thread changed.
    let run = |threads| {
        sim("rail-spine", "alltoall:2M", |o| {
            o.lb = Some(Lb::PerPacket);
            o.degrade = vec!["rail2:Ethernet1/32:25000".into()];
            o.fail = vec!["rail1:Ethernet1/31@40us-90us".into()];
            o.sample_queues = vec!["spine1:Ethernet1/1:3".into(), "rail2:Ethernet1/1:3".into()];
            o.queue_stats = true;
            o.threads = Some(threads);
        })
    };
    let one = run(1);
    assert!(one.results[0].completed, "{:?}", one.results[0]);
    assert!(one.fabric.reordered > 0 && one.fabric.pfc_pause_frames > 0);
    assert!(one.queues.iter().all(|s| !s.bytes.is_empty()));
    assert!(one.queue_stats.iter().any(|q| q.mean_depth_packets > 0.0));
    let facts = virtual_facts(&one);
    for threads in [2, 8] {
        assert_eq!(
            virtual_facts(&run(threads)),
            facts,
            "{threads} threads changed the run"
        );
    }
}

#[test]
fn the_command_prints_the_issue_json_shape() {
    let v = sim_json("single", &["--workload", "allreduce:4M"]);
    let res = &v["results"][0];
    for k in [
        "op",
        "bytes",
        "time_us",
        "algbw_gbps",
        "busbw_gbps",
        "wrong",
    ] {
        assert!(!res[k].is_null(), "results[0].{k} missing: {v}");
    }
    assert_eq!(res["op"], "allreduce");
    assert_eq!(res["wrong"], 0);
    assert!(v["flows"].is_array());
    for k in [
        "ecn_marked",
        "cnp_sent",
        "cnp_received",
        "rate_cuts",
        "pfc_pause_frames",
        "drops",
        "lossless_drops",
        "retransmissions",
    ] {
        assert!(!v["fabric"][k].is_null(), "fabric.{k} missing: {v}");
    }
}

#[test]
fn a_bad_workload_is_explained() {
    let o = SimOptions {
        workload: "incast:1M:h1,h42:h2".into(),
        ..SimOptions::default()
    };
    let e = simulate(&topology("single"), &o, &mut |_| {}).expect_err("h42 is no host");
    assert!(e.contains("h42"), "{e}");
}

#[test]
fn dcqcn_parameters_print_and_overrides_apply() {
    let bin = env!("CARGO_BIN_EXE_railyard");
    let template = std::process::Command::new(bin)
        .args(["dcqcn", "--template"])
        .output()
        .expect("run railyard dcqcn");
    assert!(template.status.success());
    let text = String::from_utf8_lossy(&template.stdout)
        .replace("roce_rp.rpg_ai_rate 5 ", "roce_rp.rpg_ai_rate 40 ");
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("cc.conf");
    std::fs::write(&file, text).expect("write");
    let out = std::process::Command::new(bin)
        .args(["dcqcn", "--json", "--params"])
        .arg(&file)
        .output()
        .expect("run railyard dcqcn");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let ai = v
        .as_array()
        .and_then(|a| a.iter().find(|e| e["name"] == "rpg_ai_rate"))
        .expect("rpg_ai_rate listed");
    assert_eq!(ai["value"], 40);
    assert_eq!(ai["default"], 5);

    std::fs::write(&file, "rpg_time_rest 100\n").expect("write");
    let bad = std::process::Command::new(bin)
        .args(["dcqcn", "--params"])
        .arg(&file)
        .output()
        .expect("run railyard dcqcn");
    assert!(!bad.status.success());
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("cc.conf:1:1"), "{err}");
    assert!(err.contains("rpg_time_reset"), "{err}");
}

/// Conservation, counted by the switches themselves after a run that
/// congests (an AllToAll with ECMP collisions and PFC): every egress queue
/// sent, dropped or still holds everything offered to it, and every cable
/// between switches delivered at one end what the other end sent.
#[test]
fn every_queue_and_every_cable_conserves_packets() {
    let r = sim("rail-spine", "alltoall:16M", |o| {
        o.lb = Some(Lb::Ecmp);
        o.keep_switch_stats = true;
    });
    assert_complete(&r);
    let stats = r.switch_stats.as_ref().expect("kept");
    let (queues, cables) = assert_conserved(stats, &topology("rail-spine"));
    assert!(queues >= 8, "traffic went through {queues} queues");
    assert_eq!(cables, 4, "rail-spine has four switch-to-switch cables");
}

/// Cables longer than PFC's longest (100 km, 500 µs) still simulate: the
/// headroom they would need is capped at what the configuration allows,
/// and the job completes, later by the round trips the cables add.
#[test]
fn cables_longer_than_pfc_sizes_headroom_for_still_run() {
    let text = std::fs::read_to_string(topology("rail-spine")).unwrap();
    let long: String = text
        .lines()
        .map(|l| {
            if l.starts_with("link ") {
                format!("{l} delay 2ms\n")
            } else {
                format!("{l}\n")
            }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("long.topo");
    std::fs::write(&path, long).unwrap();
    let o = SimOptions {
        workload: "allreduce:1M".into(),
        ..SimOptions::default()
    };
    let far = simulate(&path, &o, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"));
    assert_complete(&far);
    let near = sim("rail-spine", "allreduce:1M", |_| {});
    assert!(far.results[0].time_us > near.results[0].time_us + 4_000.0);
}

const TRAIN: &str = "training:dp=2,ep=2,pp=2,iters=2,compute=20us,grad=1M,tokens=512K,act=256K";

/// Microseconds `bytes` take at `bps`, nothing else counted.
fn wire_us(bytes: f64, bps: f64) -> f64 {
    bytes * 8.0 / bps * 1e6
}

#[test]
fn a_training_step_runs_its_phases_in_order_with_compute_between() {
    let r = sim("rail-spine", TRAIN, |_| {});
    assert!(!r.timed_out);
    assert_eq!(r.training.len(), 1, "{:?}", r.training);
    let t = &r.training[0];
    assert!(t.completed && t.wrong == 0, "{t:?}");
    assert_eq!((t.dp, t.ep, t.pp, t.compute_us), (2, 2, 2, 20.0));
    // Each phase is a row of the results too, every element checked.
    assert_eq!(r.results.len(), 6);
    assert!(r.results.iter().all(|x| x.completed && x.wrong == 0));
    let names: Vec<&str> = t.phases.iter().map(|p| p.phase.as_str()).collect();
    assert_eq!(
        names,
        [
            "ep-alltoall",
            "pp-sendrecv",
            "dp-allreduce",
            "ep-alltoall",
            "pp-sendrecv",
            "dp-allreduce"
        ]
    );
    // The ideal of each phase: an expert group is one server (its two
    // GPUs swap half the tokens over NVLink); a stage sends the
    // activations to its one neighbour, and a pair all-reduces by sending
    // the gradients once, over a 100 Gb/s NIC.
    let nvlink = railyard_roce::plan::JobOptions::default().nvlink_bps as f64;
    let ideal = [
        wire_us(256.0 * 1024.0, nvlink),
        wire_us(256.0 * 1024.0, 100e9),
        wire_us(1024.0 * 1024.0, 100e9),
    ];
    let mut floor = 0.0;
    for (k, p) in t.phases.iter().enumerate() {
        assert!(p.completed && p.wrong == 0, "{p:?}");
        assert_eq!((p.groups, p.group_ranks), (4, 2), "{p:?}");
        assert!(
            p.time_us >= ideal[k % 3],
            "{p:?} beat its ideal {}",
            ideal[k % 3]
        );
        // On every rank, the compute gap and nothing less since its
        // previous phase ended there.
        assert_eq!(p.min_gap_us, Some(20.0), "{p:?}");
        if k > 0 {
            let prev = &t.phases[k - 1];
            assert!(p.start_us >= prev.start_us + 20.0, "{prev:?} then {p:?}");
        }
        floor += 20.0 + ideal[k % 3];
    }
    assert!(
        t.total_us >= floor,
        "step {} us < compute + ideal {floor} us",
        t.total_us
    );
    let sum: f64 = t.iterations.iter().map(|i| i.time_us).sum();
    assert!((sum - t.total_us).abs() < 1e-6, "{:?}", t.iterations);
    assert_eq!(t.iterations[1].end_us, t.phases[5].end_us);
    // Same inputs, same results.
    let again = sim("rail-spine", TRAIN, |_| {});
    assert_eq!(
        serde_json::to_string(&again.training).unwrap(),
        serde_json::to_string(&r.training).unwrap()
    );
    assert_eq!(again.results, r.results);
    assert_eq!(again.fabric, r.fabric);
}

#[test]
fn the_side_by_side_table_gives_a_training_job_its_step_time() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_railyard"))
        .arg("sim")
        .arg(topology("rail-spine"))
        .args([
            "--workload",
            "training:dp=2,ep=2,pp=2,iters=1,compute=5us,grad=256K,tokens=64K,act=64K",
            "--lb",
            "ecmp,per-packet",
        ])
        .output()
        .expect("run railyard sim");
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let totals: Vec<f64> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# training step total: "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    let rows: Vec<Vec<&str>> = text
        .lines()
        .filter(|l| l.starts_with("ecmp ") || l.starts_with("per-packet "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!((totals.len(), rows.len()), (2, 2), "{text}");
    for (row, total) in rows.iter().zip(&totals) {
        // The step, not its first phase; a step has no one busbw.
        assert_eq!(row[1], format!("{total:.1}"), "{text}");
        assert_eq!(row[2], "-", "{text}");
    }
}

#[test]
fn a_training_job_runs_data_free_and_prints_json() {
    // Expert groups of two servers: the AllToAll crosses rails.
    let v = sim_json(
        "rail-spine",
        &[
            "--workload",
            "training:dp=1,ep=4,pp=2,iters=1,compute=5us,grad=1M,tokens=256K,act=128K@10us",
            "--data",
            "off",
        ],
    );
    let t = &v["training"][0];
    assert_eq!(t["completed"], true, "{t}");
    assert_eq!(t["start_us"], 10.0);
    let phases: Vec<&str> = t["phases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["phase"].as_str().unwrap())
        .collect();
    // dp=1: no AllReduce.
    assert_eq!(phases, ["ep-alltoall", "pp-sendrecv"]);
    assert_eq!(t["phases"][0]["start_us"], 15.0);
    assert_eq!(t["phases"][0]["group_ranks"], 4);
    assert!(t["iterations"][0]["time_us"].as_f64().unwrap() > 10.0);
    assert_eq!(v["results"].as_array().unwrap().len(), 2);
    // Cross-rail tokens went through the spines.
    let spine_bytes: u64 = v["link_load"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["switch"].as_str().unwrap().starts_with("spine"))
        .map(|l| l["tx_bytes"].as_u64().unwrap())
        .sum();
    assert!(spine_bytes > 0, "{}", v["link_load"]);
}
