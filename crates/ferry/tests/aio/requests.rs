//! ferry::aio on both backends (io_uring and worker threads): requests
//! that own their buffers, done/wait with timeouts, all/any, cancel and
//! sticky errors, start-time checks, drops and closes while the kernel
//! still holds a buffer (a pipe nobody writes is the slow device), the
//! Future, and a model of the request state machine under any
//! interleaving of submit/done/cancel/clear/feed/close.

use crate::support::async_pipe_reader;
use ferry::aio::{all_done, any_done, is_cancelled, AsyncFile, Backend, Pending, State};
use ferry::bulk::{Endian, ReadArray, WriteArray};
use ferry::{Buf, BufMut};
use proptest::prelude::*;
use std::future::Future;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::task::{Context, Poll, Wake};
use std::time::Duration;

const BACKENDS: [Backend; 2] = [Backend::IoUring, Backend::Threads];
const SHORT: Option<Duration> = Some(Duration::from_millis(30));
const LONG: Option<Duration> = Some(Duration::from_secs(5));

fn rw(path: &std::path::Path, b: Backend) -> AsyncFile {
    AsyncFile::with_options(
        path,
        std::fs::File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true),
        b,
    )
    .unwrap()
}

fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(29) ^ (i >> 10) as u8 ^ seed)
        .collect()
}

#[test]
fn round_trips_on_both_backends() {
    for b in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = rw(&p, b);
        assert_eq!(f.backend(), b);
        let data = bytes(3 << 20, 1);
        let w = f.write_at(0, Buf::from(data.clone())).unwrap();
        assert!(w.wait(LONG).unwrap(), "{b:?}");
        assert_eq!((w.state(), w.bytes()), (State::Completed, Some(3 << 20)));
        let r = f.read_at(1000, 2 << 20).unwrap();
        assert!(r.wait(LONG).unwrap());
        let got = r.into_inner();
        assert_eq!(got[..], data[1000..1000 + (2 << 20)], "{b:?}");
        assert_eq!(got.as_ptr() as usize % 4096, 0, "page-aligned");

        // Typed arrays in Java's byte order, and sequential requests that
        // take the position when they start.
        f.seek(0).unwrap();
        let v: Vec<u32> = (0..100_000).map(|i| i * 7).collect();
        let a = f.write_array(v.clone(), Endian::Big).unwrap();
        let c = f.write_array(vec![1u16, 2], Endian::Little).unwrap();
        assert_eq!(f.position(), 400_004);
        assert!(all_done(&[&a as &dyn Pending, &c], LONG).unwrap());
        assert_eq!(a.into_inner(), v, "the vector comes back as it went in");
        let on_disk = std::fs::read(&p).unwrap();
        assert_eq!(&on_disk[..4], &0u32.to_be_bytes());
        assert_eq!(&on_disk[4..8], &7u32.to_be_bytes());
        assert_eq!(&on_disk[400_000..400_004], &[1, 0, 2, 0]);
        let r = f.read_array_at(4, vec![0u32; 99_999], Endian::Big).unwrap();
        assert!(r.wait(LONG).unwrap());
        assert_eq!(r.into_inner()[..], v[1..]);

        // Bulk calls on the AsyncFile itself: started and waited at once.
        let mut g = rw(&dir.path().join("g"), b);
        g.write_array_in(&[5u64, 6, 7], Endian::Big).unwrap();
        g.seek(8).unwrap();
        let mut two = [0u64; 2];
        g.read_array_in(&mut two, Endian::Big).unwrap();
        assert_eq!(two, [6, 7]);
        f.close().unwrap();
    }
}

#[test]
fn checks_happen_when_a_request_starts() {
    for b in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let f = rw(&dir.path().join("f"), b);
        f.write_at(0, Buf::from(vec![1u8; 100]))
            .unwrap()
            .wait(LONG)
            .unwrap();
        let e = f.read_at(50, 51).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{b:?}");
        assert!(e.to_string().contains("passes the end of the file"), "{e}");
        let e = f.read_array_at(96, vec![0u64; 1], Endian::Big).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
        let e = f
            .write_at(u64::MAX - 5, Buf::from_static(b"abcdefgh"))
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        // Exactly to the end is fine.
        let r = f.read_at(0, 100).unwrap();
        assert!(r.wait(LONG).unwrap());
        let e = AsyncFile::with_options(dir.path(), std::fs::File::options().read(true), b)
            .unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::IsADirectory);
        let e = AsyncFile::open(dir.path().join("missing")).unwrap_err();
        assert!(e.to_string().contains("missing"), "{e}");
    }
}

#[test]
fn a_slow_device_waits_times_out_and_completes() {
    for b in BACKENDS {
        let (f, mut w) = async_pipe_reader(b);
        let r = f.read(10).unwrap();
        assert!(!r.done().unwrap());
        assert!(!r.wait(SHORT).unwrap(), "{b:?}");
        assert_eq!(r.state(), State::InFlight);
        assert!(!r.is_released());
        w.write_all(b"0123456789").unwrap();
        assert!(r.wait(LONG).unwrap());
        assert_eq!(r.into_inner()[..], b"0123456789"[..]);
        // A writer that goes away before the request is whole: the
        // request fails (sticky), with what arrived kept in its buffer.
        let r = f.read(10).unwrap();
        w.write_all(b"abc").unwrap();
        drop(w);
        let e = r.wait(LONG).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof, "{b:?} {e}");
        assert_eq!(
            r.done().unwrap_err().kind(),
            std::io::ErrorKind::UnexpectedEof
        );
        assert_eq!(r.state(), State::Failed);
        r.clear_exception();
        assert_eq!(r.state(), State::Cleared);
        assert!(r.done().unwrap());
        assert!(r.wait(None).unwrap());
    }
}

/// `ferry::stream::os_error` finds the OS error beneath a failed
/// request's error (the C library maps errors to `errno` with it): a
/// write the device refuses, and an offset given to a device that has
/// none, refused when the request starts.
#[test]
fn a_failed_request_tells_its_os_error() {
    for b in BACKENDS {
        let full = AsyncFile::with_options(
            std::path::Path::new("/dev/full"),
            std::fs::File::options().write(true),
            b,
        )
        .unwrap();
        let w = full.write(Buf::from(vec![1u8; 4096])).unwrap();
        let e = w.wait(LONG).unwrap_err();
        assert_eq!(ferry::stream::os_error(&e), Some(libc::ENOSPC), "{b:?} {e}");
        let e = full.write_at(0, Buf::from(vec![1u8; 10])).unwrap_err();
        assert_eq!(ferry::stream::os_error(&e), Some(libc::ESPIPE), "{b:?} {e}");
    }
}

#[test]
fn cancel_is_sticky_until_cleared_and_the_buffer_comes_back() {
    for b in BACKENDS {
        let (f, mut w) = async_pipe_reader(b);
        let r = f.read(4096).unwrap();
        r.cancel();
        for _ in 0..3 {
            let e = r.done().unwrap_err();
            assert!(is_cancelled(&e), "{b:?} {e}");
            assert_eq!(e.kind(), std::io::ErrorKind::Interrupted);
        }
        assert_eq!(r.state(), State::Cancelled);
        assert!(is_cancelled(
            &all_done(&[&r as &dyn Pending], SHORT).unwrap_err()
        ));
        r.clear_exception();
        assert!(r.done().unwrap());
        assert!(r.wait_released(LONG), "{b:?}");
        assert_eq!(
            r.bytes(),
            Some(0),
            "{b:?}: nothing arrived before the cancel"
        );
        // The kernel lets go of the buffer (the read was stopped).
        let buf = r
            .try_into_inner(LONG)
            .unwrap_or_else(|r| panic!("{b:?}: the buffer does not come back: {r:?}"));
        assert!(buf.is_empty(), "{b:?}");
        // The pipe's bytes went to nobody: the next read gets them.
        w.write_all(b"after").unwrap();
        let r = f.read(5).unwrap();
        assert!(r.wait(LONG).unwrap());
        assert_eq!(r.into_inner()[..], b"after"[..]);

        // Cancelling a completed request changes nothing.
        let dir = tempfile::tempdir().unwrap();
        let g = rw(&dir.path().join("g"), b);
        let r = g.write_at(0, Buf::from_static(b"kept")).unwrap();
        assert!(r.wait(LONG).unwrap());
        r.cancel();
        assert_eq!((r.state(), r.bytes()), (State::Completed, Some(4)));
        assert!(r.done().unwrap());
    }
}

#[test]
fn an_io_error_is_sticky() {
    for b in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("w");
        std::fs::write(&p, vec![0u8; 4096]).unwrap();
        // Open for writing only: a read fails with EBADF when it runs.
        let f = AsyncFile::with_options(&p, std::fs::File::options().write(true), b).unwrap();
        let r = f.read_at(0, 4096).unwrap();
        let e = r.wait(LONG).unwrap_err();
        assert_eq!(ferry::stream::os_error(&e), Some(libc::EBADF), "{b:?} {e}");
        assert!(
            e.to_string().contains("read of 4096 bytes at offset 0"),
            "{e}"
        );
        let ok = f.write_at(0, Buf::from_static(b"x")).unwrap();
        ok.wait(LONG).unwrap();
        // Every wait that includes it reports it, in list order.
        for _ in 0..2 {
            let e = all_done(&[&ok as &dyn Pending, &r], LONG).unwrap_err();
            assert_eq!(ferry::stream::os_error(&e), Some(libc::EBADF));
        }
        assert_eq!(any_done(&[&ok as &dyn Pending, &r], LONG).unwrap(), Some(0));
        assert!(f.all_done(LONG).is_err());
        r.clear_exception();
        assert!(all_done(&[&ok as &dyn Pending, &r], LONG).unwrap());
        assert!(f.all_done(LONG).unwrap());
    }
}

#[test]
fn any_and_all_across_files_and_backends() {
    let (slow, mut w) = async_pipe_reader(Backend::IoUring);
    let (slow2, _w2) = async_pipe_reader(Backend::Threads);
    let dir = tempfile::tempdir().unwrap();
    let f = rw(&dir.path().join("f"), Backend::Threads);
    let a = slow.read(3).unwrap();
    let c = slow2.read(3).unwrap();
    let fast = f.write_at(0, Buf::from_static(b"fast")).unwrap();
    let list: [&dyn Pending; 3] = [&a, &c, &fast];
    assert_eq!(any_done(&list, LONG).unwrap(), Some(2));
    assert!(!all_done(&list, SHORT).unwrap());
    assert_eq!(any_done(&list[..2], SHORT).unwrap(), None);
    assert_eq!(any_done(&[], LONG).unwrap(), None);
    w.write_all(b"abc").unwrap();
    assert_eq!(any_done(&list[..2], LONG).unwrap(), Some(0));
    c.cancel();
    assert!(is_cancelled(&all_done(&list, LONG).unwrap_err()));
}

/// Every request dropped while the kernel still holds its buffer: the
/// backend keeps the memory until the completion, so bytes arriving later
/// land there and not in memory handed out since.
#[test]
fn dropping_requests_and_files_in_flight_frees_nothing_the_kernel_writes() {
    for b in BACKENDS {
        let mut writers = Vec::new();
        for _ in 0..8 {
            let (f, w) = async_pipe_reader(b);
            let r = f.read_array(vec![0u8; 100_000], Endian::Native).unwrap();
            drop(r);
            drop(f);
            writers.push(w);
        }
        // Memory of the same size as the dropped buffers, handed out now
        // (the allocator would reuse freed blocks first).
        let fresh: Vec<Vec<u8>> = (0..64).map(|i| vec![i as u8; 100_000]).collect();
        for mut w in writers {
            w.write_all(&[0xEE; 100_000]).unwrap();
        }
        // Let the backends take the data in.
        std::thread::sleep(Duration::from_millis(200));
        for (i, v) in fresh.iter().enumerate() {
            assert!(
                v.iter().all(|&x| x == i as u8),
                "{b:?}: block {i} written by the kernel"
            );
        }
    }
}

#[test]
fn close_cancels_reads_and_lets_writes_land() {
    for b in BACKENDS {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let f = rw(&p, b);
        let data = bytes(8 << 20, 3);
        let w = f.write_at(0, Buf::from(data.clone())).unwrap();
        f.close().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), data, "{b:?}");
        assert!(w.done().unwrap());

        let (slow, _w) = async_pipe_reader(b);
        let r = slow.read(10).unwrap();
        slow.close().unwrap();
        assert!(is_cancelled(&r.done().unwrap_err()), "{b:?}");
        assert!(r.is_released());
    }
}

struct Flag(std::sync::atomic::AtomicBool, std::thread::Thread);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
        self.1.unpark();
    }
}

/// The smallest executor: polls on each wake-up.
fn block_on<F: Future>(fut: F) -> (F::Output, usize) {
    let flag = Arc::new(Flag(false.into(), std::thread::current()));
    let waker = flag.clone().into();
    let mut cx = Context::from_waker(&waker);
    let mut fut = std::pin::pin!(fut);
    let mut polls = 0;
    loop {
        polls += 1;
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return (v, polls);
        }
        while !flag.0.swap(false, std::sync::atomic::Ordering::SeqCst) {
            std::thread::park_timeout(Duration::from_secs(5));
        }
    }
}

#[test]
fn a_request_is_a_future() {
    for b in BACKENDS {
        let (f, mut w) = async_pipe_reader(b);
        let r = f.read(6).unwrap();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            w.write_all(b"future").unwrap();
        });
        let (out, polls) = block_on(r);
        t.join().unwrap();
        assert_eq!(out.unwrap()[..], b"future"[..], "{b:?}");
        assert!(polls >= 2, "it was pending first, then woken");
        let (slow, _w) = async_pipe_reader(b);
        let r = slow.read(1).unwrap();
        r.cancel();
        let (out, _) = block_on(r);
        assert!(is_cancelled(&out.unwrap_err()));
    }
}

#[test]
fn the_environment_forces_threads() {
    // Backend::Auto takes io_uring here unless FERRY_AIO=threads: checked
    // in a child process so this process's environment stays as it is.
    if std::env::var_os("FERRY_AIO_CHILD").is_some() {
        let dir = tempfile::tempdir().unwrap();
        let f = AsyncFile::create(dir.path().join("f")).unwrap();
        println!("backend={:?}", f.backend());
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let name = test_name!(the_environment_forces_threads);
    for (env, want) in [("threads", "Threads"), ("", "IoUring")] {
        let out = std::process::Command::new(&exe)
            .args(["--exact", &name, "--nocapture"])
            .env("FERRY_AIO_CHILD", "1")
            .env("FERRY_AIO", env)
            .output()
            .unwrap();
        let s = String::from_utf8_lossy(&out.stdout);
        assert!(s.contains(&format!("backend={want}")), "{env}: {s}");
    }
}

/// What the model says a request is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum M {
    InFlight,
    Completed,
    Failed,
    Cancelled,
    Cleared,
}

#[derive(Clone, Debug)]
enum Step {
    /// A read of 4 bytes on a new pipe (slow device), or a write to a file.
    Submit(bool),
    Done(usize),
    Cancel(usize),
    Clear(usize),
    /// Feed the pipe of request i its 4 bytes.
    Feed(usize),
    /// Close the pipe's writer early (the read fails).
    Hangup(usize),
    Close(usize),
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    proptest::collection::vec(
        prop_oneof![
            any::<bool>().prop_map(Step::Submit),
            (0usize..8).prop_map(Step::Done),
            (0usize..8).prop_map(Step::Cancel),
            (0usize..8).prop_map(Step::Clear),
            (0usize..8).prop_map(Step::Feed),
            (0usize..8).prop_map(Step::Hangup),
            (0usize..8).prop_map(Step::Close),
        ],
        1..30,
    )
}

struct Live {
    req: ferry::aio::Request<BufMut>,
    file: Option<AsyncFile>,
    writer: Option<std::io::PipeWriter>,
    model: M,
}

fn run_model(b: Backend, steps: Vec<Step>) -> Result<(), TestCaseError> {
    let dir = tempfile::tempdir().unwrap();
    let file = rw(&dir.path().join("f"), b);
    file.write_at(0, Buf::from_static(b"abcd"))
        .unwrap()
        .wait(LONG)
        .unwrap();
    let mut live: Vec<Live> = Vec::new();
    for step in steps {
        match step {
            Step::Submit(pipe) => {
                if pipe {
                    let (f, w) = async_pipe_reader(b);
                    let req = f.read(4).unwrap();
                    live.push(Live {
                        req,
                        file: Some(f),
                        writer: Some(w),
                        model: M::InFlight,
                    });
                } else {
                    let req = file.read_at(0, 4).unwrap();
                    // A cached file's read completes; wait so the model
                    // knows it has.
                    prop_assert!(req.wait(LONG).unwrap());
                    live.push(Live {
                        req,
                        file: None,
                        writer: None,
                        model: M::Completed,
                    });
                }
            }
            Step::Done(i)
            | Step::Cancel(i)
            | Step::Clear(i)
            | Step::Feed(i)
            | Step::Hangup(i)
            | Step::Close(i)
                if i >= live.len() => {}
            Step::Done(i) => {
                let l = &live[i];
                let got = l.req.done();
                match l.model {
                    M::InFlight => prop_assert_eq!(got.unwrap(), false),
                    M::Completed | M::Cleared => prop_assert!(got.unwrap()),
                    M::Cancelled => prop_assert!(is_cancelled(&got.unwrap_err())),
                    M::Failed => {
                        prop_assert_eq!(got.unwrap_err().kind(), std::io::ErrorKind::UnexpectedEof)
                    }
                }
            }
            Step::Cancel(i) => {
                let l = &mut live[i];
                l.req.cancel();
                if l.model == M::InFlight {
                    l.model = M::Cancelled;
                }
            }
            Step::Clear(i) => {
                let l = &mut live[i];
                l.req.clear_exception();
                if matches!(l.model, M::Failed | M::Cancelled) {
                    l.model = M::Cleared;
                }
            }
            Step::Feed(i) => {
                let l = &mut live[i];
                if let (Some(w), Some(_)) = (l.writer.as_mut(), l.file.as_ref()) {
                    w.write_all(b"wxyz").unwrap();
                    if l.model == M::InFlight {
                        prop_assert!(l.req.wait(LONG).unwrap());
                        l.model = M::Completed;
                    }
                }
            }
            Step::Hangup(i) => {
                let l = &mut live[i];
                if l.writer.take().is_some() && l.model == M::InFlight {
                    prop_assert!(l.req.wait(LONG).is_err());
                    l.model = M::Failed;
                }
            }
            Step::Close(i) => {
                let l = &mut live[i];
                if let Some(f) = l.file.take() {
                    f.close().unwrap();
                    if l.model == M::InFlight {
                        l.model = M::Cancelled;
                    }
                }
            }
        }
        for l in &live {
            let want = match l.model {
                M::InFlight => State::InFlight,
                M::Completed => State::Completed,
                M::Failed => State::Failed,
                M::Cancelled => State::Cancelled,
                M::Cleared => State::Cleared,
            };
            prop_assert_eq!(l.req.state(), want);
        }
    }
    // Every buffer comes back; a completed read holds its bytes.
    for mut l in live {
        l.writer.take();
        l.req.cancel();
        let model = l.model;
        let buf = l
            .req
            .try_into_inner(LONG)
            .map_err(|_| TestCaseError::fail("buffer kept"))?;
        if model == M::Completed {
            prop_assert_eq!(buf.len(), 4);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn the_state_machine_follows_the_model_on_io_uring(s in steps()) {
        run_model(Backend::IoUring, s)?;
    }

    #[test]
    fn the_state_machine_follows_the_model_on_threads(s in steps()) {
        run_model(Backend::Threads, s)?;
    }
}

/// `set_timeout`: a request not over by its deadline fails `TimedOut`
/// (sticky, saying how many bytes moved), on a read with nothing or part
/// of it to read and on a write into a full pipe; the buffer comes back;
/// a request done in time is untouched by its deadline (nor are later
/// ones by its timeout, which the kernel then removes); the next request
/// on the pipe gets the bytes the timed-out one did not take.
#[test]
fn a_deadline_times_requests_out() {
    let short = Duration::from_millis(50);
    for b in BACKENDS {
        let (f, mut w) = async_pipe_reader(b);
        f.set_timeout(Some(short));
        let r = f.read(10).unwrap();
        let e = r.wait(LONG).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{b:?} {e}");
        assert!(
            e.to_string().contains("timed out after 0 of 10 bytes"),
            "{b:?} {e}"
        );
        assert_eq!(r.state(), State::Failed);
        assert_eq!(r.done().unwrap_err().kind(), std::io::ErrorKind::TimedOut);
        r.clear_exception();
        assert!(r.done().unwrap());
        assert!(r.try_into_inner(LONG).is_ok(), "{b:?}: no buffer back");
        // Part of it arrives in time.
        let r = f.read(10).unwrap();
        w.write_all(b"abc").unwrap();
        let e = r.wait(LONG).unwrap_err();
        assert!(
            e.to_string().contains("timed out after 3 of 10 bytes"),
            "{b:?} {e}"
        );
        // In time: completed, and many quick ones after it too.
        f.set_timeout(Some(Duration::from_secs(30)));
        for i in 0..50u8 {
            w.write_all(&[i; 7]).unwrap();
            let r = f.read(7).unwrap();
            assert!(r.wait(LONG).unwrap(), "{b:?}");
            assert_eq!(r.into_inner()[..], [i; 7][..]);
        }
        // Behind a request that times out, the next gets its bytes.
        f.set_timeout(Some(short));
        let first = f.read(4).unwrap();
        f.set_timeout(None);
        let second = f.read(4).unwrap();
        assert_eq!(
            first.wait(LONG).unwrap_err().kind(),
            std::io::ErrorKind::TimedOut
        );
        assert!(!second.wait(Some(short)).unwrap(), "{b:?}: no deadline");
        w.write_all(b"next").unwrap();
        assert!(second.wait(LONG).unwrap());
        assert_eq!(second.into_inner()[..], b"next"[..]);

        // A write into a pipe nobody drains.
        let (r, w) = std::io::pipe().unwrap();
        let out = AsyncFile::from_fd(OwnedFd::from(w), b).unwrap();
        out.set_timeout(Some(short));
        let big = Buf::from(vec![7u8; 4 << 20]);
        let req = out.write(big).unwrap();
        let e = req.wait(LONG).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::TimedOut, "{b:?} {e}");
        let msg = e.to_string();
        let moved: usize = msg
            .split("timed out after ")
            .nth(1)
            .and_then(|t| t.split(' ').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{b:?}: {msg}"));
        assert!(moved < 4 << 20, "{b:?}: {msg}");
        assert!(msg.contains(&format!("of {} bytes", 4 << 20)), "{msg}");
        assert!(req.try_into_inner(LONG).is_ok());
        drop(r);
    }
}
