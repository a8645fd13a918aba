//! Lab tests: real kernel hosts in network namespaces talking through a
//! `railyard run` process over AF_PACKET and TAP ports.
//!
//! Each test creates its own uniquely named namespaces and removes them
//! again (also on failure); the switch process is stopped by its PID.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

mod common;
use common::{in_netns, ok, run, Lab, Switch};

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
        queuing.contains("QOS GROUP 0")
            && queuing.contains("Wait p50")
            && queuing.contains("Wait max"),
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
fn a_switch_stalled_for_300_ms_loses_nothing_at_a_low_rate() {
    let (_lab, h1, h2, switch) = afpacket_lab(&[]);
    ping(&h1, "10.91.2.2");
    // At 10 000 pps each receive-ring block retires after 1 ms with about
    // ten frames, so a switch frozen for 300 ms (as a busy machine may
    // deschedule it) needs some 300 blocks of its ring to lose nothing.
    let count = 30_000;
    let got = std::thread::scope(|s| {
        s.spawn(|| {
            // The stream starts 300 ms in; freeze the switch in its middle.
            std::thread::sleep(Duration::from_millis(1_300));
            switch.signal(libc::SIGSTOP);
            std::thread::sleep(Duration::from_millis(300));
            switch.signal(libc::SIGCONT);
        });
        udp_stream(&h1, &h2, count, 10_000)
    });
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
