//! `ip access-list` sections: numbered and unnumbered `permit` / `deny` entries, their addresses, ports and DSCP.

use super::*;
use crate::diag::Severity;
use crate::qos::Unevaluated;

/// Commands under `ip access-list` (numbered lines are handled by [`numbered_entry`]).
pub(in crate::parser) static ACCESS_LIST: &[Spec] = &[
    Spec::run(&["permit"], ACL_ENTRY, permit),
    Spec::run(&["deny"], ACL_ENTRY, deny),
    Spec::run(&["no", "permit"], ACL_ENTRY, no_permit),
    Spec::run(&["no", "deny"], ACL_ENTRY, no_deny),
    Spec::accept(&["remark"]),
    Spec::accept(&["statistics"]),
    Spec::skip(&["fragments"]),
    Spec::skip(&["ignore"]),
];

/// `ip access-list NAME`.
pub(in crate::parser) fn access_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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
            b.mark_first(At::Acl(name.clone()), tok.col);
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

/// `no ip access-list NAME`.
pub(in crate::parser) fn no_access_list(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
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

/// Whether a line under `ip access-list` starts with a sequence number (or is `no SEQ`).
pub(in crate::parser) fn is_numbered_entry(line: &Line<'_>) -> bool {
    let digits = |t: &Token<'_>| !t.text.is_empty() && t.text.bytes().all(|c| c.is_ascii_digit());
    match &line.tokens[..] {
        [first, ..] if digits(first) => true,
        [no, second, ..] => no.text.eq_ignore_ascii_case("no") && digits(second),
        _ => false,
    }
}

/// `SEQ permit|deny ...` or `no SEQ` under `ip access-list`.
pub(in crate::parser) fn numbered_entry(
    b: &mut Builder<'_>,
    index: Option<usize>,
    line: &Line<'_>,
) -> Result<(), Fail> {
    let negated = line.tokens[0].text.eq_ignore_ascii_case("no");
    let seq_tok = line.tokens[usize::from(negated)];
    let seq = value::ranged(seq_tok, "sequence number", 1, u64::from(u32::MAX))? as u32;
    if negated {
        Args::new(line, 2, "no SEQ").finish()?;
        let Some(index) = index else {
            return Ok(());
        };
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
pub(super) fn permit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let index = b.section(Section::AccessList).map(|(i, _)| i);
    add_entry(b, index, a, true, None)
}

/// `deny ...` (numbered 10 past the last entry).
pub(super) fn deny(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let index = b.section(Section::AccessList).map(|(i, _)| i);
    add_entry(b, index, a, false, None)
}

/// `no permit ...`: remove entries with the same conditions.
pub(super) fn no_permit(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    remove_entry(b, a, true)
}

/// `no deny ...`: remove entries with the same conditions.
pub(super) fn no_deny(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    remove_entry(b, a, false)
}

/// Remove the entries whose conditions equal the line's.
pub(super) fn remove_entry(
    b: &mut Builder<'_>,
    a: &mut Args<'_>,
    permit: bool,
) -> Result<(), Fail> {
    let index = b.section(Section::AccessList).map(|(i, _)| i);
    let start = a.peek().map_or(0, |t| t.col);
    let (want, _) = entry_conditions(a, permit, 0)?;
    // Under a header in error: the line is checked, nothing changes.
    let Some(index) = index else {
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

/// Read and add one entry.
pub(super) fn add_entry(
    b: &mut Builder<'_>,
    index: Option<usize>,
    a: &mut Args<'_>,
    permit: bool,
    seq: Option<(u32, usize)>,
) -> Result<(), Fail> {
    let at = seq.map_or_else(|| a.line.tokens[0].col, |(_, c)| c);
    let (entry, unevaluated) = entry_conditions(a, permit, 0)?;
    // Under a header in error: the line is checked, nothing changes.
    let Some(index) = index else {
        return Ok(());
    };
    if !unevaluated.is_empty() {
        let name = b.config.access_lists[index].name.clone();
        b.mark_first(At::AclSkipped(name), at);
        for (kind, col) in unevaluated {
            not_evaluated(b, kind, col);
        }
    }
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
pub(super) const PROTOCOLS: &[(&str, u8)] = &[
    ("icmp", 1),
    ("igmp", 2),
    ("tcp", 6),
    ("udp", 17),
    ("gre", 47),
    ("esp", 50),
    ("ahp", 51),
    ("eigrp", 88),
    ("ospf", 89),
    ("nos", 94),
    ("pim", 103),
    ("pcp", 108),
    ("sctp", 132),
];

/// The name NX-OS prints for a protocol number, if it has one.
pub(crate) fn protocol_name(n: u8) -> Option<&'static str> {
    PROTOCOLS
        .iter()
        .find(|(_, v)| *v == n)
        .map(|(name, _)| *name)
}

/// The TCP port keywords NX-OS accepts (`permit tcp any any eq ?`).
pub(super) const TCP_PORTS: &[(&str, u16)] = &[
    ("bgp", 179),
    ("chargen", 19),
    ("cmd", 514),
    ("daytime", 13),
    ("discard", 9),
    ("domain", 53),
    ("drip", 3949),
    ("echo", 7),
    ("exec", 512),
    ("finger", 79),
    ("ftp", 21),
    ("ftp-data", 20),
    ("gopher", 70),
    ("hostname", 101),
    ("ident", 113),
    ("irc", 194),
    ("klogin", 543),
    ("kshell", 544),
    ("login", 513),
    ("lpd", 515),
    ("nntp", 119),
    ("pim-auto-rp", 496),
    ("pop2", 109),
    ("pop3", 110),
    ("smtp", 25),
    ("sunrpc", 111),
    ("tacacs", 49),
    ("talk", 517),
    ("telnet", 23),
    ("time", 37),
    ("uucp", 540),
    ("whois", 43),
    ("www", 80),
];

/// The UDP port keywords NX-OS accepts (`permit udp any any eq ?`).
pub(super) const UDP_PORTS: &[(&str, u16)] = &[
    ("biff", 512),
    ("bootpc", 68),
    ("bootps", 67),
    ("discard", 9),
    ("dnsix", 195),
    ("domain", 53),
    ("echo", 7),
    ("isakmp", 500),
    ("mobile-ip", 434),
    ("nameserver", 42),
    ("netbios-dgm", 138),
    ("netbios-ns", 137),
    ("netbios-ss", 139),
    ("non500-isakmp", 4500),
    ("ntp", 123),
    ("pim-auto-rp", 496),
    ("rip", 520),
    ("snmp", 161),
    ("snmptrap", 162),
    ("sunrpc", 111),
    ("syslog", 514),
    ("tacacs", 49),
    ("talk", 517),
    ("tftp", 69),
    ("time", 37),
    ("who", 513),
    ("xdmcp", 177),
];

/// Names railyard has always read for either protocol besides NX-OS's lists.
const EXTRA_PORTS: &[(&str, u16)] = &[("ssh", 22)];

/// The keyword for a port named `word` (any case) under `protocol`: its own
/// list first, then any other (every keyword is its IANA number, so a
/// UDP name under TCP still means the same port).
fn port_by_name(protocol: Option<u8>, word: &str) -> Option<(&'static str, u16)> {
    let own: &[(&str, u16)] = match protocol {
        Some(17) => UDP_PORTS,
        _ => TCP_PORTS,
    };
    own.iter()
        .chain(TCP_PORTS)
        .chain(UDP_PORTS)
        .chain(EXTRA_PORTS)
        .find(|(n, _)| n.eq_ignore_ascii_case(word))
        .copied()
}

/// Tell the user an entry's option is kept but not evaluated: a warning
/// (identical for every line with the option, so they collapse into one with
/// a count), or an error on every line when strict.
fn not_evaluated(b: &mut Builder<'_>, kind: &str, col: usize) {
    let what = Unevaluated::describe(kind);
    if b.strict {
        b.diag(
            Severity::Error,
            col,
            format!("ip access-list option {what} is not supported"),
            Some("remove it, or parse without strict mode to keep the entry with a warning".into()),
        );
        return;
    }
    b.warn(
        col,
        format!("ip access-list option {what} is not evaluated; the entry is kept as written"),
        Some(
            "a class-map that matches this access list is rejected: railyard would classify other traffic than the switch"
                .into(),
        ),
    );
}

/// A condition railyard reads but does not evaluate: its kind and column.
type Noted = (&'static str, usize);

/// Options after the destination that railyard reads past without
/// evaluating, with how many argument tokens follow each.
const OPTIONS: &[(&str, &str, usize)] = &[
    ("fragments", "fragments", 0),
    ("established", "established", 0),
    ("ack", "TCP flags", 0),
    ("fin", "TCP flags", 0),
    ("psh", "TCP flags", 0),
    ("rst", "TCP flags", 0),
    ("syn", "TCP flags", 0),
    ("urg", "TCP flags", 0),
    ("tcp-flags-mask", "TCP flags", 1),
    ("precedence", "precedence", 1),
    ("ttl", "ttl", 1),
    ("http-method", "http-method", 1),
    ("tcp-option-length", "tcp-option-length", 1),
    ("time-range", "time-range", 1),
    ("vlan", "vlan", 1),
    ("nve", "nve vni", 2),
];

/// Read `PROTOCOL SRC [PORTS] DST [PORTS] [dscp N] [log] [OPTIONS]` into an
/// entry, with the conditions railyard does not evaluate (kind, column) in
/// line order. Such an entry carries its text in [`AclEntry::unevaluated`];
/// see [`Unevaluated`] for why it is kept.
pub(super) fn entry_conditions(
    a: &mut Args<'_>,
    permit: bool,
    seq: u32,
) -> Result<(AclEntry, Vec<Noted>), Fail> {
    let first = a.pos;
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
    // Only a protocol written as a name takes its protocol's options:
    // `permit 1 any any` is ICMP with the simple options only.
    let named = !ptok.text.bytes().all(|c| c.is_ascii_digit());
    let mut unevaluated = Vec::new();
    let ports_ok = matches!(protocol, Some(6 | 17 | 132));
    let src = address(a, "source", &mut unevaluated)?;
    let src_port = port_match(a, ports_ok, protocol, &mut unevaluated)?;
    let dst = address(a, "destination", &mut unevaluated)?;
    let dst_port = port_match(a, ports_ok, protocol, &mut unevaluated)?;
    let mut dscp = None;
    while let Some(tok) = a.next_token() {
        let lower = tok.text.to_ascii_lowercase();
        if let Some((_, kind, args)) = OPTIONS.iter().find(|(k, _, _)| *k == lower) {
            unevaluated.push((*kind, tok.col));
            for _ in 0..*args {
                a.next_token();
            }
            continue;
        }
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
            "packet-length" => {
                unevaluated.push(("packet-length", tok.col));
                let op = a.next_token();
                let n = if op.is_some_and(|o| o.text.eq_ignore_ascii_case("range")) {
                    2
                } else {
                    1
                };
                for _ in 0..n {
                    a.next_token();
                }
            }
            _ if named && protocol == Some(1) => {
                // A type by number (with an optional code) or by name.
                unevaluated.push(("ICMP message type", tok.col));
                let code = a
                    .peek()
                    .filter(|c| c.text.bytes().all(|c| c.is_ascii_digit()));
                if lower.bytes().all(|c| c.is_ascii_digit()) && code.is_some() {
                    a.next_token();
                }
            }
            _ if named && protocol == Some(2) => unevaluated.push(("IGMP message type", tok.col)),
            _ => {
                // An option railyard does not know: it and the rest of
                // the line (its arguments) stay unevaluated.
                let kind = OTHER_OPTIONS
                    .iter()
                    .find(|k| **k == lower)
                    .copied()
                    .unwrap_or("other option");
                unevaluated.push((kind, tok.col));
                a.skip_rest();
            }
        }
    }
    unevaluated.dedup_by_key(|(k, _)| *k);
    let unevaluated_entry = (!unevaluated.is_empty()).then(|| {
        let mut options: Vec<String> = Vec::new();
        for (k, _) in &unevaluated {
            if !options.iter().any(|o| o == k) {
                options.push((*k).to_string());
            }
        }
        let text = a.line.tokens[first..]
            .iter()
            .map(|t| t.text)
            .collect::<Vec<_>>()
            .join(" ");
        Unevaluated { options, text }
    });
    let entry = AclEntry {
        seq,
        permit,
        protocol,
        src: src.map(IpPrefix::V4),
        dst: dst.map(IpPrefix::V4),
        src_port,
        dst_port,
        dscp,
        unevaluated: unevaluated_entry,
    };
    Ok((entry, unevaluated))
}

/// Further NX-OS entry options railyard names in its warnings; anything
/// else after the destination is reported as "other option".
const OTHER_OPTIONS: &[&str] = &[
    "udf",
    "capture",
    "redirect",
    "set-erspan-dscp",
    "set-erspan-gre-proto",
    "telemetry-path",
    "telemetry-queue",
];

/// Read `any`, `host A.B.C.D`, `A.B.C.D/LEN`, `A.B.C.D WILDCARD` or
/// `addrgroup NAME`; `None` is any address. An object-group or a
/// non-contiguous wildcard is read as any address and noted in
/// `unevaluated`.
pub(super) fn address(
    a: &mut Args<'_>,
    what: &str,
    unevaluated: &mut Vec<Noted>,
) -> Result<Option<Ipv4Prefix>, Fail> {
    let tok = a.expect(&format!("{what} address"))?;
    if tok.text.eq_ignore_ascii_case("any") {
        return Ok(None);
    }
    if tok.text.eq_ignore_ascii_case("addrgroup") {
        a.expect("object-group name")?;
        unevaluated.push(("addrgroup", tok.col));
        return Ok(None);
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
        return Ok(Some(Ipv4Prefix { addr, len: 32 }));
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
                unevaluated.push(("non-contiguous wildcard mask", wtok.col));
                return Ok(None);
            }
            let p = Ipv4Prefix {
                addr,
                len: len as u8,
            };
            return Ok(Some(p.network()));
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
    Ok(Some(p))
}

/// Read an optional port condition (`eq|neq|lt|gt N`, `range A B`); a
/// port is a number or one of NX-OS's keywords for `protocol`.
///
/// `portgroup NAME` is read as any port and noted in `unevaluated`, in
/// either position: railyard does not model object-groups.
pub(super) fn port_match(
    a: &mut Args<'_>,
    ports_ok: bool,
    protocol: Option<u8>,
    unevaluated: &mut Vec<Noted>,
) -> Result<Option<PortMatch>, Fail> {
    let Some(tok) = a.peek() else { return Ok(None) };
    let op = tok.text.to_ascii_lowercase();
    if !matches!(
        op.as_str(),
        "eq" | "neq" | "lt" | "gt" | "range" | "portgroup"
    ) {
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
    if op == "portgroup" {
        a.expect("object-group name")?;
        unevaluated.push(("portgroup", tok.col));
        return Ok(None);
    }
    let port = |a: &mut Args<'_>| -> Result<Port, Fail> {
        let p = a.expect("port")?;
        if let Some((name, number)) = port_by_name(protocol, p.text) {
            return Ok(Port {
                number,
                name: Some(name),
            });
        }
        if !p.text.bytes().all(|c| c.is_ascii_digit()) {
            let own = if protocol == Some(17) {
                UDP_PORTS
            } else {
                TCP_PORTS
            };
            return Err(Fail::new(
                p.col,
                format!("unknown port `{}`", p.text),
                Some(did_you_mean(p.text, own.iter().map(|(n, _)| *n), || {
                    "a port is a number 0-65535 or a name such as www or bgp".into()
                })),
            ));
        }
        Ok(Port::new(value::ranged(p, "port", 0, 65535)? as u16))
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
            if hi.number < lo.number {
                return Err(Fail::new(
                    lo_col,
                    format!(
                        "port range {}-{} ends before it starts",
                        lo.number, hi.number
                    ),
                    Some("write the lower port first".into()),
                ));
            }
            PortMatch::Range(lo, hi)
        }
    }))
}
