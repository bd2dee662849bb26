//! Opening and closing: fopen, fdopen, freopen, fclose, fileno, tmpfile.

use super::*;
use crate::ffi::ffi_guard;
use crate::file::{self, errno_of, set_errno, Buffering, FyFile};
use ferry::stream::Backend;
use ferry::Stream;
use libc::{c_char, c_int};
use std::ffi::CStr;
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

#[no_mangle]
pub extern "C" fn fy_fopen(path: *const c_char, mode: *const c_char) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        if path.is_null() {
            set_errno(libc::EFAULT);
            return std::ptr::null_mut();
        }
        let Some((flags, read, write)) = parse_mode(mode) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        // SAFETY: open(2) with a C path; the mode argument glibc's fopen uses.
        let fd = unsafe { libc::open(path, flags, 0o666 as libc::c_uint) };
        if fd < 0 {
            return std::ptr::null_mut();
        }
        file_over_fd(fd, &path_name(path), read, write)
    })
}

#[no_mangle]
pub extern "C" fn fy_fdopen(fd: c_int, mode: *const c_char) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        let Some((flags, read, write)) = parse_mode(mode) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        // SAFETY: F_GETFL on any number: fails with EBADF if not open.
        let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
        if fl < 0 {
            return std::ptr::null_mut();
        }
        let acc = fl & libc::O_ACCMODE;
        if (read && acc == libc::O_WRONLY) || (write && acc == libc::O_RDONLY) {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        if let Some(pin) = crate::unistd::lookup(fd) {
            let f = pin.ptr();
            // An emulated descriptor: the FILE is its stream.
            // SAFETY: a live FILE from the descriptor table; lock taken.
            let g = unsafe { &*f }.locked();
            // SAFETY: the lock is held through `g`.
            unsafe { g.state() }.is_file = true;
            return f;
        }
        if flags & libc::O_APPEND != 0 && fl & libc::O_APPEND == 0 {
            // SAFETY: F_SETFL on an open descriptor.
            unsafe { libc::fcntl(fd, libc::F_SETFL, fl | libc::O_APPEND) };
        }
        // A descriptor handed in may be shared (a socket, a file a child also
        // writes): a stream that only writes keeps to its offset, as glibc's.
        let backend = if write && !read {
            Backend::Sequential
        } else {
            crate::file::READ_BACKEND
        };
        file_over_fd_with(fd, &format!("fd {fd}"), read, write, backend)
    })
}

#[no_mangle]
pub extern "C" fn fy_freopen(
    path: *const c_char,
    mode: *const c_char,
    f: *mut FyFile,
) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        let Some(file) = file::file_ref(f) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        let Some((flags, read, write)) = parse_mode(mode) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        let g = file.locked();
        // SAFETY: lock held; one borrow.
        let st = unsafe { g.state() };
        let old_fd = st.fd;
        let _ = file::flush(file, st);
        let path = if path.is_null() {
            std::ffi::CString::new(format!("/proc/self/fd/{old_fd}")).unwrap_or_default()
        } else {
            // SAFETY: a NUL-terminated path.
            unsafe { CStr::from_ptr(path) }.to_owned()
        };
        // Open first (the old descriptor may be the only way to the file).
        // SAFETY: open(2) with a C path.
        let fd = unsafe { libc::open(path.as_ptr(), flags, 0o666 as libc::c_uint) };
        // The old stream's regions go with it: an sfree of one later must
        // not free a region of the new stream.
        file::release_regions(st);
        if let Some(s) = st.stream.take() {
            crate::unistd::forget(old_fd);
            let _ = file::close_stream(s);
        }
        if fd < 0 {
            let e = file::errno_value();
            st.closed = true;
            st.fail = libc::EBADF;
            set_errno(e);
            return std::ptr::null_mut();
        }
        // Keep the old number (stdout stays descriptor 1).
        let fd = if old_fd >= 0 && fd != old_fd {
            // SAFETY: dup2 onto the number the old stream just closed.
            let r = unsafe { libc::dup2(fd, old_fd) };
            // SAFETY: fd is ours.
            unsafe { libc::close(fd) };
            if r < 0 {
                return std::ptr::null_mut();
            }
            old_fd
        } else {
            fd
        };
        // SAFETY: fd is open and handed to the stream.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        match Stream::from_fd_with(owned, &path.to_string_lossy(), crate::file::READ_BACKEND) {
            Ok(s) => {
                s.raise_write_signals();
                st.stream = Some(s);
                st.fail = 0;
                st.closed = false;
                st.fd = fd;
                st.readable = read;
                st.writable = write;
                st.eof = false;
                st.err = false;
                st.push.clear();
                st.last = file::Last::None;
                st.used = false;
                st.by_caller = false;
                st.seekable = file::is_seekable(fd);
                st.buffering = if fd == 2 {
                    Buffering::None
                } else if file::is_tty(fd) {
                    Buffering::Line
                } else {
                    Buffering::Full
                };
                crate::unistd::register(fd, f);
                f
            }
            Err(e) => {
                st.closed = true;
                st.fail = libc::EBADF;
                set_errno(errno_of(&e));
                std::ptr::null_mut()
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_fclose(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let Some(file) = file::file_ref(f) else {
            set_errno(libc::EINVAL);
            return EOF;
        };
        let fd = {
            let g = file.locked();
            // SAFETY: lock held.
            unsafe { g.state() }.fd
        };
        crate::unistd::forget(fd);
        // SAFETY: the caller gives the FILE up.
        match unsafe { file::close_file(f) } {
            Ok(_) => 0,
            Err(e) => {
                set_errno(e);
                EOF
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_fileno(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let Some(file) = file::file_ref(f) else {
            set_errno(libc::EBADF);
            return -1;
        };
        let g = file.locked();
        // SAFETY: lock held.
        let st = unsafe { g.state() };
        if st.fd < 0 || st.closed {
            set_errno(libc::EBADF);
            return -1;
        }
        st.fd
    })
}

#[no_mangle]
pub extern "C" fn fy_fileno_unlocked(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || fy_fileno(f))
}

// ---- other streams ----

#[no_mangle]
pub extern "C" fn fy_tmpfile() -> *mut FyFile {
    ffi_guard(
        std::ptr::null_mut(),
        libc::EIO,
        || match tempfile::tempfile() {
            Ok(t) => {
                let fd = t.into_raw_fd();
                file_over_fd(fd, "tmpfile", true, true)
            }
            Err(e) => {
                set_errno(errno_of(&e));
                std::ptr::null_mut()
            }
        },
    )
}
