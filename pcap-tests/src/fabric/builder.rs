//! Wiring a fabric: switches, cables (optionally tapped) and hosts, built
//! into a [`Fabric`].

use railyard_dataplane::clock::{Nanos, VirtualClock};
use railyard_dataplane::model::{PortId, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::{LinkControl, RingLink};
use railyard_dataplane::port::Port;
use railyard_dataplane::Pool;

use super::gaps::GapClock;
use super::{ArrivalLog, Fabric, Gaps, HostPort, TapLog, TapPort, CABLE_DELAY_NS, RING_CAPACITY};

/// Where a port is: switch number and port number.
pub type Attach = (usize, PortId);

/// Collects switches, cables and hosts, then builds a [`Fabric`].
pub struct FabricBuilder {
    models: Vec<SwitchModel>,
    ports: Vec<Vec<Option<Box<dyn Port>>>>,
    hosts: Vec<(Attach, ArrivalLog)>,
    taps: Vec<(Attach, TapLog)>,
    links: Vec<LinkControl>,
    gaps: Vec<Option<Gaps>>,
    pool_buffers: usize,
    cable_delay_ns: Nanos,
    ring_capacity: usize,
}

impl FabricBuilder {
    /// An empty fabric whose switches share one pool of `pool_buffers`
    /// packet buffers (packets cross cables, so they cross pools too).
    pub fn new(pool_buffers: usize) -> Self {
        FabricBuilder {
            models: Vec::new(),
            ports: Vec::new(),
            hosts: Vec::new(),
            taps: Vec::new(),
            links: Vec::new(),
            gaps: Vec::new(),
            pool_buffers,
            cable_delay_ns: CABLE_DELAY_NS,
            ring_capacity: RING_CAPACITY,
        }
    }

    /// Sets the one-way delay of the cables [`cable`](Self::cable) adds from
    /// now on ([`CABLE_DELAY_NS`] until set; 0: frames arrive when sent).
    pub fn cable_delay(&mut self, delay_ns: Nanos) -> &mut Self {
        self.cable_delay_ns = delay_ns;
        self
    }

    /// Sets how many frames each direction of the cables added from now on
    /// holds ([`RING_CAPACITY`] until set): enough for what a peer sends
    /// while a switch is in its longest gap, or the run counts the
    /// refusals in [`FabricRun::ring_full`](super::FabricRun::ring_full).
    pub fn ring_capacity(&mut self, frames: usize) -> &mut Self {
        self.ring_capacity = frames;
        self
    }

    /// Adds a switch; returns its number.
    pub fn switch(&mut self, model: SwitchModel) -> usize {
        self.ports
            .push((0..model.interfaces.len()).map(|_| None).collect());
        self.models.push(model);
        self.gaps.push(None);
        self.models.len() - 1
    }

    /// Gives switch `sw` worker scheduling gaps: it is not polled during
    /// them (see [`Gaps`]).
    pub fn gaps(&mut self, sw: usize, gaps: Gaps) -> &mut Self {
        if let Some(g) = self.gaps.get_mut(sw) {
            *g = Some(gaps);
        }
        self
    }

    fn place(&mut self, at: Attach, port: Box<dyn Port>) {
        let slot = &mut self.ports[at.0][usize::from(at.1)];
        assert!(slot.is_none(), "port {at:?} is already connected");
        *slot = Some(port);
    }

    /// Joins two switch ports with a cable of the set delay and capacity;
    /// with `tap`, what each end sends is recorded (logs in
    /// [`FabricRun::taps`](super::FabricRun::taps), `a`'s first).
    pub fn cable(&mut self, a: Attach, b: Attach, tap: bool) {
        let name = format!("{}:{}-{}:{}", a.0, a.1, b.0, b.1);
        let (ea, eb, link) =
            RingLink::pair_with_delay(&name, self.ring_capacity, self.cable_delay_ns);
        self.links.push(link);
        for (at, end) in [(a, ea), (b, eb)] {
            if tap {
                let (t, log) = TapPort::new(Box::new(end));
                self.taps.push((at, log));
                self.place(at, Box::new(t));
            } else {
                self.place(at, Box::new(end));
            }
        }
    }

    /// Attaches a host; returns its number (its index in
    /// [`FabricRun::arrivals`](super::FabricRun::arrivals)).
    pub fn host(&mut self, at: Attach, port: HostPort) -> usize {
        self.hosts.push((at, port.arrivals()));
        self.place(at, Box::new(port));
        self.hosts.len() - 1
    }

    /// Builds every switch.
    ///
    /// # Panics
    ///
    /// When a model has routes the switch cannot install: a fabric with a
    /// broken plan would measure nothing meaningful.
    pub fn build(self) -> Fabric {
        let pool = Pool::new(self.pool_buffers);
        let switches = self
            .models
            .iter()
            .zip(self.ports)
            .map(|(m, ports)| {
                let (sw, warnings) = Switch::new(m, ports, pool.clone());
                assert!(warnings.is_empty(), "{}: {warnings:?}", m.hostname);
                sw
            })
            .collect();
        Fabric {
            switches,
            clock: VirtualClock::new(0),
            hosts: self.hosts,
            taps: self.taps,
            links: self.links,
            gaps: self
                .gaps
                .into_iter()
                .map(|g| g.map(GapClock::new))
                .collect(),
        }
    }
}
