//! The resolved QoS of one interface: the policies that apply to it with
//! every NX-OS default filled in, lowered to tables the dataplane can use
//! directly.
//!
//! # Which policy applies
//!
//! An interface's own `service-policy` wins over the one in `system qos`.
//! A name starting with `default-` that no `policy-map` defines stands for
//! the system-defined policy, as does the absence of any policy:
//!
//! * classification: everything in qos-group 0;
//! * egress queuing (`default-8q-out-policy`): q7 `priority level 1`,
//!   q1–q6 `bandwidth remaining percent 0`, q-default `bandwidth remaining
//!   percent 100`;
//! * ingress queuing: no pause thresholds;
//! * network-qos: MTU [`DEFAULT_MTU`] and no PFC for every qos-group.
//!
//! A user queuing policy that does not list a queue leaves that queue with
//! its default settings (a configuration may elide the queues it does not
//! change, as the book's example does). `bandwidth remaining percent`
//! values are relative weights among the queues that are not strict
//! priority; the dataplane normalises them.
//!
//! # How a `policy-map type qos` is lowered
//!
//! Classes are evaluated in order, the first that matches decides, and
//! `class-default` (wherever it is written) catches the rest. A class whose
//! policy line has no `set qos-group` sends matching traffic to qos-group 0.
//! Each class is lowered on its own:
//!
//! * only DSCP and precedence lines: a DSCP set (precedence P is DSCP
//!   8P–8P+7); `match-any` takes the union of the lines, `match-all` the
//!   intersection;
//! * only CoS lines: a CoS set, in the same way;
//! * anything else (an access group, or DSCP together with CoS): rules.
//!   `match-all` becomes one [`AclRule`] whose terms must all hold (`match
//!   dscp 24` + `match cos 3` is DSCP 24 AND CoS 3); `match-any` becomes one
//!   rule per line, consecutive, with the same qos-group (an OR).
//!
//! When every class lowers to a DSCP set, [`Classifier::dscp_table`] says it
//! all; when every class lowers to a CoS set, [`Classifier::cos_table`] does.
//! Otherwise every class becomes rules, in order, so that a packet matching
//! two classes still lands in the first; the tables then only hold the
//! `class-default` group. [`Classifier::classify`] is the reference
//! evaluation.

use serde::{Serialize, Serializer};

use crate::model::{Config, Interface, InterfaceName, DEFAULT_MTU};
use crate::qos::{
    AccessList, Bandwidth, Direction, FlowKey, Match, MatchMode, PauseThresholds, PfcMode,
    PfcWatchdogTimers, QueueLimit, QueuingClass, QueuingPolicy, Shape, Wred, CLASS_DEFAULT,
    QOS_GROUPS,
};

/// The settings of one egress queue.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct QueueConfig {
    /// Strict priority level (1 highest), if the queue is strict priority.
    pub priority_level: Option<u8>,
    /// Its bandwidth guarantee.
    pub bandwidth: Option<Bandwidth>,
    /// WRED / ECN marking.
    pub wred: Option<Wred>,
    /// Tail-drop limit.
    pub queue_limit: Option<QueueLimit>,
    /// Shaper.
    pub shape: Option<Shape>,
}

impl QueueConfig {
    /// The settings of queue `queue` in the system-defined 8-queue output policy.
    pub fn default_for(queue: u8) -> Self {
        match queue {
            7 => QueueConfig {
                priority_level: Some(1),
                ..QueueConfig::default()
            },
            0 => QueueConfig {
                bandwidth: Some(Bandwidth::RemainingPercent(100)),
                ..QueueConfig::default()
            },
            _ => QueueConfig {
                bandwidth: Some(Bandwidth::RemainingPercent(0)),
                ..QueueConfig::default()
            },
        }
    }

    fn from_class(c: &QueuingClass) -> Self {
        QueueConfig {
            priority_level: c.priority_level,
            bandwidth: c.bandwidth,
            wred: c.wred,
            queue_limit: c.queue_limit,
            shape: c.shape,
        }
    }
}

/// The settings of one ingress priority group (from the ingress queuing policy).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct IngressPgConfig {
    /// PFC thresholds, if the class has a `pause` line.
    pub pause: Option<PauseThresholds>,
    /// Tail-drop limit of the priority group.
    pub queue_limit: Option<QueueLimit>,
}

/// One condition of an [`AclRule`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum RuleTerm {
    /// The packet is IP and its DSCP is in the set (bit n = DSCP n; serialized as the list).
    Dscp(#[serde(serialize_with = "crate::bits::set64")] u64),
    /// Its 802.1p priority (0 when untagged) is in the set (bit n = priority n;
    /// serialized as the list).
    Cos(#[serde(serialize_with = "crate::bits::set8")] u8),
    /// The access list permits it (first matching entry decides; no match denies).
    Access(AccessList),
}

/// One ordered classification rule: every term must hold.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AclRule {
    /// The class-map the rule comes from, for counters and `show`.
    pub class: String,
    /// Conditions that must all hold (an empty list matches every packet).
    pub terms: Vec<RuleTerm>,
    /// The qos-group of matching packets.
    pub qos_group: u8,
}

/// What the classifier looks at in a packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClassifyInput {
    /// DSCP, for IP packets.
    pub dscp: Option<u8>,
    /// 802.1p priority, for VLAN-tagged frames.
    pub pcp: Option<u8>,
    /// The fields access lists look at, for IP packets.
    pub flow: Option<FlowKey>,
}

/// Serialize a fixed array as a sequence (serde derives stop at 32 elements).
fn as_slice<S: Serializer>(v: &[u8; 64], s: S) -> Result<S::Ok, S::Error> {
    v.as_slice().serialize(s)
}

/// An interface's ingress classification into qos-groups.
///
/// Evaluation: the first of [`Self::acl_rules`] that matches decides; if
/// none does, [`Self::cos_table`] (when present) is indexed by the priority
/// (0 when untagged); otherwise an IP packet's DSCP indexes
/// [`Self::dscp_table`], and anything else gets [`Self::default_group`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Classifier {
    /// qos-group per DSCP; `class-default`'s group where no class matches.
    #[serde(serialize_with = "as_slice")]
    pub dscp_table: [u8; 64],
    /// qos-group per 802.1p priority, when the policy classifies by CoS alone.
    pub cos_table: Option<[u8; 8]>,
    /// Ordered rules, when the policy needs more than a table.
    pub acl_rules: Vec<AclRule>,
    /// The `class-default` group: for traffic no class matches.
    pub default_group: u8,
}

impl Default for Classifier {
    fn default() -> Self {
        Classifier {
            dscp_table: [0; 64],
            cos_table: None,
            acl_rules: Vec::new(),
            default_group: 0,
        }
    }
}

impl Classifier {
    /// The qos-group of a packet (the reference evaluation of the contract above).
    pub fn classify(&self, pkt: &ClassifyInput) -> u8 {
        let pcp = pkt.pcp.unwrap_or(0) & 7;
        let holds = |t: &RuleTerm| match t {
            RuleTerm::Dscp(set) => pkt.dscp.is_some_and(|d| d < 64 && set & (1 << d) != 0),
            RuleTerm::Cos(set) => set & (1 << pcp) != 0,
            RuleTerm::Access(acl) => pkt.flow.as_ref().is_some_and(|f| acl.permits(f)),
        };
        if let Some(rule) = self.acl_rules.iter().find(|r| r.terms.iter().all(holds)) {
            return rule.qos_group;
        }
        if let Some(table) = &self.cos_table {
            return table[usize::from(pcp)];
        }
        match pkt.dscp {
            Some(d) if d < 64 => self.dscp_table[usize::from(d)],
            _ => self.default_group,
        }
    }

    /// Every qos-group some traffic can be classified into (bit n = group n).
    pub fn groups(&self) -> u8 {
        let mut groups = 1u8 << (self.default_group & 7);
        for g in self.dscp_table {
            groups |= 1 << (g & 7);
        }
        for g in self.cos_table.iter().flatten() {
            groups |= 1 << (g & 7);
        }
        for r in &self.acl_rules {
            groups |= 1 << (r.qos_group & 7);
        }
        groups
    }
}

/// The PFC watchdog as it applies to one interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct WatchdogConfig {
    /// The interface's `watch-dog-interval`, else the global one; off when neither is written.
    pub enabled: bool,
    /// The global timers.
    pub timers: PfcWatchdogTimers,
}

/// The names of the policies that apply to an interface (`None`: the system default).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AppliedPolicies {
    /// Classification.
    pub qos_input: Option<String>,
    /// Egress queuing.
    pub queuing_output: Option<String>,
    /// Ingress queuing.
    pub queuing_input: Option<String>,
    /// Network-qos (always the `system qos` one).
    pub network_qos: Option<String>,
}

/// Everything QoS about one interface, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EffectiveQos {
    /// The interface.
    pub interface: InterfaceName,
    /// Which policies apply.
    pub policies: AppliedPolicies,
    /// Ingress classification into qos-groups.
    pub classifier: Classifier,
    /// Egress queue settings; index = queue = qos-group.
    pub egress: [QueueConfig; QOS_GROUPS],
    /// Ingress priority-group settings; index = qos-group.
    pub ingress: [IngressPgConfig; QOS_GROUPS],
    /// qos-groups with `pause pfc-cos` or `pause no-drop` in the network-qos policy (bit n = group n;
    /// serialized as the list).
    #[serde(serialize_with = "crate::bits::set8")]
    pub lossless: u8,
    /// Per qos-group, the 802.1p priorities PFC pauses it on (bit n = priority n;
    /// serialized as lists).
    #[serde(serialize_with = "crate::bits::sets8")]
    pub pfc_cos_of_group: [u8; QOS_GROUPS],
    /// Every priority PFC is enabled for (the union of [`Self::pfc_cos_of_group`];
    /// serialized as the list).
    #[serde(serialize_with = "crate::bits::set8")]
    pub pfc_cos: u8,
    /// Per qos-group MTU from the network-qos policy ([`DEFAULT_MTU`] unless set).
    pub mtu_of_group: [u16; QOS_GROUPS],
    /// The interface's PFC mode.
    pub pfc_mode: PfcMode,
    /// Whether the PFC TLV is advertised with a forced mode.
    pub pfc_send_tlv: bool,
    /// The PFC watchdog.
    pub watchdog: WatchdogConfig,
}

/// A class lowered on its own (see the module documentation).
enum Lowered {
    Dscp(u64),
    Cos(u8),
    /// A disjunction of conjunctions.
    Rules(Vec<Vec<RuleTerm>>),
    Never,
}

/// The 802.1p priorities PFC pauses a `pause no-drop` class on when the
/// class names none (`pfc-cos`): the priorities the ingress classification
/// maps into its qos-group, since PFC identifies a lossless class by the
/// priority it arrives with. A classification by CoS table or by rules with
/// CoS terms gives them directly; a classification that never looks at the
/// CoS (DSCP, access lists, or none) leaves priority `group` (the default
/// CoS-to-qos-group correspondence).
fn no_drop_cos(classifier: &Classifier, group: u8) -> u8 {
    if let Some(table) = classifier.cos_table {
        return (0..8u8)
            .filter(|&c| table[usize::from(c)] == group)
            .fold(0u8, |set, c| set | 1 << c);
    }
    let from_rules = classifier
        .acl_rules
        .iter()
        .filter(|r| r.qos_group == group)
        .flat_map(|r| &r.terms)
        .fold(0u8, |set, t| match t {
            RuleTerm::Cos(c) => set | c,
            _ => set,
        });
    if from_rules != 0 {
        from_rules
    } else {
        1 << (group & 7)
    }
}

impl Config {
    /// Resolve the QoS that applies to `iface`, with NX-OS defaults filled in.
    ///
    /// An interface the configuration does not mention gets the system
    /// policies and default interface settings. References to missing
    /// policies (which validation rejects) resolve as if absent.
    pub fn effective_qos(&self, iface: &InterfaceName) -> EffectiveQos {
        match self.interface_by_name(iface) {
            Some(i) => self.effective_qos_of(i),
            None => self.effective_qos_of(&Interface::new(*iface, 0)),
        }
    }

    /// Resolve the QoS that applies to `i`, one of this configuration's
    /// interfaces: [`Config::effective_qos`] without the search by name, so
    /// a loop over every interface stays linear.
    pub fn effective_qos_of(&self, i: &Interface) -> EffectiveQos {
        let user = |own: &Option<String>, system: &Option<String>| own.clone().or(system.clone());
        let policies = AppliedPolicies {
            qos_input: user(&i.service_policy_qos_input, &self.system_qos.qos_input),
            queuing_output: user(
                &i.service_policy_queuing_output,
                &self.system_qos.queuing_output,
            ),
            queuing_input: user(
                &i.service_policy_queuing_input,
                &self.system_qos.queuing_input,
            ),
            network_qos: self.system_qos.network_qos.clone(),
        };

        let classifier = self.classifier(policies.qos_input.as_deref());

        let out = policies
            .queuing_output
            .as_deref()
            .and_then(|n| self.queuing_policy(n))
            .filter(|p| p.direction == Direction::Egress);
        let egress: [QueueConfig; QOS_GROUPS] = std::array::from_fn(|q| {
            let q = q as u8;
            match out.and_then(|p| p.class(q)) {
                Some(c) => QueueConfig::from_class(c),
                None => QueueConfig::default_for(q),
            }
        });

        let input: Option<&QueuingPolicy> = policies
            .queuing_input
            .as_deref()
            .and_then(|n| self.queuing_policy(n))
            .filter(|p| p.direction == Direction::Ingress);
        let ingress: [IngressPgConfig; QOS_GROUPS] = std::array::from_fn(|q| {
            input
                .and_then(|p| p.class(q as u8))
                .map(|c| IngressPgConfig {
                    pause: c.pause,
                    queue_limit: c.queue_limit,
                })
                .unwrap_or_default()
        });

        let mut lossless = 0u8;
        let mut pfc_cos_of_group = [0u8; QOS_GROUPS];
        let mut mtu_of_group = [DEFAULT_MTU; QOS_GROUPS];
        let nq = policies
            .network_qos
            .as_deref()
            .and_then(|n| self.network_qos_policy(n));
        for c in nq.iter().flat_map(|p| &p.classes) {
            let g = usize::from(c.qos_group & 7);
            if let Some(mtu) = c.mtu {
                mtu_of_group[g] = mtu;
            }
            for cos in &c.pause_pfc_cos {
                pfc_cos_of_group[g] |= 1 << (cos & 7);
            }
            if c.no_drop && c.pause_pfc_cos.is_empty() {
                pfc_cos_of_group[g] |= no_drop_cos(&classifier, c.qos_group & 7);
            }
            if !c.pause_pfc_cos.is_empty() || c.no_drop {
                lossless |= 1 << g;
            }
        }
        let pfc_cos = pfc_cos_of_group.iter().fold(0, |a, b| a | b);

        EffectiveQos {
            interface: i.name,
            policies,
            classifier,
            egress,
            ingress,
            lossless,
            pfc_cos_of_group,
            pfc_cos,
            mtu_of_group,
            pfc_mode: i.pfc_mode,
            pfc_send_tlv: i.pfc_send_tlv,
            watchdog: WatchdogConfig {
                enabled: i
                    .pfc_watchdog
                    .or(self.pfc_watchdog_interval)
                    .unwrap_or(false),
                timers: self.pfc_watchdog,
            },
        }
    }

    /// Lower the `policy-map type qos` named `name` (none: everything in group 0).
    fn classifier(&self, name: Option<&str>) -> Classifier {
        let Some(policy) = name.and_then(|n| self.qos_policy(n)) else {
            return Classifier::default();
        };
        let default_group = policy
            .classes
            .iter()
            .find(|c| c.class == CLASS_DEFAULT)
            .and_then(|c| c.set_qos_group)
            .unwrap_or(0)
            & 7;
        let lowered: Vec<(String, Lowered, u8)> = policy
            .classes
            .iter()
            .filter(|c| c.class != CLASS_DEFAULT)
            .map(|c| {
                let group = c.set_qos_group.unwrap_or(0) & 7;
                (c.class.clone(), self.lower(&c.class), group)
            })
            .collect();
        let mut out = Classifier {
            dscp_table: [default_group; 64],
            cos_table: None,
            acl_rules: Vec::new(),
            default_group,
        };
        let all_dscp = lowered
            .iter()
            .all(|(_, l, _)| matches!(l, Lowered::Dscp(_) | Lowered::Never));
        let all_cos = lowered
            .iter()
            .all(|(_, l, _)| matches!(l, Lowered::Cos(_) | Lowered::Never));
        if all_dscp {
            let mut taken = 0u64;
            for (_, l, group) in &lowered {
                if let Lowered::Dscp(set) = l {
                    for d in 0..64 {
                        if set & !taken & (1 << d) != 0 {
                            out.dscp_table[d] = *group;
                        }
                    }
                    taken |= set;
                }
            }
        } else if all_cos {
            let mut table = [default_group; 8];
            let mut taken = 0u8;
            for (_, l, group) in &lowered {
                if let Lowered::Cos(set) = l {
                    for (c, slot) in table.iter_mut().enumerate() {
                        if set & !taken & (1 << c) != 0 {
                            *slot = *group;
                        }
                    }
                    taken |= set;
                }
            }
            out.cos_table = Some(table);
        } else {
            for (class, l, group) in lowered {
                let conjunctions = match l {
                    Lowered::Dscp(set) => vec![vec![RuleTerm::Dscp(set)]],
                    Lowered::Cos(set) => vec![vec![RuleTerm::Cos(set)]],
                    Lowered::Rules(r) => r,
                    Lowered::Never => Vec::new(),
                };
                for terms in conjunctions {
                    out.acl_rules.push(AclRule {
                        class: class.clone(),
                        terms,
                        qos_group: group,
                    });
                }
            }
        }
        out
    }

    /// Lower one class-map (a missing or empty one never matches).
    fn lower(&self, name: &str) -> Lowered {
        let Some(cm) = self.class_map(name) else {
            return Lowered::Never;
        };
        if cm.matches.is_empty() {
            return Lowered::Never;
        }
        let is_dscp = |m: &Match| matches!(m, Match::Dscp(_) | Match::Precedence(_));
        let is_cos = |m: &Match| matches!(m, Match::Cos(_));
        let cos_of = |m: &Match| match m {
            Match::Cos(s) => *s,
            _ => 0,
        };
        let any = cm.match_mode == MatchMode::Any || cm.matches.len() == 1;
        if cm.matches.iter().all(is_dscp) {
            let sets = cm.matches.iter().map(Match::dscp_set);
            return Lowered::Dscp(if any {
                sets.fold(0, |a, b| a | b)
            } else {
                sets.fold(u64::MAX, |a, b| a & b)
            });
        }
        if cm.matches.iter().all(is_cos) {
            let sets = cm.matches.iter().map(cos_of);
            return Lowered::Cos(if any {
                sets.fold(0, |a, b| a | b)
            } else {
                sets.fold(0xff, |a, b| a & b)
            });
        }
        let term = |m: &Match| match m {
            Match::Dscp(_) | Match::Precedence(_) => Some(RuleTerm::Dscp(m.dscp_set())),
            Match::Cos(s) => Some(RuleTerm::Cos(*s)),
            // A missing access list matches nothing (validation rejects it).
            Match::AccessGroup(acl) => self.access_list(acl).cloned().map(RuleTerm::Access),
        };
        if any {
            Lowered::Rules(
                cm.matches
                    .iter()
                    .filter_map(|m| term(m).map(|t| vec![t]))
                    .collect(),
            )
        } else {
            match cm.matches.iter().map(term).collect::<Option<Vec<_>>>() {
                Some(terms) => Lowered::Rules(vec![terms]),
                None => Lowered::Never,
            }
        }
    }
}
