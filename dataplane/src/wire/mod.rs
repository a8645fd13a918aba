//! Typed, zero-copy views over the frame formats railyard handles.
//!
//! Each format has a view `Packet<T: AsRef<[u8]>>` (or `Frame<T>`) with
//! `new_unchecked`, `new_checked` and `check_len`, field accessors named after
//! the field and `set_*` setters, and where useful a plain `Repr` that parses
//! and emits. Contract: after `check_len` succeeds no accessor panics; `emit`
//! never panics on a buffer of `buffer_len()` bytes.

/// Field ranges of the views' `field` modules.
pub(crate) use railyard_wire_core::{Field, Rest};
pub use railyard_wire_core::{MacAddr, MacParseError, Result, WireError};

pub mod arp;
pub mod bth;
pub mod checksum;
pub mod ethernet;
pub mod icmpv4;
pub mod icmpv6;
pub mod ipv4;
pub mod ipv6;
pub mod mac_control;
pub mod tcp;
pub mod udp;
pub mod vlan;

pub use arp::{ArpRepr, Operation as ArpOperation};
pub use bth::{BthRepr, Opcode as BthOpcode, ROCEV2_UDP_PORT};
pub use ethernet::{EtherType, EthernetRepr};
pub use icmpv4::{Icmpv4Repr, Message as Icmpv4Message};
pub use icmpv6::{Icmpv6Repr, Message as Icmpv6Message, NaFlags};
pub use ipv4::{Ipv4Repr, Protocol as IpProtocol};
pub use ipv6::Ipv6Repr;
pub use mac_control::{MacControlRepr, Opcode as MacControlOpcode};
pub use udp::UdpRepr;
pub use vlan::VlanRepr;
