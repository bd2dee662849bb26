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
//! Concurrency: `Stream` is `Send + Sync`. Threads may hold regions of one
//! stream at once; the lock is held only while bookkeeping changes, never
//! while region bytes are read or written. [`Stream::lock`] holds the lock
//! across several operations (ASF's `LockAsfStream` and `u_salloc`…), and
//! [`Stream::get_mut`] gives the same operations with no lock at all,
//! through `&mut` (ASF's single-thread extension). The `Read`/`Write`/…
//! impls on `Stream` itself take `&mut self` and so take no lock either.
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

mod error;
mod guard;
mod io;
mod lock;
mod open;
mod options;
mod region;
mod source;
mod state;
#[cfg(test)]
mod tests;

pub use error::{describe, os_error, StreamError};
pub use guard::StreamGuard;
pub use io::Lines;
pub use options::{Backend, Mode, OpenOptions};
pub use region::{RawRegion, RawRegionMut, Region, RegionMut};

use lock::StreamLock;
use state::Inner;
use std::cell::UnsafeCell;
use std::io::SeekFrom;
use std::marker::PhantomData;

/// An alloc stream over a file, descriptor or memory. See the
/// [module docs](self).
pub struct Stream {
    lock: StreamLock,
    inner: UnsafeCell<Inner>,
}

// SAFETY: the state is only touched under the stream lock, through `&mut
// Stream`, or through a region or guard that stands for one of those (see
// `with_inner`); everything it owns is `Send`.
unsafe impl Send for Stream {}
// SAFETY: as above.
unsafe impl Sync for Stream {}

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
            lock: StreamLock::new(),
            inner: UnsafeCell::new(inner),
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
        self.with_inner(false, |i| i.src.raw_fd())
    }

    /// Runs `f` on the state: under the lock, or without it when the caller
    /// stands for exclusive access (`&mut Stream`, a guard, or a region made
    /// through one of those).
    #[inline(always)]
    pub(crate) fn with_inner<R>(&self, exclusive: bool, f: impl FnOnce(&mut Inner) -> R) -> R {
        if exclusive {
            // SAFETY: the caller holds `&mut Stream` or the lock (through a
            // guard, which is !Send), so no other access runs now; `f` does
            // not re-enter.
            return f(unsafe { &mut *self.inner.get() });
        }
        struct Unlock<'a>(&'a StreamLock, lock::Held);
        impl Drop for Unlock<'_> {
            #[inline(always)]
            fn drop(&mut self) {
                self.0.unlock(self.1);
            }
        }
        let _held = Unlock(&self.lock, self.lock.lock());
        // SAFETY: the lock is held (re-entrantly at worst by a guard on this
        // same thread, which holds no reference into the state between its
        // calls); `f` does not re-enter.
        f(unsafe { &mut *self.inner.get() })
    }

    #[inline]
    fn region(&self, exclusive: bool, l: state::ReadLease) -> Region<'_> {
        Region {
            stream: self,
            ptr: l.ptr,
            len: l.len,
            slot: l.slot,
            offset: l.offset,
            exclusive,
            _not_send: PhantomData,
        }
    }

    fn region_mut(&self, exclusive: bool, l: state::WriteLease) -> RegionMut<'_> {
        RegionMut {
            stream: self,
            ptr: l.ptr,
            len: l.len,
            seq: l.seq,
            offset: l.offset,
            exclusive,
            _not_send: PhantomData,
        }
    }

    #[inline]
    pub(crate) fn do_salloc(&self, x: bool, len: usize) -> std::io::Result<Region<'_>> {
        let l = self.with_inner(x, |i| i.salloc_read(len))?;
        Ok(self.region(x, l))
    }

    pub(crate) fn do_salloc_mut(&self, x: bool, len: usize) -> std::io::Result<RegionMut<'_>> {
        let l = self.with_inner(x, |i| i.salloc_write(len))?;
        Ok(self.region_mut(x, l))
    }

    pub(crate) fn do_salloc_at(
        &self,
        x: bool,
        len: usize,
        at: SeekFrom,
    ) -> std::io::Result<Region<'_>> {
        let l = self.with_inner(x, |i| {
            i.seek(at)?;
            i.salloc_read(len)
        })?;
        Ok(self.region(x, l))
    }

    pub(crate) fn do_salloc_mut_at(
        &self,
        x: bool,
        len: usize,
        at: SeekFrom,
    ) -> std::io::Result<RegionMut<'_>> {
        let l = self.with_inner(x, |i| {
            i.seek(at)?;
            i.salloc_write(len)
        })?;
        Ok(self.region_mut(x, l))
    }

    pub(crate) fn do_salloc_mode(
        &self,
        x: bool,
        mode: Mode,
        len: usize,
    ) -> std::io::Result<Alloc<'_>> {
        Ok(match mode {
            Mode::Read => Alloc::Read(self.do_salloc(x, len)?),
            Mode::Write => Alloc::Write(self.do_salloc_mut(x, len)?),
        })
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
        self.do_salloc(false, len)
    }

    /// `salloc` in write mode: a writable region of exactly `len` bytes at
    /// the stream offset; the offset advances by `len`. Switches the stream
    /// to write mode. The file grows when the region is freed.
    pub fn salloc_mut(&self, len: usize) -> std::io::Result<RegionMut<'_>> {
        self.do_salloc_mut(false, len)
    }

    /// Moves the offset and allocates a read region there, atomically (no
    /// other thread can slip in between). `ESPIPE` on pipes and sockets.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::SeekFrom;
    /// let s = ferry::Stream::from_bytes(b"0123456789".to_vec());
    /// assert_eq!(&s.salloc_at(3, SeekFrom::End(-3))?[..], b"789");
    /// # Ok(()) }
    /// ```
    pub fn salloc_at(&self, len: usize, at: SeekFrom) -> std::io::Result<Region<'_>> {
        self.do_salloc_at(false, len, at)
    }

    /// Moves the offset and allocates a write region there, atomically.
    pub fn salloc_mut_at(&self, len: usize, at: SeekFrom) -> std::io::Result<RegionMut<'_>> {
        self.do_salloc_mut_at(false, len, at)
    }

    /// The mode-variable allocation (ASF's `Salloc`): switches to `mode` if
    /// needed and allocates in it.
    pub fn salloc_mode(&self, mode: Mode, len: usize) -> std::io::Result<Alloc<'_>> {
        self.do_salloc_mode(false, mode, len)
    }

    /// Switches the stream's mode (`set_stream_mode`). Switching from write
    /// to read writes out every committed byte first, so reads see them.
    pub fn set_mode(&self, mode: Mode) -> std::io::Result<()> {
        self.with_inner(false, |i| i.set_mode(mode))
    }

    /// The stream's mode.
    pub fn mode(&self) -> Mode {
        self.with_inner(false, |i| i.mode)
    }

    /// Writes every committed byte to the file, in allocation order.
    pub fn flush(&self) -> std::io::Result<()> {
        self.with_inner(false, |i| i.flush())
    }

    /// Flushes, then `fsync`s the file.
    pub fn sync_all(&self) -> std::io::Result<()> {
        self.with_inner(false, |i| i.sync_all())
    }

    /// Moves the stream offset (`ESPIPE` on pipes and sockets, except for
    /// asking where it is).
    pub fn seek_to(&self, to: SeekFrom) -> std::io::Result<u64> {
        self.with_inner(false, |i| i.seek(to))
    }

    /// The stream offset.
    pub fn position(&self) -> u64 {
        self.with_inner(false, |i| i.pos)
    }

    /// The stream's length as the application sees it: the file's, or the
    /// end of the furthest freed write region if further.
    pub fn len(&self) -> std::io::Result<u64> {
        self.with_inner(false, |i| i.len())
    }

    /// True if the stream's length is 0.
    pub fn is_empty(&self) -> std::io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// True if the stream reads by mapping the file (the mapped backend).
    pub fn is_mapped(&self) -> bool {
        self.with_inner(false, |i| i.is_mapped())
    }

    /// The stream's name in error messages: its path, `fd N`, `<memory>`.
    pub fn name(&self) -> String {
        self.with_inner(false, |i| i.name.to_string())
    }

    /// Holds the stream lock until the guard is dropped; the guard has the
    /// same operations, which then take no lock (ASF's `LockAsfStream` and
    /// `u_salloc`…).
    pub fn lock(&self) -> StreamGuard<'_> {
        StreamGuard::locked(self)
    }

    /// The stream's operations with no lock at all: `&mut` already rules
    /// out every other user.
    pub fn get_mut(&mut self) -> StreamGuard<'_> {
        StreamGuard::exclusive(self)
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
