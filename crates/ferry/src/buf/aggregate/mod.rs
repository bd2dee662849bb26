//! `Aggregate`: IO-Lite's buffer aggregate — an ordered list of `Buf`
//! slices that reads as one run of bytes.

mod io;
mod reader;
mod stats;

pub use reader::AggregateReader;
pub use stats::FragmentStats;

use super::shared::resolve_range;
use super::{Buf, BufMut};
use std::collections::VecDeque;
use std::fmt;
use std::ops::RangeBounds;

/// An ordered list of [`Buf`] slices, read as one sequence of bytes.
///
/// ```text
///   Aggregate (len = 11)
///   ┌────────┬──────────┬─────────┐
///   │ Buf ──►│ Buf ────►│ Buf ───►│   each Buf: (block, ptr, len)
///   └────────┴──────────┴─────────┘
///      "GET "   "/a.html"  "\r\n"  ← bytes stay where they are
/// ```
///
/// Every operation costs time in proportion to the number of slices, never
/// to the number of bytes — except those whose name says they copy
/// ([`coalesce`](Aggregate::coalesce), [`copy_to_slice`](Aggregate::copy_to_slice),
/// [`copy_to_vec`](Aggregate::copy_to_vec), and [`replace`](Aggregate::replace),
/// which copies only the new bytes). It never coalesces on its own. Empty
/// slices are not stored.
///
/// ```
/// use ferry::{Aggregate, Buf};
/// let mut a = Aggregate::new();
/// a.append_buf(Buf::from_static(b"hello "));
/// a.append_buf(Buf::from(b"world".to_vec()));
/// let tail = a.split_off(3);
/// assert_eq!(a, b"hel"[..]);
/// assert_eq!(tail, b"lo world"[..]);
/// assert_eq!(tail.slice_count(), 2);
/// ```
#[derive(Clone, Default)]
pub struct Aggregate {
    bufs: VecDeque<Buf>,
    len: usize,
}

impl Aggregate {
    /// An empty aggregate.
    pub fn new() -> Aggregate {
        Aggregate::default()
    }

    /// An empty aggregate with room for `slices` slices.
    pub fn with_capacity(slices: usize) -> Aggregate {
        Aggregate {
            bufs: VecDeque::with_capacity(slices),
            len: 0,
        }
    }

    /// Total bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// True if there are no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of (non-empty) slices.
    pub fn slice_count(&self) -> usize {
        self.bufs.len()
    }

    /// The slices, in order.
    pub fn bufs(&self) -> impl DoubleEndedIterator<Item = &Buf> + ExactSizeIterator + '_ {
        self.bufs.iter()
    }

    /// The bytes, slice by slice.
    ///
    /// ```
    /// let a: ferry::Aggregate = [ferry::Buf::from_static(b"ab"), ferry::Buf::from_static(b"c")]
    ///     .into_iter()
    ///     .collect();
    /// let chunks: Vec<&[u8]> = a.chunks().collect();
    /// assert_eq!(chunks, [&b"ab"[..], &b"c"[..]]);
    /// ```
    pub fn chunks(&self) -> impl DoubleEndedIterator<Item = &[u8]> + ExactSizeIterator + '_ {
        self.bufs.iter().map(|b| b.as_slice())
    }

    /// Adds a slice at the end (an empty one is dropped).
    pub fn append_buf(&mut self, buf: Buf) {
        if !buf.is_empty() {
            self.len += buf.len();
            self.bufs.push_back(buf);
        }
    }

    /// Adds a slice at the front (an empty one is dropped).
    pub fn prepend_buf(&mut self, buf: Buf) {
        if !buf.is_empty() {
            self.len += buf.len();
            self.bufs.push_front(buf);
        }
    }

    /// Moves all of `other`'s slices to the end.
    ///
    /// ```
    /// let mut a = ferry::Aggregate::from(ferry::Buf::from_static(b"ab"));
    /// a.append(ferry::Aggregate::from(ferry::Buf::from_static(b"cd")));
    /// assert_eq!(a, b"abcd"[..]);
    /// ```
    pub fn append(&mut self, mut other: Aggregate) {
        if self.bufs.is_empty() {
            *self = other;
            return;
        }
        self.len += other.len;
        self.bufs.append(&mut other.bufs);
    }

    /// Moves all of `other`'s slices to the front.
    ///
    /// ```
    /// let mut a = ferry::Aggregate::from(ferry::Buf::from_static(b"cd"));
    /// a.prepend(ferry::Aggregate::from(ferry::Buf::from_static(b"ab")));
    /// assert_eq!(a, b"abcd"[..]);
    /// ```
    pub fn prepend(&mut self, mut other: Aggregate) {
        other.append(std::mem::take(self));
        *self = other;
    }

    /// Joins aggregates end to end (no bytes are copied).
    ///
    /// ```
    /// use ferry::{Aggregate, Buf};
    /// let parts = [Aggregate::from(Buf::from_static(b"a")), Aggregate::from(Buf::from_static(b"b"))];
    /// assert_eq!(Aggregate::concat(parts), b"ab"[..]);
    /// ```
    pub fn concat(parts: impl IntoIterator<Item = Aggregate>) -> Aggregate {
        let mut out = Aggregate::new();
        for p in parts {
            out.append(p);
        }
        out
    }

    /// Finds the slice holding byte `at` (`0 < at < len`): its index and the
    /// offset of `at` inside it. Walks from the nearer end.
    fn locate(&self, at: usize) -> (usize, usize) {
        debug_assert!(at < self.len);
        if at <= self.len / 2 {
            let mut start = 0;
            for (i, b) in self.bufs.iter().enumerate() {
                if at < start + b.len() {
                    return (i, at - start);
                }
                start += b.len();
            }
        } else {
            let mut end = self.len;
            for (i, b) in self.bufs.iter().enumerate().rev() {
                let start = end - b.len();
                if at >= start {
                    return (i, at - start);
                }
                end = start;
            }
        }
        unreachable!("aggregate length {} disagrees with its slices", self.len)
    }

    /// Splits off and returns bytes `[0, at)`; `self` keeps `[at, len)`.
    ///
    /// # Panics
    /// If `at > len`.
    ///
    /// ```
    /// let mut a = ferry::Aggregate::from(ferry::Buf::from_static(b"header:body"));
    /// let head = a.split_to(7);
    /// assert_eq!((head, a), (ferry::Aggregate::from(ferry::Buf::from_static(b"header:")),
    ///                        ferry::Aggregate::from(ferry::Buf::from_static(b"body"))));
    /// ```
    pub fn split_to(&mut self, at: usize) -> Aggregate {
        assert!(
            at <= self.len,
            "split_to({at}) out of bounds for {} bytes",
            self.len
        );
        if at == 0 {
            return Aggregate::new();
        }
        if at == self.len {
            return std::mem::take(self);
        }
        let (idx, off) = self.locate(at);
        // `VecDeque::split_off` moves the back part with one bulk copy,
        // several times faster than collecting a drained front part slice by
        // slice; then the two halves trade places.
        let back = self.bufs.split_off(idx);
        let mut front = std::mem::replace(&mut self.bufs, back);
        if off > 0 {
            front.push_back(self.bufs[0].split_to(off));
        }
        self.len -= at;
        Aggregate {
            bufs: front,
            len: at,
        }
    }

    /// Splits off and returns bytes `[at, len)`; `self` keeps `[0, at)`.
    ///
    /// # Panics
    /// If `at > len`.
    pub fn split_off(&mut self, at: usize) -> Aggregate {
        assert!(
            at <= self.len,
            "split_off({at}) out of bounds for {} bytes",
            self.len
        );
        if at == self.len {
            return Aggregate::new();
        }
        if at == 0 {
            return std::mem::take(self);
        }
        let (idx, off) = self.locate(at);
        let back = if off > 0 {
            let mut back = self.bufs.split_off(idx + 1);
            back.push_front(self.bufs[idx].split_off(off));
            back
        } else {
            self.bufs.split_off(idx)
        };
        let back_len = self.len - at;
        self.len = at;
        Aggregate {
            bufs: back,
            len: back_len,
        }
    }

    /// Keeps the first `len` bytes.
    pub fn truncate(&mut self, len: usize) {
        if len < self.len {
            drop(self.split_off(len));
        }
    }

    /// Drops the first `n` bytes.
    ///
    /// # Panics
    /// If `n > len`.
    pub fn advance(&mut self, mut n: usize) {
        assert!(
            n <= self.len,
            "advance({n}) past the end of {} bytes",
            self.len
        );
        self.len -= n;
        while n > 0 {
            let front = &mut self.bufs[0];
            if n < front.len() {
                front.advance(n);
                return;
            }
            n -= front.len();
            self.bufs.pop_front();
        }
    }

    /// Drops everything.
    pub fn clear(&mut self) {
        self.bufs.clear();
        self.len = 0;
    }

    /// A new aggregate sharing `range` of these bytes.
    ///
    /// # Panics
    /// If the range is out of bounds.
    ///
    /// ```
    /// let a = ferry::Aggregate::from(ferry::Buf::from_static(b"0123456789"));
    /// assert_eq!(a.slice(2..5), b"234"[..]);
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Aggregate {
        let (start, end) = resolve_range(range, self.len);
        let mut out = Aggregate::new();
        if start == end {
            return out;
        }
        let (idx, off) = self.locate(start);
        let mut want = end - start;
        let mut skip = off;
        for b in self.bufs.range(idx..) {
            let take = (b.len() - skip).min(want);
            out.append_buf(b.slice(skip..skip + take));
            want -= take;
            skip = 0;
            if want == 0 {
                break;
            }
        }
        out
    }

    /// Replaces bytes `range` with `bytes`. Only the new bytes are copied
    /// (into one new buffer); every untouched slice is shared as it was.
    ///
    /// # Panics
    /// If the range is out of bounds.
    ///
    /// ```
    /// let mut a = ferry::Aggregate::from(ferry::Buf::from_static(b"Hello, world"));
    /// a.replace(7..12, b"ferry");
    /// assert_eq!(a, b"Hello, ferry"[..]);
    /// ```
    pub fn replace(&mut self, range: impl RangeBounds<usize>, bytes: &[u8]) {
        self.splice(range, Aggregate::from(Buf::copy_from_slice(bytes)));
    }

    /// Replaces bytes `range` with the slices of `with` (no copy at all).
    ///
    /// # Panics
    /// If the range is out of bounds.
    pub fn splice(&mut self, range: impl RangeBounds<usize>, with: Aggregate) {
        let (start, end) = resolve_range(range, self.len);
        let tail = self.split_off(end);
        self.truncate(start);
        self.append(with);
        self.append(tail);
    }

    /// Copies every byte into one new (page-aligned, if large) buffer and
    /// makes it the only slice; returns it. No copy if there is at most one
    /// slice already.
    ///
    /// ```
    /// let mut a: ferry::Aggregate = [ferry::Buf::from_static(b"ab"), ferry::Buf::from_static(b"cd")]
    ///     .into_iter()
    ///     .collect();
    /// assert_eq!(&a.coalesce()[..], b"abcd");
    /// assert_eq!(a.slice_count(), 1);
    /// ```
    pub fn coalesce(&mut self) -> Buf {
        match self.bufs.len() {
            0 => return Buf::new(),
            1 => return self.bufs[0].clone(),
            _ => {}
        }
        let mut m = BufMut::with_capacity(self.len);
        for c in self.chunks() {
            m.extend_from_slice(c);
        }
        super::count_copy(self.len);
        let b = m.freeze();
        self.bufs.clear();
        self.bufs.push_back(b.clone());
        b
    }

    /// Copies bytes starting at `offset` into `dst`; returns how many were
    /// copied (fewer than `dst.len()` only at the end).
    ///
    /// ```
    /// let a = ferry::Aggregate::from(ferry::Buf::from_static(b"abcdef"));
    /// let mut out = [0u8; 4];
    /// assert_eq!(a.copy_to_slice(4, &mut out), 2);
    /// assert_eq!(&out[..2], b"ef");
    /// ```
    pub fn copy_to_slice(&self, offset: usize, dst: &mut [u8]) -> usize {
        if offset >= self.len || dst.is_empty() {
            return 0;
        }
        let (idx, mut skip) = self.locate(offset);
        let mut done = 0;
        for c in self.bufs.range(idx..).map(|b| b.as_slice()) {
            let n = (c.len() - skip).min(dst.len() - done);
            dst[done..done + n].copy_from_slice(&c[skip..skip + n]);
            done += n;
            skip = 0;
            if done == dst.len() {
                break;
            }
        }
        super::count_copy(done);
        done
    }

    /// Copies every byte into a new `Vec`.
    pub fn copy_to_vec(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(self.len);
        for c in self.chunks() {
            v.extend_from_slice(c);
        }
        super::count_copy(self.len);
        v
    }

    /// A reader over the bytes (`Read + BufRead`; `fill_buf` hands out the
    /// slices themselves, no copy).
    ///
    /// ```
    /// use std::io::Read;
    /// let a = ferry::Aggregate::from(ferry::Buf::from_static(b"text"));
    /// let mut s = String::new();
    /// a.reader().read_to_string(&mut s).unwrap();
    /// assert_eq!(s, "text");
    /// ```
    pub fn reader(&self) -> AggregateReader<'_> {
        AggregateReader::new(self)
    }

    /// How fragmented the aggregate is.
    ///
    /// ```
    /// let a = ferry::Aggregate::from(ferry::Buf::from_static(b"abc"));
    /// assert_eq!(a.stats().slices, 1);
    /// ```
    pub fn stats(&self) -> FragmentStats {
        FragmentStats::of(self)
    }
}

impl From<Buf> for Aggregate {
    fn from(b: Buf) -> Aggregate {
        let mut a = Aggregate::with_capacity(1);
        a.append_buf(b);
        a
    }
}

impl From<BufMut> for Aggregate {
    fn from(b: BufMut) -> Aggregate {
        Aggregate::from(b.freeze())
    }
}

impl From<Vec<Buf>> for Aggregate {
    fn from(v: Vec<Buf>) -> Aggregate {
        v.into_iter().collect()
    }
}

impl FromIterator<Buf> for Aggregate {
    fn from_iter<I: IntoIterator<Item = Buf>>(iter: I) -> Aggregate {
        let mut a = Aggregate::new();
        for b in iter {
            a.append_buf(b);
        }
        a
    }
}

impl Extend<Buf> for Aggregate {
    fn extend<I: IntoIterator<Item = Buf>>(&mut self, iter: I) {
        for b in iter {
            self.append_buf(b);
        }
    }
}

impl IntoIterator for Aggregate {
    type Item = Buf;
    type IntoIter = std::collections::vec_deque::IntoIter<Buf>;
    fn into_iter(self) -> Self::IntoIter {
        self.bufs.into_iter()
    }
}

/// Compares contents chunk by chunk without copying.
fn chunks_eq<'a>(
    mut a: impl Iterator<Item = &'a [u8]>,
    mut b: impl Iterator<Item = &'a [u8]>,
) -> bool {
    let (mut x, mut y): (&[u8], &[u8]) = (&[], &[]);
    loop {
        if x.is_empty() {
            x = a.next().unwrap_or(&[]);
        }
        if y.is_empty() {
            y = b.next().unwrap_or(&[]);
        }
        if x.is_empty() || y.is_empty() {
            return x.is_empty() && y.is_empty();
        }
        let n = x.len().min(y.len());
        if x[..n] != y[..n] {
            return false;
        }
        x = &x[n..];
        y = &y[n..];
    }
}

impl PartialEq for Aggregate {
    fn eq(&self, other: &Aggregate) -> bool {
        self.len == other.len && chunks_eq(self.chunks(), other.chunks())
    }
}
impl Eq for Aggregate {}

impl PartialEq<[u8]> for Aggregate {
    fn eq(&self, other: &[u8]) -> bool {
        self.len == other.len() && chunks_eq(self.chunks(), std::iter::once(other))
    }
}
impl PartialEq<&[u8]> for Aggregate {
    fn eq(&self, other: &&[u8]) -> bool {
        *self == **other
    }
}
impl PartialEq<Aggregate> for [u8] {
    fn eq(&self, other: &Aggregate) -> bool {
        *other == *self
    }
}
impl PartialEq<Aggregate> for &[u8] {
    fn eq(&self, other: &Aggregate) -> bool {
        *other == **self
    }
}

impl fmt::Debug for Aggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Aggregate")
            .field("len", &self.len)
            .field("slices", &self.bufs)
            .finish()
    }
}
