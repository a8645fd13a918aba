//! railyard's control plane: configuration compilation, replay and demo
//! drivers, the live runtime wiring, the management socket and show output.
//!
//! The `railyard` binary is a thin command-line layer over this library, so
//! the end-to-end tests and benchmarks drive exactly what users run.

#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod compile;
pub mod demo;
pub mod live;
pub mod mgmt;
pub mod replay;
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
    let compiled = compile::compile(&parsed.config).map_err(|e| e.join("\n"))?;
    let mut warnings: Vec<String> = parsed.warnings.iter().map(|d| d.to_string()).collect();
    warnings.extend(compiled.warnings.iter().map(|w| format!("warning: {w}")));
    Ok(Loaded {
        config: parsed.config,
        compiled,
        warnings,
    })
}

/// Renders configuration diagnostics for a terminal, one after another.
pub fn format_diagnostics(diags: &[railyard_config::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
