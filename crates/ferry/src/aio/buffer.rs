//! What a request owns while it is in flight: the memory the kernel reads
//! or writes, moved in when the request starts and handed back only once
//! the kernel has let go of it.

use crate::bulk::{Element, Endian};
use crate::sys::uring::Target;
use crate::{Buf, BufMut};

/// Memory a request can own: a read fills [`read_room`](Self::read_room),
/// a write sends [`write_bytes`](Self::write_bytes).
/// [`AsyncFile::read_buffer_at`](super::AsyncFile::read_buffer_at) and
/// [`write_buffer_at`](super::AsyncFile::write_buffer_at) take any such
/// buffer; ferry implements it for [`BufMut`] and [`Buf`].
///
/// # Safety
///
/// The kernel (or a worker thread) uses the bytes these methods return
/// after they return, until the request's completion, with no borrow
/// held. An implementor promises that the bytes stay at the same address,
/// valid, and used by no one else for as long as the request owns the
/// value — heap memory the value owns (moving the value does not move
/// them), not memory inside the value itself; that the two methods return
/// the same span each time; and that nothing else writes bytes a write
/// sends.
pub unsafe trait IoBuffer: Send + 'static {
    /// The bytes a read fills, from the start; `None` for a buffer that
    /// can only be written out (a read of it moves nothing).
    fn read_room(&mut self) -> Option<&mut [u8]>;

    /// The bytes a write sends.
    fn write_bytes(&self) -> &[u8];

    /// The kernel has let go of the buffer of a read (`write` false: from
    /// [`read_room`](Self::read_room)) or of a write (from
    /// [`write_bytes`](Self::write_bytes)): `moved` bytes from the start
    /// of that span moved (for a read, arrived), and `complete` says
    /// whether the whole operation succeeded (also after a cancel that
    /// came too late to stop it) or ended in an error, a cancel or its
    /// deadline. Called exactly once, on whatever thread saw the
    /// completion.
    fn finish(&mut self, write: bool, moved: usize, complete: bool) {
        let _ = (write, moved, complete);
    }
}

/// A read into a `BufMut`'s spare capacity (all of it); the bytes that
/// arrived are committed however the read ended (an error, a cancel or a
/// deadline after some bytes leaves exactly those in the buffer). A write
/// sends its bytes and leaves it as it was.
// SAFETY: the spare capacity is the BufMut's heap block, which moving the
// BufMut does not move and which only its owner (the request) touches.
unsafe impl IoBuffer for BufMut {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        Some(self.spare_capacity_mut())
    }

    fn write_bytes(&self) -> &[u8] {
        self
    }

    fn finish(&mut self, write: bool, moved: usize, _complete: bool) {
        // After a write the spare capacity holds nothing that arrived.
        if !write {
            let room = self.spare_capacity_mut().len();
            self.commit(moved.min(room));
        }
    }
}

/// A write of a `Buf`: immutable, so the kernel reads bytes nobody
/// writes, whoever else holds the same block.
// SAFETY: a Buf's bytes never change while it is visible (the memory
// layer's rule) and live as long as the Buf.
unsafe impl IoBuffer for Buf {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        None
    }

    fn write_bytes(&self) -> &[u8] {
        self
    }
}

/// A request's buffer, type-erased: what the backends hold.
pub(crate) trait Owned: Send {
    fn read_room(&mut self) -> Option<&mut [u8]>;
    fn write_bytes(&self) -> &[u8];
    fn finish(&mut self, moved: usize, complete: bool);
    /// The value the request hands back, as `Any`.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

/// Any [`IoBuffer`], handed back as itself, and whether a write sends it.
pub(crate) struct Plain<B>(pub(crate) B, pub(crate) bool);

impl<B: IoBuffer> Owned for Plain<B> {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        self.0.read_room()
    }

    fn write_bytes(&self) -> &[u8] {
        self.0.write_bytes()
    }

    fn finish(&mut self, moved: usize, complete: bool) {
        self.0.finish(self.1, moved, complete)
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        Box::new(self.0)
    }
}

/// A typed array read from or written to a file in a byte order: read
/// arrays are swapped into the machine's order when they arrive; written
/// ones are swapped into the file's order before they go and back after.
/// Handed back as the `Vec<T>`.
pub(crate) struct Array<T: Element> {
    items: Vec<T>,
    order: Endian,
    write: bool,
}

impl<T: Element> Array<T> {
    pub(crate) fn new(mut items: Vec<T>, order: Endian, write: bool) -> Array<T> {
        if write {
            // Into the file's order; back when the kernel lets go.
            T::to_native(&mut items, order);
        }
        Array {
            items,
            order,
            write,
        }
    }
}

impl<T: Element + Send> Owned for Array<T> {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        (!self.write).then(|| bytemuck::cast_slice_mut(&mut self.items[..]))
    }

    fn write_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.items[..])
    }

    fn finish(&mut self, moved: usize, complete: bool) {
        if self.write || complete {
            T::to_native(&mut self.items, self.order);
        } else {
            // The whole elements that arrived; a partial one stays as the
            // file's bytes.
            let whole = (moved / std::mem::size_of::<T>()).min(self.items.len());
            T::to_native(&mut self.items[..whole], self.order);
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        Box::new(self.items)
    }
}

impl Target for Box<dyn Owned> {
    fn span(&mut self, write: bool) -> (*mut u8, usize) {
        if write {
            let b = self.write_bytes();
            (b.as_ptr().cast_mut(), b.len())
        } else {
            match self.read_room() {
                Some(r) => (r.as_mut_ptr(), r.len()),
                None => (std::ptr::null_mut(), 0),
            }
        }
    }
}
