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
//! The module holds two things, one above the other: the kernel's copy
//! paths, given descriptors (`kernel/`: [`copy`], [`copy_range`],
//! [`send`], [`zerocopy`], [`OrderedOut`]), and Roadrunner's streaming
//! between endpoints (`streaming/`: [`endpoint`], [`between`]), which
//! takes ferry streams as endpoints and so sits with the interfaces, on
//! the kernel's paths, the [`cache`] and the [`overlay`]. What both
//! report ([`TransferStats`], [`TransferError`]) and how both are asked
//! ([`TransferOptions`]) live here.
//!
//! Signals: by default a transfer into a pipe or socket whose reader has
//! gone fails with `EPIPE` instead of killing the process with SIGPIPE,
//! and one past `RLIMIT_FSIZE` fails with `EFBIG` instead of SIGXFSZ (the
//! signal is blocked in the calling thread for the call, as ferry's
//! streams do). [`TransferOptions::leave_signals`] turns that off for
//! programs that set their own dispositions (ferry's tools ignore SIGPIPE
//! and let SIGXFSZ end them, as GNU's do).

pub mod cache;
mod kernel;
pub mod overlay;
mod stats;
mod streaming;

pub use kernel::{
    copy, copy_range, send, sent_from_file_bytes, write_all, zerocopy, FdKind, OrderedOut,
    PARALLEL_MIN,
};
pub(crate) use kernel::{lend, same_file_refused, send_from_file, Reads, Sent, Writes};
pub use stats::{Calls, Method, Path, Side, Switches, TransferError, TransferStats};
pub use streaming::{between, endpoint};

use std::io;

/// A write that failed after `st.bytes` arrived at the output, reported
/// as the engine reports its own ([`TransferError`], [`Side::Write`]): for
/// the interfaces above the engine that write owned buffers
/// ([`exchange::write_buf`](crate::exchange::write_buf)).
pub(crate) fn write_failed(error: io::Error, st: TransferStats) -> TransferError {
    TransferError::new(Side::Write, error, st)
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
