//! A file another thread rewrites without pause while the cache reads
//! it: every read the cache hands out is the file as it was at one
//! moment, or an error; never extents of two states side by side.

use ferry::cache::{CacheConfig, FileCache};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const E: usize = 4096;
/// Extents that never change, before the ones the writer rewrites: they
/// make each lookup long enough for the writer to come in its middle.
const FIXED: usize = 6;
/// Extents the writer rewrites, each generation with its own letter.
const CHANGING: usize = 2;

/// What the writer puts after the fixed extents in generation `g`: the
/// changing extents, then a tail whose length moves with `g` (1 to 4095
/// bytes), so that each rewrite leaves the file another size than the
/// one before — and than any it passes through while it is written.
fn generation(g: u64) -> Vec<u8> {
    let mut v = vec![b'a' + (g % 26) as u8; CHANGING * E];
    v.resize(CHANGING * E + 1 + (g % 4095) as usize, b'\n');
    v
}

/// A writer thread rewrites the end of a file in a tight loop while the
/// cache reads it again and again: each read handed out holds one
/// generation in every changing extent (errors — the file kept changing
/// — are allowed). The last of the cache's four attempts used to hand
/// out extents read while the file's stamp moved next to those read
/// before it: up to a few reads in 20 000 mixed two generations here
/// (how many depends on how the two threads are scheduled; the
/// deterministic check is the unit test
/// `a_file_changing_at_every_attempt_is_an_error_not_a_mix_of_two_states`).
///
/// The writer cuts the changing extents off, then writes the next
/// generation after the fixed ones (one `pwrite`): the kernel raises the
/// size only once the bytes below it are in place, so every size the
/// cache sees holds one generation. A writer that rewrote the bytes in
/// place would not do: a write moves the file's times before its bytes
/// land, and a read during it — `read(2)` itself, cache or not — can see
/// part of the old bytes and part of the new under times that no longer
/// move.
#[test]
fn reads_under_a_writer_rewriting_the_file_are_one_state_or_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    let mut first = vec![b'#'; FIXED * E];
    first.extend(generation(0));
    std::fs::write(&path, first).unwrap();
    let cache = FileCache::new(
        CacheConfig::default()
            .with_budget(1 << 20)
            .with_extent(E)
            .with_settle(Duration::from_millis(50)),
    )
    .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = std::thread::spawn({
        let (stop, path) = (stop.clone(), path.clone());
        move || {
            let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
            let mut g = 0;
            while !stop.load(Ordering::Relaxed) {
                g += 1;
                f.set_len((FIXED * E) as u64).unwrap();
                f.write_all_at(&generation(g), (FIXED * E) as u64).unwrap();
            }
            g
        }
    });
    let (mut whole, mut errors) = (0, 0);
    let mut mixed = vec![];
    for _ in 0..20_000 {
        match cache.read(&path, 0..((FIXED + CHANGING) * E) as u64) {
            Ok(a) => {
                let bytes = a.copy_to_vec();
                assert!(
                    bytes.len() >= FIXED * E,
                    "the file never ends before its fixed part"
                );
                assert!(bytes[..FIXED * E].iter().all(|&b| b == b'#'));
                let changing = &bytes[FIXED * E..];
                if changing.iter().all(|&b| b == changing[0]) {
                    whole += 1;
                } else {
                    mixed.push(changing.chunks(E).map(|c| c[0] as char).collect::<String>());
                }
            }
            Err(e) => {
                assert!(e.to_string().contains("f: the file"), "{e}");
                errors += 1;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    let rewrites = writer.join().unwrap();
    assert!(
        mixed.is_empty(),
        "{} reads mixed generations (first letters of their changing extents: {:?}); \
         {whole} whole, {errors} errors, {rewrites} rewrites",
        mixed.len(),
        &mixed[..mixed.len().min(5)]
    );
}
