//! What a transfer did ([`TransferStats`]) and how one failed
//! ([`TransferError`]).

use super::overlay::{Case, OverlayStats};
use std::fmt;
use std::io;

/// Which side of a transfer an error happened on: reading the input or
/// writing the output. Tools word their messages by it (GNU's `cat`
/// names the input file for a read error and says `write error` for the
/// other).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Reading the input.
    Read,
    /// Writing the output.
    Write,
}

/// How bytes went from input to output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `copy_file_range`: file to file inside the kernel (a clone, a
    /// server-side copy or a page-cache copy, as the file system can).
    CopyFileRange,
    /// `splice`: page references moved into or out of a pipe.
    Splice,
    /// `sendfile`: a regular file's pages to any output, inside the kernel.
    Sendfile,
    /// `pread` straight into a shared mapping of the output's page cache
    /// ([`read_into_file`](crate::read_into_file)): the second thread of a
    /// large file-to-file copy on ext4.
    Mapped,
    /// `read`/`write` (or `pread`/`pwrite`) through a page-aligned buffer
    /// in user space: the bytes are copied twice.
    ReadWrite,
}

impl Method {
    /// Every method, in the order [`TransferStats::bytes_by`] keeps them.
    pub const ALL: [Method; 5] = [
        Method::CopyFileRange,
        Method::Splice,
        Method::Sendfile,
        Method::Mapped,
        Method::ReadWrite,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

/// How bytes are being moved at one moment of a transfer: the paths
/// [`between`](super::between) switches among as its output keeps up or
/// stalls (Roadrunner's dynamic conditions, §5.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// The kernel moves the pages (`sendfile`); no buffer in user space.
    Kernel,
    /// Each input block goes through the overlay and straight out, by
    /// reference, as the static case says.
    Through,
    /// The output would block: input blocks are read ahead into cache
    /// buffers (within the transfer's share) and queued; when the output
    /// takes bytes again the queue goes out in gathered writes of several
    /// blocks at once (the paper's fall back to case 4, filling output
    /// transfers — by gathering, not copying).
    Buffered,
}

impl Path {
    /// Every path, in the order [`Switches`] keeps them.
    pub const ALL: [Path; 3] = [Path::Kernel, Path::Through, Path::Buffered];

    fn index(self) -> usize {
        self as usize
    }
}

/// The switches between [`Path`]s a transfer made.
///
/// ```
/// use ferry::transfer::{Path, Switches};
/// let s = Switches::default();
/// assert_eq!(s.count(), 0);
/// assert_eq!(s.between(Path::Through, Path::Buffered), 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Switches {
    pairs: [[u64; 3]; 3],
}

impl Switches {
    /// All switches.
    pub fn count(&self) -> u64 {
        self.pairs.iter().flatten().sum()
    }

    /// Switches from `from` to `to`.
    pub fn between(&self, from: Path, to: Path) -> u64 {
        self.pairs[from.index()][to.index()]
    }

    /// Each pair switched between, with its count.
    ///
    /// ```
    /// assert_eq!(ferry::transfer::Switches::default().iter().count(), 0);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = (Path, Path, u64)> + '_ {
        Path::ALL.into_iter().flat_map(move |a| {
            Path::ALL
                .into_iter()
                .map(move |b| (a, b, self.between(a, b)))
                .filter(|x| x.2 > 0)
        })
    }

    pub(super) fn record(&mut self, from: Path, to: Path) {
        self.pairs[from.index()][to.index()] += 1;
    }
}

/// System calls a transfer made, by kind (a call interrupted by a signal
/// and made again counts once).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Calls {
    /// `copy_file_range`.
    pub copy_file_range: u64,
    /// `splice`.
    pub splice: u64,
    /// `sendfile`.
    pub sendfile: u64,
    /// `read` and `pread`.
    pub read: u64,
    /// `write` and `pwrite`.
    pub write: u64,
    /// Pieces read into a mapping of the output ([`Method::Mapped`]): each
    /// an `mmap`, an `madvise`, one or more `pread`s and an `munmap`.
    pub mapped_fills: u64,
    /// Everything else: `fstat`, `lseek`, `fcntl`, `fstatfs`, `pipe2`,
    /// `fallocate`, `ftruncate`, `open` (thread creation not counted).
    pub other: u64,
}

impl Calls {
    fn add(&mut self, o: &Calls) {
        self.copy_file_range += o.copy_file_range;
        self.splice += o.splice;
        self.sendfile += o.sendfile;
        self.read += o.read;
        self.write += o.write;
        self.mapped_fills += o.mapped_fills;
        self.other += o.other;
    }
}

/// What a transfer did: bytes moved, by which [`Method`], and the system
/// calls it took.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::transfer::{self, Method, TransferOptions};
/// use std::io::Write;
/// let mut input = tempfile::tempfile()?;
/// input.write_all(&[7u8; 100_000])?;
/// std::io::Seek::rewind(&mut input)?;
/// let (r, w) = std::io::pipe()?;
/// let reader = std::thread::spawn(move || {
///     let mut all = Vec::new();
///     std::io::Read::read_to_end(&mut &r, &mut all).map(|_| all)
/// });
/// let st = transfer::copy(&input, &w, &TransferOptions::new())?;
/// drop(w);
/// assert_eq!(reader.join().unwrap()?.len(), 100_000);
/// assert_eq!(st.bytes, 100_000);
/// assert_eq!(st.bytes_by(Method::Splice), 100_000);
/// assert_eq!(st.user_copied(), 0);
/// assert!(st.calls.splice >= 2);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TransferStats {
    /// Bytes that arrived at the output: for [`copy`](super::copy), all
    /// written at its offset; for [`copy_range`](super::copy_range), those
    /// from the start of the range without a gap. On failure, those known
    /// to have arrived.
    pub bytes: u64,
    /// The system calls made.
    pub calls: Calls,
    /// The streaming case the two channels' parameters made
    /// ([`between`](super::between); `None` for [`copy`](super::copy) and
    /// [`copy_range`](super::copy_range), which are given descriptors, not
    /// endpoints).
    pub case: Option<Case>,
    /// What the overlay did, where [`between`](super::between) went through
    /// it (blocks, bytes copied to make blocks contiguous, padding).
    pub overlay: Option<OverlayStats>,
    /// Switches between paths as the output stalled and caught up
    /// ([`between`](super::between) into an output that can say it would
    /// block).
    pub switches: Switches,
    /// The most bytes of cache buffers the transfer held at once (read
    /// from the input, not yet all at the output).
    pub peak_buffer_bytes: u64,
    /// Times reading ahead stopped because the transfer held its share of
    /// the cache ([`cache`](super::cache)'s domination rule).
    pub share_waits: u64,
    /// Bytes ferry copied from one buffer in user space to another
    /// (`memcpy`): the overlay's copies that make a block contiguous
    /// ([`OverlayStats::bytes_copied`]) and blocks copied into a
    /// [`Stream`](crate::Stream) sink's buffers. 0 where every block went
    /// by reference.
    pub memcpy_bytes: u64,
    by_method: [u64; 5],
    finished_by: Option<Method>,
}

impl TransferStats {
    /// Bytes moved by `m`. Their sum can exceed [`bytes`](Self::bytes)
    /// where a range copy found its input shorter than the range and
    /// counts only what reached its output without a gap.
    ///
    /// ```
    /// let st = ferry::transfer::TransferStats::default();
    /// assert_eq!(st.bytes_by(ferry::transfer::Method::Splice), 0);
    /// ```
    pub fn bytes_by(&self, m: Method) -> u64 {
        self.by_method[m.index()]
    }

    /// Bytes that passed through a buffer in user space ([`Method::ReadWrite`]);
    /// every other method leaves them in the kernel.
    ///
    /// ```
    /// assert_eq!(ferry::transfer::TransferStats::default().user_copied(), 0);
    /// ```
    pub fn user_copied(&self) -> u64 {
        self.bytes_by(Method::ReadWrite)
    }

    /// The methods that moved bytes, in [`Method::ALL`]'s order.
    ///
    /// ```
    /// assert_eq!(ferry::transfer::TransferStats::default().methods().count(), 0);
    /// ```
    pub fn methods(&self) -> impl Iterator<Item = Method> + '_ {
        Method::ALL.into_iter().filter(|&m| self.bytes_by(m) > 0)
    }

    /// The method that met the end of the input (`None` if the transfer
    /// failed, or for a range copy, which stops at the range's end): the
    /// path an empty input was sent down, too.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::transfer::{self, Method, TransferOptions};
    /// let (input, output) = (tempfile::tempfile()?, tempfile::tempfile()?);
    /// let st = transfer::copy(&input, &output, &TransferOptions::new())?;
    /// assert_eq!(st.finished_by(), Some(Method::CopyFileRange));
    /// # Ok(()) }
    /// ```
    pub fn finished_by(&self) -> Option<Method> {
        self.finished_by
    }

    /// `n` more bytes moved by `m`, arrived at the output.
    #[inline]
    pub(super) fn moved(&mut self, m: Method, n: usize) {
        self.bytes += n as u64;
        self.by_method[m.index()] += n as u64;
    }

    pub(super) fn finish(&mut self, m: Method) {
        self.finished_by = Some(m);
    }

    /// Adds another thread's counts (its bytes too: the caller sets
    /// `bytes` where only bytes without a gap count).
    pub(super) fn absorb(&mut self, o: &TransferStats) {
        self.bytes += o.bytes;
        for (a, b) in self.by_method.iter_mut().zip(o.by_method) {
            *a += b;
        }
        self.calls.add(&o.calls);
    }
}

/// A failed transfer: the error, the side it happened on, and what was
/// done before it.
///
/// It converts into the [`io::Error`] it carries (`?` in a function
/// returning `io::Result` keeps the OS error code).
///
/// ```
/// use ferry::transfer::{self, Side, TransferOptions};
/// let input = tempfile::tempfile().unwrap();
/// std::io::Write::write_all(&mut &input, &[1u8; 10_000]).unwrap();
/// std::io::Seek::rewind(&mut &input).unwrap();
/// let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
/// let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
/// assert_eq!(e.side(), Side::Write);
/// assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
/// assert_eq!(e.bytes(), 0);
/// let io: std::io::Error = e.into();
/// assert_eq!(io.raw_os_error(), Some(libc::ENOSPC));
/// ```
#[derive(Debug)]
pub struct TransferError {
    side: Side,
    error: io::Error,
    /// Boxed: errors are rare, and a small `Err` keeps every `Result`
    /// of a transfer small.
    stats: Box<TransferStats>,
}

impl TransferError {
    pub(super) fn new(side: Side, error: io::Error, stats: TransferStats) -> TransferError {
        crate::error::register::<TransferError>();
        TransferError {
            side,
            error,
            stats: Box::new(stats),
        }
    }

    /// The same error, its stats naming the streaming case.
    pub(super) fn with_case(mut self, case: Case) -> TransferError {
        self.stats.case = Some(case);
        self
    }

    /// The side the error happened on.
    ///
    /// ```
    /// # use ferry::transfer::{self, Side, TransferOptions};
    /// # let input = tempfile::tempfile().unwrap();
    /// # std::io::Write::write_all(&mut &input, b"abc").unwrap();
    /// # std::io::Seek::rewind(&mut &input).unwrap();
    /// # let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    /// let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
    /// assert_eq!(e.side(), Side::Write);
    /// ```
    pub fn side(&self) -> Side {
        self.side
    }

    /// The error.
    ///
    /// ```
    /// # use ferry::transfer::{self, TransferOptions};
    /// # let input = tempfile::tempfile().unwrap();
    /// # std::io::Write::write_all(&mut &input, b"abc").unwrap();
    /// # std::io::Seek::rewind(&mut &input).unwrap();
    /// # let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    /// let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
    /// assert!(e.io_error().raw_os_error().is_some());
    /// ```
    pub fn io_error(&self) -> &io::Error {
        &self.error
    }

    /// The OS error code, if the error is one (also behind a stream's
    /// error naming its file, as a [`Stream`](crate::Stream) endpoint
    /// reports one).
    ///
    /// ```
    /// # use ferry::transfer::{self, TransferOptions};
    /// # let input = tempfile::tempfile().unwrap();
    /// # std::io::Write::write_all(&mut &input, b"abc").unwrap();
    /// # std::io::Seek::rewind(&mut &input).unwrap();
    /// # let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    /// let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
    /// assert_eq!(e.raw_os_error(), Some(libc::ENOSPC));
    /// ```
    pub fn raw_os_error(&self) -> Option<i32> {
        crate::error::os_error(&self.error)
    }

    /// Bytes known to have arrived at the output before the error.
    ///
    /// ```
    /// # use ferry::transfer::{self, TransferOptions};
    /// # let input = tempfile::tempfile().unwrap();
    /// # std::io::Write::write_all(&mut &input, b"abc").unwrap();
    /// # std::io::Seek::rewind(&mut &input).unwrap();
    /// # let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    /// let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
    /// assert_eq!(e.bytes(), 0);
    /// ```
    pub fn bytes(&self) -> u64 {
        self.stats.bytes
    }

    /// What the transfer did before the error.
    ///
    /// ```
    /// # use ferry::transfer::{self, TransferOptions};
    /// # let input = tempfile::tempfile().unwrap();
    /// # std::io::Write::write_all(&mut &input, b"abc").unwrap();
    /// # std::io::Seek::rewind(&mut &input).unwrap();
    /// # let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    /// let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
    /// assert_eq!(e.stats().finished_by(), None);
    /// ```
    pub fn stats(&self) -> &TransferStats {
        &self.stats
    }

    /// The side and the error, for callers that word their own message.
    ///
    /// ```
    /// # use ferry::transfer::{self, Side, TransferOptions};
    /// # let input = tempfile::tempfile().unwrap();
    /// # std::io::Write::write_all(&mut &input, b"abc").unwrap();
    /// # std::io::Seek::rewind(&mut &input).unwrap();
    /// # let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    /// let e = transfer::copy(&input, &full, &TransferOptions::new()).unwrap_err();
    /// let (side, e) = e.into_parts();
    /// assert_eq!((side, e.raw_os_error()), (Side::Write, Some(libc::ENOSPC)));
    /// ```
    pub fn into_parts(self) -> (Side, io::Error) {
        (self.side, self.error)
    }
}

impl fmt::Display for TransferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = match self.side {
            Side::Read => "reading the input",
            Side::Write => "writing the output",
        };
        write!(f, "{side}: {}", self.error)
    }
}

impl crate::error::CarriesOsError for TransferError {
    fn os_error(&self) -> Option<i32> {
        crate::error::os_error(&self.error)
    }
}

impl std::error::Error for TransferError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

impl From<TransferError> for io::Error {
    fn from(e: TransferError) -> io::Error {
        e.error
    }
}
