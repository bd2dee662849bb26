//! Making streams: files, descriptors, the standard streams, memory.

use super::backend::Backend;
use super::backend::{self, Io, Memory};
use super::engine::Inner;
use super::options::OpenOptions;
use super::Stream;
use crate::error::{errno, named};
use crate::sys::fileio;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

impl Stream {
    /// Opens a file as a stream.
    ///
    /// Errors name the file: `opening data.txt: No such file or directory`.
    /// A directory is `EISDIR`.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::{OpenOptions, Stream};
    /// let dir = tempfile::tempdir()?;
    /// let path = dir.path().join("out");
    /// let s = Stream::open(&path, &OpenOptions::write_truncate())?;
    /// s.salloc_mut(5)?.copy_from_slice(b"hello");
    /// s.close()?;
    /// assert_eq!(std::fs::read(&path)?, b"hello");
    /// # Ok(()) }
    /// ```
    pub fn open(path: impl AsRef<Path>, opts: &OpenOptions) -> io::Result<Stream> {
        let path = path.as_ref();
        let name: Arc<str> = path.to_string_lossy().into();
        if !opts.read && !opts.is_write() {
            return Err(named(
                "opening",
                &name,
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "open for neither reading nor writing",
                ),
            ));
        }
        let file = opts
            .to_std()
            .open(path)
            .map_err(|e| named("opening", &name, e))?;
        let info = if opts.is_write() {
            fileio::fd_info(file.as_fd())
        } else {
            fileio::read_info(file.as_fd(), backend::MAP_FROM)
        }
        .map_err(|e| named("opening", &name, e))?;
        if info.dir {
            return Err(named("opening", &name, errno(libc::EISDIR)));
        }
        let io = backend::choose(
            file,
            info,
            opts.backend,
            (opts.read, opts.is_write()),
            false,
            opts.is_leased(),
        );
        let mut inner = Inner::new(io, name, opts.read, opts.is_write(), opts.append);
        // The size just seen: the first read of a small file needs no
        // second `fstat` to know how much to ask for.
        inner.size_seen = info.size;
        if let Some(n) = opts.buffer_size {
            inner.set_bufsize(n);
        }
        Ok(Stream::from_inner(inner))
    }

    /// A stream over a descriptor the caller hands over (closed with the
    /// stream). Regular files are read and written from the descriptor's
    /// current offset, and, as POSIX 2.5.1 asks of stdio, after
    /// [`Stream::flush`], a seek and close the descriptor's offset is the
    /// stream's position (what was read ahead is given back), so another
    /// handle on the same open file description — a `dup`, a child or
    /// parent process, the next command of a shell group — goes on from
    /// there; after a flush the stream goes on from wherever that handle
    /// left the offset. Between those points reads and writes stay
    /// positional (`pread`/`pwrite`, mapped windows).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::{Seek, Write};
    /// let dir = tempfile::tempdir()?;
    /// let file = std::fs::File::create(dir.path().join("log"))?;
    /// let mut other = file.try_clone()?; // same open file description
    /// let mut s = ferry::Stream::from_fd(file.into())?;
    /// s.write_all(b"AAAA\n")?;
    /// s.flush()?;
    /// assert_eq!(other.stream_position()?, 5);
    /// other.write_all(b"BBBB\n")?;
    /// s.write_all(b"CCCC\n")?; // after what the other handle wrote
    /// s.close()?;
    /// assert_eq!(std::fs::read(dir.path().join("log"))?, b"AAAA\nBBBB\nCCCC\n");
    /// # Ok(()) }
    /// ```
    pub fn from_fd(fd: OwnedFd) -> io::Result<Stream> {
        use std::os::fd::AsRawFd;
        let name: Arc<str> = format!("fd {}", fd.as_raw_fd()).into();
        Stream::from_fd_named(fd, name)
    }

    /// [`Stream::from_fd`], choosing the backend as [`Stream::open`] does:
    /// with `Backend::Auto` a read-only descriptor of a local regular file
    /// of 1 MiB or more is mapped (any size with `Mapped`), under a read
    /// lease. `name` names the stream in errors.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::{stream::Backend, Stream};
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("f"), b"mapped")?;
    /// let fd = std::fs::File::open(dir.path().join("f"))?.into();
    /// let s = Stream::from_fd_with(fd, "f", Backend::Mapped)?;
    /// assert!(s.is_mapped());
    /// assert_eq!(&s.salloc(6)?[..], b"mapped");
    /// # Ok(()) }
    /// ```
    pub fn from_fd_with(fd: OwnedFd, name: &str, backend: Backend) -> io::Result<Stream> {
        Stream::from_fd_inner(fd, name.into(), backend)
    }

    pub(crate) fn from_fd_named(fd: OwnedFd, name: Arc<str>) -> io::Result<Stream> {
        Stream::from_fd_inner(fd, name, Backend::Buffered)
    }

    fn from_fd_inner(fd: OwnedFd, name: Arc<str>, want: Backend) -> io::Result<Stream> {
        let flags = rustix::fs::fcntl_getfl(&fd).map_err(|e| named("opening", &name, e.into()))?;
        let acc = flags & rustix::fs::OFlags::RWMODE;
        let can_read = acc == rustix::fs::OFlags::RDONLY || acc == rustix::fs::OFlags::RDWR;
        let can_write = acc == rustix::fs::OFlags::WRONLY || acc == rustix::fs::OFlags::RDWR;
        let append = flags.contains(rustix::fs::OFlags::APPEND);
        let file = File::from(fd);
        let info = fileio::fd_info(file.as_fd()).map_err(|e| named("opening", &name, e))?;
        if info.dir {
            return Err(named("opening", &name, errno(libc::EISDIR)));
        }
        // A regular file is read and written from the descriptor's offset,
        // which is put back where the stream stopped when it closes.
        let start = if info.regular && want != Backend::Sequential {
            fileio::tell(file.as_fd()).map_err(|e| named("opening", &name, e))?
        } else {
            0
        };
        let io = backend::choose(file, info, want, (can_read, can_write), true, true);
        let mut inner = Inner::new(io, name, can_read, can_write, append);
        inner.pos = start;
        Ok(Stream::from_inner(inner))
    }

    fn std_stream(fd: std::os::fd::BorrowedFd<'_>, name: &str) -> io::Result<Stream> {
        let name: Arc<str> = name.into();
        let dup = fd
            .try_clone_to_owned()
            .map_err(|e| named("opening", &name, e))?;
        Stream::from_fd_named(dup, name)
    }

    /// A stream reading standard input (a duplicate of descriptor 0).
    pub fn stdin() -> io::Result<Stream> {
        Stream::std_stream(io::stdin().as_fd(), "standard input")
    }

    /// A stream writing standard output (a duplicate of descriptor 1).
    pub fn stdout() -> io::Result<Stream> {
        Stream::std_stream(io::stdout().as_fd(), "standard output")
    }

    /// A stream writing standard error (a duplicate of descriptor 2).
    pub fn stderr() -> io::Result<Stream> {
        Stream::std_stream(io::stderr().as_fd(), "standard error")
    }

    /// An empty read-write stream in memory (like `open_memstream`).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// let mut s = ferry::Stream::memory();
    /// write!(s, "{}+{}", 1, 2)?;
    /// assert_eq!(s.into_vec()?, b"1+2");
    /// # Ok(()) }
    /// ```
    pub fn memory() -> Stream {
        Stream::from_bytes(Vec::new())
    }

    /// A read-write stream over `bytes`, offset 0 (like `fmemopen`).
    pub fn from_bytes(bytes: Vec<u8>) -> Stream {
        Stream::from_inner(Inner::new(
            Io::Memory(Memory { data: bytes }),
            "<memory>".into(),
            true,
            true,
            false,
        ))
    }

    /// Flushes a memory stream and borrows its bytes (`InvalidInput` for
    /// other streams): what `open_memstream` publishes at each flush.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// let mut s = ferry::Stream::memory();
    /// s.write_all(b"so far")?;
    /// assert_eq!(s.memory_contents()?, b"so far");
    /// s.write_all(b", more")?;
    /// assert_eq!(s.into_vec()?, b"so far, more");
    /// # Ok(()) }
    /// ```
    pub fn memory_contents(&mut self) -> io::Result<&[u8]> {
        let inner = self.inner.get_mut();
        inner.flush()?;
        match inner.io.memory() {
            Some(data) => Ok(data),
            None => Err(named(
                "taking the bytes of",
                &inner.name,
                io::Error::new(io::ErrorKind::InvalidInput, "not a memory stream"),
            )),
        }
    }

    /// Flushes a memory stream and returns its bytes (`InvalidInput` for
    /// other streams).
    pub fn into_vec(mut self) -> io::Result<Vec<u8>> {
        let inner = self.inner.get_mut();
        inner.finish()?;
        match inner.io.memory() {
            Some(data) => Ok(std::mem::take(data)),
            None => Err(named(
                "taking the bytes of",
                &inner.name,
                io::Error::new(io::ErrorKind::InvalidInput, "not a memory stream"),
            )),
        }
    }
}
