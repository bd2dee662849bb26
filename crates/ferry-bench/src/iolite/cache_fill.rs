//! How FileCache fills a miss (IO-Lite §2.5 leaves it to the system): a
//! `pread` into a pool buffer ([`Fill::Read`], one copy) against a window
//! of the file mapped under ferry's read lease ([`Fill::Map`], no copy, a
//! mapping and its page faults instead), per extent size and page-cache
//! layout (large folios, as a file read cold; 4 KiB pages, as a log or a
//! pipe's output lands).
//!
//! Each run: a fresh cache, the whole file read through it (every extent
//! a miss), and one word per page of what it handed out read (the
//! paper's rule: a mapping's pages are faulted in by their first reader,
//! so leaving them untouched would hide its cost). The file is in the
//! page cache throughout.

use super::ipc::err;
use crate::files::{lay_out, make_file, warm, Content, Layout};
use crate::measure::{compare, interleave, Scale, Variant};
use crate::report::{Row, Target, Unit};
use ferry::cache::{CacheConfig, FileCache, Fill};
use std::time::Instant;

const FILE: usize = 64 << 20;
const EXTENTS: [usize; 4] = [64 << 10, 256 << 10, 1 << 20, 4 << 20];

/// Reads the whole file through a fresh cache filling by `fill`, touches
/// a word per page; the time and the bytes.
fn fill_once(
    path: &std::path::Path,
    size: u64,
    extent: usize,
    fill: Fill,
) -> Result<(std::time::Duration, f64), String> {
    let cache = FileCache::new(
        CacheConfig::default()
            .with_budget(2 * size as usize + (16 << 20))
            .with_extent(extent)
            .with_fill(fill),
    )
    .map_err(err)?;
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

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let size = scale.of(FILE).max(64 << 10) as u64;
    let s = make_file(size, None, Content::Random, "fill")?;
    let mut rows = Vec::new();
    for (layout, pages) in [
        (Layout::Large, "large folios"),
        (Layout::Small, "4 KiB pages"),
    ] {
        lay_out(&s.path, layout)?;
        for extent in EXTENTS {
            let kib = extent >> 10;
            let (read, map) = (
                format!("Fill::Read, {kib} KiB extents, {pages}"),
                format!("Fill::Map, {kib} KiB extents, {pages}"),
            );
            let mut vs = vec![
                Variant::new(read.clone(), || {
                    fill_once(&s.path, size, extent, Fill::Read)
                }),
                Variant::new(map.clone(), || fill_once(&s.path, size, extent, Fill::Map)),
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
