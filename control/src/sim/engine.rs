//! The simulator's scheduler: a node (a switch, or a host with its NICs)
//! runs only when it has work due, so a fabric of a thousand NICs costs
//! what its busy ports cost, not what its size does.
//!
//! Every node is run at the times it asked for (a queued packet's
//! departure, a NIC's pacing slot or timer) and at the times frames sent
//! toward it arrive. The latter are known when they are sent: a switch's
//! cable ends are [`NotifyingPort`]s, which tell the receiving node's
//! worker "node P has a frame due at t" for every burst they put on the
//! cable; a host's NICs are driven by the run loop, which does the same.
//!
//! Time advances in windows no longer than the shortest cable's delay
//! (conservative parallel simulation, the cable delay as lookahead):
//! whatever a node sends in a window arrives after it ends, so within a
//! window every node runs alone, on its own events in time order, and the
//! nodes can be shared among threads ([`Partition`]) without changing a
//! single result. One thread or several, a run is the same, event for
//! event.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::ops::Range;
use std::sync::Arc;

use crossbeam_queue::SegQueue;
use railyard_dataplane::clock::Nanos;
use railyard_dataplane::port::ring::RingPort;
use railyard_dataplane::port::{IoCounters, Port, TxDone};
use railyard_dataplane::wire::MacAddr;
use railyard_dataplane::{Burst, PacketBuf, PacketHint, Pool};

/// A node of the fabric, as the scheduler numbers them: switches first,
/// then hosts.
pub(super) type NodeId = u32;

/// Arrivals announced by cable ends since the scheduler last looked:
/// (receiving node, its port, time the frames are due, where the first
/// frame lies, to prefetch it before the node runs). Lock-free,
/// because the ports that push sit inside switches (which must be
/// `Send`).
pub(super) type Arrivals = Arc<SegQueue<(NodeId, u16, Nanos, PacketHint)>>;

/// A switch's end of a cable that announces what it sends to the node at
/// the other end. Everything else is the ring's own behaviour.
pub(super) struct NotifyingPort {
    inner: RingPort,
    peer: NodeId,
    peer_port: u16,
    arrivals: Arrivals,
    /// `--capture` of this port: None unless asked for.
    tap: Option<super::capture::Tap>,
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
            tap: None,
        }
    }

    /// Captures what the port sends and receives (`--capture`).
    pub(super) fn with_tap(mut self, tap: Option<super::capture::Tap>) -> NotifyingPort {
        self.tap = tap;
        self
    }
}

impl Port for NotifyingPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        let n = self.inner.rx_burst(pool, burst, now);
        if let Some(tap) = &self.tap {
            tap.rx(burst, n, now);
        }
        n
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> TxDone {
        let first = burst.first().map_or(PacketHint::default(), PacketBuf::hint);
        let encoded = self.tap.as_ref().map(|t| t.before_tx(burst, now));
        let done = self.inner.tx_burst(burst, now);
        let n = done.sent;
        if let (Some(tap), Some(encoded)) = (&self.tap, encoded) {
            tap.after_tx(encoded, n);
        }
        if n > 0 {
            // One announcement per burst: its frames share the due time.
            self.arrivals.push((
                self.peer,
                self.peer_port,
                now.saturating_add(self.inner.delay_ns()),
                first,
            ));
        }
        done
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

/// How the nodes are shared among worker threads: worker `k` owns a
/// contiguous run of the switches and another of the hosts, so a rail and
/// its hosts tend to stay together.
#[derive(Debug, Clone, Copy)]
pub(super) struct Partition {
    switches: usize,
    hosts: usize,
    workers: usize,
}

impl Partition {
    /// `workers` workers over `switches` and `hosts`: at least one, and no
    /// more than there are nodes.
    pub(super) fn new(switches: usize, hosts: usize, workers: usize) -> Partition {
        Partition {
            switches,
            hosts,
            workers: workers.min(switches + hosts).max(1),
        }
    }

    /// How many workers there are.
    pub(super) fn workers(&self) -> usize {
        self.workers
    }

    /// The switches worker `k` owns.
    pub(super) fn switch_range(&self, k: usize) -> Range<usize> {
        share(self.switches, self.workers, k)
    }

    /// The hosts worker `k` owns.
    pub(super) fn host_range(&self, k: usize) -> Range<usize> {
        share(self.hosts, self.workers, k)
    }

    /// The worker that owns `node`.
    pub(super) fn worker_of(&self, node: NodeId) -> usize {
        let n = node as usize;
        let owns = |k: usize| {
            if n < self.switches {
                self.switch_range(k).contains(&n)
            } else {
                self.host_range(k).contains(&(n - self.switches))
            }
        };
        (0..self.workers).find(|&k| owns(k)).unwrap_or(0)
    }
}

/// Part `k` of `total` items shared among `parts` as evenly as can be.
fn share(total: usize, parts: usize, k: usize) -> Range<usize> {
    (k * total / parts)..((k + 1) * total / parts)
}

/// One worker's agenda: when each of its nodes runs next.
pub(super) struct Agenda {
    /// (time, node) of every node that may have work due then; stale and
    /// repeated entries are harmless (a node's own state says what is due).
    heap: BinaryHeap<Reverse<(Nanos, NodeId)>>,
    /// Per node: (due time, port or NIC, first frame) of frames announced
    /// toward it, so a run receives from those only.
    pending_rx: Vec<BinaryHeap<Reverse<(Nanos, u16, PacketHint)>>>,
    /// Per node: the time it asked to run at (`Nanos::MAX`: none).
    wake_at: Vec<Nanos>,
    /// Per node: its earliest entry on `heap` not yet taken (`Nanos::MAX`:
    /// none), so a later arrival or wake, which that entry's run covers,
    /// adds none: a node busy with a stream of frames costs the heap one
    /// entry per window, not one per frame.
    queued_at: Vec<Nanos>,
    /// Per node: the last window it was taken into.
    taken_in: Vec<u64>,
    windows: u64,
    inbox: Arrivals,
    /// Nodes run so far.
    pub events: u64,
}

impl Agenda {
    /// An agenda for a fabric of `nodes` nodes, none due, that hears the
    /// arrivals announced on `inbox`.
    pub(super) fn new(nodes: usize, inbox: Arrivals) -> Agenda {
        Agenda {
            heap: BinaryHeap::with_capacity(nodes * 4),
            pending_rx: (0..nodes).map(|_| BinaryHeap::new()).collect(),
            wake_at: vec![Nanos::MAX; nodes],
            queued_at: vec![Nanos::MAX; nodes],
            taken_in: vec![0; nodes],
            windows: 0,
            inbox,
            events: 0,
        }
    }

    /// Asks for `node` to run at `t` (or earlier, if it already asked).
    pub(super) fn wake(&mut self, node: NodeId, t: Nanos) {
        if let Some(w) = self.wake_at.get_mut(node as usize) {
            *w = (*w).min(t);
            self.enqueue(node, t);
        }
    }

    /// Puts `node` on the heap at `t` unless an entry no later is there.
    #[inline]
    fn enqueue(&mut self, node: NodeId, t: Nanos) {
        let q = &mut self.queued_at[node as usize];
        if t < *q {
            *q = t;
            self.heap.push(Reverse((t, node)));
        }
    }

    /// Frames are due at `t` on `port` of `node`, the first at `first`:
    /// it runs then.
    pub(super) fn arrive(&mut self, node: NodeId, port: u16, t: Nanos, first: PacketHint) {
        if let Some(p) = self.pending_rx.get_mut(node as usize) {
            p.push(Reverse((t, port, first)));
            self.enqueue(node, t);
        }
    }

    /// Takes in the arrivals announced since the last call.
    pub(super) fn collect_arrivals(&mut self) {
        while let Some((node, port, t, first)) = self.inbox.pop() {
            self.arrive(node, port, t, first);
        }
    }

    /// The earliest time one of its nodes may have work due.
    pub(super) fn next_time(&self) -> Option<Nanos> {
        self.heap.peek().map(|Reverse((t, _))| *t)
    }

    /// Fills `nodes` with the nodes that may have work before `end`, in
    /// the order their first work is due, each once.
    pub(super) fn take_window(&mut self, end: Nanos, nodes: &mut Vec<NodeId>) {
        self.windows += 1;
        nodes.clear();
        while let Some(&Reverse((t, node))) = self.heap.peek() {
            if t >= end {
                break;
            }
            self.heap.pop();
            // Taken: whatever it has due from here on is seen by
            // `next_run`, which queues what falls after the window.
            self.queued_at[node as usize] = Nanos::MAX;
            let taken = &mut self.taken_in[node as usize];
            if *taken != self.windows {
                *taken = self.windows;
                nodes.push(node);
            }
        }
    }

    /// When `node` runs next, if before `end` (the run is counted); if not,
    /// its next time goes back on the heap for a later window.
    pub(super) fn next_run(&mut self, node: NodeId, end: Nanos) -> Option<Nanos> {
        let n = node as usize;
        let rx = self.pending_rx[n].peek().map_or(Nanos::MAX, |r| r.0 .0);
        let t = self.wake_at[n].min(rx);
        if t >= end {
            if t != Nanos::MAX {
                self.enqueue(node, t);
            }
            return None;
        }
        if self.wake_at[n] <= t {
            self.wake_at[n] = Nanos::MAX;
        }
        self.events += 1;
        Some(t)
    }

    /// Starts loading the first frame of every burst due on `node` before
    /// `end`: taken as a node's runs in a window begin, the misses on
    /// frames other nodes wrote overlap, and most are in before its runs
    /// reach them. Only a hint: it changes nothing the node does.
    pub(super) fn prefetch_due(&self, node: NodeId, end: Nanos) {
        if let Some(p) = self.pending_rx.get(node as usize) {
            for &Reverse((t, _, first)) in p.iter() {
                if t < end {
                    first.prefetch();
                }
            }
        }
    }

    /// After a run at `now`: `node` asks to run at `t`, if anything.
    pub(super) fn ran(&mut self, node: NodeId, now: Nanos, t: Option<Nanos>) {
        if let Some(t) = t {
            // A node due again at once (a model rounding to the same
            // nanosecond) steps on by one, so an instant always ends.
            let w = &mut self.wake_at[node as usize];
            *w = (*w).min(t.max(now + 1));
        }
    }

    /// The ports (or NICs) of `node` with frames due by `now`, each given
    /// to `hint` (one may come more than once).
    pub(super) fn due_ports(&mut self, node: NodeId, now: Nanos, mut hint: impl FnMut(u16)) {
        if let Some(p) = self.pending_rx.get_mut(node as usize) {
            while let Some(&Reverse((t, port, _))) = p.peek() {
                if t > now {
                    break;
                }
                p.pop();
                hint(port);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use railyard_dataplane::port::ring::RingLink;

    /// Runs `agenda`'s window `[.., end)`: (node, time) of every run, each
    /// node asking for nothing more.
    fn window(agenda: &mut Agenda, end: Nanos) -> Vec<(NodeId, Nanos)> {
        let mut nodes = Vec::new();
        agenda.take_window(end, &mut nodes);
        let mut runs = Vec::new();
        for node in nodes {
            while let Some(t) = agenda.next_run(node, end) {
                agenda.due_ports(node, t, |_| {});
                agenda.ran(node, t, None);
                runs.push((node, t));
            }
        }
        runs
    }

    #[test]
    fn a_window_runs_each_node_on_its_own_events_in_time_order() {
        let mut s = Agenda::new(3, Arc::new(SegQueue::new()));
        s.wake(2, 50);
        s.wake(1, 10);
        s.wake(1, 10);
        s.arrive(1, 4, 30, PacketHint::default());
        s.wake(0, 30);
        assert_eq!(s.next_time(), Some(10));
        // Node 1 first (due first), at 10 and at its arrival at 30, once
        // each; node 2 is due after the window.
        assert_eq!(window(&mut s, 40), [(1, 10), (1, 30), (0, 30)]);
        assert_eq!(s.next_time(), Some(50));
        assert_eq!(window(&mut s, 100), [(2, 50)]);
        assert_eq!(s.next_time(), None);
        assert_eq!(s.events, 4);
    }

    #[test]
    fn a_node_that_asks_again_inside_the_window_runs_again_and_the_rest_waits() {
        let mut s = Agenda::new(1, Arc::new(SegQueue::new()));
        s.wake(0, 0);
        let mut nodes = Vec::new();
        s.take_window(100, &mut nodes);
        assert_eq!(nodes, [0]);
        let mut runs = Vec::new();
        while let Some(t) = s.next_run(0, 100) {
            runs.push(t);
            // Asking for the same instant steps on by a nanosecond.
            s.ran(0, t, Some(if t == 0 { 0 } else { t + 60 }));
        }
        assert_eq!(runs, [0, 1, 61]);
        // 121 is past the window: it waits on the heap.
        assert_eq!(s.next_time(), Some(121));
    }

    #[test]
    fn a_partition_gives_every_node_one_worker() {
        let p = Partition::new(5, 7, 2);
        assert_eq!(p.switch_range(0), 0..2);
        assert_eq!(p.switch_range(1), 2..5);
        assert_eq!(p.host_range(0), 0..3);
        assert_eq!(p.host_range(1), 3..7);
        let owners: Vec<usize> = (0..12).map(|n| p.worker_of(n)).collect();
        assert_eq!(owners, [0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]);
        assert_eq!(Partition::new(3, 3, 0).workers(), 1);
        assert_eq!(Partition::new(1, 2, 8).workers(), 3);
    }

    #[test]
    fn a_notifying_port_announces_each_burst_at_its_due_time() {
        let pool = Pool::new(8);
        let (a, mut b, _ctl) = RingLink::pair_with_delay("t", 16, 1_000);
        let mut s = Agenda::new(2, Arc::new(SegQueue::new()));
        let mut port = NotifyingPort::new(a, 1, 7, Arc::clone(&s.inbox));
        let mut burst = Burst::new();
        burst.push(pool.alloc_from(&[1; 60]).unwrap());
        burst.push(pool.alloc_from(&[2; 60]).unwrap());
        assert_eq!(port.tx_burst(&mut burst, 5_000).sent, 2);
        // Nothing sent, nothing announced.
        assert_eq!(port.tx_burst(&mut burst, 6_000).sent, 0);
        s.collect_arrivals();
        assert_eq!(s.next_time(), Some(6_000));
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
