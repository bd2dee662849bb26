//! The cache's index and memory: a sharded map from ⟨file, extent⟩ to an
//! immutable `Buf`, single-flight fills, IO-Lite's replacement order and
//! the byte budget. It knows nothing of files beyond their stamps: the
//! caller passes the stamp it saw and a closure that reads the extent.
//!
//! ```text
//!  get(key, stamp) ─► shard = hash(key) & mask, lock it (only it)
//!     ├─ Ready entry, same stamp, settled      → hit: clone the Buf, touch
//!     ├─ Filling (another thread reads it)     → wait for that flight, look again
//!     └─ none / other stamp / racy             → Filling(flight); unlock;
//!           reserve the bytes (evicting), read, install, wake the waiters
//!
//!  accounting (one lock, taken on misses only; before any shard lock):
//!     held = Σ charge(entries) + Σ charge(ghosts) ≤ budget
//!     charge(extent) = the size of the pool slot that holds it
//!     ghost = an entry evicted or replaced while readers still held its
//!             Buf; it is dropped (and its charge given back) once the
//!             cache's Buf is the only one left
//! ```
//!
//! Replacement (IO-Lite, section 2.5.1): entries are ordered first by
//! whether anything besides the cache references their bytes
//! ([`Buf::is_unique`] of the cache's own `Buf`), then by the time of the
//! last lookup or insertion; the victim is the least recently used
//! unreferenced entry, else the least recently used referenced one.
//! Evicting a referenced entry gives no memory back until its readers let
//! go, so one miss evicts at most one referenced entry; if that still
//! leaves no room the extent is handed to its reader without being cached.
//! Finding the victim scans every shard (the miss path only): exact order,
//! at a cost linear in the number of entries.

use super::identity::{FileId, Stamp};
use super::shard::{Entry, Flight, GhostKeys, Shard, ShardInner, Slot};
use super::sketch::Sketch;
use crate::Buf;
use parking_lot::Mutex;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// ⟨file, extent index⟩.
pub(crate) type Key = (FileId, u64);

/// Consecutive extents of a file that share a shard.
const RUN: u64 = 16;

/// Entries used again that one reservation passes over at most before it
/// evicts regardless (hits on other threads cannot keep it going).
const SPARES: u32 = 64;

/// What a fill produced.
pub(crate) struct Filled {
    pub buf: Buf,
    /// May the extent be served again under its stamp (see `identity`)?
    pub settled: bool,
}

/// Why a fill gave up.
pub(crate) enum FillError {
    /// The file changed while it was read: look it up again.
    Changed,
    /// The file ended before the extent did: it shrank since it was
    /// looked at (at the offset given).
    Shrank(u64),
    Io(std::io::Error),
}

struct Acct {
    held: usize,
    ghosts: Vec<(Buf, usize)>,
    evictions: u64,
    replaced: u64,
    uncached: u64,
    promoted: u64,
    /// With an admission queue: extents that left it unused.
    ghost_keys: Option<GhostKeys>,
    /// Entries the reservation under way may still pass over.
    spares: u32,
}

impl Acct {
    /// Drops the ghosts no reader holds any more.
    fn sweep(&mut self) {
        let mut freed = 0;
        self.ghosts.retain(|(b, c)| {
            let keep = !b.is_unique();
            if !keep {
                freed += c;
            }
            keep
        });
        self.held -= freed;
    }

    /// An entry's `Buf` leaves the cache: freed now if nobody else holds
    /// it, else kept as a ghost until they let go.
    fn release(&mut self, buf: Buf, charge: usize) {
        if buf.is_unique() {
            self.held -= charge;
        } else {
            self.ghosts.push((buf, charge));
        }
    }
}

/// Counters and sizes, read together.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct CoreStats {
    pub hits: u64,
    pub misses: u64,
    pub evictions: u64,
    pub replaced: u64,
    pub uncached: u64,
    pub promoted: u64,
    pub entries: usize,
    pub held: usize,
    pub shared: usize,
}

/// What [`Core::evict_one`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Victim {
    /// Evicted an entry no reader held: its memory is free.
    Freed,
    /// Evicted an entry readers still hold: nothing freed yet.
    Referenced,
    /// Moved an entry used again from the admission queue to the main
    /// order: nothing evicted.
    Promoted,
}

/// What the core's replacement does beyond IO-Lite's order (the
/// matching [`CacheConfig`](super::CacheConfig) fields say what each is).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Policy {
    pub admission_queue: bool,
    pub frequency: bool,
    pub largest_file: Option<u64>,
    /// The admission queue's share of the budget, as a divisor: None for
    /// a tenth (S3-FIFO's), or a hundredth with the frequency count
    /// (W-TinyLFU's window). Set by tests.
    pub queue_share: Option<usize>,
}

pub(crate) struct Core {
    shards: Box<[Shard]>,
    mask: usize,
    hasher: foldhash::fast::RandomState,
    tick: AtomicU64,
    budget: usize,
    /// Files larger than this are not cached (`CacheConfig::largest_file`).
    largest_file: u64,
    /// The sizes extents are charged at (the pool's slot sizes).
    classes: Box<[usize]>,
    /// Lookups per extent lately (`Policy::frequency`).
    sketch: Option<Sketch>,
    /// Is there an admission queue?
    admission: bool,
    /// The admission queue holds at most a `small_share`th of the budget
    /// (S3-FIFO's tenth; W-TinyLFU's hundredth with a frequency sketch).
    small_share: usize,
    acct: Mutex<Acct>,
}

impl Core {
    /// A core of `shards` lock shards (rounded up to a power of two) that
    /// keeps within `budget` bytes, charging an extent the first of
    /// `classes` (ascending) that holds it, replacing as `policy` says (a
    /// frequency filter brings the admission queue with it).
    pub(crate) fn new(budget: usize, shards: usize, classes: &[usize], policy: Policy) -> Core {
        let n = shards.clamp(1, 1 << 16).next_power_of_two();
        let admission = policy.admission_queue || policy.frequency;
        // Ghost keys: at most as many as the main order could hold
        // extents of the smallest charge, within limits (and at most as
        // many as it holds: `GhostKeys::remember`).
        let smallest = classes.first().copied().unwrap_or(4096).max(1);
        let ghost_cap = (budget / smallest).clamp(256, 1 << 18);
        Core {
            shards: (0..n).map(|_| Shard::default()).collect(),
            mask: n - 1,
            hasher: Default::default(),
            tick: AtomicU64::new(1),
            budget,
            largest_file: policy.largest_file.unwrap_or(u64::MAX),
            classes: classes.into(),
            // As many counters a row as the budget holds extents of the
            // smallest charge.
            sketch: policy.frequency.then(|| Sketch::new(budget / smallest)),
            small_share: policy
                .queue_share
                .unwrap_or(if policy.frequency { 100 } else { 10 })
                .max(1),
            admission,
            acct: Mutex::new(Acct {
                held: 0,
                ghosts: Vec::new(),
                evictions: 0,
                replaced: 0,
                uncached: 0,
                promoted: 0,
                ghost_keys: (admission && !policy.frequency).then(|| GhostKeys::new(ghost_cap)),
                spares: 0,
            }),
        }
    }

    /// Where a new extent `key` goes: the admission queue (its tick
    /// `now`) if the cache has one and the extent did not just leave it
    /// unused (without a frequency sketch: with one, every new extent
    /// waits there, and the sketch remembers what came back), else the
    /// main order.
    fn admit(&self, acct: &mut Acct, key: &Key, now: u64) -> Option<u64> {
        if !self.admission {
            return None;
        }
        let returning = acct.ghost_keys.as_mut().is_some_and(|g| g.take(key));
        (!returning).then_some(now)
    }

    /// The bytes an extent of `len` bytes is counted as: the pool slot
    /// that holds it (whole pages past the largest).
    pub(crate) fn charge(&self, len: usize) -> usize {
        match self.classes.iter().find(|&&c| c >= len) {
            Some(&c) => c,
            None => len.div_ceil(4096).saturating_mul(4096),
        }
    }

    /// The shard of `key`: consecutive extents of a file share one, in
    /// runs of [`RUN`], so that [`hits`](Self::hits) locks once per run.
    fn shard(&self, key: &Key) -> &Shard {
        &self.shards[self.hasher.hash_one((key.0, key.1 / RUN)) as usize & self.mask]
    }

    /// Counts a lookup of `key` in the frequency sketch, if the cache
    /// keeps one.
    fn record(&self, key: &Key) {
        if let Some(sk) = &self.sketch {
            sk.record(self.hasher.hash_one(key));
        }
    }

    /// Was `a` (charged `ca` bytes) looked up more often lately per byte
    /// than `b` (charged `cb`)? False without a frequency sketch.
    fn denser(&self, a: &Key, ca: usize, b: &Key, cb: usize) -> bool {
        self.sketch.as_ref().is_some_and(|sk| {
            let fa = u128::from(sk.estimate(self.hasher.hash_one(a)));
            let fb = u128::from(sk.estimate(self.hasher.hash_one(b)));
            fa * cb as u128 > fb * ca as u128
        })
    }

    fn now(&self) -> u64 {
        self.tick.fetch_add(1, Ordering::Relaxed)
    }

    /// The hits among extents `first..=last` of `id` as of `stamp`, in
    /// order: each is handed to `take` (its index and the cache's `Buf`)
    /// and counted as a lookup would be, one shard lock per run of
    /// [`RUN`] extents. Stops at the first that is not a hit (absent,
    /// another stamp, racy, being filled) and returns its index, or
    /// `last + 1`: the caller goes on with [`get`](Self::get).
    pub(crate) fn hits(
        &self,
        id: FileId,
        stamp: Stamp,
        first: u64,
        last: u64,
        mut take: impl FnMut(u64, &Buf),
    ) -> u64 {
        let mut idx = first;
        while idx <= last {
            let run_end = (idx / RUN)
                .saturating_mul(RUN)
                .saturating_add(RUN - 1)
                .min(last);
            let mut sh = self.shard(&(id, idx)).0.lock();
            // The ticks consecutive lookups of these extents would get.
            let tick = self.tick.fetch_add(run_end - idx + 1, Ordering::Relaxed);
            let mut end = idx;
            while end <= run_end {
                match sh.map.get_mut(&(id, end)) {
                    Some(Slot::Ready(e)) if e.stamp == stamp && e.settled => {
                        e.last_use = tick + (end - idx);
                        e.uses = (e.uses + 1).min(3);
                        take(end, &e.buf);
                        sh.hits += 1;
                        end += 1;
                    }
                    _ => break,
                }
            }
            drop(sh);
            // The hits' lookups counted, outside the shard's lock (a miss
            // is counted by `get`).
            if self.sketch.is_some() {
                for i in idx..end {
                    self.record(&(id, i));
                }
            }
            if end <= run_end {
                return end;
            }
            idx = run_end + 1;
        }
        idx
    }

    /// The extent `key` as of `stamp`: from the cache if it holds it under
    /// that stamp and settled, else read by `fill` — once, however many
    /// threads miss on it at the same time. `fill` is told whether the
    /// bytes were reserved in the budget (its buffer will be cached) or
    /// not (the reader's alone). `len` is the extent's length.
    pub(crate) fn get(
        &self,
        key: Key,
        stamp: Stamp,
        len: usize,
        fill: impl FnOnce(bool) -> Result<Filled, FillError>,
    ) -> Result<Buf, FillError> {
        let shard = self.shard(&key);
        self.record(&key);
        let (flight, old) = loop {
            let mut sh = shard.0.lock();
            let tick = self.now();
            match sh.map.get_mut(&key) {
                Some(Slot::Ready(e)) if e.stamp == stamp && e.settled => {
                    // The order learns of it at the next eviction
                    // (`ShardInner::candidate`).
                    e.last_use = tick;
                    e.uses = (e.uses + 1).min(3);
                    let buf = e.buf.clone();
                    sh.hits += 1;
                    return Ok(buf);
                }
                Some(Slot::Filling(f)) => {
                    let f = f.clone();
                    drop(sh);
                    f.wait();
                    continue;
                }
                Some(Slot::Ready(_)) => {
                    let flight = Arc::new(Flight::default());
                    let old = sh.take(&key, Some(Slot::Filling(flight.clone())));
                    sh.misses += 1;
                    break (flight, old);
                }
                None => {
                    let flight = Arc::new(Flight::default());
                    sh.map.insert(key, Slot::Filling(flight.clone()));
                    sh.misses += 1;
                    break (flight, None);
                }
            }
        };
        let charge = self.charge(len);
        let had_old = old.is_some();
        // A file over the size limit is its readers' alone.
        let reserved = stamp.size <= self.largest_file && self.reserve(charge);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| fill(reserved)));
        let mut acct = self.acct.lock();
        let mut sh = shard.0.lock();
        let superseded = flight.superseded.load(Ordering::Relaxed);
        let out = match result {
            Ok(Ok(filled)) => {
                let reuse = old.as_ref().is_some_and(|o| {
                    o.buf.len() == filled.buf.len() && o.buf == filled.buf && o.buf.is_intact()
                });
                let (buf, charge, counted) = if reuse {
                    let o = old.expect("checked");
                    if reserved {
                        acct.held -= charge;
                    }
                    (o.buf, o.charge, true)
                } else {
                    if let Some(o) = old {
                        acct.replaced += 1;
                        acct.release(o.buf, o.charge);
                    }
                    if !reserved {
                        acct.uncached += filled.buf.len() as u64;
                    }
                    (filled.buf, charge, reserved)
                };
                if counted && !superseded {
                    let now = self.now();
                    // An extent read again (its cached bytes had gone
                    // stale) has had its second use.
                    let probation = if had_old {
                        None
                    } else {
                        self.admit(&mut acct, &key, now)
                    };
                    let entry = Entry {
                        stamp,
                        buf: buf.clone(),
                        settled: filled.settled,
                        last_use: now,
                        placed: 0,
                        charge,
                        probation,
                        uses: 0,
                    };
                    sh.put(key, entry);
                } else {
                    if counted {
                        acct.release(buf.clone(), charge);
                    }
                    Self::remove_flight(&mut sh, &key, &flight);
                }
                Ok(buf)
            }
            Ok(Err(e)) => {
                if reserved {
                    acct.held -= charge;
                }
                if let Some(o) = old {
                    acct.replaced += 1;
                    acct.release(o.buf, o.charge);
                }
                Self::remove_flight(&mut sh, &key, &flight);
                Err(e)
            }
            Err(panic) => {
                if reserved {
                    acct.held -= charge;
                }
                if let Some(o) = old {
                    acct.release(o.buf, o.charge);
                }
                Self::remove_flight(&mut sh, &key, &flight);
                drop(sh);
                drop(acct);
                flight.finish();
                std::panic::resume_unwind(panic);
            }
        };
        drop(sh);
        drop(acct);
        flight.finish();
        out
    }

    fn remove_flight(sh: &mut ShardInner, key: &Key, flight: &Arc<Flight>) {
        if let Some(Slot::Filling(f)) = sh.map.get(key) {
            if Arc::ptr_eq(f, flight) {
                sh.map.remove(key);
            }
        }
    }

    /// Makes room for `charge` more bytes and counts them as held; false
    /// (nothing counted) if the budget has no room even after evicting.
    fn reserve(&self, charge: usize) -> bool {
        let mut acct = self.acct.lock();
        acct.sweep();
        acct.spares = SPARES;
        loop {
            if acct.held.saturating_add(charge) <= self.budget {
                acct.held += charge;
                return true;
            }
            match self.evict_one(&mut acct) {
                Some(Victim::Freed | Victim::Promoted) => continue,
                // A referenced victim frees nothing until its readers let go.
                Some(Victim::Referenced) | None => {
                    if acct.held.saturating_add(charge) <= self.budget {
                        acct.held += charge;
                        return true;
                    }
                    return false;
                }
            }
        }
    }

    /// Evicts the entry IO-Lite's order puts first, or with an admission
    /// queue (S3-FIFO's small queue): while that queue holds more than its
    /// share of the budget (or the main order is empty), its first entry
    /// leaves it — to the main order if it was used again since it came
    /// in or, with a frequency sketch, was looked up more often lately per
    /// byte charged than the main order's next to go (TinyLFU's admission,
    /// weighed by size); else out of the cache (its key remembered when
    /// there is no sketch). Both queues put entries readers hold last.
    /// None if the cache holds no entry.
    fn evict_one(&self, acct: &mut Acct) -> Option<Victim> {
        // The victim can change between the scan and its removal (a lookup
        // touched it); scan again then.
        for _ in 0..64 {
            let mut main: Option<(bool, u64, usize, Key)> = None;
            let mut main_charge = 0;
            let mut small: Option<(bool, u64, usize, Key)> = None;
            let mut small_held = 0;
            let mut main_len = 0;
            let admission = self.admission;
            for (i, shard) in self.shards.iter().enumerate() {
                let mut sh = shard.0.lock();
                main_len += sh.main_len();
                if let Some((r, u, k)) = sh.candidate() {
                    if main.is_none_or(|(br, bu, _, _)| (r, u) < (br, bu)) {
                        main = Some((r, u, i, k));
                        main_charge = match sh.map.get(&k) {
                            Some(Slot::Ready(e)) => e.charge,
                            _ => unreachable!("candidates are ready entries"),
                        };
                    }
                }
                if admission {
                    small_held += sh.probation_held;
                    if let Some((r, t, k)) = sh.probation_candidate() {
                        if small.is_none_or(|(br, bt, _, _)| (r, t) < (br, bt)) {
                            small = Some((r, t, i, k));
                        }
                    }
                }
            }
            // The queue gives up its first entry when over its share —
            // unless readers hold that one and the main order has one
            // they do not (entries readers hold go last, across both).
            let small_first = small.is_some_and(|(r, ..)| !r || main.is_none_or(|(m, ..)| m));
            let from_small =
                small_first && (small_held > self.budget / self.small_share || main.is_none());
            let (referenced, at, i, key) = if from_small { small } else { main }?;
            let mut sh = self.shards[i].0.lock();
            let Some(Slot::Ready(e)) = sh.map.get(&key) else {
                continue;
            };
            if e.buf.is_unique() == referenced {
                continue;
            }
            if from_small {
                if e.probation != Some(at) {
                    continue;
                }
                // Used again while it waited, or (with a frequency
                // sketch) looked up more often lately per byte than the
                // main order's candidate to go: into the main order.
                let charge = e.charge;
                let more =
                    || main.is_some_and(|(_, _, _, m)| self.denser(&key, charge, &m, main_charge));
                if e.last_use != at || more() {
                    sh.promote(&key);
                    acct.promoted += 1;
                    return Some(Victim::Promoted);
                }
                if let Some(g) = &mut acct.ghost_keys {
                    g.remember(key, main_len);
                }
            } else if e.probation.is_some() || e.last_use != at {
                continue;
            } else if admission && e.uses > 0 && acct.spares > 0 {
                // Used again since it was last passed over: another lap.
                acct.spares -= 1;
                let now = self.now();
                if let Some(Slot::Ready(e)) = sh.map.get_mut(&key) {
                    e.uses -= 1;
                    e.last_use = now;
                }
                return Some(Victim::Promoted);
            }
            let e = sh.take(&key, None).expect("matched above");
            acct.evictions += 1;
            acct.release(e.buf, e.charge);
            return Some(if referenced {
                Victim::Referenced
            } else {
                Victim::Freed
            });
        }
        None
    }

    /// Puts `buf` in the cache as the extent `key` of the file as of
    /// `stamp` (a write through the cache replaced it), replacing what was
    /// there; the entry is racy (see `identity`), so it is served again
    /// only once a read of the file shows the same bytes. Returns false if
    /// the budget had no room.
    pub(crate) fn replace(&self, key: Key, stamp: Stamp, buf: Buf) -> bool {
        let charge = self.charge(buf.len());
        self.remove(key);
        if !self.reserve(charge) {
            return false;
        }
        let mut acct = self.acct.lock();
        let mut sh = self.shard(&key).0.lock();
        let tick = self.now();
        match sh.map.get_mut(&key) {
            Some(Slot::Filling(f)) => {
                f.superseded.store(true, Ordering::Relaxed);
                acct.held -= charge;
                false
            }
            Some(Slot::Ready(_)) | None => {
                if let Some(old) = sh.take(&key, None) {
                    acct.replaced += 1;
                    acct.release(old.buf, old.charge);
                }
                let probation = self.admit(&mut acct, &key, tick);
                sh.put(
                    key,
                    Entry {
                        stamp,
                        buf,
                        settled: false,
                        last_use: tick,
                        placed: 0,
                        charge,
                        probation,
                        uses: 0,
                    },
                );
                true
            }
        }
    }

    /// Drops the extent `key` from the cache (a write changed part of it);
    /// a read in flight for it is not installed.
    pub(crate) fn remove(&self, key: Key) {
        let mut acct = self.acct.lock();
        let mut sh = self.shard(&key).0.lock();
        match sh.map.get(&key) {
            Some(Slot::Filling(f)) => f.superseded.store(true, Ordering::Relaxed),
            Some(Slot::Ready(_)) => {
                let e = sh.take(&key, None).expect("matched above");
                acct.replaced += 1;
                acct.release(e.buf, e.charge);
            }
            None => {}
        }
    }

    pub(crate) fn stats(&self) -> CoreStats {
        let mut acct = self.acct.lock();
        acct.sweep();
        let mut s = CoreStats {
            evictions: acct.evictions,
            replaced: acct.replaced,
            promoted: acct.promoted,
            uncached: acct.uncached,
            held: acct.held,
            shared: acct.ghosts.iter().map(|(_, c)| c).sum(),
            ..CoreStats::default()
        };
        for shard in self.shards.iter() {
            let sh = shard.0.lock();
            s.hits += sh.hits;
            s.misses += sh.misses;
            debug_assert_eq!(
                sh.listed(),
                sh.map
                    .values()
                    .filter(|s| matches!(s, Slot::Ready(_)))
                    .count(),
                "the order lists every ready entry once"
            );
            for slot in sh.map.values() {
                if let Slot::Ready(e) = slot {
                    s.entries += 1;
                    if !e.buf.is_unique() {
                        s.shared += e.charge;
                    }
                }
            }
        }
        s
    }

    /// Does the cache hold a ready entry for `key`? (Without touching it.)
    #[cfg(test)]
    pub(crate) fn contains(&self, key: Key) -> bool {
        matches!(
            self.shard(&key).0.lock().map.get(&key),
            Some(Slot::Ready(_))
        )
    }

    pub(crate) fn budget(&self) -> usize {
        self.budget
    }
}
