//! Rewrite, per packet: the routed packet becomes the frame for its next
//! hop, then goes through [`admit`](super::admit) to its egress queue.

use super::Switch;
use crate::counters::DropReason;
use crate::meta::FrameKind;
use crate::packet::PacketBuf;
use crate::wire::{ethernet, ipv4, ipv6, MacAddr};

impl Switch {
    /// Forwards a routed packet whose next hop resolved to `next_hop`:
    /// rewrites it, admits it and sends it toward its egress queue.
    pub(super) fn forward(&mut self, mut pkt: PacketBuf, next_hop: MacAddr) {
        if !self.rewrite(&mut pkt, next_hop) {
            return self.count_drop(pkt.in_port as usize, DropReason::Malformed);
        }
        if pkt.meta.lossless && !self.admit_lossless(&pkt) {
            return;
        }
        self.send_to_egress(pkt);
    }

    /// Drops any 802.1Q tag (routed ports are untagged), rewrites the MACs,
    /// decrements TTL / hop limit with an incremental checksum update. False
    /// when the frame is shorter than its IP header (the parser rules that
    /// out; the check keeps the writes below in bounds).
    #[inline]
    fn rewrite(&self, pkt: &mut PacketBuf, next_hop: MacAddr) -> bool {
        let src = self.ports[pkt.meta.out_port as usize].model.mac;
        if pkt.meta.vlan_tci.is_some() {
            let d = pkt.data_mut();
            d.copy_within(0..12, 4);
            pkt.pull_front(4);
            pkt.meta.vlan_tci = None;
            pkt.meta.l3_offset -= 4;
            pkt.meta.l4_offset = pkt.meta.l4_offset.saturating_sub(4);
            pkt.meta.payload_offset = pkt.meta.payload_offset.saturating_sub(4);
        }
        let l3 = pkt.meta.l3_offset as usize;
        let is_v4 = pkt.meta.kind == FrameKind::Ipv4;
        // The parser saw the whole fixed header; taking it at once leaves
        // one length check for every write below.
        let end = l3
            + if is_v4 {
                ipv4::HEADER_LEN
            } else {
                ipv6::HEADER_LEN
            };
        let Some(d) = pkt.data_mut().get_mut(..end) else {
            return false;
        };
        let (l2, ip) = d.split_at_mut(l3);
        let mut eth = ethernet::Frame::new_unchecked(l2);
        eth.set_dst_addr(next_hop);
        eth.set_src_addr(src);
        // Routing dropped TTL 0 and 1, so the decrements cannot borrow.
        if is_v4 {
            ipv4::Packet::new_unchecked(ip).decrement_ttl();
        } else {
            let mut v6 = ipv6::Packet::new_unchecked(ip);
            v6.set_hop_limit(v6.hop_limit() - 1);
        }
        pkt.meta.ttl -= 1;
        true
    }
}
