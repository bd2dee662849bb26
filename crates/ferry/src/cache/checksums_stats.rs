//! The counters behind [`Checksums::stats`](super::Checksums::stats):
//! striped per thread, so counting does not make threads meet.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// What one checksum function did.
///
/// ```
/// let s = ferry::cache::Checksums::new().stats();
/// assert_eq!(s.crc32c, ferry::cache::FunctionStats::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FunctionStats {
    /// Values found in the cache (per slice for CRC-32C and the Internet
    /// checksum, per buffer or aggregate for the strong hash).
    pub hits: u64,
    /// Values computed from the bytes.
    pub misses: u64,
    /// Bytes read to compute them.
    pub bytes: u64,
}

/// Counters of a [`Checksums`](super::Checksums) since it was made.
///
/// ```
/// let sums = ferry::cache::Checksums::new();
/// let b = ferry::Buf::from(vec![1u8; 10]);
/// sums.internet_checksum(&b)?;
/// sums.internet_checksum(&b)?;
/// let s = sums.stats().internet;
/// assert_eq!((s.hits, s.misses, s.bytes), (1, 1, 10));
/// # Ok::<(), ferry::cache::Damaged>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChecksumStats {
    /// CRC-32C.
    pub crc32c: FunctionStats,
    /// The Internet checksum.
    pub internet: FunctionStats,
    /// The strong hash (BLAKE3).
    pub strong: FunctionStats,
    /// Calls refused with [`Damaged`](super::Damaged).
    pub damaged: u64,
}

/// Which function a lookup is for (the first of its three counters).
#[derive(Clone, Copy)]
pub(crate) enum Func {
    Crc = 0,
    Ones = 3,
    Strong = 6,
}
pub(crate) const HIT: usize = 0;
pub(crate) const MISS: usize = 1;
pub(crate) const BYTES: usize = 2;
pub(crate) const DAMAGED: usize = 9;
const COUNTERS: usize = 10;
const STRIPES: usize = 16;

/// Statistics counters in stripes of their own cache lines, a thread
/// counting in its stripe, so counting does not make threads meet.
pub(crate) struct Counts {
    stripes: Box<[Stripe]>,
}

#[repr(align(128))]
#[derive(Default)]
struct Stripe([AtomicU64; COUNTERS]);

fn my_stripe() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static MINE: usize = NEXT.fetch_add(1, Ordering::Relaxed) % STRIPES;
    }
    MINE.with(|m| *m)
}

impl Counts {
    pub(crate) fn new() -> Counts {
        Counts {
            stripes: (0..STRIPES).map(|_| Stripe::default()).collect(),
        }
    }

    #[inline]
    pub(crate) fn add(&self, counter: usize, n: u64) {
        self.stripes[my_stripe()].0[counter].fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn total(&self, counter: usize) -> u64 {
        self.stripes
            .iter()
            .map(|s| s.0[counter].load(Ordering::Relaxed))
            .sum()
    }

    pub(crate) fn function(&self, f: Func) -> FunctionStats {
        let base = f as usize;
        FunctionStats {
            hits: self.total(base + HIT),
            misses: self.total(base + MISS),
            bytes: self.total(base + BYTES),
        }
    }
}
