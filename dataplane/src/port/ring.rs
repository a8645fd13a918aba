//! In-memory ports: a pair of bounded lock-free rings per link.
//!
//! Used by tests, benchmarks and multi-switch setups inside one process. A
//! [`RingLink`] is a cable: each end is a [`RingPort`], and what one end
//! transmits the other receives. Frames move without copying (the packet
//! itself crosses the ring).
//!
//! A cable may have a one-way delay ([`RingLink::pair_with_delay`]), so that
//! a fabric in virtual time sees what a real cable does: a frame (a PFC
//! pause among them) sent at `now` can be received from `now + delay`. The
//! due time rides in the packet's `timestamp` while it is on the ring, and
//! the receiving end keeps the one frame it took off the ring to read it
//! (`ArrayQueue` has no peek), so the delay costs no allocation.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

use super::{IoCounters, Port, TxDone};
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
    /// One-way delay of the cable, both directions; 0: every frame is due
    /// when sent.
    delay_ns: Nanos,
    /// The receive ring's head, taken off the ring to read its due time and
    /// not yet due (only with a delay).
    head: Cell<Option<PacketBuf>>,
    /// Frames refused because the ring toward the far end was full, shared
    /// by the link's ends and its [`LinkControl`].
    full: Arc<AtomicU64>,
}

/// A cable with two ends; dropping the ends drops the frames still on it.
pub struct RingLink;

/// A handle that keeps a link's state, for taking a ring link down or up from
/// a test or the control plane.
#[derive(Clone)]
pub struct LinkControl {
    up: Arc<AtomicBool>,
    full: Arc<AtomicU64>,
}

impl LinkControl {
    /// Sets the link state seen by both ends.
    pub fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::Relaxed);
    }

    /// Frames either end offered while its ring toward the far end was full
    /// (each retry counts again). A switch keeps such frames for a retry, so
    /// nothing is lost, but a fabric that models a kernel ring must see none:
    /// a real ring would have dropped them.
    pub fn ring_full(&self) -> u64 {
        self.full.load(Ordering::Relaxed)
    }
}

impl RingLink {
    /// Builds a cable whose each direction holds up to `capacity` frames and
    /// delivers them at once.
    pub fn pair(name: &str, capacity: usize) -> (RingPort, RingPort, LinkControl) {
        Self::pair_with_delay(name, capacity, 0)
    }

    /// Builds a cable whose each direction holds up to `capacity` frames
    /// (those in flight included) and delivers a frame sent at `now` from
    /// `now + delay_ns` on, in the order sent.
    pub fn pair_with_delay(
        name: &str,
        capacity: usize,
        delay_ns: Nanos,
    ) -> (RingPort, RingPort, LinkControl) {
        let a_to_b = Arc::new(ArrayQueue::new(capacity.max(1)));
        let b_to_a = Arc::new(ArrayQueue::new(capacity.max(1)));
        let up = Arc::new(AtomicBool::new(true));
        let full = Arc::new(AtomicU64::new(0));
        let end = |suffix: &str, rx, tx| RingPort {
            name: format!("{name}.{suffix}"),
            rx,
            tx,
            up: Arc::clone(&up),
            mac: None,
            counters: IoCounters::default(),
            delay_ns,
            head: Cell::new(None),
            full: Arc::clone(&full),
        };
        let a = end("a", Arc::clone(&b_to_a), Arc::clone(&a_to_b));
        let b = end("b", a_to_b, b_to_a);
        (a, b, LinkControl { up, full })
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
    /// Without a clock there is no send time, so the frame is due at once
    /// whatever the cable's delay.
    pub fn send(&mut self, mut pkt: PacketBuf) -> Result<(), PacketBuf> {
        pkt.timestamp = 0;
        self.tx.push(pkt)?;
        self.counters.tx_frames += 1;
        Ok(())
    }

    /// Takes one frame the other end sent, if any, due or not (for tests
    /// that read a cable without a clock).
    pub fn recv(&mut self) -> Option<PacketBuf> {
        let p = self.head.take().or_else(|| self.rx.pop())?;
        self.counters.rx_frames += 1;
        Some(p)
    }

    /// Frames waiting to be received on this end, due or not.
    pub fn pending(&self) -> usize {
        let head = self.head.take();
        let n = self.rx.len() + usize::from(head.is_some());
        self.head.set(head);
        n
    }

    /// The cable's one-way delay.
    pub fn delay_ns(&self) -> Nanos {
        self.delay_ns
    }
}

impl Port for RingPort {
    fn rx_burst(&mut self, _pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        if !self.up.load(Ordering::Relaxed) {
            return 0;
        }
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            let Some(mut p) = self.head.take().or_else(|| self.rx.pop()) else {
                break;
            };
            // With a delay the timestamp is the frame's due time; frames
            // behind it were sent no earlier, so none of them is due either.
            if self.delay_ns > 0 && p.timestamp > now {
                self.head.set(Some(p));
                break;
            }
            p.timestamp = now;
            burst.push(p);
            n += 1;
        }
        self.counters.rx_frames += n as u64;
        n
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> TxDone {
        if !self.up.load(Ordering::Relaxed) {
            return TxDone::default();
        }
        // Lanes of other workers may push too: what does not fit stays.
        let due = now.saturating_add(self.delay_ns);
        let mut n = 0;
        let mut refused = Burst::new();
        for mut p in burst.drain(..) {
            if !refused.is_empty() {
                refused.push(p);
                continue;
            }
            // The packet keeps its own timestamp if it stays for a retry.
            let kept = p.timestamp;
            if self.delay_ns > 0 {
                p.timestamp = due;
            }
            match self.tx.push(p) {
                Ok(()) => n += 1,
                Err(mut p) => {
                    p.timestamp = kept;
                    refused.push(p);
                }
            }
        }
        if !refused.is_empty() {
            self.full.fetch_add(refused.len() as u64, Ordering::Relaxed);
        }
        *burst = refused;
        self.counters.tx_frames += n as u64;
        TxDone::sent(n)
    }

    fn tx_lane(&mut self) -> Option<Box<dyn Port>> {
        Some(Box::new(RingPort {
            name: self.name.clone(),
            rx: Arc::new(ArrayQueue::new(1)),
            tx: Arc::clone(&self.tx),
            up: Arc::clone(&self.up),
            mac: self.mac,
            counters: IoCounters::default(),
            delay_ns: self.delay_ns,
            head: Cell::new(None),
            full: Arc::clone(&self.full),
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

    /// When the frame at the head of the receive ring is due; `None` without
    /// a delay (every frame is due when sent, so the next poll takes it),
    /// with the link down, or with nothing on the ring.
    fn next_rx_time(&self) -> Option<Nanos> {
        if self.delay_ns == 0 || !self.up.load(Ordering::Relaxed) {
            return None;
        }
        let head = self.head.take().or_else(|| self.rx.pop());
        let due = head.as_ref().map(|p| p.timestamp);
        self.head.set(head);
        due
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
        assert_eq!(a.tx_burst(&mut burst, 0).sent, 4);
        assert_eq!(burst.len(), 2);
        assert_eq!(burst[0].data()[0], 4);
        let mut rx = Burst::new();
        assert_eq!(b.rx_burst(&pool, &mut rx, 7), 4);
        let firsts: Vec<u8> = rx.iter().map(|p| p.data()[0]).collect();
        assert_eq!(firsts, vec![0, 1, 2, 3]);
        assert!(rx.iter().all(|p| p.timestamp == 7));
        link.set_up(false);
        assert!(!b.link_up());
        assert_eq!(a.tx_burst(&mut burst, 0).sent, 0);
    }

    #[test]
    fn a_lane_sends_on_the_same_link_and_receives_nothing() {
        let pool = Pool::new(64);
        let (mut a, mut b, link) = RingLink::pair("t", 4);
        let mut lane = a.tx_lane().unwrap();
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&[1; 60]).unwrap());
        burst.push(pool.alloc_from(&[2; 60]).unwrap());
        assert_eq!(a.tx_burst(&mut burst, 0).sent, 2);
        for i in 3..6u8 {
            burst.push(pool.alloc_from(&[i; 60]).unwrap());
        }
        // Two fit beside the end's own two; the third stays for a retry.
        assert_eq!(lane.tx_burst(&mut burst, 0).sent, 2);
        assert_eq!(burst.len(), 1);
        assert_eq!(burst[0].data()[0], 5);
        assert_eq!(lane.io_counters().tx_frames, 2);
        let mut rx = Burst::new();
        assert_eq!(b.rx_burst(&pool, &mut rx, 0), 4);
        let firsts: Vec<u8> = rx.iter().map(|p| p.data()[0]).collect();
        assert_eq!(firsts, vec![1, 2, 3, 4]);
        // What the far end sends reaches the end, not the lane.
        assert_eq!(b.tx_burst(&mut rx, 0).sent, 4);
        let mut got = Burst::new();
        assert_eq!(lane.rx_burst(&pool, &mut got, 0), 0);
        assert_eq!(a.rx_burst(&pool, &mut got, 0), 4);
        link.set_up(false);
        assert!(!lane.link_up());
        assert_eq!(lane.tx_burst(&mut burst, 0).sent, 0);
    }

    #[test]
    fn a_delayed_cable_delivers_each_frame_when_it_is_due() {
        let pool = Pool::new(64);
        let (mut a, mut b, _) = RingLink::pair_with_delay("t", 8, 500);
        assert_eq!(b.delay_ns(), 500);
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&[1; 60]).unwrap());
        assert_eq!(a.tx_burst(&mut burst, 100).sent, 1);
        burst.push(pool.alloc_from(&[2; 60]).unwrap());
        burst.push(pool.alloc_from(&[3; 60]).unwrap());
        assert_eq!(a.tx_burst(&mut burst, 300).sent, 2);
        let mut rx = Burst::new();
        // Nothing is due before 600; asking does not lose the head.
        assert_eq!(b.next_rx_time(), Some(600));
        assert_eq!(b.rx_burst(&pool, &mut rx, 599), 0);
        assert_eq!(b.pending(), 3);
        assert_eq!(b.next_rx_time(), Some(600));
        assert_eq!(b.rx_burst(&pool, &mut rx, 600), 1);
        assert_eq!(rx[0].data()[0], 1);
        assert_eq!(rx[0].timestamp, 600);
        assert_eq!(b.next_rx_time(), Some(800));
        // A late poll takes everything due, stamped with the poll's time.
        assert_eq!(b.rx_burst(&pool, &mut rx, 5_000), 2);
        let firsts: Vec<u8> = rx.iter().map(|p| p.data()[0]).collect();
        assert_eq!(firsts, vec![1, 2, 3]);
        assert_eq!(rx[2].timestamp, 5_000);
        assert_eq!(b.next_rx_time(), None);
        assert_eq!(b.io_counters().rx_frames, 3);
        // The other direction has the same delay.
        assert_eq!(b.tx_burst(&mut rx, 6_000).sent, 3);
        assert_eq!(a.next_rx_time(), Some(6_500));
        assert_eq!(a.rx_burst(&pool, &mut burst, 6_499), 0);
        assert_eq!(a.rx_burst(&pool, &mut burst, 6_500), 3);
    }

    #[test]
    fn an_undelayed_cable_reports_no_receive_time_and_delivers_at_once() {
        let pool = Pool::new(64);
        let (mut a, mut b, _) = RingLink::pair("t", 8);
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&[1; 60]).unwrap());
        assert_eq!(a.tx_burst(&mut burst, 1_000).sent, 1);
        assert_eq!(b.next_rx_time(), None);
        // Even at an earlier clock (another worker's): no due time to wait for.
        assert_eq!(b.rx_burst(&pool, &mut burst, 10), 1);
    }

    #[test]
    fn a_down_delayed_link_holds_its_frames_and_reports_no_time() {
        let pool = Pool::new(64);
        let (mut a, mut b, link) = RingLink::pair_with_delay("t", 8, 50);
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&[1; 60]).unwrap());
        assert_eq!(a.tx_burst(&mut burst, 0).sent, 1);
        assert_eq!(b.next_rx_time(), Some(50));
        link.set_up(false);
        assert_eq!(b.next_rx_time(), None);
        assert_eq!(b.rx_burst(&pool, &mut burst, 100), 0);
        link.set_up(true);
        assert_eq!(b.rx_burst(&pool, &mut burst, 100), 1);
        // recv and send ignore the clock: a sent frame is due at once.
        a.send(pool.alloc_from(&[2; 60]).unwrap()).unwrap();
        assert_eq!(b.next_rx_time(), Some(0));
        assert_eq!(b.recv().unwrap().data()[0], 2);
    }

    #[test]
    fn a_full_ring_counts_what_it_refused_and_restores_its_timestamps() {
        let pool = Pool::new(64);
        let (mut a, mut b, link) = RingLink::pair_with_delay("t", 2, 1_000);
        let mut lane = a.tx_lane().unwrap();
        let mut burst = Burst::new();
        for i in 0..3u8 {
            let mut p = pool.alloc_from(&[i; 60]).unwrap();
            p.timestamp = 42;
            burst.push(p);
        }
        assert_eq!(a.tx_burst(&mut burst, 0).sent, 2);
        assert_eq!(link.ring_full(), 1);
        assert_eq!(burst[0].timestamp, 42);
        // The lane shares the ring, the delay and the count.
        assert_eq!(lane.tx_burst(&mut burst, 0).sent, 0);
        assert_eq!(link.ring_full(), 2);
        let mut rx = Burst::new();
        assert_eq!(b.rx_burst(&pool, &mut rx, 1_000), 2);
        assert_eq!(lane.tx_burst(&mut burst, 10).sent, 1);
        assert_eq!(b.next_rx_time(), Some(1_010));
    }
}
