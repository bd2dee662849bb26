//! `ferry grep`: GNU grep's line selection and output (-c -n -v -i -F -E
//! -G -w -x -l -L -q -o -H -h -s -a -m -e -f), its exit statuses and its
//! handling of binary files.
//!
//! Input comes through alloc-stream regions (mapped for local files). The
//! pattern list is one regex run over a whole region of lines, so a
//! literal is found by a vectorised substring search and lines are only
//! looked at where something matched — the region is never split into
//! lines first.
//!
//! Binary files, as GNU grep 3 treats them: a file with a NUL byte (or a
//! hole) is binary from the buffer where the NUL shows up: NULs then end
//! lines too, the first selected line ends the file and
//! `grep: FILE: binary file matches` goes to standard error instead of
//! the lines. In a UTF-8 locale a line that would be printed but is not
//! valid UTF-8 is held back the same way. `-a` prints everything.

mod bracket;
mod interval;
mod matcher;
mod pattern;
mod search;

use super::common::{self, Tool};
use super::locale::{self, Charset};
use super::output::Out;
use ferry::{OpenOptions, Stream};
use matcher::{Matcher, Whole};
use pattern::{Flavor, Syntax};
use search::{Failure, Search};
use std::ffi::OsString;
use std::io;

const HELP: &str = "Usage: ferry grep [OPTION]... PATTERNS [FILE]...
Search for PATTERNS in each FILE.
Example: ferry grep -i 'hello world' menu.h main.c
PATTERNS can contain multiple patterns separated by newlines.

Pattern selection and interpretation:
  -E, --extended-regexp     PATTERNS are extended regular expressions
  -F, --fixed-strings       PATTERNS are strings
  -G, --basic-regexp        PATTERNS are basic regular expressions
  -e, --regexp=PATTERNS     use PATTERNS for matching
  -f, --file=FILE           take PATTERNS from FILE
  -i, --ignore-case         ignore case distinctions in patterns and data
      --no-ignore-case      do not ignore case distinctions (default)
  -w, --word-regexp         match only whole words
  -x, --line-regexp         match only whole lines

Miscellaneous:
  -s, --no-messages         suppress error messages
  -v, --invert-match        select non-matching lines
      --help                display this help text and exit
  -V, --version             display version information and exit

Output control:
  -m, --max-count=NUM       stop after NUM selected lines
  -n, --line-number         print line number with output lines
  -H, --with-filename       print file name with output lines
  -h, --no-filename         suppress the file name prefix on output
      --label=LABEL         use LABEL as the standard input file name prefix
  -o, --only-matching       show only nonempty parts of lines that match
  -q, --quiet, --silent     suppress all normal output
  -a, --text                equivalent to --binary-files=text
  -L, --files-without-match  print only names of FILEs with no selected lines
  -l, --files-with-matches  print only names of FILEs with selected lines
  -c, --count               print only a count of selected lines per FILE

When FILE is '-', read standard input.  With no FILE, read standard input.
With fewer than two FILEs, assume -h.
Exit status is 0 if any line is selected, 1 otherwise;
if any error occurs and -q is not given, the exit status is 2.
";

/// What is printed per file.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Report {
    Lines,
    Count,
    FilesWith,
    FilesWithout,
    Quiet,
}

struct Opts {
    report: Report,
    invert: bool,
    numbers: bool,
    only: bool,
    with_name: Option<bool>,
    no_messages: bool,
    text: bool,
    max_count: Option<u64>,
    label: String,
    utf8: bool,
}

/// A file's search stopped early, or ran to the end.
#[derive(PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

/// GNU grep reads 96 KiB at a time (more once a long line has grown its
/// buffer, which then stays grown for later files) and decides "binary"
/// per buffer.
const GNU_BUFFER: u64 = 96 << 10;

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let charset = locale::init();
    let mut syntax = Syntax::Basic;
    let mut ignore_case = false;
    let mut whole = Whole::Any;
    let mut patterns: Option<Vec<Vec<u8>>> = None;
    // Where each pattern came from: a -f file's name and line, for GNU's
    // `FILE:LINE:` before a message about it.
    let mut origins: Vec<Option<(String, usize)>> = Vec::new();
    let mut o = Opts {
        report: Report::Lines,
        invert: false,
        numbers: false,
        only: false,
        with_name: None,
        no_messages: false,
        text: false,
        max_count: None,
        label: "(standard input)".into(),
        utf8: charset == Charset::Utf8,
    };
    let mut count = false;
    let mut list: Option<Report> = None;
    let mut quiet = false;
    let mut ops: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 2);
        match arg {
            Short('E') | Long("extended-regexp") => syntax = Syntax::Extended,
            Short('F') | Long("fixed-strings") => syntax = Syntax::Fixed,
            Short('P') | Long("perl-regexp") => {
                // No PCRE here: say so plainly rather than guess at Perl's
                // syntax with another engine.
                t.error(format_args!(
                    "Perl matching (-P) is not supported by ferry grep; use -E or -G"
                ));
                return 2;
            }
            Short('G') | Long("basic-regexp") => syntax = Syntax::Basic,
            Short('e') | Long("regexp") => {
                let Ok(v) = p.value() else {
                    t.usage_error(format_args!("option requires an argument -- 'e'"));
                    return 2;
                };
                add_patterns(&mut patterns, v.as_encoded_bytes());
                origins.resize(patterns.as_ref().map_or(0, Vec::len), None);
            }
            Short('f') | Long("file") => {
                let Ok(v) = p.value() else {
                    t.usage_error(format_args!("option requires an argument -- 'f'"));
                    return 2;
                };
                let name = common::os_to_string(&v);
                let data = if v == "-" {
                    let mut d = Vec::new();
                    io::Read::read_to_end(&mut io::stdin(), &mut d).map(|_| d)
                } else {
                    std::fs::read(&v)
                };
                match data {
                    Ok(d) => {
                        // Each line of the file is a pattern; none at all
                        // for an empty file.
                        let pats = patterns.get_or_insert_with(Vec::new);
                        let body = d.strip_suffix(b"\n").unwrap_or(&d);
                        if !d.is_empty() {
                            origins.resize(pats.len(), None);
                            for (k, l) in body.split(|&b| b == b'\n').enumerate() {
                                pats.push(l.to_vec());
                                origins.push(Some((name.clone(), k + 1)));
                            }
                        }
                    }
                    Err(e) => {
                        t.file_error(&name, &e);
                        return 2;
                    }
                }
            }
            Short('i') | Short('y') | Long("ignore-case") => ignore_case = true,
            Long("no-ignore-case") => ignore_case = false,
            Short('w') | Long("word-regexp") => whole = Whole::Word,
            Short('x') | Long("line-regexp") => whole = Whole::Line,
            Short('s') | Long("no-messages") => o.no_messages = true,
            Short('v') | Long("invert-match") => o.invert = true,
            Short('V') => {
                println!("{} {}", t.name, env!("CARGO_PKG_VERSION"));
                return 0;
            }
            Short('m') | Long("max-count") => {
                let v = p.value().ok().and_then(|v| v.into_string().ok());
                match v.as_deref().map(str::parse::<i64>) {
                    Some(Ok(n)) => o.max_count = (n >= 0).then_some(n as u64),
                    _ => {
                        t.error(format_args!("invalid max count"));
                        return 2;
                    }
                }
            }
            Short('n') | Long("line-number") => o.numbers = true,
            Short('H') | Long("with-filename") => o.with_name = Some(true),
            Short('h') | Long("no-filename") => o.with_name = Some(false),
            Long("label") => match p.value() {
                Ok(v) => o.label = common::os_to_string(&v),
                Err(e) => {
                    t.bad_option(e);
                    return 2;
                }
            },
            Short('o') | Long("only-matching") => o.only = true,
            Short('q') | Long("quiet") | Long("silent") => quiet = true,
            Short('a') | Long("text") => o.text = true,
            Short('l') | Long("files-with-matches") => list = Some(Report::FilesWith),
            Short('L') | Long("files-without-match") => list = Some(Report::FilesWithout),
            Short('c') | Long("count") => count = true,
            Long("color") | Long("colour") => {
                let _ = p.optional_value();
            }
            Value(v) => ops.push(v),
            other => {
                t.bad_option(other.unexpected());
                return 2;
            }
        }
    }
    o.report = if quiet {
        Report::Quiet
    } else if let Some(l) = list {
        l
    } else if count {
        Report::Count
    } else {
        Report::Lines
    };
    let patterns = match patterns {
        Some(p) => p,
        None => {
            if ops.is_empty() {
                t.hint();
                return 2;
            }
            let mut v = None;
            add_patterns(&mut v, ops.remove(0).as_encoded_bytes());
            v.unwrap_or_default()
        }
    };
    // GNU's shortcuts: nothing can be selected, so no file is read (not
    // even to count it, nor to notice it is missing).
    let selects_nothing = o.max_count == Some(0)
        || (o.invert
            && whole == Whole::Any
            && !patterns.is_empty()
            && patterns.iter().all(|p| p.is_empty()));
    if selects_nothing {
        return 1;
    }
    if ops.is_empty() {
        ops.push("-".into());
    }
    let with_name = o.with_name.unwrap_or(ops.len() > 1);
    let flavor = Flavor {
        syntax,
        utf8: o.utf8,
        icase: ignore_case,
    };
    // An empty list (from an empty -f file) matches nothing.
    let mut m = if patterns.is_empty() {
        None
    } else {
        match Matcher::new(&patterns, flavor, ignore_case, whole) {
            Ok(m) => {
                for w in &m.warnings {
                    t.error(format_args!("warning: {w}"));
                }
                Some(m)
            }
            Err((at, e)) => {
                match at.and_then(|k| origins.get(k)).and_then(Option::as_ref) {
                    Some((file, line)) => t.error(format_args!("{file}:{line}: {e}")),
                    None => t.error(format_args!("{e}")),
                }
                return 2;
            }
        }
    };
    // A second matcher for the second core (counting large files).
    let mut m2 = if o.report == Report::Count && o.max_count.is_none() {
        m.as_ref()
            .and_then(|_| Matcher::new(&patterns, flavor, ignore_case, whole).ok())
    } else {
        None
    };
    let mut out = Out::new();
    let mut any = false;
    let mut trouble = false;
    for f in &ops {
        let name = if f == "-" {
            o.label.clone()
        } else {
            common::os_to_string(f)
        };
        let mut s = Search::new(&o, m.as_mut(), m2.as_mut(), &mut out, &name, with_name);
        match s.file(f) {
            Ok(()) => {}
            Err(Failure::Read(e)) => {
                if !o.no_messages {
                    // Lines already found go out before the message.
                    if let Err(e) = s.out.flush() {
                        return write_failed(t, &e);
                    }
                    t.file_error(&name, &e);
                }
                trouble = true;
            }
            Err(Failure::Write(e)) => return write_failed(t, &e),
        }
        let selected = s.selected;
        let binary_msg = s.binary_message();
        if let Err(e) = s.finish() {
            return write_failed(t, &e);
        }
        if binary_msg {
            if let Err(e) = out.flush() {
                return write_failed(t, &e);
            }
            eprintln!("{}: {}: binary file matches", t.name, name);
        }
        if selected > 0 {
            any = true;
            if o.report == Report::Quiet {
                return 0;
            }
        }
    }
    if let Err(e) = out.flush() {
        return write_failed(t, &e);
    }
    if m.iter().chain(m2.iter()).any(Matcher::gave_up) {
        // Better a failure than a quiet wrong answer.
        t.error(format_args!(
            "back-reference search ran past its step limit: lines may have been missed"
        ));
        return 2;
    }
    if trouble {
        2
    } else if any {
        0
    } else {
        1
    }
}

/// A write error on standard output: GNU grep's message, and its status
/// for trouble (2).
fn write_failed(t: &Tool, e: &io::Error) -> i32 {
    common::write_failed(t, e);
    2
}

/// Adds the lines of one pattern operand.
fn add_patterns(into: &mut Option<Vec<Vec<u8>>>, p: &[u8]) {
    into.get_or_insert_with(Vec::new)
        .extend(p.split(|&b| b == b'\n').map(|l| l.to_vec()));
}
