//! DLB port quality: each worker samples the rate estimators of its own
//! ports and publishes a load and a quality band per port for every
//! worker's member choice.

use super::Switch;

impl Switch {
    /// Samples the rate estimators of this worker's ports, `intervals`
    /// sampling intervals after the last sample, and publishes their quality.
    pub(super) fn sample_quality(&mut self, intervals: u64) {
        let Some(dlb) = self.balancer.dlb_model() else {
            return;
        };
        let board = self.balancer.quality();
        for (i, (slot, dre)) in self.ports.iter().zip(self.dre.iter_mut()).enumerate() {
            if !slot.owned {
                continue;
            }
            let (load, band) = dre.sample(
                dlb,
                intervals,
                slot.counters.tx_bytes,
                slot.queues.total_bytes(),
                slot.model.speed_mbps,
            );
            board.publish(i, load, band);
        }
    }
}
