//! A capture file that holds only whole records, even when the disk fills.
//!
//! A write that fails half way (`ENOSPC` on a full disk, `EFBIG` past a size
//! limit) leaves part of a record at the end of the file, and readers then
//! complain of a file "cut short in the middle of a packet". Records are
//! appended here in batches that end on a record boundary, so the file's
//! length after each successful batch is a place where a record ends; when a
//! batch fails, the file is cut back to that length and the error says so.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What a [`RecordFile`] writes to: a file, or in tests a stand-in that
/// fails part of the way through a write.
pub trait Truncatable: Write {
    /// Cuts the file to `len` bytes.
    ///
    /// # Errors
    /// The file system refused.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

impl Truncatable for File {
    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
}

/// A file appended to in whole records (see the module doc).
#[derive(Debug)]
pub struct RecordFile<F = File> {
    file: F,
    path: PathBuf,
    /// Bytes known to be in the file: every record up to here is whole.
    len: u64,
    /// Records in those bytes.
    records: u64,
}

impl<F: Truncatable> RecordFile<F> {
    /// Appends to `file`, which is empty; `path` names it in errors.
    pub fn new(file: F, path: &Path) -> Self {
        RecordFile {
            file,
            path: path.to_path_buf(),
            len: 0,
            records: 0,
        }
    }

    /// Appends `bytes`, which hold `records` whole records (headers count
    /// as none).
    ///
    /// # Errors
    /// The write failed; the file has been cut back to its last whole record
    /// and the error names the file, the cause and what the file still
    /// holds. Nothing should be appended after an error.
    pub fn append(&mut self, bytes: &[u8], records: u64) -> io::Result<()> {
        match self.file.write_all(bytes) {
            Ok(()) => {
                self.len += bytes.len() as u64;
                self.records += records;
                Ok(())
            }
            Err(e) => Err(self.cut_back(&e)),
        }
    }

    /// Records in the file.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Cuts the file back to its last whole record after `cause`, and
    /// describes the outcome.
    fn cut_back(&mut self, cause: &io::Error) -> io::Error {
        let path = self.path.display();
        let text = match self.file.set_len(self.len) {
            Ok(()) => format!(
                "{path}: {cause}; the file was cut back to its last whole record ({} frames)",
                self.records
            ),
            Err(e) => format!(
                "{path}: {cause}; cutting the file back to its last whole record ({} frames, \
                 {} bytes) failed too: {e}",
                self.records, self.len
            ),
        };
        io::Error::new(cause.kind(), text)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)] // tests fail loudly
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A disk with room for `room` bytes: a write past it stores what fits
    /// and then fails with `ENOSPC`, as a full file system does.
    struct SmallDisk {
        bytes: RefCell<Vec<u8>>,
        room: usize,
    }

    impl Write for SmallDisk {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let mut bytes = self.bytes.borrow_mut();
            let free = self.room - bytes.len();
            if free == 0 {
                return Err(io::Error::from_raw_os_error(libc::ENOSPC));
            }
            let n = buf.len().min(free);
            bytes.extend_from_slice(&buf[..n]);
            Ok(n)
        }

        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Truncatable for SmallDisk {
        fn set_len(&self, len: u64) -> io::Result<()> {
            self.bytes.borrow_mut().truncate(len as usize);
            Ok(())
        }
    }

    #[test]
    fn a_full_disk_leaves_only_whole_records() {
        let disk = SmallDisk {
            bytes: RefCell::new(Vec::new()),
            room: 250,
        };
        let mut f = RecordFile::new(disk, Path::new("out/Ethernet1_2.pcap"));
        f.append(&[0xAA; 24], 0).unwrap();
        // Two records of 50 bytes in one batch, then batches of three.
        f.append(&[1; 100], 2).unwrap();
        let e = f.append(&[2; 150], 3).unwrap_err();
        assert_eq!(e.raw_os_error(), None, "the error is rewritten");
        assert_eq!(e.kind(), io::ErrorKind::StorageFull);
        let text = e.to_string();
        assert!(text.starts_with("out/Ethernet1_2.pcap: "), "{text}");
        assert!(
            text.contains("cut back to its last whole record (2 frames)"),
            "{text}"
        );
        assert_eq!(f.records(), 2);
        assert_eq!(f.file.bytes.borrow().len(), 124, "header and two records");
    }
}
