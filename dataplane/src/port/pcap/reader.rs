//! Reading captures: classic pcap and pcapng, one packet record at a time
//! with one record of look-ahead, refusing corrupt lengths.
//!
//! pcapng is read by hand rather than through `pcap_file::pcapng`: that
//! parser (2.0) takes an Enhanced Packet Block's timestamp as nanoseconds
//! whatever the interface's `if_tsresol` says, allocates an options vector
//! per packet and rejects a whole block for one malformed option. Here a
//! block is decoded in place in the read buffer, like a classic record.

use std::fs::File;
use std::io::{self, ErrorKind, Read};
use std::path::Path;

use pcap_file::pcap::PcapHeader;
use pcap_file::{DataLink, Endianness, PcapError, TsResolution};

use crate::packet::MAX_FRAME;

use super::{
    with_path, CaptureInterface, FILE_HEADER_LEN, MAX_RECORD, NANOS_PER_SEC, READ_BUF,
    RECORD_HEADER_LEN,
};

/// What the global header told us about how to read the records.
#[derive(Debug, Clone, Copy)]
pub(super) struct Format {
    pub(super) big_endian: bool,
    pub(super) nanos: bool,
    pub(super) snaplen: u32,
}

impl Format {
    pub(super) fn u32_at(&self, b: &[u8], at: usize) -> u32 {
        u32_at(self.big_endian, b, at)
    }
}

fn u32_at(big_endian: bool, b: &[u8], at: usize) -> u32 {
    let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if big_endian {
        u32::from_be_bytes(v)
    } else {
        u32::from_le_bytes(v)
    }
}

fn u16_at(big_endian: bool, b: &[u8], at: usize) -> u16 {
    let v = [b[at], b[at + 1]];
    if big_endian {
        u16::from_be_bytes(v)
    } else {
        u16::from_le_bytes(v)
    }
}

/// pcapng block types (pcapng spec, section 11.1).
mod block {
    pub(super) const SECTION_HEADER: u32 = 0x0A0D_0D0A;
    pub(super) const INTERFACE_DESCRIPTION: u32 = 1;
    pub(super) const OBSOLETE_PACKET: u32 = 2;
    pub(super) const SIMPLE_PACKET: u32 = 3;
    pub(super) const ENHANCED_PACKET: u32 = 6;
}

/// The section header's byte-order magic as it reads in big-endian order.
const BYTE_ORDER_MAGIC: [u8; 4] = [0x1A, 0x2B, 0x3C, 0x4D];
/// Smallest block: type, total length, trailing total length.
const MIN_BLOCK: usize = 12;
/// Enhanced (and obsolete) packet block up to the packet data.
const EPB_HEADER_LEN: usize = 28;
/// Simple packet block up to the packet data.
const SPB_HEADER_LEN: usize = 12;
/// Interface description block up to its options.
const IDB_HEADER_LEN: usize = 16;
/// `if_name`, `if_tsresol`, `if_tsoffset` (pcapng spec, section 4.2).
const OPT_IF_NAME: u16 = 2;
const OPT_IF_TSRESOL: u16 = 9;
const OPT_IF_TSOFFSET: u16 = 14;
/// `LINKTYPE_ETHERNET`.
const LINKTYPE_ETHERNET: u16 = 1;

/// One interface of a pcapng file, as its description block declares it.
#[derive(Debug, Clone)]
struct Interface {
    link_type: u16,
    snaplen: u32,
    /// Timestamp units per second (`if_tsresol`; 10^6 when absent).
    units: u128,
    /// Seconds added to every timestamp (`if_tsoffset`).
    offset_s: i64,
    name: Option<String>,
}

impl Interface {
    /// Absolute ns since the Unix epoch of a raw timestamp.
    fn nanos(&self, raw: u64) -> u64 {
        let raw = u128::from(raw);
        let ns = (raw / self.units) * u128::from(NANOS_PER_SEC)
            + (raw % self.units) * u128::from(NANOS_PER_SEC) / self.units;
        let ns = i128::try_from(ns).unwrap_or(i128::MAX)
            + i128::from(self.offset_s) * i128::from(NANOS_PER_SEC);
        u64::try_from(ns.max(0)).unwrap_or(u64::MAX)
    }

    fn describe(&self, index: usize) -> String {
        let link = if self.link_type == LINKTYPE_ETHERNET {
            "Ethernet".to_string()
        } else {
            format!("link type {}", self.link_type)
        };
        match &self.name {
            Some(n) => format!("{index} ({n}, {link})"),
            None => format!("{index} ({link})"),
        }
    }
}

/// The state of a pcapng file being read: the current section's byte order
/// and every interface declared so far, numbered across sections as
/// Wireshark numbers them.
#[derive(Debug)]
struct Ng {
    big_endian: bool,
    interfaces: Vec<Interface>,
    /// Index in `interfaces` of the current section's interface 0.
    section_start: usize,
    select: CaptureInterface,
    /// The selected interface, once its description block was read.
    chosen: Option<usize>,
    /// Timestamp of the last packet, for simple packet blocks (which carry none).
    last_ts: u64,
}

impl Ng {
    fn list(&self) -> String {
        let all: Vec<_> = self
            .interfaces
            .iter()
            .enumerate()
            .map(|(i, f)| f.describe(i))
            .collect();
        if all.is_empty() {
            "none".to_string()
        } else {
            all.join(", ")
        }
    }
}

#[derive(Debug)]
enum Kind {
    Pcap(Format),
    Ng(Ng),
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
    /// The file is damaged or unreadable from here on; the message names
    /// the record number and byte offset.
    Broken(io::Error),
}

/// A lazy record reader over one capture file. It keeps its own read buffer
/// rather than a `BufReader`, so a record's header is decoded and its bytes
/// handed out in place, without a per-record copy or `Read` call chain.
pub(super) struct Reader {
    input: File,
    /// Bytes read from the file; `buf[pos..end]` not yet consumed.
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    kind: Kind,
    /// Packet records met so far, on every interface (Wireshark's frame
    /// number of the last one).
    records: u64,
    /// File offset of the record or block being read.
    record_offset: u64,
    /// Bytes of the last block still to be passed over (a pcapng block whose
    /// packet was read but whose options were not).
    skip_next: usize,
}

impl Reader {
    /// Opens `path` and checks its file header; `select` picks the
    /// interface of a pcapng file.
    pub(super) fn open(path: &Path, select: &CaptureInterface) -> io::Result<Reader> {
        let input = File::open(path).map_err(|e| with_path(path, &e, e.kind()))?;
        let mut reader = Reader {
            input,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
            kind: Kind::Pcap(Format {
                big_endian: false,
                nanos: false,
                snaplen: 0,
            }),
            records: 0,
            record_offset: 0,
            skip_next: 0,
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
        if reader.buf[..4] == block::SECTION_HEADER.to_be_bytes() {
            // The section header is read as the first block; only its
            // byte-order magic is checked here, to tell a pcapng file from
            // anything else.
            let magic = [reader.buf[8], reader.buf[9], reader.buf[10], reader.buf[11]];
            let mut reversed = magic;
            reversed.reverse();
            if magic != BYTE_ORDER_MAGIC && reversed != BYTE_ORDER_MAGIC {
                return Err(with_path(
                    path,
                    "not a pcap file: a pcapng section header with a bad byte-order magic",
                    ErrorKind::InvalidData,
                ));
            }
            reader.kind = Kind::Ng(Ng {
                big_endian: false,
                interfaces: Vec::new(),
                section_start: 0,
                select: select.clone(),
                chosen: None,
                last_ts: 0,
            });
            return Ok(reader);
        }
        if !matches!(select, CaptureInterface::Only | CaptureInterface::Index(0)) {
            return Err(with_path(
                path,
                format_args!(
                    "a classic pcap file has a single interface (0); interface {select} \
                     is for pcapng captures"
                ),
                ErrorKind::InvalidInput,
            ));
        }
        let header = &reader.buf[..FILE_HEADER_LEN];
        reader.pos = FILE_HEADER_LEN;
        let (_, h) = PcapHeader::from_slice(header).map_err(|e| match e {
            PcapError::InvalidField(_) => with_path(
                path,
                "not a pcap file (bad magic number; neither classic pcap nor pcapng)",
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
        reader.kind = Kind::Pcap(Format {
            big_endian: h.endianness == Endianness::Big,
            nanos: h.ts_resolution == TsResolution::NanoSecond,
            snaplen: h.snaplen,
        });
        Ok(reader)
    }

    /// Packet records met so far, on every interface: the number of the
    /// record in the look-ahead, as Wireshark numbers frames.
    pub(super) fn records(&self) -> u64 {
        self.records
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
        self.base += self.pos as u64;
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
    pub(super) fn data(&self, rec: &Record) -> &[u8] {
        &self.buf[rec.start..rec.start + rec.len]
    }

    /// Reads the next record into `rec`; the previous record's bytes are
    /// gone from then on. A damaged file's error names the record number
    /// and the byte offset where the damage starts.
    pub(super) fn next(&mut self, rec: &mut Record) -> Next {
        let next = if matches!(self.kind, Kind::Pcap(_)) {
            self.next_pcap(rec)
        } else {
            self.next_ng(rec)
        };
        match next {
            Next::Broken(e) => Next::Broken(io::Error::new(
                e.kind(),
                format!(
                    "record {} at byte offset {}: {e}",
                    self.records + 1,
                    self.record_offset
                ),
            )),
            other => other,
        }
    }

    fn next_pcap(&mut self, rec: &mut Record) -> Next {
        let Kind::Pcap(f) = self.kind else {
            return Next::Eof;
        };
        self.record_offset = self.base + self.pos as u64;
        match self.fill(RECORD_HEADER_LEN) {
            Ok(true) => {}
            Ok(false) if self.pos == self.end => return Next::Eof,
            Ok(false) => {
                return broken(ErrorKind::UnexpectedEof, "file ends inside a record header")
            }
            Err(e) => return Next::Broken(e),
        }
        let hdr = &self.buf[self.pos..self.pos + RECORD_HEADER_LEN];
        let ts_sec = u64::from(f.u32_at(hdr, 0));
        let frac = u64::from(f.u32_at(hdr, 4));
        let incl_len = f.u32_at(hdr, 8);
        let orig_len = f.u32_at(hdr, 12);
        let frac_ns = if f.nanos { frac } else { frac * 1000 };
        if frac_ns >= NANOS_PER_SEC {
            return broken(
                ErrorKind::InvalidData,
                format!("record timestamp fraction {frac} out of range"),
            );
        }
        if incl_len > f.snaplen.max(MAX_RECORD) {
            return broken(
                ErrorKind::InvalidData,
                format!("record length {incl_len} exceeds the snaplen {}", f.snaplen),
            );
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
            Ok(true) => {
                self.records += 1;
                Next::Record
            }
            Ok(false) => broken(ErrorKind::UnexpectedEof, "file ends inside a record"),
            Err(e) => Next::Broken(e),
        }
    }

    /// Reads pcapng blocks until a packet of the selected interface.
    fn next_ng(&mut self, rec: &mut Record) -> Next {
        loop {
            if self.skip_next > 0 {
                let n = std::mem::take(&mut self.skip_next);
                match self.skip(n) {
                    Ok(true) => {}
                    Ok(false) => {
                        return broken(ErrorKind::UnexpectedEof, "file ends inside a block")
                    }
                    Err(e) => return Next::Broken(e),
                }
            }
            self.record_offset = self.base + self.pos as u64;
            match self.fill(MIN_BLOCK) {
                Ok(true) => {}
                Ok(false) if self.pos == self.end => return self.ng_end(),
                Ok(false) => {
                    return broken(ErrorKind::UnexpectedEof, "file ends inside a block header")
                }
                Err(e) => return Next::Broken(e),
            }
            let Kind::Ng(ng) = &mut self.kind else {
                return Next::Eof;
            };
            let b = &self.buf[self.pos..self.end];
            // The section header's type reads the same in both byte orders;
            // its byte-order magic sets the order of everything after it.
            if b[..4] == block::SECTION_HEADER.to_be_bytes() {
                ng.big_endian =
                    match [b[8], b[9], b[10], b[11]] {
                        m if m == BYTE_ORDER_MAGIC => true,
                        [a, b, c, d] if [d, c, b, a] == BYTE_ORDER_MAGIC => false,
                        _ => return broken(
                            ErrorKind::InvalidData,
                            "not a pcap file: a pcapng section header with a bad byte-order magic",
                        ),
                    };
                ng.section_start = ng.interfaces.len();
            }
            let be = ng.big_endian;
            let kind = u32_at(be, b, 0);
            let total = u32_at(be, b, 4) as usize;
            if total < MIN_BLOCK || !total.is_multiple_of(4) {
                return broken(
                    ErrorKind::InvalidData,
                    format!("block length {total} is not a multiple of 4 of at least {MIN_BLOCK}"),
                );
            }
            match kind {
                block::SECTION_HEADER => {
                    if let Err(e) = self.whole_block(total) {
                        return e;
                    }
                    let major = u16_at(be, &self.buf[self.pos..], 12);
                    if major != 1 {
                        return broken(
                            ErrorKind::InvalidData,
                            format!("pcapng version {major} is not supported (only 1.x)"),
                        );
                    }
                    self.pos += total;
                }
                block::INTERFACE_DESCRIPTION => {
                    if let Err(e) = self.interface(total) {
                        return e;
                    }
                    self.pos += total;
                }
                block::ENHANCED_PACKET | block::OBSOLETE_PACKET | block::SIMPLE_PACKET => {
                    match self.packet(kind, total, rec) {
                        Some(next) => return next,
                        None => continue,
                    }
                }
                // Name resolution, interface statistics, decryption
                // secrets, custom and any future blocks: not packets.
                _ => self.skip_next = total,
            }
        }
    }

    /// The end of a pcapng file: an error when the selected interface
    /// never appeared.
    fn ng_end(&self) -> Next {
        match &self.kind {
            Kind::Ng(ng) if ng.chosen.is_none() && ng.select != CaptureInterface::Only => broken(
                ErrorKind::InvalidInput,
                format!(
                    "the capture has no interface {}; its interfaces: {}",
                    ng.select,
                    ng.list()
                ),
            ),
            _ => Next::Eof,
        }
    }

    /// Makes a whole block of `total` bytes (at most the buffer) available
    /// and checks its trailing length.
    fn whole_block(&mut self, total: usize) -> Result<(), Next> {
        if total > self.buf.len() {
            return Err(broken(
                ErrorKind::InvalidData,
                format!("block of {total} bytes is longer than any this reader accepts"),
            ));
        }
        match self.fill(total) {
            Ok(true) => {}
            Ok(false) => return Err(broken(ErrorKind::UnexpectedEof, "file ends inside a block")),
            Err(e) => return Err(Next::Broken(e)),
        }
        let Kind::Ng(ng) = &self.kind else {
            return Ok(());
        };
        let trailer = u32_at(ng.big_endian, &self.buf[self.pos..], total - 4) as usize;
        if trailer != total {
            return Err(broken(
                ErrorKind::InvalidData,
                format!("block length {total} does not match its trailing length {trailer}"),
            ));
        }
        Ok(())
    }

    /// Reads an interface description block at `pos` (not consumed).
    fn interface(&mut self, total: usize) -> Result<(), Next> {
        if total < IDB_HEADER_LEN + 4 {
            return Err(broken(
                ErrorKind::InvalidData,
                format!("interface description block of {total} bytes is too short"),
            ));
        }
        self.whole_block(total)?;
        let Kind::Ng(ng) = &mut self.kind else {
            return Ok(());
        };
        let be = ng.big_endian;
        let b = &self.buf[self.pos..self.pos + total];
        let mut iface = Interface {
            link_type: u16_at(be, b, 8),
            snaplen: u32_at(be, b, 12),
            units: 1_000_000,
            offset_s: 0,
            name: None,
        };
        let mut opts = &b[IDB_HEADER_LEN..total - 4];
        while opts.len() >= 4 {
            let code = u16_at(be, opts, 0);
            let len = usize::from(u16_at(be, opts, 2));
            let padded = len.div_ceil(4) * 4;
            if code == 0 || opts.len() < 4 + padded {
                break;
            }
            let v = &opts[4..4 + len];
            match (code, len) {
                (OPT_IF_NAME, _) => iface.name = Some(String::from_utf8_lossy(v).into_owned()),
                (OPT_IF_TSRESOL, 1) => {
                    let exp = u32::from(v[0] & 0x7f);
                    // Most significant bit set: a negative power of two;
                    // clear: a negative power of ten.
                    let units = if v[0] & 0x80 != 0 {
                        1u128.checked_shl(exp)
                    } else {
                        10u128.checked_pow(exp)
                    };
                    match units {
                        Some(u) => iface.units = u,
                        None => {
                            return Err(broken(
                                ErrorKind::InvalidData,
                                format!(
                                    "interface timestamp resolution {:#04x} is out of range",
                                    v[0]
                                ),
                            ))
                        }
                    }
                }
                (OPT_IF_TSOFFSET, 8) => {
                    let raw = [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]];
                    iface.offset_s = if be {
                        i64::from_be_bytes(raw)
                    } else {
                        i64::from_le_bytes(raw)
                    };
                }
                _ => {}
            }
            opts = &opts[4 + padded..];
        }
        let index = ng.interfaces.len();
        let picked = match &ng.select {
            CaptureInterface::Only => false,
            CaptureInterface::Index(n) => *n as usize == index,
            CaptureInterface::Name(n) => ng.chosen.is_none() && iface.name.as_deref() == Some(n),
        };
        if picked {
            if iface.link_type != LINKTYPE_ETHERNET {
                return Err(broken(
                    ErrorKind::InvalidData,
                    format!(
                        "interface {} is not Ethernet; only LINKTYPE_ETHERNET (1) interfaces \
                         can be replayed",
                        iface.describe(index)
                    ),
                ));
            }
            ng.chosen = Some(index);
        }
        ng.interfaces.push(iface);
        Ok(())
    }

    /// Reads a packet block at `pos`: `Some` with the record (or the
    /// error), `None` when it belongs to another interface and was passed over.
    fn packet(&mut self, kind: u32, total: usize, rec: &mut Record) -> Option<Next> {
        let header = if kind == block::SIMPLE_PACKET {
            SPB_HEADER_LEN
        } else {
            EPB_HEADER_LEN
        };
        if total < header + 4 {
            return Some(broken(
                ErrorKind::InvalidData,
                format!("packet block of {total} bytes is too short"),
            ));
        }
        match self.fill(header) {
            Ok(true) => {}
            Ok(false) => return Some(broken(ErrorKind::UnexpectedEof, "file ends inside a block")),
            Err(e) => return Some(Next::Broken(e)),
        }
        let Kind::Ng(ng) = &mut self.kind else {
            return Some(Next::Eof);
        };
        let be = ng.big_endian;
        let b = &self.buf[self.pos..self.pos + header];
        let (local, raw_ts, orig_len, stated_len) = match kind {
            block::ENHANCED_PACKET => (
                u32_at(be, b, 8) as usize,
                Some(u64::from(u32_at(be, b, 12)) << 32 | u64::from(u32_at(be, b, 16))),
                u32_at(be, b, 24),
                Some(u32_at(be, b, 20) as usize),
            ),
            block::OBSOLETE_PACKET => (
                usize::from(u16_at(be, b, 8)),
                Some(u64::from(u32_at(be, b, 12)) << 32 | u64::from(u32_at(be, b, 16))),
                u32_at(be, b, 24),
                Some(u32_at(be, b, 20) as usize),
            ),
            // A simple packet block: interface 0, no timestamp, and only
            // the block length says how much was captured.
            _ => (0, None, u32_at(be, b, 8), None),
        };
        let index = ng.section_start + local;
        let Some(iface) = ng.interfaces.get(index) else {
            return Some(broken(
                ErrorKind::InvalidData,
                format!(
                    "packet on interface {local}, which no interface description block \
                     declared; declared: {}",
                    ng.list()
                ),
            ));
        };
        let (link_type, snaplen) = (iface.link_type, iface.snaplen);
        let ts_abs = raw_ts.map_or(ng.last_ts, |t| iface.nanos(t));
        match ng.select {
            CaptureInterface::Only if ng.interfaces.len() > 1 => {
                return Some(broken(
                    ErrorKind::InvalidInput,
                    format!(
                        "the capture has several interfaces: {}; pick one by its \
                         number or name",
                        ng.list()
                    ),
                ))
            }
            CaptureInterface::Only if link_type != LINKTYPE_ETHERNET => {
                return Some(broken(
                    ErrorKind::InvalidData,
                    format!(
                        "interface {} is not Ethernet; only LINKTYPE_ETHERNET (1) \
                         interfaces can be replayed",
                        ng.interfaces[index].describe(index)
                    ),
                ))
            }
            CaptureInterface::Only => {}
            _ if ng.chosen != Some(index) => {
                self.records += 1;
                self.skip_next = total;
                return None;
            }
            _ => {}
        }
        ng.last_ts = ts_abs;
        let room = total - header - 4;
        let cap_len = match stated_len {
            Some(n) if n > room => {
                return Some(broken(
                    ErrorKind::InvalidData,
                    format!("captured length {n} exceeds its block of {total} bytes"),
                ))
            }
            Some(n) => n,
            None => {
                let snap = match snaplen {
                    0 => room,
                    s => (s as usize).min(room),
                };
                (orig_len as usize).min(snap)
            }
        };
        rec.ts_abs = ts_abs;
        rec.truncated = cap_len < orig_len as usize;
        rec.oversize = cap_len > MAX_FRAME;
        if rec.oversize {
            rec.start = 0;
            rec.len = 0;
            self.skip_next = total;
            self.records += 1;
            return Some(Next::Record);
        }
        if total <= self.buf.len() {
            if let Err(e) = self.whole_block(total) {
                return Some(e);
            }
            rec.start = self.pos + header;
            rec.len = cap_len;
            self.pos += total;
        } else {
            // Long options after a frame: keep the frame, pass over the rest
            // before the next block.
            match self.fill(header + cap_len) {
                Ok(true) => {}
                Ok(false) => {
                    return Some(broken(ErrorKind::UnexpectedEof, "file ends inside a block"))
                }
                Err(e) => return Some(Next::Broken(e)),
            }
            rec.start = self.pos + header;
            rec.len = cap_len;
            self.pos += header + cap_len;
            self.skip_next = total - header - cap_len;
        }
        self.records += 1;
        Some(Next::Record)
    }
}

fn broken(kind: ErrorKind, msg: impl Into<String>) -> Next {
    Next::Broken(io::Error::new(kind, msg.into()))
}
