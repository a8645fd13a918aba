//! LACP in a live switch: the [`railyard_lacp::Agent`] for the configured
//! port-channels, driven from the control-plane thread that also runs LLDP
//! (the one reader of the ports' punted frames).
//!
//! Members are the agent's ports under their switch port numbers, keyed by
//! their port-channel's number; `mode on` members run in the agent too
//! (they bundle while their link is up, without LACPDUs), so every
//! port-channel's bundle comes from one place. The bundles go into every
//! model the switch applies ([`crate::lldp::runner::with_bundles`]).

use std::collections::BTreeMap;

use railyard_config::{ChannelMode, Config, LacpRate};
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::model::{Logical, PortId, SwitchModel};
use railyard_lacp::wire::SystemId;
use railyard_lacp::{Agent, LacpSnapshot, Mode, PortConfig, Rate};

/// What the management socket answers to `lacp`: the agent's snapshot
/// (`None` without port-channels) and what the show commands need to name
/// its ports.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct LacpReply {
    /// The agent's snapshot.
    pub lacp: Option<LacpSnapshot>,
    /// Interface names by port number.
    pub port_names: Vec<String>,
    /// The port-channels (by number) that route rather than switch.
    pub routed: Vec<u16>,
}

impl LacpReply {
    /// The reply for `model`.
    pub fn new(lacp: Option<LacpSnapshot>, model: &SwitchModel) -> LacpReply {
        LacpReply {
            lacp,
            port_names: model.interfaces.iter().map(|i| i.name.clone()).collect(),
            routed: model
                .interfaces
                .iter()
                .filter(|i| i.l2.is_none())
                .filter_map(|i| match i.logical {
                    Some(Logical::PortChannel { number, .. }) => Some(number),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The name of port `p`.
    pub fn name(&self, p: u16) -> &str {
        self.port_names
            .get(usize::from(p))
            .map_or("?", String::as_str)
    }
}

/// LACP's default system and port priority.
const DEFAULT_PRIORITY: u16 = 32768;

/// One member as configured: what the agent is built from, compared on
/// reload so an unchanged bundle keeps its state.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Member {
    port: PortId,
    cfg: PortConfig,
}

/// The agent and what the dataplane was last told.
pub struct LacpDriver {
    agent: Agent,
    members: Vec<Member>,
    system: SystemId,
    /// Port-channel number → its port in the model.
    channel_port: BTreeMap<u16, PortId>,
}

/// The agent's members and system for `config` compiled into `model`.
fn plan(config: &Config, model: &SwitchModel) -> (SystemId, Vec<Member>, BTreeMap<u16, PortId>) {
    let mut channel_port = BTreeMap::new();
    for (i, m) in model.interfaces.iter().enumerate() {
        if let Some(Logical::PortChannel { number, .. }) = m.logical {
            channel_port.insert(number, i as PortId);
        }
    }
    let mut members = Vec::new();
    for ifc in &config.interfaces {
        let Some(g) = ifc.channel_group else { continue };
        let name = ifc.name.to_string();
        let Some(port) = model.interfaces.iter().position(|m| m.name == name) else {
            continue;
        };
        let mut cfg = PortConfig::new(model.interfaces[port].mac, g.id, port as u16 + 1);
        cfg.mode = match g.mode {
            ChannelMode::On => Mode::On,
            ChannelMode::Active => Mode::Active,
            ChannelMode::Passive => Mode::Passive,
        };
        cfg.rate = match ifc.lacp_rate {
            LacpRate::Normal => Rate::Normal,
            LacpRate::Fast => Rate::Fast,
        };
        cfg.priority = ifc.lacp_port_priority.unwrap_or(DEFAULT_PRIORITY);
        members.push(Member {
            port: port as PortId,
            cfg,
        });
    }
    // The switch's system MAC: its base MAC, which no port uses.
    let base = crate::compile::base_mac(config.hostname.as_deref().unwrap_or("railyard"));
    let system = SystemId {
        priority: config.lacp_system_priority.unwrap_or(DEFAULT_PRIORITY),
        mac: base,
    };
    (system, members, channel_port)
}

impl LacpDriver {
    /// The driver for `config`'s port-channels; `None` without any.
    pub fn new(config: &Config, model: &SwitchModel) -> Option<LacpDriver> {
        let (system, members, channel_port) = plan(config, model);
        if members.is_empty() {
            return None;
        }
        let mut agent = Agent::new(system);
        for m in &members {
            if let Err(e) = agent.add_port(m.port, m.cfg) {
                tracing::error!("LACP: port {}: {e:?}", m.port);
            }
        }
        Some(LacpDriver {
            agent,
            members,
            system,
            channel_port,
        })
    }

    /// Takes a reloaded configuration: the same members keep their state,
    /// anything else starts over.
    pub fn reconfigured(self, config: &Config, model: &SwitchModel) -> Option<LacpDriver> {
        let (system, members, channel_port) = plan(config, model);
        if system == self.system && members == self.members {
            return Some(LacpDriver {
                channel_port,
                ..self
            });
        }
        LacpDriver::new(config, model)
    }

    /// A Slow Protocols frame received on `port`.
    pub fn receive(&mut self, port: PortId, frame: &[u8], now: Nanos) {
        if let Err(e) = self.agent.receive(port, now, frame) {
            tracing::debug!(port, "LACP frame not taken: {e:?}");
        }
    }

    /// A member's link went up or down.
    pub fn link_changed(&mut self, port: PortId, up: bool, now: Nanos) {
        if self.members.iter().any(|m| m.port == port) {
            self.agent.set_link(port, up, now);
        }
    }

    /// Sends what is due.
    pub fn poll(&mut self, now: Nanos, out: &mut impl FnMut(usize, Vec<u8>)) {
        self.agent.poll(now, &mut |port, frame| {
            out(usize::from(port), frame.to_vec())
        });
    }

    /// When the agent next has something to do.
    pub fn next_deadline(&self) -> Option<Nanos> {
        self.agent.next_deadline()
    }

    /// Per port-channel (by its port), the members traffic may use now.
    pub fn bundles(&self) -> BTreeMap<PortId, Vec<PortId>> {
        self.channel_port
            .iter()
            .map(|(number, port)| (*port, self.agent.members(*number).collect()))
            .collect()
    }

    /// What `show lacp` and `show port-channel` render.
    pub fn snapshot(&self) -> LacpSnapshot {
        self.agent.snapshot()
    }
}
