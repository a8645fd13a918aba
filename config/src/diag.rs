//! Diagnostics: where in a file something is wrong, what, and how to fix it.
//!
//! A [`Diagnostic`] renders like a compiler message, with the offending
//! source line and a caret under the token at fault:
//!
//! ```text
//! lab.conf:12:14: error: invalid IPv4 prefix length 33
//!    12 |   ip address 10.0.0.1/33
//!       |              ^^^^^^^^^^^
//!    = hint: prefix length must be 0-32
//! ```

use std::fmt;
use std::sync::Arc;

/// How bad a [`Diagnostic`] is: errors reject the file, warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// The configuration cannot be used as written.
    Error,
    /// The configuration loads, but something in it was skipped or looks wrong.
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

/// One message about a configuration file, precise to the line and column.
///
/// `line` and `col` are 1-based; `line == 0` means the message concerns the
/// file as a whole (it could not be read, or a summary), and `col == 0` that
/// it concerns a whole line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file name as given to the parser.
    pub file: String,
    /// 1-based line number, 0 for the whole file.
    pub line: usize,
    /// 1-based column (in characters) of the offending token, 0 for none.
    pub col: usize,
    /// The text of the offending line, without its line terminator.
    pub source_line: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is something useful to say.
    pub hint: Option<String>,
}

impl Diagnostic {
    /// Build a message about a file as a whole (line 0), e.g. one that cannot be read.
    pub fn whole_file(severity: Severity, file: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            file: file.to_owned(),
            line: 0,
            col: 0,
            source_line: String::new(),
            message: message.into(),
            hint: None,
        }
    }

    /// Whether this diagnostic rejects the configuration.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Number of characters the caret covers: the token starting at `col`.
    fn caret_width(&self) -> usize {
        let width = self
            .source_line
            .chars()
            .skip(self.col.saturating_sub(1))
            .take_while(|c| !c.is_whitespace() && *c != ',')
            .count();
        width.max(1)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.line, self.col) {
            (0, _) => write!(f, "{}: ", self.file)?,
            (line, 0) => write!(f, "{}:{}: ", self.file, line)?,
            (line, col) => write!(f, "{}:{}:{}: ", self.file, line, col)?,
        }
        write!(f, "{}: {}", self.severity, self.message)?;
        if self.line > 0 {
            let number = self.line.to_string();
            let gutter = " ".repeat(3 + number.len());
            write!(f, "\n   {number} | {}", self.source_line)?;
            if self.col > 0 {
                // Keep tabs so the caret lines up under tab-indented text.
                let lead: String = self
                    .source_line
                    .chars()
                    .take(self.col - 1)
                    .map(|c| if c == '\t' { '\t' } else { ' ' })
                    .collect();
                let pad = " ".repeat((self.col - 1).saturating_sub(lead.chars().count()));
                let carets = "^".repeat(self.caret_width());
                write!(f, "\n{gutter} | {lead}{pad}{carets}")?;
            }
        }
        if let Some(hint) = &self.hint {
            write!(f, "\n   = hint: {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// Why a single value (an address, a prefix, an interface name) did not parse.
///
/// Returned by the `FromStr` impls of the model's value types; the parser
/// turns it into a [`Diagnostic`] pointing at the token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueError {
    message: String,
    hint: Option<String>,
}

impl ValueError {
    /// Build an error from a message and an optional hint.
    pub(crate) fn new(message: impl Into<String>, hint: Option<String>) -> Self {
        ValueError {
            message: message.into(),
            hint,
        }
    }

    /// What is wrong with the value.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// How to write the value correctly, if there is something to say.
    pub fn hint(&self) -> Option<&str> {
        self.hint.as_deref()
    }
}

impl fmt::Display for ValueError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, " ({hint})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValueError {}

/// The file a [`Config`](crate::Config) was parsed from: its name and text,
/// kept with the model so that later stages (compiling it for the
/// dataplane) report problems the way the parser does, quoting the line.
///
/// It is provenance, not configuration: every `Source` equals every other,
/// so two models that say the same thing are equal wherever they came from,
/// and it is not serialized.
#[derive(Clone, Default)]
pub struct Source(Option<Arc<(String, String)>>);

impl Source {
    /// The source of a model parsed from `text`, named `file` in diagnostics.
    pub fn new(file: &str, text: &str) -> Self {
        Source(Some(Arc::new((file.to_owned(), text.to_owned()))))
    }

    /// The file name, or `configuration` for a model built in code.
    pub fn file(&self) -> &str {
        self.0.as_ref().map_or("configuration", |s| s.0.as_str())
    }

    /// A diagnostic at 1-based `line` and `col` (0: the whole line), quoting
    /// the line when the text is known.
    pub fn diagnostic(
        &self,
        severity: Severity,
        line: usize,
        col: usize,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> Diagnostic {
        let source_line = self
            .0
            .as_ref()
            .and_then(|s| {
                let text = s.1.strip_prefix('\u{feff}').unwrap_or(&s.1);
                text.lines().nth(line.checked_sub(1)?)
            })
            .map_or_else(String::new, |l| l.trim_end_matches('\r').to_owned());
        Diagnostic {
            severity,
            file: self.file().to_owned(),
            line,
            col,
            source_line,
            message: message.into(),
            hint,
        }
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Source({:?})", self.file())
    }
}

/// Provenance does not take part in equality (see [`Source`]).
impl PartialEq for Source {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Source {}

/// A 1-based line and column in the file being parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub(crate) struct Pos {
    /// 1-based line (0: unknown).
    pub line: usize,
    /// 1-based column (0: the whole line).
    pub col: usize,
}

impl Pos {
    /// A position.
    pub fn new(line: usize, col: usize) -> Self {
        Pos { line, col }
    }
}

/// The text of a file being parsed, for building diagnostics that quote it.
pub(crate) struct Sources<'a> {
    /// The file name as given to the parser.
    pub file: &'a str,
    /// Its lines, without terminators; line `n` is `lines[n - 1]`.
    pub lines: &'a [&'a str],
}

impl Sources<'_> {
    /// A diagnostic at `pos`, quoting its line.
    pub fn diag(
        &self,
        severity: Severity,
        pos: Pos,
        message: String,
        hint: Option<String>,
    ) -> Diagnostic {
        let source_line = pos
            .line
            .checked_sub(1)
            .and_then(|i| self.lines.get(i))
            .map_or_else(String::new, |l| (*l).to_owned());
        Diagnostic {
            severity,
            file: self.file.to_owned(),
            line: pos.line,
            col: pos.col,
            source_line,
            message,
            hint,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(line: usize, col: usize, src: &str) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            file: "lab.conf".into(),
            line,
            col,
            source_line: src.into(),
            message: "invalid IPv4 prefix length 33".into(),
            hint: Some("prefix length must be 0-32".into()),
        }
    }

    #[test]
    fn renders_like_the_documented_example() {
        let d = diag(12, 14, "  ip address 10.0.0.1/33");
        let want = "lab.conf:12:14: error: invalid IPv4 prefix length 33\n   \
                    12 |   ip address 10.0.0.1/33\n      \
                    |              ^^^^^^^^^^^\n   \
                    = hint: prefix length must be 0-32";
        assert_eq!(d.to_string(), want);
    }

    #[test]
    fn caret_stops_at_a_comma_and_is_at_least_one_wide() {
        let d = diag(3, 11, "interface e1/1,e1/x");
        assert_eq!(d.caret_width(), 4);
        let d = diag(3, 40, "mtu");
        assert_eq!(d.caret_width(), 1);
        assert!(d.to_string().contains("\n     | "));
    }

    #[test]
    fn tabs_are_kept_in_the_caret_line() {
        let d = diag(1, 2, "\tmtu 1");
        assert!(d.to_string().contains("\n     | \t^^^"), "{d}");
    }

    #[test]
    fn whole_file_messages_have_no_source_block() {
        let d = Diagnostic::whole_file(Severity::Warning, "x.conf", "skipped 3 commands");
        assert_eq!(d.to_string(), "x.conf: warning: skipped 3 commands");
        assert!(!d.is_error());
    }

    #[test]
    fn a_source_quotes_its_line_and_is_equal_to_any_other() {
        let s = Source::new("lab.conf", "hostname a\r\nip route 10.0.0.0/8 e1/9\n");
        let d = s.diagnostic(Severity::Error, 2, 21, "no e1/9", Some("add it".into()));
        assert_eq!(
            d.to_string(),
            "lab.conf:2:21: error: no e1/9\n   2 | ip route 10.0.0.0/8 e1/9\n     \
             |                     ^^^^\n   = hint: add it"
        );
        assert_eq!(s, Source::default());
        let none = Source::default().diagnostic(Severity::Error, 3, 0, "x", None);
        assert_eq!(none.to_string(), "configuration:3: error: x\n   3 | ");
    }

    #[test]
    fn whole_line_messages_have_no_caret() {
        let mut d = diag(7, 0, "interface e1/1");
        d.hint = None;
        assert_eq!(
            d.to_string(),
            "lab.conf:7: error: invalid IPv4 prefix length 33\n   7 | interface e1/1"
        );
    }
}
