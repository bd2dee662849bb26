//! `ferry-bench buf`: the memory layer against what people use today.

use super::files::{make_file, read_all, warm, Content};
use super::measure::{compare, interleave, timed, Scale, Variant};
use super::report::{Row, Target, Unit};
use clap::Args;
use ferry::{Aggregate, Buf, BufMut, Pool, PoolConfig};
use ferry_cli::parse_size;
use std::fs::File;
use std::hint::black_box;
use std::io::Read;
use std::sync::Barrier;
use std::time::{Duration, Instant};

#[derive(Args)]
pub struct BufArgs {
    /// Size of the scratch file for the read() comparison (K, M, G suffixes).
    #[arg(long, default_value = "1GiB", value_parser = parse_size)]
    size: u64,
    #[command(flatten)]
    c: super::Common,
    /// Leave out the file-read comparison.
    #[arg(long)]
    no_file: bool,
}

pub fn run(a: BufArgs) -> Result<(), String> {
    a.c.check("buf")?;
    let scale = Scale(if a.c.quick { 0.001 } else { 1.0 });
    let mut rows = Vec::new();
    a.c.say("Buf clone and slice vs bytes::Bytes");
    rows.extend(clone_and_slice(a.c.runs, scale)?);
    a.c.say("pool alloc+free vs malloc");
    rows.extend(pool_vs_malloc(a.c.runs, scale)?);
    a.c.say("Aggregate::split_to");
    rows.extend(aggregate_split(a.c.runs, scale)?);
    if !a.no_file {
        a.c.say(&format!("read() of a {}-byte cached file", a.size));
        rows.extend(file_read(a.c.runs, a.size, a.c.dir.as_deref())?);
    }
    a.c.print("buf", &rows);
    Ok(())
}

fn clone_and_slice(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let n = scale.of(5_000_000);
    let fb = Buf::from(vec![1u8; 1024]);
    let bb = bytes::Bytes::from(vec![1u8; 1024]);
    // Both in their shared state (Bytes promotes a Vec on first clone).
    let (_f2, _b2) = (fb.clone(), bb.clone());
    let mut vs = vec![
        Variant::new("ferry::Buf clone+drop", || {
            timed(n, || {
                for _ in 0..n {
                    drop(black_box(black_box(&fb).clone()));
                }
            })
        }),
        Variant::new("bytes::Bytes clone+drop", || {
            timed(n, || {
                for _ in 0..n {
                    drop(black_box(black_box(&bb).clone()));
                }
            })
        }),
        Variant::new("ferry::Buf slice+drop", || {
            timed(n, || {
                for i in 0..n {
                    let at = i & 63;
                    drop(black_box(black_box(&fb).slice(at..at + 100)));
                }
            })
        }),
        Variant::new("bytes::Bytes slice+drop", || {
            timed(n, || {
                for i in 0..n {
                    let at = i & 63;
                    drop(black_box(black_box(&bb).slice(at..at + 100)));
                }
            })
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    // "within 1.2× of Bytes" = ferry's speed at least 1/1.2 of Bytes'.
    Ok(vec![
        compare(
            &s,
            "Buf clone+drop vs Bytes",
            "ferry::Buf clone+drop",
            "bytes::Bytes clone+drop",
            Unit::NsPerOp,
            Target::MinRatio(1.0 / 1.2),
            runs,
        ),
        compare(
            &s,
            "Buf slice vs Bytes",
            "ferry::Buf slice+drop",
            "bytes::Bytes slice+drop",
            Unit::NsPerOp,
            Target::MinRatio(1.0 / 1.2),
            runs,
        ),
    ])
}

fn pool_loop(pool: &Pool, n: usize) -> Result<(), String> {
    for _ in 0..n {
        let m = pool.alloc(65536).map_err(|e| e.to_string())?;
        drop(black_box(m));
    }
    Ok(())
}

fn pool_vs_malloc(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let n = scale.of(2_000_000);
    let pool = Pool::new(PoolConfig::default()).map_err(|e| e.to_string())?;
    let pool2 = pool.clone();
    let two_threads = |f: &(dyn Fn() + Sync)| -> Duration {
        let barrier = Barrier::new(2);
        let times: Vec<Duration> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        barrier.wait();
                        let t = Instant::now();
                        f();
                        t.elapsed()
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        // Per-thread time per op: the mean of the two threads.
        times.iter().sum::<Duration>() / 2
    };
    let mut vs = vec![
        Variant::new("Pool alloc+free 64 KiB", || {
            let t = Instant::now();
            pool_loop(&pool, n)?;
            Ok((t.elapsed(), n as f64))
        }),
        Variant::new("Vec::with_capacity(65536)+drop", || {
            timed(n, || {
                for _ in 0..n {
                    drop(black_box(Vec::<u8>::with_capacity(black_box(65536))));
                }
            })
        }),
        Variant::new("Pool alloc+free, 2 threads (per thread)", || {
            let failed = std::sync::Mutex::new(None);
            let d = two_threads(&|| {
                if let Err(e) = pool_loop(&pool2, n) {
                    *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
            });
            match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
                Some(e) => Err(e),
                None => Ok((d, n as f64)),
            }
        }),
        Variant::new("Vec alloc+free, 2 threads (per thread)", || {
            let d = two_threads(&|| {
                for _ in 0..n {
                    drop(black_box(Vec::<u8>::with_capacity(black_box(65536))));
                }
            });
            Ok((d, n as f64))
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    Ok(vec![
        compare(
            &s,
            "Pool alloc+free 64 KiB vs malloc",
            "Pool alloc+free 64 KiB",
            "Vec::with_capacity(65536)+drop",
            Unit::NsPerOp,
            Target::MinRatio(1.0),
            runs,
        ),
        compare(
            &s,
            "Pool 2-thread per-thread vs 1-thread",
            "Pool alloc+free, 2 threads (per thread)",
            "Pool alloc+free 64 KiB",
            Unit::NsPerOp,
            Target::MinRatio(0.7),
            runs,
        ),
        compare(
            &s,
            "malloc 2-thread per-thread vs 1-thread (reference)",
            "Vec alloc+free, 2 threads (per thread)",
            "Vec::with_capacity(65536)+drop",
            Unit::NsPerOp,
            Target::None,
            runs,
        ),
    ])
}

fn aggregate_split(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    // 1000 slices of varied length over one block.
    let src = Buf::from(vec![9u8; 200 * 1000]);
    let mut agg = Aggregate::new();
    let mut at = 0;
    for i in 0..1000 {
        let len = 1 + (i * 7919) % 199;
        agg.append_buf(src.slice(at..at + len));
        at += len;
    }
    let mid = agg.len() / 2;
    // Each split is timed on its own fresh copy of the aggregate.
    // In cache: copy, split, drop, one at a time (as a program splits an
    // aggregate it just built). Out of cache: 2000 copies (~48 MB) made
    // first, then split one after another, so every split walks memory
    // that is not in cache and writes to freshly allocated memory.
    let hot = |n: usize| {
        let mut total = Duration::ZERO;
        for _ in 0..n {
            let mut c = agg.clone();
            let t = Instant::now();
            let front = black_box(c.split_to(black_box(mid)));
            total += t.elapsed();
            drop((c, front));
        }
        Ok((total, n as f64))
    };
    let cold = |copies: usize| {
        let mut aggs: Vec<Aggregate> = (0..copies).map(|_| agg.clone()).collect();
        let mut fronts = Vec::with_capacity(copies);
        let t = Instant::now();
        for c in aggs.iter_mut() {
            fronts.push(black_box(c.split_to(black_box(mid))));
        }
        let d = t.elapsed();
        drop((aggs, fronts));
        Ok((d, copies as f64))
    };
    let mut vs = vec![
        Variant::new("split_to(middle), 1000 slices, in cache", || {
            hot(scale.of(4000))
        }),
        Variant::new("split_to(middle), 1000 slices, out of cache", || {
            cold(scale.of(2000))
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    let row = |i: usize, target: Target| Row {
        what: "Aggregate split_to in the middle of 1000 slices".into(),
        ferry_name: s[i].name.clone(),
        ferry: s[i].median(),
        baseline_name: "—".into(),
        baseline: None,
        unit: Unit::NsPerOp,
        target,
        runs,
    };
    Ok(vec![row(0, Target::MaxNs(2000.0)), row(1, Target::None)])
}

fn file_read(runs: usize, size: u64, dir: Option<&std::path::Path>) -> Result<Vec<Row>, String> {
    const CHUNK: usize = 128 << 10;
    let scratch = make_file(size, dir, Content::Random, "buf")?;
    let open = || File::open(&scratch.path).map_err(|e| format!("{}: {e}", scratch.path.display()));
    let pool = Pool::new(PoolConfig::default()).map_err(|e| e.to_string())?;
    let mut aligned = BufMut::with_capacity(CHUNK);
    aligned.commit(CHUNK);
    // Where glibc puts a fresh large malloc (an mmap'd chunk): 16 bytes
    // past a page boundary.
    let mut past_page = BufMut::with_capacity(CHUNK + 16);
    past_page.commit(CHUNK + 16);
    let mut vec_offset = 0usize;
    let mut vs = vec![
        Variant::new("read() into 128 KiB pool buffers", || {
            let mut f = open()?;
            warm(&mut f)?;
            let t = Instant::now();
            let mut total = 0u64;
            loop {
                let mut m = pool.alloc(CHUNK).map_err(|e| e.to_string())?;
                let n = f.read(m.spare_capacity_mut()).map_err(|e| e.to_string())?;
                if n == 0 {
                    break;
                }
                m.commit(n);
                total += n as u64;
                drop(black_box(m.freeze()));
            }
            Ok((t.elapsed(), total as f64))
        }),
        Variant::new("read() into vec![0u8; 131072]", || {
            let mut f = open()?;
            warm(&mut f)?;
            let t = Instant::now();
            let mut buf = vec![0u8; CHUNK];
            vec_offset = buf.as_ptr() as usize % 4096;
            let total = read_all(&mut f, &mut buf)?;
            Ok((t.elapsed(), total as f64))
        }),
        Variant::new("read() into a buffer 16 bytes past a page", || {
            let mut f = open()?;
            warm(&mut f)?;
            let t = Instant::now();
            let total = read_all(&mut f, &mut past_page[16..])?;
            Ok((t.elapsed(), total as f64))
        }),
        Variant::new("read() into a page-aligned 128 KiB buffer", || {
            let mut f = open()?;
            warm(&mut f)?;
            let t = Instant::now();
            let total = read_all(&mut f, &mut aligned)?;
            Ok((t.elapsed(), total as f64))
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    drop(vs);
    let what_vec = format!("vec![0u8; 131072] (data {vec_offset} bytes past a page) vs aligned");
    Ok(vec![
        compare(
            &s,
            "read() 128 KiB: pool buffers vs aligned buffer",
            "read() into 128 KiB pool buffers",
            "read() into a page-aligned 128 KiB buffer",
            Unit::GBps,
            Target::MinRatio(0.9),
            runs,
        ),
        compare(
            &s,
            "read() 128 KiB: pool buffers vs vec![0u8; 131072]",
            "read() into 128 KiB pool buffers",
            "read() into vec![0u8; 131072]",
            Unit::GBps,
            Target::None,
            runs,
        ),
        compare(
            &s,
            "buffer 16 bytes past a page vs aligned",
            "read() into a buffer 16 bytes past a page",
            "read() into a page-aligned 128 KiB buffer",
            Unit::GBps,
            Target::None,
            runs,
        ),
        compare(
            &s,
            &what_vec,
            "read() into vec![0u8; 131072]",
            "read() into a page-aligned 128 KiB buffer",
            Unit::GBps,
            Target::None,
            runs,
        ),
    ])
}
