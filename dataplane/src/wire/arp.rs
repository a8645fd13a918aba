//! ARP for IPv4 over Ethernet (RFC 826), the only kind a routed port meets.

use std::net::Ipv4Addr;

use super::ethernet::EtherType;
use super::{MacAddr, Result, WireError};

enum_with_unknown! {
    /// What an ARP packet asks or answers.
    pub enum Operation(u16) {
        /// Who has `target_ip`? Tell `source_ip`.
        Request = 1,
        /// `source_ip` is at `source_hw`.
        Reply = 2,
    }
}

/// ARP hardware type for Ethernet.
pub const HTYPE_ETHERNET: u16 = 1;

mod field {
    use crate::wire::Field;

    pub const HTYPE: Field = 0..2;
    pub const PTYPE: Field = 2..4;
    pub const HLEN: usize = 4;
    pub const PLEN: usize = 5;
    pub const OPER: Field = 6..8;
    pub const SHA: Field = 8..14;
    pub const SPA: Field = 14..18;
    pub const THA: Field = 18..24;
    pub const TPA: Field = 24..28;
}

/// Length of an Ethernet/IPv4 ARP packet.
pub const PACKET_LEN: usize = field::TPA.end;

/// Imbue a raw octet buffer with Ethernet/IPv4 ARP structure, so the switch can
/// answer requests for its addresses and learn neighbours from replies.
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
    /// `Truncated` when the buffer cannot hold an Ethernet/IPv4 ARP packet.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures no accessor can panic.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than [`PACKET_LEN`] (28) bytes.
    pub fn check_len(&self) -> Result<()> {
        if self.buffer.as_ref().len() < PACKET_LEN {
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

    fn ipv4_at(&self, f: core::ops::Range<usize>) -> Ipv4Addr {
        let b = &self.buffer.as_ref()[f];
        Ipv4Addr::new(b[0], b[1], b[2], b[3])
    }

    /// Hardware type (1 for Ethernet).
    #[inline]
    pub fn hardware_type(&self) -> u16 {
        self.u16_at(field::HTYPE)
    }

    /// Protocol type (0x0800 for IPv4).
    #[inline]
    pub fn protocol_type(&self) -> EtherType {
        EtherType::from(self.u16_at(field::PTYPE))
    }

    /// Hardware address length (6 for Ethernet).
    #[inline]
    pub fn hardware_len(&self) -> u8 {
        self.buffer.as_ref()[field::HLEN]
    }

    /// Protocol address length (4 for IPv4).
    #[inline]
    pub fn protocol_len(&self) -> u8 {
        self.buffer.as_ref()[field::PLEN]
    }

    /// Request, reply or another operation.
    #[inline]
    pub fn operation(&self) -> Operation {
        Operation::from(self.u16_at(field::OPER))
    }

    /// Sender hardware address.
    #[inline]
    pub fn source_hw(&self) -> MacAddr {
        MacAddr::from_bytes(&self.buffer.as_ref()[field::SHA])
    }

    /// Sender protocol address.
    #[inline]
    pub fn source_ip(&self) -> Ipv4Addr {
        self.ipv4_at(field::SPA)
    }

    /// Target hardware address (zero in a request).
    #[inline]
    pub fn target_hw(&self) -> MacAddr {
        MacAddr::from_bytes(&self.buffer.as_ref()[field::THA])
    }

    /// Target protocol address.
    #[inline]
    pub fn target_ip(&self) -> Ipv4Addr {
        self.ipv4_at(field::TPA)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, f: core::ops::Range<usize>, v: u16) {
        self.buffer.as_mut()[f].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the hardware type.
    #[inline]
    pub fn set_hardware_type(&mut self, v: u16) {
        self.set_u16_at(field::HTYPE, v);
    }

    /// Sets the protocol type.
    #[inline]
    pub fn set_protocol_type(&mut self, v: EtherType) {
        self.set_u16_at(field::PTYPE, v.into());
    }

    /// Sets the hardware address length.
    #[inline]
    pub fn set_hardware_len(&mut self, v: u8) {
        self.buffer.as_mut()[field::HLEN] = v;
    }

    /// Sets the protocol address length.
    #[inline]
    pub fn set_protocol_len(&mut self, v: u8) {
        self.buffer.as_mut()[field::PLEN] = v;
    }

    /// Sets the operation.
    #[inline]
    pub fn set_operation(&mut self, v: Operation) {
        self.set_u16_at(field::OPER, v.into());
    }

    /// Sets the sender hardware address.
    #[inline]
    pub fn set_source_hw(&mut self, v: MacAddr) {
        self.buffer.as_mut()[field::SHA].copy_from_slice(&v.0);
    }

    /// Sets the sender protocol address.
    #[inline]
    pub fn set_source_ip(&mut self, v: Ipv4Addr) {
        self.buffer.as_mut()[field::SPA].copy_from_slice(&v.octets());
    }

    /// Sets the target hardware address.
    #[inline]
    pub fn set_target_hw(&mut self, v: MacAddr) {
        self.buffer.as_mut()[field::THA].copy_from_slice(&v.0);
    }

    /// Sets the target protocol address.
    #[inline]
    pub fn set_target_ip(&mut self, v: Ipv4Addr) {
        self.buffer.as_mut()[field::TPA].copy_from_slice(&v.octets());
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// An Ethernet/IPv4 ARP packet as plain data, what the neighbour code needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArpRepr {
    /// Request, reply or another operation.
    pub operation: Operation,
    /// Sender hardware address.
    pub source_hw: MacAddr,
    /// Sender IPv4 address.
    pub source_ip: Ipv4Addr,
    /// Target hardware address.
    pub target_hw: MacAddr,
    /// Target IPv4 address.
    pub target_ip: Ipv4Addr,
}

impl ArpRepr {
    /// Reads an Ethernet/IPv4 ARP packet.
    ///
    /// # Errors
    /// `Truncated` when shorter than 28 bytes; `Malformed` when the hardware or
    /// protocol type or length is not Ethernet/IPv4.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<ArpRepr> {
        packet.check_len()?;
        if packet.hardware_type() != HTYPE_ETHERNET
            || packet.protocol_type() != EtherType::Ipv4
            || packet.hardware_len() != 6
            || packet.protocol_len() != 4
        {
            return Err(WireError::Malformed);
        }
        Ok(ArpRepr {
            operation: packet.operation(),
            source_hw: packet.source_hw(),
            source_ip: packet.source_ip(),
            target_hw: packet.target_hw(),
            target_ip: packet.target_ip(),
        })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        PACKET_LEN
    }

    /// Writes all 28 bytes of the packet.
    ///
    /// # Panics
    /// When the buffer is shorter than [`PACKET_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        packet.set_hardware_type(HTYPE_ETHERNET);
        packet.set_protocol_type(EtherType::Ipv4);
        packet.set_hardware_len(6);
        packet.set_protocol_len(4);
        packet.set_operation(self.operation);
        packet.set_source_hw(self.source_hw);
        packet.set_source_ip(self.source_ip);
        packet.set_target_hw(self.target_hw);
        packet.set_target_ip(self.target_ip);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Who has 10.0.0.2? Tell 10.0.0.1 (02:00:00:00:00:01).
    static REQUEST_BYTES: [u8; 28] = [
        0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01, // htype ptype hlen plen oper
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 10, 0, 0, 1, // sha spa
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 10, 0, 0, 2, // tha tpa
    ];

    fn repr() -> ArpRepr {
        ArpRepr {
            operation: Operation::Request,
            source_hw: MacAddr([2, 0, 0, 0, 0, 1]),
            source_ip: Ipv4Addr::new(10, 0, 0, 1),
            target_hw: MacAddr::ZERO,
            target_ip: Ipv4Addr::new(10, 0, 0, 2),
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&REQUEST_BYTES[..]).unwrap();
        assert_eq!(p.hardware_type(), 1);
        assert_eq!(p.protocol_type(), EtherType::Ipv4);
        assert_eq!((p.hardware_len(), p.protocol_len()), (6, 4));
        assert_eq!(p.operation(), Operation::Request);
        assert_eq!(p.source_hw(), MacAddr([2, 0, 0, 0, 0, 1]));
        assert_eq!(p.source_ip(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(p.target_hw(), MacAddr::ZERO);
        assert_eq!(p.target_ip(), Ipv4Addr::new(10, 0, 0, 2));
        assert_eq!(ArpRepr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 28];
        repr().emit(&mut Packet::new_unchecked(&mut bytes[..]));
        assert_eq!(bytes, REQUEST_BYTES);
    }

    #[test]
    fn truncated_and_foreign() {
        assert_eq!(
            Packet::new_checked(&REQUEST_BYTES[..27]),
            Err(WireError::Truncated)
        );
        let mut other = REQUEST_BYTES;
        other[5] = 16; // IPv6-sized protocol addresses
        assert_eq!(
            ArpRepr::parse(&Packet::new_checked(&other[..]).unwrap()),
            Err(WireError::Malformed)
        );
        other = REQUEST_BYTES;
        other[7] = 9;
        let p = Packet::new_checked(&other[..]).unwrap();
        assert_eq!(p.operation(), Operation::Unknown(9));
    }

    proptest! {
        #[test]
        fn repr_round_trip(op in any::<u16>(), sh in any::<[u8; 6]>(), si in any::<u32>(),
                           th in any::<[u8; 6]>(), ti in any::<u32>()) {
            let r = ArpRepr {
                operation: Operation::from(op),
                source_hw: MacAddr(sh),
                source_ip: Ipv4Addr::from(si),
                target_hw: MacAddr(th),
                target_ip: Ipv4Addr::from(ti),
            };
            let mut buf = [0xa5u8; PACKET_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            prop_assert_eq!(ArpRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
