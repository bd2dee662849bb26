//! The order the sort follows: the caller's, through [`Compare`]. The
//! engine only ever asks it about two units (a line without its
//! terminator, or a whole record), by reference into the buffers they sit
//! in; nothing is copied to be compared.
//!
//! An order that is plainly the unsigned bytes of one range of each unit
//! says so ([`Compare::byte_key`] returns a [`ByteKey`]): the engine then
//! compares the first bytes of that range packed into an integer beside
//! each unit (eight for lines, twelve for records), so that most
//! comparisons are one integer comparison that does not touch the unit,
//! and never calls the caller for them.

use std::cmp::Ordering;

/// An order of units (lines without their terminator, or whole records).
///
/// `compare` must be a total order (consistent, transitive); `same`
/// decides which units `unique` folds into one, and must agree with
/// `compare` returning `Equal` (it exists so that a faster test can be
/// given). Implemented for [`ByteKey`], for [`By`] (a closure), and for
/// references to any implementation.
///
/// ```
/// use ferry::sort::{Compare, Input, Sorter};
/// use std::cmp::Ordering;
///
/// /// Lines by their length, then their bytes.
/// struct ByLength;
/// impl Compare for ByLength {
///     fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
///         a.len().cmp(&b.len()).then_with(|| a.cmp(b))
///     }
/// }
/// let out = Sorter::lines(ByLength)
///     .sort([Input::bytes(b"ccc\na\nbb\n")])?
///     .into_vec()?;
/// assert_eq!(out, b"a\nbb\nccc\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub trait Compare: Sync {
    /// The order of units `a` and `b`.
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering;

    /// Whether `a` and `b` are one for `unique` (`compare` gives `Equal`).
    fn same(&self, a: &[u8], b: &[u8]) -> bool {
        self.compare(a, b) == Ordering::Equal
    }

    /// `Some(key)` when this order *is* `key`'s: `compare(a, b) ==
    /// key.compare(a, b)` and `same(a, b) == key.same(a, b)` for every
    /// pair. The engine then compares by the key itself, without calling
    /// `compare` or `same`. `None` (the default) for any other order.
    fn byte_key(&self) -> Option<ByteKey> {
        None
    }
}

impl<T: Compare + ?Sized> Compare for &T {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        (**self).compare(a, b)
    }

    #[inline]
    fn same(&self, a: &[u8], b: &[u8]) -> bool {
        (**self).same(a, b)
    }

    fn byte_key(&self) -> Option<ByteKey> {
        (**self).byte_key()
    }
}

/// A closure as an order: [`by`] makes one.
#[derive(Clone, Copy, Debug)]
pub struct By<F>(pub F);

/// The order `f` gives.
///
/// ```
/// use ferry::sort::{by, Input, Sorter};
/// let out = Sorter::lines(by(|a: &[u8], b: &[u8]| b.cmp(a)))
///     .sort([Input::bytes(b"a\nc\nb\n")])?
///     .into_vec()?;
/// assert_eq!(out, b"c\nb\na\n");
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn by<F: Fn(&[u8], &[u8]) -> Ordering + Sync>(f: F) -> By<F> {
    By(f)
}

impl<F: Fn(&[u8], &[u8]) -> Ordering + Sync> Compare for By<F> {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        (self.0)(a, b)
    }
}

/// The order of the unsigned bytes `offset..offset + len` of each unit
/// (`memcmp`'s; for an unsigned big-endian integer of `len` bytes, its
/// numeric order), reversed or not. A range past a unit's end is cut at
/// its end: `len == usize::MAX` is "to the end", and
/// [`ByteKey::WHOLE`] is the whole unit. Units with equal keys are the
/// same for `unique`; the sort keeps them in input order.
///
/// ```
/// use ferry::sort::{ByteKey, Compare};
/// let k = ByteKey::new(1, 2);
/// assert_eq!(k.key(b"xabz"), b"ab");
/// assert_eq!(k.key(b"xa"), b"a");
/// assert!(k.reversed().compare(b"xaa", b"xbb").is_gt());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ByteKey {
    /// Where the key starts in a unit.
    pub offset: usize,
    /// Its length (`usize::MAX`: to the unit's end).
    pub len: usize,
    /// Descending instead of ascending.
    pub reverse: bool,
}

impl ByteKey {
    /// The whole unit, ascending: plain byte order (`LC_ALL=C sort`).
    pub const WHOLE: ByteKey = ByteKey {
        offset: 0,
        len: usize::MAX,
        reverse: false,
    };

    /// Bytes `offset..offset + len`, ascending.
    pub fn new(offset: usize, len: usize) -> ByteKey {
        ByteKey {
            offset,
            len,
            reverse: false,
        }
    }

    /// The same key, descending.
    pub fn reversed(self) -> ByteKey {
        ByteKey {
            reverse: !self.reverse,
            ..self
        }
    }

    /// The key's bytes in `unit`.
    #[inline]
    pub fn key<'u>(&self, unit: &'u [u8]) -> &'u [u8] {
        let from = self.offset.min(unit.len());
        let to = self.offset.saturating_add(self.len).min(unit.len());
        &unit[from..to]
    }

    /// The first eight key bytes of `unit` as a big-endian integer (zeros
    /// past the key's end), complemented when reversed: ordering two
    /// units by it agrees with [`compare`](Compare::compare) wherever it
    /// tells them apart.
    #[inline]
    pub(crate) fn prefix(&self, unit: &[u8]) -> u64 {
        let k = self.key(unit);
        let mut b = [0u8; 8];
        let n = k.len().min(8);
        b[..n].copy_from_slice(&k[..n]);
        let p = u64::from_be_bytes(b);
        if self.reverse {
            !p
        } else {
            p
        }
    }
}

impl Compare for ByteKey {
    #[inline]
    fn compare(&self, a: &[u8], b: &[u8]) -> Ordering {
        let d = self.key(a).cmp(self.key(b));
        if self.reverse {
            d.reverse()
        } else {
            d
        }
    }

    #[inline]
    fn same(&self, a: &[u8], b: &[u8]) -> bool {
        self.key(a) == self.key(b)
    }

    fn byte_key(&self) -> Option<ByteKey> {
        Some(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed prefix never contradicts the key's order, ascending or
    /// descending, for keys shorter and longer than eight bytes and keys
    /// that end in zeros.
    #[test]
    fn prefixes_agree_with_the_keys_order() {
        let units: [&[u8]; 9] = [
            b"",
            b"\0",
            b"a",
            b"a\0",
            b"a\0\0\0\0\0\0\0\0",
            b"ab",
            b"abcdefgh",
            b"abcdefghi",
            b"\xff\xff",
        ];
        for k in [
            ByteKey::WHOLE,
            ByteKey::WHOLE.reversed(),
            ByteKey::new(1, 3),
        ] {
            for a in units {
                for b in units {
                    let (pa, pb) = (k.prefix(a), k.prefix(b));
                    if pa != pb {
                        assert_eq!(pa.cmp(&pb), k.compare(a, b), "{a:?} {b:?} {k:?}");
                    }
                }
            }
        }
    }
}
