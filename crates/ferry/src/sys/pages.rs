//! Anonymous memory: the page-aligned, zeroed allocations ferry's blocks
//! and pool slots are made of (fresh mappings from 64 KiB up, whose pages
//! the kernel zeroes as they are first touched), slots that are mappings
//! of their own so that they can be made read-only, and dropping the
//! pages of memory the kernel may still hold references to.

use std::io;
use std::ptr::NonNull;

/// Asks for transparent huge pages behind the whole pages of `spare`
/// (memory the caller owns and is about to fill, such as a vector's
/// reserved capacity). With THP set to `madvise`, the default on many
/// systems, a large fresh allocation otherwise takes a fault and a zero
/// fill for every 4 KiB. Spans under 2 MiB are left alone, and errors
/// (a kernel without THP) are ignored: advice is only a hint.
pub(crate) fn advise_huge(spare: &mut [std::mem::MaybeUninit<u8>]) {
    const PAGE: usize = 4096;
    let start = (spare.as_ptr() as usize).next_multiple_of(PAGE);
    let end = (spare.as_ptr() as usize + spare.len()) & !(PAGE - 1);
    if end <= start || end - start < 2 << 20 || cfg!(miri) {
        return;
    }
    // SAFETY: `start..end` lies inside `spare`, memory the caller holds
    // exclusively; MADV_HUGEPAGE changes no contents, only the size of
    // the pages that later faults allocate.
    let _ = unsafe {
        rustix::mm::madvise(
            start as *mut std::ffi::c_void,
            end - start,
            rustix::mm::Advice::LinuxHugepage,
        )
    };
}

/// Zeroed allocations at least this large, aligned to at most a page, are
/// fresh anonymous mappings rather than the C allocator's: the kernel
/// hands out zero pages as they are first touched, where `alloc_zeroed`
/// with page alignment would `memset` the whole block at once (for a
/// 128 KiB stream buffer of which a 1 KiB file touches one page: 32 page
/// faults and the memset; `ferry diff` of two 1 KiB files took 139 page
/// faults before, 108 after; docs/BENCHMARKS.md, "start-up: what the
/// dynamic binary cost", measured 2026-11-23 at fc54b4d).
const ANON_MIN: usize = 64 << 10;

fn anonymous(layout: std::alloc::Layout) -> bool {
    cfg!(not(miri)) && layout.size() >= ANON_MIN && layout.align() <= super::page_size()
}

/// Drops the pages of `len` bytes at `base` (`MADV_DONTNEED`): the next
/// touch maps fresh zeroed pages, while anyone else holding a reference to
/// the old ones (a pipe, a socket's queue) keeps them, unchanged.
///
/// Locked memory (`mlock`, `mlockall`) refuses `MADV_DONTNEED` (`EINVAL`),
/// as do some other mappings: the range then gets a fresh private
/// anonymous mapping laid over it (`MAP_FIXED`), which drops the old pages
/// just as well (a range that was locked by `mlock` alone is no longer
/// locked; under `mlockall(MCL_FUTURE)` it is locked again). False if
/// both failed: the old pages are still there, and the memory must never
/// be written (reused) again.
///
/// # Safety
///
/// `base` is page-aligned, `len` a whole number of pages, and the range
/// private anonymous memory the caller owns whose contents nobody needs.
#[must_use = "memory whose pages could not be dropped must never be reused"]
pub(crate) unsafe fn drop_pages(base: NonNull<u8>, len: usize) -> bool {
    #[cfg(miri)]
    {
        // Miri has no madvise: zero the bytes, which is what a later
        // reader of the memory would see.
        // SAFETY: per the contract, ours and writable.
        unsafe { std::ptr::write_bytes(base.as_ptr(), 0, len) };
        true
    }
    #[cfg(not(miri))]
    {
        // SAFETY: per the contract; MADV_DONTNEED on private anonymous
        // memory only replaces its pages with zero-fill-on-demand ones.
        let dropped = unsafe {
            rustix::mm::madvise(base.as_ptr().cast(), len, rustix::mm::Advice::LinuxDontNeed)
        };
        if dropped.is_ok() {
            return true;
        }
        // SAFETY: the range is whole pages the caller owns outright, of
        // private anonymous memory whose contents nobody needs (the
        // contract): replacing its mapping by a fresh one of the same
        // kind, readable and writable, at the same address, takes nothing
        // from anyone else.
        let fresh = unsafe {
            rustix::mm::mmap_anonymous(
                base.as_ptr().cast(),
                len,
                rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
                rustix::mm::MapFlags::PRIVATE | rustix::mm::MapFlags::FIXED,
            )
        };
        matches!(fresh, Ok(p) if p == base.as_ptr().cast())
    }
}

/// A fresh private anonymous read-write mapping of `len` (non-zero)
/// bytes, zeroed; null if refused. The caller owns it until it unmaps it.
#[cfg_attr(miri, allow(dead_code))]
fn map_anonymous(len: usize) -> *mut u8 {
    // SAFETY: a fresh private anonymous mapping (null hint, no MAP_FIXED)
    // replaces nothing.
    let r = unsafe {
        rustix::mm::mmap_anonymous(
            std::ptr::null_mut(),
            len,
            rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
            rustix::mm::MapFlags::PRIVATE,
        )
    };
    let Ok(p) = r else {
        return std::ptr::null_mut();
    };
    // A large buffer gets transparent huge pages where THP is `madvise`
    // (common, and this machine's setting): each first touch of 2 MiB is
    // one fault instead of 512, and copies into and out of it walk one
    // page table entry per 2 MiB (in a virtual machine a miss in the TLB
    // walks two levels of tables). Measured in `ferry sort`'s run writes.
    if len >= 2 << 20 {
        // SAFETY: the mapping just made, of `len` bytes, not yet shared;
        // MADV_HUGEPAGE changes no contents, only how pages are allocated.
        let _ = unsafe { rustix::mm::madvise(p, len, rustix::mm::Advice::LinuxHugepage) };
    }
    p.cast()
}

/// Zeroed memory for `layout` (whose size is not zero); null if refused.
/// Release it with [`dealloc_zeroed`] and the same layout.
pub(crate) fn alloc_zeroed(layout: std::alloc::Layout) -> *mut u8 {
    debug_assert!(layout.size() > 0);
    if anonymous(layout) {
        // (Released by `dealloc_zeroed`.)
        map_anonymous(layout.size())
    } else {
        // SAFETY: the layout's size is not zero (checked by the callers).
        unsafe { std::alloc::alloc_zeroed(layout) }
    }
}

/// Releases memory from [`alloc_zeroed`].
///
/// # Safety
/// `ptr` came from `alloc_zeroed(layout)` with this same layout, nothing
/// refers to it any more, and it is released only once.
pub(crate) unsafe fn dealloc_zeroed(ptr: NonNull<u8>, layout: std::alloc::Layout) {
    if anonymous(layout) {
        // SAFETY: per the contract, a mapping of exactly this length made
        // by `alloc_zeroed` and no longer used.
        let _ = unsafe { rustix::mm::munmap(ptr.as_ptr().cast(), layout.size()) };
    } else {
        // SAFETY: per the contract, from the global allocator with `layout`.
        unsafe { std::alloc::dealloc(ptr.as_ptr(), layout) }
    }
}

/// Zeroed memory of `layout.size()` bytes that is a mapping of its own
/// (anonymous, private), whatever its size: pages nobody else's
/// allocation shares, so [`protect`] may change them and [`dealloc_pages`]
/// may release them whatever their protection. Null if refused. Under
/// Miri (no `mmap`) the global allocator's, page aligned.
pub(crate) fn alloc_pages(layout: std::alloc::Layout) -> *mut u8 {
    debug_assert!(layout.size() > 0 && layout.align() <= super::page_size());
    #[cfg(miri)]
    {
        match std::alloc::Layout::from_size_align(layout.size(), super::page_size()) {
            // SAFETY: the size is not zero (the caller's contract).
            Ok(l) => unsafe { std::alloc::alloc_zeroed(l) },
            Err(_) => std::ptr::null_mut(),
        }
    }
    #[cfg(not(miri))]
    {
        // (Released by `dealloc_pages`.)
        map_anonymous(layout.size())
    }
}

/// Releases memory from [`alloc_pages`], read-only or not.
///
/// # Safety
/// `ptr` came from `alloc_pages(layout)` with this same layout, nothing
/// refers to it any more, and it is released only once.
pub(crate) unsafe fn dealloc_pages(ptr: NonNull<u8>, layout: std::alloc::Layout) {
    #[cfg(miri)]
    {
        if let Ok(l) = std::alloc::Layout::from_size_align(layout.size(), super::page_size()) {
            // SAFETY: per the contract, from the global allocator with `l`.
            unsafe { std::alloc::dealloc(ptr.as_ptr(), l) }
        }
    }
    #[cfg(not(miri))]
    {
        // SAFETY: per the contract, a mapping of exactly this length made
        // by `alloc_pages` and no longer used; munmap ignores protection.
        let _ = unsafe { rustix::mm::munmap(ptr.as_ptr().cast(), layout.size()) };
    }
}

/// Makes `len` bytes at `ptr` read-only (`read_only`) or readable and
/// writable again (`mprotect`): the exchange's debug mode, in which a pool
/// slot handed over (frozen, written) faults at the first write through a
/// pointer a C caller kept. Under Miri it does nothing (Miri has no
/// `mprotect`; the protection is a debugging aid, not something the Rust
/// side's soundness rests on: Rust code cannot write through a `Buf`).
///
/// # Safety
/// `ptr..ptr + len` must be whole pages (`ptr` page aligned, `len` a
/// multiple of the page size) of memory the caller owns outright — no
/// other allocation shares those pages — and, for `read_only`, nothing
/// may write to them until they are made writable again.
pub(crate) unsafe fn protect(ptr: NonNull<u8>, len: usize, read_only: bool) -> io::Result<()> {
    debug_assert!(
        (ptr.as_ptr() as usize).is_multiple_of(super::page_size())
            && len.is_multiple_of(super::page_size())
    );
    #[cfg(miri)]
    {
        let _ = (ptr, len, read_only);
        Ok(())
    }
    #[cfg(not(miri))]
    {
        use rustix::mm::MprotectFlags;
        let flags = if read_only {
            MprotectFlags::READ
        } else {
            MprotectFlags::READ | MprotectFlags::WRITE
        };
        // SAFETY: whole pages the caller owns alone (the contract); read
        // access is kept either way, so no reader faults, and writers are
        // the caller's to hold back while the pages are read-only.
        unsafe { rustix::mm::mprotect(ptr.as_ptr().cast(), len, flags) }.map_err(io::Error::from)
    }
}

#[cfg(test)]
mod zeroed_tests {
    use super::*;
    use std::alloc::Layout;

    /// Every size around the threshold, at byte and page alignment: the
    /// memory reads as zeros, takes writes at both ends, and goes back.
    #[test]
    fn zeroed_allocations_of_every_kind() {
        let page = crate::sys::page_size();
        for size in [1, 4096, ANON_MIN - 1, ANON_MIN, ANON_MIN + 1, 1 << 20] {
            for align in [1, 64, page] {
                let layout = Layout::from_size_align(size, align).unwrap();
                let p = NonNull::new(alloc_zeroed(layout)).expect("allocation refused");
                assert_eq!(p.as_ptr() as usize % align, 0);
                // SAFETY: `p` is `size` bytes, ours until released below.
                let s = unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), size) };
                assert!(s.iter().all(|&b| b == 0), "{size} bytes at {align}");
                s[0] = 1;
                s[size - 1] = 2;
                // SAFETY: from `alloc_zeroed(layout)`, released once.
                unsafe { dealloc_zeroed(p, layout) };
            }
        }
    }
}
