//! What the cache holds against its budget: the bytes an extent is
//! charged (the pool's size classes) and the stats.

use super::{CacheStats, FileCache};

impl FileCache {
    /// The bytes of the budget an extent of `len` bytes is charged: the
    /// pool slot that holds it (a page multiple at most a quarter larger
    /// than `len` up to the extent size), or whole pages past the
    /// extent size (a caller's buffer written in).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let cache = ferry::cache::FileCache::new(Default::default())?;
    /// assert_eq!(cache.charge(1), 4096);
    /// assert_eq!(cache.charge(4097), 8192);
    /// assert_eq!(cache.charge(17_000), 20_480);
    /// assert!(cache.charge(100_000) >= 100_000 && cache.charge(100_000) <= 125_000);
    /// # Ok(()) }
    /// ```
    pub fn charge(&self, len: usize) -> usize {
        self.inner.core.charge(len)
    }

    /// What the cache did and holds.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, vec![7u8; 10_000])?;
    /// let cache = ferry::cache::FileCache::new(Default::default())?;
    /// let held = cache.read(&path, ..)?;
    /// let s = cache.stats();
    /// assert_eq!(s.misses, 1);
    /// assert!(s.bytes_held >= 10_000 && s.bytes_held <= s.budget);
    /// assert_eq!(s.bytes_shared, s.bytes_held); // `held` shares it
    /// drop(held);
    /// assert_eq!(cache.stats().bytes_shared, 0);
    /// # Ok(()) }
    /// ```
    pub fn stats(&self) -> CacheStats {
        let s = self.inner.core.stats();
        CacheStats {
            hits: s.hits,
            misses: s.misses,
            evictions: s.evictions,
            replaced: s.replaced,
            promoted: s.promoted,
            uncached_bytes: s.uncached,
            entries: s.entries,
            bytes_held: s.held,
            bytes_shared: s.shared,
            budget: self.inner.core.budget(),
        }
    }
}

/// The pool's size classes for extents of at most `extent` bytes (a
/// multiple of the page): every page multiple to 16 KiB, then four per
/// doubling (20, 24, 28, 32, 40, … KiB), then `extent`. An extent is
/// charged the class that holds it, so a class at most a quarter larger
/// than the bytes it holds wastes at most a fifth of the budget on
/// rounding (whole powers of two wasted up to half: 1.3–3 points of hit
/// ratio on the file-cache traces of docs/BENCHMARKS.md).
pub(super) fn size_classes(extent: usize) -> Vec<usize> {
    const PAGE: usize = 4096;
    let mut classes = Vec::new();
    let mut octave = PAGE;
    'grow: loop {
        for quarter in 0..4 {
            let c = (octave + quarter * octave / 4) / PAGE * PAGE;
            if c >= extent {
                break 'grow;
            }
            if classes.last() != Some(&c) {
                classes.push(c);
            }
        }
        octave *= 2;
    }
    classes.push(extent);
    classes
}

#[cfg(test)]
mod tests {
    use super::size_classes;

    #[test]
    fn size_classes_are_pages_at_most_a_quarter_apart_up_to_the_extent() {
        for extent in [4096, 8192, 65536, 256 << 10, 1 << 20, 3 * 4096] {
            let c = size_classes(extent);
            assert_eq!(c[0], 4096.min(extent));
            assert_eq!(*c.last().unwrap(), extent);
            for w in c.windows(2) {
                assert!(w[0] < w[1], "{c:?}");
                assert_eq!(w[1] % 4096, 0);
                // The next class is at most a quarter larger, or one page.
                assert!(w[1] <= (w[0] + w[0] / 4).max(w[0] + 4096), "{c:?}");
            }
        }
    }
}
