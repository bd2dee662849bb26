//! The paper's application runs (IO-Lite §4.4, Figure 13's shape): the
//! same program with and without IO-Lite's interfaces.
//!
//! * `wc` over a cached text file: its bytes handed out by
//!   [`FileCache`](ferry::cache::FileCache) as an `Aggregate` of cached
//!   buffers (no copy), against `read` into a buffer of GNU wc's size
//!   (128 KiB, page-aligned) from the page cache (one copy per byte).
//! * `permute | wc`: a generator writes every permutation of nine words,
//!   one per line, to a counter. Over a pipe through `std`'s default
//!   `BufWriter`/`BufReader` (what such a program gets), over a pipe with
//!   64 KiB writes and reads, and over ferry ipc, where the generator
//!   writes its lines straight into the pool's slots and the counter reads
//!   them in place. The two ends are two threads of this process.
//!
//! Every run's counts (lines, words, bytes) are checked against the
//! others', so a faster variant cannot be one that counted less.

use super::ipc::{err, page_buf};
use crate::files::{make_file, warm, Content};
use crate::measure::{compare, interleave, Scale, Variant};
use crate::report::{Row, Target, Unit};
use crate::variants::Counts;
use ferry::cache::{CacheConfig, FileCache};
use ferry::ipc::{self, Receiver, Sender, SenderConfig};
use ferry::Aggregate;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::time::{Duration, Instant};

const WC_FILE: u64 = 64 << 20;
const GNU_WC_BUF: usize = 128 << 10;

fn wc_rows(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let size = scale.of(WC_FILE as usize) as u64;
    let s = make_file(size, None, Content::Text, "wc")?;
    let cache = FileCache::new(CacheConfig::default()).map_err(err)?;
    let mut rows = Vec::new();
    for (wc, lines_only) in [("wc", false), ("wc -l", true)] {
        rows.push(wc_row(runs, size, &s.path, &cache, wc, lines_only)?);
    }
    Ok(rows)
}

/// `wc` (`wc -l` if `lines_only`) over the file at `path`, cached, against
/// `read`.
fn wc_row(
    runs: usize,
    size: u64,
    path: &std::path::Path,
    cache: &FileCache,
    wc: &str,
    lines_only: bool,
) -> Result<Row, String> {
    // Fill the cache once, untimed: the runs are of a cached file.
    let mut want = Counts::default();
    for c in cache.read(path, ..).map_err(err)?.chunks() {
        want.add(c, lines_only);
    }
    let check = |got: Counts| {
        if got == want {
            Ok(())
        } else {
            Err(format!("counted {got:?}, want {want:?}"))
        }
    };
    let mut vs = vec![
        Variant::new(format!("{wc} through FileCache"), || {
            let t = Instant::now();
            let mut n = Counts::default();
            for c in cache.read(path, ..).map_err(err)?.chunks() {
                n.add(c, lines_only);
            }
            let d = t.elapsed();
            check(n)?;
            Ok((d, size as f64))
        }),
        Variant::new(format!("{wc} through read, 128 KiB buffer"), || {
            let mut f = std::fs::File::open(path).map_err(err)?;
            warm(&mut f)?;
            let mut buf = page_buf(GNU_WC_BUF);
            let t = Instant::now();
            let mut n = Counts::default();
            loop {
                let k = f.read(&mut buf).map_err(err)?;
                if k == 0 {
                    break;
                }
                n.add(&buf[..k], lines_only);
            }
            let d = t.elapsed();
            check(n)?;
            Ok((d, size as f64))
        }),
    ];
    let sm = interleave(runs, &mut vs)?;
    Ok(compare(
        &sm,
        &format!("{wc} over a cached file: FileCache vs read"),
        &format!("{wc} through FileCache"),
        &format!("{wc} through read, 128 KiB buffer"),
        Unit::GBps,
        Target::None,
        runs,
    ))
}

const WORDS: [&str; 9] = [
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
];

/// Every permutation of the first `k` words (Heap's algorithm), one line
/// each, handed to `emit`.
fn permute(k: usize, mut emit: impl FnMut(&[&str]) -> Result<(), String>) -> Result<(), String> {
    let mut a: Vec<&str> = WORDS[..k].to_vec();
    let mut c = vec![0usize; k];
    emit(&a)?;
    let mut i = 1;
    while i < k {
        if c[i] < i {
            a.swap(if i % 2 == 0 { 0 } else { c[i] }, i);
            emit(&a)?;
            c[i] += 1;
            i = 1;
        } else {
            c[i] = 0;
            i += 1;
        }
    }
    Ok(())
}

fn line_into(out: &mut Vec<u8>, words: &[&str]) {
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(w.as_bytes());
    }
    out.push(b'\n');
}

/// `permute` into a pipe and `wc` out of it: `writes` and `reads` bytes
/// at a time (`None`: std's default `BufWriter`/`BufReader`).
fn permute_pipe(k: usize, chunk: Option<usize>) -> Result<Counts, String> {
    let (r, w) = std::io::pipe().map_err(err)?;
    let counter = std::thread::spawn(move || -> Result<Counts, String> {
        let mut n = Counts::default();
        let mut r = match chunk {
            Some(c) => BufReader::with_capacity(c, r),
            None => BufReader::new(r),
        };
        loop {
            let b = r.fill_buf().map_err(err)?;
            if b.is_empty() {
                return Ok(n);
            }
            n.add(b, false);
            let k = b.len();
            r.consume(k);
        }
    });
    let mut out = match chunk {
        Some(c) => BufWriter::with_capacity(c, w),
        None => BufWriter::new(w),
    };
    let mut line = Vec::with_capacity(80);
    permute(k, |ws| {
        line.clear();
        line_into(&mut line, ws);
        out.write_all(&line).map_err(err)
    })?;
    out.flush().map_err(err)?;
    drop(out);
    counter
        .join()
        .map_err(|_| "the counter panicked".to_string())?
}

const SLOT: usize = 64 << 10;

/// `permute` writing its lines into the pool's slots, `wc` reading them
/// where they lie.
fn permute_ipc(k: usize) -> Result<Counts, String> {
    let (a, b) = ipc::pair().map_err(err)?;
    let mut tx = Sender::new(
        a,
        SenderConfig {
            slot_size: SLOT,
            slots: 64,
            timeout: Some(Duration::from_secs(60)),
            ..SenderConfig::default()
        },
    )
    .map_err(err)?;
    // SAFETY: the peer is the ferry Sender just made, and nothing else
    // writes on its socket.
    let mut rx = unsafe { Receiver::new(b, Some(Duration::from_secs(60))) }.map_err(err)?;
    let counter = std::thread::spawn(move || -> Result<Counts, String> {
        let mut n = Counts::default();
        while let Some(m) = rx.recv().map_err(err)? {
            for c in m.chunks() {
                n.add(c, false);
            }
        }
        Ok(n)
    });
    let mut slot = tx.alloc().map_err(err)?;
    let mut at = 0;
    let mut line = Vec::with_capacity(80);
    permute(k, |ws| {
        line.clear();
        line_into(&mut line, ws);
        if at + line.len() > SLOT {
            let full = std::mem::replace(&mut slot, tx.alloc().map_err(err)?);
            tx.send(Aggregate::from(full.freeze(at))).map_err(err)?;
            at = 0;
        }
        slot[at..at + line.len()].copy_from_slice(&line);
        at += line.len();
        Ok(())
    })?;
    tx.send(Aggregate::from(slot.freeze(at))).map_err(err)?;
    tx.close().map_err(err)?;
    counter
        .join()
        .map_err(|_| "the counter panicked".to_string())?
}

fn permute_rows(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let k = if scale.0 < 0.01 { 6 } else { 9 };
    let want = permute_pipe(k, None)?;
    let timed = |f: &dyn Fn() -> Result<Counts, String>| {
        let t = Instant::now();
        let got = f()?;
        let d = t.elapsed();
        if got != want {
            return Err(format!("counted {got:?}, want {want:?}"));
        }
        Ok((d, got.bytes as f64))
    };
    let mut vs = vec![
        Variant::new("permute→wc over ferry ipc", || timed(&|| permute_ipc(k))),
        Variant::new("permute→wc over a pipe, std defaults", || {
            timed(&|| permute_pipe(k, None))
        }),
        Variant::new("permute→wc over a pipe, 64 KiB buffers", || {
            timed(&|| permute_pipe(k, Some(64 << 10)))
        }),
    ];
    let s = interleave(runs, &mut vs)?;
    let row = |base: &str| {
        compare(
            &s,
            &format!(
                "permute→wc: ferry ipc vs {}",
                base.trim_start_matches("permute→wc over a ")
            ),
            "permute→wc over ferry ipc",
            base,
            Unit::GBps,
            Target::None,
            runs,
        )
    };
    Ok(vec![
        row("permute→wc over a pipe, std defaults"),
        row("permute→wc over a pipe, 64 KiB buffers"),
    ])
}

pub fn run(runs: usize, scale: Scale) -> Result<Vec<Row>, String> {
    let mut rows = wc_rows(runs, scale)?;
    rows.extend(permute_rows(runs, scale)?);
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// GNU wc's lines, words and bytes of `text`.
    fn gnu_wc(text: &[u8]) -> (u64, u64, u64) {
        use std::process::{Command, Stdio};
        let mut c = Command::new("wc")
            .args(["-l", "-w", "-c"])
            .env("LC_ALL", "C")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("GNU wc");
        c.stdin.take().unwrap().write_all(text).unwrap();
        let out = c.wait_with_output().unwrap();
        let n: Vec<u64> = String::from_utf8(out.stdout)
            .unwrap()
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect();
        (n[0], n[1], n[2])
    }

    #[test]
    fn counts_match_gnu_wc_however_the_input_is_cut() {
        let texts: [&[u8]; 5] = [
            b"\x01x\x80 y\x01\n\x7f \x01",
            b"one two\n  three\tfour\n\nfive",
            b"  \x0b\x0cx\r\ny  ",
            b"",
            b"alpha bravo\ncharlie\n",
        ];
        for text in texts {
            let (lines, words, bytes) = gnu_wc(text);
            for cut in 0..=text.len() {
                let mut n = Counts::default();
                n.add(&text[..cut], false);
                n.add(&text[cut..], false);
                assert_eq!(
                    (n.lines, n.words, n.bytes),
                    (lines, words, bytes),
                    "{text:?} cut at {cut}"
                );
            }
        }
    }

    #[test]
    fn permute_emits_every_order_once() {
        let mut seen = std::collections::HashSet::new();
        permute(5, |ws| {
            assert!(seen.insert(ws.join(" ")));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen.len(), 120);
    }
}
