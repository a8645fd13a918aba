//! Frames for the switch's own addresses that it does not answer itself go
//! up the kernel mirror when the runtime has mirrors, and are dropped as
//! `local_unhandled` when it has none; what the control plane sends leaves
//! the port.

use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use railyard_dataplane::counters::DropReason;
use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::port::ring::{RingLink, RingPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::runtime::{Runtime, RuntimeOptions};
use railyard_dataplane::wire::{checksum, MacAddr};
use railyard_dataplane::{MonotonicClock, Pool};

const SWITCH: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
const PEER: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const THEM: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 0);

fn start(mirrors: bool) -> (Runtime, RingPort, Pool) {
    let mut ifc = InterfaceModel::new("Ethernet1/1", SWITCH);
    ifc.ipv4 = vec![(ME, 31)];
    let model = SwitchModel {
        interfaces: vec![ifc],
        ..SwitchModel::default()
    };
    let (near, far, _) = RingLink::pair("e1", 256);
    let pool = Pool::new(512);
    let (runtime, _) = Runtime::start(
        &model,
        vec![Some(Box::new(near) as Box<dyn Port>)],
        pool.clone(),
        Arc::new(MonotonicClock::new()),
        &RuntimeOptions {
            workers: 1,
            mirrors,
            ..RuntimeOptions::default()
        },
    );
    (runtime, far, pool)
}

fn ethernet(dst: MacAddr, ethertype: u16, body: &[u8]) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst.0);
    f.extend_from_slice(&PEER.0);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(body);
    f
}

/// An IPv4 packet from the peer to the switch with protocol `proto`.
fn ipv4(proto: u8, payload: &[u8]) -> Vec<u8> {
    let mut ip = vec![0x45, 0, 0, 0, 0, 1, 0x40, 0, 64, proto, 0, 0];
    ip[2..4].copy_from_slice(&((20 + payload.len()) as u16).to_be_bytes());
    ip.extend_from_slice(&THEM.octets());
    ip.extend_from_slice(&ME.octets());
    let ck = !checksum::data(&ip);
    ip[10..12].copy_from_slice(&ck.to_be_bytes());
    ip.extend_from_slice(payload);
    ethernet(SWITCH, 0x0800, &ip)
}

/// A TCP SYN to port 179 (checksum not needed by the switch).
fn bgp_syn() -> Vec<u8> {
    let mut tcp = vec![0u8; 20];
    tcp[0..2].copy_from_slice(&40000u16.to_be_bytes());
    tcp[2..4].copy_from_slice(&179u16.to_be_bytes());
    tcp[12] = 5 << 4;
    tcp[13] = 0x02;
    ipv4(6, &tcp)
}

fn echo_request() -> Vec<u8> {
    let mut icmp = vec![8, 0, 0, 0, 0, 1, 0, 1, 1, 2, 3, 4];
    let ck = !checksum::data(&icmp);
    icmp[2..4].copy_from_slice(&ck.to_be_bytes());
    ipv4(1, &icmp)
}

/// An ARP reply from the peer to the switch (an answer to the kernel).
fn arp_reply() -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4, 0, 2];
    a.extend_from_slice(&PEER.0);
    a.extend_from_slice(&THEM.octets());
    a.extend_from_slice(&SWITCH.0);
    a.extend_from_slice(&ME.octets());
    ethernet(SWITCH, 0x0806, &a)
}

fn send(far: &mut RingPort, pool: &Pool, frame: &[u8]) {
    let pkt = pool.alloc_from(frame).expect("buffer");
    assert!(far.send(pkt).is_ok(), "ring full");
}

fn wait<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn tcp_and_arp_replies_go_up_the_mirror_and_echo_is_still_answered_here() {
    let (runtime, mut far, pool) = start(true);
    let control = runtime.control_path();
    send(&mut far, &pool, &bgp_syn());
    let up = wait("the SYN on the mirror", || control.recv_mirror());
    assert_eq!(up.in_port, 0);
    assert_eq!(up.data(), &bgp_syn()[..], "the frame goes up unchanged");

    send(&mut far, &pool, &arp_reply());
    let up = wait("the ARP reply on the mirror", || control.recv_mirror());
    assert_eq!(&up.data()[12..14], &[0x08, 0x06]);

    send(&mut far, &pool, &echo_request());
    let reply = wait("the echo reply", || far.recv());
    assert_eq!(reply.data()[34], 0, "answered by the switch");
    assert!(control.recv_mirror().is_none(), "echo is not mirrored");

    // What the kernel sends leaves the port as it is.
    let from_kernel = ethernet(PEER, 0x0800, &bgp_syn()[14..]);
    control.send(0, &from_kernel).unwrap();
    let out = wait("the kernel's frame on the wire", || far.recv());
    assert_eq!(out.data(), &from_kernel[..]);

    let stats = wait("published counters", || {
        let s = runtime.stats();
        let i = s.interfaces.get("Ethernet1/1")?;
        (i.rx_packets == 3).then(|| i.clone())
    });
    assert_eq!((stats.punted, stats.mirrored), (3, 2));
    assert_eq!(stats.drops["local_unhandled"], 0);
    runtime.shutdown();
}

#[test]
fn without_mirrors_what_the_switch_does_not_answer_is_dropped_with_a_reason() {
    let (runtime, mut far, pool) = start(false);
    send(&mut far, &pool, &bgp_syn());
    send(&mut far, &pool, &arp_reply());
    let stats = wait("published counters", || {
        let s = runtime.stats();
        let i = s.interfaces.get("Ethernet1/1")?;
        (i.rx_packets == 2).then(|| i.clone())
    });
    assert_eq!(stats.drops[DropReason::LocalUnhandled.name()], 1);
    assert_eq!(
        (stats.punted, stats.mirrored),
        (1, 0),
        "the ARP reply is learned"
    );
    assert!(runtime.control_path().recv_mirror().is_none());
    runtime.shutdown();
}
