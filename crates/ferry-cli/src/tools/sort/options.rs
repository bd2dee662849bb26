//! `ferry sort`'s command line, read as GNU sort reads it: the options,
//! their arguments and GNU's messages for bad ones.

use super::key::{self, Key};
use crate::tools::common::{self, Tool};
use ferry::sort::Framing;
use std::ffi::OsString;

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
pub(super) enum Check {
    Diagnose,
    Quiet,
}

pub(super) struct Opts {
    pub(super) global: Key,
    pub(super) keys: Vec<Key>,
    pub(super) tab: Option<u8>,
    pub(super) unique: bool,
    pub(super) stable: bool,
    pub(super) check: Option<Check>,
    pub(super) merge: bool,
    pub(super) output: Option<OsString>,
    pub(super) eol: u8,
    pub(super) parallel: usize,
    pub(super) files: Vec<OsString>,
    /// `-S`, in bytes.
    pub(super) buffer: u64,
    /// `-T`.
    pub(super) temp: Option<OsString>,
    /// `--record-size`, `--key-bytes`, `--key-offset`: fixed-size binary
    /// records sorted by a byte range.
    pub(super) record: Option<usize>,
    pub(super) key_bytes: Option<usize>,
    pub(super) key_offset: usize,
}

impl Opts {
    pub(super) fn framing(&self) -> Framing {
        match self.record {
            Some(n) => Framing::Records(n),
            None => Framing::Lines(self.eol),
        }
    }
}

/// Parses the command line, GNU's way; `Err(status)` after reporting.
pub(super) fn parse(t: &Tool, args: Vec<OsString>) -> Result<Opts, i32> {
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
                        t.error(format_args!(
                            "{how} argument {} for {}",
                            common::quote(&v),
                            common::quote("--sort")
                        ));
                        eprintln!("Valid arguments are:");
                        for a in [
                            "general-numeric",
                            "human-numeric",
                            "month",
                            "numeric",
                            "random",
                            "version",
                        ] {
                            eprintln!("  - {}", common::quote(a));
                        }
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
                            "multi-character tab {}",
                            common::quote(&String::from_utf8_lossy(b))
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
                        t.error(format_args!(
                            "invalid argument {} for {}",
                            common::quote(&v),
                            common::quote("--check")
                        ));
                        eprintln!(
                            "Valid arguments are:\n  - {}, {}\n  - {}",
                            common::quote("quiet"),
                            common::quote("silent"),
                            common::quote("diagnose-first")
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
                        // GNU's xstrtol message: ASCII quotes in every locale.
                        t.error(format_args!("invalid --parallel argument '{v}'"));
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
    ferry::sort::physical_memory()
}
