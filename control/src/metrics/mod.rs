//! `railyard run --metrics ADDR:PORT`: the switch's counters for
//! Prometheus.
//!
//! [`render()`] turns the snapshot the management socket's `stats` request
//! returns into text exposition format; [`serve`] answers scrapes with it.
//! A scrape reads counters the workers have already published, as `show`
//! does, so it never waits on a worker's fast path.

pub mod render;
pub mod serve;

pub use render::{exported_names, render, Scrape};
pub use serve::{listen, MetricsServer};

/// The Grafana dashboard shipped in `contrib/grafana/railyard.json`.
pub const DASHBOARD: &str = include_str!("../../../contrib/grafana/railyard.json");

/// Every PromQL expression of a Grafana dashboard: the panels' queries
/// and the template variables' queries.
///
/// # Errors
/// When the dashboard is not JSON.
pub fn dashboard_queries(dashboard: &str) -> Result<Vec<String>, String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::Object(o) => {
                for (k, x) in o {
                    match (k.as_str(), x) {
                        ("expr" | "definition", serde_json::Value::String(s)) => {
                            out.push(s.clone())
                        }
                        _ => walk(x, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let v: serde_json::Value = serde_json::from_str(dashboard).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    walk(&v, &mut out);
    Ok(out)
}

/// The `railyard_…` metric names a PromQL expression uses.
pub fn metric_names(expr: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = expr;
    while let Some(i) = rest.find("railyard_") {
        let tail = &rest[i..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.push(&tail[..end]);
        rest = &tail[end..];
    }
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dashboard_queries_only_metrics_railyard_exports() {
        let exported = exported_names();
        let queries = dashboard_queries(DASHBOARD).unwrap();
        let mut used = std::collections::BTreeSet::new();
        for q in &queries {
            for name in metric_names(q) {
                assert!(
                    exported.iter().any(|e| e == name),
                    "the dashboard queries {name}, which railyard does not export: {q}"
                );
                used.insert(name);
            }
        }
        // It shows what it is for: queues, ECN, PFC, load balancing.
        for needed in [
            "railyard_queue_depth_bytes",
            "railyard_queue_wred_drops_total",
            "railyard_queue_tail_drops_total",
            "railyard_queue_ecn_marked_total",
            "railyard_pfc_tx_pause_total",
            "railyard_pfc_rx_pause_total",
            "railyard_lb_member_bytes_total",
        ] {
            assert!(used.contains(needed), "no panel shows {needed}");
        }
        // Per interface, through a template variable.
        let v: serde_json::Value = serde_json::from_str(DASHBOARD).unwrap();
        let vars = v["templating"]["list"].as_array().unwrap();
        assert!(vars.iter().any(|x| x["name"] == "interface"));
        assert!(queries
            .iter()
            .any(|q| q.contains("interface=~\"$interface\"")));
    }

    #[test]
    fn metric_names_are_found_in_promql() {
        assert_eq!(
            metric_names("sum by (le) (rate(railyard_a_bucket{x=\"railyard\"}[1m])) / railyard_b"),
            vec!["railyard_a_bucket", "railyard_b"]
        );
    }
}

#[cfg(test)]
mod doc_tests {
    use super::*;

    /// The names the book's tables document: each row's first name, and
    /// the `_suffix` shorthands after it completed from that name's
    /// prefix (`railyard_queue_tx_packets_total`, `_tx_bytes_total`).
    fn documented(page: &str) -> std::collections::BTreeSet<String> {
        let mut names = std::collections::BTreeSet::new();
        for row in page.lines().filter(|l| l.starts_with("| `railyard_")) {
            let cell = row.split('|').nth(1).unwrap_or_default();
            let ticks: Vec<&str> = cell.split('`').skip(1).step_by(2).collect();
            let Some(first) = ticks.first() else { continue };
            names.insert(first.to_string());
            for short in ticks.iter().skip(1).filter(|t| t.starts_with('_')) {
                for (k, _) in first.match_indices('_') {
                    names.insert(format!("{}{short}", &first[..k]));
                }
            }
        }
        names
    }

    #[test]
    fn the_book_documents_every_family() {
        let page = include_str!("../../../docs/src/watching.md");
        let documented = documented(page);
        let text = render(&Scrape {
            stats: &railyard_dataplane::stats::SwitchStats::default(),
            lldp: None,
            kernel_routes: None,
            control_socket: None,
        });
        for family in text.lines().filter_map(|l| l.strip_prefix("# TYPE ")) {
            let name = family.split(' ').next().unwrap_or_default();
            assert!(
                documented.contains(name),
                "docs/src/watching.md does not document {name}"
            );
        }
    }
}
