//! Moving messages between a sender and a receiver (IO-Lite §4, Figures 2
//! and 3): throughput and CPU per GiB across message sizes, for the
//! kernel's channels and for ferry's copy-free one.
//!
//! The paper's rule: the sender writes one word per page of each message
//! before it sends it and the receiver reads one word per page after it
//! got it, so every page is touched on both sides but the cost of
//! producing and consuming the data does not hide the channel's. The two
//! ends are two threads of this process (the kernel's work per message is
//! the one it does between processes; ferry's receiver maps the pool on
//! its own, as another process would). The channels:
//!
//! * `pipe`: `write` → `read` through a pipe of the default size;
//! * `vmsplice→splice`: the sender's pages go into the pipe by reference,
//!   the receiver splices them to /dev/null — it never touches the
//!   payload, which favours this baseline;
//! * `unix`: a Unix stream socket pair, `write` → `read`;
//! * `tcp`: loopback TCP, `write` → `read`;
//! * `ipc bytes`: ferry ipc's `Write`/`Read` face (copied into the pool,
//!   out of it into the reader's buffer);
//! * `ipc buffers`: ferry ipc's buffer face: the sender writes into a slot
//!   of the pool and sends it by reference; the receiver reads the
//!   sender's page in place.
//!
//! Both ipc channels run twice: with the descriptors in rings in shared
//! memory (the default, the socket only a doorbell for a receiver that
//! sleeps) and with each batch of descriptors a packet on the socket
//! (`(socket)`, `SenderConfig::ring` off). The receiver blocks in `recv`
//! (no spin) in both.
//!
//! CPU per GiB is the process's user + system time (both threads) over
//! the run, divided by the bytes moved.

use crate::measure::{median, Scale};
use crate::report::{Row, Target, Unit};
use ferry::ipc::{self, Receiver, Sender, SenderConfig};
use ferry::Aggregate;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

const SIZES: [usize; 6] = [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];
const TOTAL: usize = 256 << 20;
const PAGE: usize = 4096;

/// A page-aligned buffer of `len` bytes.
pub(super) fn page_buf(len: usize) -> ferry::BufMut {
    let mut b = ferry::BufMut::with_capacity_aligned(len.max(1), PAGE);
    b.commit(len); // zeroed memory
    b
}

/// The sender's side of the rule: one word per page, changing each message.
pub(super) fn write_words(b: &mut [u8], m: u64) {
    for at in (0..b.len()).step_by(PAGE) {
        let end = (at + 8).min(b.len());
        b[at..end].copy_from_slice(&m.to_le_bytes()[..end - at]);
    }
}

/// The receiver's side: one word per page of the bytes at `at` in the
/// message (a page boundary of the message every `PAGE` bytes).
pub(super) fn read_words(b: &[u8], at: usize) -> u64 {
    let mut sum = 0u64;
    let first = at.next_multiple_of(PAGE) - at;
    for i in (first..b.len()).step_by(PAGE) {
        sum = sum.wrapping_add(u64::from(b[i]));
    }
    sum
}

type Outcome = Result<(usize, u64), String>;

/// What a channel's two ends do with `n` messages of `size` bytes: the
/// sender and the receiver, each run on its own thread.
struct Ends {
    send: Box<dyn FnOnce() -> Result<(), String> + Send>,
    recv: Box<dyn FnOnce() -> Outcome + Send>,
}

pub(super) fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// A byte stream's ends: `write` of the touched buffer, `read` of whole
/// messages, then the words.
fn stream_ends<W, R>(mut w: W, mut r: R, size: usize, n: usize) -> Ends
where
    W: Write + Send + 'static,
    R: Read + Send + 'static,
{
    Ends {
        send: Box::new(move || {
            let mut b = page_buf(size);
            for m in 0..n {
                write_words(&mut b, m as u64);
                w.write_all(&b).map_err(err)?;
            }
            Ok(())
        }),
        recv: Box::new(move || {
            let mut b = page_buf(size);
            let (mut bytes, mut sum) = (0, 0u64);
            loop {
                match r.read_exact(&mut b) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(err(e)),
                }
                sum = sum.wrapping_add(read_words(&b, 0));
                bytes += size;
            }
            Ok((bytes, sum))
        }),
    }
}

fn vmsplice_ends(size: usize, n: usize) -> Result<Ends, String> {
    let (r, w) = rustix::pipe::pipe().map_err(err)?;
    let null = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .map_err(err)?;
    Ok(Ends {
        send: Box::new(move || {
            // Buffers in turn, more than the pipe holds, kept until the end:
            // a page is never written while the pipe may still hold it.
            let ring = (2 * (64 << 10) / size).max(2) + 1;
            let mut bufs: Vec<ferry::BufMut> = (0..ring).map(|_| page_buf(size)).collect();
            for m in 0..n {
                let b = &mut bufs[m % ring];
                write_words(b, m as u64);
                let mut rest: &[u8] = b;
                while !rest.is_empty() {
                    // SAFETY: the pages stay allocated and unwritten until
                    // the pipe gave them to the reader: each buffer is
                    // rewritten only `ring` messages later, and every
                    // buffer lives until this closure returns, after the
                    // last vmsplice.
                    let k = unsafe {
                        rustix::pipe::vmsplice(
                            w.as_fd(),
                            &[rustix::pipe::IoSliceRaw::from_slice(rest)],
                            rustix::pipe::SpliceFlags::empty(),
                        )
                    }
                    .map_err(err)?;
                    rest = &rest[k..];
                }
            }
            drop(w);
            drop(bufs);
            Ok(())
        }),
        recv: Box::new(move || {
            let mut bytes = 0;
            loop {
                let k = rustix::pipe::splice(
                    r.as_fd(),
                    None,
                    null.as_fd(),
                    None,
                    1 << 20,
                    rustix::pipe::SpliceFlags::MOVE,
                )
                .map_err(err)?;
                if k == 0 {
                    break;
                }
                bytes += k;
            }
            Ok((bytes, 0))
        }),
    })
}

/// A ferry ipc channel: the pool holds at least 4 MiB and 16 messages;
/// descriptors in rings if `ring`, else in packets on the socket.
pub(super) fn ipc_pair(size: usize, ring: bool) -> Result<(Sender, Receiver), String> {
    let slot = size.next_multiple_of(PAGE);
    let slots = ((4 << 20) / slot).max(16);
    let (a, b) = ipc::pair().map_err(err)?;
    let tx = Sender::new(
        a,
        SenderConfig {
            slot_size: slot,
            slots,
            timeout: Some(Duration::from_secs(60)),
            ring,
        },
    )
    .map_err(err)?;
    // SAFETY: the peer is the ferry Sender just made, and nothing else
    // writes on its socket.
    let rx = unsafe { Receiver::new(b, Some(Duration::from_secs(60))) }.map_err(err)?;
    Ok((tx, rx))
}

fn ipc_bytes_ends(size: usize, n: usize, ring: bool) -> Result<Ends, String> {
    let (tx, rx) = ipc_pair(size, ring)?;
    Ok(stream_ends(tx, rx, size, n))
}

fn ipc_buffers_ends(size: usize, n: usize, ring: bool) -> Result<Ends, String> {
    let (mut tx, mut rx) = ipc_pair(size, ring)?;
    Ok(Ends {
        send: Box::new(move || {
            for m in 0..n {
                let mut s = tx.alloc().map_err(err)?;
                write_words(&mut s[..size], m as u64);
                tx.send(Aggregate::from(s.freeze(size))).map_err(err)?;
            }
            tx.close().map_err(err)
        }),
        recv: Box::new(move || {
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
        }),
    })
}

fn tcp_ends(size: usize, n: usize) -> Result<Ends, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(err)?;
    let w = TcpStream::connect(l.local_addr().map_err(err)?).map_err(err)?;
    let (r, _) = l.accept().map_err(err)?;
    Ok(stream_ends(w, r, size, n))
}

/// The channels, by name.
const CHANNELS: [&str; 8] = [
    "pipe",
    "vmsplice→splice",
    "unix",
    "tcp",
    "ipc bytes",
    "ipc buffers",
    "ipc bytes (socket)",
    "ipc buffers (socket)",
];

fn ends(channel: &str, size: usize, n: usize) -> Result<Ends, String> {
    match channel {
        "pipe" => {
            let (r, w) = std::io::pipe().map_err(err)?;
            Ok(stream_ends(w, r, size, n))
        }
        "vmsplice→splice" => vmsplice_ends(size, n),
        "unix" => {
            let (w, r) = UnixStream::pair().map_err(err)?;
            Ok(stream_ends(w, r, size, n))
        }
        "tcp" => tcp_ends(size, n),
        "ipc bytes" => ipc_bytes_ends(size, n, true),
        "ipc buffers" => ipc_buffers_ends(size, n, true),
        "ipc bytes (socket)" => ipc_bytes_ends(size, n, false),
        "ipc buffers (socket)" => ipc_buffers_ends(size, n, false),
        other => Err(format!("no channel {other}")),
    }
}

fn cpu() -> Result<Duration, String> {
    let (u, s) = ferry::process_cpu_time().map_err(err)?;
    Ok(u + s)
}

/// One run: seconds and CPU seconds per byte.
fn run_once(channel: &str, size: usize, n: usize) -> Result<(f64, f64), String> {
    let Ends { send, recv } = ends(channel, size, n)?;
    let (c0, t0) = (cpu()?, Instant::now());
    let receiver = std::thread::spawn(recv);
    let sent = send();
    let got = receiver
        .join()
        .map_err(|_| format!("{channel}: the receiver panicked"))?;
    let (wall, used) = (t0.elapsed(), cpu()? - c0);
    sent.map_err(|e| format!("{channel} sender: {e}"))?;
    let (bytes, _) = got.map_err(|e| format!("{channel} receiver: {e}"))?;
    if bytes != size * n {
        return Err(format!(
            "{channel}: {bytes} bytes arrived of {} sent",
            size * n
        ));
    }
    Ok((
        wall.as_secs_f64() / bytes as f64,
        used.as_secs_f64() / bytes as f64,
    ))
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    // A run of the paper's rule where the receiver reads every word it
    // should see: the sums agree across the byte channels.
    let want = {
        let mut b = page_buf(3 * PAGE);
        (0..4u64).fold(0u64, |acc, m| {
            write_words(&mut b, m);
            acc.wrapping_add(read_words(&b, 0))
        })
    };
    for channel in [
        "pipe",
        "ipc bytes",
        "ipc buffers",
        "ipc bytes (socket)",
        "ipc buffers (socket)",
    ] {
        let Ends { send, recv } = ends(channel, 3 * PAGE, 4)?;
        let h = std::thread::spawn(recv);
        send()?;
        let (_, sum) = h.join().map_err(|_| "a receiver panicked".to_string())??;
        if sum != want {
            return Err(format!("{channel}: the receiver read other words"));
        }
    }
    let mut rows = Vec::new();
    for size in SIZES {
        let n = (scale.of(TOTAL) / size).max(4);
        // Interleaved rounds, the order rotating.
        let mut wall: Vec<Vec<f64>> = vec![Vec::new(); CHANNELS.len()];
        let mut used: Vec<Vec<f64>> = vec![Vec::new(); CHANNELS.len()];
        for r in 0..runs {
            for k in 0..CHANNELS.len() {
                let i = (r + k) % CHANNELS.len();
                let (w, c) = run_once(CHANNELS[i], size, n)?;
                wall[i].push(w);
                used[i].push(c);
            }
        }
        let at = |name: &str| CHANNELS.iter().position(|c| *c == name).unwrap_or(0);
        let row = |what: String, ferry: &str, base: &str, unit: Unit, target: Target| {
            let v = if matches!(unit, Unit::CpuPerGiB) {
                &used
            } else {
                &wall
            };
            Row {
                what,
                ferry_name: ferry.into(),
                ferry: median(&v[at(ferry)]),
                baseline_name: base.into(),
                baseline: Some(median(&v[at(base)])),
                unit,
                target,
                runs,
            }
        };
        let big = size >= 64 << 10;
        let kib = size >> 10;
        rows.push(row(
            format!("{kib} KiB messages: ipc buffers vs pipe"),
            "ipc buffers",
            "pipe",
            Unit::GBps,
            if big {
                Target::MinRatio(3.0)
            } else {
                Target::None
            },
        ));
        rows.push(row(
            format!("{kib} KiB messages: ipc buffers vs vmsplice→splice"),
            "ipc buffers",
            "vmsplice→splice",
            Unit::GBps,
            if big {
                Target::MinRatio(1.2)
            } else {
                Target::None
            },
        ));
        for base in ["unix", "tcp"] {
            rows.push(row(
                format!("{kib} KiB messages: ipc buffers vs {base}"),
                "ipc buffers",
                base,
                Unit::GBps,
                Target::None,
            ));
        }
        rows.push(row(
            format!("{kib} KiB messages: ipc bytes vs pipe"),
            "ipc bytes",
            "pipe",
            Unit::GBps,
            Target::None,
        ));
        for face in ["ipc buffers", "ipc bytes"] {
            rows.push(row(
                format!("{kib} KiB messages: {face}, rings vs socket"),
                face,
                &format!("{face} (socket)"),
                Unit::GBps,
                Target::None,
            ));
        }
        rows.push(row(
            format!("{kib} KiB messages: CPU, ipc buffers vs pipe"),
            "ipc buffers",
            "pipe",
            Unit::CpuPerGiB,
            Target::None,
        ));
        rows.push(row(
            format!("{kib} KiB messages: CPU, ipc buffers vs vmsplice→splice"),
            "ipc buffers",
            "vmsplice→splice",
            Unit::CpuPerGiB,
            Target::None,
        ));
    }
    Ok(rows)
}
