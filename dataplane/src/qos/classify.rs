//! Ingress classification: which qos-group (and so which egress queue) a
//! packet belongs to.
//!
//! Built once per interface from the model, so the fast path does no string
//! or list work beyond the optional rules: prefixes are turned into masked
//! integers here, the tables are copied as they are.
//!
//! Order, first answer wins (see [`crate::model`]): the ordered rules, then
//! the CoS table (when set; untagged frames are priority 0), then the DSCP
//! table. Access-list port conditions only hold for TCP and UDP packets that
//! carry ports (not non-first fragments).

use std::net::IpAddr;

use crate::meta::FrameKind;
use crate::model::{AclEntryModel, InterfaceModel, PortMatch, RuleTermModel};
use crate::packet::PacketBuf;

/// A prefix as a mask over the address's integer value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Prefix {
    Any,
    V4 { net: u32, mask: u32 },
    V6 { net: u128, mask: u128 },
}

impl Prefix {
    fn new(p: Option<(IpAddr, u8)>) -> Prefix {
        match p {
            None => Prefix::Any,
            Some((IpAddr::V4(a), len)) => {
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(len.min(32)))
                    .unwrap_or(0);
                Prefix::V4 {
                    net: u32::from(a) & mask,
                    mask,
                }
            }
            Some((IpAddr::V6(a), len)) => {
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(len.min(128)))
                    .unwrap_or(0);
                Prefix::V6 {
                    net: u128::from(a) & mask,
                    mask,
                }
            }
        }
    }

    #[inline]
    fn contains(self, a: Addr) -> bool {
        match (self, a) {
            (Prefix::Any, _) => true,
            (Prefix::V4 { net, mask }, Addr::V4(x)) => x & mask == net,
            (Prefix::V6 { net, mask }, Addr::V6(x)) => x & mask == net,
            _ => false,
        }
    }
}

/// An address read from the packet, as an integer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Addr {
    V4(u32),
    V6(u128),
}

/// The fields access lists look at, read from the packet once.
#[derive(Debug, Clone, Copy)]
struct Flow {
    protocol: u8,
    src: Addr,
    dst: Addr,
    ports: Option<(u16, u16)>,
    dscp: u8,
}

impl Flow {
    fn of(pkt: &PacketBuf) -> Option<Flow> {
        let m = &pkt.meta;
        let l3 = usize::from(m.l3_offset);
        let d = pkt.data();
        let (src, dst) = match m.kind {
            FrameKind::Ipv4 => {
                let h = d.get(l3 + 12..l3 + 20)?;
                let word = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
                (Addr::V4(word(&h[0..4])), Addr::V4(word(&h[4..8])))
            }
            FrameKind::Ipv6 => {
                let h = d.get(l3 + 8..l3 + 40)?;
                let mut s = [0u8; 16];
                let mut t = [0u8; 16];
                s.copy_from_slice(&h[0..16]);
                t.copy_from_slice(&h[16..32]);
                (
                    Addr::V6(u128::from_be_bytes(s)),
                    Addr::V6(u128::from_be_bytes(t)),
                )
            }
            _ => return None,
        };
        let has_ports =
            matches!(m.ip_proto, 6 | 17) && !(m.fragment && m.src_port == 0 && m.dst_port == 0);
        Some(Flow {
            protocol: m.ip_proto,
            src,
            dst,
            ports: has_ports.then_some((m.src_port, m.dst_port)),
            dscp: m.dscp,
        })
    }
}

/// One access-list entry, compiled.
#[derive(Debug, Clone, Copy)]
struct Entry {
    permit: bool,
    protocol: Option<u8>,
    src: Prefix,
    dst: Prefix,
    src_port: Option<PortMatch>,
    dst_port: Option<PortMatch>,
    dscp: Option<u8>,
}

impl Entry {
    fn new(e: &AclEntryModel) -> Entry {
        Entry {
            permit: e.permit,
            protocol: e.protocol,
            src: Prefix::new(e.src),
            dst: Prefix::new(e.dst),
            src_port: e.src_port,
            dst_port: e.dst_port,
            dscp: e.dscp,
        }
    }

    #[inline]
    fn matches(&self, f: &Flow) -> bool {
        let port = |cond: Option<PortMatch>, pick: fn((u16, u16)) -> u16| match cond {
            None => true,
            Some(c) => f.ports.is_some_and(|p| c.matches(pick(p))),
        };
        self.protocol.is_none_or(|p| p == f.protocol)
            && self.src.contains(f.src)
            && self.dst.contains(f.dst)
            && port(self.src_port, |p| p.0)
            && port(self.dst_port, |p| p.1)
            && self.dscp.is_none_or(|d| d == f.dscp)
    }
}

/// One condition of a rule, compiled.
#[derive(Debug, Clone)]
enum Term {
    Dscp(u64),
    Cos(u8),
    Access(Vec<Entry>),
}

/// One ordered rule, compiled.
#[derive(Debug, Clone)]
struct Rule {
    terms: Vec<Term>,
    qos_group: u8,
}

/// An interface's classifier, ready for the fast path.
#[derive(Debug, Clone)]
pub struct Classifier {
    dscp: [u8; 64],
    cos: Option<[u8; 8]>,
    rules: Vec<Rule>,
}

/// Every qos-group an interface's classification can give a packet, one
/// bit each: the egress queues (of any port) its packets may wait in.
pub fn qos_groups(m: &InterfaceModel) -> u8 {
    let groups = m
        .dscp_to_qos_group
        .iter()
        .chain(m.cos_to_qos_group.iter().flatten())
        .chain(m.acl_rules.iter().map(|r| &r.qos_group));
    groups.fold(0, |all, &g| all | 1 << (g & 7))
}

impl Classifier {
    /// Compiles the classification fields of an interface.
    pub fn new(m: &InterfaceModel) -> Classifier {
        let rules = m
            .acl_rules
            .iter()
            .map(|r| Rule {
                terms: r
                    .terms
                    .iter()
                    .map(|t| match t {
                        RuleTermModel::Dscp(set) => Term::Dscp(*set),
                        RuleTermModel::Cos(set) => Term::Cos(*set),
                        RuleTermModel::Access(entries) => {
                            Term::Access(entries.iter().map(Entry::new).collect())
                        }
                    })
                    .collect(),
                qos_group: r.qos_group & 7,
            })
            .collect();
        Classifier {
            dscp: m.dscp_to_qos_group.map(|g| g & 7),
            cos: m.cos_to_qos_group.map(|t| t.map(|g| g & 7)),
            rules,
        }
    }

    /// The qos-group (0–7) of a parsed IP packet.
    #[inline]
    pub fn classify(&self, pkt: &PacketBuf) -> u8 {
        let m = &pkt.meta;
        let pcp = m.pcp().unwrap_or(0) & 7;
        if !self.rules.is_empty() {
            if let Some(g) = self.rules_decide(pkt, pcp) {
                return g;
            }
        }
        match &self.cos {
            Some(table) => table[usize::from(pcp)],
            None => self.dscp[usize::from(m.dscp & 63)],
        }
    }

    #[cold]
    fn rules_decide(&self, pkt: &PacketBuf, pcp: u8) -> Option<u8> {
        let dscp = pkt.meta.dscp & 63;
        let mut flow: Option<Option<Flow>> = None;
        'rules: for rule in &self.rules {
            for term in &rule.terms {
                let holds = match term {
                    Term::Dscp(set) => set & (1 << dscp) != 0,
                    Term::Cos(set) => set & (1 << pcp) != 0,
                    Term::Access(entries) => match flow.get_or_insert_with(|| Flow::of(pkt)) {
                        Some(f) => entries
                            .iter()
                            .find(|e| e.matches(f))
                            .is_some_and(|e| e.permit),
                        None => false,
                    },
                };
                if !holds {
                    continue 'rules;
                }
            }
            return Some(rule.qos_group);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::Meta;
    use crate::model::AclRuleModel;
    use crate::packet::Pool;
    use crate::parse::parse;
    use crate::wire::{checksum, MacAddr};

    /// Ethernet (+ optional tag) + IPv4 + UDP with 24 payload bytes.
    fn udp4(
        src: [u8; 4],
        dst: [u8; 4],
        dscp: u8,
        sport: u16,
        dport: u16,
        pcp: Option<u8>,
    ) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        if let Some(p) = pcp {
            f.extend_from_slice(&[0x81, 0x00]);
            f.extend_from_slice(&((u16::from(p) << 13) | 10).to_be_bytes());
        }
        f.extend_from_slice(&[0x08, 0x00]);
        let mut h = [0u8; 20];
        h[0] = 0x45;
        h[1] = dscp << 2;
        h[2..4].copy_from_slice(&52u16.to_be_bytes());
        h[8] = 64;
        h[9] = 17;
        h[12..16].copy_from_slice(&src);
        h[16..20].copy_from_slice(&dst);
        let c = !checksum::data(&h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        f.extend_from_slice(&h);
        f.extend_from_slice(&sport.to_be_bytes());
        f.extend_from_slice(&dport.to_be_bytes());
        f.extend_from_slice(&32u16.to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        // Room for a RoCEv2 BTH when the port is 4791.
        f.extend_from_slice(&[0; 24]);
        f
    }

    fn pkt(pool: &Pool, frame: &[u8]) -> PacketBuf {
        let mut p = pool.alloc_from(frame).unwrap();
        let mut m = Meta::default();
        parse(p.data(), &mut m).unwrap();
        p.meta = m;
        p
    }

    fn ifc() -> InterfaceModel {
        InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 0, 1]))
    }

    #[test]
    fn default_is_qos_group_zero_and_dscp_table_is_one_lookup() {
        let pool = Pool::new(4);
        let c = Classifier::new(&ifc());
        assert_eq!(
            c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], 24, 1, 4791, None))),
            0
        );
        let mut m = ifc();
        m.dscp_to_qos_group[24] = 3;
        m.dscp_to_qos_group[48] = 7;
        let c = Classifier::new(&m);
        assert_eq!(
            c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], 24, 1, 4791, None))),
            3
        );
        assert_eq!(
            c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], 48, 1, 4791, None))),
            7
        );
        assert_eq!(
            c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], 26, 1, 4791, None))),
            0
        );
    }

    #[test]
    fn cos_table_decides_for_tagged_and_untagged_frames() {
        let pool = Pool::new(4);
        let mut m = ifc();
        m.dscp_to_qos_group[24] = 3;
        let mut cos = [1u8; 8];
        cos[5] = 5;
        m.cos_to_qos_group = Some(cos);
        let c = Classifier::new(&m);
        assert_eq!(
            c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], 24, 1, 2, Some(5)))),
            5
        );
        assert_eq!(
            c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], 24, 1, 2, Some(3)))),
            1
        );
        // Untagged: priority 0.
        assert_eq!(
            c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], 24, 1, 2, None))),
            1
        );
    }

    #[test]
    fn rules_come_first_in_order_with_deny_and_prefixes() {
        let pool = Pool::new(8);
        let mut m = ifc();
        m.dscp_to_qos_group[24] = 3;
        let any = AclEntryModel {
            permit: true,
            protocol: None,
            src: None,
            dst: None,
            src_port: None,
            dst_port: None,
            dscp: None,
        };
        let acl = vec![
            // deny 10.1.1.0/24 first, then permit UDP to 10.0.0.0/8 port 4791.
            AclEntryModel {
                permit: false,
                src: Some((IpAddr::V4([10, 1, 1, 0].into()), 24)),
                ..any
            },
            AclEntryModel {
                protocol: Some(17),
                dst: Some((IpAddr::V4([10, 0, 0, 0].into()), 8)),
                dst_port: Some(PortMatch::Eq(4791)),
                ..any
            },
        ];
        m.acl_rules = vec![
            AclRuleModel {
                terms: vec![RuleTermModel::Access(acl)],
                qos_group: 2,
            },
            // DSCP 46 AND CoS 5.
            AclRuleModel {
                terms: vec![RuleTermModel::Dscp(1 << 46), RuleTermModel::Cos(1 << 5)],
                qos_group: 6,
            },
        ];
        let c = Classifier::new(&m);
        let g = |f: Vec<u8>| c.classify(&pkt(&pool, &f));
        assert_eq!(g(udp4([10, 2, 0, 1], [10, 9, 9, 9], 24, 1, 4791, None)), 2);
        // Denied source falls through to the next rule, then the table.
        assert_eq!(g(udp4([10, 1, 1, 7], [10, 9, 9, 9], 24, 1, 4791, None)), 3);
        // Wrong port, wrong destination.
        assert_eq!(g(udp4([10, 2, 0, 1], [10, 9, 9, 9], 24, 1, 4792, None)), 3);
        assert_eq!(g(udp4([10, 2, 0, 1], [11, 9, 9, 9], 24, 1, 4791, None)), 3);
        // The conjunction needs both.
        assert_eq!(g(udp4([1; 4], [2; 4], 46, 1, 2, Some(5))), 6);
        assert_eq!(g(udp4([1; 4], [2; 4], 46, 1, 2, Some(4))), 0);
        assert_eq!(g(udp4([1; 4], [2; 4], 46, 1, 2, None)), 0);
    }

    #[test]
    fn ipv6_prefixes() {
        let p = Prefix::new(Some((IpAddr::V6("2001:db8::".parse().unwrap()), 32)));
        let a = |s: &str| Addr::V6(u128::from(s.parse::<std::net::Ipv6Addr>().unwrap()));
        assert!(p.contains(a("2001:db8:1::5")));
        assert!(!p.contains(a("2001:db9::5")));
        assert!(!p.contains(Addr::V4(0)));
        assert!(Prefix::new(Some((IpAddr::V6("::".parse().unwrap()), 0))).contains(a("ff02::1")));
        assert!(Prefix::new(Some((IpAddr::V4([0; 4].into()), 0))).contains(Addr::V4(7)));
    }

    #[test]
    fn qos_groups_holds_every_group_a_packet_is_classified_into_and_no_other() {
        let pool = Pool::new(8);
        let mut m = ifc();
        assert_eq!(
            qos_groups(&m),
            0b1,
            "untouched tables give qos-group 0 only"
        );
        m.dscp_to_qos_group[24] = 3;
        m.dscp_to_qos_group[48] = 7;
        m.acl_rules = vec![AclRuleModel {
            terms: vec![RuleTermModel::Dscp(1 << 10)],
            qos_group: 5,
        }];
        let c = Classifier::new(&m);
        let mut seen = 0u8;
        for dscp in 0..64 {
            for tag in [None, Some(3)] {
                seen |= 1 << c.classify(&pkt(&pool, &udp4([1; 4], [2; 4], dscp, 1, 2, tag)));
            }
        }
        assert_eq!(seen, 0b1010_1001);
        assert_eq!(qos_groups(&m), seen);
        let mut cos = [1u8; 8];
        cos[5] = 4;
        m.cos_to_qos_group = Some(cos);
        assert_eq!(
            qos_groups(&m),
            0b1011_1011,
            "a CoS table adds its groups (the DSCP table stays: kept whole rather than reasoned away)"
        );
    }
}
