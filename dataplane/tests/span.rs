//! Monitor sessions on a running switch: a received frame is copied for the
//! sessions that watch its port's receive side, the switch's own answer for
//! those that watch the transmit side, a port destination sends the copies,
//! a down destination counts them as dropped, and a switch without sessions
//! copies nothing.

use std::net::Ipv4Addr;
use std::sync::Arc;

use railyard_dataplane::capture::Direction;
use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::{LinkControl, RingLink, RingPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::span::{SessionSpec, SpanSet};
use railyard_dataplane::wire::{checksum, MacAddr};
use railyard_dataplane::Pool;

const SWITCH: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const PEER: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const THEM: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 0);

/// A switch of three ports: Ethernet1/1 with an address, 1/2 and 1/3 without.
fn switch() -> (Switch, Vec<RingPort>, Vec<LinkControl>, Pool) {
    let mut e1 = InterfaceModel::new("Ethernet1/1", SWITCH);
    e1.ipv4 = vec![(ME, 31)];
    let model = SwitchModel {
        interfaces: vec![
            e1,
            InterfaceModel::new("Ethernet1/2", MacAddr([2, 0, 0, 0, 0, 3])),
            InterfaceModel::new("Ethernet1/3", MacAddr([2, 0, 0, 0, 0, 4])),
        ],
        ..SwitchModel::default()
    };
    let pool = Pool::new(1024);
    let (mut backends, mut fars, mut links) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..3 {
        let (near, far, link) = RingLink::pair(&format!("e{i}"), 256);
        backends.push(Some(Box::new(near) as Box<dyn Port>));
        fars.push(far);
        links.push(link);
    }
    let (sw, _) = Switch::new(&model, backends, pool.clone());
    (sw, fars, links, pool)
}

fn echo_request() -> Vec<u8> {
    let mut icmp = vec![8, 0, 0, 0, 0, 1, 0, 1, 1, 2, 3, 4];
    let ck = !checksum::data(&icmp);
    icmp[2..4].copy_from_slice(&ck.to_be_bytes());
    let mut ip = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, 1, 0, 0];
    ip[2..4].copy_from_slice(&((20 + icmp.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&THEM.octets());
    ip.extend_from_slice(&ME.octets());
    let ck = !checksum::data(&ip);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    ip.extend_from_slice(&icmp);
    let mut f = Vec::new();
    f.extend_from_slice(&SWITCH.0);
    f.extend_from_slice(&PEER.0);
    f.extend_from_slice(&0x0800u16.to_be_bytes());
    f.extend_from_slice(&ip);
    f
}

/// Sends an echo request into Ethernet1/1 and polls until its reply left.
fn ping(sw: &mut Switch, fars: &mut [RingPort], pool: &Pool, now: u64) -> Vec<u8> {
    let request = echo_request();
    assert!(fars[0].send(pool.alloc_from(&request).unwrap()).is_ok());
    for t in 0..10 {
        sw.poll(now + t);
    }
    let reply = fars[0].recv().expect("the echo reply");
    assert_eq!(reply.data()[34], 0, "an echo reply");
    reply.data().to_vec()
}

fn spec(id: u8, rx: &[u16], tx: &[u16], port: Option<u16>) -> SessionSpec {
    SessionSpec {
        id,
        rx: rx.to_vec(),
        tx: tx.to_vec(),
        port,
    }
}

#[test]
fn rx_tx_and_both_sessions_copy_the_frames_of_their_direction() {
    let (mut sw, mut fars, _links, pool) = switch();
    let set = Arc::new(SpanSet::new(
        3,
        &[
            spec(1, &[0], &[], None),
            spec(2, &[], &[0], None),
            spec(3, &[0], &[0], None),
            spec(4, &[1], &[1], None),
        ],
    ));
    sw.set_span(Some(Arc::clone(&set)));
    let reply = ping(&mut sw, &mut fars, &pool, 1_000);
    let frames = |id: u8| {
        let ring = set.ring(id).unwrap();
        std::iter::from_fn(|| ring.pop())
            .map(|c| (c.port, c.dir, c.data))
            .collect::<Vec<_>>()
    };
    assert_eq!(frames(1), [(0, Direction::Rx, echo_request())]);
    assert_eq!(frames(2), [(0, Direction::Tx, reply.clone())]);
    assert_eq!(
        frames(3),
        [
            (0, Direction::Rx, echo_request()),
            (0, Direction::Tx, reply)
        ]
    );
    assert!(frames(4).is_empty(), "Ethernet1/2 saw nothing");
    assert_eq!(set.sessions()[2].counters().mirrored, 2);

    // Taken away, nothing more is copied.
    sw.set_span(None);
    ping(&mut sw, &mut fars, &pool, 2_000);
    assert!(frames(3).is_empty());
}

#[test]
fn a_port_destination_sends_the_copies_and_counts_them_dropped_while_down() {
    let (mut sw, mut fars, links, pool) = switch();
    let set = Arc::new(SpanSet::new(3, &[spec(1, &[0], &[0], Some(2))]));
    sw.set_span(Some(Arc::clone(&set)));
    let reply = ping(&mut sw, &mut fars, &pool, 1_000);
    let got: Vec<Vec<u8>> = std::iter::from_fn(|| fars[2].recv())
        .map(|p| p.data().to_vec())
        .collect();
    assert_eq!(got, [echo_request(), reply]);
    assert!(fars[1].recv().is_none());
    let c = set.sessions()[0].counters();
    assert_eq!((c.mirrored, c.destination_down), (2, 0));
    let stats = sw.stats();
    assert_eq!(stats.interfaces["Ethernet1/3"].tx_packets, 2);

    links[2].set_up(false);
    ping(&mut sw, &mut fars, &pool, 2_000);
    assert!(fars[2].recv().is_none());
    let c = set.sessions()[0].counters();
    assert_eq!((c.mirrored, c.destination_down), (4, 2));
}
