//! The packet FIFO behind each egress queue.
//!
//! A queue has no packet capacity of its own: what bounds it is bytes (the
//! queue's `queue-limit` and the port's shared buffer for lossy traffic,
//! the ingress priority group's xOFF + headroom for lossless traffic) and,
//! in the end, the pool's buffers. So the FIFO is intrusive: a singly
//! linked list threaded through the queued buffers' own headers (their
//! `next` field, in the first cache line, which enqueue and dequeue touch
//! anyway), with only a head, a tail and a count per queue.
//!
//! Why not slots: a ring sized for the worst case would need a slot per
//! pool buffer for every one of a port's eight queues (the whole pool may
//! end up in one queue), megabytes per port that are never used, while a
//! fixed smaller ring is exactly the packet cap this replaces (4 096 slots
//! of which a queue of 1 066-byte frames filled at 4.4 MB). The list costs
//! no storage and no allocation, push and pop are O(1) and branch little,
//! and the dequeue side reads the link from the line that holds the
//! packet's length, which the scheduler reads first anyway.

use std::ptr::NonNull;

use super::{BufBox, Buffer, PacketBuf};

/// Packets first in, first out, linked through their buffers: no capacity
/// of its own and no storage beyond three words.
pub struct PacketFifo {
    /// The oldest packet (meaningful, and not null, while `len > 0`).
    head: *mut Buffer,
    /// The newest packet, whose `next` the next push writes (meaningful
    /// while `len > 0`).
    tail: *mut Buffer,
    len: usize,
}

// SAFETY: the FIFO owns the buffers it links, as the `PacketBuf`s it was
// given did (each reachable from this FIFO only); moving it to another
// thread moves them, as moving a `Vec<PacketBuf>` would.
unsafe impl Send for PacketFifo {}

impl PacketFifo {
    /// An empty FIFO; takes no storage.
    pub fn new() -> Self {
        PacketFifo {
            head: std::ptr::null_mut(),
            tail: std::ptr::null_mut(),
            len: 0,
        }
    }

    /// Packets held.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no packet is held.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `pkt`. It cannot fail: the queue's limits are bytes, checked
    /// before this by the caller.
    #[inline]
    pub fn push_back(&mut self, pkt: PacketBuf) {
        let b = pkt.into_buffer().0.as_ptr();
        if self.len == 0 {
            self.head = b;
        } else {
            // SAFETY: with `len > 0`, `tail` is a buffer this FIFO owns (no
            // one else reaches it), so writing its link is exclusive.
            unsafe { (*self.tail).next = b };
        }
        // The new tail's own `next` is left as it is: it is read only once
        // another packet follows, which writes it first.
        self.tail = b;
        self.len += 1;
    }

    /// The oldest packet, if any.
    #[inline]
    pub fn front(&self) -> Option<&PacketBuf> {
        if self.len == 0 {
            return None;
        }
        // SAFETY: with `len > 0`, `head` is a lent buffer this FIFO owns,
        // so not null; `PacketBuf` and `BufBox` are `repr(transparent)`
        // over a `NonNull<Buffer>`, which has the layout of the pointer
        // stored here, so the field read as a `PacketBuf` is that packet,
        // borrowed for as long as `self` is.
        Some(unsafe { &*std::ptr::addr_of!(self.head).cast::<PacketBuf>() })
    }

    /// Takes the oldest packet, if any.
    #[inline]
    pub fn pop_front(&mut self) -> Option<PacketBuf> {
        if self.len == 0 {
            return None;
        }
        let b = self.head;
        // SAFETY: with `len > 0`, `head` is a buffer this FIFO owns. Its
        // `next` is the following packet when one follows; otherwise it is
        // a stale value that is stored but never dereferenced (`len`
        // becomes 0, and `head` means nothing until a push writes it).
        self.head = unsafe { (*b).next };
        self.len -= 1;
        // SAFETY: not null (see above); the FIFO gives up its ownership of
        // the buffer to the returned packet.
        Some(PacketBuf {
            buf: BufBox(unsafe { NonNull::new_unchecked(b) }),
        })
    }
}

impl Drop for PacketFifo {
    /// Returns every packet still held to its pool.
    fn drop(&mut self) {
        while self.pop_front().is_some() {}
    }
}

impl Default for PacketFifo {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for PacketFifo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketFifo")
            .field("len", &self.len)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Pool;

    fn tagged(pool: &Pool, tag: u16) -> PacketBuf {
        pool.alloc_from(&tag.to_be_bytes()).expect("buffer")
    }

    fn tag(p: &PacketBuf) -> u16 {
        u16::from_be_bytes([p.data()[0], p.data()[1]])
    }

    #[test]
    fn keeps_order_and_empties_and_refills_cleanly() {
        let pool = Pool::new(64);
        let mut fifo = PacketFifo::new();
        assert!(fifo.is_empty() && fifo.front().is_none() && fifo.pop_front().is_none());
        // Interleaved pushes and pops, emptying it several times: a stale
        // link left in a buffer that was last must never be followed.
        let mut next_in = 0u16;
        let mut next_out = 0u16;
        for round in 0..20u16 {
            for _ in 0..(round % 7) + 1 {
                fifo.push_back(tagged(&pool, next_in));
                next_in += 1;
            }
            assert_eq!(fifo.len(), usize::from(next_in - next_out));
            let take = if round % 3 == 0 { fifo.len() } else { 1 };
            for _ in 0..take {
                assert_eq!(fifo.front().map(tag), Some(next_out));
                assert_eq!(fifo.pop_front().as_ref().map(tag), Some(next_out));
                next_out += 1;
            }
            if round % 3 == 0 {
                assert!(fifo.is_empty() && fifo.front().is_none());
                assert!(fifo.pop_front().is_none());
            }
        }
        while let Some(p) = fifo.pop_front() {
            assert_eq!(tag(&p), next_out);
            next_out += 1;
        }
        assert_eq!(next_out, next_in);
        assert_eq!(pool.available(), 64, "every buffer went home");
    }

    #[test]
    fn holds_every_buffer_of_the_pool_with_no_cap_of_its_own() {
        // Far past the 4 096 packets the ring it replaces held.
        const N: usize = 20_000;
        let pool = Pool::new(N);
        let mut fifo = PacketFifo::new();
        for i in 0..N {
            fifo.push_back(tagged(&pool, i as u16));
        }
        assert_eq!(fifo.len(), N);
        assert_eq!(pool.available(), 0);
        for i in 0..N {
            assert_eq!(fifo.pop_front().as_ref().map(tag), Some(i as u16));
        }
        assert!(fifo.pop_front().is_none());
        assert_eq!(pool.available(), N);
    }

    #[test]
    fn packets_from_two_pools_share_a_fifo() {
        let a = Pool::new(8);
        let b = Pool::new(8);
        let mut fifo = PacketFifo::new();
        for i in 0..6 {
            let pool = if i % 2 == 0 { &a } else { &b };
            fifo.push_back(tagged(pool, i));
        }
        assert_eq!((a.available(), b.available()), (5, 5));
        for i in 0..6 {
            assert_eq!(fifo.pop_front().as_ref().map(tag), Some(i));
        }
        assert_eq!((a.available(), b.available()), (8, 8));
    }

    #[test]
    fn dropping_it_returns_the_packets_it_holds() {
        let pool = Pool::new(16);
        let mut fifo = PacketFifo::new();
        for i in 0..10 {
            fifo.push_back(tagged(&pool, i));
        }
        drop(fifo.pop_front());
        assert_eq!(pool.available(), 16 - 9);
        drop(fifo);
        assert_eq!(pool.available(), 16);
        // An emptied FIFO drops nothing twice.
        let mut fifo = PacketFifo::new();
        fifo.push_back(tagged(&pool, 1));
        drop(fifo.pop_front());
        drop(fifo);
        assert_eq!(pool.available(), 16);
    }

    #[test]
    fn a_fifo_moves_to_another_thread_with_its_packets() {
        let pool = Pool::new(16);
        let mut fifo = PacketFifo::new();
        for i in 0..5 {
            fifo.push_back(tagged(&pool, i));
        }
        let fifo = std::thread::spawn(move || {
            assert_eq!(fifo.front().map(tag), Some(0));
            fifo
        })
        .join()
        .unwrap();
        assert_eq!(fifo.len(), 5);
        drop(fifo);
        assert_eq!(pool.available(), 16);
    }
}
