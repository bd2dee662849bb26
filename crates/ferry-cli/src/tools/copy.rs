//! Moving a whole input to an output the fastest correct way: the kernel's
//! copy paths first (copy_file_range between regular files — by two
//! threads, a half each, for large files — splice into a pipe, sendfile
//! from a regular file), then read/write through a page-aligned buffer.

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
        split_regular(input, output, &mut total)?;
        let mut moved = false;
        loop {
            match rustix::fs::copy_file_range(input, None, output, None, CHUNK) {
                Ok(0) => return Ok((total, Path::CopyFileRange)),
                Ok(n) => {
                    total += n as u64;
                    moved = true;
                }
                Err(Errno::INTR) => {}
                Err(e) if !moved && unsupported(e) => break,
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

/// Ranges of this many bytes or more are copied by two threads.
pub const PARALLEL_MIN: u64 = 64 << 20;
const STEP: usize = 64 << 20;

/// Copies input bytes `[from, end)` to the output starting at `out_from`,
/// with copy_file_range, or pread/pwrite through a page-aligned buffer
/// where the kernel will not. Neither file offset moves. `progress` hears
/// of every piece done. Returns the bytes copied: fewer than asked when
/// the input ends early (it shrank under the copy).
pub fn copy_at(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    (from, end): (u64, u64),
    out_from: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, (Side, io::Error)> {
    let mut pos = from;
    let mut fallback = false;
    while pos < end && !fallback {
        let want = ((end - pos) as usize).min(STEP);
        let (mut a, mut b) = (pos, out_from + (pos - from));
        match rustix::fs::copy_file_range(input, Some(&mut a), output, Some(&mut b), want) {
            Ok(0) => return Ok(pos - from),
            Ok(n) => {
                pos += n as u64;
                progress(n as u64);
            }
            Err(Errno::INTR) => {}
            Err(Errno::XDEV | Errno::NOSYS | Errno::INVAL | Errno::OPNOTSUPP) => fallback = true,
            Err(e) => return Err((Side::Write, e.into())),
        }
    }
    let mut buf = BufMut::with_capacity(1 << 20);
    let cap = buf.capacity();
    buf.commit(cap);
    while pos < end {
        let want = ((end - pos) as usize).min(cap);
        let n = match rustix::io::pread(input, &mut buf[..want], pos) {
            Ok(0) => return Ok(pos - from),
            Ok(n) => n,
            Err(Errno::INTR) => continue,
            Err(e) => return Err((Side::Read, e.into())),
        };
        let at = out_from + (pos - from);
        let mut done = 0;
        while done < n {
            match rustix::io::pwrite(output, &buf[done..n], at + done as u64) {
                Ok(0) => return Err((Side::Write, io::ErrorKind::WriteZero.into())),
                Ok(k) => done += k,
                Err(Errno::INTR) => {}
                Err(e) => return Err((Side::Write, e.into())),
            }
        }
        pos += n as u64;
        progress(n as u64);
    }
    Ok(pos - from)
}

/// [`copy_at`] by two threads when the range is [`PARALLEL_MIN`] or more:
/// this thread copies the first half while another copies the second
/// (one thread when no second can be started). Returns how far the copy
/// reached without a gap from `from`: if the input shrank under the first
/// half, what the second half wrote past that point is not counted (the
/// caller cuts the output there).
pub fn copy_split(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    (from, end): (u64, u64),
    out_from: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, (Side, io::Error)> {
    if end - from < PARALLEL_MIN {
        return copy_at(input, output, (from, end), out_from, progress);
    }
    let mid = from + (end - from) / 2;
    let out_mid = out_from + (mid - from);
    let (a, b) = std::thread::scope(|s| {
        let second = std::thread::Builder::new()
            .spawn_scoped(s, || copy_at(input, output, (mid, end), out_mid, progress));
        let a = copy_at(input, output, (from, mid), out_from, progress);
        let b = match second {
            Ok(h) => h
                .join()
                .unwrap_or_else(|_| Err((Side::Write, io::Error::other("copy thread failed")))),
            Err(_) if matches!(a, Ok(n) if n == mid - from) => {
                copy_at(input, output, (mid, end), out_mid, progress)
            }
            Err(_) => Ok(0),
        };
        (a, b)
    });
    let a = a?;
    let b = b?;
    Ok(if a < mid - from { a } else { a + b })
}

/// The two-thread copy for `copy`'s regular file → regular file case:
/// from the input's offset to its size as it is now, to the output's
/// offset, both offsets moved past what was copied as one copy_file_range
/// loop would leave them. Only when the output ends at its offset (a new
/// or truncated file, nothing of it past where this copy starts) and is
/// not in append mode; otherwise, or for smaller inputs, nothing is done
/// and the caller's one-thread loop copies everything.
fn split_regular(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    total: &mut u64,
) -> Result<(), (Side, io::Error)> {
    use rustix::fs::{fstat, seek, SeekFrom};
    let (Ok(in_st), Ok(in_off)) = (fstat(input), seek(input, SeekFrom::Current(0))) else {
        return Ok(());
    };
    let end = in_st.st_size as u64;
    if end < in_off.saturating_add(PARALLEL_MIN) {
        return Ok(());
    }
    let appending =
        rustix::fs::fcntl_getfl(output).map_or(true, |f| f.contains(rustix::fs::OFlags::APPEND));
    let (Ok(out_st), Ok(out_off)) = (fstat(output), seek(output, SeekFrom::Current(0))) else {
        return Ok(());
    };
    if appending || out_off != out_st.st_size as u64 {
        return Ok(());
    }
    let n = copy_split(input, output, (in_off, end), out_off, &|_| {})?;
    if n < end - in_off {
        // The input shrank: the output ends where one sequential copy
        // would have ended it.
        rustix::fs::ftruncate(output, out_off + n).map_err(|e| (Side::Write, e.into()))?;
    }
    seek(input, SeekFrom::Start(in_off + n)).map_err(|e| (Side::Read, e.into()))?;
    seek(output, SeekFrom::Start(out_off + n)).map_err(|e| (Side::Write, e.into()))?;
    *total += n;
    Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A file of `n` bytes where every 8-byte word holds its own offset, so
    /// a piece copied to the wrong place cannot go unseen.
    fn numbered(dir: &std::path::Path, n: usize) -> (std::fs::File, Vec<u8>) {
        let data: Vec<u8> = (0..n.div_ceil(8) as u64)
            .flat_map(|i| (i * 8).to_le_bytes())
            .take(n)
            .collect();
        let p = dir.join(format!("numbered-{n}"));
        std::fs::File::create(&p)
            .and_then(|mut f| f.write_all(&data))
            .expect("write the input");
        (std::fs::File::open(&p).expect("open the input"), data)
    }

    fn output(dir: &std::path::Path, name: &str) -> (std::fs::File, std::path::PathBuf) {
        let p = dir.join(name);
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&p)
            .expect("create the output");
        (f, p)
    }

    #[test]
    fn two_halves_land_at_their_offsets() {
        let d = tempfile::tempdir().expect("tempdir");
        let n = PARALLEL_MIN as usize + 12_345;
        let (input, data) = numbered(d.path(), n);
        let (out, path) = output(d.path(), "out");
        let heard = AtomicU64::new(0);
        let progress = |k: u64| {
            heard.fetch_add(k, Ordering::Relaxed);
        };
        // From input offset 1000 to output offset 777.
        let got =
            copy_split(input.as_fd(), out.as_fd(), (1000, n as u64), 777, &progress).expect("copy");
        assert_eq!(got, n as u64 - 1000);
        assert_eq!(heard.load(Ordering::Relaxed), got);
        let back = std::fs::read(&path).expect("read the output");
        assert_eq!(back.len(), 777 + n - 1000);
        assert!(back[..777].iter().all(|&b| b == 0), "a hole before 777");
        assert!(back[777..] == data[1000..], "bytes moved");
        // Neither file offset moved.
        assert_eq!(
            rustix::fs::seek(&input, rustix::fs::SeekFrom::Current(0)).ok(),
            Some(0)
        );
        assert_eq!(
            rustix::fs::seek(&out, rustix::fs::SeekFrom::Current(0)).ok(),
            Some(0)
        );
    }

    #[test]
    fn an_input_shorter_than_the_range_counts_only_what_has_no_gap() {
        let d = tempfile::tempdir().expect("tempdir");
        let n = PARALLEL_MIN as usize + 4096;
        let (input, data) = numbered(d.path(), n);
        // The second half finds the end part way: all counted.
        let (out, path) = output(d.path(), "second-short");
        let end = 2 * n as u64 - 2 * 4096;
        let got = copy_split(input.as_fd(), out.as_fd(), (0, end), 0, &|_| {}).expect("copy");
        assert_eq!(got, n as u64);
        assert!(std::fs::read(&path).expect("read") == data);
        // The first half finds the end: only it counts (the caller cuts
        // the output there); here the second half had nothing to copy.
        let (out, path) = output(d.path(), "first-short");
        let got =
            copy_split(input.as_fd(), out.as_fd(), (0, 4 * n as u64), 0, &|_| {}).expect("copy");
        assert_eq!(got, n as u64);
        assert!(std::fs::read(&path).expect("read") == data);
    }

    #[test]
    fn small_ranges_and_a_full_disk() {
        let d = tempfile::tempdir().expect("tempdir");
        let (input, data) = numbered(d.path(), 100_000);
        let (out, path) = output(d.path(), "small");
        let got = copy_at(input.as_fd(), out.as_fd(), (10, 100_000), 0, &|_| {}).expect("copy");
        assert_eq!(got, 99_990);
        assert!(std::fs::read(&path).expect("read") == data[10..]);
        // /dev/full: copy_file_range does not apply, pwrite says ENOSPC.
        let full = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .expect("/dev/full");
        match copy_at(input.as_fd(), full.as_fd(), (0, 100_000), 0, &|_| {}) {
            Err((Side::Write, e)) => assert_eq!(e.raw_os_error(), Some(libc::ENOSPC)),
            other => panic!("expected a write error, got {other:?}"),
        }
    }
}
