//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different subset

use railyard_config::{parse_str, Diagnostic, ParseOptions, Parsed, Severity};

/// Parse with default options as `lab.conf`.
pub fn parse(text: &str) -> Result<Parsed, Vec<Diagnostic>> {
    parse_str(text, "lab.conf", &ParseOptions::default())
}

/// Parse in strict mode as `lab.conf`.
pub fn parse_strict(text: &str) -> Result<Parsed, Vec<Diagnostic>> {
    parse_str(text, "lab.conf", &ParseOptions { strict: true })
}

/// Render diagnostics for assertion messages.
pub fn render(ds: &[Diagnostic]) -> String {
    ds.iter().map(|d| format!("{d}\n")).collect()
}

/// Parse text that must load.
pub fn ok(text: &str) -> Parsed {
    match parse(text) {
        Ok(p) => p,
        Err(es) => panic!("unexpected errors:\n{}", render(&es)),
    }
}

/// Parse text that must load without any warning.
pub fn clean(text: &str) -> Parsed {
    let p = ok(text);
    assert!(
        p.warnings.is_empty(),
        "unexpected warnings:\n{}",
        render(&p.warnings)
    );
    p
}

/// Parse text that must fail; returns its errors.
pub fn errors(text: &str) -> Vec<Diagnostic> {
    match parse(text) {
        Ok(p) => panic!("expected errors, got {:#?}", p.config),
        Err(es) => {
            assert!(es.iter().all(|d| d.severity == Severity::Error));
            es
        }
    }
}

/// Parse text that must fail with exactly one error.
pub fn one_error(text: &str) -> Diagnostic {
    let es = errors(text);
    assert_eq!(es.len(), 1, "expected one error:\n{}", render(&es));
    es.into_iter().next().unwrap()
}

/// Line, column, message and hint of a diagnostic, for compact assertions.
pub fn summary(d: &Diagnostic) -> (usize, usize, &str, Option<&str>) {
    (d.line, d.col, d.message.as_str(), d.hint.as_deref())
}

/// (line, col, message) of every warning except the final summary.
pub fn warnings(p: &Parsed) -> Vec<(usize, usize, String)> {
    p.warnings
        .iter()
        .filter(|d| d.line > 0)
        .map(|d| (d.line, d.col, d.message.clone()))
        .collect()
}

/// The skipped-commands summary warning, if any.
pub fn skip_summary(p: &Parsed) -> Option<&str> {
    p.warnings
        .iter()
        .find(|d| d.line == 0)
        .map(|d| d.message.as_str())
}
