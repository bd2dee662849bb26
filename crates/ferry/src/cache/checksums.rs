//! `Checksums`: checksums computed once per slice and found again by the
//! slice's `ContentId` (IO-Lite's cached Internet checksums, §3.5).

use super::checksums_math::{crc_combine, crc_shift, ones_sum, OnesAcc};
pub use super::checksums_stats::{ChecksumStats, FunctionStats};
use super::checksums_stats::{Counts, Func, BYTES, DAMAGED, HIT, MISS};
use crate::{Aggregate, Buf, ContentId};
use quick_cache::sync::Cache;
use std::fmt;

/// Cached checksums of immutable buffers, shared by any number of threads.
///
/// ```text
///   Buf ──content_id()──► ContentId { block, generation, offset, len }
///                              │  (equal ids ⇒ equal bytes)
///          ┌───────────────────┼───────────────────────────┐
///          ▼                   ▼                           ▼
///   CRC-32C + x^(8·len)   ones'-complement sum     [ids of an aggregate]
///   per slice             per slice                 ──► BLAKE3 (ETag)
///          │                   │
///          └── an Aggregate's value: its slices' values combined,
///              no byte read again
/// ```
///
/// Three functions, each computed at most once per slice while the entry
/// lives:
///
/// * **CRC-32C** (Castagnoli, as iSCSI, ext4 and SCTP use it);
/// * the **Internet checksum** of RFC 1071 (IP, TCP, UDP), foldable per
///   slice as IO-Lite's TCP did: a response whose header changes and whose
///   body does not has only its header summed again;
/// * a **strong hash**, BLAKE3, for HTTP entity tags.
///
/// An [`Aggregate`]'s CRC-32C and Internet checksum are combined from its
/// slices' cached values: after the first time, no byte is read again,
/// however the slices are arranged. BLAKE3 cannot be combined across
/// arbitrary splits (its tree joins only 1 KiB chunks at power-of-two
/// boundaries), so an aggregate's strong hash is cached whole, keyed by
/// the list of its slices' ids (adjacent slices of one block merged, so
/// `a[..5] + a[5..]` finds what `a` left).
///
/// **Damaged buffers.** A file mapping that lost bytes
/// ([`Buf::is_intact`] false) gets no checksum at all: every call asks
/// `is_intact()` (one `fstat` for a leased mapping) before it hands out a
/// value, cached or new, and refuses with [`Damaged`]; a value computed
/// while the bytes went is never stored.
///
/// **Memory.** A `ContentId` is never reused for other bytes, so an entry
/// is never wrong, only useless once its buffer is gone. The tables are
/// bounded ([`with_capacity`](Self::with_capacity), S3-FIFO eviction from
/// the `quick_cache` crate): entries nobody asks for again, such as those
/// of dead buffers, are the first to go, and memory stays within the cap
/// however many buffers come and go.
///
/// **Threads.** The tables are sharded, each shard with its own lock, and
/// the statistics are counted in per-thread stripes: lookups of different
/// ids on different threads rarely meet.
///
/// ```
/// use ferry::cache::Checksums;
/// use ferry::{Aggregate, Buf};
/// let sums = Checksums::new();
/// let body = Buf::from(vec![7u8; 100_000]);
/// let crc = sums.crc32c(&body)?;
/// assert_eq!(sums.crc32c(&body)?, crc); // found, not computed
/// assert_eq!(sums.stats().crc32c.misses, 1);
///
/// // A response: a fresh header before the same body.
/// let mut response = Aggregate::from(Buf::from_static(b"HTTP/1.1 200 OK\r\n\r\n"));
/// response.append_buf(body.clone());
/// let whole = sums.crc32c_aggregate(&response)?;
/// assert_eq!(sums.stats().crc32c.misses, 2); // only the header was read
/// assert_eq!(whole, crc32c::crc32c(&response.copy_to_vec()));
/// # Ok::<(), ferry::cache::Damaged>(())
/// ```
pub struct Checksums {
    crc: Cache<ContentId, CrcEntry>,
    ones: Cache<ContentId, u16>,
    strong: Cache<Box<[ContentId]>, [u8; 32], IdsWeight>,
    capacity: usize,
    counts: Counts,
}

/// A slice's CRC-32C and the factor that shifts a CRC past its bytes.
#[derive(Clone, Copy)]
struct CrcEntry {
    crc: u32,
    shift: u32,
}

/// An aggregate's strong-hash entry weighs as many slices as its key names:
/// the cap bounds the ids held, not just the entries.
#[derive(Clone)]
struct IdsWeight;

impl quick_cache::Weighter<Box<[ContentId]>, [u8; 32]> for IdsWeight {
    fn weight(&self, key: &Box<[ContentId]>, _: &[u8; 32]) -> u64 {
        key.len().max(1) as u64
    }
}

/// A checksum was asked of a buffer that lost bytes: a file mapping whose
/// file shrank or was emptied under it ([`Buf::is_intact`] is false). What
/// it holds now is not what its id named, and no checksum of it is given.
///
/// ```
/// let e: std::io::Error = ferry::cache::Damaged.into();
/// assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Damaged;

impl fmt::Display for Damaged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "the buffer lost bytes (its file shrank or was emptied under the mapping): \
             no checksum is given for it",
        )
    }
}

impl std::error::Error for Damaged {}

impl From<Damaged> for std::io::Error {
    fn from(e: Damaged) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::InvalidData, e)
    }
}

fn damaged_id(id: &ContentId) -> bool {
    id.generation & ContentId::DAMAGED != 0
}

impl Default for Checksums {
    fn default() -> Checksums {
        Checksums::new()
    }
}

impl fmt::Debug for Checksums {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checksums")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .field("stats", &self.stats())
            .finish()
    }
}

impl Checksums {
    /// The number of entries [`new`](Self::new) keeps per function.
    ///
    /// ```
    /// assert_eq!(ferry::cache::Checksums::new().capacity(), ferry::cache::Checksums::DEFAULT_CAPACITY);
    /// ```
    pub const DEFAULT_CAPACITY: usize = 1 << 16;

    /// A cache of [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY) entries per
    /// function (a few MiB at most).
    ///
    /// ```
    /// assert!(ferry::cache::Checksums::new().is_empty());
    /// ```
    pub fn new() -> Checksums {
        Checksums::with_capacity(Self::DEFAULT_CAPACITY)
    }

    /// A cache keeping about `entries` slices' values per function (at
    /// least one); for the strong hash, `entries` slice ids in all the
    /// aggregates' keys. Entries past the cap are evicted, those asked for
    /// least first.
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::with_capacity(1000);
    /// assert_eq!(sums.capacity(), 1000);
    /// ```
    pub fn with_capacity(entries: usize) -> Checksums {
        let entries = entries.max(1);
        Checksums {
            crc: Cache::new(entries),
            ones: Cache::new(entries),
            strong: Cache::with_weighter(entries, entries as u64, IdsWeight),
            capacity: entries,
            counts: Counts::new(),
        }
    }

    /// The cap given to [`with_capacity`](Self::with_capacity).
    ///
    /// ```
    /// assert_eq!(ferry::cache::Checksums::with_capacity(0).capacity(), 1);
    /// ```
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Entries held now, all functions together.
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::new();
    /// sums.crc32c(&ferry::Buf::from(vec![1u8; 3]))?;
    /// assert_eq!(sums.len(), 1);
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn len(&self) -> usize {
        self.crc.len() + self.ones.len() + self.strong.len()
    }

    /// True if no entry is held.
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::new();
    /// assert!(sums.is_empty());
    /// sums.strong_hash(&ferry::Buf::from_static(b"x"))?;
    /// assert!(!sums.is_empty());
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every entry (the statistics stay).
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::new();
    /// sums.crc32c(&ferry::Buf::from(vec![1u8; 3]))?;
    /// sums.clear();
    /// assert!(sums.is_empty());
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn clear(&self) {
        self.crc.clear();
        self.ones.clear();
        self.strong.clear();
    }

    /// What the cache did so far.
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::new();
    /// let a = ferry::Aggregate::from(ferry::Buf::from_static(b"abc"));
    /// sums.crc32c_aggregate(&a)?;
    /// sums.crc32c_aggregate(&a)?;
    /// let s = sums.stats();
    /// assert_eq!((s.crc32c.hits, s.crc32c.misses, s.crc32c.bytes, s.damaged), (1, 1, 3, 0));
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn stats(&self) -> ChecksumStats {
        ChecksumStats {
            crc32c: self.counts.function(Func::Crc),
            internet: self.counts.function(Func::Ones),
            strong: self.counts.function(Func::Strong),
            damaged: self.counts.total(DAMAGED),
        }
    }

    fn refuse<T>(&self) -> Result<T, Damaged> {
        self.counts.add(DAMAGED, 1);
        Err(Damaged)
    }

    /// A slice's value from `table`, or computed by `compute` and kept;
    /// refused if the slice lost bytes, before or while it was computed.
    fn slice_value<V: Clone>(
        &self,
        table: &Cache<ContentId, V>,
        func: Func,
        buf: &Buf,
        compute: impl FnOnce(&[u8]) -> V,
    ) -> Result<V, Damaged> {
        let id = buf.content_id();
        if damaged_id(&id) {
            return self.refuse();
        }
        let base = func as usize;
        if let Some(v) = table.get(&id) {
            if !buf.is_intact() {
                return self.refuse();
            }
            self.counts.add(base + HIT, 1);
            return Ok(v);
        }
        let v = compute(buf.as_slice());
        // The bytes may have gone while they were read: then `v` is not
        // the value of what the id names, and is neither kept nor given.
        if !buf.is_intact() {
            return self.refuse();
        }
        self.counts.add(base + MISS, 1);
        self.counts.add(base + BYTES, buf.len() as u64);
        table.insert(id, v.clone());
        Ok(v)
    }

    fn crc_entry(&self, buf: &Buf) -> Result<CrcEntry, Damaged> {
        self.slice_value(&self.crc, Func::Crc, buf, |b| CrcEntry {
            crc: crc32c::crc32c(b),
            shift: crc_shift(b.len() as u64),
        })
    }

    fn ones_entry(&self, buf: &Buf) -> Result<u16, Damaged> {
        self.slice_value(&self.ones, Func::Ones, buf, ones_sum)
    }

    /// The CRC-32C (Castagnoli) of `buf`'s bytes, computed once per
    /// [`ContentId`].
    ///
    /// # Errors
    /// [`Damaged`] if `buf` lost bytes ([`Buf::is_intact`] false).
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::new();
    /// assert_eq!(sums.crc32c(&ferry::Buf::from_static(b"123456789"))?, 0xE306_9283);
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn crc32c(&self, buf: &Buf) -> Result<u32, Damaged> {
        self.crc_entry(buf).map(|e| e.crc)
    }

    /// The CRC-32C of an aggregate's bytes, combined from its slices'
    /// cached CRCs (each slice's computed once): the bytes of slices seen
    /// before are not read again.
    ///
    /// # Errors
    /// [`Damaged`] if a slice lost bytes.
    ///
    /// ```
    /// use ferry::{cache::Checksums, Aggregate, Buf};
    /// let sums = Checksums::new();
    /// let a: Aggregate = [Buf::from_static(b"1234"), Buf::from_static(b"56789")].into_iter().collect();
    /// assert_eq!(sums.crc32c_aggregate(&a)?, 0xE306_9283);
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn crc32c_aggregate(&self, agg: &Aggregate) -> Result<u32, Damaged> {
        let mut crc = 0;
        for b in agg.bufs() {
            let e = self.crc_entry(b)?;
            crc = crc_combine(crc, e.crc, e.shift);
        }
        Ok(crc)
    }

    /// The Internet checksum (RFC 1071) of `buf`'s bytes as one run from
    /// an even offset, in host order: the value for a header field is
    /// `to_be_bytes()`. Its complement (`!`) is the ones'-complement sum,
    /// to be added to a pseudo-header's. Computed once per [`ContentId`].
    ///
    /// # Errors
    /// [`Damaged`] if `buf` lost bytes.
    ///
    /// ```
    /// // RFC 1071 §3's example: the sum of 00 01 f2 03 f4 f5 f6 f7 is ddf2.
    /// let sums = ferry::cache::Checksums::new();
    /// let b = ferry::Buf::from_static(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]);
    /// assert_eq!(sums.internet_checksum(&b)?, !0xddf2);
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn internet_checksum(&self, buf: &Buf) -> Result<u16, Damaged> {
        self.ones_entry(buf).map(|s| !s)
    }

    /// The Internet checksum of an aggregate's bytes, folded from its
    /// slices' cached sums (a slice that starts at an odd offset has its
    /// sum byte-swapped): the bytes of slices seen before are not read
    /// again.
    ///
    /// # Errors
    /// [`Damaged`] if a slice lost bytes.
    ///
    /// ```
    /// use ferry::{cache::Checksums, Aggregate, Buf};
    /// let sums = Checksums::new();
    /// // RFC 1071's example split at an odd offset.
    /// let a: Aggregate = [Buf::from_static(&[0x00, 0x01, 0xf2]), Buf::from_static(&[0x03, 0xf4, 0xf5, 0xf6, 0xf7])]
    ///     .into_iter()
    ///     .collect();
    /// assert_eq!(sums.internet_checksum_aggregate(&a)?, !0xddf2);
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn internet_checksum_aggregate(&self, agg: &Aggregate) -> Result<u16, Damaged> {
        let mut acc = OnesAcc::default();
        for b in agg.bufs() {
            acc.push(self.ones_entry(b)?, b.len());
        }
        Ok(acc.checksum())
    }

    /// The BLAKE3 hash of `buf`'s bytes, computed once per [`ContentId`].
    ///
    /// # Errors
    /// [`Damaged`] if `buf` lost bytes.
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::new();
    /// let h = sums.strong_hash(&ferry::Buf::from_static(b"abc"))?;
    /// assert_eq!(h, *blake3::hash(b"abc").as_bytes());
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn strong_hash(&self, buf: &Buf) -> Result<[u8; 32], Damaged> {
        self.strong_of(&[buf])
    }

    /// The BLAKE3 hash of an aggregate's bytes. BLAKE3 does not combine
    /// across arbitrary splits, so the hash is cached for the aggregate as
    /// a whole, keyed by its slices' ids (adjacent pieces of one block
    /// joined first): a later aggregate of the same slices, however
    /// split, finds it; one with any other slice reads all its bytes.
    ///
    /// # Errors
    /// [`Damaged`] if a slice lost bytes.
    ///
    /// ```
    /// use ferry::{cache::Checksums, Aggregate, Buf};
    /// let sums = Checksums::new();
    /// let body = Buf::from(b"<html>hello</html>".to_vec());
    /// let h = sums.strong_hash(&body)?;
    /// let a: Aggregate = [body.slice(..6), body.slice(6..)].into_iter().collect();
    /// assert_eq!(sums.strong_hash_aggregate(&a)?, h);
    /// assert_eq!(sums.stats().strong.hits, 1);
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn strong_hash_aggregate(&self, agg: &Aggregate) -> Result<[u8; 32], Damaged> {
        self.strong_of(&agg.bufs().collect::<Vec<_>>())
    }

    /// A strong HTTP entity tag for an aggregate's bytes: the first 128
    /// bits of its [BLAKE3 hash](Self::strong_hash_aggregate) in hex,
    /// quoted, as the `ETag` header carries it.
    ///
    /// # Errors
    /// [`Damaged`] if a slice lost bytes.
    ///
    /// ```
    /// let sums = ferry::cache::Checksums::new();
    /// let tag = sums.etag(&ferry::Aggregate::from(ferry::Buf::from_static(b"abc")))?;
    /// assert_eq!(tag, "\"6437b3ac38465133ffb63b75273a8db5\"");
    /// # Ok::<(), ferry::cache::Damaged>(())
    /// ```
    pub fn etag(&self, agg: &Aggregate) -> Result<String, Damaged> {
        let h = self.strong_hash_aggregate(agg)?;
        let mut s = String::with_capacity(34);
        s.push('"');
        for b in &h[..16] {
            use fmt::Write;
            let _ = write!(s, "{b:02x}");
        }
        s.push('"');
        Ok(s)
    }

    fn strong_of(&self, bufs: &[&Buf]) -> Result<[u8; 32], Damaged> {
        let mut key: Vec<ContentId> = Vec::with_capacity(bufs.len());
        for b in bufs {
            let id = b.content_id();
            if damaged_id(&id) {
                return self.refuse();
            }
            if id.len == 0 {
                continue;
            }
            match key.last_mut() {
                Some(last)
                    if last.block == id.block
                        && last.generation == id.generation
                        && last.offset.wrapping_add(last.len) == id.offset =>
                {
                    last.len += id.len;
                }
                _ => key.push(id),
            }
        }
        let intact = || bufs.iter().all(|b| b.is_intact());
        let base = Func::Strong as usize;
        if let Some(h) = self.strong.get(&key[..]) {
            if !intact() {
                return self.refuse();
            }
            self.counts.add(base + HIT, 1);
            return Ok(h);
        }
        let mut hasher = blake3::Hasher::new();
        let mut n = 0u64;
        for b in bufs {
            hasher.update(b);
            n += b.len() as u64;
        }
        if !intact() {
            return self.refuse();
        }
        let h = *hasher.finalize().as_bytes();
        self.counts.add(base + MISS, 1);
        self.counts.add(base + BYTES, n);
        self.strong.insert(key.into_boxed_slice(), h);
        Ok(h)
    }
}
