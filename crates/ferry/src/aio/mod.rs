//! Asynchronous files, after Titanium's `AsyncFile` (Bonachea, *Bulk
//! File I/O Extensions to Java*, Figures 2–4): start a read or write of a
//! whole buffer or typed array, go on computing, then ask whether it is
//! done, wait for it (with a timeout), for all or any of a set, cancel
//! it.
//!
//! * [`AsyncFile`] starts requests: [`read_at`](AsyncFile::read_at),
//!   [`write_at`](AsyncFile::write_at),
//!   [`read_array_at`](AsyncFile::read_array_at),
//!   [`write_array_at`](AsyncFile::write_array_at), and sequential forms
//!   that take the file position and advance it when the request starts
//!   (the paper's default service order).
//! * A [`Request`] **owns its buffer until the kernel is done with it**:
//!   the memory is moved in at the start and comes back from
//!   [`into_inner`](Request::into_inner) (or `.await`) only after the
//!   kernel's completion. Dropping a request, or the file, while it is in
//!   flight frees nothing the kernel may still write: the backend keeps
//!   the buffer (and the descriptor open) until the completion arrives.
//! * Checks happen when a request **starts**: a read past the end of a
//!   regular file fails at once (`UnexpectedEof`), as does an offset
//!   past the largest file offset; a file that shrinks under a started
//!   read makes that request fail.
//! * States ([`State`]): in flight → completed, or failed (the error is
//!   **sticky**: every [`done`](Request::done)/[`wait`](Request::wait),
//!   [`all_done`]/[`any_done`] that includes the request reports it until
//!   [`clear_exception`](Request::clear_exception)), or cancelled
//!   ([`cancel`](Request::cancel) while in flight: a [`Cancelled`] error,
//!   sticky the same way).
//!
//! What the paper leaves open, decided here:
//!
//! * `cancel` of a request that is over does nothing (its outcome
//!   stands). `cancel` of one in flight is reported at once; the kernel
//!   may still finish the operation (a `pread` of a cached file cannot be
//!   stopped): then [`bytes`](Request::bytes) says how many bytes moved,
//!   and for a write they are in the file. Either way the buffer comes
//!   back when the kernel's completion arrives, not before.
//! * However a request ends — completed, failed, cancelled or timed out
//!   — once its buffer is back [`bytes`](Request::bytes) says how many
//!   bytes moved before the end, and a read's buffer holds exactly them:
//!   60 of 100 bytes taken from a pipe before a cancel are not lost to
//!   the caller.
//! * [`AsyncFile::cancel`] cancels every request of the file in flight.
//! * [`AsyncFile::set_timeout`] gives the requests started after it a
//!   deadline: one not over by then fails `TimedOut` (sticky), which
//!   under io_uring is a linked timeout (`IORING_OP_LINK_TIMEOUT`) behind
//!   each of its entries, and on threads the worker's `poll`. Waiting for
//!   a pipe, socket or terminal is what it stops; writes into pipes never
//!   block a worker in the kernel (`RWF_NOWAIT`), so a cancel or deadline
//!   reaches them too.
//! * [`AsyncFile::close`] cancels the file's reads in flight and waits
//!   until the kernel is done with every request of the file (a write in
//!   flight lands), then closes the descriptor. Requests keep their
//!   outcomes. Dropping the file instead returns at once, cancelling
//!   nothing; the descriptor closes when its last request completes.
//!
//! Backends ([`Backend`]), side by side in `backend/`: io_uring (one ring
//! per process, a reaper thread taking completions; `uring.rs`, on the raw
//! ring in `sys::uring`) and a pool of worker threads (`threads.rs`), used
//! where io_uring is missing or refused, or when `FERRY_AIO=threads` is
//! set. Both behave the same, and the tests run on both.
//!
//! A request is also a [`Future`](std::future::Future) whose output is
//! its buffer (or the error): it works under any executor, and ferry
//! depends on none.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use ferry::aio::AsyncFile;
//! use ferry::bulk::Endian;
//! use std::time::Duration;
//! let path = tempfile::NamedTempFile::new()?.into_temp_path();
//! let f = AsyncFile::create(&path)?;
//! let w = f.write_array_at(0, (0..4096u64).collect::<Vec<_>>(), Endian::Big)?;
//! w.wait(None)?;                                   // done (or its error)
//! let r = f.read_array_at(8, vec![0u64; 4095], Endian::Big)?;
//! // ... compute while it reads ...
//! assert!(r.wait(Some(Duration::from_secs(10)))?);
//! let back = r.into_inner();
//! assert_eq!(back[0], 1);
//! assert_eq!(back[4094], 4095);
//! # Ok(()) }
//! ```

mod backend;
mod buffer;
mod chain;
mod file;
mod lock;
mod request;
mod slot;
mod timer;

pub use buffer::IoBuffer;
pub use file::AsyncFile;
pub use request::{all_done, any_done, Pending, Request};
pub use slot::State;

use std::fmt;
use std::sync::Arc;

/// Which machinery runs a file's requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// io_uring if the kernel allows it, else threads; `FERRY_AIO=threads`
    /// in the environment forces threads.
    Auto,
    /// io_uring (an error where the kernel refuses it).
    IoUring,
    /// The worker-thread pool.
    Threads,
}

/// The error a cancelled request reports (of kind `Interrupted`).
#[derive(Debug)]
pub struct Cancelled {
    what: Arc<str>,
}

impl fmt::Display for Cancelled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: cancelled", self.what)
    }
}

impl std::error::Error for Cancelled {}

/// True for the error of a cancelled request.
///
/// ```
/// let e = std::io::Error::other("no");
/// assert!(!ferry::aio::is_cancelled(&e));
/// ```
pub fn is_cancelled(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|r| r.is::<Cancelled>())
}

/// A failed request's error: what the request was, and the OS's error.
#[derive(Debug)]
pub(crate) struct RequestError {
    msg: Arc<str>,
    errno: Option<i32>,
}

impl RequestError {
    /// The error of a request `msg` describes, `errno` beneath it.
    pub(crate) fn new(msg: Arc<str>, errno: Option<i32>) -> RequestError {
        crate::error::register::<RequestError>();
        RequestError { msg, errno }
    }
}

impl crate::error::CarriesOsError for RequestError {
    fn os_error(&self) -> Option<i32> {
        self.errno
    }
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.msg)
    }
}

impl std::error::Error for RequestError {}
