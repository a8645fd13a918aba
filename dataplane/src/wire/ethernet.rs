//! Ethernet II frames (no FCS: frames as AF_PACKET and TAP hand them over).

use super::{MacAddr, Result, WireError};

enum_with_unknown! {
    /// The EtherType of a frame, which decides who handles its payload.
    pub enum EtherType(u16) {
        /// IPv4 (0x0800).
        Ipv4 = 0x0800,
        /// ARP (0x0806).
        Arp = 0x0806,
        /// An 802.1Q VLAN tag follows (0x8100).
        Vlan = 0x8100,
        /// IPv6 (0x86DD).
        Ipv6 = 0x86DD,
        /// MAC control: PFC and 802.3x PAUSE (0x8808).
        MacControl = 0x8808,
        /// LLDP (0x88CC).
        Lldp = 0x88CC,
    }
}

mod field {
    use crate::wire::{Field, Rest};

    pub const DESTINATION: Field = 0..6;
    pub const SOURCE: Field = 6..12;
    pub const ETHERTYPE: Field = 12..14;
    pub const PAYLOAD: Rest = 14..;
}

/// Length of the Ethernet header: destination, source and EtherType.
pub const HEADER_LEN: usize = field::PAYLOAD.start;

/// Imbue a raw octet buffer with Ethernet frame structure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Wraps a buffer without checking its length; accessors may then panic.
    pub const fn new_unchecked(buffer: T) -> Frame<T> {
        Frame { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    ///
    /// # Errors
    /// `Truncated` when the buffer cannot hold the header.
    pub fn new_checked(buffer: T) -> Result<Frame<T>> {
        let frame = Self::new_unchecked(buffer);
        frame.check_len()?;
        Ok(frame)
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

    /// Bytes needed for a frame carrying `payload_len` bytes.
    pub const fn buffer_len(payload_len: usize) -> usize {
        HEADER_LEN + payload_len
    }

    /// Destination MAC address.
    #[inline]
    pub fn dst_addr(&self) -> MacAddr {
        MacAddr::from_bytes(&self.buffer.as_ref()[field::DESTINATION])
    }

    /// Source MAC address.
    #[inline]
    pub fn src_addr(&self) -> MacAddr {
        MacAddr::from_bytes(&self.buffer.as_ref()[field::SOURCE])
    }

    /// EtherType of the payload.
    #[inline]
    pub fn ethertype(&self) -> EtherType {
        let b = &self.buffer.as_ref()[field::ETHERTYPE];
        EtherType::from(u16::from_be_bytes([b[0], b[1]]))
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Frame<&'a T> {
    /// Everything after the header, with the frame's lifetime.
    #[inline]
    pub fn payload(&self) -> &'a [u8] {
        &self.buffer.as_ref()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Frame<T> {
    /// Sets the destination MAC address.
    #[inline]
    pub fn set_dst_addr(&mut self, addr: MacAddr) {
        self.buffer.as_mut()[field::DESTINATION].copy_from_slice(&addr.0);
    }

    /// Sets the source MAC address.
    #[inline]
    pub fn set_src_addr(&mut self, addr: MacAddr) {
        self.buffer.as_mut()[field::SOURCE].copy_from_slice(&addr.0);
    }

    /// Sets the EtherType.
    #[inline]
    pub fn set_ethertype(&mut self, ethertype: EtherType) {
        let v: u16 = ethertype.into();
        self.buffer.as_mut()[field::ETHERTYPE].copy_from_slice(&v.to_be_bytes());
    }

    /// Everything after the header, writable.
    #[inline]
    pub fn payload_mut(&mut self) -> &mut [u8] {
        &mut self.buffer.as_mut()[field::PAYLOAD]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Frame<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// The Ethernet header as plain data, for building frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EthernetRepr {
    /// Source MAC address.
    pub src_addr: MacAddr,
    /// Destination MAC address.
    pub dst_addr: MacAddr,
    /// EtherType of the payload.
    pub ethertype: EtherType,
}

impl EthernetRepr {
    /// Reads the header out of a checked frame.
    ///
    /// # Errors
    /// `Truncated` when the frame is shorter than the header.
    pub fn parse<T: AsRef<[u8]>>(frame: &Frame<T>) -> Result<EthernetRepr> {
        frame.check_len()?;
        Ok(EthernetRepr {
            src_addr: frame.src_addr(),
            dst_addr: frame.dst_addr(),
            ethertype: frame.ethertype(),
        })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        HEADER_LEN
    }

    /// Writes the header; the payload is left as it is.
    ///
    /// # Panics
    /// When the buffer is shorter than [`HEADER_LEN`].
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, frame: &mut Frame<T>) {
        frame.set_src_addr(self.src_addr);
        frame.set_dst_addr(self.dst_addr);
        frame.set_ethertype(self.ethertype);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    static FRAME_BYTES: [u8; 18] = [
        0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, // dst
        0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // src
        0x88, 0xcc, // LLDP
        0xaa, 0xbb, 0xcc, 0xdd, // payload
    ];

    fn repr() -> EthernetRepr {
        EthernetRepr {
            dst_addr: MacAddr([0x01, 0x80, 0xc2, 0, 0, 0x0e]),
            src_addr: MacAddr([0x02, 0, 0, 0, 0, 1]),
            ethertype: EtherType::Lldp,
        }
    }

    #[test]
    fn deconstruct() {
        let f = Frame::new_checked(&FRAME_BYTES[..]).unwrap();
        assert_eq!(f.dst_addr(), MacAddr([0x01, 0x80, 0xc2, 0, 0, 0x0e]));
        assert_eq!(f.src_addr(), MacAddr([0x02, 0, 0, 0, 0, 1]));
        assert_eq!(f.ethertype(), EtherType::Lldp);
        assert_eq!(f.payload(), &[0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(EthernetRepr::parse(&f).unwrap(), repr());
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 18];
        let mut f = Frame::new_unchecked(&mut bytes[..]);
        repr().emit(&mut f);
        f.payload_mut().copy_from_slice(&[0xaa, 0xbb, 0xcc, 0xdd]);
        assert_eq!(f.into_inner(), &FRAME_BYTES[..]);
    }

    #[test]
    fn truncated() {
        assert_eq!(
            Frame::new_checked(&FRAME_BYTES[..13]),
            Err(WireError::Truncated)
        );
        assert_eq!(
            Frame::new_checked(&FRAME_BYTES[..14]).unwrap().payload(),
            &[] as &[u8]
        );
    }

    #[test]
    fn ethertype_is_total() {
        assert_eq!(EtherType::from(0x8100), EtherType::Vlan);
        assert_eq!(EtherType::from(0x8808), EtherType::MacControl);
        assert_eq!(EtherType::from(0x88a8), EtherType::Unknown(0x88a8));
        assert_eq!(u16::from(EtherType::Unknown(0x88a8)), 0x88a8);
        assert_eq!(u16::from(EtherType::Ipv6), 0x86dd);
    }

    proptest! {
        #[test]
        fn repr_round_trip(dst in any::<[u8; 6]>(), src in any::<[u8; 6]>(), et in any::<u16>()) {
            let r = EthernetRepr { dst_addr: MacAddr(dst), src_addr: MacAddr(src), ethertype: EtherType::from(et) };
            let mut buf = [0xa5u8; HEADER_LEN];
            r.emit(&mut Frame::new_unchecked(&mut buf[..]));
            prop_assert_eq!(EthernetRepr::parse(&Frame::new_checked(&buf[..]).unwrap()).unwrap(), r);
        }
    }
}
