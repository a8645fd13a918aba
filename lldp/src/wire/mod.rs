//! Typed, zero-copy views over LLDPDUs and the DCBX TLVs they carry.
//!
//! Each format has a view (`Tlv<T: AsRef<[u8]>>`) with `new_unchecked`,
//! `new_checked` and `check_len`, field accessors named after the field and
//! `set_*` setters, and a plain `Repr` that parses and emits. Contract: after
//! `check_len` succeeds no accessor panics; `emit` never panics on a buffer of
//! `buffer_len()` bytes.

use std::fmt;

/// Declares a `Copy` enum over a wire number with an `Unknown(raw)` variant,
/// plus total `From` conversions both ways, so decoding never fails and an
/// unrecognised value survives to the counters.
macro_rules! enum_with_unknown {
    (
        $(#[$enum_attr:meta])*
        pub enum $name:ident($ty:ty) {
            $( $(#[$variant_attr:meta])* $variant:ident = $value:expr ),+ $(,)?
        }
    ) => {
        $(#[$enum_attr])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $( $(#[$variant_attr])* $variant, )+
            /// A value without a name here, kept as received.
            Unknown($ty),
        }

        impl ::core::convert::From<$ty> for $name {
            fn from(value: $ty) -> Self {
                match value {
                    $( $value => $name::$variant, )+
                    other => $name::Unknown(other),
                }
            }
        }

        impl ::core::convert::From<$name> for $ty {
            fn from(value: $name) -> Self {
                match value {
                    $( $name::$variant => $value, )+
                    $name::Unknown(other) => other,
                }
            }
        }
    };
}

/// A byte range inside a header, for the `field` modules.
type Field = core::ops::Range<usize>;
/// The bytes from an offset to the end of the buffer, for the `field` modules.
type Rest = core::ops::RangeFrom<usize>;

pub mod dcbx;
pub mod lldpdu;

pub use dcbx::{AppRepr, CeeRepr, DcbxTlv, EtsRepr, PfcRepr};
pub use lldpdu::{LldpduError, LldpduRepr, TlvIter as LldpTlvIter, TlvType as LldpTlvType};

/// Why a view could not be built over a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireError {
    /// The buffer is shorter than the header or than a length field claims.
    Truncated,
    /// A field holds a value the format does not allow.
    Malformed,
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WireError::Truncated => f.write_str("truncated"),
            WireError::Malformed => f.write_str("malformed"),
        }
    }
}

impl std::error::Error for WireError {}

/// Result of building a view or parsing a `Repr`.
pub type Result<T> = core::result::Result<T, WireError>;

/// An Ethernet MAC address, as LLDP carries it (chassis and port IDs of
/// subtype MAC, frame sources). Kept here rather than borrowed from the
/// dataplane so the protocol crate depends on nothing of the switch; the
/// daemon converts with `MacAddr(bytes)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// The bytes of the address.
    pub const fn octets(&self) -> [u8; 6] {
        self.0
    }
}

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl fmt::Debug for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_prints_as_colon_hex() {
        let m = MacAddr([0, 0x11, 0x22, 0x33, 0xaa, 0xff]);
        assert_eq!(m.to_string(), "00:11:22:33:aa:ff");
        assert_eq!(format!("{m:?}"), "00:11:22:33:aa:ff");
        assert_eq!(m.octets(), m.0);
    }
}
