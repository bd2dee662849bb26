//! The admission queue (`CacheConfig::admission_queue`): files read once,
//! in a scan larger than the cache, wait in the small queue and leave it
//! without pushing out the files read again and again; without the queue
//! IO-Lite's order alone lets the scan flush them.

use ferry::cache::{CacheConfig, FileCache};
use std::path::PathBuf;
use std::time::Duration;

const SETTLE: Duration = Duration::from_millis(50);
const EXTENT: usize = 4096;

/// `n` files of one extent each, their last change settled.
fn files(dir: &std::path::Path, prefix: &str, n: usize) -> Vec<PathBuf> {
    let v: Vec<PathBuf> = (0..n)
        .map(|i| {
            let p = dir.join(format!("{prefix}{i}"));
            std::fs::write(&p, vec![i as u8; EXTENT]).unwrap();
            p
        })
        .collect();
    v
}

/// Hits among the hot files after: two rounds over them, one scan of
/// 40 other files, and a last round over them.
fn hot_hits_after_a_scan(admission: bool) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let hot = files(dir.path(), "hot", 4);
    let scan = files(dir.path(), "scan", 40);
    std::thread::sleep(SETTLE * 2);
    let c = FileCache::new(
        CacheConfig::default()
            .with_budget(8 * EXTENT)
            .with_extent(EXTENT)
            .with_settle(SETTLE)
            .with_admission_queue(admission),
    )
    .unwrap();
    for _ in 0..2 {
        for p in &hot {
            assert_eq!(c.read(p, ..).unwrap().len(), EXTENT);
        }
    }
    for p in &scan {
        assert_eq!(c.read(p, ..).unwrap().len(), EXTENT);
    }
    let before = c.stats().hits;
    for (i, p) in hot.iter().enumerate() {
        assert_eq!(c.read(p, ..).unwrap(), &vec![i as u8; EXTENT][..]);
    }
    let s = c.stats();
    assert!(s.bytes_held <= s.budget);
    s.hits - before
}

#[test]
#[cfg_attr(miri, ignore = "real files")]
fn a_scan_does_not_flush_the_hot_files_with_the_admission_queue() {
    assert_eq!(hot_hits_after_a_scan(true), 4);
}

#[test]
#[cfg_attr(miri, ignore = "real files")]
fn a_scan_flushes_the_hot_files_without_the_admission_queue() {
    assert_eq!(hot_hits_after_a_scan(false), 0);
}

/// `CacheConfig::largest_file`: a file over the limit is read whole for
/// each lookup and never cached (its bytes counted as uncached), while a
/// file within it is cached and hit; without the limit both are cached.
#[test]
#[cfg_attr(miri, ignore = "files")]
fn files_over_the_largest_size_are_served_but_not_cached() {
    let dir = tempfile::tempdir().unwrap();
    let small = dir.path().join("small");
    let large = dir.path().join("large");
    std::fs::write(&small, vec![1u8; 2 * EXTENT]).unwrap();
    let big: Vec<u8> = (0..5 * EXTENT).map(|i| (i % 251) as u8).collect();
    std::fs::write(&large, &big).unwrap();
    std::thread::sleep(SETTLE * 2);
    for limit in [Some(4 * EXTENT as u64), None] {
        let c = FileCache::new(
            CacheConfig::default()
                .with_budget(64 * EXTENT)
                .with_extent(EXTENT)
                .with_settle(SETTLE)
                .with_largest_file(limit),
        )
        .unwrap();
        for _ in 0..3 {
            assert_eq!(c.read(&large, ..).unwrap().copy_to_vec(), big);
            assert_eq!(c.read(&small, ..).unwrap().len(), 2 * EXTENT);
        }
        let st = c.stats();
        match limit {
            Some(_) => {
                assert_eq!(st.uncached_bytes, 3 * big.len() as u64, "{st:?}");
                assert_eq!(st.entries, 2, "only the small file's extents: {st:?}");
                assert_eq!(st.hits, 4, "{st:?}");
            }
            None => {
                assert_eq!(st.uncached_bytes, 0, "{st:?}");
                assert_eq!(st.entries, 7, "{st:?}");
                assert_eq!(st.hits, 14, "{st:?}");
            }
        }
    }
}
