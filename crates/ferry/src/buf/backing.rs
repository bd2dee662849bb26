//! Where a block's memory came from, and so how it goes back: [`Backing`].
//!
//! A pool slot goes back to its pool, which sits above the blocks in the
//! memory layer: a block knows its pool only through the [`SlotLink`] the
//! pool put in its header — the pool's own reference, type-erased, and a
//! table of the pool's functions ([`SlotVtable`]) that take a slot back
//! and let go of the pool (the `bytes` crate's vtable, for one kind of
//! owner). So `buf` never names `pool`.
//!
//! ```text
//!   last Block drop ─► Backing::Pool(link) ─► (link.vtable.recycle)(header)
//!   Header drop     ─► memory freed, then    (link.vtable.release)(owner)
//! ```
//!
//! A foreign owner whose bytes are a shared mapping of a file (an ipc
//! pool's memfd, mapped read-only in the receiver) says so through a
//! [`FileOwner`]: the block can then name the file and offset behind any
//! of its bytes ([`Block::file_at`](super::block::Block::file_at)), and a
//! write may hand them to the kernel from the file (`sendfile`) instead
//! of from memory.

use super::block::Header;
use std::alloc::Layout;
use std::os::fd::{BorrowedFd, RawFd};
use std::ptr::NonNull;

/// A byte owner whose bytes are also a file's: `as_ref()` is a shared
/// mapping of the file's bytes from [`file`](Self::file)'s offset on, so
/// reading the file there gives the same bytes as reading the memory.
pub(crate) trait FileOwner: AsRef<[u8]> + Send + Sync + 'static {
    /// The file, and the offset in it of the first byte of `as_ref()`.
    /// The descriptor must stay open while the owner lives.
    fn file(&self) -> (BorrowedFd<'_>, u64);
}

/// A foreign owner's [`FileOwner::file`], type-erased: the descriptor as
/// a raw one (open as long as the owner lives) and the offset.
pub(crate) type FileFn = unsafe fn(*mut ()) -> (RawFd, u64);

/// Where a block's memory came from, and so how to give it back.
pub(crate) enum Backing {
    /// Memory that is never released: `'static` slices and the empty block.
    Static,
    /// Allocated with `layout`: by `sys::pages::alloc_zeroed` if `zeroed`,
    /// else by the global allocator (a `Vec`'s buffer).
    Heap {
        base: NonNull<u8>,
        layout: Layout,
        zeroed: bool,
    },
    /// A read-only file mapping to `munmap` on the last drop, registered
    /// with the SIGBUS guard.
    Mapped {
        base: NonNull<u8>,
        map_len: usize,
        #[cfg(not(miri))]
        guard: Option<crate::sys::sigbus::Registration>,
    },
    /// A mapping of a file ferry holds a read lease on (a
    /// [`MappedFile`](crate::MappedFile) window): unmapped on the last
    /// drop; replaced in place by a private copy if a writer comes.
    Leased(super::leased::Link),
    /// A foreign owner (boxed), dropped by `drop_fn` on the last drop;
    /// `file_fn` names the file its bytes map, for a [`FileOwner`].
    Foreign {
        owner: *mut (),
        drop_fn: unsafe fn(*mut ()),
        file_fn: Option<FileFn>,
    },
    /// A pool slot: goes back to its pool on the last drop.
    Pool(SlotLink),
}

impl Backing {
    /// Gives the block's memory back (the header is being dropped).
    ///
    /// # Safety
    /// `data` is the block's memory, as the header holds it, and nothing
    /// refers to it any more; called once, from the header's drop.
    pub(crate) unsafe fn release(&mut self, data: NonNull<u8>) {
        match self {
            // A leased mapping's link unmaps it when it drops, next.
            Backing::Static | Backing::Leased(_) => {}
            Backing::Heap {
                base,
                layout,
                zeroed,
            } => {
                if layout.size() != 0 {
                    if *zeroed {
                        // SAFETY: `base` came from `alloc_zeroed` with
                        // exactly `layout` and is released only here.
                        unsafe { crate::sys::pages::dealloc_zeroed(*base, *layout) }
                    } else {
                        // SAFETY: `base` was allocated by the global
                        // allocator with exactly `layout` and is released
                        // only here.
                        unsafe { std::alloc::dealloc(base.as_ptr(), *layout) }
                    }
                }
            }
            Backing::Mapped {
                base,
                map_len,
                #[cfg(not(miri))]
                guard,
            } => {
                #[cfg(not(miri))]
                if let Some(g) = guard.take() {
                    g.unregister();
                }
                // SAFETY: the mapping was made for this block alone and the
                // last reference into it is gone.
                unsafe { crate::sys::map::unmap(*base, *map_len) }
            }
            Backing::Foreign { owner, drop_fn, .. } => {
                // SAFETY: `owner` came from `Box::into_raw` of the type that
                // `drop_fn` was instantiated for, and is dropped only here.
                unsafe { drop_fn(*owner) }
            }
            Backing::Pool(link) => {
                if link.protect {
                    // SAFETY: a protecting pool's slot came from
                    // `alloc_pages` with the layout recorded in its link and
                    // is released only here (read-only or not: munmap).
                    unsafe { crate::sys::pages::dealloc_pages(data, link.layout) }
                } else {
                    // SAFETY: a pool slot's memory came from `alloc_zeroed`
                    // with the layout recorded in its link and is released
                    // only here.
                    unsafe { crate::sys::pages::dealloc_zeroed(data, link.layout) }
                }
            }
        }
    }
}

/// What a pool installs in each of its slots: how a block calls back
/// into the pool that made it.
pub(crate) struct SlotVtable {
    /// Takes back a slot whose last reference just went: the header, and
    /// the memory it owns, are the pool's from then on (to keep on a free
    /// list, or to drop).
    pub(crate) recycle: unsafe fn(NonNull<Header>),
    /// Lets go of the pool reference a slot held (its `owner`).
    pub(crate) release: unsafe fn(NonNull<()>),
}

/// A pool slot's tie to its pool, kept in the block header.
pub(crate) struct SlotLink {
    /// The pool, type-erased: a reference the slot holds from its making
    /// to its header's drop, whether it is handed out or free.
    owner: NonNull<()>,
    vtable: &'static SlotVtable,
    /// The pool's size class of the slot.
    pub(crate) class: usize,
    pub(crate) layout: Layout,
    /// The pool's debug mode (`PoolConfig::protect`): the slot is a
    /// mapping of its own (`sys::pages::alloc_pages`), read-only while
    /// frozen.
    pub(crate) protect: bool,
}

impl SlotLink {
    /// The link of a slot of `layout` in size class `class` of the pool
    /// `owner` points to.
    ///
    /// # Safety
    /// `owner` is a reference to the pool that `vtable.release` lets go
    /// of; it must stay valid until then. `vtable.recycle` must accept
    /// any header whose backing is this link and which has no references
    /// left.
    pub(crate) unsafe fn new(
        owner: NonNull<()>,
        vtable: &'static SlotVtable,
        class: usize,
        layout: Layout,
        protect: bool,
    ) -> SlotLink {
        SlotLink {
            owner,
            vtable,
            class,
            layout,
            protect,
        }
    }

    /// The pool's reference, valid while the link lives.
    pub(crate) fn owner(&self) -> NonNull<()> {
        self.owner
    }

    /// The pool's function that takes back a slot with no references left.
    pub(crate) fn recycle(&self) -> unsafe fn(NonNull<Header>) {
        self.vtable.recycle
    }
}

impl Drop for SlotLink {
    fn drop(&mut self) {
        // SAFETY: `owner` is the reference `new` was given for `release`
        // to let go of, and a link drops once.
        unsafe { (self.vtable.release)(self.owner) }
    }
}
