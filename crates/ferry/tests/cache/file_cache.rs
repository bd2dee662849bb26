//! The unified file cache with real files changed by real processes
//! (`dd`, `truncate`, `mv`, `touch`, `sh`): it never serves bytes the file
//! no longer holds, readers keep the bytes they were handed, writes
//! replace buffers, memory stays within the budget, threads share it.

use ferry::cache::{CacheConfig, FileCache, Fill};
use ferry::{Aggregate, Buf};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support;

/// Settle time used here: far above the file-time clock's tick (≤ 10 ms)
/// and short enough to wait out.
const SETTLE: Duration = Duration::from_millis(50);

fn cache(budget: usize, extent: usize) -> FileCache {
    FileCache::new(
        CacheConfig::default()
            .with_budget(budget)
            .with_extent(extent)
            .with_settle(SETTLE),
    )
    .unwrap()
}

/// A file holding `data`, its last change older than the settle time, so
/// that what is read of it is cached.
fn settled_file(data: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, data).unwrap();
    std::thread::sleep(SETTLE * 2);
    (dir, p)
}

fn sh(script: &str, path: &Path) {
    let st = Command::new("sh")
        .args(["-c", script, "sh"])
        .arg(path)
        .status()
        .unwrap();
    assert!(st.success(), "{script}");
}

fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8 ^ seed).collect()
}

/// Reads everything twice; the second read must be a hit on the same
/// buffers (same ContentIds).
fn read_cached(c: &FileCache, p: &Path) -> Aggregate {
    let a = c.read(p, ..).unwrap();
    let hits = c.stats().hits;
    let b = c.read(p, ..).unwrap();
    assert!(c.stats().hits > hits, "the second read should hit");
    let ids = |x: &Aggregate| x.bufs().map(|b| b.content_id()).collect::<Vec<_>>();
    assert_eq!(ids(&a), ids(&b));
    a
}

/// `dd conv=notrunc` rewrites bytes in place, same size: the next read
/// sees them, and a reader of the old bytes keeps those.
#[test]
fn rewrite_in_place_by_dd_is_seen_and_old_readers_keep_their_bytes() {
    let (_d, p) = settled_file(&pattern(100_000, 0));
    let c = cache(1 << 20, 16 << 10);
    let old = read_cached(&c, &p);
    sh(
        "printf XYZ | dd of=\"$1\" bs=1 seek=40000 conv=notrunc status=none",
        &p,
    );
    let mut want = pattern(100_000, 0);
    want[40_000..40_003].copy_from_slice(b"XYZ");
    assert_eq!(c.read(&p, ..).unwrap(), &want[..]);
    assert_eq!(old, &pattern(100_000, 0)[..]);
}

/// A file truncated behind the cache reads as its new, shorter self.
#[test]
fn truncate_behind_the_cache_is_seen() {
    let (_d, p) = settled_file(&pattern(50_000, 1));
    let c = cache(1 << 20, 16 << 10);
    let old = read_cached(&c, &p);
    sh("truncate -s 20000 \"$1\"", &p);
    assert_eq!(c.read(&p, ..).unwrap(), &pattern(20_000, 1)[..]);
    assert!(c.read(&p, 30_000..).unwrap().is_empty());
    assert_eq!(old, &pattern(50_000, 1)[..]);
}

/// Another file renamed over the path is another inode: its bytes are
/// read, not the old file's.
#[test]
fn a_file_renamed_over_the_path_is_another_file() {
    let (d, p) = settled_file(&pattern(30_000, 2));
    let c = cache(1 << 20, 16 << 10);
    read_cached(&c, &p);
    let q = d.path().join("g");
    std::fs::write(&q, pattern(30_000, 3)).unwrap();
    let st = Command::new("mv").arg(&q).arg(&p).status().unwrap();
    assert!(st.success());
    assert_eq!(c.read(&p, ..).unwrap(), &pattern(30_000, 3)[..]);
}

/// Bytes appended by another process are read; the old ones still come
/// from the cache's buffers where their extent did not change... or are
/// read again: either way, the bytes are the file's.
#[test]
fn an_append_behind_the_cache_is_seen() {
    let (_d, p) = settled_file(b"0123456789");
    let c = cache(1 << 20, 16 << 10);
    read_cached(&c, &p);
    sh("printf abc >> \"$1\"", &p);
    assert_eq!(c.read(&p, ..).unwrap(), &b"0123456789abc"[..]);
    assert_eq!(c.read(&p, 8..).unwrap(), &b"89abc"[..]);
}

/// A writer that keeps the size and puts `mtime` back (`touch -d`) still
/// moves `ctime`, which no one can set: the change is seen.
#[test]
fn a_writer_that_restores_size_and_mtime_is_seen() {
    let (_d, p) = settled_file(&pattern(8192, 4));
    let c = cache(1 << 20, 16 << 10);
    read_cached(&c, &p);
    sh(
        "m=$(stat -c %y \"$1\"); printf Q | dd of=\"$1\" bs=1 seek=100 conv=notrunc status=none; \
         touch -d \"$m\" \"$1\"",
        &p,
    );
    let mut want = pattern(8192, 4);
    want[100] = b'Q';
    assert_eq!(c.read(&p, ..).unwrap(), &want[..]);
}

/// Bytes read from a file changed within the settle time are not served
/// again without reading the file: a write in the same clock tick as the
/// read (same size, same times) would otherwise go unseen.
#[test]
fn a_file_changed_just_now_is_read_anew_every_time() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("f");
    std::fs::write(&p, b"aaaa").unwrap();
    let c = FileCache::new(CacheConfig::default().with_budget(1 << 20)).unwrap(); // settle 1 s
    assert_eq!(c.read(&p, ..).unwrap(), &b"aaaa"[..]);
    std::fs::write(&p, b"bbbb").unwrap();
    assert_eq!(c.read(&p, ..).unwrap(), &b"bbbb"[..]);
    assert_eq!(c.read(&p, ..).unwrap(), &b"bbbb"[..]);
    let s = c.stats();
    assert_eq!((s.hits, s.misses), (0, 3));
}

/// `FileCache::write` writes through to the file and replaces the cached
/// buffers of the extents it covers; a reader holding the old extent keeps
/// it, new readers see the new bytes, and once the file settles the
/// written buffer itself is what lookups hand out.
#[test]
fn write_through_the_cache_replaces_buffers_and_keeps_snapshots() {
    const X: usize = 16 << 10;
    let (_d, p) = settled_file(&pattern(4 * X, 5));
    let c = cache(1 << 20, X);
    let old = read_cached(&c, &p);
    let new = Buf::from(vec![b'N'; X]);
    let new_id = new.content_id();
    c.write(&p, X as u64, new).unwrap();
    let mut want = pattern(4 * X, 5);
    want[X..2 * X].fill(b'N');
    assert_eq!(std::fs::read(&p).unwrap(), want);
    assert_eq!(old, &pattern(4 * X, 5)[..]);
    assert_eq!(c.read(&p, ..).unwrap(), &want[..]);
    std::thread::sleep(SETTLE * 2);
    let a = c.read(&p, X as u64..2 * X as u64).unwrap();
    assert_eq!(a, &want[X..2 * X]);
    assert_eq!(a.bufs().next().unwrap().content_id(), new_id);
    let b = read_cached(&c, &p);
    assert_eq!(b, &want[..]);
    // A write that covers extents only in part, and one that grows the file.
    c.write(&p, 5, Buf::from_static(b"part")).unwrap();
    c.write(&p, 4 * X as u64, Buf::from_static(b"tail"))
        .unwrap();
    want[5..9].copy_from_slice(b"part");
    want.extend_from_slice(b"tail");
    assert_eq!(c.read(&p, ..).unwrap(), &want[..]);
    assert_eq!(std::fs::read(&p).unwrap(), want);
}

/// The budget bounds every byte the cache filled that is alive: a file
/// four times the budget is served whole, the extents past the budget
/// uncached, and what the cache holds never passes the budget.
#[test]
fn a_file_larger_than_the_budget_is_served_within_it() {
    const X: usize = 16 << 10;
    let (_d, p) = settled_file(&pattern(16 * X, 6));
    let c = cache(4 * X, X);
    let all = c.read(&p, ..).unwrap();
    assert_eq!(all, &pattern(16 * X, 6)[..]);
    let s = c.stats();
    assert!(s.bytes_held <= s.budget, "{s:?}");
    assert!(s.uncached_bytes >= 12 * X as u64, "{s:?}");
    assert_eq!(s.bytes_shared, s.bytes_held, "{s:?}");
    drop(all);
    for i in 0..16u64 {
        let r = c.read(&p, i * X as u64..(i + 1) * X as u64).unwrap();
        assert_eq!(r, &pattern(16 * X, 6)[i as usize * X..(i as usize + 1) * X]);
        let s = c.stats();
        assert!(s.bytes_held <= s.budget, "{s:?}");
    }
    let s = c.stats();
    assert!(s.evictions > 0 && s.entries <= 4, "{s:?}");
}

/// Errors name the file: missing, a directory, a FIFO (refused without
/// waiting for a writer to open it).
#[test]
fn errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let c = cache(1 << 20, 16 << 10);
    let missing = dir.path().join("no-such-file");
    let e = c.read(&missing, ..).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    assert!(e.to_string().contains("no-such-file"), "{e}");
    let e = c.write(&missing, 0, Buf::from_static(b"x")).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
    assert!(e.to_string().contains("no-such-file"), "{e}");
    let e = c.read(dir.path(), ..).unwrap_err();
    assert!(
        e.to_string().contains(&*dir.path().to_string_lossy()),
        "{e}"
    );
    // A FIFO is refused at once, not waited on for a writer.
    let fifo = dir.path().join("fifo");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let e = c.read(&fifo, ..).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("fifo: not a regular file"), "{e}");
    let e = c.write(&fifo, 0, Buf::from_static(b"x")).unwrap_err();
    assert!(e.to_string().contains("fifo"), "{e}");
}

/// With leased mapped fills, a writer from another process is held back
/// until the cached windows are copied aside: the old reader keeps its
/// bytes, new readers see the writer's; and a write through the cache
/// itself waits for its own lease instead of failing.
#[test]
fn mapped_fills_keep_their_bytes_under_another_process_writing() {
    let (_d, p) = settled_file(&pattern(64 << 10, 7));
    let c = FileCache::new(
        CacheConfig::default()
            .with_budget(1 << 20)
            .with_extent(16 << 10)
            .with_settle(SETTLE)
            .with_fill(Fill::Map),
    )
    .unwrap();
    let old = read_cached(&c, &p);
    sh(
        "printf ZZZZ | dd of=\"$1\" bs=1 seek=20000 conv=notrunc status=none",
        &p,
    );
    let mut want = pattern(64 << 10, 7);
    want[20_000..20_004].copy_from_slice(b"ZZZZ");
    assert_eq!(c.read(&p, ..).unwrap(), &want[..]);
    assert_eq!(old, &pattern(64 << 10, 7)[..]);
    // A write through the cache while it holds leased windows of the file:
    // its own open for writing waits for the lease to be given up (a
    // non-blocking open would fail with EWOULDBLOCK).
    let held = c.read(&p, ..).unwrap();
    let before = want.clone();
    c.write(&p, 0, Buf::from_static(b"first")).unwrap();
    want[..5].copy_from_slice(b"first");
    assert_eq!(c.read(&p, ..).unwrap(), &want[..]);
    assert_eq!(held, &before[..]);
}

/// What the lease does not cover: a read-only open with `O_TRUNC` empties
/// the file without breaking the lease. The cache sees it (the size is in
/// the stamp) and serves the empty file; readers still holding mapped
/// extents learn that they lost their bytes (`is_intact` false), and read
/// zeros, never other bytes.
#[test]
fn a_read_only_o_trunc_open_under_mapped_fills_is_seen_and_reported_lost() {
    let (_d, p) = settled_file(&pattern(32 << 10, 8));
    let c = FileCache::new(
        CacheConfig::default()
            .with_budget(1 << 20)
            .with_extent(16 << 10)
            .with_settle(SETTLE)
            .with_fill(Fill::Map),
    )
    .unwrap();
    let old = read_cached(&c, &p);
    support::child_opens_read_only_with_o_trunc(&p);
    assert!(c.read(&p, ..).unwrap().is_empty());
    // Intact: the bytes it was read with; lost: zeros, never other bytes.
    let orig = pattern(32 << 10, 8);
    let mut at = 0;
    for b in old.bufs() {
        if b.is_intact() {
            assert_eq!(&b[..], &orig[at..at + b.len()]);
        } else {
            assert!(b.iter().all(|&x| x == 0));
        }
        at += b.len();
    }
    assert_eq!(at, orig.len());
}

/// Threads reading many files through a small cache all get the files'
/// bytes, and the cache keeps within its budget.
#[test]
fn threads_share_a_small_cache() {
    const X: usize = 16 << 10;
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<PathBuf> = (0..8)
        .map(|i| {
            let p = dir.path().join(format!("f{i}"));
            std::fs::write(&p, pattern(3 * X + i * 100, i as u8)).unwrap();
            p
        })
        .collect();
    std::thread::sleep(SETTLE * 2);
    let c = cache(6 * X, X);
    std::thread::scope(|s| {
        for t in 0..4 {
            let (c, paths) = (&c, &paths);
            s.spawn(move || {
                for round in 0..50 {
                    let i = (t * 3 + round) % paths.len();
                    let a = c.read(&paths[i], ..).unwrap();
                    assert_eq!(a, &pattern(3 * X + i * 100, i as u8)[..]);
                    let st = c.stats();
                    assert!(st.bytes_held <= st.budget, "{st:?}");
                }
            });
        }
    });
    let s = c.stats();
    assert!(s.evictions > 0, "{s:?}");
    assert_eq!(s.bytes_shared, 0, "{s:?}");
}

/// Readers and a writer through the cache at once: nothing panics, the
/// budget holds, a read fails only because the file kept changing
/// (`ResourceBusy`: each of its attempts saw a write), and once the
/// writer is done every reader sees its last bytes.
#[test]
fn readers_and_a_writer_at_once_end_with_the_last_write() {
    const X: usize = 16 << 10;
    let (_d, p) = settled_file(&vec![0u8; 4 * X]);
    let c = cache(8 * X, X);
    std::thread::scope(|s| {
        for _ in 0..3 {
            let (c, p) = (&c, &p);
            s.spawn(move || {
                for _ in 0..100 {
                    match c.read(p, ..) {
                        Ok(a) => assert_eq!(a.len(), 4 * X),
                        Err(e) => {
                            assert_eq!(e.kind(), std::io::ErrorKind::ResourceBusy, "{e}")
                        }
                    }
                    let st = c.stats();
                    assert!(st.bytes_held <= st.budget, "{st:?}");
                }
            });
        }
        for v in 1..=20u8 {
            c.write(&p, 0, Buf::from(vec![v; 4 * X])).unwrap();
        }
    });
    assert_eq!(c.read(&p, ..).unwrap(), &vec![20u8; 4 * X][..]);
}

mod model {
    //! The cache over a real file against the file's bytes kept in a
    //! `Vec`: reads (some kept by readers), writes through the cache, and
    //! writes and truncations behind its back, in any order, with ranges
    //! anywhere in `u64`.

    use super::*;
    use proptest::prelude::*;
    use std::os::unix::fs::FileExt;

    #[derive(Clone, Debug)]
    enum Op {
        Read(u64, u64, bool),
        Write(u64, Vec<u8>),
        Behind(u64, Vec<u8>),
        SetLen(u64),
        Drop(usize),
        /// Wait out the settle time: what is read next is cached.
        Settle,
    }

    fn offset() -> impl Strategy<Value = u64> {
        prop_oneof![4 => 0u64..40_000, 1 => Just(u64::MAX), 1 => (u64::MAX - 10)..=u64::MAX]
    }

    fn op() -> impl Strategy<Value = Op> {
        let bytes = proptest::collection::vec(any::<u8>(), 1..9000);
        prop_oneof![
            5 => (offset(), offset(), any::<bool>()).prop_map(|(a, b, h)| Op::Read(a.min(b), a.max(b), h)),
            2 => (0u64..30_000, bytes.clone()).prop_map(|(o, b)| Op::Write(o, b)),
            2 => (0u64..30_000, bytes).prop_map(|(o, b)| Op::Behind(o, b)),
            1 => (0u64..40_000).prop_map(Op::SetLen),
            1 => any::<usize>().prop_map(Op::Drop),
            3 => Just(Op::Settle),
        ]
    }

    fn write_at(model: &mut Vec<u8>, off: u64, b: &[u8]) {
        let off = off as usize;
        if model.len() < off + b.len() {
            model.resize(off + b.len(), 0);
        }
        model[off..off + b.len()].copy_from_slice(b);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(32))]

        /// Every read is the file's bytes; every reader keeps its bytes;
        /// the cache keeps within its budget.
        #[test]
        fn reads_are_the_files_bytes_and_readers_keep_theirs(
            ops in proptest::collection::vec(op(), 1..40),
        ) {
            let dir = tempfile::tempdir().unwrap();
            let p = dir.path().join("f");
            let mut model = pattern(20_000, 9);
            std::fs::write(&p, &model).unwrap();
            let c = cache(8 << 12, 4096);
            let mut readers: Vec<(Aggregate, Vec<u8>)> = vec![];
            for op in ops {
                match op {
                    Op::Read(a, b, hold) => {
                        let got = c.read(&p, a..b).unwrap();
                        let len = model.len() as u64;
                        let want = &model[a.min(len) as usize..b.min(len) as usize];
                        prop_assert_eq!(got.copy_to_vec(), want.to_vec());
                        if hold {
                            readers.push((got, want.to_vec()));
                        }
                    }
                    Op::Write(o, b) => {
                        c.write(&p, o, Buf::from(b.clone())).unwrap();
                        write_at(&mut model, o, &b);
                    }
                    Op::Behind(o, b) => {
                        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
                        f.write_all_at(&b, o).unwrap();
                        write_at(&mut model, o, &b);
                    }
                    Op::SetLen(n) => {
                        let f = std::fs::OpenOptions::new().write(true).open(&p).unwrap();
                        f.set_len(n).unwrap();
                        model.resize(n as usize, 0);
                    }
                    Op::Settle => std::thread::sleep(SETTLE + SETTLE / 5),
                    Op::Drop(i) => {
                        if !readers.is_empty() {
                            let i = i % readers.len();
                            readers.remove(i);
                        }
                    }
                }
                for (a, bytes) in &readers {
                    prop_assert_eq!(&a.copy_to_vec(), bytes);
                }
                let s = c.stats();
                prop_assert!(s.bytes_held <= s.budget, "{:?}", s);
            }
        }
    }
}
