//! [`FileCache`]: IO-Lite's unified file cache — ⟨file identity, offset⟩
//! mapped to immutable buffers holding extents of the file, handed out as
//! [`Aggregate`]s by reference.
//!
//! The rules it keeps — never stale, snapshots, memory — are in
//! [`FileCache`]'s documentation.

mod budget;
mod config;
mod core;
mod fill;
mod handle;
mod identity;
mod looked;
mod open;
mod shard;
mod sketch;
#[cfg(test)]
mod tests;

pub use config::{CacheConfig, CacheStats, Fill};
pub use handle::CachedFile;
pub use looked::Looked;

use self::core::{Core, FillError, Policy};
use self::fill::{named, Extent};
use self::identity::{FileId, Stamp};
use self::open::{not_regular, open};
use crate::{Aggregate, Buf, BufMut, MappedFile, Pool, PoolConfig};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::ops::{Bound, RangeBounds};
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

/// How many times a lookup starts over when the file changes while it is
/// read, before it gives up with an error.
const ATTEMPTS: usize = 4;

/// Leased files kept open for [`Fill::Map`] at most (one descriptor each).
const MAPPED_FILES: usize = 64;

/// A unified file cache: extents of files as immutable, shared buffers.
///
/// ```text
///   read(path, range) ─► fstat: stamp = (dev, ino, size, mtime, ctime)
///      for each extent of the range:  ⟨(dev, ino), index⟩ ─► Buf
///         same stamp, settled → the cached Buf (a refcount bump)
///         else → read it once (pread or leased mmap), cache it if the
///                budget has room (evicting, IO-Lite order)
///      ─► Aggregate of slices of those Bufs
/// ```
///
/// Cloning a `FileCache` is cheap and shares the cache; it may be used
/// from any number of threads. Lookups lock one shard of the index each.
///
/// # Never stale: the rule
///
/// Every lookup asks the file for its stamp (`fstat`: device, inode, size,
/// `mtime`, `ctime`, to the nanosecond) and serves a cached extent only if
/// it was read under the same stamp *and* that stamp was settled when it
/// was read: the file's last change (`ctime`) lay at least
/// [`CacheConfig::settle`] (1 s) before the read began — or the time
/// granularity of the file's file system, where that is coarser (2 s on
/// FAT, exFAT and file systems the cache does not know, network and FUSE
/// ones among them; `fstatfs` tells which it is). After that, any
/// change to the file moves `ctime` to a later clock tick, and so changes
/// the stamp. Extents read from a file changed more recently are handed to
/// the reader but re-read at the next lookup (and if the bytes read then
/// are the same, the cached buffer is kept: readers share it, and its
/// [`ContentId`](crate::ContentId) stays). What each kind of change does:
///
/// | change behind the cache | how it is seen |
/// |---|---|
/// | rewrite in place (`dd conv=notrunc`), same size | `mtime`/`ctime` move |
/// | truncate, append | size, `mtime`, `ctime` move |
/// | another file renamed over the path (`mv`) | the inode differs: another file |
/// | a writer that restores size and `mtime` (`touch -d`) | `ctime` moves (it cannot be set) |
/// | a write within one clock tick of a read | the settle rule: that read was racy, never served again |
/// | a change *while* an extent is read | the stamp is taken again after the read; if it moved the lookup starts over, at most four times, then fails (`ResourceBusy`): a lookup hands out the extents of one stamp or nothing |
///
/// What is *not* detectable: a change of the system clock backwards by
/// more than the settle time, and file systems whose times do not move
/// on a write (some network and FUSE file systems). A write still in
/// progress when the stamp is taken has already moved the file's times
/// but not yet put all its bytes in place: a lookup then may see part
/// of it, as `read(2)` would (such a stamp is racy, so those extents are
/// not served again). A shared writable
/// mapping that writes pages already dirty moves no time either on some
/// kernels: such a writer must not share a file with the cache.
///
/// With [`Fill::Map`] a cached extent is a leased mapping: a writer that
/// opens the file makes ferry copy the mapped window aside first, so the
/// extent keeps its bytes (the stamp, not the lease, then keeps it from
/// being served as the file's current bytes).
///
/// # Snapshot semantics
///
/// Buffers are never written once handed out. A reader keeps the bytes it
/// was handed whatever happens to the file or the cache afterwards;
/// [`FileCache::write`] writes through to the file and *replaces* the
/// cache's buffers for the extents it covers, and new readers see the new
/// bytes.
///
/// # Memory
///
/// [`CacheConfig::budget`] bounds every byte the cache has read that is
/// still alive — cached extents and the ones it evicted or replaced while a
/// reader still held them — each at the size of the pool slot that holds
/// it (page multiples at most a quarter apart, from 4 KiB up to the
/// extent size: [`FileCache::charge`]; the pool keeps its slots within
/// the same budget). When a miss finds no room
/// even after eviction (readers hold the budget), the extent is read for
/// that reader alone and not cached ([`CacheStats::uncached_bytes`]). So
/// memory stays within the budget plus what readers themselves hold, and
/// a file larger than the budget is served extent by extent, the extents
/// beyond the budget uncached. A lookup hands out the whole range asked
/// for: a reader of a file larger than memory asks for it in ranges.
///
/// Buffers written through the cache ([`FileCache::write`]) are counted
/// the same way, and cached as they are only where the extents cut from
/// a buffer make up at least half of the memory it keeps alive (its
/// block: a `Vec`'s whole capacity, a whole mapping). A small slice of a
/// large buffer, or bytes of a foreign owner ([`Buf::from_owner`]), are
/// copied into a buffer of their own instead, so the caller's buffer goes
/// when the caller drops it.
///
/// # Which extent goes
///
/// IO-Lite's order (section 2.5.1): the least recently used extent no
/// reader holds, else the least recently used one. With
/// [`CacheConfig::admission_queue`], new extents first wait in a small
/// queue (a tenth of the budget, S3-FIFO's): one used again before it
/// reaches the queue's end moves to the main order, one that is not
/// leaves the cache (and comes back straight into the main order if it is
/// read again soon), so files read once — a scan, a crawler — do not push
/// out the ones read all the time. With [`CacheConfig::frequency`]
/// instead, the cache counts how often each extent is looked up (TinyLFU's
/// sketch), the queue is a hundredth of the budget and keeps no keys, and
/// an extent at the queue's end that was looked up more often lately per
/// byte charged than the main order's next to go moves to the main order
/// instead of leaving. Extents readers hold go last in both queues and
/// across them: one at the queue's end waits while the main order has an
/// entry no reader holds.
///
/// # Cost
///
/// A lookup costs one `fstat` (the stamp) and, per extent of the range, a
/// hash, one shard lock, a bump of the shared recency clock and a
/// reference count bump (with [`CacheConfig::frequency`], also a second
/// hash and four counters, outside the shard's lock); nothing is copied. A
/// miss reads the extent once however many threads miss on it. Each shard
/// keeps its entries ordered by use (moved lazily: an entry hit since it
/// was placed moves at the next eviction), so one that must evict finds
/// IO-Lite's victim by asking every shard for its oldest entry no reader
/// holds: the cost grows with the number of shards and with the entries
/// readers hold that are older than the victim, not with the number of
/// entries (only when readers hold every entry does it walk them all).
///
/// # Example
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::cache::{CacheConfig, FileCache};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("index.html");
/// std::fs::write(&path, b"<h1>hello</h1>")?;
/// let cache = FileCache::new(CacheConfig::default().with_budget(1 << 20))?;
///
/// let page = cache.read(&path, ..)?;
/// assert_eq!(page, &b"<h1>hello</h1>"[..]);
/// assert_eq!(cache.read(&path, 4..9)?, &b"hello"[..]);
///
/// // A write replaces the cached buffers; the old reader keeps its bytes.
/// cache.write(&path, 4, ferry::Buf::from_static(b"HELLO"))?;
/// assert_eq!(page, &b"<h1>hello</h1>"[..]);
/// assert_eq!(cache.read(&path, ..)?, &b"<h1>HELLO</h1>"[..]);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct FileCache {
    inner: Arc<Inner>,
}

struct Inner {
    core: Core,
    pool: Pool,
    cfg: CacheConfig,
    mapped: Mutex<HashMap<FileId, (Stamp, MappedFile)>>,
}

impl std::fmt::Debug for FileCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileCache")
            .field("config", &self.inner.cfg)
            .field("stats", &self.stats())
            .finish()
    }
}

impl FileCache {
    /// A cache shaped by `cfg`. Fails (`InvalidInput`) on an extent size
    /// of 0 or one too large to allocate.
    ///
    /// ```
    /// let c = ferry::cache::FileCache::new(Default::default()).unwrap();
    /// assert!(c.config().budget >= 16 << 20);
    /// assert!(ferry::cache::FileCache::new(
    ///     ferry::cache::CacheConfig::default().with_extent(0)
    /// ).is_err());
    /// ```
    pub fn new(cfg: CacheConfig) -> io::Result<FileCache> {
        let mut cfg = cfg;
        cfg.extent = cfg
            .extent
            .checked_next_multiple_of(4096)
            .filter(|&e| e > 0 && e <= isize::MAX as usize / 2)
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("file cache: extent size {} is out of range", cfg.extent),
                )
            })?;
        let classes = budget::size_classes(cfg.extent);
        let pool = Pool::new(
            PoolConfig::default()
                .with_classes(classes)
                // A pool needs room for one slot; the cache's own budget
                // keeps it from using more than that budget.
                .with_budget(cfg.budget.max(cfg.extent)),
        )?;
        let shards = cfg
            .shards
            .unwrap_or_else(|| 4 * std::thread::available_parallelism().map_or(1, |n| n.get()));
        Ok(FileCache {
            inner: Arc::new(Inner {
                core: Core::new(
                    cfg.budget,
                    shards,
                    pool.classes(),
                    Policy {
                        admission_queue: cfg.admission_queue,
                        frequency: cfg.frequency,
                        largest_file: cfg.largest_file,
                        queue_share: None,
                    },
                ),
                pool,
                cfg,
                mapped: Mutex::new(HashMap::new()),
            }),
        })
    }

    /// The configuration (extent size rounded up to whole pages).
    pub fn config(&self) -> &CacheConfig {
        &self.inner.cfg
    }

    /// The bytes of `range` of the file at `path`, as it is now: from the
    /// cache where it holds them, else read (and cached if the budget has
    /// room). A range reaching past the end of the file stops there; one
    /// starting at or past it is empty.
    ///
    /// Errors name the file: it cannot be opened (`NotFound`,
    /// `PermissionDenied`), is not a regular file (`InvalidInput`: a FIFO,
    /// terminal or device is refused without being opened, so the cache
    /// neither waits on it nor acts on it), the range is reversed
    /// (`InvalidInput`), it kept shrinking while it was read
    /// (`UnexpectedEof`), it kept changing while it was read
    /// (`ResourceBusy`: each of four attempts saw it change; what was
    /// read is not handed out, as it would mix two states of the file),
    /// or reading it failed.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, b"0123456789")?;
    /// let cache = ferry::cache::FileCache::new(Default::default())?;
    /// assert_eq!(cache.read(&path, 8..100)?, &b"89"[..]);
    /// assert!(cache.read(&path, 20..)?.is_empty());
    /// let e = cache.read(dir.path().join("missing"), ..).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    /// assert!(e.to_string().contains("missing"));
    /// # Ok(()) }
    /// ```
    pub fn read(
        &self,
        path: impl AsRef<Path>,
        range: impl RangeBounds<u64>,
    ) -> io::Result<Aggregate> {
        let path = path.as_ref();
        let file = open(path, false)?;
        self.read_file(&file, path, range)
    }

    /// [`read`](Self::read) from a file the caller has open (for reading);
    /// `path` only names it in errors.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, b"0123456789")?;
    /// let f = std::fs::File::open(&path)?;
    /// let cache = ferry::cache::FileCache::new(Default::default())?;
    /// assert_eq!(cache.read_file(&f, &path, 2..=4)?, &b"234"[..]);
    /// # Ok(()) }
    /// ```
    pub fn read_file(
        &self,
        file: &File,
        path: &Path,
        range: impl RangeBounds<u64>,
    ) -> io::Result<Aggregate> {
        self.read_as_of(file, path, range, None)
    }

    /// [`read_file`](Self::read_file), the first attempt with `first`'s
    /// stamp (taken after its time) if given.
    fn read_as_of(
        &self,
        file: &File,
        path: &Path,
        range: impl RangeBounds<u64>,
        mut first: Option<(Stamp, SystemTime)>,
    ) -> io::Result<Aggregate> {
        let (start, end) = bounds(&range).map_err(|e| named(path, e))?;
        for attempt in 1..=ATTEMPTS {
            let (stamp, began) = match first.take() {
                Some(f) => f,
                None => {
                    let began = SystemTime::now();
                    let meta = file.metadata().map_err(|e| named(path, e))?;
                    if !meta.is_file() {
                        return Err(not_regular(path));
                    }
                    (Stamp::of(&meta), began)
                }
            };
            match self.extents(file, path, (start, end), stamp, &|| began) {
                Ok(out) => return Ok(out),
                Err(FillError::Changed) => continue,
                Err(FillError::Shrank(_)) if attempt < ATTEMPTS => continue,
                Err(FillError::Shrank(at)) => {
                    return Err(named(
                        path,
                        io::Error::new(
                            io::ErrorKind::UnexpectedEof,
                            format!("the file shrank while it was read: it ended at offset {at}"),
                        ),
                    ))
                }
                Err(FillError::Io(e)) => return Err(e),
            }
        }
        // Every attempt saw the file change while it read an extent: no
        // consistent view was had, and bytes of two states of the file
        // are never handed out together.
        Err(named(
            path,
            io::Error::new(
                io::ErrorKind::ResourceBusy,
                format!("the file kept changing while it was read ({ATTEMPTS} attempts)"),
            ),
        ))
    }

    /// The extents of `start..end` (cut to the file's size in `stamp`) of
    /// `file` as of `stamp`, for a lookup that began at `began()` (asked
    /// only when an extent must be read).
    fn extents(
        &self,
        file: &File,
        path: &Path,
        (start, end): (u64, u64),
        stamp: Stamp,
        began: &dyn Fn() -> SystemTime,
    ) -> Result<Aggregate, FillError> {
        let inner = &*self.inner;
        let e = inner.cfg.extent as u64;
        let end = end.min(stamp.size);
        if start >= end {
            return Ok(Aggregate::new());
        }
        let (first, last) = (start / e, (end - 1) / e);
        let mut out =
            Aggregate::with_capacity(usize::try_from(last - first + 1).unwrap_or(0).min(1024));
        let cut = |idx: u64, buf: &Buf, out: &mut Aggregate| {
            let off = idx * e;
            let len = (stamp.size - off).min(e);
            let lo = (start.max(off) - off) as usize;
            let hi = (end.min(off + len) - off) as usize;
            out.append_buf(buf.slice(lo..hi));
        };
        // The hits first, a shard lock per run of extents; then each
        // other extent on its own.
        let missed = inner.core.hits(stamp.id, stamp, first, last, |idx, buf| {
            cut(idx, buf, &mut out)
        });
        for idx in missed..=last {
            let off = idx * e;
            let len = (stamp.size - off).min(e) as usize;
            let buf = inner.core.get((stamp.id, idx), stamp, len, |cached| {
                let x = Extent {
                    file,
                    path,
                    stamp,
                    began: began(),
                    offset: off,
                    len,
                };
                fill::fill(
                    &x,
                    inner.fill_how(file, stamp),
                    &inner.pool,
                    inner.cfg.settle,
                    cached,
                )
            })?;
            cut(idx, &buf, &mut out);
        }
        Ok(out)
    }

    /// Writes `data` to the file at `path` at `offset` (through to the
    /// file: `pwrite`, no `fsync`), and puts `data`'s buffers in the cache
    /// in place of the extents they cover whole — replacing buffers, never
    /// changing one, so readers of the old bytes keep them. A buffer of
    /// which the cached extents are less than half (a small slice of a
    /// large block, or a foreign owner's bytes) is copied instead, so
    /// that the cache keeps no large block alive for a few bytes of it
    /// (see [Memory](FileCache#memory)). Extents the write covers in part
    /// are dropped and read anew when next asked for.
    /// The file must exist and be a regular file (anything else is refused
    /// before it is opened, as with [`read`](Self::read)); errors name it.
    ///
    /// The new buffers count as racy (the file has only just changed): the
    /// next lookup reads the extent again to make sure no other writer
    /// came within the same clock tick, and keeps the written buffer if
    /// the bytes are the same.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, b"0123456789")?;
    /// let cache = ferry::cache::FileCache::new(Default::default())?;
    /// cache.write(&path, 10, ferry::Buf::from_static(b"ab"))?; // append
    /// assert_eq!(cache.read(&path, ..)?, &b"0123456789ab"[..]);
    /// # Ok(()) }
    /// ```
    pub fn write(
        &self,
        path: impl AsRef<Path>,
        offset: u64,
        data: impl Into<Aggregate>,
    ) -> io::Result<()> {
        let path = path.as_ref();
        let data = data.into();
        let total = data.len() as u64;
        let end = offset
            .checked_add(total)
            .filter(|&end| end <= i64::MAX as u64)
            .ok_or_else(|| {
                named(
                    path,
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("a write of {total} bytes at offset {offset} ends past the largest file offset"),
                    ),
                )
            })?;
        let file = open(path, true)?;
        let id = Stamp::of(&file.metadata().map_err(|e| named(path, e))?).id;
        let e = self.inner.cfg.extent as u64;
        let mut at = offset;
        for chunk in data.chunks() {
            let done = file.write_all_at(chunk, at);
            if let Err(err) = done {
                // Part of the range may have been written: drop it all.
                if total > 0 {
                    for idx in offset / e..=(end - 1) / e {
                        self.inner.core.remove((id, idx));
                    }
                }
                return Err(named(path, err));
            }
            at += chunk.len() as u64;
        }
        let stamp = Stamp::of(&file.metadata().map_err(|e| named(path, e))?);
        if total == 0 {
            return Ok(());
        }
        // The extents the write covers whole, each from one buffer of
        // `data`; the others are dropped.
        let mut whole = Vec::new();
        for idx in offset / e..=(end - 1) / e {
            let xo = idx * e;
            let xlen = stamp.size.saturating_sub(xo).min(e);
            let key = (stamp.id, idx);
            if xlen > 0 && xo >= offset && xo + xlen <= end {
                let part = data.slice((xo - offset) as usize..(xo - offset + xlen) as usize);
                if part.slice_count() == 1 {
                    whole.push((key, part.bufs().next().cloned().expect("one slice")));
                    continue;
                }
            }
            self.inner.core.remove(key);
        }
        // A buffer of the caller's is cached as it is only where the
        // extents cut from it make up at least half of the memory it keeps
        // alive; the cache counts its extents, and a small slice must not
        // keep a large block (or a foreign owner, which may hold anything)
        // alive behind the budget's back.
        let mut cut: HashMap<u64, usize> = HashMap::new();
        for (_, buf) in &whole {
            *cut.entry(buf.content_id().block).or_default() += self.inner.core.charge(buf.len());
        }
        for (key, buf) in whole {
            let small = buf
                .footprint()
                .is_none_or(|f| f / 2 > cut[&buf.content_id().block]);
            let buf = if small {
                match self.inner.copy_aside(&buf) {
                    Some(copy) => copy,
                    None => {
                        self.inner.core.remove(key);
                        continue;
                    }
                }
            } else {
                buf
            };
            self.inner.core.replace(key, stamp, buf);
        }
        Ok(())
    }
}

impl Inner {
    /// `buf`'s bytes in a page-aligned buffer of their own (a pool slot
    /// where the pool has one free); None if no memory can be had.
    fn copy_aside(&self, buf: &Buf) -> Option<Buf> {
        let mut m = match self.pool.alloc(buf.len()) {
            Ok(m) => m,
            Err(_) => BufMut::try_with_capacity_aligned(buf.len(), 4096).ok()?,
        };
        m.extend_from_slice(buf);
        crate::buf::count_copy(buf.len());
        Some(m.freeze())
    }

    /// How to fill an extent of `file`: with [`Fill::Map`], the leased
    /// file to map it from, opened once per file and stamp.
    fn fill_how(&self, file: &File, stamp: Stamp) -> fill::How {
        match self.cfg.fill {
            Fill::Read => fill::How::Read,
            Fill::Map => {
                let mut mapped = self.mapped.lock();
                if let Some((s, m)) = mapped.get(&stamp.id) {
                    if *s == stamp {
                        return fill::How::Map(m.clone());
                    }
                }
                match MappedFile::open(file) {
                    Ok(m) => {
                        if mapped.len() >= MAPPED_FILES {
                            mapped.clear();
                        }
                        mapped.insert(stamp.id, (stamp, m.clone()));
                        fill::How::Map(m)
                    }
                    Err(_) => fill::How::Read,
                }
            }
        }
    }
}

/// `range` as `start..end` in file offsets (an end past `u64::MAX` is
/// `u64::MAX`: the file's end).
fn bounds(range: &impl RangeBounds<u64>) -> io::Result<(u64, u64)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => u64::MAX,
    };
    if start > end {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("range {start}..{end} is reversed"),
        ));
    }
    Ok((start, end))
}
