//! Admission, per packet: whether the buffer takes it. Lossless packets
//! are counted into their ingress priority group (XOFF at xOFF, an
//! `ingress_overflow` drop past the headroom); every packet is then offered
//! to its egress queue, where the watchdog's storm state, WRED/ECN and the
//! queue and port limits decide ([`EgressQueues::offer`](crate::queue::EgressQueues::offer)).

use super::Switch;
use crate::counters::DropReason;
use crate::meta::QOS_GROUP_CONTROL;
use crate::packet::PacketBuf;
use crate::pfc::IngressCharge;
use crate::queue::NUM_QUEUES;

impl Switch {
    /// Counts a lossless packet into its ingress priority group, sending
    /// XOFF when that crosses xOFF; false (and an `ingress_overflow` drop)
    /// when the group's headroom is used up. Runs on the ingress port's worker.
    /// Inlined at both callers (routing and bridging), as it was when it
    /// had one: 15 instructions a packet.
    #[inline(always)]
    pub(super) fn admit_lossless(&mut self, pkt: &PacketBuf) -> bool {
        let in_port = pkt.in_port as usize;
        let pg = usize::from(pkt.meta.pfc_priority);
        let len = pkt.len() as u64;
        let Some(slot) = self.ports.get_mut(in_port) else {
            return false;
        };
        // The ingress total has one writer: the port's own worker.
        debug_assert!(slot.owned, "admitting for a port of another worker");
        let th = slot.model.pfc.pg[pg];
        let Some(held) = self.ingress_acct.admit(
            self.worker,
            in_port,
            pg,
            len,
            &th,
            &mut slot.released_elsewhere,
        ) else {
            self.drop_seen(pkt, in_port, DropReason::IngressOverflow);
            return false;
        };
        let peak = &mut slot.counters.pfc.ingress_peak_bytes[pg];
        *peak = (*peak).max(held);
        if held >= th.xoff_bytes && slot.pfc.tx_xoff & (1 << pg) == 0 {
            self.send_pfc(in_port, pg, true, self.now);
        }
        true
    }

    /// Offers a packet to its egress queue on this worker: frames the switch
    /// originated go to the port's control path; a queue the watchdog
    /// stormed drops; otherwise the queue admits it or drops it with a
    /// reason (WRED, tail), and a dropped lossless packet gives its ingress
    /// bytes back.
    pub(super) fn admit_egress(&mut self, pkt: PacketBuf) {
        let out = pkt.meta.out_port as usize;
        self.busy.mark(out);
        let slot = &mut self.ports[out];
        if pkt.meta.qos_group == QOS_GROUP_CONTROL {
            if let Err(pkt) = slot.ctrl_tx.try_push(pkt) {
                self.drop_packet(pkt.element(), out, DropReason::TxError);
            }
            return;
        }
        let q = pkt.meta.qos_group as usize;
        let charge = IngressCharge::of(&pkt);
        if slot.pfc.stormed & (1 << q.min(NUM_QUEUES - 1)) != 0 {
            self.ingress_acct.release(self.worker, charge);
            return self.drop_packet(pkt, out, DropReason::PfcWatchdog);
        }
        let lossless = charge.is_some();
        if let Err((reason, pkt)) =
            slot.queues
                .offer(q, pkt, self.now, &mut slot.counters.queues, lossless)
        {
            self.ingress_acct.release(self.worker, charge);
            // The queue counted its own drop; the drop reason belongs to the egress port.
            self.drop_packet(pkt, out, reason);
        }
    }
}
