//! In-memory traces: a timestamped frame list played into a port, and a
//! capture of what a port transmitted.
//!
//! The demo and the tests replay synthetic traffic through the same virtual
//! time path as a pcap file, without touching the file system.

use std::sync::{Arc, Mutex};

use super::upstream::PfcUpstream;
use super::{IoCounters, Port, TxDone};
use crate::clock::Nanos;
use crate::packet::{free_burst, Burst, Pool, BURST_SIZE, MAX_FRAME};

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
    upstream: Option<PfcUpstream>,
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
            upstream: None,
        }
    }

    /// Makes the trace a PFC-honouring sender (closed loop): priorities the
    /// switch pauses on this port are held back and released on resume.
    pub fn closed_loop(mut self, upstream: PfcUpstream) -> Self {
        self.upstream = Some(upstream);
        self.absorb();
        self
    }

    /// Moves paused frames at the head of the trace aside, so frames of
    /// other priorities behind them can pass.
    fn absorb(&mut self) {
        let Some(up) = self.upstream.as_mut() else {
            return;
        };
        while let Some((t, f)) = &self.next {
            if !up.should_hold(*t, f) {
                break;
            }
            if let Some((t, f)) = self.next.take() {
                up.hold(t, f);
            }
            self.next = self.frames.next();
        }
    }

    /// When the trace's head frame may leave (its time, later when paused).
    fn head_time(&self) -> Option<Nanos> {
        let (t, f) = self.next.as_ref()?;
        Some(match &self.upstream {
            Some(up) => up.release_time(*t, f),
            None => *t,
        })
    }

    /// Takes the next frame due at or before `now`: a released held frame
    /// or the trace's head, whichever leaves first.
    fn take_due(&mut self, now: Nanos) -> Option<(Nanos, Vec<u8>)> {
        let head = self.head_time().filter(|t| *t <= now);
        if let Some(p) = self.upstream.as_ref().and_then(|u| u.due_before(head, now)) {
            return self.upstream.as_mut().and_then(|u| u.release(p));
        }
        let h = head?;
        let (_, f) = self.next.take()?;
        self.next = self.frames.next();
        self.absorb();
        Some((h, f))
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
            let Some((t, frame)) = self.take_due(now) else {
                break;
            };
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

    fn tx_burst(&mut self, burst: &mut Burst, now: Nanos) -> TxDone {
        let n = burst.len();
        if let Some(up) = self.upstream.as_mut() {
            for p in burst.iter() {
                up.on_tx(p.data(), now);
            }
            self.absorb();
        }
        if let Some(c) = &self.capture {
            if let Ok(mut c) = c.lock() {
                c.extend(burst.iter().map(|p| Captured {
                    time: p.timestamp,
                    frame: p.data().to_vec(),
                }));
            }
        }
        free_burst(burst);
        self.counters.tx_frames += n as u64;
        TxDone::sent(n)
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("trace {}", self.name)
    }

    fn exhausted(&self) -> bool {
        self.next.is_none() && self.upstream.as_ref().is_none_or(|u| u.held_now() == 0)
    }

    fn next_rx_time(&self) -> Option<Nanos> {
        let held = self
            .upstream
            .as_ref()
            .and_then(PfcUpstream::next_release)
            .map(|(t, _)| t);
        held.into_iter().chain(self.head_time()).min()
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
        // Sent frames are recorded at their departure time.
        b[1].timestamp = 30;
        assert_eq!(p.tx_burst(&mut b, 35).sent, 2);
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

    fn ipv4(dscp: u8, seq: u8) -> Vec<u8> {
        let mut f = vec![seq; 60];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[15] = dscp << 2;
        f
    }

    fn pfc(quanta: u16) -> Vec<u8> {
        let mut q = [0u16; 8];
        q[3] = quanta;
        let mut f = [0u8; crate::wire::mac_control::FRAME_LEN];
        crate::wire::mac_control::MacControlRepr::Pfc {
            enable: 1 << 3,
            quanta: q,
        }
        .emit_frame(crate::wire::MacAddr([2, 0, 0, 0, 0, 1]), &mut f);
        f.to_vec()
    }

    #[test]
    fn closed_loop_holds_a_paused_priority_and_lets_others_pass() {
        let mut dscp = [0u8; 64];
        dscp[24] = 3;
        let trace = vec![
            (100, ipv4(24, 1)),
            (200, ipv4(24, 2)),
            (300, ipv4(0, 3)),
            (400, ipv4(24, 4)),
        ];
        let mut p = TracePort::new("t", trace).closed_loop(PfcUpstream::new(None, dscp, None));
        let pool = Pool::new(8);
        let mut b = Burst::new();
        assert_eq!(p.rx_burst(&pool, &mut b, 100), 1);
        // The switch pauses priority 3 at 150 for 1000 quanta (5120 ns at 100G).
        let mut tx = Burst::new();
        tx.push(pool.alloc_from(&pfc(1000)).unwrap());
        p.tx_burst(&mut tx, 150);
        let until = 150 + 5_120;
        assert_eq!(p.next_rx_time(), Some(300));
        assert_eq!(p.rx_burst(&pool, &mut b, 1_000), 1);
        assert_eq!((b[1].timestamp, b[1].data()[20]), (300, 3));
        assert_eq!(p.next_rx_time(), Some(until));
        assert!(!p.exhausted());
        assert_eq!(p.rx_burst(&pool, &mut b, until - 1), 0);
        assert_eq!(p.rx_burst(&pool, &mut b, until), 1);
        assert_eq!((b[2].timestamp, b[2].data()[20]), (until, 2));
        // Held frames leave back to back at line rate, not all at once: 84
        // bytes on the wire at 100 Gb/s take 6.72 ns.
        assert_eq!(p.next_rx_time(), Some(until + 7));
        assert_eq!(p.rx_burst(&pool, &mut b, until + 7), 1);
        assert_eq!((b[3].timestamp, b[3].data()[20]), (until + 7, 4));
        assert!(p.exhausted());
    }

    #[test]
    fn resume_releases_held_frames_at_once() {
        let mut dscp = [0u8; 64];
        dscp[24] = 3;
        let pool = Pool::new(8);
        let mut p = TracePort::new("t", vec![(500, ipv4(24, 1))])
            .closed_loop(PfcUpstream::new(None, dscp, None));
        let mut tx = Burst::new();
        tx.push(pool.alloc_from(&pfc(0xffff)).unwrap());
        p.tx_burst(&mut tx, 400);
        assert_eq!(p.next_rx_time(), Some(400 + 335_540));
        tx.push(pool.alloc_from(&pfc(0)).unwrap());
        p.tx_burst(&mut tx, 700);
        assert_eq!(p.next_rx_time(), Some(700));
        let mut b = Burst::new();
        assert_eq!(p.rx_burst(&pool, &mut b, 700), 1);
        assert_eq!(b[0].timestamp, 700);
    }
}
