//! Agent tests under virtual time: no sockets, frames passed by hand.
#![allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test

use super::*;
use crate::dcbx::{DcbxDialect, Source};
use crate::wire::dcbx::{
    CeeControl, CeeFeatureHeader, CeePfc, CeeRepr, EtsRepr, PfcRepr, Tsa, OUI_CEE,
};

use crate::fixture::{leaf1, leaf1_pfc_on, leaf1_without_pfc, leaf2, leaf2_cee, peer_frame};

const S: Nanos = NS_PER_S;

fn collect(a: &mut Agent, now: Nanos) -> Vec<(usize, Vec<u8>)> {
    let mut v = Vec::new();
    a.poll(now, &mut |p, f| v.push((p, f)));
    v
}

fn pdu_of(frame: &[u8]) -> LldpduRepr {
    LldpduRepr::parse(&frame[14..]).unwrap()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

const PEER: [u8; 6] = [0x02, 0xee, 0, 0, 0, 1];

#[test]
fn book_switch_advertises_the_reference_tlvs() {
    let cfg = leaf1();
    let port_mac = cfg.ports[0].mac;
    let mut a = Agent::new(cfg, 0);
    let out = collect(&mut a, 0);
    assert_eq!(out.len(), 1);
    let (port, f) = &out[0];
    assert_eq!(*port, 0);
    assert_eq!(&f[0..6], &[0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e]);
    assert_eq!(&f[6..12], &port_mac.0);
    assert_eq!(&f[12..14], &[0x88, 0xcc]);
    assert!(f.len() >= 60);
    let base = a.config().chassis_mac;
    // Chassis ID (MAC), Port ID (interface name), TTL 120, byte-exact.
    let mut head = vec![0x02, 0x07, 0x04];
    head.extend_from_slice(&base.0);
    head.extend_from_slice(&[0x04, 0x0c, 0x05]);
    head.extend_from_slice(b"Ethernet1/1");
    head.extend_from_slice(&[0x06, 0x02, 0x00, 0x78]);
    assert_eq!(&f[14..14 + head.len()], head.as_slice());
    let p = pdu_of(f);
    assert_eq!(p.port_description.as_deref(), Some(&b"uplink to leaf2"[..]));
    assert_eq!(p.system_name.as_deref(), Some(&b"leaf1"[..]));
    assert_eq!(
        p.system_description_lossy().unwrap(),
        format!("railyard {} software switch", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(
        p.capabilities,
        Some(CapabilitiesTlv {
            supported: 0x14,
            enabled: 0x10
        })
    );
    assert_eq!(p.management_addresses.len(), 1);
    assert_eq!(p.management_addresses[0].address, vec![10, 0, 0, 1]);
    assert_eq!(p.management_addresses[0].interface_subtype, 2);
    assert_eq!(p.management_addresses[0].interface_number, 1);
    assert_eq!(p.max_frame_size(), Some(9216 + 18));
    // Management address TLV bytes: len 12, addr len 5, IPv4, ifIndex 1, no OID.
    assert!(contains(
        f,
        &[0x10, 0x0c, 0x05, 0x01, 10, 0, 0, 1, 0x02, 0, 0, 0, 1, 0x00]
    ));
    // ETS Configuration: willing (mode auto), max TCs 0 (= 8), priority p → TC p;
    // q7 strict, q3 50 and the default queue 100 over the rest, normalised to 100.
    let bw = a.config().ports[0].dcbx.as_ref().unwrap().ets.tc_bandwidth;
    assert_eq!(bw.iter().map(|&b| u32::from(b)).sum::<u32>(), 100);
    assert_eq!(bw[7], 0);
    let mut ets = vec![
        0xfe, 0x19, 0x00, 0x80, 0xc2, 0x09, 0x80, 0x01, 0x23, 0x45, 0x67,
    ];
    ets.extend_from_slice(&bw);
    ets.extend_from_slice(&[2, 2, 2, 2, 2, 2, 2, 0]);
    assert!(contains(f, &ets), "ETS config {ets:02x?} not in {f:02x?}");
    let mut reco = vec![
        0xfe, 0x19, 0x00, 0x80, 0xc2, 0x0a, 0x00, 0x01, 0x23, 0x45, 0x67,
    ];
    reco.extend_from_slice(&bw);
    reco.extend_from_slice(&[2, 2, 2, 2, 2, 2, 2, 0]);
    assert!(contains(f, &reco));
    // PFC: willing, capability 8, priority 3 (REFERENCE §3 with W set).
    assert!(contains(
        f,
        &[0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x88, 0x08]
    ));
    // APP: RoCEv2 UDP 4791 at 3, DSCP 24 → 3, DSCP 48 → 7.
    assert!(contains(
        f,
        &[
            0xfe, 0x0e, 0x00, 0x80, 0xc2, 0x0c, 0x00, 0x63, 0x12, 0xb7, 0x65, 0x00, 0x18, 0xe5,
            0x00, 0x30
        ]
    ));
}

#[test]
fn tlv_select_and_custom_tlvs_are_respected() {
    let mut cfg = leaf2();
    cfg.tlv_select.dcbxp = false;
    cfg.tlv_select.system_description = false;
    cfg.tlv_select.management_address = false;
    let mut a = Agent::new(cfg, 0);
    let f = collect(&mut a, 0).remove(0).1;
    let p = pdu_of(&f);
    assert!(p.system_description.is_none());
    assert!(p.management_addresses.is_empty());
    assert!(p
        .org_specific
        .iter()
        .all(|o| o.oui != OUI_CEE && crate::wire::dcbx::DcbxTlv::parse(o).is_none()));
    assert!(contains(
        &f,
        &[0xfe, 0x06, 0x00, 0x11, 0x22, 0x01, 0x01, 0x02]
    ));
}

#[test]
fn timers_fast_start_then_every_30_s() {
    let mut a = Agent::new(leaf1(), 0);
    let mut times = Vec::new();
    for t in 0..=70 {
        for (_, f) in collect(&mut a, t * S) {
            assert_eq!(pdu_of(&f).ttl, 120);
            times.push(t);
        }
    }
    assert_eq!(times, vec![0, 1, 2, 3, 33, 63]);
    assert_eq!(a.next_deadline(), Some(93 * S));
    assert_eq!(a.snapshot().ports[0].counters.frames_out, 6);
}

#[test]
fn lldp_timer_and_holdtime_follow_the_config() {
    let mut cfg = leaf1();
    cfg.timer_s = 10;
    cfg.holdtime_s = 40;
    let mut a = Agent::new(cfg, 0);
    let mut times = Vec::new();
    for t in 0..=30 {
        for (_, f) in collect(&mut a, t * S) {
            assert_eq!(pdu_of(&f).ttl, 40);
            times.push(t);
        }
    }
    assert_eq!(times, vec![0, 1, 2, 3, 13, 23]);
}

#[test]
fn transmit_off_sends_shutdown_and_reinit_delays_restart() {
    let on = leaf1();
    let mut a = Agent::new(on.clone(), 0);
    for t in 0..=5 {
        collect(&mut a, t * S);
    }
    let mut off = on.clone();
    off.ports[0].transmit = false;
    a.reconfigure(off, 10 * S);
    assert_eq!(a.next_deadline(), Some(10 * S));
    let out = collect(&mut a, 10 * S);
    assert_eq!(out.len(), 1);
    let p = pdu_of(&out[0].1);
    assert_eq!(p.ttl, 0);
    assert!(p.is_shutdown());
    assert_eq!(a.next_deadline(), None);
    // Back on 1 s later: must wait for reinit (2 s after stopping).
    a.reconfigure(on, 11 * S);
    assert!(collect(&mut a, 11 * S).is_empty());
    assert_eq!(a.next_deadline(), Some(12 * S));
    let mut times = Vec::new();
    for t in 12..=16 {
        times.extend(collect(&mut a, t * S).into_iter().map(|_| t));
    }
    assert_eq!(times, vec![12, 13, 14, 15]);
}

#[test]
fn local_change_fast_starts_and_feature_off_shuts_down() {
    let cfg = leaf1();
    let mut a = Agent::new(cfg.clone(), 0);
    for t in 0..=40 {
        collect(&mut a, t * S);
    }
    // Next regular frame would be at 63 s; a changed description fast-starts.
    let mut changed = cfg.clone();
    changed.ports[0].description = Some("new".into());
    a.reconfigure(changed.clone(), 41 * S);
    let mut times = Vec::new();
    for t in 41..=50 {
        for (_, f) in collect(&mut a, t * S) {
            assert_eq!(pdu_of(&f).port_description.as_deref(), Some(&b"new"[..]));
            times.push(t);
        }
    }
    assert_eq!(times, vec![41, 42, 43, 44]);
    // The same config again is no change.
    a.reconfigure(changed.clone(), 51 * S);
    assert!(collect(&mut a, 51 * S).is_empty());
    // feature lldp off: one shutdown frame, then silence.
    let mut off = changed;
    off.enabled = false;
    a.reconfigure(off, 52 * S);
    let out = collect(&mut a, 52 * S);
    assert_eq!(out.len(), 1);
    assert_eq!(pdu_of(&out[0].1).ttl, 0);
    for t in 53..200 {
        assert!(collect(&mut a, t * S).is_empty());
    }
}

#[test]
fn link_down_forgets_and_link_up_fast_starts() {
    let mut a = Agent::new(leaf1(), 0);
    collect(&mut a, 0);
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), S / 2);
    assert_eq!(a.snapshot().ports[0].neighbors.len(), 1);
    a.link_changed(0, false, 5 * S);
    assert!(a.snapshot().ports[0].neighbors.is_empty());
    assert!(collect(&mut a, 6 * S).is_empty());
    a.link_changed(0, true, 10 * S);
    let mut times = Vec::new();
    for t in 10..=20 {
        times.extend(collect(&mut a, t * S).into_iter().map(|_| t));
    }
    assert_eq!(times, vec![10, 11, 12, 13]);
}

#[test]
fn shutdown_sends_ttl_zero_on_every_transmitting_port() {
    let mut a = Agent::new(leaf1(), 0);
    collect(&mut a, 0);
    let mut out = Vec::new();
    a.shutdown(&mut |p, f| out.push((p, f)));
    assert_eq!(out.len(), 1);
    assert_eq!(pdu_of(&out[0].1).ttl, 0);
    assert!(out[0].1.len() >= 60);
    assert!(collect(&mut a, 100 * S).is_empty());
}

#[test]
fn receive_ages_removes_on_ttl_zero_and_bounds_the_table() {
    let mut a = Agent::new(leaf1(), 0);
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), 0);
    let s = a.snapshot();
    assert_eq!(s.ports[0].neighbors.len(), 1);
    assert_eq!(s.ports[0].neighbors[0].chassis_id, "02:ee:00:00:00:01");
    assert_eq!(s.ports[0].neighbors[0].port_id, "p1");
    collect(&mut a, 119 * S);
    assert_eq!(a.snapshot().ports[0].neighbors.len(), 1);
    collect(&mut a, 120 * S);
    let s = a.snapshot();
    assert!(s.ports[0].neighbors.is_empty());
    assert_eq!(s.ports[0].counters.ageouts, 1);
    // Refresh keeps one entry; TTL 0 removes it at once.
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), 130 * S);
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), 131 * S);
    assert_eq!(a.snapshot().ports[0].neighbors.len(), 1);
    a.receive(0, &peer_frame(PEER, "p1", 0, vec![]), 132 * S);
    assert!(a.snapshot().ports[0].neighbors.is_empty());
    // At most 8 neighbours.
    for k in 0..9u8 {
        let mac = [0x02, 0xee, 0, 0, 1, k];
        a.receive(0, &peer_frame(mac, "p", 120, vec![]), 140 * S);
    }
    let s = a.snapshot();
    assert_eq!(s.ports[0].neighbors.len(), MAX_NEIGHBORS_PER_PORT);
    assert_eq!(s.ports[0].counters.too_many_neighbors, 1);
    assert_eq!(s.ports[0].counters.frames_discarded, 1);
    assert_eq!(s.ports[0].counters.ageouts, 1);
    assert_eq!(s.totals.frames_in, 13);
}

#[test]
fn malformed_frames_are_counted_and_never_panic() {
    let mut a = Agent::new(leaf1(), 0);
    let good = peer_frame(PEER, "p1", 120, vec![]);
    // Truncated: cut the End TLV off.
    let mut bad = good.clone();
    bad.truncate(14 + 9 + 4 + 4);
    a.receive(0, &bad, 0);
    let c = a.snapshot().ports[0].counters;
    assert_eq!(
        (c.frames_in, c.frames_in_error, c.frames_discarded),
        (1, 1, 1)
    );
    assert!(a.snapshot().ports[0].neighbors.is_empty());
    // Not LLDP, too short, unknown port: ignored.
    a.receive(0, &[0u8; 10], 0);
    a.receive(0, &good[..13], 0);
    a.receive(7, &good, 0);
    let mut ipv4 = good.clone();
    ipv4[12] = 0x08;
    ipv4[13] = 0x00;
    a.receive(0, &ipv4, 0);
    assert_eq!(a.snapshot().ports[0].counters.frames_in, 1);
    // Every truncation and a byte-flip sweep over a DCBX-bearing frame.
    let mut b = Agent::new(leaf2(), 0);
    let f = collect(&mut b, 0).remove(0).1;
    for n in 0..f.len() {
        a.receive(0, &f[..n], S);
    }
    let mut x: u32 = 12345;
    for i in 14..f.len() {
        for _ in 0..8 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let mut g = f.clone();
            g[i] ^= (x >> 16) as u8 | 1;
            a.receive(0, &g, 2 * S);
            let _ = a.operational_pfc(0);
            let _ = a.snapshot();
        }
    }
    collect(&mut a, 3 * S);
}

#[test]
fn unknown_and_org_tlvs_are_kept_raw_and_counted() {
    let mut pdu = LldpduRepr::new(
        ChassisIdTlv {
            subtype: ChassisIdSubtype::Local,
            id: b"box".to_vec(),
        },
        PortIdTlv {
            subtype: PortIdSubtype::Local,
            id: b"7".to_vec(),
        },
        120,
    );
    pdu.unknown.push(crate::wire::lldpdu::UnknownTlv {
        tlv_type: 42,
        value: vec![0xde, 0xad],
    });
    pdu.org_specific.push(OrgTlv {
        oui: [0x00, 0x11, 0x22],
        subtype: 9,
        info: vec![1, 2, 3],
    });
    // A malformed PFC TLV (3 bytes of info) is discarded, the frame kept.
    pdu.org_specific.push(OrgTlv {
        oui: [0x00, 0x80, 0xc2],
        subtype: 0x0b,
        info: vec![1, 2, 3],
    });
    let mut a = Agent::new(leaf1(), 0);
    a.receive(0, &ethernet_frame(MacAddr(PEER), &pdu.to_vec().unwrap()), 0);
    let s = a.snapshot();
    let n = &s.ports[0].neighbors[0];
    assert_eq!(n.chassis_id, "box");
    assert_eq!(n.unknown_tlvs[0].tlv_type, 42);
    assert_eq!(n.unknown_tlvs[0].value_hex, "dead");
    assert_eq!(n.org_tlvs[0].oui, "00-11-22");
    assert_eq!(n.org_tlvs[0].info_hex, "010203");
    assert_eq!(s.ports[0].counters.tlvs_unrecognized, 2);
    assert_eq!(s.ports[0].counters.tlvs_discarded, 1);
}

#[test]
fn tagged_lldp_frames_are_accepted() {
    let mut a = Agent::new(leaf1(), 0);
    let f = peer_frame(PEER, "p1", 120, vec![]);
    let mut tagged = f[..12].to_vec();
    tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05]);
    tagged.extend_from_slice(&f[12..]);
    a.receive(0, &tagged, 0);
    assert_eq!(a.snapshot().ports[0].neighbors.len(), 1);
}

#[test]
fn receive_disabled_counts_and_discards() {
    let mut cfg = leaf1();
    cfg.ports[0].receive = false;
    let mut a = Agent::new(cfg, 0);
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), 0);
    let s = a.snapshot();
    assert!(s.ports[0].neighbors.is_empty());
    assert_eq!(s.ports[0].counters.frames_discarded, 1);
}

fn pfc_tlv(willing: bool, enable: u8) -> OrgTlv {
    PfcRepr {
        willing,
        mbc: false,
        cap: 8,
        enable,
    }
    .to_org_tlv()
    .unwrap()
}

#[test]
fn willing_local_adopts_non_willing_peer_pfc_and_readvertises_it() {
    let mut a = Agent::new(leaf1(), 0);
    // `mode auto` with no peer: nothing in force, the configured set advertised.
    assert_eq!(a.operational_pfc(0), 0);
    a.receive(
        0,
        &peer_frame(PEER, "p1", 120, vec![pfc_tlv(false, 0x18)]),
        0,
    );
    assert_eq!(a.operational_pfc(0), 0x18);
    let s = a.snapshot();
    assert_eq!(s.ports[0].dcbx.operational.pfc_source, Source::Peer);
    assert!(s.ports[0].dcbx.operational.mismatches.is_empty());
    // Advertises the adopted set, still willing, at once (a fast start).
    let f = collect(&mut a, 0).remove(0).1;
    assert!(contains(
        &f,
        &[0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x88, 0x18]
    ));
    // Peer gone (TTL 0): no agreeing peer, so no PFC in force (`auto`);
    // the configured set is advertised again at once.
    a.receive(0, &peer_frame(PEER, "p1", 0, vec![]), 10 * S);
    assert_eq!(a.operational_pfc(0), 0);
    let again = collect(&mut a, 10 * S);
    assert_eq!(again.len(), 1, "no immediate re-advertisement");
    assert!(contains(
        &again[0].1,
        &[0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x88, 0x08]
    ));
}

#[test]
fn non_willing_local_keeps_its_own_and_reports_mismatch() {
    let mut a = Agent::new(leaf1_pfc_on(), 0);
    let f = collect(&mut a, 0).remove(0).1;
    assert!(contains(
        &f,
        &[0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x08, 0x08]
    ));
    a.receive(
        0,
        &peer_frame(PEER, "p1", 120, vec![pfc_tlv(false, 0x10)]),
        0,
    );
    assert_eq!(a.operational_pfc(0), 0x08);
    let s = a.snapshot();
    assert_eq!(s.ports[0].dcbx.operational.mismatches.len(), 1);
    // A peer with no DCBX at all is a mismatch too.
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), S);
    let s = a.snapshot();
    assert_eq!(
        s.ports[0].dcbx.operational.mismatches,
        vec!["peer advertises no DCBX TLVs".to_string()]
    );
    assert_eq!(a.operational_pfc(0), 0x08);
}

#[test]
fn auto_port_has_no_pfc_until_a_dcbx_peer_agrees() {
    let mut a = Agent::new(leaf1(), 0);
    // No peer: off, but the configured set is what the port offers.
    assert_eq!(a.operational_pfc(0), 0);
    let f = collect(&mut a, 0).remove(0).1;
    assert!(contains(
        &f,
        &[0xfe, 0x06, 0x00, 0x80, 0xc2, 0x0b, 0x88, 0x08]
    ));
    // A neighbour without DCBX: still off.
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), S);
    assert_eq!(a.operational_pfc(0), 0);
    // A willing peer with a lower MAC that has not adopted our set yet:
    // the sets differ, so PFC stays off and the mismatch is reported.
    let low = [0x02, 0x00, 0x00, 0x00, 0x00, 0x01];
    a.receive(
        0,
        &peer_frame(low, "p1", 120, vec![pfc_tlv(true, 0x10)]),
        2 * S,
    );
    assert_eq!(a.operational_pfc(0), 0);
    let op = a.snapshot().ports[0].dcbx.operational.clone();
    assert_eq!(op.pfc_advertised, 0x08);
    assert_eq!(op.mismatches.len(), 1, "{op:?}");
    // It adopts ours: agreement, PFC {3} in force.
    a.receive(
        0,
        &peer_frame(low, "p1", 120, vec![pfc_tlv(true, 0x08)]),
        3 * S,
    );
    assert_eq!(a.operational_pfc(0), 0x08);
    assert_eq!(
        a.snapshot().ports[0].dcbx.operational.pfc_source,
        Source::Local
    );
    assert!(a.snapshot().ports[0].dcbx.pfc_auto);
}

#[test]
fn mode_on_keeps_its_set_with_or_without_a_peer() {
    let mut a = Agent::new(leaf1_pfc_on(), 0);
    assert_eq!(a.operational_pfc(0), 0x08);
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![]), 0);
    assert_eq!(a.operational_pfc(0), 0x08);
    let mut off = leaf1_pfc_on();
    off.ports[0].configured_pfc = 0;
    assert_eq!(Agent::new(off, 0).operational_pfc(0), 0);
}

/// Passes every frame one agent emits to the other, for `secs` seconds.
fn run_pair(a: &mut Agent, b: &mut Agent, secs: u64) {
    for t in 0..=secs {
        let now = t * S;
        for (_, f) in collect(a, now) {
            b.receive(0, &f, now);
        }
        for (_, f) in collect(b, now) {
            a.receive(0, &f, now);
        }
    }
}

#[test]
fn both_willing_higher_mac_keeps_its_own_on_both_sides() {
    let c1 = leaf1();
    let mut c2 = leaf2();
    // leaf2 wants priorities 3 and 4.
    if let Some(d) = c2.ports[0].dcbx.as_mut() {
        d.pfc.enable = 0x18;
    }
    c2.ports[0].configured_pfc = 0x18;
    let (m1, m2) = (c1.chassis_mac, c2.chassis_mac);
    assert_ne!(m1, m2);
    let mut a = Agent::new(c1, 0);
    let mut b = Agent::new(c2, 0);
    run_pair(&mut a, &mut b, 5);
    let winner = if m1 > m2 { 0x08 } else { 0x18 };
    assert_eq!(a.operational_pfc(0), winner);
    assert_eq!(b.operational_pfc(0), winner);
    let (sa, sb) = (a.snapshot(), b.snapshot());
    let (hi, lo) = if m1 > m2 { (&sa, &sb) } else { (&sb, &sa) };
    assert_eq!(hi.ports[0].dcbx.operational.pfc_source, Source::Local);
    assert_eq!(lo.ports[0].dcbx.operational.pfc_source, Source::Peer);
    // Both advertise the set in force: the winner's.
    for snap in [&sa, &sb] {
        let peer = snap.ports[0].neighbors[0].dcbx_ieee.as_ref().unwrap();
        assert_eq!(peer.pfc.unwrap().enable, winner);
    }
}

#[test]
fn willing_local_adopts_the_peer_ets_recommendation() {
    let reco = EtsRepr {
        willing: false,
        cbs: false,
        max_tcs: 0,
        prio_tc: [0, 0, 0, 1, 0, 0, 0, 2],
        tc_bandwidth: [40, 60, 0, 0, 0, 0, 0, 0],
        tsa: [
            Tsa::Ets,
            Tsa::Ets,
            Tsa::Strict,
            Tsa::Strict,
            Tsa::Strict,
            Tsa::Strict,
            Tsa::Strict,
            Tsa::Strict,
        ],
    };
    let mut a = Agent::new(leaf1(), 0);
    let orgs = vec![
        reco.to_config_tlv().unwrap(),
        reco.to_recommendation_tlv().unwrap(),
        pfc_tlv(false, 0x08),
    ];
    a.receive(0, &peer_frame(PEER, "p1", 120, orgs), 0);
    let s = a.snapshot();
    let op = &s.ports[0].dcbx.operational;
    assert_eq!(op.ets_source, Source::Peer);
    let e = op.ets.unwrap();
    assert_eq!(e.prio_tc, reco.prio_tc);
    assert_eq!(e.tc_bandwidth, reco.tc_bandwidth);
    // A non-willing local keeps its own ETS.
    let mut cfg = leaf1();
    if let Some(d) = cfg.ports[0].dcbx.as_mut() {
        d.ets.willing = false;
    }
    let mut b = Agent::new(cfg, 0);
    let orgs = vec![reco.to_recommendation_tlv().unwrap()];
    b.receive(0, &peer_frame(PEER, "p1", 120, orgs), 0);
    assert_eq!(
        b.snapshot().ports[0].dcbx.operational.ets_source,
        Source::Local
    );
}

fn cee_peer(seq: u32, enable: u8) -> OrgTlv {
    let h = CeeFeatureHeader {
        oper_version: 0,
        max_version: 0,
        enable: true,
        willing: false,
        error: false,
        subtype: 0,
    };
    CeeRepr {
        control: CeeControl {
            oper_version: 0,
            max_version: 0,
            seq_no: seq,
            ack_no: 0,
        },
        pfc: Some(CeePfc {
            header: h,
            enable,
            num_tcs: 8,
        }),
        ..CeeRepr::default()
    }
    .to_org_tlv()
    .unwrap()
}

fn cee_of(f: &[u8]) -> Option<CeeRepr> {
    pdu_of(f)
        .org_specific
        .iter()
        .find(|o| o.oui == OUI_CEE)
        .map(|o| CeeRepr::parse(&o.info).unwrap())
}

fn has_ieee(f: &[u8]) -> bool {
    pdu_of(f)
        .org_specific
        .iter()
        .any(|o| o.oui == [0x00, 0x80, 0xc2])
}

#[test]
fn auto_switches_to_cee_for_a_cee_only_peer_and_decodes_its_pfc() {
    let mut a = Agent::new(leaf1(), 0);
    let first = collect(&mut a, 0).remove(0).1;
    assert!(has_ieee(&first) && cee_of(&first).is_none());
    a.receive(
        0,
        &peer_frame(PEER, "p1", 120, vec![cee_peer(7, 0x10)]),
        S / 2,
    );
    // Switching dialect is a local change: a frame goes out at once.
    assert_eq!(a.next_deadline(), Some(S / 2));
    let f = collect(&mut a, S / 2).remove(0).1;
    assert!(!has_ieee(&f));
    let cee = cee_of(&f).unwrap();
    assert_eq!(cee.control.ack_no, 7);
    let seq = cee.control.seq_no;
    // Willing, it adopted the peer's set and advertises it.
    let pfc = cee.pfc.unwrap();
    assert_eq!(
        (pfc.enable, pfc.header.willing, pfc.header.enable),
        (0x10, true, true)
    );
    let pg = cee.pg.unwrap();
    assert_eq!(pg.pgid[7], 15);
    assert_eq!(pg.pgid[3], 3);
    let app = cee.app.unwrap();
    assert_eq!(app.entries[0].protocol, 4791);
    assert_eq!(app.entries[0].priority_map, 0x08);
    let s = a.snapshot();
    assert_eq!(s.ports[0].dcbx.in_use, Some(DcbxDialect::Cee));
    assert_eq!(
        s.ports[0].neighbors[0]
            .dcbx_cee
            .as_ref()
            .unwrap()
            .pfc
            .unwrap()
            .enable,
        0x10
    );
    // Willing local adopts the non-willing CEE peer's PFC.
    assert_eq!(a.operational_pfc(0), 0x10);
    // A new peer sequence number is acknowledged promptly.
    a.receive(0, &peer_frame(PEER, "p1", 120, vec![cee_peer(8, 0x10)]), S);
    let f = collect(&mut a, S).into_iter().last().unwrap().1;
    let c = cee_of(&f).unwrap().control;
    assert_eq!((c.seq_no, c.ack_no), (seq, 8));
    // A local DCBX change bumps our sequence number.
    let mut cfg = leaf1();
    if let Some(d) = cfg.ports[0].dcbx.as_mut() {
        d.pfc.enable = 0x18;
    }
    a.reconfigure(cfg, 2 * S);
    let f = collect(&mut a, 2 * S).remove(0).1;
    assert_eq!(cee_of(&f).unwrap().control.seq_no, seq + 1);
    // The peer now speaks IEEE as well: IEEE is preferred.
    let orgs = vec![cee_peer(8, 0x10), pfc_tlv(false, 0x10)];
    a.receive(0, &peer_frame(PEER, "p1", 120, orgs), 3 * S);
    let f = collect(&mut a, 3 * S).remove(0).1;
    assert!(has_ieee(&f) && cee_of(&f).is_none());
}

#[test]
fn cee_and_auto_agents_converge_on_cee() {
    let cee_cfg = leaf2_cee();
    assert_eq!(cee_cfg.ports[0].dcbx_mode, DcbxMode::Cee);
    let mut a = Agent::new(leaf1(), 0);
    let mut b = Agent::new(cee_cfg, 0);
    run_pair(&mut a, &mut b, 5);
    let (sa, sb) = (a.snapshot(), b.snapshot());
    assert_eq!(sa.ports[0].dcbx.in_use, Some(DcbxDialect::Cee));
    assert_eq!(sb.ports[0].dcbx.in_use, Some(DcbxDialect::Cee));
    assert!(sa.ports[0].dcbx.operational.mismatches.is_empty());
    // Each side acknowledges the other's sequence number.
    let (ca, cb) = (
        sa.ports[0].dcbx.cee_local.unwrap(),
        sb.ports[0].dcbx.cee_local.unwrap(),
    );
    assert_eq!(ca.ack_no, cb.seq_no);
    assert_eq!(cb.ack_no, ca.seq_no);
}

#[test]
fn ports_without_pfc_send_no_dcbx() {
    let cfg = leaf1_without_pfc();
    assert!(cfg.ports[0].dcbx.is_none());
    let mut a = Agent::new(cfg, 0);
    let f = collect(&mut a, 0).remove(0).1;
    assert!(!has_ieee(&f) && cee_of(&f).is_none());
    assert_eq!(a.operational_pfc(0), 0);
    assert_eq!(a.snapshot().ports[0].dcbx.in_use, None);
}
