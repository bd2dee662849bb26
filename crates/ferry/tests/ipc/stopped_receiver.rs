//! A receiver that stops (dropped while some of its `Buf`s live, or gone)
//! while the sender waits, sends or takes releases: every wait still ends
//! by its deadline, a release that races the receiver's end is no error,
//! a message published while the receiver stopped gives its slot back, and
//! a sender that keeps publishing cannot hold a receiver's drop.

use crate::rings::{memfd, send_with_fds, Control, ENTRIES, REL_CAP, TX_CAP, TX_HEAD, TX_TAIL};
use crate::{channel, serial, Transport};
use ferry::ipc::{self, Receiver};
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

/// Runs `f` in a thread: `Some(result)` if it ended within `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit).ok()
}

on_both_transports! {
/// The receiver is dropped while the application keeps a `Buf` of every
/// slot: `alloc` with a 300 ms timeout ends by its deadline. With rings it
/// once took the stopped receiver for a reason to look again at once,
/// and spun without end.
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn alloc_ends_by_its_deadline_when_the_receiver_stopped(transport: Transport) {
    let _g = serial();
    let (mut tx, mut rx) = channel(4096, 2, transport);
    tx.set_timeout(Some(Duration::from_millis(300)));
    tx.send_bytes(b"a").unwrap();
    tx.send_bytes(b"b").unwrap();
    let kept = (rx.recv().unwrap().unwrap(), rx.recv().unwrap().unwrap());
    drop(rx);
    let r = within(Duration::from_secs(5), move || tx.alloc().map(|_| ()).map_err(|e| e.kind()));
    let r = r.expect("alloc still waiting 5 s into a 300 ms timeout");
    assert_eq!(r, Err(io::ErrorKind::TimedOut));
    drop(kept);
}
}

/// A send waiting for releases (every reference the release ring can
/// give back is out) when the receiver is dropped ends at once with
/// `BrokenPipe`.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_send_waiting_for_releases_ends_when_the_receiver_stops() {
    let _g = serial();
    let (mut tx, mut rx) = channel(4096, 1, Transport::Ring);
    tx.set_timeout(Some(Duration::from_secs(30)));
    let b = tx.alloc().unwrap().freeze(4096);
    let mut held = Vec::new();
    loop {
        tx.set_timeout(Some(Duration::from_millis(50)));
        match tx.send(b.slice(5..6).into()) {
            Ok(()) => held.push(rx.recv().unwrap().unwrap()),
            Err(e) if e.kind() == io::ErrorKind::TimedOut => break,
            Err(e) => panic!("{e}"),
        }
    }
    tx.set_timeout(Some(Duration::from_secs(30)));
    let (done, wait) = mpsc::channel();
    let b2 = b.clone();
    std::thread::spawn(move || {
        let _ = done.send(tx.send(b2.slice(1..2).into()).map_err(|e| e.kind()));
    });
    std::thread::sleep(Duration::from_millis(100));
    drop(rx);
    let r = wait
        .recv_timeout(Duration::from_secs(5))
        .expect("send still waiting");
    assert_eq!(r, Err(io::ErrorKind::BrokenPipe));
    drop(held);
}

/// The receiver's last release goes onto the release ring just before its
/// socket closes; a sender that sees the end of file first once took the
/// release that followed for one of references it did not hold.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_release_racing_the_receivers_end_is_no_error() {
    let _g = serial();
    for trial in 0..1000 {
        let (mut tx, mut rx) = channel(4096, 4, Transport::Ring);
        tx.send_bytes(b"m").unwrap();
        let m = rx.recv().unwrap().unwrap();
        let go = Arc::new(AtomicBool::new(false));
        let go2 = go.clone();
        let t = std::thread::spawn(move || {
            while !go2.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
            drop(rx);
            drop(m);
        });
        go.store(true, Ordering::Relaxed);
        loop {
            match tx.free_slots() {
                Ok(4) => break,
                Ok(_) => {}
                Err(e) => panic!("trial {trial}: {e}"),
            }
        }
        t.join().unwrap();
        assert_eq!(tx.free_slots().unwrap(), 4, "trial {trial}");
    }
}

/// A sender sending in a loop while the receiver takes a few messages and
/// is dropped, one `Buf` kept: the sender gets `BrokenPipe`, and every
/// slot but the kept one comes back — also that of a message published
/// while the receiver was stopping, which it never took.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_message_published_while_the_receiver_stopped_gives_its_slot_back() {
    let _g = serial();
    for trial in 0..2000 {
        let (mut tx, mut rx) = channel(4096, 4, Transport::Ring);
        tx.set_timeout(Some(Duration::from_secs(5)));
        tx.send_bytes(b"kept").unwrap();
        let kept = rx.recv().unwrap().unwrap();
        let n = 1 + trial % 50;
        let t = std::thread::spawn(move || {
            for _ in 0..n {
                if rx.recv().is_err() {
                    break;
                }
            }
            drop(rx);
        });
        let err = loop {
            if let Err(e) = tx.send_bytes(b"x") {
                break e;
            }
        };
        t.join().unwrap();
        assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "trial {trial}");
        assert_eq!(tx.free_slots().unwrap(), 3, "trial {trial}");
        drop(kept);
    }
}

/// A sender (this test, writing the control block) that keeps the tx ring
/// a ring ahead of the receiver's tail: dropping the receiver returns
/// all the same, after one ring's worth of entries.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_sender_that_keeps_publishing_cannot_hold_a_receivers_drop() {
    use rustix::fs::SealFlags;
    let _g = serial();
    for _ in 0..5 {
        let (a, b) = ipc::pair().unwrap();
        let a: OwnedFd = a.into();
        let pool = memfd(
            "endless",
            4 * 4096,
            SealFlags::SHRINK | SealFlags::GROW | SealFlags::FUTURE_WRITE,
        );
        let words = ENTRIES + (TX_CAP + REL_CAP) as usize * 4;
        let ctl = memfd(
            "endless-ring",
            (words * 8) as u64,
            SealFlags::SHRINK | SealFlags::GROW,
        );
        let mut hello = crate::processes::packet(1, 1, &[]);
        for v in [4096u64, 4, TX_CAP, REL_CAP] {
            hello.extend_from_slice(&v.to_le_bytes());
        }
        send_with_fds(&a, &hello, &[&pool, &ctl]);
        let c = Arc::new(Control::map(&ctl, words));
        // SAFETY: the peer is this test writing BYE entries, no buffers.
        let rx = unsafe { Receiver::new(b, Some(Duration::from_secs(5))) }.unwrap();
        for i in 0..TX_CAP as usize {
            c.set(ENTRIES + i * 4, 4); // BYE
        }
        let stop = Arc::new(AtomicBool::new(false));
        let (c2, stop2) = (c.clone(), stop.clone());
        let feeder = std::thread::spawn(move || {
            while !stop2.load(Ordering::Relaxed) {
                c2.set(TX_HEAD, c2.get(TX_TAIL) + TX_CAP);
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        let ended = within(Duration::from_secs(3), move || drop(rx));
        stop.store(true, Ordering::Relaxed);
        feeder.join().unwrap();
        assert!(ended.is_some(), "the receiver's drop kept taking entries");
    }
}
