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

/// Renders configuration diagnostics for a terminal, one after another.
pub fn format_diagnostics(diags: &[railyard_config::Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}
