//! Shared by the lab tests: uniquely named network namespaces removed on
//! drop, and `railyard run` processes stopped by PID.

#![allow(dead_code)] // each test binary uses its own subset

use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// Namespaces made by one test, deleted on drop.
pub struct Lab {
    tag: String,
    namespaces: Vec<String>,
    dir: tempfile::TempDir,
}

pub fn run(cmd: &[&str]) -> Result<String, String> {
    let out = Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .map_err(|e| format!("{cmd:?}: {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{cmd:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

pub fn ok(cmd: &[&str]) {
    if let Err(e) = run(cmd) {
        panic!("{e}");
    }
}

impl Lab {
    pub fn new() -> Lab {
        let tag = format!(
            "ry{}x{}",
            std::process::id() % 100_000,
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        Lab {
            tag,
            namespaces: Vec::new(),
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    pub fn ns(&mut self, role: &str) -> String {
        let name = format!("{}-{role}", self.tag);
        ok(&["ip", "netns", "add", &name]);
        ok(&["ip", "-n", &name, "link", "set", "lo", "up"]);
        self.namespaces.push(name.clone());
        name
    }

    /// A veth pair with one end in each namespace.
    pub fn veth(&self, a_ns: &str, a: &str, b_ns: &str, b: &str) {
        ok(&[
            "ip", "link", "add", a, "netns", a_ns, "type", "veth", "peer", "name", b, "netns", b_ns,
        ]);
        ok(&["ip", "-n", a_ns, "link", "set", a, "up"]);
        ok(&["ip", "-n", b_ns, "link", "set", b, "up"]);
    }

    pub fn host(&self, ns: &str, dev: &str, addr: &str, gw: &str, addr6: &str, gw6: &str) {
        ok(&["ip", "-n", ns, "addr", "add", addr, "dev", dev]);
        ok(&[
            "ip", "-n", ns, "-6", "addr", "add", addr6, "dev", dev, "nodad",
        ]);
        ok(&["ip", "-n", ns, "link", "set", dev, "up"]);
        ok(&["ip", "-n", ns, "route", "add", "default", "via", gw]);
        ok(&["ip", "-n", ns, "-6", "route", "add", "default", "via", gw6]);
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for ns in &self.namespaces {
            let _ = run(&["ip", "netns", "del", ns]);
        }
    }
}

/// A `railyard run` process, stopped with SIGTERM by PID on drop.
pub struct Switch {
    child: Option<Child>,
    pub socket: PathBuf,
    log: PathBuf,
}

impl Switch {
    pub fn start(ns: &str, config: &Path, socket: &Path, log: &Path, extra: &[&str]) -> Switch {
        let child = Command::new("ip")
            .args([
                "netns",
                "exec",
                ns,
                env!("CARGO_BIN_EXE_railyard"),
                "run",
                "--config",
            ])
            .arg(config)
            .arg("--socket")
            .arg(socket)
            .args(extra)
            .stdout(Stdio::from(
                std::fs::File::create(log.with_extension("out")).expect("log"),
            ))
            .stderr(Stdio::from(std::fs::File::create(log).expect("log")))
            .spawn()
            .expect("start railyard");
        let sw = Switch {
            child: Some(child),
            socket: socket.to_path_buf(),
            log: log.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while sw.show().is_err() {
            assert!(
                Instant::now() < deadline,
                "railyard did not come up:\n{}",
                std::fs::read_to_string(&sw.log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        sw
    }

    /// Runs `railyard ARGS… --socket <this switch's socket>` and returns its stdout.
    pub fn cli(&self, args: &[&str]) -> Result<String, String> {
        let mut cmd = vec![env!("CARGO_BIN_EXE_railyard")];
        cmd.extend_from_slice(args);
        cmd.extend(["--socket", self.socket.to_str().unwrap_or_default()]);
        run(&cmd)
    }

    pub fn show(&self) -> Result<serde_json::Value, String> {
        let out = self.cli(&["show", "interface", "--json"])?;
        serde_json::from_str(&out).map_err(|e| e.to_string())
    }

    /// Stops the switch and returns what it printed on stdout (final counters).
    pub fn stop(mut self) -> String {
        self.terminate();
        std::fs::read_to_string(self.log.with_extension("out")).unwrap_or_default()
    }

    pub fn signal(&self, sig: libc::c_int) {
        if let Some(child) = &self.child {
            // SAFETY: signalling a child process we started and have not reaped.
            unsafe {
                libc::kill(child.id() as libc::pid_t, sig);
            }
        }
    }

    fn terminate(&mut self) {
        if let Some(mut child) = self.child.take() {
            // `ip netns exec` execs railyard, so the child's PID is the switch's.
            let pid = child.id() as libc::pid_t;
            // SAFETY: signalling a child process we started and have not reaped.
            unsafe {
                libc::kill(pid, libc::SIGTERM);
            }
            let deadline = Instant::now() + Duration::from_secs(10);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(50))
                    }
                    _ => {
                        let _ = child.kill();
                        let _ = child.wait();
                        break;
                    }
                }
            }
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// Runs `f` on a thread that has entered network namespace `ns`.
pub fn in_netns<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    let path = format!("/var/run/netns/{ns}");
    std::thread::spawn(move || {
        let file = std::fs::File::open(&path).expect("open netns");
        // SAFETY: setns on a valid namespace fd; it changes only this thread.
        let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
        assert_eq!(rc, 0, "setns {path}: {}", std::io::Error::last_os_error());
        f()
    })
}
