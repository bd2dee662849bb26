//! The io_uring backend: one ring per process (`sys::uring`, which holds
//! each operation's memory while the kernel may use it), a reaper thread
//! that takes completions, and what each completion means for its
//! operation:
//!
//! * a short read or write is continued with the rest of the same buffer;
//! * `EAGAIN` from a non-blocking descriptor waits in a poll (it is
//!   readable or writable again, or an error the operation will meet),
//!   then the operation is issued again;
//! * a cancel (`IORING_OP_ASYNC_CANCEL` of the operation's id) ends it
//!   with `ECANCELED`, or it completes anyway if it was past stopping;
//!   an operation between two of its entries is not continued;
//! * an operation with a deadline has a linked timeout behind each of its
//!   entries — the first, a short transfer's rest, the poll after
//!   `EAGAIN`: when it fires first the kernel cancels the entry, and the
//!   operation ends timed out with the bytes that moved before; one whose
//!   deadline has passed before an entry is submitted ends at once.

use super::{timed_out, Done, Ended, Op};
use crate::aio::buffer::Owned;
use crate::aio::slot::{Canceller, Slot};
use crate::sys::uring::{self as raw, Entry, Ring, Target};
use std::io;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// What the backend keeps with an operation in the ring.
struct Held {
    buf: Box<dyn Owned>,
    done: Done,
    /// The request: its cancel flag is set before the canceller runs, so
    /// an operation between two entries (out of the ring's table, where
    /// a cancel cannot mark it) still sees it before going on.
    slot: Arc<Slot>,
    /// A cancel was asked for: the operation is not continued or retried.
    cancelled: bool,
    /// Waiting in a poll for a non-blocking descriptor to be ready (it
    /// said `EAGAIN`); the read or write is issued again after.
    polling: bool,
}

impl Target for Held {
    fn span(&mut self, write: bool) -> (*mut u8, usize) {
        self.buf.span(write)
    }
}

/// The process's ring.
#[derive(Clone, Copy)]
pub(crate) struct Uring(&'static Ring<Held>);

impl Uring {
    /// The ring, set up at first use; an error where the kernel has no
    /// io_uring or refuses it (seccomp, `kernel.io_uring_disabled`), and
    /// in a child after `fork` (the reaper thread is the parent's).
    pub(crate) fn get() -> io::Result<Uring> {
        static RING: OnceLock<io::Result<Ring<Held>>> = OnceLock::new();
        match RING.get_or_init(|| Ring::new(256)) {
            Ok(ring) => {
                ring.same_process()?;
                static REAPER: OnceLock<()> = OnceLock::new();
                REAPER.get_or_init(|| {
                    let _ = std::thread::Builder::new()
                        .name("ferry-uring".into())
                        .spawn(move || ring.reap(|id, res, op| completed(ring, id, res, op)));
                });
                Ok(Uring(ring))
            }
            Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
        }
    }

    /// False in a child after `fork`: the ring, its operations and its
    /// reaper are the parent's.
    pub(crate) fn usable(self) -> bool {
        self.0.same_process().is_ok()
    }

    /// Starts a read (`op.write` false: into `buf`'s room, all of it) or
    /// a write (from it); `done` gets the buffer back with the outcome
    /// (all bytes, or the error) on the reaper thread, after the operation
    /// has let go of the descriptor. Returns the operation's id, for
    /// [`cancel`](Self::cancel). Only where [`usable`](Self::usable).
    /// With a deadline, the operation ends timed out (`TimedOut`) if it
    /// is not over by then.
    pub(crate) fn start(self, slot: Arc<Slot>, op: Op, buf: Box<dyn Owned>, done: Done) -> u64 {
        let id = self.0.next_id();
        let held = Held {
            buf,
            done,
            slot,
            cancelled: false,
            polling: false,
        };
        let mut op = raw::Op::new(op.fd, op.offset, op.write, op.socket, op.deadline, held);
        if op.total() == 0 {
            finish(op, Ok(0));
            return id;
        }
        submit(self.0, id, op, Entry::Rest);
        id
    }

    /// Asks the kernel to stop operation `id` (nothing if it is over):
    /// an operation between two of its pieces (a short transfer's rest, a
    /// retry after a poll) is not continued either.
    pub(crate) fn cancel(self, id: u64) {
        self.0.cancel(id, |held| held.cancelled = true);
    }
}

impl Canceller for Uring {
    fn cancel(&self, id: u64) {
        Uring::cancel(*self, id)
    }
}

/// Submits the next entry of `op`, or ends it timed out if its deadline
/// has passed, or cancelled if a cancel was asked for.
///
/// A cancel can come while the operation is between two entries (the
/// reaper has it, not the ring's table): the cancel's own `AsyncCancel`
/// then finds nothing in the kernel. So the request's flag, set before
/// any cancel is sent, is looked at before the entry goes in, and again
/// after: a cancel whose `AsyncCancel` went in before this entry is sent
/// again.
fn submit(ring: &Ring<Held>, id: u64, mut op: raw::Op<Held>, entry: Entry) {
    if op.deadline().is_some_and(|at| Instant::now() >= at) {
        let (done, total) = (op.done(), op.total());
        finish(op, Err(timed_out(done, total)));
        return;
    }
    let slot = op.target.slot.clone();
    if op.target.cancelled || slot.cancel_asked() {
        finish(op, cancelled());
        return;
    }
    ring.submit(id, op, entry);
    if slot.cancel_asked() {
        ring.cancel(id, |held| held.cancelled = true);
    }
}

/// An entry of operation `id` completed with `res` (bytes, or `-errno`):
/// the operation goes on, or ends.
fn completed(ring: &Ring<Held>, id: u64, res: i32, mut op: raw::Op<Held>) {
    let total = op.total();
    if op.target.polling {
        // The poll is over (ready, or an error the operation itself
        // will meet): issue the operation again; a cancel stops it,
        // and a linked timeout that fired (ECANCELED, not asked for)
        // ends it timed out.
        op.target.polling = false;
        if op.target.cancelled {
            finish(op, cancelled());
            return;
        }
        if res == -libc::ECANCELED {
            let e = if op.deadline().is_some() {
                timed_out(op.done(), total)
            } else {
                io::Error::from_raw_os_error(libc::ECANCELED)
            };
            finish(op, Err(e));
            return;
        }
        submit(ring, id, op, Entry::Rest);
        return;
    }
    let outcome = if res < 0 {
        match -res {
            libc::EINTR if op.target.cancelled => Some(cancelled()),
            libc::EINTR => None,
            libc::EAGAIN if op.target.cancelled => Some(cancelled()),
            // Cancelled by its linked timeout, not by a caller.
            libc::ECANCELED if !op.target.cancelled && op.deadline().is_some() => {
                Some(Err(timed_out(op.done(), total)))
            }
            libc::EAGAIN => {
                // A non-blocking descriptor with nothing now: wait in
                // a poll rather than spin.
                op.target.polling = true;
                submit(ring, id, op, Entry::Poll);
                return;
            }
            e => Some(Err(io::Error::from_raw_os_error(e))),
        }
    } else if res == 0 && op.done() < total {
        Some(Err(if op.write() {
            io::ErrorKind::WriteZero.into()
        } else {
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("the input ended after {} of {total} bytes", op.done()),
            )
        }))
    } else {
        op.moved(res as usize);
        (op.done() >= total).then_some(Ok(op.done()))
    };
    match outcome {
        Some(r) => finish(op, r),
        None if op.target.cancelled => finish(op, cancelled()),
        // The rest of the same buffer, back in the table.
        None => submit(ring, id, op, Entry::Rest),
    }
}

/// The outcome of a cancelled operation.
fn cancelled() -> io::Result<usize> {
    Err(io::Error::from_raw_os_error(libc::ECANCELED))
}

/// Hands an operation's buffer back with how it ended (the bytes moved so
/// far go with an error), after letting go of its descriptor (so that a
/// caller who sees the completion can close the file). A panic in the
/// caller's code is kept from the reaper thread.
fn finish(op: raw::Op<Held>, r: io::Result<usize>) {
    let (fd, held, done) = op.into_parts();
    drop(fd);
    let moved = *r.as_ref().unwrap_or(&done);
    let ended = Ended { moved, result: r };
    let Held { buf, done, .. } = held;
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| done(buf, ended)));
}
