//! Monitor sessions on a live switch with Linux hosts in network
//! namespaces: a file session writes what Ethernet1/1 receives and sends
//! (the switch's own ARP replies and LLDPDUs included) and what
//! Ethernet1/2 receives into a pcapng file tshark reads without expert
//! info, with as many frames as `show monitor session` counted; a port
//! session sends the same frames of Ethernet1/1 out of Ethernet1/3, where
//! tshark on the far end of its cable sees them.

use std::process::{Command, Stdio};
use std::time::Duration;

mod common;
use common::{ok, run, wait_for, Lab, Switch};

fn config(file: &str) -> String {
    format!(
        "hostname span1
feature lldp
lldp timer 5
interface Ethernet1/1
  no switchport
  ip address 10.0.1.1/24
  bind af-packet e1
interface Ethernet1/2
  no switchport
  ip address 10.0.2.1/24
  bind af-packet e2
interface Ethernet1/3
  no switchport
  bind af-packet e3
monitor session 1
  description to a file
  source interface Ethernet1/1 both
  source interface Ethernet1/2 rx
  destination file {file}
  no shut
monitor session 2
  source interface Ethernet1/1
  destination interface Ethernet1/3
  no shut
"
    )
}

/// `frame.packet_flags_direction` as tshark prints it: inbound, outbound.
const IN: &str = "0x00000001";
const OUT: &str = "0x00000002";

fn tshark(args: &[&str]) -> String {
    let mut cmd = vec!["tshark"];
    cmd.extend_from_slice(args);
    run(&cmd).unwrap_or_else(|e| panic!("{e}"))
}

/// The session's JSON from `show monitor session N --json`.
fn session(sw: &Switch, id: &str) -> serde_json::Value {
    let out = sw
        .cli(&["show", "monitor", "session", id, "--json"])
        .expect("show monitor session");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    v["sessions"][0].clone()
}

#[test]
#[ignore = "needs root, network namespaces and tshark"]
fn sessions_copy_to_a_pcapng_file_and_out_of_a_port() {
    let mut lab = Lab::new();
    let sw_ns = lab.ns("sw");
    let h1 = lab.ns("h1");
    let h2 = lab.ns("h2");
    let mon = lab.ns("mon");
    for ns in [&h1, &h2, &mon] {
        ok(&[
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-qw",
            "net.ipv6.conf.all.disable_ipv6=1",
        ]);
        ok(&[
            "ip",
            "netns",
            "exec",
            ns,
            "sysctl",
            "-qw",
            "net.ipv6.conf.default.disable_ipv6=1",
        ]);
    }
    lab.veth(&sw_ns, "e1", &h1, "eth0");
    lab.veth(&sw_ns, "e2", &h2, "eth0");
    lab.veth(&sw_ns, "e3", &mon, "eth0");
    ok(&["ip", "-n", &h1, "addr", "add", "10.0.1.2/24", "dev", "eth0"]);
    ok(&[
        "ip", "-n", &h1, "route", "add", "default", "via", "10.0.1.1",
    ]);
    ok(&["ip", "-n", &h2, "addr", "add", "10.0.2.2/24", "dev", "eth0"]);
    ok(&[
        "ip", "-n", &h2, "route", "add", "default", "via", "10.0.2.1",
    ]);
    let file = lab.path("span1.pcapng");
    let conf = lab.path("span.conf");
    std::fs::write(&conf, config(file.to_str().unwrap())).unwrap();
    let port_cap = lab.path("port.pcap");
    let mut capture = Command::new("ip")
        .args(["netns", "exec", &mon, "tshark", "-q", "-i", "eth0", "-w"])
        .arg(&port_cap)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("tshark");
    std::thread::sleep(Duration::from_millis(2000));
    let sw = Switch::start(
        &sw_ns,
        &conf,
        &lab.path("sock"),
        &lab.path("railyard.log"),
        &[],
    );
    ok(&[
        "ip", "netns", "exec", &h1, "ping", "-c", "5", "-i", "0.2", "-W", "2", "10.0.2.2",
    ]);
    // An LLDPDU of the switch's own on Ethernet1/1 (sent at start, then every 5 s).
    wait_for("an LLDPDU in the file", Duration::from_secs(15), || {
        let n = tshark(&["-r", file.to_str().unwrap(), "-Y", "lldp"])
            .lines()
            .count();
        if n > 0 {
            Ok(())
        } else {
            Err("none yet".into())
        }
    });
    // Quiet: what the session counted is what the file holds.
    let (s1, frames) = wait_for("the file to catch up", Duration::from_secs(15), || {
        let s = session(&sw, "1");
        std::thread::sleep(Duration::from_millis(500));
        let n = tshark(&["-r", file.to_str().unwrap()]).lines().count() as u64;
        let again = session(&sw, "1");
        let (m, w) = (
            again["counters"]["mirrored"].as_u64(),
            again["written"].as_u64(),
        );
        if s == again && m == Some(n) && w == Some(n) {
            Ok((again, n))
        } else {
            Err(format!("mirrored {m:?} written {w:?} in file {n}"))
        }
    });
    eprintln!("session 1: {s1}");
    assert_eq!(s1["state"], "up");
    assert_eq!(s1["counters"]["queue_full"], 0);
    let text = sw.cli(&["show", "monitor", "session", "1"]).unwrap();
    eprintln!("{text}");
    assert!(text.contains("state             : up\n"), "{text}");
    assert!(
        text.contains("    rx            : Eth1/1 Eth1/2\n"),
        "{text}"
    );

    let path = file.to_str().unwrap();
    let expert = tshark(&["-r", path, "-q", "-z", "expert"]);
    eprintln!("tshark -z expert:\n{expert}");
    for bad in ["Errors", "Warns", "Notes"] {
        assert!(!expert.contains(bad), "expert info:\n{expert}");
    }
    // Each frame on its interface and in its direction.
    let rows = tshark(&[
        "-r",
        path,
        "-T",
        "fields",
        "-e",
        "frame.interface_name",
        "-e",
        "frame.packet_flags_direction",
        "-e",
        "_ws.col.Protocol",
        "-e",
        "icmp.type",
    ]);
    let count = |ifc: &str, dir: &str, proto: &str, icmp: &str| {
        rows.lines()
            .filter(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                f.len() >= 4 && f[0] == ifc && f[1] == dir && f[2] == proto && f[3] == icmp
            })
            .count()
    };
    eprintln!("{rows}");
    assert_eq!(
        count("Ethernet1/1", IN, "ICMP", "8"),
        5,
        "requests in on 1/1"
    );
    assert_eq!(
        count("Ethernet1/1", OUT, "ICMP", "0"),
        5,
        "replies out of 1/1"
    );
    assert_eq!(
        count("Ethernet1/2", IN, "ICMP", "0"),
        5,
        "replies in on 1/2"
    );
    assert_eq!(
        count("Ethernet1/2", OUT, "ICMP", "8"),
        0,
        "1/2's tx is not watched"
    );
    assert!(
        count("Ethernet1/1", OUT, "LLDP", "") >= 1,
        "the switch's LLDPDU"
    );
    assert!(
        count("Ethernet1/1", OUT, "ARP", "") >= 1,
        "the switch's ARP reply"
    );
    // LLDPDUs may have come since the count above.
    assert!(rows.lines().count() as u64 >= frames);

    // The port session: what Ethernet1/1 saw, out of Ethernet1/3.
    let s2 = session(&sw, "2");
    assert_eq!(s2["state"], "up");
    drop(sw);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling the tshark process this test started.
    unsafe {
        libc::kill(capture.id() as libc::pid_t, libc::SIGINT);
    }
    let _ = capture.wait();
    let port_rows = tshark(&[
        "-r",
        port_cap.to_str().unwrap(),
        "-T",
        "fields",
        "-e",
        "icmp.type",
    ]);
    let icmp = |t: &str| port_rows.lines().filter(|l| *l == t).count();
    assert_eq!((icmp("8"), icmp("0")), (5, 5), "{port_rows}");
    assert!(s2["counters"]["mirrored"].as_u64().unwrap() >= 10, "{s2}");
}
