//! Many requests queued on a pipe whose deadlines pass while they wait (or
//! that are cancelled) all end, and nothing overflows a stack.
//!
//! The bug this caught (fixed: requests of a chain now start from a flat
//! loop, `in_turn`): under io_uring, a request launched with its deadline
//! already past is finished synchronously inside `Ring::start`
//! (`submit_op` → `finish`), whose completion callback launched the next
//! queued request (`next_in_chain`), which finished synchronously too...:
//! one stack frame chain per queued request, on the thread that completed
//! the first (the ring's reaper), which overflowed the reaper's stack.
//!
//! Each case runs in a child process of the test binary: a stack overflow
//! aborts the whole process.

use ferry::aio::{AsyncFile, Backend};
use std::io::Write;
use std::os::fd::OwnedFd;
use std::time::Duration;

fn queued_behind_a_blocked_read(b: Backend, n: usize, cancel: bool) {
    let (r, mut w) = std::io::pipe().unwrap();
    let f = AsyncFile::from_fd(OwnedFd::from(r), b).unwrap();
    let first = f.read(1).unwrap(); // no deadline: waits for the byte
    if !cancel {
        f.set_timeout(Some(Duration::from_millis(1)));
    }
    let reqs: Vec<_> = (0..n).map(|_| f.read(1).unwrap()).collect();
    std::thread::sleep(Duration::from_millis(50));
    if cancel {
        // The pre-existing path: every queued request cancelled; each
        // ends synchronously in `launch` and launches the next.
        f.cancel();
        let _ = first.wait(Some(Duration::from_secs(30)));
        for r in &reqs {
            let _ = r.wait(Some(Duration::from_secs(30)));
            assert!(r.state() != ferry::aio::State::InFlight);
        }
        return;
    }
    w.write_all(b"x").unwrap();
    assert!(first.wait(Some(Duration::from_secs(30))).unwrap());
    for (i, r) in reqs.iter().enumerate() {
        let e = r.wait(Some(Duration::from_secs(30))).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "#{i}");
    }
}

/// Run in a child process so that a crash is reported, not fatal. (Making
/// n requests is itself O(n²): `start` prunes the pending list each time.)
fn in_child(b: Backend, n: usize, cancel: bool) -> Result<(), String> {
    let exe = std::env::current_exe().unwrap();
    let o = std::process::Command::new(exe)
        .args([
            "--exact",
            &test_name!(child_entry),
            "--nocapture",
            "--include-ignored",
        ])
        .env("FERRY_AIO_CHAIN_CASE", format!("{b:?}:{n}:{cancel}"))
        .output()
        .unwrap();
    if o.status.success() {
        Ok(())
    } else {
        use std::os::unix::process::ExitStatusExt;
        Err(format!(
            "{b:?} with {n} queued requests (cancel: {cancel}): child {:?} (signal {:?}): {}",
            o.status.code(),
            o.status.signal(),
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .filter(|l| l.contains("overflow") || l.contains("panicked"))
                .collect::<Vec<_>>()
                .join(" | ")
        ))
    }
}

#[test]
#[ignore = "run by the tests below, in a child process"]
fn child_entry() {
    let Ok(v) = std::env::var("FERRY_AIO_CHAIN_CASE") else {
        return;
    };
    let mut it = v.split(':');
    let (b, n, cancel) = (
        it.next().unwrap(),
        it.next().unwrap(),
        it.next().unwrap() == "true",
    );
    let b = if b == "IoUring" {
        Backend::IoUring
    } else {
        Backend::Threads
    };
    queued_behind_a_blocked_read(b, n.parse().unwrap(), cancel);
}

#[test]
fn many_queued_requests_whose_deadlines_passed_threads() {
    in_child(Backend::Threads, 20_000, false).unwrap();
}

#[test]
fn many_queued_requests_whose_deadlines_passed_io_uring() {
    in_child(Backend::IoUring, 1_000, false).unwrap();
    in_child(Backend::IoUring, 20_000, false).unwrap();
}

/// The same recursion without deadlines: a cancel of a file with many
/// requests queued on a pipe (pre-existing; both backends).
#[test]
fn many_queued_requests_cancelled() {
    let mut failures = Vec::new();
    for b in [Backend::Threads, Backend::IoUring] {
        if let Err(e) = in_child(b, 20_000, true) {
            failures.push(e);
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
