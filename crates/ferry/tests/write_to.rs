//! `Aggregate::write_to` against real pipes, sockets and files.

use ferry::{Aggregate, Buf};
use std::io::{ErrorKind, Read};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

/// An aggregate of `n` slices over a patterned block, plus its bytes.
fn patterned(n: usize, slice: usize) -> (Aggregate, Vec<u8>) {
    let bytes: Vec<u8> = (0..n * slice).map(|i| (i * 31 % 251) as u8).collect();
    let src = Buf::from(bytes.clone());
    let a = (0..n)
        .map(|i| src.slice(i * slice..(i + 1) * slice))
        .collect();
    (a, bytes)
}

#[test]
fn slow_reader_partial_writes_lose_nothing() {
    // 3000 slices (> IOV_MAX) of 1500 bytes: 4.5 MB through a 64 KiB pipe
    // read in small, slow gulps, so nearly every writev is partial.
    let (mut a, want) = patterned(3000, 1500);
    let (mut r, w) = std::io::pipe().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = [0u8; 7000];
        let mut reads = 0;
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            got.extend_from_slice(&buf[..n]);
            reads += 1;
            if reads % 64 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        got
    });
    let written = a.write_to(&w).unwrap();
    drop(w);
    let got = reader.join().unwrap();
    assert_eq!(written, want.len());
    assert!(a.is_empty());
    assert_eq!(got.len(), want.len());
    assert!(got == want, "bytes arrived damaged or out of order");
}

#[test]
fn closed_pipe_is_broken_pipe_and_keeps_the_bytes() {
    let (mut a, want) = patterned(10, 100);
    let (r, w) = std::io::pipe().unwrap();
    drop(r);
    let e = a.write_to(&w).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    assert_eq!(a, want[..], "nothing was written, so nothing may be gone");
}

#[test]
fn reader_closing_midway_reports_and_keeps_the_rest() {
    let (mut a, want) = patterned(2000, 1000);
    let (mut r, w) = std::io::pipe().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = vec![0u8; 300_000];
        r.read_exact(&mut got).unwrap();
        got
    });
    let e = a.write_to(&w).unwrap_err();
    let got = reader.join().unwrap();
    assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    // What the aggregate still holds is exactly the tail that was not taken.
    let taken = want.len() - a.len();
    assert!(taken >= got.len());
    assert_eq!(&want[..got.len()], &got[..]);
    assert_eq!(a, want[taken..]);
}

#[test]
fn closed_socket_is_broken_pipe() {
    let (mut a, _) = patterned(4, 1000);
    let (s1, s2) = UnixStream::pair().unwrap();
    drop(s2);
    let e = a.write_to(s1.as_fd()).unwrap_err();
    assert!(
        matches!(e.kind(), ErrorKind::BrokenPipe | ErrorKind::ConnectionReset),
        "{e}"
    );
    assert_eq!(a.len(), 4000);
}

#[test]
fn socket_receives_everything() {
    let (mut a, want) = patterned(1500, 700);
    let (s1, mut s2) = UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        s2.read_to_end(&mut got).unwrap();
        got
    });
    assert_eq!(a.write_to(s1.as_fd()).unwrap(), want.len());
    drop(s1);
    assert!(reader.join().unwrap() == want);
}

#[test]
fn nonblocking_pipe_would_block_keeps_the_remainder() {
    let (mut a, want) = patterned(200, 4096);
    let (mut r, w) = std::io::pipe().unwrap();
    rustix::io::ioctl_fionbio(&w, true).unwrap();
    let e = a.write_to(&w).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::WouldBlock);
    let sent = want.len() - a.len();
    assert!(sent > 0 && sent < want.len());
    let mut got = vec![0u8; sent];
    r.read_exact(&mut got).unwrap();
    assert_eq!(&got[..], &want[..sent]);
    // Resume after draining: the rest follows in order.
    rustix::io::ioctl_fionbio(&w, false).unwrap();
    let reader = std::thread::spawn(move || {
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        rest
    });
    a.write_to(&w).unwrap();
    drop(w);
    assert!(reader.join().unwrap() == want[sent..]);
}

#[test]
fn regular_file_gets_every_slice() {
    let (mut a, want) = patterned(2500, 33);
    let mut f = tempfile::tempfile().unwrap();
    a.write_to(&f).unwrap();
    use std::io::Seek;
    f.rewind().unwrap();
    let mut got = Vec::new();
    f.read_to_end(&mut got).unwrap();
    assert!(got == want);
}

#[test]
fn bad_descriptor_is_an_error() {
    let (mut a, _) = patterned(2, 10);
    let f = tempfile::tempfile().unwrap();
    // A read-only descriptor: write must fail with EBADF, not panic.
    let ro = std::fs::File::open(format!("/proc/self/fd/{}", {
        use std::os::fd::AsRawFd;
        f.as_raw_fd()
    }))
    .unwrap();
    let e = a.write_to(&ro).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EBADF), "{e}");
    assert_eq!(a.len(), 20);
}
