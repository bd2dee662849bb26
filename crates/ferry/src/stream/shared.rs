//! `SharedStream`: one stream, many threads.
//!
//! ```text
//!   thread A ─ salloc ─┐                      ┌─► SharedRegion (a Buf: no lock to free)
//!   thread B ─ salloc_mut ─► lock ─► Stream ──┴─► SharedRegionMut (freed under the lock,
//!   thread C ─ lock() ───► StreamGuard (the stream's calls)  in allocation order)
//! ```
//!
//! The lock parks (it never spins while its holder does `pread`/`pwrite`)
//! and is not re-entrant: while a [`StreamGuard`] lives, the stream is that
//! guard's alone, and nothing else — not even a call on the same
//! thread — touches the stream's state. A call through `&SharedStream` on
//! the guard's own thread fails with `WouldBlock` instead of deadlocking; a
//! write region dropped there is freed when the guard lets go.

use super::{Mode, RawRegionMut, Stream};
use crate::sys::thread_id;
use crate::Buf;
use parking_lot::lock_api::RawMutex as _;
use std::cell::UnsafeCell;
use std::fmt;
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A [`Stream`] shared between threads. Each call locks the stream for its
/// bookkeeping only; regions are used without the lock, on any thread.
/// [`lock`](SharedStream::lock) holds the lock for a run of calls (ASF's
/// `LockAsfStream`) and gives the stream's calls meanwhile.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::{SharedStream, Stream};
/// let s = SharedStream::new(Stream::from_bytes((0..=255u8).collect()));
/// let (a, b) = std::thread::scope(|sc| {
///     let a = sc.spawn(|| s.salloc(100).map(|r| r.offset()));
///     let b = sc.spawn(|| s.salloc(100).map(|r| r.offset()));
///     (a.join().unwrap(), b.join().unwrap())
/// });
/// let mut offsets = [a?, b?];
/// offsets.sort();
/// assert_eq!(offsets, [0, 100]);          // the two regions tile the stream
/// # Ok(()) }
/// ```
///
/// A guard's borrowed bytes cannot be invalidated from its own thread: the
/// nested call fails instead.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::{SharedStream, Stream};
/// let s = SharedStream::new(Stream::from_bytes(vec![7u8; 1 << 20]));
/// let mut g = s.lock();
/// let b = g.fill_buf_min(4096)?;
/// let e = s.salloc(usize::MAX / 2).unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::WouldBlock);
/// assert_eq!(&b[..8], &[7u8; 8]);
/// # Ok(()) }
/// ```
pub struct SharedStream {
    mutex: parking_lot::RawMutex,
    /// The holder's thread id, 0 when free. Only the holder stores its own
    /// id, so a thread that reads its own id here holds the lock.
    owner: AtomicUsize,
    stream: UnsafeCell<Stream>,
    /// Write regions dropped on the holder's thread while its guard lives,
    /// freed when the guard next hands out the stream or lets go. Touched
    /// only by the lock's holder.
    pending: UnsafeCell<Vec<RawRegionMut>>,
}

// SAFETY: the stream moves with the value (`Stream: Send`); the pending raw
// regions are plain pointers into buffers that stream owns.
unsafe impl Send for SharedStream {}
// SAFETY: `stream` and `pending` are touched only by the thread that holds
// `mutex` (see `Held`, `StreamGuard` and `free_write`); `owner` is atomic.
unsafe impl Sync for SharedStream {}

/// The lock, held for one call.
struct Held<'a>(&'a SharedStream);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

fn relocked() -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        "the stream is locked by a StreamGuard on this thread",
    )
}

impl SharedStream {
    /// Shares `stream` between threads.
    pub fn new(stream: Stream) -> SharedStream {
        SharedStream {
            mutex: parking_lot::RawMutex::INIT,
            owner: AtomicUsize::new(0),
            stream: UnsafeCell::new(stream),
            pending: UnsafeCell::new(Vec::new()),
        }
    }

    /// True if the calling thread holds the lock (through a guard).
    fn held_here(&self) -> bool {
        self.owner.load(Ordering::Relaxed) == thread_id()
    }

    fn acquire(&self) -> io::Result<Held<'_>> {
        if self.held_here() {
            return Err(relocked());
        }
        self.mutex.lock();
        self.owner.store(thread_id(), Ordering::Relaxed);
        Ok(Held(self))
    }

    /// Frees what the holder's thread dropped meanwhile, then unlocks.
    fn release(&self) {
        self.settle();
        self.owner.store(0, Ordering::Relaxed);
        // SAFETY: this thread locked the mutex (`acquire` or `lock`).
        unsafe { self.mutex.unlock() };
    }

    /// Frees the write regions dropped while this thread held the lock.
    /// Called only by the holder, with no borrow of the stream live.
    fn settle(&self) {
        // SAFETY: only the lock's holder touches `pending`, and it holds no
        // other reference into it now.
        let pending = unsafe { &mut *self.pending.get() };
        if pending.is_empty() {
            return;
        }
        // SAFETY: the holder, with no `&mut Stream` of its own live.
        let s = unsafe { &*self.stream.get() };
        for raw in pending.drain(..) {
            // SAFETY: `raw` came from `into_raw` on this stream's region and
            // is rebuilt once (it left the pending list).
            drop(unsafe { s.region_mut_from_raw(raw) });
        }
    }

    /// Runs `f` on the stream under the lock.
    fn with<R>(&self, f: impl FnOnce(&mut Stream) -> io::Result<R>) -> io::Result<R> {
        let _held = self.acquire()?;
        // SAFETY: the lock is held by this call alone (not re-entrant), so
        // no other reference to the stream exists until `_held` drops.
        f(unsafe { &mut *self.stream.get() })
    }

    /// Holds the lock until the guard is dropped; the guard offers
    /// the stream's calls meanwhile (ASF's `LockAsfStream` and `u_salloc`…).
    ///
    /// # Panics
    /// If this thread already holds the lock (locking again would deadlock).
    /// [`try_lock`](SharedStream::try_lock) does not panic.
    pub fn lock(&self) -> StreamGuard<'_> {
        assert!(
            !self.held_here(),
            "SharedStream::lock: this thread already holds the lock"
        );
        self.mutex.lock();
        self.owner.store(thread_id(), Ordering::Relaxed);
        StreamGuard {
            shared: self,
            _not_send: PhantomData,
        }
    }

    /// The guard if the lock is free now, else `None` (also when this
    /// thread holds it).
    pub fn try_lock(&self) -> Option<StreamGuard<'_>> {
        if self.held_here() || !self.mutex.try_lock() {
            return None;
        }
        self.owner.store(thread_id(), Ordering::Relaxed);
        Some(StreamGuard {
            shared: self,
            _not_send: PhantomData,
        })
    }

    /// The stream, with no lock: `&mut self` rules out every other user.
    pub fn get_mut(&mut self) -> &mut Stream {
        self.stream.get_mut()
    }

    /// The stream back (every region borrowed this value, so none is left).
    pub fn into_inner(self) -> Stream {
        self.stream.into_inner()
    }

    /// [`Stream::salloc`]: up to `len` bytes at the offset, as a region that
    /// any thread may hold and drop without the lock (it is a [`Buf`] of the
    /// stream's buffer: no copy).
    pub fn salloc(&self, len: usize) -> io::Result<SharedRegion> {
        self.with(|s| {
            let r = s.salloc(len)?;
            let offset = r.offset();
            Ok(SharedRegion {
                buf: r.into_buf(),
                offset,
            })
        })
    }

    /// [`Stream::salloc_at`] in one locked call.
    pub fn salloc_at(&self, len: usize, at: SeekFrom) -> io::Result<SharedRegion> {
        self.with(|s| {
            let r = s.salloc_at(len, at)?;
            let offset = r.offset();
            Ok(SharedRegion {
                buf: r.into_buf(),
                offset,
            })
        })
    }

    /// [`Stream::salloc_mut`]: a write region any thread may fill; its bytes
    /// reach the file in allocation order once it is freed.
    pub fn salloc_mut(&self, len: usize) -> io::Result<SharedRegionMut<'_>> {
        self.with(|s| Ok(s.salloc_mut(len)?.into_raw()))
            .map(|raw| SharedRegionMut::new(self, raw))
    }

    /// [`Stream::salloc_mut_at`] in one locked call.
    pub fn salloc_mut_at(&self, len: usize, at: SeekFrom) -> io::Result<SharedRegionMut<'_>> {
        self.with(|s| Ok(s.salloc_mut_at(len, at)?.into_raw()))
            .map(|raw| SharedRegionMut::new(self, raw))
    }

    /// [`Stream::set_mode`].
    pub fn set_mode(&self, mode: Mode) -> io::Result<()> {
        self.with(|s| s.set_mode(mode))
    }

    /// [`Stream::flush`].
    pub fn flush(&self) -> io::Result<()> {
        self.with(|s| s.flush())
    }

    /// [`Stream::sync_all`].
    pub fn sync_all(&self) -> io::Result<()> {
        self.with(|s| s.sync_all())
    }

    /// [`Stream::seek_to`].
    pub fn seek_to(&self, to: SeekFrom) -> io::Result<u64> {
        self.with(|s| s.seek_to(to))
    }

    /// [`Stream::position`].
    pub fn position(&self) -> io::Result<u64> {
        self.with(|s| Ok(s.position()))
    }

    /// [`Stream::len`].
    pub fn len(&self) -> io::Result<u64> {
        self.with(|s| s.len())
    }

    /// [`Stream::is_empty`].
    pub fn is_empty(&self) -> io::Result<bool> {
        self.with(|s| s.is_empty())
    }

    /// [`Stream::close`]: flushes and closes, reporting every deferred
    /// error.
    pub fn close(self) -> io::Result<()> {
        self.into_inner().close()
    }

    /// Frees a write region: now under the lock (`report`: returning what
    /// writing out met, else leaving it to the stream's next call), or, on
    /// the thread whose guard is live, when that guard next lets the stream
    /// be used.
    fn free_write(&self, raw: RawRegionMut, report: bool) -> io::Result<()> {
        if self.held_here() {
            // SAFETY: this thread holds the lock, and `pending` is only ever
            // touched by the holder; no reference into it is live.
            unsafe { (*self.pending.get()).push(raw) };
            return Ok(());
        }
        self.with(|s| {
            // SAFETY: `raw` came from this stream and is rebuilt once.
            let r = unsafe { s.region_mut_from_raw(raw) };
            if report {
                r.free()
            } else {
                drop(r);
                Ok(())
            }
        })
    }
}

impl From<Stream> for SharedStream {
    fn from(s: Stream) -> SharedStream {
        SharedStream::new(s)
    }
}

impl fmt::Debug for SharedStream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedStream").finish_non_exhaustive()
    }
}

impl Read for &SharedStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.with(|s| s.read(buf))
    }
}

impl Write for &SharedStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(|s| s.write(buf))
    }

    /// The whole slice in one locked call: no other thread's bytes land
    /// inside it.
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.with(|s| s.write_all(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.with(Write::flush)
    }
}

impl Seek for &SharedStream {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.with(|s| s.seek(to))
    }
}

/// The lock of a [`SharedStream`], held until dropped; meanwhile every
/// [`Stream`] call works through it without further locking: the `&self`
/// ones through `Deref<Target = Stream>`, the ones that lend the buffer
/// (`next_line`, `fill_buf_min`, `write_space`, `BufRead`) as the guard's
/// own `&mut self` methods. It is never a `&mut Stream`: that would let
/// safe code swap the stream out from under live [`SharedRegionMut`]s,
/// which point into its buffers.
///
/// ```compile_fail,E0596
/// let s = ferry::SharedStream::new(ferry::Stream::memory());
/// let r = s.salloc_mut(64).unwrap();
/// let mut g = s.lock();
/// let old = std::mem::replace(&mut *g, ferry::Stream::memory());
/// # drop((r, old));
/// ```
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use std::io::BufRead;
/// let s = ferry::SharedStream::new(ferry::Stream::from_bytes(b"a\nbc\n".to_vec()));
/// let mut g = s.lock();
/// assert_eq!(g.next_line()?, Some(&b"a\n"[..]));
/// g.consume(1);
/// assert_eq!(g.fill_buf()?, b"c\n");
/// # Ok(()) }
/// ```
pub struct StreamGuard<'a> {
    shared: &'a SharedStream,
    /// Unlocked by the thread that locked it.
    _not_send: PhantomData<*const ()>,
}

impl Deref for StreamGuard<'_> {
    type Target = Stream;

    fn deref(&self) -> &Stream {
        // No `&mut Stream` from this guard is live (it would borrow the
        // guard mutably), so pending frees can go through now.
        self.shared.settle();
        // SAFETY: this thread holds the lock for the guard's life; only
        // shared references to the stream are live.
        unsafe { &*self.shared.stream.get() }
    }
}

impl<'a> StreamGuard<'a> {
    /// The stream, exclusively, for one call that lends its buffer; never
    /// handed out whole (see the type's docs).
    fn stream_mut(&mut self) -> &mut Stream {
        self.shared.settle();
        // SAFETY: the lock is held for the guard's life and `&mut self`
        // rules out every other reference derived from it.
        unsafe { &mut *self.shared.stream.get() }
    }

    /// [`Stream::next_line`].
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        self.stream_mut().next_line()
    }

    /// [`Stream::fill_buf_min`].
    pub fn fill_buf_min(&mut self, min: usize) -> io::Result<&[u8]> {
        self.stream_mut().fill_buf_min(min)
    }

    /// [`Stream::write_space`].
    pub fn write_space(&mut self) -> io::Result<&mut [u8]> {
        self.stream_mut().write_space()
    }

    /// [`Stream::commit_space`].
    pub fn commit_space(&mut self, n: usize) -> io::Result<()> {
        self.stream_mut().commit_space(n)
    }

    /// [`Stream::buf_lines`].
    pub fn buf_lines(&mut self) -> super::Lines<'_> {
        self.stream_mut().buf_lines()
    }
}

impl Drop for StreamGuard<'_> {
    fn drop(&mut self) {
        self.shared.release();
    }
}

impl fmt::Debug for StreamGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StreamGuard").finish_non_exhaustive()
    }
}

impl Read for StreamGuard<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stream_mut().read(buf)
    }

    fn read_to_end(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        self.stream_mut().read_to_end(buf)
    }
}

impl BufRead for StreamGuard<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.stream_mut().fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.stream_mut().consume(amt)
    }
}

impl Write for StreamGuard<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.stream_mut().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.stream_mut().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Write::flush(self.stream_mut())
    }
}

impl Seek for StreamGuard<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.stream_mut().seek(to)
    }
}

/// A read region of a [`SharedStream`]: the bytes as a [`Buf`] of the
/// stream's buffer (no copy), which any thread may hold, read and drop
/// without the lock.
#[derive(Clone, Debug)]
pub struct SharedRegion {
    buf: Buf,
    offset: u64,
}

impl SharedRegion {
    /// The stream offset of the first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The bytes, kept as long as wanted.
    pub fn into_buf(self) -> Buf {
        self.buf
    }
}

impl Deref for SharedRegion {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.buf
    }
}

/// A write region of a [`SharedStream`]. Any thread may fill it; freeing it
/// (drop, [`free`](SharedRegionMut::free), [`commit`](SharedRegionMut::commit))
/// takes the lock, or, on a thread whose [`StreamGuard`] is live, waits for
/// that guard.
pub struct SharedRegionMut<'a> {
    shared: &'a SharedStream,
    /// `None` once freed.
    raw: Option<RawRegionMut>,
    ptr: NonNull<u8>,
    len: usize,
    offset: u64,
}

// SAFETY: the region's bytes are its own until it is freed (no other
// region or the stream touches them); freeing takes the stream's lock.
unsafe impl Send for SharedRegionMut<'_> {}
// SAFETY: `&SharedRegionMut` only reads the region's own bytes.
unsafe impl Sync for SharedRegionMut<'_> {}

impl<'a> SharedRegionMut<'a> {
    fn new(shared: &'a SharedStream, raw: RawRegionMut) -> SharedRegionMut<'a> {
        SharedRegionMut {
            shared,
            ptr: NonNull::new(raw.as_ptr()).unwrap_or(NonNull::dangling()),
            len: raw.len(),
            offset: raw.offset(),
            raw: Some(raw),
        }
    }

    /// The stream offset of the first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Resizes the region, which must be the stream's most recent
    /// ([`RegionMut::realloc`](super::RegionMut::realloc)). `WouldBlock` on
    /// a thread whose guard is live.
    pub fn realloc(&mut self, new_len: usize) -> io::Result<()> {
        let Some(raw) = self.raw.take() else {
            return Ok(());
        };
        let held = match self.shared.acquire() {
            Ok(h) => h,
            Err(e) => {
                self.raw = Some(raw);
                return Err(e);
            }
        };
        // SAFETY: the lock is held by this call alone, so no other
        // reference to the stream exists while `s` lives.
        let s = unsafe { &*held.0.stream.get() };
        // SAFETY: `raw` came from this stream, is rebuilt once and goes
        // back to raw form before the lock is released.
        let mut r = unsafe { s.region_mut_from_raw(raw) };
        let res = r.realloc(new_len);
        let raw = r.into_raw();
        drop(held);
        self.ptr = NonNull::new(raw.as_ptr()).unwrap_or(NonNull::dangling());
        self.len = raw.len();
        self.raw = Some(raw);
        res
    }

    /// Keeps the first `n` bytes and frees the region.
    pub fn commit(mut self, n: usize) -> io::Result<()> {
        if n != self.len {
            self.realloc(n)?;
        }
        self.free()
    }

    /// Frees the region, reporting an error writing it out met (on a thread
    /// whose guard is live, the region is freed when the guard lets go and
    /// errors come from the stream's next call).
    pub fn free(mut self) -> io::Result<()> {
        match self.raw.take() {
            Some(raw) => self.shared.free_write(raw, true),
            None => Ok(()),
        }
    }
}

impl Deref for SharedRegionMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the region's bytes, allocated to it alone until freed.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for SharedRegionMut<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for SharedRegionMut<'_> {
    fn drop(&mut self) {
        if let Some(raw) = self.raw.take() {
            // An error writing it out stays in the stream for its next call.
            let _ = self.shared.free_write(raw, false);
        }
    }
}

impl fmt::Debug for SharedRegionMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedRegionMut")
            .field("len", &self.len)
            .finish()
    }
}
