//! Lines to tokens: splits a configuration into significant lines of
//! whitespace-separated tokens, each with its 1-based line and column.
//!
//! Comment lines (first non-blank character `!` or `#`) and blank lines are
//! dropped here, so the parser only sees commands. A `\r` before the line
//! feed and a leading byte-order mark are tolerated. Tokens keep their byte
//! offset so commands that take free text (`description ...`) or their own
//! sub-syntax (`interface e1/1 - 4, e1/8`) can read the raw rest of the line.

/// One whitespace-separated word of a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Token<'a> {
    /// The word itself.
    pub text: &'a str,
    /// 1-based column, counted in characters.
    pub col: usize,
    /// Byte offset of the word in its line.
    pub offset: usize,
}

/// A significant (non-blank, non-comment) line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Line<'a> {
    /// 1-based line number.
    pub number: usize,
    /// Width of the leading whitespace (a tab advances to the next multiple of 8).
    pub indent: usize,
    /// The whole line without its terminator.
    pub raw: &'a str,
    /// At least one token.
    pub tokens: Vec<Token<'a>>,
}

impl<'a> Line<'a> {
    /// The raw text from token `index` to the end of the line, trailing blanks removed.
    pub fn rest_from(&self, index: usize) -> Option<&'a str> {
        let tok = self.tokens.get(index)?;
        Some(self.raw[tok.offset..].trim_end())
    }

    /// The column just past the last token: where a missing argument would go.
    pub fn end_col(&self) -> usize {
        self.raw.trim_end().chars().count() + 2
    }
}

/// Split a text into lines (terminators and a leading byte-order mark removed).
pub(crate) fn source_lines(text: &str) -> Vec<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    text.lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// Whether a line carries no command: blank or a comment.
fn is_insignificant(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty() || t.starts_with('!') || t.starts_with('#')
}

/// Tokenize one line; `None` for blank and comment lines.
pub(crate) fn lex_line(number: usize, raw: &str) -> Option<Line<'_>> {
    if is_insignificant(raw) {
        return None;
    }
    let mut indent = 0;
    for c in raw.chars() {
        match c {
            '\t' => indent = (indent / 8 + 1) * 8,
            c if c.is_whitespace() => indent += 1,
            _ => break,
        }
    }
    let mut tokens = Vec::new();
    let mut start: Option<(usize, usize)> = None;
    let mut col = 0;
    for (offset, c) in raw.char_indices() {
        col += 1;
        if c.is_whitespace() {
            if let Some((s, scol)) = start.take() {
                tokens.push(Token {
                    text: &raw[s..offset],
                    col: scol,
                    offset: s,
                });
            }
        } else if start.is_none() {
            start = Some((offset, col));
        }
    }
    if let Some((s, scol)) = start {
        tokens.push(Token {
            text: &raw[s..],
            col: scol,
            offset: s,
        });
    }
    Some(Line {
        number,
        indent,
        raw,
        tokens,
    })
}

/// Tokenize every significant line of `sources` (as made by [`source_lines`]).
#[cfg(test)]
pub(crate) fn lex<'a>(sources: &[&'a str]) -> Vec<Line<'a>> {
    sources
        .iter()
        .enumerate()
        .filter_map(|(i, raw)| lex_line(i + 1, raw))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words<'a>(l: &Line<'a>) -> Vec<(&'a str, usize)> {
        l.tokens.iter().map(|t| (t.text, t.col)).collect()
    }

    #[test]
    fn tokens_carry_one_based_columns() {
        let l = lex_line(4, "  ip address 10.0.0.1/24").unwrap();
        assert_eq!(l.number, 4);
        assert_eq!(l.indent, 2);
        assert_eq!(
            words(&l),
            vec![("ip", 3), ("address", 6), ("10.0.0.1/24", 14)]
        );
    }

    #[test]
    fn columns_count_characters_not_bytes() {
        let l = lex_line(1, "description café bar").unwrap();
        assert_eq!(words(&l)[2], ("bar", 18));
        assert_eq!(l.rest_from(1), Some("café bar"));
    }

    #[test]
    fn comments_and_blank_lines_are_dropped() {
        let src = source_lines("!Command: show running-config\n\n   \n  # note\nhostname a\n");
        let lines = lex(&src);
        assert_eq!(lines.len(), 1);
        assert_eq!(lines[0].number, 5);
        assert_eq!(lines[0].tokens[0].text, "hostname");
    }

    #[test]
    fn a_bang_inside_a_line_is_not_a_comment() {
        let l = lex_line(1, "description up! now").unwrap();
        assert_eq!(l.tokens.len(), 3);
    }

    #[test]
    fn crlf_and_bom_are_tolerated() {
        let src = source_lines("\u{feff}hostname a\r\nfeature lldp\r\n");
        assert_eq!(src, vec!["hostname a", "feature lldp"]);
    }

    #[test]
    fn tabs_indent_to_the_next_stop_of_eight() {
        assert_eq!(lex_line(1, "\tmtu 9216").unwrap().indent, 8);
        assert_eq!(lex_line(1, "  \tmtu 9216").unwrap().indent, 8);
        assert_eq!(lex_line(1, "mtu 9216").unwrap().indent, 0);
    }

    #[test]
    fn rest_and_end_column() {
        let l = lex_line(1, "interface e1/1 - 4, e1/8   ").unwrap();
        assert_eq!(l.rest_from(1), Some("e1/1 - 4, e1/8"));
        assert_eq!(l.rest_from(9), None);
        assert_eq!(l.end_col(), 26);
    }
}
