//! Criterion micro-benchmarks of the memory layer, each beside its baseline.
//! Whole-program comparisons (and the recorded figures) are `ferry-bench buf`.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use ferry::{Aggregate, Buf, Pool, PoolConfig};
use std::hint::black_box;

fn clone_and_slice(c: &mut Criterion) {
    let fb = Buf::from(vec![1u8; 1024]);
    let bb = bytes::Bytes::from(vec![1u8; 1024]);
    let _keep = (fb.clone(), bb.clone());
    let mut g = c.benchmark_group("clone+drop");
    g.bench_function("ferry::Buf", |b| {
        b.iter(|| drop(black_box(black_box(&fb).clone())))
    });
    g.bench_function("bytes::Bytes", |b| {
        b.iter(|| drop(black_box(black_box(&bb).clone())))
    });
    g.finish();
    let mut g = c.benchmark_group("slice+drop");
    g.bench_function("ferry::Buf", |b| {
        b.iter(|| drop(black_box(black_box(&fb).slice(10..110))))
    });
    g.bench_function("bytes::Bytes", |b| {
        b.iter(|| drop(black_box(black_box(&bb).slice(10..110))))
    });
    g.finish();
}

fn pool_vs_malloc(c: &mut Criterion) {
    let pool = Pool::new(PoolConfig::default()).unwrap();
    let mut g = c.benchmark_group("alloc+free 64 KiB");
    g.bench_function("ferry::Pool", |b| {
        b.iter(|| drop(black_box(pool.alloc(65536).unwrap())))
    });
    g.bench_function("Vec::with_capacity", |b| {
        b.iter(|| drop(black_box(Vec::<u8>::with_capacity(black_box(65536)))))
    });
    g.finish();
}

fn aggregate_split(c: &mut Criterion) {
    let src = Buf::from(vec![9u8; 200 * 1000]);
    let mut agg = Aggregate::new();
    let mut at = 0;
    for i in 0..1000 {
        let len = 1 + (i * 7919) % 199;
        agg.append_buf(src.slice(at..at + len));
        at += len;
    }
    let mid = agg.len() / 2;
    c.bench_function("Aggregate::split_to middle of 1000 slices", |b| {
        b.iter_batched_ref(
            || agg.clone(),
            |a| black_box(a.split_to(black_box(mid))),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, clone_and_slice, pool_vs_malloc, aggregate_split);
criterion_main!(benches);
