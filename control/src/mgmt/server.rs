//! The management server's loop: every connection nonblocking, multiplexed
//! on one thread with poll(2), so no client can hold up another.

use std::io::Read;
use std::os::unix::net::{UnixListener, UnixStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use rustix::net::{send, SendFlags};

use super::{Counters, Limits, Reply};

/// How often the loop looks at its stop flag when nothing happens.
const TICK: Duration = Duration::from_millis(100);

/// The request handler as the loop calls it.
pub(crate) type Handler = Box<dyn Fn(&str) -> Reply + Send>;

/// One client.
struct Conn {
    stream: UnixStream,
    /// When the request must be complete, or the reply written.
    deadline: Instant,
    phase: Phase,
}

enum Phase {
    /// Collecting the request line.
    Reading(Vec<u8>),
    /// Writing `.0[.1..]` as the client drains its socket.
    Writing(Vec<u8>, usize),
}

/// What the loop needs besides its connections.
pub(crate) struct Ctx {
    pub handler: Handler,
    pub limits: Limits,
    pub counters: Arc<Counters>,
    /// Streams running on their own threads.
    pub streams: Arc<AtomicUsize>,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Writes a short error without waiting: it fits any socket buffer, and a
/// client that is not reading loses it.
fn send_error(stream: &UnixStream, message: &str) {
    let body = format!("{}\n", serde_json::json!({ "error": message }));
    let _ = send(
        stream,
        body.as_bytes(),
        SendFlags::NOSIGNAL | SendFlags::DONTWAIT,
    );
}

/// Serves `listener` until `stop` is set.
pub(crate) fn run(listener: &UnixListener, ctx: &Ctx, stop: &AtomicBool) {
    let mut conns: Vec<Conn> = Vec::new();
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        conns.retain(|c| {
            if now < c.deadline {
                return true;
            }
            match c.phase {
                Phase::Reading(_) => {
                    bump(&ctx.counters.request_timeouts);
                    send_error(
                        &c.stream,
                        &format!(
                            "request refused: not complete within {} ms",
                            ctx.limits.request_time.as_millis()
                        ),
                    );
                }
                Phase::Writing(..) => bump(&ctx.counters.replies_abandoned),
            }
            false
        });
        let wait = conns
            .iter()
            .map(|c| c.deadline.saturating_duration_since(now))
            .min()
            .map_or(TICK, |d| d.min(TICK));
        let mut fds = Vec::with_capacity(conns.len() + 1);
        fds.push(PollFd::new(listener, PollFlags::IN));
        fds.extend(conns.iter().map(|c| {
            let events = match c.phase {
                Phase::Reading(_) => PollFlags::IN,
                Phase::Writing(..) => PollFlags::OUT,
            };
            PollFd::new(&c.stream, events)
        }));
        let ts = Timespec {
            tv_sec: wait.as_secs() as i64,
            // Rounded up, so a deadline 0.5 ms away is not a busy loop.
            tv_nsec: i64::from(wait.subsec_nanos().max(1_000_000)),
        };
        match poll(&mut fds, Some(&ts)) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => {
                tracing::warn!("management socket: poll: {e}");
                std::thread::sleep(TICK);
                continue;
            }
        }
        let listener_ready = !fds[0].revents().is_empty();
        let ready: Vec<bool> = fds[1..].iter().map(|f| !f.revents().is_empty()).collect();
        drop(fds);
        let mut i = 0;
        conns.retain_mut(|c| {
            i += 1;
            !ready[i - 1] || step(c, ctx)
        });
        if listener_ready {
            accept(listener, &mut conns, ctx);
        }
    }
}

/// Takes every pending connection; those beyond the cap are told so and
/// closed.
fn accept(listener: &UnixListener, conns: &mut Vec<Conn>, ctx: &Ctx) {
    loop {
        match listener.accept() {
            Ok((stream, _)) => {
                if stream.set_nonblocking(true).is_err() {
                    bump(&ctx.counters.accept_errors);
                    continue;
                }
                if conns.len() >= ctx.limits.max_connections {
                    bump(&ctx.counters.busy);
                    send_error(
                        &stream,
                        &format!(
                            "busy: {} connections open, try again",
                            ctx.limits.max_connections
                        ),
                    );
                    continue;
                }
                bump(&ctx.counters.accepted);
                conns.push(Conn {
                    stream,
                    deadline: Instant::now() + ctx.limits.request_time,
                    phase: Phase::Reading(Vec::new()),
                });
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                // EMFILE and the like: the connection stays queued; back
                // off instead of spinning on a listener that stays ready.
                bump(&ctx.counters.accept_errors);
                tracing::debug!("management socket: accept: {e}");
                std::thread::sleep(Duration::from_millis(10));
                return;
            }
        }
    }
}

/// Moves one ready connection on; `false` when it is finished.
fn step(c: &mut Conn, ctx: &Ctx) -> bool {
    let Phase::Reading(buf) = &mut c.phase else {
        return flush(c, ctx);
    };
    let mut chunk = [0u8; 4096];
    loop {
        match (&c.stream).read(&mut chunk) {
            Ok(0) if buf.is_empty() => return false,
            // A client that closes its side instead of sending a newline
            // has still sent a request.
            Ok(0) => {
                let request = std::mem::take(buf);
                return answer(c, &request, ctx);
            }
            Ok(n) => {
                let before = buf.len();
                buf.extend_from_slice(&chunk[..n]);
                let newline = buf[before..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map(|p| before + p);
                let end = newline.unwrap_or(buf.len());
                if end > ctx.limits.max_request {
                    bump(&ctx.counters.too_long);
                    send_error(&c.stream, &too_long(buf, ctx.limits.max_request));
                    return false;
                }
                if let Some(end) = newline {
                    buf.truncate(end);
                    let request = std::mem::take(buf);
                    return answer(c, &request, ctx);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return false,
        }
    }
}

/// The refusal of an overlong request: its size limit and at most its first
/// 16 characters, escaped, so that a client can tell what it sent without
/// the switch echoing it back.
fn too_long(request: &[u8], limit: usize) -> String {
    let head = String::from_utf8_lossy(&request[..request.len().min(16)])
        .escape_debug()
        .to_string();
    format!("request refused: longer than {limit} bytes (it began \"{head}\")")
}

/// Runs the handler on a complete request and starts the reply.
fn answer(c: &mut Conn, request: &[u8], ctx: &Ctx) -> bool {
    let Ok(line) = std::str::from_utf8(request) else {
        bump(&ctx.counters.not_utf8);
        send_error(&c.stream, "request refused: not UTF-8");
        return false;
    };
    let handler = &ctx.handler;
    let reply =
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(line.trim()))) {
            Ok(r) => r,
            Err(_) => {
                bump(&ctx.counters.handler_panics);
                send_error(
                    &c.stream,
                    "internal error while answering; see the switch's log",
                );
                return false;
            }
        };
    match reply {
        Reply::Text(mut text) => {
            bump(&ctx.counters.answered);
            text.push('\n');
            c.phase = Phase::Writing(text.into_bytes(), 0);
            c.deadline = Instant::now() + ctx.limits.reply_time;
            flush(c, ctx)
        }
        Reply::Stream(f) => {
            start_stream(c, f, ctx);
            false
        }
    }
}

/// Writes what the socket takes; `false` when done or the client is gone.
fn flush(c: &mut Conn, ctx: &Ctx) -> bool {
    let Phase::Writing(buf, at) = &mut c.phase else {
        return true;
    };
    while *at < buf.len() {
        match send(&c.stream, &buf[*at..], SendFlags::NOSIGNAL) {
            Ok(n) => *at += n,
            Err(rustix::io::Errno::AGAIN) => return true,
            Err(rustix::io::Errno::INTR) => {}
            Err(_) => {
                bump(&ctx.counters.replies_abandoned);
                return false;
            }
        }
    }
    false
}

/// Hands the connection to a thread of its own for a streaming reply, or
/// refuses when [`Limits::max_streams`] are already running.
fn start_stream(c: &Conn, f: Box<dyn FnOnce(UnixStream) + Send>, ctx: &Ctx) {
    if ctx.streams.fetch_add(1, Ordering::AcqRel) >= ctx.limits.max_streams {
        ctx.streams.fetch_sub(1, Ordering::AcqRel);
        bump(&ctx.counters.streams_busy);
        send_error(
            &c.stream,
            &format!(
                "busy: {} streams running, try again",
                ctx.limits.max_streams
            ),
        );
        return;
    }
    /// Gives the stream's slot back however the stream ends.
    struct Slot(Arc<AtomicUsize>);
    impl Drop for Slot {
        fn drop(&mut self) {
            self.0.fetch_sub(1, Ordering::AcqRel);
        }
    }
    let slot = Slot(Arc::clone(&ctx.streams));
    // The loop's copy closes when this connection leaves it; the stream
    // thread owns a duplicate of the descriptor, in blocking mode.
    let stream = match c.stream.try_clone().and_then(|s| {
        s.set_nonblocking(false)?;
        Ok(s)
    }) {
        Ok(s) => s,
        Err(e) => {
            bump(&ctx.counters.stream_errors);
            tracing::debug!("management stream: {e}");
            return;
        }
    };
    bump(&ctx.counters.streams);
    let spawned = std::thread::Builder::new()
        .name("railyard-mgmt-stream".into())
        .spawn(move || {
            let _slot = slot;
            f(stream);
        });
    if let Err(e) = spawned {
        bump(&ctx.counters.stream_errors);
        tracing::warn!("management stream: cannot start a thread: {e}");
    }
}
