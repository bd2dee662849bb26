//! Alloc streams: the Alloc Stream Facility's interface on ferry buffers.
//!
//! The library picks where data lives; the application gets a region of the
//! library's buffer instead of copying into its own. In read mode
//! [`salloc`](Stream::salloc) hands out a read-only [`Region`] of file data
//! and advances the stream offset; in write mode
//! [`salloc_mut`](Stream::salloc_mut) hands out a writable [`RegionMut`]
//! whose bytes reach the file when it is freed. Dropping a region is `sfree`.
//!
//! ```text
//!   file   ──pread──►  [ buffer (pool slot, page aligned) ]
//!                        ▲ region ▲ region    ◄── salloc: pointer + length,
//!                        │        │               no copy; lease counted
//!   app   ◄──────────────┘        └── into_buf(): a Buf that outlives it
//! ```
//!
//! `std::io::{Read, BufRead, Write, Seek}` work on the same stream, sharing
//! its one offset and buffers with `salloc`: read 10 bytes with `read`, take
//! a region of 5, `read` again — bytes 0–9, 10–14, 15–….
//!
//! Access: a [`Stream`] has one owner at a time (it is `Send`, not
//! `Sync`). Calls that hand out *leased* regions (`salloc` and friends) take
//! `&self`, so several regions can be outstanding at once; calls that lend
//! the stream's buffer itself without a lease (`fill_buf`, `next_line`,
//! `write_space`) take `&mut self`, so the borrow checker rules out every
//! other call — and every outstanding region — while that borrow lives.
//! Threads share a stream through [`SharedStream`]: per-call locking, regions
//! any thread may hold, and [`SharedStream::lock`] for a run of calls (ASF's
//! `LockAsfStream`), whose guard *is* a `&mut Stream`.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use std::io::Read;
//! let mut s = ferry::Stream::from_bytes(b"0123456789ABCDEFGHIJ".to_vec());
//! let mut ten = [0u8; 10];
//! s.read_exact(&mut ten)?;
//! let five = s.salloc(5)?;
//! assert_eq!(&five[..], b"ABCDE");
//! drop(five);
//! let mut rest = String::new();
//! s.read_to_string(&mut rest)?;
//! assert_eq!(rest, "FGHIJ");
//! # Ok(()) }
//! ```

mod backend;
mod blocks;
mod engine;
mod inplace;
mod io;
mod open;
mod options;
mod region;
mod shared;
#[cfg(test)]
mod tests;
mod upgraded;

pub use crate::error::{os_error, StreamError};
pub use backend::Backend;
pub use blocks::{
    for_each_block, for_each_block_peek, for_each_piece, split_after_line_end, Ends, Piece,
};
pub use engine::Mode;
pub use inplace::Lines;
pub use options::OpenOptions;
pub use region::{RawRegion, RawRegionMut, Region, RegionMut};
pub use shared::{SharedRegion, SharedRegionMut, SharedStream, StreamGuard};

use engine::Inner;
use std::cell::UnsafeCell;
use std::io::SeekFrom;
use std::marker::PhantomData;

/// An alloc stream over a file, descriptor or memory. See the
/// [module docs](self).
///
/// `Stream` is `Send` but not `Sync`: share one between threads with
/// [`SharedStream`]. Nothing handed out through `&self` can be invalidated by
/// another call: the borrow checker rejects a nested call while an unleased
/// borrow of the buffer lives.
///
/// ```compile_fail
/// # fn main() -> std::io::Result<()> {
/// let mut s = ferry::Stream::from_bytes(vec![1u8; 1 << 20]);
/// let b = s.fill_buf_min(4096)?;        // borrows `s` mutably
/// drop(s.salloc(usize::MAX / 2));       // error[E0502]: `s` is borrowed
/// println!("{:?}", &b[..8]);
/// # Ok(()) }
/// ```
pub struct Stream {
    inner: UnsafeCell<Inner>,
    /// Not `Sync`: `&Stream` calls touch the state without a lock.
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

// SAFETY: the state (buffers, raw pointers into them, the descriptor) is
// owned by the stream alone and moves with it; regions borrow the stream, so
// none is left behind on the old thread.
unsafe impl Send for Stream {}

/// What a mode-variable allocation ([`Stream::salloc_mode`]) gives.
#[derive(Debug)]
pub enum Alloc<'a> {
    /// A read region.
    Read(Region<'a>),
    /// A write region.
    Write(RegionMut<'a>),
}

impl Stream {
    pub(crate) fn from_inner(inner: Inner) -> Stream {
        Stream {
            inner: UnsafeCell::new(inner),
            _not_sync: PhantomData,
        }
    }

    /// The stream's descriptor (`None` for memory streams). It stays the
    /// stream's: closing it behind the stream's back makes its calls fail.
    ///
    /// ```
    /// let s = ferry::Stream::memory();
    /// assert_eq!(s.raw_fd(), None);
    /// ```
    pub fn raw_fd(&self) -> Option<i32> {
        self.with_inner(|i| backend::Module::raw_fd(&i.io))
    }

    /// [`raw_fd`](Self::raw_fd), borrowed for as long as the stream is.
    pub(crate) fn borrowed_fd(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        // SAFETY: the descriptor is the stream's own: it stays open until
        // the stream is dropped or closed, which the borrow of `self`
        // rules out for the returned lifetime.
        self.raw_fd()
            .map(|fd| unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) })
    }

    /// Asks the kernel to make the capacity of the pipe this stream reads
    /// or writes at least `bytes` (Roadrunner's channel parameter: each
    /// write or splice then moves up to that much instead of 64 KiB).
    /// Returns the capacity set. The pipe is shared with the process at its
    /// other end, so ferry never does this on its own. `InvalidInput` if the
    /// stream is not a pipe.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let (_r, w) = std::io::pipe()?;
    /// let s = ferry::Stream::from_fd(w.into())?;
    /// assert!(s.set_pipe_size(1 << 20)? >= 1 << 20);
    /// assert!(ferry::Stream::memory().set_pipe_size(1 << 20).is_err());
    /// # Ok(()) }
    /// ```
    pub fn set_pipe_size(&self, bytes: usize) -> std::io::Result<usize> {
        self.with_inner(|i| i.set_pipe_size(bytes))
    }

    /// From now on the stream's writes raise SIGPIPE (a pipe or socket
    /// whose reader has gone) and SIGXFSZ (past `RLIMIT_FSIZE`) as
    /// `write(2)` does, instead of only failing with EPIPE or EFBIG: C
    /// stdio's behaviour, where `prog | head -1` ends `prog` by SIGPIPE
    /// unless it ignores or handles the signal (ferry-c's FILEs).
    #[doc(hidden)]
    pub fn raise_write_signals(&self) {
        self.with_inner(|i| i.raise_signals())
    }

    /// Runs `f` on the state.
    ///
    /// The one rule that keeps this sound: `f` never calls back into the
    /// stream or into user code, so two `&mut Inner` never coexist. No other
    /// thread can be here (`Stream` is not `Sync`). And nothing a `&self`
    /// method hands out points into memory the state may free or change:
    /// regions hold leases; unleased borrows of the buffer come only from
    /// `&mut self` methods, which the borrow checker keeps exclusive.
    #[inline(always)]
    pub(crate) fn with_inner<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        // SAFETY: see above: single thread, not re-entered, no outstanding
        // reference into `Inner` itself (leases point into heap buffers the
        // state keeps alive, never into `Inner`).
        f(unsafe { &mut *self.inner.get() })
    }

    #[inline]
    fn region(&self, l: engine::ReadLease) -> Region<'_> {
        Region {
            stream: self,
            ptr: l.ptr,
            len: l.len,
            slot: l.slot,
            offset: l.offset,
        }
    }

    fn region_mut(&self, l: engine::WriteLease) -> RegionMut<'_> {
        RegionMut {
            stream: self,
            ptr: l.ptr,
            len: l.len,
            seq: l.seq,
            offset: l.offset,
        }
    }

    /// `salloc` in read mode: a read-only region of up to `len` bytes at the
    /// stream offset (shorter only at end of file; empty at end of file);
    /// the offset advances by its length. Switches the stream to read mode.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let s = ferry::Stream::from_bytes(b"abcdef".to_vec());
    /// let a = s.salloc(4)?;
    /// let b = s.salloc(4)?;          // both outstanding at once
    /// assert_eq!((&a[..], &b[..]), (&b"abcd"[..], &b"ef"[..]));
    /// assert!(s.salloc(1)?.is_empty());
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn salloc(&self, len: usize) -> std::io::Result<Region<'_>> {
        let l = self.with_inner(|i| i.salloc_read(len))?;
        Ok(self.region(l))
    }

    /// `salloc` in write mode: a writable region of exactly `len` bytes at
    /// the stream offset; the offset advances by `len`. Switches the stream
    /// to write mode. The file grows when the region is freed.
    pub fn salloc_mut(&self, len: usize) -> std::io::Result<RegionMut<'_>> {
        let l = self.with_inner(|i| i.salloc_write(len))?;
        Ok(self.region_mut(l))
    }

    /// Moves the offset and allocates a read region there, in one call (no
    /// other thread of a [`SharedStream`] can slip in between). `ESPIPE` on pipes and sockets.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::SeekFrom;
    /// let s = ferry::Stream::from_bytes(b"0123456789".to_vec());
    /// assert_eq!(&s.salloc_at(3, SeekFrom::End(-3))?[..], b"789");
    /// # Ok(()) }
    /// ```
    pub fn salloc_at(&self, len: usize, at: SeekFrom) -> std::io::Result<Region<'_>> {
        let l = self.with_inner(|i| {
            i.seek(at)?;
            i.salloc_read(len)
        })?;
        Ok(self.region(l))
    }

    /// Moves the offset and allocates a write region there, atomically.
    pub fn salloc_mut_at(&self, len: usize, at: SeekFrom) -> std::io::Result<RegionMut<'_>> {
        let l = self.with_inner(|i| {
            i.seek(at)?;
            i.salloc_write(len)
        })?;
        Ok(self.region_mut(l))
    }

    /// The mode-variable allocation (ASF's `Salloc`): switches to `mode` if
    /// needed and allocates in it.
    pub fn salloc_mode(&self, mode: Mode, len: usize) -> std::io::Result<Alloc<'_>> {
        Ok(match mode {
            Mode::Read => Alloc::Read(self.salloc(len)?),
            Mode::Write => Alloc::Write(self.salloc_mut(len)?),
        })
    }

    /// Switches the stream's mode (`set_stream_mode`). Switching from write
    /// to read writes out every committed byte first, so reads see them.
    pub fn set_mode(&self, mode: Mode) -> std::io::Result<()> {
        self.with_inner(|i| i.set_mode(mode))
    }

    /// The stream's mode.
    pub fn mode(&self) -> Mode {
        self.with_inner(|i| i.mode)
    }

    /// Writes every committed byte to the file, in allocation order. Over a
    /// descriptor the caller gave ([`Stream::from_fd`]), the descriptor's
    /// offset is then the stream's position (POSIX 2.5.1): another handle on
    /// the same open file description (a `dup`, a child process) goes on
    /// from there, and the stream's next use goes on from wherever that
    /// handle left the offset.
    pub fn flush(&self) -> std::io::Result<()> {
        self.with_inner(|i| i.flush())
    }

    /// After a failed [`Stream::flush`] (or write): drops the bytes it
    /// could not write, as C stdio does (glibc empties its buffer when a
    /// write fails; the failure was reported once, by that call), and puts
    /// the offset where writing stopped. Returns the bytes dropped (0 while
    /// write regions are outstanding: their bytes are kept).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// let mut s = ferry::Stream::memory();
    /// s.write_all(b"kept")?;
    /// assert_eq!(s.discard_unwritten(), 4);
    /// assert_eq!(s.position(), 0);
    /// assert_eq!(s.into_vec()?, b"");
    /// # Ok(()) }
    /// ```
    pub fn discard_unwritten(&self) -> u64 {
        self.with_inner(|i| i.discard_unwritten())
    }

    /// Bytes written to the stream that have not reached the file yet:
    /// what [`Stream::flush`] would write now (C's `__fpending`). Bytes in
    /// a write region still held count once it is freed.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Write;
    /// let mut s = ferry::Stream::memory();
    /// assert_eq!(s.pending_write(), 0);
    /// s.write_all(b"abc")?;
    /// assert_eq!(s.pending_write(), 3);
    /// s.flush()?;
    /// assert_eq!(s.pending_write(), 0);
    /// # Ok(()) }
    /// ```
    pub fn pending_write(&self) -> u64 {
        self.with_inner(|i| i.pending_write())
    }

    /// Bytes read ahead of the stream offset and held in the current read
    /// buffer, which the next reads take without any I/O (0 while the
    /// stream is writing). `BufRead::consume` of them drops them, and the
    /// offset goes on after them (C's `__fpurge` of an input stream).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::{BufRead, Read};
    /// let mut s = ferry::Stream::from_bytes(b"0123456789".to_vec());
    /// assert_eq!(s.buffered_read(), 0);
    /// let mut two = [0u8; 2];
    /// s.read_exact(&mut two)?;
    /// assert_eq!(s.buffered_read(), 8);
    /// s.consume(s.buffered_read());
    /// assert_eq!(s.position(), 10);
    /// # Ok(()) }
    /// ```
    pub fn buffered_read(&self) -> usize {
        self.with_inner(|i| i.buffered_read())
    }

    /// The size of the buffers the stream reads and writes through (the
    /// default is 128 KiB; a single large request may use a larger one).
    ///
    /// ```
    /// assert_eq!(ferry::Stream::memory().buffer_size(), 128 << 10);
    /// ```
    pub fn buffer_size(&self) -> usize {
        self.with_inner(|i| i.bufsize())
    }

    /// Reports (once) an error met while writing out a full buffer in
    /// the background (when the next one started); `Ok` if none. C stdio
    /// reports such a failure from the call that filled the buffer.
    #[doc(hidden)]
    pub fn take_error(&self) -> std::io::Result<()> {
        self.with_inner(|i| i.take_deferred())
    }

    /// Bytes written to the stream that have not reached the file yet
    /// (C's `ftell` on a sequential stream over a regular file: the
    /// descriptor's offset plus these).
    #[doc(hidden)]
    pub fn unwritten(&self) -> u64 {
        self.with_inner(|i| i.unwritten())
    }

    /// Flushes, then `fsync`s the file.
    pub fn sync_all(&self) -> std::io::Result<()> {
        self.with_inner(|i| i.sync_all())
    }

    /// Moves the stream offset (`ESPIPE` on pipes and sockets, except for
    /// asking where it is). Over a descriptor the caller gave, writes out
    /// what is buffered and puts the descriptor's offset there too, as
    /// [`Stream::flush`].
    pub fn seek_to(&self, to: SeekFrom) -> std::io::Result<u64> {
        self.with_inner(|i| i.seek_hand_over(to))
    }

    /// Moves the stream offset as [`Stream::seek_to`] does, but writes
    /// nothing out and leaves the descriptor's offset alone: for a caller
    /// that moves it back before any other handle can look (an emulated
    /// `pread`).
    #[doc(hidden)]
    pub fn seek_within(&self, to: SeekFrom) -> std::io::Result<u64> {
        self.with_inner(|i| i.seek(to))
    }

    /// The stream offset (after a [`Stream::flush`] over a descriptor the
    /// caller gave: the descriptor's offset, which another handle may have
    /// moved; the stream's own if it cannot be asked).
    pub fn position(&self) -> u64 {
        self.with_inner(|i| {
            let _ = i.position();
            i.pos
        })
    }

    /// The stream's length as the application sees it: the file's, or the
    /// end of the furthest freed write region if further.
    pub fn len(&self) -> std::io::Result<u64> {
        self.with_inner(|i| i.len())
    }

    /// True if the stream's length is 0.
    pub fn is_empty(&self) -> std::io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// True if the stream reads by mapping the file (the mapped backend).
    pub fn is_mapped(&self) -> bool {
        self.with_inner(|i| i.is_mapped())
    }

    /// True if the stream's bytes go through an ipc channel to or from
    /// another ferry program (a pipe upgraded: [`Stream::pipe_writer`],
    /// [`Stream::pipe_reader`]). A reader's stream says so from its first
    /// read, once the writer took the channel, until the channel ends.
    pub fn on_channel(&self) -> bool {
        self.with_inner(|i| i.on_channel())
    }

    /// Tells the writer of an upgraded pipe that this reader will read no
    /// more from the channel (at exit, say): the writer goes on through
    /// the pipe at once, for whoever reads it next, as a pipe's writer
    /// goes on after a reader that left with bytes in its buffer
    /// (`{ head -n 1; cat; }`). What the channel held unread is dropped,
    /// as such a reader's buffer is. Later reads take the pipe. Nothing
    /// happens on any other stream.
    ///
    /// ```
    /// let (r, _w) = std::io::pipe().unwrap();
    /// // SAFETY: no program writes this pipe.
    /// let mut s = unsafe { ferry::Stream::pipe_reader(r.into(), "standard input") }.unwrap();
    /// s.leave_channel();
    /// assert!(!s.on_channel());
    /// ```
    pub fn leave_channel(&mut self) {
        self.inner.get_mut().leave_channel();
    }

    /// The stream's name in error messages: its path, `fd N`, `<memory>`.
    pub fn name(&self) -> String {
        self.with_inner(|i| i.name.to_string())
    }

    /// Flushes and closes, reporting every deferred error (dropping a
    /// stream flushes too, but cannot report).
    pub fn close(mut self) -> std::io::Result<()> {
        let r = self.inner.get_mut().finish();
        // Nothing left to flush; closing the descriptor cannot lose data we
        // still hold.
        r
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        let _ = self.inner.get_mut().finish();
    }
}

impl std::fmt::Debug for Stream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stream")
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}
