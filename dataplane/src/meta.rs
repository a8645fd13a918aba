//! Per-packet metadata: what the parser learned, and what later stages decided.
//!
//! Stages read header offsets from here instead of re-parsing, and record their
//! decisions (qos-group, egress port, next hop) for the stages after them.

/// What kind of frame the parser found, which decides where it goes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FrameKind {
    /// Not parsed yet.
    #[default]
    Unparsed,
    /// IPv4, routed or addressed to the switch.
    Ipv4,
    /// IPv6, routed or addressed to the switch.
    Ipv6,
    /// ARP, answered or learned from by the switch.
    Arp,
    /// MAC control (0x8808): PFC or 802.3x PAUSE, consumed by the port.
    MacControl,
    /// LLDP (0x88CC), punted to the LLDP agent.
    Lldp,
    /// Any other EtherType, which a routed port drops.
    Other(u16),
}

/// RoCEv2 fields from the InfiniBand Base Transport Header (UDP port 4791).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Roce {
    /// BTH opcode (e.g. 0x0A RC RDMA WRITE Only, 0x81 CNP).
    pub opcode: u8,
    /// Destination queue pair (24 bits).
    pub dest_qp: u32,
    /// Packet sequence number (24 bits).
    pub psn: u32,
}

/// Metadata attached to every packet in flight.
///
/// `repr(C)` and this field order put what the egress side reads first (the
/// decisions, and what ECN marking needs), so that with the buffer header
/// before it they share the buffer's first cache line: a packet handed to
/// another worker costs that worker one line of state, not two. The parser's
/// other findings follow. `packet.rs` tests the layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(C)]
pub struct Meta {
    /// Frame kind from the EtherType (after any 802.1Q tag).
    pub kind: FrameKind,
    /// Egress interface index, set by forwarding.
    pub out_port: u16,
    /// Offset of the network header (14, or 18 when tagged).
    pub l3_offset: u16,
    /// Egress qos-group (0–7), set by classification.
    pub qos_group: u8,
    /// Lossless on its ingress port: counted in the ingress port's priority
    /// group `pfc_priority` until it leaves (see [`crate::pfc`]).
    pub lossless: bool,
    /// The PFC priority (and ingress priority group) of the frame: its 802.1Q
    /// PCP when it arrived tagged, otherwise its qos-group (DSCP-based PFC).
    pub pfc_priority: u8,
    /// ECN field (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE).
    pub ecn: u8,
    /// Length of the IP packet from its own length field (header included); the
    /// frame may be longer (Ethernet padding) but never shorter.
    pub l3_len: u16,
    /// 802.1Q TCI when the frame was tagged (PCP in the top 3 bits).
    pub vlan_tci: Option<u16>,
    /// Offset of the transport header (IPv4 after options; IPv6 after the fixed header).
    pub l4_offset: u16,
    /// Offset of the transport payload.
    pub payload_offset: u16,
    /// IPv4 protocol or IPv6 next header.
    pub ip_proto: u8,
    /// Differentiated services code point (0–63).
    pub dscp: u8,
    /// IPv4 TTL or IPv6 hop limit as received.
    pub ttl: u8,
    /// True for IPv4 fragments (non-first fragments carry no ports).
    pub fragment: bool,
    /// Transport source port (UDP/TCP), 0 otherwise.
    pub src_port: u16,
    /// Transport destination port (UDP/TCP), 0 otherwise.
    pub dst_port: u16,
    /// ECMP flow hash, set by forwarding for packets routed over a group
    /// (see [`crate::balance::hash`]); 0 otherwise.
    pub hash: u32,
    /// RoCEv2 BTH fields when the frame is RoCEv2.
    pub roce: Option<Roce>,
}

impl Meta {
    /// The 802.1p priority of a tagged frame.
    #[inline]
    pub fn pcp(&self) -> Option<u8> {
        self.vlan_tci.map(|tci| (tci >> 13) as u8)
    }
}

/// The `qos_group` of frames the switch itself originates (ARP requests,
/// neighbour solicitations) while they cross to the worker owning their
/// egress port; they are sent ahead of the egress queues.
pub const QOS_GROUP_CONTROL: u8 = 0xFF;
