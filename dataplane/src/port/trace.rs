//! In-memory traces: a timestamped frame list played into a port, and a
//! capture of what a port transmitted.
//!
//! The demo and the tests replay synthetic traffic through the same virtual
//! time path as a pcap file, without touching the file system.

use std::sync::{Arc, Mutex};

use super::{IoCounters, Port};
use crate::clock::Nanos;
use crate::packet::{Burst, Pool, BURST_SIZE, MAX_FRAME};

/// A transmitted frame and its departure time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// Departure time (virtual or real).
    pub time: Nanos,
    /// The frame's bytes.
    pub frame: Vec<u8>,
}

/// A shared list of captured frames, readable while the port runs.
pub type Capture = Arc<Mutex<Vec<Captured>>>;

/// A port that plays a timestamped trace and records what it transmits.
pub struct TracePort {
    name: String,
    frames: std::vec::IntoIter<(Nanos, Vec<u8>)>,
    next: Option<(Nanos, Vec<u8>)>,
    capture: Option<Capture>,
    counters: IoCounters,
}

impl TracePort {
    /// A port that delivers `frames` (sorted by time here) as virtual time
    /// reaches each timestamp. Transmitted frames are discarded unless
    /// [`capture`](Self::capture) is called.
    pub fn new(name: &str, mut frames: Vec<(Nanos, Vec<u8>)>) -> Self {
        frames.sort_by_key(|(t, _)| *t);
        let mut frames = frames.into_iter();
        let next = frames.next();
        TracePort {
            name: name.to_string(),
            frames,
            next,
            capture: None,
            counters: IoCounters::default(),
        }
    }

    /// Records transmitted frames; returns the shared list.
    pub fn capture(&mut self) -> Capture {
        let c = Capture::default();
        self.capture = Some(Arc::clone(&c));
        c
    }
}

impl Port for TracePort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            match &self.next {
                Some((t, _)) if *t <= now => {}
                _ => break,
            }
            let Some((t, frame)) = self.next.take() else {
                break;
            };
            self.next = self.frames.next();
            if frame.len() > MAX_FRAME {
                self.counters.rx_dropped += 1;
                continue;
            }
            match pool.alloc_from(&frame) {
                Some(mut p) => {
                    p.timestamp = t;
                    burst.push(p);
                    n += 1;
                }
                None => self.counters.rx_dropped += 1,
            }
        }
        self.counters.rx_frames += n as u64;
        n
    }

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> usize {
        let n = burst.len();
        if let Some(c) = &self.capture {
            if let Ok(mut c) = c.lock() {
                c.extend(burst.iter().map(|p| Captured {
                    time: now,
                    frame: p.data().to_vec(),
                }));
            }
        }
        burst.clear();
        self.counters.tx_frames += n as u64;
        n
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("trace {}", self.name)
    }

    fn exhausted(&self) -> bool {
        self.next.is_none()
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        self.next.as_ref().map(|(t, _)| *t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_arrive_when_time_reaches_them() {
        let pool = Pool::new(8);
        let mut p = TracePort::new("t", vec![(20, vec![2; 60]), (10, vec![1; 60])]);
        let cap = p.capture();
        let mut b = Burst::new();
        assert_eq!(p.next_rx_time(), Some(10));
        assert_eq!(p.rx_burst(&pool, &mut b, 5), 0);
        assert_eq!(p.rx_burst(&pool, &mut b, 15), 1);
        assert_eq!(b[0].timestamp, 10);
        assert!(!p.exhausted());
        assert_eq!(p.rx_burst(&pool, &mut b, 25), 1);
        assert!(p.exhausted());
        assert_eq!(p.tx_burst(&mut b, 30), 2);
        let cap = cap.lock().unwrap();
        assert_eq!(cap.len(), 2);
        assert_eq!(
            cap[1],
            Captured {
                time: 30,
                frame: vec![2; 60]
            }
        );
    }
}
