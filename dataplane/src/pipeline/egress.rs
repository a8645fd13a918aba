//! Egress, per port and burst: frames the switch originated go first (they
//! still take wire time), then the scheduler and shaper fill transmit
//! bursts from the eight queues; packets leaving release their ingress
//! bytes, which is what lets [`pfc_tx`](super::pfc_tx) send XON.

use super::Switch;
use crate::capture::Direction;
use crate::clock::Nanos;
use crate::counters::PortCounters;
use crate::packet::{Burst, BURST_SIZE};
use crate::pfc::IngressCharge;
use crate::port::Port;

/// Most transmit bursts per port per round.
pub(super) const TX_BURSTS_PER_POLL: usize = 4;

/// Hands `burst` to the backend, counting what it accepted; what it refused
/// stays in `burst`.
pub(super) fn transmit(
    backend: &mut dyn Port,
    burst: &mut Burst,
    c: &mut PortCounters,
    now: Nanos,
) -> usize {
    let bytes_before: u64 = burst.iter().map(|p| p.len() as u64).sum();
    let sent = backend.tx_burst(burst, now);
    let bytes_left: u64 = burst.iter().map(|p| p.len() as u64).sum();
    c.tx_packets += sent as u64;
    c.tx_bytes += bytes_before - bytes_left;
    sent
}

impl Switch {
    pub(super) fn tx_port(&mut self, p: usize, now: Nanos) -> usize {
        let slot = &mut self.ports[p];
        let Some(backend) = slot.backend.as_mut() else {
            return 0;
        };
        if !slot.tx_pending.is_empty() {
            transmit(
                backend.as_mut(),
                &mut slot.tx_pending,
                &mut slot.counters,
                now,
            );
            if !slot.tx_pending.is_empty() {
                return 0;
            }
        }
        let mut sent = 0;
        if !slot.ctrl_tx.is_empty() {
            if let Some(span) = &self.span {
                let mask = span.tx_mask(p);
                if mask != 0 {
                    for pkt in &slot.ctrl_tx[slot.ctrl_mirrored.min(slot.ctrl_tx.len())..] {
                        span.mirror(mask, p as u16, Direction::Tx, pkt.data(), now, &self.pool);
                    }
                }
            }
            // Control frames go ahead of the queues, leaving now, but still
            // take wire time (those the backend accepted: it takes them
            // from the front).
            let mut lens = [0usize; BURST_SIZE];
            for (l, pkt) in lens.iter_mut().zip(slot.ctrl_tx.iter_mut()) {
                *l = pkt.len();
                pkt.timestamp = now;
            }
            let n = transmit(backend.as_mut(), &mut slot.ctrl_tx, &mut slot.counters, now);
            for l in &lens[..n.min(BURST_SIZE)] {
                slot.queues.charge_wire(now, *l);
            }
            // What the backend refused stays, copied already.
            slot.ctrl_mirrored = slot.ctrl_tx.len();
            sent += n;
        }
        // Up to a few bursts while the backend keeps taking them: a port fed
        // by several others at once must drain faster than one burst per
        // round or its queues would only ever grow.
        for _ in 0..TX_BURSTS_PER_POLL {
            if slot.queues.is_empty() || !slot.tx_pending.is_empty() {
                break;
            }
            let n = slot.queues.dequeue_burst(
                &mut slot.tx_pending,
                BURST_SIZE,
                now,
                &mut slot.counters.queues,
            );
            if n == 0 {
                // Shaped or paused: nothing may leave yet.
                break;
            }
            if let Some(span) = &self.span {
                let mask = span.tx_mask(p);
                if mask != 0 {
                    for pkt in slot.tx_pending.iter() {
                        span.mirror(mask, p as u16, Direction::Tx, pkt.data(), now, &self.pool);
                    }
                }
            }
            if self.any_lossless {
                let releaser = self.ingress_acct.releaser(self.worker);
                for pkt in slot.tx_pending.iter() {
                    releaser.release(IngressCharge::of(pkt));
                }
            }
            sent += transmit(
                backend.as_mut(),
                &mut slot.tx_pending,
                &mut slot.counters,
                now,
            );
        }
        sent
    }
}
