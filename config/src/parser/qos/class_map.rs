//! `class-map type qos` sections and their `match` lines (DSCP, precedence, CoS, access groups).

use super::*;

/// Commands under `class-map type qos`.
pub(in crate::parser) static CLASS_MAP: &[Spec] = &[
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

/// `class-map [type qos] [match-any|match-all] NAME`.
pub(in crate::parser) fn class_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let head_col = a.line.tokens[0].col;
    let kind = section_type(a, &["qos", "queuing", "network-qos", "control-plane"]);
    let kind = match kind {
        Ok(k) => k,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::ClassMap));
            return Err(f);
        }
    };
    if let Some((k @ ("queuing" | "network-qos"), _)) = kind {
        return group_class_map(b, a, k == "queuing");
    }
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

/// Commands under `class-map type queuing|network-qos` (older Nexus 3000/5000 dialect).
pub(in crate::parser) static GROUP_CLASS_MAP: &[Spec] = &[
    Spec::run(
        &["match", "qos-group"],
        "match qos-group 0-7",
        match_qos_group,
    ),
    Spec::run(
        &["no", "match", "qos-group"],
        "no match qos-group [0-7]",
        no_match_qos_group,
    ),
    Spec::accept(&["description"]),
];

/// The user-named qos-group class-maps of one type.
pub(super) fn group_class_maps<'b>(
    b: &'b mut Builder<'_>,
    queuing: bool,
) -> &'b mut Vec<GroupClassMap> {
    if queuing {
        &mut b.config.queuing_class_maps
    } else {
        &mut b.config.network_qos_class_maps
    }
}

/// `class-map type queuing|network-qos [match-any|match-all] NAME`: a user
/// name for one qos-group, as the older Nexus 3000/5000 dialect writes it.
fn group_class_map(b: &mut Builder<'_>, a: &mut Args<'_>, queuing: bool) -> Result<(), Fail> {
    let section = if queuing {
        Section::QueuingClassMap
    } else {
        Section::NqClassMap
    };
    if a.peek().is_some_and(|t| {
        t.text.eq_ignore_ascii_case("match-any") || t.text.eq_ignore_ascii_case("match-all")
    }) {
        a.next_token();
    }
    let header = a
        .expect("class-map name")
        .and_then(|tok| {
            a.finish()?;
            Ok((tok, value::name(tok, "class-map")?))
        })
        .and_then(|(tok, name)| {
            if name == CLASS_DEFAULT {
                return Err(Fail::new(
                    tok.col,
                    "`class-default` is system-defined and cannot be configured",
                    Some(
                        "use `class type queuing|network-qos class-default` inside a policy-map"
                            .into(),
                    ),
                ));
            }
            Ok(name)
        });
    let name = match header {
        Ok(n) => n,
        Err(f) => {
            b.enter(FrameKind::Broken(section));
            return Err(f);
        }
    };
    let maps = group_class_maps(b, queuing);
    let index = find_or_push(
        maps,
        |c| c.name == name,
        || GroupClassMap {
            name: name.clone(),
            qos_group: None,
        },
    );
    b.enter(FrameKind::Section(section, index, 0));
    Ok(())
}

/// The group class-map being configured: whether it is a queuing one, and its index.
fn group_cm(b: &Builder<'_>) -> Option<(bool, usize)> {
    b.section(Section::QueuingClassMap)
        .map(|(i, _)| (true, i))
        .or_else(|| b.section(Section::NqClassMap).map(|(i, _)| (false, i)))
}

/// `match qos-group N` under a queuing or network-qos class-map.
pub(super) fn match_qos_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("qos-group")?;
    a.finish()?;
    let g = value::ranged(tok, "qos-group", 0, 7)? as u8;
    let Some((queuing, i)) = group_cm(b) else {
        return Ok(());
    };
    let cm = &mut group_class_maps(b, queuing)[i];
    match cm.qos_group {
        Some(have) if have != g => Err(Fail::new(
            tok.col,
            format!(
                "class-map `{}` already matches qos-group {have}; a queuing or network-qos class-map names one qos-group",
                cm.name
            ),
            Some(format!(
                "remove the other first with `no match qos-group {have}`"
            )),
        )),
        _ => {
            cm.qos_group = Some(g);
            Ok(())
        }
    }
}

/// `no match qos-group [N]`.
pub(super) fn no_match_qos_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let g = match a.next_token() {
        Some(tok) => Some(value::ranged(tok, "qos-group", 0, 7)? as u8),
        None => None,
    };
    a.finish()?;
    let Some((queuing, i)) = group_cm(b) else {
        return Ok(());
    };
    let cm = &mut group_class_maps(b, queuing)[i];
    if g.is_none() || cm.qos_group == g {
        cm.qos_group = None;
    }
    Ok(())
}

/// Read the rest of a `class-map type qos` header and find or create the class-map.
pub(super) fn class_map_header(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<usize, Fail> {
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
            let first = b
                .map
                .at
                .get(&At::ClassMap(name.clone()))
                .map_or(0, |p| p.line);
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
    b.mark_first(At::ClassMap(name.clone()), tok.col);
    b.config.class_maps.push(ClassMap {
        name,
        kind: ClassMapKind::Qos,
        match_mode: mode.map_or(MatchMode::All, |(m, _)| m),
        matches: Vec::new(),
    });
    Ok(b.config.class_maps.len() - 1)
}

/// `no class-map [type qos] [match-any|match-all] NAME`.
pub(in crate::parser) fn no_class_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let kind = section_type(a, &["qos", "queuing", "network-qos", "control-plane"])?;
    if let Some((k, _)) = kind {
        if k == "queuing" || k == "network-qos" {
            if a.peek().is_some_and(|t| {
                t.text.eq_ignore_ascii_case("match-any") || t.text.eq_ignore_ascii_case("match-all")
            }) {
                a.next_token();
            }
            let tok = a.expect("class-map name")?;
            a.finish()?;
            if !remove_named(group_class_maps(b, k == "queuing"), |c| c.name == tok.text) {
                b.warn(
                    tok.col,
                    format!("no class-map type {k} `{}` to remove", tok.text),
                    None,
                );
            }
            return Ok(());
        }
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

/// Index of the class-map being configured (`None` in a class-map whose header failed).
pub(super) fn cm(b: &Builder<'_>) -> Option<usize> {
    b.section(Section::ClassMap).map(|(i, _)| i)
}

/// Named DSCP values NX-OS accepts.
pub(super) const DSCP_NAMES: &[(&str, u8)] = &[
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
pub(super) const PRECEDENCE_NAMES: &[(&str, u8)] = &[
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
pub(super) fn value_list(
    a: &mut Args<'_>,
    what: &str,
    max: u8,
    names: &[(&str, u8)],
) -> Result<u64, Fail> {
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
pub(super) fn add_match(b: &mut Builder<'_>, m: Match) {
    let Some(index) = cm(b) else {
        return;
    };
    if let Some(c) = b.config.class_maps.get_mut(index) {
        if !c.matches.contains(&m) {
            c.matches.push(m);
        }
    }
}

/// Remove values from matches of one kind; drop lines left empty.
pub(super) fn remove_values(
    b: &mut Builder<'_>,
    kind: fn(&Match) -> Option<u64>,
    set: u64,
    make: fn(u64) -> Match,
) {
    let Some(index) = cm(b) else {
        return;
    };
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
pub(super) fn match_dscp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "DSCP", 63, DSCP_NAMES)?;
    add_match(b, Match::Dscp(set));
    Ok(())
}

/// `no match dscp LIST`.
pub(super) fn no_match_dscp(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
pub(super) fn match_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "CoS", 7, &[])?;
    add_match(b, Match::Cos(set as u8));
    Ok(())
}

/// `no match cos LIST`.
pub(super) fn no_match_cos(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
pub(super) fn match_precedence(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let set = value_list(a, "precedence", 7, PRECEDENCE_NAMES)?;
    add_match(b, Match::Precedence(set as u8));
    Ok(())
}

/// `no match precedence LIST`.
pub(super) fn no_match_precedence(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
pub(super) fn match_access_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("access list name")?;
    a.finish()?;
    let acl = value::name(tok, "access list")?;
    let Some(index) = cm(b) else {
        return Ok(());
    };
    if let Some(name) = b.config.class_maps.get(index).map(|c| c.name.clone()) {
        b.mark(
            At::AclRef {
                class_map: name.clone(),
                acl: acl.clone(),
            },
            tok.col,
        );
    }
    add_match(b, Match::AccessGroup(acl));
    Ok(())
}

/// `no match access-group name ACL`.
pub(super) fn no_match_access_group(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("access list name")?;
    a.finish()?;
    let Some(index) = cm(b) else {
        return Ok(());
    };
    if let Some(c) = b.config.class_maps.get_mut(index) {
        c.matches
            .retain(|m| !matches!(m, Match::AccessGroup(n) if n == tok.text));
    }
    Ok(())
}
