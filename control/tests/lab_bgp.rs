//! rail-spine with `routing bgp`: every switch runs FRR beside it, the
//! sessions come up over the mirror interfaces, the hosts reach each other
//! across the spines, and a cut rail–spine cable reroutes the traffic over
//! the other spine; with the computed static routes the same cut loses
//! traffic for as long as the cable is down.
//!
//! Each lab has its own uniquely named namespaces (removed on drop); the
//! switches and their FRRs are stopped by PID.

use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{ok, run, shipped, wait_for, Daemon, TopoLab};

/// Host `h`'s address on rail `r` (rail 1 is eth0, rail 2 eth1).
fn addr(r: u32, h: u32) -> String {
    format!("10.{r}.{h}.2")
}

fn templates() -> Vec<(&'static str, String)> {
    ["rail", "spine"]
        .into_iter()
        .map(|r| (r, shipped(&format!("templates/{r}.conf"))))
        .collect()
}

fn lab(routing: &str) -> TopoLab {
    let topo = format!("{}\nrouting {routing}\n", shipped("rail-spine.topo"));
    TopoLab::up("bg", "rail-spine", &topo, &templates())
}

fn cli(lab: &TopoLab, sw: &str, args: &[&str]) -> Result<Value, String> {
    let s = lab
        .state
        .switches
        .iter()
        .find(|s| s.name == sw)
        .ok_or_else(|| format!("no switch {sw}"))?;
    let mut argv = vec![env!("CARGO_BIN_EXE_railyard")];
    argv.extend_from_slice(args);
    argv.extend(["--json", "--socket", s.socket.to_str().unwrap_or_default()]);
    let out = run(&argv)?;
    serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))
}

/// The state of every BGP session of `sw`, by neighbour.
fn sessions(lab: &TopoLab, sw: &str) -> Result<Vec<(String, String)>, String> {
    let v = cli(lab, sw, &["show", "bgp", "summary"])?;
    Ok(v["families"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|f| f["peers"].as_array().into_iter().flatten())
        .map(|p| {
            (
                p["neighbor"].as_str().unwrap_or("?").to_string(),
                p["state"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect())
}

/// The next hops of `prefix` in `sw`'s FIB: (gateway, interface).
fn next_hops(lab: &TopoLab, sw: &str, prefix: &str) -> Result<(String, Vec<String>), String> {
    let v = cli(lab, sw, &["show", "ip", "route"])?;
    let r = v["routes"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["prefix"] == prefix)
        .ok_or_else(|| format!("{sw} has no route to {prefix}"))?;
    Ok((
        r["kind"].as_str().unwrap_or("?").to_string(),
        r["next_hops"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| h["interface"].as_str().unwrap_or("?").to_string())
            .collect(),
    ))
}

/// Every cross-rail pair: from host `a`'s rail-1 NIC to host `b`'s rail-2
/// NIC, through a spine. Sixteen pairs hash over both spines both ways.
fn pairs() -> Vec<(u32, u32)> {
    (1..=4).flat_map(|a| (1..=4).map(move |b| (a, b))).collect()
}

fn reachable(lab: &TopoLab, a: u32, b: u32) -> bool {
    run(&[
        "ip",
        "netns",
        "exec",
        &lab.ns(&format!("h{a}")),
        "ping",
        "-c",
        "1",
        "-W",
        "1",
        "-I",
        &addr(1, a),
        &addr(2, b),
    ])
    .is_ok()
}

/// Waits until every cross-rail pair answers a ping.
fn every_pair_reachable(lab: &TopoLab, timeout: Duration) {
    wait_for("every cross-rail pair", timeout, || {
        let missing: Vec<_> = pairs()
            .into_iter()
            .filter(|&(a, b)| !reachable(lab, a, b))
            .collect();
        if missing.is_empty() {
            Ok(())
        } else {
            Err(format!("unreachable: {missing:?}"))
        }
    });
}

/// Waits until `sw` routes `prefix` over exactly the ports `want`; returns
/// how long after `since` that was.
fn wait_hops(lab: &TopoLab, sw: &str, prefix: &str, want: &[&str], since: Instant) -> Duration {
    wait_for(
        &format!("{sw} to route {prefix} over {want:?}"),
        Duration::from_secs(60),
        || match next_hops(lab, sw, prefix)? {
            (_, h) if h == want => Ok(since.elapsed()),
            other => Err(format!("{other:?}")),
        },
    )
}

/// One ping per pair at 100 per second, until stopped.
struct Probes(Vec<(u32, u32, Daemon)>);

impl Probes {
    fn start(lab: &TopoLab, tag: &str) -> Probes {
        let dir = lab.root();
        Probes(
            pairs()
                .into_iter()
                .map(|(a, b)| {
                    let d = Daemon::start(
                        &lab.ns(&format!("h{a}")),
                        &[
                            "ping",
                            "-n",
                            "-D",
                            "-i",
                            "0.01",
                            "-W",
                            "1",
                            "-I",
                            &addr(1, a),
                            &addr(2, b),
                        ],
                        &dir.join(format!("{tag}-h{a}-h{b}.ping")),
                    );
                    (a, b, d)
                })
                .collect(),
        )
    }

    /// Stops every ping; per pair the loss window: the longest time
    /// between two replies, less the 10 ms between probes. (Counting lost
    /// probes would understate it: ping sends more slowly while its
    /// probes go unanswered.)
    fn stop(mut self) -> Vec<((u32, u32), u64)> {
        // A pair that gets no reply from some moment on has its window end
        // here.
        let end = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        self.0
            .iter_mut()
            .map(|(a, b, d)| {
                d.stop_with(libc::SIGINT);
                let log = d.log();
                // `[1764281234.123456] 64 bytes from …`: one line per reply.
                let replies: Vec<f64> = log
                    .lines()
                    .filter(|l| l.contains(" bytes from "))
                    .filter_map(|l| l.strip_prefix('[')?.split(']').next()?.parse().ok())
                    .collect();
                assert!(replies.len() > 10, "h{a} -> h{b}: {log}");
                let mut replies = replies;
                replies.push(end);
                let gap = replies.windows(2).map(|w| w[1] - w[0]).fold(0.0, f64::max);
                let ms = (gap * 1000.0) as u64;
                ((*a, *b), ms.saturating_sub(10))
            })
            .collect()
    }
}

fn worst(windows: &[((u32, u32), u64)]) -> ((u32, u32), u64) {
    windows
        .iter()
        .copied()
        .max_by_key(|(_, ms)| *ms)
        .unwrap_or(((0, 0), 0))
}

/// Cuts (or mends) the rail1–spine1 cable: the veth end in rail1's
/// namespace goes down, and with it the carrier of both ends.
fn cable(lab: &TopoLab, up: bool) {
    ok(&[
        "ip",
        "-n",
        &lab.ns("rail1"),
        "link",
        "set",
        "e1-31",
        if up { "up" } else { "down" },
    ]);
}

/// A rail's uplinks: to spine1, to spine2.
const BOTH: [&str; 2] = ["Ethernet1/31", "Ethernet1/32"];
/// A rail's uplink to spine2 alone.
const SPINE2: [&str; 1] = ["Ethernet1/32"];

/// How long the cable stays cut while the probes run.
const CUT: Duration = Duration::from_secs(4);

#[test]
#[ignore = "needs root, network namespaces and FRR (scripts/test.sh)"]
fn bgp_brings_rail_spine_up_and_reroutes_around_a_cut_cable() {
    let t0 = Instant::now();
    let lab = lab("bgp");
    let started = t0.elapsed();
    // Every session Established (each rail has two, each spine two).
    for sw in ["rail1", "rail2", "spine1", "spine2"] {
        wait_for(&format!("{sw}'s sessions"), Duration::from_secs(90), || {
            let s = sessions(&lab, sw)?;
            if s.len() == 2 && s.iter().all(|(_, st)| st == "Established") {
                Ok(())
            } else {
                Err(format!("{s:?}"))
            }
        });
    }
    let established = t0.elapsed();
    // Every host reaches every host across the spines.
    every_pair_reachable(&lab, Duration::from_secs(60));
    let reached = t0.elapsed();
    // Each rail reaches the other's subnets over both spines: BGP multipath.
    let multipath = wait_hops(&lab, "rail1", "10.2.1.0/24", &BOTH, t0);
    wait_hops(&lab, "rail2", "10.1.1.0/24", &BOTH, t0);
    assert_eq!(next_hops(&lab, "rail1", "10.2.1.0/24").unwrap().0, "bgp");
    eprintln!(
        "bgp rail-spine: switches up {} ms, sessions Established {} ms, every pair reachable {} ms, \
         ECMP over both spines {} ms",
        started.as_millis(),
        established.as_millis(),
        reached.as_millis(),
        multipath.as_millis()
    );

    // Cut rail1–spine1 while every pair sends.
    let probes = Probes::start(&lab, "cut");
    std::thread::sleep(Duration::from_secs(1));
    let cut_at = Instant::now();
    cable(&lab, false);
    let shrunk = wait_hops(&lab, "rail1", "10.2.1.0/24", &SPINE2, cut_at);
    let rail2 = wait_hops(&lab, "rail2", "10.1.1.0/24", &SPINE2, cut_at);
    std::thread::sleep(CUT.saturating_sub(cut_at.elapsed()));
    let s = sessions(&lab, "spine1").unwrap();
    assert!(
        s.iter()
            .any(|(n, st)| n == "10.255.1.0" && st != "Established"),
        "spine1's session to rail1 is down: {s:?}"
    );
    let bfd = cli(&lab, "spine1", &["show", "bfd", "neighbors"]).unwrap();
    let to_rail1 = bfd["neighbors"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|n| n["neigh_addr"] == "10.255.1.0")
        .cloned()
        .unwrap_or_default();
    assert_ne!(to_rail1["state"], "Up", "{bfd}");
    let cut = probes.stop();
    let ((a, b), window) = worst(&cut);
    eprintln!(
        "cut: rail1's ECMP group shrank after {} ms, rail2's after {} ms; longest loss {window} ms (h{a} -> h{b}); all: {cut:?}",
        shrunk.as_millis(),
        rail2.as_millis()
    );
    // Traffic went on over spine2: no pair lost more than a detection's worth.
    assert!(
        window < 3_000,
        "h{a} -> h{b} lost {window} ms of a {} ms cut",
        CUT.as_millis()
    );

    // Mend it: the sessions and the second path come back, and traffic
    // spreads over both spines again.
    let probes = Probes::start(&lab, "mend");
    std::thread::sleep(Duration::from_millis(500));
    let mend_at = Instant::now();
    cable(&lab, true);
    let back = wait_hops(&lab, "rail1", "10.2.1.0/24", &BOTH, mend_at);
    wait_hops(&lab, "rail2", "10.1.1.0/24", &BOTH, mend_at);
    let before = uplink_tx(&lab);
    std::thread::sleep(Duration::from_secs(2));
    let after = uplink_tx(&lab);
    let mend = probes.stop();
    let (pair, window) = worst(&mend);
    eprintln!(
        "mend: rail1's group whole again after {} ms; longest loss {window} ms ({pair:?})",
        back.as_millis()
    );
    assert!(
        after.0 > before.0 && after.1 > before.1,
        "rail1 sends over both uplinks again: {before:?} -> {after:?}"
    );
    assert!(
        window < 3_000,
        "{pair:?} lost {window} ms when the cable came back"
    );

    // A failure the carrier does not show: rail1 shuts its port (the veth
    // stays up), so spine1 hears nothing more on a live link and only BFD
    // (300 ms x 3) tells it the session is gone.
    let sw = lab
        .state
        .switches
        .iter()
        .find(|s| s.name == "rail1")
        .unwrap();
    let config = std::fs::read_to_string(&sw.config).unwrap().replace(
        "  bind af-packet e1-31\n  no shutdown\n",
        "  bind af-packet e1-31\n  shutdown\n",
    );
    assert!(config.contains("e1-31\n  shutdown"), "{config}");
    std::fs::write(&sw.config, config).unwrap();
    let probes = Probes::start(&lab, "silent");
    std::thread::sleep(Duration::from_secs(1));
    let shut_at = Instant::now();
    ok(&[
        env!("CARGO_BIN_EXE_railyard"),
        "reload",
        "--socket",
        sw.socket.to_str().unwrap(),
    ]);
    let (detected, diagnostic) =
        wait_for("spine1's BFD to time out", Duration::from_secs(10), || {
            let v = cli(&lab, "spine1", &["show", "bfd", "neighbors"])?;
            let n = v["neighbors"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|n| n["neigh_addr"] == "10.255.1.0")
                .cloned()
                .unwrap_or_default();
            match n["state"].as_str() {
                Some("Up") | None => Err(v.to_string()),
                Some(_) => Ok((
                    shut_at.elapsed(),
                    n["diagnostic"].as_str().unwrap_or("").to_string(),
                )),
            }
        });
    wait_hops(&lab, "rail2", "10.1.1.0/24", &SPINE2, shut_at);
    std::thread::sleep(Duration::from_secs(2));
    let silent = probes.stop();
    let (pair, window) = worst(&silent);
    eprintln!(
        "silent failure: spine1's BFD down after {} ms ({diagnostic}); longest loss {window} ms ({pair:?})",
        detected.as_millis()
    );
    assert!(
        diagnostic.contains("detection time expired"),
        "{diagnostic}"
    );
    assert!(window < 3_000, "{pair:?} lost {window} ms");
}

/// Frames rail1 sent on its two uplinks so far.
fn uplink_tx(lab: &TopoLab) -> (u64, u64) {
    let v = cli(lab, "rail1", &["show", "interface"]).unwrap();
    let tx = |p: &str| v["interfaces"][p]["tx_packets"].as_u64().unwrap_or(0);
    (tx("Ethernet1/31"), tx("Ethernet1/32"))
}

#[test]
#[ignore = "needs root and network namespaces (scripts/test.sh)"]
fn with_static_routes_a_cut_cable_loses_traffic_while_it_is_down() {
    let lab = lab("static");
    every_pair_reachable(&lab, Duration::from_secs(30));
    let (kind, hops) = next_hops(&lab, "rail2", "10.1.1.0/24").unwrap();
    assert_eq!((kind.as_str(), hops.len()), ("static", 2));
    let probes = Probes::start(&lab, "cut");
    std::thread::sleep(Duration::from_secs(1));
    let cut_at = Instant::now();
    cable(&lab, false);
    std::thread::sleep(CUT);
    let cut = probes.stop();
    let down = cut_at.elapsed();
    cable(&lab, true);
    let ((a, b), window) = worst(&cut);
    eprintln!(
        "static cut of {} ms: longest loss {window} ms (h{a} -> h{b}); all: {cut:?}",
        down.as_millis()
    );
    // rail2 still sends half of rail 1's traffic to spine1, which has no
    // other way to rail1: those pairs lose everything while the cable is cut.
    assert!(
        window + 500 >= CUT.as_millis() as u64,
        "no pair lost the whole cut ({window} ms of {} ms)",
        CUT.as_millis()
    );
    let lost_all = cut
        .iter()
        .filter(|(_, ms)| ms + 500 >= CUT.as_millis() as u64)
        .count();
    assert!(lost_all < cut.len(), "some pairs ride spine2 both ways");
}
