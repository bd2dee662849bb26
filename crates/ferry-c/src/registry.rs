//! The list of open FILEs and what walks it: `fflush(NULL)`, the flush of
//! line-buffered output before a read, popen's flush, and exit's.
//!
//! The list lock is glibc's `_IO_list_lock`: a walk holds it from its first
//! FILE to its last, and fclose unregisters a FILE under it before freeing
//! it, so a walk never touches a freed FILE. Lock order: the list lock
//! first, then a FILE's lock (as glibc's `_IO_flush_all`). Code that already
//! holds a FILE's lock only *tries* the list lock and the other FILEs'
//! locks, so it never waits against that order.

use crate::file::{flush, Buffering, FyFile, Held_, State, STDERR, STDIN, STDOUT};
use libc::c_int;
use std::sync::Once;

/// Every heap FILE (addresses); the std streams are static and always
/// walked too.
static OPEN: parking_lot::Mutex<Vec<usize>> = parking_lot::Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// Makes a new heap FILE visible to the walks.
pub(crate) fn register(f: *mut FyFile) {
    OPEN.lock().push(f as usize);
}

/// Takes a FILE off the list: once this returns no walk can reach it, and
/// one in progress has let go of it. The caller must not hold its lock.
pub(crate) fn unregister(f: *mut FyFile) {
    OPEN.lock().retain(|&p| p != f as usize);
}

extern "C" fn flush_all_at_exit() {
    crate::ffi::ffi_guard((), libc::EIO, flush_at_exit);
}

pub(crate) fn register_exit() {
    AT_EXIT.call_once(|| {
        // SAFETY: registering a plain extern "C" function.
        unsafe { libc::atexit(flush_all_at_exit) };
    });
}

fn std_files() -> [*mut FyFile; 3] {
    [STDIN.0.get(), STDOUT.0.get(), STDERR.0.get()]
}

/// The std streams, then the registered FILEs in `open`.
fn walk(open: &[usize]) -> impl Iterator<Item = *mut FyFile> + '_ {
    std_files()
        .into_iter()
        .chain(open.iter().map(|&p| p as *mut FyFile))
}

/// Flushes one FILE whose lock the caller holds, if it writes.
fn flush_if_writing(f: &FyFile, st: &mut State) -> Result<(), c_int> {
    if st.stream.is_some() && st.writable {
        flush(f, st)?;
    }
    Ok(())
}

/// fflush(NULL): every stream; EOF if any failed. Holds the list lock
/// throughout and waits for each FILE's lock in turn (glibc's
/// `_IO_flush_all`).
pub(crate) fn flush_all() -> c_int {
    let open = OPEN.lock();
    let mut r = 0;
    for f in walk(&open) {
        // SAFETY: std FILEs are static; a registered FILE is live while
        // the list lock is held (close_file unregisters it under this
        // lock before freeing it).
        let f = unsafe { &*f };
        let g = f.locked();
        // SAFETY: the FILE's lock is held; one borrow.
        if flush_if_writing(f, unsafe { g.state() }).is_err() {
            r = libc::EOF;
        }
    }
    r
}

/// `_flushlbf`: every line-buffered output stream, waiting for each
/// FILE's lock in turn as `flush_all` does. Failures are left in each
/// stream's error flag (the call returns nothing).
pub(crate) fn flush_all_line_buffered() {
    let open = OPEN.lock();
    for f in walk(&open) {
        // SAFETY: as in `flush_all` (the list lock is held).
        let f = unsafe { &*f };
        let g = f.locked();
        // SAFETY: the FILE's lock is held; one borrow.
        let st = unsafe { g.state() };
        if st.buffering == Buffering::Line {
            let _ = flush_if_writing(f, st);
        }
    }
}

/// exit's flush. glibc's `_IO_cleanup` flushes every stream without
/// taking its lock ("some threads might use streams but that is their
/// problem"); ferry cannot touch a stream another thread is in the middle
/// of, so it flushes the streams nobody holds (`flush_unheld`). A thread
/// blocked in fgets(stdin) holds stdin's lock for as long as no input
/// comes: exit must not wait for it.
///
/// At exit read streams are flushed too: a seekable input gives back
/// what it read ahead, so the descriptor's offset is where the program
/// stopped reading (POSIX 2.5.1; glibc does, through `_IO_unbuffer_all`),
/// and `{ prog; cat; } < file` has `cat` go on after `prog`'s last line.
fn flush_at_exit() {
    flush_unheld_with(true);
}

/// Flushes every stream whose lock can be had at once or after a yield
/// (glibc's `_IO_unbuffer_all` tries twice so) and leaves the others
/// alone: for exit, and for popen (glibc's popen flushes nothing; ferry
/// flushes so what this process buffered for a shared output goes out
/// before the child's, but must not wait behind a blocked reader either).
///
/// The list lock is waited for, but boundedly: only a walk or an
/// fopen/fclose holds it, and a walk (fflush(NULL) in another thread) may
/// itself be stuck behind such a reader. Past the bound only the std
/// streams, which are static, are flushed.
pub(crate) fn flush_unheld() {
    flush_unheld_with(false);
}

/// [`flush_unheld`]; `readers`: read streams too (exit).
fn flush_unheld_with(readers: bool) {
    let open = OPEN.try_lock_for(std::time::Duration::from_secs(1));
    let heap: &[usize] = open.as_deref().map_or(&[], |v| &v[..]);
    for f in walk(heap) {
        // SAFETY: as in `flush_all` (the list lock is held for `heap`).
        let f = unsafe { &*f };
        let mut got = f.lock.try_lock();
        for _ in 0..2 {
            if got {
                break;
            }
            std::thread::yield_now();
            got = f.lock.try_lock();
        }
        if !got {
            continue;
        }
        let g = Held_(f);
        // SAFETY: the FILE's lock is held (taken just above); one borrow.
        let st = unsafe { g.state() };
        if readers && st.stream.is_some() {
            let _ = flush(f, st);
            // A reader of an upgraded pipe tells its writer it reads no
            // more, so that the writer goes on through the pipe for the
            // next reader at once (`{ head -n 1; cat; }`).
            if let Some(s) = st.stream.as_mut() {
                s.leave_channel();
            }
        } else {
            let _ = flush_if_writing(f, st);
        }
    }
}

/// Flushes the line-buffered output streams (glibc does before reading a
/// line-buffered or unbuffered input stream). The caller holds the lock
/// of `except`, so this only tries the list lock (the std streams are
/// flushed without it) and the other FILEs' locks: a FILE another thread
/// holds is being used by it, and will flush itself.
pub(crate) fn flush_line_buffered(except: *const FyFile) {
    let open = OPEN.try_lock();
    let heap: &[usize] = open.as_deref().map_or(&[], |v| &v[..]);
    for f in walk(heap) {
        if std::ptr::eq(f, except) {
            continue;
        }
        // SAFETY: as in `flush_all` (the list lock is held for `heap`).
        let f = unsafe { &*f };
        if !f.lock.try_lock() {
            continue;
        }
        let g = Held_(f);
        // SAFETY: the FILE's lock is held (taken just above); one borrow.
        let st = unsafe { g.state() };
        if st.buffering == Buffering::Line {
            let _ = flush_if_writing(f, st);
        }
    }
}
