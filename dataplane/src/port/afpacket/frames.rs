//! A `TPACKET_V2` receive ring: fixed-size slots, each with its own status
//! word, so a frame is ours the moment the kernel has written it.
//!
//! The data ring's other form, `TPACKET_V3`, hands frames over a block at a
//! time, when the block is full or its retire timeout (at least 1 ms) runs
//! out. At a lab's rates a block rarely fills, so every frame waited up to a
//! millisecond at every hop. Per-frame slots cost a status handshake per
//! frame and a slot sized for the largest frame, and wake a `poll(2)`
//! sleeper per frame; the MAC-control lane and the per-frame data ring
//! both use this ring.

#![allow(unsafe_code)]

use std::ffi::c_int;
use std::io;
use std::mem::size_of;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};

use super::map_ring;
use crate::port::sys::{ctx, setsockopt};

/// Where a `TPACKET_V2` ring's slots lie: `blocks` blocks of `block_size`
/// bytes (a multiple of the page size), each cut into slots of `slot_size`
/// bytes (a multiple of 16); a slot never straddles two blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Geometry {
    pub(super) block_size: u32,
    pub(super) blocks: u32,
    pub(super) slot_size: u32,
}

impl Geometry {
    /// Slots in the ring.
    pub(super) fn slots(self) -> usize {
        (self.block_size / self.slot_size.max(1)) as usize * self.blocks as usize
    }

    /// Bytes of the mapping.
    fn len(self) -> usize {
        self.block_size as usize * self.blocks as usize
    }
}

/// The smallest power-of-two slot that holds the ring's header and a frame
/// of `mtu` bytes of payload with an Ethernet header and one VLAN tag.
pub(super) fn slot_for_mtu(mtu: u32) -> u32 {
    let need = libc::TPACKET2_HDRLEN as u32 + 16 + mtu.saturating_add(18);
    need.next_power_of_two().max(256)
}

/// One frame the kernel handed over, as its slot header describes it.
pub(super) struct RxFrame<'a> {
    /// The captured bytes (`tp_snaplen` of them), from the MAC header on.
    pub(super) data: &'a [u8],
    /// The frame's length on the wire; longer than `data` when the slot
    /// truncated it.
    pub(super) wire_len: u32,
    /// The slot's `tp_status` (checksum and VLAN flags).
    pub(super) status: u32,
    /// We sent it: the kernel loops our own transmissions back.
    pub(super) outgoing: bool,
    /// The 802.1Q/802.1ad tag the kernel took out of the frame (TPID, TCI).
    pub(super) tag: Option<(u16, u16)>,
    /// When the kernel took the frame in, in ns of `CLOCK_REALTIME`.
    pub(super) stamp_ns: u64,
}

/// A mapped `TPACKET_V2` receive ring and the slot to read next.
pub(super) struct FrameRing {
    base: NonNull<u8>,
    geometry: Geometry,
    next: usize,
}

// SAFETY: the mapping is owned by exactly one FrameRing (never cloned or
// shared), so moving it to another thread moves sole access with it.
unsafe impl Send for FrameRing {}

impl FrameRing {
    /// Switches packet socket `fd` to `TPACKET_V2` and maps a receive ring
    /// of `geometry`; `what` names the ring in errors. Call before binding
    /// the socket, so no frame arrives before the ring exists.
    ///
    /// # Errors
    /// A kernel without `TPACKET_V2`, or no memory for the ring; the
    /// message names the step.
    pub(super) fn open(
        fd: RawFd,
        geometry: Geometry,
        ifname: &str,
        what: &str,
    ) -> io::Result<Self> {
        let version = libc::tpacket_versions::TPACKET_V2 as c_int;
        setsockopt(fd, libc::SOL_PACKET, libc::PACKET_VERSION, &version)
            .map_err(|e| ctx(ifname, &format!("PACKET_VERSION TPACKET_V2 ({what})"), e))?;
        let req = libc::tpacket_req {
            tp_block_size: geometry.block_size,
            tp_block_nr: geometry.blocks,
            tp_frame_size: geometry.slot_size,
            tp_frame_nr: geometry.slots() as u32,
        };
        setsockopt(fd, libc::SOL_PACKET, libc::PACKET_RX_RING, &req)
            .map_err(|e| ctx(ifname, &format!("PACKET_RX_RING ({what})"), e))?;
        let base = map_ring(fd, geometry.len(), ifname, &format!("mmap {what}"))?;
        Ok(FrameRing {
            base,
            geometry,
            next: 0,
        })
    }

    /// The header of slot `i` (< slots).
    fn slot(&self, i: usize) -> *mut libc::tpacket2_hdr {
        let g = self.geometry;
        let per_block = (g.block_size / g.slot_size) as usize;
        let off = i / per_block * g.block_size as usize + i % per_block * g.slot_size as usize;
        // SAFETY: i < slots, so the offset lies inside the mapping.
        unsafe { self.base.as_ptr().add(off) }.cast()
    }

    /// The status word of slot `i`, shared with the kernel.
    fn status(&self, i: usize) -> &AtomicU32 {
        // SAFETY: tp_status is the first, naturally aligned u32 of a slot
        // header inside the live mapping, which the kernel also accesses
        // atomically; the reference cannot outlive `self`.
        unsafe { AtomicU32::from_ptr(std::ptr::addr_of_mut!((*self.slot(i)).tp_status)) }
    }

    /// The next frame, once the kernel has handed its slot over; `Err(())`
    /// for a slot whose header points outside it (never written by a sane
    /// kernel), which the caller counts and releases.
    pub(super) fn peek(&self) -> Option<Result<RxFrame<'_>, ()>> {
        let i = self.next;
        if self.status(i).load(Ordering::Acquire) & libc::TP_STATUS_USER == 0 {
            return None;
        }
        let slot = self.slot(i).cast::<u8>();
        // SAFETY: the slot is ours (TP_STATUS_USER, observed with Acquire),
        // so its header and the sockaddr_ll after it (see the assertion at
        // the end of this file) are initialised and stable until release.
        let (h, pkttype) = unsafe {
            let sll = slot.add(SLL_OFFSET).cast::<libc::sockaddr_ll>();
            (
                self.slot(i).read(),
                std::ptr::addr_of!((*sll).sll_pkttype).read(),
            )
        };
        let (start, len) = (usize::from(h.tp_mac), h.tp_snaplen as usize);
        if start + len > self.geometry.slot_size as usize {
            return Some(Err(()));
        }
        // SAFETY: [start, start + len) lies within this slot (checked), which
        // the kernel does not write until we release it; the borrow of
        // `self` keeps `release` from running while the slice lives.
        let data = unsafe { std::slice::from_raw_parts(slot.add(start), len) };
        let tag = (h.tp_status & libc::TP_STATUS_VLAN_VALID != 0).then(|| {
            let tpid = if h.tp_status & libc::TP_STATUS_VLAN_TPID_VALID != 0 {
                h.tp_vlan_tpid
            } else {
                0x8100
            };
            (tpid, h.tp_vlan_tci)
        });
        Some(Ok(RxFrame {
            data,
            wire_len: h.tp_len,
            status: h.tp_status,
            outgoing: pkttype == libc::PACKET_OUTGOING,
            tag,
            stamp_ns: u64::from(h.tp_sec) * 1_000_000_000 + u64::from(h.tp_nsec),
        }))
    }

    /// Gives the current slot back to the kernel and moves to the next.
    pub(super) fn release(&mut self) {
        self.status(self.next)
            .store(libc::TP_STATUS_KERNEL, Ordering::Release);
        self.next = (self.next + 1) % self.geometry.slots();
    }
}

impl Drop for FrameRing {
    fn drop(&mut self) {
        // SAFETY: base/len describe the mapping made in `open`, unmapped
        // nowhere else; nothing borrows it past this point.
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.geometry.len()) };
    }
}

/// Offset of the `sockaddr_ll` that follows each slot's header.
const SLL_OFFSET: usize = libc::TPACKET2_HDRLEN - size_of::<libc::sockaddr_ll>();

const _: () = assert!(libc::TPACKET2_HDRLEN + 64 <= 256);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_hold_the_largest_frame_of_the_mtu_with_a_tag() {
        assert_eq!(slot_for_mtu(1500), 2048);
        assert_eq!(slot_for_mtu(9000), 16384);
        assert_eq!(slot_for_mtu(9216), 16384);
        assert_eq!(slot_for_mtu(0), 256);
        for mtu in [68, 1500, 4200, 9000, 9216] {
            let slot = slot_for_mtu(mtu);
            assert!(slot as usize >= libc::TPACKET2_HDRLEN + 16 + mtu as usize + 18);
            assert!(slot.is_power_of_two());
        }
    }

    #[test]
    fn slots_are_counted_per_block() {
        let g = Geometry {
            block_size: 32 * 1024,
            blocks: 4,
            slot_size: 2048,
        };
        assert_eq!(g.slots(), 64);
        assert_eq!(g.len(), 128 * 1024);
        // A slot that does not divide the block leaves the tail unused.
        let odd = Geometry {
            slot_size: 12 * 1024,
            ..g
        };
        assert_eq!(odd.slots(), 8);
    }
}
