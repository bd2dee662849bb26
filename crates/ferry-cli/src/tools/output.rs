//! Buffered standard output for the tools: a page-aligned buffer written
//! with `write(2)` on descriptor 1, EINTR retried.

use ferry::BufMut;
use std::io;
use std::os::fd::BorrowedFd;

const CAP: usize = 128 << 10;

pub struct Out {
    buf: BufMut,
    /// Holding: full buffers kept in order instead of written (the output
    /// of a second thread, written later by the first), and emptied ones
    /// to fill again.
    held: Option<Held>,
}

#[derive(Default)]
struct Held {
    full: Vec<BufMut>,
    spare: Vec<BufMut>,
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
    /// The buffer is allocated on the first write that needs it: a tool
    /// that hands its output to the kernel (cat's splice) never pays for
    /// it, and every run starts that much sooner.
    pub fn new() -> Out {
        Out {
            buf: BufMut::new(),
            held: None,
        }
    }

    /// An output that keeps what is written, in order, for [`Out::write_held`]
    /// of another `Out`; it never writes to standard output itself.
    pub fn holding() -> Out {
        Out {
            buf: BufMut::new(),
            held: Some(Held::default()),
        }
    }

    /// Gives the (empty) buffer its capacity if it has none yet.
    #[cold]
    fn allocate(&mut self) {
        if self.buf.capacity() == 0 {
            self.buf = BufMut::with_capacity(CAP);
        }
    }

    #[inline]
    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buf.tail_room() >= data.len() {
            self.buf.extend_from_slice(data);
            return Ok(());
        }
        self.flush()?;
        if data.len() >= CAP && self.held.is_none() {
            return write_all_fd(data);
        }
        self.allocate();
        for piece in data.chunks(CAP) {
            if self.buf.tail_room() < piece.len() {
                self.flush()?;
            }
            self.buf.extend_from_slice(piece);
        }
        Ok(())
    }

    /// Writes out what `other` (a holding output) kept, after everything
    /// written here so far, and hands its buffers back to it emptied.
    pub fn write_held(&mut self, other: &mut Out) -> io::Result<()> {
        other.flush()?;
        self.flush()?;
        let Some(h) = other.held.as_mut() else {
            return Ok(());
        };
        let mut r = Ok(());
        for mut b in h.full.drain(..) {
            if r.is_ok() {
                r = write_all_fd(&b);
            }
            b.clear();
            h.spare.push(b);
        }
        r
    }

    #[inline]
    pub fn byte(&mut self, b: u8) -> io::Result<()> {
        if self.buf.tail_room() == 0 {
            self.flush()?;
            self.allocate();
        }
        self.buf.extend_from_slice(&[b]);
        Ok(())
    }

    pub fn flush(&mut self) -> io::Result<()> {
        if let Some(h) = self.held.as_mut() {
            if !self.buf.is_empty() {
                let next = h.spare.pop().unwrap_or_else(|| BufMut::with_capacity(CAP));
                h.full.push(std::mem::replace(&mut self.buf, next));
            }
            return Ok(());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// What a holding output kept, in order.
    fn kept(o: &mut Out) -> Vec<u8> {
        o.flush().unwrap();
        let h = o.held.as_ref().unwrap();
        h.full.iter().flat_map(|b| b.as_slice().to_vec()).collect()
    }

    #[test]
    fn nothing_is_allocated_until_something_is_written() {
        let o = Out::new();
        assert_eq!(o.buf.capacity(), 0);
        let h = Out::holding();
        assert_eq!(h.buf.capacity(), 0);
    }

    #[test]
    fn a_first_byte_or_slice_finds_room_and_every_byte_is_kept_in_order() {
        // Starting with a byte, a small slice, an empty slice and a slice
        // longer than the buffer, in every order: the lazily allocated
        // buffer must take each without losing or reordering anything.
        let big: Vec<u8> = (0..CAP * 2 + 77).map(|i| (i * 7 % 251) as u8).collect();
        let pieces: [&[u8]; 4] = [b"x", b"hello\n", b"", &big];
        for first in 0..pieces.len() {
            let mut o = Out::holding();
            let mut want = Vec::new();
            for k in 0..pieces.len() {
                let p = pieces[(first + k) % pieces.len()];
                if p.len() == 1 {
                    o.byte(p[0]).unwrap();
                } else {
                    o.write(p).unwrap();
                }
                want.extend_from_slice(p);
            }
            for b in b"tail" {
                o.byte(*b).unwrap();
            }
            want.extend_from_slice(b"tail");
            assert_eq!(kept(&mut o), want, "starting with piece {first}");
        }
    }
}
