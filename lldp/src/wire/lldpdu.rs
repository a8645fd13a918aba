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

use std::borrow::Cow;
use std::fmt;

use super::{MacAddr, Result, WireError};

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

const TYPE_SHIFT: u16 = 9;
const LEN_MASK: u16 = 0x01ff;

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

// ---------------------------------------------------------------------------
// Panic-free cursors shared with the DCBX module.

/// Reads big-endian fields off the front of a slice; every read is checked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading at the front of `bytes`.
    pub(crate) const fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }

    /// The bytes not read yet.
    pub(crate) const fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// The next `n` bytes, or `None` when fewer remain (nothing is consumed then).
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if n > self.rest.len() {
            return None;
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Some(head)
    }

    /// The next `N` bytes as an array.
    pub(crate) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Some(a)
    }

    /// The next byte.
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    /// The next big-endian u16.
    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_be_bytes)
    }

    /// The next big-endian u32.
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_be_bytes)
    }

    /// Splits off one 7-bit type / 9-bit length TLV: its type and value.
    ///
    /// # Errors
    /// `Truncated` when the header or the value it claims runs past the end;
    /// nothing is consumed then.
    pub(crate) fn tlv(&mut self) -> Result<(u8, &'a [u8])> {
        let mut r = *self;
        let header = r.u16().ok_or(WireError::Truncated)?;
        let ty = (header >> TYPE_SHIFT) as u8;
        let value = r
            .take(usize::from(header & LEN_MASK))
            .ok_or(WireError::Truncated)?;
        *self = r;
        Ok((ty, value))
    }
}

/// Writes big-endian fields into a buffer; every write is checked.
#[derive(Debug)]
pub(crate) struct Writer<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl<'a> Writer<'a> {
    /// Starts writing at the front of `buf`.
    pub(crate) fn new(buf: &'a mut [u8]) -> Writer<'a> {
        Writer { buf, at: 0 }
    }

    /// Bytes written so far.
    pub(crate) const fn written(&self) -> usize {
        self.at
    }

    /// Appends `bytes`.
    ///
    /// # Errors
    /// `Truncated` when the buffer has no room; nothing is written then.
    pub(crate) fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self
            .at
            .checked_add(bytes.len())
            .ok_or(WireError::Truncated)?;
        let dst = self.buf.get_mut(self.at..end).ok_or(WireError::Truncated)?;
        dst.copy_from_slice(bytes);
        self.at = end;
        Ok(())
    }

    /// Appends a byte.
    pub(crate) fn u8(&mut self, v: u8) -> Result<()> {
        self.put(&[v])
    }

    /// Appends a big-endian u16.
    pub(crate) fn u16(&mut self, v: u16) -> Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// Appends a big-endian u32.
    pub(crate) fn u32(&mut self, v: u32) -> Result<()> {
        self.put(&v.to_be_bytes())
    }

    /// Appends a 7-bit type / 9-bit length TLV header.
    ///
    /// # Errors
    /// `Malformed` when `ty` needs more than 7 bits or `len` more than 9;
    /// `Truncated` when the buffer has no room.
    pub(crate) fn tlv_header(&mut self, ty: u8, len: usize) -> Result<()> {
        if ty > 0x7f || len > MAX_VALUE_LEN {
            return Err(WireError::Malformed);
        }
        // len <= 0x1ff, so the cast is lossless.
        self.u16((u16::from(ty) << TYPE_SHIFT) | len as u16)
    }
}

// ---------------------------------------------------------------------------
// The whole LLDPDU as plain data.

/// OUI of IEEE 802.1 organisationally specific TLVs (DCBX in IEEE mode lives here).
pub const OUI_IEEE_802_1: [u8; 3] = [0x00, 0x80, 0xc2];
/// OUI of IEEE 802.3 organisationally specific TLVs (maximum frame size lives here).
pub const OUI_IEEE_802_3: [u8; 3] = [0x00, 0x12, 0x0f];
/// 802.3 subtype of the maximum frame size TLV (info: u16).
pub const SUBTYPE_802_3_MAX_FRAME_SIZE: u8 = 4;
/// Longest information string of an organisationally specific TLV (511 minus
/// OUI and subtype).
pub const MAX_ORG_INFO_LEN: usize = MAX_VALUE_LEN - 4;
/// Shortest Chassis/Port ID TLV value, subtype included.
pub const MIN_ID_LEN: usize = 2;
/// Longest Chassis/Port ID TLV value, subtype included.
pub const MAX_ID_LEN: usize = 256;
/// Longest management address (the address string is at most 32 bytes, subtype included).
pub const MAX_MGMT_ADDR_LEN: usize = 31;
/// Longest management address OID.
pub const MAX_MGMT_OID_LEN: usize = 128;
/// System capability bit: bridge (REFERENCE.md §2).
pub const CAP_BRIDGE: u16 = 0x04;
/// System capability bit: router (REFERENCE.md §2).
pub const CAP_ROUTER: u16 = 0x10;

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
    fn value_len(&self) -> usize {
        // string length, subtype, address, if subtype, if number, oid length, oid
        1 + 1 + self.address.len() + 1 + 4 + 1 + self.oid.len()
    }

    fn parse(value: &[u8]) -> Option<ManagementAddressTlv> {
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

    fn is_valid(&self) -> bool {
        (1..=MAX_MGMT_ADDR_LEN).contains(&self.address.len()) && self.oid.len() <= MAX_MGMT_OID_LEN
    }

    fn emit(&self, w: &mut Writer<'_>) -> Result<()> {
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

/// A TLV whose type (9–126) this module does not decode, kept as received.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct UnknownTlv {
    /// TLV type, 9–126.
    pub tlv_type: u8,
    /// The value bytes, 0–511.
    pub value: Vec<u8>,
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Chassis ID (MAC 02:00:00:00:00:01), Port ID (name "e1"), TTL 120,
    /// the PFC TLV of REFERENCE.md §3, End, then padding.
    pub(super) static LLDPDU: [u8; 36] = [
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod repr_tests {
    use super::*;
    use proptest::collection::vec;
    use proptest::prelude::*;

    /// Every TLV kind once, in the order `emit` writes them:
    static FULL: &[u8] = &[
        0x02, 0x07, 0x04, 0x02, 0x00, 0x00, 0x00, 0x00,
        0x01, // chassis: MAC 02:00:00:00:00:01
        0x04, 0x0c, 0x05, b'E', b't', b'h', b'e', b'r', b'n', b'e', b't', b'1', b'/',
        b'1', // port: ifname "Ethernet1/1"
        0x06, 0x02, 0x00, 0x78, // ttl 120
        0x08, 0x04, b'u', b'p', b'-', b'1', // port description "up-1"
        0x0a, 0x05, b'l', b'e', b'a', b'f', b'1', // system name "leaf1"
        0x0c, 0x08, b'r', b'a', b'i', b'l', b'y', b'a', b'r', b'd', // system description
        0x0e, 0x04, 0x00, 0x14, 0x00, 0x04, // caps: bridge|router supported, bridge enabled
        // management address: string length 5, IPv4 10.0.0.1, ifIndex 7, no OID
        0x10, 0x0c, 0x05, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0xfe,
        0x06, 0x00, 0x12, 0x0f, 0x04, 0x23, 0xf0, // 802.3 max frame size 9200
        0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08, // DCBX PFC (REFERENCE.md §3)
        0x12, 0x02, 0xab, 0xcd, // unknown type 9, two bytes
        0x00, 0x00, // end
    ];

    fn full() -> LldpduRepr {
        LldpduRepr {
            chassis_id: ChassisIdTlv {
                subtype: ChassisIdSubtype::MacAddress,
                id: vec![0x02, 0, 0, 0, 0, 0x01],
            },
            port_id: PortIdTlv {
                subtype: PortIdSubtype::InterfaceName,
                id: b"Ethernet1/1".to_vec(),
            },
            ttl: 120,
            port_description: Some(b"up-1".to_vec()),
            system_name: Some(b"leaf1".to_vec()),
            system_description: Some(b"railyard".to_vec()),
            capabilities: Some(CapabilitiesTlv {
                supported: CAP_BRIDGE | CAP_ROUTER,
                enabled: CAP_BRIDGE,
            }),
            management_addresses: vec![ManagementAddressTlv {
                address_subtype: 1,
                address: vec![10, 0, 0, 1],
                interface_subtype: 2,
                interface_number: 7,
                oid: vec![],
            }],
            org_specific: vec![
                OrgTlv::new_max_frame_size(9200),
                OrgTlv {
                    oui: OUI_IEEE_802_1,
                    subtype: 0x0b,
                    info: vec![0x08, 0x08],
                },
            ],
            unknown: vec![UnknownTlv {
                tlv_type: 9,
                value: vec![0xab, 0xcd],
            }],
        }
    }

    /// The mandatory TLVs of `FULL` (chassis, port, TTL).
    fn mandatory() -> Vec<u8> {
        FULL[..27].to_vec()
    }

    fn with(tail: &[u8]) -> Vec<u8> {
        let mut v = mandatory();
        v.extend_from_slice(tail);
        v
    }

    #[test]
    fn parse_full() {
        let r = LldpduRepr::parse(FULL).unwrap();
        assert_eq!(r, full());
        assert_eq!(r.chassis_id.mac(), Some(MacAddr([2, 0, 0, 0, 0, 1])));
        assert_eq!(r.port_id.id_lossy(), "Ethernet1/1");
        assert_eq!(r.port_id.mac(), None);
        assert_eq!(r.system_name_lossy().unwrap(), "leaf1");
        assert_eq!(r.port_description_lossy().unwrap(), "up-1");
        assert_eq!(r.system_description_lossy().unwrap(), "railyard");
        assert_eq!(r.max_frame_size(), Some(9200));
        assert!(!r.is_shutdown());
    }

    #[test]
    fn emit_full() {
        let r = full();
        assert_eq!(r.buffer_len(), FULL.len());
        let mut buf = vec![0xa5u8; FULL.len() + 3];
        assert_eq!(r.emit(&mut buf), Ok(FULL.len()));
        assert_eq!(&buf[..FULL.len()], FULL);
        assert_eq!(&buf[FULL.len()..], &[0xa5; 3]);
        assert_eq!(r.to_vec().unwrap(), FULL);
    }

    #[test]
    fn existing_vector_with_padding() {
        // The walk test's LLDPDU: mandatory TLVs, PFC, End, 8 bytes of padding.
        let r = LldpduRepr::parse(&super::tests::LLDPDU).unwrap();
        assert_eq!(r.chassis_id.mac(), Some(MacAddr([2, 0, 0, 0, 0, 1])));
        assert_eq!(r.port_id.id, b"e1");
        assert_eq!(r.ttl, 120);
        assert_eq!(r.org_specific.len(), 1);
        assert_eq!(r.to_vec().unwrap(), &super::tests::LLDPDU[..28]);
        // Ethernet pads to 60 bytes: zero padding after End is fine.
        let mut padded = FULL.to_vec();
        padded.resize(200, 0);
        assert_eq!(LldpduRepr::parse(&padded), Ok(full()));
    }

    #[test]
    fn shutdown_and_minimal() {
        let r = LldpduRepr::new(
            ChassisIdTlv {
                subtype: ChassisIdSubtype::Local,
                id: b"x".to_vec(),
            },
            PortIdTlv {
                subtype: PortIdSubtype::Unknown(0),
                id: vec![0; 255],
            },
            0,
        );
        let bytes = r.to_vec().unwrap();
        // Port ID value of 256 bytes: type 2, length 0x100.
        assert_eq!(&bytes[..7], &[0x02, 0x02, 0x07, b'x', 0x05, 0x00, 0x00]);
        let back = LldpduRepr::parse(&bytes).unwrap();
        assert!(back.is_shutdown());
        assert_eq!(back, r);
    }

    #[test]
    fn mandatory_order() {
        use LldpduError::MissingMandatory as M;
        assert_eq!(LldpduRepr::parse(&[]), Err(M(TlvType::ChassisId)));
        assert_eq!(LldpduRepr::parse(&[0, 0]), Err(M(TlvType::ChassisId)));
        // Port ID first.
        assert_eq!(LldpduRepr::parse(&FULL[9..]), Err(M(TlvType::ChassisId)));
        // Chassis, then TTL.
        let mut v = FULL[..9].to_vec();
        v.extend_from_slice(&[0x06, 0x02, 0x00, 0x78, 0x00, 0x00]);
        assert_eq!(LldpduRepr::parse(&v), Err(M(TlvType::PortId)));
        // Chassis, port, End.
        let mut v = FULL[..23].to_vec();
        v.extend_from_slice(&[0x00, 0x00]);
        assert_eq!(LldpduRepr::parse(&v), Err(M(TlvType::Ttl)));
        // Chassis, port, then the bytes end.
        assert_eq!(LldpduRepr::parse(&FULL[..23]), Err(M(TlvType::Ttl)));
    }

    #[test]
    fn bad_lengths() {
        use LldpduError::BadLength as B;
        // Chassis ID of 1 byte (subtype only).
        let v = [0x02, 0x01, 0x04];
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ChassisId)));
        // Chassis ID of 257 bytes.
        let mut v = vec![0x03, 0x01, 0x07];
        v.extend_from_slice(&[b'a'; 256]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ChassisId)));
        // 256 is the limit.
        let mut v = vec![0x03, 0x00, 0x07];
        v.extend_from_slice(&[b'a'; 255]);
        v.extend_from_slice(&FULL[9..27]);
        v.extend_from_slice(&[0, 0]);
        assert_eq!(LldpduRepr::parse(&v).unwrap().chassis_id.id.len(), 255);
        // Port ID of 1 byte.
        let mut v = FULL[..9].to_vec();
        v.extend_from_slice(&[0x04, 0x01, 0x05]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::PortId)));
        // TTL of 3 bytes.
        let mut v = FULL[..23].to_vec();
        v.extend_from_slice(&[0x06, 0x03, 0x00, 0x78, 0x00, 0x00, 0x00]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::Ttl)));
        // Capabilities of 3 bytes.
        let v = with(&[0x0e, 0x03, 0x00, 0x14, 0x00, 0x00, 0x00]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::SystemCapabilities)));
        // Management address string length 6 (5-byte address) in a 12-byte value.
        let v = with(&[
            0x10, 0x0c, 0x06, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00,
            0x00, 0x00,
        ]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
        // Management address with a string length of 1 (no address).
        let v = with(&[
            0x10, 0x08, 0x01, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00,
        ]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
        // Management address whose OID length claims more than is there.
        let v = with(&[
            0x10, 0x0c, 0x05, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x01,
            0x00, 0x00,
        ]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
        // Management address with a byte left over after the OID.
        let v = with(&[
            0x10, 0x0d, 0x05, 0x01, 0x0a, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0x00, 0x07, 0x00,
            0xff, 0x00, 0x00,
        ]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::ManagementAddress)));
        // Organisationally specific of 3 bytes.
        let v = with(&[0xfe, 0x03, 0x00, 0x80, 0xc2, 0x00, 0x00]);
        assert_eq!(
            LldpduRepr::parse(&v),
            Err(B(TlvType::OrganizationallySpecific))
        );
        // 4 bytes (OUI, subtype, empty info) is enough.
        let v = with(&[0xfe, 0x04, 0x00, 0x80, 0xc2, 0x00, 0x00, 0x00]);
        assert_eq!(LldpduRepr::parse(&v).unwrap().org_specific[0].info, b"");
        // End with a length.
        let v = with(&[0x00, 0x01, 0x00]);
        assert_eq!(LldpduRepr::parse(&v), Err(B(TlvType::End)));
    }

    #[test]
    fn duplicates() {
        use LldpduError::Duplicate as D;
        for (tlv, t) in [
            (&FULL[..9], TlvType::ChassisId),
            (&FULL[9..23], TlvType::PortId),
            (&FULL[23..27], TlvType::Ttl),
            (&FULL[27..33], TlvType::PortDescription),
            (&FULL[33..40], TlvType::SystemName),
            (&FULL[40..50], TlvType::SystemDescription),
            (&FULL[50..56], TlvType::SystemCapabilities),
        ] {
            // The mandatory ones are already there once, so one more is a
            // duplicate; the optional ones go in twice.
            let copies = if MANDATORY.contains(&t) { 1 } else { 2 };
            let mut tail = tlv.repeat(copies);
            tail.extend_from_slice(&[0, 0]);
            assert_eq!(LldpduRepr::parse(&with(&tail)), Err(D(t)), "{t:?}");
        }
        // Management addresses and org TLVs may repeat.
        let mut tail = FULL[56..70].repeat(2);
        tail.extend_from_slice(&FULL[78..86].repeat(2));
        tail.extend_from_slice(&[0, 0]);
        let r = LldpduRepr::parse(&with(&tail)).unwrap();
        assert_eq!((r.management_addresses.len(), r.org_specific.len()), (2, 2));
    }

    #[test]
    fn end_and_trailing() {
        // No End.
        assert_eq!(
            LldpduRepr::parse(&FULL[..FULL.len() - 2]),
            Err(LldpduError::MissingEnd)
        );
        assert_eq!(
            LldpduRepr::parse(&mandatory()),
            Err(LldpduError::MissingEnd)
        );
        // Non-zero bytes after End.
        let mut v = FULL.to_vec();
        v.extend_from_slice(&[0, 0, 0, 1]);
        assert_eq!(LldpduRepr::parse(&v), Err(LldpduError::TrailingBytes));
        // A TLV after End is trailing bytes, not a TLV.
        let mut v = with(&[0x00, 0x00]);
        v.extend_from_slice(&FULL[27..33]);
        assert_eq!(LldpduRepr::parse(&v), Err(LldpduError::TrailingBytes));
    }

    #[test]
    fn truncated() {
        // Cut inside each TLV of FULL: always Truncated or a mandatory/End
        // error at a TLV boundary, never a panic.
        let boundaries = [0, 9, 23, 27, 33, 40, 50, 56, 70, 78, 86, 90];
        for cut in 1..FULL.len() {
            let got = LldpduRepr::parse(&FULL[..cut]);
            if boundaries.contains(&cut) {
                assert_ne!(got, Err(LldpduError::Truncated), "cut {cut}");
            } else {
                assert_eq!(got, Err(LldpduError::Truncated), "cut {cut}");
            }
        }
        // A header claiming more than the buffer holds.
        let v = with(&[0x0a, 0x10, b'a']);
        assert_eq!(LldpduRepr::parse(&v), Err(LldpduError::Truncated));
        assert_eq!(
            WireError::from(LldpduError::Truncated),
            WireError::Truncated
        );
        assert_eq!(
            WireError::from(LldpduError::MissingEnd),
            WireError::Malformed
        );
    }

    #[test]
    fn emit_rejects_what_cannot_be_encoded() {
        let mut r = full();
        r.chassis_id.id.clear();
        assert_eq!(r.to_vec(), Err(LldpduError::BadLength(TlvType::ChassisId)));
        let mut r = full();
        r.port_id.id = vec![0; 256];
        assert_eq!(r.to_vec(), Err(LldpduError::BadLength(TlvType::PortId)));
        let mut r = full();
        r.system_name = Some(vec![b'n'; 512]);
        assert_eq!(r.to_vec(), Err(LldpduError::BadLength(TlvType::SystemName)));
        let mut r = full();
        r.management_addresses[0].address = vec![0; 32];
        assert_eq!(
            r.to_vec(),
            Err(LldpduError::BadLength(TlvType::ManagementAddress))
        );
        let mut r = full();
        r.management_addresses[0].oid = vec![0; 129];
        assert_eq!(
            r.to_vec(),
            Err(LldpduError::BadLength(TlvType::ManagementAddress))
        );
        let mut r = full();
        r.org_specific[0].info = vec![0; MAX_ORG_INFO_LEN + 1];
        assert_eq!(
            r.to_vec(),
            Err(LldpduError::BadLength(TlvType::OrganizationallySpecific))
        );
        for bad in [0u8, 5, 8, 127, 128, 255] {
            let mut r = full();
            r.unknown[0].tlv_type = bad;
            assert_eq!(r.to_vec(), Err(LldpduError::InvalidType(bad)));
        }
        // A short buffer is reported, not a panic.
        let mut buf = [0xa5u8; 10];
        assert_eq!(full().emit(&mut buf), Err(LldpduError::Truncated));
    }

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

    fn arb_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
        vec(any::<u8>(), 0..=max)
    }

    prop_compose! {
        fn arb_mgmt()(
            address_subtype in any::<u8>(),
            address in vec(any::<u8>(), 1..=MAX_MGMT_ADDR_LEN),
            interface_subtype in any::<u8>(),
            interface_number in any::<u32>(),
            oid in arb_bytes(MAX_MGMT_OID_LEN),
        ) -> ManagementAddressTlv {
            ManagementAddressTlv { address_subtype, address, interface_subtype, interface_number, oid }
        }
    }

    prop_compose! {
        fn arb_org()(oui in any::<[u8; 3]>(), subtype in any::<u8>(), info in arb_bytes(MAX_ORG_INFO_LEN)) -> OrgTlv {
            OrgTlv { oui, subtype, info }
        }
    }

    prop_compose! {
        fn arb_unknown()(tlv_type in 9u8..=126, value in arb_bytes(MAX_VALUE_LEN)) -> UnknownTlv {
            UnknownTlv { tlv_type, value }
        }
    }

    prop_compose! {
        /// Legal LLDPDUs only: every field within the lengths `check` allows.
        pub(crate) fn arb_lldpdu()(
            cs in any::<u8>(), cid in vec(any::<u8>(), 1..=255),
            ps in any::<u8>(), pid in vec(any::<u8>(), 1..=255),
            ttl in any::<u16>(),
            port_description in proptest::option::of(arb_bytes(MAX_VALUE_LEN)),
            system_name in proptest::option::of(arb_bytes(64)),
            system_description in proptest::option::of(arb_bytes(MAX_VALUE_LEN)),
            capabilities in proptest::option::of(any::<(u16, u16)>()),
            management_addresses in vec(arb_mgmt(), 0..3),
            org_specific in vec(arb_org(), 0..4),
            unknown in vec(arb_unknown(), 0..3),
        ) -> LldpduRepr {
            LldpduRepr {
                chassis_id: ChassisIdTlv { subtype: cs.into(), id: cid },
                port_id: PortIdTlv { subtype: ps.into(), id: pid },
                ttl,
                port_description,
                system_name,
                system_description,
                capabilities: capabilities.map(|(supported, enabled)| CapabilitiesTlv { supported, enabled }),
                management_addresses,
                org_specific,
                unknown,
            }
        }
    }

    proptest! {
        #[test]
        fn lldpdu_round_trip(r in arb_lldpdu(), pad in 0usize..64) {
            let mut bytes = r.to_vec().unwrap();
            prop_assert_eq!(bytes.len(), r.buffer_len());
            bytes.resize(bytes.len() + pad, 0);
            prop_assert_eq!(LldpduRepr::parse(&bytes).unwrap(), r);
        }

        #[test]
        fn lldpdu_parse_never_panics(bytes in arb_bytes(700)) {
            if let Ok(r) = LldpduRepr::parse(&bytes) {
                let again = r.to_vec().unwrap();
                prop_assert_eq!(LldpduRepr::parse(&again).unwrap(), r);
            }
        }

        #[test]
        fn lldpdu_parse_never_panics_after_mandatory(tail in arb_bytes(300)) {
            // Random TLVs after valid mandatory ones reach the deeper checks.
            let v = with(&tail);
            if let Ok(r) = LldpduRepr::parse(&v) {
                prop_assert_eq!(LldpduRepr::parse(&r.to_vec().unwrap()).unwrap(), r);
            }
        }
    }
}
