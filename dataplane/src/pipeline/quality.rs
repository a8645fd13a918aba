//! DLB port quality: each worker samples the rate estimators of its own
//! ports and publishes a load and a quality band per port for every
//! worker's member choice.

use super::Switch;
use crate::clock::Nanos;

impl Switch {
    /// Samples port quality when a DLB sampling interval has passed since
    /// the last sample (several intervals decay the estimators as many
    /// times).
    pub(super) fn sample_quality_if_due(&mut self, now: Nanos) {
        let Some(dlb) = self.balancer.dlb_model() else {
            return;
        };
        let interval = dlb.sampling_interval_ns.max(1);
        let elapsed = now.saturating_sub(self.last_dre_sample);
        if elapsed >= interval {
            self.last_dre_sample = now - elapsed % interval;
            self.sample_quality(elapsed / interval);
        }
    }

    /// Samples the rate estimators of this worker's ports, `intervals`
    /// sampling intervals after the last sample, and publishes their quality.
    fn sample_quality(&mut self, intervals: u64) {
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
