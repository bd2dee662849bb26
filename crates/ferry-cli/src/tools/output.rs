//! Buffered standard output for the tools: a page-aligned buffer written
//! with `write(2)` on descriptor 1, EINTR retried.

use ferry::BufMut;
use std::io;
use std::os::fd::BorrowedFd;

const CAP: usize = 128 << 10;

pub struct Out {
    buf: BufMut,
}

fn stdout_fd() -> BorrowedFd<'static> {
    // SAFETY: descriptor 1 stays open for the life of the process (the
    // tools never close it).
    unsafe { BorrowedFd::borrow_raw(1) }
}

/// Writes all of `data` to standard output.
pub fn write_all_fd(mut data: &[u8]) -> io::Result<()> {
    let fd = stdout_fd();
    while !data.is_empty() {
        match rustix::io::write(fd, data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

impl Out {
    pub fn new() -> Out {
        Out {
            buf: BufMut::with_capacity(CAP),
        }
    }

    #[inline]
    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buf.tail_room() >= data.len() {
            self.buf.extend_from_slice(data);
            return Ok(());
        }
        self.flush()?;
        if data.len() >= CAP {
            return write_all_fd(data);
        }
        self.buf.extend_from_slice(data);
        Ok(())
    }

    #[inline]
    pub fn byte(&mut self, b: u8) -> io::Result<()> {
        if self.buf.tail_room() == 0 {
            self.flush()?;
        }
        self.buf.extend_from_slice(&[b]);
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let r = write_all_fd(&self.buf);
            self.buf.clear();
            r?;
        }
        Ok(())
    }
}

impl io::Write for Out {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        Out::write(self, data)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Out::flush(self)
    }
}
