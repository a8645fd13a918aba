//! The management socket: how `railyard show …` talks to a running switch.
//!
//! A Unix stream socket; the client writes one request line and reads one JSON
//! document back. Requests: `stats` (every counter, as in `--stats-json`),
//! `config` (the running configuration as canonical text),
//! `reload [FILE]` (re-read the configuration; see [`ReloadReply`]) and
//! `queue-ring NAME` (an interface's recent queue samples). JSON
//! keeps the protocol stable while the text renderers evolve.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use railyard_dataplane::stats::SwitchStats;
use serde::{Deserialize, Serialize};

mod bind;
mod server;

pub use bind::Group;

/// The answer to `reload`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReloadReply {
    /// Whether the new configuration is now running.
    pub applied: bool,
    /// Diagnostics and warnings, rendered for a terminal.
    pub messages: Vec<String>,
}

/// Where `run` listens and `show` connects when `--socket` is not given.
pub const DEFAULT_SOCKET: &str = "/tmp/railyard.sock";

/// What a request handler returns.
pub enum Reply {
    /// One JSON document, written as the client reads it; the usual answer.
    Text(String),
    /// Take over the connection: for replies that go on for as long as the
    /// client listens (a future `railyard capture` streaming frames). The
    /// closure runs on a thread of its own with the connection in blocking
    /// mode, so it may write at its own pace without holding up the server;
    /// at most [`Limits::max_streams`] run at once, and a request beyond
    /// that gets a `busy` error instead.
    Stream(Box<dyn FnOnce(UnixStream) + Send>),
}

impl From<String> for Reply {
    fn from(text: String) -> Reply {
        Reply::Text(text)
    }
}

/// The bounds that keep one client from holding up another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// Longest request line, in bytes; longer ones are refused unread.
    pub max_request: usize,
    /// Time from connecting until the whole request line has arrived.
    pub request_time: Duration,
    /// Time the client has to read its reply before it is abandoned.
    pub reply_time: Duration,
    /// Connections open at once; beyond it a new one gets `busy` and is
    /// closed. Lowered at start when the open-file limit cannot hold it.
    pub max_connections: usize,
    /// Streaming replies ([`Reply::Stream`]) running at once.
    pub max_streams: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_request: 4096,
            request_time: Duration::from_secs(2),
            reply_time: Duration::from_secs(10),
            max_connections: 1024,
            max_streams: 4,
        }
    }
}

/// How the socket is created and bounded (`railyard run --socket-group`).
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The group that may use the socket too (mode 0660); `None` leaves it
    /// to its owner (0600).
    pub group: Option<Group>,
    /// The server's bounds.
    pub limits: Limits,
    /// Where the server counts what it did; clone it before
    /// [`Server::start_with`] to report the counts (e.g. in `stats`).
    pub counters: Arc<Counters>,
}

/// What the management server did with its connections: every refusal is
/// counted with its reason.
#[derive(Debug, Default)]
pub struct Counters {
    accepted: AtomicU64,
    answered: AtomicU64,
    streams: AtomicU64,
    busy: AtomicU64,
    streams_busy: AtomicU64,
    too_long: AtomicU64,
    not_utf8: AtomicU64,
    request_timeouts: AtomicU64,
    replies_abandoned: AtomicU64,
    handler_panics: AtomicU64,
    stream_errors: AtomicU64,
    accept_errors: AtomicU64,
}

/// A copy of [`Counters`], as `stats` reports it under `control_socket`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterSnapshot {
    /// Connections taken into the server.
    pub accepted: u64,
    /// Requests answered with a JSON document.
    pub answered: u64,
    /// Connections handed to a streaming reply.
    pub streams: u64,
    /// Connections refused because [`Limits::max_connections`] were open.
    pub busy: u64,
    /// Streaming requests refused because [`Limits::max_streams`] ran.
    pub streams_busy: u64,
    /// Requests refused for being longer than [`Limits::max_request`].
    pub too_long: u64,
    /// Requests refused for not being UTF-8.
    pub not_utf8: u64,
    /// Connections closed because the request did not arrive in time.
    pub request_timeouts: u64,
    /// Replies given up because the client did not read them in time (or
    /// went away).
    pub replies_abandoned: u64,
    /// Requests whose handler panicked (answered with an internal error).
    pub handler_panics: u64,
    /// Streaming replies that could not be started.
    pub stream_errors: u64,
    /// Failed accept(2) calls (e.g. out of file descriptors).
    pub accept_errors: u64,
}

impl Counters {
    /// The counts now.
    pub fn snapshot(&self) -> CounterSnapshot {
        let r = |c: &AtomicU64| c.load(Ordering::Relaxed);
        CounterSnapshot {
            accepted: r(&self.accepted),
            answered: r(&self.answered),
            streams: r(&self.streams),
            busy: r(&self.busy),
            streams_busy: r(&self.streams_busy),
            too_long: r(&self.too_long),
            not_utf8: r(&self.not_utf8),
            request_timeouts: r(&self.request_timeouts),
            replies_abandoned: r(&self.replies_abandoned),
            handler_panics: r(&self.handler_panics),
            stream_errors: r(&self.stream_errors),
            accept_errors: r(&self.accept_errors),
        }
    }
}

/// File descriptors kept free for everything but the socket's connections
/// (ports, FRR's sockets, the metrics server, streams).
const FD_RESERVE: u64 = 256;

/// The connection cap the open-file limit allows: the soft limit is raised
/// towards the hard one when it is too low for `wanted`.
fn fit_open_file_limit(wanted: usize) -> usize {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let need = wanted as u64 + FD_RESERVE;
    let lim = getrlimit(Resource::Nofile);
    let mut soft = lim.current.unwrap_or(u64::MAX);
    if soft < need {
        let raised = lim.maximum.map_or(need, |hard| hard.min(need));
        if setrlimit(
            Resource::Nofile,
            Rlimit {
                current: Some(raised),
                maximum: lim.maximum,
            },
        )
        .is_ok()
        {
            soft = raised;
        }
    }
    let cap = usize::try_from(soft.saturating_sub(FD_RESERVE)).unwrap_or(usize::MAX);
    if cap < wanted {
        tracing::warn!(
            "management socket: the open-file limit ({soft}) allows {cap} connections, not {wanted}"
        );
    }
    cap.min(wanted).max(1)
}

/// A running management server; stops and removes its socket on drop.
pub struct Server {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `path` with the default [`Options`] (owner-only socket,
    /// default [`Limits`]), answering each request line with what `handler`
    /// returns for it.
    ///
    /// # Errors
    /// As [`Server::start_with`].
    pub fn start<R: Into<Reply>>(
        path: &Path,
        handler: impl Fn(&str) -> R + Send + 'static,
    ) -> std::io::Result<Server> {
        Server::start_with(path, Options::default(), handler)
    }

    /// Listens on `path`, answering each request line with what `handler`
    /// returns for it (one JSON document, or a stream). The handler runs on
    /// the server's one thread, so it must be quick; clients are served
    /// side by side within `options.limits`. The socket is 0600, or 0660
    /// with `options.group`, from the moment it exists. A stale socket file
    /// left by a crashed switch is replaced; a live one is an error
    /// (another switch is using it).
    ///
    /// # Errors
    /// The socket is in use, or cannot be created with its permissions.
    pub fn start_with<R: Into<Reply>>(
        path: &Path,
        options: Options,
        handler: impl Fn(&str) -> R + Send + 'static,
    ) -> std::io::Result<Server> {
        if path.exists() && UnixStream::connect(path).is_ok() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::AddrInUse,
                format!(
                    "{} is in use by another railyard; pick another with --socket",
                    path.display()
                ),
            ));
        }
        let (mode, gid) = match &options.group {
            Some(g) => (0o660, Some(g.gid)),
            None => (0o600, None),
        };
        let listener = bind::bind_private(path, mode, gid)?;
        listener.set_nonblocking(true)?;
        let mut limits = options.limits;
        limits.max_connections = fit_open_file_limit(limits.max_connections);
        let ctx = server::Ctx {
            handler: Box::new(move |req: &str| handler(req).into()),
            limits,
            counters: options.counters,
            streams: Arc::new(AtomicUsize::new(0)),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("railyard-mgmt".into())
            .spawn(move || server::run(&listener, &ctx, &stop2))?;
        Ok(Server {
            path: path.to_path_buf(),
            stop,
            handle: Some(handle),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The reply to a request this server does not know. It names at most the
/// request's first 32 characters, escaped: whatever a client sends, the
/// answer stays short and printable.
pub fn unknown_request(request: &str) -> String {
    let head: String = request.chars().take(32).collect();
    let more = if head.len() < request.len() {
        "…"
    } else {
        ""
    };
    serde_json::json!({ "error": format!("unknown request {head:?}{more}") }).to_string()
}

/// The file `reload FILE` may read when the switch runs with
/// `--config-dir DIR`: `file` resolved (`..` and symlinks followed) must lie
/// inside `dir`, which must itself be canonical. The answer for a file
/// outside `dir` does not say whether it exists.
///
/// # Errors
/// A message for the client: outside the directory, or unreadable inside it.
pub fn confine(dir: &Path, file: &Path) -> Result<PathBuf, String> {
    let outside = || {
        format!(
            "{}: outside the configuration directory {} (railyard run --config-dir); \
             reload reads only files inside it",
            file.display(),
            dir.display()
        )
    };
    match file.canonicalize() {
        Ok(real) if real.starts_with(dir) => Ok(real),
        Ok(_) => Err(outside()),
        Err(e) if file.starts_with(dir) => Err(format!("{}: {e}", file.display())),
        Err(_) => Err(outside()),
    }
}

/// Sends one request line to the switch at `path` and decodes its JSON answer.
///
/// # Errors
/// A message that says whether the switch is not running or answered badly.
pub fn request<T: serde::de::DeserializeOwned>(path: &Path, line: &str) -> Result<T, String> {
    let mut conn = UnixStream::connect(path).map_err(|e| {
        format!(
            "cannot reach a running railyard at {}: {e} (is `railyard run` up? use --socket PATH)",
            path.display()
        )
    })?;
    conn.set_read_timeout(Some(Duration::from_secs(30)))
        .map_err(|e| e.to_string())?;
    conn.write_all(line.as_bytes()).map_err(|e| e.to_string())?;
    conn.write_all(b"\n").map_err(|e| e.to_string())?;
    let mut body = String::new();
    conn.read_to_string(&mut body).map_err(|e| e.to_string())?;
    if let Ok(serde_json::Value::Object(o)) = serde_json::from_str::<serde_json::Value>(&body) {
        if let Some(serde_json::Value::String(e)) = o.get("error") {
            return Err(format!("{}: {e}", path.display()));
        }
    }
    serde_json::from_str(&body).map_err(|e| format!("bad answer from {}: {e}", path.display()))
}

/// Asks the switch listening on `path` for its counters.
///
/// # Errors
/// A message that says whether the switch is not running or answered badly.
pub fn fetch_stats(path: &Path) -> Result<SwitchStats, String> {
    request(path, "stats")
}

/// Asks the switch at `path` for its running configuration, as canonical text.
///
/// # Errors
/// A message when the switch cannot be reached or answered badly.
pub fn fetch_config(path: &Path) -> Result<String, String> {
    let v: serde_json::Value = request(path, "config")?;
    v["text"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("bad answer from {}: no configuration text", path.display()))
}

/// Asks the switch at `path` to re-read its configuration (or `file`).
///
/// # Errors
/// A message when the switch cannot be reached; a rejected configuration is
/// an `Ok` reply with `applied: false`.
pub fn reload(path: &Path, file: Option<&Path>) -> Result<ReloadReply, String> {
    match file {
        Some(f) => request(path, &format!("reload {}", f.display())),
        None => request(path, "reload"),
    }
}

#[cfg(test)]
mod tests;
