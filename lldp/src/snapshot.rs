//! What the agent reports: neighbours, DCBX state and counters, as plain
//! serde data so the management socket can ship it and `railyard show lldp`
//! can render it on the client side.

use serde::{Deserialize, Serialize};

use crate::dcbx::{DcbxDialect, DcbxMode, LocalDcbx, Operational, PeerDcbx};

/// LLDP counters of a port (or the sum over ports), in the terms of NX-OS
/// `show lldp traffic`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct LldpCounters {
    /// LLDP frames transmitted.
    pub frames_out: u64,
    /// LLDP frames received (valid or not).
    pub frames_in: u64,
    /// Frames that failed validation.
    pub frames_in_error: u64,
    /// Frames not stored: malformed, table full, or receive disabled.
    pub frames_discarded: u64,
    /// TLVs of unknown type or unknown organisation/subtype.
    pub tlvs_unrecognized: u64,
    /// DCBX TLVs that failed to decode (the rest of the frame was kept).
    pub tlvs_discarded: u64,
    /// Neighbours removed because their TTL ran out.
    pub ageouts: u64,
    /// Frames from a new neighbour dropped because the port already had the maximum.
    pub too_many_neighbors: u64,
}

impl LldpCounters {
    /// Adds `o` field by field (saturating).
    pub fn add(&mut self, o: &LldpCounters) {
        self.frames_out = self.frames_out.saturating_add(o.frames_out);
        self.frames_in = self.frames_in.saturating_add(o.frames_in);
        self.frames_in_error = self.frames_in_error.saturating_add(o.frames_in_error);
        self.frames_discarded = self.frames_discarded.saturating_add(o.frames_discarded);
        self.tlvs_unrecognized = self.tlvs_unrecognized.saturating_add(o.tlvs_unrecognized);
        self.tlvs_discarded = self.tlvs_discarded.saturating_add(o.tlvs_discarded);
        self.ageouts = self.ageouts.saturating_add(o.ageouts);
        self.too_many_neighbors = self.too_many_neighbors.saturating_add(o.too_many_neighbors);
    }
}

/// An organisationally specific TLV the agent does not decode, kept raw.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RawOrgTlv {
    /// OUI as `xx-xx-xx`.
    pub oui: String,
    /// Subtype.
    pub subtype: u8,
    /// Information string, lower-case hex.
    pub info_hex: String,
}

/// A TLV of unknown type, kept raw.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RawTlv {
    /// TLV type.
    pub tlv_type: u8,
    /// Value, lower-case hex.
    pub value_hex: String,
}

/// One neighbour as learnt from its last LLDPDU.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct NeighborSnapshot {
    /// Chassis ID subtype (4 = MAC).
    pub chassis_id_subtype: u8,
    /// Chassis ID: a MAC as `xx:xx:xx:xx:xx:xx`, else the text.
    pub chassis_id: String,
    /// Port ID subtype (5 = interface name, 3 = MAC).
    pub port_id_subtype: u8,
    /// Port ID: a MAC as `xx:xx:…`, else the text.
    pub port_id: String,
    /// Source MAC of the last frame.
    pub source_mac: String,
    /// Advertised TTL (hold time), seconds.
    pub ttl: u16,
    /// Seconds until the entry ages out, from the snapshot's time.
    pub time_remaining_s: u64,
    /// Port description.
    pub port_description: Option<String>,
    /// System name.
    pub system_name: Option<String>,
    /// System description.
    pub system_description: Option<String>,
    /// Supported capability bits (bridge 0x04, router 0x10, …).
    pub capabilities_supported: Option<u16>,
    /// Enabled capability bits.
    pub capabilities_enabled: Option<u16>,
    /// Management addresses as text (IPv4, IPv6, MAC, else hex).
    pub management_addresses: Vec<String>,
    /// 802.3 maximum frame size.
    pub max_frame_size: Option<u16>,
    /// IEEE DCBX TLVs, decoded.
    pub dcbx_ieee: Option<PeerDcbx>,
    /// CEE DCBX TLV, decoded.
    pub dcbx_cee: Option<PeerDcbx>,
    /// Other organisationally specific TLVs.
    pub org_tlvs: Vec<RawOrgTlv>,
    /// TLVs of unknown type.
    pub unknown_tlvs: Vec<RawTlv>,
}

impl NeighborSnapshot {
    /// The name NX-OS shows in the Device ID column: the system name, else the chassis ID.
    pub fn device_id(&self) -> &str {
        self.system_name.as_deref().unwrap_or(&self.chassis_id)
    }
}

/// A port's DCBX state.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct DcbxSnapshot {
    /// Configured dialect (`lldp dcbx version`).
    pub mode: DcbxMode,
    /// Dialect being sent (`None` when no DCBX TLVs are sent).
    pub in_use: Option<DcbxDialect>,
    /// What the port advertises (`None` when the port has no PFC configured or dcbxp is off).
    pub local: Option<LocalDcbx>,
    /// The PFC set configured on the port (in force without a peer unless `pfc_auto`).
    pub configured_pfc: u8,
    /// `priority-flow-control mode auto`: PFC is in force only once a DCBX peer agrees.
    #[serde(default)]
    pub pfc_auto: bool,
    /// The peer's DCBX in the dialect in use, if heard.
    pub peer: Option<PeerDcbx>,
    /// The peer's chassis ID, when a peer is heard.
    pub peer_chassis_id: Option<String>,
    /// The state in force.
    pub operational: Operational,
    /// CEE handshake numbers this port sends (CEE in use only).
    pub cee_local: Option<super::dcbx::CeeSeq>,
}

/// One port's LLDP state.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PortSnapshot {
    /// Interface name, e.g. `Ethernet1/1`.
    pub name: String,
    /// Port index in the switch.
    pub index: usize,
    /// `lldp transmit` and the port administratively up.
    pub transmit: bool,
    /// `lldp receive`.
    pub receive: bool,
    /// Link state as last reported.
    pub link_up: bool,
    /// Whether LLDPDUs are being sent right now.
    pub transmitting: bool,
    /// Neighbours, in the order first heard.
    pub neighbors: Vec<NeighborSnapshot>,
    /// DCBX state.
    pub dcbx: DcbxSnapshot,
    /// Counters.
    pub counters: LldpCounters,
}

/// Everything `show lldp …` renders, as the agent saw it at `now_ns`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LldpSnapshot {
    /// The switch's hostname (system name advertised).
    pub hostname: String,
    /// Chassis ID advertised (the base MAC), `xx:xx:xx:xx:xx:xx`.
    pub chassis_id: String,
    /// `feature lldp`.
    pub enabled: bool,
    /// `lldp timer`, seconds.
    pub timer_s: u16,
    /// `lldp holdtime`, seconds.
    pub holdtime_s: u16,
    /// `lldp reinit`, seconds.
    pub reinit_s: u16,
    /// The agent's time when the snapshot was taken.
    pub now_ns: u64,
    /// Ports in switch order.
    pub ports: Vec<PortSnapshot>,
    /// Sum of the ports' counters (and of ports since removed).
    pub totals: LldpCounters,
}
