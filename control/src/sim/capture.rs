//! `railyard sim --capture NODE:PORT --capture-out FILE`: the frames a
//! few chosen switch ports send and receive, as one pcapng with an
//! interface per port (a fabric of a thousand NICs captured whole would
//! be gigabytes, so only the ports asked for are).
//!
//! Each captured port writes its frames, in its own time order, to a part
//! file of its own: a port belongs to one worker thread, so nothing is
//! shared while the run goes and the parts do not depend on how the
//! threads interleaved. When the run ends the parts are merged by
//! (virtual time, interface) into the file, after a header naming each
//! interface; so the same seed gives the same file, byte for byte, on any
//! number of threads. Timestamps are virtual time from a fixed epoch
//! ([`EPOCH_NS`]), in nanoseconds (`if_tsresol` 9).

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use railyard_config::InterfaceName;
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::port::pcap::ng::{BlockWriter, FLAGS_INBOUND, FLAGS_OUTBOUND};
use railyard_dataplane::Burst;
use serde::Serialize;

use crate::lab::topology::{did_you_mean, Topology};

/// Where virtual time 0 lies in the capture: 2025-01-01T00:00:00Z, so
/// Wireshark shows a plausible date and every run starts at the same one.
pub const EPOCH_NS: u64 = 1_735_689_600 * 1_000_000_000;

/// Snapshot length: the longest frame a switch port carries (jumbo).
const SNAPLEN: u32 = 10_240;

/// A port to capture, resolved from `--capture NODE:PORT`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CaptureSpec {
    /// The switch.
    pub switch: String,
    /// Its interface, as the configuration names it.
    pub port: String,
    /// The other end of its cable, `node:port`.
    pub peer: String,
}

impl CaptureSpec {
    /// The interface's name in the pcapng: `switch:interface`.
    fn if_name(&self) -> String {
        format!("{}:{}", self.switch, self.port)
    }
}

/// Resolves `--capture` specs against the topology: each must be a switch
/// port with a cable. Asking twice for one port captures it once.
///
/// # Errors
/// An unknown node or port (with the nearest names), a host's end (with
/// the switch end of its cable to ask for instead), or a port without a
/// cable.
pub(super) fn resolve(t: &Topology, specs: &[String]) -> Result<Vec<CaptureSpec>, String> {
    let mut out: Vec<CaptureSpec> = Vec::new();
    for spec in specs {
        let c = resolve_one(t, spec).map_err(|e| format!("--capture {spec}: {e}"))?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Ok(out)
}

fn resolve_one(t: &Topology, spec: &str) -> Result<CaptureSpec, String> {
    let (node, port) = spec
        .split_once(':')
        .ok_or("expected SWITCH:INTERFACE, like leaf1:Ethernet1/1")?;
    let hint = |h: Option<String>| h.map_or(String::new(), |h| format!("; {h}"));
    if t.hosts.iter().any(|h| h.name == node) {
        let switch_end = t.links.iter().find_map(|l| {
            if l.a.node == node && l.a.port == port {
                Some(&l.b)
            } else if l.b.node == node && l.b.port == port {
                Some(&l.a)
            } else {
                None
            }
        });
        return Err(match switch_end {
            Some(e) => format!(
                "{node} is a host; capture its cable at the switch end, --capture {}:{}",
                e.node, e.port
            ),
            None => format!("{node} is a host; capture a switch port"),
        });
    }
    if !t.is_switch(node) {
        let names = t
            .switches
            .iter()
            .map(|s| s.name.as_str())
            .chain(t.hosts.iter().map(|h| h.name.as_str()));
        return Err(format!(
            "no switch {node:?} in {}{}",
            t.path.display(),
            hint(did_you_mean(node, names))
        ));
    }
    let canonical = port
        .parse::<InterfaceName>()
        .map_or_else(|_| port.to_string(), |n| n.to_string());
    // The switch's cabled ports: (its port, the far end).
    let cabled: Vec<(&str, String)> = t
        .links
        .iter()
        .flat_map(|l| [(&l.a, &l.b), (&l.b, &l.a)])
        .filter(|(me, _)| me.node == node)
        .map(|(me, far)| (me.port.as_str(), format!("{}:{}", far.node, far.port)))
        .collect();
    match cabled.iter().find(|(p, _)| *p == canonical) {
        Some((p, peer)) => Ok(CaptureSpec {
            switch: node.to_string(),
            port: (*p).to_string(),
            peer: peer.clone(),
        }),
        None => Err(format!(
            "{node} has no cabled interface {canonical}{}",
            hint(
                did_you_mean(&canonical, cabled.iter().map(|(p, _)| *p))
                    .or_else(|| did_you_mean(port, cabled.iter().map(|(p, _)| *p)))
            )
        )),
    }
}

/// What one captured port wrote, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CaptureSummary {
    /// The interface's name in the pcapng (`switch:interface`).
    pub interface: String,
    /// Frames written: those the port received and sent.
    pub frames: u64,
    /// Frames past `--capture-limit`, counted but not written.
    pub left_out: u64,
}

/// One captured port's part file, written by the worker that owns the
/// port.
#[derive(Debug)]
struct Part {
    path: PathBuf,
    out: BufWriter<File>,
    blocks: BlockWriter,
    /// Where each frame encoded for a transmit ends in `blocks`.
    ends: Vec<usize>,
    interface: u32,
    limit: u64,
    frames: u64,
    left_out: u64,
    /// The first write error; later frames are counted as left out.
    error: Option<String>,
    /// The run carries no data (`--data off`): a RoCE payload holds
    /// whatever its buffer held before, so it is written as zeros.
    blank_payload: bool,
    /// A frame with its payload blanked.
    scratch: Vec<u8>,
}

impl Part {
    /// Room left under the limit.
    fn room(&self) -> usize {
        usize::try_from(self.limit.saturating_sub(self.frames)).unwrap_or(usize::MAX)
    }

    /// Writes the first `n` frames encoded in `blocks`; counts `missed`
    /// frames as left out.
    fn commit(&mut self, n: usize, missed: usize) {
        self.left_out += missed as u64;
        if n > 0 {
            let end = self.ends[n - 1];
            if self.error.is_none() {
                match self.out.write_all(&self.blocks.bytes()[..end]) {
                    Ok(()) => self.frames += n as u64,
                    Err(e) => {
                        self.error = Some(format!("{}: {e}", self.path.display()));
                        self.left_out += n as u64;
                    }
                }
            } else {
                self.left_out += n as u64;
            }
        }
        self.blocks.clear();
        self.ends.clear();
    }

    fn encode<'a>(&mut self, frames: impl Iterator<Item = &'a [u8]>, now: Nanos, flags: u32) {
        for data in frames {
            let data = if self.blank_payload {
                blank_payload(data, &mut self.scratch)
            } else {
                data
            };
            self.blocks
                .packet(self.interface, EPOCH_NS + now, data, SNAPLEN, flags, None);
            self.ends.push(self.blocks.bytes().len());
        }
    }
}

/// `frame` with its RoCE payload, pad and ICRC as zeros (in `scratch`),
/// or `frame` itself when it is no RoCE packet or has no payload.
fn blank_payload<'a>(frame: &'a [u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    use railyard_roce::wire::RxFrame;
    let start = match RxFrame::parse_with(frame, false) {
        Ok(RxFrame::Roce(r)) if !r.payload.is_empty() => {
            r.payload.as_ptr() as usize - frame.as_ptr() as usize
        }
        _ => return frame,
    };
    scratch.clear();
    scratch.extend_from_slice(frame);
    scratch[start..].fill(0);
    scratch
}

/// A captured port's tap, kept by its cable end ([`super::engine::NotifyingPort`]);
/// the run keeps a clone to finish the file. The lock is only ever taken
/// by the one worker that runs the port, and by the run after it ends.
#[derive(Debug, Clone)]
pub(super) struct Tap(Arc<Mutex<Part>>);

impl Tap {
    fn lock(&self) -> MutexGuard<'_, Part> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Before a transmit: encodes the frames of `burst` the limit leaves
    /// room for, returning how many.
    pub(super) fn before_tx(&self, burst: &Burst, now: Nanos) -> usize {
        let mut p = self.lock();
        let take = burst.len().min(p.room());
        p.encode(
            burst.iter().take(take).map(|b| b.data()),
            now,
            FLAGS_OUTBOUND,
        );
        take
    }

    /// After a transmit that took `sent` frames from the front of the
    /// burst, `encoded` of which were encoded: writes those sent.
    pub(super) fn after_tx(&self, encoded: usize, sent: usize) {
        let written = encoded.min(sent);
        self.lock().commit(written, sent - written);
    }

    /// After a receive that appended `n` frames to `burst` at `now`.
    pub(super) fn rx(&self, burst: &Burst, n: usize, now: Nanos) {
        if n == 0 {
            return;
        }
        let mut p = self.lock();
        let take = n.min(p.room());
        let first = burst.len() - n;
        p.encode(
            burst.iter().skip(first).take(take).map(|b| b.data()),
            now,
            FLAGS_INBOUND,
        );
        p.commit(take, n - take);
    }
}

/// The captures of one run: a tap per port, and where the file goes.
#[derive(Debug)]
pub(super) struct Captures {
    out: PathBuf,
    specs: Vec<CaptureSpec>,
    taps: Vec<Tap>,
}

impl Captures {
    /// Part files next to `out` for `specs`, each port's frames limited to
    /// `limit`; `carry_data` false blanks RoCE payloads (see [`Part`]).
    ///
    /// # Errors
    /// A part file cannot be created.
    pub(super) fn create(
        out: &Path,
        specs: Vec<CaptureSpec>,
        limit: u64,
        carry_data: bool,
    ) -> Result<Self, String> {
        let taps = (0..specs.len())
            .map(|i| {
                let path = part_path(out, i);
                let file = File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                Ok(Tap(Arc::new(Mutex::new(Part {
                    path,
                    out: BufWriter::new(file),
                    blocks: BlockWriter::new(),
                    ends: Vec::new(),
                    interface: i as u32,
                    limit,
                    frames: 0,
                    left_out: 0,
                    error: None,
                    blank_payload: !carry_data,
                    scratch: Vec::new(),
                }))))
            })
            .collect::<Result<Vec<_>, String>>()?;
        Ok(Captures {
            out: out.to_path_buf(),
            specs,
            taps,
        })
    }

    /// The tap of `switch`'s `port`, if it is captured.
    pub(super) fn tap(&self, switch: &str, port: &str) -> Option<Tap> {
        self.specs
            .iter()
            .position(|c| c.switch == switch && c.port == port)
            .map(|i| self.taps[i].clone())
    }

    /// Writes the file: a section header, an interface per captured port,
    /// then every part's frames merged in time order (the parts are
    /// removed when the captures are dropped).
    ///
    /// # Errors
    /// A part or the file cannot be written or read.
    pub(super) fn finish(&self) -> Result<Vec<CaptureSummary>, String> {
        let mut summaries = Vec::new();
        let mut parts = Vec::new();
        for (spec, tap) in self.specs.iter().zip(&self.taps) {
            let mut p = tap.lock();
            if let Some(e) = p.error.take() {
                return Err(e);
            }
            p.out.flush().map_err(err(&p.path))?;
            summaries.push(CaptureSummary {
                interface: spec.if_name(),
                frames: p.frames,
                left_out: p.left_out,
            });
            parts.push(p.path.clone());
        }
        let mut out = BufWriter::new(File::create(&self.out).map_err(err(&self.out))?);
        let mut head = BlockWriter::new();
        head.section_header(concat!("railyard sim ", env!("CARGO_PKG_VERSION")));
        for spec in &self.specs {
            head.interface(
                &spec.if_name(),
                &format!(
                    "railyard sim: switch {} interface {}, cabled to {}",
                    spec.switch, spec.port, spec.peer
                ),
                SNAPLEN,
            );
        }
        out.write_all(head.bytes()).map_err(err(&self.out))?;
        merge(&parts, &mut out).map_err(err(&self.out))?;
        out.flush().map_err(err(&self.out))?;
        Ok(summaries)
    }
}

impl Drop for Captures {
    /// The parts go, whether the run finished or failed.
    fn drop(&mut self) {
        for tap in &self.taps {
            let _ = std::fs::remove_file(&tap.lock().path);
        }
    }
}

/// An I/O error on `p` as the message the command prints.
fn err(p: &Path) -> impl Fn(io::Error) -> String + '_ {
    move |e| format!("{}: {e}", p.display())
}

/// Part file `i` of the capture written to `out`: hidden, beside it.
fn part_path(out: &Path, i: usize) -> PathBuf {
    let name = out
        .file_name()
        .map_or_else(|| "capture".into(), |n| n.to_string_lossy().into_owned());
    out.with_file_name(format!(".{name}.part{i}"))
}

/// The next block of a part: its bytes, or None at the end.
fn next_block(r: &mut impl Read, buf: &mut Vec<u8>) -> io::Result<Option<u64>> {
    let mut head = [0u8; 8];
    match r.read_exact(&mut head) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_ne_bytes([head[4], head[5], head[6], head[7]]) as usize;
    if len < 28 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "torn capture part",
        ));
    }
    buf.clear();
    buf.extend_from_slice(&head);
    buf.resize(len, 0);
    r.read_exact(&mut buf[8..])?;
    let word = |at: usize| {
        u64::from(u32::from_ne_bytes([
            buf[at],
            buf[at + 1],
            buf[at + 2],
            buf[at + 3],
        ]))
    };
    Ok(Some(word(12) << 32 | word(16)))
}

/// Merges the parts' packet blocks by (timestamp, part) into `out`; each
/// part is already in time order.
fn merge(parts: &[PathBuf], out: &mut impl Write) -> io::Result<()> {
    let mut readers = Vec::new();
    let mut heads: Vec<Vec<u8>> = Vec::new();
    let mut heap = BinaryHeap::new();
    for (i, p) in parts.iter().enumerate() {
        let mut r = BufReader::new(File::open(p)?);
        let mut buf = Vec::new();
        if let Some(ts) = next_block(&mut r, &mut buf)? {
            heap.push(Reverse((ts, i)));
        }
        readers.push(r);
        heads.push(buf);
    }
    while let Some(Reverse((_, i))) = heap.pop() {
        out.write_all(&heads[i])?;
        if let Some(ts) = next_block(&mut readers[i], &mut heads[i])? {
            heap.push(Reverse((ts, i)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
