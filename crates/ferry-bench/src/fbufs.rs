//! `ferry-bench fbufs`: the fbufs paper's experiments on this machine, in
//! one process. Each operation moves one buffer of SIZE bytes from a
//! cached file into a pipe whose reader splices everything to /dev/null
//! (a reader that copies nothing and is never the bottleneck):
//!
//! * `rw` (the paper's Figure 7): `pread` into a page-aligned buffer and
//!   `write` it (two copies) against `read_buf` and `write_buf` — the
//!   library picks the buffer, and the buffer, handed over by ownership,
//!   goes into the pipe by reference;
//! * `maprw` (Figure 8): a mapped window of the file `write`n (one copy)
//!   against `map` and `write_buf` (no copy: the file's pages go into
//!   the pipe by reference).
//!
//! Per-operation cost across sizes shows the paper's shape: a fixed cost
//! plus a cost per byte; the target is an exchange path whose
//! per-operation cost stays within 1.5× from 4 KiB to 1 MiB while the
//! copying path's grows with the size.

use super::files::{make_file, open_warm, Content};
use super::measure::{interleave, Variant};
use clap::Args;
use ferry::exchange;
use ferry::transfer::{self, TransferOptions};
use ferry::BufMut;
use std::io::{Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::time::Instant;

#[derive(Args)]
pub struct FbufsArgs {
    /// The file's page-cache layout: large folios or 4 KiB pages.
    #[arg(long, value_enum, default_value = "large")]
    layout: super::files::Layout,
    #[command(flatten)]
    c: super::Common,
}

const SIZES: [usize; 6] = [1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20];
const FILE: u64 = 256 << 20;

/// A pipe whose reader thread splices everything into /dev/null.
struct Sink {
    w: std::io::PipeWriter,
    reader: std::thread::JoinHandle<Result<u64, String>>,
}

impl Sink {
    fn new() -> Result<Sink, String> {
        let (r, w) = std::io::pipe().map_err(|e| e.to_string())?;
        let null = std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/null")
            .map_err(|e| e.to_string())?;
        let reader = std::thread::spawn(move || {
            transfer::copy(&r, &null, &TransferOptions::new())
                .map(|st| st.bytes)
                .map_err(|e| e.to_string())
        });
        Ok(Sink { w, reader })
    }

    fn finish(self) -> Result<u64, String> {
        drop(self.w);
        self.reader
            .join()
            .map_err(|_| "the reader panicked".to_string())?
    }
}

pub fn run(a: FbufsArgs) -> Result<(), String> {
    a.c.check("fbufs")?;
    let size = if a.c.quick { FILE / 16 } else { FILE };
    let scratch = make_file(size, a.c.dir.as_deref(), Content::Random, "fbufs")?;
    super::files::lay_out(&scratch.path, a.layout)?;
    let file = open_warm(&scratch)?;
    let file = &file;
    let mut per_op: Vec<(usize, [f64; 4])> = Vec::new();
    for &s in &SIZES {
        a.c.say(&format!("{} KiB operations", s >> 10));
        let ops = ((size / s as u64) as usize).clamp(2000, 100_000);
        let ops = if a.c.quick { ops.min(2000) } else { ops };
        let off = move |i: usize| (i as u64 * s as u64) % (size - s as u64 + 1);
        let mut vs = vec![
            Variant::new("read+write", move || {
                let sink = Sink::new()?;
                let mut buf = BufMut::with_capacity_aligned(s, ferry::sys_page_size());
                buf.commit(s);
                let t = Instant::now();
                for i in 0..ops {
                    let n = file.read_at(&mut buf, off(i)).map_err(|e| e.to_string())?;
                    std::io::Write::write_all(&mut &sink.w, &buf[..n])
                        .map_err(|e| e.to_string())?;
                }
                let d = t.elapsed();
                sink.finish()?;
                Ok((d, ops as f64))
            }),
            Variant::new("read_buf+write_buf", move || {
                let sink = Sink::new()?;
                let mut f = file;
                let t = Instant::now();
                for _ in 0..ops {
                    let mut b = exchange::read_buf(file, s).map_err(|e| e.to_string())?;
                    if b.len() < s {
                        f.seek(SeekFrom::Start(0)).map_err(|e| e.to_string())?;
                        b = exchange::read_buf(file, s).map_err(|e| e.to_string())?;
                    }
                    exchange::write_buf(&sink.w, b).map_err(|e| e.to_string())?;
                }
                let d = t.elapsed();
                sink.finish()?;
                Ok((d, ops as f64))
            }),
            Variant::new("map+write", move || {
                let sink = Sink::new()?;
                let t = Instant::now();
                for i in 0..ops {
                    let o = off(i);
                    let b = exchange::map(file, o..o + s as u64).map_err(|e| e.to_string())?;
                    std::io::Write::write_all(&mut &sink.w, &b).map_err(|e| e.to_string())?;
                }
                let d = t.elapsed();
                sink.finish()?;
                Ok((d, ops as f64))
            }),
            Variant::new("map+write_buf", move || {
                let sink = Sink::new()?;
                let t = Instant::now();
                for i in 0..ops {
                    let o = off(i);
                    let b = exchange::map(file, o..o + s as u64).map_err(|e| e.to_string())?;
                    exchange::write_buf(&sink.w, b).map_err(|e| e.to_string())?;
                }
                let d = t.elapsed();
                sink.finish()?;
                Ok((d, ops as f64))
            }),
        ];
        let samples = interleave(a.c.runs, &mut vs)?;
        drop(vs);
        let m: Vec<f64> = samples.iter().map(|x| x.median()).collect();
        per_op.push((s, [m[0], m[1], m[2], m[3]]));
    }
    println!(
        "ferry-bench fbufs — per-operation cost (µs), {} page-cache layout, medians of {} interleaved runs{}",
        a.layout.name(),
        a.c.runs,
        if a.c.quick {
            " (--quick: figures mean nothing)"
        } else {
            ""
        }
    );
    println!("\n| size | read+write | read_buf+write_buf | × | map+write | map+write_buf | × |\n|---|---|---|---|---|---|---|");
    for (s, m) in &per_op {
        println!(
            "| {} KiB | {:.2} | {:.2} | {:.2}× | {:.2} | {:.2} | {:.2}× |",
            s >> 10,
            m[0] * 1e6,
            m[1] * 1e6,
            m[0] / m[1],
            m[2] * 1e6,
            m[3] * 1e6,
            m[2] / m[3]
        );
    }
    let at = |k: usize, i: usize| per_op.iter().find(|(s, _)| *s == k).map(|(_, m)| m[i]);
    if let (Some(a4), Some(a1m)) = (at(4 << 10, 0), at(1 << 20, 0)) {
        println!("\nread+write per-op cost, 1 MiB ÷ 4 KiB: {:.1}×", a1m / a4);
    }
    for (i, name) in [(1, "read_buf+write_buf"), (3, "map+write_buf")] {
        if let (Some(a4), Some(a1m)) = (at(4 << 10, i), at(1 << 20, i)) {
            let r = a1m / a4;
            println!(
                "target: {name} per-op cost flat (1 MiB ÷ 4 KiB ≤ 1.5×): {r:.1}× — {}",
                if r <= 1.5 { "met" } else { "MISSED" }
            );
        }
    }
    Ok(())
}
