//! Output a program formats itself: [`OrderedOut`], a page-aligned buffer
//! written with `write(2)`, whose holding mode lets a second thread format
//! its part of the output while the first writes, and [`write_all`].

use crate::sys::transfer as sys;
use crate::BufMut;
use std::io;
use std::os::fd::BorrowedFd;

/// The buffer's size: writes of at least this much go straight to the
/// descriptor.
const CAP: usize = 128 << 10;

/// Writes all of `data` to `fd` with `write(2)`, resuming after partial
/// writes (EINTR retried). A write that takes nothing is an error
/// ([`io::ErrorKind::WriteZero`]). Signals are the process's: a pipe with
/// no reader raises SIGPIPE unless it is ignored.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use std::os::fd::AsFd;
/// let (mut r, w) = std::io::pipe()?;
/// ferry::transfer::write_all(w.as_fd(), b"all of it")?;
/// drop(w);
/// let mut back = String::new();
/// std::io::Read::read_to_string(&mut r, &mut back)?;
/// assert_eq!(back, "all of it");
/// # Ok(()) }
/// ```
pub fn write_all(fd: BorrowedFd<'_>, mut data: &[u8]) -> io::Result<()> {
    while !data.is_empty() {
        match sys::write(fd, data) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => data = &data[n..],
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A buffered writer to a descriptor, or a holder of output for another.
///
/// Written bytes gather in a page-aligned 128 KiB buffer ([`BufMut`]) and
/// go out with one `write(2)` when it is full, at [`flush`](Self::flush),
/// or straight from the caller's slice when that is larger than the
/// buffer. The buffer is allocated at the first write that needs it: a
/// program that hands its output to the kernel ([`copy`](super::copy))
/// never pays for it. Dropping an `OrderedOut` does not flush it (a
/// failed write would have no one to tell): call [`flush`](Self::flush).
///
/// A *holding* output ([`OrderedOut::holding`]) writes nothing: it keeps
/// its full buffers in order, so a second thread can format the second
/// half of a block while the first formats the first half, and
/// [`write_held`](Self::write_held) then writes the kept output after the
/// first's — the order of the input, with both cores busy.
///
/// ```text
///   thread 1: out.write(..)  ──► [buf] ──write(2)──► fd
///   thread 2: held.write(..) ──► [buf][buf][buf]     (kept, in order)
///   then:     out.write_held(&mut held): out's buffer, then held's, to fd;
///             held's buffers back to it, emptied, for the next block
/// ```
///
/// Signals are the process's, as for [`write_all`].
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::transfer::OrderedOut;
/// use std::os::fd::AsFd;
/// let file = tempfile::tempfile()?;
/// let mut out = OrderedOut::new(file.as_fd());
/// let mut second = OrderedOut::holding();
/// std::thread::scope(|s| {
///     let h = s.spawn(|| second.write(b"second half\n"));
///     out.write(b"first half\n")?;
///     h.join().expect("no panic")
/// })?;
/// out.write_held(&mut second)?;
/// out.flush()?;
/// let mut back = [0u8; 23];
/// std::os::unix::fs::FileExt::read_exact_at(&file, &mut back, 0)?;
/// assert_eq!(&back, b"first half\nsecond half\n");
/// # Ok(()) }
/// ```
pub struct OrderedOut<'fd> {
    buf: BufMut,
    target: Target<'fd>,
}

enum Target<'fd> {
    Fd(BorrowedFd<'fd>),
    /// Full buffers kept in order instead of written, and emptied ones to
    /// fill again.
    Held {
        full: Vec<BufMut>,
        spare: Vec<BufMut>,
    },
}

impl<'fd> OrderedOut<'fd> {
    /// An output to `fd`. Nothing is allocated until something is written.
    ///
    /// ```
    /// use std::os::fd::AsFd;
    /// let f = tempfile::tempfile().unwrap();
    /// let mut out = ferry::transfer::OrderedOut::new(f.as_fd());
    /// out.byte(b'x').unwrap();
    /// out.flush().unwrap();
    /// assert_eq!(f.metadata().unwrap().len(), 1);
    /// ```
    pub fn new(fd: BorrowedFd<'fd>) -> OrderedOut<'fd> {
        OrderedOut {
            buf: BufMut::new(),
            target: Target::Fd(fd),
        }
    }

    /// An output that keeps what is written, in order, for
    /// [`write_held`](Self::write_held) of another; it never writes to a
    /// descriptor itself.
    ///
    /// ```
    /// let mut held = ferry::transfer::OrderedOut::holding();
    /// held.write(b"kept").unwrap();
    /// held.flush().unwrap(); // keeps the buffer; writes nothing
    /// ```
    pub fn holding() -> OrderedOut<'fd> {
        OrderedOut {
            buf: BufMut::new(),
            target: Target::Held {
                full: Vec::new(),
                spare: Vec::new(),
            },
        }
    }

    /// Gives the (empty) buffer its capacity if it has none yet.
    #[cold]
    fn allocate(&mut self) {
        if self.buf.capacity() == 0 {
            self.buf = BufMut::with_capacity(CAP);
        }
    }

    /// Appends `data`: to the buffer, or (`data` at least the buffer's
    /// size, not holding) after it straight to the descriptor.
    ///
    /// ```
    /// use std::os::fd::AsFd;
    /// let f = tempfile::tempfile().unwrap();
    /// let mut out = ferry::transfer::OrderedOut::new(f.as_fd());
    /// out.write(b"hello").unwrap();
    /// assert_eq!(f.metadata().unwrap().len(), 0); // buffered
    /// out.write(&vec![b'.'; 1 << 20]).unwrap();    // large: written now
    /// assert_eq!(f.metadata().unwrap().len(), 5 + (1 << 20));
    /// ```
    #[inline]
    pub fn write(&mut self, data: &[u8]) -> io::Result<()> {
        if self.buf.tail_room() >= data.len() {
            self.buf.extend_from_slice(data);
            return Ok(());
        }
        self.write_slow(data)
    }

    #[inline(never)]
    fn write_slow(&mut self, data: &[u8]) -> io::Result<()> {
        self.flush()?;
        if let (true, Target::Fd(fd)) = (data.len() >= CAP, &self.target) {
            return write_all(*fd, data);
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

    /// Appends one byte.
    ///
    /// ```
    /// let mut held = ferry::transfer::OrderedOut::holding();
    /// held.byte(b'\n').unwrap();
    /// ```
    #[inline]
    pub fn byte(&mut self, b: u8) -> io::Result<()> {
        if self.buf.tail_room() == 0 {
            self.flush()?;
            self.allocate();
        }
        self.buf.extend_from_slice(&[b]);
        Ok(())
    }

    /// Writes out what `other` (a holding output) kept, after everything
    /// written here so far, and hands its buffers back to it emptied. For
    /// an `other` that is not holding, `other` is flushed and nothing more
    /// is done.
    ///
    /// ```
    /// use ferry::transfer::OrderedOut;
    /// use std::os::fd::AsFd;
    /// let f = tempfile::tempfile().unwrap();
    /// let mut out = OrderedOut::new(f.as_fd());
    /// let mut held = OrderedOut::holding();
    /// held.write(b"2").unwrap();
    /// out.write(b"1").unwrap();
    /// out.write_held(&mut held).unwrap();
    /// assert_eq!(f.metadata().unwrap().len(), 2);
    /// ```
    pub fn write_held(&mut self, other: &mut OrderedOut<'_>) -> io::Result<()> {
        other.flush()?;
        self.flush()?;
        let Target::Held { full, spare } = &mut other.target else {
            return Ok(());
        };
        let mut r = Ok(());
        for mut b in full.drain(..) {
            if r.is_ok() {
                r = self.write_through(&b);
            }
            b.clear();
            spare.push(b);
        }
        r
    }

    /// `data` to this output's descriptor now (its buffer empty), or kept
    /// in order if this output holds too.
    fn write_through(&mut self, data: &[u8]) -> io::Result<()> {
        if let Target::Fd(fd) = &self.target {
            return write_all(*fd, data);
        }
        self.write(data)?;
        self.flush()
    }

    /// Writes the buffer out (a holding output keeps it, in order, and
    /// takes an empty one). The buffer is emptied even when the write
    /// fails.
    ///
    /// ```
    /// use std::os::fd::AsFd;
    /// let full = std::fs::OpenOptions::new().write(true).open("/dev/full").unwrap();
    /// let mut out = ferry::transfer::OrderedOut::new(full.as_fd());
    /// out.write(b"x").unwrap();
    /// assert_eq!(out.flush().unwrap_err().raw_os_error(), Some(libc::ENOSPC));
    /// out.flush().unwrap(); // nothing left to write
    /// ```
    pub fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        match &mut self.target {
            Target::Held { full, spare } => {
                let next = spare.pop().unwrap_or_else(|| BufMut::with_capacity(CAP));
                full.push(std::mem::replace(&mut self.buf, next));
                Ok(())
            }
            Target::Fd(fd) => {
                let r = write_all(*fd, &self.buf);
                self.buf.clear();
                r
            }
        }
    }

    /// Whether the output only keeps what is written.
    ///
    /// ```
    /// assert!(ferry::transfer::OrderedOut::holding().is_holding());
    /// ```
    pub fn is_holding(&self) -> bool {
        matches!(self.target, Target::Held { .. })
    }
}

impl io::Write for OrderedOut<'_> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        OrderedOut::write(self, data)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        OrderedOut::flush(self)
    }
}

impl std::fmt::Debug for OrderedOut<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("OrderedOut");
        d.field("buffered", &self.buf.len());
        match &self.target {
            Target::Fd(fd) => d.field("fd", fd),
            Target::Held { full, .. } => d.field("held_buffers", &full.len()),
        };
        d.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a holding output kept, in order.
    fn kept(o: &mut OrderedOut<'_>) -> Vec<u8> {
        o.flush().unwrap();
        let Target::Held { full, .. } = &o.target else {
            panic!("not holding");
        };
        full.iter().flat_map(|b| b.as_slice().to_vec()).collect()
    }

    #[test]
    fn nothing_is_allocated_until_something_is_written() {
        let f = tempfile::tempfile().unwrap();
        let o = OrderedOut::new(std::os::fd::AsFd::as_fd(&f));
        assert_eq!(o.buf.capacity(), 0);
        let h = OrderedOut::holding();
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
            let mut o = OrderedOut::holding();
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

    #[test]
    fn held_output_follows_the_first_and_its_buffers_are_reused() {
        use std::os::fd::AsFd;
        let f = tempfile::tempfile().unwrap();
        let mut out = OrderedOut::new(f.as_fd());
        let mut held = OrderedOut::holding();
        let big: Vec<u8> = (0..CAP * 3 + 5).map(|i| (i % 253) as u8).collect();
        let mut want = Vec::new();
        for round in 0..3u8 {
            out.write(&[b'a' + round; 1000]).unwrap();
            want.extend_from_slice(&[b'a' + round; 1000]);
            held.write(&big).unwrap();
            want.extend_from_slice(&big);
            out.write_held(&mut held).unwrap();
            let Target::Held { full, spare } = &held.target else {
                panic!("not holding");
            };
            assert!(full.is_empty() && !spare.is_empty(), "buffers handed back");
        }
        out.flush().unwrap();
        let mut back = vec![0u8; want.len() + 1];
        let n = std::os::unix::fs::FileExt::read_at(&f, &mut back, 0).unwrap();
        back.truncate(n);
        assert_eq!(back.len(), want.len());
        assert!(
            back == want,
            "the held output follows the first's, in order"
        );
    }
}
