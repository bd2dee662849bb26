//! Where does `MSG_ZEROCOPY` start to pay? Sends of one page-aligned
//! buffer, SIZE bytes at a time, over a loopback TCP connection, plain
//! (`send`, the kernel copies) against zero-copy (`ZeroCopySender`, pages
//! pinned, completions read back), interleaved rounds, medians: wall
//! time, GB/s and the sending thread's CPU per GiB.
//!
//! On loopback the receiving side copies out of the pinned pages either
//! way, so this measures what zero-copy costs the sender here; the
//! saving it buys shows only where bytes leave through a network device.
//!
//! ```text
//! cargo run --release -p ferry-bench --example zerocopy_threshold -- [ROUNDS] [MIB]
//! ```

use ferry::transfer::zerocopy::ZeroCopySender;
use ferry::BufMut;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

fn run(size: usize, total: u64, zero: bool) -> (f64, f64, u64, u64) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let tx = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (mut rx, _) = l.accept().unwrap();
    let reader = std::thread::spawn(move || {
        let mut b = vec![0u8; 1 << 20];
        let mut n = 0u64;
        loop {
            match rx.read(&mut b).unwrap() {
                0 => return n,
                k => n += k as u64,
            }
        }
    });
    let mut m = BufMut::with_capacity_aligned(size, ferry::sys_page_size());
    m.extend_from_slice(&vec![0x5a; size]);
    let buf = m.freeze();
    let (u0, s0) = ferry::thread_cpu_time().unwrap();
    let t0 = Instant::now();
    let mut s = ZeroCopySender::new(tx.as_fd(), if zero { 1 } else { usize::MAX });
    let sends = total / size as u64;
    for _ in 0..sends {
        s.send(buf.clone()).unwrap();
    }
    assert!(s.flush(Some(Duration::from_secs(60))).unwrap());
    let st = s.stats();
    drop(s);
    let (u1, s1) = ferry::thread_cpu_time().unwrap();
    drop(tx);
    let got = reader.join().unwrap();
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(got, sends * size as u64);
    let cpu = (u1 + s1 - u0 - s0).as_secs_f64();
    let gib = got as f64 / (1u64 << 30) as f64;
    (wall, cpu / gib, st.zerocopy_sends, st.copied)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = args.get(1).map_or(5, |s| s.parse().unwrap());
    let mib: u64 = args.get(2).map_or(512, |s| s.parse().unwrap());
    let total = mib << 20;
    println!("{mib} MiB per run over loopback TCP, {rounds} interleaved rounds, medians");
    println!("| send size | plain GB/s | zero-copy GB/s | plain CPU s/GiB | zero-copy CPU s/GiB | zero-copy × plain (speed) | kernel copied anyway |");
    println!("|---|---|---|---|---|---|---|");
    for size in [4096usize, 16 << 10, 64 << 10, 256 << 10, 1 << 20] {
        let (mut pw, mut pc, mut zw, mut zc) = (vec![], vec![], vec![], vec![]);
        let (mut sends, mut copied) = (0, 0);
        for r in 0..rounds {
            for zero in if r % 2 == 0 {
                [false, true]
            } else {
                [true, false]
            } {
                let (w, c, s, k) = run(size, total, zero);
                if zero {
                    zw.push(w);
                    zc.push(c);
                    sends += s;
                    copied += k;
                } else {
                    pw.push(w);
                    pc.push(c);
                }
            }
        }
        let (pw, zw) = (median(&mut pw), median(&mut zw));
        let gbs = |w: f64| total as f64 / w / 1e9;
        println!(
            "| {} KiB | {:.2} | {:.2} | {:.3} | {:.3} | {:.2}× | {copied} of {sends} sends |",
            size >> 10,
            gbs(pw),
            gbs(zw),
            median(&mut pc),
            median(&mut zc),
            pw / zw
        );
    }
}
