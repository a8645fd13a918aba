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

/// An external program (lldpd, lldpad, tshark…) started in a namespace,
/// stopped by its PID on drop: SIGTERM, then SIGKILL after a few seconds.
pub struct Daemon {
    child: Option<Child>,
    name: String,
    log: PathBuf,
}

impl Daemon {
    /// Runs `ip netns exec NS ARGV…` with stdout and stderr to `log`. `ip
    /// netns exec` (and `unshare` without `--fork`) exec their command, so
    /// the child's PID is the program's own.
    pub fn start(ns: &str, argv: &[&str], log: &Path) -> Daemon {
        let file = std::fs::File::create(log).expect("log");
        let child = Command::new("ip")
            .args(["netns", "exec", ns])
            .args(argv)
            .stdin(Stdio::null())
            .stdout(Stdio::from(file.try_clone().expect("log")))
            .stderr(Stdio::from(file))
            .spawn()
            .unwrap_or_else(|e| panic!("start {argv:?}: {e}"));
        Daemon {
            child: Some(child),
            name: argv.first().copied().unwrap_or("?").to_string(),
            log: log.to_path_buf(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// What the program printed so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log contains `text`; panics with the log after `timeout`.
    pub fn wait_log(&mut self, text: &str, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while !self.log().contains(text) {
            if let Some(Ok(Some(st))) = self.child.as_mut().map(Child::try_wait) {
                panic!(
                    "{} exited ({st}) before {text:?}:\n{}",
                    self.name,
                    self.log()
                );
            }
            assert!(
                Instant::now() < deadline,
                "{} did not print {text:?}:\n{}",
                self.name,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends `sig` and waits for the program to exit (SIGKILL after 5 s).
    pub fn stop_with(&mut self, sig: libc::c_int) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: signalling a child process we started and have not reaped.
            unsafe {
                libc::kill(child.id() as libc::pid_t, sig);
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            loop {
                match child.try_wait() {
                    Ok(Some(_)) => break,
                    Ok(None) if Instant::now() < deadline => {
                        std::thread::sleep(Duration::from_millis(20))
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

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop_with(libc::SIGTERM);
    }
}

/// Polls `f` every 100 ms until it returns `Ok`; after `timeout` panics
/// with `what` and the last error.
pub fn wait_for<T>(what: &str, timeout: Duration, mut f: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        match f() {
            Ok(v) => return v,
            Err(last) => assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; last: {last}"
            ),
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A shipped topology file or template (`scripts/topologies/REL`).
/// The path of a shipped topology, `scripts/topologies/NAME.topo`.
pub fn topology(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/topologies")
        .join(format!("{name}.topo"))
}

/// `railyard sim` on a shipped topology with `workload`, options set by
/// `f`; panics with the error if it fails.
pub fn sim(
    topo: &str,
    workload: &str,
    f: impl FnOnce(&mut railyard_control::sim::SimOptions),
) -> railyard_control::sim::SimReport {
    let mut o = railyard_control::sim::SimOptions {
        workload: workload.into(),
        ..railyard_control::sim::SimOptions::default()
    };
    f(&mut o);
    railyard_control::sim::simulate(&topology(topo), &o, &mut |_| {})
        .unwrap_or_else(|e| panic!("{e}"))
}

/// `railyard sim` (the binary) on a shipped topology with `args` and
/// `--json`, which must succeed; the JSON it printed.
pub fn sim_json(topo: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_railyard"))
        .arg("sim")
        .arg(topology(topo))
        .args(args)
        .arg("--json")
        .output()
        .expect("run railyard sim");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// Conservation as the switches count it after a run: every egress queue
/// sent, dropped or still holds what it was offered, and every cable
/// between two switches of `topo` delivered at one end what the other end
/// sent. Returns how many queues were offered traffic and how many cables
/// were checked.
pub fn assert_conserved(
    stats: &[railyard_dataplane::stats::SwitchStats],
    topo: &Path,
) -> (usize, usize) {
    let t = railyard_control::lab::topology::parse_file(topo).expect("topology");
    let c = railyard_control::lab::conservation::check(stats, &t);
    assert!(c.ok(), "{}", c.problems.join("\n"));
    (c.queues, c.cables)
}

pub fn shipped(rel: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../scripts/topologies")
        .join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A lab brought up with `lab::run::up` from a topology and templates
/// written into its own tempdir, under a unique name; `lab::run::down` on
/// drop.
pub struct TopoLab {
    dir: tempfile::TempDir,
    /// The lab as `up` left it.
    pub state: railyard_control::lab::run::LabState,
}

impl TopoLab {
    /// Writes `topo` as `NAME.topo` and each `(role, text)` as
    /// `templates/ROLE.conf`, then brings the lab up; its name starts with
    /// `prefix`.
    pub fn up(prefix: &str, topo_name: &str, topo: &str, templates: &[(&str, String)]) -> TopoLab {
        let dir = tempfile::tempdir().expect("tempdir");
        // A switch with `router bgp` runs FRR's daemons as user `frr`, which
        // must reach their state directory under this one.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .expect("chmod tempdir");
        std::fs::create_dir(dir.path().join("templates")).expect("templates dir");
        for (role, text) in templates {
            std::fs::write(dir.path().join(format!("templates/{role}.conf")), text)
                .expect("write template");
        }
        let topology = dir.path().join(format!("{topo_name}.topo"));
        std::fs::write(&topology, topo).expect("write topology");
        let name = format!(
            "{prefix}{}x{}",
            std::process::id() % 100_000,
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let t0 = Instant::now();
        let state = railyard_control::lab::run::up(&railyard_control::lab::run::UpOptions {
            topology,
            name: Some(name),
            state_root: dir.path().join("state"),
            railyard: PathBuf::from(env!("CARGO_BIN_EXE_railyard")),
            timeout: Duration::from_secs(30),
        })
        .unwrap_or_else(|e| panic!("lab up {topo_name}: {e}"));
        eprintln!("lab up {topo_name} ({}): {:?}", state.name, t0.elapsed());
        TopoLab { dir, state }
    }

    /// The lab's state root (`--state-dir`).
    pub fn root(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// The namespace of a node.
    pub fn ns(&self, node: &str) -> String {
        self.state.namespace_of(node)
    }
}

impl Drop for TopoLab {
    fn drop(&mut self) {
        if let Err(e) = railyard_control::lab::run::down(&self.root(), &self.state.name) {
            eprintln!("lab down {}: {e}", self.state.name);
        }
    }
}

/// An Open vSwitch of a test's own in namespace `ns` (userspace datapath,
/// private database and run directory in `dir`), the real peer for VLAN
/// tagging and LACP where the kernel has neither 802.1Q devices nor
/// bonding; dropping it ends its daemons by PID.
pub struct Ovs {
    dir: PathBuf,
    ns: String,
    daemons: Vec<Child>,
}

impl Ovs {
    pub fn start(ns: &str, dir: &Path) -> Ovs {
        std::fs::create_dir_all(dir).expect("ovs dir");
        let db = dir.join("conf.db");
        let sock = dir.join("db.sock");
        ok(&[
            "ovsdb-tool",
            "create",
            db.to_str().unwrap_or_default(),
            "/usr/share/openvswitch/vswitch.ovsschema",
        ]);
        let mut ovs = Ovs {
            dir: dir.to_path_buf(),
            ns: ns.to_string(),
            daemons: Vec::new(),
        };
        ovs.spawn(&[
            "ovsdb-server",
            db.to_str().unwrap_or_default(),
            &format!("--remote=punix:{}", sock.display()),
            "--no-chdir",
            &format!("--unixctl={}", dir.join("ovsdb.ctl").display()),
            &format!("--log-file={}", dir.join("ovsdb.log").display()),
        ]);
        ovs.wait_for(&sock);
        ovs.vsctl(&["--no-wait", "init"]);
        ovs.spawn(&[
            "ovs-vswitchd",
            &format!("unix:{}", sock.display()),
            "--no-chdir",
            &format!("--unixctl={}", dir.join("vswitchd.ctl").display()),
            &format!("--log-file={}", dir.join("vswitchd.log").display()),
        ]);
        ovs.wait_for(&dir.join("vswitchd.ctl"));
        ovs
    }

    fn spawn(&mut self, argv: &[&str]) {
        let child = Command::new("ip")
            .args(["netns", "exec", &self.ns])
            .args(argv)
            .env("OVS_RUNDIR", &self.dir)
            .env("OVS_DBDIR", &self.dir)
            .env("OVS_LOGDIR", &self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", argv[0]));
        self.daemons.push(child);
    }

    fn wait_for(&self, path: &Path) {
        let t = Instant::now();
        while !path.exists() {
            assert!(
                t.elapsed() < Duration::from_secs(10),
                "{} never appeared",
                path.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `ovs-vsctl ARGS…` against this instance.
    pub fn vsctl(&self, args: &[&str]) -> String {
        let db = format!("--db=unix:{}", self.dir.join("db.sock").display());
        let mut all = vec!["ip", "netns", "exec", &self.ns, "ovs-vsctl", &db];
        all.extend_from_slice(args);
        run(&all).unwrap_or_else(|e| panic!("{e}"))
    }

    /// `ovs-appctl ARGS…` against this instance's vswitchd.
    pub fn appctl(&self, args: &[&str]) -> String {
        let target = self.dir.join("vswitchd.ctl");
        let target = target.to_str().unwrap_or_default();
        let mut all = vec!["ip", "netns", "exec", &self.ns, "ovs-appctl", "-t", target];
        all.extend_from_slice(args);
        run(&all).unwrap_or_else(|e| panic!("{e}"))
    }
}

impl Drop for Ovs {
    fn drop(&mut self) {
        for c in self.daemons.iter_mut().rev() {
            // `ip netns exec` execs the daemon: the PID is the daemon's.
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
