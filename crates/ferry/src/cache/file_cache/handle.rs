//! [`CachedFile`]: a file held open for the cache, whose lookups ask the
//! file nothing while ferry's read lease on it holds.

use super::core::FillError;
use super::identity::Stamp;
use super::open::open;
use super::{bounds, named, FileCache};
use crate::sys::watch::Watch;
use crate::{Aggregate, MappedFile};
use std::fs::File;
use std::io;
use std::ops::RangeBounds;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A file held open for a [`FileCache`], made by [`FileCache::open`]:
/// while it is *armed*, a lookup asks the file nothing — no `fstat`, no
/// system call at all — and a hit costs a few shard lookups.
///
/// A lookup through [`FileCache::read_file`] takes the file's stamp
/// (`fstat`) every time, which is what keeps it from ever serving bytes
/// the file no longer has. A `CachedFile` takes the stamp once, under a
/// read lease ([`MappedFile`]'s: ferry's own read-only open of the file)
/// and an inotify watch, and trusts it for as long as both say nothing
/// changed:
///
/// * **Every writer that opens the file** — `write(2)`, `truncate(2)`,
///   `ftruncate`, a writable mapping, [`FileCache::write`] — needs an open
///   for writing, which breaks the lease: the kernel holds the writer back
///   until ferry's lease thread has marked the lease broken. From then on
///   the handle is disarmed and each lookup takes the stamp again, as
///   `read_file` does. No lookup that begins after the writer's open
///   returned is served from the old stamp.
/// * **A read-only open with `O_TRUNC`** (which Linux allows anyone who
///   may write the file, and which breaks no read lease) is seen through
///   the watch: ferry's watch thread disarms the handle a moment after the
///   truncation (a thread wake-up, microseconds). A lookup within that
///   moment may still hand out the bytes the file had before it was
///   emptied. The watch also disarms the handle on a `touch`, `chmod`, a
///   rename or unlink of the file, and when the kernel's event queue
///   overflows.
/// * **The file, not the path.** A handle reads the file it opened, as a
///   `File` does: another file renamed over the path is not this one. The
///   rename disarms the handle a moment later, through the watch (the old
///   file's link count changed), and [`is_armed`](Self::is_armed) then
///   tells the caller to open the path again. A swap that leaves the file
///   untouched — a symbolic link or a parent directory renamed to point
///   elsewhere — is not seen at all: a caller that follows paths across
///   such swaps opens them again itself (nginx's `open_file_cache` does so
///   on a timer). A child made by a raw `clone` that skips the `fork`
///   handlers keeps its handles armed: open them again there.
///
/// A handle cannot be armed where no lease can be had: the file open for
/// writing somewhere (`EAGAIN`), the caller neither its owner nor holding
/// `CAP_LEASE`, a file system without leases, or no inotify watch left
/// (`fs.inotify.max_user_watches`). It then works as `read_file` does, a
/// stamp each lookup. A forked child's handles are disarmed (the lease is
/// the parent's). Extents read through a handle follow the cache's usual
/// rules: an extent read within the settle time of the file's last change
/// is read again at the next lookup, armed or not.
///
/// What a handle costs other programs is what a lease costs
/// ([`MappedFile`]): a writer's open waits until ferry's lease thread has
/// answered the break (about a millisecond), and a writer that opens
/// without blocking (`O_NONBLOCK`, as GNU `truncate` does) is refused
/// once with `EAGAIN` while the break is answered; its next try goes
/// through. That is why the cache does not lease files on its own: a
/// handle is asked for.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::cache::{CacheConfig, FileCache};
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("index.html");
/// std::fs::write(&path, b"<h1>hello</h1>")?;
/// let cache = FileCache::new(CacheConfig::default().with_budget(1 << 20))?;
/// let page = cache.open(&path)?;
/// assert_eq!(page.read(..)?, &b"<h1>hello</h1>"[..]);
/// assert_eq!(page.read(4..9)?, &b"hello"[..]); // armed: no system call
///
/// // A writer breaks the lease: the handle disarms, the next lookup sees it.
/// std::fs::write(&path, b"<h1>HELLO</h1>")?;
/// assert!(!page.is_armed());
/// assert_eq!(page.read(..)?, &b"<h1>HELLO</h1>"[..]);
/// let page = cache.open(&path)?; // armed again, if no writer holds the file
/// assert_eq!(page.read(..)?, &b"<h1>HELLO</h1>"[..]);
/// # Ok(()) }
/// ```
pub struct CachedFile {
    cache: FileCache,
    path: PathBuf,
    file: File,
    armed: Option<Armed>,
}

/// What lets a handle skip the stamp: the lease, the period it was taken
/// in, the watch, and the stamp taken under both.
struct Armed {
    lease: MappedFile,
    period: u64,
    watch: Watch,
    stamp: Stamp,
}

impl Armed {
    /// Takes a lease and a watch on `file`, then its stamp; armed only if
    /// neither moved while the stamp was taken.
    fn new(file: &File) -> io::Result<Armed> {
        let lease = MappedFile::open(file)?;
        let watch = Watch::new(file.as_fd())?;
        // One `fstat` of ferry's own open: finds a read-only `O_TRUNC`
        // that came before the watch.
        let (period, _) = lease.lease_period()?;
        let stamp = Stamp::of(&file.metadata()?);
        if !Armed::holds(&lease, period, &watch) {
            return Err(io::Error::new(
                io::ErrorKind::ResourceBusy,
                "the file changed while its handle was armed",
            ));
        }
        Ok(Armed {
            lease,
            period,
            watch,
            stamp,
        })
    }

    fn holds(lease: &MappedFile, period: u64, watch: &Watch) -> bool {
        lease.held_period() == Some(period) && !watch.raised()
    }

    /// Nothing changed since the stamp: two atomic loads.
    fn valid(&self) -> bool {
        Armed::holds(&self.lease, self.period, &self.watch)
    }
}

impl FileCache {
    /// Opens the file at `path` for lookups that ask it nothing while
    /// nothing changes it (see [`CachedFile`]). Errors as
    /// [`read`](Self::read)'s do when the file cannot be opened; a file
    /// that cannot be leased or watched gives a handle that is not armed.
    pub fn open(&self, path: impl AsRef<Path>) -> io::Result<CachedFile> {
        let path = path.as_ref();
        let file = open(path, false)?;
        let armed = Armed::new(&file).ok();
        Ok(CachedFile {
            cache: self.clone(),
            path: path.to_path_buf(),
            file,
            armed,
        })
    }
}

impl CachedFile {
    /// The bytes of `range` of the file (as [`FileCache::read`]): from the
    /// cache without asking the file while the handle is armed, else
    /// after taking its stamp.
    pub fn read(&self, range: impl RangeBounds<u64>) -> io::Result<Aggregate> {
        if let Some(a) = self.armed.as_ref().filter(|a| a.valid()) {
            let (start, end) = bounds(&range).map_err(|e| named(&self.path, e))?;
            let r = self.cache.extents(
                &self.file,
                &self.path,
                (start, end),
                a.stamp,
                &SystemTime::now,
            );
            match r {
                Ok(out) => return Ok(out),
                Err(FillError::Io(e)) => return Err(e),
                // Changed under the lease after all (a read-only
                // `O_TRUNC` the watch has not reported yet): the stamp
                // decides.
                Err(FillError::Changed | FillError::Shrank(_)) => {}
            }
        }
        self.cache.read_file(&self.file, &self.path, range)
    }

    /// Whether lookups still skip the stamp: nothing has changed the file
    /// since the handle was opened. A handle that is not armed still reads
    /// correctly; [`FileCache::open`] makes a new one that may be.
    pub fn is_armed(&self) -> bool {
        self.armed.as_ref().is_some_and(Armed::valid)
    }

    /// The path the handle was opened with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's size as of the handle's stamp if armed, else as it is
    /// now (`fstat`).
    pub fn size(&self) -> io::Result<u64> {
        match self.armed.as_ref().filter(|a| a.valid()) {
            Some(a) => Ok(a.stamp.size),
            None => Ok(self
                .file
                .metadata()
                .map_err(|e| named(&self.path, e))?
                .len()),
        }
    }
}

impl std::fmt::Debug for CachedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CachedFile")
            .field("path", &self.path)
            .field("armed", &self.is_armed())
            .finish()
    }
}
