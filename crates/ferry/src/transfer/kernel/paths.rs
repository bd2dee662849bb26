//! [`copy`](super::copy)'s paths at the descriptors' own offsets:
//! copy_file_range between regular files (after the two-thread split for
//! large ones), splice into a pipe (through a private pipe from a regular
//! file), sendfile from a regular file, splice out of a pipe, splice from a
//! socket through a private pipe, then read/write through a page-aligned
//! buffer.

use super::{split, Fail, FdKind, Method, Side, TransferOptions, TransferStats};
use crate::sys::fileio::set_pipe_size;
use crate::sys::transfer::{self as sys, SpliceHint};
use crate::BufMut;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};

/// The most one copy_file_range or sendfile is asked for.
const CHUNK: usize = 1 << 30;

/// The most one splice is asked for, and the pipe capacity asked for.
const PIPE_CHUNK: usize = 1 << 20;

/// The read/write path's buffer.
const BUF: usize = 128 << 10;

fn errno(e: &io::Error) -> i32 {
    e.raw_os_error().unwrap_or(0)
}

/// Errors that mean "this kernel path does not apply here": fall back.
pub(crate) fn unsupported(e: &io::Error) -> bool {
    matches!(
        errno(e),
        libc::EXDEV | libc::ENOSYS | libc::EINVAL | libc::EOPNOTSUPP | libc::EPERM | libc::EBADF
    )
}

/// Copies everything from `input` to `output` at their offsets.
pub(super) fn copy(
    input: BorrowedFd<'_>,
    in_kind: FdKind,
    output: BorrowedFd<'_>,
    out_kind: FdKind,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    let in_reg = in_kind == FdKind::Regular;
    if in_reg && out_kind == FdKind::Regular {
        split::split_regular(input, output, opts, st)?;
        let mut moved = false;
        loop {
            st.calls.copy_file_range += 1;
            match sys::copy_file_range(input, None, output, None, CHUNK) {
                Ok(0) => {
                    st.finish(Method::CopyFileRange);
                    return Ok(());
                }
                Ok(n) => {
                    opts.moved(st, Method::CopyFileRange, n);
                    moved = true;
                }
                Err(e) if !moved && unsupported(&e) => break,
                Err(e) => return Err((Side::Write, e)),
            }
        }
    }
    if out_kind == FdKind::Pipe {
        // A bigger pipe: each splice then moves up to 1 MiB of page
        // references instead of 64 KiB (best effort; the size is capped by
        // /proc/sys/fs/pipe-max-size for unprivileged users).
        st.calls.other += 1;
        let _ = set_pipe_size(output, PIPE_CHUNK);
        if in_reg {
            if let Some(done) = splice_staged(input, output, opts, st, Taken::SeekBack) {
                return done;
            }
        }
        loop {
            st.calls.splice += 1;
            match sys::splice(input, output, PIPE_CHUNK, SpliceHint::More) {
                Ok(0) => {
                    st.finish(Method::Splice);
                    return Ok(());
                }
                Ok(n) => opts.moved(st, Method::Splice, n),
                Err(e) if st.bytes == 0 && unsupported(&e) => break,
                Err(e) => {
                    // Tell apart a dead reader (write side) from a read error.
                    let side = if errno(&e) == libc::EPIPE {
                        Side::Write
                    } else {
                        Side::Read
                    };
                    return Err((side, e));
                }
            }
        }
    }
    if in_reg {
        loop {
            st.calls.sendfile += 1;
            match sys::sendfile(output, input, CHUNK) {
                Ok(0) => {
                    st.finish(Method::Sendfile);
                    return Ok(());
                }
                Ok(n) => opts.moved(st, Method::Sendfile, n),
                Err(e) if st.bytes == 0 && unsupported(&e) => break,
                Err(e) => {
                    let side = if matches!(errno(&e), libc::EIO | libc::EISDIR) {
                        Side::Read
                    } else {
                        Side::Write
                    };
                    return Err((side, e));
                }
            }
        }
    }
    if in_kind == FdKind::Pipe {
        if let Some(done) = splice_out_of_pipe(input, output, opts, st) {
            return done;
        }
    } else if in_kind == FdKind::Socket {
        if let Some(done) = splice_staged(input, output, opts, st, Taken::Drain) {
            return done;
        }
    }
    read_write(input, output, opts, st)
}

/// A pipe into anything that takes a splice (a file, a socket, a device):
/// page references out of the pipe, no copy in user space. `None`: the
/// output does not take one (an `O_APPEND` file, a terminal), and nothing
/// was moved.
fn splice_out_of_pipe(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Option<Result<(), Fail>> {
    loop {
        st.calls.splice += 1;
        match sys::splice(input, output, PIPE_CHUNK, SpliceHint::More) {
            Ok(0) => {
                st.finish(Method::Splice);
                return Some(Ok(()));
            }
            Ok(n) => opts.moved(st, Method::Splice, n),
            Err(e) if st.bytes == 0 && unsupported(&e) => return None,
            // Reading a pipe fails for no reason of its own: the output's.
            Err(e) => return Some(Err((Side::Write, e))),
        }
    }
}

/// What [`splice_staged`] does with bytes it took from the input when the
/// output turns out to take no splice.
#[derive(Clone, Copy)]
enum Taken {
    /// Put a file's offset back by them.
    SeekBack,
    /// Write them to the output by read/write (a socket's).
    Drain,
}

/// Writes the `left` bytes a private pipe holds to `output` by read/write.
fn drain(
    pipe: BorrowedFd<'_>,
    mut left: usize,
    output: BorrowedFd<'_>,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    let mut buf = BufMut::with_capacity(BUF);
    let cap = buf.capacity();
    buf.commit(cap);
    while left > 0 {
        st.calls.read += 1;
        let want = left.min(cap);
        let n = match sys::read(pipe, &mut buf[..want]) {
            Ok(0) => return Err((Side::Read, io::ErrorKind::UnexpectedEof.into())),
            Ok(n) => n,
            Err(e) => return Err((Side::Read, e)),
        };
        left -= n;
        write_counted(output, &buf[..n], opts, st)?;
    }
    Ok(())
}

/// Splices a regular file into the pipe `output` through a private pipe:
/// file → private pipe (the slow half: finding the file's pages), then
/// private pipe → `output` (moving pipe buffers). The reader of `output`
/// then contends for its pipe's lock only with the quick moves; splicing
/// the file straight into `output` held that lock through the page lookups
/// and was 2.6× slower here to a reader draining with splice (uutils cat
/// does the same staging).
///
/// A socket into anything but a pipe goes the same way (socket → private
/// pipe → output), the private pipe between two non-pipes.
///
/// `None`: no private pipe, the input does not splice, or the output takes
/// no splice. Bytes the private pipe then holds are given back as `taken`
/// says — the file's offset put back, or (a socket cannot give them back)
/// written to the output by read/write — so the caller's next path starts
/// where this one stopped.
fn splice_staged(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
    taken: Taken,
) -> Option<Result<(), Fail>> {
    st.calls.other += 1;
    let (own_r, own_w) = sys::pipe().ok()?;
    let (r, w) = (own_r.as_fd(), own_w.as_fd());
    st.calls.other += 1;
    let _ = set_pipe_size(w, PIPE_CHUNK);
    loop {
        st.calls.splice += 1;
        let n = match sys::splice(input, w, PIPE_CHUNK, SpliceHint::Move) {
            Ok(0) => {
                st.finish(Method::Splice);
                return Some(Ok(()));
            }
            Ok(n) => n,
            Err(e) if st.bytes == 0 && unsupported(&e) => return None,
            Err(e) => return Some(Err((Side::Read, e))),
        };
        // Everything taken from the file goes on to the output, or the
        // copy ends with the output's error.
        let mut left = n;
        while left > 0 {
            st.calls.splice += 1;
            match sys::splice(r, output, left, SpliceHint::None) {
                Ok(0) => return Some(Err((Side::Write, io::ErrorKind::WriteZero.into()))),
                Ok(k) => {
                    left -= k;
                    opts.moved(st, Method::Splice, k);
                }
                Err(e) if st.bytes == 0 && unsupported(&e) => {
                    // Not a path for this output after all.
                    let back = match taken {
                        Taken::SeekBack => {
                            st.calls.other += 1;
                            sys::seek_by(input, -(left as i64)).map_err(|e| (Side::Read, e))
                        }
                        Taken::Drain => drain(r, left, output, opts, st),
                    };
                    return match back {
                        Ok(()) => None,
                        Err(f) => Some(Err(f)),
                    };
                }
                Err(e) => return Some(Err((Side::Write, e))),
            }
        }
    }
}

/// read/write through a page-aligned buffer: the path for any pair of
/// descriptors.
fn read_write(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    let mut buf = BufMut::with_capacity(BUF);
    let cap = buf.capacity();
    buf.commit(cap);
    loop {
        st.calls.read += 1;
        let n = match sys::read(input, &mut buf[..]) {
            Ok(0) => {
                st.finish(Method::ReadWrite);
                return Ok(());
            }
            Ok(n) => n,
            Err(e) => return Err((Side::Read, e)),
        };
        write_counted(output, &buf[..n], opts, st)?;
    }
}

/// Writes all of `data` to `output`, counting each write and its bytes.
fn write_counted(
    output: BorrowedFd<'_>,
    mut data: &[u8],
    opts: &TransferOptions<'_>,
    st: &mut TransferStats,
) -> Result<(), Fail> {
    while !data.is_empty() {
        st.calls.write += 1;
        match sys::write(output, data) {
            Ok(0) => return Err((Side::Write, io::ErrorKind::WriteZero.into())),
            Ok(k) => {
                data = &data[k..];
                opts.moved(st, Method::ReadWrite, k);
            }
            Err(e) => return Err((Side::Write, e)),
        }
    }
    Ok(())
}
