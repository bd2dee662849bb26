//! How a channel ends: the receiver gets every message sent before the
//! sender closed or went away, then the end, however the sender left.

use crate::channel;
use std::io;

on_both_transports! {
/// A sender that goes away while releases it has not read wait in its
/// queue: Linux then reports `ECONNRESET` to the receiver before the
/// packets still queued for it. The receiver must still get every message
/// sent before, then `UnexpectedEof` (seen as a lost last message and a
/// lost BYE when the receiver released while the sender closed).
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn messages_queued_before_the_sender_left_reach_the_receiver(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 4, transport);
    tx.send_bytes(b"first").unwrap();
    tx.send_bytes(b"second").unwrap();
    // Received and dropped: its release waits, unread, in the sender's queue.
    assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), b"first");
    tx.abort();
    assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), b"second");
    assert_eq!(rx.recv().unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
}
}

on_both_transports! {
/// The same with an orderly close: releases wait unread in the sender's
/// queue when it sends BYE and closes; the receiver gets every message,
/// then the end (`None`), never an error.
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn an_orderly_close_with_releases_unread_ends_in_order(transport: Transport) {
    let _g = crate::serial();
    for _ in 0..50 {
        let (mut tx, mut rx) = channel(4096, 8, transport);
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            while let Some(m) = rx.recv()? {
                got.push(m.copy_to_vec());
            }
            Ok::<_, io::Error>(got)
        });
        let sent: Vec<Vec<u8>> = (0..40u32).map(|i| i.to_le_bytes().repeat(9)).collect();
        for m in &sent {
            tx.send_bytes(m).unwrap();
        }
        tx.close().unwrap();
        assert_eq!(reader.join().unwrap().unwrap(), sent);
    }
}
}

on_both_transports! {
/// A receiver dropped while one of its buffers lives, with a message
/// queued and unread. The socket once stayed open with the buffer, so
/// the sender never learned that nobody reads: its sends went on into
/// the queue, and the queued message's slot never came back. Now the
/// sender's next send fails with `BrokenPipe`, the queued message's slot
/// comes back — and the slot of the buffer still alive does not: the
/// receiver stopped reading but still maps it, so it is never written
/// while that buffer lives (the sender once took any failed send as the
/// receiver's death and freed every slot).
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_receiver_dropped_while_a_buffer_lives_stops_the_sender_but_keeps_its_slot(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 3, transport);
    tx.send_bytes(&[b'k'; 100]).unwrap();
    tx.send_bytes(b"queued, never read").unwrap();
    let kept = rx.recv().unwrap().unwrap();
    drop(rx);
    let err = tx.send_bytes(b"nobody reads this").unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::BrokenPipe, "{err:?}");
    // Every slot the sender hands out now is written over: none is the
    // one the kept buffer shows.
    let mut fresh = Vec::new();
    while let Some(mut m) = tx.try_alloc().unwrap() {
        m.fill(b'X');
        fresh.push(m.freeze(4096));
    }
    assert_eq!(fresh.len(), 2, "the queued message's slot came back");
    assert_eq!(kept.copy_to_vec(), [b'k'; 100]);
    drop(fresh);
    // Once the last buffer goes, the receiver's end closes: all back.
    drop(kept);
    assert_eq!(tx.free_slots().unwrap(), 3);
}
}

on_both_transports! {
/// A sender dropped (waiting without end: no timeout) while its receiver
/// does not read and the socket is full: the BYE cannot go, and the drop
/// once waited for room as long as the receiver lived. It now gives up
/// after a short wait; the receiver then sees the end as a sender that
/// went away.
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn dropping_a_sender_does_not_wait_for_a_receiver_that_does_not_read(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 1, transport);
    let m = tx.alloc().unwrap().freeze(1);
    tx.set_timeout(Some(std::time::Duration::from_millis(100)));
    let err = (0..1_000_000)
        .find_map(|_| tx.send(ferry::Aggregate::from(m.clone())).err())
        .expect("the socket never filled");
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    tx.set_timeout(None);
    drop(tx);
    let end = loop {
        match rx.recv() {
            Ok(Some(_)) => {}
            other => break other,
        }
    };
    assert_eq!(end.unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
    drop(m);
}
}
