//! The per-stream state and every operation on it (ASF's CIOS structure and
//! its stream-specific functions). Callers hold the stream's lock, or `&mut`.
//!
//! Buffers live in `slots`, a table whose indices stay put, so a region can
//! name its buffer by index. A buffer is freed when it is no longer current
//! and no region (lease) points into it — ASF §4.3.1's list of old buffers
//! with outstanding sallocs.
//!
//! Writes: regions are queued in allocation order (`wq`). Freeing marks a
//! region; the freed prefix of the queue is *committed*. Committed bytes
//! reach the file in allocation order (a buffer is written only when all
//! buffers before it are), whatever order regions were freed in.

use super::error::{errno, named};
use super::options::Mode;
use super::source::Source;
use crate::{Buf, BufMut, Pool};
use std::collections::VecDeque;
use std::io::{self, SeekFrom};
use std::ptr::NonNull;
use std::sync::Arc;

/// Marks a region that holds no lease (empty regions).
pub(crate) const NO_SLOT: u32 = u32::MAX;

pub(crate) struct WriteBuf {
    /// Owns the memory `ptr` points into (returned to the pool with it).
    _mem: BufMut,
    /// Raw pointer to `mem`'s first byte: regions write through it, so the
    /// stream never makes a `&mut [u8]` over bytes a region may be using.
    ptr: NonNull<u8>,
    cap: usize,
    /// File offset of byte 0.
    off: u64,
    /// Bytes handed out to regions, from 0.
    used: usize,
    /// Prefix whose regions are all freed.
    committed: usize,
    /// Prefix already written to the file.
    written: usize,
}

enum Data {
    Empty,
    /// File bytes `[off, off + buf.len())`; `eof`: the fill hit end of file.
    Read {
        buf: Buf,
        off: u64,
        eof: bool,
    },
    Write(WriteBuf),
}

struct Slot {
    data: Data,
    /// Regions pointing into this buffer.
    leases: u32,
}

/// A write region in the allocation-order queue.
struct WReg {
    slot: u32,
    start: usize,
    end: usize,
    freed: bool,
}

/// The current read buffer, cached where `salloc`'s fast path reaches it
/// without going through the slot table (ASF's `bufptr`/`bufcnt`).
#[derive(Clone, Copy)]
struct ReadCur {
    /// `NO_SLOT` when there is no current read buffer.
    slot: u32,
    base: *const u8,
    /// File offset of `base`.
    off: u64,
    len: usize,
    eof: bool,
    /// Leases taken while current; added to the slot's count on retire.
    leases: u32,
}

const NO_READ: ReadCur = ReadCur {
    slot: NO_SLOT,
    base: std::ptr::null(),
    off: 0,
    len: 0,
    eof: false,
    leases: 0,
};

pub(crate) struct Inner {
    pub(crate) src: Source,
    pub(crate) name: Arc<str>,
    pub(crate) can_read: bool,
    pub(crate) can_write: bool,
    pub(crate) append: bool,
    pub(crate) mode: Mode,
    /// The stream offset.
    pub(crate) pos: u64,
    bufsize: usize,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    rc: ReadCur,
    wcur: Option<u32>,
    /// The last write buffer written out and no longer leased, kept for
    /// the next one (a large buffer is not re-allocated and re-zeroed for
    /// every region of a long write).
    spare_write: Option<BufMut>,
    /// Write regions not yet committed, in allocation order.
    wq: VecDeque<WReg>,
    /// Sequence number of `wq[0]`.
    wseq: u64,
    /// Write buffers not yet fully written, in allocation order.
    wbufs: VecDeque<u32>,
    /// End of the furthest committed write (the stream's length grows here
    /// when a region is freed, not when it is allocated).
    committed_end: u64,
    /// An error met while freeing (in a `Drop`), reported by the next call.
    deferred: Option<io::Error>,
    finished: bool,
    /// Reads map the file in windows instead of copying it into buffers.
    mapped: bool,
    /// The read lease that makes the mapped windows immutable.
    lease: Option<crate::MappedFile>,
    /// The SIGBUS guard's fault count when this stream last looked.
    seen_faults: u64,
    /// Size and end of the last mapping window.
    window: (usize, u64),
}

/// The mapped backend's windows: a first window (and one after a jump) is
/// small, so random access does not map and populate far more than it
/// reads; each window that follows the last one doubles, up to the largest.
pub(crate) const MAP_WINDOW_FIRST: usize = 1 << 20;
pub(crate) const MAP_WINDOW_MAX: usize = 64 << 20;

#[cfg(not(miri))]
#[inline(always)]
fn fault_count() -> u64 {
    crate::sys::sigbus::fault_count()
}

#[cfg(miri)]
fn fault_count() -> u64 {
    0
}

/// What a read `salloc` hands out.
pub(crate) struct ReadLease {
    pub ptr: NonNull<u8>,
    pub len: usize,
    pub slot: u32,
    /// Stream offset of the first byte.
    pub offset: u64,
}

/// What a write `salloc` hands out.
pub(crate) struct WriteLease {
    pub ptr: NonNull<u8>,
    pub len: usize,
    pub seq: u64,
    /// Stream offset of the first byte.
    pub offset: u64,
}

/// The default size of a stream buffer.
pub(crate) const DEFAULT_BUFSIZE: usize = 128 << 10;

/// A page-aligned stream buffer of `size` bytes: a pool slot up to 1 MiB,
/// else fresh memory. A size no allocation can have is `InvalidInput`, a
/// refused one `OutOfMemory` — an error, never an abort.
fn alloc_buf(size: usize) -> io::Result<BufMut> {
    if size <= 1 << 20 {
        if let Ok(m) = Pool::global().alloc(size) {
            return Ok(m);
        }
    }
    BufMut::try_with_capacity_aligned(size, 4096)
}

fn too_large(n: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("a buffer of {n} bytes is larger than any allocation can be"),
    )
}

/// The largest stream offset: file offsets are `off_t`, signed 64-bit.
pub(crate) const MAX_OFFSET: u64 = i64::MAX as u64;

/// `pos + len` if it is a valid stream offset, else `EFBIG` (as `write(2)`
/// past the largest file offset).
fn end_of(pos: u64, len: usize) -> Option<u64> {
    pos.checked_add(len as u64).filter(|&e| e <= MAX_OFFSET)
}

impl Inner {
    pub(crate) fn new(
        src: Source,
        name: Arc<str>,
        can_read: bool,
        can_write: bool,
        append: bool,
    ) -> Inner {
        Inner {
            src,
            name,
            can_read,
            can_write,
            append,
            mode: if can_read && !can_write {
                Mode::Read
            } else if can_write {
                Mode::Write
            } else {
                Mode::Read
            },
            pos: 0,
            bufsize: DEFAULT_BUFSIZE,
            slots: Vec::new(),
            free_slots: Vec::new(),
            rc: NO_READ,
            wcur: None,
            spare_write: None,
            wq: VecDeque::new(),
            wseq: 0,
            wbufs: VecDeque::new(),
            committed_end: 0,
            deferred: None,
            finished: false,
            mapped: false,
            lease: None,
            seen_faults: 0,
            window: (0, u64::MAX),
        }
    }

    /// True if reads map the file.
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped
    }

    /// Reads map the file (read-only regular files only), if ferry can
    /// hold a read lease on it ([`crate::MappedFile`]); else they stay
    /// buffered.
    pub(crate) fn set_mapped(&mut self) {
        self.lease = self
            .src
            .file()
            .and_then(|f| crate::MappedFile::open(f).ok());
        self.mapped = self.lease.is_some();
        self.seen_faults = fault_count();
    }

    /// Reports a mapping window of this stream that lost pages because the
    /// file shrank (once per event), and stops using it.
    #[cold]
    fn check_damage(&mut self) -> io::Result<()> {
        let now = fault_count();
        if now == self.seen_faults {
            return Ok(());
        }
        self.seen_faults = now;
        let damaged = self.slots.iter().any(|s| match &s.data {
            Data::Read { buf, .. } => !buf.is_intact(),
            _ => false,
        });
        if damaged {
            self.retire_read();
            return Err(self.shrank());
        }
        Ok(())
    }

    fn shrank(&self) -> io::Error {
        self.err(
            "reading",
            io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file shrank while it was mapped (the lost bytes read as zeros)",
            ),
        )
    }

    pub(crate) fn set_bufsize(&mut self, n: usize) {
        self.bufsize = n.clamp(4096, 1 << 30);
    }

    fn err(&self, op: &'static str, e: io::Error) -> io::Error {
        named(op, &self.name, e)
    }

    /// Keeps an error a `Drop` met, for the next call to report.
    pub(crate) fn defer(&mut self, e: io::Error) {
        self.deferred.get_or_insert(e);
    }

    /// Reports (once) an error a `Drop` could not.
    pub(crate) fn take_deferred(&mut self) -> io::Result<()> {
        match self.deferred.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn new_slot(&mut self, data: Data) -> u32 {
        let slot = Slot { data, leases: 0 };
        match self.free_slots.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                self.slots.push(slot);
                (self.slots.len() - 1) as u32
            }
        }
    }

    fn release_slot(&mut self, i: u32) {
        self.slots[i as usize].data = Data::Empty;
        self.free_slots.push(i);
    }

    // ------------------------------------------------------------ modes ---

    pub(crate) fn set_mode(&mut self, mode: Mode) -> io::Result<()> {
        match mode {
            Mode::Read if !self.can_read => return Err(self.err("reading", errno(libc::EBADF))),
            Mode::Write if !self.can_write => return Err(self.err("writing", errno(libc::EBADF))),
            _ => {}
        }
        if mode == Mode::Read && self.mode == Mode::Write {
            // Reads see the stream's own committed writes.
            self.flush()?;
        }
        self.mode = mode;
        Ok(())
    }

    // ------------------------------------------------------------- seek ---

    pub(crate) fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        if !self.src.positional() {
            return match to {
                SeekFrom::Current(0) => Ok(self.pos),
                _ => Err(self.err("seeking", errno(libc::ESPIPE))),
            };
        }
        let base = match to {
            SeekFrom::Start(n) => (n, 0),
            SeekFrom::Current(d) => (self.pos, d),
            SeekFrom::End(d) => (self.len()?, d),
        };
        // As lseek: no offset past what `off_t` holds.
        match base
            .0
            .checked_add_signed(base.1)
            .filter(|&p| p <= MAX_OFFSET)
        {
            Some(p) => {
                self.pos = p;
                Ok(p)
            }
            None => Err(self.err("seeking", errno(libc::EINVAL))),
        }
    }

    /// The stream's length as the application sees it: the file's, or the
    /// end of the furthest freed write region if that is further.
    pub(crate) fn len(&self) -> io::Result<u64> {
        let size = self
            .src
            .size()
            .map_err(|e| self.err("reading the size of", e))?;
        Ok(size.max(self.committed_end))
    }

    // ------------------------------------------------------------- read ---

    /// The current read buffer's unread bytes at `pos`: (slot, offset in
    /// buffer, bytes available, buffer ends at end of file).
    #[inline]
    fn read_window(&self) -> Option<(u32, usize, usize, bool)> {
        let rc = &self.rc;
        let at = self.pos.wrapping_sub(rc.off);
        if rc.slot != NO_SLOT && at <= rc.len as u64 {
            let at = at as usize;
            return Some((rc.slot, at, rc.len - at, rc.eof));
        }
        None
    }

    /// Makes `slot` (a read buffer) the current one.
    fn set_rcur(&mut self, slot: u32) {
        if let Data::Read { buf, off, eof } = &self.slots[slot as usize].data {
            self.rc = ReadCur {
                slot,
                base: buf.as_ptr(),
                off: *off,
                len: buf.len(),
                eof: *eof,
                leases: 0,
            };
        }
    }

    fn read_ptr(&self, slot: u32, at: usize) -> NonNull<u8> {
        match &self.slots[slot as usize].data {
            // (no unsafe) pointer arithmetic inside a live Buf.
            Data::Read { buf, .. } => NonNull::from(&buf[at..]).cast(),
            _ => unreachable!("read lease on a non-read buffer"),
        }
    }

    /// Makes the current read buffer start at `pos` and hold at least `min`
    /// bytes, unless the file ends first. Sequential sources keep the
    /// unread tail of the old buffer (it cannot be read again).
    fn fill(&mut self, min: usize) -> io::Result<()> {
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        if self.mapped {
            return self.fill_mapped(min);
        }
        let tail: Option<Buf> = if self.src.positional() {
            None
        } else {
            self.read_window()
                .map(|(c, at, avail, _)| match &self.slots[c as usize].data {
                    Data::Read { buf, .. } => buf.slice(at..at + avail),
                    _ => Buf::new(),
                })
        };
        let keep = tail.as_ref().map_or(0, |t| t.len());
        let mut want = min.max(self.bufsize).max(keep.saturating_add(1));
        if want > self.bufsize && self.src.positional() {
            // No more than the file holds (plus a byte to see its end): a
            // huge request on a small file allocates what it can return.
            let left = self
                .src
                .size()
                .map_err(|e| self.err("reading", e))?
                .saturating_sub(self.pos);
            want = want.min(
                usize::try_from(left)
                    .unwrap_or(usize::MAX)
                    .saturating_add(1),
            );
        }
        let size = want
            .checked_next_multiple_of(4096)
            .ok_or_else(|| self.err("reading", too_large(want)))?;
        let mut m = alloc_buf(size).map_err(|e| self.err("reading", e))?;
        if let Some(t) = &tail {
            m.extend_from_slice(t);
        }
        let start = self.pos;
        let mut eof = false;
        while m.len() < min.max(1) && m.len() < m.capacity() {
            let off = start + m.len() as u64;
            let n = self
                .src
                .read(off, m.spare_capacity_mut())
                .map_err(|e| named("reading", &self.name, e))?;
            if n == 0 {
                eof = true;
                break;
            }
            m.commit(n);
        }
        if self.src.positional() && !eof && m.len() < m.capacity() {
            // A short positional read means end of file (for now).
            eof = true;
        }
        self.retire_read();
        let slot = self.new_slot(Data::Read {
            buf: m.freeze(),
            off: start,
            eof,
        });
        self.set_rcur(slot);
        Ok(())
    }

    /// The mapped backend's fill: a window of the file at `pos`, mapped.
    fn fill_mapped(&mut self, min: usize) -> io::Result<()> {
        let size = self.src.size().map_err(|e| self.err("reading", e))?;
        let start = self.pos;
        let window = if start == self.window.1 {
            (self.window.0 * 2).min(MAP_WINDOW_MAX)
        } else {
            MAP_WINDOW_FIRST
        };
        let len = if start >= size {
            0
        } else {
            (size - start).min(min.max(window) as u64) as usize
        };
        self.window = (window, start + len as u64);
        let buf = match &self.lease {
            Some(f) if len > 0 => match f.map(start..start + len as u64) {
                Ok(b) => b,
                // A writer broke the lease and still has the file open:
                // read into buffers from here on.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    (self.mapped, self.lease) = (false, None);
                    return self.fill(min);
                }
                Err(e) => return Err(self.err("mapping", e)),
            },
            _ => Buf::new(),
        };
        self.retire_read();
        let slot = self.new_slot(Data::Read {
            buf,
            off: start,
            eof: start + len as u64 >= size,
        });
        self.set_rcur(slot);
        Ok(())
    }

    /// The current read buffer stops being current; freed if nothing points
    /// into it.
    fn retire_read(&mut self) {
        let rc = std::mem::replace(&mut self.rc, NO_READ);
        if rc.slot != NO_SLOT {
            let s = &mut self.slots[rc.slot as usize];
            s.leases += rc.leases;
            if s.leases == 0 {
                self.release_slot(rc.slot);
            }
        }
    }

    /// `salloc` in read mode: up to `len` bytes at `pos` (fewer only at end
    /// of file), the offset advanced past them.
    #[inline]
    pub(crate) fn salloc_read(&mut self, len: usize) -> io::Result<ReadLease> {
        if self.mode == Mode::Read && !(self.mapped && fault_count() != self.seen_faults) {
            let rc = &mut self.rc;
            let at = self.pos.wrapping_sub(rc.off);
            if rc.slot != NO_SLOT && at <= rc.len as u64 && rc.len as u64 - at >= len as u64 {
                rc.leases += 1;
                let offset = self.pos;
                self.pos += len as u64;
                return Ok(ReadLease {
                    // (no unsafe) `at <= len` keeps this inside the buffer;
                    // wrapping_add only avoids an unsafe block.
                    ptr: NonNull::new(rc.base.wrapping_add(at as usize) as *mut u8)
                        .unwrap_or(NonNull::dangling()),
                    len,
                    slot: rc.slot,
                    offset,
                });
            }
        }
        self.salloc_read_slow(len, true)
    }

    #[cold]
    pub(crate) fn salloc_read_slow(&mut self, len: usize, exact: bool) -> io::Result<ReadLease> {
        self.take_deferred()?;
        if self.mapped {
            self.check_damage()?;
        }
        if !self.can_read {
            return Err(self.err("reading", errno(libc::EBADF)));
        }
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        if len == 0 {
            return Ok(ReadLease {
                ptr: NonNull::dangling(),
                len: 0,
                slot: NO_SLOT,
                offset: self.pos,
            });
        }
        // Short of `len`: read again from `pos` (the file may also have
        // grown since the buffer was filled).
        if let Some((c, at, avail, _)) = self.read_window() {
            if avail >= len || (avail > 0 && !exact) {
                return Ok(self.lend(c, at, avail.min(len)));
            }
        }
        self.fill(if exact { len } else { 1 })?;
        match self.read_window() {
            Some((c, at, avail, _)) if avail > 0 => {
                let n = avail.min(len);
                Ok(self.lend(c, at, n))
            }
            _ => Ok(ReadLease {
                ptr: NonNull::dangling(),
                len: 0,
                slot: NO_SLOT,
                offset: self.pos,
            }),
        }
    }

    #[inline]
    fn lend(&mut self, c: u32, at: usize, n: usize) -> ReadLease {
        debug_assert_eq!(c, self.rc.slot, "leases come from the current buffer");
        self.rc.leases += 1;
        let offset = self.pos;
        self.pos += n as u64;
        ReadLease {
            ptr: self.read_ptr(c, at),
            len: n,
            slot: c,
            offset,
        }
    }

    /// `sfree` of a read region.
    #[inline(always)]
    pub(crate) fn free_read(&mut self, slot: u32) {
        if slot == NO_SLOT {
            return;
        }
        if slot == self.rc.slot {
            self.rc.leases -= 1;
            return;
        }
        let s = &mut self.slots[slot as usize];
        s.leases -= 1;
        if s.leases == 0 {
            self.release_slot(slot);
        }
    }

    /// True if the buffer a read lease points into lost pages (mapped file
    /// shrank).
    pub(crate) fn lease_damaged(&self, slot: u32) -> bool {
        match self.slots.get(slot as usize).map(|s| &s.data) {
            Some(Data::Read { buf, .. }) => !buf.is_intact(),
            _ => false,
        }
    }

    /// The error for a damaged lease.
    pub(crate) fn damage_error(&self) -> io::Error {
        self.shrank()
    }

    /// The bytes of a read lease as a `Buf` that outlives it (no copy).
    pub(crate) fn lease_buf(&self, slot: u32, ptr: NonNull<u8>, len: usize) -> Buf {
        if slot == NO_SLOT {
            return Buf::new();
        }
        match &self.slots[slot as usize].data {
            Data::Read { buf, .. } => {
                let at = ptr.as_ptr() as usize - buf.as_ptr() as usize;
                buf.slice(at..at + len)
            }
            _ => unreachable!("read lease on a non-read buffer"),
        }
    }

    /// `BufRead::fill_buf`: the unread bytes of the current buffer (filling
    /// it if empty). Valid until the next call on the stream.
    #[inline]
    pub(crate) fn fill_buf(&mut self) -> io::Result<(NonNull<u8>, usize)> {
        // Fast path: unread bytes in the current read buffer, nothing
        // deferred, no new fault anywhere in ferry's mappings.
        if self.mode == Mode::Read
            && self.deferred.is_none()
            && (!self.mapped || fault_count() == self.seen_faults)
        {
            let rc = &self.rc;
            let at = self.pos.wrapping_sub(rc.off);
            if rc.slot != NO_SLOT && at < rc.len as u64 {
                // SAFETY: `at < len`: inside the current read buffer, which
                // `base` points at and which lives while it is current.
                let p = unsafe { rc.base.add(at as usize) };
                return Ok((
                    NonNull::new(p.cast_mut()).unwrap_or(NonNull::dangling()),
                    rc.len - at as usize,
                ));
            }
        }
        self.fill_buf_slow()
    }

    #[inline(never)]
    fn fill_buf_slow(&mut self) -> io::Result<(NonNull<u8>, usize)> {
        self.take_deferred()?;
        if self.mapped {
            self.check_damage()?;
        }
        if self.mode != Mode::Read || self.read_window().is_none_or(|w| w.2 == 0) {
            if !self.can_read {
                return Err(self.err("reading", errno(libc::EBADF)));
            }
            self.fill(1)?;
        }
        match self.read_window() {
            Some((c, at, avail, _)) if avail > 0 => Ok((self.read_ptr(c, at), avail)),
            _ => Ok((NonNull::dangling(), 0)),
        }
    }

    /// `BufRead::consume`.
    #[inline]
    pub(crate) fn consume(&mut self, n: usize) {
        let avail = self.read_window().map_or(0, |w| w.2);
        self.pos += n.min(avail) as u64;
    }

    /// `Read::read`: copies what is buffered, or reads once. Large reads
    /// with nothing buffered go straight into the caller's buffer.
    pub(crate) fn read_into(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.mode == Mode::Read {
            if let Some((c, at, avail, _)) = self.read_window() {
                if avail > 0 {
                    let n = avail.min(out.len());
                    if let Data::Read { buf, .. } = &self.slots[c as usize].data {
                        out[..n].copy_from_slice(&buf[at..at + n]);
                    }
                    self.pos += n as u64;
                    return Ok(n);
                }
            }
        }
        self.take_deferred()?;
        if !self.can_read {
            return Err(self.err("reading", errno(libc::EBADF)));
        }
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        if out.len() >= self.bufsize {
            self.retire_read();
            let n = self
                .src
                .read(self.pos, out)
                .map_err(|e| named("reading", &self.name, e))?;
            self.pos += n as u64;
            return Ok(n);
        }
        let lease = self.salloc_read_slow(out.len(), false)?;
        let n = lease.len;
        if n > 0 {
            if let Data::Read { buf, .. } = &self.slots[lease.slot as usize].data {
                let at = lease.ptr.as_ptr() as usize - buf.as_ptr() as usize;
                out[..n].copy_from_slice(&buf[at..at + n]);
            }
        }
        self.free_read(lease.slot);
        Ok(n)
    }

    /// [`Inner::read_into`] for memory not yet initialized (`read_to_end`'s
    /// spare capacity): returns `n`, and the first `n` bytes of `out` are
    /// then initialized. Large reads go straight from the file.
    pub(crate) fn read_into_uninit(
        &mut self,
        out: &mut [std::mem::MaybeUninit<u8>],
    ) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        if self.mode == Mode::Read {
            if let Some((c, at, avail, _)) = self.read_window() {
                if avail > 0 {
                    let n = avail.min(out.len());
                    if let Data::Read { buf, .. } = &self.slots[c as usize].data {
                        for (o, &b) in out[..n].iter_mut().zip(&buf[at..at + n]) {
                            o.write(b);
                        }
                    }
                    self.pos += n as u64;
                    return Ok(n);
                }
            }
        }
        if out.len() < self.bufsize {
            for o in out.iter_mut() {
                o.write(0);
            }
            // SAFETY: every byte of `out` was just initialized.
            let init = unsafe { &mut *(out as *mut [std::mem::MaybeUninit<u8>] as *mut [u8]) };
            return self.read_into(init);
        }
        self.take_deferred()?;
        if !self.can_read {
            return Err(self.err("reading", errno(libc::EBADF)));
        }
        if self.mode != Mode::Read {
            self.set_mode(Mode::Read)?;
        }
        self.retire_read();
        let n = self
            .src
            .read_uninit(self.pos, out)
            .map_err(|e| named("reading", &self.name, e))?;
        self.pos += n as u64;
        Ok(n)
    }

    /// The next line (with its `\n`, if any) at `pos`, as (slot, offset,
    /// length) in the current buffer; the buffer grows for long lines.
    #[inline]
    pub(crate) fn next_line(&mut self) -> io::Result<Option<(u32, usize, usize)>> {
        // Fast path: the line ends inside the current buffer.
        if self.mode == Mode::Read && !(self.mapped && fault_count() != self.seen_faults) {
            let rc = &self.rc;
            let at = self.pos.wrapping_sub(rc.off);
            if rc.slot != NO_SLOT && at < rc.len as u64 {
                let at = at as usize;
                // SAFETY: `at < len`: the bytes are inside the current read
                // buffer, which the slot keeps alive and unchanged.
                let rest = unsafe { std::slice::from_raw_parts(rc.base.add(at), rc.len - at) };
                if let Some(i) = memchr::memchr(b'\n', rest) {
                    self.pos += (i + 1) as u64;
                    return Ok(Some((rc.slot, at, i + 1)));
                }
            }
        }
        self.next_line_slow()
    }

    #[cold]
    fn next_line_slow(&mut self) -> io::Result<Option<(u32, usize, usize)>> {
        if self.mapped {
            self.check_damage()?;
        }
        // Bytes at `pos` already known to hold no newline.
        let mut searched = 0usize;
        loop {
            if self.mode == Mode::Read {
                if let Some((c, at, avail, eof)) = self.read_window() {
                    let rest =
                        self.read_bytes(c, at + searched.min(avail), avail - searched.min(avail));
                    if let Some(i) = memchr::memchr(b'\n', rest) {
                        let n = searched + i + 1;
                        self.pos += n as u64;
                        return Ok(Some((c, at, n)));
                    }
                    searched = avail;
                    if eof && avail > 0 {
                        self.pos += avail as u64;
                        return Ok(Some((c, at, avail)));
                    }
                }
            }
            self.take_deferred()?;
            if !self.can_read {
                return Err(self.err("reading", errno(libc::EBADF)));
            }
            self.fill(searched + self.bufsize)?;
            let Some((c, at, avail, _)) = self.read_window() else {
                return Ok(None);
            };
            if avail == 0 {
                return Ok(None);
            }
            if avail <= searched {
                // Nothing new arrived: the last line has no newline.
                self.pos += avail as u64;
                return Ok(Some((c, at, avail)));
            }
        }
    }

    /// The bytes of the current read buffer at (slot, offset, length).
    #[inline]
    pub(crate) fn read_bytes(&self, slot: u32, at: usize, len: usize) -> &[u8] {
        if slot == self.rc.slot && slot != NO_SLOT {
            // SAFETY: (slot, at, len) came from this buffer (next_line), which
            // is current and so alive.
            return unsafe { std::slice::from_raw_parts(self.rc.base.add(at), len) };
        }
        self.read_bytes_slow(slot, at, len)
    }

    fn read_bytes_slow(&self, slot: u32, at: usize, len: usize) -> &[u8] {
        match self.slots.get(slot as usize).map(|s| &s.data) {
            Some(Data::Read { buf, .. }) => &buf[at..at + len],
            _ => &[],
        }
    }

    pub(crate) fn read_buf(&self, slot: u32, at: usize, len: usize) -> Buf {
        match self.slots.get(slot as usize).map(|s| &s.data) {
            Some(Data::Read { buf, .. }) => buf.slice(at..at + len),
            _ => Buf::new(),
        }
    }

    // ------------------------------------------------------------ write ---

    /// `salloc` in write mode: a writable region of exactly `len` bytes at
    /// `pos`, the offset advanced past it.
    pub(crate) fn salloc_write(&mut self, len: usize) -> io::Result<WriteLease> {
        self.take_deferred()?;
        if !self.can_write {
            return Err(self.err("writing", errno(libc::EBADF)));
        }
        if self.mode != Mode::Write {
            self.set_mode(Mode::Write)?;
        }
        // Appending: a region starts at the end (a seek may have moved the
        // offset; with buffered bytes pending and no seek, it is already
        // there and the size need not be asked).
        if self.append
            && self.wq.is_empty()
            && (self.wbufs.is_empty() || self.pos != self.committed_end)
        {
            self.pos = self.len()?;
        }
        if end_of(self.pos, len).is_none() {
            return Err(self.err("writing", errno(libc::EFBIG)));
        }
        let slot = self.write_room(len)?;
        let Data::Write(w) = &mut self.slots[slot as usize].data else {
            unreachable!("write slot holds a write buffer")
        };
        let start = w.used;
        w.used += len;
        // (no unsafe) `start + len <= cap` was ensured by write_room.
        let ptr = NonNull::new(w.ptr.as_ptr().wrapping_add(start)).unwrap_or(w.ptr);
        self.slots[slot as usize].leases += 1;
        let offset = self.pos;
        self.pos += len as u64;
        let seq = self.wseq + self.wq.len() as u64;
        self.wq.push_back(WReg {
            slot,
            start,
            end: start + len,
            freed: false,
        });
        Ok(WriteLease {
            ptr,
            len,
            seq,
            offset,
        })
    }

    /// The current write buffer if `len` more bytes fit at `pos`, else a new
    /// one (the old one waits its turn to be written).
    fn write_room(&mut self, len: usize) -> io::Result<u32> {
        if let Some(c) = self.wcur {
            if let Data::Write(w) = &self.slots[c as usize].data {
                if w.off + w.used as u64 == self.pos && len <= w.cap - w.used {
                    return Ok(c);
                }
            }
        }
        let want = len.max(self.bufsize);
        let mut mem = match self.spare_write.take() {
            Some(m) if m.capacity() >= want => m,
            _ => alloc_buf(want).map_err(|e| self.err("writing", e))?,
        };
        self.wcur = None;
        let cap = mem.capacity();
        let ptr =
            NonNull::new(mem.spare_capacity_mut().as_mut_ptr()).unwrap_or(NonNull::dangling());
        let slot = self.new_slot(Data::Write(WriteBuf {
            _mem: mem,
            ptr,
            cap,
            off: self.pos,
            used: 0,
            committed: 0,
            written: 0,
        }));
        self.wbufs.push_back(slot);
        self.wcur = Some(slot);
        // The old buffer may now be complete: write what can be written.
        if let Err(e) = self.drain(false) {
            self.deferred.get_or_insert(e);
        }
        Ok(slot)
    }

    /// `sfree` of a write region: its bytes are committed (once every
    /// region allocated before it is freed too) and may reach the file.
    pub(crate) fn free_write(&mut self, seq: u64) -> io::Result<()> {
        let Some(i) = seq.checked_sub(self.wseq) else {
            return Ok(());
        };
        let Some(r) = self.wq.get_mut(i as usize) else {
            return Ok(());
        };
        r.freed = true;
        let slot = r.slot;
        self.slots[slot as usize].leases -= 1;
        let mut complete_old = false;
        while self.wq.front().is_some_and(|r| r.freed) {
            let Some(r) = self.wq.pop_front() else { break };
            self.wseq += 1;
            if let Data::Write(w) = &mut self.slots[r.slot as usize].data {
                w.committed = w.committed.max(r.end);
                if r.end > r.start {
                    self.committed_end = self.committed_end.max(w.off + r.end as u64);
                }
                if self.wcur != Some(r.slot) && w.committed == w.used {
                    complete_old = true;
                }
            }
        }
        if self.mode == Mode::Read {
            // Freed while reading: write it out now, so reads see it.
            self.drain(true)?;
        } else if complete_old {
            self.drain(false)?;
        }
        Ok(())
    }

    /// Resizes the most recent write region (ASF's `srealloc`): the next
    /// allocation starts right after its new end. Returns its new pointer.
    pub(crate) fn realloc_write(&mut self, seq: u64, new_len: usize) -> io::Result<NonNull<u8>> {
        let last = self.wseq + self.wq.len() as u64;
        let is_last = last > 0 && seq == last - 1 && self.wq.back().is_some_and(|r| !r.freed);
        let r = match self.wq.back() {
            Some(r) if is_last && Some(r.slot) == self.wcur => (r.slot, r.start, r.end),
            _ => {
                return Err(self.err(
                    "resizing a region of",
                    io::Error::new(
                        io::ErrorKind::InvalidInput,
                        "only the most recent region can be resized",
                    ),
                ))
            }
        };
        let (slot, start, end) = r;
        let Data::Write(w) = &mut self.slots[slot as usize].data else {
            unreachable!("write region in a write buffer")
        };
        if w.off + end as u64 != self.pos {
            return Err(self.err(
                "resizing a region of",
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the stream moved since the region was allocated",
                ),
            ));
        }
        if end_of(w.off + start as u64, new_len).is_none() {
            return Err(self.err("resizing a region of", errno(libc::EFBIG)));
        }
        if new_len <= w.cap - start {
            w.used = start + new_len;
            let ptr = NonNull::new(w.ptr.as_ptr().wrapping_add(start)).unwrap_or(w.ptr);
            if let Some(b) = self.wq.back_mut() {
                b.end = start + new_len;
            }
            self.pos = w.off + (start + new_len) as u64;
            return Ok(ptr);
        }
        // Does not fit: move the region to a buffer of its own.
        let file_off = w.off + start as u64;
        let old_ptr = w.ptr.as_ptr().wrapping_add(start);
        let keep = end - start;
        let mut mem = match alloc_buf(new_len.max(self.bufsize)) {
            Ok(m) => m,
            Err(e) => return Err(self.err("resizing a region of", e)),
        };
        let Data::Write(w) = &mut self.slots[slot as usize].data else {
            unreachable!("write region in a write buffer")
        };
        w.used = start;
        let cap = mem.capacity();
        let ptr =
            NonNull::new(mem.spare_capacity_mut().as_mut_ptr()).unwrap_or(NonNull::dangling());
        // SAFETY: copying the region's own bytes (nobody else writes them:
        // the caller holds the region mutably) into a fresh buffer.
        unsafe { std::ptr::copy_nonoverlapping(old_ptr, ptr.as_ptr(), keep) };
        self.slots[slot as usize].leases -= 1;
        let new = self.new_slot(Data::Write(WriteBuf {
            _mem: mem,
            ptr,
            cap,
            off: file_off,
            used: new_len,
            committed: 0,
            written: 0,
        }));
        self.slots[new as usize].leases += 1;
        self.wbufs.push_back(new);
        self.wcur = Some(new);
        if let Some(b) = self.wq.back_mut() {
            b.slot = new;
            b.start = 0;
            b.end = new_len;
        }
        self.pos = file_off + new_len as u64;
        self.drain(false)?;
        Ok(ptr)
    }

    /// The room left in the current write buffer at `pos`, for writing in
    /// place (nothing is reserved: bytes count once [`Inner::commit_space`]
    /// takes them). Empty in append mode and while write regions are
    /// outstanding: then bytes go through `write_from`.
    pub(crate) fn write_space(&mut self) -> io::Result<(NonNull<u8>, usize)> {
        self.take_deferred()?;
        if !self.can_write {
            return Err(self.err("writing", errno(libc::EBADF)));
        }
        if self.mode != Mode::Write {
            self.set_mode(Mode::Write)?;
        }
        if self.append || !self.wq.is_empty() {
            return Ok((NonNull::dangling(), 0));
        }
        if let Some(room) = self.space_now().filter(|r| r.1 > 0) {
            return Ok(room);
        }
        // A full (or no) buffer: start the next one with an empty region.
        let lease = self.salloc_write(1)?;
        self.realloc_write(lease.seq, 0)?;
        self.free_write(lease.seq)?;
        Ok(self.space_now().unwrap_or((NonNull::dangling(), 0)))
    }

    fn space_now(&mut self) -> Option<(NonNull<u8>, usize)> {
        if self.mode != Mode::Write || self.append || !self.wq.is_empty() {
            return None;
        }
        let c = self.wcur?;
        match &self.slots[c as usize].data {
            Data::Write(w) if w.off + w.used as u64 == self.pos => Some((
                NonNull::new(w.ptr.as_ptr().wrapping_add(w.used)).unwrap_or(w.ptr),
                w.cap - w.used,
            )),
            _ => None,
        }
    }

    /// Takes the first `n` bytes of [`Inner::write_space`] as written.
    pub(crate) fn commit_space(&mut self, n: usize) -> io::Result<()> {
        if n == 0 {
            return Ok(());
        }
        match self.space_now() {
            Some((_, room)) if n <= room => {}
            _ => {
                return Err(self.err(
                    "writing",
                    io::Error::new(io::ErrorKind::InvalidInput, "commit beyond the write space"),
                ))
            }
        }
        if let Some(c) = self.wcur {
            if let Data::Write(w) = &mut self.slots[c as usize].data {
                w.used += n;
                w.committed = w.used;
                self.pos += n as u64;
                self.committed_end = self.committed_end.max(self.pos);
            }
        }
        Ok(())
    }

    /// `fill_buf` with at least `min` unread bytes in the current buffer,
    /// unless the stream ends first (then what is left; empty at the end).
    pub(crate) fn fill_buf_min(&mut self, min: usize) -> io::Result<(NonNull<u8>, usize)> {
        let (p, n) = self.fill_buf()?;
        if n >= min || n == 0 {
            return Ok((p, n));
        }
        if self.read_window().is_some_and(|w| w.3) {
            return Ok((p, n)); // the buffer already ends at end of file
        }
        self.fill(min)?;
        match self.read_window() {
            Some((c, at, avail, _)) if avail > 0 => Ok((self.read_ptr(c, at), avail)),
            _ => Ok((NonNull::dangling(), 0)),
        }
    }

    /// `Write::write`: copies `data` into the current write buffer as a
    /// region freed at once; large writes with nothing pending go straight
    /// to the file.
    #[inline]
    pub(crate) fn write_from(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        if self.mode == Mode::Write && self.wq.is_empty() {
            if let Some(c) = self.wcur {
                if let Data::Write(w) = &mut self.slots[c as usize].data {
                    if w.off + w.used as u64 == self.pos
                        && w.used + data.len() <= w.cap
                        && !self.append
                    {
                        // SAFETY: `used..used+len` is inside the buffer and
                        // handed to no region (none is outstanding).
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                data.as_ptr(),
                                w.ptr.as_ptr().add(w.used),
                                data.len(),
                            )
                        };
                        w.used += data.len();
                        w.committed = w.used;
                        self.pos += data.len() as u64;
                        self.committed_end = self.committed_end.max(self.pos);
                        return Ok(data.len());
                    }
                }
            }
        }
        self.write_from_slow(data)
    }

    #[inline(never)]
    fn write_from_slow(&mut self, data: &[u8]) -> io::Result<usize> {
        self.take_deferred()?;
        if !self.can_write {
            return Err(self.err("writing", errno(libc::EBADF)));
        }
        if self.mode != Mode::Write {
            self.set_mode(Mode::Write)?;
        }
        if data.len() >= self.bufsize && self.wq.is_empty() {
            self.flush()?;
            let off = if self.append { None } else { Some(self.pos) };
            let (n, err) = self.src.write(off, data);
            if n > 0 {
                self.wrote(self.pos, n);
                self.pos = if self.append {
                    self.len()?
                } else {
                    self.pos + n as u64
                };
                self.committed_end = self.committed_end.max(self.pos);
            }
            return match err {
                Some(e) if n == 0 => Err(self.err("writing", e)),
                Some(e) => {
                    // Report the bytes that made it; the error comes next.
                    self.deferred = Some(self.err("writing", e));
                    Ok(n)
                }
                None => Ok(n),
            };
        }
        let lease = self.salloc_write(data.len())?;
        // SAFETY: the lease is ours alone: `len` writable bytes.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), lease.ptr.as_ptr(), data.len()) };
        self.free_write(lease.seq)?;
        Ok(data.len())
    }

    /// Writes committed bytes to the file in allocation order. With `all`,
    /// the current buffer's committed prefix too; otherwise only buffers
    /// that are complete.
    fn drain(&mut self, all: bool) -> io::Result<()> {
        while let Some(&s) = self.wbufs.front() {
            let current = self.wcur == Some(s);
            let Data::Write(w) = &mut self.slots[s as usize].data else {
                self.wbufs.pop_front();
                continue;
            };
            if !(all || (!current && w.committed == w.used)) {
                break;
            }
            if w.written < w.committed {
                // SAFETY: bytes `written..committed` belong to freed regions;
                // no region can write them any more.
                let bytes = unsafe {
                    std::slice::from_raw_parts(
                        w.ptr.as_ptr().add(w.written),
                        w.committed - w.written,
                    )
                };
                let at = w.off + w.written as u64;
                let off = if self.append { None } else { Some(at) };
                let (n, err) = self.src.write(off, bytes);
                w.written += n;
                if n > 0 {
                    self.wrote(at, n);
                }
                if let Some(e) = err {
                    return Err(named("writing", &self.name, e));
                }
            }
            let Data::Write(w) = &self.slots[s as usize].data else {
                break;
            };
            if w.written < w.used || current {
                // Regions still outstanding here (later buffers must wait),
                // or the buffer is still being filled.
                break;
            }
            self.wbufs.pop_front();
            if self.slots[s as usize].leases == 0 {
                // Written out and no region left in it: keep its memory
                // for the next write buffer.
                if let Data::Write(w) =
                    std::mem::replace(&mut self.slots[s as usize].data, Data::Empty)
                {
                    self.spare_write = Some(w._mem);
                }
                self.release_slot(s);
            }
        }
        Ok(())
    }

    /// Bytes `[at, at+n)` reached the file: a read buffer holding older
    /// bytes of that range stops being current (regions already handed out
    /// keep the bytes they saw).
    fn wrote(&mut self, at: u64, n: usize) {
        let rc = self.rc;
        if rc.slot != NO_SLOT {
            let end = rc.off + rc.len as u64;
            let overlaps = at < end && at + n as u64 > rc.off;
            // A buffer that ended at end of file no longer does.
            let extends = rc.eof && at + n as u64 > end;
            if overlaps || extends || self.append {
                self.retire_read();
            }
        }
    }

    /// Writes every committed byte, in order.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.take_deferred()?;
        self.drain(true)
    }

    pub(crate) fn sync_all(&mut self) -> io::Result<()> {
        self.flush()?;
        self.src.sync().map_err(|e| self.err("syncing", e))
    }

    /// Regions handed out and not yet freed (write side).
    pub(crate) fn outstanding_writes(&self) -> usize {
        self.wq.iter().filter(|r| !r.freed).count()
    }

    /// Flushes and puts the descriptor's offset at the stream's.
    pub(crate) fn finish(&mut self) -> io::Result<()> {
        if std::mem::replace(&mut self.finished, true) {
            return Ok(());
        }
        let flushed = self.flush();
        let lost = self.outstanding_writes();
        let finished = self
            .src
            .finish(self.pos)
            .map_err(|e| self.err("closing", e));
        flushed?;
        if lost > 0 {
            return Err(self.err(
                "closing",
                io::Error::other(format!(
                    "{lost} write region(s) were never freed; their bytes and all after them were not written"
                )),
            ));
        }
        finished
    }
}
