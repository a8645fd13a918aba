//! Frames taken off the packet path for a capture: the frames the switch
//! dropped, each with its reason and the port that counted it.
//!
//! A worker copies a frame into a [`CaptureRing`] only while a capture is
//! armed; unarmed, the packet path pays one test of an `Option`. The ring is
//! bounded: a frame that finds it full is not captured and is counted in
//! [`CaptureRing::overflow`] (the switch itself goes on as before, so a slow
//! reader never stalls forwarding). The copies' buffers go back to the ring
//! once the reader is done with them ([`CaptureRing::recycle`]), so a
//! capture that keeps up allocates nothing after its first frames.

use std::sync::atomic::{AtomicU64, Ordering};

use crossbeam_queue::ArrayQueue;

use crate::clock::Nanos;
use crate::counters::DropReason;

/// Buffers a [`CaptureRing::preallocated`] ring has beyond its capacity:
/// those its reader holds between `pop` and `recycle`.
const RECYCLE_SPARE: usize = 64;

/// Which way a captured frame was going at its port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Received on the port (or dropped on its way in).
    Rx,
    /// Sent on the port (or dropped in its egress queues).
    Tx,
}

/// One captured frame.
#[derive(Debug)]
pub struct Captured {
    /// The port that received or was to send it (the model's index).
    pub port: u16,
    /// Received or sent.
    pub dir: Direction,
    /// Why the switch dropped it; `None` for a frame it forwarded.
    pub reason: Option<DropReason>,
    /// The switch's time when it was taken.
    pub at: Nanos,
    /// The frame's first bytes, at most the ring's snaplen.
    pub data: Vec<u8>,
    /// The frame's length on the wire.
    pub len: u32,
}

/// A bounded ring of captured frames between the workers that copy them in
/// and one reader that writes them out (see the module doc).
#[derive(Debug)]
pub struct CaptureRing {
    ring: ArrayQueue<Captured>,
    /// Buffers of frames the reader has written, for the next copies.
    free: ArrayQueue<Vec<u8>>,
    snaplen: usize,
    overflow: AtomicU64,
    taken: AtomicU64,
}

impl CaptureRing {
    /// A ring of `capacity` frames (at least 1), each cut to `snaplen` bytes.
    pub fn new(capacity: usize, snaplen: usize) -> CaptureRing {
        let capacity = capacity.max(1);
        CaptureRing {
            ring: ArrayQueue::new(capacity),
            free: ArrayQueue::new(capacity),
            snaplen,
            overflow: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        }
    }

    /// A ring like [`new`](Self::new) whose buffers are all allocated
    /// now (a few spare for the frames the reader holds), so that
    /// recording never allocates: for a capture taken on the live packet
    /// path.
    pub fn preallocated(capacity: usize, snaplen: usize) -> CaptureRing {
        let capacity = capacity.max(1);
        let spare = capacity + RECYCLE_SPARE;
        let free = ArrayQueue::new(spare);
        for _ in 0..spare {
            let _ = free.push(Vec::with_capacity(snaplen));
        }
        CaptureRing {
            ring: ArrayQueue::new(capacity),
            free,
            snaplen,
            overflow: AtomicU64::new(0),
            taken: AtomicU64::new(0),
        }
    }

    /// Copies `frame` in; false (and counted in [`overflow`](Self::overflow))
    /// when the ring is full.
    pub fn record(
        &self,
        port: u16,
        dir: Direction,
        reason: Option<DropReason>,
        at: Nanos,
        frame: &[u8],
    ) -> bool {
        if self.ring.is_full() {
            self.overflow.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        let mut data = self.free.pop().unwrap_or_default();
        data.clear();
        data.extend_from_slice(&frame[..frame.len().min(self.snaplen)]);
        let c = Captured {
            port,
            dir,
            reason,
            at,
            data,
            len: u32::try_from(frame.len()).unwrap_or(u32::MAX),
        };
        match self.ring.push(c) {
            Ok(()) => {
                self.taken.fetch_add(1, Ordering::Relaxed);
                true
            }
            // Another worker filled the last slot meanwhile.
            Err(c) => {
                let _ = self.free.push(c.data);
                self.overflow.fetch_add(1, Ordering::Relaxed);
                false
            }
        }
    }

    /// The oldest frame not yet read.
    pub fn pop(&self) -> Option<Captured> {
        self.ring.pop()
    }

    /// Gives a read frame's buffer back for the next copy.
    pub fn recycle(&self, c: Captured) {
        let _ = self.free.push(c.data);
    }

    /// Frames that found the ring full and were not captured.
    pub fn overflow(&self) -> u64 {
        self.overflow.load(Ordering::Relaxed)
    }

    /// Frames copied in.
    pub fn taken(&self) -> u64 {
        self.taken.load(Ordering::Relaxed)
    }
}

/// The comment a pcapng packet block of a dropped frame carries, e.g.
/// `dropped: wred`: Wireshark shows it in the packet list and filters on
/// it (`frame.comment contains "wred"`).
pub fn drop_comment(reason: DropReason) -> String {
    format!("dropped: {}", reason.name())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_ring_counts_what_it_could_not_take_and_reuses_read_buffers() {
        let ring = CaptureRing::new(2, 4);
        assert!(ring.record(
            1,
            Direction::Rx,
            Some(DropReason::Wred),
            5,
            &[1, 2, 3, 4, 5, 6]
        ));
        assert!(ring.record(2, Direction::Tx, None, 6, &[7]));
        assert!(!ring.record(3, Direction::Tx, None, 7, &[8]));
        assert_eq!((ring.taken(), ring.overflow()), (2, 1));
        let first = ring.pop().unwrap();
        assert_eq!(first.data, [1, 2, 3, 4], "cut to the snaplen");
        assert_eq!(first.len, 6);
        assert_eq!(first.reason, Some(DropReason::Wred));
        let cap = first.data.capacity();
        ring.recycle(first);
        assert!(ring.record(4, Direction::Rx, None, 8, &[9, 9]));
        assert_eq!(ring.pop().unwrap().port, 2);
        let again = ring.pop().unwrap();
        assert_eq!((again.port, again.data.as_slice()), (4, &[9u8, 9][..]));
        assert_eq!(
            again.data.capacity(),
            cap,
            "the read frame's buffer was reused"
        );
    }

    #[test]
    fn a_drop_comment_names_the_reason_as_the_counters_do() {
        assert_eq!(
            drop_comment(DropReason::IngressOverflow),
            "dropped: ingress_overflow"
        );
    }
}
