//! The HTTP endpoint Prometheus scrapes: `GET /metrics` on a thread of its
//! own, so a slow or misbehaving client delays only other scrapes, never a
//! worker.

use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::thread::JoinHandle;

use tiny_http::{Header, Method, Response, Server};

/// The content type of text exposition format 0.0.4.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Binds the metrics address: done first thing at startup, so a bad
/// address stops the switch before it opens any port.
///
/// # Errors
/// A message naming the address when it cannot be bound (in use, not an
/// address of this host, a privileged port).
pub fn listen(addr: SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr).map_err(|e| format!("metrics address {addr}: cannot listen: {e}"))
}

/// A running metrics endpoint; stops its thread on drop.
pub struct MetricsServer {
    server: Arc<Server>,
    addr: SocketAddr,
    handle: Option<JoinHandle<()>>,
}

impl MetricsServer {
    /// Answers `GET /metrics` on `listener` (see [`listen`]) with what
    /// `render` returns at that moment; other paths get 404, other methods
    /// 405, and requests that are not HTTP 400.
    ///
    /// # Errors
    /// A message naming the address when the server or its thread cannot
    /// be started.
    pub fn start(
        listener: TcpListener,
        render: impl Fn() -> String + Send + 'static,
    ) -> Result<MetricsServer, String> {
        let addr = listener
            .local_addr()
            .map_err(|e| format!("metrics listener: {e}"))?;
        let server = Server::from_listener(listener, None)
            .map_err(|e| format!("metrics address {addr}: {e}"))?;
        let bound = server.server_addr().to_ip().unwrap_or(addr);
        let server = Arc::new(server);
        let s = Arc::clone(&server);
        let handle = std::thread::Builder::new()
            .name("railyard-metrics".into())
            .spawn(move || {
                // Ends when `unblock` is called on drop.
                for request in s.incoming_requests() {
                    let response = answer(request.method(), request.url(), &render);
                    if let Err(e) = request.respond(response) {
                        tracing::debug!("metrics client: {e}");
                    }
                }
            })
            .map_err(|e| format!("metrics address {addr}: cannot start the thread: {e}"))?;
        Ok(MetricsServer {
            server,
            addr: bound,
            handle: Some(handle),
        })
    }

    /// The address actually bound (the port chosen when `addr` had port 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Drop for MetricsServer {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

fn text(status: u16, body: String, content_type: &str) -> Response<std::io::Cursor<Vec<u8>>> {
    let mut r = Response::from_string(body).with_status_code(status);
    if let Ok(h) = Header::from_bytes(&b"Content-Type"[..], content_type.as_bytes()) {
        r = r.with_header(h);
    }
    r
}

/// The response to one request; `render` is called only for a scrape.
fn answer(
    method: &Method,
    url: &str,
    render: &dyn Fn() -> String,
) -> Response<std::io::Cursor<Vec<u8>>> {
    let path = url.split_once('?').map_or(url, |(p, _)| p);
    let plain = "text/plain; charset=utf-8";
    match (method, path) {
        (Method::Get | Method::Head, "/metrics") => text(200, render(), CONTENT_TYPE),
        (_, "/metrics") => {
            let mut r = text(405, "only GET /metrics\n".into(), plain);
            if let Ok(h) = Header::from_bytes(&b"Allow"[..], &b"GET, HEAD"[..]) {
                r = r.with_header(h);
            }
            r
        }
        (Method::Get | Method::Head, "/") => text(
            200,
            "railyard: Prometheus metrics at /metrics\n".into(),
            plain,
        ),
        _ => text(
            404,
            format!("no {path} here; metrics are at /metrics\n"),
            plain,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::net::TcpStream;
    use std::time::Duration;

    fn exchange(addr: SocketAddr, request: &[u8]) -> String {
        let mut c = TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        c.write_all(request).unwrap();
        let mut out = String::new();
        let _ = c.read_to_string(&mut out);
        out
    }

    fn local() -> SocketAddr {
        "127.0.0.1:0".parse().unwrap()
    }

    #[test]
    fn serves_metrics_404s_other_paths_and_400s_garbage() {
        let server =
            MetricsServer::start(listen(local()).unwrap(), || "railyard_x_total 1\n".into())
                .unwrap();
        let addr = server.addr();
        let ok = exchange(
            addr,
            b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert!(ok.starts_with("HTTP/1.1 200"), "{ok}");
        assert!(
            ok.contains("text/plain; version=0.0.4; charset=utf-8"),
            "{ok}"
        );
        assert!(ok.ends_with("railyard_x_total 1\n"), "{ok}");
        let query = exchange(
            addr,
            b"GET /metrics?x=1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert!(query.starts_with("HTTP/1.1 200"), "{query}");
        let missing = exchange(
            addr,
            b"GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
        );
        assert!(missing.starts_with("HTTP/1.1 404"), "{missing}");
        let post = exchange(
            addr,
            b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        );
        assert!(post.starts_with("HTTP/1.1 405"), "{post}");
        let garbage = exchange(addr, b"this is not http\r\n\r\n");
        assert!(garbage.starts_with("HTTP/1.1 400"), "{garbage}");
        // The server still answers after all that.
        let again = exchange(addr, b"GET /metrics HTTP/1.0\r\n\r\n");
        assert!(again.contains("railyard_x_total 1"), "{again}");
        drop(server);
        // The listener closes once the server's accept thread has seen
        // the stop, shortly after the drop.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while TcpStream::connect(addr).is_ok() {
            assert!(
                std::time::Instant::now() < deadline,
                "still listening after drop"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn an_address_in_use_is_an_error_naming_it() {
        let first = MetricsServer::start(listen(local()).unwrap(), String::new).unwrap();
        let addr = first.addr();
        let Err(e) = listen(addr) else {
            panic!("bound {addr} twice");
        };
        assert!(
            e.contains(&addr.to_string()) && e.contains("cannot listen"),
            "{e}"
        );
    }
}
