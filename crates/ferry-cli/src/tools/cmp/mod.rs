//! `ferry cmp`: GNU cmp (diffutils). Both files come through alloc-stream
//! regions (mapped for local files) and are compared a megabyte at a time
//! with no copy ([`sequential`]; large files on two cores first,
//! [`parallel`]); newlines are counted with SIMD as the bytes are compared,
//! where a line number may be printed (GNU counts them as it reads: reading
//! the file again to count them reported lines of whatever a writer had put
//! there since). A file cut short under its mapping ends where it ends
//! now, in every mode: the zeros its lost pages read as are never
//! compared (`sequential`'s doc).

mod parallel;
mod sequential;

use super::common::{self, Tool};
use ferry::Stream;
use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStrExt;

const HELP: &str = "Usage: ferry cmp [OPTION]... FILE1 [FILE2 [SKIP1 [SKIP2]]]
Compare two files byte by byte.

The optional SKIP1 and SKIP2 specify the number of bytes to skip
at the beginning of each file (zero by default).

  -b, --print-bytes          print differing bytes
  -i, --ignore-initial=SKIP         skip first SKIP bytes of both inputs
  -i, --ignore-initial=SKIP1:SKIP2  skip first SKIP1 bytes of FILE1 and
                                      first SKIP2 bytes of FILE2
  -l, --verbose              output byte numbers and differing byte values
  -n, --bytes=LIMIT          compare at most LIMIT bytes
  -s, --quiet, --silent      suppress all normal output
      --help             display this help and exit
  -v, --version          output version information and exit

SKIP values may be followed by the following multiplicative suffixes:
kB 1000, K 1024, MB 1,000,000, M 1,048,576,
GB 1,000,000,000, G 1,073,741,824, and so on for T, P, E.

If a FILE is '-' or missing, read standard input.
Exit status is 0 if inputs are the same, 1 if different, 2 if trouble.
";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    First,
    All,
    Silent,
}

const CHUNK: usize = 1 << 20;

/// What to compare and how to report it.
#[derive(Clone, Copy)]
struct Opts {
    mode: Mode,
    /// -b: show the differing bytes too.
    bytes: bool,
    /// -n: compare at most this many bytes.
    limit: Option<u64>,
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    super::locale::init();
    let mut o = Opts {
        mode: Mode::First,
        bytes: false,
        limit: None,
    };
    let mut skip = [0u64; 2];
    let mut ops: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    let bad = |what: &str, v: &OsString| {
        t.usage_error(format_args!(
            "invalid --{what} value '{}'",
            common::os_to_string(v)
        ));
        2
    };
    loop {
        let arg = common::next_arg!(t, p, HELP, 2);
        match arg {
            Short('b') | Long("print-bytes") => o.bytes = true,
            Short('l') | Long("verbose") => o.mode = Mode::All,
            Short('s') | Long("quiet") | Long("silent") => o.mode = Mode::Silent,
            Short('i') | Long("ignore-initial") => {
                let v = match p.value() {
                    Ok(v) => v,
                    Err(e) => {
                        t.bad_option(e);
                        return 2;
                    }
                };
                // SKIP or SKIP1:SKIP2; GNU names the whole value when the
                // first number is bad, the part after the colon otherwise.
                let text = v.to_str().unwrap_or("");
                let (a, b) = text.split_once(':').unwrap_or((text, text));
                match (parse_number(a), parse_number(b)) {
                    (Some(x), Some(y)) => skip = [x, y],
                    (None, _) => return bad("ignore-initial", &v),
                    (Some(_), None) => return bad("ignore-initial", &OsString::from(b)),
                }
            }
            Short('n') | Long("bytes") => {
                let v = match p.value() {
                    Ok(v) => v,
                    Err(e) => {
                        t.bad_option(e);
                        return 2;
                    }
                };
                match v.to_str().and_then(parse_number) {
                    Some(n) => o.limit = Some(n),
                    None => return bad("bytes", &v),
                }
            }
            Short('v') => {
                return common::version(t);
            }
            Value(v) => ops.push(v),
            other => {
                t.bad_option(other.unexpected());
                return 2;
            }
        }
    }
    if ops.is_empty() {
        t.usage_error(format_args!("missing operand after 'cmp'"));
        return 2;
    }
    if ops.len() > 4 {
        t.usage_error(format_args!(
            "extra operand '{}'",
            common::os_to_string(&ops[4])
        ));
        return 2;
    }
    // SKIP operands: the larger of each and the option's, as GNU's.
    for (k, s) in ops.iter().skip(2).enumerate() {
        match s.to_str().and_then(parse_number) {
            Some(n) => skip[k] = skip[k].max(n),
            None => return bad("ignore-initial", s),
        }
    }
    let a = ops[0].clone();
    let b = ops.get(1).cloned().unwrap_or_else(|| "-".into());
    match compare(t, &a, &b, skip, o) {
        Ok(code) => code,
        Err(e) => {
            // Only writes fail here (read errors are reported where they
            // happen); diffutils words it this way.
            common::end_if_sigpipe(&e);
            t.error(format_args!("standard output: {}", common::describe(&e)));
            2
        }
    }
}

/// A byte count as GNU's option parser reads one: leading blanks and a
/// `+` allowed, decimal, octal (leading `0`) or hexadecimal (`0x`), then
/// an optional suffix — `k`/`K`, `M`, `G`, `T`, `P`, `E` (powers of
/// 1024; with `iB` after them too) or with `B` after them (powers of
/// 1000). Overflow, a sign or anything else: `None`.
fn parse_number(s: &str) -> Option<u64> {
    let s = s.trim_start_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']);
    let s = s.strip_prefix('+').unwrap_or(s);
    let (radix, body) = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        (16, h)
    } else if s.len() > 1 && s.starts_with('0') {
        (8, &s[1..])
    } else {
        (10, s)
    };
    let digits = body
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(body.len());
    let n = if digits == 0 {
        // "0x" alone is the number 0 followed by "x"; "0" is 0.
        if radix == 16 || s.is_empty() {
            return None;
        }
        0
    } else {
        u64::from_str_radix(&body[..digits], radix).ok()?
    };
    let rest = &body[digits..];
    let mut chars = rest.chars();
    let Some(unit) = chars.next() else {
        return Some(n);
    };
    if unit != 'k' && !"KMGTPE".contains(unit) {
        return None;
    }
    let power = "KMGTPE".find(unit.to_ascii_uppercase())? as u32 + 1;
    let base: u64 = match chars.as_str() {
        "" | "iB" => 1024,
        "B" => 1000,
        _ => return None,
    };
    n.checked_mul(base.checked_pow(power)?)
}

fn open(t: &Tool, name: &OsString) -> Result<Stream, ()> {
    let r = if name == "-" {
        Stream::stdin()
    } else {
        Stream::open(name, &common::input_options())
    };
    r.map_err(|e| t.file_error_bytes(name.as_bytes(), &common::os_only(e)))
}

/// Bytes left to read in a regular file (for -l's column width).
fn remaining(name: &OsString, s: &Stream) -> Option<u64> {
    let st = if name == "-" {
        rustix::fs::fstat(std::io::stdin()).ok()?
    } else {
        rustix::fs::stat(name.as_os_str()).ok()?
    };
    common::is_reg(&st).then(|| (st.st_size as u64).saturating_sub(s.position()))
}

/// True if `an` and `bn` are the same file (device and inode) and would
/// be read from the same offset: GNU cmp's test for identical inputs.
fn same_place(an: &OsString, bn: &OsString, skip: [u64; 2]) -> bool {
    let at = |n: &OsString, k: u64| {
        if n == "-" {
            let st = rustix::fs::fstat(std::io::stdin()).ok()?;
            // A pipe has no offset: both "-" are the same one anyway.
            let pos = rustix::fs::seek(std::io::stdin(), rustix::fs::SeekFrom::Current(0))
                .map_or(Some(u64::MAX), Some)?;
            Some((st.st_dev, st.st_ino, pos.saturating_add(k)))
        } else {
            let st = rustix::fs::stat(n.as_os_str()).ok()?;
            Some((st.st_dev, st.st_ino, k))
        }
    };
    match (at(an, skip[0]), at(bn, skip[1])) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

fn compare(t: &Tool, an: &OsString, bn: &OsString, skip: [u64; 2], o: Opts) -> io::Result<i32> {
    let mode = o.mode;
    let (na, nb) = (an.as_bytes(), bn.as_bytes());
    // The same file, from the same place: equal without reading (as GNU:
    // any kind of file, `cmp - -` and `cmp /dev/zero /dev/zero` too).
    if same_place(an, bn, skip) {
        return Ok(0);
    }
    let Ok(mut sa) = open(t, an) else {
        return Ok(2);
    };
    let Ok(mut sb) = open(t, bn) else {
        return Ok(2);
    };
    for (s, (k, name)) in [&mut sa, &mut sb]
        .into_iter()
        .zip(skip.iter().zip([na, nb]))
    {
        if *k > 0 && s.seek_to(io::SeekFrom::Current(*k as i64)).is_err() {
            // Not seekable: read and drop.
            let mut left = *k;
            while left > 0 {
                let r = s.salloc(left.min(CHUNK as u64) as usize).map_err(|e| {
                    t.file_error_bytes(name, &common::os_only(e));
                    io::Error::other("")
                });
                let Ok(r) = r else { return Ok(2) };
                if r.is_empty() {
                    break;
                }
                left -= r.len() as u64;
            }
        }
    }
    // Large regular files, first difference or silent: compare the two
    // halves on two cores (memory bandwidth, not instructions, is the
    // limit of one core here).
    if mode != Mode::All && an != "-" && bn != "-" {
        if let (Some(la), Some(lb)) = (remaining(an, &sa), remaining(bn, &sb)) {
            // Within the limit, both files' lengths are what -n leaves.
            let (la, lb) = match o.limit {
                Some(l) => (la.min(l), lb.min(l)),
                None => (la, lb),
            };
            let n = la.min(lb);
            if n >= parallel::PARALLEL_MIN {
                let found = parallel::parallel_first_difference(an, bn, skip, n);
                // The bytes compared must still be the files' (a file cut
                // short under a mapping reads as zeros in part of the
                // page where it now ends): if not, the sequential path
                // finds where it ends.
                let found = found.filter(|(diff, _)| {
                    let upto = diff.map_or(n, |at| at + 1);
                    still_holds(&sa, skip[0] + upto) && still_holds(&sb, skip[1] + upto)
                });
                if let Some((diff, lines)) = found {
                    let start = match diff {
                        // A difference inside the common part: report it
                        // from the sequential path, starting just before it.
                        Some(at) => at - at % CHUNK as u64,
                        // Equal over the whole (common) length.
                        None if la == lb => return Ok(0),
                        // Equal up to the shorter end: let the sequential
                        // path find the end from near there.
                        None => n - n % CHUNK as u64,
                    };
                    let k = (start / CHUNK as u64) as usize;
                    let before = (
                        lines[..k].iter().map(|c| c.0).sum(),
                        k > 0 && lines[k - 1].1,
                    );
                    let from = (start, before);
                    return sequential::finish_from(t, (an, bn), sa, sb, skip, from, o);
                }
            }
        }
    }
    sequential::finish_from(t, (an, bn), sa, sb, skip, (0, (0, false)), o)
}

/// False if `s` maps a file that is now shorter than `upto` bytes.
fn still_holds(s: &Stream, upto: u64) -> bool {
    !s.is_mapped() || s.len().is_ok_and(|size| size >= upto)
}

/// A byte as -b shows it: printable as itself, else `cat -v`'s notation
/// (`^A`, `^?`, `M-a`, `M-^@`).
fn shown(b: u8) -> String {
    let mut s = String::new();
    let mut c = b;
    if !(0x20..0x7f).contains(&c) {
        if c >= 0x80 {
            s.push_str("M-");
            c -= 0x80;
        }
        if c < 0x20 {
            s.push('^');
            c += 0x40;
        } else if c == 0x7f {
            s.push('^');
            c = b'?';
        }
    }
    s.push(c as char);
    s
}

/// Index of the first differing byte of two equal-length slices that differ.
fn first_difference(x: &[u8], y: &[u8]) -> usize {
    // Narrow down in 4 KiB steps with the (vectorised) slice comparison.
    let mut at = 0;
    for (cx, cy) in x.chunks(4096).zip(y.chunks(4096)) {
        if cx != cy {
            return at + cx.iter().zip(cy).position(|(p, q)| p != q).unwrap_or(0);
        }
        at += cx.len();
    }
    at
}
