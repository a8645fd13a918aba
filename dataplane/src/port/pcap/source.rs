//! The receive side of a pcap port: a trace replayed in virtual time.

use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use crate::clock::Nanos;
use crate::packet::{Burst, Pool, BURST_SIZE};
use crate::port::upstream::PfcUpstream;

use super::reader::*;
use super::{with_path, CaptureInterface, TraceOptions};

/// Out-of-order timestamps warned about one by one per trace; later ones
/// are only counted (see [`PcapSource::out_of_order`]).
const OUT_OF_ORDER_WARNINGS: u64 = 10;

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
    /// Of `rx_dropped`, frames longer than the largest buffer.
    oversize: u64,
    /// Of `rx_dropped`, damaged records the trace was told to stop at.
    damaged: u64,
    /// Records whose timestamp is earlier than the one before.
    out_of_order: u64,
    /// Capture time of the last record read, for `out_of_order`.
    last_ts: u64,
    /// Stop quietly at a damaged record (see [`TraceOptions::stop_at_damage`]).
    stop_at_damage: bool,
    /// Where and how the trace broke off, when it was not told to stop there.
    damage: Option<String>,
    upstream: Option<PfcUpstream>,
}

impl PcapSource {
    /// Opens a trace whose first frame arrives at trace time `base`.
    ///
    /// # Errors
    /// The file cannot be opened, is neither a classic pcap nor a pcapng
    /// file, or its link type is not Ethernet.
    pub fn open(path: impl AsRef<Path>, base: Nanos) -> io::Result<Self> {
        let mut src = Self::open_inner(path.as_ref(), base, &TraceOptions::default())?;
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
        Self::open_aligned_with(path, epoch_abs_ns, &TraceOptions::default())
    }

    /// [`open_aligned`](Self::open_aligned) with a choice of interface and
    /// of what a damaged record does.
    ///
    /// # Errors
    /// As [`PcapSource::open`], and an interface that is not Ethernet or
    /// (a pcapng file with several and none picked) ambiguous.
    pub fn open_aligned_with(
        path: impl AsRef<Path>,
        epoch_abs_ns: u64,
        options: &TraceOptions,
    ) -> io::Result<Self> {
        let mut src = Self::open_inner(path.as_ref(), 0, options)?;
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
        Self::first_timestamp_of(path, &CaptureInterface::Only)
    }

    /// [`first_timestamp`](Self::first_timestamp) of one interface of a
    /// capture; it fails as the replay would on a capture whose interfaces
    /// are ambiguous, or without the interface asked for.
    ///
    /// # Errors
    /// As [`PcapSource::first_timestamp`].
    pub fn first_timestamp_of(
        path: impl AsRef<Path>,
        interface: &CaptureInterface,
    ) -> io::Result<Option<u64>> {
        let path = path.as_ref();
        let mut reader = Reader::open(path, interface)?;
        let mut rec = Record::EMPTY;
        match reader.next(&mut rec) {
            Next::Record => Ok(Some(rec.ts_abs)),
            Next::Eof => Ok(None),
            Next::Broken(e) => Err(with_path(path, e, ErrorKind::InvalidData)),
        }
    }

    fn open_inner(path: &Path, base: Nanos, options: &TraceOptions) -> io::Result<Self> {
        let reader = Reader::open(path, &options.interface)?;
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
            oversize: 0,
            damaged: 0,
            out_of_order: 0,
            last_ts: 0,
            stop_at_damage: options.stop_at_damage,
            damage: None,
            upstream: None,
        };
        src.read_ahead();
        Ok(src)
    }

    /// Fills the look-ahead; a damaged or unreadable file ends the trace,
    /// counted as a drop when it was told to stop there and kept as the
    /// trace's [`damage`](Self::damage) otherwise.
    fn read_ahead(&mut self) {
        self.pending = match self.reader.next(&mut self.ahead) {
            Next::Record => {
                if self.ahead.ts_abs < self.last_ts {
                    self.out_of_order_record();
                }
                self.last_ts = self.ahead.ts_abs;
                true
            }
            Next::Eof => false,
            Next::Broken(e) => {
                self.read_errors += 1;
                if self.stop_at_damage {
                    self.damaged += 1;
                    self.rx_dropped += 1;
                    tracing::warn!(
                        path = %self.path.display(),
                        error = %e,
                        "damaged capture record; the trace ends there as asked"
                    );
                } else {
                    self.damage = Some(format!(
                        "{}: {e}; the rest of the trace was not replayed",
                        self.path.display()
                    ));
                }
                false
            }
        };
    }

    /// Counts (and, for the first few, warns of) a record captured earlier
    /// than the one before it: it is delivered at once, after its
    /// predecessor, so the replay's timing there is not the capture's.
    #[cold]
    fn out_of_order_record(&mut self) {
        self.out_of_order += 1;
        if self.out_of_order <= OUT_OF_ORDER_WARNINGS {
            tracing::warn!(
                path = %self.path.display(),
                record = self.reader.records(),
                back_ns = self.last_ts - self.ahead.ts_abs,
                "timestamp earlier than the record before; replayed right after it{}",
                if self.out_of_order == OUT_OF_ORDER_WARNINGS {
                    " (further ones in this trace are only counted)"
                } else {
                    ""
                }
            );
        }
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
                        self.oversize += 1;
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

    /// Of [`rx_dropped`](Self::rx_dropped), frames longer than
    /// [`MAX_FRAME`](crate::packet::MAX_FRAME).
    pub fn rx_oversize(&self) -> u64 {
        self.oversize
    }

    /// Of [`rx_dropped`](Self::rx_dropped), damaged records the trace
    /// stopped at as told (0 or 1).
    pub fn rx_damaged(&self) -> u64 {
        self.damaged
    }

    /// Records whose timestamp is earlier than their predecessor's.
    pub fn out_of_order(&self) -> u64 {
        self.out_of_order
    }

    /// Where and why the trace broke off (path, record number, byte
    /// offset), unless it was told to stop at damage: the replay is then
    /// incomplete and fails.
    pub fn damage(&self) -> Option<&str> {
        self.damage.as_deref()
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
