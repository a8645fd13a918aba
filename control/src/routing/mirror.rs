//! Kernel mirror interfaces: the switch's ports as the kernel sees them.
//!
//! A routing suite (FRR, BIRD) talks to its peers through the kernel's
//! sockets and learns interfaces, addresses and link state from the kernel.
//! So each routed port gets a TAP in the switch's namespace named after it
//! in Linux form (`Ethernet1/1` is `Eth1-1`) with the port's MAC, MTU and
//! addresses, and carrier while the port's link is up.
//!
//! What the dataplane does not answer itself among the frames for the
//! switch's addresses (TCP and UDP: BGP, BFD, SSH; ARP replies and neighbour
//! advertisements, so the kernel's neighbour table learns the answers to
//! its own requests) comes out of [`ControlPath::recv_mirror`] and is
//! written to the port's TAP. What the kernel sends on a TAP is read here
//! and sent out of the port ahead of its egress queues, as railyard's own
//! control frames are ([`ControlPath::send`]). ARP, neighbour solicitations
//! and echo requests stay the dataplane's to answer, as without mirrors.
//!
//! One thread serves every mirror: a routing suite's traffic is a few
//! frames a second per peer, and a poll on the TAPs with a millisecond's
//! timeout keeps a BFD session's 300 ms intervals far away.
//!
//! [`ControlPath::recv_mirror`]: railyard_dataplane::runtime::ControlPath::recv_mirror
//! [`ControlPath::send`]: railyard_dataplane::runtime::ControlPath::send

use std::net::IpAddr;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_dataplane::packet::Burst;
use railyard_dataplane::port::tap::TapPort;
use railyard_dataplane::port::Port;
use railyard_dataplane::runtime::{Runtime, SendError};
use railyard_dataplane::Pool;

use super::netlink::Rtnl;

/// How often the mirrors' carrier follows the ports' links.
const LINK_POLL: Duration = Duration::from_millis(100);
/// The longest an idle mirror thread sleeps before looking at the frames
/// the dataplane punted (TAPs wake it at once).
const IDLE_WAIT_NS: u64 = 1_000_000;
/// Buffers for frames read from the TAPs (each is copied on into the
/// dataplane's pool at once).
const READ_BUFFERS: usize = 64;

/// Frames through one port's mirror, counted by the thread that serves it.
#[derive(Debug, Default)]
pub struct MirrorCounters {
    /// Frames written up to the kernel.
    pub to_kernel: AtomicU64,
    /// Frames the kernel refused or that found the TAP full.
    pub to_kernel_dropped: AtomicU64,
    /// Frames the kernel sent that left through the port.
    pub from_kernel: AtomicU64,
    /// Frames the kernel sent that the port could not take (its control
    /// inbox full, or no buffer).
    pub from_kernel_dropped: AtomicU64,
}

/// Counters of every port's mirror, by port number (ports without a mirror
/// stay zero), shared with the management socket.
pub type MirrorStats = Arc<Vec<MirrorCounters>>;

/// One port's mirror.
struct Mirror {
    port: usize,
    /// The port's NX-OS name, under which the switch's counters know it.
    name: String,
    tap: TapPort,
    index: u32,
    addresses: Vec<(IpAddr, u8)>,
    carrier: Option<bool>,
}

/// The mirrors of a switch's routed ports, created before the switch starts.
pub struct Mirrors {
    mirrors: Vec<Mirror>,
    ports: usize,
}

/// The Linux name of a port's mirror, from the port's NX-OS name.
pub fn mirror_name(port: &str) -> Option<String> {
    port.parse::<railyard_config::InterfaceName>()
        .ok()
        .map(|n| super::linux_name(&n))
}

fn addresses(ifc: &InterfaceModel) -> Vec<(IpAddr, u8)> {
    ifc.ipv4
        .iter()
        .map(|(a, l)| (IpAddr::V4(*a), *l))
        .chain(ifc.ipv6.iter().map(|(a, l)| (IpAddr::V6(*a), *l)))
        .collect()
}

impl Mirrors {
    /// Creates a mirror for every port that has an address, with the
    /// port's MAC, MTU and addresses, carrier off until the switch says
    /// the link is up.
    ///
    /// # Errors
    /// Which mirror could not be created and why (missing CAP_NET_ADMIN, no
    /// `/dev/net/tun`, a name taken by another kind of interface).
    /// `port_interfaces` are the Linux interfaces the ports are bound to:
    /// ARP goes off on them (see [`Rtnl::set_noarp`]), so that only the
    /// switch answers for the addresses the mirrors give the kernel.
    pub fn create<'a>(
        model: &SwitchModel,
        port_interfaces: impl IntoIterator<Item = &'a str>,
    ) -> Result<Mirrors, String> {
        let mut rtnl =
            Rtnl::open().map_err(|e| format!("mirror interfaces: rtnetlink socket: {e}"))?;
        for name in port_interfaces {
            rtnl.set_noarp(name)
                .map_err(|e| format!("{name}: cannot turn ARP off: {e}"))?;
        }
        let mut mirrors = Vec::new();
        for (port, ifc) in model.interfaces.iter().enumerate() {
            let want = addresses(ifc);
            if want.is_empty() {
                continue;
            }
            let Some(name) = mirror_name(&ifc.name) else {
                return Err(format!(
                    "{}: no Linux name for its mirror interface",
                    ifc.name
                ));
            };
            let fail = |what: &str, e: std::io::Error| {
                let hint = if e.kind() == std::io::ErrorKind::PermissionDenied {
                    " (needs root or CAP_NET_ADMIN)"
                } else {
                    ""
                };
                format!("{}: cannot {what} mirror {name}: {e}{hint}", ifc.name)
            };
            let tap = TapPort::open(&name).map_err(|e| fail("create", e))?;
            tap.set_carrier(false)
                .map_err(|e| fail("set carrier of", e))?;
            tap.set_up(false).map_err(|e| fail("bring down", e))?;
            tap.set_mac(ifc.mac)
                .map_err(|e| fail("set the MAC of", e))?;
            tap.set_mtu(u32::from(ifc.mtu))
                .map_err(|e| fail("set the MTU of", e))?;
            tap.set_up(true).map_err(|e| fail("bring up", e))?;
            let index = tap.index().map_err(|e| fail("find", e))?;
            for (addr, len) in &want {
                rtnl.add_address(index, *addr, *len)
                    .map_err(|e| fail(&format!("add {addr}/{len} to"), e))?;
            }
            mirrors.push(Mirror {
                port,
                name: ifc.name.clone(),
                tap,
                index,
                addresses: want,
                carrier: None,
            });
        }
        Ok(Mirrors {
            mirrors,
            ports: model.interfaces.len(),
        })
    }

    /// The mirrors' Linux names with their port numbers.
    pub fn names(&self) -> Vec<(usize, String)> {
        self.mirrors
            .iter()
            .map(|m| (m.port, m.tap.ifname().to_string()))
            .collect()
    }

    /// The mirrors' interface indexes with their port numbers.
    pub fn indexes(&self) -> Vec<(u32, u16)> {
        self.mirrors
            .iter()
            .map(|m| (m.index, m.port as u16))
            .collect()
    }

    /// Starts the thread that moves frames between the ports and their
    /// mirrors and keeps the mirrors' carrier and addresses in step with
    /// the switch. `model` is read again whenever `generation` changes.
    pub fn start(
        self,
        runtime: Arc<Runtime>,
        model: impl Fn() -> SwitchModel + Send + 'static,
        generation: Arc<AtomicU64>,
    ) -> std::io::Result<MirrorRunner> {
        let stats: MirrorStats =
            Arc::new((0..self.ports).map(|_| MirrorCounters::default()).collect());
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::clone(&stop), Arc::clone(&stats));
        let handle = std::thread::Builder::new()
            .name("railyard-mirrors".into())
            .spawn(move || {
                let mut me = self;
                me.run(&runtime, &model, &generation, &st, &s);
            })?;
        Ok(MirrorRunner {
            stop,
            stats,
            handle: Some(handle),
        })
    }

    fn run(
        &mut self,
        runtime: &Runtime,
        model: &dyn Fn() -> SwitchModel,
        generation: &AtomicU64,
        stats: &[MirrorCounters],
        stop: &AtomicBool,
    ) {
        let control = runtime.control_path();
        let pool = Pool::new(READ_BUFFERS);
        let mut by_port: Vec<Option<usize>> = vec![None; self.ports];
        for (i, m) in self.mirrors.iter().enumerate() {
            by_port[m.port] = Some(i);
        }
        let mut rtnl = Rtnl::open().ok();
        let mut seen = generation.load(Ordering::Acquire);
        let mut last_links: Option<Instant> = None;
        let mut up: Vec<Burst> = (0..self.mirrors.len()).map(|_| Burst::new()).collect();
        let mut down = Burst::new();
        while !stop.load(Ordering::Relaxed) {
            let mut moved = 0;
            while let Some(pkt) = control.recv_mirror() {
                let port = usize::from(pkt.in_port);
                match by_port.get(port).copied().flatten() {
                    Some(i) => {
                        if up[i].is_full() {
                            self.write_up(i, &mut up[i], &stats[port]);
                        }
                        up[i].push(pkt);
                    }
                    None => {
                        if let Some(c) = stats.get(port) {
                            c.to_kernel_dropped.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
                moved += 1;
            }
            for (i, burst) in up.iter_mut().enumerate() {
                if !burst.is_empty() {
                    let port = self.mirrors[i].port;
                    self.write_up(i, burst, &stats[port]);
                }
            }
            for m in &mut self.mirrors {
                let c = &stats[m.port];
                while m.tap.rx_burst(&pool, &mut down, 0) > 0 {
                    for pkt in down.drain(..) {
                        moved += 1;
                        match control.send(m.port as u16, pkt.data()) {
                            Ok(()) => c.from_kernel.fetch_add(1, Ordering::Relaxed),
                            Err(SendError::Busy | SendError::NoBuffer | SendError::NoPort) => {
                                c.from_kernel_dropped.fetch_add(1, Ordering::Relaxed)
                            }
                        };
                    }
                }
            }
            let g = generation.load(Ordering::Acquire);
            if g != seen {
                seen = g;
                self.follow(&model(), rtnl.as_mut());
            }
            if last_links.is_none_or(|t| t.elapsed() >= LINK_POLL) {
                last_links = Some(Instant::now());
                self.follow_links(runtime);
            }
            if moved == 0 {
                let fds: Vec<_> = self.mirrors.iter().map(|m| m.tap.as_fd()).collect();
                // An interrupted or failed wait only shortens the nap.
                let _ = crate::wait::block_on(&fds, IDLE_WAIT_NS);
            }
        }
    }

    fn write_up(&mut self, i: usize, burst: &mut Burst, c: &MirrorCounters) {
        let tap = &mut self.mirrors[i].tap;
        let done = tap.tx_burst(burst, 0);
        let refused = done.failed as u64;
        // What the TAP would not take now (its queue to the kernel full) is
        // dropped: a routing protocol's transport retransmits.
        let unsent = burst.len() as u64;
        burst.clear();
        c.to_kernel.fetch_add(done.sent as u64, Ordering::Relaxed);
        c.to_kernel_dropped
            .fetch_add(refused + unsent, Ordering::Relaxed);
    }

    /// Gives each mirror the carrier of its port's link.
    fn follow_links(&mut self, runtime: &Runtime) {
        let stats = runtime.stats();
        for m in &mut self.mirrors {
            let Some(ifc) = stats.interfaces.get(&m.name) else {
                continue;
            };
            let up = ifc.link_up && ifc.admin_up;
            if m.carrier != Some(up) {
                match m.tap.set_carrier(up) {
                    Ok(()) => m.carrier = Some(up),
                    Err(e) => tracing::warn!("mirror {}: {e}", m.tap.ifname()),
                }
            }
        }
    }

    /// Brings the mirrors' MTU and addresses to what a reloaded
    /// configuration says.
    fn follow(&mut self, model: &SwitchModel, rtnl: Option<&mut Rtnl>) {
        let Some(rtnl) = rtnl else { return };
        for m in &mut self.mirrors {
            let Some(ifc) = model.interfaces.get(m.port) else {
                continue;
            };
            if let Err(e) = m.tap.set_mtu(u32::from(ifc.mtu)) {
                tracing::warn!("mirror {}: {e}", m.tap.ifname());
            }
            let want = addresses(ifc);
            for (a, l) in m.addresses.iter().filter(|x| !want.contains(x)) {
                if let Err(e) = rtnl.delete_address(m.index, *a, *l) {
                    tracing::warn!("mirror {}: removing {a}/{l}: {e}", m.tap.ifname());
                }
            }
            for (a, l) in want.iter().filter(|x| !m.addresses.contains(x)) {
                if let Err(e) = rtnl.add_address(m.index, *a, *l) {
                    tracing::warn!("mirror {}: adding {a}/{l}: {e}", m.tap.ifname());
                }
            }
            m.addresses = want;
        }
    }
}

/// The running mirror thread.
pub struct MirrorRunner {
    stop: Arc<AtomicBool>,
    stats: MirrorStats,
    handle: Option<JoinHandle<()>>,
}

impl MirrorRunner {
    /// The mirrors' counters, by port number.
    pub fn stats(&self) -> MirrorStats {
        Arc::clone(&self.stats)
    }
}

impl Drop for MirrorRunner {
    /// Stops the thread; the TAPs it created go away with it.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            if h.join().is_err() {
                tracing::error!("the mirror thread panicked");
            }
        }
    }
}
