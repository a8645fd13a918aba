//! The management socket: how `railyard show …` talks to a running switch.
//!
//! A Unix stream socket; the client writes one request line and reads one JSON
//! document back. Requests: `stats` (every counter, as in `--stats-json`),
//! `config` (the running configuration as canonical text),
//! `reload [FILE]` (re-read the configuration; see [`ReloadReply`]) and
//! `queue-ring NAME` (an interface's recent queue samples). JSON
//! keeps the protocol stable while the text renderers evolve.

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use railyard_dataplane::stats::SwitchStats;
use serde::{Deserialize, Serialize};

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

/// A running management server; stops and removes its socket on drop.
pub struct Server {
    path: PathBuf,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Server {
    /// Listens on `path`, answering each request line with what `handler`
    /// returns for it (one JSON document). A stale socket file left by a
    /// crashed switch is replaced; a live one is an error (another switch is
    /// using it).
    pub fn start(
        path: &Path,
        handler: impl Fn(&str) -> String + Send + 'static,
    ) -> std::io::Result<Server> {
        if path.exists() {
            if UnixStream::connect(path).is_ok() {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::AddrInUse,
                    format!(
                        "{} is in use by another railyard; pick another with --socket",
                        path.display()
                    ),
                ));
            }
            std::fs::remove_file(path)?;
        }
        let listener = UnixListener::bind(path)?;
        listener.set_nonblocking(true)?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = Arc::clone(&stop);
        let handle = std::thread::Builder::new()
            .name("railyard-mgmt".into())
            .spawn(move || {
                while !stop2.load(Ordering::Relaxed) {
                    match listener.accept() {
                        Ok((conn, _)) => {
                            if let Err(e) = serve(conn, &handler) {
                                tracing::debug!("management client: {e}");
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(20));
                        }
                        Err(e) => {
                            tracing::warn!("management socket: {e}");
                            std::thread::sleep(Duration::from_millis(100));
                        }
                    }
                }
            })?;
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

fn serve(conn: UnixStream, handler: &dyn Fn(&str) -> String) -> std::io::Result<()> {
    conn.set_nonblocking(false)?;
    conn.set_read_timeout(Some(Duration::from_secs(2)))?;
    let mut reader = BufReader::new(&conn);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let reply = handler(line.trim());
    let mut w = &conn;
    w.write_all(reply.as_bytes())?;
    w.write_all(b"\n")
}

/// The reply to a request this server does not know.
pub fn unknown_request(request: &str) -> String {
    serde_json::json!({ "error": format!("unknown request {request:?}") }).to_string()
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
mod tests {
    use super::*;

    #[test]
    fn stats_round_trip_over_the_socket() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let server = Server::start(&path, |req| match req {
            "stats" => serde_json::to_string(&SwitchStats {
                hostname: "leaf1".into(),
                ..SwitchStats::default()
            })
            .unwrap(),
            other => unknown_request(other),
        })
        .unwrap();
        assert_eq!(fetch_stats(&path).unwrap().hostname, "leaf1");
        assert!(reload(&path, None).unwrap_err().contains("unknown request"));
        // A second server on a live socket is refused.
        assert!(Server::start(&path, unknown_request).is_err());
        drop(server);
        assert!(!path.exists());
        assert!(fetch_stats(&path).unwrap_err().contains("cannot reach"));
    }
}
