//! `BufMut`: a uniquely owned, writable buffer with head and tail room
//! (fbufs' buffer before it is handed over, Roadrunner's `start/len/pos`).

use super::block::{default_align, Block};
use super::Buf;
use std::fmt;
use std::mem::ManuallyDrop;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// A unique, writable buffer that becomes an immutable [`Buf`] with
/// [`freeze`](BufMut::freeze), without copying.
///
/// ```text
///   block: [ head room | data (len) | tail room ]
///           ◄─ head ──► ◄── len ───► ◄─ cap - head - len ─►
/// ```
///
/// Head room lets a protocol layer [`prepend`](BufMut::prepend) a header in
/// place; tail room is written either with
/// [`extend_from_slice`](BufMut::extend_from_slice) or directly, by reading
/// into [`spare_capacity_mut`](BufMut::spare_capacity_mut) and then calling
/// [`commit`](BufMut::commit). Every byte of a block is initialised (blocks
/// are zero-filled when first allocated), so the spare capacity is a plain
/// `&mut [u8]`.
///
/// Buffers of 4 KiB and more are page-aligned.
///
/// ```
/// use std::io::Read;
/// let mut m = ferry::BufMut::with_capacity(8192);
/// assert_eq!(m.as_ptr() as usize % 4096, 0);
/// let n = (&b"payload"[..]).read(m.spare_capacity_mut()).unwrap();
/// m.commit(n);
/// m.prepend(b"len=7;");
/// assert_eq!(&m.freeze()[..], b"len=7;payload");
/// ```
pub struct BufMut {
    /// Always the only reference to its block; released without an atomic
    /// decrement in `Drop`.
    block: ManuallyDrop<Block>,
    head: usize,
    len: usize,
}

// SAFETY: a BufMut is the only reference to its block's bytes.
unsafe impl Send for BufMut {}
// SAFETY: &BufMut only reads.
unsafe impl Sync for BufMut {}

impl BufMut {
    /// An empty buffer with no capacity; does not allocate.
    pub fn new() -> BufMut {
        BufMut::from_block(Block::empty(), 0, 0)
    }

    pub(crate) fn from_block(block: Block, head: usize, len: usize) -> BufMut {
        debug_assert!(head + len <= block.cap());
        BufMut {
            block: ManuallyDrop::new(block),
            head,
            len,
        }
    }

    /// A buffer with room for `cap` bytes: page-aligned from 4 KiB up,
    /// 16-byte aligned below.
    ///
    /// ```
    /// let m = ferry::BufMut::with_capacity(100);
    /// assert!(m.capacity() >= 100 && m.is_empty());
    /// ```
    pub fn with_capacity(cap: usize) -> BufMut {
        BufMut::with_capacity_aligned(cap, 1)
    }

    /// A buffer with room for `cap` bytes whose data starts at a multiple of
    /// `align` (a power of two; at least the default alignment is used).
    ///
    /// # Panics
    /// If `align` is not a power of two.
    ///
    /// ```
    /// let m = ferry::BufMut::with_capacity_aligned(1 << 16, 1 << 16);
    /// assert_eq!(m.as_ptr() as usize % (1 << 16), 0);
    /// ```
    pub fn with_capacity_aligned(cap: usize, align: usize) -> BufMut {
        assert!(
            align.is_power_of_two(),
            "alignment {align} is not a power of two"
        );
        BufMut::from_block(Block::heap_zeroed(cap, default_align(cap, align)), 0, 0)
    }

    /// [`BufMut::with_capacity_aligned`] that reports failure instead of
    /// aborting: `InvalidInput` for a size no allocation can have (more than
    /// `isize::MAX` bytes, or an alignment that is not a power of two),
    /// `OutOfMemory` when the allocator refuses.
    ///
    /// ```
    /// use std::io::ErrorKind;
    /// assert!(ferry::BufMut::try_with_capacity_aligned(1 << 20, 4096).is_ok());
    /// let e = ferry::BufMut::try_with_capacity_aligned(usize::MAX, 4096).unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::InvalidInput);
    /// let e = ferry::BufMut::try_with_capacity_aligned(isize::MAX as usize - 8191, 4096).unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::OutOfMemory);
    /// ```
    pub fn try_with_capacity_aligned(cap: usize, align: usize) -> std::io::Result<BufMut> {
        use std::io::{Error, ErrorKind};
        if !align.is_power_of_two() {
            return Err(Error::new(
                ErrorKind::InvalidInput,
                format!("alignment {align} is not a power of two"),
            ));
        }
        match Block::try_heap_zeroed(cap, default_align(cap, align)) {
            Ok(b) => Ok(BufMut::from_block(b, 0, 0)),
            Err(None) => Err(Error::new(
                ErrorKind::InvalidInput,
                format!("a buffer of {cap} bytes is larger than any allocation can be"),
            )),
            Err(Some(_)) => Err(Error::new(
                ErrorKind::OutOfMemory,
                format!("no memory for a buffer of {cap} bytes"),
            )),
        }
    }

    /// A buffer with `head` bytes of head room and `cap` bytes of tail room.
    ///
    /// ```
    /// let mut m = ferry::BufMut::with_head_room(16, 100);
    /// m.extend_from_slice(b"body");
    /// m.prepend(b"hdr:");
    /// assert_eq!(&m[..], b"hdr:body");
    /// assert_eq!(m.head_room(), 12);
    /// ```
    pub fn with_head_room(head: usize, cap: usize) -> BufMut {
        let total = head.checked_add(cap).expect("capacity overflow");
        BufMut::from_block(Block::heap_zeroed(total, default_align(total, 1)), head, 0)
    }

    /// Bytes written so far.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if nothing is written.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes that fit without reallocating: `len + tail_room`.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.block.cap() - self.head
    }

    /// Free bytes before the data, for [`prepend`](BufMut::prepend).
    #[inline]
    pub fn head_room(&self) -> usize {
        self.head
    }

    /// Free bytes after the data.
    #[inline]
    pub fn tail_room(&self) -> usize {
        self.block.cap() - self.head - self.len
    }

    /// Pointer to the first data byte.
    #[inline]
    pub fn as_ptr(&self) -> *const u8 {
        self.data_ptr().as_ptr()
    }

    #[inline]
    fn data_ptr(&self) -> NonNull<u8> {
        // SAFETY: head <= cap, so the pointer is inside (or one past) the block.
        unsafe { NonNull::new_unchecked(self.block.data().as_ptr().add(self.head)) }
    }

    /// The written bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: head..head+len is inside the block, initialised, and only
        // this BufMut can reach it.
        unsafe { std::slice::from_raw_parts(self.data_ptr().as_ptr(), self.len) }
    }

    /// The written bytes, writable.
    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as `as_slice`, and `&mut self` makes the access unique.
        unsafe { std::slice::from_raw_parts_mut(self.data_ptr().as_ptr(), self.len) }
    }

    /// The tail room, to be filled and then [`commit`](BufMut::commit)ted.
    /// It holds whatever was there before (zeros, or a pool slot's old
    /// bytes), never uninitialised memory.
    #[inline]
    pub fn spare_capacity_mut(&mut self) -> &mut [u8] {
        let tail = self.tail_room();
        // SAFETY: head+len..cap is inside the block and initialised (blocks
        // are zero-filled when allocated); `&mut self` makes it unique.
        unsafe { std::slice::from_raw_parts_mut(self.data_ptr().as_ptr().add(self.len), tail) }
    }

    /// Adds the first `n` bytes of the tail room to the data.
    ///
    /// # Panics
    /// If `n > tail_room()`.
    ///
    /// ```
    /// let mut m = ferry::BufMut::with_capacity(16);
    /// m.spare_capacity_mut()[..3].copy_from_slice(b"abc");
    /// m.commit(3);
    /// assert_eq!(&m[..], b"abc");
    /// ```
    #[inline]
    pub fn commit(&mut self, n: usize) {
        assert!(
            n <= self.tail_room(),
            "commit({n}) exceeds the {} bytes of tail room",
            self.tail_room()
        );
        self.len += n;
    }

    /// Makes sure at least `additional` bytes of tail room exist, moving the
    /// data to a larger block (keeping alignment and head room) if needed.
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        if self.tail_room() >= additional {
            return;
        }
        self.grow_tail(additional);
    }

    #[cold]
    fn grow_tail(&mut self, additional: usize) {
        let need = self
            .head
            .checked_add(self.len)
            .and_then(|n| n.checked_add(additional))
            .expect("capacity overflow");
        let grown = need.max(self.block.cap().saturating_mul(2)).max(64);
        self.regrow(self.head, grown);
    }

    /// Makes sure at least `n` bytes of head room exist, moving the data to
    /// a larger block (keeping alignment and tail room) if needed.
    ///
    /// ```
    /// let mut m = ferry::BufMut::with_capacity(8);
    /// m.extend_from_slice(b"x");
    /// m.reserve_head(100);
    /// assert!(m.head_room() >= 100);
    /// assert_eq!(&m[..], b"x");
    /// ```
    pub fn reserve_head(&mut self, n: usize) {
        if self.head >= n {
            return;
        }
        let total = n
            .checked_add(self.len)
            .and_then(|t| t.checked_add(self.tail_room()))
            .expect("capacity overflow");
        self.regrow(n, total);
    }

    fn regrow(&mut self, head: usize, total: usize) {
        let align = default_align(total, self.block.align());
        let new = Block::heap_zeroed(total, align);
        // SAFETY: the new block has room for head+len bytes, the old data is
        // len initialised bytes, and the two blocks are distinct allocations.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.data_ptr().as_ptr(),
                new.data().as_ptr().add(head),
                self.len,
            );
        }
        std::mem::replace(&mut *self.block, new).drop_unique();
        self.head = head;
    }

    /// Writes `bytes` just before the data, using head room (reallocating if
    /// there is not enough).
    pub fn prepend(&mut self, bytes: &[u8]) {
        self.reserve_head(bytes.len());
        self.head -= bytes.len();
        self.len += bytes.len();
        self.as_mut_slice()[..bytes.len()].copy_from_slice(bytes);
    }

    /// Appends `bytes`, growing if needed.
    #[inline]
    pub fn extend_from_slice(&mut self, bytes: &[u8]) {
        self.reserve(bytes.len());
        self.spare_capacity_mut()[..bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    /// Keeps the first `len` bytes (the rest becomes tail room).
    #[inline]
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Empties the data; head room and capacity stay.
    #[inline]
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// Makes the bytes immutable and shareable. No copy.
    ///
    /// ```
    /// let mut m = ferry::BufMut::with_capacity(4);
    /// m.extend_from_slice(b"done");
    /// let b = m.freeze();
    /// let c = b.clone();
    /// assert_eq!(b, c);
    /// ```
    pub fn freeze(self) -> Buf {
        let ptr = self.data_ptr();
        let len = self.len;
        let mut me = ManuallyDrop::new(self);
        // SAFETY: `me` is never dropped, so the block is moved out once.
        let block = unsafe { ManuallyDrop::take(&mut me.block) };
        // A protecting pool's slot turns read-only here (its producer's
        // write access ends: IO-Lite's rule).
        block.seal();
        Buf::from_parts(block, ptr, len)
    }
}

impl Drop for BufMut {
    fn drop(&mut self) {
        // SAFETY: the block is taken exactly once, here, as self goes.
        unsafe { ManuallyDrop::take(&mut self.block) }.drop_unique();
    }
}

impl Default for BufMut {
    fn default() -> BufMut {
        BufMut::new()
    }
}

impl Deref for BufMut {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl DerefMut for BufMut {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl AsRef<[u8]> for BufMut {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsMut<[u8]> for BufMut {
    fn as_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
}

impl fmt::Debug for BufMut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::fmt::debug_bytes(f, self.as_slice())
    }
}

impl PartialEq<[u8]> for BufMut {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}

impl std::io::Write for BufMut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.extend_from_slice(buf);
        Ok(())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl From<&[u8]> for BufMut {
    /// Copies the bytes into a new buffer.
    fn from(bytes: &[u8]) -> BufMut {
        let mut m = BufMut::with_capacity(bytes.len());
        m.extend_from_slice(bytes);
        m
    }
}
