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
    /// can hold a read lease on them (see [`Backend::Mapped`]); files that
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
