//! Shared set-up for the benchmarks: a switch on in-memory ports and a
//! 64-byte RoCEv2 traffic mix.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

use std::net::{IpAddr, Ipv4Addr};

use railyard_control::traffic::{build, FrameSpec, Transport, BTH_CNP, BTH_RC_WRITE_ONLY};
use railyard_dataplane::model::{
    DlbMode, DlbModel, NextHopModel, RouteModel, RouteSource, SwitchModel,
};
use railyard_dataplane::wire::MacAddr;

/// MAC of port `i` of the benchmark switch.
pub fn port_mac(i: usize) -> MacAddr {
    MacAddr([2, 0xbb, 0, 0, 0, i as u8])
}

/// MAC of the host behind port `i`.
pub fn host_mac(i: usize) -> MacAddr {
    MacAddr([2, 0xcc, 0, 0, 0, i as u8])
}

/// Address of the host behind port `i`.
pub fn host_ip(i: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 0, i as u8, 2)
}

/// A switch with `ports` routed ports, one host (static ARP) behind each,
/// and the demo's RoCEv2 QoS on every port: DSCP 24 → qos-group 3 (WRED with
/// ECN, DWRR 50 %, PFC lossless), DSCP 48 → qos-group 7 (strict priority),
/// the rest → 0; so every packet is classified, WRED-checked, accounted
/// against the PFC thresholds and scheduled, as on a real rail switch.
pub fn model(ports: usize) -> SwitchModel {
    let demo = railyard_control::demo::DEMO_CONFIG;
    // The demo's QoS and system sections (everything before its interfaces).
    let mut text = demo[..demo.find("\ninterface ").unwrap_or(demo.len())].to_string();
    text.push('\n');
    for i in 0..ports {
        text.push_str(&format!(
            "interface Ethernet1/{n}\n  no switchport\n  mtu 9216\n  priority-flow-control mode on\n  \
             service-policy type qos input QOS_CLASSIFICATION\n  ip address 10.0.{i}.1/24\n  \
             ip arp {ip} {mac}\n  no shutdown\n",
            n = i + 1,
            ip = host_ip(i),
            mac = host_mac(i),
        ));
    }
    let parsed = railyard_config::parse_str(&text, "bench.conf", &Default::default())
        .unwrap_or_else(|e| panic!("bench config: {e:?}"));
    let mut model = railyard_control::compile::compile(&parsed.config)
        .unwrap_or_else(|e| panic!("bench config: {e:?}"))
        .model;
    model.hostname = "bench".into();
    for (i, ifc) in model.interfaces.iter_mut().enumerate() {
        ifc.mac = port_mac(i);
    }
    model
}

/// The remote prefix [`balanced_model`] spreads over every port.
pub const REMOTE: Ipv4Addr = Ipv4Addr::new(10, 100, 0, 0);

/// [`model`] plus 10.100.0.0/16 routed over an ECMP group of every port's
/// host, balanced by hash (`dlb` `None`) or by DLB in the given mode.
pub fn balanced_model(ports: usize, dlb: Option<DlbMode>) -> SwitchModel {
    let mut m = model(ports);
    m.routes.push(RouteModel {
        source: RouteSource::Static,
        prefix: IpAddr::V4(REMOTE),
        len: 16,
        next_hops: (0..ports)
            .map(|i| NextHopModel::Gateway {
                addr: IpAddr::V4(host_ip(i)),
                port: None,
            })
            .collect(),
    });
    m.load_balance.dlb = dlb.map(|mode| DlbModel {
        ports: (0..ports as u16).collect(),
        mode,
        ..DlbModel::default()
    });
    m
}

/// 64-byte frames entering port `i`: RoCEv2 writes (DSCP 24) with one CNP
/// (DSCP 48) in eight, to every other port, over many flows.
pub fn roce_mix(i: usize, ports: usize, flows: usize) -> Vec<Vec<u8>> {
    mix(i, flows, |f| {
        host_ip((i + 1 + f % (ports - 1).max(1)) % ports)
    })
}

/// The same mix entering port `i`, all of it toward the host of port
/// `(i + 2) % ports`: with two workers (ports dealt round-robin) no packet
/// crosses to the other worker.
pub fn roce_mix_worker_local(i: usize, ports: usize, flows: usize) -> Vec<Vec<u8>> {
    mix(i, flows, |_| host_ip((i + 2) % ports))
}

/// The same mix toward hosts of [`REMOTE`], which [`balanced_model`] routes
/// over its ECMP group.
pub fn roce_mix_remote(i: usize, flows: usize) -> Vec<Vec<u8>> {
    mix(i, flows, |f| {
        Ipv4Addr::new(10, 100, (f >> 8) as u8 ^ i as u8, f as u8)
    })
}

fn mix(i: usize, flows: usize, dst: impl Fn(usize) -> Ipv4Addr) -> Vec<Vec<u8>> {
    (0..flows)
        .map(|f| {
            let mut s = FrameSpec::udp(
                host_mac(i),
                port_mac(i),
                IpAddr::V4(host_ip(i)),
                IpAddr::V4(dst(f)),
            );
            s.frame_len = 64;
            s.src_port = 49152 + f as u16;
            let cnp = f % 8 == 7;
            s.dscp = if cnp { 48 } else { 24 };
            s.ecn = 2;
            s.transport = Transport::Roce {
                opcode: if cnp { BTH_CNP } else { BTH_RC_WRITE_ONLY },
                dest_qp: f as u32,
                psn: 0,
            };
            build(&s, f as u64)
        })
        .collect()
}
