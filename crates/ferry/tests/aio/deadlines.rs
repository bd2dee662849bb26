//! Request deadlines (`AsyncFile::set_timeout`) and the thread pool's
//! non-blocking pipe/socket writes: queued requests, terminals, races with
//! cancels and completions, many descriptors, fork. Three of these tests
//! failed when written (a queued request's deadline, a terminal write, a
//! read losing a race), all fixed.

use crate::support::async_pipe_reader;
use crate::support::pty;
use ferry::aio::{AsyncFile, Backend, State};
use ferry::Buf;
use std::io::{ErrorKind, Read, Write};
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

const BACKENDS: [Backend; 2] = [Backend::IoUring, Backend::Threads];
const LONG: Option<Duration> = Some(Duration::from_secs(5));

/// A request whose deadline passes while it waits its turn behind an
/// earlier request on the same pipe (one that has no deadline and never
/// completes) must still fail `TimedOut` at its deadline: the doc says
/// "The time counts from the start, waiting behind earlier requests on a
/// pipe included" and "A request not over by then fails with TimedOut".
#[test]
fn a_queued_request_times_out_behind_a_blocked_one() {
    let mut failures = Vec::new();
    for b in BACKENDS {
        let (f, mut w) = async_pipe_reader(b);
        let first = f.read(4).unwrap(); // no deadline, nothing to read
        f.set_timeout(Some(Duration::from_millis(50)));
        let second = f.read(4).unwrap();
        let t = Instant::now();
        let r = second.wait(Some(Duration::from_secs(2)));
        let waited = t.elapsed();
        let state = second.state();
        // Unblock everything before asserting.
        w.write_all(b"abcdefgh").unwrap();
        let _ = first.wait(LONG);
        let _ = second.wait(LONG);
        match r {
            Err(e) => assert_eq!(e.kind(), ErrorKind::TimedOut, "{b:?}: {e}"),
            Ok(done) => failures.push(format!(
                "{b:?}: a request with a 50 ms deadline, queued behind a blocked read, \
                 was still pending after {waited:?} (done={done}); state {state:?}"
            )),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Zero timeout: both backends agree (the request fails TimedOut at once,
/// even with data ready) and the buffer comes back.
#[test]
fn a_zero_timeout_behaves_the_same_on_both_backends() {
    let mut seen = Vec::new();
    for b in BACKENDS {
        let (f, mut w) = async_pipe_reader(b);
        w.write_all(b"0123456789").unwrap();
        f.set_timeout(Some(Duration::ZERO));
        let r = f.read(4).unwrap();
        let out = r.wait(LONG);
        let kind = out.as_ref().map_err(|e| e.kind()).map(|_| ());
        seen.push(kind);
        r.clear_exception();
        assert!(r.try_into_inner(LONG).is_ok(), "{b:?}: buffer not back");
        // The file works again after clear_exception and no deadline.
        f.set_timeout(None);
        let r = f.read(4).unwrap();
        assert!(r.wait(LONG).unwrap(), "{b:?}");
    }
    assert_eq!(seen[0], seen[1], "backends disagree on a zero timeout");
}

/// Huge timeouts are "no deadline in practice": the request must not time
/// out at once (no overflow into the past, no EINVAL from the kernel on
/// the linked timeout), and it completes when data comes.
#[test]
fn huge_timeouts_do_not_fire() {
    let now_secs = {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec the call owns.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64
    };
    let huge = [
        Duration::MAX,
        Duration::from_secs(u64::MAX),
        Duration::from_secs(i64::MAX as u64),
        Duration::from_secs(i64::MAX as u64 / 2),
        Duration::from_secs(1 << 62),
        Duration::from_secs(1 << 40),
        // Lands an Instant right below i64::MAX seconds.
        Duration::new(i64::MAX as u64 - now_secs - 100, 999_999_999),
        Duration::new(u32::MAX as u64, 999_999_999),
    ];
    for b in BACKENDS {
        for (i, d) in huge.iter().enumerate() {
            let (f, mut w) = async_pipe_reader(b);
            f.set_timeout(Some(*d));
            let r = f.read(3).unwrap();
            let early = r.wait(Some(Duration::from_millis(100)));
            w.write_all(b"xyz").unwrap();
            let late = r.wait(LONG);
            assert!(
                matches!(early, Ok(false)),
                "{b:?} #{i} {d:?}: settled before data came: {early:?}"
            );
            assert!(matches!(late, Ok(true)), "{b:?} #{i} {d:?}: {late:?}");
            assert_eq!(&r.into_inner()[..], b"xyz");
        }
    }
}

/// Cancel after the timeout fired: stays TimedOut (sticky), buffer back;
/// cancel racing the deadline: one of the two, never a hang; a deadline
/// racing completion: data either delivered whole or not consumed.
#[test]
fn cancel_and_completion_race_the_deadline() {
    for b in BACKENDS {
        let (f, mut w) = async_pipe_reader(b);
        f.set_timeout(Some(Duration::from_millis(20)));
        let r = f.read(8).unwrap();
        let e = r.wait(LONG).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut);
        r.cancel();
        f.cancel();
        assert_eq!(r.state(), State::Failed);
        assert_eq!(r.done().unwrap_err().kind(), ErrorKind::TimedOut);
        assert!(r.try_into_inner(LONG).is_ok());

        // Races: deadline ~ cancel ~ data arrival, many times. Every byte
        // written is read exactly once, in order, by the requests that
        // completed (or partially reported).
        let mut expected_next = 0u8;
        for i in 0..300u32 {
            f.set_timeout(Some(Duration::from_micros(50 + (i % 7) as u64 * 40)));
            let r = f.read(1).unwrap();
            match i % 3 {
                0 => r.cancel(),
                1 => {
                    w.write_all(&[expected_next]).unwrap();
                }
                _ => {}
            }
            let out = r.wait(LONG);
            assert!(r.state() != State::InFlight, "{b:?}: still in flight");
            match out {
                Ok(true) => {
                    let got = r.into_inner();
                    assert_eq!(got[..], [expected_next][..], "{b:?} #{i}");
                    expected_next = expected_next.wrapping_add(1);
                }
                Ok(false) => unreachable!(),
                Err(e) => {
                    assert!(
                        matches!(e.kind(), ErrorKind::TimedOut) || r.state() == State::Cancelled,
                        "{b:?} #{i}: {e} {:?}",
                        r.state()
                    );
                    r.clear_exception();
                    assert!(r.try_into_inner(LONG).is_ok(), "{b:?} #{i}");
                    if i % 3 == 1 {
                        // The byte was not consumed by the failed request:
                        // the next read (no deadline) gets it.
                        f.set_timeout(None);
                        let again = f.read(1).unwrap();
                        assert!(again.wait(LONG).unwrap(), "{b:?} #{i}");
                        assert_eq!(again.into_inner()[..], [expected_next][..], "{b:?} #{i}");
                        expected_next = expected_next.wrapping_add(1);
                    }
                }
            }
        }
    }
}

/// Many sockets, each with a read and a write with deadlines of their
/// own, some fed in time, some not: each completed read has exactly its
/// own socket's bytes, each request ends, every buffer comes back.
///
/// The sockets fed in time have deadlines seconds away, the others 30 to
/// 150 ms: a deadline counts from the request's start, and with 30 ms for
/// all, a socket fed "in time" timed out when the setting up of the other
/// sockets took longer than that (a loaded machine: another test beside
/// this one), failing the test with no fault in the library.
#[test]
fn many_sockets_with_deadlines_match_their_own_completions() {
    use std::os::unix::net::UnixStream;
    for b in BACKENDS {
        let mut pairs = Vec::new();
        for i in 0..64u32 {
            let (a, peer) = UnixStream::pair().unwrap();
            let f = AsyncFile::from_fd(OwnedFd::from(a), b).unwrap();
            let fed_in_time = if i % 2 == 0 { 3_000 } else { 0 };
            f.set_timeout(Some(Duration::from_millis(
                fed_in_time + 30 + (i as u64 * 13) % 120,
            )));
            let r = f.read(16).unwrap();
            let wr = f.write(Buf::from(vec![i as u8; 64])).unwrap();
            pairs.push((i, f, peer, r, wr));
        }
        // Feed every other socket now (in time).
        for (i, _, peer, _, _) in &mut pairs {
            if *i % 2 == 0 {
                peer.write_all(&[*i as u8; 16]).unwrap();
            }
        }
        for (i, f, mut peer, r, wr) in pairs {
            let out = r.wait(LONG);
            if i % 2 == 0 {
                assert!(matches!(out, Ok(true)), "{b:?} socket {i}: {out:?}");
                assert_eq!(r.into_inner()[..], [i as u8; 16][..], "{b:?} socket {i}");
            } else {
                let e = out.unwrap_err();
                assert_eq!(e.kind(), ErrorKind::TimedOut, "{b:?} socket {i}: {e}");
                r.clear_exception();
                assert!(r.try_into_inner(LONG).is_ok());
            }
            // The write waits its turn behind the read (one chain per
            // descriptor): behind a read that timed out, it may time out
            // too, having sent nothing.
            match wr.wait(LONG) {
                Ok(true) => {
                    let mut got = [0u8; 64];
                    peer.read_exact(&mut got).unwrap();
                    assert_eq!(got, [i as u8; 64], "{b:?} socket {i}");
                }
                Err(e) if i % 2 == 1 && e.kind() == ErrorKind::TimedOut => {
                    assert!(e.to_string().contains("after 0 of 64"), "{e}");
                    peer.set_nonblocking(true).unwrap();
                    let mut got = [0u8; 64];
                    assert!(peer.read(&mut got).is_err(), "{b:?} socket {i}: bytes sent");
                }
                other => panic!("{b:?} socket {i}: write {other:?}"),
            }
            drop(wr);
            f.close().unwrap();
        }
    }
}

/// Dropping files and requests in flight with deadlines: nothing hangs,
/// nothing crashes, a later request on a fresh file works.
#[test]
fn dropping_in_flight_with_deadlines() {
    for b in BACKENDS {
        for i in 0..100u64 {
            let (f, w) = async_pipe_reader(b);
            f.set_timeout(Some(Duration::from_micros(i * 30)));
            let r1 = f.read(8).unwrap();
            let r2 = f.read(8).unwrap();
            if i % 2 == 0 {
                drop(f);
                drop(r1);
            } else {
                drop(r2);
                drop(f);
                let _ = r1.wait(LONG);
                continue;
            }
            drop(w);
            let _ = r2.wait(LONG);
        }
        let (f, mut w) = async_pipe_reader(b);
        f.set_timeout(Some(Duration::from_secs(10)));
        let r = f.read(2).unwrap();
        w.write_all(b"ok").unwrap();
        assert!(r.wait(LONG).unwrap());
    }
}

/// A terminal nobody reads: a write into it must time out at its deadline
/// (the doc: "What the deadline stops is waiting: for a pipe, socket or
/// terminal to have data or room"). A terminal's writes go to the thread
/// pool (they are "pipe writes"), whose `pwritev2(RWF_NOWAIT)` the tty
/// driver refuses: the fallback is a blocking `write(2)`.
#[test]
fn a_write_into_a_stuck_terminal_times_out() {
    let mut failures = Vec::new();
    for b in [Backend::Auto, Backend::Threads] {
        let (master, slave) = pty();
        // Raw mode: no echo, no line discipline surprises.
        // SAFETY: termios is plain data; the calls read and write the
        // struct owned here on a descriptor that is open.
        unsafe {
            let mut t: libc::termios = std::mem::zeroed();
            libc::tcgetattr(std::os::fd::AsRawFd::as_raw_fd(&slave), &mut t);
            libc::cfmakeraw(&mut t);
            libc::tcsetattr(std::os::fd::AsRawFd::as_raw_fd(&slave), libc::TCSANOW, &t);
        }
        let f = AsyncFile::from_fd(slave, b).unwrap();
        f.set_timeout(Some(Duration::from_millis(100)));
        let req = f.write(Buf::from(vec![b'x'; 1 << 20])).unwrap();
        let t = Instant::now();
        let out = req.wait(Some(Duration::from_secs(3)));
        let waited = t.elapsed();
        // Unblock the worker whatever happened: drain the master.
        let mut m = std::fs::File::from(master);
        let drain = std::thread::spawn(move || {
            let mut buf = vec![0u8; 1 << 16];
            let mut n = 0usize;
            while n < (1 << 20) {
                match m.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => n += k,
                }
            }
        });
        if matches!(out, Ok(false)) {
            let _ = req.wait(Some(Duration::from_secs(10)));
        }
        drop(req);
        drop(f);
        let _ = drain.join();
        match out {
            Err(e) => assert_eq!(e.kind(), ErrorKind::TimedOut, "{b:?}: {e}"),
            Ok(done) => failures.push(format!(
                "{b:?}: a 1 MiB write into a terminal nobody reads, with a 100 ms \
                 deadline, was not over after {waited:?} (done={done})"
            )),
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// A terminal read with a deadline (nothing typed): times out.
#[test]
fn a_read_from_a_quiet_terminal_times_out() {
    for b in BACKENDS {
        let (_master, slave) = pty();
        let f = AsyncFile::from_fd(slave, b).unwrap();
        f.set_timeout(Some(Duration::from_millis(50)));
        let r = f.read(10).unwrap();
        let e = r.wait(LONG).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::TimedOut, "{b:?}: {e}");
        r.clear_exception();
        assert!(r.try_into_inner(LONG).is_ok());
    }
}

/// Thread pool: poll says the pipe is readable, another reader takes the
/// byte first, and the worker's plain `read(2)` blocks in the kernel where
/// neither deadline nor cancel reaches it. (Reads were not moved to
/// RWF_NOWAIT as writes were.) Each round has a 100 ms deadline; none may
/// be pending after 2 s.
#[test]
fn a_threads_read_losing_a_race_still_meets_its_deadline() {
    let mut stuck = 0;
    let mut rounds = 0;
    // Load on both cores makes the lost race (poll ready, the byte taken
    // by the rival before the worker's read) far likelier.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let burners: Vec<_> = (0..3)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 1u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(3) ^ 7);
                }
            })
        })
        .collect();
    while rounds < 300 && stuck == 0 {
        rounds += 1;
        let (r, mut w) = std::io::pipe().unwrap();
        let mut competitor = r.try_clone().unwrap();
        let f = AsyncFile::from_fd(OwnedFd::from(r), Backend::Threads).unwrap();
        f.set_timeout(Some(Duration::from_millis(100)));
        let rival = std::thread::spawn(move || {
            let mut b = [0u8; 1];
            let _ = competitor.read(&mut b);
        });
        let req = f.read(1).unwrap();
        std::thread::sleep(Duration::from_millis(10));
        w.write_all(b"A").unwrap();
        let out = req.wait(Some(Duration::from_secs(2)));
        // Whoever is still blocked gets a byte now.
        w.write_all(b"BB").unwrap();
        let _ = req.wait(LONG);
        let _ = rival.join();
        if matches!(out, Ok(false)) {
            stuck += 1;
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for b in burners {
        b.join().unwrap();
    }
    assert_eq!(
        stuck, 0,
        "{stuck} of {rounds} thread-pool reads with a 100 ms deadline were still pending after 2 s"
    );
}

/// Hundreds of pipes, each with a read that nobody feeds and a 200 ms
/// deadline, all in flight at once (more linked pairs than the ring's
/// submission queue holds): every one times out, none early, none hangs,
/// every buffer comes back.
#[test]
fn many_pipes_time_out_together() {
    for b in BACKENDS {
        let mut v = Vec::new();
        let t = Instant::now();
        for _ in 0..600 {
            let (f, w) = async_pipe_reader(b);
            f.set_timeout(Some(Duration::from_millis(200)));
            let r = f.read(32).unwrap();
            v.push((f, w, r));
        }
        for (i, (_, _, r)) in v.iter().enumerate() {
            let e = r.wait(Some(Duration::from_secs(20))).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::TimedOut, "{b:?} #{i}: {e}");
        }
        assert!(t.elapsed() >= Duration::from_millis(200));
        for (f, w, r) in v {
            r.clear_exception();
            assert!(r.try_into_inner(LONG).is_ok(), "{b:?}");
            drop(w);
            f.close().unwrap();
        }
    }
}

/// Regular-file reads with deadlines, short and long, many in flight: a
/// completed one has exactly its own offset's bytes; a timed-out one gives
/// its buffer back.
#[test]
fn regular_file_reads_with_deadlines_get_their_own_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("data");
    let data: Vec<u8> = (0..(8u32 << 20))
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    std::fs::write(&p, &data).unwrap();
    for b in BACKENDS {
        let f = AsyncFile::with_options(&p, std::fs::File::options().read(true), b).unwrap();
        let mut reqs = Vec::new();
        for i in 0..512u64 {
            f.set_timeout(Some(if i % 2 == 0 {
                Duration::from_nanos(1 + i * 997)
            } else {
                Duration::from_secs(30)
            }));
            let off = (i * 16411) % ((8 << 20) - 65536);
            reqs.push((i, off, f.read_at(off, 65536).unwrap()));
        }
        let mut timed_out = 0;
        for (i, off, r) in reqs {
            match r.wait(LONG) {
                Ok(true) => {
                    let got = r.into_inner();
                    assert_eq!(
                        &got[..],
                        &data[off as usize..off as usize + 65536],
                        "{b:?} #{i}"
                    );
                }
                Ok(false) => panic!("{b:?} #{i}: pending after 5 s"),
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::TimedOut, "{b:?} #{i}: {e}");
                    assert!(i % 2 == 0, "{b:?} #{i}: a 30 s deadline timed out: {e}");
                    timed_out += 1;
                    r.clear_exception();
                    assert!(r.try_into_inner(LONG).is_ok());
                }
            }
        }
        eprintln!("{b:?}: {timed_out} of 256 short-deadline reads timed out");
    }
}

/// After fork, the child's requests (ring unusable there: thread pool)
/// keep their deadlines.
#[test]
fn a_child_after_fork_keeps_deadlines() {
    let (f, _w) = async_pipe_reader(Backend::Auto);
    // Parent uses the file once so the ring/pool exist.
    f.set_timeout(Some(Duration::from_millis(10)));
    let r = f.read(1).unwrap();
    assert_eq!(r.wait(LONG).unwrap_err().kind(), ErrorKind::TimedOut);
    // SAFETY: the child only evaluates the request and calls _exit.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            f.set_timeout(Some(Duration::from_millis(50)));
            let r = f.read(1).unwrap();
            match r.wait(Some(Duration::from_secs(3))) {
                Err(e) if e.kind() == ErrorKind::TimedOut => 0,
                Ok(false) => 3,
                _ => 4,
            }
        }))
        .unwrap_or(5);
        // SAFETY: _exit ends the forked child without running the
        // parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let mut st = 0;
    // SAFETY: waitpid writes one int the call owns.
    unsafe { libc::waitpid(pid, &mut st, 0) };
    assert!(libc::WIFEXITED(st), "child died: {st}");
    assert_eq!(
        libc::WEXITSTATUS(st),
        0,
        "child: 3 = hung past its deadline, 4 = other"
    );
}

/// The byte count a timed-out write reports ("timed out after N of M")
/// is what the reader actually gets: pipes and sockets, both backends.
#[test]
fn a_timed_out_write_reports_exactly_what_moved() {
    use std::os::unix::net::UnixStream;
    fn moved(msg: &str) -> usize {
        msg.split("timed out after ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{msg}"))
    }
    let mut failures = Vec::new();
    for b in BACKENDS {
        for kind in ["pipe", "socket"] {
            let (wfd, mut reader): (OwnedFd, Box<dyn Read>) = if kind == "pipe" {
                let (r, w) = std::io::pipe().unwrap();
                (OwnedFd::from(w), Box::new(r))
            } else {
                let (a, peer) = UnixStream::pair().unwrap();
                (OwnedFd::from(a), Box::new(peer))
            };
            let f = AsyncFile::from_fd(wfd, b).unwrap();
            f.set_timeout(Some(Duration::from_millis(100)));
            let total = 8 << 20;
            let req = f.write(Buf::from(vec![9u8; total])).unwrap();
            let e = req.wait(LONG).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::TimedOut, "{b:?} {kind}: {e}");
            let n = moved(&e.to_string());
            drop(req);
            f.close().unwrap();
            let mut got = Vec::new();
            reader.read_to_end(&mut got).unwrap();
            if got.len() != n {
                failures.push(format!(
                    "{b:?} {kind}: reported {n} bytes moved, reader got {}",
                    got.len()
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}
