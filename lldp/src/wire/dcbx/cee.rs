//! The CEE DCBX TLV, the pre-standard "DCBX base protocol v1.01" (OUI
//! 00-1B-21, subtype 2): [`CeeRepr`], a list of sub-TLVs with the LLDP 7-bit
//! type / 9-bit length header, for peers that speak only this dialect.

use super::{exact, org_tlv, pack_nibbles, unpack_nibbles};
use crate::wire::lldpdu::{OrgTlv, Reader, Writer, MAX_ORG_INFO_LEN, MAX_VALUE_LEN};
use crate::wire::{Result, WireError};

/// OUI of the CEE (DCBX base protocol v1.01) TLV.
pub const OUI_CEE: [u8; 3] = [0x00, 0x1b, 0x21];
/// CEE DCBX subtype under [`OUI_CEE`].
pub const SUBTYPE_CEE: u8 = 2;

// CEE (DCBX base protocol v1.01)
//
// Layout as the Linux kernel's i40e driver reads it
// (drivers/net/ethernet/intel/i40e/i40e_dcb.h: struct i40e_cee_ctrl_tlv,
// i40e_cee_feat_tlv, i40e_cee_app_prio; i40e_dcb.c: i40e_parse_cee_*_tlv),
// which matches Wireshark's packet-lldp.c and lldpad:
//
//   org info  = OUI 00-1B-21, subtype 2, then sub-TLVs (7-bit type/9-bit len)
//   control   (type 1, len 10): oper ver, max ver, seq no u32, ack no u32
//   feature header (types 2-4): oper ver, max ver,
//             flags (bit 7 enable, 6 willing, 5 error, 4-0 reserved), subtype
//   PG        (type 2, len 17): header, PGID of priorities 0-7 as 4 bytes of
//             nibbles (priority 0 in the high nibble of the first byte;
//             15 = no bandwidth limit), 8 PG percentages, num TCs
//   PFC       (type 3, len 6): header, enable bitmap, num TCs
//   APP       (type 4, len 4 + 6N): header, N x [protocol u16,
//             upper OUI (6 bits) | selector (2 bits), lower OUI u16,
//             user priority map u8]

/// CEE sub-TLV types.
mod cee_type {
    pub const CONTROL: u8 = 1;
    pub const PG: u8 = 2;
    pub const PFC: u8 = 3;
    pub const APP: u8 = 4;
}

/// Value length of the CEE control sub-TLV.
pub const CEE_CONTROL_LEN: usize = 10;
/// Value length of the CEE feature sub-TLV header.
pub const CEE_FEATURE_HEADER_LEN: usize = 4;
/// Value length of the CEE priority group sub-TLV.
pub const CEE_PG_LEN: usize = CEE_FEATURE_HEADER_LEN + 13;
/// Value length of the CEE PFC sub-TLV.
pub const CEE_PFC_LEN: usize = CEE_FEATURE_HEADER_LEN + 2;
/// Length of one CEE application entry.
pub const CEE_APP_ENTRY_LEN: usize = 6;
/// Priority group ID meaning "strict priority, no bandwidth share".
pub const CEE_PGID_STRICT: u8 = 15;

/// CEE control sub-TLV: the sequence/acknowledgement handshake that tells
/// each side whether the peer has seen its latest configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeeControl {
    /// Protocol version in use.
    pub oper_version: u8,
    /// Highest protocol version supported.
    pub max_version: u8,
    /// Sequence number, bumped on every local change.
    pub seq_no: u32,
    /// The peer's last sequence number seen.
    pub ack_no: u32,
}

/// The header every CEE feature sub-TLV starts with: versions and the
/// enable/willing/error flags the CEE state machine runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeeFeatureHeader {
    /// Feature version in use.
    pub oper_version: u8,
    /// Highest feature version supported.
    pub max_version: u8,
    /// The feature is enabled.
    pub enable: bool,
    /// Willing to accept the peer's configuration.
    pub willing: bool,
    /// The sender found an error in the exchange.
    pub error: bool,
    /// Feature subtype (0 for PG, PFC and APP).
    pub subtype: u8,
}

impl CeeFeatureHeader {
    fn parse(r: &mut Reader<'_>) -> Option<CeeFeatureHeader> {
        let [oper_version, max_version, flags, subtype] = r.array::<4>()?;
        Some(CeeFeatureHeader {
            oper_version,
            max_version,
            enable: flags & 0x80 != 0,
            willing: flags & 0x40 != 0,
            error: flags & 0x20 != 0,
            subtype,
        })
    }

    fn emit(&self, w: &mut Writer<'_>) -> Result<()> {
        let flags = (u8::from(self.enable) << 7)
            | (u8::from(self.willing) << 6)
            | (u8::from(self.error) << 5);
        w.put(&[self.oper_version, self.max_version, flags, self.subtype])
    }
}

/// CEE priority group sub-TLV (2): CEE's counterpart of ETS.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeePg {
    /// Versions and flags.
    pub header: CeeFeatureHeader,
    /// Priority group of each priority, priority 0 first, 0–15
    /// ([`CEE_PGID_STRICT`] = no bandwidth limit).
    pub pgid: [u8; 8],
    /// Bandwidth percentage of each priority group.
    pub percent: [u8; 8],
    /// Number of traffic classes supported.
    pub num_tcs: u8,
}

/// CEE PFC sub-TLV (3): CEE's counterpart of IEEE PFC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeePfc {
    /// Versions and flags.
    pub header: CeeFeatureHeader,
    /// Enabled priorities, bit n for priority n.
    pub enable: u8,
    /// Number of traffic classes that support PFC.
    pub num_tcs: u8,
}

/// One CEE application entry: traffic matching `selector`/`protocol` goes at
/// the priorities in `priority_map`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct CeeAppEntry {
    /// EtherType (selector 0) or TCP/UDP port (selector 1).
    pub protocol: u16,
    /// Selector, 0–3 (0 EtherType, 1 TCP/UDP port).
    pub selector: u8,
    /// OUI; on the wire the low 2 bits of `oui[0]` carry `selector`, so they
    /// must be 0 here.
    pub oui: [u8; 3],
    /// User priorities, bit n for priority n.
    pub priority_map: u8,
}

/// CEE application sub-TLV (4): CEE's counterpart of IEEE APP.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CeeApp {
    /// Versions and flags.
    pub header: CeeFeatureHeader,
    /// The entries in wire order.
    pub entries: Vec<CeeAppEntry>,
}

/// A CEE sub-TLV this module does not decode, kept as received.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CeeUnknownTlv {
    /// Sub-TLV type (not 1–4), 0–127.
    pub tlv_type: u8,
    /// Value bytes.
    pub value: Vec<u8>,
}

/// The CEE DCBX TLV (OUI 00-1B-21, subtype 2) as plain data, for peers
/// (older NICs and switches) that speak only the pre-standard dialect.
///
/// Sub-TLVs are grouped by kind; emit writes control, PG, PFC, APP, then the
/// unknown ones in received order.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct CeeRepr {
    /// Control sub-TLV (mandatory).
    pub control: CeeControl,
    /// Priority group sub-TLV.
    pub pg: Option<CeePg>,
    /// PFC sub-TLV.
    pub pfc: Option<CeePfc>,
    /// Application sub-TLV.
    pub app: Option<CeeApp>,
    /// Sub-TLVs of other types, in received order.
    pub unknown: Vec<CeeUnknownTlv>,
}

impl CeeRepr {
    /// Reads a CEE info (after OUI and subtype): its sub-TLVs.
    ///
    /// # Errors
    /// `Truncated` when a sub-TLV runs past the end; `Malformed` when the
    /// control sub-TLV is missing, a known sub-TLV appears twice or has the
    /// wrong length.
    pub fn parse(info: &[u8]) -> Result<CeeRepr> {
        let mut r = Reader::new(info);
        let mut control = None;
        let mut repr = CeeRepr::default();
        while !r.rest().is_empty() {
            let (ty, value) = r.tlv()?;
            match ty {
                cee_type::CONTROL => {
                    let mut v = exact(value, CEE_CONTROL_LEN).map_err(|_| WireError::Malformed)?;
                    let (Some(oper_version), Some(max_version), Some(seq_no), Some(ack_no)) =
                        (v.u8(), v.u8(), v.u32(), v.u32())
                    else {
                        return Err(WireError::Malformed);
                    };
                    let c = CeeControl {
                        oper_version,
                        max_version,
                        seq_no,
                        ack_no,
                    };
                    if control.replace(c).is_some() {
                        return Err(WireError::Malformed);
                    }
                }
                cee_type::PG => {
                    let mut v = exact(value, CEE_PG_LEN).map_err(|_| WireError::Malformed)?;
                    let (Some(header), Some(pgid), Some(percent), Some(num_tcs)) = (
                        CeeFeatureHeader::parse(&mut v),
                        v.array::<4>(),
                        v.array::<8>(),
                        v.u8(),
                    ) else {
                        return Err(WireError::Malformed);
                    };
                    let pg = CeePg {
                        header,
                        pgid: unpack_nibbles(pgid),
                        percent,
                        num_tcs,
                    };
                    if repr.pg.replace(pg).is_some() {
                        return Err(WireError::Malformed);
                    }
                }
                cee_type::PFC => {
                    let mut v = exact(value, CEE_PFC_LEN).map_err(|_| WireError::Malformed)?;
                    let (Some(header), Some(enable), Some(num_tcs)) =
                        (CeeFeatureHeader::parse(&mut v), v.u8(), v.u8())
                    else {
                        return Err(WireError::Malformed);
                    };
                    let pfc = CeePfc {
                        header,
                        enable,
                        num_tcs,
                    };
                    if repr.pfc.replace(pfc).is_some() {
                        return Err(WireError::Malformed);
                    }
                }
                cee_type::APP => {
                    let mut v = Reader::new(value);
                    let header = CeeFeatureHeader::parse(&mut v).ok_or(WireError::Malformed)?;
                    let records = v.rest().chunks_exact(CEE_APP_ENTRY_LEN);
                    if !records.remainder().is_empty() {
                        return Err(WireError::Malformed);
                    }
                    let entries = records
                        .filter_map(|e| match *e {
                            [p_hi, p_lo, oui_sel, oui_hi, oui_lo, priority_map] => {
                                Some(CeeAppEntry {
                                    protocol: u16::from_be_bytes([p_hi, p_lo]),
                                    selector: oui_sel & 0x03,
                                    oui: [oui_sel & 0xfc, oui_hi, oui_lo],
                                    priority_map,
                                })
                            }
                            _ => None,
                        })
                        .collect();
                    if repr.app.replace(CeeApp { header, entries }).is_some() {
                        return Err(WireError::Malformed);
                    }
                }
                tlv_type => repr.unknown.push(CeeUnknownTlv {
                    tlv_type,
                    value: value.to_vec(),
                }),
            }
        }
        repr.control = control.ok_or(WireError::Malformed)?;
        Ok(repr)
    }

    fn app_value_len(app: &CeeApp) -> usize {
        app.entries
            .len()
            .saturating_mul(CEE_APP_ENTRY_LEN)
            .saturating_add(CEE_FEATURE_HEADER_LEN)
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn buffer_len(&self) -> usize {
        let tlv = |n: usize| n.saturating_add(2);
        let mut n = tlv(CEE_CONTROL_LEN);
        if self.pg.is_some() {
            n = n.saturating_add(tlv(CEE_PG_LEN));
        }
        if self.pfc.is_some() {
            n = n.saturating_add(tlv(CEE_PFC_LEN));
        }
        if let Some(app) = &self.app {
            n = n.saturating_add(tlv(Self::app_value_len(app)));
        }
        for u in &self.unknown {
            n = n.saturating_add(tlv(u.value.len()));
        }
        n
    }

    /// Writes the info (after OUI and subtype): control, PG, PFC, APP and
    /// unknown sub-TLVs. Returns the bytes written.
    ///
    /// # Errors
    /// `Malformed` when a PGID > 15, an APP selector > 3, an APP OUI has its
    /// low 2 bits of `oui[0]` set, an unknown sub-TLV has type 1–4 or > 127
    /// or a value over 511 bytes, or the whole exceeds 507 bytes;
    /// `Truncated` when `info` is shorter than [`buffer_len`](Self::buffer_len).
    pub fn emit(&self, info: &mut [u8]) -> Result<usize> {
        if self.buffer_len() > MAX_ORG_INFO_LEN {
            return Err(WireError::Malformed);
        }
        let mut w = Writer::new(info);
        let c = &self.control;
        w.tlv_header(cee_type::CONTROL, CEE_CONTROL_LEN)?;
        w.u8(c.oper_version)?;
        w.u8(c.max_version)?;
        w.u32(c.seq_no)?;
        w.u32(c.ack_no)?;
        if let Some(pg) = &self.pg {
            let pgid = pack_nibbles(pg.pgid)?;
            w.tlv_header(cee_type::PG, CEE_PG_LEN)?;
            pg.header.emit(&mut w)?;
            w.put(&pgid)?;
            w.put(&pg.percent)?;
            w.u8(pg.num_tcs)?;
        }
        if let Some(pfc) = &self.pfc {
            w.tlv_header(cee_type::PFC, CEE_PFC_LEN)?;
            pfc.header.emit(&mut w)?;
            w.u8(pfc.enable)?;
            w.u8(pfc.num_tcs)?;
        }
        if let Some(app) = &self.app {
            w.tlv_header(cee_type::APP, Self::app_value_len(app))?;
            app.header.emit(&mut w)?;
            for e in &app.entries {
                let [o0, o1, o2] = e.oui;
                if e.selector > 0x03 || o0 & 0x03 != 0 {
                    return Err(WireError::Malformed);
                }
                w.u16(e.protocol)?;
                w.put(&[o0 | e.selector, o1, o2, e.priority_map])?;
            }
        }
        for u in &self.unknown {
            if (cee_type::CONTROL..=cee_type::APP).contains(&u.tlv_type)
                || u.value.len() > MAX_VALUE_LEN
            {
                return Err(WireError::Malformed);
            }
            w.tlv_header(u.tlv_type, u.value.len())?;
            w.put(&u.value)?;
        }
        Ok(w.written())
    }

    /// The CEE DCBX TLV.
    ///
    /// # Errors
    /// As [`emit`](Self::emit).
    pub fn to_org_tlv(&self) -> Result<OrgTlv> {
        org_tlv(OUI_CEE, SUBTYPE_CEE, self.buffer_len(), |b| self.emit(b))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::wire::dcbx::tests::{bytes_of, org_of, reparse};
    use crate::wire::dcbx::DcbxTlv;
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// CEE TLV built from the layout documented above (i40e_dcb.h):
    const CEE_TLV: &[u8] = &[
        0xfe, 0x3d, 0x00, 0x1b, 0x21, 0x02, // org TLV, length 61, OUI 00-1B-21, subtype 2
        // control (type 1, len 10): oper 0, max 0, seq 7, ack 5
        0x02, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x05,
        // PG (type 2, len 17): oper 0, max 0, flags enable|willing, subtype 0,
        0x04, 0x11, 0x00, 0x00, 0xc0, 0x00,
        // PGIDs of priorities 0-7: 0 0 | 0 1 | 2 2 | 2 15,
        0x00, 0x01, 0x22, 0x2f, // PG percentages 50 30 20 0 0 0 0 0, 8 TCs
        0x32, 0x1e, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x08,
        // PFC (type 3, len 6): oper 0, max 0, enable, subtype 0, priority 3, 8 TCs
        0x06, 0x06, 0x00, 0x00, 0x80, 0x00, 0x08, 0x08,
        // APP (type 4, len 16): oper 0, max 0, enable, subtype 0,
        0x08, 0x10, 0x00, 0x00, 0x80, 0x00,
        // port 4791, selector 1 (TCP/UDP) with upper OUI bits 0, lower OUI 1B21, priority 3
        0x12, 0xb7, 0x01, 0x1b, 0x21, 0x08,
        // EtherType 0x8906 (FCoE), selector 0, OUI 00-1B-21, priority 3
        0x89, 0x06, 0x00, 0x1b, 0x21, 0x08,
    ];

    fn cee() -> CeeRepr {
        let on = CeeFeatureHeader {
            enable: true,
            ..CeeFeatureHeader::default()
        };
        CeeRepr {
            control: CeeControl {
                oper_version: 0,
                max_version: 0,
                seq_no: 7,
                ack_no: 5,
            },
            pg: Some(CeePg {
                header: CeeFeatureHeader {
                    willing: true,
                    ..on
                },
                pgid: [0, 0, 0, 1, 2, 2, 2, CEE_PGID_STRICT],
                percent: [50, 30, 20, 0, 0, 0, 0, 0],
                num_tcs: 8,
            }),
            pfc: Some(CeePfc {
                header: on,
                enable: 1 << 3,
                num_tcs: 8,
            }),
            app: Some(CeeApp {
                header: on,
                entries: vec![
                    CeeAppEntry {
                        protocol: 4791,
                        selector: 1,
                        oui: OUI_CEE,
                        priority_map: 1 << 3,
                    },
                    CeeAppEntry {
                        protocol: 0x8906,
                        selector: 0,
                        oui: OUI_CEE,
                        priority_map: 1 << 3,
                    },
                ],
            }),
            unknown: vec![],
        }
    }

    #[test]
    fn cee_vector_both_ways() {
        let org = org_of(CEE_TLV);
        assert_eq!((org.oui, org.subtype), (OUI_CEE, SUBTYPE_CEE));
        assert_eq!(CeeRepr::parse(&org.info), Ok(cee()));
        assert_eq!(DcbxTlv::parse(&org), Some(Ok(DcbxTlv::Cee(cee()))));
        assert_eq!(bytes_of(cee().to_org_tlv().unwrap()), CEE_TLV);
        let n = CEE_TLV.len() - 6;
        assert_eq!(cee().buffer_len(), n);
        let mut buf = vec![0xa5u8; n + 2];
        assert_eq!(cee().emit(&mut buf), Ok(n));
        assert_eq!(&buf[..n], &CEE_TLV[6..]);
        assert_eq!(&buf[n..], &[0xa5, 0xa5]);
    }

    #[test]
    fn cee_unknown_and_order() {
        // Control last, an unknown sub-TLV (type 5, 2 bytes) first, a type-0
        // sub-TLV with no value: both kept raw, control found anywhere.
        let info = [
            0x0a, 0x02, 0xaa, 0xbb, // type 5, len 2
            0x00, 0x00, // type 0, len 0
            0x02, 0x0a, 0x01, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
        ];
        let c = CeeRepr::parse(&info).unwrap();
        assert_eq!(
            c.control,
            CeeControl {
                oper_version: 1,
                max_version: 2,
                seq_no: 1,
                ack_no: 0
            }
        );
        assert_eq!(
            c.unknown,
            [
                CeeUnknownTlv {
                    tlv_type: 5,
                    value: vec![0xaa, 0xbb]
                },
                CeeUnknownTlv {
                    tlv_type: 0,
                    value: vec![]
                }
            ]
        );
        assert!(c.pg.is_none() && c.pfc.is_none() && c.app.is_none());
        // Emit puts control first.
        let mut out = vec![0u8; c.buffer_len()];
        c.emit(&mut out).unwrap();
        assert_eq!(&out[..12], &info[6..]);
        assert_eq!(&out[12..], &info[..6]);
        assert_eq!(CeeRepr::parse(&out), Ok(c));
    }

    #[test]
    fn cee_errors() {
        let info = &CEE_TLV[6..];
        // No control sub-TLV.
        assert_eq!(CeeRepr::parse(&info[12..]), Err(WireError::Malformed));
        assert_eq!(CeeRepr::parse(&[]), Err(WireError::Malformed));
        // Two control sub-TLVs.
        let twice = [&info[..12], info].concat();
        assert_eq!(CeeRepr::parse(&twice), Err(WireError::Malformed));
        // Two PFC sub-TLVs.
        let twice = [info, &info[31..39]].concat();
        assert_eq!(CeeRepr::parse(&twice), Err(WireError::Malformed));
        // Control of length 9.
        let mut v = info[..12].to_vec();
        v[1] = 0x09;
        v.pop();
        assert_eq!(CeeRepr::parse(&v), Err(WireError::Malformed));
        // PG of length 16.
        let mut v = info[..31].to_vec();
        v[13] = 0x10;
        v.pop();
        assert_eq!(CeeRepr::parse(&v), Err(WireError::Malformed));
        // PFC of length 7.
        let mut v = info[..39].to_vec();
        v[32] = 0x07;
        v.push(0);
        assert_eq!(CeeRepr::parse(&v), Err(WireError::Malformed));
        // APP with a 5-byte entry, and with no feature header.
        let mut v = info.to_vec();
        v[40] = 0x0f;
        v.pop();
        assert_eq!(CeeRepr::parse(&v), Err(WireError::Malformed));
        let v = [&info[..12], &[0x08, 0x02, 0x00, 0x00][..]].concat();
        assert_eq!(CeeRepr::parse(&v), Err(WireError::Malformed));
        // A sub-TLV running past the end.
        for cut in [1, 13, 30, 38, info.len() - 1] {
            assert_eq!(
                CeeRepr::parse(&info[..cut]),
                Err(WireError::Truncated),
                "{cut}"
            );
        }
        // Emit refuses what cannot be encoded.
        let mut buf = vec![0u8; 600];
        let mut bad = cee();
        bad.app.as_mut().unwrap().entries[0].selector = 4;
        assert_eq!(bad.emit(&mut buf), Err(WireError::Malformed));
        let mut bad = cee();
        bad.app.as_mut().unwrap().entries[0].oui[0] = 0x01;
        assert_eq!(bad.emit(&mut buf), Err(WireError::Malformed));
        let mut bad = cee();
        bad.pg.as_mut().unwrap().pgid[0] = 16;
        assert_eq!(bad.emit(&mut buf), Err(WireError::Malformed));
        for ty in [1u8, 4, 128] {
            let mut bad = cee();
            bad.unknown.push(CeeUnknownTlv {
                tlv_type: ty,
                value: vec![],
            });
            assert_eq!(bad.emit(&mut buf), Err(WireError::Malformed), "{ty}");
        }
        let mut big = cee();
        big.unknown.push(CeeUnknownTlv {
            tlv_type: 9,
            value: vec![0; 450],
        });
        assert_eq!(big.emit(&mut buf), Err(WireError::Malformed));
        assert_eq!(cee().emit(&mut buf[..20]), Err(WireError::Truncated));
    }

    prop_compose! {
        fn arb_header()(oper_version in any::<u8>(), max_version in any::<u8>(), flags in any::<[bool; 3]>(), subtype in any::<u8>()) -> CeeFeatureHeader {
            let [enable, willing, error] = flags;
            CeeFeatureHeader { oper_version, max_version, enable, willing, error, subtype }
        }
    }

    prop_compose! {
        fn arb_cee_app_entry()(protocol in any::<u16>(), selector in 0u8..4, oui in any::<[u8; 3]>(), priority_map in any::<u8>()) -> CeeAppEntry {
            let [o0, o1, o2] = oui;
            CeeAppEntry { protocol, selector, oui: [o0 & 0xfc, o1, o2], priority_map }
        }
    }

    prop_compose! {
        fn arb_cee()(
            control in any::<(u8, u8, u32, u32)>(),
            pg in proptest::option::of((arb_header(), any::<[u8; 8]>(), any::<[u8; 8]>(), any::<u8>())),
            pfc in proptest::option::of((arb_header(), any::<u8>(), any::<u8>())),
            app in proptest::option::of((arb_header(), vec(arb_cee_app_entry(), 0..20))),
            unknown in vec((prop_oneof![Just(0u8), 5u8..=127], vec(any::<u8>(), 0..40)), 0..3),
        ) -> CeeRepr {
            let (oper_version, max_version, seq_no, ack_no) = control;
            CeeRepr {
                control: CeeControl { oper_version, max_version, seq_no, ack_no },
                pg: pg.map(|(header, pgid, percent, num_tcs)| CeePg { header, pgid: pgid.map(|p| p & 0x0f), percent, num_tcs }),
                pfc: pfc.map(|(header, enable, num_tcs)| CeePfc { header, enable, num_tcs }),
                app: app.map(|(header, entries)| CeeApp { header, entries }),
                unknown: unknown.into_iter().map(|(tlv_type, value)| CeeUnknownTlv { tlv_type, value }).collect(),
            }
        }
    }

    proptest! {
        #[test]
        fn cee_round_trip(c in arb_cee()) {
            let org = c.to_org_tlv().unwrap();
            prop_assert_eq!(org.info.len(), c.buffer_len());
            // And through a whole LLDPDU.
            let back = org_of(&bytes_of(org));
            prop_assert_eq!(DcbxTlv::parse(&back), Some(Ok(DcbxTlv::Cee(c))));
        }

        #[test]
        fn cee_parse_never_panics_near_valid(c in arb_cee(), flip in any::<(usize, u8)>(), cut in any::<usize>()) {
            // Mutate a valid CEE info so the deeper checks are reached.
            let mut info = c.to_org_tlv().unwrap().info;
            let (at, x) = flip;
            let len = info.len();
            if let Some(b) = info.get_mut(at % len) {
                *b ^= x;
            }
            info.truncate(len - cut % 4);
            reparse(&OrgTlv { oui: OUI_CEE, subtype: SUBTYPE_CEE, info })?;
        }
    }
}
