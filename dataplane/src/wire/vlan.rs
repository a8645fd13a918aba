//! The 802.1Q tag: the four bytes after an outer EtherType of 0x8100.
//!
//! The view starts at the Tag Control Information (TCI), i.e. at the payload
//! of an Ethernet frame whose EtherType is [`EtherType::Vlan`].

use super::ethernet::EtherType;
use super::{Result, WireError};

mod field {
    use crate::wire::{Field, Rest};

    pub const TCI: Field = 0..2;
    pub const ETHERTYPE: Field = 2..4;
    pub const PAYLOAD: Rest = 4..;
}

/// Length of the tag: TCI and inner EtherType.
pub const HEADER_LEN: usize = field::PAYLOAD.start;

/// Imbue a raw octet buffer with 802.1Q tag structure, to read the priority
/// (PCP) a host marked and the VLAN it chose.
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
    /// `Truncated` when the buffer cannot hold the tag.
    pub fn new_checked(buffer: T) -> Result<Packet<T>> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensures no accessor can panic.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than [`HEADER_LEN`].
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

    /// The whole Tag Control Information word.
    #[inline]
    pub fn tci(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::TCI];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// Priority code point (802.1p priority, 0–7).
    #[inline]
    pub fn pcp(&self) -> u8 {
        (self.tci() >> 13) as u8
    }

    /// Drop eligible indicator.
    #[inline]
    pub fn dei(&self) -> bool {
        self.tci() & 0x1000 != 0
    }

    /// VLAN identifier (12 bits).
    #[inline]
    pub fn vid(&self) -> u16 {
        self.tci() & 0x0fff
    }

    /// EtherType of the tagged payload.
    #[inline]
    pub fn ethertype(&self) -> EtherType {
        let b = &self.buffer.as_ref()[field::ETHERTYPE];
        EtherType::from(u16::from_be_bytes([b[0], b[1]]))
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Packet<&'a T> {
    /// Everything after the tag, with the buffer's lifetime.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Sets the whole TCI word.
    #[inline]
    pub fn set_tci(&mut self, tci: u16) {
        self.buffer.as_mut()[field::TCI].copy_from_slice(&tci.to_be_bytes());
    }

    /// Sets the priority code point; only the low 3 bits are used.
    #[inline]
    pub fn set_pcp(&mut self, pcp: u8) {
        let tci = (self.tci() & 0x1fff) | (u16::from(pcp & 7) << 13);
        self.set_tci(tci);
    }

    /// Sets the drop eligible indicator.
    #[inline]
    pub fn set_dei(&mut self, dei: bool) {
        let tci = (self.tci() & !0x1000) | if dei { 0x1000 } else { 0 };
        self.set_tci(tci);
    }

    /// Sets the VLAN identifier; only the low 12 bits are used.
    #[inline]
    pub fn set_vid(&mut self, vid: u16) {
        let tci = (self.tci() & 0xf000) | (vid & 0x0fff);
        self.set_tci(tci);
    }

    /// Sets the EtherType of the tagged payload.
    #[inline]
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        let v: u16 = ethertype.into();
        self.buffer.as_mut()[field::ETHERTYPE].copy_from_slice(&v.to_be_bytes());
    }

    /// Everything after the tag, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// The 802.1Q tag as plain data, for tagging frames toward a host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VlanRepr {
    /// Priority code point (0–7).
    pub pcp: u8,
    /// Drop eligible indicator.
    pub dei: bool,
    /// VLAN identifier (0–4095).
    pub vid: u16,
    /// EtherType of the tagged payload.
    pub ethertype: EtherType,
}

impl VlanRepr {
    /// Reads the tag out of a view.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than the tag.
    pub fn parse<T: AsRef<[u8]>>(packet: &Packet<T>) -> Result<VlanRepr> {
        packet.check_len()?;
        Ok(VlanRepr {
            pcp: packet.pcp(),
            dei: packet.dei(),
            vid: packet.vid(),
            ethertype: packet.ethertype(),
        })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the tag; out-of-range `pcp` and `vid` bits are dropped.
    ///
    /// # Panics
    /// When the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, packet: &mut Packet<T>) {
        let tci = (u16::from(self.pcp & 7) << 13)
            | if self.dei { 0x1000 } else { 0 }
            | (self.vid & 0x0fff);
        packet.set_tci(tci);
        packet.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// PCP 3, DEI 0, VID 100, inner IPv4, two payload bytes.
    static TAG_BYTES: [u8; 6] = [0x60, 0x64, 0x08, 0x00, 0x45, 0x00];

    fn repr() -> VlanRepr {
        VlanRepr {
            pcp: 3,
            dei: false,
            vid: 100,
            ethertype: EtherType::Ipv4,
        }
    }

    #[test]
    fn deconstruct() {
        let p = Packet::new_checked(&TAG_BYTES[..]).unwrap();
        assert_eq!(p.tci(), 0x6064);
        assert_eq!(p.pcp(), 3);
        assert!(!p.dei());
        assert_eq!(p.vid(), 100);
        assert_eq!(p.ethertype(), EtherType::Ipv4);
        assert_eq!(p.payload(), &[0x45, 0x00]);
        assert_eq!(VlanRepr::parse(&p).unwrap(), repr());
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 6];
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        repr().emit(&mut p);
        p.payload_mut().copy_from_slice(&[0x45, 0x00]);
        assert_eq!(&bytes, &TAG_BYTES);
    }

    #[test]
    fn setters_touch_only_their_bits() {
        let mut bytes = [0u8; 4];
        let mut p = Packet::new_unchecked(&mut bytes[..]);
        p.set_vid(0xfff);
        p.set_pcp(7);
        p.set_dei(true);
        assert_eq!(p.tci(), 0xffff);
        p.set_pcp(0);
        assert_eq!(p.tci(), 0x1fff);
        p.set_dei(false);
        p.set_vid(1);
        assert_eq!(p.tci(), 0x0001);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            Packet::new_checked(&TAG_BYTES[..3]),
            Err(WireError::Truncated)
        );
    }

    proptest! {
        #[test]
        fn repr_round_trip(pcp in 0u8..8, dei in any::<bool>(), vid in 0u16..4096, et in any::<u16>()) {
            let r = VlanRepr { pcp, dei, vid, ethertype: EtherType::from(et) };
            let mut buf = [0xa5u8; HEADER_LEN];
            r.emit(&mut Packet::new_unchecked(&mut buf[..]));
            prop_assert_eq!(VlanRepr::parse(&Packet::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
