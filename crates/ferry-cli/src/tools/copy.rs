//! Moving a whole input to an output the fastest correct way: the kernel's
//! copy paths first (copy_file_range between regular files, splice into a
//! pipe, sendfile from a regular file), then read/write through a
//! page-aligned buffer.

use ferry::BufMut;
use rustix::io::Errno;
use std::io;
use std::os::fd::BorrowedFd;

/// Which side an error happened on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Read,
    Write,
}

/// Which kernel path moved the bytes (for tests and benchmarks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Path {
    CopyFileRange,
    Splice,
    Sendfile,
    ReadWrite,
}

const CHUNK: usize = 1 << 30;

/// Errors that mean "this kernel path does not apply here": fall back.
fn unsupported(e: Errno) -> bool {
    matches!(
        e,
        Errno::XDEV | Errno::NOSYS | Errno::INVAL | Errno::OPNOTSUPP | Errno::PERM | Errno::BADF
    )
}

/// Copies everything from `input` (from its offset) to `output` (at its
/// offset). `in_reg`/`out_reg`/`out_pipe` describe the descriptors.
pub fn copy(
    input: BorrowedFd<'_>,
    in_reg: bool,
    output: BorrowedFd<'_>,
    out_reg: bool,
    out_pipe: bool,
) -> Result<(u64, Path), (Side, io::Error)> {
    let mut total = 0u64;
    if in_reg && out_reg {
        loop {
            match rustix::fs::copy_file_range(input, None, output, None, CHUNK) {
                Ok(0) => return Ok((total, Path::CopyFileRange)),
                Ok(n) => total += n as u64,
                Err(Errno::INTR) => {}
                Err(e) if total == 0 && unsupported(e) => break,
                Err(e) => return Err((Side::Write, e.into())),
            }
        }
    }
    if out_pipe {
        // A bigger pipe: each splice then moves up to 1 MiB of page
        // references instead of 64 KiB (best effort; the size is capped by
        // /proc/sys/fs/pipe-max-size for unprivileged users).
        let _ = rustix::pipe::fcntl_setpipe_size(output, 1 << 20);
        if in_reg {
            if let Some(done) = splice_staged(input, output, &mut total) {
                return done;
            }
        }
        loop {
            match rustix::pipe::splice(
                input,
                None,
                output,
                None,
                1 << 20,
                rustix::pipe::SpliceFlags::MORE,
            ) {
                Ok(0) => return Ok((total, Path::Splice)),
                Ok(n) => total += n as u64,
                Err(Errno::INTR) => {}
                Err(e) if total == 0 && unsupported(e) => break,
                Err(e) => {
                    // Tell apart a dead reader (write side) from a read error.
                    let side = if e == Errno::PIPE {
                        Side::Write
                    } else {
                        Side::Read
                    };
                    return Err((side, e.into()));
                }
            }
        }
    }
    if in_reg {
        loop {
            match rustix::fs::sendfile(output, input, None, CHUNK) {
                Ok(0) => return Ok((total, Path::Sendfile)),
                Ok(n) => total += n as u64,
                Err(Errno::INTR) => {}
                Err(e) if total == 0 && unsupported(e) => break,
                Err(e) => {
                    let side = if e == Errno::IO || e == Errno::ISDIR {
                        Side::Read
                    } else {
                        Side::Write
                    };
                    return Err((side, e.into()));
                }
            }
        }
    }
    read_write(input, output, total)
}

/// Splices a regular file into the pipe `output` through a private pipe:
/// file → private pipe (the slow half: finding the file's pages), then
/// private pipe → `output` (moving pipe buffers). The reader of `output`
/// then contends for its pipe's lock only with the quick moves; splicing
/// the file straight into `output` held that lock through the page lookups
/// and was 2.6× slower here to a reader draining with splice (uutils cat
/// does the same staging). `None`: no private pipe, or the kernel will not
/// splice this file; the file's offset is then where it was.
fn splice_staged(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    total: &mut u64,
) -> Option<Result<(u64, Path), (Side, io::Error)>> {
    use rustix::pipe::{splice, SpliceFlags};
    let (r, w) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).ok()?;
    let _ = rustix::pipe::fcntl_setpipe_size(&w, 1 << 20);
    loop {
        let n = match splice(input, None, &w, None, 1 << 20, SpliceFlags::MOVE) {
            Ok(0) => return Some(Ok((*total, Path::Splice))),
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) if *total == 0 && unsupported(e) => return None,
            Err(e) => return Some(Err((Side::Read, e.into()))),
        };
        // Everything taken from the file goes on to the output, or the
        // copy ends with the output's error.
        let mut left = n;
        while left > 0 {
            match splice(&r, None, output, None, left, SpliceFlags::empty()) {
                Ok(0) => return Some(Err((Side::Write, io::ErrorKind::WriteZero.into()))),
                Ok(k) => {
                    left -= k;
                    *total += k as u64;
                }
                Err(Errno::INTR) => {}
                Err(e) if *total == 0 && unsupported(e) => {
                    // Not a path for this output after all: put the file
                    // offset back so the next path starts from the start.
                    let back = -(left as i64);
                    return match rustix::fs::seek(input, rustix::fs::SeekFrom::Current(back)) {
                        Ok(_) => None,
                        Err(e) => Some(Err((Side::Read, e.into()))),
                    };
                }
                Err(e) => return Some(Err((Side::Write, e.into()))),
            }
        }
    }
}

fn read_write(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    mut total: u64,
) -> Result<(u64, Path), (Side, io::Error)> {
    let mut buf = BufMut::with_capacity(128 << 10);
    let cap = buf.capacity();
    buf.commit(cap);
    loop {
        let n = match rustix::io::read(input, &mut buf[..]) {
            Ok(0) => return Ok((total, Path::ReadWrite)),
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err((Side::Read, e.into())),
        };
        let mut data = &buf[..n];
        while !data.is_empty() {
            match rustix::io::write(output, data) {
                Ok(0) => return Err((Side::Write, io::ErrorKind::WriteZero.into())),
                Ok(k) => data = &data[k..],
                Err(Errno::INTR) => {}
                Err(e) => return Err((Side::Write, e.into())),
            }
        }
        total += n as u64;
    }
}
