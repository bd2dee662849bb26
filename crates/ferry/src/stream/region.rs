//! Regions: the bytes `salloc` hands out. Dropping one is `sfree`.

use super::Stream;
use crate::Buf;
use std::fmt;
use std::io;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A read-only region of a stream's buffer (from `salloc` in read mode).
///
/// It borrows the stream; dropping it frees it (`sfree`). Its bytes stay
/// valid and unchanged until then, whatever else the stream does. To keep
/// them longer, or send them to another thread, take a [`Buf`] with
/// [`into_buf`](Region::into_buf) — no copy.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let mut s = ferry::Stream::from_bytes(b"header body".to_vec());
/// let head = s.salloc(6)?;
/// assert_eq!(&head[..], b"header");
/// let keep = head.into_buf();
/// let rest = s.salloc(100)?;           // shorter: end of stream
/// assert_eq!(&rest[..], b" body");
/// drop(rest);
/// assert_eq!(keep, *b"header");
/// # Ok(()) }
/// ```
pub struct Region<'a> {
    pub(crate) stream: &'a Stream,
    pub(crate) ptr: NonNull<u8>,
    pub(crate) len: usize,
    pub(crate) slot: u32,
    pub(crate) offset: u64,
}

impl Region<'_> {
    /// The stream offset of the region's first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Number of bytes (fewer than asked only at end of stream).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True at end of stream.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes as a `Buf` that outlives the region and the stream's
    /// buffer (no copy); frees the region.
    pub fn into_buf(self) -> Buf {
        let b = self
            .stream
            .with_inner(|i| i.lease_buf(self.slot, self.ptr, self.len));
        drop(self);
        b
    }

    /// False if the region is part of a mapped window that lost pages:
    /// another process shrank the file under a mapping without a lease
    /// ([`OpenOptions::without_lease`](crate::OpenOptions::without_lease)),
    /// and what the window lost reads as zeros (the SIGBUS guard) — bytes
    /// the file never held there. A page tells when it is touched, so ask
    /// after reading the bytes; what ferry knows so far, without a system
    /// call. Unlike [`free`](Self::free) it keeps the region, so that its
    /// bytes can still be used up to where the file ends now. A region read
    /// into a buffer is always intact.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let s = ferry::Stream::from_bytes(b"read into memory".to_vec());
    /// assert!(s.salloc(4)?.is_intact());
    /// # Ok(()) }
    /// ```
    pub fn is_intact(&self) -> bool {
        let slot = self.slot;
        !self.stream.with_inner(|i| i.lease_damaged(slot))
    }

    /// Frees the region (`sfree`), reporting an error the stream met.
    pub fn free(self) -> io::Result<()> {
        let (stream, slot) = (self.stream, self.slot);
        let damaged = stream.with_inner(|i| i.lease_damaged(slot).then(|| i.damage_error()));
        drop(self);
        match damaged {
            Some(e) => Err(e),
            None => stream.with_inner(|i| i.take_deferred()),
        }
    }
}

impl Region<'_> {
    /// Detaches the region from its borrow of the stream, for a caller the
    /// borrow checker cannot follow (the C ABI's `fy_sfree(stream, ptr)`).
    /// The region stays allocated until
    /// [`Stream::region_from_raw`]
    /// rebuilds it and it is freed; the stream must outlive that.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let mut s = ferry::Stream::from_bytes(b"hello".to_vec());
    /// let raw = s.salloc(4)?.into_raw();
    /// assert_eq!(raw.len(), 4);
    /// // SAFETY: `raw` is a region of this stream, rebuilt once.
    /// let r = unsafe { s.region_from_raw(raw) };
    /// assert_eq!(&r[..], b"hell");
    /// r.free()?;
    /// # Ok(()) }
    /// ```
    pub fn into_raw(self) -> RawRegion {
        let raw = RawRegion {
            ptr: self.ptr,
            len: self.len,
            slot: self.slot,
            offset: self.offset,
        };
        std::mem::forget(self);
        raw
    }
}

/// A read region detached from its stream's borrow ([`Region::into_raw`]).
#[derive(Debug)]
pub struct RawRegion {
    pub(crate) ptr: NonNull<u8>,
    pub(crate) len: usize,
    pub(crate) slot: u32,
    pub(crate) offset: u64,
}

/// The accessors the two detached regions share: `$ptr` is the pointer
/// [`as_ptr`](RawRegion::as_ptr) gives (const for read, mut for write).
macro_rules! raw_region_accessors {
    ($ty:ty, $ptr:ty) => {
        impl $ty {
            /// The first byte.
            pub fn as_ptr(&self) -> $ptr {
                self.ptr.as_ptr()
            }

            /// Number of bytes.
            pub fn len(&self) -> usize {
                self.len
            }

            /// True if the region holds no bytes.
            pub fn is_empty(&self) -> bool {
                self.len == 0
            }

            /// The stream offset of the first byte.
            pub fn offset(&self) -> u64 {
                self.offset
            }
        }
    };
}

raw_region_accessors!(RawRegion, *const u8);

/// A write region detached from its stream's borrow
/// ([`RegionMut::into_raw`]).
#[derive(Debug)]
pub struct RawRegionMut {
    pub(crate) ptr: NonNull<u8>,
    pub(crate) len: usize,
    pub(crate) seq: u64,
    pub(crate) offset: u64,
}

raw_region_accessors!(RawRegionMut, *mut u8);

impl Deref for Region<'_> {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        // SAFETY: the region holds a lease on its buffer, which the stream
        // keeps alive and unchanged until the lease is returned (in Drop);
        // read buffers are immutable `Buf`s.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl AsRef<[u8]> for Region<'_> {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl Drop for Region<'_> {
    #[inline(always)]
    fn drop(&mut self) {
        let slot = self.slot;
        self.stream.with_inner(|i| i.free_read(slot));
    }
}

impl fmt::Debug for Region<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Region").field("len", &self.len).finish()
    }
}

/// A writable region of a stream's buffer (from `salloc` in write mode).
///
/// Its bytes reach the file after it is freed (dropped, or
/// [`free`](RegionMut::free)d), in the order regions were allocated,
/// whatever order they are freed in.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// let mut s = ferry::Stream::memory();
/// let mut r = s.salloc_mut(200)?;     // room for 200 bytes
/// r[..5].copy_from_slice(b"hello");
/// r.commit(5)?;                       // keep 5: the next region starts at byte 5
/// s.salloc_mut(1)?[0] = b'!';
/// assert_eq!(s.into_vec()?, b"hello!");
/// # Ok(()) }
/// ```
pub struct RegionMut<'a> {
    pub(crate) stream: &'a Stream,
    pub(crate) ptr: NonNull<u8>,
    pub(crate) len: usize,
    pub(crate) seq: u64,
    pub(crate) offset: u64,
}

impl RegionMut<'_> {
    /// The stream offset of the region's first byte.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Number of bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if the region holds no bytes.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Shrinks or grows this region, which must be the stream's most recent
    /// (ASF's `srealloc`): the next allocation starts right after its new
    /// end. Bytes already written are kept (up to the new length).
    pub fn realloc(&mut self, new_len: usize) -> io::Result<()> {
        let seq = self.seq;
        let ptr = self.stream.with_inner(|i| i.realloc_write(seq, new_len))?;
        self.ptr = ptr;
        self.len = new_len;
        Ok(())
    }

    /// Keeps the first `n` bytes and frees the region.
    pub fn commit(mut self, n: usize) -> io::Result<()> {
        if n != self.len {
            self.realloc(n)?;
        }
        self.free()
    }

    /// Frees the region (`sfree`), reporting any error writing it out met.
    pub fn free(self) -> io::Result<()> {
        let (stream, seq) = (self.stream, self.seq);
        std::mem::forget(self);
        stream.with_inner(|i| {
            let r = i.free_write(seq);
            r.and(i.take_deferred())
        })
    }
}

impl RegionMut<'_> {
    /// Detaches the region from its borrow of the stream (see
    /// [`Region::into_raw`]);
    /// [`Stream::region_mut_from_raw`]
    /// rebuilds it. Until it is
    /// freed, later regions wait to reach the file.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let mut s = ferry::Stream::memory();
    /// let raw = s.salloc_mut(2)?.into_raw();
    /// // SAFETY: the region's two bytes are ours until it is freed.
    /// unsafe { raw.as_ptr().copy_from(b"ok".as_ptr(), 2) };
    /// // SAFETY: `raw` is a write region of this stream, rebuilt once.
    /// unsafe { s.region_mut_from_raw(raw) }.free()?;
    /// assert_eq!(s.into_vec()?, b"ok");
    /// # Ok(()) }
    /// ```
    pub fn into_raw(self) -> RawRegionMut {
        let raw = RawRegionMut {
            ptr: self.ptr,
            len: self.len,
            seq: self.seq,
            offset: self.offset,
        };
        std::mem::forget(self);
        raw
    }
}

impl Deref for RegionMut<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        // SAFETY: the region's bytes are handed to it alone (regions never
        // overlap) and stay allocated until it is freed.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for RegionMut<'_> {
    fn deref_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `deref`; `&mut self` makes the access unique, and
        // the stream touches these bytes only after the region is freed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for RegionMut<'_> {
    fn drop(&mut self) {
        let seq = self.seq;
        self.stream.with_inner(|i| {
            if let Err(e) = i.free_write(seq) {
                i.defer(e);
            }
        });
    }
}

impl fmt::Debug for RegionMut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegionMut").field("len", &self.len).finish()
    }
}
