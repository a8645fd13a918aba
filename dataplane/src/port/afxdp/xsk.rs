//! The XDP socket itself: UMEM registration, the four shared-memory rings
//! (fill, completion, receive, transmit), bind and `XDP_STATISTICS`,
//! written directly over `libc`.
//!
//! Why by hand: no maintained, permissively licensed (MIT/Apache/BSD)
//! pure-Rust crate covers this without either linking the C libbpf/libxdp
//! or imposing its own frame allocator and packet type on the port. The
//! kernel interface is small: a handful of socket options,
//! four `mmap`s and the producer/consumer protocol below.
//!
//! # Ring protocol
//!
//! Each ring is a power-of-two array of entries plus three shared `u32`
//! words: `producer`, `consumer` and `flags`. Indices are free-running and
//! wrap at 2^32; an index's slot is `index & (size - 1)`. One side produces,
//! the other consumes, and each keeps a private cached copy of both indices
//! ([`Cursor`]) so the shared words are touched only when the cache runs dry,
//! exactly as libxdp's `xsk.h` does:
//!
//! * a producer writes entries, then publishes them with a Release store of
//!   `producer`; it learns about freed slots with an Acquire load of
//!   `consumer` (its cached consumer is kept `size` ahead, so `cached_cons -
//!   cached_prod` is the number of free slots);
//! * a consumer learns about new entries with an Acquire load of `producer`,
//!   reads them, then hands the slots back with a Release store of
//!   `consumer`.
//!
//! `flags` carries `XDP_RING_NEED_WAKEUP` when the socket was bound with
//! `XDP_USE_NEED_WAKEUP`: the kernel sets it when it wants a syscall before
//! it looks at the ring again.

use std::ffi::c_int;
use std::io;
use std::marker::PhantomData;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::port::sys::{cvt, setsockopt};

/// The private half of a ring's index state: cached producer and consumer
/// indices and the ring size. Pure arithmetic, so it is tested without a
/// kernel; [`Ring`] feeds it the shared words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Cursor {
    cached_prod: u32,
    cached_cons: u32,
    size: u32,
}

impl Cursor {
    /// State of the producer side of a ring whose shared words read
    /// `producer` and `consumer`: the cached consumer runs `size` ahead.
    pub(super) fn producer(size: u32, producer: u32, consumer: u32) -> Cursor {
        Cursor {
            cached_prod: producer,
            cached_cons: consumer.wrapping_add(size),
            size,
        }
    }

    /// State of the consumer side of a ring whose shared words read
    /// `producer` and `consumer`.
    pub(super) fn consumer(size: u32, producer: u32, consumer: u32) -> Cursor {
        Cursor {
            cached_prod: producer,
            cached_cons: consumer,
            size,
        }
    }

    /// Producer side: how many slots are free (possibly more than `want`);
    /// the shared consumer index (`load`) is read only when fewer than
    /// `want` are known free (libxdp `xsk_prod_nb_free`).
    pub(super) fn free(&mut self, want: u32, load: impl FnOnce() -> u32) -> u32 {
        let free = self.cached_cons.wrapping_sub(self.cached_prod);
        if free >= want {
            return free;
        }
        self.cached_cons = load().wrapping_add(self.size);
        self.cached_cons.wrapping_sub(self.cached_prod)
    }

    /// Consumer side: how many entries are ready, at most `want`; the
    /// shared producer index (`load`) is read only when none is cached
    /// (libxdp `xsk_cons_nb_avail`).
    pub(super) fn available(&mut self, want: u32, load: impl FnOnce() -> u32) -> u32 {
        let mut ready = self.cached_prod.wrapping_sub(self.cached_cons);
        if ready == 0 {
            self.cached_prod = load();
            ready = self.cached_prod.wrapping_sub(self.cached_cons);
        }
        ready.min(want)
    }

    /// Producer side: the index of the `i`-th slot past those published;
    /// `i` must be below what [`Cursor::free`] returned.
    pub(super) fn prod_index(&self, i: u32) -> u32 {
        debug_assert!(i < self.cached_cons.wrapping_sub(self.cached_prod));
        self.cached_prod.wrapping_add(i)
    }

    /// Consumer side: the index of the `i`-th entry not yet released; `i`
    /// must be below what [`Cursor::available`] returned.
    pub(super) fn cons_index(&self, i: u32) -> u32 {
        debug_assert!(i < self.cached_prod.wrapping_sub(self.cached_cons));
        self.cached_cons.wrapping_add(i)
    }

    /// Producer side: marks `n` more slots written; returns the new
    /// producer index to publish.
    pub(super) fn produce(&mut self, n: u32) -> u32 {
        self.cached_prod = self.cached_prod.wrapping_add(n);
        self.cached_prod
    }

    /// Consumer side: marks `n` more entries read; returns the new consumer
    /// index to publish.
    pub(super) fn consume(&mut self, n: u32) -> u32 {
        self.cached_cons = self.cached_cons.wrapping_add(n);
        self.cached_cons
    }

    /// Producer side: entries published but not yet taken by the consumer,
    /// given the shared consumer index.
    pub(super) fn outstanding(&self, consumer: u32) -> u32 {
        self.cached_prod.wrapping_sub(consumer)
    }

    /// The slot of index `idx`.
    pub(super) fn slot(&self, idx: u32) -> usize {
        (idx & (self.size - 1)) as usize
    }
}

/// One ring mapped from the socket, with entries of type `T` (`u64` UMEM
/// offsets for fill/completion, `xdp_desc` for receive/transmit). Unmapped
/// on drop.
pub(super) struct Ring<T> {
    map: NonNull<u8>,
    map_len: usize,
    producer: NonNull<AtomicU32>,
    consumer: NonNull<AtomicU32>,
    flags: NonNull<AtomicU32>,
    desc: NonNull<T>,
    cursor: Cursor,
    _entries: PhantomData<T>,
}

/// Which side of a ring this process is.
#[derive(Clone, Copy)]
enum Side {
    Producer,
    Consumer,
}

impl<T: Copy> Ring<T> {
    /// Maps the ring at page offset `pgoff` of socket `fd`, with `size`
    /// entries and the layout `off` from `XDP_MMAP_OFFSETS`.
    fn map(
        fd: RawFd,
        pgoff: u64,
        size: u32,
        off: &libc::xdp_ring_offset,
        side: Side,
    ) -> io::Result<Ring<T>> {
        let desc_off = usize::try_from(off.desc).map_err(io::Error::other)?;
        let map_len = desc_off + size as usize * size_of::<T>();
        let pgoff = libc::off_t::try_from(pgoff).map_err(io::Error::other)?;
        // SAFETY: a shared mapping of the socket's ring at the offset the
        // kernel documents for it, no address hint; the kernel checks the
        // length against the ring it allocated. The result is checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let Some(map) = NonNull::new(base.cast::<u8>()) else {
            return Err(io::Error::other("mmap returned null"));
        };
        // Owned from here on: dropping `r` unmaps. The pointers are fixed
        // up (and checked) below before anything reads through them.
        let mut r = Ring {
            map,
            map_len,
            producer: map.cast(),
            consumer: map.cast(),
            flags: map.cast(),
            desc: map.cast(),
            cursor: Cursor::consumer(size, 0, 0),
            _entries: PhantomData,
        };
        r.producer = r.field(off.producer, size_of::<u32>())?;
        r.consumer = r.field(off.consumer, size_of::<u32>())?;
        r.flags = r.field(off.flags, size_of::<u32>())?;
        r.desc = r.field(off.desc, size as usize * size_of::<T>())?;
        let (p, c) = (r.load_producer(), r.load_consumer());
        r.cursor = match side {
            Side::Producer => Cursor::producer(size, p, c),
            Side::Consumer => Cursor::consumer(size, p, c),
        };
        Ok(r)
    }

    /// A pointer to the `len` bytes at offset `o` of the mapping, checked
    /// to lie inside it and to be aligned for `U`.
    fn field<U>(&self, o: u64, len: usize) -> io::Result<NonNull<U>> {
        let bad = || io::Error::other(format!("ring field at offset {o} is outside the mapping"));
        let o = usize::try_from(o).map_err(|_| bad())?;
        if !matches!(o.checked_add(len), Some(end) if end <= self.map_len) {
            return Err(bad());
        }
        if o % std::mem::align_of::<U>() != 0 {
            return Err(io::Error::other(format!(
                "ring field at offset {o} is misaligned"
            )));
        }
        // SAFETY: o + len <= map_len, so the pointer stays in the mapping;
        // the mapping is page aligned and o a multiple of U's alignment.
        Ok(unsafe { self.map.add(o) }.cast())
    }

    fn load_producer(&self) -> u32 {
        // SAFETY: `producer` points at the kernel-aligned u32 producer word
        // inside our live mapping; the kernel only accesses it atomically.
        unsafe { self.producer.as_ref() }.load(Ordering::Acquire)
    }

    fn load_consumer(&self) -> u32 {
        // SAFETY: as in `load_producer`, for the consumer word.
        unsafe { self.consumer.as_ref() }.load(Ordering::Acquire)
    }

    /// Whether the kernel asked for a wakeup syscall (`XDP_RING_NEED_WAKEUP`).
    pub(super) fn needs_wakeup(&self) -> bool {
        // SAFETY: as in `load_producer`, for the flags word. A plain
        // (relaxed) read, as libxdp's `xsk_ring_prod__needs_wakeup`.
        let f = unsafe { self.flags.as_ref() }.load(Ordering::Relaxed);
        f & libc::XDP_RING_NEED_WAKEUP != 0
    }

    // ---- producer side (fill, transmit) ----

    /// Free slots (possibly more than `want`); reads the shared consumer
    /// only when fewer than `want` are known free.
    pub(super) fn free(&mut self, want: u32) -> u32 {
        let consumer = self.consumer;
        self.cursor.free(want, || {
            // SAFETY: as in `load_consumer`.
            unsafe { consumer.as_ref() }.load(Ordering::Acquire)
        })
    }

    /// Writes `value` into the `i`-th free slot; `i` must be below what
    /// [`Ring::free`] returned.
    pub(super) fn write(&mut self, i: u32, value: T) {
        let slot = self.cursor.slot(self.cursor.prod_index(i));
        // SAFETY: slot < size, so the entry lies in the mapped array; the
        // slot is free (i < free), so the kernel does not read it until the
        // producer index published by `submit` covers it.
        unsafe { self.desc.add(slot).write(value) };
    }

    /// Publishes the first `n` written slots to the kernel (Release).
    pub(super) fn submit(&mut self, n: u32) {
        let p = self.cursor.produce(n);
        // SAFETY: as in `load_producer`; only this side stores the producer.
        unsafe { self.producer.as_ref() }.store(p, Ordering::Release);
    }

    /// Entries published that the kernel has not consumed yet.
    pub(super) fn outstanding(&self) -> u32 {
        self.cursor.outstanding(self.load_consumer())
    }

    // ---- consumer side (completion, receive) ----

    /// Entries ready to read, at most `want`.
    pub(super) fn available(&mut self, want: u32) -> u32 {
        let producer = self.producer;
        self.cursor.available(want, || {
            // SAFETY: as in `load_producer`.
            unsafe { producer.as_ref() }.load(Ordering::Acquire)
        })
    }

    /// The `i`-th ready entry; `i` must be below what
    /// [`Ring::available`] returned.
    pub(super) fn read(&self, i: u32) -> T {
        let slot = self.cursor.slot(self.cursor.cons_index(i));
        // SAFETY: slot < size, so the entry lies in the mapped array; the
        // kernel published it (Acquire load of the producer in `available`)
        // and does not rewrite it until `release` hands the slot back.
        unsafe { self.desc.add(slot).read() }
    }

    /// Hands the first `n` read entries back to the kernel (Release).
    pub(super) fn release(&mut self, n: u32) {
        let c = self.cursor.consume(n);
        // SAFETY: as in `load_consumer`; only this side stores the consumer.
        unsafe { self.consumer.as_ref() }.store(c, Ordering::Release);
    }
}

impl<T> Drop for Ring<T> {
    fn drop(&mut self) {
        // SAFETY: map/map_len describe the mapping made in `Ring::map`,
        // unmapped nowhere else; no reference into it outlives the ring.
        unsafe { libc::munmap(self.map.as_ptr().cast(), self.map_len) };
    }
}

/// Geometry of a [`Socket`].
pub(super) struct Config {
    /// Entries in each of the four rings (a power of two).
    pub ring_size: u32,
    /// Bytes per UMEM frame.
    pub frame_size: u32,
    /// Bind in copy mode even when zero-copy is possible.
    pub force_copy: bool,
}

/// An XDP socket with its own UMEM and all four rings mapped, not yet bound.
/// Field order is drop order: rings are unmapped before the socket closes.
pub(super) struct Socket {
    pub fill: Ring<u64>,
    pub comp: Ring<u64>,
    pub rx: Ring<libc::xdp_desc>,
    pub tx: Ring<libc::xdp_desc>,
    fd: OwnedFd,
    bind_flags: u16,
}

impl Socket {
    /// Creates the socket, registers the `len` bytes at `base` as its UMEM
    /// (chunks of `cfg.frame_size`) and maps the rings. Errors name the step
    /// and keep the raw errno; `EAFNOSUPPORT` from the first step means no
    /// AF_XDP in this kernel.
    ///
    /// # Safety
    /// `base` must start a page-aligned, writable mapping of at least `len`
    /// bytes that the caller keeps mapped, and accesses only as frames the
    /// kernel has handed over, until the returned socket is dropped: the
    /// kernel writes received frames into it.
    pub(super) unsafe fn new(
        base: NonNull<u8>,
        len: usize,
        cfg: &Config,
    ) -> Result<Socket, (&'static str, io::Error)> {
        // SAFETY: plain syscall with constant arguments.
        let raw =
            cvt(unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })
                .map_err(|e| ("AF_XDP socket", e))?;
        // SAFETY: socket() just returned this descriptor; nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let sfd = fd.as_raw_fd();
        let reg = libc::xdp_umem_reg {
            addr: base.as_ptr() as u64,
            len: len as u64,
            chunk_size: cfg.frame_size,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setsockopt(sfd, libc::SOL_XDP, libc::XDP_UMEM_REG, &reg)
            .map_err(|e| ("UMEM registration", e))?;
        let size = cfg.ring_size;
        for (opt, what) in [
            (libc::XDP_UMEM_FILL_RING, "fill ring size"),
            (libc::XDP_UMEM_COMPLETION_RING, "completion ring size"),
            (libc::XDP_RX_RING, "rx ring size"),
            (libc::XDP_TX_RING, "tx ring size"),
        ] {
            setsockopt(sfd, libc::SOL_XDP, opt, &size).map_err(|e| (what, e))?;
        }
        let off = mmap_offsets(sfd).map_err(|e| ("XDP_MMAP_OFFSETS", e))?;
        let fill = Ring::map(
            sfd,
            libc::XDP_UMEM_PGOFF_FILL_RING,
            size,
            &off.fr,
            Side::Producer,
        )
        .map_err(|e| ("mmap fill ring", e))?;
        let comp = Ring::map(
            sfd,
            libc::XDP_UMEM_PGOFF_COMPLETION_RING,
            size,
            &off.cr,
            Side::Consumer,
        )
        .map_err(|e| ("mmap completion ring", e))?;
        let rx = Ring::map(
            sfd,
            libc::XDP_PGOFF_RX_RING as u64,
            size,
            &off.rx,
            Side::Consumer,
        )
        .map_err(|e| ("mmap rx ring", e))?;
        let tx = Ring::map(
            sfd,
            libc::XDP_PGOFF_TX_RING as u64,
            size,
            &off.tx,
            Side::Producer,
        )
        .map_err(|e| ("mmap tx ring", e))?;
        let mut bind_flags = libc::XDP_USE_NEED_WAKEUP;
        if cfg.force_copy {
            bind_flags |= libc::XDP_COPY;
        }
        Ok(Socket {
            fill,
            comp,
            rx,
            tx,
            fd,
            bind_flags,
        })
    }

    /// Binds the socket to queue `queue` of interface `ifindex`.
    pub(super) fn bind(&self, ifindex: u32, queue: u32) -> io::Result<()> {
        let addr = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            sxdp_flags: self.bind_flags,
            sxdp_ifindex: ifindex,
            sxdp_queue_id: queue,
            sxdp_shared_umem_fd: 0,
        };
        // SAFETY: addr is a live, initialised sockaddr_xdp of the size passed.
        cvt(unsafe {
            libc::bind(
                self.fd.as_raw_fd(),
                (&addr as *const libc::sockaddr_xdp).cast(),
                size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
            )
        })
        .map(|_| ())
    }

    /// The socket's `XDP_STATISTICS`.
    pub(super) fn statistics(&self) -> io::Result<libc::xdp_statistics> {
        let mut s = libc::xdp_statistics {
            rx_dropped: 0,
            rx_invalid_descs: 0,
            tx_invalid_descs: 0,
            rx_ring_full: 0,
            rx_fill_ring_empty_descs: 0,
            tx_ring_empty_descs: 0,
        };
        getsockopt(self.fd.as_raw_fd(), libc::XDP_STATISTICS, &mut s)?;
        Ok(s)
    }

    /// Asks the kernel to transmit what is on the tx ring: an empty
    /// non-blocking `sendto`. Errors (`EAGAIN`, `ENOBUFS`, `EBUSY`) only mean
    /// "try again later", which the next burst does.
    pub(super) fn wake_tx(&self) {
        // SAFETY: an empty send with no buffer and no address.
        let _ = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
    }

    /// Wakes the kernel to use the fill ring: one `poll` with no timeout.
    pub(super) fn wake_fill(&self) {
        let mut p = libc::pollfd {
            fd: self.fd.as_raw_fd(),
            events: 0,
            revents: 0,
        };
        // SAFETY: one live pollfd, zero timeout. The result does not matter.
        let _ = unsafe { libc::poll(&mut p, 1, 0) };
    }
}

impl AsRawFd for Socket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// `getsockopt(SOL_XDP, name)` into `value`, which must be exactly the
/// kernel's structure for `name`.
fn getsockopt<T>(fd: RawFd, name: c_int, value: &mut T) -> io::Result<()> {
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: value and len are live and describe a buffer of `len` bytes;
    // the kernel writes at most `len` bytes.
    cvt(unsafe { libc::getsockopt(fd, libc::SOL_XDP, name, (value as *mut T).cast(), &mut len) })?;
    if len as usize != size_of::<T>() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!(
                "SOL_XDP option {name}: kernel returned {len} bytes, expected {}",
                size_of::<T>()
            ),
        ));
    }
    Ok(())
}

/// The rings' layouts. Kernels before 5.4 answer without the `flags`
/// offsets (no need-wakeup support); those are refused.
fn mmap_offsets(fd: RawFd) -> io::Result<libc::xdp_mmap_offsets> {
    let zero = libc::xdp_ring_offset {
        producer: 0,
        consumer: 0,
        desc: 0,
        flags: 0,
    };
    let mut off = libc::xdp_mmap_offsets {
        rx: zero,
        tx: zero,
        fr: zero,
        cr: zero,
    };
    getsockopt(fd, libc::XDP_MMAP_OFFSETS, &mut off)?;
    Ok(off)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn a_fresh_producer_ring_is_all_free() {
        let mut c = Cursor::producer(8, 0, 0);
        assert_eq!(c.free(1, || unreachable!("cache is enough")), 8);
        assert_eq!(c.prod_index(0), 0);
        assert_eq!(c.outstanding(0), 0);
    }

    #[test]
    fn producer_refreshes_consumer_only_when_short() {
        let mut c = Cursor::producer(8, 0, 0);
        assert_eq!(c.produce(8), 8);
        assert_eq!(c.outstanding(0), 8);
        // Full: the kernel consumed nothing yet.
        assert_eq!(c.free(1, || 0), 0);
        // The kernel took 3.
        assert_eq!(c.free(1, || 3), 3);
        // Cached answer is enough: no load.
        assert_eq!(c.free(2, || unreachable!()), 3);
        assert_eq!(c.prod_index(1), 9);
        assert_eq!(c.slot(c.prod_index(1)), 1);
        assert_eq!(c.outstanding(3), 5);
    }

    #[test]
    fn consumer_sees_only_published_entries() {
        let mut c = Cursor::consumer(8, 0, 0);
        assert_eq!(c.available(4, || 0), 0);
        assert_eq!(c.available(4, || 6), 4);
        assert_eq!(c.cons_index(3), 3);
        assert_eq!(c.consume(4), 4);
        // Two still cached: no load, even if the kernel produced more.
        assert_eq!(c.available(8, || unreachable!()), 2);
        assert_eq!(c.consume(2), 6);
        assert_eq!(c.available(8, || 14), 8);
        assert_eq!(c.slot(c.cons_index(2)), 0);
    }

    #[test]
    fn indices_wrap_at_u32() {
        let start = u32::MAX - 2;
        let mut p = Cursor::producer(4, start, start);
        assert_eq!(p.free(4, || unreachable!()), 4);
        assert_eq!(p.slot(p.prod_index(0)), 1); // 0xffff_fffd & 3
        assert_eq!(p.slot(p.prod_index(3)), 0); // wrapped to 0
        let published = p.produce(4);
        assert_eq!(published, 1);
        assert_eq!(p.outstanding(start), 4);
        assert_eq!(p.free(1, || start), 0);
        assert_eq!(p.free(1, || start.wrapping_add(4)), 4);

        let mut c = Cursor::consumer(4, start, start);
        assert_eq!(c.available(16, || published), 4);
        assert_eq!(c.cons_index(3), 0);
        assert_eq!(c.consume(4), published);
        assert_eq!(c.available(16, || published), 0);
    }

    #[test]
    fn kernel_structures_have_the_uapi_sizes() {
        assert_eq!(size_of::<libc::xdp_desc>(), 16);
        assert_eq!(size_of::<libc::xdp_umem_reg>(), 32);
        assert_eq!(size_of::<libc::xdp_mmap_offsets>(), 128);
        assert_eq!(size_of::<libc::xdp_statistics>(), 48);
        assert_eq!(size_of::<libc::sockaddr_xdp>(), 16);
    }
}
