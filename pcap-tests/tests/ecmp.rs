//! ECMP on one switch: 10 000 flows from a host port over a four-way group
//! of uplinks, each flow one frame whose payload names it, read back at the
//! far end of every uplink. Checks evenness, stickiness, seed independence
//! and the resilience of the bucket table to a member's removal or link loss.

use std::net::{IpAddr, Ipv4Addr};

use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::model::{NextHopModel, RouteModel, RouteSource, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::{LinkControl, RingLink, RingPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::Pool;
use railyard_pcap_tests::plan::{host_ip, port_mac, routed_port};

const UPLINKS: [usize; 4] = [1, 2, 3, 4];
const FLOWS: usize = 10_000;

/// A switch with a host on port 0 and uplinks on ports 1-4, routing
/// 10.9.0.0/16 over the uplinks in `members`.
fn model(seed: u32, rotate: u8, members: &[usize]) -> SwitchModel {
    let mut m = SwitchModel {
        interfaces: (0..5).map(routed_port).collect(),
        routes: vec![RouteModel {
            source: RouteSource::Static,
            prefix: IpAddr::V4(Ipv4Addr::new(10, 9, 0, 0)),
            len: 16,
            next_hops: members
                .iter()
                .map(|i| NextHopModel::Gateway {
                    addr: IpAddr::V4(host_ip(*i)),
                    port: None,
                })
                .collect(),
        }],
        ..SwitchModel::default()
    };
    m.load_balance.hash.seed = seed;
    m.load_balance.hash.rotate = rotate;
    m
}

/// Flow `k`'s frame: pseudo-random source address and port, destination in
/// 10.9.0.0/16, RoCEv2-like UDP to 4791; the payload carries `k`.
fn flow(k: usize) -> Vec<u8> {
    let r = (k as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut s = FrameSpec::udp(
        railyard_pcap_tests::plan::host_mac(0),
        port_mac(0),
        IpAddr::V4(Ipv4Addr::new(10, 0, 1, (r >> 8) as u8)),
        IpAddr::V4(Ipv4Addr::new(10, 9, (r >> 16) as u8, (r >> 24) as u8)),
    );
    s.src_port = 49152 | (r >> 32) as u16;
    s.dst_port = 4791;
    build(&s, k as u64)
}

struct Bench {
    sw: Switch,
    host: RingPort,
    uplinks: Vec<(RingPort, LinkControl)>,
    pool: Pool,
    now: u64,
}

impl Bench {
    fn new(m: &SwitchModel) -> Bench {
        let (host_end, sw_end, _) = RingLink::pair("host", FLOWS + 64);
        let mut backends: Vec<Option<Box<dyn Port>>> = vec![Some(Box::new(sw_end))];
        let mut uplinks = Vec::new();
        for i in UPLINKS {
            let (sw_end, far, ctl) = RingLink::pair(&format!("up{i}"), FLOWS + 64);
            backends.push(Some(Box::new(sw_end)));
            uplinks.push((far, ctl));
        }
        let pool = Pool::new(4 * FLOWS);
        let (sw, warnings) = Switch::new(m, backends, pool.clone());
        assert!(warnings.is_empty(), "{warnings:?}");
        Bench {
            sw,
            host: host_end,
            uplinks,
            pool,
            now: 1_000,
        }
    }

    /// Sends flows `0..n` and returns, per flow, the uplink (1-4) it left on.
    fn run(&mut self, n: usize) -> Vec<usize> {
        for k in 0..n {
            let pkt = self.pool.alloc_from(&flow(k)).expect("pool");
            assert!(self.host.send(pkt).is_ok());
        }
        let mut out = vec![0; n];
        let mut seen = 0;
        for _ in 0..100_000 {
            self.now += 1_000;
            self.sw.poll(self.now);
            for (i, (far, _)) in self.uplinks.iter_mut().enumerate() {
                while let Some(p) = far.recv() {
                    let seq = u64::from_be_bytes(p.data()[42..50].try_into().unwrap());
                    out[seq as usize] = UPLINKS[i];
                    seen += 1;
                }
            }
            if seen == n && self.sw.idle() {
                return out;
            }
        }
        panic!("only {seen} of {n} flows came out");
    }
}

fn counts(members: &[usize]) -> [usize; 5] {
    let mut c = [0; 5];
    for m in members {
        c[*m] += 1;
    }
    c
}

#[test]
fn ten_thousand_flows_land_within_five_percent_of_even() {
    let mut b = Bench::new(&model(7, 0, &UPLINKS));
    let c = counts(&b.run(FLOWS));
    for u in UPLINKS {
        assert!((2_375..=2_625).contains(&c[u]), "{c:?}");
    }
    // The group's counters agree with what came out of each uplink.
    let g = &b.sw.stats().load_balancing["10.9.0.0/16"];
    assert_eq!(g.mode, "ecmp");
    for (m, u) in g.members.iter().zip(UPLINKS) {
        assert_eq!(m.packets as usize, c[u], "{}", m.interface);
        assert_eq!(m.buckets, 128);
    }
}

#[test]
fn one_flow_always_takes_one_member() {
    let mut b = Bench::new(&model(7, 0, &UPLINKS));
    let first = b.run(50);
    for _ in 0..3 {
        assert_eq!(b.run(50), first);
    }
    // Frames of one flow with different payloads still share the member.
    let g = &b.sw.stats().load_balancing["10.9.0.0/16"];
    assert_eq!(g.members.iter().map(|m| m.packets).sum::<u64>(), 200);
}

/// Joint distribution of two switches' choices for the same flows.
fn joint(a: &[usize], b: &[usize]) -> [[usize; 5]; 5] {
    let mut j = [[0; 5]; 5];
    for (x, y) in a.iter().zip(b) {
        j[*x][*y] += 1;
    }
    j
}

#[test]
fn switches_with_different_seeds_choose_independently() {
    let a = Bench::new(&model(1, 0, &UPLINKS)).run(FLOWS);
    let b = Bench::new(&model(2, 0, &UPLINKS)).run(FLOWS);
    // Independent: every (member on A, member on B) pair is about 1/16.
    let j = joint(&a, &b);
    for x in UPLINKS {
        for y in UPLINKS {
            assert!((500..=750).contains(&j[x][y]), "{j:?}");
        }
    }
    // The same seed (a switch in series with an identical one) polarises:
    // every flow makes the same choice twice.
    let same = Bench::new(&model(1, 0, &UPLINKS)).run(FLOWS);
    assert_eq!(a, same);
    // Rotating the hash moves flows too.
    let rotated = Bench::new(&model(1, 16, &UPLINKS)).run(FLOWS);
    let j = joint(&a, &rotated);
    for x in UPLINKS {
        for y in UPLINKS {
            assert!((500..=750).contains(&j[x][y]), "rotate: {j:?}");
        }
    }
}

#[test]
fn removing_one_of_four_members_moves_only_its_quarter() {
    let mut b = Bench::new(&model(7, 0, &UPLINKS));
    let before = b.run(FLOWS);
    let warnings = b.sw.apply(&model(7, 0, &[1, 2, 4]));
    assert!(warnings.is_empty());
    let after = b.run(FLOWS);
    let mut moved = 0;
    for (x, y) in before.iter().zip(&after) {
        if *x == 3 {
            assert_ne!(*y, 3);
            moved += 1;
        } else {
            assert_eq!(x, y, "a flow of a remaining member moved");
        }
    }
    assert!((2_300..=2_700).contains(&moved), "{moved}");
    // The removed member's flows spread over the other three.
    let c = counts(&after);
    for u in [1, 2, 4] {
        assert!((3_150..=3_500).contains(&c[u]), "{c:?}");
    }
    // Adding it back: only flows the new member takes move.
    b.sw.apply(&model(7, 0, &UPLINKS));
    let again = b.run(FLOWS);
    for (x, y) in after.iter().zip(&again) {
        if *y != 3 {
            assert_eq!(x, y);
        }
    }
    assert!((2_375..=2_625).contains(&counts(&again)[3]));
}

#[test]
fn a_member_whose_link_goes_down_loses_only_its_flows() {
    let mut b = Bench::new(&model(7, 0, &UPLINKS));
    let before = b.run(FLOWS);
    b.uplinks[2].1.set_up(false); // uplink 3
    let down = b.run(FLOWS);
    for (x, y) in before.iter().zip(&down) {
        if *x == 3 {
            assert_ne!(*y, 3);
        } else {
            assert_eq!(x, y);
        }
    }
    let g = &b.sw.stats().load_balancing["10.9.0.0/16"];
    assert_eq!(g.rehashed as usize, counts(&before)[3]);
    // Back up: every flow returns to where it was.
    b.uplinks[2].1.set_up(true);
    assert_eq!(b.run(FLOWS), before);
}
