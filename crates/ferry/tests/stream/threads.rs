//! Threads share one stream: write regions freed in scrambled order land in
//! allocation order; read regions from several threads tile the file.

use ferry::{OpenOptions, SharedStream, Stream};

const MAGIC: u32 = 0xF00D_CAFE;

/// A record: magic, thread, sequence, payload length, then the payload.
fn record(tid: u32, seq: u32, len: usize) -> Vec<u8> {
    let mut r = Vec::with_capacity(16 + len);
    for v in [MAGIC, tid, seq, len as u32] {
        r.extend_from_slice(&v.to_le_bytes());
    }
    r.extend((0..len).map(|i| (tid as usize * 31 + seq as usize * 7 + i) as u8));
    r
}

#[test]
fn scrambled_frees_land_in_allocation_order() {
    const THREADS: u32 = 4;
    const PER: u32 = 3000;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("log");
    let s = SharedStream::new(
        Stream::open(&p, &OpenOptions::write_truncate().buffer_size(8192)).unwrap(),
    );
    std::thread::scope(|sc| {
        for tid in 0..THREADS {
            let s = &s;
            sc.spawn(move || {
                let mut held = Vec::new();
                let mut x = 0x9E37_79B9u32 ^ tid;
                for seq in 0..PER {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    let rec = record(tid, seq, (x % 300) as usize);
                    let mut r = s.salloc_mut(rec.len()).unwrap();
                    r.copy_from_slice(&rec);
                    held.push(r);
                    // Free a random held region now and then, and all of
                    // them sometimes: completion order is scrambled.
                    if x.is_multiple_of(3) && !held.is_empty() {
                        let i = (x as usize / 3) % held.len();
                        held.swap_remove(i).free().unwrap();
                    }
                    if x.is_multiple_of(17) {
                        while let Some(r) = held.pop() {
                            r.free().unwrap();
                        }
                    }
                }
            });
        }
    });
    s.close().unwrap();
    let data = std::fs::read(&p).unwrap();
    let mut next = vec![0u32; THREADS as usize];
    let mut at = 0;
    let mut count = 0;
    while at < data.len() {
        let word =
            |k: usize| u32::from_le_bytes(data[at + 4 * k..at + 4 * k + 4].try_into().unwrap());
        assert_eq!(word(0), MAGIC, "record {count} at byte {at} is damaged");
        let (tid, seq, len) = (word(1), word(2), word(3) as usize);
        assert_eq!(
            &data[at..at + 16 + len],
            &record(tid, seq, len)[..],
            "record {count} damaged"
        );
        assert_eq!(
            seq, next[tid as usize],
            "thread {tid}'s records out of allocation order"
        );
        next[tid as usize] += 1;
        at += 16 + len;
        count += 1;
    }
    assert_eq!(count, THREADS * PER);
}

#[test]
fn readers_on_several_threads_tile_the_file() {
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 % 253) as u8).collect();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("in");
    std::fs::write(&p, &data).unwrap();
    let s = SharedStream::new(Stream::open(&p, &OpenOptions::read_only()).unwrap());
    let pieces: Vec<Vec<(u64, ferry::Buf)>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..3)
            .map(|t| {
                let s = &s;
                sc.spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        let r = s.salloc(1000 + t * 777).unwrap();
                        if r.is_empty() {
                            return got;
                        }
                        got.push((r.offset(), r.into_buf()));
                    }
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut all: Vec<(u64, ferry::Buf)> = pieces.into_iter().flatten().collect();
    all.sort_by_key(|p| p.0);
    let mut at = 0u64;
    for (off, b) in &all {
        assert_eq!(*off, at, "gap or overlap");
        assert_eq!(&b[..], &data[at as usize..at as usize + b.len()]);
        at += b.len() as u64;
    }
    assert_eq!(at as usize, data.len());
}

/// The use-after-free, on a mapped 8 MiB file: a guard lends the
/// current window, and a call on the same thread that would have retired it
/// (with the old re-entrant lock: a segmentation fault) now fails with
/// `WouldBlock`; the lent bytes stay readable and right. Meanwhile another
/// thread's call waits for the guard instead of slipping in.
#[test]
fn a_guards_borrow_survives_calls_from_its_own_and_other_threads() {
    use std::io::{ErrorKind, Read};
    let data: Vec<u8> = (0..8u32 << 20).map(|i| (i % 251) as u8).collect();
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("8m");
    std::fs::write(&p, &data).unwrap();
    let s = Stream::open(&p, &OpenOptions::read_only()).unwrap();
    assert!(s.is_mapped());
    let s = SharedStream::new(s);
    std::thread::scope(|sc| {
        let mut g = s.lock();
        let b = g.fill_buf_min(4096).unwrap();
        let other = sc.spawn(|| s.salloc(100).map(|r| r.offset()));
        assert_eq!(
            s.salloc(usize::MAX / 2).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        assert_eq!(
            (&s).read(&mut [0; 16]).unwrap_err().kind(),
            ErrorKind::WouldBlock
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            !other.is_finished(),
            "another thread got in under the guard"
        );
        assert_eq!(&b[..8], &data[..8]);
        assert_eq!(b, &data[..b.len()]);
        drop(g);
        // The guard consumed nothing: the other thread's region starts at 0.
        assert_eq!(other.join().unwrap().unwrap(), 0);
    });
}
