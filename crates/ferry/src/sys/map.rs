//! File mappings: read-only mappings of a byte range, and reads straight
//! into a shared writable mapping of an output file.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd};
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

/// The page-aligned span that maps `len` bytes at file offset `offset`:
/// (aligned offset, where the bytes start in it, length to map).
fn page_span(offset: u64, len: usize) -> io::Result<(u64, usize, usize)> {
    let page = super::page_size() as u64;
    let aligned = offset - offset % page;
    let lead = (offset - aligned) as usize;
    let map_len = lead
        .checked_add(len)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "mapping length overflows"))?;
    Ok((aligned, lead, map_len))
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
    let (aligned, data_offset, map_len) = page_span(offset, len)?;
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

/// How much of a mapping one step of [`snapshot_in_place`] copies: the
/// most address space and memory a snapshot needs beyond the mapping
/// itself at any moment (each step's copy takes the place of the file's
/// pages it replaces). A mapping of 1 GiB becomes 128 private mappings.
pub(crate) const SNAPSHOT_STEP: usize = 8 << 20;

/// Replaces the file mapping at `base..base + len` with a private,
/// read-only copy of its bytes, at the same address, [`SNAPSHOT_STEP`]
/// bytes at a time: anonymous memory is filled from one step of the
/// mapping and then moved over it (`mremap` with `MREMAP_FIXED`), which
/// swaps those pages in one step. A reader on another thread sees the same
/// bytes before, during and after; the file's later changes no longer
/// show. So a snapshot needs room for one step's copy, not the whole
/// mapping's, beside the mapping (an address-space limit such as
/// `ulimit -v` that leaves room for a mapping but not its copy no longer
/// stops it).
///
/// On an error, `Err((done, e))`: the first `done` bytes (a multiple of the
/// step) are the private copy, the rest is still the file's mapping.
///
/// # Safety
/// `base..base + len` must be one live mapping that the caller owns, that
/// nobody unmaps or remaps during the call, and whose bytes do not change
/// during it (its file's writers are held back by a lease). `base` is page
/// aligned.
pub(crate) unsafe fn snapshot_in_place(
    base: NonNull<u8>,
    len: usize,
) -> Result<(), (usize, io::Error)> {
    let mut done = 0;
    while done < len {
        let step = SNAPSHOT_STEP.min(len - done);
        // SAFETY: `done < len`, so the address lies inside the caller's
        // mapping, as does `step` bytes from it; the caller's promises
        // hold for that part as for the whole.
        let r = unsafe { snapshot_step(NonNull::new_unchecked(base.as_ptr().add(done)), step) };
        if let Err(e) = r {
            return Err((done, e));
        }
        done += step;
    }
    Ok(())
}

/// One step of [`snapshot_in_place`]: the whole of `at..at + len` or, on an
/// error, none of it.
///
/// # Safety
/// As for [`snapshot_in_place`], for this part.
unsafe fn snapshot_step(at: NonNull<u8>, len: usize) -> io::Result<()> {
    // SAFETY: a fresh anonymous mapping (null hint, no MAP_FIXED) replaces
    // no memory.
    let new = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if new == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `new` is ours and writable for `len` bytes; `at` is readable
    // for `len` bytes (the caller's mapping) and does not overlap a mapping
    // made just now.
    unsafe { std::ptr::copy_nonoverlapping(at.as_ptr(), new.cast::<u8>(), len) };
    // SAFETY: `new..new+len` is the mapping made above.
    let moved = unsafe {
        if libc::mprotect(new, len, libc::PROT_READ) != 0 {
            libc::MAP_FAILED
        } else {
            // The old pages at `at` are replaced atomically; the caller
            // owns them and guarantees nobody else unmaps them meanwhile.
            libc::mremap(
                new,
                len,
                len,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                at.as_ptr().cast::<libc::c_void>(),
            )
        }
    };
    if moved == libc::MAP_FAILED {
        let e = io::Error::last_os_error();
        // SAFETY: the mapping made above, still at `new` (mremap failed).
        unsafe { libc::munmap(new, len) };
        return Err(e);
    }
    Ok(())
}

/// Replaces the pages at `base..base + len` with zero-filled, read-only
/// anonymous memory, as the SIGBUS guard does for pages a file lost: for a
/// mapping whose bytes could not be kept (no memory for a copy, or the
/// file was changed behind its lease), so that it never shows what a
/// writer puts in the file later. Needs no memory: the zero page is shared
/// until written, and the mapping is never writable. Leaves the mapping
/// as it was on an error.
///
/// # Safety
/// `base..base + len` must lie inside one live mapping that the caller
/// owns and that nobody unmaps or remaps during the call; `base` is page
/// aligned.
pub(crate) unsafe fn zero_in_place(base: NonNull<u8>, len: usize) -> io::Result<()> {
    // SAFETY: MAP_FIXED over memory the caller owns and lets us replace;
    // it replaces exactly that range and nothing else.
    let r = unsafe {
        libc::mmap(
            base.as_ptr().cast(),
            len,
            libc::PROT_READ,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
            -1,
            0,
        )
    };
    if r == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Copies up to `len` bytes of `input` from `in_off` into `output` at
/// `out_off` by reading them straight into the output's page cache: the
/// window of `output` is mapped shared and writable and `pread` on `input`
/// fills it, so there is no buffer in between and no `write(2)`. Unlike
/// `write(2)`, which holds the output's inode lock for each call, the page
/// faults this takes let callers filling distinct ranges of one file run in
/// parallel. `output` must already be at least `out_off + len` bytes long
/// (allocated or truncated to size by the caller), or the copy stops with
/// an error where the file ends. Returns the bytes copied: fewer than `len`
/// only where `input` ends.
pub(crate) fn read_into_file(
    input: BorrowedFd<'_>,
    in_off: u64,
    output: BorrowedFd<'_>,
    out_off: u64,
    len: usize,
) -> io::Result<usize> {
    if len == 0 {
        return Ok(0);
    }
    let (aligned, lead, map_len) = page_span(out_off, len)?;
    let in_end = in_off
        .checked_add(len as u64)
        .filter(|&e| e <= i64::MAX as u64)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "input range overflows"))?;
    // SAFETY: a fresh mapping (null hint, no MAP_FIXED) replaces no memory.
    // It is unmapped below before this function returns, and no Rust
    // reference into it is ever made: only the kernel writes into it, on
    // behalf of pread.
    let ptr = unsafe {
        rustix::mm::mmap(
            std::ptr::null_mut(),
            map_len,
            rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
            rustix::mm::MapFlags::SHARED,
            output,
            aligned,
        )
    }?;
    // Ask for huge pages: where the file system keeps large folios (ext4
    // does on this machine's Linux 6.18) the faults below then fill the
    // output's page cache with 2 MiB folios instead of 4 KiB pages, and
    // with transparent huge pages set to `madvise` (the default here) only
    // this advice turns that on. ext4 here, 1 GiB: this way alone 0.37 s
    // instead of 1.26; beside copy_file_range (`ferry cp`) 0.17 s instead
    // of 0.27 (scripts/cp-paths.sh; docs/BENCHMARKS.md, "cp: why two
    // threads, and why huge pages", measured 2026-11-23 at 715aaa7).
    // Where the kernel has no transparent huge pages this is EINVAL, and
    // the copy goes on with small pages.
    // SAFETY: `ptr..ptr+map_len` is the mapping made just above;
    // MADV_HUGEPAGE changes no contents, only how pages are allocated.
    let _ = unsafe { rustix::mm::madvise(ptr, map_len, rustix::mm::Advice::LinuxHugepage) };
    let mut done = 0usize;
    let result = loop {
        if done == len {
            break Ok(done);
        }
        // SAFETY: `lead + done .. lead + len` lies inside the mapping made
        // above. pread writes into it from the kernel; a page the kernel
        // cannot provide (the output cut shorter by someone else, a full or
        // failing disk) makes pread return EFAULT instead of raising a
        // signal. The offset fits in off_t (`in_end` was checked).
        let r = unsafe {
            libc::pread(
                input.as_raw_fd(),
                ptr.cast::<u8>().add(lead + done).cast(),
                len - done,
                (in_end - (len - done) as u64) as libc::off_t,
            )
        };
        if r < 0 {
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EFAULT) => {
                    break Err(io::Error::other(format!(
                        "cannot write the output's pages at offset {}: the output was cut \
                         short, or its disk is full or failing",
                        out_off + done as u64
                    )))
                }
                _ => break Err(e),
            }
        }
        if r == 0 {
            break Ok(done);
        }
        done += r as usize;
    };
    // SAFETY: exactly the mapping made above; nothing refers into it.
    let _ = unsafe { rustix::mm::munmap(ptr, map_len) };
    result
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(data: &[u8]) -> std::fs::File {
        let mut f = tempfile::tempfile().expect("temp file");
        f.write_all(data).expect("write");
        f
    }

    fn contents(f: &std::fs::File) -> Vec<u8> {
        let mut v = vec![0u8; f.metadata().expect("stat").len() as usize];
        let n = rustix::io::pread(f, &mut v, 0).expect("read back");
        v.truncate(n);
        v
    }

    fn pattern(n: usize, seed: u8) -> Vec<u8> {
        (0..n)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
            .collect()
    }

    #[test]
    fn fills_an_unaligned_window_and_nothing_else() {
        let src = pattern(50_000, 1);
        let input = file_with(&src);
        let old = pattern(40_000, 7);
        let output = file_with(&old);
        // Input from 1234, output from 5000 (mid-page), 30000 bytes.
        let n = read_into_file(input.as_fd(), 1234, output.as_fd(), 5000, 30_000).expect("copy");
        assert_eq!(n, 30_000);
        let got = contents(&output);
        assert_eq!(got.len(), 40_000);
        assert!(got[..5000] == old[..5000], "bytes before the window kept");
        assert!(got[5000..35_000] == src[1234..31_234], "window filled");
        assert!(
            got[35_000..] == old[35_000..],
            "bytes after the window kept"
        );
    }

    #[test]
    fn stops_where_the_input_ends() {
        let input = file_with(&pattern(10_000, 2));
        let output = file_with(&[0u8; 20_000]);
        let n = read_into_file(input.as_fd(), 6000, output.as_fd(), 0, 8192).expect("copy");
        assert_eq!(n, 4000);
        assert_eq!(
            read_into_file(input.as_fd(), 10_000, output.as_fd(), 0, 10).ok(),
            Some(0)
        );
    }

    #[test]
    fn an_output_too_short_is_an_error_not_a_signal() {
        let input = file_with(&pattern(64 << 10, 3));
        let output = file_with(&[0u8; 4096]);
        let e = read_into_file(input.as_fd(), 0, output.as_fd(), 0, 64 << 10)
            .expect_err("the output ends after one page");
        assert!(e.to_string().contains("offset 4096"), "{e}");
        // The page that existed was filled.
        assert!(contents(&output) == pattern(4096, 3));
    }

    #[test]
    fn huge_windows_beside_a_writer_keep_every_byte_outside_them() {
        // Windows of several MiB at offsets off any 2 MiB boundary, in an
        // output whose old bytes are on disk and out of the cache, while
        // another thread pwrites the range between them: the huge-page
        // advice makes faults read ahead beyond a window, and none of that
        // may change a byte the window does not own or lose the writer's.
        let n = 24 << 20;
        let src = pattern(n, 5);
        let input = file_with(&src);
        let old = pattern(n, 9);
        let output = file_with(&old);
        output.sync_all().expect("fsync");
        rustix::fs::fadvise(&output, 0, None, rustix::fs::Advice::DontNeed).expect("fadvise");
        let (w1, l1) = (3 * 1024 * 1024 + 12_345, 5 * 1024 * 1024 + 777);
        let (w2, l2) = (14 * 1024 * 1024 + 4096, 6 * 1024 * 1024);
        let (mid, mid_len) = (w1 + l1, w2 - (w1 + l1));
        let fresh = pattern(mid_len, 11);
        std::thread::scope(|s| {
            let h = s.spawn(|| rustix::io::pwrite(&output, &fresh, mid as u64));
            let a = read_into_file(input.as_fd(), w1 as u64, output.as_fd(), w1 as u64, l1);
            let b = read_into_file(input.as_fd(), 100, output.as_fd(), w2 as u64, l2);
            assert_eq!(a.expect("first window"), l1);
            assert_eq!(b.expect("second window"), l2);
            assert_eq!(h.join().expect("thread").expect("pwrite"), mid_len);
        });
        let mut want = old.clone();
        want[w1..w1 + l1].copy_from_slice(&src[w1..w1 + l1]);
        want[mid..mid + mid_len].copy_from_slice(&fresh);
        want[w2..w2 + l2].copy_from_slice(&src[100..100 + l2]);
        let got = contents(&output);
        assert_eq!(got.len(), n);
        let first_bad = got.iter().zip(&want).position(|(g, w)| g != w);
        assert_eq!(first_bad, None, "first differing byte");
    }

    #[test]
    fn two_threads_fill_halves_of_one_file() {
        let n = 8 << 20;
        let src = pattern(n, 4);
        let input = file_with(&src);
        let output = tempfile::tempfile().expect("temp file");
        output.set_len(n as u64).expect("size");
        std::thread::scope(|s| {
            let h = s.spawn(|| read_into_file(input.as_fd(), 0, output.as_fd(), 0, n / 2));
            let b = read_into_file(
                input.as_fd(),
                (n / 2) as u64,
                output.as_fd(),
                (n / 2) as u64,
                n / 2,
            );
            assert_eq!(b.expect("second half"), n / 2);
            assert_eq!(h.join().expect("thread").expect("first half"), n / 2);
        });
        assert!(contents(&output) == src);
    }
}

/// Page faults the calling thread has taken so far (minor and major), or
/// `None` where the count cannot be had.
pub(crate) fn thread_faults() -> Option<u64> {
    #[cfg(miri)]
    {
        None
    }
    #[cfg(not(miri))]
    {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` is a valid, writable rusage; RUSAGE_THREAD reports
        // the calling thread only and writes nothing else.
        let r = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
        if r != 0 {
            return None;
        }
        // SAFETY: getrusage succeeded, so it filled the struct (which was
        // zeroed before in any case).
        let ru = unsafe { ru.assume_init() };
        Some(ru.ru_minflt as u64 + ru.ru_majflt as u64)
    }
}
