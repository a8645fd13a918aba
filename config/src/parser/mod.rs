//! The context-sensitive parser: significant lines in, model and diagnostics out.
//!
//! The parser keeps a stack of open sections (frames). Each section kind has
//! a table of commands ([`table::Spec`]). A line is resolved against the
//! innermost section first and then outwards; the first section whose table
//! knows the command takes it, and the sections inside it are closed. So
//! membership comes from context, not indentation: under `interface`, a valid
//! interface sub-command belongs to the interface and a top-level command
//! starts something new.
//!
//! Indentation is used only as a hint, in four places:
//! * the body of a skipped section (unknown or unmodelled, e.g. `router ospf`)
//!   is every following line indented deeper than its header;
//! * under a modelled section, a line no table knows is an error (a typo in
//!   the section) when it is indented deeper than the header, or when the
//!   section's body has not been indented and its first word begins one of
//!   the section's commands (`ip adress`); otherwise it is an unknown
//!   top-level command, skipped with a warning;
//! * `exit` and `end` inside a skipped section's indented body belong to it;
//! * a command several open sections know goes to an outer one when the
//!   line is indented no deeper than an inner section's header whose body
//!   was indented (a global `priority-flow-control watch-dog-interval on`
//!   written flush left after an indented `interface` body is global).
//!
//! `exit` closes the innermost section, `end` closes all of them.

mod bgp;
mod frame;
mod global;
mod interface;
mod l2;
mod monitor;
mod policy;
mod qos;
mod table;
mod top;
mod value;

pub(crate) use frame::Section;
use frame::{Frame, FrameKind};
pub(crate) use qos::protocol_name;
use table::{Action, Lookup, Spec};

use std::collections::HashMap;

use crate::diag::{Diagnostic, Severity, Sources, ValueError};
use crate::lexer::{Line, Token};
use crate::model::{Config, Interface, InterfaceName, IpPrefix, RouteTarget};
use crate::validate::{self, IfKey, Pos, SourceMap};
use crate::ParseOptions;

/// A command's failure: where on the line, what, and how to fix it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fail {
    /// 1-based column of the offending token.
    pub col: usize,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
}

impl Fail {
    /// A failure at `col`.
    pub fn new(col: usize, message: impl Into<String>, hint: Option<String>) -> Self {
        Fail {
            col,
            message: message.into(),
            hint,
        }
    }

    /// A value that did not parse, at its token.
    pub fn value(tok: Token<'_>, e: ValueError) -> Self {
        Fail::new(tok.col, e.message(), e.hint().map(str::to_owned))
    }
}

/// The arguments of one command: the tokens after its keywords.
pub(crate) struct Args<'t> {
    line: &'t Line<'t>,
    pos: usize,
    usage: &'static str,
}

impl<'t> Args<'t> {
    /// Arguments of `line` starting at token `pos`, for a command with this usage.
    fn new(line: &'t Line<'t>, pos: usize, usage: &'static str) -> Self {
        Args { line, pos, usage }
    }

    /// The next argument, without consuming it.
    pub fn peek(&self) -> Option<Token<'t>> {
        self.line.tokens.get(self.pos).copied()
    }

    /// Consume the next argument.
    pub fn next_token(&mut self) -> Option<Token<'t>> {
        let tok = self.peek();
        if tok.is_some() {
            self.pos += 1;
        }
        tok
    }

    /// Consume the next argument, which must be there.
    pub fn expect(&mut self, what: &str) -> Result<Token<'t>, Fail> {
        self.next_token().ok_or_else(|| self.missing(what))
    }

    /// A missing-argument failure, pointing just past the end of the line.
    pub fn missing(&self, what: &str) -> Fail {
        Fail::new(
            self.line.end_col(),
            format!("missing {what}"),
            Some(format!("usage: {}", self.usage)),
        )
    }

    /// Succeed only if every argument has been consumed.
    pub fn finish(&self) -> Result<(), Fail> {
        match self.peek() {
            None => Ok(()),
            Some(tok) => Err(Fail::new(
                tok.col,
                format!("unexpected `{}`", tok.text),
                Some(format!("usage: {}", self.usage)),
            )),
        }
    }

    /// Consume the rest of the line as raw text, with the column it starts at.
    pub fn rest(&mut self) -> Option<(&'t str, usize)> {
        let tok = self.peek()?;
        let text = self.line.rest_from(self.pos)?;
        self.pos = self.line.tokens.len();
        Some((text, tok.col))
    }

    /// Consume the next argument if it is `keyword` (or an abbreviation of it).
    pub fn eat(&mut self, keyword: &str) -> Option<Token<'t>> {
        let tok = self.peek()?;
        if is_keyword(tok.text, keyword) {
            self.pos += 1;
            Some(tok)
        } else {
            None
        }
    }

    /// Consume every remaining argument.
    pub fn skip_rest(&mut self) {
        self.pos = self.line.tokens.len();
    }
}

/// Whether `word` is `keyword` or an abbreviation of it (case-insensitive).
pub(crate) fn is_keyword(word: &str, keyword: &str) -> bool {
    !word.is_empty()
        && word.len() <= keyword.len()
        && keyword.as_bytes()[..word.len()].eq_ignore_ascii_case(word.as_bytes())
}

/// The lines indented under a skipped top-level section (`router ospf …`),
/// so its warning can say exactly what went with it.
struct SkippedBody {
    /// The warning the section's header drew, if it drew one.
    warning: Option<usize>,
    /// First and last line of the body, and how many lines it had.
    first: usize,
    last: usize,
    lines: usize,
}

/// Count of skipped commands of one kind, for the summary warning.
struct Skipped {
    context: &'static str,
    kind: String,
    count: usize,
}

/// Parser state: the model being built, open sections and collected diagnostics.
pub(crate) struct Builder<'a> {
    sources: Sources<'a>,
    strict: bool,
    config: Config,
    map: SourceMap,
    frames: Vec<Frame>,
    errors: Vec<Diagnostic>,
    warnings: Vec<Diagnostic>,
    skipped: Vec<Skipped>,
    /// Errors beyond [`MAX_ERRORS`], counted but not kept.
    errors_omitted: usize,
    /// Distinct warnings beyond [`MAX_WARNINGS`], counted but not kept.
    warnings_omitted: usize,
    /// Per kept warning: how often it was reported, and the first lines.
    repeats: Vec<(usize, Vec<usize>)>,
    /// Whether the file had any command at all.
    saw_command: bool,
    /// Unmodelled features already warned about.
    features_warned: Vec<String>,
    /// Number of the line being processed.
    line: usize,
    /// Indentation of the line being processed.
    indent: usize,
    /// Index of each configured interface in `config.interfaces`, so a
    /// mention finds its interface without scanning the list.
    interface_of: HashMap<InterfaceName, usize>,
    /// Index in `config.routes` of each configured static route, so a
    /// duplicate is found without scanning the list. A removed route leaves
    /// the map at once and `config.routes` at [`Builder::finish`].
    route_of: HashMap<(IpPrefix, RouteTarget), usize>,
    /// Whether a route was removed, so `config.routes` needs compacting.
    routes_removed: bool,
    /// The body of the skipped top-level section open now, if any.
    skipped_body: Option<SkippedBody>,
    /// Index of each configured SVI in `config.svis`, by VLAN.
    svi_of: HashMap<u16, usize>,
    /// Index of each configured port-channel in `config.port_channels`, by number.
    pc_of: HashMap<u16, usize>,
    /// The VLANs of the open `vlan` section.
    open_vlans: Vec<u16>,
}

impl<'a> Builder<'a> {
    /// A parser for one file.
    fn new(sources: Sources<'a>, opts: &ParseOptions) -> Self {
        Builder {
            sources,
            strict: opts.strict,
            config: Config::default(),
            map: SourceMap::default(),
            frames: vec![Frame {
                kind: FrameKind::Top,
                indent: 0,
                body_indented: false,
            }],
            errors: Vec::new(),
            warnings: Vec::new(),
            skipped: Vec::new(),
            features_warned: Vec::new(),
            errors_omitted: 0,
            warnings_omitted: 0,
            repeats: Vec::new(),
            saw_command: false,
            line: 0,
            indent: 0,
            interface_of: HashMap::new(),
            route_of: HashMap::new(),
            routes_removed: false,
            skipped_body: None,
            svi_of: HashMap::new(),
            pc_of: HashMap::new(),
            open_vlans: Vec::new(),
        }
    }

    /// Process one significant line.
    fn process(&mut self, line: &Line<'_>) {
        self.saw_command = true;
        self.line = line.number;
        self.indent = line.indent;
        let inner = self.innermost();
        if inner.kind.is_skipped() && !inner.kind.checks_body() && line.indent > inner.indent {
            if let Some(b) = self
                .skipped_body
                .as_mut()
                .filter(|_| self.frames.len() == 2)
            {
                b.first = if b.lines == 0 { line.number } else { b.first };
                b.last = line.number;
                b.lines += 1;
            }
            return;
        }
        self.close_skipped_body();
        let first = line.tokens[0].text;
        if line.tokens.len() == 1 && first.eq_ignore_ascii_case("exit") {
            if self.frames.len() > 1 {
                self.frames.pop();
            }
            return;
        }
        if line.tokens.len() == 1 && first.eq_ignore_ascii_case("end") {
            self.frames.truncate(1);
            return;
        }
        let acl = match self.innermost().kind {
            FrameKind::Section(Section::AccessList, index, _) => Some(Some(index)),
            FrameKind::Broken(Section::AccessList) => Some(None),
            _ => None,
        };
        if let Some(index) = acl {
            if qos::is_numbered_entry(line) {
                let frame = self.frames.len() - 1;
                if line.indent > self.frames[frame].indent {
                    self.frames[frame].body_indented = true;
                }
                if let Err(fail) = qos::numbered_entry(self, index, line) {
                    self.error(fail);
                }
                return;
            }
        }
        // Innermost section first, except that sections the line's
        // indentation has left come last. A command spelled out in full in
        // any section beats an abbreviation; among spelled-out commands the
        // longest wins.
        // A line that leaves an outer section's indented body leaves the
        // sections inside it too, even one whose own body was empty.
        let closed = |depth: usize| {
            (1..=depth).any(|d| {
                let f = &self.frames[d];
                f.body_indented && line.indent <= f.indent
            })
        };
        let order: Vec<usize> = (0..self.frames.len())
            .rev()
            .filter(|&d| !closed(d))
            .chain((0..self.frames.len()).rev().filter(|&d| closed(d)))
            .collect();
        let results: Vec<(usize, Lookup)> = order
            .into_iter()
            .filter(|&depth| !self.frames[depth].kind.table().is_empty())
            .map(|depth| {
                (
                    depth,
                    table::resolve(self.frames[depth].kind.table(), &line.tokens),
                )
            })
            .collect();
        let mut spelled: Option<(usize, &'static Spec, usize)> = None;
        for (depth, r) in &results {
            if let Lookup::Found { spec, consumed } = r {
                let longer = !matches!(spelled, Some((_, _, c)) if c >= *consumed);
                if longer && table::spelled_out(spec, *consumed, &line.tokens) {
                    spelled = Some((*depth, *spec, *consumed));
                }
            }
        }
        if let Some((depth, spec, consumed)) = spelled {
            self.frames.truncate(depth + 1);
            self.dispatch(spec, consumed, line);
            return;
        }
        let mut miss_at = None;
        for (depth, result) in results {
            match result {
                Lookup::Found { spec, consumed } => {
                    self.frames.truncate(depth + 1);
                    self.dispatch(spec, consumed, line);
                    return;
                }
                Lookup::Ambiguous { at, candidates } => {
                    let kind = &self.frames[depth].kind;
                    if !kind.is_skipped() || kind.checks_body() {
                        let tok = line.tokens[at];
                        self.error(Fail::new(
                            tok.col,
                            format!("ambiguous command word `{}`", tok.text),
                            Some(format!("it could mean {}", candidates.join(", "))),
                        ));
                    }
                    return;
                }
                Lookup::NotFound { at } => {
                    miss_at.get_or_insert(at);
                }
            }
        }
        self.unknown(line, miss_at.unwrap_or(0));
    }

    /// The innermost open section.
    fn innermost(&self) -> &Frame {
        // The top-level frame is never popped.
        &self.frames[self.frames.len() - 1]
    }

    /// Run a matched command in the (now innermost) section that knows it.
    fn dispatch(&mut self, spec: &'static Spec, consumed: usize, line: &Line<'_>) {
        let at_top = self.frames.len() == 1;
        let frame = self.frames.len() - 1;
        if self.frames[frame].kind.is_skipped() && !self.frames[frame].kind.checks_body() {
            return;
        }
        if !at_top && line.indent > self.frames[frame].indent {
            self.frames[frame].body_indented = true;
        }
        match spec.action {
            Action::Run(handler) => {
                let mut args = Args::new(line, consumed, spec.usage);
                if let Err(fail) = handler(self, &mut args) {
                    self.error(fail);
                }
            }
            Action::Skip => {
                let context = self.frames[frame].kind.context();
                let before = self.warnings.len();
                self.skip(context, spec.kind(), line.tokens[0].col, true);
                if at_top {
                    self.enter_skipped_section(before);
                } else if self.frames[frame].kind.is_lenient() {
                    // Its indented body (a `vrf` block) goes with it.
                    self.enter(FrameKind::Skip);
                }
            }
            Action::Accept => {}
        }
    }

    /// Handle a line no open section knows.
    fn unknown(&mut self, line: &Line<'_>, at: usize) {
        let inner = self.innermost();
        if matches!(inner.kind, FrameKind::SkipInterface | FrameKind::Broken(_))
            && !inner.kind.checks_body()
            && table::looks_like(inner.kind.table(), &line.tokens)
        {
            return;
        }
        // The innermost modelled section the line is indented into (or,
        // for the innermost one with a flat body, that it starts like a
        // command of) takes it as a typo.
        let owner = (1..self.frames.len()).rev().find(|&depth| {
            let f = &self.frames[depth];
            let innermost = depth == self.frames.len() - 1;
            f.kind.is_modelled()
                && (line.indent > f.indent
                    || (innermost
                        && !f.body_indented
                        && table::looks_like(f.kind.table(), &line.tokens)))
        });
        if let Some(depth) = owner {
            if self.errors.len() >= MAX_ERRORS {
                // Past the cap only the count is kept: skip building the
                // hint (a search of the section's commands), which would
                // make a huge bad file slow.
                self.frames.truncate(depth + 1);
                self.errors_omitted += 1;
                return;
            }
            let kind = &self.frames[depth].kind;
            let (table, context) = (kind.table(), kind.context());
            let suggestion = table::suggest(table, &line.tokens);
            if kind.is_lenient() && suggestion.is_none() {
                self.frames.truncate(depth + 1);
                let first = line.tokens[0].text.to_ascii_lowercase();
                let kind = match line.tokens.get(1) {
                    Some(second) if first == "no" => {
                        format!("no {}", second.text.to_ascii_lowercase())
                    }
                    _ => first,
                };
                self.skip(context, kind, line.tokens[0].col, true);
                self.enter(FrameKind::Skip);
                return;
            }
            let upto = at.min(line.tokens.len() - 1);
            let written: Vec<&str> = line.tokens[..=upto].iter().map(|t| t.text).collect();
            let hint = match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!(
                    "{context} commands are: {}",
                    table::modelled_commands(table)
                ),
            };
            self.frames.truncate(depth + 1);
            self.error(Fail::new(
                line.tokens[upto].col,
                format!("unknown {context} command `{}`", written.join(" ")),
                Some(hint),
            ));
            return;
        }
        self.frames.truncate(1);
        let first = line.tokens[0].text.to_ascii_lowercase();
        let kind = match line.tokens.get(1) {
            Some(second) if first == "no" => format!("no {}", second.text.to_ascii_lowercase()),
            _ => first,
        };
        let before = self.warnings.len();
        self.skip("", kind, line.tokens[0].col, false);
        self.enter_skipped_section(before);
    }

    /// Opens a skipped top-level section; `warnings_before` tells whether
    /// its header drew a warning (the warning just after it).
    fn enter_skipped_section(&mut self, warnings_before: usize) {
        self.enter(FrameKind::Skip);
        self.skipped_body = Some(SkippedBody {
            warning: (self.warnings.len() > warnings_before).then_some(warnings_before),
            first: 0,
            last: 0,
            lines: 0,
        });
    }

    /// Ends the skipped section's body: its warning names the lines that
    /// went with it.
    fn close_skipped_body(&mut self) {
        let Some(b) = self.skipped_body.take() else {
            return;
        };
        let Some(w) = b.warning.and_then(|i| self.warnings.get_mut(i)) else {
            return;
        };
        if b.lines == 0 {
            return;
        }
        let lines = if b.lines == 1 {
            format!("the line indented under it (line {})", b.first)
        } else {
            format!(
                "the {} lines indented under it (lines {}-{})",
                b.lines, b.first, b.last
            )
        };
        w.message = format!("{} with {lines}", w.message);
    }

    /// Recognise a block NX-OS prints as opaque text starting at `lines[i]`
    /// (already lexed as `line`) and skip it as a whole: a `banner` with its
    /// delimited body, a PEM `-----BEGIN ...-----` block, or a `certificate`
    /// block of a `crypto` section up to its `quit`. Returns the index of the
    /// block's last line, `None` when the line starts no such block.
    ///
    /// Nothing inside such a block is ever read as a command: a banner that
    /// quotes `ip route ...` installs no route.
    fn opaque_block(
        &mut self,
        line: &Line<'_>,
        lines: &[&str],
        i: usize,
        in_crypto: bool,
    ) -> Option<usize> {
        self.saw_command = true;
        let first = line.tokens[0].text;
        if first.eq_ignore_ascii_case("banner") && line.tokens.len() >= 2 {
            return self.banner(line, lines, i);
        }
        let trimmed = line.raw.trim_start();
        if trimmed.starts_with("-----BEGIN") {
            let last =
                (i + 1..lines.len()).find(|&j| lines[j].trim_start().starts_with("-----END"))?;
            if !in_crypto {
                self.line = line.number;
                self.block_skipped("certificate text", line.tokens[0].col, i, last);
            }
            return Some(last);
        }
        if in_crypto && line.indent > 0 && first.eq_ignore_ascii_case("certificate") {
            // The body (hex or PEM, possibly flush left) runs to a line `quit`.
            return (i + 1..lines.len()).find(|&j| {
                let mut words = lines[j].split_whitespace();
                words.next().is_some_and(|w| w.eq_ignore_ascii_case("quit"))
                    && words.next().is_none()
            });
        }
        None
    }

    /// `banner TYPE <delim>text<delim>`: find where the delimited text ends.
    ///
    /// The delimiter is the first character after the banner type (or the
    /// two characters `^C`, as NX-OS prints a Ctrl-C), and the text ends at
    /// its next occurrence, on the same line or a later one. A banner that is
    /// never closed is an error: everything after it would be its text.
    fn banner(&mut self, line: &Line<'_>, lines: &[&str], i: usize) -> Option<usize> {
        self.line = line.number;
        self.indent = line.indent;
        let second = line.tokens[1];
        let typed = second.text.starts_with(|c: char| c.is_ascii_alphabetic());
        let (kind, delim_tok) = if typed {
            (
                format!("banner {}", second.text.to_ascii_lowercase()),
                *line.tokens.get(2)?,
            )
        } else {
            ("banner".to_string(), second)
        };
        let text = &line.raw[delim_tok.offset..];
        let delim: &str = if text.starts_with("^C") {
            "^C"
        } else {
            let c = text.chars().next()?;
            &text[..c.len_utf8()]
        };
        let last = if text[delim.len()..].contains(delim) {
            Some(i)
        } else {
            (i + 1..lines.len()).find(|&j| lines[j].contains(delim))
        };
        match last {
            Some(last) => {
                self.block_skipped(&kind, line.tokens[0].col, i, last);
                Some(last)
            }
            None => {
                self.error(Fail::new(
                    delim_tok.col,
                    format!("`{kind}` text opened with `{delim}` is never closed"),
                    Some(format!(
                        "end the text with a second `{delim}`; until then every later line is banner text"
                    )),
                ));
                // Read nothing after it as commands: the file is rejected anyway.
                Some(lines.len() - 1)
            }
        }
    }

    /// Record a skipped opaque block (lines `first..=last`, 0-based) of `kind`.
    fn block_skipped(&mut self, kind: &str, col: usize, first: usize, last: usize) {
        let lines = if first == last {
            format!("line {}", first + 1)
        } else {
            format!("lines {}-{}", first + 1, last + 1)
        };
        self.frames.truncate(1);
        self.skip_detail(
            "",
            kind.to_string(),
            col,
            true,
            Some(format!("its text ({lines})")),
        );
    }

    /// Open a section whose header is the current line.
    fn enter(&mut self, kind: FrameKind) {
        self.frames.push(Frame {
            kind,
            indent: self.indent,
            body_indented: false,
        });
    }

    /// Record a skipped command: a warning the first time its kind is seen, an error when strict.
    fn skip(&mut self, context: &'static str, kind: String, col: usize, known: bool) {
        self.skip_detail(context, kind, col, known, None);
    }

    /// As [`Builder::skip`], the warning naming what else went with the
    /// command (`its text (lines 3-7)`).
    fn skip_detail(
        &mut self,
        context: &'static str,
        kind: String,
        col: usize,
        known: bool,
        detail: Option<String>,
    ) {
        let what = if context.is_empty() {
            format!("`{kind}`")
        } else if context.ends_with("option") {
            format!("{context} `{kind}`")
        } else {
            format!("{context} command `{kind}`")
        };
        if self.strict {
            let message = if known {
                format!("{what} is not supported")
            } else {
                format!("unknown command {what}")
            };
            let hint =
                Some("remove it, or parse without strict mode to skip it with a warning".into());
            self.diag(Severity::Error, col, message, hint);
        }
        let entry = self
            .skipped
            .iter_mut()
            .find(|s| s.context == context && s.kind == kind);
        match entry {
            Some(s) => s.count += 1,
            None => {
                self.skipped.push(Skipped {
                    context,
                    kind: kind.clone(),
                    count: 1,
                });
                if !self.strict {
                    let message = if let Some(detail) = &detail {
                        format!("{what} is not modelled; skipped with {detail}")
                    } else if known {
                        format!("{what} is not modelled; skipped")
                    } else {
                        format!("unknown command {what}; skipped")
                    };
                    let hint = Some(format!(
                        "later `{kind}` lines are skipped without another warning"
                    ));
                    self.diag(Severity::Warning, col, message, hint);
                }
            }
        }
    }

    /// Note a `feature` railyard does not model: a warning the first time
    /// the name is seen (an error on every line when strict).
    fn unmodelled_feature(&mut self, name: &str, col: usize) {
        if self.strict {
            self.diag(
                Severity::Error,
                col,
                format!("`feature {name}` is not supported"),
                Some("remove it, or parse without strict mode to keep it with a warning".into()),
            );
            return;
        }
        if self.features_warned.iter().any(|f| f == name) {
            return;
        }
        self.features_warned.push(name.to_owned());
        self.warn(
            col,
            format!(
                "`feature {name}` is not modelled; kept in the configuration, it enables nothing"
            ),
            Some(format!(
                "later `feature {name}` lines are kept without another warning"
            )),
        );
    }

    /// Record an error on the current line.
    fn error(&mut self, fail: Fail) {
        self.diag(Severity::Error, fail.col, fail.message, fail.hint);
    }

    /// Record a warning on the current line.
    fn warn(&mut self, col: usize, message: impl Into<String>, hint: Option<String>) {
        self.diag(Severity::Warning, col, message.into(), hint);
    }

    /// Record a diagnostic on the current line.
    fn diag(&mut self, severity: Severity, col: usize, message: String, hint: Option<String>) {
        let d = self
            .sources
            .diag(severity, Pos::new(self.line, col), message, hint);
        self.record(d);
    }

    /// Keep a diagnostic, within bounds: at most [`MAX_ERRORS`] errors are
    /// kept (the rest only counted), and a warning identical to one already
    /// kept (same message and hint) only adds to that one's count, so a
    /// huge bad file costs bounded memory.
    fn record(&mut self, d: Diagnostic) {
        match d.severity {
            Severity::Error => {
                if self.errors.len() < MAX_ERRORS {
                    self.errors.push(d);
                } else {
                    self.errors_omitted += 1;
                }
            }
            Severity::Warning => {
                let same = self
                    .warnings
                    .iter()
                    .position(|w| w.message == d.message && w.hint == d.hint);
                match same {
                    Some(i) => {
                        let lines = &mut self.repeats[i];
                        lines.0 += 1;
                        if lines.1.len() < SHOWN_REPEATS && lines.1.last() != Some(&d.line) {
                            lines.1.push(d.line);
                        }
                    }
                    None if self.warnings.len() < MAX_WARNINGS => {
                        self.repeats.push((1, vec![d.line]));
                        self.warnings.push(d);
                    }
                    None => self.warnings_omitted += 1,
                }
            }
        }
    }

    /// A position on the current line.
    fn pos(&self, col: usize) -> Pos {
        Pos::new(self.line, col)
    }

    /// Indices of the interfaces the innermost (interface) section configures.
    fn members(&self) -> Vec<usize> {
        match &self.innermost().kind {
            FrameKind::Interface(members) => members.clone(),
            _ => Vec::new(),
        }
    }

    /// The interfaces of any kind the innermost (interface) section configures.
    fn ports(&self) -> Vec<IfKey> {
        match &self.innermost().kind {
            FrameKind::Interface(v) => v.iter().map(|&i| IfKey::Ethernet(i)).collect(),
            FrameKind::Svi(v) => v.iter().map(|&i| IfKey::Svi(i)).collect(),
            FrameKind::PortChannel(v) => v.iter().map(|&i| IfKey::PortChannel(i)).collect(),
            _ => Vec::new(),
        }
    }

    /// The indices of the innermost frame if it is the modelled section `section`.
    fn section(&self, section: Section) -> Option<(usize, usize)> {
        match self.innermost().kind {
            FrameKind::Section(s, a, b) if s == section => Some((a, b)),
            _ => None,
        }
    }

    /// Record where an item was written (the latest mention wins).
    fn mark(&mut self, key: validate::At, col: usize) {
        self.map.at.insert(key, Pos::new(self.line, col));
    }

    /// Record where an item was first written.
    fn mark_first(&mut self, key: validate::At, col: usize) {
        let pos = Pos::new(self.line, col);
        self.map.at.entry(key).or_insert(pos);
    }

    /// Index of an interface, created with defaults on first mention.
    fn interface_index(&mut self, name: InterfaceName) -> usize {
        let next = self.config.interfaces.len();
        let i = *self.interface_of.entry(name).or_insert(next);
        if i == next {
            self.config.interfaces.push(Interface::new(name, self.line));
        }
        i
    }

    /// Index of the SVI of `vlan`, created with defaults on first mention.
    fn svi_index(&mut self, vlan: u16) -> usize {
        let next = self.config.svis.len();
        let i = *self.svi_of.entry(vlan).or_insert(next);
        if i == next {
            self.config.svis.push(crate::l2::Svi::new(vlan, self.line));
        }
        i
    }

    /// Index of port-channel `id`, created with defaults on first mention.
    fn pc_index(&mut self, id: u16) -> usize {
        let next = self.config.port_channels.len();
        let i = *self.pc_of.entry(id).or_insert(next);
        if i == next {
            self.config
                .port_channels
                .push(crate::l2::PortChannel::new(id, self.line));
        }
        i
    }

    /// Creates the port-channels that only members' `channel-group` lines
    /// name, as NX-OS does: each takes its first member's layer and
    /// switchport settings, and starts at that member's `channel-group` line.
    fn implicit_port_channels(&mut self) {
        for i in 0..self.config.interfaces.len() {
            let iface = &self.config.interfaces[i];
            let Some(g) = iface.channel_group else {
                continue;
            };
            if self.pc_of.contains_key(&g.id) {
                continue;
            }
            let (routed, switchport) = (iface.routed, iface.switchport);
            let pos = self
                .map
                .at
                .get(&validate::At::ChannelGroup(i))
                .copied()
                .unwrap_or(Pos::new(iface.line, 0));
            let p = self.pc_index(g.id);
            let pc = &mut self.config.port_channels[p];
            pc.line = pos.line;
            pc.routed = routed;
            pc.switchport = switchport;
            self.map
                .at
                .insert(validate::At::IfaceName(IfKey::PortChannel(p)), pos);
        }
    }

    /// Drops the routes `no ip route` removed from `config.routes`, keeping
    /// the others in configuration order.
    fn compact_routes(&mut self) {
        if !std::mem::take(&mut self.routes_removed) {
            return;
        }
        let mut live = vec![false; self.config.routes.len()];
        for &i in self.route_of.values() {
            if let Some(l) = live.get_mut(i) {
                *l = true;
            }
        }
        let mut keep = live.into_iter();
        self.config.routes.retain(|_| keep.next().unwrap_or(false));
        for (i, r) in self.config.routes.iter().enumerate() {
            if let Some(slot) = self.route_of.get_mut(&(r.prefix, r.target.clone())) {
                *slot = i;
            }
        }
    }

    /// Validate the model and hand back everything found: the model when
    /// there is no error, and every diagnostic (errors and warnings) in line
    /// order, repeated warnings collapsed, the counts of what the caps left
    /// out at the end.
    fn finish(mut self) -> crate::Report {
        self.close_skipped_body();
        self.config.lldp.enabled = self.config.features.contains("lldp");
        self.compact_routes();
        self.implicit_port_channels();
        for d in validate::validate(&self.config, &self.map, &self.sources) {
            self.record(d);
        }
        // Validation is done with the parser's indices; the model lists them by number.
        self.config.svis.sort_by_key(|s| s.vlan);
        self.config.port_channels.sort_by_key(|p| p.id);
        if !self.saw_command {
            self.warnings.push(Diagnostic::whole_file(
                Severity::Warning,
                self.sources.file,
                "the file has no commands (it is empty or only comments); the switch has no interfaces",
            ));
            self.repeats.push((1, Vec::new()));
        }
        for (w, (count, lines)) in self.warnings.iter_mut().zip(&self.repeats) {
            if *count > 1 {
                let mut shown: Vec<String> = lines.iter().map(ToString::to_string).collect();
                if *count > lines.len() {
                    shown.push("...".into());
                }
                w.message = format!("{} ({count} times: lines {})", w.message, shown.join(", "));
            }
        }
        let order = |d: &Diagnostic| (d.line, d.col);
        self.errors.sort_by_key(order);
        self.errors.dedup();
        self.warnings.sort_by_key(order);
        self.warnings.dedup();
        if !self.skipped.is_empty() {
            let total: usize = self.skipped.iter().map(|s| s.count).sum();
            let kinds: Vec<String> = self
                .skipped
                .iter()
                .map(|s| match s.context {
                    "" => format!("{} ({})", s.kind, s.count),
                    c => format!("{c}: {} ({})", s.kind, s.count),
                })
                .collect();
            let plural = if total == 1 { "" } else { "s" };
            self.warnings.push(Diagnostic::whole_file(
                Severity::Warning,
                self.sources.file,
                format!(
                    "skipped {total} unmodelled command{plural}: {}",
                    kinds.join(", ")
                ),
            ));
        }
        if self.warnings_omitted > 0 {
            self.warnings.push(Diagnostic::whole_file(
                Severity::Warning,
                self.sources.file,
                format!(
                    "{} more distinct warnings not shown (the first {MAX_WARNINGS} are)",
                    self.warnings_omitted
                ),
            ));
        }
        if self.errors_omitted > 0 {
            self.errors.push(Diagnostic::whole_file(
                Severity::Error,
                self.sources.file,
                format!(
                    "{} more errors not shown (the first {MAX_ERRORS} are); fix these and check again",
                    self.errors_omitted
                ),
            ));
        }
        let has_errors = !self.errors.is_empty();
        let mut diagnostics = self.errors;
        diagnostics.extend(self.warnings);
        // Line order, whole-file notes last; errors before warnings on a line.
        diagnostics.sort_by_key(|d| (d.line == 0, d.line, d.severity, d.col));
        crate::Report {
            config: (!has_errors).then_some(self.config),
            diagnostics,
        }
    }
}

/// Errors kept before the rest are only counted.
pub(crate) const MAX_ERRORS: usize = 100;
/// Distinct warnings kept before the rest are only counted.
const MAX_WARNINGS: usize = 100;
/// Lines named in a collapsed warning.
const SHOWN_REPEATS: usize = 5;

/// Parse a whole configuration text.
pub(crate) fn parse(text: &str, file: &str, opts: &ParseOptions) -> crate::Report {
    let lines = crate::lexer::source_lines(text);
    let mut builder = Builder::new(
        Sources {
            file,
            lines: &lines,
        },
        opts,
    );
    let mut i = 0;
    let mut in_crypto = false;
    while i < lines.len() {
        let Some(line) = crate::lexer::lex_line(i + 1, lines[i]) else {
            i += 1;
            continue;
        };
        if let Some(last) = builder.opaque_block(&line, &lines, i, in_crypto) {
            i = last + 1;
            continue;
        }
        if line.indent == 0 {
            in_crypto = line.tokens[0].text.eq_ignore_ascii_case("crypto");
        }
        builder.process(&line);
        i += 1;
    }
    let mut report = builder.finish();
    if let Some(config) = &mut report.config {
        config.source = crate::diag::Source::new(file, text);
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_warnings_collapse_into_one_with_a_count() {
        let lines: Vec<&str> = vec!["interface e1/1"; 9];
        let mut b = Builder::new(
            Sources {
                file: "lab.conf",
                lines: &lines,
            },
            &ParseOptions::default(),
        );
        b.saw_command = true;
        for line in 1..=8 {
            b.line = line;
            b.warn(1, "same", Some("hint".into()));
        }
        b.line = 9;
        b.warn(1, "other", None);
        let r = b.finish();
        let got: Vec<(usize, &str)> = r
            .diagnostics
            .iter()
            .map(|d| (d.line, d.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (1, "same (8 times: lines 1, 2, 3, 4, 5, ...)"),
                (9, "other")
            ]
        );
    }
}
