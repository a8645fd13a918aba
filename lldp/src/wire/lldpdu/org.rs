//! The organisationally specific TLV (type 127): an OUI, a subtype and an
//! information string, kept opaque for DCBX and vendor TLVs, with the 802.3
//! maximum frame size as the one decoded here.

use super::tlv::MAX_VALUE_LEN;

/// OUI of IEEE 802.1 organisationally specific TLVs (DCBX in IEEE mode lives here).
pub const OUI_IEEE_802_1: [u8; 3] = [0x00, 0x80, 0xc2];
/// OUI of IEEE 802.3 organisationally specific TLVs (maximum frame size lives here).
pub const OUI_IEEE_802_3: [u8; 3] = [0x00, 0x12, 0x0f];
/// 802.3 subtype of the maximum frame size TLV (info: u16).
pub const SUBTYPE_802_3_MAX_FRAME_SIZE: u8 = 4;
/// Longest information string of an organisationally specific TLV (511 minus
/// OUI and subtype).
pub const MAX_ORG_INFO_LEN: usize = MAX_VALUE_LEN - 4;

/// Organisationally specific TLV (127), kept opaque so DCBX and vendor TLVs
/// (Ultra Ethernet LLR/CBFC among them) pass through to whoever understands them.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OrgTlv {
    /// Organisationally unique identifier.
    pub oui: [u8; 3],
    /// Organisationally defined subtype.
    pub subtype: u8,
    /// Information string, 0–507 bytes.
    pub info: Vec<u8>,
}

impl OrgTlv {
    /// The 802.3 maximum frame size TLV (OUI 00-12-0F, subtype 4) carrying `size`.
    pub fn new_max_frame_size(size: u16) -> OrgTlv {
        OrgTlv {
            oui: OUI_IEEE_802_3,
            subtype: SUBTYPE_802_3_MAX_FRAME_SIZE,
            info: size.to_be_bytes().to_vec(),
        }
    }

    /// The maximum frame size, when this is a well-formed 802.3 maximum frame size TLV.
    pub fn max_frame_size(&self) -> Option<u16> {
        if self.oui != OUI_IEEE_802_3 || self.subtype != SUBTYPE_802_3_MAX_FRAME_SIZE {
            return None;
        }
        <[u8; 2]>::try_from(self.info.as_slice())
            .ok()
            .map(u16::from_be_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_frame_size_helper() {
        let t = OrgTlv::new_max_frame_size(9216);
        assert_eq!(
            (t.oui, t.subtype, t.info.as_slice()),
            ([0x00, 0x12, 0x0f], 4, &[0x24, 0x00][..])
        );
        assert_eq!(t.max_frame_size(), Some(9216));
        let mut bad = t.clone();
        bad.info.push(0);
        assert_eq!(bad.max_frame_size(), None);
        let mut other = t;
        other.subtype = 1;
        assert_eq!(other.max_frame_size(), None);
    }
}
