//! DCBX: the data centre bridging configuration peers exchange inside LLDP
//! organisationally specific TLVs, so a lossless class is set up the same
//! way on both ends of a link.
//!
//! Two dialects:
//!
//! - **IEEE 802.1Qaz** (OUI 00-80-C2): [`EtsRepr`] (ETS Configuration 0x09
//!   and Recommendation 0x0A), [`PfcRepr`] (0x0B), [`AppRepr`] (0x0C);
//!   layouts in REFERENCE.md §3.
//! - **CEE**, the pre-standard "DCBX base protocol v1.01" (OUI 00-1B-21,
//!   subtype 2): [`CeeRepr`], a list of sub-TLVs with the LLDP 7-bit type /
//!   9-bit length header.
//!
//! Every `parse` here takes the organisationally specific TLV's information
//! string **after** the OUI and subtype, i.e. [`OrgTlv::info`], and every
//! `emit` writes that same part; `to_org_tlv` adds the OUI and subtype.
//! [`DcbxTlv`] dispatches on an [`OrgTlv`]. Parsing never panics; lengths
//! are checked strictly, field values are kept as received (unknown enum
//! values survive in `Unknown`, reserved bits are ignored and emitted as 0).
//!
//! The parts, one per file: the IEEE TLVs (`ieee`) and the CEE TLV (`cee`),
//! each with its tests. This file holds what both share (length-exact
//! reads, nibble packing, building an [`OrgTlv`]) and the dispatch,
//! [`DcbxTlv`]. Every item is re-exported here, so paths stay
//! `wire::dcbx::Name`.

use super::lldpdu::{OrgTlv, Reader, OUI_IEEE_802_1};
use super::{Result, WireError};

mod cee;
mod ieee;

pub use cee::{
    CeeApp, CeeAppEntry, CeeControl, CeeFeatureHeader, CeePfc, CeePg, CeeRepr, CeeUnknownTlv,
    CEE_APP_ENTRY_LEN, CEE_CONTROL_LEN, CEE_FEATURE_HEADER_LEN, CEE_PFC_LEN, CEE_PGID_STRICT,
    CEE_PG_LEN, OUI_CEE, SUBTYPE_CEE,
};
pub use ieee::{
    AppEntry, AppRepr, AppSelector, EtsRepr, PfcRepr, Tsa, APP_ENTRY_LEN, ETS_LEN, MAX_APP_ENTRIES,
    PFC_LEN, SUBTYPE_APP, SUBTYPE_ETS_CONFIG, SUBTYPE_ETS_RECOMMENDATION, SUBTYPE_PFC,
};

/// Reads a length-exact structure: `Truncated` when short, `Malformed` when long.
fn exact(info: &[u8], len: usize) -> Result<Reader<'_>> {
    match info.len().cmp(&len) {
        core::cmp::Ordering::Less => Err(WireError::Truncated),
        core::cmp::Ordering::Greater => Err(WireError::Malformed),
        core::cmp::Ordering::Equal => Ok(Reader::new(info)),
    }
}

/// Unpacks eight nibbles, priority 0 in the high nibble of the first byte.
fn unpack_nibbles(b: [u8; 4]) -> [u8; 8] {
    let mut out = [0u8; 8];
    for (pair, byte) in out.chunks_exact_mut(2).zip(b) {
        if let [hi, lo] = pair {
            *hi = byte >> 4;
            *lo = byte & 0x0f;
        }
    }
    out
}

/// Packs eight nibbles, priority 0 in the high nibble of the first byte.
///
/// # Errors
/// `Malformed` when a value needs more than 4 bits.
fn pack_nibbles(v: [u8; 8]) -> Result<[u8; 4]> {
    if v.iter().any(|&n| n > 0x0f) {
        return Err(WireError::Malformed);
    }
    let mut out = [0u8; 4];
    for (byte, pair) in out.iter_mut().zip(v.chunks_exact(2)) {
        if let [hi, lo] = pair {
            *byte = (hi << 4) | lo;
        }
    }
    Ok(out)
}

/// Builds an organisationally specific TLV from an emitter of its info.
fn org_tlv(
    oui: [u8; 3],
    subtype: u8,
    len: usize,
    emit: impl FnOnce(&mut [u8]) -> Result<usize>,
) -> Result<OrgTlv> {
    let mut info = vec![0u8; len];
    let n = emit(&mut info)?;
    info.truncate(n);
    Ok(OrgTlv { oui, subtype, info })
}

/// Any DCBX TLV, decoded from an [`OrgTlv`], so the agent can handle a
/// neighbour's TLVs with one `match`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DcbxTlv {
    /// IEEE ETS Configuration.
    EtsConfig(EtsRepr),
    /// IEEE ETS Recommendation (`willing`, `cbs`, `max_tcs` unused).
    EtsRecommendation(EtsRepr),
    /// IEEE PFC Configuration.
    Pfc(PfcRepr),
    /// IEEE Application Priority.
    App(AppRepr),
    /// CEE DCBX.
    Cee(CeeRepr),
}

impl DcbxTlv {
    /// Decodes `org` when it is a DCBX TLV; `None` for any other OUI/subtype.
    ///
    /// # Errors
    /// Inside the `Some`, as the matching repr's `parse`.
    pub fn parse(org: &OrgTlv) -> Option<Result<DcbxTlv>> {
        let info = org.info.as_slice();
        Some(match (org.oui, org.subtype) {
            (OUI_IEEE_802_1, SUBTYPE_ETS_CONFIG) => {
                EtsRepr::parse_config(info).map(DcbxTlv::EtsConfig)
            }
            (OUI_IEEE_802_1, SUBTYPE_ETS_RECOMMENDATION) => {
                EtsRepr::parse_recommendation(info).map(DcbxTlv::EtsRecommendation)
            }
            (OUI_IEEE_802_1, SUBTYPE_PFC) => PfcRepr::parse(info).map(DcbxTlv::Pfc),
            (OUI_IEEE_802_1, SUBTYPE_APP) => AppRepr::parse(info).map(DcbxTlv::App),
            (OUI_CEE, SUBTYPE_CEE) => CeeRepr::parse(info).map(DcbxTlv::Cee),
            _ => return None,
        })
    }

    /// Encodes back into an organisationally specific TLV.
    ///
    /// # Errors
    /// As the matching repr's `emit`.
    pub fn to_org_tlv(&self) -> Result<OrgTlv> {
        match self {
            DcbxTlv::EtsConfig(e) => e.to_config_tlv(),
            DcbxTlv::EtsRecommendation(e) => e.to_recommendation_tlv(),
            DcbxTlv::Pfc(p) => p.to_org_tlv(),
            DcbxTlv::App(a) => a.to_org_tlv(),
            DcbxTlv::Cee(c) => c.to_org_tlv(),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::wire::lldpdu::{
        ChassisIdSubtype, ChassisIdTlv, LldpduRepr, PortIdSubtype, PortIdTlv,
    };
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// Parses a single org TLV through the whole LLDPDU path.
    pub(super) fn org_of(tlv: &[u8]) -> OrgTlv {
        let mut pdu = LldpduRepr::new(
            ChassisIdTlv {
                subtype: ChassisIdSubtype::Local,
                id: b"c".to_vec(),
            },
            PortIdTlv {
                subtype: PortIdSubtype::Local,
                id: b"p".to_vec(),
            },
            120,
        )
        .to_vec()
        .unwrap();
        let end = pdu.split_off(pdu.len() - 2);
        pdu.extend_from_slice(tlv);
        pdu.extend_from_slice(&end);
        let mut r = LldpduRepr::parse(&pdu).unwrap();
        assert_eq!(r.org_specific.len(), 1);
        r.org_specific.remove(0)
    }

    /// Emits a single org TLV through the whole LLDPDU path.
    pub(super) fn bytes_of(org: OrgTlv) -> Vec<u8> {
        let mut r = LldpduRepr::new(
            ChassisIdTlv {
                subtype: ChassisIdSubtype::Local,
                id: b"c".to_vec(),
            },
            PortIdTlv {
                subtype: PortIdSubtype::Local,
                id: b"p".to_vec(),
            },
            120,
        );
        r.org_specific.push(org);
        let v = r.to_vec().unwrap();
        // chassis (4) + port (4) + TTL (4) ... End (2)
        v[12..v.len() - 2].to_vec()
    }

    #[test]
    fn dispatch_ignores_other_tlvs() {
        assert_eq!(DcbxTlv::parse(&OrgTlv::new_max_frame_size(9216)), None);
        let other = OrgTlv {
            oui: OUI_IEEE_802_1,
            subtype: 0x01,
            info: vec![0, 1],
        };
        assert_eq!(DcbxTlv::parse(&other), None);
        let cee_other = OrgTlv {
            oui: OUI_CEE,
            subtype: 1,
            info: vec![],
        };
        assert_eq!(DcbxTlv::parse(&cee_other), None);
        let bad = OrgTlv {
            oui: OUI_IEEE_802_1,
            subtype: SUBTYPE_PFC,
            info: vec![],
        };
        assert_eq!(DcbxTlv::parse(&bad), Some(Err(WireError::Truncated)));
    }

    /// Re-emits whatever parsed and checks it parses back the same.
    pub(super) fn reparse(org: &OrgTlv) -> core::result::Result<(), TestCaseError> {
        if let Some(Ok(d)) = DcbxTlv::parse(org) {
            let again = d.to_org_tlv().unwrap();
            prop_assert_eq!(DcbxTlv::parse(&again), Some(Ok(d)));
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn dcbx_parse_never_panics(info in vec(any::<u8>(), 0..120), pick in 0usize..5) {
            let (oui, subtype) = [
                (OUI_IEEE_802_1, SUBTYPE_ETS_CONFIG),
                (OUI_IEEE_802_1, SUBTYPE_ETS_RECOMMENDATION),
                (OUI_IEEE_802_1, SUBTYPE_PFC),
                (OUI_IEEE_802_1, SUBTYPE_APP),
                (OUI_CEE, SUBTYPE_CEE),
            ][pick];
            reparse(&OrgTlv { oui, subtype, info })?;
        }
    }
}
