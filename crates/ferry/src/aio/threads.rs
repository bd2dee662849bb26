//! The thread-pool backend: a few worker threads run each request's
//! `pread`/`pwrite` (or `read`/`write` on a descriptor that cannot seek)
//! to the end. Used where io_uring is missing or refused, or asked for
//! (`FERRY_AIO=threads`).
//!
//! A worker takes the buffer out of the request for the length of the
//! operation and puts it back when done, so no memory is shared with the
//! caller meanwhile. A cancel before a worker starts the request ends it
//! without any I/O; a cancel while a worker waits on a pipe or socket
//! wakes it (it waits in `poll` on the descriptor and its own eventfd);
//! a `pread` of a regular file runs to its end, as the kernel's own
//! requests do.

use super::buffer::Owned;
use super::slot::{Canceller, Slot};
use super::Op;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Arc, OnceLock};

/// Worker threads: I/O waits, so more than the cores.
const WORKERS: usize = 4;

struct Job {
    slot: Arc<Slot>,
    op: Op,
    buf: Box<dyn Owned>,
    id: u64,
}

struct Shared {
    queue: Mutex<VecDeque<Job>>,
    more: Condvar,
    /// Request ids running on each worker, and each worker's eventfd.
    running: Mutex<Vec<Option<u64>>>,
    wake: Vec<OwnedFd>,
}

pub(crate) struct Threads {
    shared: Arc<Shared>,
    next: Mutex<u64>,
}

impl Canceller for Shared {
    fn cancel(&self, id: u64) {
        // Still queued: the worker that takes it sees the cancel and does
        // no I/O. Running: wake its worker out of poll.
        let running = self.running.lock();
        if let Some(w) = running.iter().position(|r| *r == Some(id)) {
            let _ = rustix::io::write(&self.wake[w], &1u64.to_ne_bytes());
        }
    }
}

/// The process's pool, started at first use.
pub(crate) fn pool() -> io::Result<&'static Threads> {
    static POOL: OnceLock<Threads> = OnceLock::new();
    if let Some(p) = POOL.get() {
        return Ok(p);
    }
    let mut wake = Vec::new();
    for _ in 0..WORKERS {
        wake.push(rustix::event::eventfd(
            0,
            rustix::event::EventfdFlags::CLOEXEC | rustix::event::EventfdFlags::NONBLOCK,
        )?);
    }
    let shared = Arc::new(Shared {
        queue: Mutex::new(VecDeque::new()),
        more: Condvar::new(),
        running: Mutex::new(vec![None; WORKERS]),
        wake,
    });
    let pool = POOL.get_or_init(|| {
        for w in 0..WORKERS {
            let s = shared.clone();
            let _ = std::thread::Builder::new()
                .name(format!("ferry-aio-{w}"))
                .spawn(move || worker(&s, w));
        }
        Threads {
            shared,
            next: Mutex::new(1),
        }
    });
    Ok(pool)
}

impl Threads {
    pub(crate) fn start(&self, slot: Arc<Slot>, op: Op, buf: Box<dyn Owned>) {
        let id = {
            let mut n = self.next.lock();
            *n += 1;
            *n
        };
        slot.set_canceller(self.shared.clone(), id);
        self.shared
            .queue
            .lock()
            .push_back(Job { slot, op, buf, id });
        self.shared.more.notify_one();
    }
}

fn worker(s: &Shared, w: usize) {
    loop {
        let mut job = {
            let mut q = s.queue.lock();
            loop {
                if let Some(j) = q.pop_front() {
                    break j;
                }
                s.more.wait(&mut q);
            }
        };
        if job.slot.st.lock().cancel_asked {
            job.slot
                .complete(job.buf, Err(io::Error::from_raw_os_error(libc::ECANCELED)));
            continue;
        }
        s.running.lock()[w] = Some(job.id);
        // A cancel between the look above and this point: seen by the
        // first wait below (the eventfd), or the next look.
        let r = run(&job.slot, &job.op, &mut *job.buf, s.wake[w].as_fd());
        s.running.lock()[w] = None;
        let mut drained = [0u8; 8];
        let _ = rustix::io::read(&s.wake[w], &mut drained);
        job.slot.complete(job.buf, r);
    }
}

/// Runs one operation to its end: all of it, the input's end (an
/// `UnexpectedEof` error), an I/O error, or a cancel (`ECANCELED`).
fn run(slot: &Slot, op: &Op, buf: &mut dyn Owned, wake: BorrowedFd<'_>) -> io::Result<usize> {
    let fd = op.fd.as_fd();
    let total = if op.write {
        buf.write_bytes().len()
    } else {
        buf.read_room().map_or(0, |r| r.len())
    };
    let mut done = 0;
    while done < total {
        if slot.st.lock().cancel_asked {
            return Err(io::Error::from_raw_os_error(libc::ECANCELED));
        }
        if !op.seekable {
            wait_ready(fd, op.write, wake)?;
        }
        let at = op.offset.map(|o| o + done as u64);
        let r = if op.write {
            let b = &buf.write_bytes()[done..];
            match at {
                Some(o) => rustix::io::pwrite(fd, b, o),
                None => rustix::io::write(fd, b),
            }
        } else {
            let room = buf.read_room().map_or(&mut [][..], |r| r);
            let b = &mut room[done..];
            match at {
                Some(o) => rustix::io::pread(fd, b, o),
                None => rustix::io::read(fd, b),
            }
        };
        match r {
            Ok(0) if !op.write => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the input ended after {done} of {total} bytes"),
                ))
            }
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(done)
}

/// Waits until `fd` is ready or the worker's eventfd says cancel.
fn wait_ready(fd: BorrowedFd<'_>, write: bool, wake: BorrowedFd<'_>) -> io::Result<()> {
    use rustix::event::{PollFd, PollFlags};
    loop {
        let dir = if write { PollFlags::OUT } else { PollFlags::IN };
        let mut p = [PollFd::new(&fd, dir), PollFd::new(&wake, PollFlags::IN)];
        match rustix::event::poll(&mut p, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
        if !p[1].revents().is_empty() {
            return Err(io::Error::from_raw_os_error(libc::ECANCELED));
        }
        if !p[0].revents().is_empty() {
            return Ok(());
        }
    }
}
