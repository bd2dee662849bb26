//! A mapped file that shrinks must never crash the process.
//!
//! When another process truncates a file that ferry has mapped, touching a
//! page past the new end raises SIGBUS. ferry's handler looks the faulting
//! address up in a table of its own mappings: if it is one of them, it puts
//! zero-filled anonymous memory under the rest of that mapping (so the
//! instruction retries and reads zeros), marks the mapping faulted (the
//! stream reports `UnexpectedEof` on its next call), and returns. Any other
//! SIGBUS goes to the handler that was installed before ferry's (Rust's
//! own stack-overflow handler, or the default action, which ends the
//! process as it would have without ferry).
//!
//! The table is fixed-size and lock-free so that the handler can read it:
//! an entry is claimed by a compare-and-swap on its `end`, published by
//! storing its `start`, and retired by clearing `start` and then waiting
//! until no handler is running before the memory is unmapped.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Once;

const SLOTS: usize = 8192;

struct Entry {
    start: AtomicUsize,
    end: AtomicUsize,
    faulted: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const EMPTY: Entry = Entry {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    faulted: AtomicBool::new(false),
};

static TABLE: [Entry; SLOTS] = [EMPTY; SLOTS];
/// Where to start looking for a free entry.
static HINT: AtomicUsize = AtomicUsize::new(0);
/// Handlers running now.
static ACTIVE: AtomicUsize = AtomicUsize::new(0);
/// Faults handled so far (streams compare it to notice one cheaply).
static FAULTS: AtomicU64 = AtomicU64::new(0);
static INSTALL: Once = Once::new();
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The SIGBUS action in place before ours; written once, before our handler
/// is installed, and only read after.
static mut PREVIOUS: MaybeUninit<libc::sigaction> = MaybeUninit::uninit();

/// A mapping registered with the guard; unregister before unmapping.
#[derive(Debug)]
pub(crate) struct Registration {
    idx: usize,
}

/// How many faults the guard has handled in this process.
#[inline(always)]
pub(crate) fn fault_count() -> u64 {
    FAULTS.load(Ordering::Acquire)
}

fn install() {
    INSTALL.call_once(|| {
        // SAFETY: sigaction with valid pointers; PREVIOUS is written here
        // once, before the handler that reads it can run.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_sigbus as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut sa.sa_mask);
            let prev = (&raw mut PREVIOUS).cast::<libc::sigaction>();
            if libc::sigaction(libc::SIGBUS, &sa, prev) == 0 {
                INSTALLED.store(true, Ordering::Release);
            }
        }
    });
}

/// Registers `[start, start + len)` as a ferry mapping. None if the guard
/// could not be installed or the table is full: the caller must not map
/// the file then.
pub(crate) fn register(start: usize, len: usize) -> Option<Registration> {
    install();
    if !INSTALLED.load(Ordering::Acquire) || len == 0 {
        return None;
    }
    let end = start.checked_add(len)?;
    let first = HINT.load(Ordering::Relaxed);
    for k in 0..SLOTS {
        let idx = (first + k) % SLOTS;
        let e = &TABLE[idx];
        if e.end.load(Ordering::Relaxed) == 0
            && e.end
                .compare_exchange(0, end, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            e.faulted.store(false, Ordering::Relaxed);
            e.start.store(start, Ordering::Release);
            HINT.store(idx + 1, Ordering::Relaxed);
            return Some(Registration { idx });
        }
    }
    None
}

impl Registration {
    /// True if a fault in this mapping was handled (the file shrank).
    pub(crate) fn faulted(&self) -> bool {
        TABLE[self.idx].faulted.load(Ordering::Acquire)
    }

    /// Takes the mapping out of the table and waits until no handler can be
    /// looking at it; after this it may be unmapped.
    pub(crate) fn unregister(self) {
        let e = &TABLE[self.idx];
        e.start.store(0, Ordering::Release);
        while ACTIVE.load(Ordering::Acquire) != 0 {
            std::hint::spin_loop();
        }
        e.end.store(0, Ordering::Release);
    }
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    ACTIVE.fetch_add(1, Ordering::AcqRel);
    // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = crate::sys::page_size();
    for e in TABLE.iter() {
        let start = e.start.load(Ordering::Acquire);
        if start == 0 || addr < start {
            continue;
        }
        let end = e.end.load(Ordering::Acquire);
        if addr >= end {
            continue;
        }
        // Ours: zero-filled memory under the rest of the mapping.
        let from = addr & !(page - 1);
        let len = (end - from).next_multiple_of(page);
        // SAFETY: [from, from+len) lies inside a mapping ferry made and still
        // owns (it is registered, and unregistering waits for us); replacing
        // its pages with anonymous ones is async-signal-safe (one syscall).
        let r = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if r != libc::MAP_FAILED {
            e.faulted.store(true, Ordering::Release);
            FAULTS.fetch_add(1, Ordering::AcqRel);
            ACTIVE.fetch_sub(1, Ordering::AcqRel);
            return;
        }
        break;
    }
    ACTIVE.fetch_sub(1, Ordering::AcqRel);
    // Not ours: do what would have happened without us.
    // SAFETY: PREVIOUS was written before this handler was installed.
    unsafe {
        let prev = (&raw const PREVIOUS).cast::<libc::sigaction>().read();
        let h = prev.sa_sigaction;
        if h == libc::SIG_DFL || h == libc::SIG_IGN {
            // Restore the default and return: the access faults again and
            // the default action ends the process, as without ferry.
            let mut dfl: libc::sigaction = std::mem::zeroed();
            dfl.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut dfl.sa_mask);
            libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        } else if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, ctx);
        } else {
            let f: extern "C" fn(libc::c_int) = std::mem::transmute(h);
            f(sig);
        }
    }
}
