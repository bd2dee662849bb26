//! Writing to a pipe whose reader has gone must be an `EPIPE` error, never a
//! `SIGPIPE` death — even in a process (a C program linking libferry, say)
//! that keeps the default disposition.
//!
//! [`SigpipeGuard`] blocks `SIGPIPE` in the calling thread for the length of
//! a write and, if the write raised one, takes the pending signal back out
//! with `sigtimedwait` so that it is never delivered. Other threads and the
//! process-wide disposition are untouched.

use std::mem::MaybeUninit;

pub(crate) struct SigpipeGuard {
    old_mask: libc::sigset_t,
    /// SIGPIPE was already pending before we blocked it: it is not ours to
    /// consume.
    was_pending: bool,
    /// A write under this guard failed with EPIPE, so a SIGPIPE is pending.
    raised: bool,
}

fn sigpipe_set() -> libc::sigset_t {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set it is given; sigaddset on an
    // initialised set with a valid signal number cannot fail.
    unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        libc::sigaddset(set.as_mut_ptr(), libc::SIGPIPE);
        set.assume_init()
    }
}

impl SigpipeGuard {
    /// Blocks SIGPIPE in this thread until the guard is dropped.
    pub(crate) fn new() -> SigpipeGuard {
        let set = sigpipe_set();
        let mut old = MaybeUninit::<libc::sigset_t>::uninit();
        let mut pending = MaybeUninit::<libc::sigset_t>::uninit();
        // SAFETY: all pointers are to live, properly sized sigset_t values;
        // sigpending and pthread_sigmask only fail for invalid arguments,
        // which these are not. Both outputs are fully written on success.
        unsafe {
            libc::sigemptyset(pending.as_mut_ptr());
            libc::sigpending(pending.as_mut_ptr());
            let was_pending = libc::sigismember(pending.as_ptr(), libc::SIGPIPE) == 1;
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, old.as_mut_ptr());
            SigpipeGuard {
                old_mask: old.assume_init(),
                was_pending,
                raised: false,
            }
        }
    }

    /// Records that a write failed with EPIPE, so the guard must swallow the
    /// signal it raised.
    pub(crate) fn saw_epipe(&mut self) {
        self.raised = true;
    }
}

impl Drop for SigpipeGuard {
    fn drop(&mut self) {
        if self.raised && !self.was_pending {
            let set = sigpipe_set();
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
