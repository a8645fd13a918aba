//! `railyard sim --csv FILE`: one row per flow, for a spreadsheet or
//! pandas; with several runs (`--lb ecmp,per-packet`) each row says which.

use std::io::{self, Write};

use super::fct::FlowFct;
use super::SimReport;

/// One run's flows and what tells it from the others.
pub struct CsvRun<'a> {
    /// The workload spec.
    pub workload: &'a str,
    /// The load-balancing mode (`configured` without `--lb`).
    pub lb: &'a str,
    /// What it reported.
    pub report: &'a SimReport,
}

/// The columns, in order (`workload,lb,` first with several runs).
pub const COLUMNS: &str = "src,dst,bytes,start_us,end_us,fct_us,ideal_us,slowdown";

/// Writes the header and a row per flow of every run; empty fields where
/// a flow did not finish or has no ideal.
///
/// # Errors
///
/// Errors of `out`.
pub fn write(out: &mut dyn Write, runs: &[CsvRun<'_>]) -> io::Result<()> {
    let several = runs.len() > 1;
    if several {
        write!(out, "workload,lb,")?;
    }
    writeln!(out, "{COLUMNS}")?;
    for run in runs {
        for f in &run.report.flow_fct {
            if several {
                write!(out, "{},{},", field(run.workload), field(run.lb))?;
            }
            row(out, f)?;
        }
    }
    Ok(())
}

/// One flow's row.
fn row(out: &mut dyn Write, f: &FlowFct) -> io::Result<()> {
    let opt =
        |v: Option<f64>, decimals: usize| v.map_or(String::new(), |x| format!("{x:.decimals$}"));
    writeln!(
        out,
        "{},{},{},{:.3},{},{},{},{}",
        field(&f.src),
        field(&f.dst),
        f.bytes,
        f.start_us,
        opt(f.end_us, 3),
        opt(f.fct_us, 3),
        opt(f.ideal_us, 3),
        opt(f.slowdown, 4)
    )
}

/// A text field, quoted when it holds a comma, a quote or a line break
/// (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_with_commas_or_quotes_are_quoted() {
        assert_eq!(field("h1.eth0"), "h1.eth0");
        assert_eq!(field("incast:4K:h1,h2:h3"), "\"incast:4K:h1,h2:h3\"");
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn an_unfinished_flow_leaves_its_times_empty() {
        let f = FlowFct {
            src: "h1.eth0".into(),
            dst: "h2.eth0".into(),
            bytes: 4096,
            start_us: 1.5,
            end_us: None,
            fct_us: None,
            ideal_us: Some(2.25),
            slowdown: None,
        };
        let mut out = Vec::new();
        row(&mut out, &f).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "h1.eth0,h2.eth0,4096,1.500,,,2.250,\n"
        );
    }
}
