//! The cache's share accounting against a model: any sequence of joins,
//! takes, releases and leaves across several transfers, on a real pool.

use super::*;
use crate::PoolConfig;
use proptest::prelude::*;

#[derive(Clone, Debug)]
enum Op {
    Join,
    Leave(usize),
    /// User (index among the live ones), size class (4 KiB << k).
    Take(usize, u8),
    /// The same, waiting for the budget alone (not at all here: a zero
    /// timeout), as a transfer with nothing queued does.
    TakeNeeded(usize, u8),
    /// User, which of its buffers.
    Release(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => Just(Op::Join),
        1 => any::<usize>().prop_map(Op::Leave),
        6 => (any::<usize>(), 0u8..4).prop_map(|(u, k)| Op::Take(u, k)),
        2 => (any::<usize>(), 0u8..4).prop_map(|(u, k)| Op::TakeNeeded(u, k)),
        4 => (any::<usize>(), any::<usize>()).prop_map(|(u, b)| Op::Release(u, b)),
    ]
}

fn share() -> impl Strategy<Value = Share> {
    prop_oneof![
        (1usize..6).prop_map(|n| Share::Fraction(NonZeroUsize::new(n).unwrap())),
        (0usize..(200 << 10)).prop_map(Share::Bytes),
    ]
}

struct Live {
    user: CacheUser,
    bufs: Vec<Taken>,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Every grant and refusal is what the rules say; the total never
    /// passes the budget; no transfer takes past its share while it holds
    /// anything; and the books match the charges alive.
    #[test]
    fn share_accounting_matches_the_rules(
        budget_pages in 4usize..96,
        share in share(),
        ops in proptest::collection::vec(op(), 1..120),
    ) {
        let page = crate::sys::page_size();
        let budget = budget_pages * page;
        let pool = Pool::new(PoolConfig::default().with_budget(budget)).unwrap();
        let cache = BufferCache::new(pool, share);
        let mut live: Vec<Live> = Vec::new();
        // Charges that outlive their user stay counted until they drop.
        let mut orphans: Vec<Taken> = Vec::new();
        for op in ops {
            match op.clone() {
                Op::Join => live.push(Live { user: cache.join(), bufs: Vec::new() }),
                Op::Leave(i) if !live.is_empty() => {
                    let l = live.remove(i % live.len());
                    // Half the time the buffers go first, half after.
                    if i % 2 == 0 {
                        drop(l.bufs);
                        drop(l.user);
                    } else {
                        drop(l.user);
                        orphans.extend(l.bufs);
                    }
                }
                Op::Take(i, k) | Op::TakeNeeded(i, k) if !live.is_empty() => {
                    let needed = matches!(op, Op::TakeNeeded(..));
                    let n = live.len();
                    let l = &mut live[i % n];
                    let len = 4096usize << k;
                    let cost = cache.pool().class_size(len).unwrap();
                    let held: usize = l.bufs.iter().map(|t| t.charge.bytes()).sum();
                    let total: usize = live.iter().flat_map(|l| &l.bufs).chain(&orphans)
                        .map(|t| t.charge.bytes()).sum();
                    let my_share = share.bytes(budget, n);
                    let allowed = total + cost <= budget
                        && (needed || held == 0 || held + cost <= my_share);
                    let l = &mut live[i % n];
                    let got = if needed {
                        l.user.take_wait(len, Duration::ZERO).unwrap()
                    } else {
                        l.user.try_take(len).unwrap()
                    };
                    prop_assert_eq!(got.is_some(), allowed, "held {} total {} cost {} share {}", held, total, cost, my_share);
                    if let Some(t) = got {
                        prop_assert!(t.buf.capacity() >= len);
                        prop_assert_eq!(t.buf.as_ptr() as usize % page, 0);
                        prop_assert!(needed || held == 0 || held + cost <= my_share);
                        l.bufs.push(t);
                    }
                }
                Op::Release(i, b) if !live.is_empty() => {
                    let n = live.len();
                    let l = &mut live[i % n];
                    if !l.bufs.is_empty() {
                        let k = b % l.bufs.len();
                        l.bufs.remove(k);
                    }
                }
                _ => {}
            }
            let s = cache.stats();
            let total: usize = live.iter().flat_map(|l| &l.bufs).chain(&orphans)
                .map(|t| t.charge.bytes()).sum();
            prop_assert_eq!(s.held_bytes, total);
            prop_assert!(s.held_bytes <= budget);
            prop_assert_eq!(s.users, live.len());
            for l in &live {
                let held: usize = l.bufs.iter().map(|t| t.charge.bytes()).sum();
                prop_assert_eq!(l.user.held(), held);
                prop_assert!(l.user.peak() >= held);
            }
        }
        drop(live);
        drop(orphans);
        prop_assert_eq!(cache.stats().held_bytes, 0);
    }
}

#[test]
fn a_buffer_past_the_largest_class_is_charged_by_pages() {
    let pool = Pool::new(PoolConfig::default().with_budget(8 << 20)).unwrap();
    let cache = BufferCache::new(pool, Share::Bytes(8 << 20));
    let mut u = cache.join();
    let t = u.try_take((2 << 20) + 1).unwrap().unwrap();
    let page = crate::sys::page_size();
    assert_eq!(
        t.charge.bytes(),
        ((2 << 20) + 1usize).next_multiple_of(page)
    );
    assert_eq!(t.buf.as_ptr() as usize % page, 0);
    assert_eq!(u.held(), t.charge.bytes());
    drop(t);
    assert_eq!(u.held(), 0);
}

#[test]
fn a_waiter_is_woken_by_another_threads_release() {
    let pool = Pool::new(PoolConfig::default().with_budget(16384)).unwrap();
    let cache = BufferCache::new(pool, Share::Bytes(16384));
    let mut a = cache.join();
    let held = a.try_take(16384).unwrap().unwrap();
    let c2 = cache.clone();
    let t = std::thread::spawn(move || {
        let mut b = c2.join();
        b.take_wait(4096, Duration::from_secs(60))
            .unwrap()
            .is_some()
    });
    // b cannot have its buffer while a holds the whole budget.
    while cache.stats().users < 2 {
        std::thread::yield_now();
    }
    drop(held);
    assert!(t.join().unwrap());
}
