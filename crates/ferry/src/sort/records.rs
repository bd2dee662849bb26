//! Fixed-size binary records sorted by a byte range ([`ByteKey`]): each
//! record's first twelve key bytes and its index packed into one
//! `u128`, so that nearly every comparison is one integer comparison and
//! ties fall to input order (stable) by themselves. A piece is split by
//! its top key byte into 256 buckets sorted on the threads side by side;
//! the runs are merged a block of records at a time from their mapped
//! files, by a heap of packed keys, on one thread while the other writes.

use super::blocks::through_writer;
use super::error::Failure;
use super::runs::Run;
use super::ByteKey;
use crate::{Buf, BufMut, Stream};
use std::cmp::Ordering;
use std::io;

/// The most records one piece may hold (indices are `u32`).
pub(crate) const MAX_PIECE_RECORDS: usize = u32::MAX as usize;

/// Where the key is and which way it sorts.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    size: usize,
    off: usize,
    len: usize,
    reverse: bool,
}

/// Key bytes packed into a `u128` beside the 32-bit index.
const PACKED: usize = 12;

impl Layout {
    /// `key` on records of `size` bytes (cut at their end).
    pub(crate) fn new(size: usize, key: ByteKey) -> Layout {
        let off = key.offset.min(size);
        Layout {
            size,
            off,
            len: key.len.min(size - off),
            reverse: key.reverse,
        }
    }

    fn key<'a>(&self, r: &'a [u8]) -> &'a [u8] {
        &r[self.off..self.off + self.len]
    }

    /// The first twelve key bytes (complemented when reversed, so that
    /// the integer order is the wanted one) in the top 96 bits, `low` in
    /// the bottom 32.
    #[inline]
    fn packed(&self, r: &[u8], low: u32) -> u128 {
        let k = self.key(r);
        let n = k.len().min(PACKED);
        let mut b = [0u8; 16];
        b[..n].copy_from_slice(&k[..n]);
        if self.reverse {
            for x in &mut b[..n] {
                *x = !*x;
            }
        }
        u128::from_be_bytes(b) | u128::from(low)
    }

    /// The order of two records' keys past the packed bytes.
    #[inline]
    fn tail(&self, a: &[u8], b: &[u8]) -> Ordering {
        if self.len <= PACKED {
            return Ordering::Equal;
        }
        let r = self.off + PACKED..self.off + self.len;
        let d = a[r.clone()].cmp(&b[r]);
        if self.reverse {
            d.reverse()
        } else {
            d
        }
    }

    /// Equal keys (`-u` keeps the first).
    pub(crate) fn same(&self, a: &[u8], b: &[u8]) -> bool {
        self.key(a) == self.key(b)
    }
}

/// The packed keys' order: the key (all of it), then the low 32 bits.
#[inline]
fn by(l: &Layout, a: u128, b: u128, rec_a: impl Fn() -> Ordering) -> Ordering {
    if l.len <= PACKED {
        return a.cmp(&b);
    }
    (a >> 32)
        .cmp(&(b >> 32))
        .then_with(rec_a)
        .then_with(|| (a as u32).cmp(&(b as u32)))
}

/// The indices of `piece`'s records in sorted order; equal keys keep
/// input order. `piece` holds whole records, at most
/// [`MAX_PIECE_RECORDS`] of them.
pub(crate) fn order(piece: &[u8], l: Layout, threads: usize) -> Vec<u32> {
    debug_assert!(piece.len() / l.size <= MAX_PIECE_RECORDS);
    let rec = |x: u128| &piece[(x as u32 as usize) * l.size..][..l.size];
    let cmp = |a: &u128, b: &u128| by(&l, *a, *b, || l.tail(rec(*a), rec(*b)));
    let keys: Vec<u128> = piece
        .chunks_exact(l.size)
        .enumerate()
        .map(|(i, r)| l.packed(r, i as u32))
        .collect();
    let threads = threads.min(keys.len() / 50_000).max(1);
    if threads == 1 {
        let mut keys = keys;
        keys.sort_unstable_by(cmp);
        return keys.into_iter().map(|x| x as u32).collect();
    }
    // Buckets by the top key byte, in order: each is sorted alone and
    // the buckets need no merge.
    let mut counts = [0usize; 256];
    for &k in &keys {
        counts[(k >> 120) as usize] += 1;
    }
    let mut starts = [0usize; 257];
    for b in 0..256 {
        starts[b + 1] = starts[b] + counts[b];
    }
    let mut sorted = vec![0u128; keys.len()];
    let mut at = starts;
    for &k in &keys {
        let b = (k >> 120) as usize;
        sorted[at[b]] = k;
        at[b] += 1;
    }
    drop(keys);
    // Contiguous ranges of buckets of about equal size, one per thread.
    let per = sorted.len().div_ceil(threads);
    let mut parts: Vec<&mut [u128]> = Vec::with_capacity(threads);
    let mut rest: &mut [u128] = &mut sorted;
    let mut taken = 0;
    let mut b = 0;
    while b < 256 {
        let from = starts[b];
        let mut to = starts[b + 1];
        b += 1;
        while b < 256 && to - from < per {
            to = starts[b + 1];
            b += 1;
        }
        let (part, tail) = std::mem::take(&mut rest).split_at_mut(to - taken);
        taken = to;
        rest = tail;
        // Each bucket within the part sorts alone: sort them one by one.
        parts.push(part);
    }
    let cmp = &cmp;
    let starts = &starts;
    std::thread::scope(|s| {
        let mut base = 0;
        let mut first_bucket = 0;
        let mut jobs = Vec::new();
        for part in parts {
            let end = base + part.len();
            let mut buckets = Vec::new();
            while first_bucket < 256 && starts[first_bucket + 1] <= end {
                if starts[first_bucket + 1] > starts[first_bucket] {
                    buckets.push((starts[first_bucket] - base, starts[first_bucket + 1] - base));
                }
                first_bucket += 1;
            }
            base = end;
            jobs.push(s.spawn(move || {
                for (from, to) in buckets {
                    part[from..to].sort_unstable_by(cmp);
                }
            }));
        }
        for j in jobs {
            if let Err(p) = j.join() {
                std::panic::resume_unwind(p);
            }
        }
    });
    sorted.into_iter().map(|x| x as u32).collect()
}

/// `piece`'s records in the order given, into one page-aligned buffer
/// (the first of each equal key only with `unique`).
pub(crate) fn gather(
    piece: &[u8],
    l: Layout,
    order: &[u32],
    unique: bool,
    spare: Option<BufMut>,
) -> io::Result<Buf> {
    let mut out = super::runs::buffer(spare, order.len() * l.size)?;
    for r in in_order(piece, l, order, unique) {
        out.extend_from_slice(r);
    }
    Ok(out.freeze())
}

/// `piece`'s records in the order given, the first of each equal key
/// only with `unique`.
fn in_order<'a>(
    piece: &'a [u8],
    l: Layout,
    order: &'a [u32],
    unique: bool,
) -> impl Iterator<Item = &'a [u8]> + 'a {
    let mut prev: Option<&[u8]> = None;
    order.iter().filter_map(move |&i| {
        let r = &piece[i as usize * l.size..][..l.size];
        if unique {
            if prev.is_some_and(|p| l.same(p, r)) {
                return None;
            }
            prev = Some(r);
        }
        Some(r)
    })
}

/// One run in the merge: its stream, the block of records being taken,
/// and the packed key of the record at `at`.
struct Cursor {
    stream: Stream,
    block: Buf,
    at: usize,
    key: u128,
}

/// The records a block read from a run holds (about 1 MiB).
fn block_len(size: usize) -> usize {
    ((1 << 20) / size).max(1) * size
}

impl Cursor {
    /// The next block, by reference into the run's mapped pages; false at
    /// the end.
    fn refill(&mut self, size: usize) -> io::Result<bool> {
        let r = self.stream.salloc(block_len(size))?;
        if r.is_empty() {
            return Ok(false);
        }
        if r.len() % size != 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "a run ends inside a record",
            ));
        }
        self.block = r.into_buf();
        self.at = 0;
        Ok(true)
    }

    fn record(&self, size: usize) -> &[u8] {
        &self.block[self.at..self.at + size]
    }
}

/// Writes `piece`'s records in the order given to `emit` (the first of
/// each equal key only with `unique`), gathered into blocks on a second
/// thread while this one writes.
pub(crate) fn write_sorted(
    piece: &[u8],
    l: Layout,
    order: &[u32],
    unique: bool,
    emit: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), Failure> {
    through_writer(
        |out| {
            for r in in_order(piece, l, order, unique) {
                out.put(r)?;
            }
            Ok(())
        },
        emit,
    )
}

/// Merges the runs into `emit`: on a second thread, a block of records
/// at a time from each run, while this thread writes. Ties go to the
/// earlier run (GNU's order, stable).
pub(crate) fn merge(
    runs: Vec<Run>,
    l: Layout,
    unique: bool,
    emit: impl FnMut(&[u8]) -> io::Result<()>,
) -> Result<(), Failure> {
    let mut cursors = Vec::with_capacity(runs.len());
    let mut names = Vec::with_capacity(runs.len());
    for r in runs {
        let (stream, name) = r.into_stream()?;
        cursors.push(Cursor {
            stream,
            block: Buf::new(),
            at: 0,
            key: 0,
        });
        names.push(name);
    }
    let names = &names;
    through_writer(
        move |out| {
            let fail = |k: usize| move |e| (Some(names[k].clone()), e);
            // The heap: run numbers, the smallest packed key on top (the
            // run number is the packed low bits: ties go to earlier runs).
            let mut heap: Vec<usize> = Vec::with_capacity(cursors.len());
            for (k, c) in cursors.iter_mut().enumerate() {
                if c.refill(l.size).map_err(fail(k))? {
                    c.key = l.packed(c.record(l.size), k as u32);
                    heap.push(k);
                }
            }
            let less = |c: &[Cursor], a: usize, b: usize| {
                by(&l, c[a].key, c[b].key, || {
                    l.tail(c[a].record(l.size), c[b].record(l.size))
                }) == Ordering::Less
            };
            for i in (0..heap.len() / 2).rev() {
                sift_down(&mut heap, i, |a, b| less(&cursors, a, b));
            }
            let mut last: Option<Vec<u8>> = None;
            while let Some(&top) = heap.first() {
                let c = &mut cursors[top];
                let r = &c.block[c.at..c.at + l.size];
                if !unique {
                    out.put(r)?;
                } else if last.as_deref().is_none_or(|p| !l.same(p, r)) {
                    out.put(r)?;
                    let p = last.get_or_insert_with(Vec::new);
                    p.clear();
                    p.extend_from_slice(r);
                }
                c.at += l.size;
                if c.at == c.block.len() && !c.refill(l.size).map_err(fail(top))? {
                    heap.swap_remove(0);
                } else {
                    c.key = l.packed(c.record(l.size), top as u32);
                }
                sift_down(&mut heap, 0, |a, b| less(&cursors, a, b));
            }
            Ok(())
        },
        emit,
    )
}

/// Restores the heap property below `i` (`less` orders run numbers).
fn sift_down(heap: &mut [usize], mut i: usize, less: impl Fn(usize, usize) -> bool) {
    loop {
        let l = 2 * i + 1;
        if l >= heap.len() {
            return;
        }
        let r = l + 1;
        let m = if r < heap.len() && less(heap[r], heap[l]) {
            r
        } else {
            l
        };
        if !less(heap[m], heap[i]) {
            return;
        }
        heap.swap(i, m);
        i = m;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// `order` is a stable sort by the key bytes (reversed or not),
        /// on one thread or several, for keys shorter and longer than
        /// the packed part.
        #[test]
        fn order_is_a_stable_sort_by_key(
            size in 1usize..24,
            off_frac in 0usize..24,
            len_frac in 0usize..24,
            reverse: bool,
            threads in 1usize..4,
            alphabet in 1u8..4,
            seed: Vec<u8>,
            n in 0usize..3000,
        ) {
            let off = off_frac % size;
            let len = len_frac % (size - off + 1);
            let l = Layout { size, off, len, reverse };
            let mut piece = Vec::with_capacity(n * size);
            let mut x = 0x9E37_79B9u32 ^ seed.len() as u32;
            for i in 0..n * size {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223)
                    ^ u32::from(seed.get(i % seed.len().max(1)).copied().unwrap_or(0));
                piece.push(((x >> 16) as u8) % alphabet);
            }
            // Enough records for the buckets to be used with 2+ threads.
            let got = if threads > 1 {
                let big: Vec<u8> = piece.iter().copied().cycle().take(piece.len() * 40).collect();
                let want = expected(&big, l);
                prop_assert_eq!(order(&big, l, threads), want);
                order(&piece, l, threads)
            } else {
                order(&piece, l, threads)
            };
            prop_assert_eq!(got, expected(&piece, l));
        }
    }

    /// The reference: a stable sort of indices by a key slice compare.
    fn expected(piece: &[u8], l: Layout) -> Vec<u32> {
        let n = piece.len() / l.size;
        let mut idx: Vec<u32> = (0..n as u32).collect();
        let key = |i: u32| &piece[i as usize * l.size + l.off..][..l.len];
        idx.sort_by(|&a, &b| {
            let d = key(a).cmp(key(b));
            if l.reverse {
                d.reverse()
            } else {
                d
            }
        });
        idx
    }
}
