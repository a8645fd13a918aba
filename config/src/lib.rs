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
//! Modelled: `hostname`/`switchname`, `feature` (any name is kept; `lldp`,
//! `bgp`, `bfd`, `lacp` and `interface-vlan` are modelled, the others warn
//! once per name), `version`, `interface` (Ethernet aliases, ranges and
//! lists) with `[no] switchport`, `ip address` (mask form, `secondary`),
//! `ipv6 address`, `mtu`, `[no] shutdown`, `description`, `mac-address`,
//! `speed`, `ip arp`, `ipv6 neighbor`, `service-policy`,
//! `priority-flow-control mode|watch-dog-interval`, `[no] lldp
//! transmit|receive` and railyard's `bind` and `lldp dcbx version`; Layer
//! 2: `vlan` lists with `name`, `switchport mode|access vlan|trunk allowed
//! vlan|trunk native vlan`, `channel-group … mode`, `lacp
//! rate|port-priority|system-priority|min-links`, `interface VlanN` (SVIs)
//! and `interface port-channelN`, `mac address-table aging-time|static`;
//! `ip route` and `ipv6 route`; and the QoS language of a Nexus 9000: `ip access-list`,
//! `class-map type qos`, `policy-map type qos|queuing|network-qos` with
//! their classes, `system qos`, the global PFC watchdog, `hardware profile
//! dlb`, `ip load-sharing` and the LLDP globals (with railyard's `lldp tlv
//! custom`); and the routing language the control plane hands to FRR:
//! `router bgp` (router ID, `bestpath as-path multipath-relax`, IPv4 and
//! IPv6 unicast families with `maximum-paths`, `network`, `redistribute
//! direct`, `aggregate-address`; neighbors and `template peer` with
//! `remote-as`, `description`, `bfd`, `update-source`, `inherit peer`,
//! `shutdown` and per-family `send-community` and `route-map`),
//! `route-map`, `ip|ipv6 prefix-list` and `bfd interval`; other `router
//! bgp` statements are skipped with a warning. Every command has its `no`
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

mod bgp;
mod bits;
mod diag;
mod effective;
mod l2;
mod lexer;
mod lldp;
mod mac;
mod model;
mod monitor;
mod mtu;
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

pub use bgp::{
    Action, Afi, Aggregate, Asn, BfdInterval, Bgp, BgpAf, Neighbor, Network, PeerAf, PeerConfig,
    PeerTemplate, PrefixList, PrefixRule, RouteMap, RouteMapSet, MAX_BGP_PATHS,
};
pub use diag::{Diagnostic, Severity, Source, ValueError};
pub use effective::{
    AclRule, AppliedPolicies, Classifier, ClassifyInput, EffectiveQos, IngressPgConfig,
    QueueConfig, RuleTerm, WatchdogConfig,
};
pub use l2::{
    ChannelGroup, ChannelMode, L2Port, LacpRate, MacTable, PortChannel, StaticMac, Svi, Switchport,
    SwitchportMode, Vlan, VlanSet, Vlans, DEFAULT_LACP_PRIORITY, DEFAULT_MAC_AGING_SECS,
    DEFAULT_VLAN, MAX_MAC_AGING_SECS, MAX_MIN_LINKS, MAX_PORT_CHANNEL, MAX_VLAN, MAX_VLAN_NAME,
    MIN_MAC_AGING_SECS,
};
pub use lldp::{
    CustomTlv, Lldp, LldpTlvSelect, DEFAULT_LLDP_HOLDTIME_S, DEFAULT_LLDP_REINIT_S,
    DEFAULT_LLDP_TIMER_S, MAX_CUSTOM_TLV_INFO,
};
pub use model::{
    Bind, Config, Interface, InterfaceName, IpPrefix, Ipv4Prefix, Ipv6Prefix, RouteTarget,
    RxHandover, StaticRoute, DEFAULT_MTU, MAX_MTU, MIN_MTU,
};
pub use monitor::{MonitorDestination, MonitorSession, SpanDirection, MAX_MONITOR_SESSION};
pub use qos::{
    AccessList, AclEntry, Bandwidth, ClassMap, ClassMapKind, DcbxVersion, Direction, Dlb,
    DlbInterfaces, DlbMode, DlbPin, FlowKey, GroupClassMap, LoadSharing, Match, MatchMode,
    NetworkQosPolicy, NqClass, PauseThresholds, PeerResponse, PfcDelays, PfcMode,
    PfcWatchdogTimers, Port, PortMatch, QosPolicy, QosPolicyClass, QueueLimit, QueuingClass,
    QueuingPolicy, Shape, SystemQos, Threshold, Unevaluated, Wred, WredPreset, CLASS_DEFAULT,
    DEFAULT_DECAY_FACTOR, DEFAULT_DLB_MAC, DEFAULT_DRE_THRESHOLDS, DEFAULT_DROP_PROBABILITY,
    DEFAULT_FLOWLET_AGING_US, DEFAULT_FLOWLET_TABLE_SIZE, DEFAULT_SAMPLING_INTERVAL_NS,
    DEFAULT_WATCHDOG_AUTO_RESTORE_MULTIPLIER, DEFAULT_WATCHDOG_INTERVAL_MS,
    DEFAULT_WATCHDOG_SHUTDOWN_MULTIPLIER, KBYTE, MAX_CABLE_METRES, MAX_RESPONSE_BITS,
    MAX_RESPONSE_NS, MBYTE, QOS_GROUPS,
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

/// Everything a check of a configuration found.
///
/// Unlike [`parse_str`], which hands back only the errors when there are
/// any, a report keeps the warnings alongside them, so a user fixing errors
/// also sees what else will be skipped; `railyard check` prints exactly
/// [`Report::diagnostics`] (as text, or as JSON with `--json`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The model, when the configuration has no error.
    pub config: Option<Config>,
    /// Errors and warnings in line order, notes about the whole file last.
    ///
    /// Bounded: after 100 errors the rest are only counted (one closing
    /// error says how many); identical warnings are one diagnostic whose
    /// message ends `(N times: lines ...)`.
    pub diagnostics: Vec<Diagnostic>,
}

impl Report {
    /// Whether the configuration is rejected.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// Split into the parse result: the model and its warnings, or the errors alone.
    ///
    /// # Errors
    ///
    /// The errors, when there are any.
    pub fn into_result(self) -> Result<Parsed, Vec<Diagnostic>> {
        let (errors, warnings): (Vec<_>, Vec<_>) =
            self.diagnostics.into_iter().partition(Diagnostic::is_error);
        match self.config {
            Some(config) if errors.is_empty() => Ok(Parsed { config, warnings }),
            _ => Err(errors),
        }
    }
}

/// Check configuration text: the model (when valid) and every diagnostic,
/// errors and warnings together; `file` names it in diagnostics.
pub fn check_str(text: &str, file: &str, opts: &ParseOptions) -> Report {
    parser::parse(text, file, opts)
}

/// Read and check a configuration file, as [`check_str`]; a file that cannot
/// be read (or is not UTF-8) gives one error at line 0.
pub fn check_file(path: &Path, opts: &ParseOptions) -> Report {
    let name = path.display().to_string();
    match std::fs::read_to_string(path) {
        Ok(text) => check_str(&text, &name, opts),
        Err(e) => Report {
            config: None,
            diagnostics: vec![Diagnostic::whole_file(
                Severity::Error,
                &name,
                format!("cannot read configuration: {e}"),
            )],
        },
    }
}

/// Parse configuration text; `file` names it in diagnostics.
///
/// # Errors
///
/// Every error found in the text (parsing and validation), in line order;
/// after 100 the rest are counted in one closing error. Warnings are
/// dropped when there are errors ([`check_str`] keeps them).
pub fn parse_str(text: &str, file: &str, opts: &ParseOptions) -> Result<Parsed, Vec<Diagnostic>> {
    check_str(text, file, opts).into_result()
}

/// Read and parse a configuration file.
///
/// # Errors
///
/// As [`parse_str`]; a file that cannot be read (or is not UTF-8) gives one
/// diagnostic at line 0.
pub fn parse_file(path: &Path, opts: &ParseOptions) -> Result<Parsed, Vec<Diagnostic>> {
    check_file(path, opts).into_result()
}
