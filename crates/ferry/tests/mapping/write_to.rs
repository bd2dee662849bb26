//! `Aggregate::write_to` against real pipes, sockets and files.

use crate::support::{read_only_file_with, temp_file_with};
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

// ---- Buf::write_all_to: a file's pages by reference, other bytes by copy ----

/// Reads the pipe to its end on another thread, slowly at first so that
/// the writer fills the pipe and its transfers are partial.
fn slow_drain(mut r: std::io::PipeReader) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut got = Vec::new();
        let mut buf = vec![0u8; 5000];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                return got;
            }
            got.extend_from_slice(&buf[..n]);
            if got.len() < 200_000 {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
    })
}

#[test]
fn mapped_and_heap_bufs_reach_a_pipe_whole() {
    let data: Vec<u8> = (0..8 * 1024 * 1024 + 77)
        .map(|i| (i * 7 % 251) as u8)
        .collect();
    let (_dir, f) = read_only_file_with(&data);
    // Unaligned ranges: the first and last pages are shared with bytes
    // that must not be sent.
    for (s, e) in [(0, data.len()), (1, data.len() - 1), (4095, 3 * 4096 + 1)] {
        let mapped = Buf::map_file(&f, s as u64..e as u64).unwrap();
        let heap = Buf::from(data[s..e].to_vec());
        for b in [mapped, heap] {
            let (r, w) = std::io::pipe().unwrap();
            let reader = slow_drain(r);
            b.write_all_to(&w).unwrap();
            drop(w);
            let got = reader.join().unwrap();
            assert!(
                got == data[s..e],
                "range {s}..{e}: {} bytes back",
                got.len()
            );
        }
    }
}

#[test]
fn a_pipe_holds_the_files_pages_not_a_copy() {
    // What "by reference" means to a reader: bytes handed over and not yet
    // read are the file's pages, so a change to the file before the read
    // shows; a heap buffer's bytes were copied and do not change. This is
    // the kernel's behaviour under a mapping with no lease, so the test
    // maps unchecked (and keeps its promise by dropping `mapped` before the
    // write: the pipe's reference to the page outlives it).
    use std::os::unix::fs::FileExt;
    let f = temp_file_with(&[b'a'; 4096]);
    // SAFETY: nobody writes the file while `mapped` lives (see above).
    let mapped = unsafe { Buf::map_file_unchecked(&f, 0..4096) }.unwrap();
    let heap = Buf::from(vec![b'a'; 4096]);
    let (mut r1, w1) = std::io::pipe().unwrap();
    let (mut r2, w2) = std::io::pipe().unwrap();
    mapped.write_all_to(&w1).unwrap();
    heap.write_all_to(&w2).unwrap();
    drop(mapped);
    f.write_all_at(&[b'b'; 4096], 0).unwrap();
    drop((w1, w2));
    let (mut got1, mut got2) = (Vec::new(), Vec::new());
    r1.read_to_end(&mut got1).unwrap();
    r2.read_to_end(&mut got2).unwrap();
    assert_eq!(got1, vec![b'b'; 4096], "the pipe held the file's page");
    assert_eq!(got2, vec![b'a'; 4096], "the heap bytes were copied");
}

#[test]
fn files_and_sockets_get_a_copy() {
    let data: Vec<u8> = (0..300_000).map(|i| (i % 241) as u8).collect();
    let (_dir, src) = read_only_file_with(&data);
    let b = Buf::map_file(&src, 0..data.len() as u64).unwrap();
    let mut out = tempfile::tempfile().unwrap();
    b.write_all_to(&out).unwrap();
    let mut got = Vec::new();
    std::io::Seek::rewind(&mut out).unwrap();
    out.read_to_end(&mut got).unwrap();
    assert!(got == data, "file: {} bytes", got.len());
    let (mut a, s) = UnixStream::pair().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = Vec::new();
        a.read_to_end(&mut got).unwrap();
        got
    });
    b.write_all_to(&s).unwrap();
    drop(s);
    assert!(reader.join().unwrap() == data);
}

#[test]
fn a_closed_pipe_is_epipe_not_a_signal() {
    let (_dir, f) = read_only_file_with(&[7u8; 1 << 20]);
    for b in [
        Buf::map_file(&f, 0..1 << 20).unwrap(),
        Buf::from(vec![7u8; 1 << 20]),
    ] {
        let (r, w) = std::io::pipe().unwrap();
        drop(r);
        let e = b.write_all_to(&w).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::BrokenPipe, "{e}");
    }
}

#[test]
fn the_read_end_of_a_pipe_is_refused() {
    let (_dir, f) = read_only_file_with(&[1u8; 4096]);
    let b = Buf::map_file(&f, 0..4096).unwrap();
    let (r, w) = std::io::pipe().unwrap();
    let e = b.write_all_to(&r).unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EBADF), "{e}");
    drop(w);
    assert_eq!(b[..], [1u8; 4096][..], "nothing was read into the mapping");
}

#[test]
fn a_file_cut_short_under_its_buf_is_an_error_naming_it() {
    // A shrinking file under an unchecked mapping: the SIGBUS guard's case.
    let f = temp_file_with(&[3u8; 64 * 1024]);
    // SAFETY: the file is only shrunk, never written, while `b` lives.
    let b = unsafe { Buf::map_file_unchecked(&f, 0..64 * 1024) }.unwrap();
    f.set_len(0).unwrap();
    let (r, w) = std::io::pipe().unwrap();
    let reader = slow_drain(r);
    let e = b.write_all_to(&w).unwrap_err();
    drop(w);
    assert!(e.to_string().contains("shrank"), "{e}");
    assert!(
        reader.join().unwrap().is_empty(),
        "no bytes of a cut file were sent"
    );
}
