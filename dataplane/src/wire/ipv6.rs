//! The fixed IPv6 header (RFC 8200); extension headers are not walked.

use std::net::Ipv6Addr;

use super::ipv4::Protocol;
use super::{Result, WireError};

mod field {
    use crate::wire::Field;

    pub const VER_TC_FLOW: Field = 0..4;
    pub const LENGTH: Field = 4..6;
    pub const NXT_HDR: usize = 6;
    pub const HOP_LIMIT: usize = 7;
    pub const SRC_ADDR: Field = 8..24;
    pub const DST_ADDR: Field = 24..40;
}

/// Length of the fixed header.
pub const HEADER_LEN: usize = field::DST_ADDR.end;

/// Imbue a raw octet buffer with IPv6 header structure; the buffer starts at
/// the header and may run past the packet (Ethernet padding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking its length; accessors may then panic.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    ///
    /// # Errors
    /// As [`check_len`](Self::check_len).
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures no accessor can panic: the buffer holds the fixed header and
    /// the `payload_len` bytes it claims.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than either. The version is not
    /// checked here.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN || len < HEADER_LEN + usize::from(self.payload_len()) {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn word0(&self) -> u32 {
        let b = &self.buffer.as_ref()[field::VER_TC_FLOW];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    fn ipv6_at(&self, f: core::ops::Range<usize>) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.buffer.as_ref()[f]);
        Ipv6Addr::from(a)
    }

    /// IP version (6 for a well-formed packet).
    #[inline]
    pub fn version(&self) -> u8 {
        (self.word0() >> 28) as u8
    }

    /// Traffic class: DSCP in the top 6 bits, ECN in the low 2.
    #[inline]
    pub fn traffic_class(&self) -> u8 {
        (self.word0() >> 20) as u8
    }

    /// Differentiated services code point (0–63), what classification matches.
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.traffic_class() >> 2
    }

    /// ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.traffic_class() & 0x03
    }

    /// Flow label (20 bits).
    #[inline]
    pub fn flow_label(&self) -> u32 {
        self.word0() & 0x000f_ffff
    }

    /// Length of everything after the fixed header.
    #[inline]
    pub fn payload_len(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::LENGTH];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// The header after this one (transport protocol when there are no
    /// extension headers).
    #[inline]
    pub fn next_header(&self) -> Protocol {
        Protocol::from(self.buffer.as_ref()[field::NXT_HDR])
    }

    /// Hop limit.
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.buffer.as_ref()[field::HOP_LIMIT]
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> Ipv6Addr {
        self.ipv6_at(field::SRC_ADDR)
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> Ipv6Addr {
        self.ipv6_at(field::DST_ADDR)
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The `payload_len` bytes after the fixed header (padding excluded).
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        let end = HEADER_LEN + usize::from(self.payload_len());
        &self.buffer.as_ref()[HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_word0(&mut self, mask: u32, bits: u32) {
        let v = (self.word0() & !mask) | (bits & mask);
        self.buffer.as_mut()[field::VER_TC_FLOW].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the version; only the low 4 bits are used.
    #[inline]
    pub fn set_version(&mut self, v: u8) {
        self.set_word0(0xf000_0000, u32::from(v) << 28);
    }

    /// Sets the whole traffic class byte.
    #[inline]
    pub fn set_traffic_class(&mut self, v: u8) {
        self.set_word0(0x0ff0_0000, u32::from(v) << 20);
    }

    /// Sets the DSCP; only the low 6 bits are used.
    #[inline]
    pub fn set_dscp(&mut self, dscp: u8) {
        self.set_word0(0x0fc0_0000, u32::from(dscp) << 22);
    }

    /// Sets the ECN field; only the low 2 bits are used.
    #[inline]
    pub fn set_ecn(&mut self, ecn: u8) {
        self.set_word0(0x0030_0000, u32::from(ecn) << 20);
    }

    /// Sets the flow label; only the low 20 bits are used.
    #[inline]
    pub fn set_flow_label(&mut self, v: u32) {
        self.set_word0(0x000f_ffff, v);
    }

    /// Sets the payload length.
    #[inline]
    pub fn set_payload_len(&mut self, v: u16) {
        self.buffer.as_mut()[field::LENGTH].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the next header.
    #[inline]
    pub fn set_next_header(&mut self, v: Protocol) {
        self.buffer.as_mut()[field::NXT_HDR] = v.into();
    }

    /// Sets the hop limit.
    #[inline]
    pub fn set_hop_limit(&mut self, v: u8) {
        self.buffer.as_mut()[field::HOP_LIMIT] = v;
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src_addr(&mut self, v: Ipv6Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&v.octets());
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, v: Ipv6Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&v.octets());
    }

    /// The payload, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let end = HEADER_LEN + usize::from(self.payload_len());
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// The fixed IPv6 header as plain data, for packets the switch originates
/// (neighbour advertisements, echo replies, test traffic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6Repr {
    /// Source address.
    pub src_addr: Ipv6Addr,
    /// Destination address.
    pub dst_addr: Ipv6Addr,
    /// Next header.
    pub next_header: Protocol,
    /// Payload length in bytes.
    pub payload_len: u16,
    /// Hop limit.
    pub hop_limit: u8,
    /// DSCP (0–63).
    pub dscp: u8,
    /// ECN field (0–3).
    pub ecn: u8,
}

impl Ipv6Repr {
    /// Reads the fixed header.
    ///
    /// # Errors
    /// As [`Packet::check_len`]; `Malformed` when the version is not 6.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Ipv6Repr> {
        packet.check_len()?;
        if packet.version() != 6 {
            return Err(WireError::Malformed);
        }
        Ok(Ipv6Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            next_header: packet.next_header(),
            payload_len: packet.payload_len(),
            hop_limit: packet.hop_limit(),
            dscp: packet.dscp(),
            ecn: packet.ecn(),
        })
    }

    /// Bytes of header [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the 40-byte header (flow label 0); the payload is left as it is.
    ///
    /// # Panics
    /// When the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.buffer.as_mut()[field::VER_TC_FLOW].fill(0);
        packet.set_version(6);
        packet.set_dscp(self.dscp);
        packet.set_ecn(self.ecn);
        packet.set_payload_len(self.payload_len);
        packet.set_next_header(self.next_header);
        packet.set_hop_limit(self.hop_limit);
        packet.set_src_addr(self.src_addr);
        packet.set_dst_addr(self.dst_addr);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// fd00::1 -> fd00::2, TCP, DSCP 24 ECN 1, flow label 0x12345, hop limit 64,
    /// 2 payload bytes then 1 byte of padding.
    static PACKET_BYTES: [u8; 43] = [
        0x66, 0x11, 0x23, 0x45, 0x00, 0x02, 0x06, 0x40, // ver tc flow, len, nh, hl
        0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, // src
        0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, // dst
        0xab, 0xcd, // payload
        0x00, // padding
    ];

    fn addr(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.version(), 6);
        assert_eq!(p.traffic_class(), 0x61);
        assert_eq!((p.dscp(), p.ecn()), (24, 1));
        assert_eq!(p.flow_label(), 0x12345);
        assert_eq!(p.payload_len(), 2);
        assert_eq!(p.next_header(), Protocol::Tcp);
        assert_eq!(p.hop_limit(), 64);
        assert_eq!(p.src_addr(), addr("fd00::1"));
        assert_eq!(p.dst_addr(), addr("fd00::2"));
        assert_eq!(p.payload(), &[0xab, 0xcd]);
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 43];
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        p.set_version(6);
        p.set_traffic_class(0);
        p.set_dscp(24);
        p.set_ecn(1);
        p.set_flow_label(0x12345);
        p.set_payload_len(2);
        p.set_next_header(Protocol::Tcp);
        p.set_hop_limit(64);
        p.set_src_addr(addr("fd00::1"));
        p.set_dst_addr(addr("fd00::2"));
        p.payload_mut().copy_from_slice(&[0xab, 0xcd]);
        bytes[42] = 0;
        assert_eq!(bytes, PACKET_BYTES);
    }

    #[test]
    fn repr_parse_and_emit() {
        let r = Ipv6Repr::parse(&Packet::new_checked(&PACKET_BYTES[..]).unwrap()).unwrap();
        assert_eq!(
            r,
            Ipv6Repr {
                src_addr: addr("fd00::1"),
                dst_addr: addr("fd00::2"),
                next_header: Protocol::Tcp,
                payload_len: 2,
                hop_limit: 64,
                dscp: 24,
                ecn: 1,
            }
        );
        let mut bytes = [0xa5u8; 40];
        r.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        let mut want = [0u8; 40];
        want.copy_from_slice(&PACKET_BYTES[..40]);
        want[1] = 0x10; // flow label not carried by the Repr
        want[2] = 0;
        want[3] = 0;
        assert_eq!(bytes, want);
    }

    #[test]
    fn bad_lengths() {
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..39]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..41]),
            Err(WireError::Truncated)
        );
        let mut b = PACKET_BYTES;
        b[4] = 0xff; // payload_len far past the buffer
        assert_eq!(Packet::new_checked(&b[..]), Err(WireError::Truncated));
        b = PACKET_BYTES;
        b[0] = 0x46;
        assert_eq!(
            Ipv6Repr::parse(&Packet::new_unchecked(&b[..])),
            Err(WireError::Malformed)
        );
    }

    proptest! {
        #[test]
        fn repr_round_trip(src in any::<u128>(), dst in any::<u128>(), nh in any::<u8>(),
                           payload_len in 0u16..1500, hop_limit in any::<u8>(), dscp in 0u8..64, ecn in 0u8..4) {
            let r = Ipv6Repr {
                src_addr: Ipv6Addr::from(src),
                dst_addr: Ipv6Addr::from(dst),
                next_header: Protocol::from(nh),
                payload_len, hop_limit, dscp, ecn,
            };
            let mut buf = vec![0xa5u8; HEADER_LEN + usize::from(payload_len)];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            prop_assert_eq!(Ipv6Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
