//! The thread-pool backend: worker threads run each request's
//! `pread`/`pwrite` (or `read`/`write` on a descriptor that cannot seek)
//! to the end. Used where io_uring is missing or refused, or asked for
//! (`FERRY_AIO=threads`), and for writes into pipes (see `Engine::launch`).
//!
//! A worker takes the buffer for the length of the operation and hands it
//! back when done, so no memory is shared with the caller meanwhile. A
//! cancel before a worker starts the request ends it without any I/O; a
//! cancel while a worker waits on a pipe or socket wakes it (it waits in
//! `poll` on the descriptor and its own eventfd); a `pread` of a regular
//! file runs to its end, as the kernel's own requests do.
//!
//! Workers are started as requests need them: one that waits on an idle
//! pipe does not hold up anyone else's request. They block SIGPIPE and
//! SIGXFSZ for good: a write into a pipe without a reader or past
//! `RLIMIT_FSIZE` is an error, never the death of the process. A child
//! after `fork` gets a pool of its own (the parent's workers are not in
//! it).

use super::{timed_out, Done, Ended, Op};
use crate::aio::buffer::Owned;
use crate::aio::lock::{Condvar, Mutex};
use crate::aio::slot::{Canceller, Slot};
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;

/// The most workers a pool starts.
const MAX_WORKERS: usize = 256;

struct Job {
    slot: Arc<Slot>,
    op: Op,
    buf: Box<dyn Owned>,
    done: Done,
    id: u64,
}

struct Worker {
    /// The request it runs.
    running: Option<u64>,
    /// Its wake-up for a cancel.
    wake: Arc<OwnedFd>,
}

struct Shared {
    queue: Mutex<VecDeque<Job>>,
    more: Condvar,
    workers: Mutex<Vec<Worker>>,
    /// Workers waiting for a job.
    idle: Mutex<usize>,
}

pub(crate) struct Threads {
    shared: Arc<Shared>,
    next: Mutex<u64>,
    pid: u32,
}

impl Canceller for Shared {
    fn cancel(&self, id: u64) {
        // Still queued: the worker that takes it sees the cancel and does
        // no I/O. Running: wake its worker out of poll.
        let workers = self.workers.lock();
        if let Some(w) = workers.iter().find(|w| w.running == Some(id)) {
            let _ = rustix::io::write(&*w.wake, &1u64.to_ne_bytes());
        }
    }
}

/// This process's pool, made at first use (and anew in a child after
/// `fork`).
pub(crate) fn pool() -> io::Result<&'static Threads> {
    static POOL: Mutex<Option<&'static Threads>> = Mutex::new(None);
    let mut p = POOL.lock();
    let me = std::process::id();
    if let Some(t) = *p {
        if t.pid == me {
            return Ok(t);
        }
    }
    let t: &'static Threads = Box::leak(Box::new(Threads {
        shared: Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            more: Condvar::new(),
            workers: Mutex::new(Vec::new()),
            idle: Mutex::new(0),
        }),
        next: Mutex::new(1),
        pid: me,
    }));
    *p = Some(t);
    Ok(t)
}

impl Threads {
    /// Queues an operation; `done` gets the buffer back (after the
    /// operation let go of the descriptor) on a worker thread.
    /// A pool that cannot start a first worker fails the request with
    /// that error.
    pub(crate) fn start(&self, slot: Arc<Slot>, op: Op, buf: Box<dyn Owned>, done: Done) {
        let id = {
            let mut n = self.next.lock();
            *n += 1;
            *n
        };
        // One lock at a time (a worker takes the queue's, then the idle
        // count's).
        let queued = self.shared.queue.lock().len() + 1;
        let idle = *self.shared.idle.lock();
        let workers = self.shared.workers.lock().len();
        if idle < queued && workers < MAX_WORKERS {
            if let Err(e) = self.add_worker() {
                if workers == 0 {
                    drop(op);
                    done(buf, Ended::before_any(e));
                    return;
                }
            }
        }
        slot.set_canceller(self.shared.clone(), id);
        self.shared.queue.lock().push_back(Job {
            slot,
            op,
            buf,
            done,
            id,
        });
        self.shared.more.notify_one();
    }

    fn add_worker(&self) -> io::Result<()> {
        let wake = Arc::new(rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )?);
        let w = {
            let mut ws = self.shared.workers.lock();
            ws.push(Worker {
                running: None,
                wake: wake.clone(),
            });
            ws.len() - 1
        };
        let s = self.shared.clone();
        std::thread::Builder::new()
            .name(format!("ferry-aio-{w}"))
            .spawn(move || worker(&s, w, &wake))?;
        Ok(())
    }
}

fn worker(s: &Shared, w: usize, wake: &OwnedFd) {
    crate::sys::sigguard::block_for_thread(&[libc::SIGPIPE, libc::SIGXFSZ]);
    loop {
        let job = {
            let mut q = s.queue.lock();
            loop {
                if let Some(j) = q.pop_front() {
                    break j;
                }
                *s.idle.lock() += 1;
                q = s.more.wait(q);
                *s.idle.lock() -= 1;
            }
        };
        let Job {
            slot,
            op,
            mut buf,
            done,
            id,
        } = job;
        if slot.st.lock().cancel_asked {
            drop(op);
            done(
                buf,
                Ended::before_any(io::Error::from_raw_os_error(libc::ECANCELED)),
            );
            continue;
        }
        s.workers.lock()[w].running = Some(id);
        // A cancel between the look above and this point: seen by the
        // first wait below (the eventfd), or the look at the top of `run`.
        let r = run(&slot, &op, &mut *buf, wake.as_fd());
        s.workers.lock()[w].running = None;
        let mut drained = [0u8; 8];
        let _ = rustix::io::read(wake, &mut drained);
        // The descriptor first: whoever sees the completion may close it.
        drop(op);
        drop(slot);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| done(buf, r)));
    }
}

/// Runs one operation to its end: all of it, the input's end (an
/// `UnexpectedEof` error), an I/O error, or a cancel (`ECANCELED`); with
/// the bytes that had moved by then.
fn run(slot: &Slot, op: &Op, buf: &mut dyn Owned, wake: BorrowedFd<'_>) -> Ended {
    let mut moved = 0;
    let result = run_counted(slot, op, buf, wake, &mut moved);
    Ended { moved, result }
}

/// [`run`], counting the bytes moved into `done` as they move.
fn run_counted(
    slot: &Slot,
    op: &Op,
    buf: &mut dyn Owned,
    wake: BorrowedFd<'_>,
    done: &mut usize,
) -> io::Result<usize> {
    let fd = op.fd.as_fd();
    let total = if op.write {
        buf.write_bytes().len()
    } else {
        buf.read_room().map_or(0, |r| r.len())
    };
    while *done < total {
        if slot.st.lock().cancel_asked {
            return Err(io::Error::from_raw_os_error(libc::ECANCELED));
        }
        if op.deadline.is_some_and(|d| std::time::Instant::now() >= d) {
            return Err(timed_out(*done, total));
        }
        if !op.seekable && !wait_ready(fd, op.write, wake, op.deadline)? {
            return Err(timed_out(*done, total));
        }
        let at = op.offset.map(|o| o + *done as u64);
        let r = if op.write {
            let b = &buf.write_bytes()[*done..];
            match at {
                Some(o) => rustix::io::pwrite(fd, b, o),
                // Never blocked in the kernel: a pipe or socket short of
                // room says EAGAIN and the worker waits in poll, where a
                // cancel or the deadline reaches it.
                None if op.socket => rustix::net::send(
                    fd,
                    b,
                    rustix::net::SendFlags::NOSIGNAL | rustix::net::SendFlags::DONTWAIT,
                ),
                None => crate::sys::fileio::write_nowait(fd, b).map_err(|e| {
                    rustix::io::Errno::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EIO))
                }),
            }
        } else {
            let room = buf.read_room().map_or(&mut [][..], |r| r);
            let b = &mut room[*done..];
            match at {
                Some(o) => rustix::io::pread(fd, b, o),
                // Never blocked in the kernel: bytes another reader took
                // since the poll are EAGAIN, and the wait goes on there.
                None => crate::sys::fileio::read_nowait(fd, b).map_err(|e| {
                    rustix::io::Errno::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EIO))
                }),
            }
        };
        match r {
            Ok(0) if !op.write => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the input ended after {} of {total} bytes", *done),
                ))
            }
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => *done += n,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(*done)
}

/// Waits until `fd` is ready (true), the deadline passes (false) or the
/// worker's eventfd says cancel (`ECANCELED`).
fn wait_ready(
    fd: BorrowedFd<'_>,
    write: bool,
    wake: BorrowedFd<'_>,
    deadline: Option<std::time::Instant>,
) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec};
    loop {
        let dir = if write { PollFlags::OUT } else { PollFlags::IN };
        let mut p = [PollFd::new(&fd, dir), PollFd::new(&wake, PollFlags::IN)];
        let left = match deadline {
            None => None,
            Some(d) => {
                let Some(left) = d.checked_duration_since(std::time::Instant::now()) else {
                    return Ok(false);
                };
                Some(Timespec {
                    tv_sec: left.as_secs().min(i64::MAX as u64) as i64,
                    tv_nsec: i64::from(left.subsec_nanos()),
                })
            }
        };
        match rustix::event::poll(&mut p, left.as_ref()) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        if !p[1].revents().is_empty() {
            return Err(io::Error::from_raw_os_error(libc::ECANCELED));
        }
        if !p[0].revents().is_empty() {
            return Ok(true);
        }
    }
}
