//! A mapped file that shrinks must never crash the process.
//!
//! When another process truncates a file that ferry has mapped, touching a
//! page past the new end raises SIGBUS (`BUS_ADRERR`). ferry's handler looks
//! the faulting address up in an index of its own mappings: if it is one of
//! them, it puts zero-filled anonymous memory under the rest of that mapping
//! (so the instruction retries and reads zeros), marks the mapping faulted
//! (the stream reports `UnexpectedEof` on its next call), and returns. Any
//! other SIGBUS — another address, a hardware memory error, a misaligned
//! access, one someone sent — goes unchanged to the action that was in place
//! before ferry's (Rust's stack-overflow handler, the application's, or the
//! default action, which ends the process as it would have without ferry).
//!
//! The parts:
//! - `index.rs`: the hash index of mappings the handler searches, with no
//!   limit on how many there are and no scan of all of them per fault;
//! - `handshake.rs`: the counter and SeqCst fences that let unregistering
//!   (before `munmap`) wait for a handler that may still use a mapping;
//! - `handler.rs`: the handler, and what it does with signals not ours;
//! - `chain.rs`: the actions ferry displaced, and how it reaches them;
//! - `loom.rs`: model checks of the handshake and the index (`--cfg loom`).
//!
//! # An application's own SIGBUS handler
//!
//! An application may install a SIGBUS handler after ferry has. Every
//! registration (every mapping ferry makes) asks the kernel which handler is
//! in place (one `sigaction` query) and, if it is not ferry's, installs
//! ferry's again in front of it: the application's handler still gets every
//! SIGBUS that is not a shrunk ferry mapping, and may chain to its own
//! previous action (ferry's) without looping. Mappings made *before* the
//! application's handler and touched before ferry's next mapping are guarded
//! only if the application's handler chains to the action it replaced, as
//! a well-behaved handler does.

mod chain;
mod handler;
mod handshake;
mod index;
#[cfg(all(test, loom))]
mod loom;
mod sync;

use handshake::Handshake;
use index::{Index, Writer};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// One registered mapping, as the handler sees it.
struct Entry {
    start: usize,
    end: usize,
    faulted: AtomicBool,
    /// In the index (changed only with `WRITER` held).
    filed: AtomicBool,
}

/// The mappings, searched by the handler.
static INDEX: Index = Index {
    table: AtomicPtr::new(std::ptr::null_mut()),
    classes: AtomicU64::new(0),
};
/// Serialises register and unregister (never taken by the handler).
static WRITER: Mutex<Writer> = Mutex::new(Writer::new());
/// Handlers reading `INDEX` now.
static HANDSHAKE: Handshake = Handshake {
    active: AtomicUsize::new(0),
};
/// Faults handled so far, and leased mappings lost without one
/// ([`count_loss`]): streams compare it to notice either cheaply.
static FAULTS: AtomicU64 = AtomicU64::new(0);
/// The page size, cached before the handler is first installed so that the
/// handler needs no call to find it.
static PAGE: AtomicUsize = AtomicUsize::new(0);
/// Serialises installing the handler.
static INSTALL: Mutex<()> = Mutex::new(());
/// ferry's handler has been installed at least once.
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// A mapping registered with the guard; unregister before unmapping.
#[derive(Debug)]
pub(crate) struct Registration {
    entry: NonNull<Entry>,
}

// SAFETY: the entry is only read through shared references (its mutable
// part is atomic) and freed by `unregister`, which takes the registration.
unsafe impl Send for Registration {}
// SAFETY: see above.
unsafe impl Sync for Registration {}

/// How many faults the guard has handled in this process, plus the
/// mappings [`count_loss`] reported.
#[inline(always)]
pub(crate) fn fault_count() -> u64 {
    FAULTS.load(Ordering::Acquire)
}

/// A mapping lost pages without a fault (zeros put in its place by ferry
/// itself): counted with the faults, so that a stream that compares
/// [`fault_count`] looks at its windows again. Async-signal-safe (one
/// atomic add).
pub(crate) fn count_loss() {
    FAULTS.fetch_add(1, Ordering::AcqRel);
}

fn ours() -> usize {
    handler::on_sigbus as *const () as usize
}

/// The SIGBUS action in place now.
fn current_action() -> Option<libc::sigaction> {
    // SAFETY: a null new action only queries; `cur` is a valid out pointer.
    unsafe {
        let mut cur: libc::sigaction = std::mem::zeroed();
        (libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut cur) == 0).then_some(cur)
    }
}

/// Makes sure ferry's handler is the one installed: installs it the first
/// time, and again in front of any handler installed since (remembering the
/// one it displaces, see `chain.rs`). False if it was never installed.
fn ensure_installed() -> bool {
    let Some(cur) = current_action() else {
        return false;
    };
    if cur.sa_sigaction == ours() {
        return true;
    }
    let _lock = INSTALL.lock().unwrap_or_else(PoisonError::into_inner);
    let Some(cur) = current_action() else {
        return false;
    };
    if cur.sa_sigaction == ours() {
        return true;
    }
    // Before the handler can run: it must not ask the kernel (or libc,
    // whose `sysconf` need not be async-signal-safe) for the page size.
    PAGE.store(crate::sys::page_size(), Ordering::Relaxed);
    if !chain::push(&cur) {
        // Displaced too often: leave the application's handler in place
        // (ferry's still runs if it chains to the action it replaced).
        return INSTALLED.load(Ordering::Relaxed);
    }
    // SAFETY: sigaction with valid pointers; the handler only reads state
    // that is initialised (statics, and `cur` pushed above).
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = ours();
        sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut sa.sa_mask);
        let mut prev: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(libc::SIGBUS, &sa, &mut prev) != 0 {
            return INSTALLED.load(Ordering::Relaxed);
        }
        INSTALLED.store(true, Ordering::Relaxed);
        // Someone installed another handler between our query and ours:
        // that one is what we displaced, so it comes first.
        if prev.sa_sigaction != cur.sa_sigaction {
            chain::push(&prev);
        }
    }
    true
}

/// Registers `[start, start + len)` as a ferry mapping. None if the guard
/// could not be installed: the caller must not map the file then.
///
/// Cost: one `sigaction` query, a lock, a small allocation and an index
/// insert — small beside the `mmap` and `munmap` around it.
pub(crate) fn register(start: usize, len: usize) -> Option<Registration> {
    if len == 0 {
        return None;
    }
    let end = start.checked_add(len)?;
    if !ensure_installed() {
        return None;
    }
    let entry = NonNull::from(Box::leak(Box::new(Entry {
        start,
        end,
        faulted: AtomicBool::new(false),
        filed: AtomicBool::new(true),
    })));
    let mut w = WRITER.lock().unwrap_or_else(PoisonError::into_inner);
    INDEX.insert(&mut w, &HANDSHAKE, start, end, entry.as_ptr() as usize);
    Some(Registration { entry })
}

impl Registration {
    fn entry(&self) -> &Entry {
        // SAFETY: the entry lives until `unregister`, which consumes self.
        unsafe { self.entry.as_ref() }
    }

    /// True if a fault in this mapping was handled (the file shrank).
    pub(crate) fn faulted(&self) -> bool {
        self.entry().faulted.load(Ordering::Acquire)
    }

    /// Takes the mapping out of the index (the first time; later calls only
    /// wait for that one) and waits until no handler can be looking at it:
    /// after this the memory may be replaced or unmapped, and
    /// [`faulted`](Self::faulted) — still readable — no longer changes.
    pub(crate) fn withdraw(&self) {
        let (start, end) = (self.entry().start, self.entry().end);
        let mut w = WRITER.lock().unwrap_or_else(PoisonError::into_inner);
        if self.entry().filed.load(Ordering::Relaxed) {
            INDEX.remove(&mut w, &HANDSHAKE, start, end, self.entry.as_ptr() as usize);
            self.entry().filed.store(false, Ordering::Relaxed);
        }
    }

    /// [`withdraw`](Self::withdraw)s the mapping and lets the registration
    /// go; after this it may be unmapped.
    pub(crate) fn unregister(self) {
        self.withdraw();
        // SAFETY: from `Box::leak` in `register`; unfiled, and `remove`
        // waited until no handler still holds it.
        drop(unsafe { Box::from_raw(self.entry.as_ptr()) });
    }
}
