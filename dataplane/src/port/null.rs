//! A traffic source and sink in memory, like DPDK's `net_null,copy=1`.
//!
//! The receive side hands out full bursts forever, each frame copied into a
//! pool buffer from a fixed list of templates; the transmit side counts and
//! frees. Nothing else runs between the two, so a benchmark over null ports
//! times exactly what DPDK's testpmd times over `net_null`: buffer
//! allocation, one copy in, the pipeline, and the free on transmit.

use super::{IoCounters, Port, TxDone};
use crate::clock::Nanos;
use crate::packet::{free_burst, Burst, Pool, BURST_SIZE, MAX_FRAME};

/// An endless source of copies of `frames` and a sink for everything sent.
pub struct NullPort {
    name: String,
    frames: Vec<Vec<u8>>,
    next: usize,
    counters: IoCounters,
    tx_bytes: u64,
}

impl NullPort {
    /// A port that receives `frames` in a loop (nothing when `frames` is
    /// empty); frames longer than [`MAX_FRAME`] are left out.
    pub fn new(name: &str, mut frames: Vec<Vec<u8>>) -> Self {
        frames.retain(|f| f.len() <= MAX_FRAME);
        NullPort {
            name: name.to_string(),
            frames,
            next: 0,
            counters: IoCounters::default(),
            tx_bytes: 0,
        }
    }

    /// Bytes of every frame transmitted, for checking a run moved real frames.
    pub fn tx_bytes(&self) -> u64 {
        self.tx_bytes
    }
}

impl Port for NullPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        if self.frames.is_empty() {
            return 0;
        }
        let start = burst.len();
        let n = pool.alloc_burst(burst, BURST_SIZE);
        if n < BURST_SIZE - start {
            self.counters.rx_dropped += 1;
            self.counters.rx_no_buffer += (BURST_SIZE - start - n) as u64;
        }
        for p in &mut burst[start..] {
            let f = &self.frames[self.next];
            self.next += 1;
            if self.next == self.frames.len() {
                self.next = 0;
            }
            // Templates are at most MAX_FRAME long (see `new`), so they fit.
            p.set_frame(f);
            p.timestamp = now;
        }
        self.counters.rx_frames += n as u64;
        n
    }

    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> TxDone {
        let n = burst.len();
        self.tx_bytes += burst.iter().map(|p| p.len() as u64).sum::<u64>();
        free_burst(burst);
        self.counters.tx_frames += n as u64;
        TxDone::sent(n)
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("null {}", self.name)
    }

    fn tx_lane(&mut self) -> Option<Box<dyn Port>> {
        Some(Box::new(NullPort::new(&self.name, Vec::new())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn receives_the_templates_in_a_loop_and_frees_what_it_sends() {
        let pool = Pool::new(64);
        let mut port = NullPort::new("n", vec![vec![1; 60], vec![2; 70], vec![3; 80]]);
        let mut burst = Burst::new();
        assert_eq!(port.rx_burst(&pool, &mut burst, 5), BURST_SIZE);
        let lens: Vec<usize> = burst.iter().take(4).map(|p| p.len()).collect();
        assert_eq!(lens, vec![60, 70, 80, 60]);
        assert_eq!(burst[1].data()[0], 2);
        assert!(burst.iter().all(|p| p.timestamp == 5));
        assert_eq!(pool.available(), 64 - BURST_SIZE);
        assert_eq!(port.tx_burst(&mut burst, 0).sent, BURST_SIZE);
        assert!(burst.is_empty());
        assert_eq!(pool.available(), 64);
        let c = port.io_counters();
        assert_eq!((c.rx_frames, c.tx_frames), (32, 32));
        assert_eq!(port.tx_bytes(), 10 * (60 + 70 + 80) + 60 + 70);
    }

    #[test]
    fn an_empty_pool_is_counted_not_fatal() {
        let pool = Pool::new(4);
        let mut port = NullPort::new("n", vec![vec![0; 64]]);
        let mut burst = Burst::new();
        assert_eq!(port.rx_burst(&pool, &mut burst, 0), 4);
        assert_eq!(port.io_counters().rx_dropped, 1);
        assert_eq!(
            NullPort::new("e", Vec::new()).rx_burst(&pool, &mut burst, 0),
            0
        );
        let mut huge = NullPort::new("h", vec![vec![0; MAX_FRAME + 1]]);
        assert_eq!(huge.rx_burst(&pool, &mut burst, 0), 0);
    }
}
