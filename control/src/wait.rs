//! Waiting on file descriptors without spinning: the control-plane threads
//! (ranks, mirrors, the kernel route follower) sleep here until a socket has
//! something or a timeout passes.

use railyard_dataplane::clock::Nanos;

/// Blocks until a socket is readable or `ns` passed.
pub(crate) fn block_on(fds: &[std::os::fd::BorrowedFd<'_>], ns: Nanos) -> std::io::Result<usize> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut pfds: Vec<PollFd<'_>> = fds
        .iter()
        .map(|fd| PollFd::from_borrowed_fd(*fd, PollFlags::IN))
        .collect();
    let ts = Timespec {
        tv_sec: (ns / 1_000_000_000) as i64,
        tv_nsec: (ns % 1_000_000_000) as i64,
    };
    poll(&mut pfds, Some(&ts)).map_err(std::io::Error::from)
}
