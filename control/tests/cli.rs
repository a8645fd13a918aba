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

#[test]
fn replay_writes_per_interface_pcaps_and_stats_json() {
    use railyard_control::traffic::{build, FrameSpec};
    use railyard_dataplane::wire::MacAddr;
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("sw.conf");
    std::fs::write(
        &conf,
        "hostname sw
interface Ethernet1/1
  no switchport
  mac-address 02:00:00:00:01:01
  ip address 10.0.1.1/24
interface Ethernet1/2
  no switchport
  ip address 10.0.2.1/24
  ip arp 10.0.2.2 02:00:00:00:00:02
",
    )
    .unwrap();
    let spec = FrameSpec::udp(
        MacAddr([2, 0, 0, 0, 0, 1]),
        MacAddr([2, 0, 0, 0, 1, 1]),
        "10.0.1.2".parse().unwrap(),
        "10.0.2.2".parse().unwrap(),
    );
    let input = dir.path().join("in.pcap");
    write_pcap(
        &input,
        &(0..50).map(|k| build(&spec, k)).collect::<Vec<_>>(),
    );
    let out_dir = dir.path().join("out");
    let stats = dir.path().join("stats.json");
    let out = railyard(&[
        "replay",
        "--config",
        conf.to_str().unwrap(),
        "--pcap",
        &format!("eth1/1={}", input.display()),
        "--out",
        out_dir.to_str().unwrap(),
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
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
    // the result is the same.
    let out = railyard(&[
        "replay",
        "--config",
        conf.to_str().unwrap(),
        "--pcap",
        &format!("eth1/1={}", input.display()),
        "--out",
        out_dir.to_str().unwrap(),
        "--open-loop",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("replayed 50 frames"));
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

    std::fs::write(&conf, BOOK.replace("set qos-group 3", "set qos-group 9")).unwrap();
    let out = railyard(&["check", "--json", conf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], false);
    let d = &v["diagnostics"][0];
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
