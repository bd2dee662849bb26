//! Byte ranges of a file sent to a descriptor by the kernel, one range at
//! a time: what a server does for each response body, and `ferry ttcp`
//! for each buffer. The file's page-cache pages go to the output by
//! reference (`sendfile` with an explicit offset, or `splice` into a
//! private pipe and on out of it); no byte passes through user space and
//! the file's own offset never moves, so any number of senders can share
//! one open file.

use super::{Method, Side, TransferError, TransferStats};
use crate::sys;
use std::io;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// The kernel path a [`FileSender`] takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SendPath {
    /// One `sendfile` per piece: file pages to the output.
    Sendfile,
    /// `splice` of the file into a private pipe, then `splice` of the pipe
    /// into the output: two calls per piece, the pipe holding page
    /// references in between.
    Splice,
}

/// The most a single call is asked to move.
const PIECE: usize = 1 << 20;

/// Sends ranges of one regular file (or memfd) to one output descriptor.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use ferry::transfer::send::{FileSender, SendPath};
/// use std::io::{Read, Write};
/// use std::os::fd::AsFd;
/// let mut file = tempfile::tempfile()?;
/// file.write_all(b"0123456789")?;
/// let (mut r, w) = std::io::pipe()?;
/// let mut s = FileSender::new(file.as_fd(), w.as_fd(), SendPath::Splice)?;
/// assert_eq!(s.send(2..5)?, 3);
/// assert_eq!(s.send(8..20)?, 2); // the file ends at 10
/// drop(s);
/// drop(w);
/// let mut got = String::new();
/// r.read_to_string(&mut got)?;
/// assert_eq!(got, "23489");
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct FileSender<'a> {
    file: BorrowedFd<'a>,
    out: BorrowedFd<'a>,
    path: SendPath,
    /// The private pipe of [`SendPath::Splice`] (read end, write end);
    /// `None` until first needed, and again after a failed send (bytes
    /// taken into it then must never reach a later send's output).
    pipe: Option<(OwnedFd, OwnedFd)>,
    pipe_room: usize,
    stats: TransferStats,
}

impl<'a> FileSender<'a> {
    /// A sender of `file`'s bytes to `out` by `path`. `file` must be a
    /// regular file (`InvalidInput` otherwise, naming what it is).
    pub fn new(file: BorrowedFd<'a>, out: BorrowedFd<'a>, path: SendPath) -> io::Result<Self> {
        let m = sys::transfer::meta(file)?;
        if !matches!(
            sys::transfer::mode_type(m.mode),
            sys::transfer::ModeType::Regular
        ) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a file sender's source must be a regular file",
            ));
        }
        Ok(FileSender {
            file,
            out,
            path,
            pipe: None,
            pipe_room: 0,
            stats: TransferStats::default(),
        })
    }

    /// Sends bytes `range` of the file; returns how many went, fewer than
    /// the range's length only where the file ends inside it. A
    /// non-blocking output is waited for. On failure the error's stats
    /// count every byte that reached the output, this call's included.
    pub fn send(&mut self, range: Range<u64>) -> Result<u64, TransferError> {
        let start = self.stats.bytes;
        // sendfile and splice into a pipe or socket without a reader raise
        // SIGPIPE (no MSG_NOSIGNAL for them): held back for the call, so a
        // gone reader is EPIPE, never the death of the process.
        let mut guard = crate::sys::sigguard::SignalGuard::sigpipe();
        let r = match self.path {
            SendPath::Sendfile => self.by_sendfile(range),
            SendPath::Splice => self.by_splice(range),
        };
        match r {
            Ok(()) => Ok(self.stats.bytes - start),
            Err((side, e)) => {
                guard.saw_io(&e);
                Err(TransferError::new(side, e, self.stats))
            }
        }
    }

    /// What every send so far did: bytes, calls, by which method.
    pub fn stats(&self) -> &TransferStats {
        &self.stats
    }

    fn by_sendfile(&mut self, range: Range<u64>) -> Result<(), (Side, io::Error)> {
        let mut off = range.start;
        while off < range.end {
            let want = (range.end - off).min(PIECE as u64) as usize;
            self.stats.calls.sendfile += 1;
            match sys::transfer::sendfile_at(self.out, self.file, &mut off, want) {
                Ok(0) => return Ok(()),
                Ok(n) => self.stats.moved(Method::Sendfile, n),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait()?,
                Err(e) => {
                    let side = if e.raw_os_error() == Some(libc::EIO) {
                        Side::Read
                    } else {
                        Side::Write
                    };
                    return Err((side, e));
                }
            }
        }
        self.stats.finish(Method::Sendfile);
        Ok(())
    }

    fn by_splice(&mut self, range: Range<u64>) -> Result<(), (Side, io::Error)> {
        if self.pipe.is_none() {
            self.stats.calls.other += 2;
            let (r, w) = sys::transfer::pipe().map_err(|e| (Side::Write, e))?;
            // Best effort: a bigger pipe holds more page references per call.
            self.pipe_room = sys::fileio::set_pipe_size(w.as_fd(), PIECE).unwrap_or(1 << 16);
            self.pipe = Some((r, w));
        }
        // Out of `self` while in use: on failure it stays out (dropped),
        // so bytes left in it never reach a later send's output.
        let Some((pr, pw)) = self.pipe.take() else {
            return Ok(());
        };
        self.splice_through(pr.as_fd(), pw.as_fd(), range)?;
        self.pipe = Some((pr, pw));
        Ok(())
    }

    fn splice_through(
        &mut self,
        pr: BorrowedFd<'_>,
        pw: BorrowedFd<'_>,
        range: Range<u64>,
    ) -> Result<(), (Side, io::Error)> {
        let mut off = range.start;
        while off < range.end {
            let want = (range.end - off).min(self.pipe_room as u64) as usize;
            self.stats.calls.splice += 1;
            let mut held = match sys::transfer::splice_from_at(self.file, &mut off, pw, want) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) => return Err((Side::Read, e)),
            };
            while held > 0 {
                self.stats.calls.splice += 1;
                match sys::transfer::splice(pr, self.out, held, sys::transfer::SpliceHint::More) {
                    Ok(0) => return Err((Side::Write, io::ErrorKind::WriteZero.into())),
                    Ok(n) => {
                        held -= n;
                        self.stats.moved(Method::Splice, n);
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.wait()?,
                    Err(e) => return Err((Side::Write, e)),
                }
            }
        }
        self.stats.finish(Method::Splice);
        Ok(())
    }

    fn wait(&mut self) -> Result<(), (Side, io::Error)> {
        self.stats.calls.other += 1;
        sys::channel::wait_ready(self.out, true).map_err(|e| (Side::Write, e))
    }
}
