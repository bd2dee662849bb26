//! `ZeroCopySender`'s completion bookkeeping when the socket's error queue
//! holds more than completions (ICMP errors, transmit timestamps).

use ferry::transfer::zerocopy::ZeroCopySender;
use ferry::Buf;
use std::net::UdpSocket;
use std::os::fd::{AsFd, AsRawFd};
use std::time::Duration;

/// A connected UDP socket with `IP_RECVERR` gets the ICMP errors of its
/// datagrams on its error queue, between the zero-copy completions. A
/// reap that meets such an error must not lose the completions it read
/// before it: every send still completes (after the errors are reported),
/// and nothing stays held for ever.
#[test]
fn completions_read_before_an_icmp_error_are_not_lost() {
    // A port nobody listens on: every datagram draws an ICMP error.
    let gone = UdpSocket::bind("127.0.0.1:0").unwrap();
    let dead = gone.local_addr().unwrap();
    drop(gone);
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.connect(dead).unwrap();
    let on: libc::c_int = 1;
    // SAFETY: a valid socket, option value and length.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_IP,
            libc::IP_RECVERR,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as _,
        )
    };
    assert_eq!(r, 0);
    let mut zc = ZeroCopySender::new(s.as_fd(), 1);
    if !zc.stats().enabled {
        eprintln!("skipped: no SO_ZEROCOPY on UDP here");
        return;
    }
    let n = 8;
    for i in 0..n {
        let piece = Buf::copy_from_slice(&[i as u8; 1000]);
        // A send may itself report an earlier datagram's ICMP error.
        let _ = zc.send(piece);
    }
    let sent = zc.stats().zerocopy_sends;
    assert!(sent > 0);
    // Each failing flush reports (and takes off the queue) one error.
    let mut flushed = false;
    for _ in 0..4 * n {
        match zc.flush(Some(Duration::from_millis(200))) {
            Ok(true) => {
                flushed = true;
                break;
            }
            Ok(false) => break,
            Err(e) => assert_eq!(e.raw_os_error(), Some(libc::ECONNREFUSED), "{e}"),
        }
    }
    assert!(
        flushed,
        "{} of {sent} zero-copy sends completed; {} bytes held for ever",
        zc.stats().completed,
        zc.held()
    );
    assert_eq!(zc.stats().completed, sent);
    assert_eq!(zc.held(), 0);
}

/// A socket whose owner asked for transmit timestamps
/// (`SO_TIMESTAMPING`) gets them on its error queue beside the zero-copy
/// completions, each with `ee_errno` `ENOMSG` — not an error of any send.
/// Sends and the flush must still succeed, and every send complete.
#[test]
fn transmit_timestamps_on_the_error_queue_are_not_send_errors() {
    use std::io::Read;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let tx = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (mut rx, _) = l.accept().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        rx.read_to_end(&mut all).unwrap();
        all.len()
    });
    // SOF_TIMESTAMPING_TX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE.
    let flags: libc::c_int = (1 << 1) | (1 << 4);
    // SAFETY: a valid socket, option value and length.
    let r = unsafe {
        libc::setsockopt(
            tx.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPING,
            (&flags as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as _,
        )
    };
    assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
    let n = 200;
    let len = 64 << 10;
    {
        let mut zc = ZeroCopySender::new(tx.as_fd(), 1);
        assert!(zc.stats().enabled);
        for i in 0..n {
            let piece = Buf::copy_from_slice(&vec![i as u8; len]);
            zc.send(piece)
                .unwrap_or_else(|e| panic!("send {i} failed: {e}"));
        }
        assert!(zc.flush(Some(Duration::from_secs(10))).unwrap());
        assert_eq!(zc.stats().completed, zc.stats().zerocopy_sends);
    }
    drop(tx);
    assert_eq!(reader.join().unwrap(), n * len);
}
