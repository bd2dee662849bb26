//! Sorting a piece in memory: its units (slices of the piece, nothing
//! copied) sorted on `threads` threads, each sorting a part, the parts
//! then merged pairwise (earlier parts first on ties, so the whole stays
//! stable).
//!
//! Where the order is a [`ByteKey`](super::ByteKey), each unit is sorted
//! with the first eight bytes of its key as a big-endian integer beside
//! it: most comparisons end there, without touching the unit, and the
//! rest compare the keys' bytes (the caller's comparison is never called).

use super::Compare;
use std::cmp::Ordering;

/// Sorts `units` by `cmp` on up to `threads` threads; equal units keep
/// their order if `stable`.
pub(crate) fn sort_units<C: Compare>(
    units: &mut Vec<&[u8]>,
    cmp: &C,
    threads: usize,
    stable: bool,
) {
    if let Some(k) = cmp.byte_key() {
        let mut keyed: Vec<(u64, &[u8])> = units.iter().map(|&l| (k.prefix(l), l)).collect();
        let by =
            |a: &(u64, &[u8]), b: &(u64, &[u8])| a.0.cmp(&b.0).then_with(|| k.compare(a.1, b.1));
        sort_parts(&mut keyed, threads, stable, &by);
        units.clear();
        units.extend(keyed.into_iter().map(|(_, l)| l));
        return;
    }
    sort_parts(units, threads, stable, &|a: &&[u8], b: &&[u8]| {
        cmp.compare(a, b)
    });
}

/// A sort of `v` by `by` on up to `threads` threads (stable if asked).
fn sort_parts<T: Copy + Send + Sync>(
    v: &mut Vec<T>,
    threads: usize,
    stable: bool,
    by: &(impl Fn(&T, &T) -> Ordering + Sync),
) {
    let sort = |part: &mut [T]| {
        if stable {
            part.sort_by(by)
        } else {
            part.sort_unstable_by(by)
        }
    };
    let threads = threads.min(v.len() / 50_000).max(1);
    if threads == 1 {
        sort(v);
        return;
    }
    let per = v.len().div_ceil(threads);
    std::thread::scope(|s| {
        for part in v.chunks_mut(per) {
            s.spawn(move || sort(part));
        }
    });
    let mut runs: Vec<Vec<T>> = v.chunks(per).map(|c| c.to_vec()).collect();
    while runs.len() > 1 {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => next.push(merge_parts(a, b, by)),
                None => next.push(a),
            }
        }
        runs = next;
    }
    *v = runs.pop().unwrap_or_default();
}

fn merge_parts<T: Copy>(a: Vec<T>, b: Vec<T>, by: &impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if by(&a[i], &b[j]) != Ordering::Greater {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Where each of `units` (slices of `base`) lies in it: a sorted piece
/// kept beside its bytes.
pub(crate) fn spans(base: &[u8], units: Vec<&[u8]>) -> Vec<(usize, usize)> {
    let start = base.as_ptr() as usize;
    units
        .into_iter()
        .map(|u| (u.as_ptr() as usize - start, u.len()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sort::ByteKey;

    /// The parallel sort is a stable sort, with and without a byte key.
    #[test]
    fn parts_sorted_on_threads_merge_into_a_stable_sort() {
        let text: Vec<u8> = (0..200_000u32)
            .flat_map(|i| format!("{}\n", (i * 7919) % 1000).into_bytes())
            .collect();
        let base: Vec<&[u8]> = text.split(|&c| c == b'\n').collect();
        let first_digit = crate::sort::by(|a: &[u8], b: &[u8]| a.first().cmp(&b.first()));
        for threads in [1, 4] {
            let mut v = base.clone();
            sort_units(&mut v, &first_digit, threads, true);
            let mut want = base.clone();
            want.sort_by(|a, b| a.first().cmp(&b.first()));
            assert!(v.iter().zip(&want).all(|(a, b)| std::ptr::eq(*a, *b)));
            let mut v = base.clone();
            sort_units(&mut v, &ByteKey::WHOLE.reversed(), threads, false);
            let mut want = base.clone();
            want.sort_by(|a, b| b.cmp(a));
            assert_eq!(v, want);
        }
    }
}
