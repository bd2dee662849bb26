//! `ferry-bench stream-ops`: alloc streams against `std::io` on the same
//! files — small records, a sequential scan, and line iteration.

use super::files::{make_file, open_warm, Content, Scratch};
use super::measure::{compare, interleave, Samples, Scale, Variant};
use super::report::{Row, Target, Unit};
use clap::Args;
use ferry::stream::Backend;
use ferry::{OpenOptions, Stream};
use ferry_cli::parse_size;
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct StreamOpsArgs {
    /// Size of the file for the sequential scan (K, M, G suffixes).
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    #[command(flatten)]
    c: super::Common,
}

pub fn run(a: StreamOpsArgs) -> Result<(), String> {
    a.c.check("stream-ops")?;
    let scale = Scale(if a.c.quick { 1.0 / 64.0 } else { 1.0 });
    let mut rows = Vec::new();
    a.c.say("64-byte records");
    rows.extend(records(a.c.runs, scale, a.c.dir.as_deref())?);
    a.c.say("a sequential scan with salloc(1 MiB)");
    let size = if a.c.quick { 4 << 20 } else { a.size };
    rows.extend(scan(a.c.runs, size, a.c.dir.as_deref())?);
    a.c.say("line iteration");
    rows.extend(lines(a.c.runs, scale, a.c.dir.as_deref())?);
    a.c.say("one stream, one and two threads: parking vs spinning lock");
    rows.extend(super::lock_contention::rows(
        a.c.runs,
        scale,
        a.c.dir.as_deref(),
    )?);
    a.c.print("stream-ops", &rows);
    Ok(())
}

fn open(s: &Scratch, backend: Backend) -> Result<Stream, String> {
    Stream::open(&s.path, &OpenOptions::read_only().backend(backend)).map_err(|e| e.to_string())
}

/// Warms the file, then times `f` (which returns the units of work done).
fn warm_then(
    s: &Scratch,
    f: impl FnOnce() -> Result<u64, String>,
) -> Result<(Duration, f64), String> {
    drop(open_warm(s)?);
    let t = Instant::now();
    let n = f()?;
    Ok((t.elapsed(), n as f64))
}

/// What a record consumer does: read its first 8 bytes.
#[inline(always)]
fn touch(rec: &[u8]) -> u64 {
    u64::from_le_bytes(rec[..8].try_into().unwrap_or([0; 8]))
}

/// Reads 64-byte records with `salloc` (a [`Stream`]'s or a
/// [`SharedStream`](ferry::SharedStream)'s), each freed before the next,
/// to the end: the number read.
fn salloc_records<R: std::ops::Deref<Target = [u8]>>(
    mut salloc: impl FnMut(usize) -> std::io::Result<R>,
) -> Result<u64, String> {
    let mut n = 0u64;
    loop {
        let r = salloc(64).map_err(|e| e.to_string())?;
        if r.len() < 64 {
            break;
        }
        black_box(touch(&r));
        n += 1;
    }
    Ok(n)
}

fn records(runs: usize, scale: Scale, dir: Option<&std::path::Path>) -> Result<Vec<Row>, String> {
    let size = scale.of(64 << 20) as u64;
    let file = make_file(size, dir, Content::Random, "records")?;
    let mut vs = vec![
        Variant::new("BufReader::read_exact(64 B)", || {
            warm_then(&file, || {
                let f = std::fs::File::open(&file.path).map_err(|e| e.to_string())?;
                let mut r = BufReader::new(f);
                let mut rec = [0u8; 64];
                let mut n = 0u64;
                while r.read_exact(&mut rec).is_ok() {
                    black_box(touch(&rec));
                    n += 1;
                }
                Ok(n)
            })
        }),
        Variant::new("salloc(64)+free, Stream (no lock)", || {
            warm_then(&file, || {
                let s = open(&file, Backend::Auto)?;
                salloc_records(|len| s.salloc(len))
            })
        }),
        Variant::new("salloc(64)+free, Stream, buffered", || {
            warm_then(&file, || {
                let s = open(&file, Backend::Buffered)?;
                salloc_records(|len| s.salloc(len))
            })
        }),
        Variant::new("SharedStream salloc(64)+drop (locked)", || {
            warm_then(&file, || {
                let s = ferry::SharedStream::new(open(&file, Backend::Auto)?);
                salloc_records(|len| s.salloc(len))
            })
        }),
        Variant::new(
            "SharedStream lock()+salloc(64)+free+unlock per record",
            || {
                warm_then(&file, || {
                    let s = ferry::SharedStream::new(open(&file, Backend::Auto)?);
                    let mut n = 0u64;
                    loop {
                        let g = s.lock();
                        let r = g.salloc(64).map_err(|e| e.to_string())?;
                        if r.len() < 64 {
                            break;
                        }
                        black_box(touch(&r));
                        drop(r);
                        drop(g);
                        n += 1;
                    }
                    Ok(n)
                })
            },
        ),
        Variant::new("no stream: the mapped file read in 64-byte steps", || {
            warm_then(&file, || {
                let f = std::fs::File::open(&file.path).map_err(|e| e.to_string())?;
                let b = ferry::Buf::map_file(&f, 0..size)
                    .or_else(|_| ferry::Buf::read_file(&f, 0..size))
                    .map_err(|e| e.to_string())?;
                let mut n = 0u64;
                for r in b.chunks_exact(64) {
                    black_box(touch(r));
                    n += 1;
                }
                Ok(n)
            })
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    drop(vs);
    let base = "BufReader::read_exact(64 B)";
    let vs_base = |what: &str, name: &str, target: Target| {
        compare(&s, what, name, base, Unit::NsPerOp, target, runs)
    };
    Ok(vec![
        vs_base(
            "64-byte records: salloc+free (no lock) vs BufReader::read_exact",
            "salloc(64)+free, Stream (no lock)",
            Target::MinRatio(5.0),
        ),
        absolute(
            &s,
            "64-byte records: uncontended locked salloc+free",
            "SharedStream salloc(64)+drop (locked)",
            20.0,
            runs,
        ),
        absolute(
            &s,
            "64-byte records: uncontended lock+salloc+free+unlock (guard per record)",
            "SharedStream lock()+salloc(64)+free+unlock per record",
            20.0,
            runs,
        ),
        vs_base(
            "64-byte records: buffered backend vs BufReader::read_exact",
            "salloc(64)+free, Stream, buffered",
            Target::None,
        ),
        vs_base(
            "64-byte records: the floor (mapped bytes, no stream) vs BufReader::read_exact",
            "no stream: the mapped file read in 64-byte steps",
            Target::None,
        ),
    ])
}

fn absolute(s: &[Samples], what: &str, name: &str, max_ns: f64, runs: usize) -> Row {
    Row {
        what: what.into(),
        ferry_name: name.into(),
        ferry: super::measure::find(s, name).median(),
        baseline_name: "—".into(),
        baseline: None,
        unit: Unit::NsPerOp,
        target: Target::MaxNs(max_ns),
        runs,
    }
}

/// What a scan does with every byte: add it up, 8 bytes at a time.
fn sum64(b: &[u8]) -> u64 {
    let mut s = 0u64;
    let mut chunks = b.chunks_exact(8);
    for c in &mut chunks {
        s = s.wrapping_add(u64::from_le_bytes(c.try_into().unwrap_or([0; 8])));
    }
    for &x in chunks.remainder() {
        s = s.wrapping_add(x as u64);
    }
    s
}

fn scan(runs: usize, size: u64, dir: Option<&std::path::Path>) -> Result<Vec<Row>, String> {
    let file = make_file(size, dir, Content::Random, "scan")?;
    let salloc_scan = |backend: Backend| {
        warm_then(&file, || {
            let s = open(&file, backend)?;
            let g = &s;
            let (mut total, mut sum) = (0u64, 0u64);
            loop {
                let r = g.salloc(1 << 20).map_err(|e| e.to_string())?;
                if r.is_empty() {
                    break;
                }
                sum = sum.wrapping_add(sum64(&r));
                total += r.len() as u64;
            }
            black_box(sum);
            Ok(total)
        })
    };
    let mut vs = vec![
        Variant::new("read() into an aligned 128 KiB buffer", || {
            warm_then(&file, || {
                let mut f = std::fs::File::open(&file.path).map_err(|e| e.to_string())?;
                let mut buf = ferry::BufMut::with_capacity(128 << 10);
                buf.commit(128 << 10);
                let (mut total, mut sum) = (0u64, 0u64);
                loop {
                    let n = f.read(&mut buf).map_err(|e| e.to_string())?;
                    if n == 0 {
                        break;
                    }
                    sum = sum.wrapping_add(sum64(&buf[..n]));
                    total += n as u64;
                }
                black_box(sum);
                Ok(total)
            })
        }),
        Variant::new("salloc(1 MiB), buffered", || salloc_scan(Backend::Buffered)),
        Variant::new("salloc(1 MiB), mapped", || salloc_scan(Backend::Mapped)),
    ];
    let s = interleave(runs, &mut vs)?;
    drop(vs);
    let base = "read() into an aligned 128 KiB buffer";
    Ok(vec![
        compare(
            &s,
            "scan of a cached file: salloc(1 MiB) buffered vs read()",
            "salloc(1 MiB), buffered",
            base,
            Unit::GBps,
            Target::MinRatio(0.9),
            runs,
        ),
        compare(
            &s,
            "scan of a cached file: salloc(1 MiB) mapped vs read()",
            "salloc(1 MiB), mapped",
            base,
            Unit::GBps,
            Target::MinRatio(0.9),
            runs,
        ),
    ])
}

fn lines(runs: usize, scale: Scale, dir: Option<&std::path::Path>) -> Result<Vec<Row>, String> {
    let size = scale.of(256 << 20) as u64;
    let file = make_file(size, dir, Content::Text, "lines")?;
    let bufreader = || -> Result<BufReader<std::fs::File>, String> {
        let f = std::fs::File::open(&file.path).map_err(|e| e.to_string())?;
        Ok(BufReader::with_capacity(128 << 10, f))
    };
    let mut vs = vec![
        Variant::new("BufRead::read_until into a reused Vec", || {
            warm_then(&file, || {
                let mut r = bufreader()?;
                let mut line = Vec::new();
                let (mut n, mut bytes) = (0u64, 0u64);
                loop {
                    line.clear();
                    let k = r.read_until(b'\n', &mut line).map_err(|e| e.to_string())?;
                    if k == 0 {
                        break;
                    }
                    n += 1;
                    bytes += black_box(&line).len() as u64;
                }
                black_box(bytes);
                Ok(n)
            })
        }),
        Variant::new("BufRead::lines (a String per line)", || {
            warm_then(&file, || {
                let r = bufreader()?;
                let (mut n, mut bytes) = (0u64, 0u64);
                for l in r.lines() {
                    let l = l.map_err(|e| e.to_string())?;
                    n += 1;
                    bytes += black_box(&l).len() as u64;
                }
                black_box(bytes);
                Ok(n)
            })
        }),
        Variant::new("Stream::next_line (&[u8])", || {
            warm_then(&file, || {
                let mut s = open(&file, Backend::Auto)?;
                let (mut n, mut bytes) = (0u64, 0u64);
                while let Some(l) = s.next_line().map_err(|e| e.to_string())? {
                    n += 1;
                    bytes += black_box(l).len() as u64;
                }
                black_box(bytes);
                Ok(n)
            })
        }),
        Variant::new("Stream::buf_lines (Buf)", || {
            warm_then(&file, || {
                let mut s = open(&file, Backend::Auto)?;
                let (mut n, mut bytes) = (0u64, 0u64);
                for l in s.buf_lines() {
                    let l = l.map_err(|e| e.to_string())?;
                    n += 1;
                    bytes += black_box(&l).len() as u64;
                }
                black_box(bytes);
                Ok(n)
            })
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    drop(vs);
    Ok(vec![
        compare(
            &s,
            "lines: next_line vs read_until into a reused Vec",
            "Stream::next_line (&[u8])",
            "BufRead::read_until into a reused Vec",
            Unit::NsPerOp,
            Target::MinRatio(2.0),
            runs,
        ),
        compare(
            &s,
            "lines: next_line vs BufRead::lines",
            "Stream::next_line (&[u8])",
            "BufRead::lines (a String per line)",
            Unit::NsPerOp,
            Target::MinRatio(4.0),
            runs,
        ),
        compare(
            &s,
            "lines: buf_lines (Buf per line) vs read_until",
            "Stream::buf_lines (Buf)",
            "BufRead::read_until into a reused Vec",
            Unit::NsPerOp,
            Target::None,
            runs,
        ),
    ])
}
