//! ICMP for IPv4 (RFC 792): the echo messages the switch answers for its own
//! addresses, and a view that reads any message's type and code.

use super::checksum;
use super::{Result, WireError};

enum_with_unknown! {
    /// ICMPv4 message type.
    pub enum Message(u8) {
        /// Echo reply (0).
        EchoReply = 0,
        /// Destination unreachable (3).
        DstUnreachable = 3,
        /// Redirect (5).
        Redirect = 5,
        /// Echo request (8).
        EchoRequest = 8,
        /// Time exceeded (11), sent when a TTL runs out.
        TimeExceeded = 11,
        /// Parameter problem (12).
        ParamProblem = 12,
    }
}

mod field {
    use crate::wire::{Field, Rest};

    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: Field = 2..4;
    pub const ECHO_IDENT: Field = 4..6;
    pub const ECHO_SEQNO: Field = 6..8;
    pub const DATA: Rest = 8..;
}

/// Length of the header every ICMPv4 message has: type, code, checksum and
/// four message-specific bytes.
pub const HEADER_LEN: usize = field::DATA.start;

/// Imbue a raw octet buffer with ICMPv4 structure; the buffer must be exactly
/// the message (the IPv4 payload) for checksums to be right.
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
    /// `Truncated` when the buffer cannot hold the header.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures no accessor can panic.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than [`HEADER_LEN`] (8).
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < HEADER_LEN {
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

    /// Message type.
    #[inline]
    pub fn msg_type(&self) -> Message {
        Message::from(self.buffer.as_ref()[field::TYPE])
    }

    /// Message code.
    #[inline]
    pub fn msg_code(&self) -> u8 {
        self.buffer.as_ref()[field::CODE]
    }

    /// Checksum as received.
    #[inline]
    pub fn checksum(&self) -> u16 {
        self.u16_at(field::CHECKSUM)
    }

    /// Echo identifier (meaningful for echo messages).
    #[inline]
    pub fn echo_ident(&self) -> u16 {
        self.u16_at(field::ECHO_IDENT)
    }

    /// Echo sequence number (meaningful for echo messages).
    #[inline]
    pub fn echo_seq_no(&self) -> u16 {
        self.u16_at(field::ECHO_SEQNO)
    }

    /// True when the checksum over the whole buffer is correct.
    #[inline]
    pub fn verify_checksum(&self) -> bool {
        checksum::data(self.buffer.as_ref()) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// Everything after the 8-byte header (echo data, or the offending
    /// packet's header for error messages).
    #[inline]
    pub fn data(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::DATA]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, f: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the message type.
    #[inline]
    pub fn set_msg_type(&mut self, v: Message) {
        self.buffer.as_mut()[field::TYPE] = v.into();
    }

    /// Sets the message code.
    #[inline]
    pub fn set_msg_code(&mut self, v: u8) {
        self.buffer.as_mut()[field::CODE] = v;
    }

    /// Sets the checksum field.
    #[inline]
    pub fn set_checksum(&mut self, v: u16) {
        self.set_u16_at(field::CHECKSUM, v);
    }

    /// Sets the echo identifier.
    #[inline]
    pub fn set_echo_ident(&mut self, v: u16) {
        self.set_u16_at(field::ECHO_IDENT, v);
    }

    /// Sets the echo sequence number.
    #[inline]
    pub fn set_echo_seq_no(&mut self, v: u16) {
        self.set_u16_at(field::ECHO_SEQNO, v);
    }

    /// Computes the checksum over the whole buffer and stores it.
    #[inline]
    pub fn fill_checksum(&mut self) {
        self.set_checksum(0);
        let ck = !checksum::data(self.buffer.as_ref());
        self.set_checksum(ck);
    }

    /// Everything after the header, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::DATA]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// An ICMPv4 echo message as plain data, borrowing its data from the packet,
/// so the switch can answer pings without copying twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icmpv4Repr<'a> {
    /// Echo request.
    EchoRequest {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Data to echo back.
        data: &'a [u8],
    },
    /// Echo reply.
    EchoReply {
        /// Identifier.
        ident: u16,
        /// Sequence number.
        seq_no: u16,
        /// Echoed data.
        data: &'a [u8],
    },
}

impl<'a> Icmpv4Repr<'a> {
    /// Reads an echo message.
    ///
    /// # Errors
    /// `Truncated` when shorter than 8 bytes; `Malformed` on a wrong checksum,
    /// a non-zero code or a message other than echo.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(packet: &Packet<&'a T>) -> Result<Icmpv4Repr<'a>> {
        packet.check_len()?;
        if !packet.verify_checksum() || packet.msg_code() != 0 {
            return Err(WireError::Malformed);
        }
        let (ident, seq_no, data) = (packet.echo_ident(), packet.echo_seq_no(), packet.data());
        match packet.msg_type() {
            Message::EchoRequest => Ok(Icmpv4Repr::EchoRequest {
                ident,
                seq_no,
                data,
            }),
            Message::EchoReply => Ok(Icmpv4Repr::EchoReply {
                ident,
                seq_no,
                data,
            }),
            _ => Err(WireError::Malformed),
        }
    }

    /// Bytes [`emit`](Self::emit) writes: header and data.
    pub const fn buffer_len(&self) -> usize {
        match self {
            Icmpv4Repr::EchoRequest { data, .. } | Icmpv4Repr::EchoReply { data, .. } => {
                HEADER_LEN + data.len()
            }
        }
    }

    /// Writes the message and its checksum into the first
    /// [`buffer_len`](Self::buffer_len) bytes; bytes after those are neither
    /// written nor summed.
    ///
    /// # Panics
    /// When the buffer is shorter than [`buffer_len`](Self::buffer_len).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let (msg, ident, seq_no, data) = match *self {
            Icmpv4Repr::EchoRequest {
                ident,
                seq_no,
                data,
            } => (Message::EchoRequest, ident, seq_no, data),
            Icmpv4Repr::EchoReply {
                ident,
                seq_no,
                data,
            } => (Message::EchoReply, ident, seq_no, data),
        };
        let len = self.buffer_len();
        let mut p = Packet::new_unchecked(&mut packet.buffer.as_mut()[..len]);
        p.set_msg_type(msg);
        p.set_msg_code(0);
        p.set_echo_ident(ident);
        p.set_echo_seq_no(seq_no);
        p.data_mut().copy_from_slice(data);
        p.fill_checksum();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Echo request, ident 0x1234, seq 1, data "abcd".
    static ECHO_BYTES: [u8; 12] = [
        0x08, 0x00, 0x21, 0x04, 0x12, 0x34, 0x00, 0x01, 0x61, 0x62, 0x63, 0x64,
    ];

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&ECHO_BYTES[..]).unwrap();
        assert_eq!(p.msg_type(), Message::EchoRequest);
        assert_eq!(p.msg_code(), 0);
        assert_eq!(p.checksum(), 0x2104);
        assert_eq!(p.echo_ident(), 0x1234);
        assert_eq!(p.echo_seq_no(), 1);
        assert_eq!(p.data(), b"abcd");
        assert!(p.verify_checksum());
        assert_eq!(
            Icmpv4Repr::parse(&p).unwrap(),
            Icmpv4Repr::EchoRequest {
                ident: 0x1234,
                seq_no: 1,
                data: b"abcd"
            }
        );
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 14];
        let r = Icmpv4Repr::EchoRequest {
            ident: 0x1234,
            seq_no: 1,
            data: b"abcd",
        };
        assert_eq!(r.buffer_len(), 12);
        r.emit(&mut Packet::new_unchecked(&mut bytes[..]));
        assert_eq!(&bytes[..12], &ECHO_BYTES);
        assert_eq!(&bytes[12..], &[0xa5, 0xa5]);
    }

    #[test]
    fn bad_packets() {
        assert_eq!(
            Packet::new_checked(&ECHO_BYTES[..7]),
            Err(WireError::Truncated)
        );
        // Dropping data bytes breaks the checksum.
        let p = Packet::new_checked(&ECHO_BYTES[..10]).unwrap();
        assert_eq!(Icmpv4Repr::parse(&p), Err(WireError::Malformed));
        let mut b = ECHO_BYTES;
        b[0] = 11; // time exceeded
        let mut p = Packet::new_unchecked(&mut b[..]);
        p.fill_checksum();
        assert_eq!(p.msg_type(), Message::TimeExceeded);
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(Icmpv4Repr::parse(&p), Err(WireError::Malformed));
        assert_eq!(Message::from(42), Message::Unknown(42));
    }

    proptest! {
        #[test]
        fn repr_round_trip(reply in any::<bool>(), ident in any::<u16>(), seq_no in any::<u16>(),
                           data in proptest::collection::vec(any::<u8>(), 0..64)) {
            let r = if reply {
                Icmpv4Repr::EchoReply { ident, seq_no, data: &data }
            } else {
                Icmpv4Repr::EchoRequest { ident, seq_no, data: &data }
            };
            let mut buf = vec![0xa5u8; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            let p = Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(Icmpv4Repr::parse(&p).unwrap(), r);
        }
    }
}
