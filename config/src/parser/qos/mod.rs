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
    AccessList, AclEntry, Bandwidth, ClassMap, ClassMapKind, Direction, GroupClassMap, Match,
    MatchMode, NetworkQosPolicy, NqClass, PauseThresholds, Port, PortMatch, QosPolicy,
    QosPolicyClass, QueueLimit, QueuingClass, QueuingPolicy, Shape, Threshold, Wred, WredPreset,
    CLASS_DEFAULT, DEFAULT_DROP_PROBABILITY,
};
use crate::validate::{At, IfKey, NqItem, PolicySlot, PolicyType, QueuingItem};

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

mod acl;
mod class_map;
mod policy_network_qos;
mod policy_qos;
mod policy_queuing;
mod service_policy;
mod system_qos;

pub(crate) use acl::protocol_name;
pub(super) use acl::*;
pub(super) use class_map::*;
pub(super) use policy_network_qos::*;
pub(super) use policy_qos::*;
pub(super) use policy_queuing::*;
pub(super) use service_policy::*;
pub(super) use system_qos::*;

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

/// Read a section header's name and nothing after it.
fn named_header<'t>(a: &mut Args<'t>, what: &str) -> Result<(Token<'t>, String), Fail> {
    let tok = a.expect(&format!("{what} name"))?;
    a.finish()?;
    Ok((tok, value::name(tok, what)?))
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
    let policy_type = match section {
        Section::QueuingPolicy => PolicyType::Queuing,
        Section::NqPolicy => PolicyType::NetworkQos,
        _ => PolicyType::Qos,
    };
    b.mark_first(At::Policy(policy_type, name.clone()), tok.col);
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

/// `class-default` or a user class-map of the older dialect: its name and
/// qos-group (`None` when the class-map matches no qos-group).
struct GroupClass(String, Option<u8>);

/// Resolve a class name that is not a system class name against the older
/// dialect: `class-default` (qos-group 0) or a `class-map type KIND NAME`.
///
/// # Errors
///
/// No class-map of that type and name: the error says so, with the closest
/// system or user name as a hint, or where the name is defined under another type.
fn named_group_class(
    b: &Builder<'_>,
    tok: Token<'_>,
    kind: &str,
    system_names: &[String],
    system_list: &str,
) -> Result<GroupClass, Fail> {
    if tok.text.eq_ignore_ascii_case(CLASS_DEFAULT) {
        return Ok(GroupClass(CLASS_DEFAULT.to_string(), Some(0)));
    }
    let maps = if kind == "queuing" {
        &b.config.queuing_class_maps
    } else {
        &b.config.network_qos_class_maps
    };
    if let Some(cm) = maps.iter().find(|c| c.name == tok.text) {
        return Ok(GroupClass(cm.name.clone(), cm.qos_group));
    }
    let other = if kind == "queuing" {
        ("network-qos", &b.config.network_qos_class_maps)
    } else {
        ("queuing", &b.config.queuing_class_maps)
    };
    let hint = if other.1.iter().any(|c| c.name == tok.text) {
        format!(
            "`{}` is a class-map type {}; define `class-map type {kind} {}` with `match qos-group N`",
            tok.text, other.0, tok.text
        )
    } else {
        let candidates = system_names
            .iter()
            .map(String::as_str)
            .chain(maps.iter().map(|c| c.name.as_str()))
            .chain(std::iter::once(CLASS_DEFAULT));
        did_you_mean(tok.text, candidates, || {
            format!(
                "define it first with `class-map type {kind} {}` and `match qos-group N`, or use a system class: {system_list}",
                tok.text
            )
        })
    };
    Err(Fail::new(
        tok.col,
        format!("unknown {kind} class `{}`", tok.text),
        Some(hint),
    ))
}
