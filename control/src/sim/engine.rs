//! The simulator's scheduler: a node (a switch, or a host with its NICs)
//! runs only when it has work due, so a fabric of a thousand NICs costs
//! what its busy ports cost, not what its size does.
//!
//! Every node is polled at the times it asked for (a queued packet's
//! departure, a NIC's pacing slot or timer) and at the times frames sent
//! toward it arrive. The latter are known when they are sent: a switch's
//! cable ends are [`NotifyingPort`]s, which tell the scheduler "node P has
//! a frame due at t" for every burst they put on the cable; a host's NICs
//! are driven by the run loop, which does the same. Times sit in one
//! binary heap ordered by (time, push order), so equal times run in the
//! order they were asked for and a run is deterministic.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::Arc;

use crossbeam_queue::SegQueue;
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::port::ring::RingPort;
use railyard_dataplane::port::{IoCounters, Port};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Burst, Pool};

/// A node of the fabric, as the scheduler numbers them: switches first,
/// then hosts.
pub(super) type NodeId = u32;

/// Arrivals announced by cable ends since the scheduler last looked:
/// (receiving node, its port, time the frames are due). Lock-free,
/// because the ports that push sit inside switches (which must be
/// `Send`).
pub(super) type Arrivals = Arc<SegQueue<(NodeId, u16, Nanos)>>;

/// A switch's end of a cable that announces what it sends to the node at
/// the other end. Everything else is the ring's own behaviour.
pub(super) struct NotifyingPort {
    inner: RingPort,
    peer: NodeId,
    peer_port: u16,
    arrivals: Arrivals,
}

impl NotifyingPort {
    /// Wraps `inner`, whose far end is port `peer_port` of node `peer`.
    pub(super) fn new(
        inner: RingPort,
        peer: NodeId,
        peer_port: u16,
        arrivals: Arrivals,
    ) -> NotifyingPort {
        NotifyingPort {
            inner,
            peer,
            peer_port,
            arrivals,
        }
    }
}

impl Port for NotifyingPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        self.inner.rx_burst(pool, burst, now)
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> usize {
        let n = self.inner.tx_burst(burst, now);
        if n > 0 {
            // One announcement per burst: its frames share the due time.
            self.arrivals.push((
                self.peer,
                self.peer_port,
                now.saturating_add(self.inner.delay_ns()),
            ));
        }
        n
    }

    fn link_up(&self) -> bool {
        self.inner.link_up()
    }

    fn mac(&self) -> Option<MacAddr> {
        self.inner.mac()
    }

    fn io_counters(&self) -> IoCounters {
        self.inner.io_counters()
    }

    fn describe(&self) -> String {
        self.inner.describe()
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        self.inner.next_rx_time()
    }
}

/// When each node runs next.
pub(super) struct Scheduler {
    heap: BinaryHeap<Reverse<(Nanos, u64, NodeId)>>,
    seq: u64,
    /// Per node: (due time, port or NIC) of frames announced toward it, so
    /// a run receives from those only.
    pending_rx: Vec<BinaryHeap<Reverse<(Nanos, u16)>>>,
    /// Per node: the time and push number of its last run; an entry for
    /// that time pushed before it is already served.
    last_run: Vec<(Nanos, u64)>,
    arrivals: Arrivals,
    /// Nodes run so far.
    pub events: u64,
}

impl Scheduler {
    /// A scheduler of `nodes` nodes, none due.
    pub(super) fn new(nodes: usize) -> Scheduler {
        Scheduler {
            heap: BinaryHeap::with_capacity(nodes * 4),
            seq: 0,
            pending_rx: (0..nodes).map(|_| BinaryHeap::new()).collect(),
            last_run: vec![(Nanos::MAX, 0); nodes],
            arrivals: Arc::new(SegQueue::new()),
            events: 0,
        }
    }

    /// The queue cable ends announce arrivals on.
    pub(super) fn arrivals(&self) -> Arrivals {
        Arc::clone(&self.arrivals)
    }

    /// Asks for `node` to run at `t`.
    pub(super) fn wake(&mut self, node: NodeId, t: Nanos) {
        self.seq += 1;
        self.heap.push(Reverse((t, self.seq, node)));
    }

    /// Frames are due at `t` on `port` of `node`: it runs then.
    pub(super) fn arrive(&mut self, node: NodeId, port: u16, t: Nanos) {
        if let Some(p) = self.pending_rx.get_mut(node as usize) {
            p.push(Reverse((t, port)));
        }
        self.wake(node, t);
    }

    /// Takes in the arrivals announced since the last call.
    pub(super) fn collect_arrivals(&mut self) {
        while let Some((node, port, t)) = self.arrivals.pop() {
            self.arrive(node, port, t);
        }
    }

    /// The ports (or NICs) of `node` with frames due by `now`, each given
    /// to `hint` (one may come more than once).
    pub(super) fn due_ports(&mut self, node: NodeId, now: Nanos, mut hint: impl FnMut(u16)) {
        if let Some(p) = self.pending_rx.get_mut(node as usize) {
            while let Some(&Reverse((t, port))) = p.peek() {
                if t > now {
                    break;
                }
                p.pop();
                hint(port);
            }
        }
    }

    /// The next node to run and its time, at or before `limit`; entries
    /// already served by a run at the same time are skipped.
    pub(super) fn next(&mut self, limit: Nanos) -> Option<(Nanos, NodeId)> {
        while let Some(&Reverse((t, seq, node))) = self.heap.peek() {
            if t > limit {
                return None;
            }
            self.heap.pop();
            let (ran_at, ran_seq) = self.last_run[node as usize];
            if ran_at == t && seq < ran_seq {
                continue;
            }
            self.seq += 1;
            self.last_run[node as usize] = (t, self.seq);
            self.events += 1;
            return Some((t, node));
        }
        None
    }

    /// The earliest time anything is due, if anything is.
    pub(super) fn peek_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use railyard_dataplane::port::ring::RingLink;

    #[test]
    fn nodes_run_in_time_order_and_once_per_instant() {
        let mut s = Scheduler::new(3);
        s.wake(2, 50);
        s.wake(1, 10);
        s.wake(1, 10);
        s.wake(0, 30);
        assert_eq!(s.next(100), Some((10, 1)));
        // The duplicate for node 1 at 10 was served by that run.
        assert_eq!(s.next(100), Some((30, 0)));
        // Asked again for the same instant after running: it runs again.
        s.wake(0, 30);
        assert_eq!(s.next(100), Some((30, 0)));
        assert_eq!(s.next(40), None, "node 2 is due after the limit");
        assert_eq!(s.peek_time(), Some(50));
        assert_eq!(s.next(100), Some((50, 2)));
        assert_eq!(s.next(100), None);
        assert_eq!(s.events, 4);
    }

    #[test]
    fn a_notifying_port_announces_each_burst_at_its_due_time() {
        let pool = Pool::new(8);
        let (a, mut b, _ctl) = RingLink::pair_with_delay("t", 16, 1_000);
        let mut s = Scheduler::new(2);
        let mut port = NotifyingPort::new(a, 1, 7, s.arrivals());
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&[1; 60]).unwrap());
        burst.push(pool.alloc_from(&[2; 60]).unwrap());
        assert_eq!(port.tx_burst(&mut burst, 5_000), 2);
        // Nothing sent, nothing announced.
        assert_eq!(port.tx_burst(&mut burst, 6_000), 0);
        s.collect_arrivals();
        assert_eq!(s.next(u64::MAX), Some((6_000, 1)));
        assert_eq!(s.next(u64::MAX), None);
        let mut ports = Vec::new();
        s.due_ports(1, 5_999, |p| ports.push(p));
        assert!(ports.is_empty(), "not due yet");
        s.due_ports(1, 6_000, |p| ports.push(p));
        assert_eq!(ports, [7]);
        let mut rx = Burst::new();
        assert_eq!(b.rx_burst(&pool, &mut rx, 5_999), 0, "not due yet");
        assert_eq!(b.rx_burst(&pool, &mut rx, 6_000), 2);
    }
}
