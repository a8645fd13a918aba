//! The LLDP TLV header view ([`Tlv`]) and the walk over an LLDPDU's TLVs
//! ([`TlvIter`]): the 7-bit type / 9-bit length framing every TLV shares.

use crate::wire::{Result, WireError};

enum_with_unknown! {
    /// LLDP TLV type (7 bits).
    pub enum TlvType(u8) {
        /// End of LLDPDU (0, length 0), always last.
        End = 0,
        /// Chassis ID (1), mandatory first.
        ChassisId = 1,
        /// Port ID (2), mandatory second.
        PortId = 2,
        /// Time to live (3), mandatory third; 0 means shutdown.
        Ttl = 3,
        /// Port description (4).
        PortDescription = 4,
        /// System name (5).
        SystemName = 5,
        /// System description (6).
        SystemDescription = 6,
        /// System capabilities (7).
        SystemCapabilities = 7,
        /// Management address (8).
        ManagementAddress = 8,
        /// Organizationally specific (127): OUI, subtype, information (DCBX lives here).
        OrganizationallySpecific = 127,
    }
}

mod field {
    use crate::wire::{Field, Rest};

    pub const HEADER: Field = 0..2;
    pub const VALUE: Rest = 2..;
}

/// Length of a TLV header: type (7 bits) and length (9 bits).
pub const HEADER_LEN: usize = field::VALUE.start;
/// Largest value length a TLV header can express.
pub const MAX_VALUE_LEN: usize = 0x1ff;

pub(super) const TYPE_SHIFT: u16 = 9;
pub(super) const LEN_MASK: u16 = 0x01ff;

/// Imbue a raw octet buffer with LLDP TLV structure; the buffer starts at the
/// TLV header and may run past the TLV (into the next one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tlv<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Tlv<T> {
    /// Wraps a buffer without checking its length; accessors may then panic.
    pub const fn new_unchecked(buffer: T) -> Tlv<T> {
        Tlv { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len).
    ///
    /// # Errors
    /// `Truncated` when the buffer cannot hold the header and value.
    pub fn new_checked(buffer: T) -> Result<Tlv<T>> {
        let t = Self::new_unchecked(buffer);
        t.check_len()?;
        Ok(t)
    }

    /// Ensures no accessor can panic: the header and the `length` value
    /// bytes it claims are present.
    ///
    /// # Errors
    /// `Truncated` when the buffer is shorter than either.
    pub fn check_len(&self) -> Result<()> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN || len < self.total_len() {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn header(&self) -> u16 {
        let b = &self.buffer.as_ref()[field::HEADER];
        u16::from_be_bytes([b[0], b[1]])
    }

    /// TLV type (top 7 bits of the header).
    #[inline]
    pub fn tlv_type(&self) -> TlvType {
        TlvType::from((self.header() >> TYPE_SHIFT) as u8)
    }

    /// Value length in bytes (low 9 bits of the header).
    #[inline]
    pub fn length(&self) -> u16 {
        self.header() & LEN_MASK
    }

    /// Bytes the TLV occupies, header included.
    #[inline]
    pub fn total_len(&self) -> usize {
        HEADER_LEN + usize::from(self.length())
    }
}

impl<'a, T: AsRef<[u8]> + ?Sized> Tlv<&'a T> {
    /// The `length` value bytes.
    #[inline]
    pub fn value(&self) -> &'a [u8] {
        &self.buffer.as_ref()[HEADER_LEN..self.total_len()]
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Tlv<T> {
    fn set_header(&mut self, v: u16) {
        self.buffer.as_mut()[field::HEADER].copy_from_slice(&v.to_be_bytes());
    }

    /// Sets the type; only the low 7 bits are used.
    #[inline]
    pub fn set_tlv_type(&mut self, t: TlvType) {
        let t = u16::from(u8::from(t) & 0x7f);
        let v = (self.header() & LEN_MASK) | (t << TYPE_SHIFT);
        self.set_header(v);
    }

    /// Sets the value length; only the low 9 bits are used.
    #[inline]
    pub fn set_length(&mut self, len: u16) {
        let v = (self.header() & !LEN_MASK) | (len & LEN_MASK);
        self.set_header(v);
    }

    /// The `length` value bytes, writable.
    #[inline]
    pub fn value_mut(&mut self) -> &mut [u8] {
        let end = self.total_len();
        &mut self.buffer.as_mut()[HEADER_LEN..end]
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Tlv<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// Walks the TLVs of an LLDPDU without panicking. Yields each TLV (End
/// included, after which the walk stops); a TLV running past the end yields
/// one `Truncated` error, then the walk stops. Bytes after End, such as
/// Ethernet padding, are not visited.
#[derive(Debug, Clone)]
pub struct TlvIter<'a> {
    rest: &'a [u8],
}

impl<'a> TlvIter<'a> {
    /// Iterates the TLVs of `lldpdu` (the Ethernet payload of an LLDP frame).
    pub const fn new(lldpdu: &'a [u8]) -> TlvIter<'a> {
        TlvIter { rest: lldpdu }
    }
}

impl<'a> Iterator for TlvIter<'a> {
    type Item = Result<Tlv<&'a [u8]>>;

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest;
        if rest.is_empty() {
            return None;
        }
        self.rest = &[];
        let tlv = match Tlv::new_checked(rest) {
            Ok(t) => t,
            Err(e) => return Some(Err(e)),
        };
        let len = tlv.total_len();
        let (this, next) = rest.split_at(len);
        if tlv.tlv_type() != TlvType::End {
            self.rest = next;
        }
        Some(Ok(Tlv::new_unchecked(this)))
    }
}

/// Iterates the TLVs of an LLDPDU; see [`TlvIter`].
pub fn tlvs(lldpdu: &[u8]) -> TlvIter<'_> {
    TlvIter::new(lldpdu)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
pub(super) mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Chassis ID (MAC 02:00:00:00:00:01), Port ID (name "e1"), TTL 120,
    /// the PFC TLV of REFERENCE.md §3, End, then padding.
    pub(in crate::wire::lldpdu) static LLDPDU: [u8; 36] = [
        0x02, 0x07, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, // chassis
        0x04, 0x03, 0x05, b'e', b'1', // port
        0x06, 0x02, 0x00, 0x78, // ttl
        0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08, // org: DCBX PFC
        0x00, 0x00, // end
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // padding
    ];

    #[test]
    fn deconstruct() {
        let t = Tlv::new_checked(&LLDPDU[18..]).unwrap();
        assert_eq!(t.tlv_type(), TlvType::OrganizationallySpecific);
        assert_eq!(t.length(), 6);
        assert_eq!(t.total_len(), 8);
        assert_eq!(t.value(), &[0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08]);
        let all: Vec<_> = tlvs(&LLDPDU).map(|t| t.unwrap()).collect();
        let kinds: Vec<_> = all.iter().map(|t| t.tlv_type()).collect();
        assert_eq!(
            kinds,
            [
                TlvType::ChassisId,
                TlvType::PortId,
                TlvType::Ttl,
                TlvType::OrganizationallySpecific,
                TlvType::End
            ]
        );
        assert_eq!(all[2].value(), &[0x00, 0x78]);
        assert_eq!(all[1].value(), &[0x05, b'e', b'1']);
    }

    #[test]
    fn construct() {
        let mut bytes = [0xa5u8; 8];
        let mut t = Tlv::new_unchecked(&mut bytes[..]);
        t.set_tlv_type(TlvType::OrganizationallySpecific);
        t.set_length(6);
        t.value_mut()
            .copy_from_slice(&[0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08]);
        assert_eq!(&bytes, &LLDPDU[18..26]);
        let mut max = [0u8; 2];
        let mut t = Tlv::new_unchecked(&mut max[..]);
        t.set_length(MAX_VALUE_LEN as u16);
        t.set_tlv_type(TlvType::Unknown(0x7f));
        assert_eq!(max, [0xff, 0xff]);
    }

    #[test]
    fn truncated() {
        assert_eq!(Tlv::new_checked(&LLDPDU[..1]), Err(WireError::Truncated));
        assert_eq!(Tlv::new_checked(&LLDPDU[..8]), Err(WireError::Truncated));
        // The walk reports the cut TLV once, then stops.
        let cut: Vec<_> = tlvs(&LLDPDU[..12]).collect();
        assert_eq!(cut.len(), 2);
        assert!(cut[0].is_ok());
        assert_eq!(cut[1], Err(WireError::Truncated));
        // Without End, the walk ends with the bytes.
        assert_eq!(tlvs(&LLDPDU[..18]).count(), 3);
        assert_eq!(tlvs(&[]).count(), 0);
    }

    proptest! {
        #[test]
        fn walk_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let mut seen = 0usize;
            for t in tlvs(&bytes) {
                match t {
                    Ok(t) => { seen += t.total_len(); let _ = (t.tlv_type(), t.value()); }
                    Err(_) => break,
                }
            }
            prop_assert!(seen <= bytes.len());
        }
    }
}
