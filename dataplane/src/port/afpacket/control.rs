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

use std::ffi::c_int;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use super::frames::{FrameRing, Geometry};
use super::{bind_packet, packet_socket};
use crate::packet::{copy_bytes, Burst, Pool, BURST_SIZE};
use crate::port::sys::{ctx, setsockopt};

/// EtherType of MAC control frames (802.3x PAUSE, 802.1Qbb PFC).
const ETH_P_MAC_CONTROL: u16 = 0x8808;
/// Ring geometry: 64 slots of 256 bytes in four pages. A MAC control frame
/// is 60 bytes; 64 slots hold every pause a peer could send between two polls.
const GEOMETRY: Geometry = Geometry {
    block_size: 4096,
    blocks: 4,
    slot_size: 256,
};
/// Buffers of the lane's own pool: a pause must get through when the
/// switch's pool is exhausted by the very traffic it is meant to stop.
const BUFFERS: usize = 16;

/// A socket that receives only MAC control frames, through a `TPACKET_V2` ring.
pub(super) struct ControlLane {
    ring: FrameRing,
    pool: Pool,
    // Dropped after the ring (field order): the mapping belongs to it.
    fd: OwnedFd,
}

impl ControlLane {
    /// Opens the lane on interface `ifindex` (`ifname`, for messages).
    ///
    /// # Errors
    /// Missing privileges or a kernel without `TPACKET_V2`; the message names the step.
    pub(super) fn open(ifname: &str, ifindex: c_int) -> io::Result<Self> {
        let fd = packet_socket(ifname)?;
        let ring = FrameRing::open(fd.as_raw_fd(), GEOMETRY, ifname, "control lane")?;
        bind_packet(fd.as_raw_fd(), ifindex, ETH_P_MAC_CONTROL, ifname)?;
        Ok(ControlLane {
            ring,
            pool: Pool::new(BUFFERS),
            fd,
        })
    }

    /// The lane's socket, readable when a MAC control frame has arrived.
    pub(super) fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Appends the MAC control frames that have arrived to `burst`, each
    /// stamped `now`, in buffers of the lane's own pool; returns how many.
    /// Frames that do not fit a slot whole are counted in `dropped`; frames
    /// the pool cannot take yet wait.
    pub(super) fn rx(&mut self, burst: &mut Burst, now: u64, dropped: &mut u64) -> usize {
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            match self.ring.peek() {
                None => break,
                Some(Ok(f)) if f.outgoing => {}
                Some(Ok(f)) if f.data.len() == f.wire_len as usize => {
                    // No buffer: the frame waits in its slot.
                    let Some(mut pkt) = self.pool.alloc() else {
                        break;
                    };
                    let len = f.data.len();
                    copy_bytes(&mut pkt.tailroom_mut()[..len], f.data);
                    pkt.set_len(len);
                    pkt.timestamp = now;
                    burst.push(pkt);
                    n += 1;
                }
                // Not a MAC control frame's size: give the slot back unread.
                Some(_) => *dropped += 1,
            }
            self.ring.release();
        }
        n
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
