//! `ferry diff`: GNU diff's normal and unified (`-u`, `-U N`) output,
//! `-q`, `-s`, `-a`, `--label`, its binary-file check and exit statuses.
//!
//! Regular files are mapped (`Buf::map_file`, which holds a read lease so
//! the bytes cannot change under the diff) and their lines are handed to
//! the diff as slices of the mapping — nothing is copied. A file that
//! cannot be leased (open for writing somewhere, owned by another user,
//! on a file system without leases) is read into memory instead
//! (`Buf::read_file`). The edit script
//! comes from `imara-diff`'s Myers (with GNU's and git's heuristics for
//! large inputs); its change groups are then slid the way GNU diff slides
//! them (`shift_boundaries`), so that ambiguous changes are shown where GNU
//! shows them.

use super::common::{self, Tool};
use super::output::Out;
use ferry::Buf;
use imara_diff::intern::{Interner, Token};
use std::ffi::OsString;
use std::io::{self, Write};
use std::ops::Range;

const HELP: &str = "Usage: ferry diff [OPTION]... FILES
Compare FILES line by line.

      --normal                  output a normal diff (the default)
  -q, --brief                   report only when files differ
  -s, --report-identical-files  report when two files are the same
  -u, -U NUM, --unified[=NUM]   output NUM (default 3) lines of unified context
  -a, --text                    treat all files as text
      --label LABEL             use LABEL instead of file name and timestamp
                                  (can be repeated)
      --help               display this help and exit
  -v, --version            output version information and exit

FILES are 'FILE1 FILE2'.  If a FILE is '-', read standard input.
Exit status is 0 if inputs are the same, 1 if different, 2 if trouble.
";

/// GNU diff decides "binary" from its first buffer: one block.
const BINARY_PROBE: usize = 4096;

struct Opts {
    brief: bool,
    report_same: bool,
    unified: Option<usize>,
    text: bool,
    labels: Vec<String>,
}

pub fn main(t: &Tool, args: Vec<OsString>) -> i32 {
    use lexopt::prelude::*;
    let mut o = Opts {
        brief: false,
        report_same: false,
        unified: None,
        text: false,
        labels: Vec::new(),
    };
    let mut ops: Vec<OsString> = Vec::new();
    let mut p = lexopt::Parser::from_args(args);
    loop {
        let arg = common::next_arg!(t, p, HELP, 2);
        match arg {
            Short('q') | Long("brief") => o.brief = true,
            Short('s') | Long("report-identical-files") => o.report_same = true,
            Short('a') | Long("text") => o.text = true,
            Long("normal") => o.unified = None,
            Short('u') => o.unified = Some(3),
            Long("unified") => match p.optional_value().map(|v| v.to_string_lossy().into_owned()) {
                None => o.unified = Some(3),
                Some(v) => match v.parse::<usize>() {
                    Ok(n) => o.unified = Some(n),
                    Err(_) => return bad_context(t, &v),
                },
            },
            Short('U') => match p.value().map(|v| v.to_string_lossy().into_owned()) {
                Ok(v) => match v.parse::<usize>() {
                    Ok(n) => o.unified = Some(n),
                    Err(_) => return bad_context(t, &v),
                },
                Err(e) => {
                    t.bad_option(e);
                    return 2;
                }
            },
            Long("label") => match p.value() {
                Ok(v) => o.labels.push(common::os_to_string(&v)),
                Err(e) => {
                    t.bad_option(e);
                    return 2;
                }
            },
            Short('v') => {
                println!("{} {}", t.name, env!("CARGO_PKG_VERSION"));
                return 0;
            }
            Value(v) => ops.push(v),
            other => {
                t.bad_option(other.unexpected());
                return 2;
            }
        }
    }
    match ops.len() {
        0 => {
            t.usage_error(format_args!("missing operand after 'diff'"));
            return 2;
        }
        1 => {
            t.usage_error(format_args!(
                "missing operand after '{}'",
                common::os_to_string(&ops[0])
            ));
            return 2;
        }
        2 => {}
        _ => {
            t.usage_error(format_args!(
                "extra operand '{}'",
                common::os_to_string(&ops[2])
            ));
            return 2;
        }
    }
    let mut out = Out::new();
    let r = run(t, &o, &ops[0], &ops[1], &mut out).and_then(|code| {
        out.flush()?;
        Ok(code)
    });
    match r {
        Ok(code) => code,
        Err(e) => {
            // diffutils words it as cmp does, and it is trouble (2).
            if common::is_broken_pipe(&e) {
                common::die_of_sigpipe();
            }
            t.error(format_args!("standard output: {}", common::describe(&e)));
            2
        }
    }
}

fn bad_context(t: &Tool, value: &str) -> i32 {
    t.usage_error(format_args!("invalid context length '{value}'"));
    2
}

/// One side of the comparison.
struct Side {
    name: String,
    data: Buf,
    st: Option<rustix::fs::Stat>,
}

/// Reads an operand: a regular file is mapped, anything else read whole.
fn load(name: &OsString, other: &OsString) -> io::Result<Side> {
    use std::io::Read;
    let shown = common::os_to_string(name);
    if name == "-" {
        let st = rustix::fs::fstat(io::stdin()).ok();
        let mut v = Vec::new();
        io::stdin().lock().read_to_end(&mut v)?;
        return Ok(Side {
            name: shown,
            data: Buf::from_owner(v),
            st,
        });
    }
    let mut path = std::path::PathBuf::from(name);
    let mut shown = shown;
    if std::fs::metadata(&path).is_ok_and(|m| m.is_dir()) {
        // `diff FILE DIR` compares FILE with DIR/FILE's base name.
        let base = std::path::Path::new(other).file_name();
        if other == "-" || base.is_none() || std::fs::metadata(other).is_ok_and(|m| m.is_dir()) {
            return Err(io::Error::from_raw_os_error(libc::EISDIR));
        }
        path.push(base.unwrap_or_default());
        shown = path.to_string_lossy().into_owned();
    }
    let f = std::fs::File::open(&path)
        .map_err(|e| io::Error::new(e.kind(), format!("{shown}\0{e}")).into_inner_os(e))?;
    let st = rustix::fs::fstat(&f).ok();
    let data = match &st {
        Some(s) if common::is_reg(s) => {
            let all = 0..s.st_size as u64;
            Buf::map_file(&f, all.clone())
                .or_else(|_| Buf::read_file(&f, all))
                .map_err(common::os_only)?
        }
        _ => {
            let mut v = Vec::new();
            (&f).read_to_end(&mut v)?;
            Buf::from_owner(v)
        }
    };
    Ok(Side {
        name: shown,
        data,
        st,
    })
}

trait IntoInnerOs {
    fn into_inner_os(self, orig: io::Error) -> io::Error;
}

impl IntoInnerOs for io::Error {
    /// Keeps the OS error (GNU prints the operand and strerror itself).
    fn into_inner_os(self, orig: io::Error) -> io::Error {
        match orig.raw_os_error() {
            Some(n) => io::Error::from_raw_os_error(n),
            None => orig,
        }
    }
}

fn run(t: &Tool, o: &Opts, an: &OsString, bn: &OsString, out: &mut Out) -> io::Result<i32> {
    let a = match load(an, bn) {
        Ok(s) => s,
        Err(e) => {
            t.file_error(&dir_name(an, bn), &e);
            return Ok(2);
        }
    };
    let b = match load(bn, an) {
        Ok(s) => s,
        Err(e) => {
            t.file_error(&dir_name(bn, an), &e);
            return Ok(2);
        }
    };
    let same_file = match (&a.st, &b.st) {
        (Some(x), Some(y)) => {
            x.st_dev == y.st_dev && x.st_ino == y.st_ino && common::is_reg(x) && an != "-"
        }
        _ => false,
    };
    if same_file || a.data[..] == b.data[..] {
        if o.report_same {
            let l = |k: usize, s: &Side| o.labels.get(k).cloned().unwrap_or_else(|| s.name.clone());
            out.write(format!("Files {} and {} are identical\n", l(0, &a), l(1, &b)).as_bytes())?;
        }
        return Ok(0);
    }
    // Labels stand for the names everywhere.
    let (an_shown, bn_shown) = (
        o.labels.first().cloned().unwrap_or_else(|| a.name.clone()),
        o.labels.get(1).cloned().unwrap_or_else(|| b.name.clone()),
    );
    let binary = !o.text && (probe_binary(&a.data) || probe_binary(&b.data));
    if o.brief || binary {
        let what = if o.brief { "Files" } else { "Binary files" };
        out.write(format!("{what} {an_shown} and {bn_shown} differ\n").as_bytes())?;
        return Ok(1);
    }
    let la = lines(&a.data);
    let lb = lines(&b.data);
    // GNU keeps as many common lines beside the changes as it shows.
    let changes = edit_script(&la, &lb, o.unified.unwrap_or(0));
    match o.unified {
        None => normal(out, &la, &lb, &changes)?,
        Some(ctx) => {
            let label = |k: usize, s: &Side| match o.labels.get(k) {
                Some(l) => l.clone(),
                None => format!("{}\t{}", s.name, stamp(s.st.as_ref())),
            };
            out.write(format!("--- {}\n+++ {}\n", label(0, &a), label(1, &b)).as_bytes())?;
            unified(out, &la, &lb, &changes, ctx)?;
        }
    }
    Ok(1)
}

/// A normal-format diff of `a` and `b` (no binary check): 0 if they are
/// the same, 1 if not. For the benchmark variants.
pub fn diff_normal(a: &[u8], b: &[u8], out: &mut dyn Write) -> io::Result<i32> {
    if a == b {
        return Ok(0);
    }
    let (la, lb) = (lines(a), lines(b));
    normal(out, &la, &lb, &edit_script(&la, &lb, 0))?;
    Ok(1)
}

/// The name an error about operand `name` shows (DIR/FILE for a directory).
fn dir_name(name: &OsString, other: &OsString) -> String {
    if std::fs::metadata(name).is_ok_and(|m| m.is_dir()) {
        if let Some(base) = std::path::Path::new(other).file_name() {
            return std::path::Path::new(name)
                .join(base)
                .to_string_lossy()
                .into_owned();
        }
    }
    common::os_to_string(name)
}

fn probe_binary(d: &[u8]) -> bool {
    memchr::memchr(0, &d[..d.len().min(BINARY_PROBE)]).is_some()
}

/// The lines of `d`, each with its newline (the last may lack one).
fn lines(d: &[u8]) -> Vec<&[u8]> {
    let mut v = Vec::with_capacity(d.len() / 32 + 1);
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', d) {
        v.push(&d[start..=i]);
        start = i + 1;
    }
    if start < d.len() {
        v.push(&d[start..]);
    }
    v
}

/// A change: lines `a` of the first file become lines `b` of the second.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub a: Range<usize>,
    pub b: Range<usize>,
}

/// The edit script from `la` to `lb`, its groups slid as GNU slides them.
fn edit_script(la: &[&[u8]], lb: &[&[u8]], horizon: usize) -> Vec<Change> {
    let mut interner: Interner<&[u8]> = Interner::new(la.len() + lb.len());
    let ta: Vec<Token> = la.iter().map(|l| interner.intern(l)).collect();
    let tb: Vec<Token> = lb.iter().map(|l| interner.intern(l)).collect();
    let mut da = vec![false; ta.len()];
    let mut db = vec![false; tb.len()];
    imara_diff::diff_with_tokens(
        imara_diff::Algorithm::Myers,
        &ta,
        &tb,
        interner.num_tokens(),
        |x: Range<u32>, y: Range<u32>| {
            da[x.start as usize..x.end as usize].fill(true);
            db[y.start as usize..y.end as usize].fill(true);
        },
    );
    // GNU diff sets aside the files' common first and last lines (all but
    // `horizon` of them) before it looks for changes, so its slides stop
    // there: slide within the same window.
    let prefix = ta.iter().zip(&tb).take_while(|(x, y)| x == y).count();
    let suffix = ta[prefix..]
        .iter()
        .rev()
        .zip(tb[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    let lo = prefix - prefix.min(horizon);
    let keep = suffix - suffix.min(horizon);
    let (ha, hb) = (ta.len() - keep, tb.len() - keep);
    shift_boundaries(&ta[lo..ha], &mut da[lo..ha], &db[lo..hb]);
    shift_boundaries(&tb[lo..hb], &mut db[lo..hb], &da[lo..ha]);
    changes_of(&da, &db)
}

/// GNU diff's `shift_boundaries`: each run of changed lines moves up while
/// the line before it equals its last line (merging with runs above), then
/// down while its first line equals the line after it (merging below); it
/// is left at the lowest place that lines up with a change in the other
/// file, if any, else at the bottom.
fn shift_boundaries(t: &[Token], changed: &mut [bool], other: &[bool]) {
    // Indices are signed: GNU's arrays have an unchanged sentinel on both
    // sides, which `ch`/`oc` stand in for.
    let n = t.len() as isize;
    let ch = |c: &[bool], i: isize| i >= 0 && (i as usize) < c.len() && c[i as usize];
    let oc = |j: isize| j >= 0 && (j as usize) < other.len() && other[j as usize];
    let eq = |x: isize, y: isize| t[x as usize] == t[y as usize];
    let (mut i, mut j): (isize, isize) = (0, 0);
    loop {
        // The next run of changes, with the matching point in `other`.
        while i < n && !ch(changed, i) {
            while oc(j) {
                j += 1;
            }
            j += 1;
            i += 1;
        }
        if i == n {
            break;
        }
        let mut start = i;
        i += 1;
        while ch(changed, i) {
            i += 1;
        }
        while oc(j) {
            j += 1;
        }
        let mut corresponding;
        loop {
            let runlength = i - start;
            // Back, while the line before equals the run's last line; this
            // merges with runs above.
            while start > 0 && eq(start - 1, i - 1) {
                start -= 1;
                i -= 1;
                changed[start as usize] = true;
                changed[i as usize] = false;
                while ch(changed, start - 1) {
                    start -= 1;
                }
                j -= 1;
                while oc(j) {
                    j -= 1;
                }
            }
            // The run's end where it last lined up with a change in
            // `other` (n: nowhere).
            corresponding = if oc(j - 1) { i } else { n };
            // Forward, while the run's first line equals the line after
            // it; this merges with runs below.
            while i != n && eq(start, i) {
                changed[start as usize] = false;
                changed[i as usize] = true;
                start += 1;
                i += 1;
                while ch(changed, i) {
                    i += 1;
                }
                j += 1;
                while oc(j) {
                    j += 1;
                    corresponding = i;
                }
            }
            if runlength == i - start {
                break;
            }
        }
        // Back to where the run lines up with a change in `other`.
        while corresponding < i {
            start -= 1;
            i -= 1;
            changed[start as usize] = true;
            changed[i as usize] = false;
            j -= 1;
            while oc(j) {
                j -= 1;
            }
        }
    }
}

/// The change groups from per-line "changed" marks.
fn changes_of(da: &[bool], db: &[bool]) -> Vec<Change> {
    let mut v = Vec::new();
    let (mut i, mut j) = (0usize, 0usize);
    while i < da.len() || j < db.len() {
        if i < da.len() && j < db.len() && !da[i] && !db[j] {
            i += 1;
            j += 1;
            continue;
        }
        let (a0, b0) = (i, j);
        while i < da.len() && da[i] {
            i += 1;
        }
        while j < db.len() && db[j] {
            j += 1;
        }
        if (a0, b0) == (i, j) {
            // Marks out of step (cannot happen for a valid script); stop
            // rather than loop.
            break;
        }
        v.push(Change { a: a0..i, b: b0..j });
    }
    v
}

/// `s` or `s,e` for 1-based lines s..=e (GNU's normal-format range).
fn range(r: &Range<usize>) -> String {
    if r.end <= r.start + 1 {
        format!("{}", r.start + 1)
    } else {
        format!("{},{}", r.start + 1, r.end)
    }
}

fn line(out: &mut dyn Write, prefix: &[u8], l: &[u8]) -> io::Result<()> {
    out.write_all(prefix)?;
    out.write_all(l)?;
    if l.last() != Some(&b'\n') {
        out.write_all(b"\n\\ No newline at end of file\n")?;
    }
    Ok(())
}

fn normal(out: &mut dyn Write, la: &[&[u8]], lb: &[&[u8]], changes: &[Change]) -> io::Result<()> {
    for c in changes {
        let head = if c.a.is_empty() {
            format!("{}a{}\n", c.a.start, range(&c.b))
        } else if c.b.is_empty() {
            format!("{}d{}\n", range(&c.a), c.b.start)
        } else {
            format!("{}c{}\n", range(&c.a), range(&c.b))
        };
        out.write_all(head.as_bytes())?;
        for l in &la[c.a.clone()] {
            line(out, b"< ", l)?;
        }
        if !c.a.is_empty() && !c.b.is_empty() {
            out.write_all(b"---\n")?;
        }
        for l in &lb[c.b.clone()] {
            line(out, b"> ", l)?;
        }
    }
    Ok(())
}

/// A unified hunk range: `start,count`, `start` alone for one line, and
/// the line before with count 0 for none.
fn uni_range(r: &Range<usize>) -> String {
    match r.end - r.start {
        0 => format!("{},0", r.start),
        1 => format!("{}", r.start + 1),
        n => format!("{},{}", r.start + 1, n),
    }
}

fn unified(
    out: &mut Out,
    la: &[&[u8]],
    lb: &[&[u8]],
    changes: &[Change],
    ctx: usize,
) -> io::Result<()> {
    let mut k = 0;
    while k < changes.len() {
        // Changes closer than twice the context share a hunk.
        let mut e = k;
        while e + 1 < changes.len() && changes[e + 1].a.start - changes[e].a.end <= 2 * ctx {
            e += 1;
        }
        let first = &changes[k];
        let last = &changes[e];
        let lead = ctx.min(first.a.start);
        let a0 = first.a.start - lead;
        let b0 = first.b.start - lead;
        let trail = ctx.min(la.len() - last.a.end).min(lb.len() - last.b.end);
        let a1 = last.a.end + trail;
        let b1 = last.b.end + trail;
        out.write(
            format!(
                "@@ -{} +{} @@\n",
                uni_range(&(a0..a1)),
                uni_range(&(b0..b1))
            )
            .as_bytes(),
        )?;
        let mut ai = a0;
        for c in &changes[k..=e] {
            for l in &la[ai..c.a.start] {
                line(out, b" ", l)?;
            }
            for l in &la[c.a.clone()] {
                line(out, b"-", l)?;
            }
            for l in &lb[c.b.clone()] {
                line(out, b"+", l)?;
            }
            ai = c.a.end;
        }
        for l in &la[ai..a1] {
            line(out, b" ", l)?;
        }
        k = e + 1;
    }
    Ok(())
}

/// A file's modification time as GNU diff prints it in unified headers:
/// `2026-11-22 10:00:00.123456789 +0000`, local time.
fn stamp(st: Option<&rustix::fs::Stat>) -> String {
    let (sec, nsec) = match st {
        Some(s) => (s.st_mtime as libc::time_t, s.st_mtime_nsec as i64),
        None => (0, 0),
    };
    // SAFETY: localtime_r fills the tm we own; strftime writes at most
    // the buffer's length and returns how much it wrote.
    unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        if libc::localtime_r(&sec, &mut tm).is_null() {
            return format!("{sec}.{nsec:09}");
        }
        let mut a = [0u8; 64];
        let mut z = [0u8; 16];
        let n = libc::strftime(
            a.as_mut_ptr().cast(),
            a.len(),
            c"%Y-%m-%d %H:%M:%S".as_ptr(),
            &tm,
        );
        let m = libc::strftime(z.as_mut_ptr().cast(), z.len(), c"%z".as_ptr(), &tm);
        format!(
            "{}.{nsec:09} {}",
            String::from_utf8_lossy(&a[..n]),
            String::from_utf8_lossy(&z[..m])
        )
    }
}
