//! ferry/buf.h: ferry's buffers in C. Every function that returns a
//! handle returns an owned reference (release it once); the bytes of a
//! `fy_buf` never change while any reference exists.

use crate::ffi::ffi_guard;
use crate::file::set_errno;
use ferry::{Buf, BufMut};
use libc::{c_void, size_t};

/// An owned reference to an immutable buffer.
pub struct FyBuf(pub(crate) Buf);
/// A writable buffer owned by one holder.
pub struct FyBufMut(BufMut);

fn boxed(b: Buf) -> *mut FyBuf {
    Box::into_raw(Box::new(FyBuf(b)))
}

/// A writable buffer with room for `cap` bytes, allocated fallibly: a
/// size no allocation can have, or one the allocator refuses, is ENOMEM
/// (malloc's rule) instead of an abort.
fn try_bufmut(cap: usize, align: usize) -> Result<BufMut, libc::c_int> {
    BufMut::try_with_capacity_aligned(cap, align).map_err(|_| libc::ENOMEM)
}

/// Makes room for `additional` more bytes after the written ones, moving
/// them to a larger buffer if needed; ENOMEM (the buffer unchanged) when
/// no such buffer can be had.
fn grow(b: &mut BufMut, additional: usize) -> Result<(), libc::c_int> {
    if additional <= b.tail_room() {
        return Ok(());
    }
    let need = b.len().checked_add(additional).ok_or(libc::ENOMEM)?;
    // Doubling keeps repeated appends linear; if the double is refused,
    // exactly what is needed may still be had.
    let doubled = need.max(b.capacity().saturating_mul(2));
    let mut n = try_bufmut(doubled, 4096).or_else(|_| try_bufmut(need, 4096))?;
    n.extend_from_slice(b.as_slice());
    *b = n;
    Ok(())
}

/// A new writable buffer with room for `cap` bytes (page-aligned); NULL
/// with ENOMEM if that much memory cannot be had.
#[no_mangle]
pub extern "C" fn fy_bufmut_new(cap: size_t) -> *mut FyBufMut {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        match try_bufmut(cap.max(1), 4096) {
            Ok(m) => Box::into_raw(Box::new(FyBufMut(m))),
            Err(e) => {
                set_errno(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// The writable room after the bytes written so far; `*room` gets its size.
#[no_mangle]
pub extern "C" fn fy_bufmut_spare(b: *mut FyBufMut, room: *mut size_t) -> *mut u8 {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        // SAFETY: a live handle from fy_bufmut_new (the C contract).
        let Some(b) = (unsafe { b.as_mut() }) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        let s = b.0.spare_capacity_mut();
        if !room.is_null() {
            // SAFETY: the caller's out-parameter.
            unsafe { *room = s.len() };
        }
        s.as_mut_ptr()
    })
}

/// Takes `n` bytes of the spare room as written; -1 (EINVAL) if more
/// than the room.
#[no_mangle]
pub extern "C" fn fy_bufmut_commit(b: *mut FyBufMut, n: size_t) -> libc::c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        // SAFETY: a live handle.
        let Some(b) = (unsafe { b.as_mut() }) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        if n > b.0.tail_room() {
            set_errno(libc::EINVAL);
            return -1;
        }
        b.0.commit(n);
        0
    })
}

/// Appends a copy of `len` bytes (growing the buffer if needed).
#[no_mangle]
pub extern "C" fn fy_bufmut_append(
    b: *mut FyBufMut,
    data: *const c_void,
    len: size_t,
) -> libc::c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        // SAFETY: a live handle and the caller's `len` bytes.
        let (Some(b), false) = (unsafe { b.as_mut() }, data.is_null() && len > 0) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        if len > 0 {
            // Room first: `len` then fits in memory, so the caller's
            // bytes can be a slice (and a size no buffer can have fails
            // here, before they are touched).
            if let Err(e) = grow(&mut b.0, len) {
                set_errno(e);
                return -1;
            }
            // SAFETY: the caller's `len` bytes (len ≤ the room just made,
            // so at most isize::MAX).
            b.0.extend_from_slice(unsafe { std::slice::from_raw_parts(data as *const u8, len) });
        }
        0
    })
}

/// Bytes written so far.
#[no_mangle]
pub extern "C" fn fy_bufmut_len(b: *const FyBufMut) -> size_t {
    ffi_guard(0, libc::ENOMEM, || {
        // SAFETY: a live handle.
        unsafe { b.as_ref() }.map_or(0, |b| b.0.len())
    })
}

/// Freezes the buffer (no copy): the handle is consumed, an immutable
/// `fy_buf` comes back.
#[no_mangle]
pub extern "C" fn fy_bufmut_freeze(b: *mut FyBufMut) -> *mut FyBuf {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        if b.is_null() {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        // SAFETY: made by fy_bufmut_new; the caller gives it up.
        let b = unsafe { Box::from_raw(b) };
        boxed(b.0.freeze())
    })
}

/// Drops a writable buffer that was never frozen.
#[no_mangle]
pub extern "C" fn fy_bufmut_free(b: *mut FyBufMut) {
    ffi_guard((), libc::ENOMEM, || {
        if !b.is_null() {
            // SAFETY: made by fy_bufmut_new; the caller gives it up.
            drop(unsafe { Box::from_raw(b) });
        }
    })
}

/// A buffer holding a copy of `len` bytes.
#[no_mangle]
pub extern "C" fn fy_buf_copy(data: *const c_void, len: size_t) -> *mut FyBuf {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        if data.is_null() && len > 0 {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        if len == 0 {
            return boxed(Buf::new());
        }
        // The copy's memory first, fallibly (ENOMEM as malloc), then the
        // caller's bytes into it.
        let mut m = match try_bufmut(len, 1) {
            Ok(m) => m,
            Err(e) => {
                set_errno(e);
                return std::ptr::null_mut();
            }
        };
        // SAFETY: the caller's `len` bytes (an allocation of `len` bytes
        // just succeeded, so len ≤ isize::MAX).
        m.extend_from_slice(unsafe { std::slice::from_raw_parts(data as *const u8, len) });
        boxed(m.freeze())
    })
}

/// The bytes (valid while the reference is held).
#[no_mangle]
pub extern "C" fn fy_buf_data(b: *const FyBuf) -> *const u8 {
    ffi_guard(std::ptr::null(), libc::ENOMEM, || {
        // SAFETY: a live handle.
        unsafe { b.as_ref() }.map_or(std::ptr::null(), |b| b.0.as_slice().as_ptr())
    })
}

#[no_mangle]
pub extern "C" fn fy_buf_len(b: *const FyBuf) -> size_t {
    ffi_guard(0, libc::ENOMEM, || {
        // SAFETY: a live handle.
        unsafe { b.as_ref() }.map_or(0, |b| b.0.len())
    })
}

/// A new reference to bytes `off..off+len` (no copy); NULL with EINVAL
/// if out of range.
#[no_mangle]
pub extern "C" fn fy_buf_slice(b: *const FyBuf, off: size_t, len: size_t) -> *mut FyBuf {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        // SAFETY: a live handle.
        let Some(b) = (unsafe { b.as_ref() }) else {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        };
        match off.checked_add(len) {
            Some(end) if end <= b.0.len() => boxed(b.0.slice(off..end)),
            _ => {
                set_errno(libc::EINVAL);
                std::ptr::null_mut()
            }
        }
    })
}

/// Another reference to the same bytes (no copy).
#[no_mangle]
pub extern "C" fn fy_buf_clone(b: *const FyBuf) -> *mut FyBuf {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        // SAFETY: a live handle.
        match unsafe { b.as_ref() } {
            Some(b) => boxed(b.0.clone()),
            None => {
                set_errno(libc::EINVAL);
                std::ptr::null_mut()
            }
        }
    })
}

/// Gives a reference back.
#[no_mangle]
pub extern "C" fn fy_buf_release(b: *mut FyBuf) {
    ffi_guard((), libc::ENOMEM, || {
        if !b.is_null() {
            // SAFETY: a handle this library returned; the caller gives it up.
            drop(unsafe { Box::from_raw(b) });
        }
    })
}

/// 1 if two references share the same bytes in memory (a slice or clone
/// of one another).
#[no_mangle]
pub extern "C" fn fy_buf_shares(a: *const FyBuf, b: *const FyBuf) -> libc::c_int {
    ffi_guard(0, libc::ENOMEM, || {
        // SAFETY: live handles.
        match unsafe { (a.as_ref(), b.as_ref()) } {
            (Some(a), Some(b)) => libc::c_int::from(a.0.shares_block_with(&b.0)),
            _ => 0,
        }
    })
}

/// Frees a read region of `s` (from fy_salloc) into a buffer that
/// outlives the stream: no copy.
#[no_mangle]
pub extern "C" fn fy_region_to_buf(s: *mut crate::file::FyFile, ptr: *const c_void) -> *mut FyBuf {
    ffi_guard(
        std::ptr::null_mut(),
        libc::ENOMEM,
        || match crate::asi::region_to_buf(s, ptr) {
            Some(b) => boxed(b),
            None => std::ptr::null_mut(),
        },
    )
}
