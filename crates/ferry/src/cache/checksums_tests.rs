//! Unit tests of `Checksums`: every combined value against a one-pass
//! computation, reuse counted, damaged buffers refused, the cap, threads.

use super::checksums_math::{crc_combine, crc_shift, ones_sum, OnesAcc};
use super::{Checksums, Damaged};
use crate::{Aggregate, Buf};
use proptest::prelude::*;
use std::sync::Arc;

/// RFC 1071's reference: 16-bit big-endian words summed with end-around
/// carry, an odd last byte as a high half, the sum complemented.
fn naive_internet(bytes: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    for pair in bytes.chunks(2) {
        let hi = u64::from(pair[0]) << 8;
        let lo = pair.get(1).map_or(0, |&b| u64::from(b));
        sum += hi | lo;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xFFFF) + (sum >> 16);
    }
    !(sum as u16)
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect()
}

#[test]
fn internet_checksum_matches_rfc_1071s_example_and_the_naive_sum() {
    // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2.
    const EXAMPLE: [u8; 8] = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
    let example = EXAMPLE;
    assert_eq!(naive_internet(&example), !0xddf2);
    assert_eq!(ones_sum(&example), 0xddf2);
    let sums = Checksums::new();
    assert_eq!(
        sums.internet_checksum(&Buf::from_static(&EXAMPLE)),
        Ok(!0xddf2)
    );
    // Odd lengths, all zeros, all ones (the sum that is "negative zero").
    for bytes in [
        &[][..],
        &[0xab][..],
        &[0, 0, 0][..],
        &[0xff, 0xff][..],
        &[0xff, 0xff, 0xff][..],
        &pattern(4097, 3)[..],
    ] {
        assert_eq!(!ones_sum(bytes), naive_internet(bytes), "{bytes:?}");
    }
}

#[test]
fn crc_combine_agrees_with_the_crates_combine_and_one_pass() {
    let data = pattern(70_000, 9);
    for cut in [0, 1, 2, 3, 7, 8, 4095, 4096, 65_536, 69_999, 70_000] {
        let (a, b) = data.split_at(cut);
        let (ca, cb) = (crc32c::crc32c(a), crc32c::crc32c(b));
        let ours = crc_combine(ca, cb, crc_shift(b.len() as u64));
        assert_eq!(ours, crc32c::crc32c(&data), "cut at {cut}");
        assert_eq!(ours, crc32c::crc32c_combine(ca, cb, b.len()), "cut {cut}");
    }
    // Lengths past 4 GiB go through the table's upper entries.
    for n in [1u64 << 32, (1 << 40) + 12_345, u64::MAX] {
        let zeros_then = |crc: u32| crc_combine(crc, 0, crc_shift(n));
        // Shifting by n and then by 1 equals shifting by 1 and then by n.
        let x = 0xDEAD_BEEF;
        assert_eq!(
            crc_combine(zeros_then(x), 0, crc_shift(1)),
            zeros_then(crc_combine(x, 0, crc_shift(1)))
        );
    }
}

/// An aggregate cut from `data` at `cuts` (sorted, may repeat: empty
/// pieces), each piece from its own block or a slice of a shared one.
fn aggregate_of(data: &[u8], cuts: &[usize], shared: bool) -> Aggregate {
    let whole = Buf::from(data.to_vec());
    let mut a = Aggregate::new();
    let mut at = 0;
    for &c in cuts.iter().chain(std::iter::once(&data.len())) {
        let piece = if shared {
            whole.slice(at..c)
        } else {
            Buf::from(data[at..c].to_vec())
        };
        a.append_buf(piece);
        at = c;
    }
    a
}

proptest! {
    #![proptest_config(crate::test_support::proptest_config(256))]

    /// Every function's value for a randomly sliced aggregate (odd
    /// offsets, odd lengths, empty pieces, pieces of one block or of many)
    /// equals one pass over its bytes — the first time, and again when the
    /// values come from the cache.
    #[test]
    fn combined_values_equal_one_pass(
        data in proptest::collection::vec(any::<u8>(), 0..3000),
        mut cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..12),
        shared in any::<bool>(),
    ) {
        let mut cuts: Vec<usize> = cuts.drain(..).map(|i| i.index(data.len() + 1)).collect();
        cuts.sort_unstable();
        let a = aggregate_of(&data, &cuts, shared);
        prop_assert_eq!(a.copy_to_vec(), data.clone());
        let sums = Checksums::with_capacity(1024);
        for _ in 0..2 {
            prop_assert_eq!(sums.crc32c_aggregate(&a), Ok(crc32c::crc32c(&data)));
            prop_assert_eq!(sums.internet_checksum_aggregate(&a), Ok(naive_internet(&data)));
            prop_assert_eq!(
                sums.strong_hash_aggregate(&a),
                Ok(*blake3::hash(&data).as_bytes())
            );
        }
        let s = sums.stats();
        let slices = a.slice_count() as u64;
        prop_assert_eq!(s.crc32c.misses, slices);
        prop_assert_eq!(s.crc32c.hits, slices);
        prop_assert_eq!(s.internet.misses, slices);
        prop_assert_eq!(s.crc32c.bytes, data.len() as u64);
        prop_assert_eq!((s.strong.misses, s.strong.hits), (1, 1));
    }

    /// The running Internet sum over pieces equals the naive sum of their
    /// concatenation, whatever the pieces' lengths.
    #[test]
    fn ones_acc_folds_any_pieces(
        pieces in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..10),
    ) {
        let mut acc = OnesAcc::default();
        for p in &pieces {
            acc.push(ones_sum(p), p.len());
        }
        prop_assert_eq!(acc.checksum(), naive_internet(&pieces.concat()));
    }
}

/// IO-Lite's case: the same body sent again behind a new header has only
/// the header summed; the body's bytes are not read again.
#[test]
fn a_body_sent_again_behind_a_new_header_is_not_read_again() {
    let sums = Checksums::new();
    let body = Buf::from(pattern(64 * 1024, 1));
    let response = |header: &'static [u8]| {
        let mut a = Aggregate::from(Buf::from_static(header));
        a.append_buf(body.clone());
        a
    };
    let first = response(b"HTTP/1.1 200 OK\r\nDate: 1\r\n\r\n");
    let again = response(b"HTTP/1.1 200 OK\r\nDate: 22\r\n\r\n"); // odd length
    sums.crc32c_aggregate(&first).unwrap();
    sums.internet_checksum_aggregate(&first).unwrap();
    let before = sums.stats();
    assert_eq!(before.crc32c.bytes, first.len() as u64);
    let crc = sums.crc32c_aggregate(&again).unwrap();
    let inet = sums.internet_checksum_aggregate(&again).unwrap();
    let after = sums.stats();
    let header = (again.len() - body.len()) as u64;
    assert_eq!(after.crc32c.bytes - before.crc32c.bytes, header);
    assert_eq!(after.internet.bytes - before.internet.bytes, header);
    assert_eq!(after.crc32c.hits - before.crc32c.hits, 1, "the body");
    assert_eq!(crc, crc32c::crc32c(&again.copy_to_vec()));
    assert_eq!(inet, naive_internet(&again.copy_to_vec()));
}

#[test]
fn a_second_lookup_of_a_buf_is_a_hit_for_every_function() {
    let sums = Checksums::new();
    let b = Buf::from(pattern(65_536, 2));
    let clone = b.clone();
    let values = (
        sums.crc32c(&b).unwrap(),
        sums.internet_checksum(&b).unwrap(),
        sums.strong_hash(&b).unwrap(),
    );
    let again = (
        sums.crc32c(&clone).unwrap(),
        sums.internet_checksum(&clone).unwrap(),
        sums.strong_hash(&clone).unwrap(),
    );
    assert_eq!(values, again);
    let s = sums.stats();
    for f in [s.crc32c, s.internet, s.strong] {
        assert_eq!((f.hits, f.misses, f.bytes), (1, 1, 65_536));
    }
    // A slice is other bytes: its own id, its own entry.
    sums.crc32c(&b.slice(1..)).unwrap();
    assert_eq!(sums.stats().crc32c.misses, 2);
}

/// A block taken back for writing moves to a new generation: the old
/// entry is not served for the new bytes.
#[test]
fn bytes_rewritten_in_the_same_block_are_summed_afresh() {
    let sums = Checksums::new();
    let b = Buf::from(vec![1u8; 100]);
    let old = sums.crc32c(&b).unwrap();
    let mut m = b.try_into_mut().expect("unique");
    m[0] = 2;
    let b = m.freeze();
    let new = sums.crc32c(&b).unwrap();
    assert_ne!(old, new);
    assert_eq!(new, crc32c::crc32c(&b));
    assert_eq!(sums.stats().crc32c.hits, 0);
}

#[test]
fn an_etag_is_the_same_for_the_same_bytes_however_sliced() {
    let sums = Checksums::new();
    let body = Buf::from(pattern(10_000, 4));
    let whole = sums.etag(&Aggregate::from(body.clone())).unwrap();
    let pieces: Aggregate = [body.slice(..1), body.slice(1..5000), body.slice(5000..)]
        .into_iter()
        .collect();
    assert_eq!(sums.etag(&pieces).unwrap(), whole);
    assert_eq!(sums.stats().strong.hits, 1, "the pieces joined to one key");
    // The same bytes in another block: same tag, computed again.
    let copy = Aggregate::from(Buf::from(body.to_vec()));
    assert_eq!(sums.etag(&copy).unwrap(), whole);
    assert_eq!(sums.stats().strong.misses, 2);
    assert_eq!(whole.len(), 34);
}

/// Buffers come and go by the thousand; the cache keeps no more than its
/// cap, and the entries of the dead ones are the ones that go.
#[test]
fn entries_of_dead_buffers_do_not_pile_up_past_the_cap() {
    let cap = 512;
    let sums = Checksums::with_capacity(cap);
    let kept = Buf::from(pattern(1000, 5));
    for i in 0..20_000 {
        let b = Buf::from(vec![i as u8; 16]);
        sums.crc32c(&b).unwrap();
        sums.internet_checksum(&b).unwrap();
        sums.strong_hash(&b).unwrap();
        if i % 64 == 0 {
            sums.crc32c(&kept).unwrap(); // asked for again and again
        }
    }
    assert!(
        sums.len() <= 3 * cap,
        "{} entries for a cap of {cap}",
        sums.len()
    );
    let hits = sums.stats().crc32c.hits;
    sums.crc32c(&kept).unwrap();
    assert_eq!(sums.stats().crc32c.hits, hits + 1, "the live one stayed");
}

/// A mapping whose file shrank reads as zeros where it lost pages; its
/// checksum, cached while it was intact, is never handed out again, and
/// nothing is computed from the zeros.
#[test]
fn a_buf_that_lost_bytes_gets_no_checksum() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("shrinks");
    std::fs::write(&p, pattern(64 * 1024, 6)).unwrap();
    let f = std::fs::File::open(&p).unwrap();
    // SAFETY: the test only shrinks the file, which the SIGBUS guard
    // covers; nobody writes it.
    let b = unsafe { Buf::map_file_unchecked(&f, 0..64 * 1024) }.unwrap();
    let sums = Checksums::new();
    let agg = Aggregate::concat([Aggregate::from(b.slice(..100)), Aggregate::from(b.clone())]);
    sums.crc32c(&b).unwrap();
    sums.internet_checksum_aggregate(&agg).unwrap();
    sums.strong_hash_aggregate(&agg).unwrap();
    let before = sums.stats();

    std::fs::OpenOptions::new()
        .write(true)
        .open(&p)
        .unwrap()
        .set_len(4096)
        .unwrap();
    assert_eq!(b[b.len() - 1], 0, "the lost page reads as zeros");
    assert!(!b.is_intact());

    assert_eq!(sums.crc32c(&b), Err(Damaged));
    assert_eq!(sums.internet_checksum(&b), Err(Damaged));
    assert_eq!(sums.strong_hash(&b), Err(Damaged));
    assert_eq!(sums.crc32c_aggregate(&agg), Err(Damaged));
    assert_eq!(sums.internet_checksum_aggregate(&agg), Err(Damaged));
    assert_eq!(sums.etag(&agg), Err(Damaged));
    let after = sums.stats();
    assert_eq!(after.damaged - before.damaged, 6);
    assert_eq!(
        after.crc32c, before.crc32c,
        "no hit served, nothing computed"
    );
    assert_eq!(after.internet, before.internet);
    assert_eq!(after.strong, before.strong);
    let e: std::io::Error = Damaged.into();
    assert!(e.to_string().contains("lost bytes"), "{e}");
}

/// A leased mapping whose file was emptied without breaking the lease (a
/// read-only `O_TRUNC` open, which Linux allows anyone who may write the
/// file): its id still looks intact, and only asking the file finds the
/// loss. Without the cache asking `is_intact()` on a hit, the CRC cached
/// for the lost bytes would be handed out as the zeros' CRC.
#[test]
fn a_leased_buf_emptied_behind_the_lease_gets_no_cached_checksum() {
    use rustix::fs::{Mode, OFlags};
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("emptied");
    std::fs::write(&p, pattern(3 * 4096, 7)).unwrap();
    let f = std::fs::File::open(&p).unwrap();
    let b = Buf::map_file(&f, 0..3 * 4096).unwrap();
    let sums = Checksums::new();
    let crc = sums.crc32c(&b).unwrap();
    let tag = sums.strong_hash(&b).unwrap();
    assert_eq!(sums.crc32c(&b), Ok(crc), "a hit while intact");
    let id = b.content_id();

    let emptied = rustix::fs::open(
        &p,
        OFlags::RDONLY | OFlags::TRUNC | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    drop(emptied);
    assert_eq!(std::fs::metadata(&p).unwrap().len(), 0);
    assert_eq!(b.content_id(), id, "nothing noticed yet");

    assert_eq!(sums.crc32c(&b), Err(Damaged));
    assert_eq!(sums.strong_hash(&b), Err(Damaged));
    assert_ne!(sums.strong_hash(&b), Ok(tag));
    let s = sums.stats();
    assert_eq!((s.crc32c.hits, s.crc32c.misses), (1, 1));
    assert_eq!(s.damaged, 3);
}

/// Server threads share one cache: every value they get is right, and
/// every lookup is counted once, as a hit or a computation.
#[test]
fn threads_sharing_the_cache_get_the_right_values() {
    const THREADS: usize = 4;
    const ROUNDS: usize = 200;
    let sums = Arc::new(Checksums::with_capacity(4096));
    let bufs: Arc<Vec<(Buf, u32, u16)>> = Arc::new(
        (0..32)
            .map(|i| {
                let b = Buf::from(pattern(1000 + i, i as u8));
                let (crc, inet) = (crc32c::crc32c(&b), naive_internet(&b));
                (b, crc, inet)
            })
            .collect(),
    );
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let (sums, bufs) = (Arc::clone(&sums), Arc::clone(&bufs));
            std::thread::spawn(move || {
                for r in 0..ROUNDS {
                    let (b, crc, inet) = &bufs[(r * 7 + t) % bufs.len()];
                    assert_eq!(sums.crc32c(b), Ok(*crc));
                    assert_eq!(sums.internet_checksum(b), Ok(*inet));
                    let a: Aggregate = [b.slice(..1), b.slice(1..)].into_iter().collect();
                    assert_eq!(sums.crc32c_aggregate(&a), Ok(*crc));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let s = sums.stats();
    let lookups = (THREADS * ROUNDS) as u64;
    assert_eq!(s.crc32c.hits + s.crc32c.misses, 3 * lookups);
    assert_eq!(s.internet.hits + s.internet.misses, lookups);
    assert!(
        s.crc32c.misses >= 3 * 32,
        "each slice computed at least once"
    );
    assert!(s.crc32c.hits > s.crc32c.misses, "{s:?}");
}
