//! Reading classic pcap files: the global header, then one record at a
//! time with one record of look-ahead, refusing corrupt lengths.

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::path::Path;

use pcap_file::pcap::PcapHeader;
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

use crate::packet::MAX_FRAME;

use super::{with_path, FILE_HEADER_LEN, MAX_RECORD, NANOS_PER_SEC, READ_BUF, RECORD_HEADER_LEN};

/// What the global header told us about how to read the records.
#[derive(Debug, Clone, Copy)]
pub(super) struct Format {
    pub(super) big_endian: bool,
    pub(super) nanos: bool,
    pub(super) snaplen: u32,
}

impl Format {
    pub(super) fn u32_at(&self, b: &[u8], at: usize) -> u32 {
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
pub(super) struct Record {
    /// Absolute capture time, ns since the Unix epoch.
    pub(super) ts_abs: u64,
    /// Where the captured bytes start in the reader's buffer.
    pub(super) start: usize,
    /// Captured bytes (0 when `oversize`).
    pub(super) len: usize,
    /// The record was longer than [`MAX_FRAME`]; its bytes were skipped.
    pub(super) oversize: bool,
    /// Fewer bytes were captured than were on the wire.
    pub(super) truncated: bool,
}

impl Record {
    pub(super) const EMPTY: Record = Record {
        ts_abs: 0,
        start: 0,
        len: 0,
        oversize: false,
        truncated: false,
    };
}

/// Why reading the next record stopped.
pub(super) enum Next {
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
pub(super) struct Reader {
    pub(super) input: File,
    /// Bytes read from the file; `buf[pos..end]` not yet consumed.
    pub(super) buf: Box<[u8]>,
    pub(super) pos: usize,
    pub(super) end: usize,
    pub(super) format: Format,
}

impl Reader {
    /// Opens `path` and checks its global header.
    pub(super) fn open(path: &Path) -> io::Result<Reader> {
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
    pub(super) fn fill(&mut self, n: usize) -> io::Result<bool> {
        if self.end - self.pos >= n {
            return Ok(true);
        }
        self.refill(n)
    }

    /// The slow half of [`fill`](Self::fill): compacts and reads the file.
    #[cold]
    pub(super) fn refill(&mut self, n: usize) -> io::Result<bool> {
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
    pub(super) fn skip(&mut self, mut n: usize) -> io::Result<bool> {
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
    pub(super) fn data(&self, rec: &Record) -> &[u8] {
        &self.buf[rec.start..rec.start + rec.len]
    }

    /// Reads the next record into `rec`; the previous record's bytes are
    /// gone from then on.
    pub(super) fn next(&mut self, rec: &mut Record) -> Next {
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
