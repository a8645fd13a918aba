//! DCBX as the agent sees it: the local settings derived from the QoS model,
//! what a peer advertised (IEEE or CEE, normalised to one shape), and the
//! willing-bit resolution that gives the operational PFC/ETS/APP of a port.
//!
//! These are plain serde types rather than the wire reprs so a snapshot can
//! travel over the management socket and be rendered by `railyard show`.
//!
//! Resolution follows REFERENCE.md §3 (lldpad's rules):
//! - PFC is symmetric: a willing local side adopts a non-willing peer's
//!   enable set; when both are willing the side with the numerically higher
//!   chassis MAC keeps its own and the other adopts; a non-willing side keeps
//!   its own.
//! - ETS is asymmetric: a willing local side adopts the peer's ETS
//!   Recommendation (CEE: a non-willing peer's PG). This is reported as the
//!   operational ETS only; railyard's egress queues keep the configured
//!   scheduling.
//! - APP is informational: the union, local entries winning on a conflict.
//!
//! A willing station keeps its willing bit and its configured ETS and APP
//! entries on the wire; its PFC TLV carries the operational enable set, so
//! the peer (and `lldptool`, Wireshark) see what the port really pauses.
//! Two willing peers cannot lock each other in: the adopting side is always
//! the one with the lower MAC, and what it re-advertises is the winner's
//! own set.

use crate::wire::dcbx::{
    AppEntry, AppRepr, AppSelector, CeeApp, CeeAppEntry, CeeControl, CeeFeatureHeader, CeePfc,
    CeePg, CeeRepr, DcbxTlv, EtsRepr, PfcRepr, Tsa, CEE_PGID_STRICT, OUI_CEE,
};
use serde::{Deserialize, Serialize};

/// UDP destination port of RoCEv2, advertised in the APP TLV.
pub const ROCEV2_UDP_PORT: u16 = 4791;
/// IEEE APP selector: UDP/DCCP port.
pub const SEL_UDP: u8 = 3;
/// IEEE APP selector: DSCP.
pub const SEL_DSCP: u8 = 5;

/// Which DCBX dialect a port speaks (`lldp dcbx version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DcbxMode {
    /// Follow the peer, IEEE preferred.
    #[default]
    Auto,
    /// IEEE 802.1Qaz only.
    Ieee,
    /// CEE only.
    Cee,
}

/// A DCBX dialect actually on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DcbxDialect {
    /// IEEE 802.1Qaz TLVs (OUI 00-80-C2).
    Ieee,
    /// The CEE TLV (OUI 00-1B-21, subtype 2).
    Cee,
}

/// Where an operational value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The local configuration.
    Local,
    /// Adopted from the peer.
    Peer,
}

/// ETS settings (IEEE ETS Configuration/Recommendation, or a CEE PG mapped
/// onto the same shape: `prio_tc` holds the PGID, 15 meaning strict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Ets {
    /// Willing to accept the peer's configuration.
    pub willing: bool,
    /// Traffic class (CEE: priority group) of each priority, priority 0 first.
    pub prio_tc: [u8; 8],
    /// Bandwidth % of each traffic class (CEE: priority group).
    pub tc_bandwidth: [u8; 8],
    /// TSA of each traffic class: 0 strict, 1 CBS, 2 ETS, 255 vendor.
    pub tsa: [u8; 8],
}

impl Ets {
    fn from_repr(r: &EtsRepr) -> Ets {
        Ets {
            willing: r.willing,
            prio_tc: r.prio_tc,
            tc_bandwidth: r.tc_bandwidth,
            tsa: r.tsa.map(u8::from),
        }
    }

    /// The wire form; `prio_tc` values above 15 are clamped so emit cannot fail on them.
    pub fn to_repr(&self) -> EtsRepr {
        EtsRepr {
            willing: self.willing,
            cbs: false,
            max_tcs: 0,
            prio_tc: self.prio_tc.map(|t| t.min(15)),
            tc_bandwidth: self.tc_bandwidth,
            tsa: self.tsa.map(Tsa::from),
        }
    }
}

/// PFC settings as advertised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct Pfc {
    /// Willing to accept the peer's configuration.
    pub willing: bool,
    /// MACsec bypass capability bit (IEEE only).
    pub mbc: bool,
    /// How many priorities can be lossless at once (CEE: number of TCs).
    pub cap: u8,
    /// Enabled priorities, bit n = priority n.
    pub enable: u8,
}

/// One application priority entry in IEEE terms (CEE entries are mapped:
/// CEE selector 0 EtherType → 1, 1 TCP/UDP port → 4; one entry per priority
/// bit of the CEE map).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct App {
    /// Priority 0–7.
    pub priority: u8,
    /// IEEE selector: 1 EtherType, 2 TCP, 3 UDP, 4 TCP/UDP, 5 DSCP.
    pub selector: u8,
    /// EtherType, port or DSCP.
    pub protocol: u16,
}

/// What this port advertises when DCBX is on: derived from the QoS model.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct LocalDcbx {
    /// ETS Configuration (also sent, without the willing bit, as the ETS Recommendation).
    pub ets: Ets,
    /// PFC Configuration.
    pub pfc: Pfc,
    /// Application Priority entries.
    pub app: Vec<App>,
}

/// The CEE control sub-TLV's handshake numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub struct CeeSeq {
    /// Sequence number of the sender's configuration.
    pub seq_no: u32,
    /// Last sequence number the sender saw from its peer.
    pub ack_no: u32,
}

/// A peer's DCBX TLVs of one dialect, decoded.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct PeerDcbx {
    /// The dialect they came in.
    pub dialect: DcbxDialect,
    /// IEEE ETS Configuration, or the CEE PG.
    pub ets: Option<Ets>,
    /// IEEE ETS Recommendation (none in CEE).
    pub ets_recommendation: Option<Ets>,
    /// PFC Configuration.
    pub pfc: Option<Pfc>,
    /// Application priority entries.
    pub app: Vec<App>,
    /// CEE control numbers (CEE only).
    pub cee: Option<CeeSeq>,
}

/// The DCBX state in force on a port after resolution.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Operational {
    /// PFC enable bitmap in force (what the dataplane pauses on): 0 on a
    /// port in `priority-flow-control mode auto` until a DCBX peer agrees.
    pub pfc: u8,
    /// PFC enable bitmap the port advertises: the set the willing rules
    /// chose (the configured one or the peer's), also while an `auto` port
    /// waits for its peer to agree, so two `auto` ports can reach agreement.
    #[serde(default)]
    pub pfc_advertised: u8,
    /// Whether `pfc` is the local configuration or the peer's.
    pub pfc_source: Source,
    /// ETS in force (reporting only: railyard's queues do not change).
    pub ets: Option<Ets>,
    /// Whether `ets` is the local configuration or the peer's recommendation.
    pub ets_source: Source,
    /// Application priorities in force: local entries, plus the peer's that do not conflict.
    pub app: Vec<App>,
    /// Why the two ends disagree; empty when they agree.
    pub mismatches: Vec<String>,
}

impl PeerDcbx {
    fn empty(dialect: DcbxDialect) -> PeerDcbx {
        PeerDcbx {
            dialect,
            ets: None,
            ets_recommendation: None,
            pfc: None,
            app: Vec::new(),
            cee: None,
        }
    }
}

/// What the org TLVs of one LLDPDU say about DCBX.
#[derive(Debug, Default)]
pub(crate) struct Decoded {
    pub ieee: Option<PeerDcbx>,
    pub cee: Option<PeerDcbx>,
    /// DCBX TLVs that failed to parse.
    pub bad: u64,
    /// Org TLVs that are neither DCBX nor 802.3 maximum frame size.
    pub unrecognised: u64,
}

/// Decodes the DCBX TLVs among a neighbour's org TLVs; malformed ones are
/// counted and skipped.
pub(crate) fn decode(orgs: &[crate::wire::lldpdu::OrgTlv]) -> Decoded {
    let mut d = Decoded::default();
    for org in orgs {
        let tlv = match DcbxTlv::parse(org) {
            None => {
                if org.max_frame_size().is_none() {
                    d.unrecognised += 1;
                }
                continue;
            }
            Some(Err(_)) => {
                d.bad += 1;
                continue;
            }
            Some(Ok(t)) => t,
        };
        let ieee = || PeerDcbx::empty(DcbxDialect::Ieee);
        match tlv {
            DcbxTlv::EtsConfig(e) => d.ieee.get_or_insert_with(ieee).ets = Some(Ets::from_repr(&e)),
            DcbxTlv::EtsRecommendation(e) => {
                d.ieee.get_or_insert_with(ieee).ets_recommendation = Some(Ets::from_repr(&e));
            }
            DcbxTlv::Pfc(p) => {
                d.ieee.get_or_insert_with(ieee).pfc = Some(Pfc {
                    willing: p.willing,
                    mbc: p.mbc,
                    cap: p.cap,
                    enable: p.enable,
                });
            }
            DcbxTlv::App(a) => {
                d.ieee
                    .get_or_insert_with(ieee)
                    .app
                    .extend(a.entries.iter().map(|e| App {
                        priority: e.priority,
                        selector: u8::from(e.selector),
                        protocol: e.protocol,
                    }));
            }
            DcbxTlv::Cee(c) => d.cee = Some(from_cee(&c)),
        }
    }
    d
}

fn from_cee(c: &CeeRepr) -> PeerDcbx {
    let mut p = PeerDcbx::empty(DcbxDialect::Cee);
    p.cee = Some(CeeSeq {
        seq_no: c.control.seq_no,
        ack_no: c.control.ack_no,
    });
    p.ets = c.pg.filter(|pg| pg.header.enable).map(|pg| Ets {
        willing: pg.header.willing,
        prio_tc: pg.pgid,
        tc_bandwidth: pg.percent,
        tsa: [u8::from(Tsa::Ets); 8],
    });
    p.pfc = c.pfc.filter(|pfc| pfc.header.enable).map(|pfc| Pfc {
        willing: pfc.header.willing,
        mbc: false,
        cap: pfc.num_tcs,
        enable: pfc.enable,
    });
    if let Some(app) = c.app.as_ref().filter(|a| a.header.enable) {
        for e in &app.entries {
            let selector = match e.selector {
                0 => 1,
                _ => 4,
            };
            for prio in 0..8u8 {
                if e.priority_map & (1 << prio) != 0 {
                    p.app.push(App {
                        priority: prio,
                        selector,
                        protocol: e.protocol,
                    });
                }
            }
        }
    }
    p
}

/// The IEEE TLVs advertising `l`: ETS Configuration, ETS Recommendation,
/// PFC, APP (an entry list too long for one TLV is cut to what fits).
pub(crate) fn ieee_tlvs(l: &LocalDcbx) -> Vec<crate::wire::lldpdu::OrgTlv> {
    let ets = l.ets.to_repr();
    let pfc = PfcRepr {
        willing: l.pfc.willing,
        mbc: l.pfc.mbc,
        cap: l.pfc.cap.min(15),
        enable: l.pfc.enable,
    };
    let app = AppRepr {
        entries: l
            .app
            .iter()
            .take(crate::wire::dcbx::MAX_APP_ENTRIES)
            .map(|a| AppEntry {
                priority: a.priority & 7,
                selector: AppSelector::from(a.selector & 7),
                protocol: a.protocol,
            })
            .collect(),
    };
    [
        ets.to_config_tlv(),
        ets.to_recommendation_tlv(),
        pfc.to_org_tlv(),
        app.to_org_tlv(),
    ]
    .into_iter()
    .filter_map(Result::ok)
    .collect()
}

/// The CEE TLV advertising `l` with the handshake numbers `seq`. PG: each
/// priority's PGID is its TC, or 15 when the TC is strict; APP carries the
/// UDP/TCP-port entries (CEE has no DSCP selector).
pub(crate) fn cee_tlv(l: &LocalDcbx, seq: CeeSeq) -> Option<crate::wire::lldpdu::OrgTlv> {
    let header = |willing: bool| CeeFeatureHeader {
        oper_version: 0,
        max_version: 0,
        enable: true,
        willing,
        error: false,
        subtype: 0,
    };
    let strict = u8::from(Tsa::Strict);
    let pgid = l.ets.prio_tc.map(|tc| {
        let is_strict = l.ets.tsa.get(usize::from(tc)).is_some_and(|&t| t == strict);
        if is_strict {
            CEE_PGID_STRICT
        } else {
            tc.min(7)
        }
    });
    let mut entries: Vec<CeeAppEntry> = Vec::new();
    for a in &l.app {
        let selector = match a.selector {
            1 => 0,
            2..=4 => 1,
            _ => continue,
        };
        match entries
            .iter_mut()
            .find(|e| e.selector == selector && e.protocol == a.protocol)
        {
            Some(e) => e.priority_map |= 1 << (a.priority & 7),
            None => entries.push(CeeAppEntry {
                protocol: a.protocol,
                selector,
                oui: OUI_CEE,
                priority_map: 1 << (a.priority & 7),
            }),
        }
    }
    let repr = CeeRepr {
        control: CeeControl {
            oper_version: 0,
            max_version: 0,
            seq_no: seq.seq_no,
            ack_no: seq.ack_no,
        },
        pg: Some(CeePg {
            header: header(l.ets.willing),
            pgid,
            percent: l.ets.tc_bandwidth,
            num_tcs: 8,
        }),
        pfc: Some(CeePfc {
            header: header(l.pfc.willing),
            enable: l.pfc.enable,
            num_tcs: l.pfc.cap,
        }),
        app: Some(CeeApp {
            header: header(false),
            entries,
        }),
        unknown: Vec::new(),
    };
    repr.to_org_tlv().ok()
}

/// Applies the willing rules (module docs) to a port.
///
/// `configured_pfc` is the port's configured PFC set; `auto` says the port
/// is in `priority-flow-control mode auto`, where (as on NX-OS) PFC is in
/// force only once negotiation with a DCBX peer succeeds: the peer
/// advertises a PFC TLV whose set equals the one the willing rules chose.
/// Without such a peer an `auto` port has no PFC in force; any other port
/// keeps its configured set. `peer_present` says whether any neighbour is
/// heard (so a neighbour without DCBX is reported as a mismatch).
pub fn resolve(
    local: Option<&LocalDcbx>,
    configured_pfc: u8,
    auto: bool,
    local_mac: [u8; 6],
    peer: Option<(&PeerDcbx, [u8; 6])>,
    peer_present: bool,
) -> Operational {
    let mut op = resolve_willing(local, configured_pfc, local_mac, peer, peer_present);
    op.pfc_advertised = op.pfc;
    let agreed = peer
        .and_then(|(p, _)| p.pfc)
        .is_some_and(|pp| local.is_some() && pp.enable == op.pfc);
    if auto && !agreed {
        op.pfc = 0;
    }
    op
}

/// The willing rules alone: the PFC set chosen (configured or the peer's),
/// ETS and APP, before `auto` asks for agreement.
fn resolve_willing(
    local: Option<&LocalDcbx>,
    configured_pfc: u8,
    local_mac: [u8; 6],
    peer: Option<(&PeerDcbx, [u8; 6])>,
    peer_present: bool,
) -> Operational {
    let mut op = Operational {
        pfc: configured_pfc,
        pfc_advertised: configured_pfc,
        pfc_source: Source::Local,
        ets: local.map(|l| l.ets),
        ets_source: Source::Local,
        app: local.map(|l| l.app.clone()).unwrap_or_default(),
        mismatches: Vec::new(),
    };
    let Some(l) = local else {
        return op;
    };
    let Some((p, peer_mac)) = peer else {
        if peer_present {
            op.mismatches
                .push("peer advertises no DCBX TLVs".to_string());
        }
        return op;
    };
    match p.pfc {
        Some(pp) => {
            let adopt = l.pfc.willing && (!pp.willing || local_mac < peer_mac);
            if adopt {
                op.pfc = pp.enable;
                op.pfc_source = Source::Peer;
            }
            if pp.enable != op.pfc {
                op.mismatches.push(format!(
                    "PFC: peer enables {} but {} in force locally",
                    prio_list(pp.enable),
                    prio_list(op.pfc)
                ));
            }
        }
        None => op.mismatches.push("peer advertises no PFC TLV".to_string()),
    }
    let adopted_ets = match p.dialect {
        DcbxDialect::Ieee => p.ets_recommendation,
        DcbxDialect::Cee => p.ets.filter(|e| !e.willing),
    };
    if let (true, Some(e)) = (l.ets.willing, adopted_ets) {
        op.ets = Some(Ets {
            willing: l.ets.willing,
            ..e
        });
        op.ets_source = Source::Peer;
    }
    for a in &p.app {
        let conflict = op
            .app
            .iter()
            .any(|x| x.selector == a.selector && x.protocol == a.protocol);
        if !conflict {
            op.app.push(*a);
        }
    }
    op
}

/// Priorities of a bitmap as text, e.g. `3,4` or `none`.
pub fn prio_list(bits: u8) -> String {
    let v: Vec<String> = (0..8)
        .filter(|p| bits & (1 << p) != 0)
        .map(|p| p.to_string())
        .collect();
    if v.is_empty() {
        "none".to_string()
    } else {
        v.join(",")
    }
}
