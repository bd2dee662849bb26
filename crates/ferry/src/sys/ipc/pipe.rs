//! The pipe under an upgraded channel (`ipc::upgrade`): which pipe a
//! descriptor is, what waits in it, reads that never wait, and the
//! signal a write to a pipe nobody reads raises.

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsRawFd, BorrowedFd};

/// The inode of the pipe `fd` is open on, or `None` if it is no pipe.
pub(crate) fn pipe_inode(fd: BorrowedFd<'_>) -> Option<u64> {
    let st = rustix::fs::fstat(fd).ok()?;
    (rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Fifo)
        .then_some(st.st_ino)
}

/// Bytes waiting in the pipe `fd` (either end): `FIONREAD`.
pub(crate) fn pipe_unread(fd: BorrowedFd<'_>) -> io::Result<u64> {
    Ok(rustix::io::ioctl_fionread(fd)?)
}

/// One read of the pipe `fd` that never waits: `Some(0)` at its end,
/// `None` when nothing waits in it (EINTR retried). On a kernel whose
/// pipes refuse `RWF_NOWAIT`, reads no more than `FIONREAD` says is
/// there.
pub(crate) fn read_nowait(fd: BorrowedFd<'_>, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `read_nowait_uninit` writes only initialized bytes (the
    // kernel's), so `buf` stays initialized; `u8` and `MaybeUninit<u8>`
    // have one layout.
    let buf = unsafe { &mut *(buf as *mut [u8] as *mut [MaybeUninit<u8>]) };
    read_nowait_uninit(fd, buf)
}

/// [`read_nowait`] into memory not yet initialized: the bytes read are
/// at the front of `buf`.
pub(crate) fn read_nowait_uninit(
    fd: BorrowedFd<'_>,
    buf: &mut [MaybeUninit<u8>],
) -> io::Result<Option<usize>> {
    if buf.is_empty() {
        return Ok(Some(0));
    }
    let iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    loop {
        // SAFETY: `iov` describes `buf`, writable for its length; the
        // kernel writes at most that many bytes there (initializing them)
        // and keeps no pointer after the call. Offset -1: the pipe's own.
        let r = unsafe { libc::preadv2(fd.as_raw_fd(), &iov, 1, -1, libc::RWF_NOWAIT) };
        if r >= 0 {
            return Ok(Some(r as usize));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EAGAIN) => return Ok(None),
            Some(libc::EOPNOTSUPP) | Some(libc::EINVAL) => return read_fionread(fd, buf),
            _ => return Err(e),
        }
    }
}

/// [`read_nowait`] for pipes without `RWF_NOWAIT`: a read of what is
/// there, or of the end once the pipe hung up.
fn read_fionread(fd: BorrowedFd<'_>, buf: &mut [MaybeUninit<u8>]) -> io::Result<Option<usize>> {
    use rustix::event::{PollFd, PollFlags};
    let n = pipe_unread(fd)?;
    if n == 0 {
        let mut p = [PollFd::new(&fd, PollFlags::IN)];
        let ready = rustix::event::poll(&mut p, Some(&rustix::time::Timespec::default()))?;
        if ready == 0 || !p[0].revents().intersects(PollFlags::HUP | PollFlags::ERR) {
            return Ok(None);
        }
    }
    let len = usize::try_from(n).unwrap_or(usize::MAX).clamp(1, buf.len());
    let got = crate::sys::fileio::read_uninit(fd, &mut buf[..len])?;
    Ok(Some(got))
}

/// Whether the pipe `fd` is at its end: every writer closed it and
/// nothing is left to read (`poll` without waiting).
pub(crate) fn pipe_ended(fd: BorrowedFd<'_>) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags};
    let mut p = [PollFd::new(&fd, PollFlags::IN)];
    rustix::event::poll(&mut p, Some(&rustix::time::Timespec::default()))?;
    let r = p[0].revents();
    Ok(r.contains(PollFlags::HUP) && !r.contains(PollFlags::IN))
}

/// Raises `SIGPIPE` in this thread, as a `write(2)` to a pipe with no
/// reader does (the disposition decides: death, a handler, or nothing).
pub(crate) fn raise_sigpipe() {
    // SAFETY: raise(3) with a valid signal number has no memory effects.
    unsafe { libc::raise(libc::SIGPIPE) };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    fn uninit(n: usize) -> Vec<MaybeUninit<u8>> {
        vec![MaybeUninit::uninit(); n]
    }

    #[test]
    fn read_nowait_tells_empty_data_and_end_apart() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut b = uninit(8);
        assert_eq!(read_nowait_uninit(r.as_fd(), &mut b).unwrap(), None);
        rustix::io::write(&w, b"abc").unwrap();
        assert_eq!(pipe_unread(w.as_fd()).unwrap(), 3);
        assert_eq!(read_nowait_uninit(r.as_fd(), &mut b).unwrap(), Some(3));
        // SAFETY: the read initialized the first three bytes.
        let got: Vec<u8> = b[..3].iter().map(|x| unsafe { x.assume_init() }).collect();
        assert_eq!(got, b"abc");
        drop(w);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while read_nowait_uninit(r.as_fd(), &mut b).unwrap() != Some(0) {
            // A forked child of another test may hold the write end a moment.
            assert!(std::time::Instant::now() < until, "the pipe never ended");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn fionread_fallback_reads_only_what_is_there() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut b = uninit(8);
        assert_eq!(read_fionread(r.as_fd(), &mut b).unwrap(), None);
        rustix::io::write(&w, b"0123456789").unwrap();
        assert_eq!(read_fionread(r.as_fd(), &mut b).unwrap(), Some(8));
        assert_eq!(read_fionread(r.as_fd(), &mut b).unwrap(), Some(2));
        assert_eq!(read_fionread(r.as_fd(), &mut b).unwrap(), None);
        drop(w);
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while read_fionread(r.as_fd(), &mut b).unwrap() != Some(0) {
            // A forked child of another test may hold the write end a moment.
            assert!(std::time::Instant::now() < until, "the pipe never ended");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn a_pipe_ends_when_its_writers_are_gone_and_it_is_empty() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        assert!(!pipe_ended(r.as_fd()).unwrap());
        rustix::io::write(&w, b"x").unwrap();
        drop(w);
        assert!(!pipe_ended(r.as_fd()).unwrap());
        let mut b = [0u8; 4];
        assert_eq!(read_nowait(r.as_fd(), &mut b).unwrap(), Some(1));
        // A child another test forks meanwhile holds a copy of the write
        // end until it execs or exits: wait for it (bounded).
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !pipe_ended(r.as_fd()).unwrap() {
            assert!(std::time::Instant::now() < until, "the pipe never ended");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn read_nowait_into_initialized_bytes() {
        let (r, w) = rustix::pipe::pipe().unwrap();
        let mut b = [0u8; 4];
        assert_eq!(read_nowait(r.as_fd(), &mut b).unwrap(), None);
        rustix::io::write(&w, b"xyz").unwrap();
        assert_eq!(read_nowait(r.as_fd(), &mut b).unwrap(), Some(3));
        assert_eq!(&b, b"xyz\0");
    }
}
