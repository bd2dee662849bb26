//! An AsyncFile on io_uring made before fork() and used in the child: the
//! child's request is refused or completes, and the parent's requests are
//! not taken for the child's.
//!
//! The bug this caught: the module docs say the ring is refused in a child
//! after fork, but that check was in `sys::uring::ring()`, which only a new
//! AsyncFile calls: a file made before the fork holds `&'static Ring` and
//! submitted into the ring the child shares with its parent. The child's
//! completion was read by the *parent's* reaper, which looked its user
//! data up in the parent's table — where the same id (both counters went
//! on from the same value) is a different operation.
//!
//! The test runs in a child process of the test binary, alone: the ids
//! must be known, and no other test's thread may be inside ferry when it
//! forks.

use crate::support::wait_child;
use ferry::aio::{AsyncFile, Backend};
use std::os::fd::OwnedFd;
use std::time::Duration;

/// Parent: after the fork, a read on a pipe nobody writes (id k). Child:
/// a read of a regular file on the pre-fork file (also id k). The
/// parent's pipe read must stay in flight; it is reported completed with
/// 4096 bytes — while the kernel's read into its buffer is still armed
/// on the pipe (the buffer the parent now owns and frees). And the
/// child's request never completes (no reaper in the child) instead of
/// failing at once.
#[test]
fn a_pre_fork_ring_file_used_in_the_child() {
    if crate::support::in_child(&test_name!(a_pre_fork_ring_file_used_in_the_child)) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, vec![0x5a; 4096]).unwrap();
    let file =
        AsyncFile::with_options(&p, std::fs::File::options().read(true), Backend::IoUring).unwrap();
    // Starts the ring and its reaper; uses id 1.
    assert!(file
        .read_at(0, 4096)
        .unwrap()
        .wait(Some(Duration::from_secs(5)))
        .unwrap());
    let (pr, mut pw) = std::io::pipe().unwrap();
    let pipe = AsyncFile::from_fd(OwnedFd::from(pr), Backend::IoUring).unwrap();

    // SAFETY: the child only calls into ferry and _exit; this process (a
    // child of the test binary) runs this single test and no other thread
    // of its own.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        std::thread::sleep(Duration::from_millis(300));
        let code = match file.read_at(0, 4096) {
            Err(_) => 0, // refused: what the docs promise
            Ok(r) => match r.wait(Some(Duration::from_secs(1))) {
                Ok(true) => 0,
                _ => 3, // started, never completes in the child
            },
        };
        // SAFETY: leaves the child at once.
        unsafe { libc::_exit(code) };
    }
    let r = pipe.read(4096).unwrap();
    let child = wait_child(pid, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(200));
    let state = r.state();
    let bytes = r.bytes();
    let done = r.done();
    if matches!(done, Ok(true)) {
        // The buffer is handed back as finished; the kernel's read into it
        // is still armed on the pipe. Feed the pipe and watch memory the
        // caller owns change under it.
        let b = r.into_inner();
        let before = b.to_vec();
        std::io::Write::write_all(&mut pw, &[b'X'; 4096]).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let changed = b[..] != before[..];
        panic!(
            "the parent's pipe read (nothing written) is over: {state:?}, {bytes:?} bytes — the child's \
             completion was taken for it; after into_inner the kernel still wrote the buffer: {changed}"
        );
    }
    let _ = std::io::Write::write_all(&mut pw, &[1u8; 4096]);
    assert_eq!(
        child,
        Some(0),
        "the child's request on the pre-fork file neither failed nor completed"
    );
}
