//! FRR's daemons run by the switch: zebra, bgpd and bfdd in the switch's
//! namespace, started with it and stopped with it.
//!
//! Each switch gets a directory of its own (beside its management socket)
//! for the daemons' configuration, vty sockets, zebra's API socket, PID
//! files and logs, so that several switches on one machine (a lab) run
//! several FRRs without meeting. The daemons run in the foreground as our
//! children, under Debian's `frr` user (the package builds them to insist
//! that their user be in the `frrvty` group, which root is not); the
//! configuration is loaded into them with `vtysh -b`, as FRR's own init
//! script does with the integrated `frr.conf`.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Where Debian installs the daemons (override with `RAILYARD_FRR_DIR`).
pub const DEFAULT_FRR_DIR: &str = "/usr/lib/frr";
/// The daemons, in the order they start (zebra first: the others connect
/// to it).
const DAEMONS: [&str; 3] = ["zebra", "bgpd", "bfdd"];
/// How long a daemon may take to open its vty socket.
const START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a daemon may take to exit after SIGTERM before it is killed.
const STOP_TIMEOUT: Duration = Duration::from_secs(3);

/// FRR's daemons serving one switch.
pub struct FrrDaemons {
    dir: PathBuf,
    children: Vec<(&'static str, Child)>,
}

/// The FRR state directory of the switch whose management socket is `socket`.
pub fn state_dir(socket: &Path) -> PathBuf {
    let mut s = socket.as_os_str().to_owned();
    s.push(".frr");
    PathBuf::from(s)
}

/// The `frr` user's and group's ids, from the system's account files.
fn frr_ids() -> Option<(u32, u32)> {
    let id = |file: &str| -> Option<u32> {
        fs::read_to_string(file).ok()?.lines().find_map(|l| {
            let mut f = l.split(':');
            (f.next()? == "frr").then(|| f.nth(1)?.parse().ok())?
        })
    };
    Some((id("/etc/passwd")?, id("/etc/group")?))
}

/// The first existing ancestor of `dir` that user `uid` (not in its group)
/// cannot search.
fn closed_ancestor(dir: &Path, uid: u32) -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let absolute = std::path::absolute(dir).ok()?;
    absolute.ancestors().skip(1).find_map(|a| {
        let m = fs::metadata(a).ok()?;
        (m.uid() != uid && m.mode() & 0o001 == 0).then(|| a.to_path_buf())
    })
}

fn frr_dir() -> PathBuf {
    std::env::var_os("RAILYARD_FRR_DIR")
        .map_or_else(|| PathBuf::from(DEFAULT_FRR_DIR), PathBuf::from)
}

impl FrrDaemons {
    /// Writes `frr_conf` into `dir`, starts zebra, bgpd and bfdd on it and
    /// loads the configuration into them.
    ///
    /// # Errors
    /// FRR not installed, a daemon that does not come up (with the end of
    /// its log), or a configuration FRR refuses (with vtysh's words).
    pub fn start(dir: &Path, frr_conf: &str) -> Result<FrrDaemons, String> {
        Self::start_from(&frr_dir(), dir, frr_conf)
    }

    fn start_from(bin: &Path, dir: &Path, frr_conf: &str) -> Result<FrrDaemons, String> {
        if !bin.join("zebra").exists() {
            return Err(format!(
                "FRR is not installed ({} has no zebra): install Debian's `frr` package, \
                 or run with `--routing kernel` (routes from the kernel, no FRR) or `--routing off`",
                bin.display()
            ));
        }
        let (uid, gid) = frr_ids()
            .ok_or("FRR's `frr` user or group is missing (is Debian's `frr` package installed?)")?;
        let io = |what: &str, e: io::Error| {
            format!("FRR state directory {}: {what}: {e}", dir.display())
        };
        if let Some(closed) = closed_ancestor(dir, uid) {
            return Err(format!(
                "FRR's daemons run as user `frr` and cannot reach {}: {} is not searchable by \
                 others (chmod o+x it, or put the management socket elsewhere)",
                dir.display(),
                closed.display()
            ));
        }
        if dir.exists() {
            // Sockets and PID files of an earlier run that did not stop cleanly.
            fs::remove_dir_all(dir).map_err(|e| io("clearing", e))?;
        }
        fs::create_dir_all(dir).map_err(|e| io("creating", e))?;
        fs::set_permissions(dir, fs::Permissions::from_mode(0o755)).map_err(|e| io("chmod", e))?;
        fs::write(dir.join("frr.conf"), frr_conf).map_err(|e| io("writing frr.conf", e))?;
        fs::write(dir.join("vtysh.conf"), "").map_err(|e| io("writing vtysh.conf", e))?;
        for f in ["", "frr.conf", "vtysh.conf"] {
            std::os::unix::fs::chown(dir.join(f), Some(uid), Some(gid))
                .map_err(|e| io("chown", e))?;
        }
        let mut me = FrrDaemons {
            dir: dir.to_path_buf(),
            children: Vec::new(),
        };
        for daemon in DAEMONS {
            me.spawn(bin, daemon)?;
        }
        let out = me.vtysh_args(&["--config_dir", &dir.to_string_lossy(), "-b"])?;
        if !out.0 {
            return Err(format!(
                "FRR refused the configuration:\n{}",
                out.1.trim_end()
            ));
        }
        Ok(me)
    }

    fn spawn(&mut self, bin: &Path, daemon: &'static str) -> Result<(), String> {
        let d = &self.dir;
        let path = |f: &str| d.join(f).to_string_lossy().into_owned();
        let mut cmd = Command::new(bin.join(daemon));
        cmd.args(["-u", "frr", "-g", "frr", "--vty_socket"])
            .arg(d)
            .args([
                "-z",
                &path("zserv.api"),
                "-i",
                &path(&format!("{daemon}.pid")),
            ])
            .arg("--log")
            .arg(format!("file:{}", path(&format!("{daemon}.log"))));
        if daemon == "bfdd" {
            cmd.args(["--bfdctl", &path("bfdd.sock")]);
        }
        let err = fs::File::create(d.join(format!("{daemon}.err")))
            .map_err(|e| format!("FRR's {daemon}: {}: {e}", d.display()))?;
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err)
            .spawn()
            .map_err(|e| format!("cannot start FRR's {daemon}: {e}"))?;
        self.children.push((daemon, child));
        let vty = d.join(format!("{daemon}.vty"));
        let deadline = Instant::now() + START_TIMEOUT;
        while !vty.exists() {
            if let Some((_, c)) = self.children.last_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    let err =
                        fs::read_to_string(d.join(format!("{daemon}.err"))).unwrap_or_default();
                    return Err(format!(
                        "FRR's {daemon} exited at start ({status}): {}{}",
                        err.trim(),
                        self.log_tail(daemon)
                    ));
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "FRR's {daemon} did not open {} within {} s{}",
                    vty.display(),
                    START_TIMEOUT.as_secs(),
                    self.log_tail(daemon)
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn log_tail(&self, daemon: &str) -> String {
        let log = fs::read_to_string(self.dir.join(format!("{daemon}.log"))).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(5)..].join("\n");
        if tail.is_empty() {
            String::new()
        } else {
            format!("\n{tail}")
        }
    }

    /// The directory with the daemons' configuration, sockets and logs.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Runs one `vtysh -c COMMAND` against these daemons.
    ///
    /// # Errors
    /// vtysh's complaint when the command fails.
    pub fn vtysh(&self, command: &str) -> Result<String, String> {
        match self.vtysh_args(&["-c", command])? {
            (true, out) => Ok(out),
            (false, out) => Err(format!("vtysh -c {command:?}: {}", out.trim_end())),
        }
    }

    fn vtysh_args(&self, args: &[&str]) -> Result<(bool, String), String> {
        vtysh(&self.dir, args)
    }
}

/// Runs vtysh against the daemons whose vty sockets are in `dir`; returns
/// whether it succeeded and what it printed.
///
/// # Errors
/// When vtysh cannot be run at all.
pub fn vtysh(dir: &Path, args: &[&str]) -> Result<(bool, String), String> {
    let out = Command::new("vtysh")
        .arg("--vty_socket")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run vtysh: {e}"))?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), text))
}

impl Drop for FrrDaemons {
    /// Stops the daemons by PID, last started first: SIGTERM (zebra then
    /// removes the routes it installed), SIGKILL after a grace period.
    fn drop(&mut self) {
        for (_, child) in self.children.iter_mut().rev() {
            if matches!(child.try_wait(), Ok(None)) {
                if let Some(pid) = i32::try_from(child.id())
                    .ok()
                    .and_then(rustix::process::Pid::from_raw)
                {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
                }
            }
        }
        let deadline = Instant::now() + STOP_TIMEOUT;
        for (daemon, child) in self.children.iter_mut().rev() {
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if matches!(child.try_wait(), Ok(None)) {
                tracing::warn!("FRR's {daemon} did not stop on SIGTERM; killing it");
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_directory_sits_beside_the_socket() {
        assert_eq!(
            state_dir(Path::new("/run/railyard/sw1.sock")),
            PathBuf::from("/run/railyard/sw1.sock.frr")
        );
    }

    #[test]
    fn a_directory_the_frr_user_cannot_reach_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("closed");
        fs::create_dir(&closed).unwrap();
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o700)).unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let inside = closed.join("sw.sock.frr");
        assert_eq!(closed_ancestor(&inside, u32::MAX - 1), Some(closed.clone()));
        fs::set_permissions(&closed, fs::Permissions::from_mode(0o711)).unwrap();
        assert_eq!(closed_ancestor(&inside, u32::MAX - 1), None);
    }

    #[test]
    fn a_missing_frr_says_how_to_get_it_or_do_without() {
        let dir = tempfile::tempdir().unwrap();
        let Err(e) =
            FrrDaemons::start_from(Path::new("/nonexistent-frr"), &dir.path().join("frr"), "")
        else {
            panic!("started without FRR");
        };
        assert!(e.contains("install Debian's `frr` package"), "{e}");
        assert!(e.contains("--routing kernel"), "{e}");
    }
}
