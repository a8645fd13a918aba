//! Command tables: which keyword paths a section accepts and what each does,
//! and the lookup that matches a line's leading words against them.
//!
//! Keywords match case-insensitively and may be abbreviated to any unique
//! prefix among the keywords possible at that position (`int e1/1`,
//! `no shut`), as on NX-OS. The longest matching path wins, so `switchport
//! mode trunk` finds `switchport mode`, not `switchport`.

use super::{Args, Builder, Fail};
use crate::lexer::Token;
use crate::spelling::edit_distance;

/// A modelled command: consumes its arguments and updates the model.
pub(crate) type Handler = fn(&mut Builder<'_>, &mut Args<'_>) -> Result<(), Fail>;

/// What a matched command does.
#[derive(Clone, Copy)]
pub(crate) enum Action {
    /// Modelled: run the handler on the arguments.
    Run(Handler),
    /// Known but not modelled: skipped with one warning per kind (an error when strict).
    Skip,
    /// Known and deliberately ignored without a warning (`version`).
    Accept,
}

/// One entry of a section's command table.
pub(crate) struct Spec {
    /// The keywords that name the command, e.g. `["ip", "address"]`.
    pub path: &'static [&'static str],
    /// The command's syntax, shown in hints.
    pub usage: &'static str,
    /// What the command does.
    pub action: Action,
}

impl Spec {
    /// A modelled command.
    pub const fn run(path: &'static [&'static str], usage: &'static str, handler: Handler) -> Spec {
        Spec {
            path,
            usage,
            action: Action::Run(handler),
        }
    }

    /// A known command that is skipped with a warning (its `no` form too).
    pub const fn skip(path: &'static [&'static str]) -> Spec {
        Spec {
            path,
            usage: "",
            action: Action::Skip,
        }
    }

    /// A known command accepted silently.
    pub const fn accept(path: &'static [&'static str]) -> Spec {
        Spec {
            path,
            usage: "",
            action: Action::Accept,
        }
    }

    /// Whether the command is modelled.
    pub fn is_run(&self) -> bool {
        matches!(self.action, Action::Run(_))
    }

    /// The command's name as written in messages, e.g. `router bgp`.
    pub fn kind(&self) -> String {
        self.path.join(" ")
    }
}

/// Result of matching a line against a table.
pub(crate) enum Lookup {
    /// The line is this command; its first `consumed` tokens are keywords.
    Found {
        /// The matched entry.
        spec: &'static Spec,
        /// Number of leading tokens that were keywords.
        consumed: usize,
    },
    /// Token `at` abbreviates several keywords.
    Ambiguous {
        /// Index of the ambiguous token.
        at: usize,
        /// The keywords it could mean.
        candidates: Vec<&'static str>,
    },
    /// No entry matches; token `at` is where matching stopped.
    NotFound {
        /// Index of the first token that matched no keyword.
        at: usize,
    },
}

/// Match `tokens` against the entries of `table` accepted by `filter`.
fn lookup_filtered(
    table: &'static [Spec],
    tokens: &[Token<'_>],
    filter: impl Fn(&Spec) -> bool,
) -> Lookup {
    // A keyword matches a word only if it starts with the word's first letter.
    let first = tokens
        .first()
        .and_then(|t| t.text.bytes().next())
        .map(|b| b.to_ascii_lowercase());
    let mut candidates: Vec<&'static Spec> = table
        .iter()
        .filter(|s| filter(s) && s.path.first().map(|k| k.bytes().next()) == Some(first))
        .collect();
    let mut best: Option<&'static Spec> = None;
    let mut depth = 0;
    loop {
        if let Some(done) = candidates.iter().find(|s| s.path.len() == depth) {
            best = Some(done);
        }
        candidates.retain(|s| s.path.len() > depth);
        let Some(tok) = tokens.get(depth) else { break };
        if candidates.is_empty() {
            break;
        }
        let exact = candidates
            .iter()
            .map(|s| s.path[depth])
            .find(|k| k.eq_ignore_ascii_case(tok.text));
        let chosen = match exact {
            Some(k) => k,
            None => {
                let lower = tok.text.to_ascii_lowercase();
                let mut prefixed: Vec<&'static str> = Vec::new();
                for k in candidates.iter().map(|s| s.path[depth]) {
                    if k.starts_with(&lower) && !prefixed.contains(&k) {
                        prefixed.push(k);
                    }
                }
                match prefixed[..] {
                    [] => break,
                    [one] => one,
                    _ => {
                        prefixed.sort_unstable();
                        return Lookup::Ambiguous {
                            at: depth,
                            candidates: prefixed,
                        };
                    }
                }
            }
        };
        candidates.retain(|s| s.path[depth] == chosen);
        depth += 1;
    }
    match best {
        Some(spec) => Lookup::Found {
            spec,
            consumed: spec.path.len(),
        },
        None => Lookup::NotFound {
            at: depth.min(tokens.len().saturating_sub(1)),
        },
    }
}

/// Match a line against a table; a leading `no` also matches any unmodelled command.
pub(crate) fn resolve(table: &'static [Spec], tokens: &[Token<'_>]) -> Lookup {
    let direct = lookup_filtered(table, tokens, |_| true);
    let negated = tokens.len() > 1 && tokens[0].text.eq_ignore_ascii_case("no");
    if negated {
        if let Lookup::Found { spec, consumed } =
            lookup_filtered(table, &tokens[1..], |s| !s.is_run())
        {
            let longer = match direct {
                Lookup::Found { consumed: c, .. } => consumed + 1 > c,
                _ => true,
            };
            if longer {
                return Lookup::Found {
                    spec,
                    consumed: consumed + 1,
                };
            }
        }
    }
    direct
}

/// Whether a found command's keywords were all written out in full (no abbreviation).
///
/// The parser prefers a spelled-out match in any open section over an
/// abbreviated one in an inner section, so `ip route` under `interface` is
/// the top-level command, not an abbreviation of the interface's `ip router`.
pub(crate) fn spelled_out(spec: &Spec, consumed: usize, tokens: &[Token<'_>]) -> bool {
    let start = consumed.saturating_sub(spec.path.len());
    tokens.get(start..consumed).is_some_and(|written| {
        written
            .iter()
            .zip(spec.path)
            .all(|(t, k)| t.text.eq_ignore_ascii_case(k))
    })
}

/// Whether a line's first word (after `no`) starts some modelled command of the table.
pub(crate) fn looks_like(table: &'static [Spec], tokens: &[Token<'_>]) -> bool {
    let words = match tokens {
        [no, rest @ ..] if !rest.is_empty() && no.text.eq_ignore_ascii_case("no") => rest,
        _ => tokens,
    };
    let Some(first) = words.first() else {
        return false;
    };
    let lower = first.text.to_ascii_lowercase();
    table.iter().filter(|s| s.is_run()).any(|s| {
        let head = match s.path {
            ["no", second, ..] => second,
            [head, ..] => head,
            [] => return false,
        };
        head.starts_with(&lower)
    })
}

/// The modelled command closest in spelling to the line, if close enough to suggest.
pub(crate) fn suggest(table: &'static [Spec], tokens: &[Token<'_>]) -> Option<String> {
    let mut best: Option<(usize, String)> = None;
    for spec in table.iter().filter(|s| s.is_run()) {
        let n = spec.path.len().min(tokens.len());
        let written = tokens[..n]
            .iter()
            .map(|t| t.text.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(" ");
        let want = spec.kind();
        let d = edit_distance(&written, &want);
        let close = d <= 2.max(want.len() / 4);
        let better = match &best {
            Some((bd, _)) => d < *bd,
            None => true,
        };
        if close && better {
            best = Some((d, want));
        }
    }
    best.map(|(_, s)| s)
}

/// The modelled commands of a table (without `no` forms), for hints.
pub(crate) fn modelled_commands(table: &'static [Spec]) -> String {
    let mut names: Vec<String> = table
        .iter()
        .filter(|s| s.is_run() && s.path[0] != "no")
        .map(Spec::kind)
        .collect();
    names.dedup();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lexer::lex_line;

    fn nothing(_: &mut Builder<'_>, _: &mut Args<'_>) -> Result<(), Fail> {
        Ok(())
    }

    static TABLE: &[Spec] = &[
        Spec::run(&["switchport"], "switchport", nothing),
        Spec::skip(&["switchport", "mode"]),
        Spec::skip(&["switchport", "monitor"]),
        Spec::run(&["shutdown"], "shutdown", nothing),
        Spec::run(&["no", "shutdown"], "no shutdown", nothing),
        Spec::run(&["ip", "address"], "ip address", nothing),
        Spec::run(&["ip", "arp"], "ip arp", nothing),
        Spec::run(&["ipv6", "address"], "ipv6 address", nothing),
        Spec::skip(&["cdp", "enable"]),
        Spec::accept(&["version"]),
    ];

    fn found(line: &str) -> Option<(String, usize)> {
        let l = lex_line(1, line).unwrap();
        match resolve(TABLE, &l.tokens) {
            Lookup::Found { spec, consumed } => Some((spec.kind(), consumed)),
            _ => None,
        }
    }

    fn miss(line: &str) -> (bool, usize) {
        let l = lex_line(1, line).unwrap();
        match resolve(TABLE, &l.tokens) {
            Lookup::Ambiguous { at, .. } => (true, at),
            Lookup::NotFound { at } => (false, at),
            Lookup::Found { spec, .. } => panic!("unexpectedly found {}", spec.kind()),
        }
    }

    #[test]
    fn exact_abbreviated_and_case_insensitive() {
        assert_eq!(
            found("ip address 1.1.1.1/24"),
            Some(("ip address".into(), 2))
        );
        assert_eq!(found("IP ADD 1.1.1.1/24"), Some(("ip address".into(), 2)));
        assert_eq!(found("no shut"), Some(("no shutdown".into(), 2)));
        assert_eq!(found("ipv6 a x"), Some(("ipv6 address".into(), 2)));
        // `ip` is exact even though it also prefixes `ipv6`.
        assert_eq!(found("ip arp 1.1.1.1 x"), Some(("ip arp".into(), 2)));
    }

    #[test]
    fn whole_keywords_are_told_from_abbreviations() {
        let exact = |line| {
            let l = lex_line(1, line).unwrap();
            match resolve(TABLE, &l.tokens) {
                Lookup::Found { spec, consumed } => spelled_out(spec, consumed, &l.tokens),
                _ => panic!("{line}: not found"),
            }
        };
        assert!(exact("no shutdown"));
        assert!(exact("NO SHUTDOWN"));
        assert!(!exact("no shut"));
        assert!(exact("no cdp enable"));
        assert!(!exact("no cdp en"));
        assert!(exact("switchport mode access"));
        assert!(!exact("switchport mod access"));
    }

    #[test]
    fn longest_path_wins() {
        assert_eq!(found("switchport"), Some(("switchport".into(), 1)));
        assert_eq!(
            found("switchport mode trunk"),
            Some(("switchport mode".into(), 2))
        );
        assert_eq!(
            found("switchport mod trunk"),
            Some(("switchport mode".into(), 2))
        );
        // An argument that matches no deeper keyword stays an argument.
        assert_eq!(found("switchport x"), Some(("switchport".into(), 1)));
    }

    #[test]
    fn no_prefixes_unmodelled_commands() {
        assert_eq!(found("no cdp enable"), Some(("cdp enable".into(), 3)));
        assert_eq!(
            found("no switchport mode"),
            Some(("switchport mode".into(), 3))
        );
    }

    #[test]
    fn misses_report_where_matching_stopped() {
        assert_eq!(miss("ip adress 1.1.1.1/24"), (false, 1));
        assert_eq!(miss("bogus"), (false, 0));
        assert_eq!(miss("ip"), (false, 0));
        assert_eq!(miss("ip a 1.1.1.1/24"), (true, 1));
        assert_eq!(miss("s"), (true, 0));
    }

    #[test]
    fn looks_like_checks_the_first_word() {
        let t = |s| looks_like(TABLE, &lex_line(1, s).unwrap().tokens);
        assert!(t("ip adress"));
        assert!(t("no ipv"));
        assert!(!t("no ipx"));
        assert!(t("shut"));
        assert!(!t("cdp enable"));
        assert!(!t("hostname x"));
    }

    #[test]
    fn suggestions_pick_the_closest_command() {
        let s = |l| suggest(TABLE, &lex_line(1, l).unwrap().tokens);
        assert_eq!(s("ip adress 10.0.0.1/24").as_deref(), Some("ip address"));
        assert_eq!(s("shutdwn").as_deref(), Some("shutdown"));
        assert_eq!(s("hostname x"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            modelled_commands(TABLE),
            "switchport, shutdown, ip address, ip arp, ipv6 address"
        );
    }
}
