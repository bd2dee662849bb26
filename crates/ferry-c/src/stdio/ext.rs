//! `<stdio_ext.h>` on ferry's FILE: `__fpending`, `__fpurge`,
//! `__freading`, `__fwriting`, `__freadable`, `__fwritable`, `__flbf`,
//! `__fbufsize`, `_flushlbf`, `__fsetlocking` (every function glibc 2.36's
//! header declares). ferry/stdio.h renames them to these (`fy___fpending`
//! ...): glibc's own would read a ferry FILE as a glibc FILE.
//!
//! What each answers, in ferry's terms:
//!
//! * `__fpending`: bytes written and not yet handed to the file — the
//!   stream's committed, unwritten bytes plus those the inline putc put
//!   in the current write window.
//! * `__fpurge`: drops what is buffered without writing it: pushed-back
//!   bytes, the read-ahead (the stream goes on after it, as glibc's goes
//!   on from its descriptor's offset), and unwritten output (the position
//!   goes back to where writing stopped).
//! * `__freading` / `__fwriting`: glibc's definitions — opened read-only,
//!   or the last operation read (a seek or ungetc counts: glibc's leave
//!   the stream in read mode) / opened write-only or append-only, or the
//!   last operation wrote. Both are 0 on a read-write stream not yet used,
//!   and a flush changes neither.
//! * `__fbufsize`: 0 until the stream is first used (as glibc's, whose
//!   buffer is allocated then), 1 for an unbuffered stream (glibc's
//!   one-byte buffer), else the size of ferry's stream buffers (128 KiB;
//!   glibc's is `st_blksize`, 4 KiB). setvbuf's buffer is never used, so
//!   its size is not reported.
//! * `__fsetlocking`: records and reports the state (the previous one is
//!   returned; QUERY changes nothing, BYCALLER sets it, any other value
//!   sets INTERNAL, as glibc). With BYCALLER glibc stops locking the
//!   stream in its calls; ferry keeps locking. Its lock is reentrant, so
//!   a caller that holds `flockfile` loses nothing but the few
//!   nanoseconds of an uncontended lock, and a caller that does not
//!   lock (the usual reason for BYCALLER: one thread) stays safe.
//!
//! The nonzero answers are 1 (glibc returns flag bits for `__fwriting`
//! and `__flbf`; callers test for nonzero, as the header says).

use crate::ffi::ffi_guard;
use crate::file::{self, settle, Buffering, FyFile, Last, State, Window};
use libc::{c_int, size_t};
use std::io::BufRead;

const FSETLOCKING_QUERY: c_int = 0;
const FSETLOCKING_INTERNAL: c_int = 1;
const FSETLOCKING_BYCALLER: c_int = 2;

/// `get` on the locked FILE's state: nothing is opened (a std stream not
/// yet used stays so), settled or flushed.
fn query<R>(f: *mut FyFile, none: R, get: impl FnOnce(&FyFile, &mut State) -> R) -> R {
    let Some(file) = file::file_ref(f) else {
        return none;
    };
    let g = file.locked();
    // SAFETY: lock held; the only borrow of the state here.
    get(file, unsafe { g.state() })
}

fn flag(b: bool) -> c_int {
    c_int::from(b)
}

#[no_mangle]
pub extern "C" fn fy___fbufsize(f: *mut FyFile) -> size_t {
    ffi_guard(0, libc::EIO, || {
        query(f, 0, |_, st| {
            if !st.used || st.closed {
                return 0;
            }
            if st.buffering == Buffering::None {
                return 1;
            }
            st.stream.as_ref().map_or(0, |s| s.buffer_size())
        })
    })
}

#[no_mangle]
pub extern "C" fn fy___freading(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || {
        query(f, 0, |_, st| {
            flag(!st.writable || (st.readable && st.last == Last::Read))
        })
    })
}

#[no_mangle]
pub extern "C" fn fy___fwriting(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || {
        query(f, 0, |_, st| {
            flag(!st.readable || (st.writable && st.last == Last::Write))
        })
    })
}

#[no_mangle]
pub extern "C" fn fy___freadable(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || query(f, 0, |_, st| flag(st.readable)))
}

#[no_mangle]
pub extern "C" fn fy___fwritable(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || query(f, 0, |_, st| flag(st.writable)))
}

#[no_mangle]
pub extern "C" fn fy___flbf(f: *mut FyFile) -> c_int {
    ffi_guard(0, libc::EIO, || {
        query(f, 0, |_, st| flag(st.buffering == Buffering::Line))
    })
}

#[no_mangle]
pub extern "C" fn fy___fpending(f: *mut FyFile) -> size_t {
    ffi_guard(0, libc::EIO, || {
        query(f, 0, |file, st| {
            // The inline putc's bytes, not yet committed to the stream.
            let window = match st.window {
                Window::Write => (file.wpos() as usize).saturating_sub(st.wbase as usize),
                _ => 0,
            };
            let queued = st.stream.as_ref().map_or(0, |s| s.pending_write());
            usize::try_from(queued)
                .unwrap_or(usize::MAX)
                .saturating_add(window)
        })
    })
}

#[no_mangle]
pub extern "C" fn fy___fpurge(f: *mut FyFile) {
    ffi_guard((), libc::EIO, || {
        query(f, (), |file, st| {
            if st.window == Window::Write {
                // The inline putc's bytes are dropped, never committed.
                st.window = Window::Empty;
                file.clear_front();
            } else {
                // The inline getc's progress is taken (it reaches no file).
                let _ = settle(file, st);
            }
            st.push.clear();
            if let Some(s) = st.stream.as_mut() {
                let ahead = s.buffered_read();
                s.consume(ahead);
                s.discard_unwritten();
            }
        })
    })
}

/// Flushes every line-buffered output stream.
#[no_mangle]
pub extern "C" fn fy__flushlbf() {
    ffi_guard((), libc::EIO, crate::registry::flush_all_line_buffered)
}

#[no_mangle]
pub extern "C" fn fy___fsetlocking(f: *mut FyFile, kind: c_int) -> c_int {
    ffi_guard(FSETLOCKING_INTERNAL, libc::EIO, || {
        query(f, FSETLOCKING_INTERNAL, |_, st| {
            let was = if st.by_caller {
                FSETLOCKING_BYCALLER
            } else {
                FSETLOCKING_INTERNAL
            };
            if kind != FSETLOCKING_QUERY {
                st.by_caller = kind == FSETLOCKING_BYCALLER;
            }
            was
        })
    })
}
