//! Parsers for the small values commands take: MAC addresses, netmasks, names, numbers.

use std::net::Ipv4Addr;

use crate::diag::ValueError;
use crate::lexer::Token;
use crate::qos::{Threshold, KBYTE, MBYTE};

use super::Fail;
use crate::spelling::closest;

/// "did you mean `x`?" for the closest candidate, else `otherwise`.
pub(crate) fn did_you_mean<'c>(
    word: &str,
    candidates: impl IntoIterator<Item = &'c str>,
    otherwise: impl FnOnce() -> String,
) -> String {
    match closest(word, candidates) {
        Some(c) => format!("did you mean `{c}`?"),
        None => otherwise(),
    }
}

/// Match a token against keywords: exactly or by a unique prefix, ignoring case.
pub(crate) fn keyword(
    tok: Token<'_>,
    options: &[&'static str],
    what: &str,
) -> Result<&'static str, Fail> {
    if let Some(k) = options.iter().find(|k| k.eq_ignore_ascii_case(tok.text)) {
        return Ok(k);
    }
    let lower = tok.text.to_ascii_lowercase();
    let prefixed: Vec<&'static str> = options
        .iter()
        .copied()
        .filter(|k| k.starts_with(&lower))
        .collect();
    match prefixed[..] {
        [one] => Ok(one),
        [] => Err(Fail::new(
            tok.col,
            format!("unknown {what} `{}`", tok.text),
            Some(did_you_mean(tok.text, options.iter().copied(), || {
                format!("expected {}", one_of(options))
            })),
        )),
        _ => Err(Fail::new(
            tok.col,
            format!("ambiguous {what} `{}`", tok.text),
            Some(format!("it could mean {}", prefixed.join(", "))),
        )),
    }
}

/// "a, b or c".
pub(crate) fn one_of(options: &[&str]) -> String {
    match options {
        [] => String::new(),
        [one] => (*one).to_owned(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// Parse a decimal number within `lo..=hi`.
pub(crate) fn ranged(tok: Token<'_>, what: &str, lo: u64, hi: u64) -> Result<u64, Fail> {
    let hint = format!("{what} is {lo}-{hi}");
    let n = number(tok, what, &hint)?;
    if !(lo..=hi).contains(&n) {
        let shown = if tok.text.len() > 20 {
            tok.text.to_owned()
        } else {
            n.to_string()
        };
        return Err(Fail::new(
            tok.col,
            format!("{what} {shown} is out of range"),
            Some(hint),
        ));
    }
    Ok(n)
}

/// Longest name a class-map, policy-map or access list may have.
pub(crate) const MAX_NAME: usize = 64;

/// Check a class-map, policy-map or access-list name.
pub(crate) fn name(tok: Token<'_>, what: &str) -> Result<String, Fail> {
    name_up_to(tok, what, MAX_NAME)
}

/// Check a name of at most `max` letters, digits, `-`, `_`, `.` or `:`.
pub(crate) fn name_up_to(tok: Token<'_>, what: &str, max: usize) -> Result<String, Fail> {
    let ok = tok.text.chars().count() <= max
        && tok
            .text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'));
    if !ok {
        return Err(Fail::new(
            tok.col,
            format!("invalid {what} name `{}`", tok.text),
            Some(format!(
                "names are up to {max} letters, digits, `-`, `_`, `.` or `:`"
            )),
        ));
    }
    Ok(tok.text.to_owned())
}

/// Units a queue depth may be written in.
pub(crate) const DEPTH_UNITS: &[&str] = &["packets", "bytes", "kbytes", "mbytes"];
/// Units a buffer size may be written in.
pub(crate) const BYTE_UNITS: &[&str] = &["bytes", "kbytes", "mbytes"];
/// Units a rate may be written in.
pub(crate) const RATE_UNITS: &[&str] = &["bps", "kbps", "mbps", "gbps"];

/// Scale `n` by `mult`, failing at `tok` when the result overflows.
fn scaled(tok: Token<'_>, n: u64, mult: u64, what: &str) -> Result<u64, Fail> {
    n.checked_mul(mult).ok_or_else(|| {
        Fail::new(
            tok.col,
            format!("{what} {} is too large", tok.text),
            Some("the value must fit in 64 bits once converted".into()),
        )
    })
}

/// A queue depth: a number and one of [`DEPTH_UNITS`] (only [`BYTE_UNITS`] when `bytes_only`).
pub(crate) fn depth(
    n: Token<'_>,
    unit: Token<'_>,
    what: &str,
    bytes_only: bool,
) -> Result<Threshold, Fail> {
    let units = if bytes_only { BYTE_UNITS } else { DEPTH_UNITS };
    let count = number(
        n,
        what,
        &format!("{what} is a whole number followed by {}", one_of(units)),
    )?;
    let u = unit_keyword(unit, units)?;
    Ok(match u {
        "packets" => Threshold::Packets(count),
        "bytes" => Threshold::Bytes(count),
        "kbytes" => Threshold::Bytes(scaled(n, count, KBYTE, what)?),
        _ => Threshold::Bytes(scaled(n, count, MBYTE, what)?),
    })
}

/// A rate in bits per second: a number and one of [`RATE_UNITS`].
pub(crate) fn rate(n: Token<'_>, unit: Token<'_>, what: &str) -> Result<u64, Fail> {
    let count = number(
        n,
        what,
        &format!(
            "{what} is a whole number followed by {}",
            one_of(RATE_UNITS)
        ),
    )?;
    let mult = match unit_keyword(unit, RATE_UNITS)? {
        "bps" => 1,
        "kbps" => 1_000,
        "mbps" => 1_000_000,
        _ => 1_000_000_000,
    };
    scaled(n, count, mult, what)
}

/// Units a delay may be written in.
pub(crate) const TIME_UNITS: &[&str] = &["ns", "us", "ms"];

/// A delay of at most `max_ns`: a number and one of [`TIME_UNITS`], in
/// nanoseconds. The range is checked after scaling, at the number.
pub(crate) fn delay_ns(
    n: Token<'_>,
    unit: Token<'_>,
    what: &str,
    max_ns: u64,
) -> Result<u64, Fail> {
    let count = number(
        n,
        what,
        &format!(
            "{what} is a whole number followed by {}",
            one_of(TIME_UNITS)
        ),
    )?;
    let mult = match unit_keyword(unit, TIME_UNITS)? {
        "ns" => 1,
        "us" => 1_000,
        _ => 1_000_000,
    };
    let ns = scaled(n, count, mult, what)?;
    if ns > max_ns {
        return Err(Fail::new(
            n.col,
            format!("{what} {} {} is out of range", n.text, unit.text),
            Some(format!("{what} is at most {} ms", max_ns / 1_000_000)),
        ));
    }
    Ok(ns)
}

/// A unit keyword, with "unknown unit" errors.
fn unit_keyword(tok: Token<'_>, units: &[&'static str]) -> Result<&'static str, Fail> {
    keyword(tok, units, "unit")
}

/// Hint for malformed MAC addresses.
const MAC_FORMS: &str = "write a MAC as 0011.2233.4455 or 00:11:22:33:44:55";

/// Parse a MAC in NX-OS dotted form (`0011.2233.4455`) or with `:` or `-` between octets.
pub(crate) fn mac(text: &str) -> Result<[u8; 6], ValueError> {
    let bad = || {
        ValueError::new(
            format!("invalid MAC address `{text}`"),
            Some(MAC_FORMS.into()),
        )
    };
    let hex: String = if text.contains('.') {
        let groups: Vec<&str> = text.split('.').collect();
        if groups.len() != 3 || groups.iter().any(|g| g.len() != 4) {
            return Err(bad());
        }
        groups.concat()
    } else {
        let sep = if text.contains(':') { ':' } else { '-' };
        let octets: Vec<&str> = text.split(sep).collect();
        if octets.len() != 6 || octets.iter().any(|o| o.len() != 2) {
            return Err(bad());
        }
        octets.concat()
    };
    if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(bad());
    }
    let mut out = [0u8; 6];
    for (i, byte) in out.iter_mut().enumerate() {
        let pair = hex.get(2 * i..2 * i + 2).ok_or_else(bad)?;
        *byte = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
    }
    Ok(out)
}

/// Hint for malformed OUIs.
const OUI_FORMS: &str = "write an OUI as three hex octets: 00:11:22, 00-11-22 or 00,11,22";

/// Parse an OUI written as three two-digit hex octets separated by `:`, `-` or `,`.
///
/// Fails at the first octet that is not two hex digits, or at the token when
/// it does not have three octets.
pub(crate) fn oui(tok: Token<'_>) -> Result<[u8; 3], Fail> {
    let text = tok.text;
    let fail = |col: usize| Fail::new(col, format!("invalid OUI `{text}`"), Some(OUI_FORMS.into()));
    let sep = [':', '-', ','].into_iter().find(|c| text.contains(*c));
    let octets: Vec<&str> = match sep {
        Some(sep) => text.split(sep).collect(),
        None => vec![text],
    };
    if octets.len() != 3 {
        return Err(fail(tok.col));
    }
    let mut out = [0u8; 3];
    let mut at = 0;
    for (byte, octet) in out.iter_mut().zip(&octets) {
        let two_hex = octet.len() == 2 && octet.bytes().all(|b| b.is_ascii_hexdigit());
        if !two_hex {
            return Err(fail(tok.col + text[..at].chars().count()));
        }
        *byte = u8::from_str_radix(octet, 16).map_err(|_| fail(tok.col))?;
        at += octet.len() + 1;
    }
    Ok(out)
}

/// Parse bytes written as hex digits, two per byte (either case).
///
/// A bad digit is reported at its own column.
pub(crate) fn hex_bytes(tok: Token<'_>, what: &str) -> Result<Vec<u8>, Fail> {
    let text = tok.text;
    // Long values are cut short in messages; the caret shows where they are.
    let shown: String = if text.chars().count() > 20 {
        text.chars().take(16).chain("…".chars()).collect()
    } else {
        text.to_owned()
    };
    let example = format!("write each byte as two hex digits, e.g. {what} 0a0b");
    if let Some((i, _)) = text
        .chars()
        .enumerate()
        .find(|(_, c)| !c.is_ascii_hexdigit())
    {
        return Err(Fail::new(
            tok.col + i,
            format!("invalid {what} `{shown}`: not hexadecimal"),
            Some(example),
        ));
    }
    if !text.len().is_multiple_of(2) {
        return Err(Fail::new(
            tok.col,
            format!("{what} `{shown}` has an odd number of hex digits"),
            Some(example),
        ));
    }
    let len = text.len() / 2;
    // Every character is an ASCII hex digit, so each pair is one byte.
    Ok((0..len)
        .map(|i| u8::from_str_radix(&text[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect())
}

/// Prefix length of a contiguous netmask (`255.255.255.0` → 24).
pub(crate) fn netmask(tok: Token<'_>) -> Result<u8, Fail> {
    let bad = || {
        Fail::new(
            tok.col,
            format!("invalid netmask `{}`", tok.text),
            Some("a netmask's one bits must be contiguous, e.g. 255.255.255.0".into()),
        )
    };
    let mask = u32::from(tok.text.parse::<Ipv4Addr>().map_err(|_| bad())?);
    let len = mask.leading_ones();
    if mask.checked_shl(len).unwrap_or(0) != 0 {
        return Err(bad());
    }
    // leading_ones of a u32 is at most 32.
    Ok(len as u8)
}

/// Parse an unsigned decimal number, reporting `what` when it is not one.
pub(crate) fn number(tok: Token<'_>, what: &str, hint: &str) -> Result<u64, Fail> {
    let fail = || {
        Fail::new(
            tok.col,
            format!("invalid {what} `{}`", tok.text),
            Some(hint.into()),
        )
    };
    if tok.text.is_empty() || !tok.text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail());
    }
    // Longer than u64 is out of every range we check.
    Ok(tok.text.parse::<u64>().unwrap_or(u64::MAX))
}

/// Check a host name: 1-63 letters, digits, `-`, `_` or `.`, starting with a letter or digit.
pub(crate) fn hostname(text: &str) -> Result<(), ValueError> {
    let hint = Some(
        "use up to 63 letters, digits, `-`, `_` or `.`, starting with a letter or digit".into(),
    );
    if text.chars().count() > 63 {
        return Err(ValueError::new(
            format!("host name is {} characters long", text.chars().count()),
            hint,
        ));
    }
    let first_ok = text
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphanumeric());
    let rest_ok = text
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !first_ok || !rest_ok {
        return Err(ValueError::new(format!("invalid host name `{text}`"), hint));
    }
    Ok(())
}

/// Check a Linux network interface name (what `af-packet`, `af-xdp` and `tap` bind to).
pub(crate) fn linux_ifname(text: &str) -> Result<(), ValueError> {
    if text.len() > 15 {
        return Err(ValueError::new(
            format!("Linux interface name `{text}` is {} bytes long", text.len()),
            Some("Linux interface names are at most 15 bytes".into()),
        ));
    }
    if text == "." || text == ".." || text.contains('/') {
        return Err(ValueError::new(
            format!("invalid Linux interface name `{text}`"),
            Some("Linux interface names cannot contain `/` or be `.` or `..`".into()),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keywords_units_and_suggestions() {
        assert_eq!(keyword(tok("kb"), DEPTH_UNITS, "unit"), Ok("kbytes"));
        let e = keyword(tok("kbyte5"), DEPTH_UNITS, "unit").unwrap_err();
        assert_eq!(e.message, "unknown unit `kbyte5`");
        assert_eq!(e.hint.as_deref(), Some("did you mean `kbytes`?"));
        let e = keyword(tok("furlongs"), RATE_UNITS, "unit").unwrap_err();
        assert_eq!(e.hint.as_deref(), Some("expected bps, kbps, mbps or gbps"));
        assert_eq!(
            depth(tok("150"), tok("kbytes"), "x", false),
            Ok(Threshold::Bytes(153_600))
        );
        assert_eq!(
            depth(tok("2"), tok("mbytes"), "x", true),
            Ok(Threshold::Bytes(2 * 1024 * 1024))
        );
        assert!(depth(tok("2"), tok("packets"), "x", true).is_err());
        assert_eq!(rate(tok("100"), tok("gbps"), "x"), Ok(100_000_000_000));
        assert!(rate(tok("99999999999999999"), tok("gbps"), "x")
            .unwrap_err()
            .message
            .ends_with("is too large"));
        assert_eq!(
            ranged(tok("8"), "qos-group", 0, 7).unwrap_err().message,
            "qos-group 8 is out of range"
        );
        assert_eq!(closest("ROCE", ["ROCEv2", "CNP"]), Some("ROCEv2"));
        assert_eq!(closest("x", ["ROCEv2", "CNP"]), None);
        assert_eq!(one_of(&["a"]), "a");
    }

    fn tok(text: &str) -> Token<'_> {
        Token {
            text,
            col: 5,
            offset: 4,
        }
    }

    #[test]
    fn mac_forms() {
        let want = [0x00, 0x11, 0x22, 0x33, 0x44, 0x55];
        assert_eq!(mac("0011.2233.4455"), Ok(want));
        assert_eq!(mac("00:11:22:33:44:55"), Ok(want));
        assert_eq!(mac("00-11-22-33-44-55"), Ok(want));
        assert_eq!(
            mac("AA:bb:CC:dd:EE:ff"),
            Ok([0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff])
        );
        for bad in [
            "0011.2233",
            "00:11:22:33:44",
            "0:11:22:33:44:55",
            "gg11.2233.4455",
            "001122334455",
            "+0:11:22:33:44:55",
        ] {
            let e = mac(bad).unwrap_err();
            assert_eq!(e.message(), format!("invalid MAC address `{bad}`"));
            assert_eq!(e.hint(), Some(MAC_FORMS));
        }
    }

    #[test]
    fn netmasks() {
        assert_eq!(netmask(tok("255.255.255.0")), Ok(24));
        assert_eq!(netmask(tok("255.255.255.255")), Ok(32));
        assert_eq!(netmask(tok("0.0.0.0")), Ok(0));
        assert_eq!(netmask(tok("255.255.254.0")), Ok(23));
        let e = netmask(tok("255.0.255.0")).unwrap_err();
        assert_eq!(
            (e.col, e.message.as_str()),
            (5, "invalid netmask `255.0.255.0`")
        );
        assert!(netmask(tok("255.255.255")).is_err());
    }

    #[test]
    fn numbers() {
        assert_eq!(number(tok("9216"), "MTU", "h"), Ok(9216));
        assert_eq!(
            number(tok("99999999999999999999999"), "MTU", "h"),
            Ok(u64::MAX)
        );
        assert_eq!(
            number(tok("-1"), "MTU", "h").unwrap_err().message,
            "invalid MTU `-1`"
        );
    }

    #[test]
    fn hostnames() {
        assert!(hostname("leaf-1.lab_a").is_ok());
        assert!(hostname("-leaf").is_err());
        assert!(hostname("leaf 1").is_err());
        assert!(hostname(&"a".repeat(63)).is_ok());
        assert!(hostname(&"a".repeat(64))
            .unwrap_err()
            .message()
            .contains("64 characters"));
    }

    #[test]
    fn linux_ifnames() {
        assert!(linux_ifname("veth-leaf1-e1").is_ok());
        assert!(linux_ifname("a-very-long-name0").is_err());
        assert!(linux_ifname("a/b").is_err());
    }
}
