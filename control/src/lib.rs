//! railyard's control plane: configuration compilation, replay and demo
//! drivers, the live runtime wiring, the management socket and show output.
//!
//! The `railyard` binary is a thin command-line layer over this library, so
//! the end-to-end tests and benchmarks drive exactly what users run.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod compile;
pub mod demo;
pub mod lab;
pub mod lacp;
pub mod live;
pub mod lldp;
pub mod metrics;
pub mod mgmt;
pub mod monitor;
pub mod natural;
mod plotting;
pub mod queue_ring;
pub mod rank;
pub mod replay;
pub mod replay_plot;
pub mod routing;
pub mod send;
pub mod show;
pub mod sim;
pub mod traffic;
pub mod units;
pub mod wait;

/// A configuration file, parsed and compiled.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The parsed configuration.
    pub config: railyard_config::Config,
    /// What it compiles to.
    pub compiled: compile::Compiled,
    /// Parser and compiler warnings, rendered for a terminal.
    pub warnings: Vec<String>,
}

/// Reads, parses and compiles a configuration file.
///
/// # Errors
/// Every diagnostic, rendered for a terminal: the errors and, so a user
/// fixing them sees what else will be skipped, the warnings with them.
pub fn load_config(path: &std::path::Path, strict: bool) -> Result<Loaded, String> {
    let report = railyard_config::check_file(path, &railyard_config::ParseOptions { strict });
    if report.has_errors() {
        return Err(format_diagnostics(&report.diagnostics));
    }
    let (config, parse_warnings) = match report.into_result() {
        Ok(p) => (p.config, p.warnings),
        Err(d) => return Err(format_diagnostics(&d)),
    };
    let compiled = compile::compile(&config).map_err(|d| {
        let mut all = d;
        all.extend(parse_warnings.iter().cloned());
        format_diagnostics(&all)
    })?;
    let mut warnings: Vec<String> = parse_warnings.iter().map(|d| d.to_string()).collect();
    warnings.extend(
        collapse(&compiled.warnings)
            .iter()
            .map(|w| format!("warning: {w}")),
    );
    Ok(Loaded {
        config,
        compiled,
        warnings,
    })
}

/// Identical messages as one, the repeats counted (`... (3 times)`), in
/// first-seen order.
pub fn collapse(messages: &[String]) -> Vec<String> {
    let mut seen: Vec<(&String, usize)> = Vec::new();
    let mut index: std::collections::HashMap<&String, usize> = std::collections::HashMap::new();
    for m in messages {
        match index.get(m) {
            Some(&i) => seen[i].1 += 1,
            None => {
                index.insert(m, seen.len());
                seen.push((m, 1));
            }
        }
    }
    seen.into_iter()
        .map(|(m, n)| {
            if n > 1 {
                format!("{m} ({n} times)")
            } else {
                m.clone()
            }
        })
        .collect()
}

/// `railyard check --json`: whether the file is valid, and a JSON document
/// with exactly the diagnostics `railyard check` prints (rendered and
/// structured: parser errors and warnings, compile errors, compile and
/// route warnings), the parsed configuration and every interface's
/// resolved QoS.
pub fn check_json(path: &std::path::Path, strict: bool) -> (bool, String) {
    let diag_json = |d: &railyard_config::Diagnostic| {
        serde_json::json!({
            "severity": if d.is_error() { "error" } else { "warning" },
            "file": d.file, "line": d.line, "col": d.col,
            "message": d.message, "hint": d.hint, "text": d.to_string(),
        })
    };
    let report = railyard_config::check_file(path, &railyard_config::ParseOptions { strict });
    let diagnostics: Vec<serde_json::Value> = report.diagnostics.iter().map(diag_json).collect();
    let Some(config) = report.config else {
        let v = serde_json::json!({
            "valid": false,
            "diagnostics": diagnostics,
        });
        return (false, serde_json::to_string_pretty(&v).unwrap_or_default());
    };
    let effective: serde_json::Map<String, serde_json::Value> = config
        .interfaces
        .iter()
        .map(|i| {
            (
                i.name.to_string(),
                serde_json::to_value(config.effective_qos_of(i)).unwrap_or_default(),
            )
        })
        .collect();
    let (compile_errors, compile_warnings) = match compile::compile(&config) {
        Ok(c) => {
            let mut w = collapse(&c.warnings);
            w.extend(route_warnings(&c.model));
            (Vec::new(), w)
        }
        Err(e) => (e, Vec::new()),
    };
    let doc = serde_json::json!({
        "valid": compile_errors.is_empty(),
        "diagnostics": diagnostics,
        "compile_errors": compile_errors.iter().map(diag_json).collect::<Vec<_>>(),
        "compile_warnings": compile_warnings,
        "config": config,
        "effective_qos": effective,
    });
    let ok = doc["valid"] == true;
    (ok, serde_json::to_string_pretty(&doc).unwrap_or_default())
}

/// What building the FIB says about the static routes, as `railyard check`
/// prints it (`route PREFIX: message`).
pub fn route_warnings(model: &railyard_dataplane::model::SwitchModel) -> Vec<String> {
    let (_, warnings) = railyard_dataplane::fib::Fib::build(model);
    warnings
        .into_iter()
        .map(|w| format!("route {}: {}", w.route, w.message))
        .collect()
}

/// Renders configuration diagnostics for a terminal, one after another.
pub fn format_diagnostics(diags: &[railyard_config::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
