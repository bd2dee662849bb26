//! ferry/cgi.h: C programs behind `ferry serve --ipc-cgi` — the program
//! side of [`ferry_serve::cgi`] (requests in, replies out over ferry's
//! ipc, bodies written into the program's pool and sent by reference).
//!
//! The handles a handler gets (`fy_cgi_request`, `fy_cgi_reply`) are
//! valid during that call only; a kept buffer (`fy_cgi_kept`) lives until
//! freed and may go in any later reply.

use crate::ffi::ffi_guard;
use crate::file::{errno_of, set_errno};
use ferry::ipc::SlotMut;
use ferry::Aggregate;
use ferry_serve::cgi::{Reply, Request};
use libc::{c_char, c_int, c_void, iovec, size_t, ssize_t};
use std::ffi::CStr;

/// An opaque request (a `ferry_serve::cgi::Request`).
pub struct FyCgiRequest(Request);

/// An opaque reply being built: the Rust reply, and the slots lent to C
/// (`fy_cgi_alloc`) not yet given back.
pub struct FyCgiReply<'a, 'b> {
    reply: &'a mut Reply<'b>,
    lent: Vec<SlotMut>,
}

/// A body kept for later replies (`fy_cgi_keep`).
pub struct FyCgiKept(Aggregate);

/// A handler: 0, or anything else for a 500.
pub type FyCgiHandler =
    Option<unsafe extern "C" fn(*const FyCgiRequest, *mut c_void, *mut c_void) -> c_int>;

/// A C string as text, or EINVAL.
fn text<'a>(p: *const c_char) -> Option<&'a str> {
    if p.is_null() {
        set_errno(libc::EINVAL);
        return None;
    }
    // SAFETY: the caller's NUL-terminated string (NULL checked), read
    // during this call only.
    match unsafe { CStr::from_ptr(p) }.to_str() {
        Ok(s) => Some(s),
        Err(_) => {
            set_errno(libc::EINVAL);
            None
        }
    }
}

/// Serves requests until the server closes the channel, calling
/// `handler(request, reply, ctx)` for each; 0 then, or -1 with errno
/// (not run by `ferry serve`, or the channel broke).
#[no_mangle]
pub extern "C" fn fy_cgi_serve(handler: FyCgiHandler, ctx: *mut c_void) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let Some(h) = handler else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let r = ferry_serve::cgi::serve(|req, reply| {
            // `FyCgiRequest` is the request itself: a pointer to it is a
            // pointer to the request.
            let req = req as *const Request as *const FyCgiRequest;
            let mut c = FyCgiReply {
                reply,
                lent: Vec::new(),
            };
            let cp = &mut c as *mut FyCgiReply<'_, '_> as *mut c_void;
            // SAFETY: a handler the caller gave, called with handles valid
            // for this call (the request and the reply live across it).
            let rc = unsafe { h(req, cp, ctx) };
            if rc == 0 {
                Ok(())
            } else {
                Err(std::io::Error::other(format!("the handler returned {rc}")))
            }
        });
        match r {
            Ok(()) => 0,
            Err(e) => {
                set_errno(errno_of(&e));
                -1
            }
        }
    })
}

fn request<'a>(req: *const FyCgiRequest) -> Option<&'a Request> {
    // SAFETY: a request handed to the running handler (the C contract),
    // or NULL.
    let r = unsafe { req.as_ref() };
    if r.is_none() {
        set_errno(libc::EINVAL);
    }
    r.map(|r| &r.0)
}

fn reply<'a>(r: *mut c_void) -> Option<&'a mut FyCgiReply<'a, 'a>> {
    // SAFETY: the reply handed to the running handler (the C contract:
    // used during that call only, by that thread), or NULL.
    let r = unsafe { r.cast::<FyCgiReply<'a, 'a>>().as_mut() };
    if r.is_none() {
        set_errno(libc::EINVAL);
    }
    r
}

/// A meta-variable's value (`PATH_INFO`, `QUERY_STRING`, …) as a C
/// string valid during the handler's call, or NULL if the request has
/// none (errno untouched) or an argument is NULL (EINVAL).
#[no_mangle]
pub extern "C" fn fy_cgi_var(req: *const FyCgiRequest, name: *const c_char) -> *const c_char {
    ffi_guard(std::ptr::null(), libc::ENOMEM, || {
        let (Some(r), Some(name)) = (request(req), text(name)) else {
            return std::ptr::null();
        };
        r.var_c(name).map_or(std::ptr::null(), CStr::as_ptr)
    })
}

/// The request body's length.
#[no_mangle]
pub extern "C" fn fy_cgi_body_len(req: *const FyCgiRequest) -> size_t {
    ffi_guard(0, libc::ENOMEM, || {
        request(req).map_or(0, |r| r.body().len())
    })
}

/// The body's pieces, in place (the server's buffers, read-only, valid
/// during the handler's call): up to `max` of them into `iov`; returns
/// how many pieces the body has (more than `max` if it did not fit), or
/// -1 with EINVAL.
#[no_mangle]
pub extern "C" fn fy_cgi_body_iov(req: *const FyCgiRequest, iov: *mut iovec, max: c_int) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let Some(r) = request(req) else { return -1 };
        if max < 0 || (iov.is_null() && max > 0) {
            set_errno(libc::EINVAL);
            return -1;
        }
        for (i, c) in r.body().chunks().take(max as usize).enumerate() {
            // SAFETY: the caller's `max` iovecs at `iov` (checked non-NULL).
            unsafe {
                *iov.add(i) = iovec {
                    iov_base: c.as_ptr() as *mut c_void,
                    iov_len: c.len(),
                }
            };
        }
        c_int::try_from(r.body().slice_count()).unwrap_or(c_int::MAX)
    })
}

/// Copies up to `n` bytes of the body from `off` into `buf`; how many.
#[no_mangle]
pub extern "C" fn fy_cgi_body_read(
    req: *const FyCgiRequest,
    off: size_t,
    buf: *mut c_void,
    n: size_t,
) -> ssize_t {
    ffi_guard(-1, libc::ENOMEM, || {
        let Some(r) = request(req) else { return -1 };
        if buf.is_null() && n > 0 {
            set_errno(libc::EFAULT);
            return -1;
        }
        if n == 0 || off >= r.body().len() {
            return 0;
        }
        let n = n.min(r.body().len() - off);
        // SAFETY: the caller's `n` writable bytes at `buf` (non-NULL).
        let dst = unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), n) };
        r.body().copy_to_slice(off, dst) as ssize_t
    })
}

fn done(r: std::io::Result<()>) -> c_int {
    match r {
        Ok(()) => 0,
        Err(e) => {
            set_errno(errno_of(&e));
            -1
        }
    }
}

/// Sets the reply's status (200 to 599); 0, or -1 with EINVAL.
#[no_mangle]
pub extern "C" fn fy_cgi_status(reply: *mut c_void, code: c_int, reason: *const c_char) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let (Some(r), Some(reason)) = (self::reply(reply), text(reason)) else {
            return -1;
        };
        let Ok(code) = u16::try_from(code) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        done(r.reply.status(code, reason))
    })
}

/// Adds a header line; 0, or -1 with EINVAL (a name that is not a token,
/// a value with a control byte).
#[no_mangle]
pub extern "C" fn fy_cgi_header(
    reply: *mut c_void,
    name: *const c_char,
    value: *const c_char,
) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let (Some(r), Some(name), Some(value)) = (self::reply(reply), text(name), text(value))
        else {
            return -1;
        };
        done(r.reply.header(name, value))
    })
}

/// Appends `n` bytes to the body (copied into the pool); 0, or -1 with
/// errno.
#[no_mangle]
pub extern "C" fn fy_cgi_write(reply: *mut c_void, buf: *const c_void, n: size_t) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let Some(r) = self::reply(reply) else {
            return -1;
        };
        let Some(bytes) = crate::ffi::c_bytes(buf, n) else {
            return -1;
        };
        done(r.reply.write(bytes))
    })
}

/// A free slot of the program's pool to fill in place: its address, its
/// size in `*size`. Give it back with `fy_cgi_commit` or `fy_cgi_keep`
/// (unused, it returns to the pool when the handler returns). NULL with
/// errno (ETIMEDOUT: no slot came free).
#[no_mangle]
pub extern "C" fn fy_cgi_alloc(reply: *mut c_void, size: *mut size_t) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        let Some(r) = self::reply(reply) else {
            return std::ptr::null_mut();
        };
        match r.reply.alloc() {
            Ok(mut slot) => {
                let p = slot.as_mut_ptr().cast::<c_void>();
                if !size.is_null() {
                    // SAFETY: the caller's size_t (checked non-NULL).
                    unsafe { *size = slot.len() };
                }
                r.lent.push(slot);
                p
            }
            Err(e) => {
                set_errno(errno_of(&e));
                std::ptr::null_mut()
            }
        }
    })
}

/// The lent slot at `slot`, taken back; EINVAL if there is none.
fn take_slot(r: &mut FyCgiReply<'_, '_>, slot: *mut c_void, n: size_t) -> Option<SlotMut> {
    let i = r
        .lent
        .iter_mut()
        .position(|s| s.as_mut_ptr().cast::<c_void>() == slot);
    match i {
        Some(i) if n <= r.lent[i].len() => Some(r.lent.swap_remove(i)),
        _ => {
            set_errno(libc::EINVAL);
            None
        }
    }
}

/// Appends the first `n` bytes of a slot from `fy_cgi_alloc` to the body,
/// by reference; 0, or -1 with EINVAL.
#[no_mangle]
pub extern "C" fn fy_cgi_commit(reply: *mut c_void, slot: *mut c_void, n: size_t) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let Some(r) = self::reply(reply) else {
            return -1;
        };
        let Some(s) = take_slot(r, slot, n) else {
            return -1;
        };
        r.reply.append(s.freeze(n));
        0
    })
}

/// The first `n` bytes of a slot from `fy_cgi_alloc`, frozen and kept: a
/// body that any later reply can send again by reference
/// (`fy_cgi_append`), never written anew. NULL with EINVAL.
#[no_mangle]
pub extern "C" fn fy_cgi_keep(reply: *mut c_void, slot: *mut c_void, n: size_t) -> *mut FyCgiKept {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        let Some(r) = self::reply(reply) else {
            return std::ptr::null_mut();
        };
        let Some(s) = take_slot(r, slot, n) else {
            return std::ptr::null_mut();
        };
        Box::into_raw(Box::new(FyCgiKept(Aggregate::from(s.freeze(n)))))
    })
}

/// Joins `b` after `a` (both kept; `b` is freed): one kept body of many
/// slots. Returns `a`, or NULL with EINVAL.
#[no_mangle]
pub extern "C" fn fy_cgi_kept_join(a: *mut FyCgiKept, b: *mut FyCgiKept) -> *mut FyCgiKept {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        if a.is_null() || b.is_null() || a == b {
            set_errno(libc::EINVAL);
            return std::ptr::null_mut();
        }
        // SAFETY: kept bodies from fy_cgi_keep, not freed (the C
        // contract), distinct (checked); `b` is taken over.
        let (a_ref, b) = unsafe { (&mut *a, Box::from_raw(b)) };
        a_ref.0.append(b.0);
        a
    })
}

/// Appends a kept body to the reply, by reference; 0, or -1 with EINVAL.
#[no_mangle]
pub extern "C" fn fy_cgi_append(reply: *mut c_void, kept: *const FyCgiKept) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let Some(r) = self::reply(reply) else {
            return -1;
        };
        // SAFETY: a kept body from fy_cgi_keep, not freed, or NULL.
        let Some(k) = (unsafe { kept.as_ref() }) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        r.reply.append(k.0.clone());
        0
    })
}

/// Frees a kept body (replies that hold it still send it). NULL: nothing.
#[no_mangle]
pub extern "C" fn fy_cgi_kept_free(kept: *mut FyCgiKept) {
    ffi_guard((), libc::ENOMEM, || {
        if !kept.is_null() {
            // SAFETY: a kept body from fy_cgi_keep, freed once (the C
            // contract).
            drop(unsafe { Box::from_raw(kept) });
        }
    })
}
