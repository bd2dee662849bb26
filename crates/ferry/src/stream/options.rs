//! How a stream is opened.

use super::backend::Backend;

/// Options for [`Stream::open`](super::Stream::open), as `std::fs::OpenOptions`
/// plus the stream's own.
///
/// ```
/// use ferry::OpenOptions;
/// let o = OpenOptions::new().read(true).write(true).create(true).buffer_size(1 << 20);
/// assert!(o.is_read() && o.is_write());
/// ```
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    pub(crate) read: bool,
    pub(crate) write: bool,
    pub(crate) append: bool,
    pub(crate) create: bool,
    pub(crate) truncate: bool,
    pub(crate) create_new: bool,
    pub(crate) backend: Backend,
    pub(crate) buffer_size: Option<usize>,
    pub(crate) unleased: bool,
}

impl OpenOptions {
    /// Nothing set (opening fails until read, write or append is).
    pub fn new() -> OpenOptions {
        OpenOptions::default()
    }

    /// Read-only, like `File::open`.
    pub fn read_only() -> OpenOptions {
        OpenOptions::new().read(true)
    }

    /// Write-only, created or truncated, like `File::create`.
    pub fn write_truncate() -> OpenOptions {
        OpenOptions::new().write(true).create(true).truncate(true)
    }

    /// Sets reading.
    pub fn read(mut self, on: bool) -> OpenOptions {
        self.read = on;
        self
    }

    /// Sets writing.
    pub fn write(mut self, on: bool) -> OpenOptions {
        self.write = on;
        self
    }

    /// Sets appending: every write goes to the end of the file.
    pub fn append(mut self, on: bool) -> OpenOptions {
        self.append = on;
        self
    }

    /// Creates the file if it does not exist.
    pub fn create(mut self, on: bool) -> OpenOptions {
        self.create = on;
        self
    }

    /// Truncates the file to 0 bytes when opening.
    pub fn truncate(mut self, on: bool) -> OpenOptions {
        self.truncate = on;
        self
    }

    /// Fails if the file exists (`O_EXCL`).
    pub fn create_new(mut self, on: bool) -> OpenOptions {
        self.create_new = on;
        self
    }

    /// Chooses the stream module (default: automatic).
    pub fn backend(mut self, b: Backend) -> OpenOptions {
        self.backend = b;
        self
    }

    /// Maps a read-only file without a read lease: mapped windows are the
    /// file's page cache itself, so other programs are never held back by
    /// this stream, and a file another program rewrites reads as whatever
    /// bytes were there when they were read, as `read(2)` gives them.
    /// Where the default backend would map only a file it can lease, this
    /// maps any read-only regular file on a local file system (files open
    /// for writing elsewhere, other users' files); a file that shrinks
    /// under a window is an `UnexpectedEof` error from the read that meets
    /// the lost pages (the SIGBUS guard), never a crash.
    ///
    /// What a lease costs other programs, and why a tool that only reads a
    /// file for itself should not take one: while it is held, the kernel
    /// makes anyone who opens the file for writing or truncates it wait
    /// (a non-blocking open fails with `EAGAIN`: `truncate` says "Resource
    /// temporarily unavailable") until ferry has copied every window it
    /// lent out and given the lease up — and if the process holding it is
    /// stopped (Ctrl-Z, `SIGSTOP`), the writer waits the kernel's whole
    /// lease-break time (`/proc/sys/fs/lease-break-time`, 45 s by default).
    /// What the lease buys: regions and their `Buf`s never change, and
    /// equal [`ContentId`](crate::ContentId)s mean equal bytes.
    ///
    /// # Safety
    /// The regions, `Buf`s and [`ContentId`](crate::ContentId)s of such a
    /// stream lose that promise: the caller must make sure that nobody —
    /// this process or another — writes the file while any of them lives,
    /// or accept what a write under a `&[u8]` means (Rust does not allow
    /// it; the bytes may change while being looked at, as with any shared
    /// mapping, `memmap2::Mmap::map`'s contract). Shrinking the file is
    /// tolerated (above). Streams that write, and descriptors handed to
    /// [`Stream::from_fd_with`](crate::Stream::from_fd_with), are not
    /// affected.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::{stream::Backend, OpenOptions, Stream};
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("f"), b"no lease")?;
    /// let o = OpenOptions::read_only().backend(Backend::Mapped);
    /// // SAFETY: nobody writes this private temporary file meanwhile.
    /// let o = unsafe { o.without_lease() };
    /// assert!(!o.is_leased());
    /// let s = Stream::open(dir.path().join("f"), &o)?;
    /// assert!(s.is_mapped());
    /// assert_eq!(&s.salloc(8)?[..], b"no lease");
    /// # Ok(()) }
    /// ```
    pub unsafe fn without_lease(mut self) -> OpenOptions {
        self.unleased = true;
        self
    }

    /// Does a mapped read stream hold a read lease (the default), or not
    /// ([`OpenOptions::without_lease`])?
    pub fn is_leased(&self) -> bool {
        !self.unleased
    }

    /// Sets the size of the stream's buffers (default 128 KiB).
    pub fn buffer_size(mut self, bytes: usize) -> OpenOptions {
        self.buffer_size = Some(bytes);
        self
    }

    /// Does the stream read?
    pub fn is_read(&self) -> bool {
        self.read
    }

    /// Does the stream write?
    pub fn is_write(&self) -> bool {
        self.write || self.append
    }

    pub(crate) fn to_std(&self) -> std::fs::OpenOptions {
        let mut o = std::fs::OpenOptions::new();
        o.read(self.read)
            .write(self.write)
            .append(self.append)
            .create(self.create)
            .truncate(self.truncate)
            .create_new(self.create_new);
        o
    }
}
