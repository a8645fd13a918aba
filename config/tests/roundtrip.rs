//! The printer: canonical text, and parse(print(model)) == model.

mod common;

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::PathBuf;

use common::{clean, ok, render};
use railyard_config::{
    AccessList, AclEntry, Bandwidth, Bind, ChannelGroup, ChannelMode, ClassMap, ClassMapKind,
    Config, CustomTlv, DcbxVersion, Direction, Dlb, DlbInterfaces, DlbMode, DlbPin, Interface,
    InterfaceName, IpPrefix, Ipv4Prefix, Ipv6Prefix, L2Port, LacpRate, LldpTlvSelect, LoadSharing,
    Match, MatchMode, NetworkQosPolicy, NqClass, PauseThresholds, PfcMode, PortChannel, PortMatch,
    QosPolicy, QosPolicyClass, QueueLimit, QueuingClass, QueuingPolicy, RouteTarget, Shape,
    StaticMac, StaticRoute, Svi, Switchport, SwitchportMode, Threshold, VlanSet, Wred, WredPreset,
    CLASS_DEFAULT, DEFAULT_FLOWLET_TABLE_SIZE,
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
    assert_eq!(ok(want).config, p.config);
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
        col: 0,
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
        // Breakout lanes live on module 3 so no port is both whole and broken out.
        let name = if rng.chance(20) {
            InterfaceName::breakout(3, 1 + rng.below(64) as u8, 1 + rng.below(4) as u8)
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
    layer2(rng, &mut c);
    qos(rng, &mut c, &names);
    c
}

/// Legal switchport settings over the created VLANs `ids`.
fn switchport(rng: &mut Rng, ids: &[u16]) -> Switchport {
    let mut sp = Switchport::default();
    if rng.chance(50) {
        sp.mode = SwitchportMode::Trunk;
    }
    if rng.chance(60) {
        sp.access_vlan = *rng.pick(ids);
    }
    if rng.chance(40) {
        sp.native_vlan = *rng.pick(ids);
    }
    sp.trunk_allowed = match rng.below(4) {
        0 => VlanSet::all(),
        1 => VlanSet::new(),
        2 => ids
            .iter()
            .filter(|_| rng.chance(50))
            .fold(VlanSet::new(), |mut s, id| {
                s.insert(*id);
                s
            }),
        _ => {
            let a = 1 + rng.below(4000) as u16;
            VlanSet::range(a..=a + rng.below(90) as u16)
        }
    };
    sp
}

/// Legal Layer 2 settings: VLANs, switchports of the Layer 2 ports,
/// port-channels whose members agree with them, SVIs, the MAC table.
fn layer2(rng: &mut Rng, c: &mut Config) {
    for _ in 0..rng.below(5) {
        let id = 2 + rng.below(4093) as u16;
        let named = rng.chance(50);
        if let Some(v) = c.vlans.get_or_insert(id, 0) {
            v.name = named.then(|| format!("RAIL-{id}"));
        }
    }
    let ids: Vec<u16> = c.vlans.iter().map(|v| v.id).collect();
    for i in c.interfaces.iter_mut().filter(|i| !i.routed) {
        i.switchport = switchport(rng, &ids);
    }
    // Port-channels: some interfaces join one, taking its layer and settings.
    let mut lacp = false;
    for (k, id) in [1u16, 10, 4096].into_iter().enumerate() {
        if !rng.chance(40) {
            continue;
        }
        let mut pc = PortChannel::new(id, 0);
        pc.routed = rng.chance(50);
        if pc.routed {
            pc.ipv4
                .push(Ipv4Prefix::new(Ipv4Addr::new(10, 150 + k as u8, 0, 0), 31).unwrap());
            if rng.chance(50) {
                let addr = Ipv6Addr::new(0x2001, 0xdb8, 0x150 + k as u16, 0, 0, 0, 0, 1);
                pc.ipv6.push(Ipv6Prefix::new(addr, 127).unwrap());
            }
        } else {
            pc.switchport = switchport(rng, &ids);
        }
        pc.shutdown = rng.chance(20);
        pc.description = rng.chance(30).then(|| format!("bundle {id}"));
        pc.mtu = if rng.chance(50) { 9216 } else { 1500 };
        pc.min_links = rng.chance(30).then(|| 1 + rng.below(32) as u8);
        pc.vrf = rng.chance(10).then(|| "tenant".to_string());
        let mode = *rng.pick(&[ChannelMode::On, ChannelMode::Active, ChannelMode::Passive]);
        lacp |= mode.is_lacp() || pc.min_links.is_some();
        for i in c.interfaces.iter_mut() {
            if i.channel_group.is_some() || !rng.chance(30) {
                continue;
            }
            i.channel_group = Some(ChannelGroup { id, mode });
            i.routed = pc.routed;
            i.switchport = if pc.routed {
                Switchport::default()
            } else {
                pc.switchport
            };
            i.ipv4.clear();
            i.ipv6.clear();
            if mode.is_lacp() && rng.chance(50) {
                i.lacp_rate = LacpRate::Fast;
                i.lacp_port_priority = rng.chance(50).then(|| 1 + rng.below(65535) as u16);
            }
        }
        c.port_channels.push(pc);
    }
    if rng.chance(30) {
        c.lacp_system_priority = Some(1 + rng.below(65535) as u16);
        lacp = true;
    }
    if lacp {
        c.features.insert("lacp".to_string());
    }
    for k in 0..rng.below(3) as u8 {
        let vlan = *rng.pick(&ids);
        if c.svis.iter().any(|s| s.vlan == vlan) {
            continue;
        }
        let mut s = Svi::new(vlan, 0);
        s.ipv4
            .push(Ipv4Prefix::new(Ipv4Addr::new(10, 100 + k, 0, 1), 24).unwrap());
        s.shutdown = rng.chance(30);
        s.mtu = if rng.chance(50) { 9216 } else { 1500 };
        s.mac = rng.chance(30).then(|| rng.mac());
        s.description = rng.chance(30).then(|| "rail gateway".to_string());
        s.vrf = rng.chance(10).then(|| "tenant".to_string());
        c.svis.push(s);
        c.features.insert("interface-vlan".to_string());
    }
    c.svis.sort_by_key(|s| s.vlan);
    if rng.chance(30) {
        c.mac_table.aging_secs = *rng.pick(&[0, 10, 300, 1_000_000]);
    }
    // Static entries on Layer 2 ports that carry their VLAN.
    let mut targets: Vec<(L2Port, Switchport)> = c
        .interfaces
        .iter()
        .filter(|i| !i.routed && i.channel_group.is_none())
        .map(|i| (L2Port::Ethernet(i.name), i.switchport))
        .collect();
    targets.extend(
        c.port_channels
            .iter()
            .filter(|p| !p.routed)
            .map(|p| (L2Port::PortChannel(p.id), p.switchport)),
    );
    for _ in 0..rng.below(3) {
        if targets.is_empty() {
            break;
        }
        let (target, sp) = *rng.pick(&targets);
        let Some(vlan) = sp.vlans().iter().next() else {
            continue;
        };
        let mac = rng.mac();
        c.mac_table.statics.push(StaticMac {
            mac,
            vlan,
            target,
            line: 0,
        });
    }
}

/// A non-empty set of the values below `n` (bit v = value v).
fn set(rng: &mut Rng, n: u32) -> u64 {
    let mask = if n == 64 { u64::MAX } else { (1u64 << n) - 1 };
    loop {
        let s = match rng.below(3) {
            0 => 1u64 << rng.below(u64::from(n)),
            1 => {
                let a = rng.below(u64::from(n));
                let b = a + rng.below(u64::from(n) - a);
                (a..=b).fold(0, |acc, v| acc | (1 << v))
            }
            _ => rng.next() & mask,
        };
        if s != 0 {
            return s;
        }
    }
}

/// A byte count that prints in bytes, kbytes or mbytes.
fn bytes(rng: &mut Rng) -> u64 {
    match rng.below(3) {
        0 => 1 + rng.below(1 << 20),
        1 => (1 + rng.below(8000)) * 1024,
        _ => (1 + rng.below(64)) * 1024 * 1024,
    }
}

/// A rate that prints in any unit.
fn rate(rng: &mut Rng) -> u64 {
    let base = 1 + rng.below(999);
    base * *rng.pick(&[1u64, 1_000, 1_000_000, 1_000_000_000])
}

fn acl(rng: &mut Rng, name: String) -> AccessList {
    let mut entries = Vec::new();
    let mut seq = 0;
    for _ in 0..rng.below(4) {
        seq += 1 + rng.below(20) as u32;
        let protocol = *rng.pick(&[None, Some(6), Some(17), Some(1), Some(47), Some(200)]);
        let ports = matches!(protocol, Some(6 | 17));
        let port = |rng: &mut Rng| {
            if !ports || rng.chance(50) {
                return None;
            }
            let a = rng.below(65536) as u16;
            Some(match rng.below(5) {
                0 => PortMatch::Eq(a.into()),
                1 => PortMatch::Neq(a.into()),
                2 => PortMatch::Lt(a.into()),
                3 => PortMatch::Gt(a.into()),
                _ => PortMatch::Range(a.into(), a.saturating_add(rng.below(100) as u16).into()),
            })
        };
        let prefix = |rng: &mut Rng| {
            if rng.chance(40) {
                return None;
            }
            let len = *rng.pick(&[8u8, 16, 24, 32]);
            let p = Ipv4Prefix::new(Ipv4Addr::from(rng.next() as u32), len).unwrap();
            Some(IpPrefix::V4(p.network()))
        };
        let src = prefix(rng);
        let src_port = port(rng);
        let dst = prefix(rng);
        let dst_port = port(rng);
        entries.push(AclEntry {
            seq,
            permit: rng.chance(70),
            protocol,
            src,
            dst,
            src_port,
            dst_port,
            dscp: rng.chance(30).then(|| rng.below(64) as u8),
            unevaluated: None,
        });
    }
    AccessList { name, entries }
}

fn class_map(rng: &mut Rng, name: String, acls: &[AccessList]) -> ClassMap {
    let mut matches: Vec<Match> = Vec::new();
    for _ in 0..rng.below(4) {
        let m = match rng.below(4) {
            0 => Match::Dscp(set(rng, 64)),
            1 => Match::Cos(set(rng, 8) as u8),
            2 => Match::Precedence(set(rng, 8) as u8),
            _ if !acls.is_empty() => Match::AccessGroup(rng.pick(acls).name.clone()),
            _ => Match::Dscp(set(rng, 64)),
        };
        if !matches.contains(&m) {
            matches.push(m);
        }
    }
    ClassMap {
        name,
        kind: ClassMapKind::Qos,
        match_mode: if rng.chance(50) {
            MatchMode::Any
        } else {
            MatchMode::All
        },
        matches,
    }
}

fn wred(rng: &mut Rng) -> Wred {
    if rng.chance(25) {
        let preset = *rng.pick(&[WredPreset::BurstOptimized, WredPreset::MeshOptimized]);
        return preset.wred(rng.chance(50));
    }
    let (min, max) = if rng.chance(30) {
        let a = rng.below(10_000);
        (
            Threshold::Packets(a),
            Threshold::Packets(a + rng.below(10_000)),
        )
    } else {
        let a = bytes(rng);
        (Threshold::Bytes(a), Threshold::Bytes(a + bytes(rng)))
    };
    Wred {
        min,
        max,
        drop_probability: rng.below(101) as u8,
        weight: rng.below(16) as u8,
        ecn: rng.chance(60),
        preset: None,
    }
}

fn queuing_policy(rng: &mut Rng, name: String) -> QueuingPolicy {
    let direction = if rng.chance(35) {
        Direction::Ingress
    } else {
        Direction::Egress
    };
    let mut queues: Vec<u8> = (0..8).filter(|_| rng.chance(40)).collect();
    let shift = rng.below(queues.len().max(1) as u64) as usize;
    queues.rotate_left(shift);
    let classes = queues
        .into_iter()
        .map(|queue| {
            let mut c = QueuingClass::new(queue);
            if rng.chance(30) {
                c.priority_level = Some(1 + rng.below(8) as u8);
            } else if rng.chance(70) {
                c.bandwidth = Some(match rng.below(3) {
                    0 => Bandwidth::Percent(rng.below(13) as u8),
                    1 => Bandwidth::RemainingPercent(rng.below(13) as u8),
                    _ => Bandwidth::Rate(rate(rng)),
                });
            }
            if rng.chance(40) {
                c.wred = Some(wred(rng));
            }
            if rng.chance(40) {
                c.queue_limit = Some(match rng.below(4) {
                    0 => QueueLimit::Bytes(bytes(rng)),
                    1 => QueueLimit::Packets(1 + rng.below(100_000)),
                    2 => QueueLimit::Percent(1 + rng.below(100) as u8),
                    _ => QueueLimit::Dynamic(rng.below(11) as u8),
                });
            }
            if rng.chance(40) {
                let max_bps = rate(rng);
                let min_bps = if rng.chance(50) { 0 } else { max_bps / 2 };
                c.shape = Some(Shape { min_bps, max_bps });
            }
            if direction == Direction::Ingress && rng.chance(60) {
                let xon = bytes(rng);
                let xoff = xon + 1 + rng.below(1 << 20);
                let buffer_size = xoff + rng.below(1 << 20);
                c.pause = Some(PauseThresholds {
                    buffer_size,
                    xoff,
                    xon,
                });
            }
            c
        })
        .collect::<Vec<_>>();
    QueuingPolicy {
        name,
        direction: if classes.is_empty() {
            Direction::Egress
        } else {
            direction
        },
        classes,
    }
}

fn network_qos_policy(rng: &mut Rng, name: String) -> NetworkQosPolicy {
    let mut free: Vec<u8> = (0..8).collect();
    let mut groups: Vec<u8> = (0..8).filter(|_| rng.chance(40)).collect();
    let shift = rng.below(groups.len().max(1) as u64) as usize;
    groups.rotate_left(shift);
    let classes = groups
        .into_iter()
        .map(|qos_group| {
            let mut pause_pfc_cos = Vec::new();
            if rng.chance(50) && !free.is_empty() {
                let i = rng.below(free.len() as u64) as usize;
                pause_pfc_cos.push(free.remove(i));
                if rng.chance(30) && !free.is_empty() {
                    let j = rng.below(free.len() as u64) as usize;
                    pause_pfc_cos.push(free.remove(j));
                }
                pause_pfc_cos.sort_unstable();
            }
            NqClass {
                qos_group,
                mtu: rng
                    .chance(60)
                    .then(|| 576 + rng.below(9216 - 576 + 1) as u16),
                no_drop: rng.chance(20),
                pause_pfc_cos,
                class: None,
            }
        })
        .collect();
    NetworkQosPolicy { name, classes }
}

/// Pick the name of a policy that fits, or none.
fn pick_name(rng: &mut Rng, names: &[&str]) -> Option<String> {
    (!names.is_empty() && rng.chance(70)).then(|| (*rng.pick(names)).to_string())
}

/// Fill in every QoS and global section with legal, mutually consistent values.
fn qos(rng: &mut Rng, c: &mut Config, names: &[InterfaceName]) {
    for i in 0..rng.below(3) {
        c.access_lists.push(acl(rng, format!("ACL-{i}")));
    }
    for i in 0..rng.below(4) {
        let cm = class_map(rng, format!("CM_{i}"), &c.access_lists);
        c.class_maps.push(cm);
    }
    for i in 0..rng.below(3) {
        let mut classes: Vec<QosPolicyClass> = Vec::new();
        for cm in &c.class_maps {
            if rng.chance(60) {
                classes.push(QosPolicyClass {
                    class: cm.name.clone(),
                    set_qos_group: rng.chance(80).then(|| rng.below(8) as u8),
                });
            }
        }
        if rng.chance(50) {
            let at = rng.below(classes.len() as u64 + 1) as usize;
            classes.insert(
                at,
                QosPolicyClass {
                    class: CLASS_DEFAULT.into(),
                    set_qos_group: rng.chance(80).then(|| rng.below(8) as u8),
                },
            );
        }
        c.qos_policies.push(QosPolicy {
            name: format!("QOS.{i}"),
            classes,
        });
    }
    for i in 0..rng.below(4) {
        c.queuing_policies
            .push(queuing_policy(rng, format!("Q{i}")));
    }
    for i in 0..rng.below(3) {
        c.network_qos_policies
            .push(network_qos_policy(rng, format!("nq-{i}")));
    }
    let qos_names: Vec<&str> = c.qos_policies.iter().map(|p| p.name.as_str()).collect();
    let fits = |d: Direction| -> Vec<&str> {
        c.queuing_policies
            .iter()
            .filter(|p| p.direction == d || p.classes.is_empty())
            .map(|p| p.name.as_str())
            .collect()
    };
    let (outs, ins) = (fits(Direction::Egress), fits(Direction::Ingress));
    let nq_names: Vec<&str> = c
        .network_qos_policies
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    c.system_qos.qos_input = pick_name(rng, &qos_names);
    c.system_qos.queuing_output = pick_name(rng, &outs);
    c.system_qos.queuing_input = pick_name(rng, &ins);
    c.system_qos.network_qos = pick_name(rng, &nq_names);
    let mut picks = Vec::new();
    for _ in 0..c.interfaces.len() {
        picks.push((
            pick_name(rng, &qos_names),
            pick_name(rng, &outs),
            pick_name(rng, &ins),
        ));
    }
    for (iface, (q, o, i)) in c.interfaces.iter_mut().zip(picks) {
        iface.service_policy_qos_input = q;
        iface.service_policy_queuing_output = o;
        iface.service_policy_queuing_input = i;
        iface.pfc_mode = *rng.pick(&[PfcMode::Auto, PfcMode::On, PfcMode::Off]);
        iface.pfc_send_tlv = rng.chance(20);
        iface.pfc_watchdog = *rng.pick(&[None, Some(true), Some(false)]);
        iface.lldp_transmit = rng.chance(80);
        iface.lldp_receive = rng.chance(80);
    }
    c.pfc_watchdog_interval = *rng.pick(&[None, Some(true), Some(false)]);
    if rng.chance(40) {
        c.pfc_watchdog.interval_ms = 100 + rng.below(901) as u16;
        c.pfc_watchdog.shutdown_multiplier = 1 + rng.below(10) as u8;
        c.pfc_watchdog.auto_restore_multiplier = rng.below(101) as u8;
        c.pfc_watchdog.fixed_restore_multiplier = rng.below(101) as u8;
    }
    if rng.chance(40) {
        let interfaces = if rng.chance(30) {
            DlbInterfaces::All
        } else {
            let mut l: Vec<InterfaceName> =
                names.iter().copied().filter(|_| rng.chance(50)).collect();
            l.sort();
            DlbInterfaces::List(l)
        };
        c.dlb = Some(Dlb {
            interfaces,
            mode: *rng.pick(&[DlbMode::Flowlet, DlbMode::PerPacket]),
            mac_address: rng.mac(),
            flowlet_aging_us: 1 + rng.below(2_000_000) as u32,
            dre_thresholds: rng
                .chance(50)
                .then(|| std::array::from_fn(|_| rng.below(101) as u8)),
            decay_factor: rng.chance(50).then(|| rng.below(16) as u8),
            sampling_interval_ns: rng.chance(50).then(|| 1 + rng.below(100_000) as u32),
            load_awareness: rng.chance(50),
            flowlet_table_size: if rng.chance(50) {
                DEFAULT_FLOWLET_TABLE_SIZE
            } else {
                256 << rng.below(13)
            },
            policy_driven: rng.chance(30),
            static_pinning: {
                // One pin per source, never to itself.
                let mut pins: Vec<DlbPin> = Vec::new();
                for &source in names {
                    if rng.chance(20) {
                        let destination = *rng.pick(names);
                        if destination != source {
                            pins.push(DlbPin {
                                source,
                                destination,
                            });
                        }
                    }
                }
                pins
            },
        });
    }
    if rng.chance(40) {
        let (src_addr, dst_addr) = *rng.pick(&[(true, false), (false, true), (true, true)]);
        let (src_port, dst_port) =
            *rng.pick(&[(false, false), (true, false), (false, true), (true, true)]);
        c.load_sharing = LoadSharing {
            src_addr,
            dst_addr,
            src_port,
            dst_port,
            concatenation: rng.chance(30),
            rocev2_dest_qp: rng.chance(30),
            rotate: rng.chance(50).then(|| rng.below(64) as u8),
            universal_id: rng.chance(50).then(|| rng.next() as u32),
        };
    }
    c.lldp.enabled = c.features.contains("lldp");
    if rng.chance(40) {
        c.lldp.timer_s = 5 + rng.below(250) as u16;
        c.lldp.holdtime_s = 10 + rng.below(246) as u16;
        c.lldp.reinit_s = 1 + rng.below(10) as u16;
        for k in LldpTlvSelect::KEYWORDS {
            *c.lldp.tlv_select.flag_mut(k).unwrap() = rng.chance(70);
        }
    }
    if rng.chance(20) {
        c.buffer_bytes = Some(bytes(rng));
    }
    // Drawn last so the earlier parts of each case stay as they were.
    for iface in &mut c.interfaces {
        iface.dcbx_version = *rng.pick(&[
            DcbxVersion::Auto,
            DcbxVersion::Auto,
            DcbxVersion::Ieee,
            DcbxVersion::Cee,
        ]);
    }
    if rng.chance(30) {
        for _ in 0..1 + rng.below(4) {
            // A small key space, so replacing an entry happens too.
            let oui = *rng.pick(&[[0x00, 0x11, 0x22], [0xab, 0xcd, 0xef], [0x00, 0x1b, 0x21]]);
            let subtype = *rng.pick(&[0u8, 1, 5, 255]);
            let len = *rng.pick(&[0usize, 1, 4, 64, 507]);
            let info = (0..len).map(|_| rng.next() as u8).collect();
            let tlv = CustomTlv { oui, subtype, info };
            let tlvs = &mut c.lldp.custom_tlvs;
            match tlvs
                .iter_mut()
                .find(|t| t.oui == oui && t.subtype == subtype)
            {
                Some(old) => *old = tlv,
                None => tlvs.push(tlv),
            }
        }
    }
    // Drawn after everything else, so the earlier cases stay as they were.
    if rng.chance(20) {
        let words = [
            "--no-huge",
            "--no-shconf",
            "-m",
            "1024",
            "--iova-mode=va",
            "--vdev",
            "net_af_packet0,iface=veth1",
            "-d",
            "/usr/lib/x86_64-linux-gnu/dpdk/pmds-23.0",
        ];
        c.dpdk_eal_args = (0..1 + rng.below(6))
            .map(|_| rng.pick(&words).to_string())
            .collect();
    }
}

#[test]
fn generated_configs_round_trip() {
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    // How many cases exercised each kind of section, so the generator is known to reach them.
    let mut seen = [0usize; 15];
    for case in 0..500 {
        let want = config(&mut rng);
        let kinds = [
            !want.access_lists.is_empty(),
            want.class_maps.iter().any(|c| !c.matches.is_empty()),
            want.qos_policies.iter().any(|p| !p.classes.is_empty()),
            want.queuing_policies.iter().any(|p| {
                p.direction == Direction::Ingress && p.classes.iter().any(|c| c.pause.is_some())
            }),
            want.network_qos_policies
                .iter()
                .any(|p| !p.classes.is_empty()),
            !want.system_qos.is_empty(),
            want.dlb.is_some(),
            want.interfaces
                .iter()
                .any(|i| i.service_policy_qos_input.is_some()),
            want.interfaces
                .iter()
                .any(|i| i.dcbx_version != DcbxVersion::Auto),
            !want.lldp.custom_tlvs.is_empty(),
            want.vlans.iter().any(|v| v.name.is_some()),
            want.interfaces
                .iter()
                .any(|i| i.switchport.mode == SwitchportMode::Trunk),
            want.interfaces.iter().any(|i| i.channel_group.is_some()),
            !want.svis.is_empty(),
            !want.mac_table.statics.is_empty(),
        ];
        for (n, k) in seen.iter_mut().zip(kinds) {
            *n += usize::from(k);
        }
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
    assert!(
        seen.iter().all(|n| *n >= 50),
        "sections seen per kind: {seen:?}"
    );
}

#[test]
fn lldp_extensions_print_canonically() {
    let text = "\
feature lldp
lldp tlv custom oui AB-CD-EF subtype 7
lldp tlv custom oui 00,11,22 subtype 5 info 0A0B
lldp tlv custom oui ab:cd:ef subtype 7 info FF
interface e1/1
  lldp dcbx version cee
  no lldp receive
interface e1/2
  lldp dcbx version auto
interface e1/3
  lldp dcbx version ieee
";
    let want = "\
feature lldp

lldp tlv custom oui ab:cd:ef subtype 7 info ff
lldp tlv custom oui 00:11:22 subtype 5 info 0a0b

interface Ethernet1/1
  no lldp receive
  lldp dcbx version cee
  no shutdown

interface Ethernet1/2
  no shutdown

interface Ethernet1/3
  lldp dcbx version ieee
  no shutdown
";
    let c = clean(text).config;
    assert_eq!(c.to_string(), want);
    assert_eq!(clean(want).config, c);
    // An empty info is left out.
    let c = clean("feature lldp\nlldp tlv custom oui 00:11:22 subtype 0\n").config;
    assert_eq!(
        c.to_string(),
        "feature lldp\n\nlldp tlv custom oui 00:11:22 subtype 0\n"
    );
}
