//! Transmit lanes: a worker sends on another worker's port itself.
//!
//! Every port belongs to one worker, which receives on it and runs its
//! egress queues. A packet routed to another worker's port normally crosses
//! to that worker (see [`crate::pipeline::WorkerLinks`]), so that one
//! scheduler, one shaper and one set of queue depths decide what leaves the
//! port, as on a switch. That costs the cache lines the packet occupies
//! moving between cores, which on a virtual machine can take as long as the
//! rest of the pipeline.
//!
//! A port without a line rate (no `speed`) has no wire to share out: what
//! its queues hold only waits for the backend. On such a port each worker
//! may instead keep egress queues of its own and transmit through a second
//! handle on the same link (a *lane*), as a NIC gives each core its own
//! transmit queue. Strict priority and DWRR then order each worker's own
//! packets, and WRED and the tail limit see each worker's share of the
//! queue. What stays the port owner's:
//!
//! - PFC received on the port: the owner's pause state is published here
//!   and every lane pauses and resumes the same queues at its next poll
//!   (a busy worker polls every few microseconds, an idle one in adaptive
//!   mode at least once a millisecond);
//! - the PFC watchdog: the owner decides storms from its own queues and
//!   every lane's (published here) and the lanes flush and drop with it;
//! - receive, PFC generation, timers and link state.
//!
//! Ports in the DLB port list keep a single egress: their quality samples
//! need every byte the port sends.

use std::sync::atomic::{AtomicU16, AtomicU8, Ordering};

use crate::model::SwitchModel;

/// Whether port `i` of `model` may be sent on through lanes: no line rate
/// to share out and not a DLB port.
pub fn eligible(model: &SwitchModel, i: usize) -> bool {
    let Some(ifc) = model.interfaces.get(i) else {
        return false;
    };
    let dlb_port = model
        .load_balance
        .dlb
        .as_ref()
        .is_some_and(|d| d.ports.iter().any(|p| usize::from(*p) == i));
    ifc.speed_mbps.is_none() && !dlb_port
}

/// Per-port masks one worker writes, on cache lines of their own.
#[repr(align(64))]
struct Masks([AtomicU8; 64]);

/// State the workers sharing ports through lanes tell each other. The
/// owner writes a port's pause and storm bits when they change and lanes
/// read them once a poll; lanes write which of their queues hold packets
/// when that changes, and the owner reads it only while a queue is paused.
pub struct LaneBoard {
    /// Per port: paused queues (low byte) and stormed queues (high byte).
    owner: Box<[AtomicU16]>,
    /// Per worker, per port: the lane's non-empty queues.
    nonempty: Box<[Box<[Masks]>]>,
}

impl LaneBoard {
    /// A board for `ports` ports and `workers` workers, all clear.
    pub fn new(ports: usize, workers: usize) -> LaneBoard {
        let lines = ports.div_ceil(64).max(1);
        LaneBoard {
            owner: (0..ports).map(|_| AtomicU16::new(0)).collect(),
            nonempty: (0..workers)
                .map(|_| {
                    (0..lines)
                        .map(|_| Masks(std::array::from_fn(|_| AtomicU8::new(0))))
                        .collect()
                })
                .collect(),
        }
    }

    /// Publishes the owner's paused and stormed queues of `port`.
    pub fn set_owner_state(&self, port: usize, paused: u8, stormed: u8) {
        if let Some(s) = self.owner.get(port) {
            s.store(
                u16::from(paused) | u16::from(stormed) << 8,
                Ordering::Release,
            );
        }
    }

    /// The owner's (paused, stormed) queues of `port`.
    pub fn owner_state(&self, port: usize) -> (u8, u8) {
        let v = self
            .owner
            .get(port)
            .map_or(0, |s| s.load(Ordering::Acquire));
        (v as u8, (v >> 8) as u8)
    }

    /// Publishes which queues of `worker`'s lane on `port` hold packets.
    pub fn set_nonempty(&self, worker: usize, port: usize, mask: u8) {
        if let Some(m) = self.mask(worker, port) {
            m.store(mask, Ordering::Relaxed);
        }
    }

    /// The queues of `port` that hold packets in any lane.
    pub fn lanes_nonempty(&self, port: usize) -> u8 {
        (0..self.nonempty.len())
            .filter_map(|w| self.mask(w, port))
            .fold(0, |acc, m| acc | m.load(Ordering::Relaxed))
    }

    fn mask(&self, worker: usize, port: usize) -> Option<&AtomicU8> {
        self.nonempty
            .get(worker)?
            .get(port / 64)
            .map(|line| &line.0[port % 64])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::InterfaceModel;

    #[test]
    fn owner_state_and_lane_masks_round_trip() {
        let board = LaneBoard::new(70, 3);
        board.set_owner_state(65, 0b1000, 0b0100);
        assert_eq!(board.owner_state(65), (0b1000, 0b0100));
        assert_eq!(board.owner_state(64), (0, 0));
        board.set_nonempty(1, 65, 0b0001);
        board.set_nonempty(2, 65, 0b1000);
        board.set_nonempty(2, 3, 0b0010);
        assert_eq!(board.lanes_nonempty(65), 0b1001);
        assert_eq!(board.lanes_nonempty(3), 0b0010);
        board.set_nonempty(2, 65, 0);
        assert_eq!(board.lanes_nonempty(65), 0b0001);
        // Out of range: ignored, reads as clear.
        board.set_owner_state(70, 0xff, 0xff);
        board.set_nonempty(3, 0, 0xff);
        assert_eq!(board.owner_state(70), (0, 0));
    }

    #[test]
    fn only_unshaped_ports_outside_dlb_take_lanes() {
        let ifc = |speed| InterfaceModel {
            speed_mbps: speed,
            ..InterfaceModel::new("Ethernet1/1", crate::wire::MacAddr([2, 0, 0, 0, 0, 1]))
        };
        let mut model = SwitchModel {
            interfaces: vec![ifc(None), ifc(Some(100_000)), ifc(None)],
            ..SwitchModel::default()
        };
        assert!(eligible(&model, 0));
        assert!(!eligible(&model, 1));
        assert!(eligible(&model, 2));
        assert!(!eligible(&model, 3));
        model.load_balance.dlb = Some(crate::model::DlbModel {
            ports: vec![2],
            ..crate::model::DlbModel::default()
        });
        assert!(eligible(&model, 0));
        assert!(!eligible(&model, 2));
    }
}
