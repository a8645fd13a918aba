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
pub(super) fn nq_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
pub(super) fn no_nq_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
