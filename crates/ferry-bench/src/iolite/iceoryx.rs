//! ferry ipc beside iceoryx2, the shared-memory publish/subscribe peer:
//! two threads of this process, measured two ways.
//!
//! * iceoryx2's own method (its `benchmarks/publish-subscribe`): ping-pong
//!   between two threads pinned to CPUs 0 and 1 (when the machine lets
//!   us), a publisher/subscriber pair each way, the payload loaned and
//!   sent untouched, each side busy-polling its subscriber; the figure is
//!   one-way latency, the round trip over two. ferry runs the same
//!   exchange over two ipc channels (one each way), once with `recv`
//!   blocking in poll(2) and once busy-polling: on channels with rings,
//!   `set_spin` (the receiver spins on the ring, no system call); on
//!   channels without (`(socket)`), `set_timeout(ZERO)`, a `TimedOut`
//!   retried at once (a non-blocking `recvmsg` each time).
//! * The paper's method (IO-Lite §4, as in `ipc`): one stream of messages,
//!   the sender writing one word per page, the receiver reading one word
//!   per page; ferry's buffer face with `recv` blocking, iceoryx2 with
//!   `loan_slice_uninit` → words → `send` and a subscriber that
//!   busy-polls `receive` (a blocking receive needs iceoryx2's separate
//!   event service beside the stream; it is not used here). Every run
//!   counts the bytes and the words that arrived.
//!
//! iceoryx2 keeps its services in files (/dev/shm, /tmp/iceoryx2): every
//! run uses its own service names and a file prefix naming this process,
//! drops its nodes, services and ports at its end, and the case checks
//! afterwards that no file with that prefix is left (removing any it
//! finds, and failing).

use super::ipc::{err, ipc_pair, page_buf, read_words, write_words};
use crate::measure::{compare, interleave, Scale, Variant};
use crate::report::{Row, Target, Unit};
use iceoryx2::port::publisher::Publisher;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::service::port_factory::publish_subscribe::PortFactory as PubSub;
use std::io::ErrorKind;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

const PING_SIZES: [usize; 2] = [8, 4 << 10];
const ROUND_TRIPS: usize = 10_000;
const STREAM_SIZES: [usize; 3] = [4 << 10, 64 << 10, 1 << 20];
const TOTAL: usize = 256 << 20;
const PAGE: usize = 4096;

/// The prefix of every file iceoryx2 makes for this process.
fn prefix() -> String {
    format!("iox2_ferry_bench_{}_", std::process::id())
}

fn config() -> Result<Config, String> {
    let mut c = Config::default();
    c.global.prefix = FileName::new(prefix().as_bytes()).map_err(|e| format!("{e:?}"))?;
    Ok(c)
}

/// A node of its own for each thread (iceoryx2's `ipc` ports stay on the
/// thread that made them), leaving the process's signal handling alone.
fn node(c: &Config) -> Result<Node<ipc::Service>, String> {
    NodeBuilder::new()
        .config(c)
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<ipc::Service>()
        .map_err(|e| format!("iceoryx2 node: {e:?}"))
}

/// A service name no other run uses.
fn service_name(what: &str) -> Result<ServiceName, String> {
    static RUN: AtomicUsize = AtomicUsize::new(0);
    let run = RUN.fetch_add(1, Ordering::Relaxed);
    ServiceName::new(&format!("ferry-bench/{}/{run}/{what}", std::process::id()))
        .map_err(|e| format!("{e:?}"))
}

/// A publish/subscribe service of byte slices: `buffer` samples queued
/// per subscriber, the oldest overwritten if `overflow`, else the
/// publisher waits.
fn pubsub(
    n: &Node<ipc::Service>,
    name: &ServiceName,
    buffer: usize,
    overflow: bool,
) -> Result<PubSub<ipc::Service, [u8], ()>, String> {
    n.service_builder(name)
        .publish_subscribe::<[u8]>()
        .max_publishers(1)
        .max_subscribers(1)
        .history_size(0)
        .subscriber_max_buffer_size(buffer)
        .enable_safe_overflow(overflow)
        .open_or_create()
        .map_err(|e| format!("iceoryx2 service: {e:?}"))
}

fn publisher(
    s: &PubSub<ipc::Service, [u8], ()>,
    size: usize,
) -> Result<Publisher<ipc::Service, [u8], ()>, String> {
    s.publisher_builder()
        .initial_max_slice_len(size)
        .backpressure_strategy(BackpressureStrategy::RetryUntilDelivered)
        .create()
        .map_err(|e| format!("iceoryx2 publisher: {e:?}"))
}

fn subscriber(
    s: &PubSub<ipc::Service, [u8], ()>,
) -> Result<Subscriber<ipc::Service, [u8], ()>, String> {
    s.subscriber_builder()
        .create()
        .map_err(|e| format!("iceoryx2 subscriber: {e:?}"))
}

/// Pins the calling thread to `cpu`; a machine that refuses keeps the
/// thread where the scheduler puts it.
fn pin(cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

/// A loaned sample of `size` bytes, marked written without writing it.
fn loan(
    p: &Publisher<ipc::Service, [u8], ()>,
    size: usize,
) -> Result<iceoryx2::sample_mut::SampleMut<ipc::Service, [u8], ()>, String> {
    let s = p.loan_slice_uninit(size).map_err(|e| format!("{e:?}"))?;
    // SAFETY: the sample lives in iceoryx2's data segment, a shared
    // memory object the kernel zero-filled when it was made, so every
    // byte holds a value; this is what iceoryx2's own benchmark does to
    // send a payload untouched.
    Ok(unsafe { s.assume_init() })
}

/// Spins until a sample of `size` bytes arrives, or the other side gave
/// up (`stop`).
fn spin_receive(
    s: &Subscriber<ipc::Service, [u8], ()>,
    size: usize,
    stop: &AtomicBool,
) -> Result<(), String> {
    loop {
        match s.receive().map_err(|e| format!("{e:?}"))? {
            Some(x) if x.payload().len() == size => return Ok(()),
            Some(x) => return Err(format!("{} bytes arrived of {size}", x.payload().len())),
            None if stop.load(Ordering::Relaxed) => return Err("stopped".into()),
            None => std::hint::spin_loop(),
        }
    }
}

/// iceoryx2's ping-pong: `n` round trips of `size` bytes; the time of the
/// whole exchange, seen by the side that starts it. Each side runs on a
/// thread of its own, pinned; a side that fails stops the other.
fn iceoryx_ping_pong(size: usize, n: usize) -> Result<Duration, String> {
    let c = config()?;
    let main = node(&c)?;
    let (a2b, b2a) = (service_name("a2b")?, service_name("b2a")?);
    let _keep = (pubsub(&main, &a2b, 1, true)?, pubsub(&main, &b2a, 1, true)?);
    let ready = Barrier::new(2);
    let stop = AtomicBool::new(false);
    // One side: its ports (`tx` on `out`, `rx` on `back`), then `n` turns.
    let side = |cpu: usize, out: &ServiceName, back: &ServiceName, first: bool| {
        pin(cpu);
        let ports = node(&c).and_then(|me| {
            let tx = publisher(&pubsub(&me, out, 1, true)?, size)?;
            let rx = subscriber(&pubsub(&me, back, 1, true)?)?;
            Ok((tx, rx, me))
        });
        ready.wait();
        let t = Instant::now();
        // The tuple is dropped whole, its node last.
        let r = ports.and_then(|p| {
            let (tx, rx) = (&p.0, &p.1);
            for _ in 0..n {
                let s = loan(tx, size)?;
                if !first {
                    spin_receive(rx, size, &stop)?;
                }
                s.send().map_err(|e| format!("{e:?}"))?;
                if first {
                    spin_receive(rx, size, &stop)?;
                }
            }
            Ok(t.elapsed())
        });
        if r.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        r
    };
    std::thread::scope(|sc| {
        let ping = sc.spawn(|| side(0, &a2b, &b2a, true));
        let pong = sc.spawn(|| side(1, &b2a, &a2b, false));
        let t = ping
            .join()
            .map_err(|_| "the ping side panicked".to_string())?;
        let other = pong
            .join()
            .map_err(|_| "the pong side panicked".to_string())?;
        let t = t?;
        other?;
        Ok(t)
    })
}

/// A ferry ipc message received, busy-polling if `spin`.
fn ferry_receive(rx: &mut ferry::ipc::Receiver, size: usize, spin: bool) -> Result<(), String> {
    let msg = loop {
        match rx.recv() {
            Ok(Some(m)) => break m,
            Ok(None) => return Err("the sender closed".into()),
            Err(e) if spin && e.kind() == ErrorKind::TimedOut => std::hint::spin_loop(),
            Err(e) => return Err(err(e)),
        }
    };
    if msg.len() != size {
        return Err(format!("{} bytes arrived of {size}", msg.len()));
    }
    Ok(())
}

/// The same ping-pong over two ferry ipc channels. Each side owns its
/// ends: one that fails drops them, and the other's `recv` fails.
fn ferry_ping_pong(size: usize, n: usize, spin: bool, ring: bool) -> Result<Duration, String> {
    let (a_tx, b_rx) = ipc_pair(size, ring)?;
    let (b_tx, a_rx) = ipc_pair(size, ring)?;
    let ready = std::sync::Arc::new(Barrier::new(2));
    let side =
        |cpu: usize, mut tx: ferry::ipc::Sender, mut rx: ferry::ipc::Receiver, first: bool| {
            let ready = ready.clone();
            std::thread::spawn(move || -> Result<Duration, String> {
                pin(cpu);
                if spin && ring {
                    rx.set_spin(Duration::from_secs(1));
                } else if spin {
                    rx.set_timeout(Some(Duration::ZERO));
                }
                ready.wait();
                let t = Instant::now();
                for _ in 0..n {
                    let s = tx.alloc().map_err(err)?;
                    if !first {
                        ferry_receive(&mut rx, size, spin)?;
                    }
                    tx.send(ferry::Aggregate::from(s.freeze(size)))
                        .map_err(err)?;
                    if first {
                        ferry_receive(&mut rx, size, spin)?;
                    }
                }
                Ok(t.elapsed())
            })
        };
    let ping = side(0, a_tx, a_rx, true);
    let pong = side(1, b_tx, b_rx, false);
    let t = ping
        .join()
        .map_err(|_| "the ping side panicked".to_string())?;
    let other = pong
        .join()
        .map_err(|_| "the pong side panicked".to_string())?;
    let t = t?;
    other?;
    Ok(t)
}

/// The paper's stream through iceoryx2: `n` messages of `size` bytes, as
/// many queued as ferry's pool holds; the time from the first loan to the
/// last message read.
fn iceoryx_stream(size: usize, n: usize) -> Result<Duration, String> {
    let c = config()?;
    let main = node(&c)?;
    let name = service_name("stream")?;
    let queued = ((4 << 20) / size.next_multiple_of(PAGE)).max(16);
    let _keep = pubsub(&main, &name, queued, false)?;
    let ready = Barrier::new(2);
    let want = want_sum(size, n);
    let stop = AtomicBool::new(false);
    std::thread::scope(|sc| {
        let recv = sc.spawn(|| -> Result<(usize, u64), String> {
            let ports = node(&c).and_then(|me| {
                let rx = subscriber(&pubsub(&me, &name, queued, false)?)?;
                Ok((rx, me))
            });
            ready.wait();
            let ports = ports?;
            let rx = &ports.0;
            let (mut got, mut bytes, mut sum) = (0, 0, 0u64);
            while got < n {
                match rx.receive().map_err(|e| format!("{e:?}"))? {
                    Some(s) => {
                        sum = sum.wrapping_add(read_words(s.payload(), 0));
                        bytes += s.payload().len();
                        got += 1;
                    }
                    None if stop.load(Ordering::Relaxed) => return Err("stopped".into()),
                    None => std::hint::spin_loop(),
                }
            }
            Ok((bytes, sum))
        });
        let sender = node(&c).and_then(|me| {
            let tx = publisher(&pubsub(&me, &name, queued, false)?, size)?;
            Ok((tx, me))
        });
        ready.wait();
        let t = Instant::now();
        // The publisher stays until the subscriber took every sample: the
        // samples it queued go with it.
        let sent = sender.and_then(|p| {
            for m in 0..n {
                let mut s = loan(&p.0, size)?;
                write_words(s.payload_mut(), m as u64);
                s.send().map_err(|e| format!("{e:?}"))?;
            }
            Ok(p)
        });
        if sent.is_err() {
            stop.store(true, Ordering::Relaxed);
        }
        let got = recv.join().map_err(|_| "the receiver panicked".to_string());
        let t = t.elapsed();
        sent?;
        check(got??, size, n, want)?;
        Ok(t)
    })
}

/// The paper's stream through ferry ipc's buffer face, `recv` blocking.
fn ferry_stream(size: usize, n: usize) -> Result<Duration, String> {
    let (mut tx, mut rx) = ipc_pair(size, true)?;
    let want = want_sum(size, n);
    let t = Instant::now();
    let recv = std::thread::spawn(move || -> Result<(usize, u64), String> {
        let (mut bytes, mut sum) = (0, 0u64);
        while let Some(msg) = rx.recv().map_err(err)? {
            let mut at = 0;
            for c in msg.chunks() {
                sum = sum.wrapping_add(read_words(c, at));
                at += c.len();
            }
            bytes += at;
        }
        Ok((bytes, sum))
    });
    let sent = (0..n)
        .try_for_each(|m| {
            let mut s = tx.alloc().map_err(err)?;
            write_words(&mut s[..size], m as u64);
            tx.send(ferry::Aggregate::from(s.freeze(size))).map_err(err)
        })
        .and_then(|()| tx.close().map_err(err));
    let got = recv.join().map_err(|_| "the receiver panicked".to_string());
    let t = t.elapsed();
    sent?;
    check(got??, size, n, want)?;
    Ok(t)
}

/// The words a receiver reads from `n` messages of `size` bytes.
fn want_sum(size: usize, n: usize) -> u64 {
    let mut b = page_buf(size.min(2 * PAGE));
    let mut per_message = |m: usize| {
        write_words(&mut b, m as u64);
        read_words(&b[..1], 0) * size.div_ceil(PAGE) as u64
    };
    (0..n).fold(0u64, |acc, m| acc.wrapping_add(per_message(m)))
}

fn check((bytes, sum): (usize, u64), size: usize, n: usize, want: u64) -> Result<(), String> {
    if bytes != size * n {
        return Err(format!("{bytes} bytes arrived of {}", size * n));
    }
    if sum != want {
        return Err("the receiver read other words than were written".into());
    }
    Ok(())
}

/// Removes the files with this process's prefix left in `dir`; their
/// names.
fn leftovers(dir: &std::path::Path, prefix: &str) -> Vec<String> {
    let mut left = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return left;
    };
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            left.extend(leftovers(&path, prefix));
        } else if e.file_name().to_string_lossy().starts_with(prefix) {
            let _ = std::fs::remove_file(&path);
            left.push(path.display().to_string());
        }
    }
    left
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let rows = measure(runs, scale);
    let p = prefix();
    let mut left = leftovers(std::path::Path::new("/dev/shm"), &p);
    left.extend(leftovers(std::path::Path::new("/tmp/iceoryx2"), &p));
    let rows = rows?;
    // iceoryx2 keeps one management file per process for as long as the
    // process lives: gone now, it is no leftover of a run.
    left.retain(|f| !f.ends_with(".global_mgmt"));
    if !left.is_empty() {
        return Err(format!(
            "iceoryx2 left files behind (removed): {}",
            left.join(", ")
        ));
    }
    Ok(rows)
}

fn measure(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let mut rows = Vec::new();
    let n = scale.of(ROUND_TRIPS).max(10);
    for size in PING_SIZES {
        let mut vs = vec![
            Variant::new("iceoryx2 busy poll", || {
                Ok((iceoryx_ping_pong(size, n)?, 2.0 * n as f64))
            }),
            Variant::new("ferry ipc busy poll", || {
                Ok((ferry_ping_pong(size, n, true, true)?, 2.0 * n as f64))
            }),
            Variant::new("ferry ipc poll(2) wake-up", || {
                Ok((ferry_ping_pong(size, n, false, true)?, 2.0 * n as f64))
            }),
            Variant::new("ferry ipc busy poll (socket)", || {
                Ok((ferry_ping_pong(size, n, true, false)?, 2.0 * n as f64))
            }),
            Variant::new("ferry ipc poll(2) wake-up (socket)", || {
                Ok((ferry_ping_pong(size, n, false, false)?, 2.0 * n as f64))
            }),
        ];
        let s = interleave(runs, &mut vs)?;
        let what = if size < 1024 {
            format!("{size} B ping-pong, one-way latency")
        } else {
            format!("{} KiB ping-pong, one-way latency", size >> 10)
        };
        for ferry in [
            "ferry ipc busy poll",
            "ferry ipc poll(2) wake-up",
            "ferry ipc busy poll (socket)",
            "ferry ipc poll(2) wake-up (socket)",
        ] {
            rows.push(compare(
                &s,
                &format!("{what}: {ferry} vs iceoryx2 busy poll"),
                ferry,
                "iceoryx2 busy poll",
                Unit::NsPerOp,
                Target::MinRatio(0.5),
                runs,
            ));
        }
    }
    for size in STREAM_SIZES {
        let n = (scale.of(TOTAL) / size).max(4);
        let mut vs = vec![
            Variant::new("ipc buffers", || {
                Ok((ferry_stream(size, n)?, (size * n) as f64))
            }),
            Variant::new("iceoryx2 busy poll", || {
                Ok((iceoryx_stream(size, n)?, (size * n) as f64))
            }),
        ];
        let s = interleave(runs, &mut vs)?;
        let kib = size >> 10;
        rows.push(compare(
            &s,
            &format!("{kib} KiB messages: ipc buffers vs iceoryx2 busy poll"),
            "ipc buffers",
            "iceoryx2 busy poll",
            Unit::GBps,
            Target::None,
            runs,
        ));
    }
    Ok(rows)
}
