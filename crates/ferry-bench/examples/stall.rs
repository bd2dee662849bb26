//! A transfer whose consumer pauses periodically, with dynamic case
//! switching (the default) and without (`TransferOptions::no_switching`:
//! plain poll-and-wait), interleaved round by round; medians printed.
//!
//! ```text
//! producer ──write──► pipe A ──ferry::transfer::between──► pipe B (O_NONBLOCK) ──read──► consumer
//!   (full speed; its time                                                      (pauses PAUSE ms
//!    blocked in write = the                                                     every EVERY MiB)
//!    source-side stall)
//! ```
//!
//! `cargo run --release -p ferry-bench --example stall -- [MIB] [PAUSE_MS] [EVERY_MIB] [ROUNDS] [CACHE_MIB]`
//! (defaults 256 10 8 7 64). Per mode: wall time and throughput of the
//! whole transfer, the producer's time blocked in `write` (the source-side
//! stall), switches and the peak of cache buffers held.

use ferry::transfer::cache::{BufferCache, Share};
use ferry::transfer::endpoint::Endpoint;
use ferry::transfer::{between, TransferOptions, TransferStats};
use ferry::{Pool, PoolConfig};
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

struct Run {
    wall: Duration,
    stall: Duration,
    st: TransferStats,
}

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

fn once(total: usize, pause: Duration, every: usize, cache: &BufferCache, switching: bool) -> Run {
    let (mut a_r, mut a_w) = std::io::pipe().expect("pipe");
    let (mut b_r, b_w) = std::io::pipe().expect("pipe");
    let fl = rustix::fs::fcntl_getfl(&b_w).expect("getfl");
    rustix::fs::fcntl_setfl(&b_w, fl | rustix::fs::OFlags::NONBLOCK).expect("setfl");
    let chunk: Vec<u8> = (0..64 << 10).map(|i| (i * 31 % 251) as u8).collect();
    let start = Instant::now();
    std::thread::scope(|s| {
        let producer = s.spawn(move || {
            let mut stall = Duration::ZERO;
            let mut left = total;
            while left > 0 {
                let k = left.min(chunk.len());
                let t = Instant::now();
                a_w.write_all(&chunk[..k]).expect("producer write");
                stall += t.elapsed();
                left -= k;
            }
            stall
        });
        let consumer = s.spawn(move || {
            let mut buf = vec![0u8; 256 << 10];
            let (mut got, mut next_pause) = (0usize, every);
            loop {
                match b_r.read(&mut buf).expect("consumer read") {
                    0 => return got,
                    k => got += k,
                }
                if got >= next_pause {
                    std::thread::sleep(pause);
                    next_pause += every;
                }
            }
        });
        let mut opts = TransferOptions::new().cache(cache);
        if !switching {
            opts = opts.no_switching();
        }
        let src = Endpoint::fd(a_r.as_fd()).expect("endpoint");
        let dst = Endpoint::fd(b_w.as_fd()).expect("endpoint");
        let st = between(&src, &dst, &opts).expect("transfer");
        drop(dst);
        drop(b_w);
        drop(src);
        let stall = producer.join().expect("producer");
        let got = consumer.join().expect("consumer");
        assert_eq!(got, total, "every byte arrived");
        let _ = a_r.read(&mut [0u8; 1]);
        Run {
            wall: start.elapsed(),
            stall,
            st,
        }
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mib = arg(1, 256) as usize;
    let pause = Duration::from_millis(arg(2, 10));
    let every = arg(3, 8) as usize;
    let rounds = arg(4, 7).max(1) as usize;
    let cache_mib = arg(5, 64) as usize;
    let pool = Pool::new(PoolConfig::default().with_budget(cache_mib << 20)).expect("pool");
    let cache = BufferCache::new(pool, Share::default());
    println!(
        "{mib} MiB, consumer pauses {} ms every {every} MiB, cache {cache_mib} MiB (share {} MiB), {rounds} rounds",
        pause.as_millis(),
        Share::default().bytes(cache_mib << 20, 1) >> 20
    );
    let mut res: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
    for r in 0..rounds {
        // Interleaved, the order alternating round by round.
        for k in 0..2 {
            let switching = (r + k) % 2 == 0;
            let run = once(mib << 20, pause, every << 20, &cache, switching);
            res[usize::from(!switching)].push(run);
        }
    }
    println!("mode          wall ms   MB/s   producer stall ms   switches   peak buffers MiB");
    for (name, runs) in ["switching", "poll-and-wait"].iter().zip(&res) {
        let wall = median(runs.iter().map(|r| r.wall.as_secs_f64() * 1e3).collect());
        let mbps = median(
            runs.iter()
                .map(|r| (mib << 20) as f64 / r.wall.as_secs_f64() / 1e6)
                .collect(),
        );
        let stall = median(runs.iter().map(|r| r.stall.as_secs_f64() * 1e3).collect());
        let sw = median(runs.iter().map(|r| r.st.switches.count() as f64).collect());
        let peak = median(
            runs.iter()
                .map(|r| r.st.peak_buffer_bytes as f64 / (1 << 20) as f64)
                .collect(),
        );
        println!("{name:<13} {wall:>7.1} {mbps:>6.0} {stall:>19.1} {sw:>10.0} {peak:>18.2}");
    }
}
