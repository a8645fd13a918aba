//! ECN marking: setting Congestion Experienced on a queued IP packet.
//!
//! IPv4 keeps a header checksum, patched incrementally (RFC 1624) rather
//! than recomputed; IPv6 has none, so only the traffic class changes.

use crate::meta::FrameKind;
use crate::packet::PacketBuf;
use crate::wire::{ipv4, ipv6};

/// ECN codepoint Congestion Experienced.
pub const CE: u8 = 3;

/// Whether the packet's ECN field says its transport understands ECN
/// (ECT(0), ECT(1), or already CE).
#[inline]
pub fn ecn_capable(pkt: &PacketBuf) -> bool {
    matches!(pkt.meta.kind, FrameKind::Ipv4 | FrameKind::Ipv6) && pkt.meta.ecn != 0
}

/// Sets CE in the IP header (and in the metadata). Returns false, changing
/// nothing, when the packet is not IP or its header is not all there.
#[inline]
pub fn mark_ce(pkt: &mut PacketBuf) -> bool {
    let l3 = usize::from(pkt.meta.l3_offset);
    let kind = pkt.meta.kind;
    let Some(header) = pkt.data_mut().get_mut(l3..) else {
        return false;
    };
    match kind {
        FrameKind::Ipv4 if header.len() >= ipv4::HEADER_LEN => {
            if header[1] & 3 != CE {
                ipv4::Packet::new_unchecked(header).set_ecn_incremental(CE);
            }
        }
        FrameKind::Ipv6 if header.len() >= ipv6::HEADER_LEN => {
            ipv6::Packet::new_unchecked(header).set_ecn(CE);
        }
        _ => return false,
    }
    pkt.meta.ecn = CE;
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::Meta;
    use crate::packet::Pool;
    use crate::parse::parse;
    use crate::wire::checksum;

    /// Ethernet + IPv4 (DSCP 24, ECN `ecn`) + 8 bytes.
    fn v4(ecn: u8) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        let h = &mut f[14..34];
        h[0] = 0x45;
        h[1] = (24 << 2) | ecn;
        h[2..4].copy_from_slice(&28u16.to_be_bytes());
        h[8] = 64;
        h[9] = 17;
        h[12..16].copy_from_slice(&[10, 0, 0, 1]);
        h[16..20].copy_from_slice(&[10, 0, 0, 2]);
        let c = !checksum::data(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        // UDP length: the header alone.
        f[38..40].copy_from_slice(&8u16.to_be_bytes());
        f
    }

    fn packet(pool: &Pool, frame: &[u8]) -> PacketBuf {
        let mut p = pool.alloc_from(frame).unwrap();
        let mut m = Meta::default();
        parse(p.data(), &mut m).unwrap();
        p.meta = m;
        p
    }

    #[test]
    fn ipv4_ce_with_a_valid_checksum() {
        let pool = Pool::new(4);
        for ecn in [1, 2] {
            let mut p = packet(&pool, &v4(ecn));
            assert!(ecn_capable(&p));
            assert!(mark_ce(&mut p));
            let h = &p.data()[14..34];
            assert_eq!(h[1], (24 << 2) | 3, "DSCP kept, ECN CE");
            assert_eq!(checksum::data(h), 0xffff, "checksum still verifies");
            assert_eq!(p.meta.ecn, 3);
        }
        let p = packet(&pool, &v4(0));
        assert!(!ecn_capable(&p));
    }

    #[test]
    fn ipv6_ce_in_the_traffic_class() {
        let pool = Pool::new(4);
        let mut f = vec![0u8; 14 + 40 + 8];
        f[12..14].copy_from_slice(&[0x86, 0xdd]);
        let tc: u32 = (24 << 2) | 2;
        f[14..18].copy_from_slice(&((6 << 28) | (tc << 20) | 0xabcde).to_be_bytes());
        f[18..20].copy_from_slice(&8u16.to_be_bytes());
        f[20] = 59; // no next header
        f[21] = 64;
        let mut p = packet(&pool, &f);
        assert!(mark_ce(&mut p));
        let v = ipv6::Packet::new_unchecked(&p.data()[14..]);
        assert_eq!((v.dscp(), v.ecn(), v.flow_label()), (24, 3, 0xabcde));
    }
}
