//! fmemopen as glibc (2.22 and later) does it.
//!
//! In glibc an fmemopen stream is a memory object behind an ordinary
//! FILE buffer, and what a program sees comes from both layers:
//! writes sit in the FILE buffer (fwrite succeeds past the end of the
//! memory) until a flush hands them to the cookie, whose write truncates
//! at `size`, places the NUL and fails with ENOSPC when nothing fits;
//! the FILE buffer is dropped whatever the cookie took.
//!
//! Here the memory side is [`Fmem`], ferry's own model of that behaviour
//! (the rules below were found by comparing with glibc, and
//! tests/c/fmemopen.c keeps checking them): a position, the end of the
//! contents (`size` for "r", the first NUL for "a", 0 for "w"), `size`,
//! append or not. The FILE's ferry stream is a *view*: the
//! cookie's contents (`buf[..maxpos]`) as a memory stream, positioned where
//! the FILE is, with the writes not yet flushed written into it (from
//! `dirty`). [`sync`] (fflush, fseek, fclose; each write when unbuffered)
//! gives those writes to the cookie and builds a fresh view. Reads thus
//! end at `maxpos`, as glibc's cookie read does.
//!
//! glibc's fseek is its generic one over the cookie: SEEK_CUR and
//! SEEK_END go to the cookie's seek (EINVAL past `size` or before 0, the
//! position unchanged), but SEEK_SET on a readable stream first seeks the
//! cookie to the 8 KiB block and reads up to the offset: when that offset
//! is past `size` the seek fails with the cookie already moved past what
//! it read, so the position becomes the end of the contents unless the
//! FILE had unread bytes buffered. [`seek`] follows that (`filled` and
//! `ahead` stand for glibc's read buffer being non-empty and holding
//! unread bytes).

use super::{fail, Kind, State};
use ferry::stream::Mode;
use ferry::Stream;
use libc::c_int;
use std::io::{SeekFrom, Write};

/// glibc's FILE buffer size for a cookie stream (BUFSIZ): its fseek reads
/// in blocks of it.
const BLOCK: i64 = 8192;

/// The memory side of one fmemopen stream, and the little of a glibc
/// FILE's buffer state that its observable rules depend on.
pub(crate) struct Fmem {
    /// The caller's `size` bytes, or ours (`owned`, freed at close).
    buf: *mut u8,
    size: usize,
    owned: bool,
    append: bool,
    readable: bool,
    writable: bool,
    /// The cookie's position and end of contents.
    pos: usize,
    maxpos: usize,
    /// Where the writes not yet given to the cookie start in the view.
    dirty: Option<u64>,
    /// The view's position when it was made (a read moves it).
    synced_pos: u64,
    /// glibc's read buffer holds bytes / holds bytes not yet read.
    filled: bool,
    /// glibc's FILE buffer exists (the first read, write or seek makes
    /// it): until then a write cannot be buffered before a flush.
    allocated: bool,
    ahead: bool,
}

// SAFETY: the buffer is the stream's (fmemopen's contract): only the
// FILE, under its lock, touches it.
unsafe impl Send for Fmem {}

impl Fmem {
    /// The memory side for `mode`'s directions over `buf`: "w+" truncates (a NUL at buf[0]), "a" starts at the
    /// first NUL, "r" holds all `size` bytes.
    ///
    /// # Safety
    /// `buf` holds `size` bytes for the stream's life.
    pub(crate) unsafe fn new(
        buf: *mut u8,
        size: usize,
        owned: bool,
        first: u8,
        plus: bool,
    ) -> Fmem {
        if first == b'w' && plus && size > 0 {
            // SAFETY: size ≥ 1 bytes (the caller's contract).
            unsafe { *buf = 0 };
        }
        let maxpos = match first {
            b'r' => size,
            b'a' => {
                // SAFETY: as above.
                let held = unsafe { std::slice::from_raw_parts(buf, size) };
                memchr::memchr(0, held).unwrap_or(size)
            }
            _ => 0,
        };
        let append = first == b'a';
        Fmem {
            buf,
            size,
            owned,
            append,
            readable: first == b'r' || plus,
            writable: first != b'r' || plus,
            pos: if append { maxpos } else { 0 },
            maxpos,
            dirty: None,
            synced_pos: 0,
            filled: false,
            ahead: false,
            allocated: false,
        }
    }

    /// The end of the contents (where "a" starts).
    pub(crate) fn maxpos(&self) -> usize {
        self.maxpos
    }

    /// A memory stream over the contents, at `at` (ENOMEM if no copy).
    pub(crate) fn view(&mut self, at: u64) -> Result<Stream, c_int> {
        // SAFETY: maxpos ≤ size bytes of the buffer.
        let bytes = unsafe { std::slice::from_raw_parts(self.buf, self.maxpos) };
        let mut v = Vec::new();
        v.try_reserve_exact(bytes.len()).map_err(|_| libc::ENOMEM)?;
        v.extend_from_slice(bytes);
        let s = Stream::from_bytes(v);
        s.seek_to(SeekFrom::Start(at)).map_err(|_| libc::EINVAL)?;
        // As fopen's streams: read mode only for "r" (ASI allocations
        // follow the stream's mode).
        if !self.writable {
            s.set_mode(Mode::Read).map_err(|_| libc::EINVAL)?;
        }
        self.synced_pos = at;
        Ok(s)
    }

    /// Hands `data` to the memory, by glibc's observable rules (checked
    /// against glibc by tests/c/fmemopen.c): it lands at the position, or
    /// at the end of the contents when appending; what does not fit before
    /// `size` is cut off, and when not even the terminator would fit
    /// after the position, nothing is taken (ENOSPC). Data that does not
    /// end in NUL gets one after the new end of the contents when there is
    /// room; with no room left, a stream that does not append gives up its
    /// last byte to it. Returns the bytes taken and the errno (0 if none).
    fn write(&mut self, data: &[u8]) -> (usize, c_int) {
        let at = if self.append { self.maxpos } else { self.pos };
        let terminate = !matches!(data.last(), Some(0));
        let room = self.size.saturating_sub(at);
        let taken = if data.len() <= room {
            data.len()
        } else if self.pos + usize::from(terminate) >= self.size {
            return (0, libc::ENOSPC);
        } else {
            room
        };
        // SAFETY: at + taken ≤ size bytes of the buffer.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.buf.add(at), taken) };
        let end = at + taken;
        self.pos = end;
        if end <= self.maxpos {
            return (taken, 0);
        }
        self.maxpos = end;
        if terminate {
            let nul_at = if end < self.size {
                Some(end)
            } else if !self.append {
                // end ≥ 1 here, so size ≥ 1.
                Some(self.size - 1)
            } else {
                None
            };
            if let Some(i) = nul_at {
                // SAFETY: i < size.
                unsafe { *self.buf.add(i) = 0 };
            }
        }
        (taken, 0)
    }

    /// Moves the position: EINVAL before 0 or past `size`.
    fn seek_to(&mut self, np: i64) -> Result<usize, c_int> {
        match usize::try_from(np) {
            Ok(p) if p <= self.size => {
                self.pos = p;
                Ok(p)
            }
            _ => Err(libc::EINVAL),
        }
    }

    /// A read of up to `want` bytes, which stops at the end of the
    /// contents: only its count matters (the view holds the bytes).
    fn read(&mut self, want: usize) -> usize {
        let n = want.min(self.maxpos.saturating_sub(self.pos));
        self.pos += n;
        n
    }

    /// Frees the buffer fmemopen(NULL, ...) allocated.
    pub(crate) fn release(&mut self) {
        if std::mem::take(&mut self.owned) {
            // SAFETY: our own calloc'd buffer, freed once.
            unsafe { libc::free(self.buf.cast()) };
        }
    }
}

fn fmem(st: &mut State) -> Option<&mut Fmem> {
    match &mut st.kind {
        Kind::Fmem(m) => Some(m),
        _ => None,
    }
}

/// A write to an fmemopen FILE, as glibc's buffered writes behave: into
/// the view as into glibc's 8 KiB buffer while it fits; else the buffer
/// is filled and flushed, whole blocks go to the cookie at once and the
/// rest is buffered. Unbuffered, everything goes to the cookie at once;
/// line buffered, everything through the last newline.
/// Returns the bytes written, and the error (errno 0: ferror only) if
/// short.
pub(crate) fn write(st: &mut State, data: &[u8]) -> (usize, Result<(), c_int>) {
    match st.buffering {
        super::Buffering::Full => {}
        super::Buffering::None => {
            if let Err(e) = buffer(st, data) {
                return (0, Err(e));
            }
            return match sync(st) {
                Ok(()) => (data.len(), Ok(())),
                Err((taken, e)) => (taken.min(data.len()), Err(e)),
            };
        }
        super::Buffering::Line => {
            if let Some(k) = memchr::memrchr(b'\n', data) {
                // Through the last newline, then flushed; the rest stays
                // buffered. glibc reports a failed flush here as EOF from
                // xsputn: fputs fails, fwrite counts every item.
                if let Err(e) = buffer(st, &data[..=k]) {
                    return (0, Err(e));
                }
                if let Err((_, e)) = sync(st) {
                    return (data.len(), Err(e));
                }
                return match buffer(st, &data[k + 1..]) {
                    Ok(()) => (data.len(), Ok(())),
                    Err(e) => (k + 1, Err(e)),
                };
            }
        }
    }
    let here = st.stream.as_ref().map_or(0, |s| s.position());
    let Some(m) = fmem(st) else {
        return (0, Err(libc::EBADF));
    };
    // glibc allocates its buffer at the first read, write or seek.
    let room = match (m.allocated, m.dirty) {
        (false, _) => 0,
        (true, Some(d)) => (BLOCK as usize).saturating_sub(here.saturating_sub(d) as usize),
        (true, None) => BLOCK as usize,
    };
    m.allocated = true;
    if data.len() <= room {
        return match buffer(st, data) {
            Ok(()) => (data.len(), Ok(())),
            Err(e) => (0, Err(e)),
        };
    }
    // Fill the buffer and flush it.
    if let Err(e) = buffer(st, &data[..room]) {
        return (0, Err(e));
    }
    if let Err((_, e)) = sync(st) {
        return (room, Err(e));
    }
    // Whole blocks straight to the cookie, the rest into the buffer.
    let rest = &data[room..];
    let direct = rest.len() - rest.len() % BLOCK as usize;
    if direct > 0 {
        if let Err(e) = buffer(st, &rest[..direct]) {
            return (room, Err(e));
        }
        if let Err((taken, e)) = sync(st) {
            return (room + taken, Err(e));
        }
    }
    match buffer(st, &rest[direct..]) {
        Ok(()) => (data.len(), Ok(())),
        Err(e) => (room + direct, Err(e)),
    }
}

/// Puts `data` into the view as pending writes (appending: after the
/// contents, as ftell then says).
fn buffer(st: &mut State, data: &[u8]) -> Result<(), c_int> {
    if data.is_empty() {
        return Ok(());
    }
    let (append, start) = fmem(st).map_or((false, None), |m| (m.append, m.dirty));
    let s = st.stream.as_mut().ok_or(libc::EBADF)?;
    if start.is_none() && append {
        let _ = s.seek_to(SeekFrom::End(0));
    }
    let at = s.position();
    s.write_all(data).map_err(|e| super::errno_of(&e))?;
    if let Some(m) = fmem(st) {
        m.dirty.get_or_insert(at);
        m.allocated = true;
    }
    Ok(())
}

/// Gives the pending writes to the cookie and makes a fresh view (glibc's
/// flush). A short write fails with the cookie's errno (0: none, only
/// ferror); the bytes it did not take are gone, as glibc's buffer is.
/// The error carries the bytes taken.
pub(crate) fn sync(st: &mut State) -> Result<(), (usize, c_int)> {
    if !st.regions.is_empty() {
        // ASI regions point into the view: it cannot be replaced while
        // they are out (fclose gives them back, then syncs).
        return Err((0, libc::EBUSY));
    }
    let Some(s) = st.stream.as_mut() else {
        return Ok(());
    };
    let here = s.position();
    let mode = s.mode();
    if let Some(m) = fmem(st) {
        note_ops(m, here, mode);
    }
    let Some(s) = st.stream.as_mut() else {
        return Ok(());
    };
    let pending = match fmem_ref(&st.kind).and_then(|m| m.dirty) {
        Some(start) => match s.memory_contents() {
            Ok(all) => {
                let end = (here as usize).min(all.len());
                let start = (start as usize).min(end);
                Some(all[start..end].to_vec())
            }
            Err(e) => return Err((0, super::errno_of(&e))),
        },
        None => None,
    };
    let Some(m) = fmem(st) else { return Ok(()) };
    let mut result = Ok(());
    let at = match pending {
        Some(bytes) => {
            if !m.append {
                // glibc seeks the cookie to the buffer's start first.
                m.pos = m.dirty.unwrap_or(0) as usize;
            }
            let (n, e) = m.write(&bytes);
            if n < bytes.len() {
                result = Err((n, e));
            }
            m.dirty = None;
            m.filled = false;
            m.ahead = false;
            m.pos as u64
        }
        None => {
            // A read stream: the cookie goes back to the FILE's offset.
            m.ahead = false;
            m.pos = here as usize;
            here
        }
    };
    let view = m.view(at).map_err(|e| (0, e))?;
    st.stream = Some(view);
    if let Err((_, e)) = result {
        fail(st, e);
    }
    result
}

/// ftell: with writes pending on an appending stream glibc's ftell seeks
/// the cookie to the end (`do_ftell`), which the next write's room check
/// then starts from.
pub(crate) fn told(st: &mut State) {
    if let Some(m) = fmem(st) {
        if m.append && m.dirty.is_some() {
            m.pos = m.maxpos;
        }
    }
}

fn fmem_ref(k: &Kind) -> Option<&Fmem> {
    match k {
        Kind::Fmem(m) => Some(m),
        _ => None,
    }
}

/// What moved the view since it was made: writes that did not come
/// through [`write`] (ASI regions) are pending from where it started;
/// reads mean glibc's read buffer was filled to the contents' end,
/// unread past `here`.
fn note_ops(m: &mut Fmem, here: u64, mode: Mode) {
    if m.dirty.is_some() || here == m.synced_pos {
        return;
    }
    if mode == Mode::Write {
        m.dirty = Some(m.synced_pos);
    } else {
        m.filled = true;
        m.allocated = true;
        m.ahead = (here as usize) < m.maxpos;
    }
}

/// fseek on an fmemopen FILE, as glibc's generic fseek over the cookie
/// (see the module's notes). Returns the new offset.
pub(crate) fn seek(st: &mut State, off: i64, whence: c_int) -> Result<i64, c_int> {
    if !matches!(whence, libc::SEEK_SET | libc::SEEK_CUR | libc::SEEK_END) {
        return Err(libc::EINVAL);
    }
    if !st.regions.is_empty() {
        // As in `sync`: the view stays while ASI regions point into it.
        return Err(libc::EBUSY);
    }
    let (here, mode) = match st.stream.as_ref() {
        Some(s) => (s.position(), s.mode()),
        None => return Err(libc::EBADF),
    };
    let dirty = fmem(st).is_some_and(|m| {
        note_ops(m, here, mode);
        m.allocated = true;
        m.dirty.is_some()
    });
    // Pending writes go first (a failure is the seek's); a read buffer
    // stays as it is.
    if dirty {
        sync(st).map_err(|(_, e)| e)?;
    }
    let file_pos = st.stream.as_ref().map_or(0, |s| s.position()) as i64;
    let Some(m) = fmem(st) else {
        return Err(libc::EBADF);
    };
    let np = match whence {
        libc::SEEK_CUR => file_pos.checked_add(off),
        libc::SEEK_END => (m.maxpos as i64).checked_add(off),
        _ => Some(off),
    }
    .ok_or(libc::EINVAL)?;
    let (to, res) = if whence == libc::SEEK_SET && m.readable {
        block_seek(m, off, file_pos)
    } else {
        match m.seek_to(np) {
            Ok(p) => {
                m.filled = false;
                m.ahead = false;
                (p as u64, Ok(p as i64))
            }
            Err(e) => (file_pos as u64, Err(e)),
        }
    };
    let view = m.view(to)?;
    st.stream = Some(view);
    if res.is_ok() {
        st.eof = false;
    }
    res
}

/// glibc's SEEK_SET on a readable FILE: seek the cookie to the block,
/// read up to the offset, seek the rest. Returns where the FILE is after
/// it, and the result.
fn block_seek(m: &mut Fmem, off: i64, file_pos: i64) -> (u64, Result<i64, c_int>) {
    let unchanged = file_pos as u64;
    let exact = !m.filled;
    let nb = off & !(BLOCK - 1);
    let delta = off - nb;
    if let Err(e) = m.seek_to(nb) {
        return (unchanged, Err(e));
    }
    if delta == 0 {
        m.filled = false;
        m.ahead = false;
        return (nb as u64, Ok(off));
    }
    let count = m.read(if exact { delta } else { BLOCK } as usize) as i64;
    if count < delta {
        // The rest is the cookie's seek from where the read ended.
        return match m.seek_to(m.pos as i64 + (delta - count)) {
            Ok(p) => {
                m.filled = false;
                m.ahead = false;
                (p as u64, Ok(p as i64))
            }
            // glibc's read pointers stay: unread bytes keep the offset,
            // else the FILE is where the cookie's read ended.
            Err(e) if m.ahead => (unchanged, Err(e)),
            Err(e) => ((nb + count) as u64, Err(e)),
        };
    }
    m.filled = true;
    m.ahead = delta < count;
    (off as u64, Ok(off))
}
