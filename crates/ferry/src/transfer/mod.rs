//! The transfer engine: a whole input moved to an output the fastest
//! correct way the kernel offers, with no byte passing through user space
//! where it can be helped (Roadrunner's streaming cases, on Linux's
//! fast paths).
//!
//! ```text
//!  input  → output      path, first that applies            fallback
//!  file   → file        copy_file_range (two threads from    sendfile, then
//!                       PARALLEL_MIN: on ext4 one copying,   read/write
//!                       one reading into the output's
//!                       mapped pages; elsewhere two halves)
//!  file   → pipe        splice through a private pipe        splice, sendfile,
//!                       (file → own pipe → output)           read/write
//!  any    → pipe        splice (into the pipe)               read/write
//!  file   → socket/any  sendfile                             read/write
//!  pipe   → any         splice (out of the pipe)             read/write
//!  socket → any         splice through a private pipe        read/write
//!  other  → other       read/write through a page-aligned 128 KiB buffer
//! ```
//!
//! A path the kernel refuses for these descriptors (`EXDEV`, `EINVAL`,
//! `ENOSYS`, … before any byte moved) falls through to the next; once
//! bytes have moved, an error ends the transfer and says which [`Side`]
//! it came from and how many bytes arrived ([`TransferError`]).
//! [`TransferStats`] tells which [`Method`]s moved the bytes and the
//! system calls they took.
//!
//! * [`copy`]: from the input's offset to its end, written at the
//!   output's offset; both offsets move as `read`/`write` would move them.
//! * [`copy_range`]: a byte range of one regular file to an offset of
//!   another, neither offset moving (`cp`'s extent-by-extent copy).
//! * [`OrderedOut`]: a page-aligned buffered writer for output a program
//!   formats itself, with a holding mode for a second thread whose output
//!   must follow the first's.
//! * [`endpoint`] and [`overlay`]: Roadrunner's general data streaming —
//!   what each endpoint is and the channel parameters it declares, and
//!   input blocks laid over output blocks by reference from them;
//!   [`between`] switches [`Path`] as the output stalls and catches up.
//! * [`cache`]: the global buffer cache those blocks are read into,
//!   shared by concurrent transfers, each held to its share.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use ferry::transfer::{self, Method, TransferOptions};
//! use std::io::{Read, Seek, Write};
//! let mut input = tempfile::tempfile()?;
//! input.write_all(b"hello, transfer")?;
//! input.rewind()?;
//! let mut output = tempfile::tempfile()?;
//! let st = transfer::copy(&input, &output, &TransferOptions::new())?;
//! assert_eq!(st.bytes, 15);
//! assert_eq!(st.user_copied(), 0); // copy_file_range: none in user space
//! assert_eq!(st.bytes_by(Method::CopyFileRange), 15);
//! output.rewind()?;
//! let mut back = String::new();
//! output.read_to_string(&mut back)?;
//! assert_eq!(back, "hello, transfer");
//! # Ok(()) }
//! ```
//!
//! Signals: by default a transfer into a pipe or socket whose reader has
//! gone fails with `EPIPE` instead of killing the process with SIGPIPE,
//! and one past `RLIMIT_FSIZE` fails with `EFBIG` instead of SIGXFSZ (the
//! signal is blocked in the calling thread for the call, as ferry's
//! streams do). [`TransferOptions::leave_signals`] turns that off for
//! programs that set their own dispositions (ferry's tools ignore SIGPIPE
//! and let SIGXFSZ end them, as GNU's do).

mod between;
pub mod cache;
pub mod endpoint;
mod flow;
mod kernel;
pub(crate) mod lend;
mod out;
pub mod overlay;
mod range;
pub mod send;
mod shared;
mod sink;
mod source;
mod split;
mod stats;
#[cfg(test)]
mod tests;
pub mod zerocopy;

pub use between::between;
pub use out::{write_all, OrderedOut};
pub use stats::{Calls, Method, Path, Side, Switches, TransferError, TransferStats};

use crate::sys::sigguard::SignalGuard;
use crate::sys::transfer as sys;
use std::io;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd};

/// A write that failed after `st.bytes` arrived at the output, reported
/// as the engine reports its own ([`TransferError`], [`Side::Write`]): for
/// the interfaces above the engine that write owned buffers
/// ([`exchange::write_buf`](crate::exchange::write_buf)).
pub(crate) fn write_failed(error: io::Error, st: TransferStats) -> TransferError {
    TransferError::new(Side::Write, error, st)
}

/// Ranges of this many bytes or more are copied file to file by two
/// threads (the default of [`TransferOptions::parallel_min`]).
pub const PARALLEL_MIN: u64 = 64 << 20;

/// What a descriptor is, as far as choosing a path goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FdKind {
    /// A regular file.
    Regular,
    /// A pipe or FIFO.
    Pipe,
    /// A socket.
    Socket,
    /// Anything else: a terminal, a device, a directory.
    Other,
}

impl FdKind {
    /// The kind of an open descriptor (one `fstat`).
    ///
    /// ```
    /// use ferry::transfer::FdKind;
    /// let (r, _w) = std::io::pipe().unwrap();
    /// assert_eq!(FdKind::of(&r).unwrap(), FdKind::Pipe);
    /// assert_eq!(FdKind::of(tempfile::tempfile().unwrap()).unwrap(), FdKind::Regular);
    /// ```
    pub fn of(fd: impl AsFd) -> io::Result<FdKind> {
        Ok(FdKind::from_mode(sys::meta(fd.as_fd())?.mode))
    }

    /// The kind an `st_mode` (from a `stat` the caller made anyway) names.
    ///
    /// ```
    /// use ferry::transfer::FdKind;
    /// assert_eq!(FdKind::from_mode(libc::S_IFIFO | 0o600), FdKind::Pipe);
    /// assert_eq!(FdKind::from_mode(libc::S_IFREG | 0o644), FdKind::Regular);
    /// assert_eq!(FdKind::from_mode(libc::S_IFCHR), FdKind::Other);
    /// ```
    pub fn from_mode(mode: u32) -> FdKind {
        match sys::mode_type(mode) {
            sys::ModeType::Regular => FdKind::Regular,
            sys::ModeType::Fifo => FdKind::Pipe,
            sys::ModeType::Socket => FdKind::Socket,
            sys::ModeType::Other => FdKind::Other,
        }
    }
}

/// How a transfer is made. [`TransferOptions::new`] (the default) finds
/// the descriptors' kinds itself, splits file copies from
/// [`PARALLEL_MIN`] bytes, guards against SIGPIPE and SIGXFSZ and reports
/// no progress.
///
/// ```
/// use ferry::transfer::{FdKind, TransferOptions};
/// let seen = std::sync::atomic::AtomicU64::new(0);
/// let progress = |n: u64| {
///     seen.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
/// };
/// let opts = TransferOptions::new()
///     .with_kinds(FdKind::Regular, FdKind::Pipe)
///     .parallel_min(1 << 30)
///     .progress(&progress);
/// # let _ = opts;
/// ```
#[derive(Clone, Copy)]
pub struct TransferOptions<'a> {
    kinds: Option<(FdKind, FdKind)>,
    parallel_min: u64,
    guard_signals: bool,
    progress: Option<&'a (dyn Fn(u64) + Sync)>,
    /// [`between`]: a fixed output's last block padded with this byte.
    pad: Option<u8>,
    /// [`between`]: the buffer cache to read into (`None`: the global one).
    cache: Option<&'a cache::BufferCache>,
    /// [`between`]: switch to buffering while the output stalls.
    switching: bool,
}

impl Default for TransferOptions<'_> {
    fn default() -> Self {
        TransferOptions {
            kinds: None,
            parallel_min: PARALLEL_MIN,
            guard_signals: true,
            progress: None,
            pad: None,
            cache: None,
            switching: true,
        }
    }
}

impl std::fmt::Debug for TransferOptions<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TransferOptions")
            .field("kinds", &self.kinds)
            .field("parallel_min", &self.parallel_min)
            .field("guard_signals", &self.guard_signals)
            .field("progress", &self.progress.is_some())
            .field("pad", &self.pad)
            .field("cache", &self.cache.is_some())
            .field("switching", &self.switching)
            .finish()
    }
}

impl<'a> TransferOptions<'a> {
    /// The defaults.
    ///
    /// ```
    /// let o = ferry::transfer::TransferOptions::new();
    /// assert!(format!("{o:?}").contains("parallel_min: 67108864"));
    /// ```
    pub fn new() -> Self {
        Self::default()
    }

    /// For [`between`] into a fixed-block output: the last block, if the
    /// input ends inside one, is filled up with `byte` (a device that takes
    /// whole blocks only). Without it the last block goes out short.
    ///
    /// ```
    /// let o = ferry::transfer::TransferOptions::new().pad_last(0);
    /// assert!(format!("{o:?}").contains("pad: Some(0)"));
    /// ```
    pub fn pad_last(mut self, byte: u8) -> Self {
        self.pad = Some(byte);
        self
    }

    /// For [`between`]: read into buffers of `cache` instead of the
    /// process-wide [`BufferCache::global`](cache::BufferCache::global),
    /// sharing its budget with the other transfers that use it, each held
    /// to its share.
    ///
    /// ```
    /// use ferry::transfer::cache::{BufferCache, Share};
    /// let pool = ferry::Pool::new(ferry::PoolConfig::default().with_budget(4 << 20)).unwrap();
    /// let cache = BufferCache::new(pool, Share::default());
    /// let o = ferry::transfer::TransferOptions::new().cache(&cache);
    /// assert!(format!("{o:?}").contains("cache: true"));
    /// ```
    pub fn cache(mut self, cache: &'a cache::BufferCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// For [`between`] into an output that can say it would block: wait
    /// for it (`poll`) instead of switching to buffering — the input is
    /// then read no further ahead than one block while the output
    /// stalls. For comparisons; switching is the default.
    ///
    /// ```
    /// let o = ferry::transfer::TransferOptions::new().no_switching();
    /// assert!(format!("{o:?}").contains("switching: false"));
    /// ```
    pub fn no_switching(mut self) -> Self {
        self.switching = false;
        self
    }

    /// The kinds of the input and output descriptors, from a `stat` the
    /// caller made anyway: [`copy`] then makes no `fstat` of its own to
    /// choose a path. Wrong kinds cannot corrupt data (a path that does
    /// not apply is refused by the kernel), but may cost a fallback.
    ///
    /// ```
    /// use ferry::transfer::{FdKind, TransferOptions};
    /// let o = TransferOptions::new().with_kinds(FdKind::Regular, FdKind::Regular);
    /// # let _ = o;
    /// ```
    pub fn with_kinds(mut self, input: FdKind, output: FdKind) -> Self {
        self.kinds = Some((input, output));
        self
    }

    /// File-to-file copies of at least `bytes` are made by two threads
    /// ([`PARALLEL_MIN`] by default; `u64::MAX`: never).
    ///
    /// ```
    /// let o = ferry::transfer::TransferOptions::new().parallel_min(u64::MAX);
    /// # let _ = o;
    /// ```
    pub fn parallel_min(mut self, bytes: u64) -> Self {
        self.parallel_min = bytes;
        self
    }

    /// Leaves SIGPIPE and SIGXFSZ to the process's dispositions: a write
    /// into a pipe with no reader raises SIGPIPE (only `EPIPE` if the
    /// process ignores it), one past `RLIMIT_FSIZE` raises SIGXFSZ, as
    /// `write(2)` does. Saves the three system calls of blocking and
    /// restoring the signal around a transfer into a pipe or socket.
    ///
    /// ```
    /// let o = ferry::transfer::TransferOptions::new().leave_signals();
    /// # let _ = o;
    /// ```
    pub fn leave_signals(mut self) -> Self {
        self.guard_signals = false;
        self
    }

    /// `f` hears of every piece moved, with its length in bytes, from
    /// whichever thread moved it.
    ///
    /// ```
    /// let f = |_n: u64| {};
    /// let o = ferry::transfer::TransferOptions::new().progress(&f);
    /// # let _ = o;
    /// ```
    pub fn progress(mut self, f: &'a (dyn Fn(u64) + Sync)) -> Self {
        self.progress = Some(f);
        self
    }

    /// Records `n` bytes moved by `m` and tells the progress callback.
    #[inline]
    fn moved(&self, st: &mut TransferStats, m: Method, n: usize) {
        st.moved(m, n);
        if let Some(p) = self.progress {
            p(n as u64);
        }
    }
}

/// An error on one side, before it is given the stats.
type Fail = (Side, io::Error);

/// Copies everything from `input` (from its offset to its end) to
/// `output` (at its offset), by the first path of the module's table that
/// applies. Both offsets end past what was copied (a pipe or socket has
/// none). The input's end is where a read finds it, not the size a
/// `stat` gave: a file that grows or shrinks meanwhile is copied to the
/// end it has then. On failure the input's offset may stand past the
/// bytes that arrived (read, or spliced into the private pipe, before the
/// output refused them); [`TransferError::bytes`] says what arrived.
///
/// A regular file copied into itself is refused (`InvalidInput`, "input
/// file is output file", before anything is copied) unless its offset
/// stands at its end, as GNU cat refuses it: read to its end, it would
/// also read what the copy writes into it, without end in append mode.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::transfer::{self, Method, TransferOptions};
/// use std::io::{Read, Seek, Write};
/// let mut input = tempfile::tempfile()?;
/// input.write_all(&vec![b'x'; 300_000])?;
/// input.seek(std::io::SeekFrom::Start(100_000))?;
/// let (mut r, w) = std::io::pipe()?;
/// let reader = std::thread::spawn(move || {
///     let mut all = Vec::new();
///     r.read_to_end(&mut all).map(|_| all)
/// });
/// let st = transfer::copy(&input, &w, &TransferOptions::new())?;
/// drop(w);
/// assert_eq!(reader.join().unwrap()?.len(), 200_000);
/// assert_eq!((st.bytes, st.finished_by()), (200_000, Some(Method::Splice)));
/// assert_eq!(input.stream_position()?, 300_000);
/// # Ok(()) }
/// ```
pub fn copy(
    input: impl AsFd,
    output: impl AsFd,
    opts: &TransferOptions<'_>,
) -> Result<TransferStats, TransferError> {
    let (input, output) = (input.as_fd(), output.as_fd());
    let mut st = TransferStats::default();
    let kinds = match opts.kinds {
        Some(k) => Ok(k),
        None => kinds_of(input, output, &mut st),
    };
    let r = kinds.and_then(|(i, o)| {
        if (i, o) == (FdKind::Regular, FdKind::Regular) {
            st.calls.other += 2;
            same_file_refused(input, Reads::FromOffset, output, Writes::AtOffset)
                .map_err(|e| (Side::Write, e))?;
        }
        let mut guard = signal_guard(opts, o);
        let r = kernel::copy(input, i, output, o, opts, &mut st);
        if let (Some(g), Err((_, e))) = (guard.as_mut(), &r) {
            g.saw_io(e);
        }
        r
    });
    match r {
        Ok(()) => Ok(st),
        Err((side, e)) => Err(TransferError::new(side, e, st)),
    }
}

/// Copies bytes `range` of the regular file `input` to the regular file
/// `output` from offset `out_at`, with `copy_file_range` (by two threads
/// from [`TransferOptions::parallel_min`] bytes), or `pread`/`pwrite`
/// through a page-aligned buffer where the kernel will not. Neither file
/// offset moves. The output must be writable at those offsets (not in
/// append mode). Ranges of one file that overlap are refused
/// (`InvalidInput`, "input file is output file", before anything is
/// copied), as copy_file_range(2) refuses them. An output range reaching past the largest file offset
/// (`i64::MAX`) fails where the file system stops it, as a write there
/// would.
///
/// The returned [`bytes`](TransferStats::bytes) is fewer than the range's
/// length when the input ends inside it (it shrank under the copy): they
/// are the bytes copied without a gap from the range's start. A second
/// thread may have written bytes past them; cut the output there if it
/// must end with the input. On failure of a two-thread copy the output is
/// cut to the bytes copied without a gap.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::transfer::{self, TransferOptions};
/// use std::io::Write;
/// let mut input = tempfile::tempfile()?;
/// input.write_all(b"0123456789")?;
/// let output = tempfile::tempfile()?;
/// let st = transfer::copy_range(&input, &output, 2..20, 100, &TransferOptions::new())?;
/// assert_eq!(st.bytes, 8); // the input ends at 10
/// let mut back = [0u8; 8];
/// std::os::unix::fs::FileExt::read_exact_at(&output, &mut back, 100)?;
/// assert_eq!(&back, b"23456789");
/// # Ok(()) }
/// ```
pub fn copy_range(
    input: impl AsFd,
    output: impl AsFd,
    range: Range<u64>,
    out_at: u64,
    opts: &TransferOptions<'_>,
) -> Result<TransferStats, TransferError> {
    let (input, output) = (input.as_fd(), output.as_fd());
    let mut st = TransferStats::default();
    if range.end <= range.start {
        return Ok(st);
    }
    st.calls.other += 2;
    let reads = Reads::Range(range.start, range.end);
    if let Err(e) = same_file_refused(input, reads, output, Writes::At(out_at)) {
        return Err(TransferError::new(Side::Write, e, st));
    }
    let mut guard = signal_guard(opts, FdKind::Regular);
    let r = split::copy_split(
        input,
        output,
        (range.start, range.end),
        out_at,
        opts,
        &mut st,
    );
    match r {
        Ok(n) => {
            st.bytes = n;
            Ok(st)
        }
        Err((side, e)) => {
            if let Some(g) = guard.as_mut() {
                g.saw_io(&e);
            }
            Err(TransferError::new(side, e, st))
        }
    }
}

/// The bytes a copy reads, for [`same_file_refused`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Reads {
    /// This range of the input.
    Range(u64, u64),
    /// From this offset to wherever the input ends when the copy gets there.
    ToEnd(u64),
    /// From the input's offset to wherever it ends.
    FromOffset,
}

/// Where a copy writes, for [`same_file_refused`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Writes {
    /// From this offset.
    At(u64),
    /// At the output's offset, or at its end in append mode.
    AtOffset,
    /// From this offset, or at the output's end in append mode (a
    /// stream's position).
    AtOrAppended(u64),
}

/// `InvalidInput` ("input file is output file") when `input` and `output`
/// are one regular file and the bytes the copy reads meet the bytes it
/// writes: it would read back bytes it had already overwritten (a copy
/// forward a piece at a time, or two threads racing over them, reporting
/// success with the wrong bytes) or, reading to the end, the bytes it
/// appends — without end, until the disk is full (a 64 KiB file copied
/// into itself in append mode grew to 97 MB in 20 ms). copy_file_range(2)
/// refuses the overlapping case; GNU cat refuses a file that is its own
/// output unless it is read from its end. Bytes of one file copied to a
/// place that does not overlap them are fine. Two `fstat`s, and an
/// `lseek` or `fcntl` where an offset or the append flag decides.
pub(crate) fn same_file_refused(
    input: BorrowedFd<'_>,
    reads: Reads,
    output: BorrowedFd<'_>,
    writes: Writes,
) -> io::Result<()> {
    let (i, o) = (sys::meta(input)?, sys::meta(output)?);
    if (i.dev, i.ino) != (o.dev, o.ino) || sys::mode_type(i.mode) != sys::ModeType::Regular {
        return Ok(());
    }
    let (start, end) = match reads {
        Reads::Range(a, b) => (a, b),
        Reads::ToEnd(a) => (a, u64::MAX),
        Reads::FromOffset => (crate::sys::fileio::tell(input)?, u64::MAX),
    };
    if end == u64::MAX && start >= i.size {
        return Ok(()); // read from the end: nothing to copy
    }
    let at = match writes {
        Writes::At(at) => at,
        Writes::AtOffset if crate::sys::fileio::is_append(output)? => i.size,
        Writes::AtOffset => crate::sys::fileio::tell(output)?,
        Writes::AtOrAppended(_) if crate::sys::fileio::is_append(output)? => i.size,
        Writes::AtOrAppended(at) => at,
    };
    let at_end = at.saturating_add(end.saturating_sub(start));
    if start < end && start < at_end && at < end {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "input file is output file (the bytes copied would meet the bytes written)",
        ));
    }
    Ok(())
}

/// The kinds of both descriptors (two `fstat`s).
fn kinds_of(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    st: &mut TransferStats,
) -> Result<(FdKind, FdKind), Fail> {
    st.calls.other += 1;
    let i = sys::meta(input).map_err(|e| (Side::Read, e))?;
    st.calls.other += 1;
    let o = sys::meta(output).map_err(|e| (Side::Write, e))?;
    Ok((FdKind::from_mode(i.mode), FdKind::from_mode(o.mode)))
}

/// The guard a transfer into `out` needs: SIGPIPE for pipes and sockets,
/// SIGXFSZ for regular files under a size limit.
fn signal_guard(opts: &TransferOptions<'_>, out: FdKind) -> Option<SignalGuard> {
    if !opts.guard_signals {
        return None;
    }
    match out {
        FdKind::Pipe | FdKind::Socket => Some(SignalGuard::sigpipe()),
        FdKind::Regular if sys::fsize_limited() => Some(SignalGuard::sigxfsz()),
        _ => None,
    }
}
