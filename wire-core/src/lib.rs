//! What every railyard wire format shares, kept in one place so the
//! dataplane's frame views and the LLDP crate's TLV views speak the same
//! types without the protocol crate depending on the switch: the
//! `enum_with_unknown!` macro for wire numbers, the field-range types the
//! views' `field` modules use, the error a view returns, and the MAC
//! address.

#![deny(missing_docs)]
#![deny(unsafe_code)]

use std::fmt;
use std::str::FromStr;

/// Declares a `Copy` enum over a wire number with an `Unknown(raw)` variant,
/// plus total `From` conversions both ways, so decoding never fails and an
/// unrecognised value survives to the counters.
#[macro_export]
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
pub type Field = core::ops::Range<usize>;
/// The bytes from an offset to the end of the buffer, for the `field` modules.
pub type Rest = core::ops::RangeFrom<usize>;

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

/// An Ethernet MAC address.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct MacAddr(pub [u8; 6]);

impl MacAddr {
    /// ff:ff:ff:ff:ff:ff.
    pub const BROADCAST: MacAddr = MacAddr([0xff; 6]);
    /// The all-zero address.
    pub const ZERO: MacAddr = MacAddr([0; 6]);

    /// True for group (multicast and broadcast) addresses.
    #[inline]
    pub const fn is_multicast(&self) -> bool {
        self.0[0] & 1 == 1
    }

    /// True for ff:ff:ff:ff:ff:ff.
    #[inline]
    pub fn is_broadcast(&self) -> bool {
        *self == Self::BROADCAST
    }

    /// Builds an address from the first six bytes of `b`.
    ///
    /// # Panics
    /// When `b` is shorter than 6 bytes.
    #[inline]
    pub fn from_bytes(b: &[u8]) -> MacAddr {
        let mut m = [0u8; 6];
        m.copy_from_slice(&b[..6]);
        MacAddr(m)
    }

    /// The bytes of the address.
    #[inline]
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

/// Error parsing a MAC address from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MacParseError;

impl fmt::Display for MacParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "expected a MAC address like 00:11:22:33:44:55, 00-11-22-33-44-55 or 0011.2233.4455",
        )
    }
}

impl std::error::Error for MacParseError {}

impl FromStr for MacAddr {
    type Err = MacParseError;

    /// Accepts `00:11:22:33:44:55`, `00-11-22-33-44-55` and Cisco's `0011.2233.4455`.
    fn from_str(s: &str) -> core::result::Result<Self, Self::Err> {
        let hex: String = s
            .chars()
            .filter(|c| !matches!(c, ':' | '-' | '.'))
            .collect();
        let groups_ok = {
            let parts: Vec<&str> = s.split([':', '-', '.']).collect();
            (parts.len() == 6 && parts.iter().all(|p| p.len() == 2))
                || (parts.len() == 3 && s.contains('.') && parts.iter().all(|p| p.len() == 4))
        };
        if !groups_ok || hex.len() != 12 {
            return Err(MacParseError);
        }
        let mut m = [0u8; 6];
        for (i, byte) in m.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| MacParseError)?;
        }
        Ok(MacAddr(m))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mac_text_forms() {
        let m = MacAddr([0, 0x11, 0x22, 0x33, 0x44, 0x55]);
        assert_eq!("00:11:22:33:44:55".parse::<MacAddr>(), Ok(m));
        assert_eq!("00-11-22-33-44-55".parse::<MacAddr>(), Ok(m));
        assert_eq!("0011.2233.4455".parse::<MacAddr>(), Ok(m));
        assert_eq!(m.to_string(), "00:11:22:33:44:55");
        assert!("00:11:22:33:44".parse::<MacAddr>().is_err());
        assert!("00:11:22:33:44:zz".parse::<MacAddr>().is_err());
        assert!("001.12233.4455".parse::<MacAddr>().is_err());
        assert!(MacAddr::BROADCAST.is_multicast() && !m.is_multicast());
        assert_eq!(format!("{m:?}"), "00:11:22:33:44:55");
        assert_eq!(m.octets(), m.0);
    }
}
