//! `railyard lab up` and `down`: namespaces, veth cables, host addressing
//! and one `railyard run` per switch, recorded in a state file so that
//! `down` removes exactly what `up` created (processes by PID).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::render::render_all;
use super::routes::{host_commands, host_nics};
use super::topology::{self, Endpoint, Topology};

/// A switch process of a lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SwitchState {
    /// Switch name (its hostname).
    pub name: String,
    /// Its network namespace.
    pub namespace: String,
    /// PID of `railyard run`.
    pub pid: u32,
    /// The process's start time (clock ticks since boot, `/proc/PID/stat`
    /// field 22), so a recycled PID is never signalled.
    pub start_time: u64,
    /// Management socket.
    pub socket: PathBuf,
    /// Generated configuration file.
    pub config: PathBuf,
    /// stderr of the switch.
    pub log: PathBuf,
}

/// A host of a lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostState {
    /// Host name.
    pub name: String,
    /// Its network namespace.
    pub namespace: String,
    /// `ifname address/len` of each NIC.
    pub addresses: Vec<(String, String)>,
}

/// Everything `down`, `status` and `cabling` need to know about a lab.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LabState {
    /// The lab's unique name (namespace prefix).
    pub name: String,
    /// Topology name (file stem).
    pub topology_name: String,
    /// The topology as parsed at `up`.
    pub topology: Topology,
    /// The state directory.
    pub dir: PathBuf,
    /// Namespaces created, in order.
    pub namespaces: Vec<String>,
    /// Switch processes started.
    pub switches: Vec<SwitchState>,
    /// Hosts.
    pub hosts: Vec<HostState>,
}

impl LabState {
    fn save(&self) -> Result<(), String> {
        let path = self.dir.join("state.json");
        let text = serde_json::to_string_pretty(self).map_err(|e| e.to_string())?;
        let tmp = self.dir.join("state.json.tmp");
        std::fs::write(&tmp, text)
            .and_then(|()| std::fs::rename(&tmp, &path))
            .map_err(|e| format!("writing {}: {e}", path.display()))
    }

    /// The namespace of a topology node.
    pub fn namespace_of(&self, node: &str) -> String {
        format!("{}-{node}", self.name)
    }
}

/// The state directory root: `$RAILYARD_LAB_DIR`, else `/run/railyard-lab`.
pub fn default_state_root() -> PathBuf {
    std::env::var_os("RAILYARD_LAB_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/run/railyard-lab"))
}

/// Reads the state of lab `name`.
///
/// # Errors
/// When there is no such lab or its state file is unreadable.
pub fn load_state(root: &Path, name: &str) -> Result<LabState, String> {
    let path = root.join(name).join("state.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "no lab named {name} (cannot read {}: {e}); `railyard lab list` shows the labs",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Every lab with a state file under `root`, sorted naturally by name.
pub fn list(root: &Path) -> Vec<LabState> {
    let mut out: Vec<LabState> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| load_state(root, &e.file_name().to_string_lossy()).ok())
        .collect();
    out.sort_by(|a, b| crate::natural::cmp(&a.name, &b.name));
    out
}

fn run(args: &[&str]) -> Result<String, String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            let hint = if e.kind() == std::io::ErrorKind::NotFound {
                format!(
                    " (install {}: apt-get install {})",
                    args[0],
                    match args[0] {
                        "ip" => "iproute2",
                        other => other,
                    }
                )
            } else {
                String::new()
            };
            format!("{}: {e}{hint}", args.join(" "))
        })?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn netns_exists(ns: &str) -> bool {
    Path::new("/run/netns").join(ns).exists()
}

/// Options of `up`.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// The topology file.
    pub topology: PathBuf,
    /// Lab name; default `TOPOLOGY-XXXX` with a random suffix.
    pub name: Option<String>,
    /// State directory root.
    pub state_root: PathBuf,
    /// The `railyard` binary the switches run.
    pub railyard: PathBuf,
    /// How long to wait for each switch's socket.
    pub timeout: Duration,
}

fn random_suffix() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let x = (nanos ^ std::process::id().rotate_left(16)).wrapping_mul(2_654_435_761);
    format!("{:04x}", x >> 16 & 0xffff)
}

/// Checks a user-given lab name.
fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "lab name {name:?}: use at most 40 letters, digits, `-` or `_`"
        ))
    }
}

/// Builds the lab: namespaces, cables, hosts, switches; waits until every
/// switch answers on its socket. On any error it removes what it created.
///
/// # Errors
/// What failed; the partial lab is already torn down.
pub fn up(opts: &UpOptions) -> Result<LabState, String> {
    let topo = topology::parse_file(&opts.topology)?;
    let rendered = render_all(&topo)?;
    let name = match &opts.name {
        Some(n) => {
            check_name(n)?;
            n.clone()
        }
        None => loop {
            let n = format!("{}-{}", topo.name, random_suffix());
            if !opts.state_root.join(&n).exists() {
                break n;
            }
        },
    };
    let dir = opts.state_root.join(&name);
    if dir.join("state.json").exists() {
        return Err(format!(
            "a lab named {name} exists already (state in {}); `railyard lab down {name}` first",
            dir.display()
        ));
    }
    std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut state = LabState {
        name: name.clone(),
        topology_name: topo.name.clone(),
        topology: topo.clone(),
        dir: dir.clone(),
        namespaces: Vec::new(),
        switches: Vec::new(),
        hosts: Vec::new(),
    };
    state.save()?;
    match build(&mut state, &topo, &rendered, opts) {
        Ok(()) => Ok(state),
        Err(e) => {
            let cleanup = match down_state(&state, None) {
                Ok(_) => String::new(),
                Err(c) => format!("\nand cleaning up failed too: {c}"),
            };
            Err(format!("lab {name}: {e}{cleanup}"))
        }
    }
}

fn build(
    state: &mut LabState,
    topo: &Topology,
    rendered: &[super::render::Rendered],
    opts: &UpOptions,
) -> Result<(), String> {
    let nodes: Vec<&str> = topo
        .switches
        .iter()
        .map(|s| s.name.as_str())
        .chain(topo.hosts.iter().map(|h| h.name.as_str()))
        .collect();
    for node in nodes {
        let ns = state.namespace_of(node);
        if netns_exists(&ns) {
            return Err(format!("namespace {ns} exists already"));
        }
        run(&["ip", "netns", "add", &ns])?;
        state.namespaces.push(ns.clone());
        state.save()?;
        run(&["ip", "-n", &ns, "link", "set", "lo", "up"])?;
    }
    for l in &topo.links {
        let end = |e: &Endpoint| (state.namespace_of(&e.node), topo.ifname(e));
        let ((ans, aif), (bns, bif)) = (end(&l.a), end(&l.b));
        run(&[
            "ip", "link", "add", &aif, "netns", &ans, "type", "veth", "peer", "name", &bif,
            "netns", &bns,
        ])?;
        let mtu = l.mtu.to_string();
        for (e, ns, ifname) in [(&l.a, &ans, &aif), (&l.b, &bns, &bif)] {
            if topo.is_switch(&e.node) {
                // A switch port belongs to railyard: the kernel of the
                // switch's namespace must not send on it (IPv6 router and
                // neighbour solicitations, MLD reports at every link up),
                // or the far end receives frames this switch never sent.
                run(&[
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "sysctl",
                    "-qw",
                    &format!("net.ipv6.conf.{ifname}.disable_ipv6=1"),
                ])?;
            }
            run(&["ip", "-n", ns, "link", "set", ifname, "mtu", &mtu, "up"])?;
            // AF_PACKET sees frames as the kernel built them: without this,
            // hosts hand the switch 64 KB TSO/GSO frames with partial checksums.
            run(&[
                "ip", "netns", "exec", ns, "ethtool", "-K", ifname, "tso", "off", "gso", "off",
                "gro", "off", "tx", "off",
            ])?;
        }
    }
    for h in &topo.hosts {
        let ns = state.namespace_of(&h.name);
        let nics = host_nics(topo, &h.name);
        for cmd in host_commands(&nics) {
            let mut args = vec!["ip", "-n", &ns];
            args.extend(cmd.iter().map(String::as_str));
            run(&args)?;
        }
        state.hosts.push(HostState {
            name: h.name.clone(),
            namespace: ns,
            addresses: nics
                .iter()
                .map(|n| (n.ifname.clone(), format!("{}/{}", n.address, n.subnet.len)))
                .collect(),
        });
    }
    let mut children = Vec::new();
    for r in rendered {
        let ns = state.namespace_of(&r.switch);
        let config = state.dir.join(format!("{}.conf", r.switch));
        let socket = state.dir.join(format!("{}.sock", r.switch));
        let log = state.dir.join(format!("{}.log", r.switch));
        std::fs::write(&config, &r.config)
            .map_err(|e| format!("writing {}: {e}", config.display()))?;
        let _ = std::fs::remove_file(&socket);
        let open = |p: &Path| File::create(p).map_err(|e| format!("{}: {e}", p.display()));
        let child = {
            use std::os::unix::process::CommandExt;
            Command::new("ip")
                .args(["netns", "exec", &ns])
                .arg(&opts.railyard)
                .arg("run")
                .arg("--config")
                .arg(&config)
                .arg("--socket")
                .arg(&socket)
                .stdin(Stdio::null())
                .stdout(Stdio::from(open(&log.with_extension("out"))?))
                .stderr(Stdio::from(open(&log)?))
                // Its own process group: a Ctrl-C at the terminal that ran
                // `lab up` does not reach the switches.
                .process_group(0)
                .spawn()
                .map_err(|e| format!("starting railyard in {ns}: {e}"))?
        };
        // `ip netns exec` execs railyard: the child's PID is the switch's.
        let pid = child.id();
        state.switches.push(SwitchState {
            name: r.switch.clone(),
            namespace: ns,
            pid,
            start_time: proc_start_time(pid).unwrap_or(0),
            socket,
            config,
            log,
        });
        state.save()?;
        children.push(child);
    }
    let deadline = Instant::now() + opts.timeout;
    for (sw, child) in state.switches.iter().zip(children.iter_mut()) {
        loop {
            if crate::mgmt::fetch_stats(&sw.socket).is_ok() {
                break;
            }
            let exited = child.try_wait().ok().flatten();
            if exited.is_some() || Instant::now() > deadline {
                let log = std::fs::read_to_string(&sw.log).unwrap_or_default();
                return Err(format!(
                    "switch {} {} (log {}):\n{}",
                    sw.name,
                    match exited {
                        Some(st) => format!("exited ({st})"),
                        None => "did not answer on its socket in time".into(),
                    },
                    sw.log.display(),
                    log.trim_end()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    // Record start times again now that railyard has surely exec'd.
    for sw in &mut state.switches {
        if let Some(t) = proc_start_time(sw.pid) {
            sw.start_time = t;
        }
    }
    state.save()
}

/// `(state, start time)` of a process from `/proc/PID/stat`.
fn proc_stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces.
    let rest = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    // Field 22 overall is the 20th after the name.
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

fn proc_start_time(pid: u32) -> Option<u64> {
    proc_stat(pid).map(|(_, t)| t)
}

/// Whether the switch process recorded in `sw` is still running (a zombie
/// or a recycled PID counts as gone).
pub fn switch_alive(sw: &SwitchState) -> bool {
    match proc_stat(sw.pid) {
        Some((state, start)) => {
            state != 'Z' && state != 'X' && (sw.start_time == 0 || start == sw.start_time)
        }
        None => false,
    }
}

fn signal(pid: u32, sig: &str) {
    let _ = run(&["kill", "-s", sig, &pid.to_string()]);
}

/// What `down` removed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DownReport {
    /// Switch PIDs stopped with SIGTERM.
    pub terminated: Vec<u32>,
    /// Switch PIDs that needed SIGKILL.
    pub killed: Vec<u32>,
    /// Namespaces deleted.
    pub namespaces: Vec<String>,
    /// Where the switches' final counters (`SWITCH.out`), logs and
    /// configurations were kept ([`final_dir`]).
    pub kept: Option<PathBuf>,
    /// Switches that left no final counters (killed, or died silently).
    pub no_counters: Vec<String>,
}

/// Where `down` keeps lab `name`'s final counters, logs and configurations:
/// `ROOT/NAME.final`, beside the state directory it removes (lab names have
/// no `.`, so this is never a lab's own directory).
pub fn final_dir(root: &Path, name: &str) -> PathBuf {
    root.join(format!("{name}.final"))
}

/// Moves each switch's `SWITCH.out` (the final counters it printed when it
/// stopped), `SWITCH.log` and `SWITCH.conf` into [`final_dir`], replacing
/// what an earlier lab of the same name left there. Returns the switches
/// whose counters are empty.
fn keep_final(state: &LabState, kept: &Path) -> Result<Vec<String>, String> {
    let err = |p: &Path, e: std::io::Error| format!("keeping {}: {e}", p.display());
    if kept.exists() {
        std::fs::remove_dir_all(kept).map_err(|e| err(kept, e))?;
    }
    std::fs::create_dir_all(kept).map_err(|e| err(kept, e))?;
    let mut no_counters = Vec::new();
    for sw in &state.switches {
        let out = sw.log.with_extension("out");
        if std::fs::metadata(&out).map_or(true, |m| m.len() == 0) {
            no_counters.push(sw.name.clone());
        }
        for src in [&out, &sw.log, &sw.config] {
            let Some(file) = src.file_name() else {
                continue;
            };
            let dst = kept.join(file);
            if src.exists() && std::fs::rename(src, &dst).is_err() {
                std::fs::copy(src, &dst).map_err(|e| err(src, e))?;
            }
        }
    }
    Ok(no_counters)
}

/// Stops the lab's switches and deletes its namespaces and state
/// directory; with `keep`, first moves the final counters and logs to
/// [`final_dir`].
fn down_state(state: &LabState, keep: Option<PathBuf>) -> Result<DownReport, String> {
    let mut report = DownReport::default();
    let live: Vec<&SwitchState> = state.switches.iter().filter(|s| switch_alive(s)).collect();
    for sw in &live {
        signal(sw.pid, "TERM");
        report.terminated.push(sw.pid);
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while live.iter().any(|s| switch_alive(s)) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    for sw in live.iter().filter(|s| switch_alive(s)) {
        signal(sw.pid, "KILL");
        report.killed.push(sw.pid);
    }
    let mut errors = Vec::new();
    for ns in state.namespaces.iter().rev() {
        if netns_exists(ns) {
            match run(&["ip", "netns", "del", ns]) {
                Ok(_) => report.namespaces.push(ns.clone()),
                Err(e) => errors.push(e),
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors.join("\n"));
    }
    if let Some(kept) = keep {
        report.no_counters = keep_final(state, &kept)?;
        report.kept = Some(kept);
    }
    if let Err(e) = std::fs::remove_dir_all(&state.dir) {
        if e.kind() != std::io::ErrorKind::NotFound {
            return Err(format!("removing {}: {e}", state.dir.display()));
        }
    }
    Ok(report)
}

/// What `railyard lab down ARG` removes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DownTarget {
    /// The lab of that name.
    Lab(String),
    /// ARG names no lab but a topology with exactly this one lab.
    OnlyLabOf {
        /// The topology (file stem).
        topology: String,
        /// Its lab.
        lab: String,
    },
    /// ARG names a topology with several labs: the user must pick.
    Ambiguous {
        /// The topology (file stem).
        topology: String,
        /// Its labs, sorted.
        labs: Vec<String>,
    },
    /// Neither a lab nor a topology with a lab: nothing to remove.
    Nothing,
}

/// The topology name `arg` stands for: the file stem of a path
/// (`scripts/topologies/rail-spine.topo` → `rail-spine`), else `arg`.
pub fn topology_stem(arg: &str) -> String {
    Path::new(arg)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| arg.to_string())
}

/// The labs under `root` built from topology `arg` (a name or a file).
pub fn labs_of(root: &Path, arg: &str) -> Vec<String> {
    let stem = topology_stem(arg);
    list(root)
        .into_iter()
        .filter(|s| s.topology_name == stem)
        .map(|s| s.name)
        .collect()
}

/// Decides what `down ARG` removes: the lab named ARG if there is one,
/// else the only lab of the topology ARG names (`down rail-spine` after
/// `up rail-spine`); several labs of that topology are for the user to
/// choose between.
pub fn down_target(root: &Path, arg: &str) -> DownTarget {
    if root.join(arg).join("state.json").exists() {
        return DownTarget::Lab(arg.to_string());
    }
    let topology = topology_stem(arg);
    let mut labs = labs_of(root, arg);
    match labs.len() {
        0 => DownTarget::Nothing,
        1 => DownTarget::OnlyLabOf {
            topology,
            lab: labs.remove(0),
        },
        _ => DownTarget::Ambiguous { topology, labs },
    }
}

/// Tears lab `name` down: stops its switches by PID (SIGTERM, SIGKILL after
/// 5 s), keeps their final counters, logs and configurations in
/// [`final_dir`], deletes its namespaces and its state directory. A lab
/// that does not exist (any more) is not an error: `Ok(None)`.
///
/// # Errors
/// Namespaces that could not be deleted (the state is kept for a retry).
pub fn down(root: &Path, name: &str) -> Result<Option<DownReport>, String> {
    if !root.join(name).join("state.json").exists() {
        return Ok(None);
    }
    let state = load_state(root, name)?;
    down_state(&state, Some(final_dir(root, name))).map(Some)
}
