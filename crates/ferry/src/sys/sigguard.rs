//! Writing to a pipe whose reader has gone must be an `EPIPE` error, never a
//! `SIGPIPE` death; writing past `RLIMIT_FSIZE` must be an `EFBIG` error,
//! never a `SIGXFSZ` death — even in a process (a C program linking libferry,
//! say) that keeps the default dispositions.
//!
//! [`SignalGuard`] blocks one of those signals in the calling thread for the
//! length of a write and, if the write raised it, takes the pending signal
//! back out with `sigtimedwait` so that it is never delivered. Other threads
//! and the process-wide disposition are untouched.

use std::mem::MaybeUninit;

pub(crate) struct SignalGuard {
    signal: libc::c_int,
    old_mask: libc::sigset_t,
    /// The signal was already pending before we blocked it: it is not ours
    /// to consume.
    was_pending: bool,
    /// A write under this guard failed with the matching error, so the
    /// signal is pending.
    raised: bool,
}

fn signal_set(signal: libc::c_int) -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset on an
    // initialised set with a valid signal number cannot fail.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), signal);
        set.assume_init()
    }
}

impl SignalGuard {
    /// Blocks SIGPIPE in this thread until the guard is dropped.
    pub(crate) fn sigpipe() -> SignalGuard {
        SignalGuard::new(libc::SIGPIPE)
    }

    /// Blocks SIGXFSZ in this thread until the guard is dropped.
    pub(crate) fn sigxfsz() -> SignalGuard {
        SignalGuard::new(libc::SIGXFSZ)
    }

    fn new(signal: libc::c_int) -> SignalGuard {
        let set = signal_set(signal);
        let mut old = MaybeUninit::<libc::sigset_t>::uninit();
        let mut pending = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: all pointers are to live, properly sized sigset_t values;
        // sigpending and pthread_sigmask only fail for invalid arguments,
        // which these are not. Both outputs are fully written on success.
        unsafe {
            libc::sigemptyset(pending.as_mut_ptr());
            libc::sigpending(pending.as_mut_ptr());
            let was_pending = libc::sigismember(pending.as_ptr(), signal) == 1;
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, old.as_mut_ptr());
            SignalGuard {
                signal,
                old_mask: old.assume_init(),
                was_pending,
                raised: false,
            }
        }
    }

    /// Records the error a write under the guard failed with: if it is the
    /// one that comes with the guarded signal (EPIPE, EFBIG), the guard must
    /// swallow the signal the write raised.
    pub(crate) fn saw(&mut self, errno: rustix::io::Errno) {
        let matching = match self.signal {
            libc::SIGPIPE => rustix::io::Errno::PIPE,
            _ => rustix::io::Errno::FBIG,
        };
        if errno == matching {
            self.raised = true;
        }
    }

    /// [`saw`](Self::saw), for an error already turned into an `io::Error`.
    pub(crate) fn saw_io(&mut self, e: &std::io::Error) {
        if let Some(n) = e.raw_os_error() {
            self.saw(rustix::io::Errno::from_raw_os_error(n));
        }
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        if self.raised && !self.was_pending {
            let set = signal_set(self.signal);
            let zero = libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            };
            loop {
                // SAFETY: valid set and timeout; a null siginfo pointer is
                // allowed. With a zero timeout this never blocks.
                let r = unsafe { libc::sigtimedwait(&set, std::ptr::null_mut(), &zero) };
                if r >= 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    break;
                }
            }
        }
        // SAFETY: restores the mask saved in `new`; the pointer is valid.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old_mask, std::ptr::null_mut());
        }
    }
}

/// Blocks `signals` in the calling thread for good: for a library thread
/// (a worker, the io_uring reaper) whose writes must end in `EPIPE` or
/// `EFBIG`, never in the death of the process. A signal a write raises
/// stays pending on that thread, never delivered.
pub(crate) fn block_for_thread(signals: &[libc::c_int]) {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set; sigaddset with valid signal
    // numbers; pthread_sigmask with a valid set and no old set.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        for &s in signals {
            libc::sigaddset(set.as_mut_ptr(), s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, set.as_ptr(), std::ptr::null_mut());
    }
}
