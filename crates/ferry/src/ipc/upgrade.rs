//! A pipe between two ferry programs, upgraded to an ipc channel (the
//! IO-Lite paper's pipes between IO-Lite programs): the writer's standard
//! output and the reader's standard input stay a pipe for everyone else,
//! and the bytes go through a pool the two share.
//!
//! ```text
//!  reader (stdin a pipe)                       writer (stdout the same pipe)
//!  bind "ferry-stdio-pipe-INODE"  ◄── connect ── (retried for `wait`)
//!  first read: poll(listener, pipe)              check the peer: same user,
//!    the pipe first → read the pipe                its fd 0 is this pipe
//!    a connection → check the peer: same user,   ◄── ACK ──  (within `wait`)
//!      its fd 1 is this pipe; ACK ──────────►     Sender::new: HELLO (pool)
//!    Receiver: messages until the writer ends;   messages; BYE at close
//!    then the pipe, to its end (other writers)
//! ```
//!
//! Both ends decide once, before any byte moves, so no byte is lost or
//! reordered: a writer that got no ACK in time writes to the pipe, and a
//! reader that saw the pipe readable first (another writer's bytes, or
//! its end) reads the pipe. A reader whose handshake fails after its ACK
//! (the writer went away) goes back to waiting on the pipe.
//!
//! The abstract socket name is public to the machine (its network
//! namespace), so each side checks its peer (`SO_PEERCRED` and
//! `/proc/PID/fd`): a process of the same user that has this very pipe
//! open as its standard input (for the writer) or output (for the
//! reader) — that is, one that could read those bytes, or write them,
//! through the pipe anyway. Anyone else who took the name or connected
//! to it is left alone, and the pipe is used.

use super::{sys, Receiver, Sender, SenderConfig, Socket};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

/// What the reader sends when it takes the channel.
const ACK: &[u8] = b"FYSTDIO1";

/// How long a reader waits for the writer's pool after its ACK.
const HELLO_WAIT: Duration = Duration::from_secs(5);

fn name(ino: u64) -> String {
    format!("ferry-stdio-pipe-{ino}")
}

/// Is the peer on `sock` a process of this user with pipe `ino` open as
/// its descriptor `fd`?
fn peer_holds(sock: BorrowedFd<'_>, ino: u64, fd: i32) -> bool {
    let Ok((pid, uid)) = sys::peer(sock) else {
        return false;
    };
    uid == sys::effective_uid()
        && sys::proc_fd_target(pid, fd).is_some_and(|t| t == format!("pipe:[{ino}]").as_bytes())
}

/// The writer's side: if `pipe` (this process's standard output) is a
/// pipe whose reader is a ferry program listening for it (within
/// `wait`), the sender of a channel to it; else `None`, and the pipe is
/// to be written as it is.
pub(crate) fn offer(
    pipe: BorrowedFd<'_>,
    wait: Duration,
    config: SenderConfig,
) -> io::Result<Option<Sender>> {
    let Some(ino) = sys::pipe_inode(pipe) else {
        return Ok(None);
    };
    let deadline = Instant::now() + wait;
    let sock = loop {
        match sys::connect_abstract(&name(ino)) {
            Ok(s) => break s,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(1)),
            Err(_) => return Ok(None),
        }
    };
    if !peer_holds(sock.as_fd(), ino, 0) {
        return Ok(None);
    }
    let mut ack = [0u8; 16];
    loop {
        match sys::recv_packet(sock.as_fd(), &mut ack) {
            Ok(sys::Received::Packet {
                len,
                truncated: false,
                fds,
            }) if fds.is_empty() && &ack[..len] == ACK => break,
            Ok(sys::Received::Empty) => {
                if sys::wait(sock.as_fd(), true, false, Some(deadline)).is_err() {
                    return Ok(None);
                }
            }
            _ => return Ok(None),
        }
    }
    // The reader took the channel; if the pool cannot be made, closing
    // the socket sends it back to the pipe.
    Ok(Sender::new(Socket(sock), config).ok())
}

/// The reader's side, bound before its first read: listening for the
/// writer of its standard input pipe.
pub(crate) struct PipeListener {
    listener: OwnedFd,
    ino: u64,
}

impl PipeListener {
    /// Listens for the writer of `pipe` (this process's standard input);
    /// `None` if it is no pipe or another process listens for it already.
    pub(crate) fn bind(pipe: BorrowedFd<'_>) -> Option<PipeListener> {
        let ino = sys::pipe_inode(pipe)?;
        let listener = sys::listen_abstract(&name(ino)).ok()?;
        Some(PipeListener { listener, ino })
    }

    /// Waits until the pipe is readable (bytes from a writer that did not
    /// upgrade, or its end: `None`, read the pipe) or a ferry writer of it
    /// takes the channel (its receiver).
    ///
    /// # Safety
    ///
    /// As [`Receiver::new`]: the caller vouches that a process of its own
    /// user that writes its standard input pipe is a ferry program, which
    /// keeps the protocol. (Such a process may read and write this one's
    /// memory through `ptrace` or `/proc` anyway.)
    pub(crate) unsafe fn accept(self, pipe: BorrowedFd<'_>) -> io::Result<Option<Receiver>> {
        loop {
            let (writer, piped) = sys::wait_either(self.listener.as_fd(), pipe, None)?;
            if piped {
                return Ok(None);
            }
            if !writer {
                continue;
            }
            let Ok(sock) = sys::accept(self.listener.as_fd(), Some(Duration::from_millis(10)))
            else {
                continue;
            };
            if !peer_holds(sock.as_fd(), self.ino, 1) {
                continue;
            }
            if !matches!(sys::send_packet(sock.as_fd(), ACK, &[]), Ok(true)) {
                continue;
            }
            // SAFETY: the caller's promise, for the peer just checked.
            match unsafe { Receiver::new(Socket(sock), Some(HELLO_WAIT)) } {
                Ok(rx) => return Ok(Some(rx)),
                // The writer went away after all: back to the pipe.
                Err(_) => continue,
            }
        }
    }
}
