//! The parser stage: one pass over a received frame that fills [`Meta`].
//!
//! Every later stage reads offsets, ports, DSCP/ECN and RoCEv2
//! fields from [`Meta`] instead of re-parsing. The parser allocates nothing
//! and never panics, whatever the bytes; a frame it cannot trust is
//! reported as [`DropReason::Malformed`].

use crate::counters::DropReason;
use crate::meta::{FrameKind, Meta, Roce};
use crate::wire::ipv4::Protocol;
use crate::wire::{
    arp, bth, checksum, ethernet, ipv4, ipv6, mac_control, tcp, udp, vlan, EtherType,
};

/// Every wire error the parser meets means the same fate.
#[inline]
fn malformed<E>(_: E) -> DropReason {
    DropReason::Malformed
}

/// An offset or length as `Meta` stores it; one beyond 16 bits is only
/// possible in a frame no Ethernet link carries.
#[inline]
fn off(x: usize) -> Result<u16, DropReason> {
    u16::try_from(x).map_err(malformed)
}

/// Clears what [`parse`] owns, leaving decisions of later stages alone.
#[inline]
fn reset(meta: &mut Meta) {
    meta.kind = FrameKind::Unparsed;
    meta.vlan_tci = None;
    meta.l3_offset = 0;
    meta.l4_offset = 0;
    meta.payload_offset = 0;
    meta.l3_len = 0;
    meta.ip_proto = 0;
    meta.dscp = 0;
    meta.ecn = 0;
    meta.ttl = 0;
    meta.src_port = 0;
    meta.dst_port = 0;
    meta.fragment = false;
    meta.hash = 0;
    meta.roce = None;
}

/// Fills `meta` from `frame`; on error the frame is malformed and must be dropped.
///
/// Handles Ethernet with at most one 802.1Q tag, then by EtherType:
/// - IPv4: version 4, IHL ≥ 5, `total_len` between the header length and the
///   bytes present (the frame may carry Ethernet padding beyond it), header
///   checksum correct. Fragments set `fragment`; only a first fragment gives
///   ports, read without checking the transport length fields (they describe
///   the whole datagram), and its `payload_offset` stays at `l4_offset`.
/// - IPv6: version 6, `payload_len` within the frame; the next header is
///   taken as the transport (no extension-header walk).
/// - UDP (length 8..=IP payload), TCP (data offset ≥ 5, options present),
///   ICMP and ICMPv6 (at least 4 bytes; `payload_offset` after type, code
///   and checksum). UDP to port 4791 must carry a 12-byte BTH, which fills
///   `meta.roce`; `payload_offset` then points at the BTH.
/// - ARP (at least 28 bytes), MAC control (at least the 2-byte opcode), LLDP
///   (classified only), anything else `FrameKind::Other(ethertype)`. For
///   these `l3_offset` marks the EtherType's payload and `l4_offset` and
///   `payload_offset` equal it.
///
/// `hash` is cleared (forwarding computes it for ECMP routes only, with the
/// switch's hash settings). `qos_group` and `out_port` are left untouched. On error the contents of `meta` are unspecified.
///
/// # Errors
/// [`DropReason::Malformed`] for a truncated or inconsistent frame.
#[inline]
pub fn parse(frame: &[u8], meta: &mut Meta) -> Result<(), DropReason> {
    if parse_plain_udp4(frame, meta) {
        return Ok(());
    }
    parse_any(frame, meta)
}

/// Ethernet, a 20-byte IPv4 header and a UDP header: the shape of almost
/// every RoCEv2 frame, and the least a plain UDP/IPv4 frame can be.
const PLAIN_UDP4_LEN: usize = ethernet::HEADER_LEN + ipv4::HEADER_LEN + udp::HEADER_LEN;

/// The common case in one pass, with one bounds check for its three
/// headers: an untagged, unfragmented IPv4 frame without options carrying
/// UDP (RoCEv2 or not). Fills `meta` exactly as [`parse_any`] would and
/// returns true; returns false, having written nothing that matters, for
/// any other frame or any frame [`parse_any`] would reject, which then
/// decides. A property test holds the two to the same result.
#[inline]
fn parse_plain_udp4(frame: &[u8], meta: &mut Meta) -> bool {
    let Some(head) = frame.first_chunk::<PLAIN_UDP4_LEN>() else {
        return false;
    };
    const L3: usize = ethernet::HEADER_LEN;
    const L4: usize = L3 + ipv4::HEADER_LEN;
    // Always there (`head` holds it); as an array, the checksum needs no
    // length checks.
    let Some(header) = head[L3..].first_chunk::<{ ipv4::HEADER_LEN }>() else {
        return false;
    };
    let ip = ipv4::Packet::new_unchecked(&header[..]);
    let udp = udp::Packet::new_unchecked(&head[L4..]);
    let ip_room = frame.len() - L3;
    let total = usize::from(ip.total_len());
    let udp_len = usize::from(udp.len());
    let plain = ethernet::Frame::new_unchecked(&head[..L3]).ethertype() == EtherType::Ipv4
        && header[0] == 0x45 // version 4, no options
        && ip.protocol() == Protocol::Udp
        && !ip.is_fragment()
        && (ipv4::HEADER_LEN..=ip_room).contains(&total)
        && (udp::HEADER_LEN..=total - ipv4::HEADER_LEN).contains(&udp_len);
    if !plain || !checksum::verifies_20(header) {
        return false;
    }
    let dst_port = udp.dst_port();
    meta.roce = None;
    if dst_port == bth::ROCEV2_UDP_PORT {
        // Inside the UDP datagram, whose length was checked against the frame.
        if udp_len < udp::HEADER_LEN + bth::HEADER_LEN {
            return false;
        }
        let Some(b) = frame[L4 + udp::HEADER_LEN..].first_chunk::<{ bth::HEADER_LEN }>() else {
            return false;
        };
        let bth = bth::Packet::new_unchecked(b);
        meta.roce = Some(Roce {
            opcode: bth.opcode_byte(),
            dest_qp: bth.dest_qp(),
            psn: bth.psn(),
        });
    }
    meta.kind = FrameKind::Ipv4;
    meta.vlan_tci = None;
    meta.l3_offset = L3 as u16;
    meta.l4_offset = L4 as u16;
    meta.payload_offset = (L4 + udp::HEADER_LEN) as u16;
    meta.l3_len = total as u16;
    meta.ip_proto = Protocol::Udp.into();
    meta.dscp = ip.dscp();
    meta.ecn = ip.ecn();
    meta.ttl = ip.ttl();
    meta.fragment = false;
    meta.src_port = udp.src_port();
    meta.dst_port = dst_port;
    meta.hash = 0;
    true
}

/// Every frame shape the parser knows, one header at a time. Out of line,
/// so that [`parse`] (the one-pass check and this call) is small enough to
/// inline into the receive loop.
#[inline(never)]
fn parse_any(frame: &[u8], meta: &mut Meta) -> Result<(), DropReason> {
    reset(meta);
    let eth = ethernet::Frame::new_checked(frame).map_err(malformed)?;
    let mut ethertype = eth.ethertype();
    let mut l3 = ethernet::HEADER_LEN;
    if ethertype == EtherType::Vlan {
        let tag = vlan::Packet::new_checked(eth.payload()).map_err(malformed)?;
        meta.vlan_tci = Some(tag.tci());
        ethertype = tag.ethertype();
        l3 += vlan::HEADER_LEN;
    }
    let rest = frame.get(l3..).ok_or(DropReason::Malformed)?;
    let l3_offset = off(l3)?;
    meta.l3_offset = l3_offset;
    meta.l4_offset = l3_offset;
    meta.payload_offset = l3_offset;
    match ethertype {
        EtherType::Ipv4 => {
            meta.kind = FrameKind::Ipv4;
            parse_ipv4(rest, l3, meta)
        }
        EtherType::Ipv6 => {
            meta.kind = FrameKind::Ipv6;
            parse_ipv6(rest, l3, meta)
        }
        EtherType::Arp => {
            meta.kind = FrameKind::Arp;
            arp::Packet::new_checked(rest)
                .map(|_| ())
                .map_err(malformed)
        }
        EtherType::MacControl => {
            meta.kind = FrameKind::MacControl;
            if rest.len() < mac_control::HEADER_LEN {
                Err(DropReason::Malformed)
            } else {
                Ok(())
            }
        }
        EtherType::Lldp => {
            meta.kind = FrameKind::Lldp;
            Ok(())
        }
        other => {
            meta.kind = FrameKind::Other(other.into());
            Ok(())
        }
    }
}

fn parse_ipv4(buf: &[u8], l3: usize, meta: &mut Meta) -> Result<(), DropReason> {
    let ip = ipv4::Packet::new_checked(buf).map_err(malformed)?;
    if ip.version() != 4 || !ip.verify_checksum() {
        return Err(DropReason::Malformed);
    }
    let proto = ip.protocol();
    meta.l3_len = ip.total_len();
    meta.ip_proto = proto.into();
    meta.dscp = ip.dscp();
    meta.ecn = ip.ecn();
    meta.ttl = ip.ttl();
    meta.fragment = ip.is_fragment();
    let l4 = l3 + usize::from(ip.header_len());
    meta.l4_offset = off(l4)?;
    meta.payload_offset = meta.l4_offset;
    let (sport, dport) = if !meta.fragment {
        parse_l4(ip.payload(), l4, proto, meta)?
    } else if ip.frag_offset() == 0 {
        first_fragment_ports(ip.payload(), proto)
    } else {
        (0, 0)
    };
    meta.src_port = sport;
    meta.dst_port = dport;
    Ok(())
}

fn parse_ipv6(buf: &[u8], l3: usize, meta: &mut Meta) -> Result<(), DropReason> {
    let ip = ipv6::Packet::new_checked(buf).map_err(malformed)?;
    if ip.version() != 6 {
        return Err(DropReason::Malformed);
    }
    let proto = ip.next_header();
    meta.l3_len = off(ipv6::HEADER_LEN + usize::from(ip.payload_len()))?;
    meta.ip_proto = proto.into();
    meta.dscp = ip.dscp();
    meta.ecn = ip.ecn();
    meta.ttl = ip.hop_limit();
    let l4 = l3 + ipv6::HEADER_LEN;
    meta.l4_offset = off(l4)?;
    meta.payload_offset = meta.l4_offset;
    let (sport, dport) = parse_l4(ip.payload(), l4, proto, meta)?;
    meta.src_port = sport;
    meta.dst_port = dport;
    Ok(())
}

/// Validates the transport header in `buf` (the IP payload, starting at frame
/// offset `l4`), sets `payload_offset` and `roce`, and returns the ports.
fn parse_l4(
    buf: &[u8],
    l4: usize,
    proto: Protocol,
    meta: &mut Meta,
) -> Result<(u16, u16), DropReason> {
    match proto {
        Protocol::Udp => {
            let dgram = udp::Packet::new_checked(buf).map_err(malformed)?;
            meta.payload_offset = off(l4 + udp::HEADER_LEN)?;
            if dgram.dst_port() == bth::ROCEV2_UDP_PORT {
                let bth = bth::Packet::new_checked(dgram.payload()).map_err(malformed)?;
                meta.roce = Some(Roce {
                    opcode: bth.opcode_byte(),
                    dest_qp: bth.dest_qp(),
                    psn: bth.psn(),
                });
            }
            Ok((dgram.src_port(), dgram.dst_port()))
        }
        Protocol::Tcp => {
            let seg = tcp::Packet::new_checked(buf).map_err(malformed)?;
            meta.payload_offset = off(l4 + usize::from(seg.header_len()))?;
            Ok((seg.src_port(), seg.dst_port()))
        }
        Protocol::Icmp | Protocol::Icmpv6 => {
            if buf.len() < ICMP_MIN_LEN {
                return Err(DropReason::Malformed);
            }
            meta.payload_offset = off(l4 + ICMP_MIN_LEN)?;
            Ok((0, 0))
        }
        Protocol::Unknown(_) => Ok((0, 0)),
    }
}

/// Type, code and checksum: what every ICMP and ICMPv6 message has.
const ICMP_MIN_LEN: usize = 4;

/// Ports of a first IPv4 fragment, when it is long enough to hold them.
fn first_fragment_ports(buf: &[u8], proto: Protocol) -> (u16, u16) {
    match (proto, buf) {
        (Protocol::Udp | Protocol::Tcp, [s0, s1, d0, d1, ..]) => (
            u16::from_be_bytes([*s0, *s1]),
            u16::from_be_bytes([*d0, *d1]),
        ),
        _ => (0, 0),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::wire::bth::{BthRepr, Opcode};
    use crate::wire::icmpv6::Icmpv6Repr;
    use crate::wire::mac_control::MacControlRepr;
    use crate::wire::{
        ArpOperation, ArpRepr, EthernetRepr, Ipv4Repr, Ipv6Repr, MacAddr, UdpRepr, VlanRepr,
    };
    use proptest::prelude::*;
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

    const SRC_MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
    const DST_MAC: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);
    const H1: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
    const H2: Ipv4Addr = Ipv4Addr::new(10, 0, 1, 2);

    /// Writes Ethernet (and a tag when `tci` is given); returns the L3 offset.
    fn eth(buf: &mut [u8], ethertype: EtherType, tci: Option<u16>) -> usize {
        let outer = if tci.is_some() {
            EtherType::Vlan
        } else {
            ethertype
        };
        EthernetRepr {
            src_addr: SRC_MAC,
            dst_addr: DST_MAC,
            ethertype: outer,
        }
        .emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
        match tci {
            Some(tci) => {
                VlanRepr {
                    pcp: (tci >> 13) as u8,
                    dei: tci & 0x1000 != 0,
                    vid: tci & 0xfff,
                    ethertype,
                }
                .emit(&mut vlan::Packet::new_unchecked(&mut buf[14..]));
                18
            }
            None => 14,
        }
    }

    fn bth() -> BthRepr {
        BthRepr {
            opcode: Opcode::RcRdmaWriteOnly,
            solicited_event: false,
            migreq: true,
            pad_count: 0,
            tver: 0,
            pkey: 0xffff,
            fecn: false,
            becn: false,
            dest_qp: 0x00_0d2a,
            ack_req: true,
            psn: 0x12_3456,
        }
    }

    /// IPv4/UDP to `dport` with `payload`, padded to 60 bytes.
    fn udp_v4(
        tci: Option<u16>,
        dscp: u8,
        ecn: u8,
        sport: u16,
        dport: u16,
        payload: &[u8],
    ) -> Vec<u8> {
        let mut f = vec![0u8; 80 + payload.len()];
        let l3 = eth(&mut f, EtherType::Ipv4, tci);
        let udp_len = udp::HEADER_LEN + payload.len();
        Ipv4Repr {
            src_addr: H1,
            dst_addr: H2,
            protocol: Protocol::Udp,
            payload_len: udp_len as u16,
            ttl: 64,
            dscp,
            ecn,
        }
        .emit(&mut ipv4::Packet::new_unchecked(&mut f[l3..]));
        let l4 = l3 + 20;
        f[l4 + 8..l4 + udp_len].copy_from_slice(payload);
        UdpRepr {
            src_port: sport,
            dst_port: dport,
        }
        .emit(
            &mut udp::Packet::new_unchecked(&mut f[l4..]),
            &IpAddr::V4(H1),
            &IpAddr::V4(H2),
            payload.len(),
        );
        f.truncate((l4 + udp_len).max(60));
        f
    }

    /// The 64-byte-on-the-wire RoCEv2 frame: BTH and a 4-byte ICRC.
    fn roce_v4(tci: Option<u16>, dscp: u8, ecn: u8) -> Vec<u8> {
        let mut payload = [0u8; 16];
        bth().emit(&mut bth::Packet::new_unchecked(&mut payload[..]));
        udp_v4(tci, dscp, ecn, 49152, bth::ROCEV2_UDP_PORT, &payload)
    }

    fn v6(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    fn tcp_v6() -> Vec<u8> {
        let mut f = vec![0u8; 14 + 40 + 24 + 5];
        let l3 = eth(&mut f, EtherType::Ipv6, None);
        Ipv6Repr {
            src_addr: v6("fd00::1"),
            dst_addr: v6("fd00::2"),
            next_header: Protocol::Tcp,
            payload_len: 29,
            hop_limit: 63,
            dscp: 10,
            ecn: 1,
        }
        .emit(&mut ipv6::Packet::new_unchecked(&mut f[l3..]));
        let mut seg = tcp::Packet::new_unchecked(&mut f[l3 + 40..]);
        seg.set_src_port(40000);
        seg.set_dst_port(5201);
        seg.set_header_len(24);
        seg.set_flags(tcp::FLAG_ACK);
        seg.fill_checksum(&IpAddr::V6(v6("fd00::1")), &IpAddr::V6(v6("fd00::2")));
        f
    }

    fn parsed(frame: &[u8]) -> Meta {
        let mut m = Meta::default();
        parse(frame, &mut m).unwrap();
        m
    }

    fn fails(frame: &[u8]) -> bool {
        parse(frame, &mut Meta::default()) == Err(DropReason::Malformed)
    }

    #[test]
    fn rocev2_ipv4_dscp24_ecn2() {
        let f = roce_v4(None, 24, 2);
        assert_eq!(f.len(), 60);
        let m = parsed(&f);
        assert_eq!(m.kind, FrameKind::Ipv4);
        assert_eq!(m.vlan_tci, None);
        assert_eq!((m.l3_offset, m.l4_offset, m.payload_offset), (14, 34, 42));
        assert_eq!(m.l3_len, 20 + 8 + 16);
        assert_eq!(m.ip_proto, 17);
        assert_eq!((m.dscp, m.ecn, m.ttl), (24, 2, 64));
        assert_eq!((m.src_port, m.dst_port), (49152, 4791));
        assert!(!m.fragment);
        assert_eq!(
            m.roce,
            Some(Roce {
                opcode: 0x0a,
                dest_qp: 0x0d2a,
                psn: 0x12_3456
            })
        );
        // Byte-level spot checks of the frame the builders made.
        assert_eq!(&f[12..14], &[0x08, 0x00]);
        assert_eq!(f[15], (24 << 2) | 2);
        assert_eq!(&f[36..38], &[0x12, 0xb7]);
        assert_eq!(f[42], 0x0a);
    }

    #[test]
    fn tagged_pcp3() {
        let tci = (3 << 13) | 100;
        let f = roce_v4(Some(tci), 24, 2);
        assert_eq!(&f[12..16], &[0x81, 0x00, 0x60, 0x64]);
        let m = parsed(&f);
        assert_eq!(m.vlan_tci, Some(tci));
        assert_eq!(m.pcp(), Some(3));
        assert_eq!(m.kind, FrameKind::Ipv4);
        assert_eq!((m.l3_offset, m.l4_offset, m.payload_offset), (18, 38, 46));
        assert!(m.roce.is_some());
        // A tag cut short.
        assert!(fails(&f[..17]));
        // A second tag is not looked into.
        let mut q = f.clone();
        q[16..18].copy_from_slice(&[0x81, 0x00]);
        assert_eq!(parsed(&q).kind, FrameKind::Other(0x8100));
    }

    #[test]
    fn tcp_ipv6() {
        let f = tcp_v6();
        let m = parsed(&f);
        assert_eq!(m.kind, FrameKind::Ipv6);
        assert_eq!((m.l3_offset, m.l4_offset, m.payload_offset), (14, 54, 78));
        assert_eq!(m.l3_len, 40 + 29);
        assert_eq!(m.ip_proto, 6);
        assert_eq!((m.dscp, m.ecn, m.ttl), (10, 1, 63));
        assert_eq!((m.src_port, m.dst_port), (40000, 5201));
        assert_eq!(m.roce, None);
        // Data offset below 5, and past the payload.
        let mut b = f.clone();
        b[54 + 12] = 0x40;
        assert!(fails(&b));
        b[54 + 12] = 0xf0;
        assert!(fails(&b));
        // payload_len past the frame, and a wrong version.
        assert!(fails(&f[..f.len() - 1]));
        let mut b = f.clone();
        b[14] = 0x46;
        assert!(fails(&b));
    }

    #[test]
    fn icmpv6_neighbor_solicitation() {
        let (s, d) = (v6("fe80::1"), v6("ff02::1:ff00:2"));
        let ns = Icmpv6Repr::NeighborSolicit {
            target_addr: v6("fe80::2"),
            lladdr: Some(SRC_MAC),
        };
        let mut f = vec![0u8; 14 + 40 + ns.buffer_len()];
        let l3 = eth(&mut f, EtherType::Ipv6, None);
        Ipv6Repr {
            src_addr: s,
            dst_addr: d,
            next_header: Protocol::Icmpv6,
            payload_len: ns.buffer_len() as u16,
            hop_limit: 255,
            dscp: 0,
            ecn: 0,
        }
        .emit(&mut ipv6::Packet::new_unchecked(&mut f[l3..]));
        ns.emit(
            &mut crate::wire::icmpv6::Packet::new_unchecked(&mut f[l3 + 40..]),
            &s,
            &d,
        );
        let m = parsed(&f);
        assert_eq!(m.kind, FrameKind::Ipv6);
        assert_eq!((m.ip_proto, m.ttl, m.src_port, m.dst_port), (58, 255, 0, 0));
        assert_eq!(m.payload_offset, 54 + 4);
        // Unknown next header: classified, no transport checks.
        let mut b = f.clone();
        b[20] = 0; // hop-by-hop options
        let m = parsed(&b);
        assert_eq!((m.ip_proto, m.l4_offset, m.payload_offset), (0, 54, 54));
        // ICMPv6 of 3 bytes.
        let mut b = f[..14 + 40 + 3].to_vec();
        b[18..20].copy_from_slice(&3u16.to_be_bytes());
        assert!(fails(&b));
    }

    #[test]
    fn ipv4_checks() {
        let f = roce_v4(None, 24, 2);
        // Padding is fine; total_len past the frame is not.
        let mut padded = f.clone();
        padded.extend_from_slice(&[0; 10]);
        assert_eq!(parsed(&padded).l3_len, 44);
        assert!(fails(&f[..14 + 43]));
        // Bad checksum.
        let mut b = f.clone();
        b[14 + 10] ^= 1;
        assert!(fails(&b));
        // IHL 4.
        let mut b = f.clone();
        let mut ip = ipv4::Packet::new_unchecked(&mut b[14..]);
        ip.set_header_len(16);
        ip.fill_checksum();
        assert!(fails(&b));
        // Version 6 under EtherType IPv4 (with a correct checksum).
        let mut b = f.clone();
        let mut ip = ipv4::Packet::new_unchecked(&mut b[14..]);
        ip.set_version(6);
        ip.fill_checksum();
        assert!(fails(&b));
        // total_len below the header.
        let mut b = f.clone();
        let mut ip = ipv4::Packet::new_unchecked(&mut b[14..]);
        ip.set_total_len(19);
        ip.fill_checksum();
        assert!(fails(&b));
        // Options: IHL 6 with a NOP word, transport shifts by 4.
        let mut b = vec![0u8; 64];
        b[..34].copy_from_slice(&f[..34]);
        b[38..62].copy_from_slice(&f[34..58]);
        let mut ip = ipv4::Packet::new_unchecked(&mut b[14..]);
        ip.set_header_len(24);
        ip.set_total_len(48);
        ip.options_mut().copy_from_slice(&[1, 1, 1, 0]);
        ip.fill_checksum();
        let m = parsed(&b);
        assert_eq!((m.l4_offset, m.payload_offset, m.l3_len), (38, 46, 48));
        assert!(m.roce.is_some());
    }

    #[test]
    fn udp_and_roce_checks() {
        let f = roce_v4(None, 24, 2);
        let set_udp_len = |len: u16| {
            let mut b = f.clone();
            b[38..40].copy_from_slice(&len.to_be_bytes());
            b
        };
        assert!(fails(&set_udp_len(7)));
        assert!(fails(&set_udp_len(25))); // past l3_len
        assert!(parsed(&set_udp_len(20)).roce.is_some()); // BTH exactly
        assert!(fails(&set_udp_len(19))); // BTH cut
                                          // Not RoCE: no BTH needed.
        let plain = udp_v4(None, 0, 0, 1234, 53, &[]);
        let m = parsed(&plain);
        assert_eq!(m.roce, None);
        assert_eq!((m.src_port, m.dst_port, m.payload_offset), (1234, 53, 42));
        // RoCE with nothing after UDP.
        assert!(fails(&udp_v4(None, 24, 0, 1, 4791, &[])));
    }

    #[test]
    fn fragments() {
        let f = roce_v4(None, 0, 0);
        let frag = |mf: bool, offset: u16, udp_len: u16| {
            let mut b = f.clone();
            b[38..40].copy_from_slice(&udp_len.to_be_bytes());
            let mut ip = ipv4::Packet::new_unchecked(&mut b[14..]);
            ip.set_dont_frag(false);
            ip.set_more_frags(mf);
            ip.set_frag_offset(offset);
            ip.fill_checksum();
            b
        };
        // First fragment: ports read, the UDP length (whole datagram) not checked.
        let m = parsed(&frag(true, 0, 3000));
        assert!(m.fragment);
        assert_eq!((m.src_port, m.dst_port), (49152, 4791));
        assert_eq!((m.roce, m.payload_offset), (None, 34));
        // Later fragment: no ports.
        let m = parsed(&frag(false, 1480, 3000));
        assert!(m.fragment);
        assert_eq!((m.src_port, m.dst_port), (0, 0));
    }

    #[test]
    fn icmpv4() {
        let mut f = vec![0u8; 60];
        eth(&mut f, EtherType::Ipv4, None);
        Ipv4Repr {
            src_addr: H1,
            dst_addr: H2,
            protocol: Protocol::Icmp,
            payload_len: 8,
            ttl: 1,
            dscp: 0,
            ecn: 0,
        }
        .emit(&mut ipv4::Packet::new_unchecked(&mut f[14..]));
        f[34] = 8;
        let m = parsed(&f);
        assert_eq!((m.ip_proto, m.ttl, m.payload_offset), (1, 1, 38));
        let mut ip = ipv4::Packet::new_unchecked(&mut f[14..]);
        ip.set_total_len(23);
        ip.fill_checksum();
        assert!(fails(&f));
    }

    #[test]
    fn arp() {
        let mut f = vec![0u8; 60];
        eth(&mut f, EtherType::Arp, None);
        ArpRepr {
            operation: ArpOperation::Request,
            source_hw: SRC_MAC,
            source_ip: H1,
            target_hw: MacAddr::ZERO,
            target_ip: H2,
        }
        .emit(&mut arp::Packet::new_unchecked(&mut f[14..]));
        let m = parsed(&f);
        assert_eq!(m.kind, FrameKind::Arp);
        assert_eq!((m.l3_offset, m.l4_offset, m.payload_offset), (14, 14, 14));
        assert!(parsed(&f[..42]).kind == FrameKind::Arp);
        assert!(fails(&f[..41]));
    }

    #[test]
    fn mac_control_lldp_and_other() {
        let mut pfc = [0u8; 60];
        let mut quanta = [0; 8];
        quanta[3] = 0xffff;
        MacControlRepr::Pfc { enable: 8, quanta }.emit_frame(SRC_MAC, &mut pfc);
        assert_eq!(parsed(&pfc).kind, FrameKind::MacControl);
        assert_eq!(parsed(&pfc[..16]).kind, FrameKind::MacControl);
        assert!(fails(&pfc[..15]));

        let mut lldp = vec![0u8; 60];
        eth(&mut lldp, EtherType::Lldp, None);
        assert_eq!(parsed(&lldp).kind, FrameKind::Lldp);
        assert_eq!(parsed(&lldp[..14]).kind, FrameKind::Lldp);

        let mut other = vec![0u8; 60];
        eth(&mut other, EtherType::Unknown(0x88b5), None);
        let m = parsed(&other);
        assert_eq!(m.kind, FrameKind::Other(0x88b5));

        let mut tagged_lldp = vec![0u8; 60];
        eth(&mut tagged_lldp, EtherType::Lldp, Some(7 << 13));
        let m = parsed(&tagged_lldp);
        assert_eq!(
            (m.kind, m.pcp(), m.l3_offset),
            (FrameKind::Lldp, Some(7), 18)
        );
    }

    #[test]
    fn short_frames() {
        for n in 0..14 {
            assert!(fails(&[0u8; 14][..n]));
        }
        assert_eq!(parsed(&[0u8; 14]).kind, FrameKind::Other(0));
        assert!(fails(&roce_v4(None, 0, 0)[..33]));
    }

    #[test]
    fn meta_is_reset_between_frames() {
        let mut m = Meta {
            qos_group: 3,
            out_port: 7,
            ..Meta::default()
        };
        parse(&roce_v4(Some(3 << 13), 24, 2), &mut m).unwrap();
        assert!(m.roce.is_some() && m.vlan_tci.is_some());
        let mut lldp = vec![0u8; 60];
        eth(&mut lldp, EtherType::Lldp, None);
        parse(&lldp, &mut m).unwrap();
        assert_eq!(
            m,
            Meta {
                kind: FrameKind::Lldp,
                l3_offset: 14,
                l4_offset: 14,
                payload_offset: 14,
                qos_group: 3,
                out_port: 7,
                ..Meta::default()
            }
        );
    }

    /// Parses with the one-pass path and with the general one, from the
    /// same leftover metadata; the first's verdict and both results.
    fn both_ways(frame: &[u8]) -> (bool, Meta, Result<(), DropReason>, Meta) {
        let leftover = Meta {
            qos_group: 5,
            out_port: 9,
            lossless: true,
            pfc_priority: 5,
            hash: 77,
            roce: Some(Roce::default()),
            ..Meta::default()
        };
        let (mut fast, mut general) = (leftover, leftover);
        let taken = parse_plain_udp4(frame, &mut fast);
        let verdict = parse_any(frame, &mut general);
        (taken, fast, verdict, general)
    }

    #[test]
    fn plain_udp4_takes_the_one_pass_path_with_the_general_result() {
        let plain = udp_v4(None, 10, 1, 5000, 6000, &[1, 2, 3]);
        for frame in [roce_v4(None, 24, 2), roce_v4(None, 48, 0), plain] {
            let (taken, fast, verdict, general) = both_ways(&frame);
            assert!(taken);
            assert_eq!(verdict, Ok(()));
            assert_eq!(fast, general);
        }
        // Tagged, IPv6, options, fragments, TCP and a RoCEv2 datagram too
        // short for its BTH are the general parser's.
        let mut options = roce_v4(None, 24, 2);
        options[14] = 0x46;
        let mut fragment = roce_v4(None, 24, 2);
        fragment[20] |= 0x20;
        ipv4::Packet::new_unchecked(&mut fragment[14..]).fill_checksum();
        let short_bth = udp_v4(None, 24, 2, 49152, bth::ROCEV2_UDP_PORT, &[0; 8]);
        for frame in [
            roce_v4(Some(3 << 13), 24, 2),
            tcp_v6(),
            options,
            fragment,
            short_bth,
        ] {
            assert!(!both_ways(&frame).0);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The one-pass path only ever accepts what the general parser
        /// accepts, and then fills the metadata identically.
        #[test]
        fn one_pass_path_agrees_with_the_general_parser(
            roce in any::<bool>(),
            edits in proptest::collection::vec((0usize..64, any::<u8>()), 0..4),
            fix_checksum in any::<bool>(),
            len in 30usize..90,
        ) {
            let mut f = if roce {
                roce_v4(None, 24, 2)
            } else {
                udp_v4(None, 0, 0, 1234, 80, &[7; 9])
            };
            for (at, v) in edits {
                if let Some(b) = f.get_mut(at) { *b = v; }
            }
            f.resize(len, 0);
            if fix_checksum && f.len() >= 34 && f[14] & 0x0f == 5 {
                ipv4::Packet::new_unchecked(&mut f[14..34]).fill_checksum();
            }
            let (taken, fast, verdict, general) = both_ways(&f);
            if taken {
                prop_assert_eq!(verdict, Ok(()));
                prop_assert_eq!(fast, general);
            }
        }

        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut m = Meta::default();
            let _ = parse(&bytes, &mut m);
        }

        #[test]
        fn mutated_roce_never_panics(
            tagged in any::<bool>(),
            edits in proptest::collection::vec((0usize..80, any::<u8>()), 0..6),
            cut in 0usize..80,
        ) {
            let mut f = roce_v4(tagged.then_some(3 << 13), 24, 2);
            for (at, v) in edits {
                if let Some(b) = f.get_mut(at) { *b = v; }
            }
            f.truncate(cut.max(1));
            let mut m = Meta::default();
            if parse(&f, &mut m).is_ok() {
                let len = f.len();
                prop_assert!(usize::from(m.l3_offset) <= len);
                prop_assert!(m.l3_offset <= m.l4_offset && m.l4_offset <= m.payload_offset);
                if matches!(m.kind, FrameKind::Ipv4 | FrameKind::Ipv6) {
                    prop_assert!(usize::from(m.l3_offset) + usize::from(m.l3_len) <= len);
                    prop_assert!(m.payload_offset <= m.l3_offset + m.l3_len);
                }
            }
        }

        #[test]
        fn mutated_tcp_v6_never_panics(
            edits in proptest::collection::vec((0usize..84, any::<u8>()), 0..6),
            cut in 0usize..84,
        ) {
            let mut f = tcp_v6();
            for (at, v) in edits {
                if let Some(b) = f.get_mut(at) { *b = v; }
            }
            f.truncate(cut);
            let _ = parse(&f, &mut Meta::default());
        }
    }
}
