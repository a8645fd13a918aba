//! Agent tests under virtual time: agents cabled back to back in memory,
//! frames passed at once, time advanced from deadline to deadline.

use super::*;
use crate::wire::{LACPDU_LEN, SLOW_PROTOCOLS_MULTICAST};

const S: Nanos = NS_PER_S;
const MS: Nanos = 1_000_000;

fn system(i: u8) -> SystemId {
    SystemId {
        priority: DEFAULT_PRIORITY,
        mac: MacAddr([0x02, 0, 0, 0, i, 0]),
    }
}

fn port_mac(agent: u8, port: u16) -> MacAddr {
    MacAddr([0x02, 0, 0, 0, agent, port as u8])
}

/// Agent `i` with the given ports, all in port-channel `key`.
fn agent(i: u8, key: u16, ports: &[u16], mode: Mode, rate: Rate) -> Agent {
    let mut a = Agent::new(system(i));
    for &p in ports {
        let mut cfg = PortConfig::new(port_mac(i, p), key, 0x100 + p);
        cfg.mode = mode;
        cfg.rate = rate;
        a.add_port(p, cfg).unwrap();
    }
    a
}

/// A port of one of the lab's agents: (agent index, port).
type End = (usize, u16);

/// One cable between two agents' ports; each direction can be cut.
struct Cable {
    a: End,
    b: End,
    a_to_b: bool,
    b_to_a: bool,
}

/// Agents and cables under one virtual clock.
struct Lab {
    agents: Vec<Agent>,
    cables: Vec<Cable>,
    now: Nanos,
    /// Every frame sent: time, agent, port, bytes.
    sent: Vec<(Nanos, usize, u16, Vec<u8>)>,
}

impl Lab {
    fn new(agents: Vec<Agent>, cables: &[(End, End)]) -> Lab {
        Lab {
            agents,
            cables: cables
                .iter()
                .map(|&(a, b)| Cable {
                    a,
                    b,
                    a_to_b: true,
                    b_to_a: true,
                })
                .collect(),
            now: 0,
            sent: Vec::new(),
        }
    }

    /// Brings every cabled port up at the current time.
    fn links_up(&mut self) {
        let now = self.now;
        for c in &self.cables {
            for (i, p) in [c.a, c.b] {
                self.agents[i].set_link(p, true, now);
            }
        }
    }

    fn link(&mut self, end: End, up: bool) {
        let now = self.now;
        self.agents[end.0].set_link(end.1, up, now);
    }

    /// Polls every agent at the current time and delivers what they send.
    fn step(&mut self) {
        let now = self.now;
        for i in 0..self.agents.len() {
            let mut out = Vec::new();
            self.agents[i].poll(now, &mut |p, f: &[u8]| out.push((p, f.to_vec())));
            for (p, f) in out {
                self.sent.push((now, i, p, f.clone()));
                let peer = self.cables.iter().find_map(|c| {
                    if c.a == (i, p) && c.a_to_b {
                        Some(c.b)
                    } else if c.b == (i, p) && c.b_to_a {
                        Some(c.a)
                    } else {
                        None
                    }
                });
                if let Some((j, q)) = peer {
                    self.agents[j].receive(q, now, &f).unwrap();
                }
            }
        }
    }

    /// Runs from deadline to deadline until `end` (inclusive).
    fn run_until(&mut self, end: Nanos) {
        for _ in 0..1_000_000 {
            self.step();
            let next = self.agents.iter().filter_map(Agent::next_deadline).min();
            match next {
                Some(t) if t <= end => {
                    assert!(t >= self.now, "deadline {t} in the past of {}", self.now);
                    self.now = t;
                }
                _ => {
                    self.now = end;
                    self.step();
                    return;
                }
            }
        }
        panic!("the agents never went quiet");
    }

    fn members(&self, agent: usize, key: u16) -> Vec<u16> {
        self.agents[agent].members(key).collect()
    }

    fn port(&self, agent: usize, port: u16) -> PortSnapshot {
        self.agents[agent]
            .snapshot()
            .ports
            .into_iter()
            .find(|p| p.port == port)
            .unwrap()
    }

    /// LACPDUs agent `i` sent on `port` in `[from, to)`.
    fn sent_between(&self, i: usize, port: u16, from: Nanos, to: Nanos) -> Vec<Nanos> {
        self.sent
            .iter()
            .filter(|(t, a, p, _)| *a == i && *p == port && (from..to).contains(t))
            .map(|(t, ..)| *t)
            .collect()
    }
}

fn pdu(frame: &[u8]) -> LacpduRepr {
    LacpduRepr::parse(&frame[14..]).unwrap()
}

/// Two agents with ports 1 and 2 in port-channel 10, cabled 1–1 and 2–2.
fn pair(mode_a: Mode, mode_b: Mode, rate: Rate) -> Lab {
    let a = agent(1, 10, &[1, 2], mode_a, rate);
    let b = agent(2, 10, &[1, 2], mode_b, rate);
    let mut lab = Lab::new(vec![a, b], &[((0, 1), (1, 1)), ((0, 2), (1, 2))]);
    lab.links_up();
    lab
}

fn bundles_after_the_aggregate_wait(rate: Rate) -> Lab {
    let mut lab = pair(Mode::Active, Mode::Active, rate);
    lab.run_until(AGGREGATE_WAIT_NS - MS);
    for i in 0..2 {
        assert!(lab.members(i, 10).is_empty(), "agent {i} bundled early");
        for p in [1, 2] {
            assert_eq!(lab.port(i, p).mux_state, MuxState::Waiting);
            assert_eq!(lab.port(i, p).status, MemberStatus::Negotiating);
        }
    }
    lab.run_until(AGGREGATE_WAIT_NS);
    for i in 0..2 {
        assert_eq!(lab.members(i, 10), [1, 2], "agent {i}");
        for p in [1, 2] {
            let s = lab.port(i, p);
            assert_eq!(s.mux_state, MuxState::CollectingDistributing);
            assert_eq!(s.rx_state, RxState::Current);
            assert_eq!(s.status, MemberStatus::Bundled);
            assert_eq!(s.flag, 'P');
            assert!(s.distributing && s.selected);
            // Actor: Activity, Aggregation, Sync, Collecting, Distributing,
            // and Timeout with the fast rate.
            let fast = if rate == Rate::Fast { 0x02 } else { 0 };
            assert_eq!(s.actor.state, 0x3d | fast);
            let partner = s.partner.unwrap();
            assert_eq!(partner.state, 0x3d | fast);
            assert_eq!(partner.system_mac, system(2 - i as u8).mac.to_string());
            assert_eq!(partner.port, 0x100 + p);
            assert_eq!(partner.key, 10);
        }
    }
    lab
}

#[test]
fn fast_rate_bundles_after_the_aggregate_wait() {
    let mut lab = bundles_after_the_aggregate_wait(Rate::Fast);
    assert_eq!(lab.port(0, 1).partner_flags, "FA");
    assert_eq!(lab.port(0, 1).periodic, PeriodicState::Fast);
    // Steady state: one LACPDU a second per port, nothing else.
    lab.run_until(20 * S);
    for i in 0..2 {
        for p in [1, 2] {
            assert_eq!(lab.sent_between(i, p, 10 * S, 20 * S).len(), 10);
        }
    }
    assert_eq!(lab.members(0, 10), [1, 2]);
}

#[test]
fn slow_rate_bundles_after_the_aggregate_wait() {
    let mut lab = bundles_after_the_aggregate_wait(Rate::Normal);
    assert_eq!(lab.port(0, 1).partner_flags, "SA");
    assert_eq!(lab.port(0, 1).periodic, PeriodicState::Slow);
    lab.run_until(200 * S);
    for i in 0..2 {
        for p in [1, 2] {
            // One every 30 s; nothing timed out.
            assert_eq!(lab.sent_between(i, p, 60 * S, 120 * S).len(), 2);
        }
        assert_eq!(lab.members(i, 10), [1, 2]);
    }
}

#[test]
fn first_lacpdus_and_their_rate_limit() {
    let mut lab = pair(Mode::Active, Mode::Active, Rate::Fast);
    lab.run_until(3 * S);
    let first = &lab
        .sent
        .iter()
        .find(|(_, a, p, _)| *a == 0 && *p == 1)
        .unwrap()
        .3;
    assert_eq!(first.len(), 14 + LACPDU_LEN);
    assert_eq!(&first[0..6], &SLOW_PROTOCOLS_MULTICAST.0);
    assert_eq!(&first[6..12], &port_mac(1, 1).0);
    assert_eq!(&first[12..14], &[0x88, 0x09]);
    let p = pdu(first);
    // Active, fast, aggregatable, defaulted and expired: nothing heard yet.
    assert_eq!(p.actor.state, State(0xc7));
    assert_eq!(p.actor.system, system(1));
    assert_eq!(
        (p.actor.key, p.actor.port, p.actor.port_priority),
        (10, 0x101, 32768)
    );
    // The partner is unknown: zeros but the asked-for short timeout.
    assert_eq!(p.partner.system, SystemId::default());
    assert_eq!(p.partner.state, State::TIMEOUT);
    // Never more than three in any second, on any port.
    for (t, i, port, _) in &lab.sent {
        let n = lab.sent_between(*i, *port, *t, t + S).len();
        assert!(
            n <= MAX_TX_PER_PERIOD,
            "{n} LACPDUs from {i}/{port} after {t}"
        );
    }
}

#[test]
fn rate_limit_holds_back_the_fourth_lacpdu() {
    let mut a = agent(1, 10, &[1], Mode::Active, Rate::Fast);
    a.set_link(1, true, 0);
    let mut sent = Vec::new();
    let mut buf = [0u8; FRAME_LEN];
    for k in 0..6u16 {
        // A partner whose port number changes each time: every LACPDU
        // makes the agent want to answer.
        let pdu = LacpduRepr {
            actor: PortInfo {
                system: system(9),
                key: 7,
                port_priority: 1,
                port: 1 + k,
                state: State::ACTIVITY | State::AGGREGATION | State::TIMEOUT,
            },
            ..LacpduRepr::default()
        };
        let n = emit_frame(port_mac(9, 1), &pdu, &mut buf).unwrap();
        let t = 10 * MS * u64::from(k);
        a.receive(1, t, &buf[..n]).unwrap();
        a.poll(t, &mut |_, _| sent.push(t));
    }
    assert_eq!(sent, [0, 10 * MS, 20 * MS]);
    // The answer waits for the oldest of the three to be a second old.
    assert_eq!(a.next_deadline(), Some(S));
    a.poll(S - 1, &mut |_, _| sent.push(S - 1));
    a.poll(S, &mut |_, _| sent.push(S));
    assert_eq!(sent, [0, 10 * MS, 20 * MS, S]);
    assert_eq!(a.snapshot().ports[0].counters.lacpdus_sent, 4);
}

/// Formed pair at 10 s, then agent 1's port 2 goes silent towards agent 0.
fn silent_partner(rate: Rate) -> (Lab, Nanos) {
    let mut lab = pair(Mode::Active, Mode::Active, rate);
    lab.run_until(10 * S);
    assert_eq!(lab.members(0, 10), [1, 2]);
    lab.cables[1].b_to_a = false;
    let last = lab
        .sent_between(1, 2, 0, 10 * S + 1)
        .last()
        .copied()
        .unwrap();
    (lab, last)
}

#[test]
fn silent_partner_expires_then_defaults_fast() {
    let (mut lab, last) = silent_partner(Rate::Fast);
    lab.run_until(last + SHORT_TIMEOUT_NS - 1);
    assert_eq!(lab.members(0, 10), [1, 2]);
    // Three fast periods without a LACPDU: EXPIRED, out of the bundle.
    lab.run_until(last + SHORT_TIMEOUT_NS);
    let s = lab.port(0, 2);
    assert_eq!(s.rx_state, RxState::Expired);
    assert_eq!(s.mux_state, MuxState::Attached);
    assert!(!s.distributing);
    assert_eq!(s.actor.state & 0x80, 0x80, "actor Expired flag");
    assert_eq!(lab.members(0, 10), [1]);
    // Agent 0 still says it is in sync (ATTACHED), so with coupled
    // control agent 1 keeps distributing until agent 0 detaches.
    lab.run_until(last + SHORT_TIMEOUT_NS + 1);
    assert_eq!(lab.members(1, 10), [1, 2]);
    // One more short timeout: DEFAULTED, suspended, partner forgotten.
    lab.run_until(last + 2 * SHORT_TIMEOUT_NS);
    let s = lab.port(0, 2);
    assert_eq!(s.rx_state, RxState::Defaulted);
    assert_eq!(s.mux_state, MuxState::Detached);
    assert_eq!(s.status, MemberStatus::Suspended);
    assert_eq!(s.flag, 's');
    assert!(s.partner.is_none() && !s.selected);
    assert_eq!(s.actor.state & 0xc0, 0x40, "Defaulted, no longer Expired");
    // Agent 1 hears agent 0 out of sync at once; port 1 never noticed.
    assert_eq!(lab.members(1, 10), [1]);
    assert_eq!(lab.members(0, 10), [1]);
    assert_eq!(lab.port(0, 1).status, MemberStatus::Bundled);
}

#[test]
fn silent_partner_expires_then_defaults_slow() {
    let (mut lab, last) = silent_partner(Rate::Normal);
    lab.run_until(last + LONG_TIMEOUT_NS - 1);
    assert_eq!(lab.members(0, 10), [1, 2]);
    lab.run_until(last + LONG_TIMEOUT_NS);
    assert_eq!(lab.port(0, 2).rx_state, RxState::Expired);
    assert_eq!(lab.members(0, 10), [1]);
    // EXPIRED asks for fast LACPDUs and waits the short timeout.
    lab.run_until(last + LONG_TIMEOUT_NS + SHORT_TIMEOUT_NS);
    assert_eq!(lab.port(0, 2).rx_state, RxState::Defaulted);
    assert_eq!(lab.members(0, 10), [1]);
}

#[test]
fn partner_back_before_defaulted_rejoins_without_waiting() {
    let (mut lab, last) = silent_partner(Rate::Fast);
    lab.run_until(last + SHORT_TIMEOUT_NS + S / 2);
    assert_eq!(lab.port(0, 2).rx_state, RxState::Expired);
    lab.cables[1].b_to_a = true;
    // Agent 1 answers agent 0's fast LACPDUs within a second; the port
    // stayed selected, so it goes straight back to distributing.
    lab.run_until(last + SHORT_TIMEOUT_NS + 2 * S);
    assert_eq!(lab.port(0, 2).rx_state, RxState::Current);
    assert_eq!(lab.members(0, 10), [1, 2]);
    assert_eq!(lab.members(1, 10), [1, 2]);
}

#[test]
fn a_different_partner_is_not_aggregated() {
    // Agent 0's ports 1 and 2 go to agent 1, port 3 to agent 2, all in
    // port-channel 10 on every side.
    let a = agent(1, 10, &[1, 2, 3], Mode::Active, Rate::Fast);
    let b = agent(2, 10, &[1, 2], Mode::Active, Rate::Fast);
    let c = agent(3, 10, &[1], Mode::Active, Rate::Fast);
    let mut lab = Lab::new(
        vec![a, b, c],
        &[((0, 1), (1, 1)), ((0, 2), (1, 2)), ((0, 3), (2, 1))],
    );
    lab.links_up();
    lab.run_until(10 * S);
    assert_eq!(lab.members(0, 10), [1, 2]);
    assert_eq!(lab.members(1, 10), [1, 2]);
    let s = lab.port(0, 3);
    assert_eq!(s.status, MemberStatus::Suspended);
    assert!(!s.selected && s.mux_state == MuxState::Detached);
    // The partner is known, it just is not the port-channel's.
    assert_eq!(s.partner.unwrap().system_mac, system(3).mac.to_string());
    // Agent 2's lone port attaches but never hears agent 0 in sync.
    let c1 = lab.port(2, 1);
    assert_eq!(c1.mux_state, MuxState::Attached);
    assert!(lab.members(2, 10).is_empty());
    let snap = lab.agents[0].snapshot();
    assert_eq!(snap.channels.len(), 1);
    assert_eq!(snap.channels[0].members, [1, 2, 3]);
    assert_eq!(snap.channels[0].bundled, [1, 2]);
    assert_eq!(
        snap.channels[0].partner_system.as_deref(),
        Some("32768,02:00:00:00:02:00")
    );
}

#[test]
fn the_port_channel_keeps_its_partner_until_it_has_none() {
    let mut a = agent(1, 10, &[1, 2, 3], Mode::Active, Rate::Fast);
    for p in [1, 2, 3] {
        a.set_link(p, true, 0);
    }
    let mut buf = [0u8; FRAME_LEN];
    let mut lacpdu = |sys: u8, port: u16| {
        let pdu = LacpduRepr {
            actor: PortInfo {
                system: system(sys),
                key: 5,
                port_priority: 1,
                port,
                state: State::ACTIVITY | State::AGGREGATION | State::TIMEOUT,
            },
            ..LacpduRepr::default()
        };
        let n = emit_frame(port_mac(sys, port), &pdu, &mut buf).unwrap();
        buf[..n].to_vec()
    };
    // A one-link partner is heard first, then a two-link one.
    let (lone, pair_1, pair_2) = (lacpdu(7, 1), lacpdu(8, 1), lacpdu(8, 2));
    a.receive(1, 0, &lone).unwrap();
    a.receive(2, 0, &pair_1).unwrap();
    a.receive(3, 0, &pair_2).unwrap();
    let snap = a.snapshot();
    let selected: Vec<bool> = snap.ports.iter().map(|p| p.selected).collect();
    assert_eq!(selected, [true, false, false]);
    assert_eq!(snap.ports[1].status, MemberStatus::Suspended);
    assert_eq!(
        snap.channels[0].partner_system.as_deref(),
        Some("32768,02:00:00:00:07:00")
    );
    // The first partner's only link goes down: the one with most links
    // takes over at once.
    a.set_link(1, false, S / 2);
    let snap = a.snapshot();
    let selected: Vec<bool> = snap.ports.iter().map(|p| p.selected).collect();
    assert_eq!(selected, [false, true, true]);
    assert_eq!(
        snap.channels[0].partner_system.as_deref(),
        Some("32768,02:00:00:00:08:00")
    );
    assert_eq!(snap.channels[0].partner_key, Some(5));
}

#[test]
fn passive_ends_never_form() {
    let mut lab = pair(Mode::Passive, Mode::Passive, Rate::Fast);
    lab.run_until(100 * S);
    assert!(
        lab.sent.is_empty(),
        "passive ports sent {} frames",
        lab.sent.len()
    );
    for i in 0..2 {
        assert!(lab.members(i, 10).is_empty());
        let s = lab.port(i, 1);
        assert_eq!(s.periodic, PeriodicState::NoPeriodic);
        assert_eq!(s.status, MemberStatus::Suspended);
    }
    assert_eq!(lab.agents[0].next_deadline(), None);
}

#[test]
fn active_and_passive_form() {
    let mut lab = pair(Mode::Active, Mode::Passive, Rate::Fast);
    lab.run_until(AGGREGATE_WAIT_NS);
    assert_eq!(lab.members(0, 10), [1, 2]);
    assert_eq!(lab.members(1, 10), [1, 2]);
    assert_eq!(lab.port(0, 1).partner_flags, "FP");
    assert_eq!(lab.port(1, 1).partner_flags, "FA");
    // The passive end speaks only after hearing the active one.
    let first_a = lab.sent_between(0, 1, 0, S)[0];
    let first_b = lab.sent_between(1, 1, 0, S)[0];
    assert!(first_b >= first_a);
}

#[test]
fn mode_on_needs_no_lacpdus() {
    let mut lab = pair(Mode::On, Mode::On, Rate::Fast);
    assert_eq!(lab.members(0, 10), [1, 2]);
    lab.run_until(60 * S);
    assert!(lab.sent.is_empty());
    assert_eq!(lab.agents[0].next_deadline(), None);
    let s = lab.port(0, 1);
    assert_eq!(
        (s.rx_state, s.status, s.flag),
        (RxState::LacpDisabled, MemberStatus::Bundled, 'P')
    );
    assert!(s.partner.is_none());
    assert_eq!(lab.agents[0].snapshot().channels[0].protocol, "NONE");
    lab.link((0, 2), false);
    assert_eq!(lab.members(0, 10), [1]);
    assert!(!lab.agents[0].distributing(2));
    // An LACPDU from an active neighbour is counted and dropped.
    let mut buf = [0u8; FRAME_LEN];
    let n = emit_frame(port_mac(9, 1), &LacpduRepr::default(), &mut buf).unwrap();
    assert_eq!(
        lab.agents[0].receive(1, 61 * S, &buf[..n]),
        Err(RxError::NotRunning)
    );
    assert_eq!(lab.port(0, 1).counters.lacpdus_received, 1);
    assert!(lab.agents[0].distributing(1));
}

#[test]
fn link_down_detaches_at_once_and_link_up_rejoins() {
    let mut lab = bundles_after_the_aggregate_wait(Rate::Fast);
    lab.run_until(5 * S + 300 * MS);
    lab.link((0, 1), false);
    lab.link((1, 1), false);
    // No timer involved: out of the bundle in the same instant.
    assert_eq!(lab.members(0, 10), [2]);
    assert_eq!(lab.members(1, 10), [2]);
    let s = lab.port(0, 1);
    assert_eq!(
        (s.status, s.flag, s.rx_state),
        (MemberStatus::Down, 'D', RxState::PortDisabled)
    );
    assert_eq!(s.mux_state, MuxState::Detached);
    assert!(s.partner.is_none());
    // Nothing goes out on a down link.
    lab.run_until(8 * S);
    assert!(lab.sent_between(0, 1, 5 * S + 300 * MS, 8 * S).is_empty());
    // Up again: the aggregate wait, then back in.
    lab.link((0, 1), true);
    lab.link((1, 1), true);
    let up = lab.now;
    lab.run_until(up + AGGREGATE_WAIT_NS - 1);
    assert_eq!(lab.members(0, 10), [2]);
    lab.run_until(up + AGGREGATE_WAIT_NS);
    assert_eq!(lab.members(0, 10), [1, 2]);
    assert_eq!(lab.members(1, 10), [1, 2]);
}

#[test]
fn a_replaced_partner_is_waited_for_again() {
    let mut lab = bundles_after_the_aggregate_wait(Rate::Fast);
    lab.run_until(5 * S);
    // Agent 1 is replaced by agent 3 with the same cabling.
    let mut c = agent(3, 10, &[1, 2], Mode::Active, Rate::Fast);
    for p in [1, 2] {
        c.set_link(p, true, lab.now);
    }
    lab.agents[1] = c;
    let t = lab.now;
    lab.run_until(t + 10 * MS);
    // The old partner's ports are gone: the members re-wait.
    assert!(lab.members(0, 10).is_empty());
    assert_eq!(lab.port(0, 1).mux_state, MuxState::Waiting);
    lab.run_until(t + AGGREGATE_WAIT_NS);
    assert_eq!(lab.members(0, 10), [1, 2]);
    assert_eq!(
        lab.agents[0].snapshot().channels[0]
            .partner_system
            .as_deref(),
        Some("32768,02:00:00:00:03:00")
    );
}

#[test]
fn receive_counts_what_it_rejects() {
    let mut a = agent(1, 10, &[1], Mode::Active, Rate::Fast);
    a.set_link(1, true, 0);
    let mut frame = [0u8; FRAME_LEN];
    let good = LacpduRepr {
        actor: PortInfo {
            system: system(2),
            key: 10,
            port_priority: 1,
            port: 1,
            state: State::ACTIVITY | State::AGGREGATION,
        },
        ..LacpduRepr::default()
    };
    emit_frame(port_mac(2, 1), &good, &mut frame).unwrap();
    assert_eq!(a.receive(9, 0, &frame), Err(RxError::UnknownPort(9)));
    assert_eq!(
        a.receive(1, 0, &frame[..13]),
        Err(RxError::NotSlowProtocols)
    );
    assert_eq!(
        a.receive(1, 0, &frame[..60]),
        Err(RxError::Malformed(LacpduError::Truncated))
    );
    let mut v0 = frame;
    v0[15] = 0;
    assert_eq!(
        a.receive(1, 0, &v0),
        Err(RxError::Malformed(LacpduError::BadVersion(0)))
    );
    let mut marker = frame;
    marker[14] = 2;
    assert_eq!(a.receive(1, 0, &marker[..60]), Err(RxError::Marker));
    let mut oam = frame;
    oam[14] = 3;
    assert_eq!(
        a.receive(1, 0, &oam),
        Err(RxError::OtherSubtype(SlowSubtype::Oam))
    );
    let mut own = good;
    own.actor.system = system(1);
    let mut looped = [0u8; FRAME_LEN];
    emit_frame(port_mac(1, 1), &own, &mut looped).unwrap();
    assert_eq!(a.receive(1, 0, &looped), Err(RxError::OwnSystem));
    assert_eq!(a.receive(1, 0, &frame), Ok(()));
    let c = a.snapshot().ports[0].counters;
    assert_eq!(
        c,
        LacpCounters {
            lacpdus_sent: 0,
            lacpdus_received: 1,
            errors: 3,
            markers_ignored: 1,
            other_ignored: 1,
        }
    );
    assert_eq!(a.snapshot().totals, c);
    // Random bytes as frames never panic and never count as LACPDUs.
    let mut seed = 0x1234_5678u32;
    for len in 0..200usize {
        let junk: Vec<u8> = (0..len)
            .map(|_| {
                seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (seed >> 16) as u8
            })
            .collect();
        let _ = a.receive(1, 1, &junk);
    }
    assert_eq!(a.snapshot().ports[0].counters.lacpdus_received, 1);
}

#[test]
fn configuration_errors() {
    let mut a = Agent::new(system(1));
    let cfg = PortConfig::new(port_mac(1, 1), 10, 1);
    a.add_port(1, cfg).unwrap();
    assert_eq!(a.add_port(1, cfg), Err(ConfigError::DuplicatePort(1)));
    assert_eq!(a.add_port(2, cfg), Err(ConfigError::DuplicateNumber(1)));
    let zero = PortConfig { number: 0, ..cfg };
    assert_eq!(a.add_port(2, zero), Err(ConfigError::ZeroNumber));
    let on = PortConfig {
        number: 2,
        mode: Mode::On,
        ..cfg
    };
    assert_eq!(a.add_port(2, on), Err(ConfigError::MixedModes(10)));
    let other_channel = PortConfig { key: 11, ..on };
    assert_eq!(a.add_port(2, other_channel), Ok(()));
    assert!(a.remove_port(2, 0) && !a.remove_port(2, 0));
    assert!(!a.distributing(1) && !a.distributing(77));
    assert_eq!(a.members(10).count(), 0);
    assert!(!ConfigError::MixedModes(10).to_string().is_empty());
}

#[test]
fn removing_a_member_leaves_the_rest_bundled() {
    let mut lab = bundles_after_the_aggregate_wait(Rate::Fast);
    let now = lab.now;
    assert!(lab.agents[0].remove_port(1, now));
    // A port out of the port-channel no longer speaks LACP.
    lab.cables.remove(0);
    assert_eq!(lab.members(0, 10), [2]);
    lab.run_until(now + 10 * S);
    assert_eq!(lab.members(0, 10), [2]);
    assert_eq!(lab.members(1, 10), [2]);
}

#[test]
fn nothing_is_sent_before_the_deadline() {
    let mut lab = pair(Mode::Active, Mode::Active, Rate::Normal);
    lab.run_until(10 * S);
    for i in 0..2 {
        let a = &mut lab.agents[i];
        let d = a.next_deadline().unwrap();
        let mut n = 0;
        a.poll(d - 1, &mut |_, _| n += 1);
        assert_eq!(n, 0);
        assert_eq!(a.next_deadline(), Some(d));
    }
}

#[test]
fn snapshot_carries_what_the_show_commands_need() {
    let lab = bundles_after_the_aggregate_wait(Rate::Fast);
    let snap = lab.agents[0].snapshot();
    assert_eq!(snap.system_priority, 32768);
    assert_eq!(snap.system_mac, "02:00:00:00:01:00");
    assert_eq!(snap.now_ns, AGGREGATE_WAIT_NS);
    let c = &snap.channels[0];
    assert_eq!((c.channel, c.protocol.as_str(), c.up), (10, "LACP", true));
    assert_eq!(c.partner_key, Some(10));
    let p = &snap.ports[0];
    assert_eq!(
        p.actor.state_text,
        "Ac-1:To-1:Ag-1:Sy-1:Co-1:Di-1:De-0:Ex-0"
    );
    assert_eq!(p.age_s, Some(0));
    assert_eq!(p.current_while_ns, Some(SHORT_TIMEOUT_NS));
    assert!(p.periodic_ns.is_some_and(|t| t <= FAST_PERIODIC_NS));
    assert!(p.counters.lacpdus_sent >= 2 && p.counters.lacpdus_received >= 2);
    let json = serde_json::to_value(&snap).unwrap();
    let port = &json["ports"][0];
    assert_eq!(port["flag"], "P");
    assert_eq!(port["status"], "bundled");
    assert_eq!(port["mux_state"], "collecting_distributing");
    assert_eq!(port["partner"]["system_mac"], "02:00:00:00:02:00");
    assert_eq!(port["partner_flags"], "FA");
    assert_eq!(json["channels"][0]["bundled"], serde_json::json!([1, 2]));
    let back: LacpSnapshot = serde_json::from_value(json).unwrap();
    assert_eq!(back, snap);
}
