//! Layer 2 through the whole pipeline, in virtual time on ring ports: a
//! switch with access ports in two VLANs, a trunk, an SVI per VLAN, a
//! routed port and a routed port-channel of two links.
//!
//! * Unknown unicast and broadcast flood within their VLAN only (tagged on
//!   the trunk), a learned address is switched to its one port, and a
//!   frame back out of its own port is filtered.
//! * A host routes through its VLAN's SVI: ARP for the gateway is answered
//!   on the host's port, and the packet reaches the other VLAN and the
//!   routed port with TTL decremented and the SVI's MAC as source.
//! * A port-channel keeps a flow on one member and moves only the flows of
//!   a member that goes down.
//! * Aging forgets a quiet address; a port going down forgets its own.
//! * Counters conserve: received + flood copies = sent + dropped + queued.

use std::net::Ipv4Addr;

use railyard_dataplane::counters::DropReason;
use railyard_dataplane::model::{
    InterfaceModel, Logical, MacTableModel, NextHopModel, PortL2, RouteModel, RouteSource,
    SwitchModel, VlanSet,
};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::{LinkControl, RingLink, RingPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::{checksum, MacAddr};
use railyard_dataplane::Pool;

const ACCESS_101: [usize; 2] = [0, 1]; // Ethernet1/1-2 in VLAN 101
const ACCESS_102: usize = 2; // Ethernet1/3 in VLAN 102
const TRUNK: usize = 3; // Ethernet1/4: 101, 102 tagged, native 1
const ROUTED: usize = 4; // Ethernet1/5: 10.9.0.0/31
const MEMBERS: [usize; 2] = [5, 6]; // Ethernet1/6-7 in port-channel10
/// Ports 7 and 8 are the SVIs of VLANs 101 and 102.
const PC10: usize = 9;

const SVI_MAC: MacAddr = MacAddr([2, 0, 0, 0, 0xaa, 1]);

fn host(n: u8) -> MacAddr {
    MacAddr([2, 0, 0, 0, 0, n])
}

struct Rig {
    sw: Switch,
    far: Vec<RingPort>,
    links: Vec<LinkControl>,
    pool: Pool,
    now: u64,
}

fn rig(aging_ns: u64) -> Rig {
    let mut ifs = Vec::new();
    for i in 0..7u8 {
        ifs.push(InterfaceModel::new(
            &format!("Ethernet1/{}", i + 1),
            MacAddr([2, 0, 0, 0, 1, i + 1]),
        ));
    }
    for p in ACCESS_101 {
        ifs[p].l2 = Some(PortL2::access(101));
    }
    ifs[ACCESS_102].l2 = Some(PortL2::access(102));
    let mut allowed = VlanSet::empty();
    for v in [1, 101, 102] {
        allowed.insert(v);
    }
    ifs[TRUNK].l2 = Some(PortL2::trunk(&allowed, 1));
    ifs[ROUTED].ipv4 = vec![(Ipv4Addr::new(10, 9, 0, 0), 31)];
    // RoCEv2's DSCP 24 is qos-group 3 on h1's port.
    ifs[0].dscp_to_qos_group[24] = 3;
    for m in MEMBERS {
        ifs[m].member_of = Some(PC10 as u16);
    }
    let svi = |vlan: u16, net: u8| {
        let mut s = InterfaceModel::new(&format!("Vlan{vlan}"), SVI_MAC);
        s.ipv4 = vec![(Ipv4Addr::new(10, 0, net, 1), 24)];
        s.logical = Some(Logical::Svi { vlan });
        s
    };
    ifs.push(svi(101, 1));
    ifs.push(svi(102, 2));
    let mut pc = InterfaceModel::new("port-channel10", MacAddr([2, 0, 0, 0, 0xbb, 10]));
    pc.ipv4 = vec![(Ipv4Addr::new(10, 255, 0, 0), 31)];
    pc.logical = Some(Logical::PortChannel {
        number: 10,
        members: MEMBERS.iter().map(|m| *m as u16).collect(),
    });
    pc.static_arp = vec![(Ipv4Addr::new(10, 255, 0, 1), host(0x99))];
    ifs.push(pc);
    let model = SwitchModel {
        interfaces: ifs,
        routes: vec![RouteModel {
            prefix: Ipv4Addr::new(10, 200, 0, 0).into(),
            len: 16,
            next_hops: vec![NextHopModel::Gateway {
                addr: Ipv4Addr::new(10, 255, 0, 1).into(),
                port: None,
            }],
            source: RouteSource::Static,
        }],
        mac_table: MacTableModel {
            aging_ns,
            ..MacTableModel::default()
        },
        ..SwitchModel::default()
    };
    let pool = Pool::new(4096);
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    let mut far = Vec::new();
    let mut links = Vec::new();
    for i in 0..model.interfaces.len() {
        if i < 7 {
            let (near, f, ctl) = RingLink::pair(&format!("e{i}"), 1024);
            backends.push(Some(Box::new(near)));
            far.push(f);
            links.push(ctl);
        } else {
            backends.push(None);
        }
    }
    let (sw, warnings) = Switch::new(&model, backends, pool.clone());
    assert!(warnings.is_empty(), "{warnings:?}");
    Rig {
        sw,
        far,
        links,
        pool,
        now: 1_000,
    }
}

impl Rig {
    fn send(&mut self, port: usize, frame: &[u8]) {
        let pkt = self.pool.alloc_from(frame).expect("buffer");
        assert!(self.far[port].send(pkt).is_ok());
    }

    fn run(&mut self) {
        for _ in 0..4 {
            self.now += 1_000;
            self.sw.poll(self.now);
        }
    }

    /// Every frame each port sent since the last call.
    fn out(&mut self) -> Vec<Vec<Vec<u8>>> {
        self.far
            .iter_mut()
            .map(|f| {
                let mut v = Vec::new();
                while let Some(p) = f.recv() {
                    v.push(p.data().to_vec());
                }
                v
            })
            .collect()
    }

    fn drops(&self, port: usize, r: DropReason) -> u64 {
        self.sw.counters(port as u16).unwrap().drops[r as usize]
    }
}

fn eth(dst: MacAddr, src: MacAddr, vlan: Option<u16>, ethertype: u16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&src.0);
    if let Some(v) = vlan {
        f.extend_from_slice(&0x8100u16.to_be_bytes());
        f.extend_from_slice(&v.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(body);
    f.resize(f.len().max(60), 0);
    f
}

fn ipv4(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8) -> Vec<u8> {
    ipv4_dscp(src, dst, ttl, 0)
}

fn ipv4_dscp(src: Ipv4Addr, dst: Ipv4Addr, ttl: u8, dscp: u8) -> Vec<u8> {
    let mut ip = vec![0x45, dscp << 2, 0, 28, 0, 1, 0x40, 0, ttl, 17, 0, 0];
    ip.extend_from_slice(&src.octets());
    ip.extend_from_slice(&dst.octets());
    let ck = !checksum::data(&ip);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    ip.extend_from_slice(&[0x30, 0x39, 0x12, 0x34, 0, 8, 0, 0]);
    ip
}

fn arp_request(from: MacAddr, ip: Ipv4Addr, target: Ipv4Addr) -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4, 0, 1];
    a.extend_from_slice(&from.0);
    a.extend_from_slice(&ip.octets());
    a.extend_from_slice(&[0; 6]);
    a.extend_from_slice(&target.octets());
    a
}

/// Frame counts per port.
fn counts(out: &[Vec<Vec<u8>>]) -> Vec<usize> {
    out.iter().map(Vec::len).collect()
}

fn tag(frame: &[u8]) -> Option<u16> {
    (frame[12..14] == [0x81, 0x00]).then(|| u16::from_be_bytes([frame[14], frame[15]]) & 0xfff)
}

fn assert_conserved(r: &Rig) {
    let stats = r.sw.stats();
    let mut rx = 0;
    let mut out = 0;
    for i in stats.interfaces.values() {
        rx += i.rx_packets + i.flood_copies;
        out += i.tx_packets + i.drops.values().sum::<u64>() + i.punted;
        out += i.queues.iter().map(|q| q.depth_packets).sum::<u64>();
    }
    // The switch's own answers are sent without having been received.
    let answered: u64 = stats.interfaces.values().map(|i| i.punted).sum();
    assert_eq!(rx + answered, out, "{stats:#?}");
    for (vlan, c) in &stats.vlans {
        assert!(c.conserved(), "VLAN {vlan}: {c:?}");
    }
}

#[test]
fn unknown_and_broadcast_frames_flood_within_their_vlan_and_learned_ones_go_to_one_port() {
    let mut r = rig(0);
    // h1 on Ethernet1/1 (VLAN 101) to an unknown h2: floods to 1/2 and
    // tagged to the trunk, never to VLAN 102 or routed ports.
    let f = eth(host(2), host(1), None, 0x88b5, b"hello");
    r.send(0, &f);
    r.run();
    let out = r.out();
    assert_eq!(counts(&out), vec![0, 1, 0, 1, 0, 0, 0]);
    assert_eq!(out[1][0], f, "an access port sends it untagged");
    assert_eq!(tag(&out[TRUNK][0]), Some(101), "the trunk tags it");
    // h2 answers from the trunk, tagged 101: h1 is known, so only 1/1 gets it.
    r.send(TRUNK, &eth(host(1), host(2), Some(101), 0x88b5, b"back"));
    r.run();
    let out = r.out();
    assert_eq!(counts(&out), vec![1, 0, 0, 0, 0, 0, 0]);
    assert_eq!(tag(&out[0][0]), None);
    // Now h1 → h2 goes to the trunk alone.
    r.send(0, &f);
    r.run();
    assert_eq!(counts(&r.out()), vec![0, 0, 0, 1, 0, 0, 0]);
    // A broadcast in VLAN 102 from the trunk reaches 1/3 only.
    r.send(
        TRUNK,
        &eth(MacAddr::BROADCAST, host(3), Some(102), 0x88b5, b"all"),
    );
    r.run();
    assert_eq!(counts(&r.out()), vec![0, 0, 1, 0, 0, 0, 0]);
    // A frame for an address learned on the port it came in on is filtered.
    r.send(TRUNK, &eth(host(3), host(2), Some(102), 0x88b5, b"self"));
    r.run();
    assert_eq!(counts(&r.out()), vec![0; 7]);
    assert_eq!(r.drops(TRUNK, DropReason::L2Filtered), 1);
    // A VLAN the port does not carry is dropped and counted.
    r.send(TRUNK, &eth(host(1), host(2), Some(200), 0x88b5, b"no"));
    r.send(0, &eth(host(1), host(5), Some(102), 0x88b5, b"no"));
    r.run();
    assert_eq!(counts(&r.out()), vec![0; 7]);
    assert_eq!(r.drops(TRUNK, DropReason::VlanNotAllowed), 1);
    assert_eq!(r.drops(0, DropReason::VlanNotAllowed), 1);
    let v101 = r.sw.stats().vlans[&101];
    assert_eq!((v101.rx_packets, v101.flood_copies), (3, 1), "{v101:?}");
    assert_eq!(v101.switched, 4);
    let t = r.sw.mac_table().entries(r.now);
    let learned: Vec<_> = t.iter().map(|e| (e.vlan, e.mac, e.port)).collect();
    assert!(learned.contains(&(101, host(1), 0)), "{learned:?}");
    assert!(
        learned.contains(&(101, host(2), TRUNK as u16)),
        "{learned:?}"
    );
    assert_conserved(&r);
}

#[test]
fn hosts_route_through_their_vlans_svi() {
    let mut r = rig(0);
    let h1 = Ipv4Addr::new(10, 0, 1, 10);
    let h3 = Ipv4Addr::new(10, 0, 2, 30);
    // h1 asks for its gateway: the SVI answers out of h1's port, and the
    // broadcast still floods in VLAN 101.
    r.send(
        0,
        &eth(
            MacAddr::BROADCAST,
            host(1),
            None,
            0x0806,
            &arp_request(host(1), h1, Ipv4Addr::new(10, 0, 1, 1)),
        ),
    );
    r.run();
    let out = r.out();
    assert_eq!(counts(&out), vec![1, 1, 0, 1, 0, 0, 0]);
    let reply = &out[0][0];
    assert_eq!(&reply[0..6], &host(1).0);
    assert_eq!(&reply[6..12], &SVI_MAC.0);
    assert_eq!(&reply[12..14], &[0x08, 0x06]);
    assert_eq!(
        u16::from_be_bytes([reply[20], reply[21]]),
        2,
        "an ARP reply"
    );
    // h3 in VLAN 102 behind the trunk, tagged, is learned by its ARP request.
    r.send(
        TRUNK,
        &eth(
            MacAddr::BROADCAST,
            host(3),
            Some(102),
            0x0806,
            &arp_request(host(3), h3, Ipv4Addr::new(10, 0, 2, 1)),
        ),
    );
    r.run();
    let out = r.out();
    assert_eq!(
        tag(&out[TRUNK][0]),
        Some(102),
        "the answer goes back tagged"
    );
    // h1 → h3 through the SVIs: out of the trunk tagged 102, TTL 63,
    // from the SVI's MAC to h3's.
    r.send(0, &eth(SVI_MAC, host(1), None, 0x0800, &ipv4(h1, h3, 64)));
    r.run();
    let out = r.out();
    assert_eq!(counts(&out), vec![0, 0, 0, 1, 0, 0, 0]);
    let f = &out[TRUNK][0];
    assert_eq!(tag(f), Some(102));
    assert_eq!(&f[0..6], &host(3).0);
    assert_eq!(&f[6..12], &SVI_MAC.0);
    assert_eq!(f[18 + 8], 63, "TTL");
    assert_eq!(f[14] >> 5, 0, "DSCP 0 is qos-group 0: PCP 0");
    // A RoCEv2 packet (DSCP 24, qos-group 3) leaves the trunk with PCP 3,
    // the priority PFC pauses on a tagged link.
    r.send(
        0,
        &eth(SVI_MAC, host(1), None, 0x0800, &ipv4_dscp(h1, h3, 64, 24)),
    );
    r.run();
    let out = r.out();
    let f = &out[TRUNK][0];
    assert_eq!((tag(f), f[14] >> 5), (Some(102), 3));
    // h1 → 10.200.1.1 leaves by a member of port-channel10, untagged.
    r.send(
        0,
        &eth(
            SVI_MAC,
            host(1),
            None,
            0x0800,
            &ipv4(h1, Ipv4Addr::new(10, 200, 1, 1), 64),
        ),
    );
    r.run();
    let out = r.out();
    let sent: usize = MEMBERS.iter().map(|m| out[*m].len()).sum();
    assert_eq!(sent, 1, "{:?}", counts(&out));
    assert_conserved(&r);
}

#[test]
fn a_port_channel_keeps_each_flow_on_one_member_and_moves_only_a_dead_members_flows() {
    let mut r = rig(0);
    let h1 = Ipv4Addr::new(10, 0, 1, 10);
    // Resolve nothing: the port-channel's next hop is static. 64 flows
    // (destinations), each sent twice.
    let flows: Vec<Ipv4Addr> = (0..64).map(|i| Ipv4Addr::new(10, 200, 0, i)).collect();
    let mut member_of = Vec::new();
    for round in 0..2 {
        for d in &flows {
            r.send(0, &eth(SVI_MAC, host(1), None, 0x0800, &ipv4(h1, *d, 64)));
        }
        r.run();
        let out = r.out();
        let mut seen = Vec::new();
        for m in MEMBERS {
            for f in &out[m] {
                seen.push((Ipv4Addr::new(f[30], f[31], f[32], f[33]), m));
            }
        }
        seen.sort();
        assert_eq!(seen.len(), flows.len());
        if round == 0 {
            member_of = seen;
        } else {
            assert_eq!(seen, member_of, "a flow keeps its member");
        }
    }
    let on_first = member_of.iter().filter(|(_, m)| *m == MEMBERS[0]).count();
    assert!(
        (16..=48).contains(&on_first),
        "{on_first} of 64 on one member"
    );
    // The second member goes down: its flows move to the first, the
    // first's stay.
    r.links[MEMBERS[1]].set_up(false);
    r.run();
    for d in &flows {
        r.send(0, &eth(SVI_MAC, host(1), None, 0x0800, &ipv4(h1, *d, 64)));
    }
    r.run();
    let out = r.out();
    assert_eq!(out[MEMBERS[0]].len(), flows.len());
    assert!(out[MEMBERS[1]].is_empty());
    assert_conserved(&r);
}

#[test]
fn a_quiet_address_ages_out_and_a_dead_port_forgets_its_own() {
    let mut r = rig(50_000_000);
    r.send(0, &eth(host(2), host(1), None, 0x88b5, b"x"));
    r.send(1, &eth(host(1), host(2), None, 0x88b5, b"y"));
    r.run();
    r.out();
    assert_eq!(r.sw.mac_table().entries(r.now).len(), 2);
    // The port of h2 goes down: h2 is forgotten, h1 stays.
    r.links[1].set_up(false);
    r.run();
    let e = r.sw.mac_table().entries(r.now);
    assert_eq!(e.len(), 1, "{e:?}");
    assert_eq!(e[0].mac, host(1));
    // 50 ms later h1 is gone too, and the sweep (an eighth of the table
    // per 10 ms tick) reclaims its slot within 80 ms.
    r.now += 60_000_000;
    r.run();
    assert!(r.sw.mac_table().entries(r.now).is_empty());
    for _ in 0..8 {
        r.now += 10_000_000;
        r.run();
    }
    assert!(r.sw.mac_table().is_empty(), "the sweep reclaimed it");
    assert_eq!(r.sw.mac_table().counters().aged, 1);
    assert_eq!(r.sw.mac_table().counters().flushed, 1);
}

/// With two workers (ports 0 and 2 on one, 1 and 3 on the other), an
/// address one worker learns is told to the other: the answer from a port
/// of the second worker to a host the first one learned is switched to
/// that host's port alone, not flooded.
#[test]
fn workers_tell_each_other_what_they_learn() {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use railyard_dataplane::runtime::{Runtime, RuntimeOptions};
    use railyard_dataplane::MonotonicClock;

    let interfaces: Vec<InterfaceModel> = (0..4u8)
        .map(|i| {
            let mut m = InterfaceModel::new(
                &format!("Ethernet1/{}", i + 1),
                MacAddr([2, 0, 0, 0, 1, i + 1]),
            );
            m.l2 = Some(PortL2::access(10));
            m
        })
        .collect();
    let model = SwitchModel {
        interfaces,
        ..SwitchModel::default()
    };
    let pool = Pool::new(1024);
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    let mut far = Vec::new();
    for i in 0..4 {
        let (near, f, _) = RingLink::pair(&format!("e{i}"), 256);
        backends.push(Some(Box::new(near)));
        far.push(f);
    }
    let (runtime, _) = Runtime::start(
        &model,
        backends,
        pool.clone(),
        Arc::new(MonotonicClock::new()),
        &RuntimeOptions {
            workers: 2,
            ..RuntimeOptions::default()
        },
    );
    let send = |far: &mut RingPort, frame: &[u8]| {
        assert!(far.send(pool.alloc_from(frame).unwrap()).is_ok());
    };
    let collect = |far: &mut Vec<RingPort>, want: usize| {
        let mut got = vec![0; far.len()];
        let deadline = Instant::now() + Duration::from_secs(5);
        while got.iter().sum::<usize>() < want && Instant::now() < deadline {
            for (i, f) in far.iter_mut().enumerate() {
                while f.recv().is_some() {
                    got[i] += 1;
                }
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        // Anything more would come within a moment.
        std::thread::sleep(Duration::from_millis(100));
        for (i, f) in far.iter_mut().enumerate() {
            while f.recv().is_some() {
                got[i] += 1;
            }
        }
        got
    };
    // h1 on port 0 (worker 0) to an unknown h2: flooded to 1, 2 and 3.
    send(&mut far[0], &eth(host(2), host(1), None, 0x88b5, b"hello"));
    assert_eq!(collect(&mut far, 3), vec![0, 1, 1, 1]);
    // The other worker heard of h1 from the first: h2's answer from port 1
    // goes to port 0 only. Give the event a moment to cross.
    std::thread::sleep(Duration::from_millis(50));
    send(&mut far[1], &eth(host(1), host(2), None, 0x88b5, b"back"));
    assert_eq!(collect(&mut far, 1), vec![1, 0, 0, 0]);
    let stats = runtime.shutdown();
    let t = &stats.mac_table;
    assert_eq!(t.entries.len(), 2, "{t:?}");
    assert!(t.entries.iter().any(|e| e.port == "Ethernet1/1"));
    assert!(t.entries.iter().any(|e| e.port == "Ethernet1/2"));
}

/// A switched port-channel is one port of its VLAN: a flood sends one copy
/// over one member, an address heard on either member is learned on the
/// port-channel, and frames to it leave by a member.
#[test]
fn a_switched_port_channel_is_one_port_of_its_vlan() {
    let mut interfaces: Vec<InterfaceModel> = (0..4u8)
        .map(|i| {
            let mut m = InterfaceModel::new(
                &format!("Ethernet1/{}", i + 1),
                MacAddr([2, 0, 0, 0, 1, i + 1]),
            );
            m.l2 = Some(PortL2::access(5));
            m
        })
        .collect();
    interfaces[2].member_of = Some(4);
    interfaces[3].member_of = Some(4);
    let mut pc = InterfaceModel::new("port-channel1", MacAddr([2, 0, 0, 0, 0xbb, 1]));
    pc.l2 = Some(PortL2::access(5));
    pc.logical = Some(Logical::PortChannel {
        number: 1,
        members: vec![2, 3],
    });
    interfaces.push(pc);
    let model = SwitchModel {
        interfaces,
        ..SwitchModel::default()
    };
    let pool = Pool::new(1024);
    let mut backends: Vec<Option<Box<dyn Port>>> = Vec::new();
    let mut far = Vec::new();
    let mut links = Vec::new();
    for i in 0..4 {
        let (near, f, ctl) = RingLink::pair(&format!("e{i}"), 256);
        backends.push(Some(Box::new(near)));
        far.push(f);
        links.push(ctl);
    }
    backends.push(None);
    let (sw, _) = Switch::new(&model, backends, pool.clone());
    let mut r = Rig {
        sw,
        far,
        links,
        pool,
        now: 1_000,
    };
    r.send(0, &eth(host(9), host(1), None, 0x88b5, b"who"));
    r.run();
    let out = counts(&r.out());
    assert_eq!(out[..2], [0, 1]);
    assert_eq!(out[2] + out[3], 1, "one copy over one member: {out:?}");
    // h9 answers over the second member: learned on the port-channel.
    r.send(3, &eth(host(1), host(9), None, 0x88b5, b"me"));
    r.run();
    assert_eq!(counts(&r.out()), vec![1, 0, 0, 0]);
    let e = r.sw.mac_table().entries(r.now);
    assert!(e.iter().any(|e| e.mac == host(9) && e.port == 4), "{e:?}");
    // To h9 now: by a member only.
    r.send(1, &eth(host(9), host(2), None, 0x88b5, b"to9"));
    r.run();
    let out = counts(&r.out());
    assert_eq!((out[0], out[1], out[2] + out[3]), (0, 0, 1), "{out:?}");
    // One member going down keeps what the port-channel learned; both
    // going down forget it.
    let learned = |r: &Rig| {
        r.sw.mac_table()
            .entries(r.now)
            .iter()
            .any(|e| e.mac == host(9))
    };
    r.links[3].set_up(false);
    r.run();
    assert!(learned(&r), "h9 stays while a member is up");
    r.links[2].set_up(false);
    r.run();
    assert!(!learned(&r), "h9 goes with the port-channel");

    assert_conserved(&r);
}
