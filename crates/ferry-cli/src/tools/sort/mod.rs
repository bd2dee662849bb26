//! `ferry sort`: GNU sort. The inputs are read whole through alloc
//! streams, lines are slices of them (nothing copied per line), sorted by
//! GNU's comparison — keys, numeric orders, the last resort — stably, on
//! `--parallel` threads, and written through one buffered output.
//!
//! Options: `-b -d -f -g -h -i -M -n -r` (global and per key), `-k`,
//! `-t`, `-u`, `-s`, `-c`/`-C`/`--check=…`, `-m`, `-o`, `-z`, `-S`,
//! `-T`, `--parallel`, `--sort=…`. Inputs larger than the buffer (`-S`,
//! by default a quarter of memory) are sorted in runs on disk and merged
//! ([`external`]).

mod blocks;
mod compare;
mod external;
mod key;
mod progress;
mod records;

use super::common::{self, Tool};
use compare::Cmp;
use key::Key;
use std::cmp::Ordering;
use std::ffi::OsString;
use std::io;

const HELP: &str = "Usage: ferry sort [OPTION]... [FILE]...
Write sorted concatenation of all FILE(s) to standard output.

With no FILE, or when FILE is -, read standard input.

Mandatory arguments to long options are mandatory for short options too.
Ordering options:

  -b, --ignore-leading-blanks  ignore leading blanks
  -d, --dictionary-order      consider only blanks and alphanumeric characters
  -f, --ignore-case           fold lower case to upper case characters
  -g, --general-numeric-sort  compare according to general numerical value
  -i, --ignore-nonprinting    consider only printable characters
  -M, --month-sort            compare (unknown) < 'JAN' < ... < 'DEC'
  -h, --human-numeric-sort    compare human readable numbers (e.g., 2K 1G)
  -n, --numeric-sort          compare according to string numerical value
  -r, --reverse               reverse the result of comparisons
      --sort=WORD             sort according to WORD:
                                general-numeric -g, human-numeric -h, month -M,
                                numeric -n

Other options:

  -c, --check, --check=diagnose-first  check for sorted input; do not sort
  -C, --check=quiet, --check=silent  like -c, but do not report first bad line
  -k, --key=KEYDEF          sort via a key; KEYDEF gives location and type
  -m, --merge               merge already sorted files; do not sort
  -o, --output=FILE         write result to FILE instead of standard output
  -s, --stable              stabilize sort by disabling last-resort comparison
  -S, --buffer-size=SIZE    use SIZE for main memory buffer
  -t, --field-separator=SEP  use SEP instead of non-blank to blank transition
  -T, --temporary-directory=DIR  use DIR for temporaries, not $TMPDIR or /tmp
      --parallel=N          change the number of sorts run concurrently to N
  -u, --unique              with -c, check for strict ordering;
                              without -c, output only the first of an equal run
  -z, --zero-terminated     line delimiter is NUL, not newline
      --help        display this help and exit
      --version     output version information and exit

KEYDEF is F[.C][OPTS][,F[.C][OPTS]] for start and stop position, where F is a
field number and C a character position in the field; both are origin 1, and
the stop position defaults to the line's end.  OPTS is one or more
single-letter ordering options [bdfghiMnr], which override global ordering
options for that key.  If no key is given, use the entire line as the key.
";

/// How `-c` reports.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    Diagnose,
    Quiet,
}

struct Opts {
    global: Key,
    keys: Vec<Key>,
    tab: Option<u8>,
    unique: bool,
    stable: bool,
    check: Option<Check>,
    merge: bool,
    output: Option<OsString>,
    eol: u8,
    parallel: usize,
    files: Vec<OsString>,
    /// `-S`, in bytes.
    buffer: u64,
    /// `-T`.
    temp: Option<OsString>,
    /// `--record-size`, `--key-bytes`, `--key-offset`: fixed-size binary
    /// records sorted by a byte range.
    record: Option<usize>,
    key_bytes: Option<usize>,
    key_offset: usize,
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    let charset = super::locale::init();
    let _ = charset;
    let mut o = match parse(t, args) {
        Ok(o) => o,
        Err(code) => return code,
    };
    let user_keys = !o.keys.is_empty();
    // Keys without options of their own take the global ones; with no
    // key and some global option, the whole line is a key with them.
    for k in &mut o.keys {
        if k.has_no_options() {
            k.inherit(&o.global);
        }
    }
    if o.keys.is_empty() && !o.global.has_no_options() {
        let mut k = o.global.clone();
        k.sword = None;
        k.eword = None;
        o.keys.push(k);
    }
    for k in o.keys.iter().chain(std::iter::once(&o.global)) {
        if let Some(opts) = k.incompatible() {
            t.error(format_args!("options '-{opts}' are incompatible"));
            return 2;
        }
    }
    if let Some(n) = o.record {
        let k = o.key_bytes.unwrap_or(n - o.key_offset.min(n));
        if o.key_offset.checked_add(k).is_none_or(|end| end > n) {
            t.error(format_args!(
                "a key of {k} bytes at offset {} passes the end of a {n}-byte record",
                o.key_offset
            ));
            return 2;
        }
        if user_keys || o.tab.is_some() || o.check.is_some() || o.merge {
            t.error(format_args!(
                "--record-size sorts by --key-bytes/--key-offset: not with -k, -t, -c or -m"
            ));
            return 2;
        }
        o.key_bytes = Some(k);
        o.keys.clear();
    } else if o.key_bytes.is_some() || o.key_offset != 0 {
        t.error(format_args!(
            "--key-bytes and --key-offset need --record-size"
        ));
        return 2;
    }
    let (decimal_point, thousands_sep) = super::locale::numeric_separators();
    let cmp = Cmp {
        record_key: o.record.map(|_| (o.key_offset, o.key_bytes.unwrap_or(0))),
        keys: o.keys.clone(),
        tab: o.tab,
        last_resort: !(o.stable || o.unique),
        reverse: o.global.reverse,
        locale: !super::locale::collate_is_c(),
        decimal_point,
        thousands_sep,
    };
    if o.files.is_empty() {
        o.files.push("-".into());
    }
    if let Some(mode) = o.check {
        if o.files.len() > 1 {
            t.error(format_args!(
                "extra operand {} not allowed with -{}",
                common::quote_always(&common::os_to_string(&o.files[1])),
                if mode == Check::Quiet { 'C' } else { 'c' }
            ));
            return 2;
        }
        return check(t, &o, &cmp, mode);
    }
    let result = if o.merge {
        // Read everything first: -o may name an input.
        let mut inputs: Vec<Vec<u8>> = Vec::with_capacity(o.files.len());
        for f in &o.files {
            match read_input(f, o.output.as_ref()) {
                Ok(b) => inputs.push(b),
                Err(e) => return cannot_read(t, &common::quotef(f), &e),
            }
        }
        let per_file: Vec<Vec<&[u8]>> = inputs.iter().map(|b| lines_of(b, o.eol)).collect();
        let merged = merge(per_file, &cmp);
        emit_lines(&o, &merged, &cmp, o.unique, &progress::Progress::none())
    } else {
        let bar = progress::Progress::new(&o.files);
        let r = sort_input(t, &o, &cmp, &bar);
        bar.finish();
        match r {
            Ok(r) => r,
            Err(code) => return code,
        }
    };
    match result {
        Ok(_) => 0,
        Err((Some(n), e, _)) => {
            t.error(format_args!("open failed: {n}: {}", common::describe(&e)));
            2
        }
        Err((None, e, total)) => {
            common::end_if_sigpipe(&e);
            // GNU's words: its stdio buffer (a 4 KiB block) fills and is
            // written while sorting's output goes on, or is flushed at
            // the end; then close_stdout's "write error".
            let name = match &o.output {
                Some(p) => shell_name(&common::os_to_string(p)),
                None => "'standard output'".to_string(),
            };
            let when = if total <= 4096 { "fflush" } else { "write" };
            t.error(format_args!(
                "{when} failed: {name}: {}",
                common::describe(&e)
            ));
            t.error(format_args!("write error"));
            2
        }
    }
}

fn cannot_read(t: &Tool, name: &str, e: &io::Error) -> i32 {
    if e.kind() == io::ErrorKind::OutOfMemory {
        t.error(format_args!("memory exhausted"));
        return 2;
    }
    t.error(format_args!(
        "{}: {name}: {}",
        read_failure(name, e),
        common::describe(e)
    ));
    2
}

/// GNU sort's words for an input it could not read, by the step that
/// failed: its access check ("cannot read": absent, no permission), the
/// open ("open failed": a socket), or the reading ("read failed": a
/// directory).
fn read_failure(name: &str, e: &io::Error) -> &'static str {
    if name == "-" {
        return "read failed";
    }
    let readable = std::ffi::CString::new(name)
        .is_ok_and(|c| rustix::fs::access(c.as_c_str(), rustix::fs::Access::READ_OK).is_ok());
    if !readable {
        "cannot read"
    } else {
        read_failure_after_access(name, e)
    }
}

fn read_failure_after_access(name: &str, e: &io::Error) -> &'static str {
    if e.raw_os_error() != Some(libc::EISDIR) && std::fs::File::open(name).is_err() {
        "open failed"
    } else {
        "read failed"
    }
}

/// What writing the output gave: bytes written, or the error (with the
/// output's name for an open failure) and the bytes written before it.
type OutResult = Result<u64, (Option<String>, io::Error, u64)>;

/// Sorts the inputs: in memory when they fit the buffer, else in runs on
/// disk merged (`external`). `Err(status)` after a message.
fn sort_input(t: &Tool, o: &Opts, cmp: &Cmp, bar: &progress::Progress) -> Result<OutResult, i32> {
    // The buffer holds a piece, its sorted copy on its way to disk, and
    // the next piece being read.
    let mut limit = (o.buffer / 3).clamp(1 << 16, usize::MAX as u64) as usize;
    let framing = o.framing();
    let records = match (framing, cmp.record_key) {
        (external::Framing::Records(size), Some((off, len))) => {
            limit = limit.min(records::MAX_PIECE_RECORDS.saturating_mul(size));
            Some(records::Layout {
                size,
                off,
                len,
                reverse: cmp.reverse,
            })
        }
        _ => None,
    };
    let mut pieces = external::Pieces::new(&o.files, framing, limit).output(o.output.as_ref());
    let fail = |f: external::Fail| {
        bar.finish();
        fail_message(t, f)
    };
    let first = pieces.next_piece().map_err(fail)?;
    let second = match first {
        Some(_) => pieces.next_piece().map_err(fail)?,
        None => None,
    };
    let Some(second) = second else {
        // Everything in one piece: sorted in memory.
        let data = first.unwrap_or_default();
        if let Some(l) = records {
            let order = records::order(&data, l, o.parallel);
            bar.writing("writing");
            return Ok(write_out(o, |emit| {
                let emit = counted(emit, bar);
                records::write_sorted(&data, l, &order, o.unique, emit).map_err(|(n, e)| (n, e, 0))
            }));
        }
        let mut lines = framing.split(&data);
        sort_lines(&mut lines, cmp, o.parallel);
        bar.writing("writing");
        return Ok(emit_lines(o, &lines, cmp, o.unique, bar));
    };
    let dir = external::temp_dir(o.temp.as_ref());
    let fan_in = external::fan_in();
    let mut runs = Vec::new();
    let mut pending = None;
    // A run's memory, back from the kernel, for the run after next.
    let mut spare = None;
    let mut next = first;
    let mut after = Some(second);
    while let Some(piece) = next.take() {
        let started = match records {
            Some(l) => {
                let order = records::order(&piece, l, o.parallel);
                let sorted = records::gather(&piece, l, &order, o.unique, spare.take())
                    .map_err(|e| fail(external::Fail::Temp(dir.display().to_string(), e)))?;
                external::start_run_of(&dir, sorted).map_err(fail)?
            }
            None => {
                let mut lines = framing.split(&piece);
                sort_lines(&mut lines, cmp, o.parallel);
                let u = o.unique.then_some(cmp);
                external::start_run(&dir, &lines, framing, u, spare.take()).map_err(fail)?
            }
        };
        bar.sorted(piece.len() as u64);
        pieces.recycle(piece);
        if let Some((run, af, req)) = pending.take() {
            spare = external::finish_run(&run, af, req).map_err(fail)?;
            runs.push(run);
            if runs.len() > fan_in {
                merge_first(&mut runs, fan_in, &dir, o, cmp, records).map_err(fail)?;
            }
        }
        pending = Some(started);
        // The next piece is read while the run is written.
        next = match after.take() {
            Some(p) => Some(p),
            None => pieces.next_piece().map_err(fail)?,
        };
    }
    if let Some((run, af, req)) = pending.take() {
        external::finish_run(&run, af, req).map_err(fail)?;
        runs.push(run);
    }
    while runs.len() > fan_in {
        merge_first(&mut runs, fan_in, &dir, o, cmp, records).map_err(fail)?;
    }
    bar.writing("merging");
    Ok(write_out(o, |emit| {
        let emit = counted(emit, bar);
        match records {
            Some(l) => records::merge(runs, l, o.unique, emit),
            None => external::merge_runs(runs, framing, cmp, o.unique, emit),
        }
        .map_err(|(n, e)| (n, e, 0))
    }))
}

/// Merges the first `n` runs into one run in their place (the earliest
/// input, so ties still go to the earlier line): the merge's fan-in stays
/// within the descriptors a process may hold, however many runs there are.
fn merge_first(
    runs: &mut Vec<external::Run>,
    n: usize,
    dir: &std::path::Path,
    o: &Opts,
    cmp: &Cmp,
    records: Option<records::Layout>,
) -> Result<(), external::Fail> {
    let group: Vec<external::Run> = runs.drain(..n).collect();
    let (file, name) = external::temp_file(dir)?;
    let mut out = ferry::transfer::OrderedOut::new(std::os::fd::AsFd::as_fd(&file));
    let framing = o.framing();
    let term = framing.terminator();
    let merged = match records {
        Some(l) => records::merge(group, l, o.unique, |b| out.write(b)),
        None => external::merge_runs(group, framing, cmp, o.unique, |l| {
            out.write(l)?;
            match term {
                Some(t) => out.byte(t),
                None => Ok(()),
            }
        }),
    };
    let fail =
        |(n, e): (Option<String>, io::Error)| external::Fail::Temp(n.unwrap_or(name.clone()), e);
    merged.map_err(fail)?;
    out.flush().map_err(|e| fail((None, e)))?;
    runs.insert(0, external::Run::new(file, name));
    Ok(())
}

/// Prints an external sort's error; the exit status.
fn fail_message(t: &Tool, f: external::Fail) -> i32 {
    match f {
        external::Fail::Read(n, e) => cannot_read(t, &n, &e),
        external::Fail::Temp(n, e) => {
            t.error(format_args!("write failed: {n}: {}", common::describe(&e)));
            2
        }
        external::Fail::TempDir(d, e) => {
            t.error(format_args!(
                "cannot create temporary file in {}: {}",
                common::quote_always(&d),
                common::describe(&e)
            ));
            2
        }
        external::Fail::Partial(n, len, rec) => {
            t.error(format_args!(
                "{n}: {len} bytes are not a whole number of {rec}-byte records"
            ));
            2
        }
    }
}

/// Writes `lines`, each with its terminator (the first of each equal run
/// only with `unique`): gathered into blocks on a second thread while
/// this one writes them.
fn emit_lines(
    o: &Opts,
    lines: &[&[u8]],
    cmp: &Cmp,
    unique: bool,
    bar: &progress::Progress,
) -> OutResult {
    let term = o.framing().terminator();
    write_bytes(o, |emit| {
        let emit = counted(emit, bar);
        blocks::through_writer(
            |out| {
                let mut prev: Option<&[u8]> = None;
                for &l in lines {
                    if unique {
                        if let Some(p) = prev {
                            if cmp.same(p, l) {
                                continue;
                            }
                        }
                        prev = Some(l);
                    }
                    out.put(l)?;
                    if let Some(t) = term {
                        out.put(&[t])?;
                    }
                }
                Ok(())
            },
            emit,
        )
        .map_err(|(n, e)| (n, e, 0))
    })
}

/// A file name as GNU's `quotef` shows it: bare when it needs no quotes.
fn shell_name(n: &str) -> String {
    if !n.is_empty()
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%^".contains(&b))
    {
        n.to_string()
    } else {
        common::shell_quote(n)
    }
}

impl Opts {
    fn framing(&self) -> external::Framing {
        match self.record {
            Some(n) => external::Framing::Records(n),
            None => external::Framing::Lines(self.eol),
        }
    }
}

/// Parses the command line, GNU's way; `Err(status)` after reporting.
fn parse(t: &Tool, args: Vec<OsString>) -> Result<Opts, i32> {
    use lexopt::prelude::*;
    let mut o = Opts {
        global: Key::default(),
        keys: Vec::new(),
        tab: None,
        unique: false,
        stable: false,
        check: None,
        merge: false,
        output: None,
        eol: b'\n',
        parallel: std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
        files: Vec::new(),
        buffer: default_buffer(),
        temp: None,
        record: None,
        key_bytes: None,
        key_offset: 0,
    };
    let mut p = lexopt::Parser::from_args(args);
    let fail = |msg: String| {
        t.error(format_args!("{msg}"));
        Err(2)
    };
    let value = |p: &mut lexopt::Parser| -> Result<String, i32> {
        match p.value() {
            Ok(v) => Ok(common::os_to_string(&v)),
            Err(e) => {
                t.bad_option(e);
                Err(2)
            }
        }
    };
    while let Some(arg) = common::next_arg_of(t, &mut p, 2)? {
        if let Some(code) = common::common_arg(t, &arg, HELP) {
            return Err(code);
        }
        match arg {
            Short(c @ ('b' | 'd' | 'f' | 'g' | 'h' | 'i' | 'M' | 'n' | 'r' | 'R' | 'V')) => {
                if let Err(m) = o.global.set_option(c as u8, true) {
                    return fail(m);
                }
                if c == 'b' {
                    o.global.skip_end_blanks = true;
                }
            }
            Long("ignore-leading-blanks") => {
                o.global.skip_start_blanks = true;
                o.global.skip_end_blanks = true;
            }
            Long(
                l @ ("dictionary-order"
                | "ignore-case"
                | "general-numeric-sort"
                | "ignore-nonprinting"
                | "month-sort"
                | "numeric-sort"
                | "human-numeric-sort"
                | "reverse"),
            ) => {
                let c = match l {
                    "dictionary-order" => b'd',
                    "ignore-case" => b'f',
                    "general-numeric-sort" => b'g',
                    "ignore-nonprinting" => b'i',
                    "month-sort" => b'M',
                    "numeric-sort" => b'n',
                    "human-numeric-sort" => b'h',
                    _ => b'r',
                };
                let _ = o.global.set_option(c, true);
            }
            Long("sort") => {
                let v = value(&mut p)?;
                // argmatch: any unambiguous abbreviation.
                const WORDS: [(&str, u8); 6] = [
                    ("general-numeric", b'g'),
                    ("human-numeric", b'h'),
                    ("month", b'M'),
                    ("numeric", b'n'),
                    ("random", b'R'),
                    ("version", b'V'),
                ];
                let hits: Vec<_> = WORDS
                    .iter()
                    .filter(|(w, _)| w.starts_with(v.as_str()))
                    .collect();
                let c = match hits.as_slice() {
                    [(_, b'R' | b'V')] => {
                        return fail(format!("--sort={v} is not supported by ferry sort"))
                    }
                    [(_, c)] => *c,
                    _ => {
                        let how = if hits.is_empty() {
                            "invalid"
                        } else {
                            "ambiguous"
                        };
                        t.error(format_args!("{how} argument '{v}' for '--sort'"));
                        eprintln!("Valid arguments are:\n  - 'general-numeric'\n  - 'human-numeric'\n  - 'month'\n  - 'numeric'\n  - 'random'\n  - 'version'");
                        t.hint();
                        // GNU's argmatch failure: status 1, not sort's 2.
                        return Err(1);
                    }
                };
                let _ = o.global.set_option(c, true);
            }
            Short('k') | Long("key") => {
                let v = value(&mut p)?;
                match key::parse(&v) {
                    Ok(k) => o.keys.push(k),
                    Err(m) => return fail(m),
                }
            }
            Short('t') | Long("field-separator") => {
                let v = match p.value() {
                    Ok(v) => v,
                    Err(e) => {
                        t.bad_option(e);
                        return Err(2);
                    }
                };
                use std::os::unix::ffi::OsStrExt;
                let b = v.as_bytes();
                let sep = match b {
                    [] => return fail("empty tab".into()),
                    [c] => *c,
                    b"\\0" => 0,
                    _ => {
                        return fail(format!(
                            "multi-character tab '{}'",
                            String::from_utf8_lossy(b)
                        ))
                    }
                };
                if o.tab.is_some_and(|t| t != sep) {
                    return fail("incompatible tabs".into());
                }
                o.tab = Some(sep);
            }
            Short('u') | Long("unique") => o.unique = true,
            Short('s') | Long("stable") => o.stable = true,
            Short('c') => o.check = Some(Check::Diagnose),
            Short('C') => o.check = Some(Check::Quiet),
            Long("check") => {
                o.check = Some(match p.optional_value().map(|v| common::os_to_string(&v)) {
                    None => Check::Diagnose,
                    Some(v) if "diagnose-first".starts_with(v.as_str()) && !v.is_empty() => {
                        Check::Diagnose
                    }
                    Some(v)
                        if ("quiet".starts_with(v.as_str())
                            || "silent".starts_with(v.as_str()))
                            && !v.is_empty() =>
                    {
                        Check::Quiet
                    }
                    Some(v) => {
                        t.error(format_args!("invalid argument '{v}' for '--check'"));
                        eprintln!(
                            "Valid arguments are:\n  - 'quiet', 'silent'\n  - 'diagnose-first'"
                        );
                        t.hint();
                        return Err(1);
                    }
                })
            }
            Short('m') | Long("merge") => o.merge = true,
            Short('o') | Long("output") => {
                let v = match p.value() {
                    Ok(v) => v,
                    Err(e) => {
                        t.bad_option(e);
                        return Err(2);
                    }
                };
                if o.output.as_ref().is_some_and(|x| *x != v) {
                    return fail("multiple output files specified".into());
                }
                o.output = Some(v);
            }
            Short('z') | Long("zero-terminated") => o.eol = 0,
            Short('S') | Long("buffer-size") => {
                let v = value(&mut p)?;
                match buffer_size(&v) {
                    Ok(n) => o.buffer = n,
                    Err(why) => {
                        t.error(format_args!("{why} -S argument '{v}'"));
                        return Err(2);
                    }
                }
            }
            Short('T') | Long("temporary-directory") => match p.value() {
                Ok(v) => o.temp = Some(v),
                Err(e) => {
                    t.bad_option(e);
                    return Err(2);
                }
            },
            Long("parallel") => {
                let v = value(&mut p)?;
                match v.trim().parse::<usize>() {
                    Ok(0) => return fail("number in parallel must be nonzero".into()),
                    Ok(n) => o.parallel = n.min(64),
                    Err(_) => {
                        t.error(format_args!("invalid number after '--parallel': '{v}'"));
                        return Err(2);
                    }
                }
            }
            Long(l @ ("record-size" | "key-bytes" | "key-offset")) => {
                let l = l.to_string();
                let v = value(&mut p)?;
                let n = match v.trim().parse::<usize>() {
                    Ok(n) => n,
                    Err(_) => return fail(format!("invalid --{l} argument '{v}'")),
                };
                match l.as_str() {
                    "record-size" if n == 0 => return fail("a record size of 0".into()),
                    "record-size" => o.record = Some(n),
                    "key-bytes" => o.key_bytes = Some(n),
                    _ => o.key_offset = n,
                }
            }
            Long(
                l @ ("debug" | "files0-from" | "compress-program" | "batch-size" | "random-source"
                | "random-sort" | "version-sort"),
            ) => return fail(format!("--{l} is not supported by ferry sort")),
            Value(v) => o.files.push(v),
            other => {
                t.bad_option(other.unexpected());
                return Err(2);
            }
        }
    }
    Ok(o)
}

/// `-S`'s argument in bytes (a number with an optional b, K, M, G, T, P,
/// E suffix — K by default — or a percentage of memory), as GNU accepts
/// it; otherwise the start of GNU's message ("invalid", "invalid suffix
/// in").
fn buffer_size(v: &str) -> Result<u64, &'static str> {
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err("invalid");
    }
    let n: u64 = v[..digits].parse().map_err(|_| "invalid")?;
    let mult: u64 = match &v[digits..] {
        "" | "K" | "k" => 1 << 10,
        "b" => 1,
        "%" if n <= 100 => return Ok(physical_memory() / 100 * n),
        "%" => return Err("invalid"),
        "M" | "m" => 1 << 20,
        "G" | "g" => 1 << 30,
        "T" | "t" => 1 << 40,
        "P" | "p" => 1 << 50,
        "E" | "e" => 1 << 60,
        _ => return Err("invalid suffix in"),
    };
    Ok(n.saturating_mul(mult))
}

/// The buffer without `-S`: a quarter of the machine's memory (GNU takes
/// a share of it too), at least 64 MiB.
fn default_buffer() -> u64 {
    (physical_memory() / 4).max(64 << 20)
}

fn physical_memory() -> u64 {
    // SAFETY: sysconf queries, no side effects.
    let (pages, size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    (pages.max(0) as u64).saturating_mul(size.max(0) as u64)
}

/// How sort opens input `f`: without a lease (`common::input_options`),
/// except an input that is also the output (`-o`): sort opens the output
/// (truncating it) while pieces of that input may still be mapped by
/// reference, and the lease is what keeps them: its break makes ferry
/// copy the mapped windows before the truncation goes through.
pub(super) fn input_options_for(f: &OsString, output: Option<&OsString>) -> ferry::OpenOptions {
    let same = |o: &OsString| {
        let (Ok(a), Ok(b)) = (
            rustix::fs::stat(f.as_os_str()),
            rustix::fs::stat(o.as_os_str()),
        ) else {
            return false;
        };
        (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)
    };
    if output.is_some_and(same) {
        common::stream_options(ferry::OpenOptions::read_only())
    } else {
        common::input_options()
    }
}

/// All of one input.
fn read_input(f: &OsString, output: Option<&OsString>) -> io::Result<Vec<u8>> {
    let s = if f == "-" {
        ferry::Stream::stdin()
    } else {
        ferry::Stream::open(f, &input_options_for(f, output))
    };
    let mut s = s.map_err(common::os_only)?;
    let mut v = Vec::new();
    external::read_growing(&mut s, &mut v, usize::MAX).map_err(common::os_only)?;
    Ok(v)
}

/// The lines of `b` (a last line without its terminator is a line).
fn lines_of(b: &[u8], eol: u8) -> Vec<&[u8]> {
    let mut v = Vec::new();
    let mut start = 0;
    for i in memchr::memchr_iter(eol, b) {
        v.push(&b[start..i]);
        start = i + 1;
    }
    if start < b.len() {
        v.push(&b[start..]);
    }
    v
}

/// Sorts stably: on `threads` threads, each sorting a part, then merged
/// pairwise (earlier parts first on ties, so the whole stays stable).
/// Where the order is plain bytes (the whole line in the C locale with
/// no ordering option, or a record's key), each line is sorted with its
/// first eight bytes as a big-endian integer beside it: most comparisons
/// end there, without touching the line.
fn sort_lines(lines: &mut Vec<&[u8]>, cmp: &Cmp, threads: usize) {
    if let Some((off, len)) = cmp.byte_key() {
        let prefix = |l: &[u8]| -> u64 {
            let k = &l[off.min(l.len())..(off + len).min(l.len())];
            let mut b = [0u8; 8];
            let n = k.len().min(8);
            b[..n].copy_from_slice(&k[..n]);
            u64::from_be_bytes(b)
        };
        let mut keyed: Vec<(u64, &[u8])> = lines.iter().map(|&l| (prefix(l), l)).collect();
        let by =
            |a: &(u64, &[u8]), b: &(u64, &[u8])| a.0.cmp(&b.0).then_with(|| cmp.lines(a.1, b.1));
        sort_parts(&mut keyed, threads, &by);
        lines.clear();
        lines.extend(keyed.into_iter().map(|(_, l)| l));
        return;
    }
    sort_parts(lines, threads, &|a: &&[u8], b: &&[u8]| cmp.lines(a, b));
}

/// A stable sort of `v` by `by` on up to `threads` threads.
fn sort_parts<T: Copy + Send + Sync>(
    v: &mut Vec<T>,
    threads: usize,
    by: &(impl Fn(&T, &T) -> Ordering + Sync),
) {
    let threads = threads.min(v.len() / 50_000).max(1);
    if threads == 1 {
        v.sort_by(by);
        return;
    }
    let per = v.len().div_ceil(threads);
    std::thread::scope(|s| {
        for part in v.chunks_mut(per) {
            s.spawn(move || part.sort_by(by));
        }
    });
    let mut runs: Vec<Vec<T>> = v.chunks(per).map(|c| c.to_vec()).collect();
    while runs.len() > 1 {
        let mut next = Vec::with_capacity(runs.len().div_ceil(2));
        let mut it = runs.into_iter();
        while let Some(a) = it.next() {
            match it.next() {
                Some(b) => next.push(merge_parts(a, b, by)),
                None => next.push(a),
            }
        }
        runs = next;
    }
    *v = runs.pop().unwrap_or_default();
}

fn merge_parts<T: Copy>(a: Vec<T>, b: Vec<T>, by: &impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if by(&a[i], &b[j]) != Ordering::Greater {
            out.push(a[i]);
            i += 1;
        } else {
            out.push(b[j]);
            j += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `-m`: merges inputs taken as sorted, the earliest input first on ties.
fn merge<'a>(inputs: Vec<Vec<&'a [u8]>>, cmp: &Cmp) -> Vec<&'a [u8]> {
    let mut at = vec![0usize; inputs.len()];
    let mut out = Vec::with_capacity(inputs.iter().map(Vec::len).sum());
    loop {
        let mut best: Option<usize> = None;
        for (k, v) in inputs.iter().enumerate() {
            if at[k] < v.len() {
                best = match best {
                    Some(b) if cmp.lines(inputs[b][at[b]], v[at[k]]) != Ordering::Greater => {
                        Some(b)
                    }
                    _ => Some(k),
                };
            }
        }
        let Some(b) = best else {
            return out;
        };
        out.push(inputs[b][at[b]]);
        at[b] += 1;
    }
}

/// `emit`, counting what it writes on the progress bar.
fn counted<'a>(
    emit: &'a mut dyn FnMut(&[u8]) -> io::Result<()>,
    bar: &'a progress::Progress,
) -> impl FnMut(&[u8]) -> io::Result<()> + 'a {
    move |b: &[u8]| {
        emit(b)?;
        bar.written(b.len() as u64);
        Ok(())
    }
}

/// Opens the output (only now: an input may be the output) and writes
/// the lines `feed` gives, each with its terminator.
fn write_out(
    o: &Opts,
    feed: impl FnOnce(
        &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<(), (Option<String>, io::Error, u64)>,
) -> OutResult {
    let term = o.framing().terminator();
    write_bytes(o, |emit| {
        feed(&mut |l: &[u8]| {
            emit(l)?;
            match term {
                Some(t) => emit(&[t]),
                None => Ok(()),
            }
        })
    })
}

/// Opens the output (only now: an input may be the output) and writes
/// the bytes `feed` gives, as they are.
fn write_bytes(
    o: &Opts,
    feed: impl FnOnce(
        &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> Result<(), (Option<String>, io::Error, u64)>,
) -> OutResult {
    let file;
    let mut out = match &o.output {
        Some(p) => {
            file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(p)
                .map_err(|e| (Some(common::os_to_string(p)), e, 0))?;
            ferry::transfer::OrderedOut::new(std::os::fd::AsFd::as_fd(&file))
        }
        None => super::output::stdout(),
    };
    let mut total = 0u64;
    let r = feed(&mut |l: &[u8]| {
        total += l.len() as u64;
        out.write(l)
    });
    r.map_err(|(n, e, _)| (n, e, total))?;
    out.flush().map_err(|e| (None, e, total))?;
    Ok(total)
}

/// `-c`/`-C`: 0 if the input is in order (strictly, with `-u`), 1 with
/// GNU's report of the first line out of order.
fn check(t: &Tool, o: &Opts, cmp: &Cmp, mode: Check) -> i32 {
    let f = &o.files[0];
    let data = match read_input(f, o.output.as_ref()) {
        Ok(b) => b,
        // (-c checks no access first: an absent file is "open failed".)
        Err(e) if e.kind() == io::ErrorKind::OutOfMemory => {
            return cannot_read(t, &common::os_to_string(f), &e)
        }
        Err(e) => {
            let name = common::os_to_string(f);
            let what = match read_failure(&name, &e) {
                "cannot read" => read_failure_after_access(&name, &e),
                w => w,
            };
            t.error(format_args!(
                "{what}: {}: {}",
                common::quotef(f),
                common::describe(&e)
            ));
            return 2;
        }
    };
    let lines = lines_of(&data, o.eol);
    for (i, w) in lines.windows(2).enumerate() {
        let d = cmp.lines(w[0], w[1]);
        let bad = if o.unique {
            d != Ordering::Less
        } else {
            d == Ordering::Greater
        };
        if bad {
            if mode == Check::Diagnose {
                let mut msg = format!(
                    "{}: {}:{}: disorder: ",
                    t.name,
                    common::os_to_string(f),
                    i + 2
                )
                .into_bytes();
                msg.extend_from_slice(w[1]);
                msg.push(b'\n');
                let _ = std::io::Write::write_all(&mut std::io::stderr(), &msg);
            }
            return 1;
        }
    }
    0
}
