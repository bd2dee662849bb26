//! `ferry wc`: GNU wc — the same counts in every locale (words as GNU 9
//! defines them: printable non-space characters, with no-break spaces as
//! separators and unprintable characters neither), the same columns.
//!
//! Input comes through alloc-stream regions (mapped for local files), lines
//! are counted with SIMD, words with a branch-free table loop that only
//! leaves the fast path for non-ASCII bytes.

mod count;
mod files0;

use super::common::{self, Tool};
use super::locale::{self, WideTable};
use count::{count_file, Counts, Want};
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;

const HELP: &str = "Usage: ferry wc [OPTION]... [FILE]...
Print newline, word, and byte counts for each FILE, and a total line if
more than one FILE is specified.  A word is a non-zero-length sequence of
printable characters delimited by white space.

With no FILE, or when FILE is -, read standard input.

The options below may be used to select which counts are printed, always in
the following order: newline, word, character, byte, maximum line length.
  -c, --bytes            print the byte counts
  -m, --chars            print the character counts
  -l, --lines            print the newline counts
  -L, --max-line-length  print the maximum display width
  -w, --words            print the word counts
      --files0-from=F    read input from the files specified by
                           NUL-terminated names in file F;
                           If F is - then read names from standard input
      --help        display this help and exit
      --version     output version information and exit
";

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let charset = locale::init();
    let mut w = Want::default();
    let mut files: Vec<OsString> = Vec::new();
    let mut files0: Option<OsString> = None;
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 1);
        match arg {
            Short('c') | Long("bytes") => w.bytes = true,
            Short('m') | Long("chars") => w.chars = true,
            Short('l') | Long("lines") => w.lines = true,
            Short('L') | Long("max-line-length") => w.maxlen = true,
            Short('w') | Long("words") => w.words = true,
            Long("files0-from") => match p.value() {
                Ok(v) => files0 = Some(v),
                Err(e) => {
                    t.bad_option(e);
                    return 1;
                }
            },
            Value(v) => files.push(v),
            other => {
                t.bad_option(other.unexpected());
                return 1;
            }
        }
    }
    if w.count() == 0 {
        w.lines = true;
        w.words = true;
        w.bytes = true;
    }
    let report = |width| Report {
        want: w,
        charset,
        width,
        status: 0,
        total: Counts::default(),
        wide: WideTable::new(),
        out: Vec::new(),
        eager: rustix::termios::isatty(std::io::stdout()),
        stdin_gone: false,
    };
    if let Some(from) = files0 {
        if let Some(extra) = files.first() {
            t.error(format_args!(
                "extra operand {}",
                common::quote_always(&common::os_to_string(extra))
            ));
            eprintln!("file operands cannot be combined with --files0-from");
            t.hint();
            return 1;
        }
        return files0::run(t, &from, &w, report);
    }
    let named = !files.is_empty();
    if files.is_empty() {
        files.push("-".into());
    }
    let (width, sizes) = number_width(&files, &w);
    let mut r = report(width);
    for (i, f) in files.iter().enumerate() {
        let size = sizes.get(i).copied().flatten();
        if let Err(status) = r.file(t, f, named.then_some(f.as_bytes()), size) {
            return status;
        }
    }
    r.finish(t, files.len() > 1)
}

/// The counts of one run: each input's line as it is counted, the total
/// at the end.
struct Report {
    want: Want,
    charset: locale::Charset,
    width: usize,
    status: i32,
    total: Counts,
    wide: WideTable,
    out: Vec<u8>,
    /// Each line is written as it is counted (a terminal); otherwise lines
    /// are written in blocks, as GNU's buffered standard output does.
    eager: bool,
    /// Standard input was read and found closed (EBADF): GNU wc's closing
    /// it at the end fails too, which it reports as `-: …` (status 1).
    stdin_gone: bool,
}

impl Report {
    /// Counts `f` and prints its line (`label`: its name, if named;
    /// `size`: its size if it was looked at as a regular file).
    /// `Err(status)` if standard output failed.
    fn file(
        &mut self,
        t: &Tool,
        f: &OsString,
        label: Option<&[u8]>,
        size: Option<u64>,
    ) -> Result<(), i32> {
        if f.is_empty() {
            self.flush_out(t)?;
            t.error(format_args!("invalid zero-length file name"));
            self.status = 1;
            return Ok(());
        }
        let (w, width) = (self.want, self.width);
        match count_file(f, size, w, self.charset, &mut self.wide) {
            Ok(c) => {
                add(&mut self.total, &c);
                line(&mut self.out, &c, &w, width, label);
            }
            Err((e, counts)) => {
                // Standard input read for want of operands is named as
                // GNU names it.
                let name = match label {
                    None if f == "-" => common::quote_always("standard input"),
                    _ => common::quotef(f),
                };
                self.flush_out(t)?;
                t.file_error(&name, &e);
                self.stdin_gone |= f == "-" && e.raw_os_error() == Some(libc::EBADF);
                self.status = 1;
                if let Some(c) = counts {
                    add(&mut self.total, &c);
                    line(&mut self.out, &c, &w, width, label);
                }
            }
        }
        if self.eager || self.out.len() >= OUT_BLOCK {
            flush(&mut self.out).map_err(|e| write_failed(t, &e))?;
        }
        Ok(())
    }

    /// Writes the lines counted so far: what was counted before a message
    /// comes out before it (GNU's `error` flushes standard output first).
    /// `Err(status)` if standard output failed.
    fn flush_out(&mut self, t: &Tool) -> Result<(), i32> {
        flush(&mut self.out).map_err(|e| write_failed(t, &e))
    }

    /// The total line (if `total`), then the run's status.
    fn finish(mut self, t: &Tool, total: bool) -> i32 {
        if total {
            let (w, width) = (self.want, self.width);
            line(&mut self.out, &self.total, &w, width, Some(b"total"));
        }
        match flush(&mut self.out) {
            Ok(()) if self.stdin_gone => {
                t.file_error("-", &io::Error::from_raw_os_error(libc::EBADF));
                1
            }
            Ok(()) => self.status,
            Err(e) => write_failed(t, &e),
        }
    }
}

/// GNU wc's words for standard output failing: "write error", with the
/// reason only for a closed one (its `close_stdout` sees the error of an
/// earlier write, whose errno is gone); a reader gone is SIGPIPE.
fn write_failed(t: &Tool, e: &io::Error) -> i32 {
    if common::is_broken_pipe(e) || e.raw_os_error() == Some(libc::EBADF) {
        return common::write_failed(t, e);
    }
    t.error(format_args!("write error"));
    1
}

fn flush(out: &mut Vec<u8>) -> io::Result<()> {
    let r = super::output::write_all_fd(out);
    out.clear();
    r
}

fn add(t: &mut Counts, c: &Counts) {
    t.lines += c.lines;
    t.words += c.words;
    t.chars += c.chars;
    t.bytes += c.bytes;
    t.maxlen = t.maxlen.max(c.maxlen);
}

fn line(out: &mut Vec<u8>, c: &Counts, w: &Want, width: usize, label: Option<&[u8]>) {
    let mut first = true;
    for (on, v) in [
        (w.lines, c.lines),
        (w.words, c.words),
        (w.chars, c.chars),
        (w.bytes, c.bytes),
        (w.maxlen, c.maxlen),
    ] {
        if on {
            if !first {
                out.push(b' ');
            }
            out.extend_from_slice(format!("{v:>width$}").as_bytes());
            first = false;
        }
    }
    if let Some(l) = label {
        out.push(b' ');
        // A name with a newline is quoted, so that each count keeps to its
        // line (GNU wc since 9.0); any other is written as its bytes.
        if l.contains(&b'\n') {
            out.extend_from_slice(&common::shell_quote_bytes(l));
        } else {
            out.extend_from_slice(l);
        }
    }
    out.push(b'\n');
}

/// Lines not written to a terminal go out in blocks of this many bytes.
const OUT_BLOCK: usize = 4096;

/// GNU's column width: digits of the total size of the regular files, at
/// least 7 if any input is not a regular file — and 1 when there is a
/// single input and a single count, or when the first input cannot be
/// examined. With it, each input's size where it is a regular file (none
/// looked at for a single input and count).
fn number_width(files: &[OsString], w: &Want) -> (usize, Vec<Option<u64>>) {
    if files.len() == 1 && w.count() == 1 {
        return (1, Vec::new());
    }
    let mut total: u64 = 0;
    let mut min = 1;
    let mut sizes = Vec::with_capacity(files.len());
    for f in files {
        let st = if f == "-" {
            // A standard input left closed is held by /dev/null opened
            // write-only (`common::occupy_closed_stdin`): GNU's fstat of
            // it fails.
            match rustix::fs::fcntl_getfl(std::io::stdin()) {
                Ok(fl) if fl & rustix::fs::OFlags::RWMODE == rustix::fs::OFlags::WRONLY => {
                    Err(rustix::io::Errno::BADF)
                }
                _ => rustix::fs::fstat(std::io::stdin()),
            }
        } else {
            rustix::fs::stat(f.as_os_str())
        };
        // GNU skips inputs it cannot examine.
        let mut size = None;
        if let Ok(st) = st {
            if common::is_reg(&st) {
                total += st.st_size as u64;
                size = Some(st.st_size as u64);
            } else {
                min = 7;
            }
        }
        sizes.push(size);
    }
    let digits = total.to_string().len();
    (digits.max(min), sizes)
}
