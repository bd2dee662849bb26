//! The stream lock: held only while bookkeeping changes, never while a
//! caller reads or writes region bytes.
//!
//! A spin lock that yields, re-entrant for the thread that holds it, so that
//! a region taken before `Stream::lock()` can still be freed while the
//! guard is held.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::sys::thread_id as thread_token;

pub(crate) struct StreamLock {
    owner: AtomicUsize,
}

/// Whether `lock` took the lock (and `unlock` must release it) or this
/// thread already held it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Held {
    Taken,
    Nested,
}

impl StreamLock {
    pub(crate) const fn new() -> StreamLock {
        StreamLock {
            owner: AtomicUsize::new(0),
        }
    }

    #[inline(always)]
    pub(crate) fn lock(&self) -> Held {
        let me = thread_token();
        match self
            .owner
            .compare_exchange(0, me, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Held::Taken,
            Err(cur) if cur == me => Held::Nested,
            Err(_) => self.lock_slow(me),
        }
    }

    #[cold]
    fn lock_slow(&self, me: usize) -> Held {
        let mut spins = 0u32;
        loop {
            if self.owner.load(Ordering::Relaxed) == 0
                && self
                    .owner
                    .compare_exchange_weak(0, me, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                return Held::Taken;
            }
            spins += 1;
            if spins < 64 {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
    }

    #[inline(always)]
    pub(crate) fn unlock(&self, held: Held) {
        if held == Held::Taken {
            self.owner.store(0, Ordering::Release);
        }
    }
}
