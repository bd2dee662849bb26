//! `std::io` on alloc streams: one offset and one set of buffers shared
//! with `salloc`.

use super::{Stream, StreamGuard};
use crate::Buf;
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};

macro_rules! std_io {
    ($ty:ty, $x:expr, $s:ident => $stream:expr) => {
        impl Read for $ty {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let $s = &*self;
                $stream.with_inner($x, |i| i.read_into(buf))
            }

            /// Reserves what is left of a file first (as `std::fs::File`
            /// does), so a whole-file read grows its vector once.
            fn read_to_end(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
                let $s = &*self;
                let left = $stream
                    .len()
                    .map(|l| l.saturating_sub($stream.position()))
                    .unwrap_or(0);
                if let Ok(left) = usize::try_from(left) {
                    buf.try_reserve(left.saturating_add(1))
                        .map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
                }
                let start = buf.len();
                let mut chunk = 64 << 10;
                loop {
                    if buf.capacity() - buf.len() < chunk {
                        buf.reserve(chunk);
                    }
                    let old = buf.len();
                    let room = (buf.capacity() - old).min(chunk);
                    buf.resize(old + room, 0);
                    let r = $stream.with_inner($x, |i| i.read_into(&mut buf[old..]));
                    match r {
                        Ok(0) => {
                            buf.truncate(old);
                            return Ok(old - start);
                        }
                        Ok(n) => buf.truncate(old + n),
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => buf.truncate(old),
                        Err(e) => {
                            buf.truncate(old);
                            return Err(e);
                        }
                    }
                    chunk = (chunk * 2).min(64 << 20);
                }
            }
        }

        impl Write for $ty {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                let $s = &*self;
                $stream.with_inner($x, |i| i.write_from(buf))
            }

            fn flush(&mut self) -> io::Result<()> {
                let $s = &*self;
                $stream.with_inner($x, |i| i.flush())
            }
        }

        impl Seek for $ty {
            fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
                let $s = &*self;
                $stream.with_inner($x, |i| i.seek(to))
            }
        }
    };
}

std_io!(Stream, true, s => s);
std_io!(&Stream, false, s => *s);
std_io!(StreamGuard<'_>, true, s => s.stream);

fn fill_buf_of(stream: &Stream) -> io::Result<&[u8]> {
    let (ptr, len) = stream.with_inner(true, |i| i.fill_buf())?;
    // SAFETY: the bytes are the unread part of the stream's current read
    // buffer; it is neither changed nor freed until the next call on the
    // stream, which the caller's `&mut` borrow (tied to the result) rules out.
    Ok(unsafe { std::slice::from_raw_parts(ptr.as_ptr(), len) })
}

/// `fill_buf` hands out the stream's current buffer itself (no copy).
impl BufRead for Stream {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        fill_buf_of(self)
    }

    fn consume(&mut self, amt: usize) {
        self.inner.get_mut().consume(amt)
    }
}

/// `fill_buf` hands out the stream's current buffer itself (no copy).
impl BufRead for StreamGuard<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        fill_buf_of(self.stream)
    }

    fn consume(&mut self, amt: usize) {
        self.with(|i| i.consume(amt))
    }
}

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
        let stream: &Stream = self;
        let r = stream.with_inner(true, |i| {
            Ok::<_, io::Error>(
                i.next_line()?
                    .map(|(slot, at, len)| i.read_bytes(slot, at, len) as *const [u8]),
            )
        })?;
        // SAFETY: the pointer is into the current read buffer, which stays
        // as it is until the next call on the stream; the returned borrow
        // holds `&mut self`.
        Ok(r.map(|p| unsafe { &*p }))
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
        Lines {
            stream: self,
            _not_send: std::marker::PhantomData,
        }
    }
}

/// An iterator of lines as [`Buf`]s (see [`Stream::buf_lines`]).
pub struct Lines<'a> {
    /// Borrowed from `&mut Stream` or `&mut StreamGuard`: exclusive.
    pub(crate) stream: &'a Stream,
    pub(crate) _not_send: std::marker::PhantomData<*const ()>,
}

impl Iterator for Lines<'_> {
    type Item = io::Result<Buf>;

    fn next(&mut self) -> Option<io::Result<Buf>> {
        let r = self.stream.with_inner(true, |i| {
            Ok::<_, io::Error>(
                i.next_line()?
                    .map(|(slot, at, len)| i.read_buf(slot, at, len)),
            )
        });
        r.transpose()
    }
}
