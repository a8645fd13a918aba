//! Egress queues: eight FIFOs per port, one per qos-group, with byte and
//! packet accounting and a tail-drop limit.
//!
//! Storage is reserved up front (a fixed packet capacity per queue), so
//! enqueue and dequeue never allocate. Which queue is served next is the
//! scheduler's decision; until the QoS model supplies one, queues are served
//! round-robin, one packet each.

use std::collections::VecDeque;

use crate::counters::QueueCounters;
use crate::packet::{Burst, Packet, BURST_SIZE};

/// Queues per port (qos-groups 0–7).
pub const NUM_QUEUES: usize = 8;
/// Packets one queue can hold, whatever their size.
pub const QUEUE_CAPACITY: usize = 4096;

/// The egress queues of one port.
#[derive(Debug)]
pub struct EgressQueues {
    queues: [VecDeque<Packet>; NUM_QUEUES],
    bytes: [u64; NUM_QUEUES],
    limit_bytes: [u64; NUM_QUEUES],
    next: usize,
    total_packets: usize,
}

impl EgressQueues {
    /// Eight empty queues, each holding up to `limit_bytes`.
    pub fn new(limit_bytes: u64) -> Self {
        EgressQueues {
            queues: std::array::from_fn(|_| VecDeque::with_capacity(QUEUE_CAPACITY)),
            bytes: [0; NUM_QUEUES],
            limit_bytes: [limit_bytes; NUM_QUEUES],
            next: 0,
            total_packets: 0,
        }
    }

    /// Appends `pkt` to queue `q` (0–7, higher values use queue 7), or hands
    /// it back when the queue is at its byte or packet limit (a tail drop the
    /// caller counts with its reason).
    #[inline]
    pub fn enqueue(
        &mut self,
        q: usize,
        pkt: Packet,
        counters: &mut [QueueCounters; NUM_QUEUES],
    ) -> Result<(), Packet> {
        let q = q.min(NUM_QUEUES - 1);
        let len = pkt.len() as u64;
        if self.bytes[q] + len > self.limit_bytes[q] || self.queues[q].len() >= QUEUE_CAPACITY {
            counters[q].tail_drops += 1;
            return Err(pkt);
        }
        self.queues[q].push_back(pkt);
        self.bytes[q] += len;
        self.total_packets += 1;
        let c = &mut counters[q];
        c.depth_bytes = self.bytes[q];
        c.max_depth_bytes = c.max_depth_bytes.max(self.bytes[q]);
        Ok(())
    }

    /// Moves up to `max` packets (and no more than fit in `out`) into `out`,
    /// one per non-empty queue in turn, counting them as transmitted.
    pub fn dequeue_burst(
        &mut self,
        out: &mut Burst,
        max: usize,
        counters: &mut [QueueCounters; NUM_QUEUES],
    ) -> usize {
        let mut n = 0;
        let room = max.min(BURST_SIZE - out.len());
        while n < room && self.total_packets > 0 {
            let q = self.next;
            self.next = (self.next + 1) % NUM_QUEUES;
            if let Some(p) = self.queues[q].pop_front() {
                let len = p.len() as u64;
                self.bytes[q] -= len;
                self.total_packets -= 1;
                let c = &mut counters[q];
                c.tx_packets += 1;
                c.tx_bytes += len;
                c.depth_bytes = self.bytes[q];
                out.push(p);
                n += 1;
            }
        }
        n
    }

    /// Changes every queue's byte limit; packets already queued stay (a queue
    /// above its new limit simply admits nothing until it drains).
    pub fn set_limit(&mut self, limit_bytes: u64) {
        self.limit_bytes = [limit_bytes; NUM_QUEUES];
    }

    /// Packets queued across all eight queues.
    pub fn len(&self) -> usize {
        self.total_packets
    }

    /// True when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.total_packets == 0
    }

    /// Bytes queued in queue `q`.
    pub fn depth_bytes(&self, q: usize) -> u64 {
        self.bytes[q.min(NUM_QUEUES - 1)]
    }

    /// Empties every queue, returning the packets (at shutdown, so they are counted).
    pub fn drain_all(&mut self, out: &mut Vec<Packet>, counters: &mut [QueueCounters; NUM_QUEUES]) {
        for (q, queue) in self.queues.iter_mut().enumerate() {
            out.extend(queue.drain(..));
            self.bytes[q] = 0;
            counters[q].depth_bytes = 0;
        }
        self.total_packets = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Pool;

    #[test]
    fn tail_drop_at_byte_limit_and_round_robin_service() {
        let pool = Pool::new(16);
        let mut c = [QueueCounters::default(); NUM_QUEUES];
        let mut q = EgressQueues::new(250);
        for i in 0..2u8 {
            q.enqueue(3, pool.alloc_from(&[i; 100]).unwrap(), &mut c)
                .unwrap();
        }
        // A third 100-byte packet would make 300 > 250.
        assert!(q
            .enqueue(3, pool.alloc_from(&[2; 100]).unwrap(), &mut c)
            .is_err());
        assert_eq!(q.len(), 2);
        assert_eq!(c[3].tail_drops, 1);
        assert_eq!(c[3].max_depth_bytes, 200);
        q.enqueue(7, pool.alloc_from(&[7; 60]).unwrap(), &mut c)
            .unwrap();
        q.enqueue(9, pool.alloc_from(&[8; 60]).unwrap(), &mut c)
            .unwrap();
        let mut out = Burst::new();
        assert_eq!(q.dequeue_burst(&mut out, 32, &mut c), 4);
        let order: Vec<u8> = out.iter().map(|p| p.data()[0]).collect();
        assert_eq!(order, vec![0, 7, 1, 8]);
        assert_eq!(c[3].tx_packets, 2);
        assert_eq!(c[3].tx_bytes, 200);
        assert_eq!(c[7].tx_packets, 2);
        assert_eq!(c[3].depth_bytes, 0);
        assert!(q.is_empty());
    }
}
