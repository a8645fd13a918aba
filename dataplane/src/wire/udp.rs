//! UDP datagrams (RFC 768), the carrier of RoCEv2.

use std::net::IpAddr;

use super::checksum;
use super::ipv4::Protocol;
use super::{Result, WireError};

mod field {
    use crate::wire::Field;

    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const LENGTH: Field = 4..6;
    pub const CHECKSUM: Field = 6..8;
}

/// Length of the UDP header.
pub const HEADER_LEN: usize = field::CHECKSUM.end;

/// Imbue a raw octet buffer with UDP structure; the buffer starts at the
/// header and may run past the datagram.
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

    /// Ensures no accessor can panic: the buffer holds the header and the
    /// `len` bytes the length field claims.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than either; `Malformed` when
    /// the length field is below 8.
    pub fn check_len(&self) -> Result<()> {
        let buf_len = self.buffer.as_ref().len();
        if buf_len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let len = usize::from(self.len());
        if len < HEADER_LEN {
            Err(WireError::Malformed)
        } else if buf_len < len {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, f: core::ops::Range<usize>) -> u16 {
        let b = &self.buffer.as_ref()[f];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        self.u16_at(field::SRC_PORT)
    }

    /// Destination port (4791 for RoCEv2).
    #[inline]
    pub fn dst_port(&self) -> u16 {
        self.u16_at(field::DST_PORT)
    }

    /// Length of the datagram, header included.
    #[inline]
    #[allow(clippy::len_without_is_empty)] // the field is a length, never empty: at least 8
    pub fn len(&self) -> u16 {
        self.u16_at(field::LENGTH)
    }

    /// Checksum as received (0 means "none" over IPv4).
    #[inline]
    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }

    fn sum(&self, src: &IpAddr, dst: &IpAddr) -> u16 {
        let len = self.len();
        let data = &self.buffer.as_ref()[..usize::from(len)];
        checksum::combine(&[
            checksum::pseudo_header(src, dst, Protocol::Udp.into(), u32::from(len)),
            checksum::data(data),
        ])
    }

    /// True when the checksum matches the pseudo-header of `src`/`dst`; a
    /// zero checksum over IPv4 means the sender did not compute one.
    #[inline]
    pub fn verify_checksum(&self, src: &IpAddr, dst: &IpAddr) -> bool {
        if src.is_ipv4() && self.checksum() == 0 {
            return true;
        }
        self.sum(src, dst) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// The `len - 8` bytes after the header.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        let len = usize::from(self.len());
        &self.buffer.as_ref()[HEADER_LEN..len]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, f: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the source port.
    #[inline]
    pub fn set_src_port(&mut self, v: u16) {
        self.set_u16_at(field::SRC_PORT, v);
    }

    /// Sets the destination port.
    #[inline]
    pub fn set_dst_port(&mut self, v: u16) {
        self.set_u16_at(field::DST_PORT, v);
    }

    /// Sets the length field.
    #[inline]
    pub fn set_len(&mut self, v: u16) {
        self.set_u16_at(field::LENGTH, v);
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        self.set_u16_at(field::CHECKSUM, v);
    }

    /// Computes the checksum over the pseudo-header of `src`/`dst` and the
    /// datagram, and stores it (0xffff in place of a computed 0).
    #[inline]
    pub fn fill_checksum(&mut self, src: &IpAddr, dst: &IpAddr) {
        self.set_checksum(0);
        let ck = !self.sum(src, dst);
        self.set_checksum(if ck == 0 { 0xffff } else { ck });
    }

    /// The payload, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let len = usize::from(self.len());
        &mut self.buffer.as_mut()[HEADER_LEN..len]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// The UDP header as plain data, for datagrams the switch or a test builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UdpRepr {
    /// Source port.
    pub src_port: u16,
    /// Destination port.
    pub dst_port: u16,
}

impl UdpRepr {
    /// Reads the ports, verifying the checksum against `src`/`dst`.
    ///
    /// # Errors
    /// As [`Packet::check_len`]; `Malformed` on a wrong checksum.
    pub fn parse<T: AsRef<[u8]>>(
        packet: &Packet<T>,
        src: &IpAddr,
        dst: &IpAddr,
    ) -> Result<UdpRepr> {
        packet.check_len()?;
        if !packet.verify_checksum(src, dst) {
            return Err(WireError::Malformed);
        }
        Ok(UdpRepr {
            src_port: packet.src_port(),
            dst_port: packet.dst_port(),
        })
    }

    /// Bytes [`emit`](Self::emit) covers for a payload of `payload_len` bytes.
    pub const fn buffer_len(&self, payload_len: usize) -> usize {
        HEADER_LEN + payload_len
    }

    /// Writes the header for `payload_len` bytes already in place after it,
    /// then the checksum over them.
    ///
    /// # Panics
    /// When the buffer is shorter than [`buffer_len`](Self::buffer_len) or the
    /// datagram would not fit the 16-bit length field.
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut Packet<T>,
        src: &IpAddr,
        dst: &IpAddr,
        payload_len: usize,
    ) {
        packet.set_src_port(self.src_port);
        packet.set_dst_port(self.dst_port);
        let len = u16::try_from(HEADER_LEN + payload_len).unwrap_or(u16::MAX);
        packet.set_len(len);
        packet.fill_checksum(src, dst);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn v4() -> (IpAddr, IpAddr) {
        (
            Ipv4Addr::new(10, 0, 0, 1).into(),
            Ipv4Addr::new(10, 0, 0, 2).into(),
        )
    }

    /// 49152 -> 4791, 4 payload bytes, checksum over 10.0.0.1 -> 10.0.0.2,
    /// then 2 bytes beyond the datagram.
    static PACKET_BYTES: [u8; 14] = [
        0xc0, 0x00, 0x12, 0xb7, 0x00, 0x0c, 0x7b, 0x7e, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x00,
    ];

    #[test]
    fn deconstruct() {
        let (s, d) = v4();
        let p = Packet::new_checked(&PACKET_BYTES[..]).unwrap();
        assert_eq!(p.src_port(), 49152);
        assert_eq!(p.dst_port(), 4791);
        assert_eq!(p.len(), 12);
        assert_eq!(p.checksum(), 0x7b7e);
        assert_eq!(p.payload(), &[0xde, 0xad, 0xbe, 0xef]);
        assert!(p.verify_checksum(&s, &d));
        assert!(!p.verify_checksum(&d, &Ipv4Addr::new(10, 0, 0, 3).into()));
        assert_eq!(
            UdpRepr::parse(&p, &s, &d).unwrap(),
            UdpRepr {
                src_port: 49152,
                dst_port: 4791
            }
        );
    }

    #[test]
    fn construct() {
        let (s, d) = v4();
        let mut bytes = [0xa5u8; 14];
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        p.set_len(12);
        p.payload_mut().copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        UdpRepr {
            src_port: 49152,
            dst_port: 4791,
        }
        .emit(&mut p, &s, &d, 4);
        bytes[12..].fill(0);
        assert_eq!(bytes, PACKET_BYTES);
    }

    #[test]
    fn zero_checksum() {
        let (s, d) = v4();
        let mut b = PACKET_BYTES;
        b[6] = 0;
        b[7] = 0;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert!(p.verify_checksum(&s, &d));
        let s6: IpAddr = Ipv6Addr::LOCALHOST.into();
        assert!(!p.verify_checksum(&s6, &s6));
    }

    #[test]
    fn bad_lengths() {
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..7]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            Packet::new_checked(&PACKET_BYTES[..11]),
            Err(WireError::Truncated)
        );
        let mut b = PACKET_BYTES;
        b[5] = 7; // length below the header
        assert_eq!(Packet::new_checked(&b[..]), Err(WireError::Malformed));
        b[4] = 0xff; // length past the buffer
        assert_eq!(Packet::new_checked(&b[..]), Err(WireError::Truncated));
        b = PACKET_BYTES;
        b[8] ^= 0xff;
        let (s, d) = v4();
        assert_eq!(
            UdpRepr::parse(&Packet::new_checked(&b[..]).unwrap(), &s, &d),
            Err(WireError::Malformed)
        );
    }

    proptest! {
        #[test]
        fn repr_round_trip_v6(sp in any::<u16>(), dp in any::<u16>(), src in any::<u128>(), dst in any::<u128>(),
                              payload in proptest::collection::vec(any::<u8>(), 0..64)) {
            let (s, d): (IpAddr, IpAddr) = (Ipv6Addr::from(src).into(), Ipv6Addr::from(dst).into());
            let r = UdpRepr { src_port: sp, dst_port: dp };
            let mut buf = vec![0xa5u8; r.buffer_len(payload.len())];
            buf[HEADER_LEN..].copy_from_slice(&payload);
            r.emit(&mut Packet::new_unchecked(&mut buf[..]), &s, &d, payload.len());
            let p = Packet::new_checked(&buf[..]).unwrap();
            prop_assert_ne!(p.checksum(), 0);
            prop_assert_eq!(UdpRepr::parse(&p, &s, &d).unwrap(), r);
            prop_assert_eq!(p.payload(), &payload[..]);
        }
    }
}
