//! How a stream is opened.

/// A stream's direction: every stream is in one of the two at a time (ASF's
/// `set_stream_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `salloc` hands out read-only regions of file data.
    Read,
    /// `salloc` hands out writable regions that reach the file when freed.
    Write,
}

/// Which stream module moves the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// Chosen by descriptor and file-system type:
    /// read-only regular files on local file systems are mapped if ferry
    /// can hold a read lease on them (see [`Backend::Mapped`]), or
    /// without one if asked ([`OpenOptions::without_lease`]); files that
    /// are also written, files open for writing elsewhere, and files on
    /// network or FUSE file systems, are buffered; pipes, sockets and
    /// terminals are read and written in order.
    #[default]
    Auto,
    /// `pread`/`pwrite` into page-aligned pool buffers.
    Buffered,
    /// The file mapped in windows, read-only, under a read lease
    /// ([`MappedFile`](crate::MappedFile)): a writer that comes along is
    /// held back until every window the stream lent out is a private
    /// snapshot, so regions and their `Buf`s never change. Where no lease
    /// can be had — the file is open for writing (in this process too),
    /// belongs to another user, or its file system has no leases — the
    /// stream is buffered instead, as it is for streams that write; check
    /// [`Stream::is_mapped`](crate::Stream::is_mapped). Likewise, once a
    /// writer broke the lease and still holds the file open, further
    /// windows are read into buffers. (Pages lost anyway — a break left
    /// unanswered for the kernel's lease-break time, then a truncation —
    /// are an `UnexpectedEof` error, never a crash.)
    Mapped,
    /// `read`/`write` at the descriptor's own offset, in order, even on a
    /// regular file: for a descriptor other writers share (standard output
    /// redirected to a file that a child process or `dprintf` also writes).
    /// Such a stream cannot seek (ESPIPE).
    Sequential,
}

impl Backend {
    /// The backend a name stands for: `auto`, `mmap` (or `mapped`),
    /// `buffered`, `sequential`; `None` for anything else. The library reads
    /// no environment variable: a program that wants one (ferry's bench
    /// reads `FERRY_BACKEND`) parses it with this and passes the result to
    /// [`OpenOptions::backend`].
    ///
    /// ```
    /// use ferry::stream::Backend;
    /// assert_eq!(Backend::from_name("mmap"), Some(Backend::Mapped));
    /// assert_eq!(Backend::from_name("zip"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Backend> {
        match name {
            "" | "auto" => Some(Backend::Auto),
            "mmap" | "mapped" => Some(Backend::Mapped),
            "buffered" => Some(Backend::Buffered),
            "sequential" => Some(Backend::Sequential),
            _ => None,
        }
    }
}

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
