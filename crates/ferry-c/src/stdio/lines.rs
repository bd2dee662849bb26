//! Lines: fgets, getline, getdelim.

use crate::ffi::ffi_guard;
use crate::file::{self, for_read, guard, set_errno, with_stream, FyFile, State, Window};
use libc::{c_char, c_int, size_t, ssize_t};
use std::io::{self, BufRead};

/// Reads up to `max` bytes through the first `delim` (included) into
/// `sink`; returns the count. Pushed-back bytes first.
fn read_through(
    file: &FyFile,
    st: &mut State,
    delim: u8,
    max: usize,
    sink: &mut dyn FnMut(&[u8]) -> Result<(), c_int>,
) -> Result<usize, c_int> {
    let mut got = 0;
    while !st.push.is_empty() && got < max {
        let b = st.push.remove(0);
        sink(&[b])?;
        got += 1;
        if b == delim {
            return Ok(got);
        }
    }
    if st.eof {
        // The end-of-file indicator is sticky (C11 7.21.7.1, glibc since
        // 2.28): no read until clearerr, a seek or ungetc, even if the
        // file has grown.
        return Ok(got);
    }
    if super::rw::unbuffered_read(st) {
        // A byte a call, as glibc's unbuffered fgets and getline.
        let mut b = [0u8];
        while got < max && super::rw::read_direct(st, &mut b)? == 1 {
            sink(&b)?;
            got += 1;
            if b[0] == delim {
                break;
            }
        }
        return Ok(got);
    }
    let g = guard(st)?;
    while got < max {
        let buf = match g.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                return file::read_failed(st, got, &e);
            }
        };
        if buf.is_empty() {
            st.eof = true;
            return Ok(got);
        }
        let lim = buf.len().min(max - got);
        let (n, done) = match memchr::memchr(delim, &buf[..lim]) {
            Some(i) => (i + 1, true),
            None => (lim, false),
        };
        sink(&buf[..n])?;
        got += n;
        if done || got == max {
            // The rest of the buffer stays open as the read window: the
            // next line is the header's inline memchr and memcpy.
            let (p, avail) = (buf.as_ptr() as *mut u8, buf.len());
            file.set_read_window(st, Window::Read, p, avail);
            file.advance_rpos(n);
            return Ok(got);
        }
        g.consume(n);
    }
    Ok(got)
}

#[no_mangle]
pub extern "C" fn fy_fgets(s: *mut c_char, n: c_int, f: *mut FyFile) -> *mut c_char {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        if n <= 0 || s.is_null() {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        if n == 1 {
            // SAFETY: room for the NUL.
            unsafe { *s = 0 };
            return s;
        }
        with_stream(f, std::ptr::null_mut(), for_read, |file, st| {
            let mut at = 0usize;
            let max = n as usize - 1;
            let got = read_through(file, st, b'\n', max, &mut |b| {
                // SAFETY: at + b.len() <= max < n: inside the caller's buffer.
                unsafe {
                    std::ptr::copy_nonoverlapping(b.as_ptr(), (s as *mut u8).add(at), b.len())
                };
                at += b.len();
                Ok(())
            })?;
            if got == 0 {
                return Ok(std::ptr::null_mut());
            }
            // SAFETY: got <= max < n.
            unsafe { *s.add(got) = 0 };
            Ok(s)
        })
    })
}

#[no_mangle]
pub extern "C" fn fy_fgets_unlocked(s: *mut c_char, n: c_int, f: *mut FyFile) -> *mut c_char {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || fy_fgets(s, n, f))
}

#[no_mangle]
pub extern "C" fn fy__getdelim(
    line: *mut *mut c_char,
    cap: *mut size_t,
    delim: c_int,
    f: *mut FyFile,
) -> ssize_t {
    ffi_guard(-1, libc::EIO, || {
        if line.is_null() || cap.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        with_stream(f, -1, for_read, |file, st| {
            // SAFETY: the caller's pointer and capacity (getdelim's contract):
            // a malloc'd buffer of *cap bytes, or NULL.
            let (mut buf, mut room) = unsafe { (*line as *mut u8, *cap) };
            if buf.is_null() || room == 0 {
                room = 120;
                // SAFETY: plain malloc/realloc of the caller's buffer.
                buf = unsafe { libc::realloc(buf.cast(), room) } as *mut u8;
                if buf.is_null() {
                    return Err(libc::ENOMEM);
                }
                // SAFETY: publish at once, so the caller can free it.
                unsafe {
                    *line = buf.cast();
                    *cap = room;
                }
            }
            let mut at = 0usize;
            let got = read_through(file, st, delim as u8, usize::MAX, &mut |b| {
                if at + b.len() + 1 > room {
                    let want = (at + b.len() + 1).max(room.saturating_mul(2));
                    // SAFETY: growing the caller's malloc'd buffer.
                    let nb = unsafe { libc::realloc(buf.cast(), want) } as *mut u8;
                    if nb.is_null() {
                        return Err(libc::ENOMEM);
                    }
                    buf = nb;
                    room = want;
                    // SAFETY: publish the new buffer at once.
                    unsafe {
                        *line = buf.cast();
                        *cap = room;
                    }
                }
                // SAFETY: at + len + 1 <= room.
                unsafe { std::ptr::copy_nonoverlapping(b.as_ptr(), buf.add(at), b.len()) };
                at += b.len();
                Ok(())
            })?;
            // SAFETY: at < room.
            unsafe { *buf.add(at) = 0 };
            if got == 0 {
                return Ok(-1);
            }
            Ok(got as ssize_t)
        })
    })
}

#[no_mangle]
pub extern "C" fn fy_getline(line: *mut *mut c_char, cap: *mut size_t, f: *mut FyFile) -> ssize_t {
    ffi_guard(-1, libc::EIO, || {
        fy__getdelim(line, cap, c_int::from(b'\n'), f)
    })
}

/// getdelim for callers without the header's inline fast path.
#[no_mangle]
pub extern "C" fn fy_getdelim(
    line: *mut *mut c_char,
    cap: *mut size_t,
    delim: c_int,
    f: *mut FyFile,
) -> ssize_t {
    ffi_guard(-1, libc::EIO, || fy__getdelim(line, cap, delim, f))
}
