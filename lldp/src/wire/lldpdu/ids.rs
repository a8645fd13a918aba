//! The Chassis ID and Port ID TLVs: who the neighbour is and which of its
//! ports sent the LLDPDU, with the subtype that says how to read each.

use std::borrow::Cow;

use crate::wire::MacAddr;

/// Shortest Chassis/Port ID TLV value, subtype included.
pub const MIN_ID_LEN: usize = 2;
/// Longest Chassis/Port ID TLV value, subtype included.
pub const MAX_ID_LEN: usize = 256;

enum_with_unknown! {
    /// Chassis ID subtype (802.1AB 8.5.2.2): what kind of identifier follows,
    /// so the agent can print a MAC as a MAC and a name as text.
    pub enum ChassisIdSubtype(u8) {
        /// Entity physical alias of a chassis component (1).
        ChassisComponent = 1,
        /// Interface alias (2).
        InterfaceAlias = 2,
        /// Entity physical alias of a port component (3).
        PortComponent = 3,
        /// MAC address (4).
        MacAddress = 4,
        /// Network address, first byte an IANA address family (5).
        NetworkAddress = 5,
        /// Interface name (6).
        InterfaceName = 6,
        /// Locally assigned (7).
        Local = 7,
    }
}

enum_with_unknown! {
    /// Port ID subtype (802.1AB 8.5.3.2): what kind of identifier follows.
    pub enum PortIdSubtype(u8) {
        /// Interface alias (1).
        InterfaceAlias = 1,
        /// Entity physical alias of a port component (2).
        PortComponent = 2,
        /// MAC address (3).
        MacAddress = 3,
        /// Network address, first byte an IANA address family (4).
        NetworkAddress = 4,
        /// Interface name (5).
        InterfaceName = 5,
        /// Agent circuit ID (6).
        AgentCircuitId = 6,
        /// Locally assigned (7).
        Local = 7,
    }
}

/// Chassis ID TLV: who the neighbour is, keyed with the port ID in the agent's table.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ChassisIdTlv {
    /// What kind of identifier `id` is.
    pub subtype: ChassisIdSubtype,
    /// The identifier, 1–255 bytes.
    pub id: Vec<u8>,
}

impl ChassisIdTlv {
    /// The MAC address, when the subtype says MAC and six bytes follow.
    pub fn mac(&self) -> Option<MacAddr> {
        match (self.subtype, <[u8; 6]>::try_from(self.id.as_slice())) {
            (ChassisIdSubtype::MacAddress, Ok(m)) => Some(MacAddr(m)),
            _ => None,
        }
    }

    /// The identifier as text, invalid UTF-8 replaced, for display.
    pub fn id_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.id)
    }
}

/// Port ID TLV: which port of the neighbour this LLDPDU came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PortIdTlv {
    /// What kind of identifier `id` is.
    pub subtype: PortIdSubtype,
    /// The identifier, 1–255 bytes.
    pub id: Vec<u8>,
}

impl PortIdTlv {
    /// The MAC address, when the subtype says MAC and six bytes follow.
    pub fn mac(&self) -> Option<MacAddr> {
        match (self.subtype, <[u8; 6]>::try_from(self.id.as_slice())) {
            (PortIdSubtype::MacAddress, Ok(m)) => Some(MacAddr(m)),
            _ => None,
        }
    }

    /// The identifier as text, invalid UTF-8 replaced, for display.
    pub fn id_lossy(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.id)
    }
}
