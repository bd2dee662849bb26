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
