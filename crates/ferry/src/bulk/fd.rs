//! Typed arrays on files: `read(2)` straight into the array's bytes and
//! `write(2)` straight from them (through a page-aligned scratch buffer
//! only when the byte order must be swapped on the way out).

use super::{stopped, Element, Endian, ReadArray, WriteArray};
use crate::sys::fileio;
use crate::BufMut;
use std::fs::File;
use std::io;
use std::mem::size_of;
use std::os::fd::{AsFd, BorrowedFd};

/// The scratch buffer a swapped write goes through, a piece at a time.
const SCRATCH: usize = 256 << 10;

impl ReadArray for File {
    fn read_array_in<T: Element>(&mut self, out: &mut [T], order: Endian) -> io::Result<()> {
        read_fd(self.as_fd(), out, order, None)
    }
}

impl ReadArray for &File {
    fn read_array_in<T: Element>(&mut self, out: &mut [T], order: Endian) -> io::Result<()> {
        read_fd(self.as_fd(), out, order, None)
    }
}

impl WriteArray for File {
    fn write_array_in<T: Element>(&mut self, items: &[T], order: Endian) -> io::Result<()> {
        write_fd(self.as_fd(), items, order, None)
    }
}

impl WriteArray for &File {
    fn write_array_in<T: Element>(&mut self, items: &[T], order: Endian) -> io::Result<()> {
        write_fd(self.as_fd(), items, order, None)
    }
}

/// Reads `out` from `fd` at its offset (`at` `None`: `read`, and at a
/// short end the offset is put back after the whole elements where the
/// descriptor can seek) or at `at` (`pread`: no offset moves), into the
/// array's bytes until they are all there or the input ends.
pub(crate) fn read_fd<T: Element>(
    fd: BorrowedFd<'_>,
    out: &mut [T],
    order: Endian,
    at: Option<u64>,
) -> io::Result<()> {
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
            let r = match at {
                Some(o) => crate::sys::transfer::pread(fd, &mut bytes[done..], o + done as u64),
                None => crate::sys::transfer::read(fd, &mut bytes[done..]),
            };
            match r {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        (done, error)
    };
    let whole = done / size;
    T::to_native(&mut out[..whole], order);
    if whole == of {
        return Ok(());
    }
    let bytes: &[u8] = bytemuck::cast_slice(out);
    let partial = bytes[whole * size..done].to_vec();
    // A `pread` moved no offset: the partial bytes are still there.
    let unread = partial.is_empty()
        || at.is_some()
        || crate::sys::transfer::seek_by(fd, -(partial.len() as i64)).is_ok();
    Err(stopped(whole, of, partial, unread, error))
}

/// Writes `items` to `fd` at its offset (or at `at`, with `pwrite`) in
/// the byte order `order`: the array's own bytes where no swap is needed,
/// else through a page-aligned scratch buffer a piece at a time. SIGPIPE
/// and SIGXFSZ come back as `EPIPE` and `EFBIG`.
pub(crate) fn write_fd<T: Element>(
    fd: BorrowedFd<'_>,
    items: &[T],
    order: Endian,
    at: Option<u64>,
) -> io::Result<()> {
    let size = size_of::<T>();
    if size == 0 || items.is_empty() {
        return Ok(());
    }
    let kind = fileio::fd_info(fd)?.write;
    if order.is_native() || size == 1 {
        return match fileio::write_all(fd, kind, bytemuck::cast_slice(items), at) {
            (_, None) => Ok(()),
            (n, Some(e)) => Err(stopped(n / size, items.len(), Vec::new(), false, Some(e))),
        };
    }
    let mut off = at;
    swapped_write(items, |piece| {
        let r = fileio::write_all(fd, kind, piece, off);
        if let Some(o) = off.as_mut() {
            *o += r.0 as u64;
        }
        match r {
            (_, None) => Ok(()),
            (n, Some(e)) => Err((n, e)),
        }
    })
}

/// Writes `items` swapped, a scratch buffer's worth at a time, through
/// `write` (which writes all of a piece, or says how much of it it wrote
/// before its error).
pub(crate) fn swapped_write<T: Element>(
    items: &[T],
    mut write: impl FnMut(&[u8]) -> Result<(), (usize, io::Error)>,
) -> io::Result<()> {
    let size = size_of::<T>();
    let per = (SCRATCH / size).max(1);
    let mut scratch = BufMut::try_with_capacity_aligned(per * size, crate::sys::page_size())?;
    scratch.commit(per * size);
    let mut done = 0;
    for chunk in items.chunks(per) {
        let bytes = &mut scratch[..std::mem::size_of_val(chunk)];
        bytes.copy_from_slice(bytemuck::cast_slice(chunk));
        swap_bytes::<T>(bytes);
        if let Err((n, e)) = write(bytes) {
            return Err(stopped(
                done + n / size,
                items.len(),
                Vec::new(),
                false,
                Some(e),
            ));
        }
        done += chunk.len();
    }
    Ok(())
}

/// Swaps the elements held in `bytes` (a whole number of them), aligned
/// for `T` or not: aligned ones in place, others through a small copy.
pub(crate) fn swap_bytes<T: Element>(bytes: &mut [u8]) {
    match bytemuck::try_cast_slice_mut::<u8, T>(bytes) {
        Ok(items) => T::swap_all(items),
        Err(_) => {
            for e in bytes.chunks_exact_mut(size_of::<T>()) {
                let mut one = [T::zeroed()];
                bytemuck::cast_slice_mut::<T, u8>(&mut one).copy_from_slice(e);
                T::swap_all(&mut one);
                e.copy_from_slice(bytemuck::cast_slice(&one));
            }
        }
    }
}
