//! The forwarding information base: longest-prefix match for IPv4 and IPv6.
//!
//! One hash table per prefix length, probed from the longest length present
//! down to the shortest. Lookups cost one hash probe per distinct length in use
//! (a handful in a lab fabric), never allocate, and the structure stays simple
//! enough to rebuild from a new model in microseconds.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use rustc_hash::FxHashMap;

use crate::balance::EcmpGroup;
use crate::model::{NextHopModel, PortId, SwitchModel};

/// A longest-prefix-match table over `W`-bit keys (u32 for IPv4, u128 for IPv6).
#[derive(Debug, Clone, Default)]
pub struct Lpm<K> {
    /// (prefix length, table of masked prefix → value), longest first.
    tables: Vec<(u8, FxHashMap<K, u32>)>,
}

/// Key types usable in [`Lpm`].
pub trait LpmKey: Copy + Eq + std::hash::Hash {
    /// Width of the key in bits.
    const BITS: u8;
    /// The key with all bits past `len` cleared.
    fn masked(self, len: u8) -> Self;
}

impl LpmKey for u32 {
    const BITS: u8 = 32;
    #[inline]
    fn masked(self, len: u8) -> Self {
        if len == 0 {
            0
        } else {
            self & (u32::MAX << (32 - len as u32))
        }
    }
}

impl LpmKey for u128 {
    const BITS: u8 = 128;
    #[inline]
    fn masked(self, len: u8) -> Self {
        if len == 0 {
            0
        } else {
            self & (u128::MAX << (128 - len as u32))
        }
    }
}

impl<K: LpmKey> Lpm<K> {
    /// An empty table.
    pub fn new() -> Self {
        Lpm { tables: Vec::new() }
    }

    /// Adds or replaces `prefix/len → value`; lengths past the key width are clamped.
    pub fn insert(&mut self, prefix: K, len: u8, value: u32) {
        let len = len.min(K::BITS);
        let key = prefix.masked(len);
        let pos = match self.tables.iter().position(|(l, _)| *l <= len) {
            Some(i) if self.tables[i].0 == len => i,
            Some(i) => {
                self.tables.insert(i, (len, FxHashMap::default()));
                i
            }
            None => {
                self.tables.push((len, FxHashMap::default()));
                self.tables.len() - 1
            }
        };
        self.tables[pos].1.insert(key, value);
    }

    /// Removes `prefix/len`, returning its value.
    pub fn remove(&mut self, prefix: K, len: u8) -> Option<u32> {
        let len = len.min(K::BITS);
        let i = self.tables.iter().position(|(l, _)| *l == len)?;
        let v = self.tables[i].1.remove(&prefix.masked(len));
        if self.tables[i].1.is_empty() {
            self.tables.remove(i);
        }
        v
    }

    /// The value of the longest prefix covering `addr`.
    #[inline]
    pub fn lookup(&self, addr: K) -> Option<u32> {
        for (len, table) in &self.tables {
            if let Some(v) = table.get(&addr.masked(*len)) {
                return Some(*v);
            }
        }
        None
    }

    /// Number of prefixes.
    pub fn len(&self) -> usize {
        self.tables.iter().map(|(_, t)| t.len()).sum()
    }

    /// True when the table holds no prefix.
    pub fn is_empty(&self) -> bool {
        self.tables.is_empty()
    }
}

/// One way out of the switch for a routed packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NextHop {
    /// Egress interface.
    pub port: PortId,
    /// Address to resolve to a MAC; `None` means the packet's own destination
    /// (on-link).
    pub gateway: Option<IpAddr>,
}

/// What a matched route does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteAction {
    /// Addressed to the switch itself (one of its interface addresses).
    Local(PortId),
    /// On-link: resolve the destination itself on this interface.
    Connected(PortId),
    /// Through one of a group of next hops (ECMP, or DLB when the group's
    /// members are all DLB interfaces).
    Forward(EcmpGroup),
    /// Dropped (Null0).
    Discard,
}

/// A route table entry with where it came from, for show output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// Destination prefix.
    pub prefix: IpAddr,
    /// Prefix length.
    pub len: u8,
    /// What the route does.
    pub action: RouteAction,
}

/// A route that could not be installed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FibWarning {
    /// The route's prefix and length, as text.
    pub route: String,
    /// What is wrong.
    pub message: String,
}

/// IPv4 and IPv6 routing tables built from a [`SwitchModel`].
#[derive(Debug, Clone, Default)]
pub struct Fib {
    v4: Lpm<u32>,
    v6: Lpm<u128>,
    routes: Vec<Route>,
    /// ECMP groups numbered so far (ids are 0..groups).
    groups: u32,
}

impl Fib {
    /// Builds local, connected and static routes. Static next hops are
    /// resolved to an interface through the connected routes; a next hop no
    /// interface reaches is reported and left out of its group (a route left
    /// with no next hop is not installed).
    pub fn build(model: &SwitchModel) -> (Fib, Vec<FibWarning>) {
        Self::rebuild(model, None)
    }

    /// Builds like [`build`](Self::build), keeping each ECMP group's bucket
    /// table from `previous` where the route still exists, so a changed
    /// member set moves only the flows it must.
    pub fn rebuild(model: &SwitchModel, previous: Option<&Fib>) -> (Fib, Vec<FibWarning>) {
        let mut fib = Fib::default();
        let dlb_port = |p: PortId| {
            model
                .load_balance
                .dlb
                .as_ref()
                .is_some_and(|d| d.ports.contains(&p))
        };
        let mut warnings = Vec::new();
        for (i, ifc) in model.interfaces.iter().enumerate() {
            let port = i as PortId;
            for (a, len) in &ifc.ipv4 {
                fib.add(IpAddr::V4(*a), *len, RouteAction::Connected(port));
            }
            for (a, len) in &ifc.ipv6 {
                fib.add(IpAddr::V6(*a), *len, RouteAction::Connected(port));
            }
        }
        // Local addresses last so they win over a connected /32 or /128.
        for (i, ifc) in model.interfaces.iter().enumerate() {
            let port = i as PortId;
            for (a, _) in &ifc.ipv4 {
                fib.add(IpAddr::V4(*a), 32, RouteAction::Local(port));
            }
            for (a, _) in &ifc.ipv6 {
                fib.add(IpAddr::V6(*a), 128, RouteAction::Local(port));
            }
        }
        for r in &model.routes {
            let name = format!("{}/{}", r.prefix, r.len);
            let mut hops = Vec::new();
            let mut discard = false;
            for nh in &r.next_hops {
                match *nh {
                    NextHopModel::Discard => discard = true,
                    NextHopModel::Interface(port) => hops.push(NextHop {
                        port,
                        gateway: None,
                    }),
                    NextHopModel::Gateway {
                        addr,
                        port: Some(port),
                    } => hops.push(NextHop {
                        port,
                        gateway: Some(addr),
                    }),
                    NextHopModel::Gateway { addr, port: None } => match fib.connected_port(addr) {
                        Some(port) => hops.push(NextHop {
                            port,
                            gateway: Some(addr),
                        }),
                        None => warnings.push(FibWarning {
                            route: name.clone(),
                            message: format!(
                                "next hop {addr} is not in any interface's subnet; left out"
                            ),
                        }),
                    },
                }
            }
            if !hops.is_empty() {
                let id = fib.groups;
                fib.groups += 1;
                let dlb = hops.len() > 1 && hops.iter().all(|h| dlb_port(h.port));
                let group = match previous.and_then(|p| p.group_for(r.prefix, r.len)) {
                    Some(old) => EcmpGroup::rebuilt(old, hops, id, dlb),
                    None => EcmpGroup::new(hops, id, dlb),
                };
                fib.add(r.prefix, r.len, RouteAction::Forward(group));
            } else if discard {
                fib.add(r.prefix, r.len, RouteAction::Discard);
            } else {
                warnings.push(FibWarning {
                    route: name,
                    message: "no usable next hop; route not installed".to_string(),
                });
            }
        }
        (fib, warnings)
    }

    fn connected_port(&self, addr: IpAddr) -> Option<PortId> {
        match self.lookup(addr)? {
            RouteAction::Connected(p) | RouteAction::Local(p) => Some(*p),
            _ => None,
        }
    }

    /// Adds a route; a later route for the same prefix replaces the earlier.
    pub fn add(&mut self, prefix: IpAddr, len: u8, action: RouteAction) {
        let idx = match self
            .routes
            .iter()
            .position(|r| r.prefix == prefix && r.len == len)
        {
            Some(i) => {
                self.routes[i].action = action;
                i
            }
            None => {
                self.routes.push(Route {
                    prefix,
                    len,
                    action,
                });
                self.routes.len() - 1
            }
        } as u32;
        match prefix {
            IpAddr::V4(a) => self.v4.insert(u32::from(a), len, idx),
            IpAddr::V6(a) => self.v6.insert(u128::from(a), len, idx),
        }
    }

    /// Longest-prefix match for an IPv4 destination.
    #[inline]
    pub fn lookup_v4(&self, dst: Ipv4Addr) -> Option<&RouteAction> {
        let i = self.v4.lookup(u32::from(dst))?;
        self.routes.get(i as usize).map(|r| &r.action)
    }

    /// Longest-prefix match for an IPv6 destination.
    #[inline]
    pub fn lookup_v6(&self, dst: Ipv6Addr) -> Option<&RouteAction> {
        let i = self.v6.lookup(u128::from(dst))?;
        self.routes.get(i as usize).map(|r| &r.action)
    }

    /// Longest-prefix match for either family.
    pub fn lookup(&self, dst: IpAddr) -> Option<&RouteAction> {
        match dst {
            IpAddr::V4(a) => self.lookup_v4(a),
            IpAddr::V6(a) => self.lookup_v6(a),
        }
    }

    /// Every installed route, for show output.
    pub fn routes(&self) -> &[Route] {
        &self.routes
    }

    /// Every ECMP group with its route.
    pub fn groups(&self) -> impl Iterator<Item = (&Route, &EcmpGroup)> {
        self.routes.iter().filter_map(|r| match &r.action {
            RouteAction::Forward(g) => Some((r, g)),
            _ => None,
        })
    }

    /// How many group ids are in use (ids run from 0 to this, exclusive).
    pub fn group_count(&self) -> usize {
        self.groups as usize
    }

    /// The group of the route for exactly `prefix/len`.
    pub fn group_for(&self, prefix: IpAddr, len: u8) -> Option<&EcmpGroup> {
        self.routes
            .iter()
            .find(|r| r.prefix == prefix && r.len == len)
            .and_then(|r| match &r.action {
                RouteAction::Forward(g) => Some(g),
                _ => None,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{InterfaceModel, RouteModel};
    use crate::wire::MacAddr;

    fn v4(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    #[test]
    fn longest_prefix_wins() {
        let mut t = Lpm::<u32>::new();
        t.insert(u32::from(v4("10.0.0.0")), 8, 1);
        t.insert(u32::from(v4("10.1.0.0")), 16, 2);
        t.insert(u32::from(v4("10.1.2.3")), 32, 3);
        t.insert(0, 0, 9);
        assert_eq!(t.lookup(u32::from(v4("10.1.2.3"))), Some(3));
        assert_eq!(t.lookup(u32::from(v4("10.1.2.4"))), Some(2));
        assert_eq!(t.lookup(u32::from(v4("10.2.0.1"))), Some(1));
        assert_eq!(t.lookup(u32::from(v4("192.168.0.1"))), Some(9));
        assert_eq!(t.remove(0, 0), Some(9));
        assert_eq!(t.lookup(u32::from(v4("192.168.0.1"))), None);
        assert_eq!(t.len(), 3);
        // Host bits in the inserted prefix are ignored.
        t.insert(u32::from(v4("172.16.5.5")), 12, 4);
        assert_eq!(t.lookup(u32::from(v4("172.31.0.1"))), Some(4));
        assert_eq!(t.lookup(u32::from(v4("172.32.0.1"))), None);
    }

    #[test]
    fn ipv6_prefixes() {
        let mut t = Lpm::<u128>::new();
        let p = |s: &str| u128::from(s.parse::<Ipv6Addr>().unwrap());
        t.insert(p("2001:db8::"), 32, 1);
        t.insert(p("2001:db8:1::"), 48, 2);
        t.insert(p("2001:db8:1::1"), 128, 3);
        assert_eq!(t.lookup(p("2001:db8:1::1")), Some(3));
        assert_eq!(t.lookup(p("2001:db8:1::2")), Some(2));
        assert_eq!(t.lookup(p("2001:db8:ffff::2")), Some(1));
        assert_eq!(t.lookup(p("2001:db9::")), None);
    }

    #[test]
    fn build_resolves_static_next_hops_and_reports_unreachable_ones() {
        let mut e1 = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 0, 1]));
        e1.ipv4.push((v4("10.0.1.1"), 24));
        let mut e2 = InterfaceModel::new("Ethernet1/2", MacAddr([2, 0, 0, 0, 0, 2]));
        e2.ipv4.push((v4("10.0.2.1"), 24));
        let gw = |a: &str| NextHopModel::Gateway {
            addr: IpAddr::V4(v4(a)),
            port: None,
        };
        let model = SwitchModel {
            interfaces: vec![e1, e2],
            routes: vec![
                RouteModel {
                    prefix: IpAddr::V4(v4("192.168.0.0")),
                    len: 16,
                    next_hops: vec![gw("10.0.1.2"), gw("10.0.2.2"), gw("10.9.9.9")],
                },
                RouteModel {
                    prefix: IpAddr::V4(v4("172.16.0.0")),
                    len: 12,
                    next_hops: vec![NextHopModel::Discard],
                },
            ],
            ..SwitchModel::default()
        };
        let (fib, warnings) = Fib::build(&model);
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].message.contains("10.9.9.9"));
        assert_eq!(fib.lookup_v4(v4("10.0.1.1")), Some(&RouteAction::Local(0)));
        assert_eq!(
            fib.lookup_v4(v4("10.0.2.7")),
            Some(&RouteAction::Connected(1))
        );
        assert_eq!(fib.lookup_v4(v4("172.20.0.1")), Some(&RouteAction::Discard));
        match fib.lookup_v4(v4("192.168.3.4")) {
            Some(RouteAction::Forward(g)) => {
                let hops = g.hops();
                assert_eq!(hops.len(), 2);
                assert_eq!(hops[0].port, 0);
                assert_eq!(hops[1].port, 1);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(fib.lookup_v4(v4("8.8.8.8")), None);
    }
}
