//! Ingress, per packet of a received burst: count, parse, and send each
//! frame where its kind goes — routed IP to [`route`](super::route), ARP
//! and the switch's own IP to [`local`](super::local), PFC and PAUSE to
//! [`pfc_rx`](super::pfc_rx), LLDP to the control plane's punt ring.

use super::span::copy_for_sessions;
use super::{Switch, MAX_RX_HELD};
use crate::capture::Direction;
use crate::clock::Nanos;
use crate::counters::DropReason;
use crate::meta::FrameKind;
use crate::packet::{Burst, PacketBuf, BURST_SIZE};
use crate::parse::parse;

/// EtherType of IEEE 802.3 Slow Protocols: LACP and the marker protocol.
const SLOW_PROTOCOLS: u16 = 0x8809;

impl Switch {
    /// One receive burst from each of this worker's ports, unless a peer
    /// worker's hand-off ring is over half full: then the frames stay in the
    /// ports' receive rings (where the backend counts any overflow, as a NIC
    /// does) for up to [`MAX_RX_HELD`] rounds. Returns the frames taken, or
    /// 1 while holding, since waiting on a peer is not idleness.
    pub(super) fn rx_ports(&mut self, now: Nanos) -> usize {
        if self.handoff_congested() && self.rx_held < MAX_RX_HELD {
            self.rx_held += 1;
            return 1;
        }
        self.rx_held = 0;
        let mut work = 0;
        if self.rx_hints_on {
            // Hinted ports only, each until nothing more is due.
            let mut hints = std::mem::take(&mut self.rx_hints);
            for &p in &hints {
                let p = usize::from(p);
                self.rx_hinted[p] = false;
                if self.ports[p].owned {
                    loop {
                        let n = self.rx_port(p, now);
                        work += n;
                        if n < BURST_SIZE {
                            break;
                        }
                    }
                }
            }
            hints.clear();
            self.rx_hints = hints;
            return work;
        }
        for p in 0..self.ports.len() {
            if self.ports[p].owned {
                work += self.rx_port(p, now);
            }
        }
        work
    }

    fn rx_port(&mut self, p: usize, now: Nanos) -> usize {
        // A fresh ArrayVec costs nothing to make; moving a full one would
        // copy every packet handle, so the burst lives on this frame.
        let mut burst = Burst::new();
        let n = match self.ports[p].backend.as_mut() {
            Some(b) if b.link_up() => b.rx_burst(&self.pool, &mut burst, now),
            _ => 0,
        };
        if let Some(span) = &self.span {
            copy_for_sessions(span, &self.pool, p, Direction::Rx, &burst, self.now);
        }
        for mut pkt in burst.drain(..) {
            pkt.in_port = p as u16;
            self.ingress(pkt, p, now);
        }
        n
    }

    fn ingress(&mut self, mut pkt: PacketBuf, p: usize, now: Nanos) {
        let slot = &mut self.ports[p];
        slot.counters.rx_packets += 1;
        slot.counters.rx_bytes += pkt.len() as u64;
        if !slot.model.admin_up {
            return self.drop_packet(pkt, p, DropReason::InterfaceDown);
        }
        let (frame, meta) = pkt.data_and_meta_mut();
        if parse(frame, meta).is_err() {
            slot.counters.rx_malformed += 1;
            return self.drop_packet(pkt, p, DropReason::Malformed);
        }
        if slot.model.member_of.is_some() || slot.model.l2.is_some() {
            return self.ingress_l2(pkt, p, now);
        }
        match pkt.meta.kind {
            FrameKind::Ipv4 | FrameKind::Ipv6 => self.route(pkt, p, p, now),
            FrameKind::Arp => self.local_arp(pkt, p, p, now),
            FrameKind::MacControl => self.mac_control(&pkt, p, now),
            FrameKind::Lldp => self.punt(pkt, p),
            FrameKind::Other(_) | FrameKind::Unparsed => {
                self.drop_packet(pkt, p, DropReason::UnknownEthertype)
            }
        }
    }

    /// [`ingress`](Self::ingress) on a switchport or a port-channel
    /// member, out of line so that a routed port's path stays as small as
    /// it was. A member works for its port-channel, except for what each
    /// link speaks for itself (pauses, LLDP, LACP).
    #[inline(never)]
    fn ingress_l2(&mut self, pkt: PacketBuf, p: usize, now: Nanos) {
        let e = self.ports[p].model.member_of.map_or(p, usize::from);
        match pkt.meta.kind {
            FrameKind::MacControl => self.mac_control(&pkt, p, now),
            FrameKind::Lldp => self.punt(pkt, p),
            FrameKind::Other(SLOW_PROTOCOLS) if e != p => self.punt(pkt, p),
            _ if self.ports[e].model.l2.is_some() => self.bridge(pkt, p, e, now),
            FrameKind::Ipv4 | FrameKind::Ipv6 => self.route(pkt, p, e, now),
            FrameKind::Arp => self.local_arp(pkt, p, e, now),
            FrameKind::Other(_) | FrameKind::Unparsed => {
                self.drop_packet(pkt, p, DropReason::UnknownEthertype)
            }
        }
    }

    fn punt(&mut self, pkt: PacketBuf, p: usize) {
        match &self.punt {
            Some(ring) => match ring.push(pkt) {
                Ok(()) => self.ports[p].counters.punted += 1,
                Err(pkt) => self.drop_packet(pkt, p, DropReason::PuntQueueFull),
            },
            None => self.drop_packet(pkt, p, DropReason::LocalUnhandled),
        }
    }

    pub(super) fn count_drop(&mut self, p: usize, reason: DropReason) {
        if let Some(slot) = self.ports.get_mut(p) {
            slot.counters.drop(reason);
        }
    }

    /// Drops `pkt`, counted for `reason` on port `p`: the one way a packet
    /// the pipeline holds is dropped, so that an armed drop capture sees
    /// each one. Unarmed, this is [`count_drop`](Self::count_drop) and one
    /// test.
    #[inline(always)]
    pub(super) fn drop_packet(&mut self, pkt: PacketBuf, p: usize, reason: DropReason) {
        self.drop_seen(&pkt, p, reason);
    }

    /// [`drop_packet`](Self::drop_packet) for a stage that borrows the
    /// packet (its owner frees it).
    #[inline(always)]
    pub(super) fn drop_seen(&mut self, pkt: &PacketBuf, p: usize, reason: DropReason) {
        self.count_drop(p, reason);
        if self.drop_tap.is_some() {
            self.tap_drop(pkt, p, reason);
        }
    }

    /// Copies a dropped packet into the armed drop capture, inbound on the
    /// port it came in on or outbound on the egress port that dropped it.
    #[cold]
    #[inline(never)]
    pub(super) fn tap_drop(&self, pkt: &PacketBuf, p: usize, reason: DropReason) {
        if let Some(ring) = &self.drop_tap {
            let dir = if reason.on_egress() {
                Direction::Tx
            } else {
                Direction::Rx
            };
            ring.record(p as u16, dir, Some(reason), self.now, pkt.data());
        }
    }
}
