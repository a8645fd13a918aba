//! Lab topologies end to end: `railyard lab up` of the shipped topologies,
//! all-pairs reachability across rails and spines, the LLDP cabling check,
//! `status`, two labs side by side, and `down` leaving nothing behind.
//!
//! Each lab has a unique name and its own state directory; a guard runs
//! `railyard lab down` on drop, so a failing test cleans up too.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicUsize = AtomicUsize::new(0);

fn railyard(state: &Path, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .arg("lab")
        .arg("--state-dir")
        .arg(state)
        .args(args)
        .output()
        .expect("run railyard");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn topology(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/topologies")
        .join(format!("{name}.topo"))
        .display()
        .to_string()
}

/// A lab brought up with `railyard lab up`, brought down on drop.
struct LabUp {
    name: String,
    state: PathBuf,
    doc: serde_json::Value,
    /// What `up` said on stderr.
    up_said: String,
}

impl LabUp {
    fn up(topo: &str, state: &Path) -> LabUp {
        let name = format!(
            "ryt{}x{}",
            std::process::id() % 100_000,
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let t0 = Instant::now();
        let (ok, out, err) = railyard(state, &["up", &topology(topo), "--name", &name]);
        assert!(ok, "lab up {topo} failed:\n{out}{err}");
        assert_eq!(out.trim(), name, "up prints the lab name");
        // It waited until the ports were up and LLDP saw every cable.
        assert!(
            err.contains("switch port(s) up, ") && err.contains(" s\n"),
            "{err}"
        );
        eprintln!("lab up {topo}: {:?}: {}", t0.elapsed(), err.trim());
        let text = std::fs::read_to_string(state.join(&name).join("state.json")).expect("state");
        LabUp {
            name,
            state: state.to_path_buf(),
            doc: serde_json::from_str(&text).expect("state json"),
            up_said: err,
        }
    }

    fn switch_names(&self) -> Vec<String> {
        self.doc["switches"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["name"].as_str().map(str::to_string))
            .collect()
    }

    fn pids(&self) -> Vec<u64> {
        self.doc["switches"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["pid"].as_u64())
            .collect()
    }

    /// (namespace, addresses) of every host.
    fn hosts(&self) -> Vec<(String, Vec<String>)> {
        self.doc["hosts"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| {
                let ns = h["namespace"].as_str().unwrap_or_default().to_string();
                let addrs = h["addresses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|a| a[1].as_str())
                    .map(|a| a.split('/').next().unwrap_or(a).to_string())
                    .collect();
                (ns, addrs)
            })
            .collect()
    }

    /// Brings the lab down and checks that no namespace and no switch
    /// process is left.
    fn down_and_check(&mut self) {
        let name = self.name.clone();
        self.down_as_and_check(&name);
    }

    /// Brings the lab down with `railyard lab down ARG` (its name, or its
    /// topology when it is that topology's only lab) and checks that no
    /// namespace and no switch process is left.
    fn down_as_and_check(&mut self, arg: &str) {
        let pids = self.pids();
        let (ok, out, err) = railyard(&self.state, &["down", arg]);
        assert!(ok, "lab down {arg}: {out}{err}");
        assert!(
            out.contains(&format!("{}: stopped", self.name)),
            "{out}{err}"
        );
        assert_no_trace(&self.name, &pids);
        assert!(
            !self.state.join(&self.name).exists(),
            "state directory left"
        );
        // Each switch's final counters (and log, and config) survive, where
        // `down` says.
        let kept = self.state.join(format!("{}.final", self.name));
        assert!(
            out.contains(&format!("kept in {}", kept.display())),
            "{out}"
        );
        assert!(!out.contains("no counters from"), "{out}");
        for sw in self.switch_names() {
            let counters = std::fs::read_to_string(kept.join(format!("{sw}.out")))
                .unwrap_or_else(|e| panic!("{sw}.out: {e}"));
            assert!(
                counters.starts_with("final counters:") && counters.contains("Ethernet1/1"),
                "{sw}.out: {counters}"
            );
            let log = std::fs::read_to_string(kept.join(format!("{sw}.log")))
                .unwrap_or_else(|e| panic!("{sw}.log: {e}"));
            // Logs written to a file carry no colour escapes.
            assert!(
                log.contains("running") && !log.contains('\x1b'),
                "{sw}.log: {log:?}"
            );
            assert!(kept.join(format!("{sw}.conf")).is_file(), "{sw}.conf");
        }
        // Idempotent, and it still says where the counters are.
        let (ok, _, err) = railyard(&self.state, &["down", &self.name]);
        assert!(ok && err.contains("nothing to do"), "{err}");
        assert!(
            err.contains(&format!("final counters are in {}", kept.display())),
            "{err}"
        );
    }
}

impl Drop for LabUp {
    fn drop(&mut self) {
        let _ = railyard(&self.state, &["down", &self.name]);
    }
}

fn assert_no_trace(name: &str, pids: &[u64]) {
    let list = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip");
    let list = String::from_utf8_lossy(&list.stdout);
    let prefix = format!("{name}-");
    assert!(
        !list.lines().any(|l| l.starts_with(&prefix)),
        "namespaces of {name} left:\n{list}"
    );
    assert!(!pids.is_empty());
    let deadline = Instant::now() + Duration::from_secs(3);
    for pid in pids {
        // Gone, or a zombie waiting for its new parent to reap it.
        let alive = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    !s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(false)
        };
        while alive() {
            assert!(
                Instant::now() < deadline,
                "switch process {pid} still running"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// `ip netns exec NS ping -c 1 -W 2 [-I SRC] DST`, up to three tries (the
/// first packet waits for ARP at every hop).
fn ping(ns: &str, src: Option<&str>, dst: &str) -> Result<(), String> {
    let mut last = String::new();
    for _ in 0..3 {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, "ping", "-n", "-c", "1", "-W", "2"]);
        if let Some(s) = src {
            cmd.args(["-I", s]);
        }
        let out = cmd.arg(dst).output().map_err(|e| e.to_string())?;
        if out.status.success() {
            return Ok(());
        }
        last = String::from_utf8_lossy(&out.stdout).into_owned();
    }
    Err(format!(
        "{ns}: ping {} {dst} failed: {last}",
        src.unwrap_or("")
    ))
}

/// Every host pings every other host's every address, from each of its
/// own addresses (source-routed out of that NIC) and unbound; in parallel.
fn all_pairs_ping(lab: &LabUp) -> usize {
    let hosts = lab.hosts();
    let mut jobs = Vec::new();
    for (i, (ns, mine)) in hosts.iter().enumerate() {
        for (j, (_, theirs)) in hosts.iter().enumerate() {
            if i == j {
                continue;
            }
            for dst in theirs {
                jobs.push((ns.clone(), None, dst.clone()));
                if mine.len() > 1 {
                    for src in mine {
                        jobs.push((ns.clone(), Some(src.clone()), dst.clone()));
                    }
                }
            }
        }
    }
    let n = jobs.len();
    let t0 = Instant::now();
    let handles: Vec<_> = jobs
        .into_iter()
        .map(|(ns, src, dst)| std::thread::spawn(move || ping(&ns, src.as_deref(), &dst)))
        .collect();
    let failures: Vec<String> = handles
        .into_iter()
        .filter_map(|h| h.join().expect("ping thread").err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {n} pings failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    eprintln!("{n} pings in {:?}", t0.elapsed());
    n
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn single_rail_switch_lab_pings_and_comes_down_clean() {
    let state = tempfile::tempdir().expect("tempdir");
    let mut lab = LabUp::up("single", state.path());
    assert_eq!(all_pairs_ping(&lab), 12);
    let (ok, out, err) = railyard(state.path(), &["status", &lab.name]);
    assert!(ok, "{err}");
    assert!(
        out.contains("rail1") && out.contains("Ethernet1/4") && out.contains("h4:eth0"),
        "{out}"
    );
    let (ok, out, err) = railyard(state.path(), &["cabling", &lab.name]);
    assert!(
        ok,
        "no switch-switch link, nothing can mismatch: {out}{err}"
    );
    assert!(out.contains("h1 eth0 (host, no LLDP)"), "{out}");
    // The topology's file stands for its only lab.
    lab.down_as_and_check(&topology("single"));
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn rail_spine_lab_reaches_across_rails_and_spines_and_cabling_matches() {
    let state = tempfile::tempdir().expect("tempdir");
    let mut lab = LabUp::up("rail-spine", state.path());
    let t0 = Instant::now();
    // 4 hosts × 6 other addresses × (unbound + 2 sources).
    assert_eq!(all_pairs_ping(&lab), 72);

    // Cross-rail traffic sourced from NIC0 must have crossed the spines.
    let (ok, out, err) = railyard(state.path(), &["status", &lab.name, "--json"]);
    assert!(ok, "{err}");
    let status: serde_json::Value = serde_json::from_str(&out).expect("status json");
    for sw in status["switches"].as_array().expect("switches") {
        if sw["name"].as_str().is_some_and(|n| n.starts_with("spine")) {
            let tx: u64 = sw["interfaces"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|i| i["tx_packets"].as_u64().unwrap_or(0))
                .sum();
            assert!(tx > 0, "no traffic through {}", sw["name"]);
        }
    }

    // `up` waited for the links and LLDP: the cabling check passes at once.
    assert!(
        lab.up_said.contains(
            "16 switch port(s) up, 4 switch-switch cable(s) seen by LLDP on both ends, after"
        ),
        "{}",
        lab.up_said
    );
    let (ok, out, err) = railyard(state.path(), &["cabling", &lab.name, "--json"]);
    assert!(ok, "cabling right after up:\n{out}{err}");
    let rows: serde_json::Value = serde_json::from_str(&out).expect("cabling json");
    eprintln!("cabling OK {:?} after up", t0.elapsed());
    let rows = rows.as_array().expect("rows");
    let count = |s: &str| rows.iter().filter(|r| r["status"] == s).count();
    assert_eq!(
        (count("OK"), count("HOST"), rows.len()),
        (8, 8, 16),
        "{rows:?}"
    );
    let (ok, table, _) = railyard(state.path(), &["cabling", &lab.name]);
    assert!(
        ok && table.contains("spine1  Ethernet1/2   rail2 Ethernet1/31"),
        "{table}"
    );
    assert!(!table.contains("!!"), "{table}");

    let (ok, out, err) = railyard(state.path(), &["status", &lab.name]);
    assert!(ok, "{err}");
    for sw in ["rail1", "rail2", "spine1", "spine2"] {
        assert!(
            out.contains(&format!("\n{sw}  namespace {}-{sw}", lab.name)),
            "{sw}:\n{out}"
        );
    }
    assert!(
        out.contains("Ethernet1/31  spine1               Ethernet1/1"),
        "{out}"
    );
    assert!(
        out.contains("Ethernet1/2   rail2                Ethernet1/31"),
        "{out}"
    );

    // A switch that dies is reported, and cabling fails with `!!` rows.
    let spine2 = lab.doc["switches"][3]["pid"].as_u64().expect("pid");
    assert_eq!(lab.doc["switches"][3]["name"], "spine2");
    Command::new("kill")
        .args(["-s", "TERM", &spine2.to_string()])
        .status()
        .expect("kill");
    let deadline = Instant::now() + Duration::from_secs(10);
    let table = loop {
        let (ok, table, _) = railyard(state.path(), &["cabling", &lab.name]);
        if !ok && table.contains("!! rail1") {
            break table;
        }
        assert!(
            Instant::now() < deadline,
            "cabling still OK without spine2:\n{table}"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(
        table.contains("MISSING") && table.contains("UNKNOWN"),
        "{table}"
    );
    lab.down_and_check();
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn two_labs_of_the_same_topology_coexist() {
    let state = tempfile::tempdir().expect("tempdir");
    let mut a = LabUp::up("single", state.path());
    let b = LabUp::up("single", state.path());
    let (ok, list, _) = railyard(state.path(), &["list"]);
    assert!(
        ok && list.contains(&a.name) && list.contains(&b.name),
        "{list}"
    );
    // Same addresses in both labs, each answered in its own.
    ping(&format!("{}-h1", a.name), None, "10.1.4.2").expect("lab a");
    ping(&format!("{}-h1", b.name), None, "10.1.4.2").expect("lab b");
    // The topology names two labs: `down single` names them and removes none.
    let (ok, out, err) = railyard(state.path(), &["down", "single"]);
    assert!(!ok, "ambiguous down must fail: {out}{err}");
    assert!(
        err.contains(&a.name) && err.contains(&b.name) && err.contains("--all-of single"),
        "{err}"
    );
    assert!(state.path().join(&a.name).join("state.json").exists());
    a.down_and_check();
    ping(&format!("{}-h2", b.name), None, "10.1.3.2").expect("b survives a's down");
    // `down --all-of` removes every lab of a topology.
    let pids = b.pids();
    let (ok, out, err) = railyard(state.path(), &["down", "--all-of", "single"]);
    assert!(ok && out.contains(&b.name), "{out}{err}");
    assert_no_trace(&b.name, &pids);
}

/// A role without `feature lldp`: its switches never see each other.
const NO_LLDP: &str = "\
hostname {{hostname}}
{{#interface}}
interface {{name}}
  no switchport
  mtu {{mtu}}
  ip address {{address}}
  bind af-packet {{ifname}}
  no shutdown
{{/interface}}
";

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn up_waits_for_lldp_and_on_timeout_says_what_is_missing() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("templates")).expect("mkdir");
    std::fs::write(dir.path().join("templates/quiet.conf"), NO_LLDP).expect("template");
    let topo = dir.path().join("quiet.topo");
    std::fs::write(
        &topo,
        "switch a role quiet\nswitch b role quiet\nlink a:e1/1 b:e1/2 subnet 10.255.0.0/31\n",
    )
    .expect("topology");
    let state = dir.path().join("state");
    let topo = topo.display().to_string();
    let name = |i: usize| format!("ryw{}x{i}", std::process::id() % 100_000);
    let guard = |n: String| LabUp {
        name: n,
        state: state.clone(),
        doc: serde_json::Value::Null,
        up_said: String::new(),
    };

    // No LLDP: the wait runs out, names both ends, and leaves the lab up.
    let _a = guard(name(0));
    let t0 = Instant::now();
    let (ok, out, err) = railyard(&state, &["up", &topo, "--name", &name(0), "--wait", "2"]);
    assert!(!ok, "up must fail when LLDP never converges: {out}{err}");
    assert!(t0.elapsed() < Duration::from_secs(15), "{:?}", t0.elapsed());
    assert_eq!(out.trim(), name(0), "the name is printed before the wait");
    for line in [
        "a Ethernet1/1: no LLDP neighbour yet (expected b Ethernet1/2)",
        "b Ethernet1/2: no LLDP neighbour yet (expected a Ethernet1/1)",
        "not ready after 2 s",
    ] {
        assert!(err.contains(line), "{line:?} in:\n{err}");
    }
    assert!(
        err.contains(&format!("`railyard lab down {}`", name(0))),
        "{err}"
    );
    assert!(
        state.join(name(0)).join("state.json").exists(),
        "the lab stays up"
    );
    let (ok, _, _) = railyard(&state, &["status", &name(0)]);
    assert!(ok);

    // `--wait 0` returns as soon as the switches answer.
    let _b = guard(name(1));
    let (ok, out, err) = railyard(&state, &["up", &topo, "--name", &name(1), "--wait", "0"]);
    assert!(ok, "{out}{err}");
    assert!(!err.contains("LLDP"), "{err}");
}

#[test]
fn render_of_a_topology_elsewhere_says_the_roles_are_built_in() {
    let dir = tempfile::tempdir().expect("tempdir");
    let topo = dir.path().join("mine.topo");
    std::fs::copy(topology("rail-spine"), &topo).expect("copy topology");
    let out_dir = dir.path().join("out");
    let (ok, out, err) = railyard(
        dir.path(),
        &[
            "render",
            &topo.display().to_string(),
            "--out",
            &out_dir.display().to_string(),
        ],
    );
    assert!(ok, "{out}{err}");
    assert!(
        err.contains("role rail: built-in templates/rail.conf")
            && err.contains("role spine: built-in templates/spine.conf"),
        "{err}"
    );
    let rail1 = std::fs::read_to_string(out_dir.join("rail1.conf")).expect("rail1.conf");
    assert!(rail1.contains("hostname rail1\n"), "{rail1}");
    // The shipped topology finds its templates beside it.
    let (ok, _, err) = railyard(
        dir.path(),
        &[
            "render",
            &topology("single"),
            "--out",
            &out_dir.display().to_string(),
        ],
    );
    assert!(
        ok && err.contains("scripts/topologies/templates/rail.conf"),
        "{err}"
    );
}
