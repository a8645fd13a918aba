//! The LLDP/DCBX agent in railyard: the protocol and the agent live in the
//! `railyard-lldp` crate (re-exported here); this module builds the agent's
//! plain configuration from the parsed configuration and the compiled model
//! ([`agent_config`], [`local_dcbx`]) and runs it in the live switch
//! ([`runner`]).

#[cfg(test)]
pub(crate) mod config_tests;
pub mod runner;

pub use railyard_lldp::*;

use railyard_dataplane::model::{InterfaceModel, SwitchModel};
use railyard_lldp::dcbx::{App, DcbxMode, Ets, LocalDcbx, Pfc};
use railyard_lldp::wire::lldpdu::OrgTlv;

/// The system description railyard advertises.
pub fn system_description() -> String {
    format!("railyard {} software switch", env!("CARGO_PKG_VERSION"))
}

/// Splits `total` (100) over `weights` in proportion, largest remainder first,
/// so the shares are integers that sum exactly to `total`; equal shares when
/// every weight is 0. Entries whose `include` is false get 0.
fn normalise(weights: [u32; 8], include: [bool; 8], total: u32) -> [u8; 8] {
    let n = include.iter().filter(|&&i| i).count() as u32;
    let mut out = [0u8; 8];
    if n == 0 {
        return out;
    }
    let w: [u32; 8] = std::array::from_fn(|i| {
        if !include[i] {
            0
        } else if weights.iter().zip(include).all(|(&w, inc)| !inc || w == 0) {
            1
        } else {
            weights[i]
        }
    });
    let sum: u32 = w.iter().sum();
    let mut rem = [0u32; 8];
    let mut given = 0;
    for i in 0..8 {
        let scaled = w[i] * total;
        out[i] = (scaled / sum) as u8;
        rem[i] = scaled % sum;
        given += u32::from(out[i]);
    }
    let mut order: Vec<usize> = (0..8).filter(|&i| include[i]).collect();
    order.sort_by(|&a, &b| rem[b].cmp(&rem[a]).then(a.cmp(&b)));
    for &i in order.iter().cycle().take((total - given) as usize) {
        out[i] += 1;
    }
    out
}

/// The local DCBX of a port from its compiled model: priority p → TC p
/// (qos-group n is priority n), strict TCs for queues with a priority level,
/// ETS with the `bandwidth remaining percent` shares normalised to 100 over
/// the others; PFC = `enable` (the lossless priorities, which in `mode auto`
/// the compiled model leaves off), capability 8, willing when the mode is
/// `auto`; APP = RoCEv2 (UDP 4791) at the lowest lossless priority and every
/// DSCP classified into a non-zero qos-group.
pub fn local_dcbx(m: &InterfaceModel, enable: u8, willing: bool) -> LocalDcbx {
    let strict: [bool; 8] = std::array::from_fn(|q| m.queues[q].priority_level.is_some());
    let weights: [u32; 8] = std::array::from_fn(|q| {
        let qm = &m.queues[q];
        u32::from(
            qm.bandwidth_remaining_percent
                .or(qm.bandwidth_percent)
                .unwrap_or(0),
        )
    });
    let tc_bandwidth = normalise(weights, strict.map(|s| !s), 100);
    let tsa = strict.map(|s| if s { 0 } else { 2 });
    let mut app = Vec::new();
    if enable != 0 {
        app.push(App {
            priority: enable.trailing_zeros() as u8,
            selector: dcbx::SEL_UDP,
            protocol: dcbx::ROCEV2_UDP_PORT,
        });
    }
    for (dscp, &g) in m.dscp_to_qos_group.iter().enumerate() {
        if g != 0 {
            app.push(App {
                priority: g & 7,
                selector: dcbx::SEL_DSCP,
                protocol: dscp as u16,
            });
        }
    }
    LocalDcbx {
        ets: Ets {
            willing,
            prio_tc: [0, 1, 2, 3, 4, 5, 6, 7],
            tc_bandwidth,
            tsa,
        },
        pfc: Pfc {
            willing,
            mbc: false,
            cap: 8,
            enable,
        },
        app,
    }
}

/// `lldp tlv-select` as the agent takes it.
fn tlv_select(t: &railyard_config::LldpTlvSelect) -> TlvSelect {
    TlvSelect {
        dcbxp: t.dcbxp,
        management_address: t.management_address,
        port_description: t.port_description,
        port_vlan: t.port_vlan,
        power_management: t.power_management,
        system_capabilities: t.system_capabilities,
        system_description: t.system_description,
        system_name: t.system_name,
    }
}

/// Builds the agent's configuration from the parsed configuration and the
/// compiled model (ports in the model's order; per-interface LLDP settings
/// are looked up by name, defaults when absent).
pub fn agent_config(cfg: &railyard_config::Config, model: &SwitchModel) -> AgentConfig {
    let ports = model
        .interfaces
        .iter()
        .map(|m| {
            let ifc = cfg.interfaces.iter().find(|c| c.name.to_string() == m.name);
            // The lossless set as configured: the compiled model has it off
            // in `mode auto`, where DCBX decides.
            let configured_pfc = ifc.map_or(0, |c| {
                crate::compile::lossless_priorities(&cfg.effective_qos(&c.name))
            });
            let (transmit, receive, description, mode, pfc_mode, send_tlv) = match ifc {
                Some(c) => (
                    c.lldp_transmit,
                    c.lldp_receive,
                    c.description.clone(),
                    match c.dcbx_version {
                        railyard_config::DcbxVersion::Auto => DcbxMode::Auto,
                        railyard_config::DcbxVersion::Ieee => DcbxMode::Ieee,
                        railyard_config::DcbxVersion::Cee => DcbxMode::Cee,
                    },
                    c.pfc_mode,
                    c.pfc_send_tlv,
                ),
                None => (
                    true,
                    true,
                    None,
                    DcbxMode::Auto,
                    railyard_config::PfcMode::Auto,
                    false,
                ),
            };
            let auto = pfc_mode == railyard_config::PfcMode::Auto;
            let dcbx =
                (configured_pfc != 0 || send_tlv).then(|| local_dcbx(m, configured_pfc, auto));
            PortConfig {
                name: m.name.clone(),
                description,
                mac: m.mac,
                admin_up: m.admin_up,
                transmit,
                receive,
                mtu: m.mtu,
                mgmt_ipv4: m.ipv4.first().map(|(a, _)| *a),
                dcbx_mode: mode,
                dcbx,
                configured_pfc,
                pfc_auto: auto,
            }
        })
        .collect();
    AgentConfig {
        enabled: cfg.lldp.enabled,
        chassis_mac: crate::compile::base_mac(&model.hostname),
        system_name: model.hostname.clone(),
        system_description: system_description(),
        timer_s: cfg.lldp.timer_s,
        holdtime_s: cfg.lldp.holdtime_s,
        reinit_s: cfg.lldp.reinit_s,
        tlv_select: tlv_select(&cfg.lldp.tlv_select),
        custom_tlvs: cfg
            .lldp
            .custom_tlvs
            .iter()
            .map(|t| OrgTlv {
                oui: t.oui,
                subtype: t.subtype,
                info: t.info.clone(),
            })
            .collect(),
        ports,
    }
}
