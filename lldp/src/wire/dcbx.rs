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

use super::lldpdu::{OrgTlv, Reader, Writer, MAX_ORG_INFO_LEN, MAX_VALUE_LEN, OUI_IEEE_802_1};
use super::{Result, WireError};

/// OUI of the CEE (DCBX base protocol v1.01) TLV.
pub const OUI_CEE: [u8; 3] = [0x00, 0x1b, 0x21];
/// CEE DCBX subtype under [`OUI_CEE`].
pub const SUBTYPE_CEE: u8 = 2;
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

// ---------------------------------------------------------------------------
// IEEE 802.1Qaz

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

    /// The ETS Configuration TLV, ready for [`LldpduRepr::org_specific`](super::lldpdu::LldpduRepr::org_specific).
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

// ---------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------
// Dispatch

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

    /// Parses a single org TLV through the whole LLDPDU path.
    fn org_of(tlv: &[u8]) -> OrgTlv {
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
    fn bytes_of(org: OrgTlv) -> Vec<u8> {
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

    /// Re-emits whatever parsed and checks it parses back the same.
    fn reparse(org: &OrgTlv) -> core::result::Result<(), TestCaseError> {
        if let Some(Ok(d)) = DcbxTlv::parse(org) {
            let again = d.to_org_tlv().unwrap();
            prop_assert_eq!(DcbxTlv::parse(&again), Some(Ok(d)));
        }
        Ok(())
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

        #[test]
        fn cee_round_trip(c in arb_cee()) {
            let org = c.to_org_tlv().unwrap();
            prop_assert_eq!(org.info.len(), c.buffer_len());
            // And through a whole LLDPDU.
            let back = org_of(&bytes_of(org));
            prop_assert_eq!(DcbxTlv::parse(&back), Some(Ok(DcbxTlv::Cee(c))));
        }

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
