//! The kernel's routing table, followed into the switch's FIB.
//!
//! A routing suite (FRR's zebra, BIRD, `ip route`) programs the kernel of the
//! switch's namespace; railyard listens to rtnetlink's route notifications
//! and installs what it hears as routes of its own, so whatever programs
//! the kernel programs the switch. The messages are netlink-packet-route's.
//!
//! What is followed: unicast, blackhole, unreachable and prohibit routes of
//! the main table, whose next hops leave through a mirror interface (a next
//! hop on another interface is left out; a route left with none is not
//! installed). Routes the kernel makes itself (`proto kernel`: the connected
//! subnets of the mirrors' addresses) are not: railyard has its own
//! connected routes. Of several routes for one prefix (different metrics)
//! the lowest metric wins, as in the kernel. A configured `ip route` for the
//! same prefix wins over a kernel route.
//!
//! Changes are batched: the thread reads every notification waiting, then
//! hands the whole table to the workers once (a rebuilt FIB keeps each ECMP
//! group's resilient buckets), and counts the time from the first unapplied
//! notification to the workers' acknowledgement. When the kernel drops
//! notifications (the socket overran), the table is read again in full.

use std::collections::BTreeMap;
use std::io;
use std::net::IpAddr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use netlink_packet_core::{
    NetlinkHeader, NetlinkMessage, NetlinkPayload, NLM_F_APPEND, NLM_F_DUMP, NLM_F_REQUEST,
};
use netlink_packet_route::route::{
    RouteAddress, RouteAttribute, RouteHeader, RouteMessage, RouteNextHopFlags, RouteProtocol,
    RouteType,
};
use netlink_packet_route::{AddressFamily, RouteNetlinkMessage};
use netlink_sys::{protocols::NETLINK_ROUTE, Socket, SocketAddr};
use railyard_dataplane::model::{NextHopModel, PortId, RouteModel, RouteSource};
use serde::Serialize;

/// rtnetlink's multicast groups for IPv4 and IPv6 route changes.
const RTNLGRP_IPV4_ROUTE: u32 = 7;
const RTNLGRP_IPV6_ROUTE: u32 = 11;
/// The socket's receive buffer: 10,000 routes added at once are about
/// 10,000 notifications; a buffer that holds them spares a full re-read.
const RECEIVE_BUFFER: usize = 32 << 20;
/// How long the thread waits for a notification before looking at its
/// stop flag.
const IDLE_WAIT_NS: u64 = 50_000_000;

/// A change to the table, read from one route notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A route was added or replaced (`append`: next hops added to an
    /// existing route, as IPv6 multipath routes are built one hop at a time).
    Add {
        /// The route's key.
        key: Key,
        /// The kernel's `RTPROT_*` of the route.
        protocol: u8,
        /// Its next hops through the switch's ports (empty: discard).
        hops: Vec<NextHopModel>,
        /// Whether the hops add to an existing route.
        append: bool,
    },
    /// A route was deleted; `hops` names the next hops removed (all of
    /// them when empty).
    Delete {
        /// The route's key.
        key: Key,
        /// The next hops removed.
        hops: Vec<NextHopModel>,
    },
}

/// A kernel route's identity: prefix, length and metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key {
    /// The destination prefix.
    pub prefix: IpAddr,
    /// The prefix length.
    pub len: u8,
    /// The route's metric (`RTA_PRIORITY`).
    pub metric: u32,
}

/// Why a notification changes nothing in railyard's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ignored {
    /// Not in the main table (local, another VRF's table).
    OtherTable,
    /// A route the kernel made itself (`proto kernel`).
    KernelMade,
    /// Multicast, local, broadcast and other kinds railyard does not route.
    OtherKind,
    /// A next hop railyard cannot use: not through a mirror, or not IP.
    Unusable,
}

/// Reads one route message (`new`: RTM_NEWROUTE, else RTM_DELROUTE) as a
/// change, with `port_of` mapping an interface index to the switch port
/// whose mirror it is.
///
/// # Errors
/// Why the message changes nothing.
pub fn change_of(
    msg: &RouteMessage,
    new: bool,
    append: bool,
    port_of: &dyn Fn(u32) -> Option<PortId>,
) -> Result<Change, Ignored> {
    let h = &msg.header;
    let table = msg
        .attributes
        .iter()
        .find_map(|a| match a {
            RouteAttribute::Table(t) => Some(*t),
            _ => None,
        })
        .unwrap_or(u32::from(h.table));
    if table != u32::from(RouteHeader::RT_TABLE_MAIN) {
        return Err(Ignored::OtherTable);
    }
    if h.protocol == RouteProtocol::Kernel {
        return Err(Ignored::KernelMade);
    }
    let discard = match h.kind {
        RouteType::Unicast => false,
        RouteType::BlackHole | RouteType::Unreachable | RouteType::Prohibit => true,
        _ => return Err(Ignored::OtherKind),
    };
    let prefix = match (h.address_family, destination(&msg.attributes)) {
        (_, Some(a)) => a,
        (AddressFamily::Inet, None) => IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED),
        (AddressFamily::Inet6, None) => IpAddr::V6(std::net::Ipv6Addr::UNSPECIFIED),
        _ => return Err(Ignored::Unusable),
    };
    let key = Key {
        prefix,
        len: h.destination_prefix_length,
        metric: msg
            .attributes
            .iter()
            .find_map(|a| match a {
                RouteAttribute::Priority(p) => Some(*p),
                _ => None,
            })
            .unwrap_or(0),
    };
    let mut hops = Vec::new();
    let mut listed = 0;
    if !discard {
        let oif = msg.attributes.iter().find_map(|a| match a {
            RouteAttribute::Oif(i) => Some(*i),
            _ => None,
        });
        if let Some(index) = oif {
            listed += 1;
            hops.extend(next_hop(index, gateway(&msg.attributes), port_of));
        }
        for a in &msg.attributes {
            if let RouteAttribute::MultiPath(nhs) = a {
                for nh in nhs {
                    listed += 1;
                    if nh.flags.contains(RouteNextHopFlags::Dead) && new {
                        continue;
                    }
                    hops.extend(next_hop(
                        nh.interface_index,
                        gateway(&nh.attributes),
                        port_of,
                    ));
                }
            }
        }
    }
    if !new {
        return Ok(Change::Delete { key, hops });
    }
    if !discard && hops.is_empty() {
        // Nothing railyard can forward through: whatever it had for this
        // route is gone.
        return if listed == 0 || append {
            Err(Ignored::Unusable)
        } else {
            Ok(Change::Delete {
                key,
                hops: Vec::new(),
            })
        };
    }
    Ok(Change::Add {
        key,
        protocol: u8::from(h.protocol),
        hops,
        append,
    })
}

fn destination(attrs: &[RouteAttribute]) -> Option<IpAddr> {
    attrs.iter().find_map(|a| match a {
        RouteAttribute::Destination(a) => ip(a),
        _ => None,
    })
}

fn gateway(attrs: &[RouteAttribute]) -> Option<IpAddr> {
    attrs.iter().find_map(|a| match a {
        RouteAttribute::Gateway(a) => ip(a),
        RouteAttribute::Via(v) => match v {
            netlink_packet_route::route::RouteVia::Inet(a) => Some(IpAddr::V4(*a)),
            netlink_packet_route::route::RouteVia::Inet6(a) => Some(IpAddr::V6(*a)),
            _ => None,
        },
        _ => None,
    })
}

fn ip(a: &RouteAddress) -> Option<IpAddr> {
    match a {
        RouteAddress::Inet(a) => Some(IpAddr::V4(*a)),
        RouteAddress::Inet6(a) => Some(IpAddr::V6(*a)),
        _ => None,
    }
}

fn next_hop(
    index: u32,
    gateway: Option<IpAddr>,
    port_of: &dyn Fn(u32) -> Option<PortId>,
) -> Option<NextHopModel> {
    let port = port_of(index)?;
    Some(match gateway {
        Some(addr) => NextHopModel::Gateway {
            addr,
            port: Some(port),
        },
        None => NextHopModel::Interface(port),
    })
}

/// The name `ip route` gives a protocol number (`/etc/iproute2/rt_protos`
/// and FRR's additions), which `show ip route` prints as a route's source.
pub fn protocol_name(protocol: u8) -> &'static str {
    match protocol {
        1 => "redirect",
        2 => "kernel",
        3 => "boot",
        4 => "static",
        8 => "gated",
        9 => "ra",
        11 => "zebra",
        12 => "bird",
        16 => "dhcp",
        42 => "babel",
        186 => "bgp",
        187 => "isis",
        188 => "ospf",
        189 => "rip",
        192 => "eigrp",
        196 => "static",
        197 => "openfabric",
        _ => "unknown",
    }
}

/// The routes railyard holds from the kernel.
#[derive(Debug, Clone, Default)]
pub struct KernelTable {
    routes: BTreeMap<Key, (u8, Vec<NextHopModel>)>,
}

impl KernelTable {
    /// Applies one change; returns whether the table changed.
    pub fn apply(&mut self, change: Change) -> bool {
        match change {
            Change::Add {
                key,
                protocol,
                hops,
                append,
            } => {
                let entry = self.routes.entry(key).or_insert((protocol, Vec::new()));
                let mut want = if append { entry.1.clone() } else { Vec::new() };
                for h in hops {
                    if !want.contains(&h) {
                        want.push(h);
                    }
                }
                let changed = entry.0 != protocol || entry.1 != want;
                *entry = (protocol, want);
                changed
            }
            Change::Delete { key, hops } => {
                let Some(entry) = self.routes.get_mut(&key) else {
                    return false;
                };
                let before = entry.1.len();
                entry.1.retain(|h| !hops.contains(h));
                if hops.is_empty() || entry.1.is_empty() {
                    self.routes.remove(&key);
                    return true;
                }
                entry.1.len() != before
            }
        }
    }

    /// Forgets every route (before reading the kernel's table again).
    pub fn clear(&mut self) {
        self.routes.clear();
    }

    /// The routes to install: per prefix the one with the lowest metric.
    pub fn routes(&self) -> Vec<RouteModel> {
        let mut out: Vec<RouteModel> = Vec::with_capacity(self.routes.len());
        for (key, (protocol, hops)) in &self.routes {
            if out
                .last()
                .is_some_and(|r| r.prefix == key.prefix && r.len == key.len)
            {
                // Keys sort by metric within a prefix: the first one won.
                continue;
            }
            out.push(RouteModel {
                prefix: key.prefix,
                len: key.len,
                next_hops: if hops.is_empty() {
                    vec![NextHopModel::Discard]
                } else {
                    hops.clone()
                },
                source: RouteSource::Kernel {
                    protocol: *protocol,
                },
            });
        }
        out
    }
}

/// The counters of the kernel route follower, shared with `show`.
#[derive(Debug, Default)]
pub struct KernelFibCounters {
    /// Route notifications that added or replaced a route.
    pub adds: AtomicU64,
    /// Route notifications that deleted a route or some of its next hops.
    pub deletes: AtomicU64,
    /// Route notifications that changed nothing railyard routes.
    pub ignored: AtomicU64,
    /// Routes from the kernel in the workers' FIB (acknowledged).
    pub routes: AtomicU64,
    /// FIB updates handed to the workers (each covers a batch of changes).
    pub fib_updates: AtomicU64,
    /// FIB updates the workers did not acknowledge.
    pub fib_update_errors: AtomicU64,
    /// Times the kernel's table was read again in full after notifications
    /// were lost.
    pub resyncs: AtomicU64,
    /// Microseconds from the first change of the last batch to the
    /// workers' acknowledgement.
    pub last_update_us: AtomicU64,
    /// The longest such time so far.
    pub max_update_us: AtomicU64,
}

/// The follower's counters as `show` and the stats JSON print them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct KernelFibView {
    /// Route notifications that added or replaced a route.
    pub adds: u64,
    /// Route notifications that deleted a route or some of its next hops.
    pub deletes: u64,
    /// Route notifications that changed nothing railyard routes.
    pub ignored: u64,
    /// Routes railyard holds from the kernel now.
    pub routes: u64,
    /// FIB updates handed to the workers.
    pub fib_updates: u64,
    /// FIB updates the workers did not acknowledge.
    pub fib_update_errors: u64,
    /// Full re-reads of the kernel's table after lost notifications.
    pub resyncs: u64,
    /// Microseconds from a batch's first change to the workers' acknowledgement.
    pub last_update_us: u64,
    /// The longest such time so far.
    pub max_update_us: u64,
}

impl KernelFibCounters {
    /// A copy of the counters.
    pub fn view(&self) -> KernelFibView {
        let r = |a: &AtomicU64| a.load(Ordering::Relaxed);
        KernelFibView {
            adds: r(&self.adds),
            deletes: r(&self.deletes),
            ignored: r(&self.ignored),
            routes: r(&self.routes),
            fib_updates: r(&self.fib_updates),
            fib_update_errors: r(&self.fib_update_errors),
            resyncs: r(&self.resyncs),
            last_update_us: r(&self.last_update_us),
            max_update_us: r(&self.max_update_us),
        }
    }
}

/// The running follower thread; dropping it stops the thread.
pub struct KernelFib {
    stop: Arc<AtomicBool>,
    counters: Arc<KernelFibCounters>,
    handle: Option<JoinHandle<()>>,
}

impl KernelFib {
    /// Subscribes to route changes, reads the kernel's table and installs
    /// it through `install` (which returns once the workers have the new
    /// FIB), then follows every change until dropped. `ports` maps a
    /// mirror's interface index to its switch port.
    ///
    /// # Errors
    /// The rtnetlink socket's error, or the first installation's.
    pub fn start(
        ports: Vec<(u32, PortId)>,
        install: impl Fn(Vec<RouteModel>) -> Result<(), String> + Send + 'static,
    ) -> Result<KernelFib, String> {
        let fail = |what: &str, e: io::Error| format!("kernel routes: {what}: {e}");
        let mut socket = Socket::new(NETLINK_ROUTE).map_err(|e| fail("rtnetlink socket", e))?;
        socket
            .bind(&SocketAddr::new(0, 0))
            .map_err(|e| fail("bind", e))?;
        for g in [RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE] {
            socket
                .add_membership(g)
                .map_err(|e| fail("subscribe to route changes", e))?;
        }
        // A bigger buffer than rmem_max allows needs CAP_NET_ADMIN, which a
        // switch with mirrors has; without it the default stays and an
        // overrun costs a full re-read.
        if rustix::net::sockopt::set_socket_recv_buffer_size_force(socket.as_fd(), RECEIVE_BUFFER)
            .is_err()
        {
            let _ = socket.set_rx_buf_sz(RECEIVE_BUFFER);
        }
        socket
            .set_non_blocking(true)
            .map_err(|e| fail("non-blocking socket", e))?;
        let mut follower = Follower {
            socket,
            ports,
            table: KernelTable::default(),
            buf: vec![0; 1 << 20],
            seq: 0,
        };
        let counters = Arc::new(KernelFibCounters::default());
        follower
            .read_all(&counters)
            .map_err(|e| fail("read the routing table", e))?;
        follower.install(&install, &counters, Instant::now())?;
        let stop = Arc::new(AtomicBool::new(false));
        let (s, c) = (Arc::clone(&stop), Arc::clone(&counters));
        let handle = std::thread::Builder::new()
            .name("railyard-kernel-fib".into())
            .spawn(move || follower.run(&install, &c, &s))
            .map_err(|e| fail("thread", e))?;
        Ok(KernelFib {
            stop,
            counters,
            handle: Some(handle),
        })
    }

    /// The follower's counters.
    pub fn counters(&self) -> Arc<KernelFibCounters> {
        Arc::clone(&self.counters)
    }
}

impl Drop for KernelFib {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            if h.join().is_err() {
                tracing::error!("the kernel route thread panicked");
            }
        }
    }
}

struct Follower {
    socket: Socket,
    ports: Vec<(u32, PortId)>,
    table: KernelTable,
    buf: Vec<u8>,
    seq: u32,
}

/// What a read of the socket found.
enum Read {
    /// A datagram was read; whether it changed the table.
    Some(bool),
    /// Nothing waiting.
    Empty,
    /// The kernel dropped notifications: the table must be read again.
    Overrun,
}

/// What one datagram did.
#[derive(Default)]
struct Handled {
    /// It ended this socket's dump.
    done: bool,
    /// It changed the table.
    changed: bool,
}

impl Follower {
    fn run(
        &mut self,
        install: &dyn Fn(Vec<RouteModel>) -> Result<(), String>,
        counters: &KernelFibCounters,
        stop: &AtomicBool,
    ) {
        let mut first_change: Option<Instant> = None;
        while !stop.load(Ordering::Relaxed) {
            match self.read(counters) {
                Ok(Read::Some(changed)) => {
                    if changed && first_change.is_none() {
                        first_change = Some(Instant::now());
                    }
                    continue;
                }
                Ok(Read::Empty) => {}
                Ok(Read::Overrun) => {
                    counters.resyncs.fetch_add(1, Ordering::Relaxed);
                    first_change.get_or_insert_with(Instant::now);
                    if let Err(e) = self.read_all(counters) {
                        tracing::error!("kernel routes: reading the table again: {e}");
                    }
                    continue;
                }
                Err(e) => {
                    tracing::error!("kernel routes: {e}");
                    std::thread::sleep(std::time::Duration::from_millis(100));
                    continue;
                }
            }
            // Everything waiting is read: install the batch.
            if let Some(since) = first_change.take() {
                if let Err(e) = self.install(install, counters, since) {
                    tracing::error!("{e}");
                }
            }
            // An interrupted or failed wait only shortens the nap.
            let _ = crate::wait::block_on(&[self.socket.as_fd()], IDLE_WAIT_NS);
        }
    }

    fn install(
        &self,
        install: &dyn Fn(Vec<RouteModel>) -> Result<(), String>,
        counters: &KernelFibCounters,
        since: Instant,
    ) -> Result<(), String> {
        let routes = self.table.routes();
        let n = routes.len() as u64;
        counters.fib_updates.fetch_add(1, Ordering::Relaxed);
        let result = install(routes);
        let us = since.elapsed().as_micros() as u64;
        counters.last_update_us.store(us, Ordering::Relaxed);
        counters.max_update_us.fetch_max(us, Ordering::Relaxed);
        match result {
            // Counted once the workers have them: a reader that sees the
            // count sees a FIB with exactly these routes.
            Ok(()) => counters.routes.store(n, Ordering::Relaxed),
            Err(_) => {
                counters.fib_update_errors.fetch_add(1, Ordering::Relaxed);
            }
        }
        result.map_err(|e| format!("kernel routes: installing them: {e}"))
    }

    /// Forgets the table and reads the kernel's in full (a dump of both
    /// families), applying the notifications that arrive meanwhile too.
    fn read_all(&mut self, counters: &KernelFibCounters) -> io::Result<()> {
        self.table.clear();
        self.seq = self.seq.wrapping_add(1);
        let mut header = NetlinkHeader::default();
        header.flags = NLM_F_REQUEST | NLM_F_DUMP;
        header.sequence_number = self.seq;
        let mut msg = RouteMessage::default();
        msg.header.address_family = AddressFamily::Unspec;
        let mut req = NetlinkMessage::new(
            header,
            NetlinkPayload::from(RouteNetlinkMessage::GetRoute(msg)),
        );
        req.finalize();
        let mut out = vec![0; req.buffer_len()];
        req.serialize(&mut out);
        self.socket.send(&out, 0)?;
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match self.recv()? {
                None => {
                    if Instant::now() > deadline {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            "the kernel did not finish its route dump",
                        ));
                    }
                    let _ = crate::wait::block_on(&[self.socket.as_fd()], IDLE_WAIT_NS);
                }
                Some(n) => {
                    if self.handle(n, counters)?.done {
                        return Ok(());
                    }
                }
            }
        }
    }

    /// Reads what is waiting.
    fn read(&mut self, counters: &KernelFibCounters) -> io::Result<Read> {
        match self.recv() {
            Ok(None) => Ok(Read::Empty),
            Ok(Some(n)) => Ok(Read::Some(self.handle(n, counters)?.changed)),
            // ENOBUFS: the kernel dropped notifications for this socket.
            Err(e) if e.raw_os_error() == Some(libc::ENOBUFS) => Ok(Read::Overrun),
            Err(e) => Err(e),
        }
    }

    /// One datagram's length, or `None` when nothing is waiting.
    fn recv(&mut self) -> io::Result<Option<usize>> {
        match self.socket.recv(&mut &mut self.buf[..], 0) {
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Applies the messages of one datagram of `n` bytes.
    fn handle(&mut self, n: usize, counters: &KernelFibCounters) -> io::Result<Handled> {
        let mut off = 0;
        let mut out = Handled::default();
        let ports = &self.ports;
        let port_of = |index: u32| ports.iter().find(|(i, _)| *i == index).map(|(_, p)| *p);
        while off < n {
            let msg = match NetlinkMessage::<RouteNetlinkMessage>::deserialize(&self.buf[off..n]) {
                Ok(m) => m,
                Err(e) => {
                    // A message this crate cannot read is counted and
                    // skipped by its length, as the kernel framed it.
                    counters.ignored.fetch_add(1, Ordering::Relaxed);
                    tracing::debug!("kernel routes: unreadable message: {e}");
                    let len = self
                        .buf
                        .get(off..off + 4)
                        .map_or(0, |b| u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize);
                    if len == 0 {
                        break;
                    }
                    off += len;
                    continue;
                }
            };
            let len = msg.header.length as usize;
            let append = msg.header.flags & NLM_F_APPEND != 0;
            // Only a reply to our dump ends in Done or Error.
            let ours = msg.header.sequence_number == self.seq;
            let change = match msg.payload {
                NetlinkPayload::InnerMessage(RouteNetlinkMessage::NewRoute(r)) => {
                    Some(change_of(&r, true, append, &port_of))
                }
                NetlinkPayload::InnerMessage(RouteNetlinkMessage::DelRoute(r)) => {
                    Some(change_of(&r, false, false, &port_of))
                }
                NetlinkPayload::Done(_) if ours => {
                    out.done = true;
                    None
                }
                NetlinkPayload::Error(e) if ours => {
                    if let Some(code) = e.code {
                        return Err(io::Error::from_raw_os_error(-code.get()));
                    }
                    None
                }
                _ => None,
            };
            if let Some(change) = change {
                let c = match &change {
                    Ok(Change::Add { .. }) => &counters.adds,
                    Ok(Change::Delete { .. }) => &counters.deletes,
                    Err(_) => &counters.ignored,
                };
                c.fetch_add(1, Ordering::Relaxed);
                if let Ok(change) = change {
                    out.changed |= self.table.apply(change);
                }
            }
            if len == 0 {
                break;
            }
            off += len;
        }
        Ok(out)
    }
}

/// A route railyard follows from the kernel, as the management socket
/// sends it to `show ip route` (which compiles the same configuration, so
/// port numbers agree).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct KernelRouteView {
    /// The destination prefix.
    pub prefix: IpAddr,
    /// The prefix length.
    pub len: u8,
    /// The kernel's `RTPROT_*` of the route.
    pub protocol: u8,
    /// Next hops as (gateway, port); empty for a discard route.
    pub next_hops: Vec<(Option<IpAddr>, PortId)>,
}

/// The management socket's answer to `kernel-routes`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct KernelRoutesReply {
    /// The follower's counters.
    pub counters: KernelFibView,
    /// The routes in force.
    pub routes: Vec<KernelRouteView>,
}

impl KernelRouteView {
    /// The view of an installed kernel route.
    pub fn of(r: &RouteModel) -> KernelRouteView {
        KernelRouteView {
            prefix: r.prefix,
            len: r.len,
            protocol: match r.source {
                RouteSource::Kernel { protocol } => protocol,
                RouteSource::Static => 0,
            },
            next_hops: r
                .next_hops
                .iter()
                .filter_map(|h| match *h {
                    NextHopModel::Gateway {
                        addr,
                        port: Some(p),
                    } => Some((Some(addr), p)),
                    NextHopModel::Interface(p) => Some((None, p)),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The route again, to build a FIB with.
    pub fn route(&self) -> RouteModel {
        RouteModel {
            prefix: self.prefix,
            len: self.len,
            next_hops: if self.next_hops.is_empty() {
                vec![NextHopModel::Discard]
            } else {
                self.next_hops
                    .iter()
                    .map(|(g, p)| match g {
                        Some(addr) => NextHopModel::Gateway {
                            addr: *addr,
                            port: Some(*p),
                        },
                        None => NextHopModel::Interface(*p),
                    })
                    .collect()
            },
            source: RouteSource::Kernel {
                protocol: self.protocol,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netlink_packet_route::route::{RouteNextHop, RouteScope};
    use std::net::{Ipv4Addr, Ipv6Addr};

    /// Interface 7 is port 0's mirror, 8 port 1's; 1 (`lo`) is none.
    fn port_of(index: u32) -> Option<PortId> {
        match index {
            7 => Some(0),
            8 => Some(1),
            _ => None,
        }
    }

    fn v4(s: &str) -> Ipv4Addr {
        s.parse().unwrap()
    }

    fn message(prefix: &str, len: u8, protocol: RouteProtocol) -> RouteMessage {
        let mut m = RouteMessage::default();
        m.header.address_family = AddressFamily::Inet;
        m.header.destination_prefix_length = len;
        m.header.table = RouteHeader::RT_TABLE_MAIN;
        m.header.protocol = protocol;
        m.header.scope = RouteScope::Universe;
        m.header.kind = RouteType::Unicast;
        m.attributes
            .push(RouteAttribute::Destination(RouteAddress::Inet(v4(prefix))));
        m
    }

    fn hop(index: u32, gw: &str) -> RouteNextHop {
        let mut h = RouteNextHop::default();
        h.interface_index = index;
        h.attributes = vec![RouteAttribute::Gateway(RouteAddress::Inet(v4(gw)))];
        h
    }

    fn gw(addr: &str, port: PortId) -> NextHopModel {
        NextHopModel::Gateway {
            addr: IpAddr::V4(v4(addr)),
            port: Some(port),
        }
    }

    fn key(prefix: &str, len: u8, metric: u32) -> Key {
        Key {
            prefix: IpAddr::V4(v4(prefix)),
            len,
            metric,
        }
    }

    #[test]
    fn a_bgp_multipath_route_becomes_an_ecmp_route_over_the_mirrors_ports() {
        let mut m = message("10.2.0.0", 24, RouteProtocol::Bgp);
        m.attributes.push(RouteAttribute::Priority(20));
        m.attributes.push(RouteAttribute::MultiPath(vec![
            hop(7, "10.255.0.0"),
            hop(8, "10.255.0.2"),
        ]));
        let c = change_of(&m, true, false, &port_of).unwrap();
        assert_eq!(
            c,
            Change::Add {
                key: key("10.2.0.0", 24, 20),
                protocol: 186,
                hops: vec![gw("10.255.0.0", 0), gw("10.255.0.2", 1)],
                append: false,
            }
        );
        let mut t = KernelTable::default();
        assert!(t.apply(c.clone()));
        assert!(!t.apply(c), "the same route again changes nothing");
        let routes = t.routes();
        assert_eq!(routes.len(), 1);
        assert_eq!(routes[0].source, RouteSource::Kernel { protocol: 186 });
        assert_eq!(routes[0].next_hops.len(), 2);
    }

    #[test]
    fn a_single_path_route_and_an_on_link_route_keep_gateway_and_port() {
        let mut m = message("192.0.2.0", 24, RouteProtocol::Boot);
        m.attributes
            .push(RouteAttribute::Gateway(RouteAddress::Inet(v4("10.0.0.9"))));
        m.attributes.push(RouteAttribute::Oif(8));
        match change_of(&m, true, false, &port_of).unwrap() {
            Change::Add { hops, protocol, .. } => {
                assert_eq!(hops, vec![gw("10.0.0.9", 1)]);
                assert_eq!(protocol_name(protocol), "boot");
            }
            other => panic!("{other:?}"),
        }
        let mut m = message("198.51.100.0", 24, RouteProtocol::Static);
        m.attributes.push(RouteAttribute::Oif(7));
        match change_of(&m, true, false, &port_of).unwrap() {
            Change::Add { hops, .. } => assert_eq!(hops, vec![NextHopModel::Interface(0)]),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn routes_railyard_does_not_follow_are_ignored_with_a_reason() {
        let mut local = message("10.0.0.1", 32, RouteProtocol::Kernel);
        local.header.table = 255;
        local.header.kind = RouteType::Local;
        assert_eq!(
            change_of(&local, true, false, &port_of),
            Err(Ignored::OtherTable)
        );
        let mut connected = message("10.0.0.0", 31, RouteProtocol::Kernel);
        connected.attributes.push(RouteAttribute::Oif(7));
        assert_eq!(
            change_of(&connected, true, false, &port_of),
            Err(Ignored::KernelMade)
        );
        let mut vrf = message("10.9.0.0", 16, RouteProtocol::Bgp);
        vrf.header.table = 252;
        vrf.attributes.push(RouteAttribute::Table(1001));
        assert_eq!(
            change_of(&vrf, true, false, &port_of),
            Err(Ignored::OtherTable)
        );
        let mut mcast = message("10.9.0.0", 16, RouteProtocol::Boot);
        mcast.header.kind = RouteType::Multicast;
        assert_eq!(
            change_of(&mcast, true, false, &port_of),
            Err(Ignored::OtherKind)
        );
        // Through `lo` only: nothing railyard can send it through.
        let mut lo = message("10.8.0.0", 16, RouteProtocol::Boot);
        lo.attributes.push(RouteAttribute::Oif(1));
        assert_eq!(
            change_of(&lo, true, false, &port_of),
            Ok(Change::Delete {
                key: key("10.8.0.0", 16, 0),
                hops: Vec::new()
            }),
            "a route that moved off the mirrors is withdrawn"
        );
    }

    #[test]
    fn a_blackhole_is_a_discard_route_and_a_default_route_has_no_destination() {
        let mut m = message("172.16.0.0", 12, RouteProtocol::Boot);
        m.header.kind = RouteType::BlackHole;
        let mut t = KernelTable::default();
        t.apply(change_of(&m, true, false, &port_of).unwrap());
        assert_eq!(t.routes()[0].next_hops, vec![NextHopModel::Discard]);
        let mut d = RouteMessage::default();
        d.header.address_family = AddressFamily::Inet6;
        d.header.table = RouteHeader::RT_TABLE_MAIN;
        d.header.protocol = RouteProtocol::Bgp;
        d.header.kind = RouteType::Unicast;
        d.attributes.push(RouteAttribute::Oif(7));
        d.attributes
            .push(RouteAttribute::Gateway(RouteAddress::Inet6(
                "fe80::1".parse().unwrap(),
            )));
        match change_of(&d, true, false, &port_of).unwrap() {
            Change::Add { key, .. } => {
                assert_eq!(
                    (key.prefix, key.len),
                    (IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0)
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ipv6_next_hops_appended_one_by_one_and_deleted_one_by_one() {
        let mut t = KernelTable::default();
        let k = key("10.3.0.0", 24, 0);
        let add = |h: NextHopModel, append| Change::Add {
            key: k,
            protocol: 186,
            hops: vec![h],
            append,
        };
        t.apply(add(gw("10.255.0.0", 0), false));
        t.apply(add(gw("10.255.0.2", 1), true));
        assert_eq!(t.routes()[0].next_hops.len(), 2);
        assert!(t.apply(Change::Delete {
            key: k,
            hops: vec![gw("10.255.0.0", 0)]
        }));
        assert_eq!(t.routes()[0].next_hops, vec![gw("10.255.0.2", 1)]);
        assert!(t.apply(Change::Delete {
            key: k,
            hops: vec![gw("10.255.0.2", 1)]
        }));
        assert!(t.routes().is_empty(), "the last hop gone takes the route");
        assert!(!t.apply(Change::Delete {
            key: k,
            hops: Vec::new()
        }));
    }

    #[test]
    fn of_two_metrics_the_lower_is_installed_until_it_goes() {
        let mut t = KernelTable::default();
        let add = |metric, h| Change::Add {
            key: key("10.4.0.0", 24, metric),
            protocol: 3,
            hops: vec![h],
            append: false,
        };
        t.apply(add(200, gw("10.255.0.2", 1)));
        t.apply(add(100, gw("10.255.0.0", 0)));
        assert_eq!(t.routes()[0].next_hops, vec![gw("10.255.0.0", 0)]);
        t.apply(Change::Delete {
            key: key("10.4.0.0", 24, 100),
            hops: Vec::new(),
        });
        assert_eq!(t.routes()[0].next_hops, vec![gw("10.255.0.2", 1)]);
    }

    #[test]
    fn a_route_survives_the_management_socket_round_trip() {
        let r = RouteModel {
            prefix: IpAddr::V4(v4("10.5.0.0")),
            len: 16,
            next_hops: vec![gw("10.255.0.0", 0), NextHopModel::Interface(1)],
            source: RouteSource::Kernel { protocol: 186 },
        };
        let text = serde_json::to_string(&KernelRouteView::of(&r)).unwrap();
        let back: KernelRouteView = serde_json::from_str(&text).unwrap();
        assert_eq!(back.route(), r);
    }
}
