//! The synchronisation the memory layer is built on, in one place so that
//! `--cfg loom` swaps it for loom's models (`loom` explores every
//! interleaving and memory-order outcome of a small test):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p ferry --release --lib loom
//! ```
//!
//! Only the block reference counts and the pool (free lists, budget,
//! waiters) run under loom; counters that are statistics stay std atomics.

#[cfg(not(loom))]
pub(crate) use std::sync::{atomic, Arc, Condvar, Mutex};

#[cfg(loom)]
pub(crate) use loom::sync::{atomic, Arc, Condvar, Mutex};

/// A pool shard's lock: a spin lock that yields while it waits (a critical
/// section is one push or pop); loom's mutex in models.
#[cfg(not(loom))]
pub(crate) struct SpinLock<T>(spin::mutex::SpinMutex<T, spin::relax::Yield>);

#[cfg(not(loom))]
impl<T> SpinLock<T> {
    pub(crate) fn new(v: T) -> SpinLock<T> {
        SpinLock(spin::mutex::SpinMutex::new(v))
    }

    #[inline]
    pub(crate) fn lock(&self) -> impl std::ops::DerefMut<Target = T> + '_ {
        self.0.lock()
    }
}

#[cfg(loom)]
pub(crate) struct SpinLock<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> SpinLock<T> {
    pub(crate) fn new(v: T) -> SpinLock<T> {
        SpinLock(loom::sync::Mutex::new(v))
    }

    pub(crate) fn lock(&self) -> impl std::ops::DerefMut<Target = T> + '_ {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
