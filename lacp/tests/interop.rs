//! The agent against real LACP peers and a real dissector: Linux bonding
//! and Open vSwitch on veth pairs in a network namespace, driven through
//! AF_PACKET sockets, and Wireshark's `tshark` on a capture of the agent's
//! LACPDUs. All ignored by default: they need root, namespaces and the
//! peer installed.
//!
//! Each test builds its own namespace and links with unique names and
//! tears them down in a `Drop` guard, so a failed assertion leaves nothing
//! behind. Processes the tests start are ended by their own PID.

// The AF_PACKET socket has no safe wrapper in the workspace's dependencies.
#![allow(unsafe_code)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::sleep;
use std::time::{Duration, Instant};

use railyard_lacp::wire::{LacpduRepr, MacAddr, SystemId, ETHERTYPE_SLOW};
use railyard_lacp::{Agent, Mode, Nanos, PortConfig, Rate, NS_PER_S};

/// The agent's system ID in every interop test.
const AGENT_SYSTEM: SystemId = SystemId {
    priority: 32768,
    mac: MacAddr([0x02, 0x4c, 0x41, 0x43, 0x50, 0x01]),
};

/// The port-channel the agent's two ports form.
const CHANNEL: u16 = 7;

/// How long a peer gets to bundle both links with the agent.
const BUNDLE_WITHIN: Duration = Duration::from_secs(10);

/// Runs `cmd` with `args`, failing the test with its output when it fails.
fn run(cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cmd}: {e}"));
    assert!(
        out.status.success(),
        "{cmd} {} failed: {}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Names unique to this process and call, short enough for interfaces
/// (15 characters at most).
fn unique(prefix: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    format!("{prefix}{}{n}", std::process::id() % 100_000)
}

/// A network namespace with two veth pairs: the `host` ends stay here
/// for the agent, the `peer` ends are in the namespace for the peer.
/// Dropping it deletes the namespace (and so both pairs) and any host end
/// left over.
struct Topology {
    netns: String,
    host: [String; 2],
    peer: [String; 2],
}

impl Topology {
    fn new() -> Topology {
        let tag = unique("");
        let t = Topology {
            netns: format!("railyard-lacp-{tag}"),
            host: [format!("lyh{tag}a"), format!("lyh{tag}b")],
            peer: [format!("lyp{tag}a"), format!("lyp{tag}b")],
        };
        run("ip", &["netns", "add", &t.netns]);
        for (h, p) in t.host.iter().zip(&t.peer) {
            run(
                "ip",
                &[
                    "link", "add", h, "type", "veth", "peer", "name", p, "netns", &t.netns,
                ],
            );
            run("ip", &["link", "set", h, "up"]);
        }
        t
    }

    /// Runs a command inside the namespace.
    fn exec(&self, cmd: &str, args: &[&str]) -> String {
        let mut all = vec!["netns", "exec", &self.netns, cmd];
        all.extend_from_slice(args);
        run("ip", &all)
    }

    fn host_mac(&self, i: usize) -> MacAddr {
        let text = std::fs::read_to_string(format!("/sys/class/net/{}/address", self.host[i]))
            .expect("host end address");
        text.trim().parse().expect("a MAC")
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.netns])
            .status();
        for h in &self.host {
            let _ = Command::new("ip")
                .args(["link", "del", h])
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// An AF_PACKET socket bound to one interface that sees only Slow
/// Protocols frames.
struct SlowSocket {
    fd: OwnedFd,
}

impl SlowSocket {
    fn open(ifname: &str) -> io::Result<SlowSocket> {
        let name = CString::new(ifname).map_err(|_| io::ErrorKind::InvalidInput)?;
        // SAFETY: `name` is a NUL-terminated string that outlives the call.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::last_os_error());
        }
        let proto = ETHERTYPE_SLOW.to_be();
        // SAFETY: plain socket(2) call; the result is checked before use.
        let fd = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                i32::from(proto),
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: an all-zero sockaddr_ll is a valid value of the type.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: `sll` is a valid sockaddr_ll of the length passed.
        let r = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(SlowSocket { fd })
    }

    fn send(&self, frame: &[u8]) {
        // SAFETY: `frame` is valid for `frame.len()` bytes during the call.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        assert_eq!(
            n,
            frame.len() as isize,
            "send: {}",
            io::Error::last_os_error()
        );
    }

    /// The next frame received (not sent) on the interface, if any.
    fn recv(&self, buf: &mut [u8]) -> Option<usize> {
        loop {
            // SAFETY: an all-zero sockaddr_ll is a valid value of the type.
            let mut from: libc::sockaddr_ll = unsafe { zeroed() };
            let mut len = size_of::<libc::sockaddr_ll>() as libc::socklen_t;
            // SAFETY: `buf` and `from` are valid for the lengths passed.
            let n = unsafe {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    buf.as_mut_ptr().cast(),
                    buf.len(),
                    libc::MSG_DONTWAIT,
                    (&mut from as *mut libc::sockaddr_ll).cast(),
                    &mut len,
                )
            };
            if n < 0 {
                return None;
            }
            if from.sll_pkttype != libc::PACKET_OUTGOING {
                return Some(n as usize);
            }
        }
    }
}

/// Frames seen in a run, for a capture file: time, bytes.
type Capture = Vec<(Nanos, Vec<u8>)>;

/// Drives an agent with ports 1 and 2 (port-channel [`CHANNEL`], fast
/// rate, active) on the topology's host ends in real time until `done`
/// says the peer is satisfied and both ports distribute, or until
/// [`BUNDLE_WITHIN`] has passed. Returns the agent and what went over the
/// wire.
fn drive(topo: &Topology, mut done: impl FnMut() -> bool) -> (Agent, Capture, bool) {
    let mut agent = Agent::new(AGENT_SYSTEM);
    let sockets: Vec<SlowSocket> = topo
        .host
        .iter()
        .map(|h| SlowSocket::open(h).expect("AF_PACKET socket"))
        .collect();
    let start = Instant::now();
    let now = || start.elapsed().as_nanos() as Nanos;
    for (i, port) in [1u16, 2].into_iter().enumerate() {
        let mut cfg = PortConfig::new(topo.host_mac(i), CHANNEL, port);
        cfg.rate = Rate::Fast;
        cfg.mode = Mode::Active;
        agent.add_port(port, cfg).unwrap();
        agent.set_link(port, true, now());
    }
    let mut capture = Capture::new();
    let mut buf = [0u8; 2048];
    let mut last_check = Duration::ZERO;
    while start.elapsed() < BUNDLE_WITHIN {
        agent.poll(now(), &mut |port, frame| {
            sockets[usize::from(port - 1)].send(frame);
            capture.push((now(), frame.to_vec()));
        });
        for (i, s) in sockets.iter().enumerate() {
            while let Some(n) = s.recv(&mut buf) {
                let frame = &buf[..n];
                capture.push((now(), frame.to_vec()));
                let _ = agent.receive(i as u16 + 1, now(), frame);
            }
        }
        if start.elapsed() >= last_check + Duration::from_millis(250) {
            last_check = start.elapsed();
            if agent.distributing(1) && agent.distributing(2) && done() {
                return (agent, capture, true);
            }
        }
        sleep(Duration::from_millis(5));
    }
    (agent, capture, false)
}

/// One slave's lines in /proc/net/bonding/BOND.
struct Slave {
    name: String,
    aggregator: Option<u32>,
    partner_mac: Option<String>,
}

/// The bond's active aggregator ID, its partner MAC, and each slave's
/// aggregator and partner system as /proc/net/bonding shows them.
fn parse_bonding(text: &str) -> (Option<u32>, Option<String>, Vec<Slave>) {
    let mut active = None;
    let mut partner = None;
    let mut slaves: Vec<Slave> = Vec::new();
    let mut in_active = false;
    let mut in_partner_pdu = false;
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_prefix("Slave Interface:") {
            slaves.push(Slave {
                name: name.trim().to_string(),
                aggregator: None,
                partner_mac: None,
            });
            in_active = false;
            in_partner_pdu = false;
        } else if line.starts_with("Active Aggregator Info") {
            in_active = true;
        } else if line.starts_with("details partner lacp pdu") {
            in_partner_pdu = true;
        } else if line.starts_with("details actor lacp pdu") {
            in_partner_pdu = false;
        } else if let Some(id) = line.strip_prefix("Aggregator ID:") {
            let id = id.trim().parse().ok();
            match slaves.last_mut() {
                Some(s) => s.aggregator = id,
                None if in_active => active = id,
                None => {}
            }
        } else if let Some(mac) = line.strip_prefix("Partner Mac Address:") {
            if slaves.is_empty() && in_active {
                partner = Some(mac.trim().to_lowercase());
            }
        } else if let Some(mac) = line.strip_prefix("system mac address:") {
            if let (true, Some(s)) = (in_partner_pdu, slaves.last_mut()) {
                s.partner_mac = Some(mac.trim().to_lowercase());
            }
        }
    }
    (active, partner, slaves)
}

/// /proc/net/bonding/BOND of a two-slave 802.3ad bond bundled with the
/// agent, in the layout of the kernel's bond_procfs.c.
const BONDING_PROC: &str = "Ethernet Channel Bonding Driver: v6.1.0

Bonding Mode: IEEE 802.3ad Dynamic link aggregation
Transmit Hash Policy: layer2 (0)
MII Status: up
MII Polling Interval (ms): 100
Up Delay (ms): 0
Down Delay (ms): 0
Peer Notification Delay (ms): 0

802.3ad info
LACP active: on
LACP rate: fast
Min links: 0
Aggregator selection policy (ad_select): stable
System priority: 65535
System MAC address: 0a:11:22:33:44:55
Active Aggregator Info:
\tAggregator ID: 2
\tNumber of ports: 2
\tActor Key: 15
\tPartner Key: 7
\tPartner Mac Address: 02:4c:41:43:50:01

Slave Interface: lyp1a
MII Status: up
Speed: 10000 Mbps
Duplex: full
Link Failure Count: 0
Permanent HW addr: 0a:11:22:33:44:55
Slave queue ID: 0
Aggregator ID: 2
Actor Churn State: none
Partner Churn State: none
Actor Churned Count: 0
Partner Churned Count: 0
details actor lacp pdu:
    system priority: 65535
    system mac address: 0a:11:22:33:44:55
    port key: 15
    port priority: 255
    port number: 1
    port state: 63
details partner lacp pdu:
    system priority: 32768
    system mac address: 02:4c:41:43:50:01
    oper key: 7
    port priority: 32768
    port number: 1
    port state: 63

Slave Interface: lyp1b
MII Status: up
Speed: 10000 Mbps
Duplex: full
Link Failure Count: 0
Permanent HW addr: 0a:11:22:33:44:56
Slave queue ID: 0
Aggregator ID: 3
Actor Churn State: churned
Partner Churn State: churned
Actor Churned Count: 1
Partner Churned Count: 1
details actor lacp pdu:
    system priority: 65535
    system mac address: 0a:11:22:33:44:55
    port key: 15
    port priority: 255
    port number: 2
    port state: 71
details partner lacp pdu:
    system priority: 65535
    system mac address: 00:00:00:00:00:00
    oper key: 1
    port priority: 255
    port number: 1
    port state: 1
";

#[test]
fn bonding_proc_file_is_read_per_slave() {
    let (active, partner, slaves) = parse_bonding(BONDING_PROC);
    assert_eq!(active, Some(2));
    assert_eq!(partner.as_deref(), Some("02:4c:41:43:50:01"));
    let got: Vec<(&str, Option<u32>, Option<&str>)> = slaves
        .iter()
        .map(|s| (s.name.as_str(), s.aggregator, s.partner_mac.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("lyp1a", Some(2), Some("02:4c:41:43:50:01")),
            ("lyp1b", Some(3), Some("00:00:00:00:00:00")),
        ]
    );
}

#[test]
#[ignore = "needs root, network namespaces and the bonding module"]
fn linux_bonding_bundles_with_the_agent() {
    let topo = Topology::new();
    let bond = unique("lyb");
    let made = Command::new("ip")
        .args(["netns", "exec", &topo.netns, "ip", "link", "add", &bond])
        .args([
            "type",
            "bond",
            "mode",
            "802.3ad",
            "lacp_rate",
            "fast",
            "miimon",
            "100",
        ])
        .output()
        .expect("ip");
    assert!(
        made.status.success(),
        "cannot create an 802.3ad bond (is the bonding driver built or loadable? \
         CONFIG_BONDING): {}",
        String::from_utf8_lossy(&made.stderr)
    );
    for p in &topo.peer {
        topo.exec("ip", &["link", "set", p, "master", &bond]);
    }
    topo.exec("ip", &["link", "set", &bond, "up"]);
    let bond_mac: MacAddr = topo
        .exec("cat", &[&format!("/sys/class/net/{bond}/address")])
        .trim()
        .parse()
        .unwrap();
    let proc_file = format!("/proc/net/bonding/{bond}");
    let agent_mac = AGENT_SYSTEM.mac.to_string();
    let bonded = || {
        let (active, partner, slaves) = parse_bonding(&topo.exec("cat", &[&proc_file]));
        slaves.len() == 2
            && active.is_some()
            && slaves.iter().all(|s| s.aggregator == active)
            && partner.as_deref() == Some(&agent_mac)
            && slaves
                .iter()
                .all(|s| s.partner_mac.as_deref() == Some(agent_mac.as_str()))
    };
    let (agent, _, ok) = drive(&topo, bonded);
    let text = topo.exec("cat", &[&proc_file]);
    assert!(
        ok,
        "no bundle within {BUNDLE_WITHIN:?}:\n{text}\n{:#?}",
        agent.snapshot()
    );
    let (_, _, slaves) = parse_bonding(&text);
    let names: Vec<&str> = slaves.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, [topo.peer[0].as_str(), topo.peer[1].as_str()]);
    assert_eq!(agent.members(CHANNEL).collect::<Vec<_>>(), [1, 2]);
    let snap = agent.snapshot();
    for p in &snap.ports {
        let partner = p.partner.as_ref().expect("a partner");
        assert_eq!(partner.system_mac, bond_mac.to_string());
        assert_eq!(
            p.partner_flags, "FA",
            "bond with lacp_rate fast is active and fast"
        );
    }
    assert_eq!(
        snap.channels[0].partner_system.as_deref(),
        Some(
            format!(
                "{},{bond_mac}",
                snap.ports[0].partner.as_ref().unwrap().system_priority
            )
            .as_str()
        )
    );
}

/// An `ovsdb-server` and `ovs-vswitchd` of the test's own, in the
/// topology's namespace with private run and database directories;
/// dropping it ends both by PID.
struct Ovs {
    dir: PathBuf,
    daemons: Vec<Child>,
    netns: String,
}

impl Ovs {
    fn start(topo: &Topology, dir: &Path) -> Ovs {
        let db = dir.join("conf.db");
        let sock = dir.join("db.sock");
        run(
            "ovsdb-tool",
            &[
                "create",
                db.to_str().unwrap(),
                "/usr/share/openvswitch/vswitch.ovsschema",
            ],
        );
        let mut ovs = Ovs {
            dir: dir.to_path_buf(),
            daemons: Vec::new(),
            netns: topo.netns.clone(),
        };
        let remote = format!("--remote=punix:{}", sock.display());
        ovs.spawn(&[
            "ovsdb-server",
            db.to_str().unwrap(),
            &remote,
            "--no-chdir",
            &format!("--unixctl={}", dir.join("ovsdb.ctl").display()),
            &format!("--log-file={}", dir.join("ovsdb.log").display()),
        ]);
        ovs.wait_for(&sock);
        ovs.vsctl(&["--no-wait", "init"]);
        ovs.spawn(&[
            "ovs-vswitchd",
            &format!("unix:{}", sock.display()),
            "--no-chdir",
            &format!("--unixctl={}", dir.join("vswitchd.ctl").display()),
            &format!("--log-file={}", dir.join("vswitchd.log").display()),
        ]);
        ovs.wait_for(&dir.join("vswitchd.ctl"));
        ovs
    }

    fn spawn(&mut self, argv: &[&str]) {
        let child = Command::new("ip")
            .args(["netns", "exec", &self.netns])
            .args(argv)
            .env("OVS_RUNDIR", &self.dir)
            .env("OVS_DBDIR", &self.dir)
            .env("OVS_LOGDIR", &self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", argv[0]));
        self.daemons.push(child);
    }

    fn wait_for(&self, path: &Path) {
        let t = Instant::now();
        while !path.exists() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{} never appeared",
                path.display()
            );
            sleep(Duration::from_millis(20));
        }
    }

    fn vsctl(&self, args: &[&str]) -> String {
        let db = format!("--db=unix:{}", self.dir.join("db.sock").display());
        let mut all = vec!["netns", "exec", &self.netns, "ovs-vsctl", &db];
        all.extend_from_slice(args);
        run("ip", &all)
    }

    fn appctl(&self, args: &[&str]) -> String {
        let target = self.dir.join("vswitchd.ctl");
        let target = target.to_str().unwrap();
        let mut all = vec!["netns", "exec", &self.netns, "ovs-appctl", "-t", target];
        all.extend_from_slice(args);
        run("ip", &all)
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        for c in self.daemons.iter_mut().rev() {
            // The `ip netns exec` child execs the daemon, so the PID is the
            // daemon's own.
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
#[ignore = "needs root, network namespaces and Open vSwitch (userspace datapath)"]
fn open_vswitch_bundles_with_the_agent() {
    let topo = Topology::new();
    let dir = std::env::temp_dir().join(unique("railyard-lacp-ovs-"));
    std::fs::create_dir_all(&dir).unwrap();
    let ovs = Ovs::start(&topo, &dir);
    let ovs_system = "02:4f:56:53:00:01";
    ovs.vsctl(&[
        "add-br",
        "br0",
        "--",
        "set",
        "bridge",
        "br0",
        "datapath_type=netdev",
    ]);
    ovs.vsctl(&[
        "add-bond",
        "br0",
        "bond0",
        &topo.peer[0],
        &topo.peer[1],
        "lacp=active",
        "bond_mode=balance-tcp",
        "other_config:lacp-time=fast",
        &format!("other_config:lacp-system-id={ovs_system}"),
    ]);
    for p in &topo.peer {
        topo.exec("ip", &["link", "set", p, "up"]);
    }
    let agent_mac = AGENT_SYSTEM.mac.to_string();
    let bundled = || {
        // Both members attached, each with the agent as its partner and
        // the agent collecting and distributing as OVS sees it.
        let lacp = ovs.appctl(&["lacp/show", "bond0"]);
        lacp.contains("status: active negotiated")
            && lacp.matches(": current attached").count() == 2
            && lacp
                .matches(&format!("partner sys_id: {agent_mac}"))
                .count()
                == 2
            && lacp
                .lines()
                .filter(|l| l.trim().starts_with("partner state:"))
                .filter(|l| l.contains("synchronized collecting distributing"))
                .count()
                == 2
    };
    let (agent, _, ok) = drive(&topo, bundled);
    let lacp = ovs.appctl(&["lacp/show", "bond0"]);
    assert!(
        ok,
        "no bundle within {BUNDLE_WITHIN:?}:\n{lacp}\n{:#?}",
        agent.snapshot()
    );
    assert_eq!(agent.members(CHANNEL).collect::<Vec<_>>(), [1, 2]);
    for p in &agent.snapshot().ports {
        let partner = p.partner.as_ref().expect("a partner");
        assert_eq!(partner.system_mac, ovs_system);
        assert_eq!(p.partner_flags, "FA");
    }
    drop(ovs);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Writes `frames` as a classic pcap file (Ethernet link type).
fn write_pcap(path: &Path, frames: &Capture) {
    let mut f = Vec::new();
    f.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes()); // magic, microseconds
    f.extend_from_slice(&2u16.to_le_bytes()); // version 2.4
    f.extend_from_slice(&4u16.to_le_bytes());
    f.extend_from_slice(&0i32.to_le_bytes()); // UTC
    f.extend_from_slice(&0u32.to_le_bytes()); // accuracy
    f.extend_from_slice(&65535u32.to_le_bytes()); // snap length
    f.extend_from_slice(&1u32.to_le_bytes()); // LINKTYPE_ETHERNET
    for (t, frame) in frames {
        let len = frame.len() as u32;
        f.extend_from_slice(&((t / NS_PER_S) as u32).to_le_bytes());
        f.extend_from_slice(&((t % NS_PER_S / 1000) as u32).to_le_bytes());
        f.extend_from_slice(&len.to_le_bytes());
        f.extend_from_slice(&len.to_le_bytes());
        f.extend_from_slice(frame);
    }
    std::fs::write(path, f).unwrap();
}

#[test]
#[ignore = "needs tshark"]
fn tshark_decodes_the_agents_lacpdus_without_complaint() {
    // Two agents back to back in memory, fast and slow, through bundling,
    // a partner timing out and a link flap: every state bit gets used.
    let mut capture = Capture::new();
    let mut a = Agent::new(AGENT_SYSTEM);
    let mut b = Agent::new(SystemId {
        priority: 1,
        mac: MacAddr([0x02, 0x4c, 0x41, 0x43, 0x50, 0x02]),
    });
    for (i, agent) in [&mut a, &mut b].into_iter().enumerate() {
        for port in [1u16, 2] {
            let mut cfg = PortConfig::new(MacAddr([0x02, 0, 0, 0, i as u8, port as u8]), 9, port);
            cfg.rate = if port == 1 { Rate::Fast } else { Rate::Normal };
            cfg.mode = if i == 1 && port == 2 {
                Mode::Passive
            } else {
                Mode::Active
            };
            agent.add_port(port, cfg).unwrap();
            agent.set_link(port, true, 0);
        }
    }
    let mut t: Nanos = 0;
    let mut cut = false;
    while t <= 40 * NS_PER_S {
        if t >= 20 * NS_PER_S && !cut {
            // Agent b's port 1 goes silent: agent a's port 1 expires.
            cut = true;
        }
        let mut out_a = Vec::new();
        a.poll(t, &mut |p, f| out_a.push((p, f.to_vec())));
        let mut out_b = Vec::new();
        b.poll(t, &mut |p, f| out_b.push((p, f.to_vec())));
        for (p, f) in out_a {
            capture.push((t, f.clone()));
            let _ = b.receive(p, t, &f);
        }
        for (p, f) in out_b {
            capture.push((t, f.clone()));
            if !(cut && p == 1) {
                let _ = a.receive(p, t, &f);
            }
        }
        t = [a.next_deadline(), b.next_deadline()]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(t + NS_PER_S)
            .max(t + 1);
    }
    assert!(capture.len() > 20, "only {} frames", capture.len());
    let path = std::env::temp_dir().join(format!("{}.pcap", unique("railyard-lacp-")));
    write_pcap(&path, &capture);
    let file = path.to_str().unwrap();
    // Every frame is LACP, its fields as the agent meant them.
    let fields = run(
        "tshark",
        &[
            "-r",
            file,
            "-T",
            "fields",
            "-E",
            "separator=;",
            "-e",
            "frame.protocols",
            "-e",
            "lacp.version",
            "-e",
            "lacp.actor.sysid",
            "-e",
            "lacp.actor.state",
            "-e",
            "lacp.partner.sysid",
        ],
    );
    let lines: Vec<&str> = fields.lines().collect();
    assert_eq!(lines.len(), capture.len());
    for (line, (_, frame)) in lines.iter().zip(&capture) {
        let pdu = LacpduRepr::parse(&frame[14..]).unwrap();
        let want = format!(
            "eth:ethertype:slow:lacp;0x01;{};0x{:02x};{}",
            pdu.actor.system.mac, pdu.actor.state.0, pdu.partner.system.mac
        );
        assert_eq!(*line, want);
    }
    // No expert info at all: no malformed packet, no wrong TLV type or length.
    let expert = run("tshark", &["-r", file, "-q", "-z", "expert"]);
    let noisy: Vec<&str> = expert
        .lines()
        .filter(|l| {
            let l = l.trim();
            !l.is_empty() && !l.starts_with("===") && !l.starts_with("Expert Information")
        })
        .collect();
    assert!(noisy.is_empty(), "tshark expert info:\n{expert}");
    let verbose = run("tshark", &["-r", file, "-V"]);
    assert_eq!(
        verbose.matches("Link Aggregation Control Protocol").count(),
        capture.len()
    );
    assert!(!verbose.contains("Malformed"), "{verbose}");
    let _ = std::fs::remove_file(&path);
}
