//! The MTU limits of an interface: a leaf of the crate, so the model and
//! the Layer-2 types can both use them without depending on each other.

/// MTU of an interface that has no `mtu` command.
pub const DEFAULT_MTU: u16 = 1500;
/// Smallest MTU NX-OS accepts on an interface.
pub const MIN_MTU: u16 = 576;
/// Largest MTU NX-OS accepts on an interface (jumbo frames).
pub const MAX_MTU: u16 = 9216;
