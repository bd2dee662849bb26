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

use super::common::{self, Tool};
use super::locale::{self, Charset};
use super::output::Out;
use ferry::{OpenOptions, Stream};
use matcher::{Matcher, Whole};
use pattern::{Flavor, Syntax};
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
        let mut s = Search {
            o: &o,
            m: m.as_mut(),
            m2: m2.as_mut(),
            out: &mut out,
            name: &name,
            with_name,
            lineno: 0,
            selected: 0,
            binary: false,
            selected_at_binary: 0,
            encoding_held_back: false,
            offset: 0,
        };
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

enum Failure {
    Read(io::Error),
    Write(io::Error),
}

/// One file's search.
struct Search<'a> {
    o: &'a Opts,
    m: Option<&'a mut Matcher>,
    /// With a second core: counts the second half of each block.
    m2: Option<&'a mut Matcher>,
    out: &'a mut Out,
    name: &'a str,
    with_name: bool,
    /// Lines before the current block.
    lineno: u64,
    selected: u64,
    /// Binary (NULs seen) from here on.
    binary: bool,
    selected_at_binary: u64,
    encoding_held_back: bool,
    /// File offset of the current block.
    offset: u64,
}

impl Search<'_> {
    fn file(&mut self, f: &OsString) -> Result<(), Failure> {
        let s = if f == "-" {
            Stream::stdin()
        } else {
            Stream::open(f, &common::stream_options(OpenOptions::read_only()))
        };
        let s = s.map_err(|e| Failure::Read(common::os_only(e)))?;
        if !self.o.text && has_hole(f, &s) {
            self.go_binary();
        }
        // Counting a large file: both cores, each on half of every block.
        let two = self.m2.is_some()
            && !self.o.text
            && s.len().is_ok_and(|l| l >= 64 << 20)
            && std::thread::available_parallelism().is_ok_and(|n| n.get() > 1);
        // A last line without a newline is searched as if it had one.
        let g = &s;
        super::blocks::for_each_block(
            g,
            if two { 16 << 20 } else { 4 << 20 },
            b'\n',
            |e| Failure::Read(common::os_only(e)),
            |block| {
                let flow = if two {
                    self.count_two(block)?
                } else {
                    self.block(block)?
                };
                Ok(flow == Flow::Go)
            },
        )
    }

    /// Counts the selected lines of a block on two cores. A half with a NUL
    /// sends the block down the ordinary path, which turns binary where GNU
    /// does.
    fn count_two(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        let mid = super::blocks::split_after_line_end(data, b'\n');
        let (false, Some(mid)) = (self.binary, mid) else {
            return self.block(data);
        };
        let (a, b) = data.split_at(mid);
        let invert = self.o.invert;
        let (Some(m), Some(m2)) = (self.m.as_deref_mut(), self.m2.as_deref_mut()) else {
            return self.block(data);
        };
        let (ca, cb) = std::thread::scope(|sc| {
            let h = sc.spawn(move || count_text(m2, b, invert));
            let ca = count_text(m, a, invert);
            (ca, h.join().ok().flatten())
        });
        match (ca, cb) {
            (Some(ca), Some(cb)) => {
                self.offset += data.len() as u64;
                self.selected += ca + cb;
                Ok(Flow::Go)
            }
            _ => self.block(data),
        }
    }

    fn go_binary(&mut self) {
        self.binary = true;
        self.selected_at_binary = self.selected;
    }

    /// GNU stops a binary file at its first selected line, except when
    /// counting.
    fn stops_at_first(&self) -> bool {
        self.binary && self.o.report != Report::Count
    }

    /// True when the file's lines were held back because it is binary.
    fn binary_message(&self) -> bool {
        self.o.report == Report::Lines
            && (self.encoding_held_back || (self.binary && self.selected > self.selected_at_binary))
    }

    /// Searches a block of whole lines (each ending in a newline). While
    /// the file may still turn binary, it goes in pieces of about 256 KiB
    /// so that the NUL check and the search read the piece from the cache.
    fn block(&mut self, mut data: &[u8]) -> Result<Flow, Failure> {
        const PIECE: usize = 256 << 10;
        while data.len() > PIECE && !self.binary && !self.o.text {
            let end = match memchr::memrchr(b'\n', &data[..PIECE]) {
                Some(i) => i + 1,
                None => memchr::memchr(b'\n', &data[PIECE..]).map_or(data.len(), |i| PIECE + i + 1),
            };
            if self.piece(&data[..end])? == Flow::Stop {
                return Ok(Flow::Stop);
            }
            data = &data[end..];
        }
        self.piece(data)
    }

    /// Searches whole lines, turning binary at a NUL as GNU does.
    fn piece(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        let start = self.offset;
        self.offset += data.len() as u64;
        if data.is_empty() {
            return Ok(Flow::Go);
        }
        if !self.binary && !self.o.text {
            if let Some(p) = memchr::memchr(0, data) {
                // GNU notices the NUL at the start of the buffer holding it,
                // which begins with a whole line.
                let buf_start = ((start + p as u64) / GNU_BUFFER * GNU_BUFFER).max(start);
                let at = (buf_start - start) as usize;
                let line_start = memchr::memrchr(b'\n', &data[..at]).map_or(0, |i| i + 1);
                if self.lines(&data[..line_start])? == Flow::Stop {
                    return Ok(Flow::Stop);
                }
                self.go_binary();
                return self.lines(&data[line_start..]);
            }
        }
        self.lines(data)
    }

    /// Searches whole lines in the current text/binary mode.
    fn lines(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        if data.is_empty() {
            return Ok(Flow::Go);
        }
        if self.binary {
            // NULs end lines in a binary file.
            let zapped: Vec<u8> = data
                .iter()
                .map(|&b| if b == 0 { b'\n' } else { b })
                .collect();
            return self.scan(&zapped);
        }
        self.scan(data)
    }

    /// Finds the selected lines of `data` (whole lines) and reports them.
    fn scan(&mut self, data: &[u8]) -> Result<Flow, Failure> {
        let mut counted = 0usize; // lines before `counted` are in lineno
        let mut pos = 0usize;
        let mut flow = Flow::Go;
        while pos < data.len() {
            let hit = match self.m.as_deref_mut() {
                Some(m) => m.first_line_match(data, pos),
                None => None,
            };
            let (ls, le) = match hit {
                Some(h) => {
                    let ls = memchr::memrchr(b'\n', &data[pos..h]).map_or(pos, |i| pos + i + 1);
                    if ls >= data.len() {
                        (data.len(), data.len())
                    } else {
                        let le = memchr::memchr(b'\n', &data[h..]).map_or(data.len(), |i| h + i);
                        (ls, le)
                    }
                }
                None => (data.len(), data.len()),
            };
            if self.o.invert {
                // Every line from pos up to the matching one is selected.
                let mut a = pos;
                while a < ls {
                    let e = memchr::memchr(b'\n', &data[a..ls]).map_or(ls, |i| a + i);
                    if self.select(data, a, e, &mut counted)? == Flow::Stop {
                        flow = Flow::Stop;
                        break;
                    }
                    a = e + 1;
                }
                if flow == Flow::Stop {
                    break;
                }
            } else if ls < data.len() && self.select(data, ls, le, &mut counted)? == Flow::Stop {
                flow = Flow::Stop;
                break;
            }
            pos = le + 1;
        }
        if self.o.numbers && self.o.report == Report::Lines {
            self.lineno += bytecount::count(&data[counted..], b'\n') as u64;
        }
        Ok(flow)
    }

    /// One selected line, data[ls..le].
    fn select(
        &mut self,
        data: &[u8],
        ls: usize,
        le: usize,
        counted: &mut usize,
    ) -> Result<Flow, Failure> {
        self.selected += 1;
        if self.stops_at_first() {
            return Ok(Flow::Stop);
        }
        let hit_max = self.o.max_count.is_some_and(|m| self.selected >= m);
        match self.o.report {
            Report::Lines => {
                let n = if self.o.numbers {
                    self.lineno += bytecount::count(&data[*counted..ls], b'\n') as u64;
                    *counted = ls;
                    Some(self.lineno + 1)
                } else {
                    None
                };
                self.print(&data[ls..le], n).map_err(Failure::Write)?;
            }
            Report::Count => {}
            Report::FilesWith | Report::FilesWithout | Report::Quiet => return Ok(Flow::Stop),
        }
        Ok(if hit_max { Flow::Stop } else { Flow::Go })
    }

    fn print(&mut self, line: &[u8], n: Option<u64>) -> io::Result<()> {
        if self.o.only {
            if self.o.invert {
                return Ok(());
            }
            let Some(m) = self.m.as_deref_mut() else {
                return Ok(());
            };
            let (o, out, name, with_name) = (self.o, &mut *self.out, self.name, self.with_name);
            let held = &mut self.encoding_held_back;
            return m.each_match(line, |part| {
                if !o.text && o.utf8 && !valid_for_glibc(part) {
                    *held = true;
                    return Ok(());
                }
                head(out, name, with_name, n)?;
                out.write(part)?;
                out.byte(b'\n')
            });
        }
        if !self.o.text && self.o.utf8 && !valid_for_glibc(line) {
            self.encoding_held_back = true;
            return Ok(());
        }
        head(self.out, self.name, self.with_name, n)?;
        self.out.write(line)?;
        self.out.byte(b'\n')
    }

    /// The per-file report: the count, or the name for -l / -L.
    fn finish(&mut self) -> io::Result<()> {
        match self.o.report {
            Report::Count => {
                if self.with_name {
                    self.out.write(self.name.as_bytes())?;
                    self.out.byte(b':')?;
                }
                let n = match self.o.max_count {
                    Some(m) => self.selected.min(m),
                    None => self.selected,
                };
                self.out.write(n.to_string().as_bytes())?;
                self.out.byte(b'\n')
            }
            Report::FilesWith if self.selected > 0 => {
                self.out.write(self.name.as_bytes())?;
                self.out.byte(b'\n')
            }
            Report::FilesWithout if self.selected == 0 => {
                self.out.write(self.name.as_bytes())?;
                self.out.byte(b'\n')
            }
            _ => Ok(()),
        }
    }
}

fn head(out: &mut Out, name: &str, with_name: bool, n: Option<u64>) -> io::Result<()> {
    if with_name {
        out.write(name.as_bytes())?;
        out.byte(b':')?;
    }
    if let Some(n) = n {
        out.write(n.to_string().as_bytes())?;
        out.byte(b':')?;
    }
    Ok(())
}

/// True if glibc's UTF-8 decoder takes every byte (it refuses overlong
/// forms and surrogates, as Rust does, but takes 4-byte forms past
/// U+10FFFF).
fn valid_for_glibc(s: &[u8]) -> bool {
    if std::str::from_utf8(s).is_ok() {
        return true;
    }
    let mut st = locale::initial_state();
    let mut i = 0;
    while i < s.len() {
        if s[i] < 0x80 {
            i += 1;
            continue;
        }
        match locale::mbrtowc_step(&s[i..], &mut st) {
            Some((n, _)) if n > 0 => i += n,
            _ => return false,
        }
    }
    true
}

/// The number of selected lines in `data` (whole lines), or `None` if it
/// holds a NUL. Goes in pieces that stay in the cache between the NUL check
/// and the search.
fn count_text(m: &mut Matcher, mut data: &[u8], invert: bool) -> Option<u64> {
    const PIECE: usize = 256 << 10;
    let mut n = 0u64;
    while !data.is_empty() {
        let end = if data.len() <= PIECE {
            data.len()
        } else {
            match memchr::memrchr(b'\n', &data[..PIECE]) {
                Some(i) => i + 1,
                None => memchr::memchr(b'\n', &data[PIECE..]).map_or(data.len(), |i| PIECE + i + 1),
            }
        };
        let piece = &data[..end];
        if memchr::memchr(0, piece).is_some() {
            return None;
        }
        let mut hits = 0u64;
        let mut pos = 0;
        while pos < piece.len() {
            let Some(h) = m.first_line_match(piece, pos) else {
                break;
            };
            if h >= piece.len() {
                break;
            }
            hits += 1;
            pos = memchr::memchr(b'\n', &piece[h..]).map_or(piece.len(), |i| h + i + 1);
        }
        n += if invert {
            memchr::memchr_iter(b'\n', piece).count() as u64 - hits
        } else {
            hits
        };
        data = &data[end..];
    }
    Some(n)
}

/// A regular file with a hole before its end (GNU reads that as NULs and
/// calls the file binary before reading it).
fn has_hole(name: &OsString, s: &Stream) -> bool {
    if name == "-" || !s.is_mapped() {
        return false;
    }
    let Ok(f) = std::fs::File::open(name) else {
        return false;
    };
    let Ok(st) = f.metadata() else { return false };
    let size = st.len();
    if size == 0 {
        return false;
    }
    match rustix::fs::seek(&f, rustix::fs::SeekFrom::Hole(0)) {
        Ok(h) => h < size,
        Err(_) => false,
    }
}
