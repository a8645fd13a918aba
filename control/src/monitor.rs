//! Monitor sessions on the live switch: the `monitor session` sections of
//! the configuration turned into the dataplane's [`SpanSet`], a writer
//! thread per file destination draining its ring into a pcapng file off the
//! fast path, and the `monitor` request `railyard show monitor session`
//! asks the management socket.
//!
//! A session copies when it is `no shut`, has a destination and at least
//! one source, and every port it names is one the switch has (the
//! configuration check rejects others). A reload that changes the active
//! sessions starts them afresh: their counters from zero, their files
//! rewritten from the start.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use railyard_config::{MonitorDestination, MonitorSession};
use railyard_dataplane::capture::{CaptureRing, Direction};
use railyard_dataplane::model::{PortId, SwitchModel};
use railyard_dataplane::port::pcap::ng::{NgCapture, FLAGS_INBOUND, FLAGS_OUTBOUND};
use railyard_dataplane::runtime::Runtime;
use railyard_dataplane::span::{SessionSpec, SpanCounters, SpanSet, SPAN_SNAPLEN};
use serde::{Deserialize, Serialize};

/// How often a writer writes out what it buffered, so that a reader of a
/// growing file sees frames within this long.
const FLUSH_EVERY: Duration = Duration::from_millis(200);
/// How long a writer sleeps when its ring is empty.
const IDLE_SLEEP: Duration = Duration::from_millis(2);

/// The answer to a `monitor` request: every configured session.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct MonitorReply {
    /// Sessions by number.
    pub sessions: Vec<SessionReply>,
}

/// One session as `show monitor session` reports it.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct SessionReply {
    /// The session number.
    pub id: u8,
    /// `description`.
    pub description: Option<String>,
    /// `up`, or `down` with the reason in `reason`.
    pub state: String,
    /// Why a session is down (NX-OS's wording where it has one).
    pub reason: Option<String>,
    /// Ports whose received frames are copied.
    pub source_rx: Vec<String>,
    /// Ports whose sent frames are copied.
    pub source_tx: Vec<String>,
    /// `interface NAME` or `file PATH`, if configured.
    pub destination: Option<String>,
    /// Copies made and dropped since the session came up (zero while down).
    pub counters: SpanCounters,
    /// For a file destination: frames written to the file.
    pub written: Option<u64>,
    /// For a file destination: frames the file could not take (a write failed).
    pub write_errors: Option<u64>,
}

/// A writer draining one file session's ring.
struct Writer {
    id: u8,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
    cap: NgCapture,
}

impl Writer {
    fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// The active sessions: what they copy, the set the workers use, the writers.
#[derive(Default)]
struct Active {
    specs: Vec<(SessionSpec, Option<PathBuf>)>,
    set: Option<Arc<SpanSet>>,
    writers: Vec<Writer>,
}

/// The monitor sessions of a running switch (see the module doc).
pub struct Monitor {
    runtime: Arc<Runtime>,
    /// Wall-clock nanoseconds since 1970 at the workers' clock's zero.
    epoch_ns: u64,
    state: Mutex<(Vec<MonitorSession>, Active)>,
}

/// Why session `s` copies nothing, or `None` when it copies.
fn down_reason(s: &MonitorSession, model: &SwitchModel) -> Option<&'static str> {
    let known = |n: &railyard_config::InterfaceName| {
        let n = n.to_string();
        model.interfaces.iter().any(|i| i.name == n)
    };
    if s.shutdown {
        Some("Session admin shut")
    } else if s.destination.is_none() {
        Some("No operational dst")
    } else if s.sources.is_empty() {
        Some("No operational src")
    } else if !s.sources.iter().all(|(n, _)| known(n))
        || matches!(&s.destination, Some(MonitorDestination::Interface(n)) if !known(n))
    {
        Some("Interface not on this switch")
    } else {
        None
    }
}

/// What the active sessions of `sessions` copy, by port number of `model`.
fn specs(sessions: &[MonitorSession], model: &SwitchModel) -> Vec<(SessionSpec, Option<PathBuf>)> {
    let port = |n: &railyard_config::InterfaceName| -> Option<PortId> {
        let n = n.to_string();
        let i = model.interfaces.iter().position(|i| i.name == n)?;
        PortId::try_from(i).ok()
    };
    sessions
        .iter()
        .filter(|s| down_reason(s, model).is_none())
        .filter_map(|s| {
            let pick = |f: fn(railyard_config::SpanDirection) -> bool| {
                s.sources
                    .iter()
                    .filter(|(_, d)| f(*d))
                    .filter_map(|(n, _)| port(n))
                    .collect()
            };
            let (dest_port, file) = match s.destination.as_ref()? {
                MonitorDestination::Interface(n) => (Some(port(n)?), None),
                MonitorDestination::File(p) => (None, Some(p.clone())),
            };
            Some((
                SessionSpec {
                    id: s.id,
                    rx: pick(railyard_config::SpanDirection::rx),
                    tx: pick(railyard_config::SpanDirection::tx),
                    port: dest_port,
                },
                file,
            ))
        })
        .collect()
}

/// The interfaces a file session's pcapng has: one per source port, by port number.
fn file_interfaces(spec: &SessionSpec) -> Vec<PortId> {
    let mut ports: Vec<PortId> = spec.rx.iter().chain(&spec.tx).copied().collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// Starts the writer of file session `spec` on `ring`.
fn start_writer(
    spec: &SessionSpec,
    path: &PathBuf,
    ring: Arc<CaptureRing>,
    model: &SwitchModel,
    epoch_ns: u64,
) -> Result<Writer, String> {
    let ports = file_interfaces(spec);
    let names: Vec<&str> = ports
        .iter()
        .map(|&p| model.interfaces[usize::from(p)].name.as_str())
        .collect();
    let snaplen = u32::try_from(SPAN_SNAPLEN).unwrap_or(u32::MAX);
    let cap = NgCapture::create(path, &names, snaplen).map_err(|e| {
        format!(
            "monitor session {}: cannot create {}: {e}",
            spec.id,
            path.display()
        )
    })?;
    // Port number to the file's interface number.
    let mut idb = vec![u32::MAX; model.interfaces.len()];
    for (i, p) in ports.iter().enumerate() {
        idb[usize::from(*p)] = i as u32;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (flag, out) = (Arc::clone(&stop), cap.clone());
    let handle = std::thread::Builder::new()
        .name(format!("railyard-span{}", spec.id))
        .spawn(move || write_loop(&ring, &out, &idb, epoch_ns, &flag))
        .map_err(|e| format!("monitor session {}: cannot start its writer: {e}", spec.id))?;
    Ok(Writer {
        id: spec.id,
        stop,
        handle: Some(handle),
        cap,
    })
}

/// Drains `ring` into `out` until `stop`, then once more and flushes.
fn write_loop(ring: &CaptureRing, out: &NgCapture, idb: &[u32], epoch_ns: u64, stop: &AtomicBool) {
    let mut last_flush = Instant::now();
    loop {
        // Read before draining: frames copied before the stop are written.
        let stopping = stop.load(Ordering::Relaxed);
        let mut wrote = false;
        while let Some(c) = ring.pop() {
            let flags = match c.dir {
                Direction::Rx => FLAGS_INBOUND,
                Direction::Tx => FLAGS_OUTBOUND,
            };
            if let Some(&i) = idb.get(usize::from(c.port)).filter(|&&i| i != u32::MAX) {
                out.write(i, epoch_ns.saturating_add(c.at), &c.data, flags, None);
            }
            ring.recycle(c);
            wrote = true;
        }
        if stopping {
            break;
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            last_flush = Instant::now();
            if let Err(e) = out.flush() {
                tracing::warn!("{}: {e}", out.path().display());
            }
        }
        if !wrote {
            std::thread::sleep(IDLE_SLEEP);
        }
    }
    if let Err(e) = out.flush() {
        tracing::warn!("{}: {e}", out.path().display());
    }
}

impl Monitor {
    /// The sessions of `sessions` on the switch `runtime` runs from
    /// `model`, whose workers' clock read `clock_now` at wall-clock time
    /// `wall_ns` (nanoseconds since 1970): the files' timestamps.
    ///
    /// # Errors
    /// A file destination that cannot be created.
    pub fn start(
        runtime: Arc<Runtime>,
        sessions: &[MonitorSession],
        model: &SwitchModel,
        wall_ns: u64,
        clock_now: u64,
    ) -> Result<Monitor, String> {
        let m = Monitor {
            runtime,
            epoch_ns: wall_ns.saturating_sub(clock_now),
            state: Mutex::new((Vec::new(), Active::default())),
        };
        m.apply(sessions, model)?;
        Ok(m)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Vec<MonitorSession>, Active)> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies the sessions of a new configuration: unchanged active
    /// sessions keep running (and counting); otherwise the old writers
    /// finish their files and the new sessions start.
    ///
    /// # Errors
    /// A file destination that cannot be created (no session copies then).
    pub fn apply(&self, sessions: &[MonitorSession], model: &SwitchModel) -> Result<(), String> {
        let mut state = self.lock();
        state.0 = sessions.to_vec();
        let wanted = specs(sessions, model);
        if wanted == state.1.specs && state.1.set.is_some() != wanted.is_empty() {
            return Ok(());
        }
        // The old files are complete before a new session may reuse a path.
        self.runtime.set_span(None);
        for w in std::mem::take(&mut state.1.writers) {
            w.stop();
        }
        state.1 = Active::default();
        if wanted.is_empty() {
            return Ok(());
        }
        let plain: Vec<SessionSpec> = wanted.iter().map(|(s, _)| s.clone()).collect();
        let set = Arc::new(SpanSet::new(model.interfaces.len(), &plain));
        let mut writers = Vec::new();
        for (spec, path) in &wanted {
            let (Some(path), Some(ring)) = (path, set.ring(spec.id)) else {
                continue;
            };
            match start_writer(spec, path, Arc::clone(ring), model, self.epoch_ns) {
                Ok(w) => writers.push(w),
                Err(e) => {
                    for w in writers {
                        w.stop();
                    }
                    return Err(e);
                }
            }
        }
        self.runtime.set_span(Some(Arc::clone(&set)));
        state.1 = Active {
            specs: wanted,
            set: Some(set),
            writers,
        };
        Ok(())
    }

    /// Each enabled session's counters, by session number: what `stats`
    /// and a metrics scrape report.
    pub fn counters(&self) -> BTreeMap<u8, SpanCounters> {
        let state = self.lock();
        state
            .1
            .set
            .iter()
            .flat_map(|set| set.sessions().iter().map(|s| (s.id, s.counters())))
            .collect()
    }

    /// The `monitor` request's answer.
    pub fn reply(&self, model: &SwitchModel) -> MonitorReply {
        let state = self.lock();
        let (sessions, active) = &*state;
        let counters: BTreeMap<u8, SpanCounters> = active
            .set
            .iter()
            .flat_map(|set| set.sessions().iter().map(|s| (s.id, s.counters())))
            .collect();
        let sessions = sessions
            .iter()
            .map(|s| {
                let reason = down_reason(s, model);
                let names = |f: fn(railyard_config::SpanDirection) -> bool| {
                    s.sources
                        .iter()
                        .filter(|(_, d)| f(*d))
                        .map(|(n, _)| n.to_string())
                        .collect()
                };
                let writer = active.writers.iter().find(|w| w.id == s.id);
                SessionReply {
                    id: s.id,
                    description: s.description.clone(),
                    state: if reason.is_none() { "up" } else { "down" }.into(),
                    reason: reason.map(str::to_owned),
                    source_rx: names(railyard_config::SpanDirection::rx),
                    source_tx: names(railyard_config::SpanDirection::tx),
                    destination: s.destination.as_ref().map(ToString::to_string),
                    counters: counters.get(&s.id).copied().unwrap_or_default(),
                    written: writer.map(|w| w.cap.frames()),
                    write_errors: writer.map(|w| w.cap.lost()),
                }
            })
            .collect();
        MonitorReply { sessions }
    }

    /// Stops copying and finishes every file.
    pub fn stop(self) {
        self.runtime.set_span(None);
        let mut state = self.lock();
        for w in std::mem::take(&mut state.1.writers) {
            w.stop();
        }
    }
}

/// `show monitor session [N]` as NX-OS prints it, with railyard's counters.
pub fn render(reply: &MonitorReply, id: Option<u8>) -> String {
    let mut s = String::new();
    let sessions: Vec<&SessionReply> = reply
        .sessions
        .iter()
        .filter(|r| id.is_none_or(|id| r.id == id))
        .collect();
    if sessions.is_empty() {
        return match id {
            Some(id) => format!("Session {id} not configured\n"),
            None => "No sessions configured\n".into(),
        };
    }
    for r in sessions {
        let title = format!("   session {}", r.id);
        let _ = writeln!(s, "{title}\n{}", "-".repeat(title.len() + 3));
        let field = |s: &mut String, k: &str, v: &str| {
            let _ = writeln!(s, "{k:<18}:{}{v}", if v.is_empty() { "" } else { " " });
        };
        field(
            &mut s,
            "description",
            r.description.as_deref().unwrap_or(""),
        );
        field(&mut s, "type", "local");
        let state = match &r.reason {
            Some(why) => format!("{} ({why})", r.state),
            None => r.state.clone(),
        };
        field(&mut s, "state", &state);
        field(&mut s, "source intf", "");
        let list = |v: &[String]| v.iter().map(|n| short(n)).collect::<Vec<_>>().join(" ");
        let both: Vec<String> = r
            .source_rx
            .iter()
            .filter(|n| r.source_tx.contains(n))
            .cloned()
            .collect();
        field(&mut s, "    rx", &list(&r.source_rx));
        field(&mut s, "    tx", &list(&r.source_tx));
        field(&mut s, "    both", &list(&both));
        match r.destination.as_deref() {
            Some(d) if d.starts_with("file ") => {
                field(&mut s, "destination ports", "");
                field(&mut s, "destination file", &d["file ".len()..]);
            }
            Some(d) => field(
                &mut s,
                "destination ports",
                &short(d.trim_start_matches("interface ")),
            ),
            None => field(&mut s, "destination ports", ""),
        }
        let c = &r.counters;
        field(&mut s, "frames mirrored", &c.mirrored.to_string());
        field(
            &mut s,
            "frames dropped",
            &format!(
                "{} (queue_full {}, no_buffer {}, destination_down {})",
                c.queue_full + c.no_buffer + c.destination_down,
                c.queue_full,
                c.no_buffer,
                c.destination_down
            ),
        );
        if let Some(w) = r.written {
            field(&mut s, "frames written", &w.to_string());
            field(
                &mut s,
                "write errors",
                &r.write_errors.unwrap_or(0).to_string(),
            );
        }
        s.push('\n');
    }
    s
}

/// `Ethernet1/1` as NX-OS's show output abbreviates it: `Eth1/1`.
fn short(name: &str) -> String {
    match name.strip_prefix("Ethernet") {
        Some(rest) => format!("Eth{rest}"),
        None => name.to_string(),
    }
}

#[cfg(test)]
mod tests;
