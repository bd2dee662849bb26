//! Pool configuration.

use std::io;

/// How a [`Pool`](super::Pool) is shaped: its size classes, its byte budget
/// and how many free-list shards it spreads threads over.
///
/// ```
/// let cfg = ferry::PoolConfig::default()
///     .with_classes(vec![16 << 10, 128 << 10])
///     .with_budget(64 << 20);
/// let pool = ferry::Pool::new(cfg).unwrap();
/// assert_eq!(pool.classes(), &[16 << 10, 128 << 10]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolConfig {
    /// Slot sizes in bytes, smallest first; each is rounded up to a whole
    /// number of pages. Default: powers of two from 4 KiB to 1 MiB.
    pub classes: Vec<usize>,
    /// Most bytes of slot memory the pool holds at once (in use and free).
    /// Default: 256 MiB.
    pub budget: usize,
    /// Free-list shards (rounded up to a power of two); default twice the
    /// number of CPUs.
    pub shards: Option<usize>,
    /// Debug mode: a slot's pages are made read-only (`mprotect`) when its
    /// buffer is frozen, and writable again only when the pool hands the
    /// slot out anew (IO-Lite's rule: a producer's write access is
    /// temporary). A C caller that writes through a pointer it kept after
    /// handing the buffer over faults at once instead of changing bytes
    /// someone else reads. Every slot is then a mapping of its own, and
    /// each freeze and reuse costs an `mprotect`. Default off.
    pub protect: bool,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            classes: (12..=20).map(|s| 1usize << s).collect(),
            budget: 256 << 20,
            shards: None,
            protect: false,
        }
    }
}

impl PoolConfig {
    /// Sets the size classes.
    pub fn with_classes(mut self, classes: Vec<usize>) -> PoolConfig {
        self.classes = classes;
        self
    }

    /// Sets the byte budget.
    pub fn with_budget(mut self, budget: usize) -> PoolConfig {
        self.budget = budget;
        self
    }

    /// Sets the number of free-list shards.
    pub fn with_shards(mut self, shards: usize) -> PoolConfig {
        self.shards = Some(shards);
        self
    }

    /// Turns the debug mode of [`protect`](PoolConfig::protect) on or off.
    ///
    /// ```
    /// let pool = ferry::Pool::new(ferry::PoolConfig::default().with_protect(true)).unwrap();
    /// let mut m = pool.alloc(10).unwrap();
    /// m.extend_from_slice(b"sealed");
    /// let b = m.freeze(); // its pages are read-only now
    /// assert_eq!(&b[..], b"sealed");
    /// ```
    pub fn with_protect(mut self, protect: bool) -> PoolConfig {
        self.protect = protect;
        self
    }

    /// The classes rounded up to whole pages, checked and deduplicated.
    pub(super) fn normalized_classes(&self, page: usize) -> io::Result<Vec<usize>> {
        let invalid = |msg: String| io::Error::new(io::ErrorKind::InvalidInput, msg);
        if self.classes.is_empty() {
            return Err(invalid("a pool needs at least one size class".into()));
        }
        let mut out = Vec::with_capacity(self.classes.len());
        for &c in &self.classes {
            if c == 0 {
                return Err(invalid("a pool size class of 0 bytes".into()));
            }
            let rounded = c
                .checked_next_multiple_of(page)
                .filter(|&r| r <= isize::MAX as usize)
                .ok_or_else(|| invalid(format!("pool size class {c} is too large")))?;
            out.push(rounded);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }
}
