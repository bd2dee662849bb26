//! The two backends a request runs on, side by side: io_uring
//! (`uring.rs`, on the raw ring in `sys::uring`) and a pool of worker
//! threads (`threads.rs`), which takes over where io_uring is missing or
//! refused, in a child after `fork`, when `FERRY_AIO=threads` is set, and
//! for writes into pipes. Both take an [`Op`] with the buffer it owns and
//! hand the buffer back, with how the operation [`Ended`], to its
//! [`Done`].

pub(crate) mod threads;
pub(crate) mod uring;

use super::buffer::Owned;
use super::slot::Slot;
use super::Backend;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// One operation, as a backend runs it.
pub(crate) struct Op {
    pub(crate) fd: Arc<OwnedFd>,
    /// `None`: a descriptor that cannot seek (a pipe, a socket).
    pub(crate) offset: Option<u64>,
    pub(crate) write: bool,
    pub(crate) seekable: bool,
    /// A socket (writes as `send(MSG_NOSIGNAL)`).
    pub(crate) socket: bool,
    /// Not over by then: ends timed out.
    pub(crate) deadline: Option<std::time::Instant>,
}

/// What a backend calls when it is done with an operation's buffer.
pub(crate) type Done = Box<dyn FnOnce(Box<dyn Owned>, Ended) + Send>;

/// How an operation ended: its outcome — every byte (`Ok(n)`), or the
/// error that ended it — and the bytes that had moved by then (all of them
/// on success; on an error, a cancel or a deadline, the ones before it,
/// from the start of the buffer).
pub(crate) struct Ended {
    pub(crate) moved: usize,
    pub(crate) result: io::Result<usize>,
}

impl Ended {
    /// An end before any byte moved.
    pub(crate) fn before_any(e: io::Error) -> Ended {
        Ended {
            moved: 0,
            result: Err(e),
        }
    }
}

/// The error of an operation whose deadline passed first.
pub(crate) fn timed_out(done: usize, total: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!("timed out after {done} of {total} bytes"),
    )
}

/// The engine a file's requests go to.
#[derive(Clone, Copy)]
pub(crate) enum Engine {
    Ring(uring::Uring),
    Threads,
}

impl Engine {
    /// The engine for `backend`.
    pub(crate) fn for_backend(backend: Backend) -> io::Result<Engine> {
        let forced = std::env::var_os("FERRY_AIO").is_some_and(|v| v == "threads");
        match backend {
            Backend::Threads => threads::pool().map(|_| Engine::Threads),
            Backend::IoUring => Ok(Engine::Ring(uring::Uring::get()?)),
            Backend::Auto if forced => threads::pool().map(|_| Engine::Threads),
            Backend::Auto => match uring::Uring::get() {
                Ok(r) => Ok(Engine::Ring(r)),
                Err(_) => threads::pool().map(|_| Engine::Threads),
            },
        }
    }

    /// The backend it is.
    pub(crate) fn backend(self) -> Backend {
        match self {
            Engine::Ring(_) => Backend::IoUring,
            Engine::Threads => Backend::Threads,
        }
    }

    /// Hands an operation to the engine. A request cancelled before its
    /// turn ends here without I/O; the ring is not used in a child after
    /// `fork` (it is the parent's) nor for writes into pipes, which run on
    /// threads that hold SIGPIPE back (the kernel would send it to
    /// whichever thread ran the write).
    pub(crate) fn launch(self, slot: Arc<Slot>, op: Op, buf: Box<dyn Owned>, done: Done) {
        if slot.st.lock().cancel_asked {
            drop(op);
            done(
                buf,
                Ended::before_any(io::Error::from_raw_os_error(libc::ECANCELED)),
            );
            return;
        }
        let pipe_write = op.write && !op.seekable && !op.socket;
        match self {
            Engine::Ring(r) if r.usable() && !pipe_write => {
                let id = r.start(slot.clone(), op, buf, done);
                slot.set_canceller(Arc::new(r), id);
                // A cancel before the canceller was set found none: pass
                // it on now.
                if slot.st.lock().cancel_asked {
                    r.cancel(id);
                }
            }
            _ => match threads::pool() {
                Ok(t) => t.start(slot, op, buf, done),
                Err(e) => {
                    drop(op);
                    done(buf, Ended::before_any(e));
                }
            },
        }
    }
}
