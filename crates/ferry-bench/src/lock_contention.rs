//! `ferry-bench stream-ops`, contention: `SharedStream`'s parking lock
//! against a spinning lock, with one and two threads taking 64-byte records
//! from one stream — over a mapped file (the holder does bookkeeping only)
//! and over the buffered backend (the holder sometimes does a `pread`).
//!
//! The spinning lock is `Mutex<Stream>` taken with `try_lock` in a loop
//! that spins, then yields, as `SharedStream`'s lock did before it parked waiters (before
//! commit f00780d, 2026-11-23).

use super::files::{make_file, open_warm, Content, Scratch};
use super::measure::{compare, interleave, Scale, Variant};
use super::report::{Row, Target, Unit};
use ferry::stream::Backend;
use ferry::{Buf, OpenOptions, SharedStream, Stream};
use std::hint::black_box;
use std::sync::{Mutex, MutexGuard, TryLockError};
use std::time::Instant;

const REC: usize = 64;

fn open(s: &Scratch, backend: Backend) -> Result<Stream, String> {
    Stream::open(&s.path, &OpenOptions::read_only().backend(backend)).map_err(|e| e.to_string())
}

/// Takes the lock spinning: 64 pause hints between tries, then a yield.
fn spin_lock(m: &Mutex<Stream>) -> Result<MutexGuard<'_, Stream>, String> {
    let mut tries = 0u32;
    loop {
        match m.try_lock() {
            Ok(g) => return Ok(g),
            Err(TryLockError::WouldBlock) => {
                tries += 1;
                if tries.is_multiple_of(64) {
                    std::thread::yield_now();
                } else {
                    std::hint::spin_loop();
                }
            }
            Err(TryLockError::Poisoned(_)) => return Err("a bench thread panicked".into()),
        }
    }
}

/// One thread's share: records until the stream runs out.
fn parked_worker(s: &SharedStream) -> Result<u64, String> {
    let mut n = 0u64;
    loop {
        let r = s.salloc(REC).map_err(|e| e.to_string())?;
        if r.len() < REC {
            return Ok(n);
        }
        black_box(r[0]);
        n += 1;
    }
}

fn spin_worker(m: &Mutex<Stream>) -> Result<u64, String> {
    let mut n = 0u64;
    loop {
        let b: Buf = {
            let g = spin_lock(m)?;
            let r = g.salloc(REC).map_err(|e| e.to_string())?;
            r.into_buf()
        };
        if b.len() < REC {
            return Ok(n);
        }
        black_box(b[0]);
        n += 1;
    }
}

/// Runs `work` on `threads` threads against one shared value and returns
/// the wall time and the records taken by all of them.
fn on_threads<T: Sync>(
    threads: usize,
    shared: T,
    work: fn(&T) -> Result<u64, String>,
) -> Result<(std::time::Duration, f64), String> {
    let t = Instant::now();
    let total = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..threads).map(|_| sc.spawn(|| work(&shared))).collect();
        hs.into_iter().try_fold(0u64, |acc, h| {
            let n = h
                .join()
                .map_err(|_| "a bench thread panicked".to_string())??;
            Ok::<u64, String>(acc + n)
        })
    })?;
    Ok((t.elapsed(), total as f64))
}

pub fn rows(runs: usize, scale: Scale, dir: Option<&std::path::Path>) -> Result<Vec<Row>, String> {
    let size = scale.of(32 << 20) as u64;
    let file = make_file(size, dir, Content::Random, "contention")?;
    let mut vs = Vec::new();
    for (backend, bname) in [(Backend::Auto, "mapped"), (Backend::Buffered, "buffered")] {
        for threads in [1usize, 2] {
            let file = &file;
            vs.push(Variant::new(
                format!("parking lock (SharedStream), {threads} thread(s), {bname}"),
                move || {
                    drop(open_warm(file)?);
                    let s = SharedStream::new(open(file, backend)?);
                    on_threads(threads, s, parked_worker)
                },
            ));
            vs.push(Variant::new(
                format!("spinning lock (Mutex::try_lock loop), {threads} thread(s), {bname}"),
                move || {
                    drop(open_warm(file)?);
                    let m = Mutex::new(open(file, backend)?);
                    on_threads(threads, m, spin_worker)
                },
            ));
        }
    }
    let s = interleave(runs, &mut vs)?;
    drop(vs);
    let mut out = Vec::new();
    for bname in ["mapped", "buffered"] {
        for threads in [1usize, 2] {
            out.push(compare(
                &s,
                &format!("64-byte records, {threads} thread(s), {bname}: parking vs spinning lock"),
                &format!("parking lock (SharedStream), {threads} thread(s), {bname}"),
                &format!("spinning lock (Mutex::try_lock loop), {threads} thread(s), {bname}"),
                Unit::NsPerOp,
                Target::None,
                runs,
            ));
        }
    }
    Ok(out)
}
