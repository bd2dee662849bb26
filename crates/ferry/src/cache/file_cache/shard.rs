//! One lock shard of the cache's index: its entries, fills in flight,
//! and the two orders its entries are kept in — IO-Lite's main order
//! (referenced entries last, then by last use) and, when the cache has
//! one, the admission queue new extents wait in until a second use.

use super::core::Key;
use super::identity::Stamp;
use crate::Buf;
use parking_lot::{Condvar, Mutex};
use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

pub(super) struct Entry {
    pub stamp: Stamp,
    pub buf: Buf,
    pub settled: bool,
    pub last_use: u64,
    /// Where the shard's order lists it: its last use when it was put
    /// there (hits do not move it; see `ShardInner::candidate`).
    pub placed: u64,
    pub charge: usize,
    /// In the admission queue (when the cache has one): the tick it was
    /// put there, its place in the shard's `probation`; None in the main
    /// order.
    pub probation: Option<u64>,
    /// Hits since it was put in the main order or last spared (at most
    /// 3): with the admission queue, an entry used again is passed over
    /// once per use when its turn to go comes (S3-FIFO's main queue).
    pub uses: u8,
}

#[derive(Default)]
pub(super) struct Flight {
    done: Mutex<bool>,
    cv: Condvar,
    /// A write replaced the extent while it was being read: the read's
    /// bytes are not installed.
    pub superseded: std::sync::atomic::AtomicBool,
}

impl Flight {
    pub fn wait(&self) {
        let mut done = self.done.lock();
        while !*done {
            self.cv.wait(&mut done);
        }
    }

    pub fn finish(&self) {
        *self.done.lock() = true;
        self.cv.notify_all();
    }
}

pub(super) enum Slot {
    Ready(Entry),
    Filling(Arc<Flight>),
}

#[derive(Default)]
pub(super) struct ShardInner {
    pub map: HashMap<Key, Slot, foldhash::fast::RandomState>,
    /// The shard's ready entries of the main order by last use, oldest
    /// first (last uses are unique: the clock hands each out once).
    order: BTreeMap<u64, Key>,
    /// The entries in the admission queue, by the tick they came in.
    probation: BTreeMap<u64, Key>,
    /// The bytes charged for them.
    pub probation_held: usize,
    pub hits: u64,
    pub misses: u64,
}

impl ShardInner {
    /// Puts a ready entry in (in the admission queue if its `probation`
    /// says so), replacing what was there.
    pub fn put(&mut self, key: Key, mut e: Entry) {
        if let Some(Slot::Ready(old)) = self.map.get(&key) {
            let (placed, probation, charge) = (old.placed, old.probation, old.charge);
            self.unlist(placed, probation, charge);
        }
        e.placed = e.last_use;
        match e.probation {
            Some(t) => {
                self.probation.insert(t, key);
                self.probation_held += e.charge;
            }
            None => {
                self.order.insert(e.placed, key);
            }
        }
        self.map.insert(key, Slot::Ready(e));
    }

    fn unlist(&mut self, placed: u64, probation: Option<u64>, charge: usize) {
        match probation {
            Some(t) => {
                self.probation.remove(&t);
                self.probation_held -= charge;
            }
            None => {
                self.order.remove(&placed);
            }
        }
    }

    /// Ready entries in the main order.
    pub fn main_len(&self) -> usize {
        self.order.len()
    }

    /// Ready entries listed (both queues), for a consistency check.
    pub fn listed(&self) -> usize {
        self.order.len() + self.probation.len()
    }

    /// Takes the ready entry `key` out, leaving `with` (or nothing) in its
    /// place; None (and no change) if `key` is not a ready entry.
    pub fn take(&mut self, key: &Key, with: Option<Slot>) -> Option<Entry> {
        if !matches!(self.map.get(key), Some(Slot::Ready(_))) {
            return None;
        }
        let old = match with {
            Some(slot) => self.map.insert(*key, slot),
            None => self.map.remove(key),
        };
        let Some(Slot::Ready(e)) = old else {
            unreachable!("checked above")
        };
        self.unlist(e.placed, e.probation, e.charge);
        Some(e)
    }

    /// This shard's candidate for eviction in IO-Lite's order: its least
    /// recently used entry no reader holds, else its least recently used
    /// one. A hit does not move its entry in the order (that would cost
    /// every hit a tree update); the walk here moves the entries it finds
    /// used since they were placed to where their last use puts them, so
    /// each hit costs at most one move, at the next eviction. Besides
    /// those moves, the walk passes only the referenced entries older
    /// than the candidate.
    pub fn candidate(&mut self) -> Option<(bool, u64, Key)> {
        let mut oldest = None;
        let mut from = 0;
        loop {
            let Some((&placed, &key)) = self.order.range(from..).next() else {
                return oldest;
            };
            let Some(Slot::Ready(e)) = self.map.get_mut(&key) else {
                unreachable!("the order lists ready entries only")
            };
            from = placed + 1;
            if e.last_use != placed {
                // Used since it was placed: it belongs further on.
                e.placed = e.last_use;
                self.order.remove(&placed);
                self.order.insert(e.placed, key);
                continue;
            }
            if e.buf.is_unique() {
                return Some((false, placed, key));
            }
            oldest.get_or_insert((true, placed, key));
        }
    }

    /// This shard's candidate to leave the admission queue: the entry
    /// that came in first among those no reader holds, else the first
    /// one; with the tick it came in.
    pub fn probation_candidate(&self) -> Option<(bool, u64, Key)> {
        let mut oldest = None;
        for (&t, &key) in &self.probation {
            let Some(Slot::Ready(e)) = self.map.get(&key) else {
                unreachable!("the admission queue lists ready entries only")
            };
            if e.buf.is_unique() {
                return Some((false, t, key));
            }
            oldest.get_or_insert((true, t, key));
        }
        oldest
    }

    /// Moves `key` from the admission queue to the main order, placed by
    /// its last use.
    pub fn promote(&mut self, key: &Key) {
        let Some(Slot::Ready(e)) = self.map.get_mut(key) else {
            return;
        };
        let Some(t) = e.probation.take() else {
            return;
        };
        e.placed = e.last_use;
        let (placed, charge) = (e.placed, e.charge);
        self.probation.remove(&t);
        self.probation_held -= charge;
        self.order.insert(placed, *key);
    }
}

/// Keys of extents that left the admission queue without a second use
/// (S3-FIFO's ghost queue): one that comes back goes straight to the main
/// order. At most `cap` keys, the oldest forgotten first.
/// Ghost keys kept however few entries the main order holds.
const MIN_GHOSTS: usize = 16;

pub(super) struct GhostKeys {
    set: HashSet<Key, foldhash::fast::RandomState>,
    fifo: VecDeque<Key>,
    cap: usize,
}

impl GhostKeys {
    pub fn new(cap: usize) -> GhostKeys {
        GhostKeys {
            set: HashSet::default(),
            fifo: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    /// Remembers `key`, keeping as many keys as the main order holds
    /// entries (`keep`; S3-FIFO's ghost queue), at least [`MIN_GHOSTS`]
    /// and at most the cap it was made with.
    pub fn remember(&mut self, key: Key, keep: usize) {
        if self.set.insert(key) {
            self.fifo.push_back(key);
        }
        let cap = keep.clamp(MIN_GHOSTS, self.cap.max(MIN_GHOSTS));
        while self.fifo.len() > cap {
            if let Some(old) = self.fifo.pop_front() {
                self.set.remove(&old);
            }
        }
    }

    /// Was `key` remembered? It is forgotten (a key taken back and
    /// remembered again may then be forgotten early: an approximation
    /// that costs at most a second trip through the admission queue).
    pub fn take(&mut self, key: &Key) -> bool {
        self.set.remove(key)
    }
}

#[repr(align(128))]
#[derive(Default)]
pub(super) struct Shard(pub Mutex<ShardInner>);
