//! Typed arrays on alloc streams: elements copied out of the stream's own
//! buffer (a mapped file's pages, or its read buffers) a whole number at a
//! time, so that a partial element at the end is never consumed; written
//! through the stream's `Write` (swapped through a scratch buffer where
//! the byte order differs).

use super::fd::swapped_write;
use super::{stopped, Element, Endian, ReadArray, WriteArray};
use crate::Stream;
use std::io::{self, BufRead, Write};
use std::mem::size_of;

impl ReadArray for Stream {
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::bulk::{Endian, ReadArray};
    /// let mut s = ferry::Stream::from_bytes(vec![0, 0, 0, 7, 0, 0, 0, 9]);
    /// let mut v = [0i32; 2];
    /// s.read_array_in(&mut v, Endian::Big)?;
    /// assert_eq!(v, [7, 9]);
    /// # Ok(()) }
    /// ```
    fn read_array_in<T: Element>(&mut self, out: &mut [T], order: Endian) -> io::Result<()> {
        let size = size_of::<T>();
        if size == 0 || out.is_empty() {
            return Ok(());
        }
        let of = out.len();
        let (done, error) = {
            let bytes: &mut [u8] = bytemuck::cast_slice_mut(out);
            let mut done = 0;
            let mut error = None;
            while done < bytes.len() {
                // At least one whole element, unless the stream ends.
                let avail = match self.fill_buf_min(size) {
                    Ok(a) => a,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                };
                let take = avail.len().min(bytes.len() - done) / size * size;
                if take == 0 {
                    break;
                }
                bytes[done..done + take].copy_from_slice(&avail[..take]);
                self.consume(take);
                done += take;
            }
            (done, error)
        };
        let whole = done / size;
        T::to_native(&mut out[..whole], order);
        if whole == of {
            return Ok(());
        }
        // The partial element is still the stream's: left unconsumed.
        let partial = match &error {
            None => self.fill_buf().map(<[u8]>::to_vec).unwrap_or_default(),
            Some(_) => Vec::new(),
        };
        Err(stopped(whole, of, partial, true, error))
    }
}

impl WriteArray for Stream {
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::bulk::{Endian, WriteArray};
    /// let mut s = ferry::Stream::memory();
    /// s.write_array_in(&[1u16, 2], Endian::Big)?;
    /// assert_eq!(s.into_vec()?, [0, 1, 0, 2]);
    /// # Ok(()) }
    /// ```
    fn write_array_in<T: Element>(&mut self, items: &[T], order: Endian) -> io::Result<()> {
        let size = size_of::<T>();
        if size == 0 || items.is_empty() {
            return Ok(());
        }
        let s: &Stream = self;
        if order.is_native() || size == 1 {
            return write_counted(s, bytemuck::cast_slice(items))
                .map_err(|(n, e)| stopped(n / size, items.len(), Vec::new(), false, Some(e)));
        }
        swapped_write(items, |piece| write_counted(s, piece))
    }
}

/// Writes all of `data` into the stream, or says how much of it went in
/// before the error.
fn write_counted(mut s: &Stream, data: &[u8]) -> Result<(), (usize, io::Error)> {
    let mut done = 0;
    while done < data.len() {
        match s.write(&data[done..]) {
            Ok(0) => return Err((done, io::ErrorKind::WriteZero.into())),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err((done, e)),
        }
    }
    Ok(())
}
