//! Pool statistics.

/// A snapshot of a pool's counters (taken shard by shard, so only
/// approximately consistent while other threads allocate).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PoolStats {
    /// The byte budget.
    pub budget: usize,
    /// Bytes of slot memory that exist, in use or free.
    pub reserved_bytes: usize,
    /// Bytes of slots handed out and not yet back.
    pub in_use_bytes: usize,
    /// Slots handed out and not yet back.
    pub in_use_slots: usize,
    /// Bytes of free slots kept for reuse.
    pub free_bytes: usize,
    /// Free slots kept for reuse.
    pub free_slots: usize,
    /// The most slot memory the pool has held at once. Slots are made only
    /// when no free one of the class exists, so this is the peak of bytes in
    /// use, plus free slots of other classes at that moment.
    pub high_water_bytes: usize,
    /// Allocations served by a free slot.
    pub hits: u64,
    /// Allocations that made a new slot.
    pub misses: u64,
    /// Allocations refused for lack of budget.
    pub exhausted: u64,
    /// Allocations that had to wait (`alloc_timeout`).
    pub waits: u64,
    /// Per size class.
    pub classes: Vec<ClassStats>,
}

/// Counters of one size class.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// Slot size in bytes.
    pub size: usize,
    /// Slots that exist.
    pub slots: usize,
    /// Slots free.
    pub free_slots: usize,
    /// Slots handed out.
    pub in_use_slots: usize,
}

impl PoolStats {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn from_classes(
        budget: usize,
        reserved_bytes: usize,
        high_water_bytes: usize,
        hits: u64,
        misses: u64,
        exhausted: u64,
        waits: u64,
        classes: Vec<ClassStats>,
    ) -> PoolStats {
        let free_slots = classes.iter().map(|c| c.free_slots).sum();
        let free_bytes = classes.iter().map(|c| c.free_slots * c.size).sum();
        let in_use_slots = classes.iter().map(|c| c.in_use_slots).sum();
        let in_use_bytes = classes.iter().map(|c| c.in_use_slots * c.size).sum();
        PoolStats {
            budget,
            reserved_bytes,
            in_use_bytes,
            in_use_slots,
            free_bytes,
            free_slots,
            high_water_bytes,
            hits,
            misses,
            exhausted,
            waits,
            classes,
        }
    }
}
