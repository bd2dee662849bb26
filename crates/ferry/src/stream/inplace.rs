//! In-place access: the stream's own buffer lent without a lease
//! (`fill_buf_min`, `next_line`, `write_space`), lines as `Buf`s, and
//! regions rebuilt from their raw form.
//!
//! Every borrow here comes from a `&mut self` method: while it lives, the
//! borrow checker rules out every other call on the stream — the only thing
//! that could retire or overwrite the buffer it points into. Each shape that
//! was a use after free with the old re-entrant lock now fails to compile:
//!
//! ```compile_fail,E0502
//! # fn main() -> std::io::Result<()> {
//! let mut s = ferry::Stream::from_bytes(b"line\nmore\n".to_vec());
//! let line = s.next_line()?.unwrap();
//! drop(s.salloc(usize::MAX / 2));     // `s` is mutably borrowed by `line`
//! println!("{line:?}");
//! # Ok(()) }
//! ```
//!
//! ```compile_fail,E0502
//! # fn main() -> std::io::Result<()> {
//! use std::io::{BufRead, Read};
//! let mut s = ferry::Stream::from_bytes(vec![1u8; 1 << 20]);
//! let b = s.fill_buf()?;
//! (&s).read(&mut [0u8; 8])?;         // `Read` on `&Stream`: same error
//! println!("{:?}", &b[..8]);
//! # Ok(()) }
//! ```
//!
//! ```compile_fail,E0502
//! # fn main() -> std::io::Result<()> {
//! let mut s = ferry::Stream::memory();
//! let room = s.write_space()?;
//! let r = s.salloc_mut(16)?;          // would hand out the same bytes
//! room[0] = 1;
//! # drop(r); Ok(()) }
//! ```
//!
//! ```compile_fail,E0502
//! # fn main() -> std::io::Result<()> {
//! let mut s = ferry::Stream::from_bytes(vec![1u8; 1 << 20]);
//! let r = s.salloc(10)?;              // a region borrows the stream…
//! let b = s.fill_buf_min(4096)?;      // …so no unleased borrow meanwhile
//! # drop((r, b)); Ok(()) }
//! ```

use super::{RawRegion, RawRegionMut, Region, RegionMut, Stream};
use crate::Buf;
use std::io;

impl Stream {
    /// The next line at the stream offset, with its `\n` (the last line may
    /// have none), borrowed from the stream's buffer: no copy, no
    /// allocation. `None` at end of stream.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let mut s = ferry::Stream::from_bytes(b"one\ntwo\nthree".to_vec());
    /// let mut n = 0;
    /// while let Some(line) = s.next_line()? {
    ///     n += line.len();
    /// }
    /// assert_eq!(n, 13);
    /// # Ok(()) }
    /// ```
    #[inline]
    pub fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        let i = self.inner.get_mut();
        match i.next_line()? {
            Some((slot, at, len)) => Ok(Some(i.read_bytes(slot, at, len))),
            None => Ok(None),
        }
    }

    /// `BufRead::fill_buf` with at least `min` unread bytes, unless the
    /// stream ends first (then what is left; empty at the end). The bytes
    /// are the stream's buffer (no copy) and stay until the next call on the
    /// stream; `consume` takes them.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use std::io::BufRead;
    /// let mut s = ferry::Stream::from_bytes(b"abcdef".to_vec());
    /// assert_eq!(s.fill_buf_min(4)?, b"abcdef");
    /// s.consume(4);
    /// assert_eq!(s.fill_buf_min(10)?, b"ef"); // the end comes first
    /// # Ok(()) }
    /// ```
    pub fn fill_buf_min(&mut self, min: usize) -> io::Result<&[u8]> {
        let (p, n) = self.inner.get_mut().fill_buf_min(min)?;
        // SAFETY: the unread part of the current read buffer, which stays
        // alive and unchanged until the next call on the stream; the borrow
        // holds `&mut self`, so there is none before it ends.
        Ok(unsafe { std::slice::from_raw_parts(p.as_ptr(), n) })
    }

    /// The room left in the stream's current write buffer, to write into in
    /// place; [`commit_space`](Stream::commit_space) then takes the first
    /// bytes as written (the write-side twin of `fill_buf` and `consume`).
    /// Nothing is reserved: any other call on the stream forgets the room.
    /// Empty in append mode (write those bytes with `Write` instead).
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let mut s = ferry::Stream::memory();
    /// let room = s.write_space()?;
    /// room[..3].copy_from_slice(b"abc");
    /// s.commit_space(3)?;
    /// assert_eq!(s.into_vec()?, b"abc");
    /// # Ok(()) }
    /// ```
    pub fn write_space(&mut self) -> io::Result<&mut [u8]> {
        let (p, n) = self.inner.get_mut().write_space()?;
        // SAFETY: bytes of the current write buffer past its used part,
        // handed to no region (`&mut self` means none is outstanding); the
        // borrow holds `&mut self`, so nothing else writes them meanwhile.
        Ok(unsafe { std::slice::from_raw_parts_mut(p.as_ptr(), n) })
    }

    /// Takes the first `n` bytes of [`write_space`](Stream::write_space)
    /// as written (`InvalidInput` if `n` is more than the room).
    pub fn commit_space(&mut self, n: usize) -> io::Result<()> {
        self.inner.get_mut().commit_space(n)
    }

    /// Lines (each with its `\n`) as `Buf`s: one reference-count bump per
    /// line, no copy.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// let mut s = ferry::Stream::from_bytes(b"a\nb\n".to_vec());
    /// let lines: Vec<ferry::Buf> = s.buf_lines().collect::<std::io::Result<_>>()?;
    /// assert_eq!(lines, [ferry::Buf::from_static(b"a\n"), ferry::Buf::from_static(b"b\n")]);
    /// # Ok(()) }
    /// ```
    pub fn buf_lines(&mut self) -> Lines<'_> {
        Lines { stream: self }
    }

    /// Rebuilds a region from [`Region::into_raw`], to use or free it.
    ///
    /// # Safety
    /// `raw` came from `into_raw` on a region of this same stream, and is
    /// rebuilt once.
    pub unsafe fn region_from_raw(&self, raw: RawRegion) -> Region<'_> {
        Region {
            stream: self,
            ptr: raw.ptr,
            len: raw.len,
            slot: raw.slot,
            offset: raw.offset,
        }
    }

    /// Rebuilds a write region from [`RegionMut::into_raw`].
    ///
    /// # Safety
    /// `raw` came from `into_raw` on a write region of this same stream, and
    /// is rebuilt once.
    pub unsafe fn region_mut_from_raw(&self, raw: RawRegionMut) -> RegionMut<'_> {
        RegionMut {
            stream: self,
            ptr: raw.ptr,
            len: raw.len,
            seq: raw.seq,
            offset: raw.offset,
        }
    }
}

/// An iterator of lines as [`Buf`]s (see [`Stream::buf_lines`]).
pub struct Lines<'a> {
    stream: &'a mut Stream,
}

impl Iterator for Lines<'_> {
    type Item = io::Result<Buf>;

    fn next(&mut self) -> Option<io::Result<Buf>> {
        let i = self.stream.inner.get_mut();
        let r = i
            .next_line()
            .map(|o| o.map(|(slot, at, len)| i.read_buf(slot, at, len)));
        r.transpose()
    }
}
