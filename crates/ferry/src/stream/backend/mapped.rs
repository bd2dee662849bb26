//! The mapped module: a read-only regular file read through mapped windows
//! (a region is a slice of the page cache's own pages: no copy), under a
//! read lease ([`MappedFile`]): a writer that comes along is held back until
//! every window lent out is a private snapshot, so regions never change.
//! Once a writer broke the lease and still holds the file open, windows
//! are no longer mapped and the engine reads into buffers. Pages lost
//! anyway (a break left unanswered past the kernel's lease-break time, then
//! a truncation) are an `UnexpectedEof` error, never a crash: the SIGBUS
//! guard catches the fault and the engine reports it.
//!
//! A mapping pays one page fault per 16 pages where the file's cache sits
//! in 4 KiB pages (a log appended line by line, a file written through a
//! pipe), against one per large folio where it was read in by readahead:
//! on 4 KiB pages `pread` into a buffer is the faster read. So the start
//! of each window is probed — one byte read every 64 KiB over its first
//! MiB, the calling thread's faults counted — and a window that faults at
//! most every touch is not used: the engine reads into buffers from there
//! on (docs/BENCHMARKS.md, "asf: why mapping loses on 4 KiB pages",
//! measured 2026-11-23 at 6d1ff8d).
//!
//! Opened [`without_lease`](crate::OpenOptions::without_lease), the
//! windows are mapped with no lease (the page cache itself, as
//! [`Buf::map_file_unchecked`] maps it): nobody is held back, a writer's
//! bytes show in the windows, and a truncation is the same `UnexpectedEof`
//! from the SIGBUS guard.

use super::{Buffered, Module, Window};
use crate::{Buf, MappedFile};
use std::io;
use std::mem::MaybeUninit;

/// The first window (and one after a jump) is small, so random access does
/// not map and populate far more than it reads; each window that follows
/// the last one doubles, up to the largest.
pub(crate) const MAP_WINDOW_FIRST: usize = 1 << 20;
pub(crate) const MAP_WINDOW_MAX: usize = 64 << 20;
/// The smallest a window shrinks to when mappings fail for want of
/// address space.
const MAP_WINDOW_SMALLEST: usize = 64 << 10;

/// The probe samples this many huge-page spans of a window at most.
const PROBE_UNITS: usize = 8;
/// The share of sampled spans in small pages (numerator, denominator) from
/// which `pread` is the faster read. Measured on `wc -l` of a 256 MiB file:
/// a fault costs about 9 µs and maps 64 KiB (16 faults a MiB in small
/// pages, one per 2 MiB in large folios), a `pread` copies 64 KiB in about
/// 7 µs; so mapping stops paying once more than about 77% of the spans are
/// small (docs/BENCHMARKS.md, "asf: why mapping loses on 4 KiB pages",
/// measured 2026-11-23 at 6d1ff8d).
const SMALL_SHARE: (u64, u64) = (4, 5);

/// Regions up to this size are read with `pread` where the pages are
/// small: the engine reads them into a reused pool buffer that stays in
/// the CPU's cache. A larger region needs a buffer as large, first touched
/// (zeroed, faulted in) and read back from memory: more than the faults it
/// saves (`ferry grep` asks for 4–16 MiB: 93–99 ms read, 42–57 ms mapped).
const PREAD_REGION_MAX: usize = 1 << 20;

/// The span a large folio can be mapped in by one fault (a PMD on x86-64).
const HUGE_PAGE: u64 = 2 << 20;

/// How a mapped stream maps its windows.
enum Pages {
    /// Under this read lease.
    Leased(MappedFile),
    /// With no lease (`OpenOptions::without_lease`).
    Unleased,
    /// Not any more: a writer broke the lease and kept the file open.
    Lost,
}

pub(crate) struct Mapped {
    /// The file, also read with `pread` (large reads into a caller's
    /// buffer go straight there).
    file: Buffered,
    /// What the windows are mapped under.
    pages: Pages,
    /// Size and end of the last window.
    last: (usize, u64),
    /// The largest window: halved each time a mapping fails for want of
    /// address space (`ulimit -v`), so a long read goes on in smaller
    /// windows instead of failing where a `read(2)` would not.
    cap: usize,
    /// The span of the last window found in small pages, read with `pread`.
    pread_from: u64,
    pread_until: u64,
}

impl Mapped {
    pub(crate) fn new(file: Buffered, lease: MappedFile) -> Mapped {
        Mapped {
            file,
            pages: Pages::Leased(lease),
            last: (0, u64::MAX),
            cap: MAP_WINDOW_MAX,
            pread_from: 0,
            pread_until: 0,
        }
    }

    /// Mapped with no lease: the caller of `OpenOptions::without_lease`
    /// took on what that means.
    pub(crate) fn unleased(file: Buffered) -> Mapped {
        Mapped {
            pages: Pages::Unleased,
            ..Mapped::new_lost(file)
        }
    }

    fn new_lost(file: Buffered) -> Mapped {
        Mapped {
            file,
            pages: Pages::Lost,
            last: (0, u64::MAX),
            cap: MAP_WINDOW_MAX,
            pread_from: 0,
            pread_until: 0,
        }
    }

    /// True while windows are mapped.
    #[inline]
    pub(crate) fn is_live(&self) -> bool {
        !matches!(self.pages, Pages::Lost)
    }
}

impl Module for Mapped {
    fn positional(&self) -> bool {
        true
    }

    fn size(&self) -> io::Result<u64> {
        self.file.size()
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<usize> {
        self.file.read(off, buf)
    }

    fn read_uninit(&mut self, off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        self.file.read_uninit(off, buf)
    }

    fn write(&mut self, off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>) {
        self.file.write(off, bytes)
    }

    fn finish(&mut self, pos: u64) -> io::Result<()> {
        self.file.finish(pos)
    }

    fn shares_offset(&self) -> bool {
        self.file.shares_offset()
    }

    fn hand_over(&mut self, pos: u64) -> io::Result<()> {
        self.file.hand_over(pos)
    }

    fn take_back(&mut self) -> io::Result<u64> {
        self.file.take_back()
    }

    fn raw_fd(&self) -> Option<i32> {
        self.file.raw_fd()
    }

    fn raise_signals(&mut self) {
        self.file.raise_signals()
    }

    fn window(&mut self, start: u64, min: usize) -> Option<io::Result<Window>> {
        if start < self.pread_until && start >= self.pread_from {
            return None;
        }
        match self.map(start, min) {
            // Mostly small pages here: read this window's span into
            // buffers instead (and probe the next one).
            Ok(w)
                if min <= PREAD_REGION_MAX
                    && start.is_multiple_of(HUGE_PAGE)
                    && in_small_pages(&w.buf) =>
            {
                self.pread_from = start;
                self.pread_until = start + w.buf.len() as u64;
                None
            }
            // A writer broke the lease and still has the file open: read
            // into buffers from here on.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.pages = Pages::Lost;
                None
            }
            r => Some(r),
        }
    }
}

/// True if `window` (which starts on a huge-page boundary) mostly sits
/// in pages too small to be mapped a huge page at a time, by the faults
/// that touching it takes: in each of up to `PROBE_UNITS` huge-page spans
/// spread over it, one byte at the start and one 1 MiB in. A span whose
/// cache is one large folio is mapped whole by the first touch (one
/// fault); one of 4 KiB pages takes a fault for each (the kernel maps 16
/// pages around a fault). Windows shorter than one span are not probed.
fn in_small_pages(window: &Buf) -> bool {
    let unit = HUGE_PAGE as usize;
    let units = window.len() / unit;
    if units == 0 {
        return false;
    }
    let sampled = units.min(PROBE_UNITS);
    let Some(before) = crate::sys::map::thread_faults() else {
        return false;
    };
    let mut sum = 0u8;
    for i in 0..sampled {
        let at = (i * units / sampled) * unit;
        // The pages would be touched by the reader anyway; a lost page
        // reads as zeros here (the SIGBUS guard) and is reported later.
        sum = sum
            .wrapping_add(window[at])
            .wrapping_add(window[at + unit / 2]);
    }
    std::hint::black_box(sum);
    let Some(after) = crate::sys::map::thread_faults() else {
        return false;
    };
    let small = after.saturating_sub(before).saturating_sub(sampled as u64);
    small * SMALL_SHARE.1 >= sampled as u64 * SMALL_SHARE.0
}

impl Mapped {
    fn map(&mut self, start: u64, min: usize) -> io::Result<Window> {
        // With no lease the file may shrink between the size and the
        // mapping: the mapping then fails (past the end), and is tried
        // again at the new size.
        let mut tries = 0;
        loop {
            match self.map_once(start, min) {
                Err(e)
                    if matches!(self.pages, Pages::Unleased)
                        && e.kind() == io::ErrorKind::UnexpectedEof
                        && tries < 8 =>
                {
                    tries += 1;
                }
                // Out of address space: smaller windows, down to what
                // the caller asked for (an old window may still be
                // mapped beside the new one).
                Err(e)
                    if e.raw_os_error() == Some(libc::ENOMEM)
                        && self.cap / 2 >= min.max(MAP_WINDOW_SMALLEST) =>
                {
                    self.cap /= 2;
                }
                r => return r,
            }
        }
    }

    fn map_once(&mut self, start: u64, min: usize) -> io::Result<Window> {
        if matches!(self.pages, Pages::Lost) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        let size = self.file.size()?;
        let window = if start == self.last.1 {
            (self.last.0 * 2).min(self.cap)
        } else {
            MAP_WINDOW_FIRST.min(self.cap)
        };
        let len = if start >= size {
            0
        } else {
            (size - start).min(min.max(window) as u64) as usize
        };
        let mut end = start + len as u64;
        // Windows end on a huge-page boundary (unless that would make one
        // shorter than asked), so that the next starts on one: a window
        // whose file offset and address agree modulo 2 MiB can have a large
        // folio mapped by one fault instead of 32.
        let aligned = end - end % HUGE_PAGE;
        if end < size && aligned > start && aligned - start >= min as u64 {
            end = aligned;
        }
        let len = (end - start) as usize;
        self.last = (window, end);
        let buf = match &self.pages {
            _ if len == 0 => Buf::new(),
            Pages::Leased(lease) => lease.map(start..end)?,
            // SAFETY: the stream was opened `without_lease`, whose caller
            // took on the promise `map_file_unchecked` asks for (nobody
            // writes the file while a window lives, or the caller accepts
            // it); a shrinking file is the SIGBUS guard's.
            Pages::Unleased => unsafe { Buf::map_file_unchecked(self.file.file(), start..end)? },
            Pages::Lost => return Err(io::ErrorKind::WouldBlock.into()),
        };
        Ok(Window {
            buf,
            eof: end >= size,
        })
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::io::Write;

    /// A file written 4 KiB at a time, `len` bytes.
    fn written_in_pages(len: usize) -> (tempfile::TempDir, std::fs::File) {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let mut f = std::fs::File::create(&p).unwrap();
        for i in 0..len / 4096 {
            f.write_all(&[i as u8; 4096]).unwrap();
        }
        (d, std::fs::File::open(&p).unwrap())
    }

    #[test]
    fn a_file_written_in_small_pieces_is_found_in_small_pages() {
        let (_d, f) = written_in_pages(8 << 20);
        let m = MappedFile::open(&f).unwrap();
        let w = m.map(2 << 20..6 << 20).unwrap();
        assert!(in_small_pages(&w), "4 KiB pages not recognised");
        // The probe read through the mapping: the bytes are the file's.
        assert_eq!(w[0], (512 % 256) as u8);
        assert_eq!(w[(1 << 20) + 5], ((768) % 256) as u8);
    }

    #[test]
    fn windows_shorter_than_a_huge_page_are_not_probed() {
        let (_d, f) = written_in_pages(4 << 20);
        let m = MappedFile::open(&f).unwrap();
        let w = m.map(0..(2 << 20) - 4096).unwrap();
        assert!(!in_small_pages(&w));
    }
}
