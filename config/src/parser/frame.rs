//! The sections the parser can be in: a frame per open section, its kind
//! (the top level, interfaces of each kind, a modelled section, or one
//! being skipped), and what each kind accepts and how strictly.

use super::table::Spec;
use super::{bgp, global, interface, l2, monitor, policy, qos, top};

/// An open section.
#[derive(Debug)]
pub(super) struct Frame {
    pub(super) kind: FrameKind,
    /// Indentation of the section's header line.
    pub(super) indent: usize,
    /// Whether a sub-command has been seen indented deeper than the header.
    pub(super) body_indented: bool,
}

/// The modelled sections besides `interface`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Section {
    /// `class-map type qos NAME`.
    ClassMap,
    /// `class-map type queuing NAME` (older Nexus 3000/5000 dialect).
    QueuingClassMap,
    /// `class-map type network-qos NAME` (older Nexus 3000/5000 dialect).
    NqClassMap,
    /// `ip access-list NAME`.
    AccessList,
    /// `policy-map type qos NAME`.
    QosPolicy,
    /// `class NAME` under a qos policy.
    QosClass,
    /// `policy-map type queuing NAME`.
    QueuingPolicy,
    /// `class type queuing NAME` under a queuing policy.
    QueuingClass,
    /// `policy-map type network-qos NAME`.
    NqPolicy,
    /// `class type network-qos NAME` under a network-qos policy.
    NqClass,
    /// `system qos`.
    SystemQos,
    /// `hardware profile dlb`.
    Dlb,
    /// `static-pinning` under `hardware profile dlb`.
    DlbPinning,
    /// `router bgp ASN`.
    RouterBgp,
    /// `address-family ipv4|ipv6 unicast` under `router bgp` (index 0: IPv4, 1: IPv6).
    RouterAf,
    /// `neighbor ADDR` (index into the neighbors).
    Neighbor,
    /// `template peer NAME` (index into the templates).
    Template,
    /// `address-family` under a neighbor or template (peer index, and the
    /// family and whether the peer is a template, encoded).
    PeerAf,
    /// `route-map NAME permit|deny SEQ` (index into the entries).
    RouteMap,
    /// `vlan N[,…]` (the VLANs are in [`Builder::open_vlans`]).
    Vlan,
    /// `monitor session N` (the first index is the session number).
    Monitor,
}

impl Section {
    /// The commands the section accepts.
    pub(super) fn table(self) -> &'static [Spec] {
        match self {
            Section::ClassMap => qos::CLASS_MAP,
            Section::QueuingClassMap | Section::NqClassMap => qos::GROUP_CLASS_MAP,
            Section::AccessList => qos::ACCESS_LIST,
            Section::QosPolicy => qos::QOS_POLICY,
            Section::QosClass => qos::QOS_CLASS,
            Section::QueuingPolicy => qos::QUEUING_POLICY,
            Section::QueuingClass => qos::QUEUING_CLASS,
            Section::NqPolicy => qos::NQ_POLICY,
            Section::NqClass => qos::NQ_CLASS,
            Section::SystemQos => qos::SYSTEM_QOS,
            Section::Dlb => global::DLB,
            Section::DlbPinning => global::DLB_PINNING,
            Section::RouterBgp => bgp::ROUTER,
            Section::RouterAf => bgp::ROUTER_AF,
            Section::Neighbor | Section::Template => bgp::PEER,
            Section::PeerAf => bgp::PEER_AF,
            Section::RouteMap => policy::ROUTE_MAP_ENTRY,
            Section::Vlan => l2::VLAN,
            Section::Monitor => monitor::MONITOR,
        }
    }

    /// The section's name in messages.
    pub(super) fn context(self) -> &'static str {
        match self {
            Section::ClassMap | Section::QueuingClassMap | Section::NqClassMap => "class-map",
            Section::AccessList => "ip access-list",
            Section::QosPolicy | Section::QueuingPolicy | Section::NqPolicy => "policy-map",
            Section::QosClass | Section::QueuingClass | Section::NqClass => "policy-map class",
            Section::SystemQos => "system qos",
            Section::Dlb => "hardware profile dlb",
            Section::DlbPinning => "static-pinning",
            Section::RouterBgp => "router bgp",
            Section::RouterAf => "router bgp address-family",
            Section::Neighbor => "neighbor",
            Section::Template => "template peer",
            Section::PeerAf => "neighbor address-family",
            Section::RouteMap => "route-map",
            Section::Vlan => "vlan",
            Section::Monitor => "monitor session",
        }
    }

    /// Whether a command the section does not model is skipped with a
    /// warning rather than rejected: NX-OS's routing language is far larger
    /// than the subset railyard translates, and a pasted running-config
    /// must still load.
    pub(super) fn is_lenient(self) -> bool {
        matches!(
            self,
            Section::RouterBgp
                | Section::RouterAf
                | Section::Neighbor
                | Section::Template
                | Section::PeerAf
                | Section::RouteMap
        )
    }
}

/// The kinds of section.
#[derive(Debug)]
pub(super) enum FrameKind {
    /// The top level; always at the bottom of the stack.
    Top,
    /// `interface ...` naming modelled Ethernet ports (indices into `Config::interfaces`).
    Interface(Vec<usize>),
    /// `interface VlanN` (indices into `Config::svis`).
    Svi(Vec<usize>),
    /// `interface port-channelN` (indices into `Config::port_channels`).
    PortChannel(Vec<usize>),
    /// `interface ...` naming unmodelled interfaces: interface sub-commands are swallowed.
    SkipInterface,
    /// An unknown or unmodelled top-level command: its deeper-indented body is swallowed.
    Skip,
    /// A modelled section; the indices locate its item (a policy and a class within it).
    Section(Section, usize, usize),
    /// A section whose header was in error: its commands are swallowed.
    Broken(Section),
}

impl FrameKind {
    /// The commands this section accepts.
    pub(super) fn table(&self) -> &'static [Spec] {
        match self {
            FrameKind::Top => top::TABLE,
            FrameKind::Interface(_) | FrameKind::SkipInterface => interface::TABLE,
            FrameKind::Svi(_) => interface::SVI_TABLE,
            FrameKind::PortChannel(_) => interface::PORT_CHANNEL_TABLE,
            FrameKind::Skip => &[],
            FrameKind::Section(s, ..) | FrameKind::Broken(s) => s.table(),
        }
    }

    /// The section's name in messages ("" for the top level).
    pub(super) fn context(&self) -> &'static str {
        match self {
            FrameKind::Top | FrameKind::Skip => "",
            FrameKind::Interface(_) | FrameKind::SkipInterface => "interface",
            FrameKind::Svi(_) => "interface Vlan",
            FrameKind::PortChannel(_) => "interface port-channel",
            FrameKind::Section(s, ..) | FrameKind::Broken(s) => s.context(),
        }
    }

    /// Whether the section's content is discarded.
    pub(super) fn is_skipped(&self) -> bool {
        matches!(
            self,
            FrameKind::Skip | FrameKind::SkipInterface | FrameKind::Broken(_)
        )
    }

    /// Whether the section skips commands it does not model (see [`Section::is_lenient`]).
    pub(super) fn is_lenient(&self) -> bool {
        matches!(self, FrameKind::Section(s, ..) | FrameKind::Broken(s) if s.is_lenient())
    }

    /// Whether unknown lines inside the section are errors (a typo in it).
    pub(super) fn is_modelled(&self) -> bool {
        matches!(
            self,
            FrameKind::Interface(_)
                | FrameKind::Svi(_)
                | FrameKind::PortChannel(_)
                | FrameKind::Section(..)
        ) || self.checks_body()
    }

    /// Whether the commands of a section whose header failed are still
    /// checked: they are, in every section, so one pass shows every error;
    /// their handlers report syntax errors but change nothing, finding no
    /// open section to write to. (`hardware profile dlb` always opens its
    /// section, even with an error on its line.)
    pub(super) fn checks_body(&self) -> bool {
        matches!(self, FrameKind::Broken(_))
    }
}
