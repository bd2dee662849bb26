//! `ferry-bench bulk`: the Titanium paper's experiment (Bonachea, §5): the
//! first pass of an external merge sort — read a chunk of a file of
//! big-endian 64-bit integers (Java's `long`s), sort it in memory, write
//! it out — in the paper's six configurations, with their nearest modern
//! equivalents:
//!
//! | paper | here |
//! |---|---|
//! | `raf` | one `pread`/`pwrite` of 8 bytes per element |
//! | `ds` | `read_exact`/`write_all` of 8 bytes per element on a `File` |
//! | `dsb` | the same on a default `BufReader`/`BufWriter` |
//! | `bulkraf` | `read_array_in`/`write_array_in` on the `File` |
//! | `bulkds` | `read_array_in`/`write_array_in` on ferry `Stream`s |
//! | `async` | `AsyncFile`, double-buffered with three buffers |
//!
//! Each run prints the paper's Table 2 breakdown: time reading, writing,
//! sorting, and for `async` the time to start requests and the time
//! blocked waiting for them. The `async` loop is the paper's Figure 5
//! without its defects: every read is started before it is waited on,
//! the last writes are waited for, and a partial final chunk is sorted
//! and written like the others.
//!
//! `--direct` opens the input with `O_DIRECT` (reads wait on the device,
//! as in the paper; the page cache cannot serve them), where overlapping
//! reads with sorting can pay; only the configurations that can read
//! `O_DIRECT` (page-aligned whole blocks) run there.

use super::files::{make_file, open_warm, Content};
use super::measure::{interleave, median, Variant};
use clap::Args;
use ferry::aio::{AsyncFile, Backend, Request};
use ferry::bulk::{Element, Endian, ReadArray, WriteArray};
use ferry::{Buf, BufMut, OpenOptions, Stream};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct BulkArgs {
    #[command(flatten)]
    c: super::Common,
    /// Input sizes (K, M, G suffixes).
    #[arg(long, value_delimiter = ',', default_value = "4M,16M,64M")]
    sizes: Vec<String>,
    /// Chunk sizes: the paper's Figure 6 used 32 KiB, Figure 7 512 KiB.
    #[arg(long, value_delimiter = ',', default_value = "32K,512K")]
    chunks: Vec<String>,
    /// Read the input with O_DIRECT (cold reads from the device).
    #[arg(long)]
    direct: bool,
    /// Leave out the per-element configurations (raf, ds, dsb) above this
    /// input size: at 64 MiB they take seconds a run.
    #[arg(long, default_value = "64M")]
    per_element_max: String,
}

/// Where one run's time went (the paper's Table 2).
#[derive(Clone, Copy, Default)]
struct Parts {
    read: Duration,
    write: Duration,
    sort: Duration,
    /// `async`: time blocked waiting for requests.
    wait: Duration,
}

const CONFIGS: [&str; 6] = ["raf", "ds", "dsb", "bulkraf", "bulkds", "async"];

pub fn run(a: BulkArgs) -> Result<(), String> {
    a.c.check("bulk")?;
    let parse = |s: &str| ferry_cli::parse_size(s).map_err(|e| format!("bulk: {s}: {e}"));
    let mut sizes: Vec<u64> = a.sizes.iter().map(|s| parse(s)).collect::<Result<_, _>>()?;
    let chunks: Vec<u64> = a
        .chunks
        .iter()
        .map(|s| parse(s))
        .collect::<Result<_, _>>()?;
    let per_element_max = parse(&a.per_element_max)?;
    if a.c.quick {
        sizes = vec![1 << 20];
    }
    println!(
        "ferry-bench bulk — external sort's first pass, big-endian i64, medians of {} interleaved runs{}{}",
        a.c.runs,
        if a.direct { ", input read O_DIRECT" } else { ", cached input" },
        if a.c.quick { " (--quick: figures mean nothing)" } else { "" }
    );
    for &chunk in &chunks {
        if chunk == 0 || chunk % 4096 != 0 {
            return Err(format!(
                "bulk: a chunk of {chunk} bytes: use a multiple of 4 KiB"
            ));
        }
        for &size0 in &sizes {
            // Whole elements; whole chunks for O_DIRECT.
            let size = if a.direct {
                size0 / chunk * chunk
            } else {
                size0 / 8 * 8
            };
            if size < chunk {
                continue;
            }
            one(&a, size, chunk, per_element_max)?;
        }
    }
    Ok(())
}

fn one(a: &BulkArgs, size: u64, chunk: u64, per_element_max: u64) -> Result<(), String> {
    let input = make_file(size, a.c.dir.as_deref(), Content::Random, "bulk-in")?;
    let out = make_file(0, a.c.dir.as_deref(), Content::Random, "bulk-out")?;
    let want = expected(&input.path, chunk)?;
    let chunk = chunk as usize;
    let direct = a.direct;
    let configs: Vec<&str> = CONFIGS
        .iter()
        .copied()
        .filter(|c| {
            let per_element = matches!(*c, "raf" | "ds" | "dsb");
            let direct_ok = matches!(*c, "bulkraf" | "async");
            !(per_element && size > per_element_max) && (!direct || direct_ok)
        })
        .collect();
    a.c.say(&format!("{} MiB, {} KiB chunks", size >> 20, chunk >> 10));
    let parts: Vec<RefCell<Vec<Parts>>> =
        configs.iter().map(|_| RefCell::new(Vec::new())).collect();
    let mut checked = vec![false; configs.len()];
    let (inp, outp) = (&input, &out);
    let want = &want;
    let mut vs: Vec<Variant<'_>> = Vec::new();
    for (k, &name) in configs.iter().enumerate() {
        let parts = &parts[k];
        let mut check = checked[k];
        checked[k] = true;
        vs.push(Variant::new(name, move || {
            if !direct {
                drop(open_warm(inp)?);
            }
            let t = Instant::now();
            let p = sort_pass(name, &inp.path, &outp.path, chunk, direct)?;
            let d = t.elapsed();
            parts.borrow_mut().push(p);
            if !check {
                check = true;
                let got = std::fs::read(&outp.path).map_err(|e| e.to_string())?;
                if got != *want {
                    return Err(format!("bulk: {name} wrote the wrong bytes"));
                }
            }
            Ok((d, size as f64))
        }));
    }
    let samples = interleave(a.c.runs, &mut vs)?;
    drop(vs);
    println!(
        "\n#### {} MiB, {} KiB chunks ({} chunks)\n\n| config | total s | MB/s | read s | write s | sort s | blocked s (async) | × raf | × bulkds |\n|---|---|---|---|---|---|---|---|---|",
        size >> 20,
        chunk >> 10,
        size.div_ceil(chunk as u64),
    );
    let total = |name: &str| {
        samples
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.median() * size as f64)
    };
    for (k, s) in samples.iter().enumerate() {
        let p = parts[k].borrow();
        let med = |f: fn(&Parts) -> Duration| {
            median(&p.iter().map(|x| f(x).as_secs_f64()).collect::<Vec<_>>())
        };
        let t = s.median() * size as f64;
        let vs = |other: &str| total(other).map_or("–".into(), |o| format!("{:.2}×", o / t));
        println!(
            "| {} | {:.3} | {:.0} | {:.3} | {:.3} | {:.3} | {} | {} | {} |",
            s.name,
            t,
            size as f64 / t / 1e6,
            med(|x| x.read),
            med(|x| x.write),
            med(|x| x.sort),
            if s.name == "async" {
                format!("{:.3}", med(|x| x.wait))
            } else {
                "–".into()
            },
            vs("raf"),
            vs(if direct { "bulkraf" } else { "bulkds" }),
        );
    }
    let r = |a: &str, b: &str| Some(total(b)? / total(a)?);
    // The same on I/O time alone (read + write + blocked), sorting left
    // out: what the bulk calls change.
    let io = |name: &str| {
        let k = samples.iter().position(|s| s.name == name)?;
        let p = parts[k].borrow();
        Some(median(
            &p.iter()
                .map(|x| (x.read + x.write + x.wait).as_secs_f64())
                .collect::<Vec<_>>(),
        ))
    };
    let rio = |a: &str, b: &str| Some(io(b)? / io(a)?);
    let line = |what: &str, got: Option<f64>, min: f64| {
        if let Some(x) = got {
            println!(
                "target: {what} ≥ {min}×: {x:.2}× — {}",
                if x >= min { "met" } else { "MISSED" }
            );
        }
    };
    println!();
    line(
        "bulkraf vs raf (per-element unbuffered), total",
        r("bulkraf", "raf"),
        10.0,
    );
    line(
        "bulkds vs dsb (per-element buffered), total",
        r("bulkds", "dsb"),
        2.0,
    );
    line(
        "bulkds vs dsb (per-element buffered), I/O time",
        rio("bulkds", "dsb"),
        2.0,
    );
    if direct {
        line("async vs bulk (O_DIRECT)", r("async", "bulkraf"), 1.25);
    } else {
        line(
            "async vs bulkds (cached: never slower)",
            r("async", "bulkds"),
            1.0,
        );
    }
    Ok(())
}

/// The output the pass must write: each chunk of the input sorted.
fn expected(input: &Path, chunk: u64) -> Result<Vec<u8>, String> {
    let bytes = std::fs::read(input).map_err(|e| e.to_string())?;
    let mut out = Vec::with_capacity(bytes.len());
    for c in bytes.chunks(chunk as usize) {
        let mut v: Vec<i64> = c
            .chunks_exact(8)
            .map(|e| i64::from_be_bytes(e.try_into().unwrap_or_default()))
            .collect();
        v.sort_unstable();
        out.extend(v.iter().flat_map(|x| x.to_be_bytes()));
    }
    Ok(out)
}

fn open_in(path: &Path, direct: bool) -> Result<File, String> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true);
    if direct {
        o.custom_flags(libc::O_DIRECT);
    }
    o.open(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn create_out(path: &Path) -> Result<File, String> {
    File::create(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn err(e: std::io::Error) -> String {
    e.to_string()
}

/// One pass of `name` from `input` to `output`.
fn sort_pass(
    name: &str,
    input: &Path,
    output: &Path,
    chunk: usize,
    direct: bool,
) -> Result<Parts, String> {
    let len = std::fs::metadata(input).map_err(err)?.len() as usize;
    let mut p = Parts::default();
    let per = chunk / 8;
    match name {
        "raf" => {
            let (i, o) = (open_in(input, false)?, create_out(output)?);
            let mut v = vec![0i64; per];
            let mut at = 0;
            while at < len {
                let n = (len - at).min(chunk) / 8;
                let t = Instant::now();
                for (k, x) in v[..n].iter_mut().enumerate() {
                    let mut b = [0u8; 8];
                    i.read_exact_at(&mut b, (at + k * 8) as u64).map_err(err)?;
                    *x = i64::from_be_bytes(b);
                }
                p.read += t.elapsed();
                sort(&mut v[..n], &mut p);
                let t = Instant::now();
                for (k, x) in v[..n].iter().enumerate() {
                    o.write_all_at(&x.to_be_bytes(), (at + k * 8) as u64)
                        .map_err(err)?;
                }
                p.write += t.elapsed();
                at += n * 8;
            }
        }
        "ds" | "dsb" => {
            let (i, o) = (open_in(input, false)?, create_out(output)?);
            let (mut r, mut w): (Box<dyn Read>, Box<dyn Write>) = if name == "dsb" {
                (Box::new(BufReader::new(i)), Box::new(BufWriter::new(o)))
            } else {
                (Box::new(i), Box::new(o))
            };
            let mut v = vec![0i64; per];
            let mut left = len;
            while left > 0 {
                let n = left.min(chunk) / 8;
                let t = Instant::now();
                for x in &mut v[..n] {
                    let mut b = [0u8; 8];
                    r.read_exact(&mut b).map_err(err)?;
                    *x = i64::from_be_bytes(b);
                }
                p.read += t.elapsed();
                sort(&mut v[..n], &mut p);
                let t = Instant::now();
                for x in &v[..n] {
                    w.write_all(&x.to_be_bytes()).map_err(err)?;
                }
                p.write += t.elapsed();
                left -= n * 8;
            }
            let t = Instant::now();
            w.flush().map_err(err)?;
            p.write += t.elapsed();
        }
        "bulkraf" => {
            let (mut i, mut o) = (open_in(input, direct)?, create_out(output)?);
            // Page-aligned (O_DIRECT needs it; it costs nothing otherwise).
            let mut m = BufMut::with_capacity_aligned(chunk, 4096);
            m.commit(chunk);
            let v = m.as_array_mut::<i64>().map_err(|e| e.to_string())?;
            array_chunks(
                len,
                chunk,
                v,
                &mut p,
                |v| i.read_array_in(v, Endian::Big),
                |v| o.write_array_in(v, Endian::Big),
            )?;
        }
        "bulkds" => {
            let mut i = Stream::open(input, &OpenOptions::read_only()).map_err(err)?;
            let mut o = Stream::open(output, &OpenOptions::write_truncate()).map_err(err)?;
            let mut v = vec![0i64; per];
            array_chunks(
                len,
                chunk,
                &mut v,
                &mut p,
                |v| i.read_array_in(v, Endian::Big),
                |v| o.write_array_in(v, Endian::Big),
            )?;
            let t = Instant::now();
            o.close().map_err(err)?;
            p.write += t.elapsed();
        }
        "async" => async_pass(input, output, len, chunk, direct, &mut p)?,
        _ => return Err(format!("bulk: no configuration {name}")),
    }
    Ok(p)
}

/// The bulk array passes' loop (`bulkraf` on files, `bulkds` on streams):
/// `len` bytes, a chunk at a time, read into `v`, sorted and written, each
/// step timed into `p`.
fn array_chunks(
    mut left: usize,
    chunk: usize,
    v: &mut [i64],
    p: &mut Parts,
    mut read: impl FnMut(&mut [i64]) -> std::io::Result<()>,
    mut write: impl FnMut(&[i64]) -> std::io::Result<()>,
) -> Result<(), String> {
    while left > 0 {
        let n = left.min(chunk) / 8;
        let t = Instant::now();
        read(&mut v[..n]).map_err(err)?;
        p.read += t.elapsed();
        sort(&mut v[..n], p);
        let t = Instant::now();
        write(&v[..n]).map_err(err)?;
        p.write += t.elapsed();
        left -= n * 8;
    }
    Ok(())
}

fn sort(v: &mut [i64], p: &mut Parts) {
    let t = Instant::now();
    v.sort_unstable();
    p.sort += t.elapsed();
}

/// The paper's Figure 5 with three buffers, fixed: the next chunk's read
/// is started before this one is sorted; a buffer is reused only once its
/// write is done; every write is waited for at the end.
fn async_pass(
    input: &Path,
    output: &Path,
    len: usize,
    chunk: usize,
    direct: bool,
    p: &mut Parts,
) -> Result<(), String> {
    let i = AsyncFile::from_fd(open_in(input, direct)?.into(), Backend::Auto).map_err(err)?;
    let o = AsyncFile::from_fd(create_out(output)?.into(), Backend::Auto).map_err(err)?;
    let chunks = len.div_ceil(chunk);
    let mut free: Vec<BufMut> = (0..3)
        .map(|_| BufMut::with_capacity_aligned(chunk, 4096))
        .collect();
    let mut writes: VecDeque<Request<Buf>> = VecDeque::new();
    let start_read = |k: usize, mut b: BufMut, p: &mut Parts| -> Result<Request<BufMut>, String> {
        let t = Instant::now();
        b.clear();
        // A partial last chunk: a buffer of exactly its size.
        let n = (len - k * chunk).min(chunk);
        let b = if n < chunk {
            let mut s = BufMut::with_capacity_aligned(n, 4096);
            s.clear();
            s
        } else {
            b
        };
        let r = i.read_into_at((k * chunk) as u64, b).map_err(err);
        p.read += t.elapsed();
        r
    };
    let mut next = Some(start_read(0, free.pop().ok_or("no buffer")?, p)?);
    for k in 0..chunks {
        let r = next.take().ok_or("no read started")?;
        let t = Instant::now();
        r.wait(None).map_err(err)?;
        let mut cur = r.into_inner();
        p.wait += t.elapsed();
        if k + 1 < chunks {
            let b = match free.pop() {
                Some(b) => b,
                None => {
                    let w = writes.pop_front().ok_or("no buffer to reuse")?;
                    let t = Instant::now();
                    w.wait(None).map_err(err)?;
                    let b = w.into_inner();
                    p.wait += t.elapsed();
                    b.try_into_mut()
                        .map_err(|_| "a written buffer is still shared")?
                }
            };
            next = Some(start_read(k + 1, b, p)?);
        }
        {
            let v = cur.as_array_mut::<i64>().map_err(|e| e.to_string())?;
            i64::to_native(v, Endian::Big);
            sort(v, p);
            i64::to_native(v, Endian::Big);
        }
        let t = Instant::now();
        writes.push_back(o.write_at((k * chunk) as u64, cur.freeze()).map_err(err)?);
        p.write += t.elapsed();
    }
    let t = Instant::now();
    for w in writes {
        w.wait(None).map_err(err)?;
    }
    p.wait += t.elapsed();
    Ok(())
}
