//! The IEEE 802.1Qaz DCBX TLVs (OUI 00-80-C2): ETS Configuration and
//! Recommendation, PFC Configuration and Application Priority; layouts in
//! REFERENCE.md §3.

use super::{exact, org_tlv, pack_nibbles, unpack_nibbles};
use crate::wire::lldpdu::{OrgTlv, Writer, MAX_ORG_INFO_LEN, OUI_IEEE_802_1};
use crate::wire::{Result, WireError};

/// IEEE 802.1Qaz ETS Configuration subtype.
pub const SUBTYPE_ETS_CONFIG: u8 = 0x09;
/// IEEE 802.1Qaz ETS Recommendation subtype.
pub const SUBTYPE_ETS_RECOMMENDATION: u8 = 0x0a;
/// IEEE 802.1Qaz PFC Configuration subtype.
pub const SUBTYPE_PFC: u8 = 0x0b;
/// IEEE 802.1Qaz Application Priority subtype.
pub const SUBTYPE_APP: u8 = 0x0c;

/// Length of an ETS Configuration/Recommendation info after OUI and subtype.
pub const ETS_LEN: usize = 21;
/// Length of a PFC Configuration info after OUI and subtype.
pub const PFC_LEN: usize = 2;
/// Length of one IEEE Application Priority entry.
pub const APP_ENTRY_LEN: usize = 3;
/// Most IEEE Application Priority entries one TLV can carry.
pub const MAX_APP_ENTRIES: usize = (MAX_ORG_INFO_LEN - 1) / APP_ENTRY_LEN;

enum_with_unknown! {
    /// Transmission selection algorithm of a traffic class (802.1Qaz table 8-5).
    pub enum Tsa(u8) {
        /// Strict priority (0).
        Strict = 0,
        /// Credit-based shaper (1).
        CreditBased = 1,
        /// Enhanced transmission selection: a bandwidth share (2).
        Ets = 2,
        /// Vendor specific (255).
        Vendor = 255,
    }
}

/// IEEE ETS Configuration (0x09) or Recommendation (0x0A): how priorities map
/// to traffic classes and how bandwidth is shared, so a willing peer can
/// adopt our scheduling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct EtsRepr {
    /// Willing to accept the peer's configuration (Configuration only).
    pub willing: bool,
    /// Credit-based shaper supported (Configuration only).
    pub cbs: bool,
    /// Max TCs field as on the wire, 0–7; 0 means 8 (Configuration only).
    pub max_tcs: u8,
    /// Traffic class of each priority, priority 0 first, 0–15 (8–15 reserved).
    pub prio_tc: [u8; 8],
    /// Bandwidth percentage of each traffic class.
    pub tc_bandwidth: [u8; 8],
    /// Transmission selection algorithm of each traffic class.
    pub tsa: [Tsa; 8],
}

impl EtsRepr {
    /// Number of traffic classes supported, the wire's 0 read as 8.
    pub const fn max_tc_count(&self) -> u8 {
        if self.max_tcs == 0 {
            8
        } else {
            self.max_tcs
        }
    }

    fn parse_fields(info: &[u8], with_flags: bool) -> Result<EtsRepr> {
        let mut r = exact(info, ETS_LEN)?;
        let (Some(flags), Some(prio), Some(bw), Some(tsa)) =
            (r.u8(), r.array::<4>(), r.array::<8>(), r.array::<8>())
        else {
            return Err(WireError::Truncated);
        };
        let flags = if with_flags { flags } else { 0 };
        Ok(EtsRepr {
            willing: flags & 0x80 != 0,
            cbs: flags & 0x40 != 0,
            max_tcs: flags & 0x07,
            prio_tc: unpack_nibbles(prio),
            tc_bandwidth: bw,
            tsa: tsa.map(Tsa::from),
        })
    }

    /// Reads an ETS Configuration info (after OUI and subtype, 21 bytes).
    /// Reserved bits 5–3 of the flags byte are ignored.
    ///
    /// # Errors
    /// `Truncated` when shorter than 21 bytes, `Malformed` when longer.
    pub fn parse_config(info: &[u8]) -> Result<EtsRepr> {
        Self::parse_fields(info, true)
    }

    /// Reads an ETS Recommendation info (after OUI and subtype, 21 bytes).
    /// Byte 4 is reserved there, so `willing`, `cbs` and `max_tcs` come back
    /// false, false, 0.
    ///
    /// # Errors
    /// As [`parse_config`](Self::parse_config).
    pub fn parse_recommendation(info: &[u8]) -> Result<EtsRepr> {
        Self::parse_fields(info, false)
    }

    /// Bytes the `emit_*` methods write.
    pub const fn buffer_len(&self) -> usize {
        ETS_LEN
    }

    fn emit_fields(&self, info: &mut [u8], flags: u8) -> Result<usize> {
        let prio = pack_nibbles(self.prio_tc)?;
        let mut w = Writer::new(info);
        w.u8(flags)?;
        w.put(&prio)?;
        w.put(&self.tc_bandwidth)?;
        w.put(&self.tsa.map(u8::from))?;
        Ok(w.written())
    }

    /// Writes an ETS Configuration info (after OUI and subtype); returns 21.
    ///
    /// # Errors
    /// `Malformed` when `max_tcs` > 7 or a `prio_tc` entry > 15;
    /// `Truncated` when `info` is shorter than 21 bytes.
    pub fn emit_config(&self, info: &mut [u8]) -> Result<usize> {
        if self.max_tcs > 7 {
            return Err(WireError::Malformed);
        }
        let flags = (u8::from(self.willing) << 7) | (u8::from(self.cbs) << 6) | self.max_tcs;
        self.emit_fields(info, flags)
    }

    /// Writes an ETS Recommendation info (after OUI and subtype) with byte 4
    /// zero; `willing`, `cbs` and `max_tcs` are not sent. Returns 21.
    ///
    /// # Errors
    /// `Malformed` when a `prio_tc` entry > 15; `Truncated` when `info` is
    /// shorter than 21 bytes.
    pub fn emit_recommendation(&self, info: &mut [u8]) -> Result<usize> {
        self.emit_fields(info, 0)
    }

    /// The ETS Configuration TLV, ready for [`LldpduRepr::org_specific`](crate::wire::lldpdu::LldpduRepr::org_specific).
    ///
    /// # Errors
    /// As [`emit_config`](Self::emit_config).
    pub fn to_config_tlv(&self) -> Result<OrgTlv> {
        org_tlv(OUI_IEEE_802_1, SUBTYPE_ETS_CONFIG, ETS_LEN, |b| {
            self.emit_config(b)
        })
    }

    /// The ETS Recommendation TLV.
    ///
    /// # Errors
    /// As [`emit_recommendation`](Self::emit_recommendation).
    pub fn to_recommendation_tlv(&self) -> Result<OrgTlv> {
        org_tlv(OUI_IEEE_802_1, SUBTYPE_ETS_RECOMMENDATION, ETS_LEN, |b| {
            self.emit_recommendation(b)
        })
    }
}

/// IEEE PFC Configuration (0x0B): which priorities are lossless, so both
/// ends pause the same classes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PfcRepr {
    /// Willing to accept the peer's configuration.
    pub willing: bool,
    /// MACsec bypass capability: the sender cannot bypass MACsec for PFC.
    pub mbc: bool,
    /// PFC capability: how many priorities can be enabled at once, 0–15.
    pub cap: u8,
    /// Enabled priorities, bit n for priority n.
    pub enable: u8,
}

impl PfcRepr {
    /// Reads a PFC Configuration info (after OUI and subtype, 2 bytes).
    /// Reserved bits 5–4 are ignored.
    ///
    /// # Errors
    /// `Truncated` when shorter than 2 bytes, `Malformed` when longer.
    pub fn parse(info: &[u8]) -> Result<PfcRepr> {
        let mut r = exact(info, PFC_LEN)?;
        let (Some(flags), Some(enable)) = (r.u8(), r.u8()) else {
            return Err(WireError::Truncated);
        };
        Ok(PfcRepr {
            willing: flags & 0x80 != 0,
            mbc: flags & 0x40 != 0,
            cap: flags & 0x0f,
            enable,
        })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub const fn buffer_len(&self) -> usize {
        PFC_LEN
    }

    /// Writes the info (after OUI and subtype); returns 2.
    ///
    /// # Errors
    /// `Malformed` when `cap` > 15; `Truncated` when `info` is shorter than 2.
    pub fn emit(&self, info: &mut [u8]) -> Result<usize> {
        if self.cap > 0x0f {
            return Err(WireError::Malformed);
        }
        let mut w = Writer::new(info);
        w.u8((u8::from(self.willing) << 7) | (u8::from(self.mbc) << 6) | self.cap)?;
        w.u8(self.enable)?;
        Ok(w.written())
    }

    /// The PFC Configuration TLV.
    ///
    /// # Errors
    /// As [`emit`](Self::emit).
    pub fn to_org_tlv(&self) -> Result<OrgTlv> {
        org_tlv(OUI_IEEE_802_1, SUBTYPE_PFC, PFC_LEN, |b| self.emit(b))
    }
}

enum_with_unknown! {
    /// What the protocol field of an IEEE Application Priority entry means (3 bits).
    pub enum AppSelector(u8) {
        /// EtherType (1).
        EtherType = 1,
        /// TCP or SCTP port (2).
        TcpSctpPort = 2,
        /// UDP or DCCP port (3); RoCEv2 is UDP 4791.
        UdpDccpPort = 3,
        /// TCP, SCTP, UDP or DCCP port (4).
        TcpUdpPort = 4,
        /// DSCP value (5).
        Dscp = 5,
    }
}

/// One IEEE Application Priority entry: traffic matching `selector` and
/// `protocol` goes at `priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AppEntry {
    /// Priority, 0–7.
    pub priority: u8,
    /// What `protocol` means; a 3-bit field.
    pub selector: AppSelector,
    /// EtherType, port number or DSCP value.
    pub protocol: u16,
}

/// IEEE Application Priority (0x0C): which priority each application uses,
/// so hosts tag RoCEv2 into the lossless class.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct AppRepr {
    /// The entries in wire order.
    pub entries: Vec<AppEntry>,
}

impl AppRepr {
    /// Reads an Application Priority info (after OUI and subtype): a
    /// reserved byte (ignored) and 3-byte entries. Reserved bits 4–3 of each
    /// entry are ignored.
    ///
    /// # Errors
    /// `Truncated` when empty; `Malformed` when the entries are not a whole
    /// number of 3-byte records.
    pub fn parse(info: &[u8]) -> Result<AppRepr> {
        let Some((_reserved, body)) = info.split_first() else {
            return Err(WireError::Truncated);
        };
        let records = body.chunks_exact(APP_ENTRY_LEN);
        if !records.remainder().is_empty() {
            return Err(WireError::Malformed);
        }
        let entries = records
            .filter_map(|e| match *e {
                [ps, hi, lo] => Some(AppEntry {
                    priority: ps >> 5,
                    selector: AppSelector::from(ps & 0x07),
                    protocol: u16::from_be_bytes([hi, lo]),
                }),
                _ => None,
            })
            .collect();
        Ok(AppRepr { entries })
    }

    /// Bytes [`emit`](Self::emit) writes.
    pub fn buffer_len(&self) -> usize {
        self.entries
            .len()
            .saturating_mul(APP_ENTRY_LEN)
            .saturating_add(1)
    }

    /// Writes the info (after OUI and subtype); returns the bytes written.
    ///
    /// # Errors
    /// `Malformed` when a priority > 7, a selector > 7 or more than
    /// [`MAX_APP_ENTRIES`] entries; `Truncated` when `info` is shorter than
    /// [`buffer_len`](Self::buffer_len).
    pub fn emit(&self, info: &mut [u8]) -> Result<usize> {
        if self.entries.len() > MAX_APP_ENTRIES {
            return Err(WireError::Malformed);
        }
        let mut w = Writer::new(info);
        w.u8(0)?;
        for e in &self.entries {
            let sel = u8::from(e.selector);
            if e.priority > 7 || sel > 7 {
                return Err(WireError::Malformed);
            }
            w.u8((e.priority << 5) | sel)?;
            w.u16(e.protocol)?;
        }
        Ok(w.written())
    }

    /// The Application Priority TLV.
    ///
    /// # Errors
    /// As [`emit`](Self::emit).
    pub fn to_org_tlv(&self) -> Result<OrgTlv> {
        org_tlv(OUI_IEEE_802_1, SUBTYPE_APP, self.buffer_len(), |b| {
            self.emit(b)
        })
    }
}
#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::wire::dcbx::tests::{bytes_of, org_of};
    use crate::wire::dcbx::DcbxTlv;
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// REFERENCE.md §3, verbatim: ETS Configuration, PFC, and an APP TLV
    /// around the entry `63 12B7`.
    const ETS_CONFIG_TLV: &[u8] = &[
        0xfe, 0x19, 0x00, 0x80, 0xc2, 0x09, 0x00, 0x01, 0x23, 0x45, 0x67, 0x0c, 0x0c, 0x0c, 0x0c,
        0x0d, 0x0d, 0x0d, 0x0d, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02, 0x02,
    ];
    const PFC_TLV: &[u8] = &[0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08];
    /// APP: header (length 8), OUI, subtype 0x0C, reserved, entry `63 12B7`
    /// (priority 3, selector 3 UDP, port 4791 = RoCEv2).
    const APP_TLV: &[u8] = &[0xfe, 0x08, 0x00, 0x80, 0xc2, 0x0c, 0x00, 0x63, 0x12, 0xb7];

    fn ets() -> EtsRepr {
        EtsRepr {
            willing: false,
            cbs: false,
            max_tcs: 0,
            prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
            tc_bandwidth: [12, 12, 12, 12, 13, 13, 13, 13],
            tsa: [Tsa::Ets; 8],
        }
    }

    #[test]
    fn ets_config_reference_vector() {
        let org = org_of(ETS_CONFIG_TLV);
        let want = ets();
        assert_eq!(EtsRepr::parse_config(&org.info), Ok(want));
        assert_eq!(want.max_tc_count(), 8);
        assert_eq!(DcbxTlv::parse(&org), Some(Ok(DcbxTlv::EtsConfig(want))));
        assert_eq!(bytes_of(want.to_config_tlv().unwrap()), ETS_CONFIG_TLV);
        let mut buf = [0xa5u8; ETS_LEN + 2];
        assert_eq!(want.emit_config(&mut buf), Ok(ETS_LEN));
        assert_eq!(&buf[..ETS_LEN], &ETS_CONFIG_TLV[6..]);
        assert_eq!(&buf[ETS_LEN..], &[0xa5, 0xa5]);
    }

    #[test]
    fn ets_flags_and_recommendation() {
        // Willing, CBS, 3 TCs, reserved bits set: reserved bits ignored.
        let mut info = ETS_CONFIG_TLV[6..].to_vec();
        info[0] = 0xc0 | 0x38 | 0x03;
        let e = EtsRepr::parse_config(&info).unwrap();
        assert!(e.willing && e.cbs);
        assert_eq!((e.max_tcs, e.max_tc_count()), (3, 3));
        let mut out = [0u8; ETS_LEN];
        e.emit_config(&mut out).unwrap();
        assert_eq!(out[0], 0xc3);
        // Recommendation: same layout, byte 4 reserved (ignored, sent as 0).
        let mut rec = ETS_CONFIG_TLV.to_vec();
        rec[5] = SUBTYPE_ETS_RECOMMENDATION;
        rec[6] = 0xc3;
        let org = org_of(&rec);
        assert_eq!(
            DcbxTlv::parse(&org),
            Some(Ok(DcbxTlv::EtsRecommendation(ets())))
        );
        rec[6] = 0x00;
        assert_eq!(bytes_of(e.to_recommendation_tlv().unwrap())[..6], rec[..6]);
        assert_eq!(bytes_of(ets().to_recommendation_tlv().unwrap()), rec);
        // TSA values without a name survive.
        let mut info = ETS_CONFIG_TLV[6..].to_vec();
        info[13] = 7;
        info[20] = 255;
        let e = EtsRepr::parse_config(&info).unwrap();
        assert_eq!((e.tsa[0], e.tsa[7]), (Tsa::Unknown(7), Tsa::Vendor));
    }

    #[test]
    fn ets_lengths_and_encodability() {
        let info = &ETS_CONFIG_TLV[6..];
        assert_eq!(
            EtsRepr::parse_config(&info[..20]),
            Err(WireError::Truncated)
        );
        assert_eq!(EtsRepr::parse_config(&[]), Err(WireError::Truncated));
        let mut long = info.to_vec();
        long.push(0);
        assert_eq!(EtsRepr::parse_config(&long), Err(WireError::Malformed));
        assert_eq!(
            EtsRepr::parse_recommendation(&long),
            Err(WireError::Malformed)
        );
        let mut buf = [0u8; ETS_LEN];
        let bad = EtsRepr {
            max_tcs: 8,
            ..ets()
        };
        assert_eq!(bad.emit_config(&mut buf), Err(WireError::Malformed));
        let mut bad = ets();
        bad.prio_tc[7] = 16;
        assert_eq!(bad.emit_config(&mut buf), Err(WireError::Malformed));
        assert_eq!(bad.emit_recommendation(&mut buf), Err(WireError::Malformed));
        assert_eq!(ets().emit_config(&mut buf[..20]), Err(WireError::Truncated));
    }

    #[test]
    fn pfc_reference_vector() {
        let org = org_of(PFC_TLV);
        let want = PfcRepr {
            willing: false,
            mbc: false,
            cap: 8,
            enable: 1 << 3,
        };
        assert_eq!(PfcRepr::parse(&org.info), Ok(want));
        assert_eq!(DcbxTlv::parse(&org), Some(Ok(DcbxTlv::Pfc(want))));
        assert_eq!(bytes_of(want.to_org_tlv().unwrap()), PFC_TLV);
        let mut buf = [0xa5u8; 4];
        assert_eq!(want.emit(&mut buf), Ok(2));
        assert_eq!(buf, [0x08, 0x08, 0xa5, 0xa5]);
        // Willing + MBC, reserved bits ignored.
        let p = PfcRepr::parse(&[0xf3, 0xff]).unwrap();
        assert_eq!(
            p,
            PfcRepr {
                willing: true,
                mbc: true,
                cap: 3,
                enable: 0xff
            }
        );
        assert_eq!(PfcRepr::parse(&[0x08]), Err(WireError::Truncated));
        assert_eq!(PfcRepr::parse(&[0x08, 0x08, 0]), Err(WireError::Malformed));
        let bad = PfcRepr { cap: 16, ..want };
        assert_eq!(bad.emit(&mut buf), Err(WireError::Malformed));
        assert_eq!(want.emit(&mut buf[..1]), Err(WireError::Truncated));
    }

    #[test]
    fn app_reference_vector() {
        let org = org_of(APP_TLV);
        let want = AppRepr {
            entries: vec![AppEntry {
                priority: 3,
                selector: AppSelector::UdpDccpPort,
                protocol: 4791,
            }],
        };
        assert_eq!(AppRepr::parse(&org.info), Ok(want.clone()));
        assert_eq!(DcbxTlv::parse(&org), Some(Ok(DcbxTlv::App(want.clone()))));
        assert_eq!(bytes_of(want.to_org_tlv().unwrap()), APP_TLV);
        let mut buf = [0xa5u8; 6];
        assert_eq!(want.emit(&mut buf), Ok(4));
        assert_eq!(buf, [0x00, 0x63, 0x12, 0xb7, 0xa5, 0xa5]);
        // Reserved bits 4-3 and the reserved byte are ignored; unknown selectors survive.
        let a = AppRepr::parse(&[0xff, 0x7f, 0x00, 0x05]).unwrap();
        assert_eq!(
            a.entries,
            [AppEntry {
                priority: 3,
                selector: AppSelector::Unknown(7),
                protocol: 5
            }]
        );
        assert_eq!(AppRepr::parse(&[0]), Ok(AppRepr::default()));
        assert_eq!(AppRepr::parse(&[]), Err(WireError::Truncated));
        assert_eq!(AppRepr::parse(&[0, 0x63, 0x12]), Err(WireError::Malformed));
        let mut bad = want.clone();
        bad.entries[0].priority = 8;
        assert_eq!(bad.emit(&mut buf), Err(WireError::Malformed));
        let mut bad = want.clone();
        bad.entries[0].selector = AppSelector::Unknown(8);
        assert_eq!(bad.emit(&mut buf), Err(WireError::Malformed));
        let too_many = AppRepr {
            entries: vec![want.entries[0]; MAX_APP_ENTRIES + 1],
        };
        assert_eq!(too_many.to_org_tlv(), Err(WireError::Malformed));
        let most = AppRepr {
            entries: vec![want.entries[0]; MAX_APP_ENTRIES],
        };
        assert!(most.to_org_tlv().unwrap().info.len() <= MAX_ORG_INFO_LEN);
        assert_eq!(want.emit(&mut buf[..3]), Err(WireError::Truncated));
    }

    prop_compose! {
        fn arb_ets()(
            willing in any::<bool>(), cbs in any::<bool>(), max_tcs in 0u8..8,
            prio_tc in any::<[u8; 8]>(), tc_bandwidth in any::<[u8; 8]>(), tsa in any::<[u8; 8]>(),
        ) -> EtsRepr {
            EtsRepr { willing, cbs, max_tcs, prio_tc: prio_tc.map(|p| p & 0x0f), tc_bandwidth, tsa: tsa.map(Tsa::from) }
        }
    }

    prop_compose! {
        fn arb_pfc()(willing in any::<bool>(), mbc in any::<bool>(), cap in 0u8..16, enable in any::<u8>()) -> PfcRepr {
            PfcRepr { willing, mbc, cap, enable }
        }
    }

    prop_compose! {
        fn arb_app_entry()(priority in 0u8..8, selector in 0u8..8, protocol in any::<u16>()) -> AppEntry {
            AppEntry { priority, selector: selector.into(), protocol }
        }
    }

    proptest! {
        #[test]
        fn ets_round_trip(e in arb_ets()) {
            let mut buf = [0u8; ETS_LEN];
            prop_assert_eq!(e.emit_config(&mut buf), Ok(ETS_LEN));
            prop_assert_eq!(EtsRepr::parse_config(&buf), Ok(e));
            let rec = EtsRepr { willing: false, cbs: false, max_tcs: 0, ..e };
            prop_assert_eq!(e.emit_recommendation(&mut buf), Ok(ETS_LEN));
            prop_assert_eq!(EtsRepr::parse_recommendation(&buf), Ok(rec));
            prop_assert_eq!(DcbxTlv::parse(&e.to_config_tlv().unwrap()), Some(Ok(DcbxTlv::EtsConfig(e))));
        }

        #[test]
        fn pfc_round_trip(p in arb_pfc()) {
            prop_assert_eq!(DcbxTlv::parse(&p.to_org_tlv().unwrap()), Some(Ok(DcbxTlv::Pfc(p))));
        }

        #[test]
        fn app_round_trip(entries in vec(arb_app_entry(), 0..MAX_APP_ENTRIES)) {
            let a = AppRepr { entries };
            let org = a.to_org_tlv().unwrap();
            prop_assert_eq!(org.info.len(), a.buffer_len());
            prop_assert_eq!(DcbxTlv::parse(&org), Some(Ok(DcbxTlv::App(a))));
        }
    }
}
