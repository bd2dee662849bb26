//! `AsyncFile::close` has closed the descriptor when it returns, and
//! returns close's error.
//!
//! The bug this caught: `AsyncFile::close` "waits until the kernel is done
//! with every request of the file, then closes the descriptor" and returns
//! close's error. It waits for each request's buffer to come back (`held`
//! false), but the backend drops its own `Arc<OwnedFd>` (in the operation)
//! only *after* handing the buffer back (threads.rs: `job.op` lives to the
//! end of the loop body after `complete`; uring.rs: `op` is dropped after
//! `finish`). When close's `Arc::try_unwrap` lost that race it returned
//! Ok(()) without closing: the descriptor was closed later by the worker,
//! and an error from that close was lost.

use ferry::aio::{AsyncFile, Backend};
use ferry::Buf;
use std::os::fd::{AsFd, AsRawFd};

/// Many closes with a write in flight; after each, the descriptor's
/// number must be closed (fcntl F_GETFD fails with EBADF).
#[test]
fn the_descriptor_is_closed_when_close_returns() {
    let dir = tempfile::tempdir().unwrap();
    let mut bad = Vec::new();
    for b in [Backend::IoUring, Backend::Threads] {
        let mut open_after = 0;
        for i in 0..2000 {
            let f = AsyncFile::with_options(
                dir.path().join(format!("f{}", i % 4)),
                std::fs::File::options().write(true).create(true),
                b,
            )
            .unwrap();
            let raw = f.as_fd().as_raw_fd();
            let w = f.write_at(0, Buf::from_static(b"x")).unwrap();
            f.close().unwrap();
            // SAFETY: F_GETFD on a number: no effect on any descriptor.
            if unsafe { libc::fcntl(raw, libc::F_GETFD) } >= 0 {
                open_after += 1;
                // Let the late close happen before the next round.
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            drop(w);
        }
        if open_after > 0 {
            bad.push(format!("{b:?}: {open_after} of 2000"));
        }
    }
    assert!(
        bad.is_empty(),
        "the descriptor was still open after close() returned: {bad:?}"
    );
}
