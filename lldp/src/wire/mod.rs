//! Typed, zero-copy views over LLDPDUs and the DCBX TLVs they carry.
//!
//! Each format has a view (`Tlv<T: AsRef<[u8]>>`) with `new_unchecked`,
//! `new_checked` and `check_len`, field accessors named after the field and
//! `set_*` setters, and a plain `Repr` that parses and emits. Contract: after
//! `check_len` succeeds no accessor panics; `emit` never panics on a buffer of
//! `buffer_len()` bytes.

/// Field ranges of the views' `field` modules.
pub(crate) use railyard_wire_core::{Field, Rest};
pub use railyard_wire_core::{MacAddr, Result, WireError};

pub mod dcbx;
pub mod lldpdu;

pub use dcbx::{AppRepr, CeeRepr, DcbxTlv, EtsRepr, PfcRepr};
pub use lldpdu::{LldpduError, LldpduRepr, TlvIter as LldpTlvIter, TlvType as LldpTlvType};
