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
//! Modelled: `hostname`/`switchname`, `feature` (any name is kept; only
//! `lldp` has an effect, the others warn once per name), `version`, `interface`
//! (Ethernet aliases, ranges and lists) with `[no] switchport`, `ip address`
//! (mask form, `secondary`), `ipv6 address`, `mtu`, `[no] shutdown`,
//! `description`, `mac-address`, `speed`, `ip arp`, `ipv6 neighbor`,
//! `service-policy`, `priority-flow-control mode|watch-dog-interval`,
//! `[no] lldp transmit|receive` and railyard's `bind` and `lldp dcbx version`; `ip route` and
//! `ipv6 route`; and the QoS language of a Nexus 9000: `ip access-list`,
//! `class-map type qos`, `policy-map type qos|queuing|network-qos` with
//! their classes, `system qos`, the global PFC watchdog, `hardware profile
//! dlb`, `ip load-sharing` and the LLDP globals (with railyard's `lldp tlv
//! custom`). Every command has its `no`
//! form. Other NX-OS commands and sections are skipped with one warning per
//! kind and a closing summary (errors with [`ParseOptions::strict`]); an
//! unknown command inside a modelled section is an error with a "did you
//! mean" hint. Keywords may be abbreviated as on NX-OS.
//!
//! The model keeps what the file says ([`Config`]);
//! [`Config::effective_qos`] resolves what applies to one interface, with
//! the NX-OS defaults filled in and the classification lowered to tables
//! ([`EffectiveQos`]). Both serialize with serde.
//!
//! ```
//! use railyard_config::{parse_str, InterfaceName, ParseOptions};
//!
//! let text = "class-map type qos match-any ROCEv2\n  match dscp 24\n\
//!             policy-map type qos CLASSIFY\n  class ROCEv2\n    set qos-group 3\n\
//!             interface e1/1\n  service-policy type qos input CLASSIFY\n";
//! let config = parse_str(text, "lab.conf", &ParseOptions::default()).unwrap().config;
//! let qos = config.effective_qos(&InterfaceName::new(1, 1));
//! assert_eq!(qos.classifier.dscp_table[24], 3);
//! assert_eq!(qos.egress[7].priority_level, Some(1)); // the default output policy
//! ```
//!
//! What railyard reads that a Nexus would not (`bind`, `buffer-size`) and
//! where it reads NX-OS differently are listed in one place: [`extensions`].

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bits;
mod diag;
mod effective;
mod lexer;
mod model;
mod name;
mod parser;
mod prefix;
mod print;
mod qos;
mod spelling;
mod validate;

#[doc = include_str!("../../docs/src/configuration.md")]
pub mod extensions {}

use std::path::Path;

pub use diag::{Diagnostic, Severity, Source, ValueError};
pub use effective::{
    AclRule, AppliedPolicies, Classifier, ClassifyInput, EffectiveQos, IngressPgConfig,
    QueueConfig, RuleTerm, WatchdogConfig,
};
pub use model::{
    Bind, Config, Interface, InterfaceName, IpPrefix, Ipv4Prefix, Ipv6Prefix, RouteTarget,
    StaticRoute, DEFAULT_MTU, MAX_MTU, MIN_MTU,
};
pub use qos::{
    AccessList, AclEntry, Bandwidth, ClassMap, ClassMapKind, CustomTlv, DcbxVersion, Direction,
    Dlb, DlbInterfaces, DlbMode, FlowKey, Lldp, LldpTlvSelect, LoadSharing, Match, MatchMode,
    NetworkQosPolicy, NqClass, PauseThresholds, PfcMode, PfcWatchdogTimers, Port, PortMatch,
    QosPolicy, QosPolicyClass, QueueLimit, QueuingClass, QueuingPolicy, Shape, SystemQos,
    Threshold, Wred, WredPreset, CLASS_DEFAULT, DEFAULT_DECAY_FACTOR, DEFAULT_DLB_MAC,
    DEFAULT_DRE_THRESHOLDS, DEFAULT_DROP_PROBABILITY, DEFAULT_FLOWLET_AGING_US,
    DEFAULT_FLOWLET_TABLE_SIZE, DEFAULT_LLDP_HOLDTIME_S, DEFAULT_LLDP_REINIT_S,
    DEFAULT_LLDP_TIMER_S, DEFAULT_SAMPLING_INTERVAL_NS, DEFAULT_WATCHDOG_AUTO_RESTORE_MULTIPLIER,
    DEFAULT_WATCHDOG_INTERVAL_MS, DEFAULT_WATCHDOG_SHUTDOWN_MULTIPLIER, KBYTE, MAX_CUSTOM_TLV_INFO,
    MBYTE, QOS_GROUPS,
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
