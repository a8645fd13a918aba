//! The receive side of a pcap port: a trace replayed in virtual time.

use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use crate::clock::Nanos;
use crate::packet::{Burst, Pool, BURST_SIZE};
use crate::port::upstream::PfcUpstream;

use super::reader::*;
use super::with_path;

/// Replays a pcap file's frames in virtual time (see the module doc).
pub struct PcapSource {
    path: PathBuf,
    reader: Reader,
    /// The look-ahead record; meaningful only while `pending`.
    ahead: Record,
    pending: bool,
    /// Absolute time (ns) that maps to trace time `base`.
    origin_abs: u64,
    base: Nanos,
    rx_frames: u64,
    rx_dropped: u64,
    /// Of `rx_dropped`, frames the pool had no buffer for.
    no_buffer: u64,
    truncated: u64,
    read_errors: u64,
    upstream: Option<PfcUpstream>,
}

impl PcapSource {
    /// Opens a trace whose first frame arrives at trace time `base`.
    ///
    /// # Errors
    /// The file cannot be opened, is not a classic pcap file, or its link
    /// type is not Ethernet.
    pub fn open(path: impl AsRef<Path>, base: Nanos) -> io::Result<Self> {
        let mut src = Self::open_inner(path.as_ref(), base)?;
        src.origin_abs = if src.pending { src.ahead.ts_abs } else { 0 };
        Ok(src)
    }

    /// Opens a trace timed relative to an absolute epoch (ns since the Unix
    /// epoch) shared with other traces, so frames of several files replay in
    /// their captured order; frames captured before the epoch arrive at 0.
    ///
    /// # Errors
    /// As [`PcapSource::open`].
    pub fn open_aligned(path: impl AsRef<Path>, epoch_abs_ns: u64) -> io::Result<Self> {
        let mut src = Self::open_inner(path.as_ref(), 0)?;
        src.origin_abs = epoch_abs_ns;
        Ok(src)
    }

    /// The absolute capture time (ns since the Unix epoch) of a trace's first
    /// frame, for choosing the epoch of [`PcapSource::open_aligned`]; `None`
    /// for a trace without frames.
    ///
    /// # Errors
    /// As [`PcapSource::open`], and a damaged first record.
    pub fn first_timestamp(path: impl AsRef<Path>) -> io::Result<Option<u64>> {
        let path = path.as_ref();
        let mut reader = Reader::open(path)?;
        let mut rec = Record::EMPTY;
        match reader.next(&mut rec) {
            Next::Record => Ok(Some(rec.ts_abs)),
            Next::Eof => Ok(None),
            Next::Broken(e) => Err(with_path(path, e, ErrorKind::InvalidData)),
        }
    }

    fn open_inner(path: &Path, base: Nanos) -> io::Result<Self> {
        let reader = Reader::open(path)?;
        let mut src = PcapSource {
            path: path.to_path_buf(),
            reader,
            ahead: Record::EMPTY,
            pending: false,
            origin_abs: 0,
            base,
            rx_frames: 0,
            rx_dropped: 0,
            no_buffer: 0,
            truncated: 0,
            read_errors: 0,
            upstream: None,
        };
        src.read_ahead();
        Ok(src)
    }

    /// Fills the look-ahead; a damaged or unreadable file ends the trace.
    fn read_ahead(&mut self) {
        self.pending = match self.reader.next(&mut self.ahead) {
            Next::Record => true,
            Next::Eof => false,
            Next::Broken(e) => {
                self.read_errors += 1;
                tracing::warn!(
                    path = %self.path.display(),
                    error = %e,
                    "pcap read error; treating it as the end of the trace"
                );
                false
            }
        };
    }

    /// Trace time of an absolute capture time.
    #[inline]
    fn trace_time(&self, ts_abs: u64) -> Nanos {
        self.base
            .saturating_add(ts_abs.saturating_sub(self.origin_abs))
    }

    /// Makes the trace a PFC-honouring sender (closed loop): priorities the
    /// switch pauses on this interface are held back and released on resume
    /// (see [`PfcUpstream`]); held frames are copied out of the file once.
    pub fn closed_loop(mut self, upstream: PfcUpstream) -> Self {
        self.upstream = Some(upstream);
        self.absorb();
        self
    }

    /// Shows the closed-loop upstream the frames the switch sent at `now`.
    pub fn on_tx(&mut self, burst: &Burst, now: Nanos) {
        if let Some(up) = self.upstream.as_mut() {
            for p in burst.iter() {
                up.on_tx(p.data(), now);
            }
            self.absorb();
        }
    }

    /// Moves paused frames at the head of the trace aside, so frames of
    /// other priorities behind them can pass.
    fn absorb(&mut self) {
        while self.pending && !self.ahead.oversize {
            let t = self.trace_time(self.ahead.ts_abs);
            let Some(up) = self.upstream.as_mut() else {
                return;
            };
            if !up.should_hold(t, self.reader.data(&self.ahead)) {
                return;
            }
            if self.ahead.truncated {
                self.truncated += 1;
            }
            // Held frames are owned: the read buffer moves on.
            up.hold(t, self.reader.data(&self.ahead).to_vec());
            self.read_ahead();
        }
    }

    /// When the look-ahead frame may leave: its trace time, later when paused.
    #[inline]
    fn head_time(&self) -> Option<Nanos> {
        if !self.pending {
            return None;
        }
        let t = self.trace_time(self.ahead.ts_abs);
        Some(match &self.upstream {
            Some(up) if !self.ahead.oversize => up.release_time(t, self.reader.data(&self.ahead)),
            _ => t,
        })
    }

    /// The trace time at which the next frame is due, `None` at the end.
    pub fn next_rx_time(&self) -> Option<Nanos> {
        let held = self
            .upstream
            .as_ref()
            .and_then(PfcUpstream::next_release)
            .map(|(t, _)| t);
        held.into_iter().chain(self.head_time()).min()
    }

    /// Whether every frame has been delivered (or the file broke off).
    pub fn exhausted(&self) -> bool {
        !self.pending && self.upstream.as_ref().is_none_or(|u| u.held_now() == 0)
    }

    /// Appends the frames due at or before `now` to `burst`, stamped with
    /// their trace time (closed loop: their release time); oversize frames
    /// and pool misses are dropped and counted. Returns how many were appended.
    pub fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            let head = self.head_time().filter(|t| *t <= now);
            let held = self.upstream.as_ref().and_then(|u| u.due_before(head, now));
            match (held, head) {
                (Some(p), _) => {
                    let Some((t, f)) = self.upstream.as_mut().and_then(|u| u.release(p)) else {
                        break;
                    };
                    match pool.alloc_from(&f) {
                        Some(mut pkt) => {
                            pkt.timestamp = t;
                            burst.push(pkt);
                            n += 1;
                        }
                        None => {
                            // A frame the switch built fits: the pool is empty.
                            self.rx_dropped += 1;
                            self.no_buffer += 1;
                        }
                    }
                }
                (_, Some(t)) => {
                    if self.ahead.truncated {
                        self.truncated += 1;
                    }
                    let pkt = if self.ahead.oversize {
                        None
                    } else {
                        let p = pool.alloc_from(self.reader.data(&self.ahead));
                        // Not oversize, so a refusal means the pool is empty.
                        self.no_buffer += u64::from(p.is_none());
                        p
                    };
                    match pkt {
                        Some(mut p) => {
                            p.timestamp = t;
                            burst.push(p);
                            n += 1;
                        }
                        None => self.rx_dropped += 1,
                    }
                    self.read_ahead();
                    self.absorb();
                }
                _ => break,
            }
        }
        self.rx_frames += n as u64;
        n
    }

    /// The trace's file name, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames delivered so far.
    pub fn rx_frames(&self) -> u64 {
        self.rx_frames
    }

    /// Frames dropped so far (longer than [`MAX_FRAME`](crate::packet::MAX_FRAME), or no free buffer).
    pub fn rx_dropped(&self) -> u64 {
        self.rx_dropped
    }

    /// Of [`rx_dropped`](Self::rx_dropped), frames dropped because the pool
    /// had no free buffer.
    pub fn rx_no_buffer(&self) -> u64 {
        self.no_buffer
    }

    /// Frames captured shorter than they were on the wire (delivered as
    /// captured), so a replay that looks wrong can be explained.
    pub fn truncated(&self) -> u64 {
        self.truncated
    }

    /// Read errors that ended the trace early (0 or 1).
    pub fn read_errors(&self) -> u64 {
        self.read_errors
    }
}

impl std::fmt::Debug for PcapSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapSource")
            .field("path", &self.path)
            .field("next_rx_time", &self.next_rx_time())
            .field("rx_frames", &self.rx_frames)
            .finish()
    }
}
