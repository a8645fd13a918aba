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
            let p = pkt.in_port as usize;
            return self.drop_packet(pkt, p, DropReason::Malformed);
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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use std::net::{Ipv4Addr, Ipv6Addr};

    use super::*;
    use crate::model::{InterfaceModel, SwitchModel};
    use crate::packet::Pool;
    use crate::parse::parse;
    use crate::pipeline::Switch;
    use crate::wire::ethernet::EtherType;
    use crate::wire::ipv4::Protocol;
    use crate::wire::{EthernetRepr, Ipv4Repr, Ipv6Repr, VlanRepr};

    const HOST: MacAddr = MacAddr([2, 0, 0, 0, 0, 9]);
    const NEXT_HOP: MacAddr = MacAddr([2, 0, 0, 0, 0, 7]);

    fn switch() -> (Switch, Pool) {
        let model = SwitchModel {
            interfaces: vec![
                InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 1, 1])),
                InterfaceModel::new("Ethernet1/2", MacAddr([2, 0, 0, 0, 1, 2])),
            ],
            ..SwitchModel::default()
        };
        let pool = Pool::new(16);
        let (sw, _) = Switch::new(&model, vec![None, None], pool.clone());
        (sw, pool)
    }

    /// An IPv4 or IPv6 frame from `HOST` to the switch's first port, with a
    /// VLAN tag when `tci` is given, parsed as ingress would and routed out
    /// of the second port.
    fn routed(pool: &Pool, v6: bool, tci: Option<u16>) -> PacketBuf {
        let mut buf = [0u8; 128];
        let ethertype = if v6 { EtherType::Ipv6 } else { EtherType::Ipv4 };
        EthernetRepr {
            src_addr: HOST,
            dst_addr: MacAddr([2, 0, 0, 0, 1, 1]),
            ethertype: if tci.is_some() {
                EtherType::Vlan
            } else {
                ethertype
            },
        }
        .emit(&mut ethernet::Frame::new_unchecked(&mut buf[..]));
        let l3 = match tci {
            Some(tci) => {
                VlanRepr {
                    pcp: (tci >> 13) as u8,
                    dei: false,
                    vid: tci & 0xfff,
                    ethertype,
                }
                .emit(&mut crate::wire::vlan::Packet::new_unchecked(
                    &mut buf[14..],
                ));
                18
            }
            None => 14,
        };
        let len = if v6 {
            Ipv6Repr {
                src_addr: Ipv6Addr::new(0xfd00, 0, 0, 0, 0, 0, 0, 1),
                dst_addr: Ipv6Addr::new(0xfd00, 0, 0, 1, 0, 0, 0, 2),
                next_header: Protocol::Udp,
                payload_len: 8,
                hop_limit: 64,
                dscp: 24,
                ecn: 1,
            }
            .emit(&mut ipv6::Packet::new_unchecked(&mut buf[l3..]));
            l3 + ipv6::HEADER_LEN
        } else {
            Ipv4Repr {
                src_addr: Ipv4Addr::new(10, 0, 0, 1),
                dst_addr: Ipv4Addr::new(10, 0, 1, 2),
                protocol: Protocol::Udp,
                payload_len: 8,
                ttl: 64,
                dscp: 24,
                ecn: 1,
            }
            .emit(&mut ipv4::Packet::new_unchecked(&mut buf[l3..]));
            l3 + ipv4::HEADER_LEN
        };
        // A UDP header of its own length, checksum 0 (none).
        buf[len..len + 8].copy_from_slice(&[0x12, 0x34, 0x56, 0x78, 0, 8, 0, 0]);
        let len = len + 8;
        let mut pkt = pool.alloc_from(&buf[..len.max(60)]).unwrap();
        let (frame, meta) = pkt.data_and_meta_mut();
        parse(frame, meta).unwrap();
        pkt.meta.out_port = 1;
        pkt
    }

    #[test]
    fn a_tagged_ipv4_packet_leaves_untagged_with_new_macs_and_ttl() {
        let (sw, pool) = switch();
        let mut pkt = routed(&pool, false, Some(0x6064));
        let before = pkt.len();
        assert!(sw.rewrite(&mut pkt, NEXT_HOP));
        assert_eq!(pkt.len(), before - 4);
        assert_eq!(pkt.meta.vlan_tci, None);
        assert_eq!(pkt.meta.l3_offset, 14);
        let eth = ethernet::Frame::new_unchecked(pkt.data());
        assert_eq!(eth.dst_addr(), NEXT_HOP);
        assert_eq!(eth.src_addr(), MacAddr([2, 0, 0, 0, 1, 2]));
        assert_eq!(eth.ethertype(), EtherType::Ipv4);
        let ip = ipv4::Packet::new_unchecked(&pkt.data()[14..]);
        assert_eq!(ip.ttl(), 63);
        assert_eq!(pkt.meta.ttl, 63);
        assert!(ip.verify_checksum());
        // What the parser sees in the rewritten frame agrees with the meta.
        let mut again = pkt.meta;
        parse(pkt.data(), &mut again).unwrap();
        assert_eq!(
            (again.l3_offset, again.l4_offset, again.payload_offset),
            (
                pkt.meta.l3_offset,
                pkt.meta.l4_offset,
                pkt.meta.payload_offset
            )
        );
    }

    #[test]
    fn an_ipv6_packet_loses_one_hop() {
        let (sw, pool) = switch();
        let mut pkt = routed(&pool, true, None);
        assert!(sw.rewrite(&mut pkt, NEXT_HOP));
        let ip = ipv6::Packet::new_unchecked(&pkt.data()[14..]);
        assert_eq!(ip.hop_limit(), 63);
        assert_eq!(
            ethernet::Frame::new_unchecked(pkt.data()).dst_addr(),
            NEXT_HOP
        );
    }

    #[test]
    fn a_frame_cut_inside_its_ip_header_is_refused() {
        let (sw, pool) = switch();
        let mut pkt = routed(&pool, false, None);
        pkt.set_len(14 + 10);
        assert!(!sw.rewrite(&mut pkt, NEXT_HOP));
    }
}
