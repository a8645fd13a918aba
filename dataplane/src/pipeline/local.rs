//! The switch's own host: ARP and ICMP/ND answers for its addresses, and
//! neighbour resolution for next hops (requests, retries, learning, and
//! releasing the packets parked on an answer).

use std::net::IpAddr;

use super::{NeighborEvent, Switch};
use crate::clock::Nanos;
use crate::counters::DropReason;
use crate::host;
use crate::meta::QOS_GROUP_CONTROL;
use crate::model::PortId;
use crate::packet::PacketBuf;
use crate::wire::MacAddr;

/// How often timers (neighbour retries) run, at most.
pub(super) const TICK_INTERVAL: Nanos = 10_000_000;

impl Switch {
    /// ARP received on physical port `p` for Layer-3 interface `l3` (`p`,
    /// its port-channel or an SVI), whose addresses answer.
    pub(super) fn local_arp(&mut self, mut pkt: PacketBuf, p: usize, l3: usize, now: Nanos) {
        let outcome = host::handle_arp(&mut pkt, &self.ports[l3].model);
        if let Some((ip, mac)) = outcome.learned {
            self.learn(l3 as PortId, IpAddr::V4(ip), mac, now, true);
        }
        if outcome.reply {
            self.ports[p].counters.punted += 1;
            self.send_ctrl(l3, pkt);
        } else if outcome.learned.is_some() && self.mirror.is_some() {
            // An answer to the switch: the kernel behind the mirror asked
            // (railyard answers requests itself), so its table learns too.
            self.up_the_mirror(pkt, p);
        } else {
            self.ports[p].counters.punted += 1;
        }
    }

    /// IP for the switch (or IPv6 multicast), received on physical port
    /// `p` for Layer-3 interface `l3`.
    pub(super) fn local_ip(&mut self, mut pkt: PacketBuf, p: usize, l3: usize, now: Nanos) {
        let outcome = host::handle_ip(&mut pkt, &self.ports[l3].model);
        if let Some((ip, mac)) = outcome.learned {
            self.learn(l3 as PortId, ip, mac, now, true);
        }
        if outcome.reply {
            self.ports[p].counters.punted += 1;
            self.send_ctrl(l3, pkt);
        } else if outcome.consumed && (outcome.learned.is_none() || self.mirror.is_none()) {
            self.ports[p].counters.punted += 1;
        } else if self.mirror.is_some() {
            // What railyard does not answer itself (TCP and UDP to its
            // addresses: BGP, BFD, SSH), and advertisements the kernel's
            // neighbour table must learn from, go up the port's mirror.
            self.up_the_mirror(pkt, p);
        } else {
            self.drop_packet(pkt, p, DropReason::LocalUnhandled);
        }
    }

    fn up_the_mirror(&mut self, pkt: PacketBuf, p: usize) {
        let Some(ring) = &self.mirror else {
            return self.drop_packet(pkt, p, DropReason::LocalUnhandled);
        };
        match ring.push(pkt) {
            Ok(()) => {
                let c = &mut self.ports[p].counters;
                c.punted += 1;
                c.mirrored += 1;
            }
            Err(pkt) => self.drop_packet(pkt, p, DropReason::PuntQueueFull),
        }
    }

    /// Sends an answer the switch built out of interface `p`; through the
    /// MAC table or a member link when `p` is logical.
    fn send_ctrl(&mut self, p: usize, mut pkt: PacketBuf) {
        if self.ports[p].model.logical.is_some() {
            pkt.meta.out_port = p as PortId;
            pkt.meta.qos_group = QOS_GROUP_CONTROL;
            pkt.meta.lossless = false;
            if let Err(pkt) = self.send_logical(pkt) {
                drop(pkt);
            }
            return;
        }
        self.busy.mark(p);
        if let Err(pkt) = self.ports[p].ctrl_tx.try_push(pkt) {
            self.drop_packet(pkt.element(), p, DropReason::TxError);
        }
    }

    pub(super) fn send_resolution(&mut self, port: PortId, addr: IpAddr) {
        let Some(mut pkt) = self.pool.alloc() else {
            self.count_drop(port as usize, DropReason::NoBuffer);
            return;
        };
        let ifc = &self.ports[port as usize].model;
        if !host::build_resolution(&mut pkt, ifc, addr) {
            return;
        }
        pkt.meta.out_port = port;
        pkt.meta.qos_group = QOS_GROUP_CONTROL;
        self.send_to_egress(pkt);
    }

    pub(super) fn learn(
        &mut self,
        port: PortId,
        addr: IpAddr,
        mac: MacAddr,
        now: Nanos,
        tell_others: bool,
    ) {
        let mut released = std::mem::take(&mut self.released);
        let changed = self.neighbors.learn(port, addr, mac, now, &mut released);
        for pkt in released.drain(..) {
            self.forward(pkt, mac);
        }
        self.released = released;
        if changed && tell_others {
            if let Some(links) = &self.links {
                for (w, ring) in links.all_events.iter().enumerate() {
                    if w != links.id {
                        // A full event ring only delays convergence: the other
                        // worker resolves the address itself on its next miss.
                        let _ = ring.push(NeighborEvent { port, addr, mac });
                    }
                }
            }
        }
    }

    pub(super) fn tick(&mut self, now: Nanos) {
        self.macs.sweep(now);
        if !self.neighbors.resolving() {
            return;
        }
        let mut out = std::mem::take(&mut self.tick_out);
        self.neighbors.tick(now, &mut out);
        for (port, addr) in out.requests.drain(..) {
            self.send_resolution(port, addr);
        }
        for pkt in out.expired.drain(..) {
            let p = pkt.in_port as usize;
            self.drop_packet(pkt, p, DropReason::NeighborUnresolved);
        }
        self.tick_out = out;
    }
}
