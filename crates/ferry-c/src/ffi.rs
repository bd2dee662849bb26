//! The C boundary: no panic crosses it.
//!
//! Every `extern "C"` function runs its body in [`ffi_guard`]: a panic
//! anywhere below (a bug, or an allocation size no memory can hold that
//! slipped past a check) becomes the function's failure value with errno
//! set, as a C caller expects, instead of unwinding into C frames (which
//! Rust turns into an abort). The inline fast paths in the headers never
//! enter Rust, so they are untouched.
//!
//! The library is built with `panic = "unwind"` (Cargo's default; the
//! workspace sets no other). With `panic = "abort"` a panic still aborts:
//! no guard can help there, but nothing unsound happens either.
//!
//! Allocation *failure* is not a panic: Rust's infallible allocations
//! abort the process. So sizes that come from C go through fallible
//! allocation (`BufMut::try_with_capacity_aligned`, checked arithmetic)
//! before anything is allocated; the guard is the backstop, not the rule.

use crate::file::set_errno;
use libc::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Runs `f`; if it panics, sets errno to `errno_on_panic` and returns
/// `fail`.
///
/// `AssertUnwindSafe` is sound here: a panic leaves at worst a FILE whose
/// Rust state is consistent but whose operation did not finish (every
/// lock guard unlocks as it unwinds, and `with_stream` and the ASI
/// helpers mark the stream's error flag); nothing reads a half-updated
/// value through the unwind.
#[inline]
pub(crate) fn ffi_guard<R>(fail: R, errno_on_panic: c_int, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            // A payload whose destructor panics would unwind from here:
            // leak it instead (a panic is already a bug being reported).
            std::mem::forget(payload);
            set_errno(errno_on_panic);
            fail
        }
    }
}

/// `f`, or `None` if it panicked (for helpers that report the failure
/// in their own way: ferror, a negative length).
#[inline]
pub(crate) fn caught<R>(f: impl FnOnce() -> R) -> Option<R> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => Some(r),
        Err(payload) => {
            std::mem::forget(payload);
            None
        }
    }
}

/// The `n` bytes a C caller passed at `buf`: empty for `n == 0` (`buf`
/// may then be NULL), `None` with errno EFAULT for NULL with `n > 0`.
/// The caller's contract: `n` readable bytes at `buf`, unchanged while
/// the slice lives (the call).
pub(crate) fn c_bytes<'a>(buf: *const libc::c_void, n: libc::size_t) -> Option<&'a [u8]> {
    if n == 0 {
        return Some(&[]);
    }
    if buf.is_null() {
        crate::file::set_errno(libc::EFAULT);
        return None;
    }
    // SAFETY: the caller's `n` readable bytes at `buf` (non-NULL), read
    // during the call only.
    Some(unsafe { std::slice::from_raw_parts(buf.cast(), n) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::{errno_value, set_errno};

    // An entry point shaped like the library's: the panic must end as the
    // failure value and errno, not as an abort at the boundary.
    extern "C" fn panics(fail: bool) -> *mut u8 {
        ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
            if fail {
                panic!("a bug below the boundary");
            }
            std::ptr::NonNull::dangling().as_ptr()
        })
    }

    #[test]
    fn a_panic_becomes_the_failure_value_and_errno() {
        set_errno(0);
        assert!(panics(true).is_null());
        assert_eq!(errno_value(), libc::ENOMEM);
        set_errno(0);
        assert!(!panics(false).is_null());
        assert_eq!(errno_value(), 0);
        assert_eq!(caught(|| -> i32 { panic!("inner") }), None);
        assert_eq!(caught(|| 7), Some(7));
    }
}
