//! The paper's experiment (ASF Table 1, Figures 10–11): each tool's
//! program logic three ways.
//!
//! - **std**: written as a Rust programmer would, on `std::fs::File`:
//!   `std::io::copy` for cat and cp (which on Linux already uses
//!   `copy_file_range`/`splice`/`sendfile`), `BufReader` / `BufWriter`
//!   with their default capacity (8 KiB) for the rest;
//! - **std-1m**: the same source with `BufReader` / `BufWriter` of 1 MiB,
//!   the size the asi programs ask for (cat and cp: a `fill_buf`/`write_all`
//!   loop over a 1 MiB `BufReader`, as a programmer avoiding `io::copy`
//!   would write);
//! - **compat**: the std source, but its reader and writer are ferry
//!   `Stream`s through their `std::io` adapters — the "unmodified program
//!   linked to the new library" case (cat and cp: `io::copy` from stream
//!   to stream);
//! - **asi**: rewritten on the alloc-stream interface — `salloc` regions
//!   (mapped for local files) and `Buf`s, written with no copy into a
//!   library buffer.
//!
//! The work on the bytes (comparing with `first_diff`, counting with
//! `Counts::add`, cutting a line with `cut_line`, the diff logic: `ferry
//! diff`'s own, `ferry_cli::diff_normal`) is the
//! same code in all of them, so the ratios measure the interfaces. Where a
//! region allows a different shape it says so: grep -c's rewrite searches
//! a whole region at a time instead of line by line, and cut's finds line
//! ends in the region instead of copying each line out.
//!
//! Output to a pipe: the harness asks for a 1 MiB pipe for every program
//! alike (`F_SETPIPE_SZ` on standard output before the program runs), so
//! no variant gets a larger pipe than another.
//!
//! Run as `ferry-bench variant {std|std-1m|compat|asi} TOOL OUT INPUT…`
//! (OUT `-` is standard output); `ferry-bench asf` times them against the
//! `ferry` tools and the GNU tools.
//! Tools: `cat`, `cp`, `wc` (lines, words, bytes; ASCII words), `wc-l`,
//! `cmp`, `cut` (`-c1-10`), `grep-c` (INPUT… is `LITERAL FILE`), `diff`.

use ferry::{Buf, OpenOptions, Stream};
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::os::fd::AsFd;

pub const KINDS: &[&str] = &["std", "std-1m", "compat", "asi"];

/// The buffer size of std-1m and of the asi programs' regions.
const BIG: usize = 1 << 20;
pub const TOOLS: &[&str] = &["cat", "cp", "wc", "wc-l", "cmp", "cut", "grep-c", "diff"];

/// `ferry-bench variant KIND TOOL OUT INPUT…`; returns the exit status (cmp and
/// diff: 0 same, 1 different, 2 trouble).
pub fn main(args: Vec<std::ffi::OsString>) -> i32 {
    let args: Vec<String> = args
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    if args.len() < 4 || !KINDS.contains(&args[0].as_str()) || !TOOLS.contains(&args[1].as_str()) {
        eprintln!(
            "usage: ferry-bench variant {{{}}} {{{}}} OUT INPUT...",
            KINDS.join("|"),
            TOOLS.join("|")
        );
        return 2;
    }
    let (kind, tool, out, ins) = (&args[0], &args[1], &args[2], &args[3..]);
    match run(kind, tool, out, ins) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ferry-bench variant {kind} {tool}: {e}");
            2
        }
    }
}

fn need(ins: &[String], n: usize) -> io::Result<()> {
    if ins.len() == n {
        Ok(())
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("wants {n} inputs"),
        ))
    }
}

fn run(kind: &str, tool: &str, out: &str, ins: &[String]) -> io::Result<i32> {
    need(
        ins,
        if matches!(tool, "cmp" | "diff" | "grep-c") {
            2
        } else {
            1
        },
    )?;
    if out == "-" {
        // The same pipe for every variant (not a pipe: an error, ignored).
        let _ = rustix::pipe::fcntl_setpipe_size(io::stdout(), BIG);
    }
    if tool == "cp" || tool == "cat" {
        let copied = match kind {
            // What a Rust programmer writes: io::copy between the files.
            "std" => match out {
                "-" => io::copy(&mut File::open(&ins[0])?, &mut io::stdout().lock()),
                p => io::copy(&mut File::open(&ins[0])?, &mut File::create(p)?),
            },
            "std-1m" => {
                let r = BufReader::with_capacity(BIG, File::open(&ins[0])?);
                match out {
                    "-" => cat(r, io::stdout().lock()),
                    p => cat(r, File::create(p)?),
                }
            }
            "compat" => {
                let mut w = match out {
                    "-" => Stream::stdout()?,
                    p => open_write(p)?,
                };
                io::copy(&mut open_read(&ins[0])?, &mut w).and_then(|n| {
                    w.flush()?;
                    Ok(n)
                })
            }
            _ if tool == "cp" => asi::cp(&ins[0], out).map(|()| 0),
            _ => asi::cat(&ins[0], out).map(|()| 0),
        };
        return copied.map(|_| 0);
    }
    let w: Box<dyn Write> = match (kind, out) {
        ("compat", "-") => Box::new(Stream::stdout()?),
        ("compat", p) => Box::new(open_write(p)?),
        ("std", "-") => Box::new(BufWriter::new(io::stdout().lock())),
        ("std", p) => Box::new(BufWriter::new(File::create(p)?)),
        (_, "-") => Box::new(BufWriter::with_capacity(BIG, io::stdout().lock())),
        (_, p) => Box::new(BufWriter::with_capacity(BIG, File::create(p)?)),
    };
    if kind == "asi" {
        return asi::run(tool, ins, w);
    }
    let std_open = |p: &str| -> io::Result<Box<dyn BufRead>> {
        Ok(match kind {
            "std" => Box::new(BufReader::new(File::open(p)?)),
            "std-1m" => Box::new(BufReader::with_capacity(BIG, File::open(p)?)),
            _ => Box::new(open_read(p)?),
        })
    };
    match tool {
        "wc" => wc(std_open(&ins[0])?, w, &ins[0], false).map(|()| 0),
        "wc-l" => wc(std_open(&ins[0])?, w, &ins[0], true).map(|()| 0),
        "cmp" => cmp(std_open(&ins[0])?, std_open(&ins[1])?, w, &ins[0], &ins[1]),
        "cut" => cut(std_open(&ins[0])?, w).map(|()| 0),
        "grep-c" => grep_c(std_open(&ins[1])?, w, ins[0].as_bytes()),
        _ => diff(std_open(&ins[0])?, std_open(&ins[1])?, w),
    }
}

fn open_read(p: &str) -> io::Result<Stream> {
    Stream::open(p, &ferry_cli::stream_options(OpenOptions::read_only()))
}

fn open_write(p: &str) -> io::Result<Stream> {
    Stream::open(p, &ferry_cli::stream_options(OpenOptions::write_truncate()))
}

// ---- the program logic, one source for std and compat ----

/// std-1m's cat and cp: each buffer the reader fills, written whole.
fn cat(mut r: impl BufRead, mut w: impl Write) -> io::Result<u64> {
    let mut total = 0u64;
    loop {
        let n = {
            let b = r.fill_buf()?;
            if b.is_empty() {
                break;
            }
            w.write_all(b)?;
            b.len()
        };
        r.consume(n);
        total += n as u64;
    }
    w.flush()?;
    Ok(total)
}

/// Counts as `wc` prints them in the C locale: lines, words (printable
/// non-space bytes start and continue one; ` \t\n\v\f\r` end it), bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) lines: u64,
    pub(crate) words: u64,
    pub(crate) bytes: u64,
    in_word: bool,
}

impl Counts {
    /// Counts `b`, the next piece of the input (`lines_only`: `wc -l`,
    /// lines and bytes).
    pub(crate) fn add(&mut self, b: &[u8], lines_only: bool) {
        self.bytes += b.len() as u64;
        self.lines += bytecount::count(b, b'\n') as u64;
        if lines_only {
            return;
        }
        for &c in b {
            match c {
                b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' => self.in_word = false,
                0x21..=0x7e => {
                    if !self.in_word {
                        self.words += 1;
                    }
                    self.in_word = true;
                }
                // Unprintable bytes neither start nor end a word.
                _ => {}
            }
        }
    }

    fn print(&self, mut w: impl Write, name: &str, lines_only: bool) -> io::Result<()> {
        if lines_only {
            writeln!(w, "{} {name}", self.lines)?;
        } else {
            // GNU's width for one regular file: the byte count's digits.
            let width = self.bytes.to_string().len();
            writeln!(
                w,
                "{:>width$} {:>width$} {:>width$} {name}",
                self.lines, self.words, self.bytes
            )?;
        }
        w.flush()
    }
}

fn wc(mut r: impl BufRead, w: impl Write, name: &str, lines_only: bool) -> io::Result<()> {
    let mut c = Counts::default();
    loop {
        let n = {
            let b = r.fill_buf()?;
            c.add(b, lines_only);
            b.len()
        };
        if n == 0 {
            break;
        }
        r.consume(n);
    }
    c.print(w, name, lines_only)
}

/// The first difference as GNU cmp reports it in the C locale (no output
/// when equal).
fn report_cmp(
    mut w: impl Write,
    an: &str,
    bn: &str,
    diff: Option<(u64, u64)>,
    eof: Option<&str>,
) -> io::Result<i32> {
    if let Some((byte, line)) = diff {
        writeln!(w, "{an} {bn} differ: char {byte}, line {line}")?;
        w.flush()?;
        return Ok(1);
    }
    if let Some(short) = eof {
        w.flush()?;
        eprintln!("cmp: EOF on {short}");
        return Ok(1);
    }
    w.flush()?;
    Ok(0)
}

fn cmp(
    mut a: impl BufRead,
    mut b: impl BufRead,
    w: impl Write,
    an: &str,
    bn: &str,
) -> io::Result<i32> {
    let (mut pos, mut lines) = (0u64, 1u64);
    loop {
        let (n, found, a_end, b_end) = {
            let x = a.fill_buf()?;
            let y = b.fill_buf()?;
            let n = x.len().min(y.len());
            let found = first_diff(&x[..n], &y[..n]);
            let upto = found.unwrap_or(n);
            lines += bytecount::count(&x[..upto], b'\n') as u64;
            (n, found, x.is_empty(), y.is_empty())
        };
        if let Some(i) = found {
            return report_cmp(w, an, bn, Some((pos + i as u64 + 1, lines)), None);
        }
        if a_end || b_end {
            let eof = match (a_end, b_end) {
                (true, true) => None,
                (true, false) => Some(an),
                _ => Some(bn),
            };
            return report_cmp(w, an, bn, None, eof);
        }
        pos += n as u64;
        a.consume(n);
        b.consume(n);
    }
}

/// Where two equally long slices first differ: 4 KiB pieces compared whole
/// (`==` is a `memcmp`), the byte found only in the piece that differs.
fn first_diff(x: &[u8], y: &[u8]) -> Option<usize> {
    const PIECE: usize = 4096;
    let mut at = 0;
    for (p, q) in x.chunks(PIECE).zip(y.chunks(PIECE)) {
        if p != q {
            return p.iter().zip(q).position(|(a, b)| a != b).map(|i| at + i);
        }
        at += p.len();
    }
    None
}

/// `cut -c1-10` on one line (without its newline), in the C locale: the
/// work every variant does per line.
fn cut_line(body: &[u8], w: &mut dyn Write) -> io::Result<()> {
    w.write_all(&body[..body.len().min(10)])?;
    w.write_all(b"\n")
}

/// The first ten bytes of each line (`cut -c1-10` in the C locale).
fn cut(mut r: impl BufRead, mut w: Box<dyn Write>) -> io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        cut_line(line.strip_suffix(b"\n").unwrap_or(&line), &mut *w)?;
    }
    w.flush()
}

/// The number of lines holding `pat` (`grep -c -F PAT`).
fn grep_c(mut r: impl BufRead, mut w: impl Write, pat: &[u8]) -> io::Result<i32> {
    let finder = memchr::memmem::Finder::new(pat);
    let mut line = Vec::new();
    let mut n = 0u64;
    loop {
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        n += u64::from(finder.find(&line).is_some());
    }
    writeln!(w, "{n}")?;
    w.flush()?;
    // grep's status: 0 if a line was selected, 1 if none.
    Ok(if n > 0 { 0 } else { 1 })
}

fn diff(mut a: impl BufRead, mut b: impl BufRead, mut w: impl Write) -> io::Result<i32> {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    a.read_to_end(&mut x)?;
    b.read_to_end(&mut y)?;
    let code = ferry_cli::diff_normal(&x, &y, &mut w)?;
    w.flush()?;
    Ok(code)
}

// ---- the same programs rewritten on the alloc-stream interface ----

mod asi {
    use super::*;

    const REGION: usize = BIG;

    pub fn cp(from: &str, to: &str) -> io::Result<()> {
        let s = open_read(from)?;
        let out = File::create(to)?;
        let g = &s;
        loop {
            let r = g.salloc(REGION)?;
            if r.is_empty() {
                return Ok(());
            }
            // Straight from the region, no library buffer.
            r.into_buf().write_all_to(&out)?;
        }
    }

    /// Regions go to the kernel as they are: a mapped region's pages into
    /// a pipe by reference (`Buf::write_all_to`), anything else with one
    /// write(2) from the region.
    pub fn cat(from: &str, out: &str) -> io::Result<()> {
        let target: Box<dyn AsFd> = if out == "-" {
            Box::new(io::stdout())
        } else {
            Box::new(File::create(out)?)
        };
        let s = open_read(from)?;
        let g = &s;
        loop {
            let r = g.salloc(REGION)?;
            if r.is_empty() {
                return Ok(());
            }
            r.into_buf().write_all_to(target.as_fd())?;
        }
    }

    pub fn run(tool: &str, ins: &[String], mut w: Box<dyn Write>) -> io::Result<i32> {
        match tool {
            "wc" | "wc-l" => {
                let lines_only = tool == "wc-l";
                let mut c = Counts::default();
                let s = open_read(&ins[0])?;
                let g = &s;
                loop {
                    let r = g.salloc(REGION)?;
                    if r.is_empty() {
                        break;
                    }
                    c.add(&r, lines_only);
                }
                c.print(w, &ins[0], lines_only).map(|()| 0)
            }
            "cmp" => {
                // Regions of regular files are full until the end, so the
                // shorter region marks the shorter file's end.
                let (sa, sb) = (open_read(&ins[0])?, open_read(&ins[1])?);
                let (ga, gb) = (&sa, &sb);
                let (mut pos, mut lines) = (0u64, 1u64);
                loop {
                    let x = ga.salloc(REGION)?;
                    let y = gb.salloc(REGION)?;
                    let n = x.len().min(y.len());
                    if let Some(i) = first_diff(&x[..n], &y[..n]) {
                        lines += bytecount::count(&x[..i], b'\n') as u64;
                        let at = Some((pos + i as u64 + 1, lines));
                        return report_cmp(w, &ins[0], &ins[1], at, None);
                    }
                    lines += bytecount::count(&x[..n], b'\n') as u64;
                    pos += n as u64;
                    if x.len() == y.len() {
                        if x.is_empty() {
                            return report_cmp(w, &ins[0], &ins[1], None, None);
                        }
                        continue;
                    }
                    let eof = if x.len() < y.len() { &ins[0] } else { &ins[1] };
                    return report_cmp(w, &ins[0], &ins[1], None, Some(eof));
                }
            }
            "cut" => {
                // Line ends found in the region: no line is copied out.
                let s = open_read(&ins[0])?;
                let g = &s;
                ferry::stream::for_each_block(
                    g,
                    REGION,
                    b'\n',
                    |e| e,
                    |block| {
                        let mut start = 0;
                        for i in memchr::memchr_iter(b'\n', block) {
                            cut_line(&block[start..i], &mut *w)?;
                            start = i + 1;
                        }
                        Ok(true)
                    },
                )?;
                w.flush().map(|()| 0)
            }
            "grep-c" => {
                let finder = memchr::memmem::Finder::new(ins[0].as_bytes());
                let s = open_read(&ins[1])?;
                let g = &s;
                let mut n = 0u64;
                ferry::stream::for_each_block(
                    g,
                    REGION,
                    b'\n',
                    |e| e,
                    |block| {
                        // Each line with a match counts once.
                        let mut at = 0usize;
                        while let Some(i) = finder.find(&block[at..]) {
                            n += 1;
                            let hit = at + i;
                            match memchr::memchr(b'\n', &block[hit..]) {
                                Some(e) => at = hit + e + 1,
                                None => break,
                            }
                        }
                        Ok(true)
                    },
                )?;
                writeln!(w, "{n}")?;
                w.flush()?;
                Ok(if n > 0 { 0 } else { 1 })
            }
            _ => {
                // Both files mapped (read if no lease can be had); lines
                // are slices of the mappings.
                let map = |p: &str| -> io::Result<Buf> {
                    let f = File::open(p)?;
                    let len = f.metadata()?.len();
                    Buf::map_file(&f, 0..len).or_else(|_| Buf::read_file(&f, 0..len))
                };
                let (a, b) = (map(&ins[0])?, map(&ins[1])?);
                let code = ferry_cli::diff_normal(&a, &b, &mut w)?;
                w.flush()?;
                Ok(code)
            }
        }
    }
}
