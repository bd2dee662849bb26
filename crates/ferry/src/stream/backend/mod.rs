//! Stream modules (the Alloc Stream Facility's term): where a stream's
//! bytes come from and go to. The engine (`super::engine`) keeps the
//! buffers, leases and write queue; a module only moves bytes, through
//! [`Module`]. [`choose`] is the one place a module is picked.
//!
//! | module | descriptor | reads | writes |
//! |---|---|---|---|
//! | [`Mapped`] | read-only local regular file | mapped windows | — |
//! | [`Buffered`] | regular file | `pread` into pool buffers | `pwrite` |
//! | [`Sequential`] | pipe, socket, tty, device (or asked for) | `read` | `write` |
//! | [`Memory`] | none (`fmemopen`, `open_memstream`) | copy | copy |
//! | [`UpgradedReader`] | a pipe whose ferry writer upgraded it | the writer's pool slots, in place | — |
//! | [`UpgradedWriter`] | a pipe offered to a ferry reader | — | copied into the pool (if taken by the first write), else `write` |

mod buffered;
mod mapped;
mod memory;
mod sequential;
mod upgraded;

pub(crate) use buffered::Buffered;
pub(crate) use mapped::Mapped;
pub(crate) use memory::Memory;
pub(crate) use sequential::Sequential;
pub(crate) use upgraded::{UpgradedReader, UpgradedWriter};

use crate::sys::fileio::FdInfo;
use crate::Buf;
use std::fs::File;
use std::io;
use std::mem::MaybeUninit;

/// Which stream module moves the bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Backend {
    /// Chosen by descriptor and file-system type:
    /// read-only regular files on local file systems are mapped if ferry
    /// can hold a read lease on them (see [`Backend::Mapped`]), or
    /// without one if asked ([`OpenOptions::without_lease`](crate::OpenOptions::without_lease)); files that
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
    /// [`OpenOptions::backend`](crate::OpenOptions::backend).
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

/// A mapped window of a file ([`Module::window`]).
pub(crate) struct Window {
    /// The file's bytes at the asked offset (empty at or past its end).
    pub buf: Buf,
    /// The window reaches the end of the file.
    pub eof: bool,
}

/// What every stream module does. Offsets are the stream's; sequential
/// modules ignore them.
pub(crate) trait Module {
    /// True if the module reads and writes at any offset (not a pipe).
    fn positional(&self) -> bool;

    /// The current length of what the module reads (0 if unknown).
    fn size(&self) -> io::Result<u64>;

    /// Reads at `off` (or next); 0 at end of file.
    fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<usize>;

    /// [`Module::read`] into memory not yet initialized: the first `n`
    /// bytes of `buf` are initialized when it returns `Ok(n)`.
    fn read_uninit(&mut self, off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize>;

    /// Writes all of `bytes` at `off` (`None`: at the end, append mode) or
    /// next. Returns the bytes written and the error that stopped it.
    fn write(&mut self, off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>);

    /// Makes written bytes durable.
    fn sync(&mut self) -> io::Result<()> {
        Ok(())
    }

    /// Called once when the stream closes, with the stream's offset.
    fn finish(&mut self, _pos: u64) -> io::Result<()> {
        Ok(())
    }

    /// True if the module reads and writes at positions over a descriptor
    /// others may share, whose own offset it must hand over (POSIX 2.5.1:
    /// after `fflush`, `fseek` and `fclose` the open file description's
    /// offset is the stream's position). False for sequential and memory
    /// modules and for files the stream opened itself.
    fn shares_offset(&self) -> bool {
        false
    }

    /// Puts the descriptor's own offset at `pos` (modules that
    /// [`Module::shares_offset`]).
    fn hand_over(&mut self, _pos: u64) -> io::Result<()> {
        Ok(())
    }

    /// The descriptor's own offset, where a stream that handed it over
    /// goes on from (another handle may have moved it since).
    fn take_back(&mut self) -> io::Result<u64> {
        Err(io::ErrorKind::Unsupported.into())
    }

    /// The descriptor, if there is one.
    fn raw_fd(&self) -> Option<i32> {
        None
    }

    /// From now on writes may raise SIGPIPE and SIGXFSZ, as `write(2)`
    /// does (C stdio's behaviour: a program writing to a pipe whose reader
    /// has gone dies of SIGPIPE unless it ignores or handles it), instead
    /// of the guarded writes that only fail with EPIPE or EFBIG.
    fn raise_signals(&mut self) {}

    /// Sets the capacity of the pipe the module reads or writes.
    fn set_pipe_size(&self, _bytes: usize) -> io::Result<usize> {
        Err(io::Error::new(io::ErrorKind::InvalidInput, "not a pipe"))
    }

    /// The mapped module's read: a window of the file at `pos` holding at
    /// least `min` bytes unless the file ends first. `None` for modules
    /// that read into buffers.
    fn window(&mut self, _pos: u64, _min: usize) -> Option<io::Result<Window>> {
        None
    }
}

/// The stream's module.
pub(crate) enum Io {
    Mapped(Mapped),
    Buffered(Buffered),
    Sequential(Sequential),
    Memory(Memory),
    UpgradedReader(UpgradedReader),
    UpgradedWriter(UpgradedWriter),
}

macro_rules! each {
    ($io:expr, $m:ident => $e:expr) => {
        match $io {
            Io::Mapped($m) => $e,
            Io::Buffered($m) => $e,
            Io::Sequential($m) => $e,
            Io::Memory($m) => $e,
            Io::UpgradedReader($m) => $e,
            Io::UpgradedWriter($m) => $e,
        }
    };
}

impl Module for Io {
    #[inline]
    fn positional(&self) -> bool {
        each!(self, m => m.positional())
    }

    fn size(&self) -> io::Result<u64> {
        each!(self, m => m.size())
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<usize> {
        each!(self, m => m.read(off, buf))
    }

    fn read_uninit(&mut self, off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        each!(self, m => m.read_uninit(off, buf))
    }

    fn write(&mut self, off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>) {
        each!(self, m => m.write(off, bytes))
    }

    fn sync(&mut self) -> io::Result<()> {
        each!(self, m => m.sync())
    }

    fn finish(&mut self, pos: u64) -> io::Result<()> {
        each!(self, m => m.finish(pos))
    }

    fn shares_offset(&self) -> bool {
        each!(self, m => m.shares_offset())
    }

    fn hand_over(&mut self, pos: u64) -> io::Result<()> {
        each!(self, m => m.hand_over(pos))
    }

    fn take_back(&mut self) -> io::Result<u64> {
        each!(self, m => m.take_back())
    }

    fn raw_fd(&self) -> Option<i32> {
        each!(self, m => m.raw_fd())
    }

    fn raise_signals(&mut self) {
        each!(self, m => m.raise_signals())
    }

    fn set_pipe_size(&self, bytes: usize) -> io::Result<usize> {
        each!(self, m => m.set_pipe_size(bytes))
    }

    fn window(&mut self, pos: u64, min: usize) -> Option<io::Result<Window>> {
        each!(self, m => m.window(pos, min))
    }
}

impl Io {
    /// True while reads come from mapped windows (the mapped module, until
    /// a writer that broke its lease keeps the file open).
    #[inline]
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self, Io::Mapped(m) if m.is_live())
    }

    /// Whether the bytes come through an ipc channel now (a pipe upgraded
    /// between two ferry programs).
    pub(crate) fn on_channel(&self) -> bool {
        match self {
            Io::UpgradedReader(r) => r.on_channel(),
            Io::UpgradedWriter(w) => w.on_channel(),
            _ => false,
        }
    }

    /// A reader on an ipc channel reads no more: the writer is told.
    pub(crate) fn leave_channel(&mut self) {
        if let Io::UpgradedReader(r) = self {
            r.leave_channel();
        }
    }

    /// The bytes of a memory stream.
    pub(crate) fn memory(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            Io::Memory(m) => Some(&mut m.data),
            _ => None,
        }
    }
}

/// Picks the module for a descriptor: the one place the choice is made.
///
/// Mapping serves read-only regular files on local file systems, of 1 MiB
/// or more unless asked (measured
/// faster than reading into buffers for a sequential scan here:
/// docs/BENCHMARKS.md); network and FUSE file systems and streams that also
/// write get buffers; pipes, sockets and terminals (and any descriptor with
/// `Backend::Sequential`) are read and written in order. `restore`: the
/// descriptor came from the caller and may be shared, so the positional
/// modules put its offset at the stream's position at every hand-over
/// (flush, seek, close: [`Module::hand_over`]) and go on from its offset
/// after one ([`Module::take_back`]). `leased`: a mapped file is mapped
/// under a read lease, and buffered where none can be had; otherwise it is
/// mapped without one (`OpenOptions::without_lease`, whose caller took on
/// what that means).
/// The size from which `Backend::Auto` maps a read-only local file.
pub(crate) const MAP_FROM: u64 = mapped::MAP_WINDOW_FIRST as u64;

pub(crate) fn choose(
    file: File,
    info: FdInfo,
    want: Backend,
    (can_read, can_write): (bool, bool),
    restore: bool,
    leased: bool,
) -> Io {
    if !info.regular || want == Backend::Sequential {
        return Io::Sequential(Sequential::new(file, info));
    }
    let map = can_read
        && !can_write
        && match want {
            Backend::Mapped => true,
            // A file smaller than the first window is one `pread` into a
            // pool buffer: taking a lease for it (a reopen, four `fcntl`s)
            // would cost more than mapping saves (measured: 0.26 ms more to
            // start `ferry wc` on a small file).
            Backend::Auto => !info.remote && info.size >= MAP_FROM,
            Backend::Buffered | Backend::Sequential => false,
        };
    if map && !leased {
        return Io::Mapped(Mapped::unleased(Buffered::new(file, info, restore)));
    }
    // Mapped only under a read lease (windows never change while lent);
    // where none can be had, buffered.
    let lease = if map {
        crate::MappedFile::open(&file).ok()
    } else {
        None
    };
    let b = Buffered::new(file, info, restore);
    match lease {
        Some(lease) => Io::Mapped(Mapped::new(b, lease)),
        None => Io::Buffered(b),
    }
}
