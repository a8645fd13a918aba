//! The LLDP/DCBX agent: what railyard advertises on each port, what it learns
//! from neighbours, and the PFC set DCBX puts in force.
//!
//! Pure logic with no I/O and no clock of its own: every entry point takes
//! the time (`Nanos`) and frames go out through a callback, so the same code
//! runs in the live switch (a thread that feeds punted LLDP frames, calls
//! [`Agent::poll`] at [`Agent::next_deadline`], sends what it emits and
//! pushes [`Agent::operational_pfc`] into the dataplane) and in tests under
//! virtual time.
//!
//! Transmission follows 802.1AB with NX-OS defaults: a frame every `lldp
//! timer` (30 s) with TTL `lldp holdtime` (120 s); fast start (4 frames 1 s
//! apart) when the agent starts, a link comes up or the local configuration
//! changes; after LLDP stops on a port it may restart only `lldp reinit`
//! (2 s) later; turning LLDP off on a port sends one shutdown LLDPDU (TTL 0).
//!
//! DCBX (see [`dcbx`]) advertises the configured values, willing bit
//! included, except for the PFC enable set: that is the set in force, the
//! peer's once a willing port has adopted it, re-advertised at once. Operational
//! ETS is reported but railyard's egress queues keep their configured
//! scheduling.

#[cfg(test)]
mod tests;

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::dcbx::{self, CeeSeq, DcbxDialect, DcbxMode, LocalDcbx, PeerDcbx};
use crate::snapshot::{
    DcbxSnapshot, LldpCounters, LldpSnapshot, NeighborSnapshot, PortSnapshot, RawOrgTlv, RawTlv,
};
use crate::wire::dcbx::DcbxTlv;
use crate::wire::lldpdu::{
    CapabilitiesTlv, ChassisIdSubtype, ChassisIdTlv, LldpduRepr, ManagementAddressTlv, OrgTlv,
    PortIdSubtype, PortIdTlv, CAP_BRIDGE, CAP_ROUTER, MAX_ID_LEN, MAX_ORG_INFO_LEN, MAX_VALUE_LEN,
};
use crate::wire::MacAddr;
use crate::Nanos;

/// LLDP's destination MAC (nearest bridge).
pub const LLDP_MULTICAST: MacAddr = MacAddr([0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e]);
/// LLDP's EtherType.
pub const ETHERTYPE_LLDP: u16 = 0x88cc;
/// Frames sent in a fast start.
pub const FAST_START_FRAMES: u8 = 4;
/// Interval between fast-start frames.
pub const FAST_START_INTERVAL_NS: Nanos = 1_000_000_000;
/// Neighbours kept per port; frames from further ones are discarded.
pub const MAX_NEIGHBORS_PER_PORT: usize = 8;
/// Shortest Ethernet frame without FCS; LLDP frames are padded to it.
pub const MIN_FRAME_LEN: usize = 60;

/// Nanoseconds in a second, for converting the configured timers.
pub(crate) const NS_PER_S: Nanos = 1_000_000_000;

/// The TLVs `lldp tlv-select` turns on and off (all on by default), as the
/// agent sees them. `port_vlan` and `power_management` send nothing (the
/// agent has no such TLVs) but, like every setting, a change fast-starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TlvSelect {
    /// The DCBX TLVs (ETS, PFC, application priority).
    pub dcbxp: bool,
    /// The management address TLV.
    pub management_address: bool,
    /// The port description TLV.
    pub port_description: bool,
    /// The port VLAN TLV (not sent).
    pub port_vlan: bool,
    /// The power-management TLV (not sent).
    pub power_management: bool,
    /// The system capabilities TLV.
    pub system_capabilities: bool,
    /// The system description TLV.
    pub system_description: bool,
    /// The system name TLV.
    pub system_name: bool,
}

impl Default for TlvSelect {
    fn default() -> Self {
        TlvSelect {
            dcbxp: true,
            management_address: true,
            port_description: true,
            port_vlan: true,
            power_management: true,
            system_capabilities: true,
            system_description: true,
            system_name: true,
        }
    }
}

/// Everything the agent needs to know about one port, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PortConfig {
    /// Interface name; the Port ID (subtype 5).
    pub name: String,
    /// `description`, advertised as the port description when set.
    pub description: Option<String>,
    /// The port's MAC: source of its LLDP frames.
    pub mac: MacAddr,
    /// Administratively up (`no shutdown`); a shut port neither sends nor learns.
    pub admin_up: bool,
    /// `lldp transmit`.
    pub transmit: bool,
    /// `lldp receive`.
    pub receive: bool,
    /// Layer 3 MTU; the 802.3 maximum frame size advertised is MTU + 18.
    pub mtu: u16,
    /// First IPv4 address, advertised as the management address.
    pub mgmt_ipv4: Option<Ipv4Addr>,
    /// `lldp dcbx version`.
    pub dcbx_mode: DcbxMode,
    /// What DCBX advertises; `None` when the port has no PFC configured.
    pub dcbx: Option<LocalDcbx>,
    /// The PFC enable set configured (the lossless priorities unless `mode
    /// off`): what DCBX advertises, and in force without a DCBX peer unless
    /// `pfc_auto`.
    pub configured_pfc: u8,
    /// `priority-flow-control mode auto`: the set is in force only once a
    /// DCBX peer agrees (NX-OS); with no agreeing peer PFC is off.
    pub pfc_auto: bool,
}

/// Everything the agent needs, as plain data: the daemon builds it from its
/// own configuration, tests by hand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentConfig {
    /// `feature lldp`: without it the agent neither sends nor learns.
    pub enabled: bool,
    /// The switch base MAC: the Chassis ID (subtype 4) and the DCBX tie-breaker.
    pub chassis_mac: MacAddr,
    /// Hostname, the system name.
    pub system_name: String,
    /// System description.
    pub system_description: String,
    /// `lldp timer`, seconds.
    pub timer_s: u16,
    /// `lldp holdtime`, seconds: the TTL advertised.
    pub holdtime_s: u16,
    /// `lldp reinit`, seconds.
    pub reinit_s: u16,
    /// `lldp tlv-select`.
    pub tlv_select: TlvSelect,
    /// `lldp tlv custom …`: extra organisationally specific TLVs on every port.
    pub custom_tlvs: Vec<OrgTlv>,
    /// Ports in switch order (index = dataplane port number).
    pub ports: Vec<PortConfig>,
}

/// One neighbour in a port's table.
#[derive(Debug, Clone)]
struct Neighbor {
    pdu: LldpduRepr,
    src_mac: MacAddr,
    expires_at: Nanos,
    last_rx: Nanos,
    ieee: Option<PeerDcbx>,
    cee: Option<PeerDcbx>,
}

/// Per-port runtime state.
#[derive(Debug, Clone)]
struct PortState {
    link_up: bool,
    /// LLDPDUs are being sent (enabled, transmit, admin up, link up).
    tx_on: bool,
    next_tx: Option<Nanos>,
    fast_left: u8,
    /// When transmission last stopped, for `lldp reinit`.
    stopped_at: Option<Nanos>,
    neighbors: Vec<Neighbor>,
    counters: LldpCounters,
    /// `auto` mode has switched to CEE for a CEE-only peer.
    auto_cee: bool,
    /// CEE sequence number of our configuration.
    cee_seq: u32,
    /// Last CEE sequence number heard from the peer (echoed as our ack).
    cee_ack: u32,
}

impl PortState {
    fn new() -> PortState {
        PortState {
            link_up: true,
            tx_on: false,
            next_tx: None,
            fast_left: 0,
            stopped_at: None,
            neighbors: Vec::new(),
            counters: LldpCounters::default(),
            auto_cee: false,
            cee_seq: 1,
            cee_ack: 0,
        }
    }
}

/// The LLDP/DCBX agent of a whole switch (module docs).
#[derive(Debug, Clone)]
pub struct Agent {
    cfg: AgentConfig,
    ports: Vec<PortState>,
    /// Frames produced outside `poll` (shutdown LLDPDUs on reconfigure), sent at the next poll.
    pending: Vec<(usize, Vec<u8>)>,
    /// Latest time seen, for snapshots.
    now: Nanos,
    /// Counters of ports removed by a reconfigure, kept in the totals.
    retired: LldpCounters,
}

impl Agent {
    /// An agent for `cfg`; every port is taken as link up and starts with a
    /// fast start (call [`link_changed`](Self::link_changed) for ports known to be down).
    pub fn new(cfg: AgentConfig, now: Nanos) -> Agent {
        let ports = cfg.ports.iter().map(|_| PortState::new()).collect();
        let mut a = Agent {
            cfg,
            ports,
            pending: Vec::new(),
            now,
            retired: LldpCounters::default(),
        };
        for i in 0..a.ports.len() {
            a.update_tx(i, now, true);
        }
        a
    }

    /// The configuration in force.
    pub fn config(&self) -> &AgentConfig {
        &self.cfg
    }

    fn tick(&mut self, now: Nanos) {
        self.now = self.now.max(now);
    }

    fn wants_tx(&self, i: usize) -> bool {
        match (self.cfg.ports.get(i), self.ports.get(i)) {
            (Some(p), Some(s)) => self.cfg.enabled && p.transmit && p.admin_up && s.link_up,
            _ => false,
        }
    }

    fn wants_rx(&self, i: usize) -> bool {
        match (self.cfg.ports.get(i), self.ports.get(i)) {
            (Some(p), Some(s)) => self.cfg.enabled && p.receive && p.admin_up && s.link_up,
            _ => false,
        }
    }

    /// Starts or stops transmission on port `i` to match the configuration;
    /// `fast` asks for a fast start when transmitting (local change, link up).
    /// Returns true when transmission stopped.
    fn update_tx(&mut self, i: usize, now: Nanos, fast: bool) -> bool {
        let want = self.wants_tx(i);
        let reinit = Nanos::from(self.cfg.reinit_s) * NS_PER_S;
        let Some(s) = self.ports.get_mut(i) else {
            return false;
        };
        match (want, s.tx_on) {
            (true, false) => {
                s.tx_on = true;
                let earliest = s.stopped_at.map_or(now, |t| t.saturating_add(reinit));
                s.next_tx = Some(now.max(earliest));
                s.fast_left = FAST_START_FRAMES;
                false
            }
            (false, true) => {
                s.tx_on = false;
                s.next_tx = None;
                s.fast_left = 0;
                s.stopped_at = Some(now);
                true
            }
            (true, true) => {
                if fast {
                    s.fast_left = FAST_START_FRAMES;
                    s.next_tx = Some(s.next_tx.map_or(now, |t| t.min(now)));
                }
                false
            }
            (false, false) => false,
        }
    }

    /// Applies a new configuration. Ports are matched by name: a port whose
    /// settings (or the global ones) changed gets a fast start (CEE: its
    /// sequence number bumped when its DCBX changed); a port where LLDP
    /// transmission was turned off sends one shutdown LLDPDU (TTL 0, built
    /// from the old settings) at the next [`poll`](Self::poll); a port where
    /// reception was turned off forgets its neighbours.
    pub fn reconfigure(&mut self, cfg: AgentConfig, now: Nanos) {
        self.tick(now);
        let old_cfg = std::mem::replace(&mut self.cfg, cfg);
        let mut old_ports: Vec<Option<PortState>> = std::mem::take(&mut self.ports)
            .into_iter()
            .map(Some)
            .collect();
        let globals_changed = old_cfg.enabled != self.cfg.enabled
            || old_cfg.chassis_mac != self.cfg.chassis_mac
            || old_cfg.system_name != self.cfg.system_name
            || old_cfg.system_description != self.cfg.system_description
            || old_cfg.holdtime_s != self.cfg.holdtime_s
            || old_cfg.tlv_select != self.cfg.tlv_select
            || old_cfg.custom_tlvs != self.cfg.custom_tlvs;
        let mut new_ports = Vec::with_capacity(self.cfg.ports.len());
        let mut changed = Vec::with_capacity(self.cfg.ports.len());
        for p in &self.cfg.ports {
            let old = old_cfg
                .ports
                .iter()
                .position(|o| o.name == p.name)
                .and_then(|j| Some((j, old_ports.get_mut(j)?.take()?)));
            match old {
                Some((j, mut st)) => {
                    let op = old_cfg.ports.get(j);
                    if op.is_some_and(|o| o.dcbx != p.dcbx || o.dcbx_mode != p.dcbx_mode) {
                        st.cee_seq = next_seq(st.cee_seq);
                    }
                    // The shutdown PDU uses the old identity.
                    let was_on = st.tx_on;
                    let still = self.cfg.enabled && p.transmit && p.admin_up && st.link_up;
                    if was_on && !still {
                        if let Some(f) = op.and_then(|o| shutdown_frame(&old_cfg, o)) {
                            self.pending.push((new_ports.len(), f));
                        }
                    }
                    changed.push(globals_changed || op != Some(p));
                    new_ports.push(st);
                }
                None => {
                    changed.push(true);
                    new_ports.push(PortState::new());
                }
            }
        }
        for st in old_ports.into_iter().flatten() {
            self.retired.add(&st.counters);
        }
        self.ports = new_ports;
        for i in 0..self.ports.len() {
            if !self.wants_rx(i) {
                if let Some(s) = self.ports.get_mut(i) {
                    s.neighbors.clear();
                    s.auto_cee = false;
                }
            }
            let fast = changed.get(i).copied().unwrap_or(true);
            self.update_tx(i, now, fast);
        }
    }

    /// Port `port` went up (fast start, after `lldp reinit` if it stopped
    /// recently) or down (transmission stops, its neighbours are forgotten).
    pub fn link_changed(&mut self, port: usize, up: bool, now: Nanos) {
        self.tick(now);
        let Some(s) = self.ports.get_mut(port) else {
            return;
        };
        if s.link_up == up {
            return;
        }
        s.link_up = up;
        if !up {
            s.neighbors.clear();
            s.auto_cee = false;
        }
        self.update_tx(port, now, up);
    }

    /// Handles a whole Ethernet frame received on `port` (802.1Q/802.1ad tags
    /// allowed). Frames that are not LLDP are ignored; LLDP frames are
    /// counted, validated strictly, and stored in the port's neighbour table.
    /// Never panics.
    pub fn receive(&mut self, port: usize, frame: &[u8], now: Nanos) {
        let before = self.advertised_pfc(port);
        self.receive_frame(port, frame, now);
        self.readvertise_if_changed(port, before, now);
    }

    /// A change of the PFC set advertised is a local change: it is
    /// re-advertised at once with a fast start.
    fn readvertise_if_changed(&mut self, port: usize, before: u8, now: Nanos) {
        if self.advertised_pfc(port) != before {
            // What CEE sends changed: a new sequence number tells the peer.
            if let Some(s) = self.ports.get_mut(port) {
                s.cee_seq = next_seq(s.cee_seq);
            }
            self.update_tx(port, now, true);
        }
    }

    fn receive_frame(&mut self, port: usize, frame: &[u8], now: Nanos) {
        self.tick(now);
        let Some((src, payload)) = lldp_payload(frame) else {
            return;
        };
        if !self.cfg.enabled || port >= self.ports.len() {
            return;
        }
        self.age(port, now);
        let wants_rx = self.wants_rx(port);
        let Some(s) = self.ports.get_mut(port) else {
            return;
        };
        s.counters.frames_in += 1;
        if !wants_rx {
            s.counters.frames_discarded += 1;
            return;
        }
        let pdu = match LldpduRepr::parse(payload) {
            Ok(p) => p,
            Err(_) => {
                s.counters.frames_in_error += 1;
                s.counters.frames_discarded += 1;
                return;
            }
        };
        let pos = s
            .neighbors
            .iter()
            .position(|n| n.pdu.chassis_id == pdu.chassis_id && n.pdu.port_id == pdu.port_id);
        if pdu.is_shutdown() {
            if let Some(k) = pos {
                s.neighbors.remove(k);
            }
            self.after_neighbor_change(port, now, None);
            return;
        }
        if pos.is_none() && s.neighbors.len() >= MAX_NEIGHBORS_PER_PORT {
            s.counters.frames_discarded += 1;
            s.counters.too_many_neighbors += 1;
            return;
        }
        let decoded = dcbx::decode(&pdu.org_specific);
        s.counters.tlvs_unrecognized += pdu.unknown.len() as u64 + decoded.unrecognised;
        s.counters.tlvs_discarded += decoded.bad;
        let peer_cee_seq = decoded.cee.as_ref().and_then(|c| c.cee).map(|c| c.seq_no);
        let n = Neighbor {
            expires_at: now.saturating_add(Nanos::from(pdu.ttl) * NS_PER_S),
            last_rx: now,
            src_mac: src,
            ieee: decoded.ieee,
            cee: decoded.cee,
            pdu,
        };
        match pos {
            Some(k) => {
                if let Some(slot) = s.neighbors.get_mut(k) {
                    *slot = n;
                }
            }
            None => s.neighbors.push(n),
        }
        self.after_neighbor_change(port, now, peer_cee_seq);
    }

    /// Re-evaluates `auto` mode and the CEE handshake after the neighbour
    /// table of `port` changed; schedules a transmission when what the port
    /// sends changes as a result.
    fn after_neighbor_change(&mut self, port: usize, now: Nanos, peer_cee_seq: Option<u32>) {
        let mode = self.cfg.ports.get(port).map(|p| p.dcbx_mode);
        let Some(s) = self.ports.get_mut(port) else {
            return;
        };
        let mut fast = false;
        if mode == Some(DcbxMode::Auto) {
            let (ieee, cee) = match dcbx_neighbor(&s.neighbors) {
                Some(n) => (n.ieee.is_some(), n.cee.is_some()),
                None => (false, false),
            };
            let want_cee = if ieee {
                false
            } else if cee {
                true
            } else {
                // A peer without DCBX (or none at all) keeps us where we are,
                // unless the table is empty: then back to IEEE.
                s.auto_cee && !s.neighbors.is_empty()
            };
            if want_cee != s.auto_cee {
                s.auto_cee = want_cee;
                fast = true;
            }
        }
        let mut ack_now = false;
        if let Some(seq) = peer_cee_seq {
            if seq != s.cee_ack {
                s.cee_ack = seq;
                ack_now = true;
            }
        }
        if fast {
            self.update_tx(port, now, true);
        } else if ack_now {
            if let Some(s) = self.ports.get_mut(port) {
                if s.tx_on {
                    s.next_tx = Some(s.next_tx.map_or(now, |t| t.min(now)));
                }
            }
        }
    }

    fn age(&mut self, port: usize, now: Nanos) {
        let pfc = self.advertised_pfc(port);
        let Some(s) = self.ports.get_mut(port) else {
            return;
        };
        let before = s.neighbors.len();
        s.neighbors.retain(|n| n.expires_at > now);
        let aged = before - s.neighbors.len();
        if aged > 0 {
            s.counters.ageouts += aged as u64;
            self.after_neighbor_change(port, now, None);
            self.readvertise_if_changed(port, pfc, now);
        }
    }

    /// Sends what is due at `now` through `send(port, frame)`: pending
    /// shutdown LLDPDUs, then each port's scheduled LLDPDU; ages out
    /// neighbours whose TTL ran out.
    pub fn poll(&mut self, now: Nanos, send: &mut dyn FnMut(usize, Vec<u8>)) {
        self.tick(now);
        for (port, f) in std::mem::take(&mut self.pending) {
            if let Some(s) = self.ports.get_mut(port) {
                s.counters.frames_out += 1;
            }
            send(port, f);
        }
        for i in 0..self.ports.len() {
            self.age(i, now);
            let due = self
                .ports
                .get(i)
                .is_some_and(|s| s.tx_on && s.next_tx.is_some_and(|t| t <= now));
            if !due {
                continue;
            }
            let frame = self.frame(i, self.cfg.holdtime_s);
            let timer = Nanos::from(self.cfg.timer_s.max(1)) * NS_PER_S;
            let Some(s) = self.ports.get_mut(i) else {
                continue;
            };
            s.fast_left = s.fast_left.saturating_sub(1);
            let interval = if s.fast_left > 0 {
                FAST_START_INTERVAL_NS
            } else {
                timer
            };
            s.next_tx = Some(now.saturating_add(interval));
            if let Some(f) = frame {
                s.counters.frames_out += 1;
                send(i, f);
            }
        }
    }

    /// When [`poll`](Self::poll) next has work: a transmission, an age-out,
    /// or pending shutdown frames (then the latest time seen). `None` when idle.
    pub fn next_deadline(&self) -> Option<Nanos> {
        let mut d: Option<Nanos> = (!self.pending.is_empty()).then_some(self.now);
        let mut consider = |t: Nanos| d = Some(d.map_or(t, |x| x.min(t)));
        for s in &self.ports {
            if let (true, Some(t)) = (s.tx_on, s.next_tx) {
                consider(t);
            }
            for n in &s.neighbors {
                consider(n.expires_at);
            }
        }
        d
    }

    /// Sends a shutdown LLDPDU (TTL 0) on every port that is transmitting and
    /// stops transmission; for a switch going down.
    pub fn shutdown(&mut self, send: &mut dyn FnMut(usize, Vec<u8>)) {
        let now = self.now;
        for (port, f) in std::mem::take(&mut self.pending) {
            if let Some(s) = self.ports.get_mut(port) {
                s.counters.frames_out += 1;
            }
            send(port, f);
        }
        for i in 0..self.ports.len() {
            let on = self.ports.get(i).is_some_and(|s| s.tx_on);
            if !on {
                continue;
            }
            if let Some(f) = self
                .cfg
                .ports
                .get(i)
                .and_then(|p| shutdown_frame(&self.cfg, p))
            {
                send(i, f);
            }
            if let Some(s) = self.ports.get_mut(i) {
                s.counters.frames_out += 1;
                s.tx_on = false;
                s.next_tx = None;
                s.stopped_at = Some(now);
            }
        }
    }

    /// The dialect port `i` is sending now, `None` when it sends no DCBX.
    fn dialect(&self, i: usize) -> Option<DcbxDialect> {
        let p = self.cfg.ports.get(i)?;
        p.dcbx.as_ref()?;
        if !self.cfg.tlv_select.dcbxp {
            return None;
        }
        Some(match p.dcbx_mode {
            DcbxMode::Ieee => DcbxDialect::Ieee,
            DcbxMode::Cee => DcbxDialect::Cee,
            DcbxMode::Auto => {
                if self.ports.get(i).is_some_and(|s| s.auto_cee) {
                    DcbxDialect::Cee
                } else {
                    DcbxDialect::Ieee
                }
            }
        })
    }

    /// The peer DCBX of port `i` in the dialect in use, with the peer's MAC
    /// for the tie-break (its chassis MAC, else the frame's source).
    fn peer(&self, i: usize) -> Option<(&Neighbor, &PeerDcbx, [u8; 6])> {
        let dialect = self.dialect(i)?;
        let s = self.ports.get(i)?;
        let n = dcbx_neighbor(&s.neighbors)?;
        let p = match dialect {
            DcbxDialect::Ieee => n.ieee.as_ref()?,
            DcbxDialect::Cee => n.cee.as_ref()?,
        };
        let mac = n.pdu.chassis_id.mac().unwrap_or(n.src_mac);
        Some((n, p, mac.0))
    }

    fn operational(&self, i: usize) -> dcbx::Operational {
        let Some(p) = self.cfg.ports.get(i) else {
            return dcbx::resolve(None, 0, false, [0; 6], None, false);
        };
        let local = self.dialect(i).and(p.dcbx.as_ref());
        let present = self.ports.get(i).is_some_and(|s| !s.neighbors.is_empty());
        dcbx::resolve(
            local,
            p.configured_pfc,
            p.pfc_auto,
            self.cfg.chassis_mac.0,
            self.peer(i).map(|(_, d, m)| (d, m)),
            present,
        )
    }

    /// The PFC enable bitmap in force on `port` after DCBX: the peer's when
    /// the willing rules say adopt; otherwise the configured set, except on
    /// a `pfc_auto` port, which has none until a DCBX peer agrees. 0 for an
    /// unknown port.
    pub fn operational_pfc(&self, port: usize) -> u8 {
        self.operational(port).pfc
    }

    /// The PFC enable bitmap `port` advertises (the willing rules' choice).
    fn advertised_pfc(&self, port: usize) -> u8 {
        self.operational(port).pfc_advertised
    }

    /// Neighbours, DCBX state and counters of every port, at the latest time seen.
    pub fn snapshot(&self) -> LldpSnapshot {
        let mut totals = self.retired;
        let ports = self
            .cfg
            .ports
            .iter()
            .zip(&self.ports)
            .enumerate()
            .map(|(i, (p, s))| {
                totals.add(&s.counters);
                let dialect = self.dialect(i);
                let peer = self.peer(i);
                PortSnapshot {
                    name: p.name.clone(),
                    index: i,
                    transmit: p.transmit && p.admin_up,
                    receive: p.receive,
                    link_up: s.link_up,
                    transmitting: s.tx_on,
                    neighbors: s
                        .neighbors
                        .iter()
                        .map(|n| neighbor_snapshot(n, self.now))
                        .collect(),
                    dcbx: DcbxSnapshot {
                        mode: p.dcbx_mode,
                        in_use: dialect,
                        local: dialect.and(p.dcbx.clone()),
                        configured_pfc: p.configured_pfc,
                        pfc_auto: p.pfc_auto,
                        peer: peer.map(|(_, d, _)| d.clone()),
                        peer_chassis_id: dcbx_neighbor(&s.neighbors)
                            .map(|n| chassis_text(&n.pdu.chassis_id)),
                        operational: self.operational(i),
                        cee_local: (dialect == Some(DcbxDialect::Cee)).then_some(CeeSeq {
                            seq_no: s.cee_seq,
                            ack_no: s.cee_ack,
                        }),
                    },
                    counters: s.counters,
                }
            })
            .collect();
        LldpSnapshot {
            hostname: self.cfg.system_name.clone(),
            chassis_id: self.cfg.chassis_mac.to_string(),
            enabled: self.cfg.enabled,
            timer_s: self.cfg.timer_s,
            holdtime_s: self.cfg.holdtime_s,
            reinit_s: self.cfg.reinit_s,
            now_ns: self.now,
            ports,
            totals,
        }
    }

    /// The LLDPDU port `i` advertises now with TTL `ttl`.
    pub fn lldpdu(&self, i: usize, ttl: u16) -> Option<LldpduRepr> {
        let p = self.cfg.ports.get(i)?;
        let mut pdu = base_pdu(&self.cfg, p, ttl);
        let sel = &self.cfg.tlv_select;
        if sel.port_description {
            let d = p.description.as_deref().unwrap_or(&p.name);
            pdu.port_description = Some(clip(d.as_bytes(), MAX_VALUE_LEN));
        }
        if sel.system_name {
            pdu.system_name = Some(clip(self.cfg.system_name.as_bytes(), MAX_VALUE_LEN));
        }
        if sel.system_description {
            pdu.system_description =
                Some(clip(self.cfg.system_description.as_bytes(), MAX_VALUE_LEN));
        }
        if sel.system_capabilities {
            pdu.capabilities = Some(CapabilitiesTlv {
                supported: CAP_BRIDGE | CAP_ROUTER,
                enabled: CAP_ROUTER,
            });
        }
        if let (true, Some(a)) = (sel.management_address, p.mgmt_ipv4) {
            pdu.management_addresses.push(ManagementAddressTlv {
                address_subtype: 1,
                address: a.octets().to_vec(),
                interface_subtype: 2,
                interface_number: u32::try_from(i).unwrap_or(u32::MAX - 1).saturating_add(1),
                oid: Vec::new(),
            });
        }
        pdu.org_specific
            .push(OrgTlv::new_max_frame_size(p.mtu.saturating_add(18)));
        if let (Some(dialect), Some(configured)) = (self.dialect(i), p.dcbx.as_ref()) {
            // The set the willing rules chose is what the port advertises
            // (willing bit unchanged), so a peer sees what this port pauses
            // on, or (`auto`, not yet agreed) what it will pause on once
            // the peer agrees.
            let mut l = configured.clone();
            l.pfc.enable = self.operational(i).pfc_advertised;
            let l = &l;
            match dialect {
                DcbxDialect::Ieee => pdu.org_specific.extend(dcbx::ieee_tlvs(l)),
                DcbxDialect::Cee => {
                    let s = self.ports.get(i)?;
                    let seq = CeeSeq {
                        seq_no: s.cee_seq,
                        ack_no: s.cee_ack,
                    };
                    pdu.org_specific.extend(dcbx::cee_tlv(l, seq));
                }
            }
        }
        pdu.org_specific.extend(
            self.cfg
                .custom_tlvs
                .iter()
                .filter(|t| t.info.len() <= MAX_ORG_INFO_LEN)
                .cloned(),
        );
        Some(pdu)
    }

    /// The whole Ethernet frame port `i` sends now.
    fn frame(&self, i: usize, ttl: u16) -> Option<Vec<u8>> {
        let p = self.cfg.ports.get(i)?;
        let pdu = self.lldpdu(i, ttl)?;
        // A PDU that cannot be encoded (should not happen after clipping)
        // degrades to the mandatory TLVs rather than silence.
        let body = pdu
            .to_vec()
            .or_else(|_| base_pdu(&self.cfg, p, ttl).to_vec())
            .ok()?;
        Some(ethernet_frame(p.mac, &body))
    }
}

fn next_seq(s: u32) -> u32 {
    match s.wrapping_add(1) {
        0 => 1,
        n => n,
    }
}

fn clip(b: &[u8], max: usize) -> Vec<u8> {
    b.get(..max).unwrap_or(b).to_vec()
}

/// Chassis ID, Port ID and TTL of port `p`.
fn base_pdu(cfg: &AgentConfig, p: &PortConfig, ttl: u16) -> LldpduRepr {
    let mut port_id = clip(p.name.as_bytes(), MAX_ID_LEN - 1);
    if port_id.is_empty() {
        port_id = b"?".to_vec();
    }
    LldpduRepr::new(
        ChassisIdTlv {
            subtype: ChassisIdSubtype::MacAddress,
            id: cfg.chassis_mac.0.to_vec(),
        },
        PortIdTlv {
            subtype: PortIdSubtype::InterfaceName,
            id: port_id,
        },
        ttl,
    )
}

/// The shutdown LLDPDU of port `p`: the mandatory TLVs with TTL 0.
fn shutdown_frame(cfg: &AgentConfig, p: &PortConfig) -> Option<Vec<u8>> {
    let body = base_pdu(cfg, p, 0).to_vec().ok()?;
    Some(ethernet_frame(p.mac, &body))
}

/// Wraps an LLDPDU: destination 01:80:C2:00:00:0E, source `src`, EtherType
/// 0x88CC, padded with zeros to 60 bytes.
pub fn ethernet_frame(src: MacAddr, lldpdu: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity((14 + lldpdu.len()).max(MIN_FRAME_LEN));
    f.extend_from_slice(&LLDP_MULTICAST.0);
    f.extend_from_slice(&src.0);
    f.extend_from_slice(&ETHERTYPE_LLDP.to_be_bytes());
    f.extend_from_slice(lldpdu);
    if f.len() < MIN_FRAME_LEN {
        f.resize(MIN_FRAME_LEN, 0);
    }
    f
}

/// The source MAC and LLDPDU of an LLDP frame, skipping 802.1Q/802.1ad tags;
/// `None` for anything else.
pub fn lldp_payload(frame: &[u8]) -> Option<(MacAddr, &[u8])> {
    let src: [u8; 6] = frame.get(6..12)?.try_into().ok()?;
    let mut off = 12;
    loop {
        let et = u16::from_be_bytes(frame.get(off..off + 2)?.try_into().ok()?);
        match et {
            0x8100 | 0x88a8 | 0x9100 => off += 4,
            ETHERTYPE_LLDP => return Some((MacAddr(src), frame.get(off + 2..)?)),
            _ => return None,
        }
    }
}

/// The neighbour DCBX is negotiated with: the most recently heard one that
/// sends DCBX TLVs, else the most recently heard one.
fn dcbx_neighbor(ns: &[Neighbor]) -> Option<&Neighbor> {
    ns.iter()
        .filter(|n| n.ieee.is_some() || n.cee.is_some())
        .max_by_key(|n| n.last_rx)
        .or_else(|| ns.iter().max_by_key(|n| n.last_rx))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn chassis_text(c: &ChassisIdTlv) -> String {
    match c.mac() {
        Some(m) => m.to_string(),
        None => text(&c.id),
    }
}

fn mgmt_text(m: &ManagementAddressTlv) -> String {
    match (m.address_subtype, m.address.as_slice()) {
        (1, a) if a.len() == 4 => {
            let o: [u8; 4] = a.try_into().unwrap_or([0; 4]);
            Ipv4Addr::from(o).to_string()
        }
        (2, a) if a.len() == 16 => {
            let o: [u8; 16] = a.try_into().unwrap_or([0; 16]);
            Ipv6Addr::from(o).to_string()
        }
        (6, a) if a.len() == 6 => {
            let o: [u8; 6] = a.try_into().unwrap_or([0; 6]);
            MacAddr(o).to_string()
        }
        (s, a) => format!("subtype {s} {}", hex(a)),
    }
}

fn neighbor_snapshot(n: &Neighbor, now: Nanos) -> NeighborSnapshot {
    let p = &n.pdu;
    NeighborSnapshot {
        chassis_id_subtype: p.chassis_id.subtype.into(),
        chassis_id: chassis_text(&p.chassis_id),
        port_id_subtype: p.port_id.subtype.into(),
        port_id: match p.port_id.mac() {
            Some(m) => m.to_string(),
            None => text(&p.port_id.id),
        },
        source_mac: n.src_mac.to_string(),
        ttl: p.ttl,
        time_remaining_s: n.expires_at.saturating_sub(now).div_ceil(NS_PER_S),
        port_description: p.port_description_lossy().map(|s| s.into_owned()),
        system_name: p.system_name_lossy().map(|s| s.into_owned()),
        system_description: p.system_description_lossy().map(|s| s.into_owned()),
        capabilities_supported: p.capabilities.map(|c| c.supported),
        capabilities_enabled: p.capabilities.map(|c| c.enabled),
        management_addresses: p.management_addresses.iter().map(mgmt_text).collect(),
        max_frame_size: p.max_frame_size(),
        dcbx_ieee: n.ieee.clone(),
        dcbx_cee: n.cee.clone(),
        org_tlvs: p
            .org_specific
            .iter()
            .filter(|o| DcbxTlv::parse(o).is_none() && o.max_frame_size().is_none())
            .map(|o| RawOrgTlv {
                oui: format!("{:02x}-{:02x}-{:02x}", o.oui[0], o.oui[1], o.oui[2]),
                subtype: o.subtype,
                info_hex: hex(&o.info),
            })
            .collect(),
        unknown_tlvs: p
            .unknown
            .iter()
            .map(|u| RawTlv {
                tlv_type: u.tlv_type,
                value_hex: hex(&u.value),
            })
            .collect(),
    }
}
