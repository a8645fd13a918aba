//! What the agent reports, as plain serde data so the management socket
//! can ship it and the client can render NX-OS's `show lacp neighbor`,
//! `show lacp counters`, `show lacp interface` and `show port-channel
//! summary` (or print it with `--json`).

use serde::{Deserialize, Serialize};

use crate::agent::{Mode, MuxState, PeriodicState, Rate, RxState};
use crate::wire::PortInfo;

/// LACP counters of a port (or the sum over ports), in the terms of NX-OS
/// `show lacp counters`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct LacpCounters {
    /// LACPDUs sent.
    pub lacpdus_sent: u64,
    /// Valid LACPDUs received (also those dropped because LACP is not
    /// running on the port).
    pub lacpdus_received: u64,
    /// Slow Protocols frames of subtype LACP that failed validation, and
    /// LACPDUs that carry this switch's own system ID (a loop).
    pub errors: u64,
    /// Marker PDUs (subtype 2) received and ignored: railyard never moves
    /// a conversation between links, so it has no use for markers.
    pub markers_ignored: u64,
    /// Other Slow Protocols frames (OAM, organisation specific, unknown
    /// subtypes) received and ignored.
    pub other_ignored: u64,
}

impl LacpCounters {
    /// Adds `o` field by field (saturating).
    pub fn add(&mut self, o: &LacpCounters) {
        self.lacpdus_sent = self.lacpdus_sent.saturating_add(o.lacpdus_sent);
        self.lacpdus_received = self.lacpdus_received.saturating_add(o.lacpdus_received);
        self.errors = self.errors.saturating_add(o.errors);
        self.markers_ignored = self.markers_ignored.saturating_add(o.markers_ignored);
        self.other_ignored = self.other_ignored.saturating_add(o.other_ignored);
    }
}

/// One end's view of a port (an Actor or Partner Information TLV), with
/// the MAC and state as text so the JSON reads like the CLI.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct InfoSnapshot {
    /// System priority.
    pub system_priority: u16,
    /// System MAC, `xx:xx:xx:xx:xx:xx`.
    pub system_mac: String,
    /// Operational key (NX-OS shows it in hex, `0x1`).
    pub key: u16,
    /// Port priority.
    pub port_priority: u16,
    /// Port number (NX-OS shows it in hex, `0x101`).
    pub port: u16,
    /// The state octet (NX-OS "Port State", `0x3d`).
    pub state: u8,
    /// The state octet as NX-OS spells it, `Ac-1:To-0:Ag-1:…`.
    pub state_text: String,
}

impl From<&PortInfo> for InfoSnapshot {
    fn from(i: &PortInfo) -> InfoSnapshot {
        InfoSnapshot {
            system_priority: i.system.priority,
            system_mac: i.system.mac.to_string(),
            key: i.key,
            port_priority: i.port_priority,
            port: i.port,
            state: i.state.bits(),
            state_text: i.state.to_string(),
        }
    }
}

/// A member's place in its port-channel, as the letter in parentheses
/// after the port in `show port-channel summary`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemberStatus {
    /// Collecting and distributing: the dataplane hashes over it (P).
    Bundled,
    /// Link down (D).
    Down,
    /// Selected for the port-channel but not yet distributing: waiting
    /// for the other members, for the partner's sync, or for a first
    /// LACPDU after the link came up. Not up in the port-channel, so D.
    Negotiating,
    /// The partner says the link cannot aggregate (I).
    Individual,
    /// Kept out of the port-channel: no LACPDUs heard (defaulted) or a
    /// partner other than the one the port-channel formed with (s).
    Suspended,
}

impl MemberStatus {
    /// The letter `show port-channel summary` shows for the member.
    pub const fn flag(self) -> char {
        match self {
            MemberStatus::Bundled => 'P',
            MemberStatus::Down | MemberStatus::Negotiating => 'D',
            MemberStatus::Individual => 'I',
            MemberStatus::Suspended => 's',
        }
    }
}

/// One member port.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PortSnapshot {
    /// The switch's port number (as given to `add_port`).
    pub port: u16,
    /// The port-channel (the LACP key).
    pub channel: u16,
    /// `channel-group N mode …`.
    pub mode: Mode,
    /// `lacp rate …`.
    pub rate: Rate,
    /// Link state as last reported.
    pub link_up: bool,
    /// Member status for the summary.
    pub status: MemberStatus,
    /// [`MemberStatus::flag`] of `status`, for JSON readers.
    pub flag: char,
    /// Whether the dataplane may send on the port now.
    pub distributing: bool,
    /// What the port advertises.
    pub actor: InfoSnapshot,
    /// What the port has learnt of its partner; `None` when it has none
    /// (link down, `mode on`, or no LACPDU heard: defaulted).
    pub partner: Option<InfoSnapshot>,
    /// NX-OS's neighbour flags: `F`/`S` for a partner asking for fast or
    /// slow LACPDUs, `A`/`P` for an active or passive one; empty without
    /// a partner.
    pub partner_flags: String,
    /// Seconds since the last LACPDU was received (NX-OS "Age").
    pub age_s: Option<u64>,
    /// Receive machine state.
    pub rx_state: RxState,
    /// Mux machine state.
    pub mux_state: MuxState,
    /// Periodic Transmission machine state.
    pub periodic: PeriodicState,
    /// Selection logic's verdict: the port belongs to the port-channel's
    /// aggregator.
    pub selected: bool,
    /// Nanoseconds until the partner information times out.
    pub current_while_ns: Option<u64>,
    /// Nanoseconds until the aggregate wait ends.
    pub wait_while_ns: Option<u64>,
    /// Nanoseconds until the next periodic LACPDU.
    pub periodic_ns: Option<u64>,
    /// Counters.
    pub counters: LacpCounters,
}

/// One port-channel: a line of `show port-channel summary`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ChannelSnapshot {
    /// The port-channel number (the LACP key).
    pub channel: u16,
    /// `LACP`, or `NONE` for `mode on` members.
    pub protocol: String,
    /// At least one member is distributing (U), else down (D).
    pub up: bool,
    /// Every configured member, in port order.
    pub members: Vec<u16>,
    /// The members distributing now.
    pub bundled: Vec<u16>,
    /// The partner system the port-channel formed with.
    pub partner_system: Option<String>,
    /// The partner's key for the port-channel.
    pub partner_key: Option<u16>,
}

/// Everything the LACP show commands render, as the agent saw it at
/// `now_ns`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LacpSnapshot {
    /// `lacp system-priority`.
    pub system_priority: u16,
    /// The switch's system MAC.
    pub system_mac: String,
    /// The agent's time when the snapshot was taken.
    pub now_ns: u64,
    /// Port-channels in number order.
    pub channels: Vec<ChannelSnapshot>,
    /// Member ports in port order.
    pub ports: Vec<PortSnapshot>,
    /// Sum of the ports' counters.
    pub totals: LacpCounters,
}
