//! The `railyard` binary as users run it.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

fn railyard(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(args)
        .output()
        .expect("run railyard")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn demo_runs_and_reports_per_interface_and_queue() {
    let out = railyard(&["demo", "--packets", "2000"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for needle in [
        "Ethernet1/1",
        "Ethernet1/4",
        "Ethernet1/32",
        "ttl_expired",
        "malformed",
        "Egress queues",
    ] {
        assert!(s.contains(needle), "demo output lacks {needle}:\n{s}");
    }
}

#[test]
fn demo_writes_its_plots_where_it_says_and_a_bad_plot_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plots = dir.path().join("plots");
    let p = plots.to_str().unwrap();
    let out = railyard(&["demo", "--packets", "2000", "--plot", p]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains(&format!(" plots in {p}")), "{s}");
    let svg = std::fs::read_to_string(plots.join("queue-Ethernet1_4-q3.svg")).unwrap();
    assert!(svg.contains("queue depth: Ethernet1/4 queue 3"), "{svg}");
    assert!(plots.join("sojourn-Ethernet1_4-q3.svg").exists());
    assert!(plots.join("multipath-10.100.0.0_16.svg").exists());

    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    let f = file.to_str().unwrap();
    let out = railyard(&["demo", "--packets", "200", "--plot", f]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("--plot {f}")),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn demo_counters_conserve_packets() {
    let out = railyard(&["demo", "--packets", "2000", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let ifs = v["interfaces"].as_object().expect("interfaces");
    let sum = |f: &dyn Fn(&serde_json::Value) -> u64| ifs.values().map(f).sum::<u64>();
    let rx = sum(&|i| i["rx_packets"].as_u64().unwrap_or(0));
    let tx = sum(&|i| i["tx_packets"].as_u64().unwrap_or(0));
    let drops = sum(&|i| {
        i["drops"]
            .as_object()
            .map_or(0, |d| d.values().filter_map(|n| n.as_u64()).sum())
    });
    let queued = sum(&|i| {
        i["queues"].as_array().map_or(0, |q| {
            q.iter().filter_map(|q| q["depth_bytes"].as_u64()).sum()
        })
    });
    assert_eq!(queued, 0, "queues drained at the end");
    // The ARP request and the ping are answered: one frame out for each in.
    assert_eq!(rx, tx + drops, "rx {rx} = tx {tx} + drops {drops}");
    assert_eq!(ifs["Ethernet1/3"]["rx_malformed"], 2);
}

#[test]
fn a_bad_config_names_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("bad.conf");
    std::fs::write(
        &conf,
        "hostname x\ninterface Ethernet1/1\n  ip address 10.0.0.1/33\n",
    )
    .unwrap();
    let out = railyard(&["check", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("bad.conf:3:14: error"), "{err}");
    assert!(err.contains("ip address 10.0.0.1/33"), "{err}");
    assert!(err.contains('^'), "{err}");
}

#[test]
fn check_summarises_a_good_config() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("ok.conf");
    std::fs::write(
        &conf,
        "hostname leaf\ninterface e1/1-2\n no switchport\ninterface e1/1\n ip address 10.0.0.1/24\nip route 10.9.0.0/16 10.0.0.2\n",
    )
    .unwrap();
    let out = railyard(&["check", conf.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        s.contains("leaf: 2 interfaces, 1 static route groups"),
        "{s}"
    );
}

#[test]
fn check_shows_warnings_with_errors_and_json_carries_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("mixed.conf");
    std::fs::write(
        &conf,
        "router ospf 1\n  router-id 10.0.0.2\nfeature nv overlay\ninterface e1/1\n  mtu 99999\ninterface e1/2\n  priority-flow-control receive on\n",
    )
    .unwrap();
    let out = railyard(&["check", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let shown: Vec<&str> = err
        .lines()
        .filter(|l| l.contains(": error: ") || l.contains(": warning: "))
        .collect();
    assert_eq!(shown.len(), 5, "{err}");
    assert!(
        err.contains("mixed.conf:1:1: warning: `router ospf` is not modelled"),
        "{err}"
    );
    assert!(err.contains("mixed.conf:5:"), "{err}");
    assert!(
        err.contains("NX-OS has no `priority-flow-control receive`"),
        "{err}"
    );
    let out = railyard(&["check", "--json", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let texts: Vec<String> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            d["text"]
                .as_str()
                .unwrap()
                .lines()
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(texts, shown);
}

#[test]
fn check_reads_router_bgp_and_shows_its_diagnostics() {
    // The sample rail of the RFC 7938 fabric is clean.
    let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config/tests/data/bgp-rail1.conf");
    let out = railyard(&["check", sample.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !text(&out.stderr).contains("warning"),
        "{}",
        text(&out.stderr)
    );
    // `--frr` prints what FRR is given: the golden translation.
    let out = railyard(&["check", "--frr", sample.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/bgp-rail1.frr.conf");
    assert_eq!(text(&out.stdout), std::fs::read_to_string(golden).unwrap());
    // A broken one shows where.
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("bgp.conf");
    std::fs::write(
        &conf,
        "feature bgp\nrouter bgp 65001\n  timers bgp 3 9\n  neighbor 10.0.0.1\n    inherit peer SPINE\n",
    )
    .unwrap();
    let out = railyard(&["check", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("bgp.conf:3:3: warning: router bgp command `timers` is not modelled; skipped"),
        "{err}"
    );
    assert!(
        err.contains("bgp.conf:5:18: error: template peer `SPINE` is not defined"),
        "{err}"
    );
}

#[test]
fn check_collapses_the_switchport_warning() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("l2.conf");
    let mut body = String::new();
    for i in 1..=6 {
        body += &format!("interface Ethernet1/{i}\n  description host {i}\n");
    }
    std::fs::write(&conf, body).unwrap();
    let out = railyard(&["check", conf.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("no switchport"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("6 interfaces have no `no switchport` (Ethernet1/1, Ethernet1/2"),
        "{err}"
    );
    let out = railyard(&["check", "--json", conf.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let w: Vec<&str> = v["compile_warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .filter(|w| w.contains("no switchport"))
        .collect();
    assert_eq!(w.len(), 1, "{v}");
}

fn write_pcap(path: &Path, frames: &[Vec<u8>]) {
    use pcap_file::pcap::{PcapPacket, PcapWriter};
    let mut w = PcapWriter::new(std::fs::File::create(path).unwrap()).unwrap();
    for (i, f) in frames.iter().enumerate() {
        w.write_packet(&PcapPacket::new(
            Duration::from_micros(1_000_000 + i as u64),
            f.len() as u32,
            f,
        ))
        .unwrap();
    }
}

/// Two routed ports; the host behind Ethernet1/2 is resolved statically.
const TWO_PORT_SWITCH: &str = "hostname sw
interface Ethernet1/1
  no switchport
  mac-address 02:00:00:00:01:01
  ip address 10.0.1.1/24
interface Ethernet1/2
  no switchport
  ip address 10.0.2.1/24
  ip arp 10.0.2.2 02:00:00:00:00:02
";

/// UDP from the host behind Ethernet1/1 of [`TWO_PORT_SWITCH`] to the one
/// behind Ethernet1/2.
fn udp_to_port_2() -> railyard_control::traffic::FrameSpec {
    railyard_control::traffic::FrameSpec::udp(
        railyard_dataplane::wire::MacAddr([2, 0, 0, 0, 0, 1]),
        railyard_dataplane::wire::MacAddr([2, 0, 0, 0, 1, 1]),
        "10.0.1.2".parse().unwrap(),
        "10.0.2.2".parse().unwrap(),
    )
}

#[test]
fn replay_writes_per_interface_pcaps_and_stats_json() {
    use railyard_control::traffic::build;
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("sw.conf");
    std::fs::write(&conf, TWO_PORT_SWITCH).unwrap();
    let spec = udp_to_port_2();
    let input = dir.path().join("in.pcap");
    write_pcap(
        &input,
        &(0..50).map(|k| build(&spec, k)).collect::<Vec<_>>(),
    );
    let out_dir = dir.path().join("out");
    let stats = dir.path().join("stats.json");
    let pcap = format!("eth1/1={}", input.display());
    let replay = |extra: &[&str]| {
        let mut args = vec![
            "replay",
            "--config",
            conf.to_str().unwrap(),
            "--pcap",
            &pcap,
            "--out",
            out_dir.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        railyard(&args)
    };
    let out = replay(&["--stats-json", stats.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("replayed 50 frames"),
        "{}",
        text(&out.stdout)
    );
    assert!(out_dir.join("Ethernet1_2.pcap").exists());
    assert!(
        !out_dir.join("Ethernet1_1.pcap").exists(),
        "no file for a port that sent nothing"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(v["interfaces"]["Ethernet1/2"]["tx_packets"], 50);
    // `--open-loop` replays the trace unchanged; nothing pauses here, so
    // the result is the same. So does polling like a live worker.
    for extra in [&["--open-loop"][..], &["--poll-interval", "1us"]] {
        let out = replay(extra);
        assert!(out.status.success(), "{extra:?}: {}", text(&out.stderr));
        assert!(
            text(&out.stdout).contains("replayed 50 frames"),
            "{extra:?}"
        );
    }
    let out = replay(&["--poll-interval", "1ms"]);
    assert_eq!(out.status.code(), Some(2), "a usage error");
    assert!(
        text(&out.stderr).contains("longer than the 100us a replay allows"),
        "{}",
        text(&out.stderr)
    );
    // Dropped frames go only into a pcapng; with one, the summary says how
    // many are there (none here: nothing is dropped).
    let out = replay(&["--capture-drops"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--capture-drops writes into a pcapng: add --out-format pcapng"),
        "{}",
        text(&out.stderr)
    );
    let out = replay(&["--capture-drops", "--out-format", "pcapng"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("dropped frames in the pcapng: 0 "),
        "{}",
        text(&out.stdout)
    );
}

#[test]
fn usage_errors_are_explained() {
    let out = railyard(&[
        "replay",
        "--config",
        "/nonexistent.conf",
        "--pcap",
        "x",
        "--out",
        "/tmp",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("nonexistent.conf"),
        "{}",
        text(&out.stderr)
    );
    let out = railyard(&[
        "show",
        "interface",
        "--socket",
        "/nonexistent/railyard.sock",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("cannot reach a running railyard"),
        "{}",
        text(&out.stderr)
    );
}

/// The demo's rail switch: the book's RoCEv2 QoS policy on six ports.
const BOOK: &str = railyard_control::demo::DEMO_CONFIG;

fn book_file(dir: &Path) -> std::path::PathBuf {
    let conf = dir.join("book.conf");
    std::fs::write(&conf, BOOK).unwrap();
    conf
}

#[test]
fn show_running_config_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let conf = book_file(dir.path());
    let first = railyard(&["show", "running-config", "--config", conf.to_str().unwrap()]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let again_path = dir.path().join("again.conf");
    std::fs::write(&again_path, &first.stdout).unwrap();
    let second = railyard(&[
        "show",
        "running-config",
        "--config",
        again_path.to_str().unwrap(),
    ]);
    assert_eq!(text(&first.stdout), text(&second.stdout));
    assert!(text(&first.stdout).contains("policy-map type queuing QOS_EGRESS_PORT"));
}

#[test]
fn show_class_map_and_policy_maps_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let conf = book_file(dir.path());
    let c = conf.to_str().unwrap();
    let out = railyard(&["show", "class-map", "ROCEv2", "--config", c]);
    assert!(
        text(&out.stdout).contains("    class-map type qos match-any ROCEv2\n      match dscp 24")
    );
    let out = railyard(&["show", "policy-map", "QOS_EGRESS_PORT", "--config", c]);
    let s = text(&out.stdout);
    assert!(
        s.contains("  policy-map type queuing QOS_EGRESS_PORT"),
        "{s}"
    );
    assert!(!s.contains("QOS_CLASSIFICATION"), "{s}");
    let out = railyard(&["show", "policy-map", "interface", "eth1/1", "--config", c]);
    let s = text(&out.stdout);
    assert!(
        s.contains("Service-policy (qos) input:   QOS_CLASSIFICATION"),
        "{s}"
    );
    assert!(
        s.contains("c-out-8q-q-default (match-any)\n      bandwidth remaining percent 100"),
        "{s}"
    );
    let out = railyard(&["show", "policy-map", "NOPE", "--config", c]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("policy-map NOPE is not configured"));
}

#[test]
fn a_route_through_an_unconfigured_interface_is_reported_like_a_parse_error() {
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("lab.conf");
    std::fs::write(
        &conf,
        "interface Ethernet1/1\n  no switchport\nip route 10.3.0.0/16 e1/8\n",
    )
    .unwrap();
    let out = railyard(&["check", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let want = format!(
        "{}:3:22: error: route 10.3.0.0/16 goes through Ethernet1/8, which is not configured\n   \
         3 | ip route 10.3.0.0/16 e1/8\n     |                      ^^^^\n   \
         = hint: add an `interface Ethernet1/8` section",
        conf.display()
    );
    assert!(err.contains(&want), "{err}");
    let out = railyard(&["check", "--json", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], false);
    let e = &v["compile_errors"][0];
    assert_eq!((e["line"].as_u64(), e["col"].as_u64()), (Some(3), Some(22)));
    assert_eq!(e["severity"], "error");
}

#[test]
fn check_json_dumps_diagnostics_and_the_resolved_model() {
    let dir = tempfile::tempdir().unwrap();
    let conf = book_file(dir.path());
    let out = railyard(&["check", "--json", conf.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], true);
    let eq = &v["effective_qos"]["Ethernet1/1"];
    assert_eq!(eq["classifier"]["dscp_table"][24], 3);
    assert_eq!(eq["classifier"]["dscp_table"][48], 7);
    assert_eq!(eq["egress"][7]["priority_level"], 1);
    // Sets of DSCP (and CoS, precedence, groups) read as their values, not bitmasks.
    let matches: Vec<&serde_json::Value> = v["config"]["class_maps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["matches"].as_array().unwrap())
        .collect();
    assert!(
        matches.contains(&&serde_json::json!({"Dscp": [24]})),
        "{matches:?}"
    );
    assert!(eq["lossless"].is_array(), "{}", eq["lossless"]);

    std::fs::write(&conf, BOOK.replace("set qos-group 3", "set qos-group 9")).unwrap();
    let out = railyard(&["check", "--json", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], false);
    // Warnings come with the error, in line order.
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["severity"] == "error")
        .unwrap();
    assert_eq!(d["severity"], "error");
    let line = BOOK
        .lines()
        .position(|l| l.contains("set qos-group 3"))
        .unwrap()
        + 1;
    assert_eq!(d["line"], line);
    assert!(d["message"].as_str().unwrap().contains("qos-group"), "{d}");
}

#[test]
fn demo_shows_the_incast_marked_and_cnps_unhindered() {
    let out = railyard(&["demo", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let q3 = &v["interfaces"]["Ethernet1/4"]["queues"][3];
    assert!(q3["ecn_marked"].as_u64().unwrap() > 1000, "{q3}");
    assert!(q3["max_depth_bytes"].as_u64().unwrap() > 150 * 1024, "{q3}");
    for port in ["Ethernet1/1", "Ethernet1/2", "Ethernet1/3"] {
        let q7 = &v["interfaces"][port]["queues"][7];
        assert_eq!(q7["tx_packets"], 400, "{port}: {q7}");
        assert_eq!(q7["tail_drops"], 0);
        // Closed-loop senders: paused, and nothing lost in the lossless class.
        let i = &v["interfaces"][port];
        assert!(i["pfc"]["tx_pause"][3].as_u64().unwrap() > 0, "{port}: {i}");
        assert_eq!(i["drops"]["ingress_overflow"], 0, "{port}");
    }
    assert_eq!(q3["tail_drops"], 0, "{q3}");
    assert_eq!(q3["wred_drops"], 0, "{q3}");
    let text_out = railyard(&["demo"]);
    let s = text(&text_out.stdout);
    assert!(s.contains("WRED/ECN (150-3000 KB, 7 %) marked"), "{s}");
}

#[test]
fn show_queuing_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let conf = book_file(dir.path());
    let out = railyard(&[
        "show",
        "queuing",
        "interface",
        "e1/1",
        "--config",
        conf.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("Egress Queuing for Ethernet1/1"), "{s}");
    assert!(
        s.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()[..]
                == ["3", "50", "-", "-", "-", "-", "7(D)"]),
        "{s}"
    );
    assert!(
        s.contains("QoS-Group 3: WRED min 153600 bytes max 3072000 bytes"),
        "{s}"
    );
    let out = railyard(&[
        "show",
        "queuing",
        "interface",
        "e1/1",
        "--json",
        "--config",
        conf.to_str().unwrap(),
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["egress"][7]["priority_level"], 1);
}

#[test]
fn show_queuing_has_the_ingress_pfc_table_and_pfc_queue_the_watchdog() {
    let dir = tempfile::tempdir().unwrap();
    let conf = book_file(dir.path());
    let c = conf.to_str().unwrap();
    let out = railyard(&["show", "queuing", "interface", "e1/1", "--config", c]);
    let s = text(&out.stdout);
    assert!(s.contains("Ingress Queuing for Ethernet1/1"), "{s}");
    let row = s
        .lines()
        .skip_while(|l| !l.starts_with("Ingress Queuing"))
        .find(|l| l.trim_start().starts_with("3 "))
        .unwrap_or_default()
        .split_whitespace()
        .map(|v| v.parse::<u64>().unwrap_or(0))
        .collect::<Vec<_>>();
    assert_eq!(row.len(), 4, "{s}");
    assert!(
        row[3] < row[2] && row[2] < row[1],
        "xON < xOFF < buffer: {row:?}"
    );
    let out = railyard(&["show", "queuing", "pfc-queue", "--json", "--config", c]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["interval_ms"], 100);
    assert_eq!(v["interfaces"]["Ethernet1/1"]["watchdog"], true);
    assert_eq!(v["interfaces"]["Ethernet1/1"]["queues"][0]["qos_group"], 3);
    assert_eq!(v["interfaces"]["Ethernet1/1"]["queues"][0]["state"], "ok");
    let out = railyard(&["show", "queuing", "bogus", "--config", c]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("usage: show queuing"));
}

/// A leaf with two GPU ports, two 400 Gb/s uplinks under DLB, a hashed
/// 2-way group, a DLB 2-way group (IPv4 and IPv6), Null0, and the hash
/// seed and rotation set.
const LB_CONF: &str = "hostname leaf1
interface Ethernet1/1
  no switchport
  speed 100000
  ip address 10.0.1.1/24
interface Ethernet1/2
  no switchport
  ip address 10.0.2.1/24
interface Ethernet1/31
  no switchport
  speed 400000
  ip address 10.0.100.1/30
  ipv6 address 2001:db8:100::1/64
interface Ethernet1/32
  no switchport
  speed 400000
  ip address 10.0.101.1/30
  ipv6 address 2001:db8:101::1/64
ip route 10.0.9.0/24 10.0.100.2
ip route 10.0.9.0/24 10.0.101.2
ip route 10.0.8.0/24 10.0.1.2
ip route 10.0.8.0/24 10.0.2.2
ip route 172.16.0.0/12 Null0
ipv6 route 2001:db8:9::/48 2001:db8:100::2
ipv6 route 2001:db8:9::/48 2001:db8:101::2
hardware profile dlb
  dlb-interface Ethernet1/31, Ethernet1/32
  flowlet-aging 256
  dre-thresholds level-1 10 level-2 20 level-3 30 level-4 40 level-5 50 level-6 60 level-7 70
ip load-sharing address source-destination port source-destination universal-id 12345 rotate 7
";

fn lb_file(dir: &Path) -> std::path::PathBuf {
    let conf = dir.join("lb.conf");
    std::fs::write(&conf, LB_CONF).unwrap();
    conf
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("json")
}

#[test]
fn show_ip_route_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let conf = lb_file(dir.path());
    let c = conf.to_str().unwrap();
    let out = railyard(&["show", "ip", "route", "--config", c]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.starts_with("IP Route Table for VRF \"default\"\n"), "{s}");
    for needle in [
        "10.0.1.0/24, ubest/mbest: 1/0, attached\n    *via 10.0.1.1, Eth1/1, [0/0], direct\n",
        "10.0.1.1/32, ubest/mbest: 1/0, attached\n    *via 10.0.1.1, Eth1/1, [0/0], local\n",
        "10.0.8.0/24, ubest/mbest: 2/0\n    *via 10.0.1.2, Eth1/1, [1/0], static\n    *via 10.0.2.2, Eth1/2, [1/0], static\n    load-balancing: ecmp (hash, 512 resilient buckets)\n",
        "10.0.9.0/24, ubest/mbest: 2/0\n    *via 10.0.100.2, Eth1/31, [1/0], static\n    *via 10.0.101.2, Eth1/32, [1/0], static\n    load-balancing: flowlet (DLB), virtual next-hop MAC 00cc.cccc.cccc\n",
        "172.16.0.0/12, ubest/mbest: 1/0\n    *via Null0, [1/0], static\n",
    ] {
        assert!(s.contains(needle), "lacks {needle:?}:\n{s}");
    }
    // Sorted by prefix: 10.0.9.0 before 10.0.100.0 before 172.16.
    let order: Vec<usize> = ["10.0.9.0/24", "10.0.100.0/30", "172.16.0.0/12"]
        .iter()
        .map(|p| s.find(p).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{s}");
    assert!(!s.contains("2001:db8"), "IPv4 only: {s}");

    let v = json_of(&railyard(&["show", "ip", "route", "--json", "--config", c]));
    assert_eq!(v["vrf"], "default");
    let routes = v["routes"].as_array().unwrap();
    let g = routes
        .iter()
        .find(|r| r["prefix"] == "10.0.9.0/24")
        .unwrap();
    assert_eq!(g["kind"], "static");
    assert_eq!(g["mode"], "flowlet");
    assert_eq!(g["dlb_mac"], "00:cc:cc:cc:cc:cc");
    assert_eq!(g["next_hops"][0]["address"], "10.0.100.2");
    assert_eq!(g["next_hops"][0]["interface"], "Ethernet1/31");
    assert!(
        g["next_hops"][0]["buckets"].is_null(),
        "DLB picks by quality"
    );
    assert!(
        g["next_hops"][0]["packets"].is_null(),
        "no counters from a file"
    );
    let e = routes
        .iter()
        .find(|r| r["prefix"] == "10.0.8.0/24")
        .unwrap();
    assert_eq!(e["mode"], "ecmp");
    assert!(e["dlb_mac"].is_null());
    assert_eq!(e["next_hops"][1]["buckets"], 256);
    let l = routes
        .iter()
        .find(|r| r["prefix"] == "10.0.1.1/32")
        .unwrap();
    assert_eq!(l["kind"], "local");
    let n = routes
        .iter()
        .find(|r| r["prefix"] == "172.16.0.0/12")
        .unwrap();
    assert_eq!(n["next_hops"][0]["interface"], "Null0");

    let out = railyard(&["show", "ipv6", "route", "--config", c]);
    let s = text(&out.stdout);
    assert!(
        s.starts_with("IPv6 Routing Table for VRF \"default\"\n"),
        "{s}"
    );
    assert!(
        s.contains("2001:db8:9::/48, ubest/mbest: 2/0\n    *via 2001:db8:100::2, Eth1/31, [1/0], static\n    *via 2001:db8:101::2, Eth1/32, [1/0], static\n    load-balancing: flowlet (DLB)"),
        "{s}"
    );
    assert!(
        s.contains("2001:db8:100::1/128, ubest/mbest: 1/0, attached\n    *via 2001:db8:100::1, Eth1/31, [0/0], local\n"),
        "{s}"
    );
    assert!(!s.contains("10.0."), "IPv6 only: {s}");
    let v = json_of(&railyard(&[
        "show", "ipv6", "route", "--json", "--config", c,
    ]));
    assert_eq!(v["routes"][0]["prefix"], "2001:db8:9::/48");
}

#[test]
fn show_ip_load_sharing_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let conf = lb_file(dir.path());
    let c = conf.to_str().unwrap();
    let out = railyard(&["show", "ip", "load-sharing", "--config", c]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for needle in [
        "IPv4/IPv6 ECMP load sharing:\n",
        "Universal-id (Random Seed): 12345\n",
        "Load-share mode : address source-destination port source-destination\n",
        "Concatenation : disabled",
        "Rotate : 7\n",
        "RoCEv2 dest-QP : disabled (railyard extension)\n",
        "DLB : flowlet on Ethernet1/31, Ethernet1/32; 2 of 3 multipath groups dynamic\n",
    ] {
        assert!(s.contains(needle), "lacks {needle:?}:\n{s}");
    }
    let v = json_of(&railyard(&[
        "show",
        "ip",
        "load-sharing",
        "--json",
        "--config",
        c,
    ]));
    assert_eq!(v["universal_id"], 12345);
    assert_eq!(v["universal_id_configured"], true);
    assert_eq!(v["rotate"], 7);
    assert_eq!(v["concatenation"], false);
    assert_eq!(v["src_port"], true);
    assert_eq!(v["dlb"]["mode"], "flowlet");
    assert_eq!(v["dlb"]["dlb_groups"], 2);

    // No `ip load-sharing`: the seed comes from the hostname.
    let bare = dir.path().join("bare.conf");
    std::fs::write(
        &bare,
        "hostname leaf1\ninterface Ethernet1/1\n  no switchport\n  ip address 10.0.1.1/24\nip load-sharing address source-destination concatenation rocev2-dest-qp\n",
    )
    .unwrap();
    let out = railyard(&[
        "show",
        "ip",
        "load-sharing",
        "--config",
        bare.to_str().unwrap(),
    ]);
    let s = text(&out.stdout);
    let seed = railyard_control::compile::default_universal_id("leaf1");
    assert!(
        s.contains(&format!(
            "Universal-id (Random Seed): {seed} (derived from hostname)\n"
        )),
        "{s}"
    );
    assert!(
        s.contains("Load-share mode : address source-destination\n"),
        "{s}"
    );
    assert!(s.contains("Concatenation : enabled"), "{s}");
    assert!(s.contains("RoCEv2 dest-QP : enabled"), "{s}");
    assert!(s.contains("DLB : not configured\n"), "{s}");
}

#[test]
fn show_hardware_profile_dlb_from_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let conf = lb_file(dir.path());
    let c = conf.to_str().unwrap();
    let out = railyard(&["show", "hardware", "profile", "dlb", "--config", c]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    for needle in [
        "  Mode                : flowlet\n",
        "  Flowlet aging       : 256 us\n",
        "  DRE thresholds      : level-1 10%, level-2 20%, level-3 30%, level-4 40%, level-5 50%, level-6 60%, level-7 70%\n",
        "  Decay factor        : 2 (time constant 64.0 us)\n",
        "  Sampling interval   : 16000 ns\n",
        "  Load awareness      : enabled\n",
        "  Flowlet table size  : 4096 entries\n",
        "  DLB MAC             : 00cc.cccc.cccc",
        "  DLB interfaces      : Ethernet1/31 (400 Gb/s), Ethernet1/32 (400 Gb/s)\n",
        "DLB group 10.0.9.0/24 (flowlet)\n",
        "DLB group 2001:db8:9::/48 (flowlet)\n",
        "Group 10.0.8.0/24 is hashed (ECMP), not DLB: members Ethernet1/1, Ethernet1/2 are not dlb-interfaces",
    ] {
        assert!(s.contains(needle), "lacks {needle:?}:\n{s}");
    }
    let row: Vec<&str> = s
        .lines()
        .find(|l| l.trim_start().starts_with("Ethernet1/31   10.0.100.2"))
        .unwrap_or_default()
        .split_whitespace()
        .collect();
    assert_eq!(
        row,
        ["Ethernet1/31", "10.0.100.2", "-", "-", "-", "-"],
        "{s}"
    );

    let v = json_of(&railyard(&[
        "show", "hardware", "profile", "dlb", "--json", "--config", c,
    ]));
    assert_eq!(v["configured"], true);
    assert_eq!(v["mode"], "flowlet");
    assert_eq!(v["flowlet_aging_us"], 256);
    assert_eq!(v["dre_thresholds"][6], 70);
    assert_eq!(v["decay_factor"], 2);
    assert_eq!(v["sampling_interval_ns"], 16000);
    assert_eq!(v["flowlet_table_size"], 4096);
    assert_eq!(v["mac_address"], "00:cc:cc:cc:cc:cc");
    assert_eq!(v["interfaces"][0]["name"], "Ethernet1/31");
    assert_eq!(v["interfaces"][0]["speed_mbps"], 400000);
    assert_eq!(v["groups"][0]["prefix"], "10.0.9.0/24");
    assert_eq!(v["groups"][0]["members"][1]["address"], "10.0.101.2");
    assert!(v["groups"][0]["counters"].is_null());
    assert_eq!(v["live"], false);

    // Without DLB: one line, exit 0.
    let book = book_file(dir.path());
    let b = book.to_str().unwrap();
    let out = railyard(&["show", "hardware", "profile", "dlb", "--config", b]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout).lines().count(),
        1,
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).starts_with("DLB is not configured"));
    let v = json_of(&railyard(&[
        "show", "hardware", "profile", "dlb", "--json", "--config", b,
    ]));
    assert_eq!(v, serde_json::json!({ "configured": false }));
}

#[test]
fn load_balancing_show_commands_explain_wrong_words() {
    let dir = tempfile::tempdir().unwrap();
    let conf = lb_file(dir.path());
    let c = conf.to_str().unwrap();
    for (args, hint) in [
        (
            &["show", "ip", "routes"][..],
            "possible values: route, load-sharing",
        ),
        (
            &["show", "ipv6", "load-sharing"][..],
            "possible values: route",
        ),
        (
            &["show", "hardware", "profile", "pfc"][..],
            "possible values: dlb",
        ),
        (&["show", "hardware", "dlb"][..], "possible values: profile"),
    ] {
        let out = railyard(&[args, &["--config", c]].concat());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(hint), "{args:?}: {err}");
    }
    // Asked of a switch that is not running: says so.
    let out = railyard(&[
        "show",
        "ip",
        "route",
        "--socket",
        "/nonexistent/railyard.sock",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot reach a running railyard"));
}

/// Where `needle` first appears in `hay`, for order checks.
fn pos(hay: &str, needle: &str) -> usize {
    hay.find(needle)
        .unwrap_or_else(|| panic!("{needle} not in:\n{hay}"))
}

#[test]
fn interfaces_are_listed_in_natural_order_in_text_and_json() {
    let out = railyard(&["demo", "--packets", "200", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(
        pos(&s, "\"Ethernet1/4\"") < pos(&s, "\"Ethernet1/31\""),
        "{s}"
    );
    assert!(
        pos(&s, "\"Ethernet1/31\"") < pos(&s, "\"Ethernet1/32\""),
        "{s}"
    );
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("sw.conf");
    std::fs::write(
        &conf,
        "hostname sw\ninterface Ethernet1/32\n  no switchport\ninterface Ethernet1/4\n  no switchport\n",
    )
    .unwrap();
    let c = conf.to_str().unwrap();
    for json in [false, true] {
        let mut args = vec!["show", "queuing", "pfc-queue", "--config", c];
        if json {
            args.push("--json");
        }
        let out = railyard(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let s = text(&out.stdout);
        assert!(pos(&s, "Ethernet1/4") < pos(&s, "Ethernet1/32"), "{s}");
    }
}

/// A pipe whose reading end is already closed, as standard output, so the
/// first write fails with `EPIPE` whatever the timing.
fn closed_pipe() -> std::process::Stdio {
    use std::os::fd::{FromRawFd, OwnedFd};
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2(2) writes.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors are fresh from pipe2(2) and owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    std::process::Stdio::from(write)
}

#[test]
fn a_closed_stdout_ends_quietly_and_successfully() {
    let dir = tempfile::tempdir().unwrap();
    let conf = book_file(dir.path());
    let c = conf.to_str().unwrap();
    for args in [
        &["demo", "--packets", "200"][..],
        &["demo", "--packets", "200", "--json"],
        &["show", "running-config", "--config", c],
        &["show", "queuing", "interface", "e1/4", "--config", c],
        &["show", "queuing", "pfc-queue", "--json", "--config", c],
        &["check", c],
        &["check", "--json", c],
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
            .args(args)
            .stdout(closed_pipe())
            .output()
            .expect("run railyard");
        assert!(out.status.success(), "{args:?}: {:?}", out.status);
        // Nothing about the closed pipe; `check` still reports the book
        // configuration's own warnings (its default pause thresholds sit
        // inside the WRED band), which go to stderr.
        let err = text(&out.stderr);
        assert!(
            err.lines().all(|l| l.starts_with("warning: ")),
            "{args:?}: {err}"
        );
        if args[0] != "check" {
            assert_eq!(err, "", "{args:?}");
        }
    }
    // Other errors are still reported.
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(["show", "running-config", "--config", "/nonexistent.conf"])
        .stdout(closed_pipe())
        .output()
        .expect("run railyard");
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("nonexistent.conf"));
}

/// Writes `frames` (virtual time in ns, frame) as a nanosecond pcap.
fn write_timed_pcap(path: &Path, frames: &[(u64, Vec<u8>)]) {
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    use pcap_file::TsResolution;
    let header = PcapHeader {
        ts_resolution: TsResolution::NanoSecond,
        ..PcapHeader::default()
    };
    let mut w = PcapWriter::with_header(std::fs::File::create(path).unwrap(), header).unwrap();
    let mut frames = frames.to_vec();
    frames.sort_by_key(|(t, _)| *t);
    for (t, f) in &frames {
        w.write_packet(&PcapPacket::new(
            Duration::from_nanos(1_000_000_000 + t),
            f.len() as u32,
            f,
        ))
        .unwrap();
    }
}

/// The demo's rail switch with small pause thresholds, so a short incast
/// pauses its senders, and Ethernet1/2 (a sender's port too) left in
/// `priority-flow-control mode auto` (the default): with no DCBX peer in a
/// replay, PFC is off there.
fn paused_rail_conf() -> String {
    let with_thresholds = BOOK.replace(
        "policy-map type network-qos qos_network",
        "policy-map type queuing IN\n  class type queuing c-in-q3\n    pause buffer-size 60000 pause-threshold 15000 resume-threshold 7500\npolicy-map type network-qos qos_network",
    )
    .replace(
        "system qos\n",
        "system qos\n  service-policy type queuing input IN\n",
    );
    let (head, tail) = with_thresholds.split_once("interface Ethernet1/2").unwrap();
    let (e2, rest) = tail.split_once("interface Ethernet1/3").unwrap();
    format!(
        "{head}interface Ethernet1/2{}interface Ethernet1/3{rest}",
        e2.replace("  priority-flow-control mode on\n", "")
    )
}

#[test]
fn replay_counters_are_read_by_every_show_command() {
    let dir = tempfile::tempdir().unwrap();
    let conf_text = paused_rail_conf();
    let conf = dir.path().join("rail.conf");
    std::fs::write(&conf, &conf_text).unwrap();
    let parsed = railyard_config::parse_str(&conf_text, "rail.conf", &Default::default()).unwrap();
    let sw = railyard_control::compile::compile(&parsed.config).unwrap();
    let trace = railyard_control::demo::demo_trace(&sw, 400);
    let mut args = vec![
        "replay".to_string(),
        "--config".into(),
        conf.display().to_string(),
        "--out".into(),
        dir.path().join("out").display().to_string(),
    ];
    for (i, frames) in trace.iter().enumerate() {
        let pcap = dir.path().join(format!("in{i}.pcap"));
        write_timed_pcap(&pcap, frames);
        args.push("--pcap".into());
        args.push(format!("Ethernet1/{}={}", i + 1, pcap.display()));
    }
    let stats = dir.path().join("stats.json");
    let s = stats.to_str().unwrap();
    args.extend(["--stats-json".into(), s.to_string()]);
    let out = railyard(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    // Where the frames went, what was sent, and PFC, in the summary.
    assert!(summary.contains(" punted to the switch, "), "{summary}");
    assert!(summary.contains("the switch's own ("), "{summary}");
    let pfc_line = summary
        .lines()
        .find(|l| l.starts_with("PFC: "))
        .unwrap_or_else(|| panic!("no PFC line:\n{summary}"));
    let sent: u64 = pfc_line["PFC: ".len()..]
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(sent > 0, "{summary}");
    assert!(
        summary.lines().any(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            w.len() == 10 && w[0] == "Ethernet1/1" && w[1] == "3" && w[2] != "0"
        }),
        "a PFC row for Ethernet1/1 priority 3:\n{summary}"
    );
    assert!(summary.contains(&format!("--stats {s}")), "{summary}");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert_eq!(v["summary"]["pfc_sent"], sent);
    assert!(
        v["interfaces"]["Ethernet1/4"]["tx_packets"]
            .as_u64()
            .unwrap()
            > 0
    );

    // show interface priority-flow-control from the replay's counters.
    let show = |words: &[&str]| {
        let mut a = vec!["show"];
        a.extend_from_slice(words);
        a.extend_from_slice(&["--stats", s]);
        railyard(&a)
    };
    let out = show(&["interface", "priority-flow-control"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let row = |name: &str| -> Vec<String> {
        t.lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no {name}:\n{t}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let e1 = row("Ethernet1/1");
    assert_eq!(e1[1..4], ["On", "On", "(8)"], "{t}");
    assert!(e1[5].parse::<u64>().unwrap() > 0, "TxPPP: {t}");
    // `auto` without a DCBX peer: off, so no pause although it was sent the
    // same incast as Ethernet1/1.
    assert_eq!(row("Ethernet1/2")[1..], ["Auto", "Off", "0", "0"], "{t}");
    let out = show(&["interface", "priority-flow-control", "--json"]);
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(j["interfaces"]["Ethernet1/1"]["mode"], "on");
    assert_eq!(j["interfaces"]["Ethernet1/1"]["oper"], "on");
    assert_eq!(j["interfaces"]["Ethernet1/2"]["mode"], "auto");
    assert_eq!(j["interfaces"]["Ethernet1/2"]["oper"], "off");
    assert_eq!(j["interfaces"]["Ethernet1/2"]["enabled"], 0);
    assert!(
        j["interfaces"]["Ethernet1/1"]["tx_pause"][3]
            .as_u64()
            .unwrap()
            > 0
    );

    // show queuing interface with its counters and PFC statistics.
    let out = show(&["queuing", "interface", "e1/1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    assert!(t.contains("QOS GROUP 7"), "{t}");
    assert!(!t.contains("(counters:"), "{t}");
    let txppp: u64 = t
        .lines()
        .find_map(|l| l.strip_prefix("TxPPP:"))
        .and_then(|r| r.split(',').next())
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no TxPPP:\n{t}"));
    assert!(txppp > 0, "{t}");
    let out = show(&["policy-map", "interface", "e1/4"]);
    assert!(
        text(&out.stdout).contains("queue transmit pkts: "),
        "{}",
        text(&out.stdout)
    );
    assert!(text(&out.stdout).contains("Global statistics status :   enabled"));

    // Every other show takes the file too (its configuration is inside).
    for words in [
        &["interface"][..],
        &["interface", "e1/4", "--json"],
        &["running-config"],
        &["class-map"],
        &["policy-map"],
        &["queuing", "pfc-queue"],
        &["ip", "route"],
        &["ip", "load-sharing"],
        &["ipv6", "route"],
        &["hardware", "profile", "dlb"],
    ] {
        let out = show(words);
        assert!(out.status.success(), "{words:?}: {}", text(&out.stderr));
        assert!(!out.stdout.is_empty(), "{words:?}");
    }
    let out = show(&["running-config"]);
    assert!(text(&out.stdout).contains("pause-threshold 15000"));
    // The replay's LLDP agent heard no neighbour in this trace.
    let out = show(&["lldp", "neighbors"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("Total entries displayed: 0"),
        "{}",
        text(&out.stdout)
    );
    // A configuration file alone has no counters to show.
    let out = railyard(&["show", "interface", "--config", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("--stats FILE"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn demo_json_carries_the_summary_and_the_shows_read_it() {
    let out = railyard(&["demo", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let s = &v["summary"];
    let n = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("summary.{k}: {s}"));
    assert_eq!(n("sent"), n("forwarded") + n("originated"), "{s}");
    assert_eq!(
        n("received"),
        n("forwarded") + n("punted") + n("dropped"),
        "{s}"
    );
    assert_eq!((n("punted"), n("dropped")), (2, 3), "{s}");
    // The switch's own: PFC frames, and the ARP reply and the echo reply.
    assert_eq!(n("originated"), n("pfc_sent") + 2, "{s}");
    assert!(n("pfc_sent") > 0, "{s}");
    let pfc = s["pfc"].as_array().unwrap();
    assert!(
        pfc.iter()
            .any(|l| l["interface"] == "Ethernet1/1" && l["priority"] == 3),
        "{s}"
    );
    let narrative = v["narrative"].as_str().unwrap();
    for needle in [
        "33.8 Gb/s on the wire",
        "101.3 Gb/s",
        "inter-frame gap 12",
        "Ethernet1/1 sent 410, the 400 CNPs",
        "2 answers to the 2 frames it punted",
    ] {
        assert!(narrative.contains(needle), "{needle}:\n{narrative}");
    }
    // The same words in the text demo.
    let t = text(&railyard(&["demo"]).stdout);
    assert!(t.contains(" punted to the switch, 3 dropped;"), "{t}");
    assert!(t.contains("Why a queue, when 3 x 33 = 99 Gb/s"), "{t}");
    assert!(t.contains("\nPFC: "), "{t}");

    // Saved, the demo's JSON is a snapshot the shows read.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.json");
    std::fs::write(&file, &out.stdout).unwrap();
    let f = file.to_str().unwrap();
    let out = railyard(&["show", "queuing", "interface", "e1/4", "--stats", f]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t = text(&out.stdout);
    let marked = t
        .lines()
        .filter(|l| l.contains("ECN Marked Pkts"))
        .filter_map(|l| {
            l.trim_end_matches('|')
                .rsplit('|')
                .next()?
                .trim()
                .parse::<u64>()
                .ok()
        })
        .max();
    assert!(marked > Some(1000), "queue 3's marks: {t}");
    let out = railyard(&["show", "interface", "priority-flow-control", "--stats", f]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout)
        .lines()
        .any(|l| l.starts_with("Ethernet1/4 ") && l.split_whitespace().nth(1) == Some("On")));
}

#[test]
fn replay_reports_damage_time_going_back_and_interface_choice_without_colour() {
    use railyard_control::traffic::build;
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("sw.conf");
    std::fs::write(&conf, TWO_PORT_SWITCH).unwrap();
    let spec = udp_to_port_2();
    // Record 3 was captured before record 2.
    let input = dir.path().join("in.pcap");
    {
        use pcap_file::pcap::{PcapPacket, PcapWriter};
        let mut w = PcapWriter::new(std::fs::File::create(&input).unwrap()).unwrap();
        for (k, us) in [10u64, 30, 20, 40, 50].iter().enumerate() {
            let f = build(&spec, k as u64);
            w.write_packet(&PcapPacket::new(
                Duration::from_micros(1_000_000 + us),
                f.len() as u32,
                &f,
            ))
            .unwrap();
        }
    }
    let out_dir = dir.path().join("out");
    let replay = |pcap: &str, extra: &[&str], no_color: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_railyard"));
        cmd.args([
            "replay",
            "--config",
            conf.to_str().unwrap(),
            "--pcap",
            pcap,
            "--out",
            out_dir.to_str().unwrap(),
        ])
        .args(extra);
        if no_color {
            cmd.env("NO_COLOR", "1");
        } else {
            cmd.env_remove("NO_COLOR");
        }
        cmd.output().expect("run railyard")
    };
    let pcap = format!("eth1/1={}", input.display());
    for no_color in [false, true] {
        let out = replay(&pcap, &[], no_color);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.contains("timestamp earlier than the record before"),
            "{err}"
        );
        assert!(err.contains("record=3"), "{err}");
        assert!(!err.contains('\x1b'), "colour escapes on a pipe: {err:?}");
        assert!(text(&out.stdout).contains("replayed 5 frames"));
    }

    // A classic pcap has one interface.
    let out = replay(&format!("{pcap}@1"), &[], true);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("single interface"),
        "{}",
        text(&out.stderr)
    );

    // `bind pcap FILE@N` in the configuration picks an interface the same way.
    let bound = dir.path().join("bound.conf");
    let bind = |pick: &str| {
        let c = std::fs::read_to_string(&conf).unwrap().replacen(
            "interface Ethernet1/1\n",
            &format!(
                "interface Ethernet1/1\n  bind pcap {}{pick}\n",
                input.display()
            ),
            1,
        );
        std::fs::write(&bound, c).unwrap();
        railyard(&[
            "replay",
            "--config",
            bound.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ])
    };
    let out = bind("@0");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("replayed 5 frames"));
    let out = bind("@1");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("single interface"),
        "{}",
        text(&out.stderr)
    );

    // Cut inside the fourth record: an error naming it, unless told to stop there.
    let bytes = std::fs::read(&input).unwrap();
    let record = 16 + build(&spec, 0).len();
    let cut = dir.path().join("cut.pcap");
    std::fs::write(&cut, &bytes[..24 + 3 * record + 30]).unwrap();
    let pcap = format!("eth1/1={}", cut.display());
    let out = replay(&pcap, &[], true);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("record 4 at byte offset {}", 24 + 3 * record)),
        "{err}"
    );
    assert!(err.contains("--truncated ok"), "{err}");
    let out = replay(&pcap, &["--truncated", "ok"], true);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let s = text(&out.stdout);
    assert!(s.contains("replayed 4 frames"), "{s}");
    assert!(s.contains("capture_damaged"), "{s}");
}

/// The book's RoCEv2 switch with LLDP on and Ethernet1/1 in
/// `priority-flow-control mode auto`: PFC there waits for a DCBX peer.
const AUTO_PFC_SWITCH: &str = "hostname leaf1
feature lldp
class-map type qos match-any ROCEv2
  match dscp 24
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
policy-map type network-qos qos_network
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
system qos
  service-policy type network-qos qos_network
interface Ethernet1/1
  no switchport
  mtu 9216
  ip address 10.0.0.1/31
  priority-flow-control mode auto
  service-policy type qos input QOS_CLASSIFICATION
";

/// Replays `frames` into Ethernet1/1 of [`AUTO_PFC_SWITCH`]; returns the
/// stats file.
fn replay_lldp(dir: &Path, frames: &[Vec<u8>]) -> std::path::PathBuf {
    let conf = dir.join("sw.conf");
    std::fs::write(&conf, AUTO_PFC_SWITCH).unwrap();
    let input = dir.join("in.pcap");
    write_pcap(&input, frames);
    let stats = dir.join("stats.json");
    let out = railyard(&[
        "replay",
        "--config",
        conf.to_str().unwrap(),
        "--pcap",
        &format!("Ethernet1/1={}", input.display()),
        "--out",
        dir.join("out").to_str().unwrap(),
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    stats
}

#[test]
fn replay_hears_the_lldp_peers_in_a_trace_and_negotiates_dcbx() {
    use railyard_lldp::fixture::peer_frame;
    use railyard_lldp::wire::PfcRepr;
    let peer = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
    // A peer that is not willing and runs PFC on priority 3: a `mode auto`
    // port (willing) takes its set.
    let pfc = PfcRepr {
        willing: false,
        mbc: false,
        cap: 8,
        enable: 0x08,
    }
    .to_org_tlv()
    .unwrap();
    let with_dcbx = tempfile::tempdir().unwrap();
    let stats = replay_lldp(
        with_dcbx.path(),
        &[peer_frame(peer, "swp7", 120, vec![pfc])],
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    let e1 = &v["interfaces"]["Ethernet1/1"];
    assert_eq!(e1["punted"], 1, "{e1}");
    assert_eq!(e1["drops"]["local_unhandled"], 0, "{e1}");
    assert_eq!(
        e1["pfc"]["enabled"], 0x08,
        "DCBX put PFC {{3}} in force: {e1}"
    );
    let neighbors = railyard(&[
        "show",
        "lldp",
        "neighbors",
        "--stats",
        stats.to_str().unwrap(),
    ]);
    assert!(neighbors.status.success(), "{}", text(&neighbors.stderr));
    let s = text(&neighbors.stdout);
    assert!(s.contains("swp7") && s.contains("Eth1/1"), "{s}");
    let dcbx = railyard(&[
        "show",
        "lldp",
        "dcbx",
        "interface",
        "Ethernet1/1",
        "--json",
        "--stats",
        stats.to_str().unwrap(),
    ]);
    assert!(dcbx.status.success(), "{}", text(&dcbx.stderr));
    let d: serde_json::Value = serde_json::from_slice(&dcbx.stdout).unwrap();
    assert_eq!(d["dcbx"]["operational"]["pfc"], 0x08, "{d}");
    assert_eq!(d["dcbx"]["operational"]["pfc_source"], "peer", "{d}");

    // The same peer without DCBX: `mode auto` stays off.
    let without = tempfile::tempdir().unwrap();
    let stats = replay_lldp(without.path(), &[peer_frame(peer, "swp7", 120, vec![])]);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&stats).unwrap()).unwrap();
    assert_eq!(v["interfaces"]["Ethernet1/1"]["pfc"]["enabled"], 0);

    // The demo runs no agent, and says so.
    let demo = tempfile::tempdir().unwrap();
    let demo_json = demo.path().join("demo.json");
    let out = railyard(&["demo", "--packets", "200", "--json"]);
    assert!(out.status.success());
    std::fs::write(&demo_json, &out.stdout).unwrap();
    let none = railyard(&[
        "show",
        "lldp",
        "neighbors",
        "--stats",
        demo_json.to_str().unwrap(),
    ]);
    assert!(!none.status.success());
    assert!(
        text(&none.stderr).contains("holds no LLDP agent's view"),
        "{}",
        text(&none.stderr)
    );
}

#[test]
fn run_refuses_a_metrics_address_in_use_before_opening_any_port() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = taken.local_addr().expect("addr").to_string();
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("sw.conf");
    // The port's backend does not exist: had the switch got that far, it
    // would fail on the port instead.
    std::fs::write(
        &conf,
        "hostname m\ninterface Ethernet1/1\n  no switchport\n  bind af-packet ry-no-such0\n",
    )
    .expect("write config");
    let socket = dir.path().join("sw.sock");
    let out = railyard(&[
        "run",
        "--config",
        conf.to_str().expect("path"),
        "--socket",
        socket.to_str().expect("path"),
        "--metrics",
        &addr,
    ]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(
        err.contains(&format!("metrics address {addr}: cannot listen")),
        "{err}"
    );
    // A malformed address is refused by the argument parser.
    let out = railyard(&["run", "--config", "x.conf", "--metrics", "localhost"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--metrics"),
        "{}",
        text(&out.stderr)
    );
}
