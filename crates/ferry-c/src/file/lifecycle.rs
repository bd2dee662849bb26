//! A FILE's life: made over a stream (registered for fflush(NULL) and
//! exit), and closed (flushed, unregistered, descriptors forgotten, freed
//! once no lookup holds it).

use super::*;
use crate::registry;
use ferry::Stream;
use libc::c_int;
use parking_lot::lock_api::RawReentrantMutex;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A new heap FILE over `stream`, registered for fflush(NULL) and exit.
pub(crate) fn new_file(
    stream: Option<Stream>,
    fail: c_int,
    fd: c_int,
    readable: bool,
    writable: bool,
    kind: Kind,
    is_file: bool,
) -> *mut FyFile {
    registry::register_exit();
    if let Some(s) = &stream {
        // C stdio's writes raise SIGPIPE and SIGXFSZ, as glibc's do.
        s.raise_write_signals();
    }
    let mut st = blank_state(-1);
    st.heap = true;
    st.stream = stream;
    st.fail = fail;
    st.fd = fd;
    st.readable = readable;
    st.writable = writable;
    st.buffering = Buffering::Full;
    st.seekable = match &kind {
        Kind::MemStream(_) | Kind::Fmem(_) => true,
        _ => fd >= 0 && is_seekable(fd),
    };
    st.kind = kind;
    st.is_file = is_file;
    if fd >= 0 && st.stream.is_some() && is_tty(fd) {
        st.buffering = Buffering::Line;
    }
    let f = Box::into_raw(Box::new(FyFile {
        rpos: std::ptr::null_mut(),
        rend: std::ptr::null_mut(),
        wpos: std::ptr::null_mut(),
        wend: std::ptr::null_mut(),
        lock: RawReentrantMutex::INIT,
        st: UnsafeCell::new(st),
        pins: AtomicUsize::new(0),
    }));
    registry::register(f);
    f
}

/// Closes a FILE: flush, close the stream, wait for a popen child, free.
/// Returns 0, or the errno of the first failure. For std streams the
/// object stays (static) but is closed.
///
/// # Safety
/// `f` is a live FILE, not used again (heap ones are freed).
pub(crate) unsafe fn close_file(f: *mut FyFile) -> Result<c_int, c_int> {
    // SAFETY: the caller hands over a live FILE.
    let file = unsafe { &*f };
    let mut status = 0;
    let mut first_err = None;
    {
        let g = file.locked();
        // SAFETY: lock held; one borrow.
        let st = unsafe { g.state() };
        if st.closed {
            return Err(libc::EBADF);
        }
        if st.stream.is_some() && flush(file, st).is_err() {
            first_err = Some(errno_value());
        }
        if release_regions(st) {
            // A write region allocated and never freed: its bytes are the
            // program's; glibc has no such thing, so count it as an error
            // of the close.
            first_err.get_or_insert(libc::EBUSY);
        }
        publish(st, true);
        if let Some(s) = st.stream.take() {
            if let Err(e) = close_stream(s) {
                first_err.get_or_insert(e);
            }
        }
        if let Kind::Child(c) = &mut st.kind {
            status = match c.wait() {
                Ok(s) => std::os::unix::process::ExitStatusExt::into_raw(s),
                Err(e) => {
                    first_err.get_or_insert(errno_of(&e));
                    -1
                }
            };
        }
        if let Kind::Fmem(m) = &mut st.kind {
            // Our own buffer for fmemopen(NULL, ...), if it is one.
            m.release();
        }
        st.closed = true;
        st.fail = libc::EBADF;
        file.clear_front();
        st.window = Window::Empty;
    }
    // Unregistered under the list lock (taken after the FILE's lock was
    // released: list lock, then FILE lock is the order): once this
    // returns, no walk can reach the FILE, and one in progress has let go
    // of it.
    registry::unregister(f);
    // No descriptor names the FILE any more: numbers dup'd from its
    // descriptor become plain descriptors (with glibc they outlive fclose
    // too), and no new lookup can find it.
    crate::unistd::forget_file(f);
    // SAFETY: the lock was released above; a heap FILE is ours to free.
    let heap = unsafe { (*file.st.get()).heap };
    if heap {
        // Lookups that found it before it left the table end first (each
        // sees it closed: EBADF).
        while file.pins.load(Ordering::Acquire) != 0 {
            std::thread::yield_now();
        }
        // SAFETY: made by Box::into_raw in new_file; unregistered from the
        // list and the descriptor table above, and no lookup holds it.
        drop(unsafe { Box::from_raw(f) });
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(status),
    }
}

/// Closes a stream. The program may have closed its descriptor itself
/// (glibc then fails the stream's calls with EBADF, as ferry does): then
/// the stream must not close a number that is no longer its own.
pub(crate) fn close_stream(s: Stream) -> Result<(), c_int> {
    // SAFETY: F_GETFD on any number is harmless.
    let gone = s
        .raw_fd()
        .is_some_and(|fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } < 0);
    if gone {
        std::mem::forget(s);
        return Err(libc::EBADF);
    }
    s.close().map_err(|e| errno_of(&e))
}

/// Gives back every ASI region the program still holds on the FILE's
/// stream (before that stream goes: fclose, freopen): read ones go back,
/// write ones are freed (so their bytes are written). Returns true if a
/// write region was among them. Afterwards `fy_sfree` of any of them is
/// EINVAL, never a free on another stream.
pub(crate) fn release_regions(st: &mut State) -> bool {
    let regions = std::mem::take(&mut st.regions);
    let mut wrote = false;
    if let Some(s) = st.stream.as_mut() {
        for (_, h) in regions {
            match h {
                // SAFETY: regions of this stream, each rebuilt once.
                Held::Read(r) => drop(unsafe { s.region_from_raw(r) }),
                Held::Push(_) => {}
                Held::Write(r) => {
                    // SAFETY: as above.
                    drop(unsafe { s.region_mut_from_raw(r) });
                    wrote = true;
                }
            }
        }
    }
    wrote
}
