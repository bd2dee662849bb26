//! The mapped module: a read-only regular file read through mapped windows
//! (a region is a slice of the page cache's own pages: no copy), under a
//! read lease ([`MappedFile`]): a writer that comes along is held back until
//! every window lent out is a private snapshot, so regions never change.
//! Once a writer broke the lease and still holds the file open, windows
//! are no longer mapped and the engine reads into buffers. Pages lost
//! anyway (a break left unanswered past the kernel's lease-break time, then
//! a truncation) are an `UnexpectedEof` error, never a crash: the SIGBUS
//! guard catches the fault and the engine reports it.

use super::{Buffered, Module, Window};
use crate::{Buf, MappedFile};
use std::io;
use std::mem::MaybeUninit;

/// The first window (and one after a jump) is small, so random access does
/// not map and populate far more than it reads; each window that follows
/// the last one doubles, up to the largest.
pub(crate) const MAP_WINDOW_FIRST: usize = 1 << 20;
pub(crate) const MAP_WINDOW_MAX: usize = 64 << 20;

pub(crate) struct Mapped {
    /// The file, also read with `pread` (large reads into a caller's
    /// buffer go straight there).
    file: Buffered,
    /// The read lease the windows are mapped under; `None` once a writer
    /// broke it and kept the file open.
    lease: Option<MappedFile>,
    /// Size and end of the last window.
    last: (usize, u64),
}

impl Mapped {
    pub(crate) fn new(file: Buffered, lease: MappedFile) -> Mapped {
        Mapped {
            file,
            lease: Some(lease),
            last: (0, u64::MAX),
        }
    }

    /// True while windows are mapped.
    #[inline]
    pub(crate) fn is_live(&self) -> bool {
        self.lease.is_some()
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

    fn window(&mut self, start: u64, min: usize) -> Option<io::Result<Window>> {
        match self.map(start, min) {
            // A writer broke the lease and still has the file open: read
            // into buffers from here on.
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                self.lease = None;
                None
            }
            r => Some(r),
        }
    }
}

impl Mapped {
    fn map(&mut self, start: u64, min: usize) -> io::Result<Window> {
        let Some(lease) = &self.lease else {
            return Err(io::ErrorKind::WouldBlock.into());
        };
        let size = self.file.size()?;
        let window = if start == self.last.1 {
            (self.last.0 * 2).min(MAP_WINDOW_MAX)
        } else {
            MAP_WINDOW_FIRST
        };
        let len = if start >= size {
            0
        } else {
            (size - start).min(min.max(window) as u64) as usize
        };
        let end = start + len as u64;
        self.last = (window, end);
        let buf = if len > 0 {
            lease.map(start..end)?
        } else {
            Buf::new()
        };
        Ok(Window {
            buf,
            eof: end >= size,
        })
    }
}
