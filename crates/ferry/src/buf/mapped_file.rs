//! [`MappedFile`]: windows of a file mapped into `Buf`s that stay
//! immutable, because ferry holds a read lease on the file and snapshots
//! its mappings before anyone may change it (the registry that does so is
//! `leased.rs`); and the `Buf` constructors that map or read a range of a
//! file.

use super::block::Block;
use super::leased::Leased;
use super::Buf;
use crate::sys::lease;
use std::io;
use std::ops::Range;
use std::os::fd::AsFd;
use std::sync::Arc;

/// A file that ferry holds a read lease on, so that its mappings can be
/// handed out as [`Buf`]s by a safe API: windows of it map cheaply, and
/// none of their bytes ever change.
///
/// How: ferry opens the file again read-only (its own open file
/// description, kept open by every mapping) and takes a read lease on it
/// (`fcntl(F_SETLEASE, F_RDLCK)`). The kernel refuses the lease while
/// anyone has the file open for writing, and while it is held tells ferry
/// *before* anyone opens the file for writing or truncates it, holding
/// that opener back. ferry's lease thread then replaces every live mapping
/// of the file by a private read-only copy at the same address (so the
/// pointers in `Buf`s stay valid and readers on any thread see the same
/// bytes throughout) and gives the lease up; the writer goes on, and only
/// later mappings see its bytes. Mapping again after that takes a new
/// lease, which fails while the writer still has the file open.
///
/// The lease is refused — [`MappedFile::open`] fails, naming why — when
/// the file is open for writing anywhere, this process included
/// (`WouldBlock`, `EAGAIN`); when the caller is neither the file's owner
/// nor has `CAP_LEASE` (`EACCES`); or on file systems without leases
/// (`EINVAL`). [`Buf::read_file`] copies the bytes instead.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("data");
/// std::fs::write(&path, b"0123456789")?;
/// let file = std::fs::File::open(&path)?;
/// let mapped = ferry::MappedFile::open(&file)?;
/// drop(file); // the lease lives on with `mapped` and its Bufs
/// let a = mapped.map(2..6)?;
/// assert_eq!(&a[..], b"2345");
/// assert_eq!(mapped.size()?, 10);
///
/// // A writer is held back until `a` is a private copy; `a` keeps its bytes.
/// std::fs::write(&path, b"abcdefghij")?;
/// assert_eq!(&a[..], b"2345");
///
/// // The file is open for writing here: no lease, no mapping.
/// let w = std::fs::OpenOptions::new().append(true).open(&path)?;
/// let e = ferry::MappedFile::open(&std::fs::File::open(&path)?).unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
/// drop(w);
/// assert_eq!(&mapped.map(2..6)?[..], b"cdef");
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct MappedFile {
    file: Arc<Leased>,
}

impl std::fmt::Debug for MappedFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappedFile")
            .field("fd", &self.file.raw_fd())
            .finish()
    }
}

impl MappedFile {
    /// Opens `file` again read-only (through `/proc/self/fd`) and takes a
    /// read lease on that; see the type's documentation for the errors.
    pub fn open(file: &std::fs::File) -> io::Result<MappedFile> {
        let fd = lease::reopen_readonly(file.as_fd())?;
        let info = crate::sys::fileio::fd_info(fd.as_fd())?;
        if !info.regular {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "only regular files can be mapped",
            ));
        }
        Ok(MappedFile {
            file: Leased::new(fd)?,
        })
    }

    /// The file's size under the current lease (taking a new lease if a
    /// writer broke the last one: an error if that is refused).
    pub fn size(&self) -> io::Result<u64> {
        self.file.lease_period().map(|(_, size)| size)
    }

    /// The current lease period and the file's size in it (one `fstat`,
    /// which also finds a read-only `O_TRUNC` open the lease did not
    /// announce), taking a new lease if a writer broke the last one.
    pub(crate) fn lease_period(&self) -> io::Result<(u64, u64)> {
        self.file.lease_period()
    }

    /// The lease period ferry still holds the lease in, if it does: one
    /// atomic load. Equal to a period seen before, no writer opened the
    /// file in between (see `Leased::held_period` for the one change a
    /// lease does not announce).
    pub(crate) fn held_period(&self) -> Option<u64> {
        self.file.held_period()
    }

    /// Maps `range` of the file read-only: one `mmap` and no copy. The
    /// bytes never change while the `Buf` (or any slice of it) lives.
    ///
    /// The range must lie inside the file (else `UnexpectedEof`); a
    /// reversed range is `InvalidInput`. If a writer broke the lease, a
    /// new lease is taken first, and refused while the writer still has
    /// the file open (`WouldBlock`).
    pub fn map(&self, range: Range<u64>) -> io::Result<Buf> {
        if range.start > range.end {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("map_file: range {}..{} is reversed", range.start, range.end),
            ));
        }
        let len = usize::try_from(range.end - range.start).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "map_file: range too large")
        })?;
        loop {
            let (gen, size) = self.file.lease_period()?;
            if range.end > size {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!(
                        "map_file: range {}..{} is past the end of a {size}-byte file",
                        range.start, range.end
                    ),
                ));
            }
            if len == 0 {
                return Ok(Buf::new());
            }
            if let Some(b) = self.file.map_in(gen, range.start, len)? {
                return Ok(b);
            }
            // A writer broke the lease meanwhile: try again under a new one.
        }
    }
}

/// Checks `range` against the file's size now; returns its length.
fn checked_len(file: &std::fs::File, range: &Range<u64>, what: &str) -> io::Result<usize> {
    if range.start > range.end {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}: range {}..{} is reversed", range.start, range.end),
        ));
    }
    let size = crate::sys::fileio::file_size(file.as_fd())?;
    if range.end > size {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!(
                "{what}: range {}..{} is past the end of a {size}-byte file",
                range.start, range.end
            ),
        ));
    }
    usize::try_from(range.end - range.start).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}: range too large"),
        )
    })
}

impl Buf {
    /// Maps `range` of `file` read-only, without reading it: the pages come
    /// from the page cache when touched and are unmapped with the last
    /// reference. The bytes never change while the `Buf` lives: ferry
    /// holds a read lease on the file and, before anyone may write it,
    /// replaces the mapping by a private copy ([`MappedFile`], which this
    /// opens for the one window; use it directly to map many).
    ///
    /// The range must lie inside the file (else `UnexpectedEof`). If no
    /// lease can be had — the file is open for writing anywhere, this
    /// process included (`WouldBlock`), the caller does not own it and
    /// lacks `CAP_LEASE`, or its file system has no leases — this fails
    /// and says why: [`Buf::read_file`] copies the bytes instead, and
    /// [`Buf::map_file_unchecked`] maps them on the caller's promise.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("f");
    /// std::fs::write(&path, b"0123456789")?;
    /// let f = std::fs::File::open(&path)?;
    /// let b = match ferry::Buf::map_file(&f, 2..6) {
    ///     Ok(b) => b,
    ///     Err(_) => ferry::Buf::read_file(&f, 2..6)?, // no lease to be had
    /// };
    /// assert_eq!(&b[..], b"2345");
    /// # Ok(()) }
    /// ```
    pub fn map_file(file: &std::fs::File, range: Range<u64>) -> io::Result<Buf> {
        let len = checked_len(file, &range, "map_file")?;
        if len == 0 {
            return Ok(Buf::new());
        }
        MappedFile::open(file)?.map(range)
    }

    /// Reads (copies) `range` of `file` into a new page-aligned buffer with
    /// `pread`; the file's offset does not move. The copy is counted in
    /// [`copied_bytes`](crate::buf::copied_bytes). For files that cannot
    /// be mapped safely ([`Buf::map_file`] fails), or small ranges.
    ///
    /// The range must lie inside the file (else `UnexpectedEof`, also if
    /// the file shrinks while being read).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// let mut f = tempfile::tempfile()?; // open for writing: no lease
    /// f.write_all(b"0123456789")?;
    /// let b = ferry::Buf::read_file(&f, 2..6)?;
    /// assert_eq!(&b[..], b"2345");
    /// # Ok(()) }
    /// ```
    pub fn read_file(file: &std::fs::File, range: Range<u64>) -> io::Result<Buf> {
        let len = checked_len(file, &range, "read_file")?;
        let mut m = super::BufMut::try_with_capacity_aligned(len, 4096)?;
        while m.len() < len {
            let at = range.start + m.len() as u64;
            let want = len - m.len();
            let n =
                crate::sys::fileio::read_at(file.as_fd(), &mut m.spare_capacity_mut()[..want], at)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("read_file: the file ended at offset {at}, inside the range"),
                ));
            }
            m.commit(n);
        }
        super::count_copy(len);
        Ok(m.freeze())
    }

    /// Maps `range` of `file` read-only with no lease: the pages are the
    /// file's page cache, so a write to the file shows in the `Buf`.
    /// Unlike [`Buf::map_file`] this works on files open for writing and
    /// on any file system, and costs nothing beyond the `mmap`.
    ///
    /// The range must lie inside the file as it is now (else
    /// `UnexpectedEof`). A file that shrinks under the mapping does not
    /// crash the process: the lost pages read as zeros (the SIGBUS guard)
    /// and [`Buf::is_intact`] turns false.
    ///
    /// # Safety
    /// Nobody — this process or another — may write the mapped range of
    /// the file while any `Buf` of this mapping (or a slice of it) lives:
    /// the bytes behind a `&[u8]` would change, which Rust forbids, and
    /// equal [`ContentId`](crate::ContentId)s could name different bytes.
    /// Shrinking the file is tolerated (see above).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// let mut f = tempfile::tempfile()?;
    /// f.write_all(b"0123456789")?;
    /// // SAFETY: nobody writes this private temporary file while `b` lives.
    /// let b = unsafe { ferry::Buf::map_file_unchecked(&f, 2..6)? };
    /// assert_eq!(&b[..], b"2345");
    /// # Ok(()) }
    /// ```
    pub unsafe fn map_file_unchecked(file: &std::fs::File, range: Range<u64>) -> io::Result<Buf> {
        let len = checked_len(file, &range, "map_file")?;
        if len == 0 {
            return Ok(Buf::new());
        }
        let block = Block::map(file.as_fd(), range.start, len)?;
        let data = block.data();
        Ok(Buf::from_parts(block, data, len))
    }
}
