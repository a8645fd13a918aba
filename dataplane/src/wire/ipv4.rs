//! IPv4 headers (RFC 791), options included, with the DSCP/ECN byte of RFC 2474/3168.

use std::net::Ipv4Addr;

use super::checksum;
use super::{Result, WireError};

enum_with_unknown! {
    /// IPv4 protocol / IPv6 next header number, which picks the transport parser.
    pub enum Protocol(u8) {
        /// ICMP for IPv4 (1).
        Icmp = 1,
        /// TCP (6).
        Tcp = 6,
        /// UDP (17), which carries RoCEv2.
        Udp = 17,
        /// ICMP for IPv6 (58).
        Icmpv6 = 58,
    }
}

mod field {
    use crate::wire::Field;

    pub const VER_IHL: usize = 0;
    pub const DSCP_ECN: usize = 1;
    pub const LENGTH: Field = 2..4;
    pub const IDENT: Field = 4..6;
    pub const FLG_OFF: Field = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Field = 10..12;
    pub const SRC_ADDR: Field = 12..16;
    pub const DST_ADDR: Field = 16..20;
}

/// Length of a header without options (IHL 5).
pub const HEADER_LEN: usize = field::DST_ADDR.end;

const FLAG_DF: u16 = 0x4000;
const FLAG_MF: u16 = 0x2000;
const OFFSET_MASK: u16 = 0x1fff;

/// Imbue a raw octet buffer with IPv4 header structure; the buffer starts at
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

    /// Ensures no accessor can panic: the buffer holds the fixed header, the
    /// options the IHL claims and the `total_len` bytes the header claims.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than the header or the total
    /// length; `Malformed` when IHL < 5 or the total length is shorter than
    /// the header. The version is not checked here.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let header_len = usize::from(self.header_len());
        if header_len < HEADER_LEN {
            return Err(WireError::Malformed);
        }
        if len < header_len {
            return Err(WireError::Truncated);
        }
        let total_len = usize::from(self.total_len());
        if total_len < header_len {
            return Err(WireError::Malformed);
        }
        if len < total_len {
            return Err(WireError::Truncated);
        }
        Ok(())
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, f: core::ops::Range<usize>) -> u16 {
        let b = &self.buffer.as_ref()[f];
        u16::from_be_bytes([b[0], b[1]])
    }

    fn ipv4_at(&self, f: core::ops::Range<usize>) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[f];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// IP version (4 for a well-formed packet).
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VER_IHL] >> 4
    }

    /// Header length in bytes (IHL × 4), options included.
    #[inline]
    pub fn header_len(&self) -> u8 {
        (self.buffer.as_ref()[field::VER_IHL] & 0x0f) * 4
    }

    /// Differentiated services code point (0–63), what classification matches.
    #[inline]
    pub fn dscp(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] >> 2
    }

    /// ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    #[inline]
    pub fn ecn(&self) -> u8 {
        self.buffer.as_ref()[field::DSCP_ECN] & 0x03
    }

    /// Length of the packet, header included.
    #[inline]
    pub fn total_len(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }

    /// Identification, shared by the fragments of one datagram.
    #[inline]
    pub fn ident(&self) -> u16 {
        self.u16_at(field::IDENT)
    }

    /// Don't Fragment flag.
    #[inline]
    pub fn dont_frag(&self) -> bool {
        self.u16_at(field::FLG_OFF) & FLAG_DF != 0
    }

    /// More Fragments flag.
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.u16_at(field::FLG_OFF) & FLAG_MF != 0
    }

    /// Fragment offset in bytes (the field × 8).
    #[inline]
    pub fn frag_offset(&self) -> u16 {
        (self.u16_at(field::FLG_OFF) & OFFSET_MASK) << 3
    }

    /// True for any fragment (first included): MF set or a non-zero offset.
    #[inline]
    pub fn is_fragment(&self) -> bool {
        self.u16_at(field::FLG_OFF) & (FLAG_MF | OFFSET_MASK) != 0
    }

    /// Time to live.
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.buffer.as_ref()[field::TTL]
    }

    /// Transport protocol.
    #[inline]
    pub fn protocol(&self) -> Protocol {
        Protocol::from(self.buffer.as_ref()[field::PROTOCOL])
    }

    /// Header checksum as received.
    #[inline]
    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }

    /// Source address.
    #[inline]
    pub fn src_addr(&self) -> Ipv4Addr {
        self.ipv4_at(field::SRC_ADDR)
    }

    /// Destination address.
    #[inline]
    pub fn dst_addr(&self) -> Ipv4Addr {
        self.ipv4_at(field::DST_ADDR)
    }

    /// True when the header checksum is correct.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        let hl = usize::from(self.header_len());
        let b = self.buffer.as_ref();
        match b.first_chunk::<HEADER_LEN>() {
            // Almost every header has no options: five word loads, no loop.
            Some(fixed) if hl == HEADER_LEN => checksum::verifies_20(fixed),
            _ => checksum::data(&b[..hl]) == 0xffff,
        }
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// Option bytes between the fixed header and the payload.
    #[inline]
    pub fn options(&self) -> &'a [u8] {
        let hl = usize::from(self.header_len());
        &self.buffer.as_ref()[HEADER_LEN..hl]
    }

    /// The payload, up to `total_len` (Ethernet padding excluded).
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        let hl = usize::from(self.header_len());
        let tl = usize::from(self.total_len());
        &self.buffer.as_ref()[hl..tl]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, f: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    fn set_flg_off(&mut self, mask: u16, bits: u16) {
        let v = (self.u16_at(field::FLG_OFF) & !mask) | (bits & mask);
        self.set_u16_at(field::FLG_OFF, v);
    }

    /// Sets the version; only the low 4 bits are used.
    #[inline]
    pub fn set_version(&mut self, v: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0x0f) | (v << 4);
    }

    /// Sets the header length in bytes; it must be a multiple of 4 up to 60.
    #[inline]
    pub fn set_header_len(&mut self, len: u8) {
        let b = &mut self.buffer.as_mut()[field::VER_IHL];
        *b = (*b & 0xf0) | ((len / 4) & 0x0f);
    }

    /// Sets the DSCP; only the low 6 bits are used.
    #[inline]
    pub fn set_dscp(&mut self, dscp: u8) {
        let b = &mut self.buffer.as_mut()[field::DSCP_ECN];
        *b = (*b & 0x03) | (dscp << 2);
    }

    /// Sets the ECN field; only the low 2 bits are used.
    #[inline]
    pub fn set_ecn(&mut self, ecn: u8) {
        let b = &mut self.buffer.as_mut()[field::DSCP_ECN];
        *b = (*b & 0xfc) | (ecn & 0x03);
    }

    /// Sets the total length, header included.
    #[inline]
    pub fn set_total_len(&mut self, v: u16) {
        self.set_u16_at(field::LENGTH, v);
    }

    /// Sets the identification.
    #[inline]
    pub fn set_ident(&mut self, v: u16) {
        self.set_u16_at(field::IDENT, v);
    }

    /// Sets the Don't Fragment flag.
    #[inline]
    pub fn set_dont_frag(&mut self, v: bool) {
        self.set_flg_off(FLAG_DF, if v { FLAG_DF } else { 0 });
    }

    /// Sets the More Fragments flag.
    #[inline]
    pub fn set_more_frags(&mut self, v: bool) {
        self.set_flg_off(FLAG_MF, if v { FLAG_MF } else { 0 });
    }

    /// Sets the fragment offset in bytes; it must be a multiple of 8.
    #[inline]
    pub fn set_frag_offset(&mut self, bytes: u16) {
        self.set_flg_off(OFFSET_MASK, bytes >> 3);
    }

    /// Sets the time to live.
    #[inline]
    pub fn set_ttl(&mut self, v: u8) {
        self.buffer.as_mut()[field::TTL] = v;
    }

    /// Sets the transport protocol.
    #[inline]
    pub fn set_protocol(&mut self, v: Protocol) {
        self.buffer.as_mut()[field::PROTOCOL] = v.into();
    }

    /// Sets the header checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        self.set_u16_at(field::CHECKSUM, v);
    }

    /// Sets the source address.
    #[inline]
    pub fn set_src_addr(&mut self, v: Ipv4Addr) {
        self.buffer.as_mut()[field::SRC_ADDR].copy_from_slice(&v.octets());
    }

    /// Sets the destination address.
    #[inline]
    pub fn set_dst_addr(&mut self, v: Ipv4Addr) {
        self.buffer.as_mut()[field::DST_ADDR].copy_from_slice(&v.octets());
    }

    /// Computes the header checksum over the whole header and stores it.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let hl = usize::from(self.header_len());
        let sum = checksum::data(&self.buffer.as_ref()[..hl]);
        self.set_checksum(!sum);
    }

    /// Applies `f` to the 16-bit header word at `at` and patches the checksum
    /// incrementally (RFC 1624) instead of re-summing the header.
    fn rewrite_word(&mut self, at: usize, f: impl FnOnce(&mut Self)) {
        let old = self.u16_at(at..at + 2);
        f(self);
        let new = self.u16_at(at..at + 2);
        let ck = checksum::update16(self.checksum(), old, new);
        self.set_checksum(ck);
    }

    /// Sets the TTL and patches the checksum incrementally, for forwarding.
    #[inline]
    pub fn set_ttl_incremental(&mut self, ttl: u8) {
        self.rewrite_word(field::TTL, |p| p.set_ttl(ttl));
    }

    /// Takes one off the TTL and patches the checksum for exactly that
    /// change (RFC 1624), the cheapest update when forwarding. A TTL of 0 is
    /// left alone: a router drops such a packet before it gets here.
    #[inline]
    pub fn decrement_ttl(&mut self) {
        let ttl = self.ttl();
        if ttl == 0 {
            return;
        }
        self.set_ttl(ttl - 1);
        let ck = checksum::ttl_decremented(self.checksum());
        self.set_checksum(ck);
    }

    /// Sets the ECN field and patches the checksum incrementally, for CE marking.
    #[inline]
    pub fn set_ecn_incremental(&mut self, ecn: u8) {
        self.rewrite_word(field::VER_IHL, |p| p.set_ecn(ecn));
    }

    /// Sets the DSCP and patches the checksum incrementally, for remarking.
    #[inline]
    pub fn set_dscp_incremental(&mut self, dscp: u8) {
        self.rewrite_word(field::VER_IHL, |p| p.set_dscp(dscp));
    }

    /// Option bytes, writable.
    #[inline]
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = usize::from(self.header_len());
        &mut self.buffer.as_mut()[HEADER_LEN..hl]
    }

    /// The payload up to `total_len`, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = usize::from(self.header_len());
        let tl = usize::from(self.total_len());
        &mut self.buffer.as_mut()[hl..tl]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// An IPv4 header as plain data, for packets the switch originates (ICMP
/// replies, test traffic). Options are skipped on parse and never emitted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv4Repr {
    /// Source address.
    pub src_addr: Ipv4Addr,
    /// Destination address.
    pub dst_addr: Ipv4Addr,
    /// Transport protocol.
    pub protocol: Protocol,
    /// Payload length in bytes (at most 65515).
    pub payload_len: u16,
    /// Time to live.
    pub ttl: u8,
    /// DSCP (0–63).
    pub dscp: u8,
    /// ECN field (0–3).
    pub ecn: u8,
}

impl Ipv4Repr {
    /// Reads a header.
    ///
    /// # Errors
    /// As [`Packet::check_len`]; `Malformed` when the version is not 4 or the
    /// checksum is wrong.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<Ipv4Repr> {
        packet.check_len()?;
        if packet.version() != 4 || !packet.verify_checksum() {
            return Err(WireError::Malformed);
        }
        Ok(Ipv4Repr {
            src_addr: packet.src_addr(),
            dst_addr: packet.dst_addr(),
            protocol: packet.protocol(),
            payload_len: packet.total_len() - u16::from(packet.header_len()),
            ttl: packet.ttl(),
            dscp: packet.dscp(),
            ecn: packet.ecn(),
        })
    }

    /// Bytes of header [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes a 20-byte header (ident 0, DF set) with its checksum; the
    /// payload is left as it is.
    ///
    /// # Panics
    /// When the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_version(4);
        packet.set_header_len(HEADER_LEN as u8);
        packet.set_dscp(self.dscp);
        packet.set_ecn(self.ecn);
        packet.set_total_len(self.payload_len.saturating_add(HEADER_LEN as u16));
        packet.set_ident(0);
        packet.set_u16_at(field::FLG_OFF, FLAG_DF);
        packet.set_ttl(self.ttl);
        packet.set_protocol(self.protocol);
        packet.set_src_addr(self.src_addr);
        packet.set_dst_addr(self.dst_addr);
        packet.fill_checksum();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// 10.0.0.1 -> 10.0.0.2, UDP, DSCP 24 ECN 2, TTL 64, DF, 4 payload bytes
    /// followed by 2 bytes of padding.
    static PACKET_BYTES: [u8; 26] = [
        0x45, 0x62, 0x00, 0x18, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x26, 0x71, 10, 0, 0, 1, 10, 0,
        0, 2, // header
        0xde, 0xad, 0xbe, 0xef, // payload
        0x00, 0x00, // padding
    ];

    fn repr() -> Ipv4Repr {
        Ipv4Repr {
            src_addr: Ipv4Addr::new(10, 0, 0, 1),
            dst_addr: Ipv4Addr::new(10, 0, 0, 2),
            protocol: Protocol::Udp,
            payload_len: 4,
            ttl: 64,
            dscp: 24,
            ecn: 2,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.version(), 4);
        assert_eq!(p.header_len(), 20);
        assert_eq!((p.dscp(), p.ecn()), (24, 2));
        assert_eq!(p.total_len(), 24);
        assert_eq!(p.ident(), 0);
        assert!(p.dont_frag() && !p.more_frags() && !p.is_fragment());
        assert_eq!(p.frag_offset(), 0);
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), Protocol::Udp);
        assert_eq!(p.checksum(), 0x2671);
        assert_eq!(p.src_addr(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(p.dst_addr(), Ipv4Addr::new(10, 0, 0, 2));
        assert!(p.verify_checksum());
        assert_eq!(p.options(), &[] as &[u8]);
        assert_eq!(p.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(Ipv4Repr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 26];
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        repr().emit(&mut p);
        p.payload_mut().copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        bytes[24..].fill(0);
        assert_eq!(bytes, PACKET_BYTES);
    }

    #[test]
    fn options_and_fragments() {
        let mut bytes = [0u8; 28];
        bytes[..20].copy_from_slice(&PACKET_BYTES[..20]);
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        p.set_header_len(24);
        p.set_total_len(28);
        p.set_dont_frag(false);
        p.set_more_frags(true);
        p.set_frag_offset(1480);
        p.options_mut().copy_from_slice(&[1, 1, 1, 0]);
        p.fill_checksum();
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert_eq!(p.payload().len(), 4);
        assert!(!p.dont_frag() && p.more_frags() && p.is_fragment());
        assert_eq!(p.frag_offset(), 1480);
        assert!(p.verify_checksum());
    }

    #[test]
    fn bad_lengths() {
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..19]),
            Err(WireError::Truncated)
        );
        // total_len 24 but only 23 bytes
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..23]),
            Err(WireError::Truncated)
        );
        let mut b = PACKET_BYTES;
        b[0] = 0x44; // IHL 4
        assert_eq!(Packet::new_checked(&b[..]), Err(WireError::Malformed));
        b[0] = 0x46; // IHL 6, options run past total_len 24? no: 24 = 24 ok
        b[3] = 0x16; // total_len 22 < header 24
        assert_eq!(Packet::new_checked(&b[..]), Err(WireError::Malformed));
        b[0] = 0x4f; // IHL 15 = 60 bytes > buffer
        assert_eq!(Packet::new_checked(&b[..]), Err(WireError::Truncated));
        b = PACKET_BYTES;
        b[3] = 0xff; // total_len 255 > buffer
        assert_eq!(Packet::new_checked(&b[..]), Err(WireError::Truncated));
        b = PACKET_BYTES;
        b[11] ^= 1;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(!p.verify_checksum());
        assert_eq!(Ipv4Repr::parse(&p), Err(WireError::Malformed));
        b = PACKET_BYTES;
        b[0] = 0x65;
        assert_eq!(
            Ipv4Repr::parse(&Packet::new_unchecked(&b[..])),
            Err(WireError::Malformed)
        );
    }

    #[test]
    fn incremental_rewrites_keep_checksum_valid() {
        let mut b = PACKET_BYTES;
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.set_ttl_incremental(63);
        assert!(p.verify_checksum());
        p.set_ecn_incremental(3);
        assert!(p.verify_checksum());
        p.set_dscp_incremental(46);
        assert!(p.verify_checksum());
        assert_eq!((p.ttl(), p.dscp(), p.ecn()), (63, 46, 3));
        p.decrement_ttl();
        assert!(p.verify_checksum());
        assert_eq!(p.ttl(), 62);
        p.set_ttl_incremental(0);
        p.decrement_ttl();
        assert!(p.verify_checksum());
        assert_eq!(p.ttl(), 0);
        let incremental = p.checksum();
        p.fill_checksum();
        assert_eq!(p.checksum(), incremental);
    }

    #[test]
    fn protocol_is_total() {
        assert_eq!(Protocol::from(17), Protocol::Udp);
        assert_eq!(Protocol::from(132), Protocol::Unknown(132));
        assert_eq!(u8::from(Protocol::Icmpv6), 58);
    }

    proptest! {
        #[test]
        fn repr_round_trip(src in any::<u32>(), dst in any::<u32>(), proto in any::<u8>(),
                           payload_len in 0u16..1500, ttl in any::<u8>(), dscp in 0u8..64, ecn in 0u8..4) {
            let r = Ipv4Repr {
                src_addr: Ipv4Addr::from(src),
                dst_addr: Ipv4Addr::from(dst),
                protocol: Protocol::from(proto),
                payload_len, ttl, dscp, ecn,
            };
            let mut buf = vec![0xa5u8; HEADER_LEN + usize::from(payload_len)];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            prop_assert_eq!(Ipv4Repr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }

        #[test]
        fn ttl_decrement_matches_recompute(src in any::<u32>(), dst in any::<u32>(), ttl in 1u8..=255,
                                           dscp in 0u8..64, ecn in 0u8..4) {
            let r = Ipv4Repr { src_addr: Ipv4Addr::from(src), dst_addr: Ipv4Addr::from(dst),
                protocol: Protocol::Udp, payload_len: 0, ttl, dscp, ecn };
            let mut buf = [0u8; HEADER_LEN];
            let mut p = Packet::new_unchecked(&mut buf[..]);
            r.emit(&mut p);
            p.set_ttl_incremental(ttl - 1);
            p.set_ecn_incremental(3);
            let inc = p.checksum();
            p.fill_checksum();
            prop_assert_eq!(inc, p.checksum());
        }
    }
}
