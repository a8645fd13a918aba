//! Keeping transmit lanes in step with their port's owner (see
//! [`crate::lanes`]): the owner publishes pause and storm state, a lane
//! follows it and reports which of its queues hold packets.

use super::Switch;
use crate::lanes::LaneBoard;
use crate::queue::NUM_QUEUES;

impl Switch {
    /// Publishes the pause and storm state of this worker's port `p` when
    /// it changed, for the workers sending on it through lanes.
    pub(super) fn tell_lanes(&mut self, p: usize, board: &LaneBoard) {
        let slot = &mut self.ports[p];
        let state = (slot.queues.paused_mask(), slot.pfc.stormed);
        if state != slot.lane_pfc {
            slot.lane_pfc = state;
            board.set_owner_state(p, state.0, state.1);
        }
    }

    /// Publishes which of this worker's lane queues for port `p` hold
    /// packets when that changed, for the owner's watchdog.
    pub(super) fn tell_owner(&mut self, p: usize, board: &LaneBoard) {
        let slot = &mut self.ports[p];
        let m = slot.queues.nonempty_mask();
        if m != slot.lane_nonempty {
            slot.lane_nonempty = m;
            board.set_nonempty(self.worker, p, m);
        }
    }

    /// Applies the owner's pause and storm state of port `p` to this
    /// worker's lane queues: pauses and resumes as the owner did, and
    /// flushes a queue the owner's watchdog declared stormed.
    pub(super) fn follow_owner(&mut self, p: usize, board: &LaneBoard) {
        let (paused, stormed) = board.owner_state(p);
        let slot = &mut self.ports[p];
        if (paused, stormed) == slot.lane_pfc {
            return;
        }
        let newly_stormed = stormed & !slot.lane_pfc.1;
        slot.lane_pfc = (paused, stormed);
        slot.pfc.stormed = stormed;
        for q in 0..NUM_QUEUES {
            slot.queues.set_paused(q, paused & (1 << q) != 0);
        }
        let mut m = newly_stormed;
        while m != 0 {
            let q = m.trailing_zeros() as usize;
            m &= m - 1;
            self.flush_stormed(p, q);
        }
    }
}
