//! The raw io_uring under `aio`'s io_uring backend: a ring, its submission
//! queue behind a lock, a reaper that reads its completions, and the table
//! that holds each operation's memory while the kernel may use it. What an
//! operation does when an entry of it completes — go on with the rest of a
//! short transfer, wait in a poll after `EAGAIN`, end on a cancel or a
//! deadline — is the backend's (`aio/backend/uring.rs`).
//!
//! Why this part is here, though the `io-uring` crate makes the system
//! calls: pushing an entry and reading completions are `unsafe`, because
//! the kernel reads and writes memory by the addresses in the entries. The
//! table is what makes that sound, so it lives here with the `unsafe`
//! blocks, and entries are built here from the memory it holds:
//!
//! * an operation's buffer and descriptor are moved into the table when an
//!   entry of it is submitted and moved out only when the ring says that
//!   entry is over (its completion arrived); the caller's handle holds
//!   neither, so dropping it (or the file) frees nothing the kernel may
//!   still use, and the descriptor's number cannot be reused under an
//!   operation;
//! * an entry covers the operation's buffer from the bytes already moved
//!   to its end, never past it, and a write's buffer is never written;
//! * the ring and its table live as long as the process (the backend keeps
//!   it in a static): no teardown can race a completion.
//!
//! A cancel is an `IORING_OP_ASYNC_CANCEL` of the operation's id: the
//! entry then ends with `ECANCELED`, or completes anyway if it was past
//! stopping; either way its memory comes back with its completion.
//!
//! An operation with a deadline is submitted with a linked timeout
//! (`IORING_OP_LINK_TIMEOUT`, absolute, on the monotonic clock) behind
//! each of its entries: when it fires first the kernel cancels the entry.

use io_uring::{opcode, types, IoUring};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::Arc;
use std::time::Instant;

/// Memory an operation reads into or writes from. The span must stay at
/// one address and be used by no one else while the operation holds it
/// (heap memory owned by the implementor: a `Vec`, a `BufMut`, a `Buf`).
pub(crate) trait Target: Send + 'static {
    /// The bytes: where a read puts them (`write` false, exclusive to the
    /// operation), or what a write sends.
    fn span(&mut self, write: bool) -> (*mut u8, usize);
}

/// One operation: its descriptor and buffer, how far it got, and `T`, the
/// buffer with whatever else the backend keeps with it.
pub(crate) struct Op<T> {
    fd: Arc<OwnedFd>,
    /// File offset of the first byte (`None`: a descriptor that cannot
    /// seek, read or written at its own position).
    offset: Option<u64>,
    write: bool,
    /// A socket: writes go as `send(MSG_NOSIGNAL)` (no SIGPIPE).
    socket: bool,
    /// Bytes moved so far: the next entry starts there.
    done: usize,
    /// The deadline: when, and the same instant for the kernel (boxed:
    /// its address is in the linked timeout's entry, read when the entry
    /// is submitted, and the box lives in the table until the entry's
    /// completion).
    deadline: Option<(Instant, Box<types::Timespec>)>,
    /// The buffer, and the backend's own state.
    pub(crate) target: T,
}

impl<T: Target> Op<T> {
    /// An operation reading into (`write` false) or writing from
    /// `target`'s span, on `fd` at `offset`, ending by `deadline`.
    pub(crate) fn new(
        fd: Arc<OwnedFd>,
        offset: Option<u64>,
        write: bool,
        socket: bool,
        deadline: Option<Instant>,
        target: T,
    ) -> Op<T> {
        Op {
            fd,
            offset,
            write,
            socket,
            done: 0,
            deadline: deadline.map(|d| (d, Box::new(monotonic(d)))),
            target,
        }
    }

    pub(crate) fn write(&self) -> bool {
        self.write
    }

    /// Bytes moved so far.
    pub(crate) fn done(&self) -> usize {
        self.done
    }

    /// The length of the operation's buffer: the bytes it moves in all.
    pub(crate) fn total(&mut self) -> usize {
        self.target.span(self.write).1
    }

    /// Counts `n` more bytes moved (never past the buffer's end).
    pub(crate) fn moved(&mut self, n: usize) {
        self.done = self.done.saturating_add(n).min(self.total());
    }

    pub(crate) fn deadline(&self) -> Option<Instant> {
        self.deadline.as_ref().map(|(at, _)| *at)
    }

    /// Takes the operation apart: its descriptor, its target, the bytes
    /// moved.
    pub(crate) fn into_parts(self) -> (Arc<OwnedFd>, T, usize) {
        (self.fd, self.target, self.done)
    }
}

/// What the next entry of an operation does.
pub(crate) enum Entry {
    /// Reads or writes the rest of the buffer, from the bytes moved on.
    Rest,
    /// Waits until the descriptor is ready for the operation (it said
    /// `EAGAIN`).
    Poll,
}

/// User data of cancel requests and linked timeouts: no operation.
const NOT_AN_OP: u64 = u64::MAX;

/// A ring whose operations carry `T`.
pub(crate) struct Ring<T> {
    ring: IoUring,
    /// Serialises everything that touches the submission queue.
    sq: Mutex<()>,
    /// Operations with an entry in the kernel, by id.
    table: Mutex<HashMap<u64, Op<T>>>,
    next: Mutex<u64>,
    /// Only one thread reads the completion queue: the first to call
    /// [`reap`](Self::reap).
    reaping: std::sync::atomic::AtomicBool,
    pid: u32,
}

impl<T: Target> Ring<T> {
    /// A ring of `entries` entries; an error where the kernel has no
    /// io_uring or refuses it (seccomp, `kernel.io_uring_disabled`).
    pub(crate) fn new(entries: u32) -> io::Result<Ring<T>> {
        Ok(Ring {
            ring: IoUring::new(entries)?,
            sq: Mutex::new(()),
            table: Mutex::new(HashMap::new()),
            next: Mutex::new(0),
            reaping: std::sync::atomic::AtomicBool::new(false),
            pid: std::process::id(),
        })
    }

    /// The ring is this process's (not a parent's, inherited by `fork`:
    /// its operations and its reaper are the parent's, and a child's
    /// submissions would be matched to the parent's operations).
    pub(crate) fn same_process(&self) -> io::Result<()> {
        if self.pid == std::process::id() {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "ferry's io_uring is its parent's: not usable in a child after fork()",
        ))
    }

    /// A new operation id.
    pub(crate) fn next_id(&self) -> u64 {
        let mut n = self.next.lock();
        *n += 1;
        *n
    }

    /// Puts `op` in the table under `id` and submits its next entry, with
    /// a linked timeout if it has a deadline. Its completion comes back
    /// to [`reap`](Self::reap)'s callback with `op`.
    pub(crate) fn submit(&self, id: u64, mut op: Op<T>, entry: Entry) {
        let sqe = match entry {
            Entry::Rest => rest_of(id, &mut op),
            Entry::Poll => {
                let flags = if op.write {
                    libc::POLLOUT
                } else {
                    libc::POLLIN
                };
                opcode::PollAdd::new(types::Fd(op.fd.as_raw_fd()), flags as u32)
                    .build()
                    .user_data(id)
            }
        };
        let timeout = op.deadline.as_ref().map(|(_, ts)| {
            opcode::LinkTimeout::new(&**ts as *const types::Timespec)
                .flags(types::TimeoutFlags::ABS)
                .build()
                .user_data(NOT_AN_OP)
        });
        self.table.lock().insert(id, op);
        match timeout {
            None => self.push(&[sqe]),
            Some(t) => self.push(&[sqe.flags(io_uring::squeue::Flags::IO_LINK), t]),
        }
    }

    /// Asks the kernel to stop operation `id` (nothing if it is over);
    /// `mark` sees the operation's `T` first if it is in the table (an
    /// operation between two of its entries is not there).
    pub(crate) fn cancel(&self, id: u64, mark: impl FnOnce(&mut T)) {
        if self.same_process().is_err() {
            return;
        }
        if let Some(op) = self.table.lock().get_mut(&id) {
            mark(&mut op.target);
        }
        let sqe = opcode::AsyncCancel::new(id).build().user_data(NOT_AN_OP);
        self.push(&[sqe]);
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
            // span and deadline) is owned by the table until their
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

    /// The reaper: waits for completions and hands each operation back,
    /// out of the table, to `completed` with its id and the entry's result
    /// (bytes moved, or `-errno`). Runs for ever, on the calling thread
    /// (which never dies of SIGPIPE or SIGXFSZ from then on: the writes it
    /// continues run here); returns at once if another thread reaps.
    pub(crate) fn reap(&self, mut completed: impl FnMut(u64, i32, Op<T>)) {
        if self.reaping.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
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
                // SAFETY: only this thread reads the completion queue
                // (`reaping`).
                let mut cq = unsafe { self.ring.completion_shared() };
                cq.sync();
                cq.map(|c| (c.user_data(), c.result())).collect()
            };
            for (id, res) in done {
                if id == NOT_AN_OP {
                    continue;
                }
                let op = self.table.lock().remove(&id);
                if let Some(op) = op {
                    completed(id, res, op);
                }
            }
        }
    }
}

/// `at` on the monotonic clock (which `Instant` reads on Linux), for the
/// kernel: now's reading plus the time left.
fn monotonic(at: Instant) -> types::Timespec {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let left = at.saturating_duration_since(Instant::now());
    let ns = now.tv_nsec as u64 + u64::from(left.subsec_nanos());
    let secs = (now.tv_sec as u64)
        .saturating_add(left.as_secs())
        .saturating_add(ns / 1_000_000_000);
    types::Timespec::new()
        .sec(secs)
        .nsec((ns % 1_000_000_000) as u32)
}

/// The entry for the rest of `op` (from `op.done`).
fn rest_of<T: Target>(id: u64, op: &mut Op<T>) -> io_uring::squeue::Entry {
    let (ptr, len) = op.target.span(op.write);
    // The span stays valid: `op` (and so the target) goes into the table
    // and stays there until this entry's completion; `done` never passes
    // the span's end (`Op::moved`).
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
