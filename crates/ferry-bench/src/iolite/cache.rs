//! The unified file cache (IO-Lite §2.5): [`FileCache`] beside
//! `quick_cache` and `moka` on the same files, traces and byte budget.
//!
//! The files are real, in a scratch directory, their pages warmed before
//! anything is timed; sizes and traces are in `cache_traces`. Every cache
//! gets the budget B = a tenth of the file set's bytes and sees each
//! lookup as a whole-file read of a path:
//!
//! - FileCache: `read(path, ..)` (open, `fstat`, its extents; a missing
//!   extent is `pread` into a pool buffer and cached if the budget has
//!   room; its charge is the pool slot, a power of two per 256 KiB
//!   extent);
//! - quick_cache (`sync::Cache<PathBuf, Bytes>`, weigher = file length):
//!   `get_or_insert_with(path)`, a miss `std::fs::read`s the file into a
//!   `Bytes` and inserts it; a hit touches no file;
//! - moka (`sync::Cache<PathBuf, Bytes>`, weigher = file length):
//!   `entry_by_ref(path).or_try_insert_with`, a miss as quick_cache's.
//!
//! FileCache runs in each configuration of `ferry_configs`: IO-Lite's
//! order alone, with the admission queue, with the frequency count, and
//! with files over an eighth of the budget left uncached.
//!
//! Hit ratio (a lookup is a hit when nothing of the file was read; by
//! count and by bytes) comes from untimed passes on one thread, the same
//! counting for all (for FileCache its miss counter around each lookup),
//! the median of as many passes as timed runs, each with fresh caches. quick_cache is also run with FileCache's charge as its weigher,
//! so the replacement policies compare on equal memory accounting.
//! Lookups/s are timed separately: a fresh cache per run, the whole trace,
//! on 1 and 2 threads (thread t takes every other lookup), misses
//! included. Last, the hit path alone: a cached 1 MiB file handed out
//! again and again.

use super::cache_traces::{self as traces, Rng, Trace};
use crate::measure::{compare, interleave, timed, Scale, Variant};
use crate::report::{Row, Target, Unit};
use bytes::Bytes;
use ferry::cache::{CacheConfig, FileCache};
use std::fs::File;
use std::hint::black_box;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const EXTENT: usize = 256 << 10;

/// The scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// quick_cache's weigher: the file's length, or what FileCache charges
/// for it (a pool slot per 256 KiB extent: `FileCache::charge` of each).
#[derive(Clone)]
struct Weigh {
    as_file_cache: Option<Arc<FileCache>>,
}

impl quick_cache::Weighter<PathBuf, Bytes> for Weigh {
    fn weight(&self, _: &PathBuf, v: &Bytes) -> u64 {
        let len = v.len().max(1);
        let Some(c) = &self.as_file_cache else {
            return len as u64;
        };
        let rest = len % EXTENT;
        let last = if rest == 0 { 0 } else { c.charge(rest) };
        ((len / EXTENT) * c.charge(EXTENT) + last) as u64
    }
}

type Quick = quick_cache::sync::Cache<PathBuf, Bytes, Weigh>;
type Moka = moka::sync::Cache<PathBuf, Bytes>;

fn quick(budget: usize, as_file_cache: Option<Arc<FileCache>>) -> Quick {
    Quick::with_weighter(1024, budget as u64, Weigh { as_file_cache })
}

fn moka(budget: usize) -> Moka {
    Moka::builder()
        .max_capacity(budget as u64)
        .weigher(|_, v: &Bytes| u32::try_from(v.len().max(1)).unwrap_or(u32::MAX))
        .build()
}

fn read_bytes(p: &Path) -> io::Result<Bytes> {
    std::fs::read(p).map(Bytes::from)
}

/// One lookup: the file's length and whether it was a hit.
fn quick_lookup(c: &Quick, p: &Path) -> io::Result<(usize, bool)> {
    let mut hit = true;
    let v = c.get_or_insert_with(p, || {
        hit = false;
        read_bytes(p)
    })?;
    Ok((black_box(v).len(), hit))
}

fn moka_lookup(c: &Moka, p: &Path) -> io::Result<(usize, bool)> {
    let e = c
        .entry_by_ref(p)
        .or_try_insert_with(|| read_bytes(p))
        .map_err(|e| io::Error::new(e.kind(), e.to_string()))?;
    Ok((black_box(e.value()).len(), !e.is_fresh()))
}

/// In the hit-ratio pass moka's pending evictions run after each miss,
/// so it keeps to its budget lookup by lookup as the others do (it
/// otherwise runs them in batches, holding more than its budget meanwhile).
fn moka_after(c: &Moka, r: (usize, bool)) -> (usize, bool) {
    if !r.1 {
        c.run_pending_tasks();
    }
    r
}

fn ferry_lookup(c: &FileCache, p: &Path) -> io::Result<usize> {
    Ok(black_box(c.read(p, ..)?).len())
}

struct Files {
    paths: Vec<PathBuf>,
    sizes: Vec<usize>,
}

fn make_files(dir: &Path, n: usize, max: usize) -> Result<Files, String> {
    let sizes = traces::surge_sizes(&mut Rng::new(0x5u64 << 40 | 1998), n, max);
    let mut paths = Vec::with_capacity(n);
    let block: Vec<u8> = (0..1 << 16).map(|i| (i * 131 % 251) as u8).collect();
    for (i, &s) in sizes.iter().enumerate() {
        let p = dir.join(format!("f{i:05}"));
        let mut v = Vec::with_capacity(s);
        while v.len() < s {
            v.extend_from_slice(&block[..(s - v.len()).min(block.len())]);
        }
        v[0] = i as u8;
        std::fs::write(&p, &v).map_err(|e| format!("{}: {e}", p.display()))?;
        paths.push(p);
    }
    Ok(Files { paths, sizes })
}

/// Hits by count and by bytes.
#[derive(Default, Clone, Copy)]
struct Hits {
    lookups: u64,
    hits: u64,
    bytes: u64,
    hit_bytes: u64,
}

impl Hits {
    fn add(&mut self, size: usize, hit: bool) {
        self.lookups += 1;
        self.bytes += size as u64;
        if hit {
            self.hits += 1;
            self.hit_bytes += size as u64;
        }
    }

    fn by_count(&self) -> f64 {
        100.0 * self.hits as f64 / self.lookups.max(1) as f64
    }

    fn by_bytes(&self) -> f64 {
        100.0 * self.hit_bytes as f64 / self.bytes.max(1) as f64
    }

    /// The median pass's hits by count and by bytes, each its own
    /// median (`passes` is not empty).
    fn median(mut passes: Vec<Hits>) -> Hits {
        let mid = passes.len() / 2;
        passes.sort_by_key(|h| h.hits);
        let hits = passes[mid];
        passes.sort_by_key(|h| h.hit_bytes);
        Hits {
            hit_bytes: passes[mid].hit_bytes,
            ..hits
        }
    }

    fn show(&self) -> String {
        format!("{:.1} % / {:.1} %", self.by_count(), self.by_bytes())
    }
}

fn wrong(p: &Path, got: usize, want: usize) -> String {
    format!(
        "{}: a lookup gave {got} bytes, the file has {want}",
        p.display()
    )
}

/// The FileCache configurations the hit-ratio pass compares, by name:
/// IO-Lite's order, then the options that bring quick_cache's and moka's
/// ideas in.
fn ferry_configs(budget: usize) -> Vec<(&'static str, CacheConfig)> {
    let base = CacheConfig::default().with_budget(budget);
    // Files over an eighth of the budget served uncached (quick_cache's
    // shards here hold an eighth of its budget each).
    let limit = Some(budget as u64 / 8);
    vec![
        ("FileCache", base.clone()),
        ("admission queue", base.clone().with_admission_queue(true)),
        (
            "queue, files ≤ B/8",
            base.clone()
                .with_admission_queue(true)
                .with_largest_file(limit),
        ),
        ("queue + frequency", base.clone().with_frequency(true)),
        ("queue + frequency, files ≤ B/8", best_config(budget)),
    ]
}

/// The FileCache configuration with the best hit ratios here: the
/// frequency count (and so the admission queue), files over an eighth of
/// the budget served uncached.
fn best_config(budget: usize) -> CacheConfig {
    CacheConfig::default()
        .with_budget(budget)
        .with_frequency(true)
        .with_largest_file(Some(budget as u64 / 8))
}

/// One pass's hits: FileCache's in each configuration, then the peers'.
type Pass = (Vec<Hits>, [Hits; 3]);

/// The untimed pass: every cache's hits on `t`, one thread: FileCache in
/// each of `ferry_configs`, then quick_cache, quick_cache charged as
/// FileCache charges, and moka.
fn hit_ratios(f: &Files, t: &Trace, budget: usize) -> Result<Pass, String> {
    let err = |e: io::Error| e.to_string();
    let fcs = ferry_configs(budget)
        .into_iter()
        .map(|(_, c)| FileCache::new(c).map_err(err))
        .collect::<Result<Vec<_>, _>>()?;
    let (q, qf, m) = (
        quick(budget, None),
        // Charged as a FileCache of the same shape charges (one kept
        // only for its charges).
        quick(
            budget,
            Some(Arc::new(
                FileCache::new(CacheConfig::default().with_budget(budget)).map_err(err)?,
            )),
        ),
        moka(budget),
    );
    let mut fh = vec![Hits::default(); fcs.len()];
    let mut ph = [Hits::default(); 3];
    for &i in &t.lookups {
        let (p, size) = (&f.paths[i as usize], f.sizes[i as usize]);
        for (c, h) in fcs.iter().zip(&mut fh) {
            let before = c.stats().misses;
            let got = ferry_lookup(c, p).map_err(err)?;
            h.add(size, c.stats().misses == before);
            if got != size {
                return Err(wrong(p, got, size));
            }
        }
        for (k, (got, hit)) in [
            quick_lookup(&q, p).map_err(err)?,
            quick_lookup(&qf, p).map_err(err)?,
            moka_after(&m, moka_lookup(&m, p).map_err(err)?),
        ]
        .into_iter()
        .enumerate()
        {
            if got != size {
                return Err(wrong(p, got, size));
            }
            ph[k].add(size, hit);
        }
    }
    Ok((fh, ph))
}

/// Runs `t` on `threads` threads (thread k takes lookups k, k + threads,
/// …), each lookup by `look`; the wall time and the number of lookups.
fn run_trace(
    f: &Files,
    t: &Trace,
    threads: usize,
    look: &(dyn Fn(&Path) -> io::Result<usize> + Sync),
) -> Result<(Duration, f64), String> {
    let start = Instant::now();
    std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|k| {
                s.spawn(move || -> Result<(), String> {
                    for &i in t.lookups.iter().skip(k).step_by(threads) {
                        let (p, size) = (&f.paths[i as usize], f.sizes[i as usize]);
                        let got = look(p).map_err(|e| e.to_string())?;
                        if got != size {
                            return Err(wrong(p, got, size));
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        hs.into_iter().try_for_each(|h| {
            h.join()
                .map_err(|_| "a lookup thread panicked".to_string())?
        })
    })?;
    Ok((start.elapsed(), t.lookups.len() as f64))
}

fn throughput_rows(
    f: &Files,
    t: &Trace,
    budget: usize,
    threads: usize,
    runs: usize,
) -> Result<Vec<Row>, String> {
    let err = |e: io::Error| e.to_string();
    let tag = format!("{}, {threads} thr", t.name);
    let (nf, nt, nq, nm) = (
        format!("FileCache::read, {tag}"),
        format!("FileCache::read, queue + frequency, files ≤ B/8, {tag}"),
        format!("quick_cache get_or_insert_with, {tag}"),
        format!("moka entry().or_try_insert_with, {tag}"),
    );
    let tuned = best_config(budget);
    let mut vs = vec![
        Variant::new(nf.clone(), || {
            let c = FileCache::new(CacheConfig::default().with_budget(budget)).map_err(err)?;
            run_trace(f, t, threads, &|p| ferry_lookup(&c, p))
        }),
        Variant::new(nt.clone(), || {
            let c = FileCache::new(tuned.clone()).map_err(err)?;
            run_trace(f, t, threads, &|p| ferry_lookup(&c, p))
        }),
        Variant::new(nq.clone(), || {
            let c = quick(budget, None);
            run_trace(f, t, threads, &|p| quick_lookup(&c, p).map(|x| x.0))
        }),
        Variant::new(nm.clone(), || {
            let c = moka(budget);
            run_trace(f, t, threads, &|p| moka_lookup(&c, p).map(|x| x.0))
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    let row = |ours: &str, what: &str, base: &str, peer: &str| {
        compare(
            &s,
            &format!("{tag}: time per lookup, {what} vs {peer}"),
            ours,
            base,
            Unit::NsPerOp,
            Target::None,
            runs,
        )
    };
    Ok(vec![
        row(&nf, "FileCache", &nq, "quick_cache"),
        row(&nf, "FileCache", &nm, "moka"),
        row(
            &nt,
            "FileCache (queue + frequency, ≤ B/8)",
            &nq,
            "quick_cache",
        ),
        row(&nt, "FileCache (queue + frequency, ≤ B/8)", &nm, "moka"),
    ])
}

/// The hit path: a cached 1 MiB file handed out as an Aggregate (by path,
/// from a held `File`, and from an armed `CachedFile` handle, which asks
/// the file nothing) beside quick_cache's `get` of its `Bytes`.
fn hit_path_rows(dir: &Path, runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let err = |e: io::Error| e.to_string();
    let p = dir.join("hit-1m");
    std::fs::write(&p, vec![7u8; 1 << 20]).map_err(err)?;
    // Past the settle time, so the first read is cached for good.
    std::thread::sleep(Duration::from_millis(1100));
    let fc = FileCache::new(CacheConfig::default().with_budget(64 << 20)).map_err(err)?;
    let file = File::open(&p).map_err(err)?;
    let handle = fc.open(&p).map_err(err)?;
    if !handle.is_armed() {
        return Err("FileCache::open: the handle is not armed (no lease here?)".into());
    }
    // The same through a cache that counts lookups (the frequency count).
    let fcf = FileCache::new(best_config(64 << 20)).map_err(err)?;
    let handle_f = fcf.open(&p).map_err(err)?;
    handle_f.read(..).map_err(err)?;
    let q = quick(64 << 20, None);
    ferry_lookup(&fc, &p).map_err(err)?;
    quick_lookup(&q, &p).map_err(err)?;
    let misses = fc.stats().misses;
    if ferry_lookup(&fc, &p).map_err(err)? != 1 << 20
        || handle.read(..).map_err(err)?.len() != 1 << 20
        || fc.stats().misses != misses
        || !handle_f.is_armed()
        || handle_f.read(..).map_err(err)?.len() != 1 << 20
        || fcf.stats().misses != 4
    {
        return Err("FileCache: the 1 MiB file is not a hit after one read".into());
    }
    let n = scale.of(300_000);
    let (nr, nrf, nh, nhf, nq) = (
        "FileCache::read (path), cached 1 MiB",
        "FileCache::read_file (held File), cached 1 MiB",
        "CachedFile::read (armed handle), cached 1 MiB",
        "CachedFile::read (armed handle, frequency count), cached 1 MiB",
        "quick_cache get (Bytes clone), cached 1 MiB",
    );
    let mut vs = vec![
        Variant::new(nr, || {
            timed(n, || {
                for _ in 0..n {
                    let _ = black_box(fc.read(black_box(&p), ..));
                }
            })
        }),
        Variant::new(nrf, || {
            timed(n, || {
                for _ in 0..n {
                    let _ = black_box(fc.read_file(black_box(&file), &p, ..));
                }
            })
        }),
        Variant::new(nh, || {
            timed(n, || {
                for _ in 0..n {
                    let _ = black_box(black_box(&handle).read(..));
                }
            })
        }),
        Variant::new(nhf, || {
            timed(n, || {
                for _ in 0..n {
                    let _ = black_box(black_box(&handle_f).read(..));
                }
            })
        }),
        Variant::new(nq, || {
            timed(n, || {
                for _ in 0..n {
                    black_box(q.get(black_box(p.as_path())));
                }
            })
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    let row = |what: &str, ferry: &str| {
        compare(
            &s,
            what,
            ferry,
            nq,
            Unit::NsPerOp,
            Target::MaxNs(200.0),
            runs,
        )
    };
    Ok(vec![
        row("cache hit, 1 MiB file: lookup by path + Aggregate", nr),
        row(
            "cache hit, 1 MiB file: lookup by held File + Aggregate",
            nrf,
        ),
        row(
            "cache hit, 1 MiB file: lookup by armed CachedFile + Aggregate",
            nh,
        ),
        row(
            "cache hit, 1 MiB file: armed CachedFile, frequency count on",
            nhf,
        ),
    ])
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let quick_run = scale.0 < 1.0;
    let (n_files, max) = if quick_run {
        (60, 1 << 20)
    } else {
        (1000, 8 << 20)
    };
    let len = scale.of(20_000).max(400);
    let dir =
        Scratch(std::env::temp_dir().join(format!("ferry-bench-cache-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).map_err(|e| format!("{}: {e}", dir.0.display()))?;
    let f = make_files(&dir.0, n_files, max)?;
    let total: usize = f.sizes.iter().sum();
    let budget = total / 10;
    // Warm the page cache; the sleep is FileCache's settle time (a file
    // changed less than 1 s before a read is not served from the cache).
    for p in &f.paths {
        black_box(std::fs::read(p).map_err(|e| e.to_string())?);
    }
    std::thread::sleep(Duration::from_millis(1100));
    let seed = 0x10_117e;
    let ts = vec![
        traces::zipf(seed, n_files, len, 0.7),
        traces::zipf(seed + 1, n_files, len, 1.0),
        traces::zipf(seed + 2, n_files, len, 1.2),
        traces::scan_hot(seed + 3, n_files, len),
        traces::web(seed + 4, n_files, len),
    ];
    eprintln!(
        "  {n_files} files, {:.1} MiB, budget {:.1} MiB, {len} lookups per trace",
        total as f64 / 1048576.0,
        budget as f64 / 1048576.0
    );
    eprintln!("  hit ratio (by count / by bytes), one thread, medians of {runs} passes:");
    let names: Vec<&str> = ferry_configs(budget).iter().map(|c| c.0).collect();
    eprintln!(
        "| trace | {} | quick_cache | quick_cache, FileCache's charge | moka | within 1 point of quick_cache (count): {} |",
        names.join(" | "),
        names.join(" / ")
    );
    eprintln!("|---|{}---|---|---|---|", "---|".repeat(names.len()));
    for t in &ts {
        // Medians of `runs` passes, each with fresh caches: the caches'
        // hashers are seeded at random, which moves their hit ratios by
        // a point or two from pass to pass.
        let passes = (0..runs)
            .map(|_| hit_ratios(&f, t, budget))
            .collect::<Result<Vec<_>, _>>()?;
        let col = |pick: &dyn Fn(&Pass) -> Hits| Hits::median(passes.iter().map(pick).collect());
        let fh: Vec<Hits> = (0..passes[0].0.len()).map(|k| col(&|p| p.0[k])).collect();
        let (q, qf, m) = (col(&|p| p.1[0]), col(&|p| p.1[1]), col(&|p| p.1[2]));
        let within = |x: &Hits| {
            if q.by_count() - x.by_count() <= 1.0 {
                "yes"
            } else {
                "NO"
            }
        };
        eprintln!(
            "| {} | {} | {} | {} | {} | {} |",
            t.name,
            fh.iter().map(Hits::show).collect::<Vec<_>>().join(" | "),
            q.show(),
            qf.show(),
            m.show(),
            fh.iter().map(within).collect::<Vec<_>>().join(" / ")
        );
    }
    let mut rows = hit_path_rows(&dir.0, runs, scale)?;
    for t in &ts {
        for threads in [1, 2] {
            rows.extend(throughput_rows(&f, t, budget, threads, runs)?);
        }
    }
    Ok(rows)
}
