//! `std::io` on alloc streams: one offset and one set of buffers shared
//! with `salloc`.

use super::Stream;
use std::io::{self, BufRead, Read, Seek, SeekFrom, Write};

macro_rules! std_io {
    ($ty:ty, $s:ident => $stream:expr) => {
        impl Read for $ty {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let $s = &*self;
                $stream.with_inner(|i| i.read_into(buf))
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
                    crate::sys::pages::advise_huge(&mut buf.spare_capacity_mut()[..left]);
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
                    let r = $stream.with_inner(|i| i.read_into_uninit(&mut spare[..room]));
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
                $stream.with_inner(|i| i.write_from(buf))
            }

            /// One call into the stream for the whole slice (small writes
            /// are a copy into the current write buffer).
            #[inline]
            fn write_all(&mut self, mut buf: &[u8]) -> io::Result<()> {
                let $s = &*self;
                $stream.with_inner(|i| {
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
                $stream.with_inner(|i| i.flush())
            }
        }

        impl Seek for $ty {
            fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
                let $s = &*self;
                $stream.with_inner(|i| i.seek_hand_over(to))
            }
        }
    };
}

std_io!(Stream, s => s);
std_io!(&Stream, s => *s);

/// `BufRead::read_until` in one call into the stream: the current buffer
/// is searched in place and the line copied out once.
#[inline]
fn read_until_of(stream: &Stream, delim: u8, out: &mut Vec<u8>) -> io::Result<usize> {
    stream.with_inner(|i| {
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
fn read_line_of(stream: &Stream, line: &mut String) -> io::Result<usize> {
    let mut v = std::mem::take(line).into_bytes();
    let old = v.len();
    let r = read_until_of(stream, b'\n', &mut v);
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
        let (ptr, len) = self.inner.get_mut().fill_buf()?;
        // SAFETY: the bytes are the unread part of the stream's current read
        // buffer; it is neither changed nor freed until the next call on the
        // stream, which the `&mut self` borrow tied to the result rules out.
        Ok(unsafe { std::slice::from_raw_parts(ptr.as_ptr(), len) })
    }

    fn consume(&mut self, amt: usize) {
        self.inner.get_mut().consume(amt)
    }

    fn read_until(&mut self, delim: u8, buf: &mut Vec<u8>) -> io::Result<usize> {
        read_until_of(self, delim, buf)
    }

    fn read_line(&mut self, buf: &mut String) -> io::Result<usize> {
        read_line_of(self, buf)
    }
}
