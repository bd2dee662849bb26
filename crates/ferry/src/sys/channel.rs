//! What kind of channel a descriptor is, and the sizes that bound one
//! transfer on it: the queries behind Roadrunner's channel parameters
//! (`ctl(fd, GET_BLOCK_TYPE)`, `ctl(fd, GET_BUF_SIZE)` in the paper).

use rustix::fs::FileType;
use rustix::net::{AddressFamily, SocketType};
use std::io;
use std::os::fd::BorrowedFd;

/// A descriptor's kind, from `fstat` (and, for sockets, their type and
/// address family; for character devices, whether they are terminals).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FdKind {
    Regular { size: u64, blksize: u64 },
    Pipe,
    Socket { stream: bool, family: Family },
    Tty,
    CharDevice { blksize: u64 },
    BlockDevice { blksize: u64 },
    Directory,
    Other,
}

/// A socket's address family, as far as transfers care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Inet,
    Unix,
    Other,
}

pub(crate) fn fd_kind(fd: BorrowedFd<'_>) -> io::Result<FdKind> {
    let st = rustix::fs::fstat(fd)?;
    let blksize = st.st_blksize as u64;
    Ok(match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => FdKind::Regular {
            size: st.st_size as u64,
            blksize,
        },
        FileType::Fifo => FdKind::Pipe,
        FileType::Socket => {
            let stream = rustix::net::sockopt::socket_type(fd)? == SocketType::STREAM;
            let family = match rustix::net::sockopt::socket_domain(fd)? {
                AddressFamily::INET | AddressFamily::INET6 => Family::Inet,
                AddressFamily::UNIX => Family::Unix,
                _ => Family::Other,
            };
            FdKind::Socket { stream, family }
        }
        FileType::CharacterDevice if is_tty(fd) => FdKind::Tty,
        FileType::CharacterDevice => FdKind::CharDevice { blksize },
        FileType::BlockDevice => FdKind::BlockDevice { blksize },
        FileType::Directory => FdKind::Directory,
        _ => FdKind::Other,
    })
}

fn is_tty(fd: BorrowedFd<'_>) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: isatty only inspects the descriptor number it is given.
    unsafe { libc::isatty(fd.as_raw_fd()) == 1 }
}

/// A pipe's capacity in bytes (`F_GETPIPE_SZ`).
pub(crate) fn pipe_capacity(fd: BorrowedFd<'_>) -> io::Result<usize> {
    Ok(rustix::pipe::fcntl_getpipe_size(fd)?)
}

/// A socket's send (`SO_SNDBUF`) or receive (`SO_RCVBUF`) buffer size.
pub(crate) fn socket_buffer(fd: BorrowedFd<'_>, send: bool) -> io::Result<usize> {
    Ok(if send {
        rustix::net::sockopt::socket_send_buffer_size(fd)?
    } else {
        rustix::net::sockopt::socket_recv_buffer_size(fd)?
    })
}

/// Whether the descriptor was opened `O_DIRECT` (transfers then in whole,
/// aligned blocks of the device).
pub(crate) fn is_direct(fd: BorrowedFd<'_>) -> io::Result<bool> {
    Ok(rustix::fs::fcntl_getfl(fd)?.contains(rustix::fs::OFlags::DIRECT))
}

/// Waits until `fd` is readable (or writable, `write`): for a descriptor in
/// non-blocking mode that said `EAGAIN`. EINTR is retried; a descriptor
/// whose peer has gone counts as ready (the next call reports it).
pub(crate) fn wait_ready(fd: BorrowedFd<'_>, write: bool) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut p = libc::pollfd {
        fd: fd.as_raw_fd(),
        events: if write { libc::POLLOUT } else { libc::POLLIN },
        revents: 0,
    };
    loop {
        // SAFETY: one valid pollfd, its count 1; no timeout.
        let r = unsafe { libc::poll(&mut p, 1, -1) };
        if r >= 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// Whether the descriptor is in non-blocking mode (`O_NONBLOCK`): a write
/// it cannot take now says `EAGAIN` instead of waiting.
pub(crate) fn is_nonblocking(fd: BorrowedFd<'_>) -> io::Result<bool> {
    Ok(rustix::fs::fcntl_getfl(fd)?.contains(rustix::fs::OFlags::NONBLOCK))
}

/// One `poll` of up to two descriptors: `read` for input, `write` for
/// output, waiting up to `timeout_ms` (-1: no limit; 0: just look).
/// Returns whether each is ready; an error or hang-up counts as ready (the
/// next call on it reports it). EINTR is retried with the same timeout.
pub(crate) fn poll_two(
    read: Option<BorrowedFd<'_>>,
    write: Option<BorrowedFd<'_>>,
    timeout_ms: i32,
) -> io::Result<(bool, bool)> {
    use std::os::fd::AsRawFd;
    let mut fds = [
        libc::pollfd {
            fd: read.map_or(-1, |f| f.as_raw_fd()),
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: write.map_or(-1, |f| f.as_raw_fd()),
            events: libc::POLLOUT,
            revents: 0,
        },
    ];
    loop {
        // SAFETY: two valid pollfds (a negative fd is ignored by poll), the
        // count 2 matching the array.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
        if r >= 0 {
            break;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
    if fds
        .iter()
        .any(|p| p.fd >= 0 && p.revents & libc::POLLNVAL != 0)
    {
        return Err(io::Error::from_raw_os_error(libc::EBADF));
    }
    let ready = |p: &libc::pollfd, want: libc::c_short| {
        p.fd >= 0 && p.revents & (want | libc::POLLERR | libc::POLLHUP) != 0
    };
    Ok((ready(&fds[0], libc::POLLIN), ready(&fds[1], libc::POLLOUT)))
}

/// Sets `TCP_DEFER_ACCEPT` on a listening TCP socket: `accept` hands
/// out a connection only once its first bytes have come (or after about
/// `seconds`, when the kernel gives the connection up waiting).
pub(crate) fn set_defer_accept(fd: BorrowedFd<'_>, seconds: u32) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let v = libc::c_int::try_from(seconds).unwrap_or(libc::c_int::MAX);
    // SAFETY: `v` is a valid c_int for the call's duration and its size is
    // given; the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_DEFER_ACCEPT,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
