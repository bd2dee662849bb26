//! ferry/exchange.h: fbufs' `uf_*` calls on the process's exchange
//! (`ferry::exchange::Exchange::global`).
//!
//! C has no moves, so ownership is kept here: every buffer a C caller
//! holds is in a table of live buffers (`LIVE`), keyed by its start address. `fy_uf_write` and
//! `fy_uf_deallocate` take it out (a pointer that is not inside a live
//! buffer is EINVAL, never a copy); a second give-back finds nothing.

use crate::ffi::ffi_guard;
use crate::file::{errno_of, set_errno};
use ferry::exchange::Exchange;
use ferry::{Buf, BufMut};
use libc::{c_int, c_void, off_t, size_t, ssize_t};
use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::os::fd::{BorrowedFd, FromRawFd};

/// A buffer the C caller holds.
enum Held {
    /// Writable pool memory: its whole capacity is the caller's (its
    /// length is set to it).
    Mut(BufMut),
    /// A file mapping from `fy_uf_mmap` (read-only).
    Mapped(Buf),
}

impl Held {
    fn len(&self) -> usize {
        match self {
            Held::Mut(m) => m.len(),
            Held::Mapped(b) => b.len(),
        }
    }
}

/// Live buffers by start address.
static LIVE: Mutex<BTreeMap<usize, Held>> = Mutex::new(BTreeMap::new());

/// Hands `m` (its whole capacity) to the caller: registered, pointer out.
fn hand_out(mut m: BufMut) -> *mut u8 {
    let room = m.tail_room();
    m.commit(room);
    let p = m.as_ptr() as *mut u8;
    LIVE.lock().insert(p as usize, Held::Mut(m));
    p
}

/// The live buffer holding `ptr .. ptr + len`, if any: its key.
fn find(live: &BTreeMap<usize, Held>, ptr: usize, len: usize) -> Option<usize> {
    let (&start, h) = live.range(..=ptr).next_back()?;
    let end = start.checked_add(h.len())?;
    let last = ptr.checked_add(len)?;
    // A zero-length write still names a byte of the buffer (its start
    // at least), so an empty buffer's start counts.
    let inside = ptr < end || (ptr == start && len == 0);
    (inside && last <= end).then_some(start)
}

fn exchange() -> Result<&'static Exchange, c_int> {
    Exchange::global().map_err(|e| errno_of(&e))
}

/// fbufs' `uf_read`: up to `nbytes` from `fd` into a buffer ferry
/// picks; `*bufp` gets it (NULL at the end of the input and on failure).
#[no_mangle]
pub extern "C" fn fy_uf_read(fd: c_int, bufp: *mut *mut c_void, nbytes: size_t) -> ssize_t {
    ffi_guard(-1, libc::ENOMEM, || {
        if bufp.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: the caller's out-parameter (NULL checked).
        unsafe { *bufp = std::ptr::null_mut() };
        if fd < 0 {
            set_errno(libc::EBADF);
            return -1;
        }
        let ex = match exchange() {
            Ok(ex) => ex,
            Err(e) => {
                set_errno(e);
                return -1;
            }
        };
        // SAFETY: the caller's descriptor, used for this call only (the
        // C contract, as for read(2)); not -1 (checked).
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let b = match ex.read_buf(fd, nbytes) {
            Ok(b) => b,
            Err(e) => {
                set_errno(errno_of(&e));
                return -1;
            }
        };
        if b.is_empty() {
            return 0;
        }
        let n = b.len();
        // Just read, never shared: unique, so it becomes writable again
        // (in protect mode its pages are unsealed) with no copy.
        let m = match b.try_into_mut() {
            Ok(m) => m,
            Err(_) => {
                set_errno(libc::ENOMEM);
                return -1;
            }
        };
        let p = hand_out(m);
        // SAFETY: the caller's out-parameter (NULL checked).
        unsafe { *bufp = p.cast() };
        n as ssize_t
    })
}

/// fbufs' `uf_get` as the issue names it: an empty buffer with room for
/// `len` bytes; returns its capacity.
#[no_mangle]
pub extern "C" fn fy_uf_get(len: size_t, bufp: *mut *mut c_void) -> ssize_t {
    ffi_guard(-1, libc::ENOMEM, || {
        if bufp.is_null() {
            set_errno(libc::EINVAL);
            return -1;
        }
        // SAFETY: the caller's out-parameter (NULL checked).
        unsafe { *bufp = std::ptr::null_mut() };
        match exchange().and_then(|ex| ex.get_buf(len).map_err(|e| errno_of(&e))) {
            Ok(m) => {
                let cap = m.capacity();
                let p = hand_out(m);
                // SAFETY: as above.
                unsafe { *bufp = p.cast() };
                cap as ssize_t
            }
            Err(e) => {
                set_errno(e);
                -1
            }
        }
    })
}

/// fbufs' `uf_allocate`: a buffer of `size` bytes, or NULL with errno.
#[no_mangle]
pub extern "C" fn fy_uf_allocate(size: size_t) -> *mut c_void {
    ffi_guard(std::ptr::null_mut(), libc::ENOMEM, || {
        match exchange().and_then(|ex| ex.allocate(size).map_err(|e| errno_of(&e))) {
            Ok(m) => hand_out(m).cast(),
            Err(e) => {
                set_errno(e);
                std::ptr::null_mut()
            }
        }
    })
}

/// fbufs' `uf_deallocate`: gives back the buffer starting at `buf`.
#[no_mangle]
pub extern "C" fn fy_uf_deallocate(buf: *mut c_void, size: size_t) -> c_int {
    ffi_guard(-1, libc::ENOMEM, || {
        let mut live = LIVE.lock();
        let key = buf as usize;
        match live.get(&key) {
            Some(h) if size <= h.len() => {}
            _ => {
                set_errno(libc::EINVAL);
                return -1;
            }
        }
        let h = live.remove(&key);
        drop(live);
        match h {
            // Frozen on the way back: in protect mode its pages turn
            // read-only, so a write through a kept pointer faults.
            Some(Held::Mut(m)) => drop(m.freeze()),
            Some(Held::Mapped(b)) => drop(b),
            None => {}
        }
        0
    })
}

/// fbufs' `uf_write`: writes `buf .. buf + nbytes`, which must lie in one
/// live ferry buffer, and takes that buffer over.
#[no_mangle]
pub extern "C" fn fy_uf_write(fd: c_int, buf: *const c_void, nbytes: size_t) -> ssize_t {
    ffi_guard(-1, libc::ENOMEM, || uf_write(fd, buf, nbytes, &mut 0))
}

/// `fy_uf_write`, also telling through `sent` (if not NULL) the bytes
/// known to have arrived: all of them on success, those before the error
/// on failure.
#[no_mangle]
pub extern "C" fn fy_uf_write_counted(
    fd: c_int,
    buf: *const c_void,
    nbytes: size_t,
    sent: *mut size_t,
) -> ssize_t {
    ffi_guard(-1, libc::ENOMEM, || {
        let mut n = 0;
        let r = uf_write(fd, buf, nbytes, &mut n);
        if !sent.is_null() {
            // SAFETY: the caller's pointer to a size_t, not NULL (checked).
            unsafe { sent.write(n) };
        }
        r
    })
}

fn uf_write(fd: c_int, buf: *const c_void, nbytes: size_t, sent: &mut size_t) -> ssize_t {
    *sent = 0;
    let ptr = buf as usize;
    let data = {
        let mut live = LIVE.lock();
        let Some(key) = find(&live, ptr, nbytes) else {
            set_errno(libc::EINVAL);
            return -1;
        };
        let off = ptr - key;
        match live.get(&key) {
            Some(Held::Mapped(b)) => b.slice(off..off + nbytes),
            Some(Held::Mut(_)) => match live.remove(&key) {
                // Frozen: from here on only read (and, in protect
                // mode, read-only pages).
                Some(Held::Mut(m)) => m.freeze().slice(off..off + nbytes),
                _ => unreachable!("the key was just found"),
            },
            None => unreachable!("the key was just found"),
        }
    };
    if fd < 0 {
        set_errno(libc::EBADF);
        return -1;
    }
    // SAFETY: the caller's descriptor for this call only (as for
    // write(2)); not -1 (checked).
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    match ferry::exchange::write_buf(fd, data) {
        Ok(n) => {
            *sent = n;
            n as ssize_t
        }
        Err(e) => {
            *sent = ferry::exchange::bytes_out(&e).map_or(0, |b| b as size_t);
            set_errno(errno_of(&e));
            -1
        }
    }
}

/// fbufs' `uf_mmap`: bytes `offset .. offset + len` of the file `fd`,
/// mapped read-only under ferry's read lease; NULL with errno.
#[no_mangle]
pub extern "C" fn fy_uf_mmap(fd: c_int, offset: off_t, len: size_t) -> *const c_void {
    ffi_guard(std::ptr::null(), libc::ENOMEM, || {
        let fail = |e: c_int| {
            set_errno(e);
            std::ptr::null()
        };
        if fd < 0 {
            return fail(libc::EBADF);
        }
        if len == 0 || offset < 0 {
            return fail(libc::EINVAL);
        }
        let Some(end) = (offset as u64).checked_add(len as u64) else {
            return fail(libc::EINVAL);
        };
        // SAFETY: the caller's open descriptor, borrowed for this call:
        // the File is never dropped (ManuallyDrop), so it is not closed.
        let file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
        match Buf::map_file(&file, offset as u64..end) {
            Ok(b) => {
                let p = b.as_ptr();
                LIVE.lock().insert(p as usize, Held::Mapped(b));
                p.cast()
            }
            Err(e) => fail(errno_of(&e)),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_accepts_only_ranges_inside_one_buffer() {
        let mut live = BTreeMap::new();
        let a = ferry::exchange::get_buf(4096).unwrap();
        let p = hand_out(a) as usize;
        live.insert(p, LIVE.lock().remove(&p).unwrap());
        assert_eq!(find(&live, p, 4096), Some(p));
        assert_eq!(find(&live, p + 100, 10), Some(p));
        assert_eq!(find(&live, p, 0), Some(p));
        assert_eq!(find(&live, p + 4095, 1), Some(p));
        assert_eq!(find(&live, p + 4095, 2), None, "past the end");
        assert_eq!(find(&live, p + 4096, 0), None, "one past the end");
        assert_eq!(find(&live, p - 1, 1), None, "before it");
        assert_eq!(find(&live, p + 1, usize::MAX), None, "overflow");
    }
}
