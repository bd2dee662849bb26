//! A pool's slots from their making to their return: taking a free slot
//! or making one under the budget (`PoolShared::try_alloc`), releasing
//! free ones, and [`recycle`], which the last drop of a slot's block calls
//! through the link the pool put in its header.

use super::{home_shard, PoolShared, SlotPtr};
use crate::buf::block::{next_block_id, Backing, Header, SlotLink, SlotVtable};
use crate::sync::atomic::Ordering;
use crate::sync::Arc;
use std::alloc::Layout;
use std::mem::ManuallyDrop;
use std::ptr::NonNull;
use std::sync::PoisonError;

/// What every slot's link ([`SlotLink`], in the block header) calls back.
///
/// Every slot, free or handed out, holds a reference to its pool (the
/// link's owner, from `Arc::into_raw`), so alloc and free touch no shared
/// reference count; the cycle (pool → free slot → pool) is broken when the
/// last `Pool` handle closes the pool and frees the free slots.
static SLOT_VTABLE: SlotVtable = SlotVtable {
    recycle,
    release: release_pool,
};

/// Lets go of a slot's reference to its pool (the slot's header is going).
///
/// # Safety
/// `owner` came from `Arc::into_raw` of a `PoolShared` in `new_slot`, and
/// is let go of once.
unsafe fn release_pool(owner: NonNull<()>) {
    // SAFETY: per the contract, one reference of its own.
    drop(unsafe { Arc::from_raw(owner.as_ptr().cast::<PoolShared>().cast_const()) })
}

/// The pool a slot's link refers to, without taking its reference: not to
/// be dropped, nor used once the slot's header is gone.
///
/// # Safety
/// `link` is a live slot's, made by `new_slot`.
unsafe fn pool_of(link: &SlotLink) -> ManuallyDrop<Arc<PoolShared>> {
    // SAFETY: the link's owner is a reference from `Arc::into_raw` that
    // the slot keeps until its header drops; wrapped so it is not dropped.
    ManuallyDrop::new(unsafe {
        Arc::from_raw(link.owner().as_ptr().cast::<PoolShared>().cast_const())
    })
}

impl PoolShared {
    /// A free slot of `class` (and whether it was just made), or None if the
    /// budget is used up. `waiting`: the caller holds `wait_lock` (an
    /// `alloc_timeout` looking again), so waking others must not lock it
    /// again — that self-deadlock is what the loom model of a waiter found.
    pub(super) fn try_alloc(
        this: &Arc<Self>,
        class: usize,
        waiting: bool,
    ) -> Option<(NonNull<Header>, bool)> {
        let n = this.shards.len();
        let home = home_shard(n);
        for i in 0..n {
            let mut s = this.shards[(home + i) & (n - 1)].lock();
            if let Some(SlotPtr(p)) = s.free[class].pop() {
                s.hits += 1;
                return Some((p, false));
            }
        }
        let size = this.classes[class];
        let fits = this.reserve(size) || {
            let released = this.release_free(size);
            let fits = released > 0 && this.reserve(size);
            if released > size || (released > 0 && !fits) {
                // Budget left over for others: wake them.
                if waiting {
                    this.wait_cv.notify_all();
                } else {
                    this.wake_waiters();
                }
            }
            fits
        };
        if fits {
            this.misses.fetch_add(1, Ordering::Relaxed);
            return Some((PoolShared::new_slot(this, class), true));
        }
        None
    }

    /// Claims `size` bytes of budget.
    fn reserve(&self, size: usize) -> bool {
        let mut cur = self.reserved.load(Ordering::Relaxed);
        loop {
            let Some(next) = cur.checked_add(size).filter(|&n| n <= self.budget) else {
                return false;
            };
            match self.reserved.compare_exchange_weak(
                cur,
                next,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    self.high_water.fetch_max(next, Ordering::Relaxed);
                    return true;
                }
                Err(actual) => cur = actual,
            }
        }
    }

    fn new_slot(this: &Arc<Self>, class: usize) -> NonNull<Header> {
        let size = this.classes[class];
        let layout = match Layout::from_size_align(size, crate::sys::page_size()) {
            Ok(l) => l,
            Err(_) => unreachable!("class sizes are validated page multiples"),
        };
        // (size is non-zero: classes are at least one page.)
        let ptr = if this.protect {
            crate::sys::pages::alloc_pages(layout)
        } else {
            crate::sys::pages::alloc_zeroed(layout)
        };
        let Some(data) = NonNull::new(ptr) else {
            std::alloc::handle_alloc_error(layout)
        };
        this.slots[class].fetch_add(1, Ordering::Relaxed);
        let owner = Arc::into_raw(Arc::clone(this)).cast_mut().cast::<()>();
        // SAFETY: `Arc::into_raw` never returns null.
        let owner = unsafe { NonNull::new_unchecked(owner) };
        // SAFETY: `owner` is a reference of the slot's own, which
        // `release_pool` lets go of when the link drops; `recycle` takes
        // back any slot of a pool.
        let link = unsafe { SlotLink::new(owner, &SLOT_VTABLE, class, layout, this.protect) };
        let h = Header::new(next_block_id(), data, size, Backing::Pool(link));
        NonNull::from(Box::leak(Box::new(h)))
    }

    /// Frees up to `want` bytes of free slots (any class); returns the bytes
    /// released. The caller wakes waiters if it should (it may hold
    /// `wait_lock`).
    ///
    /// The freed slots' headers are dropped last: each holds a reference to
    /// this pool, so the caller must hold one of its own if it uses the pool
    /// afterwards (every caller does: a `Pool` handle).
    pub(super) fn release_free(&self, want: usize) -> usize {
        let mut victims = Vec::new();
        let mut released = 0;
        'outer: for shard in self.shards.iter() {
            let mut s = shard.lock();
            for (class, list) in s.free.iter_mut().enumerate() {
                while let Some(v) = list.pop() {
                    released += self.classes[class];
                    self.slots[class].fetch_sub(1, Ordering::Relaxed);
                    victims.push(v);
                    if released >= want {
                        break 'outer;
                    }
                }
            }
        }
        self.reserved.fetch_sub(released, Ordering::AcqRel);
        for SlotPtr(p) in victims {
            // SAFETY: a free slot is owned by its free list alone; we took it
            // off the list, so dropping its header (which frees its memory
            // and its reference to the pool) is ours to do.
            drop(unsafe { Box::from_raw(p.as_ptr()) });
        }
        released
    }

    pub(super) fn wake_waiters(&self) {
        if self.waiters.load(Ordering::SeqCst) > 0 {
            let _g = self
                .wait_lock
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            self.wait_cv.notify_all();
        }
    }
}

/// Returns a slot whose last reference just went to its pool (the link's
/// `recycle`).
///
/// # Safety
/// `hdr` must be a pool slot's header with no references left.
unsafe fn recycle(hdr: NonNull<Header>) {
    // SAFETY: no references are left, so we have the header to ourselves.
    let h = unsafe { &mut *hdr.as_ptr() };
    let Backing::Pool(link) = &h.backing else {
        unreachable!("recycle called on a block that is not a pool slot")
    };
    let class = link.class;
    // Pages the kernel may still hold go before the slot can be reused;
    // a slot whose pages would not go is never reused (released below,
    // its memory leaked by the header's drop).
    let refreshed = h.forget_lent_pages();
    let Backing::Pool(link) = &h.backing else {
        unreachable!("recycle called on a block that is not a pool slot")
    };
    // SAFETY: the slot's link, made by `new_slot`; `pool` is not used
    // once the header is dropped below.
    let pool = unsafe { pool_of(link) };
    // The slot's own reference keeps the pool alive for as long as we own
    // the slot, i.e. until it is on a free list *and* we have let go of the
    // shard lock. After that we must not touch the pool without a reference
    // of our own.
    let pool_ref: &PoolShared = &pool;
    let n = pool_ref.shards.len();
    let mut shard = pool_ref.shards[home_shard(n)].lock();
    if !refreshed || pool_ref.closed.load(Ordering::SeqCst) {
        // The last handle is gone (or the slot may not be reused): free
        // the slot rather than keep it.
        drop(shard);
        pool_ref
            .reserved
            .fetch_sub(pool_ref.classes[class], Ordering::AcqRel);
        pool_ref.slots[class].fetch_sub(1, Ordering::Relaxed);
        // SAFETY: still ours alone; dropping it releases its memory and, last
        // of all, its reference to the pool.
        drop(unsafe { Box::from_raw(hdr.as_ptr()) });
        return;
    }
    // Waiters are rare: only then take a reference of our own, while the
    // shard lock still pins the slot (and so the pool).
    let wake = (pool_ref.waiters.load(Ordering::SeqCst) > 0).then(|| Arc::clone(&pool));
    shard.free[class].push(SlotPtr(hdr));
    drop(shard);
    if let Some(p) = wake {
        p.wake_waiters();
    }
}
