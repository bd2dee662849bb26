//! Buffer pools: fbufs' per-domain buffer pools and Roadrunner's bounded
//! global buffer cache.
//!
//! A [`Pool`] hands out page-aligned [`BufMut`]s from size classes. When the
//! last reference to a slot's bytes goes — the `BufMut`, or every `Buf` and
//! slice frozen from it, on whatever thread — the slot returns to the pool
//! with its memory still mapped and faulted in, so the next `alloc` costs
//! neither `malloc` nor page faults. Each reuse moves the slot to a new
//! generation, so [`ContentId`](crate::ContentId)s never repeat.
//!
//! ```text
//!  alloc(len) ─► class = smallest size ≥ len
//!               ├─ this thread's shard has a free slot?  pop it       (hit)
//!               ├─ another shard has one?                steal it     (hit)
//!               ├─ budget has room?                      new slot     (miss)
//!               ├─ free slots of other classes?          release them, retry
//!               └─ PoolError::Exhausted  (or wait, with alloc_timeout)
//!  last drop   ─► slot pushed onto the dropping thread's shard
//! ```
//!
//! Free slots are kept in per-thread-ish shards (each behind its own lock,
//! on its own cache line), so threads that allocate and free concurrently
//! rarely meet; buffers allocated on one thread and freed on another are
//! fine and cheap.

mod config;
mod error;
mod slots;
mod stats;
#[cfg(test)]
mod tests;

pub use config::PoolConfig;
pub use error::PoolError;
pub use stats::{ClassStats, PoolStats};

use crate::buf::block::{Block, Header};
use crate::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use crate::sync::{Arc, Condvar, Mutex, SpinLock};
use crate::BufMut;
use std::cell::Cell;
use std::ptr::NonNull;
use std::sync::{OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// A free slot's header, owned by a shard's free list.
struct SlotPtr(NonNull<Header>);
// SAFETY: a free slot is owned by exactly one free list, behind a mutex.
unsafe impl Send for SlotPtr {}

#[derive(Default)]
struct ShardInner {
    /// Free slots, one list per class.
    free: Vec<Vec<SlotPtr>>,
    hits: u64,
}

/// One shard: a lock and its free lists, alone on a cache line pair.
///
/// The lock is a spin lock that yields the CPU while it waits: a critical
/// section is one push or pop, and a spin lock's release is a plain store,
/// where a futex mutex needs a second atomic read-modify-write. On this
/// hardware each of those costs about as much as the rest of an
/// alloc+free, so it is the difference between beating malloc and not.
#[repr(align(128))]
struct Shard {
    inner: SpinLock<ShardInner>,
}

impl Shard {
    #[inline]
    fn lock(&self) -> impl std::ops::DerefMut<Target = ShardInner> + '_ {
        self.inner.lock()
    }
}

pub(crate) struct PoolShared {
    classes: Box<[usize]>,
    /// [`PoolConfig::protect`].
    protect: bool,
    budget: usize,
    /// Bytes of all slots that exist, handed out or free.
    reserved: AtomicUsize,
    high_water: AtomicUsize,
    /// Slots that exist, per class.
    slots: Box<[AtomicUsize]>,
    misses: AtomicU64,
    exhausted: AtomicU64,
    waits: AtomicU64,
    shards: Box<[Shard]>,
    /// Set when the last `Pool` handle goes: slots coming back are freed.
    closed: AtomicBool,
    waiters: AtomicUsize,
    wait_lock: Mutex<()>,
    wait_cv: Condvar,
}

thread_local! {
    static SHARD_HINT: Cell<usize> = const { Cell::new(usize::MAX) };
}
/// Spreads threads over shards (a plain counter: std's atomic in models).
static NEXT_HINT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// This thread's home shard among `n` (a power of two).
fn home_shard(n: usize) -> usize {
    let hint = SHARD_HINT.with(|h| {
        let mut v = h.get();
        if v == usize::MAX {
            v = NEXT_HINT.fetch_add(1, Ordering::Relaxed);
            h.set(v);
        }
        v
    });
    hint & (n - 1)
}

/// A pool of page-aligned buffers in size classes under a byte budget.
///
/// Cloning a `Pool` gives another handle to the same pool. Slots handed out
/// keep the pool alive until they come back.
///
/// ```
/// use ferry::{Pool, PoolConfig};
/// let pool = Pool::new(PoolConfig::default().with_budget(1 << 20)).unwrap();
/// let mut b = pool.alloc(5000).unwrap();          // an 8 KiB slot
/// assert_eq!(b.capacity(), 8192);
/// assert_eq!(b.as_ptr() as usize % 4096, 0);
/// b.extend_from_slice(b"data");
/// let frozen = b.freeze();
/// assert_eq!(pool.stats().in_use_slots, 1);
/// drop(frozen);                                    // back to the pool
/// assert_eq!(pool.stats().free_slots, 1);
/// ```
#[derive(Clone)]
pub struct Pool {
    handle: Arc<PoolHandle>,
}

/// The users' side of a pool: when the last handle goes the pool closes.
struct PoolHandle {
    shared: Arc<PoolShared>,
}

impl Drop for PoolHandle {
    fn drop(&mut self) {
        self.shared.closed.store(true, Ordering::SeqCst);
        if self.shared.release_free(usize::MAX) > 0 {
            self.shared.wake_waiters();
        }
    }
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("classes", &self.shared().classes)
            .field("budget", &self.shared().budget)
            .finish_non_exhaustive()
    }
}

impl Pool {
    /// Makes a pool. Class sizes are rounded up to whole pages.
    ///
    /// Errors (`InvalidInput`) if there are no classes, a class is 0, or
    /// the budget cannot hold one slot of the smallest class.
    pub fn new(config: PoolConfig) -> std::io::Result<Pool> {
        let page = crate::sys::page_size();
        let classes = config.normalized_classes(page)?;
        if config.budget < classes[0] {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "pool budget of {} bytes cannot hold one {}-byte slot",
                    config.budget, classes[0]
                ),
            ));
        }
        let shards = config
            .shards
            .unwrap_or_else(|| crate::sys::cpus().map_or(4, |n| n * 2).max(2));
        let shards: Box<[Shard]> = (0..shards.clamp(1, 1 << 16).next_power_of_two())
            .map(|_| Shard {
                inner: SpinLock::new(ShardInner {
                    free: (0..classes.len()).map(|_| Vec::new()).collect(),
                    hits: 0,
                }),
            })
            .collect();
        Ok(Pool {
            handle: Arc::new(PoolHandle {
                shared: Arc::new(PoolShared {
                    protect: config.protect,
                    slots: classes.iter().map(|_| AtomicUsize::new(0)).collect(),
                    classes: classes.into_boxed_slice(),
                    budget: config.budget,
                    reserved: AtomicUsize::new(0),
                    high_water: AtomicUsize::new(0),
                    misses: AtomicU64::new(0),
                    exhausted: AtomicU64::new(0),
                    waits: AtomicU64::new(0),
                    shards,
                    waiters: AtomicUsize::new(0),
                    closed: AtomicBool::new(false),
                    wait_lock: Mutex::new(()),
                    wait_cv: Condvar::new(),
                }),
            }),
        })
    }

    fn shared(&self) -> &Arc<PoolShared> {
        &self.handle.shared
    }

    /// The process-wide pool with the default configuration (Roadrunner's
    /// global buffer cache), made on first use.
    ///
    /// ```
    /// let b = ferry::Pool::global().alloc(4096).unwrap();
    /// assert_eq!(b.capacity(), 4096);
    /// ```
    pub fn global() -> &'static Pool {
        static GLOBAL: OnceLock<Pool> = OnceLock::new();
        GLOBAL.get_or_init(|| match Pool::new(PoolConfig::default()) {
            Ok(p) => p,
            Err(e) => unreachable!("the default pool configuration is valid: {e}"),
        })
    }

    /// The class sizes, smallest first.
    pub fn classes(&self) -> &[usize] {
        &self.shared().classes
    }

    /// The byte budget.
    pub fn budget(&self) -> usize {
        self.shared().budget
    }

    /// The slot size `alloc(len)` would hand out, if any class fits.
    ///
    /// ```
    /// let pool = ferry::Pool::new(Default::default()).unwrap();
    /// assert_eq!(pool.class_size(1), Some(4096));
    /// assert_eq!(pool.class_size(4097), Some(8192));
    /// assert_eq!(pool.class_size(2 << 20), None);
    /// ```
    pub fn class_size(&self, len: usize) -> Option<usize> {
        self.class_of(len).map(|c| self.shared().classes[c])
    }

    fn class_of(&self, len: usize) -> Option<usize> {
        self.shared().classes.iter().position(|&c| c >= len)
    }

    /// An empty `BufMut` whose capacity is the smallest class that holds
    /// `len` bytes. Fails at once with [`PoolError::Exhausted`] if the budget
    /// is used up by slots in use.
    ///
    /// ```
    /// use ferry::{Pool, PoolConfig, PoolError};
    /// let pool = Pool::new(PoolConfig::default().with_budget(8192)).unwrap();
    /// let a = pool.alloc(8192).unwrap();
    /// assert!(matches!(pool.alloc(1), Err(PoolError::Exhausted { .. })));
    /// drop(a);
    /// assert!(pool.alloc(1).is_ok());
    /// ```
    pub fn alloc(&self, len: usize) -> Result<BufMut, PoolError> {
        let class = self.class_for(len)?;
        match PoolShared::try_alloc(self.shared(), class, false) {
            Some(slot) => self.hand_out(slot, len, class),
            None => Err(self.exhausted(len, class)),
        }
    }

    /// Like [`alloc`](Pool::alloc), but when the budget is used up waits up
    /// to `timeout` for another thread to free a slot.
    ///
    /// ```
    /// use std::time::Duration;
    /// let pool = ferry::Pool::new(ferry::PoolConfig::default().with_budget(4096)).unwrap();
    /// let held = pool.alloc(10).unwrap();
    /// let t = std::thread::spawn(move || {
    ///     std::thread::sleep(Duration::from_millis(20));
    ///     drop(held);
    /// });
    /// assert!(pool.alloc_timeout(10, Duration::from_secs(10)).is_ok());
    /// t.join().unwrap();
    /// ```
    pub fn alloc_timeout(&self, len: usize, timeout: Duration) -> Result<BufMut, PoolError> {
        let class = self.class_for(len)?;
        if let Some(slot) = PoolShared::try_alloc(self.shared(), class, false) {
            return self.hand_out(slot, len, class);
        }
        let sh = self.shared();
        sh.waits.fetch_add(1, Ordering::Relaxed);
        let deadline = Instant::now().checked_add(timeout);
        let mut guard = sh.wait_lock.lock().unwrap_or_else(PoisonError::into_inner);
        // Announce ourselves before looking again: a slot freed after that
        // look sees the count and wakes us (see `push_free`).
        sh.waiters.fetch_add(1, Ordering::SeqCst);
        let got = loop {
            if let Some(slot) = PoolShared::try_alloc(sh, class, true) {
                break Some(slot);
            }
            let now = Instant::now();
            let left = match deadline {
                Some(d) if now >= d => break None,
                Some(d) => d - now,
                None => Duration::from_secs(3600),
            };
            guard = sh
                .wait_cv
                .wait_timeout(guard, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        };
        sh.waiters.fetch_sub(1, Ordering::SeqCst);
        drop(guard);
        match got {
            Some(slot) => self.hand_out(slot, len, class),
            None => Err(self.exhausted(len, class)),
        }
    }

    fn class_for(&self, len: usize) -> Result<usize, PoolError> {
        self.class_of(len).ok_or_else(|| PoolError::TooLarge {
            requested: len,
            largest: *self.shared().classes.last().unwrap_or(&0),
        })
    }

    fn exhausted(&self, len: usize, class: usize) -> PoolError {
        self.shared().exhausted.fetch_add(1, Ordering::Relaxed);
        PoolError::Exhausted {
            requested: len,
            slot_size: self.shared().classes[class],
            budget: self.shared().budget,
            reserved: self.shared().reserved.load(Ordering::Relaxed),
        }
    }

    /// Turns a slot taken off a free list (or just made) into a `BufMut`.
    ///
    /// In protect mode a reused slot's pages are read-only (it was frozen
    /// before it came back): they are made writable again here, the
    /// producer's write access granted anew. Should the kernel refuse
    /// (`mprotect` can fail for want of memory to split a mapping), the
    /// slot is released and the allocation fails as exhausted: never a
    /// `BufMut` whose writes would fault.
    fn hand_out(
        &self,
        (hdr, fresh): (NonNull<Header>, bool),
        len: usize,
        class: usize,
    ) -> Result<BufMut, PoolError> {
        // SAFETY: the slot was just taken off a free list (or made) by this
        // thread: no other reference to its header exists.
        let h = unsafe { &mut *hdr.as_ptr() };
        if self.shared().protect && !fresh {
            let (data, cap) = h.memory();
            // SAFETY: a pool slot in protect mode is a mapping of its own
            // (`alloc_pages`) of `cap` bytes, a whole number of pages; we
            // own it alone (off every list, no references).
            if unsafe { crate::sys::pages::protect(data, cap, false) }.is_err() {
                let sh = self.shared();
                sh.reserved.fetch_sub(sh.classes[class], Ordering::AcqRel);
                sh.slots[class].fetch_sub(1, Ordering::Relaxed);
                // SAFETY: ours alone (see above); dropping it unmaps its
                // memory, whatever its protection, and drops its reference
                // to the pool (we hold a handle, so the pool lives on).
                drop(unsafe { Box::from_raw(hdr.as_ptr()) });
                return Err(self.exhausted(len, class));
            }
        }
        h.revive(!fresh);
        // SAFETY: revive set exactly one reference, which the block takes.
        let block = unsafe { Block::from_revived(hdr) };
        Ok(BufMut::from_block(block, 0, 0))
    }

    /// Releases every free slot's memory; returns the bytes released.
    /// Slots in use are untouched and come back as usual.
    ///
    /// ```
    /// let pool = ferry::Pool::new(Default::default()).unwrap();
    /// drop(pool.alloc(4096).unwrap());
    /// assert_eq!(pool.trim(), 4096);
    /// assert_eq!(pool.stats().reserved_bytes, 0);
    /// ```
    pub fn trim(&self) -> usize {
        let released = self.shared().release_free(usize::MAX);
        if released > 0 {
            self.shared().wake_waiters();
        }
        released
    }

    /// A snapshot of the pool's counters.
    pub fn stats(&self) -> PoolStats {
        let sh = self.shared();
        let mut free_per_class = vec![0usize; sh.classes.len()];
        let mut hits = 0;
        for shard in sh.shards.iter() {
            let s = shard.lock();
            hits += s.hits;
            for (c, list) in s.free.iter().enumerate() {
                free_per_class[c] += list.len();
            }
        }
        let classes: Vec<ClassStats> = sh
            .classes
            .iter()
            .zip(free_per_class)
            .zip(sh.slots.iter())
            .map(|((&size, free), slots)| {
                let slots = slots.load(Ordering::Relaxed);
                ClassStats {
                    size,
                    slots,
                    free_slots: free,
                    in_use_slots: slots.saturating_sub(free),
                }
            })
            .collect();
        PoolStats::from_classes(
            sh.budget,
            sh.reserved.load(Ordering::Relaxed),
            sh.high_water.load(Ordering::Relaxed),
            hits,
            sh.misses.load(Ordering::Relaxed),
            sh.exhausted.load(Ordering::Relaxed),
            sh.waits.load(Ordering::Relaxed),
            classes,
        )
    }
}
