//! A whole Nexus running-config, pasted as a lab user would, loads with the expected warnings.

mod common;

use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

use common::{ok, render, skip_summary};
use railyard_config::{parse_file, Bind, InterfaceName, ParseOptions, RouteTarget, Severity};

const RUNNING_CONFIG: &str = "\
!Command: show running-config
!Running configuration last done at: Tue Mar  5 10:12:44 2024
!Time: Tue Mar  5 10:15:02 2024

version 10.3(4a) Bios:version 05.47
hostname leaf1
vdc leaf1 id 1
  limit-resource vlan minimum 16 maximum 4094
  limit-resource vrf minimum 2 maximum 4096

feature bgp
feature lldp
feature interface-vlan

username admin password 5 $5$KIBFJD$Zp3ZlQeX2  role network-admin
ip domain-lookup
copp profile strict
snmp-server user admin network-admin auth md5 0x1a2b priv 0x3c4d localizedkey
ntp server 192.168.1.1 use-vrf management

class-map type qos match-any ROCEv2
  match dscp 24
  exit
class-map type qos match-any CNP
  match dscp 48
  exit
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
    exit
  class CNP
    set qos-group 7
    exit
  class class-default
    set qos-group 0
    exit
  exit
policy-map type queuing QOS_EGRESS_PORT
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q7
    priority level 1
    shape min 0 gbps max 10 gbps
  class type queuing c-out-8q-q-default
    bandwidth remaining percent 50
policy-map type network-qos qos_network
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
system qos
  service-policy type network-qos qos_network
  service-policy type queuing output QOS_EGRESS_PORT
priority-flow-control watch-dog-interval on

ip route 0.0.0.0/0 10.1.1.0
ip route 0.0.0.0/0 10.1.2.0
ip route 192.168.100.0/24 Null0 name discard
ip route 10.99.0.0/16 Ethernet1/3 10.1.3.0 tag 200
ip route 172.16.0.0/12 10.50.0.1 250
ipv6 route ::/0 2001:db8:1:1::
vlan 1

vrf context management
  ip route 0.0.0.0/0 192.168.1.254

interface Ethernet1/1
  description to spine1 Eth1/1
  no switchport
  mtu 9216
  ip address 10.1.1.1/31
  ipv6 address 2001:db8:1:1::1/127
  bind af-packet veth-s1
  no shutdown

interface Ethernet1/2
  description to spine2 Eth1/1
  no switchport
  mtu 9216
  ip address 10.1.2.1/31
  bind af-packet veth-s2
  no shutdown

interface Ethernet1/3-4
  no switchport
  mtu 9216
  priority-flow-control mode auto
  service-policy type qos input QOS_CLASSIFICATION

interface Ethernet1/3
  description gpu0
  ip address 10.1.3.1/31
  ip arp 10.1.3.0 0c42.a1b2.c3d4
  bind tap gpu0

interface Ethernet1/4
  description gpu1
  ip address 10.1.4.1/31
  bind pcap /var/lib/railyard/gpu1.pcap
  shutdown

interface Ethernet1/5

interface mgmt0
  vrf member management
  ip address 192.168.1.10/24

interface loopback0
  ip address 10.255.0.1/32
line console
  exec-timeout 0
line vty
boot nxos bootflash:/nxos64-cs.10.3.4a.M.bin
router bgp 65001
  router-id 10.255.0.1
  address-family ipv4 unicast
    network 10.255.0.1/32
  neighbor 10.1.1.0
    remote-as 65000
    address-family ipv4 unicast
  neighbor 10.1.2.0
    remote-as 65000
    address-family ipv4 unicast
";

/// 1-based number of the line containing `needle` (which must be unique).
fn line_of(needle: &str) -> usize {
    let hits: Vec<usize> = RUNNING_CONFIG
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains(needle))
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(hits.len(), 1, "`{needle}` must appear once");
    hits[0]
}

#[test]
fn the_model() {
    let p = ok(RUNNING_CONFIG);
    let c = &p.config;
    assert!(RUNNING_CONFIG.lines().count() >= 80);
    assert_eq!(c.hostname.as_deref(), Some("leaf1"));
    let features: Vec<&str> = c.features.iter().map(String::as_str).collect();
    assert_eq!(features, ["bgp", "interface-vlan", "lldp"]);

    let names: Vec<String> = c.interfaces.iter().map(|i| i.name.to_string()).collect();
    assert_eq!(
        names,
        [
            "Ethernet1/1",
            "Ethernet1/2",
            "Ethernet1/3",
            "Ethernet1/4",
            "Ethernet1/5"
        ]
    );

    let e1 = c.interface("e1/1").unwrap();
    assert_eq!(e1.description.as_deref(), Some("to spine1 Eth1/1"));
    assert!(e1.routed && !e1.shutdown);
    assert_eq!(e1.mtu, 9216);
    assert_eq!(e1.ipv4[0].to_string(), "10.1.1.1/31");
    assert_eq!(e1.ipv6[0].to_string(), "2001:db8:1:1::1/127");
    assert_eq!(e1.bind, Some(Bind::AfPacket("veth-s1".into())));
    assert_eq!(e1.line, line_of("interface Ethernet1/1"));

    let e3 = c.interface("Ethernet1/3").unwrap();
    assert_eq!(e3.line, line_of("interface Ethernet1/3-4"));
    assert!(e3.routed);
    assert_eq!(e3.mtu, 9216);
    assert_eq!(e3.description.as_deref(), Some("gpu0"));
    assert_eq!(
        e3.arp,
        [(
            Ipv4Addr::new(10, 1, 3, 0),
            [0x0c, 0x42, 0xa1, 0xb2, 0xc3, 0xd4]
        )]
    );
    assert_eq!(e3.bind, Some(Bind::Tap("gpu0".into())));

    let e4 = c.interface("eth1/4").unwrap();
    assert!(e4.shutdown);
    assert_eq!(
        e4.bind,
        Some(Bind::Pcap(PathBuf::from("/var/lib/railyard/gpu1.pcap")))
    );

    let e5 = c.interface("Ethernet1/5").unwrap();
    assert!(!e5.routed && e5.ipv4.is_empty() && e5.bind.is_none());

    // The management VRF's default route stays out of the default table.
    let routes: Vec<String> = c.routes.iter().map(|r| r.to_string()).collect();
    assert_eq!(
        routes,
        [
            "ip route 0.0.0.0/0 10.1.1.0",
            "ip route 0.0.0.0/0 10.1.2.0",
            "ip route 192.168.100.0/24 Null0",
            "ip route 10.99.0.0/16 Ethernet1/3 10.1.3.0",
            "ip route 172.16.0.0/12 10.50.0.1",
            "ipv6 route ::/0 2001:db8:1:1::",
        ]
    );
    let ecmp: Vec<&RouteTarget> = c
        .routes_for(&"0.0.0.0/0".parse().unwrap())
        .map(|r| &r.target)
        .collect();
    assert_eq!(ecmp.len(), 2);
    assert_eq!(c.routes[3].line, line_of("ip route 10.99.0.0/16"));
    assert_eq!(
        c.routes[3].target,
        RouteTarget::NextHop {
            addr: "10.1.3.0".parse().unwrap(),
            interface: Some(InterfaceName::new(1, 3)),
        }
    );
}

#[test]
fn the_warnings() {
    let p = ok(RUNNING_CONFIG);
    let got: Vec<(usize, usize, &str)> = p
        .warnings
        .iter()
        .filter(|d| d.line > 0)
        .map(|d| (d.line, d.col, d.message.as_str()))
        .collect();
    let want = vec![
        (
            line_of("vdc leaf1"),
            1,
            "`vdc` is not modelled; skipped with the 2 lines indented under it (lines 8-9)",
        ),
        (
            line_of("username admin"),
            1,
            "`username` is not modelled; skipped",
        ),
        (
            line_of("ip domain-lookup"),
            1,
            "`ip domain-lookup` is not modelled; skipped",
        ),
        (
            line_of("copp profile"),
            1,
            "`copp` is not modelled; skipped",
        ),
        (
            line_of("snmp-server user"),
            1,
            "`snmp-server` is not modelled; skipped",
        ),
        (line_of("ntp server"), 1, "`ntp` is not modelled; skipped"),
        (
            line_of("ip route 172.16"),
            24,
            "next hop 10.50.0.1 of 172.16.0.0/12 is not in any connected subnet",
        ),
        (
            line_of("vrf context management"),
            1,
            "`vrf context` is not modelled; skipped with the line indented under it (line 65)",
        ),
        (
            line_of("interface mgmt0"),
            11,
            "`interface mgmt` is not modelled; skipped",
        ),
        (
            line_of("interface loopback0"),
            11,
            "`interface loopback` is not modelled; skipped",
        ),
        (
            line_of("line console"),
            1,
            "`line` is not modelled; skipped with the line indented under it (line 111)",
        ),
        (line_of("boot nxos"), 1, "`boot` is not modelled; skipped"),
    ];
    assert_eq!(got, want, "\n{}", render(&p.warnings));
    assert_eq!(
        skip_summary(&p),
        Some(
            "skipped 12 unmodelled commands: vdc (1), username (1), ip domain-lookup (1), copp (1), \
             snmp-server (1), ntp (1), vrf context (1), interface mgmt (1), interface loopback (1), \
             line (2), boot (1)"
        )
    );
    assert!(p.warnings.iter().all(|d| d.severity == Severity::Warning));
}

#[test]
fn strict_mode_rejects_it_with_one_error_per_skipped_command() {
    let es =
        railyard_config::parse_str(RUNNING_CONFIG, "leaf1.conf", &ParseOptions { strict: true })
            .unwrap_err();
    // One per skipped command (`vlan`, `router bgp` and the features are modelled).
    assert_eq!(es.len(), 12);
    assert!(es.iter().all(|d| d.file == "leaf1.conf" && d.is_error()));
}

#[test]
fn it_round_trips_through_the_printer() {
    let first = ok(RUNNING_CONFIG).config;
    let printed = first.to_string();
    let second = ok(&printed).config;
    assert_eq!(first, second, "printed:\n{printed}");
    assert_eq!(second.to_string(), printed);
}

/// A file in the system temp directory, removed on drop.
struct TempFile(PathBuf);

impl TempFile {
    fn new(name: &str, text: &str) -> Self {
        let path =
            std::env::temp_dir().join(format!("railyard-config-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        TempFile(path)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn parse_file_reads_and_names_the_file() {
    let f = TempFile::new("leaf1.conf", RUNNING_CONFIG);
    let p = parse_file(&f.0, &ParseOptions::default()).unwrap();
    assert_eq!(p.config.hostname.as_deref(), Some("leaf1"));
    assert!(p
        .warnings
        .iter()
        .all(|d| d.file == f.0.display().to_string()));

    let bad = TempFile::new("bad.conf", "interface e1/1\n  mtu 1\n");
    let es = parse_file(&bad.0, &ParseOptions::default()).unwrap_err();
    assert_eq!(es.len(), 1);
    assert!(es[0].to_string().starts_with(&format!(
        "{}:2:7: error: MTU 1 is out of range",
        bad.0.display()
    )));
}

#[test]
fn parse_file_reports_an_unreadable_file_at_line_zero() {
    let path = Path::new("/nonexistent/railyard/lab.conf");
    let es = parse_file(path, &ParseOptions::default()).unwrap_err();
    assert_eq!(es.len(), 1);
    assert_eq!(
        (es[0].line, es[0].col, es[0].severity),
        (0, 0, Severity::Error)
    );
    assert!(
        es[0].message.starts_with("cannot read configuration: "),
        "{}",
        es[0].message
    );
    assert!(es[0]
        .to_string()
        .starts_with("/nonexistent/railyard/lab.conf: error: cannot read configuration"));

    let f = TempFile::new("latin1.conf", "");
    std::fs::write(&f.0, b"hostname caf\xe9\n").unwrap();
    let es = parse_file(&f.0, &ParseOptions::default()).unwrap_err();
    assert_eq!(es[0].line, 0);
}

#[test]
fn the_qos_model() {
    use railyard_config::{Bandwidth, Direction, PfcMode, Shape, Threshold};
    let c = ok(RUNNING_CONFIG).config;
    let cms: Vec<(&str, usize)> = c
        .class_maps
        .iter()
        .map(|m| (m.name.as_str(), m.matches.len()))
        .collect();
    assert_eq!(cms, [("ROCEv2", 1), ("CNP", 1)]);
    let qp = c.qos_policy("QOS_CLASSIFICATION").unwrap();
    let classes: Vec<(&str, Option<u8>)> = qp
        .classes
        .iter()
        .map(|k| (k.class.as_str(), k.set_qos_group))
        .collect();
    assert_eq!(
        classes,
        [
            ("ROCEv2", Some(3)),
            ("CNP", Some(7)),
            ("class-default", Some(0))
        ]
    );
    let out = c.queuing_policy("QOS_EGRESS_PORT").unwrap();
    assert_eq!(out.direction, Direction::Egress);
    let queues: Vec<u8> = out.classes.iter().map(|k| k.queue).collect();
    assert_eq!(queues, [3, 7, 0]);
    assert_eq!(
        out.class(7).unwrap().shape,
        Some(Shape {
            min_bps: 0,
            max_bps: 10_000_000_000
        })
    );
    assert_eq!(c.pfc_watchdog_interval, Some(true));
    assert_eq!(c.system_qos.network_qos.as_deref(), Some("qos_network"));

    // Ethernet1/3-4 classify; the uplinks keep everything in qos-group 0.
    for name in ["Ethernet1/3", "Ethernet1/4"] {
        let i = c.interface(name).unwrap();
        assert_eq!(i.pfc_mode, PfcMode::Auto);
        assert_eq!(
            i.service_policy_qos_input.as_deref(),
            Some("QOS_CLASSIFICATION")
        );
        let q = c.effective_qos(&i.name);
        assert_eq!(q.classifier.dscp_table[24], 3);
        assert_eq!(q.classifier.dscp_table[48], 7);
        assert_eq!(q.classifier.dscp_table[0], 0);
        assert_eq!(
            q.egress[3].wred.map(|w| (w.min, w.max, w.ecn)),
            Some((
                Threshold::Bytes(150 * 1024),
                Threshold::Bytes(3000 * 1024),
                true
            ))
        );
        assert_eq!(q.egress[0].bandwidth, Some(Bandwidth::RemainingPercent(50)));
        assert_eq!(q.lossless, 1 << 3);
        assert_eq!(q.mtu_of_group[3], 9216);
        assert!(q.watchdog.enabled);
    }
    let up = c.effective_qos(&InterfaceName::new(1, 1));
    assert!(up.classifier.dscp_table.iter().all(|g| *g == 0));
    assert_eq!(up.egress[7].priority_level, Some(1));
}
