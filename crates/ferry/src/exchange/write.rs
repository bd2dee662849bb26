//! `write_buf`: fbufs' `uf_write`, ownership passing with the bytes.
//!
//! Every owned buffer leaves the process through [`send_owned`], routed by
//! the descriptor's kind: by reference (`vmsplice`) into pipes and stream
//! sockets where the memory can be lent, gathered writes (`writev`,
//! `sendmsg` on a socket) otherwise. `MSG_ZEROCOPY`
//! ([`ZeroCopySender`](crate::transfer::zerocopy::ZeroCopySender)) is
//! not used here: on this machine's loopback it was slower at every size
//! (the kernel copies anyway; docs/BENCHMARKS.md, "Probe: MSG_ZEROCOPY threshold",
//! measured 2026-11-25 at 18914ce).

use super::{Exchange, Owned};
use crate::sys::vectored::VectoredWriter;
use crate::transfer::{TransferError, TransferStats};
use crate::Aggregate;
use std::io::{self, IoSlice};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

/// Slices one gathered write takes at most (on the stack).
const IOV_BATCH: usize = 64;

impl Exchange {
    /// fbufs' `uf_write`: writes all of `data` — a [`Buf`](crate::Buf),
    /// a [`BufMut`](crate::BufMut) (frozen first) or an
    /// [`Aggregate`] — to `fd` at its offset, taking it
    /// over: the caller cannot touch the bytes again (they are moved), so
    /// the kernel may hold them by reference. Returns the bytes written,
    /// all of them.
    ///
    /// Short writes are continued; `EINTR` is retried; a non-blocking
    /// descriptor that says `EAGAIN` is waited for (`poll`). A pipe or
    /// socket whose reader has gone is an `EPIPE` error, never a SIGPIPE
    /// death. On an error the `io::Error` (of the OS error's kind) carries
    /// a [`TransferError`] whose [`bytes`](TransferError::bytes) are the
    /// bytes known to have arrived ([`bytes_out`] reads them), its message
    /// names the descriptor and the count, and
    /// [`os_error`](crate::stream::os_error) finds the OS error code.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let ex = ferry::exchange::Exchange::new(1 << 20)?;
    /// let (r, w) = std::io::pipe()?;
    /// let mut head = ex.get_buf(100)?;
    /// head.extend_from_slice(b"head ");
    /// let mut parts = ferry::Aggregate::from(head.freeze());
    /// parts.append_buf(ferry::Buf::from_static(b"body"));
    /// assert_eq!(ex.write_buf(&w, parts)?, 9);
    /// drop(r);
    /// let e = ex.write_buf(&w, ferry::Buf::from_static(b"lost")).unwrap_err();
    /// assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
    /// assert_eq!(ferry::exchange::bytes_out(&e), Some(0));
    /// # Ok(()) }
    /// ```
    pub fn write_buf(&self, fd: impl AsFd, data: impl Into<Owned>) -> io::Result<usize> {
        write_buf(fd.as_fd(), data.into())
    }
}

/// The bytes a failed [`write_buf`](super::write_buf) got out before its
/// error (`None` for an error that did not come from one).
///
/// ```
/// let e = std::io::Error::other("not from write_buf");
/// assert_eq!(ferry::exchange::bytes_out(&e), None);
/// ```
pub fn bytes_out(e: &io::Error) -> Option<u64> {
    e.get_ref()
        .and_then(|r| r.downcast_ref::<TransferError>())
        .map(TransferError::bytes)
}

pub(super) fn write_buf(fd: BorrowedFd<'_>, data: Owned) -> io::Result<usize> {
    let data = data.into_aggregate();
    let total = data.len();
    if total == 0 {
        return Ok(0);
    }
    let mut st = TransferStats::default();
    match send_owned(fd, data, &mut st) {
        Ok(()) => Ok(total),
        Err(e) => {
            let kind = e.kind();
            let name: std::sync::Arc<str> =
                format!("fd {} after {} of {total} bytes", fd.as_raw_fd(), st.bytes).into();
            let e = crate::error::named("write_buf to", &name, e);
            Err(io::Error::new(kind, crate::transfer::write_failed(e, st)))
        }
    }
}

/// Pieces at least this long go to a pipe or stream socket by reference
/// (`vmsplice`) where their memory can be lent; shorter ones are copied.
/// Measured in docs/BENCHMARKS.md ("fbufs: where write_buf starts
/// lending", `ferry-bench fbufs`, maprw): a mapped 16 KiB written by
/// `write_buf` (lent) cost the same as by `write` (copied), 64 KiB 1.32×
/// less, 1 KiB and 4 KiB 5% more.
pub(crate) const LEND_MIN: usize = 16 << 10;

/// Sends `data`, which the caller has given up, to `fd`, all of it;
/// counts the bytes that arrived and the system calls in `st` (on error
/// too: `st.bytes` is then what is known to have arrived).
///
/// The one function owned buffers leave the process through, routed by
/// the descriptor's kind: into a pipe or a stream socket, pieces of at
/// least [`LEND_MIN`] bytes whose memory can be lent (a frozen pool slot
/// or page-aligned heap block, a file's mapped pages, static bytes) go
/// by reference (`transfer::lend`: the block is never writable again and
/// gets fresh pages before its memory is reused, so the kernel may hold
/// the old ones as long as it likes); into a regular file, buffers
/// received over an ipc channel go from the pool's memfd (`sendfile`);
/// everything else by gathered writes. (A received buffer is never lent
/// to a pipe or socket: its slot goes back to the sender when it is
/// dropped, and the sender writes it again — see
/// `transfer::kernel::from_file`.)
fn send_owned(fd: BorrowedFd<'_>, data: Aggregate, st: &mut TransferStats) -> io::Result<()> {
    use crate::sys::channel::FdKind as K;
    use crate::sys::vectored::FdKind as V;
    use crate::transfer::lend::{write_lending, Into};
    st.calls.other += 1; // fstat (and a socket's type): the descriptor's kind
    let fd_kind = crate::sys::channel::fd_kind(fd)?;
    let (into, kind) = match fd_kind {
        K::Pipe => (Some(Into::Pipe), V::Pipe),
        K::Socket { stream: true, .. } => (Some(Into::Socket), V::Socket),
        K::Socket { .. } => (None, V::Socket),
        _ => (None, V::Other),
    };
    if matches!(fd_kind, K::Regular { .. }) && data.bufs().any(|b| b.file_at().is_some()) {
        return into_file(fd, data, st);
    }
    if let Some(into) = into {
        if data.bufs().any(|b| b.len() >= LEND_MIN) {
            return match write_lending(fd, into, &data, LEND_MIN) {
                Ok(l) => {
                    st.bytes += l.bytes;
                    st.calls.splice += l.calls;
                    Ok(())
                }
                Err((l, e)) => {
                    st.bytes += l.bytes;
                    st.calls.splice += l.calls;
                    Err(e)
                }
            };
        }
    }
    write_gathered(fd, kind, data, st)
}

/// Into a regular file: pieces received over an ipc channel go from the
/// pool's memfd with `sendfile` (`transfer::send_from_file`: the kernel
/// has copied them when it returns, so the sender may reuse their slots
/// at once), runs of other pieces by gathered writes, in order.
fn into_file(fd: BorrowedFd<'_>, data: Aggregate, st: &mut TransferStats) -> io::Result<()> {
    use crate::sys::vectored::FdKind as V;
    use crate::transfer::{send_from_file, Sent};
    let mut run = Aggregate::new();
    for b in data.bufs() {
        if b.file_at().is_some() {
            write_gathered(fd, V::Other, std::mem::take(&mut run), st)?;
            if send_from_file(fd, b, st)? == Sent::All {
                continue;
            }
        }
        run.append_buf(b.clone());
    }
    write_gathered(fd, V::Other, run, st)
}

/// Writes all of `data` by gathered writes (`writev`, `sendmsg` on a
/// socket), waiting where the descriptor would block.
fn write_gathered(
    fd: BorrowedFd<'_>,
    kind: crate::sys::vectored::FdKind,
    mut data: Aggregate,
    st: &mut TransferStats,
) -> io::Result<()> {
    let mut w = VectoredWriter::of_kind(fd, kind);
    while !data.is_empty() {
        let r = {
            let mut iov = [IoSlice::new(&[]); IOV_BATCH];
            let (n, _) = data.fill_io_slices(&mut iov);
            st.calls.write += 1;
            w.write(&iov[..n])
        };
        match r {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "the descriptor accepted no more bytes",
                ))
            }
            Ok(n) => {
                data.advance(n);
                st.bytes += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                st.calls.other += 1;
                crate::sys::channel::wait_ready(fd, true)?;
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
}
