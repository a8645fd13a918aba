//! `policy-map type network-qos` classes: per qos-group MTU and `pause pfc-cos`.

use super::*;

/// Commands under `policy-map type network-qos`.
pub(in crate::parser) static NQ_POLICY: &[Spec] = &[
    Spec::run(&["class"], "class type network-qos NAME", nq_class),
    Spec::run(
        &["no", "class"],
        "no class type network-qos NAME",
        no_nq_class,
    ),
    Spec::accept(&["description"]),
];

/// Commands under a class of a `policy-map type network-qos`.
pub(in crate::parser) static NQ_CLASS: &[Spec] = &[
    Spec::run(&["mtu"], "mtu 576-9216", nq_mtu),
    Spec::run(&["no", "mtu"], "no mtu", no_nq_mtu),
    Spec::run(
        &["pause", "no-drop"],
        "pause no-drop [pfc-cos N[,N...]]",
        pause_no_drop,
    ),
    Spec::run(
        &["no", "pause", "no-drop"],
        "no pause no-drop",
        no_pause_no_drop,
    ),
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

/// Parse a network-qos class name into its qos-group.
pub(super) fn parse_nq_class(tok: Token<'_>) -> Result<u8, Fail> {
    let lower = tok.text.to_ascii_lowercase();
    let group = match lower.strip_prefix("c-8q-nq") {
        Some("-default") => Some(0),
        Some(n) if n.len() == 1 => n.parse::<u8>().ok().filter(|g| *g <= 7),
        _ => None,
    };
    group.ok_or_else(|| {
        let names = nq_class_names();
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

/// The system network-qos class names, for hints.
fn nq_class_names() -> Vec<String> {
    std::iter::once("c-8q-nq-default".to_string())
        .chain((1..8).map(|g| format!("c-8q-nq{g}")))
        .collect()
}

/// Resolve a `class type network-qos NAME`: a system class (its qos-group),
/// or `class-default` / a `class-map type network-qos NAME` of the older dialect.
fn resolve_nq_class(b: &Builder<'_>, tok: Token<'_>) -> Result<Result<u8, GroupClass>, Fail> {
    match parse_nq_class(tok) {
        Ok(g) => Ok(Ok(g)),
        Err(_) => named_group_class(
            b,
            tok,
            "network-qos",
            &nq_class_names(),
            "c-8q-nq1 to c-8q-nq7 and c-8q-nq-default",
        )
        .map(Err),
    }
}

/// `class type network-qos NAME`.
pub(super) fn nq_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let parsed = class_name(a, "network-qos").and_then(|t| Ok((t, resolve_nq_class(b, t)?)));
    let Some((p, _)) = b.section(Section::NqPolicy) else {
        // The policy-map header failed: check the class and its body, keep nothing.
        b.enter(FrameKind::Broken(Section::NqClass));
        return parsed.map(|_| ());
    };
    let (tok, resolved) = match parsed {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::NqClass));
            return Err(f);
        }
    };
    let (group, name) = match resolved {
        Ok(g) => (g, None),
        Err(GroupClass(name, Some(g))) => (g, Some(name)),
        Err(GroupClass(name, None)) => {
            b.warn(
                tok.col,
                format!(
                    "class-map type network-qos `{name}` matches no qos-group; its class here configures nothing and is skipped"
                ),
                Some(format!(
                    "add `match qos-group N` under `class-map type network-qos {name}`"
                )),
            );
            b.enter(FrameKind::Broken(Section::NqClass));
            return Ok(());
        }
    };
    let policy = &mut b.config.network_qos_policies[p];
    let c = match policy.classes.iter().position(|c| c.qos_group == group) {
        Some(c) if policy.classes[c].class != name => {
            let other = policy.classes[c].class.clone().unwrap_or_else(|| {
                if group == 0 {
                    "c-8q-nq-default".into()
                } else {
                    format!("c-8q-nq{group}")
                }
            });
            let pname = policy.name.clone();
            b.enter(FrameKind::Broken(Section::NqClass));
            return Err(Fail::new(
                tok.col,
                format!(
                    "class `{}` configures qos-group {group}, which class `{other}` of policy-map `{pname}` already configures",
                    tok.text
                ),
                Some("each qos-group is configured by one class of a policy-map".into()),
            ));
        }
        Some(c) => c,
        None => {
            policy.classes.push(NqClass {
                qos_group: group,
                class: name,
                ..NqClass::default()
            });
            policy.classes.len() - 1
        }
    };
    b.enter(FrameKind::Section(Section::NqClass, p, c));
    Ok(())
}

/// `no class type network-qos NAME`.
pub(super) fn no_nq_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::NqPolicy) else {
        return Ok(());
    };
    let tok = class_name(a, "network-qos")?;
    let group = match resolve_nq_class(b, tok)? {
        Ok(g) => Some(g),
        Err(GroupClass(_, g)) => g,
    };
    let removed = group.is_some_and(|group| {
        remove_named(&mut b.config.network_qos_policies[p].classes, |c| {
            c.qos_group == group
        })
    });
    if !removed {
        b.warn(tok.col, format!("no class `{}` to remove", tok.text), None);
    }
    Ok(())
}

/// Run `f` on the network-qos class being configured, recording the command's position.
pub(super) fn with_nq(b: &mut Builder<'_>, item: NqItem, col: usize, f: impl FnOnce(&mut NqClass)) {
    let Some((p, c)) = b.section(Section::NqClass) else {
        return;
    };
    let policy = &mut b.config.network_qos_policies[p];
    let name = policy.name.clone();
    let class = &mut policy.classes[c];
    let group = class.qos_group;
    f(class);
    b.mark(
        At::Nq {
            policy: name,
            group,
            item,
        },
        col,
    );
}

/// `mtu N` under a network-qos class.
pub(super) fn nq_mtu(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("MTU")?;
    a.finish()?;
    let mtu = value::ranged(tok, "MTU", u64::from(MIN_MTU), u64::from(MAX_MTU))? as u16;
    with_nq(b, NqItem::Mtu, tok.col, |c| c.mtu = Some(mtu));
    Ok(())
}

/// `no mtu [N]` under a network-qos class.
pub(super) fn no_nq_mtu(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_nq(b, NqItem::Mtu, 0, |c| c.mtu = None);
    Ok(())
}

/// `pause pfc-cos N[,N...]`.
pub(super) fn pause_pfc_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let set = value_list(a, "CoS", 7, &[])?;
    let list: Vec<u8> = (0..8).filter(|c| set & (1 << c) != 0).collect();
    with_nq(b, NqItem::Pause, col, |c| c.pause_pfc_cos = list);
    Ok(())
}

/// `no pause pfc-cos [LIST]`.
pub(super) fn no_pause_pfc_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_nq(b, NqItem::Pause, 0, |c| c.pause_pfc_cos.clear());
    Ok(())
}

/// `pause no-drop [pfc-cos N[,N...]]` (older Nexus 3000/5000 dialect): the
/// class is lossless. Without `pfc-cos`, PFC pauses it on the priorities the
/// ingress classification maps into its qos-group (see `Config::effective_qos`).
pub(super) fn pause_no_drop(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let list: Vec<u8> = match a.next_token() {
        None => Vec::new(),
        Some(t) => {
            keyword(t, &["pfc-cos"], "pause no-drop keyword")?;
            let set = value_list(a, "CoS", 7, &[])?;
            (0..8).filter(|c| set & (1 << c) != 0).collect()
        }
    };
    with_nq(b, NqItem::Pause, col, |c| {
        c.no_drop = true;
        c.pause_pfc_cos = list;
    });
    Ok(())
}

/// `no pause no-drop [...]`: the class is lossy again.
pub(super) fn no_pause_no_drop(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_nq(b, NqItem::Pause, 0, |c| {
        c.no_drop = false;
        c.pause_pfc_cos.clear();
    });
    Ok(())
}
