//! Signals interrupting blocked reads and writes (EINTR) are retried. The
//! test runs in a child process of the test binary: the handler it
//! installs is the whole process's.

use ferry::Stream;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

static HITS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn on_usr1(_: libc::c_int) {
    HITS.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn interrupted_pipe_reads_and_writes_are_retried() {
    if crate::support::in_child(&test_name!(interrupted_pipe_reads_and_writes_are_retried)) {
        return;
    }
    // A handler without SA_RESTART: blocked read/write return EINTR.
    // SAFETY: a valid handler that only touches an atomic.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = on_usr1 as *const () as usize;
        sa.sa_flags = 0;
        libc::sigemptyset(&mut sa.sa_mask);
        assert_eq!(libc::sigaction(libc::SIGUSR1, &sa, std::ptr::null_mut()), 0);
    }
    let (r, w) = std::io::pipe().unwrap();
    let reader = Stream::from_fd(r.into()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    let t = {
        let done = done.clone();
        std::thread::spawn(move || {
            // SAFETY: pthread_self has no preconditions.
            tx.send(unsafe { libc::pthread_self() }).unwrap();
            let mut got = Vec::new();
            let mut s = reader;
            s.read_to_end(&mut got).unwrap();
            done.store(true, Ordering::SeqCst);
            got
        })
    };
    let tid = rx.recv().unwrap();
    let want: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
    let writer = {
        let want = want.clone();
        std::thread::spawn(move || {
            let mut s = Stream::from_fd(w.into()).unwrap();
            for chunk in want.chunks(7000) {
                s.write_all(chunk).unwrap();
                s.flush().unwrap();
                std::thread::sleep(Duration::from_millis(1));
            }
            s.close().unwrap();
        })
    };
    while !done.load(Ordering::SeqCst) {
        // SAFETY: the thread is alive until `done`.
        unsafe { libc::pthread_kill(tid, libc::SIGUSR1) };
        std::thread::sleep(Duration::from_micros(300));
    }
    writer.join().unwrap();
    let got = t.join().unwrap();
    assert!(got == want, "bytes lost or reordered across EINTR");
    assert!(
        HITS.load(Ordering::Relaxed) > 10,
        "the signal never arrived"
    );
}
