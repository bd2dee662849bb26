//! Handing an aggregate to the kernel: `iovec` export and gathered writes.

use super::Aggregate;
use crate::sys::vectored::VectoredWriter;
use crate::sys::IOV_MAX;
use std::io::{self, IoSlice};
use std::os::fd::AsFd;

impl Aggregate {
    /// Fills `out` with the aggregate's slices, in order, up to `out.len()`
    /// and at most [`IOV_MAX`](crate::IOV_MAX) of them. Returns how many
    /// slices were filled and how many bytes they hold.
    ///
    /// ```
    /// use std::io::IoSlice;
    /// let a: ferry::Aggregate = (0..3).map(|_| ferry::Buf::from_static(b"ab")).collect();
    /// let mut iov = [IoSlice::new(&[]); 2];
    /// assert_eq!(a.fill_io_slices(&mut iov), (2, 4));
    /// ```
    pub fn fill_io_slices<'a>(&'a self, out: &mut [IoSlice<'a>]) -> (usize, usize) {
        let mut bytes = 0;
        let mut n = 0;
        for (slot, c) in out.iter_mut().take(IOV_MAX).zip(self.chunks()) {
            *slot = IoSlice::new(c);
            bytes += c.len();
            n += 1;
        }
        (n, bytes)
    }

    /// Writes the whole aggregate to `fd`, consuming it as the kernel takes
    /// the bytes: `writev` in batches of up to `IOV_MAX` slices, resuming
    /// after partial writes, retrying `EINTR`. Returns the bytes written.
    ///
    /// On error `self` holds exactly the bytes that were not written, so
    /// nothing is lost: a caller may retry (after `WouldBlock`, say) or
    /// report. A reader that has gone away is `ErrorKind::BrokenPipe` —
    /// never a `SIGPIPE` death, whatever the process's signal disposition.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::Read;
    /// let (mut r, w) = std::io::pipe()?;
    /// let mut a: ferry::Aggregate = [ferry::Buf::from_static(b"one "), ferry::Buf::from_static(b"two")]
    ///     .into_iter()
    ///     .collect();
    /// assert_eq!(a.write_to(&w)?, 7);
    /// assert!(a.is_empty());
    /// drop(w);
    /// let mut s = String::new();
    /// r.read_to_string(&mut s)?;
    /// assert_eq!(s, "one two");
    /// # Ok(()) }
    /// ```
    pub fn write_to(&mut self, fd: impl AsFd) -> io::Result<usize> {
        if self.is_empty() {
            return Ok(0);
        }
        let mut w = VectoredWriter::new(fd.as_fd())?;
        let mut total = 0;
        while !self.is_empty() {
            let n = {
                let iov: Vec<IoSlice<'_>> = self.chunks().take(IOV_MAX).map(IoSlice::new).collect();
                w.write(&iov)?
            };
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    format!(
                        "write_to: the descriptor accepted 0 of {} bytes",
                        self.len()
                    ),
                ));
            }
            self.advance(n);
            total += n;
        }
        Ok(total)
    }
}
