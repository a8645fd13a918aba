//! `railyard sim` against laws a queueing system cannot break and shapes
//! the literature reports, on generated leaf-spine fabrics: Little's law on
//! every busy egress queue of a congested run, and DCQCN keeping PFC
//! pauses at the edge where ECMP collisions congest the fabric.

use std::path::{Path, PathBuf};

use railyard_control::lab::generate::{generate, Kind, Spec};
use railyard_control::sim::{simulate, Cc, Lb, QueueOccupancy, SimOptions, SimReport};

mod common;

/// A generated leaf-spine of `hosts` single-NIC hosts on leaves of
/// `radix` ports (half to hosts, half up: 1:1) under `spines` spines,
/// written to a file in `dir`.
fn leaf_spine(dir: &tempfile::TempDir, hosts: u32, radix: u32, spines: u32) -> PathBuf {
    let spec = Spec {
        radix,
        spines: Some(spines),
        speed: 100_000,
        ..Spec::new(Kind::LeafSpine, hosts)
    };
    let g = generate(&spec).unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join(format!("ls{hosts}.topo"));
    std::fs::write(&path, g.text).expect("write topology");
    path
}

/// Runs `workload` on `topo` with options set by `f`; panics on an error.
fn run(topo: &Path, workload: &str, f: impl FnOnce(&mut SimOptions)) -> SimReport {
    let mut o = SimOptions {
        workload: workload.into(),
        ..SimOptions::default()
    };
    f(&mut o);
    simulate(topo, &o, &mut |_| {}).unwrap_or_else(|e| panic!("{e}"))
}

/// Every rank finished, nothing lost.
fn assert_complete(r: &SimReport) {
    let res = &r.results[0];
    assert!(
        res.completed && !r.timed_out,
        "{} did not finish: {:?}",
        res.op,
        r.results
    );
    assert_eq!(r.refused_frames, 0, "the model refused frames");
    assert_eq!(r.fabric.lossless_drops, 0, "{:?}", r.fabric);
}

/// Frames of the generated fabrics' largest size (MTU 9216 plus Ethernet),
/// bytes: what one packet adds to a queue's depth at most.
const MAX_FRAME_BYTES: f64 = 9216.0 + 18.0;

/// The queues where `L = λ·w(q)` fails by more than `tolerance` (relative)
/// among those that sent at least `min_packets`, as readable lines.
fn littles_law_violations(
    r: &SimReport,
    min_packets: u64,
    tolerance: f64,
    w_ns: impl Fn(&QueueOccupancy) -> f64,
) -> Vec<String> {
    r.queue_stats
        .iter()
        .filter(|q| q.tx_packets >= min_packets)
        .filter_map(|q| {
            let l = q.mean_depth_packets;
            let lambda_w = q.departures_per_us * w_ns(q) / 1e3;
            ((l - lambda_w).abs() > tolerance * lambda_w.max(l)).then(|| {
                format!(
                    "{}: L {l:.4} packets, λ {:.4}/us × W {:.1} ns = {lambda_w:.4}",
                    q.name,
                    q.departures_per_us,
                    w_ns(q)
                )
            })
        })
        .collect()
}

/// Little's law (and conservation) on every egress queue of a congested,
/// lossless run: a 32-host leaf-spine, a permutation under ECMP without
/// congestion control (hash collisions queue megabytes at leaf uplinks and
/// spine downlinks, and PFC holds them back), every queue's time-averaged
/// depth L against its departure rate λ times its mean sojourn W.
///
/// L is the exact depth-time integral over the run (a switch's depths only
/// change while it runs), λ the queue's own transmit counter over the run,
/// W the mean of the dataplane's sojourn histogram. The fabric starts and
/// ends empty, so the integral equals the sum of every packet's sojourn and
/// L = λW holds exactly; what is left is the histogram's resolution: each
/// sojourn counts as the middle of its bucket, at most 1/256 (0.39 %) of
/// its value away, so W is within 0.39 % of the exact mean. The tolerance
/// is 0.5 %. The depth integral itself is checked against the depth
/// sampler (`--sample-queue`) on the deepest queue, whose only error is
/// the sampling grid: each change of depth is seen up to one interval
/// late or early, at most a frame's bytes for an interval each.
#[test]
fn littles_law_and_conservation_hold_on_every_queue_of_a_congested_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let topo = leaf_spine(&dir, 32, 8, 4);
    let opts = |o: &mut SimOptions| {
        o.lb = Some(Lb::Ecmp);
        o.cc = Cc::None;
        o.queue_stats = true;
        o.keep_switch_stats = true;
    };
    let r = run(&topo, "permutation:4M", opts);
    assert_complete(&r);
    assert!(
        r.fabric.pfc_pause_frames > 0,
        "not congested: {:?}",
        r.fabric
    );
    let busy: Vec<_> = r
        .queue_stats
        .iter()
        .filter(|q| q.tx_packets >= 100)
        .collect();
    assert!(busy.len() >= 40, "only {} busy queues", busy.len());
    let deep = busy.iter().filter(|q| q.mean_depth_packets >= 10.0).count();
    assert!(deep >= 4, "only {deep} queues held 10 packets on average");
    // λ is the switch's own counter: the same packets the stats count.
    let stats = r.switch_stats.as_ref().expect("kept");
    let counted: u64 = stats
        .iter()
        .flat_map(|s| s.interfaces.values())
        .flat_map(|i| i.queues.iter())
        .map(|q| q.tx_packets)
        .sum();
    let listed: u64 = r.queue_stats.iter().map(|q| q.tx_packets).sum();
    assert_eq!(listed, counted, "every queue that sent is listed");
    // Conservation on the same run: every queue sent, dropped or holds
    // what it was offered, and every cable between switches delivered at
    // one end what the other sent.
    let (_, cables) = common::assert_conserved(stats, &topo);
    assert_eq!(cables, 32, "8 leaves × 4 spines");

    let bad = littles_law_violations(&r, 100, 0.005, |q| q.mean_sojourn_ns);
    assert!(bad.is_empty(), "Little's law fails:\n{}", bad.join("\n"));
    // The check tells a wrong W apart: a sojourn taken to the end of the
    // frame's transmission (one 9 KB frame time at 100 Gb/s later) breaks
    // it on the queues that rarely wait.
    let frame_ns = MAX_FRAME_BYTES * 8.0 / 100.0;
    let wrong = littles_law_violations(&r, 100, 0.005, |q| q.mean_sojourn_ns + frame_ns);
    assert!(
        wrong.len() >= busy.len() / 2,
        "a W one frame time off passes on {} of {} queues",
        busy.len() - wrong.len(),
        busy.len()
    );

    // The integral against the sampler, on the deepest queue.
    let deepest = busy
        .iter()
        .max_by(|a, b| a.mean_depth_packets.total_cmp(&b.mean_depth_packets))
        .expect("a busy queue");
    let sample_ns = 100;
    let sampled = run(&topo, "permutation:4M", |o| {
        opts(o);
        o.sample_queues = vec![deepest.name.clone()];
        o.sample_ns = sample_ns;
    });
    let series = &sampled.queues[0];
    let sampled_area: f64 = series.bytes.iter().map(|b| *b as f64).sum::<f64>() * sample_ns as f64;
    let exact_area = deepest.mean_depth_bytes * r.virtual_us * 1e3;
    // Each departure and arrival moves the depth by at most a frame and is
    // seen at most one interval off.
    let bound = 2.0 * deepest.tx_packets as f64 * MAX_FRAME_BYTES * sample_ns as f64;
    assert!(
        (sampled_area - exact_area).abs() <= bound.min(0.01 * exact_area),
        "{}: sampled {sampled_area:.4e} byte-ns, integral {exact_area:.4e} (bound {bound:.3e})",
        deepest.name
    );
}

/// The shipped DCQCN profile for incasts (see its comments).
fn incast_profile() -> railyard_roce::dcqcn::DcqcnParams {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/dcqcn/incast.conf");
    railyard_control::sim::read_dcqcn_params(&path).unwrap_or_else(|e| panic!("{e}"))
}

/// Pause frames the switches sent, split by where: (to hosts, from a
/// spine to a leaf, from a leaf to a spine). A port's peer tier comes from
/// the per-link load table (0: a host).
fn pauses_by_hop(r: &SimReport) -> (u64, u64, u64) {
    let mut out = (0, 0, 0);
    for l in &r.links {
        let hop = r
            .link_load
            .iter()
            .find(|x| x.switch == l.switch && x.interface == l.interface)
            .map(|x| (x.tier, x.peer_tier));
        match hop {
            Some((_, 0)) => out.0 += l.pause_tx,
            Some((2, 1)) => out.1 += l.pause_tx,
            Some((1, 2)) => out.2 += l.pause_tx,
            _ => panic!(
                "{}:{} is no leaf or spine port: {hop:?}",
                l.switch, l.interface
            ),
        }
    }
    out
}

/// DCQCN keeps PFC pauses at the first hop where ECMP hashing collides
/// (the DCQCN paper's motivation; Zhu et al., SIGCOMM 2015). A permutation
/// on a 1:1 leaf-spine under ECMP congests only where hashes collide: two
/// or more flows on one leaf uplink, or on one spine downlink (every host
/// sends one flow and receives one, so no last hop is congested). Without
/// congestion control the queues grow until PFC holds them back at every
/// tier: leaves pause their hosts and spines pause the leaves. With DCQCN
/// (the shipped incast profile: a first CNP sets 12.5 Gb/s at once) the
/// senders slow before any spine ingress reaches its pause threshold, and
/// at most a pause or two reaches a host. That holds while the collisions
/// last a few milliseconds (flows of 4 and 8 MB here); flows of 16 MB
/// outlast DCQCN's first cut and recovery, and from about 3 ms on its
/// equilibrium queue (about 3 MB on the book's 150 KB–3 MB marking ramp)
/// is above the spines' pause threshold, so pauses reach them again (35
/// spine pauses against 77 without congestion control, on 32 hosts).
/// ConnectX's default parameters
/// (cut by α, 50 % at first) do not do it: they still pause the spines as
/// often as no congestion control does, so the profile is what this
/// asserts.
#[test]
fn dcqcn_keeps_pfc_pauses_at_the_first_hop_where_ecmp_collides() {
    let dir = tempfile::tempdir().expect("tempdir");
    let topo = leaf_spine(&dir, 16, 8, 2);
    for seed in [1, 3] {
        let workload = format!("permutation:4M:{seed}");
        let none = run(&topo, &workload, |o| {
            o.lb = Some(Lb::Ecmp);
            o.cc = Cc::None;
        });
        let dcqcn = run(&topo, &workload, |o| {
            o.lb = Some(Lb::Ecmp);
            o.dcqcn = incast_profile();
        });
        assert_complete(&none);
        assert_complete(&dcqcn);
        let (n_host, n_spine, n_leaf) = pauses_by_hop(&none);
        let (d_host, d_spine, d_leaf) = pauses_by_hop(&dcqcn);
        let shape = format!(
            "seed {seed}: pauses to hosts / spine->leaf / leaf->spine: \
             none {n_host}/{n_spine}/{n_leaf}, dcqcn {d_host}/{d_spine}/{d_leaf}"
        );
        // Without congestion control pauses spread into the fabric.
        assert!(n_host >= 5 && n_spine >= 2, "{shape}");
        assert_eq!(none.deepest_pause_tier, Some(2), "{shape}");
        // With DCQCN none leaves the first hop, and far fewer happen.
        assert_eq!(d_spine + d_leaf, 0, "{shape}");
        assert!(dcqcn.deepest_pause_tier.is_none_or(|t| t <= 1), "{shape}");
        assert!(
            5 * (d_host + d_spine + d_leaf) <= n_host + n_spine,
            "{shape}"
        );
        // The senders were told: ECN marks, CNPs, rate cuts.
        assert!(dcqcn.fabric.rate_cuts > 0, "{:?}", dcqcn.fabric);
    }
}

/// `--queue-stats` puts every busy queue's λ, L and W in the JSON, and
/// leaves them out when not asked for.
#[test]
fn the_command_reports_queue_stats_when_asked() {
    let json = |extra: &[&str]| {
        let mut args = vec!["--workload", "incast:1M:h1,h2:h9"];
        args.extend_from_slice(extra);
        common::sim_json("incast", &args)
    };
    assert!(json(&[])["queue_stats"].is_null());
    let v = json(&["--queue-stats"]);
    let qs = v["queue_stats"].as_array().expect("queue_stats");
    // The incast's bottleneck: the queue that held the most.
    let q = qs
        .iter()
        .max_by(|a, b| {
            let depth = |q: &serde_json::Value| q["mean_depth_packets"].as_f64().unwrap_or(0.0);
            depth(a).total_cmp(&depth(b))
        })
        .expect("a queue carried the incast");
    for k in [
        "tx_packets",
        "tx_bytes",
        "departures_per_us",
        "mean_sojourn_ns",
        "mean_depth_packets",
        "mean_depth_bytes",
    ] {
        assert!(q[k].is_number(), "{k} missing: {q}");
    }
    assert!(q["mean_depth_packets"].as_f64() > Some(1.0), "{q}");
    assert!(q["name"].as_str().is_some_and(|n| n.ends_with(":3")), "{q}");
}
