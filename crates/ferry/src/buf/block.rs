//! `Block`: reference-counted memory with a process-unique id and a
//! generation number — the one thing every `Buf`, `BufMut` and pool slot
//! points at.
//!
//! ```text
//!   Buf ─┐                     Header (one allocation per block)
//!   Buf ─┼──► NonNull<Header> ─► refs | id | generation | data,cap | backing
//!  BufMut┘                                                 │
//!                                                          ▼
//!                             [ ......... cap usable bytes ......... ]
//!                             ▲ data (may sit inside a larger region:
//!                               backing keeps the base and layout apart)
//! ```
//!
//! The header is reference counted by hand (not `Arc`) so that a pool can
//! keep a slot's header together with its memory and hand both out again
//! without allocating: that is what makes pool `alloc` cheaper than `malloc`.

pub(crate) use super::backing::{Backing, FileOwner, SlotLink, SlotVtable};
use crate::sync::atomic::{fence, AtomicU64, AtomicUsize, Ordering};
use std::alloc::Layout;
use std::ptr::NonNull;

/// More references than this means a leak loop: abort like `Arc` does.
const MAX_REFS: usize = isize::MAX as usize;
/// The shared static header starts here, so it never reaches zero.
const STATIC_REFS: usize = 1 << (usize::BITS - 2);

/// Process-unique block ids; 0 is the static block. (A plain counter:
/// std's atomic even in loom models.)
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

pub(crate) fn next_block_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

pub(crate) struct Header {
    refs: AtomicUsize,
    id: u64,
    generation: AtomicU64,
    data: NonNull<u8>,
    cap: usize,
    /// The kernel may hold references to this block's pages (a `vmsplice`
    /// or a splice of them into a socket), with no word of when it lets
    /// go: nobody may write them again. The block is no longer writable
    /// (`try_into_mut` refuses it), and before its memory is used again
    /// (a pool slot's next hand-out, the allocator's next allocation) its
    /// pages are dropped (`MADV_DONTNEED`), so that the kernel keeps the
    /// old pages and the memory gets fresh ones.
    lent: std::sync::atomic::AtomicBool,
    pub(crate) backing: Backing,
}

// SAFETY: the header's plain fields are written only while one owner holds
// it exclusively (refs == 1 through a `BufMut`, or 0 inside a pool lock);
// shared access only reads them. The pointers it holds are to memory owned
// by the block, and foreign owners are required to be `Send + Sync`.
unsafe impl Send for Header {}
// SAFETY: see above.
unsafe impl Sync for Header {}

/// The block behind every empty buffer and every `&'static [u8]`: never
/// freed, never writable, capacity 0.
#[cfg(not(loom))]
static STATIC_HEADER: Header = Header {
    refs: AtomicUsize::new(STATIC_REFS),
    id: 0,
    generation: AtomicU64::new(0),
    data: NonNull::dangling(),
    cap: 0,
    lent: std::sync::atomic::AtomicBool::new(false),
    backing: Backing::Static,
};

#[cfg(not(loom))]
fn static_header() -> &'static Header {
    &STATIC_HEADER
}

#[cfg(loom)]
loom::lazy_static! {
    static ref STATIC_HEADER: Header = Header {
        refs: AtomicUsize::new(STATIC_REFS),
        id: 0,
        generation: AtomicU64::new(0),
        data: NonNull::dangling(),
        cap: 0,
        lent: std::sync::atomic::AtomicBool::new(false),
        backing: Backing::Static,
    };
}

#[cfg(loom)]
fn static_header() -> &'static Header {
    &STATIC_HEADER
}

impl Header {
    pub(crate) fn new(id: u64, data: NonNull<u8>, cap: usize, backing: Backing) -> Header {
        Header {
            refs: AtomicUsize::new(1),
            id,
            generation: AtomicU64::new(0),
            data,
            cap,
            lent: std::sync::atomic::AtomicBool::new(false),
            backing,
        }
    }

    /// Before the memory of a block that was [lent](Block::lend) is used
    /// again: drops its pages (the kernel keeps its references to the old
    /// ones; the next touch here gets zeroed pages) and clears the mark.
    /// Only for a header nobody else can see.
    ///
    /// False if the pages could not be dropped (see
    /// `sys::pages::drop_pages`): the kernel may still read the memory as
    /// it is, so it must never be reused — the caller leaks it.
    #[must_use = "memory whose pages could not be dropped must never be reused"]
    pub(crate) fn forget_lent_pages(&mut self) -> bool {
        if !*self.lent.get_mut() {
            return true;
        }
        // SAFETY: the block owns `cap` bytes at `data`, page-aligned and a
        // whole number of pages (`lend` marks no other block), private
        // anonymous memory; nobody refers to them any more (exclusive
        // access), so their contents may go.
        if !unsafe { crate::sys::pages::drop_pages(self.data, self.cap) } {
            return false;
        }
        *self.lent.get_mut() = false;
        true
    }

    /// The block's memory: where it starts and its capacity.
    pub(crate) fn memory(&self) -> (NonNull<u8>, usize) {
        (self.data, self.cap)
    }

    /// Makes a header that pools keep between uses live again: one
    /// reference, and a new generation if `bump`.
    ///
    /// Only for a header nobody else can see (refs == 0, out of any list).
    pub(crate) fn revive(&mut self, bump: bool) {
        // Exclusive access: plain writes (loom's atomics spell it with_mut).
        #[cfg(not(loom))]
        {
            if bump {
                *self.generation.get_mut() += 1;
            }
            *self.refs.get_mut() = 1;
        }
        #[cfg(loom)]
        {
            if bump {
                self.generation.with_mut(|g| *g += 1);
            }
            self.refs.with_mut(|r| *r = 1);
        }
    }
}

impl Drop for Header {
    fn drop(&mut self) {
        // Memory going back to the allocator may be handed out again: if
        // the kernel may still read its old pages, it is leaked instead
        // (the backing's other fields, a pool link, still drop).
        if !self.forget_lent_pages() {
            return;
        }
        // SAFETY: the header is going, with the last reference to its
        // block: nothing refers to its `cap` bytes at `data` any more.
        unsafe { self.backing.release(self.data) }
    }
}

/// A counted reference to a block's header.
pub(crate) struct Block {
    hdr: NonNull<Header>,
}

// SAFETY: a Block is a counted pointer to a `Send + Sync` header; the count
// is atomic.
unsafe impl Send for Block {}
// SAFETY: as above.
unsafe impl Sync for Block {}

/// The smallest alignment any ferry heap block gets.
pub(crate) const MIN_ALIGN: usize = 16;

/// The alignment ferry uses for a buffer of `cap` bytes when the caller asks
/// for at least `align`: page alignment from a page up (copies into a buffer
/// just past a page boundary are several times slower on this hardware).
pub(crate) fn default_align(cap: usize, align: usize) -> usize {
    let page = crate::sys::page_size();
    let natural = if cap >= page { page } else { MIN_ALIGN };
    natural.max(align)
}

impl Block {
    /// The shared empty block: no allocation.
    pub(crate) fn empty() -> Block {
        static_header().refs.fetch_add(1, Ordering::Relaxed);
        Block {
            hdr: NonNull::from(static_header()),
        }
    }

    fn from_header(h: Header) -> Block {
        Block {
            hdr: NonNull::from(Box::leak(Box::new(h))),
        }
    }

    /// Zero-filled heap memory of `cap` bytes aligned to `align` (a power of
    /// two). Zero-filling once keeps every byte of a block initialised, so
    /// spare capacity can be handed out as `&mut [u8]` safely.
    pub(crate) fn heap_zeroed(cap: usize, align: usize) -> Block {
        match Block::try_heap_zeroed(cap, align) {
            Ok(b) => b,
            Err(Some(layout)) => std::alloc::handle_alloc_error(layout),
            Err(None) => {
                panic!("ferry: buffer of {cap} bytes aligned to {align} is not a valid layout")
            }
        }
    }

    /// [`Block::heap_zeroed`] that fails instead of aborting: `Err(None)`
    /// when no such layout exists (more than `isize::MAX` bytes),
    /// `Err(Some(layout))` when the allocator refused it.
    pub(crate) fn try_heap_zeroed(cap: usize, align: usize) -> Result<Block, Option<Layout>> {
        if cap == 0 {
            return Ok(Block::empty());
        }
        let layout = Layout::from_size_align(cap, align).map_err(|_| None)?;
        let ptr = crate::sys::pages::alloc_zeroed(layout);
        let base = NonNull::new(ptr).ok_or(Some(layout))?;
        Ok(Block::from_header(Header::new(
            next_block_id(),
            base,
            cap,
            Backing::Heap {
                base,
                layout,
                zeroed: true,
            },
        )))
    }

    /// Takes over a `Vec<u8>`'s allocation without copying. Only the
    /// initialised part (`len`) is usable capacity; the spare part is
    /// released with the rest when the block goes.
    pub(crate) fn from_vec(v: Vec<u8>) -> Block {
        if v.capacity() == 0 {
            return Block::empty();
        }
        let mut v = std::mem::ManuallyDrop::new(v);
        let layout = match Layout::array::<u8>(v.capacity()) {
            Ok(l) => l,
            Err(_) => unreachable!("a Vec's capacity is always a valid layout"),
        };
        // SAFETY: a Vec with non-zero capacity has a non-null pointer.
        let base = unsafe { NonNull::new_unchecked(v.as_mut_ptr()) };
        Block::from_header(Header::new(
            next_block_id(),
            base,
            v.len(),
            Backing::Heap {
                base,
                layout,
                zeroed: false,
            },
        ))
    }

    /// Takes any owner of bytes without copying; returns the block and the
    /// owner's byte range (which `data`/`cap` also describe).
    pub(crate) fn from_owner<T>(owner: T) -> Block
    where
        T: AsRef<[u8]> + Send + Sync + 'static,
    {
        Block::from_boxed_owner(owner, None)
    }

    /// [`from_owner`](Self::from_owner) for an owner whose bytes map a
    /// file: the block can name the file behind them
    /// ([`file_at`](Self::file_at)).
    pub(crate) fn from_file_owner<T: FileOwner>(owner: T) -> Block {
        unsafe fn file_of<T: FileOwner>(p: *mut ()) -> (std::os::fd::RawFd, u64) {
            use std::os::fd::AsRawFd;
            // SAFETY: `p` came from `Box::<T>::into_raw` and lives until
            // the block's `drop_fn` runs (the caller holds the block).
            let (fd, off) = unsafe { &*p.cast::<T>() }.file();
            (fd.as_raw_fd(), off)
        }
        Block::from_boxed_owner(owner, Some(file_of::<T>))
    }

    fn from_boxed_owner<T>(owner: T, file_fn: Option<super::backing::FileFn>) -> Block
    where
        T: AsRef<[u8]> + Send + Sync + 'static,
    {
        unsafe fn drop_boxed<T>(p: *mut ()) {
            // SAFETY: `p` came from `Box::<T>::into_raw` (see below).
            drop(unsafe { Box::from_raw(p.cast::<T>()) })
        }
        let raw = Box::into_raw(Box::new(owner));
        // SAFETY: `raw` is a live, uniquely owned T until `drop_boxed` runs;
        // the bytes it lends stay put because the box is never moved again
        // (we keep only the raw pointer).
        let bytes: &[u8] = unsafe { (*raw).as_ref() };
        let data = NonNull::from(bytes).cast::<u8>();
        Block::from_header(Header::new(
            next_block_id(),
            data,
            bytes.len(),
            Backing::Foreign {
                owner: raw.cast(),
                drop_fn: drop_boxed::<T>,
                file_fn,
            },
        ))
    }

    /// The file whose shared mapping the block's memory is, and the offset
    /// in it of the block's first byte (`data`): for a block made by
    /// [`from_file_owner`](Self::from_file_owner), `None` for any other.
    pub(crate) fn file_at(&self) -> Option<(std::os::fd::BorrowedFd<'_>, u64)> {
        match &self.header().backing {
            Backing::Foreign {
                owner,
                file_fn: Some(f),
                ..
            } => {
                // SAFETY: `owner` is the live boxed `FileOwner` that `f`
                // was instantiated for: the header holds it until its
                // drop, and `&self` keeps the header alive.
                let (fd, off) = unsafe { f(*owner) };
                // SAFETY: the owner keeps the descriptor open while it
                // lives (`FileOwner::file`'s contract), and it lives at
                // least as long as `&self`.
                Some((unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }, off))
            }
            _ => None,
        }
    }

    /// A block over `cap` bytes at `data` that `backing` owns.
    pub(crate) fn from_backing(data: NonNull<u8>, cap: usize, backing: Backing) -> Block {
        Block::from_header(Header::new(next_block_id(), data, cap, backing))
    }

    /// A read-only mapping of `len` bytes of a file at `offset` (`len > 0`),
    /// with no lease: the caller promises nobody writes it (see
    /// [`Buf::map_file_unchecked`](crate::Buf::map_file_unchecked)).
    pub(crate) fn map(
        fd: std::os::fd::BorrowedFd<'_>,
        offset: u64,
        len: usize,
    ) -> std::io::Result<Block> {
        let m = crate::sys::map::map_readonly(fd, offset, len)?;
        #[cfg(not(miri))]
        let guard = match crate::sys::sigbus::register(m.base.as_ptr() as usize, m.map_len) {
            Some(g) => Some(g),
            None => {
                // SAFETY: just mapped, not yet shared with anyone.
                unsafe { crate::sys::map::unmap(m.base, m.map_len) };
                return Err(std::io::Error::other(
                    "cannot install the SIGBUS guard that file mappings need",
                ));
            }
        };
        // SAFETY: data_offset < map_len, so the pointer stays in the mapping.
        let data = unsafe { NonNull::new_unchecked(m.base.as_ptr().add(m.data_offset)) };
        crate::sys::map::advise_sequential(m.base, m.map_len);
        Ok(Block::from_header(Header::new(
            next_block_id(),
            data,
            len,
            Backing::Mapped {
                base: m.base,
                map_len: m.map_len,
                #[cfg(not(miri))]
                guard,
            },
        )))
    }

    /// Wraps a header that a pool revived (refs == 1).
    ///
    /// # Safety
    /// `hdr` must point to a live header with exactly one reference, which
    /// this block takes over.
    pub(crate) unsafe fn from_revived(hdr: NonNull<Header>) -> Block {
        Block { hdr }
    }

    fn header(&self) -> &Header {
        // SAFETY: while this Block exists the header has a reference and so
        // is alive.
        unsafe { self.hdr.as_ref() }
    }

    pub(crate) fn data(&self) -> NonNull<u8> {
        self.header().data
    }

    pub(crate) fn cap(&self) -> usize {
        self.header().cap
    }

    pub(crate) fn id(&self) -> u64 {
        self.header().id
    }

    pub(crate) fn generation(&self) -> u64 {
        self.header().generation.load(Ordering::Acquire)
    }

    /// True when this is the only reference (Acquire: every other
    /// reference's drop happens-before our use of the memory).
    pub(crate) fn is_unique(&self) -> bool {
        self.header().refs.load(Ordering::Acquire) == 1
    }

    /// Memory ferry itself allocated and may write into once unique (and
    /// not [lent](Self::lend) to the kernel).
    pub(crate) fn is_writable(&self) -> bool {
        matches!(
            self.header().backing,
            Backing::Heap { .. } | Backing::Pool(_)
        ) && !self.header().lent.load(Ordering::Acquire)
    }

    /// May the kernel take references to this block's pages (`vmsplice`)
    /// and keep them for as long as it likes? True for memory never
    /// written again: `'static` bytes, a file's own pages (mapped; they
    /// change only as the file does, as a `splice` from the file would),
    /// and ferry's page-aligned heap and pool blocks, which are marked
    /// lent: never writable again, their pages dropped before the memory
    /// is reused. False for a `Vec`'s memory (the allocator may hand it
    /// out again as it is) and foreign owners.
    pub(crate) fn lend(&self) -> bool {
        let h = self.header();
        let page = crate::sys::page_size();
        let whole_pages =
            (h.data.as_ptr() as usize).is_multiple_of(page) && h.cap.is_multiple_of(page);
        match &h.backing {
            Backing::Static | Backing::Mapped { .. } | Backing::Leased(_) => true,
            Backing::Heap { zeroed: true, .. } | Backing::Pool(_) if whole_pages => {
                h.lent.store(true, Ordering::Release);
                true
            }
            _ => false,
        }
    }

    /// Would [lending](Self::lend) this block cost nothing later? True
    /// for memory that is never reused (`'static` bytes, a file's own
    /// mapped pages); false for heap and pool memory, whose pages must
    /// then be dropped and faulted in afresh when it is reused.
    pub(crate) fn lends_for_free(&self) -> bool {
        matches!(
            self.header().backing,
            Backing::Static | Backing::Mapped { .. } | Backing::Leased(_)
        )
    }

    /// Was this block [lent](Self::lend) (and not yet reused)?
    #[cfg(all(test, not(miri)))]
    pub(crate) fn is_lent(&self) -> bool {
        self.header().lent.load(Ordering::Acquire)
    }

    /// The alignment of the block's data pointer that ferry guarantees.
    pub(crate) fn align(&self) -> usize {
        match &self.header().backing {
            Backing::Heap { layout, .. } => layout.align(),
            Backing::Pool(link) => link.layout.align(),
            _ => 1,
        }
    }

    /// Moves a unique block to a new generation: the bytes are about to
    /// become writable again, so old `ContentId`s must not match them.
    pub(crate) fn bump_generation(&mut self) {
        debug_assert!(self.is_unique());
        self.header().generation.fetch_add(1, Ordering::AcqRel);
    }

    /// True if this block is a file mapping that does not hold all the
    /// bytes it was made with (they now read as zeros): the file shrank
    /// under it, or a leased mapping was lost (no memory for its snapshot,
    /// or a change the lease did not announce). What is known without a
    /// system call; `verify` asks the file too (a leased mapping's).
    pub(crate) fn mapping_damaged(&self, verify: bool) -> bool {
        match &self.header().backing {
            #[cfg(not(miri))]
            Backing::Mapped { guard: Some(g), .. } => g.faulted(),
            Backing::Leased(link) if verify => link.verify(),
            Backing::Leased(link) => link.damaged(),
            _ => false,
        }
    }

    /// Is this block a mapping of a file's pages? (Not once a leased
    /// mapping was replaced by its private snapshot.)
    pub(crate) fn maps_file(&self) -> bool {
        match &self.header().backing {
            Backing::Mapped { .. } => true,
            Backing::Leased(link) => link.maps_file(),
            _ => false,
        }
    }

    /// Is this a slot of a pool in protect mode
    /// ([`PoolConfig::protect`](crate::PoolConfig::protect))?
    pub(crate) fn is_protected_slot(&self) -> bool {
        matches!(&self.header().backing, Backing::Pool(link) if link.protect)
    }

    /// Protect mode: makes a slot's pages read-only as its `BufMut` is
    /// frozen (nothing may write them from now until the slot is handed
    /// out again, or taken back by `unseal`). Does nothing for other
    /// blocks, or if the kernel refuses (the mode is a debugging aid: the
    /// bytes are immutable by Rust's rules either way).
    pub(crate) fn seal(&self) {
        if self.is_protected_slot() {
            let h = self.header();
            // SAFETY: a protecting pool's slot is a mapping of its own
            // (`alloc_pages`) of `cap` bytes, a whole number of pages, that
            // this block owns; from the freeze on nothing writes it (a
            // `Buf` only reads) until `unseal` or the pool's next hand-out
            // make it writable again.
            let _ = unsafe { crate::sys::pages::protect(h.data, h.cap, true) };
        }
    }

    /// Protect mode: makes a sealed slot writable again for a unique
    /// owner (`Buf::try_into_mut`). False if the kernel refused (the
    /// caller must then not write).
    pub(crate) fn unseal(&self) -> bool {
        if !self.is_protected_slot() {
            return true;
        }
        let h = self.header();
        // SAFETY: as in `seal`; making pages writable harms no reader.
        unsafe { crate::sys::pages::protect(h.data, h.cap, false) }.is_ok()
    }

    /// The bytes of memory this block keeps alive for as long as any view
    /// of it lives: its whole allocation (a `Vec`'s capacity, not just its
    /// length), mapping or pool slot; 0 for `'static` bytes; `None` for a
    /// foreign owner, which may hold anything.
    pub(crate) fn footprint(&self) -> Option<usize> {
        let h = self.header();
        match &h.backing {
            Backing::Static => Some(0),
            Backing::Heap { layout, .. } => Some(layout.size()),
            Backing::Mapped { map_len, .. } => Some(*map_len),
            Backing::Leased(_) | Backing::Pool(_) => Some(h.cap),
            Backing::Foreign { .. } => None,
        }
    }

    /// Is this block a pool slot? (For statistics and tests.)
    pub(crate) fn is_pool_slot(&self) -> bool {
        matches!(self.header().backing, Backing::Pool(_))
    }
}

impl Clone for Block {
    fn clone(&self) -> Block {
        let old = self.header().refs.fetch_add(1, Ordering::Relaxed);
        if old > MAX_REFS {
            std::process::abort();
        }
        Block { hdr: self.hdr }
    }
}

impl Block {
    /// Drops a reference known to be the only one (a `BufMut`'s), skipping
    /// the atomic decrement: nobody else can observe the count.
    pub(crate) fn drop_unique(self) {
        debug_assert!(self.is_unique() || self.header().id == 0);
        let hdr = self.hdr;
        if self.header().id == 0 {
            // The shared static block is never unique; count it down.
            drop(self);
            return;
        }
        std::mem::forget(self);
        // SAFETY: this was the only reference.
        unsafe { release(hdr) }
    }
}

/// Takes apart a block whose last reference is gone.
///
/// # Safety
/// No reference to `hdr` may remain.
unsafe fn release(hdr: NonNull<Header>) {
    // SAFETY: the caller guarantees we are the header's last user.
    let recycle = match unsafe { &hdr.as_ref().backing } {
        Backing::Pool(link) => Some(link.recycle()),
        _ => None,
    };
    match recycle {
        // SAFETY: a pool slot with no reference left: its pool's to take
        // back (the link's contract).
        Some(recycle) => unsafe { recycle(hdr) },
        // SAFETY: the last user: the header (from `Box::leak` in
        // `from_header`) and its memory go.
        None => drop(unsafe { Box::from_raw(hdr.as_ptr()) }),
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.header().refs.fetch_sub(1, Ordering::Release) != 1 {
            return;
        }
        fence(Ordering::Acquire);
        // SAFETY: that was the last reference; nobody else can reach the
        // header any more, so we may take it apart.
        unsafe { release(self.hdr) }
    }
}
