//! Differential test of the two classifiers: the config crate's reference
//! ([`railyard_config::Classifier::classify`], on the interface's resolved
//! QoS) against the dataplane's fast path
//! ([`railyard_dataplane::qos::classify::Classifier`], built from the model
//! `railyard_control::compile` produces, fed parsed frames).
//!
//! Random legal configurations (access lists, DSCP / precedence / CoS /
//! access-group class-maps, match-any and match-all, several classes with
//! `set qos-group`) and random packets (IPv4 and IPv6, TCP and UDP, ports
//! around the access lists' boundaries, any DSCP, tagged or not) must land in
//! the same qos-group. A failure prints the configuration and the packet.

use std::fmt::Write as _;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use railyard_config::{parse_str, ClassifyInput, FlowKey, InterfaceName, ParseOptions};
use railyard_control::compile::compile;
use railyard_control::traffic::{build, FrameSpec, Transport};
use railyard_dataplane::meta::Meta;
use railyard_dataplane::packet::Pool;
use railyard_dataplane::parse::parse;
use railyard_dataplane::qos::classify::Classifier;
use railyard_dataplane::wire::MacAddr;

/// SplitMix64: small, seedable, good enough to pick test cases.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

/// IPv4 addresses packets use; the prefixes below cover some of them.
const V4: [[u8; 4]; 5] = [
    [10, 1, 0, 5],
    [10, 1, 200, 9],
    [10, 2, 0, 1],
    [192, 168, 7, 7],
    [172, 16, 0, 1],
];
const V4_PREFIXES: [&str; 4] = ["10.1.0.0/16", "10.0.0.0/8", "192.168.7.0/24", "10.2.0.1/32"];
/// Ports packets use, on and around the values the access lists name.
const PORTS: [u16; 9] = [22, 79, 80, 81, 1023, 1024, 4791, 4792, 50000];
const ACL_PORTS: [u16; 5] = [80, 1024, 4791, 22, 50000];

/// A comma list of DSCP values and ranges, e.g. `24,26-28`.
fn value_list(rng: &mut Rng, max: u64) -> String {
    let mut items = Vec::new();
    for _ in 0..=rng.below(2) {
        let a = rng.below(max + 1);
        if rng.chance(30) && a < max {
            let b = a + 1 + rng.below((max - a).min(4));
            items.push(format!("{a}-{b}"));
        } else {
            items.push(a.to_string());
        }
    }
    items.join(",")
}

/// One access-list entry the parser accepts in a classifying access list.
fn acl_entry(rng: &mut Rng, seq: u32) -> String {
    let action = if rng.chance(75) { "permit" } else { "deny" };
    let proto = *rng.pick(&["ip", "tcp", "udp"]);
    let addr = |rng: &mut Rng| {
        if rng.chance(50) {
            "any".to_string()
        } else {
            rng.pick(&V4_PREFIXES).to_string()
        }
    };
    let port = |rng: &mut Rng| {
        if proto == "ip" || rng.chance(50) {
            return String::new();
        }
        let p = *rng.pick(&ACL_PORTS);
        match rng.below(5) {
            0 => format!(" eq {p}"),
            1 => format!(" neq {p}"),
            2 => format!(" lt {p}"),
            3 => format!(" gt {p}"),
            _ => format!(" range {} {}", p, p.saturating_add(rng.below(100) as u16)),
        }
    };
    let src = addr(rng);
    let sp = port(rng);
    let dst = addr(rng);
    let dp = port(rng);
    let dscp = if rng.chance(25) {
        format!(" dscp {}", rng.below(64))
    } else {
        String::new()
    };
    format!("  {seq} {action} {proto} {src}{sp} {dst}{dp}{dscp}\n")
}

/// A random configuration with one classified interface, Ethernet1/1.
fn config(rng: &mut Rng) -> String {
    let mut text = String::new();
    let acls = rng.below(3) as usize;
    for a in 0..acls {
        let _ = writeln!(text, "ip access-list ACL{a}");
        for e in 0..=rng.below(3) {
            text.push_str(&acl_entry(rng, 10 * (e as u32 + 1)));
        }
    }
    let classes = 1 + rng.below(4) as usize;
    for c in 0..classes {
        let mode = if rng.chance(50) {
            "match-any"
        } else {
            "match-all"
        };
        let _ = writeln!(text, "class-map type qos {mode} C{c}");
        let mut lines = Vec::new();
        for _ in 0..=rng.below(2) {
            let line = match rng.below(if acls > 0 { 4 } else { 3 }) {
                0 => format!("  match dscp {}", value_list(rng, 63)),
                1 => format!("  match precedence {}", value_list(rng, 7)),
                2 => format!("  match cos {}", value_list(rng, 7)),
                _ => format!("  match access-group name ACL{}", rng.below(acls as u64)),
            };
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
        for l in lines {
            let _ = writeln!(text, "{l}");
        }
    }
    text.push_str("policy-map type qos P\n");
    for c in 0..classes {
        let _ = writeln!(text, "  class C{c}");
        if rng.chance(90) {
            let _ = writeln!(text, "    set qos-group {}", rng.below(8));
        }
    }
    if rng.chance(40) {
        let _ = writeln!(
            text,
            "  class class-default\n    set qos-group {}",
            rng.below(8)
        );
    }
    text.push_str("interface Ethernet1/1\n  no switchport\n  service-policy type qos input P\n");
    text
}

/// A random frame and what the reference classifier is told about it.
fn packet(rng: &mut Rng, seq: u64) -> (Vec<u8>, ClassifyInput) {
    let v6 = rng.chance(25);
    let (src, dst) = if v6 {
        let a = |rng: &mut Rng| {
            IpAddr::V6(Ipv6Addr::new(
                0x2001,
                0xdb8,
                0,
                0,
                0,
                0,
                0,
                rng.below(4) as u16,
            ))
        };
        (a(rng), a(rng))
    } else {
        (
            IpAddr::V4(Ipv4Addr::from(*rng.pick(&V4))),
            IpAddr::V4(Ipv4Addr::from(*rng.pick(&V4))),
        )
    };
    let tcp = rng.chance(50);
    let dscp = rng.below(64) as u8;
    let pcp = rng.chance(40).then(|| rng.below(8) as u8);
    let mut spec = FrameSpec::udp(
        MacAddr([2, 0, 0, 0, 0, 1]),
        MacAddr([2, 0, 0, 0, 0, 2]),
        src,
        dst,
    );
    spec.dscp = dscp;
    spec.frame_len = 160; // room for a BTH behind UDP 4791
    spec.src_port = *rng.pick(&PORTS);
    spec.dst_port = *rng.pick(&PORTS);
    spec.transport = if tcp { Transport::Tcp } else { Transport::Udp };
    spec.vlan_tci = pcp.map(|p| (u16::from(p) << 13) | 10);
    let input = ClassifyInput {
        dscp: Some(dscp),
        pcp,
        flow: Some(FlowKey {
            protocol: if tcp { 6 } else { 17 },
            src,
            dst,
            src_port: Some(spec.src_port),
            dst_port: Some(spec.dst_port),
            dscp,
        }),
    };
    (build(&spec, seq), input)
}

#[test]
fn config_and_dataplane_classifiers_agree() {
    let pool = Pool::new(8);
    let mut rng = Rng(0x5eed_c1a5);
    let mut rule_configs = 0;
    for case in 0..400 {
        let text = config(&mut rng);
        let parsed = parse_str(&text, "random.conf", &ParseOptions::default())
            .unwrap_or_else(|d| panic!("generated config rejected:\n{text}\n{d:?}"));
        let reference = parsed
            .config
            .effective_qos(&InterfaceName::new(1, 1))
            .classifier;
        let compiled = compile(&parsed.config).expect("compiles");
        let fast = Classifier::new(&compiled.model.interfaces[0]);
        rule_configs += usize::from(!reference.acl_rules.is_empty());
        for seq in 0..200 {
            let (frame, input) = packet(&mut rng, seq);
            let mut p = pool.alloc_from(&frame).expect("a buffer");
            let mut meta = Meta::default();
            parse(p.data(), &mut meta)
                .unwrap_or_else(|e| panic!("{e:?}: {input:?} {:02x?}", &frame));
            p.meta = meta;
            let want = reference.classify(&input);
            let got = fast.classify(&p);
            assert_eq!(
                got, want,
                "case {case}, packet {seq}: dataplane says {got}, config says {want}\n\
                 {input:?}\n--- config\n{text}"
            );
        }
    }
    // The generator reaches the rule path, not only the tables.
    assert!(rule_configs > 50, "{rule_configs} of 400 configs use rules");
}
