//! Read-only file mappings of a byte range.

use std::io;
use std::os::fd::AsFd;
use std::ptr::NonNull;

/// A read-only, shared mapping of part of a file. The caller owns it and
/// must hand it back to [`unmap`] exactly once.
pub(crate) struct Mapping {
    /// Start of the mapping (page aligned).
    pub base: NonNull<u8>,
    /// Length passed to `mmap`, needed again for `munmap`.
    pub map_len: usize,
    /// Where the requested byte range starts inside the mapping.
    pub data_offset: usize,
}

/// Maps `len` bytes of `fd` starting at file offset `offset`, read-only.
/// Pages are mapped as they are touched (the kernel maps 16 cached pages
/// a fault). `MAP_POPULATE`, which ferry used before, saved little on
/// reads and made a program that reads a mapping while it writes another
/// file several times slower on this machine: a C `cp` on ferry's stdio
/// took 0.45–4.02 s (median 1.57) with it and 0.43–0.57 s (median 0.51)
/// without, 7 interleaved rounds each (docs/BENCHMARKS.md).
///
/// `len` must be non-zero. The offset need not be page aligned: the mapping
/// starts at the page below it and `data_offset` says where the range begins.
pub(crate) fn map_readonly(fd: impl AsFd, offset: u64, len: usize) -> io::Result<Mapping> {
    debug_assert!(len > 0);
    let page = super::page_size() as u64;
    let aligned = offset - offset % page;
    let data_offset = (offset - aligned) as usize;
    let map_len = data_offset
        .checked_add(len)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "mapping length overflows"))?;
    // SAFETY: we ask for a fresh mapping (null hint, no MAP_FIXED), so no
    // existing memory is replaced. The mapping is read-only and shared; the
    // caller keeps the returned pointer and length and unmaps it once.
    let ptr = unsafe {
        rustix::mm::mmap(
            std::ptr::null_mut(),
            map_len,
            rustix::mm::ProtFlags::READ,
            rustix::mm::MapFlags::SHARED,
            fd,
            aligned,
        )
    }?;
    let base = NonNull::new(ptr.cast::<u8>())
        .ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
    Ok(Mapping {
        base,
        map_len,
        data_offset,
    })
}

/// Advises the kernel about how a mapping will be used. Errors are ignored:
/// advice is only a hint.
pub(crate) fn advise_sequential(base: NonNull<u8>, len: usize) {
    // SAFETY: `base..base+len` is a live mapping owned by the caller;
    // MADV_SEQUENTIAL changes no contents, only read-ahead policy.
    let _ =
        unsafe { rustix::mm::madvise(base.as_ptr().cast(), len, rustix::mm::Advice::Sequential) };
}

/// Unmaps a mapping made by [`map_readonly`].
///
/// # Safety
/// `base` and `map_len` must come from one [`Mapping`], which must not be
/// used again, and no reference into it may outlive this call.
pub(crate) unsafe fn unmap(base: NonNull<u8>, map_len: usize) {
    // SAFETY: the caller guarantees the range is one live mapping of ours
    // with no outstanding references. munmap of a valid mapping cannot fail
    // except for EINVAL on a bad range, which the caller rules out.
    let _ = unsafe { rustix::mm::munmap(base.as_ptr().cast(), map_len) };
}
