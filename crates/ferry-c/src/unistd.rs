//! ferry/unistd.h: emulated Unix I/O. A descriptor opened through
//! `fy_open` (and every FILE's descriptor) names a stream in a table, as in
//! the paper's emulated Unix I/O; read and write on it go through the
//! stream's buffers, so they mix with stdio and ASI on the same stream.
//! Descriptors with no stream go straight to the system.

use crate::ffi::ffi_guard;
use crate::file::{
    self, errno_of, for_read, guard, read_bytes, set_errno, with_stream, FyFile, Kind,
};
use crate::stdio;
use ferry::stream::Backend;
use ferry::Stream;
use libc::{c_char, c_int, c_void, mode_t, off_t, size_t, ssize_t};
use std::collections::BTreeMap;
use std::io::SeekFrom;
use std::os::fd::{FromRawFd, OwnedFd};
use std::sync::atomic::Ordering;

/// Descriptor → stream (FILE pointers as integers).
/// (parking_lot's: no poisoning, so a panic elsewhere cannot make every
/// later lookup fail.)
static FDS: parking_lot::Mutex<BTreeMap<c_int, usize>> = parking_lot::Mutex::new(BTreeMap::new());

pub(crate) fn register(fd: c_int, f: *mut FyFile) {
    if fd >= 0 {
        FDS.lock().insert(fd, f as usize);
    }
}

/// A FILE found in the descriptor table, kept from being freed while this
/// is held: `close_file` takes a FILE out of the table (under the table's
/// lock, so no new pin can be taken) and then waits for its pins to drop.
pub(crate) struct Pinned(*mut FyFile);

impl Pinned {
    /// Pins `f`; the caller holds the table's lock and found `f` in it
    /// (or `f` is a static std stream).
    fn new(f: *mut FyFile) -> Pinned {
        // SAFETY: `f` is live: it is in the table, whose lock the caller
        // holds (close_file removes it under that lock before freeing), or
        // it is static.
        unsafe { &*f }.pins.fetch_add(1, Ordering::Relaxed);
        Pinned(f)
    }

    pub(crate) fn ptr(&self) -> *mut FyFile {
        self.0
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        // SAFETY: pinned, so still live; Release orders this thread's use
        // of the FILE before close_file's Acquire load sees the count drop.
        unsafe { &*self.0 }.pins.fetch_sub(1, Ordering::Release);
    }
}

pub(crate) fn lookup(fd: c_int) -> Option<Pinned> {
    if fd < 0 {
        // No stream: EBADF from the caller, at once (it used to lock stdin,
        // and wait behind a thread blocked reading it).
        return None;
    }
    if fd <= 2 {
        // The std streams answer for 0, 1, 2 unless something replaced them.
        let t = FDS.lock();
        if let Some(&f) = t.get(&fd) {
            return Some(Pinned::new(f as *mut FyFile));
        }
        drop(t);
        // SAFETY: reading the std stream pointers.
        let f = unsafe { [stdio::fy_stdin, stdio::fy_stdout, stdio::fy_stderr][fd as usize] };
        let file = file::file_ref(f)?;
        let g = file.locked();
        // SAFETY: lock held.
        let st = unsafe { g.state() };
        // A std stream is static: pinning it only keeps the count honest.
        return (!st.closed && st.fd == fd).then(|| Pinned::new(f));
    }
    let t = FDS.lock();
    t.get(&fd).map(|&f| Pinned::new(f as *mut FyFile))
}

pub(crate) fn forget(fd: c_int) {
    FDS.lock().remove(&fd);
}

/// Takes every descriptor naming `f` out of the table (close_file).
pub(crate) fn forget_file(f: *mut FyFile) {
    FDS.lock().retain(|_, &mut p| p != f as usize);
}

/// open(2) on a stream (the variadic `fy_open` in ferry/unistd.h passes
/// the mode here). Regular files get a stream; anything else (terminals,
/// pipes, devices, directories) is the system's descriptor.
#[no_mangle]
pub extern "C" fn fy__open(path: *const c_char, flags: c_int, mode: mode_t) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: open(2) with the caller's arguments.
        let fd = unsafe { libc::open(path, flags, mode as libc::c_uint) };
        if fd < 0 || flags & (libc::O_PATH | libc::O_DIRECTORY) != 0 {
            return fd;
        }
        // SAFETY: fstat into a zeroed struct.
        let mut sb: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above, on our descriptor.
        if unsafe { libc::fstat(fd, &mut sb) } != 0 || sb.st_mode & libc::S_IFMT != libc::S_IFREG {
            return fd;
        }
        let acc = flags & libc::O_ACCMODE;
        let (read, write) = (acc != libc::O_WRONLY, acc != libc::O_RDONLY);
        // Our own descriptor for the stream; `fd` stays the program's number
        // (a placeholder the table maps to the stream).
        // SAFETY: dup of our descriptor.
        let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if own < 0 {
            return fd;
        }
        // SAFETY: `own` is ours and handed to the stream.
        let owned = unsafe { OwnedFd::from_raw_fd(own) };
        // SAFETY: a C path.
        let name = unsafe { std::ffi::CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned();
        match Stream::from_fd_with(owned, &name, Backend::Auto) {
            Ok(s) => {
                let f = file::new_file(Some(s), 0, fd, read, write, Kind::Plain, false);
                // SAFETY: just made; no one else sees it yet.
                unsafe { (*(*f).st.get()).fd_refs = 1 };
                register(fd, f);
                fd
            }
            Err(_) => fd,
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_read(fd: c_int, buf: *mut c_void, n: size_t) -> ssize_t {
    ffi_guard(-1, libc::EIO, || {
        let Some(pin) = lookup(fd) else {
            // SAFETY: read(2) with the caller's arguments.
            return unsafe { libc::read(fd, buf, n) };
        };
        let f = pin.ptr();
        if isize::try_from(n).is_err() {
            // As the kernel: no buffer that long can be mapped.
            set_errno(libc::EFAULT);
            return -1;
        }
        if n == 0 {
            return 0;
        }
        with_stream(f, -1, for_read, |_, st| {
            // SAFETY: the caller's buffer of n bytes.
            let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, n) };
            let got = read_bytes(st, out)?;
            st.eof = false; // read(2) has no end-of-file flag
            Ok(got as ssize_t)
        })
    })
}

#[no_mangle]
pub extern "C" fn fy_write(fd: c_int, buf: *const c_void, n: size_t) -> ssize_t {
    ffi_guard(-1, libc::EIO, || {
        let Some(pin) = lookup(fd) else {
            // SAFETY: write(2) with the caller's arguments.
            return unsafe { libc::write(fd, buf, n) };
        };
        let f = pin.ptr();
        if isize::try_from(n).is_err() {
            // As the kernel: no buffer that long can be mapped.
            set_errno(libc::EFAULT);
            return -1;
        }
        if n == 0 {
            return 0;
        }
        // SAFETY: the caller's n bytes.
        let data = unsafe { std::slice::from_raw_parts(buf as *const u8, n) };
        match stdio::write_through(f, data) {
            Ok(()) => n as ssize_t,
            Err(e) => {
                set_errno(e);
                -1
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_lseek(fd: c_int, off: off_t, whence: c_int) -> off_t {
    ffi_guard(-1, libc::EIO, || {
        let Some(pin) = lookup(fd) else {
            // SAFETY: lseek(2) with the caller's arguments.
            return unsafe { libc::lseek(fd, off, whence) };
        };
        let f = pin.ptr();
        if stdio::fy_fseeko(f, off, whence) != 0 {
            return -1;
        }
        stdio::fy_ftello(f)
    })
}

/// pread/pwrite of `n` bytes at `off`: on a descriptor with no stream,
/// `kernel` (the system call itself); on a stream's, `op` with the
/// stream's position moved to `off` for it and put back after, and its
/// pushed-back bytes set aside (the stream's own reads and writes go on
/// where they were). Runs inside the caller's `ffi_guard`.
fn positioned(
    fd: c_int,
    n: size_t,
    off: off_t,
    kernel: impl FnOnce() -> ssize_t,
    op: impl FnOnce(&mut file::State) -> Result<ssize_t, c_int>,
) -> ssize_t {
    let Some(pin) = lookup(fd) else {
        return kernel();
    };
    let f = pin.ptr();
    if isize::try_from(n).is_err() {
        // As the kernel: no buffer that long can be mapped.
        set_errno(libc::EFAULT);
        return -1;
    }
    if off < 0 {
        set_errno(libc::EINVAL);
        return -1;
    }
    with_stream(f, -1, file::stream_of, |_, st| {
        if !st.seekable {
            return Err(libc::ESPIPE);
        }
        let g = guard(st)?;
        let here = g.position();
        // (Not handed over: the offset goes back before anyone looks.)
        g.seek_within(SeekFrom::Start(off as u64))
            .map_err(|e| errno_of(&e))?;
        let pushed = std::mem::take(&mut st.push);
        let r = op(st);
        st.push = pushed;
        let back = guard(st)?.seek_within(SeekFrom::Start(here));
        let r = r?;
        back.map_err(|e| errno_of(&e))?;
        Ok(r)
    })
}

#[no_mangle]
pub extern "C" fn fy_pread(fd: c_int, buf: *mut c_void, n: size_t, off: off_t) -> ssize_t {
    ffi_guard(-1, libc::EIO, || {
        positioned(
            fd,
            n,
            off,
            // SAFETY: pread(2) with the caller's arguments.
            || unsafe { libc::pread(fd, buf, n, off) },
            |st| {
                if !st.readable {
                    return Err(libc::EBADF);
                }
                // SAFETY: the caller's buffer of n bytes.
                let out = unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, n) };
                let eof = st.eof;
                let got = read_bytes(st, out)?;
                st.eof = eof;
                Ok(got as ssize_t)
            },
        )
    })
}

#[no_mangle]
pub extern "C" fn fy_pwrite(fd: c_int, buf: *const c_void, n: size_t, off: off_t) -> ssize_t {
    ffi_guard(-1, libc::EIO, || {
        positioned(
            fd,
            n,
            off,
            // SAFETY: pwrite(2) with the caller's arguments.
            || unsafe { libc::pwrite(fd, buf, n, off) },
            |st| {
                if !st.writable {
                    return Err(libc::EBADF);
                }
                // SAFETY: the caller's n bytes.
                let data = unsafe { std::slice::from_raw_parts(buf as *const u8, n) };
                file::write_bytes(st, data)?;
                Ok(n as ssize_t)
            },
        )
    })
}

#[no_mangle]
pub extern "C" fn fy_close(fd: c_int) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let Some(pin) = lookup(fd) else {
            // SAFETY: close(2) on the caller's descriptor.
            return unsafe { libc::close(fd) };
        };
        let f = pin.ptr();
        forget(fd);
        let Some(file) = file::file_ref(f) else {
            // SAFETY: close(2) on the caller's descriptor.
            return unsafe { libc::close(fd) };
        };
        let (last, is_file, own_fd) = {
            let g = file.locked();
            // SAFETY: lock held.
            let st = unsafe { g.state() };
            st.fd_refs = st.fd_refs.saturating_sub(1);
            (st.fd_refs == 0, st.is_file, st.fd)
        };
        if is_file {
            // A FILE's descriptor: flushed here; the FILE stays until fclose.
            // A number made by dup is only a placeholder: closed.
            let closed = if fd != own_fd {
                // SAFETY: closing the caller's placeholder number.
                unsafe { libc::close(fd) }
            } else {
                0
            };
            return if stdio::fy_fflush(f) == 0 { closed } else { -1 };
        }
        // The program's number is a placeholder: the stream has its own.
        // SAFETY: closing the caller's descriptor number.
        let closed = unsafe { libc::close(fd) };
        if last {
            // close_file waits for every pin: let go of ours first (this
            // thread took the last descriptor, so only it frees the FILE).
            drop(pin);
            // SAFETY: no descriptor names the stream any more.
            if let Err(e) = unsafe { file::close_file(f) } {
                set_errno(e);
                return -1;
            }
        }
        closed
    })
}

#[no_mangle]
pub extern "C" fn fy_dup(fd: c_int) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: dup(2) on the caller's descriptor (a placeholder number for
        // a stream, or a plain descriptor).
        let new = unsafe { libc::dup(fd) };
        if new < 0 {
            return new;
        }
        let pin = lookup(fd);
        if let Some(file) = pin.as_ref().and_then(|p| file::file_ref(p.ptr())) {
            let f = pin.as_ref().map_or(std::ptr::null_mut(), Pinned::ptr);
            let g = file.locked();
            // SAFETY: lock held.
            let st = unsafe { g.state() };
            st.fd_refs += 1;
            register(new, f);
        }
        new
    })
}
