//! ferry/aio.h: asynchronous file requests in C (Titanium's AsyncFile),
//! on `ferry::aio`. The buffer is the caller's memory, lent to the
//! request until the kernel is done with it.

use crate::ffi::ffi_guard;
use crate::file::{errno_of, set_errno};
use ferry::aio::{
    all_done, any_done, is_cancelled, AsyncFile, Backend, IoBuffer, Pending, Request, State,
};
use libc::{c_char, c_int, c_long, c_void, mode_t, size_t, ssize_t};
use std::ffi::CStr;
use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::Duration;

/// `fy_aio_file`.
pub struct FyAioFile(AsyncFile);

/// `fy_aio_req`.
pub struct FyAioReq(Request<CBuffer>);

/// The caller's bytes, lent to one request.
pub struct CBuffer {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the C contract of ferry/aio.h: the memory stays valid and is
// not touched by the program from the start of the request until the
// request says the kernel let go of it (fy_aio_done/fy_aio_wait returning
// 1, or an error other than ECANCELED, or fy_aio_free returning); the
// pointer is only used by the thread that owns the request at a time.
unsafe impl Send for CBuffer {}

// SAFETY: the span is the caller's memory under the contract above; the
// same span every call; a write's bytes are not written meanwhile (the
// caller's promise).
unsafe impl IoBuffer for CBuffer {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        if self.len == 0 {
            return Some(&mut []);
        }
        // SAFETY: `ptr` is valid for `len` bytes and lent to this request
        // (the header's contract); NULL with a length was refused.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    fn write_bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: as above, read only.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

fn fail<T>(v: T, e: &io::Error) -> T {
    set_errno(errno_of(e));
    v
}

fn backend_of(b: c_int) -> Option<Backend> {
    match b {
        0 => Some(Backend::Auto),
        1 => Some(Backend::IoUring),
        2 => Some(Backend::Threads),
        _ => None,
    }
}

/// Any negative time waits for ever.
fn timeout_of(ms: c_long) -> Option<Duration> {
    (ms >= 0).then(|| Duration::from_millis(ms as u64))
}

/// `fy_aio_open(path, flags, mode, backend)`.
#[no_mangle]
pub extern "C" fn fy_aio_open(
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
    backend: c_int,
) -> *mut FyAioFile {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        let Some(b) = backend_of(backend) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        if path.is_null() {
            set_errno(libc::EFAULT);
            return std::ptr::null_mut();
        }
        // SAFETY: a NUL-terminated string (the header's contract).
        let p = unsafe { CStr::from_ptr(path) };
        // SAFETY: open(2) with the caller's flags on a valid C string.
        let fd = unsafe { libc::open(p.as_ptr(), flags | libc::O_CLOEXEC, mode as libc::c_uint) };
        if fd < 0 {
            return std::ptr::null_mut();
        }
        // SAFETY: a descriptor open(2) just returned, owned here.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        match AsyncFile::from_fd(fd, b) {
            Ok(f) => Box::into_raw(Box::new(FyAioFile(f))),
            Err(e) => fail(std::ptr::null_mut(), &e),
        }
    })
}

/// `fy_aio_close`: cancels the file's reads, waits for everything, closes.
#[no_mangle]
pub extern "C" fn fy_aio_close(f: *mut FyAioFile) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        if f.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: a file from fy_aio_open, closed once (the contract).
        let f = unsafe { Box::from_raw(f) };
        match f.0.close() {
            Ok(()) => 0,
            Err(e) => fail(-1, &e),
        }
    })
}

fn start(
    f: *const FyAioFile,
    offset: i64,
    buf: *mut u8,
    len: size_t,
    write: bool,
) -> *mut FyAioReq {
    // SAFETY: a live file from fy_aio_open, or NULL.
    let Some(f) = (unsafe { f.as_ref() }) else {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    };
    if buf.is_null() && len > 0 {
        set_errno(libc::EFAULT);
        return std::ptr::null_mut();
    }
    if offset < -1 {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    let at = (offset >= 0).then_some(offset as u64);
    let b = CBuffer { ptr: buf, len };
    let r = if write {
        f.0.write_buffer_at(at, b)
    } else {
        f.0.read_buffer_at(at, b)
    };
    match r {
        Ok(r) => Box::into_raw(Box::new(FyAioReq(r))),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
            set_errno(libc::ENXIO);
            std::ptr::null_mut()
        }
        Err(e) => fail(std::ptr::null_mut(), &e),
    }
}

/// `fy_aio_read(f, offset, buf, len)`: offset -1 for the file position.
#[no_mangle]
pub extern "C" fn fy_aio_read(
    f: *const FyAioFile,
    offset: i64,
    buf: *mut c_void,
    len: size_t,
) -> *mut FyAioReq {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        start(f, offset, buf.cast(), len, false)
    })
}

/// `fy_aio_write(f, offset, buf, len)`.
#[no_mangle]
pub extern "C" fn fy_aio_write(
    f: *const FyAioFile,
    offset: i64,
    buf: *const c_void,
    len: size_t,
) -> *mut FyAioReq {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        start(f, offset, buf.cast_mut().cast(), len, true)
    })
}

/// 1 done, 0 in flight, -1 with errno (the sticky error; ECANCELED).
fn answer(r: io::Result<bool>) -> c_int {
    match r {
        Ok(true) => 1,
        Ok(false) => 0,
        Err(e) if is_cancelled(&e) => {
            set_errno(libc::ECANCELED);
            -1
        }
        Err(e) => fail(-1, &e),
    }
}

fn req<'a>(r: *const FyAioReq) -> Option<&'a Request<CBuffer>> {
    // SAFETY: a live request from fy_aio_read/fy_aio_write, or NULL.
    unsafe { r.as_ref() }.map(|r| &r.0)
}

/// 1 only once the buffer is the program's again (the header's promise):
/// a cleared cancel whose completion has not come is still in flight
/// for the program's memory.
fn released(r: &Request<CBuffer>, got: c_int, timeout: Option<Duration>) -> c_int {
    if got == 1 && !r.wait_released(timeout) {
        return 0;
    }
    got
}

/// `fy_aio_set_timeout(f, timeout_ms)`: -1 (any negative) no deadline.
#[no_mangle]
pub extern "C" fn fy_aio_set_timeout(f: *const FyAioFile, timeout_ms: c_long) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        if f.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: a live file from fy_aio_open (the contract).
        let f = unsafe { &*f };
        f.0.set_timeout(timeout_of(timeout_ms));
        0
    })
}

/// `fy_aio_done(r)`.
#[no_mangle]
pub extern "C" fn fy_aio_done(r: *const FyAioReq) -> c_int {
    ffi_guard(-1, libc::EIO, || match req(r) {
        Some(r) => released(r, answer(r.done()), Some(Duration::ZERO)),
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `fy_aio_wait(r, timeout_ms)`: -1 waits for ever.
#[no_mangle]
pub extern "C" fn fy_aio_wait(r: *const FyAioReq, timeout_ms: c_long) -> c_int {
    ffi_guard(-1, libc::EIO, || match req(r) {
        Some(r) => {
            let t = timeout_of(timeout_ms);
            released(r, answer(r.wait(t)), t)
        }
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// The requests of a C array, or None if one is NULL.
fn list<'a>(reqs: *const *const FyAioReq, n: size_t) -> Option<Vec<&'a dyn Pending>> {
    if n == 0 {
        return Some(Vec::new());
    }
    if reqs.is_null() {
        return None;
    }
    // SAFETY: an array of n request pointers (the contract).
    let ptrs = unsafe { std::slice::from_raw_parts(reqs, n) };
    ptrs.iter()
        .map(|&p| req(p).map(|r| r as &dyn Pending))
        .collect()
}

/// `fy_aio_all(reqs, n, timeout_ms)`: 1 all done, 0 timed out, -1 errno.
#[no_mangle]
pub extern "C" fn fy_aio_all(reqs: *const *const FyAioReq, n: size_t, timeout_ms: c_long) -> c_int {
    ffi_guard(-1, libc::EIO, || match list(reqs, n) {
        Some(l) => answer(all_done(&l, timeout_of(timeout_ms))),
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `fy_aio_any(reqs, n, timeout_ms)`: the index of one done, -2 timed
/// out (or n is 0), -1 errno.
#[no_mangle]
pub extern "C" fn fy_aio_any(
    reqs: *const *const FyAioReq,
    n: size_t,
    timeout_ms: c_long,
) -> ssize_t {
    ffi_guard(-1, libc::EIO, || match list(reqs, n) {
        Some(l) => match any_done(&l, timeout_of(timeout_ms)) {
            Ok(Some(i)) => i as ssize_t,
            Ok(None) => -2,
            Err(e) => answer(Err(e)) as ssize_t,
        },
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `fy_aio_cancel(r)`: 0, or -1 EINVAL for NULL.
#[no_mangle]
pub extern "C" fn fy_aio_cancel(r: *const FyAioReq) -> c_int {
    ffi_guard(-1, libc::EIO, || match req(r) {
        Some(r) => {
            r.cancel();
            0
        }
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `fy_aio_clear(r)`.
#[no_mangle]
pub extern "C" fn fy_aio_clear(r: *const FyAioReq) -> c_int {
    ffi_guard(-1, libc::EIO, || match req(r) {
        Some(r) => {
            r.clear_exception();
            0
        }
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `fy_aio_bytes(r)`: bytes the request moved once the kernel let go of
/// its buffer (however it ended), else -1.
#[no_mangle]
pub extern "C" fn fy_aio_bytes(r: *const FyAioReq) -> ssize_t {
    ffi_guard(-1, libc::EIO, || match req(r).and_then(|r| r.bytes()) {
        Some(n) => n as ssize_t,
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `fy_aio_released(r)`: 1 once the kernel has let go of the buffer.
#[no_mangle]
pub extern "C" fn fy_aio_released(r: *const FyAioReq) -> c_int {
    ffi_guard(-1, libc::EIO, || match req(r) {
        Some(r) => c_int::from(r.is_released()),
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}

/// `fy_aio_free(r)`: waits until the kernel has let go of the buffer,
/// then frees the request. 0, or -1 EINVAL for NULL.
#[no_mangle]
pub extern "C" fn fy_aio_free(r: *mut FyAioReq) -> c_int {
    ffi_guard(-1, libc::EIO, || {
        if r.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: a request from fy_aio_read/fy_aio_write, freed once.
        let r = unsafe { Box::from_raw(r) };
        let _ = r.0.into_inner();
        0
    })
}

/// `fy_aio_state(r)`: FY_AIO_IN_FLIGHT .. FY_AIO_CLEARED, -1 for NULL.
#[no_mangle]
pub extern "C" fn fy_aio_state(r: *const FyAioReq) -> c_int {
    ffi_guard(-1, libc::EIO, || match req(r) {
        Some(r) => match r.state() {
            State::InFlight => 0,
            State::Completed => 1,
            State::Failed => 2,
            State::Cancelled => 3,
            State::Cleared => 4,
        },
        None => {
            set_errno(libc::EINVAL);
            -1
        }
    })
}
