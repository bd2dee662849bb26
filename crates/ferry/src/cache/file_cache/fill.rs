//! Reading one extent of a file on a miss: `pread` into a pool buffer (or
//! a heap buffer when the bytes are not to be cached), or a leased mapped
//! window; then the check that the file did not change meanwhile.

use super::core::{FillError, Filled};
use super::identity::{effective_settle, Stamp};
use crate::{Buf, BufMut, MappedFile, Pool};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// One extent to read: `len` bytes at `offset` of `file` as of `stamp`,
/// for a lookup that began at `began`.
pub(super) struct Extent<'a> {
    pub file: &'a File,
    pub path: &'a Path,
    pub stamp: Stamp,
    pub began: SystemTime,
    pub offset: u64,
    pub len: usize,
}

/// Where the bytes come from.
pub(super) enum How {
    Read,
    /// A leased mapping of the file, opened for its current stamp.
    Map(MappedFile),
}

pub(super) fn fill(
    x: &Extent<'_>,
    how: How,
    pool: &Pool,
    settle: Duration,
    cached: bool,
) -> Result<Filled, FillError> {
    let buf = match how {
        How::Map(m) => match map(&m, x) {
            Some(b) => b?,
            None => read(x, pool, cached)?,
        },
        How::Read => read(x, pool, cached)?,
    };
    #[cfg(test)]
    after_read::run();
    let after = x
        .file
        .metadata()
        .map_err(|e| FillError::Io(named(x.path, e)))?;
    // Bytes read while the file changed are nobody's: not the file's as
    // of the stamp the lookup's other extents agree with.
    if Stamp::of(&after) != x.stamp {
        return Err(FillError::Changed);
    }
    Ok(Filled {
        buf,
        settled: x
            .stamp
            .settled_for(x.began, settle_for(x.file, &x.stamp, settle)),
    })
}

/// The settle time for a file of stamp `stamp`: `settle`, but at least
/// its file system's time granularity (see `identity`). Asked of the file
/// at each fill, not remembered per device: a device number is given to
/// the next file system mounted once the last one is gone (a USB stick
/// pulled and another put in), and a fill already costs a read.
pub(super) fn settle_for(file: &File, stamp: &Stamp, settle: Duration) -> Duration {
    let magic = crate::sys::transfer::fs_magic(file.as_fd()).ok();
    effective_settle(settle, magic, stamp)
}

/// The extent as a leased mapping; None where no lease can be had.
fn map(mapped: &MappedFile, x: &Extent<'_>) -> Option<Result<Buf, FillError>> {
    let end = x.offset + x.len as u64;
    match mapped.map(x.offset..end) {
        Ok(b) => Some(Ok(b)),
        // The file shrank since it was looked at.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Some(Err(FillError::Shrank(
            mapped.size().unwrap_or(x.offset).min(end),
        ))),
        Err(_) => None,
    }
}

fn read(x: &Extent<'_>, pool: &Pool, cached: bool) -> Result<Buf, FillError> {
    let mut m = match cached.then(|| pool.alloc(x.len)) {
        Some(Ok(m)) => m,
        _ => BufMut::try_with_capacity_aligned(x.len, 4096)
            .map_err(|e| FillError::Io(named(x.path, e)))?,
    };
    while m.len() < x.len {
        let at = x.offset + m.len() as u64;
        let want = x.len - m.len();
        match x.file.read_at(&mut m.spare_capacity_mut()[..want], at) {
            // The file ended early: it shrank since it was looked at.
            Ok(0) => return Err(FillError::Shrank(at)),
            Ok(n) => m.commit(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(FillError::Io(named(x.path, e))),
        }
    }
    Ok(m.freeze())
}

/// `e` with the file's name in front, as GNU tools say it.
pub(super) fn named(path: &Path, e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("{}: {}", path.display(), e))
}

/// For the read path's tests: something to do between reading an extent
/// and checking the file's stamp again (on the calling thread only), to
/// change the file at that very moment.
#[cfg(test)]
pub(super) mod after_read {
    use std::cell::RefCell;

    thread_local! {
        static HOOK: RefCell<Option<Box<dyn FnMut()>>> = RefCell::new(None);
    }

    /// Runs `f` after every extent this thread reads, until `clear`.
    pub(in super::super) fn set(f: impl FnMut() + 'static) {
        HOOK.with(|h| *h.borrow_mut() = Some(Box::new(f)));
    }

    pub(in super::super) fn clear() {
        HOOK.with(|h| *h.borrow_mut() = None);
    }

    pub(super) fn run() {
        HOOK.with(|h| {
            if let Some(f) = h.borrow_mut().as_mut() {
                f();
            }
        });
    }
}
