//! `railyard run --metrics ADDR:PORT`: the switch's counters for
//! Prometheus.
//!
//! [`render`] turns the snapshot the management socket's `stats` request
//! returns into text exposition format; [`serve`] answers scrapes with it.
//! A scrape reads counters the workers have already published, as `show`
//! does, so it never waits on a worker's fast path.

pub mod render;
pub mod serve;

pub use render::{exported_names, render, Scrape};
pub use serve::{listen, MetricsServer};
