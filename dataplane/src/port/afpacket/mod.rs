//! AF_PACKET port: a Linux interface (veth, physical NIC) driven from
//! userspace without DPDK.
//!
//! Receive uses a ring mapped into our memory, in one of two forms
//! ([`Receive`]). By default a `TPACKET_V2` ring of fixed slots sized for
//! the interface's MTU, each frame ours as soon as the kernel has written
//! it (see `frames`). Or a `TPACKET_V3` ring: the kernel fills blocks of
//! variable-size frames and hands a block over when it is full or its
//! retire timeout (1 ms by default) expires; `rx_burst` walks the frames of
//! the current block and returns the block once every frame in it has been
//! consumed, resuming mid-block on the next call. Either way each frame is
//! copied into a pool buffer, and no syscall is made per burst on receive.
//!
//! Transmit uses `sendmmsg`: one syscall per burst, each frame copied once
//! into a kernel buffer. (A `PACKET_TX_RING` would also cost one `send` per
//! burst plus a copy into the ring, and adds a second mapping and status
//! handshake; `sendmmsg` maps directly onto `tx_burst`'s "accept a prefix"
//! contract.) With `PACKET_QDISC_BYPASS` (the default) frames go straight to
//! the driver: no qdisc shaping applies and other packet sockets on the
//! interface (tcpdump) do not see them — capture on the peer instead. When
//! the device pushes back (`EAGAIN`/`ENOBUFS`), the rest of the burst stays
//! with the caller.
//!
//! The kernel moves an 802.1Q/802.1ad tag out of the frame into the ring's
//! per-frame header; it is put back into the copied frame so the pipeline
//! sees the frame as it was on the wire. Our own transmissions, which the
//! kernel may loop back to the socket, are skipped.
//!
//! Limits worth knowing: frames the kernel built with offloads (TSO/GSO
//! super-frames from a local TCP stack, `CHECKSUM_PARTIAL` frames whose L4
//! checksum is not filled in) arrive as the kernel holds them. Frames longer
//! than [`MAX_FRAME`] are dropped and counted; on the peer of a veth whose
//! other end is a host namespace, turn those offloads off
//! (`ethtool -K <dev> tso off gso off gro off tx off`).
//!
//! The socket is put in promiscuous mode through `PACKET_ADD_MEMBERSHIP`,
//! which the kernel undoes when the socket closes.

// This module talks to the kernel through raw sockets, ioctls and a shared
// memory ring, none of which has a safe wrapper in our dependencies.
#![allow(unsafe_code)]

mod control;
mod frames;

use std::cell::Cell;
use std::ffi::c_int;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::{addr_of, NonNull};
use std::sync::atomic::{AtomicU32, Ordering};

use crate::clock::Nanos;
use crate::packet::{copy_bytes, Burst, Pool, BURST_SIZE, MAX_FRAME};
use crate::port::refresh::RefreshTimer;
use crate::port::sys::{
    ctx, current_index, cvt, hardware_address, interface_index, interface_mtu, link_state,
    setsockopt,
};
use crate::port::{IoCounters, Port, TxDone};
use crate::wire::checksum;
use crate::wire::MacAddr;

/// How the receive ring hands frames over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Receive {
    /// `TPACKET_V2`: a frame is ours as soon as the kernel has written it,
    /// and wakes a worker asleep in `poll(2)`; slots are sized for the
    /// interface's MTU, so the ring's bytes hold fewer small frames. What a
    /// lab wants: tens of microseconds per hop, not a millisecond.
    #[default]
    Frames,
    /// `TPACKET_V3`: frames packed into blocks that are handed over when
    /// full or after `retire_timeout_ms`; fewer handshakes at high rates,
    /// up to that timeout of latency at low ones.
    Blocks,
}

impl Receive {
    /// The name `bind af-packet IF receive NAME` takes.
    pub fn name(self) -> &'static str {
        match self {
            Receive::Frames => "frames",
            Receive::Blocks => "blocks",
        }
    }
}

/// Ring geometry and socket behaviour for an [`AfPacketPort`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfPacketOptions {
    /// Per-frame or per-block hand-over.
    pub receive: Receive,
    /// Bytes per ring block; a multiple of the page size, larger than a
    /// jumbo frame. A per-frame ring keeps the ring's bytes and cuts
    /// blocks into slots sized for the interface's MTU.
    pub block_size: u32,
    /// Blocks in the ring; with `block_size` this bounds how much traffic
    /// can wait between polls before the kernel drops.
    pub block_count: u32,
    /// Nominal frame slot size; TPACKET_V3 packs frames of any size, so this
    /// only has to divide the block and be a multiple of 16.
    pub frame_size: u32,
    /// Milliseconds after which the kernel hands over a partly filled block,
    /// i.e. the worst-case receive latency at low rates.
    pub retire_timeout_ms: u32,
    /// Send straight to the driver, skipping the qdisc layer.
    pub qdisc_bypass: bool,
    /// Receive frames addressed to any MAC, as a switch port must.
    pub promiscuous: bool,
}

impl Default for AfPacketOptions {
    fn default() -> Self {
        AfPacketOptions {
            receive: Receive::default(),
            // 32 MiB. Per frame: 16 384 slots at MTU 1500, about 130 ms of
            // back-to-back 1 KB frames at 1 Gb/s. Per block, in small
            // blocks: at a low rate every block retires after
            // `retire_timeout_ms` with a few frames in it, so the number of
            // blocks, not their size, sets how long a descheduled worker
            // may stall without loss: 1 s at a low rate, about 260 ms of
            // back-to-back 1 KB frames at 1 Gb/s (512 blocks overflowed on
            // a busy 2-core machine running four switches of a lab).
            block_size: 32 * 1024,
            block_count: 1024,
            frame_size: 2048,
            retire_timeout_ms: 1,
            qdisc_bypass: true,
            promiscuous: true,
        }
    }
}

impl AfPacketOptions {
    /// These options with a receive ring of `mib` MiB (the default's
    /// blocks, as many as fit): a port whose worker may be descheduled
    /// for long (a lab on a busy machine) gets longer before the kernel
    /// drops. At least one block.
    pub fn with_ring_mib(mut self, mib: u32) -> AfPacketOptions {
        let bytes = u64::from(mib) << 20;
        self.block_count = u32::try_from(bytes / u64::from(self.block_size.max(1)))
            .unwrap_or(u32::MAX)
            .max(1);
        self
    }

    /// Checks the ring geometry before the kernel sees it, with errors that
    /// say which field is wrong.
    ///
    /// # Errors
    /// `InvalidInput` naming the offending field.
    pub fn validate(&self) -> io::Result<()> {
        let bad = |msg: &str| Err(io::Error::new(io::ErrorKind::InvalidInput, msg.to_string()));
        let page = page_size();
        if self.block_size == 0 || self.block_size as usize & (page - 1) != 0 {
            return bad(&format!(
                "block_size must be a multiple of the page size ({page})"
            ));
        }
        if (self.block_size as usize) < MAX_FRAME + 256 {
            return bad("block_size must hold a jumbo frame");
        }
        if self.block_count == 0 {
            return bad("block_count must be at least 1");
        }
        if self.frame_size < 128 || self.frame_size & 15 != 0 || self.frame_size > self.block_size {
            return bad("frame_size must be a multiple of 16, at least 128 and at most block_size");
        }
        if self.retire_timeout_ms == 0 {
            return bad("retire_timeout_ms must be at least 1");
        }
        let total = u64::from(self.block_size) * u64::from(self.block_count);
        if total > u64::from(u32::MAX) {
            return bad("block_size * block_count must stay below 4 GiB");
        }
        Ok(())
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(p)
        .ok()
        .filter(|p| p.is_power_of_two())
        .unwrap_or(4096)
}

/// A `TPACKET_V3` receive ring's memory, unmapped on drop.
struct BlockRing {
    base: NonNull<u8>,
    len: usize,
    block_size: usize,
    block_count: usize,
    cursor: Cursor,
}

// SAFETY: the mapping is owned by exactly one BlockRing (it is never cloned or
// shared), so moving it to another thread moves sole access with it.
unsafe impl Send for BlockRing {}

impl BlockRing {
    /// The descriptor at the start of block `i` (< block_count).
    fn block(&self, i: usize) -> *mut libc::tpacket_block_desc {
        debug_assert!(i < self.block_count);
        // SAFETY: i < block_count, so the offset stays inside the mapping.
        unsafe { self.base.as_ptr().add(i * self.block_size) }.cast()
    }

    /// The status word of block `i`, shared with the kernel.
    fn status(&self, i: usize) -> &AtomicU32 {
        let bd = self.block(i);
        // SAFETY: the block descriptor lies inside the live mapping and
        // block_status is a naturally aligned u32 the kernel also accesses
        // atomically; the reference cannot outlive `self`, which owns the mapping.
        unsafe { AtomicU32::from_ptr(addr_of!((*bd).hdr.bh1.block_status).cast_mut()) }
    }
}

impl Drop for BlockRing {
    fn drop(&mut self) {
        // SAFETY: base/len describe a mapping made by mmap in `open` and not
        // unmapped elsewhere; nothing borrows it past this point.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// Where `rx_burst` is in the ring.
#[derive(Debug, Clone, Copy, Default)]
struct Cursor {
    /// Block being consumed (or waited for).
    block: usize,
    /// The block is ours and `left`/`offset` are valid.
    open: bool,
    /// Frames not yet consumed in the open block.
    left: u32,
    /// Offset of the next frame within the block.
    offset: usize,
}

/// Copies `frame` into `dst`, re-inserting a VLAN tag (`tpid`, `tci`) after
/// the MAC addresses when one is given. Returns the new length, or `None`
/// when the result does not fit or the frame has no MAC header.
fn copy_frame(dst: &mut [u8], frame: &[u8], tag: Option<(u16, u16)>) -> Option<usize> {
    match tag {
        None => {
            copy_bytes(dst.get_mut(..frame.len())?, frame);
            Some(frame.len())
        }
        Some((tpid, tci)) => {
            let len = frame.len() + 4;
            if frame.len() < 12 || len > dst.len() {
                return None;
            }
            dst[..12].copy_from_slice(&frame[..12]);
            dst[12..14].copy_from_slice(&tpid.to_be_bytes());
            dst[14..16].copy_from_slice(&tci.to_be_bytes());
            dst[16..len].copy_from_slice(&frame[12..]);
            Some(len)
        }
    }
}

/// A non-blocking raw packet socket with protocol 0: it receives nothing
/// until bound to a protocol.
fn packet_socket(ifname: &str) -> io::Result<OwnedFd> {
    // SAFETY: plain syscall with constant arguments.
    let raw = cvt(unsafe {
        libc::socket(
            libc::AF_PACKET,
            libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    })
    .map_err(|e| ctx(ifname, "AF_PACKET socket (needs CAP_NET_RAW)", e))?;
    // SAFETY: socket() just returned this descriptor; nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(raw) })
}

/// Maps the `len`-byte receive ring the kernel allocated for packet socket
/// `fd` (`what` names the step in the error, with `ifname`).
fn map_ring(fd: RawFd, len: usize, ifname: &str, what: &str) -> io::Result<NonNull<u8>> {
    // SAFETY: maps the ring the kernel just allocated for this socket; the
    // result is checked before use.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return Err(ctx(ifname, what, io::Error::last_os_error()));
    }
    NonNull::new(base.cast()).ok_or_else(|| io::Error::other("mmap returned null"))
}

/// Binds packet socket `fd` to interface `ifindex` for EtherType
/// `protocol` (host order; `ETH_P_ALL` for every frame, 0 to send only).
fn bind_packet(fd: RawFd, ifindex: c_int, protocol: u16, ifname: &str) -> io::Result<()> {
    // SAFETY: sockaddr_ll is plain data; all zeroes is valid.
    let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
    sll.sll_family = libc::AF_PACKET as u16;
    sll.sll_protocol = protocol.to_be();
    sll.sll_ifindex = ifindex;
    // SAFETY: sll is a valid sockaddr_ll of the length given.
    cvt(unsafe {
        libc::bind(
            fd,
            (&sll as *const libc::sockaddr_ll).cast(),
            size_of::<libc::sockaddr_ll>() as libc::socklen_t,
        )
    })
    .map(drop)
    .map_err(|e| ctx(ifname, "bind", e))
}

/// A Linux interface opened as a switch port (see the module doc).
pub struct AfPacketPort {
    // Field order matters for Drop: unmap the ring before closing the socket.
    ring: RxRing,
    /// PFC and PAUSE frames, delivered without the data ring's block delay.
    control: control::ControlLane,
    fd: OwnedFd,
    ifname: String,
    ifindex: c_int,
    mac: MacAddr,
    counters: IoCounters,
    /// Drops the kernel reported (ring full), accumulated; reading resets
    /// the kernel's counter.
    kernel_drops: Cell<u64>,
    link: Cell<bool>,
    /// The interface the socket is bound to is gone (deleted, or replaced
    /// by another of the same name): the port is down for good, since the
    /// socket stays bound to the old one.
    gone: Cell<bool>,
    refresh: RefreshTimer,
    warned_oversize: bool,
    qdisc_bypass: bool,
    /// The receive ring's size, for `describe`.
    ring_mib: u64,
}

/// The data ring, in the form [`Receive`] chose.
enum RxRing {
    Frames(frames::FrameRing),
    Blocks(BlockRing),
}

impl AfPacketPort {
    /// Opens `ifname` (which must exist and be Ethernet) with a receive ring
    /// shaped by `opts`. Needs CAP_NET_RAW.
    ///
    /// # Errors
    /// Invalid options, a missing or non-Ethernet interface, missing
    /// privileges, or a kernel without TPACKET_V3; the message names the step.
    pub fn open(ifname: &str, opts: AfPacketOptions) -> io::Result<Self> {
        opts.validate()?;
        let ifindex = interface_index(ifname)? as c_int;

        // Nothing arrives until bound, so no other interface's frames land
        // in the ring while it is being set up.
        let fd = packet_socket(ifname)?;
        let s = fd.as_raw_fd();

        let mac = hardware_address(s, ifname)?;

        let ring = match opts.receive {
            Receive::Frames => RxRing::Frames(open_frame_ring(s, &opts, ifname)?),
            Receive::Blocks => RxRing::Blocks(open_block_ring(s, &opts, ifname)?),
        };

        if opts.qdisc_bypass {
            setsockopt(s, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &1 as &c_int)
                .map_err(|e| ctx(ifname, "PACKET_QDISC_BYPASS", e))?;
        }
        // Best effort (Linux >= 4.20): keeps our own transmissions out of the
        // ring; rx_burst also skips them by packet type.
        let _ = setsockopt(
            s,
            libc::SOL_PACKET,
            libc::PACKET_IGNORE_OUTGOING,
            &1 as &c_int,
        );

        control::exclude_mac_control(s, ifname)?;
        bind_packet(s, ifindex, libc::ETH_P_ALL as u16, ifname)?;
        let control = control::ControlLane::open(ifname, ifindex)?;

        if opts.promiscuous {
            let mreq = libc::packet_mreq {
                mr_ifindex: ifindex,
                mr_type: libc::PACKET_MR_PROMISC as u16,
                mr_alen: 0,
                mr_address: [0; 8],
            };
            setsockopt(s, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mreq)
                .map_err(|e| ctx(ifname, "PACKET_ADD_MEMBERSHIP promiscuous", e))?;
        }

        let link = link_state(s, ifname);
        Ok(AfPacketPort {
            ring_mib: (u64::from(opts.block_size) * u64::from(opts.block_count)) >> 20,
            ring,
            control,
            fd,
            ifname: ifname.to_string(),
            ifindex,
            mac,
            counters: IoCounters::default(),
            kernel_drops: Cell::new(0),
            link: Cell::new(link),
            gone: Cell::new(false),
            refresh: RefreshTimer::new(),
            warned_oversize: false,
            qdisc_bypass: opts.qdisc_bypass,
        })
    }

    /// The interface name this port was opened on.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// The kernel's index of the interface, for netlink lookups.
    pub fn ifindex(&self) -> i32 {
        self.ifindex
    }

    /// Frames the kernel dropped because the ring was full, so far.
    pub fn kernel_drops(&self) -> u64 {
        self.read_kernel_drops();
        self.kernel_drops.get()
    }

    /// Adds the kernel's drop count since the last read (reading resets it).
    fn read_kernel_drops(&self) {
        // SAFETY: tpacket_stats_v3 is plain data; all zeroes is valid.
        let mut st: libc::tpacket_stats_v3 = unsafe { zeroed() };
        let mut len = size_of::<libc::tpacket_stats_v3>() as libc::socklen_t;
        // SAFETY: st and len are live and sized for PACKET_STATISTICS on a
        // TPACKET_V3 socket; the kernel writes at most `len` bytes.
        let r = unsafe {
            libc::getsockopt(
                self.fd.as_raw_fd(),
                libc::SOL_PACKET,
                libc::PACKET_STATISTICS,
                (&mut st as *mut libc::tpacket_stats_v3).cast(),
                &mut len,
            )
        };
        if r == 0 {
            self.kernel_drops
                .set(self.kernel_drops.get() + u64::from(st.tp_drops));
        }
    }

    /// Re-reads link state and kernel drops when the cached values are older
    /// than [`REFRESH`](crate::port::refresh::REFRESH).
    fn refresh_if_due(&self) {
        if !self.refresh.due() {
            return;
        }
        let fd = self.fd.as_raw_fd();
        if !self.gone.get() && current_index(fd, &self.ifname) != Some(self.ifindex) {
            // Flags read by name would describe a new interface of the same
            // name, which this socket does not reach.
            self.gone.set(true);
            tracing::warn!(
                "{}: the interface this port was bound to (ifindex {}) is gone; \
                 the port stays down until railyard restarts",
                self.ifname,
                self.ifindex
            );
        }
        let up = !self.gone.get() && link_state(fd, &self.ifname);
        self.link.set(up);
        self.read_kernel_drops();
    }
}

/// Sets socket `s` up with a `TPACKET_V2` ring of `opts`' size in slots
/// that hold the interface's largest frame.
fn open_frame_ring(
    s: RawFd,
    opts: &AfPacketOptions,
    ifname: &str,
) -> io::Result<frames::FrameRing> {
    let slot_size = frames::slot_for_mtu(interface_mtu(s, ifname)?);
    let block_size = opts.block_size.max(slot_size);
    let total = u64::from(opts.block_size) * u64::from(opts.block_count);
    let geometry = frames::Geometry {
        block_size,
        blocks: u32::try_from(total / u64::from(block_size))
            .unwrap_or(u32::MAX)
            .max(1),
        slot_size,
    };
    frames::FrameRing::open(s, geometry, ifname, "rx ring")
}

/// Sets socket `s` up with a `TPACKET_V3` ring of `opts`' geometry.
fn open_block_ring(s: RawFd, opts: &AfPacketOptions, ifname: &str) -> io::Result<BlockRing> {
    let version = libc::tpacket_versions::TPACKET_V3 as c_int;
    setsockopt(s, libc::SOL_PACKET, libc::PACKET_VERSION, &version)
        .map_err(|e| ctx(ifname, "PACKET_VERSION TPACKET_V3", e))?;
    let req = libc::tpacket_req3 {
        tp_block_size: opts.block_size,
        tp_block_nr: opts.block_count,
        tp_frame_size: opts.frame_size,
        tp_frame_nr: opts.block_size / opts.frame_size * opts.block_count,
        tp_retire_blk_tov: opts.retire_timeout_ms,
        tp_sizeof_priv: 0,
        tp_feature_req_word: 0,
    };
    setsockopt(s, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
        .map_err(|e| ctx(ifname, "PACKET_RX_RING", e))?;
    let len = opts.block_size as usize * opts.block_count as usize;
    Ok(BlockRing {
        base: map_ring(s, len, ifname, "mmap rx ring")?,
        len,
        block_size: opts.block_size as usize,
        block_count: opts.block_count as usize,
        cursor: Cursor::default(),
    })
}

/// Offset of the `sockaddr_ll` that follows each frame header in the ring.
const SLL_OFFSET: usize = (size_of::<libc::tpacket3_hdr>() + libc::TPACKET_ALIGNMENT - 1)
    & !(libc::TPACKET_ALIGNMENT - 1);

/// The kernel handed over a frame whose transport checksum is still to be
/// filled in (`CHECKSUM_PARTIAL`: a local stack on the peer veth left it to
/// "hardware"). Not exported by the libc crate.
const TP_STATUS_CSUMNOTREADY: u32 = 1 << 3;

/// Computes the TCP or UDP checksum of an Ethernet frame in software, for
/// frames a local stack sent with checksum offload: without this, the next
/// host would drop them. Frames that are not TCP/UDP over IPv4/IPv6, or that
/// are truncated, are left as they are. Returns whether it wrote a checksum.
fn complete_transport_checksum(frame: &mut [u8]) -> bool {
    let mut l3 = 14;
    let mut ethertype = match frame.get(12..14) {
        Some(b) => u16::from_be_bytes([b[0], b[1]]),
        None => return false,
    };
    if ethertype == 0x8100 || ethertype == 0x88a8 {
        match frame.get(16..18) {
            Some(b) => ethertype = u16::from_be_bytes([b[0], b[1]]),
            None => return false,
        }
        l3 = 18;
    }
    let (src, dst, proto, l4, end) = match ethertype {
        0x0800 => {
            let Some(h) = frame.get(l3..l3 + 20) else {
                return false;
            };
            let ihl = usize::from(h[0] & 0x0f) * 4;
            let total = usize::from(u16::from_be_bytes([h[2], h[3]]));
            let src = std::net::IpAddr::from([h[12], h[13], h[14], h[15]]);
            let dst = std::net::IpAddr::from([h[16], h[17], h[18], h[19]]);
            (src, dst, h[9], l3 + ihl, l3 + total)
        }
        0x86dd => {
            let Some(h) = frame.get(l3..l3 + 40) else {
                return false;
            };
            let mut s = [0u8; 16];
            let mut d = [0u8; 16];
            s.copy_from_slice(&h[8..24]);
            d.copy_from_slice(&h[24..40]);
            let payload = usize::from(u16::from_be_bytes([h[4], h[5]]));
            (s.into(), d.into(), h[6], l3 + 40, l3 + 40 + payload)
        }
        _ => return false,
    };
    let field = match proto {
        6 => 16,
        17 => 6,
        _ => return false,
    };
    if end > frame.len() || l4 + field + 2 > end {
        return false;
    }
    frame[l4 + field..l4 + field + 2].copy_from_slice(&[0, 0]);
    let pseudo = checksum::pseudo_header(&src, &dst, proto, (end - l4) as u32);
    let mut sum = !checksum::combine(&[pseudo, checksum::data(&frame[l4..end])]);
    if sum == 0 && proto == 17 {
        sum = 0xffff;
    }
    frame[l4 + field..l4 + field + 2].copy_from_slice(&sum.to_be_bytes());
    true
}

/// Sends `burst` on packet socket `fd` with one `sendmmsg` per try. Frames
/// the kernel refuses for good (too long, link gone) are dropped and counted
/// in `tx_errors`; when the device pushes back the rest stay in `burst`
/// (unless `up` says the link is down, which would refuse them forever;
/// asked only then). Says how many were sent and how many failed.
fn send_burst(
    fd: RawFd,
    burst: &mut Burst,
    up: impl Fn() -> bool,
    counters: &mut IoCounters,
) -> TxDone {
    let mut done = 0;
    let mut sent = 0u64;
    let mut errors = 0u64;
    let mut error_bytes = 0u64;
    // The frames from `from` on failed (the error path only).
    let bytes = |from: usize| -> u64 { burst[from..].iter().map(|p| p.len() as u64).sum() };
    while done < burst.len() {
        let pending = &burst[done..];
        // SAFETY: iovec and mmsghdr are plain data (lengths and null
        // pointers when zeroed); all zeroes is valid.
        let mut iov: [libc::iovec; BURST_SIZE] = unsafe { zeroed() };
        // SAFETY: as above.
        let mut msgs: [libc::mmsghdr; BURST_SIZE] = unsafe { zeroed() };
        for (i, p) in pending.iter().enumerate() {
            let data = p.data();
            iov[i].iov_base = data.as_ptr().cast_mut().cast();
            iov[i].iov_len = data.len();
            msgs[i].msg_hdr.msg_iov = &mut iov[i];
            msgs[i].msg_hdr.msg_iovlen = 1;
        }
        // SAFETY: msgs[..pending.len()] point at iovecs that point at
        // frames borrowed from `burst`, all alive for the call; the
        // kernel only reads the frames and writes msg_len.
        let r = unsafe {
            libc::sendmmsg(
                fd,
                msgs.as_mut_ptr(),
                pending.len() as libc::c_uint,
                libc::MSG_DONTWAIT,
            )
        };
        if r > 0 {
            done += r as usize;
            sent += r as u64;
            continue;
        }
        if r == 0 {
            break;
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error().unwrap_or(0) {
            libc::EINTR => {}
            libc::EAGAIN | libc::ENOBUFS => {
                // A link without carrier refuses with ENOBUFS forever;
                // do not let the caller retry a dead link.
                if !up() {
                    errors += (burst.len() - done) as u64;
                    error_bytes += bytes(done);
                    done = burst.len();
                }
                break;
            }
            libc::ENETDOWN | libc::ENXIO | libc::ENODEV => {
                errors += (burst.len() - done) as u64;
                error_bytes += bytes(done);
                done = burst.len();
            }
            _ => {
                // This frame is unsendable (e.g. EMSGSIZE); skip it.
                errors += 1;
                error_bytes += burst[done].len() as u64;
                done += 1;
            }
        }
    }
    crate::packet::free_front(burst, done);
    counters.tx_frames += sent;
    counters.tx_errors += errors;
    TxDone {
        sent: sent as usize,
        failed: errors as usize,
        failed_bytes: error_bytes,
    }
}

/// The receive ring's socket, for a caller that blocks in `poll(2)` until a
/// block is handed over (`POLLIN`) instead of spinning on `rx_burst`.
impl AsFd for AfPacketPort {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Where received frames go, and what counts those that cannot.
struct Sink<'a> {
    pool: &'a Pool,
    burst: &'a mut Burst,
    now: Nanos,
    counters: &'a mut IoCounters,
    warned_oversize: &'a mut bool,
    ifname: &'a str,
}

/// What became of one frame in the ring.
enum Took {
    /// Copied into the burst.
    Pushed,
    /// Ours (looped back) or dropped and counted: the slot can go back.
    Passed,
    /// The pool is empty: the frame stays in the ring for the next call
    /// (the pool counts the miss, the kernel what overflows).
    NoBuffer,
}

impl Sink<'_> {
    /// Keeps the longest wait in the ring of a frame the kernel stamped
    /// at `stamp_ns` (realtime); a clock stepped back counts no wait.
    fn note_wait(&mut self, stamp_ns: u64) {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        let wait = now.saturating_sub(stamp_ns);
        self.counters.rx_wait_max_ns = self.counters.rx_wait_max_ns.max(wait);
    }

    /// Copies `frame` into a pool buffer at the end of the burst, putting
    /// back its VLAN tag and completing a checksum a local stack left open.
    fn take(&mut self, frame: &frames::RxFrame<'_>) -> Took {
        if frame.outgoing {
            return Took::Passed;
        }
        let Some(mut pkt) = self.pool.alloc() else {
            return Took::NoBuffer;
        };
        let room = pkt.tailroom_mut();
        let room_len = room.len().min(MAX_FRAME);
        let copied = if frame.data.len() < frame.wire_len as usize {
            None
        } else {
            copy_frame(&mut room[..room_len], frame.data, frame.tag)
        };
        let Some(len) = copied else {
            self.counters.rx_dropped += 1;
            self.counters.rx_oversize += 1;
            if !*self.warned_oversize {
                *self.warned_oversize = true;
                tracing::warn!(
                    ifname = %self.ifname,
                    len = frame.wire_len,
                    "dropping a frame longer than the largest frame this port takes (its \
                     MTU, or railyard's largest); if it is a TSO/GRO super-frame, turn those \
                     offloads off on the peer"
                );
            }
            return Took::Passed;
        };
        pkt.set_len(len);
        if frame.status & TP_STATUS_CSUMNOTREADY != 0 {
            complete_transport_checksum(pkt.data_mut());
        }
        pkt.timestamp = self.now;
        self.burst.push(pkt);
        Took::Pushed
    }
}

/// Moves the frames the kernel has handed over from `ring` into the sink's
/// burst, up to a full burst; returns how many. The first frame, the
/// oldest, tells how long frames waited in the ring (one `CLOCK_REALTIME`
/// read per call that finds frames, from the vDSO: no system call).
fn rx_frames(ring: &mut frames::FrameRing, sink: &mut Sink<'_>) -> usize {
    let mut n = 0;
    let mut first = true;
    while sink.burst.len() < BURST_SIZE {
        let took = match ring.peek() {
            None => break,
            Some(Ok(frame)) => {
                if std::mem::take(&mut first) {
                    sink.note_wait(frame.stamp_ns);
                }
                sink.take(&frame)
            }
            Some(Err(())) => {
                sink.counters.rx_dropped += 1;
                Took::Passed
            }
        };
        match took {
            Took::NoBuffer => break,
            Took::Pushed => n += 1,
            Took::Passed => {}
        }
        ring.release();
    }
    n
}

impl BlockRing {
    /// Moves the frames of handed-over blocks into the sink's burst, up to
    /// a full burst, resuming where the last call stopped; returns how many.
    /// The first frame notes its wait, as in [`rx_frames`].
    fn rx(&mut self, sink: &mut Sink<'_>) -> usize {
        let mut n = 0;
        let mut first = true;
        while sink.burst.len() < BURST_SIZE {
            if !self.cursor.open {
                let status = self.status(self.cursor.block).load(Ordering::Acquire);
                if status & libc::TP_STATUS_USER == 0 {
                    break;
                }
                let bd = self.block(self.cursor.block);
                // SAFETY: the block is ours (TP_STATUS_USER, observed with
                // Acquire), so its descriptor is initialised and stable.
                let (num, first) = unsafe {
                    (
                        addr_of!((*bd).hdr.bh1.num_pkts).read(),
                        addr_of!((*bd).hdr.bh1.offset_to_first_pkt).read(),
                    )
                };
                self.cursor = Cursor {
                    block: self.cursor.block,
                    open: true,
                    left: num,
                    offset: first as usize,
                };
            }
            if self.cursor.left == 0 {
                self.release_block();
                continue;
            }
            let off = self.cursor.offset;
            if off + SLL_OFFSET + size_of::<libc::sockaddr_ll>() > self.block_size {
                // A frame header past the block: never produced by a sane
                // kernel; give the block back rather than read outside it.
                self.release_block();
                continue;
            }
            let block = self.block(self.cursor.block).cast::<u8>();
            // SAFETY: off + header sizes lie within this block (checked
            // above), the block is ours, and the kernel aligns frame headers
            // to TPACKET_ALIGNMENT, which satisfies tpacket3_hdr's alignment.
            let (hdr, pkttype) = unsafe {
                let h = block.add(off).cast::<libc::tpacket3_hdr>().read();
                let sll = block.add(off + SLL_OFFSET).cast::<libc::sockaddr_ll>();
                (h, addr_of!((*sll).sll_pkttype).read())
            };
            let mac = off + usize::from(hdr.tp_mac);
            let snap = hdr.tp_snaplen as usize;
            if mac + snap > self.block_size {
                self.release_block();
                continue;
            }
            // SAFETY: [mac, mac + snap) lies within this block (checked
            // above) and the kernel does not write a block it has handed to
            // us until we return it.
            let data = unsafe { std::slice::from_raw_parts(block.add(mac), snap) };
            let frame = frames::RxFrame {
                data,
                wire_len: hdr.tp_len,
                status: hdr.tp_status,
                outgoing: pkttype == libc::PACKET_OUTGOING,
                tag: (hdr.tp_status & libc::TP_STATUS_VLAN_VALID != 0).then(|| {
                    let tpid = if hdr.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                        hdr.hv1.tp_vlan_tpid
                    } else {
                        0x8100
                    };
                    (tpid, hdr.hv1.tp_vlan_tci as u16)
                }),
                stamp_ns: u64::from(hdr.tp_sec) * 1_000_000_000 + u64::from(hdr.tp_nsec),
            };
            if std::mem::take(&mut first) {
                sink.note_wait(frame.stamp_ns);
            }
            match sink.take(&frame) {
                Took::NoBuffer => break,
                Took::Pushed => n += 1,
                Took::Passed => {}
            }
            self.cursor.left -= 1;
            self.cursor.offset = off + hdr.tp_next_offset as usize;
            if self.cursor.left == 0 {
                self.release_block();
            }
        }
        n
    }

    /// Hands the current block back to the kernel and moves to the next.
    fn release_block(&mut self) {
        self.status(self.cursor.block)
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.cursor.open = false;
        self.cursor.block = (self.cursor.block + 1) % self.block_count;
    }
}

impl Port for AfPacketPort {
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        self.refresh_if_due();
        let mut n = self.control.rx(burst, now, &mut self.counters.rx_dropped);
        let mut sink = Sink {
            pool,
            burst,
            now,
            counters: &mut self.counters,
            warned_oversize: &mut self.warned_oversize,
            ifname: &self.ifname,
        };
        n += match &mut self.ring {
            RxRing::Frames(ring) => rx_frames(ring, &mut sink),
            RxRing::Blocks(ring) => ring.rx(&mut sink),
        };
        self.counters.rx_frames += n as u64;
        n
    }

    /// Sends with one `sendmmsg` per burst (see `send_burst`).
    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> TxDone {
        let mut counters = self.counters;
        let n = send_burst(self.fd.as_raw_fd(), burst, || self.link_up(), &mut counters);
        self.counters = counters;
        n
    }

    /// The data ring's socket and the MAC-control lane's. A per-block ring
    /// wakes a sleeper only when a block retires.
    fn wake_fds(&self) -> Vec<RawFd> {
        vec![self.fd.as_raw_fd(), self.control.fd()]
    }

    fn tx_lane(&mut self) -> Option<Box<dyn Port>> {
        match AfPacketLane::open(&self.ifname, self.ifindex, self.mac, self.qdisc_bypass) {
            Ok(lane) => Some(Box::new(lane)),
            Err(e) => {
                tracing::warn!("{}: no transmit lane: {e}", self.ifname);
                None
            }
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
        self.read_kernel_drops();
        let mut c = self.counters;
        c.rx_dropped += self.kernel_drops.get();
        c
    }

    fn describe(&self) -> String {
        let receive = match self.ring {
            RxRing::Frames(_) => Receive::Frames,
            RxRing::Blocks(_) => Receive::Blocks,
        };
        format!(
            "af-packet {} (ring {} MiB, {})",
            self.ifname,
            self.ring_mib,
            receive.name()
        )
    }
}

/// A second socket on an [`AfPacketPort`]'s interface that only transmits,
/// for another worker (see [`crate::lanes`]). Bound with protocol 0, it
/// receives nothing, so the port's own ring still sees every frame once.
pub struct AfPacketLane {
    fd: OwnedFd,
    ifname: String,
    mac: MacAddr,
    counters: IoCounters,
    link: Cell<bool>,
    refresh: RefreshTimer,
}

impl AfPacketLane {
    /// Opens the transmit-only socket on interface `ifindex` (`ifname`,
    /// whose MAC is `mac`).
    ///
    /// # Errors
    /// Missing privileges or a vanished interface; the message names the step.
    pub fn open(
        ifname: &str,
        ifindex: c_int,
        mac: MacAddr,
        qdisc_bypass: bool,
    ) -> io::Result<Self> {
        let fd = packet_socket(ifname)?;
        let s = fd.as_raw_fd();
        if qdisc_bypass {
            setsockopt(s, libc::SOL_PACKET, libc::PACKET_QDISC_BYPASS, &1 as &c_int)
                .map_err(|e| ctx(ifname, "PACKET_QDISC_BYPASS", e))?;
        }
        // Protocol 0: bound to the interface for sending, receiving nothing.
        bind_packet(s, ifindex, 0, ifname)?;
        let link = link_state(s, ifname);
        Ok(AfPacketLane {
            fd,
            ifname: ifname.to_string(),
            mac,
            counters: IoCounters::default(),
            link: Cell::new(link),
            refresh: RefreshTimer::new(),
        })
    }
}

impl Port for AfPacketLane {
    fn rx_burst(&mut self, _pool: &Pool, _burst: &mut Burst, _now: Nanos) -> usize {
        0
    }

    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> TxDone {
        let mut counters = self.counters;
        let n = send_burst(self.fd.as_raw_fd(), burst, || self.link_up(), &mut counters);
        self.counters = counters;
        n
    }

    fn link_up(&self) -> bool {
        if self.refresh.due() {
            let up = link_state(self.fd.as_raw_fd(), &self.ifname);
            self.link.set(up);
        }
        self.link.get()
    }

    fn mac(&self) -> Option<MacAddr> {
        Some(self.mac)
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("af-packet {} (lane)", self.ifname)
    }
}

impl std::fmt::Debug for AfPacketPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AfPacketPort")
            .field("ifname", &self.ifname)
            .field("ifindex", &self.ifindex)
            .field("mac", &self.mac)
            .field("counters", &self.counters)
            .finish()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests fail loudly
mod tests {
    use super::*;

    #[test]
    fn default_options_are_valid() {
        AfPacketOptions::default().validate().unwrap();
    }

    #[test]
    fn a_ring_size_in_mib_keeps_the_blocks_and_sets_their_number() {
        let d = AfPacketOptions::default();
        assert_eq!(d.block_count as u64 * d.block_size as u64, 32 << 20);
        let big = d.clone().with_ring_mib(128);
        assert_eq!((big.block_size, big.block_count), (d.block_size, 4096));
        big.validate().unwrap();
        assert_eq!(d.clone().with_ring_mib(1).block_count, 32);
        // Never no block, whatever the block size.
        let huge_blocks = AfPacketOptions {
            block_size: 4 << 20,
            ..d
        };
        assert_eq!(huge_blocks.with_ring_mib(1).block_count, 1);
    }

    #[test]
    fn bad_geometry_is_refused_by_name() {
        let base = AfPacketOptions::default();
        for (opts, field) in [
            (
                AfPacketOptions {
                    block_size: 4096 * 3 + 1,
                    ..base.clone()
                },
                "block_size",
            ),
            (
                AfPacketOptions {
                    block_size: 4096,
                    ..base.clone()
                },
                "block_size",
            ),
            (
                AfPacketOptions {
                    block_count: 0,
                    ..base.clone()
                },
                "block_count",
            ),
            (
                AfPacketOptions {
                    frame_size: 100,
                    ..base.clone()
                },
                "frame_size",
            ),
            (
                AfPacketOptions {
                    retire_timeout_ms: 0,
                    ..base.clone()
                },
                "retire_timeout_ms",
            ),
        ] {
            let e = opts.validate().unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            assert!(e.to_string().contains(field), "{e}");
        }
    }

    #[test]
    fn vlan_tags_are_put_back_after_the_macs() {
        let frame: Vec<u8> = (0u8..20).collect();
        let mut dst = [0xa5u8; 64];
        let n = copy_frame(&mut dst, &frame, Some((0x8100, 0x6064))).unwrap();
        assert_eq!(n, 24);
        assert_eq!(&dst[..12], &frame[..12]);
        assert_eq!(&dst[12..16], &[0x81, 0x00, 0x60, 0x64]);
        assert_eq!(&dst[16..24], &frame[12..]);
        assert_eq!(dst[24], 0xa5);

        let n = copy_frame(&mut dst, &frame, None).unwrap();
        assert_eq!(&dst[..n], &frame[..]);
    }

    #[test]
    fn frames_that_do_not_fit_are_refused() {
        let mut dst = [0u8; 20];
        assert!(copy_frame(&mut dst, &[0; 21], None).is_none());
        assert!(copy_frame(&mut dst, &[0; 17], Some((0x88a8, 1))).is_none());
        assert!(copy_frame(&mut dst, &[0; 11], Some((0x8100, 1))).is_none());
        assert_eq!(copy_frame(&mut dst, &[0; 16], Some((0x8100, 1))), Some(20));
    }

    #[test]
    fn a_missing_interface_is_a_clear_error() {
        let e = AfPacketPort::open("ry-no-such0", AfPacketOptions::default()).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::NotFound);
        assert!(e.to_string().contains("ry-no-such0"), "{e}");
    }

    #[test]
    fn partial_checksums_are_completed_in_software() {
        // IPv4/UDP 10.0.0.1:1 → 10.0.0.2:2, 4 bytes of payload; checksum
        // field holding garbage as a CHECKSUM_PARTIAL frame would.
        let mut f = vec![0u8; 14 + 20 + 12];
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        f[14] = 0x45;
        f[16..18].copy_from_slice(&32u16.to_be_bytes());
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        f[34..36].copy_from_slice(&1u16.to_be_bytes());
        f[36..38].copy_from_slice(&2u16.to_be_bytes());
        f[38..40].copy_from_slice(&12u16.to_be_bytes());
        f[40..42].copy_from_slice(&[0x12, 0x34]);
        f[42..46].copy_from_slice(b"abcd");
        assert!(complete_transport_checksum(&mut f));
        let pseudo = checksum::pseudo_header(
            &std::net::IpAddr::from([10, 0, 0, 1]),
            &std::net::IpAddr::from([10, 0, 0, 2]),
            17,
            12,
        );
        assert_eq!(
            checksum::combine(&[pseudo, checksum::data(&f[34..46])]),
            0xffff
        );
        // Not TCP/UDP, or truncated: untouched.
        let mut icmp = f.clone();
        icmp[23] = 1;
        assert!(!complete_transport_checksum(&mut icmp));
        assert!(!complete_transport_checksum(&mut f[..40]));
    }
}
