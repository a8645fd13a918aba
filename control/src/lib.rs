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
pub mod live;
pub mod lldp;
pub mod mgmt;
pub mod natural;
pub mod replay;
pub mod send;
pub mod show;
pub mod traffic;

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
/// The diagnostics, rendered for a terminal.
pub fn load_config(path: &std::path::Path, strict: bool) -> Result<Loaded, String> {
    let parsed = railyard_config::parse_file(path, &railyard_config::ParseOptions { strict })
        .map_err(|d| format_diagnostics(&d))?;
    let compiled = compile::compile(&parsed.config).map_err(|d| format_diagnostics(&d))?;
    let mut warnings: Vec<String> = parsed.warnings.iter().map(|d| d.to_string()).collect();
    warnings.extend(compiled.warnings.iter().map(|w| format!("warning: {w}")));
    Ok(Loaded {
        config: parsed.config,
        compiled,
        warnings,
    })
}

/// `railyard check --json`: whether the file is valid, and a JSON document
/// with its diagnostics (rendered and structured), the parsed configuration
/// and every interface's resolved QoS.
pub fn check_json(path: &std::path::Path, strict: bool) -> (bool, String) {
    let diag_json = |d: &railyard_config::Diagnostic| {
        serde_json::json!({
            "severity": if d.is_error() { "error" } else { "warning" },
            "file": d.file, "line": d.line, "col": d.col,
            "message": d.message, "hint": d.hint, "text": d.to_string(),
        })
    };
    let doc = match railyard_config::parse_file(path, &railyard_config::ParseOptions { strict }) {
        Err(diags) => {
            let v = serde_json::json!({
                "valid": false,
                "diagnostics": diags.iter().map(diag_json).collect::<Vec<_>>(),
            });
            return (false, serde_json::to_string_pretty(&v).unwrap_or_default());
        }
        Ok(parsed) => {
            let effective: serde_json::Map<String, serde_json::Value> = parsed
                .config
                .interfaces
                .iter()
                .map(|i| {
                    (
                        i.name.to_string(),
                        serde_json::to_value(parsed.config.effective_qos(&i.name))
                            .unwrap_or_default(),
                    )
                })
                .collect();
            let (compile_errors, compile_warnings) = match compile::compile(&parsed.config) {
                Ok(c) => (Vec::new(), c.warnings),
                Err(e) => (e, Vec::new()),
            };
            serde_json::json!({
                "valid": compile_errors.is_empty(),
                "diagnostics": parsed.warnings.iter().map(diag_json).collect::<Vec<_>>(),
                "compile_errors": compile_errors.iter().map(diag_json).collect::<Vec<_>>(),
                "compile_warnings": compile_warnings,
                "config": parsed.config,
                "effective_qos": effective,
            })
        }
    };
    let ok = doc["valid"] == true;
    (ok, serde_json::to_string_pretty(&doc).unwrap_or_default())
}

/// Renders configuration diagnostics for a terminal, one after another.
pub fn format_diagnostics(diags: &[railyard_config::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
