//! Read leases (`fcntl(F_SETLEASE, F_RDLCK)`) and the ferry lease thread
//! that hears when one is broken.
//!
//! A read lease on an open file description makes the kernel tell its
//! holder *before* anyone opens the file for writing or truncates it, and
//! hold that opener back until the holder gives the lease up (or
//! `/proc/sys/fs/lease-break-time` seconds pass). The kernel refuses the
//! lease (`EAGAIN`) while anyone has the file open for writing.
//!
//! The notice is a signal. ferry asks for [`lease_signal`] (`F_SETSIG`,
//! so that the siginfo carries the descriptor) sent to one thread of its
//! own (`F_SETOWN_EX` with `F_OWNER_TID`): the lease thread, started once
//! per process on the first lease. That thread blocks the signal (and
//! `SIGIO`, which the kernel sends instead when the real-time signal queue
//! is full) and reads it from a `signalfd`, so no other thread of the
//! application ever receives it and no signal handler runs. (A `SIGIO`
//! sent to the whole process reaches a thread that does not block it,
//! never this one; only if every other thread blocked it too could the
//! lease thread take it, checking its leases, and the application's own
//! `sigwait` would miss it.)

use parking_lot::Mutex;
use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

// Not in the `libc` crate for every target; the values are Linux's
// generic ones (`asm-generic/fcntl.h`), used by x86-64 and arm64.
const F_SETSIG: libc::c_int = 10;
const F_SETOWN_EX: libc::c_int = 15;
const F_OWNER_TID: libc::c_int = 0;

#[repr(C)]
struct FOwnerEx {
    kind: libc::c_int,
    pid: libc::pid_t,
}

/// The signal lease breaks arrive as: `SIGRTMAX - 2`.
///
/// A real-time signal, because `F_SETSIG` with one makes the kernel queue
/// a siginfo naming the descriptor (`si_fd`) for every break, so breaks of
/// several files at once are each heard. glibc keeps the lowest real-time
/// signals for itself and applications conventionally count up from
/// `SIGRTMIN`; some libraries take `SIGRTMAX` and `SIGRTMAX - 1`, so ferry
/// takes the one below them. It is sent to ferry's lease thread only,
/// which blocks it; the rest of the application never sees it. (A program
/// that blocks this signal in every thread and waits for it itself, for
/// its own use, would compete with that thread for it.)
pub(crate) fn lease_signal() -> libc::c_int {
    libc::SIGRTMAX() - 2
}

/// What the lease thread calls: `Some(fd)` for a break on that descriptor,
/// `None` when the kernel could not say which (the signal queue was full
/// and plain `SIGIO` came instead): check every lease.
pub(crate) type OnBreak = fn(Option<RawFd>);

/// The process the lease thread was started in, and its thread id (or
/// why it could not start).
static THREAD: Mutex<Option<(u32, Result<libc::pid_t, i32>)>> = parking_lot::const_mutex(None);

/// The lease thread's kernel thread id, starting it on the first call in
/// this process (a child forked without `exec` starts its own).
pub(crate) fn lease_thread(on_break: OnBreak) -> io::Result<libc::pid_t> {
    let pid = std::process::id();
    let mut t = THREAD.lock();
    let r = match *t {
        Some((p, r)) if p == pid => r,
        _ => {
            let r = start(on_break);
            *t = Some((pid, r));
            r
        }
    };
    r.map_err(|e| {
        io::Error::new(
            io::Error::from_raw_os_error(e).kind(),
            format!(
                "cannot start ferry's lease thread: {}",
                io::Error::from_raw_os_error(e)
            ),
        )
    })
}

fn start(on_break: OnBreak) -> Result<libc::pid_t, i32> {
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("ferry-lease".into())
        .spawn(move || {
            let sfd = match block_and_open_signalfd() {
                Ok(fd) => fd,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            // SAFETY: gettid has no preconditions.
            let tid = unsafe { libc::syscall(libc::SYS_gettid) } as libc::pid_t;
            let _ = tx.send(Ok(tid));
            drop(tx);
            serve(sfd, on_break);
        });
    if let Err(e) = spawned {
        return Err(e.raw_os_error().unwrap_or(libc::EAGAIN));
    }
    rx.recv().unwrap_or(Err(libc::EAGAIN))
}

fn signal_set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, lease_signal());
        libc::sigaddset(&mut set, libc::SIGIO);
        set
    }
}

/// Blocks the lease signals in the calling thread and opens a `signalfd`
/// for them.
fn block_and_open_signalfd() -> Result<OwnedFd, i32> {
    let set = signal_set();
    // SAFETY: a valid set; changes only this thread's mask.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if r != 0 {
        return Err(r);
    }
    // SAFETY: a valid set; -1 asks for a new descriptor.
    let fd = unsafe { libc::signalfd(-1, &set, libc::SFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL));
    }
    // SAFETY: signalfd returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn serve(sfd: OwnedFd, on_break: OnBreak) -> ! {
    let size = std::mem::size_of::<libc::signalfd_siginfo>();
    loop {
        // SAFETY: an all-zero signalfd_siginfo is a valid value (plain
        // integers and padding).
        let mut si: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        // SAFETY: reads at most `size` bytes into `si`, which has them.
        let n = unsafe { libc::read(sfd.as_raw_fd(), (&raw mut si).cast::<libc::c_void>(), size) };
        if n != size as isize {
            // EINTR, or nothing (cannot happen on a blocking signalfd).
            continue;
        }
        if si.ssi_signo as libc::c_int == lease_signal() {
            on_break(Some(si.ssi_fd));
        } else {
            on_break(None);
        }
    }
}

fn lease_error(code: i32) -> io::Error {
    let why = match code {
        libc::EAGAIN => {
            "the file is open for writing (in this process or another), so no read lease \
             can be had on it"
        }
        libc::EACCES | libc::EPERM => {
            "only the file's owner (or a process with CAP_LEASE) can take a read lease on it"
        }
        libc::EINVAL => {
            "its file system does not support leases (or /proc/sys/fs/leases-enable is 0)"
        }
        _ => "the read lease was refused",
    };
    io::Error::new(
        io::Error::from_raw_os_error(code).kind(),
        format!(
            "cannot map the file safely: {why} ({}); Buf::read_file copies it instead",
            io::Error::from_raw_os_error(code)
        ),
    )
}

fn fcntl_int(fd: BorrowedFd<'_>, cmd: libc::c_int, arg: libc::c_int) -> Result<libc::c_int, i32> {
    // SAFETY: these fcntl commands take an int argument and touch no memory.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), cmd, arg) };
    if r < 0 {
        Err(io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EINVAL))
    } else {
        Ok(r)
    }
}

/// Takes a read lease on `fd` (which must be open read-only) with breaks
/// sent as [`lease_signal`] to thread `tid`. The error says why a lease
/// could not be had.
pub(crate) fn take_read_lease(fd: BorrowedFd<'_>, tid: libc::pid_t) -> io::Result<()> {
    fcntl_int(fd, F_SETSIG, lease_signal()).map_err(io::Error::from_raw_os_error)?;
    let owner = FOwnerEx {
        kind: F_OWNER_TID,
        pid: tid,
    };
    // SAFETY: F_SETOWN_EX reads one `struct f_owner_ex`, which `owner` is
    // (same layout), alive for the call.
    let r = unsafe { libc::fcntl(fd.as_raw_fd(), F_SETOWN_EX, &raw const owner) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    fcntl_int(fd, libc::F_SETLEASE, libc::F_RDLCK).map_err(lease_error)?;
    Ok(())
}

/// True while `fd` holds a read lease that is not being broken
/// (`F_GETLEASE` reports a lease being broken as the type it is going to).
pub(crate) fn holds_unbroken_lease(fd: BorrowedFd<'_>) -> bool {
    fcntl_int(fd, libc::F_GETLEASE, 0) == Ok(libc::F_RDLCK)
}

/// Gives the lease on `fd` up; a writer held back by it goes on.
pub(crate) fn release(fd: BorrowedFd<'_>) {
    let _ = fcntl_int(fd, libc::F_SETLEASE, libc::F_UNLCK);
}

/// A new open file description of the file `fd` refers to, read-only and
/// close-on-exec (through `/proc/self/fd`): a lease on it is ferry's own,
/// unaffected by what the caller does with `fd`.
pub(crate) fn reopen_readonly(fd: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    let path = format!("/proc/self/fd/{}", fd.as_raw_fd());
    rustix::fs::open(
        path.as_str(),
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| {
        let e = io::Error::from(e);
        io::Error::new(
            e.kind(),
            format!("cannot open the file again read-only (through {path}) to lease it: {e}"),
        )
    })
}

/// Registers fork handlers (`pthread_atfork`), once per process.
pub(crate) fn at_fork(
    prepare: unsafe extern "C" fn(),
    parent: unsafe extern "C" fn(),
    child: unsafe extern "C" fn(),
) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: plain function pointers that live for the whole program.
        unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
    });
}

/// A pipe for one fork's handshake: `[read end, write end]`, close-on-exec.
pub(crate) fn handshake_pipe() -> Option<[RawFd; 2]> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the two-element array.
    (unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } == 0).then_some(fds)
}

/// The child's side: says it is done, closes its ends (async-signal-safe).
pub(crate) fn handshake_done(fds: [RawFd; 2]) {
    // SAFETY: descriptors of our own pipe; write and close are
    // async-signal-safe, as a forked child of a threaded process needs.
    unsafe {
        libc::close(fds[0]);
        libc::write(fds[1], b"x".as_ptr().cast(), 1);
        libc::close(fds[1]);
    }
}

/// The parent's side: waits until the child said it is done (or died),
/// then closes its ends.
pub(crate) fn handshake_wait(fds: [RawFd; 2]) {
    // SAFETY: descriptors of our own pipe.
    unsafe {
        libc::close(fds[1]);
        let mut c = 0u8;
        loop {
            let r = libc::read(fds[0], (&raw mut c).cast(), 1);
            if r >= 0 || *libc::__errno_location() != libc::EINTR {
                break;
            }
        }
        libc::close(fds[0]);
    }
}
