//! `policy-map type queuing` classes: priority, bandwidth, WRED, queue limits, shaping and `pause` thresholds.

use super::*;

/// Commands under `policy-map type queuing`.
pub(in crate::parser) static QUEUING_POLICY: &[Spec] = &[
    Spec::run(&["class"], "class type queuing NAME", queuing_class),
    Spec::run(
        &["no", "class"],
        "no class type queuing NAME",
        no_queuing_class,
    ),
    Spec::accept(&["description"]),
];

/// Commands under a class of a `policy-map type queuing`.
pub(in crate::parser) static QUEUING_CLASS: &[Spec] = &[
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

/// Every queuing class name, for suggestions.
pub(super) fn queuing_class_names() -> Vec<String> {
    [Direction::Egress, Direction::Ingress]
        .into_iter()
        .flat_map(|d| (0..8).map(move |q| d.class_name(q)))
        .collect()
}

/// Parse a system-defined queuing class name into its direction and queue.
pub(super) fn parse_queuing_class(tok: Token<'_>) -> Result<(Direction, u8), Fail> {
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

/// The system queuing class names, for hints.
const QUEUING_SYSTEM_LIST: &str = "c-out-8q-q1 to c-out-8q-q7 and c-out-8q-q-default (egress), c-in-q1 to c-in-q7 and c-in-q-default (ingress)";

/// Resolve a `class type queuing NAME`: a system class (with its direction
/// and queue), or `class-default` / a `class-map type queuing NAME` of the
/// older dialect (with the queue of its qos-group, the same number).
fn resolve_queuing_class(
    b: &Builder<'_>,
    tok: Token<'_>,
) -> Result<Result<(Direction, u8), GroupClass>, Fail> {
    match parse_queuing_class(tok) {
        Ok(x) => Ok(Ok(x)),
        Err(_) => {
            let names = queuing_class_names();
            named_group_class(b, tok, "queuing", &names, QUEUING_SYSTEM_LIST).map(Err)
        }
    }
}

/// `class type queuing NAME`.
pub(super) fn queuing_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let parsed = class_name(a, "queuing").and_then(|t| Ok((t, resolve_queuing_class(b, t)?)));
    let Some((p, _)) = b.section(Section::QueuingPolicy) else {
        // The policy-map header failed: check the class and its body, keep nothing.
        b.enter(FrameKind::Broken(Section::QueuingClass));
        return parsed.map(|_| ());
    };
    let (tok, resolved) = match parsed {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::QueuingClass));
            return Err(f);
        }
    };
    let (queue, name) = match resolved {
        Ok((direction, queue)) => {
            let policy = &mut b.config.queuing_policies[p];
            // Only system class names say which side a policy is for.
            if !policy.classes.iter().any(|c| c.class.is_none()) {
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
                    Some(
                        "egress (c-out-…) and ingress (c-in-…) queuing are separate policy-maps"
                            .into(),
                    ),
                ));
            }
            (queue, None)
        }
        Err(GroupClass(name, Some(group))) => (group, Some(name)),
        Err(GroupClass(name, None)) => {
            b.warn(
                tok.col,
                format!(
                    "class-map type queuing `{name}` matches no qos-group; its class here configures no queue and is skipped"
                ),
                Some(format!(
                    "add `match qos-group N` under `class-map type queuing {name}`"
                )),
            );
            b.enter(FrameKind::Broken(Section::QueuingClass));
            return Ok(());
        }
    };
    let policy = &mut b.config.queuing_policies[p];
    let c = match policy.classes.iter().position(|c| c.queue == queue) {
        Some(c) if policy.classes[c].class != name => {
            let other = policy.classes[c]
                .class
                .clone()
                .unwrap_or_else(|| policy.direction.class_name(queue));
            let pname = policy.name.clone();
            b.enter(FrameKind::Broken(Section::QueuingClass));
            return Err(Fail::new(
                tok.col,
                format!(
                    "class `{}` configures queue {queue}, which class `{other}` of policy-map `{pname}` already configures",
                    tok.text
                ),
                Some("each qos-group's queue is configured by one class of a policy-map".into()),
            ));
        }
        Some(c) => c,
        None => {
            policy.classes.push(QueuingClass {
                class: name,
                ..QueuingClass::new(queue)
            });
            policy.classes.len() - 1
        }
    };
    b.enter(FrameKind::Section(Section::QueuingClass, p, c));
    Ok(())
}

/// `no class type queuing NAME`.
pub(super) fn no_queuing_class(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let Some((p, _)) = b.section(Section::QueuingPolicy) else {
        return Ok(());
    };
    let tok = class_name(a, "queuing")?;
    let queue = match resolve_queuing_class(b, tok)? {
        Ok((_, queue)) => Some(queue),
        Err(GroupClass(_, group)) => group,
    };
    let removed = queue.is_some_and(|queue| {
        remove_named(&mut b.config.queuing_policies[p].classes, |c| {
            c.queue == queue
        })
    });
    if !removed {
        b.warn(tok.col, format!("no class `{}` to remove", tok.text), None);
    }
    Ok(())
}

/// Run `f` on the queuing class being configured, recording the command's position.
pub(super) fn with_queue(
    b: &mut Builder<'_>,
    item: QueuingItem,
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
    b.mark(
        At::Queuing {
            policy: name,
            queue,
            item,
        },
        col,
    );
    Ok(())
}

/// `priority [level N]`.
pub(super) fn priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
    with_queue(b, QueuingItem::Priority, col, |c, _| {
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
pub(super) fn no_priority(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, QueuingItem::Priority, 0, |c, _| {
        c.priority_level = None;
        Ok(())
    })
}

/// `bandwidth percent P | remaining percent P | V UNIT`.
pub(super) fn bandwidth(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
    with_queue(b, QueuingItem::Bandwidth, col, |c, _| {
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
pub(super) fn no_bandwidth(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, QueuingItem::Bandwidth, 0, |c, _| {
        c.bandwidth = None;
        Ok(())
    })
}

/// `random-detect ...` in either form.
pub(super) fn random_detect(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
    with_queue(b, QueuingItem::RandomDetect, col, |c, _| {
        c.wred = Some(wred);
        Ok(())
    })
}

/// `no random-detect ...`.
pub(super) fn no_random_detect(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, QueuingItem::RandomDetect, 0, |c, _| {
        c.wred = None;
        Ok(())
    })
}

/// `queue-limit N UNIT | percent P | dynamic A`.
pub(super) fn queue_limit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
    with_queue(b, QueuingItem::QueueLimit, col, |c, _| {
        c.queue_limit = Some(limit);
        Ok(())
    })
}

/// `no queue-limit ...`.
pub(super) fn no_queue_limit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, QueuingItem::QueueLimit, 0, |c, _| {
        c.queue_limit = None;
        Ok(())
    })
}

/// `shape min V UNIT max V UNIT`.
pub(super) fn shape(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
    with_queue(b, QueuingItem::Shape, col, |c, _| {
        c.shape = Some(Shape { min_bps, max_bps });
        Ok(())
    })
}

/// `no shape ...`.
pub(super) fn no_shape(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, QueuingItem::Shape, 0, |c, _| {
        c.shape = None;
        Ok(())
    })
}

/// Read a byte count with an optional unit (bytes by default).
pub(super) fn bytes_arg(a: &mut Args<'_>, what: &str) -> Result<(u64, usize), Fail> {
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
pub(super) fn pause(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
    if let Some((p, _)) = b.section(Section::QueuingClass) {
        // A policy of user-named classes only (the older dialect) does not
        // say its side by its class names; pause thresholds make it an
        // input policy, as the Nexus 3000/5000 guides apply it.
        let policy = &mut b.config.queuing_policies[p];
        let named_only = policy.classes.iter().all(|c| {
            c.class.is_some()
                && c.priority_level.is_none()
                && c.bandwidth.is_none()
                && c.shape.is_none()
                && c.wred.is_none()
        });
        if named_only {
            policy.direction = Direction::Ingress;
        }
    }
    with_queue(b, QueuingItem::Pause, col, |c, direction| {
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
pub(super) fn no_pause(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    with_queue(b, QueuingItem::Pause, 0, |c, _| {
        c.pause = None;
        Ok(())
    })
}
