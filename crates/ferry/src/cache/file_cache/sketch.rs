//! How often each extent was looked up lately, approximately: a count-min
//! sketch (four rows of saturating counters, the smallest of a key's four
//! counters its estimate) that halves every counter after a sample of
//! lookups — TinyLFU's frequency estimate (Einziger, Friedman and Manes,
//! ACM TOS 2017), as moka and Caffeine keep it.
//!
//! Lookups on any thread record without a lock: a counter is read and
//! written back one higher with relaxed atomics, so two threads recording
//! at once may count once, and a count racing a halving may undo the
//! halving of that counter. The estimate is a hint for replacement, never
//! a fact the cache relies on: a lost or kept count makes an extent look
//! a little colder or hotter than it is. The lookups of a sample are
//! counted in sixteen stripes (by hash) on cache lines of their own, so
//! that threads counting do not all write one line.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// Counter ceiling (TinyLFU's 4-bit counters).
const MAX: u8 = 15;
const ROWS: usize = 4;
/// Lookups per counter of a row between halvings (TinyLFU's sample size
/// is ten times the number of entries the cache holds).
const SAMPLE_PER_COUNTER: u64 = 10;

/// Stripes of the lookup count (a power of two).
const STRIPES: usize = 16;

/// Seeds that make each row's index its own function of the hash.
const SEEDS: [u64; ROWS] = [
    0xc3a5_c85c_97cb_3127,
    0xb492_b66f_be98_f273,
    0x9ae1_6a3b_2f90_404f,
    0xcbf2_9ce4_8422_2325,
];

#[repr(align(128))]
#[derive(Default)]
struct Stripe(AtomicU64);

pub(super) struct Sketch {
    /// `ROWS` rows of `mask + 1` counters, one after another.
    counters: Box<[AtomicU8]>,
    mask: usize,
    /// Lookups since the last halving, by stripe.
    recorded: [Stripe; STRIPES],
    /// Lookups a stripe counts between halvings (a sixteenth of the
    /// sample).
    stripe_sample: u64,
}

impl Sketch {
    /// A sketch for a cache of about `entries` entries (a row gets the next
    /// power of two at or above it, within limits).
    pub fn new(entries: usize) -> Sketch {
        let width = entries.clamp(256, 1 << 20).next_power_of_two();
        Sketch {
            counters: (0..ROWS * width).map(|_| AtomicU8::new(0)).collect(),
            mask: width - 1,
            recorded: Default::default(),
            stripe_sample: SAMPLE_PER_COUNTER * width as u64 / STRIPES as u64,
        }
    }

    /// The index of `hash` in `row`: the high half of the hash mixed
    /// with the row's own seed.
    fn index(&self, hash: u64, row: usize) -> usize {
        let h = (hash ^ SEEDS[row]).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        (h >> 32) as usize & self.mask
    }

    /// The counter of `hash` in `row`.
    fn counter(&self, hash: u64, row: usize) -> &AtomicU8 {
        &self.counters[row * (self.mask + 1) + self.index(hash, row)]
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
        // The stripe by the hash's low bits (the rows use its high half).
        let stripe = &self.recorded[hash as usize & (STRIPES - 1)].0;
        let n = stripe.fetch_add(1, Ordering::Relaxed) + 1;
        if n >= self.stripe_sample {
            // This stripe's share of a sample: every stripe starts over
            // and every count halves. (Another thread may halve at about
            // the same time: counts then quarter, once.)
            for s in &self.recorded {
                s.0.store(0, Ordering::Relaxed);
            }
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
        // A sample's worth of lookups of other keys (which may push key
        // 3's counters no higher than the ceiling): some stripe reaches
        // its share of it first.
        let sample = s.stripe_sample * STRIPES as u64;
        for k in 0..sample {
            s.record(1_000_000 + k * 0x9e37_79b9);
        }
        assert!(s.estimate(3) <= MAX / 2, "estimate {}", s.estimate(3));
    }

    #[test]
    fn each_row_indexes_a_hash_on_its_own() {
        let s = Sketch::new(1 << 16);
        let hashes: Vec<u64> = (0..10_000u64)
            .map(|i| i.wrapping_mul(0xd6e8_feb8_6659_fd93).rotate_left(17))
            .collect();
        for a in 0..ROWS {
            for b in a + 1..ROWS {
                let same = hashes
                    .iter()
                    .filter(|&&h| s.index(h, a) == s.index(h, b))
                    .count();
                // By chance: 1 in 65 536 of 10 000.
                assert!(same < 10, "rows {a} and {b} agree on {same} hashes");
            }
        }
    }
}
