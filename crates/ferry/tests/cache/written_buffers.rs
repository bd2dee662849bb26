//! Buffers written through the cache: what the cache keeps of them, and
//! what it lets go.

use ferry::cache::{CacheConfig, FileCache};
use ferry::Buf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const E: usize = 4096;

fn cache() -> FileCache {
    FileCache::new(CacheConfig::default().with_budget(1 << 20).with_extent(E)).unwrap()
}

/// Bytes whose owner says when it is dropped.
struct Owner(Vec<u8>, Arc<AtomicBool>);

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        self.1.store(true, Ordering::SeqCst);
    }
}

/// One extent cut from a large buffer and written through the cache: the
/// cache used to keep that slice — and with it the whole block, 4 MiB
/// here, counted in its budget as 4 KiB — until the extent was evicted.
/// It now keeps a copy of the extent's bytes, so the block goes when the
/// caller drops its buffer, and the cache still serves the bytes written.
#[test]
fn a_small_slice_of_a_large_buffer_is_copied_so_the_buffer_can_go() {
    let (_d, p) = crate::support::file_with(&[0u8; 2 * E]);
    let c = cache();
    let dropped = Arc::new(AtomicBool::new(false));
    let big = Buf::from_owner(Owner(
        (0..4 << 20).map(|i| (i % 251) as u8).collect(),
        dropped.clone(),
    ));
    c.write(&p, E as u64, big.slice(E..2 * E)).unwrap();
    drop(big);
    assert!(
        dropped.load(Ordering::SeqCst),
        "the cache keeps the 4 MiB buffer alive for one extent of it"
    );
    let want: Vec<u8> = (E..2 * E).map(|i| (i % 251) as u8).collect();
    assert_eq!(c.read(&p, E as u64..).unwrap(), &want[..]);

    // The same with ferry's own memory: a `Vec` of 4 MiB.
    let big = Buf::from((0..4 << 20).map(|i| (i % 7) as u8).collect::<Vec<u8>>());
    c.write(&p, 0, big.slice(..E)).unwrap();
    let got = c.read(&p, ..E as u64).unwrap();
    assert_eq!(got, &big[..E]);
    assert!(
        got.bufs().all(|b| !b.shares_block_with(&big)),
        "the cache serves a slice of the 4 MiB block"
    );
}

/// A buffer that the written extents cover is cached as it is — no copy:
/// the next read, which finds the same bytes in the file, hands out the
/// caller's own block.
#[test]
fn a_buffer_the_written_extents_cover_is_cached_without_a_copy() {
    let (_d, p) = crate::support::file_with(&[0u8; 2 * E]);
    let c = cache();
    let data = Buf::from(vec![5u8; 2 * E]);
    c.write(&p, 0, data.clone()).unwrap();
    let got = c.read(&p, ..).unwrap();
    assert_eq!(got, &[5u8; 2 * E][..]);
    assert!(got.bufs().all(|b| b.shares_block_with(&data)));
}
