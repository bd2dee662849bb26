//! How a channel ends: the receiver gets every message sent before the
//! sender closed or went away, then the end, however the sender left.

use crate::channel;
use std::io;

/// A sender that goes away while releases it has not read wait in its
/// queue: Linux then reports `ECONNRESET` to the receiver before the
/// packets still queued for it. The receiver must still get every message
/// sent before, then `UnexpectedEof` (seen as a lost last message and a
/// lost BYE when the receiver released while the sender closed).
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn messages_queued_before_the_sender_left_reach_the_receiver() {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 4);
    tx.send_bytes(b"first").unwrap();
    tx.send_bytes(b"second").unwrap();
    // Received and dropped: its release waits, unread, in the sender's queue.
    assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), b"first");
    tx.abort();
    assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), b"second");
    assert_eq!(rx.recv().unwrap_err().kind(), io::ErrorKind::UnexpectedEof);
}

/// The same with an orderly close: releases wait unread in the sender's
/// queue when it sends BYE and closes; the receiver gets every message,
/// then the end (`None`), never an error.
#[test]
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn an_orderly_close_with_releases_unread_ends_in_order() {
    let _g = crate::serial();
    for _ in 0..50 {
        let (mut tx, mut rx) = channel(4096, 8);
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
