//! The sockets of an ipc channel: `SOCK_SEQPACKET` Unix sockets that
//! carry packets and descriptors, waits on them with deadlines, and a
//! wake-up call within a process.

use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType,
};
use std::io;
use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};
/// A connected pair of `SOCK_SEQPACKET` Unix sockets (close-on-exec).
pub(crate) fn seqpacket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(rustix::net::socketpair(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?)
}

/// A `SOCK_SEQPACKET` socket listening on the abstract Unix name `name`
/// (no file in any file system).
pub(crate) fn listen_abstract(name: &str) -> io::Result<OwnedFd> {
    let addr = SocketAddrUnix::new_abstract_name(name.as_bytes())?;
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::bind(&fd, &addr)?;
    rustix::net::listen(&fd, 16)?;
    Ok(fd)
}

/// Accepts one connection on `fd`, waiting at most `timeout`.
pub(crate) fn accept(fd: BorrowedFd<'_>, timeout: Option<Duration>) -> io::Result<OwnedFd> {
    wait(fd, true, false, timeout.map(|t| Instant::now() + t))?;
    Ok(rustix::net::accept_with(fd, SocketFlags::CLOEXEC)?)
}

/// Connects to the abstract Unix name `name`.
pub(crate) fn connect_abstract(name: &str) -> io::Result<OwnedFd> {
    let addr = SocketAddrUnix::new_abstract_name(name.as_bytes())?;
    let fd = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::CLOEXEC,
        None,
    )?;
    rustix::net::connect(&fd, &addr)?;
    Ok(fd)
}

/// Waits until `fd` is readable (`read`) or writable (`write`), or has
/// hung up, until `deadline` (forever if `None`). Returns which of the
/// two it is: (readable or hung up, writable).
pub(crate) fn wait(
    fd: BorrowedFd<'_>,
    read: bool,
    write: bool,
    deadline: Option<Instant>,
) -> io::Result<(bool, bool)> {
    wait_beside(fd, read, write, None, deadline).map(|(r, w, _)| (r, w))
}

/// [`wait`], also watching `beside` for input (or its hang-up): the
/// third flag says it is readable. A [`Wake`] goes there as
/// [`Wake::fd`].
pub(crate) fn wait_beside(
    fd: BorrowedFd<'_>,
    read: bool,
    write: bool,
    beside: Option<BorrowedFd<'_>>,
    deadline: Option<Instant>,
) -> io::Result<(bool, bool, bool)> {
    use rustix::event::{PollFd, PollFlags};
    let mut flags = PollFlags::empty();
    if read {
        flags |= PollFlags::IN;
    }
    if write {
        flags |= PollFlags::OUT;
    }
    let ready = |f: PollFlags| f.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR);
    loop {
        let left = time_left(deadline, "the peer did not answer in time")?;
        let mut one = [PollFd::new(&fd, flags)];
        let mut both;
        let p: &mut [PollFd<'_>] = match &beside {
            Some(b) => {
                both = [PollFd::new(&fd, flags), PollFd::new(b, PollFlags::IN)];
                &mut both
            }
            None => &mut one,
        };
        match rustix::event::poll(p, left.as_ref()) {
            Ok(0) => continue,
            Ok(_) => {
                let r = p[0].revents();
                let hup = r.intersects(PollFlags::HUP | PollFlags::ERR);
                let other = p.get(1).is_some_and(|b| ready(b.revents()));
                return Ok((
                    r.contains(PollFlags::IN) || hup,
                    r.contains(PollFlags::OUT) || hup,
                    other,
                ));
            }
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// Descriptors one packet carries at most.
pub(crate) const MAX_FDS: usize = 2;

/// Sends one packet without blocking, with `fds` (at most [`MAX_FDS`])
/// attached. `Ok(false)` if the socket's buffer is full.
pub(crate) fn send_packet(
    sock: BorrowedFd<'_>,
    bytes: &[u8],
    fds: &[BorrowedFd<'_>],
) -> io::Result<bool> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(MAX_FDS))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !fds.is_empty() && !control.push(SendAncillaryMessage::ScmRights(fds)) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "too many descriptors for one packet",
        ));
    }
    loop {
        match rustix::net::sendmsg(
            sock,
            &[IoSlice::new(bytes)],
            &mut control,
            SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
        ) {
            Ok(_) => return Ok(true),
            Err(rustix::io::Errno::AGAIN) => return Ok(false),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

/// What [`recv_packet`] got.
pub(crate) enum Received {
    /// A packet of this many bytes (cut to the buffer: `truncated`), and
    /// the descriptors that came with it (all of them; the caller closes
    /// what it does not want by dropping them).
    Packet {
        len: usize,
        truncated: bool,
        fds: Vec<OwnedFd>,
    },
    /// Nothing waiting.
    Empty,
    /// The peer closed its end (or died).
    Closed,
}

/// Receives one packet without blocking.
pub(crate) fn recv_packet(sock: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Received> {
    let mut space = [MaybeUninit::<u8>::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut reset = false;
    let r = loop {
        match rustix::net::recvmsg(
            sock,
            &mut [IoSliceMut::new(buf)],
            &mut control,
            RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(r) => break r,
            Err(rustix::io::Errno::AGAIN) => return Ok(Received::Empty),
            Err(rustix::io::Errno::INTR) => continue,
            // A peer that closed with packets of ours still unread in its
            // queue leaves ECONNRESET pending here, and the kernel reports
            // it before the packets it sent us first (its last messages,
            // its BYE). Reading the error clears it: go on and take those
            // packets; the end of the queue then reads as the close.
            Err(rustix::io::Errno::CONNRESET) if !reset => reset = true,
            Err(rustix::io::Errno::CONNRESET) => return Ok(Received::Closed),
            Err(e) => return Err(e.into()),
        }
    };
    let mut fds = Vec::new();
    for msg in control.drain() {
        if let RecvAncillaryMessage::ScmRights(it) = msg {
            fds.extend(it);
        }
    }
    // A peer that closed and a peer that sent a record of no bytes both
    // read as 0 bytes: only a hang-up is the end (the other is a
    // malformed packet, shorter than any header).
    if r.bytes == 0 && fds.is_empty() && hung_up(sock) {
        return Ok(Received::Closed);
    }
    let truncated = r.flags.contains(rustix::net::ReturnFlags::TRUNC)
        || r.flags.contains(rustix::net::ReturnFlags::CTRUNC);
    Ok(Received::Packet {
        len: r.bytes.min(buf.len()),
        truncated,
        fds,
    })
}

/// Whether `sock` will read no more: the peer closed (or this end shut
/// its reading down).
fn hung_up(sock: BorrowedFd<'_>) -> bool {
    use rustix::event::{PollFd, PollFlags};
    let mut p = [PollFd::new(&sock, PollFlags::IN | PollFlags::RDHUP)];
    let zero = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match rustix::event::poll(&mut p, Some(&zero)) {
        Ok(_) => p[0]
            .revents()
            .intersects(PollFlags::RDHUP | PollFlags::HUP | PollFlags::ERR),
        // Cannot tell: take it as the end, as a read of 0 bytes always was.
        Err(_) => true,
    }
}

/// Whether a packet (or the end) waits on `sock`: `poll` without
/// waiting.
pub(crate) fn socket_unread(sock: BorrowedFd<'_>) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags};
    let mut p = [PollFd::new(&sock, PollFlags::IN)];
    let n = rustix::event::poll(&mut p, Some(&rustix::time::Timespec::default()))?;
    Ok(n > 0)
}

/// Shuts down reading on `sock`: the peer's sends fail with `EPIPE`
/// from now on, while packets already queued here can still be read and
/// this end can still send.
pub(crate) fn shutdown_read(sock: BorrowedFd<'_>) -> io::Result<()> {
    Ok(rustix::net::shutdown(sock, rustix::net::Shutdown::Read)?)
}

/// A wake-up call within this process (an eventfd): [`Wake::signal`]
/// makes a [`wait_beside`] on [`Wake::fd`] return.
pub(crate) struct Wake(OwnedFd);

impl Wake {
    pub(crate) fn new() -> io::Result<Wake> {
        use rustix::event::EventfdFlags;
        Ok(Wake(rustix::event::eventfd(
            0,
            EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK,
        )?))
    }

    /// What a waiter polls.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }

    /// Wakes the waiter (or the next one to wait, until cleared).
    pub(crate) fn signal(&self) {
        // Fails only when the counter is full, and then it is signalled.
        let _ = rustix::io::write(&self.0, &1u64.to_ne_bytes());
    }

    /// Clears the signal.
    pub(crate) fn clear(&self) {
        let mut b = [0u8; 8];
        let _ = rustix::io::read(&self.0, &mut b);
    }
}

/// The process id and user id of the peer of a connected Unix socket
/// (`SO_PEERCRED`: as they were when it connected).
pub(crate) fn peer(sock: BorrowedFd<'_>) -> io::Result<(i32, u32)> {
    let c = rustix::net::sockopt::socket_peercred(sock)?;
    Ok((c.pid.as_raw_nonzero().get(), c.uid.as_raw()))
}

/// This process's effective user id.
pub(crate) fn effective_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// What descriptor `fd` of process `pid` is open on, as
/// `/proc/PID/fd/FD` reads (`pipe:[INODE]` for a pipe); `None` if it
/// cannot be read (no such process or descriptor, another user's).
pub(crate) fn proc_fd_target(pid: i32, fd: i32) -> Option<Vec<u8>> {
    let path = format!("/proc/{pid}/fd/{fd}");
    rustix::fs::readlink(path.as_str(), Vec::with_capacity(64))
        .ok()
        .map(|c| c.into_bytes())
}

/// What is left of `deadline` as poll(2)'s timeout (`None`: forever);
/// `TimedOut`, saying `what`, once it passed.
fn time_left(deadline: Option<Instant>, what: &str) -> io::Result<Option<rustix::time::Timespec>> {
    let Some(d) = deadline else {
        return Ok(None);
    };
    let now = Instant::now();
    if now >= d {
        return Err(io::Error::new(io::ErrorKind::TimedOut, what.to_string()));
    }
    Ok(Some(rustix::time::Timespec::try_from(d - now).unwrap_or(
        rustix::time::Timespec {
            tv_sec: i64::MAX,
            tv_nsec: 0,
        },
    )))
}

/// An error that means the peer's end is closed or no longer reads
/// (`EPIPE`, `ECONNRESET`), as against one that may pass.
pub(crate) fn peer_gone(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
    )
}
