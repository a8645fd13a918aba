//! Lab tests: real kernel hosts in network namespaces talking through a
//! `railyard run` process over AF_PACKET and TAP ports.
//!
//! Each test creates its own uniquely named namespaces and removes them
//! again (also on failure); the switch process is stopped by its PID.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// Namespaces made by one test, deleted on drop.
struct Lab {
    tag: String,
    namespaces: Vec<String>,
    dir: tempfile::TempDir,
}

fn run(cmd: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

fn ok(cmd: &[&str]) {
    if let Err(e) = run(cmd) {
        panic!("{e}");
    }
}

impl Lab {
    fn new() -> Lab {
        let tag = format!(
            "ry{}x{}",
            std::process::id() % 100_000,
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        Lab {
            tag,
            namespaces: Vec::new(),
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    fn ns(&mut self, role: &str) -> String {
        let name = format!("{}-{role}", self.tag);
        ok(&["ip", "netns", "add", &name]);
        ok(&["ip", "-n", &name, "link", "set", "lo", "up"]);
        self.namespaces.push(name.clone());
        name
    }

    /// A veth pair with one end in each namespace.
    fn veth(&self, a_ns: &str, a: &str, b_ns: &str, b: &str) {
        ok(&[
            "ip", "link", "add", a, "netns", a_ns, "type", "veth", "peer", "name", b, "netns", b_ns,
        ]);
        ok(&["ip", "-n", a_ns, "link", "set", a, "up"]);
        ok(&["ip", "-n", b_ns, "link", "set", b, "up"]);
    }

    fn host(&self, ns: &str, dev: &str, addr: &str, gw: &str, addr6: &str, gw6: &str) {
        ok(&["ip", "-n", ns, "addr", "add", addr, "dev", dev]);
        ok(&[
            "ip", "-n", ns, "-6", "addr", "add", addr6, "dev", dev, "nodad",
        ]);
        ok(&["ip", "-n", ns, "link", "set", dev, "up"]);
        ok(&["ip", "-n", ns, "route", "add", "default", "via", gw]);
        ok(&["ip", "-n", ns, "-6", "route", "add", "default", "via", gw6]);
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let _ = run(&["ip", "netns", "del", ns]);
        }
    }
}

/// A `railyard run` process, stopped with SIGTERM by PID on drop.
struct Switch {
    child: Option<Child>,
    socket: PathBuf,
    log: PathBuf,
}

impl Switch {
    fn start(ns: &str, config: &Path, socket: &Path, log: &Path, extra: &[&str]) -> Switch {
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                env!("CARGO_BIN_EXE_railyard"),
                "run",
                "--config",
            ])
            .arg(config)
            .arg("--socket")
            .arg(socket)
            .args(extra)
            .stdout(Stdio::from(
                std::fs::File::create(log.with_extension("out")).expect("log"),
            ))
            .stderr(Stdio::from(std::fs::File::create(log).expect("log")))
            .spawn()
            .expect("start railyard");
        let sw = Switch {
            child: Some(child),
            socket: socket.to_path_buf(),
            log: log.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while sw.show().is_err() {
            assert!(
                Instant::now() < deadline,
                "railyard did not come up:\n{}",
                std::fs::read_to_string(&sw.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        sw
    }

    /// Runs `railyard ARGS… --socket <this switch's socket>` and returns its stdout.
    fn cli(&self, args: &[&str]) -> Result<String, String> {
        let mut cmd = vec![env!("CARGO_BIN_EXE_railyard")];
        cmd.extend_from_slice(args);
        cmd.extend(["--socket", self.socket.to_str().unwrap_or_default()]);
        run(&cmd)
    }

    fn show(&self) -> Result<serde_json::Value, String> {
        let out = self.cli(&["show", "interface", "--json"])?;
        serde_json::from_str(&out).map_err(|e| e.to_string())
    }

    /// Stops the switch and returns what it printed on stdout (final counters).
    fn stop(mut self) -> String {
        self.terminate();
        std::fs::read_to_string(self.log.with_extension("out")).unwrap_or_default()
    }

    fn signal(&self, sig: libc::c_int) {
        if let Some(child) = &self.child {
            // SAFETY: signalling a child process we started and have not reaped.
            unsafe {
                libc::kill(child.id() as libc::pid_t, sig);
            }
        }
    }

    fn terminate(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `ip netns exec` execs railyard, so the child's PID is the switch's.
            let pid = child.id() as libc::pid_t;
            // SAFETY: signalling a child process we started and have not reaped.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// Runs `f` on a thread that has entered network namespace `ns`.
fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("open netns");
        // SAFETY: setns on a valid namespace fd; it changes only this thread.
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
        f()
    })
}

fn two_host_config(bind_kind: &str, p1: &str, p2: &str) -> String {
    format!(
        "hostname labsw
interface Ethernet1/1
  no switchport
  ip address 10.91.1.1/24
  ipv6 address fd00:91:1::1/64
  bind {bind_kind} {p1}
interface Ethernet1/2
  no switchport
  ip address 10.91.2.1/24
  ipv6 address fd00:91:2::1/64
  bind {bind_kind} {p2}
"
    )
}

fn ping(ns: &str, dst: &str) {
    let v6 = dst.contains(':');
    let mut cmd = vec!["ip", "netns", "exec", ns, "ping"];
    if v6 {
        cmd.push("-6");
    }
    cmd.extend(["-c", "3", "-i", "0.2", "-W", "2", dst]);
    ok(&cmd);
}

/// Sends `count` UDP datagrams from h1 to h2 at `pps` and returns how many
/// arrived, in order, with none duplicated.
fn udp_stream(h1: &str, h2: &str, count: u64, pps: u64) -> u64 {
    let receiver = in_netns(h2, move || {
        let sock = UdpSocket::bind("10.91.2.2:9000").expect("bind receiver");
        let big: libc::c_int = 16 << 20;
        // SAFETY: setsockopt with a valid fd and an int-sized option.
        unsafe {
            libc::setsockopt(
                sock.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                (&big as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
        sock.set_read_timeout(Some(Duration::from_secs(3)))
            .expect("timeout");
        let mut seen = vec![false; count as usize];
        let mut got = 0u64;
        let mut buf = [0u8; 2048];
        while let Ok(n) = sock.recv(&mut buf) {
            if n >= 8 {
                let seq = u64::from_be_bytes(buf[..8].try_into().unwrap_or_default());
                if let Some(s) = seen.get_mut(seq as usize) {
                    if !*s {
                        *s = true;
                        got += 1;
                    }
                }
            }
            if got == count {
                break;
            }
        }
        got
    });
    std::thread::sleep(Duration::from_millis(300));
    let sender = in_netns(h1, move || {
        let sock = UdpSocket::bind("10.91.1.2:0").expect("bind sender");
        sock.connect("10.91.2.2:9000").expect("connect");
        let start = Instant::now();
        let mut payload = [0u8; 64];
        for seq in 0..count {
            let due = start + Duration::from_nanos(seq * 1_000_000_000 / pps);
            while Instant::now() < due {
                std::hint::spin_loop();
            }
            payload[..8].copy_from_slice(&seq.to_be_bytes());
            while sock.send(&payload).is_err() {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
        start.elapsed()
    });
    let took = sender.join().expect("sender");
    let got = receiver.join().expect("receiver");
    eprintln!(
        "udp stream: {got}/{count} datagrams at {:.0} pps offered",
        count as f64 / took.as_secs_f64()
    );
    got
}

fn ping_fails(ns: &str, dst: &str) -> bool {
    run(&[
        "ip", "netns", "exec", ns, "ping", "-c", "2", "-i", "0.2", "-W", "1", dst,
    ])
    .is_err()
}

fn afpacket_lab(extra: &[&str]) -> (Lab, String, String, Switch) {
    let mut lab = Lab::new();
    let (h1, h2, sw) = (lab.ns("h1"), lab.ns("h2"), lab.ns("sw"));
    lab.veth(&h1, "eth0", &sw, "p1");
    lab.veth(&h2, "eth0", &sw, "p2");
    lab.host(
        &h1,
        "eth0",
        "10.91.1.2/24",
        "10.91.1.1",
        "fd00:91:1::2/64",
        "fd00:91:1::1",
    );
    lab.host(
        &h2,
        "eth0",
        "10.91.2.2/24",
        "10.91.2.1",
        "fd00:91:2::2/64",
        "fd00:91:2::1",
    );
    let conf = lab.path("sw.conf");
    std::fs::write(&conf, two_host_config("af-packet", "p1", "p2")).expect("write config");
    let switch = Switch::start(&sw, &conf, &lab.path("sw.sock"), &lab.path("sw.log"), extra);
    (lab, h1, h2, switch)
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn hosts_ping_each_other_through_railyard_on_af_packet() {
    // Two workers: each port has its own, so every packet crosses workers.
    let (_lab, h1, h2, switch) = afpacket_lab(&["--cores", "0,1", "--poll", "adaptive"]);
    ping(&h1, "10.91.1.1");
    ping(&h1, "10.91.2.2");
    ping(&h2, "10.91.1.2");
    ping(&h1, "fd00:91:2::2");
    let stats = switch.show().expect("show");
    let e2 = &stats["interfaces"]["Ethernet1/2"];
    assert!(e2["tx_packets"].as_u64().unwrap_or(0) >= 6, "{e2}");
    assert_eq!(stats["interfaces"]["Ethernet1/1"]["rx_malformed"], 0);
    let running = switch
        .cli(&["show", "running-config"])
        .expect("show running-config");
    assert!(
        running.contains("hostname labsw") && running.contains("bind af-packet p2"),
        "{running}"
    );
    let pmap = switch
        .cli(&["show", "policy-map", "interface", "e1/2"])
        .expect("show policy-map interface");
    assert!(pmap.contains("queue transmit pkts"), "{pmap}");
    let queuing = switch
        .cli(&["show", "queuing", "interface", "e1/2"])
        .expect("show queuing interface");
    assert!(
        queuing.contains("QOS GROUP 0") && queuing.contains("Wait p50 / p99 / max"),
        "{queuing}"
    );
    let pfc = switch
        .cli(&["show", "interface", "priority-flow-control"])
        .expect("show interface priority-flow-control");
    assert!(
        pfc.contains("Ethernet1/1") && pfc.contains("Oper(VL bmap)"),
        "{pfc}"
    );
    let summary = switch.stop();
    assert!(
        summary.contains("Ethernet1/1"),
        "final counters printed: {summary}"
    );
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn a_udp_stream_crosses_af_packet_without_loss() {
    let (_lab, h1, h2, switch) = afpacket_lab(&[]);
    // Resolve neighbours first so the stream measures forwarding only.
    ping(&h1, "10.91.2.2");
    let count = 100_000;
    let got = udp_stream(&h1, &h2, count, 20_000);
    let stats = switch.show().expect("show");
    assert_eq!(got, count, "lost datagrams; switch counters: {stats}");
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn hosts_ping_each_other_through_railyard_on_tap() {
    let mut lab = Lab::new();
    let (h1, h2, sw) = (lab.ns("h1"), lab.ns("h2"), lab.ns("sw"));
    let conf = lab.path("sw.conf");
    std::fs::write(&conf, two_host_config("tap", "ryt1", "ryt2")).expect("write config");
    let switch = Switch::start(&sw, &conf, &lab.path("sw.sock"), &lab.path("sw.log"), &[]);
    // railyard created the taps in its namespace; hand their kernel side to the hosts.
    for (dev, host) in [("ryt1", &h1), ("ryt2", &h2)] {
        ok(&["ip", "-n", &sw, "link", "set", dev, "netns", host]);
    }
    lab.host(
        &h1,
        "ryt1",
        "10.91.1.2/24",
        "10.91.1.1",
        "fd00:91:1::2/64",
        "fd00:91:1::1",
    );
    lab.host(
        &h2,
        "ryt2",
        "10.91.2.2/24",
        "10.91.2.1",
        "fd00:91:2::2/64",
        "fd00:91:2::1",
    );
    ping(&h1, "10.91.2.2");
    ping(&h2, "10.91.1.2");
    ping(&h1, "fd00:91:2::2");
    let stats = switch.show().expect("show");
    assert!(
        stats["interfaces"]["Ethernet1/1"]["rx_packets"]
            .as_u64()
            .unwrap_or(0)
            >= 3
    );
    let got = udp_stream(&h1, &h2, 20_000, 10_000);
    assert_eq!(got, 20_000);
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn reload_applies_good_configs_and_keeps_running_on_bad_ones() {
    let (lab, h1, _h2, switch) = afpacket_lab(&[]);
    ping(&h1, "10.91.2.2");
    let conf = lab.path("sw.conf");
    let good = std::fs::read_to_string(&conf).expect("config");
    let rx_before = switch.show().expect("show")["interfaces"]["Ethernet1/1"]["rx_packets"]
        .as_u64()
        .unwrap_or(0);

    // A broken file is rejected with its diagnostics; traffic keeps flowing.
    let bad = lab.path("bad.conf");
    std::fs::write(&bad, good.replace("10.91.2.1/24", "10.91.2.1/40")).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(["reload", bad.to_str().unwrap_or_default(), "--socket"])
        .arg(&switch.socket)
        .output()
        .expect("reload");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.conf:9:"), "{err}");
    assert!(err.contains("unchanged"), "{err}");
    ping(&h1, "10.91.2.2");

    // SIGHUP re-reads the file the switch started with: shut Ethernet1/2.
    std::fs::write(
        &conf,
        good.replace("  bind af-packet p2", "  bind af-packet p2\n  shutdown"),
    )
    .expect("write");
    switch.signal(libc::SIGHUP);
    let deadline = Instant::now() + Duration::from_secs(5);
    while switch.show().expect("show")["interfaces"]["Ethernet1/2"]["admin_up"] != false {
        assert!(Instant::now() < deadline, "SIGHUP reload not applied");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(ping_fails(&h1, "10.91.2.2"));

    // `railyard reload` brings it back; counters were never reset.
    std::fs::write(&conf, &good).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .args(["reload", "--socket"])
        .arg(&switch.socket)
        .output()
        .expect("reload");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ping(&h1, "10.91.2.2");
    std::thread::sleep(Duration::from_millis(200));
    let stats = switch.show().expect("show");
    let rx_after = stats["interfaces"]["Ethernet1/1"]["rx_packets"]
        .as_u64()
        .unwrap_or(0);
    assert!(
        rx_after > rx_before,
        "counters kept across reloads: {rx_before} -> {rx_after}"
    );
    // The pings sent while Ethernet1/2 was shut were dropped where they
    // entered, with their reason.
    assert!(
        stats["interfaces"]["Ethernet1/1"]["drops"]["interface_down"]
            .as_u64()
            .unwrap_or(0)
            >= 2,
        "{stats}"
    );
}
