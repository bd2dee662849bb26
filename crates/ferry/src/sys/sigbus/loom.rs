//! Model checks (loom) of the handshake between unregistering a mapping and
//! a handler looking it up, and of the index growing under a handler.
//!
//! loom cannot deliver signals, so the handler is modelled as a thread that
//! runs exactly what the handler runs: `enter`, `Index::lookup`, use what it
//! found, `leave`. `handshake.rs` and `index.rs` are compiled here a second
//! time against loom's atomics (the `sync` module below). Run with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p ferry --release --lib sigbus::loom
//! ```
#![allow(dead_code)]

mod sync {
    pub(super) use ::loom::sync::atomic::{fence, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

    pub(super) fn spin() {
        ::loom::thread::yield_now();
    }

    /// loom checks every `read` against `retire` for a missing
    /// happens-before, which is what a use after free would be.
    pub(super) struct Probe(::loom::cell::UnsafeCell<()>);

    impl Probe {
        pub(super) fn new() -> Probe {
            Probe(::loom::cell::UnsafeCell::new(()))
        }

        pub(super) fn read(&self) {
            self.0.with(|_| ());
        }

        pub(super) fn retire(&self) {
            self.0.with_mut(|_| ());
        }
    }
}

#[path = "handshake.rs"]
mod handshake;
#[path = "index.rs"]
mod index;

use ::loom::cell::UnsafeCell;
use ::loom::sync::atomic::{AtomicUsize, Ordering};
use ::loom::sync::Arc;
use ::loom::thread;
use handshake::Handshake;
use index::{Index, Writer};

const PAGE: usize = 4096;

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = ::loom::model::Builder::new();
    if b.preemption_bound.is_none() {
        b.preemption_bound = Some(3);
    }
    b.check(f);
}

struct Shared {
    index: Index,
    hs: Handshake,
    /// The mapping's memory: the handler writes zero pages into it, the
    /// writer unmaps it (and the address may be reused) after unregistering.
    mapping: UnsafeCell<u8>,
}

/// The handler's side: what `handler::zero_fill` does.
fn handler(s: &Shared, addr: usize) -> bool {
    s.hs.enter();
    let hit = s.index.lookup(addr, |v| v == 1);
    if hit.is_some() {
        // SAFETY (model): loom checks this write against the writer's.
        s.mapping.with_mut(|p| unsafe { *p = 0 });
    }
    s.hs.leave();
    hit.is_some()
}

#[test]
fn unregister_never_unmaps_under_a_handler() {
    model(|| {
        let s = Arc::new(Shared {
            index: Index::new(),
            hs: Handshake::new(),
            mapping: UnsafeCell::new(7),
        });
        let mut w = Writer::new();
        let (start, end) = (16 * PAGE, 18 * PAGE);
        s.index.insert(&mut w, &s.hs, start, end, 1);
        let h = {
            let s = s.clone();
            thread::spawn(move || handler(&s, start + PAGE))
        };
        s.index.remove(&mut w, &s.hs, start, end, 1);
        // munmap, and another mapping at the same address.
        // SAFETY (model): loom checks this write against the handler's.
        s.mapping.with_mut(|p| unsafe { *p = 9 });
        h.join().unwrap();
    });
}

#[test]
fn a_growing_index_frees_its_old_table_only_after_the_handler_left() {
    model(|| {
        let s = Arc::new(Shared {
            index: Index::new(),
            hs: Handshake::new(),
            mapping: UnsafeCell::new(7),
        });
        let mut w = Writer::new();
        // Eight one-page mappings fill the first 16-position table to the
        // brim (at most half used); the ninth makes the writer build a
        // bigger one and free this one.
        for i in 0..8 {
            let a = (64 + 2 * i) * PAGE;
            s.index.insert(&mut w, &s.hs, a, a + PAGE, 1 + i);
        }
        let h = {
            let s = s.clone();
            thread::spawn(move || {
                s.hs.enter();
                let found = s.index.lookup(64 * PAGE, |v| v == 1);
                s.hs.leave();
                assert_eq!(found, Some(1), "a filed mapping is always found");
            })
        };
        let a = 200 * PAGE;
        s.index.insert(&mut w, &s.hs, a, a + PAGE, 99);
        h.join().unwrap();
    });
}

#[test]
fn a_neighbour_unmapped_and_mapped_again_neither_hides_a_mapping_nor_is_read_freed() {
    // Two-page mappings (size class 8 KiB) that share the granule `g`:
    // B = [g - 4K, g + 4K) and A = [g + 4K, g + 12K) are both filed under
    // g's key, B first. The writer unregisters B (frees its entry) and
    // registers C at the same address (a new mapping where B was), which
    // takes B's old position; meanwhile the handler looks up an address of
    // A in granule g, reading each candidate's entry as the real handler
    // does (B's or C's may come first).
    const FREED: u8 = 0xff;
    model(|| {
        let s = Arc::new(Shared {
            index: Index::new(),
            hs: Handshake::new(),
            mapping: UnsafeCell::new(7),
        });
        let entries: Arc<[UnsafeCell<u8>; 4]> =
            Arc::new(std::array::from_fn(|_| UnsafeCell::new(0)));
        let g = 1usize << 30;
        let (b, a) = ((g - PAGE, g + PAGE), (g + PAGE, g + 3 * PAGE));
        let mut w = Writer::new();
        s.index.insert(&mut w, &s.hs, b.0, b.1, 2);
        s.index.insert(&mut w, &s.hs, a.0, a.1, 1);
        let h = {
            let (s, entries) = (s.clone(), entries.clone());
            thread::spawn(move || {
                s.hs.enter();
                let found = s.index.lookup(g + PAGE + 8, |v| {
                    // SAFETY (model): loom checks this read against the free.
                    let e = entries[v].with(|p| unsafe { *p });
                    assert_ne!(e, FREED, "the handler read a freed entry");
                    v == 1
                });
                s.hs.leave();
                assert_eq!(found, Some(1), "A is found whatever its neighbour does");
            })
        };
        s.index.remove(&mut w, &s.hs, b.0, b.1, 2);
        // SAFETY (model): loom checks this write against the handler's read.
        entries[2].with_mut(|p| unsafe { *p = FREED });
        s.index.insert(&mut w, &s.hs, b.0, b.1, 3);
        h.join().unwrap();
    });
}

/// The protocol this guard had before: acquire/release only. loom finds the
/// store→load reordering that lets both sides miss each other, which is
/// what the fences in `handshake.rs` rule out.
#[test]
#[should_panic]
fn the_old_acquire_release_handshake_lets_unmap_race_the_handler() {
    model(|| {
        let active = Arc::new(AtomicUsize::new(0));
        let start = Arc::new(AtomicUsize::new(16 * PAGE));
        let mapping = Arc::new(UnsafeCell::new(7u8));
        let h = {
            let (active, start, mapping) = (active.clone(), start.clone(), mapping.clone());
            thread::spawn(move || {
                active.fetch_add(1, Ordering::AcqRel);
                if start.load(Ordering::Acquire) != 0 {
                    // SAFETY (model): checked by loom.
                    mapping.with_mut(|p| unsafe { *p = 0 });
                }
                active.fetch_sub(1, Ordering::AcqRel);
            })
        };
        start.store(0, Ordering::Release);
        while active.load(Ordering::Acquire) != 0 {
            thread::yield_now();
        }
        // SAFETY (model): checked by loom.
        mapping.with_mut(|p| unsafe { *p = 9 });
        h.join().unwrap();
    });
}
