//! Roadrunner's **global buffer cache** (*General Data Streaming*, §6),
//! with its domination rule: the buffers concurrent transfers in one
//! process read into, drawn from one bounded [`Pool`], each transfer
//! holding at most its [`Share`].
//!
//! ```text
//!             BufferCache (one Pool, one byte budget)
//!   ┌────────────────────────────────────────────────────────┐
//!   │ transfer A: ███████░░░  held 7 of its share of 10      │  A's output stalled:
//!   │ transfer B: █░░░░░░░░░  held 1                         │  A stops reading at 10,
//!   │ free      : ░░░░░░░░░░░░░░░░░░░░                       │  B keeps its rate
//!   └────────────────────────────────────────────────────────┘
//! ```
//!
//! **Move semantics.** A buffer is taken from the cache by one transfer
//! ([`CacheUser::try_take`]), filled by one read, frozen into a
//! [`Buf`](crate::Buf) and handed on: sliced by the overlay, queued, and
//! given to the output's gathered write. It changes owner, never bytes:
//! no step copies it. Its slot goes back to the pool when the last
//! reference to it drops; the bytes it is charged for come off the
//! transfer's account when its [`Charge`] drops (the transfer drops it
//! once every byte of the buffer has reached the output).
//!
//! **Domination.** The paper saw one stalled network queue take every
//! buffer of the global pool, and its rule against that was a limit on a
//! queue's length: "when a queue insertion occurs, the length is checked
//! and if it exceeds a threshold, the buffer is freed". Freeing is right
//! for network packets a protocol sends again, wrong for a byte stream,
//! so ferry keeps the threshold and changes the action: a transfer whose
//! queue holds its share stops reading its input (its source waits, not
//! the cache's other users) until its output takes some of the queue. The
//! threshold is the [`Share`]: by default a quarter of the cache, or an
//! equal split among the transfers using it when more than four do
//! (`budget / max(4, users)`); a fixed number of bytes if the caller
//! says so. So up to three transfers whose readers have stopped leave at
//! least a quarter of the cache to the others.
//!
//! Two precise rules ([`CacheUser::try_take`]): a buffer of `len` bytes
//! is granted when the cache's total stays within its budget **and** the
//! transfer's holding stays within its share — or the transfer holds
//! nothing (one buffer is always allowed, or a share smaller than a
//! block would stop a transfer for good). A share shrinks as transfers
//! join; one that already holds more keeps it (it cannot give bytes back
//! that its output has not taken) but gets nothing more until it is
//! under.
//!
//! ```
//! use ferry::transfer::cache::{BufferCache, Share};
//! use ferry::{Pool, PoolConfig};
//! let pool = Pool::new(PoolConfig::default().with_budget(1 << 20)).unwrap();
//! let cache = BufferCache::new(pool, Share::Fraction(std::num::NonZeroUsize::new(4).unwrap()));
//! let mut a = cache.join();
//! assert_eq!(a.share(), 256 << 10);
//! let mut held = Vec::new();
//! while let Some(b) = a.try_take(64 << 10).unwrap() {
//!     held.push(b);
//! }
//! assert_eq!((held.len(), a.held()), (4, 256 << 10)); // stopped at its share
//! let mut b = cache.join();
//! assert!(b.try_take(64 << 10).unwrap().is_some()); // the others are not starved
//! held.pop(); // a buffer's bytes reached the output: its charge drops
//! assert_eq!(a.held(), 192 << 10);
//! ```

use crate::{BufMut, Pool, PoolError};
use std::collections::HashMap;
use std::io;
use std::num::NonZeroUsize;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How much of a [`BufferCache`] one transfer may hold.
///
/// ```
/// use ferry::transfer::cache::Share;
/// use std::num::NonZeroUsize;
/// let s = Share::default();
/// assert_eq!(s, Share::Fraction(NonZeroUsize::new(4).unwrap()));
/// assert_eq!(s.bytes(1 << 20, 1), 256 << 10);
/// assert_eq!(s.bytes(1 << 20, 8), 128 << 10); // an equal split past four
/// assert_eq!(Share::Bytes(5000).bytes(1 << 20, 100), 5000);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Share {
    /// At most `1/n` of the budget, or an equal split among the
    /// transfers using the cache when there are more than `n`:
    /// `budget / max(n, users)`.
    Fraction(NonZeroUsize),
    /// At most this many bytes (the paper's fixed queue threshold), and
    /// never more than the budget.
    Bytes(usize),
}

impl Default for Share {
    fn default() -> Share {
        Share::Fraction(NonZeroUsize::new(4).unwrap_or(NonZeroUsize::MIN))
    }
}

impl Share {
    /// A transfer's share in bytes of a cache of `budget` bytes that
    /// `users` transfers use.
    pub fn bytes(self, budget: usize, users: usize) -> usize {
        match self {
            Share::Fraction(n) => budget / n.get().max(users),
            Share::Bytes(b) => b.min(budget),
        }
    }
}

/// The cache's books: pure accounting, no memory (what the proptest runs).
#[derive(Debug)]
struct Ledger {
    budget: usize,
    share: Share,
    /// Bytes held, per user.
    users: HashMap<u64, usize>,
    next: u64,
    total: usize,
    refused: u64,
}

impl Ledger {
    fn new(budget: usize, share: Share) -> Ledger {
        Ledger {
            budget,
            share,
            users: HashMap::new(),
            next: 0,
            total: 0,
            refused: 0,
        }
    }

    fn join(&mut self) -> u64 {
        let id = self.next;
        self.next += 1;
        self.users.insert(id, 0);
        id
    }

    /// The user goes; bytes it still holds stay counted in the total until
    /// their charges drop.
    fn leave(&mut self, id: u64) {
        self.users.remove(&id);
    }

    fn share_bytes(&self) -> usize {
        self.share.bytes(self.budget, self.users.len().max(1))
    }

    fn held(&self, id: u64) -> usize {
        self.users.get(&id).copied().unwrap_or(0)
    }

    /// Grants `len` more bytes to `id` if the rules allow (module docs);
    /// `needed`: the budget alone decides ([`CacheUser::take_wait`]).
    fn grant(&mut self, id: u64, len: usize, needed: bool) -> bool {
        let share = self.share_bytes();
        let held = self.held(id);
        let fits_budget = self
            .total
            .checked_add(len)
            .is_some_and(|t| t <= self.budget);
        let fits_share = needed || held == 0 || held.checked_add(len).is_some_and(|h| h <= share);
        if !(fits_budget && fits_share) {
            self.refused += 1;
            return false;
        }
        self.total += len;
        if let Some(h) = self.users.get_mut(&id) {
            *h += len;
        }
        true
    }

    fn release(&mut self, id: u64, len: usize) {
        self.total = self.total.saturating_sub(len);
        if let Some(h) = self.users.get_mut(&id) {
            *h = h.saturating_sub(len);
        }
    }
}

struct Inner {
    pool: Pool,
    share: Share,
    books: Mutex<Ledger>,
    freed: Condvar,
}

impl Inner {
    fn books(&self) -> std::sync::MutexGuard<'_, Ledger> {
        self.books.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The global buffer cache: one [`Pool`] shared by concurrent transfers,
/// each held to its [`Share`]. See the [module docs](self).
///
/// Cloning gives another handle to the same cache.
///
/// ```
/// use ferry::transfer::cache::BufferCache;
/// let cache = BufferCache::global();
/// assert_eq!(cache.stats().budget, ferry::Pool::global().budget());
/// ```
#[derive(Clone)]
pub struct BufferCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for BufferCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BufferCache")
            .field("share", &self.inner.share)
            .field("stats", &self.stats())
            .finish()
    }
}

/// A snapshot of a [`BufferCache`]'s books.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// The byte budget (the pool's).
    pub budget: usize,
    /// Transfers using the cache now.
    pub users: usize,
    /// Bytes charged to transfers now (buffers' capacities).
    pub held_bytes: usize,
    /// The most one user holds now.
    pub largest_user_bytes: usize,
    /// One transfer's share now.
    pub share_bytes: usize,
    /// Buffers refused by the rules so far (a transfer at its share, or the
    /// budget used up).
    pub refused: u64,
}

impl BufferCache {
    /// A cache over `pool`, its budget the pool's, each transfer held to
    /// `share`.
    ///
    /// ```
    /// use ferry::transfer::cache::{BufferCache, Share};
    /// let pool = ferry::Pool::new(ferry::PoolConfig::default().with_budget(8 << 20)).unwrap();
    /// let cache = BufferCache::new(pool, Share::Bytes(1 << 20));
    /// assert_eq!(cache.join().share(), 1 << 20);
    /// ```
    pub fn new(pool: Pool, share: Share) -> BufferCache {
        let budget = pool.budget();
        BufferCache {
            inner: Arc::new(Inner {
                pool,
                share,
                books: Mutex::new(Ledger::new(budget, share)),
                freed: Condvar::new(),
            }),
        }
    }

    /// The process-wide cache over [`Pool::global`], with the default
    /// [`Share`]: what a transfer uses unless
    /// [`TransferOptions::cache`](super::TransferOptions::cache) names
    /// another.
    pub fn global() -> &'static BufferCache {
        static GLOBAL: OnceLock<BufferCache> = OnceLock::new();
        GLOBAL.get_or_init(|| BufferCache::new(Pool::global().clone(), Share::default()))
    }

    /// The pool buffers come from.
    ///
    /// ```
    /// let c = ferry::transfer::cache::BufferCache::global();
    /// assert!(c.pool().classes().len() > 0);
    /// ```
    pub fn pool(&self) -> &Pool {
        &self.inner.pool
    }

    /// The share rule.
    ///
    /// ```
    /// use ferry::transfer::cache::{BufferCache, Share};
    /// assert_eq!(BufferCache::global().share(), Share::default());
    /// ```
    pub fn share(&self) -> Share {
        self.inner.share
    }

    /// A new user of the cache: one transfer. Its share counts it from
    /// now until it drops.
    ///
    /// ```
    /// let c = ferry::transfer::cache::BufferCache::global();
    /// let before = c.stats().users;
    /// let u = c.join();
    /// assert!(c.stats().users > before || before > 0);
    /// drop(u);
    /// ```
    pub fn join(&self) -> CacheUser {
        let id = self.inner.books().join();
        CacheUser {
            inner: Arc::clone(&self.inner),
            id,
            peak: 0,
        }
    }

    /// The books now.
    ///
    /// ```
    /// use ferry::transfer::cache::{BufferCache, Share};
    /// let pool = ferry::Pool::new(ferry::PoolConfig::default().with_budget(1 << 20)).unwrap();
    /// let cache = BufferCache::new(pool, Share::default());
    /// let mut u = cache.join();
    /// let b = u.try_take(10_000).unwrap().unwrap();
    /// let s = cache.stats();
    /// assert_eq!((s.users, s.held_bytes, s.largest_user_bytes), (1, 16384, 16384));
    /// # drop(b);
    /// ```
    pub fn stats(&self) -> CacheStats {
        let b = self.inner.books();
        CacheStats {
            budget: b.budget,
            users: b.users.len(),
            held_bytes: b.total,
            largest_user_bytes: b.users.values().copied().max().unwrap_or(0),
            share_bytes: b.share_bytes(),
            refused: b.refused,
        }
    }
}

/// One transfer's account with a [`BufferCache`] (from
/// [`BufferCache::join`]); dropping it leaves the cache.
pub struct CacheUser {
    inner: Arc<Inner>,
    id: u64,
    peak: usize,
}

impl std::fmt::Debug for CacheUser {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CacheUser")
            .field("id", &self.id)
            .field("held", &self.held())
            .field("peak", &self.peak)
            .finish()
    }
}

impl Drop for CacheUser {
    fn drop(&mut self) {
        self.inner.books().leave(self.id);
        self.inner.freed.notify_all();
    }
}

/// A buffer taken from the cache, and the charge for it.
#[derive(Debug)]
pub struct Taken {
    /// The buffer: empty, page-aligned, at least the length asked.
    pub buf: BufMut,
    /// Its bytes on the transfer's account until this drops.
    pub charge: Charge,
}

/// Bytes charged to one transfer; dropping it takes them off.
pub struct Charge {
    inner: Arc<Inner>,
    id: u64,
    bytes: usize,
}

impl Charge {
    /// The bytes charged.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl std::fmt::Debug for Charge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Charge({} bytes)", self.bytes)
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.inner.books().release(self.id, self.bytes);
        self.inner.freed.notify_all();
    }
}

impl CacheUser {
    /// Bytes charged to this transfer now.
    pub fn held(&self) -> usize {
        self.inner.books().held(self.id)
    }

    /// The most this transfer has held at once.
    pub fn peak(&self) -> usize {
        self.peak
    }

    /// This transfer's share now.
    pub fn share(&self) -> usize {
        self.inner.books().share_bytes()
    }

    /// The cache's budget.
    pub fn budget(&self) -> usize {
        self.inner.books().budget
    }

    /// A page-aligned buffer from the heap, outside the cache and charged
    /// nothing: for a block the cache could never give this transfer
    /// (what it must hold to make one output block passes the whole
    /// budget), which would otherwise wait for good.
    pub fn take_outside(&mut self, len: usize) -> io::Result<Taken> {
        let buf = BufMut::try_with_capacity_aligned(len.max(1), crate::sys::page_size())?;
        Ok(Taken {
            buf,
            charge: Charge {
                inner: Arc::clone(&self.inner),
                id: self.id,
                bytes: 0,
            },
        })
    }

    /// The bytes a buffer of `len` is charged: its pool slot, or `len`
    /// rounded up to pages past the pool's largest class.
    fn cost(&self, len: usize) -> usize {
        let page = crate::sys::page_size();
        self.inner
            .pool
            .class_size(len)
            .unwrap_or_else(|| len.checked_next_multiple_of(page).unwrap_or(usize::MAX))
    }

    /// A buffer of at least `len` bytes if the rules grant it now
    /// ([module docs](self)), else `None`: the caller should let its
    /// output take some of what it holds first. An error only for a
    /// buffer larger than the pool's classes that memory will not hold.
    pub fn try_take(&mut self, len: usize) -> io::Result<Option<Taken>> {
        self.take(len, false)
    }

    fn take(&mut self, len: usize, needed: bool) -> io::Result<Option<Taken>> {
        let cost = self.cost(len.max(1));
        if !self.inner.books().grant(self.id, cost, needed) {
            return Ok(None);
        }
        let charge = Charge {
            inner: Arc::clone(&self.inner),
            id: self.id,
            bytes: cost,
        };
        let buf = match self.inner.pool.alloc(len.max(1)) {
            Ok(b) => b,
            // The books allow it but the pool's slots are still on their
            // way back (or others use the pool too): refused for now.
            Err(PoolError::Exhausted { .. }) => return Ok(None),
            Err(PoolError::TooLarge { .. }) => {
                BufMut::try_with_capacity_aligned(len, crate::sys::page_size())?
            }
        };
        self.peak = self.peak.max(self.held());
        Ok(Some(Taken { buf, charge }))
    }

    /// A buffer of at least `len` bytes within the budget, whatever this
    /// transfer's share, waiting up to `timeout` for other transfers to
    /// give bytes back. For a transfer that has nothing queued and must
    /// read to move at all (a fixed output block still being gathered
    /// can hold more than a small share): the share limits reading
    /// *ahead*, never reading what the output is waiting for.
    ///
    /// ```
    /// use ferry::transfer::cache::{BufferCache, Share};
    /// use std::time::Duration;
    /// let pool = ferry::Pool::new(ferry::PoolConfig::default().with_budget(8192)).unwrap();
    /// let cache = BufferCache::new(pool, Share::Bytes(8192));
    /// let (mut a, mut b) = (cache.join(), cache.join());
    /// let held = a.try_take(8192).unwrap().unwrap();
    /// assert!(b.take_wait(4096, Duration::from_millis(1)).unwrap().is_none());
    /// let t = std::thread::spawn(move || drop(held));
    /// assert!(b.take_wait(4096, Duration::from_secs(30)).unwrap().is_some());
    /// t.join().unwrap();
    /// ```
    pub fn take_wait(&mut self, len: usize, timeout: Duration) -> io::Result<Option<Taken>> {
        let deadline = Instant::now().checked_add(timeout);
        loop {
            if let Some(t) = self.take(len, true)? {
                return Ok(Some(t));
            }
            let now = Instant::now();
            let left = match deadline {
                Some(d) if now >= d => return Ok(None),
                Some(d) => d - now,
                None => Duration::from_secs(3600),
            };
            // Woken by any charge dropping; a short nap bounds a wake that
            // came between the refusal and the wait (or a slot still on its
            // way back to the pool).
            let books = self.inner.books();
            let nap = left.min(Duration::from_millis(5));
            drop(
                self.inner
                    .freed
                    .wait_timeout(books, nap)
                    .unwrap_or_else(PoisonError::into_inner),
            );
        }
    }
}

#[cfg(test)]
mod tests;
