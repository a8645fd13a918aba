//! Synthetic traffic: RoCEv2, CNP, UDP and TCP frames for the demo, the
//! tests and the benchmarks.
//!
//! Frames are built whole into a `Vec` — this is a generator, not the fast
//! path — with correct IPv4 header and UDP/TCP checksums so real receivers and
//! tshark accept them.

use std::net::IpAddr;

use railyard_dataplane::wire::checksum;
use railyard_dataplane::wire::MacAddr;

/// UDP destination port of RoCEv2.
pub const ROCEV2_PORT: u16 = 4791;
/// BTH opcode of RC RDMA WRITE Only.
pub const BTH_RC_WRITE_ONLY: u8 = 0x0A;
/// BTH opcode of a congestion notification packet.
pub const BTH_CNP: u8 = 0x81;

/// The transport of a generated frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// UDP with the given payload bytes.
    Udp,
    /// TCP (a bare ACK-carrying segment with payload).
    Tcp,
    /// RoCEv2: UDP 4791, a BTH, payload and a 4-byte ICRC.
    Roce {
        /// BTH opcode.
        opcode: u8,
        /// Destination queue pair.
        dest_qp: u32,
        /// Packet sequence number.
        psn: u32,
    },
}

/// Everything that distinguishes one generated frame from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpec {
    /// Ethernet source.
    pub src_mac: MacAddr,
    /// Ethernet destination (the switch port's MAC for routed traffic).
    pub dst_mac: MacAddr,
    /// IP source.
    pub src_ip: IpAddr,
    /// IP destination (same family as the source).
    pub dst_ip: IpAddr,
    /// DSCP (0–63).
    pub dscp: u8,
    /// ECN bits (0–3).
    pub ecn: u8,
    /// TTL or hop limit.
    pub ttl: u8,
    /// Transport source port.
    pub src_port: u16,
    /// Transport destination port (ignored for RoCEv2, which uses 4791).
    pub dst_port: u16,
    /// Transport.
    pub transport: Transport,
    /// Total frame length wanted (without FCS); at least the headers.
    pub frame_len: usize,
    /// 802.1Q TCI to tag the frame with.
    pub vlan_tci: Option<u16>,
}

impl FrameSpec {
    /// A 64-byte-class UDP frame with TTL 64 and no DSCP.
    pub fn udp(src_mac: MacAddr, dst_mac: MacAddr, src_ip: IpAddr, dst_ip: IpAddr) -> Self {
        FrameSpec {
            src_mac,
            dst_mac,
            src_ip,
            dst_ip,
            dscp: 0,
            ecn: 0,
            ttl: 64,
            src_port: 10000,
            dst_port: 20000,
            transport: Transport::Udp,
            frame_len: 60,
            vlan_tci: None,
        }
    }
}

/// Builds the frame `spec` describes; the payload is `seq` as 8 big-endian
/// bytes followed by zeros, so receivers can check order and loss.
pub fn build(spec: &FrameSpec, seq: u64) -> Vec<u8> {
    let l2 = if spec.vlan_tci.is_some() { 18 } else { 14 };
    let l3 = match spec.dst_ip {
        IpAddr::V4(_) => 20,
        IpAddr::V6(_) => 40,
    };
    let l4 = match spec.transport {
        Transport::Udp => 8,
        Transport::Tcp => 20,
        Transport::Roce { .. } => 8 + 12,
    };
    let trailer = if matches!(spec.transport, Transport::Roce { .. }) {
        4
    } else {
        0
    };
    let min = l2 + l3 + l4 + 8 + trailer;
    let total = spec.frame_len.max(min);
    let mut f = vec![0u8; total];
    f[0..6].copy_from_slice(&spec.dst_mac.0);
    f[6..12].copy_from_slice(&spec.src_mac.0);
    let et_off = if let Some(tci) = spec.vlan_tci {
        f[12..14].copy_from_slice(&0x8100u16.to_be_bytes());
        f[14..16].copy_from_slice(&tci.to_be_bytes());
        16
    } else {
        12
    };
    let ip_len = total - l2;
    let l4_len = ip_len - l3;
    let proto = if spec.transport == Transport::Tcp {
        6
    } else {
        17
    };
    let tos = (spec.dscp << 2) | (spec.ecn & 3);
    match (spec.src_ip, spec.dst_ip) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            f[et_off..et_off + 2].copy_from_slice(&0x0800u16.to_be_bytes());
            let h = &mut f[l2..l2 + 20];
            h[0] = 0x45;
            h[1] = tos;
            h[2..4].copy_from_slice(&(ip_len as u16).to_be_bytes());
            h[4..6].copy_from_slice(&(seq as u16).to_be_bytes());
            h[6] = 0x40; // don't fragment
            h[8] = spec.ttl;
            h[9] = proto;
            h[12..16].copy_from_slice(&s.octets());
            h[16..20].copy_from_slice(&d.octets());
            let c = !checksum::data(h);
            h[10..12].copy_from_slice(&c.to_be_bytes());
        }
        (s, d) => {
            let (s, d) = match (s, d) {
                (IpAddr::V6(s), IpAddr::V6(d)) => (s, d),
                (s, d) => (to_v6(s), to_v6(d)),
            };
            f[et_off..et_off + 2].copy_from_slice(&0x86DDu16.to_be_bytes());
            let h = &mut f[l2..l2 + 40];
            let vtc: u32 = (6 << 28) | (u32::from(tos) << 20);
            h[0..4].copy_from_slice(&vtc.to_be_bytes());
            h[4..6].copy_from_slice(&(l4_len as u16).to_be_bytes());
            h[6] = proto;
            h[7] = spec.ttl;
            h[8..24].copy_from_slice(&s.octets());
            h[24..40].copy_from_slice(&d.octets());
        }
    }
    let t = l2 + l3;
    let dst_port = match spec.transport {
        Transport::Roce { .. } => ROCEV2_PORT,
        _ => spec.dst_port,
    };
    f[t..t + 2].copy_from_slice(&spec.src_port.to_be_bytes());
    f[t + 2..t + 4].copy_from_slice(&dst_port.to_be_bytes());
    let payload_at = match spec.transport {
        Transport::Udp => {
            f[t + 4..t + 6].copy_from_slice(&(l4_len as u16).to_be_bytes());
            t + 8
        }
        Transport::Tcp => {
            f[t + 4..t + 8].copy_from_slice(&(seq as u32).to_be_bytes());
            f[t + 12] = 5 << 4;
            f[t + 13] = 0x10; // ACK
            f[t + 14..t + 16].copy_from_slice(&0xffffu16.to_be_bytes());
            t + 20
        }
        Transport::Roce {
            opcode,
            dest_qp,
            psn,
        } => {
            f[t + 4..t + 6].copy_from_slice(&(l4_len as u16).to_be_bytes());
            let b = &mut f[t + 8..t + 20];
            b[0] = opcode;
            b[2..4].copy_from_slice(&0xffffu16.to_be_bytes()); // default P_Key
            b[4..8].copy_from_slice(&(dest_qp & 0x00ff_ffff).to_be_bytes());
            b[8..12].copy_from_slice(&(psn & 0x00ff_ffff).to_be_bytes());
            t + 20
        }
    };
    f[payload_at..payload_at + 8].copy_from_slice(&seq.to_be_bytes());
    // Transport checksum: required for TCP and for UDP over IPv6; RoCEv2
    // over IPv4 leaves it 0 as NICs do.
    let ck_off = match spec.transport {
        Transport::Tcp => Some(t + 16),
        Transport::Udp => Some(t + 6),
        Transport::Roce { .. } if spec.dst_ip.is_ipv6() => Some(t + 6),
        Transport::Roce { .. } => None,
    };
    if let Some(off) = ck_off {
        let pseudo = checksum::pseudo_header(&spec.src_ip, &spec.dst_ip, proto, l4_len as u32);
        let body = checksum::data(&f[t..t + l4_len]);
        let mut c = !checksum::combine(&[pseudo, body]);
        if c == 0 && proto == 17 {
            c = 0xffff;
        }
        f[off..off + 2].copy_from_slice(&c.to_be_bytes());
    }
    f
}

fn to_v6(a: IpAddr) -> std::net::Ipv6Addr {
    match a {
        IpAddr::V4(a) => a.to_ipv6_mapped(),
        IpAddr::V6(a) => a,
    }
}

/// An ARP request from `sender` asking who has `target`.
pub fn arp_request(
    sender_mac: MacAddr,
    sender_ip: std::net::Ipv4Addr,
    target: std::net::Ipv4Addr,
) -> Vec<u8> {
    let mut f = vec![0u8; 60];
    f[0..6].copy_from_slice(&MacAddr::BROADCAST.0);
    f[6..12].copy_from_slice(&sender_mac.0);
    f[12..14].copy_from_slice(&0x0806u16.to_be_bytes());
    let a = &mut f[14..42];
    a[0..2].copy_from_slice(&1u16.to_be_bytes()); // Ethernet
    a[2..4].copy_from_slice(&0x0800u16.to_be_bytes());
    a[4] = 6;
    a[5] = 4;
    a[6..8].copy_from_slice(&1u16.to_be_bytes()); // request
    a[8..14].copy_from_slice(&sender_mac.0);
    a[14..18].copy_from_slice(&sender_ip.octets());
    a[24..28].copy_from_slice(&target.octets());
    f
}

/// An ICMP (IPv4) or ICMPv6 echo request with the addressing of `spec`.
pub fn icmp_echo(spec: &FrameSpec, ident: u16, seq: u16) -> Vec<u8> {
    // Build as UDP for the headers, then turn the transport into ICMP.
    let mut s = *spec;
    s.frame_len = s.frame_len.max(74);
    let mut f = build(&s, 0);
    let l2 = if s.vlan_tci.is_some() { 18 } else { 14 };
    let (t, proto, echo) = match s.dst_ip {
        IpAddr::V4(_) => (l2 + 20, 1u8, 8u8),
        IpAddr::V6(_) => (l2 + 40, 58u8, 128u8),
    };
    let l4_len = f.len() - t;
    for b in &mut f[t..] {
        *b = 0;
    }
    f[t] = echo;
    f[t + 4..t + 6].copy_from_slice(&ident.to_be_bytes());
    f[t + 6..t + 8].copy_from_slice(&seq.to_be_bytes());
    match s.dst_ip {
        IpAddr::V4(_) => {
            f[l2 + 9] = proto;
            f[l2 + 10..l2 + 12].copy_from_slice(&[0, 0]);
            let c = !checksum::data(&f[l2..l2 + 20]);
            f[l2 + 10..l2 + 12].copy_from_slice(&c.to_be_bytes());
            let c = !checksum::data(&f[t..]);
            f[t + 2..t + 4].copy_from_slice(&c.to_be_bytes());
        }
        IpAddr::V6(_) => {
            f[l2 + 6] = proto;
            let pseudo = checksum::pseudo_header(&s.src_ip, &s.dst_ip, proto, l4_len as u32);
            let c = !checksum::combine(&[pseudo, checksum::data(&f[t..])]);
            f[t + 2..t + 4].copy_from_slice(&c.to_be_bytes());
        }
    }
    f
}
