//! Fabric behaviour of whole labs (`railyard_control::lab`), with kernel
//! hosts sending real UDP through rails and spines:
//!
//! * Lossless incast: three hosts send a finite DSCP 24 burst from their
//!   rail-1 NICs to one host's rail-2 NIC through a single spine whose link
//!   to rail 2 is shaped to 10 Mb/s. With PFC on, the spine pauses rail 1,
//!   nothing lossless is dropped anywhere and every datagram arrives; with
//!   PFC off, the spine's queue 3 tail-drops and fewer arrive. Counters
//!   conserve on every switch.
//! * Load balancing on `rail-spine`: sixteen elephant flows from rail 1 to
//!   rail 2 under ECMP, flowlet and per-packet DLB; both spines carry
//!   traffic in every mode, per-packet spraying is balanced, and rail 1's
//!   `load_balancing` group reports its mode and member counters.
//!
//! Kernel hosts on veth do not honour PFC, so the congestion point is inside
//! the fabric (the shaped spine → rail 2 link) and the offered volume is
//! finite: rail 1's host-facing ports are given enough ingress headroom to
//! absorb what the hosts keep sending while rail 1's uplink is paused.
//!
//! Each lab has a unique name and its own state directory in a tempdir
//! (with the topology and templates written there); a guard brings it down
//! on drop, also when a test fails. Measured numbers go to stderr.

use std::collections::BTreeMap;
use std::net::UdpSocket;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{in_netns, shipped, TopoLab as Fabric};

const RAILYARD: &str = env!("CARGO_BIN_EXE_railyard");
/// The lossless priority / qos-group of DSCP 24 in the book's policy.
const PRIO: usize = 3;

impl Fabric {
    fn socket(&self, switch: &str) -> PathBuf {
        self.state
            .switches
            .iter()
            .find(|s| s.name == switch)
            .unwrap_or_else(|| panic!("no switch {switch}"))
            .socket
            .clone()
    }

    fn switch_names(&self) -> Vec<String> {
        self.state.switches.iter().map(|s| s.name.clone()).collect()
    }

    /// `railyard ARGS… --json --socket SWITCH.sock`, parsed.
    fn json(&self, switch: &str, args: &[&str]) -> Value {
        let out = Command::new(RAILYARD)
            .args(args)
            .arg("--json")
            .arg("--socket")
            .arg(self.socket(switch))
            .output()
            .expect("run railyard");
        assert!(
            out.status.success(),
            "{switch}: railyard {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("json")
    }

    fn show(&self, switch: &str) -> Value {
        self.json(switch, &["show", "interface"])
    }

    /// Every switch's `show interface --json`, once no queue holds a packet
    /// and no counter moved between two snapshots 300 ms apart (the
    /// switches publish counters every 100 ms).
    fn settled(&self, timeout: Duration) -> BTreeMap<String, Value> {
        let snap = || -> BTreeMap<String, Value> {
            self.switch_names()
                .into_iter()
                .map(|s| {
                    let v = self.show(&s);
                    (s, v)
                })
                .collect()
        };
        let deadline = Instant::now() + timeout;
        let mut last = snap();
        loop {
            std::thread::sleep(Duration::from_millis(300));
            let now = snap();
            let empty = now
                .values()
                .all(|s| ifaces(s).all(|(_, i)| queues(i).all(|q| n(&q["depth_packets"]) == 0)));
            let still = now.iter().all(|(k, s)| {
                ifaces(s).all(|(name, i)| {
                    let before = &last[k]["interfaces"][name];
                    n(&i["rx_packets"]) == n(&before["rx_packets"])
                        && n(&i["tx_packets"]) == n(&before["tx_packets"])
                })
            });
            if empty && still {
                return now;
            }
            assert!(Instant::now() < deadline, "fabric did not settle: {now:?}");
            last = now;
        }
    }
}

fn n(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a counter: {v}"))
}

fn ifaces(stats: &Value) -> impl Iterator<Item = (&String, &Value)> {
    stats["interfaces"].as_object().expect("interfaces").iter()
}

fn queues(i: &Value) -> impl Iterator<Item = &Value> {
    i["queues"].as_array().expect("queues").iter()
}

fn q(i: &Value, queue: usize, field: &str) -> u64 {
    n(&i["queues"][queue][field])
}

fn pfc_sum(i: &Value, field: &str) -> u64 {
    i["pfc"][field].as_array().expect("pfc").iter().map(n).sum()
}

/// `ip netns exec NS ping -c 1 -W 2 -I SRC DST`, up to three tries (the
/// first packet waits for ARP at every hop). Returns the echo requests sent.
fn ping(ns: &str, src: &str, dst: &str) -> u64 {
    for attempt in 1..=3 {
        let out = Command::new("ip")
            .args(["netns", "exec", ns, "ping", "-n", "-c", "1", "-W", "2"])
            .args(["-I", src, dst])
            .output()
            .expect("ping");
        if out.status.success() {
            return attempt;
        }
    }
    panic!("{ns}: ping -I {src} {dst} failed three times");
}

/// `railyard send` in a host's namespace, started now.
fn send(ns: &str, args: &[&str]) -> std::process::Child {
    Command::new("ip")
        .args(["netns", "exec", ns, RAILYARD, "send"])
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("railyard send")
}

/// Waits for a `railyard send` and returns the datagrams it reports sent.
fn sent(child: std::process::Child) -> u64 {
    let out = child.wait_with_output().expect("railyard send");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "railyard send: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(" 0 send errors"), "{text}");
    text.split_whitespace()
        .nth(1)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("no count in {text:?}"))
}

/// A UDP socket on `addr` in namespace `ns` counting datagrams until
/// `expect` arrived or none came for `idle`.
fn receiver(
    ns: &str,
    addr: &'static str,
    expect: u64,
    idle: Duration,
) -> std::thread::JoinHandle<u64> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = in_netns(ns, move || {
        let sock = UdpSocket::bind(addr).expect("bind receiver");
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
        sock.set_read_timeout(Some(idle)).expect("timeout");
        tx.send(()).expect("ready");
        let mut buf = [0u8; 2048];
        let mut got = 0;
        while got < expect && sock.recv(&mut buf).is_ok() {
            got += 1;
        }
        got
    });
    rx.recv_timeout(Duration::from_secs(5))
        .expect("receiver ready");
    h
}

/// Frames the port backends lost (AF_PACKET ring overruns, send errors).
fn backend_drops(stats: &BTreeMap<String, Value>) -> u64 {
    stats
        .values()
        .flat_map(|s| {
            ifaces(s)
                .map(|(_, i)| n(&i["backend_rx_dropped"]) + n(&i["backend_tx_errors"]))
                .collect::<Vec<_>>()
        })
        .sum()
}

// ---------------------------------------------------------------- incast

/// Pings h4's rail-2 address from h1..=`n`'s rail-1 NICs, so every hop's
/// neighbours are resolved before an incast measures forwarding.
fn resolve(lab: &Fabric, n: usize) {
    for h in 1..=n {
        ping(
            &lab.ns(&format!("h{h}")),
            &format!("10.1.{h}.2"),
            "10.2.4.2",
        );
    }
}

/// `railyard send` from h1..=`n`'s rail-1 NICs to h4's rail-2 address,
/// with `args` after the destination and source, all started now.
fn senders_to_h4(lab: &Fabric, n: usize, args: &[&str]) -> Vec<std::process::Child> {
    (1..=n)
        .map(|h| {
            let bind = format!("10.1.{h}.2");
            let mut all = vec!["--dst", "10.2.4.2", "--bind", &bind];
            all.extend_from_slice(args);
            send(&lab.ns(&format!("h{h}")), &all)
        })
        .collect()
}

/// One spine; rail 1's uplink at 1 Gb/s, the spine ↔ rail 2 link at
/// 10 Mb/s: the congestion point is the spine's Ethernet1/2.
const INCAST_TOPO: &str = "\
switch rail1  role rail
switch rail2  role rail
switch spine1 role spine
host h1
host h2
host h3
host h4
link h1:eth0 rail1:Ethernet1/1 speed 100000 subnet 10.1.1.0/24
link h2:eth0 rail1:Ethernet1/2 speed 100000 subnet 10.1.2.0/24
link h3:eth0 rail1:Ethernet1/3 speed 100000 subnet 10.1.3.0/24
link h4:eth0 rail1:Ethernet1/4 speed 100000 subnet 10.1.4.0/24
link h1:eth1 rail2:Ethernet1/1 speed 100000 subnet 10.2.1.0/24
link h2:eth1 rail2:Ethernet1/2 speed 100000 subnet 10.2.2.0/24
link h3:eth1 rail2:Ethernet1/3 speed 100000 subnet 10.2.3.0/24
link h4:eth1 rail2:Ethernet1/4 speed 100000 subnet 10.2.4.0/24
link rail1:Ethernet1/31 spine1:Ethernet1/1 speed 1000 subnet 10.255.1.0/31
link rail2:Ethernet1/31 spine1:Ethernet1/2 speed 10 subnet 10.255.2.0/31
";

/// Datagrams per sender, their UDP payload and each sender's rate: 3 × 600
/// × 1042-byte frames at 3 × 20 Mb/s into 10 Mb/s leave ≈ 1.5 MB to buffer.
const BURST: u64 = 600;
const SIZE: &str = "1000";
const MBPS: &str = "20";

/// The shipped `rail`/`spine` template adapted to the incast: an ingress
/// policy for qos-group 3 (xOFF 300 000 B, xON 120 000 B, 3.7 MB headroom,
/// so rail 1's host ports absorb what the PFC-deaf hosts keep sending),
/// queue 3 limited to 300 KB with WRED/ECN at 150–250 KB (so a lossy queue 3
/// tail-drops), no PFC watchdog (rail 1's uplink stays paused for longer
/// than its 100 ms while the 10 Mb/s link drains), and with `pfc` false
/// `priority-flow-control mode off` on every port.
fn incast_template(role: &str, pfc: bool) -> String {
    let wred = "random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes";
    let text = lossless_template(
        role,
        pfc,
        "pause buffer-size 4000000 pause-threshold 300000 resume-threshold 120000",
    );
    assert!(text.contains(wred));
    text.replace(
        wred,
        "queue-limit 300 kbytes\n    \
         random-detect minimum-threshold 150 kbytes maximum-threshold 250 kbytes",
    )
}

/// The shipped `role` template with an ingress policy giving qos-group 3
/// the `pause` line, without the PFC watchdog, and with `pfc` false
/// `priority-flow-control mode off` on every port.
fn lossless_template(role: &str, pfc: bool, pause: &str) -> String {
    let text = shipped(&format!("templates/{role}.conf"));
    assert!(text.contains("\nsystem qos\n"));
    let text = text
        .replace(
            "\nsystem qos\n",
            &format!(
                "\npolicy-map type queuing QOS_INGRESS\n  \
                 class type queuing c-in-q3\n    {pause}\n\
                 system qos\n  service-policy type queuing input QOS_INGRESS\n"
            ),
        )
        .replace("priority-flow-control watch-dog-interval on\n", "");
    if pfc {
        text
    } else {
        text.replace(
            "priority-flow-control mode on",
            "priority-flow-control mode off",
        )
    }
}

struct Incast {
    delivered: u64,
    sent: u64,
    stats: BTreeMap<String, Value>,
}

fn incast(pfc: bool) -> (Fabric, Incast) {
    let lab = Fabric::up(
        "ryf",
        "incast",
        INCAST_TOPO,
        &[
            ("rail", incast_template("rail", pfc)),
            ("spine", incast_template("spine", pfc)),
        ],
    );
    resolve(&lab, 3);
    let rx = receiver(
        &lab.ns("h4"),
        "10.2.4.2:4791",
        3 * BURST,
        Duration::from_secs(3),
    );
    let t0 = Instant::now();
    let burst = BURST.to_string();
    let senders = senders_to_h4(
        &lab,
        3,
        &[
            "--dscp", "24", "--mbps", MBPS, "--count", &burst, "--size", SIZE,
        ],
    );
    let sent: u64 = senders.into_iter().map(sent).sum();
    let delivered = rx.join().expect("receiver");
    eprintln!(
        "incast PFC {}: {delivered}/{sent} datagrams at h4 after {:?}",
        if pfc { "on" } else { "off" },
        t0.elapsed()
    );
    let stats = lab.settled(Duration::from_secs(15));
    (
        lab,
        Incast {
            delivered,
            sent,
            stats,
        },
    )
}

/// Per queue: offered = tx + WRED + tail + depth. Per switch (queues
/// drained): every frame received was punted (ARP, ICMP to the switch,
/// LLDP, PFC frames — `punted` counts them all), dropped before a queue, or
/// offered to a queue; and every frame sent left a queue or was originated
/// by the switch ahead of the queues: PFC pause/resume frames, LLDPDUs (the
/// LLDP agent's `frames_out`), and ARP/ICMP replies and the switch's own ARP
/// requests, which the counters do not separate. Those last are bounded:
/// at most one reply per punted non-PFC, non-LLDP frame, plus a few
/// requests per port.
fn assert_conserved(lab: &Fabric, name: &str, s: &Value) {
    let lldp = lab.json(name, &["show", "lldp", "traffic"]);
    let (mut rx, mut punted, mut early_drops, mut offered) = (0, 0, 0, 0);
    let (mut tx, mut queue_tx, mut pfc_tx, mut pfc_rx) = (0, 0, 0, 0);
    let (mut lldp_out, mut lldp_in, mut ports) = (0, 0, 0);
    for (ifname, i) in ifaces(s) {
        ports += 1;
        for (k, qs) in queues(i).enumerate() {
            assert_eq!(
                n(&qs["offered_packets"]),
                n(&qs["tx_packets"])
                    + n(&qs["wred_drops"])
                    + n(&qs["tail_drops"])
                    + n(&qs["depth_packets"]),
                "{name} {ifname} queue {k}: offered != tx + wred + tail + depth: {qs}"
            );
            offered += n(&qs["offered_packets"]);
            queue_tx += n(&qs["tx_packets"]);
        }
        rx += n(&i["rx_packets"]);
        tx += n(&i["tx_packets"]);
        punted += n(&i["punted"]);
        // Queue drops are inside `offered`; the rest happened before a queue.
        early_drops += i["drops"]
            .as_object()
            .expect("drops")
            .iter()
            .filter(|(k, _)| !matches!(k.as_str(), "tail_drop" | "wred"))
            .map(|(_, v)| n(v))
            .sum::<u64>();
        pfc_tx += pfc_sum(i, "tx_pause") + pfc_sum(i, "tx_resume");
        pfc_rx += pfc_sum(i, "rx_pause") + pfc_sum(i, "rx_resume");
        let l = &lldp["interfaces"][ifname.as_str()];
        lldp_out += l["frames_out"].as_u64().unwrap_or(0);
        lldp_in += l["frames_in"].as_u64().unwrap_or(0);
    }
    assert_eq!(
        rx,
        punted + early_drops + offered,
        "{name}: rx != punted + drops before a queue + offered"
    );
    let originated = tx - queue_tx - pfc_tx;
    let replies = punted - pfc_rx - lldp_in.min(punted - pfc_rx);
    assert!(
        originated >= lldp_out && originated <= lldp_out + replies + 4 * ports,
        "{name}: tx {tx} = queue tx {queue_tx} + PFC {pfc_tx} + {originated} originated, \
         but LLDP sent {lldp_out} and at most {replies} replies"
    );
    eprintln!(
        "  {name}: rx {rx} = punted {punted} (PFC {pfc_rx}, LLDP {lldp_in}) + drops {early_drops} \
         + offered {offered}; tx {tx} = queues {queue_tx} + PFC {pfc_tx} + LLDP {lldp_out} \
         + ARP/ICMP {}",
        originated - lldp_out
    );
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn lossless_incast_pauses_the_rails_and_drops_nothing_until_pfc_is_off() {
    let t0 = Instant::now();
    // ---- PFC on.
    let (lab, on) = incast(true);
    let spine = &on.stats["spine1"]["interfaces"];
    let rail1 = &on.stats["rail1"]["interfaces"];
    let spine_pause = n(&spine["Ethernet1/1"]["pfc"]["tx_pause"][PRIO]);
    let rail1_rx_pause = n(&rail1["Ethernet1/31"]["pfc"]["rx_pause"][PRIO]);
    let rail1_host_pause: u64 = (1..=3)
        .map(|h| n(&rail1[format!("Ethernet1/{h}")]["pfc"]["tx_pause"][PRIO]))
        .sum();
    eprintln!(
        "incast PFC on: spine1 Ethernet1/1 sent {spine_pause} XOFF / {} XON to rail1; \
         rail1 Ethernet1/31 received {rail1_rx_pause} XOFF, paused {} ms; \
         rail1 sent {rail1_host_pause} XOFF to its (PFC-deaf) hosts; \
         max queue 3 depth: spine1 Ethernet1/2 {} B, rail1 Ethernet1/31 {} B",
        n(&spine["Ethernet1/1"]["pfc"]["tx_resume"][PRIO]),
        n(&rail1["Ethernet1/31"]["pfc"]["paused_ns"][PRIO]) / 1_000_000,
        q(&spine["Ethernet1/2"], PRIO, "max_depth_bytes"),
        q(&rail1["Ethernet1/31"], PRIO, "max_depth_bytes"),
    );
    assert!(spine_pause > 0, "the spine never paused rail1");
    assert!(rail1_rx_pause > 0, "rail1 never saw the spine's pause");
    assert!(
        q(&rail1["Ethernet1/31"], PRIO, "max_depth_bytes") > 100_000,
        "rail1 held its uplink's queue 3 back"
    );
    for (sw, s) in &on.stats {
        for (ifname, i) in ifaces(s) {
            assert_eq!(
                q(i, PRIO, "tail_drops") + q(i, PRIO, "wred_drops"),
                0,
                "{sw} {ifname}: lossless queue dropped"
            );
            assert_eq!(
                n(&i["drops"]["ingress_overflow"]),
                0,
                "{sw} {ifname}: ingress headroom overflowed"
            );
        }
    }
    assert_eq!(on.sent, 3 * BURST);
    assert_eq!(on.delivered, on.sent, "lossless datagrams lost");
    assert_eq!(
        q(
            &on.stats["rail2"]["interfaces"]["Ethernet1/4"],
            PRIO,
            "tx_packets"
        ),
        on.sent
    );
    for (sw, s) in &on.stats {
        assert_conserved(&lab, sw, s);
    }
    drop(lab);

    // ---- PFC off: the same burst overflows the spine's queue 3.
    let (lab, off) = incast(false);
    let spine = &off.stats["spine1"]["interfaces"];
    let congested = &spine["Ethernet1/2"];
    let (tail, wred) = (
        q(congested, PRIO, "tail_drops"),
        q(congested, PRIO, "wred_drops"),
    );
    let pauses: u64 = off
        .stats
        .values()
        .flat_map(|s| {
            ifaces(s)
                .map(|(_, i)| pfc_sum(i, "tx_pause"))
                .collect::<Vec<_>>()
        })
        .sum();
    eprintln!(
        "incast PFC off: spine1 Ethernet1/2 queue 3 tail drops {tail}, WRED drops {wred}, \
         ECN marked {}; {} of {} datagrams at h4; {pauses} pause frames sent",
        q(congested, PRIO, "ecn_marked"),
        off.delivered,
        off.sent
    );
    assert_eq!(pauses, 0, "PFC is off, yet a switch paused");
    assert!(
        tail + wred > 0,
        "no drops at the congestion point without PFC"
    );
    assert!(
        off.delivered < off.sent,
        "every datagram arrived without PFC"
    );
    // Every tail-dropped datagram is missing at h4. (On a loaded machine a
    // few more may go missing outside the switches' queues, e.g. in a
    // veth's AF_PACKET ring: `backend_rx_dropped`, printed below.)
    assert!(
        off.delivered + tail + wred <= off.sent,
        "more datagrams at h4 than the spine let through"
    );
    eprintln!(
        "incast PFC off: {} datagrams missing beyond the tail drops; backend drops {}",
        off.sent - off.delivered - tail - wred,
        backend_drops(&off.stats)
    );
    for (sw, s) in &off.stats {
        assert_conserved(&lab, sw, s);
    }
    drop(lab);
    eprintln!("incast test: {:?}", t0.elapsed());
}

// ---------------------------------------------------------------- sustained incast

/// Seconds each sustained incast runs, and each sender's rate (Mb/s) into a
/// 100 Mb/s congestion point behind 1 Gb/s switch–switch links.
const SUSTAINED_SECS: &str = "10";
const SUSTAINED_MBPS: &str = "100";

/// The shipped `rail-spine` at speeds a veth lab carries: switch–switch
/// links at 1 Gb/s, rail 2's Ethernet1/4 (h4's second NIC) at 100 Mb/s.
fn sustained_rail_spine() -> String {
    let topo = shipped("rail-spine.topo");
    let mut out = String::new();
    for line in topo.lines() {
        let line = if line.starts_with("link rail") {
            line.replace("speed 100000", "speed 1000")
        } else if line.starts_with("link h4:eth1") {
            line.replace("speed 100000", "speed 100")
        } else {
            line.to_string()
        };
        out.push_str(&line);
        out.push('\n');
    }
    assert_eq!(out.matches("speed 1000 ").count(), 4, "{out}");
    out
}

/// Two switches in a chain: three hosts on `sw1`, the congested host on
/// `sw2`, one 1 Gb/s link between them.
const CHAIN_TOPO: &str = "\
switch sw1 role rail
switch sw2 role rail
host h1
host h2
host h3
host h4
link h1:eth0 sw1:Ethernet1/1 speed 100000 subnet 10.1.1.0/24
link h2:eth0 sw1:Ethernet1/2 speed 100000 subnet 10.1.2.0/24
link h3:eth0 sw1:Ethernet1/3 speed 100000 subnet 10.1.3.0/24
link h4:eth1 sw2:Ethernet1/4 speed 100 subnet 10.2.4.0/24
link sw1:Ethernet1/31 sw2:Ethernet1/31 speed 1000 subnet 10.255.1.0/31
";

/// The shipped template with the ingress thresholds a software path needs
/// (docs/qos-pfc.md, "Headroom on a software path"): xOFF 1 MB, xON
/// 500 KB, and 8 MB of headroom, what a peer sends at 1 Gb/s while a worker
/// is descheduled for 64 ms; without the PFC watchdog, since a congestion
/// point ten times slower than the links holds the upstream pauses for
/// seconds, which a watchdog rightly takes for a storm. With `pfc` false,
/// `priority-flow-control mode off` everywhere. Ports bind through
/// `backend` (`af-packet`, the template's own, or `af-xdp`); af-packet
/// ports with a 256 MiB receive ring, about a second of a 1 Gb/s peer's
/// 1 KB frames in the per-frame ring's 2 KiB slots, af-xdp ports with 64
/// MiB (16,384 frames of 4 KiB, over a second at these tests' rates),
/// since on a busy 2-core machine a switch's worker was seen descheduled
/// for longer than the defaults hold (32 MiB; 2,048 af-xdp frames, 0.17 s
/// at 12,000 frames a second). A kernel ring overflow is loss PFC cannot
/// prevent.
fn sustained_template(role: &str, pfc: bool, backend: &str) -> String {
    let bind = match backend {
        "af-packet" => "bind af-packet {{ifname}} ring 256".to_string(),
        "af-xdp" => "bind af-xdp {{ifname}} ring 64".to_string(),
        other => format!("bind {other} {{{{ifname}}}}"),
    };
    lossless_template(
        role,
        pfc,
        "pause buffer-size 9000000 pause-threshold 1000000 resume-threshold 500000",
    )
    .replace("bind af-packet {{ifname}}", &bind)
}

/// Hosts h1..=`n` each send DSCP 24 (the lossless class) to h4's rail-2
/// address for [`SUSTAINED_SECS`] at [`SUSTAINED_MBPS`], 8 flows each;
/// returns every switch's counters once the fabric has drained.
fn sustained_incast(lab: &Fabric, n: usize) -> BTreeMap<String, Value> {
    resolve(lab, n);
    let t0 = Instant::now();
    let senders = senders_to_h4(
        lab,
        n,
        &[
            "--mbps",
            SUSTAINED_MBPS,
            "--duration",
            SUSTAINED_SECS,
            "--flows",
            "8",
        ],
    );
    let sent: u64 = senders.into_iter().map(sent).sum();
    eprintln!(
        "sustained incast {n}:1: {sent} datagrams sent in {:?}",
        t0.elapsed()
    );
    lab.settled(Duration::from_secs(120))
}

/// Asserts that every port of every switch runs on `backend` (af-packet
/// with the ring [`sustained_template`] asks for).
fn assert_backend(stats: &BTreeMap<String, Value>, backend: &str) {
    for (sw, s) in stats {
        for (ifname, i) in ifaces(s) {
            let described = i["backend"].as_str().unwrap_or_default();
            assert!(
                described.starts_with(backend),
                "{sw} {ifname} runs on {described}, not {backend}"
            );
            if backend == "af-packet" {
                assert!(
                    described.ends_with("(ring 256 MiB, frames)"),
                    "{sw} {ifname}: {described}"
                );
            }
        }
    }
}

/// Checks that no lossless packet was lost on a port between two
/// switches: no ingress overflow, no tail or WRED drop in queue 3, nothing
/// lost in the backend's ring or for want of a buffer. Returns the XOFF
/// frames those ports sent, so a caller can check the pause was exercised.
///
/// # Errors
/// The first loss found.
fn lossless_between_switches(
    stats: &BTreeMap<String, Value>,
    switch_ports: &[(&str, &str)],
) -> Result<u64, String> {
    let mut pauses = 0;
    for (sw, port) in switch_ports {
        let i = &stats[*sw]["interfaces"][*port];
        let drop = |reason: &str| i["drops"][reason].as_u64().unwrap_or(0);
        eprintln!(
            "  {sw} {port}: rx {} tx {}, XOFF sent {} received {}, ingress peak {} B, \
             queue 3 max {} B, ring wait max {} µs, drops {}",
            n(&i["rx_packets"]),
            n(&i["tx_packets"]),
            n(&i["pfc"]["tx_pause"][PRIO]),
            n(&i["pfc"]["rx_pause"][PRIO]),
            n(&i["pfc"]["ingress_peak_bytes"][PRIO]),
            q(i, PRIO, "max_depth_bytes"),
            n(&i["backend_rx_wait_max_ns"]) / 1_000,
            i["drops"]
        );
        for reason in ["ingress_overflow", "tail_drop", "wred", "no_buffer"] {
            if drop(reason) != 0 {
                return Err(format!("{sw} {port}: {} {reason} drops", drop(reason)));
            }
        }
        let queue_drops = q(i, PRIO, "tail_drops") + q(i, PRIO, "wred_drops");
        if queue_drops != 0 {
            return Err(format!("{sw} {port}: {queue_drops} queue 3 drops"));
        }
        if n(&i["backend_rx_dropped"]) != 0 {
            return Err(format!(
                "{sw} {port}: ring overflow of {}",
                n(&i["backend_rx_dropped"])
            ));
        }
        pauses += n(&i["pfc"]["tx_pause"][PRIO]);
    }
    Ok(pauses)
}

/// A worker gap, or a wait in a kernel ring, longer than the lossless
/// class's headroom covers: the tests' 8 MB above xOFF is 64 ms of a
/// 1 Gb/s link, so a switch that reads nothing for longer while its peer
/// still sends loses frames, in its kernel ring or past its headroom,
/// whatever PFC does; and frames still in the ring are not yet accounted,
/// so a switch running behind its ring by more sees them only after the
/// headroom is gone. Seen on the 2-core test machine: gaps of 100 ms to
/// 1.2 s, two switches' workers stopped for 998 ms at the same moment, and
/// a loss after gaps of at most 28 ms.
const STALL_NS: u64 = 60_000_000;
/// Runs of a case that lost frames after such a gap before it must pass.
const STALLED_RUNS: usize = 2;

/// The longest poll gap of any switch's worker, or wait of a frame in any
/// port's kernel ring, in ns.
fn longest_stall(stats: &BTreeMap<String, Value>) -> u64 {
    let gaps = stats
        .values()
        .flat_map(|s| s["poll_gaps"].as_array().cloned().unwrap_or_default())
        .map(|g| n(&g["max_ns"]));
    let waits = stats.values().flat_map(|s| {
        ifaces(s)
            .map(|(_, i)| n(&i["backend_rx_wait_max_ns"]))
            .collect::<Vec<_>>()
    });
    gaps.chain(waits).max().unwrap_or(0)
}

/// Runs `case` (a lab brought up and an incast run, returning the
/// switches' counters) and checks it with `check`; when that fails after a
/// worker stood still, or a frame waited in a ring, for longer than
/// [`STALL_NS`], says so and runs the case again, up to [`STALLED_RUNS`]
/// times. A loss without such a gap fails at once. Returns the passing run's counters and result.
fn lossless_unless_stalled<T>(
    what: &str,
    mut case: impl FnMut() -> BTreeMap<String, Value>,
    check: impl Fn(&BTreeMap<String, Value>) -> Result<T, String>,
) -> (BTreeMap<String, Value>, T) {
    let mut stalled = 0;
    loop {
        let stats = case();
        let e = match check(&stats) {
            Ok(t) => return (stats, t),
            Err(e) => e,
        };
        let stall = longest_stall(&stats);
        assert!(
            stall >= STALL_NS && stalled < STALLED_RUNS,
            "{what}: {e} (longest worker gap or ring wait {} ms, {stalled} earlier run(s) \
             stalled)",
            stall / 1_000_000
        );
        stalled += 1;
        eprintln!(
            "  {what}: {e} after a worker stood still or a ring waited {} ms, longer than the \
             headroom covers; running the case again",
            stall / 1_000_000
        );
    }
}

/// The rail-spine ports that face another switch.
const RAIL_SPINE_LINKS: [(&str, &str); 8] = [
    ("rail1", "Ethernet1/31"),
    ("rail1", "Ethernet1/32"),
    ("rail2", "Ethernet1/31"),
    ("rail2", "Ethernet1/32"),
    ("spine1", "Ethernet1/1"),
    ("spine1", "Ethernet1/2"),
    ("spine2", "Ethernet1/1"),
    ("spine2", "Ethernet1/2"),
];

/// A sustained 2:1 and 3:1 incast in the lossless class through rail 1,
/// both spines and rail 2, over AF_PACKET and over AF_XDP, loses nothing on
/// any switch–switch link, and the only lossless drops are at rail 1's host
/// ports, whose kernel peers do not honour PFC; with PFC off the congestion
/// point drops, and counts it.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn sustained_incast_on_rail_spine_loses_nothing_between_switches() {
    let t0 = Instant::now();
    let topo = sustained_rail_spine();
    for (backend, senders) in [
        ("af-packet", 2),
        ("af-packet", 3),
        ("af-xdp", 2),
        ("af-xdp", 3),
    ] {
        let mut lab = None;
        let (stats, pauses) = lossless_unless_stalled(
            &format!("{backend} {senders}:1"),
            || {
                // A second run starts from a new lab; the first goes down.
                lab = None;
                let l = lab.insert(Fabric::up(
                    "ryf",
                    "rail-spine",
                    &topo,
                    &[
                        ("rail", sustained_template("rail", true, backend)),
                        ("spine", sustained_template("spine", true, backend)),
                    ],
                ));
                sustained_incast(l, senders)
            },
            |stats| lossless_between_switches(stats, &RAIL_SPINE_LINKS),
        );
        let lab = lab.expect("the lab of the passing run");
        assert_backend(&stats, backend);
        assert!(
            pauses > 0,
            "{backend} {senders}:1 incast: no switch paused another"
        );
        // What the hosts sent beyond the pause was dropped at rail 1's
        // host ports, counted as such.
        let host_drops: u64 = (1..=senders)
            .map(|h| {
                let i = &stats["rail1"]["interfaces"][format!("Ethernet1/{h}").as_str()];
                i["drops"]["ingress_overflow"].as_u64().unwrap_or(0) + n(&i["backend_rx_dropped"])
            })
            .sum();
        eprintln!("  rail1 host ports dropped {host_drops} (PFC-deaf kernel senders)");
        assert!(host_drops > 0, "{senders}:1 incast never congested rail 1");
        for (sw, s) in &stats {
            assert_conserved(&lab, sw, s);
        }
    }
    // PFC off: the congestion point's queue 3 drops, and says so.
    let lab = Fabric::up(
        "ryf",
        "rail-spine",
        &topo,
        &[
            ("rail", sustained_template("rail", false, "af-packet")),
            ("spine", sustained_template("spine", false, "af-packet")),
        ],
    );
    let stats = sustained_incast(&lab, 2);
    let congested = &stats["rail2"]["interfaces"]["Ethernet1/4"];
    let dropped = q(congested, PRIO, "tail_drops") + q(congested, PRIO, "wred_drops");
    eprintln!("  PFC off: rail2 Ethernet1/4 queue 3 dropped {dropped}");
    assert!(dropped > 0, "no drops at the congestion point without PFC");
    for (sw, s) in &stats {
        assert_conserved(&lab, sw, s);
    }
    eprintln!("sustained incast on rail-spine: {:?}", t0.elapsed());
}

/// The same promise on the shortest path between two switches, once over
/// AF_PACKET (the shipped template's backend) and once over AF_XDP.
#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn sustained_incast_on_a_two_switch_chain_loses_nothing_between_them() {
    for backend in ["af-packet", "af-xdp"] {
        let mut lab = None;
        let (stats, pauses) = lossless_unless_stalled(
            backend,
            || {
                lab = None;
                let l = lab.insert(Fabric::up(
                    "ryf",
                    "chain",
                    CHAIN_TOPO,
                    &[("rail", sustained_template("rail", true, backend))],
                ));
                sustained_incast(l, 3)
            },
            |stats| {
                lossless_between_switches(
                    stats,
                    &[("sw1", "Ethernet1/31"), ("sw2", "Ethernet1/31")],
                )
            },
        );
        let lab = lab.expect("the lab of the passing run");
        assert_backend(&stats, backend);
        assert!(pauses > 0, "{backend}: sw2 never paused sw1");
        for (sw, s) in &stats {
            assert_conserved(&lab, sw, s);
        }
    }
}

// ---------------------------------------------------------------- load balancing

struct LbRun {
    mode: &'static str,
    up1: u64,
    up2: u64,
    reorder_risk: u64,
    moves: u64,
}

impl LbRun {
    /// (max − min) / max of the two uplinks' bytes.
    fn imbalance(&self) -> f64 {
        let (hi, lo) = (self.up1.max(self.up2), self.up1.min(self.up2));
        if hi == 0 {
            1.0
        } else {
            (hi - lo) as f64 / hi as f64
        }
    }
}

/// `rail-spine` with rail template `rail` for `mode` "ecmp", else the
/// shipped `rail-dlb` with `mode MODE`; h1 and h2 send 8 DSCP 24 flows each
/// from their rail-1 NICs to h3's and h4's rail-2 NICs.
fn lb_run(mode: &'static str) -> LbRun {
    let rail = match mode {
        "ecmp" => shipped("templates/rail.conf"),
        m => {
            let t = shipped("templates/rail-dlb.conf");
            assert!(t.contains("  mode flowlet\n"));
            t.replace("  mode flowlet\n", &format!("  mode {m}\n"))
        }
    };
    let lab = Fabric::up(
        "ryf",
        "rail-spine",
        &shipped("rail-spine.topo"),
        &[("rail", rail), ("spine", shipped("templates/spine.conf"))],
    );
    let pairs = [
        ("h1", "10.1.1.2", "10.2.3.2", "10.2.3.0/24"),
        ("h2", "10.1.2.2", "10.2.4.2", "10.2.4.0/24"),
    ];
    let pings: Vec<u64> = pairs
        .iter()
        .map(|(h, src, dst, _)| ping(&lab.ns(h), src, dst))
        .collect();
    let before = lab.show("rail1");
    let senders: Vec<_> = pairs
        .iter()
        .map(|(h, src, dst, _)| {
            send(
                &lab.ns(h),
                &[
                    "--dst",
                    dst,
                    "--bind",
                    src,
                    "--dscp",
                    "24",
                    "--flows",
                    "8",
                    "--mbps",
                    "30",
                    "--duration",
                    "2",
                    "--size",
                    "1000",
                ],
            )
        })
        .collect();
    let sent: Vec<u64> = senders.into_iter().map(sent).collect();
    let stats = lab.settled(Duration::from_secs(10));
    let rail1 = &stats["rail1"];
    let bytes = |port: &str| {
        q(&rail1["interfaces"][port], PRIO, "tx_bytes")
            - q(&before["interfaces"][port], PRIO, "tx_bytes")
    };
    let (mut reorder_risk, mut moves) = (0, 0);
    for (((_, _, _, prefix), sent), pings) in pairs.iter().zip(&sent).zip(&pings) {
        let g = &rail1["load_balancing"][*prefix];
        assert_eq!(g["mode"], mode, "rail1 group {prefix}: {g}");
        let members = g["members"].as_array().expect("members");
        let names: Vec<&str> = members
            .iter()
            .filter_map(|m| m["interface"].as_str())
            .collect();
        assert_eq!(names, ["Ethernet1/31", "Ethernet1/32"], "{g}");
        let total: u64 = members.iter().map(|m| n(&m["packets"])).sum();
        // The datagrams, plus the echo requests that resolved the path.
        assert!(
            (*sent..=*sent + pings).contains(&total),
            "rail1 group {prefix}: members sum to {total} packets, {sent} datagrams + {pings} pings sent: {g}"
        );
        reorder_risk += n(&g["reorder_risk"]);
        moves += n(&g["flowlet_moves"]);
    }
    // Both spines forwarded the traffic towards rail 2.
    for spine in ["spine1", "spine2"] {
        let tx = q(
            &stats[spine]["interfaces"]["Ethernet1/2"],
            PRIO,
            "tx_packets",
        );
        assert!(tx > 0, "{mode}: nothing crossed {spine}");
    }
    let r = LbRun {
        mode,
        up1: bytes("Ethernet1/31"),
        up2: bytes("Ethernet1/32"),
        reorder_risk,
        moves,
    };
    // Every datagram left by an uplink, as a 1042-byte frame: exactly so
    // on an idle machine; under load a few may be lost before the uplink
    // queue (e.g. an AF_PACKET ring or a worker handoff overflowing), so
    // allow 1 % and print them.
    let expect = sent.iter().sum::<u64>() * 1042;
    let drops: BTreeMap<&String, u64> = ifaces(rail1)
        .flat_map(|(_, i)| i["drops"].as_object().expect("drops").iter())
        .map(|(k, v)| (k, n(v)))
        .filter(|(_, v)| *v > 0)
        .collect();
    if r.up1 + r.up2 != expect {
        eprintln!(
            "{mode}: uplinks sent {} of {expect} bytes; rail1 drops {drops:?}, backend drops {}",
            r.up1 + r.up2,
            backend_drops(&stats)
        );
    }
    assert!(
        r.up1 + r.up2 <= expect && (r.up1 + r.up2) * 100 >= expect * 99,
        "{mode}: uplink queue 3 sent {} bytes, {expect} expected (datagrams × 1042-byte frames)",
        r.up1 + r.up2
    );
    r
}

#[test]
#[ignore = "needs root and network namespaces; run by scripts/test.sh"]
fn rail1_spreads_elephants_over_both_spines_in_every_load_balancing_mode() {
    let t0 = Instant::now();
    let runs: Vec<LbRun> = ["ecmp", "flowlet", "per-packet"]
        .into_iter()
        .map(lb_run)
        .collect();
    eprintln!("mode       | Ethernet1/31 bytes | Ethernet1/32 bytes | imbalance | reorder risk | flowlet moves");
    for r in &runs {
        eprintln!(
            "{:<10} | {:>18} | {:>18} | {:>8.1} % | {:>12} | {:>13}",
            r.mode,
            r.up1,
            r.up2,
            100.0 * r.imbalance(),
            r.reorder_risk,
            r.moves
        );
    }
    for r in &runs {
        assert!(r.up1 > 0 && r.up2 > 0, "{}: one uplink unused", r.mode);
    }
    let pp = &runs[2];
    assert!(
        pp.imbalance() <= 0.10,
        "per-packet imbalance {:.1} %",
        100.0 * pp.imbalance()
    );
    eprintln!("load-balancing test: {:?}", t0.elapsed());
}
