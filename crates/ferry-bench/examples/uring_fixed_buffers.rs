//! Do io_uring's registered ("fixed") buffers help `ferry::aio`? A probe:
//! reads a file start to end in 512 KiB requests, four in flight, with
//! `IORING_OP_READ` into ordinary memory and with `IORING_OP_READ_FIXED`
//! into the same memory registered once (`IORING_REGISTER_BUFFERS`),
//! interleaved, with `O_DIRECT` (the kernel pins the pages of every
//! request) and through the page cache (it copies). Prints medians of
//! wall and CPU time (the process's, user + system).
//!
//! `cargo run --release -p ferry-bench --example uring_fixed_buffers -- [FILE] [MiB] [RUNS]`
//! (defaults: target/uring-fixed-probe, 256, 5). Creates FILE.

use io_uring::{opcode, types, IoUring};
use std::alloc::Layout;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

const CHUNK: usize = 512 << 10;
const DEPTH: usize = 4;

struct Aligned {
    ptr: *mut u8,
    layout: Layout,
}

impl Aligned {
    fn new(len: usize) -> Aligned {
        let layout = Layout::from_size_align(len, 4096).expect("a valid layout");
        // SAFETY: a non-zero size; freed in Drop with the same layout.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        assert!(!ptr.is_null(), "out of memory");
        Aligned { ptr, layout }
    }
}

impl Drop for Aligned {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout, freed once.
        unsafe { std::alloc::dealloc(self.ptr, self.layout) }
    }
}

/// Reads all of `file` (`size` bytes) once; `fixed`: READ_FIXED from
/// the registered buffers. Returns wall and process CPU time.
fn pass(
    ring: &mut IoUring,
    file: &std::fs::File,
    size: u64,
    bufs: &[Aligned],
    fixed: bool,
) -> (Duration, Duration) {
    let cpu0 = cpu();
    let t = Instant::now();
    let fd = types::Fd(file.as_raw_fd());
    let mut next = 0u64;
    let mut inflight = 0;
    let mut free: Vec<usize> = (0..DEPTH).collect();
    loop {
        while let Some(i) = free.pop() {
            if next >= size {
                free.push(i);
                break;
            }
            let len = (size - next).min(CHUNK as u64) as u32;
            let e = if fixed {
                opcode::ReadFixed::new(fd, bufs[i].ptr, len, i as u16)
                    .offset(next)
                    .build()
            } else {
                opcode::Read::new(fd, bufs[i].ptr, len).offset(next).build()
            };
            // SAFETY: the buffer stays allocated and untouched until its
            // completion is reaped below (the ring is drained before the
            // function returns).
            unsafe {
                ring.submission()
                    .push(&e.user_data(i as u64))
                    .expect("room")
            };
            next += u64::from(len);
            inflight += 1;
        }
        if inflight == 0 {
            break;
        }
        ring.submit_and_wait(1).expect("io_uring_enter");
        let done: Vec<(u64, i32)> = ring
            .completion()
            .map(|c| (c.user_data(), c.result()))
            .collect();
        for (i, r) in done {
            assert!(
                r > 0,
                "read failed: {}",
                std::io::Error::from_raw_os_error(-r)
            );
            free.push(i as usize);
            inflight -= 1;
        }
    }
    let cpu = cpu().saturating_sub(cpu0);
    (t.elapsed(), cpu)
}

/// The process's CPU time, user + system.
fn cpu() -> Duration {
    let (u, s) = ferry::process_cpu_time().expect("getrusage");
    u + s
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "target/uring-fixed-probe".into());
    let mib: u64 = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(256);
    let runs: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(5);
    let size = mib << 20;
    {
        let mut f = std::fs::File::create(&path).expect("create the file");
        let block: Vec<u8> = (0..1 << 20)
            .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        for _ in 0..mib {
            f.write_all(&block).expect("write the file");
        }
        f.sync_all().expect("fsync");
    }
    let bufs: Vec<Aligned> = (0..DEPTH).map(|_| Aligned::new(CHUNK)).collect();
    let iovecs: Vec<libc::iovec> = bufs
        .iter()
        .map(|b| libc::iovec {
            iov_base: b.ptr.cast(),
            iov_len: CHUNK,
        })
        .collect();
    println!(
        "{mib} MiB in {} KiB reads, {DEPTH} in flight, medians of {runs} interleaved runs",
        CHUNK >> 10
    );
    println!("| path | READ wall s | READ_FIXED wall s | READ cpu s | READ_FIXED cpu s |");
    println!("|---|---|---|---|---|");
    for direct in [true, false] {
        let mut flags = 0;
        if direct {
            flags |= libc::O_DIRECT;
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(&path)
            .expect("open");
        let mut ring = IoUring::new(64).expect("io_uring");
        // SAFETY: the buffers outlive the ring (dropped after it below).
        unsafe {
            ring.submitter()
                .register_buffers(&iovecs)
                .expect("register buffers")
        };
        let (mut wa, mut wb, mut ca, mut cb) = (vec![], vec![], vec![], vec![]);
        if !direct {
            pass(&mut ring, &file, size, &bufs, false); // warm the cache
        }
        for _ in 0..runs {
            let (w, c) = pass(&mut ring, &file, size, &bufs, false);
            wa.push(w);
            ca.push(c);
            let (w, c) = pass(&mut ring, &file, size, &bufs, true);
            wb.push(w);
            cb.push(c);
        }
        drop(ring);
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} |",
            if direct { "O_DIRECT" } else { "page cache" },
            median(wa).as_secs_f64(),
            median(wb).as_secs_f64(),
            median(ca).as_secs_f64(),
            median(cb).as_secs_f64()
        );
    }
    let _ = std::fs::remove_file(&path);
}
