//! ICMPv6 (RFC 4443) echo and the two Neighbor Discovery messages (RFC 4861)
//! the switch needs to resolve and announce addresses: Neighbor Solicitation
//! and Neighbor Advertisement, with their link-layer address options.

use std::net::Ipv6Addr;

use super::checksum;
use super::ipv4::Protocol;
use super::{MacAddr, Result, WireError};

enum_with_unknown! {
    /// ICMPv6 message type.
    pub enum Message(u8) {
        /// Destination unreachable (1).
        DstUnreachable = 1,
        /// Packet too big (2).
        PktTooBig = 2,
        /// Time exceeded (3), sent when a hop limit runs out.
        TimeExceeded = 3,
        /// Parameter problem (4).
        ParamProblem = 4,
        /// Echo request (128).
        EchoRequest = 128,
        /// Echo reply (129).
        EchoReply = 129,
        /// Router solicitation (133).
        RouterSolicit = 133,
        /// Router advertisement (134).
        RouterAdvert = 134,
        /// Neighbor solicitation (135).
        NeighborSolicit = 135,
        /// Neighbor advertisement (136).
        NeighborAdvert = 136,
        /// Redirect (137).
        Redirect = 137,
    }
}

enum_with_unknown! {
    /// Neighbor Discovery option type.
    pub enum NdOptionType(u8) {
        /// Source link-layer address (1), carried by solicitations.
        SourceLinkLayerAddr = 1,
        /// Target link-layer address (2), carried by advertisements.
        TargetLinkLayerAddr = 2,
        /// Prefix information (3).
        PrefixInformation = 3,
        /// Redirected header (4).
        RedirectedHeader = 4,
        /// MTU (5).
        Mtu = 5,
    }
}

mod field {
    use crate::wire::{Field, Rest};

    pub const TYPE: usize = 0;
    pub const CODE: usize = 1;
    pub const CHECKSUM: Field = 2..4;
    pub const ECHO_IDENT: Field = 4..6;
    pub const ECHO_SEQNO: Field = 6..8;
    pub const ECHO_DATA: Rest = 8..;
    pub const NA_FLAGS: usize = 4;
    pub const ND_RESERVED: Field = 4..8;
    pub const ND_TARGET: Field = 8..24;
    pub const ND_OPTIONS: Rest = 24..;
}

/// Length of the header every ICMPv6 message has: type, code, checksum and
/// four message-specific bytes.
pub const HEADER_LEN: usize = field::ECHO_DATA.start;
/// Length of a Neighbor Solicitation or Advertisement before its options.
pub const ND_HEADER_LEN: usize = field::ND_OPTIONS.start;
/// Length of a link-layer address option for Ethernet (type, length, MAC).
pub const LLADDR_OPTION_LEN: usize = 8;

/// The flags of a Neighbor Advertisement, kept as their wire bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct NaFlags(u8);

impl NaFlags {
    /// No flag set.
    pub const EMPTY: NaFlags = NaFlags(0);
    /// R: the sender is a router.
    pub const ROUTER: NaFlags = NaFlags(0x80);
    /// S: the advertisement answers a solicitation.
    pub const SOLICITED: NaFlags = NaFlags(0x40);
    /// O: the advertisement overrides a cached link-layer address.
    pub const OVERRIDE: NaFlags = NaFlags(0x20);
    const MASK: u8 = 0xe0;

    /// Keeps the R, S and O bits of a flags byte.
    pub const fn from_bits_truncate(bits: u8) -> NaFlags {
        NaFlags(bits & Self::MASK)
    }

    /// The flags byte as on the wire.
    pub const fn bits(self) -> u8 {
        self.0
    }

    /// True when every flag of `other` is set here.
    pub const fn contains(self, other: NaFlags) -> bool {
        self.0 & other.0 == other.0
    }
}

impl core::ops::BitOr for NaFlags {
    type Output = NaFlags;

    fn bitor(self, rhs: NaFlags) -> NaFlags {
        NaFlags(self.0 | rhs.0)
    }
}

/// Imbue a raw octet buffer with ICMPv6 structure; the buffer must be exactly
/// the message (the IPv6 payload) for checksums to be right.
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

    /// Ensures no accessor can panic: 8 bytes for any message, 24 for a
    /// Neighbor Solicitation or Advertisement.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than its message type needs.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        match self.msg_type() {
            Message::NeighborSolicit | Message::NeighborAdvert if len < ND_HEADER_LEN => {
                Err(WireError::Truncated)
            }
            _ => Ok(()),
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

    /// Neighbor Advertisement flags (meaningful for advertisements).
    #[inline]
    pub fn na_flags(&self) -> NaFlags {
        NaFlags::from_bits_truncate(self.buffer.as_ref()[field::NA_FLAGS])
    }

    /// R flag of a Neighbor Advertisement.
    #[inline]
    pub fn router_flag(&self) -> bool {
        self.na_flags().contains(NaFlags::ROUTER)
    }

    /// S flag of a Neighbor Advertisement.
    #[inline]
    pub fn solicited_flag(&self) -> bool {
        self.na_flags().contains(NaFlags::SOLICITED)
    }

    /// O flag of a Neighbor Advertisement.
    #[inline]
    pub fn override_flag(&self) -> bool {
        self.na_flags().contains(NaFlags::OVERRIDE)
    }

    /// Target address of a Neighbor Solicitation or Advertisement; the
    /// unspecified address when the message is too short to carry one (only
    /// possible for another message type).
    #[inline]
    pub fn target_addr(&self) -> Ipv6Addr {
        match self.buffer.as_ref().get(field::ND_TARGET) {
            Some(b) => {
                let mut a = [0u8; 16];
                a.copy_from_slice(b);
                Ipv6Addr::from(a)
            }
            None => Ipv6Addr::UNSPECIFIED,
        }
    }

    fn sum(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> u16 {
        let data = self.buffer.as_ref();
        let len = u32::try_from(data.len()).unwrap_or(u32::MAX);
        checksum::combine(&[
            checksum::pseudo_header_v6(src, dst, Protocol::Icmpv6.into(), len),
            checksum::data(data),
        ])
    }

    /// True when the checksum over the IPv6 pseudo-header and the whole
    /// buffer is correct.
    #[inline]
    pub fn verify_checksum(&self, src: &Ipv6Addr, dst: &Ipv6Addr) -> bool {
        self.sum(src, dst) == 0xffff
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// Echo data: everything after the 8-byte header.
    #[inline]
    pub fn echo_data(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::ECHO_DATA]
    }

    /// Neighbor Discovery options after the target address; empty when the
    /// message is too short to have them.
    #[inline]
    pub fn nd_options(&self) -> NdOptionIter<'a> {
        NdOptionIter::new(self.buffer.as_ref().get(field::ND_OPTIONS).unwrap_or(&[]))
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

    /// Sets the four bytes after the checksum to the advertisement flags
    /// followed by zeros (a solicitation passes [`NaFlags::EMPTY`]).
    #[inline]
    pub fn set_na_flags(&mut self, flags: NaFlags) {
        let b = &mut self.buffer.as_mut()[field::ND_RESERVED];
        b.copy_from_slice(&[flags.bits(), 0, 0, 0]);
    }

    /// Sets the target address.
    ///
    /// # Panics
    /// When the buffer is shorter than [`ND_HEADER_LEN`].
    #[inline]
    pub fn set_target_addr(&mut self, addr: Ipv6Addr) {
        self.buffer.as_mut()[field::ND_TARGET].copy_from_slice(&addr.octets());
    }

    /// Computes the checksum over the IPv6 pseudo-header and the whole
    /// buffer, and stores it.
    #[inline]
    pub fn fill_checksum(&mut self, src: &Ipv6Addr, dst: &Ipv6Addr) {
        self.set_checksum(0);
        let ck = !self.sum(src, dst);
        self.set_checksum(ck);
    }

    /// Echo data, writable.
    #[inline]
    pub fn echo_data_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::ECHO_DATA]
    }

    /// Neighbor Discovery option bytes, writable.
    ///
    /// # Panics
    /// When the buffer is shorter than [`ND_HEADER_LEN`].
    #[inline]
    pub fn nd_options_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::ND_OPTIONS]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// One Neighbor Discovery option, borrowed from the message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NdOption<'a> {
    /// Option type.
    pub kind: NdOptionType,
    /// Option bytes after the type and length bytes.
    pub data: &'a [u8],
}

impl NdOption<'_> {
    /// The MAC address of a link-layer address option, when it holds one.
    pub fn link_layer_addr(&self) -> Option<MacAddr> {
        match self.kind {
            NdOptionType::SourceLinkLayerAddr | NdOptionType::TargetLinkLayerAddr => {
                self.data.get(..6).map(MacAddr::from_bytes)
            }
            _ => None,
        }
    }
}

/// Walks Neighbor Discovery options without panicking: a zero length (which
/// RFC 4861 says invalidates the message) or an option running past the end
/// yields one error, then the walk stops.
#[derive(Debug, Clone)]
pub struct NdOptionIter<'a> {
    rest: &'a [u8],
}

impl<'a> NdOptionIter<'a> {
    /// Iterates the options in `bytes`.
    pub const fn new(bytes: &'a [u8]) -> NdOptionIter<'a> {
        NdOptionIter { rest: bytes }
    }
}

impl<'a> Iterator for NdOptionIter<'a> {
    type Item = Result<NdOption<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest;
        if rest.is_empty() {
            return None;
        }
        self.rest = &[];
        let (kind, units) = match rest {
            [kind, units, ..] => (*kind, usize::from(*units)),
            _ => return Some(Err(WireError::Truncated)),
        };
        let len = units * 8;
        if len == 0 {
            return Some(Err(WireError::Malformed));
        }
        let Some(data) = rest.get(2..len) else {
            return Some(Err(WireError::Truncated));
        };
        self.rest = rest.get(len..).unwrap_or(&[]);
        Some(Ok(NdOption {
            kind: NdOptionType::from(kind),
            data,
        }))
    }
}

/// An ICMPv6 message the switch understands, as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Icmpv6Repr<'a> {
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
    /// Neighbor Solicitation: who has `target_addr`?
    NeighborSolicit {
        /// The address being resolved.
        target_addr: Ipv6Addr,
        /// The solicitor's MAC (source link-layer address option), absent
        /// in duplicate address detection.
        lladdr: Option<MacAddr>,
    },
    /// Neighbor Advertisement: `target_addr` is at `lladdr`.
    NeighborAdvert {
        /// R, S and O flags.
        flags: NaFlags,
        /// The address being advertised.
        target_addr: Ipv6Addr,
        /// The target's MAC (target link-layer address option).
        lladdr: Option<MacAddr>,
    },
}

impl<'a> Icmpv6Repr<'a> {
    /// Reads an echo or Neighbor Discovery message sent from `src` to `dst`.
    ///
    /// # Errors
    /// `Truncated` when too short for its type or an option runs past the
    /// end; `Malformed` on a wrong checksum, a non-zero code, a zero-length
    /// option or another message type.
    pub fn parse<T: AsRef<[u8]> + ?Sized>(
        packet: &Packet<&'a T>,
        src: &Ipv6Addr,
        dst: &Ipv6Addr,
    ) -> Result<Icmpv6Repr<'a>> {
        packet.check_len()?;
        if !packet.verify_checksum(src, dst) || packet.msg_code() != 0 {
            return Err(WireError::Malformed);
        }
        let lladdr = |want: NdOptionType| -> Result<Option<MacAddr>> {
            let mut found = None;
            for opt in packet.nd_options() {
                let opt = opt?;
                if opt.kind == want {
                    found = opt.link_layer_addr();
                }
            }
            Ok(found)
        };
        match packet.msg_type() {
            Message::EchoRequest => Ok(Icmpv6Repr::EchoRequest {
                ident: packet.echo_ident(),
                seq_no: packet.echo_seq_no(),
                data: packet.echo_data(),
            }),
            Message::EchoReply => Ok(Icmpv6Repr::EchoReply {
                ident: packet.echo_ident(),
                seq_no: packet.echo_seq_no(),
                data: packet.echo_data(),
            }),
            Message::NeighborSolicit => Ok(Icmpv6Repr::NeighborSolicit {
                target_addr: packet.target_addr(),
                lladdr: lladdr(NdOptionType::SourceLinkLayerAddr)?,
            }),
            Message::NeighborAdvert => Ok(Icmpv6Repr::NeighborAdvert {
                flags: packet.na_flags(),
                target_addr: packet.target_addr(),
                lladdr: lladdr(NdOptionType::TargetLinkLayerAddr)?,
            }),
            _ => Err(WireError::Malformed),
        }
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        match self {
            Icmpv6Repr::EchoRequest { data, .. } | Icmpv6Repr::EchoReply { data, .. } => {
                HEADER_LEN + data.len()
            }
            Icmpv6Repr::NeighborSolicit { lladdr, .. }
            | Icmpv6Repr::NeighborAdvert { lladdr, .. } => {
                ND_HEADER_LEN
                    + if lladdr.is_some() {
                        LLADDR_OPTION_LEN
                    } else {
                        0
                    }
            }
        }
    }

    /// Writes the message into the first [`buffer_len`](Self::buffer_len)
    /// bytes with its checksum for `src` -> `dst`; bytes after those are
    /// neither written nor summed.
    ///
    /// # Panics
    /// When the buffer is shorter than [`buffer_len`](Self::buffer_len).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(
        &self,
        packet: &mut Packet<T>,
        src: &Ipv6Addr,
        dst: &Ipv6Addr,
    ) {
        let len = self.buffer_len();
        let mut p = Packet::new_unchecked(&mut packet.buffer.as_mut()[..len]);
        p.set_msg_code(0);
        match *self {
            Icmpv6Repr::EchoRequest {
                ident,
                seq_no,
                data,
            }
            | Icmpv6Repr::EchoReply {
                ident,
                seq_no,
                data,
            } => {
                let msg = if matches!(self, Icmpv6Repr::EchoRequest { .. }) {
                    Message::EchoRequest
                } else {
                    Message::EchoReply
                };
                p.set_msg_type(msg);
                p.set_echo_ident(ident);
                p.set_echo_seq_no(seq_no);
                p.echo_data_mut().copy_from_slice(data);
            }
            Icmpv6Repr::NeighborSolicit {
                target_addr,
                lladdr,
            } => {
                p.set_msg_type(Message::NeighborSolicit);
                p.set_na_flags(NaFlags::EMPTY);
                p.set_target_addr(target_addr);
                if let Some(mac) = lladdr {
                    emit_lladdr(p.nd_options_mut(), NdOptionType::SourceLinkLayerAddr, mac);
                }
            }
            Icmpv6Repr::NeighborAdvert {
                flags,
                target_addr,
                lladdr,
            } => {
                p.set_msg_type(Message::NeighborAdvert);
                p.set_na_flags(flags);
                p.set_target_addr(target_addr);
                if let Some(mac) = lladdr {
                    emit_lladdr(p.nd_options_mut(), NdOptionType::TargetLinkLayerAddr, mac);
                }
            }
        }
        p.fill_checksum(src, dst);
    }
}

fn emit_lladdr(buf: &mut [u8], kind: NdOptionType, mac: MacAddr) {
    buf[0] = kind.into();
    buf[1] = (LLADDR_OPTION_LEN / 8) as u8;
    buf[2..LLADDR_OPTION_LEN].copy_from_slice(&mac.0);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn addr(s: &str) -> Ipv6Addr {
        s.parse().unwrap()
    }

    const MAC1: MacAddr = MacAddr([2, 0, 0, 0, 0, 1]);
    const MAC2: MacAddr = MacAddr([2, 0, 0, 0, 0, 2]);

    /// fe80::1 -> ff02::1:ff00:2: who has fe80::2? Source LL 02:00:00:00:00:01.
    static NS_BYTES: [u8; 32] = [
        0x87, 0x00, 0x7a, 0x97, 0x00, 0x00, 0x00, 0x00, // type code cksum reserved
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // target
        0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // SLLA
    ];

    /// fe80::2 -> fe80::1: fe80::2 is at 02:00:00:00:00:02 (S and O set).
    static NA_BYTES: [u8; 32] = [
        0x88, 0x00, 0x18, 0x1a, 0x60, 0x00, 0x00, 0x00, // type code cksum flags
        0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02, // target
        0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, // TLLA
    ];

    /// fd00::1 -> fd00::2 echo request, ident 7, seq 9, data "hi".
    static ECHO_BYTES: [u8; 10] = [0x80, 0x00, 0x1d, 0x3d, 0x00, 0x07, 0x00, 0x09, 0x68, 0x69];

    fn ns_addrs() -> (Ipv6Addr, Ipv6Addr) {
        (addr("fe80::1"), addr("ff02::1:ff00:2"))
    }

    fn na_addrs() -> (Ipv6Addr, Ipv6Addr) {
        (addr("fe80::2"), addr("fe80::1"))
    }

    fn echo_addrs() -> (Ipv6Addr, Ipv6Addr) {
        (addr("fd00::1"), addr("fd00::2"))
    }

    #[test]
    fn deconstruct_ns() {
        let (s, d) = ns_addrs();
        let b = NS_BYTES;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.msg_type(), Message::NeighborSolicit);
        assert_eq!(p.msg_code(), 0);
        assert_eq!(p.checksum(), 0x7a97);
        assert_eq!(p.target_addr(), addr("fe80::2"));
        let opts: Vec<_> = p.nd_options().collect();
        assert_eq!(opts.len(), 1);
        let opt = opts[0].unwrap();
        assert_eq!(opt.kind, NdOptionType::SourceLinkLayerAddr);
        assert_eq!(opt.link_layer_addr(), Some(MAC1));
        assert!(p.verify_checksum(&s, &d));
        assert_eq!(
            Icmpv6Repr::parse(&p, &s, &d).unwrap(),
            Icmpv6Repr::NeighborSolicit {
                target_addr: addr("fe80::2"),
                lladdr: Some(MAC1)
            }
        );
    }

    #[test]
    fn construct_ns() {
        let (s, d) = ns_addrs();
        let r = Icmpv6Repr::NeighborSolicit {
            target_addr: addr("fe80::2"),
            lladdr: Some(MAC1),
        };
        let mut bytes = [0xa5u8; 34];
        r.emit(&mut Packet::new_unchecked(&mut bytes[..]), &s, &d);
        assert_eq!(&bytes[..32], &NS_BYTES);
        assert_eq!(&bytes[32..], &[0xa5, 0xa5]);
    }

    #[test]
    fn deconstruct_na() {
        let (s, d) = na_addrs();
        let b = NA_BYTES;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.msg_type(), Message::NeighborAdvert);
        assert!(!p.router_flag() && p.solicited_flag() && p.override_flag());
        assert_eq!(p.na_flags(), NaFlags::SOLICITED | NaFlags::OVERRIDE);
        assert_eq!(p.target_addr(), addr("fe80::2"));
        assert!(p.verify_checksum(&s, &d));
        assert_eq!(
            Icmpv6Repr::parse(&p, &s, &d).unwrap(),
            Icmpv6Repr::NeighborAdvert {
                flags: NaFlags::SOLICITED | NaFlags::OVERRIDE,
                target_addr: addr("fe80::2"),
                lladdr: Some(MAC2),
            }
        );
    }

    #[test]
    fn construct_na() {
        let (s, d) = na_addrs();
        let r = Icmpv6Repr::NeighborAdvert {
            flags: NaFlags::SOLICITED | NaFlags::OVERRIDE,
            target_addr: addr("fe80::2"),
            lladdr: Some(MAC2),
        };
        let mut bytes = [0xa5u8; 32];
        r.emit(&mut Packet::new_unchecked(&mut bytes[..]), &s, &d);
        assert_eq!(bytes, NA_BYTES);
    }

    #[test]
    fn deconstruct_and_construct_echo() {
        let (s, d) = echo_addrs();
        let b = ECHO_BYTES;
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.msg_type(), Message::EchoRequest);
        assert_eq!((p.echo_ident(), p.echo_seq_no()), (7, 9));
        assert_eq!(p.echo_data(), b"hi");
        let r = Icmpv6Repr::parse(&p, &s, &d).unwrap();
        assert_eq!(
            r,
            Icmpv6Repr::EchoRequest {
                ident: 7,
                seq_no: 9,
                data: b"hi"
            }
        );
        // Too short for a target: the accessors still do not panic.
        assert_eq!(p.target_addr(), Ipv6Addr::UNSPECIFIED);
        assert_eq!(p.nd_options().count(), 0);
        let mut bytes = [0xa5u8; 10];
        r.emit(&mut Packet::new_unchecked(&mut bytes[..]), &s, &d);
        assert_eq!(bytes, b);
    }

    #[test]
    fn bad_packets() {
        let (s, d) = ns_addrs();
        let b = NS_BYTES;
        assert_eq!(Packet::new_checked(&b[..7]), Err(WireError::Truncated));
        assert_eq!(Packet::new_checked(&b[..23]), Err(WireError::Truncated));
        // Wrong checksum.
        let p = Packet::new_checked(&b[..24]).unwrap();
        assert_eq!(Icmpv6Repr::parse(&p, &s, &d), Err(WireError::Malformed));
        // Zero-length option: malformed even with a right checksum.
        let mut z = b;
        z[25] = 0;
        Packet::new_unchecked(&mut z[..]).fill_checksum(&s, &d);
        let p = Packet::new_checked(&z[..]).unwrap();
        assert_eq!(Icmpv6Repr::parse(&p, &s, &d), Err(WireError::Malformed));
        // Option length past the end.
        let mut o = b;
        o[25] = 2;
        Packet::new_unchecked(&mut o[..]).fill_checksum(&s, &d);
        let p = Packet::new_checked(&o[..]).unwrap();
        assert_eq!(Icmpv6Repr::parse(&p, &s, &d), Err(WireError::Truncated));
        assert_eq!(
            p.nd_options().collect::<Vec<_>>(),
            vec![Err(WireError::Truncated)]
        );
        // One stray byte of options.
        assert_eq!(
            NdOptionIter::new(&[1]).collect::<Vec<_>>(),
            vec![Err(WireError::Truncated)]
        );
    }

    proptest! {
        #[test]
        fn nd_round_trip(advert in any::<bool>(), flags in any::<u8>(), target in any::<u128>(),
                         mac in proptest::option::of(any::<[u8; 6]>()), src in any::<u128>(), dst in any::<u128>()) {
            let (s, d) = (Ipv6Addr::from(src), Ipv6Addr::from(dst));
            let lladdr = mac.map(MacAddr);
            let target_addr = Ipv6Addr::from(target);
            let r = if advert {
                Icmpv6Repr::NeighborAdvert { flags: NaFlags::from_bits_truncate(flags), target_addr, lladdr }
            } else {
                Icmpv6Repr::NeighborSolicit { target_addr, lladdr }
            };
            let mut buf = vec![0xa5u8; r.buffer_len()];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]), &s, &d);
            let p = Packet::new_checked(&buf[..]).unwrap();
            prop_assert_eq!(Icmpv6Repr::parse(&p, &s, &d).unwrap(), r);
        }

        #[test]
        fn option_walk_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let n = NdOptionIter::new(&bytes).count();
            prop_assert!(n <= bytes.len() / 8 + 1);
        }
    }
}
