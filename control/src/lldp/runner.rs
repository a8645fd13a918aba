//! The agent in a live switch: a control-plane thread between the dataplane's
//! control path and [`Agent`], and the LACP driver beside it
//! ([`LacpDriver`]: the punted frames have one reader).
//!
//! Every few milliseconds it hands punted LLDP frames to the agent, tells it
//! about links that went up or down, sends what the agent emits ahead of
//! the egress queues, and — when DCBX changes the PFC set in force on a
//! port — applies the running model with that set to the workers (between
//! bursts, like a reload). On stop it sends a shutdown LLDPDU on every port.
//!
//! The same link poll logs each port's link going down or up and applies
//! the running model without the addresses of ports whose link is down
//! (see [`without_down_links`]), so their connected routes, their
//! addresses and the static next hops through them are withdrawn while the
//! link is down and come back with it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use railyard_dataplane::clock::{Clock, MonotonicClock, Nanos};
use railyard_dataplane::fib::FibWarning;
use railyard_dataplane::model::{Logical, PortId, RouteModel, SwitchModel};
use railyard_dataplane::runtime::{ControlPath, Runtime};

use super::{agent_config, Agent, LldpSnapshot};
use crate::lacp::LacpDriver;
use crate::Loaded;
use railyard_lacp::LacpSnapshot;

/// How often the thread wakes when nothing is due sooner.
const TICK: Duration = Duration::from_millis(10);
/// How often link states are read from the workers' published counters.
const LINK_POLL_NS: Nanos = 100_000_000;

/// What the runner shares with the rest of the live switch.
#[derive(Clone, Default)]
pub struct LldpShared {
    /// The latest snapshot, for `show lldp`.
    pub snapshot: Arc<Mutex<LldpSnapshot>>,
    /// The PFC enable set DCBX put in force per port where it differs from
    /// the configuration; a reload applies its model with these.
    pub pfc_overrides: Arc<Mutex<Vec<Option<u8>>>>,
    /// Bumped on every applied reload, so the agent re-reads the configuration.
    pub generation: Arc<AtomicU64>,
    /// The routes the switch follows from the kernel (see
    /// [`crate::routing::kernel_fib`]); every model applied carries them.
    pub kernel_routes: Arc<Mutex<Arc<Vec<RouteModel>>>>,
    /// Per LACP port-channel (by its port number), the members LACP has
    /// put in the bundle (collecting and distributing); every model applied
    /// hashes the port-channel's traffic over these alone.
    pub bundles: Arc<Mutex<BTreeMap<PortId, Vec<PortId>>>>,
    /// The latest LACP snapshot, for `show lacp` and `show port-channel`
    /// (`None` without port-channels).
    pub lacp: Arc<Mutex<Option<LacpSnapshot>>>,
    /// Per port, whether its link is down as the agent last read it
    /// (`true`: down); every model applied leaves those ports' addresses
    /// out (empty until the first read).
    pub links_down: Arc<Mutex<Vec<bool>>>,
    /// Held while a model is built and applied, so two threads applying at
    /// once cannot leave the older of their models in force.
    apply_lock: Arc<Mutex<()>>,
}

impl LldpShared {
    /// `model` with the PFC sets DCBX negotiated in place of configured
    /// ones, and the kernel's routes ahead of the configured ones (so a
    /// configured `ip route` for the same prefix wins).
    pub fn effective_model(&self, model: &SwitchModel) -> SwitchModel {
        let overrides = match self.pfc_overrides.lock() {
            Ok(o) => o.clone(),
            Err(p) => p.into_inner().clone(),
        };
        let mut m = with_pfc_overrides(model, &overrides);
        let kernel = match self.kernel_routes.lock() {
            Ok(k) => Arc::clone(&k),
            Err(p) => Arc::clone(&p.into_inner()),
        };
        m.add_routes_beneath(kernel.iter().cloned());
        let bundles = match self.bundles.lock() {
            Ok(b) => b.clone(),
            Err(p) => p.into_inner().clone(),
        };
        with_bundles(&mut m, &bundles);
        let down = match self.links_down.lock() {
            Ok(d) => d.clone(),
            Err(p) => p.into_inner().clone(),
        };
        without_down_links(&mut m, &down);
        m
    }

    /// Applies [`effective_model`](Self::effective_model) of `model` to the
    /// workers and waits until they have it.
    ///
    /// # Errors
    /// The runtime's (see [`Runtime::apply`]).
    pub fn apply(&self, runtime: &Runtime, model: &SwitchModel) -> Result<Vec<FibWarning>, String> {
        let _one_at_a_time = match self.apply_lock.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        runtime.apply(self.effective_model(model))
    }
}

/// Puts each LACP port-channel's bundle in place of its configured
/// members: a member LACP has not (or no longer) put in the bundle takes no
/// traffic.
pub fn with_bundles(model: &mut SwitchModel, bundles: &BTreeMap<PortId, Vec<PortId>>) {
    for (pc, members) in bundles {
        if let Some(Logical::PortChannel { members: m, .. }) = model
            .interfaces
            .get_mut(usize::from(*pc))
            .and_then(|i| i.logical.as_mut())
        {
            m.clone_from(members);
        }
    }
}

/// Takes the addresses off every physical port whose link is down
/// (`down[i]`), as a router withdraws a down interface's connected route:
/// its subnet is no longer routed out of it (a less specific route may
/// take over), its address answers no ping or ARP, static next hops
/// through it leave their routes and ECMP groups, and the neighbours
/// learned on it are forgotten. Configuration and `show running-config`
/// keep the addresses; the applied model gets them back with the link.
pub fn without_down_links(model: &mut SwitchModel, down: &[bool]) {
    for (ifc, down) in model.interfaces.iter_mut().zip(down) {
        if *down && ifc.logical.is_none() {
            ifc.ipv4.clear();
            ifc.ipv6.clear();
        }
    }
}

/// `model` with each port's PFC set replaced where `overrides` has one.
pub fn with_pfc_overrides(model: &SwitchModel, overrides: &[Option<u8>]) -> SwitchModel {
    let mut m = model.clone();
    for (ifc, o) in m.interfaces.iter_mut().zip(overrides) {
        if let Some(set) = o {
            ifc.pfc.enabled_priorities = *set;
        }
    }
    m
}

/// Per port, the PFC set the agent puts in force where it differs from the
/// compiled `model`'s (`None` where they agree): a `mode auto` port, off in
/// the model, comes on here once its DCBX peer agrees; a willing port that
/// adopted its peer's set carries that set. These are what
/// [`LldpShared::effective_model`] applies.
pub fn pfc_overrides(agent: &Agent, model: &SwitchModel) -> Vec<Option<u8>> {
    model
        .interfaces
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let set = agent.operational_pfc(i);
            (set != m.pfc.enabled_priorities).then_some(set)
        })
        .collect()
}

/// The running agent thread.
pub struct LldpRunner {
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl LldpRunner {
    /// Starts the agent on the configuration in `running`.
    ///
    /// # Errors
    /// When the thread cannot be started.
    pub fn start(
        runtime: Arc<Runtime>,
        running: Arc<Mutex<Loaded>>,
        shared: LldpShared,
    ) -> std::io::Result<LldpRunner> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("railyard-lldp".into())
            .spawn(move || run(&runtime, &running, &shared, &flag))?;
        Ok(LldpRunner {
            stop,
            handle: Some(handle),
        })
    }

    /// Sends the shutdown LLDPDUs and stops the thread.
    pub fn stop(mut self) {
        self.halt();
    }

    fn halt(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            if h.join().is_err() {
                tracing::error!("the LLDP thread panicked");
            }
        }
    }
}

impl Drop for LldpRunner {
    fn drop(&mut self) {
        self.halt();
    }
}

/// One line per link transition, naming the port.
fn log_link(name: &str, up: bool) {
    if up {
        tracing::info!("{name}: link up");
    } else {
        tracing::warn!("{name}: link down; its addresses and connected routes are withdrawn");
    }
}

/// Records port `i`'s link as down or not in `shared`; true when that
/// changes the model to apply.
fn note_link(shared: &LldpShared, i: usize, down: bool) -> bool {
    let mut d = match shared.links_down.lock() {
        Ok(d) => d,
        Err(p) => p.into_inner(),
    };
    if d.len() <= i {
        d.resize(i + 1, false);
    }
    std::mem::replace(&mut d[i], down) != down
}

fn send(control: &ControlPath) -> impl FnMut(usize, Vec<u8>) + '_ {
    move |port, frame| {
        if let Err(e) = control.send(port as u16, &frame) {
            tracing::debug!(port, "LLDP frame not sent: {e:?}");
        }
    }
}

fn run(runtime: &Runtime, running: &Mutex<Loaded>, shared: &LldpShared, stop: &AtomicBool) {
    let clock = MonotonicClock::new();
    let control = runtime.control_path();
    let loaded = lock_loaded(running);
    let mut agent = Agent::new(agent_config(&loaded.0, &loaded.1), clock.now());
    let mut generation = shared.generation.load(Ordering::Acquire);
    let mut model = loaded.1.clone();
    let mut links: Vec<Option<bool>> = vec![None; loaded.1.interfaces.len()];
    let mut last_links: Nanos = 0;
    let mut applied: Vec<Option<u8>> = vec![None; links.len()];
    let mut out = send(&control);
    let mut lacp = LacpDriver::new(&loaded.0, &loaded.1);
    let mut bundles_applied = None;
    while !stop.load(Ordering::Relaxed) {
        let now = clock.now();
        let g = shared.generation.load(Ordering::Acquire);
        if g != generation {
            generation = g;
            let (config, m) = lock_loaded(running);
            agent.reconfigure(agent_config(&config, &m), now);
            lacp = match lacp.take() {
                Some(d) => d.reconfigured(&config, &m),
                None => LacpDriver::new(&config, &m),
            };
            bundles_applied = None;
            model = m;
        }
        while let Some(pkt) = control.recv() {
            // Slow Protocols frames (0x8809) are LACP's; the rest LLDP's.
            match (&mut lacp, pkt.data().get(12..14)) {
                (Some(l), Some(&[0x88, 0x09])) => l.receive(pkt.in_port, pkt.data(), now),
                _ => agent.receive(usize::from(pkt.in_port), pkt.data(), now),
            }
        }
        control.trim_cache();
        let mut links_changed = false;
        if now.saturating_sub(last_links) >= LINK_POLL_NS || last_links == 0 {
            last_links = now;
            let stats = runtime.stats();
            for (i, ifc) in loaded.1.interfaces.iter().enumerate() {
                let state = stats.interfaces.get(&ifc.name);
                let up = state.map(|s| s.link_up);
                if let (Some(up), Some(known)) = (up, links.get_mut(i)) {
                    if *known != Some(up) {
                        // A port without a backend is down from the start
                        // (its missing `bind` was logged then).
                        let bound = state.is_some_and(|s| s.backend != "none");
                        if ifc.logical.is_none() && bound && (known.is_some() || !up) {
                            log_link(&ifc.name, up);
                        }
                        links_changed |= note_link(shared, i, !up);
                        if known.is_some() || !up {
                            agent.link_changed(i, up, now);
                        }
                        if let Some(l) = &mut lacp {
                            l.link_changed(i as PortId, up, now);
                        }
                        *known = Some(up);
                    }
                }
            }
        }
        agent.poll(now, &mut out);
        if let Some(l) = &mut lacp {
            l.poll(now, &mut out);
        }
        let bundles = lacp.as_ref().map(LacpDriver::bundles);
        let bundles_changed = bundles.is_some() && bundles != bundles_applied;
        if bundles_changed {
            if let (Ok(mut b), Some(new)) = (shared.bundles.lock(), &bundles) {
                b.clone_from(new);
            }
        }
        let oper = pfc_overrides(&agent, &model);
        if oper != applied || bundles_changed || links_changed {
            if let Ok(mut o) = shared.pfc_overrides.lock() {
                o.clone_from(&oper);
            }
            let (_, model) = lock_loaded(running);
            match shared.apply(runtime, &model) {
                Ok(_) => {
                    for (i, (new, old)) in oper.iter().zip(&applied).enumerate() {
                        if new != old {
                            let name = model.interfaces.get(i).map_or("?", |m| m.name.as_str());
                            let set = agent.operational_pfc(i);
                            tracing::info!(
                                "{name}: DCBX puts PFC on priorities {} in force",
                                super::dcbx::prio_list(set)
                            );
                        }
                    }
                    if bundles_changed {
                        log_bundles(&model, bundles_applied.as_ref(), bundles.as_ref());
                        bundles_applied = bundles;
                    }
                    applied = oper;
                }
                Err(e) => {
                    tracing::error!("applying the DCBX PFC set, LACP bundles and link states: {e}")
                }
            }
        }
        if let Ok(mut s) = shared.snapshot.lock() {
            *s = agent.snapshot();
        }
        if let Ok(mut s) = shared.lacp.lock() {
            *s = lacp.as_ref().map(LacpDriver::snapshot);
        }
        let deadline = match (
            agent.next_deadline(),
            lacp.as_ref().and_then(LacpDriver::next_deadline),
        ) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let wait = deadline
            .map_or(TICK, |d| Duration::from_nanos(d.saturating_sub(now)))
            .min(TICK);
        std::thread::sleep(wait.max(Duration::from_millis(1)));
    }
    agent.shutdown(&mut out);
    if let Ok(mut s) = shared.snapshot.lock() {
        *s = agent.snapshot();
    }
}

/// Logs each port-channel whose bundle changed, with its members now.
fn log_bundles(
    model: &SwitchModel,
    before: Option<&BTreeMap<PortId, Vec<PortId>>>,
    now: Option<&BTreeMap<PortId, Vec<PortId>>>,
) {
    let name = |p: &PortId| {
        model
            .interfaces
            .get(usize::from(*p))
            .map_or("?", |m| m.name.as_str())
    };
    for (pc, members) in now.into_iter().flatten() {
        if before.and_then(|b| b.get(pc)) != Some(members) {
            let list: Vec<&str> = members.iter().map(name).collect();
            tracing::info!("{}: bundled members now [{}]", name(pc), list.join(", "));
        }
    }
}

/// The running configuration and its compiled model.
fn lock_loaded(running: &Mutex<Loaded>) -> (railyard_config::Config, SwitchModel) {
    let l = lock_ref(running);
    (l.config.clone(), l.compiled.model.clone())
}

fn lock_ref(m: &Mutex<Loaded>) -> std::sync::MutexGuard<'_, Loaded> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}
