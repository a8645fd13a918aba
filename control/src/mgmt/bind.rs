//! Creating the management socket with its final permissions from the
//! first moment it is reachable, and resolving `--socket-group`.

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A group that may use the management socket (`railyard run --socket-group`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Group {
    /// The name as given, for messages.
    pub name: String,
    /// The group ID the socket is given.
    pub gid: u32,
}

impl Group {
    /// Looks a group up by name (or number) through the system's name
    /// service, so that LDAP or sssd groups work as `ls -l` shows them.
    ///
    /// # Errors
    /// A message naming the group when it does not exist.
    pub fn lookup(name: &str) -> Result<Group, String> {
        if let Ok(gid) = name.parse::<u32>() {
            return Ok(Group {
                name: name.to_string(),
                gid,
            });
        }
        let gid = getent(name).or_else(|| etc_group(name)).ok_or_else(|| {
            format!("--socket-group {name}: no such group (see `getent group {name}`)")
        })?;
        Ok(Group {
            name: name.to_string(),
            gid,
        })
    }
}

/// The GID of `name` from `getent group` (NSS: files, LDAP, sssd…); `None`
/// when the group is unknown or `getent` is missing.
fn getent(name: &str) -> Option<u32> {
    let out = std::process::Command::new("getent")
        .args(["group", "--", name])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    gid_of(&String::from_utf8_lossy(&out.stdout), name)
}

/// The GID of `name` in /etc/group, for systems without `getent`.
fn etc_group(name: &str) -> Option<u32> {
    gid_of(&std::fs::read_to_string("/etc/group").ok()?, name)
}

/// The GID of `name` in group(5) lines `name:password:gid:members`.
fn gid_of(text: &str, name: &str) -> Option<u32> {
    text.lines().find_map(|l| {
        let mut f = l.split(':');
        (f.next()? == name).then_some(())?;
        f.nth(1)?.trim().parse().ok()
    })
}

static SEQ: AtomicUsize = AtomicUsize::new(0);

/// Binds a listening socket at `path` that is never reachable with a mode
/// other than `mode` (and group `gid`, when given).
///
/// `bind(2)` creates the socket file with the process umask, and a Unix
/// socket cannot be `fchmod`ed before it is bound, so binding at `path`
/// and then `chmod`ing leaves a window in which anyone the umask lets in
/// can connect. Instead the socket is bound inside a fresh directory beside
/// `path` that only the owner can enter (created 0700 or stricter, then set
/// to exactly 0700: connecting needs search permission on every directory
/// of the path, so nobody else can reach the socket there), given its mode
/// and group there, and renamed into place. `rename(2)` is atomic, so
/// `path` names either the old file or the finished socket, never a
/// half-made one. A stale socket at `path` is replaced by the rename.
pub(crate) fn bind_private(
    path: &Path,
    mode: u32,
    gid: Option<u32>,
) -> std::io::Result<UnixListener> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    // Short, so that the temporary path fits sun_path when `path` does.
    let dir = loop {
        let dir = parent.join(format!(
            ".ry{}.{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => break dir,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    };
    let tmp = dir.join("s");
    let made = (|| {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700))?;
        let listener = UnixListener::bind(&tmp)?;
        if let Some(gid) = gid {
            std::os::unix::fs::chown(&tmp, None, Some(gid))?;
        }
        std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(mode))?;
        std::fs::rename(&tmp, path)?;
        Ok(listener)
    })();
    if made.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    let _ = std::fs::remove_dir(&dir);
    made
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_lines_are_read_by_name_only() {
        let text = "root:x:0:\nrailyard-ops:x:4242:alice,bob\nops:x:12\n";
        assert_eq!(gid_of(text, "railyard-ops"), Some(4242));
        assert_eq!(gid_of(text, "ops"), Some(12));
        assert_eq!(gid_of(text, "railyard"), None);
        assert_eq!(gid_of("broken", "broken"), None);
    }

    #[test]
    fn an_unknown_group_is_a_clear_error() {
        let e = Group::lookup("no-such-group-railyard").unwrap_err();
        assert!(
            e.contains("--socket-group no-such-group-railyard: no such group"),
            "{e}"
        );
        assert_eq!(Group::lookup("0").unwrap().gid, 0);
    }
}
