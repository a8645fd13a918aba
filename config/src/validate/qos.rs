//! Checks of the QoS, PFC, DLB and LLDP model.
//!
//! Errors: a `service-policy` naming a missing policy (or one of the wrong
//! kind or direction), a policy class naming a missing class-map, a
//! class-map naming a missing (or partly unmodelled) access list, percent
//! shares above 100 within a policy, one CoS paused for two qos-groups.
//!
//! Warnings: thresholds that break xON < WRED min < WRED max < xOFF, a
//! lossless qos-group carried by an interface with PFC off, a strict-priority
//! queue without a shaper, an ECN queue whose WRED maximum exceeds its queue
//! limit, classes that never match or set no qos-group, LLDP settings without
//! `feature lldp`, a hold time shorter than the timer, DRE thresholds out of
//! order.

use std::collections::HashSet;

use crate::diag::{Diagnostic, Severity, Sources};
use crate::lldp::Lldp;
use crate::model::Config;
use crate::qos::{Bandwidth, Direction, Match, MatchMode, Threshold, CLASS_DEFAULT};
use crate::spelling::closest as value_closest;

use super::{At, GlobalItem, IfKey, NqItem, PolicySlot, Pos, QueuingItem, SourceMap};

/// The kinds of policy a `service-policy` line can name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Qos,
    QueuingOutput,
    QueuingInput,
    NetworkQos,
}

impl Kind {
    /// The `service-policy` slot it fills.
    fn slot(self) -> PolicySlot {
        match self {
            Kind::Qos => PolicySlot::QosInput,
            Kind::QueuingOutput => PolicySlot::QueuingOutput,
            Kind::QueuingInput => PolicySlot::QueuingInput,
            Kind::NetworkQos => PolicySlot::NetworkQos,
        }
    }

    /// The `type` word of `policy-map`.
    fn type_word(self) -> &'static str {
        match self {
            Kind::Qos => "qos",
            Kind::QueuingOutput | Kind::QueuingInput => "queuing",
            Kind::NetworkQos => "network-qos",
        }
    }
}

/// State of the QoS checks.
struct Checker<'a> {
    config: &'a Config,
    map: &'a SourceMap,
    sources: &'a Sources<'a>,
    out: &'a mut Vec<Diagnostic>,
}

impl Checker<'_> {
    /// Where `key` was written (line 0 when unknown).
    fn at(&self, key: &At) -> Pos {
        self.map.at.get(key).copied().unwrap_or_default()
    }

    /// Record a diagnostic.
    fn report(&mut self, severity: Severity, pos: Pos, message: String, hint: Option<String>) {
        self.out
            .push(self.sources.diag(severity, pos, message, hint));
    }

    /// The names of the policies of one type.
    fn names(&self, type_word: &str) -> Vec<&str> {
        let c = self.config;
        match type_word {
            "qos" => c.qos_policies.iter().map(|p| p.name.as_str()).collect(),
            "queuing" => c.queuing_policies.iter().map(|p| p.name.as_str()).collect(),
            _ => c
                .network_qos_policies
                .iter()
                .map(|p| p.name.as_str())
                .collect(),
        }
    }

    /// Check one `service-policy` reference.
    fn reference(&mut self, name: &str, kind: Kind, pos: Pos) {
        let c = self.config;
        let found = match kind {
            Kind::Qos => c.qos_policy(name).is_some(),
            Kind::NetworkQos => c.network_qos_policy(name).is_some(),
            Kind::QueuingOutput | Kind::QueuingInput => {
                if let Some(p) = c.queuing_policy(name) {
                    let want = if kind == Kind::QueuingOutput {
                        Direction::Egress
                    } else {
                        Direction::Ingress
                    };
                    if !p.classes.is_empty() && p.direction != want {
                        let (has, other) = match p.direction {
                            Direction::Egress => ("egress classes (c-out-8q-q…)", "output"),
                            Direction::Ingress => ("ingress classes (c-in-q…)", "input"),
                        };
                        self.report(
                            Severity::Error,
                            pos,
                            format!(
                                "policy-map type queuing `{name}` has {has}; it cannot be applied as {}",
                                if want == Direction::Egress { "output" } else { "input" }
                            ),
                            Some(format!(
                                "apply it with `service-policy type queuing {other} {name}`"
                            )),
                        );
                    }
                    true
                } else {
                    false
                }
            }
        };
        if found || name.starts_with("default-") {
            return;
        }
        let type_word = kind.type_word();
        let elsewhere = ["qos", "queuing", "network-qos"]
            .into_iter()
            .find(|t| *t != type_word && self.names(t).contains(&name));
        let hint = match elsewhere {
            Some(t) => format!("`{name}` is a policy-map type {t}"),
            None => match value_closest(name, self.names(type_word)) {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!("define it with `policy-map type {type_word} {name}`"),
            },
        };
        self.report(
            Severity::Error,
            pos,
            format!("no policy-map type {type_word} named `{name}`"),
            Some(hint),
        );
    }

    /// Every `service-policy` line names an existing policy of the right kind.
    fn references(&mut self) {
        let c = self.config;
        let s = &c.system_qos;
        let system = [
            (&s.qos_input, Kind::Qos),
            (&s.queuing_output, Kind::QueuingOutput),
            (&s.queuing_input, Kind::QueuingInput),
            (&s.network_qos, Kind::NetworkQos),
        ];
        for (name, kind) in system {
            if let Some(n) = name {
                let pos = self.at(&At::SystemPolicy(kind.slot()));
                self.reference(n, kind, pos);
            }
        }
        let eth = c.interfaces.iter().enumerate().map(|(i, x)| {
            (
                IfKey::Ethernet(i),
                [
                    &x.service_policy_qos_input,
                    &x.service_policy_queuing_output,
                    &x.service_policy_queuing_input,
                ],
            )
        });
        let pcs = c.port_channels.iter().enumerate().map(|(i, x)| {
            (
                IfKey::PortChannel(i),
                [
                    &x.service_policy_qos_input,
                    &x.service_policy_queuing_output,
                    &x.service_policy_queuing_input,
                ],
            )
        });
        for (key, names) in eth.chain(pcs) {
            let kinds = [Kind::Qos, Kind::QueuingOutput, Kind::QueuingInput];
            for (name, kind) in names.into_iter().zip(kinds) {
                if let Some(n) = name {
                    let pos = self.at(&At::IfacePolicy(key, kind.slot()));
                    self.reference(n, kind, pos);
                }
            }
        }
    }

    /// Class-maps: their access lists exist and are fully modelled; used ones match something.
    fn class_maps(&mut self) {
        let c = self.config;
        let used: HashSet<&str> = c
            .qos_policies
            .iter()
            .flat_map(|p| p.classes.iter().map(|k| k.class.as_str()))
            .collect();
        for cm in &c.class_maps {
            if cm.matches.is_empty() && used.contains(cm.name.as_str()) {
                let pos = self.at(&At::ClassMap(cm.name.clone()));
                self.report(
                    Severity::Warning,
                    pos,
                    format!(
                        "class-map `{}` has no match lines; it matches nothing",
                        cm.name
                    ),
                    Some("add `match dscp …`, `match cos …` or `match access-group name …`".into()),
                );
            }
            for m in &cm.matches {
                let Match::AccessGroup(acl) = m else { continue };
                let pos = self.at(&At::AclRef {
                    class_map: cm.name.clone(),
                    acl: acl.clone(),
                });
                if c.access_list(acl).is_none() {
                    let names = c.access_lists.iter().map(|a| a.name.as_str());
                    let hint = match value_closest(acl, names) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!("define it with `ip access-list {acl}`"),
                    };
                    self.report(
                        Severity::Error,
                        pos,
                        format!("no ip access-list named `{acl}`"),
                        Some(hint),
                    );
                } else if let Some((entry, u)) = c.access_list(acl).and_then(|l| {
                    l.entries
                        .iter()
                        .find_map(|e| e.unevaluated.as_ref().map(|u| (e.seq, u)))
                }) {
                    // See `Unevaluated`: classifying by a list railyard
                    // cannot evaluate would put other traffic in the class.
                    let line = self
                        .map
                        .at
                        .get(&At::AclSkipped(acl.clone()))
                        .map_or_else(String::new, |p| format!(" (line {})", p.line));
                    let options = u
                        .options
                        .iter()
                        .map(|o| crate::qos::Unevaluated::describe(o))
                        .collect::<Vec<_>>()
                        .join(", ");
                    self.report(
                        Severity::Error,
                        pos,
                        format!(
                            "access list `{acl}` entry {entry} matches on {options}, which railyard does not evaluate{line}"
                        ),
                        Some(
                            "the class would match other traffic than on the switch; rewrite or remove that entry, or match the class another way"
                                .into(),
                        ),
                    );
                }
            }
        }
    }

    /// qos policies: classes exist, set a group, and can match something.
    fn qos_policies(&mut self) {
        let c = self.config;
        for p in &c.qos_policies {
            let mut earlier_dscp = 0u64;
            for class in &p.classes {
                if class.class == CLASS_DEFAULT {
                    continue;
                }
                let pos = self.at(&At::QosClass {
                    policy: p.name.clone(),
                    class: class.class.clone(),
                });
                let Some(cm) = c.class_map(&class.class) else {
                    let names = c.class_maps.iter().map(|m| m.name.as_str());
                    let hint = match value_closest(&class.class, names) {
                        Some(s) => format!("did you mean `{s}`?"),
                        None => format!(
                            "define it with `class-map type qos match-any {}`",
                            class.class
                        ),
                    };
                    self.report(
                        Severity::Error,
                        pos,
                        format!("no class-map named `{}`", class.class),
                        Some(hint),
                    );
                    continue;
                };
                if class.set_qos_group.is_none() {
                    self.report(
                        Severity::Warning,
                        pos,
                        format!(
                            "class `{}` of policy-map `{}` sets no qos-group; its traffic stays in qos-group 0",
                            class.class, p.name
                        ),
                        Some("add `set qos-group N` under the class".into()),
                    );
                }
                let dscp_only = !cm.matches.is_empty()
                    && cm
                        .matches
                        .iter()
                        .all(|m| matches!(m, Match::Dscp(_) | Match::Precedence(_)))
                    && (cm.match_mode == MatchMode::Any || cm.matches.len() == 1);
                if dscp_only {
                    let set = cm.matches.iter().fold(0, |a, m| a | m.dscp_set());
                    if set & !earlier_dscp == 0 {
                        self.report(
                            Severity::Warning,
                            pos,
                            format!(
                                "class `{}` never matches: earlier classes of policy-map `{}` take all its DSCP values",
                                class.class, p.name
                            ),
                            Some("classes are evaluated in order; move it up or remove it".into()),
                        );
                    }
                    earlier_dscp |= set;
                }
            }
        }
    }

    /// Queuing policies: shares, shapers, ECN versus queue limits.
    fn queuing_policies(&mut self) {
        for p in &self.config.queuing_policies {
            let mut percent = 0u32;
            let mut remaining = 0u32;
            let mut reported = (false, false);
            for class in &p.classes {
                let q = class.queue;
                let name = p.direction.class_name(q);
                let bw_pos = self.at(&At::Queuing {
                    policy: p.name.clone(),
                    queue: q,
                    item: QueuingItem::Bandwidth,
                });
                match class.bandwidth {
                    Some(Bandwidth::Percent(v)) => {
                        percent += u32::from(v);
                        if percent > 100 && !reported.0 {
                            reported.0 = true;
                            self.report(
                                Severity::Error,
                                bw_pos,
                                format!(
                                    "bandwidth percent in policy-map `{}` adds up to {}%",
                                    p.name,
                                    total(p, false)
                                ),
                                Some("the shares of one policy may total at most 100%".into()),
                            );
                        }
                    }
                    Some(Bandwidth::RemainingPercent(v)) => {
                        remaining += u32::from(v);
                        if remaining > 100 && !reported.1 {
                            reported.1 = true;
                            self.report(
                                Severity::Error,
                                bw_pos,
                                format!(
                                    "bandwidth remaining percent in policy-map `{}` adds up to {}%",
                                    p.name,
                                    total(p, true)
                                ),
                                Some("the shares of one policy may total at most 100%".into()),
                            );
                        }
                    }
                    _ => {}
                }
                if p.direction == Direction::Egress
                    && class.priority_level.is_some()
                    && class.shape.is_none()
                {
                    let pos = self.at(&At::Queuing {
                        policy: p.name.clone(),
                        queue: q,
                        item: QueuingItem::Priority,
                    });
                    self.report(
                        Severity::Warning,
                        pos,
                        format!(
                            "strict-priority queue {name} of policy-map `{}` has no shaper",
                            p.name
                        ),
                        Some("without `shape min … max …` it can starve every lower queue".into()),
                    );
                }
                if let (Some(w), Some(limit)) =
                    (class.wred, class.queue_limit.and_then(|l| l.threshold()))
                {
                    if w.ecn && w.max.same_unit(limit) && w.max.value() > limit.value() {
                        let pos = self.at(&At::Queuing {
                            policy: p.name.clone(),
                            queue: q,
                            item: QueuingItem::RandomDetect,
                        });
                        self.report(
                            Severity::Warning,
                            pos,
                            format!(
                                "WRED maximum {} of {name} in policy-map `{}` exceeds its queue limit of {}",
                                show(w.max),
                                p.name,
                                show(limit)
                            ),
                            Some("the queue tail-drops before ECN marking reaches its maximum; lower the threshold or raise the limit".into()),
                        );
                    }
                }
            }
        }
    }

    /// One CoS pauses one qos-group.
    fn network_qos(&mut self) {
        for p in &self.config.network_qos_policies {
            let mut owner: [Option<u8>; 8] = [None; 8];
            for class in &p.classes {
                for &cos in &class.pause_pfc_cos {
                    let slot = &mut owner[usize::from(cos & 7)];
                    match *slot {
                        Some(g) if g != class.qos_group => {
                            let pos = self.at(&At::Nq {
                                policy: p.name.clone(),
                                group: class.qos_group,
                                item: NqItem::Pause,
                            });
                            self.report(
                                Severity::Error,
                                pos,
                                format!(
                                    "CoS {cos} is paused for both qos-group {g} and qos-group {} in policy-map `{}`",
                                    class.qos_group, p.name
                                ),
                                Some("a PFC priority pauses one class; give each lossless class its own CoS".into()),
                            );
                        }
                        _ => *slot = Some(class.qos_group),
                    }
                }
            }
        }
    }

    /// Per interface: lossless classes have PFC; pause and WRED thresholds are ordered.
    fn interfaces(&mut self) {
        let c = self.config;
        let mut seen: HashSet<(Option<String>, Option<String>, usize)> = HashSet::new();
        for (i, iface) in c.interfaces.iter().enumerate() {
            let eff = c.effective_qos_of(iface);
            let carried = eff.classifier.groups() & eff.lossless;
            if iface.pfc_mode == crate::qos::PfcMode::Off && carried != 0 {
                let groups: Vec<String> = (0..8)
                    .filter(|g| carried & (1 << g) != 0)
                    .map(|g: u8| g.to_string())
                    .collect();
                let plural = if groups.len() == 1 { "" } else { "s" };
                let pos = self.at(&At::IfacePfc(i));
                self.report(
                    Severity::Warning,
                    pos,
                    format!(
                        "{} carries lossless qos-group{plural} {} but has priority-flow-control mode off",
                        iface.name,
                        groups.join(", ")
                    ),
                    Some("without PFC the class is dropped instead of paused; use `priority-flow-control mode on` or `auto`".into()),
                );
            }
            for g in 0..8 {
                let (Some(pause), Some(wred)) = (eff.ingress[g].pause, eff.egress[g].wred) else {
                    continue;
                };
                let (Threshold::Bytes(min), Threshold::Bytes(max)) = (wred.min, wred.max) else {
                    continue;
                };
                if pause.xon < min && min < max && max < pause.xoff {
                    continue;
                }
                let k = (
                    eff.policies.queuing_input.clone(),
                    eff.policies.queuing_output.clone(),
                    g,
                );
                if !seen.insert(k) {
                    continue;
                }
                let pos = eff
                    .policies
                    .queuing_input
                    .as_deref()
                    .map(|p| {
                        self.at(&At::Queuing {
                            policy: p.to_string(),
                            queue: g as u8,
                            item: QueuingItem::Pause,
                        })
                    })
                    .unwrap_or_default();
                self.report(
                    Severity::Warning,
                    pos,
                    format!(
                        "qos-group {g}: thresholds break xON < WRED min < WRED max < xOFF (xON {}, WRED {min}-{max}, xOFF {} bytes)",
                        pause.xon, pause.xoff
                    ),
                    Some("ECN should slow senders before PFC pauses the link: put the WRED thresholds between the resume and pause thresholds".into()),
                );
            }
        }
    }

    /// LLDP settings need `feature lldp`; the hold time outlasts the timer.
    fn lldp(&mut self) {
        let c = self.config;
        let l = &c.lldp;
        let globals_set = Lldp {
            enabled: false,
            ..l.clone()
        } != Lldp::default();
        let iface_set = c.interfaces.iter().any(|i| {
            !i.lldp_transmit || !i.lldp_receive || i.dcbx_version != crate::qos::DcbxVersion::Auto
        });
        if (globals_set || iface_set) && !l.enabled {
            let pos = self.at(&At::Global(GlobalItem::Lldp));
            self.report(
                Severity::Warning,
                pos,
                "LLDP is configured but `feature lldp` is not enabled".into(),
                Some("add `feature lldp`, or the settings have no effect".into()),
            );
        }
        if l.holdtime_s < l.timer_s {
            let pos = self
                .map
                .at
                .get(&At::Global(GlobalItem::LldpHoldtime))
                .or_else(|| self.map.at.get(&At::Global(GlobalItem::LldpTimer)))
                .copied()
                .unwrap_or_default();
            self.report(
                Severity::Warning,
                pos,
                format!(
                    "lldp holdtime {} is shorter than the transmit timer {}",
                    l.holdtime_s, l.timer_s
                ),
                Some("neighbours expire between advertisements; keep the holdtime a multiple of the timer".into()),
            );
        }
    }

    /// DLB settings railyard reads differently from what one might expect:
    /// DRE levels that add up to more than 100 % (they are band widths, not
    /// rising thresholds), a policy-driven mode (the selecting QoS policy
    /// is not modelled) and pins that can never apply.
    fn dlb(&mut self) {
        let Some(d) = self.config.dlb.as_ref() else {
            return;
        };
        if let Some(t) = d.dre_thresholds {
            let sum: u32 = t.iter().map(|v| u32::from(*v)).sum();
            if sum > 100 {
                let pos = self.at(&At::Global(GlobalItem::DlbDre));
                self.report(
                    Severity::Warning,
                    pos,
                    format!("DRE levels add up to {sum} %, more than the link's 100 %"),
                    Some(
                        "each level is the width of one quality band (as in Cisco's examples, \
                         which add up to 100), so bands past 100 % are reached only with a \
                         standing queue; rising thresholds such as 10 20 … 70 are written 10 10 … 10"
                            .into(),
                    ),
                );
            }
        }
        if d.policy_driven {
            let mode = match d.mode {
                crate::qos::DlbMode::Flowlet => "flowlet",
                crate::qos::DlbMode::PerPacket => "per-packet",
            };
            let pos = self.at(&At::Global(GlobalItem::DlbMode));
            self.report(
                Severity::Warning,
                pos,
                format!(
                    "`mode policy-driven {mode}`: the QoS policy that selects DLB traffic is not \
                     modelled; {mode} balancing applies to all traffic over DLB groups"
                ),
                None,
            );
        }
        for pin in &d.static_pinning {
            let member = match &d.interfaces {
                crate::qos::DlbInterfaces::All => true,
                crate::qos::DlbInterfaces::List(l) => l.contains(&pin.destination),
            };
            if !member {
                let pos = self.at(&At::DlbPin(pin.source));
                self.report(
                    Severity::Warning,
                    pos,
                    format!(
                        "static pin {} -> {}: {} is not a `dlb-interface`, so no DLB group \
                         contains it and the pin never applies",
                        pin.source, pin.destination, pin.destination
                    ),
                    Some(format!("add it: `dlb-interface {}`", pin.destination)),
                );
            }
        }
    }
}

/// The total of one kind of percent share in a queuing policy.
fn total(p: &crate::qos::QueuingPolicy, remaining: bool) -> u32 {
    p.classes
        .iter()
        .filter_map(|c| match (c.bandwidth, remaining) {
            (Some(Bandwidth::Percent(v)), false) | (Some(Bandwidth::RemainingPercent(v)), true) => {
                Some(u32::from(v))
            }
            _ => None,
        })
        .sum()
}

/// A threshold with its unit.
fn show(t: Threshold) -> String {
    t.show()
}

/// Check the QoS part of a model, appending to `out`.
pub(crate) fn check(
    config: &Config,
    map: &SourceMap,
    sources: &Sources<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let mut c = Checker {
        config,
        map,
        sources,
        out,
    };
    c.references();
    c.class_maps();
    c.qos_policies();
    c.queuing_policies();
    c.network_qos();
    c.interfaces();
    c.lldp();
    c.dlb();
}
