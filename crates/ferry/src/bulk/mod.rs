//! Bulk typed-array I/O, after Titanium's `readArray`/`writeArray`
//! (Bonachea, *Bulk File I/O Extensions to Java*): a whole array of
//! plain-old-data elements moved in one call, with no per-element
//! calls, in the byte order the file keeps — swapped in place at memory
//! speed where it differs from the machine's.
//!
//! * [`ReadArray::read_array`] / [`WriteArray::write_array`] on
//!   [`std::fs::File`] (and `&File`) and on a ferry [`Stream`](crate::Stream),
//!   in the reader's byte order ([`Endian::Native`] unless an
//!   [`Ordered`] wrapper says otherwise), or per call with
//!   [`read_array_in`](ReadArray::read_array_in).
//! * Zero copy: [`Buf::as_array`](crate::Buf::as_array) and
//!   [`Region::as_array`](crate::Region::as_array) view bytes already in
//!   memory (a mapped file's pages) as `&[T]` when they are aligned for
//!   `T` and in the machine's byte order — a clear [`ViewError`]
//!   otherwise, never a silent copy; `to_array` copies, and says so.
//!
//! A short input is an [`UnexpectedEof`](std::io::ErrorKind::UnexpectedEof)
//! error carrying an [`Incomplete`]: how many whole elements arrived (they
//! are in the array, in the machine's order) and the bytes of the partial
//! one. Those bytes are not lost: a file's or a stream's offset is left
//! after the whole elements, so they stay readable; from a pipe, they are
//! in the error.
//!
//! ```
//! # fn main() -> std::io::Result<()> {
//! use ferry::bulk::{Endian, Ordered, ReadArray, WriteArray};
//! use std::io::Seek;
//! let mut f = tempfile::tempfile()?;
//! let data: Vec<u64> = (0..1000).collect();
//! Ordered::new(&mut f, Endian::Big).write_array(&data)?;   // as Java writes
//! f.rewind()?;
//! let mut back = vec![0u64; 1000];
//! f.read_array_in(&mut back, Endian::Big)?;                 // one call
//! assert_eq!(back, data);
//! # Ok(()) }
//! ```

mod fd;
mod order;
mod stream;
mod view;

pub(crate) use fd::{read_fd, write_fd};
pub use order::{Element, Endian};
pub use view::ViewError;

use std::fmt;
use std::io;

/// Reading whole typed arrays.
pub trait ReadArray {
    /// The byte order [`read_array`](Self::read_array) assumes
    /// ([`Endian::Native`] unless the reader is [`Ordered`]).
    fn byte_order(&self) -> Endian {
        Endian::Native
    }

    /// Fills `out` from the input, whose elements are in the byte order
    /// `order`; the elements end up in the machine's order. A short input
    /// is an `UnexpectedEof` error with an [`Incomplete`] (see the
    /// [module docs](self)); any other error carries one too.
    fn read_array_in<T: Element>(&mut self, out: &mut [T], order: Endian) -> io::Result<()>;

    /// [`read_array_in`](Self::read_array_in) in the reader's
    /// [`byte_order`](Self::byte_order).
    fn read_array<T: Element>(&mut self, out: &mut [T]) -> io::Result<()> {
        let order = self.byte_order();
        self.read_array_in(out, order)
    }
}

/// Writing whole typed arrays.
pub trait WriteArray {
    /// The byte order [`write_array`](Self::write_array) writes in.
    fn byte_order(&self) -> Endian {
        Endian::Native
    }

    /// Writes every element of `items` in the byte order `order` (the
    /// array itself is not changed: a swap goes through a scratch
    /// buffer). An error carries an [`Incomplete`] with the whole elements
    /// written before it.
    fn write_array_in<T: Element>(&mut self, items: &[T], order: Endian) -> io::Result<()>;

    /// [`write_array_in`](Self::write_array_in) in the writer's
    /// [`byte_order`](Self::byte_order).
    fn write_array<T: Element>(&mut self, items: &[T]) -> io::Result<()> {
        let order = self.byte_order();
        self.write_array_in(items, order)
    }
}

/// A reader or writer with a byte order of its own (per stream, as a
/// Java `DataInputStream` is big-endian).
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::bulk::{Endian, Ordered, ReadArray};
/// let mut s = Ordered::new(ferry::Stream::from_bytes(vec![0, 1, 0, 2]), Endian::Big);
/// let mut v = [0u16; 2];
/// s.read_array(&mut v)?;
/// assert_eq!(v, [1, 2]);
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct Ordered<S> {
    inner: S,
    order: Endian,
}

impl<S> Ordered<S> {
    /// `inner`, read and written in `order`.
    pub fn new(inner: S, order: Endian) -> Ordered<S> {
        Ordered { inner, order }
    }

    /// The reader or writer inside.
    pub fn get_mut(&mut self) -> &mut S {
        &mut self.inner
    }

    /// Takes the reader or writer back.
    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: ReadArray> ReadArray for Ordered<S> {
    fn byte_order(&self) -> Endian {
        self.order
    }

    fn read_array_in<T: Element>(&mut self, out: &mut [T], order: Endian) -> io::Result<()> {
        self.inner.read_array_in(out, order)
    }
}

impl<S: WriteArray> WriteArray for Ordered<S> {
    fn byte_order(&self) -> Endian {
        self.order
    }

    fn write_array_in<T: Element>(&mut self, items: &[T], order: Endian) -> io::Result<()> {
        self.inner.write_array_in(items, order)
    }
}

impl<S: ReadArray + ?Sized> ReadArray for &mut S {
    fn byte_order(&self) -> Endian {
        (**self).byte_order()
    }

    fn read_array_in<T: Element>(&mut self, out: &mut [T], order: Endian) -> io::Result<()> {
        (**self).read_array_in(out, order)
    }
}

impl<S: WriteArray + ?Sized> WriteArray for &mut S {
    fn byte_order(&self) -> Endian {
        (**self).byte_order()
    }

    fn write_array_in<T: Element>(&mut self, items: &[T], order: Endian) -> io::Result<()> {
        (**self).write_array_in(items, order)
    }
}

/// What a bulk call that stopped early got done: carried inside the
/// `io::Error` it returned ([`incomplete`] finds it).
#[derive(Debug)]
pub struct Incomplete {
    /// Whole elements read (in the array, in the machine's order) or
    /// written.
    pub elements: usize,
    /// Elements asked for.
    pub of: usize,
    /// A read: the bytes of the partial element that followed the whole
    /// ones (fewer than one element).
    pub partial: Vec<u8>,
    /// A read: the partial bytes are still readable (the offset was put
    /// back after the whole elements); false where the input cannot seek
    /// (a pipe), and then `partial` is the only copy.
    pub unread: bool,
    error: Option<io::Error>,
}

impl Incomplete {
    /// The I/O error that stopped the call (`None`: the input ended).
    pub fn io_error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }
}

impl fmt::Display for Incomplete {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.error {
            None => write!(
                f,
                "the input ended after {} of {} elements ({} bytes of the next {})",
                self.elements,
                self.of,
                self.partial.len(),
                if self.unread {
                    "left unread"
                } else {
                    "read, kept in this error"
                }
            )?,
            Some(e) => write!(
                f,
                "{} after {} of {} elements",
                crate::error::describe(e),
                self.elements,
                self.of
            )?,
        }
        Ok(())
    }
}

impl crate::error::CarriesOsError for Incomplete {
    fn os_error(&self) -> Option<i32> {
        self.io_error().and_then(crate::error::os_error)
    }
}

impl std::error::Error for Incomplete {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.error
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The [`Incomplete`] inside an error from a bulk call.
///
/// ```
/// # fn main() -> std::io::Result<()> {
/// use ferry::bulk::ReadArray;
/// let mut s = ferry::Stream::from_bytes(vec![1, 0, 0, 0, 2, 0, 0]);
/// let mut v = [0u32; 4];
/// let e = s.read_array(&mut v).unwrap_err();
/// assert_eq!(e.kind(), std::io::ErrorKind::UnexpectedEof);
/// let inc = ferry::bulk::incomplete(&e).unwrap();
/// assert_eq!((inc.elements, inc.partial.len(), inc.unread), (1, 3, true));
/// assert_eq!(v[0], u32::from_le_bytes([1, 0, 0, 0]).to_le());
/// # Ok(()) }
/// ```
pub fn incomplete(e: &io::Error) -> Option<&Incomplete> {
    e.get_ref().and_then(|r| r.downcast_ref::<Incomplete>())
}

/// The error a bulk call returns after `elements` whole elements: the
/// input's end (`error` `None`) or an I/O error, whose kind it keeps.
pub(crate) fn stopped(
    elements: usize,
    of: usize,
    partial: Vec<u8>,
    unread: bool,
    error: Option<io::Error>,
) -> io::Error {
    crate::error::register::<Incomplete>();
    let kind = error
        .as_ref()
        .map_or(io::ErrorKind::UnexpectedEof, io::Error::kind);
    io::Error::new(
        kind,
        Incomplete {
            elements,
            of,
            partial,
            unread,
            error,
        },
    )
}
