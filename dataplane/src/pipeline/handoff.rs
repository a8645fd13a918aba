//! Moving packets between workers: a packet routed to a port another
//! worker owns crosses a single-producer ring, a burst at a time; neighbour
//! answers one worker learns are told to the others. With one worker this
//! is only [`Switch::send_to_egress`].

use std::net::IpAddr;
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;

use super::egress::TX_BURSTS_PER_POLL;
use super::Switch;
use crate::balance::QualityBoard;
use crate::clock::Nanos;
use crate::counters::DropReason;
use crate::lanes::LaneBoard;
use crate::model::PortId;
use crate::packet::{Burst, PacketBuf, BURST_SIZE};
use crate::pfc::{IngressAccounting, IngressCharge};
use crate::wire::MacAddr;

/// A neighbour learned by one worker, told to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NeighborEvent {
    /// Interface the neighbour is on.
    pub port: PortId,
    /// Its address.
    pub addr: IpAddr,
    /// Its MAC.
    pub mac: MacAddr,
}

/// A MAC address one worker learned on a switchport, told to the others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MacEvent {
    /// Its VLAN.
    pub vlan: u16,
    /// The address.
    pub mac: MacAddr,
    /// The switchport (or port-channel) it was heard on.
    pub port: PortId,
}

/// The rings joining one worker to the others.
pub struct WorkerLinks {
    /// This worker's number.
    pub id: usize,
    /// Which worker owns each port (index = port id).
    pub owners: Vec<usize>,
    /// Frames the control plane sends on this worker's ports.
    pub inbox: Arc<ArrayQueue<PacketBuf>>,
    /// Every worker's control inbox, by worker number.
    pub inboxes: Vec<Arc<ArrayQueue<PacketBuf>>>,
    /// Packets this worker routes to each other worker's ports, by worker
    /// number (`None` for itself). One single-producer ring per pair of
    /// workers lets a burst cross with one index update, not one atomic
    /// read-modify-write per packet.
    pub to_peers: Vec<Option<rtrb::Producer<PacketBuf>>>,
    /// Packets the other workers routed to this worker's ports.
    pub from_peers: Vec<rtrb::Consumer<PacketBuf>>,
    /// Neighbour events for this worker.
    pub events: Arc<ArrayQueue<NeighborEvent>>,
    /// Every worker's event ring, by worker number.
    pub all_events: Vec<Arc<ArrayQueue<NeighborEvent>>>,
    /// MAC addresses learned by other workers, for this worker.
    pub macs: Arc<ArrayQueue<MacEvent>>,
    /// Every worker's MAC ring, by worker number.
    pub all_macs: Vec<Arc<ArrayQueue<MacEvent>>>,
    /// Lossless bytes buffered per ingress port, shared by every worker so
    /// that the ingress port's worker sees what other workers queued.
    pub ingress: Arc<IngressAccounting>,
    /// DLB port quality, published by each port's owner and read by all.
    pub quality: Arc<QualityBoard>,
    /// Pause, storm and queue state of ports sent on through lanes.
    pub lanes: Arc<LaneBoard>,
}

impl WorkerLinks {
    /// Links for `workers` workers with the given port ownership, each ring
    /// holding `capacity` packets.
    pub fn build(workers: usize, owners: &[usize], capacity: usize) -> Vec<WorkerLinks> {
        let inboxes: Vec<_> = (0..workers)
            .map(|_| Arc::new(ArrayQueue::new(capacity.max(1))))
            .collect();
        let events: Vec<_> = (0..workers)
            .map(|_| Arc::new(ArrayQueue::new(1024)))
            .collect();
        let macs: Vec<_> = (0..workers)
            .map(|_| Arc::new(ArrayQueue::new(4096)))
            .collect();
        let ingress = Arc::new(IngressAccounting::new(owners.len(), workers));
        let quality = Arc::new(QualityBoard::new(owners.len()));
        let lanes = Arc::new(LaneBoard::new(owners.len(), workers));
        // rings[from][to]: the ring from worker `from` to worker `to`.
        let mut to_peers: Vec<Vec<Option<rtrb::Producer<PacketBuf>>>> = Vec::new();
        let mut from_peers: Vec<Vec<rtrb::Consumer<PacketBuf>>> =
            (0..workers).map(|_| Vec::new()).collect();
        for from in 0..workers {
            let mut row = Vec::new();
            for (to, inbound) in from_peers.iter_mut().enumerate() {
                if to == from {
                    row.push(None);
                } else {
                    let (tx, rx) = rtrb::RingBuffer::new(capacity.max(1));
                    row.push(Some(tx));
                    inbound.push(rx);
                }
            }
            to_peers.push(row);
        }
        to_peers
            .into_iter()
            .zip(from_peers)
            .enumerate()
            .map(|(id, (to_peers, from_peers))| WorkerLinks {
                id,
                owners: owners.to_vec(),
                inbox: Arc::clone(&inboxes[id]),
                inboxes: inboxes.clone(),
                to_peers,
                from_peers,
                events: Arc::clone(&events[id]),
                all_events: events.clone(),
                macs: Arc::clone(&macs[id]),
                all_macs: macs.clone(),
                ingress: Arc::clone(&ingress),
                quality: Arc::clone(&quality),
                lanes: Arc::clone(&lanes),
            })
            .collect()
    }
}

/// Most hand-off bursts taken from each peer worker per round: as many as a
/// port may send, so a worker drains its peers as fast as it transmits.
const HANDOFF_BURSTS_PER_POLL: usize = TX_BURSTS_PER_POLL;

impl Switch {
    /// Sends a packet toward its egress port: over the owning worker's ring,
    /// or through this worker's egress admission when the port's queues are
    /// here (its own port, or a lane).
    pub(super) fn send_to_egress(&mut self, pkt: PacketBuf) {
        let out = pkt.meta.out_port as usize;
        let pkt = if self.ports[out].model.logical.is_some() {
            match self.send_logical(pkt) {
                Ok(()) => return,
                Err(pkt) => pkt,
            }
        } else {
            pkt
        };
        let out = pkt.meta.out_port as usize;
        if self.ports[out].tx_here {
            return self.admit_egress(pkt);
        }
        let Some(links) = &self.links else { return };
        let owner = links.owners[out];
        if self.outbox[owner].is_full() {
            self.flush_handoff(owner);
        }
        self.outbox[owner].push(pkt);
    }

    /// True while this worker's ring to another (live) worker is more than
    /// half full: that worker is behind, so this one leaves new frames in
    /// its ports' receive rings (where the backend counts any overflow, as a
    /// NIC does) rather than routing them only to drop them at the hand-off.
    pub(super) fn handoff_congested(&self) -> bool {
        self.links.as_ref().is_some_and(|l| {
            l.to_peers
                .iter()
                .flatten()
                .any(|r| !r.is_abandoned() && r.slots() < r.buffer().capacity() / 2)
        })
    }

    /// Sends what this poll routed to worker `w`'s ports over its ring in
    /// one go; what does not fit is dropped as `handoff_full`.
    fn flush_handoff(&mut self, w: usize) {
        let Some(ring) = self
            .links
            .as_mut()
            .and_then(|l| l.to_peers.get_mut(w))
            .and_then(|r| r.as_mut())
        else {
            return;
        };
        let burst = &mut self.outbox[w];
        let fits = ring.slots().min(burst.len());
        if let Ok(chunk) = ring.write_chunk_uninit(fits) {
            chunk.fill_from_iter(burst.drain(..fits));
        }
        if burst.is_empty() {
            return;
        }
        let mut left = std::mem::take(burst);
        for pkt in left.drain(..) {
            self.ingress_acct
                .release(self.worker, IngressCharge::of(&pkt));
            let p = usize::from(pkt.in_port);
            self.drop_packet(pkt, p, DropReason::HandoffFull);
        }
        // The emptied burst keeps its place (an ArrayVec: nothing to free).
        self.outbox[w] = left;
    }

    /// Flushes every worker's outbox (the end of a poll).
    pub(super) fn flush_handoffs(&mut self) {
        for w in 0..self.outbox.len() {
            if !self.outbox[w].is_empty() {
                self.flush_handoff(w);
            }
        }
    }

    pub(super) fn drain_links(&mut self, now: Nanos) -> usize {
        let Some(links) = &self.links else { return 0 };
        let events = Arc::clone(&links.events);
        let inbox = Arc::clone(&links.inbox);
        let peers = links.from_peers.len();
        while let Some(ev) = events.pop() {
            self.learn(ev.port, ev.addr, ev.mac, now, false);
        }
        if let Some(macs) = self.links.as_ref().map(|l| Arc::clone(&l.macs)) {
            while let Some(ev) = macs.pop() {
                self.learned_elsewhere(ev);
            }
        }
        let mut n = 0;
        while n < BURST_SIZE {
            let Some(pkt) = inbox.pop() else { break };
            self.send_to_egress(pkt);
            n += 1;
        }
        for r in 0..peers {
            for _ in 0..HANDOFF_BURSTS_PER_POLL {
                let mut burst = Burst::new();
                if let Some(ring) = self.links.as_mut().and_then(|l| l.from_peers.get_mut(r)) {
                    let take = ring.slots().min(BURST_SIZE);
                    if let Ok(chunk) = ring.read_chunk(take) {
                        burst.extend(chunk);
                    }
                }
                if burst.is_empty() {
                    break;
                }
                n += burst.len();
                // Another core wrote these packets' state last.
                for pkt in &burst {
                    pkt.prefetch_state();
                }
                for pkt in burst.drain(..) {
                    self.send_to_egress(pkt);
                }
            }
        }
        n
    }
}
