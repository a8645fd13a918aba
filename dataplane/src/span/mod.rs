//! Monitor sessions (local SPAN): copies of the frames some ports receive
//! or send, for another port or a pcapng file.
//!
//! A [`SpanSet`] is what the workers consult: per port, a mask of the
//! sessions that copy its received frames and one of those that copy its
//! sent frames, and per session where the copies go. A worker without a set
//! pays one test of an `Option` per receive burst and transmit; with one, a
//! port no session names pays one test of a mask.
//!
//! Copies never wait and never block forwarding: a port destination has a
//! bounded queue of its own (not the QoS queues) that the worker owning the
//! destination port drains each round; a file destination has a bounded
//! [`CaptureRing`] a writer thread drains off the fast path. A copy that
//! finds its queue or ring full, no free buffer, or its destination port
//! down is dropped and counted per session with a [`SpanDrop`] reason.
//! Nothing is allocated, locked or asked of the kernel per copy: port
//! copies take a buffer from the packet pool, file copies one of the ring's
//! own buffers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crossbeam_queue::ArrayQueue;
use serde::{Deserialize, Serialize};

use crate::capture::{CaptureRing, Direction};
use crate::clock::Nanos;
use crate::model::PortId;
use crate::packet::{PacketBuf, Pool, MAX_FRAME};

/// Copies a port destination's queue holds before it drops: a few bursts,
/// so a destination slower than its sources drops copies rather than
/// taking buffers from forwarding.
pub const SPAN_QUEUE: usize = 256;
/// Copies a file destination's ring holds while its writer catches up.
pub const SPAN_RING: usize = 2048;
/// Bytes kept of each copy written to a file: whole frames.
pub const SPAN_SNAPLEN: usize = MAX_FRAME;
/// Most sessions a set holds (NX-OS numbers them 1-18).
pub const MAX_SESSIONS: usize = 32;

/// Why a copy was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpanDrop {
    /// The destination port's SPAN queue or the file's ring was full.
    QueueFull,
    /// The packet pool had no free buffer for the copy.
    NoBuffer,
    /// The destination port was down or refused the copy.
    DestinationDown,
}

impl SpanDrop {
    /// Every reason, in counter order.
    pub const ALL: [SpanDrop; 3] = [
        SpanDrop::QueueFull,
        SpanDrop::NoBuffer,
        SpanDrop::DestinationDown,
    ];

    /// The reason's name in show output and metrics.
    pub fn name(self) -> &'static str {
        match self {
            SpanDrop::QueueFull => "queue_full",
            SpanDrop::NoBuffer => "no_buffer",
            SpanDrop::DestinationDown => "destination_down",
        }
    }
}

/// Where a session's copies go.
pub enum SpanTarget {
    /// Out of port `port`, through `queue`.
    Port {
        /// The destination port.
        port: PortId,
        /// Copies waiting for the port's owner to send them (boxed: the
        /// queue's cache-line padding would make every target that large).
        queue: Box<ArrayQueue<PacketBuf>>,
    },
    /// Into `ring`, for a writer thread.
    File(Arc<CaptureRing>),
}

/// One enabled session and its counters (shared by every worker).
pub struct SpanSession {
    /// The session number, as configured.
    pub id: u8,
    /// Where its copies go.
    pub target: SpanTarget,
    mirrored: AtomicU64,
    dropped: [AtomicU64; 3],
}

/// A session's counters at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SpanCounters {
    /// Copies delivered to the destination's queue or ring.
    pub mirrored: u64,
    /// Copies dropped because the queue or ring was full.
    pub queue_full: u64,
    /// Copies dropped for want of a packet buffer.
    pub no_buffer: u64,
    /// Copies dropped because the destination port was down or refused them.
    pub destination_down: u64,
}

impl SpanSession {
    fn drop_copies(&self, why: SpanDrop, n: u64) {
        self.dropped[why as usize].fetch_add(n, Ordering::Relaxed);
    }

    /// The counters now.
    pub fn counters(&self) -> SpanCounters {
        let d = |w: SpanDrop| self.dropped[w as usize].load(Ordering::Relaxed);
        SpanCounters {
            mirrored: self.mirrored.load(Ordering::Relaxed),
            queue_full: d(SpanDrop::QueueFull),
            no_buffer: d(SpanDrop::NoBuffer),
            destination_down: d(SpanDrop::DestinationDown),
        }
    }
}

/// What a session copies and where to, as the control plane describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionSpec {
    /// The session number.
    pub id: u8,
    /// Ports whose received frames are copied.
    pub rx: Vec<PortId>,
    /// Ports whose sent frames are copied.
    pub tx: Vec<PortId>,
    /// The destination port, or `None` for a file (see [`SpanSet::ring`]).
    pub port: Option<PortId>,
}

/// The enabled sessions of a switch (see the module doc).
pub struct SpanSet {
    rx: Box<[u32]>,
    tx: Box<[u32]>,
    sessions: Box<[SpanSession]>,
}

impl SpanSet {
    /// The set for `ports` ports; sessions past [`MAX_SESSIONS`] and ports
    /// past `ports` are left out. A file session's ring is made here
    /// ([`SPAN_RING`] whole frames, its buffers allocated up front).
    pub fn new(ports: usize, specs: &[SessionSpec]) -> SpanSet {
        let mut rx = vec![0u32; ports];
        let mut tx = vec![0u32; ports];
        let mut sessions = Vec::new();
        for (i, s) in specs.iter().take(MAX_SESSIONS).enumerate() {
            let bit = 1u32 << i;
            for &p in &s.rx {
                if let Some(m) = rx.get_mut(usize::from(p)) {
                    *m |= bit;
                }
            }
            for &p in &s.tx {
                if let Some(m) = tx.get_mut(usize::from(p)) {
                    *m |= bit;
                }
            }
            let target = match s.port {
                Some(port) => SpanTarget::Port {
                    port,
                    queue: Box::new(ArrayQueue::new(SPAN_QUEUE)),
                },
                None => {
                    SpanTarget::File(Arc::new(CaptureRing::preallocated(SPAN_RING, SPAN_SNAPLEN)))
                }
            };
            sessions.push(SpanSession {
                id: s.id,
                target,
                mirrored: AtomicU64::new(0),
                dropped: Default::default(),
            });
        }
        SpanSet {
            rx: rx.into(),
            tx: tx.into(),
            sessions: sessions.into(),
        }
    }

    /// The sessions, in the order they were given.
    pub fn sessions(&self) -> &[SpanSession] {
        &self.sessions
    }

    /// The ring of file session `id`, for its writer.
    pub fn ring(&self, id: u8) -> Option<&Arc<CaptureRing>> {
        self.sessions.iter().find_map(|s| match &s.target {
            SpanTarget::File(r) if s.id == id => Some(r),
            _ => None,
        })
    }

    /// The sessions copying what `port` receives, as a mask of indexes.
    #[inline(always)]
    pub fn rx_mask(&self, port: usize) -> u32 {
        self.rx.get(port).copied().unwrap_or(0)
    }

    /// The sessions copying what `port` sends, as a mask of indexes.
    #[inline(always)]
    pub fn tx_mask(&self, port: usize) -> u32 {
        self.tx.get(port).copied().unwrap_or(0)
    }

    /// Copies `frame`, seen on `port` going `dir`, for every session in
    /// `mask`.
    pub fn mirror(
        &self,
        mut mask: u32,
        port: PortId,
        dir: Direction,
        frame: &[u8],
        now: Nanos,
        pool: &Pool,
    ) {
        while mask != 0 {
            let i = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            let Some(s) = self.sessions.get(i) else {
                continue;
            };
            let delivered = match &s.target {
                SpanTarget::Port { queue, .. } => {
                    if queue.is_full() {
                        Err(SpanDrop::QueueFull)
                    } else {
                        match pool.alloc_from(frame) {
                            None => Err(SpanDrop::NoBuffer),
                            Some(copy) => queue.push(copy).map_err(|_| SpanDrop::QueueFull),
                        }
                    }
                }
                SpanTarget::File(ring) => {
                    if ring.record(port, dir, None, now, frame) {
                        Ok(())
                    } else {
                        Err(SpanDrop::QueueFull)
                    }
                }
            };
            match delivered {
                Ok(()) => {
                    s.mirrored.fetch_add(1, Ordering::Relaxed);
                }
                Err(why) => s.drop_copies(why, 1),
            }
        }
    }

    /// Counts copies of session index `i` its destination port did not take.
    pub(crate) fn count_undelivered(&self, i: usize, why: SpanDrop, n: usize) {
        if let Some(s) = self.sessions.get(i) {
            s.drop_copies(why, n as u64);
        }
    }
}

/// Where the control plane posts the current [`SpanSet`] for the workers,
/// which look at its generation once per round and take the new set when
/// it changed (the lock is taken only then, never per packet).
#[derive(Default)]
pub struct SpanBoard {
    generation: AtomicU64,
    set: Mutex<Option<Arc<SpanSet>>>,
}

impl SpanBoard {
    /// Posts `set` (`None`: no session) for the workers to take.
    pub fn publish(&self, set: Option<Arc<SpanSet>>) {
        match self.set.lock() {
            Ok(mut g) => *g = set,
            Err(p) => *p.into_inner() = set,
        }
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// How many sets were posted.
    #[inline(always)]
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The set posted last.
    pub fn current(&self) -> Option<Arc<SpanSet>> {
        match self.set.lock() {
            Ok(g) => g.clone(),
            Err(p) => p.into_inner().clone(),
        }
    }
}

#[cfg(test)]
mod tests;
