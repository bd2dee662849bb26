//! Cancelling requests in flight on io_uring (terminals, inotify) gives
//! the request's buffer back: a cancel that the ring lost left the buffer
//! held for ever, so `into_inner` and `AsyncFile::close` hung.

use crate::support::pty;
use ferry::aio::{AsyncFile, Backend};
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

/// A read on a pty (which io_uring runs on an io-wq worker, blocking):
/// cancelling it interrupts the worker, whose read then ends with EINTR,
/// and the reaper (`uring.rs`, `libc::EINTR => None`) issues the read
/// again — the cancel is lost, the buffer never comes back.
#[test]
fn cancel_of_a_blocking_pty_read_on_io_uring_comes_back() {
    for b in [Backend::IoUring, Backend::Threads] {
        let (m, _s) = pty();
        let f = AsyncFile::from_fd(m, b).unwrap();
        let r = f.read(64).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        r.cancel();
        match r.try_into_inner(Some(Duration::from_secs(3))) {
            Ok(_) => {}
            Err(_) => panic!("{b:?}: a cancelled pty read still holds its buffer after 3 s"),
        }
    }
}

/// The same read, then `close()`: it cancels the read and waits for the
/// kernel to let go. With the cancel lost it waits for ever.
#[test]
fn close_with_a_pty_read_in_flight_returns() {
    for b in [Backend::IoUring, Backend::Threads] {
        let (m, _s) = pty();
        let f = AsyncFile::from_fd(m, b).unwrap();
        let r = f.read(64).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f.close().is_ok());
        });
        assert!(
            rx.recv_timeout(Duration::from_secs(3)).is_ok(),
            "{b:?}: close() with a pty read in flight hangs"
        );
        drop(r);
    }
}

/// An inotify descriptor (no `read_iter`, no FMODE_NOWAIT: io_uring runs
/// its read on an io-wq worker, blocking). A cancel interrupts the
/// worker; the interrupted read ends with EINTR and `uring.rs`'s reaper
/// (`libc::EINTR => None`) submits it again: the cancel is lost and the
/// buffer is held until some event arrives, maybe never.
#[test]
fn cancel_of_a_blocking_inotify_read_comes_back() {
    for b in [Backend::IoUring, Backend::Threads] {
        // SAFETY: a fresh descriptor we own.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(fd >= 0);
        // SAFETY: just returned, owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let f = AsyncFile::from_fd(fd, b).unwrap();
        let r = f.read(4096).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        r.cancel();
        if r.try_into_inner(Some(Duration::from_secs(3))).is_err() {
            panic!("{b:?}: a cancelled inotify read still holds its buffer after 3 s");
        }
    }
}
