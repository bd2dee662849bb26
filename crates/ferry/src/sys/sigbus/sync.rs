//! The atomics that the guard's shared-memory protocol is written against.
//!
//! `handshake.rs` and `index.rs` name their atomics through `super::sync`, so
//! that `loom.rs` can compile the very same files a second time against
//! loom's model-checked atomics (its own `sync` module). This one is the real
//! thing: `std`'s atomics, a CPU spin hint, and a [`Probe`] that compiles to
//! nothing.

pub(super) use std::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// What a thread does while it waits for another (loom's version yields to
/// the model's scheduler instead).
#[inline(always)]
pub(super) fn spin() {
    std::hint::spin_loop();
}

/// Marks the memory the handler may read so that the model checker can see
/// a use after it is freed. Zero-sized and free here; under loom it is an
/// `UnsafeCell` whose reads and its final write loom checks for races.
pub(super) struct Probe;

impl Probe {
    pub(super) fn new() -> Probe {
        Probe
    }

    /// The handler is reading the memory this probe stands for.
    #[inline(always)]
    pub(super) fn read(&self) {}

    /// The memory is about to be freed: no reader may still be in it.
    #[inline(always)]
    pub(super) fn retire(&self) {}
}
