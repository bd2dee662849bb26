//! `transfer::send::FileSender` over real files, pipes and sockets: the
//! bytes of each range arrive in order, the file's offset stays, a file
//! that ends early gives a short count, and a failed send counts only
//! what arrived.

use crate::support::drain;
use ferry::transfer::send::{FileSender, SendPath};
use ferry::transfer::{Method, Side};
use proptest::prelude::*;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::thread;

const PATHS: [SendPath; 2] = [SendPath::Sendfile, SendPath::Splice];

fn file_of(bytes: &[u8]) -> std::fs::File {
    let mut f = tempfile::tempfile().unwrap();
    f.write_all(bytes).unwrap();
    f.seek(SeekFrom::Start(3)).unwrap();
    f
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 7 + i / 251) as u8).collect()
}

#[test]
fn ranges_arrive_in_order_through_a_pipe_and_a_socket() {
    let data = pattern(3 << 20);
    let ranges = [0..10, 4096..(2 << 20), 5..5, 100..(3 << 20) + 999, 7..8];
    let mut want = Vec::new();
    for r in &ranges {
        let end = (r.end as usize).min(data.len());
        want.extend_from_slice(&data[(r.start as usize).min(end)..end]);
    }
    for path in PATHS {
        let f = file_of(&data);
        // A pipe.
        let (r, w) = std::io::pipe().unwrap();
        let reader = drain(r);
        let mut s = FileSender::new(f.as_fd(), w.as_fd(), path).unwrap();
        let mut total = 0;
        for rg in &ranges {
            total += s.send(rg.clone()).unwrap();
        }
        let st = *s.stats();
        drop(s);
        drop(w);
        assert_eq!(reader.join().unwrap(), want, "{path:?} into a pipe");
        assert_eq!(total, want.len() as u64);
        assert_eq!(st.bytes, want.len() as u64);
        assert_eq!(st.user_copied(), 0, "{path:?}");
        let m = if path == SendPath::Sendfile {
            Method::Sendfile
        } else {
            Method::Splice
        };
        assert_eq!(st.bytes_by(m), want.len() as u64);
        // A socket.
        let (a, b) = UnixStream::pair().unwrap();
        let reader = drain(b);
        let mut s = FileSender::new(f.as_fd(), a.as_fd(), path).unwrap();
        for rg in &ranges {
            s.send(rg.clone()).unwrap();
        }
        drop(s);
        drop(a);
        assert_eq!(reader.join().unwrap(), want, "{path:?} into a socket");
        // The file's own offset never moved.
        assert_eq!((&f).stream_position().unwrap(), 3);
    }
}

#[test]
fn a_source_that_is_not_a_regular_file_is_refused() {
    let (r, w) = std::io::pipe().unwrap();
    for path in PATHS {
        let e = FileSender::new(r.as_fd(), w.as_fd(), path).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    }
}

#[test]
fn a_closed_reader_is_a_write_error_counting_only_what_arrived() {
    let data = pattern(1 << 20);
    for path in PATHS {
        let f = file_of(&data);
        let (a, mut b) = UnixStream::pair().unwrap();
        // The reader takes 1000 bytes, then hangs up.
        let reader = thread::spawn(move || {
            let mut got = vec![0u8; 1000];
            b.read_exact(&mut got).unwrap();
            got
        });
        let mut s = FileSender::new(f.as_fd(), a.as_fd(), path).unwrap();
        let mut err = None;
        for _ in 0..64 {
            if let Err(e) = s.send(0..data.len() as u64) {
                err = Some(e);
                break;
            }
        }
        let got = reader.join().unwrap();
        assert_eq!(got, data[..1000]);
        let e = err.expect("sending to a closed peer must fail");
        assert_eq!(e.side(), Side::Write);
        assert!(
            matches!(e.raw_os_error(), Some(libc::EPIPE | libc::ECONNRESET)),
            "{e}"
        );
        // What the error counts arrived in the socket buffer or the reader.
        assert!(e.bytes() >= 1000, "{path:?}: {}", e.bytes());
    }
}

#[test]
fn a_non_blocking_output_is_waited_for() {
    let data = pattern(8 << 20);
    for path in PATHS {
        let f = file_of(&data);
        let (a, mut b) = UnixStream::pair().unwrap();
        a.set_nonblocking(true).unwrap();
        let reader = thread::spawn(move || {
            let mut all = Vec::new();
            let mut piece = vec![0u8; 100_000];
            loop {
                thread::sleep(std::time::Duration::from_micros(200));
                match b.read(&mut piece).unwrap() {
                    0 => return all,
                    n => all.extend_from_slice(&piece[..n]),
                }
            }
        });
        let mut s = FileSender::new(f.as_fd(), a.as_fd(), path).unwrap();
        assert_eq!(s.send(0..data.len() as u64).unwrap(), data.len() as u64);
        drop(s);
        drop(a);
        assert!(reader.join().unwrap() == data, "{path:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// Any ranges, inside the file or past its end, in any order: what
    /// arrives is exactly each range's bytes cut at the file's end.
    #[test]
    fn any_ranges_send_exactly_their_bytes(
        len in 0usize..200_000,
        ranges in prop::collection::vec((0u64..250_000, 0u64..250_000), 0..12),
        splice in any::<bool>(),
    ) {
        let data = pattern(len);
        let f = file_of(&data);
        let (a, b) = UnixStream::pair().unwrap();
        let reader = drain(b);
        let path = if splice { SendPath::Splice } else { SendPath::Sendfile };
        let mut s = FileSender::new(f.as_fd(), a.as_fd(), path).unwrap();
        let mut want = Vec::new();
        for &(x, y) in &ranges {
            let (lo, hi) = (x.min(y), x.max(y));
            let n = s.send(lo..hi).unwrap();
            let end = (hi as usize).min(len);
            let piece = &data[(lo as usize).min(end)..end];
            prop_assert_eq!(n, piece.len() as u64);
            want.extend_from_slice(piece);
        }
        drop(s);
        drop(a);
        prop_assert!(reader.join().unwrap() == want);
    }
}
