//! The sequential module: `read`/`write` in order at the descriptor's own
//! offset — pipes, sockets, terminals, devices, and any descriptor other
//! writers share.

use super::Module;
use crate::sys::fileio::{self, FdInfo, WriteKind};
use std::fs::File;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd};

pub(crate) struct Sequential {
    file: File,
    info: FdInfo,
    /// Writes as `write(2)`: signals not blocked (`Module::raise_signals`).
    signals: bool,
}

impl Sequential {
    pub(crate) fn new(file: File, info: FdInfo) -> Sequential {
        Sequential {
            file,
            info,
            signals: false,
        }
    }
}

impl AsFd for Sequential {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl Sequential {
    /// How writes are made: guarded unless signals are to be raised.
    fn write_kind(&self) -> WriteKind {
        if self.signals {
            WriteKind::Plain
        } else {
            self.info.write
        }
    }
}

impl Module for Sequential {
    fn positional(&self) -> bool {
        false
    }

    fn size(&self) -> io::Result<u64> {
        Ok(0)
    }

    fn read(&mut self, _off: u64, buf: &mut [u8]) -> io::Result<usize> {
        fileio::read(self.file.as_fd(), buf)
    }

    fn read_uninit(&mut self, _off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        fileio::read_uninit(self.file.as_fd(), buf)
    }

    fn write(&mut self, _off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>) {
        fileio::write_all(self.file.as_fd(), self.write_kind(), bytes, None)
    }

    fn raw_fd(&self) -> Option<i32> {
        Some(self.file.as_raw_fd())
    }

    fn raise_signals(&mut self) {
        self.signals = true;
    }

    fn set_pipe_size(&self, bytes: usize) -> io::Result<usize> {
        if self.info.write != WriteKind::Pipe {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a pipe"));
        }
        fileio::set_pipe_size(self.file.as_fd(), bytes)
    }
}
