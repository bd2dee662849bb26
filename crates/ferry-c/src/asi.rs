//! ferry/asi.h: the Alloc Stream Interface in C. Regions are the stream's
//! own bytes; the FILE keeps each one (by its address) until `fy_sfree`.

use crate::ffi::ffi_guard;
use crate::file::{self, errno_of, set_errno, settle, stream_of, FyFile, Held, Kind, State};
use ferry::stream::Backend;
use ferry::{Mode, Stream};
use libc::{c_char, c_int, c_void, mode_t, off_t, size_t, ssize_t};
use std::io::SeekFrom;
use std::os::fd::{FromRawFd, OwnedFd};

/// What salloc returns at end of file: a valid address that needs no free.
static EMPTY: u8 = 0;

fn empty() -> *mut c_void {
    &EMPTY as *const u8 as *mut c_void
}

#[no_mangle]
pub extern "C" fn fy_sopen(
    path: *const c_char,
    flags: c_int,
    mode: mode_t,
    error: *mut c_int,
) -> *mut FyFile {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        let report = |e: c_int| {
            if !error.is_null() {
                // SAFETY: the caller's out-parameter.
                unsafe { *error = -e };
            }
            set_errno(e);
            std::ptr::null_mut()
        };
        if path.is_null() {
            return report(libc::EFAULT);
        }
        // SAFETY: open(2) with the caller's arguments.
        let fd = unsafe { libc::open(path, flags, mode as libc::c_uint) };
        if fd < 0 {
            return report(file::errno_value());
        }
        let acc = flags & libc::O_ACCMODE;
        let (read, write) = (acc != libc::O_WRONLY, acc != libc::O_RDONLY);
        // SAFETY: our descriptor, handed to the stream.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a C path.
        let name = unsafe { std::ffi::CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned();
        let s = match Stream::from_fd_with(owned, &name, Backend::Auto) {
            Ok(s) => s,
            Err(e) => return report(errno_of(&e)),
        };
        // The paper's rule: read-only streams start in read mode, others in
        // write mode.
        if write {
            if let Err(e) = s.set_mode(Mode::Write) {
                return report(errno_of(&e));
            }
        }
        if !error.is_null() {
            // SAFETY: the caller's out-parameter.
            unsafe { *error = 0 };
        }
        let f = file::new_file(Some(s), 0, fd, read, write, Kind::Plain, true);
        crate::unistd::register(fd, f);
        f
    })
}

#[no_mangle]
pub extern "C" fn fy_sclose(s: *mut FyFile) -> c_int {
    ffi_guard(-libc::EIO, libc::EIO, || {
        if s.is_null() {
            return -libc::EINVAL;
        }
        let fd = crate::stdio::fy_fileno(s);
        crate::unistd::forget(fd);
        // SAFETY: the caller gives the stream up.
        match unsafe { file::close_file(s) } {
            Ok(_) => 0,
            Err(e) => {
                set_errno(e);
                -e
            }
        }
    })
}

/// Runs `op` on the settled state, under the FILE's lock when `locked`
/// (else the caller holds it: the `u_` operations).
fn on<R>(
    s: *mut FyFile,
    locked: bool,
    bad: impl FnOnce(c_int) -> R,
    op: impl FnOnce(&mut State) -> Result<R, c_int>,
) -> R {
    let Some(file) = file::file_ref(s) else {
        set_errno(libc::EINVAL);
        return bad(libc::EINVAL);
    };
    let _g = locked.then(|| file.locked());
    // A panic below is an error of the call (-EIO), like any other.
    let r = crate::ffi::caught(|| {
        // SAFETY: the lock is held, by us or (u_ operations) by the
        // caller; one borrow.
        let st = unsafe { &mut *file.st.get() };
        settle(file, st).map_err(|e| errno_of(&e))?;
        stream_of(st)?;
        op(st)
    });
    match r.unwrap_or(Err(libc::EIO)) {
        Ok(r) => r,
        Err(e) => {
            set_errno(e);
            bad(e)
        }
    }
}

fn set_len(len: *mut ssize_t, v: ssize_t) {
    if !len.is_null() {
        // SAFETY: the caller's length argument.
        unsafe { *len = v };
    }
}

/// The errno of a failed salloc. A region larger than any buffer can be
/// comes back as `InvalidInput` with no system error; for C that is
/// malloc's case, ENOMEM.
fn alloc_errno(e: &std::io::Error) -> c_int {
    if ferry::stream::os_error(e).is_none() && e.kind() == std::io::ErrorKind::InvalidInput {
        libc::ENOMEM
    } else {
        errno_of(e)
    }
}

fn alloc(
    st: &mut State,
    mode: Option<Mode>,
    len: *mut ssize_t,
    at: Option<SeekFrom>,
) -> Result<*mut c_void, c_int> {
    if len.is_null() {
        return Err(libc::EINVAL);
    }
    // SAFETY: the caller's length argument.
    let want = unsafe { *len };
    let want = usize::try_from(want).map_err(|_| libc::EINVAL)?;
    let s = st.stream.as_mut().ok_or(libc::EBADF)?;
    if let Some(m) = mode {
        if s.mode() != m {
            s.set_mode(m).map_err(|e| errno_of(&e))?;
        }
    }
    let g = s;
    let reading = g.mode() == Mode::Read;
    if reading && !st.push.is_empty() && at.is_none() {
        // ungetc'd bytes come first: a region of them alone.
        let n = want.min(st.push.len());
        let bytes: Box<[u8]> = st.push.drain(..n).collect();
        let p = bytes.as_ptr() as *mut c_void;
        st.regions.push((p as usize, Held::Push(bytes)));
        set_len(len, n as ssize_t);
        return Ok(p);
    }
    if at.is_some() {
        st.push.clear();
    }
    let (p, n) = if reading {
        let r = match at {
            Some(to) => g.salloc_at(want, to),
            None => g.salloc(want),
        }
        .map_err(|e| alloc_errno(&e))?;
        if r.is_empty() {
            drop(r);
            set_len(len, 0);
            return Ok(empty());
        }
        let raw = r.into_raw();
        let (p, n) = (raw.as_ptr() as *mut c_void, raw.len());
        st.regions.push((p as usize, Held::Read(raw)));
        (p, n)
    } else {
        let r = match at {
            Some(to) => g.salloc_mut_at(want, to),
            None => g.salloc_mut(want),
        }
        .map_err(|e| alloc_errno(&e))?;
        let raw = r.into_raw();
        let (p, n) = (raw.as_ptr() as *mut c_void, raw.len());
        if n == 0 {
            // SAFETY: this stream's region, rebuilt once.
            let _ = unsafe { g.region_mut_from_raw(raw) }.free();
            set_len(len, 0);
            return Ok(empty());
        }
        st.regions.push((p as usize, Held::Write(raw)));
        (p, n)
    };
    if st.readable {
        st.eof = false;
    }
    set_len(len, n as ssize_t);
    Ok(p)
}

fn fail_len(len: *mut ssize_t) -> impl FnOnce(c_int) -> *mut c_void {
    move |e| {
        set_len(len, -(e as ssize_t));
        std::ptr::null_mut()
    }
}

fn seek_from(offset: off_t, whence: c_int) -> Result<SeekFrom, c_int> {
    match whence {
        libc::SEEK_SET => Ok(SeekFrom::Start(
            u64::try_from(offset).map_err(|_| libc::EINVAL)?,
        )),
        libc::SEEK_CUR => Ok(SeekFrom::Current(offset)),
        libc::SEEK_END => Ok(SeekFrom::End(offset)),
        _ => Err(libc::EINVAL),
    }
}

fn mode_of(m: c_int) -> Result<Mode, c_int> {
    match m {
        0 => Ok(Mode::Read),
        1 => Ok(Mode::Write),
        _ => Err(libc::EINVAL),
    }
}

fn salloc(s: *mut FyFile, locked: bool, len: *mut ssize_t) -> *mut c_void {
    on(s, locked, fail_len(len), |st| alloc(st, None, len, None))
}

fn salloc_at(
    s: *mut FyFile,
    locked: bool,
    mode: Option<c_int>,
    len: *mut ssize_t,
    offset: off_t,
    whence: c_int,
) -> *mut c_void {
    on(s, locked, fail_len(len), |st| {
        let m = mode.map(mode_of).transpose()?;
        alloc(st, m, len, Some(seek_from(offset, whence)?))
    })
}

fn salloc_mode(s: *mut FyFile, locked: bool, mode: c_int, len: *mut ssize_t) -> *mut c_void {
    on(s, locked, fail_len(len), |st| {
        alloc(st, Some(mode_of(mode)?), len, None)
    })
}

fn sfree(s: *mut FyFile, locked: bool, ptr: *const c_void) -> c_int {
    on(
        s,
        locked,
        |e| -e,
        |st| {
            if ptr == empty().cast_const() {
                return Ok(0);
            }
            let i = st
                .regions
                .iter()
                .position(|(p, _)| *p == ptr as usize)
                .ok_or(libc::EINVAL)?;
            let (_, held) = st.regions.swap_remove(i);
            let g = st.stream.as_mut().ok_or(libc::EBADF)?;
            let r = match held {
                // SAFETY: regions of this stream, each rebuilt once.
                Held::Read(raw) => unsafe { g.region_from_raw(raw) }.free(),
                // SAFETY: as above.
                Held::Write(raw) => unsafe { g.region_mut_from_raw(raw) }.free(),
                Held::Push(_) => Ok(()),
            };
            r.map(|()| 0).map_err(|e| errno_of(&e))
        },
    )
}

fn srealloc(s: *mut FyFile, locked: bool, ptr: *mut c_void, newlen: *mut ssize_t) -> *mut c_void {
    on(s, locked, fail_len(newlen), |st| {
        if newlen.is_null() {
            return Err(libc::EINVAL);
        }
        // SAFETY: the caller's length argument.
        let n = usize::try_from(unsafe { *newlen }).map_err(|_| libc::EINVAL)?;
        let i = st
            .regions
            .iter()
            .position(|(p, _)| *p == ptr as usize)
            .ok_or(libc::EINVAL)?;
        if !matches!(st.regions[i].1, Held::Write(_)) {
            return Err(libc::EINVAL);
        }
        let (_, held) = st.regions.swap_remove(i);
        let Held::Write(raw) = held else {
            unreachable!("checked above")
        };
        let g = st.stream.as_mut().ok_or(libc::EBADF)?;
        // SAFETY: this stream's write region, rebuilt once.
        let mut r = unsafe { g.region_mut_from_raw(raw) };
        let res = r.realloc(n);
        let raw = r.into_raw();
        let p = raw.as_ptr() as *mut c_void;
        st.regions.push((p as usize, Held::Write(raw)));
        res.map_err(|e| errno_of(&e))?;
        set_len(newlen, n as ssize_t);
        Ok(p)
    })
}

fn sflush(s: *mut FyFile, locked: bool) -> c_int {
    on(
        s,
        locked,
        |e| -e,
        |st| {
            st.stream
                .as_mut()
                .ok_or(libc::EBADF)?
                .flush()
                .map_err(|e| errno_of(&e))?;
            file::publish(st, false);
            Ok(0)
        },
    )
}

fn set_pipe_size(s: *mut FyFile, bytes: size_t) -> ssize_t {
    on(
        s,
        true,
        |e| -(e as ssize_t),
        |st| {
            let got = st
                .stream
                .as_ref()
                .ok_or(libc::EBADF)?
                .set_pipe_size(bytes)
                .map_err(|e| errno_of(&e))?;
            Ok(ssize_t::try_from(got).unwrap_or(ssize_t::MAX))
        },
    )
}

fn set_mode(s: *mut FyFile, locked: bool, mode: c_int) -> c_int {
    on(
        s,
        locked,
        |e| -e,
        |st| {
            let m = mode_of(mode)?;
            st.stream
                .as_mut()
                .ok_or(libc::EBADF)?
                .set_mode(m)
                .map_err(|e| errno_of(&e))?;
            Ok(0)
        },
    )
}

#[no_mangle]
pub extern "C" fn fy_salloc(s: *mut FyFile, len: *mut ssize_t) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || salloc(s, true, len))
}
#[no_mangle]
pub extern "C" fn fy_u_salloc(s: *mut FyFile, len: *mut ssize_t) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || salloc(s, false, len))
}
#[no_mangle]
pub extern "C" fn fy_sfree(s: *mut FyFile, ptr: *const c_void) -> c_int {
    ffi_guard(-libc::EIO, libc::EIO, || sfree(s, true, ptr))
}
#[no_mangle]
pub extern "C" fn fy_u_sfree(s: *mut FyFile, ptr: *const c_void) -> c_int {
    ffi_guard(-libc::EIO, libc::EIO, || sfree(s, false, ptr))
}
#[no_mangle]
pub extern "C" fn fy_srealloc(
    s: *mut FyFile,
    ptr: *mut c_void,
    newlen: *mut ssize_t,
) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        srealloc(s, true, ptr, newlen)
    })
}
#[no_mangle]
pub extern "C" fn fy_u_srealloc(
    s: *mut FyFile,
    ptr: *mut c_void,
    newlen: *mut ssize_t,
) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        srealloc(s, false, ptr, newlen)
    })
}
#[no_mangle]
pub extern "C" fn fy_sallocat(
    s: *mut FyFile,
    len: *mut ssize_t,
    offset: off_t,
    whence: c_int,
) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        salloc_at(s, true, None, len, offset, whence)
    })
}
#[no_mangle]
pub extern "C" fn fy_u_sallocat(
    s: *mut FyFile,
    len: *mut ssize_t,
    offset: off_t,
    whence: c_int,
) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        salloc_at(s, false, None, len, offset, whence)
    })
}
#[no_mangle]
pub extern "C" fn fy_sflush(s: *mut FyFile) -> c_int {
    ffi_guard(-libc::EIO, libc::EIO, || sflush(s, true))
}
#[no_mangle]
pub extern "C" fn fy_u_sflush(s: *mut FyFile) -> c_int {
    ffi_guard(-libc::EIO, libc::EIO, || sflush(s, false))
}
#[no_mangle]
pub extern "C" fn fy_set_pipe_size(s: *mut FyFile, bytes: size_t) -> ssize_t {
    ffi_guard(-(libc::EIO as ssize_t), libc::EIO, || {
        set_pipe_size(s, bytes)
    })
}
#[no_mangle]
pub extern "C" fn fy_set_stream_mode(s: *mut FyFile, mode: c_int) -> c_int {
    ffi_guard(-libc::EIO, libc::EIO, || set_mode(s, true, mode))
}
#[no_mangle]
pub extern "C" fn fy_u_set_stream_mode(s: *mut FyFile, mode: c_int) -> c_int {
    ffi_guard(-libc::EIO, libc::EIO, || set_mode(s, false, mode))
}
#[no_mangle]
pub extern "C" fn fy_Salloc(s: *mut FyFile, mode: c_int, len: *mut ssize_t) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        salloc_mode(s, true, mode, len)
    })
}
#[no_mangle]
pub extern "C" fn fy_u_Salloc(s: *mut FyFile, mode: c_int, len: *mut ssize_t) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        salloc_mode(s, false, mode, len)
    })
}
#[no_mangle]
pub extern "C" fn fy_SallocAt(
    s: *mut FyFile,
    mode: c_int,
    len: *mut ssize_t,
    offset: off_t,
    whence: c_int,
) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        salloc_at(s, true, Some(mode), len, offset, whence)
    })
}
#[no_mangle]
pub extern "C" fn fy_u_SallocAt(
    s: *mut FyFile,
    mode: c_int,
    len: *mut ssize_t,
    offset: off_t,
    whence: c_int,
) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::EIO, || {
        salloc_at(s, false, Some(mode), len, offset, whence)
    })
}
#[no_mangle]
pub extern "C" fn fy_lock(s: *mut FyFile) {
    ffi_guard((), libc::EIO, || crate::stdio::fy_flockfile(s))
}
#[no_mangle]
pub extern "C" fn fy_unlock(s: *mut FyFile) {
    ffi_guard((), libc::EIO, || crate::stdio::fy_funlockfile(s))
}

/// Frees a read region into a `Buf` (no copy); NULL and errno for
/// anything else.
pub(crate) fn region_to_buf(s: *mut FyFile, ptr: *const c_void) -> Option<ferry::Buf> {
    on(
        s,
        true,
        |_| None,
        |st| {
            let i = st
                .regions
                .iter()
                .position(|(p, _)| *p == ptr as usize)
                .ok_or(libc::EINVAL)?;
            if matches!(st.regions[i].1, Held::Write(_)) {
                return Err(libc::EINVAL);
            }
            let (_, held) = st.regions.swap_remove(i);
            let g = st.stream.as_mut().ok_or(libc::EBADF)?;
            match held {
                // SAFETY: this stream's read region, rebuilt once.
                Held::Read(raw) => Ok(Some(unsafe { g.region_from_raw(raw) }.into_buf())),
                Held::Push(b) => Ok(Some(ferry::Buf::copy_from_slice(&b))),
                Held::Write(_) => Err(libc::EINVAL),
            }
        },
    )
}
