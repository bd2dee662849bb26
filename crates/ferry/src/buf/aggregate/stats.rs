//! Fragment statistics of an aggregate.

use super::Aggregate;
use std::collections::HashSet;

/// How an [`Aggregate`] is laid out: how many slices, how big, over how
/// many blocks. A caller deciding whether to [`coalesce`](Aggregate::coalesce)
/// (a copy) looks here first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FragmentStats {
    /// Total bytes.
    pub bytes: usize,
    /// Number of slices.
    pub slices: usize,
    /// Smallest slice (0 when empty).
    pub smallest: usize,
    /// Largest slice.
    pub largest: usize,
    /// Distinct blocks the slices point into (static slices count as one).
    pub blocks: usize,
    /// Slices that live in pool slots.
    pub pooled_slices: usize,
}

impl FragmentStats {
    pub(super) fn of(a: &Aggregate) -> FragmentStats {
        let mut blocks = HashSet::new();
        let mut s = FragmentStats {
            bytes: a.len(),
            slices: a.slice_count(),
            smallest: usize::MAX,
            ..FragmentStats::default()
        };
        for b in a.bufs() {
            s.smallest = s.smallest.min(b.len());
            s.largest = s.largest.max(b.len());
            blocks.insert(b.content_id().block);
            if b.is_pooled() {
                s.pooled_slices += 1;
            }
        }
        if s.slices == 0 {
            s.smallest = 0;
        }
        s.blocks = blocks.len();
        s
    }

    /// Mean slice length (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.slices == 0 {
            0.0
        } else {
            self.bytes as f64 / self.slices as f64
        }
    }
}
