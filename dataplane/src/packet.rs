//! PacketBuf buffers, the pool they come from, and bursts.
//!
//! Every buffer is allocated once, when the [`Pool`] is built (one zeroed
//! slab, whose pages the system provides only as buffers are first used),
//! and recycled forever after, so the fast path never touches the
//! allocator. Buffers may cross workers (cross-core hand-off), so the
//! pool's shared free list is a lock-free multi-producer, multi-consumer
//! queue. In front of it each thread keeps a small last-in, first-out cache
//! (as DPDK's per-lcore mempool cache does): a busy worker keeps reusing the
//! same few hot buffers instead of cycling through — and faulting in — the
//! whole pool.
//!
//! As with DPDK's mbuf, what travels with a frame (its metadata, arrival
//! time, ingress port) lives in the buffer itself, in front of the headroom,
//! and a [`PacketBuf`] is one pointer to it: moving a packet through the
//! stages, queues and hand-off rings moves eight bytes, not a hundred.
//!
//! A buffer knows its pool without holding a reference count of its own:
//! the pool counts the buffers it has lent, and while any are out that
//! count holds one reference on the pool. Each thread's cache counts its
//! loans there in advance, in batches, and keeps the rest as credit on a
//! line of its own, so taking or returning a burst touches no cache line
//! another worker writes.

// The buffer header's pool pointer, the loan-held reference and the egress
// FIFO's links through buffers ([`fifo`]) are the places this module needs
// `unsafe`; each block says why it is sound.
#![allow(unsafe_code)]

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::cell::RefCell;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use arrayvec::ArrayVec;
use crossbeam_queue::ArrayQueue;

use crate::clock::Nanos;
use crate::meta::Meta;

pub mod fifo;

/// Largest IP MTU railyard forwards (jumbo frames, as on Nexus).
pub const MAX_MTU: usize = 9216;
/// Largest frame on the wire without FCS: MTU + Ethernet header + one 802.1Q tag.
pub const MAX_FRAME: usize = MAX_MTU + 14 + 4;
/// Bytes kept free in front of the frame so a tag can be pushed without a copy.
pub const HEADROOM: usize = 64;
/// Size of every buffer's frame area (headroom included).
pub const BUF_SIZE: usize = HEADROOM + MAX_FRAME;
/// Packets moved per `rx_burst`/`tx_burst` and per pipeline stage call.
pub const BURST_SIZE: usize = 32;

/// A burst of packets, the unit every stage works on.
pub type Burst = ArrayVec<PacketBuf, BURST_SIZE>;

/// What the pipeline carries with a frame; a [`PacketBuf`] dereferences to it.
/// In this order (`repr(C)`) the egress side's fields come first (see
/// [`Meta`]).
#[derive(Debug, Clone, Copy, Default)]
#[repr(C)]
pub struct PacketInfo {
    /// Arrival time (set by the receiving port); while the packet waits in an
    /// egress queue, the time it joined it (for its sojourn time); then its
    /// departure time on transmit.
    pub timestamp: Nanos,
    /// Index of the interface the frame arrived on.
    pub in_port: u16,
    /// What the parser and later stages learned about the frame.
    pub meta: Meta,
}

/// Hints the CPU to fetch `lines` cache lines from `p` on, meaning to write
/// them (a write prefetch where the build targets a CPU that has one, an
/// ordinary prefetch otherwise). Only a hint: it never faults, whatever the
/// address.
#[inline(always)]
fn prefetch_for_write(p: *const i8, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    for i in 0..lines {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        // SAFETY: a prefetch does not access memory architecturally; it
        // cannot fault or change what any thread observes.
        unsafe { _mm_prefetch::<_MM_HINT_ET0>(p.wrapping_add(i * 64)) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (p, lines);
}

/// Where a packet lay when the hint was taken: enough to prefetch its
/// state and headers ahead of the stage that will read them, nothing more.
/// The packet may be gone by then (received, freed, lent again); a
/// prefetch of its old place is harmless, since a prefetch never faults
/// and the slab outlives every packet of its pool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct PacketHint(usize);

impl PacketHint {
    /// Starts loading the packet's state line and the first two lines of
    /// its frame (a RoCEv2 frame's headers), for writing.
    #[inline]
    pub fn prefetch(self) {
        if self.0 == 0 {
            return;
        }
        let p = self.0 as *const i8;
        prefetch_for_write(p, 1);
        let frame = std::mem::offset_of!(Buffer, data) + HEADROOM;
        prefetch_for_write(p.wrapping_add(frame), 2);
    }
}

/// One pooled buffer: the packet's state, then headroom and frame. The
/// state takes the first cache lines and the frame area starts on a line
/// of its own, so the stages that touch both touch few lines.
#[repr(C, align(64))]
struct Buffer {
    /// The pool this buffer returns to; it stays alive while the buffer is
    /// lent out (see [`PoolShared::lent`]).
    pool: *const PoolShared,
    head: u16,
    len: u16,
    /// The next packet in the egress queue holding this one (see
    /// [`fifo`]); meaningful only while the buffer is queued and not the
    /// queue's last. In the first cache line, which a dequeue reads anyway.
    next: *mut Buffer,
    info: PacketInfo,
    data: Aligned,
}

#[repr(C, align(64))]
struct Aligned([u8; BUF_SIZE]);

/// The one handle to one buffer of a pool's slab, owned like a `Box`: by
/// the free queue, a thread's cache or a packet, one at a time.
/// Transparent, as [`PacketBuf`] is, so [`fifo`] can lend a queued buffer's
/// pointer as a `&PacketBuf`.
#[repr(transparent)]
struct BufBox(NonNull<Buffer>);

// SAFETY: a handle is the only way to its buffer, so moving it to another
// thread moves the buffer, as moving a `Box<Buffer>` would.
unsafe impl Send for BufBox {}

impl Deref for BufBox {
    type Target = Buffer;
    #[inline]
    fn deref(&self) -> &Buffer {
        // SAFETY: only a lent buffer is reached through its handle, and its
        // slab lives while it is lent; its header was written when lent.
        unsafe { self.0.as_ref() }
    }
}

impl DerefMut for BufBox {
    #[inline]
    fn deref_mut(&mut self) -> &mut Buffer {
        // SAFETY: as for `deref`, and the handle is unique.
        unsafe { self.0.as_mut() }
    }
}

/// Most buffers one pool holds (some 40 GB of them): keeps the slab's size
/// computation far from overflow.
pub const MAX_BUFFERS: usize = 1 << 22;

struct PoolShared {
    /// Buffers given back (first-in, first-out across threads).
    free: ArrayQueue<BufBox>,
    /// The first buffer of the slab never lent: buffers are carved from
    /// the slab in order only when `free` is empty, so a pool lends the
    /// same buffers again rather than cycling through (and faulting in)
    /// all of them, and the memory it touches is what it ever held at
    /// once.
    fresh: AtomicUsize,
    /// The first buffer of the slab.
    base: NonNull<Buffer>,
    /// Every buffer, in one zeroed allocation: the system hands it out as
    /// untouched pages, so only buffers actually used take memory, and
    /// building a pool costs no time filling it.
    slab: NonNull<u8>,
    slab_layout: Layout,
    capacity: usize,
    /// Buffers lent out (in packets), plus the loans threads' caches
    /// have counted in advance (their [`Credit`]). While it is above zero
    /// it holds one strong reference on the pool, so a packet can always
    /// go home.
    in_use: AtomicUsize,
    /// Every live cache's credit, so that [`Pool::available`] can tell
    /// buffers lent from loans counted in advance.
    credits: Mutex<Vec<Arc<Credit>>>,
    /// [`Pool`] handles alive. When the last one goes, its thread's cache
    /// lets go of the pool at once (other threads' at their next new cache,
    /// or when they end).
    handles: AtomicUsize,
    exhausted: AtomicU64,
    /// Most buffers one thread's cache may hold.
    cache_max: usize,
}

/// Loans one thread's cache has counted in the pool's `in_use` but not
/// made yet, on a cache line of its own: only that thread writes it, and
/// other threads read it only for [`Pool::available`].
#[repr(align(64))]
struct Credit(AtomicUsize);

// SAFETY: the slab is only reached through buffer handles (one owner each)
// and freed on drop; everything else in the pool is thread-safe (atomics
// and a lock-free queue).
unsafe impl Send for PoolShared {}
unsafe impl Sync for PoolShared {}

impl Drop for PoolShared {
    fn drop(&mut self) {
        // No buffer is lent (a loan holds a reference). Handles left in
        // threads' caches are never used again: a cache is found only through
        // its live pool.
        // SAFETY: allocated in `Pool::new` with this layout.
        unsafe { dealloc(self.slab.as_ptr(), self.slab_layout) };
    }
}

/// Largest per-thread cache. Larger than DPDK's default (256-512): when
/// workers hand packets to each other, every buffer migrates between their
/// caches through the shared queue, and bigger spills and refills keep the
/// two cores from contending on it. `scripts/bench-pipeline.sh`, two workers
/// with worker-local traffic: 1.50× one worker with 1 024, 1.95× with 2 048.
const CACHE_MAX: usize = 2048;

/// One thread's cache for one pool. It holds the pool weakly: its credit
/// keeps the pool alive until the cache is dropped (when the thread ends,
/// when the pool's last handle is dropped on this thread, or when this
/// thread next starts a cache after that), not for as long as the thread
/// runs.
struct LocalCache {
    pool: Weak<PoolShared>,
    bufs: Vec<BufBox>,
    /// Loans this thread may make before counting more in the pool's
    /// `in_use`; returns add to it, and past two batches one batch goes back.
    credit: Arc<Credit>,
}

impl LocalCache {
    /// Records `n` buffers lent from this cache, counting another batch in
    /// the pool first when the credit does not cover them.
    #[inline]
    fn lend(&mut self, pool: &Arc<PoolShared>, n: usize) {
        let mut c = self.credit.0.load(Ordering::Relaxed);
        if c < n {
            let more = n - c + pool.credit_batch();
            pool.lent(more);
            c += more;
        }
        self.credit.0.store(c - n, Ordering::Relaxed);
    }

    /// Records `n` buffers returned through this cache, giving loans back to
    /// the pool beyond two batches of credit, or all of them once the pool
    /// has no handle left: then the last buffer home frees it, and the
    /// caller must not touch the pool after this call.
    #[inline]
    fn repay(&mut self, pool: &Arc<PoolShared>, n: usize) {
        let batch = pool.credit_batch();
        let mut c = self.credit.0.load(Ordering::Relaxed) + n;
        if pool.handles.load(Ordering::Acquire) == 0 {
            self.credit.0.store(0, Ordering::Relaxed);
            pool.returned(c);
            return;
        }
        if c > 2 * batch {
            // `batch` (at least one) stays counted, so this never ends the
            // loans' reference: the pool outlives the call.
            pool.returned(c - batch);
            c = batch;
        }
        self.credit.0.store(c, Ordering::Relaxed);
    }
}

impl Drop for LocalCache {
    fn drop(&mut self) {
        // Credit keeps the pool alive, so a cache with credit finds it.
        if let Some(pool) = self.pool.upgrade() {
            for b in self.bufs.drain(..) {
                // Cannot fail: the shared queue can hold every buffer of the pool.
                let _ = pool.free.push(b);
            }
            pool.credits
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .retain(|c| !Arc::ptr_eq(c, &self.credit));
            let credit = self.credit.0.swap(0, Ordering::Relaxed);
            // May end the loans' reference; `pool` keeps it alive to here.
            pool.returned(credit);
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
    fn with_cache<R>(self: &Arc<Self>, f: impl FnOnce(&mut LocalCache) -> R) -> Option<R> {
        CACHES
            .try_with(|c| {
                let mut caches = c.try_borrow_mut().ok()?;
                let me = Arc::as_ptr(self);
                let i = match caches.iter().position(|lc| lc.pool.as_ptr() == me) {
                    Some(i) => i,
                    None => {
                        // Let go of pools nobody holds a handle to any more.
                        caches.retain(|lc| {
                            lc.pool
                                .upgrade()
                                .is_some_and(|p| p.handles.load(Ordering::Acquire) > 0)
                        });
                        let credit = Arc::new(Credit(AtomicUsize::new(0)));
                        self.credits
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push(Arc::clone(&credit));
                        caches.push(LocalCache {
                            pool: Arc::downgrade(self),
                            bufs: Vec::with_capacity(self.cache_max),
                            credit,
                        });
                        caches.len() - 1
                    }
                };
                Some(f(&mut caches[i]))
            })
            .ok()
            .flatten()
    }

    /// Loans a cache counts in `in_use` at a time: as many as a refill
    /// brings, so a thread that takes about what it returns never touches
    /// `in_use` at all.
    #[inline]
    fn credit_batch(&self) -> usize {
        (self.cache_max / 2).max(1)
    }

    /// Refills half an empty cache in one go from the shared queue; only
    /// when that is empty, a burst's worth of buffers never lent. Carving
    /// more at once would have a thread that takes more than it gives back
    /// (the LLDP agent, whose frames workers free) touch fresh buffers for
    /// as long as the batch lasts while returned ones wait in the shared
    /// queue. False when there are none left.
    #[inline]
    fn refill(&self, bufs: &mut Vec<BufBox>) -> bool {
        let want = self.cache_max / 2;
        while bufs.len() < want {
            match self.free.pop() {
                Some(b) => bufs.push(b),
                None => break,
            }
        }
        if bufs.is_empty() {
            self.carve(want.min(BURST_SIZE), bufs);
        }
        !bufs.is_empty()
    }

    /// Moves up to `n` buffers never lent into `bufs`, in slab order.
    #[cold]
    fn carve(&self, n: usize, bufs: &mut Vec<BufBox>) {
        let fresh = self.claim(n);
        // Last first, so the cache (last in, first out) lends them in
        // slab order.
        bufs.extend(fresh.rev().map(|i| self.buffer(i)));
    }

    /// Claims up to `n` buffers never lent, for this caller alone.
    #[inline]
    fn claim(&self, n: usize) -> std::ops::Range<usize> {
        let got = self
            .fresh
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |f| {
                (f < self.capacity).then(|| (f + n).min(self.capacity))
            });
        match got {
            Ok(from) => from..(from + n).min(self.capacity),
            Err(_) => 0..0,
        }
    }

    /// The handle of buffer `i`, which [`claim`](Self::claim) gave out.
    #[inline]
    fn buffer(&self, i: usize) -> BufBox {
        // SAFETY: a claimed index is below the capacity, so within the
        // slab, and claimed once: this is its only handle.
        BufBox(unsafe { NonNull::new_unchecked(self.base.as_ptr().add(i)) })
    }

    /// One buffer from the shared queue, or else one never lent.
    #[inline]
    fn pop_shared(&self) -> Option<BufBox> {
        self.free
            .pop()
            .or_else(|| self.claim(1).next().map(|i| self.buffer(i)))
    }

    /// Spills half a full cache back so other threads can have them.
    #[inline]
    fn spill(&self, bufs: &mut Vec<BufBox>) {
        for b in bufs.drain(self.cache_max / 2..) {
            let _ = self.free.push(b);
        }
    }

    /// Takes one buffer and records its loan.
    #[inline]
    fn take(self: &Arc<Self>) -> Option<BufBox> {
        let cached = self.with_cache(|cache| {
            if cache.bufs.is_empty() {
                self.refill(&mut cache.bufs);
            }
            let b = cache.bufs.pop()?;
            cache.lend(self, 1);
            Some(b)
        });
        match cached {
            Some(b) => b,
            // During thread teardown there is no cache.
            None => {
                let b = self.pop_shared()?;
                self.lent(1);
                Some(b)
            }
        }
    }

    /// Puts buffers back (this thread's cache first) and ends their loan.
    /// `bufs` must all belong to this pool.
    #[inline]
    fn give(self: &Arc<Self>, mut bufs: impl Iterator<Item = BufBox>) {
        let cached = self.with_cache(|cache| {
            let mut n = 0;
            let cached = &mut cache.bufs;
            for b in bufs.by_ref() {
                if cached.len() >= self.cache_max {
                    self.spill(cached);
                }
                cached.push(b);
                n += 1;
            }
            // Last: this may free the pool.
            cache.repay(self, n);
        });
        if cached.is_some() {
            return;
        }
        // During thread teardown there is no cache.
        let mut n = 0;
        for b in bufs {
            // Cannot fail: the shared queue can hold every buffer of the pool.
            let _ = self.free.push(b);
            n += 1;
        }
        self.returned(n);
    }

    /// Records `n` more buffers lent; the first loan takes the pool's
    /// reference for the loans (see [`returned`](Self::returned)).
    #[inline]
    fn lent(self: &Arc<Self>, n: usize) {
        if n > 0 && self.in_use.fetch_add(n, Ordering::AcqRel) == 0 {
            // SAFETY: `self` is a live Arc, so the count is at least one.
            unsafe { Arc::increment_strong_count(Arc::as_ptr(self)) };
        }
    }

    /// Records `n` buffers back; the last one gives up the loans' reference,
    /// which may free the pool, so nothing may touch it afterwards.
    #[inline]
    fn returned(self: &Arc<Self>, n: usize) {
        if n > 0 && self.in_use.fetch_sub(n, Ordering::AcqRel) == n {
            // SAFETY: the reference taken by `lent` when the count left zero.
            unsafe { Arc::decrement_strong_count(Arc::as_ptr(self)) };
        }
    }
}

/// A fixed set of preallocated packet buffers.
///
/// Cloning a `Pool` is cheap and shares the same buffers.
pub struct Pool {
    shared: Arc<PoolShared>,
}

impl Clone for Pool {
    fn clone(&self) -> Pool {
        self.shared.handles.fetch_add(1, Ordering::Relaxed);
        Pool {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        if self.shared.handles.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        // The last handle: this thread's cache gives back its buffers and
        // credit now, so the pool goes as soon as no packet is out.
        let me = Arc::as_ptr(&self.shared);
        let _ = CACHES.try_with(|c| {
            if let Ok(mut caches) = c.try_borrow_mut() {
                caches.retain(|lc| lc.pool.as_ptr() != me);
            }
        });
    }
}

/// Asks the system to back the slab `[raw, raw + len)` with huge pages
/// where it can (transparent huge pages, `madvise` mode): packets are
/// spread over the whole slab, and with 4 KiB pages nearly every packet a
/// stage touches costs a TLB miss besides its cache miss. Only advice:
/// nothing changes where the system declines (or has no such pages), and
/// memory is still taken only as it is first touched.
fn advise_huge_pages(raw: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        // Whole huge pages inside the allocation only.
        let start = (raw as usize).next_multiple_of(HUGE);
        let end = (raw as usize + len) & !(HUGE - 1);
        if end > start {
            // SAFETY: the range lies inside the live allocation; the advice
            // changes how its pages are backed, never their contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (raw, len);
}

impl Pool {
    /// Preallocates `buffers` buffers of [`BUF_SIZE`] bytes.
    pub fn new(buffers: usize) -> Pool {
        let buffers = buffers.clamp(1, MAX_BUFFERS);
        // The system allocator zeroes an over-aligned request by writing
        // every byte (touching every page); at the default alignment it uses
        // calloc, which gets fresh zero pages from the kernel untouched. So
        // ask for one buffer's alignment more and align by hand.
        let align = std::mem::align_of::<Buffer>();
        let size = buffers * std::mem::size_of::<Buffer>() + align;
        let slab_layout = match Layout::from_size_align(size, 16) {
            Ok(l) => l,
            Err(_) => handle_alloc_error(Layout::new::<Buffer>()),
        };
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(slab_layout) };
        let Some(slab) = NonNull::new(raw) else {
            handle_alloc_error(slab_layout)
        };
        advise_huge_pages(raw, size);
        let first = raw.align_offset(align);
        // SAFETY: `first < align`, and the allocation has `align` spare bytes.
        let base = unsafe { slab.add(first) }.cast::<Buffer>();
        let shared = Arc::new(PoolShared {
            free: ArrayQueue::new(buffers),
            fresh: AtomicUsize::new(0),
            base,
            slab,
            slab_layout,
            capacity: buffers,
            in_use: AtomicUsize::new(0),
            credits: Mutex::new(Vec::new()),
            handles: AtomicUsize::new(1),
            exhausted: AtomicU64::new(0),
            // Small pools (tests) keep most buffers shared.
            cache_max: (buffers / 8).clamp(2, CACHE_MAX),
        });
        Pool { shared }
    }

    /// Takes an empty packet (length 0, default metadata), or `None` when every
    /// buffer is in use; the miss is counted in [`Pool::exhausted`].
    #[inline]
    pub fn alloc(&self) -> Option<PacketBuf> {
        match self.shared.take() {
            Some(buf) => Some(PacketBuf::new(buf, &self.shared)),
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
        let cached = shared.with_cache(|cache| {
            let mut got = 0;
            let bufs = &mut cache.bufs;
            while got < want {
                if bufs.is_empty() && !shared.refill(bufs) {
                    break;
                }
                let Some(buf) = bufs.pop() else { break };
                // The receive path writes the frame next; a buffer freed here
                // after crossing workers last had it written on another core.
                let frame = std::mem::offset_of!(Buffer, data) + HEADROOM;
                prefetch_for_write(buf.0.as_ptr().cast::<i8>().wrapping_add(frame), 1);
                burst.push(PacketBuf::new(buf, shared));
                got += 1;
            }
            cache.lend(shared, got);
            got
        });
        match cached {
            Some(got) => {
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

    /// Gives this thread's cached buffers beyond the `keep` it used last
    /// back to the shared queue. A thread that frees more than it takes (a
    /// worker transmitting frames another thread built) would otherwise keep
    /// them until its cache is full, thousands of buffers, while the thread
    /// that built them touches fresh ones: resident memory that creeps up
    /// for hours. Workers call it at every counter publication, the control
    /// threads once a loop; never per packet.
    pub fn trim_cache(&self, keep: usize) {
        let shared = &self.shared;
        shared.with_cache(|cache| {
            let surplus = cache.bufs.len().saturating_sub(keep);
            // The bottom of the stack went in first: the coldest buffers.
            for b in cache.bufs.drain(..surplus) {
                // Cannot fail: the shared queue can hold every buffer of the pool.
                let _ = shared.free.push(b);
            }
        });
    }

    /// Buffers ever lent (carved from the slab): what the pool holds
    /// resident, in buffers (see [`PoolStats`](crate::stats::PoolStats)).
    pub fn touched(&self) -> usize {
        self.shared
            .fresh
            .load(Ordering::Relaxed)
            .min(self.shared.capacity)
    }

    /// Bytes one buffer takes in the slab: its frame area and headroom and
    /// the packet's state before them.
    pub const BUFFER_BYTES: usize = std::mem::size_of::<Buffer>();

    /// Buffers a thread keeps in its cache after [`trim_cache`](Self::trim_cache):
    /// two bursts, so a worker's next receive takes none from the shared queue.
    pub const TRIM_KEEP: usize = 2 * BURST_SIZE;

    /// Takes a packet holding a copy of `frame`; `None` when the pool is empty
    /// or the frame is longer than [`MAX_FRAME`].
    pub fn alloc_from(&self, frame: &[u8]) -> Option<PacketBuf> {
        if frame.len() > MAX_FRAME {
            return None;
        }
        let mut pkt = self.alloc()?;
        pkt.set_frame(frame).then_some(pkt)
    }

    /// Buffers not held by a packet (in the shared queue or a thread's cache).
    pub fn available(&self) -> usize {
        let shared = &self.shared;
        let credit: usize = shared
            .credits
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(|c| c.0.load(Ordering::Relaxed))
            .sum();
        let lent = shared.in_use.load(Ordering::Relaxed).saturating_sub(credit);
        shared.capacity.saturating_sub(lent)
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

/// Copies `src` into `dst`, which must be as long (as with
/// `copy_from_slice`, which it falls back to). Frames of 16 to 128 bytes,
/// the RoCE and control frames that make most of a fabric's packet rate,
/// move as two overlapping fixed-size chunks in line: at that size the
/// call into the C library's `memcpy` costs more than the copy.
#[inline(always)]
pub fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    #[inline(always)]
    fn overlapping<const C: usize>(dst: &mut [u8], src: &[u8]) {
        let n = src.len();
        dst[..C].copy_from_slice(&src[..C]);
        dst[n - C..].copy_from_slice(&src[n - C..]);
    }
    if dst.len() != src.len() {
        return dst.copy_from_slice(src);
    }
    match src.len() {
        16..=32 => overlapping::<16>(dst, src),
        33..=64 => overlapping::<32>(dst, src),
        65..=128 => overlapping::<64>(dst, src),
        _ => dst.copy_from_slice(src),
    }
}

/// Drops every packet of `burst`, returning their buffers to this thread's
/// cache in one go instead of one cache visit per packet (a burst mixing
/// pools goes back one packet at a time).
pub fn free_burst(burst: &mut Burst) {
    free_front(burst, burst.len());
}

/// Drops the first `n` packets of `burst` as [`free_burst`] does, keeping
/// the rest in order: transmit paths that copy frames out release what the
/// device accepted this way.
pub fn free_front(burst: &mut Burst, n: usize) {
    let n = n.min(burst.len());
    let Some(first) = burst.first() else { return };
    let pool = first.buf.pool;
    let same = burst[..n].iter().all(|p| p.buf.pool == pool);
    if !same {
        // Mixed pools (rare: tests, control frames): one at a time.
        burst.drain(..n);
        return;
    }
    // SAFETY: the pool is alive while these buffers are lent (`in_use`
    // holds a reference); ManuallyDrop keeps this borrowed Arc's count as is.
    let shared = ManuallyDrop::new(unsafe { Arc::from_raw(pool) });
    shared.give(burst.drain(..n).map(PacketBuf::into_buffer));
}

/// One frame in a pooled buffer, with the metadata the pipeline attaches
/// (through [`Deref`] to [`PacketInfo`]: `pkt.meta`, `pkt.timestamp`,
/// `pkt.in_port`).
///
/// The frame occupies `buf[head..head + len]`; the bytes before `head` are
/// headroom. Dropping the packet returns its buffer to the pool.
#[repr(transparent)]
pub struct PacketBuf {
    buf: BufBox,
}

impl PacketBuf {
    #[inline]
    fn new(buf: BufBox, pool: &Arc<PoolShared>) -> PacketBuf {
        let p = buf.0.as_ptr();
        // SAFETY: the buffer is ours. Writing the header through the raw
        // pointer makes it valid without first reading what was there
        // (zeroes, the first time).
        unsafe {
            std::ptr::addr_of_mut!((*p).pool).write(Arc::as_ptr(pool));
            std::ptr::addr_of_mut!((*p).head).write(HEADROOM as u16);
            std::ptr::addr_of_mut!((*p).len).write(0);
            std::ptr::addr_of_mut!((*p).info).write(PacketInfo::default());
        }
        PacketBuf { buf }
    }

    /// Gives up the buffer without returning it to the pool.
    #[inline]
    fn into_buffer(self) -> BufBox {
        let me = ManuallyDrop::new(self);
        // SAFETY: `me` is never used or dropped again.
        unsafe { std::ptr::read(&me.buf) }
    }

    /// Starts loading, for writing, the cache line of this packet's state
    /// that the egress side uses (see [`Meta`]). A stage about to take a
    /// burst that another core filled calls it for the whole burst first,
    /// so the misses overlap instead of stalling the stage one packet at a
    /// time.
    #[inline]
    pub fn prefetch_state(&self) {
        prefetch_for_write(self.buf.0.as_ptr().cast(), 1);
    }

    /// Where this packet lies, for a [`PacketHint::prefetch`] later (when
    /// whoever receives it next is about to run). Not a handle: it gives
    /// no access to the packet.
    #[inline]
    pub fn hint(&self) -> PacketHint {
        PacketHint(self.buf.0.as_ptr() as usize)
    }

    /// Where the frame lies in the buffer. `head + len` never passes the
    /// buffer's end: `new` and `reset` start with nothing at `HEADROOM`,
    /// `set_len` clamps to the end, and `push_front` / `pull_front` move
    /// bytes between `head` and `len` without changing their sum. The
    /// accessors below rely on it to skip the bounds checks that every stage
    /// would otherwise pay on every packet.
    #[inline(always)]
    fn frame_range(&self) -> std::ops::Range<usize> {
        let (h, l) = (self.buf.head as usize, self.buf.len as usize);
        debug_assert!(h + l <= BUF_SIZE, "frame past its buffer");
        h..h + l
    }

    /// The frame's bytes.
    #[inline]
    pub fn data(&self) -> &[u8] {
        let r = self.frame_range();
        // SAFETY: `frame_range` lies inside the buffer (its invariant).
        unsafe { self.buf.data.0.get_unchecked(r) }
    }

    /// The frame's bytes, writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        let r = self.frame_range();
        // SAFETY: `frame_range` lies inside the buffer (its invariant).
        unsafe { self.buf.data.0.get_unchecked_mut(r) }
    }

    /// The frame's bytes and its metadata at once, for a stage (the parser)
    /// that reads one to fill in the other.
    #[inline]
    pub fn data_and_meta_mut(&mut self) -> (&[u8], &mut Meta) {
        let r = self.frame_range();
        let b = &mut *self.buf;
        // SAFETY: `frame_range` lies inside the buffer (its invariant).
        (unsafe { b.data.0.get_unchecked(r) }, &mut b.info.meta)
    }

    /// Frame length in bytes.
    #[inline]
    #[allow(clippy::len_without_is_empty)] // an empty frame is simply length 0
    pub fn len(&self) -> usize {
        self.buf.len as usize
    }

    /// Everything from the frame's start to the end of the buffer, for a
    /// backend or builder to write a frame into before calling [`set_len`](Self::set_len).
    #[inline]
    pub fn tailroom_mut(&mut self) -> &mut [u8] {
        let h = self.buf.head as usize;
        &mut self.buf.data.0[h..]
    }

    /// Replaces the frame with a copy of `frame` after the headroom; false,
    /// changing nothing, when it does not fit.
    #[inline]
    pub fn set_frame(&mut self, frame: &[u8]) -> bool {
        let h = self.buf.head as usize;
        let Some(dst) = self.buf.data.0.get_mut(h..h + frame.len()) else {
            return false;
        };
        copy_bytes(dst, frame);
        // Below BUF_SIZE, so it fits the u16.
        self.buf.len = frame.len() as u16;
        true
    }

    /// Largest length [`set_len`](Self::set_len) accepts.
    #[inline]
    pub fn capacity(&self) -> usize {
        BUF_SIZE - self.buf.head as usize
    }

    /// Sets the frame length; lengths past the buffer are clamped to it.
    #[inline]
    pub fn set_len(&mut self, len: usize) {
        self.buf.len = len.min(self.capacity()) as u16;
    }

    /// Grows the frame at the front by `n` bytes (for pushing a header);
    /// returns false, changing nothing, when the headroom is too small.
    #[inline]
    pub fn push_front(&mut self, n: usize) -> bool {
        if n > self.buf.head as usize {
            return false;
        }
        self.buf.head -= n as u16;
        self.buf.len += n as u16;
        true
    }

    /// Removes `n` bytes from the front (for popping a header); returns false,
    /// changing nothing, when the frame is shorter than `n`.
    #[inline]
    pub fn pull_front(&mut self, n: usize) -> bool {
        if n > self.buf.len as usize {
            return false;
        }
        self.buf.head += n as u16;
        self.buf.len -= n as u16;
        true
    }

    /// Forgets any earlier frame and metadata (arrival time and ingress port
    /// stay), for reusing the buffer to build a new frame (a reply, a pause
    /// frame) without going back to the pool.
    pub fn reset(&mut self) {
        self.buf.head = HEADROOM as u16;
        self.buf.len = 0;
        self.buf.info.meta = Meta::default();
    }
}

impl Deref for PacketBuf {
    type Target = PacketInfo;
    #[inline]
    fn deref(&self) -> &PacketInfo {
        &self.buf.info
    }
}

impl DerefMut for PacketBuf {
    #[inline]
    fn deref_mut(&mut self) -> &mut PacketInfo {
        &mut self.buf.info
    }
}

impl Drop for PacketBuf {
    fn drop(&mut self) {
        // SAFETY: `self.buf` is never used again.
        let buf = unsafe { std::ptr::read(&self.buf) };
        // SAFETY: as in `free_front`: a lent buffer's pool is alive.
        let shared = ManuallyDrop::new(unsafe { Arc::from_raw(buf.pool) });
        shared.give(std::iter::once(buf));
    }
}

impl std::fmt::Debug for PacketBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PacketBuf")
            .field("len", &self.buf.len)
            .field("in_port", &self.in_port)
            .field("timestamp", &self.timestamp)
            .finish()
    }
}

#[cfg(test)]
mod tests;
