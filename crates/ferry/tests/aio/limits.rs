//! Limits of the request machinery: many requests at once against a
//! 256-entry ring, offsets at the largest file offset, zero lengths, the
//! same request twice in all/any, Duration::MAX, and sequential requests
//! from many threads.

use ferry::aio::{all_done, any_done, AsyncFile, Backend, Pending, State};
use ferry::{Buf, BufMut};
use std::time::Duration;

const LONG: Option<Duration> = Some(Duration::from_secs(20));

/// 4000 reads in flight at once (more than the SQ's 256 and the CQ's 512
/// entries), plus 300 pipe reads parked in the kernel: every completion
/// arrives, none is dropped, submission does not hang.
#[test]
fn thousands_of_requests_at_once() {
    for b in [Backend::IoUring, Backend::Threads] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let data: Vec<u8> = (0..1 << 20).map(|i: u32| (i * 7 % 251) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        let f = AsyncFile::with_options(&p, std::fs::File::options().read(true), b).unwrap();
        let mut parked = Vec::new();
        if b == Backend::IoUring {
            for _ in 0..300 {
                let (r, w) = std::io::pipe().unwrap();
                let a = AsyncFile::from_fd(r.into(), b).unwrap();
                let q = a.read(1).unwrap();
                parked.push((a, w, q));
            }
        }
        let reqs: Vec<_> = (0..4000u64)
            .map(|i| f.read_at((i * 251) % ((1 << 20) - 300), 300).unwrap())
            .collect();
        let refs: Vec<&dyn Pending> = reqs.iter().map(|r| r as &dyn Pending).collect();
        assert!(
            all_done(&refs, LONG).unwrap(),
            "{b:?}: not all 4000 completed"
        );
        for (i, r) in reqs.into_iter().enumerate() {
            let at = ((i as u64 * 251) % ((1 << 20) - 300)) as usize;
            assert_eq!(r.into_inner()[..], data[at..at + 300]);
        }
        for (_, mut w, q) in parked {
            std::io::Write::write_all(&mut w, b"x").unwrap();
            assert!(q.wait(LONG).unwrap());
        }
    }
}

/// Offsets at and past i64::MAX, zero lengths there; the same request
/// twice in all_done/any_done; a timeout of Duration::MAX.
#[test]
fn edges_of_offsets_and_lengths() {
    for b in [Backend::IoUring, Backend::Threads] {
        let dir = tempfile::tempdir().unwrap();
        let f = AsyncFile::with_options(
            dir.path().join("f"),
            std::fs::File::options().read(true).write(true).create(true),
            b,
        )
        .unwrap();
        let max = i64::MAX as u64;
        assert!(f.write_at(max, Buf::from_static(b"x")).is_err());
        assert!(f.write_at(u64::MAX, Buf::from_static(b"x")).is_err());
        let z = f.write_at(max, Buf::from_static(b"")).unwrap();
        assert!(z.wait(Some(Duration::MAX)).unwrap());
        assert_eq!(z.bytes(), Some(0));
        let w = f.write_at(max - 1, Buf::from_static(b"x"));
        if let Ok(w) = w {
            // EFBIG from the file system: an error, sticky, not a hang.
            let _ = w.wait(LONG);
            assert_ne!(w.state(), State::InFlight);
        }
        let r = f.read_at(0, 0).unwrap();
        assert!(r.wait(LONG).unwrap());
        assert!(f
            .read_into_at(0, BufMut::with_capacity(0))
            .unwrap()
            .wait(LONG)
            .unwrap());
        assert!(all_done(&[&r as &dyn Pending, &r], Some(Duration::MAX)).unwrap());
        assert_eq!(
            any_done(&[&r as &dyn Pending, &r], Some(Duration::MAX)).unwrap(),
            Some(0)
        );
    }
}

/// Sequential writes from 8 threads, 500 each: every position taken
/// once, the file exactly the sum, each record intact.
#[test]
fn sequential_requests_from_many_threads() {
    for b in [Backend::IoUring, Backend::Threads] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = AsyncFile::with_options(
            &p,
            std::fs::File::options().read(true).write(true).create(true),
            b,
        )
        .unwrap();
        std::thread::scope(|s| {
            for t in 0..8u8 {
                let f = &f;
                s.spawn(move || {
                    let mut reqs = Vec::new();
                    for _ in 0..500 {
                        reqs.push(f.write(Buf::from(vec![t; 100])).unwrap());
                    }
                    for r in reqs {
                        assert!(r.wait(LONG).unwrap());
                    }
                });
            }
        });
        let got = std::fs::read(&p).unwrap();
        assert_eq!(got.len(), 8 * 500 * 100);
        for rec in got.chunks(100) {
            assert!(rec.iter().all(|&x| x == rec[0]), "{b:?}: a record torn");
        }
    }
}

/// Cancel, clear, into_inner and drop racing a completion on many
/// threads: every buffer comes back exactly once and nothing hangs.
#[test]
fn cancel_clear_into_inner_race_completions() {
    for b in [Backend::IoUring, Backend::Threads] {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::write(&p, vec![3u8; 1 << 20]).unwrap();
        let f = AsyncFile::with_options(&p, std::fs::File::options().read(true), b).unwrap();
        std::thread::scope(|s| {
            for t in 0..4 {
                let f = &f;
                s.spawn(move || {
                    for i in 0..400 {
                        let r = f
                            .read_at(((i * 4096) % (1 << 19)) as u64, 64 << 10)
                            .unwrap();
                        let r = std::sync::Arc::new(r);
                        let r2 = r.clone();
                        let h = std::thread::spawn(move || {
                            r2.cancel();
                            r2.clear_exception();
                        });
                        if (i + t) % 3 == 0 {
                            r.cancel();
                        }
                        h.join().unwrap();
                        let r = std::sync::Arc::try_unwrap(r).unwrap();
                        match r.try_into_inner(LONG) {
                            Ok(buf) => {
                                if buf.len() == 64 << 10 {
                                    assert!(buf.iter().all(|&x| x == 3));
                                }
                            }
                            Err(_) => panic!("{b:?}: a buffer never came back"),
                        }
                    }
                });
            }
        });
        assert!(f.all_done(LONG).unwrap());
    }
}
