//! Tests of the configuration the agent gets from the book's configuration
//! text, and agent snapshots for the renderer tests.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use super::*;
use railyard_lldp::fixture;

const S: Nanos = 1_000_000_000;

/// The book's RoCEv2 switch (REFERENCE.md §5) with LLDP on and one port.
fn book_text(host: &str, ip: &str, descr: &str, extra: &str) -> String {
    format!(
        "hostname {host}
feature lldp
{extra}
class-map type qos match-any ROCEv2
  match dscp 24
class-map type qos match-any CNP
  match dscp 48
policy-map type qos QOS_CLASSIFICATION
  class ROCEv2
    set qos-group 3
  class CNP
    set qos-group 7
  class class-default
    set qos-group 0
policy-map type queuing QOS_EGRESS_PORT
  class type queuing c-out-8q-q6
    bandwidth remaining percent 0
  class type queuing c-out-8q-q3
    bandwidth remaining percent 50
    random-detect minimum-threshold 150 kbytes maximum-threshold 3000 kbytes drop-probability 7 weight 0 ecn
  class type queuing c-out-8q-q7
    priority level 1
policy-map type network-qos qos_network
  class type network-qos c-8q-nq3
    mtu 9216
    pause pfc-cos 3
system qos
  service-policy type network-qos qos_network
  service-policy type queuing output QOS_EGRESS_PORT
interface Ethernet1/1
  no switchport
  description {descr}
  mtu 9216
  ip address {ip}/31
  priority-flow-control mode auto
  service-policy type qos input QOS_CLASSIFICATION
"
    )
}

fn config_of(text: &str) -> AgentConfig {
    let parsed = railyard_config::parse_str(text, "t.conf", &Default::default()).unwrap();
    let c = crate::compile::compile(&parsed.config).unwrap();
    agent_config(&parsed.config, &c.model)
}

fn leaf1() -> AgentConfig {
    config_of(&book_text("leaf1", "10.0.0.1", "uplink to leaf2", ""))
}

fn leaf2() -> AgentConfig {
    config_of(&book_text(
        "leaf2",
        "10.0.0.2",
        "uplink to leaf1",
        "lldp tlv custom oui 00:11:22 subtype 1 info 0102",
    ))
}

/// The agent's own tests run on `railyard_lldp::fixture`: it must be exactly
/// what the book's configuration text becomes.
#[test]
fn the_book_pair_becomes_the_agent_fixture() {
    assert_eq!(leaf1(), fixture::leaf1());
    assert_eq!(leaf2(), fixture::leaf2());
    assert_eq!(leaf1().chassis_mac.0, crate::compile::base_mac("leaf1").0);
    assert_eq!(leaf1().system_description, system_description());
}

#[test]
fn pfc_mode_on_dcbx_version_and_no_pause_reach_the_agent() {
    let text = book_text("leaf1", "10.0.0.1", "x", "").replace(
        "priority-flow-control mode auto",
        "priority-flow-control mode on",
    );
    assert_eq!(config_of(&text), fixture::leaf1_pfc_on());
    let text = book_text("leaf2", "10.0.0.2", "x", "").replace(
        "  mtu 9216\n  ip",
        "  mtu 9216\n  lldp dcbx version cee\n  ip",
    );
    let cee_cfg = config_of(&text);
    assert_eq!(
        cee_cfg.ports[0].dcbx_mode,
        railyard_lldp::dcbx::DcbxMode::Cee
    );
    assert_eq!(cee_cfg, fixture::leaf2_cee());
    let text = book_text("leaf1", "10.0.0.1", "x", "").replace("    pause pfc-cos 3\n", "");
    let cfg = config_of(&text);
    assert!(cfg.ports[0].dcbx.is_none());
    assert_eq!(cfg, fixture::leaf1_without_pfc());
}

#[test]
fn tlv_select_reaches_the_agent() {
    let cfg = config_of(&book_text(
        "leaf1",
        "10.0.0.1",
        "x",
        "no lldp tlv-select dcbxp\nno lldp tlv-select port-vlan",
    ));
    assert!(!cfg.tlv_select.dcbxp && !cfg.tlv_select.port_vlan);
    assert!(cfg.tlv_select.system_name && cfg.tlv_select.management_address);
}

#[test]
fn ets_shares_normalise_to_100_with_strict_excluded() {
    let bw = normalise(
        [100, 0, 0, 50, 0, 0, 0, 0],
        [true, true, true, true, true, true, true, false],
        100,
    );
    assert_eq!(bw, [67, 0, 0, 33, 0, 0, 0, 0]);
    let equal = normalise(
        [0; 8],
        [true, true, true, false, false, false, false, false],
        100,
    );
    assert_eq!(equal, [34, 33, 33, 0, 0, 0, 0, 0]);
    assert_eq!(normalise([5; 8], [false; 8], 100), [0; 8]);
}

fn collect(a: &mut Agent, now: Nanos) -> Vec<(usize, Vec<u8>)> {
    let mut v = Vec::new();
    a.poll(now, &mut |p, f| v.push((p, f)));
    v
}

const PEER: [u8; 6] = [0x02, 0xee, 0, 0, 0, 1];

/// leaf1's view after a few seconds with leaf2 (for the renderer tests).
pub(crate) fn book_pair_snapshot() -> LldpSnapshot {
    let mut a = Agent::new(leaf1(), 0);
    let mut b = Agent::new(leaf2(), 0);
    let f = collect(&mut b, 0).remove(0).1;
    collect(&mut a, 0);
    a.receive(0, &f, 0);
    a.link_changed(0, true, 10 * S); // no-op, moves the clock to 10 s
    a.snapshot()
}

/// One frame out, three in (one malformed), one neighbour aged out.
pub(crate) fn traffic_snapshot() -> LldpSnapshot {
    let mut a = Agent::new(leaf1(), 0);
    collect(&mut a, 0);
    a.receive(0, &fixture::peer_frame(PEER, "p1", 120, vec![]), 0);
    let mut bad = fixture::peer_frame(PEER, "p1", 120, vec![]);
    bad.truncate(20);
    a.receive(0, &bad, S);
    a.receive(
        0,
        &fixture::peer_frame([2, 0xee, 0, 0, 0, 2], "p2", 120, vec![]),
        200 * S,
    );
    a.snapshot()
}

/// Two railyards whose link is in `mode auto`: the compiled models have PFC
/// off; once DCBX agrees the runner's overrides put priority 3 in force on
/// both, and the model they apply is lossless on that port.
#[test]
fn auto_link_between_railyards_comes_up_lossless_once_dcbx_agrees() {
    let compiled = |text: &str| {
        let parsed = railyard_config::parse_str(text, "t.conf", &Default::default()).unwrap();
        let c = crate::compile::compile(&parsed.config).unwrap();
        (agent_config(&parsed.config, &c.model), c.model)
    };
    let (c1, m1) = compiled(&book_text("leaf1", "10.0.0.1", "x", ""));
    let (c2, m2) = compiled(&book_text("leaf2", "10.0.0.2", "x", ""));
    assert_eq!(m1.interfaces[0].pfc.enabled_priorities, 0, "auto: off");
    assert_eq!(c1.ports[0].configured_pfc, 0x08, "but offered to DCBX");
    let (mut a, mut b) = (Agent::new(c1, 0), Agent::new(c2, 0));
    let shared = runner::LldpShared::default();
    assert_eq!(runner::pfc_overrides(&a, &m1), vec![None], "no peer yet");
    for t in 0..5 {
        let now = t * S;
        for (_, f) in collect(&mut a, now) {
            b.receive(0, &f, now);
        }
        for (_, f) in collect(&mut b, now) {
            a.receive(0, &f, now);
        }
    }
    for (agent, model) in [(&a, &m1), (&b, &m2)] {
        let o = runner::pfc_overrides(agent, model);
        assert_eq!(o, vec![Some(0x08)]);
        *shared.pfc_overrides.lock().unwrap() = o;
        let applied = shared.effective_model(model);
        assert_eq!(applied.interfaces[0].pfc.enabled_priorities, 0x08);
    }
    // The peer goes quiet past its TTL: PFC off again, the model as compiled.
    let later = 200 * S;
    let mut sink = |_: usize, _: Vec<u8>| {};
    a.poll(later, &mut sink);
    assert_eq!(runner::pfc_overrides(&a, &m1), vec![None]);
}
