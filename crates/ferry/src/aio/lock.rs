//! The locks of the asynchronous requests: std's (futex words, no global
//! table of parked threads), so that a child after `fork` — which has
//! none of its parent's other threads — can start a pool of its own and
//! use it. A lock poisoned by a panic elsewhere is taken as it is: every
//! state it guards is whole between two statements.

use std::sync::PoisonError;
use std::time::Instant;

pub(crate) use std::sync::MutexGuard;

/// `std::sync::Mutex` without poisoning.
#[derive(Debug, Default)]
pub(crate) struct Mutex<T>(std::sync::Mutex<T>);

impl<T> Mutex<T> {
    pub(crate) const fn new(v: T) -> Mutex<T> {
        Mutex(std::sync::Mutex::new(v))
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// `std::sync::Condvar` without poisoning.
#[derive(Debug, Default)]
pub(crate) struct Condvar(std::sync::Condvar);

impl Condvar {
    pub(crate) const fn new() -> Condvar {
        Condvar(std::sync::Condvar::new())
    }

    pub(crate) fn wait<'a, T>(&self, g: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
        self.0.wait(g).unwrap_or_else(PoisonError::into_inner)
    }

    /// Waits until notified or `deadline`; true if the time ran out.
    pub(crate) fn wait_until<'a, T>(
        &self,
        g: MutexGuard<'a, T>,
        deadline: Instant,
    ) -> (MutexGuard<'a, T>, bool) {
        let left = deadline.saturating_duration_since(Instant::now());
        let (g, r) = self
            .0
            .wait_timeout(g, left)
            .unwrap_or_else(PoisonError::into_inner);
        (g, r.timed_out())
    }

    pub(crate) fn notify_one(&self) {
        self.0.notify_one()
    }

    pub(crate) fn notify_all(&self) {
        self.0.notify_all()
    }
}
