//! Buffer admission: whether a queue may take one more packet under its
//! `queue-limit` and the port's shared buffer.

use crate::model::QueueLimit;

/// Largest `queue-limit dynamic` value (alpha 8).
pub const MAX_DYNAMIC: u8 = 10;

/// The occupancy a queue is judged against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    /// Bytes in this queue.
    pub queue_bytes: u64,
    /// Packets in this queue.
    pub queue_packets: u64,
    /// Bytes in all of the port's queues.
    pub port_bytes: u64,
    /// The port's buffer.
    pub buffer_bytes: u64,
}

/// alpha × `free` for `queue-limit dynamic a`, alpha = 2^(a − 7).
#[inline]
pub fn dynamic_threshold(a: u8, free: u64) -> u64 {
    let a = a.min(MAX_DYNAMIC);
    if a >= 7 {
        free.saturating_mul(1 << (a - 7))
    } else {
        free >> (7 - a)
    }
}

/// Whether a packet of `len` bytes fits: within the port buffer and within
/// the queue's limit (static, percent of the buffer, or dynamic threshold on
/// the free buffer).
#[inline]
pub fn admits(limit: QueueLimit, occ: Occupancy, len: u64) -> bool {
    if occ.port_bytes + len > occ.buffer_bytes {
        return false;
    }
    match limit {
        QueueLimit::Bytes(max) => occ.queue_bytes + len <= max,
        QueueLimit::Packets(max) => occ.queue_packets < max,
        QueueLimit::Percent(p) => {
            occ.queue_bytes + len <= occ.buffer_bytes.saturating_mul(u64::from(p.min(100))) / 100
        }
        QueueLimit::Dynamic(a) => {
            let free = occ.buffer_bytes.saturating_sub(occ.port_bytes);
            occ.queue_bytes + len <= dynamic_threshold(a, free)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn occ(queue_bytes: u64, port_bytes: u64) -> Occupancy {
        Occupancy {
            queue_bytes,
            queue_packets: queue_bytes / 100,
            port_bytes,
            buffer_bytes: 10_000,
        }
    }

    #[test]
    fn static_and_percent_limits() {
        assert!(admits(QueueLimit::Bytes(1000), occ(900, 900), 100));
        assert!(!admits(QueueLimit::Bytes(1000), occ(901, 901), 100));
        assert!(admits(QueueLimit::Packets(10), occ(900, 900), 100));
        assert!(!admits(QueueLimit::Packets(10), occ(1000, 1000), 100));
        assert!(admits(QueueLimit::Percent(50), occ(4900, 4900), 100));
        assert!(!admits(QueueLimit::Percent(50), occ(4901, 4901), 100));
        // The port buffer bounds every queue.
        assert!(!admits(QueueLimit::Bytes(u64::MAX), occ(0, 9950), 100));
    }

    #[test]
    fn dynamic_threshold_is_alpha_times_free_buffer() {
        assert_eq!(dynamic_threshold(7, 1000), 1000);
        assert_eq!(dynamic_threshold(8, 1000), 2000);
        assert_eq!(dynamic_threshold(10, 1000), 8000);
        assert_eq!(dynamic_threshold(0, 12_800), 100);
        // Alpha 1: a lone queue stops at half the buffer.
        let mut q = 0;
        while admits(QueueLimit::Dynamic(7), occ(q, q), 100) {
            q += 100;
        }
        assert_eq!(q, 5000);
        // Alpha 1/2 with another queue holding 4000: (10000 − 4000 − q)/2 ≥ q.
        let mut q = 0;
        while admits(QueueLimit::Dynamic(6), occ(q, 4000 + q), 100) {
            q += 100;
        }
        assert_eq!(q, 2000);
    }
}
