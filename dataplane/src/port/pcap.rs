//! Pcap replay and capture: a port whose wire is a pair of files.
//!
//! A [`PcapSource`] replays a classic pcap file (microsecond or nanosecond
//! resolution, either byte order, `LINKTYPE_ETHERNET` only) in virtual time:
//! `rx_burst(now)` delivers only the frames whose trace time is at or before
//! `now`, so a runtime driven by a [`VirtualClock`](crate::clock::VirtualClock)
//! advanced to [`next_rx_time`](PcapSource::next_rx_time) replays a trace
//! deterministically, however fast the machine is. The file is read lazily
//! with one record of look-ahead; memory use does not grow with its size.
//!
//! Trace time is the capture timestamp relative to an origin: the file's
//! first record ([`PcapSource::open`], plus an offset), or an absolute epoch
//! shared by several files ([`PcapSource::open_aligned`], with the epoch
//! usually the smallest [`PcapSource::first_timestamp`] among them) so that
//! frames captured on different interfaces keep their relative order.
//!
//! A [`PcapSink`] writes every transmitted frame with its departure time plus
//! the same absolute epoch, as a nanosecond-resolution Ethernet pcap, so its
//! timestamps line up with the input traces. The file is created on the
//! first transmit: an interface that never sends leaves no file behind (and
//! an older file at that path, from an earlier run, is left untouched).
//!
//! [`PcapPort`] joins an optional source and an optional sink into a [`Port`].

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::path::{Path, PathBuf};

use pcap_file::pcap::PcapHeader;
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

use crate::clock::Nanos;
use crate::packet::{free_burst, Burst, Pool, BURST_SIZE, MAX_FRAME};
use crate::port::spool::Spool;
use crate::port::upstream::PfcUpstream;
use crate::port::{IoCounters, Port};

/// Length of the pcap global header.
const FILE_HEADER_LEN: usize = 24;
/// Length of a pcap record header.
const RECORD_HEADER_LEN: usize = 16;
/// Largest record a sane capture holds whatever its snaplen says (libpcap's
/// own limit); a longer one means the file is corrupt.
const MAX_RECORD: u32 = 262_144;
/// Snaplen written into sink files: larger than any frame railyard sends.
const SINK_SNAPLEN: u32 = 65_535;
/// Read buffer size: enough for a burst of jumbo frames per refill.
const READ_BUF: usize = 256 * 1024;
const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Adds the file name to an error so a failure says which trace it was.
fn with_path(path: &Path, e: impl std::fmt::Display, kind: ErrorKind) -> io::Error {
    io::Error::new(kind, format!("{}: {e}", path.display()))
}

/// What the global header told us about how to read the records.
#[derive(Debug, Clone, Copy)]
struct Format {
    big_endian: bool,
    nanos: bool,
    snaplen: u32,
}

impl Format {
    fn u32_at(&self, b: &[u8], at: usize) -> u32 {
        let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if self.big_endian {
            u32::from_be_bytes(v)
        } else {
            u32::from_le_bytes(v)
        }
    }
}

/// One record read ahead of delivery. Its bytes stay in the reader's buffer
/// (see [`Reader::data`]) until the next record is read, so a frame is copied
/// once, from the read buffer straight into its packet buffer.
#[derive(Debug, Clone, Copy)]
struct Record {
    /// Absolute capture time, ns since the Unix epoch.
    ts_abs: u64,
    /// Where the captured bytes start in the reader's buffer.
    start: usize,
    /// Captured bytes (0 when `oversize`).
    len: usize,
    /// The record was longer than [`MAX_FRAME`]; its bytes were skipped.
    oversize: bool,
    /// Fewer bytes were captured than were on the wire.
    truncated: bool,
}

impl Record {
    const EMPTY: Record = Record {
        ts_abs: 0,
        start: 0,
        len: 0,
        oversize: false,
        truncated: false,
    };
}

/// Why reading the next record stopped.
enum Next {
    /// A record is in the look-ahead.
    Record,
    /// Clean end of file.
    Eof,
    /// The file is damaged or unreadable from here on.
    Broken(io::Error),
}

/// A lazy record reader over one pcap file. It keeps its own read buffer
/// rather than a `BufReader`, so a record's header is decoded and its bytes
/// handed out in place, without a per-record copy or `Read` call chain.
struct Reader {
    input: File,
    /// Bytes read from the file; `buf[pos..end]` not yet consumed.
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    format: Format,
}

impl Reader {
    /// Opens `path` and checks its global header.
    fn open(path: &Path) -> io::Result<Reader> {
        let input = File::open(path).map_err(|e| with_path(path, &e, e.kind()))?;
        let mut reader = Reader {
            input,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            pos: 0,
            end: 0,
            format: Format {
                big_endian: false,
                nanos: false,
                snaplen: 0,
            },
        };
        let whole = reader.fill(FILE_HEADER_LEN).and_then(|got| {
            if got {
                Ok(())
            } else {
                Err(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "failed to fill whole buffer",
                ))
            }
        });
        whole.map_err(|e| {
            with_path(
                path,
                format_args!("too short for a pcap header ({e})"),
                ErrorKind::InvalidData,
            )
        })?;
        let header = &reader.buf[..FILE_HEADER_LEN];
        reader.pos = FILE_HEADER_LEN;
        let (_, h) = PcapHeader::from_slice(header).map_err(|e| match e {
            PcapError::InvalidField(_) => with_path(
                path,
                "not a pcap file (bad magic number; pcapng is not supported, \
                 convert it with `editcap -F pcap`)",
                ErrorKind::InvalidData,
            ),
            other => with_path(path, other, ErrorKind::InvalidData),
        })?;
        if h.datalink != DataLink::ETHERNET {
            return Err(with_path(
                path,
                format_args!(
                    "link type {:?} ({}) is not Ethernet; only LINKTYPE_ETHERNET (1) \
                     captures can be replayed",
                    h.datalink,
                    u32::from(h.datalink)
                ),
                ErrorKind::InvalidData,
            ));
        }
        reader.format = Format {
            big_endian: h.endianness == Endianness::Big,
            nanos: h.ts_resolution == TsResolution::NanoSecond,
            snaplen: h.snaplen,
        };
        Ok(reader)
    }

    /// Makes at least `n` (at most the buffer size) unconsumed bytes
    /// available, moving the unconsumed tail to the front and reading more;
    /// `Ok(false)` when the file ends first (what there is stays available).
    #[inline]
    fn fill(&mut self, n: usize) -> io::Result<bool> {
        if self.end - self.pos >= n {
            return Ok(true);
        }
        self.refill(n)
    }

    /// The slow half of [`fill`](Self::fill): compacts and reads the file.
    #[cold]
    fn refill(&mut self, n: usize) -> io::Result<bool> {
        self.buf.copy_within(self.pos..self.end, 0);
        self.end -= self.pos;
        self.pos = 0;
        while self.end < n {
            match self.input.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(got) => self.end += got,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(true)
    }

    /// Consumes `n` bytes without keeping them (an oversize record);
    /// `Ok(false)` when the file ends first.
    fn skip(&mut self, mut n: usize) -> io::Result<bool> {
        loop {
            let here = n.min(self.end - self.pos);
            self.pos += here;
            n -= here;
            if n == 0 {
                return Ok(true);
            }
            if !self.fill(n.min(self.buf.len()))? && self.pos == self.end {
                return Ok(false);
            }
        }
    }

    /// The captured bytes of `rec`, the record [`next`](Self::next) read last.
    #[inline]
    fn data(&self, rec: &Record) -> &[u8] {
        &self.buf[rec.start..rec.start + rec.len]
    }

    /// Reads the next record into `rec`; the previous record's bytes are
    /// gone from then on.
    fn next(&mut self, rec: &mut Record) -> Next {
        match self.fill(RECORD_HEADER_LEN) {
            Ok(true) => {}
            Ok(false) if self.pos == self.end => return Next::Eof,
            Ok(false) => {
                return Next::Broken(io::Error::new(
                    ErrorKind::UnexpectedEof,
                    "file ends inside a record header",
                ))
            }
            Err(e) => return Next::Broken(e),
        }
        let f = self.format;
        let hdr = &self.buf[self.pos..self.pos + RECORD_HEADER_LEN];
        let ts_sec = u64::from(f.u32_at(hdr, 0));
        let frac = u64::from(f.u32_at(hdr, 4));
        let incl_len = f.u32_at(hdr, 8);
        let orig_len = f.u32_at(hdr, 12);
        let frac_ns = if f.nanos { frac } else { frac * 1000 };
        if frac_ns >= NANOS_PER_SEC {
            return Next::Broken(io::Error::new(
                ErrorKind::InvalidData,
                format!("record timestamp fraction {frac} out of range"),
            ));
        }
        if incl_len > f.snaplen.max(MAX_RECORD) {
            return Next::Broken(io::Error::new(
                ErrorKind::InvalidData,
                format!("record length {incl_len} exceeds the snaplen {}", f.snaplen),
            ));
        }
        self.pos += RECORD_HEADER_LEN;
        rec.ts_abs = ts_sec * NANOS_PER_SEC + frac_ns;
        rec.truncated = incl_len < orig_len;
        let len = incl_len as usize;
        rec.oversize = len > MAX_FRAME;
        let read = if rec.oversize {
            rec.start = 0;
            rec.len = 0;
            self.skip(len)
        } else {
            self.fill(len).inspect(|got| {
                if *got {
                    rec.start = self.pos;
                    rec.len = len;
                    self.pos += len;
                }
            })
        };
        match read {
            Ok(true) => Next::Record,
            Ok(false) => Next::Broken(io::Error::new(
                ErrorKind::UnexpectedEof,
                "file ends inside a record",
            )),
            Err(e) => Next::Broken(e),
        }
    }
}

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
                        None => self.rx_dropped += 1,
                    }
                }
                (_, Some(t)) => {
                    if self.ahead.truncated {
                        self.truncated += 1;
                    }
                    let pkt = if self.ahead.oversize {
                        None
                    } else {
                        pool.alloc_from(self.reader.data(&self.ahead))
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

    /// Frames dropped so far (longer than [`MAX_FRAME`], or no free buffer).
    pub fn rx_dropped(&self) -> u64 {
        self.rx_dropped
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

/// Records transmitted frames into a pcap file (see the module doc).
#[derive(Debug)]
pub struct PcapSink {
    path: PathBuf,
    epoch_abs_ns: u64,
    /// `None` until the first transmit creates the file. A thread of its own
    /// writes it, off the packet path.
    out: Option<Spool>,
    /// Creating or writing the file failed; later frames are dropped.
    failed: bool,
    tx_frames: u64,
    tx_errors: u64,
    /// Frames written, going back to the pool [`STASH`] at a time.
    written: Burst,
}

/// Written frames a sink gives back to the pool at a time: replay in exact
/// time sends about one frame per call, and a visit to the pool per frame
/// costs more than writing the frame. Few enough that the buffers held this
/// way never matter to the pool.
const STASH: usize = 8;

impl PcapSink {
    /// Prepares a capture to `path` whose timestamps are departure times
    /// plus `epoch_abs_ns` (ns since the Unix epoch; 0 keeps them relative).
    /// Nothing touches the file system until the first transmit creates the
    /// file; if that fails, the error is logged once and every frame sent to
    /// this sink is counted in `tx_errors`.
    pub fn create(path: impl AsRef<Path>, epoch_abs_ns: u64) -> Self {
        PcapSink {
            path: path.as_ref().to_path_buf(),
            epoch_abs_ns,
            out: None,
            failed: false,
            tx_frames: 0,
            tx_errors: 0,
            written: Burst::new(),
        }
    }

    /// Creates the file, starts its writer and writes the global header.
    fn start(&mut self) -> io::Result<Spool> {
        let mut out = Spool::new(File::create(&self.path)?, &self.path)?;
        let mut bytes = Vec::with_capacity(FILE_HEADER_LEN);
        let header = PcapHeader {
            snaplen: SINK_SNAPLEN,
            datalink: DataLink::ETHERNET,
            ts_resolution: TsResolution::NanoSecond,
            endianness: if cfg!(target_endian = "big") {
                Endianness::Big
            } else {
                Endianness::Little
            },
            ..PcapHeader::default()
        };
        header.write_to(&mut bytes).map_err(|e| match e {
            PcapError::IoError(e) => e,
            other => io::Error::new(ErrorKind::InvalidData, other.to_string()),
        })?;
        out.append(&[&bytes], 0);
        Ok(out)
    }

    fn fail(&mut self, e: &io::Error) {
        self.failed = true;
        tracing::warn!(
            path = %self.path.display(),
            error = %e,
            "pcap capture failed; dropping its frames from now on"
        );
    }

    /// Writes every packet in `burst` stamped with its departure time (the
    /// packet's `timestamp`, which the switch sets when it leaves),
    /// emptying the burst; frames that cannot be written are dropped and
    /// counted in `tx_errors`. Returns how many left the burst (all of them).
    pub fn tx_burst(&mut self, burst: &mut Burst) -> usize {
        if self.out.is_none() && !self.failed && !burst.is_empty() {
            match self.start() {
                Ok(out) => self.out = Some(out),
                Err(e) => self.fail(&e),
            }
        }
        // The writer thread has logged the failure.
        self.failed |= self.out.as_ref().is_some_and(Spool::failed);
        let mut written = 0;
        if let Some(out) = self.out.as_mut().filter(|_| !self.failed) {
            for p in burst.iter() {
                let ts = self.epoch_abs_ns.saturating_add(p.timestamp);
                let sec = u32::try_from(ts / NANOS_PER_SEC).unwrap_or(u32::MAX);
                let nsec = (ts % NANOS_PER_SEC) as u32;
                let data = p.data();
                let len = (data.len() as u32).min(SINK_SNAPLEN);
                let mut hdr = [0u8; RECORD_HEADER_LEN];
                for (i, v) in [sec, nsec, len, data.len() as u32].into_iter().enumerate() {
                    hdr[i * 4..i * 4 + 4].copy_from_slice(&v.to_ne_bytes());
                }
                out.append(&[&hdr, &data[..len as usize]], 1);
                written += 1;
            }
        }
        let taken = burst.len();
        self.tx_frames += written as u64;
        self.tx_errors += (taken - written) as u64;
        for pkt in burst.drain(..) {
            if self.written.len() >= STASH {
                free_burst(&mut self.written);
            }
            self.written.push(pkt);
        }
        taken
    }

    /// Writes buffered records to the file and waits until they are there
    /// (nothing if it was never created), and gives the buffers of written
    /// frames back to the pool.
    ///
    /// # Errors
    /// The file could not be written.
    pub fn flush(&mut self) -> io::Result<()> {
        free_burst(&mut self.written);
        match self.out.as_mut() {
            Some(out) => out.sync(),
            None => Ok(()),
        }
    }

    /// The capture's file name, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file has been created (something was transmitted).
    pub fn created(&self) -> bool {
        self.out.is_some()
    }

    /// Frames written so far, or on their way to the file.
    pub fn tx_frames(&self) -> u64 {
        self.tx_frames.saturating_sub(self.lost())
    }

    /// Frames that could not be written.
    pub fn tx_errors(&self) -> u64 {
        self.tx_errors + self.lost()
    }

    /// Frames the writer thread could not put in the file.
    fn lost(&self) -> u64 {
        self.out.as_ref().map_or(0, Spool::lost)
    }
}

/// An interface backed by files: frames arrive from a trace and leave into a
/// capture, either side optional.
#[derive(Debug)]
pub struct PcapPort {
    source: Option<PcapSource>,
    sink: Option<PcapSink>,
}

impl PcapPort {
    /// Joins a replay source and a capture sink into one port.
    pub fn new(source: Option<PcapSource>, sink: Option<PcapSink>) -> Self {
        PcapPort { source, sink }
    }

    /// The replay side, for its own counters.
    pub fn source(&self) -> Option<&PcapSource> {
        self.source.as_ref()
    }

    /// The capture side, for its own counters.
    pub fn sink(&self) -> Option<&PcapSink> {
        self.sink.as_ref()
    }
}

impl Port for PcapPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        match self.source.as_mut() {
            Some(s) => s.rx_burst(pool, burst, now),
            None => 0,
        }
    }

    /// Without a sink, frames are discarded as sent (a port with nowhere to
    /// write is a wire with nothing attached).
    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> usize {
        if let Some(s) = self.source.as_mut() {
            s.on_tx(burst, now);
        }
        match self.sink.as_mut() {
            Some(s) => s.tx_burst(burst),
            None => {
                let n = burst.len();
                free_burst(burst);
                n
            }
        }
    }

    fn io_counters(&self) -> IoCounters {
        let mut c = IoCounters::default();
        if let Some(s) = &self.source {
            c.rx_frames = s.rx_frames();
            c.rx_dropped = s.rx_dropped();
        }
        if let Some(s) = &self.sink {
            c.tx_frames = s.tx_frames();
            c.tx_errors = s.tx_errors();
        }
        c
    }

    fn describe(&self) -> String {
        let mut d = String::from("pcap");
        if let Some(s) = &self.source {
            d.push_str(&format!(" in={}", s.path().display()));
        }
        if let Some(s) = &self.sink {
            d.push_str(&format!(" out={}", s.path().display()));
        }
        d
    }

    fn exhausted(&self) -> bool {
        !matches!(&self.source, Some(s) if !s.exhausted())
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        self.source.as_ref().and_then(PcapSource::next_rx_time)
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.sink.as_mut() {
            Some(s) => s.flush(),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly
mod tests {
    use std::time::Duration;

    use pcap_file::pcap::{PcapPacket, PcapReader, PcapWriter};

    use super::*;

    const T0: u64 = 1_700_000_000 * NANOS_PER_SEC;

    fn frame(seq: u8, len: usize) -> Vec<u8> {
        let mut f = vec![seq; len];
        f[..12].copy_from_slice(&[2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2]);
        f[12..14].copy_from_slice(&[0x88, 0xb5]);
        f
    }

    /// Writes `(abs ns, captured bytes, original length)` records.
    fn write_pcap(path: &Path, res: TsResolution, link: DataLink, recs: &[(u64, Vec<u8>, u32)]) {
        let header = PcapHeader {
            ts_resolution: res,
            datalink: link,
            snaplen: 65_535,
            ..PcapHeader::default()
        };
        let mut w = PcapWriter::with_header(File::create(path).unwrap(), header).unwrap();
        for (ts, data, orig) in recs {
            w.write_packet(&PcapPacket::new(Duration::from_nanos(*ts), *orig, data))
                .unwrap();
        }
    }

    fn simple(path: &Path, res: TsResolution, times: &[u64]) {
        let recs: Vec<_> = times
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, frame(i as u8, 60), 60))
            .collect();
        write_pcap(path, res, DataLink::ETHERNET, &recs);
    }

    #[test]
    fn replay_is_gated_by_virtual_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.pcap");
        simple(
            &path,
            TsResolution::MicroSecond,
            &[T0, T0 + 10_000, T0 + 25_000],
        );
        let pool = Pool::new(8);
        let mut src = PcapSource::open(&path, 500).unwrap();
        let mut burst = Burst::new();
        assert_eq!(src.next_rx_time(), Some(500));
        assert_eq!(src.rx_burst(&pool, &mut burst, 499), 0);
        assert_eq!(src.rx_burst(&pool, &mut burst, 500), 1);
        assert_eq!(burst[0].timestamp, 500);
        assert_eq!(burst[0].data(), &frame(0, 60)[..]);
        assert_eq!(src.next_rx_time(), Some(10_500));
        assert_eq!(src.rx_burst(&pool, &mut burst, 10_499), 0);
        assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 2);
        assert_eq!(burst[1].timestamp, 10_500);
        assert_eq!(burst[2].timestamp, 25_500);
        assert_eq!(burst[2].data(), &frame(2, 60)[..]);
        assert!(src.exhausted());
        assert_eq!(src.next_rx_time(), None);
        assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 0);
        assert_eq!(
            (src.rx_frames(), src.rx_dropped(), src.read_errors()),
            (3, 0, 0)
        );
    }

    #[test]
    fn nanosecond_traces_keep_their_precision() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ns.pcap");
        simple(
            &path,
            TsResolution::NanoSecond,
            &[T0 + 7, T0 + 1_000_000_123],
        );
        let mut src = PcapSource::open(&path, 0).unwrap();
        let pool = Pool::new(4);
        let mut burst = Burst::new();
        assert_eq!(src.rx_burst(&pool, &mut burst, 0), 1);
        assert_eq!(src.next_rx_time(), Some(1_000_000_116));
        assert_eq!(PcapSource::first_timestamp(&path).unwrap(), Some(T0 + 7));
    }

    #[test]
    fn bursts_are_capped_and_resume() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("many.pcap");
        simple(&path, TsResolution::MicroSecond, &[T0; 40]);
        let pool = Pool::new(64);
        let mut src = PcapSource::open(&path, 0).unwrap();
        let mut burst = Burst::new();
        assert_eq!(src.rx_burst(&pool, &mut burst, 0), BURST_SIZE);
        assert_eq!(src.rx_burst(&pool, &mut burst, 0), 0);
        burst.clear();
        assert_eq!(src.rx_burst(&pool, &mut burst, 0), 8);
        assert_eq!(burst[7].data()[20], 39);
        assert!(src.exhausted());
    }

    #[test]
    fn files_align_to_a_common_epoch() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.pcap"), dir.path().join("b.pcap"));
        simple(&a, TsResolution::MicroSecond, &[T0 + 5_000, T0 + 6_000]);
        simple(&b, TsResolution::NanoSecond, &[T0 + 1, T0 + 5_500]);
        let epoch = [&a, &b]
            .iter()
            .filter_map(|p| PcapSource::first_timestamp(p).unwrap())
            .min()
            .unwrap();
        assert_eq!(epoch, T0 + 1);
        let sa = PcapSource::open_aligned(&a, epoch).unwrap();
        let sb = PcapSource::open_aligned(&b, epoch).unwrap();
        assert_eq!(sa.next_rx_time(), Some(4_999));
        assert_eq!(sb.next_rx_time(), Some(0));
        // Frames before the epoch arrive at time zero rather than wrapping.
        let late = PcapSource::open_aligned(&b, T0 + 100).unwrap();
        assert_eq!(late.next_rx_time(), Some(0));
    }

    #[test]
    fn oversize_frames_and_pool_misses_are_dropped_and_counted() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.pcap");
        let recs = vec![
            (T0, frame(0, MAX_FRAME + 1), (MAX_FRAME + 1) as u32),
            (T0 + 1_000, frame(1, MAX_FRAME), MAX_FRAME as u32),
            (T0 + 2_000, frame(2, 64), 64),
            (T0 + 3_000, frame(3, 64), 64),
        ];
        write_pcap(&path, TsResolution::MicroSecond, DataLink::ETHERNET, &recs);
        let pool = Pool::new(1);
        let mut src = PcapSource::open(&path, 0).unwrap();
        let mut burst = Burst::new();
        assert_eq!(src.rx_burst(&pool, &mut burst, 1_000), 1);
        assert_eq!(burst[0].len(), MAX_FRAME);
        assert_eq!(src.rx_dropped(), 1);
        // The only buffer is still held: the next frame finds the pool empty.
        assert_eq!(src.rx_burst(&pool, &mut burst, 2_000), 0);
        assert_eq!(src.rx_dropped(), 2);
        burst.clear();
        assert_eq!(src.rx_burst(&pool, &mut burst, 3_000), 1);
        assert_eq!(burst[0].data(), &frame(3, 64)[..]);
        assert_eq!(src.rx_frames(), 2);
    }

    #[test]
    fn records_spanning_read_buffer_refills_arrive_intact() {
        // Far more than one read buffer of records of varying lengths, with
        // oversize records (one a quarter of the read buffer) between
        // them: every frame arrives whole, in order, with its own time.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("long.pcap");
        let mut recs = Vec::new();
        let mut expect = Vec::new();
        for i in 0..6_000u64 {
            let len = 60 + (i as usize * 37) % 1_400;
            let f = frame(i as u8, len);
            recs.push((T0 + i * 10, f.clone(), len as u32));
            expect.push((i * 10, f));
            if i % 2_000 == 999 {
                let big = if i == 999 { 65_535 } else { MAX_FRAME + 1 };
                recs.push((T0 + i * 10 + 5, frame(0, big), big as u32));
            }
        }
        write_pcap(&path, TsResolution::NanoSecond, DataLink::ETHERNET, &recs);
        assert!(std::fs::metadata(&path).unwrap().len() > 3 * READ_BUF as u64);
        let pool = Pool::new(64);
        let mut src = PcapSource::open(&path, 0).unwrap();
        let mut got = Vec::new();
        while !src.exhausted() {
            let mut burst = Burst::new();
            src.rx_burst(&pool, &mut burst, u64::MAX);
            got.extend(burst.iter().map(|p| (p.timestamp, p.data().to_vec())));
        }
        assert_eq!(got.len(), expect.len());
        assert!(got == expect, "frames differ");
        assert_eq!(
            (src.rx_frames(), src.rx_dropped(), src.read_errors()),
            (6_000, 3, 0)
        );
    }

    #[test]
    fn truncated_captures_are_delivered_as_captured() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snap.pcap");
        write_pcap(
            &path,
            TsResolution::MicroSecond,
            DataLink::ETHERNET,
            &[(T0, frame(0, 54), 1500), (T0, frame(1, 60), 60)],
        );
        let pool = Pool::new(4);
        let mut src = PcapSource::open(&path, 0).unwrap();
        let mut burst = Burst::new();
        assert_eq!(src.rx_burst(&pool, &mut burst, 0), 2);
        assert_eq!(burst[0].len(), 54);
        assert_eq!(src.truncated(), 1);
    }

    #[test]
    fn non_ethernet_and_non_pcap_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let raw = dir.path().join("raw.pcap");
        write_pcap(&raw, TsResolution::MicroSecond, DataLink::RAW, &[]);
        let e = PcapSource::open(&raw, 0).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidData);
        assert!(e.to_string().contains("not Ethernet"), "{e}");

        let junk = dir.path().join("junk.pcap");
        std::fs::write(&junk, [0x0a, 0x0d, 0x0d, 0x0a].repeat(8)).unwrap();
        let e = PcapSource::open(&junk, 0).unwrap_err();
        assert!(e.to_string().contains("not a pcap file"), "{e}");

        let empty = dir.path().join("empty.pcap");
        std::fs::write(&empty, b"").unwrap();
        assert!(PcapSource::open(&empty, 0).is_err());
        assert!(PcapSource::open(dir.path().join("missing.pcap"), 0).is_err());
    }

    #[test]
    fn a_trace_without_frames_is_exhausted_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.pcap");
        write_pcap(&path, TsResolution::NanoSecond, DataLink::ETHERNET, &[]);
        let src = PcapSource::open(&path, 0).unwrap();
        assert!(src.exhausted());
        assert_eq!(src.next_rx_time(), None);
        assert_eq!(PcapSource::first_timestamp(&path).unwrap(), None);
    }

    #[test]
    fn a_damaged_file_ends_the_trace_without_panicking() {
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.pcap");
        simple(&good, TsResolution::MicroSecond, &[T0, T0 + 1, T0 + 2]);
        let bytes = std::fs::read(&good).unwrap();
        let pool = Pool::new(8);
        // Cut at every length: never a panic, never more frames than whole records.
        for cut in FILE_HEADER_LEN..bytes.len() {
            let path = dir.path().join(format!("cut{cut}.pcap"));
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let mut src = PcapSource::open(&path, 0).unwrap();
            let mut burst = Burst::new();
            let n = src.rx_burst(&pool, &mut burst, u64::MAX);
            let whole = (cut - FILE_HEADER_LEN) / (RECORD_HEADER_LEN + 60);
            assert_eq!(n, whole, "cut at {cut}");
            assert!(src.exhausted());
            let clean = whole * (RECORD_HEADER_LEN + 60) == cut - FILE_HEADER_LEN;
            assert_eq!(src.read_errors(), u64::from(!clean), "cut at {cut}");
        }
        // A record claiming an absurd length is corruption, not an allocation.
        let mut bad = bytes.clone();
        let second = FILE_HEADER_LEN + RECORD_HEADER_LEN + 60;
        bad[second + 8..second + 12].copy_from_slice(&u32::MAX.to_ne_bytes());
        let path = dir.path().join("bad.pcap");
        std::fs::write(&path, &bad).unwrap();
        let mut src = PcapSource::open(&path, 0).unwrap();
        let mut burst = Burst::new();
        assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 1);
        assert_eq!(src.read_errors(), 1);
        assert!(src.exhausted());
    }

    #[test]
    fn sink_writes_departure_times_in_nanoseconds_from_the_epoch() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.pcap");
        let epoch = T0 + 123;
        let mut sink = PcapSink::create(&path, epoch);
        assert!(!path.exists());
        let pool = Pool::new(4);
        let mut burst = Burst::new();
        let departing = |f: &[u8], t: Nanos| {
            let mut p = pool.alloc_from(f).unwrap();
            p.timestamp = t;
            p
        };
        burst.push(departing(&frame(1, 60), 1_500));
        burst.push(departing(&frame(2, 1514), 1_507));
        assert_eq!(sink.tx_burst(&mut burst), 2);
        assert!(burst.is_empty());
        assert_eq!(
            pool.available(),
            2,
            "written frames wait to go back together"
        );
        sink.flush().unwrap();
        assert_eq!(pool.available(), 4, "a flush gives them back");
        burst.push(departing(&frame(3, 64), 2_000_000_000));
        assert_eq!(sink.tx_burst(&mut burst), 1);
        sink.flush().unwrap();
        assert!(sink.created());
        assert_eq!((sink.tx_frames(), sink.tx_errors()), (3, 0));

        let mut r = PcapReader::new(File::open(&path).unwrap()).unwrap();
        assert_eq!(r.header().ts_resolution, TsResolution::NanoSecond);
        assert_eq!(r.header().datalink, DataLink::ETHERNET);
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.timestamp, Duration::from_nanos(epoch + 1_500));
        assert_eq!(&p.data[..], &frame(1, 60)[..]);
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!((p.data.len(), p.orig_len), (1514, 1514));
        assert_eq!(p.timestamp, Duration::from_nanos(epoch + 1_507));
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.timestamp, Duration::from_nanos(epoch + 2_000_000_000));
        assert!(r.next_packet().is_none());

        // Read back through the replay side, aligned to the same epoch.
        let mut src = PcapSource::open_aligned(&path, epoch).unwrap();
        assert_eq!(src.next_rx_time(), Some(1_500));
        assert_eq!(src.rx_burst(&pool, &mut burst, u64::MAX), 3);
        assert_eq!(burst[2].timestamp, 2_000_000_000);
    }

    #[test]
    fn a_sink_that_never_transmits_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quiet.pcap");
        let mut sink = PcapSink::create(&path, 0);
        let mut burst = Burst::new();
        assert_eq!(sink.tx_burst(&mut burst), 0);
        sink.flush().unwrap();
        drop(sink);
        assert!(!path.exists());
    }

    #[test]
    fn a_sink_holds_no_more_than_a_few_written_frames() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = PcapSink::create(dir.path().join("out.pcap"), 0);
        let pool = Pool::new(STASH + 1);
        for i in 0..10 * STASH {
            let mut burst = Burst::new();
            burst.push(pool.alloc_from(&frame(i as u8, 60)).unwrap());
            assert_eq!(sink.tx_burst(&mut burst), 1);
            assert!(pool.available() >= 1, "frame {i}");
        }
        assert_eq!(sink.tx_frames(), 10 * STASH as u64);
    }

    #[test]
    fn frames_that_do_not_reach_a_full_disk_are_counted_as_errors() {
        // /dev/full takes the open and refuses every write, as a full disk.
        let mut sink = PcapSink::create("/dev/full", 0);
        let pool = Pool::new(64);
        let frames = 2 * crate::port::spool::CHUNK / 1514 + 1;
        for i in 0..frames {
            let mut burst = Burst::new();
            burst.push(pool.alloc_from(&frame(i as u8, 1514)).unwrap());
            assert_eq!(sink.tx_burst(&mut burst), 1);
        }
        let e = sink.flush().unwrap_err();
        assert!(e.to_string().contains("/dev/full"), "{e}");
        assert_eq!((sink.tx_frames(), sink.tx_errors()), (0, frames as u64));
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&frame(1, 60)).unwrap());
        assert_eq!(sink.tx_burst(&mut burst), 1);
        assert_eq!((sink.tx_frames(), sink.tx_errors()), (0, frames as u64 + 1));
        sink.flush().unwrap_err();
        assert_eq!(pool.available(), 64, "every buffer went back");
    }

    #[test]
    fn a_sink_that_cannot_create_its_file_counts_errors() {
        let dir = tempfile::tempdir().unwrap();
        let mut sink = PcapSink::create(dir.path().join("no/such/dir/x.pcap"), 0);
        let pool = Pool::new(4);
        for _ in 0..2 {
            let mut burst = Burst::new();
            burst.push(pool.alloc_from(&frame(1, 60)).unwrap());
            burst.push(pool.alloc_from(&frame(2, 60)).unwrap());
            assert_eq!(sink.tx_burst(&mut burst), 2);
            assert!(burst.is_empty());
        }
        assert!(!sink.created());
        assert_eq!((sink.tx_frames(), sink.tx_errors()), (0, 4));
        sink.flush().unwrap();
        assert_eq!(pool.available(), 4);
    }

    #[test]
    fn pcap_port_joins_both_sides() {
        let dir = tempfile::tempdir().unwrap();
        let (inp, out) = (dir.path().join("in.pcap"), dir.path().join("out.pcap"));
        simple(&inp, TsResolution::MicroSecond, &[T0, T0 + 1_000]);
        let mut port = PcapPort::new(
            Some(PcapSource::open(&inp, 0).unwrap()),
            Some(PcapSink::create(&out, T0)),
        );
        assert_eq!(
            port.describe(),
            format!("pcap in={} out={}", inp.display(), out.display())
        );
        let pool = Pool::new(4);
        let mut burst = Burst::new();
        assert_eq!(port.next_rx_time(), Some(0));
        assert_eq!(port.rx_burst(&pool, &mut burst, 0), 1);
        assert!(!port.exhausted());
        assert_eq!(port.tx_burst(&mut burst, 10), 1);
        assert_eq!(port.rx_burst(&pool, &mut burst, 1_000), 1);
        assert!(port.exhausted());
        port.flush().unwrap();
        let c = port.io_counters();
        assert_eq!(
            (c.rx_frames, c.tx_frames, c.rx_dropped, c.tx_errors),
            (2, 1, 0, 0)
        );
        assert!(out.exists());

        let idle = PcapPort::new(None, None);
        assert!(idle.exhausted());
        assert_eq!(idle.describe(), "pcap");
        assert_eq!(idle.next_rx_time(), None);
    }

    #[test]
    fn closed_loop_holds_paused_frames_and_stamps_their_release() {
        let ip = |dscp: u8, seq: u8| {
            let mut f = frame(seq, 60);
            f[12..14].copy_from_slice(&[0x08, 0x00]);
            f[14] = 0x45;
            f[15] = dscp << 2;
            f
        };
        let dir = tempfile::tempdir().unwrap();
        let (inp, out) = (dir.path().join("in.pcap"), dir.path().join("out.pcap"));
        let recs = vec![
            (T0 + 1_000, ip(24, 1), 60),
            (T0 + 2_000, ip(0, 2), 60),
            (T0 + 3_000, ip(24, 3), 60),
        ];
        write_pcap(&inp, TsResolution::NanoSecond, DataLink::ETHERNET, &recs);
        let mut dscp = [0u8; 64];
        dscp[24] = 3;
        let src = PcapSource::open(&inp, 1_000)
            .unwrap()
            .closed_loop(PfcUpstream::new(Some(100_000), dscp, None));
        let mut port = PcapPort::new(Some(src), Some(PcapSink::create(&out, 0)));
        let pool = Pool::new(8);
        // The switch pauses priority 3 for 1000 quanta (5120 ns) at time 500.
        let mut q = [0u16; 8];
        q[3] = 1000;
        let mut xoff = [0u8; crate::wire::mac_control::FRAME_LEN];
        crate::wire::mac_control::MacControlRepr::Pfc {
            enable: 1 << 3,
            quanta: q,
        }
        .emit_frame(crate::wire::MacAddr([2, 0, 0, 0, 0, 9]), &mut xoff);
        let mut tx = Burst::new();
        tx.push(pool.alloc_from(&xoff).unwrap());
        port.tx_burst(&mut tx, 500);
        // Priority 0 passes the held priority-3 frame.
        assert_eq!(port.next_rx_time(), Some(2_000));
        let mut b = Burst::new();
        assert_eq!(port.rx_burst(&pool, &mut b, 5_000), 1);
        assert_eq!((b[0].timestamp, b[0].data()[20]), (2_000, 2));
        assert_eq!(port.next_rx_time(), Some(5_620));
        assert!(!port.exhausted());
        assert_eq!(port.rx_burst(&pool, &mut b, 10_000), 2);
        assert_eq!((b[1].timestamp, b[1].data()[20]), (5_620, 1));
        // One frame time later: 60 + 24 bytes on the wire at 100 Gb/s.
        assert_eq!((b[2].timestamp, b[2].data()[20]), (5_627, 3));
        assert!(port.exhausted());
        assert_eq!(port.io_counters().rx_frames, 3);
    }
}
