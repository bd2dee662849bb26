//! The buffered module: `pread`/`pwrite` at the stream's offset, into and
//! out of the engine's page-aligned pool buffers.

use super::Module;
use crate::sys::fileio::{self, FdInfo, WriteKind};
use std::fs::File;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd};

pub(crate) struct Buffered {
    file: File,
    info: FdInfo,
    /// Writes as `write(2)`: signals not blocked (`Module::raise_signals`).
    signals: bool,
    /// Put the descriptor's own offset at the stream's at each hand-over
    /// and on close (for descriptors the stream was handed, which other
    /// handles — a `dup`, a child process, a shell — may share).
    restore: bool,
}

impl Buffered {
    pub(crate) fn new(file: File, info: FdInfo, restore: bool) -> Buffered {
        Buffered {
            file,
            info,
            signals: false,
            restore,
        }
    }

    /// The file.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }
}

impl Buffered {
    /// How writes are made: guarded unless signals are to be raised.
    fn write_kind(&self) -> WriteKind {
        if self.signals {
            WriteKind::Plain
        } else {
            self.info.write
        }
    }
}

impl Module for Buffered {
    fn positional(&self) -> bool {
        true
    }

    fn size(&self) -> io::Result<u64> {
        fileio::file_size(self.file.as_fd())
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<usize> {
        fileio::read_at(self.file.as_fd(), buf, off)
    }

    fn read_uninit(&mut self, off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        fileio::read_at_uninit(self.file.as_fd(), buf, off)
    }

    fn write(&mut self, off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>) {
        fileio::write_all(self.file.as_fd(), self.write_kind(), bytes, off)
    }

    fn sync(&mut self) -> io::Result<()> {
        fileio::sync_all(self.file.as_fd())
    }

    fn finish(&mut self, pos: u64) -> io::Result<()> {
        if self.restore {
            fileio::seek_to(self.file.as_fd(), pos)?;
        }
        Ok(())
    }

    fn shares_offset(&self) -> bool {
        self.restore
    }

    fn hand_over(&mut self, pos: u64) -> io::Result<()> {
        fileio::seek_to(self.file.as_fd(), pos)
    }

    fn take_back(&mut self) -> io::Result<u64> {
        fileio::tell(self.file.as_fd())
    }

    fn raw_fd(&self) -> Option<i32> {
        Some(self.file.as_raw_fd())
    }

    fn raise_signals(&mut self) {
        self.signals = true;
    }
}
