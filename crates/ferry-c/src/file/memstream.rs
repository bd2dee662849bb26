//! open_memstream as glibc (2.36) does it.
//!
//! glibc's memory stream is a string stream whose size is its write
//! position: each fflush makes `*ptr` the buffer (the bytes after the
//! position stay, a NUL follows the furthest byte) and `*sizep` the
//! position; fclose cuts the buffer at the position and puts a NUL
//! there. Its SEEK_END counts from that position too, a seek past the
//! end zero-fills, and the stream can be read. Nothing is stored in
//! `*ptr`/`*sizep` before the first flush.

use super::{Kind, State};
use ferry::stream::Mode;
use libc::c_char;

/// Where an open_memstream stream publishes its bytes.
pub(crate) struct MemStream {
    /// The caller's out-parameters (valid while the stream is open:
    /// open_memstream's contract).
    pub ptr: *mut *mut c_char,
    pub size: *mut usize,
    /// Our malloc'd buffer last published (NULL before the first flush):
    /// reallocated each time, never the caller's possibly unset `*ptr`.
    pub buf: *mut c_char,
    /// glibc's write pointer: seeks and writes move it, reads do not.
    pub wpos: u64,
}

/// A seek moved glibc's write pointer (reads do not; writes are seen by
/// `publish` from the stream's mode).
pub(crate) fn moved(st: &mut State) {
    let pos = st.stream.as_ref().map_or(0, |s| s.position());
    if let Kind::MemStream(m) = &mut st.kind {
        m.wpos = pos;
    }
}

/// Publishes the bytes (fflush; with `closing`, fclose's cut at the
/// position). A failed allocation leaves the last publication.
pub(crate) fn publish(st: &mut State, closing: bool) {
    let Kind::MemStream(m) = &mut st.kind else {
        return;
    };
    let Some(s) = st.stream.as_mut() else { return };
    if s.mode() == Mode::Write {
        // Written last (fwrite, putc, an ASI region): the position is
        // glibc's write pointer.
        m.wpos = s.position();
    }
    let Ok(bytes) = s.memory_contents() else {
        return;
    };
    let Ok(pos) = usize::try_from(m.wpos) else {
        return;
    };
    // The bytes kept: up to the position (zeros past the contents) and,
    // while open, those after it; then a NUL.
    let keep = if closing { pos } else { pos.max(bytes.len()) };
    let Some(total) = keep.checked_add(1) else {
        return;
    };
    // SAFETY: our own malloc'd buffer (or NULL), grown to `total` bytes;
    // `ptr` and `size` are the caller's, valid while the stream is open.
    unsafe {
        let new = libc::realloc(m.buf.cast(), total) as *mut u8;
        if new.is_null() {
            return;
        }
        let have = bytes.len().min(keep);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), new, have);
        std::ptr::write_bytes(new.add(have), 0, total - have);
        m.buf = new.cast();
        *m.ptr = m.buf;
        *m.size = pos;
    }
}
