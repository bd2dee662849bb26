//! Reads and writes on descriptors: EINTR retried, partial writes resumed,
//! and no signal death (SIGPIPE on pipes and sockets, SIGXFSZ past
//! `RLIMIT_FSIZE`).

use super::sigguard::SignalGuard;
use rustix::io::Errno;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

/// How writes to a descriptor must be made so that they cannot kill the
/// process with a signal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// No signal possible (regular file with no size limit, terminal, …).
    Plain,
    /// A pipe or FIFO: SIGPIPE is blocked around the write.
    Pipe,
    /// A socket: `send(MSG_NOSIGNAL)`.
    Socket,
    /// A regular file under a finite `RLIMIT_FSIZE`: SIGXFSZ is blocked.
    Limited,
}

/// What a descriptor is, as far as streams care.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FdInfo {
    pub regular: bool,
    /// The size when looked at (regular files).
    pub size: u64,
    pub dir: bool,
    pub write: WriteKind,
    /// On a network or FUSE file system (where mapping is a poor idea).
    pub remote: bool,
}

pub(crate) fn fd_info(fd: BorrowedFd<'_>) -> io::Result<FdInfo> {
    fd_info_for(fd, true, 0)
}

/// [`fd_info`] for a descriptor that is only read: no `RLIMIT_FSIZE`
/// (nothing is written through it), and the file system asked about only
/// for a regular file of `map_from` bytes or more (smaller ones are read,
/// not mapped, wherever they are). A small file then costs one `fstat`.
pub(crate) fn read_info(fd: BorrowedFd<'_>, map_from: u64) -> io::Result<FdInfo> {
    fd_info_for(fd, false, map_from)
}

fn fd_info_for(fd: BorrowedFd<'_>, writing: bool, map_from: u64) -> io::Result<FdInfo> {
    use rustix::fs::FileType;
    let st = rustix::fs::fstat(fd)?;
    let ft = FileType::from_raw_mode(st.st_mode);
    let regular = ft == FileType::RegularFile;
    let limited = writing
        && regular
        && rustix::process::getrlimit(rustix::process::Resource::Fsize)
            .current
            .is_some();
    let write = match ft {
        FileType::Fifo => WriteKind::Pipe,
        FileType::Socket => WriteKind::Socket,
        _ if limited => WriteKind::Limited,
        _ => WriteKind::Plain,
    };
    Ok(FdInfo {
        regular,
        size: st.st_size as u64,
        dir: ft == FileType::Directory,
        write,
        remote: regular && st.st_size as u64 >= map_from && is_remote_fs(fd),
    })
}

/// Network and FUSE file systems (by `statfs` magic number).
fn is_remote_fs(fd: BorrowedFd<'_>) -> bool {
    const REMOTE: [i64; 9] = [
        0x6969,     // NFS
        0xFF534D42, // CIFS
        0xFE534D42, // SMB2
        0x517B,     // SMB
        0x65735546, // FUSE
        0x01021997, // 9P (v9fs)
        0x00C36400, // Ceph
        0x47504653, // GPFS
        0x0BD00BD0, // Lustre
    ];
    match rustix::fs::fstatfs(fd) {
        // f_type's integer type differs between architectures.
        #[allow(clippy::unnecessary_cast)]
        Ok(s) => REMOTE.contains(&(s.f_type as i64)),
        Err(_) => false,
    }
}

pub(crate) fn file_size(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(rustix::fs::fstat(fd)?.st_size as u64)
}

/// Is `fd` open in append mode (`O_APPEND`)?
pub(crate) fn is_append(fd: BorrowedFd<'_>) -> io::Result<bool> {
    let fl = rustix::fs::fcntl_getfl(fd)?;
    Ok(fl.contains(rustix::fs::OFlags::APPEND))
}

/// The descriptor's own file offset.
pub(crate) fn tell(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(rustix::fs::seek(fd, rustix::fs::SeekFrom::Current(0))?)
}

/// Sets the descriptor's own file offset.
pub(crate) fn seek_to(fd: BorrowedFd<'_>, pos: u64) -> io::Result<()> {
    rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(pos))?;
    Ok(())
}

fn retry<T>(mut f: impl FnMut() -> Result<T, Errno>) -> Result<T, Errno> {
    loop {
        match f() {
            Err(Errno::INTR) => continue,
            r => return r,
        }
    }
}

/// One `pread` (EINTR retried).
pub(crate) fn read_at(fd: BorrowedFd<'_>, buf: &mut [u8], off: u64) -> io::Result<usize> {
    Ok(retry(|| rustix::io::pread(fd, &mut *buf, off))?)
}

/// One `pread` into memory not yet initialized (EINTR retried); returns
/// how many bytes it filled, from the start of `buf`.
pub(crate) fn read_at_uninit(
    fd: BorrowedFd<'_>,
    buf: &mut [std::mem::MaybeUninit<u8>],
    off: u64,
) -> io::Result<usize> {
    Ok(retry(|| {
        rustix::io::pread(fd, &mut *buf, off).map(|(init, _)| init.len())
    })?)
}

/// One `read` into memory not yet initialized (EINTR retried).
pub(crate) fn read_uninit(
    fd: BorrowedFd<'_>,
    buf: &mut [std::mem::MaybeUninit<u8>],
) -> io::Result<usize> {
    Ok(retry(|| {
        rustix::io::read(fd, &mut *buf).map(|(init, _)| init.len())
    })?)
}

/// One `read` (EINTR retried).
pub(crate) fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    Ok(retry(|| rustix::io::read(fd, &mut *buf))?)
}

/// Writes all of `data` (at `off` if given, else at the descriptor's
/// offset), resuming after partial writes. Returns the bytes written and
/// the error that stopped it, if any: bytes counted were written.
pub(crate) fn write_all(
    fd: BorrowedFd<'_>,
    kind: WriteKind,
    data: &[u8],
    off: Option<u64>,
) -> (usize, Option<io::Error>) {
    let guard = match kind {
        WriteKind::Pipe => Some(SignalGuard::sigpipe()),
        WriteKind::Limited => Some(SignalGuard::sigxfsz()),
        _ => None,
    };
    hand_over(data, guard, "the file", |rest, done| match (kind, off) {
        (_, Some(o)) => rustix::io::pwrite(fd, rest, o + done as u64),
        (WriteKind::Socket, None) => rustix::net::send(fd, rest, rustix::net::SendFlags::NOSIGNAL),
        (_, None) => rustix::io::write(fd, rest),
    })
}

/// The loop of `write_all` and `vmsplice_all`: `step(rest, done)` moves a
/// prefix of `rest` (the bytes after the first `done`); EINTR is retried,
/// partial moves resumed, and an error the guard's signal would have
/// raised is noted on it. Returns the bytes moved and the error that
/// stopped it, if any.
fn hand_over(
    data: &[u8],
    mut guard: Option<SignalGuard>,
    target: &str,
    mut step: impl FnMut(&[u8], usize) -> Result<usize, Errno>,
) -> (usize, Option<io::Error>) {
    let mut done = 0;
    while done < data.len() {
        match retry(|| step(&data[done..], done)) {
            Ok(0) => {
                return (
                    done,
                    Some(io::Error::new(
                        io::ErrorKind::WriteZero,
                        format!("{target} accepted no more bytes"),
                    )),
                )
            }
            Ok(n) => done += n,
            Err(e) => {
                if let Some(g) = guard.as_mut() {
                    g.saw(e);
                }
                return (done, Some(e.into()));
            }
        }
    }
    (done, None)
}

/// `write(2)` at the descriptor's position that does not wait for room
/// in a pipe: `pwritev2` with `RWF_NOWAIT`, which says `EAGAIN` (after
/// writing what fitted) instead of blocking, so that the caller can wait
/// in `poll` with a deadline and a wake-up. A terminal takes no such flag
/// (`EOPNOTSUPP`): it is written through a second, non-blocking open of
/// itself (`/proc/self/fd`), leaving the caller's descriptor's flags
/// alone. Other files that refuse the flag get a plain `write`.
pub(crate) fn write_nowait(fd: BorrowedFd<'_>, data: &[u8]) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: one iovec over `data`, which outlives the call and which the
    // kernel only reads; offset -1 is the descriptor's own position.
    let r = unsafe { libc::pwritev2(fd.as_raw_fd(), &iov, 1, -1, libc::RWF_NOWAIT) };
    if r >= 0 {
        return Ok(r as usize);
    }
    let e = io::Error::last_os_error();
    if !matches!(e.raw_os_error(), Some(libc::EOPNOTSUPP | libc::EINVAL)) {
        return Err(e);
    }
    if rustix::termios::isatty(fd) {
        let again = rustix::fs::open(
            format!("/proc/self/fd/{}", fd.as_raw_fd()),
            rustix::fs::OFlags::WRONLY
                | rustix::fs::OFlags::NONBLOCK
                | rustix::fs::OFlags::NOCTTY
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        );
        if let Ok(nb) = again {
            return Ok(rustix::io::write(&nb, data)?);
        }
    }
    Ok(rustix::io::write(fd, data)?)
}

/// `read(2)` at the descriptor's position that does not wait for data
/// (`preadv2` with `RWF_NOWAIT`: `EAGAIN`), for a caller that waits in
/// `poll` and may have lost the bytes to another reader since. Where the
/// flag is refused, a plain `read`.
pub(crate) fn read_nowait(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    // SAFETY: one iovec over `buf`, exclusively borrowed for the call;
    // offset -1 is the descriptor's own position.
    let r = unsafe { libc::preadv2(fd.as_raw_fd(), &iov, 1, -1, libc::RWF_NOWAIT) };
    if r >= 0 {
        return Ok(r as usize);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EOPNOTSUPP | libc::EINVAL) => Ok(rustix::io::read(fd, buf)?),
        _ => Err(e),
    }
}

/// Asks the kernel to make a pipe's capacity at least `bytes`; returns the
/// capacity it set (capped by `/proc/sys/fs/pipe-max-size` for unprivileged
/// processes: `EPERM` past it).
pub(crate) fn set_pipe_size(fd: BorrowedFd<'_>, bytes: usize) -> io::Result<usize> {
    Ok(rustix::pipe::fcntl_setpipe_size(fd, bytes)?)
}

/// `fsync`.
pub(crate) fn sync_all(fd: BorrowedFd<'_>) -> io::Result<()> {
    Ok(retry(|| rustix::fs::fsync(fd))?)
}

/// Hands `data` to the pipe `fd` by reference (`vmsplice`): the pipe takes
/// references to the pages under `data`, not a copy, so the pages must not
/// change until the reader has read them — callers pass only a file's own
/// page-cache pages, mapped read-only. SIGPIPE is blocked around it, EINTR
/// retried, partial transfers resumed. Returns the bytes handed over and
/// the error that stopped it, as `write_all` does.
pub(crate) fn vmsplice_all(fd: BorrowedFd<'_>, data: &[u8]) -> (usize, Option<io::Error>) {
    use rustix::fs::OFlags;
    // vmsplice on a descriptor open only for reading would move data from
    // the pipe into `data`; refuse anything not open for writing.
    match rustix::fs::fcntl_getfl(fd) {
        Ok(f) if f.intersects(OFlags::WRONLY | OFlags::RDWR) => {}
        Ok(_) => return (0, Some(io::Error::from_raw_os_error(libc::EBADF))),
        Err(e) => return (0, Some(e.into())),
    }
    hand_over(data, Some(SignalGuard::sigpipe()), "the pipe", |rest, _| {
        let rest = [rustix::pipe::IoSliceRaw::from_slice(rest)];
        // SAFETY: `fd` is open for writing (checked above), so the kernel
        // only reads `rest` — it takes references to its pages for the
        // pipe and never writes through them.
        unsafe { rustix::pipe::vmsplice(fd, &rest, rustix::pipe::SpliceFlags::empty()) }
    })
}

/// Closes `fd`, reporting the error `close` gives (which dropping an
/// `OwnedFd` ignores): a file system that reports a failed write-back at
/// close (NFS) says so here.
pub(crate) fn close(fd: std::os::fd::OwnedFd) -> io::Result<()> {
    let raw = std::os::fd::IntoRawFd::into_raw_fd(fd);
    // SAFETY: `raw` was just taken out of its OwnedFd, which no longer
    // closes it; it is closed once, here. EINTR is not retried: on Linux
    // the descriptor is gone either way.
    match unsafe { libc::close(raw) } {
        0 => Ok(()),
        _ => Err(io::Error::last_os_error()),
    }
}
