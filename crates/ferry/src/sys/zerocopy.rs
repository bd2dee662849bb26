//! `MSG_ZEROCOPY` sends on sockets (Linux 4.14+, TCP; UDP 5.0+): the
//! kernel pins the pages of the sent bytes instead of copying them and
//! says on the socket's error queue when it no longer needs them — each
//! successful `send` gets the next 32-bit id, and a completion names a
//! range of ids, flagged when the kernel copied after all (loopback and
//! any delivery to a local socket do). Until then the bytes must not
//! change: the engine above holds the `Buf`s they live in.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// `SO_ZEROCOPY` (asm-generic/socket.h).
const SO_ZEROCOPY: libc::c_int = 60;
/// `SO_EE_ORIGIN_ZEROCOPY` (linux/errqueue.h).
const SO_EE_ORIGIN_ZEROCOPY: u8 = 5;
/// `SO_EE_ORIGIN_TIMESTAMPING` (linux/errqueue.h): a transmit timestamp
/// the socket's owner asked for (`SO_TIMESTAMPING`), queued with
/// `ee_errno` `ENOMSG`; not an error of any send.
const SO_EE_ORIGIN_TIMESTAMPING: u8 = 4;
/// `SO_EE_CODE_ZEROCOPY_COPIED`: the kernel copied the bytes anyway.
const SO_EE_CODE_ZEROCOPY_COPIED: u8 = 1;

/// Turns `SO_ZEROCOPY` on if it is off: `Ok(true)`. `Ok(false)`: it was
/// on already — someone made zero-copy sends on this socket before, so
/// the kernel's next completion id is unknown. An error (`EOPNOTSUPP` for
/// a Unix socket, `ENOPROTOOPT` before 4.14) means sends must go without.
pub(crate) fn enable(fd: BorrowedFd<'_>) -> io::Result<bool> {
    let mut on: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `on` and `len` are valid and writable for the call, `len`
    // holding `on`'s size.
    let r = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            (&mut on as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    if on != 0 {
        return Ok(false);
    }
    let one: libc::c_int = 1;
    // SAFETY: `one` is a valid c_int for the call's duration and its size
    // is given; the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ZEROCOPY,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(true)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One `send` of `data` (EINTR retried, no SIGPIPE: a gone peer is
/// `EPIPE`), with `MSG_ZEROCOPY` when `zerocopy`. A zero-copy send that
/// returns `Ok` took an id; the pages of `data` stay in the kernel's use
/// until that id completes.
pub(crate) fn send(fd: BorrowedFd<'_>, data: &[u8], zerocopy: bool) -> io::Result<usize> {
    let flags = libc::MSG_NOSIGNAL | if zerocopy { libc::MSG_ZEROCOPY } else { 0 };
    loop {
        // SAFETY: `data` is valid for reads of its length for the call; the
        // kernel reads it (or, with MSG_ZEROCOPY, takes references to its
        // pages, which the caller keeps unchanged until completion).
        let r = unsafe { libc::send(fd.as_raw_fd(), data.as_ptr().cast(), data.len(), flags) };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A range of completed send ids, inclusive, and whether the kernel
/// copied their bytes after all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Completion {
    pub lo: u32,
    pub hi: u32,
    pub copied: bool,
}

/// Reads every completion waiting on `fd`'s error queue (without
/// blocking) into `out`; returns how many messages were read. An error
/// queue message that is not a zero-copy completion (an ICMP error, say)
/// is returned as the error it carries; transmit timestamps are passed
/// over (read, so taken off the queue: they cannot be left on it).
pub(crate) fn reap(fd: BorrowedFd<'_>, out: &mut Vec<Completion>) -> io::Result<usize> {
    let mut n = 0;
    loop {
        // Room for one cmsg holding a sock_extended_err and the offender's
        // address after it, aligned as cmsghdr needs.
        let mut control = [0u64; 16];
        // SAFETY: an all-zero msghdr is valid (no name, no iovecs).
        let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
        msg.msg_control = control.as_mut_ptr().cast();
        msg.msg_controllen = std::mem::size_of_val(&control) as _;
        // SAFETY: `msg` points at `control`, valid and writable for its
        // stated length for the call; no iovecs, so no data is written.
        let r = unsafe {
            libc::recvmsg(
                fd.as_raw_fd(),
                &mut msg,
                libc::MSG_ERRQUEUE | libc::MSG_DONTWAIT,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return Ok(n),
                _ => return Err(e),
            }
        }
        n += 1;
        // SAFETY: recvmsg filled `msg` and set msg_controllen to what it
        // wrote into `control`; CMSG_FIRSTHDR/NXTHDR walk only within it.
        let mut c = unsafe { libc::CMSG_FIRSTHDR(&msg) };
        while !c.is_null() {
            // SAFETY: `c` is a cmsghdr inside `control` (non-null from
            // FIRSTHDR/NXTHDR).
            let h = unsafe { &*c };
            let ip = (h.cmsg_level == libc::SOL_IP && h.cmsg_type == libc::IP_RECVERR)
                || (h.cmsg_level == libc::SOL_IPV6 && h.cmsg_type == libc::IPV6_RECVERR);
            let need = std::mem::size_of::<libc::sock_extended_err>();
            // SAFETY: CMSG_LEN is arithmetic on the length.
            if ip && h.cmsg_len as usize >= unsafe { libc::CMSG_LEN(need as u32) } as usize {
                // SAFETY: the cmsg's data holds at least a
                // sock_extended_err (checked length); read unaligned, as
                // the buffer gives no alignment promise for it.
                let ee: libc::sock_extended_err =
                    unsafe { std::ptr::read_unaligned(libc::CMSG_DATA(c).cast()) };
                if ee.ee_origin == SO_EE_ORIGIN_ZEROCOPY && ee.ee_errno == 0 {
                    out.push(Completion {
                        lo: ee.ee_info,
                        hi: ee.ee_data,
                        copied: ee.ee_code & SO_EE_CODE_ZEROCOPY_COPIED != 0,
                    });
                } else if ee.ee_errno != 0 && ee.ee_origin != SO_EE_ORIGIN_TIMESTAMPING {
                    return Err(io::Error::from_raw_os_error(ee.ee_errno as i32));
                }
            }
            // SAFETY: as above; NXTHDR returns null past the last one.
            c = unsafe { libc::CMSG_NXTHDR(&msg, c) };
        }
    }
}

/// Waits up to `timeout_ms` (-1: for ever) for something on `fd`'s error
/// queue (`POLLERR`, which poll reports whatever events are asked for).
/// Returns whether anything was reported (`POLLHUP` too: a caller that
/// then finds nothing queued should not poll again at once).
pub(crate) fn wait_errqueue(fd: BorrowedFd<'_>, timeout_ms: i32) -> io::Result<bool> {
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: 0,
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, its count 1.
        let r = unsafe { libc::poll(&mut p, 1, timeout_ms) };
        if r >= 0 {
            return Ok(r > 0);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
