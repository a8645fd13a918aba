//! The routing policies and timers `router bgp` refers to: `route-map`,
//! `ip prefix-list` / `ipv6 prefix-list`, and `bfd interval` (global and
//! per interface). Lenient like `router bgp` (see [`super::bgp`]): a
//! `match` or `set` railyard does not model is skipped with a warning.

use super::bgp::{asn, policy_name, prefix, same_family};
use super::table::Spec;
use super::value::{self, keyword};
use super::{Args, Builder, Fail, FrameKind, Section};
use crate::bgp::{Action, Afi, BfdInterval, PrefixList, PrefixRule, RouteMap, RouteMapSet};
use crate::lexer::Token;
use crate::model::IpPrefix;
use crate::validate::{At, BgpAt};

/// Usage of `route-map`.
pub(super) const ROUTE_MAP: &str = "route-map NAME [permit | deny] [SEQ]";
/// Usage of `ip prefix-list`.
pub(super) const IP_PREFIX_LIST: &str =
    "ip prefix-list NAME [seq N] permit | deny PREFIX [ge N] [le N] | ip prefix-list NAME description TEXT";
/// Usage of `ipv6 prefix-list`.
pub(super) const IPV6_PREFIX_LIST: &str =
    "ipv6 prefix-list NAME [seq N] permit | deny PREFIX [ge N] [le N] | ipv6 prefix-list NAME description TEXT";
/// Usage of `bfd interval`.
pub(super) const BFD_INTERVAL: &str = "bfd interval 50-999 min_rx 50-999 multiplier 1-50";
/// Commands under `route-map NAME permit|deny SEQ`.
pub(super) static ROUTE_MAP_ENTRY: &[Spec] = &[
    Spec::run(
        &["match", "ip", "address", "prefix-list"],
        "match ip address prefix-list NAME [NAME ...]",
        match_ip,
    ),
    Spec::run(
        &["no", "match", "ip", "address", "prefix-list"],
        "no match ip address prefix-list [NAME ...]",
        no_match_ip,
    ),
    Spec::run(
        &["match", "ipv6", "address", "prefix-list"],
        "match ipv6 address prefix-list NAME [NAME ...]",
        match_ipv6,
    ),
    Spec::run(
        &["no", "match", "ipv6", "address", "prefix-list"],
        "no match ipv6 address prefix-list [NAME ...]",
        no_match_ipv6,
    ),
    Spec::run(
        &["set", "local-preference"],
        "set local-preference 0-4294967295",
        set_local_preference,
    ),
    Spec::run(&["set", "metric"], "set metric 0-4294967295", set_metric),
    Spec::run(&["set", "weight"], "set weight 0-65535", set_weight),
    Spec::run(
        &["set", "as-path", "prepend"],
        "set as-path prepend ASN [ASN ...]",
        set_prepend,
    ),
    Spec::run(&["no", "set"], "no set ...", no_set),
    Spec::run(&["description"], "description TEXT", rm_description),
    Spec::run(&["no", "description"], "no description", rm_no_description),
    Spec::skip(&["match"]),
    Spec::skip(&["set"]),
    Spec::skip(&["continue"]),
];

/// Read `NAME [permit|deny] [SEQ]` of a route-map header (NX-OS's
/// defaults: permit, sequence 10).
fn route_map_header<'t>(a: &mut Args<'t>) -> Result<(Token<'t>, String, Action, u16), Fail> {
    let tok = a.expect("route-map name")?;
    let name = policy_name(tok, "route-map")?;
    let mut action = Action::Permit;
    if let Some(t) = a
        .peek()
        .filter(|t| !t.text.bytes().all(|c| c.is_ascii_digit()))
    {
        a.next_token();
        action = match keyword(t, &["permit", "deny"], "route-map action")? {
            "permit" => Action::Permit,
            _ => Action::Deny,
        };
    }
    let seq = match a.next_token() {
        Some(t) => value::ranged(t, "sequence number", 0, 65535)? as u16,
        None => 10,
    };
    a.finish()?;
    Ok((tok, name, action, seq))
}

/// `route-map NAME [permit|deny] [SEQ]`: open (or reopen) an entry.
pub(super) fn route_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (tok, name, action, seq) = match route_map_header(a) {
        Ok(x) => x,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::RouteMap));
            return Err(f);
        }
    };
    let maps = &mut b.config.route_maps;
    let index = match maps.iter().position(|r| r.name == name && r.seq == seq) {
        Some(i) => {
            maps[i].action = action;
            i
        }
        None => {
            // Entries of one route-map stay together, in sequence order.
            let at = match maps.iter().rposition(|r| r.name == name) {
                Some(last) => {
                    let first = maps.iter().position(|r| r.name == name).unwrap_or(last);
                    (first..=last)
                        .find(|&i| maps[i].seq > seq)
                        .unwrap_or(last + 1)
                }
                None => maps.len(),
            };
            maps.insert(
                at,
                RouteMap {
                    name: name.clone(),
                    action,
                    seq,
                    description: None,
                    match_ipv4: Vec::new(),
                    match_ipv6: Vec::new(),
                    sets: Vec::new(),
                },
            );
            at
        }
    };
    b.mark_first(At::Bgp(BgpAt::RouteMap(name, seq)), tok.col);
    b.enter(FrameKind::Section(Section::RouteMap, index, 0));
    Ok(())
}

/// `no route-map NAME [permit|deny SEQ]`: the entry, or every entry.
pub(super) fn no_route_map(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("route-map name")?;
    let name = policy_name(tok, "route-map")?;
    if a.peek().is_none() {
        b.config.route_maps.retain(|r| r.name != name);
        return Ok(());
    }
    let mut args_seq = None;
    if let Some(t) = a
        .peek()
        .filter(|t| !t.text.bytes().all(|c| c.is_ascii_digit()))
    {
        a.next_token();
        keyword(t, &["permit", "deny"], "route-map action")?;
    }
    if let Some(t) = a.next_token() {
        args_seq = Some(value::ranged(t, "sequence number", 0, 65535)? as u16);
    }
    a.finish()?;
    let seq = args_seq.unwrap_or(10);
    b.config
        .route_maps
        .retain(|r| !(r.name == name && r.seq == seq));
    Ok(())
}

/// The route-map entry open now.
fn entry_mut<'b>(b: &'b mut Builder<'_>) -> Option<&'b mut RouteMap> {
    let (i, _) = b.section(Section::RouteMap)?;
    b.config.route_maps.get_mut(i)
}

/// `match ip|ipv6 address prefix-list NAME...`.
fn match_prefix_list(b: &mut Builder<'_>, a: &mut Args<'_>, afi: Afi) -> Result<(), Fail> {
    a.peek().ok_or_else(|| a.missing("prefix-list name"))?;
    let mut names = Vec::new();
    while let Some(t) = a.next_token() {
        names.push((policy_name(t, "prefix-list")?, t.col));
    }
    let Some(entry) = entry_mut(b) else {
        return Ok(());
    };
    let (map, seq) = (entry.name.clone(), entry.seq);
    let list = match afi {
        Afi::Ipv4 => &mut entry.match_ipv4,
        Afi::Ipv6 => &mut entry.match_ipv6,
    };
    for (n, _) in &names {
        if !list.contains(n) {
            list.push(n.clone());
        }
    }
    for (n, col) in names {
        b.mark(
            At::Bgp(BgpAt::MatchPrefixList {
                map: map.clone(),
                seq,
                afi,
                list: n,
            }),
            col,
        );
    }
    Ok(())
}

/// `match ip address prefix-list NAME...`.
fn match_ip(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    match_prefix_list(b, a, Afi::Ipv4)
}

/// `match ipv6 address prefix-list NAME...`.
fn match_ipv6(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    match_prefix_list(b, a, Afi::Ipv6)
}

/// `no match ip|ipv6 address prefix-list [NAME...]`: those names, or all.
fn no_match(b: &mut Builder<'_>, a: &mut Args<'_>, afi: Afi) -> Result<(), Fail> {
    let mut names = Vec::new();
    while let Some(t) = a.next_token() {
        names.push(t.text.to_owned());
    }
    if let Some(entry) = entry_mut(b) {
        let list = match afi {
            Afi::Ipv4 => &mut entry.match_ipv4,
            Afi::Ipv6 => &mut entry.match_ipv6,
        };
        if names.is_empty() {
            list.clear();
        } else {
            list.retain(|n| !names.contains(n));
        }
    }
    Ok(())
}

/// `no match ip address prefix-list [NAME...]`.
fn no_match_ip(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    no_match(b, a, Afi::Ipv4)
}

/// `no match ipv6 address prefix-list [NAME...]`.
fn no_match_ipv6(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    no_match(b, a, Afi::Ipv6)
}

/// Replace the entry's `set` of the same kind.
fn set(b: &mut Builder<'_>, s: RouteMapSet) {
    if let Some(entry) = entry_mut(b) {
        let kind = std::mem::discriminant(&s);
        match entry
            .sets
            .iter_mut()
            .find(|x| std::mem::discriminant(*x) == kind)
        {
            Some(x) => *x = s,
            None => entry.sets.push(s),
        }
    }
}

/// `set local-preference N`.
fn set_local_preference(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("local preference")?;
    let n = value::ranged(tok, "local preference", 0, u64::from(u32::MAX))? as u32;
    a.finish()?;
    set(b, RouteMapSet::LocalPreference(n));
    Ok(())
}

/// `set metric N`.
fn set_metric(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("metric")?;
    let n = value::ranged(tok, "metric", 0, u64::from(u32::MAX))? as u32;
    a.finish()?;
    set(b, RouteMapSet::Metric(n));
    Ok(())
}

/// `set weight N`.
fn set_weight(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("weight")?;
    let n = value::ranged(tok, "weight", 0, 65535)? as u16;
    a.finish()?;
    set(b, RouteMapSet::Weight(n));
    Ok(())
}

/// `set as-path prepend ASN...`.
fn set_prepend(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.peek().ok_or_else(|| a.missing("AS number"))?;
    let mut asns = Vec::new();
    while let Some(t) = a.next_token() {
        asns.push(asn(t)?);
    }
    set(b, RouteMapSet::AsPathPrepend(asns));
    Ok(())
}

/// `no set KIND ...`: removes the modelled `set` of that kind.
fn no_set(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let words: Vec<String> = std::iter::from_fn(|| a.next_token())
        .map(|t| t.text.to_ascii_lowercase())
        .collect();
    if let Some(entry) = entry_mut(b) {
        let first = words.first().map_or("", String::as_str);
        entry.sets.retain(|s| {
            let kind = match s {
                RouteMapSet::LocalPreference(_) => "local-preference",
                RouteMapSet::Metric(_) => "metric",
                RouteMapSet::Weight(_) => "weight",
                RouteMapSet::AsPathPrepend(_) => "as-path",
            };
            !super::is_keyword(first, kind)
        });
    }
    Ok(())
}

/// `description TEXT` under a route-map entry.
fn rm_description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (text, _) = a.rest().ok_or_else(|| a.missing("description"))?;
    let text = text.trim_end().to_owned();
    if let Some(e) = entry_mut(b) {
        e.description = Some(text);
    }
    Ok(())
}

/// `no description` under a route-map entry.
fn rm_no_description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some(e) = entry_mut(b) {
        e.description = None;
    }
    Ok(())
}

/// `ip prefix-list ...`.
pub(super) fn ip_prefix_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    prefix_list(b, a, Afi::Ipv4)
}

/// `ipv6 prefix-list ...`.
pub(super) fn ipv6_prefix_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    prefix_list(b, a, Afi::Ipv6)
}

/// Read a `ge`/`le` length, which must exceed the prefix's and fit the family.
fn length_bound(a: &mut Args<'_>, what: &str, p: &IpPrefix) -> Result<(u8, usize), Fail> {
    let tok = a.expect(&format!("`{what}` length"))?;
    let max = if p.is_ipv4() { 32 } else { 128 };
    let n = value::ranged(tok, &format!("`{what}` length"), 1, max)? as u8;
    if n <= p.prefix_len() {
        return Err(Fail::new(
            tok.col,
            format!(
                "`{what} {n}` does not exceed the prefix length {}",
                p.prefix_len()
            ),
            Some(format!(
                "`ge` and `le` must be greater than the prefix length and at most {max}; to match the prefix exactly leave them out"
            )),
        ));
    }
    Ok((n, tok.col))
}

/// `ip|ipv6 prefix-list NAME [seq N] permit|deny PREFIX [ge N] [le N]` or
/// `… NAME description TEXT`.
fn prefix_list(b: &mut Builder<'_>, a: &mut Args<'_>, afi: Afi) -> Result<(), Fail> {
    let tok = a.expect("prefix-list name")?;
    let name = policy_name(tok, "prefix-list")?;
    let index = |b: &mut Builder<'_>| {
        let lists = &mut b.config.prefix_lists;
        match lists.iter().position(|l| l.afi == afi && l.name == name) {
            Some(i) => i,
            None => {
                lists.push(PrefixList {
                    afi,
                    name: name.clone(),
                    description: None,
                    rules: Vec::new(),
                });
                lists.len() - 1
            }
        }
    };
    if a.eat("description").is_some() {
        let (text, _) = a.rest().ok_or_else(|| a.missing("description"))?;
        let text = text.trim_end().to_owned();
        let i = index(b);
        b.config.prefix_lists[i].description = Some(text);
        return Ok(());
    }
    let mut seq = None;
    if a.eat("seq").is_some() {
        let t = a.expect("sequence number")?;
        seq = Some(value::ranged(t, "sequence number", 1, 4_294_967_294)? as u32);
    }
    let act = a.expect("permit or deny")?;
    let action = match keyword(act, &["permit", "deny"], "prefix-list action")? {
        "permit" => Action::Permit,
        _ => Action::Deny,
    };
    let ptok = a.expect("prefix")?;
    let p = prefix(ptok)?;
    same_family(ptok, &p, Some(afi)).map_err(|mut f| {
        f.hint = Some(format!(
            "IPv{} prefixes go in an `{}` list",
            if p.is_ipv4() { 4 } else { 6 },
            if p.is_ipv4() {
                "ip prefix-list"
            } else {
                "ipv6 prefix-list"
            }
        ));
        f
    })?;
    let (mut ge, mut le) = (None, None);
    while a.peek().is_some() {
        if a.eat("ge").is_some() {
            ge = Some(length_bound(a, "ge", &p)?);
        } else if a.eat("le").is_some() {
            le = Some(length_bound(a, "le", &p)?);
        } else {
            a.finish()?;
        }
    }
    if let (Some((g, _)), Some((l, col))) = (ge, le) {
        if l < g {
            return Err(Fail::new(
                col,
                format!("`le {l}` is less than `ge {g}`"),
                Some("`le` must be at least `ge`".into()),
            ));
        }
    }
    let i = index(b);
    let rules = &mut b.config.prefix_lists[i].rules;
    let seq = seq.unwrap_or_else(|| {
        // NX-OS numbers an unnumbered rule 5 past the highest.
        rules
            .iter()
            .map(|r| r.seq)
            .max()
            .unwrap_or(0)
            .saturating_add(5)
    });
    let rule = PrefixRule {
        seq,
        action,
        prefix: p,
        ge: ge.map(|(n, _)| n),
        le: le.map(|(n, _)| n),
    };
    match rules.iter().position(|r| r.seq >= seq) {
        Some(at) if rules[at].seq == seq => rules[at] = rule,
        Some(at) => rules.insert(at, rule),
        None => rules.push(rule),
    }
    Ok(())
}

/// `no ip prefix-list NAME [seq N ...]`.
pub(super) fn no_ip_prefix_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    no_prefix_list(b, a, Afi::Ipv4)
}

/// `no ipv6 prefix-list NAME [seq N ...]`.
pub(super) fn no_ipv6_prefix_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    no_prefix_list(b, a, Afi::Ipv6)
}

/// `no ip|ipv6 prefix-list NAME [seq N ... | description]`.
fn no_prefix_list(b: &mut Builder<'_>, a: &mut Args<'_>, afi: Afi) -> Result<(), Fail> {
    let tok = a.expect("prefix-list name")?;
    let name = tok.text.to_owned();
    let lists = &mut b.config.prefix_lists;
    if a.eat("description").is_some() {
        a.skip_rest();
        if let Some(l) = lists.iter_mut().find(|l| l.afi == afi && l.name == name) {
            l.description = None;
        }
        return Ok(());
    }
    if a.eat("seq").is_some() {
        let t = a.expect("sequence number")?;
        let seq = value::ranged(t, "sequence number", 1, 4_294_967_294)? as u32;
        a.skip_rest();
        if let Some(l) = lists.iter_mut().find(|l| l.afi == afi && l.name == name) {
            l.rules.retain(|r| r.seq != seq);
        }
        return Ok(());
    }
    a.skip_rest();
    lists.retain(|l| !(l.afi == afi && l.name == name));
    Ok(())
}

/// Take keyword `kw` of `bfd interval`, or fail at what stands there instead.
fn bfd_keyword(a: &mut Args<'_>, kw: &str) -> Result<(), Fail> {
    if a.eat(kw).is_some() {
        return Ok(());
    }
    Err(a.peek().map_or_else(
        || a.missing(&format!("`{kw}`")),
        |t| {
            Fail::new(
                t.col,
                format!("expected `{kw}`, found `{}`", t.text),
                Some(format!("usage: {BFD_INTERVAL}")),
            )
        },
    ))
}

/// Read `INTERVAL min_rx MS multiplier N`.
fn bfd_interval_args(a: &mut Args<'_>) -> Result<BfdInterval, Fail> {
    let t = a.expect("transmit interval")?;
    let tx = value::ranged(t, "BFD interval", 50, 999)? as u16;
    bfd_keyword(a, "min_rx")?;
    let t = a.expect("minimum receive interval")?;
    let rx = value::ranged(t, "BFD min_rx", 50, 999)? as u16;
    bfd_keyword(a, "multiplier")?;
    let t = a.expect("multiplier")?;
    let m = value::ranged(t, "BFD multiplier", 1, 50)? as u8;
    a.finish()?;
    Ok(BfdInterval {
        tx_ms: tx,
        min_rx_ms: rx,
        multiplier: m,
    })
}

/// Global `bfd interval … min_rx … multiplier …`.
pub(super) fn global_bfd_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let v = bfd_interval_args(a)?;
    b.config.bfd_interval = Some(v);
    b.mark(At::Bgp(BgpAt::BfdInterval(None)), col);
    Ok(())
}

/// Global `no bfd interval`.
pub(super) fn no_global_bfd_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    b.config.bfd_interval = None;
    Ok(())
}

/// Interface `bfd interval … min_rx … multiplier …`.
pub(super) fn interface_bfd_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let col = a.line.tokens[0].col;
    let v = bfd_interval_args(a)?;
    for i in b.members() {
        b.config.interfaces[i].bfd_interval = Some(v);
        b.mark(At::Bgp(BgpAt::BfdInterval(Some(i))), col);
    }
    Ok(())
}

/// Interface `no bfd interval`.
pub(super) fn no_interface_bfd_interval(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    for i in b.members() {
        b.config.interfaces[i].bfd_interval = None;
    }
    Ok(())
}
