//! Both ends of a channel in a child forked from the process that made
//! them: the child's copies are the parent's channel, so what the child
//! drops (a received `Buf`, the receiver, the sender) and what it tries
//! to send or receive leaves the parent's channel as it was.

use super::*;

/// Forks; the child runs `f` and leaves with its status (0 when `f`
/// returns true); returns whether the child said true.
fn in_child(f: impl FnOnce() -> bool) -> bool {
    // SAFETY: the child runs only `f` (drops and calls into this test's
    // own objects, whose locks no other thread holds) and `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(false);
        // SAFETY: ends the child without the parent's exit handlers.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just made.
    assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
    libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
}

on_both_transports! {
    fn a_forked_child_leaves_the_parents_channel_as_it_was(t: Transport) {
        let _one = serial();
        let (mut tx, mut rx) = channel(4096, 4, t);
        tx.send_bytes(&[7u8; 4096]).unwrap();
        let held = rx.recv().unwrap().unwrap();
        let free = tx.free_slots().unwrap();
        let child_ok = in_child(|| {
            // Everything the child does to its copies fails or does
            // nothing; then it drops them all.
            let sent = tx.send_bytes(b"from the child").is_err();
            let got = rx.recv().is_err();
            // SAFETY: the child owns its copies of the three (the fork
            // copied them); it drops each once and `_exit`s without
            // dropping the originals.
            unsafe {
                drop(std::ptr::read(&held));
                drop(std::ptr::read(&rx));
                drop(std::ptr::read(&tx));
            }
            sent && got
        });
        assert!(child_ok, "the child could use the parent's channel");
        // The slot the parent holds is still the parent's: not released
        // by the child's drop of its copy.
        assert_eq!(tx.free_slots().unwrap(), free);
        // The channel goes on: no BYE, no shutdown from the child.
        tx.send_bytes(b"after the fork").unwrap();
        assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), b"after the fork");
        assert_eq!(held.copy_to_vec(), vec![7u8; 4096]);
    }
}

/// A forked child, waiting for its parent's word on a pipe before it runs
/// `check`; the parent goes on meanwhile.
struct Waiting {
    pid: libc::pid_t,
    go: std::os::fd::OwnedFd,
}

/// Forks a child that waits for [`Waiting::go`], then runs `check` and
/// leaves with status 0 if it returned true. `check` is dropped in the
/// parent before this returns, so what it borrows is the parent's again.
fn child_waiting(check: impl FnOnce() -> bool) -> Waiting {
    let (r, w) = rustix::pipe::pipe().unwrap();
    // SAFETY: the child only reads the pipe, runs `check` (reads of this
    // test's own objects, whose locks no other thread holds) and `_exit`s.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork: {}", std::io::Error::last_os_error());
    if pid == 0 {
        // Without its own copy of the writing end, the child sees the end
        // of the pipe if the parent dies before its word.
        drop(w);
        let mut b = [0u8; 1];
        let ok = rustix::io::read(&r, &mut b).is_ok_and(|n| n == 1)
            && std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)).unwrap_or(false);
        // SAFETY: ends the child without the parent's exit handlers.
        unsafe { libc::_exit(if ok { 0 } else { 1 }) };
    }
    drop(check);
    drop(r);
    Waiting { pid, go: w }
}

impl Waiting {
    /// Tells the child to check, and whether it found what it expected
    /// (a child that takes over 30 s is killed and counts as false).
    fn go(self) -> bool {
        let _ = rustix::io::write(&self.go, b"!");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let mut status = 0;
            // SAFETY: polls the child made by `child_waiting`.
            let r = unsafe { libc::waitpid(self.pid, &mut status, libc::WNOHANG) };
            if r == self.pid {
                return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
            }
            if std::time::Instant::now() > deadline {
                // SAFETY: the child is ours and has not been reaped.
                unsafe {
                    libc::kill(self.pid, libc::SIGKILL);
                    libc::waitpid(self.pid, &mut status, 0);
                }
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

on_both_transports! {
    fn a_buf_a_child_holds_keeps_its_bytes_when_the_parent_reuses_the_slot(t: Transport) {
        let _one = serial();
        // One slot: the parent's next message must reuse it.
        let (mut tx, mut rx) = channel(4096, 1, t);
        tx.send_bytes(&[7u8; 4096]).unwrap();
        let held = rx.recv().unwrap().unwrap();
        let child = child_waiting(|| held.copy_to_vec() == vec![7u8; 4096]);
        // The parent lets go of its copy: the slot is free for the next
        // message, which the sender writes in place.
        drop(held);
        tx.send_bytes(&[9u8; 4096]).unwrap();
        let next = rx.recv().unwrap().unwrap();
        assert_eq!(next.copy_to_vec(), vec![9u8; 4096]);
        // The child's Buf is its private copy as of the fork.
        assert!(child.go(), "the child's Buf changed under it");
    }
}

on_both_transports! {
    fn a_buf_the_child_holds_keeps_its_bytes_while_another_thread_frees_its_slot(t: Transport) {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::{Arc, Mutex};
        let _one = serial();
        for round in 0..40 {
            // One slot: the other thread's next message must reuse it.
            let (mut tx, mut rx) = channel(4096, 1, t);
            tx.send_bytes(&[7u8; 4096]).unwrap();
            let cell = Arc::new(Mutex::new(rx.recv().unwrap()));
            let go = Arc::new(AtomicBool::new(false));
            // Another thread lets go of the only Buf of the slot as the
            // fork begins, and its sender rewrites the slot at once.
            let other = {
                let (cell, go) = (cell.clone(), go.clone());
                std::thread::spawn(move || {
                    while !go.load(Ordering::Acquire) {
                        std::hint::spin_loop();
                    }
                    drop(cell.lock().unwrap().take());
                    tx.send_bytes(&[9u8; 4096]).unwrap();
                    rx.recv().unwrap().unwrap().copy_to_vec() == vec![9u8; 4096]
                })
            };
            go.store(true, Ordering::Release);
            // In the child: the Buf, if it was there at the fork, has the
            // bytes it had then.
            let child = child_waiting(|| match cell.try_lock() {
                Ok(b) => b.as_ref().is_none_or(|b| b.copy_to_vec() == vec![7u8; 4096]),
                // Taken by the other thread at the fork: nothing to look at.
                Err(_) => true,
            });
            assert!(other.join().unwrap());
            assert!(child.go(), "round {round}: the child's Buf changed under it");
        }
    }
}
