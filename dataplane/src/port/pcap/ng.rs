//! Pcapng output: one file holding every port's frames, each port an
//! interface of its own named after the railyard interface.
//!
//! The blocks are written by a small typed writer rather than
//! `pcap_file::pcapng::PcapNgWriter`: that writer takes an owned `Vec` of
//! options per packet block (an allocation per frame) and always writes
//! timestamps in nanoseconds whatever an interface's `if_tsresol` says,
//! so the resolution would be right only by coincidence. Here each block is
//! appended into one reused buffer, and `if_tsresol` is written next to the
//! code that scales the timestamps.
//!
//! Blocks are in the machine's byte order, as libpcap writes them; readers
//! take either (the section header's byte-order magic says which).

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::port::record_file::RecordFile;

/// Section Header Block type; also the file's magic number.
pub const SHB: u32 = 0x0A0D_0D0A;
/// Byte-order magic in a section header.
pub const BYTE_ORDER_MAGIC: u32 = 0x1A2B_3C4D;
/// Interface Description Block type.
pub const IDB: u32 = 0x0000_0001;
/// Enhanced Packet Block type.
pub const EPB: u32 = 0x0000_0006;
/// Link type of every interface: Ethernet.
pub const LINKTYPE_ETHERNET: u16 = 1;

/// Option codes used here (pcapng spec, section 3.5 and the block sections).
mod opt {
    pub const END: u16 = 0;
    pub const COMMENT: u16 = 1;
    pub const SHB_USERAPPL: u16 = 4;
    pub const IF_NAME: u16 = 2;
    pub const IF_DESCRIPTION: u16 = 3;
    pub const IF_TSRESOL: u16 = 9;
    pub const EPB_FLAGS: u16 = 2;
}

/// `if_tsresol` value: 10^-9 s, since the switch's times are nanoseconds.
pub const TSRESOL_NS: u8 = 9;

/// EPB flags, direction bits (0-1): the frame arrived at the port.
pub const FLAGS_INBOUND: u32 = 0b01;
/// EPB flags, direction bits (0-1): the frame left the port.
pub const FLAGS_OUTBOUND: u32 = 0b10;

/// Longest option value: the length field is 16 bits; longer text is cut.
const MAX_OPTION: usize = u16::MAX as usize & !3;

/// Appends pcapng blocks to a byte buffer (see the module doc).
#[derive(Debug, Default)]
pub struct BlockWriter {
    buf: Vec<u8>,
}

impl BlockWriter {
    /// An empty writer.
    pub fn new() -> Self {
        BlockWriter::default()
    }

    /// The blocks appended since the last [`clear`](Self::clear).
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// Forgets the blocks written, keeping the buffer's capacity.
    pub fn clear(&mut self) {
        self.buf.clear();
    }

    fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_ne_bytes());
    }

    fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_ne_bytes());
    }

    fn pad(&mut self) {
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }

    /// Starts a block of `kind`, returning where it starts.
    fn begin(&mut self, kind: u32) -> usize {
        let start = self.buf.len();
        self.u32(kind);
        self.u32(0); // total length, set by `end`
        start
    }

    /// Ends the block begun at `start`: the total length at both ends.
    fn end(&mut self, start: usize) {
        self.pad();
        let total = (self.buf.len() - start + 4) as u32;
        self.u32(total);
        self.buf[start + 4..start + 8].copy_from_slice(&total.to_ne_bytes());
    }

    /// One option, its value padded to 32 bits; a value too long for the
    /// 16-bit length is cut.
    fn option(&mut self, code: u16, value: &[u8]) {
        let value = &value[..value.len().min(MAX_OPTION)];
        self.u16(code);
        self.u16(value.len() as u16);
        self.buf.extend_from_slice(value);
        self.pad();
    }

    fn end_of_options(&mut self) {
        self.u16(opt::END);
        self.u16(0);
    }

    /// A Section Header Block of unknown section length, naming the
    /// writing application in `shb_userappl`.
    pub fn section_header(&mut self, application: &str) {
        let start = self.begin(SHB);
        self.u32(BYTE_ORDER_MAGIC);
        self.u16(1); // major
        self.u16(0); // minor
        self.buf.extend_from_slice(&u64::MAX.to_ne_bytes()); // length unknown
        self.option(opt::SHB_USERAPPL, application.as_bytes());
        self.end_of_options();
        self.end(start);
    }

    /// An Ethernet Interface Description Block with nanosecond timestamps
    /// (`if_tsresol` = 9), named `name`, described by `description`.
    pub fn interface(&mut self, name: &str, description: &str, snaplen: u32) {
        let start = self.begin(IDB);
        self.u16(LINKTYPE_ETHERNET);
        self.u16(0); // reserved
        self.u32(snaplen);
        self.option(opt::IF_NAME, name.as_bytes());
        self.option(opt::IF_DESCRIPTION, description.as_bytes());
        self.option(opt::IF_TSRESOL, &[TSRESOL_NS]);
        self.end_of_options();
        self.end(start);
    }

    /// An Enhanced Packet Block on interface `interface` at `ts_ns`
    /// (nanoseconds since the Unix epoch, or since the trace's origin),
    /// holding `data` cut to `snaplen`, with its direction `flags` and an
    /// optional comment.
    pub fn packet(
        &mut self,
        interface: u32,
        ts_ns: u64,
        data: &[u8],
        snaplen: u32,
        flags: u32,
        comment: Option<&str>,
    ) {
        let start = self.begin(EPB);
        self.u32(interface);
        self.u32((ts_ns >> 32) as u32);
        self.u32(ts_ns as u32);
        let captured = data.len().min(snaplen as usize);
        self.u32(captured as u32);
        self.u32(u32::try_from(data.len()).unwrap_or(u32::MAX));
        self.buf.extend_from_slice(&data[..captured]);
        self.pad();
        if let Some(c) = comment {
            self.option(opt::COMMENT, c.as_bytes());
        }
        self.option(opt::EPB_FLAGS, &flags.to_ne_bytes());
        self.end_of_options();
        self.end(start);
    }
}

/// What an [`NgCapture`] shares between the ports writing to it.
#[derive(Debug)]
struct NgFile {
    out: RecordFile,
    /// Blocks not yet written: whole blocks only, so that a failed write
    /// leaves the file ending on a block.
    blocks: BlockWriter,
    /// Frames in `blocks`.
    pending: u64,
    /// Why the file failed; later frames are counted as lost.
    error: Option<(io::ErrorKind, String)>,
    frames: u64,
    lost: u64,
}

/// Bytes of blocks gathered before one write: few system calls, and at most
/// this much lost on a failure beside what did not fit.
const BATCH: usize = 64 * 1024;

impl NgFile {
    /// Writes the gathered blocks; on failure their frames are lost and the
    /// file ends on its last whole block.
    fn write_pending(&mut self) {
        if self.blocks.bytes().is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        if let Err(e) = self.out.append(self.blocks.bytes(), pending) {
            tracing::warn!(
                error = %e,
                "pcapng capture failed; dropping its frames from now on"
            );
            self.frames -= pending;
            self.lost += pending;
            self.error = Some((e.kind(), e.to_string()));
        }
        self.blocks.clear();
    }
}

impl Drop for NgFile {
    /// The last clone of a capture writes what is gathered, so the file is
    /// complete once its capture is gone (a failure was logged).
    fn drop(&mut self) {
        self.write_pending();
    }
}

/// One pcapng file that several ports write to, each as an interface
/// numbered as the ports are. Cloning shares the file. [`write`](Self::write)
/// takes direction flags and a comment so that frames other than
/// transmitted ones go in too: a replay's `--capture-drops` writes each
/// dropped frame, inbound or outbound, with its reason as the comment.
///
/// Only a capture that is on costs anything: ports without one never touch
/// it. With one, every frame takes the file's lock, which a replay (one
/// thread) never waits for.
#[derive(Debug, Clone)]
pub struct NgCapture {
    path: PathBuf,
    file: Arc<Mutex<NgFile>>,
    snaplen: u32,
}

impl NgCapture {
    /// Creates `path` with a section header and an interface per name in
    /// `interfaces` (interface `i` is `interfaces[i]`), each described as
    /// a railyard port.
    ///
    /// # Errors
    /// The file cannot be created or written.
    pub fn create(path: impl AsRef<Path>, interfaces: &[&str], snaplen: u32) -> io::Result<Self> {
        let path = path.as_ref().to_path_buf();
        let mut out = RecordFile::new(File::create(&path)?, &path);
        let mut blocks = BlockWriter::new();
        blocks.section_header(concat!("railyard ", env!("CARGO_PKG_VERSION")));
        for name in interfaces {
            blocks.interface(name, &format!("railyard port {name}"), snaplen);
        }
        out.append(blocks.bytes(), 0)?;
        blocks.clear();
        Ok(NgCapture {
            path,
            file: Arc::new(Mutex::new(NgFile {
                out,
                blocks,
                pending: 0,
                error: None,
                frames: 0,
                lost: 0,
            })),
            snaplen,
        })
    }

    fn lock(&self) -> MutexGuard<'_, NgFile> {
        // A writer that panicked mid-block leaves at worst a torn block;
        // the counters are still good.
        self.file.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds one frame on `interface` at `ts_ns` with direction `flags`
    /// and an optional comment. A failed write is logged once; the frames
    /// it held and every later one are counted as lost. Returns whether the
    /// frame was taken (false once the file has failed).
    pub fn write(
        &self,
        interface: u32,
        ts_ns: u64,
        data: &[u8],
        flags: u32,
        comment: Option<&str>,
    ) -> bool {
        let mut f = self.lock();
        if f.error.is_some() {
            f.lost += 1;
            return false;
        }
        f.blocks
            .packet(interface, ts_ns, data, self.snaplen, flags, comment);
        f.pending += 1;
        f.frames += 1;
        if f.blocks.bytes().len() >= BATCH {
            f.write_pending();
        }
        true
    }

    /// Writes what is gathered to the file.
    ///
    /// # Errors
    /// The file could not be written (now or earlier); it ends on its last
    /// whole block and the error says how many frames it holds.
    pub fn flush(&self) -> io::Result<()> {
        let mut f = self.lock();
        f.write_pending();
        match &f.error {
            None => Ok(()),
            Some((kind, text)) => Err(io::Error::new(*kind, text.clone())),
        }
    }

    /// The file's name, as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Frames written so far, of every interface.
    pub fn frames(&self) -> u64 {
        self.lock().frames
    }

    /// Frames that could not be written.
    pub fn lost(&self) -> u64 {
        self.lock().lost
    }
}
