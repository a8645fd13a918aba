//! Pcap replay and capture: a port whose wire is a pair of files.
//!
//! A [`PcapSource`] replays a classic pcap file (microsecond or nanosecond
//! resolution, either byte order) or a pcapng file as Wireshark, tshark and
//! dumpcap write them (any `if_tsresol`, either byte order, one interface
//! picked by [`CaptureInterface`]), `LINKTYPE_ETHERNET` only, in virtual time:
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
//! With an [`NgCapture`], sinks write instead into one pcapng file shared
//! by every port, each an interface named after the railyard interface.
//!
//! [`PcapPort`] joins an optional source and an optional sink into a [`Port`].

pub mod ng;
mod reader;
mod sink;
mod source;

use std::io::{self, ErrorKind};
use std::path::Path;

use crate::clock::Nanos;
use crate::packet::{free_burst, Burst, Pool};
use crate::port::{IoCounters, Port, TxDone};

pub use ng::NgCapture;
pub use sink::PcapSink;
pub use source::PcapSource;

/// Which interface of a capture a trace replays: a pcapng file may hold
/// frames of several interfaces, each with its own link type and clock.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CaptureInterface {
    /// The capture's only interface; a pcapng file with several is refused
    /// with a list of them.
    #[default]
    Only,
    /// By number, as Wireshark numbers them (`frame.interface_id`, counted
    /// across the sections of a merged file).
    Index(u32),
    /// By name (the interface block's `if_name`, e.g. `eth0`); the first
    /// interface of that name.
    Name(String),
}

impl std::fmt::Display for CaptureInterface {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaptureInterface::Only => f.write_str("(the only one)"),
            CaptureInterface::Index(n) => write!(f, "{n}"),
            CaptureInterface::Name(n) => write!(f, "{n:?}"),
        }
    }
}

impl std::str::FromStr for CaptureInterface {
    type Err = String;

    /// A number picks by index, anything else by name.
    fn from_str(s: &str) -> Result<Self, String> {
        if s.is_empty() {
            return Err("empty interface: give a number or an if_name".into());
        }
        Ok(match s.parse::<u32>() {
            Ok(n) => CaptureInterface::Index(n),
            Err(_) => CaptureInterface::Name(s.to_string()),
        })
    }
}

/// How a trace is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceOptions {
    /// The interface of a multi-interface pcapng capture to replay.
    pub interface: CaptureInterface,
    /// A damaged or truncated record ends the trace there, counted as a
    /// `capture_damaged` drop, instead of failing the replay.
    pub stop_at_damage: bool,
}

/// Length of the pcap global header.
pub(super) const FILE_HEADER_LEN: usize = 24;
/// Length of a pcap record header.
pub(super) const RECORD_HEADER_LEN: usize = 16;
/// Largest record a sane capture holds whatever its snaplen says (libpcap's
/// own limit); a longer one means the file is corrupt.
pub(super) const MAX_RECORD: u32 = 262_144;
/// Snaplen written into sink files: larger than any frame railyard sends.
pub(super) const SINK_SNAPLEN: u32 = 65_535;
/// Read buffer size: enough for a burst of jumbo frames per refill.
pub(super) const READ_BUF: usize = 256 * 1024;
pub(super) const NANOS_PER_SEC: u64 = 1_000_000_000;

/// Adds the file name to an error so a failure says which trace it was.
pub(super) fn with_path(path: &Path, e: impl std::fmt::Display, kind: ErrorKind) -> io::Error {
    io::Error::new(kind, format!("{}: {e}", path.display()))
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
    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> TxDone {
        if let Some(s) = self.source.as_mut() {
            s.on_tx(burst, now);
        }
        match self.sink.as_mut() {
            Some(s) => TxDone::sent(s.tx_burst(burst)),
            None => {
                let n = burst.len();
                free_burst(burst);
                TxDone::sent(n)
            }
        }
    }

    fn io_counters(&self) -> IoCounters {
        let mut c = IoCounters::default();
        if let Some(s) = &self.source {
            c.rx_frames = s.rx_frames();
            c.rx_dropped = s.rx_dropped();
            c.rx_no_buffer = s.rx_no_buffer();
            c.rx_oversize = s.rx_oversize();
            c.rx_damaged = s.rx_damaged();
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

    /// Flushes the capture; then a trace that broke off at a damaged
    /// record (and was not told to stop there) fails here, so a replay
    /// that lost the rest of a trace does not pass for a whole one.
    fn flush(&mut self) -> io::Result<()> {
        if let Some(s) = self.sink.as_mut() {
            s.flush()?;
        }
        match self.source.as_ref().and_then(PcapSource::damage) {
            Some(e) => Err(io::Error::new(ErrorKind::InvalidData, e.to_string())),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod tests_ng;

#[cfg(test)]
mod tests_ng_out;
