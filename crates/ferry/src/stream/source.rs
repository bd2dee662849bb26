//! Where a stream's bytes come from and go to: the stream modules' I/O.

use crate::sys::fileio::{self, FdInfo};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;

/// The I/O side of a stream module.
pub(crate) enum Source {
    /// A regular file: positional `pread`/`pwrite` at the stream's offset.
    /// `restore` puts the descriptor's own offset at the stream's on close
    /// (for descriptors the stream was handed, so a parent process sees
    /// what was consumed).
    File {
        file: File,
        info: FdInfo,
        restore: bool,
    },
    /// A pipe, socket, terminal or device: `read`/`write` in order.
    Seq { file: File, info: FdInfo },
    /// Bytes in memory (fmemopen / open_memstream).
    Memory { data: Vec<u8> },
}

impl Source {
    /// True if the source can be read at any offset.
    pub(crate) fn positional(&self) -> bool {
        !matches!(self, Source::Seq { .. })
    }

    /// The file behind a positional source (not memory).
    pub(crate) fn file(&self) -> Option<&File> {
        match self {
            Source::File { file, .. } => Some(file),
            _ => None,
        }
    }

    /// The current length of the underlying file (0 for sequential ones).
    pub(crate) fn size(&self) -> io::Result<u64> {
        match self {
            Source::File { file, .. } => fileio::file_size(file.as_fd()),
            Source::Seq { .. } => Ok(0),
            Source::Memory { data } => Ok(data.len() as u64),
        }
    }

    /// Reads at `off` (positional) or next (sequential); 0 at end of file.
    pub(crate) fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File { file, .. } => fileio::read_at(file.as_fd(), buf, off),
            Source::Seq { file, .. } => fileio::read(file.as_fd(), buf),
            Source::Memory { data } => {
                let start = usize::try_from(off).unwrap_or(usize::MAX).min(data.len());
                let n = (data.len() - start).min(buf.len());
                buf[..n].copy_from_slice(&data[start..start + n]);
                Ok(n)
            }
        }
    }

    /// The descriptor, if the source has one.
    pub(crate) fn raw_fd(&self) -> Option<i32> {
        use std::os::fd::AsRawFd;
        match self {
            Source::File { file, .. } | Source::Seq { file, .. } => Some(file.as_raw_fd()),
            Source::Memory { .. } => None,
        }
    }

    /// [`Source::read`] into memory not yet initialized: the first `n`
    /// bytes of `buf` are initialized when it returns `Ok(n)`.
    pub(crate) fn read_uninit(
        &mut self,
        off: u64,
        buf: &mut [std::mem::MaybeUninit<u8>],
    ) -> io::Result<usize> {
        match self {
            Source::File { file, .. } => fileio::read_at_uninit(file.as_fd(), buf, off),
            Source::Seq { file, .. } => fileio::read_uninit(file.as_fd(), buf),
            Source::Memory { data } => {
                let start = usize::try_from(off).unwrap_or(usize::MAX).min(data.len());
                let n = (data.len() - start).min(buf.len());
                for (o, &b) in buf[..n].iter_mut().zip(&data[start..start + n]) {
                    o.write(b);
                }
                Ok(n)
            }
        }
    }

    /// Writes all of `bytes` at `off` (positional; `None` in append mode:
    /// at the end) or next (sequential). Returns the bytes written and the
    /// error that stopped it.
    pub(crate) fn write(&mut self, off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>) {
        match self {
            Source::File { file, info, .. } => {
                fileio::write_all(file.as_fd(), info.write, bytes, off)
            }
            Source::Seq { file, info } => fileio::write_all(file.as_fd(), info.write, bytes, None),
            Source::Memory { data } => {
                let start = match off {
                    Some(o) => match usize::try_from(o) {
                        Ok(s) => s,
                        Err(_) => return (0, Some(io::Error::from_raw_os_error(libc::EFBIG))),
                    },
                    None => data.len(),
                };
                let Some(end) = start.checked_add(bytes.len()) else {
                    return (0, Some(io::Error::from_raw_os_error(libc::EFBIG)));
                };
                if data.len() < end {
                    if data.try_reserve(end - data.len()).is_err() {
                        return (0, Some(io::Error::from_raw_os_error(libc::ENOMEM)));
                    }
                    data.resize(end, 0);
                }
                data[start..end].copy_from_slice(bytes);
                (bytes.len(), None)
            }
        }
    }

    pub(crate) fn sync(&mut self) -> io::Result<()> {
        match self {
            Source::File { file, .. } => fileio::sync_all(file.as_fd()),
            _ => Ok(()),
        }
    }

    /// Called once when the stream closes: puts the descriptor's offset where
    /// the stream's is, if asked to.
    pub(crate) fn finish(&mut self, pos: u64) -> io::Result<()> {
        if let Source::File {
            file,
            restore: true,
            ..
        } = self
        {
            fileio::seek_to(file.as_fd(), pos)?;
        }
        Ok(())
    }
}
