//! A buffer whose bytes are a shared mapping of a file (one received over
//! an ipc channel: the sender's memfd pool) written to a regular file from
//! that file, with `sendfile`, instead of from the mapping with `write`:
//! the kernel copies page cache to page cache, and the receiver's
//! mapping of the pool is never touched (no page faults on it).
//!
//! Only into a regular file. There the kernel has copied the bytes into
//! the output's page cache when `sendfile` returns, so the buffer may be
//! released (and its slot reused and overwritten by the sender) right
//! after. Into a pipe or a socket, `sendfile`/`splice` from a memfd hands
//! over references to the pool's pages (the pipe's reader, or the
//! socket's peer, reads them later): once the buffer is released the
//! sender may write the slot again and the reader would get the new
//! bytes. Those outputs keep getting a copy (`write`), and a test holds
//! them to it (a slot reused while its old bytes sit unread in a pipe).
//!
//! Into a file it is still one copy, the kernel's, either way; what
//! `sendfile` saves is the receiver's page faults on the pool. Measured
//! 2026-11-26 (2 cores, shared and loaded, load average 10; 64 MiB in
//! 1 MiB received buffers into an ext4 file, dev build, six rounds):
//! `write` from the mapping 39–65 ms, `sendfile` from the memfd 80–110
//! ms, `splice` through a private 1 MiB pipe 66–82 ms — the warm mapping
//! wins there, and a cold one (every slot touched once) too (50–68 ms
//! against 79–99 ms). The route stays the pool's design (a receiver that
//! passes buffers on need not touch their pages); whether to keep it for
//! files is open on those figures.

use crate::sys::transfer as sys;
use crate::transfer::TransferStats;
use crate::Buf;
use std::io;
use std::os::fd::BorrowedFd;
use std::sync::atomic::{AtomicU64, Ordering};

/// The most one `sendfile` is asked for.
const CHUNK: usize = 1 << 30;

static SENT: AtomicU64 = AtomicU64::new(0);

/// Bytes written, process-wide, with `sendfile` from the file behind a
/// buffer (an ipc pool's memfd) instead of from the buffer's memory: by
/// [`exchange::write_buf`](crate::exchange::write_buf) and
/// [`between`](crate::transfer::between) into a regular file.
///
/// ```
/// let before = ferry::transfer::sent_from_file_bytes();
/// assert!(ferry::transfer::sent_from_file_bytes() >= before);
/// ```
pub fn sent_from_file_bytes() -> u64 {
    SENT.load(Ordering::Relaxed)
}

/// What [`send_from_file`] did.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Sent {
    /// All of the buffer went by `sendfile`.
    All,
    /// The buffer has no file behind it, or the output refused `sendfile`
    /// before any byte of it went (an `O_APPEND` file, say): nothing was
    /// written, the caller writes it from memory.
    No,
}

/// Writes all of `b` to the regular file `out` at its offset from the file
/// behind `b` ([`Buf::file_at`]), counting bytes and calls in `st`. An
/// error after some bytes went is returned as it is (`st.bytes` has what
/// arrived).
pub(crate) fn send_from_file(
    out: BorrowedFd<'_>,
    b: &Buf,
    st: &mut TransferStats,
) -> io::Result<Sent> {
    let Some((file, mut at)) = b.file_at() else {
        return Ok(Sent::No);
    };
    let mut done = 0;
    while done < b.len() {
        st.calls.sendfile += 1;
        match sys::sendfile_at(out, file, &mut at, (b.len() - done).min(CHUNK)) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                done += n;
                st.bytes += n as u64;
                SENT.fetch_add(n as u64, Ordering::Relaxed);
            }
            Err(e)
                if done == 0 && super::unsupported(&e) && e.raw_os_error() != Some(libc::EBADF) =>
            {
                return Ok(Sent::No)
            }
            Err(e) => return Err(e),
        }
    }
    Ok(Sent::All)
}
