//! ferry/stdio.h: source-compatible stdio on ferry streams.
//!
//! Every function settles the inline window first (see `file`), works on
//! the stream under the FILE's lock, and reports errors as glibc does:
//! a return of EOF / NULL / 0 / -1, errno, and the stream's error flag.

use crate::ffi::ffi_guard;
use crate::file::{
    self, errno_of, fail, for_read, for_write, guard, read_bytes, set_errno, settle, stream_of,
    with_stream, write_bytes, Buffering, FyFile, Kind, State, Window, STDERR, STDIN, STDOUT,
};
use ferry::stream::Backend;
use ferry::Stream;
use libc::{c_char, c_int, c_long, c_void, off_t, size_t, ssize_t};
use std::ffi::CStr;
use std::io::{self, BufRead, SeekFrom};
use std::os::fd::{FromRawFd, IntoRawFd, OwnedFd};

#[no_mangle]
pub static mut fy_stdin: *mut FyFile = STDIN.0.get();
#[no_mangle]
pub static mut fy_stdout: *mut FyFile = STDOUT.0.get();
#[no_mangle]
pub static mut fy_stderr: *mut FyFile = STDERR.0.get();

const EOF: c_int = libc::EOF;

/// open(2) flags and directions of an fopen mode, as glibc reads it.
pub(crate) fn parse_mode(mode: *const c_char) -> Option<(c_int, bool, bool)> {
    if mode.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated mode string (the C contract).
    let m = unsafe { CStr::from_ptr(mode) }.to_bytes();
    let (mut acc, mut flags) = match m.first()? {
        b'r' => (libc::O_RDONLY, 0),
        b'w' => (libc::O_WRONLY, libc::O_CREAT | libc::O_TRUNC),
        b'a' => (libc::O_WRONLY, libc::O_CREAT | libc::O_APPEND),
        _ => return None,
    };
    for &c in m.iter().skip(1).take(6) {
        match c {
            b'+' => acc = libc::O_RDWR,
            b'x' => flags |= libc::O_EXCL,
            b'e' => flags |= libc::O_CLOEXEC,
            b',' => break,
            _ => {}
        }
    }
    let read = acc != libc::O_WRONLY;
    let write = acc != libc::O_RDONLY;
    Some((acc | flags, read, write))
}

/// A FILE over an open descriptor; `name` names it in errors.
fn file_over_fd(fd: c_int, name: &str, read: bool, write: bool) -> *mut FyFile {
    file_over_fd_with(fd, name, read, write, Backend::Auto)
}

fn file_over_fd_with(
    fd: c_int,
    name: &str,
    read: bool,
    write: bool,
    backend: Backend,
) -> *mut FyFile {
    // SAFETY: `fd` is open and handed to the stream, which closes it.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    match Stream::from_fd_with(owned, name, backend) {
        Ok(s) => {
            // glibc: a stream that only appends starts at the end ("a+"
            // starts at 0 for reading).
            if write && !read && s.len().is_ok() {
                // SAFETY: F_GETFL on the stream's open descriptor.
                let fl = unsafe { libc::fcntl(fd, libc::F_GETFL) };
                if fl >= 0 && fl & libc::O_APPEND != 0 {
                    let _ = s.seek_to(SeekFrom::End(0));
                }
            }
            let f = file::new_file(Some(s), 0, fd, read, write, Kind::Plain, true);
            if backend == Backend::Sequential {
                // SAFETY: just made; no one else sees it yet.
                unsafe { (*(*f).st.get()).seekable = false };
            }
            crate::unistd::register(fd, f);
            f
        }
        Err(e) => {
            // A directory opened for reading: glibc's fopen succeeds and
            // reads fail with EISDIR.
            let e = errno_of(&e);
            if e == libc::EISDIR && !write {
                file::new_file(None, libc::EISDIR, -1, read, write, Kind::Plain, true)
            } else {
                set_errno(e);
                std::ptr::null_mut()
            }
        }
    }
}

fn path_name(path: *const c_char) -> String {
    // SAFETY: a NUL-terminated path (the C contract).
    unsafe { CStr::from_ptr(path) }
        .to_string_lossy()
        .into_owned()
}

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
            Backend::Auto
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
        match Stream::from_fd_with(owned, &path.to_string_lossy(), Backend::Auto) {
            Ok(s) => {
                st.stream = Some(s);
                st.fail = 0;
                st.closed = false;
                st.fd = fd;
                st.readable = read;
                st.writable = write;
                st.eof = false;
                st.err = false;
                st.push.clear();
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
            write_bytes(st, data)?;
            open_write_window(file, st);
            Ok(n)
        })
    })
}

/// After a write on a fully buffered stream, the room left in the
/// stream's buffer becomes the write window: the next small fwrite or
/// putc is an inline copy.
fn open_write_window(file: &FyFile, st: &mut State) {
    if st.buffering != Buffering::Full || !matches!(st.kind, Kind::Plain | Kind::Child(_)) {
        return;
    }
    let Ok(g) = guard(st) else { return };
    let Ok(room) = g.write_space() else { return };
    let (p, k) = (room.as_mut_ptr(), room.len());
    if k > 0 {
        file.set_write_window(st, p, k);
    }
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
                let room = g.write_space().map_err(|e| errno_of(&e))?;
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

fn cstr<'a>(s: *const c_char) -> &'a [u8] {
    // SAFETY: a NUL-terminated string (the C contract).
    unsafe { CStr::from_ptr(s) }.to_bytes()
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
            open_write_window(file, st);
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

fn seek(f: *mut FyFile, off: i64, whence: c_int) -> c_int {
    with_stream(f, -1, stream_of, |_, st| {
        if !st.seekable {
            return Err(libc::ESPIPE);
        }
        let pending = st.push.len() as i64;
        let to = match whence {
            libc::SEEK_SET => SeekFrom::Start(u64::try_from(off).map_err(|_| libc::EINVAL)?),
            libc::SEEK_CUR => {
                let here = guard(st)?.position() as i64 - pending;
                let t = here.checked_add(off).ok_or(libc::EOVERFLOW)?;
                SeekFrom::Start(u64::try_from(t).map_err(|_| libc::EINVAL)?)
            }
            libc::SEEK_END => {
                let len = st
                    .stream
                    .as_ref()
                    .ok_or(libc::EBADF)?
                    .len()
                    .map_err(|e| errno_of(&e))?;
                let t = (len as i64).checked_add(off).ok_or(libc::EOVERFLOW)?;
                SeekFrom::Start(u64::try_from(t).map_err(|_| libc::EINVAL)?)
            }
            _ => return Err(libc::EINVAL),
        };
        st.push.clear();
        guard(st)?.seek_to(to).map_err(|e| errno_of(&e))?;
        st.eof = false;
        Ok(0)
    })
}

#[no_mangle]
pub extern "C" fn fy_fseek(f: *mut FyFile, off: c_long, whence: c_int) -> c_int {
    ffi_guard(-1, libc::EIO, || seek(f, off, whence))
}

#[no_mangle]
pub extern "C" fn fy_fseeko(f: *mut FyFile, off: off_t, whence: c_int) -> c_int {
    ffi_guard(-1, libc::EIO, || seek(f, off, whence))
}

fn tell(f: *mut FyFile) -> i64 {
    with_stream(f, -1, stream_of, |_, st| {
        if !st.seekable {
            return Err(libc::ESPIPE);
        }
        let pushed = st.push.len() as i64;
        let pos = guard(st)?.position() as i64 - pushed;
        if pos < 0 {
            return Err(libc::EIO);
        }
        Ok(pos)
    })
}

#[no_mangle]
pub extern "C" fn fy_ftell(f: *mut FyFile) -> c_long {
    ffi_guard(-1, libc::EIO, || tell(f))
}

#[no_mangle]
pub extern "C" fn fy_ftello(f: *mut FyFile) -> off_t {
    ffi_guard(-1, libc::EIO, || tell(f))
}

#[no_mangle]
pub extern "C" fn fy_rewind(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || {
        let e = file::errno_value();
        seek(f, 0, libc::SEEK_SET);
        set_errno(e);
        fy_clearerr(f);
    })
}

#[no_mangle]
pub extern "C" fn fy_fgetpos(f: *mut FyFile, pos: *mut libc::fpos_t) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        let p = tell(f);
        if p < 0 {
            return -1;
        }
        // SAFETY: the caller's fpos_t; zeroed, then its offset (glibc's
        // fpos_t begins with the offset, __pos).
        unsafe {
            std::ptr::write_bytes(pos, 0, 1);
            *(pos as *mut i64) = p;
        }
        0
    })
}

#[no_mangle]
pub extern "C" fn fy_fsetpos(f: *mut FyFile, pos: *const libc::fpos_t) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        // SAFETY: an fpos_t from fy_fgetpos: its offset first.
        let p = unsafe { *(pos as *const i64) };
        seek(f, p, libc::SEEK_SET)
    })
}

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
pub extern "C" fn fy_perror(s: *const c_char) {
    ffi_guard((), libc::EIO, || {
        let e = file::errno_value();
        // SAFETY: strerror returns a valid string for any errno.
        let msg = unsafe { CStr::from_ptr(libc::strerror(e)) }.to_bytes();
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

#[no_mangle]
pub extern "C" fn fy_fmemopen(buf: *mut c_void, size: size_t, mode: *const c_char) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        let Some((flags, read, write)) = parse_mode(mode) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        if size == 0 {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        if isize::try_from(size).is_err() {
            // No buffer is that long (glibc's calloc says ENOMEM for it).
            set_errno(libc::ENOMEM);
            return std::ptr::null_mut();
        }
        let (buf, owned) = if buf.is_null() {
            // SAFETY: a zeroed buffer of our own.
            let b = unsafe { libc::calloc(size, 1) } as *mut u8;
            if b.is_null() {
                set_errno(libc::ENOMEM);
                return std::ptr::null_mut();
            }
            (b, true)
        } else {
            (buf as *mut u8, false)
        };
        // SAFETY: the caller's `size` bytes (or ours); size ≤ isize::MAX.
        let bytes = unsafe { std::slice::from_raw_parts(buf, size) };
        let truncating = flags & libc::O_TRUNC != 0;
        let appending = flags & libc::O_APPEND != 0;
        // "w": nothing; "a": the contents run to the first NUL; else all
        // of the buffer.
        let initial: &[u8] = if truncating {
            &[]
        } else if appending {
            &bytes[..memchr::memchr(0, bytes).unwrap_or(size)]
        } else {
            bytes
        };
        // The stream's copy, allocated fallibly: ENOMEM, not an abort.
        let mut content = Vec::new();
        if content.try_reserve_exact(initial.len()).is_err() {
            if owned {
                // SAFETY: our own calloc'd buffer, not handed out.
                unsafe { libc::free(buf.cast()) };
            }
            set_errno(libc::ENOMEM);
            return std::ptr::null_mut();
        }
        content.extend_from_slice(initial);
        if truncating && size > 0 {
            // SAFETY: the caller's buffer: glibc writes the NUL at once.
            unsafe { *buf = 0 };
        }
        let start = if appending { content.len() } else { 0 };
        let s = Stream::from_bytes(content);
        if start > 0 && s.seek_to(SeekFrom::Start(start as u64)).is_err() {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        file::new_file(
            Some(s),
            0,
            -1,
            read,
            write,
            Kind::Fmem { buf, size, owned },
            true,
        )
    })
}

#[no_mangle]
pub extern "C" fn fy_open_memstream(ptr: *mut *mut c_char, size: *mut size_t) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        if ptr.is_null() || size.is_null() {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's out-parameters: an empty string to start with.
        unsafe {
            let b = libc::malloc(1) as *mut c_char;
            if b.is_null() {
                set_errno(libc::ENOMEM);
                return std::ptr::null_mut();
            }
            *b = 0;
            *ptr = b;
            *size = 0;
        }
        file::new_file(
            Some(Stream::memory()),
            0,
            -1,
            false,
            true,
            Kind::MemStream { ptr, size },
            true,
        )
    })
}

/// `write` helper used by unistd: the FILE's bytes with its rules.
pub(crate) fn write_through(f: *mut FyFile, data: &[u8]) -> Result<(), c_int> {
    let r = with_stream(f, Err(0), for_write, |_, st| Ok(write_bytes(st, data)));
    r.map_err(|e| if e == 0 { file::errno_value() } else { e })
}
