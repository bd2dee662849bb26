//! Streams that are more than a descriptor: popen, fmemopen,
//! open_memstream.

use super::*;
use crate::ffi::ffi_guard;
use crate::file::{self, errno_of, set_errno, FyFile, Kind};
use ferry::stream::Backend;
use ferry::Stream;
use libc::{c_char, c_int, c_void, size_t};
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

#[no_mangle]
pub extern "C" fn fy_popen(command: *const c_char, mode: *const c_char) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        if command.is_null() || mode.is_null() {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        let m = cstr(mode);
        let reading = match m.first() {
            Some(b'r') => true,
            Some(b'w') => false,
            _ => {
                set_errno(libc::EINVAL);
                return std::ptr::null_mut();
            }
        };
        use std::os::unix::ffi::OsStrExt;
        let cmd = std::ffi::OsStr::from_bytes(cstr(command));
        let mut c = std::process::Command::new("/bin/sh");
        c.arg("-c").arg(cmd);
        if reading {
            c.stdout(std::process::Stdio::piped());
        } else {
            c.stdin(std::process::Stdio::piped());
        }
        // What this process buffered for a shared output goes out first
        // (the streams no other thread holds: see `flush_unheld`).
        crate::registry::flush_unheld();
        let mut child = match c.spawn() {
            Ok(ch) => ch,
            Err(e) => {
                set_errno(errno_of(&e));
                return std::ptr::null_mut();
            }
        };
        let fd: Option<OwnedFd> = if reading {
            child.stdout.take().map(OwnedFd::from)
        } else {
            child.stdin.take().map(OwnedFd::from)
        };
        let Some(fd) = fd else {
            set_errno(libc::EPIPE);
            return std::ptr::null_mut();
        };
        let raw = fd.into_raw_fd();
        // SAFETY: our pipe end, handed to the stream.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        match Stream::from_fd_with(owned, "popen", Backend::Auto) {
            Ok(s) => file::new_file(Some(s), 0, raw, reading, !reading, Kind::Child(child), true),
            Err(e) => {
                set_errno(errno_of(&e));
                std::ptr::null_mut()
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_pclose(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let Some(file) = file::file_ref(f) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        {
            let g = file.locked();
            // SAFETY: lock held.
            if !matches!(unsafe { g.state() }.kind, Kind::Child(_)) {
                set_errno(libc::ECHILD);
                return -1;
            }
        }
        // SAFETY: the caller gives the FILE up.
        match unsafe { file::close_file(f) } {
            Ok(status) => status,
            Err(e) => {
                set_errno(e);
                -1
            }
        }
    })
}

/// fmemopen as glibc 2.22+ does it (`file::fmem`): size 0 is a stream
/// with no room; a NULL buffer is allocated (and freed at fclose).
#[no_mangle]
pub extern "C" fn fy_fmemopen(buf: *mut c_void, size: size_t, mode: *const c_char) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        let Some((_, read, write)) = parse_mode(mode) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        if isize::try_from(size).is_err() {
            // No buffer is that long (glibc's calloc says ENOMEM for it).
            set_errno(libc::ENOMEM);
            return std::ptr::null_mut();
        }
        let m = cstr(mode);
        let plus = m.iter().skip(1).take(6).any(|&c| c == b'+');
        let (buf, owned) = if buf.is_null() {
            // SAFETY: a zeroed buffer of our own (one byte at least, as
            // glibc writes a NUL at its start).
            let b = unsafe { libc::calloc(size.max(1), 1) } as *mut u8;
            if b.is_null() {
                set_errno(libc::ENOMEM);
                return std::ptr::null_mut();
            }
            (b, true)
        } else {
            (buf as *mut u8, false)
        };
        // SAFETY: the caller's `size` bytes (or ours); size ≤ isize::MAX.
        let mut cookie = Box::new(unsafe { file::Fmem::new(buf, size, owned, m[0], plus) });
        let start = if m[0] == b'a' { cookie.maxpos() } else { 0 };
        let view = match cookie.view(start as u64) {
            Ok(v) => v,
            Err(e) => {
                cookie.release();
                set_errno(e);
                return std::ptr::null_mut();
            }
        };
        file::new_file(Some(view), 0, -1, read, write, Kind::Fmem(cookie), true)
    })
}

/// open_memstream as glibc does it (`file::memstream`): `*ptr` and
/// `*size` are first set by fflush or fclose. NULL out-parameters are
/// EINVAL (glibc accepts them and writes through them at the flush).
#[no_mangle]
pub extern "C" fn fy_open_memstream(ptr: *mut *mut c_char, size: *mut size_t) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        if ptr.is_null() || size.is_null() {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        let m = file::MemStream {
            ptr,
            size,
            buf: std::ptr::null_mut(),
            wpos: 0,
        };
        // Readable, as glibc's is.
        file::new_file(
            Some(Stream::memory()),
            0,
            -1,
            true,
            true,
            Kind::MemStream(m),
            true,
        )
    })
}
