//! What a request owns while it is in flight: the memory the kernel reads
//! or writes, moved in when the request starts and handed back only once
//! the kernel has let go of it.

use crate::bulk::{Element, Endian};
use crate::sys::uring::Target;
use crate::{Buf, BufMut};

/// Memory a request owns. The bytes it exposes keep their address while
/// the request holds the buffer (heap memory, never moved by moving the
/// owner), so the kernel may use them until its completion.
pub(crate) trait IoBuffer: Send + 'static {
    /// The bytes a read fills (from the start): `None` for a buffer that
    /// can only be written out.
    fn read_room(&mut self) -> Option<&mut [u8]>;

    /// The bytes a write takes.
    fn write_bytes(&self) -> &[u8];

    /// The kernel has let go: `Some(n)` when the whole operation succeeded
    /// with `n` bytes (also after a cancel that came too late), `None`
    /// after an error or an effective cancel. Called exactly once, on
    /// whatever thread saw the completion.
    fn finish(&mut self, outcome: Option<usize>);

    /// The buffer as `Any`, for the request to hand back its own type.
    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any>;
}

/// A read into a `BufMut`'s spare capacity (all of it); a successful read
/// commits the bytes.
impl IoBuffer for BufMut {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        Some(self.spare_capacity_mut())
    }

    fn write_bytes(&self) -> &[u8] {
        self
    }

    fn finish(&mut self, outcome: Option<usize>) {
        if let Some(n) = outcome {
            self.commit(n);
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// A write of a `Buf` (immutable: the kernel reads bytes nobody writes).
impl IoBuffer for Buf {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        None
    }

    fn write_bytes(&self) -> &[u8] {
        self
    }

    fn finish(&mut self, _: Option<usize>) {}

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        self
    }
}

/// A typed array read from or written to a file in a byte order: read
/// arrays are swapped into the machine's order when they arrive; written
/// ones are swapped into the file's order before they go and back after.
pub(crate) struct Array<T: Element> {
    pub(crate) items: Vec<T>,
    pub(crate) order: Endian,
    pub(crate) write: bool,
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

impl<T: Element + Send> IoBuffer for Array<T> {
    fn read_room(&mut self) -> Option<&mut [u8]> {
        (!self.write).then(|| bytemuck::cast_slice_mut(&mut self.items[..]))
    }

    fn write_bytes(&self) -> &[u8] {
        bytemuck::cast_slice(&self.items[..])
    }

    fn finish(&mut self, outcome: Option<usize>) {
        if self.write || outcome.is_some() {
            T::to_native(&mut self.items, self.order);
        }
    }

    fn into_any(self: Box<Self>) -> Box<dyn std::any::Any> {
        Box::new(self.items)
    }
}

impl Target for Box<dyn IoBuffer> {
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
