//! Quantities written for people, shared by the show commands and the
//! compiler's warnings (which must not depend on the show commands).

/// A duration in nanoseconds, in the unit that keeps it short.
pub fn duration(ns: u64) -> String {
    match ns {
        0..=9_999 => format!("{ns} ns"),
        10_000..=9_999_999 => format!("{:.1} us", ns as f64 / 1e3),
        _ => format!("{:.1} ms", ns as f64 / 1e6),
    }
}
