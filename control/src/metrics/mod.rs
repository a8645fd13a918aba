//! `railyard run --metrics ADDR:PORT`: the switch's counters for
//! Prometheus.
//!
//! [`render`] turns the snapshot the management socket's `stats` request
//! returns into text exposition format.
//! A scrape reads counters the workers have already published, as `show`
//! does, so it never waits on a worker's fast path.

pub mod render;

pub use render::{exported_names, render, Scrape};
