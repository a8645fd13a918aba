//! Differential test of railyard's frame parser (`parse::parse`) against
//! etherparse, an independent implementation used as an oracle.
//!
//! Every frame goes through both. Where both accept it, they must agree on
//! what railyard's later stages read from `Meta`: the frame kind, the VLAN
//! tag (and so the PCP), the L3 and L4 offsets, the IP protocol, the
//! addresses found at the L3 offset, the ports, DSCP/ECN, TTL, the fragment
//! flag, the L3 length, and for RoCEv2 the BTH fields. Where one accepts and
//! the other rejects, the frame must fall under one of the [`Deliberate`]
//! differences, each a documented choice of railyard's parser; any other
//! disagreement fails the test with the frame in hex.
//!
//! Frames come from generators (Ethernet ± 802.1Q, IPv4 with and without
//! options, IPv6 with and without extension headers, TCP, UDP, RoCEv2 with a
//! BTH, ICMP, ARP, PFC, LLDP, other EtherTypes, then truncated and
//! byte-corrupted variants) and from real frames: fixed captures written out
//! below, and every frame of any pcap found under `pcap-tests/` or
//! `scripts/`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;

use etherparse::{LinkSlice, NetSlice, SlicedPacket, TransportSlice, VlanSlice};
use proptest::prelude::*;
use proptest::strategy::ValueTree;
use railyard_dataplane::meta::{FrameKind, Meta};
use railyard_dataplane::parse::parse;
use railyard_dataplane::wire::{ipv4, ipv6};

/// A difference between the two parsers that railyard makes on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Deliberate {
    /// railyard drops IPv4 with a wrong header checksum (a corrupted header
    /// must not be routed); etherparse does not verify checksums.
    Ipv4Checksum,
    /// railyard takes the IPv6 next header as the transport and does not
    /// walk extension headers (hop-by-hop, routing, fragment, destination
    /// options, AH): it reports that header's number, ports 0, and does not
    /// validate what follows; etherparse walks them and validates the
    /// transport behind them.
    Ipv6ExtensionHeaders,
    /// etherparse reads an IPv4 authentication header (protocol 51) as an
    /// extension and validates it; railyard treats 51 as an unknown
    /// transport it forwards untouched.
    Ipv4AuthHeader,
    /// UDP to port 4791 is RoCEv2 to railyard and must hold a 12-byte BTH;
    /// etherparse knows no BTH.
    RoceWithoutBth,
    /// railyard accepts ICMP and ICMPv6 of 4 bytes (type, code, checksum:
    /// all it reads); etherparse wants the 8-byte header, and exactly 20
    /// bytes for an ICMP timestamp or its reply.
    ShortIcmp,
    /// railyard reads one 802.1Q tag; a stacked or 802.1ad tag is an
    /// `Other` EtherType to it (its ports carry no QinQ), while etherparse
    /// reads two tags.
    StackedVlan,
    /// railyard checks ARP (28 bytes) and MAC control (the 2-byte opcode)
    /// for length, since it answers ARP and acts on PFC; etherparse has no
    /// parser for either.
    ShortArpOrMacControl,
    /// etherparse reads an IPv6 payload length or a UDP length of 0 as "the
    /// rest of the packet" (the RFC 2675 jumbogram convention); railyard
    /// carries no jumbograms (its frames end at 9,216 bytes) and takes the
    /// length as written, so such a datagram is malformed to it.
    ZeroLengthJumbogram,
}

/// What railyard's later stages read, taken from one parser's view.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Fields {
    kind: FrameKind,
    vlan_tci: Option<u16>,
    pcp: Option<u8>,
    l3_offset: usize,
    ip: Option<IpFields>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct IpFields {
    /// The protocol or next header in the IP header itself.
    proto: u8,
    src: IpAddr,
    dst: IpAddr,
    dscp: u8,
    ecn: u8,
    ttl: u8,
    l3_len: usize,
    fragment: bool,
    /// Where the header after the IP header starts.
    l4_offset: usize,
    /// Ports and the BTH, when the transport was read.
    l4: Option<L4Fields>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct L4Fields {
    src_port: u16,
    dst_port: u16,
    /// (opcode, destination QP, PSN) of a RoCEv2 BTH.
    bth: Option<(u8, u32, u32)>,
}

const ETH_VLAN: u16 = 0x8100;
const ETH_QINQ: u16 = 0x88a8;
const ROCEV2: u16 = 4791;

fn offset_in(frame: &[u8], part: &[u8]) -> usize {
    part.as_ptr() as usize - frame.as_ptr() as usize
}

/// railyard's view: `Meta`, plus the addresses at its L3 offset.
fn railyard(frame: &[u8]) -> Option<Fields> {
    let mut meta = Meta::default();
    parse(frame, &mut meta).ok()?;
    let l3 = usize::from(meta.l3_offset);
    let ip_common = |src, dst| IpFields {
        proto: meta.ip_proto,
        src,
        dst,
        dscp: meta.dscp,
        ecn: meta.ecn,
        ttl: meta.ttl,
        l3_len: usize::from(meta.l3_len),
        fragment: meta.fragment,
        l4_offset: usize::from(meta.l4_offset),
        l4: None,
    };
    let ip = match meta.kind {
        FrameKind::Ipv4 => {
            let p = ipv4::Packet::new_checked(&frame[l3..]).unwrap();
            Some(ip_common(p.src_addr().into(), p.dst_addr().into()))
        }
        FrameKind::Ipv6 => {
            let p = ipv6::Packet::new_checked(&frame[l3..]).unwrap();
            Some(ip_common(p.src_addr().into(), p.dst_addr().into()))
        }
        _ => None,
    };
    let ip = ip.map(|mut ip| {
        if matches!(ip.proto, 6 | 17) && !(ip.fragment) {
            ip.l4 = Some(L4Fields {
                src_port: meta.src_port,
                dst_port: meta.dst_port,
                bth: meta.roce.map(|r| (r.opcode, r.dest_qp, r.psn)),
            });
        }
        ip
    });
    Some(Fields {
        kind: meta.kind,
        vlan_tci: meta.vlan_tci,
        pcp: meta.pcp(),
        l3_offset: l3,
        ip,
    })
}

/// etherparse's view of the same fields.
fn oracle(frame: &[u8]) -> Option<Fields> {
    let p = SlicedPacket::from_ethernet(frame).ok()?;
    let Some(LinkSlice::Ethernet2(eth)) = &p.link else {
        panic!("from_ethernet gave no Ethernet II link");
    };
    let (vlan_tci, ethertype, l3_offset) = match &p.vlan {
        None => (None, eth.ether_type().0, 14),
        Some(VlanSlice::SingleVlan(v)) => {
            let s = v.slice();
            (Some(u16::from_be_bytes([s[0], s[1]])), v.ether_type().0, 18)
        }
        Some(VlanSlice::DoubleVlan(v)) => {
            let s = v.outer().slice();
            (Some(u16::from_be_bytes([s[0], s[1]])), ETH_VLAN, 18)
        }
    };
    let l4 = match &p.transport {
        Some(TransportSlice::Udp(u)) => Some(L4Fields {
            src_port: u.source_port(),
            dst_port: u.destination_port(),
            bth: match u.payload() {
                [op, _, _, _, _, q0, q1, q2, _, n0, n1, n2, ..]
                    if u.destination_port() == ROCEV2 =>
                {
                    Some((
                        *op,
                        u32::from_be_bytes([0, *q0, *q1, *q2]),
                        u32::from_be_bytes([0, *n0, *n1, *n2]),
                    ))
                }
                _ => None,
            },
        }),
        Some(TransportSlice::Tcp(t)) => Some(L4Fields {
            src_port: t.source_port(),
            dst_port: t.destination_port(),
            bth: None,
        }),
        _ => None,
    };
    let (kind, ip) = match &p.net {
        Some(NetSlice::Ipv4(v4)) => {
            let h = v4.header();
            let ip = IpFields {
                proto: h.protocol().0,
                src: Ipv4Addr::from(h.source()).into(),
                dst: Ipv4Addr::from(h.destination()).into(),
                dscp: h.dcp().value(),
                ecn: h.ecn().value(),
                ttl: h.ttl(),
                l3_len: usize::from(h.total_len()),
                fragment: v4.is_payload_fragmented(),
                l4_offset: offset_in(frame, h.slice()) + h.slice().len(),
                l4,
            };
            (FrameKind::Ipv4, Some(ip))
        }
        Some(NetSlice::Ipv6(v6)) => {
            let h = v6.header();
            let ip = IpFields {
                proto: h.next_header().0,
                src: Ipv6Addr::from(h.source()).into(),
                dst: Ipv6Addr::from(h.destination()).into(),
                dscp: h.traffic_class() >> 2,
                ecn: h.traffic_class() & 3,
                ttl: h.hop_limit(),
                l3_len: 40 + usize::from(h.payload_length()),
                fragment: false,
                l4_offset: offset_in(frame, h.slice()) + 40,
                l4,
            };
            (FrameKind::Ipv6, Some(ip))
        }
        None => (
            match ethertype {
                0x0806 => FrameKind::Arp,
                0x8808 => FrameKind::MacControl,
                0x88cc => FrameKind::Lldp,
                // railyard reads one tag: a second is the EtherType it sees.
                _ if p
                    .vlan
                    .as_ref()
                    .is_some_and(|v| matches!(v, VlanSlice::DoubleVlan(_))) =>
                {
                    FrameKind::Other(ETH_VLAN)
                }
                other => FrameKind::Other(other),
            },
            None,
        ),
    };
    Some(Fields {
        kind,
        vlan_tci,
        pcp: vlan_tci.map(|t| (t >> 13) as u8),
        l3_offset,
        ip,
    })
}

/// The EtherType after at most one 802.1Q tag, and where its payload starts.
fn ethertype_of(frame: &[u8]) -> Option<(u16, usize)> {
    let et = u16::from_be_bytes(frame.get(12..14)?.try_into().ok()?);
    if et == ETH_VLAN {
        let inner = u16::from_be_bytes(frame.get(16..18)?.try_into().ok()?);
        return Some((inner, 18));
    }
    Some((et, 14))
}

fn ipv4_checksum_ok(h: &[u8]) -> bool {
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum == 0xffff
}

/// The deliberate differences `frame` falls under (the shape of the frame
/// decides, read here independently of both parsers).
fn deliberate(frame: &[u8]) -> Vec<Deliberate> {
    use Deliberate::*;
    let mut d = Vec::new();
    let Some((et, l3)) = ethertype_of(frame) else {
        return d;
    };
    let outer = u16::from_be_bytes([frame[12], frame[13]]);
    if outer == ETH_QINQ
        || outer == 0x9100
        || (outer == ETH_VLAN && matches!(et, ETH_VLAN | ETH_QINQ | 0x9100))
    {
        d.push(StackedVlan);
    }
    let rest = &frame[l3..];
    let transport = match et {
        0x0800 => {
            let ihl = usize::from(rest.first().map_or(0, |b| b & 0xf)) * 4;
            if let Some(h) = rest.get(..ihl.max(20)) {
                if !ipv4_checksum_ok(h) {
                    d.push(Ipv4Checksum);
                }
                if h[9] == 51 {
                    d.push(Ipv4AuthHeader);
                }
                let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
                Some((
                    h[9],
                    rest.get(ihl..total.max(ihl))
                        .unwrap_or(&rest[ihl.min(rest.len())..]),
                ))
            } else {
                None
            }
        }
        0x86dd => rest.get(..40).map(|h| {
            let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
            if len == 0 && rest.len() > 40 {
                d.push(ZeroLengthJumbogram);
            }
            (h[6], rest.get(40..40 + len).unwrap_or(&rest[40..]))
        }),
        0x0806 | 0x8808 => {
            d.push(ShortArpOrMacControl);
            None
        }
        _ => None,
    };
    if let Some((proto, payload)) = transport {
        match proto {
            0 | 43 | 44 | 60 | 51 if et == 0x86dd => d.push(Ipv6ExtensionHeaders),
            17 if payload.len() >= 4 && u16::from_be_bytes([payload[2], payload[3]]) == ROCEV2 => {
                d.push(RoceWithoutBth)
            }
            17 if payload.len() >= 6 && payload[4..6] == [0, 0] => d.push(ZeroLengthJumbogram),
            1 | 58 if payload.len() < 8 => d.push(ShortIcmp),
            // Timestamp and its reply are exactly 20 bytes to etherparse.
            1 if matches!(payload[0], 13 | 14) && payload.len() != 20 => d.push(ShortIcmp),
            _ => {}
        }
    }
    d
}

/// Compares the two views of `frame`; panics on an unexplained difference.
/// Returns which parsers accepted it, for the coverage counts.
fn check(frame: &[u8]) -> (bool, bool) {
    let ours = railyard(frame);
    let theirs = oracle(frame);
    let known = deliberate(frame);
    let hex: String = frame.iter().map(|b| format!("{b:02x}")).collect();
    match (&ours, &theirs) {
        (Some(a), Some(b)) => {
            if known.contains(&Deliberate::StackedVlan) {
                // railyard stops at the second tag (or an 802.1ad one).
                assert!(
                    matches!(a.kind, FrameKind::Other(ETH_VLAN | ETH_QINQ | 0x9100)),
                    "stacked tags of {hex} read as {a:?}"
                );
                return (true, true);
            }
            let mut a = a.clone();
            let mut b = b.clone();
            if known.contains(&Deliberate::Ipv6ExtensionHeaders)
                || known.contains(&Deliberate::Ipv4AuthHeader)
            {
                // railyard did not look past the extension header.
                for f in [&mut a, &mut b] {
                    if let Some(ip) = f.ip.as_mut() {
                        ip.l4 = None;
                    }
                }
            }
            assert_eq!(
                a, b,
                "railyard and etherparse disagree on {hex} (deliberate: {known:?})"
            );
        }
        (None, None) => {}
        (Some(_), None) => {
            let why = [
                Deliberate::ShortIcmp,
                Deliberate::Ipv6ExtensionHeaders,
                Deliberate::Ipv4AuthHeader,
                Deliberate::StackedVlan,
            ];
            assert!(
                known.iter().any(|k| why.contains(k)),
                "railyard accepts what etherparse rejects, with no deliberate reason: {hex}\nrailyard: {ours:?}\netherparse: {:?}",
                SlicedPacket::from_ethernet(frame).err()
            );
        }
        (None, Some(_)) => {
            let why = [
                Deliberate::Ipv4Checksum,
                Deliberate::RoceWithoutBth,
                Deliberate::ShortArpOrMacControl,
                Deliberate::StackedVlan,
                Deliberate::ZeroLengthJumbogram,
            ];
            assert!(
                known.iter().any(|k| why.contains(k)),
                "etherparse accepts what railyard rejects, with no deliberate reason: {hex}\netherparse: {theirs:?}"
            );
        }
    }
    (ours.is_some(), theirs.is_some())
}

// ---- frame builders (plain bytes, independent of railyard's emitters) ----

fn ipv4_checksum(h: &mut [u8]) {
    h[10] = 0;
    h[11] = 0;
    let mut sum: u32 = 0;
    for c in h.chunks(2) {
        sum += u32::from(u16::from_be_bytes([c[0], c[1]]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let c = !(sum as u16);
    h[10..12].copy_from_slice(&c.to_be_bytes());
}

fn ethernet(tags: &[(u16, u16)], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1];
    for (tpid, tci) in tags {
        f.extend_from_slice(&tpid.to_be_bytes());
        f.extend_from_slice(&tci.to_be_bytes());
    }
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

struct V4 {
    tos: u8,
    ttl: u8,
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    options: Vec<u8>,
    flags_frag: u16,
}

fn ipv4(h: &V4, payload: &[u8]) -> Vec<u8> {
    let hl = 20 + h.options.len();
    let mut p = vec![0u8; hl];
    p[0] = 0x40 | (hl / 4) as u8;
    p[1] = h.tos;
    p[2..4].copy_from_slice(&((hl + payload.len()) as u16).to_be_bytes());
    p[4..6].copy_from_slice(&0x1234u16.to_be_bytes());
    p[6..8].copy_from_slice(&h.flags_frag.to_be_bytes());
    p[8] = h.ttl;
    p[9] = h.proto;
    p[12..16].copy_from_slice(&h.src);
    p[16..20].copy_from_slice(&h.dst);
    p[20..].copy_from_slice(&h.options);
    ipv4_checksum(&mut p[..hl]);
    p.extend_from_slice(payload);
    p
}

fn ipv6(tc: u8, hop: u8, next: u8, src: [u8; 16], dst: [u8; 16], payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0u8; 40];
    let vtf = (6u32 << 28) | (u32::from(tc) << 20) | 0x12345;
    p[0..4].copy_from_slice(&vtf.to_be_bytes());
    p[4..6].copy_from_slice(&(payload.len() as u16).to_be_bytes());
    p[6] = next;
    p[7] = hop;
    p[8..24].copy_from_slice(&src);
    p[24..40].copy_from_slice(&dst);
    p.extend_from_slice(payload);
    p
}

fn udp(sport: u16, dport: u16, payload: &[u8]) -> Vec<u8> {
    let mut u = Vec::with_capacity(8 + payload.len());
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    u
}

fn tcp(sport: u16, dport: u16, options: &[u8], payload: &[u8]) -> Vec<u8> {
    let hl = 20 + options.len();
    let mut t = vec![0u8; 20];
    t[0..2].copy_from_slice(&sport.to_be_bytes());
    t[2..4].copy_from_slice(&dport.to_be_bytes());
    t[4..8].copy_from_slice(&1u32.to_be_bytes());
    t[12] = ((hl / 4) as u8) << 4;
    t[13] = 0x02;
    t[14..16].copy_from_slice(&0xffffu16.to_be_bytes());
    t.extend_from_slice(options);
    t.extend_from_slice(payload);
    t
}

fn bth(opcode: u8, qp: u32, psn: u32) -> Vec<u8> {
    let mut b = vec![opcode, 0x40, 0xff, 0xff, 0];
    b.extend_from_slice(&qp.to_be_bytes()[1..]);
    b.push(0x80);
    b.extend_from_slice(&psn.to_be_bytes()[1..]);
    b
}

/// An IPv6 extension header of 8 bytes carrying `next`.
fn ext8(next: u8) -> Vec<u8> {
    vec![next, 0, 1, 4, 0, 0, 0, 0]
}

fn arp_request() -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4, 0, 1];
    a.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 10, 0, 0, 1]);
    a.extend_from_slice(&[0, 0, 0, 0, 0, 0, 10, 0, 0, 2]);
    a
}

// ---- generators ----

#[derive(Debug, Clone)]
enum L4Kind {
    Udp(u16, u16, Vec<u8>),
    Roce(u16, u8, u32, u32, Vec<u8>),
    Tcp(u16, u16, Vec<u8>, Vec<u8>),
    Icmp(Vec<u8>),
    Other(u8, Vec<u8>),
}

fn arb_l4() -> impl Strategy<Value = L4Kind> {
    let data = || proptest::collection::vec(any::<u8>(), 0..40);
    prop_oneof![
        (any::<u16>(), any::<u16>(), data()).prop_map(|(s, d, p)| L4Kind::Udp(s, d, p)),
        (
            any::<u16>(),
            any::<u8>(),
            0u32..1 << 24,
            0u32..1 << 24,
            data()
        )
            .prop_map(|(s, o, q, n, p)| L4Kind::Roce(s, o, q, n, p)),
        (any::<u16>(), any::<u16>(), 0usize..11, data()).prop_map(|(s, d, w, p)| {
            // NOP-padded options in whole words.
            L4Kind::Tcp(s, d, vec![1; w * 4], p)
        }),
        proptest::collection::vec(any::<u8>(), 4..30).prop_map(L4Kind::Icmp),
        (
            prop_oneof![Just(47u8), Just(89), Just(132), Just(253)],
            data()
        )
            .prop_map(|(p, d)| L4Kind::Other(p, d)),
    ]
}

fn l4_bytes(l4: &L4Kind, v6: bool) -> (u8, Vec<u8>) {
    match l4 {
        L4Kind::Udp(s, d, p) => (17, udp(*s, *d, p)),
        L4Kind::Roce(s, o, q, n, p) => {
            let mut b = bth(*o, *q, *n);
            b.extend_from_slice(p);
            (17, udp(*s, ROCEV2, &b))
        }
        L4Kind::Tcp(s, d, o, p) => (6, tcp(*s, *d, o, p)),
        L4Kind::Icmp(p) => (if v6 { 58 } else { 1 }, p.clone()),
        L4Kind::Other(n, p) => (*n, p.clone()),
    }
}

fn arb_tags() -> impl Strategy<Value = Vec<(u16, u16)>> {
    prop_oneof![
        4 => Just(vec![]),
        4 => any::<u16>().prop_map(|t| vec![(ETH_VLAN, t)]),
        1 => (any::<u16>(), any::<u16>()).prop_map(|(a, b)| vec![(ETH_QINQ, a), (ETH_VLAN, b)]),
        1 => (any::<u16>(), any::<u16>()).prop_map(|(a, b)| vec![(ETH_VLAN, a), (ETH_VLAN, b)]),
    ]
}

fn arb_frame() -> impl Strategy<Value = Vec<u8>> {
    let v4 = (
        arb_tags(),
        any::<u8>(),
        any::<u8>(),
        any::<[u8; 4]>(),
        any::<[u8; 4]>(),
        prop_oneof![Just(0usize), 1usize..11],
        prop_oneof![4 => Just(0u16), 1 => Just(0x2000u16), 1 => 1u16..0x1fff],
        arb_l4(),
        0usize..20,
    )
        .prop_map(|(tags, tos, ttl, src, dst, opt_words, frag, l4, pad)| {
            let (proto, body) = l4_bytes(&l4, false);
            let h = V4 {
                tos,
                ttl,
                proto,
                src,
                dst,
                options: vec![1; opt_words * 4],
                flags_frag: frag,
            };
            let mut f = ethernet(&tags, 0x0800, &ipv4(&h, &body));
            f.resize(f.len() + pad, 0); // Ethernet padding
            f
        });
    let v6 = (
        arb_tags(),
        any::<u8>(),
        any::<u8>(),
        any::<[u8; 16]>(),
        any::<[u8; 16]>(),
        proptest::collection::vec(prop_oneof![Just(0u8), Just(43), Just(60)], 0..3),
        arb_l4(),
    )
        .prop_map(|(tags, tc, hop, src, dst, exts, l4)| {
            let (proto, body) = l4_bytes(&l4, true);
            // Chain the extension headers, each naming the one after it.
            let mut payload = Vec::new();
            for (i, _) in exts.iter().enumerate() {
                payload.extend_from_slice(&ext8(exts.get(i + 1).copied().unwrap_or(proto)));
            }
            payload.extend_from_slice(&body);
            let next = exts.first().copied().unwrap_or(proto);
            ethernet(&tags, 0x86dd, &ipv6(tc, hop, next, src, dst, &payload))
        });
    let other = (
        arb_tags(),
        prop_oneof![
            Just(0x0806u16),
            Just(0x8808),
            Just(0x88cc),
            Just(0x88f7),
            Just(0x0600),
            Just(0x0042)
        ],
        proptest::collection::vec(any::<u8>(), 0..60),
    )
        .prop_map(|(tags, et, body)| {
            let body = if et == 0x0806 && body.len() > 10 {
                arp_request()
            } else {
                body
            };
            ethernet(&tags, et, &body)
        });
    prop_oneof![4 => v4, 3 => v6, 1 => other]
}

/// A frame, then cut short and byte-corrupted variants of it.
fn arb_variant() -> impl Strategy<Value = Vec<u8>> {
    (
        arb_frame(),
        0u8..4,
        any::<prop::sample::Index>(),
        any::<u8>(),
    )
        .prop_map(|(mut f, how, at, x)| {
            match how {
                0 | 1 => {}
                2 => f.truncate(at.index(f.len() + 1)),
                _ => {
                    let i = at.index(f.len().max(1));
                    if let Some(b) = f.get_mut(i) {
                        *b ^= x | 1;
                    }
                }
            }
            f
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn random_frames_agree_or_differ_deliberately(f in arb_variant()) {
        check(&f);
    }
}

/// Well-formed frames of every shape must be accepted by both and agree
/// field by field (no deliberate difference excuses a rejection here).
#[test]
fn well_formed_frames_are_accepted_by_both() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let mut both = 0;
    for _ in 0..2000 {
        let f = arb_frame().new_tree(&mut runner).unwrap().current();
        let (a, b) = check(&f);
        if deliberate(&f).is_empty() {
            assert!(a && b, "a well-formed frame was rejected: {f:02x?}");
        }
        both += usize::from(a && b);
    }
    assert!(both > 1000, "only {both} frames parsed by both");
}

/// Real frames: captures of common traffic, written out byte for byte.
fn captures() -> Vec<(&'static str, Vec<u8>)> {
    let h = |s: &str| -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    };
    vec![
        (
            // RoCEv2 RC SEND-only, DSCP 26 ECT(0), 802.1Q PCP 3.
            "rocev2 send in vlan 100",
            h("0c42a1b2c3d4 b8cef6010203 8100 6064 0800
               4568 003c 0000 4000 4011 0000 0a000001 0a000102
               c350 12b7 0028 0000
               04 40 ffff 00 000011 80 000001
               00000000000000000000000000000000 1b2c3d4e"),
        ),
        (
            // TCP SYN with MSS, SACK-permitted, timestamps and window scale.
            "tcp syn",
            h("525400123502 0800270d2a1b 0800
               4500 003c 1c46 4000 4006 0000 c0a80068 5db8d822
               d2c8 0050 6e8f4a1b 00000000 a002 faf0 0000 0000
               020405b4 0402 080a 00a1b2c3 00000000 01 030307"),
        ),
        (
            "icmpv6 neighbour solicitation",
            h("3333ff000002 020000000001 86dd
               6000 0000 0020 3a ff
               fe800000000000000000000000000001 ff0200000000000000000001ff000002
               87 00 0000 00000000 fe800000000000000000000000000002
               01 01 020000000001"),
        ),
        (
            "arp request",
            h("ffffffffffff 020000000001 0806
               0001 0800 06 04 0001 020000000001 0a000001 000000000000 0a000002
               000000000000000000000000000000000000"),
        ),
        (
            "pfc xoff priority 3",
            h(
                "0180c2000001 020000000001 8808 0101 0008 0000 0000 0000 ffff
               00000000 00000000 000000000000000000000000000000000000000000000000000000",
            ),
        ),
        (
            "igmp with a router-alert ip option",
            h("01005e000016 020000000001 0800
               4600 0020 0000 0000 0102 0000 0a000001 e0000016 94040000
               2200 f9fb 0000 0001"),
        ),
    ]
    .into_iter()
    .map(|(name, mut f)| {
        // Captures above carry zero checksums; fill the IPv4 ones in.
        if let Some((0x0800, l3)) = ethertype_of(&f) {
            let hl = usize::from(f[l3] & 0xf) * 4;
            ipv4_checksum(&mut f[l3..l3 + hl]);
        }
        (name, f)
    })
    .collect()
}

#[test]
fn real_frames_agree() {
    for (name, f) in captures() {
        let (a, b) = check(&f);
        assert!(a && b, "{name}: railyard {a}, etherparse {b}");
    }
}

/// Every frame of the pcaps the repository carries, if any.
#[test]
fn repository_pcaps_agree() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for dir in ["pcap-tests", "scripts"] {
        collect_pcaps(&root.join(dir), &mut files);
    }
    for path in files {
        let file = std::fs::File::open(&path).unwrap();
        let mut reader = pcap_file::pcap::PcapReader::new(file).unwrap();
        while let Some(pkt) = reader.next_packet() {
            check(&pkt.unwrap().data);
        }
    }
}

fn collect_pcaps(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() && !p.ends_with("target") {
            collect_pcaps(&p, out);
        } else if p.extension().is_some_and(|x| x == "pcap") {
            out.push(p);
        }
    }
}

/// Every deliberate difference is met by some frame, so none is dead text.
#[test]
fn each_deliberate_difference_occurs() {
    let v4 = |proto, payload: &[u8]| {
        let h = V4 {
            tos: 0,
            ttl: 64,
            proto,
            src: [10, 0, 0, 1],
            dst: [10, 0, 0, 2],
            options: vec![],
            flags_frag: 0,
        };
        ethernet(&[], 0x0800, &ipv4(&h, payload))
    };
    let mut bad_sum = v4(17, &udp(1, 2, &[]));
    bad_sum[24] ^= 0xff;
    let mut udp_len_zero = udp(1, 2, &[]);
    udp_len_zero[4..6].copy_from_slice(&[0, 0]);
    let cases: Vec<(Deliberate, Vec<u8>, (bool, bool))> = vec![
        (Deliberate::Ipv4Checksum, bad_sum, (false, true)),
        (
            Deliberate::Ipv6ExtensionHeaders,
            ethernet(
                &[],
                0x86dd,
                &ipv6(0, 64, 0, [1; 16], [2; 16], &[17, 0, 0, 0]),
            ),
            (true, false),
        ),
        (Deliberate::Ipv4AuthHeader, v4(51, &[17, 0]), (true, false)),
        (
            Deliberate::RoceWithoutBth,
            v4(17, &udp(1, ROCEV2, &[4, 0])),
            (false, true),
        ),
        (Deliberate::ShortIcmp, v4(1, &[8, 0, 0, 0]), (true, false)),
        (
            Deliberate::StackedVlan,
            ethernet(&[(ETH_QINQ, 5), (ETH_VLAN, 6)], 0x0800, &[0x45]),
            (true, false),
        ),
        (
            Deliberate::ShortArpOrMacControl,
            ethernet(&[], 0x0806, &[0, 1]),
            (false, true),
        ),
        (
            Deliberate::ZeroLengthJumbogram,
            ethernet(
                &[],
                0x86dd,
                &ipv6(0, 64, 17, [1; 16], [2; 16], &udp_len_zero),
            ),
            (false, true),
        ),
    ];
    for (want, f, accepted) in cases {
        assert!(deliberate(&f).contains(&want), "{want:?} not detected");
        assert_eq!(check(&f), accepted, "{want:?}");
    }
}
