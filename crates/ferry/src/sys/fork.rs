//! Which process this is, as far as `fork` goes: a number every forked
//! child (through `fork(2)` and its `pthread_atfork` handlers) starts
//! with one more than its parent had. Things shared with another process
//! by the one that made them (an ipc channel's socket and rings) compare
//! it with the number they were made under, so that a forked child leaves
//! them alone. A child made by a raw `clone` that skips the fork handlers
//! is not seen.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

static GENERATION: AtomicU64 = AtomicU64::new(0);

extern "C" fn child() {
    // Async-signal-safe: one atomic add.
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// This process's fork generation (0 in a process that was not forked
/// since the first call, in this image).
pub(crate) fn generation() -> u64 {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: a plain function that lives for the whole program; no
        // prepare or parent handler.
        unsafe { libc::pthread_atfork(None, None, Some(child)) };
    });
    GENERATION.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forked_child_sees_a_new_generation() {
        let before = generation();
        // SAFETY: the child only reads an atomic and calls `_exit`, both
        // async-signal-safe.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = if generation() == before + 1 { 0 } else { 1 };
            // SAFETY: ends the child without running the parent's exit code.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waits for the child just made.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
        assert_eq!(generation(), before);
    }
}
