//! Which ports a worker visits each round, and when each can next act.
//!
//! Visiting a port reads its queues, PFC state and backend: several cache
//! lines, found to hold nothing to do for most ports of most rounds (idle
//! ports, or ports whose wire is still busy with the last frame). A
//! simulated 64-port switch in a large fabric spent more time looking than
//! forwarding. So the worker keeps, per port, whether it has work at all
//! (the busy set) and, once a round has settled it, the earliest time it can
//! next act and the earliest time a packet or timer of it falls due; a round
//! visits a busy port only when the first has come, and
//! [`Switch::next_departure`] takes the minimum of the second from a compact
//! array.
//!
//! A port is marked (busy, times unknown) wherever work for it is created:
//! a packet queued, a control frame built, a pause sent or received, a
//! queue paused from outside. Only a round that settles it clears the mark.
//! Debug builds check after every round that no port outside the busy set
//! has work.

use super::Switch;
use crate::clock::Nanos;

/// Sixty-four ports' bits: busy, and of those, settled.
#[derive(Debug, Clone, Copy, Default)]
struct Word {
    busy: u64,
    settled: u64,
}

/// The busy ports and, for settled ones, their times. Both bits of a port
/// share a word, so marking one (per packet queued) is one bounds check.
#[derive(Debug, Clone)]
pub(super) struct Busy {
    words: Box<[Word]>,
    /// When a round next has something to do for the port.
    visit_at: Box<[Nanos]>,
    /// When a packet of the port can next leave or a PFC timer of it
    /// fires (`Nanos::MAX`: not without something else happening).
    due_at: Box<[Nanos]>,
}

impl Busy {
    /// Every port of `ports` busy and unsettled: a new or reconfigured
    /// switch looks at each once.
    pub(super) fn new(ports: usize) -> Busy {
        let mut words = vec![
            Word {
                busy: u64::MAX,
                settled: 0
            };
            ports.div_ceil(64)
        ]
        .into_boxed_slice();
        if let Some(last) = words.last_mut() {
            let tail = ports % 64;
            if tail != 0 {
                last.busy = (1 << tail) - 1;
            }
        }
        Busy {
            words,
            visit_at: vec![0; ports].into_boxed_slice(),
            due_at: vec![Nanos::MAX; ports].into_boxed_slice(),
        }
    }

    /// Port `p` has new work: busy, and visited by the next round.
    #[inline]
    pub(super) fn mark(&mut self, p: usize) {
        if let Some(w) = self.words.get_mut(p / 64) {
            let bit = 1 << (p % 64);
            w.busy |= bit;
            w.settled &= !bit;
        }
    }

    /// Whether port `p` may have work.
    pub(super) fn is_busy(&self, p: usize) -> bool {
        self.words
            .get(p / 64)
            .is_some_and(|w| w.busy & (1 << (p % 64)) != 0)
    }

    fn is_settled(&self, p: usize) -> bool {
        self.words
            .get(p / 64)
            .is_some_and(|w| w.settled & (1 << (p % 64)) != 0)
    }

    /// Words of busy bits, for a walk that may change them as it goes.
    pub(super) fn words(&self) -> usize {
        self.words.len()
    }

    /// The busy bits of ports `64 i ..`.
    #[inline]
    pub(super) fn busy_word(&self, i: usize) -> u64 {
        self.words[i].busy
    }

    /// The busy ports, in order.
    pub(super) fn ports(&self) -> impl Iterator<Item = usize> + '_ {
        self.words.iter().enumerate().flat_map(|(i, w)| {
            let mut bits = w.busy;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    i * 64 + b
                })
            })
        })
    }

    /// Whether a round at `now` visits busy port `p`.
    #[inline]
    pub(super) fn visit(&self, p: usize, now: Nanos) -> bool {
        !self.is_settled(p) || self.visit_at[p] <= now
    }

    /// A round found port `p` idle.
    pub(super) fn idle(&mut self, p: usize) {
        if let Some(w) = self.words.get_mut(p / 64) {
            let bit = 1 << (p % 64);
            w.busy &= !bit;
            w.settled &= !bit;
        }
    }

    /// A round left port `p` with work that can next act at `visit_at`
    /// and falls due at `due_at`.
    pub(super) fn settle(&mut self, p: usize, visit_at: Nanos, due_at: Nanos) {
        if let Some(w) = self.words.get_mut(p / 64) {
            w.settled |= 1 << (p % 64);
            self.visit_at[p] = visit_at;
            self.due_at[p] = due_at;
        }
    }

    /// Port `p`'s due time, if a round settled it.
    #[inline]
    pub(super) fn due_at(&self, p: usize) -> Option<Nanos> {
        self.is_settled(p).then(|| self.due_at[p])
    }
}

impl Switch {
    /// True when a round has nothing to do for owned port `p`: no queued,
    /// pending or control frame to send, no pause received or sent, no
    /// storm. A port without a backend sends nothing, whatever it holds.
    pub(super) fn port_idle(&self, p: usize) -> bool {
        let slot = &self.ports[p];
        slot.pfc.rx_paused == 0
            && slot.pfc.stormed == 0
            && slot.pfc.tx_xoff == 0
            && (slot.backend.is_none()
                || (slot.queues.is_empty()
                    && slot.ctrl_tx.is_empty()
                    && slot.tx_pending.is_empty()))
    }

    /// When owned port `p`'s next packet can leave or one of its PFC timers
    /// fires (a pause runs out on a queue holding packets, an XOFF is due
    /// for refresh, the watchdog acts); `None` when nothing can happen
    /// without something else happening first.
    pub(super) fn port_due(&self, p: usize) -> Option<Nanos> {
        let slot = &self.ports[p];
        let nonempty = slot.queues.nonempty_mask();
        let candidates = [
            slot.queues.next_departure(),
            slot.pfc.next_expiry(nonempty),
            slot.pfc.next_refresh(),
            slot.model
                .pfc
                .watchdog
                .and_then(|wd| slot.pfc.next_watchdog(nonempty, &wd)),
        ];
        candidates.into_iter().flatten().min()
    }

    /// After a round visited owned port `p`: idle, or settled with the time
    /// the next round must look at it. A pause that runs out is acted on
    /// at the first round after it, even on an empty queue, and a port
    /// with frames its backend refused, an XOFF to release or a watchdog
    /// watching is looked at every round, as before there were times.
    pub(super) fn settle_port(&mut self, p: usize) {
        if self.port_idle(p) {
            self.busy.idle(p);
            return;
        }
        let due = self.port_due(p).unwrap_or(Nanos::MAX);
        let slot = &self.ports[p];
        let every_round = slot.pfc.tx_xoff != 0
            || !slot.tx_pending.is_empty()
            || !slot.ctrl_tx.is_empty()
            || (slot.model.pfc.watchdog.is_some() && slot.pfc.rx_paused | slot.pfc.stormed != 0);
        let visit = if every_round {
            0
        } else {
            let mut expiry = Nanos::MAX;
            let mut m = slot.pfc.rx_paused;
            while m != 0 {
                let q = m.trailing_zeros() as usize;
                m &= m - 1;
                expiry = expiry.min(slot.pfc.paused_until[q]);
            }
            due.min(expiry)
        };
        self.busy.settle(p, visit, due);
    }

    /// Debug builds: no owned port outside the busy set has work.
    pub(super) fn check_busy(&self) {
        if cfg!(debug_assertions) {
            for p in 0..self.ports.len() {
                debug_assert!(
                    !self.ports[p].owned || self.busy.is_busy(p) || self.port_idle(p),
                    "{}: port {p} has work but is not in the busy set",
                    self.hostname
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Busy;

    #[test]
    fn a_new_set_holds_exactly_its_ports_unsettled() {
        for n in [0, 1, 63, 64, 65, 130] {
            let b = Busy::new(n);
            assert_eq!(b.ports().collect::<Vec<_>>(), (0..n).collect::<Vec<_>>());
            assert!((0..n).all(|p| b.visit(p, 0) && b.due_at(p).is_none()));
        }
    }

    #[test]
    fn ports_come_and_go() {
        let mut b = Busy::new(130);
        for p in 0..130 {
            b.idle(p);
        }
        assert_eq!(b.ports().count(), 0);
        for p in [129, 3, 64, 63] {
            b.mark(p);
        }
        assert_eq!(b.ports().collect::<Vec<_>>(), [3, 63, 64, 129]);
        assert!(b.is_busy(64) && !b.is_busy(65));
        // Out of range: ignored, not a panic.
        b.mark(500);
        b.idle(500);
        b.settle(500, 1, 1);
        assert!(!b.is_busy(500) && b.due_at(500).is_none());
        assert_eq!((b.words(), b.busy_word(2)), (3, 1 << 1));
    }

    #[test]
    fn a_settled_port_waits_for_its_time_and_a_mark_unsettles_it() {
        let mut b = Busy::new(3);
        b.settle(1, 500, 700);
        assert!(!b.visit(1, 499) && b.visit(1, 500));
        assert_eq!(b.due_at(1), Some(700));
        b.mark(1);
        assert!(b.visit(1, 0) && b.due_at(1).is_none());
        b.idle(2);
        assert_eq!(b.ports().collect::<Vec<_>>(), [0, 1]);
    }
}
