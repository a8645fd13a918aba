//! `railyard run --metrics`: a live switch's `/metrics` checked by
//! Prometheus's own tools. Two hosts in network namespaces ping through
//! the switch; `promtool check metrics` judges the exposition, and a
//! Prometheus server scraping the switch every second answers queries with
//! the counters the traffic moved.
//!
//! The switch, the Prometheus server and every HTTP request live in the
//! switch's namespace; each test removes its namespaces and stops what it
//! started by PID.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{in_netns, ok, wait_for, Daemon, Lab, Switch};

const CONFIG: &str = "hostname metricsw
interface Ethernet1/1
  no switchport
  ip address 10.93.1.1/24
  ipv6 address fd00:93:1::1/64
  bind af-packet p1
interface Ethernet1/2
  no switchport
  ip address 10.93.2.1/24
  ipv6 address fd00:93:2::1/64
  bind af-packet p2
";

/// Echo requests h1 sends to h2 through the switch.
const PINGS: u64 = 20;

/// A free TCP port on 127.0.0.1 in namespace `ns`.
fn free_port(ns: &str) -> u16 {
    in_netns(ns, || {
        TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("free port")
    })
    .join()
    .expect("free port")
}

/// `GET path` from 127.0.0.1:port in namespace `ns`: the status and body.
fn get(ns: &str, port: u16, path: &str) -> Result<(u16, String), String> {
    let path = path.to_string();
    in_netns(ns, move || {
        let mut c = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        c.set_read_timeout(Some(Duration::from_secs(10)))
            .map_err(|e| e.to_string())?;
        write!(c, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").map_err(|e| e.to_string())?;
        let mut out = String::new();
        c.read_to_string(&mut out).map_err(|e| e.to_string())?;
        let (head, body) = out.split_once("\r\n\r\n").ok_or("no header end")?;
        let status = head
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("bad status line: {head}"))?;
        Ok((status, body.to_string()))
    })
    .join()
    .map_err(|_| "request thread panicked".to_string())?
}

/// Two hosts on either side of a switch serving metrics on `port`; h1 has
/// pinged h2 [`PINGS`] times.
fn lab() -> (Lab, String, Switch, u16) {
    let mut lab = Lab::new();
    let (h1, h2, sw) = (lab.ns("h1"), lab.ns("h2"), lab.ns("sw"));
    lab.veth(&h1, "eth0", &sw, "p1");
    lab.veth(&h2, "eth0", &sw, "p2");
    lab.host(
        &h1,
        "eth0",
        "10.93.1.2/24",
        "10.93.1.1",
        "fd00:93:1::2/64",
        "fd00:93:1::1",
    );
    lab.host(
        &h2,
        "eth0",
        "10.93.2.2/24",
        "10.93.2.1",
        "fd00:93:2::2/64",
        "fd00:93:2::1",
    );
    let conf = lab.path("sw.conf");
    std::fs::write(&conf, CONFIG).expect("write config");
    let port = free_port(&sw);
    let addr = format!("127.0.0.1:{port}");
    let switch = Switch::start(
        &sw,
        &conf,
        &lab.path("sw.sock"),
        &lab.path("sw.log"),
        &["--metrics", &addr],
    );
    let count = PINGS.to_string();
    ok(&[
        "ip",
        "netns",
        "exec",
        &h1,
        "ping",
        "-c",
        &count,
        "-i",
        "0.05",
        "-W",
        "2",
        "10.93.2.2",
    ]);
    (lab, sw, switch, port)
}

/// The value of the sample written exactly as `series` in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .and_then(|v| v.parse().ok())
}

#[test]
#[ignore = "needs root, network namespaces and promtool; run by scripts/test.sh"]
fn promtool_accepts_a_live_switchs_metrics() {
    let (lab, sw, switch, port) = lab();
    // The workers publish their counters a few times a second: scrape
    // until the pings show.
    let body = wait_for("the pings in /metrics", Duration::from_secs(10), || {
        let (status, body) = get(&sw, port, "/metrics")?;
        if status != 200 {
            return Err(format!("{status}: {body}"));
        }
        for series in [
            "railyard_interface_rx_packets_total{interface=\"Ethernet1/1\"}",
            "railyard_interface_tx_packets_total{interface=\"Ethernet1/2\"}",
        ] {
            match sample(&body, series) {
                Some(v) if v >= PINGS as f64 => {}
                v => return Err(format!("{series} = {v:?}, sent {PINGS}")),
            }
        }
        Ok(body)
    });
    assert!(
        body.contains("# TYPE railyard_queue_sojourn_seconds summary"),
        "{body}"
    );

    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run promtool (apt-get install prometheus)");
    promtool
        .stdin
        .take()
        .expect("stdin")
        .write_all(body.as_bytes())
        .expect("feed promtool");
    let out = promtool.wait_with_output().expect("promtool");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("promtool check metrics: exit {}; {said}", out.status);
    assert!(out.status.success(), "promtool check metrics: {said}");
    assert!(said.trim().is_empty(), "promtool has remarks: {said}");

    // Other paths and methods are refused, and the switch keeps serving.
    assert_eq!(get(&sw, port, "/nope").map(|r| r.0), Ok(404));
    assert_eq!(get(&sw, port, "/metrics").map(|r| r.0), Ok(200));
    // The switch stops cleanly with the endpoint up, and says so.
    let summary = switch.stop();
    assert!(summary.contains("Ethernet1/1"), "final counters: {summary}");
    drop(lab);
}

#[test]
#[ignore = "needs root, network namespaces and prometheus; run by scripts/test.sh"]
fn prometheus_scrapes_the_counters_the_traffic_moved() {
    let (lab, sw, switch, port) = lab();
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: railyard
    static_configs:
      - targets: ['127.0.0.1:{port}']
"
        ),
    )
    .expect("write prometheus.yml");
    let web = free_port(&sw);
    let listen = format!("--web.listen-address=127.0.0.1:{web}");
    let config_flag = format!("--config.file={}", config.display());
    let data = format!("--storage.tsdb.path={}", dir.path().join("data").display());
    let mut prometheus = Daemon::start(
        &sw,
        &["prometheus", &config_flag, &data, &listen],
        &dir.path().join("prometheus.log"),
    );
    wait_for(
        "prometheus to be ready",
        Duration::from_secs(60),
        || match get(&sw, web, "/-/ready") {
            Ok((200, _)) => Ok(()),
            Ok((s, b)) => Err(format!("{s} {b}")),
            Err(e) => Err(format!("{e}; log:\n{}", prometheus.log())),
        },
    );
    // One value of an instant query, once Prometheus has scraped it.
    let query = |q: &str| -> Result<f64, String> {
        let encoded: String = q
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (status, body) = get(&sw, web, &format!("/api/v1/query?query={encoded}"))?;
        let v: serde_json::Value = serde_json::from_str(&body).map_err(|e| e.to_string())?;
        if status != 200 || v["status"] != "success" {
            return Err(format!("{status}: {body}"));
        }
        v["data"]["result"][0]["value"][1]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("no value yet: {body}"))
    };
    let up = wait_for("a successful scrape", Duration::from_secs(30), || {
        query("up{job=\"railyard\"}").and_then(|v| {
            if v == 1.0 {
                Ok(v)
            } else {
                Err(format!("up = {v}"))
            }
        })
    });
    eprintln!("prometheus: up{{job=\"railyard\"}} = {up}");
    for q in [
        "railyard_interface_rx_packets_total{interface=\"Ethernet1/1\"}",
        "railyard_interface_tx_packets_total{interface=\"Ethernet1/2\"}",
        "sum(railyard_queue_tx_packets_total{interface=\"Ethernet1/2\"})",
    ] {
        let v = wait_for(q, Duration::from_secs(20), || {
            query(q).and_then(|v| {
                if v >= PINGS as f64 {
                    Ok(v)
                } else {
                    Err(format!("{v} < {PINGS}"))
                }
            })
        });
        eprintln!("prometheus: {q} = {v}");
    }
    // Drops arrive by reason, every reason listed, zero or not.
    let no_route = query("railyard_drops_total{interface=\"Ethernet1/1\",reason=\"no_route\"}")
        .expect("no_route drops of Ethernet1/1");
    eprintln!("prometheus: no_route drops on Ethernet1/1 = {no_route}");
    // Every query of the shipped dashboard is PromQL this Prometheus
    // accepts, with the dashboard's variables filled in as Grafana would.
    let queries =
        railyard_control::metrics::dashboard_queries(railyard_control::metrics::DASHBOARD)
            .expect("dashboard JSON");
    for q in queries.iter().filter(|q| !q.starts_with("label_values(")) {
        let q = q
            .replace("$instance", ".*")
            .replace("$interface", ".*")
            .replace("$__rate_interval", "1m");
        match query(&q) {
            Ok(_) => {}
            // An empty result is fine (no group, no drops); a rejected query is not.
            Err(e) if e.starts_with("no value yet") => {}
            Err(e) => panic!("dashboard query {q}: {e}"),
        }
    }
    eprintln!("prometheus: {} dashboard queries accepted", queries.len());
    prometheus.stop_with(libc::SIGTERM);
    drop(switch);
    drop(lab);
}
