//! `StreamGuard`: the stream's operations with no per-call locking.

use super::{Alloc, Mode, Region, RegionMut, Stream};
use std::io::{self, SeekFrom};
use std::marker::PhantomData;

/// The stream's operations without per-call locking: either the lock is held
/// for the guard's life ([`Stream::lock`]) or `&mut Stream` rules out other
/// users ([`Stream::get_mut`]). Regions taken through a guard borrow it.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let mut s = ferry::Stream::from_bytes(vec![7u8; 1000]);
/// let g = s.get_mut();
/// let mut sum = 0u64;
/// loop {
///     let r = g.salloc(64)?;
///     if r.is_empty() { break; }
///     sum += r.iter().map(|&b| b as u64).sum::<u64>();
/// }
/// assert_eq!(sum, 7000);
/// # Ok(()) }
/// ```
pub struct StreamGuard<'a> {
    pub(crate) stream: &'a Stream,
    held: Option<super::lock::Held>,
    _not_send: PhantomData<*const ()>,
}

impl<'a> StreamGuard<'a> {
    pub(crate) fn locked(stream: &'a Stream) -> StreamGuard<'a> {
        StreamGuard {
            stream,
            held: Some(stream.lock.lock()),
            _not_send: PhantomData,
        }
    }

    pub(crate) fn exclusive(stream: &'a mut Stream) -> StreamGuard<'a> {
        StreamGuard {
            stream,
            held: None,
            _not_send: PhantomData,
        }
    }

    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut super::state::Inner) -> R) -> R {
        self.stream.with_inner(true, f)
    }

    /// [`Stream::salloc`] without locking.
    #[inline]
    pub fn salloc(&self, len: usize) -> io::Result<Region<'_>> {
        self.stream.do_salloc(true, len)
    }

    /// [`Stream::salloc_mut`] without locking.
    pub fn salloc_mut(&self, len: usize) -> io::Result<RegionMut<'_>> {
        self.stream.do_salloc_mut(true, len)
    }

    /// [`Stream::salloc_at`] without locking.
    pub fn salloc_at(&self, len: usize, at: SeekFrom) -> io::Result<Region<'_>> {
        self.stream.do_salloc_at(true, len, at)
    }

    /// [`Stream::salloc_mut_at`] without locking.
    pub fn salloc_mut_at(&self, len: usize, at: SeekFrom) -> io::Result<RegionMut<'_>> {
        self.stream.do_salloc_mut_at(true, len, at)
    }

    /// [`Stream::salloc_mode`] without locking.
    pub fn salloc_mode(&self, mode: Mode, len: usize) -> io::Result<Alloc<'_>> {
        self.stream.do_salloc_mode(true, mode, len)
    }

    /// [`Stream::set_mode`] without locking.
    pub fn set_mode(&self, mode: Mode) -> io::Result<()> {
        self.with(|i| i.set_mode(mode))
    }

    /// [`Stream::mode`] without locking.
    pub fn mode(&self) -> Mode {
        self.with(|i| i.mode)
    }

    /// [`Stream::flush`] without locking.
    pub fn flush(&self) -> io::Result<()> {
        self.with(|i| i.flush())
    }

    /// [`Stream::seek_to`] without locking.
    pub fn seek_to(&self, to: SeekFrom) -> io::Result<u64> {
        self.with(|i| i.seek(to))
    }

    /// [`Stream::position`] without locking.
    pub fn position(&self) -> u64 {
        self.with(|i| i.pos)
    }

    /// The next line at the stream offset, with its `\n` (the last line may
    /// have none), borrowed from the stream's buffer: no copy, no
    /// allocation. `None` at end of stream.
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        let stream = self.stream;
        stream
            .with_inner(true, |i| match i.next_line()? {
                // (no unsafe) the bytes live in the current read buffer, which
                // stays until the next call through this guard (`&mut self`).
                Some((slot, at, len)) => Ok(Some(i.read_bytes(slot, at, len) as *const [u8])),
                None => Ok(None),
            })
            .map(|o| {
                // SAFETY: the pointer is into the stream's current read buffer,
                // which no one can change or free before the next call through
                // this guard: the returned borrow holds `&mut self`.
                o.map(|p| unsafe { &*p })
            })
    }

    /// `BufRead::fill_buf` with at least `min` unread bytes, unless the
    /// stream ends first (then what is left; empty at the end). The bytes
    /// are the stream's buffer (no copy) and stay until the next call
    /// through this guard; `consume` takes them.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::BufRead;
    /// let mut s = ferry::Stream::from_bytes(b"abcdef".to_vec());
    /// let mut g = s.get_mut();
    /// assert_eq!(g.fill_buf_min(4)?, b"abcdef");
    /// g.consume(4);
    /// assert_eq!(g.fill_buf_min(10)?, b"ef"); // the end comes first
    /// # Ok(()) }
    /// ```
    pub fn fill_buf_min(&mut self, min: usize) -> io::Result<&[u8]> {
        let (p, n) = self.with(|i| i.fill_buf_min(min))?;
        // SAFETY: the unread part of the current read buffer, unchanged
        // until the next call on the stream; the borrow holds `&mut self`.
        Ok(unsafe { std::slice::from_raw_parts(p.as_ptr(), n) })
    }

    /// The room left in the stream's current write buffer, to write into in
    /// place; [`commit_space`](StreamGuard::commit_space) then takes the
    /// first bytes as written (the write-side twin of `fill_buf` and
    /// `consume`). Nothing is reserved: any other call on the stream
    /// forgets the room. Empty in append mode and while write regions are
    /// outstanding (write those bytes with `Write` instead).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let mut s = ferry::Stream::memory();
    /// let mut g = s.get_mut();
    /// let room = g.write_space()?;
    /// room[..3].copy_from_slice(b"abc");
    /// g.commit_space(3)?;
    /// drop(g);
    /// assert_eq!(s.into_vec()?, b"abc");
    /// # Ok(()) }
    /// ```
    pub fn write_space(&mut self) -> io::Result<&mut [u8]> {
        let (p, n) = self.with(|i| i.write_space())?;
        // SAFETY: bytes of the current write buffer past its used part,
        // handed to no region; the borrow holds `&mut self`, so nothing else
        // writes them meanwhile.
        Ok(unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), n) })
    }

    /// Takes the first `n` bytes of [`write_space`](StreamGuard::write_space)
    /// as written (`InvalidInput` if `n` is more than the room).
    pub fn commit_space(&mut self, n: usize) -> io::Result<()> {
        self.with(|i| i.commit_space(n))
    }

    /// Rebuilds a region from [`Region::into_raw`], to use or free it.
    ///
    /// # Safety
    /// `raw` came from `into_raw` on a region of this same stream, and is
    /// rebuilt once.
    pub unsafe fn region_from_raw(&self, raw: super::RawRegion) -> Region<'_> {
        Region {
            stream: self.stream,
            ptr: raw.ptr,
            len: raw.len,
            slot: raw.slot,
            offset: raw.offset,
            exclusive: true,
            _not_send: PhantomData,
        }
    }

    /// Rebuilds a write region from [`RegionMut::into_raw`].
    ///
    /// # Safety
    /// `raw` came from `into_raw` on a write region of this same stream, and
    /// is rebuilt once.
    pub unsafe fn region_mut_from_raw(&self, raw: super::RawRegionMut) -> RegionMut<'_> {
        RegionMut {
            stream: self.stream,
            ptr: raw.ptr,
            len: raw.len,
            seq: raw.seq,
            offset: raw.offset,
            exclusive: true,
            _not_send: PhantomData,
        }
    }

    /// Lines as `Buf`s (one reference-count bump each, no copy).
    pub fn buf_lines(&mut self) -> super::Lines<'_> {
        super::Lines {
            stream: self.stream,
            _not_send: PhantomData,
        }
    }
}

impl Drop for StreamGuard<'_> {
    fn drop(&mut self) {
        if let Some(h) = self.held {
            self.stream.lock.unlock(h);
        }
    }
}
