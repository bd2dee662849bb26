//! One request's shared state: the paper's state machine (in flight →
//! completed | I/O error | cancelled; an error or cancel sticks until
//! cleared), who holds the buffer, and the wake-ups.
//!
//! ```text
//!              complete                       clear_exception
//!  InFlight ───────────────► Completed
//!     │  │     I/O error                      
//!     │  └─────────────────► Failed ─────────────────► Cleared
//!     │        cancel()                               ▲
//!     └────────────────────► Cancelled ───────────────┘
//! ```
//!
//! The phase the caller sees and the buffer's whereabouts are separate:
//! a cancelled request is over for the caller at once, but its buffer
//! comes back only when the kernel's completion for it arrives.

use super::buffer::Owned;
use super::lock::{Condvar, Mutex};
use std::io;
use std::sync::Arc;
use std::task::Waker;
use std::time::{Duration, Instant};

/// Where a request is, as its caller sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// Started; the kernel (or a worker) is on it.
    InFlight,
    /// Finished: every byte moved.
    Completed,
    /// Ended in an I/O error, reported by every `done`/`wait` that
    /// includes it until [`clear_exception`](super::Request::clear_exception).
    Failed,
    /// Cancelled while in flight: reported as a
    /// [`Cancelled`](super::Cancelled) error until cleared.
    Cancelled,
    /// A failure or cancel the caller cleared: counts as done.
    Cleared,
}

/// How a backend stops an operation it started (a cancel in the ring, a
/// wake-up of the worker thread).
pub(crate) trait Canceller: Send + Sync {
    fn cancel(&self, id: u64);
}

pub(crate) struct SlotState {
    pub(crate) state: State,
    /// Bytes that moved, once the kernel let go of the buffer: all of
    /// them on success, those before the end on an error, a cancel or a
    /// deadline.
    pub(crate) bytes: Option<usize>,
    error: Option<(io::ErrorKind, Option<i32>, Arc<str>)>,
    /// The buffer, when no one else holds it (`None` while the kernel or
    /// a worker does, and after it was taken back).
    pub(crate) buffer: Option<Box<dyn Owned>>,
    /// The kernel or a worker still holds the buffer.
    pub(crate) held: bool,
    /// A cancel was asked for while the request was in flight (stays set
    /// when the caller clears the state: the backend goes by this).
    pub(crate) cancel_asked: bool,
    waker: Option<Waker>,
    canceller: Option<(Arc<dyn Canceller>, u64)>,
}

/// One request's state, shared by its handle and the backend.
pub(crate) struct Slot {
    pub(crate) st: Mutex<SlotState>,
    /// What the request is, for messages.
    pub(crate) what: Arc<str>,
    /// A write (a read otherwise).
    pub(crate) write: bool,
}

impl Slot {
    pub(crate) fn new(what: String, write: bool) -> Arc<Slot> {
        Arc::new(Slot {
            st: Mutex::new(SlotState {
                state: State::InFlight,
                bytes: None,
                error: None,
                buffer: None,
                held: true,
                cancel_asked: false,
                waker: None,
                canceller: None,
            }),
            what: what.into(),
            write,
        })
    }

    /// Set by the backend once it has an id to cancel by.
    pub(crate) fn set_canceller(&self, c: Arc<dyn Canceller>, id: u64) {
        self.st.lock().canceller = Some((c, id));
    }

    /// The backend is done with the buffer: `Ok(n)` whole success, or the
    /// error, with the bytes moved before it; the buffer comes back
    /// (finished: a read's holds the bytes that arrived) and waiters wake.
    pub(crate) fn complete(&self, mut buf: Box<dyn Owned>, ended: super::backend::Ended) {
        let waker = {
            let mut s = self.st.lock();
            let r = ended.result;
            let moved = match &r {
                Ok(n) => *n,
                Err(_) => ended.moved,
            };
            buf.finish(moved, r.is_ok());
            s.bytes = Some(moved);
            if s.state == State::InFlight {
                match r {
                    Ok(_) => s.state = State::Completed,
                    Err(e) if e.raw_os_error() == Some(libc::ECANCELED) => {
                        s.state = State::Cancelled
                    }
                    Err(e) => {
                        s.state = State::Failed;
                        let msg = format!("{}: {}", self.what, crate::error::describe(&e));
                        s.error = Some((e.kind(), e.raw_os_error(), msg.into()));
                    }
                }
            }
            s.buffer = Some(buf);
            s.held = false;
            s.canceller = None;
            s.waker.take()
        };
        notify();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// The caller's view: `Ok(true)` done, `Ok(false)` in flight, the
    /// sticky error otherwise.
    pub(crate) fn check(&self) -> io::Result<bool> {
        let s = self.st.lock();
        self.check_locked(&s)
    }

    fn check_locked(&self, s: &SlotState) -> io::Result<bool> {
        match s.state {
            State::InFlight => Ok(false),
            State::Completed | State::Cleared => Ok(true),
            State::Cancelled => Err(io::Error::new(
                io::ErrorKind::Interrupted,
                super::Cancelled {
                    what: self.what.clone(),
                },
            )),
            State::Failed => {
                let (kind, errno, msg) = s.error.clone().expect("a failed request has its error");
                Err(io::Error::new(kind, super::RequestError::new(msg, errno)))
            }
        }
    }

    /// A cancel was asked for (set before any canceller is called).
    pub(crate) fn cancel_asked(&self) -> bool {
        self.st.lock().cancel_asked
    }

    /// Cancels a request in flight (nothing for one that is over).
    pub(crate) fn cancel(&self) {
        let c = {
            let mut s = self.st.lock();
            if s.state != State::InFlight {
                return;
            }
            s.state = State::Cancelled;
            s.cancel_asked = true;
            s.canceller.clone()
        };
        notify();
        if let Some((c, id)) = c {
            c.cancel(id);
        }
    }

    pub(crate) fn clear(&self) {
        let mut s = self.st.lock();
        if matches!(s.state, State::Failed | State::Cancelled) {
            s.state = State::Cleared;
        }
    }

    pub(crate) fn set_waker(&self, w: &Waker) -> io::Result<bool> {
        let mut s = self.st.lock();
        if !s.held {
            return self.check_locked(&s);
        }
        s.waker = Some(w.clone());
        Ok(false)
    }

    /// Waits until the kernel has let go of the buffer and takes it.
    pub(crate) fn take_buffer(&self, timeout: Option<Duration>) -> Option<Box<dyn Owned>> {
        let ready = wait_until(timeout, || !self.st.lock().held);
        if !ready {
            return None;
        }
        self.st.lock().buffer.take()
    }
}

/// Every completion in the process bumps this and wakes its waiters:
/// `any_done`/`all_done` over requests of any files and backends wait on
/// it.
static NOTIFY: Mutex<u64> = Mutex::new(0);
static NOTIFIED: Condvar = Condvar::new();

pub(crate) fn notify() {
    *NOTIFY.lock() += 1;
    NOTIFIED.notify_all();
}

/// Waits until `ready()` holds or `timeout` passes (`None`: for ever;
/// zero: one look). Returns whether it held.
pub(crate) fn wait_until(timeout: Option<Duration>, mut ready: impl FnMut() -> bool) -> bool {
    let deadline = timeout.map(|t| Instant::now().checked_add(t));
    loop {
        let seen = *NOTIFY.lock();
        if ready() {
            return true;
        }
        let g = NOTIFY.lock();
        if *g != seen {
            continue;
        }
        match deadline {
            None | Some(None) => drop(NOTIFIED.wait(g)),
            Some(Some(d)) => {
                if Instant::now() >= d {
                    drop(g);
                    return ready();
                }
                let (g, timed_out) = NOTIFIED.wait_until(g, d);
                drop(g);
                if timed_out {
                    return ready();
                }
            }
        }
    }
}
