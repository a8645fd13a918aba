//! Counter snapshots of a worker's ports and load-balancing groups, for
//! show commands, replay summaries and the stats file.

use std::collections::BTreeMap;

use super::{PortSlot, Switch};
use crate::counters::{DropReason, PortCounters};
use crate::model::{DlbMode, PortId};
use crate::queue::NUM_QUEUES;
use crate::stats::{
    GroupStats, InterfaceStats, MacEntryStats, MacTableStats, MemberStats, PoolStats, SwitchStats,
};

impl Switch {
    /// A snapshot of the counters of the ports this worker owns, and of
    /// what it sent on other workers' ports through lanes (apart, in
    /// [`SwitchStats::lanes`]).
    pub fn stats(&self) -> SwitchStats {
        let mut interfaces = BTreeMap::new();
        let mut lanes = BTreeMap::new();
        let snapshots = self.ports.iter().filter(|p| p.owned || p.lane).map(|p| {
            let m = &p.model;
            let io = p
                .backend
                .as_ref()
                .map(|b| b.io_counters())
                .unwrap_or_default();
            let addresses = m
                .ipv4
                .iter()
                .map(|(a, l)| format!("{a}/{l}"))
                .chain(m.ipv6.iter().map(|(a, l)| format!("{a}/{l}")))
                .collect();
            let mut s = InterfaceStats {
                mac: m.mac.to_string(),
                admin_up: m.admin_up,
                link_up: p.backend.as_ref().is_some_and(|b| b.link_up()),
                backend: p
                    .backend
                    .as_ref()
                    .map_or_else(|| "none".to_string(), |b| b.describe()),
                mtu: m.mtu,
                speed_mbps: m.speed_mbps,
                addresses,
                backend_rx_dropped: io.rx_dropped,
                backend_rx_wait_max_ns: io.rx_wait_max_ns,
                backend_tx_errors: io.tx_errors,
                ..InterfaceStats::default()
            }
            .with_counters(&p.counters_now())
            .with_latency(&std::array::from_fn::<_, NUM_QUEUES, _>(|q| {
                p.queues.latency(q)
            }));
            // Frames the backend discarded for want of a buffer are the
            // switch's drops too, under their own reason.
            *s.drops
                .entry(DropReason::NoBuffer.name().to_string())
                .or_default() += io.rx_no_buffer;
            *s.drops
                .entry(DropReason::Oversize.name().to_string())
                .or_default() += io.rx_oversize;
            *s.drops
                .entry(DropReason::CaptureDamaged.name().to_string())
                .or_default() += io.rx_damaged;
            // The enable vector is configuration, not a counter; the pause
            // state is the owner's (a lane only follows it).
            s.pfc.enabled = m.pfc.enabled_priorities;
            if p.owned {
                s.pfc.rx_paused = p.pfc.rx_paused;
                s.pfc.tx_xoff = p.pfc.tx_xoff;
            }
            (p.owned, m.name.clone(), s)
        });
        for (owned, name, s) in snapshots {
            if owned { &mut interfaces } else { &mut lanes }.insert(name, s);
        }
        SwitchStats {
            lanes,
            hostname: self.hostname.clone(),
            interfaces,
            pool: PoolStats {
                capacity: self.pool.capacity(),
                available: self.pool.available(),
                exhausted: self.pool.exhausted(),
                touched: self.pool.touched(),
                buffer_bytes: crate::packet::Pool::BUFFER_BYTES,
            },
            neighbor_parked: self.neighbors.parked(),
            load_balancing: self.group_stats(),
            poll_gaps: vec![self.poll_gaps.stats()],
            mac_table: self.mac_table_stats(),
            vlans: self
                .vlans
                .iter()
                .enumerate()
                .filter(|(_, c)| !c.is_zero())
                .map(|(v, c)| (v as u16, *c))
                .collect(),
            monitor_sessions: BTreeMap::new(),
        }
    }

    fn mac_table_stats(&self) -> MacTableStats {
        let c = self.macs.counters();
        let entries = self
            .macs
            .entries(self.now)
            .into_iter()
            .map(|e| MacEntryStats {
                vlan: e.vlan,
                mac: e.mac.to_string(),
                port: self
                    .ports
                    .get(usize::from(e.port))
                    .map_or_else(String::new, |p| p.model.name.clone()),
                kind: if e.is_static { "static" } else { "dynamic" }.to_string(),
                age_secs: if e.is_static {
                    0
                } else {
                    self.now.saturating_sub(e.last_seen) / 1_000_000_000
                },
            })
            .collect();
        MacTableStats {
            entries,
            learned: c.learned,
            moves: c.moves,
            full: c.full,
            aged: c.aged,
            flushed: c.flushed,
        }
    }

    /// Per-group counters with member port quality, keyed by prefix, for
    /// the groups that balance (more than one member). A route with one
    /// next hop balances nothing, and a FIB of many such routes (a kernel
    /// table of 10,000 prefixes) would otherwise cost a worker milliseconds
    /// on every publication.
    fn group_stats(&self) -> BTreeMap<String, GroupStats> {
        let mode = |dlb: bool| match self.balancer.dlb_model() {
            Some(m) if dlb => match m.mode {
                DlbMode::Flowlet => "flowlet",
                DlbMode::PerPacket => "per-packet",
            },
            _ => "ecmp",
        };
        let board = self.balancer.quality();
        self.fib
            .groups()
            .filter(|(_, g)| g.hops().len() > 1)
            .filter_map(|(route, g)| {
                let c = self.balancer.counters(g.id())?;
                let buckets = g.bucket_counts();
                let members = g
                    .hops()
                    .iter()
                    .zip(&c.members)
                    .zip(buckets)
                    .map(|((h, m), buckets)| MemberStats {
                        interface: self
                            .ports
                            .get(usize::from(h.port))
                            .map_or_else(String::new, |p| p.model.name.clone()),
                        gateway: h.gateway.map(|a| a.to_string()),
                        packets: m.packets,
                        bytes: m.bytes,
                        buckets,
                        quality_band: board.band(h.port),
                        load_percent: board.load_percent(h.port),
                    })
                    .collect();
                let s = GroupStats {
                    mode: mode(g.is_dlb()).to_string(),
                    members,
                    flowlets_started: c.flowlets_started,
                    flowlet_moves: c.flowlet_moves,
                    per_packet_choices: c.per_packet_choices,
                    reorder_risk: c.reorder_risk,
                    rehashed: c.rehashed,
                    pinned: c.pinned,
                };
                Some((format!("{}/{}", route.prefix, route.len), s))
            })
            .collect()
    }

    /// Counters of one port, by index, with its queues' depths as they are
    /// now.
    pub fn counters(&self, port: PortId) -> Option<PortCounters> {
        self.ports.get(port as usize).map(PortSlot::counters_now)
    }
}
