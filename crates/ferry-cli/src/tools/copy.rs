//! Moving a whole input to an output the fastest correct way: the kernel's
//! copy paths first (copy_file_range between regular files — on two
//! threads for large files, the second filling the output's mapped pages
//! on ext4 — splice into a pipe, sendfile from a regular file), then
//! read/write through a page-aligned buffer.

use ferry::BufMut;
use rustix::io::Errno;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

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
    if pos == end {
        return Ok(pos - from);
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
/// on ext4 one copy_file_range thread and one filling a mapping
/// ([`copy_shared`]); elsewhere this thread copies the first half with
/// copy_file_range while another copies the second (one thread when no
/// second can be started). Returns how far the copy
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
    // Under a file size limit (`ulimit -f`), one thread in order: the
    // output then stops exactly at the limit, with every byte before it
    // copied, when SIGXFSZ ends the program, as GNU's tools leave it.
    // (Read once per process: a tree of small files would otherwise ask
    // once per file.)
    static LIMITED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let limited = *LIMITED.get_or_init(|| {
        rustix::process::getrlimit(rustix::process::Resource::Fsize)
            .current
            .is_some()
    });
    if end - from < PARALLEL_MIN || limited {
        return copy_at(input, output, (from, end), out_from, progress);
    }
    if fills_in_parallel(output) {
        if let Some(done) = copy_shared(input, output, (from, end), out_from, progress) {
            return done;
        }
    }
    let mid = from + (end - from) / 2;
    let out_mid = out_from + (mid - from);
    // How far the first half got, for a failure: the output is then cut
    // to the bytes copied without a gap, as a one-thread copy leaves it.
    let first_done = std::sync::atomic::AtomicU64::new(0);
    let first_progress = |n: u64| {
        first_done.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
        progress(n);
    };
    let (a, b) = std::thread::scope(|s| {
        let second = std::thread::Builder::new()
            .spawn_scoped(s, || copy_at(input, output, (mid, end), out_mid, progress));
        let a = copy_at(input, output, (from, mid), out_from, &first_progress);
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
    match (a, b) {
        (Ok(a), Ok(b)) => Ok(if a < mid - from { a } else { a + b }),
        (Ok(a), Err(e)) if a == mid - from => {
            // The second half failed: nothing of it is counted.
            let _ = rustix::fs::ftruncate(output, out_mid);
            Err(e)
        }
        (Ok(_), Err(e)) | (Err(e), _) => {
            let done = first_done.load(std::sync::atomic::Ordering::Relaxed);
            let _ = rustix::fs::ftruncate(output, out_from + done);
            Err(e)
        }
    }
}

/// Whether the output's file system is one where filling a shared mapping
/// ([`ferry::read_into_file`]) runs beside copy_file_range: ext4, where
/// copy_file_range copies through the page cache (measured there; on file
/// systems that clone or copy on the server, copy_file_range alone is
/// better).
fn fills_in_parallel(output: BorrowedFd<'_>) -> bool {
    const EXT4_SUPER_MAGIC: u64 = 0xEF53;
    rustix::fs::fstatfs(output).is_ok_and(|s| s.f_type as u64 == EXT4_SUPER_MAGIC)
}

/// Pieces handed out by [`copy_shared`].
const PIECE: u64 = 8 << 20;

/// The two-thread copy where writers cannot share the output's inode lock:
/// the output range is allocated first (so a full disk says so before any
/// byte moves), then this thread takes 8 MiB pieces from the front and
/// copies them with copy_file_range (the kernel's write path, which holds
/// the lock), while a second thread takes pieces from the back and reads
/// them straight into a shared mapping of the output (page faults, which
/// do not; the mapping asks for huge pages, see [`ferry::read_into_file`]).
/// They meet where their speeds put them. Measured on ext4 here for 1 GiB
/// (`scripts/cp-paths.sh`): 0.17–0.18 s against GNU cp's 0.36, where two
/// copy_file_range threads were 1.0× GNU (they take turns on the lock).
/// `None`: this way does not apply (no readable
/// descriptor for the output, or the range could not be allocated);
/// nothing was written and the output's length is as it was.
fn copy_shared(
    input: BorrowedFd<'_>,
    output: BorrowedFd<'_>,
    (from, end): (u64, u64),
    out_from: u64,
    progress: &(dyn Fn(u64) + Sync),
) -> Option<Result<u64, (Side, io::Error)>> {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Mutex;
    // A shared writable mapping needs the output open for reading too.
    let reopened = readable(output)?;
    let mapped = reopened.as_ref().map_or(output, |f| f.as_fd());
    let size_before = rustix::fs::fstat(output).ok()?.st_size as u64;
    if rustix::fs::fallocate(
        output,
        rustix::fs::FallocateFlags::empty(),
        out_from,
        end - from,
    )
    .is_err()
    {
        // Not supported here, or no room for all of it (ext4 then keeps
        // what it did allocate, zeros that lengthen the file): put the
        // length back and let the plain copy write what fits and report
        // the error as GNU's tools do.
        rustix::fs::ftruncate(output, size_before).ok()?;
        return None;
    }
    // The input range not yet handed out: [front, back).
    let left = Mutex::new((from, end));
    // The lowest input offset where a piece ended early or failed.
    let gap = AtomicU64::new(end);
    let stop = AtomicBool::new(false);
    let failure: Mutex<Option<(Side, io::Error)>> = Mutex::new(None);
    let take = |from_back: bool| -> Option<(u64, u64)> {
        if stop.load(Ordering::Relaxed) {
            return None;
        }
        let mut l = left.lock().unwrap_or_else(|p| p.into_inner());
        let (front, back) = *l;
        if front >= back {
            return None;
        }
        // Pieces from the back end on PIECE boundaries of the output, so
        // each mapping starts where a huge page can (the first one takes
        // the odd tail): a copy of 1 GiB - 12345 bytes took 0.23–0.25 s
        // with pieces counted from the end, 0.20–0.21 with them aligned
        // (1 GiB, whose pieces align either way: 0.17–0.18).
        let out_back = out_from + (back - from);
        let n = if from_back && !out_back.is_multiple_of(PIECE) {
            out_back % PIECE
        } else {
            PIECE
        }
        .min(back - front);
        Some(if from_back {
            l.1 = back - n;
            (back - n, back)
        } else {
            l.0 = front + n;
            (front, front + n)
        })
    };
    let ended = |p: u64, r: Result<u64, (Side, io::Error)>, want: u64| match r {
        Ok(n) if n == want => {}
        Ok(n) => {
            // The input ends inside this piece (it shrank under the copy):
            // nothing past it counts. The other pieces still go on, as the
            // end is the lowest such point, wherever it is.
            gap.fetch_min(p + n, Ordering::Relaxed);
        }
        Err(e) => {
            gap.fetch_min(p, Ordering::Relaxed);
            stop.store(true, Ordering::Relaxed);
            failure
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(e);
        }
    };
    let front_work = || {
        while let Some((a, b)) = take(false) {
            let r = copy_at(input, output, (a, b), out_from + (a - from), progress);
            ended(a, r, b - a);
        }
    };
    let back_work = || {
        while let Some((a, b)) = take(true) {
            let r =
                ferry::read_into_file(input, a, mapped, out_from + (a - from), (b - a) as usize)
                    .map(|n| {
                        progress(n as u64);
                        n as u64
                    })
                    .map_err(|e| {
                        // The system's own errors come from reading the input;
                        // a page of the output that could not be written is
                        // reported by ferry in its own words.
                        let side = if e.raw_os_error().is_some() {
                            Side::Read
                        } else {
                            Side::Write
                        };
                        (side, e)
                    });
            ended(a, r, b - a);
        }
    };
    std::thread::scope(|s| {
        let back = std::thread::Builder::new().spawn_scoped(s, back_work);
        front_work();
        if let Ok(h) = back {
            if h.join().is_err() {
                ended(
                    from,
                    Err((Side::Write, io::Error::other("copy thread failed"))),
                    0,
                );
            }
        }
    });
    // Copied without a gap: up to the first short or failed piece, or to
    // the first piece never handed out.
    let (front, back) = *left.lock().unwrap_or_else(|p| p.into_inner());
    let mut reached = gap.load(Ordering::Relaxed);
    if front < back {
        reached = reached.min(front);
    }
    let done = reached - from;
    if reached < end {
        // The allocation reached past what was copied: cut it back.
        if let Err(e) = rustix::fs::ftruncate(output, out_from + done) {
            return Some(Err((Side::Write, e.into())));
        }
    }
    if let Some(e) = failure.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Some(Err(e));
    }
    Some(Ok(done))
}

/// `None` when `output` is open for reading and writing; else the same
/// file opened again for both (through /proc/self/fd, checked to be the
/// same inode), as `cat` is handed a write-only standard output. `None`
/// from the outer level: no readable descriptor can be had.
fn readable(output: BorrowedFd<'_>) -> Option<Option<std::fs::File>> {
    use rustix::fs::OFlags;
    let flags = rustix::fs::fcntl_getfl(output).ok()?;
    if flags & OFlags::RWMODE == OFlags::RDWR {
        return Some(None);
    }
    let path = format!("/proc/self/fd/{}", output.as_raw_fd());
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .ok()?;
    let (a, b) = (rustix::fs::fstat(output).ok()?, rustix::fs::fstat(&f).ok()?);
    (a.st_dev == b.st_dev && a.st_ino == b.st_ino).then_some(Some(f))
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
        // /tmp (ext4 here: copy_file_range beside a mapping) and /dev/shm
        // (tmpfs: two copy_file_range halves).
        halves_in(tempfile::tempdir().expect("tempdir"));
        if let Ok(d) = tempfile::tempdir_in("/dev/shm") {
            halves_in(d);
        }
    }

    fn halves_in(d: tempfile::TempDir) {
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
