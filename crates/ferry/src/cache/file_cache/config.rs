//! How a [`FileCache`](super::FileCache) is shaped, and what it reports.

use std::time::Duration;

/// How extents are filled on a miss.
///
/// Measured (`ferry-bench iolite --only fill`, docs/BENCHMARKS.md), a
/// mapping fills a miss faster from 256 KiB extents up (1.6–7.6× on
/// this project's machines, both page-cache layouts) and about as fast at
/// 64 KiB. The default is still [`Fill::Read`], which holds nothing on
/// the file: a lease makes another program's *non-blocking* open for
/// writing fail with `EAGAIN` while ferry copies its windows aside (GNU
/// `truncate` opens that way: "cannot open … for writing: Resource
/// temporarily unavailable"), where without the cache it would succeed.
/// [`Fill::Map`] is the choice for files no other program writes.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::cache::{CacheConfig, FileCache, Fill};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("f");
/// std::fs::write(&path, vec![1u8; 100_000])?;
/// let cache = FileCache::new(CacheConfig::default().with_fill(Fill::Map))?;
/// assert_eq!(cache.read(&path, 99_990..)?, &[1u8; 10][..]);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Fill {
    /// `pread` into page-aligned pool buffers: one copy from the page
    /// cache, and nothing held on the file afterwards. The default.
    #[default]
    Read,
    /// A mapped window of the file under a read lease
    /// ([`MappedFile`](crate::MappedFile)): no copy, but while the cache
    /// (or a reader) keeps the extent, another program that opens the
    /// file for writing waits until ferry has copied the window aside —
    /// or, if it opens with `O_NONBLOCK`, fails with `EAGAIN` once.
    /// Where no lease can be had (the file is open for writing, is not
    /// the caller's, or its file system has no leases) the extent is read
    /// as with [`Fill::Read`].
    ///
    /// The one change a lease does not announce — a read-only `open` with
    /// `O_TRUNC`, which empties the file — is seen by the cache (the size
    /// is in the stamp), but readers holding mapped extents of the file
    /// then lose their bytes: they read as zeros and
    /// [`Buf::is_intact`](crate::Buf::is_intact) turns false (see
    /// [`MappedFile`](crate::MappedFile)). With [`Fill::Read`] readers
    /// keep their bytes whatever happens to the file.
    Map,
}

/// The shape of a [`FileCache`](super::FileCache).
///
/// ```
/// let cfg = ferry::cache::CacheConfig::default().with_budget(64 << 20);
/// assert_eq!(cfg.budget, 64 << 20);
/// assert_eq!(cfg.extent, 256 << 10);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// The most bytes of filled extents alive at once: those in the cache
    /// and those it evicted that readers still hold. Default: a quarter
    /// of the memory the kernel reports available (`MemAvailable` in
    /// `/proc/meminfo`) when the cache is made, at least 16 MiB; 256 MiB
    /// where that cannot be read.
    pub budget: usize,
    /// Extent size in bytes: files are cached in extents of this size at
    /// offsets that are multiples of it (the last one shorter). Rounded up
    /// to whole pages. Default 256 KiB.
    pub extent: usize,
    /// How long ago a file's last change (`ctime`) must be before a read
    /// of it may be served again from the cache (see the module docs of
    /// [`FileCache`](super::FileCache)). Default 1 s. The cache uses at
    /// least the time granularity of the file's file system: 10 ms on
    /// those that keep nanoseconds (ext4, xfs, btrfs, tmpfs, overlayfs,
    /// f2fs), 1 s for a file whose times are whole seconds (ext3), and
    /// 2 s on FAT, exFAT and every file system it does not know (network
    /// and FUSE ones among them).
    pub settle: Duration,
    /// How misses are filled. Default [`Fill::Read`].
    pub fill: Fill,
    /// Lock shards of the index (rounded up to a power of two). Default:
    /// four per CPU.
    pub shards: Option<usize>,
    /// Let new extents wait in a small admission queue (S3-FIFO's idea,
    /// as in `quick_cache`): an extent not used again before it reaches
    /// the queue's end leaves the cache without pushing out the main
    /// order's, so a scan through many files once does not flush the hot
    /// set. In the main order, an entry used again since it was last
    /// passed over (up to three uses counted) is passed over once per use
    /// when its turn to go comes (S3-FIFO's main queue). Entries readers
    /// hold go last in both queues. Default off: IO-Lite's order alone.
    pub admission_queue: bool,
    /// Count how often each extent is looked up (a small count-min
    /// sketch, aged by halving: TinyLFU's estimate, as in `moka`), and let
    /// an extent leave the admission queue for the main order when it was
    /// looked up more often lately *per byte charged* than the main
    /// order's next to go (so a large extent must be asked for more often
    /// than a small one), where without the count it leaves the cache.
    /// Brings the admission queue with it, at a hundredth of the budget
    /// (W-TinyLFU's window) and without ghost keys (the count remembers
    /// what came back). Entries readers hold still go last. Default off.
    pub frequency: bool,
    /// Files larger than this many bytes are read for their readers but
    /// not cached (as web caches cap an object's size, and `quick_cache`
    /// refuses an item heavier than its shard's share): one large file
    /// then cannot push out many small ones. Default `None`: every file
    /// is cached, as in IO-Lite.
    pub largest_file: Option<u64>,
}

impl Default for CacheConfig {
    fn default() -> CacheConfig {
        CacheConfig {
            budget: default_budget(),
            extent: 256 << 10,
            settle: Duration::from_secs(1),
            fill: Fill::Read,
            shards: None,
            admission_queue: false,
            frequency: false,
            largest_file: None,
        }
    }
}

impl CacheConfig {
    /// Sets the byte budget.
    ///
    /// ```
    /// let cfg = ferry::cache::CacheConfig::default().with_budget(1 << 30);
    /// assert_eq!(cfg.budget, 1 << 30);
    /// ```
    pub fn with_budget(mut self, budget: usize) -> CacheConfig {
        self.budget = budget;
        self
    }

    /// Sets the extent size.
    ///
    /// ```
    /// use ferry::cache::{CacheConfig, FileCache};
    /// let c = FileCache::new(CacheConfig::default().with_extent(5000)).unwrap();
    /// assert_eq!(c.config().extent, 8192); // whole pages
    /// ```
    pub fn with_extent(mut self, extent: usize) -> CacheConfig {
        self.extent = extent;
        self
    }

    /// Sets the settle time.
    ///
    /// ```
    /// use std::time::Duration;
    /// let cfg = ferry::cache::CacheConfig::default().with_settle(Duration::from_secs(3));
    /// assert_eq!(cfg.settle, Duration::from_secs(3));
    /// ```
    pub fn with_settle(mut self, settle: Duration) -> CacheConfig {
        self.settle = settle;
        self
    }

    /// Sets how misses are filled.
    ///
    /// ```
    /// use ferry::cache::{CacheConfig, Fill};
    /// assert_eq!(CacheConfig::default().with_fill(Fill::Map).fill, Fill::Map);
    /// ```
    pub fn with_fill(mut self, fill: Fill) -> CacheConfig {
        self.fill = fill;
        self
    }

    /// Sets the number of lock shards.
    ///
    /// ```
    /// assert_eq!(ferry::cache::CacheConfig::default().with_shards(8).shards, Some(8));
    /// ```
    pub fn with_shards(mut self, shards: usize) -> CacheConfig {
        self.shards = Some(shards);
        self
    }

    /// Turns the admission queue on or off.
    ///
    /// ```
    /// let c = ferry::cache::CacheConfig::default().with_admission_queue(true);
    /// assert!(c.admission_queue);
    /// ```
    pub fn with_admission_queue(mut self, on: bool) -> CacheConfig {
        self.admission_queue = on;
        self
    }

    /// Turns the frequency count (and with it the admission queue) on or
    /// off.
    ///
    /// ```
    /// let c = ferry::cache::CacheConfig::default().with_frequency(true);
    /// assert!(c.frequency);
    /// ```
    pub fn with_frequency(mut self, on: bool) -> CacheConfig {
        self.frequency = on;
        self
    }

    /// Sets the size above which a file is served but not cached.
    ///
    /// ```
    /// let c = ferry::cache::CacheConfig::default().with_largest_file(Some(1 << 20));
    /// assert_eq!(c.largest_file, Some(1 << 20));
    /// ```
    pub fn with_largest_file(mut self, bytes: Option<u64>) -> CacheConfig {
        self.largest_file = bytes;
        self
    }
}

/// A quarter of `MemAvailable`, at least 16 MiB; 256 MiB if unknown.
fn default_budget() -> usize {
    let avail = std::fs::read_to_string("/proc/meminfo").ok().and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("MemAvailable:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    });
    match avail {
        Some(kib) => usize::try_from(kib.saturating_mul(1024) / 4)
            .unwrap_or(usize::MAX)
            .max(16 << 20),
        None => 256 << 20,
    }
}

/// What a [`FileCache`](super::FileCache) did and holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Extent lookups served from the cache.
    pub hits: u64,
    /// Extent lookups that read the file (including extents whose file
    /// changed, and racy ones read anew).
    pub misses: u64,
    /// Entries evicted to keep within the budget.
    pub evictions: u64,
    /// Entries dropped because their file changed or a write replaced them.
    pub replaced: u64,
    /// Entries moved from the admission queue to the main order because
    /// they were used again, or with the frequency count because they
    /// were asked for more often per byte than the main order's next to
    /// go (0 without the queue).
    pub promoted: u64,
    /// Bytes read from files but not kept, because the budget was held by
    /// extents readers still hold (they belong to those readers alone).
    pub uncached_bytes: u64,
    /// Extents in the cache now.
    pub entries: usize,
    /// Bytes of filled extents alive now: in the cache, and evicted or
    /// replaced but still held by readers. Never more than the budget.
    pub bytes_held: usize,
    /// Of `bytes_held`, those that readers hold too (in the cache and
    /// referenced, or evicted and still held).
    pub bytes_shared: usize,
    /// The budget.
    pub budget: usize,
}
