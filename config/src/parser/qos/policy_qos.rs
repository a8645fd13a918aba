//! `policy-map type qos` classes and `set qos-group`: the ingress classification policy.

use super::*;

/// Commands under `policy-map type qos`.
pub(in crate::parser) static QOS_POLICY: &[Spec] = &[
    Spec::run(
        &["class"],
        "class [type qos] NAME | class class-default",
        qos_class,
    ),
    Spec::run(&["no", "class"], "no class [type qos] NAME", no_qos_class),
    Spec::accept(&["description"]),
];

/// Commands under a class of a `policy-map type qos`.
pub(in crate::parser) static QOS_CLASS: &[Spec] = &[
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

/// `class [type qos] NAME` under a qos policy.
pub(super) fn qos_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let parsed = class_name(a, "qos").and_then(|t| value::name(t, "class").map(|n| (t, n)));
    let Some((p, _)) = b.section(Section::QosPolicy) else {
        // The policy-map header failed: check the class and its body, keep nothing.
        b.enter(FrameKind::Broken(Section::QosClass));
        return parsed.map(|_| ());
    };
    let tok = match parsed {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::QosClass));
            return Err(f);
        }
    };
    let (tok, class) = tok;
    let pname = b.config.qos_policies[p].name.clone();
    b.mark(
        At::QosClass {
            policy: pname.clone(),
            class: class.clone(),
        },
        tok.col,
    );
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
pub(super) fn no_qos_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
pub(super) fn set_qos_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("qos-group")?;
    a.finish()?;
    let g = value::ranged(tok, "qos-group", 0, 7)? as u8;
    if let Some((p, c)) = b.section(Section::QosClass) {
        b.config.qos_policies[p].classes[c].set_qos_group = Some(g);
    }
    Ok(())
}

/// `no set qos-group [N]`.
pub(super) fn no_set_qos_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some((p, c)) = b.section(Section::QosClass) {
        b.config.qos_policies[p].classes[c].set_qos_group = None;
    }
    Ok(())
}
