//! Wiring a fabric: switches, cables (optionally tapped) and hosts, built
//! into a [`Fabric`].

use railyard_dataplane::clock::VirtualClock;
use railyard_dataplane::model::{PortId, SwitchModel};
use railyard_dataplane::pipeline::Switch;
use railyard_dataplane::port::ring::RingLink;
use railyard_dataplane::port::Port;
use railyard_dataplane::Pool;

use super::{ArrivalLog, Fabric, HostPort, TapLog, TapPort, RING_CAPACITY};

/// Where a port is: switch number and port number.
pub type Attach = (usize, PortId);

/// Collects switches, cables and hosts, then builds a [`Fabric`].
pub struct FabricBuilder {
    models: Vec<SwitchModel>,
    ports: Vec<Vec<Option<Box<dyn Port>>>>,
    hosts: Vec<(Attach, ArrivalLog)>,
    taps: Vec<(Attach, TapLog)>,
    pool_buffers: usize,
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
            pool_buffers,
        }
    }

    /// Adds a switch; returns its number.
    pub fn switch(&mut self, model: SwitchModel) -> usize {
        self.ports
            .push((0..model.interfaces.len()).map(|_| None).collect());
        self.models.push(model);
        self.models.len() - 1
    }

    fn place(&mut self, at: Attach, port: Box<dyn Port>) {
        let slot = &mut self.ports[at.0][usize::from(at.1)];
        assert!(slot.is_none(), "port {at:?} is already connected");
        *slot = Some(port);
    }

    /// Joins two switch ports with a cable; with `tap`, what each end sends
    /// is recorded (logs in [`FabricRun::taps`](super::FabricRun::taps), `a`'s first).
    pub fn cable(&mut self, a: Attach, b: Attach, tap: bool) {
        let name = format!("{}:{}-{}:{}", a.0, a.1, b.0, b.1);
        let (ea, eb, _) = RingLink::pair(&name, RING_CAPACITY);
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
        }
    }
}
