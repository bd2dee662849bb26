//! `ferry cut`: GNU cut. Lines are found in alloc-stream regions with
//! `memchr` and cut in place; only the selected bytes are copied, once,
//! into the output buffer.
//!
//! A line longer than a region is not gathered: it comes in parts
//! (`ferry::stream::for_each_piece`) and is cut as it goes by, as GNU cut
//! cuts it, so memory stays bounded where GNU's does ([`long`]).
//!
//! ```text
//!   list.rs   the LIST argument, GNU's reading and messages
//!   line.rs   a whole line, cut in place (the fast path)
//!   long.rs   a line in parts, and the input as one line (-d $'\n')
//! ```

mod line;
mod list;
mod long;

use super::common::{self, Tool};
use super::output::Out;
use ferry::stream::Piece;
use ferry::Stream;
use line::Cut;
use list::{parse_list, Kind};
use long::LongLine;
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
            Err(Failure::Write(e)) => {
                return common::write_failed(t, &e);
            }
            Err(Failure::Read(e)) => {
                t.file_error(&name, &e);
                status = 1;
            }
            Err(Failure::Memory) => {
                // GNU's xalloc_die: what was cut goes out, then the end.
                if let Err(e) = out.flush() {
                    return common::write_failed(t, &e);
                }
                t.error(format_args!("memory exhausted"));
                return 1;
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

/// Why an input's cutting stopped.
enum Failure {
    Read(io::Error),
    Write(io::Error),
    /// A first field GNU holds (or a line) outgrew memory.
    Memory,
}

impl Failure {
    fn read(e: io::Error) -> Failure {
        match e.kind() {
            io::ErrorKind::OutOfMemory => Failure::Memory,
            _ => Failure::Read(common::os_only(e)),
        }
    }

    /// An error from cutting: writing, or holding a first field.
    fn cutting(e: io::Error) -> Failure {
        match e.kind() {
            io::ErrorKind::OutOfMemory => Failure::Memory,
            _ => Failure::Write(e),
        }
    }
}

/// Cuts one input.
fn run_file(f: &OsString, cut: &Cut, out: &mut Out) -> Result<(), Failure> {
    let s = if f == "-" {
        Stream::stdin()
    } else {
        Stream::open(f, &common::input_options())
    };
    let s = s.map_err(|e| Failure::Read(common::os_only(e)))?;
    if cut.kind == Kind::Fields && cut.delim == cut.eol {
        return long::delimiter_ends_lines(&s, cut, REGION, out);
    }
    // A large file: both cores, each on half of every 16 MiB block; the
    // second half's output is held and written after the first's.
    let two = s
        .len()
        .is_ok_and(|n| n.saturating_sub(s.position()) >= TWO_CORES_MIN)
        && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
    let mut helper = two.then(Out::holding);
    let region = if two { 16 << 20 } else { REGION };
    // A line cut by a region's end and longer than 1 MiB is cut in parts
    // as it comes, not gathered.
    let mut long = LongLine::new(cut);
    ferry::stream::for_each_piece(&s, region, cut.eol, REGION, Failure::read, |piece| {
        match piece {
            Piece::Lines(block) => match helper.as_mut() {
                Some(h) => cut_two(cut, block, out, h),
                None => for_each_line(block, cut.eol, |line| cut.line(line, out)).map(|_| ()),
            },
            Piece::Part(part) => long.part(part, out),
            Piece::LastPart(part) => {
                let body = part.strip_suffix(&[cut.eol]).unwrap_or(part);
                long.part(body, out).and_then(|()| long.end(out))
            }
        }
        .map_err(Failure::cutting)?;
        Ok(true)
    })
}

/// Bytes read at a time (but on two cores), and the longest line gathered
/// whole when a region's end cuts it.
const REGION: usize = 1 << 20;

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
