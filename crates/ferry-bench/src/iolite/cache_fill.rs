//! How FileCache fills a miss (IO-Lite §2.5 leaves it to the system): a
//! `pread` into a pool buffer ([`Fill::Read`], one copy) against a window
//! of the file mapped under ferry's read lease ([`Fill::Map`], no copy, a
//! mapping and its page faults instead), per extent size and page-cache
//! layout (large folios, as a file read cold; 4 KiB pages, as a log or a
//! pipe's output lands).
//!
//! A cache in its steady state: two files of the same size, a budget that
//! holds one, and each run reads the other file whole through the cache
//! (every extent a miss that evicts one of the last run's, so the pool's
//! slots are reused and old mappings go, as in a busy cache), and then one
//! word per page of what it handed out (the paper's rule: a mapping's
//! pages are faulted in by their first reader, so leaving them untouched
//! would hide its cost). Both files are in the page cache throughout; two
//! untimed reads of each come first.

use super::ipc::err;
use crate::files::{lay_out, make_file, warm, Content, Layout};
use crate::measure::{compare, interleave, Scale, Variant};
use crate::report::{Row, Target, Unit};
use ferry::cache::{CacheConfig, FileCache, Fill};
use std::time::Instant;

const FILE: usize = 64 << 20;
const EXTENTS: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];

/// Reads the whole of `path` through `cache`, touches a word per page;
/// the time and the bytes.
fn fill_once(
    cache: &FileCache,
    path: &std::path::Path,
    size: u64,
) -> Result<(std::time::Duration, f64), String> {
    let mut f = std::fs::File::open(path).map_err(err)?;
    warm(&mut f)?;
    let t = Instant::now();
    let a = cache.read_file(&f, path, ..).map_err(err)?;
    let mut sum = 0u64;
    for c in a.chunks() {
        for i in (0..c.len()).step_by(4096) {
            sum = sum.wrapping_add(u64::from(c[i]));
        }
    }
    let d = t.elapsed();
    std::hint::black_box(sum);
    if a.len() as u64 != size {
        return Err(format!("read {} bytes of {size}", a.len()));
    }
    Ok((d, size as f64))
}

/// A variant: a cache filling by `fill` that holds one of the two files,
/// read in turn.
fn steady<'a>(
    name: String,
    files: [&'a std::path::Path; 2],
    size: u64,
    extent: usize,
    fill: Fill,
) -> Result<Variant<'a>, String> {
    let cache = FileCache::new(
        CacheConfig::default()
            .with_budget(size as usize + (8 << 20))
            .with_extent(extent)
            .with_fill(fill),
    )
    .map_err(err)?;
    for _ in 0..2 {
        for p in files {
            fill_once(&cache, p, size)?;
        }
    }
    let mut turn = 0;
    Ok(Variant::new(name, move || {
        turn += 1;
        fill_once(&cache, files[turn % 2], size)
    }))
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let size = scale.of(FILE).max(64 << 10) as u64;
    let a = make_file(size, None, Content::Random, "fill-a")?;
    let b = make_file(size, None, Content::Random, "fill-b")?;
    let files = [a.path.as_path(), b.path.as_path()];
    let mut rows = Vec::new();
    for (layout, pages) in [
        (Layout::Large, "large folios"),
        (Layout::Small, "4 KiB pages"),
    ] {
        for p in files {
            lay_out(p, layout)?;
        }
        for extent in EXTENTS {
            let kib = extent >> 10;
            let (read, map) = (
                format!("Fill::Read, {kib} KiB extents, {pages}"),
                format!("Fill::Map, {kib} KiB extents, {pages}"),
            );
            let mut vs = vec![
                steady(read.clone(), files, size, extent, Fill::Read)?,
                steady(map.clone(), files, size, extent, Fill::Map)?,
            ];
            let sm = interleave(runs, &mut vs)?;
            rows.push(compare(
                &sm,
                &format!("filling {kib} KiB extents, {pages}: map vs read"),
                &map,
                &read,
                Unit::GBps,
                Target::None,
                runs,
            ));
        }
    }
    Ok(rows)
}
