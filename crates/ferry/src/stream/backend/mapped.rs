//! The mapped module: a read-only regular file read through mapped windows
//! (a region is a slice of the page cache's own pages: no copy). A file
//! that shrinks under a window is an `UnexpectedEof` error, never a crash:
//! the SIGBUS guard (`crate::sys::sigbus`) catches the fault and the engine
//! reports it.

use super::{Buffered, Module, Window};
use crate::Buf;
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
    /// Size and end of the last window.
    last: (usize, u64),
}

impl Mapped {
    pub(crate) fn new(file: Buffered) -> Mapped {
        Mapped {
            file,
            last: (0, u64::MAX),
        }
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

    fn raw_fd(&self) -> Option<i32> {
        self.file.raw_fd()
    }

    fn window(&mut self, start: u64, min: usize) -> Option<io::Result<Window>> {
        Some(self.map(start, min))
    }
}

impl Mapped {
    fn map(&mut self, start: u64, min: usize) -> io::Result<Window> {
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
            Buf::map_file(&self.file.file, start..end)?
        } else {
            Buf::new()
        };
        Ok(Window {
            buf,
            eof: end >= size,
        })
    }
}
