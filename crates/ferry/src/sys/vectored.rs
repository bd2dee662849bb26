//! Gathered writes (`writev`, or `sendmsg` for sockets) that never raise
//! SIGPIPE or SIGXFSZ and retry EINTR.

use super::sigguard::SignalGuard;
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, BorrowedFd};

/// What kind of file a descriptor refers to, as far as SIGPIPE is concerned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FdKind {
    /// A socket: `sendmsg(MSG_NOSIGNAL)` suppresses SIGPIPE per call.
    Socket,
    /// A pipe or FIFO: SIGPIPE must be blocked around the write.
    Pipe,
    /// Anything else (regular file, terminal, device): no SIGPIPE possible.
    Other,
}

pub(crate) fn fd_kind(fd: BorrowedFd<'_>) -> io::Result<FdKind> {
    let st = rustix::fs::fstat(fd)?;
    Ok(match rustix::fs::FileType::from_raw_mode(st.st_mode) {
        rustix::fs::FileType::Socket => FdKind::Socket,
        rustix::fs::FileType::Fifo => FdKind::Pipe,
        _ => FdKind::Other,
    })
}

/// A writer of gathered buffers to one descriptor. Holding one keeps SIGPIPE
/// blocked in this thread (for pipes), so a sequence of writes pays for the
/// signal mask once.
pub(crate) struct VectoredWriter<'fd> {
    fd: BorrowedFd<'fd>,
    kind: FdKind,
    guard: Option<SignalGuard>,
    /// Positioned writes (`pwritev`) from here on, up to `end` if set;
    /// the descriptor's own offset is neither used nor moved.
    at: Option<(u64, Option<u64>)>,
}

impl<'fd> VectoredWriter<'fd> {
    pub(crate) fn new(fd: BorrowedFd<'fd>) -> io::Result<Self> {
        Ok(Self::of_kind(fd, fd_kind(fd)?))
    }

    /// A writer for a descriptor whose kind the caller already knows.
    /// Past `RLIMIT_FSIZE` (where the process has a finite one) a file
    /// write is an `EFBIG` error, never a SIGXFSZ death.
    pub(crate) fn of_kind(fd: BorrowedFd<'fd>, kind: FdKind) -> Self {
        let guard = match kind {
            FdKind::Pipe => Some(SignalGuard::sigpipe()),
            FdKind::Other if super::transfer::fsize_limited() => Some(SignalGuard::sigxfsz()),
            _ => None,
        };
        VectoredWriter {
            fd,
            kind,
            guard,
            at: None,
        }
    }

    /// Writes from now on go to the file at `offset` and on (a range of a
    /// regular file), at most `len` bytes if given: past them a write
    /// fails `WriteZero`, naming the range.
    pub(crate) fn positioned(mut self, offset: u64, len: Option<u64>) -> Self {
        self.at = Some((offset, len.map(|n| offset.saturating_add(n))));
        self
    }

    /// One gathered write; EINTR is retried, any other error returned. A
    /// closed reader gives `ErrorKind::BrokenPipe`.
    pub(crate) fn write(&mut self, iov: &[IoSlice<'_>]) -> io::Result<usize> {
        if let Some((at, end)) = self.at {
            return self.write_at(iov, at, end);
        }
        loop {
            let r = match self.kind {
                FdKind::Socket => rustix::net::sendmsg(
                    self.fd.as_fd(),
                    iov,
                    &mut rustix::net::SendAncillaryBuffer::default(),
                    rustix::net::SendFlags::NOSIGNAL,
                ),
                _ => rustix::io::writev(self.fd.as_fd(), iov),
            };
            match r {
                Ok(n) => return Ok(n),
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    if let Some(g) = self.guard.as_mut() {
                        g.saw(e);
                    }
                    return Err(e.into());
                }
            }
        }
    }

    /// One positioned gathered write at `at`, cut at `end`.
    fn write_at(&mut self, iov: &[IoSlice<'_>], at: u64, end: Option<u64>) -> io::Result<usize> {
        let room = end.map_or(usize::MAX, |e| {
            usize::try_from(e.saturating_sub(at)).unwrap_or(usize::MAX)
        });
        let total = iov
            .iter()
            .map(|s| s.len())
            .fold(0usize, usize::saturating_add);
        if room == 0 && total > 0 {
            return Err(io::Error::new(
                io::ErrorKind::WriteZero,
                format!("the output range is full: it ends at offset {at}"),
            ));
        }
        let cut: Vec<IoSlice<'_>>;
        let iov = if total > room {
            let mut left = room;
            cut = iov
                .iter()
                .map_while(|s| {
                    (left > 0).then(|| {
                        let n = s.len().min(left);
                        left -= n;
                        IoSlice::new(&s[..n])
                    })
                })
                .collect();
            &cut[..]
        } else {
            iov
        };
        loop {
            match rustix::io::pwritev(self.fd.as_fd(), iov, at) {
                Ok(n) => {
                    if let Some((pos, _)) = self.at.as_mut() {
                        *pos += n as u64;
                    }
                    return Ok(n);
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => {
                    if let Some(g) = self.guard.as_mut() {
                        g.saw(e);
                    }
                    return Err(e.into());
                }
            }
        }
    }
}
