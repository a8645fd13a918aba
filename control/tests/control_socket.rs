//! The control socket of a live switch under abuse: a thousand idle
//! clients and one that sends a byte a second hold up neither `railyard
//! show` nor forwarding; `reload FILE` stays inside `--config-dir`; the
//! socket is owner-only; a bad `--socket-group` stops the start.
//!
//! The switch runs in a network namespace of the test's own on veths to
//! two hosts; each test removes its namespaces and stops the switch by PID.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{ok, wait_for, Lab, Switch};

const CONFIG: &str = "hostname socksw
interface Ethernet1/1
  no switchport
  ip address 10.94.1.1/24
  ipv6 address fd00:94:1::1/64
  bind af-packet p1
interface Ethernet1/2
  no switchport
  ip address 10.94.2.1/24
  ipv6 address fd00:94:2::1/64
  bind af-packet p2
";

/// Two hosts either side of a switch started with `--config-dir` on the
/// lab's `conf` directory, which holds its configuration.
fn lab() -> (Lab, String, Switch) {
    let mut lab = Lab::new();
    let (h1, h2, sw) = (lab.ns("h1"), lab.ns("h2"), lab.ns("sw"));
    lab.veth(&h1, "eth0", &sw, "p1");
    lab.veth(&h2, "eth0", &sw, "p2");
    lab.host(
        &h1,
        "eth0",
        "10.94.1.2/24",
        "10.94.1.1",
        "fd00:94:1::2/64",
        "fd00:94:1::1",
    );
    lab.host(
        &h2,
        "eth0",
        "10.94.2.2/24",
        "10.94.2.1",
        "fd00:94:2::2/64",
        "fd00:94:2::1",
    );
    let dir = lab.path("conf");
    std::fs::create_dir(&dir).expect("conf dir");
    let conf = dir.join("sw.conf");
    std::fs::write(&conf, CONFIG).expect("write config");
    let switch = Switch::start(
        &sw,
        &conf,
        &lab.path("sw.sock"),
        &lab.path("sw.log"),
        &["--config-dir", dir.to_str().unwrap_or_default()],
    );
    (lab, h1, switch)
}

fn ping(h1: &str) {
    ok(&[
        "ip",
        "netns",
        "exec",
        h1,
        "ping",
        "-c",
        "3",
        "-i",
        "0.2",
        "-W",
        "2",
        "10.94.2.2",
    ]);
}

/// The switch's `control_socket` counters.
fn counters(sw: &Switch) -> serde_json::Value {
    let stats: serde_json::Value =
        railyard_control::mgmt::request(&sw.socket, "stats").expect("stats");
    stats["control_socket"].clone()
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn a_thousand_idle_clients_and_a_slow_one_hold_up_nothing() {
    let (_lab, h1, sw) = lab();
    let mode = std::fs::metadata(&sw.socket)
        .expect("socket")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "socket mode {mode:o}");
    ping(&h1);

    let t = Instant::now();
    let idle: Vec<UnixStream> = (0..1000)
        .map(|_| UnixStream::connect(&sw.socket).expect("connect"))
        .collect();
    eprintln!("1000 idle connections open in {:?}", t.elapsed());
    let path = sw.socket.clone();
    let slow = std::thread::spawn(move || {
        let mut c = UnixStream::connect(&path).expect("connect");
        for b in b"stats\n" {
            if c.write_all(&[*b]).is_err() {
                break;
            }
            std::thread::sleep(Duration::from_secs(1));
        }
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    });
    std::thread::sleep(Duration::from_millis(100));

    let t = Instant::now();
    let shown = sw.show().expect("show interface while 1001 clients wait");
    let took = t.elapsed();
    eprintln!("`railyard show interface` answered in {took:?}");
    assert!(shown.to_string().contains("Ethernet1/2"), "{shown}");
    assert!(took < Duration::from_millis(1500), "show took {took:?}");
    ping(&h1);
    let c = counters(&sw);
    assert!(c["accepted"].as_u64() >= Some(1002), "{c}");
    assert_eq!(c["busy"], 0, "{c}");

    // The request limit closes every idle client, and the slow one, with
    // a reason.
    let slow = slow.join().expect("slow client");
    assert!(slow.contains("not complete within 2000 ms"), "{slow}");
    let mut first = &idle[0];
    let mut told = String::new();
    let _ = first.read_to_string(&mut told);
    assert!(told.contains("not complete within 2000 ms"), "{told}");
    let c = wait_for("timeouts counted", Duration::from_secs(5), || {
        let c = counters(&sw);
        if c["request_timeouts"].as_u64() >= Some(1001) {
            Ok(c)
        } else {
            Err(c.to_string())
        }
    });
    eprintln!("control_socket counters: {c}");
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn reload_through_the_socket_stays_inside_config_dir() {
    let (lab, _h1, sw) = lab();
    let inside = lab.path("conf/sw.conf");
    std::fs::write(lab.path("outside.conf"), CONFIG).expect("write");
    std::os::unix::fs::symlink(lab.path("outside.conf"), lab.path("conf/link.conf"))
        .expect("symlink");
    let dotdot = lab.path("conf/../outside.conf");
    for refused in [
        lab.path("outside.conf"),
        dotdot,
        lab.path("conf/link.conf"),
        "/etc/shadow".into(),
    ] {
        let e = sw
            .cli(&["reload", refused.to_str().unwrap_or_default()])
            .expect_err("refused");
        assert!(e.contains("outside the configuration directory"), "{e}");
        assert!(e.contains("reload rejected"), "{e}");
    }
    let applied = sw
        .cli(&["reload", inside.to_str().unwrap_or_default()])
        .expect("reload inside");
    assert!(applied.contains("applied"), "{applied}");
    // Without a file: the startup configuration, as always.
    sw.cli(&["reload"]).expect("plain reload");
}

#[test]
fn an_unknown_socket_group_stops_the_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let conf = dir.path().join("sw.conf");
    std::fs::write(&conf, CONFIG).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(["run", "--config"])
        .arg(&conf)
        .arg("--socket")
        .arg(dir.path().join("s.sock"))
        .args(["--socket-group", "no-such-group-railyard"])
        .output()
        .expect("run railyard");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--socket-group no-such-group-railyard: no such group"),
        "{err}"
    );
    assert!(!dir.path().join("s.sock").exists());
}
