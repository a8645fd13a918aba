//! A file written by a thread of its own, fed in chunks.
//!
//! Writing a capture costs the kernel about as much as forwarding its frames
//! costs the pipeline: each `write(2)` copies into the page cache and does
//! the file system's bookkeeping on the calling core. A [`Spool`] takes that
//! off the packet path. Records are copied into a chunk; full chunks go to a
//! writer thread, which hands the emptied buffers back to be filled again.
//! After the first few chunks nothing is allocated, and the packet path's
//! only system call is waking the writer, once a chunk.
//!
//! Nothing is lost silently: the records of a chunk that could not be
//! written, and of every chunk after it, are counted ([`Spool::lost`]), the
//! file keeps only whole records (see [`RecordFile`]), and
//! once a write fails the spool says so ([`Spool::failed`]) so that its
//! owner stops feeding it.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::record_file::RecordFile;

/// Bytes per chunk: few, large writes keep the writer's system calls cheap.
pub const CHUNK: usize = 256 * 1024;
/// Most chunks one spool uses: one filling, one being written, one spare.
/// The packet path waits only when the file falls two chunks behind.
const CHUNKS: usize = 3;

/// Work for the writer thread.
enum Job {
    /// Append these bytes, which hold this many records.
    Write(Vec<u8>, u64),
    /// Answer once everything sent before has been written.
    Sync,
}

/// What the writer tells the packet path without a message.
#[derive(Debug, Default)]
struct Outcome {
    /// Records that did not reach the file.
    lost: AtomicU64,
    /// A write failed; later chunks are counted as lost, not written.
    failed: AtomicBool,
}

/// A file appended to by its own writer thread (see the module doc).
pub struct Spool {
    path: PathBuf,
    chunk: Vec<u8>,
    /// Records in `chunk`.
    records: u64,
    /// Chunks allocated so far (at most [`CHUNKS`]).
    allocated: usize,
    jobs: Option<Sender<Job>>,
    emptied: Receiver<Vec<u8>>,
    synced: Receiver<io::Result<()>>,
    outcome: Arc<Outcome>,
    writer: Option<JoinHandle<()>>,
}

impl Spool {
    /// Starts a writer thread appending to `file`; `path` names it in
    /// warnings.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn new(file: File, path: &Path) -> io::Result<Spool> {
        let (jobs, job_rx) = mpsc::channel();
        let (emptied_tx, emptied) = mpsc::channel();
        let (synced_tx, synced) = mpsc::channel();
        let outcome = Arc::new(Outcome::default());
        let shared = Arc::clone(&outcome);
        let name = path.to_path_buf();
        let writer = std::thread::Builder::new()
            .name("pcap-writer".into())
            .spawn(move || write_jobs(file, &name, &job_rx, &emptied_tx, &synced_tx, &shared))?;
        Ok(Spool {
            path: path.to_path_buf(),
            chunk: Vec::with_capacity(CHUNK),
            records: 0,
            allocated: 1,
            jobs: Some(jobs),
            emptied,
            synced,
            outcome,
            writer: Some(writer),
        })
    }

    /// Appends `parts` (one after the other) as `records` records.
    #[inline]
    pub fn append(&mut self, parts: &[&[u8]], records: u64) {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if self.chunk.len() + len > self.chunk.capacity() && !self.chunk.is_empty() {
            self.ship();
        }
        for p in parts {
            self.chunk.extend_from_slice(p);
        }
        self.records += records;
    }

    /// True once a write has failed: records appended from then on are lost.
    #[inline]
    pub fn failed(&self) -> bool {
        self.outcome.failed.load(Ordering::Acquire)
    }

    /// Records that did not reach the file.
    pub fn lost(&self) -> u64 {
        self.outcome.lost.load(Ordering::Acquire)
    }

    /// Writes everything appended so far and waits until it is in the file.
    ///
    /// # Errors
    /// A write failed (now or earlier).
    pub fn sync(&mut self) -> io::Result<()> {
        self.ship();
        let asked = self
            .jobs
            .as_ref()
            .is_some_and(|j| j.send(Job::Sync).is_ok());
        match asked.then(|| self.synced.recv()) {
            Some(Ok(result)) => result,
            _ => Err(io::Error::other(format!(
                "{}: the pcap writer thread stopped",
                self.path.display()
            ))),
        }
    }

    /// Sends the chunk being filled to the writer and takes an empty one.
    fn ship(&mut self) {
        if self.chunk.is_empty() {
            return;
        }
        let next = match self.emptied.try_recv() {
            Ok(c) => c,
            Err(_) if self.allocated < CHUNKS => {
                self.allocated += 1;
                Vec::with_capacity(CHUNK)
            }
            // The file is behind: wait for the writer (a writer that has
            // stopped hands nothing back; start afresh, to be counted lost).
            Err(_) => self
                .emptied
                .recv()
                .unwrap_or_else(|_| Vec::with_capacity(CHUNK)),
        };
        let full = std::mem::replace(&mut self.chunk, next);
        let records = std::mem::take(&mut self.records);
        let sent = self
            .jobs
            .as_ref()
            .is_some_and(|j| j.send(Job::Write(full, records)).is_ok());
        if !sent {
            self.outcome.failed.store(true, Ordering::Release);
            self.outcome.lost.fetch_add(records, Ordering::AcqRel);
        }
    }
}

impl Drop for Spool {
    /// Writes what is left and waits for the writer, so the file is complete
    /// once its spool is gone.
    fn drop(&mut self) {
        self.ship();
        self.jobs = None;
        if let Some(w) = self.writer.take() {
            let _ = w.join();
        }
    }
}

impl std::fmt::Debug for Spool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Spool")
            .field("path", &self.path)
            .field("buffered", &self.chunk.len())
            .field("outcome", &self.outcome)
            .finish()
    }
}

/// The writer thread: appends each chunk to `file` until the spool is
/// dropped, stopping at the first error.
fn write_jobs(
    file: File,
    path: &Path,
    jobs: &Receiver<Job>,
    emptied: &Sender<Vec<u8>>,
    synced: &Sender<io::Result<()>>,
    outcome: &Outcome,
) {
    let mut file = RecordFile::new(file, path);
    let mut error: Option<(io::ErrorKind, String)> = None;
    for job in jobs {
        match job {
            Job::Write(mut bytes, records) => {
                if error.is_none() {
                    if let Err(e) = file.append(&bytes, records) {
                        tracing::warn!(
                            error = %e,
                            "pcap capture failed; dropping its frames from now on"
                        );
                        error = Some((e.kind(), e.to_string()));
                        outcome.failed.store(true, Ordering::Release);
                    }
                }
                if error.is_some() {
                    outcome.lost.fetch_add(records, Ordering::AcqRel);
                }
                bytes.clear();
                let _ = emptied.send(bytes);
            }
            Job::Sync => {
                let result = match &error {
                    None => Ok(()),
                    Some((kind, text)) => Err(io::Error::new(*kind, text.clone())),
                };
                let _ = synced.send(result);
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn every_byte_arrives_in_order_across_many_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool");
        let mut spool = Spool::new(File::create(&path).unwrap(), &path).unwrap();
        let mut want = Vec::new();
        // Records of varied sizes that straddle chunk ends, over more
        // chunks than the spool owns, so buffers are reused.
        for i in 0..(CHUNKS * 4 * CHUNK / 500) {
            let head = (i as u32).to_le_bytes();
            let body = vec![i as u8; 100 + i % 900];
            spool.append(&[&head, &body], 1);
            want.extend_from_slice(&head);
            want.extend_from_slice(&body);
        }
        spool.sync().unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), want, "after a sync");
        spool.append(&[b"tail"], 1);
        drop(spool);
        want.extend_from_slice(b"tail");
        assert_eq!(std::fs::read(&path).unwrap(), want, "after the drop");
    }

    #[test]
    fn a_file_that_cannot_be_written_counts_every_record_lost() {
        let path = Path::new("/dev/full");
        let file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        let mut spool = Spool::new(file, path).unwrap();
        assert!(!spool.failed());
        let record = [7u8; 1000];
        let records = 3 * CHUNK / record.len();
        for _ in 0..records {
            spool.append(&[&record], 1);
        }
        let e = spool.sync().unwrap_err();
        assert!(e.to_string().contains("/dev/full"), "{e}");
        assert!(spool.failed());
        assert_eq!(spool.lost(), records as u64);
    }
}
