//! The kernel's copy paths: a whole input moved to an output by
//! `copy_file_range`, `splice`, `sendfile` or, where none applies,
//! `read`/`write` through a page-aligned buffer, in the order of the table
//! in the [transfer module's docs](super) ([`copy`], `paths.rs`); a byte
//! range between regular files ([`copy_range`]), on two threads for large
//! ones (`split.rs`, `shared.rs`, `range.rs`); file ranges sent to a
//! descriptor ([`send`]); owned buffers into pipes and sockets by
//! reference ([`zerocopy`], `lend.rs`); buffers received over an ipc
//! channel into a file from the pool's memfd (`from_file.rs`); and
//! [`OrderedOut`] for output a program formats itself.
//!
//! These name no endpoint: they are given descriptors. Roadrunner's
//! streaming between endpoints (`streaming/`) runs on them.

mod from_file;
pub(crate) mod lend;
mod out;
mod paths;
mod range;
pub mod send;
mod shared;
mod split;
#[cfg(test)]
mod tests;
pub mod zerocopy;

pub use from_file::sent_from_file_bytes;
pub(crate) use from_file::{send_from_file, Sent};
pub use out::{write_all, OrderedOut};
pub(crate) use paths::unsupported;

use super::{Method, Side, TransferError, TransferOptions, TransferStats};
use crate::sys::sigguard::SignalGuard;
use crate::sys::transfer as sys;
use std::io;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd};

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

/// An error on one side, before it is given the stats.
pub(crate) type Fail = (Side, io::Error);

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
        let r = paths::copy(input, i, output, o, opts, &mut st);
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
pub(crate) fn signal_guard(opts: &TransferOptions<'_>, out: FdKind) -> Option<SignalGuard> {
    if !opts.guard_signals {
        return None;
    }
    match out {
        FdKind::Pipe | FdKind::Socket => Some(SignalGuard::sigpipe()),
        FdKind::Regular if sys::fsize_limited() => Some(SignalGuard::sigxfsz()),
        _ => None,
    }
}
