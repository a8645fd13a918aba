//! Fuzz the packet path with raw frames: the parser must never panic, and a
//! switch fed any frame must count it — forwarded, answered, punted or
//! dropped with a reason — and keep running.

#![no_main]

use std::net::Ipv4Addr;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use railyard_dataplane::meta::Meta;
use railyard_dataplane::model::{InterfaceModel, RouteModel, RouteSource, NextHopModel, SwitchModel};
use railyard_dataplane::parse::parse;
use railyard_dataplane::port::ring::RingLink;
use railyard_dataplane::port::Port;
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::Pool;

fn model() -> &'static SwitchModel {
    static MODEL: OnceLock<SwitchModel> = OnceLock::new();
    MODEL.get_or_init(|| {
        let mut a = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 0, 1]));
        a.ipv4.push((Ipv4Addr::new(10, 0, 1, 1), 24));
        a.ipv6.push(("2001:db8:1::1".parse().unwrap(), 64));
        let mut b = InterfaceModel::new("Ethernet1/2", MacAddr([2, 0, 0, 0, 0, 2]));
        b.ipv4.push((Ipv4Addr::new(10, 0, 2, 1), 24));
        b.static_arp.push((Ipv4Addr::new(10, 0, 2, 2), MacAddr([2, 0, 0, 0, 9, 2])));
        SwitchModel {
            interfaces: vec![a, b],
            routes: vec![RouteModel {
                source: RouteSource::Static,
                prefix: "0.0.0.0".parse().unwrap(),
                len: 0,
                next_hops: vec![NextHopModel::Gateway { addr: "10.0.2.2".parse().unwrap(), port: None }],
            }],
            ..SwitchModel::default()
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let mut meta = Meta::default();
    let _ = parse(data, &mut meta);

    let pool = Pool::new(64);
    let (a, mut host_a, _) = RingLink::pair("a", 16);
    let (b, host_b, _) = RingLink::pair("b", 16);
    let backends: Vec<Option<Box<dyn Port>>> = vec![Some(Box::new(a)), Some(Box::new(b))];
    let (mut sw, _) = Switch::new(model(), backends, pool.clone());
    let Some(pkt) = pool.alloc_from(data) else { return };
    if host_a.send(pkt).is_err() {
        return;
    }
    for t in 0..3 {
        sw.poll(t * 20_000_000);
    }
    let c = sw.counters(0).expect("port 0");
    assert_eq!(c.rx_packets, 1);
    let out = host_a.pending() + host_b.pending();
    // Every frame has a fate: counted as a drop, punted, or sent somewhere.
    assert!(c.total_drops() + c.punted + out as u64 >= 1);
});
