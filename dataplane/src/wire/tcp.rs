//! TCP segment headers (RFC 9293), read for ports, flags and ECN feedback.
//!
//! TCP has no length field: the view's buffer must be exactly the segment
//! (the IP payload) for checksums to be right.

use std::net::IpAddr;

use super::checksum;
use super::ipv4::Protocol;
use super::{Result, WireError};

mod field {
    use crate::wire::Field;

    pub const SRC_PORT: Field = 0..2;
    pub const DST_PORT: Field = 2..4;
    pub const SEQ_NUM: Field = 4..8;
    pub const ACK_NUM: Field = 8..12;
    pub const FLAGS: Field = 12..14;
    pub const WIN_SIZE: Field = 14..16;
    pub const CHECKSUM: Field = 16..18;
    pub const URGENT: Field = 18..20;
}

/// Length of a header without options (data offset 5).
pub const HEADER_LEN: usize = field::URGENT.end;

/// FIN flag bit in [`Packet::flags`].
pub const FLAG_FIN: u16 = 0x001;
/// SYN flag bit in [`Packet::flags`].
pub const FLAG_SYN: u16 = 0x002;
/// RST flag bit in [`Packet::flags`].
pub const FLAG_RST: u16 = 0x004;
/// PSH flag bit in [`Packet::flags`].
pub const FLAG_PSH: u16 = 0x008;
/// ACK flag bit in [`Packet::flags`].
pub const FLAG_ACK: u16 = 0x010;
/// URG flag bit in [`Packet::flags`].
pub const FLAG_URG: u16 = 0x020;
/// ECN-Echo flag bit in [`Packet::flags`] (RFC 3168).
pub const FLAG_ECE: u16 = 0x040;
/// Congestion Window Reduced flag bit in [`Packet::flags`] (RFC 3168).
pub const FLAG_CWR: u16 = 0x080;
/// Accurate-ECN / former nonce-sum bit in [`Packet::flags`].
pub const FLAG_AE: u16 = 0x100;
const FLAGS_MASK: u16 = 0x01ff;

/// Imbue a raw octet buffer with TCP header structure.
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
    /// options the data offset claims.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than either; `Malformed` when
    /// the data offset is below 5.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        let header_len = usize::from(self.header_len());
        if header_len < HEADER_LEN {
            Err(WireError::Malformed)
        } else if len < header_len {
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

    fn u32_at(&self, f: core::ops::Range<usize>) -> u32 {
        let b = &self.buffer.as_ref()[f];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Source port.
    #[inline]
    pub fn src_port(&self) -> u16 {
        self.u16_at(field::SRC_PORT)
    }

    /// Destination port.
    #[inline]
    pub fn dst_port(&self) -> u16 {
        self.u16_at(field::DST_PORT)
    }

    /// Sequence number.
    #[inline]
    pub fn seq_number(&self) -> u32 {
        self.u32_at(field::SEQ_NUM)
    }

    /// Acknowledgement number.
    #[inline]
    pub fn ack_number(&self) -> u32 {
        self.u32_at(field::ACK_NUM)
    }

    /// Header length in bytes (data offset × 4), options included.
    #[inline]
    pub fn header_len(&self) -> u8 {
        (self.buffer.as_ref()[field::FLAGS.start] >> 4) * 4
    }

    /// The nine flag bits (`FLAG_*`).
    #[inline]
    pub fn flags(&self) -> u16 {
        self.u16_at(field::FLAGS) & FLAGS_MASK
    }

    /// SYN flag.
    #[inline]
    pub fn syn(&self) -> bool {
        self.flags() & FLAG_SYN != 0
    }

    /// ACK flag.
    #[inline]
    pub fn ack(&self) -> bool {
        self.flags() & FLAG_ACK != 0
    }

    /// FIN flag.
    #[inline]
    pub fn fin(&self) -> bool {
        self.flags() & FLAG_FIN != 0
    }

    /// RST flag.
    #[inline]
    pub fn rst(&self) -> bool {
        self.flags() & FLAG_RST != 0
    }

    /// ECN-Echo flag: the receiver saw CE marks.
    #[inline]
    pub fn ece(&self) -> bool {
        self.flags() & FLAG_ECE != 0
    }

    /// Congestion Window Reduced flag: the sender reacted to ECE.
    #[inline]
    pub fn cwr(&self) -> bool {
        self.flags() & FLAG_CWR != 0
    }

    /// Receive window.
    #[inline]
    pub fn window_len(&self) -> u16 {
        self.u16_at(field::WIN_SIZE)
    }

    /// Checksum as received.
    #[inline]
    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }

    /// Urgent pointer.
    #[inline]
    pub fn urgent_at(&self) -> u16 {
        self.u16_at(field::URGENT)
    }

    fn sum(&self, src: &IpAddr, dst: &IpAddr) -> u16 {
        let data = self.buffer.as_ref();
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        checksum::combine(&[
            checksum::pseudo_header(src, dst, Protocol::Tcp.into(), len),
            checksum::data(data),
        ])
    }

    /// True when the checksum over the whole buffer matches the
    /// pseudo-header of `src`/`dst`.
    #[inline]
    pub fn verify_checksum(&self, src: &IpAddr, dst: &IpAddr) -> bool {
        self.sum(src, dst) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// Option bytes between the fixed header and the payload.
    #[inline]
    pub fn options(&self) -> &'a [u8] {
        let hl = usize::from(self.header_len());
        &self.buffer.as_ref()[HEADER_LEN..hl]
    }

    /// Everything after the header and options.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        let hl = usize::from(self.header_len());
        &self.buffer.as_ref()[hl..]
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

    /// Sets the sequence number.
    #[inline]
    pub fn set_seq_number(&mut self, v: u32) {
        self.buffer.as_mut()[field::SEQ_NUM].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the acknowledgement number.
    #[inline]
    pub fn set_ack_number(&mut self, v: u32) {
        self.buffer.as_mut()[field::ACK_NUM].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the header length in bytes; it must be a multiple of 4 up to 60.
    /// The three reserved bits next to it are cleared.
    #[inline]
    pub fn set_header_len(&mut self, len: u8) {
        let b = &mut self.buffer.as_mut()[field::FLAGS.start];
        *b = (*b & 0x01) | ((len / 4) << 4);
    }

    /// Sets the nine flag bits, keeping the data offset.
    #[inline]
    pub fn set_flags(&mut self, flags: u16) {
        let v = (self.u16_at(field::FLAGS) & !FLAGS_MASK) | (flags & FLAGS_MASK);
        self.set_u16_at(field::FLAGS, v);
    }

    /// Sets the receive window.
    #[inline]
    pub fn set_window_len(&mut self, v: u16) {
        self.set_u16_at(field::WIN_SIZE, v);
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        self.set_u16_at(field::CHECKSUM, v);
    }

    /// Sets the urgent pointer.
    #[inline]
    pub fn set_urgent_at(&mut self, v: u16) {
        self.set_u16_at(field::URGENT, v);
    }

    /// Computes the checksum over the pseudo-header of `src`/`dst` and the
    /// whole buffer, and stores it.
    #[inline]
    pub fn fill_checksum(&mut self, src: &IpAddr, dst: &IpAddr) {
        self.set_checksum(0);
        let ck = !self.sum(src, dst);
        self.set_checksum(ck);
    }

    /// Option bytes, writable.
    #[inline]
    pub fn options_mut(&mut self) -> &mut [u8] {
        let hl = usize::from(self.header_len());
        &mut self.buffer.as_mut()[HEADER_LEN..hl]
    }

    /// Everything after the header and options, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let hl = usize::from(self.header_len());
        &mut self.buffer.as_mut()[hl..]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use std::net::Ipv6Addr;

    fn addrs() -> (IpAddr, IpAddr) {
        let s: Ipv6Addr = "fd00::1".parse().unwrap();
        let d: Ipv6Addr = "fd00::2".parse().unwrap();
        (s.into(), d.into())
    }

    /// 40000 -> 5201, seq 1, ack 2, data offset 6 (options NOP NOP NOP EOL),
    /// ACK|PSH|ECE, window 512, 3 payload bytes.
    static SEGMENT_BYTES: [u8; 27] = [
        0x9c, 0x40, 0x14, 0x51, // ports
        0x00, 0x00, 0x00, 0x01, // seq
        0x00, 0x00, 0x00, 0x02, // ack
        0x60, 0x58, 0x02, 0x00, // offset/flags, window
        0x2c, 0x89, 0x00, 0x00, // checksum over fd00::1 -> fd00::2, urgent
        0x01, 0x01, 0x01, 0x00, // options
        0x61, 0x62, 0x63, // payload
    ];

    fn segment() -> [u8; 27] {
        SEGMENT_BYTES
    }

    #[test]
    fn deconstruct() {
        let (s, d) = addrs();
        let b = segment();
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!((p.src_port(), p.dst_port()), (40000, 5201));
        assert_eq!((p.seq_number(), p.ack_number()), (1, 2));
        assert_eq!(p.header_len(), 24);
        assert_eq!(p.flags(), FLAG_ACK | FLAG_PSH | FLAG_ECE);
        assert!(p.ack() && p.ece() && !p.syn() && !p.fin() && !p.rst() && !p.cwr());
        assert_eq!(p.window_len(), 512);
        assert_eq!(p.urgent_at(), 0);
        assert_eq!(p.checksum(), 0x2c89);
        assert_eq!(p.options(), &[1, 1, 1, 0]);
        assert_eq!(p.payload(), b"abc");
        assert!(p.verify_checksum(&s, &d));
        assert!(!p.verify_checksum(&d, &d));
    }

    #[test]
    fn construct() {
        let (s, d) = addrs();
        let mut bytes = [0xa5u8; 27];
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        p.set_src_port(40000);
        p.set_dst_port(5201);
        p.set_seq_number(1);
        p.set_ack_number(2);
        p.set_header_len(24);
        p.set_flags(FLAG_ACK | FLAG_PSH | FLAG_ECE);
        p.set_window_len(512);
        p.set_urgent_at(0);
        p.options_mut().copy_from_slice(&[1, 1, 1, 0]);
        p.payload_mut().copy_from_slice(b"abc");
        p.fill_checksum(&s, &d);
        assert_eq!(bytes, segment());
    }

    #[test]
    fn bad_lengths() {
        let b = segment();
        assert_eq!(Packet::new_checked(&b[..19]), Err(WireError::Truncated));
        assert_eq!(Packet::new_checked(&b[..23]), Err(WireError::Truncated));
        let mut m = b;
        m[12] = 0x40; // data offset 4
        assert_eq!(Packet::new_checked(&m[..]), Err(WireError::Malformed));
        m[12] = 0xf0; // data offset 15 = 60 bytes
        assert_eq!(Packet::new_checked(&m[..]), Err(WireError::Truncated));
    }
}
