//! Buffering and state: fflush, setvbuf and friends, feof/ferror/clearerr,
//! and the FILE lock (flockfile).

use super::*;
use crate::ffi::ffi_guard;
use crate::file::{self, set_errno, settle, Buffering, FyFile, State};
use libc::{c_char, c_int, size_t};

#[no_mangle]
pub extern "C" fn fy_fflush(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        if f.is_null() {
            return crate::registry::flush_all();
        }
        let Some(file) = file::file_ref(f) else {
            return crate::registry::flush_all();
        };
        let g = file.locked();
        // SAFETY: lock held.
        let st = unsafe { g.state() };
        if st.closed {
            set_errno(libc::EBADF);
            return EOF;
        }
        if st.stream.is_none() && st.std_fd >= 0 && !st.heap {
            return 0; // a std stream never used: nothing to flush
        }
        if st.seekable && settle(file, st).is_ok() {
            // Bytes pushed back with ungetc are discarded (POSIX fflush);
            // the stream goes on, and hands the offset over, where it was
            // before them, as glibc's (a pipe keeps them, as glibc's).
            st.push.clear();
        }
        match file::flush(file, st) {
            Ok(()) => 0,
            Err(_) => EOF,
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_fflush_unlocked(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || fy_fflush(f))
}

fn flag(f: *mut FyFile, get: fn(&State) -> bool) -> c_int {
    let Some(file) = file::file_ref(f) else {
        return 0;
    };
    let g = file.locked();
    // SAFETY: lock held.
    c_int::from(get(unsafe { g.state() }))
}

#[no_mangle]
pub extern "C" fn fy_feof(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || flag(f, |s| s.eof))
}

#[no_mangle]
pub extern "C" fn fy_ferror(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || flag(f, |s| s.err))
}

#[no_mangle]
pub extern "C" fn fy_feof_unlocked(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || fy_feof(f))
}

#[no_mangle]
pub extern "C" fn fy_ferror_unlocked(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || fy_ferror(f))
}

#[no_mangle]
pub extern "C" fn fy_clearerr(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || {
        let Some(file) = file::file_ref(f) else {
            return;
        };
        let g = file.locked();
        // SAFETY: lock held.
        let st = unsafe { g.state() };
        st.eof = false;
        st.err = false;
    })
}

#[no_mangle]
pub extern "C" fn fy_clearerr_unlocked(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || fy_clearerr(f))
}

/// Accepted; the stream keeps its own buffers (no copy through `buf`),
/// only the mode counts.
#[no_mangle]
pub extern "C" fn fy_setvbuf(
    f: *mut FyFile,
    _buf: *mut c_char,
    mode: c_int,
    _size: size_t,
) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let b = match mode {
            libc::_IOFBF => Buffering::Full,
            libc::_IOLBF => Buffering::Line,
            libc::_IONBF => Buffering::None,
            _ => {
                set_errno(libc::EINVAL);
                return EOF;
            }
        };
        let Some(file) = file::file_ref(f) else {
            return EOF;
        };
        let g = file.locked();
        // SAFETY: lock held.
        let st = unsafe { g.state() };
        if settle(file, st).is_err() {
            return EOF;
        }
        st.buffering = b;
        // glibc's setvbuf sets up a buffer for these two modes at once.
        if b != Buffering::Line {
            st.used = true;
        }
        0
    })
}

#[no_mangle]
pub extern "C" fn fy_setbuf(f: *mut FyFile, buf: *mut c_char) {
    ffi_guard((), libc::EIO, || {
        let mode = if buf.is_null() {
            libc::_IONBF
        } else {
            libc::_IOFBF
        };
        fy_setvbuf(f, buf, mode, libc::BUFSIZ as size_t);
    })
}

#[no_mangle]
pub extern "C" fn fy_setbuffer(f: *mut FyFile, buf: *mut c_char, size: size_t) {
    ffi_guard((), libc::EIO, || {
        let mode = if buf.is_null() {
            libc::_IONBF
        } else {
            libc::_IOFBF
        };
        fy_setvbuf(f, buf, mode, size);
    })
}

#[no_mangle]
pub extern "C" fn fy_setlinebuf(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || {
        fy_setvbuf(f, std::ptr::null_mut(), libc::_IOLBF, 0);
    })
}

#[no_mangle]
pub extern "C" fn fy_flockfile(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || {
        if let Some(file) = file::file_ref(f) {
            file.lock.lock();
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_funlockfile(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || {
        if let Some(file) = file::file_ref(f) {
            if file.lock.is_owned_by_current_thread() {
                // SAFETY: held by this thread (checked).
                unsafe { file.lock.unlock() };
            }
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_ftrylockfile(f: *mut FyFile) -> c_int {
    ffi_guard(1, libc::EIO, || match file::file_ref(f) {
        Some(file) if file.lock.try_lock() => 0,
        _ => 1,
    })
}
