//! Routing, per packet: longest-prefix match, the ECMP/DLB member choice,
//! and the checks a router makes before forwarding (TTL, MTU, egress link).
//! Then [`classify`](super::classify), and the neighbour lookup that either
//! [`rewrite`](super::rewrite)s the packet or parks it until the next hop
//! resolves.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use super::Switch;
use crate::clock::Nanos;
use crate::counters::DropReason;
use crate::fib::RouteAction;
use crate::meta::FrameKind;
use crate::model::PortId;
use crate::neighbor::Park;
use crate::packet::PacketBuf;
use crate::wire::MacAddr;

/// A route a worker sent a packet toward: egress port and the address to resolve.
#[derive(Clone, Copy)]
struct Hop {
    port: PortId,
    addr: IpAddr,
}

impl Switch {
    /// Routes `pkt`, received on physical port `p`, which arrived on
    /// Layer-3 interface `ifc` (`p` itself, its port-channel, or an SVI).
    /// Inlined at every call: with three callers (routed ports, switchports
    /// and port-channel members) the compiler would otherwise call it, 28
    /// instructions a packet more on the routed path.
    #[inline(always)]
    pub(super) fn route(&mut self, mut pkt: PacketBuf, p: usize, ifc: usize, now: Nanos) {
        let dst_mac = MacAddr::from_bytes(pkt.data());
        let l3 = pkt.meta.l3_offset as usize;
        // IPv4 looks up its own table directly, without `IpAddr`'s dispatch;
        // the lookup changes nothing, so the drops below may follow it.
        let (dst, multicast, action) = if pkt.meta.kind == FrameKind::Ipv4 {
            let b = &pkt.data()[l3 + 16..l3 + 20];
            let a = Ipv4Addr::new(b[0], b[1], b[2], b[3]);
            let multicast = a.is_multicast() || a.is_broadcast();
            (IpAddr::V4(a), multicast, self.fib.lookup_v4(a))
        } else {
            let mut o = [0u8; 16];
            o.copy_from_slice(&pkt.data()[l3 + 24..l3 + 40]);
            let a = IpAddr::V6(Ipv6Addr::from(o));
            (a, a.is_multicast(), self.fib.lookup(a))
        };
        if multicast {
            // IPv6 multicast carries neighbour discovery for the switch.
            if pkt.meta.kind == FrameKind::Ipv6 {
                return self.local_ip(pkt, p, ifc, now);
            }
            return self.drop_packet(pkt, p, DropReason::NotRoutable);
        }
        if dst_mac != self.ports[ifc].model.mac {
            return self.drop_packet(pkt, p, DropReason::NotOurMac);
        }
        let hop = match action {
            None => return self.drop_packet(pkt, p, DropReason::NoRoute),
            Some(RouteAction::Discard) => return self.drop_packet(pkt, p, DropReason::NullRoute),
            Some(RouteAction::Local(_)) => return self.local_ip(pkt, p, ifc, now),
            Some(RouteAction::Connected(port)) => Hop {
                port: *port,
                addr: dst,
            },
            Some(RouteAction::Forward(group)) => {
                let hash = self.balancer.flow_hash(pkt.data(), &pkt.meta);
                pkt.meta.hash = hash;
                let up = &self.port_up;
                let usable = |port: PortId| up.get(usize::from(port)).copied().unwrap_or(false);
                let Some(choice) =
                    self.balancer
                        .choose(group, hash, p as PortId, pkt.len(), now, usable)
                else {
                    return self.drop_packet(pkt, p, DropReason::InterfaceDown);
                };
                let h = group.hops()[choice.member];
                Hop {
                    port: h.port,
                    addr: h.gateway.unwrap_or(dst),
                }
            }
        };
        if pkt.meta.ttl <= 1 {
            return self.drop_packet(pkt, p, DropReason::TtlExpired);
        }
        let out = hop.port as usize;
        let Some(egress) = self.ports.get(out) else {
            return self.drop_packet(pkt, p, DropReason::NoRoute);
        };
        if u32::from(pkt.meta.l3_len) > u32::from(egress.model.mtu) {
            return self.drop_packet(pkt, p, DropReason::MtuExceeded);
        }
        if !self.port_up[out] {
            return self.drop_packet(pkt, p, DropReason::InterfaceDown);
        }
        pkt.meta.out_port = hop.port;
        if self.classify(&mut pkt, p) && !self.watchdog_forwards(&pkt, p) {
            return self.drop_packet(pkt, p, DropReason::PfcWatchdogIngress);
        }
        match self.neighbors.lookup(hop.port, hop.addr) {
            Some(mac) => self.forward(pkt, mac),
            None => self.park(pkt, hop, now),
        }
    }

    fn park(&mut self, pkt: PacketBuf, hop: Hop, now: Nanos) {
        let in_port = pkt.in_port as usize;
        match self.neighbors.park(hop.port, hop.addr, pkt, now) {
            Park::SendRequest => self.send_resolution(hop.port, hop.addr),
            Park::Waiting => {}
            Park::Full(pkt) => match self.neighbors.lookup(hop.port, hop.addr) {
                Some(mac) => self.forward(pkt, mac),
                None => self.drop_packet(pkt, in_port, DropReason::NeighborQueueFull),
            },
        }
    }
}
