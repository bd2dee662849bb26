//! A pipe between two ferry programs, upgraded to an ipc channel (the
//! IO-Lite paper's pipes between IO-Lite programs): the writer's standard
//! output and the reader's standard input stay a pipe for everyone else,
//! and the bytes go through a pool the two share.
//!
//! ```text
//!  writer (stdout a pipe)                      reader (stdin the same pipe)
//!  at start: bind "ferry-stdio-pipe-INODE"
//!                                   ◄── connect   first read: poll the pipe,
//!                                                   connecting meanwhile
//!  first output: a connection waiting?            (a reader blocked in its
//!    check the peer: same user, its fd 0 is       first read waits for free)
//!    this pipe; Sender: HELLO (pool) ──────────►  check the peer: same user,
//!                                   ◄── WAKE       its fd 1 is this pipe;
//!    the channel, to its close (BYE)               Receiver, then the channel
//!  none waiting: the pipe                          until it ends, then the pipe
//! ```
//!
//! The writer decides at its first output (its first buffer flushed): a
//! connection is waiting or it is not; only an output that comes within
//! 50 ms of the program's start waits that long for a reader started with
//! it. The reader, which would wait for its first bytes anyway, looks for
//! the writer meanwhile (a `connect` every millisecond, then at growing
//! intervals). Nothing is lost or reordered: the writer writes nothing to
//! the pipe before it decides, a writer that got no greeting closes the
//! channel (a reader that took it then finds it ended, and reads the
//! pipe), and a reader reads the pipe once the channel ends — to its end,
//! whatever other writers put there.
//!
//! While the channel lasts, the pipe stays a pipe for everyone else: a
//! child the writer runs, or the writer's own `write(2)` on the
//! descriptor, puts bytes there. The reader watches the pipe beside the
//! channel and reads it whenever every message published before its
//! bytes came was taken (`Receiver::recv_beside` looks at the ring again
//! after it saw the pipe readable); the writer looks at the pipe
//! (`FIONREAD`) before each write to the channel, and if bytes wait there
//! it closes the channel and writes the pipe from then on, behind them.
//! So bytes keep the order of the writes that made them, as through the
//! pipe alone, and a child writing more than the pipe holds is never
//! left waiting for a reader that watches only the channel. (The reader
//! counts the pipe's bytes before it looks at the channel, and reads no
//! more than it counted: `stream::backend::upgraded` has the argument.)
//! A writer whose reader takes nothing from the channel for a second —
//! it may be reading its descriptor 0 beside its stream, which the
//! channel leaves empty — drops the channel (the reader takes every whole
//! message, then its end) and goes on through the pipe. A child forked
//! from either side leaves the channel to its parent and uses the pipe.
//!
//! The abstract socket name is public to the machine (its network
//! namespace), so each side checks its peer (`SO_PEERCRED` and
//! `/proc/PID/fd`): a process of the same user that has this very pipe
//! open as its standard input (for the writer) or output (for the
//! reader) — one that could read those bytes, or write them, through the
//! pipe anyway. Anyone else who took the name or connected to it is left
//! alone, and the pipe is used.

use super::{sys, Receiver, Sender, SenderConfig, Socket};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::time::{Duration, Instant};

/// How long a writer waits for a reader's greeting after its HELLO.
const GREETING_WAIT: Duration = Duration::from_secs(2);

/// How long a reader waits for the writer's pool once connected.
const HELLO_WAIT: Duration = Duration::from_secs(5);

/// A reader tries to connect every millisecond for this long, then at
/// intervals doubling up to [`RETRY_MAX`].
const RETRY_EAGER: Duration = Duration::from_millis(200);
const RETRY_FIRST: Duration = Duration::from_millis(1);
const RETRY_MAX: Duration = Duration::from_millis(100);

/// A writer whose first output comes this soon after its offer was bound
/// waits until then for a reader to connect: a reader started with it
/// (the two sides of a shell pipeline) has had the time to start and
/// connect. Later output waits for nothing.
const GRACE: Duration = Duration::from_millis(50);

/// Connections a writer looks at, at most, for its reader's.
const MAX_CALLERS: usize = 16;

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

/// The writer's offer of a channel for its standard output pipe: a name
/// the pipe's reader connects to, bound when the program starts (before
/// its first output).
///
/// ```
/// // Standard output is no pipe here, or no reader asks: no offer, or
/// // an offer nobody takes. Either way the stream writes the pipe.
/// use std::os::fd::AsFd;
/// let offer = ferry::ipc::PipeOffer::bind(std::io::stdout().as_fd());
/// # drop(offer);
/// ```
#[derive(Debug)]
pub struct PipeOffer {
    listener: OwnedFd,
    ino: u64,
    bound: Instant,
}

impl PipeOffer {
    /// Offers a channel for `pipe` (this process's standard output, a
    /// pipe); `None` if it is no pipe, or another writer of it offers one
    /// already.
    pub fn bind(pipe: BorrowedFd<'_>) -> Option<PipeOffer> {
        let ino = sys::pipe_inode(pipe)?;
        let listener = sys::listen_abstract(&name(ino)).ok()?;
        Some(PipeOffer {
            listener,
            ino,
            bound: Instant::now(),
        })
    }

    /// At the first output: the sender of a channel to the pipe's reader
    /// if one connected and greets the pool, else `None` (write the pipe).
    /// Waits for a reader to connect only within [`GRACE`] of the offer.
    pub(crate) fn take(self, config: SenderConfig) -> Option<Sender> {
        let until = self.bound + GRACE;
        // Connections from anyone else are dropped unanswered; a flood of
        // them holds the first output no longer than the grace (or a few
        // looks past it).
        for _ in 0..MAX_CALLERS {
            let wait = until
                .saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1));
            let Ok(sock) = sys::accept(self.listener.as_fd(), Some(wait)) else {
                return None;
            };
            if !peer_holds(sock.as_fd(), self.ino, 0) {
                continue;
            }
            let Ok(mut tx) = Sender::new(Socket(sock), config.clone()) else {
                continue;
            };
            if tx.wait_greeting(Instant::now() + GREETING_WAIT) {
                return Some(tx);
            }
            // No greeting: the reader took the pipe. The channel closes
            // with `tx`, nothing sent on it.
            tx.abort();
            return None;
        }
        None
    }
}

/// The reader's side, at its first read: waits until the pipe is
/// readable (bytes from a writer that did not upgrade, or its end: `None`,
/// read the pipe) or a ferry writer of it hands over its pool (its
/// receiver), connecting to the writer's offer meanwhile.
///
/// # Safety
///
/// As [`Receiver::new`]: the caller vouches that a process of its own
/// user that writes its standard input pipe is a ferry program, which
/// keeps the protocol. (Such a process may read and write this one's
/// memory through `ptrace` or `/proc` anyway.)
pub(crate) unsafe fn take_pipe(pipe: BorrowedFd<'_>) -> io::Result<Option<Receiver>> {
    let Some(ino) = sys::pipe_inode(pipe) else {
        return Ok(None);
    };
    let mut retry = Duration::ZERO;
    let began = Instant::now();
    let mut sock: Option<OwnedFd> = None;
    let mut trying = true;
    loop {
        if sock.is_none() && trying {
            match sys::connect_abstract(&name(ino)) {
                Ok(s) if peer_holds(s.as_fd(), ino, 1) => sock = Some(s),
                // Someone else has the name: the writer offers nothing.
                Ok(_) => trying = false,
                Err(_) => {}
            }
        }
        let wait = match (&sock, trying) {
            (None, true) => {
                retry = if began.elapsed() < RETRY_EAGER {
                    RETRY_FIRST
                } else {
                    (retry * 2).clamp(RETRY_FIRST, RETRY_MAX)
                };
                Some(Instant::now() + retry)
            }
            _ => None,
        };
        let (piped, offered) = match &sock {
            Some(s) => {
                let (p, _, o) = sys::wait_beside(pipe, true, false, Some(s.as_fd()), None)?;
                (p, o)
            }
            None => match sys::wait_beside(pipe, true, false, None, wait) {
                Ok((p, _, _)) => (p, false),
                Err(e) if e.kind() == io::ErrorKind::TimedOut => (false, false),
                Err(e) => return Err(e),
            },
        };
        if piped {
            return Ok(None);
        }
        if offered {
            let s = sock.take().expect("offered on a socket");
            trying = false;
            // SAFETY: the caller's promise, for the peer just checked.
            if let Ok(rx) = unsafe { Receiver::new(Socket(s), Some(HELLO_WAIT)) } {
                if rx.greet().is_ok() {
                    return Ok(Some(rx));
                }
            }
            // The writer went away, or wrote the pipe after all: read it.
        }
    }
}
