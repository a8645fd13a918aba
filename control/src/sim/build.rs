//! From a topology to a fabric ready to run: every switch rendered,
//! compiled and built on in-memory cables; every host an endpoint model
//! with one NIC per cable, ranked rail-aligned (NIC n of a host on rail n).
//!
//! Layer-2 topologies run as they are configured, with what a live switch
//! learns given up front: a host in a VLAN has the SVI as its gateway (its
//! NIC sends every frame there, so traffic within a VLAN is routed by the
//! SVI rather than bridged), the SVI has static ARP for the VLAN's hosts
//! and each host's MAC is a static entry on its access port, so nothing
//! floods; a port-channel forwards over all its members, as LACP bundles
//! them once it is up.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex, PoisonError};

use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::balance::{DlbMode, DlbModel};
use railyard_dataplane::model::pfc::CABLE_NS_PER_METRE;
use railyard_dataplane::model::{PortId, StaticMac, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::{LinkControl, RingLink, RingPort};
use railyard_dataplane::port::Port;
use railyard_dataplane::Pool;
use railyard_roce::host::Host;
use railyard_roce::nic::{CongestionControl, NicConfig};
use railyard_roce::plan::{JobOptions, JobPlan, RankAddr, Workload};
use railyard_roce::MacAddr;

use super::engine::{Arrivals, NodeId, NotifyingPort, Partition};
use super::{Cc, DataMode, Lb, SimOptions};
use crate::lab::collective::{path_mtu, rank_of, rank_specs};
use crate::lab::render::{find_template, render_switch};
use crate::lab::topology::{Endpoint, Topology};

/// Frames a cable direction holds beyond those in flight: a receiver
/// reads its due frames when they are due, so a cable holds little more
/// than what is on the wire, plus a sender's burst or two.
const CABLE_SLACK_FRAMES: usize = 2_048;
/// Most frames a cable direction holds (its ring is allocated whole, so
/// a thousand-NIC fabric of cables this size would take gigabytes).
const MAX_CABLE_FRAMES: usize = 65_536;
/// Link speed assumed for a cable whose speed the topology leaves to the
/// switch's configuration: the fastest port railyard's templates set.
const UNKNOWN_LINK_MBPS: u64 = 400_000;
/// Packet buffers per switch in the shared pool.
const BUFFERS_PER_SWITCH: usize = 32_768;
/// Packet buffers per host NIC in the shared pool: a NIC puts one frame at
/// a time on its cable, so what it holds is what the cable does.
const BUFFERS_PER_NIC: usize = 1_024;
/// Most buffers the pool holds (about 2.4 GB). Buffers cycle through the
/// pool's shared queue, so over a run every one gets touched (and the
/// kernel zeroes its pages on first touch): a pool sized for the worst
/// case costs seconds and gigabytes it never needs. A fabric that needs
/// more reports "refused frames" (the pool ran dry).
const MAX_POOL: usize = 1 << 18;
/// With `--data auto`, jobs whose buffers (every rank's) exceed this run
/// without data: a thousand-rank AllToAll of 64 MB would need 128 GB.
const AUTO_DATA_LIMIT: usize = 2 << 30;
/// Slots a cable direction needs: the smallest frames (84 bytes on the
/// wire with preamble and gap) sent back to back for the cable's delay,
/// plus [`CABLE_SLACK_FRAMES`]. A cable that is ever full keeps the frame
/// in its sender's queue and counts it (`refused_frames`), never loses it.
fn cable_frames(delay_ns: u64, mbps: u64) -> usize {
    let on_wire = u128::from(delay_ns) * u128::from(mbps) / (84 * 8 * 1_000);
    usize::try_from(on_wire)
        .unwrap_or(usize::MAX)
        .saturating_add(CABLE_SLACK_FRAMES)
        .min(MAX_CABLE_FRAMES)
}

/// `f` applied to every item (with its index) on up to `threads` threads
/// (default: one per core), results in item order: building a
/// thousand-NIC fabric is a few thousand independent jobs (switch
/// configurations to render and read, hosts to connect).
fn par_map<T: Send, R: Send>(
    items: Vec<T>,
    threads: Option<usize>,
    f: impl Fn(usize, T) -> R + Sync,
) -> Vec<R> {
    let n = items.len();
    let threads = threads.unwrap_or_else(cores).clamp(1, n.max(1));
    let queue: Mutex<std::iter::Enumerate<std::vec::IntoIter<T>>> =
        Mutex::new(items.into_iter().enumerate());
    let take = || queue.lock().unwrap_or_else(PoisonError::into_inner).next();
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    while let Some((i, item)) = take() {
                        mine.push((i, f(i, item)));
                    }
                    mine
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    done.sort_unstable_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Worker threads for a fabric of `nodes` nodes when `--threads` is not
/// given: a thread per core, but no more than one per 32 nodes, since a
/// small fabric's windows hold too little work to share.
fn default_threads(nodes: usize) -> usize {
    (nodes / 32).clamp(1, cores())
}

/// The cores this process may run on.
fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// DSCP of RoCEv2 data in the book's policy.
const ROCE_DSCP: u8 = 24;

/// One host NIC's end of its cable.
pub(super) struct NicPort {
    /// The cable end the host sends on and receives from.
    pub end: RingPort,
    /// The NIC's rank.
    pub rank: usize,
    /// The switch at the other end, as the scheduler numbers it, and its
    /// port.
    pub switch: NodeId,
    pub switch_port: u16,
}

/// A fabric ready to run.
pub(super) struct Fabric {
    pub switches: Vec<Switch>,
    pub switch_names: Vec<String>,
    /// Per switch, its interfaces' names by port number.
    pub port_names: Vec<Vec<String>>,
    pub hosts: Vec<Host>,
    /// Per host, its NICs' cable ends, NIC 0 first.
    pub nic_ports: Vec<Vec<NicPort>>,
    pub links: Vec<LinkControl>,
    /// Per link (topology order), its two ends: (node, port or NIC).
    pub link_ends: Vec<[(NodeId, u16); 2]>,
    pub plan: JobPlan,
    pub pool: Pool,
    /// Each rank's NIC line rate, bits per second.
    pub nic_rate_bps: Vec<u64>,
    /// Each rank's RoCE path MTU.
    pub path_mtu: Vec<usize>,
    /// The topology as the results read it (tiers, paths).
    pub map: super::map::FabricMap,
    /// Which worker thread runs each node (switches are nodes
    /// `0..switches.len()`, host `h` is node `switches.len() + h`).
    pub partition: Partition,
    /// Per worker, where the cables toward its nodes announce arrivals.
    pub inboxes: Vec<Arrivals>,
    /// The shortest cable's delay: how far every node may run ahead of
    /// the others, since nothing sent reaches another node sooner.
    pub lookahead_ns: Nanos,
    /// The ports `--capture` asked for, and where their frames go.
    pub captures: Option<super::capture::Captures>,
}

/// Reads a workload with an optional start time, `SPEC[@TIME]`
/// (`flows:websearch:0.3@100us`).
///
/// # Errors
///
/// A bad spec or time.
fn parse_timed_workload(
    spec: &str,
    rank_of: &dyn Fn(&str) -> Result<usize, String>,
) -> Result<(railyard_dataplane::clock::Nanos, Workload), String> {
    let (w, start) = match spec.rsplit_once('@') {
        Some((w, t)) => {
            let d = humantime::parse_duration(t.trim()).map_err(|e| {
                format!("workload {spec:?}: bad start time {t:?} ({e}); write it like 100us")
            })?;
            (w, d.as_nanos() as u64)
        }
        None => (spec, 0),
    };
    Ok((start, Workload::parse(w, rank_of)?))
}

/// The MAC of NIC `nic` of host number `host`: locally administered,
/// readable (`02:00:00:HH:HH:NN`, the host number in two bytes).
pub(super) fn host_mac(host: usize, nic: usize) -> MacAddr {
    MacAddr([0x02, 0, 0, (host >> 8) as u8, host as u8, nic as u8])
}

/// A host's NICs: its links, by port name (eth0, eth1, ...), as (link
/// index, host end, switch end).
fn host_links<'a>(t: &'a Topology, host: &str) -> Vec<(usize, &'a Endpoint, &'a Endpoint)> {
    let mut v: Vec<_> = t
        .links
        .iter()
        .enumerate()
        .filter_map(|(i, l)| {
            if l.a.node == host {
                Some((i, &l.a, &l.b))
            } else if l.b.node == host {
                Some((i, &l.b, &l.a))
            } else {
                None
            }
        })
        .collect();
    v.sort_by(|a, b| crate::natural::cmp(&a.1.port, &b.1.port));
    v
}

/// Renders and compiles switch `name`'s configuration.
fn compile_switch(t: &Topology, name: &str, role: &str) -> Result<SwitchModel, String> {
    let (source, text) = find_template(t, role)?;
    let config = render_switch(t, name, &text, &source.to_string())
        .map_err(|d| crate::format_diagnostics(&d))?;
    // The simulated switch is the hardware it stands for: its ports are
    // cables, not sockets a software loop polls, so PFC headroom covers
    // the wire's delays alone, and those of the cables the topology says
    // it has (as an engineer sets the cable length of each port), unless
    // the template sets one itself.
    let cables: BTreeMap<&str, u64> = t
        .links_of(name)
        .map(|(l, me, _)| {
            // Past the longest cable PFC headroom is sized for, the
            // headroom is the port buffer's anyway.
            let metres = l.delay_ns.div_ceil(CABLE_NS_PER_METRE);
            (
                me.port.as_str(),
                metres.min(u64::from(railyard_config::MAX_CABLE_METRES)),
            )
        })
        .collect();
    let sets_cable = config.contains("priority-flow-control cable-length");
    let mut out = String::with_capacity(config.len());
    for l in config
        .lines()
        .filter(|l| !l.trim_start().starts_with("bind "))
    {
        out.push_str(l);
        out.push('\n');
        let port = l.strip_prefix("interface ").map(str::trim);
        if let Some(m) = port.and_then(|p| cables.get(p)).filter(|_| !sets_cable) {
            out.push_str(&format!("  priority-flow-control cable-length {m}\n"));
        }
    }
    let config = out;
    let label = format!("{name} (generated from {source})");
    let parsed = railyard_config::parse_str(&config, &label, &Default::default())
        .map_err(|d| crate::format_diagnostics(&d))?;
    let compiled =
        crate::compile::compile(&parsed.config).map_err(|d| crate::format_diagnostics(&d))?;
    Ok(compiled.model)
}

/// The port number of interface `port` of switch `sw`.
fn port_of(models: &[SwitchModel], t: &Topology, sw: usize, port: &str) -> Result<PortId, String> {
    models[sw]
        .interfaces
        .iter()
        .position(|i| i.name == port)
        .map(|p| p as PortId)
        .ok_or_else(|| {
            format!(
                "{}: the configuration of {} has no interface {port}",
                t.path.display(),
                t.switches[sw].name
            )
        })
}

/// Applies the `--lb` and `--pfc` overrides to a switch model; `uplinks`
/// are its ports toward other switches.
fn override_model(m: &mut SwitchModel, uplinks: &[PortId], opts: &SimOptions) {
    if let Some(lb) = opts.lb {
        m.load_balance.dlb = match lb {
            Lb::Ecmp => None,
            Lb::Flowlet | Lb::PerPacket if uplinks.len() > 1 => Some(DlbModel {
                ports: uplinks.to_vec(),
                mode: if lb == Lb::Flowlet {
                    DlbMode::Flowlet
                } else {
                    DlbMode::PerPacket
                },
                ..m.load_balance.dlb.clone().unwrap_or_default()
            }),
            _ => None,
        };
    }
    if !opts.pfc {
        for i in &mut m.interfaces {
            i.pfc.enabled_priorities = 0;
        }
    }
}

/// Builds the fabric of `t` for `opts`.
///
/// # Errors
///
/// A template, configuration or workload problem, or a link the model
/// cannot place (a switch port the configuration does not define).
pub(super) fn build(t: &Topology, opts: &SimOptions) -> Result<Fabric, String> {
    // Each switch's configuration rendered and read (thousands of route
    // lines each in a large fabric), in topology order.
    let mut models = par_map(t.switches.iter().collect(), opts.threads, |_, s| {
        compile_switch(t, &s.name, &s.role)
    })
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let switch_index = |name: &str| t.switches.iter().position(|s| s.name == name);
    let host_index = |name: &str| t.hosts.iter().position(|h| h.name == name);
    let specs = rank_specs(t)?;
    let ranks: Vec<RankAddr> = specs
        .iter()
        .map(|r| RankAddr {
            host: r.host,
            nic: r.nic,
            name: r.name(),
            ip: r.ip,
            mac: host_mac(r.host, r.nic),
        })
        .collect();
    // Static ARP everywhere: the peer of every switch port is known. A
    // routed port-channel's peer is the far port-channel; a host in a VLAN
    // is known to its SVI, and its MAC to its access port (a static MAC
    // entry, so nothing floods); a trunk has no addresses.
    let mut arp: Vec<(usize, PortId, Ipv4Addr, MacAddr)> = Vec::new();
    let mut macs: Vec<(usize, StaticMac)> = Vec::new();
    let mut uplinks: Vec<Vec<PortId>> = vec![Vec::new(); models.len()];
    for l in &t.links {
        for (me, peer) in [(&l.a, &l.b), (&l.b, &l.a)] {
            let Some(sw) = switch_index(&me.node) else {
                continue;
            };
            let port = port_of(&models, t, sw, &me.port)?;
            let Some(ip) = t.address_of(l, peer) else {
                continue;
            };
            match (switch_index(&peer.node), host_index(&peer.node)) {
                (Some(ps), _) => match l.channel {
                    Some(id) => {
                        if !t.channel_first(l).is_some_and(|f| std::ptr::eq(f, l)) {
                            continue;
                        }
                        let pc = format!("port-channel{id}");
                        let mine = port_of(&models, t, sw, &pc)?;
                        let theirs = port_of(&models, t, ps, &pc)?;
                        arp.push((sw, mine, ip, models[ps].interfaces[usize::from(theirs)].mac));
                    }
                    None => {
                        uplinks[sw].push(port);
                        let theirs = port_of(&models, t, ps, &peer.port)?;
                        arp.push((sw, port, ip, models[ps].interfaces[usize::from(theirs)].mac));
                    }
                },
                (None, Some(h)) => {
                    let r = ranks
                        .iter()
                        .find(|r| r.host == h && r.name.ends_with(&format!(".{}", peer.port)))
                        .ok_or_else(|| format!("host {} has no NIC {}", peer.node, peer.port))?;
                    match t.link_vlan(l) {
                        Some(v) => {
                            let home = switch_index(&v.switch).ok_or_else(|| {
                                format!("{}: unknown switch {}", t.path.display(), v.switch)
                            })?;
                            arp.push((home, port_of(&models, t, home, &v.svi_name())?, ip, r.mac));
                            macs.push((
                                sw,
                                StaticMac {
                                    vlan: v.id,
                                    mac: r.mac,
                                    port,
                                },
                            ));
                        }
                        None => arp.push((sw, port, ip, r.mac)),
                    }
                }
                _ => return Err(format!("{}: unknown node {}", t.path.display(), peer.node)),
            }
        }
    }
    for (sw, port, ip, mac) in arp {
        models[sw].interfaces[usize::from(port)]
            .static_arp
            .push((ip, mac));
    }
    for (sw, entry) in macs {
        models[sw].mac_table.statics.push(entry);
    }
    for (m, up) in models.iter_mut().zip(&uplinks) {
        override_model(m, up, opts);
    }

    let mut job = opts.job.clone();
    // Flow workloads load each NIC relative to its rate.
    job.nic_bps = match opts.nic_mbps {
        Some(m) => u64::from(m) * 1_000_000,
        None => t
            .links
            .iter()
            .filter(|l| host_index(&l.a.node).is_some() || host_index(&l.b.node).is_some())
            .filter_map(|l| l.speed)
            .max()
            .map_or(100_000_000_000, |m| u64::from(m) * 1_000_000),
    };
    let workloads = std::iter::once(&opts.workload)
        .chain(&opts.more_workloads)
        .map(|w| parse_timed_workload(w, &|n| rank_of(&specs, n)))
        .collect::<Result<Vec<_>, _>>()?;
    let plan_with = |carry_data: bool| {
        JobPlan::with_workloads(
            workloads.clone(),
            ranks.clone(),
            JobOptions {
                carry_data,
                ..job.clone()
            },
        )
    };
    let mut plan = plan_with(opts.data != DataMode::Off)?;
    if opts.data == DataMode::Auto {
        let memory: usize = (0..ranks.len()).map(|r| plan.memory_bytes(r)).sum();
        if memory > AUTO_DATA_LIMIT {
            plan = plan_with(false)?;
        }
    }

    let pool = Pool::new(
        (models.len() * BUFFERS_PER_SWITCH + ranks.len() * BUFFERS_PER_NIC).min(MAX_POOL),
    );
    let mut ports: Vec<Vec<Option<Box<dyn Port>>>> = models
        .iter()
        .map(|m| m.interfaces.iter().map(|_| None).collect())
        .collect();
    let mut links = Vec::new();
    let mut nic_ends: BTreeMap<(usize, String), (RingPort, NodeId, u16)> = BTreeMap::new();
    let partition = Partition::new(
        models.len(),
        t.hosts.len(),
        opts.threads
            .unwrap_or_else(|| default_threads(models.len() + t.hosts.len())),
    );
    let inboxes: Vec<Arrivals> = (0..partition.workers())
        .map(|_| Arrivals::default())
        .collect();
    let mut lookahead_ns = Nanos::MAX;
    let node_of = |name: &str| -> Option<NodeId> {
        switch_index(name)
            .or_else(|| host_index(name).map(|h| models.len() + h))
            .map(|n| n as NodeId)
    };
    let captures = match (&opts.capture_out, opts.capture.is_empty()) {
        (_, true) => None,
        (None, false) => return Err("--capture needs --capture-out FILE".into()),
        (Some(out), false) => Some(super::capture::Captures::create(
            out,
            super::capture::resolve(t, &opts.capture)?,
            opts.capture_limit,
            plan.options().carry_data,
        )?),
    };
    let mut link_ends = Vec::new();
    for l in &t.links {
        let name = format!("{}-{}", l.a, l.b);
        let mbps = l
            .speed
            .map_or(UNKNOWN_LINK_MBPS, u64::from)
            .max(opts.nic_mbps.map_or(0, u64::from));
        // A cable takes at least a nanosecond: the lookahead that lets
        // nodes run apart (see the engine).
        let delay_ns = l.delay_ns.max(1);
        lookahead_ns = lookahead_ns.min(delay_ns);
        let (ea, eb, ctl) =
            RingLink::pair_with_delay(&name, cable_frames(delay_ns, mbps), delay_ns);
        links.push(ctl);
        let mut ends = [(0, 0); 2];
        for (end, ring, far) in [(&l.a, ea, &l.b), (&l.b, eb, &l.a)] {
            let peer = node_of(&far.node)
                .ok_or_else(|| format!("{}: unknown node {}", t.path.display(), far.node))?;
            // A switch's port number, or a host's NIC number.
            let peer_port = match (switch_index(&far.node), host_index(&far.node)) {
                (Some(ps), _) => port_of(&models, t, ps, &far.port)?,
                (None, Some(h)) => host_links(t, &t.hosts[h].name)
                    .iter()
                    .position(|(_, e, _)| e.port == far.port)
                    .unwrap_or(0) as u16,
                _ => 0,
            };
            // (peer, peer_port) is the far end: `b` while this is `a`.
            let far_index = if std::ptr::eq(end, &l.a) { 1 } else { 0 };
            ends[far_index] = (peer, peer_port);
            match (switch_index(&end.node), host_index(&end.node)) {
                (Some(sw), _) => {
                    let p = usize::from(port_of(&models, t, sw, &end.port)?);
                    let tap = captures.as_ref().and_then(|c| c.tap(&end.node, &end.port));
                    ports[sw][p] = Some(Box::new(
                        NotifyingPort::new(
                            ring,
                            peer,
                            peer_port,
                            Arc::clone(&inboxes[partition.worker_of(peer)]),
                        )
                        .with_tap(tap),
                    ));
                }
                (None, Some(h)) => {
                    nic_ends.insert((h, end.port.clone()), (ring, peer, peer_port));
                }
                _ => return Err(format!("{}: unknown node {}", t.path.display(), end.node)),
            }
        }
        link_ends.push(ends);
    }
    let mut switches = Vec::new();
    for (m, p) in models.iter().zip(ports) {
        let (mut sw, warnings) = Switch::new(m, p, pool.clone());
        // The scheduler says which ports have frames due.
        sw.use_rx_hints(true);
        if !warnings.is_empty() {
            let w: Vec<String> = warnings.iter().map(|w| format!("{w:?}")).collect();
            return Err(format!("{}: {}", m.hostname, w.join("; ")));
        }
        switches.push(sw);
    }

    let cc = match opts.cc {
        Cc::Dcqcn => CongestionControl::Dcqcn(opts.dcqcn.clone()),
        Cc::None => CongestionControl::None,
    };
    let mut host_configs = Vec::new();
    let mut nic_ports = Vec::new();
    let mut nic_rate_bps = vec![0; ranks.len()];
    let mut mtus = vec![0; ranks.len()];
    for (h, host) in t.hosts.iter().enumerate() {
        let mut configs = Vec::new();
        let mut ends = Vec::new();
        for (li, end, sw_end) in host_links(t, &host.name) {
            let l = &t.links[li];
            let rank = ranks
                .iter()
                .position(|r| r.host == h && r.name == format!("{}.{}", host.name, end.port))
                .ok_or_else(|| format!("host {} has no rank for {}", host.name, end.port))?;
            let sw = switch_index(&sw_end.node)
                .ok_or_else(|| format!("{} is cabled to a host", host.name))?;
            // The NIC's gateway: its switch port, or in a VLAN the SVI.
            let gateway = match t.link_vlan(l) {
                Some(v) => {
                    let home = switch_index(&v.switch).ok_or_else(|| {
                        format!("{}: unknown switch {}", t.path.display(), v.switch)
                    })?;
                    models[home].interfaces[usize::from(port_of(&models, t, home, &v.svi_name())?)]
                        .mac
                }
                None => {
                    models[sw].interfaces[usize::from(port_of(&models, t, sw, &sw_end.port)?)].mac
                }
            };
            let mbps = opts.nic_mbps.or(l.speed).unwrap_or(100_000);
            nic_rate_bps[rank] = u64::from(mbps) * 1_000_000;
            mtus[rank] = path_mtu(l.mtu);
            configs.push(NicConfig {
                mac: ranks[rank].mac,
                ip: ranks[rank].ip,
                gateway_mac: gateway,
                line_rate_bps: nic_rate_bps[rank],
                path_mtu: mtus[rank],
                dscp: ROCE_DSCP,
                priority: 3,
                cc: cc.clone(),
                ack_every: opts.ack_every,
                rto_ns: opts.rto_ns,
                memory_bytes: 0,
                answer_arp: true,
                catch_up_ns: 0,
            });
            let (ring, switch, switch_port) = nic_ends
                .remove(&(h, end.port.clone()))
                .ok_or_else(|| format!("{}:{} has no cable", host.name, end.port))?;
            ends.push(NicPort {
                end: ring,
                rank,
                switch,
                switch_port,
            });
        }
        host_configs.push(configs);
        nic_ports.push(ends);
    }
    let hosts = par_map(host_configs, opts.threads, |h, configs| {
        Host::new(&plan, h, configs)
    })
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    Ok(Fabric {
        switches,
        switch_names: t.switches.iter().map(|s| s.name.clone()).collect(),
        port_names: models
            .iter()
            .map(|m| m.interfaces.iter().map(|i| i.name.clone()).collect())
            .collect(),
        hosts,
        nic_ports,
        links,
        link_ends,
        plan,
        pool,
        nic_rate_bps,
        path_mtu: mtus,
        map: super::map::FabricMap::new(t, &ranks),
        partition,
        inboxes,
        lookahead_ns,
        captures,
    })
}
