//! The QoS sections: `class-map type qos`, `ip access-list`, the three kinds
//! of `policy-map` with their classes, `system qos`, and the interface's
//! `service-policy` lines.

use std::net::Ipv4Addr;

use super::table::Spec;
use super::value::{self, did_you_mean, keyword};
use super::{Args, Builder, Fail, FrameKind, Section};
use crate::lexer::{Line, Token};
use crate::model::{IpPrefix, Ipv4Prefix, MAX_MTU, MIN_MTU};
use crate::qos::{
    AccessList, AclEntry, Bandwidth, ClassMap, ClassMapKind, Direction, Match, MatchMode,
    NetworkQosPolicy, NqClass, PauseThresholds, PortMatch, QosPolicy, QosPolicyClass, QueueLimit,
    QueuingClass, QueuingPolicy, Shape, Threshold, Wred, WredPreset, CLASS_DEFAULT,
    DEFAULT_DROP_PROBABILITY,
};
use crate::validate::key;

/// Usage of `class-map`.
pub(super) const CLASS_MAP_USAGE: &str = "class-map [type qos] [match-any | match-all] NAME";
/// Usage of `policy-map`.
pub(super) const POLICY_MAP_USAGE: &str = "policy-map type qos | queuing | network-qos NAME";
/// Usage of `service-policy` under `system qos`.
const SYSTEM_SERVICE_POLICY: &str =
    "service-policy type network-qos | queuing output | queuing input | qos input NAME";
/// Usage of `service-policy` under an interface.
pub(super) const IFACE_SERVICE_POLICY: &str =
    "service-policy type qos input NAME | service-policy type queuing input | output NAME";
/// Usage of an access-list entry.
const ACL_ENTRY: &str = "[SEQ] permit | deny PROTOCOL SOURCE [PORTS] DESTINATION [PORTS] [dscp N]";
/// Usage of `random-detect`.
const RANDOM_DETECT: &str = "random-detect minimum-threshold N UNIT maximum-threshold N UNIT [drop-probability P] [weight W] [ecn] | random-detect threshold burst-optimized | mesh-optimized [ecn]";

/// Commands under `class-map type qos`.
pub(super) static CLASS_MAP: &[Spec] = &[
    Spec::run(&["match", "dscp"], "match dscp LIST", match_dscp),
    Spec::run(
        &["no", "match", "dscp"],
        "no match dscp LIST",
        no_match_dscp,
    ),
    Spec::run(&["match", "cos"], "match cos LIST", match_cos),
    Spec::run(&["no", "match", "cos"], "no match cos LIST", no_match_cos),
    Spec::run(
        &["match", "precedence"],
        "match precedence LIST",
        match_precedence,
    ),
    Spec::run(
        &["no", "match", "precedence"],
        "no match precedence LIST",
        no_match_precedence,
    ),
    Spec::run(
        &["match", "access-group", "name"],
        "match access-group name ACL",
        match_access_group,
    ),
    Spec::run(
        &["no", "match", "access-group", "name"],
        "no match access-group name ACL",
        no_match_access_group,
    ),
    Spec::accept(&["description"]),
    Spec::skip(&["match", "class-map"]),
    Spec::skip(&["match", "discard-class"]),
    Spec::skip(&["match", "ip"]),
    Spec::skip(&["match", "not"]),
    Spec::skip(&["match", "packet"]),
    Spec::skip(&["match", "protocol"]),
    Spec::skip(&["match", "qos-group"]),
];

/// Commands under `ip access-list` (numbered lines are handled by [`numbered_entry`]).
pub(super) static ACCESS_LIST: &[Spec] = &[
    Spec::run(&["permit"], ACL_ENTRY, permit),
    Spec::run(&["deny"], ACL_ENTRY, deny),
    Spec::run(&["no", "permit"], ACL_ENTRY, no_permit),
    Spec::run(&["no", "deny"], ACL_ENTRY, no_deny),
    Spec::accept(&["remark"]),
    Spec::accept(&["statistics"]),
    Spec::skip(&["fragments"]),
];

/// Commands under `policy-map type qos`.
pub(super) static QOS_POLICY: &[Spec] = &[
    Spec::run(
        &["class"],
        "class [type qos] NAME | class class-default",
        qos_class,
    ),
    Spec::run(&["no", "class"], "no class [type qos] NAME", no_qos_class),
    Spec::accept(&["description"]),
];

/// Commands under a class of a `policy-map type qos`.
pub(super) static QOS_CLASS: &[Spec] = &[
    Spec::run(&["set", "qos-group"], "set qos-group 0-7", set_qos_group),
    Spec::run(
        &["no", "set", "qos-group"],
        "no set qos-group [0-7]",
        no_set_qos_group,
    ),
    Spec::skip(&["police"]),
    Spec::skip(&["set", "cos"]),
    Spec::skip(&["set", "discard-class"]),
    Spec::skip(&["set", "dscp"]),
    Spec::skip(&["set", "precedence"]),
    Spec::skip(&["set"]),
];

/// Commands under `policy-map type queuing`.
pub(super) static QUEUING_POLICY: &[Spec] = &[
    Spec::run(&["class"], "class type queuing NAME", queuing_class),
    Spec::run(
        &["no", "class"],
        "no class type queuing NAME",
        no_queuing_class,
    ),
    Spec::accept(&["description"]),
];

/// Commands under a class of a `policy-map type queuing`.
pub(super) static QUEUING_CLASS: &[Spec] = &[
    Spec::run(&["priority"], "priority [level 1-8]", priority),
    Spec::run(&["no", "priority"], "no priority [level N]", no_priority),
    Spec::run(
        &["bandwidth"],
        "bandwidth percent P | bandwidth remaining percent P | bandwidth V bps|kbps|mbps|gbps",
        bandwidth,
    ),
    Spec::run(&["no", "bandwidth"], "no bandwidth ...", no_bandwidth),
    Spec::run(&["random-detect"], RANDOM_DETECT, random_detect),
    Spec::run(&["no", "random-detect"], "no random-detect ...", no_random_detect),
    Spec::run(
        &["queue-limit"],
        "queue-limit N packets|bytes|kbytes|mbytes | queue-limit percent P | queue-limit dynamic 0-10",
        queue_limit,
    ),
    Spec::run(&["no", "queue-limit"], "no queue-limit ...", no_queue_limit),
    Spec::run(
        &["shape"],
        "shape min V kbps|mbps|gbps max V kbps|mbps|gbps",
        shape,
    ),
    Spec::run(&["no", "shape"], "no shape ...", no_shape),
    Spec::run(
        &["pause"],
        "pause buffer-size B pause-threshold XOFF resume-threshold XON",
        pause,
    ),
    Spec::run(&["no", "pause"], "no pause ...", no_pause),
];

/// Commands under `policy-map type network-qos`.
pub(super) static NQ_POLICY: &[Spec] = &[
    Spec::run(&["class"], "class type network-qos NAME", nq_class),
    Spec::run(
        &["no", "class"],
        "no class type network-qos NAME",
        no_nq_class,
    ),
    Spec::accept(&["description"]),
];

/// Commands under a class of a `policy-map type network-qos`.
pub(super) static NQ_CLASS: &[Spec] = &[
    Spec::run(&["mtu"], "mtu 576-9216", nq_mtu),
    Spec::run(&["no", "mtu"], "no mtu", no_nq_mtu),
    Spec::run(
        &["pause", "pfc-cos"],
        "pause pfc-cos N[,N...]",
        pause_pfc_cos,
    ),
    Spec::run(
        &["no", "pause", "pfc-cos"],
        "no pause pfc-cos",
        no_pause_pfc_cos,
    ),
    Spec::skip(&["congestion-control"]),
    Spec::skip(&["pause"]),
    Spec::skip(&["set"]),
];

/// Commands under `system qos`.
pub(super) static SYSTEM_QOS: &[Spec] = &[
    Spec::run(
        &["service-policy"],
        SYSTEM_SERVICE_POLICY,
        system_service_policy,
    ),
    Spec::run(
        &["no", "service-policy"],
        SYSTEM_SERVICE_POLICY,
        no_system_service_policy,
    ),
    Spec::skip(&["fex"]),
];

// ---------------------------------------------------------------- headers

/// Read `type KIND` if present (exact keyword only, so a name is never taken for it).
fn section_type(
    a: &mut Args<'_>,
    kinds: &[&'static str],
) -> Result<Option<(&'static str, usize)>, Fail> {
    match a.peek() {
        Some(t) if t.text.eq_ignore_ascii_case("type") => {
            a.next_token();
            let k = a.expect("type")?;
            Ok(Some((keyword(k, kinds, "type")?, k.col)))
        }
        _ => Ok(None),
    }
}

/// `class-map [type qos] [match-any|match-all] NAME`.
pub(super) fn class_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let head_col = a.line.tokens[0].col;
    let kind = section_type(a, &["qos", "queuing", "network-qos", "control-plane"]);
    let kind = match kind {
        Ok(k) => k,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::ClassMap));
            return Err(f);
        }
    };
    if let Some((k, _)) = kind.filter(|(k, _)| *k != "qos") {
        a.skip_rest();
        b.skip("", format!("class-map type {k}"), head_col, true);
        b.enter(FrameKind::Skip);
        return Ok(());
    }
    match class_map_header(b, a) {
        Ok(index) => {
            b.enter(FrameKind::Section(Section::ClassMap, index, 0));
            Ok(())
        }
        Err(f) => {
            b.enter(FrameKind::Broken(Section::ClassMap));
            Err(f)
        }
    }
}

/// Read the rest of a `class-map type qos` header and find or create the class-map.
fn class_map_header(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<usize, Fail> {
    let mode = match a.peek() {
        Some(t) if t.text.eq_ignore_ascii_case("match-any") => Some((MatchMode::Any, t)),
        Some(t) if t.text.eq_ignore_ascii_case("match-all") => Some((MatchMode::All, t)),
        _ => None,
    };
    if mode.is_some() {
        a.next_token();
    }
    let tok = a.expect("class-map name")?;
    a.finish()?;
    let name = value::name(tok, "class-map")?;
    if name == CLASS_DEFAULT {
        return Err(Fail::new(
            tok.col,
            "`class-default` is system-defined and cannot be configured",
            Some("use `class class-default` inside a policy-map".into()),
        ));
    }
    if let Some(index) = b.config.class_maps.iter().position(|c| c.name == name) {
        let have = b.config.class_maps[index].match_mode;
        if let Some((want, mtok)) = mode.filter(|(m, _)| *m != have) {
            let first = b.map.at.get(&key::class_map(&name)).map_or(0, |p| p.line);
            return Err(Fail::new(
                mtok.col,
                format!(
                    "class-map `{name}` is already {} (line {first}); it cannot also be {}",
                    have.keyword(),
                    want.keyword()
                ),
                Some(format!(
                    "remove it first with `no class-map type qos {name}`, or rename one of them"
                )),
            ));
        }
        return Ok(index);
    }
    b.mark_first(key::class_map(&name), tok.col);
    b.config.class_maps.push(ClassMap {
        name,
        kind: ClassMapKind::Qos,
        match_mode: mode.map_or(MatchMode::All, |(m, _)| m),
        matches: Vec::new(),
    });
    Ok(b.config.class_maps.len() - 1)
}

/// `no class-map [type qos] [match-any|match-all] NAME`.
pub(super) fn no_class_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    if let Some((k, _)) = section_type(a, &["qos", "queuing", "network-qos", "control-plane"])? {
        if k != "qos" {
            a.skip_rest();
            return Ok(());
        }
    }
    if a.peek().is_some_and(|t| {
        t.text.eq_ignore_ascii_case("match-any") || t.text.eq_ignore_ascii_case("match-all")
    }) {
        a.next_token();
    }
    let tok = a.expect("class-map name")?;
    a.finish()?;
    let before = b.config.class_maps.len();
    b.config.class_maps.retain(|c| c.name != tok.text);
    if b.config.class_maps.len() == before {
        b.warn(
            tok.col,
            format!("no class-map `{}` to remove", tok.text),
            None,
        );
    }
    Ok(())
}

/// `ip access-list NAME`.
pub(super) fn access_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (tok, name) = match named_header(a, "access list") {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::AccessList));
            return Err(f);
        }
    };
    let index = match b.config.access_lists.iter().position(|l| l.name == name) {
        Some(i) => i,
        None => {
            b.mark_first(format!("acl/{name}"), tok.col);
            b.config.access_lists.push(AccessList {
                name,
                entries: Vec::new(),
            });
            b.config.access_lists.len() - 1
        }
    };
    b.enter(FrameKind::Section(Section::AccessList, index, 0));
    Ok(())
}

/// Read a section header's name and nothing after it.
fn named_header<'t>(a: &mut Args<'t>, what: &str) -> Result<(Token<'t>, String), Fail> {
    let tok = a.expect(&format!("{what} name"))?;
    a.finish()?;
    Ok((tok, value::name(tok, what)?))
}

/// `no ip access-list NAME`.
pub(super) fn no_access_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("access list name")?;
    a.finish()?;
    let before = b.config.access_lists.len();
    b.config.access_lists.retain(|l| l.name != tok.text);
    if b.config.access_lists.len() == before {
        b.warn(
            tok.col,
            format!("no access list `{}` to remove", tok.text),
            None,
        );
    }
    Ok(())
}

/// Kinds of policy-map, as written after `type`.
const POLICY_KINDS: &[&str] = &["qos", "queuing", "network-qos", "control-plane", "pbr"];

/// `policy-map [type qos|queuing|network-qos] NAME`.
pub(super) fn policy_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let head_col = a.line.tokens[0].col;
    let kind = match section_type(a, POLICY_KINDS) {
        Ok(k) => k.map_or("qos", |(k, _)| k),
        Err(f) => {
            b.enter(FrameKind::Broken(Section::QosPolicy));
            return Err(f);
        }
    };
    let section = match kind {
        "qos" => Section::QosPolicy,
        "queuing" => Section::QueuingPolicy,
        "network-qos" => Section::NqPolicy,
        other => {
            a.skip_rest();
            b.skip("", format!("policy-map type {other}"), head_col, true);
            b.enter(FrameKind::Skip);
            return Ok(());
        }
    };
    let (tok, name) = match named_header(a, "policy-map") {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(section));
            return Err(f);
        }
    };
    b.mark_first(key::policy(kind, &name), tok.col);
    let c = &mut b.config;
    let index = match section {
        Section::QosPolicy => find_or_push(
            &mut c.qos_policies,
            |p| p.name == name,
            || QosPolicy {
                name: name.clone(),
                classes: Vec::new(),
            },
        ),
        Section::QueuingPolicy => find_or_push(
            &mut c.queuing_policies,
            |p| p.name == name,
            || QueuingPolicy {
                name: name.clone(),
                direction: Direction::Egress,
                classes: Vec::new(),
            },
        ),
        _ => find_or_push(
            &mut c.network_qos_policies,
            |p| p.name == name,
            || NetworkQosPolicy {
                name: name.clone(),
                classes: Vec::new(),
            },
        ),
    };
    b.enter(FrameKind::Section(section, index, 0));
    Ok(())
}

/// `no policy-map [type KIND] NAME`.
pub(super) fn no_policy_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let kind = section_type(a, POLICY_KINDS)?.map_or("qos", |(k, _)| k);
    let tok = a.expect("policy-map name")?;
    a.finish()?;
    let name = tok.text;
    let c = &mut b.config;
    let removed = match kind {
        "qos" => remove_named(&mut c.qos_policies, |p| p.name == name),
        "queuing" => remove_named(&mut c.queuing_policies, |p| p.name == name),
        "network-qos" => remove_named(&mut c.network_qos_policies, |p| p.name == name),
        _ => true,
    };
    if !removed {
        b.warn(
            tok.col,
            format!("no policy-map type {kind} `{name}` to remove"),
            None,
        );
    }
    Ok(())
}

/// The index of the first item `found` accepts, pushing `make()` when there is none.
fn find_or_push<T>(v: &mut Vec<T>, found: impl Fn(&T) -> bool, make: impl FnOnce() -> T) -> usize {
    match v.iter().position(found) {
        Some(i) => i,
        None => {
            v.push(make());
            v.len() - 1
        }
    }
}

/// Remove the items `found` accepts; whether there were any.
fn remove_named<T>(v: &mut Vec<T>, found: impl Fn(&T) -> bool) -> bool {
    let before = v.len();
    v.retain(|x| !found(x));
    v.len() != before
}

/// `system qos`.
pub(super) fn system_qos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let r = a.finish();
    b.enter(FrameKind::Section(Section::SystemQos, 0, 0));
    r
}

/// `no system qos`: remove every system policy.
pub(super) fn no_system_qos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    b.config.system_qos = Default::default();
    Ok(())
}

// ---------------------------------------------------------------- class-map

/// Index of the class-map being configured.
fn cm(b: &Builder<'_>) -> usize {
    b.section(Section::ClassMap).map_or(0, |(i, _)| i)
}

/// Named DSCP values NX-OS accepts.
const DSCP_NAMES: &[(&str, u8)] = &[
    ("default", 0),
    ("cs0", 0),
    ("cs1", 8),
    ("af11", 10),
    ("af12", 12),
    ("af13", 14),
    ("cs2", 16),
    ("af21", 18),
    ("af22", 20),
    ("af23", 22),
    ("cs3", 24),
    ("af31", 26),
    ("af32", 28),
    ("af33", 30),
    ("cs4", 32),
    ("af41", 34),
    ("af42", 36),
    ("af43", 38),
    ("cs5", 40),
    ("ef", 46),
    ("cs6", 48),
    ("cs7", 56),
];

/// Named IP precedence values NX-OS accepts.
const PRECEDENCE_NAMES: &[(&str, u8)] = &[
    ("routine", 0),
    ("priority", 1),
    ("immediate", 2),
    ("flash", 3),
    ("flash-override", 4),
    ("critical", 5),
    ("internet", 6),
    ("network", 7),
];

/// A value list: the rest of the line as numbers, ranges and names separated by commas or blanks.
fn value_list(a: &mut Args<'_>, what: &str, max: u8, names: &[(&str, u8)]) -> Result<u64, Fail> {
    let hint = if names.is_empty() {
        format!("{what} values are 0-{max}, e.g. 3 or 1,3-5")
    } else {
        format!(
            "{what} values are 0-{max} or names such as {}",
            names[names.len() / 2].0
        )
    };
    let mut set = 0u64;
    let mut any = false;
    while let Some(tok) = a.next_token() {
        let mut offset = 0;
        for piece in tok.text.split(',') {
            let col = tok.col + tok.text[..offset].chars().count();
            offset += piece.len() + 1;
            if piece.is_empty() {
                continue;
            }
            let one = |text: &str, col: usize| -> Result<u8, Fail> {
                if let Some((_, v)) = names.iter().find(|(n, _)| n.eq_ignore_ascii_case(text)) {
                    return Ok(*v);
                }
                if !text.bytes().all(|c| c.is_ascii_digit()) {
                    let hint = did_you_mean(text, names.iter().map(|(n, _)| *n), || hint.clone());
                    return Err(Fail::new(
                        col,
                        format!("invalid {what} value `{text}`"),
                        Some(hint),
                    ));
                }
                let t = Token {
                    text,
                    col,
                    offset: 0,
                };
                let n = value::ranged(t, what, 0, u64::from(max))?;
                Ok(n as u8)
            };
            let (lo, hi) = match piece
                .split_once('-')
                .filter(|(l, _)| !l.is_empty() && l.bytes().all(|c| c.is_ascii_digit()))
            {
                Some((l, h)) => {
                    let lo = one(l, col)?;
                    let hi = one(h, col + l.chars().count() + 1)?;
                    if hi < lo {
                        return Err(Fail::new(
                            col,
                            format!("{what} range `{piece}` ends before it starts"),
                            Some(format!("write the lower value first, e.g. {hi}-{lo}")),
                        ));
                    }
                    (lo, hi)
                }
                None => {
                    let v = one(piece, col)?;
                    (v, v)
                }
            };
            for v in lo..=hi {
                set |= 1 << v;
            }
            any = true;
        }
    }
    if !any {
        return Err(a.missing(&format!("{what} values")));
    }
    Ok(set)
}

/// Add a match line to the current class-map (identical lines are kept once).
fn add_match(b: &mut Builder<'_>, m: Match) {
    let index = cm(b);
    if let Some(c) = b.config.class_maps.get_mut(index) {
        if !c.matches.contains(&m) {
            c.matches.push(m);
        }
    }
}

/// Remove values from matches of one kind; drop lines left empty.
fn remove_values(
    b: &mut Builder<'_>,
    kind: fn(&Match) -> Option<u64>,
    set: u64,
    make: fn(u64) -> Match,
) {
    let index = cm(b);
    if let Some(c) = b.config.class_maps.get_mut(index) {
        let mut out = Vec::new();
        for m in c.matches.drain(..) {
            match kind(&m) {
                Some(v) if v & !set != 0 => out.push(make(v & !set)),
                Some(_) => {}
                None => out.push(m),
            }
        }
        c.matches = out;
    }
}

/// `match dscp LIST`.
fn match_dscp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "DSCP", 63, DSCP_NAMES)?;
    add_match(b, Match::Dscp(set));
    Ok(())
}

/// `no match dscp LIST`.
fn no_match_dscp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "DSCP", 63, DSCP_NAMES)?;
    remove_values(
        b,
        |m| match m {
            Match::Dscp(s) => Some(*s),
            _ => None,
        },
        set,
        Match::Dscp,
    );
    Ok(())
}

/// `match cos LIST`.
fn match_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "CoS", 7, &[])?;
    add_match(b, Match::Cos(set as u8));
    Ok(())
}

/// `no match cos LIST`.
fn no_match_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "CoS", 7, &[])?;
    remove_values(
        b,
        |m| match m {
            Match::Cos(s) => Some(u64::from(*s)),
            _ => None,
        },
        set,
        |v| Match::Cos(v as u8),
    );
    Ok(())
}

/// `match precedence LIST`.
fn match_precedence(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "precedence", 7, PRECEDENCE_NAMES)?;
    add_match(b, Match::Precedence(set as u8));
    Ok(())
}

/// `no match precedence LIST`.
fn no_match_precedence(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "precedence", 7, PRECEDENCE_NAMES)?;
    remove_values(
        b,
        |m| match m {
            Match::Precedence(s) => Some(u64::from(*s)),
            _ => None,
        },
        set,
        |v| Match::Precedence(v as u8),
    );
    Ok(())
}

/// `match access-group name ACL`.
fn match_access_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("access list name")?;
    a.finish()?;
    let acl = value::name(tok, "access list")?;
    let index = cm(b);
    if let Some(name) = b.config.class_maps.get(index).map(|c| c.name.clone()) {
        b.mark(key::acl_ref(&name, &acl), tok.col);
    }
    add_match(b, Match::AccessGroup(acl));
    Ok(())
}

/// `no match access-group name ACL`.
fn no_match_access_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("access list name")?;
    a.finish()?;
    let index = cm(b);
    if let Some(c) = b.config.class_maps.get_mut(index) {
        c.matches
            .retain(|m| !matches!(m, Match::AccessGroup(n) if n == tok.text));
    }
    Ok(())
}

// ---------------------------------------------------------------- access lists

/// Whether a line under `ip access-list` starts with a sequence number (or is `no SEQ`).
pub(super) fn is_numbered_entry(line: &Line<'_>) -> bool {
    let digits = |t: &Token<'_>| !t.text.is_empty() && t.text.bytes().all(|c| c.is_ascii_digit());
    match &line.tokens[..] {
        [first, ..] if digits(first) => true,
        [no, second, ..] => no.text.eq_ignore_ascii_case("no") && digits(second),
        _ => false,
    }
}

/// `SEQ permit|deny ...` or `no SEQ` under `ip access-list`.
pub(super) fn numbered_entry(
    b: &mut Builder<'_>,
    index: usize,
    line: &Line<'_>,
) -> Result<(), Fail> {
    let negated = line.tokens[0].text.eq_ignore_ascii_case("no");
    let seq_tok = line.tokens[usize::from(negated)];
    let seq = value::ranged(seq_tok, "sequence number", 1, u64::from(u32::MAX))? as u32;
    if negated {
        Args::new(line, 2, "no SEQ").finish()?;
        let list = &mut b.config.access_lists[index];
        let before = list.entries.len();
        list.entries.retain(|e| e.seq != seq);
        if list.entries.len() == before {
            let message = format!("no entry {seq} in access list `{}` to remove", list.name);
            b.warn(seq_tok.col, message, None);
        }
        return Ok(());
    }
    let Some(verb) = line.tokens.get(1) else {
        return Err(Args::new(line, 1, ACL_ENTRY).missing("permit or deny"));
    };
    let permit = match keyword(*verb, &["permit", "deny", "remark"], "access list action")? {
        "remark" => return Ok(()),
        v => v == "permit",
    };
    let mut a = Args::new(line, 2, ACL_ENTRY);
    add_entry(b, index, &mut a, permit, Some((seq, seq_tok.col)))
}

/// `permit ...` (numbered 10 past the last entry).
fn permit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let index = b.section(Section::AccessList).map_or(0, |(i, _)| i);
    add_entry(b, index, a, true, None)
}

/// `deny ...` (numbered 10 past the last entry).
fn deny(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let index = b.section(Section::AccessList).map_or(0, |(i, _)| i);
    add_entry(b, index, a, false, None)
}

/// `no permit ...`: remove entries with the same conditions.
fn no_permit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    remove_entry(b, a, true)
}

/// `no deny ...`: remove entries with the same conditions.
fn no_deny(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    remove_entry(b, a, false)
}

/// Remove the entries whose conditions equal the line's.
fn remove_entry(b: &mut Builder<'_>, a: &mut Args<'_>, permit: bool) -> Result<(), Fail> {
    let index = b.section(Section::AccessList).map_or(0, |(i, _)| i);
    let start = a.peek().map_or(0, |t| t.col);
    let Entry::Modelled(want) = entry_conditions(a, permit, 0)? else {
        return Ok(());
    };
    let list = &mut b.config.access_lists[index];
    let same = |e: &AclEntry| {
        AclEntry {
            seq: 0,
            ..e.clone()
        } == want
    };
    let before = list.entries.len();
    list.entries.retain(|e| !same(e));
    if list.entries.len() == before {
        b.warn(start, "no such entry to remove".to_string(), None);
    }
    Ok(())
}

/// The result of reading an entry's conditions.
enum Entry {
    /// Every condition is modelled.
    Modelled(AclEntry),
    /// It uses an option railyard does not model: (option, its column).
    Unmodelled(String, usize),
}

/// Read and add one entry.
fn add_entry(
    b: &mut Builder<'_>,
    index: usize,
    a: &mut Args<'_>,
    permit: bool,
    seq: Option<(u32, usize)>,
) -> Result<(), Fail> {
    let at = seq.map_or_else(|| a.line.tokens[0].col, |(_, c)| c);
    let entry = match entry_conditions(a, permit, 0)? {
        Entry::Modelled(e) => e,
        Entry::Unmodelled(option, col) => {
            let name = b.config.access_lists[index].name.clone();
            b.mark_first(key::acl_skipped(&name), at);
            b.skip("ip access-list option", option, col, true);
            return Ok(());
        }
    };
    let list = &mut b.config.access_lists[index];
    let seq = match seq {
        Some((s, _)) => s,
        None => {
            let last = list.entries.last().map_or(0, |e| e.seq);
            last.checked_add(10).ok_or_else(|| {
                Fail::new(
                    at,
                    "no sequence number is left after the last entry",
                    Some("number the entry explicitly".into()),
                )
            })?
        }
    };
    let entry = AclEntry { seq, ..entry };
    match list.entries.iter().position(|e| e.seq >= seq) {
        Some(i) if list.entries[i].seq == seq => {
            if list.entries[i] != entry {
                let name = list.name.clone();
                return Err(Fail::new(
                    at,
                    format!("access list `{name}` already has a different entry {seq}"),
                    Some(format!(
                        "remove it first with `no {seq}`, or use another sequence number"
                    )),
                ));
            }
        }
        Some(i) => list.entries.insert(i, entry),
        None => list.entries.push(entry),
    }
    Ok(())
}

/// IP protocols by name.
const PROTOCOLS: &[(&str, u8)] = &[
    ("icmp", 1),
    ("igmp", 2),
    ("tcp", 6),
    ("udp", 17),
    ("gre", 47),
    ("esp", 50),
    ("ahp", 51),
    ("eigrp", 88),
    ("ospf", 89),
    ("pim", 103),
    ("sctp", 132),
];

/// The name NX-OS prints for a protocol number, if it has one.
pub(crate) fn protocol_name(n: u8) -> Option<&'static str> {
    PROTOCOLS
        .iter()
        .find(|(_, v)| *v == n)
        .map(|(name, _)| *name)
}

/// Well-known ports by name.
const PORTS: &[(&str, u16)] = &[
    ("echo", 7),
    ("ftp-data", 20),
    ("ftp", 21),
    ("ssh", 22),
    ("telnet", 23),
    ("smtp", 25),
    ("tacacs", 49),
    ("domain", 53),
    ("bootps", 67),
    ("bootpc", 68),
    ("tftp", 69),
    ("www", 80),
    ("pop3", 110),
    ("ntp", 123),
    ("snmp", 161),
    ("snmptrap", 162),
    ("bgp", 179),
    ("isakmp", 500),
    ("syslog", 514),
];

/// Read `PROTOCOL SRC [PORTS] DST [PORTS] [dscp N] [log]`.
fn entry_conditions(a: &mut Args<'_>, permit: bool, seq: u32) -> Result<Entry, Fail> {
    let ptok = a.expect("protocol")?;
    let protocol = if ptok.text.eq_ignore_ascii_case("ip") {
        None
    } else if let Some((_, n)) = PROTOCOLS
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(ptok.text))
    {
        Some(*n)
    } else if ptok.text.bytes().all(|c| c.is_ascii_digit()) {
        Some(value::ranged(ptok, "protocol number", 0, 255)? as u8)
    } else {
        let names = std::iter::once("ip").chain(PROTOCOLS.iter().map(|(n, _)| *n));
        return Err(Fail::new(
            ptok.col,
            format!("unknown protocol `{}`", ptok.text),
            Some(did_you_mean(ptok.text, names, || {
                "protocols are ip, tcp, udp, icmp, another name such as gre, or a number 0-255"
                    .into()
            })),
        ));
    };
    let ports_ok = matches!(protocol, Some(6 | 17 | 132));
    let src = address(a, "source")?;
    let src_port = port_match(a, ports_ok)?;
    let dst = address(a, "destination")?;
    let dst_port = port_match(a, ports_ok)?;
    let mut dscp = None;
    while let Some(tok) = a.next_token() {
        let lower = tok.text.to_ascii_lowercase();
        match lower.as_str() {
            "dscp" => {
                let v = a.expect("DSCP value")?;
                let d = DSCP_NAMES
                    .iter()
                    .find(|(n, _)| n.eq_ignore_ascii_case(v.text))
                    .map(|(_, d)| u64::from(*d));
                let d = match d {
                    Some(d) => d,
                    None => value::ranged(v, "DSCP", 0, 63)?,
                };
                dscp = Some(d as u8);
            }
            "log" => {}
            _ if matches!(src, Addr::Unmodelled(_)) || matches!(dst, Addr::Unmodelled(_)) => break,
            _ => {
                a.skip_rest();
                return Ok(Entry::Unmodelled(lower, tok.col));
            }
        }
    }
    let addr = |x: Addr| match x {
        Addr::Any => Ok(None),
        Addr::Prefix(p) => Ok(Some(IpPrefix::V4(p))),
        Addr::Unmodelled(col) => Err(col),
    };
    let (src, dst) = match (addr(src), addr(dst)) {
        (Ok(s), Ok(d)) => (s, d),
        (Err(col), _) | (_, Err(col)) => {
            a.skip_rest();
            return Ok(Entry::Unmodelled("wildcard mask".into(), col));
        }
    };
    Ok(Entry::Modelled(AclEntry {
        seq,
        permit,
        protocol,
        src,
        dst,
        src_port,
        dst_port,
        dscp,
    }))
}

/// A source or destination of an access-list entry.
enum Addr {
    Any,
    Prefix(Ipv4Prefix),
    /// A non-contiguous wildcard mask, at this column.
    Unmodelled(usize),
}

/// Read `any`, `host A.B.C.D`, `A.B.C.D/LEN` or `A.B.C.D WILDCARD`.
fn address(a: &mut Args<'_>, what: &str) -> Result<Addr, Fail> {
    let tok = a.expect(&format!("{what} address"))?;
    if tok.text.eq_ignore_ascii_case("any") {
        return Ok(Addr::Any);
    }
    if tok.text.eq_ignore_ascii_case("host") {
        let h = a.expect("host address")?;
        let addr = h.text.parse::<Ipv4Addr>().map_err(|_| {
            Fail::new(
                h.col,
                format!("invalid IPv4 address `{}`", h.text),
                Some("expected a dotted quad such as 10.0.0.1".into()),
            )
        })?;
        return Ok(Addr::Prefix(Ipv4Prefix { addr, len: 32 }));
    }
    if !tok.text.contains('/') {
        if let Ok(addr) = tok.text.parse::<Ipv4Addr>() {
            let Some(wtok) = a.peek().filter(|w| w.text.parse::<Ipv4Addr>().is_ok()) else {
                return Err(Fail::new(
                    tok.col,
                    format!("`{}` has no prefix length", tok.text),
                    Some(format!("write {0}/LEN, host {0}, or any", tok.text)),
                ));
            };
            a.next_token();
            let wild = u32::from(
                wtok.text
                    .parse::<Ipv4Addr>()
                    .unwrap_or(Ipv4Addr::UNSPECIFIED),
            );
            let mask = !wild;
            let len = mask.leading_ones();
            if mask.checked_shl(len).unwrap_or(0) != 0 {
                return Ok(Addr::Unmodelled(wtok.col));
            }
            let p = Ipv4Prefix {
                addr,
                len: len as u8,
            };
            return Ok(Addr::Prefix(p.network()));
        }
    }
    let p = tok
        .text
        .parse::<Ipv4Prefix>()
        .map_err(|e| Fail::value(tok, e))?;
    if p.network() != p {
        return Err(Fail::new(
            tok.col,
            format!("host bits set in prefix {p}"),
            Some(format!("the network address is {}", p.network())),
        ));
    }
    Ok(Addr::Prefix(p))
}

/// Read an optional port condition (`eq|neq|lt|gt N`, `range A B`).
fn port_match(a: &mut Args<'_>, ports_ok: bool) -> Result<Option<PortMatch>, Fail> {
    let Some(tok) = a.peek() else { return Ok(None) };
    let op = tok.text.to_ascii_lowercase();
    if !matches!(op.as_str(), "eq" | "neq" | "lt" | "gt" | "range") {
        return Ok(None);
    }
    if !ports_ok {
        return Err(Fail::new(
            tok.col,
            format!("`{}` needs a protocol with ports", tok.text),
            Some("port conditions apply to tcp, udp and sctp entries".into()),
        ));
    }
    a.next_token();
    let port = |a: &mut Args<'_>| -> Result<u16, Fail> {
        let p = a.expect("port")?;
        if let Some((_, n)) = PORTS.iter().find(|(n, _)| n.eq_ignore_ascii_case(p.text)) {
            return Ok(*n);
        }
        if !p.text.bytes().all(|c| c.is_ascii_digit()) {
            return Err(Fail::new(
                p.col,
                format!("unknown port `{}`", p.text),
                Some(did_you_mean(p.text, PORTS.iter().map(|(n, _)| *n), || {
                    "a port is a number 0-65535 or a name such as www or bgp".into()
                })),
            ));
        }
        Ok(value::ranged(p, "port", 0, 65535)? as u16)
    };
    Ok(Some(match op.as_str() {
        "eq" => PortMatch::Eq(port(a)?),
        "neq" => PortMatch::Neq(port(a)?),
        "lt" => PortMatch::Lt(port(a)?),
        "gt" => PortMatch::Gt(port(a)?),
        _ => {
            let lo_col = a.peek().map_or(0, |t| t.col);
            let lo = port(a)?;
            let hi = port(a)?;
            if hi < lo {
                return Err(Fail::new(
                    lo_col,
                    format!("port range {lo}-{hi} ends before it starts"),
                    Some("write the lower port first".into()),
                ));
            }
            PortMatch::Range(lo, hi)
        }
    }))
}

// ---------------------------------------------------------------- qos policy

/// Read `[type KIND] NAME` after `class`.
fn class_name<'t>(a: &mut Args<'t>, kind: &'static str) -> Result<Token<'t>, Fail> {
    if a.peek()
        .is_some_and(|t| t.text.eq_ignore_ascii_case("type"))
    {
        a.next_token();
        let k = a.expect("class type")?;
        if !k.text.eq_ignore_ascii_case(kind) {
            return Err(Fail::new(
                k.col,
                format!(
                    "a `{kind}` policy-map takes `class type {kind}`, not `{}`",
                    k.text
                ),
                Some(format!("write `class type {kind} NAME`")),
            ));
        }
    }
    let tok = a.expect("class name")?;
    a.finish()?;
    Ok(tok)
}

/// `class [type qos] NAME` under a qos policy.
fn qos_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::QosPolicy) else {
        return Ok(());
    };
    let tok = match class_name(a, "qos").and_then(|t| value::name(t, "class").map(|n| (t, n))) {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::QosClass));
            return Err(f);
        }
    };
    let (tok, class) = tok;
    let pname = b.config.qos_policies[p].name.clone();
    b.mark(key::qos_class(&pname, &class), tok.col);
    let classes = &mut b.config.qos_policies[p].classes;
    let c = find_or_push(
        classes,
        |c| c.class == class,
        || QosPolicyClass {
            class: class.clone(),
            set_qos_group: None,
        },
    );
    b.enter(FrameKind::Section(Section::QosClass, p, c));
    Ok(())
}

/// `no class NAME` under a qos policy.
fn no_qos_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::QosPolicy) else {
        return Ok(());
    };
    let tok = class_name(a, "qos")?;
    if !remove_named(&mut b.config.qos_policies[p].classes, |c| {
        c.class == tok.text
    }) {
        b.warn(tok.col, format!("no class `{}` to remove", tok.text), None);
    }
    Ok(())
}

/// `set qos-group N`.
fn set_qos_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("qos-group")?;
    a.finish()?;
    let g = value::ranged(tok, "qos-group", 0, 7)? as u8;
    if let Some((p, c)) = b.section(Section::QosClass) {
        b.config.qos_policies[p].classes[c].set_qos_group = Some(g);
    }
    Ok(())
}

/// `no set qos-group [N]`.
fn no_set_qos_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some((p, c)) = b.section(Section::QosClass) {
        b.config.qos_policies[p].classes[c].set_qos_group = None;
    }
    Ok(())
}

// ---------------------------------------------------------------- queuing policy

/// Every queuing class name, for suggestions.
fn queuing_class_names() -> Vec<String> {
    [Direction::Egress, Direction::Ingress]
        .into_iter()
        .flat_map(|d| (0..8).map(move |q| d.class_name(q)))
        .collect()
}

/// Parse a system-defined queuing class name into its direction and queue.
fn parse_queuing_class(tok: Token<'_>) -> Result<(Direction, u8), Fail> {
    let lower = tok.text.to_ascii_lowercase();
    let parse = |rest: &str| match rest {
        "-default" => Some(0),
        n if n.len() == 1 => n.parse::<u8>().ok().filter(|q| (1..=7).contains(q)),
        _ => None,
    };
    let found = if let Some(rest) = lower.strip_prefix("c-out-8q-q") {
        parse(rest).map(|q| (Direction::Egress, q))
    } else if let Some(rest) = lower.strip_prefix("c-in-q") {
        parse(rest).map(|q| (Direction::Ingress, q))
    } else {
        None
    };
    found.ok_or_else(|| {
        let names = queuing_class_names();
        Fail::new(
            tok.col,
            format!("unknown queuing class `{}`", tok.text),
            Some(did_you_mean(tok.text, names.iter().map(String::as_str), || {
                "queuing classes are c-out-8q-q1 to c-out-8q-q7 and c-out-8q-q-default (egress), c-in-q1 to c-in-q7 and c-in-q-default (ingress)".into()
            })),
        )
    })
}

/// `class type queuing NAME`.
fn queuing_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::QueuingPolicy) else {
        return Ok(());
    };
    let result = class_name(a, "queuing").and_then(|t| Ok((t, parse_queuing_class(t)?)));
    let (tok, (direction, queue)) = match result {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::QueuingClass));
            return Err(f);
        }
    };
    let policy = &mut b.config.queuing_policies[p];
    if policy.classes.is_empty() {
        policy.direction = direction;
    } else if policy.direction != direction {
        let (have, want) = match policy.direction {
            Direction::Egress => ("egress", "ingress"),
            Direction::Ingress => ("ingress", "egress"),
        };
        let name = policy.name.clone();
        b.enter(FrameKind::Broken(Section::QueuingClass));
        return Err(Fail::new(
            tok.col,
            format!(
                "policy-map `{name}` has {have} classes; `{}` is an {want} class",
                tok.text
            ),
            Some("egress (c-out-…) and ingress (c-in-…) queuing are separate policy-maps".into()),
        ));
    }
    let c = find_or_push(
        &mut policy.classes,
        |c| c.queue == queue,
        || QueuingClass::new(queue),
    );
    b.enter(FrameKind::Section(Section::QueuingClass, p, c));
    Ok(())
}

/// `no class type queuing NAME`.
fn no_queuing_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::QueuingPolicy) else {
        return Ok(());
    };
    let tok = class_name(a, "queuing")?;
    let (_, queue) = parse_queuing_class(tok)?;
    if !remove_named(&mut b.config.queuing_policies[p].classes, |c| {
        c.queue == queue
    }) {
        b.warn(tok.col, format!("no class `{}` to remove", tok.text), None);
    }
    Ok(())
}

/// Run `f` on the queuing class being configured, recording the command's position.
fn with_queue(
    b: &mut Builder<'_>,
    what: &str,
    col: usize,
    f: impl FnOnce(&mut QueuingClass, Direction) -> Result<(), Fail>,
) -> Result<(), Fail> {
    let Some((p, c)) = b.section(Section::QueuingClass) else {
        return Ok(());
    };
    let policy = &mut b.config.queuing_policies[p];
    let direction = policy.direction;
    let name = policy.name.clone();
    let class = &mut policy.classes[c];
    let queue = class.queue;
    f(class, direction)?;
    b.mark(key::queuing(&name, queue, what), col);
    Ok(())
}

/// `priority [level N]`.
fn priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let level = match a.next_token() {
        None => 1,
        Some(t) => {
            keyword(t, &["level"], "priority keyword")?;
            let n = a.expect("priority level")?;
            value::ranged(n, "priority level", 1, 8)? as u8
        }
    };
    a.finish()?;
    with_queue(b, "priority", col, |c, _| {
        if c.bandwidth.is_some() {
            return Err(Fail::new(
                col,
                "a strict-priority queue cannot also have a bandwidth share",
                Some("remove `bandwidth` from the class first with `no bandwidth`".into()),
            ));
        }
        c.priority_level = Some(level);
        Ok(())
    })
}

/// `no priority [level N]`.
fn no_priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, "priority", 0, |c, _| {
        c.priority_level = None;
        Ok(())
    })
}

/// `bandwidth percent P | remaining percent P | V UNIT`.
fn bandwidth(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let first = a.expect("bandwidth")?;
    let bw = if first.text.bytes().all(|c| c.is_ascii_digit()) {
        let unit = a.expect("rate unit")?;
        Bandwidth::Rate(value::rate(first, unit, "bandwidth")?)
    } else {
        match keyword(first, &["percent", "remaining"], "bandwidth keyword")? {
            "percent" => {
                let p = a.expect("percentage")?;
                Bandwidth::Percent(value::ranged(p, "bandwidth percent", 0, 100)? as u8)
            }
            _ => {
                let kw = a.expect("`percent`")?;
                keyword(kw, &["percent"], "bandwidth keyword")?;
                let p = a.expect("percentage")?;
                Bandwidth::RemainingPercent(
                    value::ranged(p, "bandwidth remaining percent", 0, 100)? as u8,
                )
            }
        }
    };
    a.finish()?;
    with_queue(b, "bandwidth", col, |c, _| {
        if c.priority_level.is_some() {
            return Err(Fail::new(
                col,
                "a strict-priority queue cannot also have a bandwidth share",
                Some("remove `priority` from the class first with `no priority`".into()),
            ));
        }
        c.bandwidth = Some(bw);
        Ok(())
    })
}

/// `no bandwidth ...`.
fn no_bandwidth(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, "bandwidth", 0, |c, _| {
        c.bandwidth = None;
        Ok(())
    })
}

/// `random-detect ...` in either form.
fn random_detect(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let first = a.expect("`minimum-threshold` or `threshold`")?;
    let wred = match keyword(
        first,
        &["minimum-threshold", "threshold"],
        "random-detect keyword",
    )? {
        "threshold" => {
            let p = a.expect("`burst-optimized` or `mesh-optimized`")?;
            let preset = match keyword(
                p,
                &["burst-optimized", "mesh-optimized"],
                "WRED threshold set",
            )? {
                "burst-optimized" => WredPreset::BurstOptimized,
                _ => WredPreset::MeshOptimized,
            };
            let ecn = a.eat("ecn").is_some();
            a.finish()?;
            preset.wred(ecn)
        }
        _ => {
            let min_tok = a.expect("minimum threshold")?;
            let unit = a.expect("unit")?;
            let min = value::depth(min_tok, unit, "minimum threshold", false)?;
            let kw = a.expect("`maximum-threshold`")?;
            keyword(kw, &["maximum-threshold"], "random-detect keyword")?;
            let max_tok = a.expect("maximum threshold")?;
            let unit = a.expect("unit")?;
            let max = value::depth(max_tok, unit, "maximum threshold", false)?;
            let mut wred = Wred {
                min,
                max,
                drop_probability: DEFAULT_DROP_PROBABILITY,
                weight: 0,
                ecn: false,
                preset: None,
            };
            while let Some(t) = a.next_token() {
                match keyword(
                    t,
                    &["drop-probability", "weight", "ecn"],
                    "random-detect keyword",
                )? {
                    "drop-probability" => {
                        let v = a.expect("drop probability")?;
                        wred.drop_probability = value::ranged(v, "drop-probability", 0, 100)? as u8;
                    }
                    "weight" => {
                        let v = a.expect("weight")?;
                        wred.weight = value::ranged(v, "weight", 0, 15)? as u8;
                    }
                    _ => wred.ecn = true,
                }
            }
            if !min.same_unit(max) {
                return Err(Fail::new(
                    max_tok.col,
                    "WRED thresholds mix packets and bytes",
                    Some(
                        "give both thresholds in packets, or both in bytes, kbytes or mbytes"
                            .into(),
                    ),
                ));
            }
            if min.value() > max.value() {
                return Err(Fail::new(
                    min_tok.col,
                    format!(
                        "WRED minimum threshold {} is above the maximum {}",
                        min.show(),
                        max.show()
                    ),
                    Some("the minimum threshold must not exceed the maximum".into()),
                ));
            }
            wred
        }
    };
    a.finish()?;
    with_queue(b, "random-detect", col, |c, _| {
        c.wred = Some(wred);
        Ok(())
    })
}

/// `no random-detect ...`.
fn no_random_detect(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, "random-detect", 0, |c, _| {
        c.wred = None;
        Ok(())
    })
}

/// `queue-limit N UNIT | percent P | dynamic A`.
fn queue_limit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let first = a.expect("queue limit")?;
    let limit = if first.text.bytes().all(|c| c.is_ascii_digit()) {
        let unit = a.expect("unit")?;
        match value::depth(first, unit, "queue limit", false)? {
            Threshold::Bytes(n) => QueueLimit::Bytes(n),
            Threshold::Packets(n) => QueueLimit::Packets(n),
        }
    } else {
        match keyword(first, &["percent", "dynamic"], "queue-limit keyword")? {
            "percent" => {
                let p = a.expect("percentage")?;
                QueueLimit::Percent(value::ranged(p, "queue-limit percent", 1, 100)? as u8)
            }
            _ => {
                let v = a.expect("alpha")?;
                QueueLimit::Dynamic(value::ranged(v, "queue-limit dynamic alpha", 0, 10)? as u8)
            }
        }
    };
    a.finish()?;
    with_queue(b, "queue-limit", col, |c, _| {
        c.queue_limit = Some(limit);
        Ok(())
    })
}

/// `no queue-limit ...`.
fn no_queue_limit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, "queue-limit", 0, |c, _| {
        c.queue_limit = None;
        Ok(())
    })
}

/// `shape min V UNIT max V UNIT`.
fn shape(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let kw = a.expect("`min`")?;
    keyword(kw, &["min"], "shape keyword")?;
    let n = a.expect("minimum rate")?;
    let u = a.expect("rate unit")?;
    let min_bps = value::rate(n, u, "shape minimum")?;
    let kw = a.expect("`max`")?;
    keyword(kw, &["max"], "shape keyword")?;
    let m = a.expect("maximum rate")?;
    let u = a.expect("rate unit")?;
    let max_bps = value::rate(m, u, "shape maximum")?;
    a.finish()?;
    if min_bps > max_bps {
        return Err(Fail::new(
            n.col,
            "shaper minimum is above its maximum",
            Some("the guaranteed rate must not exceed the maximum rate".into()),
        ));
    }
    if max_bps == 0 {
        return Err(Fail::new(
            m.col,
            "shaper maximum is zero",
            Some("a queue shaped to 0 never transmits; remove the class instead".into()),
        ));
    }
    with_queue(b, "shape", col, |c, _| {
        c.shape = Some(Shape { min_bps, max_bps });
        Ok(())
    })
}

/// `no shape ...`.
fn no_shape(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, "shape", 0, |c, _| {
        c.shape = None;
        Ok(())
    })
}

/// Read a byte count with an optional unit (bytes by default).
fn bytes_arg(a: &mut Args<'_>, what: &str) -> Result<(u64, usize), Fail> {
    let n = a.expect(what)?;
    let unit_follows = a.peek().is_some_and(|u| {
        !u.text.bytes().all(|c| c.is_ascii_digit()) && keyword(u, value::BYTE_UNITS, "unit").is_ok()
    });
    let bytes = if unit_follows {
        let u = a.expect("unit")?;
        value::depth(n, u, what, true)?.value()
    } else {
        value::number(n, what, &format!("{what} is a number of bytes"))?
    };
    Ok((bytes, n.col))
}

/// `pause buffer-size B pause-threshold XOFF resume-threshold XON` (ingress classes).
fn pause(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let kw = a.expect("`buffer-size`")?;
    keyword(kw, &["buffer-size"], "pause keyword")?;
    let (buffer_size, _) = bytes_arg(a, "buffer size")?;
    let kw = a.expect("`pause-threshold`")?;
    keyword(kw, &["pause-threshold"], "pause keyword")?;
    let (xoff, xoff_col) = bytes_arg(a, "pause threshold")?;
    let kw = a.expect("`resume-threshold`")?;
    keyword(kw, &["resume-threshold"], "pause keyword")?;
    let (xon, xon_col) = bytes_arg(a, "resume threshold")?;
    a.finish()?;
    if xoff > buffer_size {
        return Err(Fail::new(
            xoff_col,
            format!("pause threshold {xoff} exceeds the buffer size {buffer_size}"),
            Some("XOFF must be reached before the buffer is full".into()),
        ));
    }
    if xon >= xoff {
        return Err(Fail::new(
            xon_col,
            format!("resume threshold {xon} is not below the pause threshold {xoff}"),
            Some("XON must be below XOFF, or the queue pauses and resumes at once".into()),
        ));
    }
    with_queue(b, "pause", col, |c, direction| {
        if direction == Direction::Egress {
            return Err(Fail::new(
                col,
                "pause thresholds apply to ingress classes",
                Some("put `pause buffer-size …` under `class type queuing c-in-qN` in an input policy".into()),
            ));
        }
        c.pause = Some(PauseThresholds {
            buffer_size,
            xoff,
            xon,
        });
        Ok(())
    })
}

/// `no pause ...`.
fn no_pause(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, "pause", 0, |c, _| {
        c.pause = None;
        Ok(())
    })
}

// ---------------------------------------------------------------- network-qos

/// Parse a network-qos class name into its qos-group.
fn parse_nq_class(tok: Token<'_>) -> Result<u8, Fail> {
    let lower = tok.text.to_ascii_lowercase();
    let group = match lower.strip_prefix("c-8q-nq") {
        Some("-default") => Some(0),
        Some(n) if n.len() == 1 => n.parse::<u8>().ok().filter(|g| *g <= 7),
        _ => None,
    };
    group.ok_or_else(|| {
        let names: Vec<String> = std::iter::once("c-8q-nq-default".to_string())
            .chain((1..8).map(|g| format!("c-8q-nq{g}")))
            .collect();
        Fail::new(
            tok.col,
            format!("unknown network-qos class `{}`", tok.text),
            Some(did_you_mean(
                tok.text,
                names.iter().map(String::as_str),
                || "network-qos classes are c-8q-nq1 to c-8q-nq7 and c-8q-nq-default".into(),
            )),
        )
    })
}

/// `class type network-qos NAME`.
fn nq_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::NqPolicy) else {
        return Ok(());
    };
    let group = match class_name(a, "network-qos").and_then(parse_nq_class) {
        Ok(g) => g,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::NqClass));
            return Err(f);
        }
    };
    let classes = &mut b.config.network_qos_policies[p].classes;
    let c = find_or_push(
        classes,
        |c| c.qos_group == group,
        || NqClass {
            qos_group: group,
            ..NqClass::default()
        },
    );
    b.enter(FrameKind::Section(Section::NqClass, p, c));
    Ok(())
}

/// `no class type network-qos NAME`.
fn no_nq_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::NqPolicy) else {
        return Ok(());
    };
    let tok = class_name(a, "network-qos")?;
    let group = parse_nq_class(tok)?;
    if !remove_named(&mut b.config.network_qos_policies[p].classes, |c| {
        c.qos_group == group
    }) {
        b.warn(tok.col, format!("no class `{}` to remove", tok.text), None);
    }
    Ok(())
}

/// Run `f` on the network-qos class being configured, recording the command's position.
fn with_nq(b: &mut Builder<'_>, what: &str, col: usize, f: impl FnOnce(&mut NqClass)) {
    let Some((p, c)) = b.section(Section::NqClass) else {
        return;
    };
    let policy = &mut b.config.network_qos_policies[p];
    let name = policy.name.clone();
    let class = &mut policy.classes[c];
    let group = class.qos_group;
    f(class);
    b.mark(key::nq(&name, group, what), col);
}

/// `mtu N` under a network-qos class.
fn nq_mtu(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("MTU")?;
    a.finish()?;
    let mtu = value::ranged(tok, "MTU", u64::from(MIN_MTU), u64::from(MAX_MTU))? as u16;
    with_nq(b, "mtu", tok.col, |c| c.mtu = Some(mtu));
    Ok(())
}

/// `no mtu [N]` under a network-qos class.
fn no_nq_mtu(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_nq(b, "mtu", 0, |c| c.mtu = None);
    Ok(())
}

/// `pause pfc-cos N[,N...]`.
fn pause_pfc_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let set = value_list(a, "CoS", 7, &[])?;
    let list: Vec<u8> = (0..8).filter(|c| set & (1 << c) != 0).collect();
    with_nq(b, "pause", col, |c| c.pause_pfc_cos = list);
    Ok(())
}

/// `no pause pfc-cos [LIST]`.
fn no_pause_pfc_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_nq(b, "pause", 0, |c| c.pause_pfc_cos.clear());
    Ok(())
}

// ---------------------------------------------------------------- service-policy

/// Which policy a `service-policy` line names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PolicySlot {
    /// `type network-qos`.
    NetworkQos,
    /// `type queuing output`.
    QueuingOutput,
    /// `type queuing input`.
    QueuingInput,
    /// `type qos input`.
    QosInput,
}

impl PolicySlot {
    /// The key suffix used for positions.
    pub(crate) fn key(self) -> &'static str {
        match self {
            PolicySlot::NetworkQos => "network-qos",
            PolicySlot::QueuingOutput => "queuing-output",
            PolicySlot::QueuingInput => "queuing-input",
            PolicySlot::QosInput => "qos-input",
        }
    }
}

/// Read `[type KIND] [input|output]` and the policy name (optional when `name_optional`).
fn service_policy_args<'t>(
    a: &mut Args<'t>,
    name_optional: bool,
) -> Result<(PolicySlot, Option<Token<'t>>), Fail> {
    let mut kind = "qos";
    if a.peek()
        .is_some_and(|t| t.text.eq_ignore_ascii_case("type"))
    {
        a.next_token();
        let k = a.expect("policy type")?;
        kind = keyword(k, &["qos", "queuing", "network-qos"], "policy type")?;
    }
    let slot = if kind == "network-qos" {
        PolicySlot::NetworkQos
    } else {
        let d = a.expect("`input` or `output`")?;
        match (kind, keyword(d, &["input", "output"], "direction")?) {
            ("queuing", "output") => PolicySlot::QueuingOutput,
            ("queuing", _) => PolicySlot::QueuingInput,
            (_, "input") => PolicySlot::QosInput,
            _ => {
                return Err(Fail::new(
                    d.col,
                    "qos policies classify traffic on input only",
                    Some("write `service-policy type qos input NAME`".into()),
                ))
            }
        }
    };
    let name = if name_optional {
        a.next_token()
    } else {
        Some(a.expect("policy name")?)
    };
    a.finish()?;
    Ok((slot, name))
}

/// The slot of [`SystemQos`](crate::qos::SystemQos) a policy goes in.
fn system_slot(s: &mut crate::qos::SystemQos, slot: PolicySlot) -> &mut Option<String> {
    match slot {
        PolicySlot::NetworkQos => &mut s.network_qos,
        PolicySlot::QueuingOutput => &mut s.queuing_output,
        PolicySlot::QueuingInput => &mut s.queuing_input,
        PolicySlot::QosInput => &mut s.qos_input,
    }
}

/// `service-policy ...` under `system qos`.
fn system_service_policy(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (slot, name) = service_policy_args(a, false)?;
    let Some(tok) = name else { return Ok(()) };
    let name = value::name(tok, "policy-map")?;
    b.mark(key::system_policy(slot.key()), tok.col);
    *system_slot(&mut b.config.system_qos, slot) = Some(name);
    Ok(())
}

/// `no service-policy ...` under `system qos`.
fn no_system_service_policy(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (slot, _) = service_policy_args(a, true)?;
    *system_slot(&mut b.config.system_qos, slot) = None;
    Ok(())
}

/// The slot of an interface a policy goes in.
fn iface_slot(i: &mut crate::model::Interface, slot: PolicySlot) -> &mut Option<String> {
    match slot {
        PolicySlot::QueuingOutput => &mut i.service_policy_queuing_output,
        PolicySlot::QueuingInput => &mut i.service_policy_queuing_input,
        PolicySlot::QosInput | PolicySlot::NetworkQos => &mut i.service_policy_qos_input,
    }
}

/// `service-policy type qos input NAME | type queuing input|output NAME` under an interface.
pub(super) fn iface_service_policy(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let first = a.peek();
    let (slot, name) = service_policy_args(a, false)?;
    if slot == PolicySlot::NetworkQos {
        return Err(Fail::new(
            first.map_or(0, |t| t.col),
            "network-qos policies apply to the whole switch",
            Some("put `service-policy type network-qos NAME` under `system qos`".into()),
        ));
    }
    let Some(tok) = name else { return Ok(()) };
    let name = value::name(tok, "policy-map")?;
    for index in b.members() {
        b.mark(key::iface_policy(index, slot.key()), tok.col);
        *iface_slot(&mut b.config.interfaces[index], slot) = Some(name.clone());
    }
    Ok(())
}

/// `no service-policy ...` under an interface.
pub(super) fn no_iface_service_policy(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (slot, _) = service_policy_args(a, true)?;
    for index in b.members() {
        *iface_slot(&mut b.config.interfaces[index], slot) = None;
    }
    Ok(())
}
