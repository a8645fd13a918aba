//! The kernel calls the Linux-interface backends share (AF_PACKET, AF_XDP,
//! TAP): interface index, flags and hardware address through ioctls, and
//! socket options. Kept apart so no backend reaches into another's module.

// Thin wrappers around libc calls that have no safe form in our dependencies.
#![allow(unsafe_code)]

use std::ffi::{c_int, c_void, CString};
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::RawFd;

use crate::wire::MacAddr;

/// The result of a libc call that returns -1 and sets `errno` on failure.
pub(super) fn cvt(r: c_int) -> io::Result<c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Wraps an OS error with the interface and the step that failed.
pub(super) fn ctx(ifname: &str, what: &str, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{ifname}: {what}: {e}"))
}

/// The kernel's index of `ifname`; `NotFound` when there is no such interface.
pub(super) fn interface_index(ifname: &str) -> io::Result<u32> {
    let cname = CString::new(ifname)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "interface name has a NUL"))?;
    // SAFETY: cname is a valid NUL-terminated string for the call.
    match unsafe { libc::if_nametoindex(cname.as_ptr()) } {
        0 => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("{ifname}: no such interface"),
        )),
        i => Ok(i),
    }
}

/// An `ifreq` naming `ifname`, for the interface ioctls.
pub(super) fn ifreq_for(ifname: &str) -> io::Result<libc::ifreq> {
    let name = ifname.as_bytes();
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains(&0) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{ifname:?} is not a valid interface name"),
        ));
    }
    // SAFETY: ifreq is plain data (a name and a union of integers, addresses
    // and a pointer); all zeroes is a valid value of each.
    let mut ifr: libc::ifreq = unsafe { zeroed() };
    for (d, s) in ifr.ifr_name.iter_mut().zip(name) {
        *d = *s as libc::c_char;
    }
    Ok(ifr)
}

/// The interface flags (`IFF_*`) of `ifname`, via any socket `fd`.
pub(super) fn interface_flags(fd: RawFd, ifname: &str) -> io::Result<c_int> {
    let mut ifr = ifreq_for(ifname)?;
    // SAFETY: SIOCGIFFLAGS reads the name from and writes the flags into the
    // ifreq we pass, which lives for the call.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFFLAGS as _, &mut ifr) })?;
    // SAFETY: SIOCGIFFLAGS filled the flags member of the union.
    let flags = unsafe { ifr.ifr_ifru.ifru_flags };
    Ok(c_int::from(flags) & 0xffff)
}

/// Sets the interface flags of `ifname` (needs CAP_NET_ADMIN).
pub(super) fn set_interface_flags(fd: RawFd, ifname: &str, flags: c_int) -> io::Result<()> {
    let mut ifr = ifreq_for(ifname)?;
    ifr.ifr_ifru.ifru_flags = flags as libc::c_short;
    // SAFETY: SIOCSIFFLAGS only reads the ifreq we pass, which lives for the call.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCSIFFLAGS as _, &mut ifr) })?;
    Ok(())
}

/// The index of interface `ifname` now, via any socket `fd` (an ioctl,
/// without the allocation `if_nametoindex` makes); `None` when no
/// interface has that name.
pub(super) fn current_index(fd: RawFd, ifname: &str) -> Option<c_int> {
    let mut ifr = ifreq_for(ifname).ok()?;
    // SAFETY: SIOCGIFINDEX reads the name from and writes the index into
    // the ifreq we pass, which lives for the call.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFINDEX as _, &mut ifr) }).ok()?;
    // SAFETY: SIOCGIFINDEX filled the ifindex member of the union.
    Some(unsafe { ifr.ifr_ifru.ifru_ifindex })
}

/// Whether flags say the link can pass traffic: administratively up and
/// with carrier.
pub(super) fn flags_up(flags: c_int) -> bool {
    flags & libc::IFF_UP != 0 && flags & libc::IFF_RUNNING != 0
}

/// Whether interface `ifname` can pass traffic now (down when its flags
/// cannot be read, e.g. it vanished).
pub(super) fn link_state(fd: RawFd, ifname: &str) -> bool {
    interface_flags(fd, ifname).map(flags_up).unwrap_or(false)
}

/// The MTU of `ifname`, via any socket `fd`: how large a frame the
/// interface can hand us, which sizes a per-frame receive ring's slots.
pub(super) fn interface_mtu(fd: RawFd, ifname: &str) -> io::Result<u32> {
    let mut ifr = ifreq_for(ifname)?;
    // SAFETY: SIOCGIFMTU reads the name from and writes the MTU into the
    // ifreq we pass, which lives for the call.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFMTU as _, &mut ifr) })
        .map_err(|e| ctx(ifname, "SIOCGIFMTU", e))?;
    // SAFETY: SIOCGIFMTU filled the mtu member of the union.
    let mtu = unsafe { ifr.ifr_ifru.ifru_mtu };
    u32::try_from(mtu).map_err(|_| ctx(ifname, "SIOCGIFMTU", io::ErrorKind::InvalidData.into()))
}

/// Sets the MTU of `ifname` (needs CAP_NET_ADMIN).
pub(super) fn set_interface_mtu(fd: RawFd, ifname: &str, mtu: u32) -> io::Result<()> {
    let mut ifr = ifreq_for(ifname)?;
    ifr.ifr_ifru.ifru_mtu =
        c_int::try_from(mtu).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: SIOCSIFMTU only reads the ifreq we pass, which lives for the call.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCSIFMTU as _, &mut ifr) })
        .map_err(|e| ctx(ifname, "SIOCSIFMTU", e))?;
    Ok(())
}

/// Sets the Ethernet address of `ifname` (needs CAP_NET_ADMIN).
pub(super) fn set_hardware_address(fd: RawFd, ifname: &str, mac: MacAddr) -> io::Result<()> {
    let mut ifr = ifreq_for(ifname)?;
    // SAFETY: writing plain integers into the union's sockaddr member.
    unsafe {
        ifr.ifr_ifru.ifru_hwaddr.sa_family = libc::ARPHRD_ETHER;
        for (d, s) in ifr.ifr_ifru.ifru_hwaddr.sa_data.iter_mut().zip(mac.0) {
            *d = s as libc::c_char;
        }
    }
    // SAFETY: SIOCSIFHWADDR only reads the ifreq we pass, which lives for the call.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCSIFHWADDR as _, &mut ifr) })
        .map_err(|e| ctx(ifname, "SIOCSIFHWADDR", e))?;
    Ok(())
}

/// Sets socket option `name` at `level` to `value`.
pub(super) fn setsockopt<T>(fd: RawFd, level: c_int, name: c_int, value: &T) -> io::Result<()> {
    // SAFETY: `value` points to a live, initialised T of exactly the length
    // we pass; the kernel only copies from it.
    cvt(unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            (value as *const T).cast::<c_void>(),
            size_of::<T>() as libc::socklen_t,
        )
    })?;
    Ok(())
}

/// Reads the interface's MAC; refuses interfaces that are not Ethernet.
pub(super) fn hardware_address(fd: RawFd, ifname: &str) -> io::Result<MacAddr> {
    let mut ifr = ifreq_for(ifname)?;
    // SAFETY: SIOCGIFHWADDR reads the name from and writes the address into
    // the ifreq we pass, which lives for the call.
    cvt(unsafe { libc::ioctl(fd, libc::SIOCGIFHWADDR as _, &mut ifr) })
        .map_err(|e| ctx(ifname, "SIOCGIFHWADDR", e))?;
    // SAFETY: SIOCGIFHWADDR filled the hwaddr member of the union.
    let sa = unsafe { ifr.ifr_ifru.ifru_hwaddr };
    if sa.sa_family != libc::ARPHRD_ETHER {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{ifname}: not an Ethernet interface (hardware type {})",
                sa.sa_family
            ),
        ));
    }
    let mut m = [0u8; 6];
    for (d, s) in m.iter_mut().zip(sa.sa_data.iter()) {
        *d = *s as u8;
    }
    Ok(MacAddr(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_needs_admin_up_and_carrier() {
        assert!(flags_up(libc::IFF_UP | libc::IFF_RUNNING));
        assert!(!flags_up(libc::IFF_UP));
        assert!(!flags_up(libc::IFF_RUNNING));
    }

    #[test]
    fn interface_names_are_checked() {
        assert!(ifreq_for("veth0").is_ok());
        assert!(ifreq_for("").is_err());
        assert!(ifreq_for("a-name-far-too-long").is_err());
        assert!(ifreq_for("a\0b").is_err());
    }
}
