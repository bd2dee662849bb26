//! The system calls of the transfer engine (`crate::transfer`): the
//! kernel's copy paths (`copy_file_range`, `splice`, `sendfile`), single
//! reads and writes for the user-space fallback, and what choosing a path
//! needs to know of a descriptor. Each is one call (EINTR retried) turned
//! into an `io::Result`; the engine decides what an error means.

use rustix::io::Errno;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

fn retry<T>(mut f: impl FnMut() -> Result<T, Errno>) -> io::Result<T> {
    loop {
        match f() {
            Err(Errno::INTR) => continue,
            r => return r.map_err(io::Error::from),
        }
    }
}

/// One `copy_file_range` of up to `len` bytes. With an offset given, it is
/// used and advanced instead of that descriptor's own offset.
pub(crate) fn copy_file_range(
    input: BorrowedFd<'_>,
    mut in_off: Option<&mut u64>,
    output: BorrowedFd<'_>,
    mut out_off: Option<&mut u64>,
    len: usize,
) -> io::Result<usize> {
    retry(|| {
        rustix::fs::copy_file_range(
            input,
            in_off.as_deref_mut(),
            output,
            out_off.as_deref_mut(),
            len,
        )
    })
}

/// What `splice` is told besides the descriptors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SpliceHint {
    /// No flags.
    None,
    /// `SPLICE_F_MORE`: more data follows.
    More,
    /// `SPLICE_F_MOVE`: move pages rather than copy, where possible.
    Move,
}

/// One `splice` of up to `len` bytes from `from` to `to` (one of them a
/// pipe), at both descriptors' own offsets.
pub(crate) fn splice(
    from: BorrowedFd<'_>,
    to: BorrowedFd<'_>,
    len: usize,
    hint: SpliceHint,
) -> io::Result<usize> {
    use rustix::pipe::SpliceFlags;
    let flags = match hint {
        SpliceHint::None => SpliceFlags::empty(),
        SpliceHint::More => SpliceFlags::MORE,
        SpliceHint::Move => SpliceFlags::MOVE,
    };
    retry(|| rustix::pipe::splice(from, None, to, None, len, flags))
}

/// One `sendfile` of up to `len` bytes from `input`'s offset to `output`.
pub(crate) fn sendfile(
    output: BorrowedFd<'_>,
    input: BorrowedFd<'_>,
    len: usize,
) -> io::Result<usize> {
    retry(|| rustix::fs::sendfile(output, input, None, len))
}

/// One `splice` of up to `len` bytes from the file `from`, at `*off`
/// (advanced by what moved; the descriptor's own offset stays), into the
/// pipe `to`.
pub(crate) fn splice_from_at(
    from: BorrowedFd<'_>,
    off: &mut u64,
    to: BorrowedFd<'_>,
    len: usize,
) -> io::Result<usize> {
    use rustix::pipe::SpliceFlags;
    retry(|| rustix::pipe::splice(from, Some(&mut *off), to, None, len, SpliceFlags::MORE))
}

/// One `sendfile` of up to `len` bytes from `input` at `*off` (advanced by
/// what moved; the descriptor's own offset stays) to `output`.
pub(crate) fn sendfile_at(
    output: BorrowedFd<'_>,
    input: BorrowedFd<'_>,
    off: &mut u64,
    len: usize,
) -> io::Result<usize> {
    retry(|| rustix::fs::sendfile(output, input, Some(&mut *off), len))
}

/// A descriptor known to be open for writing, so that `vmsplice` on it
/// only reads memory (on a descriptor open for reading, vmsplice moves
/// the pipe's bytes *into* the memory instead).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WriteEnd<'fd>(BorrowedFd<'fd>);

impl<'fd> WriteEnd<'fd> {
    /// Checks `fd`'s access mode (`F_GETFL`): `EBADF` if not open for
    /// writing.
    pub(crate) fn check(fd: BorrowedFd<'fd>) -> io::Result<WriteEnd<'fd>> {
        use rustix::fs::OFlags;
        let fl = rustix::fs::fcntl_getfl(fd)?;
        if fl.intersects(OFlags::WRONLY | OFlags::RDWR) {
            Ok(WriteEnd(fd))
        } else {
            Err(io::Error::from_raw_os_error(libc::EBADF))
        }
    }
}

/// One `vmsplice` of up to all of `data` into the pipe `to` (EINTR
/// retried): the pipe takes references to the pages under `data`.
///
/// The caller must see to it that those pages are never written again
/// while the kernel may hold them (a lent block, a file's pages, static
/// bytes) and that SIGPIPE cannot kill the process (a guard).
pub(crate) fn vmsplice(to: WriteEnd<'_>, data: &[u8]) -> io::Result<usize> {
    let iov = [rustix::pipe::IoSliceRaw::from_slice(data)];
    // SAFETY: `to` is open for writing (a `WriteEnd`) and no SPLICE_F_GIFT
    // is given, so the kernel only reads `data`'s pages — it takes
    // references to them and never writes through them.
    retry(|| unsafe { rustix::pipe::vmsplice(to.0, &iov, rustix::pipe::SpliceFlags::empty()) })
}

/// A new pipe, both ends close-on-exec: (read end, write end).
pub(crate) fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    retry(|| rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC))
}

/// One `read` at the descriptor's offset.
pub(crate) fn read(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<usize> {
    retry(|| rustix::io::read(fd, &mut *buf))
}

/// One `write` at the descriptor's offset.
pub(crate) fn write(fd: BorrowedFd<'_>, data: &[u8]) -> io::Result<usize> {
    retry(|| rustix::io::write(fd, data))
}

/// One `pread` at `off`.
pub(crate) fn pread(fd: BorrowedFd<'_>, buf: &mut [u8], off: u64) -> io::Result<usize> {
    retry(|| rustix::io::pread(fd, &mut *buf, off))
}

/// One `pwrite` at `off`.
pub(crate) fn pwrite(fd: BorrowedFd<'_>, data: &[u8], off: u64) -> io::Result<usize> {
    retry(|| rustix::io::pwrite(fd, data, off))
}

/// What `fstat` says of a descriptor, as far as the engine cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Meta {
    /// `st_mode` (type and permission bits).
    pub mode: u32,
    pub size: u64,
    pub dev: u64,
    pub ino: u64,
}

/// `fstat`.
// The field types differ between architectures.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn meta(fd: BorrowedFd<'_>) -> io::Result<Meta> {
    let st = retry(|| rustix::fs::fstat(fd))?;
    Ok(Meta {
        mode: st.st_mode as u32,
        size: st.st_size as u64,
        dev: st.st_dev as u64,
        ino: st.st_ino as u64,
    })
}

/// The file-type bits of a mode: regular file, FIFO, socket or other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ModeType {
    Regular,
    Fifo,
    Socket,
    Other,
}

/// The file type a `st_mode` names.
pub(crate) fn mode_type(mode: u32) -> ModeType {
    use rustix::fs::FileType;
    match FileType::from_raw_mode(mode as _) {
        FileType::RegularFile => ModeType::Regular,
        FileType::Fifo => ModeType::Fifo,
        FileType::Socket => ModeType::Socket,
        _ => ModeType::Other,
    }
}

/// How a descriptor was opened (`fcntl(F_GETFL)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Access {
    pub read_write: bool,
    pub append: bool,
}

/// `fcntl(F_GETFL)`.
pub(crate) fn access(fd: BorrowedFd<'_>) -> io::Result<Access> {
    use rustix::fs::OFlags;
    let f = retry(|| rustix::fs::fcntl_getfl(fd))?;
    Ok(Access {
        read_write: f & OFlags::RWMODE == OFlags::RDWR,
        append: f.contains(OFlags::APPEND),
    })
}

/// The descriptor's own offset (`lseek(fd, 0, SEEK_CUR)`).
pub(crate) fn tell(fd: BorrowedFd<'_>) -> io::Result<u64> {
    retry(|| rustix::fs::seek(fd, rustix::fs::SeekFrom::Current(0)))
}

/// Sets the descriptor's own offset.
pub(crate) fn seek_to(fd: BorrowedFd<'_>, pos: u64) -> io::Result<()> {
    retry(|| rustix::fs::seek(fd, rustix::fs::SeekFrom::Start(pos))).map(|_| ())
}

/// Moves the descriptor's own offset by `delta` bytes.
pub(crate) fn seek_by(fd: BorrowedFd<'_>, delta: i64) -> io::Result<()> {
    retry(|| rustix::fs::seek(fd, rustix::fs::SeekFrom::Current(delta))).map(|_| ())
}

/// The file system's magic number (`fstatfs`'s `f_type`).
// f_type's integer type differs between architectures.
#[allow(clippy::unnecessary_cast)]
pub(crate) fn fs_magic(fd: BorrowedFd<'_>) -> io::Result<u64> {
    retry(|| rustix::fs::fstatfs(fd)).map(|s| s.f_type as u64)
}

/// `fallocate(fd, 0, off, len)`: the range allocated, the file made at
/// least `off + len` long.
pub(crate) fn allocate(fd: BorrowedFd<'_>, off: u64, len: u64) -> io::Result<()> {
    retry(|| rustix::fs::fallocate(fd, rustix::fs::FallocateFlags::empty(), off, len))
}

/// `ftruncate`.
pub(crate) fn set_len(fd: BorrowedFd<'_>, len: u64) -> io::Result<()> {
    retry(|| rustix::fs::ftruncate(fd, len))
}

/// Whether this process writes under a finite `RLIMIT_FSIZE`, asked
/// each time (one `prlimit64`, a fraction of a microsecond): a program may
/// set a limit after its first write, and a cached answer would then let
/// SIGXFSZ kill it.
pub(crate) fn fsize_limited() -> bool {
    rustix::process::getrlimit(rustix::process::Resource::Fsize)
        .current
        .is_some()
}

/// The file behind `fd` opened again for reading and writing (through
/// `/proc/self/fd`), if that can be done and is still the same inode.
pub(crate) fn reopen_read_write(fd: BorrowedFd<'_>) -> Option<std::fs::File> {
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    let f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .ok()?;
    let (a, b) = (meta(fd).ok()?, meta(std::os::fd::AsFd::as_fd(&f)).ok()?);
    (a.dev == b.dev && a.ino == b.ino).then_some(f)
}
