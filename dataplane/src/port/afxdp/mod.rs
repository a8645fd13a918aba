//! AF_XDP port: a Linux interface driven through an XDP socket, the kernel's
//! fast path to userspace that skips the network stack.
//!
//! Three pieces make an AF_XDP port:
//!
//! * a **UMEM**, one anonymous mapping cut into equal frames that the kernel
//!   and railyard share, with its fill and completion rings;
//! * an **XDP socket** bound to queue 0 of the interface, with its receive
//!   and transmit rings (set up and driven by the small `xsk` module
//!   over `libc`; no libbpf or libxdp is needed to build or run);
//! * a tiny **XDP program** redirecting every frame of queue 0 into the
//!   socket through an `XSKMAP`. Frames of other queues (or arriving before
//!   the socket is in the map) fall back to `XDP_PASS`, i.e. to the kernel.
//!
//! The program is loaded and attached here with the raw `bpf(2)` syscall: no
//! maintained pure-Rust crate loads a handful of hand-written instructions
//! without either a BPF compiler toolchain (aya's loaders expect an ELF
//! object) or the C libbpf. It is attached through a BPF *link*, so closing
//! the link's descriptor (dropping the port, or the process dying) detaches
//! it: no program is left behind on the interface. Native (driver) mode is
//! tried first, generic (skb) mode second.
//!
//! Frames are copied between the UMEM and pool buffers in both directions,
//! so pool buffers never belong to the kernel and `rx_burst`/`tx_burst` keep
//! the same contract as the other backends. The UMEM is split in two fixed
//! halves: the receive half lives in the fill ring, the kernel or the receive
//! ring, and goes back to the fill ring once copied out (the kernel may not
//! yet have said it took a frame off the fill ring when it hands it over, so
//! a frame can wait for room in a small stash until the next poll); the
//! transmit half sits on a free list, goes out
//! through the transmit ring and comes back through the completion ring,
//! which `tx_burst` reaps every call.
//!
//! Bind mode: by default the kernel picks zero-copy when the driver supports
//! it and copy mode otherwise (a veth only does copy mode); copy mode can be
//! forced. In copy mode the kernel transmits only when asked, so every
//! `tx_burst` that queued frames ends with one `sendto`; in zero-copy mode
//! only when the ring says it needs a wakeup. On receive, a `poll` wakeup is
//! made only when the fill ring's need-wakeup flag is set.
//!
//! Limits worth knowing: one queue (queue 0) — on a multi-queue device only
//! traffic the NIC steers to queue 0 reaches railyard (`ethtool -L DEV
//! combined 1`, or a veth created with `numrxqueues 1 numtxqueues 1`); a
//! frame must fit a UMEM frame less the kernel's XDP headroom (about 3.8 KB
//! with 4 KiB frames, so no jumbo frames); and the interface is put in
//! promiscuous mode through a packet-socket membership that the kernel
//! undoes when the port closes.

// This module talks to the kernel through bpf(2), sockets, ioctls and shared
// memory rings, none of which has a safe wrapper in our dependencies.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{c_int, c_long};
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

mod xsk;

use xsk::Socket;

use crate::clock::Nanos;
use crate::packet::{copy_bytes, Burst, Pool, BURST_SIZE, MAX_FRAME};
use crate::port::refresh::RefreshTimer;
use crate::port::sys::{ctx, cvt, hardware_address, interface_index, link_state, setsockopt};
use crate::port::{IoCounters, Port, TxDone};
use crate::wire::MacAddr;

/// Ring and UMEM geometry of an [`AfXdpPort`].
///
/// Sizing: the UMEM holds `2 * ring_size` frames of `frame_size` bytes; one
/// half feeds the fill ring (so up to `ring_size` frames can wait between two
/// polls before the kernel drops), the other half is for frames in flight on
/// transmit. The defaults, 2048 and 4096 bytes, give 4096 frames = 16 MiB
/// per port, about 2 ms of buffering at 1 Mpps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfXdpOptions {
    /// Entries in each of the fill, completion, receive and transmit rings;
    /// a power of two.
    pub ring_size: u32,
    /// Bytes per UMEM frame: 2048 or 4096 (the kernel wants a power of two
    /// no larger than a page).
    pub frame_size: u32,
    /// Bind in copy mode even when the driver could do zero-copy.
    pub force_copy: bool,
}

impl Default for AfXdpOptions {
    fn default() -> Self {
        AfXdpOptions {
            ring_size: 2048,
            frame_size: 4096,
            force_copy: false,
        }
    }
}

impl AfXdpOptions {
    /// These options with a receive half of about `mib` MiB: as many
    /// frames as fit, rounded down to a power of two, at least 64 and at
    /// most 65,536. Like an af-packet ring's size, it is how long a port may
    /// go unread (a descheduled worker) before the kernel drops; the UMEM
    /// takes twice it (its transmit half).
    pub fn with_ring_mib(mut self, mib: u32) -> AfXdpOptions {
        let frames = (u64::from(mib) << 20) / u64::from(self.frame_size.max(1));
        let frames = u32::try_from(frames).unwrap_or(u32::MAX).clamp(64, 1 << 16);
        self.ring_size = 1 << frames.ilog2();
        self
    }

    /// Checks the geometry before the kernel sees it, with errors that say
    /// which field is wrong.
    ///
    /// # Errors
    /// `InvalidInput` naming the offending field.
    pub fn validate(&self) -> io::Result<()> {
        let bad = |msg: &str| Err(io::Error::new(io::ErrorKind::InvalidInput, msg.to_string()));
        if !self.ring_size.is_power_of_two() || (self.ring_size as usize) < 2 * BURST_SIZE {
            return bad(&format!(
                "ring_size must be a power of two of at least {}",
                2 * BURST_SIZE
            ));
        }
        if self.ring_size > 1 << 16 {
            return bad("ring_size must be at most 65536");
        }
        if self.frame_size != 2048 && self.frame_size != 4096 {
            return bad("frame_size must be 2048 or 4096");
        }
        Ok(())
    }

    fn frames(&self) -> u32 {
        2 * self.ring_size
    }
}

/// The UMEM's memory, unmapped on drop.
struct Area {
    base: NonNull<u8>,
    len: usize,
}

impl Area {
    fn new(len: usize) -> io::Result<Area> {
        // SAFETY: an anonymous private mapping with no address hint; the
        // result is checked before use.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Area {
            base: NonNull::new(base.cast())
                .ok_or_else(|| io::Error::other("mmap returned null"))?,
            len,
        })
    }

    /// The bytes `[addr, addr + len)` of the UMEM, or `None` when out of range.
    fn bytes(&self, addr: u64, len: usize) -> Option<*mut u8> {
        let start = usize::try_from(addr).ok()?;
        if start.checked_add(len)? > self.len {
            return None;
        }
        // SAFETY: start + len <= self.len, so the offset stays in the mapping.
        Some(unsafe { self.base.as_ptr().add(start) })
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        // SAFETY: base/len describe a mapping made by mmap in `Area::new` and
        // not unmapped elsewhere; the socket that registered it is closed
        // first (field order in AfXdpPort), and the kernel holds its own
        // page references while the UMEM is registered anyway.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A Linux interface opened as a switch port through AF_XDP (see the module
/// doc).
pub struct AfXdpPort {
    // Field order matters for Drop: detach the program (close the link)
    // first, then the BPF objects, the socket (rings first), and last the
    // UMEM memory.
    _link: OwnedFd,
    _prog: OwnedFd,
    _map: OwnedFd,
    sock: Socket,
    area: Area,
    /// A packet socket bound to nothing: holds the promiscuous membership
    /// and serves the interface ioctls (an XDP socket answers none).
    ctl: OwnedFd,
    /// Transmit-half frames not in flight (UMEM offsets). Preallocated with
    /// room for every transmit frame; never grows past it.
    tx_free: Vec<u64>,
    /// Receive-half frames copied out but not yet back on the fill ring.
    /// The kernel publishes how far it has read the fill ring lazily (in
    /// copy mode it may have handed frames to the receive ring before it
    /// says it took them off the fill ring), so the ring can briefly have
    /// less room than the frames just received; they wait here for the next
    /// poll instead of being lost to the UMEM. Preallocated with room for
    /// every receive frame.
    refill: Vec<u64>,
    frame_size: u32,
    zero_copy: bool,
    attach_mode: &'static str,
    ifname: String,
    ifindex: u32,
    mac: MacAddr,
    counters: IoCounters,
    link: Cell<bool>,
    refresh: RefreshTimer,
}

// SAFETY: the socket, its ring mappings (raw pointers into memory shared
// only with the kernel) and the UMEM mapping are owned by this one port,
// nothing is borrowed from outside, and the `Cell`s
// are only touched through `&self`/`&mut self` of the port. Moving the port
// to another thread moves sole access to all of it.
unsafe impl Send for AfXdpPort {}

impl AfXdpPort {
    /// Opens `ifname` (which must exist and be Ethernet) on queue 0, loads
    /// and attaches the redirect program, and fills the fill ring. Needs
    /// root, or CAP_NET_ADMIN + CAP_BPF (+ CAP_NET_RAW for promiscuous mode).
    ///
    /// # Errors
    /// Invalid options, a missing or non-Ethernet interface, missing
    /// privileges (`PermissionDenied`), a kernel without AF_XDP
    /// (`Unsupported`), or the interface refusing XDP; the message names
    /// the step.
    pub fn open(ifname: &str, opts: AfXdpOptions) -> io::Result<Self> {
        opts.validate()?;
        let ifindex = interface_index(ifname)?;

        // Protocol 0: this packet socket receives nothing.
        // SAFETY: plain syscall with constant arguments.
        let raw = cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })
        .map_err(|e| ctx(ifname, "control socket (needs CAP_NET_RAW)", e))?;
        // SAFETY: socket() just returned this descriptor; nothing else owns it.
        let ctl = unsafe { OwnedFd::from_raw_fd(raw) };
        let mac = hardware_address(ctl.as_raw_fd(), ifname)?;
        let mreq = libc::packet_mreq {
            mr_ifindex: ifindex as c_int,
            mr_type: libc::PACKET_MR_PROMISC as u16,
            mr_alen: 0,
            mr_address: [0; 8],
        };
        setsockopt(
            ctl.as_raw_fd(),
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mreq,
        )
        .map_err(|e| ctx(ifname, "PACKET_ADD_MEMBERSHIP promiscuous", e))?;
        warn_if_multiqueue(ifname);

        let frames = opts.frames();
        let area = Area::new(frames as usize * opts.frame_size as usize)
            .map_err(|e| ctx(ifname, "mmap UMEM", e))?;
        let cfg = xsk::Config {
            ring_size: opts.ring_size,
            frame_size: opts.frame_size,
            force_copy: opts.force_copy,
        };
        // SAFETY: the area is a fresh page-aligned mapping of exactly
        // frames * frame_size bytes, kept alive by the port until after the
        // socket is dropped (field order), and the port touches a frame only
        // while it is not the kernel's (between rx and fill, or between
        // the free list and the tx ring).
        let sock = unsafe { Socket::new(area.base, area.len, &cfg) };
        let mut sock = sock.map_err(|(what, e)| {
            if e.raw_os_error() == Some(libc::EAFNOSUPPORT) {
                io::Error::new(
                    io::ErrorKind::Unsupported,
                    format!(
                        "{ifname}: this kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS); use af-packet"
                    ),
                )
            } else {
                ctx(ifname, what, e)
            }
        })?;

        // Receive half: frames [0, ring_size), all in the fill ring.
        let fs = u64::from(opts.frame_size);
        {
            let n = sock.fill.free(opts.ring_size).min(opts.ring_size);
            for i in 0..n {
                sock.fill.write(i, u64::from(i) * fs);
            }
            sock.fill.submit(n);
            if n != opts.ring_size {
                return Err(io::Error::other(format!(
                    "{ifname}: fill ring took {n} of {} frames",
                    opts.ring_size
                )));
            }
        }
        // Transmit half: frames [ring_size, 2 * ring_size) on the free list.
        let mut tx_free = Vec::with_capacity(opts.ring_size as usize);
        tx_free.extend((u64::from(opts.ring_size)..u64::from(frames)).map(|i| i * fs));

        // Queue 0 of the interface, zero-copy when the driver can (unless
        // forced to copy), copy mode otherwise.
        bind_queue(&sock, ifindex).map_err(|e| {
            let what = if e.raw_os_error() == Some(libc::EBUSY) {
                "bind AF_XDP socket to queue 0 (another AF_XDP socket holds the queue)"
            } else {
                "bind AF_XDP socket to queue 0"
            };
            ctx(ifname, what, e)
        })?;
        let zero_copy = xdp_options(sock.as_raw_fd())
            .map(|f| f & libc::XDP_OPTIONS_ZEROCOPY != 0)
            .unwrap_or(false);

        let map = bpf::create_xskmap(1).map_err(|e| ctx(ifname, "BPF_MAP_CREATE xskmap", e))?;
        bpf::map_update(map.as_raw_fd(), 0, sock.as_raw_fd() as u32)
            .map_err(|e| ctx(ifname, "BPF_MAP_UPDATE_ELEM xskmap[0]", e))?;
        let prog = bpf::load_redirect_prog(map.as_raw_fd())
            .map_err(|e| ctx(ifname, "BPF_PROG_LOAD", e))?;
        let (link, attach_mode) =
            match bpf::attach_xdp(prog.as_raw_fd(), ifindex, bpf::XDP_FLAGS_DRV_MODE) {
                Ok(l) => (l, "native"),
                Err(native) => {
                    match bpf::attach_xdp(prog.as_raw_fd(), ifindex, bpf::XDP_FLAGS_SKB_MODE) {
                        Ok(l) => (l, "generic"),
                        Err(e) => {
                            return Err(ctx(
                                ifname,
                                &format!(
                                    "attach XDP program (native mode: {native}; generic mode)"
                                ),
                                e,
                            ))
                        }
                    }
                }
            };
        tracing::info!(
            ifname,
            mode = if zero_copy { "zero-copy" } else { "copy" },
            xdp = attach_mode,
            "AF_XDP port open on queue 0"
        );

        let link_up = link_state(ctl.as_raw_fd(), ifname);
        Ok(AfXdpPort {
            _link: link,
            _prog: prog,
            _map: map,
            sock,
            area,
            ctl,
            tx_free,
            refill: Vec::with_capacity(opts.ring_size as usize),
            frame_size: opts.frame_size,
            zero_copy,
            attach_mode,
            ifname: ifname.to_string(),
            ifindex,
            mac,
            counters: IoCounters::default(),
            link: Cell::new(link_up),
            refresh: RefreshTimer::new(),
        })
    }

    /// The interface name this port was opened on.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// The kernel's index of the interface.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Whether the socket is bound in zero-copy mode (false: copy mode).
    pub fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// How the XDP program is attached: `"native"` (driver) or `"generic"`.
    pub fn attach_mode(&self) -> &'static str {
        self.attach_mode
    }

    /// Frames the kernel dropped on receive so far, from the socket's
    /// `XDP_STATISTICS`: no free frame in the fill ring (`rx_dropped`, which
    /// also counts frames too long for a UMEM frame) plus receive ring full
    /// (`rx_ring_full`). `rx_fill_ring_empty_descs` is not added: in copy
    /// mode each such event is already one `rx_dropped`, and in zero-copy
    /// mode it counts driver refill attempts, not frames.
    pub fn kernel_drops(&self) -> u64 {
        match self.sock.statistics() {
            Ok(s) => s.rx_dropped + s.rx_ring_full,
            Err(_) => 0,
        }
    }

    /// Re-reads link state when the cached value is older than
    /// [`REFRESH`](crate::port::refresh::REFRESH).
    fn refresh_if_due(&self) {
        if !self.refresh.due() {
            return;
        }
        let up = link_state(self.ctl.as_raw_fd(), &self.ifname);
        self.link.set(up);
    }

    /// Moves transmitted frames from the completion ring to the free list.
    fn reap_completions(&mut self) {
        let mask = !(u64::from(self.frame_size) - 1);
        let n = self.sock.comp.available(self.tx_free.capacity() as u32);
        for i in 0..n {
            let addr = self.sock.comp.read(i);
            // Cannot exceed the capacity: every completed frame left the
            // list on transmit. Checked anyway so a confused kernel cannot
            // make the list grow.
            if self.tx_free.len() < self.tx_free.capacity() {
                self.tx_free.push(addr & mask);
            }
        }
        if n > 0 {
            self.sock.comp.release(n);
        }
    }

    /// Puts received frames back on the fill ring, as many as it has room
    /// for; the rest stay in `refill` for the next poll.
    fn refill_fill_ring(&mut self) {
        let free = self.sock.fill.free(self.refill.len() as u32) as usize;
        let put = self.refill.len().min(free);
        if put == 0 {
            return;
        }
        let from = self.refill.len() - put;
        for (i, addr) in self.refill[from..].iter().enumerate() {
            self.sock.fill.write(i as u32, *addr);
        }
        self.sock.fill.submit(put as u32);
        self.refill.truncate(from);
    }

    /// Asks the kernel to transmit what is on the tx ring: always in copy
    /// mode (the kernel only sends from `sendto`), in zero-copy mode only
    /// when the ring asks for it.
    fn kick_tx(&self) {
        if !self.zero_copy && self.sock.tx.outstanding() == 0 {
            return;
        }
        if !self.zero_copy || self.sock.tx.needs_wakeup() {
            self.sock.wake_tx();
        }
    }
}

/// How long `open` waits for the kernel to release queue 0 from a socket
/// that was just closed.
const BIND_BUSY_WAIT: Duration = Duration::from_secs(2);

/// Binds the socket to its queue. The kernel releases a closed socket's
/// hold on the queue asynchronously (a deferred work item), so reopening a
/// port right after dropping it (a reload, a test) briefly sees `EBUSY`;
/// that is retried for up to [`BIND_BUSY_WAIT`].
fn bind_queue(sock: &Socket, ifindex: u32) -> io::Result<()> {
    let deadline = Instant::now() + BIND_BUSY_WAIT;
    loop {
        match sock.bind(ifindex, 0) {
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            r => return r,
        }
    }
}

/// Reads `XDP_OPTIONS` (the zero-copy flag) of a bound XDP socket.
fn xdp_options(fd: RawFd) -> io::Result<u32> {
    let mut flags = 0u32;
    let mut len = size_of::<u32>() as libc::socklen_t;
    // SAFETY: flags and len are live and sized for struct xdp_options (one
    // u32); the kernel writes at most `len` bytes.
    cvt(unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_XDP,
            libc::XDP_OPTIONS,
            (&mut flags as *mut u32).cast(),
            &mut len,
        )
    })?;
    Ok(flags)
}

/// Warns when the interface has more than one receive queue: only queue 0
/// is redirected to railyard.
fn warn_if_multiqueue(ifname: &str) {
    let dir = format!("/sys/class/net/{ifname}/queues");
    let rx = std::fs::read_dir(&dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
                .count()
        })
        .unwrap_or(0);
    if rx > 1 {
        tracing::warn!(
            ifname,
            rx_queues = rx,
            "AF_XDP port serves queue 0 only; frames on other queues go to the kernel \
             (reduce to one queue: `ethtool -L {ifname} combined 1`)"
        );
    }
}

impl Port for AfXdpPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        self.refresh_if_due();
        // Copy mode: frames still on the tx ring after an earlier sendto was
        // pushed back go out now, without waiting for the next tx_burst.
        if !self.zero_copy && self.sock.tx.outstanding() > 0 {
            self.sock.wake_tx();
        }
        let want = (BURST_SIZE - burst.len()) as u32;
        if want == 0 {
            return 0;
        }
        let mask = !(u64::from(self.frame_size) - 1);
        let mut n = 0;
        let mut n_read = 0;
        let avail = self.sock.rx.available(want);
        for i in 0..avail {
            let Some(mut pkt) = pool.alloc() else {
                // Leave the rest on the ring; the pool counts the miss.
                break;
            };
            let desc = self.sock.rx.read(i);
            n_read += 1;
            // Cannot exceed the capacity: a receive frame is here, on the
            // fill ring, with the kernel or on the receive ring.
            if self.refill.len() < self.refill.capacity() {
                self.refill.push(desc.addr & mask);
            }
            let len = desc.len as usize;
            let room = pkt.tailroom_mut();
            let fits = len <= room.len().min(MAX_FRAME);
            match self.area.bytes(desc.addr, len) {
                Some(src) if fits => {
                    // SAFETY: [addr, addr + len) lies inside the UMEM
                    // (checked by `bytes`), the kernel handed this frame to
                    // us through the rx ring (read with Acquire) and does
                    // not touch it until it is back on the fill ring;
                    // `room` is a distinct pool buffer of at least `len`
                    // bytes.
                    let src = unsafe { std::slice::from_raw_parts(src, len) };
                    // A small frame is copied in line, not by a call into
                    // the C library.
                    copy_bytes(&mut room[..len], src);
                    pkt.set_len(len);
                    pkt.timestamp = now;
                    burst.push(pkt);
                    n += 1;
                }
                _ => self.counters.rx_dropped += 1,
            }
        }
        if n_read > 0 {
            self.sock.rx.release(n_read);
        }
        if !self.refill.is_empty() {
            self.refill_fill_ring();
        }
        if n_read == 0 && self.sock.fill.needs_wakeup() {
            // Nothing arrived and the kernel asks to be woken to use the
            // fill ring (zero-copy drivers): one poll, no timeout.
            self.sock.wake_fill();
        }
        self.counters.rx_frames += n as u64;
        n
    }

    /// Copies frames from the front of `burst` into free transmit frames and
    /// queues them with one ring update and at most one `sendto`. Frames
    /// longer than a UMEM frame are dropped and counted in `tx_errors`; when
    /// no transmit frame is free the rest stay in `burst`.
    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> TxDone {
        self.reap_completions();
        self.refresh_if_due();
        if !self.link.get() {
            // A down link would keep the frames on the tx ring (the kernel
            // refuses to send) until the UMEM runs out; drop them instead,
            // as the other backends do.
            let n = burst.len();
            let bytes = burst.iter().map(|p| p.len() as u64).sum();
            self.counters.tx_errors += n as u64;
            burst.clear();
            return TxDone {
                sent: 0,
                failed: n,
                failed_bytes: bytes,
            };
        }
        if burst.is_empty() {
            self.kick_tx();
            return TxDone::default();
        }
        let frame_size = self.frame_size as usize;
        let mut taken = 0usize;
        let mut queued = 0u64;
        let mut errors = 0u64;
        let mut error_bytes = 0u64;
        {
            let want = burst.len().min(self.tx_free.len()) as u32;
            let mut slots = self.sock.tx.free(want).min(want);
            for p in burst.iter() {
                let data = p.data();
                if data.len() > frame_size {
                    errors += 1;
                    error_bytes += data.len() as u64;
                    taken += 1;
                    continue;
                }
                if slots == 0 {
                    break;
                }
                let Some(addr) = self.tx_free.pop() else {
                    break;
                };
                let Some(dst) = self.area.bytes(addr, data.len()) else {
                    // Not a frame of ours: cannot happen; keep the list sane.
                    errors += 1;
                    error_bytes += data.len() as u64;
                    taken += 1;
                    continue;
                };
                // SAFETY: [addr, addr + len) is a free transmit frame inside
                // the UMEM (checked by `bytes`); the kernel does not read it
                // until the descriptor is committed below, and `data` is a
                // pool buffer, distinct from the UMEM.
                let dst = unsafe { std::slice::from_raw_parts_mut(dst, data.len()) };
                copy_bytes(dst, data);
                self.sock.tx.write(
                    queued as u32,
                    libc::xdp_desc {
                        addr,
                        len: data.len() as u32,
                        options: 0,
                    },
                );
                slots -= 1;
                queued += 1;
                taken += 1;
            }
            if queued > 0 {
                self.sock.tx.submit(queued as u32);
            }
        }
        crate::packet::free_front(burst, taken);
        self.kick_tx();
        self.counters.tx_frames += queued;
        self.counters.tx_errors += errors;
        debug_assert_eq!(taken as u64, queued + errors);
        TxDone {
            sent: queued as usize,
            failed: errors as usize,
            failed_bytes: error_bytes,
        }
    }

    fn link_up(&self) -> bool {
        self.refresh_if_due();
        self.link.get()
    }

    fn mac(&self) -> Option<MacAddr> {
        Some(self.mac)
    }

    fn io_counters(&self) -> IoCounters {
        let mut c = self.counters;
        c.rx_dropped += self.kernel_drops();
        if let Ok(s) = self.sock.statistics() {
            c.tx_errors += s.tx_invalid_descs;
        }
        c
    }

    fn describe(&self) -> String {
        format!("af-xdp {}", self.ifname)
    }

    /// The XDP socket: readable while its receive ring holds frames.
    fn wake_fds(&self) -> Vec<std::os::fd::RawFd> {
        vec![self.sock.as_raw_fd()]
    }
}

impl std::fmt::Debug for AfXdpPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfXdpPort")
            .field("ifname", &self.ifname)
            .field("ifindex", &self.ifindex)
            .field("mac", &self.mac)
            .field("zero_copy", &self.zero_copy)
            .field("attach_mode", &self.attach_mode)
            .field("counters", &self.counters)
            .finish()
    }
}

/// The redirect program and the `bpf(2)` calls that load and attach it.
mod bpf {
    use super::*;

    const BPF_MAP_CREATE: c_long = 0;
    const BPF_MAP_UPDATE_ELEM: c_long = 2;
    const BPF_PROG_LOAD: c_long = 5;
    const BPF_LINK_CREATE: c_long = 28;

    const BPF_MAP_TYPE_XSKMAP: u32 = 17;
    const BPF_PROG_TYPE_XDP: u32 = 6;
    /// Attach type of an XDP program on a device.
    const BPF_XDP: u32 = 37;
    /// Attach in the driver (native XDP).
    pub(super) const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
    /// Attach in the generic path, after the skb is built.
    pub(super) const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;

    const XDP_PASS: i32 = 2;
    /// Helper `long bpf_redirect_map(map, key, flags)`.
    const BPF_FUNC_REDIRECT_MAP: i32 = 51;
    /// `src_reg` of a 64-bit immediate load that names a map by descriptor.
    const BPF_PSEUDO_MAP_FD: u8 = 1;
    /// Offset of `rx_queue_index` in `struct xdp_md`.
    const XDP_MD_RX_QUEUE_INDEX: i16 = 16;

    /// One BPF instruction, `struct bpf_insn`: opcode, destination and
    /// source registers in one byte (dst in the low nibble on
    /// little-endian), offset, immediate.
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub(super) struct Insn {
        code: u8,
        regs: u8,
        off: i16,
        imm: i32,
    }

    impl Insn {
        const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
            Insn {
                code,
                regs: (src << 4) | (dst & 0x0f),
                off,
                imm,
            }
        }

        /// The instruction as the kernel reads it (little-endian host).
        #[cfg(test)]
        pub(super) fn to_bytes(self) -> [u8; 8] {
            let mut b = [0u8; 8];
            b[0] = self.code;
            b[1] = self.regs;
            b[2..4].copy_from_slice(&self.off.to_le_bytes());
            b[4..8].copy_from_slice(&self.imm.to_le_bytes());
            b
        }
    }

    // Opcode parts (linux/bpf_common.h, linux/bpf.h).
    const BPF_LD: u8 = 0x00;
    const BPF_LDX: u8 = 0x01;
    const BPF_JMP: u8 = 0x05;
    const BPF_ALU64: u8 = 0x07;
    const BPF_W: u8 = 0x00;
    const BPF_DW: u8 = 0x18;
    const BPF_IMM: u8 = 0x00;
    const BPF_MEM: u8 = 0x60;
    const BPF_K: u8 = 0x00;
    const BPF_MOV: u8 = 0xb0;
    const BPF_CALL: u8 = 0x80;
    const BPF_EXIT: u8 = 0x90;

    /// The program, for the XSKMAP with descriptor `map_fd`:
    ///
    /// ```text
    /// r2 = *(u32 *)(r1 + 16)     ; ctx->rx_queue_index
    /// r1 = map_fd ll             ; the XSKMAP (two slots)
    /// r3 = 2                     ; XDP_PASS when the queue has no socket
    /// call bpf_redirect_map
    /// exit                       ; r0: XDP_REDIRECT or XDP_PASS
    /// ```
    pub(super) fn redirect_program(map_fd: RawFd) -> [Insn; 6] {
        [
            Insn::new(BPF_LDX | BPF_MEM | BPF_W, 2, 1, XDP_MD_RX_QUEUE_INDEX, 0),
            Insn::new(BPF_LD | BPF_DW | BPF_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
            Insn::new(0, 0, 0, 0, 0),
            Insn::new(BPF_ALU64 | BPF_MOV | BPF_K, 3, 0, 0, XDP_PASS),
            Insn::new(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
            Insn::new(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
        ]
    }

    /// `bpf(cmd, attr, size_of(attr))`, returning a new descriptor (or 0).
    fn sys_bpf<T>(cmd: c_long, attr: &mut T) -> io::Result<c_int> {
        // SAFETY: attr points to a live, initialised `union bpf_attr` prefix
        // of exactly the size passed; the kernel zero-checks the rest of its
        // union and only reads (or, for some commands, writes) within it.
        let r = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                cmd,
                (attr as *mut T).cast::<libc::c_void>(),
                size_of::<T>() as libc::c_uint,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as c_int)
        }
    }

    fn owned(fd: c_int) -> OwnedFd {
        // SAFETY: bpf() just returned this new descriptor; nothing else owns it.
        unsafe { OwnedFd::from_raw_fd(fd) }
    }

    /// `union bpf_attr` for BPF_MAP_CREATE (the fields we use, zero after).
    #[repr(C)]
    #[derive(Default)]
    struct MapCreate {
        map_type: u32,
        key_size: u32,
        value_size: u32,
        max_entries: u32,
        map_flags: u32,
        inner_map_fd: u32,
        numa_node: u32,
        map_name: [u8; 16],
    }

    /// Creates an XSKMAP with `entries` slots (u32 queue → u32 socket fd).
    pub(super) fn create_xskmap(entries: u32) -> io::Result<OwnedFd> {
        let mut attr = MapCreate {
            map_type: BPF_MAP_TYPE_XSKMAP,
            key_size: 4,
            value_size: 4,
            max_entries: entries,
            ..MapCreate::default()
        };
        attr.map_name[..11].copy_from_slice(b"railyard_xs");
        sys_bpf(BPF_MAP_CREATE, &mut attr).map(owned)
    }

    /// `union bpf_attr` for BPF_MAP_UPDATE_ELEM.
    #[repr(C)]
    struct MapUpdate {
        map_fd: u32,
        _pad: u32,
        key: u64,
        value: u64,
        flags: u64,
    }

    /// Sets `map[key] = value` (BPF_ANY).
    pub(super) fn map_update(map: RawFd, key: u32, value: u32) -> io::Result<()> {
        let mut attr = MapUpdate {
            map_fd: map as u32,
            _pad: 0,
            key: &key as *const u32 as u64,
            value: &value as *const u32 as u64,
            flags: 0,
        };
        sys_bpf(BPF_MAP_UPDATE_ELEM, &mut attr).map(|_| ())
    }

    /// `union bpf_attr` for BPF_PROG_LOAD (up to `expected_attach_type`).
    #[repr(C)]
    #[derive(Default)]
    struct ProgLoad {
        prog_type: u32,
        insn_cnt: u32,
        insns: u64,
        license: u64,
        log_level: u32,
        log_size: u32,
        log_buf: u64,
        kern_version: u32,
        prog_flags: u32,
        prog_name: [u8; 16],
        prog_ifindex: u32,
        expected_attach_type: u32,
    }

    /// Loads the redirect program for `map`. On failure, loads it again
    /// with the verifier log on, so the error says why.
    pub(super) fn load_redirect_prog(map: RawFd) -> io::Result<OwnedFd> {
        let insns = redirect_program(map);
        let license = b"GPL\0";
        let mut attr = ProgLoad {
            prog_type: BPF_PROG_TYPE_XDP,
            insn_cnt: insns.len() as u32,
            insns: insns.as_ptr() as u64,
            license: license.as_ptr() as u64,
            expected_attach_type: BPF_XDP,
            ..ProgLoad::default()
        };
        attr.prog_name[..12].copy_from_slice(b"railyard_xsk");
        match sys_bpf(BPF_PROG_LOAD, &mut attr) {
            Ok(fd) => Ok(owned(fd)),
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => Err(e),
            Err(e) => {
                let mut log = vec![0u8; 4096];
                attr.log_level = 1;
                attr.log_size = log.len() as u32;
                attr.log_buf = log.as_mut_ptr() as u64;
                let _ = sys_bpf(BPF_PROG_LOAD, &mut attr).map(owned);
                let end = log.iter().position(|b| *b == 0).unwrap_or(log.len());
                let text = String::from_utf8_lossy(&log[..end]);
                Err(io::Error::new(
                    e.kind(),
                    format!("{e}; verifier: {}", text.trim()),
                ))
            }
        }
    }

    /// `union bpf_attr` for BPF_LINK_CREATE.
    #[repr(C)]
    struct LinkCreate {
        prog_fd: u32,
        target_ifindex: u32,
        attach_type: u32,
        flags: u32,
    }

    /// Attaches `prog` to the interface through a BPF link; closing the
    /// returned descriptor detaches it.
    pub(super) fn attach_xdp(prog: RawFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
        let mut attr = LinkCreate {
            prog_fd: prog as u32,
            target_ifindex: ifindex,
            attach_type: BPF_XDP,
            flags,
        };
        sys_bpf(BPF_LINK_CREATE, &mut attr).map(owned)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn default_options_are_valid() {
        AfXdpOptions::default().validate().unwrap();
        assert_eq!(AfXdpOptions::default().frames(), 4096);
    }

    #[test]
    fn a_ring_in_mib_is_the_frames_that_fit_as_a_power_of_two() {
        let with = |mib| AfXdpOptions::default().with_ring_mib(mib);
        assert_eq!(with(8).ring_size, 2048, "the default's 8 MiB");
        assert_eq!(with(64).ring_size, 16_384);
        assert_eq!(with(65).ring_size, 16_384, "rounded down");
        assert_eq!(with(1024).ring_size, 65_536, "at most the kernel's");
        assert_eq!(with(0).ring_size, 64);
        for mib in [1, 3, 64, 1024] {
            with(mib).validate().unwrap();
        }
    }

    #[test]
    fn bad_geometry_is_refused_by_name() {
        let base = AfXdpOptions::default();
        for (opts, field) in [
            (
                AfXdpOptions {
                    ring_size: 1000,
                    ..base.clone()
                },
                "ring_size",
            ),
            (
                AfXdpOptions {
                    ring_size: 32,
                    ..base.clone()
                },
                "ring_size",
            ),
            (
                AfXdpOptions {
                    frame_size: 3000,
                    ..base.clone()
                },
                "frame_size",
            ),
            (
                AfXdpOptions {
                    frame_size: 8192,
                    ..base.clone()
                },
                "frame_size",
            ),
        ] {
            let e = opts.validate().unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert!(e.to_string().contains(field), "{e}");
        }
    }

    #[test]
    fn redirect_program_encodes_to_the_expected_bytes() {
        let prog = bpf::redirect_program(0x1234_5678);
        let bytes: Vec<[u8; 8]> = prog.iter().map(|i| i.to_bytes()).collect();
        assert_eq!(
            bytes,
            [
                // ldxw r2, [r1 + 16]
                [0x61, 0x12, 0x10, 0x00, 0x00, 0x00, 0x00, 0x00],
                // lddw r1, map_fd (src = BPF_PSEUDO_MAP_FD)
                [0x18, 0x11, 0x00, 0x00, 0x78, 0x56, 0x34, 0x12],
                [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
                // mov64 r3, 2
                [0xb7, 0x03, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00],
                // call 51 (bpf_redirect_map)
                [0x85, 0x00, 0x00, 0x00, 0x33, 0x00, 0x00, 0x00],
                // exit
                [0x95, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00],
            ]
        );
    }

    #[test]
    fn instructions_have_the_kernel_layout() {
        assert_eq!(size_of::<bpf::Insn>(), 8);
        // The in-memory form is what the kernel reads.
        let prog = bpf::redirect_program(7);
        for insn in prog {
            // SAFETY: Insn is repr(C), 8 bytes of plain integers, no padding.
            let raw: [u8; 8] = unsafe { std::mem::transmute(insn) };
            assert_eq!(raw, insn.to_bytes());
        }
    }

    #[test]
    fn a_missing_interface_is_a_clear_error() {
        let e = AfXdpPort::open("ry-no-such0", AfXdpOptions::default()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("ry-no-such0"), "{e}");
    }
}
