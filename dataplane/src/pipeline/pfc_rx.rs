//! PFC reception, per port: received PFC/PAUSE frames pause egress queues
//! for their quanta, the timers resume them, and the watchdog declares a
//! queue paused too long with traffic waiting stormed (flushed, no longer
//! paused, its priority's arrivals on the port dropped or admitted as lossy,
//! see `classify`) and restores it later.

use std::sync::Arc;

use super::Switch;
use crate::clock::Nanos;
use crate::counters::DropReason;
use crate::host;
use crate::lanes::LaneBoard;
use crate::model::pfc::{WatchdogModel, PRIORITIES};
use crate::packet::PacketBuf;
use crate::pfc::{quanta_ns, IngressCharge};
use crate::wire::mac_control::{self, MacControlRepr};

impl Switch {
    /// The receive side's timers of this worker's port `p`: pauses that ran
    /// out end, and the watchdog looks at paused and stormed queues
    /// (counting the packets lanes on `board` hold for them).
    pub(super) fn pfc_timers(&mut self, p: usize, now: Nanos, board: Option<&LaneBoard>) {
        if self.ports[p].pfc.rx_paused != 0 {
            self.pause_timers(p, now);
        }
        if let Some(wd) = self.ports[p].model.pfc.watchdog {
            if self.ports[p].pfc.rx_paused | self.ports[p].pfc.stormed != 0 {
                let lanes = board.map_or(0, |b| b.lanes_nonempty(p));
                self.watchdog(p, &wd, now, lanes);
            }
        }
    }

    /// Acts on a received PFC or PAUSE frame: sets, reloads or ends the
    /// pause of the queues it names.
    pub(super) fn mac_control(&mut self, pkt: &PacketBuf, p: usize, now: Nanos) {
        self.busy.mark(p);
        let slot = &mut self.ports[p];
        let payload = pkt.data().get(pkt.meta.l3_offset as usize..).unwrap_or(&[]);
        let repr =
            mac_control::Packet::new_checked(payload).and_then(|v| MacControlRepr::parse(&v));
        let enabled = slot.model.pfc.enabled_priorities;
        let (mask, quanta) = match repr {
            Ok(MacControlRepr::Pfc { enable, quanta }) => {
                host::count_mac_control(pkt.data(), &mut slot.counters.pfc);
                (enable & enabled, quanta)
            }
            Ok(MacControlRepr::Pause { quanta }) => {
                let honored = enabled == 0 && slot.model.pfc.honor_pause_8023x;
                (if honored { 0xFF } else { 0 }, [quanta; PRIORITIES])
            }
            Ok(MacControlRepr::Unknown(_)) | Err(_) => {
                return self.drop_seen(pkt, p, DropReason::BadMacControl);
            }
        };
        slot.counters.punted += 1;
        let speed = slot.model.speed_mbps;
        let mut m = mask;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            let bit = 1u8 << q;
            let st = &mut slot.pfc;
            if quanta[q] != 0 {
                st.last_rx_pause[q] = now;
            }
            if st.stormed & bit != 0 {
                // The watchdog holds this queue open until the pauses stop.
                continue;
            }
            if quanta[q] == 0 {
                if st.rx_paused & bit != 0 {
                    st.rx_paused &= !bit;
                    slot.counters.pfc.paused_ns[q] += now.saturating_sub(st.paused_since[q]);
                    slot.queues.set_paused(q, false);
                }
            } else {
                if st.rx_paused & bit == 0 {
                    st.rx_paused |= bit;
                    st.paused_since[q] = now;
                    slot.queues.set_paused(q, true);
                }
                st.paused_until[q] = now + quanta_ns(quanta[q], speed);
            }
        }
    }

    /// Ends the pauses of port `p` that have run out by `now`.
    fn pause_timers(&mut self, p: usize, now: Nanos) {
        let slot = &mut self.ports[p];
        let st = &mut slot.pfc;
        let mut m = st.rx_paused;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            if st.paused_until[q] <= now {
                st.rx_paused &= !(1 << q);
                slot.counters.pfc.paused_ns[q] += st.paused_until[q] - st.paused_since[q];
                slot.queues.set_paused(q, false);
            }
        }
    }

    /// Declares storms on queues of port `p` paused too long while holding
    /// packets, here or in other workers' lanes (`lanes`: the queues they
    /// hold packets in), and restores stormed queues whose pauses have
    /// stopped.
    fn watchdog(&mut self, p: usize, wd: &WatchdogModel, now: Nanos, lanes: u8) {
        let nonempty = self.ports[p].queues.nonempty_mask() | lanes;
        let st = self.ports[p].pfc;
        let mut m = st.rx_paused & nonempty & !st.stormed;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            if now.saturating_sub(st.paused_since[q]) >= wd.detect_ns() {
                self.storm(p, q, now);
            }
        }
        // Restored once the pauses have stopped long enough (auto-restore)
        // or, with a fixed restore, that long after the storm whether or
        // not they still arrive.
        let mut m = st.stormed;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            if st.restore_at(q, wd).is_some_and(|t| now >= t) {
                let slot = &mut self.ports[p];
                slot.pfc.stormed &= !(1 << q);
                slot.counters.pfc.watchdog_restores[q] += 1;
                tracing::info!(interface = %slot.model.name, priority = q, "PFC watchdog: queue restored");
            }
        }
    }

    /// Puts queue `q` of port `p` in the stormed state: resumed, flushed,
    /// and no longer sending PFC for its priority.
    fn storm(&mut self, p: usize, q: usize, now: Nanos) {
        self.busy.mark(p);
        let slot = &mut self.ports[p];
        let bit = 1u8 << q;
        slot.pfc.stormed |= bit;
        slot.pfc.stormed_at[q] = now;
        slot.pfc.rx_paused &= !bit;
        slot.counters.pfc.paused_ns[q] += now.saturating_sub(slot.pfc.paused_since[q]);
        slot.queues.set_paused(q, false);
        slot.counters.pfc.watchdog_storms[q] += 1;
        let n = self.flush_stormed(p, q);
        let slot = &self.ports[p];
        tracing::warn!(interface = %slot.model.name, priority = q, flushed = n, "PFC watchdog: storm, queue flushed");
        if slot.pfc.tx_xoff & bit != 0 {
            self.send_pfc(p, q, false, now);
        }
    }

    /// Drops what queue `q` of port `p` holds, as the watchdog does with a
    /// stormed queue; returns how many packets.
    pub(super) fn flush_stormed(&mut self, p: usize, q: usize) -> usize {
        let acct = Arc::clone(&self.ingress_acct);
        let worker = self.worker;
        let slot = &mut self.ports[p];
        let counters = &mut slot.counters;
        let n = slot.queues.flush(q, &mut counters.queues, |pkt| {
            acct.release(worker, IngressCharge::of(&pkt))
        });
        counters.drops[DropReason::PfcWatchdog as usize] += n as u64;
        n
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests: a failed unwrap is a failed test
mod tests {
    use crate::clock::Nanos;
    use crate::model::pfc::WatchdogModel;
    use crate::model::{InterfaceModel, SwitchModel};
    use crate::packet::Pool;
    use crate::pipeline::Switch;
    use crate::wire::mac_control::{MacControlRepr, FRAME_LEN};
    use crate::wire::MacAddr;

    const Q: usize = 3;
    const MS: Nanos = 1_000_000;

    /// One port, PFC on priority 3, the watchdog polling every 1 ms,
    /// storming after 1 ms, auto-restore after 2 ms without pauses and
    /// fixed restore after `fixed` intervals.
    fn switch(fixed: u32) -> (Switch, Pool, WatchdogModel) {
        let mut port = InterfaceModel::new("Ethernet1/1", MacAddr([2, 0, 0, 0, 1, 1]));
        port.speed_mbps = Some(10_000);
        port.pfc.enabled_priorities = 1 << Q;
        let wd = WatchdogModel {
            interval_ns: MS,
            shutdown_multiplier: 1,
            restore_multiplier: 2,
            fixed_restore_multiplier: fixed,
            forward_ingress: false,
        };
        port.pfc.watchdog = Some(wd);
        let model = SwitchModel {
            interfaces: vec![port],
            ..SwitchModel::default()
        };
        let pool = Pool::new(8);
        let (sw, _) = Switch::new(&model, vec![None], pool.clone());
        (sw, pool, wd)
    }

    /// The peer pauses priority 3 for the longest time at `now`.
    fn pause(sw: &mut Switch, pool: &Pool, now: Nanos) {
        let mut quanta = [0u16; 8];
        quanta[Q] = 0xFFFF;
        let mut f = [0u8; FRAME_LEN];
        MacControlRepr::Pfc {
            enable: 1 << Q,
            quanta,
        }
        .emit_frame(MacAddr([2, 0, 0, 0, 9, 9]), &mut f);
        let mut pkt = pool.alloc_from(&f).unwrap();
        pkt.meta.l3_offset = 14;
        sw.mac_control(&pkt, 0, now);
    }

    /// A peer that never stops pausing: every 0.25 ms a pause arrives, and
    /// the watchdog polls every ms with queue 3 holding traffic. Returns
    /// when the queue was restored, if it was within 30 ms.
    fn storm_that_keeps_pausing(fixed: u32) -> (Option<Nanos>, Switch) {
        let (mut sw, pool, wd) = switch(fixed);
        let mut restored = None;
        for step in 0..=120u64 {
            let now = step * MS / 4;
            pause(&mut sw, &pool, now);
            if now.is_multiple_of(MS) {
                let before = sw.ports[0].pfc.stormed;
                let lanes = 1 << Q; // traffic waiting for the queue
                sw.watchdog(0, &wd, now, lanes);
                let after = sw.ports[0].pfc.stormed;
                if before & !after & (1 << Q) != 0 && restored.is_none() {
                    restored = Some(now);
                }
            }
        }
        (restored, sw)
    }

    #[test]
    fn fixed_restore_restores_a_storm_that_keeps_pausing() {
        // Stormed at 1 ms (paused since 0, detection 1 ms); restored at
        // 1 ms + 5 × 1 ms though pauses never stopped.
        let (restored, sw) = storm_that_keeps_pausing(5);
        assert_eq!(restored, Some(6 * MS));
        let c = &sw.ports[0].counters.pfc;
        assert!(c.watchdog_restores[Q] >= 1);
        // Paused again by the next pause frame, stormed again, restored
        // again: the cycle repeats while the peer keeps pausing.
        assert!(c.watchdog_storms[Q] >= 2, "{:?}", c.watchdog_storms);
    }

    #[test]
    fn without_fixed_restore_a_storm_that_keeps_pausing_stays_shut() {
        let (restored, sw) = storm_that_keeps_pausing(0);
        assert_eq!(restored, None, "auto-restore waits for the pauses to stop");
        assert_eq!(sw.ports[0].pfc.stormed, 1 << Q);
        assert_eq!(sw.ports[0].counters.pfc.watchdog_storms[Q], 1);
        assert_eq!(sw.ports[0].counters.pfc.watchdog_restores[Q], 0);
    }

    #[test]
    fn the_snapshot_carries_the_pause_state_in_force() {
        let (mut sw, pool, _) = switch(0);
        let pfc = |sw: &Switch| sw.stats().interfaces["Ethernet1/1"].pfc.clone();
        assert_eq!((pfc(&sw).rx_paused, pfc(&sw).tx_xoff), (0, 0));
        pause(&mut sw, &pool, 0);
        assert_eq!(pfc(&sw).rx_paused, 1 << Q);
        assert_eq!(pfc(&sw).rx_pause[Q], 1);
        // The pause runs out (65535 quanta at 10 Gb/s is 3.36 ms): the
        // frame count stays, the state goes.
        sw.pfc_timers(0, 4 * MS, None);
        assert_eq!(pfc(&sw).rx_paused, 0);
        assert_eq!(pfc(&sw).rx_pause[Q], 1);
        sw.ports[0].pfc.tx_xoff = 1 << Q;
        assert_eq!(pfc(&sw).tx_xoff, 1 << Q);
    }

    #[test]
    fn the_next_watchdog_deadline_includes_the_fixed_restore() {
        let (mut sw, pool, wd) = switch(5);
        pause(&mut sw, &pool, 0);
        sw.watchdog(0, &wd, MS, 1 << Q);
        assert_eq!(sw.ports[0].pfc.stormed, 1 << Q);
        // Pauses keep coming: auto-restore moves out to 5 + 2 ms, the fixed
        // restore stays 5 ms after the storm.
        pause(&mut sw, &pool, 5 * MS);
        let st = sw.ports[0].pfc;
        assert_eq!(st.next_watchdog(0, &wd), Some(6 * MS), "1 ms + 5 ms");
        let no_fixed = WatchdogModel {
            fixed_restore_multiplier: 0,
            ..wd
        };
        assert_eq!(st.next_watchdog(0, &no_fixed), Some(7 * MS), "5 ms + 2 ms");
        let later = WatchdogModel {
            fixed_restore_multiplier: 9,
            ..wd
        };
        assert_eq!(st.next_watchdog(0, &later), Some(7 * MS), "auto first");
        let neither = WatchdogModel {
            restore_multiplier: 0,
            fixed_restore_multiplier: 0,
            ..wd
        };
        assert_eq!(st.next_watchdog(0, &neither), None);
    }
}
