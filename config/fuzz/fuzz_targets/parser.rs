//! Fuzz the configuration parser: any text, strict or not, must parse or
//! fail with diagnostics that quote their line, never panic; whatever
//! parses must print to text that parses back to an equal model, and the
//! resolved QoS of every interface must be computable.

#![no_main]

use libfuzzer_sys::fuzz_target;
use railyard_config::{parse_str, Diagnostic, ParseOptions};

/// Every diagnostic names a real line and quotes it.
fn check(text: &str, diags: &[Diagnostic]) {
    let lines: Vec<&str> = text
        .strip_prefix('\u{feff}')
        .unwrap_or(text)
        .lines()
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect();
    for d in diags {
        assert!(d.line <= lines.len(), "line {} out of range", d.line);
        if d.line > 0 {
            assert_eq!(d.source_line, lines[d.line - 1]);
        }
        let _ = d.to_string();
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for strict in [false, true] {
        match parse_str(text, "fuzz.conf", &ParseOptions { strict }) {
            Ok(parsed) => {
                check(text, &parsed.warnings);
                let printed = parsed.config.to_string();
                let again = match parse_str(&printed, "printed.conf", &ParseOptions::default()) {
                    Ok(p) => p.config,
                    Err(es) => panic!(
                        "printed text does not parse:\n{printed}\n{}",
                        es.iter().map(|d| format!("{d}\n")).collect::<String>()
                    ),
                };
                assert_eq!(again, parsed.config, "printed:\n{printed}");
                assert_eq!(again.to_string(), printed, "printing is not stable");
                for iface in &parsed.config.interfaces {
                    let eff = parsed.config.effective_qos(&iface.name);
                    let _ = eff.classifier.groups();
                }
            }
            Err(es) => {
                assert!(!es.is_empty());
                check(text, &es);
            }
        }
    }
});
