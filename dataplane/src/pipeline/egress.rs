//! Egress, per port and burst: frames the switch originated go first (they
//! still take wire time), then the scheduler and shaper fill transmit
//! bursts from the eight queues; packets leaving release their ingress
//! bytes, which is what lets [`pfc_tx`](super::pfc_tx) send XON.
//!
//! A frame the backend fails to send is a `tx_error` drop, not a
//! transmitted frame; a port whose link is down sends nothing, and what
//! waits for it is dropped as `link_down` as its queues let it out.

use super::span::copy_for_sessions;
use super::Switch;
use crate::capture::Direction;
use crate::clock::Nanos;
use crate::counters::{DropReason, PortCounters};
use crate::packet::{Burst, BURST_SIZE};
use crate::pfc::IngressCharge;
use crate::port::Port;

/// Most transmit bursts per port per round.
pub(super) const TX_BURSTS_PER_POLL: usize = 4;

/// Hands `burst` to the backend, counting what it sent as transmitted and
/// what it failed to send as `tx_error` drops; what it refused for now
/// stays in `burst`. Returns how many left `burst` (sent or failed).
pub(super) fn transmit(
    backend: &mut dyn Port,
    burst: &mut Burst,
    c: &mut PortCounters,
    now: Nanos,
) -> usize {
    let bytes_before: u64 = burst.iter().map(|p| p.len() as u64).sum();
    let done = backend.tx_burst(burst, now);
    let bytes_left: u64 = burst.iter().map(|p| p.len() as u64).sum();
    c.tx_packets += done.sent as u64;
    c.tx_bytes += (bytes_before - bytes_left).saturating_sub(done.failed_bytes);
    c.drops[DropReason::TxError as usize] += done.failed as u64;
    done.taken()
}

impl Switch {
    pub(super) fn tx_port(&mut self, p: usize, now: Nanos) -> usize {
        if self.ports[p].owned && !self.port_up[p] && self.ports[p].model.logical.is_none() {
            return self.drain_down_port(p, now);
        }
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
                let fresh = &slot.ctrl_tx[slot.ctrl_mirrored.min(slot.ctrl_tx.len())..];
                copy_for_sessions(span, &self.pool, p, Direction::Tx, fresh, now);
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
                copy_for_sessions(span, &self.pool, p, Direction::Tx, &slot.tx_pending, now);
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

    /// Drops what waits to leave port `p`, whose link is down, as
    /// `link_down`: its control frames, the burst the backend refused last
    /// time, and what its queues let out this round (dequeued as for
    /// sending, so that queue counters stay whole and lossless bytes are
    /// released; a paused or shaped queue gives its packets up as it
    /// opens). Returns how many.
    #[cold]
    fn drain_down_port(&mut self, p: usize, now: Nanos) -> usize {
        let mut dropped = 0;
        for _ in 0..=TX_BURSTS_PER_POLL {
            let slot = &mut self.ports[p];
            let mut burst = std::mem::take(&mut slot.tx_pending);
            if burst.is_empty() {
                burst = std::mem::take(&mut slot.ctrl_tx);
            }
            if burst.is_empty() {
                if slot.queues.is_empty()
                    || slot.queues.dequeue_burst(
                        &mut burst,
                        BURST_SIZE,
                        now,
                        &mut slot.counters.queues,
                    ) == 0
                {
                    break;
                }
                if self.any_lossless {
                    let releaser = self.ingress_acct.releaser(self.worker);
                    for pkt in burst.iter() {
                        releaser.release(IngressCharge::of(pkt));
                    }
                }
            }
            dropped += burst.len();
            for pkt in burst.drain(..) {
                self.drop_packet(pkt, p, DropReason::LinkDown);
            }
        }
        dropped
    }
}
