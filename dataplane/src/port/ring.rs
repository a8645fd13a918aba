//! In-memory ports: a pair of bounded lock-free rings per link.
//!
//! Used by tests, benchmarks and multi-switch setups inside one process. A
//! [`RingLink`] is a cable: each end is a [`RingPort`], and what one end
//! transmits the other receives. Frames move without copying (the packet
//! itself crosses the ring).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

use super::{IoCounters, Port};
use crate::clock::Nanos;
use crate::packet::{Burst, PacketBuf, Pool, BURST_SIZE};
use crate::wire::MacAddr;

/// One end of an in-memory cable.
pub struct RingPort {
    name: String,
    rx: Arc<ArrayQueue<PacketBuf>>,
    tx: Arc<ArrayQueue<PacketBuf>>,
    up: Arc<AtomicBool>,
    mac: Option<MacAddr>,
    counters: IoCounters,
}

/// A cable with two ends; dropping the ends drops the frames still on it.
pub struct RingLink;

/// A handle that keeps a link's state, for taking a ring link down or up from
/// a test or the control plane.
#[derive(Clone)]
pub struct LinkControl {
    up: Arc<AtomicBool>,
}

impl LinkControl {
    /// Sets the link state seen by both ends.
    pub fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::Relaxed);
    }
}

impl RingLink {
    /// Builds a cable whose each direction holds up to `capacity` frames.
    pub fn pair(name: &str, capacity: usize) -> (RingPort, RingPort, LinkControl) {
        let a_to_b = Arc::new(ArrayQueue::new(capacity.max(1)));
        let b_to_a = Arc::new(ArrayQueue::new(capacity.max(1)));
        let up = Arc::new(AtomicBool::new(true));
        let a = RingPort {
            name: format!("{name}.a"),
            rx: Arc::clone(&b_to_a),
            tx: Arc::clone(&a_to_b),
            up: Arc::clone(&up),
            mac: None,
            counters: IoCounters::default(),
        };
        let b = RingPort {
            name: format!("{name}.b"),
            rx: a_to_b,
            tx: b_to_a,
            up: Arc::clone(&up),
            mac: None,
            counters: IoCounters::default(),
        };
        (a, b, LinkControl { up })
    }
}

impl RingPort {
    /// Gives this end a MAC address of its own (as a NIC would have).
    pub fn with_mac(mut self, mac: MacAddr) -> Self {
        self.mac = Some(mac);
        self
    }

    /// Pushes one frame toward the other end, outside any burst (for tests and
    /// traffic generators); gives the packet back when the ring is full.
    pub fn send(&mut self, pkt: PacketBuf) -> Result<(), PacketBuf> {
        self.tx.push(pkt)?;
        self.counters.tx_frames += 1;
        Ok(())
    }

    /// Takes one frame the other end sent, if any.
    pub fn recv(&mut self) -> Option<PacketBuf> {
        let p = self.rx.pop()?;
        self.counters.rx_frames += 1;
        Some(p)
    }

    /// Frames waiting to be received on this end.
    pub fn pending(&self) -> usize {
        self.rx.len()
    }
}

impl Port for RingPort {
    fn rx_burst(&mut self, _pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        if !self.up.load(Ordering::Relaxed) {
            return 0;
        }
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            let Some(mut p) = self.rx.pop() else { break };
            p.timestamp = now;
            burst.push(p);
            n += 1;
        }
        self.counters.rx_frames += n as u64;
        n
    }

    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> usize {
        if !self.up.load(Ordering::Relaxed) {
            return 0;
        }
        // Lanes of other workers may push too: what does not fit stays.
        let mut n = 0;
        let mut refused = Burst::new();
        for p in burst.drain(..) {
            if !refused.is_empty() {
                refused.push(p);
                continue;
            }
            match self.tx.push(p) {
                Ok(()) => n += 1,
                Err(p) => refused.push(p),
            }
        }
        *burst = refused;
        self.counters.tx_frames += n as u64;
        n
    }

    fn tx_lane(&mut self) -> Option<Box<dyn Port>> {
        Some(Box::new(RingPort {
            name: self.name.clone(),
            rx: Arc::new(ArrayQueue::new(1)),
            tx: Arc::clone(&self.tx),
            up: Arc::clone(&self.up),
            mac: self.mac,
            counters: IoCounters::default(),
        }))
    }

    fn link_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    fn mac(&self) -> Option<MacAddr> {
        self.mac
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("ring {}", self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_cross_in_order_and_backpressure_keeps_the_rest() {
        let pool = Pool::new(64);
        let (mut a, mut b, link) = RingLink::pair("t", 4);
        let mut burst = Burst::new();
        for i in 0..6u8 {
            burst.push(pool.alloc_from(&[i; 60]).unwrap());
        }
        assert_eq!(a.tx_burst(&mut burst, 0), 4);
        assert_eq!(burst.len(), 2);
        assert_eq!(burst[0].data()[0], 4);
        let mut rx = Burst::new();
        assert_eq!(b.rx_burst(&pool, &mut rx, 7), 4);
        let firsts: Vec<u8> = rx.iter().map(|p| p.data()[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2, 3]);
        assert!(rx.iter().all(|p| p.timestamp == 7));
        link.set_up(false);
        assert!(!b.link_up());
        assert_eq!(a.tx_burst(&mut burst, 0), 0);
    }

    #[test]
    fn a_lane_sends_on_the_same_link_and_receives_nothing() {
        let pool = Pool::new(64);
        let (mut a, mut b, link) = RingLink::pair("t", 4);
        let mut lane = a.tx_lane().unwrap();
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&[1; 60]).unwrap());
        burst.push(pool.alloc_from(&[2; 60]).unwrap());
        assert_eq!(a.tx_burst(&mut burst, 0), 2);
        for i in 3..6u8 {
            burst.push(pool.alloc_from(&[i; 60]).unwrap());
        }
        // Two fit beside the end's own two; the third stays for a retry.
        assert_eq!(lane.tx_burst(&mut burst, 0), 2);
        assert_eq!(burst.len(), 1);
        assert_eq!(burst[0].data()[0], 5);
        assert_eq!(lane.io_counters().tx_frames, 2);
        let mut rx = Burst::new();
        assert_eq!(b.rx_burst(&pool, &mut rx, 0), 4);
        let firsts: Vec<u8> = rx.iter().map(|p| p.data()[0]).collect();
        assert_eq!(firsts, vec![1, 2, 3, 4]);
        // What the far end sends reaches the end, not the lane.
        assert_eq!(b.tx_burst(&mut rx, 0), 4);
        let mut got = Burst::new();
        assert_eq!(lane.rx_burst(&pool, &mut got, 0), 0);
        assert_eq!(a.rx_burst(&pool, &mut got, 0), 4);
        link.set_up(false);
        assert!(!lane.link_up());
        assert_eq!(lane.tx_burst(&mut burst, 0), 0);
    }
}
