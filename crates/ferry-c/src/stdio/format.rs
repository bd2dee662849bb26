//! The Rust half of printf and scanf (the C half, csrc/format.c, drives
//! glibc's formatter over these windows), and perror.

use super::*;
use crate::ffi::ffi_guard;
use crate::file::{
    self, errno_of, fail, for_read, for_write, guard, set_errno, stream_of, with_stream, Buffering,
    FyFile, Kind,
};
use libc::{c_char, c_int, c_void, size_t, ssize_t};
use std::ffi::CStr;
use std::io::BufRead;

// ---- helpers for the C side of printf and scanf (csrc/format.c) ----

/// printf's window: settles, checks the stream writes, and (fully
/// buffered streams) opens the write window; returns its room, 0 when
/// output must go through fwrite, -1 on error. The caller holds the lock.
#[no_mangle]
pub extern "C" fn fy__wwindow(f: *mut FyFile) -> ssize_t {
    ffi_guard(-1, libc::EIO, || {
        with_stream(f, -1, for_write, |file, st| {
            if st.buffering != Buffering::Full || !matches!(st.kind, Kind::Plain | Kind::Child(_)) {
                return Ok(0);
            }
            let g = guard(st)?;
            let room = g.write_space().map_err(|e| errno_of(&e))?;
            let (p, n) = (room.as_mut_ptr(), room.len());
            if n > 0 {
                file.set_write_window(st, p, n);
            }
            Ok(n as ssize_t)
        })
    })
}

/// scanf's input: at least `want` unread bytes (fewer only at the end),
/// as one piece; `*at_end` tells if the stream ends after them. The
/// caller holds the lock and then calls `fy__rconsume`.
#[no_mangle]
pub extern "C" fn fy__rpeek(
    f: *mut FyFile,
    want: size_t,
    avail: *mut size_t,
    at_end: *mut c_int,
) -> *const u8 {
    ffi_guard(std::ptr::null(), libc::EIO, || {
        with_stream(f, std::ptr::null(), for_read, |_, st| {
            let pushed = st.push.len();
            if st.eof && pushed == 0 {
                // The end-of-file indicator is sticky (C11 7.21.7.1, glibc
                // since 2.28): nothing is read until clearerr or a seek.
                // SAFETY: the caller's out-parameters.
                unsafe {
                    *avail = 0;
                    *at_end = 1;
                }
                return Ok(std::ptr::NonNull::<u8>::dangling().as_ptr().cast_const());
            }
            let g = guard(st)?;
            let b = g
                .fill_buf_min(want.saturating_sub(pushed))
                .map_err(|e| errno_of(&e))?;
            let end = b.len() + pushed < want;
            let (p, n) = (b.as_ptr(), b.len());
            // SAFETY: the caller's out-parameters.
            unsafe { *at_end = c_int::from(end) };
            if pushed == 0 {
                // SAFETY: as above.
                unsafe { *avail = n };
                return Ok(p);
            }
            // Pushed-back bytes come first: one piece in scratch memory.
            let mut v = std::mem::take(&mut st.push);
            // SAFETY: the stream's n unread bytes at p (unchanged until the
            // next call on the stream).
            v.extend_from_slice(unsafe { std::slice::from_raw_parts(p, n) });
            let total = v.len();
            let keep = pushed;
            SCRATCH.with(|s| {
                *s.borrow_mut() = (v, keep);
            });
            // SAFETY: as above.
            unsafe { *avail = total };
            Ok(SCRATCH.with(|s| s.borrow().0.as_ptr()))
        })
    })
}

thread_local! {
    /// scanf's piece when bytes were pushed back: the bytes and how many
    /// of them were pushed back.
    static SCRATCH: std::cell::RefCell<(Vec<u8>, usize)> = const { std::cell::RefCell::new((Vec::new(), 0)) };
}

/// Takes `used` bytes of the piece `fy__rpeek` gave; `eof` sets the
/// end-of-file flag (scanf read past the last byte).
#[no_mangle]
pub extern "C" fn fy__rconsume(f: *mut FyFile, used: size_t, eof: c_int) {
    ffi_guard((), libc::EIO, || {
        with_stream(f, (), stream_of, |_, st| {
            let (piece, pushed) = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
            let mut used = used;
            if pushed > 0 {
                // The piece began with the pushed-back bytes: the ones scanf
                // left go back.
                if used < pushed {
                    st.push = piece[used..pushed].to_vec();
                    used = 0;
                } else {
                    used -= pushed;
                }
            }
            guard(st)?.consume(used);
            if eof != 0 {
                st.eof = true;
            }
            Ok(())
        })
    })
}

extern "C" {
    fn fy__vfprintf_c(f: *mut c_void, fmt: *const c_char, ap: *mut c_void) -> c_int;
    fn fy__vfscanf_c(f: *mut c_void, fmt: *const c_char, ap: *mut c_void) -> c_int;
    fn fy__vdprintf_c(fd: c_int, fmt: *const c_char, ap: *mut c_void) -> c_int;
}

// On x86-64 (and aarch64 Linux) a `va_list` argument travels as a pointer,
// so these take it as one and hand it on to the C side, which formats with
// glibc's own vsnprintf and scans with glibc's own vfscanf.

#[no_mangle]
pub extern "C" fn fy_vfprintf(f: *mut FyFile, fmt: *const c_char, ap: *mut c_void) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: forwarding the caller's arguments unchanged.
        unsafe { fy__vfprintf_c(f.cast(), fmt, ap) }
    })
}

#[no_mangle]
pub extern "C" fn fy_vprintf(fmt: *const c_char, ap: *mut c_void) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: as above, on stdout.
        unsafe { fy__vfprintf_c(fy_stdout.cast(), fmt, ap) }
    })
}

#[no_mangle]
pub extern "C" fn fy_vdprintf(fd: c_int, fmt: *const c_char, ap: *mut c_void) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // glibc writes to the descriptor itself, past any FILE's buffer; so
        // does ferry, except for emulated descriptors (ferry/unistd.h), whose
        // bytes live in their stream.
        let emulated = crate::unistd::lookup(fd).filter(|p| {
            file::file_ref(p.ptr()).is_some_and(|file| {
                let g = file.locked();
                // SAFETY: lock held.
                !unsafe { g.state() }.is_file
            })
        });
        if let Some(pin) = emulated {
            let f = pin.ptr();
            // SAFETY: as above.
            let r = unsafe { fy__vfprintf_c(f.cast(), fmt, ap) };
            if r >= 0 && fy_fflush(f) != 0 {
                return -1;
            }
            return r;
        }
        // SAFETY: as above.
        unsafe { fy__vdprintf_c(fd, fmt, ap) }
    })
}

#[no_mangle]
pub extern "C" fn fy_vfscanf(f: *mut FyFile, fmt: *const c_char, ap: *mut c_void) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: as above.
        unsafe { fy__vfscanf_c(f.cast(), fmt, ap) }
    })
}

#[no_mangle]
pub extern "C" fn fy_vscanf(fmt: *const c_char, ap: *mut c_void) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: as above, on stdin.
        unsafe { fy__vfscanf_c(fy_stdin.cast(), fmt, ap) }
    })
}

/// Marks an error on the stream (for the C side).
#[no_mangle]
pub extern "C" fn fy__seterr(f: *mut FyFile, e: c_int) {
    ffi_guard((), libc::EIO, || {
        if let Some(file) = file::file_ref(f) {
            let g = file.locked();
            // SAFETY: lock held.
            fail(unsafe { g.state() }, e);
        }
    })
}

#[no_mangle]
pub extern "C" fn fy_perror(s: *const c_char) {
    ffi_guard((), libc::EIO, || {
        let e = file::errno_value();
        // strerror_r into our own buffer: perror must leave strerror's
        // static buffer alone (a string the caller got from strerror stays
        // valid, as glibc's; gnulib's test-perror2). Unknown numbers get
        // strerror's "Unknown error N" text too.
        let mut buf = [0 as c_char; 1024];
        // SAFETY: buf is writable for its length; strerror_r NUL-terminates.
        unsafe { libc::strerror_r(e, buf.as_mut_ptr(), buf.len()) };
        // SAFETY: NUL-terminated by strerror_r (the buffer is large enough).
        let msg = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes();
        let mut line = Vec::new();
        if !s.is_null() && !cstr(s).is_empty() {
            line.extend_from_slice(cstr(s));
            line.extend_from_slice(b": ");
        }
        line.extend_from_slice(msg);
        line.push(b'\n');
        // SAFETY: reading the std stream pointer.
        let f = unsafe { fy_stderr };
        fy__fwrite(line.as_ptr().cast(), 1, line.len(), f);
        set_errno(e);
    })
}
