//! Typed, zero-copy views over LACPDUs and the Ethernet framing of the
//! Slow Protocols they travel in.
//!
//! [`Packet`] is the view (`new_unchecked`, `new_checked`, `check_len`,
//! accessors named after the field and `set_*` setters) and
//! [`LacpduRepr`] the plain form that parses and emits. Contract: after
//! `check_len` succeeds no accessor panics; `emit` never panics, and on a
//! buffer of `buffer_len()` octets it succeeds. [`slow_payload`] and
//! [`emit_frame`] add and remove the Ethernet header, so the agent never
//! builds a frame by hand.

pub(crate) use railyard_wire_core::Field;
pub use railyard_wire_core::{MacAddr, Result, WireError};

mod lacpdu;
mod state;

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests;

pub use lacpdu::{
    LacpduError, LacpduRepr, Packet, PortInfo, SlowSubtype, SystemId, TlvType, COLLECTOR_TLV_LEN,
    INFO_TLV_LEN, LACPDU_LEN, VERSION,
};
pub use state::State;

/// The Slow Protocols EtherType (802.3 Annex 57A).
pub const ETHERTYPE_SLOW: u16 = 0x8809;
/// The Slow Protocols multicast address every LACPDU is sent to; bridges
/// never forward it, so an LACPDU only ever reaches the other end of the
/// link.
pub const SLOW_PROTOCOLS_MULTICAST: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x02]);
/// Octets of the Ethernet header before the Slow Protocols subtype.
pub const ETHERNET_HEADER_LEN: usize = 14;
/// Octets of a whole LACP frame without FCS: header and LACPDU (124; with
/// the FCS the 128 octets 802.1AX gives).
pub const FRAME_LEN: usize = ETHERNET_HEADER_LEN + LACPDU_LEN;

/// The source MAC and Slow Protocols payload (from the subtype octet on)
/// of an untagged Ethernet frame of EtherType 0x8809; `None` for any other
/// frame. Slow Protocols frames are never VLAN-tagged, so a tagged one is
/// not one. The destination is not checked: 802.1AX also allows the
/// nearest-bridge addresses.
pub fn slow_payload(frame: &[u8]) -> Option<(MacAddr, &[u8])> {
    let src: [u8; 6] = frame.get(6..12)?.try_into().ok()?;
    let ethertype = u16::from_be_bytes(frame.get(12..14)?.try_into().ok()?);
    (ethertype == ETHERTYPE_SLOW).then(|| {
        (
            MacAddr(src),
            frame.get(ETHERNET_HEADER_LEN..).unwrap_or(&[]),
        )
    })
}

/// Writes a whole LACP frame into the first [`FRAME_LEN`] octets of
/// `buf`: destination 01:80:C2:00:00:02, source `src`, EtherType 0x8809,
/// then `pdu`. Returns the octets written. 124 octets need no padding.
///
/// # Errors
/// `Truncated` when `buf` is shorter than [`FRAME_LEN`].
pub fn emit_frame(
    src: MacAddr,
    pdu: &LacpduRepr,
    buf: &mut [u8],
) -> core::result::Result<usize, LacpduError> {
    let Some((head, body)) = buf
        .get_mut(..FRAME_LEN)
        .map(|b| b.split_at_mut(ETHERNET_HEADER_LEN))
    else {
        return Err(LacpduError::Truncated);
    };
    head[0..6].copy_from_slice(&SLOW_PROTOCOLS_MULTICAST.0);
    head[6..12].copy_from_slice(&src.0);
    head[12..14].copy_from_slice(&ETHERTYPE_SLOW.to_be_bytes());
    pdu.emit(body).map(|n| ETHERNET_HEADER_LEN + n)
}
