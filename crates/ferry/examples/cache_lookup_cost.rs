//! What a [`FileCache`] lookup costs: nanoseconds per hit on a cached
//! 1 MiB file (by path and from an open file, one and two threads, each
//! way of filling), and per miss that must evict one entry from a cache
//! of 10 000 and 100 000 entries.
//!
//! `cargo run --release -p ferry --example cache_lookup_cost [rounds]`
//! prints one line per figure: `name ns_per_op`. A shared machine makes
//! single runs noisy: run it several times and take medians.

use ferry::cache::{CacheConfig, FileCache, Fill};
use std::fs::File;
use std::path::Path;
use std::time::{Duration, Instant};

fn main() -> std::io::Result<()> {
    let rounds: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let dir = tempfile::tempdir()?;
    let path = dir.path().join("one-mib");
    std::fs::write(&path, vec![7u8; 1 << 20])?;
    // Let the file settle, so that its extents are served from the cache.
    std::thread::sleep(Duration::from_millis(1100));

    for fill in [Fill::Read, Fill::Map] {
        let cache = FileCache::new(CacheConfig::default().with_budget(64 << 20).with_fill(fill))?;
        let f = File::open(&path)?;
        assert_eq!(cache.read(&path, ..)?.len(), 1 << 20);
        assert_eq!(cache.read_file(&f, &path, ..)?.len(), 1 << 20);
        let name = format!("{fill:?}").to_lowercase();
        for threads in [1, 2] {
            let by_path = per_op(threads, rounds, || {
                let a = cache.read(&path, ..).expect("read");
                assert_eq!(a.len(), 1 << 20);
            });
            println!("hit_{name}_path_{threads}t {by_path:.0}");
            let by_file = per_op(threads, rounds, || {
                let a = cache.read_file(&f, &path, ..).expect("read_file");
                assert_eq!(a.len(), 1 << 20);
            });
            println!("hit_{name}_file_{threads}t {by_file:.0}");
        }
    }

    for entries in [10_000u64, 100_000] {
        let [evicting, with_room] = miss_cost(dir.path(), entries)?;
        println!("miss_evicting_{entries} {evicting:.0}");
        println!("miss_with_room_{entries} {with_room:.0}");
    }
    Ok(())
}

/// Nanoseconds per call of `op`, `threads` threads calling it `rounds`
/// times each at once (wall time over all calls).
fn per_op(threads: usize, rounds: u64, op: impl Fn() + Sync) -> f64 {
    let began = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..rounds {
                    op();
                }
            });
        }
    });
    began.elapsed().as_nanos() as f64 / (rounds as f64 * threads as f64)
}

/// Nanoseconds per miss on a full cache of `entries` one-page extents
/// (each miss evicts one), and per miss of the same extents on a cache
/// with room.
fn miss_cost(dir: &Path, entries: u64) -> std::io::Result<[f64; 2]> {
    const PAGE: u64 = 4096;
    let misses = 2_000u64;
    let path = dir.join(format!("sparse-{entries}"));
    // A sparse file: reads see zeros, the disk holds nothing.
    File::create(&path)?.set_len((entries + misses) * PAGE)?;
    std::thread::sleep(Duration::from_millis(1100));
    let f = File::open(&path)?;
    let mut cost = [0f64; 2];
    for (i, budget) in [entries, entries + misses].into_iter().enumerate() {
        let cache = FileCache::new(
            CacheConfig::default()
                .with_extent(PAGE as usize)
                .with_budget((budget * PAGE) as usize),
        )?;
        for e in 0..entries {
            cache.read_file(&f, &path, e * PAGE..(e + 1) * PAGE)?;
        }
        let began = Instant::now();
        for e in entries..entries + misses {
            cache.read_file(&f, &path, e * PAGE..(e + 1) * PAGE)?;
        }
        cost[i] = began.elapsed().as_nanos() as f64 / misses as f64;
        let s = cache.stats();
        assert_eq!(s.evictions, if i == 0 { misses } else { 0 });
    }
    std::fs::remove_file(&path)?;
    Ok(cost)
}
