//! `monitor session N` (local SPAN): its sources, its destination (a port,
//! or railyard's `destination file PATH`), `description` and `[no] shut`.

use std::path::PathBuf;

use super::table::Spec;
use super::value::{self, keyword};
use super::{Args, Builder, Fail, FrameKind, Section};
use crate::lexer::Token;
use crate::model::{parse_interface_spec, IfSpec, InterfaceName};
use crate::monitor::{MonitorDestination, MonitorSession, SpanDirection, MAX_MONITOR_SESSION};
use crate::validate::{At, MonitorAt};

/// Usage of `monitor session`.
pub(super) const MONITOR_SESSION: &str = "monitor session 1-18";
/// Usage of `source interface`.
const SOURCE: &str = "source interface ETHERNET [rx | tx | both]";
/// Usage of `destination`.
const DESTINATION: &str = "destination interface ETHERNET | destination file PATH";

/// Commands under `monitor session N`.
pub(super) static MONITOR: &[Spec] = &[
    Spec::run(&["description"], "description TEXT", description),
    Spec::run(&["no", "description"], "no description", no_description),
    Spec::run(&["source", "interface"], SOURCE, source),
    Spec::run(
        &["no", "source", "interface"],
        "no source interface ETHERNET",
        no_source,
    ),
    Spec::run(&["destination"], DESTINATION, destination),
    Spec::run(&["no", "destination"], "no destination", no_destination),
    Spec::run(&["shutdown"], "shut", shut),
    Spec::run(&["no", "shutdown"], "no shut", no_shut),
];

/// The session number of a `monitor session N` line.
fn session_id(a: &mut Args<'_>) -> Result<u8, Fail> {
    let tok = a.expect("session number")?;
    let id = value::ranged(tok, "monitor session", 1, u64::from(MAX_MONITOR_SESSION))?;
    a.finish()?;
    Ok(id as u8)
}

/// `monitor session N`: open (or reopen) the session.
pub(super) fn monitor_session(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let id = match session_id(a) {
        Ok(id) => id,
        Err(f) => {
            b.enter(FrameKind::Broken(Section::Monitor));
            return Err(f);
        }
    };
    let sessions = &mut b.config.monitor_sessions;
    if let Err(at) = sessions.binary_search_by_key(&id, |s| s.id) {
        sessions.insert(at, MonitorSession::new(id));
    }
    b.enter(FrameKind::Section(Section::Monitor, usize::from(id), 0));
    Ok(())
}

/// `no monitor session N`: delete the session.
pub(super) fn no_monitor_session(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let id = session_id(a)?;
    b.config.monitor_sessions.retain(|s| s.id != id);
    Ok(())
}

/// The session open now.
fn session_mut<'b>(b: &'b mut Builder<'_>) -> Option<&'b mut MonitorSession> {
    let (id, _) = b.section(Section::Monitor)?;
    b.config
        .monitor_sessions
        .iter_mut()
        .find(|s| usize::from(s.id) == id)
}

/// The session number open now.
fn open_id(b: &Builder<'_>) -> Option<u8> {
    b.section(Section::Monitor)
        .and_then(|(id, _)| u8::try_from(id).ok())
}

/// One Ethernet port (or a range of them) named in a session.
fn ethernet(tok: Token<'_>) -> Result<Vec<InterfaceName>, Fail> {
    match parse_interface_spec(tok.text).map_err(|e| Fail::value(tok, e))? {
        IfSpec::Ethernet(names) => Ok(names),
        other => Err(Fail::new(
            tok.col,
            format!("a monitor session cannot use {} interfaces", other.kind()),
            Some("railyard mirrors Ethernet ports, e.g. `Ethernet1/1`".into()),
        )),
    }
}

/// `description TEXT`.
fn description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let (text, _) = a.rest().ok_or_else(|| a.missing("description"))?;
    let text = text.trim_end().to_owned();
    if let Some(s) = session_mut(b) {
        s.description = Some(text);
    }
    Ok(())
}

/// `no description`.
fn no_description(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some(s) = session_mut(b) {
        s.description = None;
    }
    Ok(())
}

/// `source interface NAME [rx|tx|both]`.
fn source(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("interface")?;
    let names = ethernet(tok)?;
    let dir = match a.next_token() {
        Some(t) => match keyword(t, &["rx", "tx", "both"], "direction")? {
            "rx" => SpanDirection::Rx,
            "tx" => SpanDirection::Tx,
            _ => SpanDirection::Both,
        },
        None => SpanDirection::Both,
    };
    a.finish()?;
    let Some(id) = open_id(b) else {
        return Ok(());
    };
    if let Some(s) = session_mut(b) {
        if let Some(MonitorDestination::Interface(d)) = &s.destination {
            if names.contains(d) {
                return Err(also_source(tok.col, *d));
            }
        }
        for name in &names {
            match s.sources.iter_mut().find(|(n, _)| n == name) {
                Some(src) => src.1 = dir,
                None => s.sources.push((*name, dir)),
            }
        }
    }
    for name in names {
        b.mark(At::Monitor(id, MonitorAt::Source(name)), tok.col);
    }
    Ok(())
}

/// The error of a port that is both a session's source and its destination.
fn also_source(col: usize, name: InterfaceName) -> Fail {
    Fail::new(
        col,
        format!("{name} is both a source and the destination of this session"),
        Some("a destination port only sends the copies; mirror it in another session".into()),
    )
}

/// `no source interface NAME [rx|tx|both]`.
fn no_source(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let tok = a.expect("interface")?;
    let names = ethernet(tok)?;
    if let Some(t) = a.next_token() {
        keyword(t, &["rx", "tx", "both"], "direction")?;
    }
    a.finish()?;
    if let Some(s) = session_mut(b) {
        s.sources.retain(|(n, _)| !names.contains(n));
    }
    Ok(())
}

/// `destination interface NAME` or `destination file PATH`.
fn destination(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    let kind = a.expect("`interface` or `file`")?;
    let dest = match keyword(kind, &["interface", "file"], "destination")? {
        "interface" => {
            let tok = a.expect("interface")?;
            a.finish()?;
            match ethernet(tok)?[..] {
                [one] => (MonitorDestination::Interface(one), tok.col),
                _ => {
                    return Err(Fail::new(
                        tok.col,
                        "a session has one destination port",
                        Some("name a single port, e.g. `destination interface Ethernet1/4`".into()),
                    ))
                }
            }
        }
        _ => {
            let (text, col) = a.rest().ok_or_else(|| a.missing("file path"))?;
            (
                MonitorDestination::File(PathBuf::from(text.trim_end())),
                col,
            )
        }
    };
    let Some(id) = open_id(b) else {
        return Ok(());
    };
    if let Some(s) = session_mut(b) {
        if let Some(old) = s.destination.as_ref().filter(|old| **old != dest.0) {
            return Err(Fail::new(
                kind.col,
                format!("monitor session {id} already has a destination ({old})"),
                Some("a session has one destination: remove the other with `no destination`, or use another session".into()),
            ));
        }
        if let MonitorDestination::Interface(d) = &dest.0 {
            if s.sources.iter().any(|(n, _)| n == d) {
                return Err(also_source(dest.1, *d));
            }
        }
        s.destination = Some(dest.0);
    }
    b.mark(At::Monitor(id, MonitorAt::Destination), dest.1);
    Ok(())
}

/// `no destination …`.
fn no_destination(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.skip_rest();
    if let Some(s) = session_mut(b) {
        s.destination = None;
    }
    Ok(())
}

/// `shut`: the session copies nothing (NX-OS's default).
fn shut(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    if let Some(s) = session_mut(b) {
        s.shutdown = true;
    }
    Ok(())
}

/// `no shut`: the session copies.
fn no_shut(b: &mut Builder<'_>, a: &mut Args<'_>) -> Result<(), Fail> {
    a.finish()?;
    if let Some(s) = session_mut(b) {
        s.shutdown = false;
    }
    Ok(())
}
