//! Bridging, per packet, for frames that arrive on a switchport: the
//! frame's VLAN (its tag, or the port's untagged VLAN), learning its source
//! in the [`MacTable`], then one of: routing it (addressed to the VLAN's
//! SVI), sending it to the port its destination was learned on, or
//! flooding it to the VLAN's other ports (broadcast, multicast, unknown
//! unicast; ARP and IPv6 multicast also reach the SVI).
//!
//! And, per packet, the last step before egress for anything headed to a
//! logical interface ([`send_logical`](Switch::send_logical)): a packet
//! routed to an SVI goes where the MAC table says in its VLAN, one for a
//! port-channel to a member chosen by flow hash, so that one flow keeps one
//! link and a member going down moves only its flows. The frame's 802.1Q
//! tag is then made right for the port that sends it.
//!
//! Classification, lossless admission and egress queues are the same
//! stages routed packets go through.

use super::Switch;
use crate::clock::Nanos;
use crate::counters::DropReason;
use crate::mac_table::{Learned, MacTable};
use crate::meta::FrameKind;
use crate::model::{Logical, PortId, SwitchModel};
use crate::packet::PacketBuf;
use crate::wire::MacAddr;

/// No SVI in a VLAN (see [`L2Tables::svi`]).
const NO_SVI: PortId = PortId::MAX;

/// The VLANs' ports and SVIs, built from the model.
pub(super) struct L2Tables {
    /// Per VLAN: the switchports (and switched port-channels) carrying it.
    pub(super) members: Vec<Vec<PortId>>,
    /// Per VLAN: its SVI's port number, or [`NO_SVI`].
    pub(super) svi: Box<[PortId]>,
    /// Whether any interface is logical (an SVI or a port-channel).
    pub(super) logical: bool,
}

impl L2Tables {
    pub(super) fn build(model: &SwitchModel) -> Self {
        let mut members = vec![Vec::new(); 4096];
        let mut svi = vec![NO_SVI; 4096].into_boxed_slice();
        for (i, m) in model.interfaces.iter().enumerate() {
            if let Some(l2) = &m.l2 {
                if m.member_of.is_some() {
                    continue; // its port-channel is the member
                }
                for v in l2.untagged.into_iter().chain(l2.tagged.iter()) {
                    members[usize::from(v)].push(i as PortId);
                }
            }
            if let Some(Logical::Svi { vlan }) = m.logical {
                svi[usize::from(vlan & 0xfff)] = i as PortId;
            }
        }
        let logical = model.interfaces.iter().any(|m| m.logical.is_some());
        L2Tables {
            members,
            svi,
            logical,
        }
    }
}

/// Where a bridged frame goes.
enum Dest {
    Port(PortId),
    Flood,
    Svi(usize),
}

impl Switch {
    /// A frame received on physical port `p`, which belongs to switchport
    /// `e` (`p` itself, or its port-channel).
    pub(super) fn bridge(&mut self, pkt: PacketBuf, p: usize, e: usize, now: Nanos) {
        let Some(l2) = &self.ports[e].model.l2 else {
            return self.drop_packet(pkt, p, DropReason::VlanNotAllowed);
        };
        let vlan = match pkt.meta.vlan_tci.map(|t| t & 0xfff) {
            Some(v) if v != 0 => {
                if !l2.carries(v) {
                    return self.drop_packet(pkt, p, DropReason::VlanNotAllowed);
                }
                v
            }
            // Untagged, or priority-tagged (VID 0).
            _ => match l2.untagged {
                Some(v) => v,
                None => return self.drop_packet(pkt, p, DropReason::VlanNotAllowed),
            },
        };
        let c = &mut self.vlans[usize::from(vlan)];
        c.rx_packets += 1;
        c.rx_bytes += pkt.len() as u64;
        let d = pkt.data();
        let dst = MacAddr::from_bytes(d);
        let src = MacAddr::from_bytes(&d[6..]);
        if src.is_multicast() {
            self.vlans[usize::from(vlan)].dropped += 1;
            self.ports[p].counters.rx_malformed += 1;
            return self.drop_packet(pkt, p, DropReason::Malformed);
        }
        self.learn_mac(vlan, src, e as PortId, now);
        let svi = usize::from(self.l2.svi[usize::from(vlan)]);
        let to_svi = svi != usize::from(NO_SVI);
        let dest = if dst.is_multicast() {
            Dest::Flood
        } else if to_svi && dst == self.ports[svi].model.mac {
            Dest::Svi(svi)
        } else {
            match self.macs.lookup(vlan, dst, now) {
                Some(o) => Dest::Port(o),
                None => Dest::Flood,
            }
        };
        match dest {
            Dest::Svi(svi) => {
                self.vlans[usize::from(vlan)].to_svi += 1;
                self.up_the_svi(pkt, p, svi, now)
            }
            Dest::Port(o) if usize::from(o) == e => {
                self.drop_packet_in(pkt, vlan, p, DropReason::L2Filtered)
            }
            Dest::Port(o) => self.switch_out(pkt, p, vlan, o),
            Dest::Flood => {
                // The SVI hears what a host on the VLAN asks of it.
                let local = to_svi
                    && self.ports[svi].model.admin_up
                    && (pkt.meta.kind == FrameKind::Arp || pkt.meta.kind == FrameKind::Ipv6);
                if local {
                    if let Some(copy) = self.copy(&pkt, p, vlan) {
                        self.vlans[usize::from(vlan)].to_svi += 1;
                        self.up_the_svi(copy, p, svi, now);
                    }
                }
                self.flood(pkt, p, vlan, e as PortId, local);
            }
        }
    }

    /// Learns a source address, and tells the other workers what is new.
    fn learn_mac(&mut self, vlan: u16, mac: MacAddr, port: PortId, now: Nanos) {
        match self.macs.learn(vlan, mac, port, now) {
            Learned::New | Learned::Moved { .. } => {
                if let Some(links) = &self.links {
                    for (w, ring) in links.all_macs.iter().enumerate() {
                        if w != links.id {
                            // A full ring only delays convergence: the
                            // other worker floods until it hears the
                            // address itself.
                            let _ = ring.push(super::MacEvent { vlan, mac, port });
                        }
                    }
                }
            }
            Learned::Known | Learned::Full | Learned::Static => {}
        }
    }

    /// What another worker learned.
    pub(super) fn learned_elsewhere(&mut self, e: super::MacEvent) {
        self.macs.learn(e.vlan, e.mac, e.port, self.now);
    }

    /// A frame for the switch's SVI `svi`: routed, or answered there.
    fn up_the_svi(&mut self, pkt: PacketBuf, p: usize, svi: usize, now: Nanos) {
        if !self.ports[svi].model.admin_up {
            return self.drop_packet(pkt, p, DropReason::InterfaceDown);
        }
        match pkt.meta.kind {
            FrameKind::Ipv4 | FrameKind::Ipv6 => self.route(pkt, p, svi, now),
            FrameKind::Arp => self.local_arp(pkt, p, svi, now),
            _ => self.drop_packet(pkt, p, DropReason::UnknownEthertype),
        }
    }

    /// A copy of `pkt` from the pool (its metadata too), counted on `p`
    /// and in `vlan`; or, without a free buffer, the copy's `no_buffer`
    /// drop.
    fn copy(&mut self, pkt: &PacketBuf, p: usize, vlan: u16) -> Option<PacketBuf> {
        self.ports[p].counters.flood_copies += 1;
        self.vlans[usize::from(vlan)].flood_copies += 1;
        let Some(mut copy) = self.pool.alloc_from(pkt.data()) else {
            self.drop_in(vlan, p, DropReason::NoBuffer);
            return None;
        };
        copy.meta = pkt.meta;
        copy.in_port = pkt.in_port;
        // Only the original holds lossless ingress bytes.
        copy.meta.lossless = false;
        Some(copy)
    }

    /// Counts a drop on port `p` and in `vlan`.
    fn drop_in(&mut self, vlan: u16, p: usize, reason: DropReason) {
        self.vlans[usize::from(vlan)].dropped += 1;
        self.count_drop(p, reason);
    }

    /// Drops `pkt` (see [`drop_packet`](Self::drop_packet)), counted on
    /// port `p` and in `vlan`.
    fn drop_packet_in(&mut self, pkt: PacketBuf, vlan: u16, p: usize, reason: DropReason) {
        self.vlans[usize::from(vlan)].dropped += 1;
        self.drop_packet(pkt, p, reason);
    }

    /// Sends `pkt` to every port of `vlan` but `except`; a frame with no
    /// other port to go to is dropped as `l2_filtered` (unless `heard`: the
    /// SVI took a copy of it).
    fn flood(&mut self, pkt: PacketBuf, p: usize, vlan: u16, except: PortId, heard: bool) {
        let members = std::mem::take(&mut self.l2.members[usize::from(vlan)]);
        let mut targets = members.iter().copied().filter(|&o| o != except);
        let Some(mut last) = targets.next() else {
            self.l2.members[usize::from(vlan)] = members;
            if heard {
                // The SVI's copy stands for it; the original is not sent.
                self.ports[p].counters.flood_copies -= 1;
                self.vlans[usize::from(vlan)].flood_copies -= 1;
                return drop(pkt);
            }
            return self.drop_packet_in(pkt, vlan, p, DropReason::L2Filtered);
        };
        for o in targets {
            if let Some(copy) = self.copy(&pkt, p, vlan) {
                self.switch_out(copy, p, vlan, last);
            }
            last = o;
        }
        self.l2.members[usize::from(vlan)] = members;
        self.switch_out(pkt, p, vlan, last);
    }

    /// Sends a bridged frame toward switchport `o` in `vlan`: classified on
    /// its ingress port `p`, tagged as `o` carries `vlan`, admitted.
    fn switch_out(&mut self, mut pkt: PacketBuf, p: usize, vlan: u16, o: PortId) {
        if self.classify(&mut pkt, p) && !self.watchdog_forwards(&pkt, p) {
            return self.drop_packet_in(pkt, vlan, p, DropReason::PfcWatchdogIngress);
        }
        let Some(phys) = self.physical(&pkt, o) else {
            return self.drop_packet_in(pkt, vlan, p, DropReason::InterfaceDown);
        };
        if !self.port_up[phys] {
            return self.drop_packet_in(pkt, vlan, p, DropReason::InterfaceDown);
        }
        let tagged = self.ports[usize::from(o)]
            .model
            .l2
            .as_ref()
            .is_some_and(|l2| l2.untagged != Some(vlan));
        if !retag(&mut pkt, tagged.then_some(vlan)) {
            return self.drop_packet_in(pkt, vlan, p, DropReason::NoBuffer);
        }
        pkt.meta.out_port = phys as PortId;
        if pkt.meta.lossless && !self.admit_lossless(&pkt) {
            self.vlans[usize::from(vlan)].dropped += 1;
            return;
        }
        self.vlans[usize::from(vlan)].switched += 1;
        self.send_to_egress(pkt);
    }

    /// The physical port that sends for `o`: `o` itself, or the member of
    /// port-channel `o` the packet's flow hashes to among those up.
    fn physical(&self, pkt: &PacketBuf, o: PortId) -> Option<usize> {
        let Some(Logical::PortChannel { members, .. }) = &self.ports[usize::from(o)].model.logical
        else {
            return Some(usize::from(o));
        };
        let up = members.iter().filter(|m| self.port_up[usize::from(**m)]);
        let n = up.clone().count();
        if n == 0 {
            return None;
        }
        let h = self.l2_hash(pkt) as usize;
        up.map(|m| usize::from(*m)).nth(h % n)
    }

    /// The flow hash of the ECMP fields for IP, of the MACs for the rest.
    fn l2_hash(&self, pkt: &PacketBuf) -> u32 {
        match pkt.meta.kind {
            FrameKind::Ipv4 | FrameKind::Ipv6 => self.balancer.flow_hash(pkt.data(), &pkt.meta),
            _ => {
                let d = pkt.data();
                let mut h = 0x811c_9dc5u32;
                for b in &d[..12] {
                    h = (h ^ u32::from(*b)).wrapping_mul(0x0100_0193);
                }
                h
            }
        }
    }

    /// Turns a packet headed for logical interface `out_port` (an SVI or a
    /// port-channel) into one for a physical port and sends it (or counts
    /// its drop); gives the packet back when `out_port` is physical.
    #[inline(never)]
    pub(super) fn send_logical(&mut self, pkt: PacketBuf) -> Result<(), PacketBuf> {
        let out = usize::from(pkt.meta.out_port);
        match &self.ports[out].model.logical {
            None => Err(pkt),
            Some(Logical::PortChannel { .. }) => {
                let in_port = pkt.in_port as usize;
                let Some(phys) = self.physical(&pkt, out as PortId) else {
                    self.drop_packet(pkt, in_port, DropReason::InterfaceDown);
                    return Ok(());
                };
                let mut pkt = pkt;
                pkt.meta.out_port = phys as PortId;
                self.send_to_egress(pkt);
                Ok(())
            }
            Some(Logical::Svi { vlan }) => {
                let vlan = *vlan;
                let in_port = pkt.in_port as usize;
                self.vlans[usize::from(vlan)].routed_in += 1;
                let dst = MacAddr::from_bytes(pkt.data());
                let known = if dst.is_multicast() {
                    None
                } else {
                    self.macs.lookup(vlan, dst, self.now)
                };
                match known {
                    Some(o) => self.switch_out_routed(pkt, in_port, vlan, o),
                    None => {
                        let members = std::mem::take(&mut self.l2.members[usize::from(vlan)]);
                        let mut last = None;
                        for &o in &members {
                            if let Some(prev) = last.replace(o) {
                                if let Some(copy) = self.copy(&pkt, in_port, vlan) {
                                    self.switch_out_routed(copy, in_port, vlan, prev);
                                }
                            }
                        }
                        self.l2.members[usize::from(vlan)] = members;
                        match last {
                            Some(o) => self.switch_out_routed(pkt, in_port, vlan, o),
                            None => self.drop_packet_in(pkt, vlan, in_port, DropReason::L2Filtered),
                        }
                    }
                }
                Ok(())
            }
        }
    }

    /// [`switch_out`](Self::switch_out) for a packet already classified
    /// (and admitted) as it was routed.
    fn switch_out_routed(&mut self, mut pkt: PacketBuf, in_port: usize, vlan: u16, o: PortId) {
        let Some(phys) = self.physical(&pkt, o) else {
            return self.drop_packet_in(pkt, vlan, in_port, DropReason::InterfaceDown);
        };
        if !self.port_up[phys] {
            return self.drop_packet_in(pkt, vlan, in_port, DropReason::InterfaceDown);
        }
        let tagged = self.ports[usize::from(o)]
            .model
            .l2
            .as_ref()
            .is_some_and(|l2| l2.untagged != Some(vlan));
        if !retag(&mut pkt, tagged.then_some(vlan)) {
            return self.drop_packet_in(pkt, vlan, in_port, DropReason::NoBuffer);
        }
        pkt.meta.out_port = phys as PortId;
        self.vlans[usize::from(vlan)].switched += 1;
        self.send_to_egress(pkt);
    }

    /// Link down on `port`: the addresses learned there are forgotten.
    pub(super) fn flush_macs(&mut self, port: PortId) {
        self.macs.flush_port(port);
    }

    /// The MAC table, for show commands.
    pub fn mac_table(&self) -> &MacTable {
        &self.macs
    }
}

/// Makes `pkt`'s 802.1Q tag say `vlan` (its PCP the packet's PFC priority),
/// or removes it when `vlan` is `None`; metadata offsets follow. False when
/// the buffer has no headroom for a tag.
fn retag(pkt: &mut PacketBuf, vlan: Option<u16>) -> bool {
    let pcp = u16::from(pkt.meta.pfc_priority & 7);
    match (pkt.meta.vlan_tci, vlan) {
        (None, None) => true,
        (Some(tci), Some(v)) => {
            let tci = (tci & 0xf000) | v;
            pkt.data_mut()[14..16].copy_from_slice(&tci.to_be_bytes());
            pkt.meta.vlan_tci = Some(tci);
            true
        }
        (Some(_), None) => {
            pkt.data_mut().copy_within(0..12, 4);
            pkt.pull_front(4);
            pkt.meta.vlan_tci = None;
            shift(pkt, false);
            true
        }
        (None, Some(v)) => {
            if !pkt.push_front(4) {
                return false;
            }
            let tci = pcp << 13 | v;
            let d = pkt.data_mut();
            d.copy_within(4..16, 0);
            d[12..14].copy_from_slice(&0x8100u16.to_be_bytes());
            d[14..16].copy_from_slice(&tci.to_be_bytes());
            pkt.meta.vlan_tci = Some(tci);
            shift(pkt, true);
            true
        }
    }
}

/// Moves the header offsets by a tag's 4 bytes.
fn shift(pkt: &mut PacketBuf, grew: bool) {
    let m = &mut pkt.meta;
    if grew {
        m.l3_offset += 4;
        m.l4_offset += 4;
        m.payload_offset += 4;
    } else {
        m.l3_offset -= 4;
        m.l4_offset = m.l4_offset.saturating_sub(4);
        m.payload_offset = m.payload_offset.saturating_sub(4);
    }
}
