//! Pool tests (run under Miri too).

use super::*;
use crate::test_support::{iters, proptest_config};
use crate::{Buf, ContentId};
use proptest::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::mpsc;

fn small_pool(budget: usize) -> Pool {
    Pool::new(
        PoolConfig::default()
            .with_classes(vec![4096, 16384, 65536])
            .with_budget(budget),
    )
    .unwrap()
}

#[test]
fn classes_round_up_to_pages_and_pick_the_smallest_fit() {
    let page = crate::sys::page_size();
    let p = Pool::new(PoolConfig::default().with_classes(vec![100, page, 3 * page + 1])).unwrap();
    assert_eq!(p.classes(), &[page, 4 * page]);
    assert_eq!(p.class_size(0), Some(page));
    assert_eq!(p.class_size(page + 1), Some(4 * page));
    let b = p.alloc(page + 1).unwrap();
    assert_eq!(b.capacity(), 4 * page);
    assert_eq!(b.as_ptr() as usize % page, 0, "slots are page aligned");
    assert!(matches!(
        p.alloc(4 * page + 1),
        Err(PoolError::TooLarge { requested, largest }) if requested == 4 * page + 1 && largest == 4 * page
    ));
}

#[test]
fn bad_configs_are_errors() {
    for cfg in [
        PoolConfig::default().with_classes(vec![]),
        PoolConfig::default().with_classes(vec![0, 4096]),
        PoolConfig::default().with_budget(100),
        PoolConfig::default().with_classes(vec![usize::MAX]),
    ] {
        let e = Pool::new(cfg.clone()).expect_err("invalid config accepted");
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{cfg:?}: {e}");
    }
}

#[test]
fn slots_keep_their_memory_and_move_to_a_new_generation() {
    let p = small_pool(1 << 20);
    let mut a = p.alloc(100).unwrap();
    a.extend_from_slice(b"first");
    let ptr = a.as_ptr();
    let first = a.freeze();
    let id1 = first.content_id();
    assert!(first.is_pooled());
    drop(first);
    let b = p.alloc(100).unwrap();
    assert_eq!(b.as_ptr(), ptr, "a freed slot is reused, memory kept");
    let id2 = b.freeze().content_id();
    assert_eq!(id1.block, id2.block);
    assert!(id2.generation > id1.generation);
    let s = p.stats();
    assert_eq!((s.hits, s.misses), (1, 1));
    assert_eq!(s.free_slots, 1);
    assert_eq!(s.in_use_slots, 0);
}

#[test]
fn exhaustion_is_an_error_not_a_hang() {
    let p = small_pool(2 * 65536);
    let a = p.alloc(65536).unwrap();
    let b = p.alloc(65536).unwrap();
    let e = p.alloc(1).unwrap_err();
    assert!(matches!(e, PoolError::Exhausted { .. }), "{e}");
    assert!(e.to_string().contains("exhausted"), "{e}");
    let io: std::io::Error = e.into();
    assert_eq!(io.kind(), std::io::ErrorKind::OutOfMemory);
    let t0 = Instant::now();
    let e = p.alloc_timeout(1, Duration::from_millis(30)).unwrap_err();
    assert!(matches!(e, PoolError::Exhausted { .. }));
    assert!(
        t0.elapsed() >= Duration::from_millis(30),
        "gave up before the timeout"
    );
    let s = p.stats();
    assert_eq!(s.exhausted, 2);
    assert_eq!(s.waits, 1);
    drop((a, b));
}

#[test]
fn free_slots_of_other_classes_make_room() {
    let p = small_pool(65536);
    for _ in 0..2 {
        drop(p.alloc(16384).unwrap());
    }
    // Only one 16 KiB slot exists (reused); now a 64 KiB request needs it gone.
    let big = p
        .alloc(65536)
        .expect("free small slots should be released for a big one");
    assert_eq!(big.capacity(), 65536);
    assert_eq!(p.stats().reserved_bytes, 65536);
}

#[test]
fn alloc_timeout_wakes_when_a_slot_comes_back() {
    let p = small_pool(4096);
    let held = p.alloc(1).unwrap().freeze();
    let slice = held.slice(0..0);
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(10));
        drop(held);
        std::thread::sleep(Duration::from_millis(10));
        drop(slice); // the last reference: now the slot comes back
    });
    let got = p.alloc_timeout(1, Duration::from_secs(60));
    assert!(got.is_ok(), "{got:?}");
    t.join().unwrap();
}

#[test]
fn trim_releases_free_slots_only() {
    let p = small_pool(1 << 20);
    let keep = p.alloc(4096).unwrap();
    drop(p.alloc(16384).unwrap());
    drop(p.alloc(65536).unwrap());
    assert_eq!(p.trim(), 16384 + 65536);
    let s = p.stats();
    assert_eq!(
        (s.reserved_bytes, s.in_use_bytes, s.free_bytes),
        (4096, 4096, 0)
    );
    assert_eq!(s.high_water_bytes, 4096 + 16384 + 65536);
    drop(keep);
    assert_eq!(p.stats().free_slots, 1);
}

#[test]
fn slots_outlive_the_pool_handle() {
    let p = small_pool(1 << 20);
    let mut m = p.alloc(10).unwrap();
    m.extend_from_slice(b"still here");
    let b = m.freeze();
    drop(p);
    assert_eq!(b, *b"still here");
    drop(b); // frees the pool itself (Miri checks nothing leaks)
}

#[test]
fn global_pool_serves() {
    let b = Pool::global().alloc(70_000).unwrap();
    assert_eq!(b.capacity(), 131072);
}

#[test]
fn content_ids_never_repeat_under_heavy_reuse() {
    // Few slots, many allocations: every slot is reused many times. Some
    // buffers are kept alive (as slices) across later reuses, and must keep
    // their bytes.
    let p = Pool::new(
        PoolConfig::default()
            .with_classes(vec![4096, 8192])
            .with_budget(8 * 8192),
    )
    .unwrap();
    let mut seen: HashMap<ContentId, u64> = HashMap::new();
    let mut live: Vec<(Buf, Vec<u8>)> = Vec::new();
    let n = iters(20_000);
    let mut rng = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for i in 0..n {
        let len = (next() % 8000) as usize + 1;
        let mut m = match p.alloc(len) {
            Ok(m) => m,
            Err(_) => {
                live.clear();
                p.alloc(len).unwrap()
            }
        };
        let seed = next();
        let fill = len.min(64);
        for j in 0..fill {
            m.extend_from_slice(&[(seed >> (j % 8 * 8)) as u8 ^ j as u8]);
        }
        let b = m.freeze();
        let id = b.content_id();
        assert!(
            seen.insert(id, seed).is_none(),
            "content id {id:?} handed out twice (iteration {i})"
        );
        let sub = b.slice(1..fill.max(1));
        assert!(seen.insert(sub.content_id(), seed).is_none() || fill <= 1);
        if next() % 4 == 0 {
            live.push((sub.clone(), sub.to_vec()));
        }
        if live.len() > 4 {
            live.remove((next() % 5) as usize);
        }
        for (buf, bytes) in &live {
            assert_eq!(
                &buf[..],
                &bytes[..],
                "a held buffer changed under slot reuse"
            );
        }
    }
    assert!(p.stats().hits > p.stats().misses, "slots were not reused");
}

#[test]
fn threads_pass_buffers_and_no_slot_has_two_owners() {
    const THREADS: usize = 3;
    let budget = 24 * 16384;
    let p = small_pool(budget);
    let owners: Arc<Mutex<HashSet<usize>>> = Arc::default();
    let per = iters(4000);
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..THREADS)
        .map(|_| mpsc::sync_channel::<(Buf, u8)>(4))
        .unzip();
    std::thread::scope(|s| {
        for (t, rx) in rxs.into_iter().enumerate() {
            let (p, owners) = (p.clone(), owners.clone());
            let tx = txs[(t + 1) % THREADS].clone();
            s.spawn(move || {
                let check = |(b, pat): (Buf, u8)| {
                    assert!(b.iter().all(|&x| x == pat), "pattern damaged in transit");
                    assert!(owners.lock().unwrap().remove(&(b.as_ptr() as usize)));
                    drop(b);
                };
                for i in 0..per {
                    let len = 1 + (i * 7919 + t * 31) % 16384;
                    let mut m = match p.alloc(len) {
                        Ok(m) => m,
                        Err(PoolError::Exhausted { .. }) => {
                            // Drain what others sent us, then wait for room.
                            while let Ok(x) = rx.try_recv() {
                                check(x);
                            }
                            p.alloc_timeout(len, Duration::from_secs(120))
                                .expect("no slot came back")
                        }
                        Err(e) => panic!("{e}"),
                    };
                    assert!(
                        owners.lock().unwrap().insert(m.as_ptr() as usize),
                        "slot handed to two owners"
                    );
                    let pat = (i as u8) ^ (t as u8);
                    m.spare_capacity_mut()[..len].fill(pat);
                    m.commit(len);
                    let s = p.stats();
                    assert!(s.reserved_bytes <= budget, "budget overrun: {s:?}");
                    if let Err(mpsc::TrySendError::Full(x) | mpsc::TrySendError::Disconnected(x)) =
                        tx.try_send((m.freeze(), pat))
                    {
                        // The neighbour is busy (or done): check and free it here.
                        check(x);
                    }
                    while let Ok(x) = rx.try_recv() {
                        check(x);
                    }
                }
                drop(tx);
                while let Ok(x) = rx.recv_timeout(Duration::from_millis(200)) {
                    check(x);
                }
            });
        }
        drop(txs);
    });
    let s = p.stats();
    assert!(
        owners.lock().unwrap().is_empty(),
        "buffers still owned: {s:?}"
    );
    assert_eq!(s.in_use_slots, 0, "{s:?}");
    assert!(s.high_water_bytes <= budget);
}

#[derive(Debug, Clone)]
enum PoolOp {
    Alloc(usize),
    Freeze(usize),
    Drop(usize),
    Trim,
}

proptest! {
    #![proptest_config(proptest_config(128))]

    /// Random alloc / freeze / drop / trim against a model of what is held:
    /// the pool's counts agree, the budget holds, bytes stay put.
    #[test]
    fn pool_matches_model(ops in proptest::collection::vec(prop_oneof![
        4 => (1usize..70_000).prop_map(PoolOp::Alloc),
        2 => any::<usize>().prop_map(PoolOp::Freeze),
        3 => any::<usize>().prop_map(PoolOp::Drop),
        1 => Just(PoolOp::Trim),
    ], 0..40)) {
        let budget = 4 * 65536;
        let p = small_pool(budget);
        let mut held: Vec<(Result<BufMut, Buf>, u8, usize)> = Vec::new();
        let mut tag = 0u8;
        for op in ops {
            match op {
                PoolOp::Alloc(len) => {
                    let in_use: usize = held.iter().map(|h| h.2).sum();
                    let class = p.class_size(len);
                    match p.alloc(len) {
                        Ok(mut m) => {
                            tag = tag.wrapping_add(1);
                            let n = len.min(m.tail_room()).min(300);
                            m.spare_capacity_mut()[..n].fill(tag);
                            m.commit(n);
                            held.push((Ok(m), tag, class.unwrap()));
                        }
                        Err(PoolError::Exhausted { .. }) => {
                            prop_assert!(in_use + class.unwrap() > budget, "refused with room left");
                        }
                        Err(PoolError::TooLarge { .. }) => prop_assert!(class.is_none()),
                    }
                }
                PoolOp::Freeze(i) if !held.is_empty() => {
                    let i = i % held.len();
                    let (h, t, c) = held.swap_remove(i);
                    let b = match h { Ok(m) => m.freeze(), Err(b) => b };
                    held.push((Err(b), t, c));
                }
                PoolOp::Drop(i) if !held.is_empty() => { drop(held.swap_remove(i % held.len())); }
                PoolOp::Trim => { p.trim(); }
                _ => {}
            }
            for (h, t, _) in &held {
                let bytes: &[u8] = match h { Ok(m) => m, Err(b) => b };
                prop_assert!(bytes.iter().all(|x| x == t));
            }
            let s = p.stats();
            prop_assert_eq!(s.in_use_slots, held.len());
            prop_assert_eq!(s.in_use_bytes, held.iter().map(|h| h.2).sum::<usize>());
            prop_assert!(s.reserved_bytes <= budget);
            prop_assert_eq!(s.reserved_bytes, s.in_use_bytes + s.free_bytes);
        }
    }
}

#[test]
fn closing_the_pool_while_slots_come_back_frees_everything() {
    // Miri checks this one for leaks and use-after-free: the last handle
    // goes while one slot is free and others come back on another thread.
    for _ in 0..iters(200) {
        let p = small_pool(1 << 20);
        drop(p.alloc(100).unwrap());
        let held: Vec<Buf> = (0..4).map(|_| p.alloc(5000).unwrap().freeze()).collect();
        let t = std::thread::spawn(move || drop(held));
        drop(p);
        t.join().unwrap();
    }
}

/// A waiter that frees a larger free slot's budget to make its own must not
/// lock the wait lock it already holds (the loom model of a waiter found
/// that self-deadlock). Deterministic: budget for one 8 KiB slot; a 4 KiB
/// waiter wakes when the 8 KiB slot comes back and must release it.
#[test]
#[cfg_attr(miri, ignore = "waits on real time")]
fn a_waiter_that_releases_a_larger_slot_does_not_deadlock() {
    let pool = Pool::new(
        PoolConfig::default()
            .with_classes(vec![4096, 8192])
            .with_budget(8192),
    )
    .unwrap();
    let big = pool.alloc(8192).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let p2 = pool.clone();
    std::thread::spawn(move || {
        let got = p2.alloc_timeout(4096, std::time::Duration::from_secs(60));
        let _ = tx.send(got.map(|m| m.capacity()));
    });
    std::thread::sleep(std::time::Duration::from_millis(50));
    drop(big);
    match rx.recv_timeout(std::time::Duration::from_secs(20)) {
        Ok(got) => assert_eq!(got.unwrap(), 4096),
        Err(_) => panic!("the waiter deadlocked"),
    }
}

/// The permissions `/proc/self/maps` gives the page at `addr` (`"rw-p"`,
/// `"r--p"`, …).
#[cfg(not(miri))]
fn page_perms(addr: usize) -> String {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (range, perms) = (f.next().unwrap(), f.next().unwrap());
        let (a, b) = range.split_once('-').unwrap();
        let (a, b) = (
            usize::from_str_radix(a, 16).unwrap(),
            usize::from_str_radix(b, 16).unwrap(),
        );
        if (a..b).contains(&addr) {
            return perms.to_string();
        }
    }
    panic!("{addr:#x} is not mapped")
}

/// Protect mode (the exchange's debug mode): a slot is writable while a
/// `BufMut` holds it, read-only from its freeze until the pool hands it
/// out again (or `try_into_mut` takes it back), and every class works —
/// small ones too, which are the C allocator's outside protect mode.
/// Under Miri the `mprotect`s are skipped (Miri has none); the slot
/// bookkeeping around them still runs.
#[test]
fn protect_mode_seals_frozen_slots_and_unseals_them_on_reuse() {
    let p = Pool::new(
        PoolConfig::default()
            .with_classes(vec![4096, 65536, 131072])
            .with_budget(1 << 20)
            .with_protect(true),
    )
    .unwrap();
    for len in [1, 4096, 5000, 100_000] {
        let mut m = p.alloc(len).unwrap();
        let at = m.as_ptr() as usize;
        let cap = m.capacity();
        m.extend_from_slice(&vec![7u8; len]);
        #[cfg(not(miri))]
        assert_eq!(page_perms(at), "rw-p", "{len}: a held slot is writable");
        let b = m.freeze();
        #[cfg(not(miri))]
        {
            assert_eq!(page_perms(at), "r--p", "{len}: frozen is read-only");
            assert_eq!(page_perms(at + cap - 1), "r--p", "{len}: to its last page");
        }
        assert!(b.iter().all(|&x| x == 7));
        // Taken back while unique: writable again, same memory.
        let mut m = b.try_into_mut().expect("unique");
        assert_eq!(m.as_ptr() as usize, at);
        m[0] = 1;
        let b = m.freeze();
        drop(b); // back to the pool, still read-only
        #[cfg(not(miri))]
        assert_eq!(page_perms(at), "r--p", "{len}: a free slot stays sealed");
        let mut again = p.alloc(len).unwrap();
        assert_eq!(again.as_ptr() as usize, at, "{len}: the slot is reused");
        again.extend_from_slice(b"written again");
        #[cfg(not(miri))]
        assert_eq!(page_perms(at), "rw-p", "{len}: handed out anew is writable");
        assert_eq!(cap, again.capacity());
    }
    // Slots released read-only (trim, closing the pool) are unmapped
    // cleanly, whatever their protection.
    let sealed: Vec<Buf> = (0..3).map(|_| p.alloc(10).unwrap().freeze()).collect();
    drop(sealed);
    assert!(p.trim() > 0);
    let held = p.alloc(70_000).unwrap().freeze();
    drop(p);
    drop(held);
}
