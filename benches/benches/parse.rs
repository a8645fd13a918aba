//! Cost of the parser stage on the frames the fast path sees most: a 64-byte
//! RoCEv2 write over IPv4, a TCP segment over IPv6 and an 802.1Q-tagged
//! RoCEv2 frame.

use std::hint::black_box;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use railyard_dataplane::meta::Meta;
use railyard_dataplane::parse::parse;
use railyard_dataplane::wire::bth::{self, BthRepr, Opcode};
use railyard_dataplane::wire::{
    ethernet, ipv4, ipv6, tcp, udp, vlan, EtherType, EthernetRepr, IpProtocol, Ipv4Repr, Ipv6Repr,
    MacAddr, UdpRepr, VlanRepr,
};

const SRC_MAC: MacAddr = MacAddr([2, 0xcc, 0, 0, 0, 1]);
const DST_MAC: MacAddr = MacAddr([2, 0xbb, 0, 0, 0, 1]);

/// Writes the Ethernet header and, with `pcp`, an 802.1Q tag; returns the L3 offset.
fn ethernet(frame: &mut [u8], ethertype: EtherType, pcp: Option<u8>) -> usize {
    let outer = if pcp.is_some() {
        EtherType::Vlan
    } else {
        ethertype
    };
    EthernetRepr {
        src_addr: SRC_MAC,
        dst_addr: DST_MAC,
        ethertype: outer,
    }
    .emit(&mut ethernet::Frame::new_unchecked(&mut frame[..]));
    match pcp {
        Some(pcp) => {
            VlanRepr {
                pcp,
                dei: false,
                vid: 100,
                ethertype,
            }
            .emit(&mut vlan::Packet::new_unchecked(
                &mut frame[ethernet::HEADER_LEN..],
            ));
            ethernet::HEADER_LEN + vlan::HEADER_LEN
        }
        None => ethernet::HEADER_LEN,
    }
}

/// A 64-byte RoCEv2 RC RDMA WRITE Only frame (DSCP 24, ECT(0)): BTH, 6
/// payload bytes and the 4-byte ICRC (64 bytes untagged, 68 tagged).
fn roce_v4(pcp: Option<u8>) -> Vec<u8> {
    const UDP_PAYLOAD: usize = bth::HEADER_LEN + 6 + 4;
    let (src, dst) = (Ipv4Addr::new(10, 0, 0, 2), Ipv4Addr::new(10, 0, 1, 2));
    let mut f = vec![0u8; 64 + if pcp.is_some() { 4 } else { 0 }];
    let l3 = ethernet(&mut f, EtherType::Ipv4, pcp);
    Ipv4Repr {
        src_addr: src,
        dst_addr: dst,
        protocol: IpProtocol::Udp,
        payload_len: (udp::HEADER_LEN + UDP_PAYLOAD) as u16,
        ttl: 64,
        dscp: 24,
        ecn: 2,
    }
    .emit(&mut ipv4::Packet::new_unchecked(&mut f[l3..]));
    let l4 = l3 + ipv4::HEADER_LEN;
    BthRepr {
        opcode: Opcode::RcRdmaWriteOnly,
        solicited_event: false,
        migreq: true,
        pad_count: 2,
        tver: 0,
        pkey: 0xffff,
        fecn: false,
        becn: false,
        dest_qp: 0x11,
        ack_req: true,
        psn: 1,
    }
    .emit(&mut bth::Packet::new_unchecked(
        &mut f[l4 + udp::HEADER_LEN..],
    ));
    UdpRepr {
        src_port: 49152,
        dst_port: bth::ROCEV2_UDP_PORT,
    }
    .emit(
        &mut udp::Packet::new_unchecked(&mut f[l4..]),
        &IpAddr::V4(src),
        &IpAddr::V4(dst),
        UDP_PAYLOAD,
    );
    f
}

/// A TCP/IPv6 ACK with a 12-byte timestamp option and 16 payload bytes.
fn tcp_v6() -> Vec<u8> {
    let src: Ipv6Addr = "fd00::2".parse().unwrap_or(Ipv6Addr::LOCALHOST);
    let dst: Ipv6Addr = "fd00:1::2".parse().unwrap_or(Ipv6Addr::LOCALHOST);
    let seg_len = 32 + 16;
    let mut f = vec![0u8; ethernet::HEADER_LEN + ipv6::HEADER_LEN + seg_len];
    let l3 = ethernet(&mut f, EtherType::Ipv6, None);
    Ipv6Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IpProtocol::Tcp,
        payload_len: seg_len as u16,
        hop_limit: 64,
        dscp: 10,
        ecn: 1,
    }
    .emit(&mut ipv6::Packet::new_unchecked(&mut f[l3..]));
    let mut seg = tcp::Packet::new_unchecked(&mut f[l3 + ipv6::HEADER_LEN..]);
    seg.set_src_port(40000);
    seg.set_dst_port(5201);
    seg.set_seq_number(1);
    seg.set_ack_number(1);
    seg.set_header_len(32);
    seg.set_flags(tcp::FLAG_ACK | tcp::FLAG_PSH);
    seg.set_window_len(512);
    seg.options_mut()
        .copy_from_slice(&[1, 1, 8, 10, 0, 0, 0, 1, 0, 0, 0, 2]);
    seg.fill_checksum(&IpAddr::V6(src), &IpAddr::V6(dst));
    f
}

fn bench_parse(c: &mut Criterion) {
    let cases = [
        ("rocev2_ipv4_64B", roce_v4(None)),
        ("tcp_ipv6", tcp_v6()),
        ("rocev2_ipv4_tagged_pcp3", roce_v4(Some(3))),
    ];
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Elements(1));
    for (name, frame) in &cases {
        let mut meta = Meta::default();
        assert!(parse(frame, &mut meta).is_ok(), "{name} must parse");
        group.bench_function(*name, |b| {
            b.iter(|| {
                let r = parse(black_box(frame), &mut meta);
                black_box((r, meta.l4_offset))
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
