//! The handshake that lets a writer free memory the signal handler reads.
//!
//! The handler cannot take a lock (it may interrupt the lock's holder), so it
//! announces itself in a counter instead: [`Handshake::enter`] before it
//! reads anything, [`Handshake::leave`] after. A writer that has unlinked
//! something (a table entry, a whole table) calls [`Handshake::quiesce`]
//! before it frees or unmaps it, and that waits until no handler is inside.
//!
//! # Why fences, and why SeqCst
//!
//! Each side does a store and then a load of the *other* side's location:
//!
//! ```text
//!   writer (unregister)               handler (on SIGBUS)
//!   store  entry := GONE              ACTIVE += 1
//!   load   ACTIVE == 0 ?  -> free     load   entry  -> use it
//! ```
//!
//! With acquire/release alone (what this guard used before) both loads may
//! read the old values: a store can sit in the CPU's store buffer while the
//! same CPU's later load goes ahead (x86 allows exactly this store→load
//! reordering; the C++/Rust model allows it for anything weaker than SeqCst).
//! The writer then sees no handler and unmaps the memory while the handler,
//! which saw the entry still there, writes zero pages over it — by then
//! perhaps another mapping of the process. A `SeqCst` fence between the store
//! and the load on *both* sides rules that out: the two fences are ordered
//! one way or the other in the single total order of SeqCst operations, and
//! whichever side's fence comes second is guaranteed to see the other side's
//! store. So either the handler sees the entry gone (and never touches it),
//! or the writer sees `ACTIVE != 0` and waits until the handler's `leave`,
//! whose release pairs with the writer's acquire so that everything the
//! handler did happens before the free. (Fences rather than SeqCst accesses
//! because loom models SeqCst fences exactly but treats SeqCst accesses as
//! merely AcqRel. The cost is one `mfence` on the writer's side, noise next
//! to the `munmap` it precedes; the handler runs only on a fault.)

use super::sync::{fence, spin, AtomicUsize, Ordering};

pub(super) struct Handshake {
    /// Handlers between `enter` and `leave` now.
    pub(super) active: AtomicUsize,
}

impl Handshake {
    #[allow(dead_code)] // the real one is a static built from its field
    pub(super) fn new() -> Handshake {
        Handshake {
            active: AtomicUsize::new(0),
        }
    }

    /// The handler is about to read shared state: count it, then a SeqCst
    /// fence so that every load after this sees any unlink whose writer did
    /// not see this count (see the module docs).
    #[inline(always)]
    pub(super) fn enter(&self) {
        self.active.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
    }

    /// The handler is done with shared state. Release: what it did happens
    /// before a writer's `quiesce` that sees the count drop.
    #[inline(always)]
    pub(super) fn leave(&self) {
        self.active.fetch_sub(1, Ordering::Release);
    }

    /// Called by a writer after unlinking something and before freeing it:
    /// returns once no handler can still be looking at it. Handlers that
    /// enter after the fence cannot find what was unlinked, so this waits
    /// only for the ones already inside, which take microseconds.
    pub(super) fn quiesce(&self) {
        fence(Ordering::SeqCst);
        while self.active.load(Ordering::Acquire) != 0 {
            spin();
        }
    }
}
