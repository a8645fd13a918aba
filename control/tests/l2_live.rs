//! A live Layer-2 rail switch with Linux hosts in network namespaces: two
//! access ports and a trunk in VLAN 101, an access port in VLAN 102, an
//! SVI per VLAN as the hosts' gateway, and a routed LACP port-channel of
//! two links. Behind the trunk, Open vSwitch tags for a host with an
//! interface in each VLAN, and bonds the port-channel's links with LACP
//! (this kernel has neither 802.1Q devices nor bonding, so Open vSwitch's
//! userspace datapath is the real peer for both).
//!
//! * Hosts of one VLAN reach each other, bridged; hosts reach their SVI
//!   and, routed through it, the other VLAN, tagged or not, and the
//!   network behind the port-channel once LACP has bundled it.
//! * `show mac address-table` lists each host's MAC on its port and VLAN,
//!   and an address that goes quiet ages out after `aging-time`.
//! * A storm of unknown unicast at line rate for three seconds floods
//!   VLAN 101 and never reaches the VLAN-102 port.
//! * A port-channel member going down leaves the bundle up on the other.

use std::io::Write;
use std::time::Duration;

mod common;
use common::{ok, run, wait_for, Lab, Ovs, Switch};

const CONFIG: &str = "hostname leaf1
feature interface-vlan
feature lacp
vlan 101
  name RAIL-1
vlan 102
  name RAIL-2
mac address-table aging-time 10
interface Ethernet1/1
  switchport access vlan 101
  bind af-packet e1
interface Ethernet1/2
  switchport access vlan 101
  bind af-packet e2
interface Ethernet1/3
  switchport mode trunk
  switchport trunk allowed vlan 101-102
  bind af-packet e3
interface Ethernet1/4
  switchport access vlan 102
  bind af-packet e4
interface Ethernet1/5
  no switchport
  channel-group 10 mode active
  lacp rate fast
  bind af-packet e5
interface Ethernet1/6
  no switchport
  channel-group 10 mode active
  lacp rate fast
  bind af-packet e6
interface port-channel10
  no switchport
  ip address 10.255.0.0/31
interface Vlan101
  ip address 10.0.1.1/24
interface Vlan102
  ip address 10.0.2.1/24
ip route 10.9.0.0/16 10.255.0.1
";

struct Rail {
    lab: Lab,
    sw: Switch,
    hosts: Vec<String>,
    /// The Open vSwitch behind the trunk (h3) and the port-channel.
    ovs: Ovs,
}

fn mac_of(ns: &str, dev: &str) -> String {
    run(&[
        "ip",
        "netns",
        "exec",
        ns,
        "cat",
        &format!("/sys/class/net/{dev}/address"),
    ])
    .unwrap()
    .trim()
    .to_string()
}

fn ping(ns: &str, to: &str) -> Result<String, String> {
    run(&["ip", "netns", "exec", ns, "ping", "-c", "1", "-W", "1", to])
}

fn up() -> Rail {
    let mut lab = Lab::new();
    let sw_ns = lab.ns("sw");
    let hosts: Vec<String> = (1..=4).map(|i| lab.ns(&format!("h{i}"))).collect();
    for (i, h) in hosts.iter().enumerate() {
        lab.veth(&sw_ns, &format!("e{}", i + 1), h, "eth0");
    }
    // h3's two cables for the port-channel.
    lab.veth(&sw_ns, "e5", &hosts[2], "up0");
    lab.veth(&sw_ns, "e6", &hosts[2], "up1");
    let addr = |ns: &str, dev: &str, a: &str| ok(&["ip", "-n", ns, "addr", "add", a, "dev", dev]);
    let route = |ns: &str, gw: &str| ok(&["ip", "-n", ns, "route", "add", "default", "via", gw]);
    addr(&hosts[0], "eth0", "10.0.1.10/24");
    route(&hosts[0], "10.0.1.1");
    addr(&hosts[1], "eth0", "10.0.1.20/24");
    route(&hosts[1], "10.0.1.1");
    addr(&hosts[3], "eth0", "10.0.2.40/24");
    route(&hosts[3], "10.0.2.1");
    // h3: eth0 is a trunk into Open vSwitch, whose internal ports v101
    // and v102 are the host's interfaces in the two VLANs; up0 and up1
    // are bonded with LACP, and internal port pc10 holds the far end of
    // the port-channel's /31 and a network behind it (10.9.0.1).
    let ovs = Ovs::start(&hosts[2], &lab.path("ovs"));
    ovs.vsctl(&[
        "add-br",
        "br0",
        "--",
        "set",
        "bridge",
        "br0",
        "datapath_type=netdev",
    ]);
    ovs.vsctl(&["add-port", "br0", "eth0", "trunks=101,102"]);
    for (port, tag, a) in [
        ("v101", "101", "10.0.1.30/24"),
        ("v102", "102", "10.0.2.30/24"),
    ] {
        ovs.vsctl(&[
            "add-port",
            "br0",
            port,
            &format!("tag={tag}"),
            "--",
            "set",
            "interface",
            port,
            "type=internal",
        ]);
        ok(&["ip", "-n", &hosts[2], "link", "set", port, "up"]);
        addr(&hosts[2], port, a);
    }
    ovs.vsctl(&[
        "add-br",
        "br1",
        "--",
        "set",
        "bridge",
        "br1",
        "datapath_type=netdev",
    ]);
    ovs.vsctl(&[
        "add-bond",
        "br1",
        "bond0",
        "up0",
        "up1",
        "lacp=active",
        "bond_mode=balance-tcp",
        "other_config:lacp-time=fast",
    ]);
    ovs.vsctl(&[
        "add-port",
        "br1",
        "pc10",
        "--",
        "set",
        "interface",
        "pc10",
        "type=internal",
    ]);
    ok(&["ip", "-n", &hosts[2], "link", "set", "pc10", "up"]);
    addr(&hosts[2], "pc10", "10.255.0.1/31");
    addr(&hosts[2], "lo", "10.9.0.1/32");
    ok(&[
        "ip",
        "-n",
        &hosts[2],
        "route",
        "add",
        "10.0.0.0/16",
        "via",
        "10.255.0.0",
    ]);
    let conf = lab.path("leaf1.conf");
    std::fs::write(&conf, CONFIG).unwrap();
    let sw = Switch::start(
        &sw_ns,
        &conf,
        &lab.path("leaf1.sock"),
        &lab.path("leaf1.log"),
        &[],
    );
    Rail {
        lab,
        sw,
        hosts,
        ovs,
    }
}

impl Rail {
    fn mac_table(&self) -> Vec<serde_json::Value> {
        let out = self
            .sw
            .cli(&["show", "mac", "address-table", "--json"])
            .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["entries"].as_array().cloned().unwrap_or_default()
    }

    fn has_entry(&self, vlan: u64, mac: &str, port: &str) -> bool {
        self.mac_table()
            .iter()
            .any(|e| e["vlan"] == vlan && e["mac"] == mac && e["port"] == port)
    }
}

#[test]
#[ignore = "needs root and network namespaces"]
fn hosts_bridge_in_their_vlan_route_through_the_svis_and_show_in_the_mac_table() {
    let r = up();
    let [h1, h2, h3, h4] = [&r.hosts[0], &r.hosts[1], &r.hosts[2], &r.hosts[3]];
    let t = Duration::from_secs(10);
    // Bridged in VLAN 101: access to access, access to the trunk's
    // tagged sub-interface.
    wait_for("h1 → h2", t, || ping(h1, "10.0.1.20"));
    wait_for("h1 → h3 on the trunk, VLAN 101", t, || {
        ping(h1, "10.0.1.30")
    });
    // The SVIs answer, and route between the VLANs.
    wait_for("h1 → its gateway", t, || ping(h1, "10.0.1.1"));
    wait_for("h1 → h4 through the SVIs", t, || ping(h1, "10.0.2.40"));
    wait_for("h4 → h3 on the trunk, VLAN 102", t, || {
        ping(h4, "10.0.2.30")
    });
    wait_for("h2 → h3's VLAN-102 address, routed", t, || {
        ping(h2, "10.0.2.30")
    });
    let expected = [
        (101, mac_of(h1, "eth0"), "Ethernet1/1"),
        (101, mac_of(h3, "v101"), "Ethernet1/3"),
        (102, mac_of(h3, "v102"), "Ethernet1/3"),
        (102, mac_of(h4, "eth0"), "Ethernet1/4"),
    ];
    // Fresh frames from every host first: the table ages entries out
    // after 10 s here, and the waits above can take that long on a
    // loaded machine.
    ping(h1, "10.0.1.20").unwrap();
    ping(h4, "10.0.2.30").unwrap();
    run(&[
        "ip",
        "netns",
        "exec",
        h3,
        "ping",
        "-c",
        "1",
        "-W",
        "1",
        "-I",
        "10.0.1.30",
        "10.0.1.10",
    ])
    .unwrap();
    // (The switch publishes its table every 100 ms.)
    wait_for(
        "every host in the MAC table",
        Duration::from_secs(3),
        || match expected.iter().find(|(v, m, p)| !r.has_entry(*v, m, p)) {
            None => Ok(()),
            Some((v, m, p)) => Err(format!("{m} in VLAN {v} on {p}: {:?}", r.mac_table())),
        },
    );
    let vlans = r.sw.cli(&["show", "vlan", "brief"]).unwrap();
    assert!(
        vlans.contains("101  RAIL-1                           active    Eth1/1, Eth1/2"),
        "{vlans}"
    );
    eprintln!("{vlans}");
    let text =
        r.sw.cli(&["show", "mac", "address-table", "vlan", "102"])
            .unwrap();
    assert!(
        text.contains("Eth1/4") && !text.contains("Eth1/1 "),
        "{text}"
    );

    // The port-channel: LACP bundles both links with Open vSwitch, and h1
    // reaches the network behind it.
    let bundled = || {
        let out = r.sw.cli(&["show", "lacp", "neighbor", "--json"])?;
        let lacp: serde_json::Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
        let ports = lacp["ports"].as_array().cloned().unwrap_or_default();
        let n = ports.iter().filter(|p| p["distributing"] == true).count();
        (n == 2)
            .then_some(lacp)
            .ok_or(format!("{n} of 2 distributing"))
    };
    let lacp = wait_for("LACP bundles both links", Duration::from_secs(15), bundled);
    assert!(
        lacp["ports"][0]["partner"]["system_mac"].is_string(),
        "{lacp}"
    );
    wait_for("h1 → 10.9.0.1 over the port-channel", t, || {
        ping(h1, "10.9.0.1")
    });
    let summary = r.sw.cli(&["show", "port-channel", "summary"]).unwrap();
    assert!(summary.contains("Po10(RU)"), "{summary}");
    assert!(
        summary.contains("Eth1/5(P)") && summary.contains("Eth1/6(P)"),
        "{summary}"
    );
    let neighbors = r.sw.cli(&["show", "lacp", "neighbor"]).unwrap();
    eprintln!(
        "{}\n{summary}\n{neighbors}",
        r.sw.cli(&["show", "mac", "address-table"]).unwrap()
    );
    assert!(
        neighbors.contains("port-channel10 neighbors"),
        "{neighbors}"
    );
    assert!(
        neighbors.contains("FA"),
        "a fast, active partner: {neighbors}"
    );
    // One member goes down (its cable cut at the far end): the bundle
    // stays up on the other and traffic goes on.
    ok(&["ip", "-n", h3, "link", "set", "up1", "down"]);
    wait_for("the bundle down to one member", t, || {
        let s = r.sw.cli(&["show", "port-channel", "summary"])?;
        (s.contains("Eth1/5(P)") && !s.contains("Eth1/6(P)"))
            .then_some(())
            .ok_or(s)
    });
    wait_for("h1 → 10.9.0.1 on one member", t, || ping(h1, "10.9.0.1"));
    drop(r.ovs);
    drop(r.lab);
}

/// A pcap file of `frames` (Ethernet, microsecond timestamps).
fn pcap(path: &std::path::Path, frames: &[Vec<u8>]) {
    let mut f = std::fs::File::create(path).unwrap();
    let mut header = Vec::new();
    header.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    header.extend_from_slice(&2u16.to_le_bytes());
    header.extend_from_slice(&4u16.to_le_bytes());
    header.extend_from_slice(&[0; 8]);
    header.extend_from_slice(&65535u32.to_le_bytes());
    header.extend_from_slice(&1u32.to_le_bytes());
    f.write_all(&header).unwrap();
    for (i, frame) in frames.iter().enumerate() {
        let mut rec = Vec::new();
        rec.extend_from_slice(&0u32.to_le_bytes());
        rec.extend_from_slice(&(i as u32).to_le_bytes());
        rec.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        rec.extend_from_slice(&(frame.len() as u32).to_le_bytes());
        rec.extend_from_slice(frame);
        f.write_all(&rec).unwrap();
    }
}

/// A minimum-size frame of a local-experimental EtherType.
fn frame(dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut f = Vec::with_capacity(60);
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&0x88b5u16.to_be_bytes());
    f.resize(60, 0xab);
    f
}

#[test]
#[ignore = "needs root, network namespaces and tcpreplay"]
fn an_unknown_unicast_storm_stays_in_its_vlan_and_a_quiet_address_ages_out() {
    let r = up();
    let h1 = &r.hosts[0];
    // A silent source is learned from one frame, then ages out after the
    // 10 s aging time (and the sweep after it).
    let quiet = r.lab.path("quiet.pcap");
    pcap(
        &quiet,
        &[frame([2, 0xde, 0xad, 0, 0, 1], [2, 0, 0, 0, 0x99, 0x99])],
    );
    ok(&[
        "ip",
        "netns",
        "exec",
        h1,
        "tcpreplay",
        "-q",
        "-i",
        "eth0",
        quiet.to_str().unwrap(),
    ]);
    wait_for("the quiet address learned", Duration::from_secs(5), || {
        r.has_entry(101, "02:00:00:00:99:99", "Ethernet1/1")
            .then_some(())
            .ok_or_else(|| format!("{:?}", r.mac_table()))
    });
    let learned = std::time::Instant::now();
    wait_for(
        "the quiet address aged out",
        Duration::from_secs(20),
        || {
            (!r.has_entry(101, "02:00:00:00:99:99", "Ethernet1/1"))
                .then_some(())
                .ok_or_else(|| "still there".to_string())
        },
    );
    let aged = learned.elapsed();
    assert!(aged >= Duration::from_secs(9), "aged after {aged:?}");

    // Unknown unicast from h1 for three seconds at the fastest tcpreplay
    // goes: it floods to Ethernet1/2 and the trunk, never to Ethernet1/4.
    let storm = r.lab.path("storm.pcap");
    let frames: Vec<Vec<u8>> = (0..1000u16)
        .map(|i| {
            let [a, b] = i.to_be_bytes();
            frame([2, 0xbe, 0xef, 0, a, b], [2, 0, 0, 0, 0x77, 0x01])
        })
        .collect();
    pcap(&storm, &frames);
    let counts = || -> Vec<(u64, u64)> {
        let v = r.sw.show().unwrap();
        (1..=4)
            .map(|p| {
                let i = &v["interfaces"][format!("Ethernet1/{p}")];
                (
                    i["rx_packets"].as_u64().unwrap_or(0),
                    i["tx_packets"].as_u64().unwrap_or(0),
                )
            })
            .collect()
    };
    let before = counts();
    let out = run(&[
        "ip",
        "netns",
        "exec",
        h1,
        "tcpreplay",
        "-i",
        "eth0",
        "--topspeed",
        "--loop",
        "1000000",
        "--duration",
        "3",
        storm.to_str().unwrap(),
    ])
    .unwrap();
    let sent: u64 = out
        .lines()
        .find_map(|l| l.trim().strip_prefix("Actual: "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("tcpreplay said: {out}"));
    std::thread::sleep(Duration::from_millis(500));
    let after = counts();
    let received = after[0].0 - before[0].0;
    let flooded = |p: usize| after[p].1 - before[p].1;
    eprintln!(
        "storm: {sent} frames sent, {received} read by the switch; flooded to Ethernet1/2 {}, \
         trunk {}, Ethernet1/4 {}",
        flooded(1),
        flooded(2),
        flooded(3)
    );
    assert!(
        received > 10_000,
        "a storm of {received} frames is no storm"
    );
    // What the switch read it flooded to both other VLAN-101 ports (a
    // frame the kernel dropped before the switch read it counts as
    // neither; a few may still wait in a queue).
    for p in [1, 2] {
        assert!(
            flooded(p) * 100 >= received * 99,
            "Ethernet1/{} got {} of {received}",
            p + 1,
            flooded(p)
        );
    }
    assert!(
        flooded(3) < 50,
        "VLAN 102 got {} flooded frames",
        flooded(3)
    );
    // Per VLAN, what entered went somewhere: switched, to the SVI, or
    // dropped with a reason.
    let v: serde_json::Value =
        serde_json::from_str(&r.sw.cli(&["show", "vlan", "--json"]).unwrap()).unwrap();
    let c = &v["counters"]["101"];
    let n = |k: &str| c[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    assert!(n("rx_packets") >= received, "{c}");
    assert_eq!(
        n("rx_packets") + n("routed_in") + n("flood_copies"),
        n("switched") + n("to_svi") + n("dropped"),
        "{c}"
    );
    let text = r.sw.cli(&["show", "vlan"]).unwrap();
    eprintln!("{text}");
    assert!(text.contains("Flood copies"), "{text}");
    // None of the storm's destinations was learned (nothing answered).
    assert!(!r
        .mac_table()
        .iter()
        .any(|e| e["mac"].as_str().unwrap_or("").starts_with("02:be:ef")));
}
