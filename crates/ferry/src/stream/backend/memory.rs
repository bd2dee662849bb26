//! The memory module: bytes in a `Vec` (`fmemopen`, `open_memstream`).

use super::Module;
use std::io;
use std::mem::MaybeUninit;

pub(crate) struct Memory {
    pub(crate) data: Vec<u8>,
}

impl Memory {
    /// The bytes at `off`, at most `n` of them.
    fn at(&self, off: u64, n: usize) -> &[u8] {
        let start = usize::try_from(off)
            .unwrap_or(usize::MAX)
            .min(self.data.len());
        let n = (self.data.len() - start).min(n);
        &self.data[start..start + n]
    }
}

impl Module for Memory {
    fn positional(&self) -> bool {
        true
    }

    fn size(&self) -> io::Result<u64> {
        Ok(self.data.len() as u64)
    }

    fn read(&mut self, off: u64, buf: &mut [u8]) -> io::Result<usize> {
        let src = self.at(off, buf.len());
        buf[..src.len()].copy_from_slice(src);
        Ok(src.len())
    }

    fn read_uninit(&mut self, off: u64, buf: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
        let src = self.at(off, buf.len());
        for (o, &b) in buf.iter_mut().zip(src) {
            o.write(b);
        }
        Ok(src.len())
    }

    fn write(&mut self, off: Option<u64>, bytes: &[u8]) -> (usize, Option<io::Error>) {
        let data = &mut self.data;
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
