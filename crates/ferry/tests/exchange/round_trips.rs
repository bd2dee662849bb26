//! Buffer exchange (fbufs' uf_* interface) through real pipes, sockets
//! and files: round trips, the end of input, errors with the bytes that
//! got out, the cap, sizes at the edges, non-blocking descriptors and
//! threads.

use crate::support::set_nonblocking;
use ferry::exchange::{bytes_out, Exchange};
use ferry::{Aggregate, Buf, PoolConfig};
use std::io::{ErrorKind, Read, Seek, Write};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::Duration;

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 9) as u8)
        .collect()
}

/// Reads everything from `fd` with read_buf until the end; checks each
/// buffer is a pool slot no larger than asked.
fn read_all(ex: &Exchange, fd: impl AsFd, max: usize) -> Vec<u8> {
    let mut all = Vec::new();
    loop {
        let b = ex.read_buf(&fd, max).expect("read_buf");
        if b.is_empty() {
            return all;
        }
        assert!(b.len() <= max);
        assert!(b.is_pooled(), "read_buf hands out pool slots");
        all.extend_from_slice(&b);
    }
}

/// Writes `data` as a mix of what write_buf takes: a BufMut from get_buf,
/// one from allocate, a frozen Buf, and an aggregate of several slices.
fn write_mixed(ex: &Exchange, fd: impl AsFd, data: &[u8]) -> usize {
    let mut total = 0;
    for (k, chunk) in data.chunks(50_000).enumerate() {
        let n = match k % 4 {
            0 => {
                let mut m = ex.get_buf(chunk.len()).unwrap();
                m.extend_from_slice(chunk);
                ex.write_buf(&fd, m)
            }
            1 => {
                let mut m = ex.allocate(chunk.len()).unwrap();
                m.copy_from_slice(chunk);
                ex.write_buf(&fd, m)
            }
            2 => {
                let mut m = ex.get_buf(chunk.len()).unwrap();
                m.extend_from_slice(chunk);
                ex.write_buf(&fd, m.freeze())
            }
            _ => {
                let mut a = Aggregate::new();
                for piece in chunk.chunks(777) {
                    let mut m = ex.get_buf(piece.len()).unwrap();
                    m.extend_from_slice(piece);
                    a.append_buf(m.freeze());
                }
                ex.write_buf(&fd, a)
            }
        };
        total += n.expect("write_buf");
    }
    total
}

fn small_exchange(cap: usize) -> Exchange {
    Exchange::with_config(
        PoolConfig::default()
            .with_classes(vec![4096, 65536])
            .with_budget(cap),
    )
    .unwrap()
}

#[test]
fn round_trip_through_a_pipe() {
    let ex = Exchange::new(8 << 20).unwrap();
    let data = pattern(1_000_003, 1);
    let (r, w) = std::io::pipe().unwrap();
    let ex2 = ex.clone();
    let d2 = data.clone();
    let writer = std::thread::spawn(move || {
        let n = write_mixed(&ex2, &w, &d2);
        drop(w);
        n
    });
    let got = read_all(&ex, &r, 65536);
    assert_eq!(writer.join().unwrap(), data.len());
    assert!(got == data, "the bytes differ");
    // Every buffer came back.
    assert_eq!(ex.pool().stats().in_use_slots, 0);
}

#[test]
fn round_trip_through_a_socketpair_both_ways() {
    let ex = Exchange::new(8 << 20).unwrap();
    let (a, b) = UnixStream::pair().unwrap();
    let data = pattern(700_001, 2);
    let back = std::thread::spawn({
        let ex = ex.clone();
        move || {
            // Echo: every buffer read goes straight back out, by value.
            let mut n = 0;
            loop {
                let buf = ex.read_buf(&b, 10_000).unwrap();
                if buf.is_empty() {
                    break;
                }
                n += ex.write_buf(&b, buf).unwrap();
            }
            n
        }
    });
    let reader = std::thread::spawn({
        let ex = ex.clone();
        let a = a.try_clone().unwrap();
        move || read_all(&ex, &a, 4096)
    });
    write_mixed(&ex, &a, &data);
    a.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(back.join().unwrap(), data.len());
    drop(ex.clone());
    // The echo side has closed its end by returning: the reader ends.
    assert!(reader.join().unwrap() == data, "echoed bytes differ");
}

#[test]
fn round_trip_through_tcp_loopback() {
    let ex = Exchange::new(8 << 20).unwrap();
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let data = pattern(300_000, 3);
    let d2 = data.clone();
    let ex2 = ex.clone();
    let sender = std::thread::spawn(move || {
        let s = std::net::TcpStream::connect(addr).unwrap();
        write_mixed(&ex2, &s, &d2)
    });
    let (s, _) = l.accept().unwrap();
    let got = read_all(&ex, &s, 1 << 20);
    assert_eq!(sender.join().unwrap(), data.len());
    assert!(got == data);
}

#[test]
fn round_trip_through_a_file_and_its_mapping() {
    let ex = Exchange::new(8 << 20).unwrap();
    let data = pattern(200_000, 4);
    let mut f = tempfile::tempfile().unwrap();
    assert_eq!(write_mixed(&ex, &f, &data), data.len());
    f.rewind().unwrap();
    assert!(read_all(&ex, &f, 8192) == data);
    // Past the end: the end again, not an error.
    assert!(ex.read_buf(&f, 100).unwrap().is_empty());
    // The file's pages, mapped, go out with write_buf (no pool memory).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, &data).unwrap();
    let file = std::fs::File::open(&path).unwrap();
    let m = ex.map(&file, 1000..150_000).unwrap();
    assert_eq!(&m[..], &data[1000..150_000]);
    assert!(!m.is_pooled());
    let mut out = tempfile::tempfile().unwrap();
    assert_eq!(ex.write_buf(&out, m).unwrap(), 149_000);
    out.rewind().unwrap();
    let mut back = Vec::new();
    out.read_to_end(&mut back).unwrap();
    assert!(back == data[1000..150_000]);
}

#[test]
fn reading_again_leaves_the_previous_buffer_alone() {
    let ex = small_exchange(1 << 20);
    let (r, w) = std::io::pipe().unwrap();
    (&w).write_all(&[1u8; 1000]).unwrap();
    let first = ex.read_buf(&r, 1000).unwrap();
    let id = first.content_id();
    for round in 0..50u8 {
        (&w).write_all(&[round; 1000]).unwrap();
        let next = ex.read_buf(&r, 1000).unwrap();
        assert!(
            !next.shares_block_with(&first),
            "a live buffer's slot was reused"
        );
        assert!(next.iter().all(|&b| b == round));
        // `first` is untouched by every later read.
        assert!(first.iter().all(|&b| b == 1));
        assert_eq!(first.content_id(), id);
    }
}

#[test]
fn write_errors_say_how_many_bytes_got_out() {
    let ex = Exchange::new(8 << 20).unwrap();
    // A pipe whose reader takes 70,000 bytes and goes away.
    let (mut r, w) = std::io::pipe().unwrap();
    let reader = std::thread::spawn(move || {
        let mut got = vec![0u8; 70_000];
        r.read_exact(&mut got).unwrap();
        got
    });
    let data = pattern(3 << 20, 5);
    let mut a = Aggregate::new();
    for c in data.chunks(1 << 20) {
        let mut m = ex.get_buf(c.len()).unwrap();
        m.extend_from_slice(c);
        a.append_buf(m.freeze());
    }
    let e = ex.write_buf(&w, a).unwrap_err();
    let got = reader.join().unwrap();
    assert!(got == data[..70_000]);
    assert_eq!(e.kind(), ErrorKind::BrokenPipe);
    assert_eq!(ferry::stream::os_error(&e), Some(libc::EPIPE));
    let out = bytes_out(&e).expect("bytes out");
    // At least what the reader took; no more than the pipe could hold
    // beyond it; never all.
    assert!(out >= 70_000 && out < data.len() as u64, "{out}");
    let msg = e.to_string();
    assert!(
        msg.contains(&format!("after {out} of {} bytes", data.len())),
        "{msg}"
    );
    // A bad descriptor: EBADF, nothing out.
    let f = std::fs::File::open("/dev/null").unwrap();
    let e = ex.write_buf(&f, Buf::from_static(b"x")).unwrap_err();
    assert_eq!(ferry::stream::os_error(&e), Some(libc::EBADF));
    assert_eq!(bytes_out(&e), Some(0));
    // A full device: ENOSPC.
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .unwrap();
    let e = ex.write_buf(&full, Buf::from_static(b"x")).unwrap_err();
    assert_eq!(ferry::stream::os_error(&e), Some(libc::ENOSPC));
    // Reading from a write-only descriptor names it.
    let e = ex.read_buf(&full, 10).unwrap_err();
    assert_eq!(ferry::stream::os_error(&e), Some(libc::EBADF));
    assert!(e.to_string().contains("read_buf from fd"), "{e}");
}

#[test]
fn the_cap_is_an_error_at_once_and_buffers_coming_back_lift_it() {
    let ex = small_exchange(65536 + 4096);
    let big = ex.get_buf(65536).unwrap();
    let small = ex.allocate(1).unwrap();
    let t = std::time::Instant::now();
    for e in [
        ex.get_buf(1).unwrap_err(),
        ex.allocate(4096).unwrap_err(),
        ex.read_buf(std::io::stdin(), 10).unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::OutOfMemory, "{e}");
    }
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "no waiting at the cap"
    );
    // Larger than the largest buffer: InvalidInput, whatever the cap.
    assert_eq!(
        ex.get_buf(65537).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    ex.deallocate(small);
    assert!(ex.get_buf(100).is_ok());
    drop(big);
    assert!(ex.get_buf(65536).is_ok());
}

#[test]
fn sizes_at_the_edges() {
    let ex = small_exchange(1 << 20);
    for huge in [usize::MAX, usize::MAX - 1, isize::MAX as usize, 65537] {
        assert_eq!(
            ex.get_buf(huge).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
        assert_eq!(
            ex.allocate(huge).unwrap_err().kind(),
            ErrorKind::InvalidInput
        );
    }
    // Zero: an empty buffer with room; allocate(0) has length 0.
    let z = ex.get_buf(0).unwrap();
    assert!(z.is_empty() && z.capacity() == 4096);
    assert_eq!(ex.allocate(0).unwrap().len(), 0);
    // read_buf of 0 bytes is an error (an empty Buf is the end).
    let (r, w) = std::io::pipe().unwrap();
    assert_eq!(
        ex.read_buf(&r, 0).unwrap_err().kind(),
        ErrorKind::InvalidInput
    );
    // A max past the largest buffer reads at most the largest buffer.
    let w2 = std::thread::spawn(move || (&w).write_all(&pattern(200_000, 6)));
    let b = ex.read_buf(&r, usize::MAX).unwrap();
    assert!(!b.is_empty() && b.len() <= 65536, "{}", b.len());
    let first = b.len();
    drop(b);
    // The writer finishes (and closes its end) once the pipe is drained.
    let rest = std::thread::spawn(move || {
        let ex = small_exchange(1 << 20);
        read_all(&ex, &r, usize::MAX).len()
    });
    w2.join().unwrap().unwrap();
    assert_eq!(first + rest.join().unwrap(), 200_000);
    // Zero-length writes of every kind.
    let (_r, w) = std::io::pipe().unwrap();
    assert_eq!(ex.write_buf(&w, ex.get_buf(10).unwrap()).unwrap(), 0);
    assert_eq!(ex.write_buf(&w, Buf::new()).unwrap(), 0);
    assert_eq!(ex.write_buf(&w, Aggregate::new()).unwrap(), 0);
}

#[test]
fn non_blocking_descriptors_are_waited_for() {
    let ex = Exchange::new(8 << 20).unwrap();
    let (r, w) = std::io::pipe().unwrap();
    set_nonblocking(&r);
    set_nonblocking(&w);
    let data = pattern(1 << 20, 7);
    // The writer fills the pipe (EAGAIN) long before the reader starts.
    let d2 = data.clone();
    let ex2 = ex.clone();
    let writer = std::thread::spawn(move || {
        let mut m = ex2.get_buf(d2.len()).unwrap();
        m.extend_from_slice(&d2);
        ex2.write_buf(&w, m)
    });
    std::thread::sleep(Duration::from_millis(50));
    // The reader reads faster than a delayed writer (EAGAIN on read).
    let got = read_all(&ex, &r, 4096);
    assert_eq!(writer.join().unwrap().unwrap(), data.len());
    assert!(got == data);
    // An empty non-blocking pipe with a late writer: read_buf waits.
    let (r, w) = std::io::pipe().unwrap();
    set_nonblocking(&r);
    let late = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        (&w).write_all(b"late").unwrap();
    });
    assert_eq!(&ex.read_buf(&r, 100).unwrap()[..], b"late");
    late.join().unwrap();
}

#[test]
fn threads_share_one_exchange() {
    let ex = small_exchange(32 * 65536);
    let (r, w) = UnixStream::pair().unwrap();
    let total: usize = std::thread::scope(|s| {
        let writers: Vec<_> = (0..4u8)
            .map(|t| {
                let (ex, w) = (&ex, &w);
                s.spawn(move || {
                    let mut n = 0;
                    for i in 0..200usize {
                        // Each write is one record: thread id and length.
                        let len = 1 + (i * 37 + t as usize) % 3000;
                        let mut m = loop {
                            match ex.get_buf(len) {
                                Ok(m) => break m,
                                Err(e) => {
                                    assert_eq!(e.kind(), ErrorKind::OutOfMemory);
                                    std::thread::yield_now();
                                }
                            }
                        };
                        m.extend_from_slice(&vec![t; len]);
                        n += ex.write_buf(w, m).unwrap();
                    }
                    n
                })
            })
            .collect();
        let reader = s.spawn(|| {
            let mut counts = [0usize; 4];
            let mut left: usize = writers_total();
            while left > 0 {
                let b = ex.read_buf(&r, 65536).unwrap();
                assert!(!b.is_empty());
                for &x in b.iter() {
                    counts[x as usize] += 1;
                }
                left -= b.len();
            }
            counts
        });
        let n: usize = writers.into_iter().map(|h| h.join().unwrap()).sum();
        let counts = reader.join().unwrap();
        for (t, &c) in counts.iter().enumerate() {
            assert_eq!(c, per_thread(t as u8), "thread {t}'s bytes");
        }
        n
    });
    assert_eq!(total, writers_total());
    assert_eq!(ex.pool().stats().in_use_slots, 0);
}

fn per_thread(t: u8) -> usize {
    (0..200usize)
        .map(|i| 1 + (i * 37 + t as usize) % 3000)
        .sum()
}

fn writers_total() -> usize {
    (0..4u8).map(per_thread).sum()
}

#[test]
fn the_global_exchange_and_free_functions() {
    let (r, w) = std::io::pipe().unwrap();
    let mut m = ferry::exchange::get_buf(5).unwrap();
    m.extend_from_slice(b"hello");
    assert_eq!(ferry::exchange::write_buf(&w, m).unwrap(), 5);
    let mut a = ferry::exchange::allocate(6).unwrap();
    a.copy_from_slice(b" world");
    ferry::exchange::write_buf(&w, a).unwrap();
    drop(w);
    let b = ferry::exchange::read_buf(&r, 100).unwrap();
    assert_eq!(&b[..], b"hello world");
    assert!(ferry::exchange::read_buf(&r, 100).unwrap().is_empty());
    let ex = Exchange::global().unwrap();
    assert!(ex.cap() >= ex.max_buf());
}
