//! PFC reception, per port: received PFC/PAUSE frames pause egress queues
//! for their quanta, the timers resume them, and the watchdog declares a
//! queue paused too long with traffic waiting stormed (flushed, no longer
//! paused, its priority admitted as lossy) and restores it later.

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
                return slot.counters.drop(DropReason::BadMacControl);
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
        if let Some(restore) = wd.restore_ns() {
            let mut m = st.stormed;
            while m != 0 {
                let q = m.trailing_zeros() as usize;
                m &= m - 1;
                if now.saturating_sub(st.last_rx_pause[q]) >= restore {
                    let slot = &mut self.ports[p];
                    slot.pfc.stormed &= !(1 << q);
                    slot.counters.pfc.watchdog_restores[q] += 1;
                    tracing::info!(interface = %slot.model.name, priority = q, "PFC watchdog: queue restored");
                }
            }
        }
    }

    /// Puts queue `q` of port `p` in the stormed state: resumed, flushed,
    /// and no longer sending PFC for its priority.
    fn storm(&mut self, p: usize, q: usize, now: Nanos) {
        let slot = &mut self.ports[p];
        let bit = 1u8 << q;
        slot.pfc.stormed |= bit;
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
