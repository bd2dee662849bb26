//! How often each extent was looked up lately, approximately: a count-min
//! sketch (four rows of saturating counters, the smallest of a key's four
//! counters its estimate) that halves every counter after a sample of
//! lookups — TinyLFU's frequency estimate (Einziger, Friedman and Manes,
//! ACM TOS 2017), as moka and Caffeine keep it.
//!
//! Lookups on any thread record without a lock: a counter is read and
//! written back one higher with relaxed atomics, so two threads recording
//! at once may count once. The estimate is a hint for replacement, never
//! a fact the cache relies on; a lost count only makes an extent look a
//! little colder.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Counter ceiling (TinyLFU's 4-bit counters).
const MAX: u8 = 15;
const ROWS: usize = 4;
/// Lookups per counter of a row between halvings (TinyLFU's sample size
/// is ten times the number of entries the cache holds).
const SAMPLE_PER_COUNTER: u64 = 10;

pub(super) struct Sketch {
    /// `ROWS` rows of `mask + 1` counters, one after another.
    counters: Box<[AtomicU8]>,
    mask: usize,
    recorded: AtomicU64,
    sample: u64,
}

impl Sketch {
    /// A sketch for a cache of about `entries` entries (a row gets the next
    /// power of two at or above it, within limits).
    pub fn new(entries: usize) -> Sketch {
        let width = entries.clamp(256, 1 << 20).next_power_of_two();
        Sketch {
            counters: (0..ROWS * width).map(|_| AtomicU8::new(0)).collect(),
            mask: width - 1,
            recorded: AtomicU64::new(0),
            sample: SAMPLE_PER_COUNTER * width as u64,
        }
    }

    /// The counter of `hash` in `row`.
    fn counter(&self, hash: u64, row: usize) -> &AtomicU8 {
        // Each row takes its index from other bits of a remixed hash.
        let h = hash
            .wrapping_mul(0x9e37_79b9_7f4a_7c15)
            .rotate_left(16 * row as u32);
        let i = (h as usize ^ (h >> 32) as usize) & self.mask;
        &self.counters[row * (self.mask + 1) + i]
    }

    /// Counts one lookup of the key hashed to `hash`.
    pub fn record(&self, hash: u64) {
        let low = self.estimate(hash);
        if low < MAX {
            // Conservative update: only the counters at the minimum grow,
            // which keeps collisions from inflating estimates.
            for row in 0..ROWS {
                let c = self.counter(hash, row);
                if c.load(Ordering::Relaxed) == low {
                    c.store(low + 1, Ordering::Relaxed);
                }
            }
        }
        let n = self.recorded.fetch_add(1, Ordering::Relaxed) + 1;
        if n.is_multiple_of(self.sample) {
            self.halve();
        }
    }

    /// How many times the key hashed to `hash` was looked up lately (at
    /// most the ceiling, 15; never less than the truth, less any lost
    /// counts and halvings).
    pub fn estimate(&self, hash: u64) -> u8 {
        (0..ROWS)
            .map(|row| self.counter(hash, row).load(Ordering::Relaxed))
            .min()
            .unwrap_or(0)
    }

    /// Ages every count: halves it.
    fn halve(&self) {
        for c in self.counters.iter() {
            c.store(c.load(Ordering::Relaxed) / 2, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_looked_up_more_often_estimates_higher_than_one_looked_up_once() {
        let s = Sketch::new(1024);
        for _ in 0..5 {
            s.record(42);
        }
        s.record(7);
        assert_eq!(s.estimate(42), 5);
        assert_eq!(s.estimate(7), 1);
        assert_eq!(s.estimate(99), 0);
    }

    #[test]
    fn counts_stop_at_the_ceiling() {
        let s = Sketch::new(1024);
        for _ in 0..100 {
            s.record(1);
        }
        assert_eq!(s.estimate(1), MAX);
    }

    #[test]
    fn counts_halve_after_a_sample_of_lookups() {
        let s = Sketch::new(256);
        for _ in 0..MAX {
            s.record(3);
        }
        assert_eq!(s.estimate(3), MAX);
        // The rest of the sample, spread over other keys (which may push
        // key 3's counters no higher than the ceiling).
        for k in 0..s.sample - u64::from(MAX) {
            s.record(1_000_000 + k);
        }
        assert!(s.estimate(3) <= MAX / 2, "estimate {}", s.estimate(3));
    }
}
