//! TAP port: a switch port whose wire leads into the local kernel.
//!
//! The tap device is two-sided. Railyard holds the character-device side
//! (`/dev/net/tun`); the kernel side is a network interface that the
//! namespace's own stack uses like any NIC. That kernel side is the port's
//! **peer**: frames written by `tx_burst` are received by the kernel stack,
//! and frames the kernel sends out of the interface are read by `rx_burst`.
//! This is how a lab namespace gets a host (or the switch its own management
//! interface) without a veth pair.
//!
//! The device is opened with `IFF_TAP | IFF_NO_PI` (Ethernet frames, no
//! packet-information prefix) and created if it does not exist; a device
//! railyard created disappears when the port is dropped, a pre-existing
//! persistent one (`ip tuntap add`) stays. Opening brings the link up.
//!
//! The tun driver has no batch API: each frame costs one `read` or `write`
//! syscall, so a burst of 32 is 32 syscalls. That is unavoidable without
//! vhost-net and fine for lab rates.
//!
//! [`mac`](Port::mac) is `None`: the only MAC the interface has is the
//! kernel side's, which is the peer's address, not this port's.

// The TUNSETIFF ioctl and the helper socket have no safe wrapper in our
// dependencies.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::ffi::{CStr, CString};
use std::fs::{File, OpenOptions};
use std::io::{self, ErrorKind, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;

use super::refresh::RefreshTimer;
use super::sys::{
    flags_up, ifreq_for, interface_flags, link_state, set_hardware_address, set_interface_flags,
    set_interface_mtu,
};
use crate::clock::Nanos;
use crate::packet::{Burst, Pool, BURST_SIZE, MAX_FRAME};
use crate::port::{IoCounters, Port, TxDone};
use crate::wire::MacAddr;

/// `TUNSETCARRIER`, `_IOW('T', 226, int)` (not in the libc crate).
const TUNSETCARRIER: libc::c_ulong = 0x4004_54e2;

/// A tap device opened as a switch port (see the module doc).
pub struct TapPort {
    dev: File,
    /// An AF_INET socket for the interface-flag ioctls.
    ctl: OwnedFd,
    ifname: String,
    created: bool,
    counters: IoCounters,
    link: Cell<bool>,
    refresh: RefreshTimer,
}

impl TapPort {
    /// Attaches to tap `ifname`, creating it if absent, and brings it up.
    /// A name with `%d` lets the kernel pick the number. Needs CAP_NET_ADMIN.
    ///
    /// # Errors
    /// No `/dev/net/tun`, missing privileges, or a device of that name that is
    /// not a tap or is already attached elsewhere; the message names the step.
    pub fn open(ifname: &str) -> io::Result<Self> {
        let mut ifr = ifreq_for(ifname)?;
        // ifreq_for has refused names with a NUL, so this cannot fail.
        let cname = CString::new(ifname).unwrap_or_default();
        // SAFETY: `cname` is NUL-terminated and lives for the call.
        let existed = !ifname.contains('%') && unsafe { libc::if_nametoindex(cname.as_ptr()) } != 0;
        let dev = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open("/dev/net/tun")
            .map_err(|e| io::Error::new(e.kind(), format!("{ifname}: open /dev/net/tun: {e}")))?;
        ifr.ifr_ifru.ifru_flags = (libc::IFF_TAP | libc::IFF_NO_PI) as libc::c_short;
        // SAFETY: TUNSETIFF reads the name and flags from, and writes the
        // final name into, the ifreq we pass, which lives for the call.
        let r = unsafe { libc::ioctl(dev.as_raw_fd(), libc::TUNSETIFF as _, &mut ifr) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("{ifname}: TUNSETIFF (not a tap, or in use?): {e}"),
            ));
        }
        // SAFETY: the kernel wrote a NUL-terminated name (at most IFNAMSIZ-1
        // bytes) into ifr_name.
        let name = unsafe { CStr::from_ptr(ifr.ifr_name.as_ptr()) }
            .to_string_lossy()
            .into_owned();

        // SAFETY: plain syscall with constant arguments.
        let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: socket() just returned this descriptor; nothing else owns it.
        let ctl = unsafe { OwnedFd::from_raw_fd(raw) };
        let flags = interface_flags(ctl.as_raw_fd(), &name)
            .map_err(|e| io::Error::new(e.kind(), format!("{name}: SIOCGIFFLAGS: {e}")))?;
        set_interface_flags(ctl.as_raw_fd(), &name, flags | libc::IFF_UP)
            .map_err(|e| io::Error::new(e.kind(), format!("{name}: set up: {e}")))?;
        let link = link_state(ctl.as_raw_fd(), &name);
        Ok(TapPort {
            dev,
            ctl,
            ifname: name,
            created: !existed,
            counters: IoCounters::default(),
            link: Cell::new(link),
            refresh: RefreshTimer::new(),
        })
    }

    /// The device's name (the kernel's choice when opened with `%d`).
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// Whether opening created the device (so it goes away with the port).
    pub fn created_device(&self) -> bool {
        self.created
    }

    /// The kernel side's interface index, for rtnetlink requests about it.
    ///
    /// # Errors
    /// When the device has vanished.
    pub fn index(&self) -> io::Result<u32> {
        super::sys::interface_index(&self.ifname)
    }

    /// Brings the kernel side up or down (a mirror changes its MAC while
    /// down, so that the IPv6 link-local address the kernel derives on the
    /// way up is the port's).
    ///
    /// # Errors
    /// The ioctl's error, naming the device.
    pub fn set_up(&self, up: bool) -> io::Result<()> {
        let flags = interface_flags(self.ctl.as_raw_fd(), &self.ifname)?;
        let flags = if up {
            flags | libc::IFF_UP
        } else {
            flags & !libc::IFF_UP
        };
        set_interface_flags(self.ctl.as_raw_fd(), &self.ifname, flags)
    }

    /// Gives the kernel side the address `mac`, so that what the kernel
    /// sends through a mirror carries the switch port's own address.
    ///
    /// # Errors
    /// The ioctl's error, naming the device.
    pub fn set_mac(&self, mac: MacAddr) -> io::Result<()> {
        set_hardware_address(self.ctl.as_raw_fd(), &self.ifname, mac)
    }

    /// Sets the kernel side's MTU (a mirror carries its port's).
    ///
    /// # Errors
    /// The ioctl's error, naming the device.
    pub fn set_mtu(&self, mtu: u32) -> io::Result<()> {
        set_interface_mtu(self.ctl.as_raw_fd(), &self.ifname, mtu)
    }

    /// Sets the kernel side's carrier: a mirror shows its port's link state,
    /// so the routing suite sees a pulled cable as the kernel does.
    ///
    /// # Errors
    /// The ioctl's error, naming the device.
    pub fn set_carrier(&self, up: bool) -> io::Result<()> {
        let on: libc::c_int = up.into();
        // SAFETY: TUNSETCARRIER reads an int through the pointer, which
        // lives for the call.
        let r = unsafe { libc::ioctl(self.dev.as_raw_fd(), TUNSETCARRIER as _, &on) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return Err(io::Error::new(
                e.kind(),
                format!("{}: TUNSETCARRIER: {e}", self.ifname),
            ));
        }
        Ok(())
    }
}

impl Port for TapPort {
    /// The device: readable while the kernel has frames queued for us.
    fn wake_fds(&self) -> Vec<std::os::fd::RawFd> {
        vec![self.dev.as_raw_fd()]
    }

    /// Reads one frame per syscall until the device is drained or the burst
    /// is full. A pool miss stops the burst and leaves frames queued in the
    /// kernel.
    fn rx_burst(&mut self, pool: &Pool, burst: &mut Burst, now: Nanos) -> usize {
        let mut n = 0;
        while burst.len() < BURST_SIZE {
            let Some(mut pkt) = pool.alloc() else { break };
            let room = pkt.tailroom_mut();
            let room_len = room.len().min(MAX_FRAME);
            match (&self.dev).read(&mut room[..room_len]) {
                // The driver reports a frame's full length even when it had
                // to cut it to fit; such a frame is useless.
                Ok(len) if len > room_len => self.counters.rx_dropped += 1,
                Ok(0) => break,
                Ok(len) => {
                    pkt.set_len(len);
                    pkt.timestamp = now;
                    burst.push(pkt);
                    n += 1;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        self.counters.rx_frames += n as u64;
        n
    }

    /// Writes one frame per syscall. Frames the kernel refuses (link down,
    /// malformed) are dropped and counted in `tx_errors`; if the device
    /// would block, the rest stay in `burst`.
    fn tx_burst(&mut self, burst: &mut Burst, _now: Nanos) -> TxDone {
        let mut done = 0;
        let mut result = TxDone::default();
        while done < burst.len() {
            match (&self.dev).write(burst[done].data()) {
                Ok(_) => {
                    self.counters.tx_frames += 1;
                    result.sent += 1;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(_) => {
                    self.counters.tx_errors += 1;
                    result.failed += 1;
                    result.failed_bytes += burst[done].len() as u64;
                }
            }
            done += 1;
        }
        crate::packet::free_front(burst, done);
        result
    }

    fn link_up(&self) -> bool {
        if self.refresh.due() {
            // A tap whose kernel side was moved to another namespace (a lab
            // host) is no longer visible here, yet our descriptor still
            // carries its frames: count it as up.
            let up = match interface_flags(self.ctl.as_raw_fd(), &self.ifname) {
                Ok(flags) => flags_up(flags),
                Err(e) => e.raw_os_error() == Some(libc::ENODEV),
            };
            self.link.set(up);
        }
        self.link.get()
    }

    fn io_counters(&self) -> IoCounters {
        self.counters
    }

    fn describe(&self) -> String {
        format!("tap {}", self.ifname)
    }
}

/// The device, for a control-plane thread that sleeps in `poll(2)` on it.
impl std::os::fd::AsFd for TapPort {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.dev.as_fd()
    }
}

impl std::fmt::Debug for TapPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TapPort")
            .field("ifname", &self.ifname)
            .field("created", &self.created)
            .field("counters", &self.counters)
            .finish()
    }
}
