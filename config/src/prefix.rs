//! IPv4 and IPv6 prefixes: interface addresses and route destinations.
//!
//! A leaf of the crate (it needs only [`ValueError`]), so the QoS types and
//! the model can both use prefixes without depending on each other.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::diag::ValueError;

/// Mask of `len` leading one bits in 32 bits (`len` saturates at 32).
fn mask_v4(len: u8) -> u32 {
    u32::MAX
        .checked_shl(32 - u32::from(len.min(32)))
        .unwrap_or(0)
}

/// Mask of `len` leading one bits in 128 bits (`len` saturates at 128).
fn mask_v6(len: u8) -> u128 {
    u128::MAX
        .checked_shl(128 - u32::from(len.min(128)))
        .unwrap_or(0)
}

/// An IPv4 address with a prefix length: an interface address or a route's destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv4Prefix {
    /// The address as written (host bits may be set for interface addresses).
    pub addr: Ipv4Addr,
    /// Prefix length, 0-32.
    pub len: u8,
}

impl Ipv4Prefix {
    /// Build a prefix; `None` if `len` exceeds 32.
    pub fn new(addr: Ipv4Addr, len: u8) -> Option<Self> {
        (len <= 32).then_some(Ipv4Prefix { addr, len })
    }

    /// The netmask, e.g. 255.255.255.0 for /24.
    pub fn netmask(&self) -> Ipv4Addr {
        Ipv4Addr::from(mask_v4(self.len))
    }

    /// The prefix with host bits cleared.
    pub fn network(&self) -> Ipv4Prefix {
        Ipv4Prefix {
            addr: Ipv4Addr::from(u32::from(self.addr) & mask_v4(self.len)),
            len: self.len,
        }
    }

    /// The directed-broadcast address of the subnet.
    pub fn broadcast(&self) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.addr) | !mask_v4(self.len))
    }

    /// Whether `addr` lies in this prefix's subnet.
    pub fn contains(&self, addr: Ipv4Addr) -> bool {
        let m = mask_v4(self.len);
        u32::from(addr) & m == u32::from(self.addr) & m
    }

    /// Whether the two subnets share any address.
    pub fn overlaps(&self, other: &Ipv4Prefix) -> bool {
        self.contains(other.addr) || other.contains(self.addr)
    }
}

/// Serialized as text, e.g. `"10.0.0.1/24"`.
impl Serialize for Ipv4Prefix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Ipv4Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Ipv4Prefix {
    type Err = ValueError;

    /// Parse `A.B.C.D/LEN`; host bits may be set.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (addr, len) = split_prefix(s, "IPv4", "10.0.0.1/24")?;
        let addr = addr.parse::<Ipv4Addr>().map_err(|_| {
            ValueError::new(
                format!("invalid IPv4 address `{addr}`"),
                Some("expected a dotted quad such as 10.0.0.1".into()),
            )
        })?;
        let len = parse_len(len, 32, "IPv4")?;
        Ok(Ipv4Prefix { addr, len })
    }
}

/// An IPv6 address with a prefix length: an interface address or a route's destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Ipv6Prefix {
    /// The address as written (host bits may be set for interface addresses).
    pub addr: Ipv6Addr,
    /// Prefix length, 0-128.
    pub len: u8,
}

impl Ipv6Prefix {
    /// Build a prefix; `None` if `len` exceeds 128.
    pub fn new(addr: Ipv6Addr, len: u8) -> Option<Self> {
        (len <= 128).then_some(Ipv6Prefix { addr, len })
    }

    /// The prefix with host bits cleared.
    pub fn network(&self) -> Ipv6Prefix {
        Ipv6Prefix {
            addr: Ipv6Addr::from(u128::from(self.addr) & mask_v6(self.len)),
            len: self.len,
        }
    }

    /// Whether `addr` lies in this prefix.
    pub fn contains(&self, addr: Ipv6Addr) -> bool {
        let m = mask_v6(self.len);
        u128::from(addr) & m == u128::from(self.addr) & m
    }

    /// Whether the two prefixes share any address.
    pub fn overlaps(&self, other: &Ipv6Prefix) -> bool {
        self.contains(other.addr) || other.contains(self.addr)
    }
}

/// Serialized as text, e.g. `"10.0.0.1/24"`.
impl Serialize for Ipv6Prefix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for Ipv6Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Ipv6Prefix {
    type Err = ValueError;

    /// Parse `X::Y/LEN`; host bits may be set.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (addr, len) = split_prefix(s, "IPv6", "2001:db8::1/64")?;
        let addr = addr.parse::<Ipv6Addr>().map_err(|_| {
            ValueError::new(
                format!("invalid IPv6 address `{addr}`"),
                Some("expected an address such as 2001:db8::1".into()),
            )
        })?;
        let len = parse_len(len, 128, "IPv6")?;
        Ok(Ipv6Prefix { addr, len })
    }
}

/// Split `ADDR/LEN`, explaining a missing length.
fn split_prefix<'s>(
    s: &'s str,
    family: &str,
    example: &str,
) -> Result<(&'s str, &'s str), ValueError> {
    s.split_once('/').ok_or_else(|| {
        ValueError::new(
            format!("`{s}` has no prefix length"),
            Some(format!(
                "write an {family} prefix as ADDRESS/LEN, e.g. {example}"
            )),
        )
    })
}

/// Parse a prefix length no greater than `max`.
fn parse_len(text: &str, max: u8, family: &str) -> Result<u8, ValueError> {
    let hint = Some(format!("prefix length must be 0-{max}"));
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::new(
            format!("invalid {family} prefix length `{text}`"),
            hint,
        ));
    }
    match text.parse::<u32>() {
        Ok(n) if n <= u32::from(max) => Ok(n as u8),
        Ok(n) => Err(ValueError::new(
            format!("invalid {family} prefix length {n}"),
            hint,
        )),
        Err(_) => Err(ValueError::new(
            format!("invalid {family} prefix length {text}"),
            hint,
        )),
    }
}

/// A route destination of either family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum IpPrefix {
    /// An IPv4 destination.
    V4(Ipv4Prefix),
    /// An IPv6 destination.
    V6(Ipv6Prefix),
}

impl IpPrefix {
    /// The prefix with host bits cleared.
    pub fn network(&self) -> IpPrefix {
        match self {
            IpPrefix::V4(p) => IpPrefix::V4(p.network()),
            IpPrefix::V6(p) => IpPrefix::V6(p.network()),
        }
    }

    /// Whether `addr` lies in this prefix (always `false` across families).
    pub fn contains(&self, addr: IpAddr) -> bool {
        match (self, addr) {
            (IpPrefix::V4(p), IpAddr::V4(a)) => p.contains(a),
            (IpPrefix::V6(p), IpAddr::V6(a)) => p.contains(a),
            _ => false,
        }
    }

    /// The prefix length.
    pub fn prefix_len(&self) -> u8 {
        match self {
            IpPrefix::V4(p) => p.len,
            IpPrefix::V6(p) => p.len,
        }
    }

    /// Whether this is a default route (length 0).
    pub fn is_default(&self) -> bool {
        self.prefix_len() == 0
    }

    /// Whether this is an IPv4 prefix.
    pub fn is_ipv4(&self) -> bool {
        matches!(self, IpPrefix::V4(_))
    }
}

/// Serialized as text, e.g. `"10.0.0.1/24"`.
impl Serialize for IpPrefix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl fmt::Display for IpPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            IpPrefix::V4(p) => p.fmt(f),
            IpPrefix::V6(p) => p.fmt(f),
        }
    }
}

impl FromStr for IpPrefix {
    type Err = ValueError;

    /// Parse either family; a colon selects IPv6.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.contains(':') {
            s.parse().map(IpPrefix::V6)
        } else {
            s.parse().map(IpPrefix::V4)
        }
    }
}
