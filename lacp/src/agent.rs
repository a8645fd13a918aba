//! The LACP agent of a switch: every port-channel member's Receive,
//! Periodic Transmission, Selection and Mux machines (802.1AX-2014 6.4),
//! and the answer the dataplane needs, which members may carry traffic.
//!
//! Pure logic with no I/O and no clock of its own: every entry point takes
//! the time (`Nanos`) and frames go out through a callback, so the same
//! code runs in the live switch (a thread that feeds punted Slow Protocols
//! frames and link changes, calls [`Agent::poll`] at
//! [`Agent::next_deadline`] and pushes [`Agent::members`] into the
//! dataplane's port-channel tables) and in tests under virtual time.
//!
//! What the machines do, per member port:
//!
//! - **Receive.** A valid LACPDU records the sender as the partner and
//!   (re)starts `current_while`: 3 s with `lacp rate fast`, 90 s with the
//!   default rate. When it runs out the port is EXPIRED (partner out of
//!   sync, fast LACPDUs asked for, one more short timeout); when that runs
//!   out too, DEFAULTED: the partner is forgotten.
//! - **Periodic Transmission.** A LACPDU every second when the *partner*
//!   asks for the short timeout, every 30 s otherwise; none at all when
//!   both ends are passive.
//! - **Selection.** Members of one port-channel whose partners agree on
//!   system and key form the aggregator. The port-channel keeps the
//!   partner it formed with while any member still selects it; otherwise
//!   the partner with most members wins (ties: the lowest port). Members
//!   with another partner, or none, are suspended; a partner that calls
//!   its link individual gets no aggregate either.
//! - **Mux, coupled control.** DETACHED → WAITING (2 s, so members that
//!   come up together join together) → ATTACHED (in sync) →
//!   COLLECTING_DISTRIBUTING once the partner is in sync too.
//! - **Transmission.** A LACPDU goes out when something the port says
//!   changed or the partner holds stale information about us (NTT), and
//!   periodically; never more than 3 in any second.
//!
//! `channel-group N mode on` members run none of this: they distribute
//! whenever their link is up. A link going down takes the member out of
//! its port-channel at once and forgets the partner.
//!
//! Left out, as railyard does not need them: the Marker protocol (Marker
//! PDUs are counted and dropped), hot-standby members (`lacp max-bundle`),
//! and independent collecting/distributing control.

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::snapshot::{
    ChannelSnapshot, InfoSnapshot, LacpCounters, LacpSnapshot, MemberStatus, PortSnapshot,
};
use crate::wire::{
    emit_frame, slow_payload, LacpduError, LacpduRepr, MacAddr, PortInfo, SlowSubtype, State,
    SystemId, FRAME_LEN,
};
use crate::Nanos;

/// Nanoseconds in a second.
pub const NS_PER_S: Nanos = 1_000_000_000;
/// Interval between LACPDUs for a partner that asks for the short timeout.
pub const FAST_PERIODIC_NS: Nanos = NS_PER_S;
/// Interval between LACPDUs for a partner that asks for the long timeout.
pub const SLOW_PERIODIC_NS: Nanos = 30 * NS_PER_S;
/// Partner information lifetime with `lacp rate fast`: three fast periods.
pub const SHORT_TIMEOUT_NS: Nanos = 3 * FAST_PERIODIC_NS;
/// Partner information lifetime with the default rate: three slow periods.
pub const LONG_TIMEOUT_NS: Nanos = 3 * SLOW_PERIODIC_NS;
/// How long a selected member waits before it attaches, so members that
/// come up together join the aggregate together.
pub const AGGREGATE_WAIT_NS: Nanos = 2 * NS_PER_S;
/// LACPDUs a port may send in any [`FAST_PERIODIC_NS`].
pub const MAX_TX_PER_PERIOD: usize = 3;
/// NX-OS's default system and port priority.
pub const DEFAULT_PRIORITY: u16 = 32768;

/// What a port assumes of a partner it has never heard, or no longer
/// hears (Partner_Admin_*): nobody, passive, long timeout, individual.
const PARTNER_ADMIN: PortInfo = PortInfo {
    system: SystemId {
        priority: 0,
        mac: MacAddr::ZERO,
    },
    key: 0,
    port_priority: 0,
    port: 0,
    state: State(0),
};

/// `channel-group N mode …`: whether and how a member speaks LACP.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Sends LACPDUs unprompted.
    Active,
    /// Speaks only once it hears an active partner; two passive ends
    /// never form a port-channel.
    Passive,
    /// No LACP: the member distributes whenever its link is up.
    On,
}

/// `lacp rate …`: how often this end asks its partner to send, and so how
/// soon it gives up on a silent partner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rate {
    /// `lacp rate normal`: a LACPDU every 30 s, the partner times out
    /// after 90 s (NX-OS default).
    Normal,
    /// `lacp rate fast`: a LACPDU every second, timeout after 3 s.
    Fast,
}

/// One member port's configuration, as plain data.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PortConfig {
    /// The port's MAC: source address of its LACPDUs.
    pub mac: MacAddr,
    /// The port-channel number, advertised as the key: members of one
    /// port-channel aggregate only with each other.
    pub key: u16,
    /// The LACP port number advertised; unique in the switch, not 0.
    pub number: u16,
    /// `lacp port-priority`.
    pub priority: u16,
    /// `channel-group N mode …`.
    pub mode: Mode,
    /// `lacp rate …`.
    pub rate: Rate,
}

impl PortConfig {
    /// A member of port-channel `key` with NX-OS's defaults: mode active,
    /// rate normal, port priority 32768.
    pub const fn new(mac: MacAddr, key: u16, number: u16) -> PortConfig {
        PortConfig {
            mac,
            key,
            number,
            priority: DEFAULT_PRIORITY,
            mode: Mode::Active,
            rate: Rate::Normal,
        }
    }

    /// The flags this configuration fixes in the actor state: activity,
    /// timeout, and aggregation (a port-channel member can always aggregate).
    fn admin_state(&self) -> State {
        State::AGGREGATION
            .with(State::ACTIVITY, self.mode == Mode::Active)
            .with(State::TIMEOUT, self.rate == Rate::Fast)
    }
}

/// Why [`Agent::add_port`] refused a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigError {
    /// The switch port is already a member.
    DuplicatePort(u16),
    /// Another member already advertises this LACP port number.
    DuplicateNumber(u16),
    /// LACP port number 0: it is what a port without a partner records,
    /// so a partner would take it for none.
    ZeroNumber,
    /// `mode on` and LACP members in one port-channel (NX-OS refuses it
    /// too): the two ends would disagree on which links carry traffic.
    MixedModes(u16),
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::DuplicatePort(p) => write!(f, "port {p} is already a member"),
            ConfigError::DuplicateNumber(n) => write!(f, "LACP port number {n} is already used"),
            ConfigError::ZeroNumber => f.write_str("LACP port number 0 is not allowed"),
            ConfigError::MixedModes(k) => {
                write!(f, "port-channel {k} cannot mix mode on with LACP members")
            }
        }
    }
}

impl std::error::Error for ConfigError {}

/// Why [`Agent::receive`] did nothing with a frame. Every case but
/// `UnknownPort` and `NotSlowProtocols` is counted on the port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RxError {
    /// The port is not a member of any port-channel.
    UnknownPort(u16),
    /// Not an untagged Slow Protocols frame (EtherType 0x8809).
    NotSlowProtocols,
    /// A Marker PDU: counted in `markers_ignored`.
    Marker,
    /// Another Slow Protocols subtype: counted in `other_ignored`.
    OtherSubtype(SlowSubtype),
    /// An LACPDU that failed validation: counted in `errors`.
    Malformed(LacpduError),
    /// An LACPDU carrying this switch's own system ID: the port hears
    /// itself or another of the switch's ports. Counted in `errors`.
    OwnSystem,
    /// A valid LACPDU on a port that does not run LACP now (link down or
    /// `mode on`): counted as received and dropped.
    NotRunning,
}

impl fmt::Display for RxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RxError::UnknownPort(p) => write!(f, "port {p} is not a port-channel member"),
            RxError::NotSlowProtocols => f.write_str("not a Slow Protocols frame"),
            RxError::Marker => f.write_str("Marker PDU ignored"),
            RxError::OtherSubtype(s) => write!(f, "slow protocols subtype {s:?} ignored"),
            RxError::Malformed(e) => write!(f, "malformed LACPDU: {e}"),
            RxError::OwnSystem => f.write_str("LACPDU from this switch's own system"),
            RxError::NotRunning => f.write_str("LACP is not running on the port"),
        }
    }
}

impl std::error::Error for RxError {}

/// Receive machine states (802.1AX 6.4.12), as far as railyard runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RxState {
    /// Link down.
    PortDisabled,
    /// Link up but `mode on`.
    LacpDisabled,
    /// The partner went silent for one timeout (or the link just came up).
    Expired,
    /// No partner heard for two timeouts, or ever: administrative defaults.
    Defaulted,
    /// Partner information is fresh.
    Current,
}

/// Mux machine states, coupled control (802.1AX 6.4.15).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MuxState {
    /// Not attached to the aggregator.
    Detached,
    /// Selected; waiting for the aggregate wait to end.
    Waiting,
    /// Attached and in sync; the partner is not yet.
    Attached,
    /// Carrying traffic both ways.
    CollectingDistributing,
}

/// Periodic Transmission machine states (802.1AX 6.4.13).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeriodicState {
    /// No periodic LACPDUs: link down, `mode on`, or both ends passive.
    NoPeriodic,
    /// Every second: the partner asks for the short timeout.
    Fast,
    /// Every 30 s.
    Slow,
}

/// A partner's aggregation identity: who, and which of its port-channels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct LagId {
    system: SystemId,
    key: u16,
}

/// One member port's machines.
#[derive(Debug, Clone)]
struct Port {
    cfg: PortConfig,
    link_up: bool,
    rx: RxState,
    /// When the partner information times out (Receive machine).
    current_while: Option<Nanos>,
    /// Partner_Oper_*: what the port holds of its partner.
    partner: PortInfo,
    /// Actor_Oper_Port_State.
    state: State,
    selected: bool,
    mux: MuxState,
    /// When the aggregate wait ends; `None` once it has (Ready_N).
    wait_while: Option<Nanos>,
    periodic: PeriodicState,
    periodic_at: Option<Nanos>,
    ntt: bool,
    /// When the last [`MAX_TX_PER_PERIOD`] LACPDUs went out, oldest first.
    tx_recent: [Option<Nanos>; MAX_TX_PER_PERIOD],
    /// The actor information of the last LACPDU sent.
    last_sent: Option<PortInfo>,
    last_rx: Option<Nanos>,
    counters: LacpCounters,
}

impl Port {
    fn new(cfg: PortConfig) -> Port {
        Port {
            cfg,
            link_up: false,
            rx: RxState::PortDisabled,
            current_while: None,
            partner: PARTNER_ADMIN,
            state: cfg.admin_state().with(State::DEFAULTED, true),
            selected: false,
            mux: MuxState::Detached,
            wait_while: None,
            periodic: PeriodicState::NoPeriodic,
            periodic_at: None,
            ntt: false,
            tx_recent: [None; MAX_TX_PER_PERIOD],
            last_sent: None,
            last_rx: None,
            counters: LacpCounters::default(),
        }
    }

    fn lacp(&self) -> bool {
        self.cfg.mode != Mode::On
    }

    /// The partner's aggregation identity, when the port may aggregate
    /// with it: a partner heard (not defaulted) that is aggregatable.
    fn lag(&self) -> Option<LagId> {
        let eligible = self.lacp()
            && self.link_up
            && matches!(self.rx, RxState::Current | RxState::Expired)
            && !self.state.defaulted()
            && self.partner.state.aggregatable();
        eligible.then_some(LagId {
            system: self.partner.system,
            key: self.partner.key,
        })
    }

    fn distributing(&self) -> bool {
        match self.cfg.mode {
            Mode::On => self.link_up,
            Mode::Active | Mode::Passive => {
                self.link_up && self.mux == MuxState::CollectingDistributing
            }
        }
    }

    /// recordDefault: forget the partner.
    fn record_default(&mut self) {
        self.partner = PARTNER_ADMIN;
        self.state.set(State::DEFAULTED, true);
    }

    /// update_Default_Selected, then recordDefault.
    fn default_partner(&mut self) {
        if self.partner != PARTNER_ADMIN {
            self.selected = false;
        }
        self.record_default();
    }

    fn set_mux(&mut self, m: MuxState) {
        self.mux = m;
        let (sync, cd) = match m {
            MuxState::Detached | MuxState::Waiting => (false, false),
            MuxState::Attached => (true, false),
            MuxState::CollectingDistributing => (true, true),
        };
        if m == MuxState::Detached {
            self.wait_while = None;
        }
        self.state.set(State::SYNCHRONIZATION, sync);
        self.state.set(State::COLLECTING, cd);
        self.state.set(State::DISTRIBUTING, cd);
        if m != MuxState::Waiting {
            self.ntt = true;
        }
    }

    /// The time the next LACPDU may go out under the rate limit.
    fn tx_allowed_at(&self) -> Nanos {
        match self.tx_recent[0] {
            Some(oldest) if self.tx_recent.iter().all(Option::is_some) => {
                oldest.saturating_add(FAST_PERIODIC_NS)
            }
            _ => 0,
        }
    }

    fn record_tx(&mut self, now: Nanos) {
        self.tx_recent.rotate_left(1);
        if let Some(last) = self.tx_recent.last_mut() {
            *last = Some(now);
        }
    }

    /// Whether the port transmits at all now (Transmit machine: only while
    /// the Periodic machine runs).
    fn may_transmit(&self) -> bool {
        self.lacp() && self.link_up && self.periodic != PeriodicState::NoPeriodic
    }

    fn status(&self) -> MemberStatus {
        if !self.link_up {
            MemberStatus::Down
        } else if self.distributing() {
            MemberStatus::Bundled
        } else if self.rx == RxState::Defaulted {
            MemberStatus::Suspended
        } else if !self.state.defaulted() && !self.partner.state.aggregatable() {
            MemberStatus::Individual
        } else if self.selected || self.state.defaulted() {
            MemberStatus::Negotiating
        } else {
            MemberStatus::Suspended
        }
    }
}

/// The LACP agent of a whole switch (module docs).
#[derive(Debug, Clone)]
pub struct Agent {
    system: SystemId,
    ports: BTreeMap<u16, Port>,
    /// The partner each port-channel formed with.
    lags: BTreeMap<u16, LagId>,
    /// Latest time seen.
    now: Nanos,
}

impl Agent {
    /// An agent for the switch whose LACP system ID is `system` (NX-OS:
    /// `lacp system-priority` and the switch MAC), with no members yet.
    pub fn new(system: SystemId) -> Agent {
        Agent {
            system,
            ports: BTreeMap::new(),
            lags: BTreeMap::new(),
            now: 0,
        }
    }

    /// The system ID the agent advertises.
    pub fn system(&self) -> SystemId {
        self.system
    }

    /// Makes switch port `port` a member of port-channel `cfg.key`. The
    /// link is taken as down until [`set_link`](Self::set_link) says
    /// otherwise.
    ///
    /// # Errors
    /// A [`ConfigError`] when the port is already a member, its LACP port
    /// number is 0 or taken, or its mode mixes `on` with LACP in one
    /// port-channel; the agent is unchanged then.
    pub fn add_port(&mut self, port: u16, cfg: PortConfig) -> Result<(), ConfigError> {
        if self.ports.contains_key(&port) {
            return Err(ConfigError::DuplicatePort(port));
        }
        if cfg.number == 0 {
            return Err(ConfigError::ZeroNumber);
        }
        if self.ports.values().any(|p| p.cfg.number == cfg.number) {
            return Err(ConfigError::DuplicateNumber(cfg.number));
        }
        let on = cfg.mode == Mode::On;
        if self
            .ports
            .values()
            .any(|p| p.cfg.key == cfg.key && (p.cfg.mode == Mode::On) != on)
        {
            return Err(ConfigError::MixedModes(cfg.key));
        }
        self.ports.insert(port, Port::new(cfg));
        Ok(())
    }

    /// Takes `port` out of its port-channel; the others re-select at once.
    /// Returns whether it was a member.
    pub fn remove_port(&mut self, port: u16, now: Nanos) -> bool {
        self.advance(now);
        let was = self.ports.remove(&port).is_some();
        self.settle(self.now);
        was
    }

    /// Reports a link change on `port`. Down: the member leaves the
    /// port-channel at once and forgets its partner. Up: the Receive
    /// machine starts EXPIRED, asking the partner for fast LACPDUs.
    /// Unknown ports are ignored.
    pub fn set_link(&mut self, port: u16, up: bool, now: Nanos) {
        self.advance(now);
        let now = self.now;
        let Some(p) = self.ports.get_mut(&port) else {
            return;
        };
        if p.link_up == up {
            return;
        }
        p.link_up = up;
        if up {
            if p.lacp() {
                p.rx = RxState::Expired;
                p.partner.state.set(State::SYNCHRONIZATION, false);
                p.partner.state.set(State::TIMEOUT, true);
                p.current_while = Some(now.saturating_add(SHORT_TIMEOUT_NS));
                p.state.set(State::EXPIRED, true);
            } else {
                p.rx = RxState::LacpDisabled;
            }
        } else {
            // INITIALIZE, then PORT_DISABLED; the Mux detaches now rather
            // than after the Selection logic notices.
            p.selected = false;
            p.record_default();
            p.state.set(State::EXPIRED, false);
            p.rx = RxState::PortDisabled;
            p.current_while = None;
            p.set_mux(MuxState::Detached);
            p.ntt = false;
        }
        self.settle(now);
    }

    /// Handles a whole Ethernet frame received on `port`. Only untagged
    /// Slow Protocols frames are for the agent; an LACPDU updates the
    /// port's partner and may move the machines at once (so
    /// [`distributing`](Self::distributing) can change), replies wait for
    /// [`poll`](Self::poll). Never panics.
    ///
    /// # Errors
    /// An [`RxError`] saying why the frame changed nothing; all but
    /// `UnknownPort` and `NotSlowProtocols` are counted on the port.
    pub fn receive(&mut self, port: u16, now: Nanos, frame: &[u8]) -> Result<(), RxError> {
        self.advance(now);
        let now = self.now;
        let system = self.system;
        let p = self
            .ports
            .get_mut(&port)
            .ok_or(RxError::UnknownPort(port))?;
        let (_, payload) = slow_payload(frame).ok_or(RxError::NotSlowProtocols)?;
        let pdu = match LacpduRepr::parse(payload) {
            Ok(pdu) => pdu,
            Err(LacpduError::NotLacp(SlowSubtype::Marker)) => {
                p.counters.markers_ignored += 1;
                return Err(RxError::Marker);
            }
            Err(LacpduError::NotLacp(other)) => {
                p.counters.other_ignored += 1;
                return Err(RxError::OtherSubtype(other));
            }
            Err(e) => {
                p.counters.errors += 1;
                return Err(RxError::Malformed(e));
            }
        };
        if pdu.actor.system == system {
            p.counters.errors += 1;
            return Err(RxError::OwnSystem);
        }
        p.counters.lacpdus_received += 1;
        if !p.lacp() || !p.link_up {
            return Err(RxError::NotRunning);
        }
        let actor = actor_info(system, p);
        record_pdu(p, &actor, &pdu, now);
        self.settle(now);
        Ok(())
    }

    /// Runs the machines up to `now` and sends every LACPDU that is due
    /// through `out`, as a whole Ethernet frame with the port's number.
    pub fn poll(&mut self, now: Nanos, out: &mut impl FnMut(u16, &[u8])) {
        self.advance(now);
        let now = self.now;
        let system = self.system;
        let mut frame = [0u8; FRAME_LEN];
        for (&id, p) in &mut self.ports {
            if !(p.ntt && p.may_transmit() && p.tx_allowed_at() <= now) {
                continue;
            }
            let actor = actor_info(system, p);
            let pdu = LacpduRepr {
                actor,
                partner: p.partner,
                collector_max_delay: 0,
            };
            // FRAME_LEN octets always suffice.
            let Ok(n) = emit_frame(p.cfg.mac, &pdu, &mut frame) else {
                continue;
            };
            p.ntt = false;
            p.last_sent = Some(actor);
            p.record_tx(now);
            p.counters.lacpdus_sent += 1;
            out(id, &frame[..n]);
        }
    }

    /// When [`poll`](Self::poll) next has work: a timer, or a LACPDU
    /// waiting (then the latest time seen, or when the rate limit lets it
    /// go). `None` when nothing is pending.
    pub fn next_deadline(&self) -> Option<Nanos> {
        self.ports
            .values()
            .flat_map(|p| {
                let tx = (p.ntt && p.may_transmit()).then(|| p.tx_allowed_at().max(self.now));
                [p.current_while, p.wait_while, p.periodic_at, tx]
            })
            .flatten()
            .min()
    }

    /// Whether the dataplane may send on `port` now: it is collecting and
    /// distributing in its port-channel (or `mode on` with its link up).
    /// False for ports that are not members.
    pub fn distributing(&self, port: u16) -> bool {
        self.ports.get(&port).is_some_and(Port::distributing)
    }

    /// The ports of port-channel `key` that are distributing, in port
    /// order: what the dataplane hashes the port-channel's traffic over.
    pub fn members(&self, key: u16) -> impl Iterator<Item = u16> + '_ {
        self.ports
            .iter()
            .filter(move |(_, p)| p.cfg.key == key && p.distributing())
            .map(|(&id, _)| id)
    }

    /// Every member's state and the port-channels they form, at the latest
    /// time seen.
    pub fn snapshot(&self) -> LacpSnapshot {
        let now = self.now;
        let left = |t: Option<Nanos>| t.map(|t| t.saturating_sub(now));
        let mut totals = LacpCounters::default();
        let ports: Vec<PortSnapshot> = self
            .ports
            .iter()
            .map(|(&id, p)| {
                totals.add(&p.counters);
                let heard = p.lacp() && p.link_up && !p.state.defaulted();
                let partner = heard.then(|| InfoSnapshot::from(&p.partner));
                let partner_flags = if heard {
                    let s = p.partner.state;
                    format!(
                        "{}{}",
                        if s.short_timeout() { 'F' } else { 'S' },
                        if s.active() { 'A' } else { 'P' }
                    )
                } else {
                    String::new()
                };
                let status = p.status();
                PortSnapshot {
                    port: id,
                    channel: p.cfg.key,
                    mode: p.cfg.mode,
                    rate: p.cfg.rate,
                    link_up: p.link_up,
                    status,
                    flag: status.flag(),
                    distributing: p.distributing(),
                    actor: InfoSnapshot::from(&actor_info(self.system, p)),
                    partner,
                    partner_flags,
                    age_s: p
                        .last_rx
                        .filter(|_| heard)
                        .map(|t| now.saturating_sub(t) / NS_PER_S),
                    rx_state: p.rx,
                    mux_state: p.mux,
                    periodic: p.periodic,
                    selected: p.selected,
                    current_while_ns: left(p.current_while),
                    wait_while_ns: left(p.wait_while),
                    periodic_ns: left(p.periodic_at),
                    counters: p.counters,
                }
            })
            .collect();
        let mut channels: BTreeMap<u16, ChannelSnapshot> = BTreeMap::new();
        for (&id, p) in &self.ports {
            let c = channels
                .entry(p.cfg.key)
                .or_insert_with(|| ChannelSnapshot {
                    channel: p.cfg.key,
                    protocol: if p.lacp() { "LACP" } else { "NONE" }.to_string(),
                    up: false,
                    members: Vec::new(),
                    bundled: Vec::new(),
                    partner_system: None,
                    partner_key: None,
                });
            c.members.push(id);
            if p.distributing() {
                c.bundled.push(id);
                c.up = true;
            }
        }
        for (key, lag) in &self.lags {
            if let Some(c) = channels.get_mut(key) {
                c.partner_system = Some(lag.system.to_string());
                c.partner_key = Some(lag.key);
            }
        }
        LacpSnapshot {
            system_priority: self.system.priority,
            system_mac: self.system.mac.to_string(),
            now_ns: now,
            channels: channels.into_values().collect(),
            ports,
            totals,
        }
    }

    /// Runs every timer that expires by `now`, in time order, then settles
    /// the machines at `now`.
    fn advance(&mut self, now: Nanos) {
        self.now = self.now.max(now);
        let now = self.now;
        while let Some(t) = self
            .ports
            .values()
            .flat_map(|p| [p.current_while, p.wait_while, p.periodic_at])
            .flatten()
            .filter(|&t| t <= now)
            .min()
        {
            for p in self.ports.values_mut() {
                fire_timers(p, t, now);
            }
            self.settle(t);
        }
        self.settle(now);
    }

    /// Runs Selection and the Mux machines until nothing changes, then the
    /// Periodic machines and the NTT rule, all at time `t`.
    fn settle(&mut self, t: Nanos) {
        // Each round either changes a state or ends the loop; the bound is
        // only a guard.
        for _ in 0..16 {
            let moved = self.run_muxes(t);
            if !(self.select() || moved) {
                break;
            }
        }
        let system = self.system;
        for p in self.ports.values_mut() {
            update_periodic(p, t);
            if p.lacp() && p.link_up && p.last_sent != Some(actor_info(system, p)) {
                p.ntt = true;
            }
        }
    }

    /// Whether every selected member of `key` that waits has waited out
    /// its aggregate wait (Ready).
    fn ready(&self, key: u16) -> bool {
        self.ports
            .values()
            .filter(|p| p.cfg.key == key && p.selected && p.mux == MuxState::Waiting)
            .all(|p| p.wait_while.is_none())
    }

    /// Steps each port's Mux machine to rest. Returns whether any moved.
    fn run_muxes(&mut self, t: Nanos) -> bool {
        let ids: Vec<u16> = self.ports.keys().copied().collect();
        let mut moved = false;
        for id in ids {
            // Four states: a port rests after at most four steps.
            for _ in 0..4 {
                let Some(key) = self.ports.get(&id).map(|p| p.cfg.key) else {
                    break;
                };
                let ready = self.ready(key);
                let Some(p) = self.ports.get_mut(&id) else {
                    break;
                };
                if !mux_step(p, ready, t) {
                    break;
                }
                moved = true;
            }
        }
        moved
    }

    /// The Selection logic: picks each port-channel's partner and selects
    /// the members that have it. Returns whether any selection changed.
    fn select(&mut self) -> bool {
        let keys: BTreeSet<u16> = self.ports.values().map(|p| p.cfg.key).collect();
        let mut changed = false;
        for key in keys {
            let members = || self.ports.iter().filter(move |(_, p)| p.cfg.key == key);
            let keep = self
                .lags
                .get(&key)
                .copied()
                .filter(|lag| members().any(|(_, p)| p.selected && p.lag() == Some(*lag)));
            let chosen = keep.or_else(|| {
                // Most members wins; BTreeMap order makes the lowest port
                // the first seen of each partner, and ties go to it.
                let mut count: Vec<(LagId, usize, u16)> = Vec::new();
                for (&id, p) in members() {
                    if let Some(lag) = p.lag() {
                        match count.iter_mut().find(|(l, _, _)| *l == lag) {
                            Some((_, n, _)) => *n += 1,
                            None => count.push((lag, 1, id)),
                        }
                    }
                }
                count
                    .into_iter()
                    .max_by(|a, b| a.1.cmp(&b.1).then(b.2.cmp(&a.2)))
                    .map(|(lag, _, _)| lag)
            });
            match chosen {
                Some(lag) => self.lags.insert(key, lag),
                None => self.lags.remove(&key),
            };
            for p in self.ports.values_mut().filter(|p| p.cfg.key == key) {
                let want = p.lacp() && chosen.is_some() && p.lag() == chosen;
                if p.selected != want {
                    p.selected = want;
                    changed = true;
                }
            }
        }
        changed
    }
}

/// The actor information port `p` advertises.
fn actor_info(system: SystemId, p: &Port) -> PortInfo {
    PortInfo {
        system,
        key: p.cfg.key,
        port_priority: p.cfg.priority,
        port: p.cfg.number,
        state: p.state,
    }
}

/// The fields whose change means a different partner port (update_Selected).
fn same_partner_port(a: &PortInfo, b: &PortInfo) -> bool {
    a.system == b.system
        && a.key == b.key
        && a.port == b.port
        && a.port_priority == b.port_priority
        && a.state.aggregatable() == b.state.aggregatable()
}

/// The state flags a partner must have right about us (update_NTT).
const NTT_FLAGS: u8 =
    State::ACTIVITY.0 | State::TIMEOUT.0 | State::SYNCHRONIZATION.0 | State::AGGREGATION.0;

/// The Receive machine's CURRENT state on a valid LACPDU: update_Selected,
/// update_NTT, recordPDU, and a fresh `current_while`.
fn record_pdu(p: &mut Port, actor: &PortInfo, pdu: &LacpduRepr, now: Nanos) {
    if !same_partner_port(&p.partner, &pdu.actor) {
        p.selected = false;
    }
    let theirs = &pdu.partner;
    let matched = theirs.system == actor.system
        && theirs.key == actor.key
        && theirs.port == actor.port
        && theirs.port_priority == actor.port_priority;
    if !matched || (theirs.state.0 ^ actor.state.0) & NTT_FLAGS != 0 {
        p.ntt = true;
    }
    let them = pdu.actor.state;
    let agrees = matched && theirs.state.aggregatable() == actor.state.aggregatable();
    let speaks = them.active() || (actor.state.active() && theirs.state.active());
    let sync = ((agrees && them.in_sync()) || (!them.aggregatable() && them.in_sync())) && speaks;
    p.partner = pdu.actor;
    p.partner.state.set(State::SYNCHRONIZATION, sync);
    p.state.set(State::DEFAULTED, false);
    p.state.set(State::EXPIRED, false);
    let timeout = match p.cfg.rate {
        Rate::Fast => SHORT_TIMEOUT_NS,
        Rate::Normal => LONG_TIMEOUT_NS,
    };
    p.current_while = Some(now.saturating_add(timeout));
    p.rx = RxState::Current;
    p.last_rx = Some(now);
}

/// Fires the timers of `p` that expire by `t`; `now` is where the caller
/// will end up, so periodic transmission resumes from there rather than
/// replaying every missed period.
fn fire_timers(p: &mut Port, t: Nanos, now: Nanos) {
    if p.current_while.is_some_and(|d| d <= t) {
        match p.rx {
            RxState::Current => {
                p.rx = RxState::Expired;
                p.partner.state.set(State::SYNCHRONIZATION, false);
                p.partner.state.set(State::TIMEOUT, true);
                p.current_while = Some(t.saturating_add(SHORT_TIMEOUT_NS));
                p.state.set(State::EXPIRED, true);
            }
            RxState::Expired => {
                p.rx = RxState::Defaulted;
                p.default_partner();
                p.state.set(State::EXPIRED, false);
                p.current_while = None;
            }
            _ => p.current_while = None,
        }
    }
    if p.wait_while.is_some_and(|d| d <= t) {
        p.wait_while = None;
    }
    if let Some(d) = p.periodic_at.filter(|&d| d <= t) {
        p.ntt = true;
        let next = d.saturating_add(periodic_interval(p.periodic));
        p.periodic_at = Some(if next <= now {
            now.saturating_add(periodic_interval(p.periodic))
        } else {
            next
        });
    }
}

fn periodic_interval(s: PeriodicState) -> Nanos {
    match s {
        PeriodicState::Fast => FAST_PERIODIC_NS,
        PeriodicState::Slow | PeriodicState::NoPeriodic => SLOW_PERIODIC_NS,
    }
}

/// The Periodic Transmission machine: the rate follows the partner's
/// timeout flag; both ends passive means silence.
fn update_periodic(p: &mut Port, t: Nanos) {
    let want = if !p.lacp() || !p.link_up || (!p.state.active() && !p.partner.state.active()) {
        PeriodicState::NoPeriodic
    } else if p.partner.state.short_timeout() {
        PeriodicState::Fast
    } else {
        PeriodicState::Slow
    };
    if want == p.periodic {
        return;
    }
    if p.periodic == PeriodicState::Slow && want == PeriodicState::Fast {
        // SLOW_PERIODIC → PERIODIC_TX: a partner that now wants fast
        // LACPDUs gets one at once.
        p.ntt = true;
    }
    p.periodic = want;
    p.periodic_at = match want {
        PeriodicState::NoPeriodic => None,
        s => Some(t.saturating_add(periodic_interval(s))),
    };
}

/// One step of the Mux machine (coupled control); `ready` says whether the
/// port-channel's waiting members have all waited. Returns whether the
/// state changed.
fn mux_step(p: &mut Port, ready: bool, t: Nanos) -> bool {
    if !p.lacp() {
        let want = if p.link_up {
            MuxState::CollectingDistributing
        } else {
            MuxState::Detached
        };
        if p.mux == want {
            return false;
        }
        p.mux = want;
        return true;
    }
    let partner_sync = p.partner.state.in_sync();
    let next = match p.mux {
        MuxState::Detached if p.selected => {
            p.set_mux(MuxState::Waiting);
            p.wait_while = Some(t.saturating_add(AGGREGATE_WAIT_NS));
            return true;
        }
        MuxState::Waiting if !p.selected => MuxState::Detached,
        MuxState::Waiting if ready && p.wait_while.is_none() => MuxState::Attached,
        MuxState::Attached if !p.selected => MuxState::Detached,
        MuxState::Attached if partner_sync => MuxState::CollectingDistributing,
        MuxState::CollectingDistributing if !p.selected || !partner_sync => MuxState::Attached,
        _ => return false,
    };
    p.set_mux(next);
    true
}
