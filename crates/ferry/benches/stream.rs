//! Criterion micro-benchmarks of alloc streams beside std::io. Whole-file
//! comparisons (and the recorded figures) are `ferry-bench stream-ops`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use ferry::stream::Backend;
use ferry::{OpenOptions, Stream};
use std::hint::black_box;
use std::io::{BufRead, BufReader, Read};

fn records(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("records");
    let data: Vec<u8> = (0..(8u32 << 20)).map(|i| (i * 7) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let mut g = c.benchmark_group("64-byte records, 8 MiB file");
    g.throughput(Throughput::Elements(data.len() as u64 / 64));
    g.bench_function("BufReader::read_exact", |b| {
        b.iter(|| {
            let mut r = BufReader::new(std::fs::File::open(&path).unwrap());
            let mut rec = [0u8; 64];
            while r.read_exact(&mut rec).is_ok() {
                black_box(rec[0]);
            }
        })
    });
    for (name, backend) in [
        ("salloc mapped", Backend::Mapped),
        ("salloc buffered", Backend::Buffered),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut s =
                    Stream::open(&path, &OpenOptions::read_only().backend(backend)).unwrap();
                let g = &mut s;
                loop {
                    let r = g.salloc(64).unwrap();
                    if r.len() < 64 {
                        break;
                    }
                    black_box(r[0]);
                }
            })
        });
    }
    g.finish();
}

fn lines(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lines");
    let mut text = Vec::new();
    let mut i = 0u32;
    while text.len() < 8 << 20 {
        text.extend(std::iter::repeat_n(
            b'a' + (i % 26) as u8,
            20 + (i as usize * 37) % 80,
        ));
        text.push(b'\n');
        i += 1;
    }
    std::fs::write(&path, &text).unwrap();
    let mut g = c.benchmark_group("lines, 8 MiB");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("BufRead::read_until", |b| {
        b.iter(|| {
            let mut r = BufReader::with_capacity(128 << 10, std::fs::File::open(&path).unwrap());
            let mut l = Vec::new();
            while r.read_until(b'\n', &mut l).unwrap() > 0 {
                black_box(&l);
                l.clear();
            }
        })
    });
    g.bench_function("Stream::next_line", |b| {
        b.iter(|| {
            let mut s = Stream::open(&path, &OpenOptions::read_only()).unwrap();
            while let Some(l) = s.next_line().unwrap() {
                black_box(l);
            }
        })
    });
    g.finish();
}

criterion_group!(benches, records, lines);
criterion_main!(benches);
