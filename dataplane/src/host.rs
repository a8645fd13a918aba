//! The switch's own addresses: ARP, IPv6 neighbour discovery and echo.
//!
//! Answers are built by rewriting the received frame in place — its buffer
//! is already in hand and large enough — so answering allocates nothing.
//! Resolution requests for next hops are built into a fresh pool buffer.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use crate::counters::PfcCounters;
use crate::meta::Meta;
use crate::model::InterfaceModel;
use crate::packet::PacketBuf;
use crate::wire::arp::{self, Operation};
use crate::wire::checksum;
use crate::wire::MacAddr;
use crate::wire::{ethernet, icmpv6, ipv6, Icmpv6Repr, IpProtocol, Ipv6Repr, NaFlags};

/// Hop limit of neighbour discovery messages (RFC 4861 requires 255).
const ND_HOP_LIMIT: u8 = 255;
/// TTL / hop limit of echo replies.
const REPLY_TTL: u8 = 64;

/// What handling an ARP frame produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ArpOutcome {
    /// The frame was rewritten into a reply to send back out of the port.
    pub reply: bool,
    /// A neighbour to learn from the frame's sender.
    pub learned: Option<(Ipv4Addr, MacAddr)>,
}

/// What handling an IP packet addressed to the switch produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LocalOutcome {
    /// The frame was rewritten into a reply to send back out of the port.
    pub reply: bool,
    /// The switch used the packet (e.g. a neighbour advertisement) without replying.
    pub consumed: bool,
    /// A neighbour to learn.
    pub learned: Option<(IpAddr, MacAddr)>,
}

fn in_prefix_v4(net: Ipv4Addr, len: u8, a: Ipv4Addr) -> bool {
    let mask = u32::MAX
        .checked_shl(32 - u32::from(len.min(32)))
        .unwrap_or(0);
    u32::from(net) & mask == u32::from(a) & mask
}

fn in_prefix_v6(net: Ipv6Addr, len: u8, a: Ipv6Addr) -> bool {
    let mask = u128::MAX
        .checked_shl(128 - u32::from(len.min(128)))
        .unwrap_or(0);
    u128::from(net) & mask == u128::from(a) & mask
}

fn on_link_v4(ifc: &InterfaceModel, a: Ipv4Addr) -> bool {
    ifc.ipv4
        .iter()
        .any(|(net, len)| in_prefix_v4(*net, *len, a))
}

fn on_link_v6(ifc: &InterfaceModel, a: Ipv6Addr) -> bool {
    ifc.ipv6
        .iter()
        .any(|(net, len)| in_prefix_v6(*net, *len, a))
        || a.segments()[0] & 0xffc0 == 0xfe80
}

/// Answers ARP requests for the interface's addresses and learns senders
/// that are on-link and talking to the switch.
pub fn handle_arp(pkt: &mut PacketBuf, ifc: &InterfaceModel) -> ArpOutcome {
    let l3 = pkt.meta.l3_offset as usize;
    let mut out = ArpOutcome::default();
    let data = pkt.data_mut();
    let Some(body) = data.get_mut(l3..) else {
        return out;
    };
    let Ok(mut a) = arp::Packet::new_checked(body) else {
        return out;
    };
    if a.hardware_type() != arp::HTYPE_ETHERNET || a.hardware_len() != 6 || a.protocol_len() != 4 {
        return out;
    }
    let (sha, spa, tpa) = (a.source_hw(), a.source_ip(), a.target_ip());
    let for_us = ifc.ipv4.iter().any(|(mine, _)| *mine == tpa);
    if for_us && on_link_v4(ifc, spa) && !sha.is_multicast() && !spa.is_unspecified() {
        out.learned = Some((spa, sha));
    }
    if for_us && a.operation() == Operation::Request {
        a.set_operation(Operation::Reply);
        a.set_target_hw(sha);
        a.set_target_ip(spa);
        a.set_source_hw(ifc.mac);
        a.set_source_ip(tpa);
        data[0..6].copy_from_slice(&sha.0);
        data[6..12].copy_from_slice(&ifc.mac.0);
        out.reply = true;
    }
    out
}

/// Handles an IP packet for the switch: echo requests, neighbour
/// solicitations and advertisements.
pub fn handle_ip(pkt: &mut PacketBuf, ifc: &InterfaceModel) -> LocalOutcome {
    let meta = pkt.meta;
    match meta.kind {
        crate::meta::FrameKind::Ipv4 => echo_v4(pkt, ifc, &meta),
        crate::meta::FrameKind::Ipv6 if meta.ip_proto == 58 => icmpv6(pkt, ifc, &meta),
        _ => LocalOutcome::default(),
    }
}

fn swap_macs(d: &mut [u8], mine: MacAddr) {
    let mut src = [0u8; 6];
    src.copy_from_slice(&d[6..12]);
    d[0..6].copy_from_slice(&src);
    d[6..12].copy_from_slice(&mine.0);
}

fn echo_v4(pkt: &mut PacketBuf, ifc: &InterfaceModel, m: &Meta) -> LocalOutcome {
    let (l3, l4) = (m.l3_offset as usize, m.l4_offset as usize);
    let end = l3 + m.l3_len as usize;
    if m.ip_proto != 1 || m.fragment || end < l4 + 8 {
        return LocalOutcome::default();
    }
    let d = pkt.data_mut();
    if d[l4] != 8 || checksum::data(&d[l4..end]) != 0xffff {
        return LocalOutcome::default();
    }
    d[l4] = 0;
    let ck = u16::from_be_bytes([d[l4 + 2], d[l4 + 3]]);
    let ck = checksum::update16(ck, 0x0800, 0x0000);
    d[l4 + 2..l4 + 4].copy_from_slice(&ck.to_be_bytes());
    let mut src = [0u8; 4];
    src.copy_from_slice(&d[l3 + 12..l3 + 16]);
    d.copy_within(l3 + 16..l3 + 20, l3 + 12);
    d[l3 + 16..l3 + 20].copy_from_slice(&src);
    d[l3 + 8] = REPLY_TTL;
    d[l3 + 10..l3 + 12].copy_from_slice(&[0, 0]);
    let ck = !checksum::data(&d[l3..l4]);
    d[l3 + 10..l3 + 12].copy_from_slice(&ck.to_be_bytes());
    swap_macs(d, ifc.mac);
    LocalOutcome {
        reply: true,
        ..LocalOutcome::default()
    }
}

fn v6_at(d: &[u8], off: usize) -> Ipv6Addr {
    let mut o = [0u8; 16];
    o.copy_from_slice(&d[off..off + 16]);
    Ipv6Addr::from(o)
}

/// The link-layer address option of type `want` (1 source, 2 target) in ND options.
fn lla_option(opts: &[u8], want: u8) -> Option<MacAddr> {
    let mut i = 0;
    while i + 2 <= opts.len() {
        let (ty, len) = (opts[i], opts[i + 1] as usize * 8);
        if len == 0 || i + len > opts.len() {
            return None;
        }
        if ty == want && len >= 8 {
            return Some(MacAddr::from_bytes(&opts[i + 2..i + 8]));
        }
        i += len;
    }
    None
}

fn icmpv6_checksum(d: &[u8], l3: usize, l4: usize, end: usize) -> u16 {
    let src = IpAddr::V6(v6_at(d, l3 + 8));
    let dst = IpAddr::V6(v6_at(d, l3 + 24));
    let pseudo = checksum::pseudo_header(&src, &dst, 58, (end - l4) as u32);
    checksum::combine(&[pseudo, checksum::data(&d[l4..end])])
}

fn icmpv6(pkt: &mut PacketBuf, ifc: &InterfaceModel, m: &Meta) -> LocalOutcome {
    let (l3, l4) = (m.l3_offset as usize, m.l4_offset as usize);
    let end = l3 + m.l3_len as usize;
    let mut out = LocalOutcome::default();
    if end < l4 + 8 {
        return out;
    }
    if icmpv6_checksum(pkt.data(), l3, l4, end) != 0xffff {
        return out;
    }
    let d = pkt.data();
    let (ty, src, dst) = (d[l4], v6_at(d, l3 + 8), v6_at(d, l3 + 24));
    let mine = |a: Ipv6Addr| ifc.ipv6.iter().any(|(x, _)| *x == a);
    match ty {
        // Echo request to one of our addresses.
        128 if mine(dst) => {
            let d = pkt.data_mut();
            d[l4] = 129;
            let ck = u16::from_be_bytes([d[l4 + 2], d[l4 + 3]]);
            let ck = checksum::update16(ck, 0x8000, 0x8100);
            d[l4 + 2..l4 + 4].copy_from_slice(&ck.to_be_bytes());
            d[l3 + 8..l3 + 24].copy_from_slice(&dst.octets());
            d[l3 + 24..l3 + 40].copy_from_slice(&src.octets());
            d[l3 + 7] = REPLY_TTL;
            swap_macs(d, ifc.mac);
            out.reply = true;
        }
        // Neighbour solicitation.
        135 if end >= l4 + 24 && d[l3 + 7] == ND_HOP_LIMIT => {
            let target = v6_at(d, l4 + 8);
            if !mine(target) {
                return out;
            }
            let slla = lla_option(&d[l4 + 24..end], 1);
            let (reply_to, reply_mac) = if src.is_unspecified() {
                (
                    Ipv6Addr::new(0xff02, 0, 0, 0, 0, 0, 0, 1),
                    MacAddr([0x33, 0x33, 0, 0, 0, 1]),
                )
            } else {
                match slla {
                    Some(mac) => {
                        if on_link_v6(ifc, src) {
                            out.learned = Some((IpAddr::V6(src), mac));
                        }
                        (src, mac)
                    }
                    None => (src, MacAddr::from_bytes(&d[6..12])),
                }
            };
            write_na(
                pkt,
                ifc.mac,
                target,
                reply_to,
                reply_mac,
                !src.is_unspecified(),
            );
            out.reply = true;
        }
        // Neighbour advertisement: learn the target's MAC.
        136 if end >= l4 + 24 && d[l3 + 7] == ND_HOP_LIMIT => {
            let target = v6_at(d, l4 + 8);
            if let Some(mac) = lla_option(&d[l4 + 24..end], 2) {
                if on_link_v6(ifc, target) {
                    out.learned = Some((IpAddr::V6(target), mac));
                }
            }
            out.consumed = true;
        }
        _ => {}
    }
    out
}

/// Rewrites the frame into a neighbour advertisement for `target` (router,
/// override, and solicited when answering a unicast-sourced solicitation).
fn write_na(
    pkt: &mut PacketBuf,
    mac: MacAddr,
    target: Ipv6Addr,
    to: Ipv6Addr,
    to_mac: MacAddr,
    solicited: bool,
) {
    let l3 = pkt.meta.l3_offset as usize;
    let mut flags = NaFlags::ROUTER | NaFlags::OVERRIDE;
    if solicited {
        flags = flags | NaFlags::SOLICITED;
    }
    let na = Icmpv6Repr::NeighborAdvert {
        flags,
        target_addr: target,
        lladdr: Some(mac),
    };
    let end = l3 + ipv6::HEADER_LEN + na.buffer_len();
    if pkt.capacity() < end.max(60) {
        return;
    }
    pkt.set_len(end.max(60));
    let d = pkt.data_mut();
    d[0..6].copy_from_slice(&to_mac.0);
    d[6..12].copy_from_slice(&mac.0);
    emit_nd(&mut d[l3..], target, to, &na);
    pkt.meta.l3_len = (end - l3) as u16;
}

/// Writes an IPv6 neighbour-discovery message from `src` to `dst` (header,
/// hop limit 255, message with its checksum) at the start of `l3`.
fn emit_nd(l3: &mut [u8], src: Ipv6Addr, dst: Ipv6Addr, msg: &Icmpv6Repr) {
    let ip = Ipv6Repr {
        src_addr: src,
        dst_addr: dst,
        next_header: IpProtocol::Icmpv6,
        payload_len: msg.buffer_len() as u16,
        hop_limit: ND_HOP_LIMIT,
        dscp: 0,
        ecn: 0,
    };
    let (head, body) = l3.split_at_mut(ipv6::HEADER_LEN);
    ip.emit(&mut ipv6::Packet::new_unchecked(head));
    msg.emit(&mut icmpv6::Packet::new_unchecked(body), &src, &dst);
}

/// Builds into `pkt` an ARP request or neighbour solicitation asking for
/// `addr` on interface `ifc`, from the interface address on the same subnet.
/// Returns false when the interface has no address of that family.
pub fn build_resolution(pkt: &mut PacketBuf, ifc: &InterfaceModel, addr: IpAddr) -> bool {
    pkt.reset();
    match addr {
        IpAddr::V4(target) => {
            let Some(src) = ifc
                .ipv4
                .iter()
                .find(|(net, len)| in_prefix_v4(*net, *len, target))
                .or(ifc.ipv4.first())
                .map(|(a, _)| *a)
            else {
                return false;
            };
            pkt.set_len(60);
            let d = pkt.data_mut();
            d.fill(0);
            d[0..6].copy_from_slice(&MacAddr::BROADCAST.0);
            d[6..12].copy_from_slice(&ifc.mac.0);
            d[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
            let mut a = arp::Packet::new_unchecked(&mut d[14..42]);
            a.set_hardware_type(arp::HTYPE_ETHERNET);
            a.set_protocol_type(crate::wire::EtherType::Ipv4);
            a.set_hardware_len(6);
            a.set_protocol_len(4);
            a.set_operation(Operation::Request);
            a.set_source_hw(ifc.mac);
            a.set_source_ip(src);
            a.set_target_hw(MacAddr::ZERO);
            a.set_target_ip(target);
            true
        }
        IpAddr::V6(target) => {
            let Some(src) = ifc
                .ipv6
                .iter()
                .find(|(net, len)| in_prefix_v6(*net, *len, target))
                .or(ifc.ipv6.first())
                .map(|(a, _)| *a)
            else {
                return false;
            };
            let t = target.octets();
            let group = Ipv6Addr::new(
                0xff02,
                0,
                0,
                0,
                0,
                1,
                0xff00 | u16::from(t[13]),
                u16::from_be_bytes([t[14], t[15]]),
            );
            let ns = Icmpv6Repr::NeighborSolicit {
                target_addr: target,
                lladdr: Some(ifc.mac),
            };
            let end = ethernet::HEADER_LEN + ipv6::HEADER_LEN + ns.buffer_len();
            pkt.set_len(end);
            let d = pkt.data_mut();
            d.fill(0);
            d[0..6].copy_from_slice(&[0x33, 0x33, 0xff, t[13], t[14], t[15]]);
            d[6..12].copy_from_slice(&ifc.mac.0);
            d[12..14].copy_from_slice(&0x86DDu16.to_be_bytes());
            emit_nd(&mut d[ethernet::HEADER_LEN..], src, group, &ns);
            true
        }
    }
}

/// Counts a received PFC frame per priority (pause when the quanta are
/// non-zero, resume when zero). Acting on it is the PFC stage's job.
pub fn count_mac_control(frame: &[u8], pfc: &mut PfcCounters) {
    if frame.len() < 34 || frame[14..16] != [0x01, 0x01] {
        return;
    }
    let enable = frame[17];
    for p in 0..8 {
        if enable & (1 << p) != 0 {
            let q = u16::from_be_bytes([frame[18 + 2 * p], frame[19 + 2 * p]]);
            if q == 0 {
                pfc.rx_resume[p] += 1;
            } else {
                pfc.rx_pause[p] += 1;
            }
        }
    }
}
