//! Faults under traffic, with real kernel hosts in network namespaces and a
//! `railyard run` process between them over AF_PACKET: a port's link goes
//! down for a second while a UDP stream crosses the switch, and comes back.
//!
//! Each test creates its own uniquely named namespaces and removes them
//! again (also on failure); the switch process is stopped by its PID.

use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

mod common;
use common::{in_netns, ok, run, wait_for, Lab, Switch};

const CONFIG: &str = "hostname faultsw
interface Ethernet1/1
  no switchport
  ip address 10.93.1.1/24
  bind af-packet p1
interface Ethernet1/2
  no switchport
  ip address 10.93.2.1/24
  bind af-packet p2
";

/// h1 -- p1 [switch] p2 -- h2, the switch running.
fn lab() -> (Lab, String, String, String, Switch) {
    let mut lab = Lab::new();
    let (h1, h2, sw) = (lab.ns("h1"), lab.ns("h2"), lab.ns("sw"));
    lab.veth(&h1, "eth0", &sw, "p1");
    lab.veth(&h2, "eth0", &sw, "p2");
    // The switch's namespace sends nothing of its own out of its ports, so
    // what h2 receives is what the switch sent.
    for p in ["p1", "p2"] {
        let key = format!("net.ipv6.conf.{p}.disable_ipv6=1");
        ok(&["ip", "netns", "exec", &sw, "sysctl", "-qw", &key]);
    }
    for (ns, i) in [(&h1, 1), (&h2, 2)] {
        let addr = format!("10.93.{i}.2/24");
        let gw = format!("10.93.{i}.1");
        ok(&["ip", "-n", ns, "addr", "add", &addr, "dev", "eth0"]);
        ok(&["ip", "-n", ns, "route", "add", "default", "via", &gw]);
    }
    let conf = lab.path("sw.conf");
    std::fs::write(&conf, CONFIG).expect("write config");
    let switch = Switch::start(&sw, &conf, &lab.path("sw.sock"), &lab.path("sw.log"), &[]);
    (lab, h1, h2, sw, switch)
}

fn pings(ns: &str, dst: &str) -> bool {
    run(&["ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "1", dst]).is_ok()
}

fn n(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// Sends `count` numbered UDP datagrams from h1 to h2 at `pps`; returns how
/// many distinct ones arrived, and how many of the last 1 000.
fn udp_stream(h1: &str, h2: &str, count: u64, pps: u64) -> std::thread::JoinHandle<(u64, usize)> {
    let receiver = in_netns(h2, move || {
        let sock = UdpSocket::bind("10.93.2.2:9000").expect("bind receiver");
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
        while let Ok(len) = sock.recv(&mut buf) {
            if len >= 8 {
                let seq = u64::from_be_bytes(buf[..8].try_into().unwrap_or_default());
                if let Some(s) = seen.get_mut(seq as usize) {
                    got += u64::from(!*s);
                    *s = true;
                }
            }
        }
        let tail = seen[seen.len().saturating_sub(1_000)..]
            .iter()
            .filter(|s| **s)
            .count();
        (got, tail)
    });
    std::thread::sleep(Duration::from_millis(200));
    let sender = in_netns(h1, move || {
        let sock = UdpSocket::bind("10.93.1.2:0").expect("bind sender");
        sock.connect("10.93.2.2:9000").expect("connect");
        let start = Instant::now();
        let mut payload = [0u8; 200];
        for seq in 0..count {
            let due = start + Duration::from_nanos(seq * 1_000_000_000 / pps);
            while Instant::now() < due {
                std::thread::sleep(Duration::from_micros(20));
            }
            payload[..8].copy_from_slice(&seq.to_be_bytes());
            while sock.send(&payload).is_err() {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    });
    std::thread::spawn(move || {
        sender.join().expect("sender");
        receiver.join().expect("receiver")
    })
}

#[test]
#[ignore = "needs root and network namespaces"]
fn a_link_down_for_a_second_under_traffic_is_logged_withdrawn_counted_and_recovers() {
    let (lab, h1, h2, sw, switch) = lab();
    wait_for("h1 reaches h2", Duration::from_secs(5), || {
        pings(&h1, "10.93.2.2")
            .then_some(())
            .ok_or_else(|| "no answer".to_string())
    });
    // 6 s of 10 000 datagrams a second; the link is down for 1 s of it.
    let count = 60_000;
    let stream = udp_stream(&h1, &h2, count, 10_000);
    std::thread::sleep(Duration::from_millis(1_200));
    ok(&["ip", "-n", &sw, "link", "set", "p2", "down"]);
    let down_at = Instant::now();
    let e2 = wait_for("Ethernet1/2 down", Duration::from_secs(2), || {
        let s = switch.show()?;
        let e2 = s["interfaces"]["Ethernet1/2"].clone();
        match (e2["link_up"].as_bool(), e2["addresses"].as_array()) {
            (Some(false), Some(a)) if a.is_empty() => Ok(e2),
            _ => Err(format!("{e2}")),
        }
    });
    eprintln!(
        "link down seen, addresses withdrawn after {:?}",
        down_at.elapsed()
    );
    assert_eq!(e2["admin_up"], true);
    // Its address answers no more, and its subnet is not routed.
    assert!(!pings(&h1, "10.93.2.1"), "the withdrawn address answered");
    let text = switch
        .cli(&["show", "interface", "Ethernet1/2"])
        .expect("show interface");
    assert!(text.contains("Ethernet1/2 is down (link down)"), "{text}");
    assert!(!text.contains("Internet Address"), "{text}");
    std::thread::sleep(Duration::from_millis(1_000).saturating_sub(down_at.elapsed()));
    ok(&["ip", "-n", &sw, "link", "set", "p2", "up"]);
    let up_at = Instant::now();
    wait_for("Ethernet1/2 up again", Duration::from_secs(3), || {
        let s = switch.show()?;
        let e2 = &s["interfaces"]["Ethernet1/2"];
        match (e2["link_up"].as_bool(), e2["addresses"].as_array()) {
            (Some(true), Some(a)) if a.len() == 1 => Ok(()),
            _ => Err(format!("{e2}")),
        }
    });
    eprintln!("link up seen, addresses back after {:?}", up_at.elapsed());
    let (got, tail) = stream.join().expect("stream");
    assert!(pings(&h1, "10.93.2.1"), "the address answers again");
    assert!(pings(&h1, "10.93.2.2"), "h1 reaches h2 again");
    let s = switch.show().expect("show");
    let (e1, e2) = (
        &s["interfaces"]["Ethernet1/1"],
        &s["interfaces"]["Ethernet1/2"],
    );
    let lost = count - got;
    let nonzero = |d: &serde_json::Value| -> serde_json::Map<String, serde_json::Value> {
        d.as_object()
            .into_iter()
            .flatten()
            .filter(|(_, v)| n(v) > 0)
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let switch_drops = n(&e1["backend_rx_dropped"])
        + [e1, e2]
            .iter()
            .flat_map(|e| e["drops"].as_object().into_iter().flatten())
            .map(|(_, v)| n(v))
            .sum::<u64>();
    eprintln!(
        "stream: {got}/{count} arrived; Ethernet1/1 drops {:?}, backend_rx_dropped {}; \
         Ethernet1/2 drops {:?}, tx_packets {}, backend_tx_errors {}",
        nonzero(&e1["drops"]),
        e1["backend_rx_dropped"],
        nonzero(&e2["drops"]),
        e2["tx_packets"],
        e2["backend_tx_errors"]
    );
    assert!(lost > 1_000, "the outage lost datagrams: {lost}");
    assert!(
        tail >= 990,
        "forwarding resumed: {tail} of the last 1000 arrived"
    );
    // Every datagram lost was dropped by the switch with a reason (what
    // else it dropped is pings and ARP to the withdrawn subnet).
    assert!(
        switch_drops >= lost && switch_drops <= lost + 50,
        "lost {lost}, switch drops {switch_drops}"
    );
    // What the backend failed to send is a tx_error drop, not transmitted.
    assert_eq!(n(&e2["backend_tx_errors"]), n(&e2["drops"]["tx_error"]));
    // h2 received what the switch counted as transmitted on Ethernet1/2
    // (the datagrams and the switch's own ARP, ping and LLDP frames): no
    // frame counted as sent was lost.
    let h2_rx = |ns: &str| -> u64 {
        run(&[
            "ip",
            "netns",
            "exec",
            ns,
            "cat",
            "/sys/class/net/eth0/statistics/rx_packets",
        ])
        .expect("h2 counters")
        .trim()
        .parse()
        .expect("a number")
    };
    let before = h2_rx(&h2);
    let sent = n(&switch.show().expect("show")["interfaces"]["Ethernet1/2"]["tx_packets"]);
    std::thread::sleep(Duration::from_millis(100));
    let after = h2_rx(&h2);
    eprintln!("Ethernet1/2 tx_packets {sent}; h2 received {before}..{after}");
    // (The few frames beyond are the switch namespace's own, sent as the
    // veth came up, before IPv6 was turned off on it.)
    assert!(
        sent <= after && before <= sent + 3,
        "{before} <= {sent} <= {after}"
    );
    let log = std::fs::read_to_string(lab.path("sw.log")).expect("log");
    assert_eq!(log.matches("Ethernet1/2: link down").count(), 1, "{log}");
    assert_eq!(log.matches("Ethernet1/2: link up").count(), 1, "{log}");
    eprintln!("{log}");
    drop(switch);
}

#[test]
#[ignore = "needs root and network namespaces"]
fn an_interface_deleted_and_recreated_under_a_port_takes_the_port_down_and_says_so() {
    let (lab, h1, h2, sw, switch) = lab();
    wait_for("h1 reaches h2", Duration::from_secs(5), || {
        pings(&h1, "10.93.2.2")
            .then_some(())
            .ok_or_else(|| "no answer".to_string())
    });
    ok(&["ip", "-n", &sw, "link", "del", "p2"]);
    // A new interface of the same name: the port's socket is still bound
    // to the old one, so the port must not call itself up.
    lab.veth(&h2, "eth0", &sw, "p2");
    ok(&[
        "ip",
        "-n",
        &h2,
        "addr",
        "add",
        "10.93.2.2/24",
        "dev",
        "eth0",
    ]);
    let e2 = wait_for("Ethernet1/2 down", Duration::from_secs(3), || {
        let s = switch.show()?;
        let e2 = s["interfaces"]["Ethernet1/2"].clone();
        match (e2["link_up"].as_bool(), e2["addresses"].as_array()) {
            (Some(false), Some(a)) if a.is_empty() => Ok(e2),
            _ => Err(format!("{e2}")),
        }
    });
    assert_eq!(e2["admin_up"], true);
    std::thread::sleep(Duration::from_millis(500));
    let e2 = &switch.show().expect("show")["interfaces"]["Ethernet1/2"];
    assert_eq!(e2["link_up"], false, "still down: {e2}");
    // The rest of the switch still answers.
    assert!(pings(&h1, "10.93.1.1"), "Ethernet1/1 still answers");
    let log = std::fs::read_to_string(lab.path("sw.log")).expect("log");
    assert!(
        log.contains("p2: the interface this port was bound to (ifindex"),
        "{log}"
    );
    assert_eq!(log.matches("Ethernet1/2: link down").count(), 1, "{log}");
    eprintln!("{log}");
    drop(switch);
}
