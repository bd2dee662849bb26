//! `ferry cut`: GNU cut. Lines are found in alloc-stream regions with
//! `memchr` and cut in place; only the selected bytes are copied, once,
//! into the output buffer.

use super::common::{self, Tool};
use super::output::Out;
use ferry::Stream;
use std::ffi::OsString;
use std::io;

const HELP: &str = "Usage: ferry cut OPTION... [FILE]...
Print selected parts of lines from each FILE to standard output.

With no FILE, or when FILE is -, read standard input.

  -b, --bytes=LIST        select only these bytes
  -c, --characters=LIST   select only these characters
  -d, --delimiter=DELIM   use DELIM instead of TAB for field delimiter
  -f, --fields=LIST       select only these fields;  also print any line
                            that contains no delimiter character, unless
                            the -s option is specified
  -n                      (ignored)
      --complement        complement the set of selected bytes, characters
                            or fields
  -s, --only-delimited    do not print lines not containing delimiters
      --output-delimiter=STRING  use STRING as the output delimiter
                            the default is to use the input delimiter
  -z, --zero-terminated   line delimiter is NUL, not newline
      --help        display this help and exit
      --version     output version information and exit
";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bytes,
    Fields,
}

/// Selected positions: sorted, merged, 1-based inclusive ranges.
struct Ranges(Vec<(u64, u64)>);

impl Ranges {
    #[inline]
    fn selects(&self, i: u64) -> bool {
        self.0.iter().any(|&(lo, hi)| lo <= i && i <= hi)
    }

    fn complement(&self) -> Ranges {
        let mut out = Vec::new();
        let mut next = 1u64;
        for &(lo, hi) in &self.0 {
            if lo > next {
                out.push((next, lo - 1));
            }
            if hi == u64::MAX {
                return Ranges(out);
            }
            next = hi + 1;
        }
        out.push((next, u64::MAX));
        Ranges(out)
    }
}

/// Quotes a value in messages as gnulib does: 'x' in the C locale, ‘x’ in
/// UTF-8 ones.
fn quote(s: &str, utf8: bool) -> String {
    if utf8 {
        format!("\u{2018}{s}\u{2019}")
    } else {
        format!("'{s}'")
    }
}

/// Parses a LIST ("1,3-5,7-") as GNU does, with GNU's messages.
fn parse_list(list: &str, kind: Kind, utf8: bool) -> Result<Ranges, String> {
    // GNU's reading of a list, character by character: numbers, `-` for a
    // range, `,` or a blank between items; the first fault ends it with
    // GNU's message for that fault.
    let fields = kind == Kind::Fields;
    let numbered = if fields {
        "fields are numbered from 1"
    } else {
        "byte/character positions are numbered from 1"
    };
    let mut v: Vec<(u64, u64)> = Vec::new();
    let b = list.as_bytes();
    let (mut value, mut initial) = (0u64, 1u64);
    let (mut lhs, mut rhs, mut dash) = (false, false, false);
    let mut digits_from: Option<usize> = None;
    let mut i = 0;
    loop {
        match b.get(i).copied() {
            Some(b'-') => {
                digits_from = None;
                if dash {
                    return Err(if fields {
                        "invalid field range"
                    } else {
                        "invalid byte or character range"
                    }
                    .into());
                }
                dash = true;
                if lhs && value == 0 {
                    return Err(numbered.into());
                }
                initial = if lhs { value } else { 1 };
                value = 0;
                i += 1;
            }
            c @ (None | Some(b',' | b' ' | b'\t')) => {
                digits_from = None;
                if dash {
                    dash = false;
                    if !lhs && !rhs {
                        return Err("invalid range with no endpoint: -".into());
                    }
                    if !rhs {
                        v.push((initial, u64::MAX));
                    } else if value < initial {
                        return Err("invalid decreasing range".into());
                    } else {
                        v.push((initial, value));
                    }
                } else if value == 0 {
                    return Err(numbered.into());
                } else {
                    v.push((value, value));
                }
                value = 0;
                if c.is_none() {
                    break;
                }
                i += 1;
                lhs = false;
                rhs = false;
            }
            Some(d) if d.is_ascii_digit() => {
                let from = *digits_from.get_or_insert(i);
                if dash {
                    rhs = true;
                } else {
                    lhs = true;
                }
                match value
                    .checked_mul(10)
                    .and_then(|x| x.checked_add(u64::from(d - b'0')))
                    .filter(|&x| x != u64::MAX)
                {
                    Some(x) => value = x,
                    None => {
                        let run = b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
                        return Err(format!(
                            "{} {} is too large",
                            if fields {
                                "field number"
                            } else {
                                "byte/character offset"
                            },
                            quote(&list[from..from + run], utf8)
                        ));
                    }
                }
                i += 1;
            }
            // Only ASCII came before, so `i` starts a character.
            Some(_) => {
                return Err(format!(
                    "invalid {} {}",
                    if fields {
                        "field value"
                    } else {
                        "byte/character position"
                    },
                    quote(&list[i..], utf8)
                ))
            }
        }
    }
    v.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::new();
    for (lo, hi) in v {
        match merged.last_mut() {
            // Overlapping ranges merge; adjacent ones stay apart (an output
            // delimiter goes between them).
            Some(last) if lo <= last.1 => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    Ok(Ranges(merged))
}

struct Cut {
    kind: Kind,
    ranges: Ranges,
    delim: u8,
    out_delim: Option<Vec<u8>>,
    only_delimited: bool,
    eol: u8,
    /// For -b: the selected prefix is one range from 1 (the common case).
    prefix: Option<u64>,
}

impl Cut {
    #[inline]
    fn line(&self, line: &[u8], out: &mut Out) -> io::Result<()> {
        match self.kind {
            Kind::Bytes => self.bytes(line, out),
            Kind::Fields => self.fields(line, out),
        }
    }

    #[inline]
    fn bytes(&self, line: &[u8], out: &mut Out) -> io::Result<()> {
        if let Some(n) = self.prefix {
            let k = (n.min(line.len() as u64)) as usize;
            out.write(&line[..k])?;
            return out.byte(self.eol);
        }
        let mut printed = false;
        for &(lo, hi) in &self.ranges.0 {
            if lo > line.len() as u64 {
                break;
            }
            let a = (lo - 1) as usize;
            let b = hi.min(line.len() as u64) as usize;
            if let Some(d) = &self.out_delim {
                if printed {
                    out.write(d)?;
                }
            }
            out.write(&line[a..b])?;
            printed = true;
        }
        out.byte(self.eol)
    }

    /// Fields when the delimiter is the line terminator too (`-d $'\n'`):
    /// GNU's reading, where every terminator but the input's last one
    /// separates fields, so the whole input is one line. `-s` and the
    /// output's final terminator follow GNU's field loop: the first field
    /// counts as delimited if a terminator follows it, even the last one;
    /// a selected field that ends at that last terminator does not count
    /// as printed, and an empty field after it is no field.
    fn delimiter_ends_lines(&self, data: &[u8], out: &mut Out) -> io::Result<()> {
        let d = self.delim;
        let od: &[u8] = match &self.out_delim {
            Some(o) => o,
            None => std::slice::from_ref(&self.delim),
        };
        let sel1 = self.ranges.selects(1);
        // Only when the answer hangs on whether field 1 is delimited.
        let first_in_one = self.only_delimited == sel1;
        if data.is_empty() {
            return Ok(());
        }
        let mut pos = 0usize;
        let mut idx = 1u64;
        let mut found = false;
        loop {
            if idx == 1 && first_in_one {
                if pos >= data.len() {
                    break;
                }
                let end = memchr::memchr(d, &data[pos..]).map_or(data.len(), |i| pos + i + 1);
                let field = &data[pos..end];
                pos = end;
                if field.last() != Some(&d) {
                    if !self.only_delimited {
                        out.write(field)?;
                        out.byte(self.eol)?;
                    }
                    continue;
                }
                if sel1 {
                    out.write(&field[..field.len() - 1])?;
                    found |= pos < data.len();
                }
                idx += 1;
            }
            // The next field: up to a delimiter or the end.
            let end = memchr::memchr(d, &data[pos..]).map_or(data.len(), |i| pos + i);
            if self.ranges.selects(idx) {
                if found {
                    out.write(od)?;
                }
                found = true;
                out.write(&data[pos..end])?;
            }
            pos = (end + 1).min(data.len());
            // The input's last terminator ends the line, not a field.
            if end + 1 < data.len() {
                idx += 1;
                continue;
            }
            if found || !(self.only_delimited && idx == 1) {
                out.byte(self.eol)?;
            }
            break;
        }
        Ok(())
    }

    fn fields(&self, line: &[u8], out: &mut Out) -> io::Result<()> {
        if memchr::memchr(self.delim, line).is_none() {
            if self.only_delimited {
                return Ok(());
            }
            out.write(line)?;
            return out.byte(self.eol);
        }
        let od: &[u8] = match &self.out_delim {
            Some(d) => d,
            None => std::slice::from_ref(&self.delim),
        };
        let mut printed = false;
        for (k, field) in line.split(|&b| b == self.delim).enumerate() {
            if self.ranges.selects(k as u64 + 1) {
                if printed {
                    out.write(od)?;
                }
                out.write(field)?;
                printed = true;
            }
        }
        out.byte(self.eol)
    }
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let utf8 = super::locale::init() == super::locale::Charset::Utf8;
    let mut list: Option<(Kind, String)> = None;
    let mut delim: Option<Vec<u8>> = None;
    let mut out_delim: Option<Vec<u8>> = None;
    let mut only_delimited = false;
    let mut complement = false;
    let mut eol = b'\n';
    let mut files: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    let usage = |msg: &str| {
        t.usage_error(format_args!("{msg}"));
        1
    };
    loop {
        let arg = common::next_arg!(t, p, HELP, 1);
        let kind = match arg {
            Short('b') | Long("bytes") | Short('c') | Long("characters") => Some(Kind::Bytes),
            Short('f') | Long("fields") => Some(Kind::Fields),
            _ => None,
        };
        if let Some(k) = kind {
            let v = match p.value() {
                Ok(v) => common::os_to_string(&v),
                Err(e) => {
                    t.bad_option(e);
                    return 1;
                }
            };
            if list.is_some() {
                return usage("only one list may be specified");
            }
            list = Some((k, v));
            continue;
        }
        match arg {
            Short('d') | Long("delimiter") => match p.value() {
                Ok(v) => {
                    use std::os::unix::ffi::OsStrExt;
                    // A byte, as GNU's: `-d $'\255'` in any locale.
                    delim = Some(v.as_bytes().to_vec())
                }
                Err(e) => {
                    t.bad_option(e);
                    return 1;
                }
            },
            Long("output-delimiter") => match p.value() {
                Ok(v) => {
                    use std::os::unix::ffi::OsStrExt;
                    out_delim = Some(v.as_bytes().to_vec())
                }
                Err(e) => {
                    t.bad_option(e);
                    return 1;
                }
            },
            Short('n') => {}
            Short('s') | Long("only-delimited") => only_delimited = true,
            Long("complement") => complement = true,
            Short('z') | Long("zero-terminated") => eol = 0,
            Value(v) => files.push(v),
            other => {
                t.bad_option(other.unexpected());
                return 1;
            }
        }
    }
    let Some((kind, list)) = list else {
        return usage("you must specify a list of bytes, characters, or fields");
    };
    let delim = match &delim {
        Some(d) if kind == Kind::Bytes => {
            let _ = d;
            return usage("an input delimiter may be specified only when operating on fields");
        }
        Some(d) if d.len() == 1 => d[0],
        Some(d) if d.is_empty() => b'\0',
        Some(_) => return usage("the delimiter must be a single character"),
        None => b'\t',
    };
    if only_delimited && kind == Kind::Bytes {
        return usage(
            "suppressing non-delimited lines makes sense\n\tonly when operating on fields",
        );
    }
    let mut ranges = match parse_list(&list, kind, utf8) {
        Ok(r) => r,
        Err(m) => return usage(&m),
    };
    if complement {
        ranges = ranges.complement();
    }
    let prefix = match (kind, ranges.0.as_slice(), &out_delim) {
        (Kind::Bytes, [(1, hi)], _) => Some(*hi),
        _ => None,
    };
    let cut = Cut {
        kind,
        ranges,
        delim,
        // GNU: an empty --output-delimiter is the NUL byte.
        out_delim: if out_delim.as_ref().is_some_and(|d| d.is_empty()) {
            Some(vec![0])
        } else {
            out_delim
        },
        only_delimited,
        eol,
        prefix,
    };
    if files.is_empty() {
        files.push("-".into());
    }
    let mut out = super::output::stdout();
    let mut status = 0;
    for f in &files {
        // GNU's quotef: bare when nothing needs quoting, bytes kept.
        let name = common::quotef(f);
        match run_file(f, &cut, &mut out) {
            Ok(()) => {}
            Err((true, e)) => {
                return common::write_failed(t, &e);
            }
            Err((false, e)) => {
                t.file_error(&name, &e);
                status = 1;
            }
        }
    }
    if let Err(e) = out.flush() {
        return common::write_failed(t, &e);
    }
    // GNU's cut closes a standard input it read, and reports a failure:
    // one it was started without cannot be closed.
    if files.iter().any(|f| f == "-") && common::stdin_was_closed() {
        t.file_error("-", &io::Error::from_raw_os_error(libc::EBADF));
        return 1;
    }
    status
}

/// Calls `f` on each complete line of `data` (without its terminator);
/// returns where the unterminated rest begins. One vectorised search runs
/// through the whole region (`memchr_iter` keeps its place), rather than a
/// search restarted at every line.
fn for_each_line(
    data: &[u8],
    eol: u8,
    mut f: impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<usize> {
    let mut start = 0;
    for i in memchr::memchr_iter(eol, data) {
        f(&data[start..i])?;
        start = i + 1;
    }
    Ok(start)
}

/// Cuts one input. Err((true, _)) is a write error, (false, _) a read one.
fn run_file(f: &OsString, cut: &Cut, out: &mut Out) -> Result<(), (bool, io::Error)> {
    let s = if f == "-" {
        Stream::stdin()
    } else {
        Stream::open(f, &common::input_options())
    };
    let s = s.map_err(|e| (false, common::os_only(e)))?;
    if cut.kind == Kind::Fields && cut.delim == cut.eol {
        let mut all = Vec::new();
        let mut s = s;
        io::Read::read_to_end(&mut s, &mut all).map_err(|e| (false, common::os_only(e)))?;
        return cut.delimiter_ends_lines(&all, out).map_err(|e| (true, e));
    }
    // A large file: both cores, each on half of every 16 MiB block; the
    // second half's output is held and written after the first's.
    let two = s
        .len()
        .is_ok_and(|n| n.saturating_sub(s.position()) >= TWO_CORES_MIN)
        && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let mut helper = two.then(Out::holding);
    let g = &s;
    ferry::stream::for_each_block(
        g,
        if two { 16 << 20 } else { 1 << 20 },
        cut.eol,
        |e| (false, common::os_only(e)),
        |block| {
            match helper.as_mut() {
                Some(h) => cut_two(cut, block, out, h),
                None => for_each_line(block, cut.eol, |line| cut.line(line, out)).map(|_| ()),
            }
            .map_err(|e| (true, e))?;
            Ok(true)
        },
    )
}

/// Files at least this long are cut on two cores.
const TWO_CORES_MIN: u64 = 64 << 20;

/// Cuts a block of whole lines on two threads: the lines from just after
/// a line end in its second half go to `helper`, which holds its output;
/// that output is written after the first half's.
fn cut_two(cut: &Cut, block: &[u8], out: &mut Out, helper: &mut Out) -> io::Result<()> {
    let Some(mid) = ferry::stream::split_after_line_end(block, cut.eol) else {
        return for_each_line(block, cut.eol, |line| cut.line(line, out)).map(|_| ());
    };
    let (a, b) = block.split_at(mid);
    let (ra, rb) = std::thread::scope(|s| {
        let h = s.spawn(|| for_each_line(b, cut.eol, |line| cut.line(line, helper)));
        let ra = for_each_line(a, cut.eol, |line| cut.line(line, out));
        (ra, h.join())
    });
    ra?;
    match rb {
        Ok(r) => r?,
        Err(_) => return Err(io::Error::other("cut thread failed")),
    };
    out.write_held(helper)
}
