//! The printer: canonical text, and parse(print(model)) == model.

mod common;

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use common::{clean, ok, render};
use railyard_config::{
    Bind, Config, Interface, InterfaceName, IpPrefix, Ipv4Prefix, Ipv6Prefix, RouteTarget,
    StaticRoute,
};

#[test]
fn canonical_text() {
    let text = "\
switchname leaf9
feature lldp
feature bgp
ip route 10.8.0.0 255.255.0.0 10.0.0.2 name x
interface eth1/2
  no shutdown
  ip arp 10.0.0.2 00:11:22:33:44:55
  ip address 10.0.0.1/24
  ip address 10.0.1.1 255.255.255.0 secondary
  no switchport
  bind pcap in.pcap
  mac-address 02:00:00:00:00:01
  mtu 9216
  speed 100000
  description  uplink to spine  
  ipv6 address 2001:db8::1/64
  ipv6 neighbor 2001:db8::2 0011.2233.4466
interface e1/1
  shutdown
ipv6 route 2001:db8:9::/48 Ethernet1/2 fe80::2
ip route 0.0.0.0/0 Null0
";
    let p = ok(text);
    let want = "\
hostname leaf9
feature bgp
feature lldp

interface Ethernet1/2
  description uplink to spine
  no switchport
  speed 100000
  mtu 9216
  mac-address 0200.0000.0001
  bind pcap in.pcap
  ip address 10.0.0.1/24
  ip address 10.0.1.1/24 secondary
  ipv6 address 2001:db8::1/64
  ip arp 10.0.0.2 0011.2233.4455
  ipv6 neighbor 2001:db8::2 0011.2233.4466
  no shutdown

interface Ethernet1/1
  shutdown

ip route 10.8.0.0/16 10.0.0.2
ipv6 route 2001:db8:9::/48 Ethernet1/2 fe80::2
ip route 0.0.0.0/0 Null0
";
    // Sub-commands come out in one fixed order whatever order they were written in.
    assert_eq!(p.config.to_string(), want);
    assert_eq!(clean(want).config, p.config);
}

#[test]
fn an_empty_config_prints_nothing_and_single_parts_have_no_stray_blank_lines() {
    assert_eq!(Config::default().to_string(), "");
    assert_eq!(ok("hostname a\n").config.to_string(), "hostname a\n");
    assert_eq!(
        ok("ip route 0.0.0.0/0 Null0\n").config.to_string(),
        "ip route 0.0.0.0/0 Null0\n"
    );
    assert_eq!(
        ok("interface e1/1\n").config.to_string(),
        "interface Ethernet1/1\n  no shutdown\n"
    );
}

/// A small deterministic generator (xorshift64*), so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
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
    fn mac(&mut self) -> [u8; 6] {
        let b = self.next().to_be_bytes();
        // Unicast, locally administered, never all zeros.
        [(b[0] & 0xfe) | 0x02, b[1], b[2], b[3], b[4], b[5]]
    }
}

const WORDS: &[&str] = &[
    "to",
    "spine-1",
    "Eth1/49",
    "gpu",
    "rail",
    "!not-a-comment",
    "#3",
    "x",
];
const SPEEDS: &[u32] = &[1000, 10000, 25000, 40000, 100000, 400000];

/// A legal interface: addresses are unique across interfaces because they embed `slot`.
fn interface(rng: &mut Rng, name: InterfaceName, slot: u8) -> Interface {
    let mut i = Interface::new(name, 0);
    i.routed = rng.chance(70);
    i.shutdown = rng.chance(30);
    if rng.chance(60) {
        let n = 1 + rng.below(4) as usize;
        let words: Vec<&str> = (0..n).map(|_| *rng.pick(WORDS)).collect();
        i.description = Some(words.join(if rng.chance(20) { "  " } else { " " }));
    }
    for k in 0..rng.below(3) as u8 {
        let len = *rng.pick(&[24u8, 30, 31]);
        i.ipv4
            .push(Ipv4Prefix::new(Ipv4Addr::new(10, slot, k, 1), len).unwrap());
    }
    for k in 0..rng.below(3) as u16 {
        let addr = Ipv6Addr::new(0x2001, 0xdb8, u16::from(slot), k, 0, 0, 0, 1);
        i.ipv6
            .push(Ipv6Prefix::new(addr, *rng.pick(&[64u8, 127])).unwrap());
    }
    if rng.chance(50) {
        i.mtu = 576 + rng.below(9216 - 576 + 1) as u16;
    }
    if rng.chance(30) {
        i.mac = Some(rng.mac());
    }
    if rng.chance(40) {
        i.speed_mbps = Some(*rng.pick(SPEEDS));
    }
    i.bind = match rng.below(7) {
        0 => Some(Bind::AfPacket(format!("veth{slot}"))),
        1 => Some(Bind::Tap(format!("tap{slot}"))),
        2 => Some(Bind::Pcap(PathBuf::from(format!("/tmp/in{slot}.pcap")))),
        3 => Some(Bind::Ring(format!("r{slot}"))),
        4 => Some(Bind::Dpdk(format!("{slot}"))),
        5 => Some(Bind::AfXdp(format!("xdp{slot}"))),
        _ => None,
    };
    for host in 0..rng.below(3) as u8 {
        i.arp
            .push((Ipv4Addr::new(10, slot, 0, 100 + host), rng.mac()));
    }
    for host in 0..rng.below(3) as u16 {
        let addr = Ipv6Addr::new(0x2001, 0xdb8, u16::from(slot), 0, 0, 0, 0, 0x100 + host);
        i.nd.push((addr, rng.mac()));
    }
    i
}

/// A legal route; `None` when it would duplicate one already generated.
fn route(rng: &mut Rng, names: &[InterfaceName], existing: &[StaticRoute]) -> Option<StaticRoute> {
    let v6 = rng.chance(30);
    let prefix = if v6 {
        let p = Ipv6Prefix::new(
            Ipv6Addr::new(0x2001, 0xdb8, rng.below(4) as u16, 0, 0, 0, 0, 0),
            48,
        )
        .unwrap();
        IpPrefix::V6(p.network())
    } else {
        let len = *rng.pick(&[0u8, 8, 16, 24, 32]);
        let p = Ipv4Prefix::new(Ipv4Addr::new(172, 16, rng.below(4) as u8, 0), len).unwrap();
        IpPrefix::V4(p.network())
    };
    let addr: IpAddr = if v6 {
        Ipv6Addr::new(0x2001, 0xdb8, 0xff, 0, 0, 0, 0, 1 + rng.below(3) as u16).into()
    } else {
        Ipv4Addr::new(10, 200, 0, 1 + rng.below(3) as u8).into()
    };
    let iface = *rng.pick(names);
    let target = match rng.below(4) {
        0 => RouteTarget::Null0,
        1 => RouteTarget::Interface(iface),
        2 => RouteTarget::NextHop {
            addr,
            interface: None,
        },
        _ => RouteTarget::NextHop {
            addr,
            interface: Some(iface),
        },
    };
    let r = StaticRoute {
        prefix,
        target,
        line: 0,
    };
    (!existing.contains(&r)).then_some(r)
}

fn config(rng: &mut Rng) -> Config {
    let mut c = Config::default();
    if rng.chance(70) {
        c.hostname = Some(format!("leaf-{}", rng.below(100)));
    }
    for f in ["lldp", "bgp", "interface-vlan", "nxapi"] {
        if rng.chance(40) {
            c.features.insert(f.to_string());
        }
    }
    let mut names = BTreeSet::new();
    let count = 1 + rng.below(6) as usize;
    while names.len() < count {
        let name = if rng.chance(20) {
            InterfaceName::breakout(1, 1 + rng.below(64) as u8, 1 + rng.below(4) as u8)
        } else {
            InterfaceName::new(1 + rng.below(2) as u8, 1 + rng.below(64) as u8)
        };
        names.insert(name);
    }
    // First-appearance order need not be sorted order.
    let mut names: Vec<InterfaceName> = names.into_iter().collect();
    let shift = rng.below(names.len() as u64) as usize;
    names.rotate_left(shift);
    for (slot, name) in names.iter().enumerate() {
        c.interfaces.push(interface(rng, *name, slot as u8));
    }
    for _ in 0..rng.below(6) {
        if let Some(r) = route(rng, &names, &c.routes) {
            c.routes.push(r);
        }
    }
    c
}

#[test]
fn generated_configs_round_trip() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    for case in 0..500 {
        let want = config(&mut rng);
        let text = want.to_string();
        let got = match common::parse(&text) {
            Ok(p) => p.config,
            Err(es) => panic!(
                "case {case}: printed text does not parse:\n{text}\n{}",
                render(&es)
            ),
        };
        assert_eq!(got, want, "case {case}:\n{text}");
        assert_eq!(got.to_string(), text, "case {case}: printing is not stable");
    }
}
