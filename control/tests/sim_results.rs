//! `railyard sim`'s results: FCT slowdown against the ideal, per-link
//! load and uplink balance, how far pauses spread, reordering, and the
//! CSV and SVG files, on the shipped small topologies.

use std::path::Path;

use railyard_control::sim::{Cc, Lb};

mod common;
use common::{sim, topology};

/// Runs the `railyard` binary; its stdout.
fn railyard(args: &[&str]) -> String {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("run railyard");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8")
}

#[test]
fn an_idle_flow_takes_about_its_ideal_time_on_one_switch_and_across_the_spines() {
    // One switch (2 cables), and rail1 -> spine -> rail2 (4 cables).
    for (topo, workload) in [
        ("incast", "incast:2M:h1:h9"),
        ("rail-spine", "incast:2M:h1.eth0:h2.eth1"),
    ] {
        let r = sim(topo, workload, |_| {});
        assert_eq!(r.flow_fct.len(), 1, "{workload}");
        let f = &r.flow_fct[0];
        let s = f.slowdown.expect("finished with an ideal");
        assert!(
            (0.98..1.1).contains(&s),
            "{topo} {workload}: FCT {:?} us, ideal {:?} us, slowdown {s:.3}",
            f.fct_us,
            f.ideal_us
        );
        let all = r.fct.overall.as_ref().expect("a flow");
        assert_eq!((all.flows, all.unfinished), (1, 0));
        assert_eq!(r.fct.buckets.len(), 1, "empty buckets are left out");
        assert_eq!(r.fct.buckets[0].bucket, "1M-10M");
    }
}

#[test]
fn a_one_packet_flow_takes_its_cables_delays_both_ways() {
    // The ideal counts each cable's store-and-forward of the packet; the
    // simulated cables deliver a frame their delay after its first bit,
    // so a one-packet flow reads a little under 1 (4.0 us against 4.5 on
    // one switch, 8.0 against 9.0 across the spines).
    for (topo, workload, cables) in [
        ("incast", "incast:3000:h1:h9", 2.0),
        ("rail-spine", "incast:3000:h1.eth0:h2.eth1", 4.0),
    ] {
        let r = sim(topo, workload, |_| {});
        let f = &r.flow_fct[0];
        let (fct, ideal) = (f.fct_us.expect("finished"), f.ideal_us.expect("path"));
        // 1 us per cable each way.
        assert!(
            fct >= 2.0 * cables && fct < 2.0 * cables + 1.0,
            "{workload}: {fct}"
        );
        assert!(
            ideal > 2.0 * cables && ideal < 2.0 * cables + 0.3 * cables,
            "{workload}: {ideal}"
        );
        assert_eq!(r.fct.buckets[0].bucket, "<10K");
    }
}

#[test]
fn the_cross_spine_ideal_is_longer_than_the_one_switch_ideal() {
    let near = sim("rail-spine", "incast:3000:h1.eth0:h2.eth0", |_| {});
    let far = sim("rail-spine", "incast:3000:h1.eth0:h2.eth1", |_| {});
    let (n, f) = (
        near.flow_fct[0].ideal_us.expect("path"),
        far.flow_fct[0].ideal_us.expect("path"),
    );
    // Two more cables of 1 us each way.
    assert!(f - n > 3.9 && f - n < 4.5, "near {n} us, far {f} us");
}

#[test]
fn an_incast_slows_its_flows_down_by_about_the_number_of_senders() {
    let r = sim("incast", "incast:1M:h1,h2,h3,h4:h9", |_| {});
    let all = r.fct.overall.as_ref().expect("flows");
    assert_eq!(all.flows, 4);
    // Four flows share one 100 Gb/s port: the last finishes after ~4x.
    assert!(all.p99 > 3.0 && all.p99 < 5.0, "{all:?}");
    assert!(all.p50 > 1.5, "{all:?}");
}

#[test]
fn link_utilisation_is_a_fraction_and_every_cable_direction_is_counted() {
    let r = sim("rail-spine", "alltoall:4M", |o| o.lb = Some(Lb::Ecmp));
    // 4 cables per rail to hosts, 4 rail-spine cables, both directions
    // of each seen from a switch (a host link only from its switch).
    assert_eq!(r.link_load.len(), 8 + 4 * 2, "{:?}", r.link_load);
    for l in &r.link_load {
        assert!(
            (0.0..=1.0).contains(&l.utilisation),
            "{}:{} {}",
            l.switch,
            l.interface,
            l.utilisation
        );
    }
    let up: Vec<_> = r
        .link_load
        .iter()
        .filter(|l| l.tier == 1 && l.peer_tier == 2)
        .collect();
    assert_eq!(up.len(), 4);
    let busy = r
        .link_load
        .iter()
        .map(|l| l.utilisation)
        .fold(0.0, f64::max);
    assert!(busy > 0.2, "the busiest port was used {busy}");
    assert_eq!(r.uplinks.len(), 2, "{:?}", r.uplinks);
    assert!(r.uplinks.iter().all(|u| u.uplinks == 2 && u.tier == 1));
}

#[test]
fn per_packet_spraying_balances_the_uplinks_better_than_ecmp() {
    let ecmp = sim("rail-spine", "alltoall:4M", |o| o.lb = Some(Lb::Ecmp));
    let spray = sim("rail-spine", "alltoall:4M", |o| o.lb = Some(Lb::PerPacket));
    let (e, s) = (
        ecmp.uplink_imbalance.expect("uplinks used"),
        spray.uplink_imbalance.expect("uplinks used"),
    );
    assert!(s < e, "per-packet {s:.3} vs ECMP {e:.3}");
    assert!(s < 1.05, "per-packet max/mean {s:.3}");
    // ECMP keeps each flow on one path: nothing arrives out of order.
    assert_eq!(ecmp.fabric.reordered, 0, "{:?}", ecmp.fabric);
}

#[test]
fn pauses_are_placed_by_tier() {
    // Three senders on rail 1 into one receiver on rail 2 through the
    // spines, without congestion control: the receiver's rail switch
    // pauses the spines.
    let r = sim(
        "rail-spine",
        "incast:8M:h1.eth0,h2.eth0,h3.eth0:h4.eth1",
        |o| o.cc = Cc::None,
    );
    assert!(r.fabric.pfc_pause_frames > 0, "{:?}", r.fabric);
    let deepest = r.deepest_pause_tier.expect("pauses");
    assert!(deepest >= 1);
    for l in &r.links {
        let want = if l.switch.starts_with("spine") { 2 } else { 1 };
        assert_eq!(l.tier, Some(want), "{l:?}");
        if l.pause_tx + l.pause_rx > 0 {
            assert!(want <= deepest);
        }
    }
    let paused_spine = r
        .links
        .iter()
        .any(|l| l.tier == Some(2) && l.pause_tx + l.pause_rx > 0);
    assert_eq!(paused_spine, deepest == 2);
}

/// `railyard sim rail-spine --workload permutation:256K:7 --lb
/// ecmp,per-packet` with `extra` arguments; its stdout.
fn permutation_under_ecmp_and_spraying(extra: &[&str]) -> String {
    let topo = topology("rail-spine");
    let mut args = vec![
        "sim",
        topo.to_str().expect("path"),
        "--workload",
        "permutation:256K:7",
        "--lb",
        "ecmp,per-packet",
    ];
    args.extend_from_slice(extra);
    railyard(&args)
}

#[test]
fn the_csv_has_a_row_per_flow_of_every_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let csv = dir.path().join("flows.csv");
    let json =
        permutation_under_ecmp_and_spraying(&["--json", "--csv", csv.to_str().expect("path")]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let runs = v["runs"].as_array().expect("runs");
    let flows: usize = runs
        .iter()
        .map(|r| r["flow_fct"].as_array().expect("flow_fct").len())
        .sum();
    assert_eq!(flows, 16, "8 NICs, a flow each, two runs");
    let text = std::fs::read_to_string(&csv).expect("CSV written");
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("workload,lb,src,dst,bytes,start_us,end_us,fct_us,ideal_us,slowdown")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), flows);
    for row in &rows {
        assert_eq!(row.len(), 10, "{row:?}");
        assert_eq!(row[0], "permutation:256K:7");
        assert!(row[1] == "ecmp" || row[1] == "per-packet");
        assert_eq!(row[4], "262144");
        let fct: f64 = row[7].parse().expect("fct_us");
        let ideal: f64 = row[8].parse().expect("ideal_us");
        let slowdown: f64 = row[9].parse().expect("slowdown");
        assert!((fct / ideal - slowdown).abs() < 1e-3, "{row:?}");
    }
    // The JSON carries the new results of each run.
    for r in runs {
        for k in [
            "fct",
            "link_load",
            "uplinks",
            "uplink_imbalance",
            "deepest_pause_tier",
        ] {
            assert!(r.get(k).is_some(), "{k} missing");
        }
        assert!(r["fabric"].get("reordered").is_some());
        assert!(r["fct"]["overall"]["p99"].as_f64().expect("p99") >= 0.98);
    }
}

/// The file's elements named `tag` (it must be well-formed XML), those
/// with `stroke-width` `width` when given (plotters draws axes and ticks
/// as 1-pixel polylines; the series here are 2 pixels wide).
fn count(path: &Path, tag: &str, width: Option<&str>) -> usize {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&text)
        .unwrap_or_else(|e| panic!("{} is not XML: {e}", path.display()));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == tag)
        .filter(|n| width.is_none_or(|w| n.attribute("stroke-width") == Some(w)))
        .count()
}

#[test]
fn the_svg_plots_are_xml_with_a_series_per_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = permutation_under_ecmp_and_spraying(&[
        "--sample-queue",
        "rail1:Ethernet1/31:3",
        "--svg",
        dir.path().to_str().expect("path"),
    ]);
    // The side-by-side table gained the results' columns.
    let header = out
        .lines()
        .find(|l| l.starts_with("LB "))
        .expect("side-by-side table");
    for col in ["FCT p99", "Up max/mn", "Tier", "Reordered", "Drops"] {
        assert!(header.contains(col), "{col}: {header}");
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "fct-cdf.svg",
            "pauses.svg",
            "queue-rail1-Ethernet1_31-3.svg",
            "uplinks.svg"
        ]
    );
    // A line per run (legend swatches are squares, not lines).
    assert_eq!(
        count(&dir.path().join("fct-cdf.svg"), "polyline", Some("2")),
        2
    );
    assert_eq!(
        count(
            &dir.path().join("queue-rail1-Ethernet1_31-3.svg"),
            "polyline",
            Some("2")
        ),
        2
    );
    // A cable per line on each run's map: 8 host cables, 4 uplinks.
    assert_eq!(
        count(&dir.path().join("pauses.svg"), "polyline", None),
        2 * 12
    );
    // Two leaves with two uplinks each, per run, among the background and
    // legend rectangles.
    assert!(count(&dir.path().join("uplinks.svg"), "rect", None) >= 2 * 4);
}
