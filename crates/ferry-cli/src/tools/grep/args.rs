//! The command line: GNU grep's options, read into what the search needs.

use super::help::HELP;
use super::walk::{Devices, Directories, Filter, Walk};
use super::*;

/// Everything the command line asked for.
pub(super) struct Args {
    pub o: Opts,
    pub patterns: Vec<Vec<u8>>,
    /// Where each pattern came from: a -f file's name and line, for GNU's
    /// `FILE:LINE:` before a message about it.
    pub origins: Vec<Option<(String, usize)>>,
    pub flavor: Flavor,
    pub ignore_case: bool,
    pub whole: Whole,
    pub ops: Vec<OsString>,
    pub walk: Walk,
}

/// Long options that take their value from the next argument when it is
/// not attached (after `longopts::expand`, names are whole).
const LONG_VALUES: &[&str] = &[
    "--max-count",
    "--label",
    "--devices",
    "--directories",
    "--regexp",
    "--include",
    "--exclude",
    "--exclude-from",
    "--exclude-dir",
    "--before-context",
    "--binary-files",
    "--after-context",
    "--context",
    "--group-separator",
    "--file",
];

/// GNU's `-NUM`: digits in one option word make one number, the same as
/// `--context=NUM` (a later word starts a new number). Rewrites each run
/// of digits in a cluster of short options to `--context=NUM`.
fn context_digits(args: Vec<OsString>) -> Vec<OsString> {
    let mut out = Vec::with_capacity(args.len());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let Some(s) = a.to_str() else {
            out.push(a);
            continue;
        };
        if s == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        if s.starts_with("--") {
            let takes = LONG_VALUES.contains(&s);
            out.push(a);
            if takes {
                out.extend(it.next());
            }
            continue;
        }
        let Some(cluster) = s.strip_prefix('-').filter(|c| !c.is_empty()) else {
            out.push(a);
            continue;
        };
        if !cluster.bytes().any(|b| b.is_ascii_digit()) {
            // Unchanged; a value-taking option last takes the next word.
            let last = cluster
                .char_indices()
                .find(|(_, c)| "ABCDXdefm".contains(*c))
                .is_some_and(|(i, _)| i + 1 == cluster.len());
            out.push(a);
            if last {
                out.extend(it.next());
            }
            continue;
        }
        let mut rest = String::new();
        let mut digits = String::new();
        let mut takes_next = false;
        for (i, c) in cluster.char_indices() {
            if c.is_ascii_digit() {
                digits.push(c);
                continue;
            }
            rest.push(c);
            if "ABCDXdefm".contains(c) {
                let value = &cluster[i + c.len_utf8()..];
                rest.push_str(value);
                takes_next = value.is_empty();
                break;
            }
        }
        // Options before and after the digits keep their order relative
        // to each other; the number only sets the default context.
        if !digits.is_empty() {
            out.push(format!("--context={digits}").into());
        }
        if !rest.is_empty() {
            out.push(format!("-{rest}").into());
        }
        if takes_next {
            out.extend(it.next());
        }
    }
    out
}

/// A context length: GNU takes any size (a huge one is "all"), refuses a
/// negative or non-numeric one.
fn context_len(t: &Tool, v: Result<OsString, lexopt::Error>) -> Result<usize, i32> {
    let v = v.map_err(|e| {
        t.bad_option(e);
        2
    })?;
    let s = common::os_to_string(&v);
    let digits = s.trim_start_matches(|c: char| c.is_ascii_whitespace() || c == '+');
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return Ok(digits.parse::<usize>().unwrap_or(usize::MAX));
    }
    t.error(format_args!("{s}: invalid context length argument"));
    Err(2)
}

/// An option's value, or the usage error for a missing one.
fn value(t: &Tool, p: &mut lexopt::Parser) -> Result<OsString, i32> {
    p.value().map_err(|e| {
        t.bad_option(e);
        2
    })
}

/// GNU's message for a bad keyword of `--directories`, and its status
/// (gnulib's argmatch exits with 1 there, not grep's 2).
fn invalid_choice(t: &Tool, v: &str, opt: &str, choices: &[&str]) -> i32 {
    t.error(format_args!("invalid argument '{v}' for '--{opt}'"));
    eprintln!("Valid arguments are:");
    for c in choices {
        eprintln!("  - '{c}'");
    }
    t.hint();
    1
}

pub(super) fn parse(t: &Tool, args: Vec<OsString>, utf8: bool) -> Result<Args, i32> {
    use lexopt::prelude::*;
    let mut syntax = Syntax::Basic;
    let mut ignore_case = false;
    let mut whole = Whole::Any;
    let mut patterns: Option<Vec<Vec<u8>>> = None;
    let mut origins: Vec<Option<(String, usize)>> = Vec::new();
    let mut o = Opts {
        report: Report::Lines,
        invert: false,
        numbers: false,
        only: false,
        with_name: None,
        no_messages: false,
        text: false,
        skip_binary: false,
        max_count: None,
        label: "(standard input)".into(),
        utf8,
        context_given: false,
        before: 0,
        after: 0,
        group_sep: Some(b"--".to_vec()),
        byte_offset: false,
        initial_tab: false,
        null_name: false,
        line_buffered: false,
        nul_data: false,
        color: None,
    };
    let mut walk = Walk {
        directories: Directories::Read,
        deref: false,
        devices: Devices::Default,
        filter: Filter::default(),
    };
    let (mut before, mut after, mut context): (Option<usize>, Option<usize>, Option<usize>) =
        (None, None, None);
    let mut color = "never".to_string();
    let mut count = false;
    let mut list: Option<Report> = None;
    let mut quiet = false;
    let mut ops: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(context_digits(args));
    loop {
        let arg = match common::next_arg_of(t, &mut p, 2) {
            Ok(Some(a)) => a,
            Ok(None) => break,
            Err(code) => return Err(code),
        };
        if let Some(code) = common::common_arg(t, &arg, HELP) {
            return Err(code);
        }
        match arg {
            Short('E') | Long("extended-regexp") => syntax = Syntax::Extended,
            Short('F') | Long("fixed-strings") => syntax = Syntax::Fixed,
            Short('P') | Long("perl-regexp") => {
                // No PCRE here: say so plainly rather than guess at Perl's
                // syntax with another engine.
                t.error(format_args!(
                    "Perl matching (-P) is not supported by ferry grep; use -E or -G"
                ));
                return Err(2);
            }
            Short('G') | Long("basic-regexp") => syntax = Syntax::Basic,
            Short('e') | Long("regexp") => {
                let Ok(v) = p.value() else {
                    t.usage_error(format_args!("option requires an argument -- 'e'"));
                    return Err(2);
                };
                add_patterns(&mut patterns, v.as_encoded_bytes());
                origins.resize(patterns.as_ref().map_or(0, Vec::len), None);
            }
            Short('f') | Long("file") => {
                let Ok(v) = p.value() else {
                    t.usage_error(format_args!("option requires an argument -- 'f'"));
                    return Err(2);
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
                        return Err(2);
                    }
                }
            }
            Short('i') | Short('y') | Long("ignore-case") => ignore_case = true,
            Long("no-ignore-case") => ignore_case = false,
            Short('w') | Long("word-regexp") => whole = Whole::Word,
            Short('x') | Long("line-regexp") => whole = Whole::Line,
            Short('z') | Long("null-data") => o.nul_data = true,
            Short('s') | Long("no-messages") => o.no_messages = true,
            Short('v') | Long("invert-match") => o.invert = true,
            Short('V') => {
                return Err(common::version(t));
            }
            Short('m') | Long("max-count") => {
                let v = p.value().ok().and_then(|v| v.into_string().ok());
                match v.as_deref().map(str::parse::<i64>) {
                    Some(Ok(n)) => o.max_count = (n >= 0).then_some(n as u64),
                    _ => {
                        t.error(format_args!("invalid max count"));
                        return Err(2);
                    }
                }
            }
            Short('b') | Long("byte-offset") => o.byte_offset = true,
            Short('n') | Long("line-number") => o.numbers = true,
            Long("line-buffered") => o.line_buffered = true,
            Short('H') | Long("with-filename") => o.with_name = Some(true),
            Short('h') | Long("no-filename") => o.with_name = Some(false),
            Long("label") => o.label = common::os_to_string(&value(t, &mut p)?),
            Short('o') | Long("only-matching") => o.only = true,
            Short('q') | Long("quiet") | Long("silent") => quiet = true,
            Long("binary-files") => {
                let v = value(t, &mut p)?;
                match v.to_str() {
                    Some("binary") => (o.text, o.skip_binary) = (false, false),
                    Some("text") => (o.text, o.skip_binary) = (true, false),
                    Some("without-match") => (o.text, o.skip_binary) = (false, true),
                    _ => {
                        t.error(format_args!("unknown binary-files type"));
                        return Err(2);
                    }
                }
            }
            Short('a') | Long("text") => (o.text, o.skip_binary) = (true, false),
            Short('I') => (o.text, o.skip_binary) = (false, true),
            Short('d') | Long("directories") => {
                let v = common::os_to_string(&value(t, &mut p)?);
                walk.directories = match v.as_str() {
                    "read" => Directories::Read,
                    "recurse" => Directories::Recurse,
                    "skip" => Directories::Skip,
                    _ => {
                        return Err(invalid_choice(
                            t,
                            &v,
                            "directories",
                            &["read", "recurse", "skip"],
                        ))
                    }
                };
            }
            Short('D') | Long("devices") => {
                let v = common::os_to_string(&value(t, &mut p)?);
                walk.devices = match v.as_str() {
                    "read" => Devices::Read,
                    "skip" => Devices::Skip,
                    _ => {
                        t.error(format_args!("unknown devices method"));
                        return Err(2);
                    }
                };
            }
            Short('r') | Long("recursive") => {
                walk.directories = Directories::Recurse;
                walk.deref = false;
            }
            Short('R') | Long("dereference-recursive") => {
                walk.directories = Directories::Recurse;
                walk.deref = true;
            }
            Long("include") => walk.filter.add(&value(t, &mut p)?, true),
            Long("exclude") => walk.filter.add(&value(t, &mut p)?, false),
            Long("exclude-from") => {
                let v = value(t, &mut p)?;
                match std::fs::read(&v) {
                    Ok(d) => {
                        for l in d.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
                            use std::os::unix::ffi::OsStrExt;
                            walk.filter.add(std::ffi::OsStr::from_bytes(l), false);
                        }
                    }
                    Err(e) => {
                        t.file_error(&common::os_to_string(&v), &e);
                        return Err(2);
                    }
                }
            }
            Long("exclude-dir") => walk.filter.add_dir(&value(t, &mut p)?),
            Short('T') | Long("initial-tab") => o.initial_tab = true,
            Short('Z') | Long("null") => o.null_name = true,
            Short('U') | Long("binary") => {}
            Short('u') | Long("unix-byte-offsets") => {
                t.error(format_args!(
                    "warning: --unix-byte-offsets (-u) is obsolete"
                ));
            }
            Short('A') | Long("after-context") => after = Some(context_len(t, p.value())?),
            Short('B') | Long("before-context") => before = Some(context_len(t, p.value())?),
            Short('C') | Long("context") => context = Some(context_len(t, p.value())?),
            Long("group-separator") => {
                o.group_sep = Some(value(t, &mut p)?.into_encoded_bytes());
            }
            Long("no-group-separator") => o.group_sep = None,
            Short('l') | Long("files-with-matches") => list = Some(Report::FilesWith),
            Short('L') | Long("files-without-match") => list = Some(Report::FilesWithout),
            Short('c') | Long("count") => count = true,
            Long("color") | Long("colour") => {
                color = match p.optional_value() {
                    Some(v) => common::os_to_string(&v),
                    None => "auto".into(),
                };
            }
            Value(v) => ops.push(v),
            other => {
                t.bad_option(other.unexpected());
                return Err(2);
            }
        }
    }
    o.context_given = before.is_some() || after.is_some() || context.is_some();
    o.before = before.or(context).unwrap_or(0);
    o.after = after.or(context).unwrap_or(0);
    o.report = if quiet {
        Report::Quiet
    } else if let Some(l) = list {
        l
    } else if count {
        Report::Count
    } else {
        Report::Lines
    };
    match color::wanted(&color) {
        Some(true) => o.color = Some(color::Colors::from_env(t)),
        Some(false) => {}
        None => {
            // GNU's answer to a --color it does not know: the help text.
            return Err(common::answer(t, format_args!("{HELP}"), true));
        }
    }
    let patterns = match patterns {
        Some(p) => p,
        None => {
            if ops.is_empty() {
                t.hint();
                return Err(2);
            }
            let mut v = None;
            add_patterns(&mut v, ops.remove(0).as_encoded_bytes());
            v.unwrap_or_default()
        }
    };
    let flavor = Flavor {
        syntax,
        utf8: o.utf8,
        icase: ignore_case,
        nul_data: o.nul_data,
    };
    Ok(Args {
        o,
        patterns,
        origins,
        flavor,
        ignore_case,
        whole,
        ops,
        walk,
    })
}

/// Adds the lines of one pattern operand.
fn add_patterns(into: &mut Option<Vec<Vec<u8>>>, p: &[u8]) {
    into.get_or_insert_with(Vec::new)
        .extend(p.split(|&b| b == b'\n').map(|l| l.to_vec()));
}

#[cfg(test)]
mod tests {
    use super::context_digits;

    fn rw(v: &[&str]) -> Vec<String> {
        context_digits(v.iter().map(|s| s.into()).collect())
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect()
    }

    #[test]
    fn digit_options_become_context() {
        assert_eq!(rw(&["-12", "x"]), ["--context=12", "x"]);
        assert_eq!(rw(&["-n3", "x"]), ["--context=3", "-n", "x"]);
        assert_eq!(rw(&["-e", "-5", "x"]), ["-e", "-5", "x"]);
        assert_eq!(rw(&["-e5", "-2"]), ["-e5", "--context=2"]);
        assert_eq!(rw(&["--regexp", "-5"]), ["--regexp", "-5"]);
        assert_eq!(rw(&["--", "-5"]), ["--", "-5"]);
        assert_eq!(rw(&["-m", "7"]), ["-m", "7"]);
    }
}
