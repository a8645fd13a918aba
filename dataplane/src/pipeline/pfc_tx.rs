//! PFC generation, per port: XOFF when an ingress priority group crosses
//! xOFF (from [`admit`](super::admit)), refreshed at half the pause time
//! while the group stays above xON, XON once it falls below.

use super::Switch;
use crate::clock::Nanos;
use crate::counters::DropReason;
use crate::model::pfc::PRIORITIES;
use crate::pfc::quanta_ns;
use crate::wire::mac_control::{self, MacControlRepr};

impl Switch {
    /// Sends XOFF (the port's quanta) or XON (quanta 0) for priority `pg`
    /// from port `p`, ahead of its queues, and updates the XOFF state.
    pub(super) fn send_pfc(&mut self, p: usize, pg: usize, xoff: bool, now: Nanos) {
        let Some(mut pkt) = self.pool.alloc() else {
            // Not sent; the next packet past xOFF tries again.
            self.count_drop(p, DropReason::NoBuffer);
            return;
        };
        self.busy.mark(p);
        let slot = &mut self.ports[p];
        let quanta = if xoff { slot.model.pfc.quanta } else { 0 };
        let mut q = [0u16; PRIORITIES];
        q[pg] = quanta;
        let repr = MacControlRepr::Pfc {
            enable: 1 << pg,
            quanta: q,
        };
        let mut frame = [0u8; mac_control::FRAME_LEN];
        repr.emit_frame(slot.model.mac, &mut frame);
        pkt.reset();
        pkt.set_len(mac_control::FRAME_LEN);
        pkt.data_mut().copy_from_slice(&frame);
        if let Err(pkt) = slot.ctrl_tx.try_push(pkt) {
            return self.drop_packet(pkt.element(), p, DropReason::TxError);
        }
        let bit = 1u8 << pg;
        if xoff {
            slot.counters.pfc.tx_pause[pg] += 1;
            slot.pfc.tx_xoff |= bit;
            // Refresh at half the pause time, so the peer never resumes early.
            let half = (quanta_ns(quanta, slot.model.speed_mbps) / 2).max(1);
            slot.pfc.refresh_at[pg] = now + half;
        } else {
            slot.counters.pfc.tx_resume[pg] += 1;
            slot.pfc.tx_xoff &= !bit;
        }
    }

    /// For each priority port `p` has paused its peer on: XON once the
    /// group is below xON, else XOFF again when the refresh is due. Returns
    /// the frames sent.
    pub(super) fn pfc_release(&mut self, p: usize, now: Nanos) -> usize {
        let mut sent = 0;
        let mut m = self.ports[p].pfc.tx_xoff;
        while m != 0 {
            let pg = m.trailing_zeros() as usize;
            m &= m - 1;
            let occ = self.ingress_acct.get(p, pg);
            let slot = &self.ports[p];
            if occ == 0 || occ < slot.model.pfc.pg[pg].xon_bytes {
                self.send_pfc(p, pg, false, now);
                sent += 1;
            } else if slot.pfc.refresh_at[pg] <= now {
                self.send_pfc(p, pg, true, now);
                sent += 1;
            }
        }
        sent
    }
}
