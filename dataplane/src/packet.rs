//! Packet buffers, the pool they come from, and bursts.
//!
//! Every buffer is allocated once, when the [`Pool`] is built, and recycled
//! forever after, so the fast path never touches the allocator. Buffers may
//! cross workers (cross-core hand-off), so the pool's shared free list is a
//! lock-free multi-producer, multi-consumer queue. In front of it each thread
//! keeps a small last-in, first-out cache (as DPDK's per-lcore mempool cache
//! does): a busy worker keeps reusing the same few hot buffers instead of
//! cycling through — and faulting in — the whole pool.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};

use arrayvec::ArrayVec;
use crossbeam_queue::ArrayQueue;

use crate::clock::Nanos;
use crate::meta::Meta;

/// Largest IP MTU railyard forwards (jumbo frames, as on Nexus).
pub const MAX_MTU: usize = 9216;
/// Largest frame on the wire without FCS: MTU + Ethernet header + one 802.1Q tag.
pub const MAX_FRAME: usize = MAX_MTU + 14 + 4;
/// Bytes kept free in front of the frame so a tag can be pushed without a copy.
pub const HEADROOM: usize = 64;
/// Size of every buffer in the pool.
pub const BUF_SIZE: usize = HEADROOM + MAX_FRAME;
/// Packets moved per `rx_burst`/`tx_burst` and per pipeline stage call.
pub const BURST_SIZE: usize = 32;

/// A burst of packets, the unit every stage works on.
pub type Burst = ArrayVec<Packet, BURST_SIZE>;

struct PoolShared {
    free: ArrayQueue<Box<[u8]>>,
    capacity: usize,
    in_use: AtomicUsize,
    exhausted: AtomicU64,
    /// Most buffers one thread's cache may hold.
    cache_max: usize,
}

/// Largest per-thread cache (DPDK's default mempool cache is 256-512).
const CACHE_MAX: usize = 256;

/// One thread's cache for one pool. It holds the pool weakly, so a pool
/// dropped by its owner is freed (its cached buffers with it) rather than
/// kept alive by every thread that ever touched it.
struct LocalCache {
    pool: Weak<PoolShared>,
    bufs: Vec<Box<[u8]>>,
}

impl Drop for LocalCache {
    fn drop(&mut self) {
        // At thread exit, give the buffers back to a pool that is still alive.
        if let Some(pool) = self.pool.upgrade() {
            for b in self.bufs.drain(..) {
                // Cannot fail: the shared queue can hold every buffer of the pool.
                let _ = pool.free.push(b);
            }
        }
    }
}

thread_local! {
    /// Per-thread caches, one per pool the thread has used (usually one).
    static CACHES: RefCell<Vec<LocalCache>> = const { RefCell::new(Vec::new()) };
}

impl PoolShared {
    /// Runs `f` on this thread's cache for this pool, creating it on first use.
    /// Returns `None` during thread teardown, when the cache is gone.
    #[inline]
    fn with_cache<R>(self: &Arc<Self>, f: impl FnOnce(&mut Vec<Box<[u8]>>) -> R) -> Option<R> {
        CACHES
            .try_with(|c| {
                let mut caches = c.try_borrow_mut().ok()?;
                let me = Arc::as_ptr(self);
                let i = match caches.iter().position(|lc| lc.pool.as_ptr() == me) {
                    Some(i) => i,
                    None => {
                        // Forget caches of pools that no longer exist.
                        caches.retain(|lc| lc.pool.strong_count() > 0);
                        caches.push(LocalCache {
                            pool: Arc::downgrade(self),
                            bufs: Vec::with_capacity(self.cache_max),
                        });
                        caches.len() - 1
                    }
                };
                Some(f(&mut caches[i].bufs))
            })
            .ok()
            .flatten()
    }

    /// Refills half an empty cache in one go from the shared queue; false
    /// when the shared queue is empty too.
    #[inline]
    fn refill(&self, bufs: &mut Vec<Box<[u8]>>) -> bool {
        for _ in 0..self.cache_max / 2 {
            match self.free.pop() {
                Some(b) => bufs.push(b),
                None => break,
            }
        }
        !bufs.is_empty()
    }

    /// Spills half a full cache back so other threads can have them.
    #[inline]
    fn spill(&self, bufs: &mut Vec<Box<[u8]>>) {
        for b in bufs.drain(self.cache_max / 2..) {
            let _ = self.free.push(b);
        }
    }

    #[inline]
    fn take(self: &Arc<Self>) -> Option<Box<[u8]>> {
        let cached = self.with_cache(|bufs| {
            if bufs.is_empty() {
                self.refill(bufs);
            }
            bufs.pop()
        });
        match cached {
            Some(b) => b,
            None => self.free.pop(),
        }
    }

    #[inline]
    fn give(self: &Arc<Self>, buf: Box<[u8]>) {
        let mut buf = Some(buf);
        self.with_cache(|bufs| {
            if bufs.len() >= self.cache_max {
                self.spill(bufs);
            }
            if let Some(b) = buf.take() {
                bufs.push(b);
            }
        });
        if let Some(b) = buf {
            // Cannot fail: the shared queue can hold every buffer of the pool.
            let _ = self.free.push(b);
        }
    }
}

/// A fixed set of preallocated packet buffers.
///
/// Cloning a `Pool` is cheap and shares the same buffers.
#[derive(Clone)]
pub struct Pool {
    shared: Arc<PoolShared>,
}

impl Pool {
    /// Preallocates `buffers` buffers of [`BUF_SIZE`] bytes.
    pub fn new(buffers: usize) -> Pool {
        let buffers = buffers.max(1);
        let free = ArrayQueue::new(buffers);
        for _ in 0..buffers {
            // Cannot fail: the queue was sized for exactly this many.
            let _ = free.push(vec![0u8; BUF_SIZE].into_boxed_slice());
        }
        Pool {
            shared: Arc::new(PoolShared {
                free,
                capacity: buffers,
                in_use: AtomicUsize::new(0),
                exhausted: AtomicU64::new(0),
                // Small pools (tests) keep most buffers shared.
                cache_max: (buffers / 8).clamp(2, CACHE_MAX),
            }),
        }
    }

    /// Takes an empty packet (length 0, default metadata), or `None` when every
    /// buffer is in use; the miss is counted in [`Pool::exhausted`].
    #[inline]
    pub fn alloc(&self) -> Option<Packet> {
        match self.shared.take() {
            Some(buf) => Some(Packet::new(buf, &self.shared)).inspect(|_| {
                self.shared.in_use.fetch_add(1, Ordering::Relaxed);
            }),
            None => {
                self.shared.exhausted.fetch_add(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Appends up to `n` empty packets to `burst` (as many as fit), taking
    /// the thread's cache once for all of them; returns how many. Receive
    /// paths use it instead of [`alloc`](Self::alloc) per frame.
    pub fn alloc_burst(&self, burst: &mut Burst, n: usize) -> usize {
        let want = n.min(BURST_SIZE - burst.len());
        let shared = &self.shared;
        let cached = shared.with_cache(|bufs| {
            let mut got = 0;
            while got < want {
                if bufs.is_empty() && !shared.refill(bufs) {
                    break;
                }
                let Some(buf) = bufs.pop() else { break };
                burst.push(Packet::new(buf, shared));
                got += 1;
            }
            got
        });
        match cached {
            Some(got) => {
                shared.in_use.fetch_add(got, Ordering::Relaxed);
                if got < want {
                    shared.exhausted.fetch_add(1, Ordering::Relaxed);
                }
                got
            }
            // During thread teardown there is no cache: one at a time.
            None => {
                let mut got = 0;
                while got < want {
                    let Some(p) = self.alloc() else { break };
                    burst.push(p);
                    got += 1;
                }
                got
            }
        }
    }

    /// Takes a packet holding a copy of `frame`; `None` when the pool is empty
    /// or the frame is longer than [`MAX_FRAME`].
    pub fn alloc_from(&self, frame: &[u8]) -> Option<Packet> {
        if frame.len() > MAX_FRAME {
            return None;
        }
        let mut pkt = self.alloc()?;
        pkt.tailroom_mut()[..frame.len()].copy_from_slice(frame);
        pkt.set_len(frame.len());
        Some(pkt)
    }

    /// Buffers not held by a packet (in the shared queue or a thread's cache).
    pub fn available(&self) -> usize {
        self.shared
            .capacity
            .saturating_sub(self.shared.in_use.load(Ordering::Relaxed))
    }

    /// Buffers the pool was built with.
    pub fn capacity(&self) -> usize {
        self.shared.capacity
    }

    /// How many times `alloc` found the pool empty.
    pub fn exhausted(&self) -> u64 {
        self.shared.exhausted.load(Ordering::Relaxed)
    }
}

/// Drops every packet of `burst`, returning their buffers to this thread's
/// cache in one go instead of one cache visit per packet (packets of
/// another pool than the first's go back one by one).
pub fn free_burst(burst: &mut Burst) {
    free_front(burst, burst.len());
}

/// Drops the first `n` packets of `burst` as [`free_burst`] does, keeping
/// the rest in order: transmit paths that copy frames out release what the
/// device accepted this way.
pub fn free_front(burst: &mut Burst, n: usize) {
    let n = n.min(burst.len());
    let Some(first) = burst.first() else { return };
    let shared = Arc::clone(&first.pool);
    let mut freed = 0;
    shared.with_cache(|bufs| {
        for p in burst[..n].iter_mut() {
            if Arc::ptr_eq(&p.pool, &shared) {
                if let Some(buf) = p.buf.take() {
                    if bufs.len() >= shared.cache_max {
                        shared.spill(bufs);
                    }
                    bufs.push(buf);
                    freed += 1;
                }
            }
        }
    });
    shared.in_use.fetch_sub(freed, Ordering::Relaxed);
    burst.drain(..n);
}

/// One frame in a pooled buffer, with the metadata the pipeline attaches.
///
/// The frame occupies `buf[head..head + len]`; the bytes before `head` are
/// headroom. Dropping the packet returns its buffer to the pool.
pub struct Packet {
    buf: Option<Box<[u8]>>,
    head: u16,
    len: u16,
    pool: Arc<PoolShared>,
    /// What the parser and later stages learned about the frame.
    pub meta: Meta,
    /// Arrival time (set by the receiving port); while the packet waits in an
    /// egress queue, the time it joined it (for its sojourn time); then its
    /// departure time on transmit.
    pub timestamp: Nanos,
    /// Index of the interface the frame arrived on.
    pub in_port: u16,
}

impl Packet {
    #[inline]
    fn new(buf: Box<[u8]>, pool: &Arc<PoolShared>) -> Packet {
        Packet {
            buf: Some(buf),
            head: HEADROOM as u16,
            len: 0,
            pool: Arc::clone(pool),
            meta: Meta::default(),
            timestamp: 0,
            in_port: 0,
        }
    }

    #[inline]
    fn raw(&self) -> &[u8] {
        match &self.buf {
            Some(b) => b,
            None => &[],
        }
    }

    #[inline]
    fn raw_mut(&mut self) -> &mut [u8] {
        match &mut self.buf {
            Some(b) => b,
            None => &mut [],
        }
    }

    /// The frame's bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        let h = self.head as usize;
        &self.raw()[h..h + self.len as usize]
    }

    /// The frame's bytes, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let (h, l) = (self.head as usize, self.len as usize);
        &mut self.raw_mut()[h..h + l]
    }

    /// Frame length in bytes.
    #[inline]
    #[allow(clippy::len_without_is_empty)] // an empty frame is simply length 0
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Everything from the frame's start to the end of the buffer, for a
    /// backend or builder to write a frame into before calling [`set_len`](Self::set_len).
    #[inline]
    pub fn tailroom_mut(&mut self) -> &mut [u8] {
        let h = self.head as usize;
        &mut self.raw_mut()[h..]
    }

    /// Largest length [`set_len`](Self::set_len) accepts.
    #[inline]
    pub fn capacity(&self) -> usize {
        BUF_SIZE - self.head as usize
    }

    /// Sets the frame length; lengths past the buffer are clamped to it.
    #[inline]
    pub fn set_len(&mut self, len: usize) {
        self.len = len.min(self.capacity()) as u16;
    }

    /// Grows the frame at the front by `n` bytes (for pushing a header);
    /// returns false, changing nothing, when the headroom is too small.
    #[inline]
    pub fn push_front(&mut self, n: usize) -> bool {
        if n > self.head as usize {
            return false;
        }
        self.head -= n as u16;
        self.len += n as u16;
        true
    }

    /// Removes `n` bytes from the front (for popping a header); returns false,
    /// changing nothing, when the frame is shorter than `n`.
    #[inline]
    pub fn pull_front(&mut self, n: usize) -> bool {
        if n > self.len as usize {
            return false;
        }
        self.head += n as u16;
        self.len -= n as u16;
        true
    }

    /// Forgets any earlier frame and metadata, for reusing the buffer to build a
    /// new frame (a reply, a pause frame) without going back to the pool.
    pub fn reset(&mut self) {
        self.head = HEADROOM as u16;
        self.len = 0;
        self.meta = Meta::default();
    }
}

impl Drop for Packet {
    fn drop(&mut self) {
        if let Some(buf) = self.buf.take() {
            self.pool.in_use.fetch_sub(1, Ordering::Relaxed);
            self.pool.give(buf);
        }
    }
}

impl std::fmt::Debug for Packet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Packet")
            .field("len", &self.len)
            .field("in_port", &self.in_port)
            .field("timestamp", &self.timestamp)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_return_to_the_pool_on_drop() {
        let pool = Pool::new(2);
        let a = pool.alloc_from(&[1, 2, 3]).unwrap();
        let b = pool.alloc().unwrap();
        assert_eq!(pool.available(), 0);
        assert!(pool.alloc().is_none());
        assert_eq!(pool.exhausted(), 1);
        assert_eq!(a.data(), &[1, 2, 3]);
        drop(a);
        drop(b);
        assert_eq!(pool.available(), 2);
        assert!(pool.alloc().is_some());
    }

    #[test]
    fn buffers_freed_on_another_thread_come_back() {
        let pool = Pool::new(64);
        let pkts: Vec<Packet> = (0..64).map(|_| pool.alloc().unwrap()).collect();
        assert!(pool.alloc().is_none());
        std::thread::spawn(move || drop(pkts)).join().unwrap();
        // The other thread's cache returned its buffers when it ended.
        let again: Vec<Packet> = (0..64).map(|_| pool.alloc().unwrap()).collect();
        assert_eq!(again.len(), 64);
        assert_eq!(pool.available(), 0);
    }

    #[test]
    fn a_dropped_pool_is_freed_even_after_a_thread_cached_its_buffers() {
        let pool = Pool::new(16);
        drop(pool.alloc());
        let weak = Arc::downgrade(&pool.shared);
        drop(pool);
        assert_eq!(
            weak.strong_count(),
            0,
            "the thread cache kept the pool alive"
        );
        // A new pool on the same thread works and prunes the dead cache.
        let again = Pool::new(4);
        assert!(again.alloc().is_some());
    }

    #[test]
    fn a_busy_thread_reuses_the_same_hot_buffers() {
        let pool = Pool::new(1024);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let p = pool.alloc().unwrap();
            seen.insert(p.data().as_ptr() as usize);
        }
        assert_eq!(seen.len(), 1, "the cache cycles {} buffers", seen.len());
    }

    #[test]
    fn bursts_are_allocated_and_freed_in_one_go() {
        let pool = Pool::new(40);
        let other = Pool::new(4);
        let mut burst = Burst::new();
        burst.push(other.alloc().unwrap());
        assert_eq!(pool.alloc_burst(&mut burst, 100), BURST_SIZE - 1);
        assert_eq!(burst.len(), BURST_SIZE);
        assert!(burst[1..]
            .iter()
            .all(|p| p.len() == 0 && p.capacity() == BUF_SIZE - HEADROOM));
        assert_eq!(pool.available(), 40 - 31);
        assert_eq!(other.available(), 3);
        free_front(&mut burst, 3);
        assert_eq!(burst.len(), BURST_SIZE - 3);
        assert_eq!((pool.available(), other.available()), (40 - 29, 4));
        free_burst(&mut burst);
        assert!(burst.is_empty());
        assert_eq!((pool.available(), other.available()), (40, 4));
        // Fewer buffers than asked for: what there is, and one miss counted.
        let small = Pool::new(5);
        assert_eq!(small.alloc_burst(&mut burst, 8), 5);
        assert_eq!(small.exhausted(), 1);
        assert_eq!(small.alloc_burst(&mut burst, 8), 0);
        free_burst(&mut burst);
        assert_eq!(small.available(), 5);
    }

    #[test]
    fn headroom_push_and_pull() {
        let pool = Pool::new(1);
        let mut p = pool.alloc_from(&[9; 20]).unwrap();
        assert!(p.push_front(4));
        assert_eq!(p.len(), 24);
        assert!(p.pull_front(4));
        assert_eq!(p.data(), &[9; 20]);
        assert!(!p.pull_front(21));
        assert!(!p.push_front(HEADROOM + 1));
        assert!(pool.alloc_from(&vec![0; MAX_FRAME + 1]).is_none());
    }
}
