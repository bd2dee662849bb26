//! Making streams: files, descriptors, the standard streams, memory.

use super::error::{errno, named};
use super::options::{Backend, OpenOptions};
use super::source::Source;
use super::state::Inner;
use super::Stream;
use crate::sys::fileio;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;

/// What a stream writing a pipe asks the kernel to make its capacity.
const PIPE_SIZE: usize = 1 << 20;
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
        let info = fileio::fd_info(file.as_fd()).map_err(|e| named("opening", &name, e))?;
        if info.dir {
            return Err(named("opening", &name, errno(libc::EISDIR)));
        }
        let backend = match Backend::from_env().map_err(|e| named("opening", &name, e))? {
            Some(b) if opts.backend == Backend::Auto => b,
            _ => opts.backend,
        };
        // Mapping serves read-only local files (measured faster than reading
        // into buffers for a sequential scan here: docs/BENCHMARKS.md);
        // network and FUSE file systems, and streams that also write, get
        // buffers. `set_mapped` maps only under a read lease, and leaves
        // the stream buffered if none can be had (Backend::Mapped too).
        let map = info.regular
            && !opts.is_write()
            && match backend {
                Backend::Mapped => true,
                Backend::Buffered | Backend::Sequential => false,
                Backend::Auto => !info.remote,
            };
        let src = if info.regular && backend != Backend::Sequential {
            Source::File {
                file,
                info,
                restore: false,
            }
        } else {
            Source::Seq { file, info }
        };
        let mut inner = Inner::new(src, name, opts.read, opts.is_write(), opts.append);
        if let Some(n) = opts.buffer_size {
            inner.set_bufsize(n);
        }
        if map {
            inner.set_mapped();
        }
        Ok(Stream::from_inner(inner))
    }

    /// A stream over a descriptor the caller hands over (closed with the
    /// stream). Regular files are read and written at the descriptor's
    /// current offset, and the descriptor's offset is left where the stream
    /// stopped, so a parent process sees what was consumed.
    pub fn from_fd(fd: OwnedFd) -> io::Result<Stream> {
        use std::os::fd::AsRawFd;
        let name: Arc<str> = format!("fd {}", fd.as_raw_fd()).into();
        Stream::from_fd_named(fd, name)
    }

    /// [`Stream::from_fd`], choosing the backend as [`Stream::open`] does:
    /// with `Backend::Auto` (or `Mapped`) a read-only descriptor of a local
    /// regular file is mapped. `name` names the stream in errors.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::{stream::Backend, Stream};
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("f"), b"mapped")?;
    /// let fd = std::fs::File::open(dir.path().join("f"))?.into();
    /// let s = Stream::from_fd_with(fd, "f", Backend::Auto)?;
    /// assert!(s.is_mapped());
    /// assert_eq!(&s.salloc(6)?[..], b"mapped");
    /// # Ok(()) }
    /// ```
    pub fn from_fd_with(fd: OwnedFd, name: &str, backend: Backend) -> io::Result<Stream> {
        let name: Arc<str> = name.into();
        let backend = match Backend::from_env().map_err(|e| named("opening", &name, e))? {
            Some(b) if backend == Backend::Auto => b,
            _ => backend,
        };
        let mut s = Stream::from_fd_inner(fd, name, backend == Backend::Sequential)?;
        {
            let i = s.inner.get_mut();
            let map = i.can_read
                && !i.can_write
                && match &i.src {
                    Source::File { info, .. } => match backend {
                        Backend::Mapped => info.regular,
                        Backend::Buffered | Backend::Sequential => false,
                        Backend::Auto => info.regular && !info.remote,
                    },
                    _ => false,
                };
            if map {
                i.set_mapped();
            }
        }
        Ok(s)
    }

    pub(crate) fn from_fd_named(fd: OwnedFd, name: Arc<str>) -> io::Result<Stream> {
        Stream::from_fd_inner(fd, name, false)
    }

    fn from_fd_inner(fd: OwnedFd, name: Arc<str>, seq: bool) -> io::Result<Stream> {
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
        let mut start = 0;
        let src = if info.regular && !seq {
            start = fileio::tell(file.as_fd()).map_err(|e| named("opening", &name, e))?;
            Source::File {
                file,
                info,
                restore: true,
            }
        } else {
            if can_write && info.write == fileio::WriteKind::Pipe {
                // Roadrunner's channel parameter, on today's kernel: a
                // writer's pipe grows to 1 MiB (best effort; capped by
                // /proc/sys/fs/pipe-max-size), so each write or splice
                // moves up to a megabyte instead of 64 KiB.
                let _ = rustix::pipe::fcntl_setpipe_size(&file, PIPE_SIZE);
            }
            Source::Seq { file, info }
        };
        let mut inner = Inner::new(src, name, can_read, can_write, append);
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
            Source::Memory { data: bytes },
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
        match &inner.src {
            Source::Memory { data } => Ok(data),
            _ => Err(named(
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
        match &mut inner.src {
            Source::Memory { data } => Ok(std::mem::take(data)),
            _ => Err(named(
                "taking the bytes of",
                &inner.name,
                io::Error::new(io::ErrorKind::InvalidInput, "not a memory stream"),
            )),
        }
    }
}
