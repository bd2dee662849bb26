//! `ferry diff`'s options, as GNU diff 3.8 takes them.

use super::compare::Ignore;
use super::format::Palette;
use crate::tools::common::{self, Tool};
use std::ffi::{CString, OsString};

const HELP: &str = "Usage: ferry diff [OPTION]... FILES
Compare FILES line by line.

      --normal                  output a normal diff (the default)
  -q, --brief                   report only when files differ
  -s, --report-identical-files  report when two files are the same
  -c, -C NUM, --context[=NUM]   output NUM (default 3) lines of copied context
  -u, -U NUM, --unified[=NUM]   output NUM (default 3) lines of unified context
  -y, --side-by-side            output in two columns
  -W, --width=NUM               output at most NUM (default 130) print columns
      --left-column             output only the left column of common lines
      --suppress-common-lines   do not output common lines
      --suppress-blank-empty    suppress space or tab before empty output lines

  -p, --show-c-function         show which C function each change is in
  -r, --recursive               recursively compare any subdirectories found
  -N, --new-file                treat absent files as empty
  -S, --starting-file=FILE      start with FILE when comparing directories
      --unidirectional-new-file treat absent first files as empty
  -x, --exclude=PAT             exclude files that match PAT
  -X, --exclude-from=FILE       exclude files that match any pattern in FILE

      --no-dereference          don't follow symbolic links
      --from-file=FILE1         compare FILE1 to all operands
      --to-file=FILE2           compare all operands to FILE2

      --strip-trailing-cr       strip trailing carriage return on input
  -i, --ignore-case             ignore case differences in file contents
  -E, --ignore-tab-expansion    ignore changes due to tab expansion
  -Z, --ignore-trailing-space   ignore white space at line end
  -b, --ignore-space-change     ignore changes in the amount of white space
  -w, --ignore-all-space        ignore all white space
  -B, --ignore-blank-lines      ignore changes where lines are all blank

  -a, --text                    treat all files as text
      --label LABEL             use LABEL instead of file name and timestamp
                                  (can be repeated)
  -t, --expand-tabs             expand tabs to spaces in output
  -T, --initial-tab             make tabs line up by prepending a tab
      --tabsize=NUM             tab stops every NUM (default 8) print columns
      --color[=WHEN]            color output; WHEN is 'never', 'always', or 'auto'
      --palette=PALETTE         the colors to use when --color is active
      --help               display this help and exit
  -v, --version            output version information and exit

FILES are 'FILE1 FILE2' or 'DIR1 DIR2' or 'DIR FILE' or 'FILE DIR'.
If a FILE is '-', read standard input.
Exit status is 0 if inputs are the same, 1 if different, 2 if trouble.
";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Style {
    Normal,
    Unified,
    Context,
    Side,
}

pub struct Opts {
    pub brief: bool,
    pub report_same: bool,
    pub text: bool,
    pub style: Style,
    /// Lines of context (-u, -c): the largest asked for.
    pub context: usize,
    pub labels: Vec<String>,
    pub ig: Ignore,
    pub strip_cr: bool,
    pub expand_tabs: bool,
    pub initial_tab: bool,
    pub function: bool,
    pub tabsize: usize,
    pub width: usize,
    pub left_column: bool,
    pub suppress_common: bool,
    pub recursive: bool,
    pub new_file: bool,
    pub unidirectional: bool,
    pub excludes: Vec<CString>,
    pub color: bool,
    pub palette: Palette,
    /// The options as typed, for the `diff -r A/x B/x` lines.
    pub switches: String,
    /// --no-dereference: symbolic links are compared as links.
    pub no_deref: bool,
    /// --suppress-blank-empty: no blank after the mark of an empty line.
    pub suppress_blank_empty: bool,
    /// -S: the first name compared in the top directories.
    pub starting_file: Option<OsString>,
    /// --from-file / --to-file: the file every operand is compared
    /// with, and whether it comes first.
    pub against: Option<(OsString, bool)>,
}

fn num(v: &OsString) -> Option<usize> {
    let s = v.to_str()?;
    if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// A word as GNU's shell quoting writes it: bare when it is safe, else in
/// single quotes.
fn shell_word(w: &str) -> String {
    let safe = !w.is_empty()
        && w.bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"%+,-./:@^_".contains(&c));
    if safe {
        w.to_string()
    } else {
        common::shell_quote(w)
    }
}

/// Parses the arguments; `Err(status)` after reporting a usage error (or
/// after --help / --version, with 0). `typed` are the arguments before
/// long options were expanded.
pub fn parse(
    t: &Tool,
    args: Vec<OsString>,
    typed: &[OsString],
) -> Result<(Opts, Vec<OsString>), i32> {
    use lexopt::prelude::*;
    let mut o = Opts {
        brief: false,
        report_same: false,
        text: false,
        style: Style::Normal,
        context: 0,
        labels: Vec::new(),
        ig: Ignore {
            tabsize: 8,
            ..Ignore::default()
        },
        strip_cr: false,
        expand_tabs: false,
        initial_tab: false,
        function: false,
        tabsize: 8,
        width: 130,
        left_column: false,
        suppress_common: false,
        recursive: false,
        new_file: false,
        unidirectional: false,
        excludes: Vec::new(),
        color: false,
        palette: Palette::default(),
        switches: switches(typed),
        no_deref: false,
        suppress_blank_empty: false,
        starting_file: None,
        against: None,
    };
    let mut from: Option<OsString> = None;
    let mut to: Option<OsString> = None;
    let mut style: Option<Style> = None;
    let mut set_style = |s: Style| -> Result<(), i32> {
        match style {
            Some(x) if x != s => {
                t.usage_error(format_args!("conflicting output style options"));
                Err(2)
            }
            _ => {
                style = Some(s);
                Ok(())
            }
        }
    };
    let mut context: Option<usize> = None;
    let mut ctx = |n: usize| context = Some(context.map_or(n, |c| c.max(n)));
    let mut color_when = "never".to_string();
    let mut ops: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    let value = |p: &mut lexopt::Parser| -> Result<OsString, i32> {
        p.value().map_err(|e| {
            t.bad_option(e);
            2
        })
    };
    let bad = |what: &str, v: &OsString| -> i32 {
        t.usage_error(format_args!("invalid {what} '{}'", common::os_to_string(v)));
        2
    };
    loop {
        let arg = match common::next_arg_of(t, &mut p, 2) {
            Ok(Some(a)) => {
                if let Some(code) = common::common_arg(t, &a, HELP) {
                    return Err(code);
                }
                a
            }
            Ok(None) => break,
            Err(code) => return Err(code),
        };
        match arg {
            Short('q') | Long("brief") => o.brief = true,
            Short('s') | Long("report-identical-files") => o.report_same = true,
            Short('a') | Long("text") => o.text = true,
            Long("normal") => set_style(Style::Normal)?,
            Short('u') => {
                set_style(Style::Unified)?;
                ctx(3);
            }
            Short('c') => {
                set_style(Style::Context)?;
                ctx(3);
            }
            Long(l @ ("unified" | "context")) => {
                set_style(if l == "unified" {
                    Style::Unified
                } else {
                    Style::Context
                })?;
                match p.optional_value() {
                    None => ctx(3),
                    Some(v) => ctx(num(&v).ok_or_else(|| bad("context length", &v))?),
                }
            }
            Short(c @ ('U' | 'C')) => {
                set_style(if c == 'U' {
                    Style::Unified
                } else {
                    Style::Context
                })?;
                let v = value(&mut p)?;
                ctx(num(&v).ok_or_else(|| bad("context length", &v))?);
            }
            Short('y') | Long("side-by-side") => set_style(Style::Side)?,
            Short('W') | Long("width") => {
                let v = value(&mut p)?;
                o.width = num(&v).filter(|&n| n > 0).ok_or_else(|| bad("width", &v))?;
            }
            Long("tabsize") => {
                let v = value(&mut p)?;
                o.tabsize = num(&v)
                    .filter(|&n| n > 0)
                    .ok_or_else(|| bad("tabsize", &v))?;
            }
            Long("left-column") => o.left_column = true,
            Long("suppress-common-lines") => o.suppress_common = true,
            Short('p') | Long("show-c-function") => o.function = true,
            Short('r') | Long("recursive") => o.recursive = true,
            Short('N') | Long("new-file") => o.new_file = true,
            Long("unidirectional-new-file") => o.unidirectional = true,
            Short('x') | Long("exclude") => {
                let v = value(&mut p)?;
                o.excludes.push(pattern(v.as_encoded_bytes()));
            }
            Short('X') | Long("exclude-from") => {
                let v = value(&mut p)?;
                match std::fs::read(&v) {
                    Ok(d) => o.excludes.extend(
                        d.split(|&c| c == b'\n')
                            .filter(|l| !l.is_empty())
                            .map(pattern),
                    ),
                    Err(e) => {
                        t.file_error(&common::os_to_string(&v), &e);
                        return Err(2);
                    }
                }
            }
            Long("strip-trailing-cr") => o.strip_cr = true,
            Long("no-dereference") => o.no_deref = true,
            Long("suppress-blank-empty") => o.suppress_blank_empty = true,
            Short('S') | Long("starting-file") => o.starting_file = Some(value(&mut p)?),
            Long("from-file") => from = Some(value(&mut p)?),
            Long("to-file") => to = Some(value(&mut p)?),
            Short('i') | Long("ignore-case") => o.ig.case = true,
            Short('E') | Long("ignore-tab-expansion") => o.ig.tab_expansion = true,
            Short('Z') | Long("ignore-trailing-space") => o.ig.trailing_space = true,
            Short('b') | Long("ignore-space-change") => o.ig.space_change = true,
            Short('w') | Long("ignore-all-space") => o.ig.all_space = true,
            Short('B') | Long("ignore-blank-lines") => o.ig.blank_lines = true,
            Short('t') | Long("expand-tabs") => o.expand_tabs = true,
            Short('T') | Long("initial-tab") => o.initial_tab = true,
            Long("color") => {
                color_when = match p.optional_value() {
                    None => "auto".into(),
                    Some(v) => match v.to_str() {
                        Some(w @ ("never" | "always" | "auto")) => w.to_string(),
                        _ => return Err(bad("color", &v)),
                    },
                }
            }
            Long("palette") => {
                let v = value(&mut p)?;
                o.palette.apply(&v.to_string_lossy());
            }
            Long("label") => o.labels.push(common::os_to_string(&value(&mut p)?)),
            Short('v') => {
                return Err(common::version(t));
            }
            Value(v) => ops.push(v),
            other => {
                t.bad_option(other.unexpected());
                return Err(2);
            }
        }
    }
    // -p alone asks for context format.
    o.style = style.unwrap_or(if o.function {
        Style::Context
    } else {
        Style::Normal
    });
    o.context = context.unwrap_or(3);
    o.ig.tabsize = o.tabsize;
    o.color = match color_when.as_str() {
        "always" => true,
        "auto" => {
            // SAFETY: isatty only inspects the descriptor.
            let tty = unsafe { libc::isatty(1) == 1 };
            tty && std::env::var("TERM").is_ok_and(|v| v != "dumb")
        }
        _ => false,
    };
    o.against = match (from, to) {
        (Some(_), Some(_)) => {
            t.error(format_args!("--from-file and --to-file both specified"));
            return Err(2);
        }
        (Some(f), None) => Some((f, true)),
        (None, Some(f)) => Some((f, false)),
        (None, None) => None,
    };
    if o.against.is_some() {
        return Ok((o, ops));
    }
    match ops.len() {
        0 => {
            t.usage_error(format_args!("missing operand after 'diff'"));
            Err(2)
        }
        1 => {
            t.usage_error(format_args!(
                "missing operand after '{}'",
                common::os_to_string(&ops[0])
            ));
            Err(2)
        }
        2 => Ok((o, ops)),
        _ => {
            t.usage_error(format_args!(
                "extra operand '{}'",
                common::os_to_string(&ops[2])
            ));
            Err(2)
        }
    }
}

/// An exclusion pattern for fnmatch (a NUL cuts it short, as in C).
fn pattern(b: &[u8]) -> CString {
    let end = memchr::memchr(0, b).unwrap_or(b.len());
    CString::new(&b[..end]).unwrap_or_default()
}

/// The options among the typed arguments, as GNU prints them in the `diff
/// -r A/x B/x` lines: every word that is not an operand, each quoted for
/// the shell when it needs to be, with a space before each.
fn switches(typed: &[OsString]) -> String {
    const SHORT_VALUES: &str = "CDFILSUWXx";
    let mut s = String::new();
    let mut it = typed.iter();
    while let Some(a) = it.next() {
        let w = common::os_to_string(a);
        if w == "--" {
            s.push_str(" --");
            break;
        }
        if w == "-" || !w.starts_with('-') {
            continue;
        }
        s.push(' ');
        s.push_str(&shell_word(&w));
        let takes_next = if let Some(long) = w.strip_prefix("--") {
            !long.contains('=') && super::super::longopts::takes_value("diff", long)
        } else {
            let cluster = &w[1..];
            cluster
                .char_indices()
                .find(|(_, c)| SHORT_VALUES.contains(*c))
                .is_some_and(|(i, c)| i + c.len_utf8() == cluster.len())
        };
        if takes_next {
            if let Some(v) = it.next() {
                s.push(' ');
                s.push_str(&shell_word(&common::os_to_string(v)));
            }
        }
    }
    s
}
