//! `monitor session N`: NX-OS's local SPAN, copying the frames some ports
//! receive or send to another port, or (railyard's extension) to a pcapng
//! file, so a lab user can watch a link with the tools a Nexus offers.

use std::fmt;
use std::path::PathBuf;

use serde::Serialize;

use crate::name::InterfaceName;

/// Highest session number NX-OS accepts (`monitor session 1-18`).
pub const MAX_MONITOR_SESSION: u8 = 18;

/// Which frames of a source port a session copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SpanDirection {
    /// Frames the port receives.
    Rx,
    /// Frames the port sends, the switch's own (LLDP, PFC, ARP) included.
    Tx,
    /// Both (NX-OS's default).
    Both,
}

impl SpanDirection {
    /// Whether received frames are copied.
    pub fn rx(self) -> bool {
        matches!(self, SpanDirection::Rx | SpanDirection::Both)
    }

    /// Whether sent frames are copied.
    pub fn tx(self) -> bool {
        matches!(self, SpanDirection::Tx | SpanDirection::Both)
    }

    /// The keyword, as written in the configuration.
    pub fn keyword(self) -> &'static str {
        match self {
            SpanDirection::Rx => "rx",
            SpanDirection::Tx => "tx",
            SpanDirection::Both => "both",
        }
    }
}

/// Where a session's copies go.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MonitorDestination {
    /// `destination interface NAME`: sent out of that port, as NX-OS does.
    Interface(InterfaceName),
    /// `destination file PATH` (railyard's extension): written to a pcapng file.
    File(PathBuf),
}

/// One `monitor session N` section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MonitorSession {
    /// The session number, 1-[`MAX_MONITOR_SESSION`].
    pub id: u8,
    /// `description TEXT`.
    pub description: Option<String>,
    /// `source interface NAME rx|tx|both`, in order of first mention; a
    /// port appears once (a later line for it replaces the direction).
    pub sources: Vec<(InterfaceName, SpanDirection)>,
    /// `destination …`; a session without one copies nothing.
    pub destination: Option<MonitorDestination>,
    /// `shut` (the default, as on NX-OS) or `no shut`.
    pub shutdown: bool,
}

impl MonitorSession {
    /// A new session as NX-OS makes one: no sources, no destination, shut.
    pub fn new(id: u8) -> Self {
        MonitorSession {
            id,
            description: None,
            sources: Vec::new(),
            destination: None,
            shutdown: true,
        }
    }
}

impl fmt::Display for MonitorDestination {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MonitorDestination::Interface(name) => write!(f, "interface {name}"),
            MonitorDestination::File(path) => write!(f, "file {}", path.display()),
        }
    }
}

impl fmt::Display for MonitorSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "monitor session {}", self.id)?;
        if let Some(d) = &self.description {
            writeln!(f, "  description {d}")?;
        }
        for (name, dir) in &self.sources {
            writeln!(f, "  source interface {name} {}", dir.keyword())?;
        }
        if let Some(d) = &self.destination {
            writeln!(f, "  destination {d}")?;
        }
        writeln!(f, "  {}", if self.shutdown { "shut" } else { "no shut" })
    }
}
