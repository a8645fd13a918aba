//! The MAC-control lane of an AF_PACKET port: PFC and PAUSE frames reach
//! the pipeline as soon as the kernel has them, not when the data ring's
//! block retires.
//!
//! The data ring is `TPACKET_V3`, which hands frames over a block at a
//! time: a block is returned when it is full or when its retire timeout
//! (1 ms, the smallest the kernel takes) runs out. In a one-way incast the
//! direction that carries the pauses is otherwise idle, so every XOFF
//! waited up to a millisecond in a half-empty block (measured on veth:
//! median 449 µs, 99th percentile 998 µs, `scripts/bench-pfc-response.sh`),
//! while a full-quanta pause lasts 336 µs at 100 Gb/s: pauses ran out
//! before their refreshes arrived and the peer kept sending.
//!
//! So each port opens a second socket bound to the MAC-control EtherType
//! (0x8808) with a small `TPACKET_V2` ring, whose frames each carry their
//! own status word and are visible the moment the kernel writes them; a
//! classic BPF filter keeps those frames out of the data ring, so each is
//! seen once. Looking at the lane costs one load per poll.

#![allow(unsafe_code)]

use std::ffi::c_int;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::{bind_packet, map_ring, packet_socket};
use crate::packet::{copy_bytes, Burst, Pool, BURST_SIZE};
use crate::port::sys::{ctx, setsockopt};

/// EtherType of MAC control frames (802.3x PAUSE, 802.1Qbb PFC).
const ETH_P_MAC_CONTROL: u16 = 0x8808;
/// Ring geometry: 64 slots of 256 bytes in four pages. A MAC control frame
/// is 60 bytes; 64 slots hold every pause a peer could send between two polls.
const BLOCK_SIZE: u32 = 4096;
const FRAME_SIZE: u32 = 256;
const BLOCKS: u32 = 4;
const FRAMES: usize = (BLOCK_SIZE / FRAME_SIZE * BLOCKS) as usize;
/// Buffers of the lane's own pool: a pause must get through when the
/// switch's pool is exhausted by the very traffic it is meant to stop.
const BUFFERS: usize = 16;

/// A socket that receives only MAC control frames, through a `TPACKET_V2` ring.
pub(super) struct ControlLane {
    base: NonNull<u8>,
    len: usize,
    next: usize,
    pool: Pool,
    // Dropped after the mapping (field order): the ring belongs to it.
    _fd: OwnedFd,
}

// SAFETY: the mapping is owned by exactly one ControlLane (never cloned or
// shared), so moving it to another thread moves sole access with it.
unsafe impl Send for ControlLane {}

impl ControlLane {
    /// Opens the lane on interface `ifindex` (`ifname`, for messages).
    ///
    /// # Errors
    /// Missing privileges or a kernel without `TPACKET_V2`; the message names the step.
    pub(super) fn open(ifname: &str, ifindex: c_int) -> io::Result<Self> {
        let fd = packet_socket(ifname)?;
        let s = fd.as_raw_fd();
        let version = libc::tpacket_versions::TPACKET_V2 as c_int;
        setsockopt(s, libc::SOL_PACKET, libc::PACKET_VERSION, &version)
            .map_err(|e| ctx(ifname, "PACKET_VERSION TPACKET_V2 (control lane)", e))?;
        let req = libc::tpacket_req {
            tp_block_size: BLOCK_SIZE,
            tp_block_nr: BLOCKS,
            tp_frame_size: FRAME_SIZE,
            tp_frame_nr: FRAMES as u32,
        };
        setsockopt(s, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
            .map_err(|e| ctx(ifname, "PACKET_RX_RING (control lane)", e))?;
        let len = (BLOCK_SIZE * BLOCKS) as usize;
        let lane = ControlLane {
            base: map_ring(s, len, ifname, "mmap control lane")?,
            len,
            next: 0,
            pool: Pool::new(BUFFERS),
            _fd: fd,
        };
        bind_packet(s, ifindex, ETH_P_MAC_CONTROL, ifname)?;
        Ok(lane)
    }

    /// The header of slot `i` (< FRAMES); slots never straddle a block.
    fn slot(&self, i: usize) -> *mut libc::tpacket2_hdr {
        let per_block = (BLOCK_SIZE / FRAME_SIZE) as usize;
        let off = i / per_block * BLOCK_SIZE as usize + i % per_block * FRAME_SIZE as usize;
        // SAFETY: i < FRAMES, so the offset lies inside the mapping.
        unsafe { self.base.as_ptr().add(off) }.cast()
    }

    /// The status word of slot `i`, shared with the kernel.
    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: tp_status is the first, naturally aligned u32 of a slot
        // header inside the live mapping, which the kernel also accesses
        // atomically; the reference cannot outlive `self`.
        unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.slot(i)).tp_status)) }
    }

    /// Appends the MAC control frames that have arrived to `burst`, each
    /// stamped `now`, in buffers of the lane's own pool; returns how many.
    /// Frames that do not fit a slot whole are counted in `dropped`; frames
    /// the pool cannot take yet wait.
    pub(super) fn rx(&mut self, burst: &mut Burst, now: u64, dropped: &mut u64) -> usize {
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            let i = self.next;
            if self.status(i).load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
                break;
            }
            let slot = self.slot(i).cast::<u8>();
            // SAFETY: the slot is ours (TP_STATUS_USER, observed with
            // Acquire), so its header, and the sockaddr_ll after it (see the
            // assertion at the end of this file), are initialised and stable.
            let (h, pkttype) = unsafe {
                let sll = slot.add(SLL_OFFSET).cast::<libc::sockaddr_ll>();
                (
                    self.slot(i).read(),
                    std::ptr::addr_of!((*sll).sll_pkttype).read(),
                )
            };
            let (start, len) = (usize::from(h.tp_mac), h.tp_snaplen as usize);
            if pkttype != libc::PACKET_OUTGOING {
                if start + len > FRAME_SIZE as usize || h.tp_snaplen != h.tp_len {
                    // Not a MAC control frame's size: give the slot back unread.
                    *dropped += 1;
                } else {
                    // No buffer: the frame waits in its slot.
                    let Some(mut pkt) = self.pool.alloc() else {
                        break;
                    };
                    // SAFETY: [start, start + len) lies within this slot
                    // (checked), which the kernel does not write until we
                    // return it.
                    let frame = unsafe { std::slice::from_raw_parts(slot.add(start), len) };
                    copy_bytes(&mut pkt.tailroom_mut()[..len], frame);
                    pkt.set_len(len);
                    pkt.timestamp = now;
                    burst.push(pkt);
                    n += 1;
                }
            }
            self.status(i)
                .store(libc::TP_STATUS_KERNEL, Ordering::Release);
            self.next = (i + 1) % FRAMES;
        }
        n
    }
}

impl Drop for ControlLane {
    fn drop(&mut self) {
        // SAFETY: base/len describe the mapping made in `open`, unmapped
        // nowhere else; nothing borrows it past this point.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// Attaches a classic BPF filter to packet socket `fd` that drops MAC
/// control frames (EtherType 0x8808) and passes everything else whole, so
/// the data ring does not see what the control lane receives.
pub(super) fn exclude_mac_control(fd: RawFd, ifname: &str) -> io::Result<()> {
    // ldh [12]; jeq #0x8808, drop, pass; drop: ret #0; pass: ret #0x40000
    let code = [
        libc::sock_filter {
            code: 0x28,
            jt: 0,
            jf: 0,
            k: 12,
        },
        libc::sock_filter {
            code: 0x15,
            jt: 0,
            jf: 1,
            k: u32::from(ETH_P_MAC_CONTROL),
        },
        libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: 0x06,
            jt: 0,
            jf: 0,
            k: 0x40000,
        },
    ];
    let prog = libc::sock_fprog {
        len: code.len() as u16,
        filter: code.as_ptr().cast_mut(),
    };
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &prog)
        .map_err(|e| ctx(ifname, "SO_ATTACH_FILTER (MAC control to its lane)", e))
}

/// Offset of the `sockaddr_ll` that follows each slot's header.
const SLL_OFFSET: usize = libc::TPACKET2_HDRLEN - size_of::<libc::sockaddr_ll>();

const _: () = assert!(libc::TPACKET2_HDRLEN + 64 <= FRAME_SIZE as usize);
