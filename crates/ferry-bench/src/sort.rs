//! `ferry-bench sort`: `ferry sort` against GNU sort, as processes,
//! interleaved, on generated text (distinct lines of words and numbers,
//! 20–100 bytes) — in memory, and larger than `-S` (runs on disk) — with
//! the same `-S` and `--parallel` for both, `LC_ALL=C`; and binary
//! 100-byte records with 10-byte keys (the sort benchmark's format) against
//! the I/O floor: the same bytes copied twice with `ferry cp` (an external
//! sort reads and writes everything twice).

use super::files::warm;
use super::measure::{interleave, Variant};
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

#[derive(Args)]
pub struct SortArgs {
    #[command(flatten)]
    c: super::Common,
    /// Text sorted in memory.
    #[arg(long, default_value = "1G", value_parser = ferry_cli::parse_size)]
    text: u64,
    /// Text sorted through runs on disk (with --external-buffer).
    #[arg(long, default_value = "4G", value_parser = ferry_cli::parse_size)]
    external: u64,
    /// The -S for the external text sort.
    #[arg(long, default_value = "512M")]
    external_buffer: String,
    /// Binary 100-byte records (with --records-buffer).
    #[arg(long, default_value = "2G", value_parser = ferry_cli::parse_size)]
    records: u64,
    /// The -S for the records.
    #[arg(long, default_value = "256M")]
    records_buffer: String,
    /// Only these cases (comma-separated: memory, external, records).
    #[arg(long, value_delimiter = ',', value_parser = ["memory", "external", "records"])]
    only: Vec<String>,
    /// --parallel for both sorts.
    #[arg(long, default_value_t = 2)]
    parallel: usize,
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

/// A file of `size` bytes of distinct-ish text lines, or of 100-byte
/// records with random 10-byte keys.
fn generate(path: &Path, size: u64, records: bool) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", path.display());
    let mut f =
        std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path).map_err(err)?);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    // Whole records.
    let mut left = if records { size / 100 * 100 } else { size };
    let mut line = Vec::with_capacity(128);
    let mut n = 0u64;
    while left > 0 {
        line.clear();
        if records {
            for _ in 0..10 {
                line.push(b' ' + (xorshift(&mut x) % 95) as u8);
            }
            line.extend_from_slice(format!("{n:>20}").as_bytes());
            line.resize(100, b'.');
        } else {
            let len = 20 + (xorshift(&mut x) % 81) as usize;
            while line.len() < len {
                let r = xorshift(&mut x);
                if r.is_multiple_of(4) {
                    line.extend_from_slice(format!("{}", r % 100_000).as_bytes());
                } else {
                    for i in 0..(2 + r % 7) {
                        line.push(b'a' + ((r >> (8 + 5 * i)) % 26) as u8);
                    }
                }
                line.push(b' ');
            }
            line.truncate(len);
            line.push(b'\n');
        }
        let k = (line.len() as u64).min(left) as usize;
        f.write_all(&line[..k]).map_err(err)?;
        left -= k as u64;
        n += 1;
    }
    f.flush().map_err(err)
}

fn run(cmd: &mut Command) -> Result<(), String> {
    let st = cmd
        .env("LC_ALL", "C")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if !st.success() {
        return Err(format!("{cmd:?}: {st}"));
    }
    Ok(())
}

struct Scratch(Vec<PathBuf>);

impl Drop for Scratch {
    fn drop(&mut self) {
        for p in &self.0 {
            let _ = std::fs::remove_file(p);
        }
    }
}

pub fn run_bench(a: SortArgs) -> Result<(), String> {
    a.c.check("sort")?;
    let ferry = crate::workspace::ferry(a.c.json)?;
    let dir = a.c.dir.clone().unwrap_or_else(std::env::temp_dir);
    let pid = std::process::id();
    let path = |n: &str| dir.join(format!("ferry-bench-sort-{n}-{pid}"));
    let scratch = Scratch(
        ["text", "ext", "rec", "out", "cp1", "cp2"]
            .iter()
            .map(|n| path(n))
            .collect(),
    );
    let (text, external, records) = if a.c.quick {
        (4 << 20, 8 << 20, 4 << 20)
    } else {
        (a.text, a.external, a.records)
    };
    let (ext_buf, rec_buf) = if a.c.quick {
        ("1M".to_string(), "1M".to_string())
    } else {
        (a.external_buffer.clone(), a.records_buffer.clone())
    };
    let par = format!("--parallel={}", a.parallel);
    let out = path("out");
    println!(
        "ferry-bench sort — wall seconds, medians of {} interleaved runs, LC_ALL=C, {par}{}",
        a.c.runs,
        if a.c.quick {
            " (--quick: figures mean nothing)"
        } else {
            ""
        }
    );
    let mut report = Vec::new();
    for (case, what, file, size, buffer, recs) in [
        (
            "memory",
            "text in memory",
            path("text"),
            text,
            "75%".to_string(),
            false,
        ),
        (
            "external",
            "text through runs on disk",
            path("ext"),
            external,
            ext_buf,
            false,
        ),
        (
            "records",
            "100-byte records, 10-byte keys",
            path("rec"),
            records,
            rec_buf,
            true,
        ),
    ] {
        if !a.only.is_empty() && !a.only.iter().any(|o| o == case) {
            continue;
        }
        a.c.say(&format!("{what}: writing {} MiB", size >> 20));
        generate(&file, size, recs)?;
        let warm_it = |p: &Path| -> Result<(), String> {
            let mut f = std::fs::File::open(p).map_err(|e| e.to_string())?;
            warm(&mut f)
        };
        let tmpdir = dir.to_string_lossy().into_owned();
        let mut vs: Vec<Variant<'_>> = Vec::new();
        let (f, o, b, ferry, par, tmpdir) = (&file, &out, &buffer, &ferry, &par, &tmpdir);
        let warm_it = &warm_it;
        vs.push(Variant::new("ferry sort", move || {
            warm_it(f)?;
            let mut c = Command::new(ferry);
            c.arg("sort")
                .args(["-S", b, par, "-T", tmpdir, "-o"])
                .arg(o);
            if recs {
                c.args(["--record-size", "100", "--key-bytes", "10"]);
            }
            c.arg(f);
            let t = Instant::now();
            run(&mut c)?;
            Ok((t.elapsed(), size as f64))
        }));
        if recs {
            let (c1, c2) = (path("cp1"), path("cp2"));
            vs.push(Variant::new("ferry cp twice (I/O floor)", move || {
                warm_it(f)?;
                let t = Instant::now();
                run(Command::new(ferry).arg("cp").arg(f).arg(&c1))?;
                run(Command::new(ferry).arg("cp").arg(&c1).arg(&c2))?;
                Ok((t.elapsed(), size as f64))
            }));
        } else {
            vs.push(Variant::new("GNU sort", move || {
                warm_it(f)?;
                let mut c = Command::new("sort");
                c.args(["-S", b, par, "-T", tmpdir, "-o"]).arg(o).arg(f);
                let t = Instant::now();
                run(&mut c)?;
                Ok((t.elapsed(), size as f64))
            }));
        }
        a.c.say(what);
        let samples = interleave(a.c.runs, &mut vs)?;
        drop(vs);
        let m: Vec<f64> = samples.iter().map(|s| s.median() * size as f64).collect();
        println!(
            "\n| {what} ({} MiB, -S {buffer}) | {} s | {} s | ratio |\n|---|---|---|---|\n| | {:.3} | {:.3} | {:.2}× |",
            size >> 20,
            samples[0].name,
            samples[1].name,
            m[0],
            m[1],
            m[1] / m[0]
        );
        report.push((what, recs, m[0], m[1]));
        let _ = std::fs::remove_file(&file);
    }
    println!();
    for (what, recs, ours, base) in report {
        if recs {
            let r = ours / base;
            println!(
                "target: {what} within 1.5× of the I/O floor: {r:.2}× — {}",
                if r <= 1.5 { "met" } else { "MISSED" }
            );
        } else {
            let r = base / ours;
            println!(
                "target: {what} ≥ 2× GNU sort: {r:.2}× — {}",
                if r >= 2.0 { "met" } else { "MISSED" }
            );
        }
    }
    drop(scratch);
    Ok(())
}
