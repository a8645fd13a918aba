//! Checks of `monitor session`: every port a session names is configured.

use super::{At, MonitorAt, SourceMap};
use crate::diag::{Diagnostic, Pos, Severity, Sources};
use crate::model::Config;
use crate::monitor::MonitorDestination;

/// Reports sources and destinations that name no configured interface
/// (a SPAN port must be one the switch has, or the copies go nowhere).
pub(super) fn check(
    config: &Config,
    map: &SourceMap,
    sources: &Sources<'_>,
    out: &mut Vec<Diagnostic>,
) {
    let known = |name| config.interface_by_name(name).is_some();
    let hint = |name| {
        Some(format!(
            "configure it first (`interface {name}` with a `bind`), or name one of the switch's ports"
        ))
    };
    for s in &config.monitor_sessions {
        for (name, _) in s.sources.iter().filter(|(n, _)| !known(n)) {
            let pos = map
                .at
                .get(&At::Monitor(s.id, MonitorAt::Source(*name)))
                .copied()
                .unwrap_or(Pos::new(0, 0));
            out.push(sources.diag(
                Severity::Error,
                pos,
                format!("monitor session {}: unknown interface {name}", s.id),
                hint(name),
            ));
        }
        if let Some(MonitorDestination::Interface(name)) = &s.destination {
            if !known(name) {
                let pos = map
                    .at
                    .get(&At::Monitor(s.id, MonitorAt::Destination))
                    .copied()
                    .unwrap_or(Pos::new(0, 0));
                out.push(sources.diag(
                    Severity::Error,
                    pos,
                    format!("monitor session {}: unknown interface {name}", s.id),
                    hint(name),
                ));
            }
        }
    }
}
