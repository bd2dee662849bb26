//! `Buf`: an immutable, shared view of part of a block (IO-Lite's buffer,
//! Roadrunner's reference buffer).

use super::block::Block;
use super::{BufMut, ContentId};
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Bound, Deref, RangeBounds};
use std::ptr::NonNull;

/// An immutable, cheaply cloned, sliceable run of bytes.
///
/// ```text
///          block (reference counted, never changes while shared)
///   [ ........ xxxxxxxxxxxxxxxxxxxxx .............. ]
///              ▲ptr ◄──── len ────►
///   Buf { ptr, len, block }   clone = one refcount bump, no copy
/// ```
///
/// A `Buf` never changes while anyone can see it. Cloning, slicing and
/// splitting share the block; nothing here copies bytes except
/// [`Buf::copy_from_slice`], whose name says so.
///
/// ```
/// use ferry::Buf;
/// let mut b = Buf::from(String::from("GET /index.html HTTP/1.1"));
/// let method = b.split_to(3);
/// assert_eq!(&method[..], b"GET");
/// assert_eq!(b.slice(1..12), *b"/index.html");
/// ```
pub struct Buf {
    ptr: NonNull<u8>,
    len: usize,
    block: Block,
}

// SAFETY: the bytes a Buf points at are immutable while shared and owned by
// the (Send + Sync) block it holds.
unsafe impl Send for Buf {}
// SAFETY: as above; &Buf only reads.
unsafe impl Sync for Buf {}

pub(crate) fn resolve_range(range: impl RangeBounds<usize>, len: usize) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.checked_add(1).expect("range start overflows"),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1).expect("range end overflows"),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    assert!(start <= end, "range start {start} is past its end {end}");
    assert!(
        end <= len,
        "range end {end} is out of bounds for a buffer of {len} bytes"
    );
    (start, end)
}

impl Buf {
    /// An empty buffer; does not allocate.
    ///
    /// ```
    /// assert!(ferry::Buf::new().is_empty());
    /// ```
    pub fn new() -> Buf {
        let block = Block::empty();
        Buf {
            ptr: block.data(),
            len: 0,
            block,
        }
    }

    pub(crate) fn from_parts(block: Block, ptr: NonNull<u8>, len: usize) -> Buf {
        Buf { ptr, len, block }
    }

    /// A buffer over `'static` bytes: no allocation, no copy.
    ///
    /// ```
    /// let b = ferry::Buf::from_static(b"abc");
    /// assert_eq!(&b[..], b"abc");
    /// ```
    pub fn from_static(bytes: &'static [u8]) -> Buf {
        Buf {
            ptr: NonNull::from(bytes).cast(),
            len: bytes.len(),
            block: Block::empty(),
        }
    }

    /// Takes ownership of any byte owner (`Vec<u8>`, `String`, `Box<[u8]>`,
    /// a memory map, …) without copying its bytes; the owner is dropped with
    /// the last reference.
    ///
    /// ```
    /// let b = ferry::Buf::from_owner([7u8; 16]);
    /// assert_eq!(b.len(), 16);
    /// ```
    pub fn from_owner<T>(owner: T) -> Buf
    where
        T: AsRef<[u8]> + Send + Sync + 'static,
    {
        let block = Block::from_owner(owner);
        Buf {
            ptr: block.data(),
            len: block.cap(),
            block,
        }
    }

    /// [`from_owner`](Self::from_owner) for an owner whose bytes are a
    /// shared mapping of a file (an ipc pool): the buffer and its slices
    /// can name the file behind their bytes ([`file_at`](Self::file_at)).
    pub(crate) fn from_file_owner<T: super::block::FileOwner>(owner: T) -> Buf {
        let block = Block::from_file_owner(owner);
        Buf {
            ptr: block.data(),
            len: block.cap(),
            block,
        }
    }

    /// The file these bytes are a shared mapping of, and the offset of
    /// the first of them in it: `Some` for a buffer received over an ipc
    /// channel (the sender's pool) and its slices, `None` for any other.
    /// Reading `len()` bytes of the file there gives the buffer's bytes,
    /// so a write may hand them to the kernel from the file (`sendfile`)
    /// instead of from memory.
    pub(crate) fn file_at(&self) -> Option<(std::os::fd::BorrowedFd<'_>, u64)> {
        let (fd, base) = self.block.file_at()?;
        let skip = (self.ptr.as_ptr() as usize).wrapping_sub(self.block.data().as_ptr() as usize);
        Some((fd, base + skip as u64))
    }

    /// Copies `bytes` into a new buffer (page-aligned from 4 KiB up). The
    /// copy is counted in [`copied_bytes`](crate::buf::copied_bytes).
    ///
    /// ```
    /// let b = ferry::Buf::copy_from_slice(b"xyz");
    /// assert_eq!(&b[..], b"xyz");
    /// ```
    pub fn copy_from_slice(bytes: &[u8]) -> Buf {
        let mut m = BufMut::with_capacity(bytes.len());
        m.extend_from_slice(bytes);
        super::count_copy(bytes.len());
        m.freeze()
    }

    /// Number of bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The bytes.
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len lies inside the block, which is alive while
        // self is, and its bytes are initialised and immutable while shared.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// A new `Buf` sharing `range` of these bytes (no copy).
    ///
    /// # Panics
    /// If the range is out of bounds, like slice indexing.
    ///
    /// ```
    /// let b = ferry::Buf::from(b"hello".to_vec());
    /// assert_eq!(&b.slice(1..=2)[..], b"el");
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Buf {
        let (start, end) = resolve_range(range, self.len);
        Buf {
            // SAFETY: start <= len, so the pointer stays within (or one past)
            // the buffer.
            ptr: unsafe { NonNull::new_unchecked(self.ptr.as_ptr().add(start)) },
            len: end - start,
            block: self.block.clone(),
        }
    }

    /// Splits off and returns `[0, at)`; `self` keeps `[at, len)`.
    ///
    /// # Panics
    /// If `at > len`.
    ///
    /// ```
    /// let mut b = ferry::Buf::from(b"headbody".to_vec());
    /// let head = b.split_to(4);
    /// assert_eq!((&head[..], &b[..]), (&b"head"[..], &b"body"[..]));
    /// ```
    pub fn split_to(&mut self, at: usize) -> Buf {
        assert!(
            at <= self.len,
            "split_to({at}) out of bounds for {} bytes",
            self.len
        );
        let front = Buf {
            ptr: self.ptr,
            len: at,
            block: self.block.clone(),
        };
        self.advance(at);
        front
    }

    /// Splits off and returns `[at, len)`; `self` keeps `[0, at)`.
    ///
    /// # Panics
    /// If `at > len`.
    ///
    /// ```
    /// let mut b = ferry::Buf::from(b"headbody".to_vec());
    /// let body = b.split_off(4);
    /// assert_eq!((&b[..], &body[..]), (&b"head"[..], &b"body"[..]));
    /// ```
    pub fn split_off(&mut self, at: usize) -> Buf {
        assert!(
            at <= self.len,
            "split_off({at}) out of bounds for {} bytes",
            self.len
        );
        let back = self.slice(at..);
        self.len = at;
        back
    }

    /// Keeps the first `len` bytes (no effect if already shorter).
    ///
    /// ```
    /// let mut b = ferry::Buf::from(b"hello".to_vec());
    /// b.truncate(2);
    /// assert_eq!(&b[..], b"he");
    /// ```
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
    }

    /// Drops the first `n` bytes.
    ///
    /// # Panics
    /// If `n > len`.
    ///
    /// ```
    /// let mut b = ferry::Buf::from(b"hello".to_vec());
    /// b.advance(3);
    /// assert_eq!(&b[..], b"lo");
    /// ```
    pub fn advance(&mut self, n: usize) {
        assert!(
            n <= self.len,
            "advance({n}) past the end of {} bytes",
            self.len
        );
        // SAFETY: n <= len keeps the pointer inside (or one past) the buffer.
        self.ptr = unsafe { NonNull::new_unchecked(self.ptr.as_ptr().add(n)) };
        self.len -= n;
    }

    /// Empties the buffer (the block is released if this was its last view).
    pub fn clear(&mut self) {
        *self = Buf::new();
    }

    /// True if no other `Buf` or `BufMut` shares this buffer's block.
    ///
    /// ```
    /// let a = ferry::Buf::from(vec![1, 2, 3]);
    /// assert!(a.is_unique());
    /// let b = a.clone();
    /// assert!(!a.is_unique());
    /// drop(b);
    /// assert!(a.is_unique());
    /// ```
    pub fn is_unique(&self) -> bool {
        self.block.is_unique()
    }

    /// Turns a unique buffer back into a writable `BufMut` holding the same
    /// bytes (and the block's head and tail room) without copying; gives the
    /// `Buf` back if it is shared or its memory is not ferry's to write
    /// (static, mapped or foreign). The block moves to a new generation, so
    /// earlier [`ContentId`]s no longer match.
    ///
    /// ```
    /// let a = ferry::Buf::from(vec![1, 2, 3]);
    /// let id = a.content_id();
    /// let mut m = a.try_into_mut().expect("unique");
    /// m[0] = 9;
    /// let b = m.freeze();
    /// assert_ne!(b.content_id(), id);
    /// ```
    pub fn try_into_mut(self) -> Result<BufMut, Buf> {
        if !(self.block.is_unique() && self.block.is_writable() && self.block.unseal()) {
            return Err(self);
        }
        let Buf {
            ptr,
            len,
            mut block,
        } = self;
        block.bump_generation();
        let head = ptr.as_ptr() as usize - block.data().as_ptr() as usize;
        Ok(BufMut::from_block(block, head, len))
    }

    /// Marks the block lent to the kernel if its memory allows it (see
    /// `Block::lend`): true if the kernel may hold references to these
    /// pages for as long as it likes.
    pub(crate) fn lend(&self) -> bool {
        self.block.lend()
    }

    /// Is lending this buffer's block sure to be cheap: is its memory never
    /// reused, or is the block still shared beyond this `Buf` (kept by
    /// someone, so not about to be recycled)? A unique heap or pool block
    /// handed over is recycled right after the write, and dropping and
    /// faulting in its pages then costs more than the copy lending saves
    /// (docs/BENCHMARKS.md, "fbufs: where write_buf starts lending",
    /// measured 2026-11-25 at 18914ce).
    pub(crate) fn worth_lending(&self) -> bool {
        self.block.lends_for_free() || !self.block.is_unique()
    }

    /// Was the block lent to the kernel (and is it not writable again)?
    #[cfg(all(test, not(miri)))]
    pub(crate) fn is_lent(&self) -> bool {
        self.block.is_lent()
    }

    /// The id of these bytes: equal ids mean equal bytes for the life of the
    /// process.
    ///
    /// A file mapping known to have lost bytes (see
    /// [`is_intact`](Self::is_intact)) has [`ContentId::DAMAGED`] set in its
    /// generation, so its id never equals one taken while it was intact.
    pub fn content_id(&self) -> ContentId {
        let damaged = if self.block.mapping_damaged(false) {
            ContentId::DAMAGED
        } else {
            0
        };
        ContentId {
            block: self.block.id(),
            generation: self.block.generation() | damaged,
            offset: (self.ptr.as_ptr() as usize).wrapping_sub(self.block.data().as_ptr() as usize),
            len: self.len,
        }
    }

    /// True if both views share one block (and so one allocation).
    pub fn shares_block_with(&self, other: &Buf) -> bool {
        self.block.id() == other.block.id() && self.block.id() != 0
    }

    /// False if these bytes come from a file mapping that no longer holds
    /// all the bytes it was made with; what it lost reads as zeros (never as
    /// a crash, and never as bytes a writer put in the file later). A
    /// mapping loses bytes when another process shrinks or empties the file
    /// under it, or — for a leased mapping ([`Buf::map_file`],
    /// [`MappedFile`](crate::MappedFile)) — when a writer came and no
    /// memory could be had for the snapshot, or the file was changed in a
    /// way the lease does not announce (a read-only `open` with `O_TRUNC`).
    /// For a leased mapping this asks the file itself (one `fstat`), so a
    /// change is found even before the lost bytes are read. Always true
    /// for other buffers. Once false, it stays false, and the
    /// [`content_id`](Self::content_id) changes.
    ///
    /// ```
    /// assert!(ferry::Buf::from(vec![1u8]).is_intact());
    /// ```
    pub fn is_intact(&self) -> bool {
        !self.block.mapping_damaged(true)
    }

    /// [`is_intact`](Self::is_intact) without a system call: what ferry
    /// knows so far (the SIGBUS guard's evidence, a lost snapshot).
    pub(crate) fn known_intact(&self) -> bool {
        !self.block.mapping_damaged(false)
    }

    /// Writes all of the bytes to `fd` (EINTR retried, partial writes
    /// resumed, no SIGPIPE: a closed pipe is an `EPIPE` error).
    ///
    /// Bytes that are a file's own pages (a [`Buf::map_file`] or
    /// [`Buf::map_file_unchecked`] buffer, or a region of a mapped stream
    /// taken with `into_buf`) going to a pipe are handed over by reference
    /// with `vmsplice`: the pipe holds the page cache's pages and nothing
    /// is copied — as `splice` from the file would, the reader sees the
    /// file's contents as they are when it reads (the `Buf` itself keeps
    /// its bytes). A leased mapping that a writer already turned into a
    /// private snapshot is not the file's pages any more, and is copied.
    /// Everything else is written with `write(2)` (`send` on a socket). On
    /// an error a prefix of the bytes may have been written.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let (r, w) = std::io::pipe()?;
    /// ferry::Buf::from(b"by reference or by copy".to_vec()).write_all_to(&w)?;
    /// drop(w);
    /// let mut got = String::new();
    /// std::io::Read::read_to_string(&mut &r, &mut got)?;
    /// assert_eq!(got, "by reference or by copy");
    /// # Ok(()) }
    /// ```
    pub fn write_all_to(&self, fd: impl std::os::fd::AsFd) -> std::io::Result<()> {
        use crate::sys::fileio::{fd_info, vmsplice_all, write_all, WriteKind};
        let fd = fd.as_fd();
        let info = fd_info(fd)?;
        let by_reference = info.write == WriteKind::Pipe && self.block.maps_file();
        let (done, err) = if by_reference {
            vmsplice_all(fd, self)
        } else {
            write_all(fd, info.write, self, None)
        };
        match err {
            None => Ok(()),
            Some(e) if by_reference && e.raw_os_error() == Some(libc::EFAULT) => {
                Err(std::io::Error::other(format!(
                    "the file behind this buffer shrank: the pages after its first {done} bytes \
                     are gone and cannot be passed on"
                )))
            }
            Some(e) => Err(e),
        }
    }

    /// The bytes of memory this buffer keeps alive: its whole block, of
    /// which it may be a small slice (see `Block::footprint`); `None` for
    /// a foreign owner's bytes.
    pub(crate) fn footprint(&self) -> Option<usize> {
        self.block.footprint()
    }

    /// True if the block is a pool slot.
    pub fn is_pooled(&self) -> bool {
        self.block.is_pool_slot()
    }
}

impl Default for Buf {
    fn default() -> Buf {
        Buf::new()
    }
}

impl Clone for Buf {
    #[inline]
    fn clone(&self) -> Buf {
        Buf {
            ptr: self.ptr,
            len: self.len,
            block: self.block.clone(),
        }
    }
}

impl Deref for Buf {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for Buf {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for Buf {
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

impl fmt::Debug for Buf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        super::fmt::debug_bytes(f, self.as_slice())
    }
}

impl PartialEq for Buf {
    fn eq(&self, other: &Buf) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl Eq for Buf {}

impl PartialOrd for Buf {
    fn partial_cmp(&self, other: &Buf) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Buf {
    fn cmp(&self, other: &Buf) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl Hash for Buf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        // Same as `[u8]`'s hash, as `Borrow<[u8]>` requires.
        self.as_slice().hash(state)
    }
}

impl PartialEq<[u8]> for Buf {
    fn eq(&self, other: &[u8]) -> bool {
        self.as_slice() == other
    }
}
impl PartialEq<&[u8]> for Buf {
    fn eq(&self, other: &&[u8]) -> bool {
        self.as_slice() == *other
    }
}
impl<const N: usize> PartialEq<[u8; N]> for Buf {
    fn eq(&self, other: &[u8; N]) -> bool {
        self.as_slice() == other
    }
}
impl PartialEq<Vec<u8>> for Buf {
    fn eq(&self, other: &Vec<u8>) -> bool {
        self.as_slice() == other.as_slice()
    }
}
impl PartialEq<Buf> for [u8] {
    fn eq(&self, other: &Buf) -> bool {
        self == other.as_slice()
    }
}
impl PartialEq<Buf> for &[u8] {
    fn eq(&self, other: &Buf) -> bool {
        *self == other.as_slice()
    }
}

/// Takes the Vec's allocation without copying.
impl From<Vec<u8>> for Buf {
    fn from(v: Vec<u8>) -> Buf {
        let block = Block::from_vec(v);
        Buf {
            ptr: block.data(),
            len: block.cap(),
            block,
        }
    }
}

/// Takes the String's allocation without copying.
impl From<String> for Buf {
    fn from(s: String) -> Buf {
        Buf::from(s.into_bytes())
    }
}

/// Takes the box's allocation without copying.
impl From<Box<[u8]>> for Buf {
    fn from(b: Box<[u8]>) -> Buf {
        Buf::from(b.into_vec())
    }
}

/// No allocation, no copy.
impl From<&'static [u8]> for Buf {
    fn from(s: &'static [u8]) -> Buf {
        Buf::from_static(s)
    }
}

/// No allocation, no copy.
impl From<&'static str> for Buf {
    fn from(s: &'static str) -> Buf {
        Buf::from_static(s.as_bytes())
    }
}

impl From<BufMut> for Buf {
    fn from(m: BufMut) -> Buf {
        m.freeze()
    }
}
