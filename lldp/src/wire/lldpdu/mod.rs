//! LLDP (802.1AB) TLVs: the header view, a walk over an LLDPDU, and
//! [`LldpduRepr`], a whole LLDPDU as plain data that the LLDP agent parses
//! from a peer and emits for its own ports.
//!
//! `LldpduRepr::parse` validates strictly and reports each kind of defect as
//! its own [`LldpduError`] so the agent can count them; it never panics on
//! any input. `LldpduRepr::emit` checks that every field can be encoded and
//! never panics either.
//!
//! The value of each TLV is a struct named after the TLV ([`ChassisIdTlv`],
//! [`PortIdTlv`], [`CapabilitiesTlv`], [`ManagementAddressTlv`], [`OrgTlv`],
//! [`UnknownTlv`]), so the neighbour's identifiers are never taken for a port
//! number of the switch.
//!
//! The parts, one per file: the TLV header view and the walk over an
//! LLDPDU (`tlv`), the panic-free cursors the parsers share with DCBX
//! (`cursor`), the Chassis and Port ID TLVs (`ids`), the other optional TLVs
//! 802.1AB defines (`optional`) and the organisationally specific TLV
//! (`org`). This file holds the whole LLDPDU: [`LldpduRepr`] and its errors.
//! Every item is re-exported here, so paths stay `wire::lldpdu::Name`.

use std::borrow::Cow;
use std::fmt;

use super::{Result, WireError};

mod cursor;
mod ids;
mod optional;
mod org;
mod tlv;

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests;

pub(crate) use cursor::{Reader, Writer};
pub use ids::{ChassisIdSubtype, ChassisIdTlv, PortIdSubtype, PortIdTlv, MAX_ID_LEN, MIN_ID_LEN};
pub use optional::{
    CapabilitiesTlv, ManagementAddressTlv, UnknownTlv, CAP_BRIDGE, CAP_ROUTER, MAX_MGMT_ADDR_LEN,
    MAX_MGMT_OID_LEN,
};
pub use org::{
    OrgTlv, MAX_ORG_INFO_LEN, OUI_IEEE_802_1, OUI_IEEE_802_3, SUBTYPE_802_3_MAX_FRAME_SIZE,
};
pub use tlv::{tlvs, Tlv, TlvIter, TlvType, HEADER_LEN, MAX_VALUE_LEN};

/// Why an LLDPDU was rejected (or could not be emitted). Each defect has its
/// own variant so the agent can count them separately; [`WireError`] is
/// available through `From` for callers that only need truncated/malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LldpduError {
    /// A TLV header or value runs past the end of the buffer (on emit: the
    /// buffer is shorter than [`LldpduRepr::buffer_len`]).
    Truncated,
    /// The mandatory TLV named is not in its place: Chassis ID must be first,
    /// Port ID second, TTL third.
    MissingMandatory(TlvType),
    /// The TLV named has a length its type does not allow: Chassis/Port ID
    /// outside 2–256, TTL not 2, capabilities not 4, management address
    /// inner lengths inconsistent, organisationally specific under 4, End
    /// not 0; on emit also any field too long for its TLV.
    BadLength(TlvType),
    /// A single-instance TLV (Chassis ID, Port ID, TTL, port description,
    /// system name, system description, capabilities) appears twice.
    Duplicate(TlvType),
    /// The TLVs end without an End TLV.
    MissingEnd,
    /// Non-zero bytes follow End (zero bytes are Ethernet padding and are
    /// allowed; a second End, `00 00`, is indistinguishable from padding).
    TrailingBytes,
    /// Emit only: an unknown TLV carries a type number this module decodes
    /// itself (0–8, 127) or one wider than 7 bits.
    InvalidType(u8),
}

impl fmt::Display for LldpduError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LldpduError::Truncated => f.write_str("truncated TLV"),
            LldpduError::MissingMandatory(t) => {
                write!(f, "mandatory TLV {t:?} missing or out of order")
            }
            LldpduError::BadLength(t) => write!(f, "bad length for TLV {t:?}"),
            LldpduError::Duplicate(t) => write!(f, "duplicate TLV {t:?}"),
            LldpduError::MissingEnd => f.write_str("missing End TLV"),
            LldpduError::TrailingBytes => f.write_str("non-zero bytes after End TLV"),
            LldpduError::InvalidType(t) => write!(f, "TLV type {t} cannot be emitted as unknown"),
        }
    }
}

impl std::error::Error for LldpduError {}

impl From<LldpduError> for WireError {
    fn from(e: LldpduError) -> WireError {
        match e {
            LldpduError::Truncated => WireError::Truncated,
            _ => WireError::Malformed,
        }
    }
}

/// A whole LLDPDU (the Ethernet payload of an LLDP frame) as plain data: what
/// the agent learns from a neighbour and what it advertises.
///
/// Optional TLVs are grouped by kind; within a kind the received order is
/// kept, but the relative order of different kinds is not. Text fields are
/// raw bytes (802.1AB does not promise UTF-8); the `*_lossy` helpers give text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LldpduRepr {
    /// Chassis ID (mandatory, first).
    pub chassis_id: ChassisIdTlv,
    /// Port ID (mandatory, second).
    pub port_id: PortIdTlv,
    /// Time to live in seconds (mandatory, third); 0 means shutdown.
    pub ttl: u16,
    /// Port description (4).
    pub port_description: Option<Vec<u8>>,
    /// System name (5).
    pub system_name: Option<Vec<u8>>,
    /// System description (6).
    pub system_description: Option<Vec<u8>>,
    /// System capabilities (7).
    pub capabilities: Option<CapabilitiesTlv>,
    /// Management addresses (8), in received order.
    pub management_addresses: Vec<ManagementAddressTlv>,
    /// Organisationally specific TLVs (127), in received order.
    pub org_specific: Vec<OrgTlv>,
    /// TLVs of unknown type, in received order.
    pub unknown: Vec<UnknownTlv>,
}

/// Sets a single-instance field once, or reports the duplicate.
fn set_once<T>(slot: &mut Option<T>, v: T, t: TlvType) -> core::result::Result<(), LldpduError> {
    if slot.is_some() {
        return Err(LldpduError::Duplicate(t));
    }
    *slot = Some(v);
    Ok(())
}

/// Reads a Chassis/Port ID value: subtype and 1–255 identifier bytes.
fn parse_id(value: &[u8], t: TlvType) -> core::result::Result<(u8, Vec<u8>), LldpduError> {
    match value.split_first() {
        Some((&subtype, id)) if (MIN_ID_LEN..=MAX_ID_LEN).contains(&value.len()) => {
            Ok((subtype, id.to_vec()))
        }
        _ => Err(LldpduError::BadLength(t)),
    }
}

const MANDATORY: [TlvType; 3] = [TlvType::ChassisId, TlvType::PortId, TlvType::Ttl];

impl LldpduRepr {
    /// A minimal LLDPDU: the three mandatory TLVs and nothing else.
    pub fn new(chassis_id: ChassisIdTlv, port_id: PortIdTlv, ttl: u16) -> LldpduRepr {
        LldpduRepr {
            chassis_id,
            port_id,
            ttl,
            port_description: None,
            system_name: None,
            system_description: None,
            capabilities: None,
            management_addresses: Vec::new(),
            org_specific: Vec::new(),
            unknown: Vec::new(),
        }
    }

    /// Reads and validates a whole LLDPDU (the bytes after the EtherType,
    /// Ethernet padding allowed after End).
    ///
    /// # Errors
    /// The first defect found, as an [`LldpduError`].
    pub fn parse(lldpdu: &[u8]) -> core::result::Result<LldpduRepr, LldpduError> {
        let mut r = Reader::new(lldpdu);
        let mut chassis = None;
        let mut port = None;
        let mut ttl = None;
        let mut port_description = None;
        let mut system_name = None;
        let mut system_description = None;
        let mut capabilities = None;
        let mut management_addresses = Vec::new();
        let mut org_specific = Vec::new();
        let mut unknown = Vec::new();
        let mut index = 0usize;
        loop {
            if r.rest().is_empty() {
                return Err(match MANDATORY.get(index) {
                    Some(&t) => LldpduError::MissingMandatory(t),
                    None => LldpduError::MissingEnd,
                });
            }
            let (ty, value) = r.tlv().map_err(|_| LldpduError::Truncated)?;
            let t = TlvType::from(ty);
            if let Some(&want) = MANDATORY.get(index) {
                if t != want {
                    return Err(LldpduError::MissingMandatory(want));
                }
            }
            index = index.saturating_add(1);
            match t {
                TlvType::End => {
                    if !value.is_empty() {
                        return Err(LldpduError::BadLength(t));
                    }
                    if r.rest().iter().any(|&b| b != 0) {
                        return Err(LldpduError::TrailingBytes);
                    }
                    break;
                }
                TlvType::ChassisId => {
                    let (s, id) = parse_id(value, t)?;
                    let c = ChassisIdTlv {
                        subtype: s.into(),
                        id,
                    };
                    set_once(&mut chassis, c, t)?;
                }
                TlvType::PortId => {
                    let (s, id) = parse_id(value, t)?;
                    let p = PortIdTlv {
                        subtype: s.into(),
                        id,
                    };
                    set_once(&mut port, p, t)?;
                }
                TlvType::Ttl => {
                    let v = <[u8; 2]>::try_from(value).map_err(|_| LldpduError::BadLength(t))?;
                    set_once(&mut ttl, u16::from_be_bytes(v), t)?;
                }
                TlvType::PortDescription => set_once(&mut port_description, value.to_vec(), t)?,
                TlvType::SystemName => set_once(&mut system_name, value.to_vec(), t)?,
                TlvType::SystemDescription => set_once(&mut system_description, value.to_vec(), t)?,
                TlvType::SystemCapabilities => {
                    let [s0, s1, e0, e1] =
                        <[u8; 4]>::try_from(value).map_err(|_| LldpduError::BadLength(t))?;
                    let c = CapabilitiesTlv {
                        supported: u16::from_be_bytes([s0, s1]),
                        enabled: u16::from_be_bytes([e0, e1]),
                    };
                    set_once(&mut capabilities, c, t)?;
                }
                TlvType::ManagementAddress => {
                    let m = ManagementAddressTlv::parse(value).ok_or(LldpduError::BadLength(t))?;
                    management_addresses.push(m);
                }
                TlvType::OrganizationallySpecific => {
                    let mut v = Reader::new(value);
                    let (oui, subtype) = match (v.array::<3>(), v.u8()) {
                        (Some(oui), Some(subtype)) => (oui, subtype),
                        _ => return Err(LldpduError::BadLength(t)),
                    };
                    org_specific.push(OrgTlv {
                        oui,
                        subtype,
                        info: v.rest().to_vec(),
                    });
                }
                TlvType::Unknown(tlv_type) => unknown.push(UnknownTlv {
                    tlv_type,
                    value: value.to_vec(),
                }),
            }
        }
        match (chassis, port, ttl) {
            (Some(chassis_id), Some(port_id), Some(ttl)) => Ok(LldpduRepr {
                chassis_id,
                port_id,
                ttl,
                port_description,
                system_name,
                system_description,
                capabilities,
                management_addresses,
                org_specific,
                unknown,
            }),
            // Unreachable: End is accepted only after the three mandatory TLVs.
            _ => Err(LldpduError::MissingMandatory(TlvType::ChassisId)),
        }
    }

    /// Ensures every field fits its TLV, so [`emit`](Self::emit) writes
    /// something [`parse`](Self::parse) accepts.
    ///
    /// # Errors
    /// `BadLength` naming the first TLV whose content is too short or too
    /// long; `InvalidType` for an unknown TLV with a decoded type number.
    pub fn check(&self) -> core::result::Result<(), LldpduError> {
        let id_ok = |n: usize| (MIN_ID_LEN..=MAX_ID_LEN).contains(&(n + 1));
        if !id_ok(self.chassis_id.id.len()) {
            return Err(LldpduError::BadLength(TlvType::ChassisId));
        }
        if !id_ok(self.port_id.id.len()) {
            return Err(LldpduError::BadLength(TlvType::PortId));
        }
        let texts = [
            (&self.port_description, TlvType::PortDescription),
            (&self.system_name, TlvType::SystemName),
            (&self.system_description, TlvType::SystemDescription),
        ];
        for (text, t) in texts {
            if text.as_ref().is_some_and(|s| s.len() > MAX_VALUE_LEN) {
                return Err(LldpduError::BadLength(t));
            }
        }
        if !self
            .management_addresses
            .iter()
            .all(ManagementAddressTlv::is_valid)
        {
            return Err(LldpduError::BadLength(TlvType::ManagementAddress));
        }
        if self
            .org_specific
            .iter()
            .any(|o| o.info.len() > MAX_ORG_INFO_LEN)
        {
            return Err(LldpduError::BadLength(TlvType::OrganizationallySpecific));
        }
        for u in &self.unknown {
            if !matches!(TlvType::from(u.tlv_type), TlvType::Unknown(_)) || u.tlv_type > 0x7f {
                return Err(LldpduError::InvalidType(u.tlv_type));
            }
            if u.value.len() > MAX_VALUE_LEN {
                return Err(LldpduError::BadLength(TlvType::Unknown(u.tlv_type)));
            }
        }
        Ok(())
    }

    /// Bytes [`emit`](Self::emit) writes, End included, padding excluded.
    pub fn buffer_len(&self) -> usize {
        let tlv = |value_len: usize| HEADER_LEN.saturating_add(value_len);
        let texts = [
            &self.port_description,
            &self.system_name,
            &self.system_description,
        ];
        let mut n = tlv(1 + self.chassis_id.id.len())
            .saturating_add(tlv(1 + self.port_id.id.len()))
            .saturating_add(tlv(2))
            .saturating_add(tlv(0));
        for s in texts.into_iter().flatten() {
            n = n.saturating_add(tlv(s.len()));
        }
        if self.capabilities.is_some() {
            n = n.saturating_add(tlv(4));
        }
        for m in &self.management_addresses {
            n = n.saturating_add(tlv(m.value_len()));
        }
        for o in &self.org_specific {
            n = n.saturating_add(tlv(4 + o.info.len()));
        }
        for u in &self.unknown {
            n = n.saturating_add(tlv(u.value.len()));
        }
        n
    }

    /// Writes the LLDPDU: mandatory TLVs, port description, system name,
    /// system description, capabilities, management addresses,
    /// organisationally specific TLVs, unknown TLVs, End. Returns the bytes
    /// written ([`buffer_len`](Self::buffer_len)); padding is the caller's.
    ///
    /// # Errors
    /// As [`check`](Self::check); `Truncated` when `buf` is shorter than
    /// [`buffer_len`](Self::buffer_len). Nothing useful is written then.
    pub fn emit(&self, buf: &mut [u8]) -> core::result::Result<usize, LldpduError> {
        self.check()?;
        if buf.len() < self.buffer_len() {
            return Err(LldpduError::Truncated);
        }
        self.emit_checked(&mut Writer::new(buf))
            .map_err(|_| LldpduError::Truncated)
    }

    fn emit_checked(&self, w: &mut Writer<'_>) -> Result<usize> {
        let c = &self.chassis_id;
        w.tlv_header(TlvType::ChassisId.into(), 1 + c.id.len())?;
        w.u8(c.subtype.into())?;
        w.put(&c.id)?;
        let p = &self.port_id;
        w.tlv_header(TlvType::PortId.into(), 1 + p.id.len())?;
        w.u8(p.subtype.into())?;
        w.put(&p.id)?;
        w.tlv_header(TlvType::Ttl.into(), 2)?;
        w.u16(self.ttl)?;
        let texts = [
            (&self.port_description, TlvType::PortDescription),
            (&self.system_name, TlvType::SystemName),
            (&self.system_description, TlvType::SystemDescription),
        ];
        for (text, t) in texts {
            if let Some(s) = text {
                w.tlv_header(t.into(), s.len())?;
                w.put(s)?;
            }
        }
        if let Some(c) = self.capabilities {
            w.tlv_header(TlvType::SystemCapabilities.into(), 4)?;
            w.u16(c.supported)?;
            w.u16(c.enabled)?;
        }
        for m in &self.management_addresses {
            w.tlv_header(TlvType::ManagementAddress.into(), m.value_len())?;
            m.emit(w)?;
        }
        for o in &self.org_specific {
            w.tlv_header(TlvType::OrganizationallySpecific.into(), 4 + o.info.len())?;
            w.put(&o.oui)?;
            w.u8(o.subtype)?;
            w.put(&o.info)?;
        }
        for u in &self.unknown {
            w.tlv_header(u.tlv_type, u.value.len())?;
            w.put(&u.value)?;
        }
        w.tlv_header(TlvType::End.into(), 0)?;
        Ok(w.written())
    }

    /// The LLDPDU in a fresh buffer of [`buffer_len`](Self::buffer_len) bytes.
    ///
    /// # Errors
    /// As [`check`](Self::check).
    pub fn to_vec(&self) -> core::result::Result<Vec<u8>, LldpduError> {
        let mut v = vec![0u8; self.buffer_len()];
        let n = self.emit(&mut v)?;
        v.truncate(n);
        Ok(v)
    }

    /// True when the TTL is 0: the neighbour is shutting down and must be
    /// removed at once.
    pub const fn is_shutdown(&self) -> bool {
        self.ttl == 0
    }

    /// The first well-formed 802.3 maximum frame size TLV's value.
    pub fn max_frame_size(&self) -> Option<u16> {
        self.org_specific.iter().find_map(OrgTlv::max_frame_size)
    }

    /// The port description as text, invalid UTF-8 replaced.
    pub fn port_description_lossy(&self) -> Option<Cow<'_, str>> {
        self.port_description
            .as_deref()
            .map(String::from_utf8_lossy)
    }

    /// The system name as text, invalid UTF-8 replaced.
    pub fn system_name_lossy(&self) -> Option<Cow<'_, str>> {
        self.system_name.as_deref().map(String::from_utf8_lossy)
    }

    /// The system description as text, invalid UTF-8 replaced.
    pub fn system_description_lossy(&self) -> Option<Cow<'_, str>> {
        self.system_description
            .as_deref()
            .map(String::from_utf8_lossy)
    }
}
