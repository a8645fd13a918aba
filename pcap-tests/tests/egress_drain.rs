//! An egress port fed by several ingress ports at once keeps up: each round
//! it transmits more than one burst while its backend takes them, so an
//! uncongested port's queues stay shallow instead of creeping up to the
//! tail-drop limit.

use std::net::{IpAddr, Ipv4Addr};

use railyard_control::traffic::{build, FrameSpec};
use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::null::NullPort;
use railyard_dataplane::port::ring::RingLink;
use railyard_dataplane::port::Port;
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Pool, BURST_SIZE};

const SOURCES: usize = 3;
const ROUNDS: u64 = 200;

#[test]
fn three_line_rate_sources_into_one_port_do_not_build_a_queue() {
    let sink_host = MacAddr([2, 0xcc, 0, 0, 0, 9]);
    let mut interfaces: Vec<InterfaceModel> = (0..=SOURCES)
        .map(|i| {
            let mut m = InterfaceModel::new(
                &format!("Ethernet1/{}", i + 1),
                MacAddr([2, 0xaa, 0, 0, 0, i as u8]),
            );
            m.ipv4.push((Ipv4Addr::new(10, 0, i as u8, 1), 24));
            m
        })
        .collect();
    interfaces[SOURCES]
        .static_arp
        .push((Ipv4Addr::new(10, 0, SOURCES as u8, 2), sink_host));
    let model = SwitchModel {
        interfaces,
        ..SwitchModel::default()
    };
    let mut backends: Vec<Option<Box<dyn Port>>> = (0..SOURCES)
        .map(|i| {
            let spec = FrameSpec::udp(
                MacAddr([2, 0xbb, 0, 0, 0, i as u8]),
                MacAddr([2, 0xaa, 0, 0, 0, i as u8]),
                IpAddr::V4(Ipv4Addr::new(10, 0, i as u8, 2)),
                IpAddr::V4(Ipv4Addr::new(10, 0, SOURCES as u8, 2)),
            );
            Some(Box::new(NullPort::new("src", vec![build(&spec, 0)])) as Box<dyn Port>)
        })
        .collect();
    let (sw_end, mut host, _) = RingLink::pair("sink", 4096);
    backends.push(Some(Box::new(sw_end)));
    let (mut sw, _) = Switch::new(&model, backends, Pool::new(8192));

    let mut received = 0u64;
    for round in 1..=ROUNDS {
        sw.poll(round * 1_000);
        while host.recv().is_some() {
            received += 1;
        }
    }
    let offered = SOURCES as u64 * BURST_SIZE as u64 * ROUNDS;
    let stats = sw.stats();
    let sink = &stats.interfaces["Ethernet1/4"];
    let q0 = &sink.queues[0];
    assert_eq!(q0.tail_drops, 0, "{q0:?}");
    // Everything offered left the switch within the round it arrived in.
    assert_eq!(received, offered);
    assert_eq!(q0.depth_bytes, 0);
    assert!(
        q0.max_depth_bytes <= (SOURCES * BURST_SIZE * 64) as u64,
        "queue grew to {} bytes",
        q0.max_depth_bytes
    );
}
