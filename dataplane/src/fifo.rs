//! The packet FIFO behind each egress queue.
//!
//! Hand-written rather than `VecDeque` because a queue's capacity is fixed
//! ([`QUEUE_CAPACITY`], a power of two): slots are found with a mask where
//! `VecDeque` wraps its index with a compare on every push and pop and
//! keeps its growth path in line, which the throughput harness counted as
//! some 20 instructions per packet.

use crate::packet::PacketBuf;

/// Packets one queue can hold, whatever their size; beyond it, tail drop.
pub const QUEUE_CAPACITY: usize = 4096;

const MASK: usize = QUEUE_CAPACITY - 1;
const _: () = assert!(QUEUE_CAPACITY.is_power_of_two());

/// Up to [`QUEUE_CAPACITY`] packets, first in first out, in storage taken
/// once at creation.
pub struct PacketFifo {
    slots: Box<[Option<PacketBuf>; QUEUE_CAPACITY]>,
    /// Slot of the oldest packet (meaningful while `len > 0`).
    head: usize,
    len: usize,
}

impl PacketFifo {
    /// An empty FIFO with every slot allocated.
    pub fn new() -> Self {
        PacketFifo {
            slots: Box::new([const { None }; QUEUE_CAPACITY]),
            head: 0,
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

    /// Appends `pkt`, or gives it back when the FIFO is full.
    ///
    /// # Errors
    /// The packet itself, when `QUEUE_CAPACITY` packets are held.
    #[inline]
    pub fn push_back(&mut self, pkt: PacketBuf) -> Result<(), PacketBuf> {
        if self.len == QUEUE_CAPACITY {
            return Err(pkt);
        }
        // The slot is empty (it is past the last packet), so there is
        // nothing to drop: replacing and forgetting skips the check.
        std::mem::forget(self.slots[(self.head + self.len) & MASK].replace(pkt));
        self.len += 1;
        Ok(())
    }

    /// The oldest packet, if any.
    #[inline]
    pub fn front(&self) -> Option<&PacketBuf> {
        if self.len == 0 {
            return None;
        }
        self.slots[self.head & MASK].as_ref()
    }

    /// Takes the oldest packet, if any.
    #[inline]
    pub fn pop_front(&mut self) -> Option<PacketBuf> {
        if self.len == 0 {
            return None;
        }
        let pkt = self.slots[self.head & MASK].take();
        self.head = (self.head + 1) & MASK;
        self.len -= 1;
        pkt
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

    fn tagged(pool: &Pool, tag: u8) -> PacketBuf {
        pool.alloc_from(&[tag]).expect("buffer")
    }

    #[test]
    fn keeps_order_across_the_wrap_and_refuses_past_capacity() {
        let pool = Pool::new(QUEUE_CAPACITY + 8);
        let mut fifo = PacketFifo::new();
        assert!(fifo.is_empty() && fifo.front().is_none() && fifo.pop_front().is_none());
        // Move the head near the end of the slots, so the next fill wraps.
        for i in 0..QUEUE_CAPACITY - 3 {
            assert!(fifo.push_back(tagged(&pool, i as u8)).is_ok());
            assert_eq!(fifo.pop_front().map(|p| p.data()[0]), Some(i as u8));
        }
        for i in 0..QUEUE_CAPACITY {
            assert!(fifo.push_back(tagged(&pool, i as u8)).is_ok());
        }
        assert_eq!(fifo.len(), QUEUE_CAPACITY);
        let refused = fifo.push_back(tagged(&pool, 0xee));
        assert_eq!(refused.map_err(|p| p.data()[0]), Err(0xee));
        for i in 0..QUEUE_CAPACITY {
            assert_eq!(fifo.front().map(|p| p.data()[0]), Some(i as u8));
            assert_eq!(fifo.pop_front().map(|p| p.data()[0]), Some(i as u8));
        }
        assert!(fifo.is_empty() && fifo.pop_front().is_none());
    }

    #[test]
    fn dropping_it_returns_the_packets_it_holds() {
        let pool = Pool::new(16);
        let mut fifo = PacketFifo::new();
        for i in 0..10 {
            assert!(fifo.push_back(tagged(&pool, i)).is_ok());
        }
        drop(fifo.pop_front());
        assert_eq!(pool.available(), 16 - 9);
        drop(fifo);
        assert_eq!(pool.available(), 16);
    }
}
