//! The io_uring backend of `aio`: one ring per process, a reaper thread
//! that takes completions, and an operation table that owns each
//! operation's memory from submission to completion.
//!
//! What keeps the kernel's use of memory sound:
//!
//! * an operation's buffer and descriptor are moved into the table when it
//!   is submitted and moved out only when the ring says the operation is
//!   over (its completion arrived); the caller's handle holds neither, so
//!   dropping it (or the file) frees nothing the kernel may still use, and
//!   the descriptor's number cannot be reused under an operation;
//! * a short read or write is continued from the reaper with the rest of
//!   the same buffer, still in the table;
//! * the ring and its table live as long as the process: no teardown can
//!   race a completion.
//!
//! A cancel is an `IORING_OP_ASYNC_CANCEL` of the operation's id: the
//! operation then ends with `ECANCELED`, or completes anyway if it was
//! past stopping; either way its memory comes back with its completion.
//!
//! An operation with a deadline is submitted with a linked timeout
//! (`IORING_OP_LINK_TIMEOUT`, absolute, on the monotonic clock) behind
//! each of its entries — the first, a short transfer's rest, the poll
//! after `EAGAIN`: when it fires first the kernel cancels the entry, and
//! the operation ends timed out with the bytes that moved before.

use io_uring::{opcode, types, IoUring};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::{Arc, OnceLock};

/// Memory an operation reads into or writes from. The span must stay at
/// one address and be used by no one else while the operation holds it
/// (heap memory owned by the implementor: a `Vec`, a `BufMut`, a `Buf`).
pub(crate) trait Target: Send + 'static {
    /// The bytes: where a read puts them (`write` false, exclusive to the
    /// operation), or what a write sends.
    fn span(&mut self, write: bool) -> (*mut u8, usize);
}

/// An operation in the table.
struct Op {
    fd: Arc<OwnedFd>,
    /// File offset of the first byte (`None`: a descriptor that cannot
    /// seek, read or written at its own position).
    offset: Option<u64>,
    write: bool,
    /// A socket: writes go as `send(MSG_NOSIGNAL)` (no SIGPIPE).
    socket: bool,
    /// A cancel was asked for: the operation is not continued or retried.
    cancelled: bool,
    done: usize,
    /// Waiting in a poll for a non-blocking descriptor to be ready (it
    /// said `EAGAIN`); the read or write is issued again after.
    polling: bool,
    /// The deadline: when, and the same instant for the kernel (boxed:
    /// its address is in the linked timeout's entry, read when the entry
    /// is submitted, and the box lives in the table until the operation's
    /// completion, after every entry of it was submitted).
    deadline: Option<(std::time::Instant, Box<types::Timespec>)>,
    target: Box<dyn Finish>,
}

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

/// A target with what to do when it comes back.
trait Finish: Send {
    fn span(&mut self, write: bool) -> (*mut u8, usize);
    fn finish(self: Box<Self>, e: Ended);
}

struct Pending<B, F> {
    buf: B,
    done: F,
}

impl<B: Target, F: FnOnce(B, Ended) + Send> Finish for Pending<B, F> {
    fn span(&mut self, write: bool) -> (*mut u8, usize) {
        self.buf.span(write)
    }

    fn finish(self: Box<Self>, e: Ended) {
        let p = *self;
        (p.done)(p.buf, e)
    }
}

/// User data of cancel requests and of the reaper's wake-up: no operation.
const NOT_AN_OP: u64 = u64::MAX;

/// The process's ring.
pub(crate) struct Ring {
    ring: IoUring,
    /// Serialises everything that touches the submission queue.
    sq: Mutex<()>,
    table: Mutex<HashMap<u64, Op>>,
    next: Mutex<u64>,
    pid: u32,
}

/// The ring, set up at first use; an error where the kernel has no
/// io_uring or refuses it (seccomp, `kernel.io_uring_disabled`), and in a
/// child after `fork` (the reaper thread is the parent's).
pub(crate) fn ring() -> io::Result<&'static Ring> {
    static RING: OnceLock<io::Result<Ring>> = OnceLock::new();
    let r = RING.get_or_init(|| {
        let ring = IoUring::new(256)?;
        Ok(Ring {
            ring,
            sq: Mutex::new(()),
            table: Mutex::new(HashMap::new()),
            next: Mutex::new(0),
            pid: std::process::id(),
        })
    });
    match r {
        Ok(ring) if ring.pid != std::process::id() => Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "ferry's io_uring is its parent's: not usable in a child after fork()",
        )),
        Ok(ring) => {
            static REAPER: OnceLock<()> = OnceLock::new();
            REAPER.get_or_init(|| {
                let _ = std::thread::Builder::new()
                    .name("ferry-uring".into())
                    .spawn(move || ring.reap());
            });
            Ok(ring)
        }
        Err(e) => Err(io::Error::new(e.kind(), e.to_string())),
    }
}

impl Ring {
    /// Starts a read (`write` false: into `buf`'s span, all of it) or a
    /// write (from it) on `fd` at `offset`; `done` gets the buffer back
    /// with the outcome (all bytes, or the error) on the reaper thread,
    /// after the operation has let go of the descriptor. Returns the
    /// operation's id, for [`cancel`](Self::cancel). Only where
    /// [`usable`](Self::usable).
    /// With a `deadline`, the operation ends timed out (`TimedOut`) if it
    /// is not over by then.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn start<B: Target, F: FnOnce(B, Ended) + Send + 'static>(
        &self,
        fd: Arc<OwnedFd>,
        offset: Option<u64>,
        write: bool,
        socket: bool,
        deadline: Option<std::time::Instant>,
        buf: B,
        done: F,
    ) -> u64 {
        let id = {
            let mut n = self.next.lock();
            *n += 1;
            *n
        };
        let mut op = Op {
            fd,
            offset,
            write,
            socket,
            cancelled: false,
            done: 0,
            polling: false,
            deadline: deadline.map(|d| (d, Box::new(monotonic(d)))),
            target: Box::new(Pending { buf, done }),
        };
        if op.target.span(write).1 == 0 {
            finish(op, Ok(0));
            return id;
        }
        let sqe = sqe_of(id, &mut op);
        self.submit_op(id, op, sqe);
        id
    }

    /// Puts `op` in the table and submits its entry `sqe`, with a linked
    /// timeout if it has a deadline (ended at once if that has passed).
    fn submit_op(&self, id: u64, mut op: Op, sqe: io_uring::squeue::Entry) {
        let timeout = match &op.deadline {
            None => None,
            Some((at, _)) if std::time::Instant::now() >= *at => {
                let total = op.target.span(op.write).1;
                let done = op.done;
                finish(op, Err(timed_out(done, total)));
                return;
            }
            Some((_, ts)) => Some(
                opcode::LinkTimeout::new(&**ts as *const types::Timespec)
                    .flags(types::TimeoutFlags::ABS)
                    .build()
                    .user_data(NOT_AN_OP),
            ),
        };
        self.table.lock().insert(id, op);
        match timeout {
            None => self.push(&[sqe]),
            Some(t) => self.push(&[sqe.flags(io_uring::squeue::Flags::IO_LINK), t]),
        }
    }

    /// False in a child after `fork`: the ring, its operations and its
    /// reaper are the parent's, and a child's submissions would be matched
    /// to the parent's operations.
    pub(crate) fn usable(&self) -> bool {
        self.same_process().is_ok()
    }

    /// Asks the kernel to stop operation `id` (nothing if it is over):
    /// an operation between two of its pieces (a short transfer's rest, a
    /// retry after a poll) is not continued either.
    pub(crate) fn cancel(&self, id: u64) {
        if self.same_process().is_err() {
            return;
        }
        if let Some(op) = self.table.lock().get_mut(&id) {
            op.cancelled = true;
        }
        let sqe = opcode::AsyncCancel::new(id).build().user_data(NOT_AN_OP);
        self.push(&[sqe]);
    }

    /// The ring is this process's (not a parent's, inherited by `fork`).
    fn same_process(&self) -> io::Result<()> {
        if self.pid == std::process::id() {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "ferry's io_uring is its parent's: not usable in a child after fork()",
        ))
    }

    /// Queues entries (a linked pair goes in together, in one submission)
    /// and submits them, making room by submitting what is queued when
    /// the queue is short of it. A write the kernel runs at once in this
    /// thread past `RLIMIT_FSIZE` says EFBIG, not SIGXFSZ.
    fn push(&self, sqes: &[io_uring::squeue::Entry]) {
        let _g = self.sq.lock();
        let _xfsz = super::transfer::fsize_limited().then(super::sigguard::SignalGuard::sigxfsz);
        loop {
            // SAFETY: the submission queue is only touched under `sq`,
            // which this thread holds; the entries' memory (an operation's
            // span and deadline) is owned by the table until its
            // completion.
            let pushed = unsafe {
                let mut q = self.ring.submission_shared();
                let r = q.capacity() - q.len() >= sqes.len() && q.push_multiple(sqes).is_ok();
                q.sync();
                r
            };
            // Submit what is queued; the kernel may be short of room for
            // completions for a moment (EBUSY) while the reaper drains.
            loop {
                match self.ring.submit() {
                    Ok(_) => break,
                    Err(e)
                        if matches!(
                            e.raw_os_error(),
                            Some(libc::EINTR | libc::EAGAIN | libc::EBUSY)
                        ) =>
                    {
                        std::thread::yield_now()
                    }
                    Err(_) => break,
                }
            }
            if pushed {
                return;
            }
        }
    }

    /// The reaper: waits for completions and hands each operation's
    /// memory back (or continues a short one).
    fn reap(&self) {
        // Writes this thread continues run here: never a signal death.
        super::sigguard::block_for_thread(&[libc::SIGPIPE, libc::SIGXFSZ]);
        loop {
            // SAFETY: io_uring_enter with nothing to submit, waiting for
            // one completion; no argument pointer.
            let r = unsafe {
                self.ring
                    .submitter()
                    .enter::<libc::sigset_t>(0, 1, 1 /* IORING_ENTER_GETEVENTS */, None)
            };
            if let Err(e) = r {
                if e.raw_os_error() != Some(libc::EINTR) {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            let done: Vec<(u64, i32)> = {
                // SAFETY: only this thread reads the completion queue.
                let mut cq = unsafe { self.ring.completion_shared() };
                cq.sync();
                cq.map(|c| (c.user_data(), c.result())).collect()
            };
            for (id, res) in done {
                if id != NOT_AN_OP {
                    self.completed(id, res);
                }
            }
        }
    }

    fn completed(&self, id: u64, res: i32) {
        let Some(mut op) = self.table.lock().remove(&id) else {
            return;
        };
        let total = op.target.span(op.write).1;
        if op.polling {
            // The poll is over (ready, or an error the operation itself
            // will meet): issue the operation again; a cancel stops it,
            // and a linked timeout that fired (ECANCELED, not asked for)
            // ends it timed out.
            op.polling = false;
            if op.cancelled {
                finish(op, cancelled());
                return;
            }
            if res == -libc::ECANCELED {
                let e = if op.deadline.is_some() {
                    timed_out(op.done, total)
                } else {
                    io::Error::from_raw_os_error(libc::ECANCELED)
                };
                finish(op, Err(e));
                return;
            }
            let sqe = sqe_of(id, &mut op);
            self.submit_op(id, op, sqe);
            return;
        }
        let outcome = if res < 0 {
            match -res {
                libc::EINTR if op.cancelled => Some(cancelled()),
                libc::EINTR => None,
                libc::EAGAIN if op.cancelled => Some(cancelled()),
                // Cancelled by its linked timeout, not by a caller.
                libc::ECANCELED if !op.cancelled && op.deadline.is_some() => {
                    Some(Err(timed_out(op.done, total)))
                }
                libc::EAGAIN => {
                    // A non-blocking descriptor with nothing now: wait in
                    // a poll rather than spin.
                    op.polling = true;
                    let flags = if op.write {
                        libc::POLLOUT
                    } else {
                        libc::POLLIN
                    };
                    let sqe = opcode::PollAdd::new(types::Fd(op.fd.as_raw_fd()), flags as u32)
                        .build()
                        .user_data(id);
                    self.submit_op(id, op, sqe);
                    return;
                }
                e => Some(Err(io::Error::from_raw_os_error(e))),
            }
        } else if res == 0 && op.done < total {
            Some(Err(if op.write {
                io::ErrorKind::WriteZero.into()
            } else {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the input ended after {} of {total} bytes", op.done),
                )
            }))
        } else {
            op.done += res as usize;
            (op.done >= total).then_some(Ok(op.done))
        };
        match outcome {
            Some(r) => finish(op, r),
            None if op.cancelled => finish(op, cancelled()),
            None => {
                // The rest of the same buffer, back in the table.
                let sqe = sqe_of(id, &mut op);
                self.submit_op(id, op, sqe);
            }
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

/// `at` on the monotonic clock (which `Instant` reads on Linux), for the
/// kernel: now's reading plus the time left.
fn monotonic(at: std::time::Instant) -> types::Timespec {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let left = at.saturating_duration_since(std::time::Instant::now());
    let ns = now.tv_nsec as u64 + u64::from(left.subsec_nanos());
    let secs = (now.tv_sec as u64)
        .saturating_add(left.as_secs())
        .saturating_add(ns / 1_000_000_000);
    types::Timespec::new()
        .sec(secs)
        .nsec((ns % 1_000_000_000) as u32)
}

/// The outcome of a cancelled operation.
fn cancelled() -> io::Result<usize> {
    Err(io::Error::from_raw_os_error(libc::ECANCELED))
}

/// Hands an operation's buffer back with how it ended (the bytes moved so
/// far go with an error), after letting go of its descriptor (so that a
/// caller who sees the completion can close the file). A panic in the
/// caller's code is kept from the reaper thread.
fn finish(op: Op, r: io::Result<usize>) {
    let Op {
        fd, target, done, ..
    } = op;
    drop(fd);
    let moved = *r.as_ref().unwrap_or(&done);
    let ended = Ended { moved, result: r };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.finish(ended)));
}

/// The entry for the rest of `op` (from `op.done`).
fn sqe_of(id: u64, op: &mut Op) -> io_uring::squeue::Entry {
    let (ptr, len) = op.target.span(op.write);
    // The span stays valid: `op` (and so the target) goes into the table
    // and stays there until this entry's completion.
    let ptr = ptr.wrapping_add(op.done);
    let len = (len - op.done).min(u32::MAX as usize & !4095) as u32;
    let fd = types::Fd(op.fd.as_raw_fd());
    // -1: the descriptor's own position (a pipe or socket).
    let off = op.offset.map_or(u64::MAX, |o| o + op.done as u64);
    let e = if op.write && op.socket {
        opcode::Send::new(fd, ptr, len)
            .flags(libc::MSG_NOSIGNAL)
            .build()
    } else if op.write {
        opcode::Write::new(fd, ptr, len).offset(off).build()
    } else {
        opcode::Read::new(fd, ptr, len).offset(off).build()
    };
    e.user_data(id)
}
