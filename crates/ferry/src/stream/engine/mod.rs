//! The stream engine: the per-stream state and every operation on it
//! (ASF's CIOS structure and its stream-specific functions), over one
//! stream module (`super::backend`) that moves the bytes. Callers have
//! `&mut` access (through `Stream::with_inner`).
//!
//! * this file: the state, slots and leases, modes, seeking, errors;
//! * `read.rs`: the read path (current buffer, `salloc` in read mode,
//!   `fill_buf`, lines, copies into a caller's buffer);
//! * `write.rs`: the write queue (regions in allocation order, write
//!   buffers, in-place space, draining to the file, closing).
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

use super::backend::{Io, Module};
use crate::error::{errno, named};
use crate::{Buf, BufMut, Pool};
use std::collections::VecDeque;
use std::io::{self, SeekFrom};
use std::ptr::NonNull;
use std::sync::Arc;

/// A stream's direction: every stream is in one of the two at a time (ASF's
/// `set_stream_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `salloc` hands out read-only regions of file data.
    Read,
    /// `salloc` hands out writable regions that reach the file when freed.
    Write,
}

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
    /// Regions pointing into this buffer. 64 bits: regions can be leaked
    /// (`mem::forget`, `into_raw`) without being returned, and a count that
    /// wrapped would free a buffer live regions point into; 2^64 `salloc`s
    /// cannot happen in a process's life.
    leases: u64,
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
    /// Leases taken while current; added to the slot's count on retire
    /// (64 bits, as `Slot::leases`).
    leases: u64,
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
    pub(crate) io: Io,
    pub(crate) name: Arc<str>,
    pub(crate) can_read: bool,
    pub(crate) can_write: bool,
    pub(crate) append: bool,
    pub(crate) mode: Mode,
    /// The stream offset.
    pub(crate) pos: u64,
    bufsize: usize,
    /// The file's size when last asked (`fstat`, or at open): a large read
    /// request is cut to what the file held then plus a byte, and the size
    /// is asked again only once reading has reached it (it may be stale;
    /// it only sizes buffers: a file that grew fills the cut buffer whole,
    /// and the next read, past the old size, asks again).
    pub(crate) size_seen: u64,
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
    /// The descriptor's offset is handed over (`handover.rs`): the next
    /// operation goes on from it.
    lent: bool,
    /// The SIGBUS guard's fault count when this stream last looked (mapped
    /// module).
    seen_faults: u64,
}

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

mod handover;
mod read;
mod write;

impl Inner {
    pub(crate) fn new(
        io: Io,
        name: Arc<str>,
        can_read: bool,
        can_write: bool,
        append: bool,
    ) -> Inner {
        let seen_faults = if io.is_mapped() { fault_count() } else { 0 };
        Inner {
            io,
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
            size_seen: 0,
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
            lent: false,
            seen_faults,
        }
    }

    /// True if reads map the file.
    pub(crate) fn is_mapped(&self) -> bool {
        self.io.is_mapped()
    }

    /// True if the bytes go through an ipc channel (an upgraded pipe).
    pub(crate) fn on_channel(&self) -> bool {
        self.io.on_channel()
    }

    /// A reader on an ipc channel reads no more: the writer is told.
    pub(crate) fn leave_channel(&mut self) {
        self.io.leave_channel();
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
            Data::Read { buf, .. } => !buf.known_intact(),
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

    pub(crate) fn set_pipe_size(&mut self, bytes: usize) -> io::Result<usize> {
        self.io
            .set_pipe_size(bytes)
            .map_err(|e| self.err("resizing", e))
    }

    pub(crate) fn bufsize(&self) -> usize {
        self.bufsize
    }

    /// Writes raise SIGPIPE and SIGXFSZ from now on (`Module::raise_signals`).
    pub(crate) fn raise_signals(&mut self) {
        self.io.raise_signals()
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
            self.write_out()?;
        }
        self.mode = mode;
        Ok(())
    }

    // ------------------------------------------------------------- seek ---

    pub(crate) fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        if !self.io.positional() {
            return match to {
                SeekFrom::Current(0) => Ok(self.pos),
                _ => Err(self.err("seeking", errno(libc::ESPIPE))),
            };
        }
        if let SeekFrom::Current(_) = to {
            // Relative to where another handle may have left the
            // descriptor's offset (`handover.rs`).
            self.resume()?;
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
                // The offset is the stream's again.
                self.lent = false;
                Ok(p)
            }
            None => Err(self.err("seeking", errno(libc::EINVAL))),
        }
    }

    /// The stream's length as the application sees it: the file's, or the
    /// end of the furthest freed write region if that is further.
    pub(crate) fn len(&self) -> io::Result<u64> {
        let size = self
            .io
            .size()
            .map_err(|e| self.err("reading the size of", e))?;
        Ok(size.max(self.committed_end))
    }
}
