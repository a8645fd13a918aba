//! The LACPDU (802.1AX-2014 6.4.2.3): a fixed 110-octet Slow Protocols
//! payload of subtype 1. A view ([`Packet`]) over the bytes and a plain
//! [`LacpduRepr`] that the agent parses and emits.
//!
//! Layout, offsets from the Slow Protocols subtype octet (the first byte
//! after the EtherType 0x8809), matching Wireshark's `packet-lacp.c`:
//!
//! | offset | len | field |
//! |---|---|---|
//! | 0 | 1 | subtype = 1 (LACP) |
//! | 1 | 1 | version = 1 |
//! | 2 | 2 | Actor TLV: type 1, length 20 |
//! | 4 | 2 | actor system priority |
//! | 6 | 6 | actor system (MAC) |
//! | 12 | 2 | actor key |
//! | 14 | 2 | actor port priority |
//! | 16 | 2 | actor port |
//! | 18 | 1 | actor state |
//! | 19 | 3 | reserved |
//! | 22 | 20 | Partner TLV: type 2, length 20, the same fields |
//! | 42 | 2 | Collector TLV: type 3, length 16 |
//! | 44 | 2 | collector max delay (tens of µs) |
//! | 46 | 12 | reserved |
//! | 58 | 2 | Terminator TLV: type 0, length 0 |
//! | 60 | 50 | reserved, zero |
//!
//! Validation is strict about what version 1 defines (TLV types and
//! lengths) and lenient where the standard asks it to be: reserved octets
//! are not checked, and a version above 1 is accepted and read through its
//! version 1 fields, as 802.1AX's protocol version compatibility rule asks
//! of a version 1 implementation (later versions may put further TLVs
//! before the Terminator, so its place is only checked in version 1).
//! Version 0 was never defined and is rejected.

use std::fmt;

use super::{MacAddr, State, WireError};

enum_with_unknown! {
    /// The Slow Protocols subtype (802.3 Annex 57A): what the octet after
    /// EtherType 0x8809 says the rest of the frame is.
    pub enum SlowSubtype(u8) {
        /// Link Aggregation Control Protocol (1).
        Lacp = 1,
        /// Link Aggregation Marker Protocol (2).
        Marker = 2,
        /// Ethernet OAM (3).
        Oam = 3,
        /// Organization Specific Slow Protocol (10).
        Ossp = 10,
    }
}

enum_with_unknown! {
    /// The type octet of an LACPDU TLV.
    pub enum TlvType(u8) {
        /// Terminator (0), length 0.
        Terminator = 0,
        /// Actor Information (1), length 20.
        ActorInformation = 1,
        /// Partner Information (2), length 20.
        PartnerInformation = 2,
        /// Collector Information (3), length 16.
        CollectorInformation = 3,
    }
}

mod field {
    use crate::wire::Field;

    pub const SUBTYPE: usize = 0;
    pub const VERSION: usize = 1;
    /// Start of the Actor Information TLV.
    pub const ACTOR: usize = 2;
    /// Start of the Partner Information TLV.
    pub const PARTNER: usize = 22;
    pub const COLLECTOR_TYPE: usize = 42;
    pub const COLLECTOR_LEN: usize = 43;
    pub const COLLECTOR_MAX_DELAY: Field = 44..46;
    pub const COLLECTOR_RESERVED: Field = 46..58;
    pub const TERMINATOR_TYPE: usize = 58;
    pub const TERMINATOR_LEN: usize = 59;
    pub const RESERVED: Field = 60..110;

    /// Offsets inside an Actor or Partner Information TLV.
    pub mod info {
        use crate::wire::Field;

        pub const TYPE: usize = 0;
        pub const LEN: usize = 1;
        pub const SYSTEM_PRIORITY: Field = 2..4;
        pub const SYSTEM: Field = 4..10;
        pub const KEY: Field = 10..12;
        pub const PORT_PRIORITY: Field = 12..14;
        pub const PORT: Field = 14..16;
        pub const STATE: usize = 16;
        pub const RESERVED: Field = 17..20;
    }
}

/// Octets of an LACPDU, subtype to the last reserved octet.
pub const LACPDU_LEN: usize = field::RESERVED.end;
/// Length field of the Actor and Partner Information TLVs.
pub const INFO_TLV_LEN: u8 = field::info::RESERVED.end as u8;
/// Length field of the Collector Information TLV.
pub const COLLECTOR_TLV_LEN: u8 = (field::COLLECTOR_RESERVED.end - field::COLLECTOR_TYPE) as u8;
/// The LACP version this module writes.
pub const VERSION: u8 = 1;

/// A system's identity in LACP: priority first, then the MAC, which is
/// also the order in which two systems compare (lower wins).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct SystemId {
    /// System priority (NX-OS `lacp system-priority`, default 32768).
    pub priority: u16,
    /// System MAC.
    pub mac: MacAddr,
}

impl fmt::Display for SystemId {
    /// `32768,00:11:22:33:44:55`, the order NX-OS shows.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{},{}", self.priority, self.mac)
    }
}

/// What one end says about a port: the content of an Actor or Partner
/// Information TLV.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct PortInfo {
    /// The system the port belongs to.
    pub system: SystemId,
    /// Operational key: ports with the same key on one system may aggregate
    /// (railyard uses the port-channel number).
    pub key: u16,
    /// Port priority (NX-OS `lacp port-priority`, default 32768).
    pub port_priority: u16,
    /// Port number, unique in the system.
    pub port: u16,
    /// The eight state flags.
    pub state: State,
}

/// Why a Slow Protocols payload is not a usable LACPDU (or could not be
/// emitted). Each defect has its own variant so the agent can tell a
/// Marker PDU from a broken LACPDU; [`WireError`] is available through
/// `From` for callers that only need truncated/malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LacpduError {
    /// Fewer than [`LACPDU_LEN`] octets (on emit: the buffer is shorter).
    Truncated,
    /// The subtype is not LACP (a Marker PDU, OAM, …).
    NotLacp(SlowSubtype),
    /// Version 0, which no standard defines.
    BadVersion(u8),
    /// A TLV other than the one this place holds.
    BadTlvType {
        /// The TLV that belongs here.
        expected: TlvType,
        /// The type octet found.
        found: u8,
    },
    /// The TLV of the right type with the wrong length octet.
    BadTlvLength {
        /// The TLV.
        tlv: TlvType,
        /// The length octet found.
        found: u8,
    },
}

impl fmt::Display for LacpduError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LacpduError::Truncated => write!(f, "LACPDU shorter than {LACPDU_LEN} octets"),
            LacpduError::NotLacp(s) => write!(f, "slow protocols subtype {s:?} is not LACP"),
            LacpduError::BadVersion(v) => write!(f, "LACP version {v} is not defined"),
            LacpduError::BadTlvType { expected, found } => {
                write!(f, "TLV type {found} where {expected:?} belongs")
            }
            LacpduError::BadTlvLength { tlv, found } => {
                write!(f, "bad length {found} for TLV {tlv:?}")
            }
        }
    }
}

impl std::error::Error for LacpduError {}

impl From<LacpduError> for WireError {
    fn from(e: LacpduError) -> WireError {
        match e {
            LacpduError::Truncated => WireError::Truncated,
            _ => WireError::Malformed,
        }
    }
}

/// The length octet each fixed TLV must carry.
const fn tlv_len(t: TlvType) -> u8 {
    match t {
        TlvType::ActorInformation | TlvType::PartnerInformation => INFO_TLV_LEN,
        TlvType::CollectorInformation => COLLECTOR_TLV_LEN,
        TlvType::Terminator | TlvType::Unknown(_) => 0,
    }
}

/// Imbue a raw octet buffer with LACPDU structure; the buffer starts at
/// the Slow Protocols subtype octet (the byte after EtherType 0x8809).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking it; accessors may then panic.
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wraps a buffer after [`check_len`](Self::check_len) and
    /// [`check`](Self::check).
    ///
    /// # Errors
    /// The first defect, as [`check`](Self::check) reports it.
    pub fn new_checked(buffer: T) -> Result<Packet<T>, LacpduError> {
        let p = Self::new_unchecked(buffer);
        p.check()?;
        Ok(p)
    }

    /// Ensures no accessor can panic: the buffer holds [`LACPDU_LEN`]
    /// octets (more, such as Ethernet trailer bytes, are ignored).
    ///
    /// # Errors
    /// `Truncated` when it does not.
    pub fn check_len(&self) -> Result<(), WireError> {
        if self.buffer.as_ref().len() < LACPDU_LEN {
            Err(WireError::Truncated)
        } else {
            Ok(())
        }
    }

    /// Ensures the buffer is a version 1 (or later) LACPDU: length, subtype,
    /// version, and the type and length of each TLV version 1 defines.
    ///
    /// # Errors
    /// `Truncated`, `NotLacp`, `BadVersion`, then `BadTlvType` or
    /// `BadTlvLength` for the first TLV out of place, in wire order.
    pub fn check(&self) -> Result<(), LacpduError> {
        // The subtype first: a short Marker PDU is a Marker PDU, not a
        // truncated LACPDU.
        let b = self.buffer.as_ref();
        match b.get(field::SUBTYPE).map(|&s| SlowSubtype::from(s)) {
            None => return Err(LacpduError::Truncated),
            Some(SlowSubtype::Lacp) => {}
            Some(other) => return Err(LacpduError::NotLacp(other)),
        }
        self.check_len().map_err(|_| LacpduError::Truncated)?;
        let version = self.version();
        if version == 0 {
            return Err(LacpduError::BadVersion(version));
        }
        // Later versions may insert TLVs before the Terminator.
        let fixed = if version > VERSION {
            3
        } else {
            FIXED_TLVS.len()
        };
        for &(expected, at) in FIXED_TLVS.iter().take(fixed) {
            let (found, len) = (b[at], b[at + 1]);
            if TlvType::from(found) != expected {
                return Err(LacpduError::BadTlvType { expected, found });
            }
            if len != tlv_len(expected) {
                return Err(LacpduError::BadTlvLength {
                    tlv: expected,
                    found: len,
                });
            }
        }
        Ok(())
    }

    /// Gives the buffer back.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn u16_at(&self, at: usize) -> u16 {
        let b = self.buffer.as_ref();
        u16::from_be_bytes([b[at], b[at + 1]])
    }

    fn info(&self, base: usize) -> PortInfo {
        use field::info;
        let b = self.buffer.as_ref();
        PortInfo {
            system: SystemId {
                priority: self.u16_at(base + info::SYSTEM_PRIORITY.start),
                mac: MacAddr::from_bytes(&b[base + info::SYSTEM.start..base + info::SYSTEM.end]),
            },
            key: self.u16_at(base + info::KEY.start),
            port_priority: self.u16_at(base + info::PORT_PRIORITY.start),
            port: self.u16_at(base + info::PORT.start),
            state: State(b[base + info::STATE]),
        }
    }

    /// Slow Protocols subtype (1 for an LACPDU).
    #[inline]
    pub fn subtype(&self) -> SlowSubtype {
        SlowSubtype::from(self.buffer.as_ref()[field::SUBTYPE])
    }

    /// LACP version.
    #[inline]
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }

    /// Type octet of the Actor Information TLV (1).
    #[inline]
    pub fn actor_tlv_type(&self) -> TlvType {
        TlvType::from(self.buffer.as_ref()[field::ACTOR + field::info::TYPE])
    }

    /// Length octet of the Actor Information TLV (20).
    #[inline]
    pub fn actor_info_len(&self) -> u8 {
        self.buffer.as_ref()[field::ACTOR + field::info::LEN]
    }

    /// The sender's own port: Actor Information.
    #[inline]
    pub fn actor(&self) -> PortInfo {
        self.info(field::ACTOR)
    }

    /// Type octet of the Partner Information TLV (2).
    #[inline]
    pub fn partner_tlv_type(&self) -> TlvType {
        TlvType::from(self.buffer.as_ref()[field::PARTNER + field::info::TYPE])
    }

    /// Length octet of the Partner Information TLV (20).
    #[inline]
    pub fn partner_info_len(&self) -> u8 {
        self.buffer.as_ref()[field::PARTNER + field::info::LEN]
    }

    /// What the sender believes about the receiver's port: Partner
    /// Information.
    #[inline]
    pub fn partner(&self) -> PortInfo {
        self.info(field::PARTNER)
    }

    /// Type octet of the Collector Information TLV (3).
    #[inline]
    pub fn collector_tlv_type(&self) -> TlvType {
        TlvType::from(self.buffer.as_ref()[field::COLLECTOR_TYPE])
    }

    /// Length octet of the Collector Information TLV (16).
    #[inline]
    pub fn collector_info_len(&self) -> u8 {
        self.buffer.as_ref()[field::COLLECTOR_LEN]
    }

    /// CollectorMaxDelay, in tens of microseconds.
    #[inline]
    pub fn collector_max_delay(&self) -> u16 {
        self.u16_at(field::COLLECTOR_MAX_DELAY.start)
    }

    /// Type octet of the Terminator TLV (0) in a version 1 LACPDU.
    #[inline]
    pub fn terminator_tlv_type(&self) -> TlvType {
        TlvType::from(self.buffer.as_ref()[field::TERMINATOR_TYPE])
    }

    /// Length octet of the Terminator TLV (0) in a version 1 LACPDU.
    #[inline]
    pub fn terminator_len(&self) -> u8 {
        self.buffer.as_ref()[field::TERMINATOR_LEN]
    }
}

/// The TLVs version 1 defines, in wire order, and where each starts.
const FIXED_TLVS: [(TlvType, usize); 4] = [
    (TlvType::ActorInformation, field::ACTOR),
    (TlvType::PartnerInformation, field::PARTNER),
    (TlvType::CollectorInformation, field::COLLECTOR_TYPE),
    (TlvType::Terminator, field::TERMINATOR_TYPE),
];

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn set_u16_at(&mut self, at: usize, v: u16) {
        self.buffer.as_mut()[at..at + 2].copy_from_slice(&v.to_be_bytes());
    }

    fn set_info(&mut self, base: usize, tlv: TlvType, v: &PortInfo) {
        use field::info;
        let b = self.buffer.as_mut();
        b[base + info::TYPE] = tlv.into();
        b[base + info::LEN] = INFO_TLV_LEN;
        b[base + info::SYSTEM.start..base + info::SYSTEM.end].copy_from_slice(&v.system.mac.0);
        b[base + info::STATE] = v.state.0;
        b[base + info::RESERVED.start..base + info::RESERVED.end].fill(0);
        self.set_u16_at(base + info::SYSTEM_PRIORITY.start, v.system.priority);
        self.set_u16_at(base + info::KEY.start, v.key);
        self.set_u16_at(base + info::PORT_PRIORITY.start, v.port_priority);
        self.set_u16_at(base + info::PORT.start, v.port);
    }

    /// Sets the subtype.
    #[inline]
    pub fn set_subtype(&mut self, s: SlowSubtype) {
        self.buffer.as_mut()[field::SUBTYPE] = s.into();
    }

    /// Sets the version.
    #[inline]
    pub fn set_version(&mut self, v: u8) {
        self.buffer.as_mut()[field::VERSION] = v;
    }

    /// Writes the whole Actor Information TLV (type, length, fields,
    /// zeroed reserved octets).
    #[inline]
    pub fn set_actor(&mut self, v: &PortInfo) {
        self.set_info(field::ACTOR, TlvType::ActorInformation, v);
    }

    /// Writes the whole Partner Information TLV (type, length, fields,
    /// zeroed reserved octets).
    #[inline]
    pub fn set_partner(&mut self, v: &PortInfo) {
        self.set_info(field::PARTNER, TlvType::PartnerInformation, v);
    }

    /// Writes the whole Collector Information TLV with `max_delay` (tens
    /// of microseconds) and zeroed reserved octets.
    #[inline]
    pub fn set_collector(&mut self, max_delay: u16) {
        let b = self.buffer.as_mut();
        b[field::COLLECTOR_TYPE] = TlvType::CollectorInformation.into();
        b[field::COLLECTOR_LEN] = COLLECTOR_TLV_LEN;
        b[field::COLLECTOR_RESERVED].fill(0);
        self.set_u16_at(field::COLLECTOR_MAX_DELAY.start, max_delay);
    }

    /// Writes the Terminator TLV and zeroes the 50 reserved octets after it.
    #[inline]
    pub fn set_terminator(&mut self) {
        let b = self.buffer.as_mut();
        b[field::TERMINATOR_TYPE] = TlvType::Terminator.into();
        b[field::TERMINATOR_LEN] = 0;
        b[field::RESERVED].fill(0);
    }
}

impl<T: AsRef<[u8]>> AsRef<[u8]> for Packet<T> {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_ref()
    }
}

/// An LACPDU as plain data: what a port says about itself (actor) and
/// about the port it hears (partner).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct LacpduRepr {
    /// The sender's port.
    pub actor: PortInfo,
    /// The sender's view of the receiver's port.
    pub partner: PortInfo,
    /// CollectorMaxDelay, tens of microseconds.
    pub collector_max_delay: u16,
}

impl LacpduRepr {
    /// Reads and validates an LACPDU (the bytes from the Slow Protocols
    /// subtype on; more than [`LACPDU_LEN`] are allowed and ignored).
    ///
    /// # Errors
    /// As [`Packet::check`].
    pub fn parse<T: AsRef<[u8]> + ?Sized>(payload: &T) -> Result<LacpduRepr, LacpduError> {
        let p = Packet::new_checked(payload.as_ref())?;
        Ok(LacpduRepr {
            actor: p.actor(),
            partner: p.partner(),
            collector_max_delay: p.collector_max_delay(),
        })
    }

    /// Octets [`emit`](Self::emit) writes: always [`LACPDU_LEN`].
    pub const fn buffer_len(&self) -> usize {
        LACPDU_LEN
    }

    /// Writes a version 1 LACPDU into the first [`LACPDU_LEN`] octets of
    /// `buf`, every reserved octet zero. Returns the octets written.
    ///
    /// # Errors
    /// `Truncated` when `buf` is shorter than [`LACPDU_LEN`]; nothing is
    /// written then.
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, LacpduError> {
        let Some(buf) = buf.get_mut(..LACPDU_LEN) else {
            return Err(LacpduError::Truncated);
        };
        let mut p = Packet::new_unchecked(buf);
        p.set_subtype(SlowSubtype::Lacp);
        p.set_version(VERSION);
        p.set_actor(&self.actor);
        p.set_partner(&self.partner);
        p.set_collector(self.collector_max_delay);
        p.set_terminator();
        Ok(LACPDU_LEN)
    }
}
