//! Bytes already in memory seen as typed arrays: `as_array` without a
//! copy where the bytes allow it, `to_array` with one (and named so).

use super::{Element, Endian};
use crate::stream::Region;
use crate::{Buf, BufMut};
use std::fmt;
use std::mem::{align_of, size_of};

/// Why bytes cannot be seen as a `&[T]` in place.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewError {
    /// The first byte is not aligned for the element type.
    Misaligned {
        /// The bytes' address.
        addr: usize,
        /// The alignment the element type needs.
        align: usize,
    },
    /// The length is not a whole number of elements.
    Length {
        /// Bytes.
        len: usize,
        /// One element's size.
        size: usize,
    },
    /// The bytes are in a byte order this machine does not use: they
    /// must be swapped, so copied (`to_array`).
    ByteOrder(Endian),
    /// The element type has no size.
    ZeroSized,
}

impl fmt::Display for ViewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            ViewError::Misaligned { addr, align } => write!(
                f,
                "bytes at {addr:#x} are not aligned to {align} for the element type (to_array copies)"
            ),
            ViewError::Length { len, size } => write!(
                f,
                "{len} bytes are not a whole number of {size}-byte elements"
            ),
            ViewError::ByteOrder(e) => write!(
                f,
                "the bytes are {e:?}-endian, not this machine's order (to_array copies and swaps)"
            ),
            ViewError::ZeroSized => write!(f, "a zero-sized element type has no array view"),
        }
    }
}

impl std::error::Error for ViewError {}

/// The size of a `T`, if `len` bytes hold whole ones: the checks every
/// array view and copy makes first.
fn element_size<T: Element>(len: usize) -> Result<usize, ViewError> {
    let size = size_of::<T>();
    if size == 0 {
        return Err(ViewError::ZeroSized);
    }
    if !len.is_multiple_of(size) {
        return Err(ViewError::Length { len, size });
    }
    Ok(size)
}

/// `bytes` as `&[T]`, in place. See [`Buf::as_array`].
pub fn view<T: Element>(bytes: &[u8], order: Endian) -> Result<&[T], ViewError> {
    let size = element_size::<T>(bytes.len())?;
    if !order.is_native() && size > 1 {
        return Err(ViewError::ByteOrder(order));
    }
    bytemuck::try_cast_slice(bytes).map_err(|_| ViewError::Misaligned {
        addr: bytes.as_ptr() as usize,
        align: align_of::<T>(),
    })
}

/// `bytes` copied into a new `Vec<T>` in the machine's order. See
/// [`Buf::to_array`].
pub fn copy_to_array<T: Element>(bytes: &[u8], order: Endian) -> Result<Vec<T>, ViewError> {
    let size = element_size::<T>(bytes.len())?;
    let mut v = vec![T::zeroed(); bytes.len() / size];
    bytemuck::cast_slice_mut::<T, u8>(&mut v).copy_from_slice(bytes);
    T::to_native(&mut v, order);
    Ok(v)
}

impl Buf {
    /// The bytes as a typed array, without a copy: they must be aligned
    /// for `T`, a whole number of elements, and in this machine's byte
    /// order (`order` native, or `T` one byte wide); otherwise a
    /// [`ViewError`] says which, and [`to_array`](Self::to_array) copies.
    /// A mapped file's pages are page-aligned, so an aligned offset into
    /// one views in place.
    ///
    /// ```
    /// use ferry::bulk::{Endian, ViewError};
    /// let v: Vec<u8> = 1000u32.to_ne_bytes().repeat(4);
    /// let b = ferry::Buf::from(v);
    /// assert_eq!(b.as_array::<u32>(Endian::Native).unwrap(), &[1000; 4]);
    /// assert!(matches!(b.slice(1..5).as_array::<u32>(Endian::Native),
    ///                  Err(ViewError::Misaligned { .. })));
    /// assert_eq!(b.slice(1..5).to_array::<u32>(Endian::Native).unwrap().len(), 1);
    /// ```
    pub fn as_array<T: Element>(&self, order: Endian) -> Result<&[T], ViewError> {
        view(self, order)
    }

    /// The bytes copied into a `Vec<T>` in this machine's order (swapped
    /// from `order`): the copying twin of [`as_array`](Self::as_array).
    pub fn to_array<T: Element>(&self, order: Endian) -> Result<Vec<T>, ViewError> {
        copy_to_array(self, order)
    }
}

impl Region<'_> {
    /// The region's bytes as a typed array, without a copy (see
    /// [`Buf::as_array`]); a mapped stream's regions at aligned offsets
    /// are views of the file's pages.
    ///
    /// ```
    /// # fn main() -> std::io::Result<()> {
    /// use ferry::bulk::Endian;
    /// let bytes: Vec<u8> = [1u64, 2, 3].iter().flat_map(|x| x.to_ne_bytes()).collect();
    /// let s = ferry::Stream::from_bytes(bytes);
    /// let r = s.salloc(24)?;
    /// if let Ok(a) = r.as_array::<u64>(Endian::Native) {
    ///     assert_eq!(a, &[1, 2, 3]);
    /// }
    /// assert_eq!(r.to_array::<u64>(Endian::Native).unwrap(), [1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn as_array<T: Element>(&self, order: Endian) -> Result<&[T], ViewError> {
        view(self, order)
    }

    /// The region's bytes copied into a `Vec<T>` in this machine's order.
    pub fn to_array<T: Element>(&self, order: Endian) -> Result<Vec<T>, ViewError> {
        copy_to_array(self, order)
    }
}

impl BufMut {
    /// The buffer's bytes (its length, not its spare capacity) as a
    /// mutable typed array, in place — for sorting or swapping the
    /// elements a read brought into a page-aligned buffer. Same rules as
    /// [`Buf::as_array`], except that any byte order is allowed (the
    /// caller swaps with [`Element::to_native`]).
    ///
    /// ```
    /// use ferry::bulk::{Element, Endian};
    /// let mut m = ferry::BufMut::with_capacity_aligned(16, 4096);
    /// m.extend_from_slice(&[0, 0, 0, 2, 0, 0, 0, 1]);
    /// let a = m.as_array_mut::<u32>().unwrap();
    /// u32::to_native(a, Endian::Big);
    /// a.sort();
    /// assert_eq!(a, &[1, 2]);
    /// ```
    pub fn as_array_mut<T: Element>(&mut self) -> Result<&mut [T], ViewError> {
        element_size::<T>(self.len())?;
        let addr = self.as_ptr() as usize;
        bytemuck::try_cast_slice_mut(self.as_mut_slice()).map_err(|_| ViewError::Misaligned {
            addr,
            align: align_of::<T>(),
        })
    }
}
