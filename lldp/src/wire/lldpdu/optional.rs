//! The optional TLVs of 802.1AB kept as structs: system capabilities,
//! management address, and TLVs of a type not decoded here (kept as
//! received). The text TLVs (port and system description, system name) are
//! plain bytes on [`LldpduRepr`](super::LldpduRepr).

use super::cursor::{Reader, Writer};
use crate::wire::Result;

/// Longest management address (the address string is at most 32 bytes, subtype included).
pub const MAX_MGMT_ADDR_LEN: usize = 31;
/// Longest management address OID.
pub const MAX_MGMT_OID_LEN: usize = 128;
/// System capability bit: bridge (REFERENCE.md §2).
pub const CAP_BRIDGE: u16 = 0x04;
/// System capability bit: router (REFERENCE.md §2).
pub const CAP_ROUTER: u16 = 0x10;

/// System capabilities TLV: what the neighbour can be and what it is acting as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CapabilitiesTlv {
    /// Capabilities the system has ([`CAP_BRIDGE`], [`CAP_ROUTER`], ...).
    pub supported: u16,
    /// Capabilities currently enabled.
    pub enabled: u16,
}

/// Management address TLV: where the neighbour can be managed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ManagementAddressTlv {
    /// IANA address family of `address` (1 IPv4, 2 IPv6, 6 802 MAC).
    pub address_subtype: u8,
    /// The address, 1–31 bytes.
    pub address: Vec<u8>,
    /// Interface numbering subtype (1 unknown, 2 ifIndex, 3 system port number).
    pub interface_subtype: u8,
    /// Interface number.
    pub interface_number: u32,
    /// Object identifier of the hardware component, 0–128 bytes (BER encoded).
    pub oid: Vec<u8>,
}

impl ManagementAddressTlv {
    pub(super) fn value_len(&self) -> usize {
        // string length, subtype, address, if subtype, if number, oid length, oid
        1 + 1 + self.address.len() + 1 + 4 + 1 + self.oid.len()
    }

    pub(super) fn parse(value: &[u8]) -> Option<ManagementAddressTlv> {
        let mut r = Reader::new(value);
        let addr_str_len = usize::from(r.u8()?);
        if !(2..=MAX_MGMT_ADDR_LEN + 1).contains(&addr_str_len) {
            return None;
        }
        let address_subtype = r.u8()?;
        let address = r.take(addr_str_len - 1)?.to_vec();
        let interface_subtype = r.u8()?;
        let interface_number = r.u32()?;
        let oid_len = usize::from(r.u8()?);
        if oid_len > MAX_MGMT_OID_LEN {
            return None;
        }
        let oid = r.take(oid_len)?.to_vec();
        if !r.rest().is_empty() {
            return None;
        }
        Some(ManagementAddressTlv {
            address_subtype,
            address,
            interface_subtype,
            interface_number,
            oid,
        })
    }

    pub(super) fn is_valid(&self) -> bool {
        (1..=MAX_MGMT_ADDR_LEN).contains(&self.address.len()) && self.oid.len() <= MAX_MGMT_OID_LEN
    }

    pub(super) fn emit(&self, w: &mut Writer<'_>) -> Result<()> {
        // Lengths were checked by `is_valid`; the casts cannot truncate.
        w.u8((self.address.len() + 1) as u8)?;
        w.u8(self.address_subtype)?;
        w.put(&self.address)?;
        w.u8(self.interface_subtype)?;
        w.u32(self.interface_number)?;
        w.u8(self.oid.len() as u8)?;
        w.put(&self.oid)
    }
}

/// A TLV whose type (9–126) this module does not decode, kept as received.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownTlv {
    /// TLV type, 9–126.
    pub tlv_type: u8,
    /// The value bytes, 0–511.
    pub value: Vec<u8>,
}
