//! A file as the cache looked at it: its metadata, taken once, for the
//! caller (a server deciding between a file and a directory, its size
//! and dates) and for the lookup that follows (no second `fstat`).

use super::identity::Stamp;
use super::open::not_regular;
use super::FileCache;
use crate::Aggregate;
use std::fs::{File, Metadata};
use std::io;
use std::ops::RangeBounds;
use std::path::Path;
use std::time::SystemTime;

/// A file's metadata as [`FileCache::look`] took it, bound to that file
/// (it borrows it), so that [`FileCache::read_looked`] can use it as the
/// first attempt's stamp: a lookup that costs no `fstat` of its own. The
/// rules are [`FileCache::read_file`]'s, the look standing for the
/// lookup's own first look: a file changed after the look gives the bytes
/// the cache holds for the look's stamp (the file as it was when looked
/// at), or, on a miss, the file as of a later look; never bytes of two
/// states side by side, never an extent read after the change kept under
/// the older stamp. (A caller that builds a response head from the look's
/// size checks the length it gets.)
#[derive(Debug)]
pub struct Looked<'f> {
    file: &'f File,
    meta: Metadata,
    began: SystemTime,
}

impl Looked<'_> {
    /// The file's metadata as looked at.
    pub fn metadata(&self) -> &Metadata {
        &self.meta
    }

    /// The file looked at.
    pub fn file(&self) -> &File {
        self.file
    }
}

impl FileCache {
    /// Looks at `file` (one `fstat`), for [`read_looked`](Self::read_looked).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, b"0123456789")?;
    /// let f = std::fs::File::open(&path)?;
    /// let cache = ferry::cache::FileCache::new(Default::default())?;
    /// let looked = cache.look(&f)?;
    /// assert_eq!(looked.metadata().len(), 10);
    /// assert_eq!(cache.read_looked(&looked, &path, 2..=4)?, &b"234"[..]);
    /// # Ok(()) }
    /// ```
    pub fn look<'f>(&self, file: &'f File) -> io::Result<Looked<'f>> {
        let began = SystemTime::now();
        let meta = file.metadata()?;
        Ok(Looked { file, meta, began })
    }

    /// [`read_file`](Self::read_file) of the file `looked` looked at, the
    /// first attempt with the look's metadata; `path` only names it in
    /// errors.
    pub fn read_looked(
        &self,
        looked: &Looked<'_>,
        path: &Path,
        range: impl RangeBounds<u64>,
    ) -> io::Result<Aggregate> {
        if !looked.meta.is_file() {
            return Err(not_regular(path));
        }
        let stamp = Stamp::of(&looked.meta);
        self.read_as_of(looked.file, path, range, Some((stamp, looked.began)))
    }
}
