//! The transmit side of a pcap port: frames written with their departure
//! times, by a writer thread of their own.

use std::fs::File;
use std::io::{self, ErrorKind};
use std::path::{Path, PathBuf};

use pcap_file::pcap::PcapHeader;
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

use crate::packet::{free_burst, Burst};
use crate::port::spool::Spool;

use super::ng::{NgCapture, FLAGS_OUTBOUND};

use super::{FILE_HEADER_LEN, NANOS_PER_SEC, RECORD_HEADER_LEN, SINK_SNAPLEN};

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
    /// Writing into a shared pcapng file as this interface instead of a
    /// pcap file of its own.
    ng: Option<(NgCapture, u32)>,
}

/// Written frames a sink gives back to the pool at a time: replay in exact
/// time sends about one frame per call, and a visit to the pool per frame
/// costs more than writing the frame. Few enough that the buffers held this
/// way never matter to the pool.
pub(super) const STASH: usize = 8;

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
            ng: None,
        }
    }

    /// Records into the shared pcapng `capture` as its interface
    /// `interface` (an index into the interfaces it was created with),
    /// timestamps as for [`create`](Self::create). Frames are flagged
    /// outbound.
    pub fn pcapng(capture: NgCapture, interface: u32, epoch_abs_ns: u64) -> Self {
        let mut sink = PcapSink::create(capture.path(), epoch_abs_ns);
        sink.ng = Some((capture, interface));
        sink
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
        if let Some((cap, ifc)) = &self.ng {
            let mut written = 0u64;
            for p in burst.iter() {
                let ts = self.epoch_abs_ns.saturating_add(p.timestamp);
                written += u64::from(cap.write(*ifc, ts, p.data(), FLAGS_OUTBOUND, None));
            }
            let taken = burst.len();
            self.tx_frames += written;
            self.tx_errors += taken as u64 - written;
            free_burst(burst);
            return taken;
        }
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
        if let Some((cap, _)) = &self.ng {
            return cap.flush();
        }
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
        self.out.is_some() || self.ng.is_some()
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
