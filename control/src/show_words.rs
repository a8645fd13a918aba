//! The words after `railyard show …` that name what to show (`show vlan
//! brief`, `show ip route`, …), as the command line parses them.

use clap::ValueEnum;

/// `show vlan …`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum BriefWhat {
    /// The VLAN table alone.
    Brief,
}

/// `show port-channel …`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SummaryWhat {
    /// One line per port-channel.
    Summary,
}

/// `show lacp …`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum NeighborWhat {
    /// The partners of the members.
    Neighbor,
}

/// `show bfd …`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum BfdWhat {
    /// The BFD sessions.
    Neighbors,
}

/// What `show ip` shows.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum IpWhat {
    /// `show ip route`: the IPv4 routing table.
    Route,
    /// `show ip load-sharing`: the ECMP hash in force and a DLB summary.
    LoadSharing,
}

/// What `show ipv6` shows.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Ipv6What {
    /// `show ipv6 route`: the IPv6 routing table.
    Route,
}

/// The word after `show hardware`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum HardwareWhat {
    /// `show hardware profile …`.
    Profile,
}

/// The word after `show hardware profile`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProfileWhat {
    /// `show hardware profile dlb`: dynamic load balancing.
    Dlb,
}

/// `show monitor …`.
#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SessionWhat {
    /// The monitor (SPAN) sessions.
    Session,
}
