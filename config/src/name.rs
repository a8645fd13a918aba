//! Interface names: `Ethernet1/1` and the aliases and ranges NX-OS accepts.
//!
//! A leaf of the crate (it needs only [`ValueError`]), so the QoS types and
//! the model can both name interfaces without depending on each other.

use std::fmt;
use std::str::FromStr;

use serde::{Serialize, Serializer};

use crate::diag::ValueError;

/// Name of a front-panel Ethernet port: `Ethernet<module>/<port>[/<breakout>]`.
///
/// Ordered by module, then port, then breakout lane (an unbroken port sorts
/// before its lanes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InterfaceName {
    /// Line-card (module) number, from 1.
    pub module: u8,
    /// Port number on the module, from 1.
    pub port: u8,
    /// Breakout lane (`Ethernet1/1/2`), from 1.
    pub sub: Option<u8>,
}

impl InterfaceName {
    /// Name an unbroken port, `Ethernet<module>/<port>`.
    pub const fn new(module: u8, port: u8) -> Self {
        InterfaceName {
            module,
            port,
            sub: None,
        }
    }

    /// Name a breakout lane, `Ethernet<module>/<port>/<sub>`.
    pub const fn breakout(module: u8, port: u8, sub: u8) -> Self {
        InterfaceName {
            module,
            port,
            sub: Some(sub),
        }
    }
}

impl fmt::Display for InterfaceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Ethernet{}/{}", self.module, self.port)?;
        if let Some(sub) = self.sub {
            write!(f, "/{sub}")?;
        }
        Ok(())
    }
}

/// Serialized as its canonical name, e.g. `"Ethernet1/1"`.
impl Serialize for InterfaceName {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl FromStr for InterfaceName {
    type Err = ValueError;

    /// Accepts `Ethernet1/1`, any case and any abbreviation of `ethernet`
    /// (`eth1/1`, `e1/1`), blanks between type and number, and a breakout
    /// lane (`Ethernet1/1/1`). Ranges and other interface types are errors.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let compact: String = s.chars().filter(|c| !c.is_whitespace()).collect();
        match parse_interface_spec(&compact)? {
            IfSpec::Ethernet(names) if names.len() == 1 => Ok(names[0]),
            IfSpec::Ethernet(_) => Err(ValueError::new(
                format!("`{s}` names a range of interfaces"),
                Some("name a single interface, e.g. Ethernet1/1".into()),
            )),
            other => Err(ValueError::new(
                format!("`{s}` is a {} interface", other.kind()),
                Some("an Ethernet interface is needed here, e.g. Ethernet1/1".into()),
            )),
        }
    }
}

/// What an `interface` argument (one comma-separated item) designates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum IfSpec {
    /// One or more Ethernet ports (a range expands to all of them).
    Ethernet(Vec<InterfaceName>),
    /// One or more VLAN interfaces (`Vlan10`, `vlan10-12`), by VLAN.
    Vlan(Vec<u16>),
    /// One or more port-channels (`port-channel10`, `po1-2`), by number.
    PortChannel(Vec<u16>),
    /// A recognised but unmodelled interface type (`loopback`, `mgmt`, ...).
    Other(&'static str),
}

impl IfSpec {
    /// The interface type's canonical spelling, for messages.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            IfSpec::Ethernet(_) => "Ethernet",
            IfSpec::Vlan(_) => "Vlan",
            IfSpec::PortChannel(_) => "port-channel",
            IfSpec::Other(kind) => kind,
        }
    }
}

/// Interface types NX-OS has that railyard recognises but does not model,
/// with the canonical spelling used in warnings.
const OTHER_INTERFACE_TYPES: &[(&str, &str)] = &[
    ("loopback", "loopback"),
    ("mgmt", "mgmt"),
    ("vlan", "Vlan"),
    ("port-channel", "port-channel"),
    ("nve", "nve"),
    ("tunnel", "tunnel"),
    ("null", "Null"),
];

/// Hint shown for malformed Ethernet names.
const ETHERNET_FORM: &str =
    "Ethernet interfaces are named Ethernet<module>/<port>[/<lane>], numbers 1-255, e.g. Ethernet1/1";

/// Parse one interface item without blanks: `Ethernet1/1`, `e1/1-4`, `Ethernet1/1/1`, `loopback0`.
pub(crate) fn parse_interface_spec(item: &str) -> Result<IfSpec, ValueError> {
    let type_len = item
        .find(|c: char| !(c.is_ascii_alphabetic() || c == '-'))
        .unwrap_or(item.len());
    let (kind, rest) = item.split_at(type_len);
    if kind.is_empty() {
        return Err(ValueError::new(
            format!("missing interface type in `{item}`"),
            Some(ETHERNET_FORM.into()),
        ));
    }
    let lower = kind.to_ascii_lowercase();
    if "ethernet".starts_with(&lower) {
        return parse_ethernet(item, rest);
    }
    let other = OTHER_INTERFACE_TYPES
        .iter()
        .find(|(full, _)| lower.len() >= 2 && full.starts_with(&lower))
        .map(|(_, canonical)| *canonical);
    match other {
        Some("Vlan") if !rest.is_empty() => numbered(item, rest, "Vlan", 1, 4094).map(IfSpec::Vlan),
        Some("port-channel") if !rest.is_empty() && !rest.contains('.') => {
            numbered(item, rest, "port-channel", 1, 4096).map(IfSpec::PortChannel)
        }
        Some("port-channel") if !rest.is_empty() => Ok(IfSpec::Other("port-channel subinterface")),
        Some(canonical) if !rest.is_empty() => Ok(IfSpec::Other(canonical)),
        Some(canonical) => Err(ValueError::new(
            format!("missing {canonical} interface number"),
            Some(format!("e.g. {canonical}0")),
        )),
        None => Err(ValueError::new(
            format!("unknown interface type `{kind}`"),
            Some(ETHERNET_FORM.into()),
        )),
    }
}

/// Parse the number or range of a `Vlan` or `port-channel` item: `10`, `10-12`.
fn numbered(item: &str, rest: &str, kind: &str, lo: u16, hi: u16) -> Result<Vec<u16>, ValueError> {
    let hint = || {
        Some(format!(
            "{kind} interfaces are numbered {lo}-{hi}, e.g. {kind}10"
        ))
    };
    let number = |text: &str| -> Result<u16, ValueError> {
        if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
            return Err(ValueError::new(
                format!("invalid interface `{item}`"),
                hint(),
            ));
        }
        match text.parse::<u16>() {
            Ok(n) if (lo..=hi).contains(&n) => Ok(n),
            _ => Err(ValueError::new(
                format!("invalid interface `{item}`: {text} is out of range"),
                hint(),
            )),
        }
    };
    let (first, last) = match rest.split_once('-') {
        Some((a, b)) => (number(a)?, number(b)?),
        None => {
            let n = number(rest)?;
            (n, n)
        }
    };
    if last < first {
        return Err(ValueError::new(
            format!("range `{item}` ends ({last}) before it starts ({first})"),
            Some(format!(
                "write the lower number first, e.g. {kind}{last}-{first}"
            )),
        ));
    }
    Ok((first..=last).collect())
}

/// Parse the numeric part of an Ethernet item: `1/1`, `1/1-4`, `1/1/2`, `1/1.100`.
fn parse_ethernet(item: &str, rest: &str) -> Result<IfSpec, ValueError> {
    if rest.is_empty() {
        return Err(ValueError::new(
            format!("missing module/port in `{item}`"),
            Some(ETHERNET_FORM.into()),
        ));
    }
    let (base, subinterface) = match rest.split_once('.') {
        Some((base, sub)) => (base, Some(sub)),
        None => (rest, None),
    };
    let (first, last) = match base.split_once('-') {
        Some((first, last)) => (first, Some(last)),
        None => (base, None),
    };
    let bad = || {
        ValueError::new(
            format!("invalid interface `{item}`"),
            Some(ETHERNET_FORM.into()),
        )
    };
    let numbers = first
        .split('/')
        .map(|n| number_1_255(n, item))
        .collect::<Result<Vec<u8>, ValueError>>()?;
    let start = match numbers[..] {
        [module, port] => InterfaceName::new(module, port),
        [module, port, sub] => InterfaceName::breakout(module, port, sub),
        _ => return Err(bad()),
    };
    if let Some(sub) = subinterface {
        if last.is_some() || sub.is_empty() || !sub.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        return Ok(IfSpec::Other("Ethernet subinterface"));
    }
    let Some(last) = last else {
        return Ok(IfSpec::Ethernet(vec![start]));
    };
    let end = number_1_255(last, item)?;
    let first_n = start.sub.unwrap_or(start.port);
    if end < first_n {
        return Err(ValueError::new(
            format!("range `{item}` ends ({end}) before it starts ({first_n})"),
            Some("write the lower number first, e.g. Ethernet1/1-4".into()),
        ));
    }
    let names = (first_n..=end)
        .map(|n| match start.sub {
            Some(_) => InterfaceName::breakout(start.module, start.port, n),
            None => InterfaceName::new(start.module, n),
        })
        .collect();
    Ok(IfSpec::Ethernet(names))
}

/// Parse one component of an interface number.
fn number_1_255(text: &str, item: &str) -> Result<u8, ValueError> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(ValueError::new(
            format!("invalid interface `{item}`"),
            Some(ETHERNET_FORM.into()),
        ));
    }
    match text.parse::<u8>() {
        Ok(0) => Err(ValueError::new(
            format!("invalid interface `{item}`: numbers start at 1"),
            Some(ETHERNET_FORM.into()),
        )),
        Ok(n) => Ok(n),
        Err(_) => Err(ValueError::new(
            format!("invalid interface `{item}`: {text} is out of range"),
            Some(ETHERNET_FORM.into()),
        )),
    }
}
