//! The SIGBUS actions ferry's handler displaced, and how a signal that is not
//! ferry's is passed down to them.
//!
//! ferry installs its handler on the first registration, and installs it
//! again at any later registration that finds another handler in its place
//! (an application that set its own SIGBUS handler after ferry did). Each
//! time, the action it displaces is pushed here. A SIGBUS that is not a
//! shrunk ferry mapping goes to the newest displaced action; if that is a
//! handler that chains to *its* previous action — ferry's handler again —
//! ferry recognises the nested call and goes one step further down, to the
//! action it displaced before that, and so on until the bottom, which is
//! what was there before ferry (the default action, `SIG_IGN`, or Rust's
//! own stack-overflow handler). Without that, a chaining handler and ferry
//! would call each other until the stack ran out.
//!
//! A nested call is recognised per thread: the outermost call records its
//! stack position and signal; a call *deeper on the stack* for the same
//! signal is nested. A handler that leaves by `siglongjmp` leaves a stale
//! record, but the next signal's frame is no deeper than the old one was
//! (or is a different signal), so it is not mistaken for a nested call.

use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How many displacements are remembered. Past that, ferry stops
/// re-installing itself: an application that keeps replacing the SIGBUS
/// handler wins, and ferry's mappings are guarded only as far as its
/// handler chains to ferry's.
const MAX: usize = 16;

struct Displaced {
    acts: [UnsafeCell<MaybeUninit<libc::sigaction>>; MAX],
    /// Entries `..len` are written and never change again.
    len: AtomicUsize,
}

// SAFETY: an entry is written once, by `push` under the caller's install
// lock, before `len` is raised past it (release); readers read only entries
// below the `len` they acquired.
unsafe impl Sync for Displaced {}

static DISPLACED: Displaced = Displaced {
    acts: [const { UnsafeCell::new(MaybeUninit::uninit()) }; MAX],
    len: AtomicUsize::new(0),
};

/// Records an action ferry is about to displace. The caller holds the
/// install lock. False if the list is full (then ferry must not install
/// itself over `act`).
pub(super) fn push(act: &libc::sigaction) -> bool {
    let n = DISPLACED.len.load(Ordering::Relaxed);
    if n == MAX {
        return false;
    }
    // SAFETY: entry `n` is not yet visible to readers (`len == n`) and only
    // the lock holder writes.
    unsafe { (*DISPLACED.acts[n].get()).write(*act) };
    DISPLACED.len.store(n + 1, Ordering::Release);
    true
}

/// The action displaced `depth` steps below the newest one; `None` below
/// the bottom (behave as the default action then).
pub(super) fn displaced(depth: usize) -> Option<libc::sigaction> {
    let n = DISPLACED.len.load(Ordering::Acquire);
    let i = n.checked_sub(depth + 1)?;
    // SAFETY: `i < n`: written before `len` reached `n`, never written again.
    Some(unsafe { (*DISPLACED.acts[i].get()).assume_init_read() })
}

/// What the outermost call of ferry's handler on this thread is doing.
#[derive(Clone, Copy)]
pub(super) struct Nest {
    /// Address of a local of the outermost call (its stack position).
    sp: usize,
    /// Displaced actions already called below it.
    depth: usize,
    info: usize,
    code: i32,
    addr: usize,
}

const IDLE: Nest = Nest {
    sp: 0,
    depth: 0,
    info: 0,
    code: 0,
    addr: 0,
};

thread_local! {
    // `const` and `Copy`: a plain thread-local slot, no lazy set-up or
    // destructor, so reading and writing it in a signal handler is safe.
    static NEST: Cell<Nest> = const { Cell::new(IDLE) };
}

/// One call of ferry's handler: where it is on the stack and which signal.
pub(super) struct Call {
    pub(super) sp: usize,
    pub(super) info: usize,
    pub(super) code: i32,
    pub(super) addr: usize,
}

impl Call {
    /// How many displaced actions are already running below this call: 0
    /// for a fresh signal, more when a displaced handler chained back here.
    pub(super) fn depth(&self) -> usize {
        let n = NEST.get();
        let same_signal = n.info == self.info || (n.code == self.code && n.addr == self.addr);
        if n.depth > 0 && self.sp < n.sp && same_signal {
            n.depth
        } else {
            0
        }
    }

    /// Runs `f` (which calls the displaced action at `depth`) with this
    /// thread marked as being inside it, so that a chained call back into
    /// ferry's handler goes one step further down.
    pub(super) fn nested(&self, depth: usize, f: impl FnOnce()) {
        let before = NEST.get();
        let sp = if depth == 0 { self.sp } else { before.sp };
        NEST.set(Nest {
            sp,
            depth: depth + 1,
            info: self.info,
            code: self.code,
            addr: self.addr,
        });
        f();
        NEST.set(if depth == 0 { IDLE } else { before });
    }
}
