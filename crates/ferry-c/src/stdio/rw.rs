//! Reading and writing bytes: fread, fwrite, the slow paths of the inline
//! getc and putc, ungetc, fputs, puts.

use super::*;
use crate::ffi::ffi_guard;
use crate::file::{
    self, errno_of, fail, for_read, for_write, guard, read_bytes, set_errno, settle, stream_of,
    with_stream, write_bytes, Buffering, FyFile, Kind, State, Window,
};
use libc::{c_char, c_int, c_void, size_t};
use std::io::{self, BufRead};

/// size * n bytes, if one object can hold that many: `None` when the
/// product overflows or passes `isize::MAX` (no buffer is that large, and
/// a slice of it could not even be formed).
fn total(size: size_t, n: size_t) -> Option<usize> {
    size.checked_mul(n).filter(|&t| isize::try_from(t).is_ok())
}

/// fread and fwrite of more bytes than any buffer holds. glibc multiplies
/// size * n modulo 2^64 and hands the count to read(2) or write(2), which
/// refuse it with EFAULT (no buffer that long is mapped) and set the
/// error flag; when the product wraps to 0 or past 2^63 glibc returns 0
/// with no error. ferry fails every such call the first way, before it
/// touches the caller's memory: 0, errno EFAULT, ferror set.
fn too_large(f: *mut FyFile) -> size_t {
    let Some(file) = file::file_ref(f) else {
        set_errno(libc::EFAULT);
        return 0;
    };
    let g = file.locked();
    // SAFETY: lock held; one borrow.
    fail(unsafe { g.state() }, libc::EFAULT);
    0
}

/// fread's slow path (the inline `fy_fread` copies straight out of the
/// read window when the request fits in it).
#[no_mangle]
pub extern "C" fn fy__fread(ptr: *mut c_void, size: size_t, n: size_t, f: *mut FyFile) -> size_t {
    ffi_guard(0, libc::EIO, || {
        let Some(len) = total(size, n) else {
            return too_large(f);
        };
        if len == 0 {
            return 0;
        }
        with_stream(f, 0, for_read, |file, st| {
            // SAFETY: the caller's buffer of size*n bytes.
            let out = unsafe { std::slice::from_raw_parts_mut(ptr as *mut u8, len) };
            if st.eof && st.push.is_empty() {
                // The end-of-file indicator is sticky (C11 7.21.7.1, glibc
                // since 2.28): nothing is read until clearerr or a seek,
                // even if the file has grown.
                return Ok(0);
            }
            if unbuffered_read(st) {
                return read_direct(st, out).map(|got| got / size);
            }
            if !st.push.is_empty() || len >= DIRECT {
                return read_bytes(st, out).map(|got| got / size);
            }
            // Through the stream's current buffer, whose rest then stays open
            // as the read window: the next small fread is an inline memcpy.
            let mut got = 0;
            let g = guard(st)?;
            loop {
                let (p, avail) = match g.fill_buf() {
                    Ok(b) => (b.as_ptr() as *mut u8, b.len()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        return file::read_failed(st, got, &e).map(|g| g / size);
                    }
                };
                if avail == 0 {
                    st.eof = true;
                    return Ok(got / size);
                }
                let k = avail.min(len - got);
                // SAFETY: k bytes of the stream's buffer into the caller's.
                unsafe { std::ptr::copy_nonoverlapping(p, out.as_mut_ptr().add(got), k) };
                got += k;
                if got == len {
                    if k < avail {
                        // The rest is unread: the window (consumed on settle).
                        file.set_read_window(st, Window::Read, p, avail);
                        file.advance_rpos(k);
                    } else {
                        guard(st)?.consume(k);
                    }
                    return Ok(n);
                }
                g.consume(k);
            }
        })
    })
}

/// Whether reads on this FILE go straight to its descriptor (setvbuf
/// `_IONBF` on a plain stream with no pushed-back bytes left): glibc's
/// unbuffered stream reads what it is asked for and no more, one byte for
/// getc, so the descriptor's offset is always where the reader is and a
/// child or another handle on it goes on from there, pipes included (GNU
/// ed sets stdin so, and its `!read` shell escape reads the script's next
/// line). ferry's stream would read ahead a whole buffer.
pub(super) fn unbuffered_read(st: &State) -> bool {
    st.buffering == Buffering::None && matches!(st.kind, Kind::Plain) && st.push.is_empty()
}

/// Reads into `out` with read(2) on the descriptor, after handing the
/// stream's offset over to it (the stream, lent, takes the offset back on
/// its next buffered use): as many calls as glibc's unbuffered fread makes,
/// until `out` is full or the end. Sets eof at the end; an error after some
/// bytes keeps them (ferror and errno set).
pub(super) fn read_direct(st: &mut State, out: &mut [u8]) -> Result<usize, c_int> {
    let g = guard(st)?;
    g.flush().map_err(|e| errno_of(&e))?;
    let fd = g.raw_fd().ok_or(libc::EBADF)?;
    let mut got = 0;
    while got < out.len() {
        let rest = &mut out[got..];
        // SAFETY: `rest` is writable memory of `rest.len()` bytes.
        let r = unsafe { libc::read(fd, rest.as_mut_ptr().cast(), rest.len()) };
        if r == 0 {
            st.eof = true;
            break;
        }
        if r < 0 {
            let e = file::errno_value();
            if e == libc::EINTR {
                continue;
            }
            if got > 0 {
                fail(st, e);
                break;
            }
            return Err(e);
        }
        got += r as usize;
    }
    Ok(got)
}

/// Reads at least this large go straight from the stream into the
/// caller's memory (no window).
const DIRECT: usize = 256 << 10;

#[no_mangle]
pub extern "C" fn fy_fread_unlocked(
    ptr: *mut c_void,
    size: size_t,
    n: size_t,
    f: *mut FyFile,
) -> size_t {
    ffi_guard(0, libc::EIO, || fy__fread(ptr, size, n, f))
}

#[no_mangle]
pub extern "C" fn fy__fwrite(
    ptr: *const c_void,
    size: size_t,
    n: size_t,
    f: *mut FyFile,
) -> size_t {
    ffi_guard(0, libc::EIO, || {
        let Some(len) = total(size, n) else {
            return too_large(f);
        };
        if len == 0 {
            return 0;
        }
        with_stream(f, 0, for_write, |file, st| {
            // SAFETY: the caller's size*n bytes.
            let data = unsafe { std::slice::from_raw_parts(ptr as *const u8, len) };
            if let Kind::Fmem(_) = st.kind {
                // An unbuffered fmemopen write that ran out of room: the
                // items the cookie took (ferror, errno as it set them).
                let (done, r) = crate::file::fmem::write(st, data);
                return match r {
                    Err(e) if done == 0 => Err(e),
                    Err(e) => {
                        crate::file::fail(st, e);
                        Ok(done / size)
                    }
                    Ok(()) => Ok(n),
                };
            }
            write_bytes(st, data)?;
            open_write_window(file, st)?;
            Ok(n)
        })
    })
}

/// After a write on a fully buffered stream, the room left in the
/// stream's buffer becomes the write window: the next small fwrite or
/// putc is an inline copy.
fn open_write_window(file: &FyFile, st: &mut State) -> Result<(), c_int> {
    if st.buffering != Buffering::Full || !matches!(st.kind, Kind::Plain | Kind::Child(_)) {
        return Ok(());
    }
    let Ok(g) = guard(st) else { return Ok(()) };
    let room = match write_room(g) {
        Ok(r) => r,
        // A full buffer whose write failed: reported by this call.
        Err(e) if e != 0 => return Err(e),
        Err(_) => return Ok(()),
    };
    let (p, k) = (room.as_mut_ptr(), room.len());
    if k > 0 {
        file.set_write_window(st, p, k);
    }
    Ok(())
}

/// The stream's write room. An error the stream met writing out a full
/// buffer on the way (when the next one started) is the caller's, as
/// glibc reports a failed flush from the call that filled the buffer:
/// the unwritten bytes are dropped (as after a failed fflush) and its
/// errno returned. Other failures to get room are 0 (the caller writes
/// through the slow path).
fn write_room(g: &mut ferry::Stream) -> Result<&mut [u8], c_int> {
    let failed = match g.write_space() {
        Ok(_) => g.take_error().err(),
        Err(e) => Some(e),
    };
    if let Some(e) = failed {
        if ferry::stream::os_error(&e).is_none() {
            return Err(0);
        }
        g.discard_unwritten();
        return Err(errno_of(&e));
    }
    g.write_space().map_err(|_| 0)
}

#[no_mangle]
pub extern "C" fn fy_fwrite_unlocked(
    ptr: *const c_void,
    size: size_t,
    n: size_t,
    f: *mut FyFile,
) -> size_t {
    ffi_guard(0, libc::EIO, || fy__fwrite(ptr, size, n, f))
}

/// getc's slow path: refill the read window (pushed-back bytes first).
#[no_mangle]
pub extern "C" fn fy__uflow(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        with_stream(f, EOF, for_read, |file, st| {
            if !st.push.is_empty() {
                let base = st.push.as_mut_ptr();
                let len = st.push.len();
                file.set_read_window(st, Window::Push, base, len);
                file.advance_rpos(1);
                // SAFETY: len ≥ 1.
                return Ok(c_int::from(unsafe { *base }));
            }
            if st.eof {
                return Ok(EOF);
            }
            if st.buffering != Buffering::Full {
                crate::registry::flush_line_buffered(file);
            }
            if unbuffered_read(st) {
                let mut b = [0u8];
                return Ok(match read_direct(st, &mut b)? {
                    0 => EOF,
                    _ => c_int::from(b[0]),
                });
            }
            let g = guard(st)?;
            let (p, n) = match g.fill_buf() {
                Ok(b) => (b.as_ptr() as *mut u8, b.len()),
                Err(e) => return Err(errno_of(&e)),
            };
            if n == 0 {
                st.eof = true;
                return Ok(EOF);
            }
            file.set_read_window(st, Window::Read, p, n);
            file.advance_rpos(1);
            // SAFETY: n ≥ 1 bytes at p.
            Ok(c_int::from(unsafe { *p }))
        })
    })
}

/// putc's slow path: open a write window (fully buffered streams) or
/// write the byte with the stream's buffering rules.
#[no_mangle]
pub extern "C" fn fy__oflow(f: *mut FyFile, c: c_int) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let b = c as u8;
        with_stream(f, EOF, for_write, |file, st| {
            if st.buffering == Buffering::Full && matches!(st.kind, Kind::Plain | Kind::Child(_)) {
                let g = guard(st)?;
                let room = match write_room(g) {
                    Ok(r) => r,
                    Err(0) => &mut [],
                    Err(e) => return Err(e),
                };
                if !room.is_empty() {
                    room[0] = b;
                    let (p, n) = (room.as_mut_ptr(), room.len());
                    file.set_write_window(st, p, n);
                    // SAFETY: lock held; one byte of the window is written.
                    unsafe { (*(file as *const FyFile as *mut FyFile)).wpos = p.add(1) };
                    return Ok(c_int::from(b));
                }
            }
            write_bytes(st, &[b]).map(|()| c_int::from(b))
        })
    })
}

#[no_mangle]
pub extern "C" fn fy_fgetc(f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || fy__uflow(f))
}

#[no_mangle]
pub extern "C" fn fy_fputc(c: c_int, f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || fy__oflow(f, c))
}

#[no_mangle]
pub extern "C" fn fy_ungetc(c: c_int, f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        if c == EOF {
            return EOF;
        }
        let Some(file) = file::file_ref(f) else {
            return EOF;
        };
        let g = file.locked();
        // SAFETY: lock held; one borrow.
        let st = unsafe { g.state() };
        if stream_of(st).is_err() || !st.readable {
            return EOF;
        }
        st.last = file::Last::Read;
        let b = c as u8;
        // The same byte just read: step back in the window (no copy).
        if st.window == Window::Read || st.window == Window::Push {
            let base = st.rbase;
            let pos = file.rpos();
            // SAFETY: pos-1 is inside the window when pos > base.
            if pos > base && unsafe { *pos.sub(1) } == b {
                // SAFETY: lock held; stays within the window.
                unsafe { (*(file as *const FyFile as *mut FyFile)).rpos = pos.sub(1) };
                st.eof = false;
                return c_int::from(b);
            }
        }
        if settle(file, st).is_err() {
            return EOF;
        }
        st.push.insert(0, b);
        st.eof = false;
        c_int::from(b)
    })
}

#[no_mangle]
pub extern "C" fn fy__fputs(s: *const c_char, f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        if s.is_null() {
            set_errno(libc::EFAULT);
            return EOF;
        }
        let data = cstr(s);
        with_stream(f, EOF, for_write, |file, st| {
            write_bytes(st, data)?;
            open_write_window(file, st)?;
            Ok(1)
        })
    })
}

/// fputs for callers without the header's inline fast path.
#[no_mangle]
pub extern "C" fn fy_fputs(s: *const c_char, f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || fy__fputs(s, f))
}

#[no_mangle]
pub extern "C" fn fy_fputs_unlocked(s: *const c_char, f: *mut FyFile) -> c_int {
    ffi_guard(-1, libc::EIO, || fy__fputs(s, f))
}

#[no_mangle]
pub extern "C" fn fy_puts(s: *const c_char) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: reading the std stream pointer.
        let f = unsafe { fy_stdout };
        let Some(file) = file::file_ref(f) else {
            return EOF;
        };
        let _g = file.locked();
        if fy__fputs(s, f) == EOF {
            return EOF;
        }
        if fy_fputc(c_int::from(b'\n'), f) == EOF {
            return EOF;
        }
        1
    })
}
