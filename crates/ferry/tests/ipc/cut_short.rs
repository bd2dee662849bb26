//! A message the sender cannot finish: it never reaches the receiver,
//! never joins the next one, and takes no slot with it for good.

use crate::channel;
use ferry::{Aggregate, Buf};
use std::io;
use std::time::Duration;

on_both_transports! {
/// Slots 4, the receiver holds two earlier messages, and a message of
/// four slots goes out: its first two pieces leave in a packet without
/// END, then the wait for a third slot times out. The receiver once kept
/// those two pieces and put them in front of the next message (the
/// sender did not break the channel on a timeout, nor tell the receiver
/// to drop them): it got 8 KiB of ones before "next".
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_message_cut_short_by_a_timeout_never_joins_the_next(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 4, transport);
    tx.set_timeout(Some(Duration::from_millis(200)));
    tx.send_bytes(b"one").unwrap();
    tx.send_bytes(b"two").unwrap();
    let held = [rx.recv().unwrap().unwrap(), rx.recv().unwrap().unwrap()];
    let err = tx.send_bytes(&[1; 4 * 4096]).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    drop(held);
    tx.set_timeout(Some(Duration::from_secs(30)));
    tx.send_bytes(b"next").unwrap();
    assert_eq!(rx.recv().unwrap().unwrap().copy_to_vec(), b"next");
    // The pieces dropped went back: the whole pool is free again.
    assert_eq!(tx.free_slots().unwrap(), 4);
}
}

on_both_transports! {
/// A message of a pool `Buf` and a piece larger than the pool is refused
/// (`InvalidInput`) before anything is sent. The reference to the first
/// piece was once counted as sent and never taken back: its slot never
/// came back.
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_refused_message_takes_no_slot_with_it(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, _rx) = channel(4096, 2, transport);
    let mut m = tx.alloc().unwrap();
    m[..5].copy_from_slice(b"first");
    let first = m.freeze(5);
    let mut msg = Aggregate::from(first.clone());
    msg.append_buf(Buf::from(vec![7; 2 * 4096 + 1]));
    let err = tx.send(msg).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err:?}");
    // Pieces that fit one by one, but not the pool together.
    let mut msg = Aggregate::from(first.clone());
    msg.append_buf(Buf::from(vec![7; 4096 + 1]));
    let err = tx.send(msg).unwrap_err();
    assert_eq!(err.kind(), io::ErrorKind::InvalidInput, "{err:?}");
    drop(first);
    assert_eq!(tx.free_slots().unwrap(), 2);
    assert_eq!(tx.stats().refs_sent, 0);
}
}

on_both_transports! {
/// A send that times out on a full socket before any of its packets went
/// out: its references are not the receiver's, so once the receiver
/// read and dropped everything that was sent, every slot is free again.
#[cfg_attr(miri, ignore = "memfd and sockets")]
fn a_send_timed_out_on_a_full_socket_takes_no_slot_with_it(transport: Transport) {
    let _g = crate::serial();
    let (mut tx, mut rx) = channel(4096, 2, transport);
    tx.set_timeout(Some(Duration::from_millis(100)));
    let b = tx.alloc().unwrap().freeze(1);
    let mut sent = 0;
    let err = loop {
        match tx.send(Aggregate::from(b.clone())) {
            Ok(()) => sent += 1,
            Err(e) => break e,
        }
    };
    assert_eq!(err.kind(), io::ErrorKind::TimedOut, "{err:?}");
    for _ in 0..sent {
        drop(rx.recv().unwrap().unwrap());
    }
    drop(b);
    assert_eq!(tx.free_slots().unwrap(), 2);
    assert_eq!(tx.stats().refs_sent, sent);
}
}
