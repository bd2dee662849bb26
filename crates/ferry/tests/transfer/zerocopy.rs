//! `transfer::zerocopy::ZeroCopySender` on real sockets: bytes arrive in
//! order, every zero-copy send completes, buffers are held until then and
//! released after, a Unix socket and a second sender go plain.

use crate::support::drain;
use ferry::transfer::zerocopy::ZeroCopySender;
use ferry::{Aggregate, Buf};
use proptest::prelude::*;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::Duration;

fn tcp_pair() -> (TcpStream, TcpStream) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (rx, _) = l.accept().unwrap();
    (tx, rx)
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

#[test]
fn tcp_bytes_arrive_and_every_zero_copy_send_completes() {
    let (tx, rx) = tcp_pair();
    let reader = drain(rx);
    let mut want = Vec::new();
    let mut s = ZeroCopySender::new(tx.as_fd(), 32 << 10);
    for i in 0..40u8 {
        // Big and small pieces, some below the threshold.
        let n = if i % 3 == 0 {
            1000
        } else {
            300_000 + i as usize
        };
        let b = bytes(n, i);
        want.extend_from_slice(&b);
        s.send(Buf::from(b)).unwrap();
    }
    assert!(s.flush(Some(Duration::from_secs(30))).unwrap());
    assert_eq!(s.held(), 0);
    let st = s.stats();
    drop(s);
    drop(tx);
    assert!(reader.join().unwrap() == want);
    assert_eq!(st.bytes, want.len() as u64);
    if st.enabled {
        assert!(st.zerocopy_sends > 0 && st.zerocopy_bytes > 0);
        assert_eq!(st.completed, st.zerocopy_sends);
        // Loopback delivers to a local socket: the kernel copies, and says
        // so on each completion (Documentation/networking/msg_zerocopy.rst).
        assert_eq!(st.copied, st.completed);
        assert!(st.peak_held > 0);
    } else {
        eprintln!("SO_ZEROCOPY refused here: sends went plain");
        assert_eq!(st.zerocopy_bytes, 0);
    }
}

#[test]
fn buffers_are_held_until_completion_and_released_after() {
    let (tx, rx) = tcp_pair();
    let mut s = ZeroCopySender::new(tx.as_fd(), 4096);
    if !s.stats().enabled {
        eprintln!("SO_ZEROCOPY refused here: nothing to hold");
        return;
    }
    let b = Buf::from(bytes(200_000, 9));
    s.send(b.clone()).unwrap();
    // On loopback the sent pages sit in the receiver's queue until it
    // reads them: the kernel is not done, the sender still holds `b`.
    assert!(!s.flush(Some(Duration::from_millis(300))).unwrap());
    assert_eq!(s.held(), 200_000);
    assert!(!b.is_unique());
    let reader = drain(rx);
    // Once read, the kernel lets go, and so does the sender.
    assert!(s.flush(Some(Duration::from_secs(30))).unwrap());
    assert_eq!(s.held(), 0);
    drop(s);
    assert!(b.is_unique(), "the sender still held the buffer");
    assert!(b.try_into_mut().is_ok());
    drop(tx);
    assert_eq!(reader.join().unwrap(), bytes(200_000, 9));
}

#[test]
fn a_second_sender_on_the_same_socket_goes_plain() {
    let (tx, rx) = tcp_pair();
    let reader = drain(rx);
    let mut a = ZeroCopySender::new(tx.as_fd(), 1);
    let first = a.stats().enabled;
    a.send(Buf::from(bytes(100_000, 1))).unwrap();
    drop(a);
    let mut b = ZeroCopySender::new(tx.as_fd(), 1);
    assert!(!b.stats().enabled, "its completion ids would be unknown");
    b.send(Buf::from(bytes(100_000, 2))).unwrap();
    assert_eq!(b.stats().zerocopy_bytes, 0);
    drop(b);
    drop(tx);
    let mut want = bytes(100_000, 1);
    want.extend(bytes(100_000, 2));
    assert!(reader.join().unwrap() == want);
    let _ = first;
}

#[test]
fn a_unix_socket_goes_plain_with_the_same_bytes() {
    let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
    let reader = drain(b);
    let mut s = ZeroCopySender::new(a.as_fd(), 1);
    assert!(!s.stats().enabled);
    let data = bytes(1 << 20, 3);
    s.send(Buf::from(data.clone())).unwrap();
    drop(s);
    drop(a);
    assert!(reader.join().unwrap() == data);
}

#[test]
fn a_gone_peer_is_an_error_and_the_sender_still_drops() {
    let (tx, rx) = tcp_pair();
    drop(rx);
    let mut s = ZeroCopySender::new(tx.as_fd(), 1);
    let mut failed = false;
    for _ in 0..1000 {
        if let Err(e) = s.send(Buf::from(bytes(100_000, 4))) {
            assert!(
                matches!(e.raw_os_error(), Some(libc::EPIPE | libc::ECONNRESET)),
                "{e}"
            );
            failed = true;
            break;
        }
    }
    assert!(failed);
    drop(s);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any pieces, gathered into aggregates or not, any threshold: the
    /// bytes arrive in order and every zero-copy send completes.
    #[test]
    fn any_pieces_arrive_in_order(
        pieces in prop::collection::vec(0usize..150_000, 1..20),
        threshold in 1usize..100_000,
        gather in any::<bool>(),
    ) {
        let (tx, rx) = tcp_pair();
        let reader = drain(rx);
        let mut s = ZeroCopySender::new(tx.as_fd(), threshold).with_max_held(300_000);
        let mut want = Vec::new();
        let mut agg = Aggregate::new();
        for (i, &n) in pieces.iter().enumerate() {
            let b = bytes(n, i as u8);
            want.extend_from_slice(&b);
            if gather {
                agg.append_buf(Buf::from(b));
            } else {
                s.send(Buf::from(b)).unwrap();
            }
        }
        if gather {
            s.send(agg).unwrap();
        }
        prop_assert!(s.flush(Some(Duration::from_secs(30))).unwrap());
        let st = s.stats();
        drop(s);
        drop(tx);
        prop_assert!(reader.join().unwrap() == want);
        prop_assert_eq!(st.completed, st.zerocopy_sends);
        prop_assert_eq!(st.bytes, want.len() as u64);
    }
}
