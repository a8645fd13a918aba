//! The printer: canonical NX-OS-like text for a model, which parses back to an equal model.
//!
//! Layout: `hostname`, `feature` lines, one block per interface (sub-commands
//! indented two spaces, in a fixed order, `no shutdown` spelled out), then
//! static routes in their original order. MACs print in NX-OS dotted form.

use std::fmt;

use crate::model::{Config, Interface, IpPrefix, StaticRoute, DEFAULT_MTU};

/// Formats a MAC in NX-OS dotted form, `0011.2233.4455`.
pub(crate) struct Mac<'a>(pub &'a [u8; 6]);

impl fmt::Display for Mac<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}{:02x}.{:02x}{:02x}.{:02x}{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut blank = false;
        if let Some(h) = &self.hostname {
            writeln!(f, "hostname {h}")?;
            blank = true;
        }
        for feature in &self.features {
            writeln!(f, "feature {feature}")?;
            blank = true;
        }
        for iface in &self.interfaces {
            if blank {
                writeln!(f)?;
            }
            write!(f, "{iface}")?;
            blank = true;
        }
        if !self.routes.is_empty() && blank {
            writeln!(f)?;
        }
        for route in &self.routes {
            writeln!(f, "{route}")?;
        }
        Ok(())
    }
}

/// The `interface` block, header and sub-commands, each line ending in a newline.
impl fmt::Display for Interface {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "interface {}", self.name)?;
        if let Some(d) = &self.description {
            writeln!(f, "  description {d}")?;
        }
        if self.routed {
            writeln!(f, "  no switchport")?;
        }
        if let Some(s) = self.speed_mbps {
            writeln!(f, "  speed {s}")?;
        }
        if self.mtu != DEFAULT_MTU {
            writeln!(f, "  mtu {}", self.mtu)?;
        }
        if let Some(mac) = &self.mac {
            writeln!(f, "  mac-address {}", Mac(mac))?;
        }
        if let Some(b) = &self.bind {
            writeln!(f, "  bind {b}")?;
        }
        for (i, p) in self.ipv4.iter().enumerate() {
            let secondary = if i == 0 { "" } else { " secondary" };
            writeln!(f, "  ip address {p}{secondary}")?;
        }
        for p in &self.ipv6 {
            writeln!(f, "  ipv6 address {p}")?;
        }
        for (ip, mac) in &self.arp {
            writeln!(f, "  ip arp {ip} {}", Mac(mac))?;
        }
        for (ip, mac) in &self.nd {
            writeln!(f, "  ipv6 neighbor {ip} {}", Mac(mac))?;
        }
        let state = if self.shutdown {
            "shutdown"
        } else {
            "no shutdown"
        };
        writeln!(f, "  {state}")
    }
}

/// The `ip route` / `ipv6 route` line, without a newline.
impl fmt::Display for StaticRoute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let family = match self.prefix {
            IpPrefix::V4(_) => "ip",
            IpPrefix::V6(_) => "ipv6",
        };
        write!(f, "{family} route {} {}", self.prefix, self.target)
    }
}
