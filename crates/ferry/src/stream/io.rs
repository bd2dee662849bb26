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
                    // A whole large file: fill fresh memory in huge pages.
                    crate::sys::map::advise_huge(&mut buf.spare_capacity_mut()[..left]);
                }
                let start = buf.len();
                let mut chunk = 64 << 10;
                loop {
                    // Grow only when full: a file's exact reservation is
                    // then filled in place and its end seen with room to
                    // spare, never copied into a bigger vector.
                    if buf.capacity() == buf.len() {
                        buf.reserve(chunk);
                    }
                    let old = buf.len();
                    let spare = buf.spare_capacity_mut();
                    let room = spare.len().min(chunk);
                    let r = $stream.with_inner($x, |i| i.read_into_uninit(&mut spare[..room]));
                    match r {
                        Ok(0) => return Ok(old - start),
                        // SAFETY: `read_into_uninit` initialized the first
                        // `n` spare bytes, which lie within the capacity.
                        Ok(n) => unsafe { buf.set_len(old + n) },
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e),
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

            /// One call into the stream for the whole slice (small writes
            /// are a copy into the current write buffer).
            #[inline]
            fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
                let $s = &*self;
                $stream.with_inner($x, |i| {
                    while !buf.is_empty() {
                        match i.write_from(buf) {
                            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                            Ok(n) => buf = &buf[n..],
                            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                            Err(e) => return Err(e),
                        }
                    }
                    Ok(())
                })
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

/// `BufRead::read_until` in one call into the stream: the current buffer
/// is searched in place and the line copied out once.
#[inline]
fn read_until_of(stream: &Stream, x: bool, delim: u8, out: &mut Vec<u8>) -> io::Result<usize> {
    stream.with_inner(x, |i| {
        let mut total = 0;
        loop {
            let (ptr, len) = match i.fill_buf() {
                Ok(b) => b,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            // SAFETY: `fill_buf` returned the unread part of the current read
            // buffer, unchanged until the next call on the state below.
            let b = unsafe { std::slice::from_raw_parts(ptr.as_ptr(), len) };
            let (n, done) = match memchr::memchr(delim, b) {
                Some(k) => (k + 1, true),
                None => (len, len == 0),
            };
            out.extend_from_slice(&b[..n]);
            i.consume(n);
            total += n;
            if done {
                return Ok(total);
            }
        }
    })
}

/// `BufRead::read_line` on [`read_until_of`], with std's rule: invalid
/// UTF-8 appends nothing and is an `InvalidData` error.
fn read_line_of(stream: &Stream, x: bool, line: &mut String) -> io::Result<usize> {
    let mut v = std::mem::take(line).into_bytes();
    let old = v.len();
    let r = read_until_of(stream, x, b'\n', &mut v);
    match String::from_utf8(v) {
        Ok(s) => {
            *line = s;
            r
        }
        Err(e) => {
            let mut v = e.into_bytes();
            v.truncate(old);
            *line = String::from_utf8(v).unwrap_or_default();
            r.and_then(|_| {
                Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "stream did not contain valid UTF-8",
                ))
            })
        }
    }
}

/// `fill_buf` hands out the stream's current buffer itself (no copy).
impl BufRead for Stream {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        fill_buf_of(self)
    }

    fn consume(&mut self, amt: usize) {
        self.inner.get_mut().consume(amt)
    }

    fn read_until(&mut self, delim: u8, buf: &mut Vec<u8>) -> io::Result<usize> {
        read_until_of(self, true, delim, buf)
    }

    fn read_line(&mut self, buf: &mut String) -> io::Result<usize> {
        read_line_of(self, true, buf)
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

    fn read_until(&mut self, delim: u8, buf: &mut Vec<u8>) -> io::Result<usize> {
        read_until_of(self.stream, true, delim, buf)
    }

    fn read_line(&mut self, buf: &mut String) -> io::Result<usize> {
        read_line_of(self.stream, true, buf)
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
