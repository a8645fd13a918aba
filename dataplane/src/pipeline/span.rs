//! Monitor sessions at the ports (see [`crate::span`]): received bursts
//! are copied before ingress, sent frames just before the backend takes
//! them (in [`egress`](super::egress)), and each round the worker owning a
//! destination port sends what its sessions queued.

use std::sync::Arc;

use super::egress::transmit;
use super::Switch;
use crate::capture::Direction;
use crate::clock::Nanos;
use crate::packet::{free_burst, Burst, PacketBuf, Pool, BURST_SIZE};
use crate::span::{SpanDrop, SpanSet, SpanTarget};

impl Switch {
    /// Copies frames for the monitor sessions in `set` (`None`: none).
    /// Takes effect from the next poll; frames already queued for a
    /// destination port of the old set are dropped with it.
    pub fn set_span(&mut self, set: Option<Arc<SpanSet>>) {
        self.span = set;
        for slot in &mut self.ports {
            slot.ctrl_mirrored = slot.ctrl_tx.len();
        }
    }

    /// Sends the copies queued for the destination ports this worker owns,
    /// a burst per session and round; copies a down port cannot send, or
    /// its backend refuses, are dropped and counted. Returns the frames sent.
    #[inline(never)]
    pub(super) fn span_out(&mut self, now: Nanos) -> usize {
        let Some(span) = self.span.take() else {
            return 0;
        };
        let mut sent = 0;
        for (i, s) in span.sessions().iter().enumerate() {
            let SpanTarget::Port { port, queue } = &s.target else {
                continue;
            };
            let p = usize::from(*port);
            let Some(slot) = self.ports.get_mut(p) else {
                continue;
            };
            if !slot.owned || queue.is_empty() {
                continue;
            }
            let mut burst = Burst::new();
            while burst.len() < BURST_SIZE {
                match queue.pop() {
                    Some(pkt) => burst.push(pkt),
                    None => break,
                }
            }
            let up = slot.up();
            match slot.backend.as_mut() {
                Some(backend) if up => {
                    sent += transmit(backend.as_mut(), &mut burst, &mut slot.counters, now);
                }
                _ => {}
            }
            if !burst.is_empty() {
                span.count_undelivered(i, SpanDrop::DestinationDown, burst.len());
                free_burst(&mut burst);
            }
        }
        self.span = Some(span);
        sent
    }
}

/// Copies `frames`, seen on port `p` going `dir` at `now`, for the sessions
/// of `span` that watch it: the one copy point of the receive and transmit
/// paths (a free function, so a caller holding a port's slot can call it).
#[inline(never)]
pub(super) fn copy_for_sessions(
    span: &SpanSet,
    pool: &Pool,
    p: usize,
    dir: Direction,
    frames: &[PacketBuf],
    now: Nanos,
) {
    let mask = match dir {
        Direction::Rx => span.rx_mask(p),
        Direction::Tx => span.tx_mask(p),
    };
    if mask == 0 {
        return;
    }
    for pkt in frames {
        span.mirror(mask, p as u16, dir, pkt.data(), now, pool);
    }
}
