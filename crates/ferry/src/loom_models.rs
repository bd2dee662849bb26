//! loom models of the memory layer's synchronisation: block reference
//! counts and the pool (free lists, closing, waiting for a slot). Run with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p ferry --release --lib loom
//! ```
//!
//! loom runs each model under every interleaving (and every outcome the
//! memory orderings allow) of its threads. What it can see: data races on
//! its own `UnsafeCell`s (a happens-before edge missing from the reference
//! count shows up as one), deadlocks (a lost wakeup), leaked `Arc`s (a slot
//! or pool never freed) and the assertions below.

use crate::sync::atomic::{AtomicUsize, Ordering};
use crate::sync::Arc;
use crate::{Buf, Pool, PoolConfig};
use loom::cell::UnsafeCell;
use loom::thread;

/// A foreign owner whose drop writes what a reader read before letting go
/// of its `Buf`: the drop must happen after every such read.
struct Owner {
    bytes: Vec<u8>,
    seen: Arc<UnsafeCell<u64>>,
    drops: Arc<AtomicUsize>,
}

impl AsRef<[u8]> for Owner {
    fn as_ref(&self) -> &[u8] {
        &self.bytes
    }
}

impl Drop for Owner {
    fn drop(&mut self) {
        // A write racing with a reader's read is a loom error.
        self.seen.with_mut(|p| unsafe { *p = 0xdead });
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY (for the model): `seen` is only touched as the test describes;
// loom checks that those touches are ordered.
unsafe impl Send for Owner {}
unsafe impl Sync for Owner {}

#[test]
fn loom_the_last_drop_of_a_buf_comes_after_every_other_holders_reads() {
    loom::model(|| {
        let seen = Arc::new(UnsafeCell::new(7u64));
        let drops = Arc::new(AtomicUsize::new(0));
        let b = Buf::from_owner(Owner {
            bytes: vec![1, 2, 3],
            seen: seen.clone(),
            drops: drops.clone(),
        });
        let (b1, b2) = (b.clone(), b.slice(1..));
        drop(b);
        let seen2 = seen.clone();
        let t = thread::spawn(move || {
            // SAFETY (model): a read while this thread holds a reference.
            let v = seen2.with(|p| unsafe { *p });
            assert_eq!(v, 7);
            assert_eq!(&b2[..], &[2, 3]);
            drop(b2);
        });
        let v = seen.with(|p| unsafe { *p });
        assert_eq!(v, 7);
        drop(b1);
        t.join().unwrap();
        assert_eq!(drops.load(Ordering::Relaxed), 1, "freed exactly once");
    });
}

fn one_slot_pool() -> Pool {
    Pool::new(
        PoolConfig::default()
            .with_classes(vec![4096])
            .with_budget(4096)
            .with_shards(2),
    )
    .unwrap()
}

#[test]
fn loom_a_slot_freed_on_one_thread_is_allocated_on_another() {
    loom::model(|| {
        let pool = one_slot_pool();
        let mut m = pool.alloc(100).unwrap();
        m.extend_from_slice(b"hello");
        let b = m.freeze();
        let b2 = b.clone();
        let p2 = pool.clone();
        let t = thread::spawn(move || {
            assert_eq!(&b2[..], b"hello");
            drop(b2);
            // The budget holds one slot: this gets it only if it was freed.
            p2.alloc(10).map(|m| m.capacity())
        });
        drop(b);
        let got = t.join().unwrap();
        let s = pool.stats();
        assert!(s.reserved_bytes <= 4096, "budget overrun: {s:?}");
        match got {
            Ok(cap) => assert_eq!(cap, 4096),
            // The main thread's reference was still live when it asked.
            Err(_) => assert!(pool.alloc(10).is_ok(), "the slot never came back"),
        }
    });
}

#[test]
fn loom_closing_a_pool_while_a_slot_comes_back_frees_both_once() {
    loom::model(|| {
        let pool = one_slot_pool();
        let m = pool.alloc(1).unwrap();
        let t = thread::spawn(move || drop(m));
        drop(pool);
        t.join().unwrap();
        // loom fails the model if the pool's Arc (kept alive by the slot,
        // or the slot by the pool) leaked.
    });
}

#[test]
fn loom_a_waiter_is_woken_when_a_slot_comes_back() {
    loom::model(|| {
        let pool = one_slot_pool();
        let m = pool.alloc(1).unwrap();
        let p2 = pool.clone();
        let t = thread::spawn(move || {
            p2.alloc_timeout(1, std::time::Duration::from_secs(3600))
                .map(|m| m.capacity())
        });
        drop(m);
        assert_eq!(t.join().unwrap().unwrap(), 4096);
    });
}
