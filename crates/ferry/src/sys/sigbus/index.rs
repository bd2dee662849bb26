//! The index of ferry's mappings that the SIGBUS handler searches.
//!
//! # Shape
//!
//! An open-addressing hash table of `key → value` pairs (the value is the
//! address of the mapping's [`super::Entry`]). A mapping `[start, end)` of
//! length `len` gets a *size class* `k = ⌈log2 len⌉` and is filed under the
//! one or two `2^k`-byte granules it touches: since `len ≤ 2^k` it cannot
//! span more than two. A faulting address `a` then needs one probe sequence
//! per size class in use, for the key of granule `a >> k` — no scan of all
//! mappings, however many there are. The classes in use are a bit mask.
//!
//! # Who writes, who reads
//!
//! Writers (register, unregister) are serialised by the caller's lock and
//! pass its [`Writer`] book-keeping in; they may allocate. The handler only
//! reads, without locks or allocation, between [`Handshake::enter`] and
//! [`Handshake::leave`]. A position's key goes `EMPTY → key → GONE → key'
//! → GONE …`, never back to `EMPTY`, so a reader's probe sequence is never
//! cut short by a removal; values are published before their keys
//! (release/acquire). When the table fills (half its positions used,
//! counting removed ones) the writer builds a bigger one, publishes it, and
//! frees the old one only after [`Handshake::quiesce`].
//!
//! This file is compiled twice: into the guard, and by `loom.rs` against
//! loom's atomics (through `super::sync`).

use super::handshake::Handshake;
use super::sync::{AtomicPtr, AtomicU64, AtomicUsize, Ordering, Probe};

const EMPTY: u64 = 0;
const GONE: u64 = u64::MAX;
/// The smallest table: 16 positions.
const MIN_BITS: u32 = 4;

/// The key of granule `g` of size class `k`. Never `EMPTY` (`k ≥ 1`) and
/// never `GONE` (that would need `k = 63` and `g = 2^58 - 1`, but `g < 2`
/// when `k = 63`).
fn key(g: usize, k: u32) -> u64 {
    ((g as u64) << 6) | k as u64
}

/// The size class of a mapping `len` bytes long (`len ≥ 1`).
fn class(len: usize) -> u32 {
    len.next_power_of_two().trailing_zeros().max(1)
}

/// The keys a mapping `[start, end)` is filed under (one or two), and its
/// class.
fn keys_of(start: usize, end: usize) -> ([u64; 2], usize, u32) {
    let k = class(end - start);
    let (g0, g1) = (start >> k, (end - 1) >> k);
    debug_assert!(g1 - g0 <= 1);
    if g0 == g1 {
        ([key(g0, k), 0], 1, k)
    } else {
        ([key(g0, k), key(g1, k)], 2, k)
    }
}

pub(super) struct Table {
    bits: u32,
    keys: Box<[AtomicU64]>,
    vals: Box<[AtomicUsize]>,
    probe: Probe,
}

impl Table {
    fn new(bits: u32) -> Box<Table> {
        let cap = 1usize << bits;
        Box::new(Table {
            bits,
            keys: (0..cap).map(|_| AtomicU64::new(EMPTY)).collect(),
            vals: (0..cap).map(|_| AtomicUsize::new(0)).collect(),
            probe: Probe::new(),
        })
    }

    fn mask(&self) -> usize {
        (1usize << self.bits) - 1
    }

    /// Where the probe sequence of `key` starts (Fibonacci hashing).
    fn home(&self, key: u64) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - self.bits)) as usize
    }

    /// Writer only: files `key → val` at the first free position of its
    /// sequence. The value goes first, so a reader that sees the key sees
    /// it. True if the position was never used before (not a removed one).
    fn put(&self, key: u64, val: usize) -> bool {
        let mut i = self.home(key);
        loop {
            let k = self.keys[i].load(Ordering::Relaxed);
            if k == EMPTY || k == GONE {
                self.vals[i].store(val, Ordering::Release);
                self.keys[i].store(key, Ordering::Release);
                return k == EMPTY;
            }
            i = (i + 1) & self.mask();
        }
    }
}

/// The shared part: what the handler reads.
pub(super) struct Index {
    /// The current table; null until the first registration.
    pub(super) table: AtomicPtr<Table>,
    /// Bit `k` set: some mapping of size class `k` is filed.
    pub(super) classes: AtomicU64,
}

/// The writers' book-keeping, behind the caller's lock.
pub(super) struct Writer {
    /// Filed pairs.
    live: usize,
    /// Positions of the current table not `EMPTY` (live and removed).
    used: usize,
    /// Mappings filed per size class.
    per_class: [u32; 64],
}

impl Writer {
    pub(super) const fn new() -> Writer {
        Writer {
            live: 0,
            used: 0,
            per_class: [0; 64],
        }
    }
}

impl Index {
    #[allow(dead_code)] // the real one is a static built from its fields
    pub(super) fn new() -> Index {
        Index {
            table: AtomicPtr::new(std::ptr::null_mut()),
            classes: AtomicU64::new(0),
        }
    }

    /// Files the mapping `[start, end)` (`start < end`) with value `val`.
    /// May allocate a bigger table, and then waits (`hs.quiesce`) for
    /// handlers still reading the old one before freeing it.
    pub(super) fn insert(
        &self,
        w: &mut Writer,
        hs: &Handshake,
        start: usize,
        end: usize,
        val: usize,
    ) {
        let (keys, n, k) = keys_of(start, end);
        self.reserve(w, hs, n);
        if w.per_class[k as usize] == 0 {
            self.classes.fetch_or(1 << k, Ordering::Release);
        }
        w.per_class[k as usize] += 1;
        // SAFETY: `reserve` left a live table; only writers (serialised by
        // the caller's lock, which `w` stands for) replace or free it.
        let t = unsafe { &*self.table.load(Ordering::Relaxed) };
        for &key in &keys[..n] {
            if t.put(key, val) {
                w.used += 1;
            }
            w.live += 1;
        }
    }

    /// Unfiles what [`Index::insert`] filed for the same arguments, then
    /// waits until no handler can still hold `val`: after this the caller
    /// may free what `val` points to.
    pub(super) fn remove(
        &self,
        w: &mut Writer,
        hs: &Handshake,
        start: usize,
        end: usize,
        val: usize,
    ) {
        let (keys, n, k) = keys_of(start, end);
        let p = self.table.load(Ordering::Relaxed);
        assert!(!p.is_null(), "removing from an empty index");
        // SAFETY: as in `insert`: live, and only writers replace it.
        let t = unsafe { &*p };
        for &key in &keys[..n] {
            let mut i = t.home(key);
            loop {
                let kk = t.keys[i].load(Ordering::Relaxed);
                assert_ne!(kk, EMPTY, "removing a mapping that is not filed");
                if kk == key && t.vals[i].load(Ordering::Relaxed) == val {
                    t.keys[i].store(GONE, Ordering::Relaxed);
                    break;
                }
                i = (i + 1) & t.mask();
            }
            w.live -= 1;
        }
        w.per_class[k as usize] -= 1;
        if w.per_class[k as usize] == 0 {
            self.classes.fetch_and(!(1 << k), Ordering::Relaxed);
        }
        // The stores above come before the fence in `quiesce`: a handler
        // that enters after it cannot see the pairs.
        hs.quiesce();
    }

    /// Makes room for `n` more pairs, keeping at most half of the positions
    /// used so that probe sequences stay short and always end.
    fn reserve(&self, w: &mut Writer, hs: &Handshake, n: usize) {
        let old = self.table.load(Ordering::Relaxed);
        let cap = if old.is_null() {
            0
        } else {
            // SAFETY: live, and only writers replace it.
            1usize << unsafe { (*old).bits }
        };
        if (w.used + n) * 2 <= cap {
            return;
        }
        // Room for twice what is live after this insert, at load ≤ 1/4.
        let want = ((w.live + n) * 4).next_power_of_two();
        let bits = want.trailing_zeros().max(MIN_BITS);
        let new = Table::new(bits);
        if !old.is_null() {
            // SAFETY: live, and only writers replace it.
            let o = unsafe { &*old };
            for (k, v) in o.keys.iter().zip(o.vals.iter()) {
                let k = k.load(Ordering::Relaxed);
                if k != EMPTY && k != GONE {
                    new.put(k, v.load(Ordering::Relaxed));
                }
            }
        }
        w.used = w.live;
        self.table.store(Box::into_raw(new), Ordering::Release);
        if !old.is_null() {
            // Handlers that entered before the new pointer was visible may
            // be reading the old table.
            hs.quiesce();
            // SAFETY: `old` came from `Box::into_raw` and is unlinked; no
            // handler is inside anymore, and new ones find the new table.
            unsafe {
                (*old).probe.retire();
                drop(Box::from_raw(old));
            }
        }
    }

    /// Handler side, between `hs.enter()` and `hs.leave()`: the first value
    /// filed for `addr`'s granules that `accept` takes (`accept` checks the
    /// candidate really covers `addr`; a granule may hold neighbours).
    /// Lock-free, allocation-free, async-signal-safe.
    pub(super) fn lookup(
        &self,
        addr: usize,
        mut accept: impl FnMut(usize) -> bool,
    ) -> Option<usize> {
        let mut classes = self.classes.load(Ordering::Acquire);
        let p = self.table.load(Ordering::Acquire);
        if p.is_null() {
            return None;
        }
        // SAFETY: the caller entered the handshake before this load, so a
        // writer that unlinks this table waits for us before freeing it.
        let t = unsafe { &*p };
        t.probe.read();
        while classes != 0 {
            let k = classes.trailing_zeros();
            classes &= classes - 1;
            let want = key(addr >> k, k);
            let mut i = t.home(want);
            // The table is never more than half full, so an EMPTY comes;
            // the bound is for safety's sake only.
            for _ in 0..=t.mask() {
                let kk = t.keys[i].load(Ordering::Acquire);
                if kk == EMPTY {
                    break;
                }
                if kk == want {
                    let v = t.vals[i].load(Ordering::Acquire);
                    if accept(v) {
                        return Some(v);
                    }
                }
                i = (i + 1) & t.mask();
            }
        }
        None
    }
}

impl Drop for Index {
    fn drop(&mut self) {
        let p = self.table.load(Ordering::Relaxed);
        if !p.is_null() {
            // SAFETY: `&mut self`: no handler or writer can be using it.
            drop(unsafe { Box::from_raw(p) });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn classes_and_keys() {
        assert_eq!(class(1), 1);
        assert_eq!(class(4096), 12);
        assert_eq!(class(4097), 13);
        let (_, n, k) = keys_of(0x10000, 0x11000);
        assert_eq!((n, k), (1, 12));
        // 3 pages from 0x11000: class 14 (16 KiB), granules 1 and 0x14000>>14=1.
        let (_, n, _) = keys_of(0x11000, 0x14000);
        assert_eq!(n, 1);
        let (_, n, _) = keys_of(0x13000, 0x16000);
        assert_eq!(n, 2);
    }

    #[test]
    fn finds_every_mapping_and_forgets_removed_ones() {
        let (ix, hs, mut w) = (Index::new(), Handshake::new(), Writer::new());
        let page = 4096;
        // Mappings of mixed sizes laid end to end, many more than the first
        // table holds.
        let mut spans = Vec::new();
        let mut at = 1 << 30;
        for i in 0..3000usize {
            let len = page * (1 + i % 7);
            spans.push((at, at + len));
            ix.insert(&mut w, &hs, at, at + len, i + 1);
            at += len;
        }
        let find = |a: usize| ix.lookup(a, |v| v != 0 && a >= spans[v - 1].0 && a < spans[v - 1].1);
        for (i, &(s, e)) in spans.iter().enumerate() {
            assert_eq!(find(s), Some(i + 1));
            assert_eq!(find(e - 1), Some(i + 1));
        }
        assert_eq!(find(at), None);
        assert_eq!(find(12345), None);
        // Remove every other one, then add them back in a different order.
        for (i, &(s, e)) in spans.iter().enumerate().step_by(2) {
            ix.remove(&mut w, &hs, s, e, i + 1);
        }
        for (i, &(s, e)) in spans.iter().enumerate() {
            let want = (i % 2 == 1).then_some(i + 1);
            assert_eq!(find(s), want);
            assert_eq!(find(e - 1), want);
        }
        for (i, &(s, e)) in spans.iter().enumerate().step_by(2).rev() {
            ix.insert(&mut w, &hs, s, e, i + 1);
        }
        for (i, &(s, _)) in spans.iter().enumerate() {
            assert_eq!(find(s), Some(i + 1));
        }
        for (i, &(s, e)) in spans.iter().enumerate() {
            ix.remove(&mut w, &hs, s, e, i + 1);
        }
        assert_eq!(find(spans[0].0), None);
        assert_eq!(ix.classes.load(Ordering::Relaxed), 0);
        assert_eq!(w.live, 0);
    }
}
