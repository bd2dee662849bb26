//! What [`write_buf`](super::write_buf) and
//! [`deallocate`](super::Exchange::deallocate) take: a buffer by value.

use crate::{Aggregate, Buf, BufMut};

/// A buffer handed over by value: a [`Buf`], a [`BufMut`] (frozen on the
/// way) or an [`Aggregate`] of slices. Whatever the caller gives up this
/// way it can no longer reach — Rust's moves say so — which is what lets
/// the library hand the bytes to the kernel by reference (fbufs'
/// `uf_write`: "an implicit `uf_deallocate` occurs before the call
/// returns").
///
/// ```
/// use ferry::exchange::Owned;
/// let o: Owned = ferry::BufMut::from(&b"abc"[..]).into();
/// assert_eq!(o.len(), 3);
/// let a: ferry::Aggregate = o.into_aggregate();
/// assert_eq!(a, b"abc"[..]);
/// ```
#[derive(Debug)]
pub enum Owned {
    /// Immutable shared bytes.
    Buf(Buf),
    /// A unique writable buffer: its written bytes, frozen first.
    Mut(BufMut),
    /// Slices, in order.
    Aggregate(Aggregate),
}

impl Owned {
    /// Bytes it holds.
    ///
    /// ```
    /// let o = ferry::exchange::Owned::from(ferry::Buf::from_static(b"four"));
    /// assert_eq!(o.len(), 4);
    /// ```
    pub fn len(&self) -> usize {
        match self {
            Owned::Buf(b) => b.len(),
            Owned::Mut(m) => m.len(),
            Owned::Aggregate(a) => a.len(),
        }
    }

    /// True if it holds no bytes.
    ///
    /// ```
    /// assert!(ferry::exchange::Owned::from(ferry::BufMut::new()).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes as an aggregate, with no copy: a `BufMut` is frozen
    /// (in a pool's [protect mode](crate::PoolConfig::protect) its pages
    /// turn read-only here).
    ///
    /// ```
    /// let a = ferry::exchange::Owned::from(ferry::Buf::from_static(b"xy")).into_aggregate();
    /// assert_eq!(a.slice_count(), 1);
    /// ```
    pub fn into_aggregate(self) -> Aggregate {
        match self {
            Owned::Buf(b) => Aggregate::from(b),
            Owned::Mut(m) => Aggregate::from(m.freeze()),
            Owned::Aggregate(a) => a,
        }
    }
}

impl From<Buf> for Owned {
    fn from(b: Buf) -> Owned {
        Owned::Buf(b)
    }
}

impl From<BufMut> for Owned {
    fn from(m: BufMut) -> Owned {
        Owned::Mut(m)
    }
}

impl From<Aggregate> for Owned {
    fn from(a: Aggregate) -> Owned {
        Owned::Aggregate(a)
    }
}
