//! The worker-thread pool after fork(): a child's request on the thread
//! pool — including `Backend::Auto`, which the child falls back to because
//! the ring refuses it after fork — runs, or fails at once.
//!
//! The bug this caught: the pool (a `OnceLock` in threads.rs) is copied
//! into the child already set, but its worker threads are the parent's
//! and do not exist there: the child's request was queued and never run.
//!
//! The test runs in a child process of the test binary,
//! alone: no other test's thread may be inside ferry (holding a lock the
//! forked child would find taken) when it forks.

use crate::support::wait_child;
use ferry::aio::{AsyncFile, Backend};
use std::time::Duration;

/// Parent uses both backends, forks; the child opens a new file with
/// `Backend::Auto` (docs: io_uring is refused in a child, so threads) and
/// with `Backend::Threads`, and reads 4 KiB: each must complete (exit 0)
/// or fail at start — not wait for ever (exit 3, 4).
#[test]
fn a_child_after_fork_can_use_the_thread_pool() {
    if crate::support::in_child(&test_name!(a_child_after_fork_can_use_the_thread_pool)) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, vec![1u8; 4096]).unwrap();
    for b in [Backend::IoUring, Backend::Threads] {
        let f = AsyncFile::with_options(&p, std::fs::File::options().read(true), b).unwrap();
        assert!(f
            .read_at(0, 4096)
            .unwrap()
            .wait(Some(Duration::from_secs(5)))
            .unwrap());
    }
    // SAFETY: the child calls into ferry, then _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let mut code = 0;
        for (b, fail) in [(Backend::Auto, 3), (Backend::Threads, 4)] {
            let ok = match AsyncFile::with_options(&p, std::fs::File::options().read(true), b) {
                Err(_) => true,
                Ok(f) => match f.read_at(0, 4096) {
                    Err(_) => true,
                    Ok(r) => matches!(r.wait(Some(Duration::from_secs(2))), Ok(true)),
                },
            };
            if !ok {
                code = code * 10 + fail;
            }
        }
        // SAFETY: leaves the child at once.
        unsafe { libc::_exit(code) };
    }
    let st = wait_child(pid, Duration::from_secs(15));
    assert_eq!(
        st,
        Some(0),
        "in the child after fork, requests on the thread pool never ran (3: Auto, 4: Threads)"
    );
}
