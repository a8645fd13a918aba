//! railyard's configuration language: the NX-OS dialect a lab user pastes
//! from a Nexus switch, read into a model the dataplane is built from.
//!
//! The pipeline is lexer (lines to tokens with line and column) → parser
//! (context-sensitive, a command table per section) → model → validation →
//! printer (`Display` on [`Config`], canonical text that parses back to an
//! equal model).
//!
//! ```
//! use railyard_config::{parse_str, ParseOptions};
//!
//! let text = "hostname leaf1\n\
//!             interface e1/1\n  no switchport\n  ip address 10.0.0.1/31\n\
//!             ip route 0.0.0.0/0 10.0.0.0\n";
//! let parsed = parse_str(text, "lab.conf", &ParseOptions::default()).unwrap();
//! let e1 = parsed.config.interface("Ethernet1/1").unwrap();
//! assert!(e1.routed && !e1.shutdown);
//! assert_eq!(parsed.config.routes.len(), 1);
//! assert!(parsed.warnings.is_empty());
//! ```
//!
//! Modelled now: `hostname`/`switchname`, `feature`, `version`, `interface`
//! (Ethernet aliases, ranges and lists) with `[no] switchport`, `ip address`
//! (mask form, `secondary`), `ipv6 address`, `mtu`, `[no] shutdown`,
//! `description`, `mac-address`, `speed`, `ip arp`, `ipv6 neighbor` and
//! railyard's `bind`, each with its `no` form; `ip route` and `ipv6 route`.
//! Other NX-OS commands and sections are skipped with one warning per kind
//! (errors with [`ParseOptions::strict`]); an unknown command inside a
//! modelled section is an error. Keywords may be abbreviated as on NX-OS.
//!
//! One deliberate difference from NX-OS: interfaces default to up
//! (`shutdown == false`), because a lab user expects a configured port to
//! pass traffic.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod diag;
mod lexer;
mod model;
mod parser;
mod print;
mod validate;

use std::path::Path;

pub use diag::{Diagnostic, Severity, ValueError};
pub use model::{
    Bind, Config, Interface, InterfaceName, IpPrefix, Ipv4Prefix, Ipv6Prefix, RouteTarget,
    StaticRoute, DEFAULT_MTU, MAX_MTU, MIN_MTU,
};

/// Knobs for how forgiving parsing is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ParseOptions {
    /// Treat unknown and unmodelled commands as errors instead of skipping them with a warning.
    pub strict: bool,
}

/// A successfully parsed configuration and what was noticed along the way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parsed {
    /// The model.
    pub config: Config,
    /// Skipped commands (one per kind, then a summary) and validation warnings, in line order.
    pub warnings: Vec<Diagnostic>,
}

/// Parse configuration text; `file` names it in diagnostics.
///
/// # Errors
///
/// Every error found in the text (parsing and validation), in line order.
/// Warnings are dropped when there are errors.
pub fn parse_str(text: &str, file: &str, opts: &ParseOptions) -> Result<Parsed, Vec<Diagnostic>> {
    parser::parse(text, file, opts)
}

/// Read and parse a configuration file.
///
/// # Errors
///
/// As [`parse_str`]; a file that cannot be read (or is not UTF-8) gives one
/// diagnostic at line 0.
pub fn parse_file(path: &Path, opts: &ParseOptions) -> Result<Parsed, Vec<Diagnostic>> {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => parse_str(&text, &name, opts),
        Err(e) => Err(vec![Diagnostic::whole_file(
            Severity::Error,
            &name,
            format!("cannot read configuration: {e}"),
        )]),
    }
}
