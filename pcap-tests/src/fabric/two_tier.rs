//! The two-tier (rail/spine) topology: addressing, the leaf and spine
//! models, and a run of flows through it.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use railyard_control::traffic::{build, FrameSpec, Transport, BTH_RC_WRITE_ONLY};
use railyard_dataplane::balance::dlb::flowlet_tie_break;
use railyard_dataplane::balance::hash::ecmp_hash;
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::fib::{Fib, RouteAction};
use railyard_dataplane::meta::Meta;
use railyard_dataplane::model::pfc::bytes_at;
use railyard_dataplane::model::{
    DlbMode, DlbModel, EcmpHashModel, InterfaceModel, LoadBalanceModel, NextHopModel, PgThresholds,
    PortId, RouteModel, RouteSource, SwitchModel, ThresholdUnit, WredModel, KBYTE,
};
use railyard_dataplane::nexthop::EcmpGroup;
use railyard_dataplane::parse::parse;
use railyard_dataplane::wire::MacAddr;

use super::outcome::summarise;
use super::{
    Balance, FabricBuilder, Flow, Gaps, HostId, HostPort, HostTx, Outcome, Tag, CABLE_DELAY_NS,
    ECT0, RING_CAPACITY, ROCE_DSCP, ROCE_QUEUE,
};

/// Whether the RoCE class (qos-group and priority 3) is lossless, and with
/// which ingress thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lossless {
    /// PFC off: the class is lossy like any other.
    Off,
    /// PFC on priority 3 with these thresholds on every port, as an explicit
    /// `pause buffer-size B pause-threshold X resume-threshold Y` gives
    /// (headroom B − X).
    Thresholds(PgThresholds),
    /// PFC on with the defaults a software backend gets
    /// ([`PgThresholds::software_default_for`]) at each port's speed.
    SoftwareDefault,
    /// PFC on with the defaults of a wire, whose response only the cable and
    /// the peer's hardware delay ([`PgThresholds::default_for`]).
    WireDefault,
}

/// A rail/spine topology of railyard switches.
///
/// Leaf `l` has hosts on ports `0..hosts_per_leaf` (host `h` in
/// 10.{l+1}.{h+1}.0/24, the leaf .1, the host .2) and uplinks on the next
/// `spines` ports (uplink `s` in 172.{16+s}.{l}.0/24, leaf .1, spine .2).
/// Spine `s` has leaf `l` on port `l` and routes 10.{l+1}.0.0/16 there.
/// Leaves route every remote host's /24 through one ECMP group over all
/// uplinks. All neighbours are static ARP entries. As a
/// [`chain`](Self::chain) there are no spines: two leaves joined by one
/// cable between their uplinks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TwoTier {
    /// Leaves (rail switches).
    pub leaves: usize,
    /// Spines.
    pub spines: usize,
    /// Hosts on each leaf.
    pub hosts_per_leaf: usize,
    /// Speed of host ports (and of the hosts' NICs).
    pub host_speed_mbps: u32,
    /// Speed of leaf–spine links.
    pub uplink_speed_mbps: u32,
    /// WRED with ECN on the RoCE queue (the book's 150–3000 KB, 7 %).
    pub ecn: bool,
    /// The leaves' balancing mode.
    pub balance: Balance,
    /// DLB settings for the flowlet and per-packet modes (ports and mode are
    /// filled in per leaf).
    pub dlb: DlbModel,
    /// The leaves' ECMP hash.
    pub hash: EcmpHashModel,
    /// Egress buffer of every port.
    pub buffer_bytes: u64,
    /// Packet buffers shared by the fabric.
    pub pool_buffers: usize,
    /// One-way delay of every leaf–spine cable.
    pub cable_delay_ns: Nanos,
    /// Whether queue 3 is lossless, and how.
    pub lossless: Lossless,
    /// Worker scheduling gaps of every switch (switch `n`, leaves first,
    /// seeded with the seed plus `n`); `None`: polled at every event.
    pub gaps: Option<Gaps>,
    /// Host ports whose speed is not `host_speed_mbps` (a congestion point).
    pub host_port_speeds: Vec<(HostId, u32)>,
    /// Two leaves cabled uplink to uplink, no spine.
    pub chain: bool,
}

impl TwoTier {
    /// `leaves` × `spines` with `hosts_per_leaf` hosts each, everything at
    /// 100 Gb/s, ECN on, plain ECMP, default DLB settings.
    ///
    /// # Panics
    ///
    /// Outside the addressing plan: more than 16 spines, 250 leaves or 250
    /// hosts per leaf.
    pub fn new(leaves: usize, spines: usize, hosts_per_leaf: usize) -> Self {
        assert!(spines <= 16 && leaves <= 250 && hosts_per_leaf <= 250);
        TwoTier {
            leaves,
            spines,
            hosts_per_leaf,
            host_speed_mbps: 100_000,
            uplink_speed_mbps: 100_000,
            ecn: true,
            balance: Balance::Ecmp,
            dlb: DlbModel::default(),
            hash: EcmpHashModel::default(),
            buffer_bytes: railyard_dataplane::model::DEFAULT_BUFFER_BYTES,
            pool_buffers: 16_384,
            cable_delay_ns: CABLE_DELAY_NS,
            lossless: Lossless::Off,
            gaps: None,
            host_port_speeds: Vec::new(),
            chain: false,
        }
    }

    /// Two leaves with `hosts_per_leaf` hosts each, cabled directly uplink to
    /// uplink (the shortest path between two switches); otherwise as
    /// [`new`](Self::new).
    pub fn chain(hosts_per_leaf: usize) -> Self {
        TwoTier {
            chain: true,
            ..TwoTier::new(2, 1, hosts_per_leaf)
        }
    }

    /// Frames each direction of a cable holds: what the fastest uplink
    /// carries in twice the longest gap in the smallest frames, so a switch
    /// off the CPU never fills a ring (at least the fabric's default).
    fn ring_capacity(&self) -> usize {
        let gap = self.gaps.map_or(0, |g| g.max_ns);
        let frames = bytes_at(2 * gap + 1_000_000, Some(self.uplink_speed_mbps)) / 84;
        usize::try_from(frames).map_or(usize::MAX, |f| f.max(RING_CAPACITY))
    }

    /// The speed of a host's switch port.
    fn host_port_speed(&self, h: HostId) -> u32 {
        self.host_port_speeds
            .iter()
            .find(|(at, _)| *at == h)
            .map_or(self.host_speed_mbps, |(_, s)| *s)
    }

    /// The same topology in another balancing mode.
    pub fn with_balance(&self, balance: Balance) -> Self {
        TwoTier {
            balance,
            ..self.clone()
        }
    }

    /// A host's address.
    pub fn host_ip(&self, h: HostId) -> Ipv4Addr {
        Ipv4Addr::new(10, h.leaf as u8 + 1, h.host as u8 + 1, 2)
    }

    /// A host's MAC.
    pub fn host_mac(&self, h: HostId) -> MacAddr {
        MacAddr([2, 0, 0, h.leaf as u8 + 1, h.host as u8 + 1, 2])
    }

    /// The prefix key of the route (and ECMP group) towards a host, as in
    /// `SwitchStats::load_balancing`.
    pub fn host_prefix(&self, h: HostId) -> String {
        format!("10.{}.{}.0/24", h.leaf + 1, h.host + 1)
    }

    /// MAC of leaf `l`'s port `p`.
    pub fn leaf_mac(&self, l: usize, p: usize) -> MacAddr {
        MacAddr([2, 0xaa, 1, l as u8, 0, p as u8 + 1])
    }

    /// MAC of spine `s`'s port `p`.
    pub fn spine_mac(&self, s: usize, p: usize) -> MacAddr {
        MacAddr([2, 0xaa, 2, s as u8, 0, p as u8 + 1])
    }

    /// The leaf port of uplink `s` (towards spine `s`).
    pub fn uplink_port(&self, s: usize) -> PortId {
        (self.hosts_per_leaf + s) as PortId
    }

    /// The interface name of uplink `s` on every leaf.
    pub fn uplink_name(&self, s: usize) -> String {
        format!("Ethernet1/{}", self.hosts_per_leaf + s + 1)
    }

    fn link_ip(&self, l: usize, s: usize, end: u8) -> Ipv4Addr {
        Ipv4Addr::new(172, 16 + s as u8, l as u8, end)
    }

    /// A routed port with the book's RoCEv2 QoS: DSCP 24 → qos-group 3,
    /// queues 0 and 3 sharing what is left half and half, WRED with ECN on
    /// queue 3 when asked.
    fn port(&self, name: String, mac: MacAddr, ip: Ipv4Addr, speed: u32) -> InterfaceModel {
        let mut m = InterfaceModel::new(&name, mac);
        m.ipv4.push((ip, 24));
        m.speed_mbps = Some(speed);
        m.buffer_bytes = self.buffer_bytes;
        m.dscp_to_qos_group[usize::from(ROCE_DSCP)] = ROCE_QUEUE as u8;
        m.queues[0].bandwidth_remaining_percent = Some(50);
        m.queues[ROCE_QUEUE].bandwidth_remaining_percent = Some(50);
        if self.ecn {
            m.queues[ROCE_QUEUE].wred = Some(WredModel {
                min: 150 * KBYTE,
                max: 3000 * KBYTE,
                unit: ThresholdUnit::Bytes,
                drop_probability_percent: 7,
                weight: 0,
                ecn: true,
            });
        }
        let pg = match self.lossless {
            Lossless::Off => None,
            Lossless::Thresholds(t) => Some(t),
            Lossless::SoftwareDefault => {
                let d = &m.pfc.delays;
                Some(PgThresholds::software_default_for(Some(speed), m.mtu, m.buffer_bytes, d).0)
            }
            Lossless::WireDefault => Some(PgThresholds::default_for(
                Some(speed),
                m.mtu,
                m.buffer_bytes,
                &m.pfc.delays,
            )),
        };
        if let Some(pg) = pg {
            m.pfc.enabled_priorities = 1 << ROCE_QUEUE;
            m.pfc.pg[ROCE_QUEUE] = pg;
        }
        m
    }

    /// Leaf `l`'s model.
    pub fn leaf_model(&self, l: usize) -> SwitchModel {
        let mut interfaces = Vec::new();
        for h in 0..self.hosts_per_leaf {
            let host = HostId::new(l, h);
            let mut ip = self.host_ip(host).octets();
            ip[3] = 1;
            let mut m = self.port(
                format!("Ethernet1/{}", h + 1),
                self.leaf_mac(l, h),
                Ipv4Addr::from(ip),
                self.host_port_speed(host),
            );
            m.static_arp.push((self.host_ip(host), self.host_mac(host)));
            interfaces.push(m);
        }
        for s in 0..self.spines {
            let p = usize::from(self.uplink_port(s));
            let mut m = self.port(
                self.uplink_name(s),
                self.leaf_mac(l, p),
                self.link_ip(l, s, 1),
                self.uplink_speed_mbps,
            );
            let gateway = if self.chain {
                self.leaf_mac(1 - l.min(1), p)
            } else {
                self.spine_mac(s, l)
            };
            m.static_arp.push((self.link_ip(l, s, 2), gateway));
            interfaces.push(m);
        }
        let next_hops: Vec<NextHopModel> = (0..self.spines)
            .map(|s| NextHopModel::Gateway {
                addr: IpAddr::V4(self.link_ip(l, s, 2)),
                port: Some(self.uplink_port(s)),
            })
            .collect();
        let routes = (0..self.leaves)
            .filter(|r| *r != l)
            .flat_map(|r| (0..self.hosts_per_leaf).map(move |h| HostId::new(r, h)))
            .map(|h| {
                let mut net = self.host_ip(h).octets();
                net[3] = 0;
                RouteModel {
                    source: RouteSource::Static,
                    prefix: IpAddr::V4(Ipv4Addr::from(net)),
                    len: 24,
                    next_hops: next_hops.clone(),
                }
            })
            .collect();
        let dlb = match self.balance {
            Balance::Ecmp => None,
            Balance::Flowlet | Balance::PerPacket => Some(DlbModel {
                ports: (0..self.spines).map(|s| self.uplink_port(s)).collect(),
                mode: if self.balance == Balance::Flowlet {
                    DlbMode::Flowlet
                } else {
                    DlbMode::PerPacket
                },
                ..self.dlb.clone()
            }),
        };
        SwitchModel {
            hostname: format!("leaf{l}"),
            interfaces,
            routes,
            load_balance: LoadBalanceModel {
                hash: self.hash,
                dlb,
            },
            ..SwitchModel::default()
        }
    }

    /// Spine `s`'s model.
    pub fn spine_model(&self, s: usize) -> SwitchModel {
        let interfaces = (0..self.leaves)
            .map(|l| {
                let mut m = self.port(
                    format!("Ethernet1/{}", l + 1),
                    self.spine_mac(s, l),
                    self.link_ip(l, s, 2),
                    self.uplink_speed_mbps,
                );
                m.static_arp.push((
                    self.link_ip(l, s, 1),
                    self.leaf_mac(l, usize::from(self.uplink_port(s))),
                ));
                m
            })
            .collect();
        let routes = (0..self.leaves)
            .map(|l| RouteModel {
                source: RouteSource::Static,
                prefix: IpAddr::V4(Ipv4Addr::new(10, l as u8 + 1, 0, 0)),
                len: 16,
                next_hops: vec![NextHopModel::Gateway {
                    addr: IpAddr::V4(self.link_ip(l, s, 1)),
                    port: Some(l as PortId),
                }],
            })
            .collect();
        SwitchModel {
            hostname: format!("spine{s}"),
            interfaces,
            routes,
            ..SwitchModel::default()
        }
    }

    /// The frame template of flow `id`: RoCEv2 RDMA WRITE from `src` to
    /// `dst` with DSCP 24, ECT(0), UDP source port = the entropy.
    pub fn template(&self, flow: &Flow, id: u32) -> FrameSpec {
        let mut s = FrameSpec::udp(
            self.host_mac(flow.src),
            self.leaf_mac(flow.src.leaf, flow.src.host),
            IpAddr::V4(self.host_ip(flow.src)),
            IpAddr::V4(self.host_ip(flow.dst)),
        );
        s.dscp = ROCE_DSCP;
        s.ecn = ECT0;
        s.src_port = flow.entropy;
        s.transport = Transport::Roce {
            opcode: BTH_RC_WRITE_ONLY,
            dest_qp: 0x100 + id,
            psn: 0,
        };
        s.frame_len = flow.frame_len;
        s
    }

    /// The first frame of `flow`, as it enters its leaf (for hashing it the
    /// way the leaf will).
    pub fn first_frame(&self, flow: &Flow) -> Vec<u8> {
        build(&self.template(flow, 0), Tag::payload(0, 0))
    }

    /// The uplink (0-based) plain ECMP gives `flow` on its source leaf.
    ///
    /// # Panics
    ///
    /// When the flow's frame does not parse or its destination is not
    /// behind an ECMP group (a flow inside one leaf).
    pub fn ecmp_uplink(&self, flow: &Flow) -> usize {
        let (group, hash) = self.group_and_hash(flow);
        usize::from(group.hops()[group.member(hash)].port) - self.hosts_per_leaf
    }

    /// The uplink (0-based) a flowlet of `flow` starts on under DLB when
    /// every uplink is equally good (an idle fabric).
    ///
    /// # Panics
    ///
    /// As [`ecmp_uplink`](Self::ecmp_uplink).
    pub fn idle_flowlet_uplink(&self, flow: &Flow) -> usize {
        let (group, hash) = self.group_and_hash(flow);
        let n = group.hops().len() as u32;
        let k = (flowlet_tie_break(hash) % n) as usize;
        usize::from(group.hops()[k].port) - self.hosts_per_leaf
    }

    /// The ECMP group a flow's source leaf routes it through, and its hash.
    fn group_and_hash(&self, flow: &Flow) -> (EcmpGroup, u32) {
        let model = self.leaf_model(flow.src.leaf);
        let (fib, _) = Fib::build(&model);
        let frame = self.first_frame(flow);
        let mut meta = Meta::default();
        assert!(
            parse(&frame, &mut meta).is_ok(),
            "flow frame does not parse"
        );
        let Some(RouteAction::Forward(group)) = fib.lookup(IpAddr::V4(self.host_ip(flow.dst)))
        else {
            panic!("{:?} is not behind an ECMP group", flow.dst);
        };
        let hash = ecmp_hash(&frame, &meta, &model.load_balance.hash);
        (group.clone(), hash)
    }

    /// Runs `flows` through the fabric and summarises what happened.
    ///
    /// # Panics
    ///
    /// When a flow names a host outside the topology, or stays inside one
    /// leaf (that traffic never meets the balancer), or the fabric wedges,
    /// or a chain has other than two leaves and one uplink each.
    pub fn run(&self, flows: &[Flow]) -> Outcome {
        assert!(
            !self.chain || (self.leaves == 2 && self.spines == 1),
            "a chain is two leaves with one uplink each"
        );
        let mut b = FabricBuilder::new(self.pool_buffers);
        let leaves: Vec<usize> = (0..self.leaves)
            .map(|l| b.switch(self.leaf_model(l)))
            .collect();
        let spines: Vec<usize> = if self.chain {
            Vec::new()
        } else {
            (0..self.spines)
                .map(|s| b.switch(self.spine_model(s)))
                .collect()
        };
        b.cable_delay(self.cable_delay_ns)
            .ring_capacity(self.ring_capacity());
        if let Some(g) = self.gaps {
            for sw in leaves.iter().chain(&spines) {
                b.gaps(*sw, g.seeded(g.seed.wrapping_add(*sw as u64)));
            }
        }
        if self.chain {
            let up = self.uplink_port(0);
            b.cable((leaves[0], up), (leaves[1], up), true);
        }
        for (l, leaf) in leaves.iter().enumerate() {
            for (s, spine) in spines.iter().enumerate() {
                b.cable((*leaf, self.uplink_port(s)), (*spine, l as PortId), true);
            }
        }
        let mut per_host: BTreeMap<HostId, (Vec<FrameSpec>, Vec<HostTx>)> = BTreeMap::new();
        for (id, f) in flows.iter().enumerate() {
            for h in [f.src, f.dst] {
                assert!(
                    h.leaf < self.leaves && h.host < self.hosts_per_leaf,
                    "flow {id}: no host {h:?}"
                );
            }
            assert_ne!(f.src.leaf, f.dst.leaf, "flow {id} stays inside its leaf");
            let (templates, sched) = per_host.entry(f.src).or_default();
            let t = templates.len() as u32;
            templates.push(self.template(f, id as u32));
            sched.extend(f.sends().map(|(time, seq)| HostTx {
                time,
                template: t,
                flow: id as u32,
                seq,
            }));
        }
        let mut first_sends: Vec<Vec<Nanos>> = flows
            .iter()
            .map(|f| vec![Nanos::MAX; f.burst_starts.len()])
            .collect();
        for (l, leaf) in leaves.iter().enumerate() {
            for h in 0..self.hosts_per_leaf {
                let id = HostId::new(l, h);
                let (templates, sched) = per_host.remove(&id).unwrap_or_default();
                let port = HostPort::new(
                    &format!("{l}/{h}"),
                    templates,
                    sched,
                    Some(self.host_speed_mbps),
                );
                for tx in port.schedule() {
                    let f = &flows[tx.flow as usize];
                    let burst = (tx.seq / f.packets_per_burst.max(1)) as usize;
                    let first = &mut first_sends[tx.flow as usize][burst];
                    *first = (*first).min(tx.time);
                }
                b.host((*leaf, h as PortId), port);
            }
        }
        let run = b.build().run();
        let flow_results = summarise(flows, &first_sends, &run);
        let mut uplink_log = vec![vec![Vec::new(); self.spines]; self.leaves];
        for ((sw, port), log) in &run.taps {
            if let Some(l) = leaves.iter().position(|x| x == sw) {
                let s = usize::from(*port) - self.hosts_per_leaf;
                uplink_log[l][s] = log.clone();
            }
        }
        let mut stats = run.stats;
        let spine_stats = stats.split_off(self.leaves);
        Outcome {
            topology: self.clone(),
            leaves: stats,
            spines: spine_stats,
            flows: flow_results,
            uplink_log,
            end_ns: run.end_ns,
            blind_steps: run.blind_steps,
            ring_full: run.ring_full,
            gaps: run.gaps,
        }
    }
}
