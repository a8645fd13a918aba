//! `railyard lab generate`: the files it prints are ordinary topologies.
//!
//! * The command prints a topology on stdout and a summary on stderr, and
//!   refuses an impossible fabric with a hint and a failing exit status.
//! * The 1,024-GPU rail-optimised fabric (128 hosts × 8 rails, 64-port
//!   switches at 400 Gb/s) parses with the lab's parser, and every switch's
//!   configuration renders and compiles (`lab render`).
//! * A small generated fabric runs under `railyard sim`: an AllReduce on
//!   the rails and an AllToAll across them through the spines complete
//!   with no wrong element.
//! * Live (root): a small generated fabric comes up with `lab up`, and
//!   LLDP sees every leaf–spine cable on both ends; it goes down on drop.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use serde_json::Value;

mod common;
use common::TopoLab;

const RAILYARD: &str = env!("CARGO_BIN_EXE_railyard");

fn railyard(args: &[&str]) -> Output {
    Command::new(RAILYARD)
        .args(args)
        .output()
        .expect("run railyard")
}

/// `railyard lab generate ARGS…`'s stdout; fails the test unless it
/// succeeded.
fn generate(args: &[&str]) -> String {
    let mut all = vec!["lab", "generate"];
    all.extend_from_slice(args);
    let out = railyard(&all);
    assert!(
        out.status.success(),
        "railyard {all:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

const SMALL: [&str; 9] = [
    "rail-optimised",
    "--hosts",
    "4",
    "--rails",
    "2",
    "--spines",
    "2",
    "--speed",
    "10000",
];

#[test]
fn generate_prints_a_topology_and_a_summary() {
    let mut all = vec!["lab", "generate"];
    all.extend_from_slice(&SMALL);
    let out = railyard(&all);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let t = railyard_control::lab::topology::parse_str(&text, Path::new("small.topo"))
        .unwrap_or_else(|d| panic!("{}", railyard_control::format_diagnostics(&d)));
    assert_eq!((t.switches.len(), t.hosts.len(), t.links.len()), (4, 4, 16));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.trim(),
        "rail-optimised: 4 hosts × 2 NIC(s) = 8 NICs at 10 Gb/s; 2 leaves, 2 spines; \
         16 links; oversubscription 1:1; bisection 40 Gb/s"
    );
    let out = railyard(&["lab", "generate", "rail-optimized", "--hosts", "0"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--hosts 0") && err.contains("= hint:"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn the_1024_gpu_rail_optimised_fabric_parses() {
    let text = generate(&["rail-optimised", "--hosts", "128", "--rails", "8"]);
    let t = railyard_control::lab::topology::parse_str(&text, Path::new("gpu1024.topo"))
        .unwrap_or_else(|d| panic!("{}", railyard_control::format_diagnostics(&d)));
    assert_eq!(t.switches.len(), 32 + 16);
    let nics = t.links.iter().filter(|l| t.is_host_link(l)).count();
    assert_eq!(nics, 1024);
    assert!(t.links.iter().all(|l| l.speed == Some(400_000)));
    // Every switch's configuration renders, parses and compiles, as the
    // simulator's fabric builder first does.
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("gpu1024.topo");
    std::fs::write(&file, &text).expect("write");
    let out_dir = dir.path().join("conf");
    let out = railyard(&[
        "lab",
        "render",
        file.to_str().expect("path"),
        "--out",
        out_dir.to_str().expect("path"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let confs = std::fs::read_dir(&out_dir).expect("configs").count();
    assert_eq!(confs, 48);
    // A leaf routes the 992 host subnets of other leaves over all 32 of
    // its uplinks.
    let leaf = std::fs::read_to_string(out_dir.join("rail1-1.conf")).expect("rail1-1");
    let routes = leaf.lines().filter(|l| l.starts_with("ip route ")).count();
    assert_eq!(routes, 992 * 32);
}

/// `railyard sim FILE --workload W --json`, parsed.
fn sim(file: &Path, workload: &str) -> Value {
    let out = railyard(&[
        "sim",
        file.to_str().expect("path"),
        "--workload",
        workload,
        "--json",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "sim {workload}: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[test]
fn a_small_generated_fabric_runs_collectives_in_the_simulator() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("small.topo");
    std::fs::write(&file, generate(&SMALL)).expect("write");
    for workload in ["allreduce:1M", "alltoall:256K"] {
        let v = sim(&file, workload);
        let r = &v["results"][0];
        assert_eq!(r["completed"], true, "{workload}: {v:#}");
        assert_eq!(r["wrong"], 0, "{workload}: {v:#}");
        assert_eq!(v["timed_out"], false, "{workload}");
        assert_eq!(v["refused_frames"], 0, "{workload}");
    }
}

#[test]
#[ignore = "needs root and network namespaces"]
fn a_small_generated_fabric_comes_up_live_with_lldp_on_every_uplink() {
    let text = generate(&SMALL);
    let lab = TopoLab::up("ryg", "generated", &text, &[]);
    let t = &lab.state.topology;
    let cables = t.links.iter().filter(|l| !t.is_host_link(l)).count();
    assert_eq!(cables, 8);
    let ready = railyard_control::lab::report::wait_ready(&lab.state, Duration::from_secs(60))
        .unwrap_or_else(|missing| panic!("not ready: {missing:#?}"));
    assert_eq!(ready.cables, cables);
    let rows = railyard_control::lab::report::cabling(&lab.state);
    use railyard_control::lab::report::CableStatus;
    let fabric: Vec<_> = rows
        .iter()
        .filter(|r| !matches!(r.status, CableStatus::Host))
        .collect();
    // Both ends of every leaf–spine cable, each seeing its peer by LLDP.
    assert_eq!(fabric.len(), 2 * cables, "{rows:#?}");
    for r in &fabric {
        assert!(matches!(r.status, CableStatus::Ok), "{r:?}");
        let peer = r.expected.split(' ').next().unwrap_or_default();
        assert!(r.seen.starts_with(peer), "{r:?}");
    }
}
