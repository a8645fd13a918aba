//! Routed forwarding end to end: traces in, pcaps and counters out.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use railyard_control::traffic::{arp_request, build, icmp_echo, FrameSpec, Transport};
use railyard_dataplane::wire::MacAddr;
use railyard_pcap_tests::{compile_text, ipv4_checksum_ok, replay, Timed};

const CONFIG: &str = "
hostname leaf1
interface Ethernet1/1
  no switchport
  mac-address 02:aa:00:00:00:01
  ip address 10.0.1.1/24
  ipv6 address 2001:db8:1::1/64
  ip arp 10.0.1.2 02:00:00:00:00:01
  mtu 9216
interface Ethernet1/2
  no switchport
  mac-address 02:aa:00:00:00:02
  ip address 10.0.2.1/24
  ipv6 address 2001:db8:2::1/64
  ip arp 10.0.2.2 02:00:00:00:00:02
  ipv6 neighbor 2001:db8:2::2 02:00:00:00:00:02
  mtu 1500
interface Ethernet1/3
  no switchport
  mac-address 02:aa:00:00:00:03
  ip address 10.0.3.1/24
  ip arp 10.0.3.2 02:00:00:00:00:03
ip route 192.168.0.0/16 10.0.2.2
ip route 192.168.0.0/16 10.0.3.2
ip route 172.16.0.0/12 Null0
";

const E1: MacAddr = MacAddr([2, 0xaa, 0, 0, 0, 1]);
const E2: MacAddr = MacAddr([2, 0xaa, 0, 0, 0, 2]);
const H1: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const H2: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);

fn v4(s: &str) -> IpAddr {
    IpAddr::V4(s.parse().unwrap())
}

fn udp_from_h1(dst: &str) -> FrameSpec {
    FrameSpec::udp(H1, E1, v4("10.0.1.2"), v4(dst))
}

fn timed(frames: Vec<Vec<u8>>, start: u64, gap: u64) -> Vec<Timed> {
    frames
        .into_iter()
        .enumerate()
        .map(|(i, f)| (start + i as u64 * gap, f))
        .collect()
}

#[test]
fn ipv4_is_routed_with_ttl_macs_and_checksum_rewritten() {
    let mut spec = udp_from_h1("10.0.2.2");
    spec.dscp = 24;
    spec.ecn = 2;
    spec.transport = Transport::Roce {
        opcode: 0x0a,
        dest_qp: 0x12,
        psn: 7,
    };
    let frames: Vec<_> = (0..100).map(|k| build(&spec, k)).collect();
    let run = replay(
        CONFIG,
        &[("Ethernet1/1", timed(frames.clone(), 1_000, 1_000))],
    );
    let out = run.sent("Ethernet1/2");
    assert_eq!(out.len(), 100);
    for (k, (t, f)) in out.iter().enumerate() {
        let orig = &frames[k];
        assert!(*t >= 1_000 + k as u64 * 1_000, "departure before arrival");
        assert_eq!(&f[0..6], &H2.0, "destination is the next hop's MAC");
        assert_eq!(&f[6..12], &E2.0, "source is the egress port's MAC");
        assert_eq!(f[14 + 8], orig[14 + 8] - 1, "TTL decremented");
        assert!(ipv4_checksum_ok(f, 14));
        assert_eq!(f[15], orig[15], "DSCP/ECN untouched");
        assert_eq!(
            &f[34..],
            &orig[34..],
            "transport header and payload untouched"
        );
    }
    let c1 = run.counters("Ethernet1/1");
    assert_eq!(c1.rx_packets, 100);
    assert_eq!(c1.total_drops(), 0);
    let c2 = run.counters("Ethernet1/2");
    assert_eq!(c2.tx_packets, 100);
    assert_eq!(
        c2.tx_bytes,
        frames.iter().map(|f| f.len() as u64).sum::<u64>()
    );
    assert_eq!(c2.queues[0].tx_packets, 100);
    // Nothing else transmitted, nothing went back out of the ingress port.
    assert!(run.sent("Ethernet1/1").is_empty());
    assert!(run.sent("Ethernet1/3").is_empty());
}

#[test]
fn ipv6_is_routed_with_hop_limit_decremented() {
    let spec = FrameSpec::udp(
        H1,
        E1,
        IpAddr::V6("2001:db8:1::2".parse().unwrap()),
        IpAddr::V6("2001:db8:2::2".parse().unwrap()),
    );
    let frames: Vec<_> = (0..10).map(|k| build(&spec, k)).collect();
    let run = replay(CONFIG, &[("Ethernet1/1", timed(frames.clone(), 0, 100))]);
    let out = run.sent("Ethernet1/2");
    assert_eq!(out.len(), 10);
    for ((_, f), orig) in out.iter().zip(&frames) {
        assert_eq!(&f[0..6], &H2.0);
        assert_eq!(&f[6..12], &E2.0);
        assert_eq!(f[14 + 7], orig[14 + 7] - 1);
        assert_eq!(&f[54..], &orig[54..]);
    }
}

#[test]
fn tagged_frames_leave_routed_ports_untagged() {
    let mut spec = udp_from_h1("10.0.2.2");
    spec.vlan_tci = Some((3 << 13) | 10);
    let tagged = build(&spec, 1);
    let run = replay(CONFIG, &[("Ethernet1/1", vec![(0, tagged.clone())])]);
    let out = run.sent("Ethernet1/2");
    assert_eq!(out.len(), 1);
    let f = &out[0].1;
    assert_eq!(&f[12..14], &[0x08, 0x00]);
    assert_eq!(f.len(), tagged.len() - 4);
    assert!(ipv4_checksum_ok(f, 14));
    assert_eq!(&f[34..], &tagged[38..]);
}

#[test]
fn ecmp_spreads_flows_and_keeps_each_flow_on_one_member() {
    let mut frames = Vec::new();
    for flow in 0..64u16 {
        let mut spec = udp_from_h1("192.168.7.7");
        spec.src_port = 40000 + flow;
        for k in 0..4 {
            frames.push(build(&spec, k));
        }
    }
    let run = replay(CONFIG, &[("Ethernet1/1", timed(frames, 0, 50))]);
    let (a, b) = (run.sent("Ethernet1/2"), run.sent("Ethernet1/3"));
    assert_eq!(a.len() + b.len(), 256);
    assert!(
        a.len() >= 32 && b.len() >= 32,
        "uneven split {} / {}",
        a.len(),
        b.len()
    );
    let sport = |f: &Vec<u8>| u16::from_be_bytes([f[34], f[35]]);
    for (_, f) in &a {
        assert!(
            b.iter().all(|(_, g)| sport(g) != sport(f)),
            "a flow used both members"
        );
    }
}

#[test]
fn switch_answers_arp_ping_and_neighbor_solicitation() {
    let arp = arp_request(H1, Ipv4Addr::new(10, 0, 1, 2), Ipv4Addr::new(10, 0, 1, 1));
    let ping = icmp_echo(&udp_from_h1("10.0.1.1"), 7, 1);
    let ping6 = icmp_echo(
        &FrameSpec::udp(
            H1,
            E1,
            IpAddr::V6("2001:db8:1::2".parse().unwrap()),
            IpAddr::V6("2001:db8:1::1".parse().unwrap()),
        ),
        7,
        2,
    );
    let ns = neighbor_solicitation(
        H1,
        "2001:db8:1::2".parse().unwrap(),
        "2001:db8:1::1".parse().unwrap(),
    );
    let run = replay(
        CONFIG,
        &[(
            "Ethernet1/1",
            timed(vec![arp, ping.clone(), ping6, ns], 0, 1000),
        )],
    );
    let out = run.sent("Ethernet1/1");
    assert_eq!(out.len(), 4, "four answers");
    // ARP reply.
    let r = &out[0].1;
    assert_eq!(&r[0..6], &H1.0);
    assert_eq!(&r[12..14], &[0x08, 0x06]);
    assert_eq!(&r[20..22], &[0, 2], "ARP reply opcode");
    assert_eq!(
        &r[22..28],
        &E1.0,
        "sender hardware address is the port's MAC"
    );
    assert_eq!(&r[28..32], &[10, 0, 1, 1]);
    // Echo reply.
    let r = &out[1].1;
    assert_eq!(&r[0..6], &H1.0);
    assert_eq!(&r[26..30], &[10, 0, 1, 1]);
    assert_eq!(&r[30..34], &[10, 0, 1, 2]);
    assert_eq!(r[34], 0, "echo reply type");
    assert!(ipv4_checksum_ok(r, 14));
    assert_eq!(railyard_dataplane::wire::checksum::data(&r[34..]), 0xffff);
    assert_eq!(
        &r[38..],
        &ping[38..],
        "identifier, sequence and data echoed"
    );
    // ICMPv6 echo reply and neighbour advertisement.
    assert_eq!(out[2].1[54], 129);
    let na = &out[3].1;
    assert_eq!(na[54], 136);
    assert_eq!(
        &na[62..78],
        &"2001:db8:1::1".parse::<Ipv6Addr>().unwrap().octets()
    );
    assert_eq!(&na[80..86], &E1.0, "target link-layer address option");
    assert_eq!(na[58] & 0xe0, 0xe0, "router, solicited, override");
    let c = run.counters("Ethernet1/1");
    assert_eq!(c.total_drops(), 0);
}

fn neighbor_solicitation(mac: MacAddr, src: Ipv6Addr, target: Ipv6Addr) -> Vec<u8> {
    let t = target.octets();
    let group: Ipv6Addr = Ipv6Addr::new(
        0xff02,
        0,
        0,
        0,
        0,
        1,
        0xff00 | u16::from(t[13]),
        u16::from_be_bytes([t[14], t[15]]),
    );
    let mut f = vec![0u8; 86];
    f[0..6].copy_from_slice(&[0x33, 0x33, 0xff, t[13], t[14], t[15]]);
    f[6..12].copy_from_slice(&mac.0);
    f[12..14].copy_from_slice(&[0x86, 0xdd]);
    f[14] = 0x60;
    f[18..20].copy_from_slice(&32u16.to_be_bytes());
    f[20] = 58;
    f[21] = 255;
    f[22..38].copy_from_slice(&src.octets());
    f[38..54].copy_from_slice(&group.octets());
    f[54] = 135;
    f[62..78].copy_from_slice(&t);
    f[78] = 1;
    f[79] = 1;
    f[80..86].copy_from_slice(&mac.0);
    let pseudo = railyard_dataplane::wire::checksum::pseudo_header(
        &IpAddr::V6(src),
        &IpAddr::V6(group),
        58,
        32,
    );
    let c = !railyard_dataplane::wire::checksum::combine(&[
        pseudo,
        railyard_dataplane::wire::checksum::data(&f[54..86]),
    ]);
    f[56..58].copy_from_slice(&c.to_be_bytes());
    f
}

#[test]
fn unresolved_next_hop_is_resolved_by_arp_then_released() {
    // No static ARP for 10.0.2.9: the switch must ask, park, then forward.
    let first = build(&udp_from_h1("10.0.2.9"), 1);
    let second = build(&udp_from_h1("10.0.2.9"), 2);
    let h9 = MacAddr([2, 0, 0, 0, 0, 9]);
    let mut reply = arp_request(h9, Ipv4Addr::new(10, 0, 2, 9), Ipv4Addr::new(10, 0, 2, 1));
    reply[0..6].copy_from_slice(&E2.0);
    reply[21] = 2; // ARP reply
    reply[32..38].copy_from_slice(&E2.0);
    let run = replay(
        CONFIG,
        &[
            ("Ethernet1/1", vec![(1_000, first), (2_000, second)]),
            ("Ethernet1/2", vec![(500_000, reply)]),
        ],
    );
    let out = run.sent("Ethernet1/2");
    assert_eq!(out.len(), 3, "one ARP request and two released packets");
    let req = &out[0].1;
    assert_eq!(&req[0..6], &MacAddr::BROADCAST.0);
    assert_eq!(&req[20..22], &[0, 1]);
    assert_eq!(&req[38..42], &[10, 0, 2, 9]);
    for (t, f) in &out[1..] {
        assert!(*t >= 500_000, "released only after the answer");
        assert_eq!(&f[0..6], &h9.0);
    }
    assert_eq!(run.counters("Ethernet1/1").total_drops(), 0);
}

#[test]
fn unanswered_resolution_drops_parked_packets_with_a_reason() {
    let frames: Vec<_> = (0..3)
        .map(|k| build(&udp_from_h1("10.0.2.77"), k))
        .collect();
    let run = replay(CONFIG, &[("Ethernet1/1", timed(frames, 0, 10))]);
    // The trace ends before any answer: the replay asks, then gives up.
    let out = run.sent("Ethernet1/2");
    assert!(!out.is_empty());
    assert!(out.iter().all(|(_, f)| f[12..14] == [0x08, 0x06]));
    assert_eq!(run.drops("Ethernet1/1", "neighbor_unresolved"), 3);
}

#[test]
fn every_drop_has_its_reason() {
    let ok = build(&udp_from_h1("10.0.2.2"), 0);
    let mut expired = udp_from_h1("10.0.2.2");
    expired.ttl = 1;
    let mut big = udp_from_h1("10.0.2.2");
    big.frame_len = 3000; // over Ethernet1/2's MTU 1500
    let mut wrong_mac = ok.clone();
    wrong_mac[0..6].copy_from_slice(&[2, 9, 9, 9, 9, 9]);
    let mut bad_ck = ok.clone();
    bad_ck[24] ^= 1;
    let mut bad_ihl = ok.clone();
    bad_ihl[14] = 0x44;
    let short_bth = {
        let mut s = udp_from_h1("10.0.2.2");
        s.transport = Transport::Roce {
            opcode: 0x0a,
            dest_qp: 1,
            psn: 1,
        };
        let mut f = build(&s, 0);
        // Claim a UDP length that ends inside the BTH.
        let ip_len = 20 + 8 + 4;
        f[16..18].copy_from_slice(&(ip_len as u16).to_be_bytes());
        f[38..40].copy_from_slice(&12u16.to_be_bytes());
        f[24..26].copy_from_slice(&[0, 0]);
        let c = !railyard_dataplane::wire::checksum::data(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
        f
    };
    let frames = vec![
        build(&expired, 0),
        build(&big, 0),
        wrong_mac,
        build(&udp_from_h1("8.8.8.8"), 0),
        build(&udp_from_h1("172.20.0.1"), 0),
        ok[..20].to_vec(),
        bad_ck,
        bad_ihl,
        short_bth,
        {
            let mut f = ok.clone();
            f[12..14].copy_from_slice(&[0x88, 0xb5]);
            f
        },
    ];
    let run = replay(CONFIG, &[("Ethernet1/1", timed(frames, 0, 100))]);
    let c = run.counters("Ethernet1/1");
    assert_eq!(run.drops("Ethernet1/1", "ttl_expired"), 1);
    assert_eq!(run.drops("Ethernet1/1", "mtu_exceeded"), 1);
    assert_eq!(run.drops("Ethernet1/1", "not_our_mac"), 1);
    assert_eq!(run.drops("Ethernet1/1", "no_route"), 1);
    assert_eq!(run.drops("Ethernet1/1", "null_route"), 1);
    assert_eq!(run.drops("Ethernet1/1", "unknown_ethertype"), 1);
    assert_eq!(c.rx_malformed, 4);
    assert_eq!(run.drops("Ethernet1/1", "malformed"), 4);
    assert_eq!(c.rx_packets, 10);
    assert_eq!(c.total_drops(), 10, "received = sent + dropped");
    assert!(run.sent("Ethernet1/2").is_empty());
}

#[test]
fn stats_json_has_the_stable_shape() {
    let run = replay(
        CONFIG,
        &[("Ethernet1/1", vec![(0, build(&udp_from_h1("10.0.2.2"), 0))])],
    );
    let json = serde_json::to_value(&run.report.stats).unwrap();
    let e2 = &json["interfaces"]["Ethernet1/2"];
    for key in [
        "rx_packets",
        "rx_bytes",
        "tx_packets",
        "tx_bytes",
        "rx_malformed",
        "drops",
        "queues",
        "pfc",
    ] {
        assert!(!e2[key].is_null(), "missing {key}");
    }
    assert_eq!(e2["tx_packets"], 1);
    assert_eq!(e2["queues"].as_array().unwrap().len(), 8);
    for key in [
        "queue",
        "tx_packets",
        "tx_bytes",
        "ecn_marked",
        "wred_drops",
        "tail_drops",
        "depth_bytes",
        "max_depth_bytes",
    ] {
        assert!(!e2["queues"][0][key].is_null(), "missing queue field {key}");
    }
    for key in ["tx_pause", "tx_resume", "rx_pause", "rx_resume"] {
        assert_eq!(e2["pfc"][key].as_array().unwrap().len(), 8);
    }
    assert_eq!(json["interfaces"]["Ethernet1/1"]["drops"]["no_route"], 0);
}

#[test]
fn compiled_macs_are_stable_and_distinct() {
    let a = compile_text(
        "hostname a\ninterface e1/1\n no switchport\ninterface e1/2\n no switchport\n",
    );
    let b = compile_text("hostname b\ninterface e1/1\n no switchport\n");
    let m = &a.model.interfaces;
    assert_ne!(m[0].mac, m[1].mac);
    assert_ne!(m[0].mac, b.model.interfaces[0].mac);
    assert_eq!(
        m[0].mac,
        compile_text("hostname a\ninterface e1/1\n no switchport\n")
            .model
            .interfaces[0]
            .mac
    );
    assert!(!m[0].mac.is_multicast());
}

#[test]
fn frames_the_backend_cannot_carry_are_counted_too() {
    let ok = build(&udp_from_h1("10.0.2.2"), 0);
    let mut giant = ok.clone();
    giant.resize(12_000, 0);
    let run = replay(CONFIG, &[("Ethernet1/1", vec![(0, giant), (10, ok)])]);
    let c = run.counters("Ethernet1/1");
    assert_eq!(
        c.backend_rx_dropped, 1,
        "the oversize frame is counted where it was lost"
    );
    assert_eq!(c.rx_packets, 1);
    assert_eq!(run.sent("Ethernet1/2").len(), 1);
}
